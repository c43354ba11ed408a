#!/usr/bin/env python3
"""int-basic: mount the real files (written by the reference library) and
the sample; every tensor's bytes, sidecar and the root files through
ls, stat, cat, dd, cmp and plain reads."""

import os
import stat

import harness


def run(t):
	files = harness.real_files()
	t.check(len(files) >= 2, "real files found in %s" % harness.STFS_REAL)
	files.append(harness.SAMPLE)
	for src in files:
		base = os.path.basename(src)
		with harness.Mount(t, src) as m:
			S = harness.verify_tree(t, src, m.path)
			out = harness.ls_l(t, m.path)
			lines = [l for l in out.splitlines()
				 if l and not l.startswith("total")]
			# . and .. plus 2 files per tensor plus the 2 root files
			# (.npy and .txt are hidden even from ls -a)
			t.eq(len(lines), 2 + 2 * len(S.tensors) + 2,
			     "%s: ls -la line count" % base)
			for x in S.tensors:
				f = harness.encode_name(x.name)
				hit = [l for l in lines if l.endswith(" " + f)]
				if t.check(len(hit) == 1, "%s: ls -la shows %s" % (base, f)):
					fields = hit[0].split()
					t.eq(fields[0], "-r--r--r--", "%s: ls mode of %s" % (base, f))
					t.eq(int(fields[4]), x.nbytes, "%s: ls size of %s" % (base, f))
			# cat of every tensor equals the source slice
			for x in S.tensors:
				r = harness.run(["cat", os.path.join(m.path,
					harness.encode_name(x.name))])
				t.check(r.returncode == 0 and r.stdout == S.read(x),
					"%s: cat %s" % (base, x.name))
			# the file times and owner are sensible (not 0)
			st = os.stat(os.path.join(m.path, "__summary__.json"))
			t.check(st.st_mtime > 0, "%s: mtime set" % base)
			t.check(stat.S_ISDIR(os.stat(m.path).st_mode),
				"%s: root is a directory" % base)
			# opendir/readdir twice give the same answer
			t.eq(sorted(os.listdir(m.path)), sorted(os.listdir(m.path)),
			     "%s: listing is stable" % base)
			# the mount shows as fuse.stfs
			e = harness.mount_entry(m.path)
			t.check(e is not None and e[1] == "fuse.stfs",
				"%s: mountinfo type fuse.stfs: %r" % (base, e))
			r = harness.run(["mount"])
			t.check((" on %s type fuse.stfs " % m.path).encode() in r.stdout,
				"%s: `mount` shows 'on %s type fuse.stfs'" % (base, m.path))

	# 5000 tensors: the listing spans many readdir calls
	src = harness.gen_file("many")
	with harness.Mount(t, src) as m:
		S = harness.verify_tree(t, src, m.path, shell=False)
		out = harness.ls_l(t, m.path)
		t.eq(len([l for l in out.splitlines() if l.endswith(".weight")]),
		     len(S.tensors), "many: ls -la lists every tensor once")
		r = harness.run(["find", m.path, "-path", m.path + "/.*", "-prune",
				 "-o", "-type", "f", "-print"])
		t.eq(len(r.stdout.splitlines()), 2 * len(S.tensors) + 2,
		     "many: find sees every file")
	listing_requests(t, src, S)


def kernel_at_least(major, minor):
	v = os.uname().release.split("-")[0].split(".")
	return (int(v[0]), int(v[1])) >= (major, minor)


def listing_requests(t, src, S):
	"""A listing of 10,002 entries is a few large requests: glibc sizes
	its getdents64 buffer by the directory's st_blksize, and from Linux
	6.16 FUSE sizes READDIRPLUS by that buffer; `ls -l` then asks the
	daemon nothing per entry.  The daemon's -d log counts the requests."""
	big = kernel_at_least(6, 16)	# older ones ask a page at a time
	with harness.Mount(t, src, args=["-d"]) as m:
		# Mount.start listed the root once (os.listdir: glibc readdir)
		log = m.output()
		rdp = log.count("opcode: READDIRPLUS (44)")
		t.check(0 < rdp <= (8 if big else 2 * len(S.tensors) + 2),
			"many: the first listing took %d READDIRPLUS (kernel %s)"
			% (rdp, os.uname().release))
		trace = os.path.join(harness.tmpdir("strace"), "ls.trace")
		r = harness.run(["strace", "-f", "-qq", "-e", "trace=getdents64",
				 "-o", trace, "ls", "-ln", "--quoting-style=escape",
				 "--time-style=+", m.path], timeout=120)
		t.check(r.returncode == 0, "many: ls -ln under strace: %s"
			% r.stderr.decode("utf-8", "replace"))
		asked = log_requests(m.output()[len(log):])
		t.check(sum(asked.values()) <= 10, "many: ls -l of %d entries "
			"asked the daemon only a few things: %r"
			% (2 * len(S.tensors) + 2, asked))
		with open(trace) as f:
			calls = [l for l in f if "getdents64(" in l]
		sizes = [int(l.split(",")[-1].split(")")[0]) for l in calls]
		t.check(sizes and min(sizes) >= 1 << 20, "many: ls reads the "
			"directory in buffers of 1 MiB or more, not %r"
			% sorted(set(sizes)))
		t.check(len(calls) <= 4, "many: ls -l listed 10,002 entries "
			"in %d getdents64 calls" % len(calls))
		# what it listed: every name once, each with its size
		got = {}
		for line in r.stdout.decode("utf-8").splitlines()[1:]:
			f = line.split(None, 5)
			got[f[5]] = int(f[4])
		want = {harness.encode_name(x.name): x.nbytes for x in S.tensors}
		for name in [n + ".json" for n in want] + ["__metadata__.json",
							   "__summary__.json"]:
			with open(os.path.join(m.path, name), "rb") as fh:
				want[name] = len(fh.read())
		t.eq(len(got), len(want), "many: ls -l line count")
		bad = sorted(n for n in set(got) | set(want)
			     if got.get(n) != want.get(n))
		t.check(not bad, lambda: "many: ls -l names and sizes differ "
			"from the source's: %s" % harness.short(
				["%s: %r != %r" % (n, got.get(n), want.get(n))
				 for n in bad[:5]]))


def log_requests(log):
	"""{opcode: count} of the requests in a libfuse -d log."""
	n = {}
	for line in log.splitlines():
		if line.startswith("unique: ") and ", opcode: " in line:
			op = line.split(", opcode: ")[1].split(" ")[0]
			n[op] = n.get(op, 0) + 1
	return n


harness.main("int-basic", run)
