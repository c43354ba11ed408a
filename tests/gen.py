#!/usr/bin/env python3
"""gen.py - our own safetensors writer and the test-file generators.

Standard library only (numpy arrays are accepted as tensor data when numpy
happens to be installed, but nothing here needs it).

The writer follows the reference Rust writer (safetensors `prepare`):
tensors are sorted by dtype descending in the reference enum order, then by
name ascending byte-wise; offsets are assigned back to back; the header is
compact JSON with `__metadata__` first; it is padded with spaces to a
multiple of 8 bytes and the 8-byte little-endian length counts the padding.

Library:
    write_safetensors(path, tensors, metadata=None) -> Layout
    write_raw(path, header, data=b"", length=None)    (broken files)
    gen_sample, gen_llama (llama_tensors), gen_alldtypes, gen_oddnames, gen_edge, gen_empty,
    gen_metaonly, gen_gpt2, gen_broken

CLI:
    gen.py sample OUT        small GPT-like model (samples/sample.safetensors)
    gen.py llama OUT         tiny Llama-named model (samples/model.safetensors)
    gen.py alldtypes OUT     one tensor per dtype (all 22) plus scalars
    gen.py oddnames OUT      names that need encoding on a file system
    gen.py edge OUT          scalar and zero-size tensors, odd metadata
    gen.py many OUT          5000 small tensors (long directory listings)
    gen.py empty OUT         "{}": no tensors, no metadata
    gen.py metaonly OUT      metadata, no tensors
    gen.py gpt2 OUT          exact GPT-2 small shapes, F32, ~548 MB
    gen.py broken OUTDIR     one refused file per reference error kind
    gen.py all OUTDIR        everything above but gpt2
"""

import argparse
import json
import os
import random
import struct
import sys

# The reference `Dtype` enum, in enum order (it decides the writer's sort).
DTYPES = [
	("BOOL", 8), ("F4", 4), ("F6_E2M3", 6), ("F6_E3M2", 6),
	("U8", 8), ("I8", 8), ("F8_E5M2", 8), ("F8_E4M3", 8), ("F8_E8M0", 8),
	("F8_E4M3FNUZ", 8), ("F8_E5M2FNUZ", 8),
	("I16", 16), ("U16", 16), ("F16", 16), ("BF16", 16),
	("I32", 32), ("U32", 32), ("F32", 32),
	("C64", 64), ("F64", 64), ("I64", 64), ("U64", 64),
]
DTYPE_BITS = dict(DTYPES)
DTYPE_ORDER = {name: i for i, (name, _) in enumerate(DTYPES)}

# numpy type strings for the dtypes numpy can represent natively.
NUMPY = {
	"BOOL": "|b1", "U8": "|u1", "I8": "|i1",
	"I16": "<i2", "U16": "<u2", "F16": "<f2",
	"I32": "<i4", "U32": "<u4", "F32": "<f4",
	"C64": "<c8", "F64": "<f8", "I64": "<i8", "U64": "<u8",
}

MAX_HEADER_SIZE = 100_000_000
U64_MAX = 2**64 - 1


def numel_of(shape):
	n = 1
	for d in shape:
		n *= d
	return n


def nbytes_of(dtype, shape):
	"""Bytes taken by a tensor; ValueError when numel*bits % 8 != 0."""
	bits = numel_of(shape) * DTYPE_BITS[dtype]
	if bits % 8:
		raise ValueError("%s %r: %d bits is not a whole number of bytes"
				 % (dtype, list(shape), bits))
	return bits // 8


def _as_bytes(data):
	if isinstance(data, (bytes, bytearray, memoryview)):
		return bytes(data)
	if hasattr(data, "tobytes"):		# numpy array (any dtype)
		return data.tobytes()
	if callable(data):			# lazily produced bytes
		return _as_bytes(data())
	raise TypeError("tensor data must be bytes, a numpy array or a callable")


class Layout:
	"""What write_safetensors wrote: header length and tensor offsets."""

	def __init__(self, header_len, entries, metadata):
		self.header_len = header_len		# n, padding included
		self.data_start = 8 + header_len
		self.entries = entries			# [(name, dtype, shape, begin, end)]
		self.metadata = metadata

	@property
	def data_len(self):
		return self.entries[-1][4] if self.entries else 0


