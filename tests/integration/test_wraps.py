#!/usr/bin/env python3
"""int-wraps: byte sizes that wrapped, views that repeat without bound,
and every .safetensors file stfs writes or serves valid (issue 30).

Hostile PyTorch checkpoints, a few hundred bytes each, written with
torch.save (python3-torch): expands (stride 0) of one stored element to
F32 [2^31, 2^31] (2^64 bytes: a file of 0 bytes before), [2^62 + 1] (a
file of 4 bytes), F16 [2^63 - 1] (stat failed with EIO), two F16
[2^62] (2^63 bytes each: --merge wrote an invalid file and exited 0),
three views of 4 TiB each, and one that repeats 4 bytes more than the
1 GiB per file stfs serves.  stfs-inspect, --merge and a mount each
refuse them in one line naming the file, ValidationOverflow and the
tensor, under ulimit -v (not in the sanitizer build, whose shadow memory
needs terabytes of address space) and a timeout, with a peak RSS under
64 MiB; --merge leaves no output behind, nothing is mounted.

Then files that must be served: views of every kind (transposes, steps,
expands, a permute; one repeating exactly the 1 GiB allowed), a
safetensors file of every dtype and a GGUF file with quantized tensors.
Each is mounted: every tensor's file, sidecar, .npy and .txt sizes agree
(numel times the element size; the .npy header numpy reads plus its
data); every file under .safetensors/ passes valid_safetensors(), this
test's own reading of the reference rules (shared/docs/safetensors-
format.md: length, UTF-8, JSON without duplicate keys, dtypes, integer
shapes and offsets, offsets contiguous from 0 in the order listed, each
size elements x bits / 8, the file covered exactly), and so do the files
of stfs-inspect --merge and --extract, which hold the bytes the mount
serves; the tensors of the whole-model file equal torch.load's (the
source's for the others).
"""

import contextlib
import json
import os
import resource
import struct
import subprocess
import tempfile
import time

import numpy as np
import torch

import harness
from harness import STFS, STFS_INSPECT, run
import gguf_gen

SANITIZED = bool(os.environ.get("ASAN_OPTIONS"))
VM_LIMIT = 512 << 20		# ulimit -v for the hostile runs
RSS_MAX_MB = 64
SECS = 30

BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
	"F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8,
	"F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64,
	"U64": 64}
DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
	  torch.bfloat16: "BF16", torch.uint8: "U8", torch.int8: "I8",
	  torch.int16: "I16", torch.int32: "I32", torch.int64: "I64",
	  torch.bool: "BOOL", torch.complex64: "C64"}
MAX_HEADER = 100_000_000
U64 = 2**64 - 1


# ---- the reference rules -----------------------------------------------------

def _pairs(kv):
	d = {}
	for k, v in kv:
		if k in d:
			raise ValueError("duplicate key %r" % k)
		d[k] = v
	return d


def _no_const(c):
	raise ValueError("constant %s" % c)


def _u64(v):
	return type(v) is int and 0 <= v <= U64


