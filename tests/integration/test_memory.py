#!/usr/bin/env python3
"""int-memory: stfs within the memory users give it (issue 38).

Users run stfs under `ulimit -v` (HPC schedulers, systemd's MemoryMax,
small pods), which counts address space, not what is resident.

  limit    every file of viewfix.py's models (raw, strided torch views,
           sidecars, .npy/, .txt/, .stats/, .png/, .dequant/,
           .safetensors/, GGUF dequantized) and of a sharded set of 48 MiB,
           read by 8 readers at once, twice, as users mount (a daemon)
           under `ulimit -v 262144`: every byte equal to a clean mount's
           (and the tensors to the source's).  Before, the daemon reserved
           248 MB idle (8 MiB of stack and a 64 MiB malloc arena per
           thread) and reads died with ENOMEM and ENOTCONN.
  start    under smaller limits (20 to 100 MiB) `stfs SRC MNT` either
           mounts and serves a read, or exits non-zero with one line and
           leaves no mount; before, at ~60 MiB it exited 0 with no mount.

  ckpt     a PyTorch checkpoint of 100,000 tensors (24 MB, as torch.save
           writes it) mounted as users do under `ulimit -v 262144`: every
           tensor listed, a sample of them read and equal to the source's,
           the daemon's peak resident memory (VmHWM) under 64 MiB; before,
           224 MB (2.2 KB a tensor: every value of the pickle, the memo,
           libzip's directory).
  values   pickles of 4 Mi values of a byte or two each (None, [], 1; a
           few KB of file, deflated), as `stfs FILE MNT` under `ulimit -v
           262144`: refused in one line naming the memory it would take,
           nothing mounted, the peak resident memory of stfs and its
           daemon under 64 MiB; before, 372 MB until the value limit.

Built with ASan, which maps terabytes of shadow memory, no ulimit -v can
hold: the reads run without it (with the readers and the checks), and a
mount that cannot start is made by refusing libfuse its first worker's
read buffer (ASAN_OPTIONS max_allocation_size_mb=1): the same path, a
non-zero exit and one line.  The figures (VmPeak, VmSize, VmHWM, threads
of each daemon) are printed; scripts/bench-memory makes them too.
"""

import concurrent.futures
import os
import re
import stat
import struct
import subprocess
import sys
import zipfile

import harness
import viewfix
from harness import gen

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_sharded  # noqa: E402

AS_KIB = 262144			# ulimit -v of the issue
RSS_MAX_KIB = 64 << 10		# peak resident memory of the issue
TENSORS = 100000
START_MIB = (20, 30, 40, 50, 60, 70, 80, 100)
READERS = 8


def sanitized():
	with open(harness.STFS, "rb") as f:
		return b"__asan_init" in f.read()


def limited(d, kib):
	"""A command that runs stfs under ulimit -v kib (0: none)."""
	path = os.path.join(d, "stfs-limited-%d" % kib)
	with open(path, "w") as f:
		f.write("#!/bin/sh\n%sexec %s \"$@\"\n"
			% ("ulimit -v %d || exit 99\n" % kib if kib else "",
			   harness.STFS))
	os.chmod(path, stat.S_IRWXU)
	return path


def status_of(pid):
	out = {}
	with open("/proc/%d/status" % pid) as f:
		for line in f:
			k, _, v = line.partition(":")
			if k in ("VmPeak", "VmSize", "VmHWM", "VmRSS", "Threads"):
				out[k] = int(v.split()[0])
	return out


def big_sharded(d):
	"""48 MiB in 3 shards: F32 and BF16 tensors of 2 to 6 MiB."""
	T = []
	for i in range(12):
		dt = "F32" if i % 2 == 0 else "BF16"
		n = ((1 + i % 3) << 20)
		T.append(("layers.%02d.weight" % i, dt, [n // (4 if dt == "F32"
							    else 2)],
			  (lambda i=i, n=n: gen.bulk_bytes(3800 + i, n))))
	idx, _ = gen_sharded.write_sharded(os.path.join(d, "big"), T, 3)
	fx = viewfix.Fixture("big", idx)
	for name, dt, shape, data in T:
		fx.add("raw", name, data())
		fx.add(".npy", os.path.join(".npy", name + ".npy"))
	fx.add(".stats", ".stats/layers.00.weight.json")
	fx.add(".safetensors", ".safetensors/model.safetensors")
	return fx


def read_file(path):
	"""The bytes of path, its page cache dropped first; or the OSError."""
	try:
		with open(path, "rb", buffering=0) as f:
			os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
			parts = []
			while True:
				b = f.read(1 << 20)
				if not b:
					return b"".join(parts)
				parts.append(b)
	except OSError as e:
		return e


