#!/usr/bin/python3
"""test_dequant.py - stfs's dequantizer (src/format/dequant.c and
dequant_iq.c, through tests/unit/dequant-tool) against a second one written
from ggml's reference code (tests/gguf_dequant_ref.py), for every ggml type,
on random blocks and on each block format's edge cases: zero, negative,
subnormal, largest, infinite and NaN half scales (IQ1_M's made of four
nibbles); mins; every scale and quant bit set or clear; the signed quants'
-128; every E8M0 exponent of MXFP4 and every UE4M3 scale of NVFP4; Q8_K's
float32 scale; every entry of every i-quant grid.  Windows of the output
(any byte offset and length) are checked too.

    test_dequant.py DEQUANT_TOOL
"""
import os
import random
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_dequant_ref as ref  # noqa: E402

# where each format keeps its half scales (ggml-common.h)
HALVES = {
    'Q4_0': [0], 'Q4_1': [0, 2], 'Q5_0': [0], 'Q5_1': [0, 2],
    'Q8_0': [0], 'Q8_1': [0, 2], 'Q2_K': [80, 82], 'Q3_K': [108],
    'Q4_K': [0, 2], 'Q5_K': [0, 2], 'Q6_K': [208], 'IQ4_NL': [0],
    'IQ4_XS': [0], 'Q8_K': [], 'MXFP4': [],
    'IQ2_XXS': [0], 'IQ2_XS': [0], 'IQ2_S': [0], 'IQ3_XXS': [0],
    'IQ3_S': [0], 'IQ1_S': [0], 'IQ1_M': [], 'TQ1_0': [52], 'TQ2_0': [64],
    'NVFP4': [], 'Q1_0': [0], 'Q2_0': [0],
}


def set_iq1m_half(b, h):
    """IQ1_M's half scale is the top nibbles of its 4 scale u16s (bytes
    49, 51, 53, 55), least significant first."""
    for k in range(4):
        b[49 + 2 * k] = (b[49 + 2 * k] & 0x0f) | ((h >> (4 * k)) & 0xf) << 4


def set_bits(b, at, lo, n, v):
    """Bits lo..lo+n-1 of the byte at b[at] = v."""
    m = ((1 << n) - 1) << lo
    b[at] = (b[at] & ~m & 0xff) | (v << lo) & m


# per grid type: (grid entries, index slots a block, put(block, slot, index))
def _iq2_xs(b, k, v):
    b[2 + 2 * k:4 + 2 * k] = struct.pack('<H', v | (b[3 + 2 * k] >> 1) << 9)


def _iq1_s(b, k, v):
    g, l = divmod(k, 4)
    b[2 + k] = v & 0xff
    qh = struct.unpack_from('<H', b, 34 + 2 * g)[0]
    qh = (qh & ~(7 << (3 * l))) | (v >> 8) << (3 * l)
    struct.pack_into('<H', b, 34 + 2 * g, qh)