def valid_safetensors(head, size):
	"""Check a safetensors file by the reference reader's rules, and stfs's
	own promises (header padded to 8, tensors listed in data order).
	head: at least its first 8 + N bytes; size: the file's length.
	Returns (None, [(name, dtype, shape, begin, end)]) or (why, None)."""
	if size < 8 or len(head) < 8:
		return "HeaderTooSmall", None
	(n,) = struct.unpack("<Q", head[:8])
	if n > MAX_HEADER:
		return "HeaderTooLarge", None
	if 8 + n > size or 8 + n > len(head):
		return "InvalidHeaderLength", None
	try:
		text = head[8:8 + n].decode("utf-8")
		obj = json.loads(text, object_pairs_hook=_pairs,
				 parse_constant=_no_const)
	except (UnicodeDecodeError, ValueError) as e:
		return "InvalidHeader: %s" % e, None
	if not isinstance(obj, dict):
		return "InvalidHeaderDeserialization: not an object", None
	meta = obj.pop("__metadata__", None)
	if meta is not None and not (isinstance(meta, dict) and all(
			isinstance(v, str) for v in meta.values())):
		return "InvalidHeaderDeserialization: __metadata__", None
	listed = []
	for name, info in obj.items():
		if not isinstance(info, dict) or \
		   set(info) != {"dtype", "shape", "data_offsets"}:
			return "InvalidHeaderDeserialization: %r fields" % name, None
		dt, sh, off = info["dtype"], info["shape"], info["data_offsets"]
		if dt not in BITS:
			return "InvalidHeaderDeserialization: dtype %r" % dt, None
		if not isinstance(sh, list) or not all(_u64(d) for d in sh):
			return "InvalidHeaderDeserialization: shape %r" % sh, None
		if not isinstance(off, list) or len(off) != 2 or \
		   not all(_u64(d) for d in off):
			return "InvalidHeaderDeserialization: offsets %r" % off, None
		listed.append((name, dt, sh, off[0], off[1]))
	start = 0
	for name, dt, sh, b, e in sorted(listed, key=lambda x: (x[3], x[4])):
		if b != start or e < b:
			return "InvalidOffset: %r [%d, %d]" % (name, b, e), None
		start = e
		ne = 1
		for d in sh:
			ne *= d
			if ne > U64:
				return "ValidationOverflow: %r" % name, None
		if ne * BITS[dt] > U64:
			return "ValidationOverflow: %r" % name, None
		if ne * BITS[dt] % 8:
			return "MisalignedSlice: %r" % name, None
		if e - b != ne * BITS[dt] // 8:
			return "TensorInvalidInfo: %r" % name, None
	if start + 8 + n != size:
		return "MetadataIncompleteBuffer: %d + 8 + %d != %d" % (
			start, n, size), None
	# stfs's own: padded to 8 with spaces, tensors listed in data order
	if n % 8 or text != text.rstrip(" ") + " " * (len(text) -
						       len(text.rstrip(" "))):
		return "header not padded to 8 with spaces", None
	if [x[3] for x in listed] != sorted(x[3] for x in listed):
		return "tensors not listed in data order", None
	return None, listed


def check_file(t, path, label, whole=False):
	"""valid_safetensors() of a file (read whole when asked); returns
	(entries, data section bytes or None)."""
	size = os.stat(path).st_size
	with open(path, "rb") as f:
		head = f.read(8)
		n = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
		head += f.read(min(n, MAX_HEADER + 8))
		body = f.read() if whole else None
	why, listed = valid_safetensors(head, size)
	t.check(why is None, "%s: valid safetensors (%s bytes): %s"
		% (label, size, why))
	if body is not None:
		t.eq(len(head) + len(body), size, "%s: read as long as stat says"
		     % label)
	return listed or [], body


# ---- running a command under limits -------------------------------------------

def _limits():
	if not SANITIZED:
		resource.setrlimit(resource.RLIMIT_AS, (VM_LIMIT, VM_LIMIT))
	os.setsid()


def limited(cmd):
	"""(rc or None on timeout, stderr text, peak RSS MiB, seconds)."""
	tf = os.path.join(harness.tmpdir("time"), "t")
	t0 = time.monotonic()
	p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf] + cmd,
			     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
			     stderr=subprocess.PIPE, preexec_fn=_limits)
	try:
		_, err = p.communicate(timeout=SECS)
	except subprocess.TimeoutExpired:
		os.killpg(p.pid, 9)
		_, err = p.communicate()
		return None, err.decode("utf-8", "replace"), 0, SECS
	secs = time.monotonic() - t0
	try:
		with open(tf) as f:
			rss = int(f.read().split()[-1]) / 1024
	except (OSError, ValueError, IndexError):
		rss = 0
	return p.returncode, err.decode("utf-8", "replace"), rss, secs


# ---- hostile checkpoints --------------------------------------------------------

