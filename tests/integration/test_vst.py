#!/usr/bin/env python3
"""int-vst: virtual safetensors files (issue 18).

The expected bytes of every virtual file are built here, independently of
the C code, from the sources read with struct + json: the header is the
documented compact JSON ("__metadata__" first, then the tensors in model
order: shards by file name, each in data_offsets order), padded with
spaces to a multiple of 8, then the tensors' bytes back to back.  Then:

- `stfs-inspect --merge` / `--extract PREFIX [--strip]` outputs equal those
  bytes, stfs-inspect validates them, numpy reads every tensor of them
  equal to the source's, and an OUT that is a source is refused;
- files with 0 tensors never exist, prefixes nest, names keep or lose
  "PREFIX.", tensors stored out of name order keep the source's order;
- a mount's hidden .safetensors/ lists exactly those files (strip/ too),
  stat gives their sizes before any read, reads (whole, and preads at
  random offsets across tensor and shard boundaries) give those bytes,
  the merged file copied out mounts with every tensor equal, sha256 is the
  same on a second mount, stfs-inspect's outputs equal the mount's files,
  and -o views=visible / off list / remove the directory.
"""

import errno
import hashlib
import json
import os
import random
import shutil
import struct
import time

import numpy as np

import harness

DT = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "U8": np.uint8,
      "BF16": None, "I8": np.int8, "F64": np.float64, "BOOL": np.bool_}
BYTES = {"F32": 4, "F16": 2, "I64": 8, "U8": 1, "BF16": 2, "I8": 1,
	 "F64": 8, "BOOL": 1}


# ---- writing sources --------------------------------------------------------

def write_st(path, tensors, meta=None, rng=None):
	"""tensors: [(name, dtype, shape)] in the order they are stored (the
	header lists them in another order, to show order comes from the
	data_offsets)."""
	rng = rng or random.Random(1)
	hdr = {}
	blobs = []
	off = 0
	for name, dt, shape in tensors:
		n = BYTES[dt]
		for d in shape:
			n *= d
		b = bytes(rng.randrange(256) for _ in range(n))
		if dt == "BOOL":
			b = bytes(x & 1 for x in b)
		hdr[name] = {"dtype": dt, "shape": shape,
			     "data_offsets": [off, off + n]}
		blobs.append(b)
		off += n
	items = list(hdr.items())
	rng.shuffle(items)
	obj = {}
	if meta is not None:
		obj["__metadata__"] = meta
	obj.update(items)
	j = json.dumps(obj).encode()
	j += b" " * ((8 - len(j) % 8) % 8)
	with open(path, "wb") as f:
		f.write(struct.pack("<Q", len(j)) + j + b"".join(blobs))


# ---- the independent reader --------------------------------------------------

class Model:
	"""A single file or an index, as the tests read it: tensors in model
	order, each (name, dtype, shape, path, abs offset, nbytes)."""

	def __init__(self, path):
		self.tensors = []
		if path.endswith(".json"):
			with open(path) as f:
				idx = json.load(f)
			d = os.path.dirname(path)
			shards = sorted(set(idx["weight_map"].values()))
			files = [harness.SrcFile(os.path.join(d, s)) for s in shards]
			metas = [f.metadata for f in files]
			if all(m == metas[0] for m in metas):
				self.meta = metas[0]
			else:
				im = idx.get("metadata") or None
				self.meta = None if not im else {
					k: v if isinstance(v, str) else
					json.dumps(v, separators=(",", ":"))
					for k, v in im.items()}
		else:
			files = [harness.SrcFile(path)]
			self.meta = files[0].metadata
		self.files = files
		for S in files:
			with open(S.path, "rb") as f:
				raw = f.read(S.data_start)[8:]
			order = [k for k, _ in json.loads(
				raw.decode(), object_pairs_hook=lambda kv: kv)
				if k != "__metadata__"]
			pos = {k: i for i, k in enumerate(order)}
			ts = sorted(S.tensors,
				    key=lambda x: (x.begin, x.end, pos[x.name]))
			for x in ts:
				self.tensors.append((x.name, x.dtype, x.shape,
						     S.path, x.offset, x.nbytes))
		# meta as the source orders it (first shard's / the index's)
		self.meta_keys = list(self.meta) if self.meta else []

	def prefixes(self):
		out = set()
		for name, *_ in self.tensors:
			for i, c in enumerate(name):
				if c == ".":
					out.add(name[:i])
		return out

	def select(self, prefix):
		if prefix is None:
			return self.tensors
		return [t for t in self.tensors if t[0].startswith(prefix + ".")]


