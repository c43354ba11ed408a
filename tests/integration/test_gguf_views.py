#!/usr/bin/env python3
"""int-gguf-views: the views of a GGUF model's tensors, every type.

A GGUF file with a tensor of every quantized type of ggml (random blocks,
plus blocks with zero, negative, subnormal, infinite and NaN half scales)
and of the plain types (F32, F16, BF16, F64, I8..I64) is mounted, and:

- every tensor file equals its bytes in the GGUF file;
- .npy/NAME.npy of a quantized tensor equals tests/gguf_dequant_ref.py's
  dequantization (a second implementation, from ggml's reference code),
  in the tensor's row-major shape; of a plain type, the stored values;
- .txt/NAME.txt read back with np.loadtxt equals the .npy values, and
  .stats/NAME.json agrees with numpy over them;
- every ggml type (tests/gguf_gen.py's list) is one of those: none is
  left served raw only, and every quantized one's sidecar says it is
  dequantized;
- .safetensors/model.safetensors passes stfs-inspect, holds the plain
  tensors' bytes and the quantized ones as F32 equal to the .npy values;
  stfs-inspect --merge writes the same file.
"""

import json
import os
import random
import struct
import sys

import numpy as np

import harness

sys.path.insert(0, os.path.join(harness.SRCROOT, "tests"))
import gguf_dequant_ref as ref  # noqa: E402
import gguf_gen  # noqa: E402

PLAIN = {		# GGUF type: numpy dtype of its values
	"F32": "<f4", "F16": "<f2", "F64": "<f8", "I8": "i1", "I16": "<i2",
	"I32": "<i4", "I64": "<i8",
}
# where a type's half scale is, when not at byte 0 (and it has one there)
SCALE_AT = {"Q2_K": 80, "Q3_K": 108, "Q6_K": 208, "TQ1_0": 52, "TQ2_0": 64}


def random_blocks(rng, name, n):
	"""n blocks of type name: random bytes, the half scales kept finite
	and moderate, and then a few with special scales."""
	block, nb, _ = ref.TYPES[name]
	raw = bytearray(rng.randbytes(n * nb))
	for i in range(1, len(raw), 2):	# no byte pair is an inf/NaN half
		raw[i] &= 0x3f
	if name == "MXFP4":
		for b in range(n):
			raw[b * nb] = rng.randrange(110, 140)
	if name == "Q8_K":
		for b in range(n):
			raw[b * nb:b * nb + 4] = struct.pack("<f", rng.uniform(-2, 2))
	# the last blocks: a NaN, an infinite and a zero scale (a half for
	# most types, a float32's low bytes for Q8_K, the exponent for MXFP4,
	# two scales for NVFP4, quants for IQ1_M)
	at = SCALE_AT.get(name, 0)
	for k, h in enumerate((0x7e00, 0xfc00, 0x0000, 0x8001)):
		b = n - 1 - k
		raw[b * nb + at:b * nb + at + 2] = struct.pack("<H", h)
	return bytes(raw)


def tensors_of(rng):
	"""[(name, type, row-major shape, bytes)]."""
	out = []
	for name, (block, nb, _) in ref.TYPES.items():
		rows, cols = 3, 2 * block
		n = rows * cols // block
		out.append(("q." + name.lower(), name, [rows, cols],
			    random_blocks(rng, name, n)))
	for t, dt in PLAIN.items():
		a = (np.arange(24, dtype=np.float64) * 1.25 - 7).astype(dt)
		out.append(("p." + t.lower(), t, [2, 3, 4], a.tobytes()))
	bf = (np.arange(12, dtype=np.float32) - 3.5).view("<u4") >> 16
	out.append(("p.bf16", "BF16", [12], bf.astype("<u2").tobytes()))
	return out


def values(typ, shape, raw):
	"""The float32 (or plain) values a tensor's .npy must hold."""
	if typ in ref.TYPES:
		return ref.dequantize(typ, raw).reshape(shape)
	if typ == "BF16":
		return (np.frombuffer(raw, "<u2").astype("<u4") << 16).view(
			"<f4").reshape(shape)
	return np.frombuffer(raw, PLAIN[typ]).reshape(shape)


def same_values(a, b):
	"""Bit-equal, any NaN matching any NaN."""
	if a.shape != b.shape or a.dtype != b.dtype:
		return False
	if a.dtype.kind != "f":
		return np.array_equal(a, b)
	u = "<u%d" % a.dtype.itemsize
	nan = np.isnan(a) & np.isnan(b)
	return bool(np.all((a.view(u) == b.view(u)) | nan))


def read_safetensors(path):
	with open(path, "rb") as f:
		n = struct.unpack("<Q", f.read(8))[0]
		hdr = json.loads(f.read(n))
		base = 8 + n
		data = f.read()
	return hdr, base, data


