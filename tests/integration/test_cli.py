#!/usr/bin/env python3
"""int-cli: the manners of the command line (issue 40).

stfs:
- `--help` lists what applies to stfs, each option once: its own options
  (-o flat among them) and the FUSE ones that apply, not libfuse's
  generic block (a second -h, -V, auto_unmount; -o clone_fd, which stfs
  always sets).
- as a mount helper (mount.stfs, mount.fuse.stfs), a relative local
  SOURCE is refused in one line saying to give the absolute path (mount(8)
  and fstab resolve it from their own working directory, / at boot), and
  nothing is mounted; the absolute path and stfs itself (whose working
  directory is the user's) go on.
- STFS_HTTP_TRIES means what -o http_tries means (1-100); the old
  STFS_HTTP_RETRIES (one fewer) is refused, naming the new name, and so is
  STFS_HTTP_TRIES=0, before any request (a port where nothing listens).

stfs-inspect:
- without SOURCE, or with an unknown option: a usage line and "Try
  'stfs-inspect --help'" on stderr, nothing on stdout, exit 2.
- --merge -o OUT refuses an existing OUT without --force (unchanged
  after), replaces it with --force, and says on stderr what it wrote:
  tensors, bytes (both checked against the file), path.
- --diff --atol/--rtol: per tensor the answer numpy.allclose(a, b, rtol,
  atol, equal_nan=False) gives (boundaries, the |b| of the rule, NaN,
  infinities, a dtype change), and the exit status.
- --stats: 0 clean, 1 a NaN or Inf, 2 an invalid or missing SOURCE.
- --json and --stats --json say the same "source", absolute, for a
  relative file and a sharded set's directory; so does the mount's
  __summary__.json.
- --format tsv and csv: a header, then the rows --json gives, names of
  every odd kind (tab, newline, quote, comma, backslash) read back exact.
- a folder holding only a PyTorch checkpoint says so and names the path
  that mounts it; that path works.  A missing directory (trailing slash)
  is "cannot open", not "out of memory".
"""

import csv
import io
import json
import os
import re
import struct

import numpy as np

import harness
from harness import STFS, STFS_INSPECT, run

import gen_sharded  # noqa: E402 (tests/, on sys.path through harness)


def stfs_help(t):
	r = run([STFS, "--help"], timeout=20)
	out = r.stdout.decode()
	t.eq(r.returncode, 0, "stfs --help: exit 0")
	t.eq(r.stderr, b"", "stfs --help: nothing on stderr")
	# each option listed once, at the start of its line
	listed = re.findall(r"^\s+(-o [a-z_]+|--[a-z-]+|-[a-zA-Z])", out, re.M)
	dup = sorted({o for o in listed if listed.count(o) > 1})
	t.eq(dup, [], "stfs --help: options listed more than once")
	for opt in ("-h", "-V", "-f", "-d", "-s", "-q", "-o flat", "-o tree",
		    "-o views", "-o allow_other", "-o auto_unmount",
		    "-o max_threads"):
		t.check(opt in listed, "stfs --help lists %s" % opt)
	# libfuse's generic block: not there
	for text in ("clone_fd", "print help", "print version",
		     "foreground operation", "max_idle_threads"):
		t.check(text not in out, "stfs --help: no %r (libfuse's "
			"generic help)" % text)


