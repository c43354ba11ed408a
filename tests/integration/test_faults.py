#!/usr/bin/env python3
"""int-faults: faults under a live mount, and hostile inputs.

Cases (each runs on its own; STFS_FAULTS=case,case selects some):
  truncate     the source is truncated while mounted: every read of it fails
               with EIO from then on (never zeros, never a short read, also
               before the cut and after the bytes come back: the file
               changed), the daemon survives, ls answers, a remount reads
  rename       the source is replaced by rename (then unlinked): the mount
               keeps serving the old bytes
  concurrent   6 processes read random ranges of random tensors (pread,
               mmap, whole files) for STFS_FAULTS_SECONDS (10): every byte
               equals the source; the daemon's descriptors stay bounded
  cycles       32 mount/unmount cycles (fusermount3 -u, umount, SIGTERM,
               SIGINT) plus background-mode ones: no leaked mount or process
  signals      SIGTERM / SIGINT / SIGHUP while a reader is busy: the daemon
               exits 0, the mount is gone, the reader does not hang
  mountpoint   already mounted, not a directory, no permission: a clear
               error, exit status non-zero, nothing (more) mounted
  permissions  default: only the mounting user enters; -o allow_other: other
               users read as the source file's mode allows
  hostile      truncated files, header at and over the limit, deep nesting,
               huge shapes, 10^6 tiny tensors, 64 KiB names, control bytes,
               shard names escaping the index's directory, FIFOs and devices
               as sources: refused cleanly or served correctly, in bounded
               time and memory (daemon RSS from /proc/PID/status)
Run as root with /dev/fuse (unprivileged parts use setpriv to uid nobody).
"""

import errno
import json
import mmap
import os
import random
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import traceback

import harness
from harness import STFS, STFS_INSPECT, gen, run

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_sharded  # noqa: E402
import flood  # noqa: E402

NOBODY = 65534
PAGE = 4096
SECONDS = float(os.environ.get("STFS_FAULTS_SECONDS", "10"))


# ---- helpers ------------------------------------------------------------------

def write_model(path, spec, seed):
	"""Write [(name, dtype, shape)] with random bytes; returns SrcFile."""
	rng = random.Random(seed)
	ts = [(name, dt, shape, rng.randbytes(gen.nbytes_of(dt, shape)))
	      for name, dt, shape in spec]
	gen.write_safetensors(path, ts, {"format": "pt"})
	return harness.SrcFile(path)


def fname(x):
	return harness.encode_name(x.name)


def read_all(path, chunk=1 << 20):
	"""Whole file through read(2): (bytes, None) or (bytes so far, errno)."""
	fd = os.open(path, os.O_RDONLY)
	out = []
	try:
		while True:
			try:
				b = os.read(fd, chunk)
			except OSError as e:
				return b"".join(out), e.errno
			if not b:
				return b"".join(out), None
			out.append(b)
	finally:
		os.close(fd)


def pread_err(path, n, off):
	fd = os.open(path, os.O_RDONLY)
	try:
		return os.pread(fd, n, off), None
	except OSError as e:
		return None, e.errno
	finally:
		os.close(fd)


def uncache(path):
	"""Drop one file's page cache (not the whole machine's) so that the
	next read goes to the daemon again."""
	try:
		fd = os.open(path, os.O_RDONLY)
	except OSError:
		return
	try:
		os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	except OSError:
		pass
	finally:
		os.close(fd)


def proc_status(pid):
	"""{'VmRSS': kB, 'VmHWM': kB, 'Threads': n} of a process."""
	res = {}
	try:
		with open("/proc/%d/status" % pid) as f:
			for line in f:
				k, _, v = line.partition(":")
				if k in ("VmRSS", "VmHWM", "Threads"):
					res[k] = int(v.split()[0])
	except OSError:
		pass
	return res


def nfds(pid):
	try:
		return len(os.listdir("/proc/%d/fd" % pid))
	except OSError:
		return -1


def as_nobody(cmd, gid=NOBODY):
	return ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % gid,
		"--clear-groups", "--"] + cmd


def public_dir(tag):
	"""A temporary directory other users may enter."""
	d = harness.tmpdir(tag)
	os.chmod(d, 0o755)
	return d


def errname(e):
	return errno.errorcode.get(e, str(e)) if e else "no error"


def mount_count(path):
	real = os.path.realpath(path)
	return sum(1 for m in harness.mountinfo() if m[0] == real)


def kill_strays(t, mnt, keep=()):
	"""Unmount everything at mnt and kill daemons naming it (cleanup after
	a failed check, so later cases start clean)."""
	for _ in range(4):
		if not harness.is_mounted(mnt):
			break
		harness.force_unmount(mnt)
	for pid in harness.daemon_pids(mnt):
		if pid in keep:
			continue
		try:
			os.kill(pid, signal.SIGKILL)
		except OSError:
			pass
		harness.wait_gone(pid, 5)


def no_leftovers(t, root, label):
	real = os.path.realpath(root)
	left = [m[0] for m in harness.mountinfo()
		if m[0] == real or m[0].startswith(real + "/")]
	t.eq(left, [], "%s: no mount left under %s" % (label, root))
	for mp in left:
		kill_strays(t, mp)


# ---- truncate ---------------------------------------------------------------------

