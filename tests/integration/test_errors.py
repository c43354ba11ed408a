#!/usr/bin/env python3
"""int-errors: stfs refuses every broken file (one line "stfs: FILE:
ErrorName: detail", exit 1, nothing mounted), and a missing source or an
unusable mountpoint (exit 2, nothing mounted), in background and -f mode."""

import json
import os
import signal
import socket
import subprocess
import threading

import harness
from harness import STFS, gen, run


def refuse(t, args, mnt, want_rc, want_text, label):
	try:
		r = run([STFS] + args, timeout=20)
	except subprocess.TimeoutExpired:
		t.check(False, "%s: stfs did not return within 20 s" % label)
		harness.force_unmount(mnt)
		return None
	err = r.stderr.decode("utf-8", "replace")
	t.eq(r.returncode, want_rc, "%s: exit status (stderr %r)" % (label, err))
	for w in want_text:
		t.check(w in err, "%s: stderr names %r: %r" % (label, w, err))
	t.check(err.startswith("stfs: "), "%s: stderr starts with 'stfs: ': %r"
		% (label, err))
	t.eq(err.count("\n"), 1, "%s: exactly one line on stderr: %r" % (label, err))
	t.check(not harness.is_mounted(mnt), "%s: nothing mounted" % label)
	harness.force_unmount(mnt)
	t.check(not harness.daemon_pids(mnt), "%s: no daemon left" % label)
	return r


class Silent:
	"""A server on 127.0.0.1 that accepts connections and never answers:
	opening a SOURCE there would take as long as the HTTP timeouts allow.
	self.conns counts the connections made."""

	def __init__(self):
		self.sock = socket.socket()
		self.sock.bind(("127.0.0.1", 0))
		self.sock.listen(16)
		self.sock.settimeout(0.2)
		self.held, self.done = [], False
		self.th = threading.Thread(target=self._accept, daemon=True)
		self.th.start()

	def _accept(self):
		while not self.done:
			try:
				self.held.append(self.sock.accept()[0])
			except OSError:
				pass

	def url(self):
		return "http://127.0.0.1:%d/m.safetensors" % self.sock.getsockname()[1]

	def conns(self):
		return len(self.held)

	def stop(self):
		self.done = True
		self.th.join(10)
		for c in self.held:
			c.close()
		self.sock.close()


def unknown_before_open(t, mnt, helper):
	"""An unknown option is reported before SOURCE is opened: with a
	SOURCE whose server never answers (and an hour's HTTP timeout), the
	usage error comes at once and no connection is made."""
	srv = Silent()
	url = srv.url()
	slow = "http_timeout=3600"
	try:
		for cmd, opt, prog in (
				([STFS, "-o", "ro,treee," + slow, url, mnt],
				 "-o treee", "stfs"),
				([STFS, "-f", "-o", slow + ",treee", url, mnt],
				 "-o treee", "stfs"),
				([STFS, "--no-such-option", "-o", slow, url, mnt],
				 "--no-such-option", "stfs"),
				([helper, url, mnt, "-o", slow + ",readahed=4"],
				 "-o readahed=4", "mount.stfs"),
				([helper, url, mnt, "-f", "-o", slow + ",readahed=4"],
				 "-o readahed=4", "mount.stfs")):
			label = "%s before a slow SOURCE opens (%s %s)" % (
				opt, prog, " ".join(a for a in cmd[1:]
						    if a not in (url, mnt)))
			try:
				r = run(cmd, timeout=20)
			except subprocess.TimeoutExpired:
				t.check(False, "%s: no answer within 20 s" % label)
				continue
			finally:
				# (the code before: still opening SOURCE)
				for p in harness.daemon_pids(mnt):
					os.kill(p, signal.SIGKILL)
					harness.wait_gone(p)
				harness.force_unmount(mnt)
			err = r.stderr.decode("utf-8", "replace")
			t.eq(r.returncode, 2, "%s: exit status (%r)" % (label, err))
			t.check(opt in err and "%s --help" % prog in err and
				err.count("\n") == 1, "%s: one line naming it and "
				"`%s --help`: %r" % (label, prog, err))
		t.eq(srv.conns(), 0, "unknown options: no connection to the "
		     "SOURCE's server")
	finally:
		srv.stop()
	t.check(not harness.is_mounted(mnt), "unknown options: nothing mounted")