def jstr(s):
	"""A JSON string as stfs writes it: '"', '\\' and bytes < 0x20 or
	0x7f escaped (\\n \\t \\r short, others \\u00xx), the rest as is."""
	out = ['"']
	for ch in s:
		o = ord(ch)
		if ch == '"':
			out.append('\\"')
		elif ch == "\\":
			out.append("\\\\")
		elif ch == "\n":
			out.append("\\n")
		elif ch == "\t":
			out.append("\\t")
		elif ch == "\r":
			out.append("\\r")
		elif o < 0x20 or o == 0x7f:
			out.append("\\u%04x" % o)
		else:
			out.append(ch)
	out.append('"')
	return "".join(out)


def expected(M, prefix=None, strip=False):
	"""The bytes of a virtual file, built from M alone."""
	ts = M.select(prefix)
	parts = []
	if M.meta is not None:
		parts.append(jstr("__metadata__") + ":{" + ",".join(
			jstr(k) + ":" + jstr(M.meta[k]) for k in M.meta_keys) + "}")
	off = 0
	for name, dt, shape, path, aoff, n in ts:
		if strip:
			name = name[len(prefix) + 1:]
		parts.append(jstr(name) + ':{"dtype":' + jstr(dt) + ',"shape":[' +
			     ",".join(str(d) for d in shape) +
			     '],"data_offsets":[%d,%d]}' % (off, off + n))
		off += n
	j = ("{" + ",".join(parts) + "}").encode()
	j += b" " * ((8 - len(j) % 8) % 8)
	data = bytearray()
	for name, dt, shape, path, aoff, n in ts:
		with open(path, "rb") as f:
			f.seek(aoff)
			data += f.read(n)
	return struct.pack("<Q", len(j)) + j + bytes(data)


def parse(buf):
	"""{name: (dtype, shape, bytes)} of a safetensors file in memory,
	checking the layout: padding, contiguous data in header order."""
	(n,) = struct.unpack("<Q", buf[:8])
	assert n % 8 == 0, "header length %d is not a multiple of 8" % n
	text = buf[8:8 + n].decode()
	assert text == text.rstrip(" ") + " " * (len(text) - len(text.rstrip(" ")))
	obj = json.loads(text, object_pairs_hook=lambda kv: kv)
	out = {}
	at = 0
	for k, v in obj:
		if k == "__metadata__":
			continue
		v = dict(v)
		b, e = v["data_offsets"]
		assert b == at, "%s starts at %d, not %d" % (k, b, at)
		at = e
		out[k] = (v["dtype"], v["shape"], buf[8 + n + b:8 + n + e])
	assert 8 + n + at == len(buf), "data does not end the file"
	return out


def as_array(dt, shape, b):
	if DT.get(dt) is None:
		return np.frombuffer(b, dtype=np.uint8)
	return np.frombuffer(b, dtype=DT[dt]).reshape(shape)


def check_numpy(t, M, out_bytes, prefix, strip, label):
	"""Every tensor of the virtual file, read with numpy, equals the
	source tensor read with numpy."""
	got = parse(out_bytes)
	want = M.select(prefix)
	t.eq(len(got), len(want), label + " tensor count")
	for name, dt, shape, path, aoff, n in want:
		key = name[len(prefix) + 1:] if strip else name
		if not t.check(key in got, "%s: %r missing" % (label, key)):
			continue
		gdt, gshape, gb = got[key]
		t.eq((gdt, gshape), (dt, shape), "%s: %r dtype/shape" % (label, key))
		with open(path, "rb") as f:
			f.seek(aoff)
			src = f.read(n)
		t.check(np.array_equal(as_array(dt, shape, gb),
				       as_array(dt, shape, src), equal_nan=False)
			or gb == src, "%s: %r values" % (label, key))


