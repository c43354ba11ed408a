#!/usr/bin/env python3
"""int-torch: PyTorch checkpoints mounted without running their pickle
(issue 24).

Debian's python3-torch writes every fixture here with torch.save: a state
dict of every dtype torch has a safetensors name for, views (a row, a
slice with an offset), strided views (transposes, slices with a step, an
expand, a permute: served gathered in C order), shared storages (tied
weights), a module's
parameters, an optimizer state (Adam after a step), a Trainer-like dict.
Each is mounted; every tensor file's bytes and every .npy value are
compared with torch.load of the same file (the test trusts its own
fixtures; stfs trusts none), sidecars say dtype, shape and storage,
non-tensor values are in __metadata__.json, and .safetensors/model.safetensors
passes stfs-inspect and holds the same values.

A training checkpoint as trainers write one (issue 30: a seed past 2^63,
torch.Size, sets, a device, a dtype, empty dicts, an argparse.Namespace
beside the model, optimizer and scheduler states) mounts with every
tensor equal to torch.load's, and its other values shown in
__metadata__.json.  numpy's values beside a model (a metric, an epoch,
np.random.get_state(), small arrays in C and Fortran order, one too large
to show) are numbers and lists there, each reading back as the same value
of its dtype.  Tensors of torch 2's own dtypes (uint16 to uint64, the
float8s: _rebuild_tensor_v3, which torch 1.13 cannot write) are pickled
as torch 2's torch.save does, and mount with their bytes and dtypes.

A whole model (torch.save(model), alone and in a dict) mounts the tensors
of torch.load(...).state_dict() under its names.

Hostile checkpoints (a GLOBAL os.system, deep nesting, a huge length, a
deflated entry, the legacy format at each pickle protocol, a dtype
safetensors lacks) are refused in one line; an __reduce__ payload that
would create a file (at protocol 2, at protocol 0, as Python 2's INST) is
shown as what it would call, and the file does not exist.  Pickles built
to make memory far beyond their size (a string encoded again and again,
one referenced again and again, a long key over many values, a long
bytes value, a numpy array referenced again and again, ints of 4,300
digits in protocol 0's text) stay under 64 MB of RSS and ulimit -v 256 MB
(under ASan, which maps huge shadow memory, the outcome is checked
without either bound), each with a deadline.  So do checkpoints with a
100 MB value nobody sees (torch.save's bytes, stored and with data.pkl
deflated, a bytearray, a str: named by their length, their tensor equal
to the tensor saved, mounted too; the legacy format: refused in one line).
"""

import argparse
import collections
import io
import json
import os
import pickle
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

import harness
from harness import STFS_INSPECT, run

import numpy as np
import torch

DTYPES = {
	torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
	torch.bfloat16: "BF16", torch.uint8: "U8", torch.int8: "I8",
	torch.int16: "I16", torch.int32: "I32", torch.int64: "I64",
	torch.bool: "BOOL", torch.complex64: "C64",
}


def values(dtype, shape, seed):
	g = torch.Generator().manual_seed(seed)
	n = 1
	for s in shape:
		n *= s
	if dtype == torch.bool:
		return torch.rand(n, generator=g).reshape(shape) > 0.5
	if dtype.is_complex:
		return torch.complex(torch.randn(n, generator=g),
				     torch.randn(n, generator=g)).reshape(shape)
	if dtype.is_floating_point:
		return (torch.randn(n, generator=g) * 100).to(dtype).reshape(shape)
	lo, hi = (0, 256) if dtype == torch.uint8 else (-100, 100)
	return torch.randint(lo, hi, (n,), generator=g).to(dtype).reshape(shape)


def fixtures(d):
	"""{file name: what torch.save wrote}"""
	fx = {}
	sd = {}
	for i, (dt, name) in enumerate(DTYPES.items()):
		sd["t_" + name.lower()] = values(dt, (3, 5), i)
		sd["scalar_" + name.lower()] = values(dt, (), 100 + i)
	sd["empty"] = torch.zeros(0, 4)
	fx["alldtypes.pt"] = sd

	base = values(torch.float32, (6, 4), 7)
	fx["shared.bin"] = {
		"embed.weight": base,
		"lm_head.weight": base,		# tied: one storage
		"row": base[2],			# a contiguous view at an offset
		"rows": base[1:4],
		"flat": base.view(24),
		"other": values(torch.float16, (4, 4), 8),
	}
	m = values(torch.float32, (5, 7), 9)
	fx["strided.pt"] = {
		"m": m,
		"t": m.t(),			# a transpose
		"step": m[::2, 1::3],		# slices with steps
		"col": m[:, 3],
		"expand": values(torch.int16, (3, 1), 10).expand(3, 4),
		"perm": values(torch.bfloat16, (2, 3, 4), 11).permute(2, 0, 1),
		"c64t": values(torch.complex64, (3, 2), 12).t(),
		"boolt": values(torch.bool, (4, 3), 13).t(),
		# spans more than a render window (1 MiB): read run by run
		"big_t": values(torch.float32, (600, 700), 14).t(),
	}

	lin = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3))
	fx["module.bin"] = lin.state_dict()
	opt = torch.optim.Adam(lin.parameters(), lr=0.01, betas=(0.8, 0.99))
	lin(torch.ones(2, 4)).sum().backward()
	opt.step()
	fx["optimizer.pt"] = opt.state_dict()
	fx["trainer.pt"] = {"model": lin.state_dict(), "epoch": 3,
			    "loss": 0.25, "note": "run 1",
			    "history": [1.5, 0.5]}
	fx["checkpoint.pt"] = training_checkpoint()
	fx["numpy.pt"] = numpy_checkpoint()
	for name, obj in fx.items():
		torch.save(obj, os.path.join(d, name))
	return fx


def training_checkpoint():
	"""What a training loop saves: the model, the optimizer's and the
	scheduler's states beside values of every kind trainers keep."""
	torch.manual_seed(2**64 - 7)	# a seed past 2^63: a 9-byte LONG1
	model = torch.nn.Sequential(torch.nn.Linear(4, 3),
				    torch.nn.LayerNorm(3))
	opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
	sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
	for _ in range(2):
		model(torch.randn(5, 4)).sum().backward()
		opt.step()
		sched.step()
	return {"model": model.state_dict(), "optimizer": opt.state_dict(),
		"lr_scheduler": sched.state_dict(), "epoch": 2,
		"global_step": 1200, "seed": torch.initial_seed(),
		"big": 2**70, "neg": -2**80,
		"input_shape": torch.Size([5, 4]), "seen": {3, 1, 2},
		"frozen": frozenset(["a", "b"]),
		"device": torch.device("cuda", 0), "cpu": torch.device("cpu"),
		"dtype": torch.bfloat16, "extra": {}, "callbacks": {"ckpt": {}},
		"hparams": argparse.Namespace(lr=1e-3, layers=[4, 3]),
		"rng_state": torch.get_rng_state()}


def numpy_checkpoint():
	"""What trainers keep of numpy's beside the model: scalars of each
	kind, the numpy random state (an array of 624 uint32), small arrays
	in either order, one too large to show."""
	np.random.seed(1234)
	torch.manual_seed(0)
	model = torch.nn.Sequential(torch.nn.Linear(4, 3),
				    torch.nn.LayerNorm(3))
	return {"best_metric": np.float64(0.91), "epoch": np.int64(3),
		"loss32": np.float32(0.1), "half": np.float16(0.1),
		"flag": np.bool_(False), "seed": np.uint64(2**64 - 1),
		"small": np.int8(-5), "nan": np.float64("nan"),
		"rng": np.random.get_state(), "hist": np.linspace(0, 1, 7),
		"grid": np.asfortranarray(np.arange(12, dtype=np.int16)
					  .reshape(3, 4)),
		"weights32": np.array([0.1, 0.2, 1e-3], dtype=np.float32),
		"empty": np.zeros((2, 0)), "big": np.zeros((200, 100)),
		"model": model.state_dict(), "scores": [np.float64(0.5),
							 np.int32(7)]}


