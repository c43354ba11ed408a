#!/usr/bin/env python3
"""int-stats: numerical health (issue 17.2).

Tensors of every float dtype with planted NaN, +inf, -inf, zeros and
subnormals (where the format has them), integers of every width, and two
tensors larger than the 4 MiB chunk: stfs-inspect --stats (and, once
mounted, .stats/NAME.json) must find them and match numpy.

The reference: values decoded by test_views.decode (from the formats'
definitions, not from the C code), reduced in float64 by numpy over the
finite values (population std).  Tolerance: min and max exact; mean and
std within 1e-9 relative (plus 1e-12 of the largest magnitude for values
near zero), counts exact."""

import json
import os
import struct

import numpy as np

import harness
import nginx
from harness import STFS_INSPECT, gen, run
from test_views import MINI, decode

FLOATS = ["F64", "F32", "F16", "BF16", "F8_E5M2", "F8_E4M3", "F8_E8M0",
	  "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F6_E2M3", "F6_E3M2", "F4", "C64"]
INTS = ["BOOL", "U8", "I8", "I16", "U16", "I32", "U32", "I64", "U64"]

# smallest normal magnitude; None: no subnormals
MIN_NORMAL = {"F64": 2.0 ** -1022, "F32": 2.0 ** -126, "C64": 2.0 ** -126,
	      "BF16": 2.0 ** -126, "F16": 2.0 ** -14, "F8_E8M0": None}
for _d, (_e, _m, _bias, _k) in MINI.items():
	MIN_NORMAL[_d] = 2.0 ** (1 - _bias)

RTOL = 1e-9


def values(dtype, raw, numel):
	"""float64 values of a tensor (C64: real and imaginary parts)."""
	if dtype in ("F64", "F32", "F16"):
		return np.frombuffer(raw, gen.NUMPY[dtype]).astype(np.float64)
	if dtype == "C64":
		return np.frombuffer(raw, "<f4").astype(np.float64)
	if dtype in INTS:
		return np.frombuffer(raw, gen.NUMPY[dtype] if dtype != "BOOL"
				     else np.uint8)
	return decode(dtype, raw, numel).astype(np.float64)


def want_stats(dtype, raw, numel):
	v = values(dtype, raw, numel)
	w = {"count": int(v.size)}
	if dtype in INTS:
		w.update(min=int(v.min()), max=int(v.max()),
			 mean=float(v.astype(np.float64).mean()),
			 std=float(v.astype(np.float64).std()),
			 zeros=int((v == 0).sum()))
		return w
	fin = v[np.isfinite(v)]
	w.update(nan=int(np.isnan(v).sum()), zeros=int((fin == 0).sum()),
		 finite=int(fin.size))
	w["+inf"] = int((v == np.inf).sum())
	w["-inf"] = int((v == -np.inf).sum())
	thr = MIN_NORMAL[dtype]
	w["subnormals"] = 0 if thr is None else \
		int(((fin != 0) & (np.abs(fin) < thr)).sum())
	if fin.size:
		w.update(min=float(fin.min()), max=float(fin.max()),
			 mean=float(fin.mean()), std=float(fin.std()))
	else:
		w.update(min=None, max=None, mean=None, std=None)
	return w


def close(a, b, scale):
	if a is None or b is None:
		return a is b
	return abs(a - b) <= RTOL * abs(b) + 1e-12 * scale


def compare(t, got, want, label):
	for k, v in want.items():
		if k in ("mean", "std") and v is not None:
			scale = max(abs(want["min"]), abs(want["max"]))
			t.check(isinstance(got.get(k), (int, float)) and
				close(float(got[k]), v, scale),
				"%s: %s got %r, want %r" % (label, k, got.get(k), v))
		else:
			t.eq(got.get(k), v, "%s: %s" % (label, k))


