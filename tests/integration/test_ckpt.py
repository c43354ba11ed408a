#!/usr/bin/env python3
"""int-ckpt: the checkpoints users bring, and the truth about each (issue 39).

Every fixture is written here by Debian's torch 1.13 (torch.save), or by
Python's pickle where torch.save cannot write what a user's file holds.

- Cycles: a scheduler.pt of OneCycleLR (torch 1.13 pickles its bound
  method anneal_func, whose object holds the method again) and a
  Lightning-like .ckpt holding one mount; every tensor equals
  torch.load's, and the value that closes the cycle is
  {"__ref__": PATH} in __metadata__.json, PATH naming the value it is.
  The optimizer inside the scheduler keeps its state keyed by its
  parameters: each entry is named by its index, its key as
  INDEX.__key__.
- __summary__.json of a .bin says "format": "pytorch" ("pytorch-sharded"
  for an index's set), header_bytes the pickle's size, bytes each stored
  byte once (tied weights share a storage) and the names that share one;
  stfs-inspect prints them on a "shared:" line.
- Files named as checkpoints that are not (random bytes, a cut zip) are
  refused with PyTorch's error, leading with "not a PyTorch checkpoint"
  (also int-sniff).
- Would torch.load run code?  Checkpoints whose pickle calls
  posix.system, builtins.eval, runpy._run_code (torch.save of objects
  whose __reduce__ says so; a witness file shows none ran), the legacy
  format, a bare pickle, and the OneCycleLR scheduler: each mounts with a
  warning line naming the calls (in the daemon's mode and -f), its
  __summary__.json "unsafe" lists each call with its arguments and where
  the tree holds it, stfs-inspect has an "unsafe:" line, and
  stfs-inspect --scan exits 1.  The verdict of --scan on every fixture
  kept in tests/ and samples/, and on these, equals a reference written
  from torch's _weights_only_unpickler allow-lists (1.13's, read from
  the installed torch, and newer torch's additions): Python's own
  Unpickler with a find_class that records the globals it would import
  and returns stand-ins, so nothing is imported or called.
- Quantized tensors (torch.quantize_per_tensor, quantize_per_channel,
  float zero points, a slice, a qint32 clamped to 2^31 - 1 whose
  q - zero_point wraps, a quantized Linear's state dict): each
  mounts as its integers (Tensor.int_repr(): I8, U8, I32; a transposed
  one gathered), its scheme in __metadata__.json as NAME.__quantizer__
  (scale and zero point, or axis and the names of the per-channel scales
  and zero points tensors, which hold q_per_channel_scales() and
  _zero_points()), so that (q - zero_point) * scale from the mounted
  files is Tensor.dequantize(); .dequant/NAME, its .npy and the stored
  tensor's .npy hold Tensor.dequantize() bit for bit (700,000 values
  along either axis: tiles that start mid-row, channels that wrap), the
  sidecar says qscheme, dtype, scale and zero point or axis as torch
  does, and __summary__.json and stfs-inspect count them by scheme.
  Parameters that do not fit (scales of another length, zero points out
  of range, an axis past the last dimension) refuse the weight with the
  reason, the rest mounted; a packed 4-bit one (quint4x2) is refused,
  naming it.
"""

import _compat_pickle
import io
import json
import os
import pickle
import pickletools
import zipfile

import harness
from harness import STFS_INSPECT, run

import torch


def raw_bytes(x):
	x = x.detach().contiguous()
	if x.dtype == torch.bfloat16:
		return x.view(torch.int16).numpy().tobytes()
	return x.numpy().tobytes()


def read(path, mode="rb"):
	with open(path, mode) as f:
		return f.read()


# ---- a value that contains itself -----------------------------------------

def onecycle(lr=0.1):
	model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(),
				    torch.nn.Linear(3, 2))
	opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
	sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr,
						    total_steps=20)
	for _ in range(3):
		model(torch.randn(5, 4)).sum().backward()
		opt.step()
		sched.step()
	return model, opt, sched


