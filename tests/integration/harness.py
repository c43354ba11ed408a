"""harness.py - shared helpers for the stfs integration tests.

Every test script does:

    import harness
    def run(t):
        src = ...
        with harness.Mount(t, src) as m:
            harness.verify_tree(t, src, m.path)
    harness.main("int-basic", run, mounts=True)

- Test counts checks; a failed check is recorded (the script goes on) and
  the script exits 1 at the end; an exception fails the script at once.
- Mount starts `stfs -f SRC MNT` in the background, waits for readiness
  with a deadline and always unmounts (also on failure and on SIGTERM).
- Nothing here trusts stfs to read a header: read_header() parses the
  source with json, independently of the C code.

Environment (set by tests/integration/meson.build): STFS, STFS_INSPECT,
STFS_REAL (directory of real files), STFS_GEN (tests/gen.py).
"""

import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SRCROOT = os.path.dirname(os.path.dirname(HERE))

STFS = os.environ.get("STFS", "")
STFS_INSPECT = os.environ.get("STFS_INSPECT", "")
STFS_REAL = os.environ.get("STFS_REAL",
			   os.path.join(SRCROOT, "tests", "data", "real"))
STFS_GEN = os.environ.get("STFS_GEN", os.path.join(SRCROOT, "tests", "gen.py"))
SAMPLE = os.path.join(SRCROOT, "samples", "sample.safetensors")

sys.path.insert(0, os.path.dirname(os.path.abspath(STFS_GEN)))
import gen  # noqa: E402

READY_TIMEOUT = 10.0
RO_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)


class Skip(Exception):
	pass


class Fatal(Exception):
	pass


# ---- check counting ---------------------------------------------------------

class Test:
	def __init__(self, name):
		self.name = name
		self.checks = 0
		self.failures = []
		self.notes = []

	def check(self, cond, msg):
		"""Record one check; msg says what was expected (str or callable)."""
		self.checks += 1
		if not cond:
			if callable(msg):
				msg = msg()
			self.failures.append(msg)
			if len(self.failures) <= 200:
				print("FAIL: %s" % msg, flush=True)
		return bool(cond)

	def eq(self, got, want, what):
		return self.check(got == want, lambda: "%s: got %s, want %s"
				  % (what, short(got), short(want)))

	def fatal(self, msg):
		self.checks += 1
		self.failures.append(msg)
		print("FATAL: %s" % msg, flush=True)
		raise Fatal(msg)

	def note(self, msg):
		self.notes.append(msg)
		print("note: %s" % msg, flush=True)


def short(v, n=300):
	s = repr(v)
	return s if len(s) <= n else s[:n] + "...(%d chars)" % len(s)


# ---- cleanup on every exit path ----------------------------------------------

_live_mounts = []
_tmpdirs = []


def _on_signal(signum, frame):
	# Turn SIGTERM (meson's timeout) into an exception so finally blocks
	# (and so the unmounts) run.
	raise SystemExit(128 + signum)


def _cleanup_all():
	for m in list(_live_mounts):
		try:
			m.unmount()
		except Exception as e:		# keep going: unmount the rest
			print("cleanup: %s" % e, file=sys.stderr)
	for d in list(_tmpdirs):
		rmtree_safe(d)


def rmtree_safe(d):
	"""Remove a temporary tree unless something is still mounted in it."""
	if not os.path.isdir(d):
		return
	real = os.path.realpath(d)
	for mp in mountpoints():
		if mp == real or mp.startswith(real + "/"):
			print("NOT removing %s: %s is still mounted" % (d, mp),
			      file=sys.stderr)
			return
	shutil.rmtree(d, ignore_errors=True)
	if d in _tmpdirs:
		_tmpdirs.remove(d)


def tmpdir(tag="t"):
	base = os.environ.get("STFS_TMP") or None
	d = tempfile.mkdtemp(prefix="stfs-%s-" % tag, dir=base)
	_tmpdirs.append(d)
	return d


# ---- mounts ---------------------------------------------------------------

def _unoctal(s):
	# /proc/self/mountinfo escapes space, tab, newline and backslash
	out = bytearray()
	b = s.encode("utf-8", "surrogateescape")
	i = 0
	while i < len(b):
		if b[i] == 0x5C and i + 3 < len(b) + 0 and b[i + 1:i + 4].isdigit():
			out.append(int(b[i + 1:i + 4], 8))
			i += 4
		else:
			out.append(b[i])
			i += 1
	return out.decode("utf-8", "surrogateescape")


