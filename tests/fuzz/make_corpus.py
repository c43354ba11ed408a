#!/usr/bin/python3
"""make_corpus.py - write the fuzzers' seed corpus (tests/fuzz/corpus/).

    make_corpus.py [OUTDIR]      (default: corpus/ next to this script)

corpus/header/NAME  input of fuzz_header: an 8-byte little-endian word X
                    followed by header bytes H.  X is the data length the
                    file claims (top bit clear), so a header whose tensors
                    cover X bytes is valid as a parse; see fuzz_header.c.
                    Names starting "file-" are whole files (prefix, header,
                    data) meant for the raw-file pass of the target;
                    "file-torch-" ones are PyTorch checkpoints written with
                    torch.save (python3-torch), which that pass reads
                    through format/torch (zip, pickle, state dict).
corpus/names/NAME   input of fuzz_names: a tensor name or a file name.
corpus/pickle/NAME  input of fuzz_pickle: a pickle; the pickles of
                    tests/data/pickle/ (torch.save, pickle.dumps, hostile
                    ones) and hand-made ones at each limit and refusal.
corpus/index/NAME   input of fuzz_index: the text of a
                    model.safetensors.index.json placed next to the two
                    shards fuzz_index.c writes (a, b | c, x/y, "nul\\0z").

Files this script does not write are left as they are, and listed: fz-HASH
are inputs the fuzzers found that reach new code (minimized with
-merge=1), committed so that short CI runs start deep; others were added by
hand, such as the inputs a CI fuzz run crashed on (header/gguf-whole-file,
index/empty-weight-map).  A seed renamed here leaves its old file behind:
remove it with git rm.

One seed per rule of the safetensors format (header.c checks them; valid and
invalid), small enough to commit.  The output is deterministic: running it
again rewrites the same bytes (torch's random initialisation seeded, zip
entries dated 1980-01-01, the legacy format's storage keys, which are
addresses, renamed 0, 1, ...), so `git status` stays clean.
"""

import json
import os
import struct
import sys

MAX_HEADER = 100_000_000
U64 = 2**64 - 1

DTYPES = [
	("BOOL", 8), ("F4", 4), ("F6_E2M3", 6), ("F6_E3M2", 6),
	("U8", 8), ("I8", 8), ("F8_E5M2", 8), ("F8_E4M3", 8), ("F8_E8M0", 8),
	("F8_E4M3FNUZ", 8), ("F8_E5M2FNUZ", 8),
	("I16", 16), ("U16", 16), ("F16", 16), ("BF16", 16),
	("I32", 32), ("U32", 32), ("F32", 32),
	("C64", 64), ("F64", 64), ("I64", 64), ("U64", 64),
]
BITS = dict(DTYPES)


def ent(dtype, shape, b, e):
	return '{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}' % (
		dtype, ",".join(str(d) for d in shape), b, e)


def obj(pairs):
	"""Object text from (raw key text, raw value text) pairs; keys are
	written as given (already quoted), so escapes stay what we wrote."""
	return "{" + ",".join("%s:%s" % kv for kv in pairs) + "}"


def tensors(spec):
	"""[(name, dtype, shape)] laid out back to back -> (pairs, data_len)."""
	pairs, off = [], 0
	for name, dtype, shape in spec:
		n = 1
		for d in shape:
			n *= d
		nbytes = n * BITS[dtype] // 8
		pairs.append((json.dumps(name), ent(dtype, shape, off, off + nbytes)))
		off += nbytes
	return pairs, off


def pad8(b):
	return b + b" " * (-len(b) % 8)


class Corpus:
	def __init__(self, outdir):
		self.outdir = outdir
		self.written = {"header": set(), "index": set(), "names": set(),
				"pickle": set()}

	def put(self, kind, name, data):
		if isinstance(data, str):
			data = data.encode("utf-8")
		d = os.path.join(self.outdir, kind)
		os.makedirs(d, exist_ok=True)
		assert name not in self.written[kind], name
		self.written[kind].add(name)
		with open(os.path.join(d, name), "wb") as f:
			f.write(data)

	def header(self, name, text, data_len=0):
		"""A parse seed: X = data_len, then the header bytes."""
		if isinstance(text, str):
			text = text.encode("utf-8")
		self.put("header", name, struct.pack("<Q", data_len) + text)

	def header_size(self, name, text, file_size):
		"""A parse seed with an absolute (any) file size."""
		if isinstance(text, str):
			text = text.encode("utf-8")
		self.put("header", name,
			 struct.pack("<Q", (1 << 63) | file_size) + text)

	def file(self, name, prefix, text, data=b""):
		"""A whole-file seed (raw-file pass)."""
		if isinstance(text, str):
			text = text.encode("utf-8")
		self.put("header", "file-" + name,
			 struct.pack("<Q", prefix) + text + data)

	def others(self):
		"""The files of the corpus not written here but by hand (fz-*,
		the fuzzers' units, are not listed): kept, never removed."""
		out = []
		for kind, names in sorted(self.written.items()):
			d = os.path.join(self.outdir, kind)
			out += [kind + "/" + f for f in sorted(os.listdir(d))
				if f not in names and not f.startswith("fz-")]
		return out


