#!/usr/bin/env python3
"""int-sha256: the user.safetensors.sha256 xattr of a tensor file (issue
17.4) equals sha256sum of the file (through the mount) and of the
tensor's bytes in the source; it is not listed (it reads the whole
tensor); getfattr -R gives a manifest; a sharded set and -o tree too."""

import hashlib
import json
import os
import subprocess

import harness
import gen_sharded
from harness import gen

XA = "user.safetensors.sha256"


def check(t, src_files, mnt, label):
	"""src_files: {tensor name: (SrcFile, SrcTensor)}"""
	files = {}
	for root, dirs, fs in os.walk(mnt):
		for f in fs:
			p = os.path.join(root, f)
			try:
				files[os.getxattr(p, "user.safetensors.name").decode()] = p
			except OSError:
				pass
	t.eq(sorted(files), sorted(src_files), "%s: every tensor file found" % label)
	for name, p in sorted(files.items()):
		S, x = src_files[name]
		want = hashlib.sha256(S.read(x)).hexdigest()
		got = os.getxattr(p, XA).decode()
		t.eq(got, want, "%s: %s sha256 xattr equals the source's bytes"
		     % (label, name))
		r = subprocess.run(["sha256sum", p], capture_output=True, timeout=60)
		t.eq(r.stdout.split()[0].decode() if r.stdout else None, got,
		     "%s: %s xattr equals sha256sum of the file" % (label, name))
		t.eq(os.getxattr(p, XA).decode(), got, "%s: %s second get (kept)"
		     % (label, name))
		t.check(XA not in os.listxattr(p), "%s: %s: sha256 not listed"
			% (label, name))
	# a sidecar has none
	some = next(iter(files.values()), None)
	if some:
		try:
			os.getxattr(some + ".json", XA)
			t.check(False, "%s: a sidecar has no sha256" % label)
		except OSError:
			t.check(True, "")
	# getfattr -R: one line per tensor file
	r = subprocess.run(["getfattr", "-R", "-n", XA, "--absolute-names", mnt],
			   capture_output=True, timeout=120)
	lines = [l for l in r.stdout.decode().splitlines() if l.startswith(XA)]
	t.eq(len(lines), len(files), "%s: getfattr -R gives one sha256 per tensor"
	     % label)


def run_(t):
	d = harness.tmpdir("sha256")
	p = harness.gen_file("alldtypes", d)
	S = harness.SrcFile(p)
	src = {x.name: (S, x) for x in S.tensors}
	with harness.Mount(t, p) as m:
		check(t, src, m.path, "alldtypes")
	with harness.Mount(t, harness.SAMPLE, args=["-o", "tree"]) as m:
		S2 = harness.SrcFile(harness.SAMPLE)
		check(t, {x.name: (S2, x) for x in S2.tensors}, m.path, "sample tree")
	idx, _ = gen_sharded.write_sharded(os.path.join(d, "sh"),
					   gen_sharded.mixed_tensors(30), 3)
	with open(idx) as f:
		wm = json.load(f)["weight_map"]
	shards = {s: harness.SrcFile(os.path.join(os.path.dirname(idx), s))
		  for s in set(wm.values())}
	src = {n: (shards[s], shards[s].by_name[n]) for n, s in wm.items()}
	with harness.Mount(t, idx) as m:
		check(t, src, m.path, "sharded")


if __name__ == "__main__":
	harness.main("int-sha256", run_, mounts=True)
