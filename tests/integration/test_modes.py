#!/usr/bin/env python3
"""int-modes: background mode (returns when ready, keeps no pipe open),
foreground -f, signals unmount, `mount -t fuse.stfs` through mount.fuse3,
the mount.stfs helper (and its fake -f), `mount` output."""

import json
import os
import signal
import shutil
import subprocess
import sys
import time

import harness
from harness import STFS, run


def shows_in_mount(t, mnt, label):
	r = run(["mount"])
	t.check((" on %s type fuse.stfs " % mnt).encode() in r.stdout,
		"%s: `mount` shows 'on %s type fuse.stfs'" % (label, mnt))


def quick_check(t, mnt, label):
	try:
		names = os.listdir(mnt)
	except OSError as e:
		t.check(False, "%s: ls right after mounting: %s" % (label, e))
		return
	t.check("wte.weight" in names and "__summary__.json" in names,
		"%s: ls right after mounting shows the tensors" % label)
	S = harness.SrcFile(harness.SAMPLE)
	with open(os.path.join(mnt, "wte.weight"), "rb") as f:
		t.check(f.read() == S.read(S.by_name["wte.weight"]),
			"%s: wte.weight bytes" % label)


def start_bg(t, args, mnt, label, env=None, cwd=None):
	"""Run a command that should mount in the background and return."""
	try:
		r = run(args, timeout=20, env=env, cwd=cwd)
	except subprocess.TimeoutExpired:
		t.check(False, "%s: `%s` did not return within 20 s (does the "
			"daemon keep stdout/stderr open?)" % (label, " ".join(args)))
		return False
	ok = t.eq(r.returncode, 0, "%s: exit status (stderr %r)" % (label, r.stderr))
	t.eq(r.stdout, b"", "%s: nothing on stdout" % label)
	t.check(harness.is_mounted(mnt), "%s: mounted when the command returns"
		% label)
	return ok and harness.is_mounted(mnt)


def stop_bg(t, mnt, label, how="fusermount", also=()):
	pids = harness.daemon_pids(mnt, also)
	t.eq(len(pids), 1, "%s: one daemon process for %s: %r" % (label, mnt, pids))
	if how == "fusermount":
		r = harness.fusermount_u(mnt)
		t.eq(r.returncode, 0, "%s: fusermount3 -u: %r" % (label, r.stdout))
	elif how == "umount":
		r = run(["umount", mnt])
		t.eq(r.returncode, 0, "%s: umount: %r" % (label, r.stderr))
	else:
		for p in pids:
			os.kill(p, how)
	for p in pids:
		gone = harness.wait_gone(p)
		t.check(gone, "%s: daemon %d exits" % (label, p))
		if not gone:
			os.kill(p, signal.SIGKILL)
	deadline = time.monotonic() + 5
	while harness.is_mounted(mnt) and time.monotonic() < deadline:
		time.sleep(0.05)
	t.check(not harness.is_mounted(mnt), "%s: unmounted" % label)
	harness.force_unmount(mnt)


def mount_t(t, bindir, src, mnt, opts):
	label = "mount -t fuse.stfs %s" % " ".join(opts)
	cmd = ["unshare", "--mount", "--propagation", "private", sys.executable,
	       os.path.abspath(__file__), "--ns-child", bindir, src, mnt,
	       json.dumps(opts)]
	try:
		r = run(cmd, timeout=60)
	except subprocess.TimeoutExpired:
		t.check(False, "%s: timed out" % label)
		for p in harness.daemon_pids(mnt):
			os.kill(p, signal.SIGKILL)
		return
	try:
		res = json.loads(r.stdout.decode().strip().splitlines()[-1])
	except (ValueError, IndexError):
		t.check(False, "%s: namespace child failed: %r %r"
			% (label, r.stdout[-500:], r.stderr[-1000:]))
		return
	t.eq(res["rc"], 0, "%s: exit status (stderr %r)" % (label, res["stderr"]))
	if res["rc"] != 0:
		return
	t.check(res["mounted"], "%s: mounted when mount returns" % label)
	t.eq(res["fstype"], "fuse.stfs", "%s: fstype" % label)
	t.check(res["mount_shows"], "%s: `mount` shows 'on %s type fuse.stfs'"
		% (label, mnt))
	t.check(res["listing_ok"], "%s: ls shows the tensors" % label)
	t.check(res["bytes_ok"], "%s: wte.weight bytes" % label)
	t.eq(res["umount_rc"], 0, "%s: umount" % label)
	t.check(res["daemon_gone"], "%s: daemon exits after umount" % label)
	t.check(not res["still_mounted"], "%s: unmounted" % label)


