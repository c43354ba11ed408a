"""gguf_dequant_ref.py - a second dequantizer of GGUF's quantized blocks,
for the tests: numpy, written from ggml's reference C code
(ggml/src/ggml-quants.c, the dequantize_row_* functions, and the block
layouts of ggml-common.h), not from stfs's src/format/dequant.c.

Each decoder takes the blocks as a uint8 array of shape (n, bytes) and
returns float32 of shape (n, block).  The loops follow ggml's, element
by element, vectorised over the blocks; all arithmetic is float32, in
ggml's order (numpy never fuses a multiply and an add).

    python3 tests/gguf_dequant_ref.py TYPE < blocks > floats
decodes a stream of whole blocks to little-endian float32.
"""
import sys

import numpy as np

F32 = np.float32
QK_K = 256

KVALUES_IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10,
                          1, 13, 25, 38, 53, 69, 89, 113], dtype=np.int8)
# e2m1 values doubled (ggml's kvalues_mxfp4)
KVALUES_MXFP4 = np.array([0, 1, 2, 3, 4, 6, 8, 12,
                          0, -1, -2, -3, -4, -6, -8, -12], dtype=np.int8)


def half(b, at):
    """GGML_FP16_TO_FP32 of the half at byte `at` of each block: (n, 1)."""
    return np.ascontiguousarray(b[:, at:at + 2]).view('<f2').astype(F32)


def f(x):
    """An integer array as float32 (ggml's implicit int -> float)."""
    return np.asarray(x).astype(F32)


def q4_0(b):
    d = half(b, 0)
    qs = b[:, 2:18].astype(np.int32)
    x0 = (qs & 0x0F) - 8
    x1 = (qs >> 4) - 8
    return np.concatenate([f(x0) * d, f(x1) * d], axis=1)


def q4_1(b):
    d = half(b, 0)
    m = half(b, 2)
    qs = b[:, 4:20].astype(np.int32)
    x0 = qs & 0x0F
    x1 = qs >> 4
    return np.concatenate([f(x0) * d + m, f(x1) * d + m], axis=1)


def _qh(b, at):
    return np.ascontiguousarray(b[:, at:at + 4]).view('<u4').astype(np.uint64)


def q5_0(b):
    d = half(b, 0)
    qh = _qh(b, 2)
    qs = b[:, 6:22].astype(np.int32)
    y = np.zeros((b.shape[0], 32), dtype=F32)
    for j in range(16):
        xh_0 = (((qh[:, 0] >> np.uint64(j)) << np.uint64(4)) & np.uint64(0x10)).astype(np.int32)
        xh_1 = ((qh[:, 0] >> np.uint64(j + 12)) & np.uint64(0x10)).astype(np.int32)
        x0 = ((qs[:, j] & 0x0F) | xh_0) - 16
        x1 = ((qs[:, j] >> 4) | xh_1) - 16
        y[:, j] = f(x0) * d[:, 0]
        y[:, j + 16] = f(x1) * d[:, 0]
    return y


def q5_1(b):
    d = half(b, 0)
    m = half(b, 2)
    qh = _qh(b, 4)
    qs = b[:, 8:24].astype(np.int32)
    y = np.zeros((b.shape[0], 32), dtype=F32)
    for j in range(16):
        xh_0 = (((qh[:, 0] >> np.uint64(j)) << np.uint64(4)) & np.uint64(0x10)).astype(np.int32)
        xh_1 = ((qh[:, 0] >> np.uint64(j + 12)) & np.uint64(0x10)).astype(np.int32)
        x0 = (qs[:, j] & 0x0F) | xh_0
        x1 = (qs[:, j] >> 4) | xh_1
        y[:, j] = f(x0) * d[:, 0] + m[:, 0]
        y[:, j + 16] = f(x1) * d[:, 0] + m[:, 0]
    return y


def q8_0(b):
    d = half(b, 0)
    qs = b[:, 2:34].view(np.int8)
    return f(qs) * d


def q8_1(b):
    # ggml has no dequantize_row_q8_1; its blocks mean x = d * q
    d = half(b, 0)
    qs = b[:, 4:36].view(np.int8)
    return f(qs) * d


def q2_k(b):
    n = b.shape[0]
    scales = b[:, 0:16].astype(np.int32)
    qs = b[:, 16:80].astype(np.int32)
    d = half(b, 80)[:, 0]
    mn = half(b, 82)[:, 0]
    y = np.zeros((n, QK_K), dtype=F32)
    o = 0
    is_ = 0
    q = 0
    for _n in range(0, QK_K, 128):
        shift = 0
        for _j in range(4):
            sc = scales[:, is_]
            is_ += 1
            dl = d * f(sc & 0xF)
            ml = mn * f(sc >> 4)
            for l in range(16):
                y[:, o] = dl * f((qs[:, q + l] >> shift) & 3) - ml
                o += 1
            sc = scales[:, is_]
            is_ += 1
            dl = d * f(sc & 0xF)
            ml = mn * f(sc >> 4)
            for l in range(16):
                y[:, o] = dl * f((qs[:, q + l + 16] >> shift) & 3) - ml
                o += 1
            shift += 2
        q += 32
    return y