def shared_cache_errors(t, d, mnt, helper):
	"""-o shared_cache and its settings, wrong: one line each, exit 2,
	before SOURCE is asked anything (a server that never answers)."""
	key = os.path.join(d, "fleet.key")
	short = os.path.join(d, "short.key")
	with open(key, "w") as f:
		f.write("0123456789abcdef0123456789abcdef\n")
	with open(short, "w") as f:
		f.write("tooshort\n")
	os.chmod(key, 0o600)
	os.chmod(short, 0o600)
	env = {k: v for k, v in os.environ.items()
	       if not k.startswith(("AWS_", "STFS_SHARED"))}
	env["AWS_SHARED_CREDENTIALS_FILE"] = os.path.join(d, "no-credentials")
	env["AWS_CONFIG_FILE"] = os.path.join(d, "no-config")
	srv = Silent()
	url = srv.url()
	sc = "shared_cache=s3://fleet/blocks"
	try:
		for opts, want in (
				("shared_cache=http://host/x,shared_cache_key=" +
				 key, "s3://BUCKET/PREFIX"),
				(sc, "shared_cache_key"),
				(sc + ",shared_cache_key=" + os.path.join(
					d, "missing.key"), "cannot open it"),
				(sc + ",shared_cache_key=" + short,
				 "shorter than 16 bytes"),
				(sc + ",shared_cache_key=%s,shared_cache_profile="
				 "nope" % key, "shared_cache_profile names "
				 "profile nope"),
				(sc + ",shared_cache_key=%s,shared_cache_endpoint="
				 "ftp://host" % key, "not an http:// or https://")):
			for cmd, prog in (([STFS, "-o", opts, url, mnt], "stfs"),
					  ([helper, url, mnt, "-o", opts],
					   "mount.stfs")):
				label = "%s -o %s" % (prog, opts)
				r = run(cmd, timeout=20, env=env)
				err = r.stderr.decode("utf-8", "replace")
				t.eq(r.returncode, 2, "%s: exit status (%r)"
				     % (label, err))
				t.check(want in err and err.count("\n") == 1,
					"%s: one line saying %r: %r"
					% (label, want, err))
				t.check(not harness.is_mounted(mnt), "%s: "
					"nothing mounted" % label)
				harness.force_unmount(mnt)
		t.eq(srv.conns(), 0, "shared_cache errors: no connection to "
		     "the SOURCE's server")
	finally:
		srv.stop()