def _normalize(tensors):
	if isinstance(tensors, dict):
		items = [(k,) + tuple(v) for k, v in tensors.items()]
	else:
		items = [tuple(t) for t in tensors]
	seen = set()
	for t in items:
		if len(t) != 4:
			raise ValueError("tensor must be (name, dtype, shape, data)")
		name, dtype = t[0], t[1]
		if dtype not in DTYPE_BITS:
			raise ValueError("unknown dtype %r" % dtype)
		if name == "__metadata__":
			raise ValueError("a tensor may not be named __metadata__")
		if name in seen:
			raise ValueError("duplicate tensor name %r" % name)
		seen.add(name)
	return items


def _jstr(s):
	# serde_json's escaping: '"', '\\', control bytes; nothing else.
	return json.dumps(s, ensure_ascii=False)


def header_text(entries, metadata=None):
	"""Compact header JSON (unpadded) for [(name, dtype, shape, b, e)]."""
	parts = []
	if metadata is not None:
		for k, v in metadata.items():
			if not isinstance(k, str) or not isinstance(v, str):
				raise ValueError("__metadata__ keys and values must be strings")
		parts.append('"__metadata__":{%s}' % ",".join(
			"%s:%s" % (_jstr(k), _jstr(v)) for k, v in metadata.items()))
	for name, dtype, shape, b, e in entries:
		parts.append('%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
			     % (_jstr(name), dtype,
				",".join(str(int(d)) for d in shape), b, e))
	return "{" + ",".join(parts) + "}"


def pad8(raw):
	return raw + b" " * (-len(raw) % 8)


def write_safetensors(path, tensors, metadata=None):
	"""Write a valid safetensors file the way the reference writer does.

	tensors: {name: (dtype, shape, data)} or [(name, dtype, shape, data)],
	data being bytes, a numpy array or a callable returning either (called
	once, while writing, so big files need not sit in memory at once).
	metadata: None (no __metadata__ key) or a {str: str} dict.
	"""
	items = _normalize(tensors)
	items.sort(key=lambda t: (-DTYPE_ORDER[t[1]], t[0].encode("utf-8")))
	entries = []
	off = 0
	for name, dtype, shape, _ in items:
		shape = [int(d) for d in shape]
		n = nbytes_of(dtype, shape)
		entries.append((name, dtype, shape, off, off + n))
		off += n
	hdr = pad8(header_text(entries, metadata).encode("utf-8"))
	if len(hdr) > MAX_HEADER_SIZE:
		raise ValueError("header too large")
	tmp = path + ".tmp"
	with open(tmp, "wb") as f:
		f.write(struct.pack("<Q", len(hdr)))
		f.write(hdr)
		for (name, dtype, shape, b, e), item in zip(entries, items):
			data = _as_bytes(item[3])
			if len(data) != e - b:
				raise ValueError("tensor %r: %d data bytes, expected %d"
						 % (name, len(data), e - b))
			f.write(data)
	os.replace(tmp, path)
	return Layout(len(hdr), entries, metadata)


def write_raw(path, header, data=b"", length=None):
	"""Write prefix + header + data exactly as given (for broken files).

	header: str (UTF-8 encoded) or bytes; length: the prefix value
	(default len(header)); data: bytes appended after the header."""
	if isinstance(header, str):
		header = header.encode("utf-8")
	if length is None:
		length = len(header)
	with open(path, "wb") as f:
		f.write(struct.pack("<Q", length))
		f.write(header)
		f.write(data)


# ---- deterministic data ---------------------------------------------------
#
# Only Random.random() is guaranteed to give the same sequence for the same
# integer seed on every Python version, so the committed sample is built
# from it alone.  Bulk data for big files uses randbytes (fast, and only
# needs to be distinct per tensor, not reproducible forever).

class Rng:
	def __init__(self, seed):
		self.r = random.Random(seed)

	def u(self):
		return self.r.random()

	def byte(self):
		return int(self.r.random() * 256) & 0xFF

	def bytes(self, n):
		return bytes(self.byte() for _ in range(n))

	def f32(self, n, lo, hi):
		return struct.pack("<%df" % n,
				   *(lo + (hi - lo) * self.u() for _ in range(n)))

	def f16(self, n, lo, hi):
		return struct.pack("<%de" % n,
				   *(lo + (hi - lo) * self.u() for _ in range(n)))

	def bf16(self, n, lo, hi):
		out = bytearray()
		for _ in range(n):
			x = struct.pack("<f", lo + (hi - lo) * self.u())
			out += x[2:4]		# truncate: the top 16 bits
		return bytes(out)

	def f8e4m3(self, n):
		# every byte but the two NaNs (0x7F, 0xFF) of float8_e4m3fn
		out = bytearray()
		while len(out) < n:
			b = self.byte()
			if b & 0x7F != 0x7F:
				out.append(b)
		return bytes(out)

	def e8m0(self, n, lo=120, hi=134):
		# power-of-two scales 2^(b-127); 0xFF is NaN
		return bytes(lo + int(self.u() * (hi - lo)) for _ in range(n))

	def bools(self, n):
		return bytes(1 if self.u() < 0.5 else 0 for _ in range(n))


