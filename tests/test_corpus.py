#!/usr/bin/python3
"""fuzz-corpus: the fuzzers' seed corpus is what its scripts write.

    test_corpus.py SRCDIR

Runs tests/fuzz/make_corpus.py, make_gguf_corpus.py and
make_render_corpus.py on a copy of tests/fuzz/ (the scripts, the
dictionaries and corpus/) in a temporary directory, and compares the copy
with the tree file by file: none removed (the fuzzers' fz-* units and the
seeds added by hand are kept), none added, none changed (the scripts write
the same bytes every run: torch's random weights seeded, zip entries of a
fixed date).  So running them in the tree leaves `git status` clean, and a
generator changed without the corpus written again is seen here.
"""

import os
import shutil
import subprocess
import sys
import tempfile

SCRIPTS = ("make_corpus.py", "make_gguf_corpus.py", "make_render_corpus.py")


def tree(root):
	"""{path relative to root: bytes} of every file below root."""
	out = {}
	for d, _, files in os.walk(root):
		for f in files:
			p = os.path.join(d, f)
			with open(p, "rb") as fh:
				out[os.path.relpath(p, root)] = fh.read()
	return out


def main(argv):
	src = os.path.join(argv[0], "tests")
	fails = []
	with tempfile.TemporaryDirectory(prefix="stfs-corpus-") as tmp:
		tests = os.path.join(tmp, "tests")
		os.mkdir(tests)
		# what the scripts read besides their own folder
		for name in ("data", "gguf_gen.py"):
			os.symlink(os.path.join(src, name), os.path.join(tests, name))
		fuzz = os.path.join(tests, "fuzz")
		shutil.copytree(os.path.join(src, "fuzz"), fuzz,
				ignore=shutil.ignore_patterns("__pycache__"))
		before = tree(fuzz)
		for s in SCRIPTS:
			r = subprocess.run([sys.executable, os.path.join(fuzz, s)],
					   stdout=subprocess.PIPE,
					   stderr=subprocess.PIPE, timeout=300,
					   env=dict(os.environ,
						    PYTHONDONTWRITEBYTECODE="1"))
			if r.returncode != 0:
				fails.append("%s failed (%d): %s" % (
					s, r.returncode, r.stderr.decode()[-2000:]))
		after = tree(fuzz)
	for p in sorted(set(before) - set(after)):
		fails.append("removed: %s" % p)
	for p in sorted(set(after) - set(before)):
		fails.append("written but not in the tree (run the script and "
			     "commit it): %s" % p)
	for p in sorted(set(before) & set(after)):
		if before[p] != after[p]:
			fails.append("other bytes than the tree's: %s" % p)
	for f in fails:
		print("FAIL: %s" % f)
	print("fuzz-corpus: %d files, %s" % (len(before), "%d failures"
	      % len(fails) if fails else "the scripts write the tree's bytes"))
	return 1 if fails else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
