"""quant_ref.py - quantized-weight schemes written from their published
definitions, for the tests: packers that build checkpoints the way each
library stores them, and dequantizers that compute what each reference
computes, with numpy and torch (1.13: no float8 dtypes, so FP8 codes are
decoded from the OCP definition here).  Nothing in here comes from
stfs's C code; tests/integration/test_quant.py compares the two.

  FP8 (DeepSeek-V3 weight_dequant, transformers' FP8 loader): the E4M3
      value in float32 times the block's float32 scale_inv.
  FP8 (compressed-tensors _dequantize): the value converted to the
      scale's dtype, times the scale, in that dtype.
  MXFP4 (transformers' convert_moe_packed_tensors): low nibble first,
      E2M1 lookup in bfloat16, torch.ldexp by (scale - 127), [E, R, 32 G]
      transposed to [E, 32 G, R].
  GPTQ (AutoGPTQ / GPTQModel dequantize_weight): values packed along the
      input, zeros along the output, 3 bits as a bit stream; v1 zeros +1;
      scales[g_idx] * (q - z[g_idx]) in float16; transposed to [out, in].
  AWQ (AutoAWQ dequantize_gemm): packed along the output in the order
      [0, 2, 4, 6, 1, 3, 5, 7]; (q - z) * scales in float16; transposed.
  bitsandbytes 4-bit (dequantize_4bit): element 2k in the high nibble;
      code[q] * absmax[block] in float32; nested absmax =
      code2[a] * nested_absmax[b // nested_blocksize] + offset.
  NVFP4 (compressed-tensors' NVFP4PackedCompressor, ModelOpt's
      NVFP4QTensor): element 2k in the low nibble; E2M1 value times the
      F8_E4M3 scale of its 16 values, the scale divided by the F32 global
      scale (compressed-tensors) or multiplied by it (ModelOpt), float32.
  compressed-tensors pack-quantized (pack_to_int32 / unpack_from_int32,
      dequantize): signed codes + 2^(bits-1), low bits first, packed
      along the input (zero points along the output); (q - zero_point) *
      scale in the scale's dtype, column i in group g_idx[i].
"""

import json

import numpy as np
import torch

# --- FP8 ----------------------------------------------------------------------


def fp8_table(kind):
	"""float64 values of the 256 codes of E4M3 ("fn": bias 7, S.1111.111
	NaN, no inf) or E5M2 (bias 15, IEEE specials)."""
	out = np.zeros(256)
	for c in range(256):
		s = -1.0 if c & 0x80 else 1.0
		if kind == "E4M3":
			e, m, bias, mb = (c >> 3) & 15, c & 7, 7, 3
			if e == 15 and m == 7:
				out[c] = np.nan
				continue
		else:
			e, m, bias, mb = (c >> 2) & 31, c & 3, 15, 2
			if e == 31:
				out[c] = s * np.inf if m == 0 else np.nan
				continue
		if e == 0:
			out[c] = s * (m / 2 ** mb) * 2.0 ** (1 - bias)
		else:
			out[c] = s * (1 + m / 2 ** mb) * 2.0 ** (e - bias)
	return out


def fp8_quantize(x, kind="E4M3"):
	"""Codes of the values nearest x (finite codes only)."""
	tab = fp8_table(kind)
	ok = np.flatnonzero(np.isfinite(tab))
	k = np.abs(x[..., None] - tab[ok][None, :]).argmin(-1)
	return ok[k].astype(np.uint8)


def fp8_block_ref(codes, scale_inv, block):
	"""DeepSeek's weight_dequant: float32 value times float32 scale."""
	r, c = codes.shape
	vals = fp8_table("E4M3")[codes].astype(np.float32)
	s = np.repeat(np.repeat(scale_inv, block[0], 0), block[1], 1)[:r, :c]
	return (torch.tensor(vals) * torch.tensor(s.astype(np.float32))).numpy()


def fp8_scaled_ref(codes, scale, kind="E4M3"):
	"""compressed-tensors: x_q.to(scale.dtype) * scale (a torch tensor
	that broadcasts: [1], [rows, 1], ...)."""
	vals = torch.tensor(fp8_table(kind)[codes].astype(np.float32))
	return (vals.to(scale.dtype) * scale).float().numpy()


