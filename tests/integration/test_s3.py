#!/usr/bin/env python3
"""int-s3: SOURCE = s3://BUCKET/KEY, s3://BUCKET/PREFIX/, s3://BUCKET/.

A private S3 look-alike (s3rver from npm, tests/integration/s3srv.py) runs
on 127.0.0.1 behind s3proxy.py, which recomputes every request's AWS
Signature V4 with botocore and refuses bad ones with S3's error codes, and
logs each request.  Fixtures are generated here and uploaded with signed
requests (botocore).  Every tensor read through a mount is compared with
the local file it was uploaded from.

Cases: a file, an index (by name and as a prefix), a prefix with more
than 1,000 keys (ListObjectsV2 pages), credentials from the environment,
from a profile in a temporary HOME/.aws, with a session token, a wrong
secret / unknown key / missing token / missing bucket or key (one clear
line each), anonymous reads of a public-read bucket, an object replaced
during a mount (EIO, no mixed bytes), secrets never in argv, mountinfo,
stderr or the summary; every request signed, every data GET with If-Match.
"""

import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
				"..", ".."))
import harness  # noqa: E402
import nginx  # noqa: E402
import s3srv  # noqa: E402

sys.path.insert(0, os.path.join(harness.SRCROOT, "tests"))
import gen  # noqa: E402
import gen_sharded  # noqa: E402

REGION = "eu-west-3"
KEYS = {
	"AKIAMAINTEST0000001": ("main-secret-" + os.urandom(8).hex(), None),
	"AKIAPROFILETEST0002": ("prof-secret-" + os.urandom(8).hex(), None),
	"ASIASESSIONTEST0003": ("sess-secret-" + os.urandom(8).hex(),
				"session-token-" + os.urandom(16).hex()),
}
# STFS_S3_CASES=file,many selects cases when run by hand
CASES = [c for c in os.environ.get("STFS_S3_CASES", "").split(",") if c]
MAIN, PROF, SESS = sorted(KEYS)[0], sorted(KEYS)[1], sorted(KEYS)[2]
SECRETS = [v[0] for v in KEYS.values()] + [KEYS[SESS][1]]


def base_env(home, **kw):
	"""The environment of a front end: no AWS_* from outside, HOME in the
	test's own directory."""
	e = {k: v for k, v in os.environ.items()
	     if not k.startswith("AWS_") and not k.startswith("STFS_S3")}
	e["HOME"] = home
	e.update(kw)
	return e


def cred_env(srv, home, akid=MAIN, **kw):
	sec, tok = KEYS[akid]
	e = base_env(home, AWS_ENDPOINT_URL=srv.endpoint, AWS_REGION=REGION,
		     AWS_ACCESS_KEY_ID=akid, AWS_SECRET_ACCESS_KEY=sec)
	if tok:
		e["AWS_SESSION_TOKEN"] = tok
	e.update(kw)
	return e


def inspect(src, env, args=("--json",)):
	return harness.run([harness.STFS_INSPECT] + list(args) + [src],
			   env=env, timeout=120)


def no_secret(t, text, what):
	if isinstance(text, bytes):
		text = text.decode("utf-8", "replace")
	for s in SECRETS:
		t.check(s not in text, "%s: a secret appears in it" % what)


def read_all(path):
	with open(path, "rb") as f:
		return f.read()


def verify_files(t, mnt, files, label):
	"""files: {tensor name: (SrcFile, SrcTensor)}; every byte compared."""
	listing = set(os.listdir(mnt))
	for name, (S, x) in sorted(files.items()):
		f = harness.encode_name(name)
		what = "%s: tensor %s" % (label, harness.short(name, 60))
		if not t.check(f in listing, "%s is listed" % what):
			continue
		t.check(read_all(os.path.join(mnt, f)) == S.read(x),
			"%s: bytes differ from the source" % what)
	n = len([f for f in listing if not f.endswith(".json") and
		 not f.startswith("__") and f not in harness.VIEW_DIRS])
	t.eq(n, len(files), "%s: one file per tensor" % label)


