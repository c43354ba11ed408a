#!/usr/bin/env python3
"""int-gguf: GGUF files (issue 23) written by tests/gguf_gen.py: every ggml
type, every metadata value type with nested arrays, odd alignments, v2 and
v3; each tensor file equals the file's bytes, each sidecar its info, and
__metadata__.json every key with its typed value.  Hostile files are
refused in one line naming the file and the field."""

import json
import os

import numpy as np

import harness
import gguf_gen


def expected_meta(meta):
	"""What __metadata__.json holds for gguf_gen metadata."""
	def conv(vt, v):
		if vt == "array":
			et, items = v
			return [conv(et, x) for x in items]
		if vt == "f32":
			return float(np.float32(v))
		if vt == "u64" and v > 2**63 - 1:
			return str(v)	# gguf.h: past 2^63 - 1 as a string
		return v
	return {k: conv(vt, v) for k, vt, v in meta}


def check_mount(t, path, tensors, offsets, meta, align, label):
	with harness.Mount(t, path) as m:
		names = set(os.listdir(m.path))
		for name, tname, shape, raw in tensors:
			fn = harness.encode_name(name)
			t.check(fn in names, "%s: %s listed" % (label, fn))
			with open(os.path.join(m.path, fn), "rb") as f:
				t.eq(f.read(), raw, "%s: %s bytes" % (label, name))
			with open(os.path.join(m.path, fn + ".json")) as f:
				j = json.load(f)
			t.eq((j["dtype"], j["shape"], j["nbytes"], j["offset"]),
			     (tname, list(shape), len(raw), offsets[name]),
			     "%s: %s sidecar" % (label, name))
			num, block, bb = gguf_gen.TYPES[tname]
			t.eq(j.get("gguf"), {"type": tname, "type_id": num,
					     "block_size": block,
					     "block_bytes": bb,
					     "ne": list(reversed(shape))},
			     "%s: %s sidecar's gguf fields" % (label, name))
		with open(os.path.join(m.path, "__metadata__.json"), "rb") as f:
			got = json.loads(f.read().decode("utf-8"))
		t.eq(got, expected_meta(meta), "%s: __metadata__.json" % label)
		with open(os.path.join(m.path, "__summary__.json")) as f:
			summ = json.load(f)
		t.eq((summ["format"], summ["tensors"], summ["gguf"]),
		     ("gguf", len(tensors),
		      {"architecture": "llama", "file_type": 15,
		       "quantization": "Q4_K_M", "alignment": align}),
		     "%s: __summary__.json" % label)


def check_split(t, d, tensors, meta):
	"""A split set of 3 mounts as one model, from its first part, any
	part or its directory; a missing part and a name in two parts are
	refused."""
	sd = os.path.join(d, "split")
	os.makedirs(sd)
	paths = gguf_gen.write_split(os.path.join(sd, "m"), tensors, 3,
				     metadata=meta)
	offs = {}
	for k, p in enumerate(paths):
		with open(p, "rb") as f:
			data = f.read()
		for name, tname, shape, raw in tensors:
			i = data.find(raw) if raw else -1
			if raw and i >= 0 and name not in offs:
				offs[name] = (k, i)
	for src in (paths[0], paths[2], sd):
		with harness.Mount(t, src) as m:
			for name, tname, shape, raw in tensors:
				fn = harness.encode_name(name)
				with open(os.path.join(m.path, fn), "rb") as f:
					t.eq(f.read(), raw, "split %s: %s bytes"
					     % (src, name))
			with open(os.path.join(m.path, "__summary__.json")) as f:
				summ = json.load(f)
			t.eq((summ["format"], summ["tensors"],
			      len(summ["shards"])), ("gguf-split", len(tensors), 3),
			     "split %s: summary" % src)
			with open(os.path.join(m.path, "__metadata__.json")) as f:
				got = json.load(f)
			t.eq(got.get("general.architecture"), "llama",
			     "split: metadata of the first part")
	os.rename(paths[1], paths[1] + ".x")
	r = harness.run([harness.STFS_INSPECT, paths[0]])
	err = r.stderr.decode("utf-8", "replace").strip()
	t.check(r.returncode != 0 and len(err.splitlines()) == 1 and
		paths[1] in err, "split: a missing part is named: %r" % err)
	os.rename(paths[1] + ".x", paths[1])
	dup = os.path.join(d, "dup")
	os.makedirs(dup)
	p2 = gguf_gen.write_split(os.path.join(dup, "m"), tensors[:2] +
				  tensors[:1], 3)
	r = harness.run([harness.STFS_INSPECT, p2[0]])
	err = r.stderr.decode("utf-8", "replace").strip()
	t.check(r.returncode != 0 and "also in" in err and
		len(err.splitlines()) == 1,
		"split: a tensor in two parts is refused: %r" % err)


def every_type(rng):
	out = []
	for tname, (_, block, _) in gguf_gen.TYPES.items():
		shape = [3, 2, 2 * block] if block > 1 else [2, 3, 5]
		raw = gguf_gen.random_bytes(tname, shape, rng)
		out.append(("blk.0.%s.weight" % tname.lower(), tname, shape, raw))
	out.append(("scalar", "F32", [], b"\0\0\x80\x3f"))
	out.append(("empty", "F16", [0, 4], b""))
	return out


def run(t):
	d = harness.tmpdir("gguf")
	rng = np.random.default_rng(23)
	tensors = every_type(rng)
	meta = gguf_gen.every_value_type()
	for version, align in ((3, 32), (2, 8), (3, 24), (3, 4096)):
		p = os.path.join(d, "every-v%d-a%d.gguf" % (version, align))
		offs = gguf_gen.write(p, tensors, alignment=align,
				      metadata=meta, version=version)
		m = list(meta)
		if align != 32:
			m.append(("general.alignment", "u32", align))
		check_mount(t, p, tensors, offs, m, align, os.path.basename(p))

	check_split(t, d, tensors, meta)

	ok = os.path.join(d, "ok.gguf")
	gguf_gen.write(ok, [("a", "Q8_0", [2, 32], None),
			    ("b", "F32", [4], None)],
		       metadata=[("k", "str", "v")])
	with open(ok, "rb") as f:
		good = f.read()
	for name, data, words in gguf_gen.hostile_files(good):
		p = os.path.join(d, "bad-%s.gguf" % name)
		with open(p, "wb") as f:
			f.write(data)
		r = harness.run([harness.STFS_INSPECT, p])
		err = r.stderr.decode("utf-8", "replace").strip()
		t.check(r.returncode != 0, "%s: refused" % name)
		t.check(len(err.splitlines()) == 1 and p in err and
			all(w in err for w in words),
			lambda: "%s: one line naming the file and %s, got %r"
			% (name, words, err))


if __name__ == "__main__":
	harness.main("gguf", run)
