"""gguf_gen.py - a GGUF writer for the tests (numpy and the standard library).

Written from ggml's docs/gguf.md, independently of stfs's parser, so the
tests can make every case the parser must handle: every ggml type (with
random block bytes), odd alignments, every metadata value type with nested
arrays, split sets, and broken files.

    write(path, tensors, alignment=32, metadata=None, version=3)
        tensors: [(name, type_name, row_major_shape, raw_bytes)]; raw_bytes
        of None is filled with random bytes of the right size.
        metadata: [(key, value_type, value)] written before the tensors'
        infos, in order; general.alignment is added when alignment != 32
        and not given.  Returns {name: absolute_offset}.
    nbytes(type_name, row_major_shape)  the bytes a tensor of that shape holds
    random_bytes(type_name, shape, rng)  block bytes of that size
    write_split(prefix, tensors, n, ...)  NAME-0000k-of-0000n.gguf files
        with split.no / split.count / split.tensors.count, returns paths
    TYPES: {name: (ggml_number, block_elements, block_bytes)}
    VALUE_TYPES: {name: number} ("u8", "i8", ..., "str", "array", "u64",
        "i64", "f64"); an array value is (element_type, [values]), an
        array of arrays ("array", [(t, [...]), ...]).
"""
import struct

import numpy as np

# ggml.h's enum ggml_type: number, elements per block, bytes per block.
TYPES = {
    "F32": (0, 1, 4), "F16": (1, 1, 2),
    "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20),
    "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24),
    "Q8_0": (8, 32, 34), "Q8_1": (9, 32, 36),
    "Q2_K": (10, 256, 84), "Q3_K": (11, 256, 110), "Q4_K": (12, 256, 144),
    "Q5_K": (13, 256, 176), "Q6_K": (14, 256, 210), "Q8_K": (15, 256, 292),
    "IQ2_XXS": (16, 256, 66), "IQ2_XS": (17, 256, 74),
    "IQ3_XXS": (18, 256, 98), "IQ1_S": (19, 256, 50),
    "IQ4_NL": (20, 32, 18), "IQ3_S": (21, 256, 110), "IQ2_S": (22, 256, 82),
    "IQ4_XS": (23, 256, 136),
    "I8": (24, 1, 1), "I16": (25, 1, 2), "I32": (26, 1, 4), "I64": (27, 1, 8),
    "F64": (28, 1, 8), "IQ1_M": (29, 256, 56), "BF16": (30, 1, 2),
    "TQ1_0": (34, 256, 54), "TQ2_0": (35, 256, 66),
    "MXFP4": (39, 32, 17), "NVFP4": (40, 64, 36),
    "Q1_0": (41, 128, 18), "Q2_0": (42, 64, 18),
}
# numbers ggml removed or never used (refused by number)
REMOVED_TYPES = [4, 5, 31, 32, 33, 36, 37, 38]

VALUE_TYPES = {
    "u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6,
    "bool": 7, "str": 8, "array": 9, "u64": 10, "i64": 11, "f64": 12,
}
_SCALAR = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I",
           "i32": "<i", "f32": "<f", "bool": "<?", "u64": "<Q", "i64": "<q",
           "f64": "<d"}


def nbytes(type_name, shape):
    _, block, bb = TYPES[type_name]
    numel = 1
    for d in shape:
        numel *= d
    if shape and shape[-1] % block:
        raise ValueError("%s: row length %d not a multiple of %d"
                         % (type_name, shape[-1], block))
    return numel // block * bb


def random_bytes(type_name, shape, rng):
    return rng.integers(0, 256, nbytes(type_name, shape),
                        dtype=np.uint8).tobytes()


def gstr(s):
    b = s.encode() if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def value(vtype, v):
    """The bytes of one value of type vtype (without its type number)."""
    if vtype == "str":
        return gstr(v)
    if vtype == "array":
        etype, items = v
        out = [struct.pack("<IQ", VALUE_TYPES[etype], len(items))]
        if etype in _SCALAR and etype != "bool":
            out.append(np.asarray(items, dtype=np.dtype(_SCALAR[etype]))
                       .tobytes())
        else:
            out.extend(value(etype, x) for x in items)
        return b"".join(out)
    return struct.pack(_SCALAR[vtype], v)


def kv(key, vtype, v):
    return gstr(key) + struct.pack("<I", VALUE_TYPES[vtype]) + value(vtype, v)


