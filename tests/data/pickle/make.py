#!/usr/bin/python3
"""make.py - write the pickle fixtures of unit-pickle (tests/unit/test_pickle.c).

    /usr/bin/python3 tests/data/pickle/make.py [OUTDIR]   (default: this folder)

NAME.pkl     a pickle: data.pkl of a torch.save (Debian's python3-torch), or
             pickle.dumps of plain values and of hostile objects.
NAME.expect  the tree stfs must make of it, written by Python's own
             (pure Python) Unpickler with find_class, persistent_load and
             the opcodes that make objects (REDUCE, NEWOBJ, BUILD, the
             set opcodes) replaced by recorders (so nothing is imported or
             called; the two machines are independent) in the notation of
             test_pickle.c's dump(): None True 12 f:<64-bit pattern> "str"
             b"bytes" (a, b) (a,) [a] S[a, b] (a set, in the pickle's
             order) {k: v} O{k: v} (an OrderedDict) with @{state} after a
             dict or a call that got BUILD, module.name for a global,
             callee(args) for a REDUCE, OBJ or INST, callee!(args) for a
             NEWOBJ, callee!(args)**{k: v} for a NEWOBJ_EX with keyword
             arguments, then +{k: v} or +[a] for the items set or
             appended on it, P<pid>
             for a persistent id; bytes outside 0x20..0x7e, '"' and '\\'
             as \\xHH.  The few pure calls stfs folds into values are
             folded here the same way (Global.__call__).  Python 2
             strings (STRING, BINSTRING) are read as UTF-8, as torch.load
             reads them.

Run it again after changing it; the output is deterministic for a given
torch (1.13 wrote the committed files).
"""
import collections
import io
import os
import pickle
import struct
import sys
import zipfile

import torch


class Global:
	def __init__(self, module, name):
		self.module, self.name = module, name

	def __call__(self, *args):
		return make_call(self, args, False)


class Call:
	"""A call described, not made; items set or appended on it."""
	def __init__(self, callee, args, newobj, kwargs=None):
		self.callee, self.args, self.newobj = callee, args, newobj
		self.kwargs = kwargs or None
		self.state, self.items = None, None

	def __call__(self, *args):
		return Call(self, args, False)

	def __setstate__(self, state):
		self.state = state

	def __setitem__(self, k, v):
		if self.items is None:
			self.items = PDict()
		self.items[k] = v

	def append(self, v):
		if self.items is None:
			self.items = []
		self.items.append(v)

	def extend(self, vs):
		for v in vs:
			self.append(v)

	add = append


class ODict(collections.OrderedDict):
	def __setstate__(self, state):
		self.state = state


class PDict(dict):
	def __setstate__(self, state):
		self.state = state


class PSet(list):
	"""A set or frozenset, in the order the pickle adds its items."""
	add = list.append


def make_call(callee, args, newobj, kwargs=None):
	"""What stfs makes of callee(*args): pickle_call.c's fold()."""
	name = (callee.module, callee.name) if isinstance(callee, Global) \
	       else None
	if kwargs:
		return Call(callee, args, newobj, kwargs)
	n = len(args)
	a0 = args[0] if n > 0 else None
	a1 = args[1] if n > 1 else None
	seq = (tuple, list, PSet)
	if name == ("collections", "OrderedDict") and n == 0:
		return ODict()
	if newobj:
		return Call(callee, args, True)
	if name == ("collections", "defaultdict") and n <= 1:
		return PDict()
	if name in (("builtins", "bytes"), ("__builtin__", "bytes")) and n == 0:
		return b""
	if name in (("numpy.core.multiarray", "scalar"),
		    ("numpy._core.multiarray", "scalar")) and n == 2:
		number = numpy_scalar(a0, a1)
		if number is not None:
			return number
	if name == ("_codecs", "encode") and n == 2 and \
	   type(a0) is str and a1 == "latin1":
		return a0.encode("latin1")
	if name in (("builtins", "set"), ("builtins", "frozenset"),
		    ("__builtin__", "set"), ("__builtin__", "frozenset")) and \
	   (n == 0 or (n == 1 and isinstance(a0, seq))):
		return PSet(a0 if n else [])
	if name == ("torch", "Size") and n == 1 and \
	   isinstance(a0, (tuple, list)) and not isinstance(a0, PSet):
		return a0
	if name == ("torch", "device") and 1 <= n <= 2 and \
	   type(a0) is str and len(a0.encode()) <= 32 and \
	   (n == 1 or (type(a1) is int and 0 <= a1 < 2**63)):
		return a0 if n == 1 else "%s:%d" % (a0, a1)
	return Call(callee, args, False)


