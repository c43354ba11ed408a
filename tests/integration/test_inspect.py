#!/usr/bin/env python3
"""int-inspect: stfs-inspect on valid, broken and missing files; no mount.

Exit codes: 0 valid, 1 invalid (stderr names the file and the reference
error), 2 usage or I/O error.  --json gives the summary object."""

import json
import os

import harness
from harness import STFS_INSPECT, run


def run_(t):
	d = harness.tmpdir("inspect")
	files = harness.real_files() + [harness.SAMPLE]
	for kind in ("alldtypes", "oddnames", "edge", "empty", "metaonly"):
		files.append(harness.gen_file(kind, d))
	t.check(len(harness.real_files()) >= 2, "real files found in %s"
		% harness.STFS_REAL)

	for p in files:
		base = os.path.basename(p)
		S = harness.SrcFile(p)
		r = run([STFS_INSPECT, "--json", p])
		t.eq(r.returncode, 0, "%s: --json exit status (stderr %r)"
		     % (base, r.stderr[:300]))
		t.eq(r.stderr, b"", "%s: --json prints nothing on stderr" % base)
		try:
			j = json.loads(r.stdout.decode("utf-8"))
		except ValueError as e:
			t.check(False, "%s: --json output is JSON: %s" % (base, e))
			continue
		for k in ("tensors", "bytes", "header_bytes", "parameters",
			  "parameters_total", "metadata", "source"):
			t.check(k in j, "%s: --json has %r" % (base, k))
		harness.verify_summary(t, j, S, "%s: --json" % base)
		t.eq(j.get("source"), p, "%s: --json source is the argument" % base)
		# -j is --json
		r2 = run([STFS_INSPECT, "-j", p])
		t.eq(r2.stdout, r.stdout, "%s: -j == --json" % base)
		# text mode
		r = run([STFS_INSPECT, p])
		t.eq(r.returncode, 0, "%s: text mode exit status" % base)
		t.check(len(r.stdout) > 0, "%s: text mode prints a summary" % base)
		r = run([STFS_INSPECT, "--tensors", p])
		t.eq(r.returncode, 0, "%s: --tensors exit status" % base)
		t.check(r.stdout.count(b"\n") >= len(S.tensors),
			"%s: --tensors prints a line per tensor" % base)
		r = run([STFS_INSPECT, "--quiet", p])
		t.check(r.returncode == 0 and r.stdout == b"" and r.stderr == b"",
			"%s: --quiet is silent, exit 0" % base)

	# the sample in numbers
	j = json.loads(run([STFS_INSPECT, "--json", harness.SAMPLE]).stdout)
	t.eq(j.get("tensors"), 38, "sample: 38 tensors")
	t.eq(j.get("parameters_total"), 120740, "sample: parameters_total")
	t.eq(j.get("parameters", {}).get("F4"), 32768,
	     "sample: F4 counts elements, not bytes")
	t.eq(j.get("metadata"), {"format": "pt"}, "sample: metadata")

	# broken files: exit 1, one line naming the file and the error
	for p, want in sorted(harness.gen.gen_broken(os.path.join(d, "broken")).items()):
		base = os.path.basename(p)
		r = run([STFS_INSPECT, "--json", p])
		err = r.stderr.decode("utf-8", "replace")
		t.eq(r.returncode, 1, "%s: exit status (stderr %r)" % (base, err))
		t.check(p in err, "%s: stderr names the file: %r" % (base, err))
		t.check(want in err, "%s: stderr names %s: %r" % (base, want, err))
		t.eq(err.count("\n"), 1, "%s: one line on stderr: %r" % (base, err))
		t.eq(r.stdout, b"", "%s: nothing on stdout" % base)
		r = run([STFS_INSPECT, "--quiet", p])
		t.check(r.returncode == 1 and r.stderr == b"",
			"%s: --quiet: exit 1, silent" % base)

	# usage and I/O errors: exit 2
	missing = os.path.join(d, "no-such.safetensors")
	r = run([STFS_INSPECT, missing])
	err = r.stderr.decode("utf-8", "replace")
	t.eq(r.returncode, 2, "missing file: exit status")
	t.check(missing in err, "missing file: stderr names it: %r" % err)
	r = run([STFS_INSPECT])
	t.eq(r.returncode, 2, "no argument: exit status")
	# several SOURCEs: one block each (issue 12; int-trees checks more)
	r = run([STFS_INSPECT, harness.SAMPLE, harness.SAMPLE])
	t.eq(r.returncode, 0, "two arguments: exit status")
	t.eq(r.stdout.decode().count("== %s ==" % harness.SAMPLE), 2,
	     "two arguments: two blocks")
	r = run([STFS_INSPECT, "--bogus", harness.SAMPLE])
	t.eq(r.returncode, 2, "unknown option: exit status")
	unreadable = os.path.join(d, "dir.safetensors")
	os.mkdir(unreadable)
	r = run([STFS_INSPECT, unreadable])
	t.check(r.returncode in (1, 2), "a directory without a model: exit "
		"1 or 2, got %d" % r.returncode)
	r = run([STFS_INSPECT, "--help"])
	t.check(r.returncode == 0 and b"usage" in r.stdout.lower(),
		"--help: exit 0, usage on stdout")
	r = run([STFS_INSPECT, "--version"])
	t.check(r.returncode == 0 and b"stfs" in r.stdout, "--version")


harness.main("int-inspect", run_, mounts=False)
