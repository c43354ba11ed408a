#!/usr/bin/env python3
"""int-busy: no request pins the filesystem (issue 22.4).

A model served by httpd.py on 127.0.0.1, which then holds every body
(srv.hang).  Ten readers of .stats/ files start computations that cannot
finish; while they are provably still blocked (the server has not let a
byte go), `ls -l` of the mount, stat of its files and a small read must
answer.  A reader of the sha256 xattr and a reader of a .stats/ file,
killed with SIGINT, leave while the server still holds the bodies.  Then
the server lets go, and every .stats/ file and sha256 is compared with
numpy and hashlib (also the two whose readers left).  Last, with the
server holding again, a .stats/ reader that handles a signal (SIGUSR1)
gets EINTR: its read reached the mount as a request the kernel
interrupts, not as readahead, which it never does (so the computation of
a reader who left went on: issue 30).

No timing is asserted: "blocked" is proven by the server's own count of
the requests it holds, and every wait has a generous bound.
"""

import hashlib
import json
import os
import select
import signal
import struct
import subprocess
import sys
import time

import numpy as np

import harness
import httpd

N = 10			# .stats/ readers
ELEMS = 1 << 18		# 1 MiB of F32 per tensor
PAD = 8 << 20		# a first tensor the mount's header read cannot reach past


def write_model(path):
	"""pad (U8), sig, t0..t9 (F32, 1 MiB each), sha (F32): name -> array.
	sig comes first: reading the others never reads ahead into it."""
	rng = np.random.default_rng(22)
	arrays = {"pad": np.zeros(PAD, np.uint8)}
	arrays["sig"] = rng.standard_normal(ELEMS).astype("<f4")
	for i in range(N):
		arrays["t%d" % i] = rng.standard_normal(ELEMS).astype("<f4") * (i + 1)
	arrays["sha"] = rng.standard_normal(ELEMS).astype("<f4")
	header, off = {}, 0
	for name, a in arrays.items():
		header[name] = {"dtype": "U8" if a.dtype == np.uint8 else "F32",
				"shape": [a.size], "data_offsets": [off, off + a.nbytes]}
		off += a.nbytes
	h = json.dumps(header).encode()
	h += b" " * (-len(h) % 8)
	with open(path, "wb") as f:
		f.write(struct.pack("<Q", len(h)) + h)
		for a in arrays.values():
			f.write(a.tobytes())
	return arrays


def wait_for(cond, what, t, bound=30.0):
	deadline = time.monotonic() + bound
	while not cond():
		if time.monotonic() > deadline:
			t.fatal("%s: not after %.0f s" % (what, bound))
		time.sleep(0.02)


def sigint_leaves(t, p, srv, what):
	p.send_signal(signal.SIGINT)
	try:
		p.wait(timeout=15)
	except subprocess.TimeoutExpired:
		t.check(False, "%s: still waiting 15 s after SIGINT" % what)
		return
	t.check(srv.hang and srv.waiting > 0,
		"%s: left while the server still held the bodies" % what)
	t.check(p.returncode != 0, "%s: ended by the signal (status %s)"
		% (what, p.returncode))


def in_read(pid):
	"""pid is blocked in read(2) (x86-64's syscall 0)"""
	try:
		with open("/proc/%d/syscall" % pid) as f:
			return f.read().split()[0] == "0"
	except (OSError, IndexError):
		return False


# A reader that handles SIGUSR1: exit 3 when it interrupted the read.
SIG_READER = """import signal, sys
class Left(Exception):
	pass
def left(signum, frame):
	raise Left()
signal.signal(signal.SIGUSR1, left)
sys.stdout.write("ready\\n")
sys.stdout.flush()
try:
	with open(sys.argv[1], "rb") as f:
		f.read()
except Left:
	sys.exit(3)
"""


def handled_signal_leaves(t, mnt, srv, arrays, procs):
	wait_for(lambda: srv.waiting == 0, "the held requests answered", t)
	srv.hang = True
	# a request still held from before (a late read-ahead) is not the
	# reader's: count from here, and only once its handler is installed
	# (a signal before that kills it: status -SIGUSR1)
	before = srv.waiting
	path = os.path.join(mnt, ".stats", "sig.json")
	p = subprocess.Popen([sys.executable, "-c", SIG_READER, path],
			     stdout=subprocess.PIPE)
	procs.append(p)
	ready = select.select([p.stdout], [], [], 30)[0]
	t.check(ready and p.stdout.readline() == b"ready\n",
		"the sig.json reader installed its handler")
	wait_for(lambda: srv.waiting > before, "the sig.json reader's request",
		 t)
	# and the reader in its read(2): a late read-ahead can raise
	# srv.waiting first, and a signal while it still writes "ready"
	# raised Left outside its try (status 1; seen under ASan)
	wait_for(lambda: in_read(p.pid), "the sig.json reader in read(2)", t)
	p.send_signal(signal.SIGUSR1)
	try:
		p.wait(timeout=15)
	except subprocess.TimeoutExpired:
		t.check(False, "a .stats/ reader still in its read 15 s after a "
			"signal it handles (readahead is never interrupted)")
		return
	t.eq(p.returncode, 3, "the .stats/ read was interrupted (EINTR) "
	     "while the server held the bodies")
	srv.hang = False
	with open(path, "rb") as f:
		check_stats(t, json.loads(f.read()), arrays["sig"], "sig")