def mountinfo():
	"""[(mountpoint, fstype, source, mount options + super options)]"""
	res = []
	with open("/proc/self/mountinfo") as f:
		for line in f:
			a, b = line.rstrip("\n").split(" - ", 1)
			af = a.split(" ")
			bf = b.split(" ")
			res.append((_unoctal(af[4]), bf[0], _unoctal(bf[1]),
				    af[5] + "," + (bf[2] if len(bf) > 2 else "")))
	return res


def mountpoints():
	return [m[0] for m in mountinfo()]


def mount_entry(path):
	real = os.path.realpath(path)
	for m in mountinfo():
		if m[0] == real:
			return m
	return None


def is_mounted(path):
	return mount_entry(path) is not None


def can_mount():
	"""None when mounting is possible, else the reason."""
	if not os.path.exists("/dev/fuse"):
		return "/dev/fuse is missing"
	if shutil.which("fusermount3") is None:
		if os.geteuid() == 0:
			return None	# as root this is a failure, not a skip
		return "fusermount3 is missing (install fuse3)"
	if os.geteuid() != 0 and not os.access("/dev/fuse", os.R_OK | os.W_OK):
		return "no access to /dev/fuse"
	return None


# How long any daemon may take to exit once its mount is gone: a hang
# detector, not a figure (int-remote-pressure holds the 5 s for a
# stuck transfer).  10 s was crossed at load 11-20 by daemons that exit in
# well under a second when the machine is idle.
DAEMON_EXIT_S = 30


def fusermount_u(path, lazy=False):
	cmd = ["fusermount3", "-u" + ("z" if lazy else ""), path]
	if shutil.which("fusermount3") is None:
		cmd = ["umount"] + (["-l"] if lazy else []) + [path]
	return subprocess.run(cmd, stdout=subprocess.PIPE,
			      stderr=subprocess.STDOUT, timeout=30)


def force_unmount(path):
	"""Unmount path, lazily if busy.  True when nothing is mounted there."""
	if not is_mounted(path):
		return True
	r = fusermount_u(path)
	if r.returncode != 0 or is_mounted(path):
		fusermount_u(path, lazy=True)
	return not is_mounted(path)


_subreaper = False


def _become_subreaper():
	"""Orphans (a daemon whose parent exited) become our children, so that
	their exit status can be read (prctl PR_SET_CHILD_SUBREAPER)."""
	global _subreaper
	if not _subreaper:
		import ctypes
		libc = ctypes.CDLL(None, use_errno=True)
		if libc.prctl(36, 1, 0, 0, 0) != 0:
			raise OSError(ctypes.get_errno(), "PR_SET_CHILD_SUBREAPER")
		_subreaper = True


