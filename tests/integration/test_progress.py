#!/usr/bin/env python3
"""int-progress: the progress line of long work (src/cli/progress.h), on a
pseudo-terminal and off it (issue 32).

- stfs-inspect --stats, --diff and --merge of a model read over HTTP from
  a server that sends at most RATE bytes/s per connection (httpd.py), one
  connection (STFS_HTTP_CONNECTIONS=1): the work takes seconds, so the
  line on a terminal shows done of total, a rate and the time left, and
  is erased at the end (--merge keeps its last state, the file written).
  stdout is what it is without a terminal; stderr as a pipe, or --quiet
  on a terminal, gets nothing.
- stfs-inspect of the sharded set below (its index held as for the
  mount): on a terminal it says
  "shards' headers read: K of N" while the set opens and erases it
  before it prints; with --json into a pipe, --quiet, or stderr a pipe,
  nothing; with --json and both on the terminal, the line, erased before
  the JSON.  --merge of the set (one model, not a tree) says it too.
- A mount of a sharded set over HTTP whose index answer is held HOLD s
  (longer than the second a mount waits before it says anything), then
  its shards: on a terminal stfs says "shards' headers read: K of N" and
  erases it before it returns; stderr as a pipe, or -q, gets nothing at
  all (neither the line nor the counters of the index, read and closed
  while the set opened, which are for the log at unmount).
  The mount then serves every tensor's bytes.

Nothing is timed: the server's hold and cap make the work long enough for
the line to show, and the checks look only at what was drawn.
"""

import json
import os
import re
import subprocess

import harness
import gen_sharded
import httpd
from harness import STFS, STFS_INSPECT, gen, run

RATE = 8 << 20		# bytes/s: 16 MiB take two seconds, 4 MiB chunks
HOLD = 1.5		# s the index's answers wait
ERASE = b"\r\x1b[K"


def env():
	return dict(os.environ, STFS_CACHE="off", STFS_HTTP_CONNECTIONS="1")


def lines(tty):
	"""The states drawn on the terminal, in order: what comes after the
	line ends (a closing message such as --merge's "wrote ...") is not a
	state."""
	states = tty.split(b"\n", 1)[0]
	return [x.decode("utf-8", "replace").replace("\x1b[K", "")
		for x in states.split(b"\r") if x.strip(b"\x1b[K\n")]


def after(tty):
	"""The lines printed after the progress line ended."""
	rest = tty.split(b"\n", 1)[1] if b"\n" in tty else b""
	return [x.decode("utf-8", "replace").strip("\r") for x in rest.split(b"\n")
		if x.strip(b"\r")]


def check_inspect(t, url, local, d):
	e = env()
	want = run([STFS_INSPECT, "--stats", local], timeout=60).stdout
	rc, out, tty = harness.run_pty([STFS_INSPECT, "--stats", url],
				       env=e, timeout=120)
	t.eq(rc, 0, "--stats on a terminal: exit status")
	t.eq(out, want, "--stats on a terminal: stdout as without one")
	drawn = lines(tty)
	line = re.compile(r"^stfs-inspect: stats: [0-9.]+ [KMG]?i?B of 16\.0 "
			  r"MiB \([0-9]+%\), [0-9.]+ [KMG]?i?B/s, "
			  r"[0-9]+:[0-9]{2} left$")
	t.check(any(line.match(x) for x in drawn),
		lambda: "--stats on a terminal: a line with the rate and the "
		"time left, like `stats: 4.0 MiB of 16.0 MiB (25%%), 8.0 MiB/s, "
		"0:02 left`; drawn: %r" % drawn)
	t.check(tty.endswith(ERASE), lambda: "--stats: the line is erased at "
		"the end: %r" % tty[-80:])

	r = subprocess.run([STFS_INSPECT, "--stats", url], env=e,
			   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
			   stdin=subprocess.DEVNULL, timeout=120)
	t.eq((r.returncode, r.stdout, r.stderr), (0, want, b""),
	     "--stats with stderr a pipe: no progress line")
	rc, out, tty = harness.run_pty([STFS_INSPECT, "--stats", "--quiet",
					url], env=e, timeout=120)
	t.eq((rc, out, tty), (0, b"", b""), "--stats --quiet on a terminal")

	# A over HTTP, B its local copy: equal, compared at the capped rate
	rc, out, tty = harness.run_pty([STFS_INSPECT, "--diff", url, local],
				       env=e, timeout=120)
	t.eq(rc, 0, "--diff on a terminal: exit status")
	t.check(any(re.match(r"^stfs-inspect: compared: .* of 16\.0 MiB .*/s, "
			     r"[0-9]+:[0-9]{2} left$", x) for x in lines(tty)),
		lambda: "--diff on a terminal: rate and time left: %r"
		% lines(tty))
	t.check(tty.endswith(ERASE), "--diff: the line is erased at the end")

	out_path = os.path.join(d, "merged.safetensors")
	rc, out, tty = harness.run_pty([STFS_INSPECT, "--merge", "-o",
					out_path, url], env=e, timeout=120)
	t.eq(rc, 0, "--merge on a terminal: exit status")
	drawn = lines(tty)
	t.check(tty.endswith(b"\n") and drawn and re.match(
		r"^stfs-inspect: .*merged\.safetensors: written: 16\.0 MiB of "
		r"16\.0 MiB \(100%\), [0-9.]+ [KMG]?i?B/s$", drawn[-1].strip()),
		lambda: "--merge: its last state stays, with the average "
		"rate: %r" % drawn[-3:])
	t.check(any(re.match(r"^stfs-inspect: wrote 4 tensors, [0-9]+ bytes "
			     r"to .*merged\.safetensors$", x)
		    for x in after(tty)),
		lambda: "--merge: says what it wrote, after the progress "
		"line: %r" % after(tty))
	S, M = harness.SrcFile(local), harness.SrcFile(out_path)
	for x in S.tensors:
		t.check(M.read(M.by_name[x.name]) == S.read(x),
			"--merge: tensor %s as in the source" % x.name)