def bulk_bytes(seed, n):
	# randbytes(n) builds one n*8-bit integer, which overflows past
	# 256 MiB: draw big tensors in pieces from one stream.
	r = random.Random(seed)
	ch = 32 << 20
	if n <= ch:
		return r.randbytes(n)
	return b"".join(r.randbytes(min(ch, n - i)) for i in range(0, n, ch))


def filler(dtype, shape, seed):
	"""Plausible bytes for any dtype: valid BOOLs, no float8 NaNs."""
	n = nbytes_of(dtype, shape)
	rng = Rng(seed)
	if dtype == "BOOL":
		return rng.bools(n)
	if dtype in ("F8_E4M3",):
		return rng.f8e4m3(n)
	if dtype == "F8_E8M0":
		return rng.e8m0(n)
	if dtype == "F32":
		return rng.f32(n // 4, -2.0, 2.0)
	if dtype == "F16":
		return rng.f16(n // 2, -2.0, 2.0)
	if dtype == "BF16":
		return rng.bf16(n // 2, -2.0, 2.0)
	if dtype == "F64":
		return struct.pack("<%dd" % (n // 8),
				   *(rng.u() * 4 - 2 for _ in range(n // 8)))
	if dtype == "C64":
		return rng.f32(n // 4, -1.0, 1.0)
	return rng.bytes(n)


# ---- generators -------------------------------------------------------------

def gen_sample(path):
	"""A small GPT-like model using many dtypes; deterministic bytes."""
	vocab, ctx, d, ff, layers = 128, 32, 64, 256, 2
	T = []
	rng = Rng(20240601)

	def add(name, dtype, shape, data):
		T.append((name, dtype, shape, data))

	add("wte.weight", "F16", [vocab, d], rng.f16(vocab * d, -0.1, 0.1))
	add("wpe.weight", "F32", [ctx, d], rng.f32(ctx * d, -0.02, 0.02))
	add("position_ids", "I64", [1, ctx],
	    struct.pack("<%dq" % ctx, *range(ctx)))
	add("attn_mask", "BOOL", [ctx, ctx],
	    bytes(1 if j <= i else 0 for i in range(ctx) for j in range(ctx)))
	add("vocab.byte_values", "U8", [vocab], bytes(range(vocab)))
	for L in range(layers):
		p = "h.%d." % L
		add(p + "ln_1.weight", "F32", [d], rng.f32(d, 0.9, 1.1))
		add(p + "ln_1.bias", "F32", [d], rng.f32(d, -0.01, 0.01))
		add(p + "attn.c_attn.weight", "BF16", [d, 3 * d],
		    rng.bf16(d * 3 * d, -0.1, 0.1))
		add(p + "attn.c_attn.bias", "F32", [3 * d],
		    rng.f32(3 * d, -0.01, 0.01))
		add(p + "attn.c_proj.weight", "BF16", [d, d],
		    rng.bf16(d * d, -0.1, 0.1))
		add(p + "attn.c_proj.bias", "F16", [d], rng.f16(d, -0.01, 0.01))
		add(p + "ln_2.weight", "F32", [d], rng.f32(d, 0.9, 1.1))
		add(p + "ln_2.bias", "F32", [d], rng.f32(d, -0.01, 0.01))
		# fp8 weights with a per-tensor scale
		add(p + "mlp.c_fc.weight", "F8_E4M3", [d, ff], rng.f8e4m3(d * ff))
		add(p + "mlp.c_fc.weight_scale", "F32", [],
		    struct.pack("<f", 0.0078125))
		add(p + "mlp.c_fc.bias", "F32", [ff], rng.f32(ff, -0.01, 0.01))
		# MXFP4: 4-bit weights with one E8M0 scale per 32-element block
		add(p + "mlp.c_proj.weight", "F4", [ff, d], rng.bytes(ff * d // 2))
		add(p + "mlp.c_proj.weight_scales", "F8_E8M0", [ff, d // 32],
		    rng.e8m0(ff * d // 32))
		add(p + "mlp.c_proj.bias", "F32", [d], rng.f32(d, -0.01, 0.01))
	add("ln_f.weight", "F32", [d], rng.f32(d, 0.9, 1.1))
	add("ln_f.bias", "F32", [d], rng.f32(d, -0.01, 0.01))
	add("lm_head.int8_weight", "I8", [vocab, d], rng.bytes(vocab * d))
	add("lm_head.int8_scale", "F64", [], struct.pack("<d", 1.0 / 127))
	add("step", "U64", [], struct.pack("<Q", 123456))
	return write_safetensors(path, T, {"format": "pt"})


def llama_tensors(seed=20260401):
	"""A tiny model with the names most checkpoints use today (Llama,
	Mistral, Qwen: model.embed_tokens, model.layers.N.self_attn.q_proj,
	mlp.gate_proj, model.norm, lm_head): BF16 weights, F32 norms, grouped
	query attention (4 heads, 2 key/value heads of 8), 2 layers, vocab
	256; deterministic bytes.  [(name, dtype, shape, data)]."""
	vocab, d, ff, layers, kv = 256, 32, 64, 2, 16
	rng = Rng(seed)
	T = []

	def w(name, shape):
		T.append((name, "BF16", shape,
			  rng.bf16(numel_of(shape), -0.1, 0.1)))

	def norm(name):
		T.append((name, "F32", [d], rng.f32(d, 0.9, 1.1)))

	w("model.embed_tokens.weight", [vocab, d])
	for L in range(layers):
		p = "model.layers.%d." % L
		norm(p + "input_layernorm.weight")
		w(p + "self_attn.q_proj.weight", [d, d])
		w(p + "self_attn.k_proj.weight", [kv, d])
		w(p + "self_attn.v_proj.weight", [kv, d])
		w(p + "self_attn.o_proj.weight", [d, d])
		norm(p + "post_attention_layernorm.weight")
		w(p + "mlp.gate_proj.weight", [ff, d])
		w(p + "mlp.up_proj.weight", [ff, d])
		w(p + "mlp.down_proj.weight", [d, ff])
	norm("model.norm.weight")
	w("lm_head.weight", [vocab, d])
	return T


def gen_llama(path):
	"""samples/model.safetensors: llama_tensors() as one file."""
	return write_safetensors(path, llama_tensors(), {"format": "pt"})


def gen_alldtypes(path):
	"""Every one of the 22 dtypes: a [2,3,4] tensor each, plus a scalar
	for every dtype that has whole-byte elements."""
	T = []
	for i, (dt, bits) in enumerate(DTYPES):
		T.append((dt, dt, [2, 3, 4], filler(dt, [2, 3, 4], 1000 + i)))
		if bits % 8 == 0:
			T.append((dt + ".scalar", dt, [],
				  filler(dt, [], 2000 + i)))
		# a rank-1 tensor whose byte size is odd for sub-byte dtypes
		vec = {4: [6], 6: [4]}.get(bits, [5])
		T.append((dt + ".vec", dt, vec, filler(dt, vec, 3000 + i)))
	return write_safetensors(path, T, {"format": "pt",
					   "what": "all 22 dtypes"})


LONG_A = "L" * 300			# 300-byte name
ODD_NAMES = [
	"", "/", "a/b", "/leading", "trailing/", "..", ".", ".hidden",
	"x.json", ".json", "a.json.json", "x.JSON", "__summary__", "__x__",
	"__", "___", "_", "__metadata__.json", "__summary__.json",
	"100%", "%", "%41", "%2F", "x%~0123456789abcdef",
	"nul\x00inside", "\x00", "ctrl\x01\x02\x1f", "del\x7f", "tab\there",
	"new\nline", "quote\"back\\slash", "sp ace", "-rf", "~", "*",
	"模型.权重", "emoji \U0001F600", "é", "\u00ad",
	LONG_A,
	"L" * 250,			# encodes to exactly 250 bytes
	"L" * 251,			# one over: hashed
	"L" * 260 + "1", "L" * 260 + "2",	# same 200-byte prefix
	"/" * 84,			# escapes push it over 250
	"a" + "模" * 100,		# truncation must not split UTF-8
	"b" * 199 + "/" + "c" * 80,	# ... nor an escape
	"Z" * 65536,			# 64 KiB name
]


def gen_oddnames(path):
	T = []
	for i, name in enumerate(ODD_NAMES):
		n = 1 + (i * 7) % 23
		T.append((name, "U8", [n], bulk_bytes(5000 + i, n)))
	T.append(("normal.weight", "F32", [3, 2], filler("F32", [6], 7)))
	return write_safetensors(path, T, {"format": "pt"})


def gen_edge(path):
	"""Scalars, zero-size tensors (at the start, middle and end of the
	data), zero dims next to 2^64-1, and metadata with odd values."""
	T = [
		("scalar.f32", "F32", [], struct.pack("<f", 3.5)),
		("scalar.f64", "F64", [], struct.pack("<d", -1.25)),
		("scalar.i64", "I64", [], struct.pack("<q", -42)),
		("scalar.u8", "U8", [], b"\xab"),
		("scalar.bool", "BOOL", [], b"\x01"),
		("scalar.bf16", "BF16", [], b"\x80\x3f"),
		("scalar.f8", "F8_E4M3", [], b"\x38"),
		("scalar.c64", "C64", [], struct.pack("<ff", 1.0, -2.0)),
		("zero.f32", "F32", [0], b""),
		("zero.i32", "I32", [3, 0], b""),
		("zero.u8", "U8", [0, 5, 7], b""),
		("zero.u64", "U64", [0], b""),		# sorts first
		("zero.bool", "BOOL", [0], b""),	# sorts last
		("zero.f4", "F4", [0], b""),
		("zero.f6", "F6_E2M3", [0, 4], b""),
		("zero.huge", "U8", [0, U64_MAX], b""),
		("zero.huge2", "U16", [U64_MAX, 0], b""),
		("one.f4", "F4", [2], b"\x21"),
		("f6.four", "F6_E3M2", [4], b"\x01\x02\x03"),
		("rank5", "I16", [1, 2, 1, 2, 1], struct.pack("<4h", 1, -2, 3, -4)),
	]
	meta = {"format": "pt", "empty": "", "unicode": "模型",
		"ctrl": "a\x00b\nc\t\"q\"\\", "__metadata__": "nested name",
		"total_parameters": "33"}
	return write_safetensors(path, T, meta)


def gen_many(path, n=5000):
	"""n small tensors with long, similar names: directory listings that
	need many readdir calls (offsets, no duplicates, nothing missing)."""
	T = []
	dts = ["F32", "F16", "BF16", "U8", "I64", "BOOL", "F4"]
	for i in range(n):
		dt = dts[i % len(dts)]
		shape = [2 + i % 5, 2]
		name = "model.layers.%d.block_sparse_moe.experts.%d.w%d.weight" % (
			i // 64, i % 64, i % 3)
		T.append((name, dt, shape, bulk_bytes(9000 + i, nbytes_of(dt, shape))))
	return write_safetensors(path, T, {"format": "pt", "n": str(n)})


def gen_empty(path):
	return write_safetensors(path, [], None)


def gen_metaonly(path):
	return write_safetensors(path, [], {"format": "pt", "note": "no tensors"})


GPT2_LAYER = [
	("ln_1.weight", [768]), ("ln_1.bias", [768]),
	("attn.bias", [1, 1, 1024, 1024]),
	("attn.c_attn.weight", [768, 2304]), ("attn.c_attn.bias", [2304]),
	("attn.c_proj.weight", [768, 768]), ("attn.c_proj.bias", [768]),
	("ln_2.weight", [768]), ("ln_2.bias", [768]),
	("mlp.c_fc.weight", [768, 3072]), ("mlp.c_fc.bias", [3072]),
	("mlp.c_proj.weight", [3072, 768]), ("mlp.c_proj.bias", [768]),
]
GPT2_PARAMS = 137022720


def gpt2_shapes():
	out = [("wte.weight", [50257, 768]), ("wpe.weight", [1024, 768])]
	for L in range(12):
		out += [("h.%d.%s" % (L, n), s) for n, s in GPT2_LAYER]
	out += [("ln_f.weight", [768]), ("ln_f.bias", [768])]
	return out


def gen_gpt2(path, seed=2):
	"""Exact GPT-2 small shapes, all F32 (137,022,720 parameters, ~548 MB),
	pseudo-random bytes, different for every tensor."""
	T = []
	for i, (name, shape) in enumerate(gpt2_shapes()):
		n = numel_of(shape) * 4
		T.append((name, "F32", shape,
			  (lambda s=seed * 100000 + i, n=n: bulk_bytes(s, n))))
	return write_safetensors(path, T, {"format": "pt"})


def _hdr(obj):
	return json.dumps(obj, separators=(",", ":"))


def broken_files():
	"""{file stem: file bytes}: each file is refused by the reference
	reader with the error named by the stem's first part (see
	broken_error); the first failing check decides, so each file breaks
	exactly one rule."""
	P = lambda n: struct.pack("<Q", n)

	def raw(hdr, data=b""):
		if isinstance(hdr, str):
			hdr = hdr.encode("utf-8")
		h = pad8(hdr)
		return P(len(h)) + h + data

	def T(name, dtype, shape, b, e):
		return {name: {"dtype": dtype, "shape": shape,
			       "data_offsets": [b, e]}}

	def hdr(*ts):
		d = {}
		for t in ts:
			d.update(t)
		return _hdr(d)

	ok = hdr(T("a", "U8", [4], 0, 4))
	return {
		"HeaderTooSmall": b"\x08\x00\x00\x00\x00",
		"HeaderTooSmall-empty": b"",
		"HeaderTooLarge": P(MAX_HEADER_SIZE + 1) + b"{}      ",
		# a git-lfs pointer: "version " read as a u64 is ~2.3e18
		"HeaderTooLarge-lfs-pointer":
			b"version https://git-lfs.github.com/spec/v1\n"
			b"oid sha256:" + b"0" * 64 + b"\nsize 548105171\n",
		"InvalidHeaderLength": P(100) + b"{}" + b" " * 14,
		"InvalidHeader": raw(b'{"\xff\xfe":1}'),
		"InvalidHeaderDeserialization":
			raw('{"a":{"dtype":"F32","shape":[1]}}', b"\x00" * 4),
		"InvalidHeaderDeserialization-nul-padding":
			P(8) + b"{}\x00\x00\x00\x00\x00\x00",
		"InvalidHeaderDeserialization-metadata-number":
			raw('{"__metadata__":{"n":1}}'),
		"InvalidHeaderDeserialization-not-json": raw("hello world"),
		"InvalidOffset":
			raw(hdr(T("a", "U8", [4], 0, 4), T("b", "U8", [4], 8, 12)),
			    b"\x01" * 12),
		"ValidationOverflow": raw(hdr(T("a", "U8", [2**61], 0, 0))),
		"MisalignedSlice": raw(hdr(T("a", "F4", [3], 0, 1)), b"\x00"),
		"TensorInvalidInfo": raw(hdr(T("a", "F32", [2], 0, 4)), b"\x00" * 4),
		"MetadataIncompleteBuffer": raw(ok, b"\x01\x02\x03\x04\x05"),
		"MetadataIncompleteBuffer-short": raw(ok, b"\x01\x02"),
	}


def broken_error(stem):
	"""The reference error name a broken file's stem stands for."""
	return stem.split("-", 1)[0]


def gen_broken(outdir):
	"""Write every broken file as OUTDIR/<stem>.safetensors.
	Returns {path: reference error name}."""
	os.makedirs(outdir, exist_ok=True)
	res = {}
	for stem, data in broken_files().items():
		p = os.path.join(outdir, stem + ".safetensors")
		with open(p, "wb") as f:
			f.write(data)
		res[p] = broken_error(stem)
	return res


GENERATORS = {
	"sample": gen_sample,
	"llama": gen_llama,
	"alldtypes": gen_alldtypes,
	"oddnames": gen_oddnames,
	"edge": gen_edge,
	"many": gen_many,
	"empty": gen_empty,
	"metaonly": gen_metaonly,
	"gpt2": gen_gpt2,
}


def gen_all(outdir):
	os.makedirs(outdir, exist_ok=True)
	for name, fn in GENERATORS.items():
		if name != "gpt2":
			fn(os.path.join(outdir, name + ".safetensors"))
	gen_broken(os.path.join(outdir, "broken"))


def main(argv=None):
	ap = argparse.ArgumentParser(
		description="Write safetensors test files.",
		formatter_class=argparse.RawDescriptionHelpFormatter,
		epilog="kinds: " + ", ".join(list(GENERATORS) + ["broken", "all"]))
	ap.add_argument("kind", choices=list(GENERATORS) + ["broken", "all"])
	ap.add_argument("out", help="output file (a directory for broken/all)")
	a = ap.parse_args(argv)
	if a.kind == "broken":
		for p, e in sorted(gen_broken(a.out).items()):
			print("%s\t%s" % (p, e))
	elif a.kind == "all":
		gen_all(a.out)
	else:
		lay = GENERATORS[a.kind](a.out)
		print("%s: %d tensors, header %d bytes, data %d bytes"
		      % (a.out, len(lay.entries), lay.header_len, lay.data_len))
	return 0


if __name__ == "__main__":
	sys.exit(main())
