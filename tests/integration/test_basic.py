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


harness.main("int-basic", run)