def header_seeds(c):
	H = c.header
	# ---- valid -------------------------------------------------------
	H("ok-empty", "{}")
	H("ok-empty-padded", "{}      ")
	H("ok-ws-leading", "\t\n{}\r ")
	p, n = tensors([("w", "F32", [2, 3])])
	H("ok-one", obj(p), n)
	p, n = tensors([(d, d, [8]) for d, _ in DTYPES])
	H("ok-all-dtypes", obj(p), n)
	p, n = tensors([("s", "F64", []), ("z", "F32", [0, 5]), ("t", "U8", [3])])
	H("ok-scalar-zero", obj(p), n)
	p, n = tensors([("z0", "I8", [0]), ("z1", "I8", [0]), ("a", "U8", [1])])
	H("ok-zero-size-run", obj(p), n)
	p, n = tensors([("f4", "F4", [4]), ("f6", "F6_E2M3", [4]),
			("f6b", "F6_E3M2", [4, 2])])
	H("ok-subbyte", obj(p), n)
	p, n = tensors([("w", "U8", [4])])
	H("ok-metadata", obj([('"__metadata__"',
			       '{"format":"pt","k":"v\\n\\u0000"}')] + p), n)
	H("ok-metadata-last", obj(p + [('"__metadata__"', '{"a":"b"}')]), n)
	H("ok-metadata-null", obj([('"__metadata__"', "null")] + p), n)
	H("ok-metadata-empty", obj([('"__metadata__"', "{}")]))
	H("ok-metadata-escaped-key", obj([('"\\u005f_metadata__"', '{"x":"y"}')]
					 + p), n)
	H("ok-METADATA-is-tensor", obj([('"__METADATA__"', ent("U8", [2], 0, 2))]),
	  2)
	H("ok-dup-meta-inner", obj([('"__metadata__"', '{"a":"1","a":"2"}')]))
	# reverse order in the JSON: order must not matter
	H("ok-reverse-order", obj([('"b"', ent("U8", [2], 2, 4)),
				   ('"a"', ent("U8", [2], 0, 2))]), 4)
	H("ok-dtype-map-null", '{"w":{"dtype":{"U8":null},"shape":[2],'
	  '"data_offsets":[0,2]}}', 2)
	H("ok-entry-as-array", '{"w":["U8",[2],[0,2]]}', 2)
	H("ok-unknown-fields", '{"w":{"x":[1,{"y":null}],"dtype":"U8","z":1.5e3,'
	  '"shape":[2],"data_offsets":[0,2],"q":"\\ud83d\\ude00"}}', 2)
	H("ok-depth-125", '{"w":{"x":' + "[" * 125 + "]" * 125 +
	  ',"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1)
	H("ok-names", obj([(json.dumps("a/b"), ent("U8", [1], 0, 1)),
			   ('"a\\/c"', ent("U8", [1], 1, 2)),
			   ('""', ent("U8", [1], 2, 3)),
			   ('"."', ent("U8", [1], 3, 4)),
			   ('".."', ent("U8", [1], 4, 5)),
			   ('"n\\u0000ul"', ent("U8", [1], 5, 6)),
			   ('"ctl\\u0001\\u001f\\t"', ent("U8", [1], 6, 7)),
			   ('"\\ud83d\\ude00 émoji"', ent("U8", [1], 7, 8)),
			   ('"名前"', ent("U8", [1], 8, 9))]), 9)
	H("ok-long-name", obj([(json.dumps("n" * 4000), ent("U8", [1], 0, 1))]),
	  1)
	H("ok-dup-name-last-wins", '{"w":{"dtype":"U8","shape":[9],'
	  '"data_offsets":[0,9]},"w":{"dtype":"U8","shape":[2],'
	  '"data_offsets":[0,2]}}', 2)
	H("ok-zero-product-no-overflow", obj([('"w"', ent("U8", [0, U64, 2], 0,
							 0))]))
	H("ok-big-dims", obj([('"w"', ent("U8", [2**32, 2**30], 0, 2**62))]),
	  2**62)
	H("valid-near-u64", obj([('"w"', ent("U8", [U64 - 1000], 0,
					    U64 - 1000))]), 2**62)
	H("ok-ws-everywhere", ' { "w" : { "dtype" : "U8" , "shape" : [ 1 , 2 ]'
	  ' , "data_offsets" : [ 0 , 2 ] } } \n', 2)
	# ---- file-level (raw pass): prefix, header, data -----------------
	hdr = pad8(obj(tensors([("w", "F32", [2])])[0]).encode())
	c.file("ok", len(hdr), hdr, bytes(range(8)))
	c.put("header", "file-too-small", b"\x07\x00\x00")
	c.file("header-too-large", MAX_HEADER + 1, b"{}")
	c.file("header-at-limit", MAX_HEADER, b"{}")
	c.file("header-len-past-end", 100, b"{}")
	c.file("header-len-u64-max", U64, b"{}")
	c.file("lfs-pointer", struct.unpack("<Q", b"version ")[0],
	       b"https://git-lfs.github.com/spec/v1\n")
	c.file("extra-data", len(hdr), hdr, bytes(9))
	c.file("short-data", len(hdr), hdr, bytes(7))
	c.file("zero-prefix", 0, b"")
	# ---- UTF-8 (InvalidHeader) ---------------------------------------
	H("utf8-bad-byte", b'{"\xff":' + ent("U8", [1], 0, 1).encode() + b"}", 1)
	H("utf8-overlong", b'{"\xc0\xaf":' + ent("U8", [1], 0, 1).encode() + b"}",
	  1)
	H("utf8-surrogate", b'{"\xed\xa0\x80":' + ent("U8", [1], 0, 1).encode() +
	  b"}", 1)
	H("utf8-truncated", b'{"a":' + ent("U8", [1], 0, 1).encode() + b"}\xe6\x97",
	  1)
	H("utf8-above-max", b'{"\xf4\x90\x80\x80":1}')
	H("utf8-bom", b"\xef\xbb\xbf{}")
	# ---- JSON grammar (InvalidHeaderDeserialization) ----------------
	for name, text in [
		("json-array-root", "[]"), ("json-empty", ""), ("json-ws-only", "  "),
		("json-ff", "\f{}"), ("json-nul-pad", "{}\0\0\0\0\0\0"),
		("json-two-objects", "{}{}"), ("json-trailing", "{} x"),
		("json-unclosed", '{"w":'), ("json-trailing-comma", '{"a":{},}'),
		("json-single-quote", "{'a':1}"), ("json-bare-key", "{a:1}"),
		("json-raw-ctl", '{"a\x01":1}'), ("json-raw-nl", '{"a\n":1}'),
		("json-bad-escape", r'{"a\x":1}'), ("json-lone-hi", r'{"\ud800":1}'),
		("json-lone-lo", r'{"\udc00":1}'), ("json-hi-hi", r'{"\ud800\ud800":1}'),
		("json-short-hex", r'{"\u12":1}'), ("json-depth-128",
		'{"w":{"x":' + "[" * 126 + "]" * 126 +
		',"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'),
		("json-depth-200", "{\"w\":" + "[" * 200 + "]" * 200 + "}"),
		("json-1e400", '{"w":{"x":1e400,"dtype":"U8","shape":[1],'
		 '"data_offsets":[0,1]}}'),
		("json-nan", '{"w":{"x":NaN,"dtype":"U8","shape":[1],'
		 '"data_offsets":[0,1]}}'),
		("json-minus-inf", '{"w":{"x":-Infinity}}'),
		("json-bad-literal", '{"w":{"x":tru}}'),
		("json-lone-minus", '{"w":{"x":-}}'),
		("json-dot-number", '{"w":{"x":1.}}'),
		("json-exp-no-digits", '{"w":{"x":1e}}'),
	]:
		H(name, text, 1)
	# ---- schema ------------------------------------------------------
	def w(body, n=1):
		return '{"w":' + body + "}", n
	for name, (text, n) in [
		("schema-top-number", ("1", 0)),
		("schema-entry-null", w("null")),
		("schema-entry-string", w('"U8"')),
		("schema-entry-number", w("1")),
		("schema-entry-array-4", w('["U8",[1],[0,1],1]')),
		("schema-entry-array-2", w('["U8",[1]]')),
		("schema-missing-dtype", w('{"shape":[1],"data_offsets":[0,1]}')),
		("schema-missing-shape", w('{"dtype":"U8","data_offsets":[0,1]}')),
		("schema-missing-offsets", w('{"dtype":"U8","shape":[1]}')),
		("schema-dup-dtype", w('{"dtype":"U8","dtype":"U8","shape":[1],'
				       '"data_offsets":[0,1]}')),
		("schema-dup-shape", w('{"dtype":"U8","shape":[1],"shape":[1],'
				       '"data_offsets":[0,1]}')),
		("schema-dtype-lower", w(ent("u8", [1], 0, 1))),
		("schema-dtype-space", w(ent("U8 ", [1], 0, 1))),
		("schema-dtype-f128", w(ent("F128", [1], 0, 1))),
		("schema-dtype-empty", w(ent("", [1], 0, 1))),
		("schema-dtype-map-1", w('{"dtype":{"U8":1},"shape":[1],'
					 '"data_offsets":[0,1]}')),
		("schema-dtype-map-2", w('{"dtype":{"U8":null,"I8":null},'
					 '"shape":[1],"data_offsets":[0,1]}')),
		("schema-dtype-number", w('{"dtype":8,"shape":[1],'
					  '"data_offsets":[0,1]}')),
		("schema-shape-not-array", w('{"dtype":"U8","shape":1,'
					     '"data_offsets":[0,1]}')),
		("schema-shape-float", w('{"dtype":"U8","shape":[1.0],'
					 '"data_offsets":[0,1]}')),
		("schema-shape-exp", w('{"dtype":"U8","shape":[1e0],'
				       '"data_offsets":[0,1]}')),
		("schema-shape-neg", w('{"dtype":"U8","shape":[-1],'
				       '"data_offsets":[0,1]}')),
		("schema-shape-neg0", w('{"dtype":"U8","shape":[-0],'
					'"data_offsets":[0,0]}', 0)),
		("schema-shape-lead0", w('{"dtype":"U8","shape":[01],'
					 '"data_offsets":[0,1]}')),
		("schema-shape-plus", w('{"dtype":"U8","shape":[+1],'
					'"data_offsets":[0,1]}')),
		("schema-shape-string", w('{"dtype":"U8","shape":["1"],'
					  '"data_offsets":[0,1]}')),
		("schema-shape-true", w('{"dtype":"U8","shape":[true],'
					'"data_offsets":[0,1]}')),
		("schema-shape-null", w('{"dtype":"U8","shape":[null],'
					'"data_offsets":[0,1]}')),
		("schema-shape-2pow64", w('{"dtype":"U8","shape":[%d],'
					  '"data_offsets":[0,1]}' % 2**64)),
		("schema-offsets-1", w('{"dtype":"U8","shape":[1],'
				       '"data_offsets":[0]}')),
		("schema-offsets-3", w('{"dtype":"U8","shape":[1],'
				       '"data_offsets":[0,1,2]}')),
		("schema-offsets-obj", w('{"dtype":"U8","shape":[1],'
					 '"data_offsets":{"0":1}}')),
		("schema-offsets-2pow64", w('{"dtype":"U8","shape":[1],'
					    '"data_offsets":[0,%d]}' % 2**64)),
		("schema-meta-number", ('{"__metadata__":{"a":1}}', 0)),
		("schema-meta-nested", ('{"__metadata__":{"a":{}}}', 0)),
		("schema-meta-null-value", ('{"__metadata__":{"a":null}}', 0)),
		("schema-meta-array", ('{"__metadata__":["a"]}', 0)),
		("schema-meta-string", ('{"__metadata__":"a"}', 0)),
		("schema-meta-dup", ('{"__metadata__":{},"__metadata__":{}}', 0)),
		("schema-meta-dup-escaped", ('{"__metadata__":{},'
					     '"\\u005f_metadata__":{}}', 0)),
	]:
		H(name, text, n)
	# ---- validation --------------------------------------------------
	H("valid-gap", obj([('"a"', ent("U8", [1], 0, 1)),
			    ('"b"', ent("U8", [1], 2, 3))]), 3)
	H("valid-overlap", obj([('"a"', ent("U8", [2], 0, 2)),
				('"b"', ent("U8", [2], 1, 3))]), 3)
	H("valid-same-range", obj([('"a"', ent("U8", [2], 0, 2)),
				   ('"b"', ent("U8", [2], 0, 2))]), 2)
	H("valid-end-before-begin", obj([('"a"', ent("U8", [0], 2, 1))]), 2)
	H("valid-not-from-zero", obj([('"a"', ent("U8", [1], 1, 2))]), 2)
	H("valid-zero-size-past-end", obj([('"a"', ent("U8", [1], 0, 1)),
					   ('"b"', ent("U8", [0], 5, 5))]), 1)
	H("valid-overflow-shape", obj([('"a"', ent("U8", [U64, 2, 0], 0, 0))]))
	H("valid-overflow-bits", obj([('"a"', ent("U8", [2**61], 0, 2**61))]),
	  2**61)
	H("valid-overflow-bits-f64", obj([('"a"', ent("F64", [2**58], 0, 2**61))]),
	  2**61)
	H("valid-huge-product", obj([('"a"', ent("F32", [2**20] * 4, 0, 4))]), 4)
	H("valid-misaligned-f4", obj([('"a"', ent("F4", [3], 0, 1))]), 1)
	H("valid-misaligned-f6", obj([('"a"', ent("F6_E2M3", [2], 0, 1))]), 1)
	H("valid-invalid-info", obj([('"a"', ent("F32", [2], 0, 4))]), 4)
	H("valid-blame-first", obj([('"a"', ent("F32", [2], 0, 4)),
				    ('"b"', ent("U8", [1], 9, 10))]), 10)
	p, n = tensors([("w", "U8", [4])])
	H("valid-incomplete-extra", obj(p), n + 1)
	H("valid-incomplete-short", obj(p), n - 1)
	H("valid-dup-name-dropped", '{"a":' + ent("U8", [2], 0, 2) + ',"b":' +
	  ent("U8", [2], 2, 4) + ',"a":' + ent("U8", [2], 0, 2) + "}", 4)
	H("valid-dup-name-gap", '{"a":' + ent("U8", [2], 0, 2) + ',"b":' +
	  ent("U8", [2], 2, 4) + ',"b":' + ent("U8", [2], 0, 2) + "}", 4)
	# absolute file sizes: smaller than the header, 0, u63 max
	c.header_size("size-smaller-than-header", "{}", 3)
	c.header_size("size-zero", "{}", 0)
	c.header_size("size-huge", obj([('"a"', ent("U8", [1], 0, 1))]),
		      (1 << 63) - 1)
	# many metadata keys (the key table grows), with a repeated key
	meta = ",".join('"k%d":"v%d"' % (i, i) for i in range(40))
	H("ok-metadata-many", '{"__metadata__":{%s,"k7":"again"}}' % meta)
	H("ok-metadata-many-tensors", '{"__metadata__":{%s},%s}' % (
		meta, obj(tensors([("t%d" % i, "U8", [1]) for i in range(40)])[0])
		[1:-1]), 40)
	# many tiny tensors
	p, n = tensors([("t%d" % i, "BOOL", [1]) for i in range(300)])
	H("many-tensors", obj(p), n)
	# real files' headers (written by the reference library)
	real = os.path.join(os.path.dirname(os.path.abspath(__file__)),
			    "..", "data", "real")
	if os.path.isdir(real):
		for f in sorted(os.listdir(real)):
			if not f.endswith(".safetensors"):
				continue
			with open(os.path.join(real, f), "rb") as fh:
				blob = fh.read()
			n = struct.unpack("<Q", blob[:8])[0]
			H("real-" + f[:-12], blob[8:8 + n], len(blob) - 8 - n)


def index_seeds(c):
	S1 = "model-00001-of-00002.safetensors"
	S2 = "model-00002-of-00002.safetensors"
	full = {"a": S1, "b": S1, "c": S2, "x/y": S2, "nul\0z": S2}

	def idx(name, wmap, meta={"total_size": 52}, raw=None):
		if raw is None:
			d = {}
			if meta is not None:
				d["metadata"] = meta
			if wmap is not None:
				d["weight_map"] = wmap
			raw = json.dumps(d, indent=2)
		c.put("index", name, raw)

	def without(*keys):
		return {k: v for k, v in full.items() if k not in keys}

	idx("ok", full)
	idx("ok-no-metadata", full, None)
	idx("ok-metadata-null", full, raw=json.dumps({"metadata": None,
						       "weight_map": full}))
	idx("ok-metadata-rich", full, {"total_size": 52, "total_parameters": 13,
				       "format": "pt", "nested": {"a": [1, 2.5]},
				       "s": "\u00e9\u0000"})
	idx("ok-one-shard", {"a": S1, "b": S1})
	idx("ok-compact", full, raw=json.dumps({"weight_map": full},
					      separators=(",", ":")))
	idx("ok-extra-keys", full, raw=json.dumps({"weight_map": full,
						   "other": [1, {"x": None}]}))
	idx("ok-escaped-names", full, raw='{"weight_map":{"\\u0061":"%s",'
	    '"b":"%s","c":"model-00002-of-00002.safetensor\\u0073",'
	    '"x\\/y":"%s","nul\\u0000z":"%s"}}' % (S1, S1, S2, S2))
	# refused
	idx("not-json", None, raw='{"metadata": {}, "weight_map": {')
	idx("empty", None, raw="")
	idx("array-root", None, raw="[]")
	idx("no-weight-map", None)
	idx("weight-map-array", None, raw='{"weight_map": ["a"]}')
	idx("weight-map-empty", {})
	idx("metadata-string", full, "x")
	idx("metadata-array", full, [1])
	idx("value-number", dict(full, a=1))
	idx("value-null", dict(full, a=None))
	idx("value-nul", dict(full, a=S1 + "\0"))
	idx("value-nul-mid", dict(full, a="model-0\u00000001-of-00002.safetensors"))
	idx("dup-key", None, raw='{"weight_map":{"a":"%s","a":"%s","b":"%s",'
	    '"c":"%s","x/y":"%s","nul\\u0000z":"%s"}}' % (S1, S1, S1, S2, S2, S2))
	idx("dup-weight-map", None, raw='{"weight_map":{},"weight_map":%s}'
	    % json.dumps(full))
	idx("unlisted-tensor", without("b"))
	idx("unlisted-nul-tensor", without("nul\0z"))
	idx("absent-tensor", dict(full, ghost=S1))
	idx("wrong-shard", dict(full, a=S2))
	idx("dotdot", dict(full, a="../" + S1))
	idx("dotdot-mid", dict(full, a="x/../" + S1))
	idx("dot", dict(full, a="./" + S1))
	idx("absolute", dict(full, a="/etc/x.safetensors"))
	idx("absolute-self", dict(full, a="/tmp/" + S1))
	idx("backslash", dict(full, a="..\\" + S1))
	idx("url", dict(full, a="http://127.0.0.1:1/" + S1))
	idx("file-url", dict(full, a="file:///etc/passwd.safetensors"))
	idx("not-safetensors", dict(full, a="model.safetensors.index.json"))
	idx("empty-name", dict(full, a=""))
	idx("empty-component", dict(full, a="sub//" + S1))
	idx("missing-shard", dict(full, a="model-00003-of-00003.safetensors"))
	idx("subdir-shard", dict(full, a="sub/" + S1))
	idx("dev-null", dict(full, a="/dev/null"))
	idx("proc", dict(full, a="/proc/self/fd/0.safetensors"))
	idx("self-dir", dict(full, a=".safetensors"))
	idx("deep", None, raw='{"weight_map":' + "[" * 200 + "]" * 200 + "}")
	idx("deep-metadata", full, raw='{"metadata":' + '{"a":' * 300 + "1" +
	    "}" * 300 + ',"weight_map":' + json.dumps(full) + "}")
	idx("big-numbers", full, {"total_size": 2**64, "x": 1e308, "y": -2**63})
	idx("bad-utf8", None, raw=b'{"weight_map":{"\xff":"' + S1.encode() +
	    b'"}}')
	idx("trailing", None, raw=json.dumps({"weight_map": full}) + " x")
	idx("nul-in-text", None, raw=json.dumps({"weight_map": full}) + "\0")
	idx("bom", None, raw=b"\xef\xbb\xbf" + json.dumps({"weight_map": full})
	    .encode())
	idx("ok-dup-file", {"a": "dup.safetensors", "z": "dup.safetensors"})
	idx("ok-dup-file-and-2", dict(without("a", "b"), a="dup.safetensors",
				      z="dup.safetensors"))
	idx("two-shards-same-tensor", dict(full, z="dup.safetensors"))
	idx("invalid-shard", dict(full, q="bad.safetensors"))
	idx("symlink-outside", dict(full, q="escape.safetensors"))
	idx("many-shards", {"t%d" % i: "model-%05d-of-00500.safetensors" % i
			    for i in range(500)})


def names_seeds(c):
	"""Tensor names that need encoding, and file names (valid encodings
	and near misses) for the decoder."""
	names = ["", "/", "a/b", "/leading", "trailing/", "..", ".", ".hidden",
		 "x.json", ".json", "a.json.json", "x.JSON", "__summary__",
		 "__x__", "__", "___", "_", "__metadata__.json", "100%", "%",
		 "%41", "%2F", "x%~0123456789abcdef", "nul\0inside", "\0",
		 "ctrl\x01\x1f", "del\x7f", "new\nline", "\u6a21\u578b",
		 "emoji \U0001F600", "\u00e9", "L" * 250, "L" * 251,
		 "L" * 260 + "1", "/" * 84, "a" + "\u6a21" * 100,
		 "b" * 199 + "/" + "c" * 80, "\U0001F600" * 70,
		 # encoded forms and near misses, for decoding
		 "%2Ehidden", "x%2Ejson", "%5F_x__", "a%2fb", "a%2", "%zz", "a/b",
		 "%~", "L" * 200 + "%~0123456789abcdef"]
	for i, nm in enumerate(names):
		c.put("names", "n%02d" % i, nm.encode("utf-8"))
	c.put("names", "bad-utf8", b"a\xff\xc0\xafb")


DICT_TOKENS = [
	'"dtype"', '"shape"', '"data_offsets"', '"__metadata__"', '"weight_map"',
	'"metadata"', '"total_size"', '"\\u0000"', '"\\ud83d\\ude00"', '"\\u005f"',
	'"\\/"', '"\\\\"', "null", "true", "false", str(U64), str(U64 + 1),
	"1e400", "-0", '"model-00001-of-00002.safetensors"',
	'"model-00002-of-00002.safetensors"', '"../"', '".safetensors"', '"x/y"',
	'"nul\\u0000z"',
] + ['"%s"' % d for d, _ in DTYPES]


def write_dict(path):
	"""libFuzzer dictionary (-dict=) of the tokens both formats use."""
	with open(path, "w") as f:
		f.write("# written by make_corpus.py: JSON tokens of safetensors "
			"headers and indexes\n")
		for i, tok in enumerate(DICT_TOKENS):
			esc = tok.replace("\\", "\\\\").replace('"', '\\"')
			f.write('t%d="%s"\n' % (i, esc))


def pickle_seeds(c):
	kept = os.path.join(os.path.dirname(os.path.abspath(__file__)),
			    "..", "data", "pickle")
	for f in sorted(os.listdir(kept)):
		if f.endswith(".pkl"):
			with open(os.path.join(kept, f), "rb") as fh:
				c.put("pickle", f[:-4], fh.read())
	P = lambda name, b: c.put("pickle", name, b)
	P("deep", b"(" * 300 + b"l" * 300 + b".")
	P("laughs", b"]" + b"q\x00h\x00\x86" * 30 + b".")
	P("cycle", b"]q\x00h\x00a.")
	P("cycle-call", b"ctorch._utils\n_rebuild_parameter\n)Rq\x00h\x00b.")
	P("long-ops", b"\x80\x02(\x8a\x02\x7f\xff\x8b\x01\x00\x00\x00\x80"
	  b"]r\x05\x00\x00\x00j\x05\x00\x00\x00B\x01\x00\x00\x00a"
	  b"\x8e\x01\x00\x00\x00\x00\x00\x00\x00b"
	  b"\x8d\x01\x00\x00\x00\x00\x00\x00\x00c(K\x01K\x02dl.")
	P("latin1", b"c_codecs\nencode\nX\x04\x00\x00\x00\xc3\xbf\xc2\x80"
	  b"X\x06\x00\x00\x00latin1\x86R.")
	P("huge-len", b"X\xff\xff\xff\xff")
	P("memo-far", b"Nr\xff\xff\xff\xff.")
	P("underflow", b"N(R.")
	P("build-call", b"ctorch._utils\n_rebuild_parameter\n)R}b.")
	# values beside tensors (issue 30): wide ints, sets, torch.Size,
	# devices, defaultdict, objects described with their state and items
	P("long-wide", b"\x80\x02(\x8a\x09\xfb\xff\xff\xff\xff\xff\xff\xff\x00"
	  b"\x8a\x09\x01\x00\x00\x00\x00\x00\x00\x00\x00"
	  b"\x8b\x0b\x00\x00\x00" + b"\x00" * 10 + b"\xffl.")
	P("long4-hex", b"\x8b\x00\x08\x00\x00\x01" + b"\x00" * 2046 + b"\x80.")
	P("sets", b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00(\x8f\x94"
	  b"(K\x01K\x02\x90(K\x03\x91c__builtin__\nset\n]K\x04a\x85R"
	  b"cbuiltins\nfrozenset\n)Rl.")
	P("size-device", b"\x80\x02(ctorch\nSize\nK\x03K\x04\x86\x85R"
	  b"ctorch\ndevice\nX\x04\x00\x00\x00cudaK\x00\x86R"
	  b"ctorch\ndevice\nX\x03\x00\x00\x00cpu\x85Rctorch\nfloat16\nl.")
	P("objects", b"\x80\x02}(X\x01\x00\x00\x00a"
	  b"cargparse\nNamespace\n)\x81}(X\x02\x00\x00\x00lrK\x01ub"
	  b"X\x01\x00\x00\x00bcm\nC\n)\x81(K\x01K\x02u"
	  b"X\x01\x00\x00\x00ccm\nL\n)\x81(K\x01e"
	  b"X\x01\x00\x00\x00dccollections\ndefaultdict\n"
	  b"c__builtin__\nlist\n\x85R(X\x01\x00\x00\x00kK\x01u"
	  b"X\x01\x00\x00\x00ecposix\nsystem\nX\x02\x00\x00\x00ls\x85R)R"
	  b"u.")
	P("latin1-shared", b"\x80\x02](c_codecs\nencode\nq\x01"
	  b"X\x06\x00\x00\x00latin1q\x02X\x02\x00\x00\x00\xc3\xbfq\x00"
	  + b"h\x01h\x00h\x02\x86R" * 4 + b"e.")
	# protocols 0 and 1 beyond the kept ones: Python 2's strings and
	# instances, POP, POP_MARK, DUP, PERSID, every escape; NEWOBJ_EX,
	# BYTEARRAY8, bytes()
	P("proto0-ops", b"(lp0\nI01\naI-12\naL123456789012345678901234L\na"
	  b"F1e-05\naFnan\naS'a\\'\\x41\\101\\n\\q'\naS'\\xff'\np1\na"
	  b"Vx\\u00e9\\U0001f600\\y\xe9\nag1\naNK\x0100(0(N1K\x012\x86a"
	  b"Pstorage_0\na(cm\nC\nK\x01oa(K\x02im\nD\na.")
	P("proto1-strings", b"](T\x02\x00\x00\x00abU\x01\xffU\x02\xc3\xa9e.")
	P("newobj-ex", b"\x80\x04]\x94(cm\nC\n\x94K\x01\x85}X\x01\x00\x00"
	  b"\x00kK\x02s\x92h\x01)}\x92\x96\x02\x00\x00\x00\x00\x00\x00\x00ab"
	  b"c__builtin__\nbytes\n)Re.")
	# torch 2's new dtypes: _rebuild_tensor_v3 over an untyped storage
	P("tensor-v3", b"\x80\x02ctorch._utils\n_rebuild_tensor_v3\n"
	  b"((X\x07\x00\x00\x00storagectorch.storage\nUntypedStorage\n"
	  b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQK\x00K\x04\x85"
	  b"K\x01\x85\x89ccollections\nOrderedDict\n)R"
	  b"ctorch\nfloat8_e4m3fn\ntR.")


def torch_seeds(c):
	import io
	import zipfile

	import torch

	def save(obj, **kw):
		b = io.BytesIO()
		torch.save(obj, b, **kw)
		return b.getvalue()

	def entry(zo, name, b, compress=zipfile.ZIP_STORED):
		"""writestr(name, b) would date the entry now."""
		i = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
		i.compress_type = compress
		i.external_attr = 0o600 << 16
		zo.writestr(i, b)

	def rezip(data, compress=zipfile.ZIP_STORED, extra=()):
		out = io.BytesIO()
		with zipfile.ZipFile(io.BytesIO(data)) as zi, \
		     zipfile.ZipFile(out, "w") as zo:
			for i in zi.infolist():
				entry(zo, i.filename, zi.read(i), compress)
			for name, b in extra:
				entry(zo, name, b, compress)
		return out.getvalue()

	def legacy_keys(data):
		"""The legacy format names each storage by its address
		(str(storage._cdata)), another each run: rename them 0, 1, ...
		in the pickle and in the list of keys that follows it (the
		records are length-prefixed, so other lengths are fine)."""
		import pickle
		import pickletools

		def rec(k):	# BINUNICODE k
			b = k.encode()
			return b"X" + struct.pack("<I", len(b)) + b
		f = io.BytesIO(data)
		for _ in range(3):	# magic number, protocol, sys_info
			pickle.load(f)
		for op, _, _ in pickletools.genops(f):	# the object, up to STOP
			if op.name == "STOP":
				break
		for i, key in enumerate(pickle.load(f)):
			assert data.count(rec(key)) == 2, key
			data = data.replace(rec(key), rec(str(i)))
		return data

	F = lambda name, b: c.put("header", "file-torch-" + name, b)
	g = torch.Generator().manual_seed(0)
	m = torch.randn(3, 4, generator=g)
	F("dtypes", save({"f32": m, "f64": m.double(), "f16": m.half(),
			  "bf16": m.bfloat16(), "u8": m.to(torch.uint8),
			  "i8": m.to(torch.int8), "i16": m.to(torch.int16),
			  "i32": m.to(torch.int32), "i64": m.long(),
			  "bool": m > 0, "c64": m.to(torch.complex64),
			  "scalar": torch.tensor(1.5), "empty": torch.zeros(0, 2)}))
	F("views", save({"m": m, "tied": m, "t": m.t(), "step": m[::2, 1::2],
			 "row": m[1], "expand": m[:, :1].expand(3, 5),
			 "list": [m[0], m[2]], "epoch": 3, "lr": 0.5,
			 "name": "x", "betas": (0.9, 0.99)}))
	torch.manual_seed(0)	# the layers' initial weights
	lin = torch.nn.Linear(2, 2)
	opt = torch.optim.Adam(lin.parameters())
	lin(torch.ones(1, 2)).sum().backward()
	opt.step()
	F("optimizer", save(opt.state_dict()))
	F("module", save(lin.state_dict()))
	F("whole-module", save(torch.nn.Sequential(lin, torch.nn.BatchNorm1d(2))))
	plain = save({"w": m})
	F("deflated", rezip(plain, zipfile.ZIP_DEFLATED))
	F("big-endian", rezip(plain, extra=[("archive/byteorder", b"big")]))
	F("legacy", legacy_keys(save({"w": m},
				     _use_new_zipfile_serialization=False)))
	F("c128", save({"w": m.to(torch.complex128)}))
	# what trainers keep beside the tensors (issue 30)
	import argparse
	F("trainer", save({"model": lin.state_dict(), "seed": 2**64 - 5,
			   "big": -2**80, "shape": torch.Size([3, 4]),
			   "ids": {3, 1, 2}, "device": torch.device("cuda", 0),
			   "dtype": torch.float16, "empty": {},
			   "args": argparse.Namespace(lr=0.1, w=m[0]),
			   "blob": b"\x00\xff", 1.5: "float key",
			   "list": [m[1], {"x": m.t()}]}))
	# torch 2's new dtypes (_rebuild_tensor_v3, which torch 1.13 cannot
	# write): the pickle by hand, the zip as torch.save lays it out
	v3 = (b"ctorch._utils\n_rebuild_tensor_v3\n((X\x07\x00\x00\x00storage"
	      b"ctorch.storage\nUntypedStorage\nX\x01\x00\x00\x000X\x03\x00"
	      b"\x00\x00cpuK\x08tQK%cK%c\x85K\x01\x85\x89ccollections\n"
	      b"OrderedDict\n)Rctorch\n%s\ntR")
	pkl = (b"\x80\x02}(X\x03\x00\x00\x00u16" + v3 % (0, 4, b"uint16") +
	       b"X\x02\x00\x00\x00f8" + v3 % (2, 6, b"float8_e4m3fn") +
	       b"X\x01\x00\x00\x00b" + b"ctorch._utils\n_rebuild_tensor_v2\n"
	       b"((X\x07\x00\x00\x00storagectorch\nByteStorage\nX\x01\x00"
	       b"\x00\x000X\x03\x00\x00\x00cpuK\x08tQK\x00K\x08\x85K\x01\x85"
	       b"\x89}tRu.")
	out = io.BytesIO()
	with zipfile.ZipFile(out, "w") as zo:
		entry(zo, "archive/data.pkl", pkl)
		entry(zo, "archive/byteorder", b"little")
		entry(zo, "archive/data/0", bytes(range(8)))
		entry(zo, "archive/version", b"3\n")
	F("v3", out.getvalue())
	import numpy as np
	np.random.seed(0)
	F("numpy", save({"w": m, "metric": np.float64(0.5),
			 "f32": np.float32(0.1), "epoch": np.int64(3),
			 "rng": np.random.get_state(),
			 "grid": np.asfortranarray(np.arange(6, dtype=np.int16)
						   .reshape(2, 3)),
			 "empty": np.zeros((2, 0))}))


def main(argv):
	outdir = argv[0] if argv else os.path.join(
		os.path.dirname(os.path.abspath(__file__)), "corpus")
	c = Corpus(outdir)
	header_seeds(c)
	index_seeds(c)
	names_seeds(c)
	pickle_seeds(c)
	torch_seeds(c)
	write_dict(os.path.join(os.path.dirname(os.path.abspath(__file__)),
				"json.dict"))
	for kind in ("header", "index", "names", "pickle"):
		print("%s: %d seeds" % (kind, len(c.written[kind])))
	for f in c.others():
		print("kept, not written here: %s" % f)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