def references(t, fixtures):
	refs = {}
	for fx in fixtures:
		with harness.Mount(t, fx.src) as m:
			for kind, rel, want in fx.files:
				got = read_file(os.path.join(m.path, rel))
				t.check(isinstance(got, bytes), "%s/%s: clean read "
					"(%r)" % (fx.label, rel, got))
				if want is not None:
					t.check(got == want, "%s/%s: clean read != "
						"the source's bytes" % (fx.label, rel))
				refs[(fx.label, rel)] = got
	return refs


def read_under(t, fx, refs, d, kib):
	"""fx mounted as users do (a daemon) under ulimit -v kib, every file
	read by READERS readers, twice; the daemon's figures."""
	saved = harness.STFS
	harness.STFS = limited(d, kib)
	try:
		with harness.Mount(t, fx.src, foreground=False,
				   ready_timeout=60) as m:
			jobs = [(rel, refs[(fx.label, rel)]) for _, rel, _ in
				fx.files] * 2

			def one(job):
				return job, read_file(os.path.join(m.path, job[0]))
			with concurrent.futures.ThreadPoolExecutor(READERS) as ex:
				for (rel, want), got in ex.map(one, jobs):
					t.check(got == want, lambda: "%s/%s under "
						"ulimit -v %d: %s" % (fx.label, rel,
						kib, got if isinstance(got, OSError)
						else "%d bytes, not the file's %d%s"
						% (len(got), len(want), "" if
						   len(got) != len(want) else
						   " (other bytes)")))
			st = status_of(m.pid)
	finally:
		harness.STFS = saved
	print("memory: %-8s ulimit -v %s: VmPeak %d KiB, VmSize %d KiB, "
	      "VmHWM %d KiB, %d threads" % (fx.label, kib or "none",
	      st["VmPeak"], st["VmSize"], st["VmHWM"], st["Threads"]))
	return st


def check_start(t, src, d, kib=0, env=None):
	"""`stfs SRC MNT` under ulimit -v kib: mounted and serving, or a
	non-zero exit with one line and nothing mounted.  The outcome."""
	mnt = os.path.join(harness.tmpdir("start"), "mnt")
	os.makedirs(mnt)
	cmd = [limited(d, kib), src, mnt]
	harness._become_subreaper()
	try:
		r = subprocess.run(cmd, stdin=subprocess.DEVNULL,
				   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
				   timeout=60, env=env)
	except subprocess.TimeoutExpired:
		t.check(False, "ulimit -v %d: stfs did not return in 60 s" % kib)
		harness.force_unmount(mnt)
		return "hang"
	# (a sanitizer's own warnings are its, not stfs's lines)
	err = "\n".join(x for x in r.stderr.decode(errors="replace")
			 .strip().splitlines() if not re.match(r"==\d+==", x))
	mounted = harness.is_mounted(mnt)
	pids = harness.daemon_pids(mnt)
	try:
		if r.returncode == 0:
			t.check(mounted, "ulimit -v %d: exit 0 and nothing "
				"mounted (%r)" % (kib, err))
			if mounted:
				got = read_file(os.path.join(mnt, "w"))
				t.check(isinstance(got, bytes) and
					got == b"\x07" * 4096 or
					isinstance(got, OSError),
					"ulimit -v %d: mounted, a read gave other "
					"bytes" % kib)
			return "mounted"
		t.check(not mounted, "ulimit -v %d: exit %d and %s mounted"
			% (kib, r.returncode, mnt))
		t.check(err and len(err.splitlines()) == 1 and
			err.startswith("stfs: ") or r.returncode == 127,
			"ulimit -v %d: exit %d with one line saying why: %r"
			% (kib, r.returncode, err))
		return err
	finally:
		if harness.is_mounted(mnt):
			harness.force_unmount(mnt)
		for p in pids:
			harness.wait_gone(p, 10)