def q3_k(b):
    n = b.shape[0]
    hm = b[:, 0:32].astype(np.int32)
    qs = b[:, 32:96].astype(np.int32)
    d_all = half(b, 108)[:, 0]
    kmask1 = np.uint32(0x03030303)
    kmask2 = np.uint32(0x0f0f0f0f)
    aux = np.ascontiguousarray(b[:, 96:108]).view('<u4').astype(np.uint32)
    tmp = aux[:, 2].copy()
    a0, a1 = aux[:, 0].copy(), aux[:, 1].copy()
    u = np.uint32
    aux = np.stack([
        (a0 & kmask2) | (((tmp >> u(0)) & kmask1) << u(4)),
        (a1 & kmask2) | (((tmp >> u(2)) & kmask1) << u(4)),
        ((a0 >> u(4)) & kmask2) | (((tmp >> u(4)) & kmask1) << u(4)),
        ((a1 >> u(4)) & kmask2) | (((tmp >> u(6)) & kmask1) << u(4)),
    ], axis=1).astype('<u4')
    scales = np.ascontiguousarray(aux).view(np.int8).astype(np.int32)  # (n, 16)
    y = np.zeros((n, QK_K), dtype=F32)
    o = 0
    is_ = 0
    q = 0
    m = 1
    for _n in range(0, QK_K, 128):
        shift = 0
        for _j in range(4):
            dl = d_all * f(scales[:, is_] - 32)
            is_ += 1
            for l in range(16):
                v = ((qs[:, q + l] >> shift) & 3) - np.where(hm[:, l] & m, 0, 4)
                y[:, o] = dl * f(v)
                o += 1
            dl = d_all * f(scales[:, is_] - 32)
            is_ += 1
            for l in range(16):
                v = ((qs[:, q + l + 16] >> shift) & 3) - np.where(hm[:, l + 16] & m, 0, 4)
                y[:, o] = dl * f(v)
                o += 1
            shift += 2
            m <<= 1
        q += 32
    return y


def _scale_min_k4(j, q):
    if j < 4:
        return q[:, j] & 63, q[:, j + 4] & 63
    return ((q[:, j + 4] & 0xF) | ((q[:, j - 4] >> 6) << 4),
            (q[:, j + 4] >> 4) | ((q[:, j - 0] >> 6) << 4))


