#!/usr/bin/python3
"""make.py - write the pickle fixtures of unit-pickle (tests/unit/test_pickle.c).

    /usr/bin/python3 tests/data/pickle/make.py [OUTDIR]   (default: this folder)

NAME.pkl     a pickle: data.pkl of a torch.save (Debian's python3-torch), or
             pickle.dumps of plain values and of hostile objects.
NAME.expect  for a pickle stfs reads: the tree it must give, written by
             Python's own Unpickler with find_class and persistent_load
             replaced by recorders (so nothing is called; the two machines
             are independent) in the notation of test_pickle.c's dump():
             None True 12 f:<64-bit pattern> "str" b"bytes" (a, b) (a,)
             [a] {k: v} O{k: v} (an OrderedDict) with @{state} after a
             dict or a call that got BUILD, module.name for a global,
             global(args) for a call, P<pid> for a persistent id; bytes
             outside 0x20..0x7e, '"' and '\\' as \\xHH.
NAME.refuse  for a pickle stfs refuses: a piece of the one-line message.

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
		if (self.module, self.name) == ("collections", "OrderedDict"):
			return ODict(*args)
		if (self.module, self.name) == ("_codecs", "encode"):
			return args[0].encode(args[1])
		return Call(self, args)


class Call:
	def __init__(self, callee, args):
		self.callee, self.args, self.state = callee, args, None

	def __setstate__(self, state):
		self.state = state


class ODict(collections.OrderedDict):
	def __setstate__(self, state):
		self.state = state


class Persid:
	def __init__(self, pid):
		self.pid = pid


class Recorder(pickle.Unpickler):
	def find_class(self, module, name):
		return Global(module, name)

	def persistent_load(self, pid):
		return Persid(pid)


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
	if isinstance(v, bytes):
		return 'b"%s"' % esc(v)
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
		s = dump(v.callee) + dump(v.args)
		if v.state is not None:
			s += "@" + dump(v.state)
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
	}
	bad = {
		"os_system": (pickle.dumps(Evil("touch stfs-pickle-ran"),
					   protocol=2), "global posix.system is not allowed"),
		"eval_proto4": (pickle.dumps(EvalEvil(), protocol=4),
				"global builtins.eval is not allowed"),
		"whole_module": (data_pkl(torch.nn.Linear(2, 2)),
				 "global torch.nn.modules.linear.Linear is not allowed"),
	}
	for name, data in good.items():
		with open(os.path.join(out, name + ".pkl"), "wb") as f:
			f.write(data)
		with open(os.path.join(out, name + ".expect"), "w") as f:
			f.write(dump(Recorder(io.BytesIO(data)).load()) + "\n")
	for name, (data, why) in bad.items():
		with open(os.path.join(out, name + ".pkl"), "wb") as f:
			f.write(data)
		with open(os.path.join(out, name + ".refuse"), "w") as f:
			f.write(why + "\n")


if __name__ == "__main__":
	main()
