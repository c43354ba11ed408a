"""viewfix.py - small models whose files cover every kind of view, for the
tests that read them under pressure (int-memory, int-failalloc) and for
scripts/bench-memory.

    models(d) -> {label: Fixture}

Each fixture is a model written under d and the files of its mount worth
reading, by kind:

- "sharded": a safetensors set of 3 shards, mixed dtypes: raw tensor
  files, sidecars, .npy/, .txt/, .stats/, .png/, .safetensors/ (virtual
  files over several shards), .files/, .html/, __metadata__.json,
  __summary__.json, .stfs/stats.json;
- "torch": a PyTorch checkpoint (torch.save) with contiguous tensors and
  strided views, served gathered: a transposed F16, a stepped BF16, a
  transposed int8 and a transposed bool, with their .npy/.txt/.stats/.png
  and .safetensors/model.safetensors, and a quantized (per-channel
  qint8) tensor, decoded in .dequant/;
- "gguf": GGUF tensors of quantized types, decoded in .npy/ (and as F32
  in .safetensors/);
- "fp8": FP8 weights with their scales, decoded in .dequant/, and the
  folders of .files/ and .dequant/.files/.

Fixture.files: [(kind, relative path, expected bytes or None)]: the bytes
a file must hold where the test knows them independently of stfs (raw
tensors: the source's bytes; strided views: torch's contiguous bytes);
None where only a clean read (another mount) tells them.
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen  # noqa: E402
import gen_sharded  # noqa: E402
import gguf_gen  # noqa: E402


class Fixture:
	def __init__(self, label, src):
		self.label = label
		self.src = src
		self.files = []
		self.local_only = set()

	def add(self, kind, rel, want=None, local_only=False):
		"""local_only: what the file holds differs when the model is
		remote (.stfs/stats.json counts requests)"""
		self.files.append((kind, rel, want))
		if local_only:
			self.local_only.add(rel)


def _views(fx, name, mirrors=(".npy", ".txt", ".stats", ".png")):
	for v in mirrors:
		suffix = ".json" if v == ".stats" else v
		fx.add(v, os.path.join(v, name + suffix))
		if v == ".png":
			fx.add(v, os.path.join(v, name + ".hist.png"))


def sharded(d, n=24):
	out = os.path.join(d, "sharded")
	tensors = gen_sharded.mixed_tensors(n)
	idx, _ = gen_sharded.write_sharded(out, tensors, 3,
					   metadata={"format": "pt"})
	fx = Fixture("sharded", idx)
	for name, dtype, shape, data in tensors:
		fx.add("raw", name, gen._as_bytes(data))
		fx.add("sidecar", name + ".json")
		_views(fx, name)
	for name in sorted(os.listdir(out)):
		fx.add(".files", os.path.join(".files", name))
	fx.add(".html", ".html/index.html")
	fx.add(".html", ".html/s/0.js")
	fx.add("blob", "__metadata__.json")
	# (a remote model's summary names its URL, its stats.json counts)
	fx.add("blob", "__summary__.json", local_only=True)
	fx.add(".safetensors", ".safetensors/model.safetensors")
	fx.add(".stfs", ".stfs/stats.json", local_only=True)
	return fx


def _raw(x):
	"""torch's bytes of x in C order (what the tensor file holds)"""
	import torch
	x = x.contiguous()
	if x.dtype == torch.bfloat16:
		x = x.view(torch.int16)
	return x.numpy().tobytes()


def torch_model(d, rows=96, cols=80):
	import torch
	g = torch.Generator().manual_seed(38)
	sd = {
		"w.f32": torch.randn(rows, cols, generator=g),
		"w.f16_t": torch.randn(rows, cols, generator=g).half().t(),
		"w.bf16_step": torch.randn(rows, 2 * cols,
					   generator=g).bfloat16()[:, ::2],
		"w.i8_t": torch.randint(-128, 128, (rows, cols), generator=g,
					dtype=torch.int8).t(),
		"w.bool_t": (torch.rand(rows, cols, generator=g) > 0.5).t(),
	}
	# a quantized tensor: its integers, its values in .dequant/ (and in
	# its own .npy/, ..., which the logical tensor replaces)
	qc = torch.quantize_per_channel(
		torch.randn(rows, cols, generator=g),
		torch.rand(rows, generator=g, dtype=torch.double) / 10 + 0.01,
		torch.randint(-128, 128, (rows,), generator=g), 0, torch.qint8)
	path = os.path.join(d, "pytorch_model.bin")
	torch.save(dict(sd, **{"w.qc": qc}), path)
	fx = Fixture("torch", path)
	for name, x in sd.items():
		fx.add("strided" if not x.is_contiguous() else "raw", name,
		       _raw(x))
		_views(fx, name)
	fx.add("raw", "w.qc", _raw(qc.int_repr()))
	_views(fx, "w.qc")
	for rel in ("w.qc", os.path.join(".npy", "w.qc.npy")):
		fx.add(".dequant", os.path.join(".dequant", rel))
	fx.add(".safetensors", ".safetensors/model.safetensors")
	return fx