def case_truncate(t):
	d = harness.tmpdir("trunc")
	src = os.path.join(d, "model.safetensors")
	spec = [("t%02d" % i, "U8", [256 * 1024 + 4096 * i + 13]) for i in range(10)]
	S = write_model(src, spec, 1)
	with open(src, "rb") as f:
		orig = f.read()
	ts = S.tensors
	k = len(ts) // 2
	victim = ts[k]
	cut = victim.offset + victim.nbytes // 2
	with harness.Mount(t, src) as m:
		mnt = m.path
		P = lambda x: os.path.join(mnt, fname(x))	# noqa: E731
		listing = sorted(os.listdir(mnt))
		# read a few before the cut, so some pages are cached
		for x in ts[:2]:
			data, err = read_all(P(x))
			t.check(err is None and data == S.read(x),
				"truncate: %s readable before the cut" % x.name)
		os.truncate(src, cut)

		for x in ts[k + 1:]:
			data, err = read_all(P(x))
			t.eq(errname(err), "EIO", "truncate: read of %s (wholly past "
			     "the new end) fails with EIO, got %d bytes" % (x.name,
									 len(data)))
			got, err = pread_err(P(x), 100, x.nbytes // 2)
			t.eq(errname(err), "EIO", "truncate: pread in the middle of %s "
			     "fails with EIO (got %r)" % (x.name, got and len(got)))
		# the tensor the cut goes through: a whole read fails, it is
		# never silently shorter; its pages well before the cut read
		data, err = read_all(P(victim))
		t.eq(errname(err), "EIO", "truncate: whole read of the tensor the "
		     "cut splits fails with EIO (not a short read: got %d of %d "
		     "bytes)" % (len(data), victim.nbytes))
		t.check(len(data) < victim.nbytes, "truncate: never all of a "
			"split tensor's bytes")
		t.check(data == orig[victim.offset:victim.offset + len(data)],
			"truncate: the bytes returned before the error are the "
			"source's")
		# The source changed: no read of it may succeed any more, not
		# even of bytes that are still there (issue 14: never two
		# versions in one file), and the kernel's cached pages of its
		# files are dropped (ts[:2] were cached before the cut).
		rel = cut - victim.offset
		ok = (rel // PAGE - 2) * PAGE
		if ok > 0:
			got, err = pread_err(P(victim), ok, 0)
			t.eq(errname(err), "EIO", "truncate: the first %d bytes of the "
			     "split tensor (before the cut) fail too" % ok)
		for x in ts[2:k]:
			data, err = read_all(P(x))
			t.eq(errname(err), "EIO", "truncate: %s (before the cut) "
			     "fails after the truncation (got %d bytes)"
			     % (x.name, len(data)))
		# ts[:2] were cached: a helper thread drops those pages soon
		# after the change was seen (until then a read gets the old
		# bytes whole: still one version)
		for x in ts[:2]:
			deadline = time.monotonic() + 10
			while True:
				data, err = read_all(P(x))
				if err or time.monotonic() > deadline:
					break
				t.check(data == S.read(x), "truncate: cached %s "
					"reads the old bytes whole" % x.name)
				time.sleep(0.05)
			t.eq(errname(err), "EIO", "truncate: %s (cached before the "
			     "cut) fails once its pages are dropped" % x.name)
		t.eq(os.stat(P(ts[-1])).st_size, ts[-1].nbytes,
		     "truncate: st_size of a tensor past the cut is unchanged")
		t.eq(sorted(os.listdir(mnt)), listing, "truncate: listing unchanged")
		r = run(["ls", "-la", mnt])
		t.check(r.returncode == 0 and b"__summary__.json" in r.stdout,
			"truncate: ls -la answers: %r" % r.stderr)
		for f in ("__summary__.json", fname(ts[-1]) + ".json"):
			data, err = read_all(os.path.join(mnt, f))
			t.check(err is None and json.loads(data.decode()),
				"truncate: %s (generated) still reads" % f)
		t.check(m.proc.poll() is None, "truncate: the daemon survives")

		# down to nothing
		os.truncate(src, 0)
		uncache(P(ts[0]))
		data, err = read_all(P(ts[0]))
		t.eq(errname(err), "EIO", "truncate to 0: the first tensor fails "
		     "with EIO (got %d bytes)" % len(data))
		t.eq(sorted(os.listdir(mnt)), listing, "truncate to 0: ls answers")
		t.check(m.proc.poll() is None, "truncate to 0: the daemon survives")

		# the bytes come back: still a changed file, still EIO
		with open(src, "r+b") as f:
			f.write(orig)
		for x in (ts[0], ts[-1], victim):
			uncache(P(x))
			data, err = read_all(P(x))
			t.eq(errname(err), "EIO", "truncate: %s still fails once the "
			     "bytes are written back (got %d bytes)" % (x.name,
									len(data)))
		t.eq(os.stat(P(ts[-1])).st_size, ts[-1].nbytes,
		     "truncate: st_size unchanged at the end")
	with open(m.logpath, "rb") as f:
		log = f.read().decode("utf-8", "replace")
	t.eq(log.count("changed while mounted"), 1, "truncate: the change is "
	     "logged once: %r" % log[-400:])
	# a new mount of the restored file reads it
	with harness.Mount(t, src) as m:
		for x in (ts[0], victim):
			data, err = read_all(os.path.join(m.path, fname(x)))
			t.check(err is None and data == S.read(x), "truncate: %s "
				"reads after a remount: %s" % (x.name, errname(err)))


# ---- rename ---------------------------------------------------------------------

def case_rename(t):
	d = harness.tmpdir("rename")
	src = os.path.join(d, "model.safetensors")
	spec = [("w%d" % i, "F32", [1000 + 97 * i]) for i in range(8)]
	S = write_model(src, spec, 2)
	keep = os.path.join(d, "orig.bak")
	shutil.copyfile(src, keep)
	Sk = harness.SrcFile(keep)
	with harness.Mount(t, src) as m:
		mnt = m.path
		listing = sorted(os.listdir(mnt))
		with open(os.path.join(mnt, fname(S.tensors[0])), "rb") as f:
			t.check(f.read() == Sk.read(Sk.tensors[0]),
				"rename: first read before the replacement")
		# same names, other shapes and bytes: every offset moves
		new = src + ".new"
		write_model(new, [("w%d" % i, "U8", [50 + i]) for i in range(8)] +
			    [("extra", "F64", [3])], 3)
		os.rename(new, src)
		for label in ("after rename", "after unlink"):
			for x in Sk.tensors:
				p = os.path.join(mnt, fname(x))
				uncache(p)
				data, err = read_all(p)
				t.check(err is None and data == Sk.read(x),
					"rename: %s: %s serves the old bytes (%s, %d of %d "
					"bytes)" % (label, x.name, errname(err), len(data),
						    x.nbytes))
			t.eq(sorted(os.listdir(mnt)), listing,
			     "rename: %s: listing unchanged" % label)
			with open(os.path.join(mnt, fname(Sk.tensors[3]) + ".json")) as f:
				t.eq(json.load(f)["shape"], Sk.tensors[3].shape,
				     "rename: %s: sidecar unchanged" % label)
			t.check(m.proc.poll() is None, "rename: %s: daemon alive" % label)
			if label == "after rename":
				os.unlink(src)


# ---- concurrent readers ----------------------------------------------------------------

def reader_child(i, wfd, src, mnt, tensors, seconds):
	rng = random.Random(1000 + i)
	mode = ("pread", "mmap", "whole")[i % 3]
	srcfd = os.open(src, os.O_RDONLY)
	fds = {}
	maps = {}
	reads = nbytes = 0
	errs = []
	deadline = time.monotonic() + seconds
	sizes = [1, 3, 7, 512, PAGE, PAGE + 1, 65536, 131072 + 5, 1 << 20]
	try:
		while time.monotonic() < deadline and len(errs) < 5:
			x = rng.choice(tensors)
			p = os.path.join(mnt, fname(x))
			if x.nbytes == 0:
				data, err = read_all(p)
				if err or data:
					errs.append("%s: empty tensor read %d bytes, %s"
						    % (x.name, len(data), errname(err)))
				continue
			off = rng.randrange(x.nbytes)
			n = rng.choice(sizes + [x.nbytes])
			want = os.pread(srcfd, min(n, x.nbytes - off), x.offset + off)
			if mode == "pread":
				if x.name not in fds or rng.random() < 0.05:
					if x.name in fds:
						os.close(fds.pop(x.name))
					fds[x.name] = os.open(p, os.O_RDONLY)
				fd = fds[x.name]
				got = os.pread(fd, n, off)
				if rng.random() < 0.1:
					os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
			elif mode == "mmap":
				if x.name not in maps:
					fd = os.open(p, os.O_RDONLY)
					maps[x.name] = mmap.mmap(fd, x.nbytes,
								 prot=mmap.PROT_READ)
					os.close(fd)
				got = maps[x.name][off:off + n]
			else:
				off, want = 0, None
				data, err = read_all(p, rng.choice([PAGE, 65536, 1 << 20]))
				if err:
					errs.append("%s: whole read: %s" % (x.name,
									   errname(err)))
					continue
				got = data
				want = os.pread(srcfd, x.nbytes, x.offset)
				uncache(p)
			reads += 1
			nbytes += len(got)
			if got != want:
				j = next((k for k in range(min(len(got), len(want)))
					  if got[k] != want[k]), min(len(got), len(want)))
				errs.append("%s (%s): %d bytes at %d: got %d bytes, first "
					    "difference at +%d" % (x.name, mode, n, off,
								   len(got), j))
	except Exception as e:
		errs.append("%s: %s" % (mode, traceback.format_exc(limit=3) or e))
	os.write(wfd, json.dumps({"reads": reads, "bytes": nbytes, "mode": mode,
				  "errors": errs}).encode())
	os.close(wfd)
	os._exit(1 if errs else 0)


def case_concurrent(t):
	d = harness.tmpdir("conc")
	src = os.path.join(d, "model.safetensors")
	rng = random.Random(4)
	spec = [("empty", "F32", [0, 4]), ("one", "U8", [1]), ("three", "U8", [3]),
		("scalar", "F64", [])]
	for i in range(24):
		dt = rng.choice(["U8", "F32", "BF16", "I64"])
		bits = dict(gen.DTYPES)[dt]
		n = rng.randrange(1, 3 << 20) * 8 // bits
		spec.append(("layers.%d.w" % i, dt, [n]))
	S = write_model(src, spec, 5)
	nproc = 6
	with harness.Mount(t, src) as m:
		pid = m.proc.pid
		base_fds = nfds(pid)
		kids = []
		for i in range(nproc):
			r, w = os.pipe()
			child = os.fork()
			if child == 0:
				os.close(r)
				try:
					reader_child(i, w, src, m.path, S.tensors, SECONDS)
				finally:
					os._exit(3)
			os.close(w)
			kids.append((child, r))
		peak_fds = peak_threads = 0
		deadline = time.monotonic() + SECONDS + 60
		alive = set(k[0] for k in kids)
		status = {}
		while alive and time.monotonic() < deadline:
			peak_fds = max(peak_fds, nfds(pid))
			peak_threads = max(peak_threads, proc_status(pid).get("Threads", 0))
			for c in list(alive):
				p, st = os.waitpid(c, os.WNOHANG)
				if p:
					status[c] = st
					alive.discard(c)
			time.sleep(0.2)
		for c in alive:
			os.kill(c, signal.SIGKILL)
			os.waitpid(c, 0)
			t.check(False, "concurrent: reader %d hung" % c)
		total_reads = total_bytes = 0
		for c, r in kids:
			raw = b""
			while True:
				b = os.read(r, 65536)
				if not b:
					break
				raw += b
			os.close(r)
			rep = json.loads(raw.decode() or "{}")
			total_reads += rep.get("reads", 0)
			total_bytes += rep.get("bytes", 0)
			t.check(status.get(c) == 0 and not rep.get("errors"),
				"concurrent: reader %s (%s) saw only the source's bytes: %s"
				% (c, rep.get("mode"), rep.get("errors")))
		t.check(total_reads > 100, "concurrent: readers made progress "
			"(%d reads)" % total_reads)
		t.check(m.proc.poll() is None, "concurrent: daemon alive")
		t.note("concurrent: %d processes, %d reads, %.1f MiB in %.0f s; "
		       "daemon fds %d at start, peak %d; peak threads %d"
		       % (nproc, total_reads, total_bytes / 2**20, SECONDS,
			  base_fds, peak_fds, peak_threads))
		# descriptors must not grow with the number of opens
		time.sleep(1)
		after1 = nfds(pid)
		for i in range(500):
			x = S.tensors[i % len(S.tensors)]
			with open(os.path.join(m.path, fname(x)), "rb") as f:
				f.read(16)
		time.sleep(1)
		after2 = nfds(pid)
		t.check(after2 <= after1 + 2, "concurrent: daemon descriptors do not "
			"grow with opens (%d before 500 opens, %d after)"
			% (after1, after2))
		t.check(peak_fds < 200, "concurrent: daemon descriptors bounded "
			"(peak %d)" % peak_fds)


# ---- mount/unmount cycles -----------------------------------------------------------

def case_cycles(t):
	d = harness.tmpdir("cyc")
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	S = harness.SrcFile(harness.SAMPLE)
	x = S.tensors[len(S.tensors) // 2]
	want = S.read(x)
	ways = ["fusermount", "umount", "SIGTERM", "SIGINT"]
	t0 = time.monotonic()
	n = 32
	for i in range(n):
		how = ways[i % len(ways)]
		m = harness.Mount(t, harness.SAMPLE, mnt).start()
		with open(os.path.join(mnt, fname(x)), "rb") as f:
			t.check(f.read() == want, "cycle %d: bytes" % i)
		if how == "umount":
			r = run(["umount", mnt], timeout=30)
			t.eq(r.returncode, 0, "cycle %d: umount: %r" % (i, r.stderr))
		elif how.startswith("SIG"):
			m.proc.send_signal(getattr(signal, how))
			try:
				m.proc.wait(timeout=10)
			except subprocess.TimeoutExpired:
				t.check(False, "cycle %d: daemon alive 10 s after %s"
					% (i, how))
			t.check(not harness.is_mounted(mnt), "cycle %d: %s unmounted"
				% (i, how))
		rc = m.unmount()
		t.eq(rc, 0, "cycle %d (%s): daemon exit status" % (i, how))
		t.eq(mount_count(mnt), 0, "cycle %d (%s): nothing mounted" % (i, how))
	fg = time.monotonic() - t0
	# background mode: the real use
	t0 = time.monotonic()
	nb = 8
	for i in range(nb):
		r = run([STFS, harness.SAMPLE, mnt], timeout=30)
		if not t.eq(r.returncode, 0, "bg cycle %d: stfs exit status (%r)"
			    % (i, r.stderr)):
			kill_strays(t, mnt)
			continue
		pids = harness.daemon_pids(mnt)
		t.eq(len(pids), 1, "bg cycle %d: one daemon" % i)
		with open(os.path.join(mnt, fname(x)), "rb") as f:
			t.check(f.read() == want, "bg cycle %d: bytes" % i)
		if i % 2:
			for p in pids:
				os.kill(p, signal.SIGTERM)
		else:
			harness.fusermount_u(mnt)
		for p in pids:
			t.check(harness.wait_gone(p, 10), "bg cycle %d: daemon %d "
				"exits" % (i, p))
		t.eq(mount_count(mnt), 0, "bg cycle %d: nothing mounted" % i)
	bg = time.monotonic() - t0
	t.eq(harness.daemon_pids(mnt), [], "cycles: no stfs process left")
	no_leftovers(t, d, "cycles")
	t.note("cycles: %d foreground cycles in %.1f s (%.0f ms each), %d "
	       "background cycles in %.1f s" % (n, fg, 1000 * fg / n, nb, bg))


# ---- signals mid-read ---------------------------------------------------------------

READER = r"""
import errno, os, sys
p = sys.argv[1]
passes = 0
try:
	while True:
		fd = os.open(p, os.O_RDONLY)
		while os.read(fd, 1 << 20):
			pass
		os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
		os.close(fd)
		passes += 1
		sys.stdout.write("pass\n")
		sys.stdout.flush()
except OSError as e:
	print("stopped after %d passes: %s" % (passes, errno.errorcode.get(e.errno)))
"""


def case_signals(t):
	d = harness.tmpdir("sig")
	src = os.path.join(d, "big.safetensors")
	gen.write_safetensors(src, [("big", "U8", [64 << 20], os.urandom(64 << 20))])
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
		label = "signal %s mid-read" % sig.name
		m = harness.Mount(t, src, mnt).start()
		pid = m.proc.pid
		rd = subprocess.Popen([sys.executable, "-c", READER,
				       os.path.join(mnt, "big")],
				      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
		# wait until it has read the whole tensor once, so it is busy
		ready, _, _ = select.select([rd.stdout], [], [], 30)
		line = rd.stdout.readline() if ready else b"(nothing in 30 s)"
		t.eq(line, b"pass\n", "%s: the reader read through the mount" % label)
		time.sleep(0.2)
		m.proc.send_signal(sig)
		try:
			rc = m.proc.wait(timeout=10)
			t.eq(rc, 0, "%s: daemon exit status" % label)
		except subprocess.TimeoutExpired:
			t.check(False, "%s: daemon still running 10 s later" % label)
		try:
			out, _ = rd.communicate(timeout=15)
			t.check(b"stopped" in out, "%s: the reader got an error, not "
				"endless data: %r" % (label, out[-200:]))
		except subprocess.TimeoutExpired:
			rd.kill()
			rd.communicate()
			t.check(False, "%s: the reader hangs after the daemon left"
				% label)
		t.eq(mount_count(mnt), 0, "%s: nothing left mounted" % label)
		t.check(harness.wait_gone(pid, 5), "%s: daemon gone" % label)
		t.eq(harness.daemon_pids(mnt), [], "%s: no stfs process left" % label)
		m.unmount()
		kill_strays(t, mnt)


# ---- mount point errors -----------------------------------------------------------

def case_mountpoint(t):
	d = public_dir("mp")
	src = os.path.join(d, "model.safetensors")
	shutil.copyfile(harness.SAMPLE, src)
	os.chmod(src, 0o644)
	S = harness.SrcFile(src)
	x = S.tensors[0]
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)

	# already mounted
	m = harness.Mount(t, src, mnt).start()
	try:
		for args in ([src, mnt], ["-f", src, mnt]):
			label = "mount on a mounted mountpoint (%s)" % " ".join(args[:-2]
										or ["bg"])
			try:
				r = run([STFS] + args, timeout=20)
				rc, err = r.returncode, r.stderr.decode(errors="replace")
			except subprocess.TimeoutExpired:
				rc, err = None, "(timed out: it mounted and kept running)"
			t.check(rc not in (0, None), "%s: refused, exit %s: %r"
				% (label, rc, err))
			t.check(err.strip() != "" and len(err) < 1000,
				"%s: one clear message: %r" % (label, err))
			t.eq(mount_count(mnt), 1, "%s: still exactly one mount" % label)
			while mount_count(mnt) > 1:
				# stacked: take the top one off, keep the first
				harness.fusermount_u(mnt)
			for p in harness.daemon_pids(mnt):
				if p != m.proc.pid and not harness.wait_gone(p, 10):
					t.check(False, "%s: extra daemon %d left" % (label, p))
					os.kill(p, signal.SIGKILL)
		with open(os.path.join(mnt, fname(x)), "rb") as f:
			t.check(f.read() == S.read(x), "the first mount still serves")
	finally:
		m.unmount()
		kill_strays(t, mnt)

	# not a directory, missing, a file inside a file
	afile = os.path.join(d, "afile")
	with open(afile, "w") as f:
		f.write("x")
	for target, want, label in ((afile, "Not a directory", "not a directory"),
				    (os.path.join(afile, "sub"), "Not a directory",
				     "below a file"),
				    (os.path.join(d, "nope"), "No such file",
				     "missing")):
		r = run([STFS, src, target], timeout=20)
		err = r.stderr.decode(errors="replace")
		t.eq(r.returncode, 2, "mountpoint %s: exit 2 (%r)" % (label, err))
		t.check(want in err, "mountpoint %s: message says %r: %r"
			% (label, want, err))
		t.eq(mount_count(target), 0, "mountpoint %s: nothing mounted" % label)

	# no permission: nobody on a root-owned directory, and below a 0700 one.
	# Where /dev/fuse is root-only (0600), libfuse fails before fusermount3
	# looks at the directory: only the 0700 case then tests the mount
	# point itself (stfs resolves it first).
	fuse_ok = run(as_nobody(["test", "-r", "/dev/fuse", "-a", "-w",
				 "/dev/fuse"])).returncode == 0
	if not fuse_ok:
		t.note("mountpoint: /dev/fuse is not open to other users here, so "
		       "nobody cannot mount at all; the root-owned-directory case "
		       "only shows a clean refusal")
	rootmnt = os.path.join(d, "rootmnt")
	os.mkdir(rootmnt, 0o755)
	locked = os.path.join(d, "locked")
	os.mkdir(locked, 0o700)
	os.mkdir(os.path.join(locked, "mnt"))
	for target, label in ((rootmnt, "a root-owned directory"),
			      (os.path.join(locked, "mnt"), "below a 0700 directory")):
		try:
			r = run(as_nobody([STFS, src, target]), timeout=20)
			rc, err = r.returncode, r.stderr.decode(errors="replace")
		except subprocess.TimeoutExpired:
			rc, err = None, "(timed out)"
		t.check(rc not in (0, None), "nobody mounting on %s: refused (exit "
			"%s): %r" % (label, rc, err))
		t.check(("ermission" in err or "access" in err) and
			err.count("\n") <= 2,
			"nobody mounting on %s: the message says why: %r"
			% (label, err))
		t.eq(mount_count(target), 0, "nobody mounting on %s: nothing "
		     "mounted" % label)
		kill_strays(t, target)
	# and the control: nobody may mount on its own directory
	if not fuse_ok:
		no_leftovers(t, d, "mountpoint")
		return
	own = os.path.join(d, "own")
	os.mkdir(own)
	os.chown(own, NOBODY, NOBODY)
	r = run(as_nobody([STFS, src, own]), timeout=20)
	if t.eq(r.returncode, 0, "nobody mounting on its own directory works "
		"(%r)" % r.stderr):
		r2 = run(as_nobody(["cat", os.path.join(own, fname(x))]))
		t.check(r2.stdout == S.read(x), "nobody reads its own mount")
		r = run(as_nobody(["fusermount3", "-u", own]), timeout=20)
		t.eq(r.returncode, 0, "nobody unmounts its own mount: %r" % r.stderr)
	kill_strays(t, own)
	no_leftovers(t, d, "mountpoint")


# ---- permissions ------------------------------------------------------------------

def case_permissions(t):
	d = public_dir("perm")
	src = os.path.join(d, "model.safetensors")
	shutil.copyfile(harness.SAMPLE, src)
	os.chmod(src, 0o644)
	S = harness.SrcFile(src)
	x = S.tensors[1]
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	os.chmod(mnt, 0o755)
	tpath = os.path.join(mnt, fname(x))

	with harness.Mount(t, src, mnt):
		with open(tpath, "rb") as f:
			t.check(f.read() == S.read(x), "default: the owner reads")
		r = run(as_nobody(["ls", mnt]))
		err = r.stderr.decode(errors="replace")
		t.check(r.returncode != 0 and "Permission denied" in err,
			"default: another user cannot ls the mount (EACCES): rc %d %r"
			% (r.returncode, err))
		r = run(as_nobody(["cat", tpath]))
		t.check(r.returncode != 0 and r.stdout == b"", "default: another "
			"user cannot read a tensor: rc %d" % r.returncode)

	for mode, gid, can_read, label in (
			(0o644, NOBODY, True, "0644 source"),
			(0o640, NOBODY, True, "0640 source, reader in its group"),
			(0o640, 0, False, "0640 source, reader not in its group"),
			(0o600, NOBODY, False, "0600 source")):
		os.chmod(src, mode)
		os.chown(src, 0, gid)
		with harness.Mount(t, src, mnt, args=["-o", "allow_other"]):
			r = run(as_nobody(["cat", tpath]))
			if can_read:
				t.check(r.returncode == 0 and r.stdout == S.read(x),
					"allow_other, %s: nobody reads the tensor (%r)"
					% (label, r.stderr))
				r = run(as_nobody(["ls", mnt]))
				t.check(r.returncode == 0 and sorted(
					r.stdout.decode().split("\n")[:-1]) ==
					sorted(f for f in os.listdir(mnt) if not
					       f.startswith(".")), "allow_other, %s: nobody "
					"lists the mount (%r)" % (label, r.stderr))
			else:
				t.check(r.returncode != 0 and r.stdout == b"" and
					b"Permission denied" in r.stderr,
					"allow_other, %s: nobody may not read the tensor "
					"(rc %d, %d bytes, %r)" % (label, r.returncode,
								  len(r.stdout), r.stderr))
			with open(tpath, "rb") as f:
				t.check(f.read() == S.read(x), "allow_other, %s: root "
					"still reads" % label)
	os.chown(src, 0, 0)
	no_leftovers(t, d, "permissions")


# ---- hostile input ------------------------------------------------------------------

def timed(cmd, timeout):
	"""Run cmd under /usr/bin/time: (rc or None on timeout, stdout, stderr,
	max RSS in MiB, seconds)."""
	tf = os.path.join(harness.tmpdir("time"), "t")
	t0 = time.monotonic()
	# a session of its own, so that a hung command is killed with its
	# children (time(1) does not pass SIGKILL on)
	p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf] + cmd,
			     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
			     stdin=subprocess.DEVNULL, start_new_session=True)
	try:
		out, err = p.communicate(timeout=timeout)
	except subprocess.TimeoutExpired:
		os.killpg(p.pid, signal.SIGKILL)
		out, err = p.communicate()
		return None, out, err, 0, timeout
	secs = time.monotonic() - t0
	r = subprocess.CompletedProcess(cmd, p.returncode, out, err)
	try:
		with open(tf) as f:
			rss = int(f.read().split()[-1]) / 1024
	except (OSError, ValueError, IndexError):
		rss = 0
	return r.returncode, r.stdout, r.stderr, rss, secs


class Hostile:
	def __init__(self, t):
		self.t = t
		self.d = harness.tmpdir("hostile")
		self.mnt = os.path.join(self.d, "mnt")
		os.mkdir(self.mnt)
		self.rows = []

	def path(self, name):
		return os.path.join(self.d, name)

	def raw(self, name, header, data=b"", length=None):
		p = self.path(name)
		gen.write_raw(p, header, data, length)
		return p

	def refuse(self, p, want, label, rc_ok=(1,), rss_mb=200, secs=30):
		"""inspect and a mount attempt both refuse p naming `want`."""
		t = self.t
		rc, out, err, rss, el = timed([STFS_INSPECT, p], secs)
		errs = err.decode(errors="replace")
		t.check(rc in rc_ok, "%s: stfs-inspect refuses (exit %s, want %s): %r"
			% (label, rc, rc_ok, errs[:300]))
		t.check(want in errs, "%s: stfs-inspect names %r: %r"
			% (label, want, errs[:300]))
		t.check(rss < rss_mb, "%s: stfs-inspect RSS %.0f MiB < %d"
			% (label, rss, rss_mb))
		rc2, out2, err2, rss2, el2 = timed([STFS, p, self.mnt], secs)
		t.check(rc2 in rc_ok, "%s: stfs refuses to mount (exit %s): %r"
			% (label, rc2, err2[:300]))
		t.eq(mount_count(self.mnt), 0, "%s: nothing mounted" % label)
		kill_strays(t, self.mnt)
		self.rows.append("%-34s refused %-28s inspect %5.2f s %4.0f MiB, "
				 "stfs %5.2f s" % (label, want, el, rss, el2))

	def serve(self, p, label, check, rss_mb, ready=60, inspect_secs=120):
		"""inspect accepts p; a mount of it is ready within `ready`
		seconds with the daemon's peak RSS under rss_mb; check(m) runs on
		the live mount."""
		t = self.t
		rc, out, err, rss, el = timed([STFS_INSPECT, p], inspect_secs)
		t.eq(rc, 0, "%s: stfs-inspect accepts it: %r" % (label, err[:300]))
		t0 = time.monotonic()
		m = harness.Mount(t, p, self.mnt, ready_timeout=ready)
		try:
			m.start()
			up = time.monotonic() - t0
			st = proc_status(m.proc.pid)
			check(m)
			st2 = proc_status(m.proc.pid)
		finally:
			m.unmount()
			kill_strays(t, self.mnt)
		hwm = max(st.get("VmHWM", 0), st2.get("VmHWM", 0)) / 1024
		t.check(hwm < rss_mb, "%s: daemon peak RSS %.0f MiB < %d MiB"
			% (label, hwm, rss_mb))
		self.rows.append("%-34s served  inspect %5.2f s %4.0f MiB, mount "
				 "ready %5.2f s, daemon RSS %.0f MiB, peak %.0f MiB"
				 % (label, el, rss, up, st2.get("VmRSS", 0) / 1024,
				    hwm))


def case_hostile(t):
	H = Hostile(t)
	S = harness.SrcFile(harness.SAMPLE)
	with open(harness.SAMPLE, "rb") as f:
		sample = f.read()

	# truncated copies of a valid file
	for cut, want in ((0, "HeaderTooSmall"), (5, "HeaderTooSmall"),
			  (8, "InvalidHeaderLength"),
			  (8 + S.n // 2, "InvalidHeaderLength"),
			  (8 + S.n, "MetadataIncompleteBuffer"),
			  (len(sample) - 1, "MetadataIncompleteBuffer")):
		p = H.path("cut%d.safetensors" % cut)
		with open(p, "wb") as f:
			f.write(sample[:cut])
		H.refuse(p, want, "truncated at %d" % cut)

	# a prefix that claims 100 MB (or 2^64-1) over a 1 KiB file: no
	# allocation of the claimed size
	H.refuse(H.raw("claims.safetensors", b"{}" + b" " * 1000, length=10**8),
		 "InvalidHeaderLength", "prefix claims 1e8, file 1 KiB", rss_mb=60)
	H.refuse(H.raw("claimsmax.safetensors", b"{}", length=2**64 - 1),
		 "HeaderTooLarge", "prefix 2^64-1", rss_mb=60)
	H.refuse(H.raw("lfs.safetensors", b"oid sha256:" + b"0" * 64 + b"\n",
		       length=struct.unpack("<Q", b"version ")[0]),
		 "HeaderTooLarge", "git-lfs pointer")

	# header at the limit (valid) and one byte over
	body = b'{"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}'
	at = H.raw("atlimit.safetensors", body + b" " * (10**8 - len(body)),
		   b"\x01\x02\x03\x04")

	def check_at(m):
		with open(os.path.join(m.path, "w"), "rb") as f:
			t.eq(f.read(), b"\x01\x02\x03\x04", "header at the limit: bytes")
	H.serve(at, "header of exactly 100,000,000 B", check_at, rss_mb=700)
	os.unlink(at)
	over = H.raw("overlimit.safetensors", body + b" " * (10**8 + 1 - len(body)),
		     b"\x01\x02\x03\x04")
	H.refuse(over, "HeaderTooLarge", "header of 100,000,001 B")
	os.unlink(over)

	# deep nesting
	def nested(k):
		return ('{"w":{"x":' + "[" * k + "]" * k + ',"dtype":"U8","shape":[1],'
			'"data_offsets":[0,1]}}').encode()
	H.refuse(H.raw("deep200.safetensors", gen.pad8(nested(200)), b"\0"),
		 "InvalidHeaderDeserialization", "200-deep nested JSON")
	H.refuse(H.raw("deep1m.safetensors", gen.pad8(nested(10**6)), b"\0"),
		 "InvalidHeaderDeserialization", "10^6-deep nested JSON")
	H.refuse(H.raw("deepobj.safetensors", gen.pad8(
		b'{"__metadata__":' + b'{"a":' * 5000 + b'"x"' + b"}" * 5000 + b"}")),
		 "InvalidHeaderDeserialization", "5000-deep objects in metadata")

	# huge shape products
	def one(shape, end, dt="U8", data=b""):
		return gen.pad8(('{"w":{"dtype":"%s","shape":%s,"data_offsets":[0,%d]}}'
				 % (dt, json.dumps(shape), end)).encode()), data
	H.refuse(H.raw("ovf1.safetensors", *one([2**32, 2**32, 2], 0)),
		 "ValidationOverflow", "shape product over 2^64")
	H.refuse(H.raw("ovf2.safetensors", *one([2**61], 2**61)),
		 "ValidationOverflow", "U8 [2^61]: bits over 2^64")
	H.refuse(H.raw("ovf3.safetensors", *one([2**62, 4, 0], 0)),
		 "ValidationOverflow", "[2^62,4,0]: overflow before the 0")
	H.refuse(H.raw("claim1t.safetensors", *one([2**40], 2**40)),
		 "MetadataIncompleteBuffer", "claims 1 TiB, file tiny", rss_mb=60)
	# a real (sparse) 1 TiB tensor is served without reading or holding it
	hdr, _ = one([2**40], 2**40)
	big = H.raw("sparse1t.safetensors", hdr)
	try:
		os.truncate(big, 8 + len(hdr) + 2**40)
		sparse_ok = True
	except OSError as e:
		t.note("sparse 1 TiB file not possible here: %s" % e)
		sparse_ok = False
	if sparse_ok:
		def check_sparse(m):
			p = os.path.join(m.path, "w")
			t.eq(os.stat(p).st_size, 2**40, "sparse 1 TiB: st_size")
			for off in (0, 2**39 + 5, 2**40 - 4096):
				got, err = pread_err(p, 4096, off)
				t.check(got == bytes(4096), "sparse 1 TiB: 4 KiB at %d are "
					"the source's zeros (%s)" % (off, errname(err)))
			got, err = pread_err(p, 4096, 2**40)
			t.eq(got, b"", "sparse 1 TiB: read at the end is EOF")
		H.serve(big, "sparse 1 TiB tensor", check_sparse, rss_mb=200)
		os.unlink(big)

	# 10^6 tiny tensors
	n = 10**6
	parts = ['"t%07d":{"dtype":"BOOL","shape":[1],"data_offsets":[%d,%d]}'
		 % (i, i, i + 1) for i in range(n)]
	hdr = gen.pad8(("{" + ",".join(parts) + "}").encode())
	del parts
	many = H.raw("million.safetensors", hdr, bytes(i & 1 for i in range(n)))
	del hdr

	def check_many(m):
		t0 = time.monotonic()
		cnt = sum(1 for _ in os.scandir(m.path))
		el = time.monotonic() - t0
		# data + sidecar per tensor, the 2 root files (views hidden)
		t.eq(cnt, 2 * n + 2, "10^6 tensors: directory entries")
		rng = random.Random(6)
		for i in rng.sample(range(n), 200):
			p = os.path.join(m.path, "t%07d" % i)
			with open(p, "rb") as f:
				if not t.eq(f.read(), bytes([i & 1]), "10^6 tensors: "
					    "t%07d bytes" % i):
					break
			with open(p + ".json") as f:
				j = json.load(f)
			t.eq((j["name"], j["data_offsets"]), ("t%07d" % i, [i, i + 1]),
			     "10^6 tensors: t%07d sidecar" % i)
		t.note("10^6 tensors: listing 2,000,002 entries took %.1f s, daemon "
		       "RSS after it %.0f MiB" % (el, proc_status(m.proc.pid).get(
						"VmRSS", 0) / 1024))
	H.serve(many, "10^6 tiny tensors", check_many, rss_mb=1536, ready=120)
	os.unlink(many)

	# long names, control bytes
	names = ["Z" * 65536,
		 "".join(chr(0x20 + (i * 7) % 0x5f) for i in range(65536)),
		 ("\x01\n\x1b/\u00e9\u6a21" * 10923)[:65536],
		 "M" * (1 << 20),
		 "\x1b[2J\x1b[31mred\x1b[0m", "cr\rreturn", "bell\x07", "nul\x00z",
		 "del\x7f", "nl\nnl", "c1 \u009b31m", "\u202eevil.txt",
		 "tab\tx", "bs\x08x"]
	src = H.path("names.safetensors")
	gen.write_safetensors(src, [(nm, "U8", [3], bytes([i, i + 1, i + 2]))
				    for i, nm in enumerate(names)])
	Sn = harness.SrcFile(src)

	def check_names(m):
		listing = os.listdir(m.path)
		t.eq(len(listing), 2 * len(names) + 2, "names: entries")
		t.check(all(len(os.fsencode(f)) <= 255 for f in listing),
			"names: every file name <= 255 bytes")
		t.check(all(not any(c < 0x20 or c == 0x7f for c in os.fsencode(f))
			    for f in listing), "names: no control byte in a file name")
		for x in Sn.tensors:
			p = os.path.join(m.path, fname(x))
			with open(p, "rb") as f:
				t.eq(f.read(), Sn.read(x), "names: bytes of %s"
				     % harness.short(x.name, 40))
			with open(p + ".json", "rb") as f:
				j = json.loads(f.read().decode())
			t.check(j["name"] == x.name, "names: sidecar keeps the whole "
				"name %s" % harness.short(x.name, 40))
	H.serve(src, "64 KiB / 1 MiB names, control bytes", check_names, rss_mb=300)
	rc, out, err, rss, el = timed([STFS_INSPECT, "--tensors", src], 30)
	if rc != 0:
		rc, out, err, rss, el = timed([STFS_INSPECT, src], 30)
	t.eq(rc, 0, "names: stfs-inspect text output exits 0")
	bad = sorted(set(c for c in out if (c < 0x20 and c not in (0x0a, 0x09))
			 or c == 0x7f))
	t.eq(bad, [], "names: stfs-inspect's text output carries no raw control "
	     "bytes (terminal escapes) from tensor names")
	t.check(b"\xc2\x9b" not in out, "names: no raw C1 CSI (U+009B) in the "
		"text output")
	rc, out, err, rss, el = timed([STFS_INSPECT, "--json", src], 30)
	if t.eq(rc, 0, "names: stfs-inspect --json exits 0"):
		try:
			json.loads(out.decode())
			t.check(True, "")
		except ValueError as e:
			t.check(False, "names: --json output parses: %s" % e)

	# shard names escaping the index's directory are refused; symlinks
	# the directory holds are the user's and are followed (issue 12)
	sets = gen_sharded.broken_sets(H.path("sharded"))
	for case in ("dotdot", "absolute"):
		idx, words = sets[case]
		H.refuse(idx, words[0], "shard %s" % case, rc_ok=(1, 2))
	ts = gen_sharded.mixed_tensors(4)
	esc = H.path("escape")
	idx, wm = gen_sharded.write_sharded(os.path.join(esc, "set"), ts, 2)
	shard = gen_sharded.shard_name(1, 2)
	os.replace(os.path.join(esc, "set", shard), os.path.join(esc, shard))
	os.symlink(os.path.join(esc, shard), os.path.join(esc, "set", shard))
	r = run([STFS_INSPECT, idx])
	t.eq(r.returncode, 0, "a shard symlinked outside the directory is "
	     "followed: %s" % r.stderr.decode(errors="replace").strip())
	sd = H.path("symdir")
	os.makedirs(os.path.join(sd, "outside"))
	ts = gen_sharded.mixed_tensors(4)
	idx, wm = gen_sharded.write_sharded(os.path.join(sd, "set"), ts, 2)
	shard = gen_sharded.shard_name(1, 2)
	os.replace(os.path.join(sd, "set", shard),
		   os.path.join(sd, "outside", shard))
	os.symlink(os.path.join(sd, "outside"), os.path.join(sd, "set", "sub"))
	with open(idx) as f:
		obj = json.load(f)
	for k, v in obj["weight_map"].items():
		if v == shard:
			obj["weight_map"][k] = "sub/" + shard
	with open(idx, "w") as f:
		json.dump(obj, f)
	r = run([STFS_INSPECT, idx])
	t.eq(r.returncode, 0, "a shard under a symlinked directory is "
	     "followed: %s" % r.stderr.decode(errors="replace").strip())

	# sources that are not regular files: no hang, a clear error
	fifo = H.path("fifo.safetensors")
	os.mkfifo(fifo)
	H.refuse(fifo, "regular file", "FIFO as the source", rc_ok=(2,), secs=15)
	zero = H.path("zero.safetensors")
	os.symlink("/dev/zero", zero)
	H.refuse(zero, "regular file", "/dev/zero as the source", rc_ok=(2,),
		 secs=15)
	dd = H.path("dir.safetensors")
	os.mkdir(dd)
	r = run([STFS_INSPECT, dd], timeout=15)
	t.check(r.returncode in (1, 2), "a directory named *.safetensors: "
		"refused (%d)" % r.returncode)
	# a FIFO as a shard, listed by a valid index
	fs = H.path("fifoset")
	idx, wm = gen_sharded.write_sharded(fs, gen_sharded.mixed_tensors(4), 2)
	os.unlink(os.path.join(fs, gen_sharded.shard_name(1, 2)))
	os.mkfifo(os.path.join(fs, gen_sharded.shard_name(1, 2)))
	H.refuse(idx, "regular file", "FIFO as a shard", rc_ok=(1, 2), secs=15)

	print("hostile input figures:")
	for row in H.rows:
		print("  " + row)
	no_leftovers(t, H.d, "hostile")


def case_flood(t):
	"""Hash flooding (issue 14.3): 65,536 names crafted to share the slot
	of the unkeyed FNV-1a table stfs used to have (17 s to mount there)
	mount within a generous deadline, all listed and found.  The timing
	against random names is a figure of scripts/bench-flood, not checked
	here."""
	H = Hostile(t)
	n = 1 << 16
	names = flood.crafted_names(n)
	p = H.path("flood.safetensors")
	flood.write_names(p, names)

	def check(m):
		listed = set(os.listdir(m.path))
		t.check(all(x in listed for x in names),
			"crafted names: all %d listed" % n)
		for x in random.Random(3).sample(names, 50):
			with open(os.path.join(m.path, x + ".json")) as f:
				t.eq(json.load(f)["name"], x, "crafted name %s: "
				     "sidecar" % x)
			t.eq(os.stat(os.path.join(m.path, x)).st_size, 0,
			     "crafted name %s: size" % x)
	H.serve(p, "65,536 FNV-crafted names", check, rss_mb=400, ready=60,
		inspect_secs=60)
	os.unlink(p)
	for row in H.rows:
		print("  " + row)
	no_leftovers(t, H.d, "flood")


CASES = [
	("truncate", case_truncate),
	("rename", case_rename),
	("concurrent", case_concurrent),
	("cycles", case_cycles),
	("signals", case_signals),
	("mountpoint", case_mountpoint),
	("permissions", case_permissions),
	("hostile", case_hostile),
	("flood", case_flood),
]


def run_all(t):
	if os.geteuid() != 0:
		raise harness.Skip("the fault tests need root (setpriv, chown)")
	only = [c for c in os.environ.get("STFS_FAULTS", "").split(",") if c]
	summary = []
	for name, fn in CASES:
		if only and name not in only:
			continue
		print("==== %s" % name, flush=True)
		before, checks = len(t.failures), t.checks
		t0 = time.monotonic()
		try:
			fn(t)
		except harness.Fatal:
			pass		# recorded; go on with the next case
		except Exception:
			traceback.print_exc()
			t.failures.append("%s: exception" % name)
		for m in list(harness._live_mounts):
			m.unmount()
		failed = len(t.failures) - before
		summary.append("%-12s %s  %d checks, %d failed, %.1f s"
			       % (name, "ok    " if not failed else "FAILED",
				  t.checks - checks, failed, time.monotonic() - t0))
		print("==== %s: %s" % (name, summary[-1]), flush=True)
	print("fault cases:")
	for s in summary:
		print("  " + s)


if __name__ == "__main__":
	harness.main("int-faults", run_all, mounts=True)
