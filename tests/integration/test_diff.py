#!/usr/bin/env python3
"""int-diff: stfs-inspect --diff A B (issue 17.1).

Two checkpoints that differ in a few tensors (bytes, dtype, shape, one
removed, one added) and in one __metadata__ value whose new length moves
every offset: --diff names exactly those tensors and that key, text and
--json, exit 1; identical models (also the same tensors as a sharded set)
exit 0; a missing or invalid SOURCE exits 2.  A difference in the last
byte of a tensor larger than one 4 MiB chunk is found at its offset."""

import json
import os

import numpy as np

import harness
import gen_sharded
import nginx
from harness import STFS_INSPECT, gen, run


def tensors(rng):
	T = []
	for i in range(30):
		dt = ["F32", "BF16", "F16", "I64", "U8", "F8_E4M3"][i % 6]
		shape = [4, 6]
		T.append(["layer.%d.w" % i, dt, shape,
			  rng.integers(0, 256, gen.nbytes_of(dt, shape),
				       dtype=np.uint8).tobytes()])
	big = rng.integers(0, 256, 5 << 20, dtype=np.uint8).tobytes()
	T.append(["big", "U8", [len(big)], big])
	return T


def run_(t):
	d = harness.tmpdir("diff")
	rng = np.random.default_rng(171)
	A = tensors(rng)
	a = os.path.join(d, "a.safetensors")
	gen.write_safetensors(a, [tuple(x) for x in A], {"format": "pt",
							  "step": "100"})
	B = [list(x) for x in A]
	byname = {x[0]: x for x in B}
	raw = bytearray(byname["layer.3.w"][3])
	raw[-1] ^= 1
	byname["layer.3.w"][3] = bytes(raw)
	byname["layer.6.w"][1] = "I32"			# F32 -> I32, same bytes
	byname["layer.9.w"][2] = [6, 4]			# shape only
	raw = bytearray(byname["big"][3])
	raw[(5 << 20) - 1] ^= 0x80
	byname["big"][3] = bytes(raw)
	B = [x for x in B if x[0] != "layer.12.w"]
	B.append(["extra.bias", "F32", [3], np.zeros(3, "<f4").tobytes()])
	b = os.path.join(d, "b.safetensors")
	gen.write_safetensors(b, [tuple(x) for x in B], {"format": "pt",
							  "step": "100000"})
	Sa, Sb = harness.SrcFile(a), harness.SrcFile(b)
	t.check(all(Sa.by_name[n].offset != Sb.by_name[n].offset
		    for n in Sa.by_name if n in Sb.by_name),
		"the metadata change moves every tensor")

	want_changed = {"layer.3.w": "bytes", "layer.6.w": "dtype",
			"layer.9.w": "shape", "big": "bytes"}
	r = run([STFS_INSPECT, "--diff", "--json", a, b], timeout=60)
	t.eq(r.returncode, 1, "--diff --json of different models: exit 1 (%r)"
	     % r.stderr[:300])
	j = json.loads(r.stdout)
	t.eq(j.get("only_in_a"), ["layer.12.w"], "--json only_in_a")
	t.eq(j.get("only_in_b"), ["extra.bias"], "--json only_in_b")
	got = {c["name"]: c["what"] for c in j.get("changed", [])}
	t.eq(got, want_changed, "--json changed: exactly those tensors")
	first = {c["name"]: c.get("first_difference") for c in j.get("changed", [])}
	t.eq(first.get("layer.3.w"), gen.nbytes_of("I64", [4, 6]) - 1,
	     "layer.3.w: first difference at its last byte")
	t.eq(first.get("big"), (5 << 20) - 1,
	     "big: first difference in the second chunk, at its last byte")
	c6 = [c for c in j.get("changed", []) if c["name"] == "layer.6.w"]
	t.check(c6 and c6[0]["a"] == {"dtype": "F32", "shape": [4, 6]} and
		c6[0]["b"] == {"dtype": "I32", "shape": [4, 6]},
		"layer.6.w: both dtypes reported: %r" % c6)
	t.eq(j.get("identical"), 31 - 1 - 4, "--json identical count")
	t.eq(j.get("in_both"), 30, "--json in_both")
	t.eq(j.get("same"), False, "--json same")
	t.eq(j.get("metadata"), {"only_in_a": [], "only_in_b": [],
				 "changed": ["step"]}, "--json metadata")

	# text: one line per difference
	r = run([STFS_INSPECT, "--diff", a, b], timeout=60)
	t.eq(r.returncode, 1, "--diff: exit 1")
	lines = r.stdout.decode().splitlines()
	want_lines = {"only in A: layer.12.w", "only in B: extra.bias",
		      "metadata changed: step"}
	for n, what in want_changed.items():
		want_lines.add([l for l in lines if l.startswith("%s: %s:" % (what, n))][0]
			       if any(l.startswith("%s: %s:" % (what, n)) for l in lines)
			       else "%s: %s: ..." % (what, n))
	t.eq(set(lines[:-1]), want_lines, "--diff: lines name exactly those")
	t.eq(lines[-1], "identical: 26 of 30 tensors in both (A has 31, B has 31)",
	     "--diff: last line")
	r = run([STFS_INSPECT, "--diff", "--quiet", a, b], timeout=60)
	t.check(r.returncode == 1 and not r.stdout and not r.stderr,
		"--diff --quiet: exit 1, silent")

	# identical: a copy, and the same tensors as a sharded set (other
	# offsets, other files) with the same metadata
	c = os.path.join(d, "c.safetensors")
	gen.write_safetensors(c, [tuple(x) for x in A], {"format": "pt",
							  "step": "100"})
	r = run([STFS_INSPECT, "--diff", a, c], timeout=60)
	t.eq(r.returncode, 0, "--diff of equal files: exit 0 (%r)" % r.stdout[-300:])
	idx, _ = gen_sharded.write_sharded(os.path.join(d, "sh"),
					   [tuple(x) for x in A], 3)
	r = run([STFS_INSPECT, "--diff", "--json", c, idx], timeout=60)
	j = json.loads(r.stdout)
	t.eq((j.get("identical"), j.get("changed"), j.get("only_in_a"),
	      j.get("only_in_b")), (31, [], [], []),
	     "file vs sharded set of the same tensors: all identical")
	# the index's metadata differs from the file's (total_size, no step)
	t.eq(r.returncode, 1, "file vs sharded set: metadata differs, exit 1")
	r = run([STFS_INSPECT, "--diff", idx, idx], timeout=60)
	t.eq(r.returncode, 0, "sharded set vs itself: exit 0")
	r = run([STFS_INSPECT, "--diff", b, idx], timeout=60)
	t.eq(r.returncode, 1, "b vs sharded A: exit 1")

	# trouble: exit 2
	for args, what in (([a, os.path.join(d, "missing.safetensors")], "missing B"),
			   ([a], "one SOURCE"),
			   ([a, b, c], "three SOURCEs")):
		r = run([STFS_INSPECT, "--diff"] + args)
		t.eq(r.returncode, 2, "--diff with %s: exit 2" % what)
	bad = os.path.join(d, "bad.safetensors")
	with open(bad, "wb") as f:
		f.write(b"\x04\x00\x00\x00\x00\x00\x00\x00{}")
	r = run([STFS_INSPECT, "--diff", a, bad])
	t.eq(r.returncode, 2, "--diff with an invalid B: exit 2, not 1")
	t.check(bad.encode() in r.stderr, "--diff: the error names the file")
	r = run([STFS_INSPECT, "--diff", "--stats", a, b])
	t.eq(r.returncode, 2, "--diff --stats: usage error")

	# trees of models: tensors named DIR/NAME, models paired by directory
	def model(root, sub, T, meta):
		os.makedirs(os.path.join(root, sub), exist_ok=True)
		gen.write_safetensors(os.path.join(root, sub, "model.safetensors"),
				      T, meta)
	f32 = lambda v: np.full(4, v, "<f4").tobytes()
	ta, tb = os.path.join(d, "treeA"), os.path.join(d, "treeB")
	model(ta, "m1", [("t1", "F32", [4], f32(1)), ("t2", "F32", [4], f32(2))],
	      {"k": "1"})
	model(ta, "m2", [("t3", "F32", [4], f32(3))], None)
	model(tb, "m1", [("t1", "F32", [4], f32(9)), ("t2", "F32", [4], f32(2))],
	      {"k": "2"})
	model(tb, "m3", [("t4", "F32", [4], f32(4))], None)
	r = run([STFS_INSPECT, "--diff", "--json", ta, tb], timeout=60)
	t.eq(r.returncode, 1, "trees: exit 1 (%r)" % r.stderr[:300])
	j = json.loads(r.stdout) if r.stdout else {}
	t.eq((j.get("only_in_a"), j.get("only_in_b"),
	      [(c["name"], c["what"]) for c in j.get("changed", [])],
	      j.get("identical"), (j.get("metadata") or {}).get("changed")),
	     (["m2/t3"], ["m3/t4"], [("m1/t1", "bytes")], 1, ["m1: k"]),
	     "trees: named by DIR/NAME, paired by directory")
	r = run([STFS_INSPECT, "--diff", ta, ta], timeout=60)
	t.eq(r.returncode, 0, "tree vs itself: exit 0")

	# remote: the same answer over http, and http against local
	why = nginx.available()
	t.check(not why, "nginx for the remote case: %s" % why)
	if why:
		return
	local = run([STFS_INSPECT, "--diff", "--json", a, b], timeout=60)
	lj = json.loads(local.stdout)
	with nginx.Nginx(d, os.path.join(d, "ng")) as srv:
		for x, y in ((srv.url("a.safetensors"), srv.url("b.safetensors")),
			     (a, srv.url("b.safetensors"))):
			r = run([STFS_INSPECT, "--diff", "--json", x, y], timeout=60)
			t.eq(r.returncode, 1, "remote --diff: exit 1 (%r)" % r.stderr[:300])
			rj = json.loads(r.stdout) if r.stdout else {}
			for k in ("a", "b"):
				rj.pop(k, None)
				lj.pop(k, None)
			t.eq(rj, lj, "remote --diff %s %s: as local" % (x, y))
		r = run([STFS_INSPECT, "--diff", srv.url("a.safetensors"),
			 srv.url("c.safetensors")], timeout=60)
		t.eq(r.returncode, 0, "remote --diff of equal files: exit 0")


if __name__ == "__main__":
	harness.main("int-diff", run_, mounts=False)
