#!/usr/bin/env python3
"""int-messages: remote errors that tell the truth (issue 29.5), against
httpd.py on 127.0.0.1.

  header    an answer with a 1 MiB header line, or 80 KB of headers:
            stfs-inspect says the headers are too large (a server fault),
            not "Out of memory", in one line, under a memory limit
  endless   data answers whose chunked body never ends, to a mount with
            the disk cache on: the read gets EIO and the log says why, in
            one line, without foretelling the reads after it; the daemon
            stays small; once the server behaves the reads work, and the
            log says so
  setting   STFS_HTTP_INSECURE=bogus: stfs-inspect of an s3:// prefix and
            of hf:// says the setting is bad (not that a server cannot be
            reached), as stfs does
"""

import errno
import os
import subprocess
import time

import harness
import httpd
import nginx
from harness import gen, run

VMEM_KB = 1 << 20	# ulimit -v for stfs-inspect


def sanitized():
	"""Built with ASan, which maps terabytes of shadow memory: no ulimit -v
	or RSS bound holds (the outcomes are checked all the same)."""
	with open(harness.STFS_INSPECT, "rb") as f:
		return b"__asan_init" in f.read()


def env_clean(**kw):
	e = {k: v for k, v in os.environ.items()
	     if not k.startswith("STFS_HTTP_") and k != "STFS_CACHE"}
	e.update(kw)
	return e


def inspect_limited(url, env=None):
	limit = "" if sanitized() else "ulimit -v %d && " % VMEM_KB
	return run(["sh", "-c", limit + 'exec "$0" "$1"',
		    harness.STFS_INSPECT, url], env=env or env_clean(),
		   timeout=60)


def one_line(t, r, label, want, unwanted=()):
	err = r.stderr.decode(errors="replace")
	t.eq(r.returncode, 2, "%s: exit 2 (%r)" % (label, err))
	t.check(err.count("\n") == 1, "%s: one line: %r" % (label, err))
	for w in want:
		t.check(w in err, "%s: says %r: %r" % (label, w, err))
	for w in unwanted:
		t.check(w not in err, "%s: does not say %r: %r" % (label, w, err))


def case_header(t, www):
	with httpd.Server(www) as srv:
		url = srv.url("s.safetensors")
		srv.header_bytes = 1 << 20
		one_line(t, inspect_limited(url), "a 1 MiB header line",
			 [url, "header", "server fault"], ["Out of memory"])
		srv.header_bytes = 80000
		one_line(t, inspect_limited(url), "80 KB of headers",
			 [url, "headers are larger than 64 KiB"])
		srv.header_bytes = 30000
		r = inspect_limited(url)
		t.eq(r.returncode, 0, "30 KB of headers: fine (%r)" % r.stderr)


def vm_rss_kb(pid):
	with open("/proc/%d/status" % pid) as f:
		for line in f:
			if line.startswith("VmRSS:"):
				return int(line.split()[1])
	return 0


def case_endless(t, d, www):
	S = harness.SrcFile(os.path.join(www, "m.safetensors"))
	x = S.by_name["big"]
	cache = os.path.join(d, "cache")
	with httpd.Server(www) as srv:
		url = srv.url("m.safetensors")
		with harness.Mount(t, url, args=["-o", "cache=on,cache_dir=" +
						 cache],
				   env=env_clean()) as m:
			p = os.path.join(m.path, "big")
			srv.endless = True
			try:
				r = run(["cat", p], timeout=60)
				err = r.stderr.decode(errors="replace")
				t.check(r.stdout == S.read(x)[:len(r.stdout)],
					"endless: what the reader got is right")
			except subprocess.TimeoutExpired:
				r, err = None, "(still reading after 60 s)"
			t.check(r is not None and r.returncode != 0 and
				"Input/output error" in err,
				"endless: the read fails with EIO: %s" % err)
			t.check(sanitized() or vm_rss_kb(m.proc.pid) < 256 << 10,
				"endless: the daemon stays small (%d KiB "
				"resident)" % vm_rss_kb(m.proc.pid))
			out = m.output()
			t.eq(out.count("fails with EIO"), 1, "endless: one log line "
			     "for the failed read: %r" % out[-600:])
			t.check("more bytes than asked" in out and url in out,
				"endless: the log says where and why: %r"
				% out[-600:])
			t.check("until" not in out, "endless: no line foretells "
				"the reads to come: %r" % out[-600:])
			# the server behaves again: reads work, and the log
			# says so (after the second a failed range is held)
			srv.endless = False
			time.sleep(1.2)
			with open(p, "rb") as f:
				t.check(f.read() == S.read(x), "endless, then fine: "
					"byte-exact")
			t.check("answers again" in m.output(), "endless, then "
				"fine: logged: %r" % m.output()[-300:])


def case_setting(t, d):
	port = nginx.free_port()	# nothing listens there
	bad = {"STFS_HTTP_INSECURE": "bogus"}
	want = ["STFS_HTTP_INSECURE=bogus", "not a boolean"]
	no = ["cannot reach"]
	h = run([harness.STFS, "--help"]).stdout
	if b"s3_anonymous" in h:
		env = env_clean(AWS_ENDPOINT_URL="http://127.0.0.1:%d" % port,
				AWS_ACCESS_KEY_ID="AKIDEXAMPLE",
				AWS_SECRET_ACCESS_KEY="secret",
				AWS_CONFIG_FILE=os.devnull,
				AWS_SHARED_CREDENTIALS_FILE=os.devnull, **bad)
		one_line(t, run([harness.STFS_INSPECT, "s3://bucket/models/"],
				env=env), "bogus setting, s3:// prefix", want, no)
		mnt = os.path.join(d, "mnt")
		os.makedirs(mnt)
		try:
			r = run([harness.STFS, "s3://bucket/models/", mnt],
				env=env, timeout=60)
			one_line(t, r, "bogus setting, stfs s3://", want, no)
		finally:
			harness.force_unmount(mnt)
	env = env_clean(HF_ENDPOINT="http://127.0.0.1:%d" % port,
			HF_HOME=os.path.join(d, "hf"), **bad)
	one_line(t, run([harness.STFS_INSPECT, "hf://org/model"], env=env),
		 "bogus setting, hf://", want, no)
	# a local file is no business of the HTTP settings
	r = run([harness.STFS_INSPECT, harness.SAMPLE], env=env)
	t.eq(r.returncode, 0, "bogus setting, local file: fine (%r)" % r.stderr)


def run_(t):
	d = harness.tmpdir("msg")
	www = os.path.join(d, "www")
	os.makedirs(www)
	gen.GENERATORS["sample"](os.path.join(www, "s.safetensors"))
	gen.write_safetensors(os.path.join(www, "m.safetensors"),
			      [("big", "U8", [3 << 20], gen.bulk_bytes(800, 3 << 20))],
			      {})
	case_header(t, www)
	case_endless(t, d, www)
	case_setting(t, d)


harness.main("int-messages", run_, mounts=True)
