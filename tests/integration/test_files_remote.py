#!/usr/bin/env python3
"""int-files-remote: MNT/.files/ of remote models (issue 36): an hf://
repository (hubsim.py), an s3:// prefix (s3srv.py) and an http:// URL of
an index and of a file (httpd.py), each the same Hub-style model folder
(test_files.py's: a sharded set, configs, tokenizer files, README, a
PyTorch file beside, original/).

For each, .files/ lists exactly the model's files with their sizes
(stat before any read), every file's sha256 equals the source's (and an
LFS file's the Hub's oid), and a loader written as transformers loads a
sharded model (config.json, the index, an mmap of each shard, every
tensor read) gets every tensor equal to the source's.  An http:// URL has
the index, the shards it names and the names a loader reads beside it
(config.json, the tokenizer's files) where the server has them, no more.

Requests: .files/config.json of an hf:// mount costs at most one request
after the mount (none: it was fetched at mount), and reading every shard
through .files/ in order, as a loader does, sends each byte of each
shard once (no range asked twice, none left out); both as users run
stfs (the daemon, the disk cache on and cold) and with -f.

A diffusers pipeline (test_files.py's: model_index.json, unet/, vae/,
text_encoder/ sharded, tokenizer/, scheduler/) as an hf:// repository
(the daemon and -f) and an s3:// prefix is a tree of models whose root's
.files/ is every file of it: its list, sizes and sha256, and a
diffusers-like load (each component's config, every tensor of an mmap of
each safetensors file) equal to the source's.
"""

import hashlib
import json
import os
import random
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import httpd  # noqa: E402
import hubsim  # noqa: E402
import s3srv  # noqa: E402
import test_files as tf  # noqa: E402
from harness import gen  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_sharded  # noqa: E402

TOKEN = "hf_files"
REGION = "eu-north-1"
AKID = "AKIAFILESREMOTE00001"
KEYS = {AKID: ("files-secret-" + os.urandom(8).hex(), None)}
SHARDS = ["model-00001-of-00003.safetensors",
	  "model-00002-of-00003.safetensors",
	  "model-00003-of-00003.safetensors"]


