#!/usr/bin/env python3
"""int-cli: the manners of the command line (issue 40).

stfs:
- `--help` lists what applies to stfs, each option once: its own options
  (-o flat among them) and the FUSE ones that apply, not libfuse's
  generic block (a second -h, -V, auto_unmount; -o clone_fd, which stfs
  always sets).
- as a mount helper (mount.stfs, mount.fuse.stfs), a relative local
  SOURCE is refused in one line saying to give the absolute path (mount(8)
  and fstab resolve it from their own working directory, / at boot), and
  nothing is mounted; the absolute path and stfs itself (whose working
  directory is the user's) go on.
- STFS_HTTP_TRIES means what -o http_tries means (1-100); the old
  STFS_HTTP_RETRIES (one fewer) is refused, naming the new name, and so is
  STFS_HTTP_TRIES=0, before any request (a port where nothing listens).
"""

import os
import re

import harness
from harness import STFS, STFS_INSPECT, run


def stfs_help(t):
	r = run([STFS, "--help"], timeout=20)
	out = r.stdout.decode()
	t.eq(r.returncode, 0, "stfs --help: exit 0")
	t.eq(r.stderr, b"", "stfs --help: nothing on stderr")
	# each option listed once, at the start of its line
	listed = re.findall(r"^\s+(-o [a-z_]+|--[a-z-]+|-[a-zA-Z])", out, re.M)
	dup = sorted({o for o in listed if listed.count(o) > 1})
	t.eq(dup, [], "stfs --help: options listed more than once")
	for opt in ("-h", "-V", "-f", "-d", "-s", "-q", "-o flat", "-o tree",
		    "-o views", "-o allow_other", "-o auto_unmount",
		    "-o max_threads"):
		t.check(opt in listed, "stfs --help lists %s" % opt)
	# libfuse's generic block: not there
	for text in ("clone_fd", "print help", "print version",
		     "foreground operation", "max_idle_threads"):
		t.check(text not in out, "stfs --help: no %r (libfuse's "
			"generic help)" % text)


def helper_relative(t, d):
	"""mount.stfs and mount.fuse.stfs refuse a relative local SOURCE."""
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	work = os.path.join(d, "work")
	os.mkdir(work)
	harness.gen.gen_sample(os.path.join(work, "model.safetensors"))
	for name in ("mount.stfs", "mount.fuse.stfs"):
		helper = os.path.join(d, name)
		os.symlink(STFS, helper)
		for src, args in (("model.safetensors", []),
				  ("./model.safetensors", ["-f"]),
				  ("model.safetensors", ["-o", "ro,nofail"])):
			label = "%s %s %s" % (name, src, " ".join(args))
			r = run([helper, src, mnt] + args, timeout=30, cwd=work)
			err = r.stderr.decode("utf-8", "replace")
			t.eq(r.returncode, 2, "%s: exit 2 (%r)" % (label, err))
			t.check(err.count("\n") == 1 and src in err and
				"absolute path" in err and
				"$PWD/" + src in err,
				"%s: one line naming it and asking for the "
				"absolute path: %r" % (label, err))
			t.check(not harness.is_mounted(mnt),
				"%s: nothing mounted" % label)
			harness.force_unmount(mnt)
		# the absolute path goes on (-f: validate only)
		r = run([helper, os.path.join(work, "model.safetensors"), mnt,
			 "-f"], timeout=30, cwd=work)
		t.eq(r.returncode, 0, "%s: an absolute SOURCE is accepted: %r"
		     % (name, r.stderr))
	# stfs itself: the user's working directory, a relative path mounts
	here = os.getcwd()
	os.chdir(work)
	try:
		with harness.Mount(t, "model.safetensors", mnt) as m:
			t.check(os.path.isfile(os.path.join(m.path,
							    "__summary__.json")),
				"stfs model.safetensors (relative): mounted")
	finally:
		os.chdir(here)


def http_tries(t, d):
	mnt = os.path.join(d, "mnt-http")
	os.mkdir(mnt)
	url = "http://127.0.0.1:9/model.safetensors"
	for env, want in (({"STFS_HTTP_RETRIES": "2"}, "STFS_HTTP_TRIES"),
			  ({"STFS_HTTP_TRIES": "0"}, "1 to 100"),
			  ({"STFS_HTTP_TRIES": "101"}, "1 to 100")):
		e = dict(os.environ, STFS_HTTP_TIMEOUT="1", **env)
		for cmd in ([STFS, url, mnt], [STFS_INSPECT, url]):
			label = "%s %s" % (env, os.path.basename(cmd[0]))
			r = run(cmd, timeout=30, env=e)
			err = r.stderr.decode("utf-8", "replace")
			t.eq(r.returncode, 2, "%s: exit 2 (%r)" % (label, err))
			t.check(err.count("\n") == 1 and want in err and
				"UsageError" in err,
				"%s: one line naming %s: %r" % (label, want, err))
		t.check(not harness.is_mounted(mnt), "%s: nothing mounted" % env)
	# the new name with a good value goes on to the (absent) server
	e = dict(os.environ, STFS_HTTP_TIMEOUT="1", STFS_HTTP_TRIES="1")
	r = run([STFS_INSPECT, url], timeout=30, env=e)
	err = r.stderr.decode("utf-8", "replace")
	t.check(r.returncode == 2 and "TRIES" not in err and "127.0.0.1" in err,
		"STFS_HTTP_TRIES=1: accepted, the server is what fails: %r" % err)


def run_(t):
	d = harness.tmpdir("cli")
	stfs_help(t)
	helper_relative(t, d)
	if b"http_tries" in run([STFS, "--help"]).stdout:
		http_tries(t, d)


harness.main("int-cli", run_)