def single_files(path):
	S = harness.SrcFile(path)
	return {x.name: (S, x) for x in S.tensors}


def sharded_files(index):
	with open(index) as f:
		wm = json.load(f)["weight_map"]
	out, shards = {}, {}
	for name, shard in wm.items():
		if shard not in shards:
			shards[shard] = harness.SrcFile(os.path.join(
				os.path.dirname(index), shard))
		out[name] = (shards[shard], shards[shard].by_name[name])
	return out


def check_signed(t, reqs, label, akid=MAIN):
	t.check(len(reqs) > 0, "%s: requests reached the server" % label)
	for r in reqs:
		t.check(r["akid"] == akid, "%s: %s %s signed with %s, not %s"
			% (label, r["method"], r["path"], akid, r["akid"]))
		t.check(r["method"] == "GET", "%s: only GETs (%s %s)"
			% (label, r["method"], r["path"]))


def check_data_if_match(t, reqs, label):
	"""Every ranged GET after the first of its object carries If-Match."""
	seen = set()
	for r in reqs:
		if r["range"] is None:
			continue
		if r["path"] in seen:
			t.check(r["if_match"] is not None, "%s: ranged GET of %s "
				"(%s) without If-Match" % (label, r["path"],
							   r["range"]))
		seen.add(r["path"])


# ---- fixtures ---------------------------------------------------------------

def make_fixtures(d):
	os.makedirs(d, exist_ok=True)
	fx = {}
	fx["sample"] = os.path.join(d, "sample.safetensors")
	gen.gen_sample(fx["sample"])
	fx["edge"] = os.path.join(d, "edge.safetensors")
	gen.gen_edge(fx["edge"])
	# 3 shards of a few MiB: ranged reads past the first 64 KiB
	T = [("layers.%d.w" % i, "BF16", [(1 + i % 3) << 18],
	      (lambda i=i: gen.bulk_bytes(70 + i, ((1 + i % 3) << 18) * 2)))
	     for i in range(6)]
	fx["sharded"] = os.path.join(d, "sharded")
	gen_sharded.write_sharded(fx["sharded"], T, 3)
	fx["index"] = os.path.join(fx["sharded"], "model.safetensors.index.json")
	# one object for the replacement case, 6 MiB
	fx["big"] = os.path.join(d, "big.safetensors")
	big_file(fx["big"], 1)
	fx["big2"] = os.path.join(d, "big2.safetensors")
	big_file(fx["big2"], 2)
	return fx


def big_file(path, seed):
	T = [("a", "U8", [1 << 20], gen.bulk_bytes(seed, 1 << 20)),
	     ("b", "U8", [5 << 20], gen.bulk_bytes(seed + 10, 5 << 20))]
	gen.write_safetensors(path, T, {"seed": str(seed)})


def upload(c, bucket, key, path):
	with open(path, "rb") as f:
		c.put_object(Bucket=bucket, Key=key, Body=f.read())


def upload_dir(c, bucket, prefix, d):
	for f in sorted(os.listdir(d)):
		upload(c, bucket, prefix + f, os.path.join(d, f))


def populate(srv, fx):
	c = srv.client(MAIN)
	for b in ("models", "pub", "many"):
		c.create_bucket(Bucket=b)
	upload(c, "models", "single/sample.safetensors", fx["sample"])
	upload(c, "models", "odd name/edge+1.safetensors", fx["edge"])
	upload_dir(c, "models", "sets/sharded/", fx["sharded"])
	upload(c, "models", "replace/big.safetensors", fx["big"])
	upload(c, "pub", "sample.safetensors", fx["sample"])
	# 1,100 keys under p/aaa/, the model's index and shards in p/ after
	# them in key order: found only on the second ListObjectsV2 page
	empty = b"not a model\n"

	def put(i):
		# botocore clients are thread safe; making one costs ~1 s
		c.put_object(Bucket="many", Key="p/aaa/junk-%05d.txt" % i,
			     Body=empty)
	with concurrent.futures.ThreadPoolExecutor(8) as ex:
		list(ex.map(put, range(1100)))
	upload_dir(c, "many", "p/", fx["sharded"])
	upload(c, "many", "other/sample.safetensors", fx["sample"])


