#!/usr/bin/env python3
"""int-gen: gen.py writes what the reference writer would, and every broken
file breaks the rule it is named after.  Checked with harness.validate(),
an independent port of the reference reader's checks; no mount needed."""

import json
import os
import struct

import harness
from harness import gen


def check_layout(t, path):
	"""Reference writer layout: 8-byte padded header, spaces only, compact
	JSON, dtype-descending then name-ascending order, back-to-back data."""
	base = os.path.basename(path)
	t.eq(harness.validate(path), None, "%s: valid for the reference checks" % base)
	with open(path, "rb") as f:
		(n,) = struct.unpack("<Q", f.read(8))
		raw = f.read(n)
	t.eq(n % 8, 0, "%s: header length is a multiple of 8" % base)
	body = raw.rstrip(b" ")
	t.check(body.endswith(b"}") and len(raw) - len(body) < 8,
		"%s: padded with fewer than 8 spaces" % base)
	obj = json.loads(body)
	t.eq(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode(),
	     body, "%s: compact JSON" % base)
	keys = [k for k in obj if k != "__metadata__"]
	if "__metadata__" in obj:
		t.eq(list(obj)[0], "__metadata__", "%s: __metadata__ first" % base)
	order = sorted(keys, key=lambda k: (-gen.DTYPE_ORDER[obj[k]["dtype"]],
					     k.encode("utf-8")))
	t.eq(keys, order, "%s: tensors in dtype-descending, name order" % base)
	end = 0
	for k in keys:
		b, e = obj[k]["data_offsets"]
		t.eq(b, end, "%s: %r starts where the previous ended" % (base, k[:40]))
		end = e
	t.eq(os.path.getsize(path), 8 + n + end, "%s: file size" % base)


def run(t):
	d = harness.tmpdir("gen")
	for kind in gen.GENERATORS:
		if kind == "gpt2":
			continue
		p = os.path.join(d, kind + ".safetensors")
		gen.GENERATORS[kind](p)
		check_layout(t, p)

	# every dtype is in alldtypes; names are all there
	S = harness.SrcFile(os.path.join(d, "alldtypes.safetensors"))
	t.eq({x.dtype for x in S.tensors}, set(gen.DTYPE_BITS),
	     "alldtypes holds all 22 dtypes")
	t.eq(len(gen.DTYPES), 22, "22 dtypes known")
	S = harness.SrcFile(os.path.join(d, "oddnames.safetensors"))
	t.eq({x.name for x in S.tensors} - {"normal.weight"}, set(gen.ODD_NAMES),
	     "oddnames holds every odd name")
	t.check(any(len(x.name.encode()) == 65536 for x in S.tensors),
		"oddnames has a 64 KiB name")

	# the committed sample is what gen.py makes today
	if os.path.exists(harness.SAMPLE):
		with open(harness.SAMPLE, "rb") as a, \
		     open(os.path.join(d, "sample.safetensors"), "rb") as b:
			t.check(a.read() == b.read(), "samples/sample.safetensors "
				"equals `gen.py sample` output (regenerate it)")
		t.check(os.path.getsize(harness.SAMPLE) < 200 * 1024,
			"sample is under 200 KB")
	else:
		t.check(False, "samples/sample.safetensors exists")
	# and the README's model (samples/make.py) too
	model = os.path.join(harness.SRCROOT, "samples", "model.safetensors")
	with open(model, "rb") as a, \
	     open(os.path.join(d, "llama.safetensors"), "rb") as b:
		t.check(a.read() == b.read(), "samples/model.safetensors equals "
			"`gen.py llama` output (regenerate it: samples/make.py)")

	# broken files: each fails with the error it is named after
	kinds = set()
	for p, want in sorted(gen.gen_broken(os.path.join(d, "broken")).items()):
		t.eq(harness.validate(p), want, "%s: reference error"
		     % os.path.basename(p))
		kinds.add(want)
	t.eq(kinds, {"HeaderTooSmall", "HeaderTooLarge", "InvalidHeaderLength",
		     "InvalidHeader", "InvalidHeaderDeserialization",
		     "InvalidOffset", "ValidationOverflow", "MisalignedSlice",
		     "TensorInvalidInfo", "MetadataIncompleteBuffer"},
	     "one broken file per reference error kind")

	# the real files (written by the reference library) match our rules
	for p in harness.real_files():
		t.eq(harness.validate(p), None, "%s: valid" % os.path.basename(p))

	# the name encoding helper itself
	E = harness.encode_name
	for name, want in [("", "%"), ("/", "%2F"), ("a/b", "a%2Fb"),
			   ("..", "%2E."), (".hidden", "%2Ehidden"),
			   ("x.json", "x%2Ejson"), (".json", "%2Ejson"),
			   ("__summary__", "%5F_summary__"), ("__", "%5F_"),
			   ("_", "_"), ("100%", "100%25"), ("a\x00b", "a%00b"),
			   ("d\x7f", "d%7F"), ("模型.权重", "模型.权重"),
			   ("L" * 250, "L" * 250)]:
		t.eq(E(name), want, "encode_name(%r)" % name[:20])
	for name in gen.ODD_NAMES:
		f = E(name)
		t.check(len(f.encode()) <= 250, "encoded %r fits" % name[:20])
		dec = harness.decode_name(f)
		t.check(dec is None or dec == name, "decode(encode(%r))" % name[:20])
		t.check(dec is not None or len(name.encode()) > 83,
			"only long names are hashed: %r" % name[:20])
	h = E("L" * 251)
	t.eq(h, "L" * 200 + "%~" + "%016x" % harness.fnv1a64(b"L" * 251),
	     "hashed name form")
	t.eq(harness.fnv1a64(b"a"), 0xaf63dc4c8601ec8c, "FNV-1a-64 test vector")
	t.eq(E("a" + "模" * 100), "a" + "模" * 66 + "%~" +
	     "%016x" % harness.fnv1a64(("a" + "模" * 100).encode()),
	     "truncation keeps whole UTF-8 characters")
	t.eq(E("/" * 84)[:200], "%2F" * 66 + "%~", "truncation keeps whole escapes")


harness.main("int-gen", run, mounts=False, binaries=False)
