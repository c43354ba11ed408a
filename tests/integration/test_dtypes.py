#!/usr/bin/env python3
"""int-dtypes: all 22 dtypes, scalars, zero-size tensors (also next to a
2^64-1 dimension), a file with no tensors, a file with only metadata."""

import json
import os

import harness
from harness import gen


def run(t):
	d = harness.tmpdir("dtypes")

	src = harness.gen_file("alldtypes", d)
	with harness.Mount(t, src) as m:
		S = harness.verify_tree(t, src, m.path)
		for dt, bits in gen.DTYPES:
			with open(os.path.join(m.path, dt + ".json")) as f:
				j = json.load(f)
			t.eq(j["nbytes"], 24 * bits // 8, "%s: [2,3,4] nbytes" % dt)
			t.eq(j["numpy"], gen.NUMPY.get(dt), "%s: numpy type" % dt)
			vec = os.path.join(m.path, dt + ".vec")
			t.eq(os.path.getsize(vec), S.by_name[dt + ".vec"].nbytes,
			     "%s.vec size" % dt)
		t.eq(len(S.tensors), 22 + 19 + 22, "alldtypes tensor count")

	src = harness.gen_file("edge", d)
	with harness.Mount(t, src) as m:
		S = harness.verify_tree(t, src, m.path)
		for x in S.tensors:
			p = os.path.join(m.path, harness.encode_name(x.name))
			with open(p, "rb") as f:
				data = f.read()
			if x.numel == 0:
				t.eq(data, b"", "%s: zero-size tensor reads empty" % x.name)
		with open(os.path.join(m.path, "zero.huge.json")) as f:
			j = json.load(f)
		t.eq(j["shape"], [0, gen.U64_MAX], "shape entry 2^64-1 is exact")
		t.eq(j["numel"], 0, "numel of [0, 2^64-1]")
		with open(os.path.join(m.path, "scalar.f32.json")) as f:
			j = json.load(f)
		t.eq((j["shape"], j["numel"], j["nbytes"]), ([], 1, 4),
		     "scalar shape [] numel 1")
		with open(os.path.join(m.path, "__metadata__.json"), "rb") as f:
			meta = json.loads(f.read().decode("utf-8"))
		t.eq(meta.get("ctrl"), "a\x00b\nc\t\"q\"\\",
		     "metadata value with NUL and escapes round-trips")
		t.eq(meta.get("__metadata__"), "nested name",
		     "metadata key named __metadata__")

	for kind in ("empty", "metaonly"):
		src = harness.gen_file(kind, d)
		with harness.Mount(t, src) as m:
			harness.verify_tree(t, src, m.path)
			t.eq(sorted(os.listdir(m.path)),
			     ["__metadata__.json", "__summary__.json"],
			     "%s: only the root files" % kind)


harness.main("int-dtypes", run)
