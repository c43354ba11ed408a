#!/usr/bin/env python3
"""int-views: the .npy and .txt views, the xattrs, and -o tree.

- .npy/P.npy: np.load (and mmap_mode="r") equals the raw bytes for every
  dtype numpy has, and an independent decoder (written here with numpy
  arithmetic) for BF16, the F8s, the F6s and F4 -- over every code of the
  formats of 8 bits and less; an FP8 weight with a scale for the tensor
  (P_scale) its values times the scale; the header is the one np.save
  writes.
- .txt/P.txt: np.loadtxt(dtype of the .npy view) equals those values;
  random dd reads, tail and reads across the end equal slices of the whole.
- getfattr shows user.safetensors.{name,dtype,shape,offset,nbytes}.
- -o tree: every tensor at its documented path, byte for byte, with its
  sidecar and views; a.b next to a.b.c is a/b/__tensor__.
- ls of the root shows no views; find -path './.*' -prune skips them.
- man -l renders the man pages.
"""

import io
import json
import os
import random
import shutil
import stat
import struct
import subprocess
import tarfile

import numpy as np

import harness
from harness import gen

SELF = "__tensor__"
MANDIR = os.path.join(harness.SRCROOT, "man")

# ---- an independent decoder ----------------------------------------------------

# (exponent bits, mantissa bits, bias, NaN/inf convention)
MINI = {
	"F8_E5M2": (5, 2, 15, "ieee"),
	"F8_E4M3": (4, 3, 7, "fn"),
	"F8_E4M3FNUZ": (4, 3, 8, "fnuz"),
	"F8_E5M2FNUZ": (5, 2, 16, "fnuz"),
	"F6_E2M3": (2, 3, 1, "finite"),
	"F6_E3M2": (3, 2, 3, "finite"),
	"F4": (2, 1, 1, "finite"),
}
DECODED = set(MINI) | {"BF16", "F8_E8M0"}


def codes_of(dtype, raw, numel):
	"""The element codes: F4 low nibble first, F6 four per 3 bytes read
	as a little-endian 24-bit number, element 0 in the low 6 bits."""
	b = np.frombuffer(raw, np.uint8)
	if dtype == "F4":
		c = np.empty(numel, np.uint32)
		c[0::2] = b & 0xF
		c[1::2] = b >> 4
		return c
	if dtype.startswith("F6"):
		g = b.reshape(-1, 3).astype(np.uint32)
		v = g[:, 0] | g[:, 1] << 8 | g[:, 2] << 16
		return ((v[:, None] >> np.array([0, 6, 12, 18], np.uint32)) &
			63).reshape(-1)
	return b.astype(np.uint32)


def decode(dtype, raw, numel):
	"""float32 values of a BF16/F8/F6/F4 tensor, computed in float64 from
	the format's definition (not from bit tricks like the C code)."""
	if dtype == "BF16":
		return (np.frombuffer(raw, "<u2").astype("<u4") << 16).view("<f4")
	c = codes_of(dtype, raw, numel)
	if dtype == "F8_E8M0":
		v = np.ldexp(1.0, c.astype(np.int64) - 127)
		v[c == 255] = np.nan
		return v.astype(np.float32)
	e, m, bias, kind = MINI[dtype]
	s = (c >> (e + m)) & 1
	E = ((c >> m) & ((1 << e) - 1)).astype(np.int64)
	M = (c & ((1 << m) - 1)).astype(np.float64)
	mag = np.where(E == 0, M * 2.0 ** (1 - bias - m),
		       (1 + M / 2 ** m) * np.ldexp(1.0, E - bias))
	emax, mmax = (1 << e) - 1, (1 << m) - 1
	if kind == "ieee":
		mag = np.where(E == emax, np.where(M == 0, np.inf, np.nan), mag)
	elif kind == "fn":
		mag = np.where((E == emax) & (M == mmax), np.nan, mag)
	elif kind == "fnuz":
		mag = np.where(c == 0x80, np.nan, mag)
	return np.where(s == 1, -mag, mag).astype(np.float32)