def hostile(d):
	"""{file: (tensor the message names, words it must hold)}"""
	one = torch.zeros(1)
	half = torch.zeros(1, dtype=torch.float16)
	fx = {
		"square.pt": ({"w": one.expand(2**31, 2**31)}, "w",
			      ["4611686018427387904 elements", "2^56"]),
		"line.pt": ({"w": one.expand(2**62 + 1)}, "w",
			    ["4611686018427387905 elements"]),
		"half.pt": ({"w": half.expand(2**63 - 1)}, "w",
			    ["9223372036854775807 elements"]),
		"two-halves.pt": ({"a": half.expand(2**62),
				   "b": half.expand(2**62)}, "a",
				  ["4611686018427387904 elements"]),
		"three-tib.pt": ({"a": one.expand(2**40), "b": one.expand(2**40),
				  "c": one.expand(2**40)}, "a",
				 ["repeats its 4 stored bytes as 4398046511104",
				  "1073741824", ".contiguous()"]),
		"over-budget.pt": ({"w": one.expand(2**28 + 2)}, "w",
				   ["repeats its 4 stored bytes as 1073741832",
				    "at most 1073741824"]),
	}
	out = {}
	for name, (obj, tensor, words) in fx.items():
		torch.save(obj, os.path.join(d, name))
		out[name] = (tensor, words)
	return out


def check_hostile(t, d):
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	for name, (tensor, words) in sorted(hostile(d).items()):
		p = os.path.join(d, name)
		size = os.path.getsize(p)
		t.check(size < 2000, "%s: a file of %d bytes" % (name, size))
		out = os.path.join(d, name + ".safetensors")
		for what, cmd in (("stfs-inspect", [STFS_INSPECT, p]),
				  ("--merge", [STFS_INSPECT, "--merge", p, "-o",
					       out]),
				  ("stfs", [STFS, p, mnt])):
			rc, err, rss, secs = limited(cmd)
			label = "%s %s" % (what, name)
			t.eq(rc, 1, "%s: exit status 1 in %d s (%r)"
			     % (label, SECS, err))
			t.check(err.startswith("%s: %s: ValidationOverflow: tensor "
					       "`%s`: " % (os.path.basename(
						       cmd[0]), p, tensor)),
				"%s: names the file, the error and the tensor: %r"
				% (label, err))
			for w in words:
				t.check(w in err, "%s: says %r: %r" % (label, w, err))
			t.eq(len(err.strip().splitlines()), 1,
			     "%s: one line: %r" % (label, err))
			if not SANITIZED:
				t.check(rss < RSS_MAX_MB, "%s: peak RSS %.0f MiB < "
					"%d MiB" % (label, rss, RSS_MAX_MB))
			t.check(not os.path.exists(out), "%s: no %s left"
				% (label, out))
			t.check(not harness.is_mounted(mnt), "%s: nothing mounted"
				% label)
			if harness.is_mounted(mnt):
				harness.force_unmount(mnt)


# ---- files that must be served ------------------------------------------------

def torch_bytes(x):
	x = x.detach().contiguous()
	if x.dtype == torch.bfloat16:
		return x.view(torch.int16).numpy().tobytes()
	return x.numpy().tobytes()


NPY = "npy"	# an expected value: the tensor's .npy values as float32


def served(d):
	"""{file: {tensor: its expected bytes, NPY, or None when too large to
	read}}"""
	g = torch.Generator().manual_seed(30)
	m = torch.randn(5, 7, generator=g)
	views = {
		"m": m, "t": m.t(), "step": m[::2, 1::3], "col": m[:, 3],
		"expand": torch.arange(3, dtype=torch.int16).reshape(3, 1)
		.expand(3, 1000),
		"scalar_expand": torch.tensor(2.5).expand(64, 64),
		"perm": torch.randn(2, 3, 4, generator=g).bfloat16()
		.permute(2, 0, 1),
		"c64": torch.randn(3, 2, generator=g).to(torch.complex64).t(),
		"nested.a": m[1:3], "nested.b": m[:, ::3].t(),
	}
	torch.save(views, os.path.join(d, "views.pt"))
	# exactly the 1 GiB of repeats a file may have, never read whole
	torch.save({"w": torch.ones(1).expand(2**28 + 1)},
		   os.path.join(d, "at-budget.pt"))
	files = {"views.pt": {k: torch_bytes(v) for k, v in views.items()},
		 "at-budget.pt": {"w": None}}
	p = harness.gen_file("alldtypes", d)
	src = harness.SrcFile(p)
	files[os.path.basename(p)] = {x.name: src.read(x) for x in src.tensors}
	gguf_gen.write(os.path.join(d, "q.gguf"),
		       [("blk.0.w", "Q4_0", [2, 64], None),
			("blk.0.k", "Q4_K", [256], None),
			("blk.1.f", "F32", [3, 5], None),
			("blk.1.h", "F16", [7], None)],
		       rng=np.random.default_rng(30))
	files["q.gguf"] = dict.fromkeys(["blk.0.w", "blk.0.k", "blk.1.f",
					 "blk.1.h"], NPY)
	return files


