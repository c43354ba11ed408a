#!/usr/bin/env python3
"""int-quant: quantized weights seen as the numbers they stand for (issue
31).

A folder of models, one per scheme, built with numpy and torch the way
each library stores them (tests/quant_ref.py), odd shapes included
(dimensions that are not multiples of the block, group or pack), is
mounted, and for every quantized weight:

- .dequant/NAME (NAME: the framework's name, e.g. M.weight for GPTQ's
  M.qweight) holds its float32 values, and .dequant/.npy/NAME.npy the
  same array, equal to the reference's dequantization in quant_ref.py
  bit for bit (NaN for NaN);
- .dequant/NAME.json names the scheme, its settings and its parts;
- where the logical tensor has a stored tensor's name (FP8, bitsandbytes),
  .npy/NAME.npy of the mount holds the same values, and .stats/NAME.json
  their statistics;
- every stored tensor stays as it is: its file equals its bytes in the
  source, and .dequant/ holds the other tensors as they are;
- .dequant/.safetensors/model.safetensors holds the logical tensors as
  F32 and no parts;
- a candidate whose parts do not fit (a scale grid that does not tile its
  weight) stays as stored and __summary__.json of .dequant/ says why;
- settings only a config tells (FP8's block, GPTQ's v2 zero points) come
  from config.json / quantize_config.json next to the model, and a weight
  whose settings no config told says in its sidecar what was assumed,
  the mount's __summary__.json counts them per setting, and
  stfs-inspect's summary, --stats and --merge --dequant print a line per
  setting (none for a model whose config tells them);
  over http:// the tensors alone speak (the FP8 weights the same, the
  block they take said so, the one that needs its config stays as
  stored; int-quant-remote: hf:// and s3:// read the configs).

stfs-inspect --stats reports the logical values; --diff between a
quantized model and its original reports each weight's error, equal to
numpy's over the same values.  Parts that lie about each other (a shape
that wraps 64 bits, a quant_state that is not JSON, a g_idx naming a group
that is not there, a row too long to compute whole) are refused with
their reason, under ulimit -v and a timeout; the count a mount's
__summary__.json gives before .dequant/ is built refuses a
compressed-tensors weight_shape that does not fit, as .dequant/ does.
"""

import json
import os
import struct
import sys

import numpy as np
import torch

import harness

sys.path.insert(0, os.path.join(harness.SRCROOT, "tests"))
import quant_ref as ref  # noqa: E402

gen = harness.gen


def same(a, b):
	"""Equal arrays, NaN where NaN (any sign or payload)."""
	a = np.asarray(a, dtype=np.float32)
	b = np.asarray(b, dtype=np.float32)
	if a.shape != b.shape:
		return False
	na, nb = np.isnan(a), np.isnan(b)
	return bool((na == nb).all() and
		    (a.view(np.uint32)[~na] == b.view(np.uint32)[~nb]).all())


class Model:
	"""One model folder: its tensors, the logical tensors it should show
	and their references."""

	def __init__(self, name):
		self.name = name
		self.tensors = {}	# name: (dtype, shape, numpy data)
		self.logical = {}	# name: (scheme, [parts], reference)
		self.config = {}	# file name: JSON object
		self.refused = []	# stored names that must not be dequantized
		self.kept = {}		# refused name: a part kept (default
					# the name + "_scale_inv")
		self.assumed = {}	# what sidecars say was assumed: weights

	def add(self, name, dtype, data, shape=None):
		data = np.ascontiguousarray(data)
		self.tensors[name] = (dtype, list(data.shape if shape is None
						  else shape), data)