def header_bytes(tensors, offsets, metadata, version=3):
    out = [b"GGUF", struct.pack("<IQQ", version, len(tensors), len(metadata))]
    out.extend(kv(*m) for m in metadata)
    for (name, tname, shape, _), off in zip(tensors, offsets):
        ne = list(reversed(shape))
        out.append(gstr(name) + struct.pack("<I", len(ne)) +
                   struct.pack("<%dQ" % len(ne), *ne) +
                   struct.pack("<IQ", TYPES[tname][0], off))
    return b"".join(out)


def _pad(n, a):
    return (a - n % a) % a


def write(path, tensors, alignment=32, metadata=None, version=3, rng=None):
    rng = rng or np.random.default_rng(0)
    metadata = list(metadata or [])
    if alignment != 32 and not any(k == "general.alignment"
                                   for k, _, _ in metadata):
        metadata.append(("general.alignment", "u32", alignment))
    full = []
    for name, tname, shape, raw in tensors:
        if raw is None:
            raw = random_bytes(tname, shape, rng)
        if len(raw) != nbytes(tname, shape):
            raise ValueError("%s: %d bytes, want %d"
                             % (name, len(raw), nbytes(tname, shape)))
        full.append((name, tname, list(shape), raw))
    offsets, pos = [], 0
    for _, _, _, raw in full:
        pos += _pad(pos, alignment)
        offsets.append(pos)
        pos += len(raw)
    head = header_bytes(full, offsets, metadata, version)
    data_start = len(head) + _pad(len(head), alignment)
    with open(path, "wb") as f:
        f.write(head + b"\0" * (data_start - len(head)))
        pos = 0
        for (_, _, _, raw), off in zip(full, offsets):
            f.write(b"\0" * (off - pos))
            f.write(raw)
            pos = off + len(raw)
    return {name: data_start + off for (name, _, _, _), off in
            zip(full, offsets)}


def split_name(prefix, k, n):
    return "%s-%05d-of-%05d.gguf" % (prefix, k, n)