def ns_child(bindir, src, mnt, opts):
	"""Runs inside `unshare --mount`: make /usr/local/sbin hold the build's
	stfs, mount with mount(8), look, unmount; print the findings as JSON."""
	res = {"rc": None}
	try:
		r = run(["mount", "--bind", bindir, "/usr/local/sbin"])
		if r.returncode != 0:
			res["stderr"] = "bind mount: %r" % r.stderr
			res["rc"] = -1
			return res
		# an installed helper (scripts/try, the .deb) would be run
		# instead of mount.fuse3: make it the build's stfs too
		for h in ("/sbin/mount.fuse.stfs", "/usr/sbin/mount.fuse.stfs"):
			if os.path.exists(h):
				r = run(["mount", "--bind", os.path.join(bindir, "stfs"),
					 os.path.realpath(h)])
				if r.returncode != 0:
					res["stderr"] = "bind mount over %s: %r" % (
						h, r.stderr)
					res["rc"] = -1
					return res
		r = run(["mount", "-t", "fuse.stfs"] + opts + [src, mnt], timeout=20)
		res["rc"] = r.returncode
		res["stderr"] = r.stderr.decode(errors="replace")
		if r.returncode != 0:
			return res
		e = harness.mount_entry(mnt)
		res["mounted"] = e is not None
		res["fstype"] = e and e[1]
		out = run(["mount"]).stdout
		res["mount_shows"] = (" on %s type fuse.stfs " % mnt).encode() in out
		names = os.listdir(mnt)
		res["listing_ok"] = "wte.weight" in names and "__summary__.json" in names
		S = harness.SrcFile(src)
		with open(os.path.join(mnt, "wte.weight"), "rb") as f:
			res["bytes_ok"] = f.read() == S.read(S.by_name["wte.weight"])
		pids = harness.daemon_pids(mnt)
		r = run(["umount", mnt])
		res["umount_rc"] = r.returncode
		res["daemon_gone"] = bool(pids) and all(harness.wait_gone(p) for p in pids)
		res["still_mounted"] = harness.is_mounted(mnt)
	finally:
		if harness.is_mounted(mnt):
			run(["umount", "-l", mnt])
		for p in harness.daemon_pids(mnt):
			os.kill(p, signal.SIGKILL)
		print(json.dumps(res), flush=True)
	return res


