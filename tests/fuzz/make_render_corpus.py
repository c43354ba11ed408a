#!/usr/bin/python3
"""make_render_corpus.py - write fuzz_render's seed corpus (corpus/render/)
and its dictionary (render.dict).

    make_render_corpus.py [OUTDIR]   (default: corpus/render next to this
                                      script)

Whole files of the three formats, small, each reaching other parts of
the view and of the virtual safetensors files:
  st-*     safetensors: every dtype (F4 and F6 too), dotted names that make
           prefixes (and "P.__metadata__", which has no stripped file),
           metadata, a scalar, an empty tensor, an empty file ({}).
  torch-*  PyTorch checkpoints written with torch.save (python3-torch):
           every dtype, strided views (transposes, steps, expands, a
           permute) gathered in C order, tied weights, views that repeat
           a few bytes into MiBs, and the expands of issue 30 whose byte
           counts wrapped (refused).
  gguf-*   GGUF files from tests/gguf_gen.py: plain and quantized types.
render.dict: the entries of json.dict, gguf.dict and pickle.dict.

The output is deterministic.  Files not written here (fz-*, units the
fuzzer found, and any added by hand) are left as they are; the others are
listed.
"""
import io
import json
import os
import struct
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import gguf_gen  # noqa: E402

BITS = [("BOOL", 8), ("F4", 4), ("F6_E2M3", 6), ("F6_E3M2", 6), ("U8", 8),
	("I8", 8), ("F8_E5M2", 8), ("F8_E4M3", 8), ("F8_E8M0", 8),
	("F8_E4M3FNUZ", 8), ("F8_E5M2FNUZ", 8), ("I16", 16), ("U16", 16),
	("F16", 16), ("BF16", 16), ("I32", 32), ("U32", 32), ("F32", 32),
	("C64", 64), ("F64", 64), ("I64", 64), ("U64", 64)]


def safetensors(tensors, meta=None):
	"""tensors: [(name, dtype, shape)]; data bytes i * 37 + 1."""
	hdr, off = {}, 0
	if meta is not None:
		hdr["__metadata__"] = meta
	for name, dt, shape in tensors:
		n = 1
		for s in shape:
			n *= s
		nb = n * dict(BITS)[dt] // 8
		hdr[name] = {"dtype": dt, "shape": shape,
			     "data_offsets": [off, off + nb]}
		off += nb
	h = json.dumps(hdr, separators=(",", ":")).encode()
	h += b" " * (-len(h) % 8)
	return struct.pack("<Q", len(h)) + h + bytes(
		(i * 37 + 1) & 255 for i in range(off))


def st_seeds(put):
	put("st-dtypes", safetensors([("t." + dt.lower(), dt, [2, 4])
				      for dt, _ in BITS], {"format": "pt"}))
	put("st-prefixes", safetensors([
		("model.layers.0.attn.w", "F16", [3, 2]),
		("model.layers.0.mlp.w", "BF16", [2, 2]),
		("model.layers.1.attn.w", "F32", [2]),
		("model.embed", "F8_E4M3", [5]),
		("vae.__metadata__", "U8", [1]),
		("vae.enc.w", "F4", [2, 2]),
		("lm_head", "F64", [])]))
	put("st-edge", safetensors([("scalar", "F32", []),
				    ("empty", "F16", [0, 3]),
				    ("zero", "I8", [4, 0, 18446744073709551615]),
				    ("wide", "C64", [1, 1, 1, 1, 1, 2])]))
	put("st-empty", safetensors([]))


def torch_seeds(put):
	import torch

	def save(obj):
		b = io.BytesIO()
		torch.save(obj, b)
		return b.getvalue()

	g = torch.Generator().manual_seed(30)
	m = torch.randn(3, 4, generator=g)
	put("torch-dtypes", save({
		"f32": m, "f64": m.double(), "f16": m.half(), "bf16": m.bfloat16(),
		"u8": m.to(torch.uint8), "i8": m.to(torch.int8),
		"i16": m.to(torch.int16), "i32": m.to(torch.int32),
		"i64": m.long(), "bool": m > 0, "c64": m.to(torch.complex64),
		"scalar": torch.tensor(1.5), "empty": torch.zeros(0, 2)}))
	put("torch-views", save({
		"m": m, "tied": m, "t": m.t(), "step": m[::2, 1::2],
		"row": m[1], "col": m[:, 2], "expand": m[:, :1].expand(3, 5),
		"perm": torch.randn(2, 3, 4, generator=g).permute(2, 0, 1),
		"bf16_t": m.bfloat16().t(), "c64_t": m.to(torch.complex64).t(),
		"bool_t": (m > 0).t(), "layers": [m[0], m[2]], "epoch": 3}))
	one = torch.ones(1)
	put("torch-repeats", save({
		"small": one.expand(100, 100),
		"mib": one.expand(1 << 20),
		"rows": torch.arange(4.0).reshape(4, 1).expand(4, 1000)}))
	put("torch-wraps", save({"w": one.expand(2**31, 2**31)}))
	put("torch-wrap-half", save({
		"w": torch.ones(1, dtype=torch.float16).expand(2**63 - 1)}))
	put("torch-tib", save({"a": one.expand(2**40), "b": one.expand(2**40)}))


def gguf_seeds(put, tmp):
	rng = np.random.default_rng(30)

	def add(name, tensors):
		p = os.path.join(tmp, name)
		gguf_gen.write(p, tensors, rng=rng,
			       metadata=[("general.architecture", "str", "x")])
		with open(p, "rb") as f:
			put(name, f.read())
		os.unlink(p)
	add("gguf-plain", [("blk.0.f32", "F32", [2, 3], None),
			   ("blk.0.f16", "F16", [5], None),
			   ("blk.1.i8", "I8", [4], None),
			   ("blk.1.bf16", "BF16", [2, 2], None),
			   ("out", "F64", [1], None)])
	add("gguf-quant", [("blk.0." + t.lower(), t, [gguf_gen.TYPES[t][1]],
			    None) for t in ("Q4_0", "Q4_1", "Q5_0", "Q5_1",
					    "Q8_0", "Q2_K", "Q3_K", "Q4_K",
					    "Q5_K", "Q6_K", "Q8_K", "IQ4_NL",
					    "IQ4_XS", "MXFP4", "IQ2_XXS",
					    "TQ1_0")])


def write_dict(path):
	seen, out = set(), []
	for name in ("json.dict", "gguf.dict", "pickle.dict"):
		with open(os.path.join(HERE, name)) as f:
			for line in f:
				line = line.strip()
				if line and not line.startswith("#") and \
				   line not in seen:
					seen.add(line)
					out.append(line)
	with open(path, "w") as f:
		f.write("# fuzz_render: json.dict, gguf.dict and pickle.dict "
			"(make_render_corpus.py)\n")
		f.write("\n".join(out) + "\n")


def main(argv):
	outdir = argv[0] if argv else os.path.join(HERE, "corpus", "render")
	os.makedirs(outdir, exist_ok=True)
	written = set()

	def put(name, data):
		assert name not in written, name
		written.add(name)
		with open(os.path.join(outdir, name), "wb") as f:
			f.write(data)
	st_seeds(put)
	torch_seeds(put)
	with tempfile.TemporaryDirectory() as tmp:
		gguf_seeds(put, tmp)
	write_dict(os.path.join(HERE, "render.dict"))
	print("render: %d seeds" % len(written))
	for f in sorted(os.listdir(outdir)):
		if f not in written and not f.startswith("fz-"):
			print("kept, not written here: render/%s" % f)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
