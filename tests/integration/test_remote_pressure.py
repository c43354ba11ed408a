#!/usr/bin/env python3
"""int-remote-pressure: remote mounts under slow and broken servers, as
users run them (a daemon, the disk cache on, cold), issue 38.

  log        a daemon's messages reach MNT/.stfs/log (with times) and the
             source's last error .stfs/stats.json, also where syslog goes
             nowhere: a local file changed under the mount ("changed
             while mounted"), the same in a tree of two models (the
             root's .stfs/log and the model's), and a remote object
             replaced (its ETag)
  retry      a data answer 503 with Retry-After: 2: the retry of that
             range comes 2 s later at the earliest (not the backoff's
             0.25 s), and the reader gets its bytes
  gzip       data answers with Content-Encoding: gzip whose bodies are
             exactly the ranges' lengths (the stored bytes, said to be
             compressed): EIO, one log line naming the coding, nothing
             in the disk cache
  dns        a host that cannot resolve (under .invalid) as http://,
             s3:// (the endpoint) and hf:// (the Hub): the command exits
             non-zero within 3 s (not the read bound's 30 s) with one
             line that names DNS, and nothing is mounted
  trickle    a server that trickles 1 byte/s on one range a reader waits
             for: after the reader is killed, fusermount3 -u ends the
             daemon within 5 s (it stayed over 8 minutes), and so does
             SIGTERM with the reader still waiting (which then fails);
             either way the server sees its connections close
  floor      the same server, with http_timeout=2: a transfer slower than
             http_min_rate (1 KiB/s) over 6 x http_timeout is a stall, so
             the reader gets EIO (and .stfs/log says why) instead of
             waiting for ever; with -f, a server that trickles
             1,500 bytes/s (above the default floor) and
             http_min_rate=2K, http_timeout=1: the floor is settable,
             2048 bytes/s over 6 s
  interrupt  ten readers on a 1 MB/s link, each of its own 4 MiB tensor,
             that catch SIGINT as most do (dd, and Python reading with
             os.read: KeyboardInterrupt): Ctrl-C (SIGINT) to all of them,
             and all are gone within 1 s (they stayed 12 s and more,
             waiting for page-cache readahead the kernel never
             interrupts); the mount goes on serving
  ram        a daemon with the disk cache on reads a sharded model of
             192 MiB (nginx) byte for byte: the memory of its blocks
             stays within the block cache's default 64 MiB
             (.stfs/stats.json) and, but in a sanitizer build, the
             daemon's peak RSS within what it had once mounted + 64 MiB
             + 32 MiB for its transfers (it kept up to 512 MiB of blocks:
             157 MiB for this model); a second mount over that disk cache,
             with http_cache_mb=16, reads it again with no data request
             and its blocks within 16 MiB (+ a reader's few)

Every case but ram runs the daemon as users do (no -f) and again with
-f (the time bounds hold for a foreground process as well); each mount
starts with an empty disk cache of its own.

STFS_PRESSURE=case,... runs only those cases (by hand).  No assertion is
about speed: the bounds are the issue's, which only a hang would cross.
"""

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time

import harness
import httpd
import nginx
from harness import gen, run

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_sharded  # noqa: E402

ONLY = [c for c in os.environ.get("STFS_PRESSURE", "").split(",") if c]


def env_user(cache, **kw):
	"""A user's environment: no STFS_CACHE=off, no STFS_HTTP_* settings;
	only the disk cache's place is the test's own."""
	e = {k: v for k, v in os.environ.items()
	     if not k.startswith("STFS_HTTP_") and k != "STFS_CACHE"}
	e["STFS_CACHE_DIR"] = cache
	e.update(kw)
	return e


def read_text(path):
	with open(path, "rb") as f:
		return f.read().decode("utf-8", "replace")


STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4} "
		   r"(error|warning|notice|info): ")


def log_lines(t, mnt, label):
	"""MNT/.stfs/log as lines, each checked for its time stamp."""
	try:
		text = read_text(os.path.join(mnt, ".stfs", "log"))
	except OSError as e:
		t.check(False, "%s: .stfs/log: %s" % (label, e))
		return []
	lines = text.splitlines()
	for ln in lines:
		t.check(STAMP.match(ln), "%s: a log line starts with its time "
			"and priority: %r" % (label, ln))
	return lines