def flatten(obj, prefix=""):
	"""(tensors, metadata) the way stfs names them."""
	tensors, meta = {}, {}

	def has_tensor(v):
		if isinstance(v, torch.Tensor):
			return True
		if isinstance(v, (list, tuple)):
			return any(has_tensor(x) for x in v)
		if isinstance(v, dict):
			return any(has_tensor(x) for x in v.values())
		return False

	def walk(v, name):
		if isinstance(v, dict) and v:
			for k, x in v.items():
				walk(x, "%s.%s" % (name, k) if name else str(k))
		elif isinstance(v, torch.Tensor):
			tensors[name] = v
		elif isinstance(v, (list, tuple)) and has_tensor(v):
			for i, x in enumerate(v):
				walk(x, "%s.%d" % (name, i) if name else str(i))
		else:
			meta[name] = v
	walk(obj, prefix)
	return tensors, meta


def shown_data(v):
	"""v as stfs shows it in JSON (docs/pytorch.md), a set as a sorted
	list (stfs keeps the pickle's order)."""
	if isinstance(v, dict):
		return {str(k): shown_data(x) for k, x in v.items()}
	if isinstance(v, (set, frozenset)):
		return sorted(shown_data(x) for x in v)
	if isinstance(v, (list, tuple)):
		return [shown_data(x) for x in v]
	if isinstance(v, (torch.device, torch.dtype)):
		return str(v)
	if isinstance(v, bytes):
		return "0x" + v.hex()
	if isinstance(v, argparse.Namespace):
		return {"__class__": "argparse.Namespace",
			"state": shown_data(vars(v))}
	if isinstance(v, np.ndarray) and v.nbytes > 65536:
		return {"__ndarray__": {"dtype": v.dtype.str,
					"shape": list(v.shape)}}
	if isinstance(v, (np.ndarray, np.generic)):
		return v.tolist()
	return v


def check_shown(t, got, v, label):
	"""got, a value of __metadata__.json, shows v: text for a string,
	a device, a dtype, bytes, an int; JSON for anything else; a numpy
	scalar or array as its numbers, each reading back as the same value
	of its own dtype (a float32 as 0.1, not 0.10000000149011612)."""
	if isinstance(v, (np.generic, np.ndarray)) and v.nbytes <= 65536:
		want = np.asarray(v)
		try:
			j = np.asarray(json.loads(got), dtype=want.dtype)
		except (TypeError, ValueError) as x:
			t.check(False, "%s: numbers: %r (%s)" % (label, got, x))
			return
		t.check(j.shape == want.shape and np.array_equal(
			j, want, equal_nan=want.dtype.kind == "f"),
			"%s: %r shows %r" % (label, got[:80], v))
		return
	if isinstance(v, (str, torch.device, torch.dtype, bytes)) or \
	   (isinstance(v, int) and not isinstance(v, bool)):
		t.eq(got, shown_data(v) if not isinstance(v, int) else str(v),
		     "%s (as text)" % label)
		return
	try:
		j = json.loads(got)
	except (TypeError, ValueError):
		t.check(False, "%s: JSON: %r" % (label, got))
		return
	if isinstance(v, (set, frozenset)):
		j = sorted(j)
	t.eq(j, shown_data(v), label)


def raw_bytes(t):
	"""The bytes of t in C order, as a safetensors file holds them."""
	t = t.detach().contiguous()
	if t.dtype == torch.bfloat16:
		return t.view(torch.int16).numpy().tobytes()
	return t.numpy().tobytes()


def as_numpy(t):
	"""What .npy/ serves: bfloat16 widened to float32."""
	t = t.detach()
	if t.dtype == torch.bfloat16:
		return t.float().numpy()
	return t.numpy()


def check_mounted(t, path, label):
	loaded = torch.load(path)
	tensors, meta = flatten(loaded)
	with harness.Mount(t, path) as m:
		names = set(os.listdir(m.path))
		for name, x in tensors.items():
			f = harness.encode_name(name)
			t.check(f in names, "%s: %s is listed" % (label, name))
			with open(os.path.join(m.path, f), "rb") as fh:
				got = fh.read()
			t.check(got == raw_bytes(x), "%s: %s: bytes equal "
				"torch.load's" % (label, name))
			with open(os.path.join(m.path, f + ".json")) as fh:
				j = json.load(fh)
			t.eq(j["dtype"], DTYPES[x.dtype], "%s: %s dtype" % (label, name))
			t.eq(j["shape"], list(x.shape), "%s: %s shape" % (label, name))
			t.eq(j["storage_offset"], x.storage_offset(),
			     "%s: %s storage_offset" % (label, name))
			t.eq(j["strides"], list(x.stride()),
			     "%s: %s strides" % (label, name))
			t.eq(j["nbytes"], len(raw_bytes(x)),
			     "%s: %s nbytes (gathered for a strided view)"
			     % (label, name))
			shared = sorted(n for n, y in tensors.items() if n != name
					and y.storage().data_ptr() ==
					x.storage().data_ptr())
			t.eq(sorted(j["storage_shared_with"]), shared,
			     "%s: %s storage_shared_with" % (label, name))
			npy = np.load(os.path.join(m.path, ".npy", f + ".npy"))
			want = as_numpy(x)
			t.check(npy.shape == want.shape and
				np.array_equal(npy, want, equal_nan=True),
				"%s: %s: .npy values equal torch.load's" % (label, name))
		with open(os.path.join(m.path, "__metadata__.json")) as fh:
			got_meta = json.load(fh)
		for k, v in meta.items():
			check_shown(t, got_meta.get(k), v,
				    "%s: metadata %s" % (label, k))
		t.eq(len(got_meta), len(meta), "%s: metadata count" % label)
		check_safetensors(t, os.path.join(m.path, ".safetensors",
						  "model.safetensors"), tensors,
				  label)


def read_safetensors(path):
	with open(path, "rb") as f:
		data = f.read()
	n = struct.unpack("<Q", data[:8])[0]
	hdr = json.loads(data[8:8 + n])
	meta = hdr.pop("__metadata__", {})
	body = data[8 + n:]
	return {k: (v["dtype"], v["shape"],
		    body[v["data_offsets"][0]:v["data_offsets"][1]])
		for k, v in hdr.items()}, meta


def check_safetensors(t, path, tensors, label):
	r = run([STFS_INSPECT, path])
	t.eq(r.returncode, 0, "%s: stfs-inspect accepts %s: %r"
	     % (label, path, r.stderr))
	got, _ = read_safetensors(path)
	t.eq(sorted(got), sorted(tensors), "%s: safetensors names" % label)
	for name, x in tensors.items():
		if name not in got:
			continue
		dt, shape, b = got[name]
		t.check(dt == DTYPES[x.dtype] and shape == list(x.shape) and
			b == raw_bytes(x), "%s: safetensors %s equals torch.load's"
			% (label, name))


# ---- hostile checkpoints ---------------------------------------------------