def check_tensor_files(t, mnt, name, label):
	"""Sizes of a tensor's file, sidecar, .npy and .txt agree."""
	enc = harness.encode_name(name)
	path = os.path.join(mnt, enc)
	size = os.stat(path).st_size
	with open(path + ".json") as f:
		side = json.load(f)
	numel = 1
	for s in side["shape"]:
		numel *= s
	t.eq(side["nbytes"], size, "%s: %s: sidecar nbytes is its size"
	     % (label, name))
	if side["dtype"] in BITS:
		t.eq(size, numel * BITS[side["dtype"]] // 8, "%s: %s: %d "
		     "elements of %s" % (label, name, numel, side["dtype"]))
	npy = os.path.join(mnt, ".npy", enc + ".npy")
	nsize = os.stat(npy).st_size
	with open(npy, "rb") as f:
		if np.lib.format.read_magic(f) == (1, 0):
			shape, _, dtype = np.lib.format.read_array_header_1_0(f)
		else:
			shape, _, dtype = np.lib.format.read_array_header_2_0(f)
		hlen = f.tell()
	t.eq(list(shape), side["shape"], "%s: %s: .npy shape" % (label, name))
	t.eq(nsize, hlen + numel * dtype.itemsize, "%s: %s: .npy is its "
	     "header and %d elements of %s" % (label, name, numel, dtype))
	tsize = os.stat(os.path.join(mnt, ".txt", enc + ".txt")).st_size
	t.check(tsize % max(numel, 1) == 0 and tsize <= 32 * numel,
		"%s: %s: .txt of %d bytes for %d elements"
		% (label, name, tsize, numel))
	if size:
		with open(path, "rb") as f:
			f.seek(size - 1)
			t.eq(len(f.read(4)), 1, "%s: %s: its last byte reads"
			     % (label, name))
	return side


def check_served(t, d, name, want):
	src = os.path.join(d, name)
	label = name
	with harness.Mount(t, src, args=["-o", "views=visible"]) as m:
		sides = {}
		for tn in (want or {}):
			sides[tn] = check_tensor_files(t, m.path, tn, label)
		vst = os.path.join(m.path, ".safetensors")
		files = []
		for root, _, names in os.walk(vst):
			files += [os.path.join(root, f) for f in names]
		t.check(os.path.join(vst, "model.safetensors") in files,
			"%s: .safetensors/model.safetensors is listed" % label)
		small = all(v is not None for v in want.values())
		whole = None
		for p in sorted(files):
			listed, body = check_file(t, p, "%s: %s" % (
				label, os.path.relpath(p, m.path)),
				whole=small and p.endswith("/model.safetensors") and
				os.path.dirname(p) == vst)
			if body is not None:
				whole = (listed, body)
		if whole:
			t.eq(sorted(x[0] for x in whole[0]), sorted(want),
			     "%s: model.safetensors lists every tensor" % label)
			for tn, dt, sh, b, e in whole[0]:
				x = want.get(tn)
				if x == NPY and dt != "F16":
					x = np.load(os.path.join(
						m.path, ".npy", harness.encode_name(tn)
						+ ".npy")).astype("<f4").tobytes()
				elif x == NPY:
					with open(os.path.join(m.path, harness.
							       encode_name(tn)),
						  "rb") as f:
						x = f.read()
				t.check(whole[1][b:e] == x, "%s: model.safetensors "
					"%s holds its bytes" % (label, tn))
		if small:
			merged = os.path.join(d, name + ".merged.safetensors")
			r = run([STFS_INSPECT, "--merge", src, "-o", merged],
				timeout=120)
			t.eq(r.returncode, 0, "%s: --merge: %r" % (label, r.stderr))
			check_file(t, merged, "%s --merge" % label, whole=True)
			with open(merged, "rb") as f, open(os.path.join(
					vst, "model.safetensors"), "rb") as g:
				t.check(f.read() == g.read(), "%s: --merge wrote "
					"the bytes the mount serves" % label)
			prefix = "nested" if name == "views.pt" else "blk.0"
			if name.endswith(".gguf") or name == "views.pt":
				ex = os.path.join(d, name + ".extract.safetensors")
				r = run([STFS_INSPECT, "--extract", prefix, "--strip",
					 src, "-o", ex], timeout=120)
				t.eq(r.returncode, 0, "%s: --extract: %r"
				     % (label, r.stderr))
				check_file(t, ex, "%s --extract" % label, whole=True)
	return sides


