#!/usr/bin/env python3
"""int-readonly: every way of writing through the mount fails with EROFS
(or EACCES/EPERM), and the source file is unchanged afterwards."""

import errno
import hashlib
import os
import shutil

import harness
from harness import RO_ERRNOS, run

ERRTEXT = (b"Read-only file system", b"Permission denied",
	   b"Operation not permitted")


def sha(p):
	with open(p, "rb") as f:
		return hashlib.sha256(f.read()).hexdigest()


def run_(t):
	d = harness.tmpdir("ro")
	src = os.path.join(d, "sample.safetensors")
	shutil.copyfile(harness.SAMPLE, src)
	before = sha(src)
	st0 = os.stat(src)
	with harness.Mount(t, src) as m:
		M = m.path
		e = harness.mount_entry(M)
		t.check(e is not None and "ro" in e[3].split(","),
			"mounted read-only (options %r)" % (e and e[3]))
		listing = sorted(os.listdir(M))
		ten = os.path.join(M, "wte.weight")
		side = ten + ".json"
		sidecar = open(side, "rb").read()
		data = open(ten, "rb").read()

		shell = [
			["touch", os.path.join(M, "new")],
			["touch", ten],
			["sh", "-c", "echo x > '%s'" % ten],
			["sh", "-c", "echo x >> '%s'" % ten],
			["sh", "-c", "echo x > '%s'" % side],
			["sh", "-c", "echo x > '%s'" % os.path.join(M, "__metadata__.json")],
			["rm", "-f", ten],
			["rm", "-f", os.path.join(M, "__summary__.json")],
			["mv", ten, os.path.join(M, "moved")],
			["mv", ten, os.path.join(M, "wpe.weight")],
			["mkdir", os.path.join(M, "d")],
			["chmod", "644", ten],
			["chmod", "755", M],
			["chown", "1:1", ten],
			["truncate", "-s", "0", ten],
			["truncate", "-s", "1G", ten],
			["ln", ten, os.path.join(M, "hard")],
			["ln", "-s", "wte.weight", os.path.join(M, "sym")],
			["mknod", os.path.join(M, "fifo"), "p"],
			["setfattr", "-n", "user.x", "-v", "1", ten],
			["dd", "if=/dev/zero", "of=" + ten, "bs=1", "count=1",
			 "conv=notrunc", "status=none"],
			["cp", harness.SAMPLE, os.path.join(M, "copy")],
		]
		for cmd in shell:
			r = run(cmd)
			txt = (r.stdout + r.stderr)
			t.check(r.returncode != 0, "`%s` fails" % " ".join(cmd))
			t.check(any(x in txt for x in ERRTEXT),
				"`%s`: read-only/permission error, got %r"
				% (" ".join(cmd), txt[:200]))

		def refused(what, fn):
			try:
				fn()
				t.check(False, "%s fails" % what)
			except OSError as e:
				t.check(e.errno in RO_ERRNOS, "%s: EROFS/EACCES/EPERM, "
					"got %s" % (what, errno.errorcode.get(e.errno)))

		refused("open r+b", lambda: open(ten, "r+b"))
		refused("open O_WRONLY", lambda: os.open(ten, os.O_WRONLY))
		refused("open O_RDWR", lambda: os.open(ten, os.O_RDWR))
		refused("open O_TRUNC", lambda: os.open(ten, os.O_RDONLY | os.O_TRUNC))
		refused("open O_CREAT new", lambda: os.open(os.path.join(M, "n2"),
							 os.O_CREAT | os.O_WRONLY, 0o644))
		refused("os.truncate", lambda: os.truncate(ten, 0))
		refused("os.unlink", lambda: os.unlink(ten))
		refused("os.rename", lambda: os.rename(ten, ten + "2"))
		refused("os.mkdir", lambda: os.mkdir(os.path.join(M, "d2")))
		refused("os.chmod", lambda: os.chmod(ten, 0o600))
		refused("os.utime", lambda: os.utime(ten, (1, 1)))
		refused("os.symlink", lambda: os.symlink("x", os.path.join(M, "s2")))
		refused("os.setxattr", lambda: os.setxattr(ten, "user.y", b"1"))

		t.eq(sorted(os.listdir(M)), listing, "listing unchanged")
		t.eq(open(ten, "rb").read(), data, "tensor bytes unchanged")
		t.eq(open(side, "rb").read(), sidecar, "sidecar unchanged")
		t.eq(os.stat(ten).st_mode & 0o7777, 0o444, "mode unchanged")
	t.eq(sha(src), before, "source sha256 unchanged")
	st1 = os.stat(src)
	t.eq((st1.st_size, st1.st_mtime_ns, st1.st_mode),
	     (st0.st_size, st0.st_mtime_ns, st0.st_mode),
	     "source size, mtime and mode unchanged")


harness.main("int-readonly", run_)