def stats_sources(t, mnt, label):
	try:
		return json.loads(read_text(os.path.join(mnt, ".stfs",
							 "stats.json")))["sources"]
	except (OSError, ValueError, KeyError) as e:
		t.check(False, "%s: .stfs/stats.json: %s" % (label, e))
		return []


def read_errno(path):
	"""0 when the whole file reads, else the errno."""
	try:
		with open(path, "rb") as f:
			while f.read(1 << 20):
				pass
		return 0
	except OSError as e:
		return e.errno

MODES = [("daemon", False), ("-f", True)]


def case_log(t, d):
	# a local model changed in place under the mount
	for mode, fg in MODES:
		local = os.path.join(d, "local-%s.safetensors" % fg)
		label = "local, " + mode
		gen.write_safetensors(local, [("a", "U8", [4096],
					       gen.bulk_bytes(1, 4096))], {})
		with harness.Mount(t, local, env=env_user(os.path.join(
				d, "c0-%s" % fg)), foreground=fg) as m:
			before = log_lines(t, m.path, label)
			t.check(not any("changed while mounted" in ln
					for ln in before),
				"%s: nothing changed yet: %r" % (label, before))
			with open(local, "r+b") as f:
				f.seek(200)
				f.write(b"xx")
			t.eq(read_errno(os.path.join(m.path, "a")), errno.EIO,
			     "%s: a read after the change" % label)
			lines = log_lines(t, m.path, label)
			t.check(any(ln.startswith(time.strftime("%Y-")) and
				    os.path.basename(local) +
				    ": changed while mounted" in ln and
				    "every further read of it fails with EIO"
				    in ln for ln in lines),
				"%s: .stfs/log holds the change: %r"
				% (label, lines))
			src = stats_sources(t, m.path, label)
			err = src[0].get("last_error") if src else None
			t.check(isinstance(err, dict) and "changed while mounted"
				in err.get("message", "") and STAMP.match(
					err.get("time", "") + " error: "),
				"%s: stats.json's last error: %r" % (label, err))

	# a tree of two local models: the root has a .stfs/log too
	tree = os.path.join(d, "tree")
	for name in ("one", "two"):
		os.makedirs(os.path.join(tree, name))
		gen.write_safetensors(os.path.join(tree, name, "model.safetensors"),
				      [("a", "U8", [4096], gen.bulk_bytes(3, 4096))],
				      {})
	with harness.Mount(t, tree, env=env_user(os.path.join(d, "c2")),
			   foreground=False) as m:
		with open(os.path.join(tree, "two", "model.safetensors"),
			  "r+b") as f:
			f.seek(200)
			f.write(b"xx")
		t.eq(read_errno(os.path.join(m.path, "two", "a")), errno.EIO,
		     "tree: a read after the change")
		for where in ("", "two"):
			lines = log_lines(t, os.path.join(m.path, where),
					  "tree " + (where or "root"))
			t.check(any("changed while mounted" in ln for ln in lines),
				"tree: %s/.stfs/log holds the change: %r"
				% (where or "MNT", lines))

	# a remote object replaced under a daemon's mount
	www = os.path.join(d, "www-log")
	os.makedirs(www)
	path = os.path.join(www, "m.safetensors")
	gen.write_safetensors(path, [("a", "U8", [200000],
				      gen.bulk_bytes(2, 200000)),
				     ("b", "U8", [200000],
				      gen.bulk_bytes(3, 200000))], {})
	with httpd.Server(www) as srv:
		url = srv.url("m.safetensors")
		with harness.Mount(t, url, env=env_user(os.path.join(d, "c1")),
				   foreground=False) as m:
			src = stats_sources(t, m.path, "remote")
			t.check(src and src[0].get("last_error", 1) is None,
				"remote: no error yet: %r" % src)
			srv.etag = '"another"'
			t.eq(read_errno(os.path.join(m.path, "b")), errno.EIO,
			     "remote: a read after the object changed")
			lines = log_lines(t, m.path, "remote")
			t.check(any(url in ln and "the remote object changed"
				    in ln and " error: " in ln for ln in lines),
				"remote: .stfs/log holds the change: %r" % lines)
			src = stats_sources(t, m.path, "remote")
			err = src[0].get("last_error") if src else None
			t.check(isinstance(err, dict) and "changed" in
				err.get("message", ""),
				"remote: stats.json's last error: %r" % err)


