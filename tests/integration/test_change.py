#!/usr/bin/env python3
"""int-change: a source that changes under a mount (issue 14, items 1, 2).

  shrink   4 reader processes make random preads (4 KiB - 1 MiB, each after
           POSIX_FADV_DONTNEED) of a 32 MiB tensor while the source is
           truncated somewhere in its second half and restored, again and
           again, for a few seconds: every read either equals the source's
           bytes or fails with EIO - never a short reply that the kernel
           takes for the end of the file (a read(2) spanning several FUSE
           reads may return the source's bytes before the failing one, as
           POSIX says; then the rest fails with EIO); the mounted file's
           size never changes.
  inplace  `cp new old` of a same-size file over a mounted source while a
           reader reads the whole tensor again and again: no read mixes the
           two versions (each is all old bytes or EIO), every read after the
           change fails with EIO, the change is logged once, and a remount
           serves the new file.
"""

import json
import os
import random
import subprocess
import time

import harness
from harness import gen

SECONDS = float(os.environ.get("STFS_CHANGE_SECONDS", "3"))
BIG = 32 << 20


def write_model(path, spec, seed):
	rng = random.Random(seed)
	ts = [(name, dt, shape, rng.randbytes(gen.nbytes_of(dt, shape)))
	      for name, dt, shape in spec]
	gen.write_safetensors(path, ts, {"format": "pt"})
	return harness.SrcFile(path)


def reader(i, wfd, path, orig, toff, nbytes, seconds):
	"""Random preads until the deadline; report counts and violations."""
	rng = random.Random(77 + i)
	ok = eio = 0
	bad = []
	fd = os.open(path, os.O_RDONLY)
	deadline = time.monotonic() + seconds
	while time.monotonic() < deadline and len(bad) < 5:
		n = rng.randrange(4096, (1 << 20) + 1)
		off = rng.randrange(nbytes)
		os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
		want = orig[toff + off:toff + min(off + n, nbytes)]
		try:
			got = os.pread(fd, n, off)
		except OSError as e:
			if e.errno == 5:
				eio += 1
			else:
				bad.append("pread %d at %d: %s" % (n, off, e))
			continue
		if len(got) < len(want):
			# A read(2) the kernel splits into several FUSE reads
			# returns what came before a failing one (POSIX); that
			# is a prefix of the source, and the rest fails with
			# EIO.  A short reply taken for the end of the file
			# would read 0 bytes here instead.
			try:
				rest = os.pread(fd, len(want) - len(got),
						off + len(got))
				bad.append("short read: %d of %d bytes at %d, and "
					   "the rest reads %d bytes, no EIO"
					   % (len(got), len(want), off, len(rest)))
			except OSError as e:
				if e.errno != 5 or got != want[:len(got)]:
					bad.append("short read: %d of %d bytes at %d "
						   "(%s)" % (len(got), len(want), off,
							     e))
				else:
					eio += 1
		elif len(got) > len(want):
			bad.append("long read: %d of %d bytes at %d"
				   % (len(got), len(want), off))
		elif got != want:
			bad.append("%d bytes at %d differ from the source"
				   % (n, off))
		else:
			ok += 1
	st = os.fstat(fd).st_size
	os.close(fd)
	os.write(wfd, json.dumps({"ok": ok, "eio": eio, "bad": bad,
				  "size": st}).encode())
	os.close(wfd)
	os._exit(0)


def case_shrink(t):
	d = harness.tmpdir("shrink")
	src = os.path.join(d, "model.safetensors")
	S = write_model(src, [("small", "U8", [4096]),
			      ("big", "U8", [BIG])], 14)
	with open(src, "rb") as f:
		orig = f.read()
	x = next(y for y in S.tensors if y.name == "big")
	with harness.Mount(t, src) as m:
		p = os.path.join(m.path, harness.encode_name(x.name))
		t.eq(os.stat(p).st_size, x.nbytes, "shrink: size before")
		kids = []
		for i in range(4):
			r, w = os.pipe()
			pid = os.fork()
			if pid == 0:
				os.close(r)
				try:
					reader(i, w, p, orig, x.offset, x.nbytes,
					       SECONDS + 1)
				finally:
					os._exit(3)
			os.close(w)
			kids.append((pid, r))
		# let the readers see the intact file first
		time.sleep(0.5)
		rng = random.Random(5)
		cuts = 0
		deadline = time.monotonic() + SECONDS
		with open(src, "r+b") as f:
			while time.monotonic() < deadline:
				cut = x.offset + x.nbytes // 2 + rng.randrange(
					x.nbytes // 2)
				f.truncate(cut)
				time.sleep(0.01)
				f.seek(cut)
				f.write(orig[cut:])
				f.flush()
				cuts += 1
				time.sleep(0.02)
		ok = eio = 0
		for pid, r in kids:
			raw = b""
			while True:
				b = os.read(r, 65536)
				if not b:
					break
				raw += b
			os.close(r)
			_, status = os.waitpid(pid, 0)
			rep = json.loads(raw.decode() or "{}")
			t.check(status == 0 and rep and not rep["bad"],
				"shrink: reader %d: every read is the source's bytes "
				"or EIO, never short: %s" % (pid, rep.get("bad")))
			t.eq(rep.get("size"), x.nbytes, "shrink: the reader's fstat "
			     "size is unchanged")
			ok += rep.get("ok", 0)
			eio += rep.get("eio", 0)
		t.check(ok > 0, "shrink: reads succeeded before the first cut "
			"(%d)" % ok)
		t.check(eio > 0, "shrink: reads failed with EIO after it (%d)"
			% eio)
		t.note("shrink: %d cuts, %d reads equal to the source, %d EIO"
		       % (cuts, ok, eio))
		t.eq(os.stat(p).st_size, x.nbytes, "shrink: stat size unchanged "
		     "after the cuts")
		try:
			with open(p, "rb") as f:
				f.read()
			t.check(False, "shrink: a read after the cuts fails")
		except OSError as e:
			t.eq(e.errno, 5, "shrink: a read after the cuts fails "
			     "with EIO")
		t.check(m.proc.poll() is None, "shrink: the daemon survives")