def check_meta_named(t, d):
	"""A GGUF tensor named __metadata__ (its metadata's key in a
	safetensors file): the whole-model file is refused, not written with
	a second "__metadata__"; the other files are served."""
	p = os.path.join(d, "meta.gguf")
	gguf_gen.write(p, [("__metadata__", "F32", [2], None),
			   ("blk.0.w", "F16", [3], None)],
		       rng=np.random.default_rng(31))
	out = os.path.join(d, "meta.safetensors")
	r = run([STFS_INSPECT, "--merge", p, "-o", out])
	err = r.stderr.decode("utf-8", "replace")
	t.eq(r.returncode, 2, "meta.gguf: --merge refuses: %r" % err)
	t.check("\"__metadata__\"" in err and len(err.splitlines()) == 1 and
		err.startswith("stfs-inspect: %s: UsageError: " % p) and
		"--extract PREFIX" in err, "meta.gguf: one line naming the "
		"file, the tensor and what to do: %r" % err)
	t.check(not os.path.exists(out), "meta.gguf: no %s left" % out)
	with harness.Mount(t, p) as m:
		vst = os.path.join(m.path, ".safetensors")
		try:
			os.stat(os.path.join(vst, "model.safetensors"))
			t.check(False, "meta.gguf: model.safetensors is refused")
		except FileNotFoundError:
			pass
		check_file(t, os.path.join(vst, "blk.0.safetensors"),
			   "meta.gguf: blk.0.safetensors", whole=True)


def sparse_gguf(path, n, typ, numel):
	"""A GGUF file of n tensors of numel elements of typ, its data a hole
	of the size they take (gguf_gen's header, written by hand to skip
	their bytes)."""
	_, block, bb = gguf_gen.TYPES[typ]
	tensors, offs, pos = [], [], 0
	for i in range(n):
		tensors.append(("blk.%d.w" % i, typ, [numel], None))
		offs.append(pos)
		pos += numel // block * bb
		pos += -pos % 32
	head = gguf_gen.header_bytes(tensors, offs, [])
	with open(path, "wb") as f:
		f.write(head + b"\0" * (-len(head) % 32))
		f.truncate(len(head) + (-len(head) % 32) + pos)


def sparse_safetensors(path, n, dtype, numel, bits):
	"""A safetensors file of n tensors of numel elements, the data a
	hole."""
	size = numel * bits // 8
	h = {"t%03d" % i: {"dtype": dtype, "shape": [numel],
			   "data_offsets": [i * size, (i + 1) * size]}
	     for i in range(n)}
	b = json.dumps(h).encode()
	b += b" " * (-len(b) % 8)
	with open(path, "wb") as f:
		f.write(struct.pack("<Q", len(b)) + b)
		f.truncate(8 + len(b) + n * size)