def helper_relative(t, d):
	"""mount.stfs and mount.fuse.stfs refuse a relative local SOURCE."""
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	work = os.path.join(d, "work")
	os.mkdir(work)
	harness.gen.gen_sample(os.path.join(work, "model.safetensors"))
	for name in ("mount.stfs", "mount.fuse.stfs"):
		helper = os.path.join(d, name)
		os.symlink(STFS, helper)
		for src, args in (("model.safetensors", []),
				  ("./model.safetensors", ["-f"]),
				  ("model.safetensors", ["-o", "ro,nofail"])):
			label = "%s %s %s" % (name, src, " ".join(args))
			r = run([helper, src, mnt] + args, timeout=30, cwd=work)
			err = r.stderr.decode("utf-8", "replace")
			t.eq(r.returncode, 2, "%s: exit 2 (%r)" % (label, err))
			t.check(err.count("\n") == 1 and src in err and
				"absolute path" in err and
				"$PWD/" + src in err,
				"%s: one line naming it and asking for the "
				"absolute path: %r" % (label, err))
			t.check(not harness.is_mounted(mnt),
				"%s: nothing mounted" % label)
			harness.force_unmount(mnt)
		# the absolute path goes on (-f: validate only)
		r = run([helper, os.path.join(work, "model.safetensors"), mnt,
			 "-f"], timeout=30, cwd=work)
		t.eq(r.returncode, 0, "%s: an absolute SOURCE is accepted: %r"
		     % (name, r.stderr))
	# stfs itself: the user's working directory, a relative path mounts
	here = os.getcwd()
	os.chdir(work)
	try:
		with harness.Mount(t, "model.safetensors", mnt) as m:
			t.check(os.path.isfile(os.path.join(m.path,
							    "__summary__.json")),
				"stfs model.safetensors (relative): mounted")
	finally:
		os.chdir(here)


def http_tries(t, d):
	mnt = os.path.join(d, "mnt-http")
	os.mkdir(mnt)
	url = "http://127.0.0.1:9/model.safetensors"
	for env, want in (({"STFS_HTTP_RETRIES": "2"}, "STFS_HTTP_TRIES"),
			  ({"STFS_HTTP_TRIES": "0"}, "1 to 100"),
			  ({"STFS_HTTP_TRIES": "101"}, "1 to 100")):
		e = dict(os.environ, STFS_HTTP_TIMEOUT="1", **env)
		for cmd in ([STFS, url, mnt], [STFS_INSPECT, url]):
			label = "%s %s" % (env, os.path.basename(cmd[0]))
			r = run(cmd, timeout=30, env=e)
			err = r.stderr.decode("utf-8", "replace")
			t.eq(r.returncode, 2, "%s: exit 2 (%r)" % (label, err))
			t.check(err.count("\n") == 1 and want in err and
				"UsageError" in err,
				"%s: one line naming %s: %r" % (label, want, err))
		t.check(not harness.is_mounted(mnt), "%s: nothing mounted" % env)
	# the new name with a good value goes on to the (absent) server
	e = dict(os.environ, STFS_HTTP_TIMEOUT="1", STFS_HTTP_TRIES="1")
	r = run([STFS_INSPECT, url], timeout=30, env=e)
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode == 2 and "TRIES" not in err and "127.0.0.1" in err,
		"STFS_HTTP_TRIES=1: accepted, the server is what fails: %r" % err)


def inspect_usage(t):
	for args, label in (([], "no argument"), (["--bogus", "x"], "--bogus"),
			    (["--json"], "--json alone")):
		r = run([STFS_INSPECT] + args, timeout=20)
		err = r.stderr.decode("utf-8", "replace")
		t.eq(r.returncode, 2, "stfs-inspect %s: exit 2" % label)
		t.eq(r.stdout, b"", "stfs-inspect %s: nothing on stdout" % label)
		lines = err.splitlines()
		t.check(any(ln.startswith("usage: stfs-inspect") for ln in lines)
			and "stfs-inspect --help" in lines[-1] and
			len(lines) <= 3, "stfs-inspect %s: a usage line and "
			"`--help`, not the manual: %r" % (label, err))
	r = run([STFS_INSPECT, "--help"], timeout=20)
	t.check(r.returncode == 0 and len(r.stdout.splitlines()) > 30 and
		r.stderr == b"", "stfs-inspect --help: the manual on stdout")