def check_checkpoint(t, d, asan):
	"""TENSORS tensors, as users mount them under ulimit -v"""
	path = os.path.join(d, "many.pt")
	n = viewfix.many_tensors_checkpoint(path, TENSORS)
	saved = harness.STFS
	harness.STFS = limited(d, 0 if asan else AS_KIB)
	try:
		with harness.Mount(t, path, foreground=False,
				   ready_timeout=300) as m:
			names = os.listdir(m.path)
			t.eq(sum(1 for x in names if x.endswith(".block.weight")),
			     n, "100,000 tensors: every one listed")
			for i in list(range(0, n, 997)) + [n - 1]:
				got = read_file(os.path.join(
					m.path, "model.layers.%d.block.weight" % i))
				t.check(got == struct.pack("<4f", i, i + 1, i + 2,
							   i + 3),
					"100,000 tensors: tensor %d read (%r)"
					% (i, got if isinstance(got, OSError)
					   else len(got)))
			st = status_of(m.pid)
	finally:
		harness.STFS = saved
	print("memory: %d tensors (%.1f MB) ulimit -v %s: VmPeak %d KiB, "
	      "VmHWM %d KiB" % (n, os.path.getsize(path) / 1e6,
	      "none" if asan else AS_KIB, st["VmPeak"], st["VmHWM"]))
	if not asan:
		t.check(st["VmHWM"] < RSS_MAX_KIB, "100,000 tensors: the "
			"daemon's peak resident memory %d KiB, under %d KiB"
			% (st["VmHWM"], RSS_MAX_KIB))


# Runs stfs and reports the peak resident memory of it and of the daemon
# it forked and reaped (wait4 counts both).
BOUNDED = r"""
import os, sys
pid = os.fork()
if pid == 0:
	os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
	f.write(str(ru.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def check_values(t, d, asan):
	"""4 Mi values of a byte or two each: refused before the memory is
	spent"""
	for name, one in (("nones", b"N"), ("lists", b"]"), ("ints", b"K\x01")):
		path = os.path.join(d, name + ".pt")
		with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
			z.writestr("archive/data.pkl", b"\x80\x02]q\x00(" +
				   one * (1 << 22) + b"e.")
			z.writestr("archive/version", "3\n")
		mnt = os.path.join(harness.tmpdir("values"), "mnt")
		os.makedirs(mnt)
		report = os.path.join(d, name + ".maxrss")
		harness._become_subreaper()
		try:
			r = subprocess.run(["/usr/bin/python3", "-S", "-c", BOUNDED,
					    report, limited(d, 0 if asan else
							    AS_KIB), path, mnt],
					   stdin=subprocess.DEVNULL,
					   stdout=subprocess.PIPE,
					   stderr=subprocess.PIPE, timeout=120)
			err = "\n".join(x for x in r.stderr.decode(
				errors="replace").strip().splitlines()
				if not re.match(r"==\d+==", x))
			t.check(r.returncode != 0 and not harness.is_mounted(mnt),
				"%s.pt: refused, nothing mounted (exit %d)"
				% (name, r.returncode))
			t.check(len(err.splitlines()) == 1 and "values need more "
				"than" in err and "MiB of memory" in err,
				"%s.pt: one line saying why: %r" % (name, err))
		finally:
			if harness.is_mounted(mnt):
				harness.force_unmount(mnt)
		with open(report) as f:
			rss = int(f.read())
		print("memory: %s.pt (%d bytes, 4 Mi values): peak RSS %d KiB"
		      % (name, os.path.getsize(path), rss))
		if not asan:
			t.check(rss < RSS_MAX_KIB, "%s.pt: peak resident memory "
				"%d KiB, under %d KiB" % (name, rss,
							   RSS_MAX_KIB))


def run(t):
	asan = sanitized()
	d = harness.tmpdir("memory")
	fixtures = list(viewfix.models(os.path.join(d, "models")).values())
	fixtures.append(big_sharded(d))
	refs = references(t, fixtures)
	kib = 0 if asan else AS_KIB
	for fx in fixtures:
		st = read_under(t, fx, refs, d, kib)
		if not asan:
			t.check(st["VmPeak"] <= AS_KIB, "%s: VmPeak %d KiB under "
				"the limit" % (fx.label, st["VmPeak"]))

	check_checkpoint(t, d, asan)
	check_values(t, d, asan)

	# a mount that cannot start says so
	src = os.path.join(d, "small.safetensors")
	gen.write_safetensors(src, {"w": ("U8", [4096], b"\x07" * 4096)})
	if asan:
		env = dict(os.environ)
		env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
				       ":max_allocation_size_mb=1"
				       ":allocator_may_return_null=1").lstrip(":")
		got = check_start(t, src, d, env=env)
		t.check("could not start" in got, "refused its read buffer, "
			"the mount says it could not start: %r" % got)
		return
	outcomes = {}
	for mib in START_MIB:
		outcomes[mib] = check_start(t, src, d, mib << 10)
	print("memory: starts under ulimit -v: %s" % "; ".join(
		"%d MiB: %s" % (k, v) for k, v in sorted(outcomes.items())))
	t.check(outcomes[START_MIB[-1]] == "mounted", "ulimit -v %d MiB is "
		"enough for a small model" % START_MIB[-1])


harness.main("int-memory", run)