def fp8_scale(S, x):
	"""The float32 scale of an FP8 weight that has one scale for the
	whole tensor (NAME_scale, compressed-tensors' layout), else None:
	its views hold the values it stands for (docs/quantized.md)."""
	s = S.by_name.get(x.name + "_scale") if S else None
	if x.dtype not in ("F8_E4M3", "F8_E5M2") or not s or s.numel != 1 or \
	   s.dtype != "F32":
		return None
	return np.frombuffer(S.read(s), "<f4")[0]


def expected(x, raw, S=None):
	"""(numpy dtype of the .npy view, values as an array of x's shape, or
	None for a shape numpy cannot hold: [0, 2^64-1])."""
	shape = tuple(x.shape)
	if any(d > 2**62 for d in shape):
		shape = None
	if x.dtype in DECODED:
		if shape is None:
			return np.dtype("<f4"), None
		v = decode(x.dtype, raw, x.numel).reshape(shape)
		if fp8_scale(S, x) is not None:
			v = v * fp8_scale(S, x)		# float32 products
		return np.dtype("<f4"), v
	dt = np.dtype(gen.NUMPY[x.dtype])
	if shape is None:
		return dt, None
	return dt, np.frombuffer(raw, dt).reshape(shape)


def same(a, b):
	"""Equal values, NaN where NaN, and the sign of zeros."""
	if a.shape != b.shape or a.dtype != b.dtype:
		return False
	if a.dtype.kind == "f":
		nan = np.isnan(a)
		if not np.array_equal(nan, np.isnan(b)):
			return False
		ok = ~nan
		return bool(np.array_equal(a[ok], b[ok]) and np.array_equal(
			np.signbit(a[ok]), np.signbit(b[ok])))
	if a.dtype.kind == "c":
		return same(a.real.copy(), b.real.copy()) and \
			same(a.imag.copy(), b.imag.copy())
	return a.tobytes() == b.tobytes()


def npy_header(dt, shape):
	"""The header np.save writes for this dtype and shape."""
	f = io.BytesIO()
	np.lib.format._write_array_header(
		f, {"descr": np.lib.format.dtype_to_descr(dt),
		    "fortran_order": False, "shape": tuple(shape)})
	return f.getvalue()


# ---- the tree layout, implemented from its documentation -----------------------

def tree_paths(names):
	"""{name: path}: split at '.', encode each component, a path that is
	also a directory gets /__tensor__."""
	comps = {n: [harness.encode_name(c) for c in n.split(".")] for n in names}
	dirs = set()
	for cs in comps.values():
		for i in range(1, len(cs)):
			dirs.add(tuple(cs[:i]))
	out = {}
	for n, cs in comps.items():
		p = tuple(cs)
		if p in dirs:
			p = p + (SELF,)
		out[n] = "/".join(p)
	return out, {"/".join(d) for d in dirs}


def reverse_tree(path):
	"""The documented reverse mapping; None for hashed components."""
	parts = path.split("/")
	if parts[-1] == SELF:
		parts = parts[:-1]
	out = []
	for p in parts:
		d = harness.decode_name(p)
		if d is None:
			return None
		out.append(d)
	return ".".join(out)


# ---- test files -------------------------------------------------------------------

def gen_allcodes(path):
	"""Every code of every format of 8 bits and less, BF16 specials, and
	every F16 code (its text must read back as the same half)."""
	T = []
	for dt in ("F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ"):
		T.append((dt, dt, [16, 16], bytes(range(256))))
	for dt in ("F6_E2M3", "F6_E3M2"):
		out = bytearray()
		for g in range(16):
			v = 0
			for k in range(4):
				v |= (4 * g + k) << (6 * k)
			out += v.to_bytes(3, "little")
		T.append((dt, dt, [4, 16], bytes(out)))
	T.append(("F4", "F4", [16], bytes(lo | (lo + 1) << 4
				   for lo in range(0, 16, 2))))
	bf = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1,
	      0x7F81, 0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x3DCD]
	r = random.Random(7)
	bf += [r.randrange(65536) for _ in range(1024 - len(bf))]
	T.append(("BF16", "BF16", [32, 32], struct.pack("<1024H", *bf)))
	T.append(("F16", "F16", [256, 256], struct.pack("<65536H",
							     *range(65536))))
	return gen.write_safetensors(path, T, {"format": "pt"})