def check_cycles(t, d):
	torch.manual_seed(39)
	model, opt, sched = onecycle()
	sd = sched.state_dict()
	t.check(getattr(sd.get("anneal_func"), "__self__", None) is sched,
		"torch 1.13's OneCycleLR.state_dict() holds a bound method of "
		"the scheduler (the cycle this test is about)")
	path = os.path.join(d, "scheduler.pt")
	torch.save(sd, path)
	params = list(model.parameters())
	prefix = "anneal_func.args.0.state.optimizer.state.param_groups.0."
	with harness.Mount(t, path) as m:
		for i, p in enumerate(params):
			name = prefix + "params.%d" % i
			f = os.path.join(m.path, harness.encode_name(name))
			t.check(os.path.exists(f) and read(f) == raw_bytes(p),
				"scheduler.pt: %s equals the parameter" % name)
		# the optimizer's own state, keyed by its parameters
		st = "anneal_func.args.0.state.optimizer.state.state."
		for i, (p, s) in enumerate(opt.state.items()):
			for name, want in ((st + "%d.__key__" % i, p),
					   (st + "%d.momentum_buffer" % i,
					    s["momentum_buffer"])):
				f = os.path.join(m.path, harness.encode_name(name))
				t.check(os.path.exists(f) and
					read(f) == raw_bytes(want),
					"scheduler.pt: %s is mounted" % name)
		meta = json.loads(read(os.path.join(m.path, "__metadata__.json"),
				       "r"))
		ref = "anneal_func.args.0.state.anneal_func"
		t.eq(json.loads(meta.get(ref, "null")),
		     {"__ref__": "anneal_func"}, "scheduler.pt: the cycle is a "
		     "reference to the method where it is first")
		t.eq(meta.get("anneal_func.__call__"), "__builtin__.getattr",
		     "scheduler.pt: the method is what getattr makes")
		t.eq(meta.get("anneal_func.args.1"), "_annealing_cos",
		     "scheduler.pt: the method's name")
		t.eq(meta.get("total_steps"), "20", "scheduler.pt: total_steps")
		t.eq(meta.get("last_epoch"), str(sd["last_epoch"]),
		     "scheduler.pt: last_epoch")

	# a Lightning checkpoint: the scheduler's state beside the model's
	ckpt = {"epoch": 3, "global_step": 60,
		"pytorch-lightning_version": "1.9.0",
		"state_dict": {"model." + k: v
			       for k, v in model.state_dict().items()},
		"optimizer_states": [opt.state_dict()],
		"lr_schedulers": [sd],
		"hyper_parameters": {"lr": 0.1, "layers": [4, 3, 2]}}
	path = os.path.join(d, "epoch=3-step=60.ckpt")
	torch.save(ckpt, path)
	loaded = torch.load(path)
	with harness.Mount(t, path) as m:
		for k, v in loaded["state_dict"].items():
			f = os.path.join(m.path, harness.encode_name("state_dict." + k))
			t.check(os.path.exists(f) and read(f) == raw_bytes(v),
				".ckpt: state_dict.%s equals torch.load's" % k)
		for n, st in loaded["optimizer_states"][0]["state"].items():
			name = "optimizer_states.0.state.%d.momentum_buffer" % n
			f = os.path.join(m.path, harness.encode_name(name))
			t.check(os.path.exists(f) and
				read(f) == raw_bytes(st["momentum_buffer"]),
				".ckpt: %s equals torch.load's" % name)
		meta = json.loads(read(os.path.join(m.path, "__metadata__.json"),
				       "r"))
		t.eq(json.loads(meta.get("lr_schedulers.0.anneal_func.args.0."
					 "state.anneal_func", "null")),
		     {"__ref__": "lr_schedulers.0.anneal_func"},
		     ".ckpt: the cycle is a reference by its full path")
		t.eq(meta.get("epoch"), "3", ".ckpt: epoch")
		t.eq(json.loads(meta.get("hyper_parameters.layers", "null")),
		     [4, 3, 2], ".ckpt: hyper_parameters")


# ---- the summary of a checkpoint -------------------------------------------

def check_summary(t, d):
	torch.manual_seed(1)
	emb = torch.randn(64, 16)
	sd = {"transformer.wte.weight": emb, "lm_head.weight": emb,
	      "transformer.ln_f.weight": torch.ones(16),
	      "transformer.ln_f.bias": torch.zeros(16),
	      "h.0.attn.c_attn.weight": torch.randn(16, 48)}
	path = os.path.join(d, "pytorch_model.bin")
	torch.save(sd, path)
	storages = {}
	for v in sd.values():
		storages[v.storage().data_ptr()] = v.storage().nbytes()
	with zipfile.ZipFile(path) as z:
		pkl = [i.file_size for i in z.infolist()
		       if i.filename.endswith("/data.pkl")][0]
	want_shared = [["lm_head.weight", "transformer.wte.weight"]]

	def check(j, label):
		t.eq(j.get("format"), "pytorch", "%s: format" % label)
		t.eq(j.get("bytes"), sum(storages.values()),
		     "%s: bytes count the shared storage once" % label)
		t.eq(j.get("header_bytes"), pkl, "%s: header_bytes is the "
		     "pickle's size" % label)
		t.eq(j.get("file_bytes"), os.path.getsize(path),
		     "%s: file_bytes" % label)
		t.eq([sorted(g) for g in j.get("shared_storage", [])],
		     want_shared, "%s: the names that share a storage" % label)
		t.eq(j.get("shared_storage_count"), 1,
		     "%s: one shared storage" % label)

	r = run([STFS_INSPECT, "--json", path])
	check(json.loads(r.stdout or b"{}"), "stfs-inspect --json")
	r = run([STFS_INSPECT, path])
	out = r.stdout.decode()
	t.check("shared:      lm_head.weight = transformer.wte.weight "
		"(one storage)\n" in out, "stfs-inspect: the shared line: %r"
		% out)
	with harness.Mount(t, path) as m:
		check(json.loads(read(os.path.join(m.path, "__summary__.json"),
				      "r")), "__summary__.json")
	# a sharded set of .bin files
	sub = os.path.join(d, "sharded")
	os.mkdir(sub)
	names = sorted(sd)
	wm = {}
	for i, part in enumerate((names[:2], names[2:])):
		shard = "pytorch_model-%05d-of-00002.bin" % (i + 1)
		torch.save({k: sd[k].clone() for k in part},
			   os.path.join(sub, shard))
		wm.update({k: shard for k in part})
	with open(os.path.join(sub, "pytorch_model.bin.index.json"), "w") as f:
		json.dump({"metadata": {}, "weight_map": wm}, f)
	r = run([STFS_INSPECT, "--json", sub])
	t.eq(json.loads(r.stdout or b"{}").get("format"), "pytorch-sharded",
	     "a set of .bin shards: format")