class Mount:
	"""`stfs -f [args] SRC MNT` running in the background; with
	foreground=False `stfs [args] SRC MNT` as users run it: the command
	returns once mounted and leaves the daemon (self.pid) behind."""

	def __init__(self, t, src, mnt=None, args=(), ready_timeout=READY_TIMEOUT,
		     env=None, foreground=True):
		self.t = t
		self.src = src
		self.path = mnt
		self.args = list(args)
		self.ready_timeout = ready_timeout
		self.env = env
		self.foreground = foreground
		self.proc = None
		self.pid = None
		self.returncode = None
		self.log = None
		self.ready = False

	def start(self):
		if self.path is None:
			self.path = os.path.join(tmpdir("mnt"), "mnt")
		os.makedirs(self.path, exist_ok=True)
		self.logpath = self.path.rstrip("/") + ".log"
		self.log = open(self.logpath, "w+b")
		if not self.foreground:
			return self._start_daemon()
		cmd = [STFS, "-f"] + self.args + [self.src, self.path]
		self.cmd = cmd
		self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
					     stdout=self.log, stderr=self.log,
					     env=self.env)
		_live_mounts.append(self)
		deadline = time.monotonic() + self.ready_timeout
		while True:
			if self.proc.poll() is not None:
				self.returncode = self.proc.returncode
				self.t.fatal("%s exited with %d before the mount was "
					     "ready; output:\n%s"
					     % (" ".join(cmd), self.proc.returncode,
						self.output()))
			if is_mounted(self.path):
				try:
					os.listdir(self.path)
					self.ready = True
					return self
				except OSError:
					pass
			if time.monotonic() > deadline:
				self.t.fatal("%s: not mounted after %.0f s; output:\n%s"
					     % (" ".join(cmd), self.ready_timeout,
						self.output()))
			time.sleep(0.02)

	def _start_daemon(self):
		cmd = [STFS] + self.args + [self.src, self.path]
		self.cmd = cmd
		_become_subreaper()
		_live_mounts.append(self)
		try:
			r = subprocess.run(cmd, stdin=subprocess.DEVNULL,
					   stdout=self.log, stderr=self.log,
					   env=self.env, timeout=self.ready_timeout)
		except subprocess.TimeoutExpired:
			self.t.fatal("%s: did not return within %.0f s; output:\n%s"
				     % (" ".join(cmd), self.ready_timeout,
					self.output()))
		pids = daemon_pids(self.path)
		if r.returncode != 0:
			self.returncode = r.returncode
			self.t.fatal("%s exited with %d; output:\n%s"
				     % (" ".join(cmd), r.returncode, self.output()))
		if len(pids) != 1 or not is_mounted(self.path):
			self.t.fatal("%s: exit 0, but %s mounted, daemons %r; "
				     "output:\n%s" % (" ".join(cmd), "is" if
						is_mounted(self.path) else "not",
						pids, self.output()))
		self.pid = pids[0]
		self.ready = True
		return self

	def _stop_daemon(self):
		"""After the unmount: the daemon must exit, and with status 0."""
		if self.pid is None:
			# a failed start may have left one behind (not after a
			# good start: LeakSanitizer's tracer, a child of the
			# daemon, has its command line while it exits)
			for p in daemon_pids(self.path):
				os.kill(p, signal.SIGKILL)
			return
		deadline = time.monotonic() + DAEMON_EXIT_S
		while time.monotonic() < deadline:
			# ours since it was orphaned (_become_subreaper)
			pid, st = os.waitpid(self.pid, os.WNOHANG)
			if pid:
				self.returncode = os.waitstatus_to_exitcode(st)
				return
			time.sleep(0.02)
		os.kill(self.pid, signal.SIGKILL)
		os.waitpid(self.pid, 0)
		self.t.check(False, "%s: daemon %d still running %d s after "
			     "unmount" % (self.path, self.pid, DAEMON_EXIT_S))

	def output(self):
		if not self.log:
			return ""
		self.log.flush()
		with open(self.logpath, "rb") as f:
			return f.read().decode("utf-8", "replace")

	def unmount(self):
		"""Unmount (lazily if busy), then make sure the daemon is gone.
		Returns the daemon's exit status (None if it had to be killed)."""
		if self in _live_mounts:
			_live_mounts.remove(self)
		if self.path and not force_unmount(self.path):
			print("could not unmount %s" % self.path, file=sys.stderr)
		if not self.foreground:
			self._stop_daemon()
		p = self.proc
		if p is not None and self.returncode is None and not self.ready:
			p.kill()		# never mounted: nothing to wait for
			p.wait()
		elif p is not None and self.returncode is None:
			try:
				self.returncode = p.wait(timeout=DAEMON_EXIT_S)
			except subprocess.TimeoutExpired:
				p.terminate()
				try:
					p.wait(timeout=5)
				except subprocess.TimeoutExpired:
					p.kill()
					p.wait()
				self.returncode = None
				self.t.check(False, "%s: daemon still running %d s "
					     "after unmount" % (self.path,
								DAEMON_EXIT_S))
		if self.log:
			self.log.close()
			self.log = None
		return self.returncode

	def __enter__(self):
		return self.start()

	def __exit__(self, et, ev, tb):
		rc = self.unmount()
		if et is None:
			self.t.eq(rc, 0, "exit status of `%s` after unmount"
				  % " ".join(self.cmd))


# ---- processes --------------------------------------------------------------

def run(cmd, timeout=60, input=None, env=None, cwd=None):
	"""Run a command, capture bytes; returns CompletedProcess or raises."""
	return subprocess.run(cmd, input=input, stdout=subprocess.PIPE,
			      stderr=subprocess.PIPE, timeout=timeout, env=env,
			      cwd=cwd, stdin=None if input is not None
			      else subprocess.DEVNULL)