# --- MXFP4 ---------------------------------------------------------------------

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
	-0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def mxfp4_ref(blocks, scales):
	"""blocks uint8 [E, R, G, 16], scales uint8 [E, R, G] -> float32
	[E, 32 G, R], through bfloat16 as transformers computes it."""
	b = torch.tensor(blocks.astype(np.int64))
	e = torch.tensor(scales.astype(np.int32)) - 127
	lut = torch.tensor(E2M1, dtype=torch.bfloat16)
	*prefix, g, nb = b.shape
	rows = int(np.prod(prefix)) * g
	b = b.reshape(rows, nb)
	e = e.reshape(rows, 1)
	out = torch.empty(rows, nb * 2, dtype=torch.bfloat16)
	out[:, 0::2] = lut[b & 15]
	out[:, 1::2] = lut[b >> 4]
	out = torch.ldexp(out, e)
	out = out.reshape(*prefix, g * nb * 2)
	return out.transpose(1, 2).contiguous().float().numpy()


# --- GPTQ and AWQ ------------------------------------------------------------------


def bit_stream(vals, bits):
	"""Integers [n, ...] (axis 0 packed) as little-endian 32-bit words:
	value j at bit j * bits of the stream, [n * bits / 32, ...]."""
	vals = np.asarray(vals, dtype=np.uint64)
	n = vals.shape[0]
	nw = (n * bits + 31) // 32
	words = np.zeros((nw,) + vals.shape[1:], dtype=np.uint64)
	for j in range(n):
		for b in range(bits):
			at = j * bits + b
			words[at // 32] |= ((vals[j] >> np.uint64(b)) & np.uint64(1)) \
				<< np.uint64(at % 32)
	return words.astype(np.uint32).view(np.int32)


def gptq_pack(q, zeros, bits, v1=True):
	"""q int [in, out], zeros int [groups, out] (the zero points):
	qweight [in * bits / 32, out], qzeros [groups, out * bits / 32]
	(v1 stores each zero minus one, masked to its bits)."""
	z = np.asarray(zeros, dtype=np.int64)
	if v1:
		z = (z - 1) & ((1 << bits) - 1)
	qweight = bit_stream(q, bits)
	qzeros = bit_stream(z.T, bits).T.copy()
	return qweight, qzeros


def unpack_stream(words, n, bits):
	"""The inverse of bit_stream along axis 0: n values."""
	w = np.asarray(words).view(np.uint32).astype(np.uint64)
	out = np.zeros((n,) + w.shape[1:], dtype=np.int64)
	for j in range(n):
		for b in range(bits):
			at = j * bits + b
			bit = (w[at // 32] >> np.uint64(at % 32)) & np.uint64(1)
			out[j] |= (bit << np.uint64(b)).astype(np.int64)
	return out


def gptq_ref(qweight, qzeros, scales, g_idx, bits, v1=True):
	"""AutoGPTQ/GPTQModel: scales[g_idx] * (q - z[g_idx]) in float16
	(scales a float16 array), as [out, in] float32."""
	n_in = len(g_idx)
	out = scales.shape[1]
	q = unpack_stream(qweight, n_in, bits)
	z = unpack_stream(qzeros.T.copy(), out, bits).T
	if v1:
		z = z + 1
	g = torch.tensor(np.asarray(g_idx, dtype=np.int64))
	w = torch.tensor(scales)[g] * (torch.tensor(q) -
				       torch.tensor(z)[g]).to(torch.int16)
	return w.T.contiguous().float().numpy()


AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


def awq_pack_cols(vals):
	"""Integers [rows, cols] (cols a multiple of 8) packed along the
	columns in AutoAWQ's order: [rows, cols / 8] int32."""
	v = np.asarray(vals, dtype=np.uint64)
	rows, cols = v.shape
	out = np.zeros((rows, cols // 8), dtype=np.uint64)
	for c in range(cols // 8):
		for k in range(8):
			out[:, c] |= v[:, 8 * c + AWQ_ORDER[k]] << np.uint64(4 * k)
	return out.astype(np.uint32).view(np.int32)


def awq_ref(qweight, qzeros, scales, group):
	"""AutoAWQ's dequantize_gemm, as [out, in] float32."""
	shifts = torch.arange(0, 32, 4)
	qw = torch.tensor(qweight.astype(np.int64))
	qz = torch.tensor(qzeros.astype(np.int64))
	iw = (qw[:, :, None] >> shifts[None, None, :]).reshape(qw.shape[0], -1)
	iz = (qz[:, :, None] >> shifts[None, None, :]).reshape(qz.shape[0], -1)
	rev = torch.arange(iz.shape[-1]).view(-1, 8)[:, [0, 4, 1, 5, 2, 6, 3,
						      7]].reshape(-1)
	iw = (iw[:, rev] & 15).to(torch.int8)
	iz = (iz[:, rev] & 15).to(torch.int8)
	s = torch.tensor(scales).repeat_interleave(group, dim=0)
	iz = iz.repeat_interleave(group, dim=0)
	out = scales.shape[1]
	w = (iw[:, :out] - iz[:iw.shape[0], :out]) * s[:iw.shape[0]]
	return w.T.contiguous().float().numpy()


# --- bitsandbytes --------------------------------------------------------------------

NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
       -0.28444138169288635, -0.18477343022823334, -0.09105003625154495,
       0.0, 0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
       0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
       0.7229568362236023, 1.0]
# the FP4 codes in bit-pattern order, normalized by their largest (12)
FP4 = [v / 12 for v in [0, 0.0625, 8.0, 12.0, 4.0, 6.0, 2.0, 3.0,
			-0.0, -0.0625, -8.0, -12.0, -4.0, -6.0, -2.0, -3.0]]


def bnb_table(kind):
	return np.array(NF4 if kind == "nf4" else FP4, dtype=np.float32)


def bnb_pack(codes):
	"""4-bit codes (a flat int array) two per byte, element 2k in the high
	nibble: [ceil(n / 2), 1] uint8."""
	c = np.asarray(codes, dtype=np.uint8).reshape(-1)
	if len(c) % 2:
		c = np.concatenate([c, np.zeros(1, np.uint8)])
	return ((c[0::2] << 4) | c[1::2]).reshape(-1, 1)


def bnb_state(kind, blocksize, shape, nested=None):
	"""The quant_state tensor: JSON as bitsandbytes' pack_dict_to_tensor
	writes it."""
	d = {"quant_type": kind, "blocksize": blocksize, "dtype": "bfloat16",
	     "shape": list(shape)}
	if nested:
		d.update({"nested_blocksize": nested[0], "nested_dtype": "float32",
			  "nested_offset": nested[1]})
	return np.frombuffer(json.dumps(d).encode("utf-8"), dtype=np.uint8)


def bnb_nested_absmax(q, nested_absmax, code2, nblock, offset):
	"""dequantize_blockwise of the absmax codes, then + offset (float32)."""
	a = torch.tensor(code2)[torch.tensor(q.astype(np.int64))]
	idx = torch.arange(len(q)) // nblock
	a = a * torch.tensor(nested_absmax)[idx]
	return (a + torch.tensor(np.float32(offset))).numpy()


def bnb_ref(packed, absmax, code, blocksize, shape):
	"""dequantize_4bit before its cast to the weight's dtype: float32."""
	p = torch.tensor(packed.reshape(-1).astype(np.int64))
	n = int(np.prod(shape))
	q = torch.empty(len(p) * 2, dtype=torch.int64)
	q[0::2] = p >> 4
	q[1::2] = p & 15
	v = torch.tensor(code)[q][:n]
	idx = torch.arange(n) // blocksize
	return (v * torch.tensor(absmax)[idx]).reshape(shape).numpy()


# --- NVFP4 ---------------------------------------------------------------------

def nvfp4_pack(codes):
	"""4-bit codes [rows, cols] (sign in bit 3) two to a byte, element 2k
	of a row in the low nibble (compressed-tensors' pack_fp4_to_uint8,
	ModelOpt's (q[..., 1::2] << 4) | q[..., 0::2]): [rows, cols / 2]."""
	c = np.asarray(codes, dtype=np.uint8)
	return (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)


def nvfp4_ref(packed, scale_codes, global_scale, modelopt):
	"""compressed-tensors' decompress_weight (unpack_fp4_from_uint8 to
	BF16, then _dequantize: scale.to(float32) / global, x_q.to(float32) *
	scale) or ModelOpt's NVFP4QTensor.dequantize (its e2m1_values table,
	scale.to(float32) * double_scale, times the unpacked values), both
	before their cast to the model's dtype: float32 [rows, cols]."""
	p = torch.tensor(packed.astype(np.int64))
	rows, half = p.shape
	q = torch.empty(rows, half * 2, dtype=torch.int64)
	q[:, 0::2] = p & 0x0F
	q[:, 1::2] = p >> 4
	s = torch.tensor(fp8_table("E4M3")[scale_codes].astype(np.float32))
	g = torch.tensor(np.asarray(global_scale, np.float32).reshape(-1))
	if modelopt:
		table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6,
				      0, -0.5, -1, -1.5, -2, -3, -4, -6])
		vals = table[q]
		s = s * g
	else:
		mag = torch.tensor(E2M1[:8])[q & 7]
		vals = (mag * torch.where((q & 8) != 0, -1.0, 1.0)).to(
			torch.bfloat16).to(torch.float32)
		s = s / g
	s = s.repeat_interleave(16, dim=1)[:, :half * 2]
	return (vals * s).numpy()


# --- compressed-tensors pack-quantized ------------------------------------
# From compressed-tensors' pack_to_int32 / unpack_from_int32 and its
# dequantize: signed codes are stored plus 2^(bits - 1), 32 // bits of them
# per int32 word, the first in the lowest bits, along the input for the
# weight (packed_dim 1) and along the output for zero points (packed_dim
# 0); the value is (q - zero_point) * scale computed in the scale's dtype,
# column i taking group g_idx[i] (or i // group_size).

def ct_pack(vals, bits, dim=1):
	"""Signed int codes [rows, cols] packed into int32 along dim."""
	v = np.asarray(vals, dtype=np.int64) + (1 << (bits - 1))
	assert v.min() >= 0 and v.max() < (1 << bits)
	if dim == 0:
		v = v.T
	pf = 32 // bits
	rows, cols = v.shape
	pad = -cols % pf
	v = np.pad(v, ((0, 0), (0, pad))).reshape(rows, -1, pf)
	words = (v << (np.arange(pf) * bits)).sum(axis=2)
	words = words.astype(np.uint64).astype(np.uint32).view(np.int32)
	return np.ascontiguousarray(words.T if dim == 0 else words)


def ct_unpack(words, bits, n, dim=1):
	"""unpack_from_int32: the signed codes, n along the packed dim."""
	w = np.asarray(words, dtype=np.int32).view(np.uint32).astype(np.int64)
	if dim == 0:
		w = w.T
	pf = 32 // bits
	mask = (1 << bits) - 1
	out = np.zeros((w.shape[0], w.shape[1] * pf), np.int64)
	for i in range(pf):
		out[:, i::pf] = (w >> (bits * i)) & mask
	out = out[:, :n] - (1 << bits) // 2
	return out.T if dim == 0 else out


def ct_ref(packed, scale, shape, bits, group_size=None, zero_point=None,
	   g_idx=None):
	"""The [out, in] float32 values; scale a torch tensor (its dtype the
	one the product is rounded to)."""
	n_out, n_in = shape
	q = torch.tensor(ct_unpack(packed, bits, n_in))
	if g_idx is not None:
		g = torch.tensor(np.asarray(g_idx, dtype=np.int64))
	else:
		gs = group_size or n_in
		g = torch.arange(n_in) // gs
	x = q.to(scale.dtype)
	if zero_point is not None:
		z = torch.tensor(ct_unpack(zero_point, bits, n_out, dim=0))
		x = x - z[:, g].to(scale.dtype)
	return (x * scale[:, g]).float().numpy()