def plant(dtype, rng, n):
	"""(raw bytes, holds NaN or Inf) of n elements with planted specials."""
	if dtype in ("F32", "F64", "F16", "C64"):
		npd = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "C64": "<f4"}[dtype]
		m = 2 * n if dtype == "C64" else n
		a = (rng.standard_normal(m) * 3).astype(npd)
		tiny = np.finfo(np.dtype(npd)).tiny
		specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, tiny / 4,
			    -tiny / 2, tiny / 1024]
		for i, s in enumerate(specials):
			a[(i * 7919) % m] = s
		return a.tobytes(), True
	if dtype == "BF16":
		a = (rng.standard_normal(n) * 3).astype("<f4").view("<u4") >> 16
		a = a.astype("<u2")
		for i, code in enumerate([0x7FC0, 0x7F80, 0xFF80, 0x0000, 0x8000,
					  0x0001, 0x8035, 0x007F, 0xFFC1]):
			a[(i * 7919) % n] = code
		return a.tobytes(), True
	# narrow formats: every code at least once, then random codes
	bits = gen.DTYPE_BITS[dtype]
	ncodes = 1 << bits
	codes = np.concatenate([np.arange(ncodes), rng.integers(
		0, ncodes, n - ncodes)]).astype(np.uint32)
	if bits == 8:
		raw = codes.astype(np.uint8).tobytes()
	elif bits == 4:
		raw = (codes[0::2] | codes[1::2] << 4).astype(np.uint8).tobytes()
	else:
		g = codes.reshape(-1, 4)
		v = g[:, 0] | g[:, 1] << 6 | g[:, 2] << 12 | g[:, 3] << 18
		raw = np.stack([v & 255, v >> 8 & 255, v >> 16 & 255],
			       1).astype(np.uint8).tobytes()
	vals = decode(dtype, raw, n)
	return raw, bool((~np.isfinite(vals)).any())


def clean(dtype, rng, n):
	"""Raw bytes of n finite, normal values (no specials)."""
	if dtype in ("F32", "F64", "F16", "C64"):
		npd = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "C64": "<f4"}[dtype]
		m = 2 * n if dtype == "C64" else n
		return (rng.standard_normal(m) + 5).astype(npd).tobytes()
	if dtype == "BF16":
		a = ((rng.standard_normal(n) + 5).astype("<f4").view("<u4") >> 16)
		return a.astype("<u2").tobytes()
	# narrow formats: small positive normal codes, finite everywhere
	bits = gen.DTYPE_BITS[dtype]
	if dtype == "F8_E8M0":
		codes = rng.integers(100, 150, n)
	else:
		e, m, _b, _k = MINI[dtype]
		codes = (1 << m) + rng.integers(0, 1 << m, n)	# exponent 1
	codes = codes.astype(np.uint32)
	if bits == 8:
		return codes.astype(np.uint8).tobytes()
	if bits == 4:
		return (codes[0::2] | codes[1::2] << 4).astype(np.uint8).tobytes()
	g = codes.reshape(-1, 4)
	v = g[:, 0] | g[:, 1] << 6 | g[:, 2] << 12 | g[:, 3] << 18
	return np.stack([v & 255, v >> 8 & 255, v >> 16 & 255],
			1).astype(np.uint8).tobytes()


def ints(dtype, rng, n):
	if dtype == "BOOL":
		return rng.integers(0, 2, n).astype(np.uint8).tobytes()
	info = np.iinfo(np.dtype(gen.NUMPY[dtype]))
	a = rng.integers(info.min, info.max, n, dtype=np.dtype(gen.NUMPY[dtype]),
			 endpoint=True)
	a[0], a[1], a[2] = info.min, info.max, 0
	return a.tobytes()


def make(d):
	"""The test file: {name: (dtype, raw, numel, bad)}, path."""
	rng = np.random.default_rng(17)
	T = {}
	for dt in FLOATS:
		n = 4096
		raw, bad = plant(dt, rng, n)
		T["planted." + dt] = (dt, raw, n, bad)
		T["clean." + dt] = (dt, clean(dt, rng, n), n, False)
	for dt in INTS:
		T["int." + dt] = (dt, ints(dt, rng, 1000), 1000, False)
	# bigger than one 4 MiB chunk: the chunks' results are merged; a NaN
	# and an inf in the second chunk
	big = (rng.standard_normal(3 << 20) * 2 + 1).astype("<f4")
	big[(3 << 20) - 5] = np.nan
	big[(1 << 20) * 2] = np.inf
	T["big.F32"] = ("F32", big.tobytes(), big.size, True)
	bb = ((rng.standard_normal(3 << 20) + 1).astype("<f4").view("<u4") >> 16)
	T["big.BF16"] = ("BF16", bb.astype("<u2").tobytes(), bb.size, False)
	T["empty.F32"] = ("F32", b"", 0, False)
	# all NaN: no finite value, min..std are null
	T["allnan.F16"] = ("F16", np.full(8, np.nan, "<f2").tobytes(), 8, True)
	tensors = []
	for name, (dt, raw, n, bad) in T.items():
		shape = [n] if n else [0]
		tensors.append((name, dt, shape, raw))
	p = os.path.join(d, "health.safetensors")
	gen.write_safetensors(p, tensors, {"format": "pt"})
	return T, p