def run(t):
	rng = random.Random(2323)
	d = harness.tmpdir("gguf")
	src = os.path.join(d, "model.gguf")
	tensors = tensors_of(rng)
	t.eq(sorted(typ for _, typ, _, _ in tensors), sorted(gguf_gen.TYPES),
	     "a tensor of every ggml type, each with a decoder")
	gguf_gen.write(src, tensors, alignment=32)
	with harness.Mount(t, src) as m:
		mnt = m.path
		for name, typ, shape, raw in tensors:
			with open(os.path.join(mnt, name), "rb") as f:
				t.check(f.read() == raw, "%s: tensor file != its "
					"bytes in the GGUF file" % name)
			side = json.load(open(os.path.join(mnt, name + ".json")))
			npy = os.path.join(mnt, ".npy", name + ".npy")
			txt = os.path.join(mnt, ".txt", name + ".txt")
			st = os.path.join(mnt, ".stats", name + ".json")
			if typ in ref.TYPES:
				t.check("stfs dequantizes it as ggml does" in
					side.get("decode", ""), "%s: sidecar's "
					"decode %r" % (name, side.get("decode")))
			want = values(typ, shape, raw)
			got = np.load(npy)
			t.check(same_values(got, want), "%s (%s): .npy != the "
				"reference dequantization" % (name, typ))
			mm = np.load(npy, mmap_mode="r")
			t.check(same_values(np.asarray(mm), want), "%s: mmap .npy"
				% name)
			del mm		# a live mapping would keep the mount busy
			txtv = np.loadtxt(txt, dtype=got.dtype, ndmin=2)
			t.check(same_values(txtv.reshape(-1), got.reshape(-1)),
				"%s: np.loadtxt(.txt) != .npy values" % name)
			s = json.load(open(st))
			fin = want[np.isfinite(want)] if want.dtype.kind == "f" \
				else want.reshape(-1)
			t.eq(s["count"], want.size, "%s: stats count" % name)
			if fin.size:
				t.check(float(s["min"]) == float(fin.min()) and
					float(s["max"]) == float(fin.max()),
					"%s: stats min/max %r %r, numpy %r %r"
					% (name, s["min"], s["max"], fin.min(),
					   fin.max()))
				mean = float(np.mean(fin.astype(np.float64)))
				t.check(abs(s["mean"] - mean) <= 1e-9 * (abs(mean)
					+ 1), "%s: stats mean %r, numpy %r"
					% (name, s["mean"], mean))
			if want.dtype.kind == "f":
				t.eq(s["nan"], int(np.isnan(want).sum()),
				     "%s: stats nan" % name)
		# the virtual safetensors file
		vst = os.path.join(mnt, ".safetensors", "model.safetensors")
		r = harness.run([harness.STFS_INSPECT, vst])
		t.eq(r.returncode, 0, "stfs-inspect %s: exit (%s)"
		     % (vst, r.stderr.decode(errors="replace")[:300]))
		hdr, base, data = read_safetensors(vst)
		names = [k for k in hdr if k != "__metadata__"]
		t.eq(sorted(names), sorted(n for n, _, _, _ in tensors),
		     "tensors of model.safetensors")
		for name, typ, shape, raw in tensors:
			if name not in hdr:
				continue
			h = hdr[name]
			b, e = h["data_offsets"]
			t.eq(h["shape"], shape, "%s: shape in model.safetensors"
			     % name)
			if typ in ref.TYPES:
				t.eq(h["dtype"], "F32", "%s: dtype" % name)
				got = np.frombuffer(data[b:e], "<f4").reshape(shape)
				t.check(same_values(got, values(typ, shape, raw)),
					"%s: model.safetensors values != the "
					"reference dequantization" % name)
			else:
				t.eq(h["dtype"], typ, "%s: dtype" % name)
				t.check(data[b:e] == raw, "%s: bytes in "
					"model.safetensors" % name)
		# random windows of the rendered file equal the whole
		whole = open(vst, "rb").read()
		with open(vst, "rb") as f:
			for _ in range(200):
				off = rng.randrange(len(whole))
				n = rng.randrange(1, 70000)
				f.seek(off)
				t.check(f.read(n) == whole[off:off + n],
					"model.safetensors read at %d+%d" % (off, n))
	out = os.path.join(d, "merged.safetensors")
	r = harness.run([harness.STFS_INSPECT, "--merge", src, "-o", out])
	t.eq(r.returncode, 0, "stfs-inspect --merge: exit (%s)"
	     % r.stderr.decode(errors="replace")[:300])
	t.check(os.path.exists(out) and open(out, "rb").read() == whole,
		"stfs-inspect --merge differs from .safetensors/model.safetensors")


if __name__ == "__main__":
	harness.main("int-gguf-views", run, mounts=True)
