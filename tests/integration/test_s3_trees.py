#!/usr/bin/env python3
"""int-s3-trees: an s3:// prefix holding several models mounts as a tree,
named by the same rule as a local folder of the same files (catalog.h).

The s3 look-alike of int-s3 (s3srv.py: s3rver behind s3proxy.py, every
SigV4 signature checked) holds one tree of models; the same files lie in a
local folder.  Both are mounted: the directories must be the same, every
model's tensors byte-exact against the file it was uploaded from, each
model's __summary__.json names its object.  A prefix below the root and a
bucket root are mounted; a prefix without models fails with one line; a
Git LFS pointer on S3 is sniffed and named as a local one is.
"""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import s3srv  # noqa: E402

sys.path.insert(0, os.path.join(harness.SRCROOT, "tests"))
import gen  # noqa: E402
import gen_sharded  # noqa: E402

REGION = "eu-west-3"
AKID = "AKIATREESTEST000001"
KEYS = {AKID: ("trees-secret-" + os.urandom(8).hex(), None)}


def env_for(srv, home):
	e = {k: v for k, v in os.environ.items()
	     if not k.startswith("AWS_") and not k.startswith("STFS_S3")}
	e.update(HOME=home, AWS_ENDPOINT_URL=srv.endpoint, AWS_REGION=REGION,
		 AWS_ACCESS_KEY_ID=AKID, AWS_SECRET_ACCESS_KEY=KEYS[AKID][0])
	return e


def make_tree(root):
	"""A folder of models with every naming case: models side by side,
	one model alone below a directory, a sharded set, a stem clashing
	with a directory, a directory without models."""
	def model(rel, seed, n=3):
		p = os.path.join(root, rel)
		os.makedirs(os.path.dirname(p), exist_ok=True)
		T = [("t.%d" % i, "F32", [4 + i],
		      gen.bulk_bytes(seed * 10 + i, (4 + i) * 4))
		     for i in range(n)]
		gen.write_safetensors(p, T, {"seed": str(seed)})
	model("top.safetensors", 1)
	model("pair/x.safetensors", 2)
	model("pair/y.safetensors", 3, 2)
	model("alone/deep/only.safetensors", 4)
	model("clash/m.safetensors", 5)
	model("clash/m/z.safetensors", 6)
	os.makedirs(os.path.join(root, "nothing"))
	with open(os.path.join(root, "nothing", "readme.txt"), "w") as f:
		f.write("no model here\n")
	T = [("layers.%d.w" % i, "BF16", [64 + i],
	      (lambda i=i: gen.bulk_bytes(90 + i, (64 + i) * 2)))
	     for i in range(4)]
	gen_sharded.write_sharded(os.path.join(root, "sets", "sharded"), T, 2)


def upload_tree(c, bucket, prefix, root):
	for d, _, files in os.walk(root):
		for f in sorted(files):
			p = os.path.join(d, f)
			with open(p, "rb") as fh:
				c.put_object(Bucket=bucket, Body=fh.read(),
					     Key=prefix + os.path.relpath(p, root))


def model_dirs(mnt):
	"""Every directory of the mount that is a model (has
	__metadata__.json), relative to mnt, with its tensor files."""
	out = {}
	for d, dirs, files in os.walk(mnt):
		dirs[:] = [x for x in dirs if not x.startswith(".")]
		if "__metadata__.json" in files:
			rel = os.path.relpath(d, mnt)
			out[rel] = sorted(f for f in files if not f.endswith(".json"))
		dirs[:] = [x for x in dirs if not x.startswith("__")]
	return out


def tensors_of(mdir):
	"""{tensor name: bytes} of the model at mdir, read through the mount."""
	out = {}
	for f in os.listdir(mdir):
		if (f.endswith(".json") or f.startswith(".") or
		    f.startswith("__")):
			continue
		with open(os.path.join(mdir, f), "rb") as fh:
			out[harness.decode_name(f)] = fh.read()
	return out


def source_tensors(path):
	"""{tensor name: bytes} of a model file or an index set on disk."""
	if path.endswith(".json"):
		with open(path) as f:
			wm = json.load(f)["weight_map"]
		files, out = {}, {}
		for name, shard in wm.items():
			S = files.setdefault(shard, harness.SrcFile(
				os.path.join(os.path.dirname(path), shard)))
			out[name] = S.read(S.by_name[name])
		return out
	S = harness.SrcFile(path)
	return {x.name: S.read(x) for x in S.tensors}