def fp8_models(rng):
	m = Model("fp8")
	# DeepSeek's block scheme, 200 x 300: blocks cut at both edges
	orig = rng.standard_normal((200, 300)).astype(np.float32)
	sc = np.zeros((2, 3), np.float32)
	codes = np.zeros((200, 300), np.uint8)
	for i in range(2):
		for j in range(3):
			blk = orig[128 * i:128 * (i + 1), 128 * j:128 * (j + 1)]
			sc[i, j] = np.abs(blk).max() / 448
			codes[128 * i:128 * (i + 1), 128 * j:128 * (j + 1)] = \
				ref.fp8_quantize(blk / sc[i, j])
	m.add("layers.0.mlp.down_proj.weight", "F8_E4M3", codes)
	m.add("layers.0.mlp.down_proj.weight_scale_inv", "F32", sc)
	m.logical["layers.0.mlp.down_proj.weight"] = (
		"fp8-block", ["layers.0.mlp.down_proj.weight",
			      "layers.0.mlp.down_proj.weight_scale_inv"],
		ref.fp8_block_ref(codes, sc, (128, 128)))
	m.orig = {"layers.0.mlp.down_proj.weight": orig}
	# compressed-tensors, one BF16 scale per output channel
	# (660,000 values: a tile of 512 Ki of them ends inside a row)
	c2 = rng.integers(0, 256, (600, 1100), dtype=np.uint8)
	c2[(c2 & 0x7f) == 0x7f] = 0x3a
	s2 = torch.tensor(rng.random((600, 1)).astype(np.float32) + 0.25
			  ).to(torch.bfloat16)
	m.add("layers.0.attn.q_proj.weight", "F8_E4M3", c2)
	m.add("layers.0.attn.q_proj.weight_scale", "BF16",
	      s2.view(torch.int16).numpy().view(np.uint16))
	m.add("layers.0.attn.q_proj.input_scale", "F32",
	      np.array([0.5], np.float32))
	m.logical["layers.0.attn.q_proj.weight"] = (
		"fp8-channel", ["layers.0.attn.q_proj.weight",
				"layers.0.attn.q_proj.weight_scale"],
		ref.fp8_scaled_ref(c2, s2))
	# one scale for the tensor (F32), E5M2 codes with NaN and infinities
	c3 = rng.integers(0, 256, (33, 17), dtype=np.uint8)
	s3 = np.array([0.75], np.float32)
	m.add("layers.0.attn.k_proj.weight", "F8_E5M2", c3)
	m.add("layers.0.attn.k_proj.weight_scale", "F32", s3)
	m.logical["layers.0.attn.k_proj.weight"] = (
		"fp8-tensor", ["layers.0.attn.k_proj.weight",
			       "layers.0.attn.k_proj.weight_scale"],
		ref.fp8_scaled_ref(c3, torch.tensor(s3), "E5M2"))
	# stacked experts [4, 200, 72] with a grid per expert [4, 2, 1]
	# (blocks of 128): each expert's blocks start at its first row, the
	# last one cut at 200 (a [800, 72] weight's would not be)
	c5 = rng.integers(0, 0x7e, (4, 200, 72), dtype=np.uint8)
	s5 = (rng.random((4, 2, 1)) + 0.5).astype(np.float32)
	m.add("layers.1.mlp.experts.down_proj.weight", "F8_E4M3", c5)
	m.add("layers.1.mlp.experts.down_proj.weight_scale_inv", "F32", s5)
	m.logical["layers.1.mlp.experts.down_proj.weight"] = (
		"fp8-block", ["layers.1.mlp.experts.down_proj.weight",
			      "layers.1.mlp.experts.down_proj.weight_scale_inv"],
		np.stack([ref.fp8_block_ref(c5[e], s5[e], (128, 128))
			  for e in range(4)]))
	# a [5, 4] grid over 300 x 200, no config: 128 does not tile it,
	# the largest power of two that does is 64 (60 x 50 would too)
	c6 = rng.integers(0, 0x7e, (300, 200), dtype=np.uint8)
	s6 = (rng.random((5, 4)) + 0.5).astype(np.float32)
	m.add("layers.2.mlp.up_proj.weight", "F8_E4M3", c6)
	m.add("layers.2.mlp.up_proj.weight_scale_inv", "F32", s6)
	m.logical["layers.2.mlp.up_proj.weight"] = (
		"fp8-block", ["layers.2.mlp.up_proj.weight",
			      "layers.2.mlp.up_proj.weight_scale_inv"],
		ref.fp8_block_ref(c6, s6, (64, 64)))
	# a scale grid that no block tiles (129 rows of scales over 130
	# rows: no block gives ceil(130 / b) = 129): left as stored
	m.add("layers.0.attn.v_proj.weight", "F8_E4M3",
	      np.full((130, 70), 0x38, np.uint8))
	m.add("layers.0.attn.v_proj.weight_scale_inv", "F32",
	      np.ones((129, 2), np.float32))
	m.refused.append("layers.0.attn.v_proj.weight")
	m.add("layers.0.norm.weight", "F32",
	      rng.standard_normal(300).astype(np.float32))
	# the same grid, told by config.json: blocks of 64 x 64
	cfg = Model("fp8cfg")
	c4 = rng.integers(0, 0x7e, (130, 70), dtype=np.uint8)
	s4 = (rng.random((3, 2)) + 0.5).astype(np.float32)
	cfg.add("w.weight", "F8_E4M3", c4)
	cfg.add("w.weight_scale_inv", "F32", s4)
	cfg.logical["w.weight"] = ("fp8-block", ["w.weight",
						 "w.weight_scale_inv"],
				   ref.fp8_block_ref(c4, s4, (64, 64)))
	cfg.config["config.json"] = {"quantization_config": {
		"quant_method": "fp8", "weight_block_size": [64, 64]}}
	# a config's block that does not tile the grid: refused, not
	# replaced by one that does
	c128 = Model("fp8cfg128")
	c128.add("u.weight", "F8_E4M3", np.full((300, 200), 0x38, np.uint8))
	c128.add("u.weight_scale_inv", "F32", np.ones((5, 4), np.float32))
	c128.refused.append("u.weight")
	c128.why = ("u.weight: config.json's weight_block_size [128, 128] "
		    "does not tile its scale grid [5, 4] over [300, 200]")
	c128.config["config.json"] = {"quantization_config": {
		"quant_method": "fp8", "weight_block_size": [128, 128]}}
	return [m, cfg, c128]


def mxfp4_model(rng):
	m = Model("mxfp4")
	blocks = rng.integers(0, 256, (2, 40, 3, 16), dtype=np.uint8)
	scales = rng.integers(110, 140, (2, 40, 3), dtype=np.uint8)
	scales[0, 0, 0] = 0		# 2^-127
	scales[1, 3, 2] = 255		# 2^128: infinite
	scales[1, 5, 1] = 254
	p = "model.layers.0.mlp.experts."
	m.add(p + "gate_up_proj_blocks", "U8", blocks)
	m.add(p + "gate_up_proj_scales", "U8", scales)
	m.add(p + "gate_up_proj_bias", "F32", np.zeros((2, 40), np.float32))
	m.logical[p + "gate_up_proj"] = (
		"mxfp4", [p + "gate_up_proj_blocks", p + "gate_up_proj_scales"],
		ref.mxfp4_ref(blocks, scales))
	# 2048 rows of 40 blocks: several tiles (of 1024 rows c) per expert
	blocks = rng.integers(0, 256, (1, 2048, 40, 16), dtype=np.uint8)
	scales = rng.integers(115, 135, (1, 2048, 40), dtype=np.uint8)
	m.add(p + "down_proj_blocks", "U8", blocks)
	m.add(p + "down_proj_scales", "U8", scales)
	m.logical[p + "down_proj"] = (
		"mxfp4", [p + "down_proj_blocks", p + "down_proj_scales"],
		ref.mxfp4_ref(blocks, scales))
	return m