def run_pty(cmd, timeout=60, env=None, cols=100, stdout_tty=False):
	"""Run cmd with its stderr on a pseudo-terminal cols wide (stdin
	/dev/null, stdout captured, or with stdout_tty on the terminal too):
	(returncode, stdout, what the terminal got).  Waits for cmd only: a
	daemon it leaves has its stdio on /dev/null."""
	master, slave = os.openpty()
	fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols,
							     0, 0))
	got = []

	def drain():
		while True:
			try:
				b = os.read(master, 65536)
			except OSError:		# EIO: the last writer is gone
				return
			if not b:
				return
			got.append(b)
	th = threading.Thread(target=drain, daemon=True)
	th.start()
	try:
		p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
				     stdout=slave if stdout_tty else
				     subprocess.PIPE, stderr=slave, env=env)
	finally:
		os.close(slave)
	try:
		out, _ = p.communicate(timeout=timeout)
	except subprocess.TimeoutExpired:
		p.kill()
		p.communicate()
		raise
	th.join(timeout=10)
	os.close(master)
	return p.returncode, out or b"", b"".join(got)


def daemon_pids(mnt, also=()):
	"""Pids of stfs processes whose command line names mountpoint mnt
	(or one of the strings in also, for relative arguments)."""
	wants = [os.fsencode(x) for x in (mnt,) + tuple(also)]
	res = []
	for d in os.listdir("/proc"):
		if not d.isdigit() or int(d) == os.getpid():
			continue
		try:
			with open("/proc/%s/cmdline" % d, "rb") as f:
				argv = f.read().split(b"\0")
		except OSError:
			continue
		if argv and b"stfs" in os.path.basename(argv[0]) and \
				any(w in argv for w in wants):
			res.append(int(d))
	return res


def wait_gone(pid, timeout=10.0):
	deadline = time.monotonic() + timeout
	while time.monotonic() < deadline:
		try:
			with open("/proc/%d/stat" % pid) as f:
				if f.read().split(")")[-1].split()[0] == "Z":
					return True
		except OSError:
			return True
		time.sleep(0.02)
	return False


# ---- the source, read independently -------------------------------------------

class SrcTensor:
	def __init__(self, name, dtype, shape, begin, end, data_start):
		self.name = name
		self.dtype = dtype
		self.shape = shape
		self.begin = begin
		self.end = end
		self.offset = data_start + begin
		self.nbytes = end - begin
		self.numel = gen.numel_of(shape)


class SrcFile:
	def __init__(self, path):
		self.path = path
		with open(path, "rb") as f:
			(self.n,) = struct.unpack("<Q", f.read(8))
			raw = f.read(self.n)
		self.size = os.path.getsize(path)
		self.data_start = 8 + self.n

		def pairs(kv):
			d = {}
			for k, v in kv:
				if k in d:
					raise ValueError("duplicate key %r" % k)
				d[k] = v
			return d
		obj = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs)
		self.metadata = obj.pop("__metadata__", None)
		self.tensors = []
		for name, info in obj.items():
			b, e = info["data_offsets"]
			self.tensors.append(SrcTensor(name, info["dtype"],
						      list(info["shape"]), b, e,
						      self.data_start))
		self.tensors.sort(key=lambda x: (x.begin, x.end))
		self.by_name = {x.name: x for x in self.tensors}

	def read(self, t, off=0, n=None):
		if n is None:
			n = t.nbytes - off
		with open(self.path, "rb") as f:
			f.seek(t.offset + off)
			return f.read(n)

	def parameters(self):
		p = {}
		for t in self.tensors:
			p[t.dtype] = p.get(t.dtype, 0) + t.numel
		return p