def check_not_checkpoints(t, d):
	good = os.path.join(d, "good.pt")
	torch.save({"w": torch.ones(2000)}, good)
	cases = (("random.bin", bytes((i * 37 + 11) % 256 for i in range(4096)),
		  ["not a PyTorch checkpoint: its first 8 bytes are 0b 30 55 "
		   "7a 9f c4 e9 0e", "damaged"]),
		 ("cut.pt", read(good)[:5000],
		  ["a damaged PyTorch checkpoint: a zip archive (what "
		   "torch.save writes) that stfs cannot read",
		   "incomplete download"]))
	for name, data, words in cases:
		p = os.path.join(d, name)
		with open(p, "wb") as f:
			f.write(data)
		r = run([STFS_INSPECT, p])
		err = r.stderr.decode("utf-8", "replace")
		t.check(r.returncode == 1 and
			("%s: InvalidCheckpoint: " % p) in err and
			all(w in err for w in words) and
			"HeaderTooLarge" not in err and
			"safetensors" not in err and len(err.splitlines()) == 1,
			"%s: PyTorch's error, leading with what it is not: %r"
			% (name, err))


# ---- would torch.load run code? --------------------------------------------

class Witness:
	"""torch.save of this pickles a call of func(*args), as a payload
	hidden in a checkpoint does."""
	def __init__(self, func, *args):
		self.func, self.args = func, args

	def __reduce__(self):
		return self.func, self.args


def newer_allowed():
	"""What newer torch's _weights_only_unpickler allows beyond torch
	1.13's (torch/_weights_only_unpickler.py, _get_allowed_globals and
	_tensor_rebuild_functions: read, not run; torch 1.13 is what is
	installed)."""
	names = {"collections.Counter", "torch.device", "_codecs.encode",
		 "builtins.bytearray", "builtins.set", "builtins.complex",
		 "torch._tensor._rebuild_from_type_v2",
		 "torch.storage.TypedStorage", "torch.storage.UntypedStorage",
		 "torch.TypedStorage", "torch.UntypedStorage"}
	for f in ("parameter", "parameter_with_state", "qtensor", "tensor",
		  "tensor_v2", "tensor_v3", "sparse_tensor",
		  "meta_tensor_no_storage", "wrapper_subclass",
		  "device_tensor_from_numpy", "device_tensor_from_cpu_tensor"):
		names.add("torch._utils._rebuild_" + f)
	for q in ("per_tensor_affine", "per_tensor_symmetric",
		  "per_channel_affine", "per_channel_symmetric",
		  "per_channel_affine_float_qparams"):
		names.add("torch." + q)
	# every dtype: torch.storage._dtype_to_storage_type_map(),
	# _new_dtypes(), uint1..7, int1..7
	for d in ("float32 float64 float16 bfloat16 complex32 complex64 "
		  "complex128 uint8 int8 int16 int32 int64 bool qint8 quint8 "
		  "qint32 quint4x2 quint2x4 float8_e5m2 float8_e4m3fn "
		  "float8_e5m2fnuz float8_e4m3fnuz float8_e8m0fnu "
		  "float4_e2m1fn_x2 uint16 uint32 uint64 bits1x8 bits2x4 "
		  "bits4x2 bits8 bits16").split():
		names.add("torch." + d)
	for i in range(1, 8):
		names.update({"torch.uint%d" % i, "torch.int%d" % i})
	return names


def allowed_globals():
	import torch._weights_only_unpickler as wo
	return set(wo._get_allowed_globals()) | newer_allowed()


class Recorder(pickle._Unpickler):
	"""Python's Unpickler, its imports recorded and answered with
	stand-ins that accept any call: nothing is imported or run."""
	def __init__(self, f):
		super().__init__(f)
		self.globals = set()

	def find_class(self, module, name):
		# what Unpickler.find_class imports: protocol 2's names as
		# Python 3 has them (__builtin__ is builtins)
		if self.proto < 3 and self.fix_imports:
			if (module, name) in _compat_pickle.NAME_MAPPING:
				module, name = _compat_pickle.NAME_MAPPING[
					(module, name)]
			elif module in _compat_pickle.IMPORT_MAPPING:
				module = _compat_pickle.IMPORT_MAPPING[module]
		self.globals.add(module + "." + name)
		return Stand

	def persistent_load(self, pid):
		return Stand()