def run_(t):
	d = harness.tmpdir("modes")
	src = os.path.join(d, "sample.safetensors")
	shutil.copyfile(harness.SAMPLE, src)
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)

	# background mode: returns when ready, `ls` works at once
	if start_bg(t, [STFS, src, mnt], mnt, "background"):
		quick_check(t, mnt, "background")
		shows_in_mount(t, mnt, "background")
		e = harness.mount_entry(mnt)
		t.check(e and e[2] == src, "background: mount source is %r: %r" % (src, e))
		stop_bg(t, mnt, "background")

	# relative paths: the daemon changes directory, paths must still work
	rel = "mnt-rel-%d" % os.getpid()
	os.mkdir(os.path.join(d, rel))
	rmnt = os.path.join(d, rel)
	if start_bg(t, [STFS, "sample.safetensors", rel], rmnt, "relative paths",
		    cwd=d):
		quick_check(t, rmnt, "relative paths")
		# fsname is the absolute path: findmnt shows which file
		e = harness.mount_entry(rmnt)
		t.check(e and e[2] == os.path.realpath(src), "relative paths: "
			"mount source shown as %r, not the absolute %r"
			% (e and e[2], os.path.realpath(src)))
		stop_bg(t, rmnt, "relative paths", also=(rel,))

	# signals to the background daemon unmount
	for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
		label = "background + %s" % signal.Signals(sig).name
		if start_bg(t, [STFS, src, mnt], mnt, label):
			stop_bg(t, mnt, label, how=sig)

	# foreground: SIGTERM unmounts and the process exits 0
	m = harness.Mount(t, src, mnt)
	m.start()
	quick_check(t, mnt, "-f")
	shows_in_mount(t, mnt, "-f")
	m.proc.send_signal(signal.SIGTERM)
	try:
		rc = m.proc.wait(timeout=10)
		t.eq(rc, 0, "-f + SIGTERM: exit status")
	except subprocess.TimeoutExpired:
		t.check(False, "-f + SIGTERM: process still running after 10 s")
	t.check(not harness.is_mounted(mnt), "-f + SIGTERM: unmounted")
	m.unmount()

	# two mounts of one source at once
	mnt2 = os.path.join(d, "mnt2")
	os.mkdir(mnt2)
	with harness.Mount(t, src, mnt), harness.Mount(t, src, mnt2):
		quick_check(t, mnt, "two mounts (1)")
		quick_check(t, mnt2, "two mounts (2)")

	# mount -t fuse.stfs: mount(8) -> /sbin/mount.fuse3 -> `sh -c stfs ...`.
	# mount(8) drops PATH for its helpers, so sh finds stfs only in its
	# default PATH (/usr/local/sbin first).  In a private mount namespace
	# the build's stfs is bind-mounted there, as if it were installed; the
	# host sees none of it.
	if os.path.exists("/sbin/mount.fuse.stfs"):
		t.note("/sbin/mount.fuse.stfs is installed: mount -t uses it, "
		       "not the build's stfs")
	if os.geteuid() != 0 or not shutil.which("unshare"):
		t.note("not root or no unshare: mount -t fuse.stfs not tested")
	else:
		bindir = os.path.join(d, "sbin")
		os.mkdir(bindir)
		os.symlink(STFS, os.path.join(bindir, "stfs"))
		# fstab's options: mount(8) keeps some (noauto, x-*, X-*,
		# comment=) from its helper, passes others (nofail, _netdev,
		# users and the noexec,nosuid,nodev users implies)
		for opts in ([], ["-o", "ro"], ["-o", "ro,nofail,_netdev,noauto"],
			     ["-o", "ro,users,x-systemd.automount,"
			      "x-systemd.idle-timeout=60,X-mount.mkdir,"
			      "comment=models"]):
			mount_t(t, bindir, src, mnt, opts)

	# mount.stfs helper: a symlink named mount.stfs to the built stfs
	bindir = os.path.join(d, "bin")
	os.mkdir(bindir)
	helper = os.path.join(bindir, "mount.stfs")
	os.symlink(STFS, helper)
	# and as mount(8) runs an installed mount.fuse.stfs for an fstab
	# line (user=NAME: a user mounting a `user` line), or as a user runs
	# it with that line's options by hand
	for opts in (["-o", "ro"], ["-o", "ro,allow_other,defaults,rw,nofail"],
		     ["-s", "-n", "-v", "-o", "ro"], [],
		     ["-o", "ro,noexec,nosuid,nodev,nofail,_netdev,users,"
		      "user=root"],
		     ["-o", "ro,noauto,user,x-systemd.automount,"
		      "x-systemd.requires=network-online.target,"
		      "X-mount.mkdir,comment=models"]):
		label = "mount.stfs %s" % " ".join(opts)
		if start_bg(t, [helper, src, mnt] + opts, mnt, label):
			quick_check(t, mnt, label)
			shows_in_mount(t, mnt, label)
			stop_bg(t, mnt, label)

	# mount.stfs -f: fake, validates and mounts nothing
	r = run([helper, src, mnt, "-f", "-o", "ro"], timeout=20)
	t.eq(r.returncode, 0, "mount.stfs -f: exit status (stderr %r)" % r.stderr)
	t.check(not harness.is_mounted(mnt), "mount.stfs -f mounts nothing")
	t.check(not harness.daemon_pids(mnt), "mount.stfs -f: no daemon")
	harness.force_unmount(mnt)
	broken = os.path.join(d, "TensorInvalidInfo.safetensors")
	with open(broken, "wb") as f:
		f.write(harness.gen.broken_files()["TensorInvalidInfo"])
	r = run([helper, broken, mnt, "-f", "-o", "ro"], timeout=20)
	t.eq(r.returncode, 1, "mount.stfs -f on a broken file: exit status")
	t.check(b"TensorInvalidInfo" in r.stderr, "mount.stfs -f on a broken "
		"file names the error: %r" % r.stderr)
	t.check(not harness.is_mounted(mnt), "mount.stfs -f broken: nothing mounted")
	harness.force_unmount(mnt)


if len(sys.argv) == 6 and sys.argv[1] == "--ns-child":
	ns_child(sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5]))
	sys.exit(0)
harness.main("int-modes", run_)