def check_sums(t, d):
	"""Sums over a model's tensors: each tensor's numbers are bounded
	(at most 2^56 elements), their sums were not.  300 Q1_0 tensors of
	2^56 elements (a sparse file of 3 EB) hold 2.2e19 parameters: the
	summary said 3.2e18, wrapped; 128 F4 tensors of 2^56
	elements hold 2^63, which --json wrote as -9223372036854775808.  A
	sum now stops at 2^64 - 1; JSON writes one past 2^63 - 1 as a
	number in floating point.  The files live in a tmpfs of our own,
	whose files may be that large (ext4's stop at 16 TiB)."""
	with own_tmpfs(t, d) as shm:
		q = os.path.join(shm, "q1.gguf")
		f4 = os.path.join(shm, "f4.safetensors")
		sparse_gguf(q, 300, "Q1_0", 2**56)
		sparse_safetensors(f4, 128, "F4", 2**56, 4)
		big = 2**64 - 1
		r = run([STFS_INSPECT, q])
		out = r.stdout.decode()
		t.check(r.returncode == 0 and "parameters:  18,446,744,073,709,"
			"551,615\n" in out, "q1.gguf: the parameters stop at "
			"2^64 - 1: %r %r" % (out, r.stderr))
		r = run([STFS_INSPECT, "--json", "--group=1", q])
		j = json.loads(r.stdout or b"{}")
		t.check(j.get("parameters_total", 0) >= big and
			j.get("parameters", {}).get("Q1_0", 0) >= big,
			"q1.gguf --json: parameters at 2^64 - 1: %r"
			% {k: j.get(k) for k in ("parameters",
						 "parameters_total")})
		t.check([g.get("parameters", 0) >= big for g in
			 j.get("groups", [])] == [True], "q1.gguf --group: "
			"the group's parameters: %r" % j.get("groups"))
		r = run([STFS_INSPECT, "--group=1", q])
		t.check(b"18,446,744,073,709,551,615" in r.stdout.split(
			b"(total)")[0].splitlines()[-1], "q1.gguf --group: the "
			"total's parameters: %r" % r.stdout)
		# its float32 values take 300 x 2^58 bytes: no whole file
		out = os.path.join(d, "q1.safetensors")
		r = run([STFS_INSPECT, "--merge", q, "-o", out])
		err = r.stderr.decode()
		t.check(r.returncode == 1 and err.startswith(
			"stfs-inspect: %s: ValidationOverflow: " % q) and
			"--extract PREFIX" in err and len(err.splitlines()) == 1,
			"q1.gguf --merge: one line naming the file, the error and "
			"what to do: %r" % err)
		t.check(not os.path.exists(out), "q1.gguf --merge: no %s" % out)
		r = run([STFS_INSPECT, "--json", f4])
		j = json.loads(r.stdout or b"{}")
		t.eq((j.get("parameters_total"), j.get("parameters")),
		     (2**63, {"F4": 2**63}), "f4.safetensors --json: 2^63 "
		     "parameters, not negative")
		with harness.Mount(t, shm) as m:
			with open(os.path.join(m.path, "__summary__.json")) as f:
				root = json.load(f)
			with open(os.path.join(m.path, "q1", "__summary__.json")) \
					as f:
				one = json.load(f)
		t.check(one.get("parameters_total", 0) >= big, "q1.gguf "
			"mounted: __summary__.json's parameters_total %r"
			% one.get("parameters_total"))
		got = {x.get("path"): x.get("parameters") for x in
		       root.get("model_list", [])}
		t.check(got.get("q1", {}).get("Q1_0", 0) >= big and
			got.get("f4") == {"F4": 2**63}, "the tree's "
			"__summary__.json: parameters per model %r" % got)