def want_stats(a):
	v = a.astype(np.float64)
	return {"count": v.size, "min": v.min(), "max": v.max(),
		"mean": v.mean(), "std": v.std()}


def check_stats(t, got, a, name):
	w = want_stats(a)
	t.eq(got["count"], w["count"], "%s: count" % name)
	t.eq(got["min"], w["min"], "%s: min" % name)
	t.eq(got["max"], w["max"], "%s: max" % name)
	for k in ("mean", "std"):
		t.check(abs(got[k] - w[k]) <= 1e-9 * abs(w[k]) + 1e-12,
			"%s: %s %r, numpy %r" % (name, k, got[k], w[k]))


def run(t):
	d = harness.tmpdir("busy")
	www = os.path.join(d, "www")
	os.makedirs(www)
	arrays = write_model(os.path.join(www, "m.safetensors"))
	env = dict(os.environ)
	env["STFS_CACHE"] = "off"
	procs = []
	with httpd.Server(www) as srv:
		with harness.Mount(t, srv.url("m.safetensors"),
				   args=["-o", "http_timeout=30"], env=env) as m:
			try:
				main(t, m.path, srv, arrays, procs)
			finally:
				srv.hang = False
				for p in procs:
					if p.poll() is None:
						p.kill()
					p.wait()


def main(t, mnt, srv, arrays, procs):
	stats = os.path.join(mnt, ".stats")
	srv.hang = True
	# the sha256 reader first, alone: the request it holds is its own
	sha = subprocess.Popen(
		[sys.executable, "-c", "import os, sys\n"
		 "print(os.getxattr(sys.argv[1], 'user.safetensors.sha256'))",
		 os.path.join(mnt, "sha")],
		stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
	procs.append(sha)
	wait_for(lambda: srv.waiting >= 1, "the sha256 reader's request", t)
	readers = []
	for i in range(N):
		p = subprocess.Popen(["cat", os.path.join(stats, "t%d.json" % i)],
				     stdout=subprocess.PIPE,
				     stderr=subprocess.DEVNULL)
		procs.append(p)
		readers.append(p)
	wait_for(lambda: srv.waiting >= 2, "a .stats/ reader's request", t)

	# the mount answers while they are all blocked
	r = harness.run(["ls", "-l", mnt, stats], timeout=30)
	t.eq(r.returncode, 0, "ls -l of the mount and .stats/ while %d "
	     ".stats/ readers wait" % N)
	t.check(b"t9.json" in r.stdout, "ls -l lists .stats/")
	st = os.stat(os.path.join(mnt, "t3"))
	t.eq(st.st_size, ELEMS * 4, "stat of a tensor file")
	os.stat(mnt)
	with open(os.path.join(mnt, "t3.json"), "rb") as f:
		side = json.loads(f.read())
	t.eq(side.get("dtype"), "F32", "a small read (the sidecar)")
	t.check(srv.hang and all(p.poll() is None for p in readers),
		"the .stats/ readers were still blocked all that time")

	# Ctrl-C ends a wait: the sha256 reader, and a .stats/ reader
	sigint_leaves(t, sha, srv, "the sha256 xattr reader")
	t.eq(sha.stdout.read(), b"", "the interrupted sha256 reader got no value")
	sigint_leaves(t, readers[0], srv, "a .stats/ reader")

	# let go: every value, compared with numpy and hashlib
	srv.hang = False
	for i, p in enumerate(readers[1:], 1):
		out, _ = p.communicate(timeout=120)
		t.eq(p.returncode, 0, "the reader of t%d.json" % i)
		check_stats(t, json.loads(out), arrays["t%d" % i], "t%d" % i)
	with open(os.path.join(stats, "t0.json"), "rb") as f:
		check_stats(t, json.loads(f.read()), arrays["t0"], "t0 again")
	for name in ("sha", "t1"):
		got = os.getxattr(os.path.join(mnt, name), "user.safetensors.sha256")
		t.eq(got.decode(), hashlib.sha256(arrays[name].tobytes()).hexdigest(),
		     "sha256 of %s" % name)
	with open(os.path.join(mnt, "t5"), "rb") as f:
		t.check(f.read() == arrays["t5"].tobytes(), "t5 byte-exact")
	handled_signal_leaves(t, mnt, srv, arrays, procs)


if __name__ == "__main__":
	harness.main("int-busy", run)