# ---- cases ------------------------------------------------------------------

def case_file(t, srv, fx, home):
	env = cred_env(srv, home)
	src = "s3://models/single/sample.safetensors"
	mark = srv.mark()
	with harness.Mount(t, src, env=env) as m:
		verify_files(t, m.path, single_files(fx["sample"]), "file")
		with open(os.path.join(m.path, "__summary__.json")) as f:
			summ = f.read()
		t.check("s3://models/single/sample.safetensors" in summ,
			"file: the summary names the s3:// source")
		no_secret(t, summ, "file: __summary__.json")
		ent = harness.mount_entry(m.path)
		no_secret(t, " ".join(ent), "file: mountinfo")
		t.check(ent[2] == src, "file: mountinfo source is %r" % ent[2])
		with open("/proc/%d/cmdline" % m.proc.pid, "rb") as f:
			no_secret(t, f.read(), "file: the daemon's argv")
		no_secret(t, m.output(), "file: the daemon's output")
	reqs = srv.requests_since(mark)
	check_signed(t, reqs, "file")
	check_data_if_match(t, reqs, "file")
	t.check(not any("list-type" in r["query"] for r in reqs),
		"file: an object is opened without listing")
	# a key with a space and a '+': encoded in the URL, signed right
	with harness.Mount(t, "s3://models/odd name/edge+1.safetensors",
			   env=env) as m:
		verify_files(t, m.path, single_files(fx["edge"]), "odd key")


def case_sharded(t, srv, fx, home):
	env = cred_env(srv, home)
	want = sharded_files(fx["index"])
	for src in ("s3://models/sets/sharded/model.safetensors.index.json",
		    "s3://models/sets/sharded/"):
		mark = srv.mark()
		with harness.Mount(t, src, env=env) as m:
			verify_files(t, m.path, want, src)
		reqs = srv.requests_since(mark)
		check_signed(t, reqs, src)
		check_data_if_match(t, reqs, src)
		if src.endswith("/"):
			t.check(any(r["query"].startswith("list-type=2") for r
				    in reqs), "%s: listed" % src)
	r = inspect("s3://models/sets/sharded/", env)
	t.eq(r.returncode, 0, "inspect prefix: exit 0 (%s)" % r.stderr)
	# without the trailing '/': a prefix too (not an object key)
	r = inspect("s3://models/sets/sharded", env)
	if t.check(r.returncode == 0, "prefix without '/': exit 0 (%s)"
		   % r.stderr):
		t.eq(json.loads(r.stdout)["tensors"], len(want),
		     "prefix without '/': tensors")
	# a prefix whose model is one level down: mirrored as sharded/
	r = inspect("s3://models/sets/", env)
	if t.check(r.returncode == 0, "inspect s3://models/sets/: exit 0 (%s)"
		   % r.stderr):
		j = json.loads(r.stdout)
		t.eq([(m["dir"], m["tensors"]) for m in j.get("models", [])],
		     [("sharded", len(want))], "s3://models/sets/: one model "
		     "in sharded/")