def zip_of(pkl, entries=(), compress=zipfile.ZIP_STORED, folder="archive"):
	b = io.BytesIO()
	with zipfile.ZipFile(b, "w", compression=compress) as z:
		z.writestr(folder + "/data.pkl", pkl)
		for name, data in entries:
			z.writestr(folder + "/" + name, data)
		z.writestr(folder + "/version", "3\n")
	return b.getvalue()


class Payload:
	def __init__(self, path):
		self.path = path

	def __reduce__(self):
		return (os.system, ("touch " + self.path,))


def hostile(d, witness):
	"""{file name: (bytes, error name, [words])}"""
	fx = {}
	fx["system.pt"] = (zip_of(b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00"
				  b"trueq\x01\x85q\x02Rq\x03."),
			   "InvalidPickle", ["holds a call of os.system, not a "
					     "dict"])
	fx["namespace.pt"] = (zip_of(pickle.dumps(argparse.Namespace(lr=0.1),
						   protocol=2)),
			      "InvalidPickle", ["an object of class "
						"argparse.Namespace, not a dict",
						"torch.save(model)"])
	fx["deep.pt"] = (zip_of(b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b"."),
			 "InvalidPickle", ["deeper"])
	fx["huge.pt"] = (zip_of(b"\x80\x02X\xff\xff\xff\x7fabc."),
			 "InvalidPickle", ["bytes"])
	b = io.BytesIO()
	torch.save({"w": torch.ones(3)}, b)
	with zipfile.ZipFile(b) as z:
		entries = [(i.filename.split("/", 1)[1], z.read(i))
			   for i in z.infolist()
			   if not i.filename.endswith(("data.pkl", "version"))]
		pkl = z.read([n for n in z.namelist()
			      if n.endswith("data.pkl")][0])
	fx["deflated.pt"] = (zip_of(pkl, entries, zipfile.ZIP_DEFLATED),
			     "InvalidCheckpoint", ["compressed", "torch.save"])
	for proto in (2, 3, 4, 5):
		b = io.BytesIO()
		torch.save({"w": torch.ones(3)}, b, pickle_protocol=proto,
			   _use_new_zipfile_serialization=False)
		fx["legacy%d.pt" % proto] = (b.getvalue(), "InvalidCheckpoint",
					     ["legacy", "torch.save"])
	b = io.BytesIO()
	torch.save({"w": torch.ones(3, dtype=torch.complex128)}, b)
	fx["c128.pt"] = (b.getvalue(), "InvalidPickle",
			 ["ComplexDoubleStorage", "no safetensors dtype"])
	b = io.BytesIO()
	torch.save({"__metadata__": torch.ones(3)}, b)
	fx["metadata-name.pt"] = (b.getvalue(), "InvalidPickle",
				  ["__metadata__", "metadata"])
	fx["storage-missing.pt"] = (zip_of(pkl), "InvalidCheckpoint",
				    ["no entry", "archive/data/0"])
	fx["storage-short.pt"] = (zip_of(pkl, [("data/0", b"\0" * 8)]),
				  "InvalidPickle", ["size"])
	for name, (data, _, _) in fx.items():
		with open(os.path.join(d, name), "wb") as f:
			f.write(data)
	return fx


def check_hostile(t, d):
	witness = os.path.join(d, "payload-ran")
	fx = hostile(d, witness)
	# an __reduce__ payload is shown as what it would call, never called
	# (at protocol 2, at protocol 0, and as Python 2's INST writes it)
	payloads = {
		"reduce.pt": (pickle.dumps({"w": Payload(witness)}, protocol=2),
			      "posix.system"),
		"reduce0.pt": (pickle.dumps({"w": Payload(witness)}, protocol=0),
			       "posix.system"),
		"inst.pt": (b"(dp0\nVw\n(Vtouch " + witness.encode() +
			    b"\nios\nsystem\ns.", "os.system"),
	}
	for name, (pkl, callee) in payloads.items():
		src = os.path.join(d, name)
		with open(src, "wb") as f:
			f.write(zip_of(pkl))
		with harness.Mount(t, src) as m:
			with open(os.path.join(m.path, "__metadata__.json")) as f:
				shown = json.load(f).get("w")
			t.eq(json.loads(shown) if shown else None,
			     {"__call__": callee, "args": ["touch " + witness]},
			     "%s: the payload is shown as a call of os.system" % name)
	mnt = harness.tmpdir("mnt")
	for name, (_, code, words) in sorted(fx.items()):
		p = os.path.join(d, name)
		for cmd in ([STFS_INSPECT, p], [harness.STFS, p, mnt]):
			r = run(cmd, timeout=30)
			err = r.stderr.decode("utf-8", "replace")
			what = "%s %s" % (os.path.basename(cmd[0]), name)
			t.eq(r.returncode, 1, "%s: exit status 1 (%s)" % (what, err))
			t.check(("%s: %s: " % (p, code)) in err,
				"%s: names the file and %s: %r" % (what, code, err))
			for w in words:
				t.check(w in err, "%s: says %r: %r" % (what, w, err))
			t.eq(len(err.strip().splitlines()), 1,
			     "%s: one line: %r" % (what, err))
			if harness.is_mounted(mnt):
				harness.force_unmount(mnt)
	t.check(not os.path.exists(witness),
		"the __reduce__ payload did not run (%s does not exist)" % witness)


# ---- pickles built to make memory far beyond their size ---------------------

RSS_MAX = 64 << 20		# bytes of RSS each may take
AS_MAX = 256 << 20		# ulimit -v


def sanitized():
	"""stfs built with ASan, which maps terabytes of shadow memory and
	keeps freed blocks in quarantine: no ulimit -v or RSS bound holds."""
	with open(STFS_INSPECT, "rb") as f:
		return b"__asan_init" in f.read()


def binunicode(s):
	b = s.encode("utf-8")
	return b"X" + struct.pack("<I", len(b)) + b


def hostile_encode(size=1 << 20):
	"""{"g": _codecs.encode, "l": 'latin1', "s": S,
	"b": [_codecs.encode(S, 'latin1') again and again]}: S, 256 KiB of
	UTF-8, memoized once; each call 8 bytes"""
	p = [b"\x80\x02}q\x00(", binunicode("g"), b"c_codecs\nencode\nq\x02",
	     binunicode("l"), binunicode("latin1"), b"q\x03",
	     binunicode("s"), binunicode("\xff" * (128 << 10)), b"q\x04",
	     binunicode("b"), b"]q\x01("]
	n = (size - sum(map(len, p))) // 8
	return b"".join(p) + b"h\x02h\x04h\x03\x86R" * n + b"eu.", n


def hostile_repeat(size=2 << 20):
	"""{"s": [S, S, ...]}: S of 1 MiB (the longest str shown), then a
	reference to it per 2 bytes"""
	p = [b"\x80\x02}q\x00(", binunicode("s"), b"]q\x01(",
	     binunicode("x" * (1 << 20)), b"q\x02"]
	n = (size - sum(map(len, p))) // 2
	return b"".join(p) + b"h\x02" * n + b"eu."