# ---- fixtures ------------------------------------------------------------------

WEIRD = 'q"uo\\te\n\x01\x7f caf\u00e9'


def make_fixtures(d):
	"""sd.safetensors: a Stable-Diffusion-like single file stored out of
	name order; set/: a 3-shard set whose shards agree on __metadata__;
	dis/: shards that disagree (the index's metadata wins)."""
	sd = os.path.join(d, "sd.safetensors")
	write_st(sd, [
		("model.diffusion_model.out.weight", "F32", [8, 4]),
		("first_stage_model.encoder.conv_in.weight", "F16", [3, 5]),
		("cond_stage_model.transformer.embed", "F32", [6]),
		("first_stage_model.decoder.conv_out.bias", "F32", [3]),
		("first_stage_model.decoder.up.0.weight", "BF16", [2, 2]),
		("model.diffusion_model.in.0.weight", "F16", [4, 4]),
		("first_stage_model.empty", "F32", [0]),
		("first_stage_model.flags", "BOOL", [5]),
		("lm_head.weight", "I64", [3]),
		("a.b", "U8", [3]),
		("a.b.c", "U8", [2]),
		(WEIRD + ".x", "I8", [4]),
		("noprefix", "F64", [2]),
		("model_ema.decay", "F32", []),
		# a prefix too long for a file name: named by its hash
		("L" * 250 + "/x.w", "U8", [2]),
	], meta={"format": "pt", "note": "a\nb"}, rng=random.Random(2))

	sdir = os.path.join(d, "set")
	os.mkdir(sdir)
	shards = {
		"model-00001-of-00003.safetensors": [
			("model.layers.1.mlp.w", "F32", [16, 8]),
			("model.embed_tokens.weight", "F16", [10, 4]),
			("model.layers.0.attn.q", "F32", [4, 4])],
		"model-00002-of-00003.safetensors": [
			("model.layers.0.mlp.w", "F32", [16, 8]),
			("model.layers.2.attn.q", "BF16", [4, 4])],
		"model-00003-of-00003.safetensors": [
			("model.norm.weight", "F32", [4]),
			("lm_head.weight", "F16", [10, 4]),
			("model.layers.2.mlp.w", "F32", [16, 8])],
	}
	wm = {}
	for i, (s, ts) in enumerate(shards.items()):
		write_st(os.path.join(sdir, s), ts, meta={"format": "pt"},
			 rng=random.Random(10 + i))
		wm.update({n: s for n, _, _ in ts})
	with open(os.path.join(sdir, "model.safetensors.index.json"), "w") as f:
		json.dump({"metadata": {"total_size": 1234}, "weight_map": wm}, f)

	ddir = os.path.join(d, "dis")
	os.mkdir(ddir)
	write_st(os.path.join(ddir, "b.safetensors"), [("x.b", "F32", [2])],
		 meta={"format": "np"})
	write_st(os.path.join(ddir, "a.safetensors"), [("x.a", "F32", [3])],
		 meta={"format": "pt"})
	with open(os.path.join(ddir, "model.safetensors.index.json"), "w") as f:
		json.dump({"metadata": {"total_size": 20, "who": "me"},
			   "weight_map": {"x.a": "a.safetensors",
					  "x.b": "b.safetensors"}}, f)
	return {"sd": sd,
		"set": os.path.join(sdir, "model.safetensors.index.json"),
		"dis": os.path.join(ddir, "model.safetensors.index.json")}


# ---- stfs-inspect --merge / --extract ----------------------------------------

def inspect_write(t, src, out, prefix=None, strip=False):
	cmd = [harness.STFS_INSPECT]
	cmd += ["--merge"] if prefix is None else ["--extract", prefix]
	cmd += ["--strip"] if strip else []
	cmd += [src, "-o", out]
	r = harness.run(cmd)
	t.eq(r.returncode, 0, "%s: exit status (%s)" % (" ".join(cmd[1:]),
							 r.stderr.decode().strip()))
	t.eq(r.stdout, b"", "%s: nothing on stdout" % " ".join(cmd[1:]))
	with open(out, "rb") as f:
		return f.read()


