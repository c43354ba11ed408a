#!/usr/bin/env python3
"""int-failalloc: an allocation that fails during a read is an error, never
another byte (issue 38).

stfs-failalloc (tests/failalloc/failalloc.c) is stfs whose own allocations
fail on demand: the Nth one counted from when the test arms it.  For every
file of viewfix.py's models (raw tensors, strided torch views gathered,
sidecars, .npy/, .txt/, .stats/, .dequant/, .safetensors/, GGUF
dequantized) the daemon, mounted as users run it, is armed with N = 1, 2,
... and the file is opened (its first lookups included) and read whole,
its page cache dropped first, until a read needs fewer than N allocations.
Each read must return the file's bytes (those a clean mount of stfs
serves, and for tensors the source's) or fail with EIO or ENOMEM: never
other bytes, never a short read, never ENOENT for a file that exists; an
error with nothing failed is a failure too.  Then the same file read again
with nothing failing is whole: a failure leaves nothing behind (a memo, a
half-built .dequant/, a cached negative entry).  Twice: failing only the
Nth allocation, and the Nth and all later ones (memory that stays short).

The sweep is bounded: at most CAP_N allocations per read and DEADLINE
seconds in all (a sanitizer build is slower; the figures are printed).
"""

import errno
import mmap
import os
import struct
import sys
import time

import harness
import nginx
import viewfix

CAP_N = 3000		# allocations a single read may need
DEADLINE = 240.0	# seconds for the whole sweep (a hang guard only)
OK_ERRNOS = (errno.EIO, errno.ENOMEM)
CTL = struct.Struct("<qqqq")	# arm, count, failed, mode
# stfs built with HTTP (meson sets it): the sweep of remote reads too
REMOTE = os.environ.get("STFS_FAILALLOC_REMOTE") == "1"
REMOTE_KINDS = ("raw", "strided", ".npy", ".stats", ".safetensors")
PER_KIND = 3


def failalloc_binary():
	b = os.environ.get("STFS_FAILALLOC_BIN")
	if not b:
		b = os.path.join(os.path.dirname(harness.STFS), "..", "tests",
				 "failalloc", "stfs-failalloc")
	return os.path.realpath(b)


class Ctl:
	"""The control file the daemon maps (failalloc.c)."""

	def __init__(self, path):
		with open(path, "wb") as f:
			f.write(b"\0" * 4096)
		self.f = open(path, "r+b")
		self.m = mmap.mmap(self.f.fileno(), 4096)

	def arm(self, n, mode):
		self.m[8:32] = struct.pack("<qqq", 0, 0, mode)
		self.m[0:8] = struct.pack("<q", n)

	def disarm(self):
		self.m[0:8] = struct.pack("<q", 0)
		_, count, failed, _ = CTL.unpack(self.m[0:32])
		return count, failed


def read_whole(path):
	"""(bytes, None) or (None, errno): open, drop the page cache, read."""
	try:
		fd = os.open(path, os.O_RDONLY)
	except OSError as e:
		return None, e.errno
	try:
		os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
		parts = []
		while True:
			b = os.read(fd, 1 << 20)
			if not b:
				break
			parts.append(b)
		return b"".join(parts), None
	except OSError as e:
		return None, e.errno
	finally:
		os.close(fd)


def references(t, fixtures):
	"""What a clean mount of stfs serves, checked against what the test
	knows (tensor bytes)."""
	refs = {}
	for label, fx in fixtures.items():
		with harness.Mount(t, fx.src) as m:
			for kind, rel, want in fx.files:
				with open(os.path.join(m.path, rel), "rb") as f:
					got = f.read()
				if want is not None:
					t.check(got == want, "%s/%s: clean read "
						"!= the source's bytes" % (label, rel))
				refs[(label, rel)] = got
	return refs


def chosen(fx, remote):
	"""The files swept: of each kind at most PER_KIND (the sharded set's
	24 tensors take the same paths; the checkpoint's and the GGUF file's
	each their own), one tensor's two pictures, and of a remote model the
	kinds whose bytes come from its sources in their own ways."""
	seen = {}
	for kind, rel, want in fx.files:
		if remote and (rel in fx.local_only or kind not in REMOTE_KINDS):
			continue
		seen[kind] = seen.get(kind, 0) + 1
		if fx.label == "sharded" and seen[kind] > PER_KIND:
			continue
		# a picture is drawn the same way whatever the tensor (its
		# values come through the .npy/ decoders, swept above)
		if kind == ".png" and seen[kind] > 2:
			continue
		yield kind, rel, want


