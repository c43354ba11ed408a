#!/usr/bin/env python3
"""int-stalls: deadlines that measure stalls, not transfers (issue 29.1),
with the disk cache on.

  slow       ten readers at once, each of its own 4 MiB tensor, behind a
             link of 1 MB/s for all connections together (scripts/
             bench_limit.c in front of nginx), default settings, mounted
             as users do (a daemon): every transfer takes far longer than
             http_timeout yet keeps moving, so every reader must finish,
             byte-exact, with no EIO.  (The old code gave 9 of 10 EIO once
             a transfer had run for the whole read bound.)
  truncate   a server that cuts every data answer short (httpd.py), with
             default settings: a reader of a 2 MiB tensor (30 MiB more
             follow it) gets its bytes when the answers break off after
             200 KiB, EIO after 1000 bytes; either way at most a few
             dozen requests per MiB asked for or received (the old code
             sent hundreds: read-ahead no one waited for was retried
             until the bound) and an EIO is logged once, with the URL
             and the reason.

No assertion here is about time: the deadlines are meson's.
"""

import os
import subprocess
import time

import harness
import httpd
import nginx
from harness import gen, run

LIMIT = os.environ.get("STFS_LIMIT", "")
READERS = 10
TENSOR = 4 << 20
LINK = 1000000		# bytes per second, all connections together


def env_user(cache):
	e = {k: v for k, v in os.environ.items()
	     if not k.startswith("STFS_HTTP_") and k != "STFS_CACHE"}
	e["STFS_CACHE_DIR"] = cache
	return e


class Limiter:
	"""bench_limit in front of 127.0.0.1:upstream: no cap per connection,
	LINK for all together."""

	def __init__(self, upstream):
		self.proc = subprocess.Popen(
			[LIMIT, "--upstream", str(upstream), "--rate", "0",
			 "--aggregate", str(LINK), "--lifetime", "600"],
			stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
		line = self.proc.stdout.readline().split()
		if len(line) != 2 or line[0] != "port":
			self.close()
			raise RuntimeError("bench_limit did not start: %r" % line)
		self.port = int(line[1])

	def url(self, name):
		return "http://127.0.0.1:%d/%s" % (self.port, name)

	def close(self):
		self.proc.terminate()
		try:
			self.proc.wait(timeout=10)
		except subprocess.TimeoutExpired:
			self.proc.kill()
			self.proc.wait()

	def __enter__(self):
		return self

	def __exit__(self, *a):
		self.close()


def case_slow(t, d):
	www = os.path.join(d, "slow")
	os.makedirs(www)
	local = os.path.join(www, "m.safetensors")
	T = [("t%02d" % i, "U8", [TENSOR], gen.bulk_bytes(600 + i, TENSOR))
	     for i in range(READERS)]
	gen.write_safetensors(local, T, {})
	S = harness.SrcFile(local)
	with nginx.Nginx(www, os.path.join(d, "ng")) as srv, \
			Limiter(srv.port) as lim:
		url = lim.url("m.safetensors")
		with harness.Mount(t, url, env=env_user(os.path.join(d, "cache")),
				   foreground=False, ready_timeout=60) as m:
			procs = []
			for x in S.tensors:
				procs.append((x, subprocess.Popen(
					["cmp", "-n", str(x.nbytes), "-i",
					 "0:%d" % x.offset, os.path.join(m.path, x.name),
					 local], stdout=subprocess.PIPE,
					stderr=subprocess.STDOUT)))
			for x, p in procs:
				try:
					out, _ = p.communicate(timeout=240)
				except subprocess.TimeoutExpired:
					p.kill()
					out, _ = p.communicate()
					out += b" (still reading after 240 s)"
				t.check(p.returncode == 0, "slow: reader of %s: "
					"byte-exact, no error: %s" % (x.name, out.decode(
						errors="replace").strip()))


def case_truncate(t, d, cut, want_data):
	label = "truncate at %d" % cut
	www = os.path.join(d, "trunc-%d" % cut)
	os.makedirs(www)
	local = os.path.join(www, "m.safetensors")
	gen.write_safetensors(local, [("x", "U8", [2 << 20],
				       gen.bulk_bytes(700, 2 << 20)),
				      ("y", "U8", [30 << 20],
				       gen.bulk_bytes(701, 30 << 20))], {})
	S = harness.SrcFile(local)
	x = S.by_name["x"]
	cache = os.path.join(d, "cache-%d" % cut)
	with httpd.Server(www) as srv:
		url = srv.url("m.safetensors")
		with harness.Mount(t, url, args=["-o", "cache=on,cache_dir=" +
						 cache],
				   env=env_user(cache)) as m:
			srv.truncate = cut
			mark = srv.mark()
			p = os.path.join(m.path, "x")
			try:
				r = run(["cat", p], timeout=120)
				got, err = r.stdout, r.stderr.decode(errors="replace")
				rc = r.returncode
			except subprocess.TimeoutExpired:
				got, err, rc = b"", "(cat still reading after 120 s)", -1
			# what the mount still sends after the reader is done
			# (read-ahead no one waits for) counts too: until the
			# server saw nothing new for 3 s
			n = -1
			for _ in range(40):
				if n == len(srv.log):
					break
				n = len(srv.log)
				time.sleep(3)
			reqs = srv.since(mark)
			out = m.output()
		# MiB the reader asked for, or that came (read-ahead that
		# works is no waste)
		mib = max(2, sum(min(cut, r["bytes"]) for r in reqs) >> 20)
		t.note("%s: %d requests, %d MiB" % (label, len(reqs), mib))
		t.check(len(reqs) <= 24 * mib, "%s: %d requests for %d MiB "
			"(at most %d)" % (label, len(reqs), mib, 24 * mib))
		if want_data:
			t.check(rc == 0 and got == S.read(x), "%s: the reader gets "
				"the bytes (exit %d: %s)" % (label, rc, err))
			t.check("EIO" not in out, "%s: no EIO is logged: %r"
				% (label, out[-500:]))
		else:
			t.check(rc != 0 and "Input/output error" in err,
				"%s: the reader gets EIO (exit %d: %s)"
				% (label, rc, err))
			t.check(got == S.read(x)[:len(got)], "%s: what came before "
				"is right" % label)
			t.eq(out.count("EIO"), 1, "%s: the EIO is logged once: %r"
			     % (label, out[-800:]))
			t.check(url in out and "broke off" in out, "%s: the log "
				"names the URL and the reason: %r"
				% (label, out[-800:]))


def run_(t):
	if not LIMIT or not os.access(LIMIT, os.X_OK):
		t.fatal("STFS_LIMIT=%r is not bench_limit (run through `meson "
			"test`)" % LIMIT)
	why = nginx.available()
	if why:
		raise harness.Skip(why)
	d = harness.tmpdir("stalls")
	only = [c for c in os.environ.get("STFS_STALLS", "").split(",") if c]
	if not only or "truncate" in only:
		case_truncate(t, d, 200 << 10, True)
		case_truncate(t, d, 1000, False)
	if not only or "slow" in only:
		case_slow(t, d)


harness.main("int-stalls", run_, mounts=True)
