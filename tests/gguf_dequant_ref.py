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
import base64
import hashlib
import os
import re
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


# --- the i-quants' grids ----------------------------------------------------
#
# ggml's grids are data: a list of lattice points each (8 or 4 bytes, each
# byte one of a few levels).  src/format/dequant_grids.c keeps them as
# bitmaps (scripts/iq-grids); this expands those bitmaps its own way and
# checks each table, laid out as ggml lays it out in memory (uint64 or
# uint32 little-endian entries), against the sha256 of ggml's table in
# ggml-common.h (ggml commit d99724f2), so a wrong bit stops the tests
# here rather than agreeing in both dequantizers.

GRID_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "src", "format", "dequant_grids.c")
# name: (levels in rank order, bytes per entry, entries, ggml's sha256)
GRIDS = {
    "iq2xxs": ([8, 25, 43], 8, 256, "05826b5d3e472a3a78f196be62ac78ac"
               "f81df0f909626e12ab9fa2a5d490dd54"),
    "iq2xs": ([8, 25, 43], 8, 512, "06e47aaca60b4dc1d9b5a3f345404370"
              "58a6b142b4d7a59d5ded769b4d1bf1de"),
    "iq2s": ([8, 25, 43], 8, 1024, "e1aa1473412b0552c2174c30ef22ab40"
             "73f6a181b85a17056e8249bd2932fd88"),
    "iq3xxs": ([4, 12, 20, 28, 36, 44, 52, 62], 4, 256,
               "46e35f5a997efdee6c99ce57854c8a0d"
               "4f0ff8ca57e5e8a60c0793ea580acf5d"),
    "iq3s": ([1, 3, 5, 7, 9, 11, 13, 15], 4, 512,
             "bd1af4945a1717c65610b0284e4628b9"
             "a1ba3b306fae3a06f6e5f597356e349f"),
    "iq1s": ([-1, 0, 1], 8, 2048, "07540ffc1aeaf6ad4d97e96b0fcc765a"
             "ae39671d4ae4a27bbd0e796fde167c6a"),
}
KSIGNS_SHA256 = ("a76742a603f8beca5212ecce0f1f02f1"
                 "1a4887fd2f7c8b15aca0ea3eb3380c31")