def sweep(t, fx, mnt, ctl, mode, refs, deadline, stats, remote=False):
	for kind, rel, _ in chosen(fx, remote):
		path = os.path.join(mnt, rel)
		want = refs[(fx.label, rel)]
		what = "%s%s/%s (mode %d)" % ("remote " if remote else "",
					      fx.label, rel, mode)
		n = 0
		while True:
			n += 1
			if n > CAP_N or time.monotonic() > deadline:
				t.check(False, "%s: still failing allocations at "
					"N = %d" % (what, n))
				return
			ctl.arm(n, mode)
			got, err = read_whole(path)
			count, failed = ctl.disarm()
			stats["reads"] += 1
			if err is not None:
				stats["errors"] += 1
				t.check(err in OK_ERRNOS, "%s: allocation %d of %d "
					"failed: %s, not EIO or ENOMEM"
					% (what, n, count, errno.errorcode.get(
						err, err)))
				t.check(failed > 0, "%s: %s with no allocation "
					"failed (N = %d, %d made)" % (what,
					errno.errorcode.get(err, err), n, count))
			else:
				t.check(got == want, lambda: "%s: allocation %d "
					"failed and the read returned %d bytes, "
					"not the file's %d%s" % (what, n, len(got),
					len(want), "" if len(got) != len(want)
					else " (other bytes)"))
			if not failed:
				break
		stats["max_n"] = max(stats["max_n"], n)
		stats.setdefault(kind, 0)
		stats[kind] = max(stats[kind], n - 1)
		got, err = read_whole(path)
		t.check(err is None and got == want, "%s: after the sweep, a "
			"read with nothing failing: %s" % (what, "error %s" %
			errno.errorcode.get(err, err) if err else
			"%d bytes, other than the file's %d" % (len(got),
								 len(want))))


def sweep_remote(t, fixtures, d, ctl_path, ctl, refs, deadline, stats):
	"""The sharded set and the checkpoint by their URLs on 127.0.0.1,
	as users mount them: a daemon, the disk cache on (cold, the test's
	own)."""
	why = nginx.available()
	t.check(not why, "nginx for the remote sweep: %s" % why)
	if why:
		return
	root = os.path.join(d, "models")
	with nginx.Nginx(root, os.path.join(d, "ng")) as srv:
		for mode in (0, 1):
			for label in ("sharded", "torch"):
				fx = fixtures[label]
				env = {k: v for k, v in os.environ.items()
				       if not k.startswith("STFS_HTTP_") and
				       k != "STFS_CACHE"}
				env["STFS_CACHE_DIR"] = os.path.join(
					d, "cache-%s-%d" % (label, mode))
				env["STFS_FAILALLOC"] = ctl_path
				url = srv.url(os.path.relpath(fx.src, root))
				t0 = time.monotonic()
				with harness.Mount(t, url, env=env,
						   foreground=False,
						   ready_timeout=60) as m:
					sweep(t, fx, m.path, ctl, mode, refs,
					      deadline, stats, remote=True)
				print("failalloc: remote %s mode %d: %.1f s" % (
				      label, mode, time.monotonic() - t0))


def run(t):
	binary = failalloc_binary()
	t.check(os.access(binary, os.X_OK), "%s is built" % binary)
	d = harness.tmpdir("failalloc")
	fixtures = viewfix.models(os.path.join(d, "models"))
	refs = references(t, fixtures)
	ctl_path = os.path.join(d, "ctl")
	ctl = Ctl(ctl_path)
	env = dict(os.environ, STFS_FAILALLOC=ctl_path)
	deadline = time.monotonic() + DEADLINE
	start = time.monotonic()
	stats = {"reads": 0, "errors": 0, "max_n": 0}
	saved = harness.STFS
	harness.STFS = binary
	try:
		for mode in (0, 1):
			for label, fx in fixtures.items():
				# as users run it: a daemon (a fresh one per
				# pass, so first lookups and builds are swept)
				t0 = time.monotonic()
				with harness.Mount(t, fx.src, env=env,
						   foreground=False) as m:
					sweep(t, fx, m.path, ctl, mode, refs,
					      deadline, stats)
				print("failalloc: %s mode %d: %.1f s" % (
				      label, mode, time.monotonic() - t0))
		if REMOTE:
			sweep_remote(t, fixtures, d, ctl_path, ctl, refs,
				     deadline, stats)
	finally:
		harness.STFS = saved
	t.check(stats["errors"] > 0, "the sweep failed some reads (it "
		"reaches stfs's allocations)")
	print("failalloc: %d reads, %d failed with EIO/ENOMEM, at most %d "
	      "allocations in one read, %.1f s" % (stats["reads"],
	      stats["errors"], stats["max_n"] - 1, time.monotonic() - start))
	print("allocations per read, the most of each kind: %s" % ", ".join(
		"%s %d" % (k, v) for k, v in sorted(stats.items())
		if k not in ("reads", "errors", "max_n")))


harness.main("int-failalloc", run)