def validate_file(t, path, label):
	r = harness.run([harness.STFS_INSPECT, "--quiet", path])
	t.eq(r.returncode, 0, label + ": stfs-inspect accepts it")
	t.eq(harness.validate(path), None, label + ": the reference checks")


def cases(M):
	"""(prefix, strip) of every virtual file of M."""
	out = [(None, False)]
	for p in sorted(M.prefixes()):
		out += [(p, False), (p, True)]
	return out


def test_inspect(t, srcs, d):
	for key, src in srcs.items():
		M = Model(src)
		for prefix, strip in cases(M):
			label = "%s %s%s" % (key, "merge" if prefix is None else
					     "extract %r" % prefix,
					     " --strip" if strip else "")
			out = os.path.join(d, "out.safetensors")
			got = inspect_write(t, src, out, prefix, strip)
			want = expected(M, prefix, strip)
			t.check(got == want, lambda: "%s: bytes differ (%d vs %d)"
				% (label, len(got), len(want)))
			t.check(len(M.select(prefix)) > 0, label + ": not empty")
			validate_file(t, out, label)
			check_numpy(t, M, got, prefix, strip, label)
			os.unlink(out)

	M = Model(srcs["sd"])
	# the Stable Diffusion VAE: names kept, and stripped
	vae = parse(expected(M, "first_stage_model", True))
	t.eq(sorted(vae), sorted(["encoder.conv_in.weight",
				  "decoder.conv_out.bias",
				  "decoder.up.0.weight", "empty", "flags"]),
	     "VAE stripped names")
	# source order kept (out of name order): data offsets rise in the
	# order the source stores the tensors
	names = [k for k in parse(expected(M, "first_stage_model"))]
	t.eq(names, ["first_stage_model.encoder.conv_in.weight",
		     "first_stage_model.decoder.conv_out.bias",
		     "first_stage_model.decoder.up.0.weight",
		     "first_stage_model.empty", "first_stage_model.flags"],
	     "model order inside a prefix")
	# shards agreeing / disagreeing on __metadata__
	hdr = expected(Model(srcs["set"]))[8:80]
	t.check(hdr.startswith(b'{"__metadata__":{"format":"pt"},'),
		"sharded set: the shards' metadata")
	hdr = expected(Model(srcs["dis"]))[8:80]
	t.check(hdr.startswith(b'{"__metadata__":{"total_size":"20","who":"me"}'),
		"disagreeing shards: the index's metadata")
	got = inspect_write(t, srcs["dis"], os.path.join(d, "dis.safetensors"))
	t.check(got[8:80].startswith(hdr[:40]), "inspect agrees on that")

	# refusals: no such prefix, OUT is a source, -o missing; nothing written
	before = {p: harness.sha256_file(p) for p in
		  [srcs["sd"]] + [S.path for S in Model(srcs["set"]).files]}
	for args, what in [
			(["--extract", "nope", srcs["sd"], "-o",
			  os.path.join(d, "n.safetensors")], "no such prefix"),
			(["--extract", "model", srcs["sd"], "-o", srcs["sd"]],
			 "OUT is the source"),
			(["--merge", srcs["set"], "-o", Model(srcs["set"]).files[1].path],
			 "OUT is a shard"),
			(["--merge", srcs["sd"]], "no -o"),
			(["--strip", srcs["sd"], "-o", os.path.join(d, "x")],
			 "--strip alone")]:
		r = harness.run([harness.STFS_INSPECT] + args)
		t.eq(r.returncode, 2, what + ": exit status 2")
		t.check(r.stderr.count(b"\n") == 1 and b"stfs-inspect" in r.stderr,
			lambda: what + ": one-line error, got %r" % r.stderr)
	t.check(not os.path.exists(os.path.join(d, "n.safetensors")),
		"nothing written on refusal")
	link = os.path.join(d, "hardlink.safetensors")
	os.link(srcs["sd"], link)
	r = harness.run([harness.STFS_INSPECT, "--merge", srcs["sd"], "-o", link])
	t.eq(r.returncode, 2, "OUT a hard link of the source: refused")
	after = {p: harness.sha256_file(p) for p in before}
	t.eq(after, before, "sources unchanged")
	leftovers = [f for f in os.listdir(d) if ".stfs-" in f]
	t.eq(leftovers, [], "no temporary files left")

	# -o - writes to stdout
	r = harness.run([harness.STFS_INSPECT, "--extract", "a", srcs["sd"],
			 "-o", "-"])
	t.eq(r.returncode, 0, "-o -: exit status")
	t.check(r.stdout == expected(M, "a"), "-o -: the bytes on stdout")