def numpy_scalar(dtype, data):
	"""The number numpy.core.multiarray.scalar(dtype, data) makes, read
	by numpy from the dtype call's name and state (pickle_numpy.c reads
	the same), or None."""
	import numpy
	if not isinstance(dtype, Call) or not isinstance(dtype.callee, Global) \
	   or (dtype.callee.module, dtype.callee.name) != ("numpy", "dtype") \
	   or not isinstance(dtype.state, tuple) or type(data) is not bytes:
		return None
	name, order = dtype.args[0], dtype.state[1]
	if name not in ("b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
			"f2", "f4", "f8") or len(data) != int(name[1]):
		return None
	t = numpy.dtype(name).newbyteorder("<" if order == "|" else order)
	return numpy.frombuffer(data, dtype=t)[0].item()


class Persid:
	def __init__(self, pid):
		self.pid = pid


class Recorder(pickle._Unpickler):
	dispatch = dict(pickle._Unpickler.dispatch)

	def find_class(self, module, name):
		return Global(module, name)

	def persistent_load(self, pid):
		return Persid(pid)

	def load_newobj(self):
		args = self.stack.pop()
		cls = self.stack.pop()
		self.append(make_call(cls, args, True))
	dispatch[pickle.NEWOBJ[0]] = load_newobj

	def load_newobj_ex(self):
		kwargs = self.stack.pop()
		args = self.stack.pop()
		cls = self.stack.pop()
		self.append(make_call(cls, args, True, kwargs))
	dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

	def load_empty_set(self):
		self.append(PSet())
	dispatch[pickle.EMPTY_SET[0]] = load_empty_set

	def load_frozenset(self):
		items = self.pop_mark()		# before self.append changes
		self.append(PSet(items))
	dispatch[pickle.FROZENSET[0]] = load_frozenset


def esc(b):
	return "".join(chr(c) if 0x20 <= c <= 0x7e and c not in b'"\\'
		       else "\\x%02x" % c for c in b)


def dump(v):
	if v is None:
		return "None"
	if v is True or v is False:
		return str(v)
	if isinstance(v, int):
		return str(v)
	if isinstance(v, float):
		return "f:" + struct.pack(">d", v).hex()
	if isinstance(v, str):
		return '"%s"' % esc(v.encode("utf-8", "surrogatepass"))
	if isinstance(v, (bytes, bytearray)):	# BYTEARRAY8: bytes to stfs
		return 'b"%s"' % esc(v)
	if isinstance(v, PSet):
		return "S[%s]" % ", ".join(dump(x) for x in v)
	if isinstance(v, tuple):
		if len(v) == 1:
			return "(%s,)" % dump(v[0])
		return "(%s)" % ", ".join(dump(x) for x in v)
	if isinstance(v, list):
		return "[%s]" % ", ".join(dump(x) for x in v)
	if isinstance(v, dict):
		s = "{%s}" % ", ".join("%s: %s" % (dump(k), dump(x))
				       for k, x in v.items())
		if isinstance(v, ODict):
			s = "O" + s
		if hasattr(v, "state"):
			s += "@" + dump(v.state)
		return s
	if isinstance(v, Global):
		return "%s.%s" % (v.module, v.name)
	if isinstance(v, Call):
		s = dump(v.callee) + ("!" if v.newobj else "") + dump(v.args)
		if v.kwargs:
			s += "**" + dump(v.kwargs)
		if v.state is not None:
			s += "@" + dump(v.state)
		if v.items is not None:
			s += "+" + dump(v.items)
		return s
	if isinstance(v, Persid):
		return "P" + dump(v.pid)
	raise TypeError(type(v))


def data_pkl(obj, **kw):
	"""data.pkl of torch.save(obj)"""
	f = io.BytesIO()
	torch.save(obj, f, **kw)
	with zipfile.ZipFile(io.BytesIO(f.getvalue())) as z:
		name = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
		return z.read(name)