def extent_bytes(cache):
	"""Bytes of blocks the disk cache holds (its extent files eN)."""
	return sum(os.path.getsize(os.path.join(r, f))
		   for r, _, fs in os.walk(cache) for f in fs
		   if f[:1] == "e" and f[1:].isdigit())


def two_tensors(www, seed):
	"""A model of two 3 MiB tensors past the open request's 64 KiB."""
	os.makedirs(www)
	path = os.path.join(www, "m.safetensors")
	gen.write_safetensors(path, [("a", "U8", [3 << 20],
				      gen.bulk_bytes(seed, 3 << 20)),
				     ("b", "U8", [3 << 20],
				      gen.bulk_bytes(seed + 1, 3 << 20))], {})
	return harness.SrcFile(path)


def case_retry(t, d):
	S = two_tensors(os.path.join(d, "www"), 10)
	x = S.by_name["b"]
	with httpd.Server(os.path.dirname(S.path)) as srv:
		for mode, fg in MODES:
			label = "retry, " + mode
			with harness.Mount(t, srv.url("m.safetensors"),
					   env=env_user(os.path.join(
						   d, "cache-%s" % fg)),
					   foreground=fg) as m:
				mark = srv.mark()
				srv.busy = 1	# the first data answer: 503
				srv.retry_after = "2"
				try:
					r = run(["cat", os.path.join(m.path,
								     "b")],
						timeout=60)
					got, err = r.stdout, r.stderr
				except subprocess.TimeoutExpired:
					got, err = b"", b"(still reading after 60 s)"
				t.check(got == S.read(x), "%s: the reader gets "
					"the bytes: %s" % (label, err.decode(
						errors="replace")))
				log = srv.since(mark)
			busy = [q for q in log if q["status"] == 503]
			t.eq(len(busy), 1, "%s: one answer 503" % label)
			for q in busy:
				again = [p for p in log
					 if p["range"] == q["range"] and
					 p["time"] > q["time"]]
				t.check(again, "%s: %s asked again"
					% (label, q["range"]))
				if again:
					gap = again[0]["time"] - q["time"]
					t.note("%s: %s asked again %.2f s after "
					       "the 503" % (label, q["range"], gap))
					t.check(gap >= 2.0, "%s: Retry-After: 2 "
						"honoured: %.2f s" % (label, gap))


def case_gzip(t, d):
	S = two_tensors(os.path.join(d, "www"), 20)
	with httpd.Server(os.path.dirname(S.path)) as srv:
		for mode, fg in MODES:
			label = "gzip, " + mode
			cache = os.path.join(d, "cache-%s" % fg)
			srv.coding = None
			mark = srv.mark()
			with harness.Mount(t, srv.url("m.safetensors"),
					   env=env_user(cache),
					   foreground=fg) as m:
				srv.coding = "gzip"
				for name in ("b", "a"):
					t.eq(read_errno(os.path.join(m.path,
								     name)),
					     errno.EIO, "%s: a read of %s"
					     % (label, name))
				lines = [ln for ln in log_lines(t, m.path, label)
					 if "Content-Encoding: gzip" in ln]
				t.check(lines and "EIO" in lines[0],
					"%s: .stfs/log says why: %r"
					% (label, lines))
				src = stats_sources(t, m.path, label)
				err = src[0].get("last_error") if src else None
				t.check(isinstance(err, dict) and
					"Content-Encoding" in
					err.get("message", ""), "%s: stats.json's "
					"last error: %r" % (label, err))
				# every request asked for the stored bytes
				t.check(all(q["headers"].get(
					"Accept-Encoding") == "identity"
					for q in srv.since(mark)),
					"%s: every request asks for identity"
					% label)
			# after the unmount the daemon has written all it was
			# going to
			t.eq(extent_bytes(cache), 0, "%s: bytes in the disk "
			     "cache" % label)