class Stand(dict):
	def __init__(self, *a, **k):
		pass

	def __new__(cls, *a, **k):
		return dict.__new__(cls)

	def __call__(self, *a, **k):
		return Stand()

	def __setstate__(self, state):
		pass

	def append(self, x):
		pass

	def extend(self, x):
		pass

	def add(self, x):
		pass


def pickles_of(data):
	"""The pickles torch.load would unpickle: a zip's data.pkl; else the
	first, and after torch's magic number the legacy format's next four."""
	if data[:4] == b"PK\x03\x04":
		with zipfile.ZipFile(io.BytesIO(data)) as z:
			return [z.read(n) for n in z.namelist()
				if n.endswith("/data.pkl")]
	if data[:1] != b"\x80" and not data[:1] in b"(cd}]lNSVI":
		return []
	out, pos = [], 0
	for k in range(5):
		if pos >= len(data):
			break
		ops = list(pickletools.genops(data[pos:]))
		end = pos + ops[-1][2] + 1
		out.append(data[pos:end])
		# (read by its opcodes: loading it would run it)
		if k == 0 and [(o.name, a) for o, a, _ in ops
			       if o.name not in ("PROTO", "FRAME")] != \
		   [("LONG1", 0x1950a86a20f9469cfc6c), ("STOP", None)]:
			break
		pos = end
	return out


def unsafe_names(data, allowed):
	"""The globals torch.load(weights_only=True) refuses in the pickles
	of data, by the reference."""
	found = set()
	for pkl in pickles_of(data):
		r = Recorder(io.BytesIO(pkl))
		r.load()
		found |= r.globals - allowed
	return found


def scan(path, *more):
	r = run([STFS_INSPECT, "--scan", path] + list(more))
	return r.returncode, r.stdout.decode(), r.stderr.decode()


def check_unsafe(t, d):
	witness = os.path.join(d, "RAN")
	cmd = "touch " + witness
	torch.manual_seed(0)
	w = torch.randn(4, 3)
	long_arg = "x" * 5000
	fx = {
		"system.pt": ({"w": w, "payload": Witness(os.system, cmd)},
			      [("posix.system", "call", "payload")]),
		"eval.pt": ({"w": w, "x": {"y": Witness(eval, "__import__("
							"'os').system(%r)" % cmd)}},
			    [("builtins.eval", "call", "x.y")]),
		"runpy.pt": ({"w": w, "hooks": [Witness(runpy_code(),
							 "import os; os.system"
							 "(%r)" % cmd, {})]},
			     [("runpy._run_code", "call", "hooks.0")]),
		"long.pt": ({"w": w, "p": Witness(os.system, long_arg)},
			    [("posix.system", "call", "p")]),
		"clean.pt": ({"w": w, "step": 3, "betas": (0.9, 0.99)}, []),
	}
	allowed = allowed_globals()
	for name, (obj, want) in fx.items():
		path = os.path.join(d, name)
		torch.save(obj, path)
		ref = unsafe_names(read(path), allowed)
		t.eq(ref, {c for c, _, _ in want}, "%s: the reference finds "
		     "what was saved" % name)
		# the mount: a warning line, the summary's list
		for fg in (True, False):
			with harness.Mount(t, path, foreground=fg) as m:
				summ = json.loads(read(os.path.join(
					m.path, "__summary__.json"), "r"))
				log = m.output()
			u = summ.get("unsafe", {})
			t.eq(u.get("count"), len(want), "%s: unsafe count" % name)
			got = [(x["callable"], x["how"], x["where"])
			       for x in u.get("list", [])]
			t.eq(got, want, "%s: unsafe list" % name)
			warned = [l for l in log.splitlines() if "warning:" in l]
			if want:
				t.check(len(warned) == 1 and path in warned[0] and
					all(c in warned[0] for c, _, _ in want),
					"%s (%s): one warning line naming the "
					"calls: %r" % (name, "-f" if fg else
						       "daemon", log))
			else:
				t.eq(warned, [], "%s: no warning" % name)
		if want:
			args = u["list"][0]["args"]
			t.check(args.startswith('["') and len(args) < 300,
				"%s: the arguments shown, cut short: %r"
				% (name, args[:100]))
		if name == "long.pt":
			t.check(args.endswith("...") and long_arg[:100] in args,
				"long.pt: a long argument is cut with ...")
		r = run([STFS_INSPECT, path])
		out = r.stdout.decode()
		if want:
			t.check(("unsafe:      %d import" % len(want)) in out and
				all(c in out for c, _, _ in want),
				"%s: stfs-inspect's unsafe lines: %r" % (name, out))
		else:
			t.check("unsafe:      none" in out, "%s: stfs-inspect "
				"says none: %r" % (name, out))
		rc, out, err = scan(path)
		t.eq(rc, 1 if want else 0, "%s: --scan exit status (%s)"
		     % (name, out + err))
		t.check(not os.path.exists(witness), "%s: nothing ran" % name)

	# the legacy format and a bare pickle: read by --scan (torch.load
	# runs their first pickle whatever it is); a Lightning .ckpt
	legacy = os.path.join(d, "legacy.pt")
	torch.save({"w": w, "p": Witness(os.system, cmd)}, legacy,
		   _use_new_zipfile_serialization=False)
	bare = os.path.join(d, "bare.pkl")
	with open(bare, "wb") as f:
		pickle.dump(Witness(os.system, cmd), f, protocol=0)
	for path, words in ((legacy, ["legacy format", "posix.system",
				      "at p (pickle 4 of the legacy format"]),
			    (bare, ["a pickle", "posix.system(",
				    "as the root of the tree"])):
		rc, out, err = scan(path)
		t.check(rc == 1 and all(w in out for w in words),
			"%s: --scan finds the call: %d %r" % (path, rc, out))
	rc, out, err = scan(os.path.join(d, "epoch=3-step=60.ckpt"))
	t.check(rc == 1 and "builtins.getattr(" in out and
		"new torch.optim.lr_scheduler.OneCycleLR()" in out,
		"the Lightning .ckpt: --scan names the scheduler and getattr: "
		"%d %r" % (rc, out))
	# safetensors and GGUF: nothing, by construction, and said so
	rc, out, err = scan(harness.SAMPLE)
	t.check(rc == 0 and "no code, by construction" in out,
		"sample.safetensors: --scan: %d %r" % (rc, out))
	r = run([STFS_INSPECT, "--json", harness.SAMPLE])
	u = json.loads(r.stdout or b"{}").get("unsafe", {})
	t.check(u.get("count") == 0 and "none by construction" in
		u.get("checked", ""), "sample.safetensors: __summary__'s "
		"unsafe: %r" % u)
	# a directory: every file below it, --json; exit 1 for any
	r = run([STFS_INSPECT, "--scan", "--json", d])
	j = json.loads(r.stdout or b"{}")
	t.check(r.returncode == 1 and j.get("unsafe", 0) >= 5 and
		len(j.get("files", [])) >= 8, "--scan of a directory: %d %r"
		% (r.returncode, r.stdout[:300]))
	t.check(not os.path.exists(witness), "nothing ran")