def merge_force(t, d):
	src = os.path.join(d, "m.safetensors")
	harness.gen.gen_sample(src)
	S = harness.SrcFile(src)
	out = os.path.join(d, "out.safetensors")
	with open(out, "wb") as f:
		f.write(b"precious")
	for extra in ([], ["--extract", "h.0"]):
		cmd = [STFS_INSPECT, "--merge" if not extra else extra[0]] + \
			extra[1:] + [src, "-o", out]
		r = run(cmd, timeout=60)
		err = r.stderr.decode("utf-8", "replace")
		t.eq(r.returncode, 2, "%s onto an existing file: exit 2 (%r)"
		     % (cmd[1], err))
		t.check("exists" in err and "--force" in err and out in err and
			err.count("\n") == 1, "%s: one line saying --force: %r"
			% (cmd[1], err))
		t.eq(open(out, "rb").read(), b"precious",
		     "%s without --force: OUT untouched" % cmd[1])
	r = run([STFS_INSPECT, "--merge", src, "-o", out, "--force"], timeout=60)
	err = r.stderr.decode("utf-8", "replace")
	t.eq(r.returncode, 0, "--merge --force: exit 0 (%r)" % err)
	data = open(out, "rb").read()
	ref = run([STFS_INSPECT, "--merge", src, "-o", "-"], timeout=60)
	t.eq(data, ref.stdout, "--merge --force wrote what -o - writes")
	t.eq(sorted(x.name for x in harness.SrcFile(out).tensors),
	     sorted(x.name for x in S.tensors), "--merge: every tensor")
	m = re.match(r"stfs-inspect: wrote (\d+) tensors, (\d+) bytes to (.*)\n$",
		     err)
	t.check(m and int(m.group(1)) == len(S.tensors) and
		int(m.group(2)) == len(data) and m.group(3) == out,
		"--merge says tensors, bytes, path: %r (want %d, %d, %s)"
		% (err, len(S.tensors), len(data), out))
	err = ref.stderr.decode("utf-8", "replace")
	t.check(re.match(r"stfs-inspect: wrote %d tensors, %d bytes to stdout\n$"
			 % (len(S.tensors), len(data)), err),
		"-o -: the same line, on stderr: %r" % err)
	# a new file needs no --force; --quiet says nothing
	new = os.path.join(d, "new.safetensors")
	r = run([STFS_INSPECT, "--quiet", "--extract", "h.0", src, "-o", new],
		timeout=60)
	t.check(r.returncode == 0 and r.stderr == b"" and os.path.isfile(new),
		"--extract to a new file, --quiet: written, nothing said (%r)"
		% r.stderr)


def f32(v):
	return np.asarray(v, dtype="<f4")


def tol_files(d):
	"""Two files whose tensors sit at the edges of allclose's rule."""
	inf, nan = float("inf"), float("nan")
	rnd = np.random.RandomState(40)
	base = rnd.uniform(-2, 2, 300)
	A = {
		"edge.atol": f32([1.0, 4.0]),		# |a-b| = 0.5 exactly
		"edge.rtol": f32([1.0, -3.0]),		# |a-b| = 0.5 |b|
		"edge.rtol.swapped": f32([2.0, -6.0]),	# = |b|: only for big rtol
		"noise": f32(base),
		"nan.same": f32([nan, 1.0, 2.0]),	# same bytes: identical
		"nan.moved": f32([nan, 1.0, 2.0]),
		"inf.same": f32([inf, -inf, 1.0]),
		"inf.flip": f32([inf, 1.0]),
		"ints": np.asarray([1, 2, 3], dtype="<i4"),
		"dtype": f32([0.5, 1.25, -3.0]),
	}
	B = {
		"edge.atol": f32([1.5, 3.5]),
		"edge.rtol": f32([2.0, -6.0]),
		"edge.rtol.swapped": f32([1.0, -3.0]),
		"noise": f32(base + rnd.uniform(-1e-3, 1e-3, 300)),
		"nan.same": f32([nan, 1.0, 2.0]),
		"nan.moved": f32([nan, 1.0, 2.0 + 1e-3]),
		"inf.same": f32([inf, -inf, 1.0 + 1e-3]),
		"inf.flip": f32([-inf, 1.0]),
		"ints": np.asarray([1, 2, 4], dtype="<i4"),
		"dtype": np.asarray([0.5, 1.25, -3.0], dtype="<f8"),
	}
	paths = []
	for tag, T in (("a", A), ("b", B)):
		p = os.path.join(d, "tol-%s.safetensors" % tag)
		harness.gen.write_safetensors(p, [
			(k, {"<f4": "F32", "<f8": "F64", "<i4": "I32"}[v.dtype.str],
			 list(v.shape), v.tobytes()) for k, v in T.items()])
		paths.append(p)
	return paths, A, B