# ---- the .safetensors/ view of a mount -----------------------------------------

SUFFIX = ".safetensors"


def vst_name(prefix):
	"""The file name of a prefix in .safetensors/ (see view_vst.c)."""
	enc = harness.encode_name(prefix)
	if len(enc) + len(SUFFIX) > 255 or "%~" in enc:
		enc = "%%~%016x" % harness.fnv1a64(prefix.encode())
	return enc + SUFFIX


def want_listing(M):
	kept = {"model.safetensors", "strip"}
	strip = set()
	for p in M.prefixes():
		if p != "model":
			kept.add(vst_name(p))
		strip.add(vst_name(p))
	return kept, strip


def read_all(path):
	with open(path, "rb") as f:
		return f.read()


def check_mount(t, M, src, mnt, label, rng):
	"""Listing, sizes before any read, bytes, random preads."""
	base = os.path.join(mnt, ".safetensors")
	t.check(".safetensors" not in os.listdir(mnt),
		label + ": .safetensors/ hidden from readdir")
	kept, strip = want_listing(M)
	t.eq(set(os.listdir(base)), kept, label + ": .safetensors/ listing")
	t.eq(set(os.listdir(os.path.join(base, "strip"))), strip,
	     label + ": strip/ listing")
	files = {}
	for prefix, st in cases(M):
		if prefix is None:
			rel = "model.safetensors"
		elif st:
			rel = "strip/" + vst_name(prefix)
		elif prefix == "model":
			continue
		else:
			rel = vst_name(prefix)
		files[rel] = (prefix, st)
	# sizes first, before anything is read
	for rel, (prefix, st) in files.items():
		t.eq(os.stat(os.path.join(base, rel)).st_size,
		     len(expected(M, prefix, st)), "%s: stat size of %s" % (label, rel))
	out = {}
	for rel, (prefix, st) in files.items():
		p = os.path.join(base, rel)
		want = expected(M, prefix, st)
		got = read_all(p)
		t.check(got == want, lambda: "%s: %s bytes differ" % (label, rel))
		out[rel] = got
		# reads at random offsets and lengths, across tensor and shard
		# boundaries (the data section is a concatenation of ranges)
		fd = os.open(p, os.O_RDONLY)
		try:
			for _ in range(40):
				off = rng.randrange(len(want) + 1)
				n = rng.randrange(len(want) - off + 2)
				t.check(os.pread(fd, n, off) == want[off:off + n],
					"%s: %s pread(%d, %d)" % (label, rel, n, off))
			t.eq(os.pread(fd, 10, len(want) + 5), b"",
			     "%s: %s read past the end" % (label, rel))
		finally:
			os.close(fd)
	t.check(not os.path.exists(os.path.join(base, "nope.safetensors")),
		label + ": no file for a name that is no prefix")
	t.check(not os.path.exists(os.path.join(base, "noprefix.safetensors")),
		label + ": no file for a tensor that is no module")
	return out