def validate(path):
	"""The reference reader's checks, in its order.  Returns None for a
	valid file or the error name.  Used to self-check gen.py."""
	with open(path, "rb") as f:
		buf = f.read()
	if len(buf) < 8:
		return "HeaderTooSmall"
	(n,) = struct.unpack("<Q", buf[:8])
	if n > gen.MAX_HEADER_SIZE:
		return "HeaderTooLarge"
	if 8 + n > len(buf):
		return "InvalidHeaderLength"
	try:
		text = buf[8:8 + n].decode("utf-8")
	except UnicodeDecodeError:
		return "InvalidHeader"
	try:
		obj = json.loads(text, parse_constant=_no_const)
		if not isinstance(obj, dict):
			raise ValueError("not an object")
		meta = obj.pop("__metadata__", None)
		if meta is not None:
			if not isinstance(meta, dict) or not all(
					isinstance(v, str) for v in meta.values()):
				raise ValueError("bad metadata")
		ts = []
		for name, info in obj.items():
			if set(info) < {"dtype", "shape", "data_offsets"}:
				raise ValueError("missing field")
			if info["dtype"] not in gen.DTYPE_BITS:
				raise ValueError("unknown dtype")
			sh, off = info["shape"], info["data_offsets"]
			if not isinstance(sh, list) or not all(
					_is_u64(d) for d in sh):
				raise ValueError("bad shape")
			if not isinstance(off, list) or len(off) != 2 or not all(
					_is_u64(d) for d in off):
				raise ValueError("bad offsets")
			ts.append((off[0], off[1], name, info["dtype"], sh))
	except ValueError:
		return "InvalidHeaderDeserialization"
	ts.sort(key=lambda x: (x[0], x[1]))
	start = 0
	for s, e, name, dt, sh in ts:
		if s != start or e < s:
			return "InvalidOffset"
		start = e
		ne = 1
		for d in sh:
			ne *= d
			if ne > gen.U64_MAX:
				return "ValidationOverflow"
		nbits = ne * gen.DTYPE_BITS[dt]
		if nbits > gen.U64_MAX:
			return "ValidationOverflow"
		if nbits % 8:
			return "MisalignedSlice"
		if e - s != nbits // 8:
			return "TensorInvalidInfo"
	if start + 8 + n != len(buf):
		return "MetadataIncompleteBuffer"
	return None


def _no_const(c):
	raise ValueError("constant %s" % c)


def _is_u64(v):
	return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= gen.U64_MAX


# ---- the file name encoding (the contract, implemented independently) --------

def fnv1a64(b):
	h = 0xcbf29ce484222325
	for c in b:
		h ^= c
		h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
	return h


def encode_name(name):
	"""Tensor name -> file name per the stfs contract (rules 1-6)."""
	units = []
	for ch in name:
		b = ch.encode("utf-8")
		if len(b) == 1 and (b[0] in (0x2F, 0x25) or b[0] < 0x20 or
				    b[0] == 0x7F):
			units.append(b"%%%02X" % b[0])
		else:
			units.append(b)
	if units and units[0] == b".":
		units[0] = b"%2E"
	if len(units) >= 5 and units[-5:] == [b".", b"j", b"s", b"o", b"n"]:
		units[-5] = b"%2E"
	joined = b"".join(units)
	if len(joined) >= 2 and joined.startswith(b"__") and joined.endswith(b"__"):
		units[0] = b"%5F"
		joined = b"".join(units)
	if not units:
		return "%"
	if len(joined) > 250:
		pre = b""
		for u in units:
			if len(pre) + len(u) > 200:
				break
			pre += u
		joined = pre + b"%~" + b"%016x" % fnv1a64(name.encode("utf-8"))
	return joined.decode("utf-8")


def decode_name(fname):
	"""File name -> tensor name; None for a hashed (truncated) name."""
	if fname == "%":
		return ""
	b = fname.encode("utf-8")
	if b"%~" in b:
		return None
	out = bytearray()
	i = 0
	while i < len(b):
		if b[i] == 0x25:
			out.append(int(b[i + 1:i + 3], 16))
			i += 3
		else:
			out.append(b[i])
			i += 1
	return out.decode("utf-8")


# ---- verification of a mounted tree ------------------------------------------

# The views (.npy/, .txt/, .stats/, .safetensors/, .png/): directories in
# every mount's root that readdir does not list (unless -o views=visible)
# but a path reaches.
VIEW_DIRS = {".npy", ".txt", ".stats", ".safetensors", ".png"}

SIDECAR_KEYS = {"name", "dtype", "shape", "data_offsets", "nbytes", "numel",
		"offset", "numpy", "source"}


def sha256_file(path, off=0, n=None, bs=1 << 20):
	h = hashlib.sha256()
	with open(path, "rb") as f:
		f.seek(off)
		left = n
		while left is None or left > 0:
			chunk = f.read(bs if left is None else min(bs, left))
			if not chunk:
				break
			h.update(chunk)
			if left is not None:
				left -= len(chunk)
	return h.hexdigest()


def inspect_json(path):
	r = run([STFS_INSPECT, "--json", path])
	if r.returncode != 0:
		return None, r
	return json.loads(r.stdout.decode("utf-8")), r