def diff_tolerance(t, d):
	(pa, pb), A, B = tol_files(d)
	cases = [(None, None), (0.5, 0), (0, 0.5), (0, 1.0), (2e-3, 0),
		 (1e-4, 0), (0, 1e-2), (1e-3, 1e-3), (10, 0)]
	for atol, rtol in cases:
		args = []
		if atol is not None:
			args = ["--atol=%r" % atol, "--rtol=%r" % rtol]
		label = "--diff %s" % " ".join(args)
		want_diff = set()
		for k in A:
			a, b = A[k].astype("f8"), B[k].astype("f8")
			if A[k].tobytes() == B[k].tobytes() and \
			   A[k].dtype == B[k].dtype:
				continue
			if atol is None or k == "ints":
				want_diff.add(k)
			elif not np.allclose(a, b, rtol=rtol, atol=atol,
					     equal_nan=False):
				want_diff.add(k)
		r = run([STFS_INSPECT, "--diff", "--json"] + args + [pa, pb],
			timeout=60)
		t.eq(r.returncode, 1 if want_diff else 0, "%s: exit status "
		     "(%r)" % (label, r.stderr))
		j = json.loads(r.stdout.decode())
		got = {c["name"] for c in j["changed"]}
		t.eq(sorted(got), sorted(want_diff), "%s: tensors not close, "
		     "as numpy.allclose says" % label)
		if atol is not None:
			same = sum(1 for k in A if A[k].tobytes() == B[k].tobytes()
				   and A[k].dtype == B[k].dtype)
			t.eq(j.get("close"), len(A) - len(want_diff) - same,
			     "%s: the count of close tensors" % label)
			t.eq((j.get("atol"), j.get("rtol")), (atol, rtol),
			     "%s: atol and rtol said" % label)
		rq = run([STFS_INSPECT, "--diff", "-q"] + args + [pa, pb],
			 timeout=60)
		t.eq((rq.returncode, rq.stdout), (r.returncode, b""),
		     "%s -q: the same exit status, nothing printed" % label)
	r = run([STFS_INSPECT, "--diff", "--atol=1e-3", pa, pb], timeout=60)
	out = r.stdout.decode()
	t.check("not close" in out and "more close" in out,
		"--diff --atol text: says what is not close, and how many "
		"more are: %r" % out)
	for bad in ("--atol=-1", "--rtol=nan", "--atol=x", "--rtol=inf"):
		r = run([STFS_INSPECT, "--diff", bad, pa, pb], timeout=20)
		t.check(r.returncode == 2 and r.stdout == b"" and
			r.stderr.count(b"\n") == 1, "%s: refused in one line: %r"
			% (bad, r.stderr))
	r = run([STFS_INSPECT, "--atol=1", pa], timeout=20)
	t.eq(r.returncode, 2, "--atol without --diff: a usage error")


def stats_exit(t, d):
	clean = os.path.join(d, "clean.safetensors")
	harness.gen.write_safetensors(clean, [("w", "F32", [3],
					       f32([1, 2, 3]).tobytes())])
	nan = os.path.join(d, "nan.safetensors")
	harness.gen.write_safetensors(nan, [("w", "F32", [3],
					     f32([1, float("nan"), 3]).tobytes())])
	broken = os.path.join(d, "broken.safetensors")
	with open(broken, "wb") as f:
		f.write(struct.pack("<Q", 1 << 40) + b"{}")
	for path, want, what in ((clean, 0, "clean"), (nan, 1, "a NaN"),
				 (broken, 2, "an invalid file"),
				 (os.path.join(d, "missing.safetensors"), 2,
				  "a missing file")):
		for extra in ([], ["--json"], ["-q"]):
			r = run([STFS_INSPECT, "--stats"] + extra + [path],
				timeout=60)
			t.eq(r.returncode, want, "--stats %s %s: exit %d (%r)"
			     % (" ".join(extra), what, want, r.stderr))


