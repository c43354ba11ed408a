#!/usr/bin/python3
"""make_gguf_corpus.py - write fuzz_gguf's seed corpus (corpus/gguf/).

    make_gguf_corpus.py [OUTDIR]    (default: corpus/gguf next to this script)

Seeds from tests/gguf_gen.py: small valid files (every ggml type, every
metadata value type with nested arrays, v2 and v3, odd alignments, a split
part, no tensors) and each broken file of gguf_gen.hostile_files().  The
output is deterministic.  Files not written here (fz-*, units the fuzzer
found, and any added by hand) are left as they are; the others are listed.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import gguf_gen  # noqa: E402


def seeds(tmp):
    rng = np.random.default_rng(0)
    out = {}

    def add(name, tensors, **kw):
        p = os.path.join(tmp, name)
        gguf_gen.write(p, tensors, rng=rng, **kw)
        with open(p, "rb") as f:
            out[name] = f.read()
        os.unlink(p)
    types = [("t%d" % i, t, [1, gguf_gen.TYPES[t][1]], None)
             for i, t in enumerate(gguf_gen.TYPES)]
    add("every-type", types, alignment=8)
    add("every-value", [("w", "F32", [2, 2], None)],
        metadata=gguf_gen.every_value_type())
    add("v2-align64", [("a", "Q4_K", [256], None), ("b", "I8", [3], None)],
        alignment=64, version=2)
    add("no-tensors", [], metadata=[("general.architecture", "str", "x")])
    add("split", [("a", "F16", [4], None)],
        metadata=[("split.no", "u16", 0), ("split.count", "u16", 2),
                  ("split.tensors.count", "i32", 2)])
    for name, data, _ in gguf_gen.hostile_files(out["v2-align64"]):
        out["bad-" + name] = data[:8192]
    return out


def main(argv):
    outdir = argv[0] if argv else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "gguf")
    os.makedirs(outdir, exist_ok=True)
    s = seeds(outdir)
    for name, data in s.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
    print("gguf: %d seeds" % len(s))
    for f in sorted(os.listdir(outdir)):
        if f not in s and not f.startswith("fz-"):
            print("kept, not written here: gguf/%s" % f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