def runpy_code():
	import runpy
	return runpy._run_code


def check_scan_kept(t, d):
	"""--scan of every fixture kept in tests/ and samples/ (safetensors,
	the pickles of unit-pickle, GGUF written here) says what the
	reference says: exit 0 for each that is safe, 1 for each that is
	not."""
	allowed = allowed_globals()
	root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
	paths = []
	for sub in ("data", "../samples"):
		for dirpath, _, files in os.walk(os.path.join(root, sub)):
			paths += [os.path.join(dirpath, f) for f in sorted(files)
				  if f.endswith((".pkl", ".safetensors", ".gguf",
						 ".bin", ".pt"))]
	t.check(len(paths) >= 20, "kept fixtures found: %d" % len(paths))
	verdicts = {}
	for p in paths:
		data = read(p)
		ref = unsafe_names(data, allowed) if not p.endswith(
			(".safetensors", ".gguf")) else set()
		rc, out, err = scan(p)
		verdicts[os.path.basename(p)] = rc
		t.eq(rc, 1 if ref else 0, "--scan %s: the reference finds %s: "
		     "%s%s" % (os.path.basename(p), sorted(ref) or "nothing",
			       out[:300], err))
	# (os_system.pkl would touch stfs-pickle-ran where it is loaded)
	t.check(not os.path.exists("stfs-pickle-ran"), "nothing ran")
	# both kinds are there
	t.check(verdicts.get("os_system.pkl") == 1 and
		verdicts.get("state_dict.pkl") == 0,
		"kept fixtures: unsafe and safe ones: %r" % verdicts)


# ---- quantized tensors -------------------------------------------------------

class QCall:
	"""A quantized tensor's call as torch.save writes it, with the
	arguments given (what torch.save of a real one cannot hold)."""

	def __init__(self, args):
		self.args = args

	def __reduce_ex__(self, proto):
		return (torch._utils._rebuild_qtensor, self.args)