def check_tree(t, srv, env, url, local, label):
	"""Mount url and local: the same model directories; each s3 model
	byte-exact against its source file, its summary naming the object."""
	with harness.Mount(t, local) as m:
		want = model_dirs(m.path)
		sources = {}
		for rel in want:
			with open(os.path.join(m.path, rel, "__summary__.json")) as f:
				sources[rel] = json.load(f)["source"]
	t.check(len(want) > 1, "%s: the local folder holds several models" % label)
	mark = srv.mark()
	with harness.Mount(t, url, env=env, ready_timeout=60) as m:
		got = model_dirs(m.path)
		t.eq(sorted(got), sorted(want), "%s: the model directories are "
		     "those of the same files in a local folder" % label)
		for rel in sorted(set(got) & set(want)):
			t.eq(got[rel], want[rel], "%s: %s: the tensor files" % (label, rel))
			src = sources[rel]
			t.eq(tensors_of(os.path.join(m.path, rel)),
			     source_tensors(src), "%s: %s: every tensor's bytes"
			     % (label, rel))
			with open(os.path.join(m.path, rel, "__summary__.json")) as f:
				s3src = json.load(f)["source"]
			t.eq(s3src, url + os.path.relpath(src, os.path.realpath(local)),
			     "%s: %s: the summary names the object" % (label, rel))
		with open(os.path.join(m.path, "__summary__.json")) as f:
			root = json.load(f)
		t.check(isinstance(root, dict), "%s: the root summary" % label)
	reqs = srv.requests_since(mark)
	t.check(any("list-type=2" in r["query"] for r in reqs),
		"%s: the prefix was listed" % label)
	for r in reqs:
		t.check(r["akid"] == AKID, "%s: %s %s signed" % (label, r["method"],
								 r["path"]))
	# stfs-inspect says the same
	r = harness.run([harness.STFS_INSPECT, "--json", url], env=env,
			timeout=120)
	if t.check(r.returncode == 0, "%s: stfs-inspect exit 0: %r"
		   % (label, r.stderr)):
		dirs = sorted(x["dir"] for x in json.loads(r.stdout)["models"])
		t.eq(dirs, sorted(want), "%s: stfs-inspect's directories" % label)


def run(t):
	why = s3srv.available()
	if why:
		t.fatal(why)
	d = harness.tmpdir("s3trees")
	home = os.path.join(d, "home")
	os.makedirs(home)
	local = os.path.join(d, "local")
	make_tree(local)
	os.makedirs(os.path.join(d, "srv"))
	with s3srv.S3(os.path.join(d, "srv"), KEYS, region=REGION) as srv:
		c = srv.client(AKID)
		c.create_bucket(Bucket="trees")
		upload_tree(c, "trees", "zoo/", local)
		c.create_bucket(Bucket="root")
		upload_tree(c, "root", "", os.path.join(local, "pair"))
		env = env_for(srv, home)
		check_tree(t, srv, env, "s3://trees/zoo/", local, "prefix")
		check_tree(t, srv, env, "s3://root/", os.path.join(local, "pair"),
			   "bucket root")
		# a prefix holding no model: one line, exit 2, nothing mounted
		mnt = os.path.join(harness.tmpdir("mnt"), "m")
		os.makedirs(mnt)
		r = harness.run([harness.STFS, "s3://trees/zoo/nothing/", mnt],
				env=env, timeout=60)
		msg = r.stderr.decode("utf-8", "replace")
		t.eq(r.returncode, 2, "no model: exit 2 (%s)" % msg)
		t.check("no model object (" in msg and
			len(msg.strip().splitlines()) == 1,
			"no model: one line saying so: %r" % msg)
		t.check(not harness.is_mounted(mnt), "no model: not mounted")
		# a remote file is sniffed as a local one is (format/sniff.c): a
		# Git LFS pointer uploaded by mistake says so
		lfs = (b"version https://git-lfs.github.com/spec/v1\n"
		       b"oid sha256:" + b"ab" * 32 + b"\nsize 548105171\n")
		c.put_object(Bucket="trees", Key="lfs/model.safetensors", Body=lfs)
		for src in ("s3://trees/lfs/model.safetensors", "s3://trees/lfs/"):
			r = harness.run([harness.STFS_INSPECT, src], env=env,
					timeout=60)
			msg = r.stderr.decode("utf-8", "replace")
			t.eq(r.returncode, 1, "%s: exit 1 (%s)" % (src, msg))
			t.check("Git LFS pointer" in msg and "548105171" in msg,
				"%s: the message says it is an LFS pointer: %r"
				% (src, msg))
		err = srv.proxy_errors()
		t.check("Traceback" not in err, "s3proxy: no exception: %s"
			% err[-2000:])
	shutil.rmtree(local, ignore_errors=True)


if __name__ == "__main__":
	harness.main("int-s3-trees", run, mounts=True)
