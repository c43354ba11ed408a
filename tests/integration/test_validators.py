#!/usr/bin/env python3
"""int-validators: validators that cannot be skipped (issue 29.3), with the
disk cache on, against the look-alike server of httpd.py.

  drop     the server gives ETag "v1" at open, then answers data ranges
           without any validator and with other bytes: every read is EIO
           or the old bytes (never new ones, never a mix), the change is
           logged once, the disk cache keeps nothing of it, and a second
           mount on the same cache fetches again (and fails again)
  change   the same with ETag "v2" on the data answers
  none     a server with neither ETag nor Last-Modified is refused at
           mount (one line, saying what to do) unless -o http_no_validator
           (STFS_HTTP_NO_VALIDATOR=1 for stfs-inspect); a file that comes
           whole with the open request needs none
"""

import errno
import os
import signal
import subprocess

import harness
import httpd
from harness import gen, run

OPTS = "http_timeout=2,http_tries=2,http_readahead_mb=2"


def env_clean(**kw):
	e = {k: v for k, v in os.environ.items()
	     if not k.startswith("STFS_HTTP_") and k != "STFS_CACHE"}
	e.update(kw)
	return e


def model(path, seed):
	"""Tensors on both sides of the first 64 KiB (which the open request
	brings) and across several 1 MiB blocks; same layout for any seed."""
	T = [("a", "U8", [40000], gen.bulk_bytes(seed, 40000)),
	     ("b", "U8", [100000], gen.bulk_bytes(seed + 1, 100000)),
	     ("c", "U8", [3 << 20], gen.bulk_bytes(seed + 2, 3 << 20)),
	     ("d", "U8", [1 << 20], gen.bulk_bytes(seed + 3, 1 << 20))]
	gen.write_safetensors(path, T, {"seed": "same"})


def extent_bytes(cache):
	"""Bytes of blocks the disk cache holds (its extent files eN)."""
	return sum(os.path.getsize(os.path.join(r, f))
		   for r, _, fs in os.walk(cache) for f in fs
		   if f[:1] == "e" and f[1:].isdigit())


def data_reqs(log):
	return [r for r in log if r["range"] != "bytes=0-65535"]


def read_each(t, S, mnt, label):
	"""Every tensor: EIO or the old bytes, never anything else.  Returns
	the number of EIOs."""
	eio = 0
	for x in S.tensors:
		try:
			with open(os.path.join(mnt, x.name), "rb") as f:
				got = f.read()
		except OSError as e:
			t.eq(e.errno, errno.EIO, "%s: %s fails with EIO" % (label,
									      x.name))
			eio += 1
			continue
		t.check(got == S.read(x), "%s: %s: the old bytes, not new or "
			"mixed ones" % (label, x.name))
	return eio


def case_switch(t, d, data_etag, label):
	www, www2 = os.path.join(d, label, "www"), os.path.join(d, label, "v2")
	os.makedirs(www)
	os.makedirs(www2)
	model(os.path.join(www, "m.safetensors"), 10)
	model(os.path.join(www2, "m.safetensors"), 20)
	S = harness.SrcFile(os.path.join(www, "m.safetensors"))
	cache = os.path.join(d, label, "cache")
	args = ["-o", OPTS + ",cache=on,cache_dir=" + cache]
	with httpd.Server(www) as srv:
		srv.etag = '"v1"'
		url = srv.url("m.safetensors")
		with harness.Mount(t, url, args=args, env=env_clean()) as m:
			srv.data_from = www2
			srv.data_etag = data_etag
			eio = read_each(t, S, m.path, label)
			out = m.output()
		t.check(eio >= 3, "%s: the reads past the open request fail (%d "
			"EIO)" % (label, eio))
		t.eq(out.count("remote object changed"), 1, "%s: the change is "
		     "logged once: %r" % (label, out[-600:]))
		t.eq(extent_bytes(cache), 0, "%s: the disk cache keeps nothing "
		     "of the other version" % label)
		# a second mount on the same cache: nothing from disk
		mark = srv.mark()
		with harness.Mount(t, url, args=args, env=env_clean()) as m:
			read_each(t, S, m.path, label + ", again")
		t.check(data_reqs(srv.since(mark)), "%s, again: the data is "
			"asked for again, not served from the disk cache" % label)
		t.eq(extent_bytes(cache), 0, "%s, again: still nothing on disk"
		     % label)