def hostile_names(size=1 << 20):
	"""{K: {0: None, 1: None, ...}}: K of 512 KiB, a value per 6
	bytes, each named K.i"""
	p = [b"\x80\x02}q\x00(", binunicode("k" * (size // 2)), b"}q\x01("]
	n = (size - sum(map(len, p))) // 6
	return b"".join(p) + b"".join(b"J" + struct.pack("<i", i) + b"N"
				      for i in range(n)) + b"uu."


def hostile_bytes(size=16 << 20):
	"""{"b": 16 MiB of bytes} (one snprintf per byte made 200 MB take
	28 s)"""
	return b"\x80\x02}q\x00(" + binunicode("b") + b"\x8e" + \
		struct.pack("<Q", size) + b"\xab" * size + b"u."


def hostile_ndarray(size=1 << 20):
	"""{"a": [A, A, ...]}: A a numpy array of 60,000 uint8 (shown, 300 KB
	of text), then a reference to it per 2 bytes"""
	dtype = (b"cnumpy\ndtype\nX\x02\x00\x00\x00u1\x89\x88\x87R(K\x03"
		 b"X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb")
	arr = (b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n"
	       b"K\x00\x85C\x01b\x87R(K\x01J" + struct.pack("<i", 60000) +
	       b"\x85" + dtype + b"\x89B" + struct.pack("<I", 60000) +
	       b"\xc8" * 60000 + b"tb")
	p = [b"\x80\x02}q\x00(", binunicode("a"), b"](", arr, b"q\x02"]
	n = (size - sum(map(len, p))) // 2
	return b"".join(p) + b"h\x02" * n + b"eu."


def hostile_longtext(size=1 << 20):
	"""{"l": [L, L, ...]}: protocol 0's LONG of 4,300 digits again and
	again (each quadratic in its digits to read), n times"""
	one = b"L" + b"9" * 4300 + b"L\na"
	n = size // len(one)
	return b"(dp0\nVl\np1\n(lp2\n" + one * n + b"s.", n


# Runs a command under ulimit -v and reports its peak RSS.  A child of
# this test's process would inherit the RSS of its torch (a fork counts
# it, and exec keeps the high-water mark): a small interpreter forks it.
BOUNDED = r"""
import os, resource, sys
limit, report = int(sys.argv[1]), sys.argv[2]
pid = os.fork()
if pid == 0:
	if limit:
		resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
	os.execv(sys.argv[3], sys.argv[3:])
_, status, ru = os.wait4(pid, 0)
with open(report, "w") as f:
	f.write(str(ru.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_bounded(t, cmd, asan):
	"""(exit status, stdout, stderr) of cmd under ulimit -v AS_MAX, with
	its peak RSS checked against RSS_MAX (neither under ASan), within a
	deadline."""
	report = os.path.join(harness.tmpdir("rss"), "maxrss")
	r = subprocess.run(["/usr/bin/python3", "-S", "-c", BOUNDED,
			    str(0 if asan else AS_MAX), report] + cmd,
			   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
			   stdin=subprocess.DEVNULL, timeout=120)
	with open(report) as f:
		rss = int(f.read())
	if not asan:
		t.check(rss * 1024 < RSS_MAX, "%s: RSS %d KiB, under %d MiB"
			% (os.path.basename(cmd[-1]), rss, RSS_MAX >> 20))
	print("rss: %s %d KiB" % (os.path.basename(cmd[-1]), rss))
	return r.returncode, r.stdout.decode(), r.stderr.decode()


def check_memory(t, d):
	asan = sanitized()
	fx = {"encode.pt": hostile_encode(), "repeat.pt": hostile_repeat(),
	      "names.pt": hostile_names(), "bytes.pt": hostile_bytes(),
	      "ndarray.pt": hostile_ndarray(), "longtext.pt": hostile_longtext()}
	paths = {}
	for name, pkl in fx.items():
		paths[name] = os.path.join(d, name)
		with open(paths[name], "wb") as f:
			f.write(zip_of(pkl[0] if isinstance(pkl, tuple) else pkl))

	def meta(name):
		rc, out, err = run_bounded(t, [STFS_INSPECT, "--json",
					       paths[name]], asan)
		t.eq(rc, 0, "%s: read (%s)" % (name, err.strip()))
		return json.loads(out)["metadata"] if rc == 0 else {}

	# the bytes of one string are made once, and shown by length
	n = fx["encode.pt"][1]
	got = meta("encode.pt").get("b")
	# (a list keeps 4,096 items: check_long_lists)
	t.eq(json.loads(got) if got else None, [{"__bytes__": 128 << 10}] *
	     min(n, 4096) + [{"__not_kept__": n - 4096}] * (n > 4096),
	     "encode.pt: %d calls, one value shown by its length" % n)
	# a value past twice the pickle's size is named, not shown
	t.eq(meta("repeat.pt").get("s"), '{"__elided__": "more metadata than '
	     'stfs keeps for this checkpoint: twice its pickle\'s size, and '
	     '1 MiB"}', "repeat.pt: the list of references is elided")
	t.eq(meta("bytes.pt").get("b"), '{"__bytes__": %d}' % (16 << 20),
	     "bytes.pt: shown by its length")
	# a shared numpy array is shown while the metadata has room, then
	# the list of its references is elided
	t.check(meta("ndarray.pt").get("a", "").startswith('{"__elided__"'),
		"ndarray.pt: the list of references is elided")
	# 4,300 digits of protocol 0 read again and again (hex past 1,785
	# bytes, as a LONG4's)
	n = fx["longtext.pt"][1]
	got = meta("longtext.pt").get("l")
	t.eq(json.loads(got) if got else None, [hex(10**4300 - 1)] * n,
	     "longtext.pt: %d ints of 4,300 digits" % n)
	rc, out, err = run_bounded(t, [STFS_INSPECT, paths["names.pt"]], asan)
	t.eq(rc, 1, "names.pt: refused")
	t.check("InvalidPickle" in err and "is one name too many" in err and
		len(err.strip().splitlines()) == 1,
		"names.pt: one line saying why: %r" % err[-300:])
	# mounted: __metadata__.json and __summary__.json of the elided one
	with harness.Mount(t, paths["repeat.pt"]) as m:
		for f in ("__metadata__.json", "__summary__.json"):
			with open(os.path.join(m.path, f)) as fh:
				j = json.load(fh)
			j = j.get("metadata", j)
			t.check(j.get("s", "").startswith('{"__elided__"'),
				"repeat.pt mounted: %s has the value elided" % f)
		with open("/proc/%d/status" % m.proc.pid) as fh:
			hwm = [int(x.split()[1]) for x in fh
			       if x.startswith("VmHWM:")][0]
		if not asan:
			t.check(hwm * 1024 < RSS_MAX, "repeat.pt mounted: RSS "
				"%d KiB, under %d MiB" % (hwm, RSS_MAX >> 20))
		print("rss: mounted %d KiB" % hwm)


# ---- lists longer than the reader keeps --------------------------------------

def check_long_lists(t, d):
	"""A training checkpoint with a million losses and two million step
	numbers beside its model mounts, bounded like the hostile pickles
	above (a list keeps its first 4,096 items; each later run of numbers,
	strings and None is {"__not_kept__": N}); a tensor after them keeps
	its place in the list as its name, and its bytes."""
	losses = [i * 0.5 for i in range(1000000)]
	steps = list(range(2000000))
	mixed = ([0.25 * i for i in range(5000)] + [torch.arange(6.0)] +
		 ["s%d" % i for i in range(3000)] + [torch.ones(2), None] +
		 [None] * 9 + [{"a": 1}])
	w = torch.arange(12.0).reshape(3, 4)
	path = os.path.join(d, "lists.pt")
	torch.save({"model": {"w": w}, "losses": losses, "steps": steps,
		    "mixed": mixed}, path)
	kept = 4096
	rc, out, err = run_bounded(t, [STFS_INSPECT, "--json", path],
				   sanitized())
	if not t.eq(rc, 0, "lists.pt: read (%s)" % err.strip()):
		return
	meta = json.loads(out)["metadata"]
	t.eq(meta.get("losses"), json.dumps(losses[:kept] + [
		{"__not_kept__": len(losses) - kept}]), "lists.pt: losses: the "
	     "first 4,096, then how many more")
	t.eq(meta.get("steps"), json.dumps(steps[:kept] + [
		{"__not_kept__": len(steps) - kept}]), "lists.pt: steps")
	t.eq(meta.get("mixed.4095"), "1023.75", "lists.pt: mixed.4095 kept")
	t.eq([meta.get("mixed.%d" % i) for i in (4096, 5001, 8002)],
	     ['{"__not_kept__": 904}', '{"__not_kept__": 3000}',
	      '{"__not_kept__": 10}'], "lists.pt: each run passed by, named "
	     "by its first item's place")
	t.eq(meta.get("mixed.8012.a"), "1", "lists.pt: a dict after them")
	with harness.Mount(t, path) as m:
		for name, x in (("model.w", w), ("mixed.5000", mixed[5000]),
				("mixed.8001", mixed[8001])):
			with open(os.path.join(m.path, name), "rb") as f:
				t.check(f.read() == raw_bytes(x), "lists.pt: %s: "
					"bytes equal torch.load's" % name)
		with open(os.path.join(m.path, "__metadata__.json")) as f:
			t.eq(json.load(f).get("mixed.4096"),
			     '{"__not_kept__": 904}', "lists.pt mounted: "
			     "__metadata__.json")


# ---- a 100 MB value nobody sees ---------------------------------------------

# past RSS_MAX: a reader that kept it would cross the bound (200 MB took
# half of this test's time in torch.save and torch.load at load 13)
BLOB = 100000000


def deflate_pickle(src, dst):
	"""src with its data.pkl deflated, as zip tools write it (torch.load
	reads it; torch.save stores every entry), streamed"""
	with zipfile.ZipFile(src) as zin, \
	     zipfile.ZipFile(dst, "w", compresslevel=1) as zout:
		for info in zin.infolist():
			out = zipfile.ZipInfo(info.filename, info.date_time)
			out.compress_type = zipfile.ZIP_DEFLATED \
				if info.filename.endswith("/data.pkl") \
				else zipfile.ZIP_STORED
			with zin.open(info) as fin, zout.open(out, "w") as fout:
				shutil.copyfileobj(fin, fout, 1 << 20)
		return [i.compress_type for i in zout.infolist()]


def check_blob(t, path, key, want, asan, w):
	"""path opened within the memory bound, its tensor w (as torch.save
	was given it: torch.load of the whole would read the blob again),
	its value key shown as want"""
	name = os.path.basename(path)
	rc, out, err = run_bounded(t, [STFS_INSPECT, "--json", path], asan)
	t.eq(rc, 0, "%s: read (%s)" % (name, err.strip()))
	got = json.loads(out)["metadata"].get(key) if rc == 0 else None
	t.eq(got, want, "%s: %s shown by its length" % (name, key))
	w = raw_bytes(w)
	with harness.Mount(t, path) as m:
		with open(os.path.join(m.path, "w"), "rb") as f:
			t.check(f.read() == w, "%s: w equals the tensor saved"
				% name)
		with open(os.path.join(m.path, "__metadata__.json")) as f:
			t.eq(json.load(f).get(key), want,
			     "%s mounted: %s shown by its length" % (name, key))
		with open("/proc/%d/status" % m.proc.pid) as f:
			hwm = [int(x.split()[1]) for x in f
			       if x.startswith("VmHWM:")][0]
		if not asan:
			t.check(hwm * 1024 < RSS_MAX, "%s mounted: RSS %d KiB, "
				"under %d MiB" % (name, hwm, RSS_MAX >> 20))
		print("rss: %s mounted %d KiB" % (name, hwm))


def check_blobs(t, d):
	"""Issue 30: a checkpoint with a 100 MB bytes value (torch.save's,
	stored; the same with data.pkl deflated; a bytearray) or str takes
	what its tensors and metadata keep, not the 100 MB: the pickle is
	read through a window and a value the metadata names by its length
	is passed by.  One file at a time on disk."""
	asan = sanitized()
	w = values(torch.float32, (4,), 30)
	path = os.path.join(d, "blob.pt")
	bytes_shown = '{"__bytes__": %d}' % BLOB
	torch.save({"w": w, "blob": b"y" * BLOB}, path)
	check_blob(t, path, "blob", bytes_shown, asan, w)
	deflated = os.path.join(d, "blob-deflated.pt")
	t.eq(deflate_pickle(path, deflated), [zipfile.ZIP_DEFLATED,
					      zipfile.ZIP_STORED,
					      zipfile.ZIP_STORED],
	     "blob-deflated.pt: data.pkl deflated, the rest stored")
	os.unlink(path)
	check_blob(t, deflated, "blob", bytes_shown, asan, w)
	os.unlink(deflated)
	path = os.path.join(d, "blob-bytearray.pt")
	torch.save({"w": w, "blob": bytearray(b"y" * BLOB)}, path)
	check_blob(t, path, "blob", '{"__call__": "__builtin__.bytearray", '
		   '"args": [%s]}' % bytes_shown, asan, w)
	os.unlink(path)
	path = os.path.join(d, "blob-str.pt")
	torch.save({"w": w, "s": "y" * BLOB}, path)
	check_blob(t, path, "s", '{"__str__": %d}' % BLOB, asan, w)
	os.unlink(path)
	# the legacy format: refused in one line, as quickly
	path = os.path.join(d, "blob-legacy.pt")
	torch.save({"w": w, "blob": b"y" * BLOB}, path,
		   _use_new_zipfile_serialization=False)
	rc, _, err = run_bounded(t, [STFS_INSPECT, path], asan)
	t.eq(rc, 1, "blob-legacy.pt: refused")
	t.check(("%s: InvalidCheckpoint: " % path) in err and "legacy" in err
		and len(err.strip().splitlines()) == 1,
		"blob-legacy.pt: one line saying why: %r" % err[-300:])
	os.unlink(path)


def sharded_set(d, parts):
	"""A transformers-style sharded .bin set: shards and its index."""
	os.makedirs(d)
	wmap, whole = {}, {}
	for i, part in enumerate(parts):
		name = "pytorch_model-%05d-of-%05d.bin" % (i + 1, len(parts))
		torch.save(part, os.path.join(d, name))
		for k in part:
			wmap[k] = name
		whole.update(part)
	with open(os.path.join(d, "pytorch_model.bin.index.json"), "w") as f:
		json.dump({"metadata": {"total_size": 0}, "weight_map": wmap}, f)
	return whole


def check_sharded(t, d):
	sd = os.path.join(d, "set")
	whole = sharded_set(sd, [
		{"layers.0.w": values(torch.float32, (4, 3), 1),
		 "layers.0.b": values(torch.bfloat16, (3,), 2)},
		{"layers.1.w": values(torch.float16, (2, 5), 3),
		 "head": values(torch.int64, (7,), 4)}])
	# beside a Trainer checkpoint's pickles, which are not models of
	# the folder (training_args.bin is not a state dict)
	torch.save({"state": {}, "param_groups": []},
		   os.path.join(sd, "optimizer.pt"))
	with open(os.path.join(sd, "training_args.bin"), "wb") as f:
		f.write(zip_of(b"\x80\x02ctransformers.training_args\n"
			       b"TrainingArguments\nq\x00)\x81q\x01."))
	r = run([STFS_INSPECT, "--json", sd])
	t.eq(r.returncode, 0, "sharded set: stfs-inspect: %r" % r.stderr)
	if r.returncode == 0:
		j = json.loads(r.stdout)
		t.eq(j.get("tensors"), len(whole), "sharded set: tensor count")
	with harness.Mount(t, sd) as m:
		for name, x in whole.items():
			with open(os.path.join(m.path, name), "rb") as f:
				t.check(f.read() == raw_bytes(x), "sharded set: %s "
					"bytes equal torch.load's" % name)
		check_safetensors(t, os.path.join(m.path, ".safetensors",
						  "model.safetensors"), whole,
				  "sharded set")
	out = os.path.join(d, "merged.safetensors")
	r = run([STFS_INSPECT, "--merge", sd, "-o", out])
	t.eq(r.returncode, 0, "--merge of the set: %r" % r.stderr)
	got, _ = read_safetensors(out)
	t.check(all(got[k][2] == raw_bytes(x) for k, x in whole.items()),
		"--merge of the set holds torch.load's tensors")
	r = run([STFS_INSPECT, "--diff", os.path.join(sd,
		 "pytorch_model.bin.index.json"), out])
	t.check(b"identical: 4 of 4" in r.stdout, "--diff of the set and its "
		"merge: every tensor identical: %r" % r.stdout)


def check_trees(t, d):
	"""Folders and the hub cache show .bin-only models; where a
	safetensors twin exists, it is the model."""
	root = os.path.join(d, "tree")
	a = {"w": values(torch.float32, (3,), 11)}
	b = {"w": values(torch.float32, (2,), 12)}
	os.makedirs(os.path.join(root, "a"))
	os.makedirs(os.path.join(root, "b"))
	torch.save(a, os.path.join(root, "a", "pytorch_model.bin"))
	torch.save(b, os.path.join(root, "b", "pytorch_model.bin"))
	hdr = json.dumps({"v": {"dtype": "U8", "shape": [1],
				"data_offsets": [0, 1]}}).encode()
	with open(os.path.join(root, "b", "model.safetensors"), "wb") as f:
		f.write(struct.pack("<Q", len(hdr)) + hdr + b"\x07")
	hub = os.path.join(d, "hub")
	snap = os.path.join(hub, "models--org--old", "snapshots", "c0ffee")
	os.makedirs(snap)
	os.makedirs(os.path.join(hub, "models--org--old", "refs"))
	with open(os.path.join(hub, "models--org--old", "refs", "main"),
		  "w") as f:
		f.write("c0ffee")
	torch.save(a, os.path.join(snap, "pytorch_model.bin"))
	with harness.Mount(t, root) as m:
		t.eq(sorted(os.listdir(os.path.join(m.path, "b"))),
		     sorted(["__metadata__.json", "__summary__.json", "v",
			     "v.json"]), "folder: the safetensors twin wins")
		with open(os.path.join(m.path, "a", "w"), "rb") as f:
			t.check(f.read() == raw_bytes(a["w"]),
				"folder: a .bin-only model is mounted")
	with harness.Mount(t, hub) as m:
		with open(os.path.join(m.path, "org", "old", "w"), "rb") as f:
			t.check(f.read() == raw_bytes(a["w"]),
				"hub cache: a .bin-only repo is mounted")


def check_strided_tools(t, d):
	"""sha256 xattr, .txt/, .stats/, --stats and --diff of gathered
	tensors."""
	import hashlib
	src = os.path.join(d, "strided.pt")
	tensors, _ = flatten(torch.load(src))
	with harness.Mount(t, src) as m:
		for name in ("t", "perm", "big_t"):
			x = tensors[name]
			h = os.getxattr(os.path.join(m.path, name),
					"user.safetensors.sha256").decode()
			t.eq(h, hashlib.sha256(raw_bytes(x)).hexdigest(),
			     "strided %s: sha256 xattr of the gathered bytes" % name)
		with open(os.path.join(m.path, ".stats", "t.json")) as f:
			st = json.load(f)
		x = tensors["t"].double()
		t.check(abs(st["mean"] - x.mean().item()) < 1e-6 *
			max(1, abs(x.mean().item())), "strided t: .stats mean")
		with open(os.path.join(m.path, ".txt", "col.txt")) as f:
			txt = f.read().split()
		t.eq(len(txt), 5, "strided col: .txt has its 5 values")
	r = run([STFS_INSPECT, "--stats", "--json", src])
	t.eq(r.returncode, 0, "--stats of strided.pt: %r" % r.stderr)
	out = os.path.join(d, "strided.safetensors")
	r = run([STFS_INSPECT, "--merge", src, "-o", out])
	t.eq(r.returncode, 0, "--merge strided.pt: %r" % r.stderr)
	check_safetensors(t, out, tensors, "--merge strided.pt")
	r = run([STFS_INSPECT, "--diff", src, out])
	t.eq(r.returncode, 0, "--diff strided.pt and its merge: %r" % r.stdout)


def check_merge_diff(t, d):
	src = os.path.join(d, "shared.bin")
	out = os.path.join(d, "shared.safetensors")
	r = run([STFS_INSPECT, "--merge", src, "-o", out])
	t.eq(r.returncode, 0, "--merge shared.bin: %r" % r.stderr)
	tensors, _ = flatten(torch.load(src))
	check_safetensors(t, out, tensors, "--merge shared.bin")
	r = run([STFS_INSPECT, "--diff", src, out])
	t.eq(r.returncode, 0, "--diff of a .bin and its conversion: %r"
	     % r.stdout)
	changed = dict(torch.load(src))
	changed["other"] = changed["other"] + 1
	torch.save(changed, os.path.join(d, "changed.bin"))
	r = run([STFS_INSPECT, "--diff", os.path.join(d, "changed.bin"), out])
	t.eq(r.returncode, 1, "--diff sees a changed tensor: %r" % r.stdout)
	t.check(b"other" in r.stdout, "--diff names it: %r" % r.stdout)


def check_remote(t, d):
	"""A checkpoint behind http:// (127.0.0.1): the zip is read through
	the same reader, by ranges; the tensors and the virtual safetensors
	file are the same bytes."""
	import httpd
	src = os.path.join(d, "strided.pt")
	tensors, _ = flatten(torch.load(src))
	srv = httpd.Server(d)
	srv.start()
	try:
		url = srv.url("strided.pt")
		r = run([STFS_INSPECT, url])
		t.eq(r.returncode, 0, "http: stfs-inspect: %r" % r.stderr)
		with harness.Mount(t, url) as m:
			for name in ("m", "t", "step", "big_t"):
				with open(os.path.join(m.path, name), "rb") as f:
					t.check(f.read() == raw_bytes(tensors[name]),
						"http: %s equals torch.load's" % name)
			check_safetensors(t, os.path.join(
				m.path, ".safetensors", "model.safetensors"),
				tensors, "http")
		reqs = [x for x in srv.log if x.get("path", "").endswith(
			"strided.pt")]
		t.check(reqs and all(x.get("range") for x in reqs),
			"http: every request is a range request (nothing "
			"downloads the checkpoint whole): %r" % reqs[:3])

		# Opening reads the zip's directory and each entry's local
		# header, not the data between them (the block cache's
		# read-ahead once fetched nearly all of it).
		wide = os.path.join(d, "wide.pt")
		torch.save({"w%02d" % i: torch.full((256, 1024), float(i))
			    for i in range(24)}, wide)
		n0 = len(srv.log)
		r = run([STFS_INSPECT, srv.url("wide.pt")])
		t.eq(r.returncode, 0, "http: stfs-inspect wide.pt: %r" % r.stderr)
		sent = sum(x.get("bytes") or 0 for x in srv.log[n0:])
		size = os.path.getsize(wide)
		t.check(sent < size // 8, "http: opening a %d-byte checkpoint "
			"of 24 tensors fetched %d bytes (its directory and local "
			"headers, not its data)" % (size, sent))
		tensors, _ = flatten(torch.load(wide))
		with harness.Mount(t, srv.url("wide.pt")) as m:
			for name, v in sorted(tensors.items()):
				with open(os.path.join(m.path, name), "rb") as f:
					t.check(f.read() == raw_bytes(v),
						"http: wide.pt %s equals torch.load's"
						% name)
	finally:
		srv.stop()


# ---- whole modules ------------------------------------------------------------

class Net(torch.nn.Module):
	"""A model saved whole (torch.save(model)): parameters, a Linear
	without bias, BatchNorm's buffers, a non-persistent buffer, a None
	submodule, a weight tied between two modules."""
	def __init__(self):
		super().__init__()
		self.embed = torch.nn.Embedding(10, 4)
		self.body = torch.nn.Sequential(
			torch.nn.Linear(4, 6), torch.nn.ReLU(),
			torch.nn.BatchNorm1d(6), torch.nn.Linear(6, 3, bias=False))
		self.out = torch.nn.Linear(4, 10, bias=False)
		self.out.weight = self.embed.weight
		self.register_buffer("mask", torch.tensor([True, False, True]))
		self.register_buffer("cache", torch.zeros(2), persistent=False)
		self.register_module("gone", None)

	def forward(self, x):
		return self.body(self.embed(x).sum(1))


def check_module(t, d):
	"""torch.save(model), alone and in a dict, mounts the tensors of
	torch.load(...).state_dict() under its names, byte for byte."""
	torch.manual_seed(5)
	net = Net()
	net(torch.randint(0, 10, (8, 2))).sum().backward()	# BatchNorm's stats
	for name, obj, prefix in (("model.pt", net, ""),
				  ("trainer-model.pt", {"model": net, "epoch": 3},
				   "model.")):
		path = os.path.join(d, name)
		torch.save(obj, path)
		loaded = torch.load(path)
		sd = (loaded["model"] if prefix else loaded).state_dict()
		want = {prefix + k: v for k, v in sd.items()}
		with harness.Mount(t, path) as m:
			names = {harness.decode_name(f) for f in os.listdir(m.path)
				 if not f.endswith(".json")}
			t.eq(names, set(want), "%s: the names of state_dict()" % name)
			for k, x in want.items():
				with open(os.path.join(m.path, harness.encode_name(k)),
					  "rb") as f:
					t.check(f.read() == raw_bytes(x),
						"%s: %s bytes equal torch.load's" % (name, k))
				with open(os.path.join(m.path, harness.encode_name(k)
						       + ".json")) as f:
					j = json.load(f)
				t.eq((j["dtype"], j["shape"]),
				     (DTYPES[x.dtype], list(x.shape)),
				     "%s: %s dtype and shape" % (name, k))
			with open(os.path.join(m.path, "__metadata__.json")) as f:
				meta = json.load(f)
			t.eq(meta, dict({prefix + "__class__": "__main__.Net"},
					**({"epoch": "3"} if prefix else {})),
			     "%s: metadata" % name)
			check_safetensors(t, os.path.join(
				m.path, ".safetensors", "model.safetensors"), want,
				name)


# ---- torch 2's tensors of its new dtypes ------------------------------------

class _Dtype:
	"""torch.NAME of torch 2 (torch.uint16, ...): pickled as the global
	torch.NAME, as torch.dtype's __reduce__ makes it."""
	def __init__(self, name):
		self.name = name
		self.__module__ = "torch"

	def __reduce__(self):
		return self.name


class _Storage:
	def __init__(self, key, data, kind):
		self.key, self.data, self.kind = key, data, kind


class _Tensor:
	"""What Tensor.__reduce_ex__ returns: torch 2's for its new dtypes
	(_rebuild_tensor_v3 over the UntypedStorage, the dtype last), or
	_rebuild_tensor_v2 over a typed storage."""
	def __init__(self, rebuild, storage, offset, size, stride, dtype=None):
		self.args = (storage, offset, tuple(size), tuple(stride), False,
			     collections.OrderedDict())
		if dtype is not None:
			self.args += (dtype,)
		self.rebuild = rebuild

	def __reduce__(self):
		return self.rebuild, self.args


def torch2_checkpoint(path):
	"""Write, as torch 2.x's torch.save would, tensors of the dtypes torch
	1.13 lacks: uint16 (and a transpose of it, and the same bytes as a
	uint8 tensor beside it), uint32, uint64 past 2^63, float8_e4m3fn and
	float8_e5m2; Python's own Pickler at protocol 2 over the reduce tuples
	of torch 2's Tensor.__reduce_ex__, the persistent ids of its
	torch.save (an UntypedStorage's numel is its bytes), in a zip laid
	out as torch.save lays one out.  {name: (dtype, shape, bytes in C
	order)}"""
	names = ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2")
	dtypes = {n: _Dtype(n) for n in names}

	def _rebuild_tensor_v3(*args):
		raise AssertionError("never called")
	_rebuild_tensor_v3.__module__ = "torch._utils"
	_rebuild_tensor_v3.__qualname__ = "_rebuild_tensor_v3"
	v2 = torch._utils._rebuild_tensor_v2
	rng = np.random.default_rng(3)
	u16 = np.arange(12, dtype="<u2").reshape(3, 4) * 4099
	u32 = rng.integers(0, 2**32, 5, dtype=np.uint32)
	u64 = np.array([2**64 - 1, 2**63 + 5], dtype="<u8")
	f8 = rng.integers(0, 256, 8, dtype=np.uint8)
	f8b = rng.integers(0, 256, 6, dtype=np.uint8)
	st = [_Storage("0", u16.tobytes(), torch.storage.UntypedStorage),
	      _Storage("1", u32.tobytes(), torch.storage.UntypedStorage),
	      _Storage("2", u64.tobytes(), torch.storage.UntypedStorage),
	      _Storage("3", f8.tobytes(), torch.storage.UntypedStorage),
	      _Storage("4", f8b.tobytes(), torch.storage.UntypedStorage)]
	obj = {"u16": _Tensor(_rebuild_tensor_v3, st[0], 0, (3, 4), (4, 1),
			      dtypes["uint16"]),
	       "u16_t": _Tensor(_rebuild_tensor_v3, st[0], 0, (4, 3), (1, 4),
				dtypes["uint16"]),
	       "u16_bytes": _Tensor(v2, _Storage("0", None, torch.ByteStorage),
				    0, (24,), (1,)),
	       "u32": _Tensor(_rebuild_tensor_v3, st[1], 1, (4,), (1,),
			      dtypes["uint32"]),
	       "u64": _Tensor(_rebuild_tensor_v3, st[2], 0, (2,), (1,),
			      dtypes["uint64"]),
	       "f8": _Tensor(_rebuild_tensor_v3, st[3], 0, (2, 4), (4, 1),
			     dtypes["float8_e4m3fn"]),
	       "f8_e5m2": _Tensor(_rebuild_tensor_v3, st[4], 2, (2, 2), (2, 1),
				  dtypes["float8_e5m2"]),
	       "step": 7}
	want = {"u16": ("U16", [3, 4], u16.tobytes()),
		"u16_t": ("U16", [4, 3], np.ascontiguousarray(u16.T).tobytes()),
		"u16_bytes": ("U8", [24], u16.tobytes()),
		"u32": ("U32", [4], u32[1:].tobytes()),
		"u64": ("U64", [2], u64.tobytes()),
		"f8": ("F8_E4M3", [2, 4], f8.tobytes()),
		"f8_e5m2": ("F8_E5M2", [2, 2], f8b[2:].tobytes())}
	sizes = {"0": 24}

	class Saver(pickle.Pickler):
		def persistent_id(self, o):
			if not isinstance(o, _Storage):
				return None
			if o.kind is torch.storage.UntypedStorage:
				sizes[o.key] = len(o.data)	# numel: bytes
			return ("storage", o.kind, o.key, "cpu", sizes[o.key])

	saved = {n: getattr(torch, n, None) for n in names}
	saved["_rebuild_tensor_v3"] = getattr(torch._utils,
					      "_rebuild_tensor_v3", None)
	try:
		for n, d in dtypes.items():
			setattr(torch, n, d)
		torch._utils._rebuild_tensor_v3 = _rebuild_tensor_v3
		b = io.BytesIO()
		Saver(b, protocol=2).dump(obj)
	finally:
		for n in names:
			if saved[n] is None:
				delattr(torch, n)
		if saved["_rebuild_tensor_v3"] is None:
			del torch._utils._rebuild_tensor_v3
	with open(path, "wb") as f:
		f.write(zip_of(b.getvalue(), [("byteorder", b"little")] +
			       [("data/" + s.key, s.data) for s in st]))
	return want


def check_torch2(t, d):
	path = os.path.join(d, "torch2.pt")
	want = torch2_checkpoint(path)
	with open(path, "rb") as f:
		pkl = zipfile.ZipFile(f).read("archive/data.pkl")
	t.check(b"ctorch._utils\n_rebuild_tensor_v3\n" in pkl and
		b"ctorch.storage\nUntypedStorage\n" in pkl and
		b"ctorch\nuint16\n" in pkl, "torch2.pt: the pickle names "
		"_rebuild_tensor_v3, UntypedStorage and torch.uint16")
	with harness.Mount(t, path) as m:
		for name, (dt, shape, data) in want.items():
			with open(os.path.join(m.path, name), "rb") as f:
				t.check(f.read() == data, "torch2.pt: %s bytes" % name)
			with open(os.path.join(m.path, name + ".json")) as f:
				j = json.load(f)
			t.eq((j["dtype"], j["shape"]), (dt, shape),
			     "torch2.pt: %s dtype and shape" % name)
		npy = np.load(os.path.join(m.path, ".npy", "u16_t.npy"))
		t.check(npy.dtype == np.uint16 and np.array_equal(
			npy, np.frombuffer(want["u16"][2], "<u2").reshape(3, 4).T),
			"torch2.pt: .npy of the uint16 transpose")
		with open(os.path.join(m.path, "__metadata__.json")) as f:
			t.eq(json.load(f), {"step": "7"}, "torch2.pt: metadata")
		st = os.path.join(m.path, ".safetensors", "model.safetensors")
		r = run([STFS_INSPECT, st])
		t.eq(r.returncode, 0, "torch2.pt: its safetensors file is valid: "
		     "%r" % r.stderr)
		got, _ = read_safetensors(st)
		t.eq({k: (v[0], v[1], v[2]) for k, v in got.items()},
		     {k: (v[0], v[1], v[2]) for k, v in want.items()},
		     "torch2.pt: the safetensors file holds each tensor")


def float_values():
	"""Doubles of every sort (integers, powers of ten about the switch
	to exponents, random bits, rounded decimals, extremes) and numpy's
	float32 and float16 made of them."""
	rng = np.random.default_rng(3)
	vals = [0.0, -0.0, 1.5, 10.0, 100.0, 1e15, 1e16, 9999999999999998.0,
		1e-4, 1e-5, 0.0001234, 123456789012345678.0, 5e-324,
		1.7976931348623157e308, float("nan"), float("inf"),
		-float("inf")]
	vals += [10.0 ** k for k in range(-8, 20)]
	vals += [float(x) for x in rng.integers(-10**6, 10**6, 100)]
	vals += [float(x) for x in rng.uniform(-1, 1, 100) *
		 10.0 ** rng.integers(-20, 25, 100)]
	vals += [float(x) for x in np.frombuffer(rng.bytes(800), "<f8")]
	vals += [round(float(x), int(k)) for x, k in
		 zip(rng.uniform(-1e5, 1e5, 100), rng.integers(0, 6, 100))]
	with np.errstate(over="ignore", invalid="ignore"):
		f32 = [np.float32(v) for v in vals]
		f16 = [np.float16(v) for v in vals]
	return vals, f32, f16


def check_float_text(t, d):
	"""Floats in __metadata__.json are the text Python's repr writes
	(json.dumps) and numpy's repr writes for its float32 and float16:
	the shortest digits, positional from 1e-4 to 1e16 (10.0, not
	1e+01), not only numbers that read back the same."""
	vals, f32, f16 = float_values()
	path = os.path.join(d, "floats.pt")
	torch.save({"w": torch.ones(2), "d": vals, "f32": f32, "f16": f16,
		    "one": 100.0, "small": np.float32(1e-4)}, path)

	def numpy_text(x):
		r = repr(x)
		return {"nan": "NaN", "inf": "Infinity",
			"-inf": "-Infinity"}.get(r, r)
	want = {"d": json.dumps(vals),
		"f32": "[%s]" % ", ".join(numpy_text(x) for x in f32),
		"f16": "[%s]" % ", ".join(numpy_text(x) for x in f16),
		"one": "100.0", "small": numpy_text(np.float32(1e-4))}
	with harness.Mount(t, path) as m:
		with open(os.path.join(m.path, "__metadata__.json")) as f:
			got = json.load(f)
	for k, w in want.items():
		g = got.get(k, "")
		bad = [(a, b) for a, b in zip(g.strip("[]").split(", "),
					     w.strip("[]").split(", ")) if a != b]
		t.eq(bad[:5], [], "floats.pt: %s: the text of every float as "
		     "Python or numpy writes it (%d values)" % (k, len(bad)))
		t.eq(g, w, "floats.pt: %s: the whole text" % k)


def run_checkpoints(t):
	"""int-torch: checkpoints as torch writes them, mounted and read"""
	d = harness.tmpdir("torch")
	fx = fixtures(d)
	for name in sorted(fx):
		check_mounted(t, os.path.join(d, name), name)
	check_merge_diff(t, d)
	check_strided_tools(t, d)
	check_sharded(t, d)
	check_trees(t, d)
	check_remote(t, d)
	check_torch2(t, d)
	check_module(t, d)
	check_float_text(t, d)
	harness.rmtree_safe(d)


def run_hostile(t):
	"""int-torch-hostile: hostile pickles, memory bounds, 100 MB values"""
	d = harness.tmpdir("torch")
	check_hostile(t, d)
	check_memory(t, d)
	check_long_lists(t, d)
	check_blobs(t, d)
	harness.rmtree_safe(d)


# Two tests of one file, each with its own time bound (one took over
# 300 s at load 17): `test_torch.py` and `test_torch.py hostile`.
if sys.argv[1:] == ["hostile"]:
	harness.main("int-torch-hostile", run_hostile, mounts=True)
else:
	harness.main("int-torch", run_checkpoints, mounts=True)