def check_narrow(t, url, d):
	"""--merge of 48 MiB (three copies of 16 MiB) on 80 columns, the
	terminal's default: the path gives way to the rate and the time
	left, which the line's cut end lost before ("..., 0:0")."""
	out_path = os.path.join(d, "narrow", "merged.safetensors")
	os.makedirs(os.path.dirname(out_path))
	rc, out, tty = harness.run_pty([STFS_INSPECT, "--merge", "-o",
					out_path, url], env=env(), timeout=120,
				       cols=80)
	drawn = lines(tty)
	t.eq(rc, 0, "--merge on 80 columns: exit status")
	t.check(drawn and all(len(x.strip("\n")) <= 79 for x in drawn),
		lambda: "--merge on 80 columns: every state fits: %r" % drawn)
	t.check(any(re.match(r"^stfs-inspect: (.*: )?written: .* of 48\.0 "
			     r"MiB \([0-9]+%\), [0-9.]+ [KMG]?i?B/s, "
			     r"[0-9]+:[0-9]{2} left$", x) for x in drawn),
		lambda: "--merge on 80 columns: the rate and the time left "
		"shown: %r" % drawn)


def check_inspect_open(t, srv, www, d):
	url = srv.url("set/model.safetensors.index.json")
	srv.delays["/set/model.safetensors.index.json"] = HOLD
	nshards = len([f for f in os.listdir(os.path.join(www, "set"))
		       if f.endswith(".safetensors")])
	line = re.compile(r"^stfs-inspect: .*index\.json: shards' headers "
			  r"read: [0-9]+ of %d(, .*)?$" % nshards)
	e = env()
	wants = {}
	for args in ([], ["--json"]):
		want = run([STFS_INSPECT] + args + [url], env=e, timeout=120)
		wants[tuple(args)] = want.stdout
		t.eq((want.returncode, want.stderr), (0, b""), "stfs-inspect %s "
		     "with stderr a pipe: nothing on stderr" % args)
		rc, out, tty = harness.run_pty([STFS_INSPECT] + args + [url],
					       env=e, timeout=120)
		t.eq((rc, out), (0, want.stdout), "stfs-inspect %s, stderr a "
		     "terminal: stdout as without one" % args)
		if args:
			t.eq(tty, b"", "stfs-inspect --json into a pipe: no "
			     "progress line")
			continue
		t.check(any(line.match(x) for x in lines(tty)),
			lambda: "stfs-inspect on a terminal says what a slow "
			"SOURCE waits for (`stfs-inspect: URL: shards' headers "
			"read: K of %d, ...`): %r" % (nshards, lines(tty)))
		t.check(tty.endswith(ERASE), lambda: "stfs-inspect: the "
			"line is erased: %r" % tty[-80:])
	rc, out, tty = harness.run_pty([STFS_INSPECT, "--quiet", url], env=e,
				       timeout=120)
	t.eq((rc, tty), (0, b""), "stfs-inspect --quiet on a terminal: "
	     "nothing on stderr")
	# --json, stdout and stderr on the terminal: someone watches
	rc, _, tty = harness.run_pty([STFS_INSPECT, "--json", url], env=e,
				     timeout=120, stdout_tty=True)
	drawn = tty.find(b"shards' headers read")
	brace = tty.find(b"{")
	t.check(rc == 0 and 0 <= drawn < brace and
		ERASE in tty[drawn:brace], lambda: "stfs-inspect --json on a "
		"terminal: the line, erased before the JSON: %r" % tty[:300])
	t.eq(json.loads(tty[brace:].replace(b"\r\n", b"\n")),
	     json.loads(wants[("--json",)]), "stfs-inspect --json on a terminal: "
	     "the JSON as into a pipe")
	# --merge opens one model (not a tree): the same line, then its own
	merged = os.path.join(d, "set-merged.safetensors")
	rc, _, tty = harness.run_pty([STFS_INSPECT, "--merge", "-o", merged,
				      url], env=e, timeout=120)
	t.check(rc == 0 and any(line.match(x) for x in lines(tty)),
		lambda: "stfs-inspect --merge on a terminal: what the set's "
		"opening waits for: %r" % lines(tty))
	del srv.delays["/set/model.safetensors.index.json"]