def folder(rng):
	"""The model folder ({path: bytes}): test_files.py's, its shards made
	of 1 MiB tensors (12 MiB in all), so that reading them spans many of
	the HTTP client's blocks."""
	d = os.path.join(harness.tmpdir("filesremote"), "m")
	files = tf.model_folder(d, rng)
	tensors = [("model.layers.%d.w%d" % (i // 2, i % 2), "F16", [512, 1024],
		    gen.bulk_bytes(360 + i, 1 << 20)) for i in range(12)]
	for s in SHARDS:
		os.unlink(os.path.join(d, s))
	gen_sharded.write_sharded(d, tensors, 3)
	files.update({k: v for k, v in tf.tree_of(d).items()
		      if k in SHARDS or k == "model.safetensors.index.json"})
	return d, files


def ranges_once(t, entries, sizes, label):
	"""The data answers (206) entries logged, per object: each byte of
	[0, size) sent once; entries are (key, first, last)."""
	got = {}
	for key, a, b in entries:
		got.setdefault(key, []).append((a, b))
	for key, size in sorted(sizes.items()):
		r = sorted(got.get(key, []))
		overlap = [(x, y) for x, y in zip(r, r[1:]) if y[0] <= x[1]]
		t.eq(overlap, [], "%s: %s: no byte asked twice" % (label, key))
		t.eq(sum(b - a + 1 for a, b in r), size, "%s: %s: every byte "
		     "sent once (%d ranges)" % (label, key, len(r)))


def read_shards(files_dir):
	"""A loader's pass over the shards: each read to its end, in order."""
	for s in SHARDS:
		with open(os.path.join(files_dir, s), "rb") as f:
			while f.read(1 << 20):
				pass


def range_of(e):
	"""(first, last) of a logged Range header."""
	a, b = e["range"].split("=")[1].split("-")
	return int(a), int(b)


# ---- hf:// ---------------------------------------------------------------

def hub_oids(sim, repo):
	"""{path: lfs sha256} as the Hub's file list gives them."""
	req = urllib.request.Request(
		"%s/api/models/%s/revision/main?blobs=true" % (sim.endpoint, repo),
		headers={"Authorization": "Bearer " + TOKEN})
	with urllib.request.urlopen(req, timeout=30) as r:
		sib = json.load(r)["siblings"]
	return {s["rfilename"]: s["lfs"]["sha256"] for s in sib if "lfs" in s}


def check_hub_pipeline(t, sim, env, pipe):
	"""A diffusers pipeline repository, a tree of models: the root's
	.files/ is every file of the repository, as users run stfs (the
	daemon, the disk cache on and cold) and with -f."""
	sim.add_repo("org/sd").commit(pipe)
	for fg in (False, True):
		label = "hf:// pipeline %s" % ("-f" if fg else "daemon, disk cache")
		e = dict(env)
		e["STFS_CACHE"] = "off" if fg else "on"
		e["STFS_CACHE_DIR"] = harness.tmpdir("filespipecache")
		with harness.Mount(t, "hf://org/sd", env=e, ready_timeout=60,
				   foreground=fg) as m:
			t.check(".files" not in os.listdir(m.path), "%s: ls -a "
				"does not show the root's .files" % label)
			tf.check_pipeline(t, os.path.join(m.path, ".files"), pipe,
					  label)


def check_hub(t, files, pipe):
	sim = hubsim.HubSim(tokens=(TOKEN,), ttl=600.0, small=4096)
	sim.start()
	try:
		sim.add_repo("org/m").commit(files)
		oids = hub_oids(sim, "org/m")
		t.check(len(oids) >= 5, "hf://: the Hub lists LFS files with "
			"their sha256: %r" % sorted(oids))
		env = sim.user_env(harness.tmpdir("hfhome"), TOKEN)
		with harness.Mount(t, "hf://org/m", env=env,
				   ready_timeout=60) as m:
			fd = os.path.join(m.path, ".files")
			sim.log.clear()
			with open(os.path.join(fd, "config.json"), "rb") as f:
				t.eq(f.read(), files["config.json"],
				     "hf://: .files/config.json")
			n = len(sim.requests())
			t.check(n <= 1, "hf://: .files/config.json costs at most "
				"one request after the mount: %d" % n)
			t.note("hf://: .files/config.json cost %d requests after "
			       "the mount" % n)
			tf.check_files(t, fd, files, "hf://")
			tf.check_loader(t, fd, files, "hf://")
			for rel, oid in sorted(oids.items()):
				with open(os.path.join(fd, rel), "rb") as f:
					t.eq(hashlib.sha256(f.read()).hexdigest(), oid,
					     "hf://: %s: sha256 is the Hub's oid" % rel)
		# reading the shards, as users run stfs (cold disk cache) and
		# with -f
		for fg in (False, True):
			label = "hf:// %s" % ("-f" if fg else "daemon, disk cache")
			e = dict(env)
			e["STFS_CACHE"] = "off" if fg else "on"
			e["STFS_CACHE_DIR"] = harness.tmpdir("filescache")
			with harness.Mount(t, "hf://org/m", env=e, ready_timeout=60,
					   foreground=fg) as m:
				sim.log.clear()
				read_shards(os.path.join(m.path, ".files"))
				data = [(e["file"],) + range_of(e)
					for e in sim.requests("cdn", "blob")
					if e["status"] == 206]
			key = {hubsim.sha256_hex(files[s]): s for s in SHARDS}
			ranges_once(t, [(key.get(k, k), a, b) for k, a, b in data],
				    {s: len(files[s]) for s in SHARDS}, label)
		check_hub_pipeline(t, sim, env, pipe)
	finally:
		sim.stop()


# ---- s3:// -----------------------------------------------------------------

def check_s3(t, files, pipe):
	why = s3srv.available()
	if why:
		t.fatal(why)
	d = harness.tmpdir("filess3")
	home = os.path.join(d, "home")
	os.makedirs(home)
	os.makedirs(os.path.join(d, "srv"))
	with s3srv.S3(os.path.join(d, "srv"), KEYS, region=REGION) as srv:
		c = srv.client(AKID)
		c.create_bucket(Bucket="zoo")
		for rel, data in sorted(files.items()):
			c.put_object(Bucket="zoo", Key="models/m/" + rel, Body=data)
		c.put_object(Bucket="zoo", Key="models/m/.gitattributes",
			     Body=b"x")
		env = srv.user_env(AKID, home)
		with harness.Mount(t, "s3://zoo/models/m/", env=env,
				   ready_timeout=60) as m:
			fd = os.path.join(m.path, ".files")
			tf.check_files(t, fd, files, "s3://")
			tf.check_loader(t, fd, files, "s3://")
		# a pipeline under a prefix: a tree, its root's .files/ every
		# object under the prefix
		for rel, data in sorted(pipe.items()):
			c.put_object(Bucket="zoo", Key="pipes/sd/" + rel, Body=data)
		c.put_object(Bucket="zoo", Key="pipes/sd/.gitattributes",
			     Body=b"x")
		with harness.Mount(t, "s3://zoo/pipes/sd/", env=env,
				   ready_timeout=60) as m:
			tf.check_pipeline(t, os.path.join(m.path, ".files"), pipe,
					  "s3:// pipeline")
		err = srv.proxy_errors()
		t.check("Traceback" not in err, "s3proxy: no exception: %s"
			% err[-2000:])


# ---- http:// ---------------------------------------------------------------

# what a loader reads beside a model that the folder has
BESIDE = ["config.json", "generation_config.json", "tokenizer.json",
	  "tokenizer_config.json", "special_tokens_map.json"]


def check_http(t, d, files):
	srv = httpd.Server(d)
	srv.start()
	try:
		url = srv.url("model.safetensors.index.json")
		want = {k: files[k] for k in SHARDS + BESIDE +
			["model.safetensors.index.json"]}
		with harness.Mount(t, url, ready_timeout=60) as m:
			fd = os.path.join(m.path, ".files")
			mark = srv.mark()
			with open(os.path.join(fd, "config.json"), "rb") as f:
				t.eq(f.read(), files["config.json"],
				     "http://: .files/config.json")
			asked = [e["path"] for e in srv.since(mark)]
			t.eq(asked, ["/config.json"], "http://: .files/config.json "
			     "costs the one request that finds it")
			tf.check_files(t, fd, want, "http:// index")
			tf.check_loader(t, fd, want, "http:// index")
		# a file's URL: that file and what is beside it
		one = os.path.join(harness.tmpdir("filesone"), "one")
		os.makedirs(one)
		rng = random.Random(3)
		tf.one_model(os.path.join(one, "model.safetensors"), rng)
		tf.write(os.path.join(one, "config.json"), b'{"m": 1}')
		tf.write(os.path.join(one, "notes.txt"), b"not beside")
		srv.stop()
		srv = httpd.Server(one)
		srv.start()
		with harness.Mount(t, srv.url("model.safetensors"),
				   ready_timeout=60) as m:
			w = tf.tree_of(one)
			del w["notes.txt"]
			tf.check_files(t, os.path.join(m.path, ".files"), w,
				       "http:// file")
			tf.check_loader(t, os.path.join(m.path, ".files"), w,
					"http:// file")
	finally:
		srv.stop()


def run(t):
	rng = random.Random(3636)
	d, files = folder(rng)
	pipe = tf.pipeline_folder(os.path.join(harness.tmpdir("filespipe"),
					       "sd"), rng, scale=4)
	check_hub(t, files, pipe)
	check_s3(t, files, pipe)
	check_http(t, d, files)


if __name__ == "__main__":
	harness.main("int-files-remote", run)