def case_none(t, d):
	www = os.path.join(d, "none", "www")
	os.makedirs(www)
	big = os.path.join(www, "m.safetensors")
	model(big, 30)
	S = harness.SrcFile(big)
	gen.write_safetensors(os.path.join(www, "small.safetensors"),
			      [("x", "F32", [64, 64], gen.bulk_bytes(40, 16384))])
	small = harness.SrcFile(os.path.join(www, "small.safetensors"))
	cache = os.path.join(d, "none", "cache")
	cache_opt = "cache=on,cache_dir=" + cache
	mnt = os.path.join(d, "none", "mnt")
	os.makedirs(mnt)
	with httpd.Server(www) as srv:
		srv.validators = False
		url = srv.url("m.safetensors")
		for fg in ([], ["-f"]):
			what = "none%s" % (" (-f)" if fg else "")
			try:
				r = run([harness.STFS] + fg + ["-o", cache_opt, url,
							      mnt],
					env=env_clean(), timeout=30)
			except subprocess.TimeoutExpired:
				t.check(False, "%s: stfs mounted and stayed" % what)
				harness.force_unmount(mnt)
				for p in harness.daemon_pids(mnt):
					os.kill(p, signal.SIGKILL)
				continue
			err = r.stderr.decode(errors="replace")
			t.eq(r.returncode, 2, "%s: refused, exit 2 (%r)" % (what, err))
			t.check(err.count("\n") == 1 and "neither ETag nor "
				"Last-Modified" in err and "http_no_validator" in
				err and url in err, "%s: one line naming the URL, "
				"the reason and the option: %r" % (what, err))
			t.check(not harness.is_mounted(mnt), "%s: nothing mounted"
				% what)
			harness.force_unmount(mnt)
		r = run([harness.STFS_INSPECT, url], env=env_clean())
		t.check(r.returncode == 2 and b"STFS_HTTP_NO_VALIDATOR" in
			r.stderr, "none: stfs-inspect refuses too: %r" % r.stderr)
		r = run([harness.STFS_INSPECT, url], env=env_clean(
			STFS_HTTP_NO_VALIDATOR="1"))
		t.eq(r.returncode, 0, "none: stfs-inspect with "
		     "STFS_HTTP_NO_VALIDATOR=1 (%r)" % r.stderr)
		with harness.Mount(t, url, args=["-o", cache_opt +
						 ",http_no_validator"],
				   env=env_clean()) as m:
			read_each(t, S, m.path, "none, accepted")
			for x in S.tensors:
				with open(os.path.join(m.path, x.name), "rb") as f:
					t.check(f.read() == S.read(x), "none, accepted: "
						"%s byte-exact" % x.name)
		t.eq(extent_bytes(cache), 0, "none, accepted: nothing in the "
		     "disk cache (no identity to keep it under)")
		# all of it came with the open request: nothing can mix
		url = srv.url("small.safetensors")
		with harness.Mount(t, url, env=env_clean()) as m:
			for x in small.tensors:
				p = os.path.join(m.path, harness.encode_name(x.name))
				with open(p, "rb") as f:
					t.check(f.read() == small.read(x), "none, whole "
						"in one answer: %s" % x.name)


def run_(t):
	d = harness.tmpdir("valid")
	case_switch(t, d, None, "drop")
	case_switch(t, d, '"v2"', "change")
	case_none(t, d)


harness.main("int-validators", run_, mounts=True)