def case_many(t, srv, fx, home):
	env = cred_env(srv, home)
	mark = srv.mark()
	with harness.Mount(t, "s3://many/p/", env=env,
			   ready_timeout=60) as m:
		verify_files(t, m.path, sharded_files(fx["index"]), "many")
	lists = [r for r in srv.requests_since(mark)
		 if "list-type=2" in r["query"]]
	t.check(len(lists) >= 2, "many: %d ListObjectsV2 pages for 1,100 "
		"keys" % len(lists))
	t.check(any("continuation-token=" in r["query"] for r in lists),
		"many: a continuation token was sent")
	# the bucket root holds two models: a tree mirrored by prefix (p/aaa/
	# holds none: not shown)
	mark = srv.mark()
	r = inspect("s3://many/", env)
	if t.check(r.returncode == 0, "tree: stfs-inspect exit 0: %r"
		   % r.stderr):
		j = json.loads(r.stdout)
		got = sorted((m["dir"], m["path"]) for m in j.get("models", []))
		t.eq(got, [("other", "s3://many/other"), ("p", "s3://many/p")],
		     "tree: the models and their directories")
		t.eq(sorted(m.get("source") for m in j.get("models", [])),
		     ["s3://many/other/sample.safetensors",
		      "s3://many/p/model.safetensors.index.json"],
		     "tree: each model's source is its object's URL")
		want = sharded_files(fx["index"])
		for m in j.get("models", []):
			if m["dir"] == "p":
				t.eq(m["tensors"], len(want), "tree: p tensors")
	heads = [r for r in srv.requests_since(mark) if r["range"]]
	t.eq(len(heads), len(set(r["path"] for r in heads)),
	     "tree: one header request per object")


def case_profile(t, srv, fx, d):
	home = os.path.join(d, "home-profile")
	os.makedirs(os.path.join(home, ".aws"))
	sec = KEYS[PROF][0]
	with open(os.path.join(home, ".aws", "credentials"), "w") as f:
		f.write("[default]\naws_access_key_id = WRONGDEFAULTKEY\n"
			"aws_secret_access_key = nope\n\n"
			"[dev]\naws_access_key_id = %s\n"
			"aws_secret_access_key = %s\n" % (PROF, sec))
	with open(os.path.join(home, ".aws", "config"), "w") as f:
		f.write("[default]\nregion = us-west-1\n\n[profile dev]\n"
			"region = %s\nendpoint_url = %s\n" % (REGION,
							       srv.endpoint))
	env = base_env(home, AWS_PROFILE="dev")
	mark = srv.mark()
	with harness.Mount(t, "s3://models/single/", env=env) as m:
		verify_files(t, m.path, single_files(fx["sample"]), "profile")
	check_signed(t, srv.requests_since(mark), "profile", akid=PROF)
	# AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE elsewhere
	alt = os.path.join(d, "alt")
	os.makedirs(alt)
	os.rename(os.path.join(home, ".aws", "credentials"),
		  os.path.join(alt, "creds"))
	os.rename(os.path.join(home, ".aws", "config"),
		  os.path.join(alt, "conf"))
	env = base_env(home, AWS_PROFILE="dev",
		       AWS_SHARED_CREDENTIALS_FILE=os.path.join(alt, "creds"),
		       AWS_CONFIG_FILE=os.path.join(alt, "conf"))
	mark = srv.mark()
	r = inspect("s3://models/single/sample.safetensors", env)
	t.eq(r.returncode, 0, "profile files elsewhere: exit 0 (%s)" % r.stderr)
	check_signed(t, srv.requests_since(mark), "profile files elsewhere",
		     akid=PROF)
	# environment keys win over the profile
	env2 = dict(env, AWS_ACCESS_KEY_ID=MAIN,
		    AWS_SECRET_ACCESS_KEY=KEYS[MAIN][0])
	mark = srv.mark()
	r = inspect("s3://models/single/sample.safetensors", env2)
	t.eq(r.returncode, 0, "env over profile: exit 0 (%s)" % r.stderr)
	check_signed(t, srv.requests_since(mark), "env over profile")
	# a profile that does not exist
	r = inspect("s3://models/single/", dict(env, AWS_PROFILE="nosuch"))
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode != 0 and "nosuch" in err and
		err.count("\n") == 1, "missing profile: one line: %r" % err)


def case_token(t, srv, fx, home):
	env = cred_env(srv, home, akid=SESS)
	mark = srv.mark()
	with harness.Mount(t, "s3://models/sets/sharded/", env=env) as m:
		verify_files(t, m.path, sharded_files(fx["index"]), "token")
		no_secret(t, m.output(), "token: the daemon's output")
	check_signed(t, srv.requests_since(mark), "token", akid=SESS)
	env.pop("AWS_SESSION_TOKEN")
	r = inspect("s3://models/single/sample.safetensors", env)
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode != 0 and "InvalidToken" in err,
		"token missing: refused naming InvalidToken: %r" % err)