def case_dns(t, d):
	mnt = os.path.join(d, "mnt")
	os.makedirs(mnt)
	# the system resolver's own wait is not stfs's: at most a second
	env = env_user(os.path.join(d, "cache"), RES_OPTIONS="timeout:1 "
		       "attempts:1", AWS_ENDPOINT_URL="http://s3.nosuch.invalid"
		       ":9000", AWS_ACCESS_KEY_ID="AKIDEXAMPLE",
		       AWS_SECRET_ACCESS_KEY="secret", HF_ENDPOINT="http://hub."
		       "nosuch.invalid", HF_HUB_CACHE=os.path.join(d, "hub"))
	for mode, fg in MODES:
		for src in ("http://nosuch.invalid/m.safetensors",
			    "s3://bucket/models/", "hf://org/name"):
			label = "dns, %s: %s" % (mode, src)
			t0 = time.monotonic()
			try:
				r = run([harness.STFS] + (["-f"] if fg else []) +
					[src, mnt], timeout=40, env=env)
				rc, err = r.returncode, r.stderr.decode(
					errors="replace")
			except subprocess.TimeoutExpired:
				rc, err = None, "(still running after 40 s)"
			took = time.monotonic() - t0
			t.note("%s: exit %s after %.2f s: %s"
			       % (label, rc, took, err.strip()))
			t.check(rc not in (0, None), "%s: exit status %s"
				% (label, rc))
			t.check(took <= 3.0, "%s: exits within 3 s (%.1f s)"
				% (label, took))
			t.check(err.count("\n") == 1 and "DNS" in err and
				"nosuch.invalid" in err, "%s: one line naming "
				"DNS and the host: %r" % (label, err))
			t.check(not harness.is_mounted(mnt), "%s: nothing "
				"mounted" % label)
			if harness.is_mounted(mnt):
				harness.force_unmount(mnt)


def wait_for(cond, secs):
	"""Poll cond every 50 ms for at most secs; its last value."""
	end = time.monotonic() + secs
	while not cond() and time.monotonic() < end:
		time.sleep(0.05)
	return cond()


def reap(p, secs):
	"""p's exit status within secs, else None."""
	try:
		return p.wait(timeout=secs)
	except subprocess.TimeoutExpired:
		return None


def case_trickle(t, d):
	S = two_tensors(os.path.join(d, "www"), 30)
	x = S.by_name["b"]
	with httpd.Server(os.path.dirname(S.path)) as srv:
		srv.trickle_at = x.offset + (1 << 20)	# one block of b
		url = srv.url("m.safetensors")
		for (mode, fg), how in [(m, h) for m in MODES
					for h in ("unmount", "SIGTERM")]:
			label = "trickle, %s, %s" % (mode, how)
			m = harness.Mount(t, url, env=env_user(os.path.join(
				d, "cache-%s-%s" % (fg, how))), foreground=fg)
			m.start()
			rc = "not unmounted"
			reader = subprocess.Popen(["cat", os.path.join(m.path, "b")],
						  stdout=subprocess.DEVNULL,
						  stderr=subprocess.PIPE)
			try:
				t.check(wait_for(lambda: srv.trickling > 0, 30),
					"%s: the server trickles" % label)
				time.sleep(1)	# the reader waits on it
				t.check(reader.poll() is None, "%s: the reader "
					"waits" % label)
				pid = m.proc.pid if fg else m.pid
				if how == "unmount":
					reader.kill()
					t.check(reap(reader, 5) is not None,
						"%s: the killed reader is gone"
						% label)
					t0 = time.monotonic()
					rc = m.unmount()
				else:
					t0 = time.monotonic()
					os.kill(pid, signal.SIGTERM)
					harness.wait_gone(pid, 10)
					rc = m.unmount()
					t.check(reap(reader, 5) not in (None, 0),
						"%s: the reader fails" % label)
				took = time.monotonic() - t0
				t.note("%s: the daemon is gone after %.2f s"
				       % (label, took))
				t.check(took <= 5.0, "%s: the daemon is gone "
					"within 5 s (%.1f s)" % (label, took))
				t.eq(rc, 0, "%s: the daemon's exit status" % label)
				t.check(wait_for(lambda: srv.trickling == 0, 5),
					"%s: the daemon's connections are closed"
					% label)
			finally:
				if reader.poll() is None:
					reader.kill()
					reap(reader, 10)
				if rc == "not unmounted":
					m.unmount()


