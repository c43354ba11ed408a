#!/usr/bin/env python3
"""int-fleet: machines that share one cache (issue 41).

`-o shared_cache=s3://fleet/blocks` in front of the Hub look-alike
(hubsim.py), the shared cache being the tests' S3-compatible server
(s3srv.py: s3rver behind the proxy that checks every SigV4 signature with
botocore).  Each "machine" is a mount with a disk cache of its own
(XDG_CACHE_HOME), cold.  The fleet's three and the checked machine of
down, revision and slow run as users run stfs (daemonised), the others
with -f: both modes meet the shared cache.

- fleet: three machines, daemonised as users run stfs, mount a sharded
  model one after the other: every byte right on all three; the origin
  (hub and CDN together) sends the model's bytes once (at most 1.05x its
  size over the three); the second and third read at least 95 % of their
  blocks from the shared cache.
- down: the shared cache's port closed: every byte right, from the
  origin, one line about it in .stfs/log.
- faults: a damaged, a cut and a foreign block planted in the bucket:
  each refused (counted in .stfs/stats.json) and fetched from the origin,
  every byte right; put again, so that the next machine reads them all
  from the shared cache.
- revision: a new commit changes a shard: no block of the old one is
  served for it (the unchanged shard's blocks are: same LFS file).
- lfs: two repositories holding the same LFS files share their blocks.
- slow: a shared cache that holds every GET for a minute does not hold
  the reader for it (a deadline, then the origin).

STFS_FLEET_CASES=fleet,faults selects cases when run by hand.
"""

import hashlib
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import hubsim  # noqa: E402
import s3srv  # noqa: E402

sys.path.insert(0, os.path.join(harness.SRCROOT, "tests"))
import gen  # noqa: E402
import gen_sharded  # noqa: E402

REGION = "eu-north-1"
AKID = "AKIAFLEETCACHE000001"
KEYS = {AKID: ("fleet-secret-" + os.urandom(8).hex(), None)}
TOKEN = "hf_fleet"
BUCKET = "fleet"
READ_DEADLINE = 120	# s, sha256sum of every tensor of a model
SLOW_S = 60		# the slow shared cache holds every GET this long
CASES = [c for c in os.environ.get("STFS_FLEET_CASES", "").split(",") if c]