def gguf_model(d, seed=38):
	rng = np.random.default_rng(seed)
	tensors = []
	for i, (typ, shape) in enumerate([("Q4_0", [16, 64]),
					  ("Q8_0", [8, 96]),
					  ("Q4_K", [4, 256]),
					  ("F16", [12, 20])]):
		raw = gguf_gen.random_bytes(typ, shape, rng)
		if typ != "F16":
			# finite half scales (random ones may be NaN)
			raw = bytearray(raw)
			for k in range(1, len(raw), 2):
				raw[k] &= 0x3f
			raw = bytes(raw)
		tensors.append(("blk.%d.%s" % (i, typ.lower()), typ, shape, raw))
	path = os.path.join(d, "model.gguf")
	gguf_gen.write(path, tensors)
	fx = Fixture("gguf", path)
	for name, _, _, raw in tensors:
		fx.add("raw", name, raw)
		_views(fx, name)
		fx.add("gguf-dequant", os.path.join(".npy", name + ".npy"))
	fx.add(".safetensors", ".safetensors/model.safetensors")
	return fx


def fp8_model(d):
	"""FP8 weights in blocks of 64 x 64, which only config.json tells
	(130 x 70 in a grid of 3 x 2 scales fits blocks of 128 x 128 no
	better: left as stored without it): a config lost to a failed
	allocation shows as other bytes in .dequant/."""
	rng = np.random.default_rng(8)
	codes = rng.integers(0, 0x7e, (130, 70), dtype=np.uint8)
	scale = (rng.random((3, 2)) + 0.5).astype(np.float32)
	out = os.path.join(d, "fp8")
	os.makedirs(out)
	path = os.path.join(out, "model.safetensors")
	gen.write_safetensors(path, {
		"layers.0.mlp.weight": ("F8_E4M3", [130, 70], codes),
		"layers.0.mlp.weight_scale_inv": ("F32", [3, 2], scale),
		"layers.0.norm.weight": ("F32", [70], rng.standard_normal(
			70).astype(np.float32)),
	})
	with open(os.path.join(out, "config.json"), "w") as f:
		json.dump({"quantization_config": {
			"quant_method": "fp8", "weight_block_size": [64, 64]}}, f)
	fx = Fixture("fp8", out)	# the folder: config.json and .files/
	fx.add("raw", "layers.0.mlp.weight", codes.tobytes())
	# the weight's mirror files are its dequantized values'
	_views(fx, "layers.0.mlp.weight")
	for name in ("layers.0.mlp.weight", "layers.0.norm.weight"):
		fx.add(".dequant", os.path.join(".dequant", name))
		fx.add(".dequant", os.path.join(".dequant", ".npy",
						name + ".npy"))
	fx.add(".dequant", ".dequant/.safetensors/model.safetensors")
	fx.add(".dequant", ".dequant/.safetensors/bf16/model.safetensors")
	for rel in (".files/model.safetensors", ".files/config.json",
		    ".dequant/.files/model.safetensors",
		    ".dequant/.files/config.json"):
		fx.add(".files", rel)
	return fx


def models(d):
	os.makedirs(d, exist_ok=True)
	return {f.label: f for f in (sharded(d), torch_model(d),
				      gguf_model(d), fp8_model(d))}



def many_tensors_checkpoint(path, n):
	"""A checkpoint of n float32 tensors of 4 elements, tensor i holding
	i, i + 1, i + 2, i + 3 and named model.layers.I.block.weight, written
	as torch.save writes it (the same opcodes and memo indices, one
	storage per tensor, a zip of stored entries: zip64 past 65,535 of
	them), without torch: 100,000 take seconds, not torch's 15.
	Returns n."""
	import struct
	import zipfile
	memo = [0]

	def put():
		i = memo[0]
		memo[0] += 1
		return b"q" + bytes([i]) if i < 256 else \
			b"r" + struct.pack("<I", i)

	def text(s):
		b = s.encode("utf-8")
		return b"X" + struct.pack("<I", len(b)) + b

	p = [b"\x80\x02}" + put() + b"("]
	for i in range(n):
		p.append(text("model.layers.%d.block.weight" % i) + put())
		if i == 0:
			p.append(b"ctorch._utils\n_rebuild_tensor_v2\n" + put() +
				 b"((" + text("storage") + put() +
				 b"ctorch\nFloatStorage\n" + put() +
				 text(str(i)) + put() + text("cpu") + put())
		else:
			p.append(b"h\x02((h\x03h\x04" + text(str(i)) + put() +
				 b"h\x06")
		p.append(b"K\x04t" + put() + b"QK\x00K\x04\x85" + put() +
			 b"K\x01\x85" + put() + b"\x89")
		p.append(b"ccollections\nOrderedDict\n" + put() if i == 0
			 else b"h\x0a")
		p.append(b")R" + put() + b"t" + put() + b"R" + put())
	p.append(b"u.")
	with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
		z.writestr("archive/data.pkl", b"".join(p))
		z.writestr("archive/byteorder", "little")
		for i in range(n):
			z.writestr("archive/data/%d" % i,
				   struct.pack("<4f", i, i + 1, i + 2, i + 3))
		z.writestr("archive/version", "3\n")
	return n
