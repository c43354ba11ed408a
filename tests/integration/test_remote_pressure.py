#!/usr/bin/env python3
"""int-remote-pressure: remote mounts under slow and broken servers, as
users run them (a daemon, the disk cache on, cold), issue 38.

  log        a daemon's messages reach MNT/.stfs/log (with times) and the
             source's last error .stfs/stats.json, also where syslog goes
             nowhere: a local file changed under the mount ("changed
             while mounted") and a remote object replaced (its ETag)

STFS_PRESSURE=case,... runs only those cases (by hand).  No assertion is
about speed: the bounds are the issue's, which only a hang would cross.
"""

import errno
import json
import os
import re
import time

import harness
import httpd
from harness import gen

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


def case_log(t, d):
	# a local model changed in place under a daemon's mount
	local = os.path.join(d, "local.safetensors")
	gen.write_safetensors(local, [("a", "U8", [4096],
				       gen.bulk_bytes(1, 4096))], {})
	with harness.Mount(t, local, env=env_user(os.path.join(d, "c0")),
			   foreground=False) as m:
		before = log_lines(t, m.path, "local")
		t.check(not any("changed while mounted" in ln for ln in before),
			"local: nothing changed yet: %r" % before)
		with open(local, "r+b") as f:
			f.seek(200)
			f.write(b"xx")
		t.eq(read_errno(os.path.join(m.path, "a")), errno.EIO,
		     "local: a read after the change")
		lines = log_lines(t, m.path, "local")
		t.check(any(ln.startswith(time.strftime("%Y-")) and
			    "local.safetensors: changed while mounted" in ln and
			    "every further read of it fails with EIO" in ln
			    for ln in lines),
			"local: .stfs/log holds the change: %r" % lines)
		src = stats_sources(t, m.path, "local")
		err = src[0].get("last_error") if src else None
		t.check(isinstance(err, dict) and "changed while mounted" in
			err.get("message", "") and STAMP.match(
				err.get("time", "") + " error: "),
			"local: stats.json's last error: %r" % err)

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


CASES = [("log", case_log)]


def run_(t):
	d = harness.tmpdir("pressure")
	for name, fn in CASES:
		if not ONLY or name in ONLY:
			dd = os.path.join(d, name)
			os.makedirs(dd)
			fn(t, dd)


harness.main("int-remote-pressure", run_, mounts=True)