TREE_NAMES = [
	"a", "a.b", "a.b.c", "a.b.c.d", "model.layers.0.mlp.down_proj.weight",
	"model.layers.0.mlp.down_proj.bias", "model.layers.1.mlp.up.weight",
	"model.norm.weight", "lm_head.weight", "x.", ".y", "p..q", "__tensor__",
	"q.__tensor__", "n/s.w%x", "scalar",
]


def gen_tree(path):
	T = []
	for i, name in enumerate(TREE_NAMES):
		shape = [] if name == "scalar" else [1 + i % 3, 2]
		T.append((name, "F32", shape, gen.filler("F32", shape, 400 + i)))
	return gen.write_safetensors(path, T, {"format": "pt"})


# ---- checks ----------------------------------------------------------------------

def read(p, off=0, n=-1):
	with open(p, "rb") as f:
		f.seek(off)
		return f.read(n)


def check_npy(t, S, x, p, label):
	raw = S.read(x)
	dt, want = expected(x, raw, S)
	st = os.stat(p)
	t.check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o444,
		"%s: .npy is a 0444 file" % label)
	hdr = npy_header(dt, x.shape)
	data = read(p)
	t.eq(st.st_size, len(data), "%s: .npy st_size is its length" % label)
	t.check(data[:len(hdr)] == hdr, lambda: "%s: .npy header %r, np.save "
		"writes %r" % (label, data[:len(hdr)], hdr))
	t.eq(len(data), len(hdr) + (want.nbytes if want is not None else 0),
	     "%s: .npy size" % label)
	if x.dtype not in DECODED:
		t.check(data[len(hdr):] == raw, "%s: .npy data is the raw bytes"
			% label)
	if want is None:
		# a valid header numpy cannot turn into an array
		f = io.BytesIO(data)
		np.lib.format.read_magic(f)
		shape, _, _ = np.lib.format.read_array_header_1_0(f)
		t.eq(list(shape), x.shape, "%s: header shape of a huge dim" % label)
		return
	got = np.load(p)
	t.check(same(got, want), lambda: "%s: np.load %s %s != %s" % (
		label, got.dtype, harness.short(got.ravel()[:8]),
		harness.short(want.ravel()[:8])))
	if want.nbytes:
		mm = np.load(p, mmap_mode="r")
		t.check(isinstance(mm, np.memmap) and same(np.array(mm), want),
			"%s: np.load mmap_mode=r" % label)
		del mm
	# random reads of the .npy file
	fd = os.open(p, os.O_RDONLY)
	try:
		r = random.Random(len(data))
		for _ in range(6):
			off = r.randrange(len(data) + 2)
			n = r.randrange(1, 300)
			t.check(os.pread(fd, n, off) == data[off:off + n],
				"%s: .npy pread(%d, %d)" % (label, off, n))
	finally:
		os.close(fd)


def loadtxt(p, dt, x):
	kw = {"dtype": dt, "ndmin": 2}
	if dt.kind == "c":
		kw["dtype"] = np.complex128
	a = np.loadtxt(p, **kw)
	if dt.kind == "c":
		a = a.astype(dt)
	return a.reshape(tuple(x.shape))