def case_floor(t, d):
	S = two_tensors(os.path.join(d, "www"), 40)
	x = S.by_name["b"]
	with httpd.Server(os.path.dirname(S.path)) as srv:
		srv.trickle_at = x.offset + (1 << 20)
		# 1 byte/s; then 1,500 bytes/s in pieces every 0.25 s, a rate
		# only the floor set to 2 KiB/s stops (no gap of http_timeout)
		for mode, fg, rate, tick, opts, says in [
				("daemon", False, 1, 1.0, "http_timeout=2",
				 "fewer than 1024 bytes/s over 12 s"),
				("-f", True, 1500, 0.25,
				 "http_timeout=1,http_min_rate=2K",
				 "fewer than 2048 bytes/s over 6 s")]:
			label = "floor, " + mode
			srv.trickle_rate, srv.trickle_tick = rate, tick
			with harness.Mount(t, srv.url("m.safetensors"),
					   args=["-o", opts],
					   env=env_user(os.path.join(
						   d, "cache-%s" % fg)),
					   foreground=fg) as m:
				t0 = time.monotonic()
				try:
					r = run(["cat", os.path.join(m.path,
								     "b")],
						timeout=90)
					rc, err = r.returncode, r.stderr.decode(
						errors="replace")
				except subprocess.TimeoutExpired:
					rc, err = None, "(still reading after 90 s)"
				t.note("%s: the reader ended after %.1f s: %s"
				       % (label, time.monotonic() - t0,
					  err.strip()))
				t.check(rc not in (0, None) and
					"Input/output error" in err,
					"%s: the reader gets EIO: %s"
					% (label, err))
				lines = [ln for ln in log_lines(t, m.path, label)
					 if "http_min_rate" in ln]
				t.check(lines and says in lines[0],
					"%s: .stfs/log says why (%s): %r"
					% (label, says, lines))
		# a floor that is not a rate is refused before anything
		mnt = os.path.join(d, "mnt")
		os.makedirs(mnt)
		r = run([harness.STFS, "-o", "http_min_rate=slow",
			 srv.url("m.safetensors"), mnt], timeout=30)
		err = r.stderr.decode(errors="replace")
		t.check(r.returncode != 0 and err.count("\n") == 1 and
			"http_min_rate=slow" in err, "floor: http_min_rate=slow "
			"refused in one line: %r" % err)
		t.check(not harness.is_mounted(mnt), "floor: not mounted")


READERS = 10


def reader_cmd(i, path):
	"""Readers that catch SIGINT: dd (to print what it copied), Python
	(KeyboardInterrupt), alternately."""
	if i % 2:
		return ["/usr/bin/python3", "-c", "import os, sys\n"
			"fd = os.open(sys.argv[1], os.O_RDONLY)\n"
			"while os.read(fd, 1 << 20):\n\tpass", path]
	return ["dd", "if=" + path, "of=/dev/null", "bs=1M"]


def case_interrupt(t, d):
	www = os.path.join(d, "www")
	os.makedirs(www)
	path = os.path.join(www, "m.safetensors")
	gen.write_safetensors(path, [("t%02d" % i, "U8", [4 << 20],
				      gen.bulk_bytes(50 + i, 4 << 20))
				     for i in range(READERS)], {})
	S = harness.SrcFile(path)
	with httpd.Server(www) as srv:
		for mode, fg in MODES:
			label = "interrupt, " + mode
			srv.link = 0
			with harness.Mount(t, srv.url("m.safetensors"),
					   env=env_user(os.path.join(
						   d, "cache-%s" % fg)),
					   foreground=fg) as m:
				interrupt_readers(t, srv, S, m, label)