def write_split(prefix, tensors, n, alignment=32, metadata=None, rng=None):
    """Split tensors over n files the way llama.cpp's gguf-split does: the
    first file keeps the metadata, every file says split.no, split.count
    and split.tensors.count.  Returns the paths."""
    rng = rng or np.random.default_rng(0)
    per = -(-len(tensors) // n) if tensors else 0
    paths = []
    for k in range(n):
        part = tensors[k * per:(k + 1) * per]
        meta = [("split.no", "u16", k), ("split.count", "u16", n),
                ("split.tensors.count", "i32", len(tensors))]
        if k == 0:
            meta = list(metadata or []) + meta
        p = split_name(prefix, k + 1, n)
        write(p, part, alignment, meta, rng=rng)
        paths.append(p)
    return paths


def every_value_type():
    """Metadata with one key of every value type, nested arrays included."""
    return [
        ("general.architecture", "str", "llama"),
        ("general.name", "str", "t\u00e9st \"quoted\"\n"),
        ("general.file_type", "u32", 15),
        ("t.u8", "u8", 255), ("t.i8", "i8", -128),
        ("t.u16", "u16", 65535), ("t.i16", "i16", -32768),
        ("t.u32", "u32", 4294967295), ("t.i32", "i32", -2147483648),
        ("t.f32", "f32", 0.5), ("t.bool", "bool", True),
        ("t.u64", "u64", 18446744073709551615),
        ("t.i64", "i64", -9223372036854775808), ("t.f64", "f64", -2.25),
        ("t.empty", "array", ("i32", [])),
        ("t.strs", "array", ("str", ["a", "", "\u00fc\\"])),
        ("t.bools", "array", ("bool", [True, False])),
        ("t.nested", "array", ("array", [("u8", [1, 2]),
                                         ("str", ["x"]),
                                         ("array", [("f64", [1.5])])])),
    ]


def hostile_files(good):
    """Broken GGUF files: [(name, bytes, words the error must contain)].
    good: the bytes of a valid file to damage."""

    def kvs(n_t, body, n_kv=1, version=3):
        return b"GGUF" + struct.pack("<IQQ", version, n_t, n_kv) + body

    def tinfo(name, ne, typ, off):
        return (gstr(name) + struct.pack("<I", len(ne)) +
            struct.pack("<%dQ" % len(ne), *ne) +
            struct.pack("<IQ", typ, off))
    k = kv("k", "str", "v")
    pad = b"\0" * 4096
    return [
        ("magic", b"GGUX" + good[4:],
         ["InvalidGguf", 'magic is "GGUX" (bytes 47 47 55 58), not "GGUF"',
          "fetch it again"]),
        ("zeromagic", b"\0" * 4 + good[4:],
         ["InvalidGguf", "bytes 00 00 00 00", 'not "GGUF"']),
        ("ggjt", b"tjgg" + struct.pack("<I", 3) + good[8:],
         ["InvalidGguf", '"ggjt"', "before GGUF",
          "convert_llama_ggml_to_gguf.py"]),
        ("lfs", b"version https://git-lfs.github.com/spec/v1\noid "
         b"sha256:" + b"0" * 64 + b"\nsize 4660\n",
         ["InvalidGguf", "Git LFS pointer", "git lfs pull", "magic"]),
        ("empty", b"", ["InvalidGguf", "empty file"]),
        ("version1", b"GGUF" + struct.pack("<I", 1) + good[8:],
         ["version 1"]),
        ("version9", b"GGUF" + struct.pack("<I", 9) + good[8:],
         ["version 9"]),
        ("truncated", good[:-1], ["past the file's end"]),
        ("tcount", kvs(1 << 62, k), ["tensor count"]),
        ("kvcount", kvs(0, k, n_kv=1 << 62), ["metadata count"]),
        ("longstr", kvs(0, struct.pack("<Q", 1 << 40) + pad, 1),
         ["past the file's end"]),
        ("vtype", kvs(0, gstr("k") + struct.pack("<I", 13) +
                  pad), ["unknown value type 13"]),
        ("bigarray", kvs(0, gstr("k") +
                 struct.pack("<IIQ", 9, 4, 1 << 60) + pad),
         ["array of"]),
        ("dupkey", kvs(0, k + k, 2), ["appears twice"]),
        ("align", kvs(0, kv("general.alignment", "u32", 12)),
         ["general.alignment", "power of two multiple of 8"]),
        ("align24", kvs(0, kv("general.alignment", "u32", 24)),
         ["general.alignment", "power of two multiple of 8"]),
        ("aligntype", kvs(0, kv("general.alignment", "u64", 64)),
         ["general.alignment", "u32"]),
        ("ggmltype", kvs(1, k + tinfo("x", [4], 4, 0)) + pad,
         ["unknown ggml type 4"]),
        ("ggmltype99", kvs(1, k + tinfo("x", [4], 99, 0)) + pad,
         ["unknown ggml type 99"]),
        ("block", kvs(1, k + tinfo("x", [31], 8, 0)) + pad,
         ["not whole blocks"]),
        ("dims", kvs(1, k + tinfo("x", [1] * 5, 0, 0)) + pad,
         ["dimensions"]),
        ("overflow", kvs(1, k + tinfo("x", [1 << 40, 1 << 40], 0, 0)) +
         pad, ["overflows"]),
        ("unaligned", kvs(1, k + tinfo("x", [4], 0, 8)) + pad,
         ["not a multiple of the alignment"]),
        ("pastend", kvs(1, k + tinfo("x", [4096], 0, 0)) + pad,
         ["past the file's end"]),
        ("overlap", kvs(2, k + tinfo("x", [16], 0, 0) +
                tinfo("y", [16], 0, 32)) + pad,
         ["overlap"]),
        ("dupname", kvs(2, k + tinfo("x", [4], 0, 0) +
                tinfo("x", [4], 0, 32)) + pad,
         ["appears twice"]),
        ("utf8", kvs(0, gstr(b"\xff") + struct.pack("<I", 4) +
                 b"\0" * 4), ["UTF-8"]),
        ("nest", kvs(0, gstr("k") + struct.pack("<I", 9) +
                 struct.pack("<IQ", 9, 1) * 20 + pad), ["nested"]),
        ("bool", kvs(0, gstr("k") + struct.pack("<IB", 7, 2)),
         ["bool"]),
    ]


if __name__ == "__main__":
    import sys
    rng = np.random.default_rng(1)
    ts = [("t.%s" % t, t, [2, TYPES[t][1]], None) for t in TYPES]
    write(sys.argv[1] if len(sys.argv) > 1 else "every.gguf", ts,
          metadata=every_value_type(), rng=rng)