def qtensor_fixture(d):
	"""quantized.pt: every scheme torch.save writes, a plain tensor
	beside them; returns (path, {name: the quantized tensor})."""
	torch.manual_seed(3)
	x = torch.randn(8, 12)
	big = torch.randn(700, 1000)
	qc = torch.quantize_per_channel(
		x, torch.rand(8, dtype=torch.double) / 10 + 0.01,
		torch.arange(8) - 4, 0, torch.qint8)
	sd = {"q": torch.quantize_per_tensor(x, 0.05, 3, torch.quint8),
	      "qc": qc,
	      "qc1": torch.quantize_per_channel(
		x, torch.rand(12, dtype=torch.double) / 10 + 0.01,
		torch.arange(12) % 5, 1, torch.quint8),
	      "q32": torch.quantize_per_tensor(x, 0.001, -7, torch.qint32),
	      # clamped to 2^31 - 1: minus the zero point wraps in int32, as
	      # torch computes it
	      "q32w": torch.quantize_per_tensor(
		torch.tensor([3e9, -3e9, 1.0, 0.0]), 1.0, -5, torch.qint32),
	      "nested": [torch.quantize_per_tensor(x[2:], 0.1, 0,
						   torch.qint8).t()],
	      # rows 1-4 of qc's storage: an offset, four of its scales
	      "qcs": qc[1:5],
	      # float zero points (embeddings): F32 scales and zero points
	      "fq": torch.quantize_per_channel(
		x, torch.rand(8, dtype=torch.double) + 0.1, torch.randn(8), 0,
		torch.quint8),
	      # 700,000 values: two tiles, the second starting mid-row (axis
	      # 0) and with channels 688.. then 0.. (axis 1)
	      "big0": torch.quantize_per_channel(
		big, torch.rand(700, dtype=torch.double) / 10 + 0.01,
		torch.randint(-128, 128, (700,)), 0, torch.qint8),
	      "big1": torch.quantize_per_channel(
		big, torch.rand(1000, dtype=torch.double) / 10 + 0.01,
		torch.randint(0, 256, (1000,)), 1, torch.quint8),
	      "f": x}
	lin = torch.ao.nn.quantized.Linear(12, 8)
	lin.set_weight_bias(torch.quantize_per_channel(
		x, torch.rand(8, dtype=torch.double) / 10 + 0.01,
		torch.zeros(8, dtype=torch.long), 0, torch.qint8),
		torch.randn(8))
	for k, v in lin.state_dict().items():
		sd["lin." + k] = v
	path = os.path.join(d, "quantized.pt")
	torch.save(sd, path)
	want = {k: sd[k] for k in ("q", "qc", "qc1", "q32", "q32w", "qcs",
				   "fq", "big0", "big1")}
	want["nested.0"] = sd["nested"][0]
	want["lin._packed_params._packed_params.0"] = \
		lin.state_dict()["_packed_params._packed_params"][0]
	return path, want, x


def qlabel(q):
	if q.qscheme() == torch.per_tensor_affine:
		return "torch-per-tensor"
	if q.qscheme() == torch.per_channel_affine:
		return "torch-per-channel"
	return "torch-per-channel-float-qparams"


def check_qtensor_values(t, m, name, q):
	"""NAME's float values in .dequant/ (the file, its .npy, the .npy of
	the stored tensor, which it replaces) are Tensor.dequantize()'s, bit
	for bit; its sidecar says the scheme as torch does."""
	import numpy as np
	ref = np.ascontiguousarray(q.dequantize().numpy())
	f = os.path.join(m.path, ".dequant", name)
	got = read(f) if os.path.exists(f) else b""
	t.check(got == ref.astype("<f4").tobytes(), "%s: .dequant/%s is "
		"Tensor.dequantize(), bit for bit (%d bytes of %d)"
		% (name, name, len(got), ref.nbytes))
	for npy in (os.path.join(m.path, ".dequant", ".npy", name + ".npy"),
		    os.path.join(m.path, ".npy", name + ".npy")):
		a = np.load(npy) if os.path.exists(npy) else None
		t.check(a is not None and a.dtype == np.float32 and
			a.shape == ref.shape and
			a.view(np.uint32).tobytes() ==
			ref.view(np.uint32).tobytes(),
			"%s: %s holds Tensor.dequantize()" % (name, npy))
	side = os.path.join(m.path, ".dequant", name + ".json")
	qz = json.loads(read(side, "r")).get("quantization", {}) if \
		os.path.exists(side) else {}
	parts = {"int_repr": name}
	fields = {"scheme": qlabel(q), "qscheme": str(q.qscheme()),
		  "dtype": str(q.dtype)}
	if q.qscheme() == torch.per_tensor_affine:
		fields.update(scale=q.q_scale(), zero_point=q.q_zero_point())
	else:
		fields["axis"] = q.q_per_channel_axis()
		parts.update(scales=name + ".q_per_channel_scales",
			     zero_points=name + ".q_per_channel_zero_points")
	fields["parts"] = parts
	t.eq({k: qz.get(k) for k in fields}, fields,
	     "%s: the sidecar's quantization" % name)