def whole_reads(wfd, ready, path, old, seconds):
	"""Read the whole file again and again: each read is all old bytes,
	or fails; report.  One byte on ready after the first good read."""
	res = {"old": 0, "eio": 0, "bad": []}
	deadline = time.monotonic() + seconds
	while time.monotonic() < deadline and len(res["bad"]) < 5:
		fd = os.open(path, os.O_RDONLY)
		os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
		out = []
		try:
			while True:
				b = os.read(fd, 1 << 20)
				if not b:
					break
				out.append(b)
		except OSError as e:
			if e.errno == 5:
				res["eio"] += 1
			else:
				res["bad"].append("read: %s" % e)
			os.close(fd)
			continue
		os.close(fd)
		data = b"".join(out)
		if data == old:
			res["old"] += 1
			if res["old"] == 1:
				os.write(ready, b"1")
		else:
			res["bad"].append("a whole read of %d bytes is not the old "
					  "tensor" % len(data))
	os.write(wfd, json.dumps(res).encode())
	os.close(wfd)
	os._exit(0)


def case_inplace(t):
	d = harness.tmpdir("inplace")
	src = os.path.join(d, "model.safetensors")
	new = os.path.join(d, "new.safetensors")
	spec = [("w", "U8", [BIG]), ("b", "F32", [1000])]
	S = write_model(src, spec, 1)
	N = write_model(new, spec, 2)
	old = {x.name: S.read(x) for x in S.tensors}
	t.eq(os.path.getsize(src), os.path.getsize(new), "inplace: same size")
	with harness.Mount(t, src) as m:
		P = lambda x: os.path.join(m.path, harness.encode_name(x.name))  # noqa: E731
		x = next(y for y in S.tensors if y.name == "w")
		r, w = os.pipe()
		rr, rw = os.pipe()
		pid = os.fork()
		if pid == 0:
			os.close(r)
			os.close(rr)
			try:
				whole_reads(w, rw, P(x), old[x.name], SECONDS + 1)
			finally:
				os._exit(3)
		os.close(w)
		os.close(rw)
		# cp once the reader has read the old tensor whole (or gave up)
		os.read(rr, 1)
		os.close(rr)
		res = subprocess.run(["cp", new, src])
		t.eq(res.returncode, 0, "inplace: cp new over the mounted file")
		raw = b""
		while True:
			b = os.read(r, 65536)
			if not b:
				break
			raw += b
		os.close(r)
		os.waitpid(pid, 0)
		rep = json.loads(raw.decode() or "{}")
		t.check(rep and not rep["bad"], "inplace: no whole read mixes "
			"versions or returns the new one: %s" % rep.get("bad"))
		t.check(rep.get("old", 0) > 0, "inplace: whole reads before the "
			"change return the old tensor (%s)" % rep.get("old"))
		t.check(rep.get("eio", 0) > 0, "inplace: whole reads after it fail "
			"with EIO (%s)" % rep.get("eio"))
		for y in S.tensors:
			try:
				with open(P(y), "rb") as f:
					# pages cached before the change hold the
					# old bytes whole until the helper thread
					# drops them; ask the daemon
					os.posix_fadvise(f.fileno(), 0, 0,
							 os.POSIX_FADV_DONTNEED)
					f.read()
				t.check(False, "inplace: %s reads after the change"
					% y.name)
			except OSError as e:
				t.eq(e.errno, 5, "inplace: %s fails with EIO after the "
				     "change" % y.name)
			t.eq(os.stat(P(y)).st_size, y.nbytes,
			     "inplace: %s keeps its size" % y.name)
		# generated files tell about the header read at mount time
		with open(os.path.join(m.path, "__summary__.json"), "rb") as f:
			t.check(json.loads(f.read()), "inplace: __summary__.json "
				"still reads")
	with open(m.logpath, "rb") as f:
		log = f.read().decode("utf-8", "replace")
	t.eq(log.count("changed while mounted"), 1, "inplace: logged once: %r"
	     % log[-300:])
	t.check("model.safetensors" in log and "renaming" in log,
		"inplace: the log names the file and says what to do instead")
	with harness.Mount(t, src) as m:
		for y in N.tensors:
			with open(os.path.join(m.path, harness.encode_name(y.name)),
				  "rb") as f:
				t.check(f.read() == N.read(y), "inplace: a remount "
					"serves the new %s" % y.name)


def run(t):
	case_shrink(t)
	case_inplace(t)


harness.main("int-change", run, mounts=True)
