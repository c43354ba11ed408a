#!/usr/bin/env python3
"""int-install: what `meson install` puts in place (issue 32).

The build is installed into a scratch DESTDIR (meson install --destdir,
nothing rebuilt): the programs, the mount helpers, the man pages and the
docs.  Every document an installed man page or `stfs --help` names is
installed there, and names nothing else: the man pages point to the
prefix's docdir, never into a source tree.  The man pages render without
groff warnings.  Every relative link of the installed docs (README.md,
HACKING.md, docs/, samples/README.md) resolves there, anchors included
(scripts/check-doc-links; issue 40).
"""

import os
import re
import subprocess

import harness
from harness import STFS, run

BUILD = os.environ.get("STFS_BUILD", "")


def run_(t):
	d = harness.tmpdir("install")
	r = run(["meson", "install", "-C", BUILD, "--destdir", d,
		 "--no-rebuild", "--quiet"], timeout=120)
	t.eq(r.returncode, 0, "meson install --destdir: %s" % r.stderr[-500:])
	pages = []
	for root, _, files in os.walk(d):
		pages += [os.path.join(root, f) for f in files
			  if re.search(r"/man/man[18]$", root)]
	t.eq(sorted(os.path.basename(p) for p in pages),
	     ["mount.fuse.stfs.8", "mount.stfs.8", "stfs-inspect.1", "stfs.1"],
	     "the man pages installed")
	named = set()
	for p in pages:
		with open(p) as f:
			text = f.read()
		t.check(not re.search(r"(?<!/doc/stfs/)(?<!source tree: )docs/",
				      text),
			"%s names no docs/ of a source tree" % p)
		named |= set(re.findall(r"(/[\w/.-]*/doc/stfs/[\w/]+\.md)", text))
		# from the man root, where .so man8/mount.stfs.8 starts
		res = subprocess.run(["groff", "-man", "-ww", "-z", p],
				     stderr=subprocess.PIPE,
				     stdout=subprocess.DEVNULL,
				     cwd=os.path.dirname(os.path.dirname(p)))
		t.eq(res.stderr, b"", "groff warnings for %s" % p)
	out = run([STFS, "--help"]).stdout.decode()
	named |= set(re.findall(r"(/[\w/.-]*/doc/stfs/[\w/]+\.md)", out))
	t.check(len(named) >= 8, "the man pages and --help name the docs: %r"
		% sorted(named))
	for doc in sorted(named):
		t.check(os.path.isfile(d + doc), "%s is installed" % doc)
	docdir = os.path.dirname(os.path.dirname(sorted(named)[0])) \
		if named else ""
	want = ["HACKING.md", "LICENSE", "README.md", "samples/README.md"] + \
		sorted("docs/" + f for f in
		       os.listdir(os.path.join(harness.SRCROOT, "docs")))
	got = []
	for root, _, files in os.walk(d + docdir):
		got += [os.path.relpath(os.path.join(root, f), d + docdir)
			for f in files]
	t.eq(sorted(got), sorted(want), "the docs installed in %s, as laid "
	     "out in the tree" % docdir)
	# every relative link of the installed docs resolves there
	r = run([os.path.join(harness.SRCROOT, "scripts", "check-doc-links"),
		 d + docdir])
	out = r.stdout.decode()
	t.eq(r.returncode, 0, "check-doc-links %s: %s" % (docdir, out[-3000:]))
	m = re.search(r"(\d+) relative links", out)
	t.check(m and int(m.group(1)) >= 90, "links followed: %s" % out)
	readme = open(os.path.join(d + docdir, "README.md")).read()
	t.check(len(re.findall(r"\]\((?!https?:)[^)#]", readme)) >= 14,
		"the installed README has its relative links")


harness.main("int-install", run_, mounts=False)