def check_qtensors(t, d):
	import numpy as np
	path, want, x = qtensor_fixture(d)
	np_of = {torch.quint8: np.uint8, torch.qint8: np.int8,
		 torch.qint32: np.int32}
	with harness.Mount(t, path) as m:
		meta = json.loads(read(os.path.join(m.path, "__metadata__.json"),
				       "r"))
		for name, q in want.items():
			f = os.path.join(m.path, name)
			got = read(f) if os.path.exists(f) else b""
			t.eq(got, raw_bytes(q.int_repr()), "%s: the integers"
			     % name)
			desc = json.loads(meta.get(name + ".__quantizer__", "{}"))
			side = f + ".json"
			sq = json.loads(read(side, "r")).get("quantized") if \
				os.path.exists(side) else None
			t.check(desc and sq == desc, "%s: its own sidecar's "
				"\"quantized\" says what __quantizer__ says: %r"
				% (name, sq))
			if q.qscheme() == torch.per_tensor_affine:
				t.eq(((sq or {}).get("scale"),
				      (sq or {}).get("zero_point")),
				     (q.q_scale(), q.q_zero_point()),
				     "%s: its sidecar's scale, zero point" % name)
			else:
				t.eq((sq or {}).get("axis"), q.q_per_channel_axis(),
				     "%s: its sidecar's axis" % name)
			t.eq(desc.get("dtype"), str(q.dtype), "%s: dtype" % name)
			t.eq(desc.get("qscheme"), str(q.qscheme()),
			     "%s: qscheme" % name)
			ints = np.frombuffer(got, np_of[q.dtype]).astype(
				np.float64).reshape(q.shape) if got else None
			if q.qscheme() == torch.per_tensor_affine:
				t.eq((desc.get("scale"), desc.get("zero_point")),
				     (q.q_scale(), q.q_zero_point()),
				     "%s: scale, zero point" % name)
				sc = np.float64(desc.get("scale", 0))
				zp = np.float64(desc.get("zero_point", 0))
			else:
				ax = q.q_per_channel_axis()
				t.eq(desc.get("axis"), ax, "%s: axis" % name)
				files = {}
				refs = {"scales": q.q_per_channel_scales(),
					"zero_points":
					q.q_per_channel_zero_points()}
				for part, ref in refs.items():
					pn = name + ".q_per_channel_" + part
					t.eq(desc.get(part), pn, "%s: %s named"
					     % (name, part))
					pf = os.path.join(m.path, pn)
					files[part] = read(pf) if \
						os.path.exists(pf) else b""
					t.eq(files[part], raw_bytes(ref),
					     "%s: %s" % (name, pn))
				shape = [1] * q.dim()
				shape[ax] = -1
				sc, zp = (np.frombuffer(
					files[p], refs[p].numpy().dtype).astype(
					np.float64).reshape(shape)
					for p in ("scales", "zero_points"))
			if ints is None:
				pass
			elif q.qscheme() == torch.per_tensor_affine:
				# float32(scale) * (q - zero_point), float32,
				# the difference in int32
				vals = np.float32(sc) * (ints.astype(
					np.int64) - int(zp)).astype(
					np.int32).astype(np.float32)
			elif q.qscheme() == torch.per_channel_affine:
				# in the scales' float64, then rounded
				vals = ((ints - zp) * sc).astype(np.float32)
			else:
				# float zero points: all in float32
				vals = (ints.astype(np.float32) -
					zp.astype(np.float32)) * \
					sc.astype(np.float32)
			if ints is not None:
				t.check(np.array_equal(
					vals, q.dequantize().numpy()),
					"%s: (q - zero_point) * scale from the "
					"mount is Tensor.dequantize()" % name)
			check_qtensor_values(t, m, name, q)
		t.eq(read(os.path.join(m.path, "f")), raw_bytes(x),
		     "a plain tensor beside them")
		f = os.path.join(m.path, ".dequant", "f")
		t.eq(read(f) if os.path.exists(f) else b"", raw_bytes(x),
		     ".dequant/f: the plain tensor as stored")
		# the per-channel parts are the weight's, not tensors of the
		# dequantized model
		dq = os.path.join(m.path, ".dequant")
		ls = os.listdir(dq) if os.path.isdir(dq) else None
		t.check(ls is not None and not [n for n in ls if
						".q_per_channel_" in n],
			".dequant/ lists no per-channel scales or zero "
			"points: %r" % ls)
		schemes = {}
		for q in want.values():
			schemes[qlabel(q)] = schemes.get(qlabel(q), 0) + 1
		summ = json.loads(read(os.path.join(m.path, "__summary__.json"),
				       "r")).get("quantization", {})
		t.eq((summ.get("weights"), summ.get("schemes"),
		      summ.get("refused")), (len(want), schemes, 0),
		     "__summary__.json: the quantized tensors by scheme")
	r = run([STFS_INSPECT, path])
	out = r.stdout.decode()
	t.check(r.returncode == 0 and "quantized:   %d weights (" % len(want)
		in out and "torch-per-channel-float-qparams 1" in out,
		"stfs-inspect: a quantized: line: %r" % out[-600:])
	check_qtensors_hostile(t, d, x)
	# packed 4-bit codes have no dtype: refused, naming the tensor
	q4 = os.path.join(d, "quint4x2.pt")
	torch.save({"w": torch.quantize_per_tensor(x, 0.1, 0,
						   torch.quint4x2)}, q4)
	r = run([STFS_INSPECT, q4])
	err = r.stderr.decode()
	t.check(r.returncode != 0 and "`w` is a quantized tensor of "
		"torch.QUInt4x2Storage" in err,
		"quint4x2: refused, naming it: %r" % err)