def gptq_layer(m, rng, prefix, n_in, n_out, bits, group, act_order, v1,
	       with_gidx=True):
	maxq = (1 << bits) - 1
	groups = -(-n_in // group)
	q = rng.integers(0, maxq + 1, (n_in, n_out))
	z = rng.integers(0, maxq + 1, (groups, n_out))
	z[0, :3] = 0		# v1 stores 0 - 1: AutoGPTQ reads it as 2^bits
	scales = (rng.random((groups, n_out)) * 0.02 + 0.001).astype(np.float16)
	if act_order:
		g_idx = (rng.permutation(n_in) // group).astype(np.int32)
	else:
		g_idx = (np.arange(n_in) // group).astype(np.int32)
	qweight, qzeros = ref.gptq_pack(q, z, bits, v1)
	m.add(prefix + "qweight", "I32", qweight)
	m.add(prefix + "qzeros", "I32", qzeros)
	m.add(prefix + "scales", "F16", scales.view(np.uint16))
	parts = [prefix + "qweight", prefix + "qzeros", prefix + "scales"]
	if with_gidx:
		m.add(prefix + "g_idx", "I32", g_idx)
		parts.append(prefix + "g_idx")
	m.add(prefix + "bias", "F16", np.zeros(n_out, np.float16).view(np.uint16))
	m.logical[prefix + "weight"] = (
		"gptq", parts, ref.gptq_ref(qweight, qzeros, scales, g_idx, bits,
					    v1))


def gptq_models(rng):
	m = Model("gptq")
	# 4 bits, act-order, 160 inputs in groups of 128 (the last cut)
	gptq_layer(m, rng, "l.0.q_proj.", 160, 72, 4, 128, True, True)
	gptq_layer(m, rng, "l.0.k_proj.", 64, 32, 3, 32, False, True)
	gptq_layer(m, rng, "l.0.v_proj.", 48, 16, 2, 16, True, True)
	# 40,000 outputs: tiles of 32,768 rows, the second one cut
	gptq_layer(m, rng, "l.0.up_proj.", 64, 40000, 4, 32, True, True)
	# 3 bytes: the logical tensors after it in a virtual file start at
	# odd offsets (a BF16 one is then read from inside an element)
	m.add("l.0.step", "U8", np.array([1, 2, 3], np.uint8))
	# GPTQModel's v2 zero points, 8 bits: quantize_config.json says so
	v2 = Model("gptqv2")
	gptq_layer(v2, rng, "l.0.o_proj.", 96, 40, 8, 32, False, False, False)
	v2.config["quantize_config.json"] = {
		"bits": 8, "group_size": 32, "desc_act": False,
		"checkpoint_format": "gptq_v2", "quant_method": "gptq"}
	return [m, v2]


def awq_model(rng):
	m = Model("awq")
	n_in, n_out, group = 192, 40, 64
	groups = n_in // group
	q = rng.integers(0, 16, (n_in, n_out))
	z = rng.integers(0, 16, (groups, n_out))
	scales = (rng.random((groups, n_out)) * 0.02 + 0.001).astype(np.float16)
	qweight = ref.awq_pack_cols(q)
	qzeros = ref.awq_pack_cols(z)
	p = "model.layers.0.mlp.up_proj."
	m.add(p + "qweight", "I32", qweight)
	m.add(p + "qzeros", "I32", qzeros)
	m.add(p + "scales", "F16", scales.view(np.uint16))
	want = ref.awq_ref(qweight, qzeros, scales, group)
	m.logical[p + "weight"] = ("awq", [p + "qweight", p + "qzeros",
					   p + "scales"], want)
	# the original the AWQ weight came from, for --diff
	m.orig = {p + "weight": (want + rng.standard_normal(want.shape) *
				 0.001).astype(np.float16)}
	return m


def bnb_model(rng):
	m = Model("bnb")
	# NF4, 13 x 21 = 273 values in blocks of 64 (the last one short)
	shape = (13, 21)
	n = 273
	codes = rng.integers(0, 16, n)
	absmax = (rng.random(-(-n // 64)) + 0.1).astype(np.float32)
	p = "model.layers.0.self_attn.q_proj.weight"
	m.add(p, "U8", ref.bnb_pack(codes))
	m.add(p + ".absmax", "F32", absmax)
	m.add(p + ".quant_map", "F32", ref.bnb_table("nf4"))
	m.add(p + ".quant_state.bitsandbytes__nf4", "U8",
	      ref.bnb_state("nf4", 64, shape))
	m.logical[p] = ("bnb-nf4", [p, p + ".absmax", p + ".quant_map",
				    p + ".quant_state.bitsandbytes__nf4"],
			ref.bnb_ref(ref.bnb_pack(codes), absmax,
				    ref.bnb_table("nf4"), 64, shape))
	# FP4 with nested absmax: 40 x 70 in blocks of 16, nested by 32
	shape = (40, 70)
	n = 2800
	nb = n // 16
	codes = rng.integers(0, 16, n)
	qa = rng.integers(0, 256, nb).astype(np.uint8)
	nab = (rng.random(-(-nb // 32)) + 0.5).astype(np.float32)
	code2 = np.linspace(-1, 1, 256).astype(np.float32)
	offset = float(np.float32(0.0625))
	p = "model.layers.0.mlp.down_proj.weight"
	m.add(p, "U8", ref.bnb_pack(codes))
	m.add(p + ".absmax", "U8", qa)
	m.add(p + ".quant_map", "F32", ref.bnb_table("fp4"))
	m.add(p + ".nested_absmax", "F32", nab)
	m.add(p + ".nested_quant_map", "F32", code2)
	m.add(p + ".quant_state.bitsandbytes__fp4", "U8",
	      ref.bnb_state("fp4", 16, shape, (32, offset)))
	absmax = ref.bnb_nested_absmax(qa, nab, code2, 32, offset)
	m.logical[p] = ("bnb-fp4", [p, p + ".absmax", p + ".quant_map",
				    p + ".quant_state.bitsandbytes__fp4",
				    p + ".nested_absmax",
				    p + ".nested_quant_map"],
			ref.bnb_ref(ref.bnb_pack(codes), absmax,
				    ref.bnb_table("fp4"), 16, shape))
	return m


def ct_layer(m, rng, prefix, n_out, n_in, bits, group, sdtype, asym=False,
	     actorder=False):
	"""compressed-tensors pack-quantized: M.weight_packed, _scale,
	_zero_point (asym), _g_idx (actorder), _shape.  group None: one
	scale per output channel."""
	lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
	gs = group or n_in
	groups = -(-n_in // gs)
	q = rng.integers(lo, hi + 1, (n_out, n_in))
	q[0, :2] = [lo, hi]
	scale = torch.tensor(rng.random((n_out, groups)) * 0.02 + 0.001,
			     dtype=sdtype)
	name = prefix + "weight"
	st = "BF16" if sdtype == torch.bfloat16 else "F16"
	m.add(name + "_packed", "I32", ref.ct_pack(q, bits))
	m.add(name + "_scale", st, scale.view(torch.int16).numpy().view(
		np.uint16))
	parts = [name + "_packed", name + "_scale", name + "_shape"]
	zp = g_idx = None
	if asym:
		z = rng.integers(lo, hi + 1, (n_out, groups))
		z[0, 0], z[1, 0] = lo, hi
		zp = ref.ct_pack(z, bits, dim=0)
		m.add(name + "_zero_point", "I32", zp)
		parts.append(name + "_zero_point")
	if actorder:
		g_idx = (rng.permutation(n_in) // gs).astype(np.int32)
		m.add(name + "_g_idx", "I32", g_idx)
		parts.append(name + "_g_idx")
	m.add(name + "_shape", "I64", np.array([n_out, n_in], np.int64))
	m.logical[name] = ("pack-quantized", parts,
			   ref.ct_ref(m.tensors[name + "_packed"][2], scale,
				      (n_out, n_in), bits, group, zp, g_idx))


def ct_config(bits, group, symmetric, actorder=None):
	return {"quantization_config": {
		"quant_method": "compressed-tensors", "format": "pack-quantized",
		"config_groups": {"group_0": {"targets": ["Linear"], "weights": {
			"num_bits": bits, "type": "int", "symmetric": symmetric,
			"strategy": "group" if group else "channel",
			"group_size": group, "actorder": actorder}}},
		"ignore": ["lm_head"]}}


def ct_models(rng):
	"""W4A16 symmetric (one layer with actorder's g_idx), W4 with zero
	points, W8A16 per channel; odd sizes cut the packing and the groups."""
	bf = torch.bfloat16
	w4 = Model("ct-w4")
	ct_layer(w4, rng, "l.0.q_proj.", 72, 160, 4, 64, bf)
	ct_layer(w4, rng, "l.0.k_proj.", 40, 128, 4, 64, bf, actorder=True)
	w4.add("l.0.norm.weight", "F32", np.ones(8, np.float32))
	w4.config["config.json"] = ct_config(4, 64, True, "group")
	asym = Model("ct-w4-asym")
	ct_layer(asym, rng, "l.0.q_proj.", 45, 96, 4, 32, torch.float16,
		 asym=True)
	# 33,000 rows of 64: two tiles, the second's zero points from a
	# word in the middle
	ct_layer(asym, rng, "l.0.up_proj.", 33000, 64, 4, 32, torch.float16,
		 asym=True, actorder=True)
	# no zero point beside a config that says asymmetric: refused
	p = "l.1.o_proj.weight"
	asym.add(p + "_packed", "I32", np.zeros((8, 8), np.int32))
	asym.add(p + "_scale", "F16", np.zeros((8, 1), np.uint16))
	asym.add(p + "_shape", "I64", np.array([8, 60], np.int64))
	asym.refused.append(p + "_packed")
	asym.kept[p + "_packed"] = p + "_scale"
	asym.why = (p + "_packed: compressed-tensors pack-quantized: "
		    "config.json says symmetric false but there is no "
		    "weight_zero_point")
	asym.config["config.json"] = ct_config(4, 32, False, "group")
	w8 = Model("ct-w8")
	ct_layer(w8, rng, "l.0.q_proj.", 33, 50, 8, None, bf)
	ct_layer(w8, rng, "l.0.v_proj.", 64, 40, 8, None, torch.float16)
	w8.config["config.json"] = ct_config(8, None, True)
	return [w4, asym, w8]


def nvfp4_codes(rng, rows, cols):
	"""Random codes and their block scales: [rows, cols] 4-bit codes
	(every one), [rows, ceil(cols / 16)] F8_E4M3 codes (normal ones, a
	zero, a NaN)."""
	codes = rng.integers(0, 16, (rows, cols))
	scales = rng.integers(0x20, 0x70, (rows, -(-cols // 16))).astype(
		np.uint8)
	return codes, scales


def nvfp4_models(rng):
	"""compressed-tensors (the global scale divides) and ModelOpt (it
	multiplies), odd row counts, a row of 8 (one block, cut), one
	weight of several tiles."""
	m = Model("nvfp4")
	for p, rows, cols in (("model.layers.0.mlp.up_proj.", 37, 48),
			      ("model.layers.0.mlp.gate_proj.", 5, 8),
			      ("model.layers.0.mlp.down_proj.", 600, 1024)):
		codes, sc = nvfp4_codes(rng, rows, cols)
		sc[0, 0] = 0			# a zero block scale
		sc[-1, -1] = 0x7f		# a NaN one
		g = np.array([2.7183], np.float32)
		packed = ref.nvfp4_pack(codes)
		m.add(p + "weight_packed", "U8", packed)
		m.add(p + "weight_scale", "F8_E4M3", sc)
		m.add(p + "weight_global_scale", "F32", g)
		m.add(p + "input_global_scale", "F32", np.array([3.0],
								 np.float32))
		m.logical[p + "weight"] = (
			"nvfp4", [p + "weight_packed", p + "weight_scale",
				  p + "weight_global_scale"],
			ref.nvfp4_ref(packed, sc, g, False))
	mo = Model("nvfp4mo")
	p = "model.layers.0.self_attn.o_proj."
	codes, sc = nvfp4_codes(rng, 33, 32)
	g2 = np.array(0.0123, np.float32)		# a scalar: shape []
	packed = ref.nvfp4_pack(codes)
	mo.add(p + "weight", "U8", packed)
	mo.add(p + "weight_scale", "F8_E4M3", sc)
	mo.add(p + "weight_scale_2", "F32", g2)
	mo.add(p + "input_scale", "F32", np.array(0.5, np.float32))
	mo.logical[p + "weight"] = (
		"nvfp4-modelopt", [p + "weight", p + "weight_scale",
				   p + "weight_scale_2"],
		ref.nvfp4_ref(packed, sc, g2, True))
	return [m, mo]


def write(m, root):
	d = os.path.join(root, m.name)
	os.makedirs(d)
	path = os.path.join(d, "model.safetensors")
	lay = gen.write_safetensors(path, {k: (v[0], v[1], v[2]) for k, v in
					   m.tensors.items()})
	m.path = path
	m.layout = lay
	for f, obj in m.config.items():
		with open(os.path.join(d, f), "w") as fh:
			json.dump(obj, fh)


def stored_bytes(m, name):
	for n, _, _, b, e in m.layout.entries:
		if n == name:
			with open(m.path, "rb") as f:
				f.seek(m.layout.data_start + b)
				return f.read(e - b)
	raise KeyError(name)


def read(path):
	with open(path, "rb") as f:
		return f.read()


WHY_NONE = ("no config.json with a quantization_config nor "
	    "quantize_config.json beside the model")


def assumed(m, scheme, q):
	"""What the sidecar of a weight of m must say it assumed: the
	settings that change values and that only a config tells."""
	if m.config:
		return None
	what = {"gptq": "checkpoint_format gptq (v1)",
		"fp8-block": "block %r" % q.get("block"),
		"awq": "group_size %r" % q.get("group_size")}.get(scheme)
	return what and what + ": " + WHY_NONE


def check_model(t, m, mnt):
	d = os.path.join(mnt, m.name)
	# stored tensors, byte for byte
	for name in m.tensors:
		t.check(read(os.path.join(d, name)) == stored_bytes(m, name),
			"%s/%s: the stored bytes" % (m.name, name))
	parts = {p for v in m.logical.values() for p in v[1]}
	want = sorted((set(m.tensors) - parts - set(m.refused)) | set(m.logical))
	# the mount's own summary says where the values are (ls -a does not)
	q = json.loads(read(os.path.join(d, "__summary__.json"))).get(
		"quantization", {})
	schemes = {}
	for v in m.logical.values():
		schemes[v[0]] = schemes.get(v[0], 0) + 1
	told = {k: q.pop(k) for k in ("assumed", "assumed_why") if k in q}
	t.eq(q, {"dequant": ".dequant/", "weights": len(m.logical),
		 "schemes": schemes, "refused": len(m.refused)},
	     "%s/__summary__.json: its quantization" % m.name)
	t.check(os.path.isdir(os.path.join(d, q.get("dequant", "?"))),
		"%s: the summary's dequant is a directory" % m.name)
	dq = os.path.join(d, ".dequant")
	got = sorted(f for f in os.listdir(dq) if not f.endswith(".json"))
	t.eq(got, want, "%s/.dequant/: its tensors" % m.name)
	for name, (scheme, plist, want_v) in m.logical.items():
		what = "%s/%s" % (m.name, name)
		raw = np.frombuffer(read(os.path.join(dq, name)), dtype="<f4")
		t.check(same(raw.reshape(want_v.shape), want_v),
			"%s: .dequant/ values equal the reference" % what)
		a = np.load(os.path.join(dq, ".npy", name + ".npy"))
		t.check(a.dtype == np.float32 and same(a, want_v),
			"%s: .dequant/.npy equals the reference" % what)
		side = json.loads(read(os.path.join(dq, name + ".json")))
		q = side.get("quantization", {})
		t.eq((side["dtype"], side["shape"], q.get("scheme"),
		      sorted(q.get("parts", {}).values())),
		     ("F32", list(want_v.shape), scheme, sorted(plist)),
		     "%s: sidecar" % what)
		t.eq(q.get("assumed"), assumed(m, scheme, q), "%s: the "
		     "sidecar says what no config told" % what)
		if q.get("assumed"):
			k = q["assumed"].split(": ")[0]
			m.assumed[k] = m.assumed.get(k, 0) + 1
		if name in m.tensors:
			a = np.load(os.path.join(d, ".npy", name + ".npy"))
			t.check(same(a, want_v), "%s: .npy/ of the stored name "
				"holds the logical values" % what)
			st = json.loads(read(os.path.join(d, ".stats",
							  name + ".json")))
			fin = want_v[np.isfinite(want_v)].astype(np.float64)
			t.check(st["min"] == fin.min() and st["max"] == fin.max()
				and st["nan"] == int(np.isnan(want_v).sum()),
				"%s: .stats/ over the logical values: %r" %
				(what, {k: st[k] for k in ("min", "max", "nan")}))
	# the mount's summary counts the weights per assumption, as their
	# sidecars say them (before .dequant/ is built: no g_idx read)
	t.eq(told, {"assumed": m.assumed, "assumed_why": WHY_NONE}
	     if m.assumed else {}, "%s/__summary__.json: what was assumed"
	     % m.name)
	for name in m.refused:
		t.check(name not in m.logical and
			os.path.exists(os.path.join(dq, m.kept.get(
				name, name + "_scale_inv"))),
			"%s/%s: refused, its parts kept" % (m.name, name))
		t.check(not os.path.exists(os.path.join(dq, name)) and
			not os.path.exists(os.path.join(dq, ".npy",
							name + ".npy")),
			"%s/%s: refused, no file of its codes in .dequant/ "
			"(nor their .npy/ without the scales)" % (m.name, name))
	if m.refused:
		summ = json.loads(read(os.path.join(dq, "__summary__.json")))
		q = summ.get("quantization", {})
		t.check(q.get("refused") == len(m.refused) and
			any(r.startswith(m.refused[0] + ": ")
			    for r in q.get("refused_list", [])),
			"%s: the summary says why: %r" % (m.name, q))
		if getattr(m, "why", None):
			t.eq(q.get("refused_list"), [m.why],
			     "%s: the reason" % m.name)
	check_merged(t, m, os.path.join(dq, ".safetensors",
					"model.safetensors"))
	check_bf16(t, m, os.path.join(dq, ".safetensors"))


def load_st(path):
	"""A safetensors file's header and data section."""
	with open(path, "rb") as f:
		n = struct.unpack("<Q", f.read(8))[0]
		return json.loads(f.read(n)), f.read()


def check_bf16(t, m, vst):
	"""bf16/model.safetensors: the logical tensors as torch's
	.to(torch.bfloat16) rounds the float32 values (NaN any NaN), every
	other tensor's bytes as in the F32 file."""
	t.eq(sorted(os.listdir(os.path.join(vst, "bf16"))),
	     ["model.safetensors"], "%s: .dequant/.safetensors/bf16/" % m.name)
	h32, d32 = load_st(os.path.join(vst, "model.safetensors"))
	h16, d16 = load_st(os.path.join(vst, "bf16", "model.safetensors"))
	t.eq(list(h16), list(h32), "%s: bf16/: the same tensors" % m.name)
	for name, e in h32.items():
		e16 = h16.get(name, {})
		if name == "__metadata__" or not e16:
			continue
		b16 = d16[slice(*e16["data_offsets"])]
		if name not in m.logical:
			t.check(e16["dtype"] == e["dtype"] and
				b16 == d32[slice(*e["data_offsets"])],
				"%s: bf16/: %s as stored" % (m.name, name))
			continue
		want_v = m.logical[name][2]
		ref = torch.tensor(want_v.astype(np.float32)).to(
			torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
		got = np.frombuffer(b16, dtype="<u2")
		nan = np.isnan(want_v).ravel()
		same_bits = got.size == nan.size and bool(
			(got[~nan] == ref.ravel()[~nan]).all() and
			((got[nan] & 0x7fff) > 0x7f80).all())
		t.check(e16["dtype"] == "BF16" and e16["shape"] == e["shape"]
			and same_bits, "%s: bf16/: %s is torch's BF16 of the "
			"values" % (m.name, name))


def check_merged(t, m, path):
	hdr, data = load_st(path)
	for name, (_, plist, want_v) in m.logical.items():
		e = hdr.get(name, {})
		b, end = e.get("data_offsets", (0, 0))
		v = np.frombuffer(data[b:end], dtype="<f4")
		t.check(e.get("dtype") == "F32" and
			same(v.reshape(want_v.shape), want_v),
			"%s: .dequant/.safetensors: %s as F32" % (m.name, name))
		for p in plist:
			t.check(p == name or p not in hdr,
				"%s: .dequant/.safetensors leaves %s out"
				% (m.name, p))


def inspect(args):
	return harness.run([harness.STFS_INSPECT] + args, timeout=120)


def assumed_lines(out, lead):
	"""The lines of out (bytes) that say what was assumed."""
	return sorted(x for x in out.decode().splitlines()
		      if x.startswith(lead + "assumed:"))


def check_assumed(t, fp8, cfg):
	"""The summary's text, --stats and --merge --dequant say, once per
	setting, what the weights took without a config (as the sidecars
	say it); nothing for a model whose config tells its block."""
	for m in (fp8, cfg):
		def want(lead, pad):
			return sorted("%sassumed:%s%s for %d weight%s (%s)" %
				      (lead, pad, k, n, "" if n == 1 else "s",
				       WHY_NONE) for k, n in m.assumed.items())
		t.eq(bool(m.assumed), m is fp8, "%s: assumed %r" %
		     (m.name, m.assumed))
		for args in ([], ["--dequant"]):
			r = inspect(args + [m.path])
			t.eq(assumed_lines(r.stdout, ""), want("", "     "),
			     "stfs-inspect %s%s: the assumed lines" %
			     (" ".join(args), m.name))
		r = inspect(["--stats", m.path])
		t.eq(assumed_lines(r.stdout, ""), want("", " "),
		     "--stats %s: the assumed lines" % m.name)
		r = inspect(["--stats", "--json", m.path])
		got = json.loads(r.stdout).get("assumed")
		t.eq(got, [{"dir": "", "assumed": m.assumed,
			    "assumed_why": WHY_NONE}] if m.assumed else [],
		     "--stats --json %s: what was assumed" % m.name)
		r = inspect(["--merge", "--dequant", m.path, "-o", "-"])
		t.eq(assumed_lines(r.stderr, "stfs-inspect: "),
		     want("stfs-inspect: ", " "), "--merge --dequant %s: the "
		     "assumed lines on stderr: %r" % (m.name, r.stderr))
		n = struct.unpack("<Q", r.stdout[:8])[0]
		hdr = json.loads(r.stdout[8:8 + n])
		end = max(v["data_offsets"][1] for k, v in hdr.items()
			  if k != "__metadata__")
		t.check(len(r.stdout) == 8 + n + end and
			set(m.logical) <= set(hdr),
			"--merge --dequant %s -o -: stdout is the file alone" %
			m.name)
		# the stored tensors written: nothing of theirs was assumed
		r = inspect(["--merge", m.path, "-o", "-"])
		t.eq(assumed_lines(r.stderr, "stfs-inspect: "), [],
		     "--merge %s: stored tensors, nothing assumed" % m.name)
	# --extract: the weights it writes only (layers.2: the one of 64)
	r = inspect(["--merge", "--dequant", "--extract", "layers.2",
		     fp8.path, "-o", "-"])
	t.eq(assumed_lines(r.stderr, "stfs-inspect: "),
	     ["stfs-inspect: assumed: block [64, 64] for 1 weight (%s)" %
	      WHY_NONE], "--extract layers.2: its weight's assumption")


def check_inspect(t, fp8, awq, root):
	# the summary's text says where the values are; --help too
	r = inspect([fp8.path])
	t.check(b"quantized:   %d weights (" % len(fp8.logical) in r.stdout and
		b"stfs-inspect --dequant, a mount's .dequant/" in r.stdout,
		"stfs-inspect: the quantized: line: %r" % r.stdout[-300:])
	r = harness.run([harness.STFS, "--help"], timeout=30)
	t.check(b"  .dequant/ " in r.stdout, "stfs --help lists .dequant/")
	# --stats: the logical values
	r = inspect(["--stats", "--json", fp8.path])
	st = {o["name"]: o for o in json.loads(r.stdout)["tensors"]}
	for name, (_, _, want_v) in fp8.logical.items():
		fin = want_v[np.isfinite(want_v)].astype(np.float64)
		o = st.get(name, {})
		t.check(o.get("dtype") == "F32" and o.get("min") == fin.min()
			and o.get("max") == fin.max(),
			"--stats %s: %r" % (name, o))
	t.check("layers.0.mlp.down_proj.weight_scale_inv" not in st,
		"--stats: parts are not listed")
	r = inspect(["--stats", "--json", "--no-dequant", fp8.path])
	st = {o["name"]: o for o in json.loads(r.stdout)["tensors"]}
	t.eq(st.get("layers.0.mlp.down_proj.weight", {}).get("dtype"),
	     "F8_E4M3", "--stats --no-dequant: the stored tensor")
	# --diff against the originals: per-tensor error
	for m in (fp8, awq):
		orig = os.path.join(root, m.name + "-orig.safetensors")
		tens = {}
		for name, v in m.orig.items():
			dt = "F16" if v.dtype == np.float16 else "F32"
			tens[name] = (dt, list(v.shape),
				      v.view(np.uint16) if dt == "F16" else v)
		gen.write_safetensors(orig, tens)
		r = inspect(["--diff", "--json", m.path, orig])
		t.eq(r.returncode, 1, "--diff %s: different" % m.name)
		out = json.loads(r.stdout)
		ch = {c["name"]: c for c in out["changed"]}
		for name, v in m.orig.items():
			want_v = m.logical[name][2].astype(np.float64)
			d = want_v - v.astype(np.float64)
			err = ch.get(name, {}).get("error", {})
			rms = np.sqrt((d * d).mean())
			t.check(err.get("max_abs") == np.abs(d).max() and
				abs(err.get("rms", 0) - rms) <= 1e-12 * rms and
				err.get("values") == d.size,
				"--diff %s: %s error %r, want max %r rms %r" %
				(m.name, name, err, np.abs(d).max(), rms))
		r = inspect(["--diff", m.path, orig])
		for name in m.orig:
			t.check(any(line.split(": ")[1:2] == [name] and
				    "max |a-b|" in line
				    for line in r.stdout.decode().splitlines()),
				"--diff %s: %s's error in the text output: %r"
				% (m.name, name, r.stdout[-400:]))


def check_remote(t, src, fp8, cfg):
	"""Over http:// a model is recognised from its tensors alone: the
	FP8 weights show the same values; the block that config.json tells
	(fp8cfg) cannot be known there: the rule without a config (128, else
	the largest power of two that tiles the grid, here 64 as the config
	says) is taken, and each sidecar says so."""
	import httpd
	srv = httpd.Server(src)
	srv.start()
	block = {"layers.2.mlp.up_proj.weight": [64, 64], "w.weight": [64, 64]}
	try:
		for m in (fp8, cfg):
			url = srv.url(m.name + "/model.safetensors")
			with harness.Mount(t, url) as mnt:
				dq = os.path.join(mnt.path, ".dequant")
				for name, (scheme, _, want_v) in \
						m.logical.items():
					a = np.load(os.path.join(mnt.path, ".npy",
								 name + ".npy"))
					t.check(same(a, want_v), "http: %s's "
						"values" % name)
					side = json.loads(read(os.path.join(
						dq, name + ".json")))
					t.eq(side["quantization"].get("assumed"),
					     "block %r: a model named by its URL "
					     "has no folder to find config.json or "
					     "quantize_config.json in" %
					     block.get(name, [128, 128])
					     if scheme == "fp8-block" else None,
					     "http: %s: the block it took without "
					     "a config" % name)
	finally:
		srv.stop()


def hostile(t, root):
	"""Parts that lie about each other are refused with their reason, in
	bounded memory and time (ulimit -v, but for sanitizer builds, whose
	shadow memory needs more; a timeout)."""
	m = Model("hostile")
	st = ref.bnb_state("nf4", 64, [2**32 - 1] * 3)	# wraps 64 bits
	for p, state in (("a.weight", st),
			 ("b.weight", np.frombuffer(b"{not json", np.uint8))):
		m.add(p, "U8", np.zeros((8, 1), np.uint8))
		m.add(p + ".absmax", "F32", np.ones(1, np.float32))
		m.add(p + ".quant_map", "F32", ref.bnb_table("nf4"))
		m.add(p + ".quant_state.bitsandbytes__nf4", "U8", state)
	gptq_layer(m, np.random.default_rng(1), "c.", 64, 32, 4, 32, False,
		   True)
	bad = m.tensors["c.g_idx"][2].copy()
	bad[17] = 7			# a group that is not there
	m.add("c.g_idx", "I32", bad)
	# 2^24 + 32 inputs: a row longer than stfs computes whole
	m.add("d.qweight", "I32", np.zeros(((2**24 + 32) // 8, 1), np.int32))
	m.add("d.qzeros", "I32", np.zeros((1, 1), np.int32))
	m.add("d.scales", "F16", np.zeros((1, 1), np.uint16))
	# NVFP4 whose global scale is two values
	m.add("e.weight_packed", "U8", np.zeros((4, 8), np.uint8))
	m.add("e.weight_scale", "F8_E4M3", np.full((4, 1), 0x38, np.uint8))
	m.add("e.weight_global_scale", "F32", np.ones(2, np.float32))
	# a quant_state whose shape is not its codes' (8 bytes: 16 values)
	m.add("f.weight", "U8", np.zeros((8, 1), np.uint8))
	m.add("f.weight.absmax", "F32", np.ones(1, np.float32))
	m.add("f.weight.quant_map", "F32", ref.bnb_table("nf4"))
	m.add("f.weight.quant_state.bitsandbytes__nf4", "U8",
	      ref.bnb_state("nf4", 64, [4, 8]))
	# compressed-tensors: scales of no groups beside a g_idx (nothing
	# to divide by); a weight_shape that is not positive
	m.add("h.weight_packed", "I32", np.zeros((4, 1), np.int32))
	m.add("h.weight_scale", "F16", np.zeros((4, 0), np.uint16))
	m.add("h.weight_g_idx", "I32", np.zeros(8, np.int32))
	m.add("h.weight_shape", "I64", np.array([4, 8], np.int64))
	m.add("i.weight_packed", "I32", np.zeros((4, 1), np.int32))
	m.add("i.weight_scale", "F16", np.zeros((4, 1), np.uint16))
	m.add("i.weight_shape", "I64", np.array([4, -8], np.int64))
	m.config["quantize_config.json"] = {"bits": 4}	# one output: say it
	write(m, root)
	# a qweight that fits neither GPTQ nor AWQ beside a config naming
	# another method: the config is named as the cause, not the bits
	o = Model("othermethod")
	o.add("g.qweight", "I32", np.zeros((5, 12), np.int32))
	o.add("g.qzeros", "I32", np.zeros((1, 7), np.int32))
	o.add("g.scales", "F16", np.zeros((1, 12), np.uint16))
	o.config["config.json"] = {"quantization_config": {
		"quant_method": "bitsandbytes", "load_in_4bit": True}}
	write(o, root)
	r = harness.run([harness.STFS_INSPECT, "--json", "--dequant", o.path],
			timeout=120)
	got = json.loads(r.stdout or b"{}").get("quantization", {}).get(
		"refused_list", [])
	t.eq(got, ['g.qweight: config.json names quant_method "bitsandbytes", '
		   'not gptq or awq, whose qweight this looks like (as GPTQ or '
		   'AWQ: no bit width (2, 3, 4, 8) fits its shapes)'],
	     "a config naming another method: named as the cause")
	limit = "" if "ASAN_OPTIONS" in os.environ else "ulimit -v 1048576; "
	r = harness.run(["sh", "-c", limit + 'exec "$0" --json --dequant "$1"',
			 harness.STFS_INSPECT, m.path], timeout=120)
	t.eq(r.returncode, 0, "hostile: stfs-inspect --dequant: %r"
	     % r.stderr[-300:])
	q = json.loads(r.stdout or b"{}").get("quantization", {})
	got = sorted(q.get("refused_list", []))
	want = ["a.weight: its quant_state's shape is too large",
		"b.weight: its quant_state is not a JSON object",
		"c.qweight: its g_idx names a group that is not there",
		"d.qweight: its rows hold more than 16 Mi values",
		"e.weight_packed: its global scale is not one F32 value",
		"f.weight: its quant_state's shape does not match its packed "
		"codes (two codes a byte)",
		"h.weight_packed: compressed-tensors pack-quantized: its "
		"scales have no groups",
		"i.weight_packed: compressed-tensors pack-quantized: its "
		"weight_shape is not two positive integers (I64 or I32 [2])"]
	t.eq((q.get("weights"), got), (0, want), "hostile: refused, why")


def count_agrees(t, root):
	"""The count a mount's __summary__.json and stfs-inspect's quantized:
	line give without building .dequant/ reads compressed-tensors'
	weight_shape (16 bytes) as .dequant/ does: a weight_shape that does
	not fit refuses the weight in both, not only in .dequant/."""
	m = Model("ctshape")
	ct_layer(m, np.random.default_rng(2), "a.", 8, 64, 4, 32, torch.float16)
	for p, shape in (("i.", [4, -8]),	# not positive
			 ("j.", [4, 200]),	# no bit width fits 1 column
			 ("k.", [5, 8])):	# 5 rows, weight_packed has 4
		m.add(p + "weight_packed", "I32", np.zeros((4, 1), np.int32))
		m.add(p + "weight_scale", "F16", np.zeros((4, 1), np.uint16))
		m.add(p + "weight_shape", "I64", np.array(shape, np.int64))
	m.config["config.json"] = ct_config(4, 32, True, "group")
	write(m, root)
	got = []
	for args in ([], ["--dequant"]):
		r = inspect(["--json"] + args + [m.path])
		q = json.loads(r.stdout or b"{}").get("quantization", {})
		got.append((q.get("weights"), q.get("refused")))
	t.eq(got, [(1, 3), (1, 3)], "compressed-tensors with a weight_shape "
	     "that does not fit: counted as .dequant/ refuses it")
	r = inspect([m.path])
	t.check(b"quantized:   1 weights (pack-quantized 1), 3 refused" in
		r.stdout, "stfs-inspect: the count refuses them: %r" %
		r.stdout[-300:])


def many_assumed(t, root):
	"""17 FP8 weights, each with a block of its own taken without a
	config ([2^k, 128] for a [2^(k+1), 1] weight of a [2, 1] grid): the
	first 16 settings are said one by one, the rest as other settings,
	by the count and by .dequant/ alike; never a line per weight past
	them."""
	m = Model("fp8many")
	for k in range(1, 18):
		m.add("w%02d.weight" % k, "F8_E4M3",
		      np.full((2 << k, 1), 0x38, np.uint8))
		m.add("w%02d.weight_scale_inv" % k, "F32",
		      np.ones((2, 1), np.float32))
	write(m, root)
	want = {"block [%d, 128]" % (1 << k): 1 for k in range(1, 17)}
	want["other settings (each sidecar says which)"] = 1
	for args in ([], ["--dequant"]):
		r = inspect(["--json"] + args + [m.path])
		q = json.loads(r.stdout or b"{}").get("quantization", {})
		t.eq(q.get("assumed"), want, "fp8many%s: 16 settings and the "
		     "rest" % " ".join([""] + args))
	r = inspect([m.path])
	t.eq(len(assumed_lines(r.stdout, "")), 17, "fp8many: 17 lines")


def main(t):
	rng = np.random.default_rng(31)
	root = harness.tmpdir("quant")
	src = os.path.join(root, "models")
	models = fp8_models(rng) + [mxfp4_model(rng)] + gptq_models(rng) + \
		[awq_model(rng), bnb_model(rng)] + nvfp4_models(rng) + \
		ct_models(rng)
	for m in models:
		write(m, src)
	with harness.Mount(t, src) as mnt:
		for m in models:
			check_model(t, m, mnt.path)
		# a model without quantized weights has no .dequant/
		t.check(not os.path.exists(os.path.join(
			mnt.path, "fp8", ".dequant", ".dequant")),
			"the dequantized model has no .dequant/ of its own")
	by = {m.name: m for m in models}
	check_inspect(t, by["fp8"], by["awq"], root)
	check_assumed(t, by["fp8"], by["fp8cfg"])
	for n in ("ct-w4", "ct-w4-asym", "ct-w8"):
		r = inspect([by[n].path])
		line = [x for x in r.stdout.decode().splitlines()
			if x.startswith("quantized:")]
		t.check(line and ("%d weights (pack-quantized %d" %
				  (len(by[n].logical), len(by[n].logical)))
			in line[0], "stfs-inspect %s: %r" % (n, line))
	check_remote(t, src, by["fp8"], by["fp8cfg"])
	hostile(t, os.path.join(root, "bad"))
	count_agrees(t, os.path.join(root, "bad"))
	many_assumed(t, os.path.join(root, "bad"))


if __name__ == "__main__":
	harness.main("int-quant", main)
