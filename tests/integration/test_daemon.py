#!/usr/bin/env python3
"""int-daemon: a remote mount as users run it (issue 29.2).

`stfs URL MNT` without -f and with the default options: the disk cache on
(in a private, cold directory: STFS_CACHE_DIR), a sharded model (3 shards,
96 MiB) served by nginx on 127.0.0.1.  Every tensor is read through the
mount and compared with the file nginx serves; after the unmount the
daemon must exit, with status 0, within 10 s.  Then the same with -f.

Before the fix the daemon forked after opening the model: the threads
it had started stayed behind in the parent, and the child stalled after a
few requests (EIO) and never exited after the unmount.  The daemon must
also leave the terminal as fuse_daemonize() does: a session of its own,
/ as working directory, stdio on /dev/null.
"""

import os
import sys

import harness
import nginx
from harness import gen

sys.path.insert(0, os.path.dirname(os.path.abspath(harness.STFS_GEN)))
import gen_sharded  # noqa: E402


def env_user(cache):
	"""The environment of a user: no STFS_CACHE=off, no STFS_HTTP_*
	settings; only the disk cache's place is the test's own."""
	e = {k: v for k, v in os.environ.items()
	     if not k.startswith("STFS_HTTP_") and k != "STFS_CACHE"}
	e["STFS_CACHE_DIR"] = cache
	return e


def make_model(www):
	"""24 tensors of 2, 4 and 6 MiB in 3 shards: 96 MiB."""
	T = [("layers.%02d.weight" % i, "F32", [(1 + i % 3) << 19],
	      (lambda i=i: gen.bulk_bytes(900 + i, (1 + i % 3) << 21)))
	     for i in range(24)]
	return gen_sharded.write_sharded(os.path.join(www, "m"), T, 3)


def cached_bytes(cache):
	return sum(os.path.getsize(os.path.join(r, f))
		   for r, _, fs in os.walk(cache) for f in fs)


def check_detached(t, pid, label):
	"""What fuse_daemonize() did: setsid, chdir("/"), stdio /dev/null."""
	t.eq(os.getsid(pid), pid, "%s: the daemon leads a session of its own"
	     % label)
	t.eq(os.readlink("/proc/%d/cwd" % pid), "/", "%s: the daemon's working "
	     "directory" % label)
	for fd in (0, 1, 2):
		t.eq(os.readlink("/proc/%d/fd/%d" % (pid, fd)), "/dev/null",
		     "%s: the daemon's descriptor %d" % (label, fd))


def run_(t):
	why = nginx.available()
	if why:
		raise harness.Skip(why)
	d = harness.tmpdir("daemon")
	www = os.path.join(d, "www")
	index, _ = make_model(www)
	with nginx.Nginx(www, os.path.join(d, "ng")) as srv:
		url = srv.url("m/model.safetensors.index.json")
		# twice as a daemon: what went wrong before the fix depended on
		# the timing of the threads left behind, and did not always
		for k, (fg, label) in enumerate(((False, "daemon"),
						 (False, "daemon again"),
						 (True, "-f"))):
			cache = os.path.join(d, "cache-%d" % k)
			mark = srv.mark()
			m = harness.Mount(t, url, env=env_user(cache),
					  foreground=fg, ready_timeout=60)
			with m:
				if not fg:
					check_detached(t, m.pid, label)
				harness.cmp_sharded(t, index, m.path, label)
			reqs = srv.requests_since(mark)
			t.check(all(q.status == 206 for q in reqs), "%s: only 206 "
				"answers (%d requests)" % (label, len(reqs)))
			# the disk cache was on: what was read is on disk once
			# the daemon has exited
			t.check(cached_bytes(cache) >= 96 << 20, "%s: the disk "
				"cache holds the model (%d bytes)"
				% (label, cached_bytes(cache)))


harness.main("int-daemon", run_, mounts=True)