def verify_tree(t, src, mnt, big=False, shell=True):
	"""Check everything a mount of src must show: the listing, every
	tensor's bytes (read several ways), every sidecar, the two root files.
	big: compare by hashing in chunks; shell: also use ls/stat/dd/cmp."""
	S = SrcFile(src)
	base = os.path.basename(src)
	names = {}
	for x in S.tensors:
		f = encode_name(x.name)
		t.check(f not in names, "two tensors encode to the same file name "
			"%r: %r and %r" % (f, names.get(f), x.name))
		names[f] = x
	want = set(names) | {f + ".json" for f in names} | {
		"__metadata__.json", "__summary__.json"}
	listing = os.listdir(mnt)
	for v in sorted(VIEW_DIRS):
		t.check(os.path.isdir(os.path.join(mnt, v)), "%s: hidden view %s "
			"reachable by path" % (base, v))
	t.eq(len(listing), len(set(listing)), "%s: no duplicate directory entries" % base)
	t.check(set(listing) == want, lambda: "%s: listing differs: missing %s, "
		"unexpected %s" % (base, short(sorted(want - set(listing))),
				   short(sorted(set(listing) - want))))
	st = os.stat(mnt)
	t.check(stat.S_ISDIR(st.st_mode), "%s: mount root is a directory" % base)
	t.check(st.st_mode & 0o222 == 0, "%s: root not writable (mode %o)"
		% (base, st.st_mode))

	for f, x in names.items():
		p = os.path.join(mnt, f)
		label = "%s: tensor %s" % (base, short(x.name, 80))
		try:
			st = os.stat(p)
		except OSError as e:
			t.check(False, "%s: stat %r: %s" % (label, f, e))
			continue
		t.check(stat.S_ISREG(st.st_mode), "%s is a regular file" % label)
		t.eq(stat.S_IMODE(st.st_mode), 0o444, "%s mode" % label)
		t.eq(st.st_size, x.nbytes, "%s size" % label)
		if big:
			t.eq(sha256_file(p), sha256_file(src, x.offset, x.nbytes),
			     "%s: sha256 of the bytes" % label)
		else:
			with open(p, "rb") as fh:
				data = fh.read()
			t.check(data == S.read(x), "%s: bytes differ from the "
				"source slice" % label)
			verify_preads(t, p, S, x, label)
		verify_sidecar(t, os.path.join(mnt, f + ".json"), x, base, label)
		if shell:
			verify_shell(t, p, S, x, label, big)

	# root files
	with open(os.path.join(mnt, "__metadata__.json"), "rb") as fh:
		meta = json.loads(fh.read().decode("utf-8"))
	t.eq(meta, S.metadata if S.metadata is not None else {},
	     "%s: __metadata__.json" % base)
	for rf in ("__metadata__.json", "__summary__.json"):
		st = os.stat(os.path.join(mnt, rf))
		t.check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o444,
			"%s: %s is a 0444 regular file (mode %o)" % (base, rf, st.st_mode))
	with open(os.path.join(mnt, "__summary__.json"), "rb") as fh:
		raw = fh.read()
	t.eq(os.stat(os.path.join(mnt, "__summary__.json")).st_size, len(raw),
	     "%s: __summary__.json st_size matches its content" % base)
	summ = json.loads(raw.decode("utf-8"))
	verify_summary(t, summ, S, "%s: __summary__.json" % base)
	ij, r = inspect_json(src)
	if t.check(ij is not None, "%s: stfs-inspect --json exits 0" % base):
		t.eq(summ, ij, "%s: __summary__.json equals stfs-inspect --json" % base)
	# a name that is not there
	try:
		os.stat(os.path.join(mnt, "no such tensor \x01"))
		t.check(False, "%s: stat of a missing name fails" % base)
	except OSError as e:
		t.eq(e.errno, errno.ENOENT, "%s: errno of a missing name" % base)
	return S


def verify_summary(t, summ, S, label):
	t.check(isinstance(summ, dict), "%s is an object" % label)
	if not isinstance(summ, dict):
		return
	t.eq(summ.get("tensors"), len(S.tensors), "%s tensors" % label)
	t.eq(summ.get("bytes"), sum(x.nbytes for x in S.tensors), "%s bytes" % label)
	t.eq(summ.get("header_bytes"), S.n, "%s header_bytes" % label)
	params = {k: v for k, v in S.parameters().items()}
	got = summ.get("parameters")
	t.check(isinstance(got, dict), "%s parameters is an object" % label)
	if isinstance(got, dict):
		t.eq({k: v for k, v in got.items() if v},
		     {k: v for k, v in params.items() if v},
		     "%s parameters (non-zero counts)" % label)
		t.check(all(k in params for k in got), "%s parameters: only dtypes "
			"present in the file (%s)" % (label, sorted(got)))
	t.eq(summ.get("parameters_total"), sum(params.values()),
	     "%s parameters_total" % label)
	t.eq(summ.get("metadata"), S.metadata if S.metadata is not None else {},
	     "%s metadata" % label)