def run_(t):
	d = harness.tmpdir("err")
	mnt = os.path.join(d, "mnt")
	os.mkdir(mnt)
	for p, want in sorted(gen.gen_broken(os.path.join(d, "broken")).items()):
		base = os.path.basename(p)
		refuse(t, [p, mnt], mnt, 1, [p, want], base)
		refuse(t, ["-f", p, mnt], mnt, 1, [p, want], base + " (-f)")
	t.eq(os.listdir(mnt), [], "mountpoint left empty")

	missing = os.path.join(d, "missing.safetensors")
	refuse(t, [missing, mnt], mnt, 2, [missing], "missing source")
	refuse(t, ["-f", missing, mnt], mnt, 2, [missing], "missing source (-f)")
	emptydir = os.path.join(d, "emptydir")
	os.mkdir(emptydir)
	r = run([STFS, emptydir, mnt], timeout=20)
	t.check(r.returncode in (1, 2), "directory without a model: exit 1 or "
		"2, got %d" % r.returncode)
	t.check(not harness.is_mounted(mnt), "directory without a model: "
		"nothing mounted")

	# issue 14.9: the index at fault is named, not the shard read last;
	# two shard names that are one file (a symlink) are said to be
	idx = os.path.join(d, "idx")
	os.mkdir(idx)
	gen.write_safetensors(os.path.join(idx, "s1.safetensors"),
			      {"a": ("F32", [1], b"\0" * 4)})
	gen.write_safetensors(os.path.join(idx, "s2.safetensors"),
			      {"b": ("F32", [1], b"\0" * 4)})
	os.symlink("s1.safetensors", os.path.join(idx, "s3.safetensors"))
	extra = os.path.join(idx, "extra.safetensors.index.json")
	with open(extra, "w") as f:
		json.dump({"weight_map": {"a": "s1.safetensors",
					  "b": "s2.safetensors",
					  "c": "s2.safetensors"}}, f)
	r = refuse(t, [extra, mnt], mnt, 1, [extra + ": InvalidIndex",
		   "weight_map lists `c`"], "index lists a missing tensor")
	twice = os.path.join(idx, "twice.safetensors.index.json")
	with open(twice, "w") as f:
		json.dump({"weight_map": {"a": "s1.safetensors",
					  "b": "s3.safetensors"}}, f)
	refuse(t, [twice, mnt], mnt, 1, [twice + ": InvalidIndex",
	       "are the same file"], "two shard names, one file")

	nomnt = os.path.join(d, "no-such-dir")
	refuse(t, [harness.SAMPLE, nomnt], nomnt, 2, [nomnt], "missing mountpoint")
	refuse(t, ["-f", harness.SAMPLE, nomnt], nomnt, 2, [nomnt],
	       "missing mountpoint (-f)")
	t.check(not os.path.exists(nomnt), "missing mountpoint not created")
	afile = os.path.join(d, "afile")
	open(afile, "w").close()
	refuse(t, [harness.SAMPLE, afile], afile, 2, [afile],
	       "mountpoint is a regular file")
	refuse(t, ["-f", harness.SAMPLE, afile], afile, 2, [afile],
	       "mountpoint is a regular file (-f)")

	# usage errors
	for args in ([], [harness.SAMPLE], ["--no-such-option", harness.SAMPLE, mnt]):
		r = run([STFS] + args, timeout=20)
		t.eq(r.returncode, 2, "usage error %r: exit status" % args)
		t.check(r.stderr != b"", "usage error %r: says why" % args)
	t.check(not harness.is_mounted(mnt), "usage errors: nothing mounted")
	# an option nobody knows (a typo): one line naming it and pointing to
	# where the options are listed, as stfs and as the mount helper
	helper = os.path.join(d, "mount.stfs")
	os.symlink(STFS, helper)
	for cmd, opt, prog in (
			([STFS, "--no-such-option", harness.SAMPLE, mnt],
			 "--no-such-option", "stfs"),
			([STFS, "-o", "ro,treee", harness.SAMPLE, mnt],
			 "-o treee", "stfs"),
			([helper, harness.SAMPLE, mnt, "-o", "readahed=4"],
			 "-o readahed=4", "mount.stfs")):
		r = run(cmd, timeout=20)
		err = r.stderr.decode("utf-8", "replace")
		t.eq(r.returncode, 2, "%s: exit status" % opt)
		t.check(opt in err and "%s --help" % prog in err and
			"man %s" % prog in err and err.count("\n") == 1,
			"%s: one line naming it and `%s --help`: %r"
			% (opt, prog, err))
		t.check(not harness.is_mounted(mnt), "%s: nothing mounted" % opt)
	r = run([STFS, "--help"], timeout=20)
	t.check(r.returncode == 0 and b"usage" in (r.stdout + r.stderr).lower(),
		"--help: exit 0 and usage")
	http = b"http_tries" in r.stdout
	if http:
		unknown_before_open(t, mnt, helper)
	if b"shared_cache=" in r.stdout:
		shared_cache_errors(t, d, mnt, helper)

	# numeric -o options out of range or not numbers (issue 14.8): one
	# line naming the option and its range, exit 2, nothing mounted (so
	# no read_ahead_kb written), as stfs and as the mount helper
	bad = [("readahead", "-1", "0 to 65536"),
	       ("readahead", "99999999999", "0 to 65536"),
	       ("readahead", "65537", "0 to 65536"),
	       ("readahead", "", "0 to 65536"),
	       ("readahead", "12k", "0 to 65536"),
	       ("uid", "-1", "0 to 4294967294"),
	       ("uid", "4294967295", "0 to 4294967294"),
	       ("gid", "99999999999", "0 to 4294967294"),
	       ("gid", "+5", "0 to 4294967294")]
	if http:
		bad += [("http_tries", "0", "1 to 100"),
			("http_tries", "101", "1 to 100"),
			("http_cache_mb", "0", "1 to 65536"),
			("http_connections", "100000", "1 to 64"),
			("http_connections", "0", "1 to 64"),
			("http_timeout", "0", "1 to 3600"),
			("http_timeout", "-5", "1 to 3600"),
			("http_readahead_mb", "4097", "1 to 4096")]
	for name, val, rng in bad:
		opt = "%s=%s" % (name, val)
		want = ["-o " + opt, name, rng]
		refuse(t, ["-o", "ro," + opt, harness.SAMPLE, mnt], mnt, 2, want,
		       "-o %s" % opt)
		r2 = run([helper, harness.SAMPLE, mnt, "-o", opt], timeout=20)
		err = r2.stderr.decode("utf-8", "replace")
		t.eq(r2.returncode, 2, "mount.stfs -o %s: exit 2 (%r)" % (opt, err))
		t.check(rng in err and err.count("\n") == 1,
			"mount.stfs -o %s: one line with the range: %r" % (opt, err))
		t.check(not harness.is_mounted(mnt), "mount.stfs -o %s: nothing "
			"mounted" % opt)
		harness.force_unmount(mnt)
	# the ends of each range are accepted (helper -f: validate only)
	good = ["readahead=0", "readahead=65536", "uid=0", "gid=4294967294"]
	if http:
		good += ["http_tries=1", "http_tries=100", "http_connections=64",
			 "http_cache_mb=1", "http_timeout=3600"]
	for opt in good:
		r2 = run([helper, harness.SAMPLE, mnt, "-f", "-o", opt], timeout=20)
		t.eq(r2.returncode, 0, "mount.stfs -f -o %s: accepted (%r)"
		     % (opt, r2.stderr))
		harness.force_unmount(mnt)
	t.check(not harness.is_mounted(mnt), "range checks: nothing mounted")
	r = run([STFS, "--version"], timeout=20)
	t.check(r.returncode == 0 and b"0." in (r.stdout + r.stderr), "--version")
	# (other tests mount in parallel: look only under our own directory)
	t.eq([mp for mp in harness.mountpoints() if mp.startswith(os.path.realpath(d))],
	     [], "nothing mounted under %s" % d)


harness.main("int-errors", run_)