def check_inspect(t, T, p):
	r = run([STFS_INSPECT, "--stats", "--json", p], timeout=120)
	t.eq(r.returncode, 1, "--stats --json: exit 1 (NaN/Inf present): %r"
	     % r.stderr[:300])
	j = json.loads(r.stdout)
	got = {x["name"]: x for x in j.get("tensors", [])}
	t.eq(sorted(got), sorted(T), "--stats --json: one entry per tensor")
	want_bad = sorted(k for k, v in T.items() if v[3])
	t.eq(sorted(j.get("nan_or_inf", [])), want_bad,
	     "--stats --json: nan_or_inf names exactly the planted tensors")
	for name, (dt, raw, n, bad) in T.items():
		w = want_stats(dt, raw, n)
		if name in got:
			t.eq(got[name].get("dtype"), dt, name + ": dtype")
			compare(t, got[name], w, "--stats " + name)
		if dt in FLOATS and n:
			t.eq(bool(w["nan"] or w["+inf"] or w["-inf"]), bad,
			     name + ": the test plants what it says")
	for dt in FLOATS:
		w = want_stats(dt, T["planted." + dt][1], T["planted." + dt][2])
		if dt != "F8_E8M0":
			t.check(w["subnormals"] > 0 and w["zeros"] > 0,
				"planted.%s: the test plants subnormals and zeros" % dt)
	# text: one line per tensor, the bad ones flagged, a count at the end
	r = run([STFS_INSPECT, "--stats", p], timeout=120)
	t.eq(r.returncode, 1, "--stats: exit 1")
	lines = r.stdout.decode("utf-8", "replace").splitlines()
	flagged = sorted(l.split()[0] for l in lines if l.endswith("<-- NaN/Inf"))
	t.eq(flagged, want_bad, "--stats: flagged lines")
	t.eq(lines[-1], "%d of %d tensors hold NaN or Inf" % (len(want_bad), len(T)),
	     "--stats: the last line counts them")
	# a clean file: exit 0
	d = os.path.dirname(p)
	q = os.path.join(d, "clean.safetensors")
	gen.write_safetensors(q, [(k, v[0], [v[2]], v[1]) for k, v in T.items()
				  if not v[3] and v[2]])
	r = run([STFS_INSPECT, "--stats", q], timeout=120)
	t.eq(r.returncode, 0, "--stats of a clean file: exit 0 (%r)" % r.stderr[:200])
	r = run([STFS_INSPECT, "--stats", "--quiet", p], timeout=120)
	t.check(r.returncode == 1 and not r.stdout and not r.stderr,
		"--stats --quiet: exit 1, silent")
	r = run([STFS_INSPECT, "--stats", p, q])
	t.eq(r.returncode, 2, "--stats with two SOURCEs: usage error")


def check_mount(t, T, p):
	""".stats/NAME.json: hidden, a fixed size known before the first read,
	the same object as --stats --json (padding aside), equal for readers
	that race on the first read."""
	import threading
	r = run([STFS_INSPECT, "--stats", "--json", p], timeout=120)
	byname = {x["name"]: x for x in json.loads(r.stdout)["tensors"]}
	with harness.Mount(t, p) as m:
		sd = os.path.join(m.path, ".stats")
		t.check(".stats" not in os.listdir(m.path),
			".stats is not listed by readdir")
		t.check(os.path.isdir(sd), ".stats is reachable by path")
		t.eq(sorted(os.listdir(sd)),
		     sorted(harness.encode_name(n) + ".json" for n in T),
		     ".stats/ lists one file per tensor")
		# racing first reads of the big tensors
		for name in ("big.F32", "big.BF16"):
			f = os.path.join(sd, name + ".json")
			size = os.stat(f).st_size
			outs = [None] * 6

			def reader(k, f=f, outs=outs):
				with open(f, "rb") as fh:
					outs[k] = fh.read()
			th = [threading.Thread(target=reader, args=(k,)) for k in range(6)]
			for x in th:
				x.start()
			for x in th:
				x.join(120)
			t.check(all(o == outs[0] for o in outs) and outs[0] is not None,
				"%s: concurrent first readers get the same bytes" % name)
			t.eq(len(outs[0] or b""), size, "%s: size known before the "
			     "first read" % name)
		for name, (dt, raw, n, bad) in T.items():
			f = os.path.join(sd, harness.encode_name(name) + ".json")
			size = os.stat(f).st_size
			with open(f, "rb") as fh:
				data = fh.read()
			t.eq(len(data), size, name + ": .stats file size")
			t.eq(os.stat(f).st_size, size, name + ": size stays")
			try:
				j = json.loads(data)
			except ValueError as e:
				t.check(False, "%s: .stats is JSON: %s" % (name, e))
				continue
			t.eq(j, byname.get(name), name + ": .stats equals --stats --json")
			compare(t, j, want_stats(dt, raw, n), ".stats " + name)
			# a read in the middle
			with open(f, "rb") as fh:
				fh.seek(10)
				t.eq(fh.read(17), data[10:27], name + ": .stats pread")
	with harness.Mount(t, p, args=["-o", "views=off"]) as m:
		t.check(not os.path.exists(os.path.join(m.path, ".stats")),
			"views=off: no .stats")