def check_txt(t, S, x, p, label, shell=True):
	text = read(p)
	t.eq(os.stat(p).st_size, len(text), "%s: .txt st_size is its length"
	     % label)
	if x.numel == 0:
		t.eq(text, b"", "%s: empty .txt" % label)
		return
	dt, want = expected(x, S.read(x), S)
	rows = x.numel // (x.shape[-1] if x.shape else 1)
	t.eq(text.count(b"\n"), rows, "%s: one line per row" % label)
	t.check(text.endswith(b"\n"), "%s: ends with a newline" % label)
	widths = {len(f) for f in text.split()}
	cell = len(text) // x.numel
	t.check(len(text) == cell * x.numel and max(widths) <= cell - 1,
		"%s: fixed-width cells" % label)
	if x.dtype == "BOOL":
		got = loadtxt(p, np.dtype(bool), x)
		t.check(np.array_equal(got, want != 0), "%s: loadtxt BOOL" % label)
	else:
		got = loadtxt(p, dt, x)
		t.check(same(got, want), lambda: "%s: np.loadtxt %s != %s" % (
			label, harness.short(got.ravel()[:6]),
			harness.short(want.ravel()[:6])))
	if not shell:
		return
	# dd at random offsets and sizes, tail, a read past the end
	r = random.Random(x.numel)
	for _ in range(3):
		bs = r.choice([1, 7, 64, 4096])
		skip = r.randrange(max(1, len(text) // bs + 1))
		count = r.randrange(1, 5)
		res = harness.run(["dd", "if=" + p, "bs=%d" % bs, "skip=%d" % skip,
				   "count=%d" % count, "status=none"])
		t.check(res.returncode == 0 and res.stdout ==
			text[skip * bs:(skip + count) * bs],
			"%s: dd bs=%d skip=%d count=%d" % (label, bs, skip, count))
	res = harness.run(["tail", "-n", "1", p])
	t.check(res.stdout == text[text.rstrip(b"\n").rfind(b"\n") + 1:],
		"%s: tail -n 1" % label)
	res = harness.run(["tail", "-c", "5", p])
	t.check(res.stdout == text[-5:], "%s: tail -c 5" % label)


def check_xattrs(t, x, p, label, shell=False):
	want = {
		"user.safetensors.name": x.name.encode("utf-8"),
		"user.safetensors.dtype": x.dtype.encode(),
		"user.safetensors.shape": json.dumps(x.shape,
						     separators=(",", ":")).encode(),
		"user.safetensors.offset": str(x.offset).encode(),
		"user.safetensors.nbytes": str(x.nbytes).encode(),
	}
	try:
		names = set(os.listxattr(p))
	except OSError as e:
		t.check(False, "%s: listxattr: %s" % (label, e))
		return
	t.eq(names, set(want), "%s: listxattr" % label)
	for k, v in want.items():
		try:
			got = os.getxattr(p, k)
		except OSError as e:
			got = e
		t.eq(got, v, "%s: getxattr %s" % (label, k))
	try:
		os.getxattr(p, "user.safetensors.nope")
		t.check(False, "%s: unknown xattr fails" % label)
	except OSError as e:
		t.check(e.errno in (61, 95), "%s: unknown xattr: %s" % (label, e))
	try:
		os.setxattr(p, "user.x", b"1")
		t.check(False, "%s: setxattr refused" % label)
	except OSError as e:
		t.check(e.errno in harness.RO_ERRNOS + (95,),
			"%s: setxattr: %s" % (label, e))
	if shell:
		res = harness.run(["getfattr", "-d", "--absolute-names", p])
		out = res.stdout.decode("utf-8", "replace")
		t.check(res.returncode == 0 and
			'user.safetensors.dtype="%s"' % x.dtype in out and
			'user.safetensors.shape="%s"' % want[
				"user.safetensors.shape"].decode() in out and
			'user.safetensors.offset="%d"' % x.offset in out,
			"%s: getfattr -d shows dtype, shape, offset: %s"
			% (label, out))


def check_hidden(t, mnt, label):
	"""Neither ls -a nor readdir nor find shows the views; a path reaches
	them."""
	res = harness.run(["ls", "-a", mnt])
	names = res.stdout.decode("utf-8", "replace").split("\n")
	t.check(res.returncode == 0 and not any(n.startswith(".") and
						n not in (".", "..") for n in
						names), "%s: ls -a shows no views"
		% label)
	every = os.listdir(mnt)
	t.check(".npy" not in every and ".txt" not in every, "%s: readdir does "
		"not list .npy and .txt" % label)
	res = harness.run(["find", ".", "-type", "f", "-print"], cwd=mnt,
			  timeout=300)
	found = res.stdout.decode("utf-8", "replace")
	t.check(res.returncode == 0 and "/.npy/" not in found and
		"/.txt/" not in found and "__summary__.json" in found,
		"%s: find does not walk into the views" % label)
	for v in (".npy", ".txt"):
		st = os.stat(os.path.join(mnt, v))
		t.check(stat.S_ISDIR(st.st_mode) and st.st_mode & 0o222 == 0,
			"%s: %s is a read-only directory" % (label, v))


def check_flat(t, src, shell=True, xshell=False):
	base = os.path.basename(src)
	S = harness.SrcFile(src)
	with harness.Mount(t, src) as m:
		check_hidden(t, m.path, base)
		want = {harness.encode_name(x.name) for x in S.tensors}
		for v, ext in ((".npy", ".npy"), (".txt", ".txt")):
			t.eq(sorted(os.listdir(os.path.join(m.path, v))),
			     sorted(f + ext for f in want),
			     "%s: %s lists one file per tensor" % (base, v))
		for i, x in enumerate(S.tensors):
			f = harness.encode_name(x.name)
			label = "%s: %s" % (base, harness.short(x.name, 60))
			check_npy(t, S, x, os.path.join(m.path, ".npy", f + ".npy"),
				  label)
			check_txt(t, S, x, os.path.join(m.path, ".txt", f + ".txt"),
				  label, shell=shell and i < 40)
			check_xattrs(t, x, os.path.join(m.path, f), label,
				     shell=xshell and i < 5)
		# the raw files still are exactly the source
		harness.verify_tree(t, src, m.path, shell=False)


def check_tree(t, src):
	base = os.path.basename(src) + " (tree)"
	S = harness.SrcFile(src)
	paths, dirs = tree_paths([x.name for x in S.tensors])
	with harness.Mount(t, src, args=["-o", "tree"]) as m:
		check_hidden(t, m.path, base)
		# every file outside the views, and nothing else
		seen = set()
		for root, ds, fs in os.walk(m.path):
			rel = os.path.relpath(root, m.path)
			if rel == ".":
				ds[:] = [d for d in ds if not d.startswith(".")]
				rel = ""
			for f in fs:
				seen.add(os.path.join(rel, f))
		want = set(paths.values()) | {p + ".json" for p in paths.values()} | \
			{"__metadata__.json", "__summary__.json"}
		t.check(seen == want, lambda: "%s: files differ: missing %s, "
			"unexpected %s" % (base, harness.short(sorted(want - seen)),
					   harness.short(sorted(seen - want))))
		for v, ext in ((".npy", ".npy"), (".txt", ".txt")):
			got = set()
			for root, ds, fs in os.walk(os.path.join(m.path, v)):
				rel = os.path.relpath(root, os.path.join(m.path, v))
				for f in fs:
					got.add(os.path.normpath(os.path.join(rel, f)))
			t.eq(got, {p + ext for p in paths.values()},
			     "%s: %s mirrors the tree" % (base, v))
		for d in dirs:
			t.check(os.path.isdir(os.path.join(m.path, d)),
				"%s: %s is a directory" % (base, d))
		for x in S.tensors:
			p = paths[x.name]
			label = "%s: %s" % (base, harness.short(x.name, 60))
			r = reverse_tree(p)
			if r is not None:
				t.eq(r, x.name, "%s: %s maps back" % (label, p))
			full = os.path.join(m.path, p)
			t.check(read(full) == S.read(x), "%s: %s bytes" % (label, p))
			st = os.stat(full)
			t.eq(st.st_size, x.nbytes, "%s: size" % label)
			with open(full + ".json", "rb") as f:
				j = json.loads(f.read().decode("utf-8"))
			t.check(j.get("name") == x.name and j.get("offset") ==
				x.offset, "%s: sidecar" % label)
			check_npy(t, S, x, os.path.join(m.path, ".npy", p + ".npy"),
				  label)
			check_txt(t, S, x, os.path.join(m.path, ".txt", p + ".txt"),
				  label, shell=False)
			check_xattrs(t, x, full, label)
		# the byte-exact check of the shell: cmp against the source
		x = S.tensors[len(S.tensors) // 2]
		res = harness.run(["cmp", "-n", str(x.nbytes), "-i", "0:%d" %
				   x.offset, os.path.join(m.path, paths[x.name]),
				   src])
		t.check(res.returncode == 0, "%s: cmp %s" % (base, paths[x.name]))
		return m.path, paths


def check_sharded(t, d):
	"""A sharded set: each tensor's views and xattrs come from its own
	shard (offsets are the shard's), in both layouts."""
	import gen_sharded
	out = os.path.join(d, "sharded")
	gen_sharded.write_sharded(out, gen_sharded.mixed_tensors(40), 3)
	index = os.path.join(out, "model.safetensors.index.json")
	shards = [harness.SrcFile(os.path.join(out, f))
		  for f in sorted(os.listdir(out)) if f.endswith(".safetensors")]
	names = [x.name for S in shards for x in S.tensors]
	for args, paths in (([], {n: harness.encode_name(n) for n in names}),
			    (["-o", "tree"], tree_paths(names)[0])):
		with harness.Mount(t, index, args=args) as m:
			for S in shards:
				for x in S.tensors:
					p = paths[x.name]
					label = "sharded %s: %s" % (" ".join(args),
								     x.name)
					t.check(read(os.path.join(m.path, p)) ==
						S.read(x), "%s: bytes" % label)
					check_npy(t, S, x, os.path.join(
						m.path, ".npy", p + ".npy"), label)
					check_txt(t, S, x, os.path.join(
						m.path, ".txt", p + ".txt"), label,
						shell=False)
					check_xattrs(t, x, os.path.join(m.path, p),
						     label)


def tree_files(root):
	"""{relative path: bytes} of every regular file under root, and the
	set of directories, as a walk sees them."""
	files, dirs = {}, set()
	for top, ds, fs in os.walk(root):
		rel = os.path.relpath(top, root)
		for x in ds:
			dirs.add(os.path.normpath(os.path.join(rel, x)))
		for x in fs:
			with open(os.path.join(top, x), "rb") as f:
				files[os.path.normpath(os.path.join(rel, x))] = f.read()
	return files, dirs


def check_recursive(t, d):
	"""du, cp -r, tar and find see exactly the model: its tensors,
	sidecars and root files, no view; the views stay reachable by path;
	-o views=visible lists them, -o views=off removes them."""
	src = harness.gen_file("sample", d)
	S = harness.SrcFile(src)
	names = {harness.encode_name(x.name) for x in S.tensors}
	want = names | {f + ".json" for f in names} | {"__metadata__.json",
							"__summary__.json"}
	with harness.Mount(t, src) as m:
		mnt = m.path
		files, dirs = tree_files(mnt)
		t.eq(set(files), want, "walk: exactly the model's files")
		t.eq(dirs, set(), "walk: no directory (views hidden)")
		for x in S.tensors:
			t.check(files[harness.encode_name(x.name)] == S.read(x),
				"walk: %s bytes" % x.name)
		size = sum(len(b) for b in files.values())
		res = harness.run(["du", "-s", "-b", "--apparent-size", mnt])
		t.check(res.returncode == 0 and int(res.stdout.split()[0]) ==
			size + os.stat(mnt).st_size,
			"du -sb counts the model only (%d bytes of files): %r"
			% (size, res.stdout[:80]))
		dst = os.path.join(harness.tmpdir("cpr"), "copy")
		res = harness.run(["cp", "-r", mnt, dst], timeout=300)
		t.eq(res.returncode, 0, "cp -r: %r" % res.stderr[-200:])
		cfiles, cdirs = tree_files(dst)
		t.check(cfiles == files and cdirs == set(),
			"cp -r copies exactly the model (%d files, want %d)"
			% (len(cfiles), len(files)))
		shutil.rmtree(dst)
		res = harness.run(["tar", "-cf", "-", "-C", mnt, "."], timeout=300)
		t.eq(res.returncode, 0, "tar -c: %r" % res.stderr[-200:])
		with tarfile.open(fileobj=io.BytesIO(res.stdout)) as tf:
			members = {os.path.normpath(i.name): i for i in
				   tf.getmembers()}
			got = {k for k, i in members.items() if i.isfile()}
			t.eq(got, want, "tar holds exactly the model's files")
			t.check(all(not k.startswith(".npy") and
				    not k.startswith(".txt") for k in members),
				"tar holds no view directory")
			x = S.tensors[0]
			f = tf.extractfile(members[harness.encode_name(x.name)])
			t.check(f.read() == S.read(x), "tar: %s bytes" % x.name)
		res = harness.run(["find", mnt, "-name", "*.npy"], timeout=300)
		t.eq(res.stdout, b"", "find sees no .npy file")
		# reachable by path all the same
		x = S.tensors[0]
		npy = os.path.join(mnt, ".npy", harness.encode_name(x.name) + ".npy")
		t.check(os.path.isfile(npy) and read(npy)[:6] == b"\x93NUMPY",
			"a hidden .npy file opens by path")
		t.eq(sorted(os.listdir(os.path.join(mnt, ".txt"))),
		     sorted(n + ".txt" for n in names), "ls of the hidden .txt/")
	with harness.Mount(t, src, args=["-o", "views=visible"]) as m:
		every = os.listdir(m.path)
		t.check(".npy" in every and ".txt" in every,
			"views=visible: readdir lists .npy and .txt")
		t.check(".stfs" in every, "views=visible: readdir lists .stfs")
		t.check(".files" in every, "views=visible: readdir lists .files")
		t.check(".dequant" in every, "views=visible: readdir lists "
			".dequant (the sample has FP8 weights with scales)")
		t.eq(set(every) - harness.VIEW_DIRS -
		     {".stfs", ".files", ".dequant", ".html"}, want,
		     "views=visible: and the model")
	with harness.Mount(t, src, args=["-o", "views=off"]) as m:
		t.eq(set(os.listdir(m.path)), want, "views=off: the model only")
		for v in harness.VIEW_DIRS | {".stfs", ".files", ".dequant",
					      ".html"}:
			t.check(not os.path.exists(os.path.join(m.path, v)),
				"views=off: no %s" % v)
		x = S.tensors[-1]
		t.check(read(os.path.join(m.path, harness.encode_name(x.name))) ==
			S.read(x), "views=off: tensors read")
	res = harness.run([harness.STFS, "-o", "views=maybe", src,
			   harness.tmpdir("badviews")])
	err = res.stderr.decode("utf-8", "replace")
	t.check(res.returncode == 2 and "views=maybe" in err and
		"hidden, visible or off" in err and err.count("\n") == 1,
		"views=maybe: one-line usage error, exit 2: %r" % err)


def check_man(t):
	for page in ("stfs.1", "stfs-inspect.1", "mount.stfs.8"):
		res = harness.run(["man", "-l", os.path.join(MANDIR, page)],
				  env=dict(os.environ, MANPAGER="cat", PAGER="cat",
					   MANWIDTH="80"))
		out = res.stdout.decode("utf-8", "replace")
		t.check(res.returncode == 0 and "NAME" in out and "SYNOPSIS" in out,
			"man -l %s renders: %s" % (page, res.stderr[-300:]))
		res = subprocess.run(["groff", "-man", "-ww", "-z",
				      os.path.join(MANDIR, page)],
				     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
		t.eq(res.stderr, b"", "groff warnings for %s" % page)


def run(t):
	d = harness.tmpdir("views")
	p = os.path.join(d, "allcodes.safetensors")
	gen_allcodes(p)
	check_flat(t, p)
	for kind in ("alldtypes", "edge", "sample"):
		check_flat(t, harness.gen_file(kind, d), xshell=True)
	check_flat(t, harness.gen_file("oddnames", d), shell=False)
	for real in harness.real_files():
		check_flat(t, real, shell=False)

	p = os.path.join(d, "tree.safetensors")
	gen_tree(p)
	check_tree(t, p)
	paths, _ = tree_paths(TREE_NAMES)
	t.eq(paths["a.b"], "a/b/__tensor__", "a.b next to a.b.c")
	t.eq(paths["a"], "a/__tensor__", "a next to a.b")
	t.eq(paths["a.b.c.d"], "a/b/c/d", "the deepest name")
	t.eq(paths["x."], "x/%", "empty last component")
	t.eq(paths["__tensor__"], "%5F_tensor__", "a tensor named __tensor__")
	for kind in ("sample", "oddnames", "alldtypes"):
		check_tree(t, harness.gen_file(kind, d))
	check_sharded(t, d)
	check_recursive(t, d)

	check_man(t)


if __name__ == "__main__":
	harness.main("int-views", run, mounts=True)
