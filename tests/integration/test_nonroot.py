#!/usr/bin/env python3
"""int-nonroot: a mount by an unprivileged user (issue 14.10).

Debian's /dev/fuse is 0666, so any user can mount through the setuid
fusermount3; on these machines it is 0600.  The test makes it 0666 for its
own duration (under a lock, so two runs cannot restore each other's mode,
and the old mode is restored also on failure), then as uid nobody (setpriv)
mounts a model with stfs, reads every tensor and compares each byte with
the source, checks that -o allow_other is refused without user_allow_other
in /etc/fuse.conf (one clear line, nothing mounted), and unmounts with
fusermount3 -u as that user.  Needs root (to change /dev/fuse and become
nobody)."""

import fcntl
import os
import shutil
import stat
import subprocess
import time

import harness
from harness import STFS

NOBODY = 65534
LOCK = "/tmp/stfs-dev-fuse-mode.lock"


def as_nobody(cmd):
	return ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
		"--clear-groups", "--"] + cmd


def nobody_read(path):
	"""The bytes of path read by uid nobody, or None."""
	r = subprocess.run(as_nobody(["cat", path]), stdout=subprocess.PIPE,
			   stderr=subprocess.PIPE, timeout=60)
	return r.stdout if r.returncode == 0 else None


def wait_mounted(path, proc, secs=15):
	deadline = time.monotonic() + secs
	while not harness.is_mounted(path):
		if proc.poll() is not None or time.monotonic() > deadline:
			return False
		time.sleep(0.02)
	return True


def mounted_by_nobody(t, d, src, mnt):
	S = harness.SrcFile(src)
	log = open(os.path.join(d, "stfs.log"), "w+b")
	p = subprocess.Popen(as_nobody([STFS, "-f", src, mnt]),
			     stdin=subprocess.DEVNULL, stdout=log, stderr=log)
	try:
		if not wait_mounted(mnt, p):
			log.seek(0)
			t.fatal("stfs as nobody: not mounted (exit %s): %r"
				% (p.poll(), log.read()[-2000:]))
		ent = harness.mount_entry(mnt)
		t.check("user_id=%d" % NOBODY in str(ent), "mounted by uid %d: %r"
			% (NOBODY, ent))
		for x in S.tensors:
			f = os.path.join(mnt, harness.encode_name(x.name))
			t.check(nobody_read(f) == S.read(x), "nobody reads %s "
				"byte-exact" % x.name)
		side = nobody_read(os.path.join(mnt, harness.encode_name(
			S.tensors[0].name) + ".json"))
		t.check(side is not None and S.tensors[0].name.encode() in side,
			"nobody reads a sidecar")
		# root is another user: without allow_other the kernel refuses
		try:
			os.listdir(mnt)
			t.check(False, "root is kept out of nobody's mount")
		except PermissionError:
			t.check(True, "root is kept out of nobody's mount")
		r = subprocess.run(as_nobody(["fusermount3", "-u", mnt]),
				   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
				   timeout=30)
		t.eq(r.returncode, 0, "fusermount3 -u as nobody: %r" % r.stdout)
		try:
			rc = p.wait(timeout=15)
		except subprocess.TimeoutExpired:
			rc = None
		t.eq(rc, 0, "daemon exits 0 after the unmount")
		t.check(not harness.is_mounted(mnt), "unmounted")
	finally:
		harness.force_unmount(mnt)
		if p.poll() is None:
			p.kill()
			p.wait()
		log.close()


def allow_other_refused(t, src, mnt):
	with open("/etc/fuse.conf") if os.path.exists("/etc/fuse.conf") \
			else open(os.devnull) as f:
		conf = [ln.strip() for ln in f if not ln.lstrip().startswith("#")]
	if "user_allow_other" in conf:
		t.note("user_allow_other is set here: -o allow_other not refused")
		return
	try:
		r = subprocess.run(as_nobody([STFS, "-o", "allow_other", src, mnt]),
				   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
				   stdin=subprocess.DEVNULL, timeout=30)
	finally:
		mounted = harness.is_mounted(mnt)
		harness.force_unmount(mnt)
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode != 0, "nobody -o allow_other without "
		"user_allow_other: refused (exit %d)" % r.returncode)
	t.check("user_allow_other" in err, "the refusal names user_allow_other: "
		"%r" % err)
	t.check(not mounted, "nobody -o allow_other: nothing mounted")


def run(t):
	if os.geteuid() != 0:
		raise harness.Skip("needs root to change /dev/fuse and setpriv")
	for tool in ("setpriv", "fusermount3"):
		if shutil.which(tool) is None:
			t.fatal("%s is missing" % tool)
	d = harness.tmpdir("nonroot")
	os.chmod(d, 0o755)
	src = os.path.join(d, "model.safetensors")
	harness.gen.gen_alldtypes(src)
	os.chmod(src, 0o644)
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	os.chown(mnt, NOBODY, NOBODY)

	with open(LOCK, "w") as lock:
		fcntl.flock(lock, fcntl.LOCK_EX)
		old = stat.S_IMODE(os.stat("/dev/fuse").st_mode)
		try:
			os.chmod("/dev/fuse", 0o666)
			mounted_by_nobody(t, d, src, mnt)
			allow_other_refused(t, src, mnt)
		finally:
			harness.force_unmount(mnt)
			os.chmod("/dev/fuse", old)
		t.eq(stat.S_IMODE(os.stat("/dev/fuse").st_mode), old,
		     "/dev/fuse mode restored to %o" % old)


if __name__ == "__main__":
	harness.main("int-nonroot", run)