SWEEP = {
    'IQ2_XXS': (256, 32, lambda b, k, v:
                b.__setitem__(2 + 8 * (k // 4) + k % 4, v)),
    'IQ2_XS': (512, 32, _iq2_xs),
    'IQ2_S': (1024, 32, lambda b, k, v: (
        b.__setitem__(2 + k, v & 0xff),
        set_bits(b, 66 + k // 4, 2 * (k % 4), 2, v >> 8))),
    'IQ3_XXS': (256, 64, lambda b, k, v: b.__setitem__(2 + k, v)),
    'IQ3_S': (512, 64, lambda b, k, v: (
        b.__setitem__(2 + k, v & 0xff),
        set_bits(b, 66 + k // 8, k % 8, 1, v >> 8))),
    'IQ1_S': (2048, 32, _iq1_s),
    'IQ1_M': (2048, 32, lambda b, k, v: (
        b.__setitem__(k, v & 0xff),
        set_bits(b, 32 + 2 * (k // 4) + (k % 4) // 2, 4 * (k % 2), 3,
                 v >> 8))),
}


def sweep_blocks(name, rng):
    """Blocks whose grid indices run through every entry of the grid,
    the rest of their bytes random, their scales moderate."""
    if name not in SWEEP:
        return []
    entries, slots, put = SWEEP[name]
    _, nb, _ = ref.TYPES[name]
    out = []
    for first in range(0, entries, slots):
        b = bytearray(rng.randbytes(nb))
        for k in range(slots):
            put(b, k, (first + k) % entries)
        moderate(name, b, rng)
        out.append(b)
    return out


def moderate(name, b, rng):
    """Finite, moderate scales in block b."""
    for at in HALVES[name]:
        # |x| in [2^-10, 2^5): exponent field 5..19
        h = rng.randrange(0x1400, 0x5000) | rng.choice((0, 0x8000))
        b[at:at + 2] = struct.pack('<H', h)
    if name == 'IQ1_M':
        set_iq1m_half(b, rng.randrange(0x1400, 0x5000) |
                      rng.choice((0, 0x8000)))
    if name == 'Q8_K':
        b[0:4] = struct.pack('<f', rng.uniform(-4, 4))
    if name == 'MXFP4':
        b[0] = rng.randrange(100, 150)
SPECIAL_HALVES = [0x0000, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x0001,
                  0x8001, 0x03ff, 0x0400, 0x7c00, 0xfc00, 0x7e00, 0xfe00,
                  0x7c01, 0x3555]
SPECIAL_F32 = [0.0, -0.0, 1.0, -1.5, float('nan'), float('inf'),
               float('-inf'), 1e-45, 3.4e38, -2.0 ** -126]


def edge_blocks(name, rng):
    """Blocks of name that hit each format's corners."""
    _, nb, _ = ref.TYPES[name]
    out = []
    for fill in (0x00, 0xff, 0x80, 0x7f, 0x55, 0xaa, 0x0f, 0xf0, 0x01):
        out.append(bytearray([fill]) * nb)
    for at in HALVES[name]:
        for h in SPECIAL_HALVES:
            for body in ('random', 0x00, 0xff, 0x80):
                b = (bytearray(rng.randbytes(nb)) if body == 'random'
                     else bytearray([body]) * nb)
                for other in HALVES[name]:
                    b[other:other + 2] = struct.pack('<H', 0x3c00)
                b[at:at + 2] = struct.pack('<H', h)
                out.append(b)
    if name == 'MXFP4':
        for e in range(256):
            b = bytearray(rng.randbytes(nb))
            b[0] = e
            out.append(b)
            # every nibble, both halves of the block
            out.append(bytearray([e]) + bytes((k % 16) | ((15 - k % 16) << 4)
                                              for k in range(16)))
    if name == 'IQ1_M':
        for h in SPECIAL_HALVES:
            for body in ('random', 0x00, 0xff):
                b = (bytearray(rng.randbytes(nb)) if body == 'random'
                     else bytearray([body]) * nb)
                set_iq1m_half(b, h)
                out.append(b)
    if name == 'NVFP4':
        for e in range(256):
            b = bytearray(rng.randbytes(nb))
            b[0:4] = bytes([e, e ^ 0x80, (e + 1) % 256, 255 - e])
            out.append(b)
            # every nibble, both halves of each run of 16
            out.append(bytearray([e] * 4) + bytes(
                (k % 16) | ((15 - k % 16) << 4) for k in range(32)))
    out.extend(sweep_blocks(name, rng))
    if name == 'Q8_K':
        for x in SPECIAL_F32:
            for body in ('random', 0x80, 0x7f):
                b = (bytearray(rng.randbytes(nb)) if body == 'random'
                     else bytearray([body]) * nb)
                b[0:4] = struct.pack('<f', x)
                out.append(b)
    return out


def random_blocks(name, rng, n):
    """n random blocks with finite, moderate half scales (and n with any)."""
    _, nb, _ = ref.TYPES[name]
    out = [bytearray(rng.randbytes(nb)) for _ in range(2 * n)]
    for b in out[:n]:
        moderate(name, b, rng)
    return out


def run(tool, args, data):
    p = subprocess.run([tool] + args, input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        raise SystemExit('dequant-tool %s failed: %s'
                         % (' '.join(args), p.stderr.decode()))
    if args[0] == 'window':
        return p.stdout
    return np.frombuffer(p.stdout, dtype='<f4')


def same(name, what, got, want, blocks_per=None):
    """Bit-identical, except that any NaN matches any NaN (stfs keeps a
    NaN's sign, not its payload)."""
    if got.shape != want.shape:
        raise SystemExit('%s %s: %d values, want %d'
                         % (name, what, got.size, want.size))
    gb = got.view('<u4')
    wb = want.view('<u4')
    nan = np.isnan(got) & np.isnan(want)
    bad = np.nonzero((gb != wb) & ~nan)[0]
    if bad.size:
        i = int(bad[0])
        raise SystemExit('%s %s: element %d (block %s) is %r (0x%08x), '
                         'ggml gives %r (0x%08x); %d differ'
                         % (name, what, i,
                            i // blocks_per if blocks_per else '?',
                            float(got[i]), int(gb[i]), float(want[i]),
                            int(wb[i]), bad.size))


def main():
    tool = sys.argv[1]
    rng = random.Random(23)
    total = 0
    for name, (block, nb, _) in ref.TYPES.items():
        blocks = edge_blocks(name, rng) + random_blocks(name, rng, 300)
        data = b''.join(bytes(b) for b in blocks)
        want = ref.dequantize(name, data)
        got = run(tool, ['decode', name], data)
        same(name, 'decode', got, want, block)
        # windows: any offset and length, also inside one block, over
        # the blocks with finite scales (no NaN, so bytes compare)
        fdata = b''.join(bytes(b) for b in blocks[-600:-300])
        fin = ref.dequantize(name, fdata)
        if not np.isfinite(fin).all():
            raise SystemExit('%s: finite scales gave a non-finite value'
                             % name)
        size = fin.size * 4
        for _ in range(60):
            off = rng.randrange(0, size)
            ln = rng.randrange(1, min(size - off, 3 * block * 4) + 1)
            got = run(tool, ['window', name, str(off), str(ln)], fdata)
            if got != fin.view(np.uint8)[off:off + ln].tobytes():
                raise SystemExit('%s: window [%d, %d) differs from ggml\'s'
                                 % (name, off, off + ln))
        total += len(blocks)
        print('%-7s %5d blocks and 60 windows agree with ggml\'s reference'
              % (name, len(blocks)))
    print('ok: %d blocks' % total)


if __name__ == '__main__':
    main()