def check_remote(t, d, p):
	"""--stats of an http:// SOURCE equals the local one."""
	why = nginx.available()
	t.check(not why, "nginx for the remote case: %s" % why)
	if why:
		return
	local = run([STFS_INSPECT, "--stats", "--json", p], timeout=120)
	with nginx.Nginx(d, os.path.join(d, "ng")) as srv:
		url = srv.url(os.path.basename(p))
		r = run([STFS_INSPECT, "--stats", "--json", url], timeout=120)
		t.eq(r.returncode, 1, "remote --stats: exit 1 (%r)" % r.stderr[:300])
		rj = json.loads(r.stdout) if r.stdout else {}
		lj = json.loads(local.stdout)
		t.eq(rj.get("tensors"), lj.get("tensors"), "remote --stats: as local")
		t.eq(rj.get("nan_or_inf"), lj.get("nan_or_inf"),
		     "remote --stats: nan_or_inf as local")


def check_tree(t, d, T):
	"""A directory of two models: --stats covers both, names the bad
	tensor by its path in the mount (DIR/NAME)."""
	root = os.path.join(d, "tree")
	for sub, names in (("good", ["clean.F32", "clean.BF16"]),
			   ("bad", ["planted.F16", "clean.F64"])):
		os.makedirs(os.path.join(root, sub))
		gen.write_safetensors(os.path.join(root, sub, "model.safetensors"),
				      [(n, T[n][0], [T[n][2]], T[n][1]) for n in names])
	r = run([STFS_INSPECT, "--stats", "--json", root], timeout=120)
	t.eq(r.returncode, 1, "tree --stats: exit 1 (%r)" % r.stderr[:300])
	j = json.loads(r.stdout) if r.stdout else {}
	got = sorted((x.get("dir"), x.get("name")) for x in j.get("tensors", []))
	t.eq(got, [("bad", "clean.F64"), ("bad", "planted.F16"),
		   ("good", "clean.BF16"), ("good", "clean.F32")],
	     "tree --stats: every tensor of both models, with its dir")
	t.eq(j.get("nan_or_inf"), ["bad/planted.F16"],
	     "tree --stats: the bad tensor by its path")
	for x in j.get("tensors", []):
		dt, raw, n, bad = T[x["name"]]
		compare(t, x, want_stats(dt, raw, n), "tree " + x["name"])
	r = run([STFS_INSPECT, "--stats", root], timeout=120)
	out = r.stdout.decode()
	t.check("== bad ==" in out and "== good ==" in out and
		out.rstrip().endswith("1 of 4 tensors hold NaN or Inf"),
		"tree --stats text: a block per model, one count: %r" % out[-300:])
	r = run([STFS_INSPECT, "--stats", os.path.join(root, "good")], timeout=120)
	t.eq(r.returncode, 0, "tree --stats of the good model alone: exit 0")


def run_(t):
	d = harness.tmpdir("stats")
	T, p = make(d)
	check_inspect(t, T, p)
	check_tree(t, d, T)
	check_remote(t, d, p)
	check_mount(t, T, p)


if __name__ == "__main__":
	harness.main("int-stats", run_, mounts=True)
