#!/usr/bin/env python3
"""int-manymodels: more models and shards than descriptors (issue 12.8).

The test runs under RLIMIT_NOFILE 256 (soft and hard, inherited by stfs
and stfs-inspect), and builds three times as many files:
- a folder of 768 small models: stfs-inspect validates and lists all, and
  its mount (a directory per model) reads byte-exact;
- a 768-shard set: mounts, every tensor read byte-exact (twice, in two
  orders, so descriptors are closed and reopened), and the daemon never
  holds more descriptors than the limit allows.
"""

import json
import os
import resource
import sys

import harness
from harness import STFS_INSPECT, run

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_trees  # noqa: E402

LIMIT = 256
N = 3 * LIMIT


def daemon_fds(m):
	return len(os.listdir("/proc/%d/fd" % m.proc.pid))


def read_all(t, mnt, files, order, what):
	tensors = []
	for p in files:
		S = harness.SrcFile(p)
		tensors += [(S, x) for x in S.tensors]
	if order:
		tensors.reverse()
	bad = 0
	for S, x in tensors:
		f = os.path.join(mnt, harness.encode_name(x.name))
		try:
			with open(f, "rb") as fh:
				ok = fh.read() == S.read(x)
		except OSError as e:
			ok = False
			print("%s: %s: %s" % (what, x.name, e))
		bad += not ok
	t.eq(bad, 0, "%s: tensors whose bytes differ from the source (of %d)"
	     % (what, len(tensors)))
	return len(tensors)


def run_(t):
	d = harness.tmpdir("many")
	folder = os.path.join(d, "folder")
	exp = gen_trees.many(folder, N)
	ts = gen_trees.tensors("layer", N, 3)
	idx, shards = gen_trees.write_set(os.path.join(d, "set"), "model", ts, N)
	t.eq(len(shards), N, "the set has %d shards" % N)

	resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))

	# the folder: every model validated
	r = run([STFS_INSPECT, "--json", folder], timeout=120)
	t.eq(r.returncode, 0, "inspect of %d models under ulimit -n %d: %r"
	     % (N, LIMIT, r.stderr[:300]))
	if r.returncode == 0:
		ms = json.loads(r.stdout)["models"]
		t.eq(sorted(m["dir"] for m in ms), sorted(exp),
		     "inspect lists every model")

	# the folder mounted as a tree: every model's bytes, descriptors bounded
	with harness.Mount(t, folder, ready_timeout=120) as m:
		bad = n = 0
		for mdir, (label, files) in sorted(exp.items()):
			S = harness.SrcFile(files[0])
			for x in S.tensors:
				f = os.path.join(m.path, mdir, harness.encode_name(x.name))
				try:
					with open(f, "rb") as fh:
						bad += fh.read() != S.read(x)
				except OSError as e:
					bad += 1
					print("%s: %s" % (f, e))
				n += 1
		t.eq(bad, 0, "folder: tensors that differ from the source (of %d)"
		     % n)
		t.eq(sorted(x for x in os.listdir(m.path) if x[0] != "."),
		     sorted(list(exp) + ["__summary__.json"]),
		     "folder: one directory per model")
		fds = daemon_fds(m)
		t.check(fds < LIMIT, "folder: the daemon holds %d descriptors, "
			"fewer than %d" % (fds, LIMIT))

	# the set: mounted and read, descriptors bounded
	with harness.Mount(t, idx, ready_timeout=60) as m:
		n = read_all(t, m.path, shards, 0, "set, in order")
		t.eq(n, N, "every tensor of the set")
		read_all(t, m.path, shards, 1, "set, reversed")
		fds = daemon_fds(m)
		t.check(fds < LIMIT, "the daemon holds %d descriptors, fewer than "
			"%d" % (fds, LIMIT))
		with open(os.path.join(m.path, "__summary__.json")) as f:
			t.eq(json.load(f)["tensors"], N, "__summary__.json tensors")
	harness.rmtree_safe(d)


harness.main("int-manymodels", run_, mounts=True)