def refusal(t, src, env, code, label, mnt_dir):
	"""stfs and stfs-inspect refuse with one line naming bucket + code."""
	bucket = src[5:].split("/", 1)[0]
	r = inspect(src, env, args=())
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode == 2, "%s: stfs-inspect exit 2, got %d"
		% (label, r.returncode))
	t.check(err.count("\n") == 1 and code in err and
		("bucket " + bucket) in err, "%s: one line with bucket %s and "
		"%s: %r" % (label, bucket, code, err))
	no_secret(t, err, label + ": stderr")
	os.makedirs(mnt_dir, exist_ok=True)
	r = harness.run([harness.STFS, "-f", src, mnt_dir], env=env, timeout=120)
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode != 0 and not harness.is_mounted(mnt_dir),
		"%s: stfs refuses and mounts nothing" % label)
	if harness.is_mounted(mnt_dir):
		harness.force_unmount(mnt_dir)
	t.check(code in err and ("bucket " + bucket) in err,
		"%s: stfs names %s: %r" % (label, code, err))
	no_secret(t, err, label + ": stfs stderr")


def case_refused(t, srv, fx, d, home):
	mnt = os.path.join(d, "mnt-refused")
	env = cred_env(srv, home, AWS_SECRET_ACCESS_KEY="wrong-" + "x" * 20)
	for src in ("s3://models/single/sample.safetensors",
		    "s3://models/single/"):
		mark = srv.mark()
		refusal(t, src, env, "SignatureDoesNotMatch", "wrong secret " +
			src, mnt)
		t.check(all(r["status"] == 403 for r in
			    srv.requests_since(mark)), "wrong secret: the "
			"proxy refused every request")
	env = cred_env(srv, home, AWS_ACCESS_KEY_ID="AKIAUNKNOWN000000000")
	refusal(t, "s3://models/single/", env, "InvalidAccessKeyId",
		"unknown key", mnt)
	env = cred_env(srv, home)
	refusal(t, "s3://nosuchbucket/x.safetensors", env, "NoSuchBucket",
		"no bucket", mnt)
	refusal(t, "s3://models/single/absent.safetensors", env, "NoSuchKey",
		"no key", mnt)
	# anonymous against a private bucket
	env = base_env(home, AWS_ENDPOINT_URL=srv.endpoint, AWS_REGION=REGION)
	refusal(t, "s3://models/single/sample.safetensors", env,
		"AccessDenied", "anonymous, private bucket", mnt)


def case_anonymous(t, srv, fx, home):
	# no credentials at all: unsigned requests
	env = base_env(home, AWS_ENDPOINT_URL=srv.endpoint, AWS_REGION=REGION)
	mark = srv.mark()
	with harness.Mount(t, "s3://pub/", env=env) as m:
		verify_files(t, m.path, single_files(fx["sample"]), "anonymous")
	reqs = srv.requests_since(mark)
	t.check(reqs and all(r["akid"] is None for r in reqs),
		"anonymous: no request signed")
	# credentials present but -o s3_anonymous: unsigned too
	env = cred_env(srv, home)
	mark = srv.mark()
	with harness.Mount(t, "s3://pub/sample.safetensors", env=env,
			   args=["-o", "s3_anonymous"]) as m:
		verify_files(t, m.path, single_files(fx["sample"]),
			     "-o s3_anonymous")
	reqs = srv.requests_since(mark)
	t.check(reqs and all(r["akid"] is None for r in reqs),
		"-o s3_anonymous: no request signed")
	# STFS_S3_ANONYMOUS, read by stfs-inspect, is a boolean like the
	# others: "yes" signs nothing, junk is refused in one line
	mark = srv.mark()
	r = inspect("s3://pub/sample.safetensors",
		    dict(env, STFS_S3_ANONYMOUS="yes"))
	reqs = srv.requests_since(mark)
	t.check(r.returncode == 0 and reqs and
		all(q["akid"] is None for q in reqs),
		"STFS_S3_ANONYMOUS=yes: exit 0, no request signed (%s)"
		% r.stderr)
	r = inspect("s3://pub/sample.safetensors",
		    dict(env, STFS_S3_ANONYMOUS="maybe"))
	err = r.stderr.decode()
	t.check(r.returncode == 2 and "STFS_S3_ANONYMOUS" in err and
		"maybe" in err and err.count("\n") == 1,
		"STFS_S3_ANONYMOUS=maybe refused in one line: %r" % err)