def verify_sidecar(t, p, x, base, label):
	try:
		with open(p, "rb") as fh:
			raw = fh.read()
		st = os.stat(p)
	except OSError as e:
		t.check(False, "%s: sidecar %r: %s" % (label, p, e))
		return
	t.eq(st.st_size, len(raw), "%s: sidecar st_size matches content" % label)
	t.eq(stat.S_IMODE(st.st_mode), 0o444, "%s: sidecar mode" % label)
	try:
		j = json.loads(raw.decode("utf-8"))
	except ValueError as e:
		t.check(False, "%s: sidecar is not JSON: %s" % (label, e))
		return
	keys = set(SIDECAR_KEYS)
	np = gen.NUMPY.get(x.dtype)
	if np is None:
		keys.add("decode")
	t.eq(set(j), keys, "%s: sidecar keys" % label)
	t.check(j.get("name") == x.name, lambda: "%s: sidecar name %s != %s"
		% (label, short(j.get("name")), short(x.name)))
	t.eq(j.get("dtype"), x.dtype, "%s: sidecar dtype" % label)
	t.eq(j.get("shape"), x.shape, "%s: sidecar shape" % label)
	t.eq(j.get("data_offsets"), [x.begin, x.end], "%s: sidecar data_offsets" % label)
	t.eq(j.get("nbytes"), x.nbytes, "%s: sidecar nbytes" % label)
	t.eq(j.get("numel"), x.numel, "%s: sidecar numel" % label)
	t.eq(j.get("offset"), x.offset, "%s: sidecar offset" % label)
	t.eq(j.get("numpy"), np, "%s: sidecar numpy" % label)
	t.eq(j.get("source"), base, "%s: sidecar source" % label)
	if np is None:
		d = j.get("decode")
		t.check(isinstance(d, str) and len(d) > 10,
			"%s: sidecar decode is a sentence: %s" % (label, short(d)))
	t.check(raw.endswith(b"\n"), "%s: sidecar ends with a newline" % label)