def make_model(d, nshards, mib, seed):
	"""nshards shards of about mib MiB each: {repo path: bytes}, {tensor
	file name: sha256}."""
	per = 4
	n = nshards * per
	T = [("layers.%d.w" % i, "F32", [mib * 256 // per, 1024],
	      (lambda i=i: gen.bulk_bytes(seed + i, mib * 1024 * 1024 // per)))
	     for i in range(n)]
	_, wmap = gen_sharded.write_sharded(d, T, nshards)
	files, want = {}, {}
	for f in sorted(os.listdir(d)):
		with open(os.path.join(d, f), "rb") as fh:
			files[f] = fh.read()
	for shard in sorted(set(wmap.values())):
		S = harness.SrcFile(os.path.join(d, shard))
		for x in S.tensors:
			want[harness.encode_name(x.name)] = hashlib.sha256(
				S.read(x)).hexdigest()
	return files, want


class World:
	"""The Hub look-alike, the shared cache's server, the fleet's key and
	the places each machine keeps its own."""

	def __init__(self, t, d):
		self.t = t
		self.d = d
		self.key = os.path.join(d, "fleet.key")
		with open(self.key, "w") as f:
			f.write(os.urandom(24).hex() + "\n")
		os.chmod(self.key, 0o600)
		# the shared cache's credentials: a profile of their own
		self.aws = os.path.join(d, "aws")
		os.makedirs(self.aws)
		with open(os.path.join(self.aws, "credentials"), "w") as f:
			f.write("[fleet]\naws_access_key_id = %s\n"
				"aws_secret_access_key = %s\n" % (AKID,
								  KEYS[AKID][0]))
		self.sim = hubsim.HubSim(tokens=(TOKEN,), ttl=600.0, small=4096)
		self.srv = s3srv.S3(os.path.join(d, "srv"), KEYS, region=REGION)
		self.machines = 0

	def __enter__(self):
		os.makedirs(self.srv.workdir)
		self.sim.start()
		try:
			self.srv.start()
		except BaseException:
			self.sim.stop()
			raise
		self.srv.client(AKID).create_bucket(Bucket=BUCKET)
		return self

	def __exit__(self, *a):
		self.srv.stop()
		self.sim.stop()

	def options(self, endpoint=None):
		return ["-o", "http_connections=8,"
			"shared_cache=s3://%s/blocks,shared_cache_key=%s,"
			"shared_cache_profile=fleet,shared_cache_region=%s,"
			"shared_cache_endpoint=%s" % (BUCKET, self.key, REGION,
						      endpoint or
						      self.srv.endpoint)]

	def env(self):
		"""A new machine's environment: its own HF_HOME and disk
		cache (cold), the AWS files with the fleet's profile, no
		AWS_* or STFS_CACHE* from outside."""
		self.machines += 1
		home = os.path.join(self.d, "machine%d" % self.machines)
		os.makedirs(home)
		e = self.sim.user_env(os.path.join(home, "hf"), TOKEN)
		e = {k: v for k, v in e.items()
		     if not k.startswith(("AWS_", "STFS_CACHE", "STFS_SHARED"))}
		e["XDG_CACHE_HOME"] = os.path.join(home, "cache")
		e["HOME"] = home
		e["AWS_SHARED_CREDENTIALS_FILE"] = os.path.join(self.aws,
								"credentials")
		e["AWS_CONFIG_FILE"] = os.path.join(self.aws, "config")
		return e

	def origin_bytes(self):
		return sum(e["bytes"] for e in self.sim.requests())

	def objects(self):
		"""{key: size} of the bucket's blocks."""
		c = self.srv.client(AKID)
		out, token = {}, None
		while True:
			kw = {"Bucket": BUCKET, "Prefix": "blocks/"}
			if token:
				kw["ContinuationToken"] = token
			r = c.list_objects_v2(**kw)
			for o in r.get("Contents", []):
				out[o["Key"]] = o["Size"]
			if not r.get("IsTruncated"):
				return out
			token = r["NextContinuationToken"]


def read_all(t, mnt, want, label):
	names = sorted(want)
	try:
		r = subprocess.run(["sha256sum", "--"] + names, cwd=mnt,
				   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
				   stderr=subprocess.PIPE, timeout=READ_DEADLINE)
	except subprocess.TimeoutExpired:
		t.check(False, "%s: reading the model did not finish within "
			"%d s" % (label, READ_DEADLINE))
		return
	t.eq(r.stderr.decode("utf-8", "replace"), "", "%s: sha256sum's "
	     "errors" % label)
	got = dict(reversed(line.split("  ", 1))
		   for line in r.stdout.decode().splitlines())
	for name in names:
		t.eq(got.get(name), want[name], "%s: %s: sha256 of the bytes "
		     "read" % (label, name))


def stats(mnt):
	"""The counters, in one read: the file is rendered anew for every
	read (view_stfs.c), and counters that move between two reads of a
	chunked reader (json.load: the rest, then the end) tear it."""
	fd = os.open(os.path.join(mnt, ".stfs", "stats.json"), os.O_RDONLY)
	try:
		return json.loads(os.read(fd, 1 << 20))["sources"]
	finally:
		os.close(fd)


def shared(src):
	return (src.get("tiers") or {}).get("shared")


def total(srcs, key, sub=None):
	n = 0
	for s in srcs:
		sh = shared(s)
		if sh:
			n += sh[key][sub] if sub else sh[key]
	return n


def wait_puts(t, mnt, label, timeout=60):
	"""Until no block waits to be put (the next machine finds them)."""
	deadline = time.monotonic() + timeout
	while time.monotonic() < deadline:
		if total(stats(mnt), "put_pending") == 0:
			return
		time.sleep(0.1)
	t.check(False, "%s: blocks still waiting to be put after %d s"
		% (label, timeout))


def machine(t, w, src, want, label, daemon=False, endpoint=None,
	    check=None):
	"""Mount src as a new machine, read every tensor, wait for its puts,
	and hand its counters (and the mount) to check before unmounting."""
	with harness.Mount(t, src, args=w.options(endpoint), env=w.env(),
			   ready_timeout=60, foreground=not daemon) as m:
		t0 = time.monotonic()
		read_all(t, m.path, want, label)
		took = time.monotonic() - t0
		if endpoint is None:
			wait_puts(t, m.path, label)
		srcs = stats(m.path)
		t.check(all(shared(s) is not None for s in srcs
			    if s["source"].endswith(".safetensors")),
			"%s: every shard has the shared cache: %s"
			% (label, harness.short(srcs)))
		if check:
			check(m, srcs, took)
	return srcs


def blocks_read(srcs):
	"""Blocks the machine got from outside: the shared cache, the
	origin.  (Its disk cache starts empty: a hit there is a block it got
	before, which left memory as read-ahead far ahead of the reader.)"""
	n = 0
	for s in srcs:
		T = s["tiers"]
		n += T["origin"]["blocks"]
		n += T["shared"]["hits"] if T["shared"] else 0
	return n


def check_fleet(t, w):
	files, want = make_model(os.path.join(w.d, "model"), 3, 12, 100)
	w.sim.add_repo("org/fleet").commit(files)
	size = sum(len(b) for b in files.values())
	for n in (1, 2, 3):
		label = "fleet, machine %d (daemon)" % n
		before = w.origin_bytes()
		srcs = machine(t, w, "hf://org/fleet", want, label, daemon=True)
		sent = w.origin_bytes() - before
		hits = total(srcs, "hits")
		t.note("%s: origin sent %d bytes; %d of %d blocks from the "
		       "shared cache (absent %d, late %d, failed %d, put %d, "
		       "not put %d)" % (label, sent, hits, blocks_read(srcs),
					total(srcs, "misses"), total(srcs, "late"),
					total(srcs, "failed"), total(srcs, "puts"),
					total(srcs, "put_dropped") +
					total(srcs, "put_failed")))
		if n == 1:
			t.check(total(srcs, "puts") > 0, "%s: blocks put" % label)
		else:
			t.check(hits >= 0.95 * blocks_read(srcs), "%s: %d of %d "
				"blocks from the shared cache (95 %% wanted)"
				% (label, hits, blocks_read(srcs)))
			t.eq(total(srcs, "rejected", "corrupt") +
			     total(srcs, "rejected", "truncated") +
			     total(srcs, "rejected", "foreign"), 0,
			     "%s: blocks refused" % label)
	sent = w.origin_bytes()
	t.check(sent <= 1.05 * size, "fleet: the origin sent %d bytes for a "
		"model of %d over three machines (1.05x at most)" % (sent, size))
	reqs = w.srv.requests()
	t.check(all(r["status"] in (200, 404) for r in reqs),
		"fleet: every request to the shared cache signed and answered "
		"(%s)" % harness.short([r for r in reqs
					if r["status"] not in (200, 404)]))


def small_model(w, name, seed, commit=True):
	files, want = make_model(os.path.join(w.d, name), 2, 4, seed)
	if commit:
		w.sim.add_repo("org/" + name).commit(files)
	return files, want


def log_of(m):
	with open(os.path.join(m.path, ".stfs", "log")) as f:
		return f.read()


def check_down(t, w):
	_, want = small_model(w, "down", 200)
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	closed = "http://127.0.0.1:%d" % s.getsockname()[1]
	s.close()

	def check(m, srcs, took):
		t.check(total(srcs, "failed") >= 1, "down: a request to the "
			"shared cache failed: %s" % harness.short(srcs))
		t.eq(total(srcs, "hits"), 0, "down: blocks from the shared "
		     "cache")
		log = log_of(m)
		lines = [line for line in log.splitlines()
			 if "shared cache" in line]
		t.eq(len(lines), 1, "down: lines about the shared cache in "
		     ".stfs/log:\n%s" % log)
	machine(t, w, "hf://org/down", want, "down (daemon)", daemon=True,
		endpoint=closed, check=check)


def block_keys(w, before):
	"""The bucket's new blocks: {hash directory: {index: key}}."""
	out = {}
	for k in w.objects():
		if k in before:
			continue
		d, name = k.rsplit("/", 1)
		out.setdefault(d, {})[int(name.split(".")[1])] = k
	return out


def check_faults(t, w):
	_, want = small_model(w, "faults", 300)
	before = w.objects()
	machine(t, w, "hf://org/faults", want, "faults, populating")
	dirs = block_keys(w, before)
	big = [d for d in dirs if len(dirs[d]) >= 4]
	if not big:
		t.fatal("faults: no shard of 4 blocks in the bucket: %r" % dirs)
	keys = dirs[big[0]]
	c = w.srv.client(AKID)

	def get(k):
		return c.get_object(Bucket=BUCKET, Key=k)["Body"].read()

	def put(k, b):
		c.put_object(Bucket=BUCKET, Key=k, Body=b)
	damaged = bytearray(get(keys[1]))
	damaged[-1000] ^= 0x40
	put(keys[1], bytes(damaged))
	put(keys[2], get(keys[2])[:-5000])
	put(keys[3], get(keys[0]))		# block 0 where 3 belongs

	def check(m, srcs, took):
		for kind in ("corrupt", "truncated", "foreign"):
			t.eq(total(srcs, "rejected", kind), 1, "faults: %s "
			     "blocks refused" % kind)
		t.eq(total(srcs, "hits"), blocks_read(srcs) - 3, "faults: "
		     "the other blocks from the shared cache")
		t.check("refused" in log_of(m), "faults: .stfs/log says a "
			"block was refused")
	before = w.origin_bytes()
	machine(t, w, "hf://org/faults", want, "faults", check=check)
	t.check(w.origin_bytes() - before >= 3 << 20, "faults: the refused "
		"blocks came from the origin")

	def again(m, srcs, took):
		t.eq(total(srcs, "hits"), blocks_read(srcs), "faults, next "
		     "machine: every block from the shared cache (put again)")
	machine(t, w, "hf://org/faults", want, "faults, next machine",
		check=again)


def check_revision(t, w):
	files, want = small_model(w, "rev", 400, commit=False)
	repo = w.sim.add_repo("org/rev")
	repo.commit(files)
	machine(t, w, "hf://org/rev", want, "revision 1")
	# the second shard rewritten: same names, shapes and size
	d2 = os.path.join(w.d, "rev2")
	files2, want2 = make_model(d2, 2, 4, 500)
	shard = sorted(f for f in files if f.endswith(".safetensors"))[1]
	new = dict(files)
	new[shard] = files2[shard]
	t.check(new[shard] != files[shard] and
		len(new[shard]) == len(files[shard]), "revision: the shard "
		"changed, its size did not")
	repo.commit({shard: new[shard]}, parent=repo.refs["main"])
	tmp = os.path.join(w.d, "rev-new")
	os.makedirs(tmp)
	for f, b in new.items():
		with open(os.path.join(tmp, f), "wb") as fh:
			fh.write(b)
	want_new = {}
	for f in sorted(new):
		if f.endswith(".safetensors"):
			S = harness.SrcFile(os.path.join(tmp, f))
			for x in S.tensors:
				want_new[harness.encode_name(x.name)] = \
					hashlib.sha256(S.read(x)).hexdigest()

	def check(m, srcs, took):
		for s in srcs:
			if not s["source"].endswith(".safetensors"):
				continue
			sh = shared(s)
			if s["source"].endswith(shard):
				t.eq(sh["hits"], 0, "revision 2: %s (changed): "
				     "blocks from the shared cache" % shard)
			else:
				t.eq(sh["hits"], blocks_read([s]),
				     "revision 2: %s (unchanged): blocks from "
				     "the shared cache" % s["source"])
	machine(t, w, "hf://org/rev", want_new, "revision 2 (daemon)",
		daemon=True, check=check)


def check_lfs(t, w):
	files, want = small_model(w, "lfs-a", 600)
	w.sim.add_repo("other/lfs-b").commit(files)
	machine(t, w, "hf://org/lfs-a", want, "lfs, repository a")
	before = w.origin_bytes()

	def check(m, srcs, took):
		t.eq(total(srcs, "hits"), blocks_read(srcs), "lfs, repository "
		     "b: every block from the shared cache")
	machine(t, w, "hf://other/lfs-b", want, "lfs, repository b",
		check=check)
	size = sum(len(b) for b in files.values())
	t.check(w.origin_bytes() - before < 0.05 * size, "lfs: repository "
		"b cost the origin %d bytes of %d" % (w.origin_bytes() - before,
						       size))


def check_slow(t, w):
	_, want = small_model(w, "slow", 700)
	machine(t, w, "hf://org/slow", want, "slow, populating")
	w.srv.set_get_delay(SLOW_S)

	def check(m, srcs, took):
		t.check(took < SLOW_S * 0.75, "slow: the read took %.1f s, "
			"not the shared cache's %d s" % (took, SLOW_S))
		t.check(total(srcs, "late") >= 1, "slow: the shared cache "
			"missed its deadline")
	try:
		machine(t, w, "hf://org/slow", want, "slow (daemon)",
			daemon=True, check=check)
	finally:
		w.srv.set_get_delay(0)


def run(t):
	why = s3srv.available()
	if why:
		t.fatal(why)
	d = harness.tmpdir("fleet")
	with World(t, d) as w:
		for name, fn in (("fleet", check_fleet), ("down", check_down),
				 ("faults", check_faults),
				 ("revision", check_revision),
				 ("lfs", check_lfs), ("slow", check_slow)):
			if not CASES or name in CASES:
				fn(t, w)
	harness.rmtree_safe(d)


if __name__ == "__main__":
	harness.main("int-fleet", run, mounts=True)
