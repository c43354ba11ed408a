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

Nothing is timed: the server's cap makes the work long enough for
the line to show, and the checks look only at what was drawn.
"""

import os
import re
import subprocess

import harness
import httpd
from harness import STFS_INSPECT, gen, run

RATE = 8 << 20		# bytes/s: 16 MiB take two seconds, 4 MiB chunks
ERASE = b"\r\x1b[K"


def env():
	return dict(os.environ, STFS_CACHE="off", STFS_HTTP_CONNECTIONS="1")


def lines(tty):
	"""The states drawn on the terminal, in order."""
	return [x.decode("utf-8", "replace").replace("\x1b[K", "")
		for x in tty.split(b"\r") if x.strip(b"\x1b[K\n")]


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
	S, M = harness.SrcFile(local), harness.SrcFile(out_path)
	for x in S.tensors:
		t.check(M.read(M.by_name[x.name]) == S.read(x),
			"--merge: tensor %s as in the source" % x.name)


def run_(t):
	d = harness.tmpdir("progress")
	www = os.path.join(d, "www")
	os.makedirs(www)
	big = os.path.join(www, "big.safetensors")
	gen.write_safetensors(big, [("w.%d" % i, "U8", [4 << 20],
				     gen.bulk_bytes(i, 4 << 20))
				    for i in range(4)], {"format": "pt"})
	srv = httpd.Server(www)
	srv.start()
	try:
		srv.rate = RATE
		check_inspect(t, srv.url("big.safetensors"), big, d)
	finally:
		srv.stop()


harness.main("int-progress", run_, mounts=True)