def case_replaced(t, srv, fx, home):
	"""Replace the object under a live mount: reads of bytes not yet
	fetched fail with EIO; nothing read mixes the two versions."""
	env = cred_env(srv, home)
	S1 = harness.SrcFile(fx["big"])
	S2 = harness.SrcFile(fx["big2"])
	c = srv.client(MAIN)
	with harness.Mount(t, "s3://models/replace/big.safetensors", env=env,
			   args=["-o", "http_readahead_mb=1"]) as m:
		a = S1.by_name["a"]
		t.check(read_all(os.path.join(m.path, "a")) == S1.read(a),
			"replaced: tensor a before the change")
		# Let the read-ahead that reading a started finish first: a
		# request in flight during the upload can meet the new object
		# before the proxy forgets the old ETag, see a new ETag instead
		# of a 412, and leave nothing for the reads below to ask.
		time.sleep(0.5)
		mark = srv.mark()
		upload(c, "models", "replace/big.safetensors", fx["big2"])
		b = S1.by_name["b"]
		fd = os.open(os.path.join(m.path, "b"), os.O_RDONLY)
		got, errs = [], 0
		try:
			for off in range(0, b.nbytes, 1 << 20):
				try:
					got.append((off, os.pread(fd, 1 << 20, off)))
				except OSError as e:
					t.eq(e.errno, 5, "replaced: errno")
					errs += 1
		finally:
			os.close(fd)
		t.check(errs > 0, "replaced: reads after the change fail "
			"with EIO")
		for off, data in got:
			t.check(data == S1.read(b, off, len(data)),
				"replaced: bytes at %d are the first version's"
				% off)
			t.check(data != S2.read(S2.by_name["b"], off, len(data)),
				"replaced: bytes at %d are the new version's"
				% off)
		reqs = srv.requests_since(mark)
		t.check(any(r["status"] == 412 for r in reqs),
			"replaced: the server answered 412 to If-Match")
		out = m.output()
	t.check(out.count("changed") >= 1, "replaced: logged: %r" % out[-500:])
	upload(c, "models", "replace/big.safetensors", fx["big"])


def case_cache(t, srv, fx, d, home):
	"""The disk cache under s3:// sources: a second mount of the unchanged
	set reads every byte from disk, with no ranged data request."""
	env = cred_env(srv, home)
	cache = os.path.join(d, "cache")
	# cache=on: the suite runs with STFS_CACHE=off (tests/integration/meson.build)
	args = ["-o", "cache=on,cache_dir=" + cache]
	want = sharded_files(fx["index"])
	src = "s3://models/sets/sharded/"
	for n in (1, 2):
		mark = srv.mark()
		with harness.Mount(t, src, env=env, args=args) as m:
			verify_files(t, m.path, want, "cache mount %d" % n)
		reqs = srv.requests_since(mark)
		data = [r for r in reqs if r["range"] and
			r["range"] != "bytes=0-65535"]
		if n == 1:
			first = len(data)
			t.check(first > 0, "cache: the first mount fetches data")
		else:
			# Zero when run alone; under load the last blocks of the
			# first mount may miss the disk (they are handed to the
			# reader before they are written, and the daemon exits),
			# so this asks for most, not all, from the disk.
			t.note("cache: second mount: %d ranged data requests "
			       "(first: %d)" % (len(data), first))
			t.check(len(data) * 2 < first, "cache: the second mount "
				"reads from disk: %d data requests, first %d"
				% (len(data), first))
	for root, dirs, files in os.walk(cache):
		for f in files:
			st = os.stat(os.path.join(root, f))
			t.eq(st.st_mode & 0o777, 0o600, "cache: mode of %s" % f)
			no_secret(t, open(os.path.join(root, f), "rb").read(),
				  "cache file " + f)