def interrupt_readers(t, srv, S, m, label):
	srv.link = 1000000	# 1 MB/s, all connections
	mark = srv.mark()
	readers = [subprocess.Popen(
		reader_cmd(i, os.path.join(m.path, x.name)),
		stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
		for i, x in enumerate(S.tensors)]
	t.check(wait_for(lambda: len(srv.since(mark)) >= READERS, 30),
		"%s: the readers' requests reach the server" % label)
	time.sleep(2)
	t.eq([p.poll() for p in readers], [None] * READERS,
	     "%s: every reader still reads" % label)
	t0 = time.monotonic()
	for p in readers:
		p.send_signal(signal.SIGINT)
	left = [p for p in readers
		if reap(p, max(0.0, t0 + 1.0 - time.monotonic())) is None]
	took = time.monotonic() - t0
	t.note("%s: %d of %d readers left after %.2f s"
	       % (label, len(left), READERS, took))
	t.eq(len(left), 0, "%s: readers still there 1 s after Ctrl-C"
	     % label)
	for p in left:
		reap(p, 60)
	srv.link = 0
	x = S.tensors[0]
	try:
		r = run(["cat", os.path.join(m.path, x.name)], timeout=60)
		ok = r.returncode == 0 and r.stdout == S.read(x)
	except subprocess.TimeoutExpired:
		ok = False
	t.check(ok, "%s: the mount serves a reader after" % label)


def sanitized():
	"""Built with ASan: no RSS bound holds (its shadow memory and
	quarantine), the cache's own figures are checked all the same."""
	with open(harness.STFS, "rb") as f:
		return b"__asan_init" in f.read()


def proc_status(pid):
	r = {}
	with open("/proc/%d/status" % pid) as f:
		for ln in f:
			k, _, v = ln.partition(":")
			r[k] = v.strip()
	return r


def kib(v):
	return int(v.split()[0])


RAM_MIB = 64		# the block cache's default with the disk cache on
SLACK_MIB = 32		# the transfers: libcurl's buffers, allocator arenas


def case_ram(t, d):
	www = os.path.join(d, "www")
	T = [("layers.%02d.weight" % i, "F32", [2 << 20],
	      (lambda i=i: gen.bulk_bytes(900 + i, 8 << 20)))
	     for i in range(24)]
	index, _ = gen_sharded.write_sharded(os.path.join(www, "m"), T, 3)
	cache = os.path.join(d, "cache")
	with nginx.Nginx(www, os.path.join(d, "ng")) as srv:
		url = srv.url("m/model.safetensors.index.json")
		with harness.Mount(t, url, env=env_user(cache), foreground=False,
				   ready_timeout=60) as m:
			base = kib(proc_status(m.pid)["VmRSS"])
			harness.cmp_sharded(t, index, m.path, "ram")
			st = proc_status(m.pid)
			src = stats_sources(t, m.path, "ram")
			mem = src[0].get("memory", {}) if src else {}
			t.note("ram: RSS %d KiB once mounted, peak %d KiB after "
			       "reading 192 MiB; %s threads; blocks %r"
			       % (base, kib(st["VmHWM"]), st["Threads"], mem))
			t.eq(mem.get("blocks_limit"), RAM_MIB << 20, "ram: the "
			     "block cache's default with the disk cache on")
			# a reader's blocks may go over it while the cache is
			# full of blocks in use: a few
			t.check(mem.get("blocks_peak", 1 << 40) <=
				(RAM_MIB + 8) << 20, "ram: the blocks' memory "
				"stays within the cache: %r" % mem)
			if not sanitized():
				t.check(kib(st["VmHWM"]) <= base + ((RAM_MIB +
					SLACK_MIB) << 10), "ram: the daemon's "
					"peak RSS %d KiB within %d KiB + %d MiB"
					% (kib(st["VmHWM"]), base,
					   RAM_MIB + SLACK_MIB))
		# the same model again from that disk cache, with 16 MiB of
		# blocks: the size is the one asked for, and holds
		mark = srv.mark()
		with harness.Mount(t, url, args=["-o", "http_cache_mb=16"],
				   env=env_user(cache), foreground=False,
				   ready_timeout=60) as m:
			harness.cmp_sharded(t, index, m.path, "ram, from the disk cache")
			src = stats_sources(t, m.path, "ram, http_cache_mb=16")
			mem = src[0].get("memory", {}) if src else {}
			t.eq(mem.get("blocks_limit"), 16 << 20, "ram: "
			     "http_cache_mb=16: the block cache's size")
			t.check(mem.get("blocks_peak", 1 << 40) <= (16 + 8) << 20,
				"ram: http_cache_mb=16: the blocks' memory stays "
				"within it: %r" % mem)
		data = [q for q in srv.requests_since(mark)
			if q.range and q.range != "bytes=0-65535"]
		t.eq(len(data), 0, "ram: data requests of a second mount")


CASES = [("log", case_log), ("retry", case_retry), ("gzip", case_gzip),
	 ("dns", case_dns), ("trickle", case_trickle), ("floor", case_floor),
	 ("interrupt", case_interrupt), ("ram", case_ram)]


def run_(t):
	d = harness.tmpdir("pressure")
	for name, fn in CASES:
		if not ONLY or name in ONLY:
			dd = os.path.join(d, name)
			os.makedirs(dd)
			fn(t, dd)


harness.main("int-remote-pressure", run_, mounts=True)