def test_mount(t, srcs, d):
	rng = random.Random(5)
	for key in ("sd", "set"):
		src = srcs[key]
		M = Model(src)
		with harness.Mount(t, src) as m:
			first = check_mount(t, M, src, m.path, key, rng)
			# the whole model copied out and mounted again
			cp = os.path.join(d, key + "-copy.safetensors")
			with open(cp, "wb") as f:
				f.write(read_all(os.path.join(m.path, ".safetensors",
							      "model.safetensors")))
			validate_file(t, cp, key + " copy")
			# stfs-inspect writes the same bytes as the mount shows
			for rel, args in [("model.safetensors", ["--merge"]),
					  ("strip/" + vst_name("model.layers.0")
					   if key == "set" else
					   "strip/first_stage_model.safetensors",
					   ["--extract", "model.layers.0" if key == "set"
					    else "first_stage_model", "--strip"])]:
				o = os.path.join(d, "cmp.safetensors")
				r = harness.run([harness.STFS_INSPECT] + args +
						[src, "-o", o])
				t.eq(r.returncode, 0, "%s: inspect %s" % (key, args))
				t.check(read_all(o) == first[rel],
					"%s: inspect %s equals the mount's %s"
					% (key, args, rel))
				os.unlink(o)
		with harness.Mount(t, cp) as m2:
			for name, dt, shape, path, aoff, n in M.tensors:
				with open(path, "rb") as f:
					f.seek(aoff)
					want = f.read(n)
				got = read_all(os.path.join(
					m2.path, harness.encode_name(name)))
				t.check(got == want, "%s copy: tensor %r" % (key, name))
		# a second mount: the same bytes (sha256)
		with harness.Mount(t, src) as m:
			for rel, b in first.items():
				t.eq(harness.sha256_file(os.path.join(
					m.path, ".safetensors", rel)),
				     hashlib.sha256(b).hexdigest(),
				     "%s: sha256 of %s stable across mounts" % (key, rel))
	# a source changed under the mount: the virtual files fail with EIO
	# rather than mix old and new bytes
	chg = os.path.join(d, "chg.safetensors")
	shutil.copyfile(srcs["sd"], chg)
	with harness.Mount(t, chg) as m:
		p = os.path.join(m.path, ".safetensors", "model.safetensors")
		before = read_all(p)
		t.check(before == expected(Model(srcs["sd"])), "change: read before")
		new = bytearray(read_all(chg))
		new[-1] ^= 0xff
		time.sleep(0.01)
		with open(chg, "r+b") as f:
			f.write(bytes(new))
		fd = os.open(p, os.O_RDONLY)
		try:
			os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
			try:
				got = os.pread(fd, len(before), 0)
				t.check(got == before[:len(got)] and len(got) < len(before),
					"change: no new bytes after the change (got %d)" % len(got))
			except OSError as e:
				t.eq(e.errno, errno.EIO, "change: EIO")
		finally:
			os.close(fd)
	# a tree of models: every model directory has its own .safetensors/
	tree = os.path.join(d, "tree")
	os.makedirs(os.path.join(tree, "sd"))
	shutil.copyfile(srcs["sd"], os.path.join(tree, "sd", "sd.safetensors"))
	shutil.copytree(os.path.dirname(srcs["set"]), os.path.join(tree, "set"))
	with harness.Mount(t, tree) as m:
		for sub, key in (("sd", "sd"), ("set", "set")):
			M = Model(srcs[key])
			base = os.path.join(m.path, sub, ".safetensors")
			t.eq(set(os.listdir(base)), want_listing(M)[0],
			     "tree: %s/.safetensors/ listing" % sub)
			t.check(read_all(os.path.join(base, "model.safetensors")) ==
				expected(M), "tree: %s/.safetensors/model.safetensors" % sub)
	# -o views=visible lists it, -o views=off removes it
	with harness.Mount(t, srcs["sd"], args=["-o", "views=visible"]) as m:
		t.check(".safetensors" in os.listdir(m.path),
			"views=visible lists .safetensors/")
	with harness.Mount(t, srcs["sd"], args=["-o", "views=off"]) as m:
		t.check(not os.path.exists(os.path.join(m.path, ".safetensors")),
			"views=off: no .safetensors/")


def run(t):
	d = harness.tmpdir("vst")
	srcs = make_fixtures(d)
	test_inspect(t, srcs, d)
	test_mount(t, srcs, d)


harness.main("int-vst", run, mounts=True)