def case_tls(t, srv, fx, d, home):
	"""An S3 endpoint behind TLS with a certificate made at test time:
	-o ca_file (--ca-file, STFS_HTTP_CA_FILE) and -o insecure reach the
	listing as well as the reads; without them one clear line."""
	certdir = os.path.join(d, "tls")
	os.makedirs(certdir, exist_ok=True)
	cert, key = nginx.make_cert(certdir)
	env = cred_env(srv, home, AWS_ENDPOINT_URL=srv.tls_endpoint(cert, key))
	want = sharded_files(fx["index"])
	src = "s3://models/sets/sharded/"
	mnt = os.path.join(d, "mnt-tls")
	os.makedirs(mnt, exist_ok=True)
	r = inspect(src, env, args=())
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode == 2 and err.count("\n") == 1 and
		"certificate" in err.lower(), "tls: without the CA, stfs-inspect "
		"fails with one line about the certificate: %r" % err)
	r = harness.run([harness.STFS, "-f", src, mnt], env=env, timeout=120)
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode != 0 and not harness.is_mounted(mnt) and
		"certificate" in err.lower(), "tls: without the CA, stfs "
		"refuses and mounts nothing: %r" % err)
	if harness.is_mounted(mnt):
		harness.force_unmount(mnt)
	mark = srv.mark()
	r = inspect(src, env, args=("--json", "--ca-file", cert))
	t.eq(r.returncode, 0, "tls: stfs-inspect --ca-file: exit 0 (%r)"
	     % r.stderr)
	t.check(any(q["query"].startswith("list-type=2") for q in
		    srv.requests_since(mark)), "tls: listed over TLS")
	for opt in ("ca_file=" + cert, "insecure"):
		with harness.Mount(t, src, env=env, args=["-o", opt]) as m:
			verify_files(t, m.path, want, "tls, -o " + opt)
	with harness.Mount(t, src, env=dict(env, STFS_HTTP_CA_FILE=cert)) as m:
		verify_files(t, m.path, want, "tls, STFS_HTTP_CA_FILE")


def run(t):
	why = s3srv.available()
	if why:
		t.fatal(why)
	d = harness.tmpdir("s3")
	home = os.path.join(d, "home")
	os.makedirs(home)
	fx = make_fixtures(os.path.join(d, "src"))
	os.makedirs(os.path.join(d, "srv"))
	with s3srv.S3(os.path.join(d, "srv"), KEYS, public=["pub"],
		      region=REGION) as srv:
		t0 = time.monotonic()
		populate(srv, fx)
		t.note("fixtures uploaded in %.1f s" % (time.monotonic() - t0))
		for name, fn, args in [
				("file", case_file, (home,)),
				("sharded", case_sharded, (home,)),
				("many", case_many, (home,)),
				("profile", case_profile, (d,)),
				("token", case_token, (home,)),
				("refused", case_refused, (d, home)),
				("anonymous", case_anonymous, (home,)),
				("replaced", case_replaced, (home,)),
				("cache", case_cache, (d, home)),
				("tls", case_tls, (d, home))]:
			if CASES and name not in CASES:
				continue
			t0 = time.monotonic()
			fn(t, srv, fx, *args)
			t.note("case %s: %.1f s" % (name, time.monotonic() - t0))
		err = srv.proxy_errors()
		t.check("Traceback" not in err, "s3proxy: no exception: %s"
			% err[-2000:])


if __name__ == "__main__":
	harness.main("int-s3", run, mounts=True)