def _grids():
    with open(GRID_FILE, encoding="utf-8") as fh:
        text = fh.read()
    out = {}
    for name, (levels, width, count, sha) in GRIDS.items():
        m = re.search(r'%s_bits\[\] =\s*((?:"[^"]*"\s*)+);' % name, text)
        b64 = "".join(re.findall(r'"([^"]*)"', m.group(1)))
        bits = np.unpackbits(np.frombuffer(base64.b64decode(b64), np.uint8),
                             bitorder="little")
        points = np.nonzero(bits)[0]
        nl = len(levels)
        digits = (points[:, None] // nl ** np.arange(width)) % nl
        grid = np.asarray(levels, dtype=np.int8)[digits]     # (count, width)
        if grid.shape != (count, width) or \
           hashlib.sha256(grid.tobytes()).hexdigest() != sha:
            raise SystemExit("gguf_dequant_ref: the %s grid of %s is not "
                             "ggml's" % (name, GRID_FILE))
        out[name] = grid
    return out


GRID = _grids()
# 7 sign bits and their parity as the 8th (ggml's ksigns_iq2xs)
KSIGNS = np.array([i | (bin(i).count("1") & 1) << 7 for i in range(128)],
                  dtype=np.uint8)
if hashlib.sha256(KSIGNS.tobytes()).hexdigest() != KSIGNS_SHA256:
    raise SystemExit("gguf_dequant_ref: ksigns is not ggml's")


def _u16(b, at, n):
    return np.ascontiguousarray(b[:, at:at + 2 * n]).view('<u2').astype(np.int64)


def _u32(b, at, n):
    return np.ascontiguousarray(b[:, at:at + 4 * n]).view('<u4').astype(np.int64)


def _signs(byte):
    """The 8 sign factors (-1 for a set bit j) of sign bytes: (..., 8)."""
    bits = (np.asarray(byte)[..., None] >> np.arange(8)) & 1
    return np.where(bits == 1, F32(-1), F32(1)).astype(F32)


def _half_of_u16(u):
    return u.astype('<u2').view('<f2').astype(F32)


def iq2_xxs(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    q = b[:, 2:66].reshape(n, 8, 8).astype(np.int64)
    aux = _u32(b, 2, 16).reshape(n, 8, 2)[:, :, 1]
    db = d[:, None] * (F32(0.5) + f(aux >> 28)) * F32(0.25)     # (n, 8)
    y = np.zeros((n, 8, 4, 8), dtype=F32)
    for l in range(4):
        grid = f(GRID["iq2xxs"][q[:, :, l]])                     # (n, 8, 8)
        s = _signs(KSIGNS[(aux >> (7 * l)) & 127])
        y[:, :, l, :] = db[:, :, None] * grid * s
    return y.reshape(n, QK_K)


def iq2_xs(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    qs = _u16(b, 2, 32).reshape(n, 8, 4)
    sc = b[:, 66:74].astype(np.int64)
    db = [d[:, None] * (F32(0.5) + f(sc & 0xf)) * F32(0.25),
          d[:, None] * (F32(0.5) + f(sc >> 4)) * F32(0.25)]
    y = np.zeros((n, 8, 4, 8), dtype=F32)
    for l in range(4):
        grid = f(GRID["iq2xs"][qs[:, :, l] & 511])
        s = _signs(KSIGNS[qs[:, :, l] >> 9])
        y[:, :, l, :] = db[l // 2][:, :, None] * grid * s
    return y.reshape(n, QK_K)


def iq2_s(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    qs = b[:, 2:34].reshape(n, 8, 4).astype(np.int64)
    signs = b[:, 34:66].reshape(n, 8, 4)
    qh = b[:, 66:74].astype(np.int64)
    sc = b[:, 74:82].astype(np.int64)
    db = [d[:, None] * (F32(0.5) + f(sc & 0xf)) * F32(0.25),
          d[:, None] * (F32(0.5) + f(sc >> 4)) * F32(0.25)]
    y = np.zeros((n, 8, 4, 8), dtype=F32)
    for l in range(4):
        idx = qs[:, :, l] | ((qh << (8 - 2 * l)) & 0x300)
        grid = f(GRID["iq2s"][idx])
        y[:, :, l, :] = db[l // 2][:, :, None] * grid * _signs(signs[:, :, l])
    return y.reshape(n, QK_K)


def iq3_xxs(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    qs = b[:, 2:66].reshape(n, 8, 8).astype(np.int64)
    aux = _u32(b, 66, 8)
    db = d[:, None] * (F32(0.5) + f(aux >> 28)) * F32(0.5)
    y = np.zeros((n, 8, 4, 8), dtype=F32)
    for l in range(4):
        s = _signs(KSIGNS[(aux >> (7 * l)) & 127])
        g1 = f(GRID["iq3xxs"][qs[:, :, 2 * l]])
        g2 = f(GRID["iq3xxs"][qs[:, :, 2 * l + 1]])
        y[:, :, l, 0:4] = db[:, :, None] * g1 * s[:, :, 0:4]
        y[:, :, l, 4:8] = db[:, :, None] * g2 * s[:, :, 4:8]
    return y.reshape(n, QK_K)


def iq3_s(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    qs = b[:, 2:66].reshape(n, 8, 8).astype(np.int64)
    qh = b[:, 66:74].astype(np.int64)
    signs = b[:, 74:106].reshape(n, 8, 4)
    sc = b[:, 106:110].astype(np.int64)
    # group g of 32: the low nibble of scales[g / 2] for even g, else high
    nib = np.stack([(sc[:, g // 2] >> (4 * (g % 2))) & 0xf
                    for g in range(8)], axis=1)
    db = d[:, None] * f(1 + 2 * nib)
    y = np.zeros((n, 8, 4, 8), dtype=F32)
    for l in range(4):
        i1 = qs[:, :, 2 * l] | ((qh << (8 - 2 * l)) & 256)
        i2 = qs[:, :, 2 * l + 1] | ((qh << (7 - 2 * l)) & 256)
        s = _signs(signs[:, :, l])
        y[:, :, l, 0:4] = db[:, :, None] * f(GRID["iq3s"][i1]) * s[:, :, 0:4]
        y[:, :, l, 4:8] = db[:, :, None] * f(GRID["iq3s"][i2]) * s[:, :, 4:8]
    return y.reshape(n, QK_K)


IQ1S_DELTA = F32(0.125)


def iq1_s(b):
    n = b.shape[0]
    d = half(b, 0)[:, 0]
    qs = b[:, 2:34].reshape(n, 8, 4).astype(np.int64)
    qh = _u16(b, 34, 8)
    dl = d[:, None] * f(2 * ((qh >> 12) & 7) + 1)
    delta = np.where(qh & 0x8000, -IQ1S_DELTA, IQ1S_DELTA).astype(F32)
    y = np.zeros((n, 8, 4, 8), dtype=F32)
    for l in range(4):
        idx = qs[:, :, l] | (((qh >> (3 * l)) & 7) << 8)
        grid = f(GRID["iq1s"][idx])
        y[:, :, l, :] = dl[:, :, None] * (grid + delta[:, :, None])
    return y.reshape(n, QK_K)


def iq1_m(b):
    n = b.shape[0]
    qs = b[:, 0:32].reshape(n, 8, 4).astype(np.int64)
    qh = b[:, 32:48].reshape(n, 8, 2).astype(np.int64)
    sc = _u16(b, 48, 4)
    scale = ((sc[:, 0] >> 12) | ((sc[:, 1] >> 8) & 0x00f0) |
             ((sc[:, 2] >> 4) & 0x0f00) | (sc[:, 3] & 0xf000))
    d = _half_of_u16(scale)
    y = np.zeros((n, 8, 4, 8), dtype=F32)
    for ib in range(8):
        s = sc[:, ib // 2] >> (6 * (ib % 2))
        dl = [d * f(2 * (s & 7) + 1), d * f(2 * ((s >> 3) & 7) + 1)]
        h0, h1 = qh[:, ib, 0], qh[:, ib, 1]
        idx = [qs[:, ib, 0] | ((h0 << 8) & 0x700),
               qs[:, ib, 1] | ((h0 << 4) & 0x700),
               qs[:, ib, 2] | ((h1 << 8) & 0x700),
               qs[:, ib, 3] | ((h1 << 4) & 0x700)]
        bit = [h0 & 0x08, h0 & 0x80, h1 & 0x08, h1 & 0x80]
        for l in range(4):
            delta = np.where(bit[l], -IQ1S_DELTA, IQ1S_DELTA).astype(F32)
            grid = f(GRID["iq1s"][idx[l]])
            y[:, ib, l, :] = dl[l // 2][:, None] * (grid + delta[:, None])
    return y.reshape(n, QK_K)


def tq1_0(b):
    n = b.shape[0]
    qs = b[:, 0:48].astype(np.int64)
    qh = b[:, 48:52].astype(np.int64)
    d = half(b, 52)[:, 0]
    pow3 = [1, 3, 9, 27, 81, 243]
    cols = []
    for lo, hi in ((0, 32), (32, 48)):
        for t in range(5):
            for m in range(lo, hi):
                cols.append((qs[:, m] * pow3[t]) & 0xff)
    for t in range(4):
        for j in range(4):
            cols.append((qh[:, j] * pow3[t]) & 0xff)
    q = np.stack(cols, axis=1)
    xi = (q * 3) >> 8
    return f(xi - 1) * d[:, None]


def tq2_0(b):
    n = b.shape[0]
    qs = b[:, 0:64].astype(np.int64)
    d = half(b, 64)[:, 0]
    cols = []
    for j in (0, 32):
        for l in range(4):
            for m in range(32):
                cols.append((qs[:, j + m] >> (2 * l)) & 3)
    q = np.stack(cols, axis=1)
    return f(q - 1) * d[:, None]


def ue4m3_to_fp32(x):
    """ggml_ue4m3_to_fp32: an unsigned E4M3 (top bit ignored, 0x7f is 0),
    halved; every value is exact in float32."""
    x = x.astype(np.int64)
    e = (x >> 3) & 0xf
    m = x & 7
    raw = np.where(e == 0, np.ldexp(m.astype(np.float64), -9),
                   np.ldexp(1.0 + m / 8.0, e - 7))
    raw = np.where((x == 0) | (x == 0x7f), 0.0, raw)
    return (raw * 0.5).astype(F32)


def nvfp4(b):
    n = b.shape[0]
    y = np.zeros((n, 4, 16), dtype=F32)
    for s in range(4):
        d = ue4m3_to_fp32(b[:, s])[:, None]
        qs = b[:, 4 + 8 * s:12 + 8 * s].astype(np.int64)
        y[:, s, 0:8] = f(KVALUES_MXFP4[qs & 0x0F]) * d
        y[:, s, 8:16] = f(KVALUES_MXFP4[qs >> 4]) * d
    return y.reshape(n, 64)


def q1_0(b):
    d = half(b, 0)
    bits = np.unpackbits(b[:, 2:18], axis=1, bitorder="little")
    return np.where(bits == 1, d, -d).astype(F32)


def q2_0(b):
    d = half(b, 0)
    qs = b[:, 2:18].astype(np.int64)
    q = np.stack([(qs[:, j // 4] >> (2 * (j % 4))) & 3 for j in range(64)],
                 axis=1)
    return f(q - 1) * d


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
    'IQ2_XXS': (256, 66, iq2_xxs),
    'IQ2_XS': (256, 74, iq2_xs),
    'IQ3_XXS': (256, 98, iq3_xxs),
    'IQ1_S': (256, 50, iq1_s),
    'IQ4_NL': (32, 18, iq4_nl),
    'IQ3_S': (256, 110, iq3_s),
    'IQ2_S': (256, 82, iq2_s),
    'IQ4_XS': (256, 136, iq4_xs),
    'IQ1_M': (256, 56, iq1_m),
    'TQ1_0': (256, 54, tq1_0),
    'TQ2_0': (256, 66, tq2_0),
    'MXFP4': (32, 17, mxfp4),
    'NVFP4': (64, 36, nvfp4),
    'Q1_0': (128, 18, q1_0),
    'Q2_0': (64, 18, q2_0),
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