def json_source(t, d):
	work = os.path.join(d, "src")
	os.makedirs(work)
	harness.gen.gen_sample(os.path.join(work, "one.safetensors"))
	idx, _ = gen_sharded.write_sharded(os.path.join(work, "set"), [
		("w%d" % i, "F32", [4], f32([i, i, i, i]).tobytes())
		for i in range(6)], 3)
	cases = [("one.safetensors", os.path.join(work, "one.safetensors")),
		 ("set", idx), ("set/", idx)]
	for arg, want in cases:
		a = run([STFS_INSPECT, "--json", arg], cwd=work, timeout=60)
		b = run([STFS_INSPECT, "--stats", "--json", arg], cwd=work,
			timeout=60)
		ja = json.loads(a.stdout.decode()) if a.returncode == 0 else {}
		jb = json.loads(b.stdout.decode()) if b.returncode == 0 else {}
		t.eq(ja.get("source"), want, "--json %s: source absolute" % arg)
		t.eq(jb.get("source"), want, "--stats --json %s: the same source"
		     % arg)
		mnt = os.path.join(d, "mnt-src")
		os.makedirs(mnt, exist_ok=True)
		here = os.getcwd()
		os.chdir(work)
		try:
			with harness.Mount(t, arg, mnt) as m:
				with open(os.path.join(m.path,
						       "__summary__.json")) as f:
					summ = json.load(f)
		finally:
			os.chdir(here)
		t.eq(summ.get("source"), want, "the mount of %s: "
		     "__summary__.json source as --json's" % arg)


def unescape_tsv(field):
	return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n", "r": "\r",
					    "\\": "\\"}[m.group(1)], field)