def verify_preads(t, p, S, x, label):
	"""Reads at odd offsets and sizes, across and past the end."""
	n = x.nbytes
	src = S.read(x)
	picks = [(0, 1), (0, n), (n, 10), (n + 100, 10)]
	if n > 1:
		picks += [(n - 1, 1), (n - 1, 4096), (1, n - 2), (n // 2, 3),
			  (n // 3, 131072 + 7)]
	fd = os.open(p, os.O_RDONLY)
	try:
		for off, cnt in picks:
			got = os.pread(fd, cnt, off)
			if not t.check(got == src[off:off + cnt], "%s: pread(off=%d, n=%d) "
				       "returned %d bytes that differ" % (label, off,
									  cnt, len(got))):
				break
	finally:
		os.close(fd)


def cmp_sharded(t, index, mnt, label, timeout=60):
	"""cmp of every tensor file of a sharded model with its bytes in its
	local shard (beside index), each in a process of its own with a
	deadline: a stuck mount hangs a read; the first one past it ends the
	walk."""
	with open(index) as f:
		wm = json.load(f)["weight_map"]
	shards = {}
	for name, shard in sorted(wm.items()):
		if shard not in shards:
			shards[shard] = SrcFile(os.path.join(
				os.path.dirname(index), shard))
		S = shards[shard]
		x = S.by_name[name]
		try:
			r = run(["cmp", "-n", str(x.nbytes), "-i", "0:%d" % x.offset,
				 os.path.join(mnt, encode_name(name)), S.path],
				timeout=timeout)
		except subprocess.TimeoutExpired:
			t.check(False, "%s: cmp of %s did not end within %d s"
				% (label, name, timeout))
			return
		t.check(r.returncode == 0, "%s: %s byte-exact: %s" % (label, name,
			(r.stdout + r.stderr).decode(errors="replace").strip()))


def verify_shell(t, p, S, x, label, big):
	"""ls, stat(1), cmp against the source slice, dd skip/count."""
	r = run(["stat", "-c", "%s %a %F", p])
	t.eq(r.stdout.decode().split(" ", 2) if r.returncode == 0 else r.stderr,
	     [str(x.nbytes), "444", "regular file\n" if x.nbytes else "regular empty file\n"],
	     "%s: stat(1)" % label)
	r = run(["cmp", "-n", str(x.nbytes), "-i", "0:%d" % x.offset, p, S.path],
		timeout=300)
	t.check(r.returncode == 0, "%s: cmp with the source slice: %s"
		% (label, (r.stdout + r.stderr).decode(errors="replace").strip()))
	if x.nbytes == 0:
		r = run(["cat", p])
		t.check(r.returncode == 0 and r.stdout == b"", "%s: cat of an empty "
			"tensor prints nothing" % label)
		return
	# dd: a block in the middle, and the tail (a short last block)
	bs = 7 if x.nbytes < 4096 else 4096
	nblk = max(1, x.nbytes // bs)
	skip = nblk // 2
	count = 3
	r = run(["dd", "if=" + p, "bs=%d" % bs, "skip=%d" % skip, "count=%d" % count,
		 "status=none"])
	want = S.read(x, skip * bs, min(count * bs, x.nbytes - skip * bs))
	t.check(r.returncode == 0 and r.stdout == want, "%s: dd bs=%d skip=%d "
		"count=%d differs" % (label, bs, skip, count))
	if not big:
		r = run(["dd", "if=" + p, "bs=1", "skip=%d" % (x.nbytes - 1),
			 "status=none"])
		t.check(r.returncode == 0 and r.stdout == S.read(x, x.nbytes - 1, 1),
			"%s: dd of the last byte" % label)


def ls_l(t, mnt):
	"""`ls -la` works and shows every entry."""
	r = run(["ls", "-la", "--quoting-style=escape", mnt])
	t.check(r.returncode == 0, "ls -la %s: %s" % (mnt, r.stderr))
	return r.stdout.decode("utf-8", "replace")


# ---- running a test script ----------------------------------------------------

def require_binaries(t, inspect_only=False):
	for var, path in (("STFS_INSPECT", STFS_INSPECT),) + (
			() if inspect_only else (("STFS", STFS),)):
		if not path or not os.access(path, os.X_OK):
			t.fatal("%s=%r is not an executable (run through `meson "
				"test`)" % (var, path))


def main(name, fn, mounts=True, binaries=True):
	t = Test(name)
	signal.signal(signal.SIGTERM, _on_signal)
	signal.signal(signal.SIGHUP, _on_signal)
	rc = 0
	try:
		if mounts:
			why = can_mount()
			if why:
				raise Skip("cannot mount (%s)" % why)
			if os.geteuid() == 0 and shutil.which("fusermount3") is None:
				t.fatal("running as root with /dev/fuse, but "
					"fusermount3 is missing: install fuse3")
		if binaries:
			require_binaries(t, inspect_only=not mounts)
		fn(t)
	except Skip as e:
		print("*" * 70)
		print("SKIP: %s" % e)
		print("*" * 70, flush=True)
		_cleanup_all()
		sys.exit(77)
	except Fatal:
		rc = 1
	except SystemExit as e:
		print("%s: interrupted (%s)" % (name, e.code), flush=True)
		t.failures.append("interrupted")
		rc = 1
	except BaseException:
		traceback.print_exc()
		t.failures.append("exception")
		rc = 1
	finally:
		_cleanup_all()
	if t.failures:
		print("%s: %d of %d checks FAILED" % (name, len(t.failures),
						       t.checks), flush=True)
		if rc == 0:
			rc = 1
		first = t.failures[0]
		print("first failure: %s" % first.splitlines()[0] if first else "",
		      flush=True)
	else:
		print("%s: %d checks passed" % (name, t.checks), flush=True)
	sys.exit(rc)


def real_files():
	if not os.path.isdir(STFS_REAL):
		return []
	return sorted(os.path.join(STFS_REAL, f) for f in os.listdir(STFS_REAL)
		      if f.endswith(".safetensors"))


def gen_file(kind, d=None):
	"""Generate one of gen.py's files into a temp dir; returns its path."""
	d = d or tmpdir("src")
	p = os.path.join(d, kind + ".safetensors")
	gen.GENERATORS[kind](p)
	return p