def check_mount(t, srv, www, d):
	url = srv.url("set/model.safetensors.index.json")
	srv.delays["/set/model.safetensors.index.json"] = HOLD
	shards = sorted(f for f in os.listdir(os.path.join(www, "set"))
			if f.endswith(".safetensors"))
	mnt = os.path.join(d, "mnt")
	os.makedirs(mnt)
	e = env()

	def mount(args, how):
		"""stfs ARGS URL MNT (it daemonizes); the terminal's output."""
		try:
			if how == "tty":
				rc, out, tty = harness.run_pty(
					[STFS] + args + [url, mnt], env=e,
					timeout=120)
			else:
				r = subprocess.run([STFS] + args + [url, mnt],
						   env=e, stdin=subprocess.DEVNULL,
						   stdout=subprocess.PIPE,
						   stderr=subprocess.PIPE,
						   timeout=120)
				rc, tty = r.returncode, r.stderr
			t.eq(rc, 0, "stfs %s (%s): exit status" % (args, how))
			t.check(harness.is_mounted(mnt), "stfs %s (%s): mounted"
				% (args, how))
			if how == "tty":
				verify(t, www, shards, mnt)
			return tty
		finally:
			pids = harness.daemon_pids(mnt)
			harness.force_unmount(mnt)
			for p in pids:
				harness.wait_gone(p)

	tty = mount([], "tty")
	drawn = lines(tty)
	line = re.compile(r"^stfs: .*index\.json: shards' headers read: "
			  r"[0-9]+ of %d(, .*)?$" % len(shards))
	t.check(any(line.match(x) for x in drawn),
		lambda: "a slow mount on a terminal says what it waits for "
		"(`stfs: URL: shards' headers read: K of %d, ...`): %r"
		% (len(shards), drawn))
	last = tty.rfind(b"shards' headers read")
	t.check(last >= 0 and ERASE in tty[last:],
		lambda: "the line is erased before stfs returns: %r"
		% tty[-200:])
	for args, how in (([], "pipe"), (["-q"], "tty"), (["--quiet"], "tty")):
		out = mount(args, how)
		t.eq(out, b"", "stfs %s, stderr a %s: nothing on stderr (no "
		     "progress line, no index's counters)" % (args, how))


def verify(t, www, shards, mnt):
	"""Every tensor through the mount is its bytes in its shard."""
	n = 0
	for s in shards:
		S = harness.SrcFile(os.path.join(www, "set", s))
		for x in S.tensors:
			with open(os.path.join(mnt, x.name), "rb") as f:
				t.check(f.read() == S.read(x), "tensor %s through "
					"the mount" % x.name)
			n += 1
	t.check(n > 0, "the set has tensors")


def run_(t):
	d = harness.tmpdir("progress")
	www = os.path.join(d, "www")
	os.makedirs(os.path.join(www, "set"))
	big = os.path.join(www, "big.safetensors")
	gen.write_safetensors(big, [("w.%d" % i, "U8", [4 << 20],
				     gen.bulk_bytes(i, 4 << 20))
				    for i in range(4)], {"format": "pt"})
	wide = os.path.join(www, "wide.safetensors")
	gen.write_safetensors(wide, [("w.%d" % i, "U8", [16 << 20],
				      gen.bulk_bytes(i, 16 << 20))
				     for i in range(3)], {"format": "pt"})
	gen_sharded.write_sharded(os.path.join(www, "set"),
				  gen_sharded.mixed_tensors(40, 32), 20)
	srv = httpd.Server(www)
	srv.start()
	try:
		srv.rate = RATE
		check_inspect(t, srv.url("big.safetensors"), big, d)
		srv.rate = 3 * RATE
		check_narrow(t, srv.url("wide.safetensors"), d)
		srv.rate = 0
		check_inspect_open(t, srv, www, d)
		check_mount(t, srv, www, d)
	finally:
		srv.stop()


harness.main("int-progress", run_, mounts=True)