def formats(t, d):
	src = os.path.join(d, "odd.safetensors")
	names = harness.gen.ODD_NAMES + ["cr\rx", "comma,name", "q\"uote"]
	names = [n for n in names if len(n) < 1000]
	harness.gen.write_safetensors(src, [(n, "U8", [1 + i % 5], bytes(
		1 + i % 5)) for i, n in enumerate(names)])
	j = json.loads(run([STFS_INSPECT, "--json", "--tensors", "--group=1",
			    src], timeout=60).stdout.decode())
	want = [[x["name"], x["dtype"], x["shape"], x["bytes"], x["offset"],
		 x["data_offsets"]] for x in j["tensor_list"]]
	wantg = [[g["group"], g["tensors"], g["parameters"], g["bytes"]]
		 for g in j["groups"]]
	for fmt in ("tsv", "csv"):
		r = run([STFS_INSPECT, "--format=" + fmt, src], timeout=60)
		t.eq(r.returncode, 0, "--format=%s: exit 0 (%r)" % (fmt, r.stderr))
		text = r.stdout.decode("utf-8")
		if fmt == "tsv":
			lines = text.split("\n")
			t.eq(lines[-1], "", "tsv: ends with a newline")
			rows = [[unescape_tsv(f) for f in ln.split("\t")]
				for ln in lines[:-1]]
		else:
			rows = list(csv.reader(io.StringIO(text, newline="")))
		t.eq(rows[0], ["name", "dtype", "shape", "parameters", "bytes",
			       "offset", "data_begin", "data_end", "shard"],
		     "--format=%s: the header row" % fmt)
		got = [[r_[0], r_[1], json.loads(r_[2]), int(r_[4]), int(r_[5]),
			[int(r_[6]), int(r_[7])]] for r_ in rows[1:]]
		t.eq(got, want, "--format=%s: the rows of --json's tensor_list, "
		     "names exact" % fmt)
		t.check(all(int(r_[3]) == int(np.prod(json.loads(r_[2])))
			    for r_ in rows[1:]), "--format=%s: parameters" % fmt)
		r = run([STFS_INSPECT, "--format", fmt, "--group=1", src],
			timeout=60)
		text = r.stdout.decode("utf-8")
		rows = [[unescape_tsv(f) for f in ln.split("\t")]
			for ln in text.split("\n")[:-1]] if fmt == "tsv" else \
			list(csv.reader(io.StringIO(text, newline="")))
		t.eq(rows[0], ["group", "tensors", "parameters", "bytes"],
		     "--format=%s --group: the header row" % fmt)
		t.eq([[g, int(a), int(b), int(c)] for g, a, b, c in rows[1:]],
		     wantg, "--format=%s --group: the rows of --json's groups"
		     % fmt)
	# a tree: one table, a "model" column first
	tree = os.path.join(d, "tree")
	os.makedirs(tree)
	harness.gen.gen_sample(os.path.join(tree, "a.safetensors"))
	harness.gen.gen_sample(os.path.join(tree, "b.safetensors"))
	r = run([STFS_INSPECT, "--format=tsv", tree], timeout=60)
	rows = [ln.split("\t") for ln in r.stdout.decode().splitlines()]
	t.eq(rows[0][:2], ["model", "name"], "tree: a model column first")
	t.eq(sorted({r_[0] for r_ in rows[1:]}), [tree + "/a", tree + "/b"],
	     "tree: each row names its model")
	for bad in (["--format=xml", src], ["--format=tsv", "--json", src],
		    ["--format=tsv", "--tensors", "--group", src],
		    ["--format=tsv", "--stats", src]):
		r = run([STFS_INSPECT] + bad, timeout=20)
		t.check(r.returncode == 2 and r.stdout == b"",
			"%s: a usage error (%r)" % (" ".join(bad[:-1]), r.stderr))


def pt_only(t, d):
	import torch
	folder = os.path.join(d, "ptonly")
	os.mkdir(folder)
	pt = os.path.join(folder, "ckpt.pt")
	torch.save({"w": torch.arange(6, dtype=torch.float32)}, pt)
	mnt = os.path.join(d, "mnt-pt")
	os.mkdir(mnt)
	for cmd in ([STFS_INSPECT, folder], [STFS_INSPECT, folder + "/"],
		    [STFS_INSPECT, "--merge", folder, "-o", "-"],
		    [STFS, folder, mnt]):
		r = run(cmd, timeout=60)
		err = r.stderr.decode("utf-8", "replace")
		label = " ".join(os.path.basename(c) for c in cmd)
		t.eq(r.returncode, 2, "%s: exit 2" % label)
		t.check(err.count("\n") == 1 and "ckpt.pt" in err and
			"own path" in err and pt in err, "%s: one line saying "
			"that a .pt mounts by its own path: %r" % (label, err))
	t.check(not harness.is_mounted(mnt), "the .pt-only folder: nothing "
		"mounted")
	r = run([STFS_INSPECT, "--json", pt], timeout=60)
	t.eq(r.returncode, 0, "the path the message names opens (%r)"
	     % r.stderr)
	r = run([STFS_INSPECT, os.path.join(d, "no-such-dir") + "/"],
		timeout=20)
	err = r.stderr.decode()
	t.check(r.returncode == 2 and "No such file" in err and
		"memory" not in err, "a missing directory/: cannot open, not "
		"out of memory: %r" % err)


def run_(t):
	d = harness.tmpdir("cli")
	stfs_help(t)
	helper_relative(t, d)
	if b"http_tries" in run([STFS, "--help"]).stdout:
		http_tries(t, d)
	inspect_usage(t)
	merge_force(t, d)
	diff_tolerance(t, d)
	stats_exit(t, d)
	json_source(t, d)
	formats(t, d)
	pt_only(t, d)


harness.main("int-cli", run_)