def sparse_gptq(path, n, rows, cols):
	"""n GPTQ weights (4 bits, one group, v1: a stored zero of 0 is 1)
	of cols x rows values, their data a hole but for weight k's first
	scale, k + 1: its first values are -(k + 1)."""
	h, off, scales = {}, 0, []
	for k in range(n):
		p = "model.layers.%d.mlp.up_proj." % k
		for name, dt, shape, size in (
				(p + "qweight", "I32", [rows // 8, cols], 4),
				(p + "qzeros", "I32", [1, cols // 8], 4),
				(p + "scales", "F16", [1, cols], 2),
				(p + "g_idx", "I32", [rows], 4)):
			for x in shape:
				size *= x
			h[name] = {"dtype": dt, "shape": shape,
				   "data_offsets": [off, off + size]}
			if name.endswith("scales"):
				scales.append(off)
			off += size
	b = json.dumps(h).encode()
	b += b" " * (-len(b) % 8)
	with open(path, "wb") as f:
		f.write(struct.pack("<Q", len(b)) + b)
		f.truncate(8 + len(b) + off)
		for k, at in enumerate(scales):
			f.seek(8 + len(b) + at)
			f.write(np.float16(k + 1).tobytes())
	with open(os.path.join(os.path.dirname(path), "config.json"), "w") as f:
		json.dump({"quantization_config": {
			"quant_method": "gptq", "bits": 4, "group_size": -1,
			"desc_act": False}}, f)


def check_dequant(t, d):
	"""The logical tensors of .dequant/ (quantized weights as their
	values) are made, not read from a table format/tensor_size.h
	checked: a GPTQ weight of 2^57 values was served, its .txt/ file's
	size failing stat with EIO; 70 weights of 2^56 values (4 bytes each
	as float32) ran the computed shard's offsets past 2^64, and a read
	of weight 69 gave weight 5's values, one of weight 15 EIO.  A weight
	of more than 2^56 values, or past 2^62 bytes of them all, is now
	left as stored and named with the reason."""
	with own_tmpfs(t, d) as shm:
		for name, n, cols in (("one", 1, 2**47), ("many", 70, 2**46)):
			os.mkdir(os.path.join(shm, name))
			sparse_gptq(os.path.join(shm, name, "model.safetensors"),
				    n, 1024, cols)
		with harness.Mount(t, os.path.join(shm, "one",
						   "model.safetensors")) as m:
			dq = os.path.join(m.path, ".dequant")
			with open(os.path.join(dq, "__summary__.json")) as f:
				qs = json.load(f).get("quantization", {})
			t.eq((qs.get("weights"), qs.get("refused_list")),
			     (0, ["model.layers.0.mlp.up_proj.weight: more "
				  "than the 2^56 values stfs serves"]),
			     "one: the weight of 2^57 values is refused")
			t.check(not os.path.exists(os.path.join(
				dq, ".txt", "model.layers.0.mlp.up_proj.weight"
				".txt")), "one: no .txt/ of it")
		with harness.Mount(t, os.path.join(shm, "many",
						   "model.safetensors")) as m:
			dq = os.path.join(m.path, ".dequant")
			with open(os.path.join(dq, "__summary__.json")) as f:
				qs = json.load(f).get("quantization", {})
			t.eq((qs.get("weights"), qs.get("refused")), (16, 54),
			     "many: 16 weights of 2^58 bytes fill the 2^62")
			t.check(len(qs.get("refused_list", [])) == 54 and
				all(("layers.%d.mlp" % k) in x and "2^62" in x
				    for k, x in zip(range(16, 70),
						    qs.get("refused_list", []))),
				"many: the others named, with the reason: %r"
				% qs.get("refused_list", [])[:2])
			for k in (0, 5, 15):
				p = os.path.join(dq, "model.layers.%d.mlp.up_proj."
						 "weight" % k)
				try:
					with open(p, "rb") as f:
						v = np.frombuffer(f.read(8),
								  "<f4").tolist()
				except OSError as e:
					v = str(e)
				t.eq(v, [-(k + 1.0)] * 2, "many: weight %d's first "
				     "values" % k)
			t.check(not os.path.exists(os.path.join(
				dq, "model.layers.69.mlp.up_proj.weight")),
				"many: weight 69 stays as stored")


@contextlib.contextmanager
def own_tmpfs(t, d):
	"""A tmpfs of our own, whose files may be as large as 2^63 bytes of
	holes (ext4's stop at 16 TiB); unmounted after."""
	shm = tempfile.mkdtemp(prefix="shm-", dir=d)
	r = run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs",
		 shm])
	t.eq(r.returncode, 0, "a tmpfs for sparse files: %r" % r.stderr)
	try:
		yield shm
	finally:
		run(["umount", "-l", shm])


def check_at_budget(t, sides):
	side = sides["w"]
	t.eq(side["nbytes"], 4 * (2**28 + 1), "at-budget.pt: w is served "
	     "whole (1 GiB of repeats and the 4 bytes it reads)")


def run_(t):
	d = harness.tmpdir("wraps")
	check_hostile(t, d)
	files = served(d)
	for name in sorted(files):
		sides = check_served(t, d, name, files[name])
		if name == "at-budget.pt":
			check_at_budget(t, sides)
	check_meta_named(t, d)
	check_sums(t, d)
	check_dequant(t, d)
	harness.rmtree_safe(d)


harness.main("int-wraps", run_, mounts=True)