def state_dict():
	torch.manual_seed(0)
	sd = collections.OrderedDict()
	for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16,
		   torch.int64, torch.int32, torch.int16, torch.int8,
		   torch.uint8, torch.bool, torch.complex64):
		sd["t_" + str(dt)[6:]] = torch.zeros(2, 3, dtype=dt)
	base = torch.arange(24.0).reshape(4, 6)
	sd["base"] = base
	sd["tied"] = base			# the same tensor twice
	sd["column"] = base[:, 2]		# strided view, offset 2
	sd["transposed"] = base.t()
	sd["scalar"] = torch.tensor(3.5)
	sd["empty"] = torch.zeros(0, 4)
	sd["grad"] = torch.ones(3, requires_grad=True)
	return sd


def optimizer_state():
	torch.manual_seed(0)
	m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
	opt = torch.optim.Adam(m.parameters(), lr=1e-3, betas=(0.9, 0.999))
	m(torch.ones(4, 3)).sum().backward()
	opt.step()
	return {"optimizer": opt.state_dict(), "epoch": 3, "step": 1200,
		"best": -0.25, "note": "ünïcode ✓", "blob": b"\x00\xff\x80ab",
		"nothing": None, "flags": [True, False], "big": 2**62,
		"neg": -(2**63), "mid": -129, "shape": (1,), "pair": (1, 2),
		"triple": (1, 2, 3), "four": (1, 2, 3, 4), 7: "int key"}


class Evil:
	"""An object whose unpickling runs a shell command."""
	def __init__(self, cmd):
		self.cmd = cmd

	def __reduce__(self):
		return (os.system, (self.cmd,))


class EvalEvil:
	def __reduce__(self):
		return (eval, ("__import__('os').system('touch stfs-pickle-ran')",))


class Items(list):
	"""A list subclass: NEWOBJ, then APPENDS onto the object."""


class Table(dict):
	"""A dict subclass: NEWOBJ, then SETITEMS onto the object."""


def trainer_state():
	"""What trainers keep beside the tensors: torch.Size, sets, devices,
	dtypes, ints past 64 bits, objects of their own classes."""
	import argparse
	torch.manual_seed(0)
	m = torch.nn.Linear(2, 2)
	return {"model": m.state_dict(),
		"shape": torch.Size([3, 4]), "ids": {3, 1, 2},
		"frozen": frozenset(["a"]), "device": torch.device("cuda", 1),
		"cpu": torch.device("cpu"), "dtype": torch.float16,
		"seed": 2**64 - 5, "huge": 2**70, "neg": -2**80,
		"wide": (1 << 200) + 12345, "empty": {},
		"hparams": argparse.Namespace(lr=0.1, layers=[2, 3]),
		"counts": collections.defaultdict(list, a=[1]),
		"items": Items([1, 2]), "table": Table(k="v")}


class KeywordNew:
	"""An object made with keyword arguments to __new__: NEWOBJ_EX."""
	def __new__(cls, *args, **kwargs):
		return object.__new__(cls)

	def __getnewargs_ex__(self):
		return (1,), {"k": 2, "name": "x"}


def plain():
	"""Values of every kind protocols 0 and 1 write."""
	return {"a": [1, 2.5, None, True, False, -7, 0.1, 1e-05, 1e300,
		      float("inf"), float("-inf"), -0.0],
		"b": b"xy\x00\xff", "empty": b"", "c": (), "t": (1, (2, 3)),
		"d": collections.OrderedDict(z=1), "e": "é\n\\\r\x1a\0 ✓ 😀",
		"i": 2**40, "j": -2**70, "k": 2**31 - 1, "m": -2**31,
		"s": {1, 2}, "shared": [[]] * 3, 7: "int key"}


# What Python 2's pickle.dumps writes, by hand (Python 3 writes no STRING,
# BINSTRING, INST or OBJ): a dict of str, unicode, a long, a float, an
# old-style instance with its state, a persistent id.
PYTHON2_PROTO0 = (
	b"(dp0\nS'epoch'\np1\nI3\nsS'lr'\np2\nF0.1\nsS'name'\np3\n"
	b"S\"run '1'\\n\\x41\\101\\t\"\np4\nsVkey\\u00fc\\U0001f600\np5\n"
	b"Vval \xfc \\x\np6\nsS'big'\np7\nL1180591620717411303424L\n"
	b"sS'neg'\np8\nL-5L\nsS'obj'\np9\n(i__main__\nOld\np10\n"
	b"(dp11\nS'x'\np12\nI1\nsbsS'again'\np14\ng4\nsS'w'\nPstorage_0\n"
	b"p13\ns.")