def q4_k(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    mn = half(b, 2)[:, 0]
    scales = b[:, 4:16].astype(np.int32)
    qs = b[:, 16:144].astype(np.int32)
    y = np.zeros((n, QK_K), dtype=F32)
    o = 0
    is_ = 0
    q = 0
    for _j in range(0, QK_K, 64):
        sc, m = _scale_min_k4(is_ + 0, scales)
        d1 = d * f(sc)
        m1 = mn * f(m)
        sc, m = _scale_min_k4(is_ + 1, scales)
        d2 = d * f(sc)
        m2 = mn * f(m)
        for l in range(32):
            y[:, o] = d1 * f(qs[:, q + l] & 0xF) - m1
            o += 1
        for l in range(32):
            y[:, o] = d2 * f(qs[:, q + l] >> 4) - m2
            o += 1
        q += 32
        is_ += 2
    return y


def q5_k(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    mn = half(b, 2)[:, 0]
    scales = b[:, 4:16].astype(np.int32)
    qh = b[:, 16:48].astype(np.int32)
    ql = b[:, 48:176].astype(np.int32)
    y = np.zeros((n, QK_K), dtype=F32)
    o = 0
    is_ = 0
    q = 0
    u1, u2 = 1, 2
    for _j in range(0, QK_K, 64):
        sc, m = _scale_min_k4(is_ + 0, scales)
        d1 = d * f(sc)
        m1 = mn * f(m)
        sc, m = _scale_min_k4(is_ + 1, scales)
        d2 = d * f(sc)
        m2 = mn * f(m)
        for l in range(32):
            y[:, o] = d1 * f((ql[:, q + l] & 0xF) + np.where(qh[:, l] & u1, 16, 0)) - m1
            o += 1
        for l in range(32):
            y[:, o] = d2 * f((ql[:, q + l] >> 4) + np.where(qh[:, l] & u2, 16, 0)) - m2
            o += 1
        q += 32
        is_ += 2
        u1 <<= 2
        u2 <<= 2
    return y


def q6_k(b):
    n = b.shape[0]
    ql_all = b[:, 0:128].astype(np.int32)
    qh_all = b[:, 128:192].astype(np.int32)
    sc_all = b[:, 192:208].view(np.int8).astype(np.int32)
    d = half(b, 208)[:, 0]
    y = np.zeros((n, QK_K), dtype=F32)
    for half_ in range(2):
        ql = ql_all[:, 64 * half_:]
        qh = qh_all[:, 32 * half_:]
        sc = sc_all[:, 8 * half_:]
        base = 128 * half_
        for l in range(32):
            is_ = l // 16
            q1 = ((ql[:, l + 0] & 0xF) | (((qh[:, l] >> 0) & 3) << 4)) - 32
            q2 = ((ql[:, l + 32] & 0xF) | (((qh[:, l] >> 2) & 3) << 4)) - 32
            q3 = ((ql[:, l + 0] >> 4) | (((qh[:, l] >> 4) & 3) << 4)) - 32
            q4 = ((ql[:, l + 32] >> 4) | (((qh[:, l] >> 6) & 3) << 4)) - 32
            y[:, base + l + 0] = d * f(sc[:, is_ + 0]) * f(q1)
            y[:, base + l + 32] = d * f(sc[:, is_ + 2]) * f(q2)
            y[:, base + l + 64] = d * f(sc[:, is_ + 4]) * f(q3)
            y[:, base + l + 96] = d * f(sc[:, is_ + 6]) * f(q4)
    return y


def q8_k(b):
    d = np.ascontiguousarray(b[:, 0:4]).view('<f4').astype(F32)
    qs = b[:, 4:260].view(np.int8)
    return d * f(qs)


def iq4_nl(b):
    d = half(b, 0)
    qs = b[:, 2:18].astype(np.int32)
    lo = f(KVALUES_IQ4NL[qs & 0xF])
    hi = f(KVALUES_IQ4NL[qs >> 4])
    return np.concatenate([d * lo, d * hi], axis=1)


def iq4_xs(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    scales_h = np.ascontiguousarray(b[:, 2:4]).view('<u2')[:, 0].astype(np.int32)
    scales_l = b[:, 4:8].astype(np.int32)
    qs = b[:, 8:136].astype(np.int32)
    y = np.zeros((n, QK_K), dtype=F32)
    for ib in range(QK_K // 32):
        ls = ((scales_l[:, ib // 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4)
        dl = d * f(ls - 32)
        for j in range(16):
            y[:, 32 * ib + j] = dl * f(KVALUES_IQ4NL[qs[:, 16 * ib + j] & 0xf])
            y[:, 32 * ib + j + 16] = dl * f(KVALUES_IQ4NL[qs[:, 16 * ib + j] >> 4])
    return y


def e8m0_to_fp32_half(e):
    """ggml_e8m0_to_fp32_half: 2^(e - 128), no NaN."""
    e = e.astype(np.uint32)
    bits = np.where(e < 2, np.uint32(0x00200000) << e, (e - np.uint32(1)) << np.uint32(23))
    return bits.astype('<u4').view('<f4').astype(F32)


def mxfp4(b):
    d = e8m0_to_fp32_half(b[:, 0])[:, None]
    qs = b[:, 1:17].astype(np.int32)
    x0 = f(KVALUES_MXFP4[qs & 0x0F])
    x1 = f(KVALUES_MXFP4[qs >> 4])
    return np.concatenate([x0 * d, x1 * d], axis=1)


# name: (elements per block, bytes per block, decoder)
TYPES = {
    'Q4_0': (32, 18, q4_0),
    'Q4_1': (32, 20, q4_1),
    'Q5_0': (32, 22, q5_0),
    'Q5_1': (32, 24, q5_1),
    'Q8_0': (32, 34, q8_0),
    'Q8_1': (32, 36, q8_1),
    'Q2_K': (256, 84, q2_k),
    'Q3_K': (256, 110, q3_k),
    'Q4_K': (256, 144, q4_k),
    'Q5_K': (256, 176, q5_k),
    'Q6_K': (256, 210, q6_k),
    'Q8_K': (256, 292, q8_k),
    'IQ4_NL': (32, 18, iq4_nl),
    'IQ4_XS': (256, 136, iq4_xs),
    'MXFP4': (32, 17, mxfp4),
}


def dequantize(name, data):
    """The float32 values (1-D) of the whole blocks in bytes `data`."""
    block, nbytes, fn = TYPES[name]
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size % nbytes:
        raise ValueError('%s: %d bytes is not a whole number of %d-byte blocks'
                         % (name, raw.size, nbytes))
    blocks = raw.reshape(-1, nbytes)
    if blocks.shape[0] == 0:
        return np.zeros(0, dtype=F32)
    with np.errstate(all='ignore'):
        return np.ascontiguousarray(fn(blocks), dtype=F32).reshape(-1)


if __name__ == '__main__':
    out = dequantize(sys.argv[1], sys.stdin.buffer.read())
    sys.stdout.buffer.write(out.astype('<f4').tobytes())