def check_qtensors_hostile(t, d, x):
	"""Quantizer parameters that do not fit their integers (torch.load
	takes them; Tensor.dequantize() refuses them): each weight refused
	with its reason, in bounded memory and time, the mount up, the
	integers still there and the good tensor beside them dequantized."""
	import collections
	ok = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
	st = ok.storage()

	def call(params):
		return QCall((st, 0, ok.size(), ok.stride(), params, False,
			      collections.OrderedDict()))
	sd = {"ok": ok,
	      "bad_len": call((torch.per_channel_affine,
			       torch.ones(5, dtype=torch.double),
			       torch.zeros(5, dtype=torch.long), 0)),
	      "bad_zp": call((torch.per_tensor_affine, 0.5, 1000)),
	      "bad_zpc": call((torch.per_channel_affine,
			       torch.ones(8, dtype=torch.double),
			       torch.tensor([0, 1, 2, 300, 4, 5, 6, 7]), 0)),
	      "bad_axis": call((torch.per_channel_affine,
				torch.ones(8, dtype=torch.double),
				torch.zeros(8, dtype=torch.long), 2)),
	      "bad_nan": call((torch.per_tensor_affine, float("nan"), 0))}
	path = os.path.join(d, "qhostile.pt")
	torch.save(sd, path)
	loaded = torch.load(path)
	for k in ("bad_zp", "bad_zpc"):
		try:
			loaded[k].dequantize()
			t.check(False, "%s: torch dequantizes it" % k)
		except RuntimeError:
			pass
	want = sorted([
		"bad_axis: a quantized tensor: its axis is not one of its "
		"dimensions",
		"bad_nan: a quantized tensor: its scale is not a finite number",
		"bad_len: a quantized tensor: its per-channel scales and zero "
		"points hold 5 and 5 values, not one for each of the 8 along "
		"axis 0",
		"bad_zp: a quantized tensor: its zero point 1000 is outside "
		"the range of torch.qint8 (Tensor.dequantize() refuses it too)",
		"bad_zpc: a quantized tensor: its zero point 300 (channel 3) is "
		"outside the range of torch.qint8 (Tensor.dequantize() refuses "
		"it too)"])
	limit = "" if "ASAN_OPTIONS" in os.environ else "ulimit -v 1048576; "
	r = run(["sh", "-c", limit + 'exec "$0" --json --dequant "$1"',
		 STFS_INSPECT, path], timeout=120)
	q = json.loads(r.stdout or b"{}").get("quantization", {})
	t.eq((r.returncode, q.get("weights"), sorted(q.get("refused_list",
							   []))),
	     (0, 1, want), "hostile: stfs-inspect --dequant: refused, why %r"
	     % r.stderr[-300:])
	with harness.Mount(t, path) as m:
		f = os.path.join(m.path, ".dequant", "__summary__.json")
		summ = json.loads(read(f, "r")) if os.path.exists(f) else {}
		t.eq(sorted(summ.get("quantization", {}).get("refused_list",
							     [])), want,
		     "hostile: .dequant/__summary__.json names each, why")
		for k in ("bad_len", "bad_zp", "bad_zpc", "bad_axis",
			  "bad_nan"):
			t.eq(read(os.path.join(m.path, k)),
			     raw_bytes(ok.int_repr()), "%s: its integers "
			     "mount" % k)
			# its sidecar is strict JSON (no NaN) and says the
			# scheme: an object, or the metadata's text as a
			# string when that holds a NaN
			try:
				sq = json.loads(read(os.path.join(
					m.path, k + ".json"), "r"),
					parse_constant=lambda c: 1 / 0).get(
					"quantized")
			except (ValueError, ZeroDivisionError, OSError) as e:
				sq = e
			t.check(isinstance(sq, dict) or (
				k == "bad_nan" and isinstance(sq, str) and
				"NaN" in sq), "%s: its sidecar's \"quantized\", "
				"strict JSON: %r" % (k, sq))
			t.check(not os.path.exists(os.path.join(
				m.path, ".dequant", k)), "%s: no values in "
				".dequant/" % k)
		check_qtensor_values(t, m, "ok", ok)


def run_(t):
	d = harness.tmpdir("ckpt")
	check_cycles(t, d)
	check_summary(t, d)
	check_not_checkpoints(t, d)
	check_unsafe(t, d)
	check_scan_kept(t, d)
	check_qtensors(t, d)
	harness.rmtree_safe(d)


harness.main("int-ckpt", run_, mounts=True)