PYTHON2_PROTO1 = (
	b"}q\x00(U\x05epochq\x01K\x03U\x02lrq\x02G?\xb9\x99\x99\x99\x99\x99"
	b"\x9aU\x04nameq\x03T\x08\x00\x00\x00run '1'\nq\x04U\x03objq\x05"
	b"(c__main__\nOld\nq\x06oq\x07}q\x08U\x01xK\x01sbU\x05tupleq\t"
	b"(K\x01K\x02tq\nU\x05againh\x04u.")


def numpy_values():
	"""What trainers keep of numpy's: scalars of each kind (folded into
	numbers), arrays (described: the torch container shows them)."""
	import numpy as np
	np.random.seed(0)
	return {"best_metric": np.float64(0.91), "epoch": np.int64(3),
		"f32": np.float32(0.1), "f16": np.float16(-2.5),
		"u64": np.uint64(2**64 - 1), "i8": np.int8(-5),
		"u8": np.uint8(200), "flag": np.bool_(True),
		"nan": np.float64("nan"), "c64": np.complex64(1 + 2j),
		"text": np.str_("x"), "arr": np.arange(6, dtype=">i4").reshape(2, 3),
		"rng": np.random.get_state()}


def main():
	out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
		os.path.abspath(__file__))
	good = {
		"state_dict": data_pkl(state_dict()),
		"model_state_dict": data_pkl(torch.nn.Linear(3, 2).state_dict()),
		"optimizer": data_pkl(optimizer_state()),
		"parameter": data_pkl({"p": torch.nn.Parameter(torch.ones(2)),
				       "q": torch.nn.Parameter(torch.ones(1),
							       requires_grad=False)}),
		"state_dict_proto4": data_pkl(state_dict(), pickle_protocol=4),
		# more than 256 memo entries: LONG_BINPUT, LONG_BINGET
		"many": data_pkl(collections.OrderedDict(
			("layer%d" % i, torch.zeros(1)) for i in range(70))),
		"plain_proto5": pickle.dumps(
			{"a": [1, 2.5, None, True], "b": b"xy" * 3, "c": (),
			 "d": collections.OrderedDict(z=1), "e": "é" * 3,
			 "f": -1, "g": 65535, "h": 65536, "i": 2**40,
			 "l": [[]] * 3}, protocol=5),
		"trainer": data_pkl(trainer_state()),
		# sets as EMPTY_SET, ADDITEMS, FROZENSET
		"trainer_proto4": data_pkl(trainer_state(), pickle_protocol=4),
		# hostile: read as descriptions of the calls, never made
		"os_system": pickle.dumps(Evil("touch stfs-pickle-ran"),
					  protocol=2),
		"eval_proto4": pickle.dumps(EvalEvil(), protocol=4),
		# a whole module: objects of torch's classes, described
		"whole_module": data_pkl(torch.nn.Linear(2, 2)),
		# protocols 0 and 1: text opcodes, INT, LONG, FLOAT, UNICODE,
		# PUT, GET; and NEWOBJ_EX
		"plain_proto0": pickle.dumps(plain(), protocol=0),
		"plain_proto1": pickle.dumps(plain(), protocol=1),
		"python2_proto0": PYTHON2_PROTO0,
		"python2_proto1": PYTHON2_PROTO1,
		"newobj_ex": pickle.dumps([KeywordNew(), KeywordNew()],
					  protocol=4),
		# numpy's scalars and arrays beside a state dict
		"numpy": data_pkl(numpy_values()),
		"numpy_proto5": pickle.dumps(numpy_values(), protocol=5),
	}
	for name, data in good.items():
		with open(os.path.join(out, name + ".pkl"), "wb") as f:
			f.write(data)
		with open(os.path.join(out, name + ".expect"), "w") as f:
			f.write(dump(Recorder(io.BytesIO(data),
					      encoding="utf-8").load()) + "\n")


if __name__ == "__main__":
	main()
