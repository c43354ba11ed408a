#!/usr/bin/python3
"""try-deps: scripts/try installs what stfs needs to build and run, and
scripts/test the rest (issue 40).

    test_deps.py SRCDIR

Runs the dependency step of `scripts/try --deps` and `scripts/test --deps`
(apt-get install -s: nothing is installed) against an empty dpkg status,
as on a machine that has nothing, so that apt names every package each
would bring, whatever this machine already has.  Checks that try names
none of the tests' packages (torch, botocore, nginx, check, strace,
clang, valgrind, nodejs, ...), that it names what building and running
need, and that test names everything try does and the tests' tools.
Prints how many packages each brings and their installed size.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# Packages only the tests (or CI's sanitizer, valgrind and fuzzing runs)
# need, and the big families they pull in: none may come with try.
TEST_ONLY = ("python3-torch", "python3-botocore", "nginx", "nginx-light",
	     "nginx-common", "check", "strace", "clang", "valgrind", "nodejs",
	     "npm", "time", "attr", "curl", "chromium")
TEST_ONLY_FAMILIES = ("libtorch", "python3-torch", "nginx", "clang-",
		      "libclang", "libllvm", "llvm-", "nodejs", "node-",
		      "libnode", "libopencv", "libgdal", "valgrind",
		      "chromium")
# What try must bring: the compiler, meson, the libraries stfs links,
# fusermount3, TLS roots, numpy and man for the README's examples.
TRY_NEEDS = ("gcc", "meson", "ninja-build", "pkg-config", "libfuse3-dev",
	     "fuse3", "libjansson-dev", "libcurl4-openssl-dev",
	     "ca-certificates", "libxml2-dev", "nettle-dev", "libxxhash-dev",
	     "zlib1g-dev", "python3-numpy", "man-db")
# Programs the tests run that a minimal Debian root lacks.
TEST_NEEDS = ("check", "python3-torch", "python3-botocore", "nginx-light",
	      "strace", "curl", "time", "attr", "openssl", "groff-base",
	      "nodejs")


def simulate(script, env):
	"""{package: version} apt-get install -s would install for script."""
	r = subprocess.run([script, "--deps"], env=env, stdout=subprocess.PIPE,
			   stderr=subprocess.STDOUT, timeout=300)
	out = r.stdout.decode(errors="replace")
	if r.returncode != 0:
		sys.exit("FAIL: %s --deps: exit %d:\n%s\n(no package lists? "
			 "apt-get update)" % (script, r.returncode, out[-3000:]))
	pkgs = {}
	for line in out.splitlines():
		m = re.match(r"Inst (\S+) \((\S+)", line)
		if m:
			pkgs[m.group(1).split(":")[0]] = m.group(2)
	if not pkgs:
		sys.exit("FAIL: %s --deps names no package:\n%s"
			 % (script, out[-3000:]))
	return pkgs


def mib(pkgs):
	"""Installed-Size of the versions apt chose, in MiB."""
	r = subprocess.run(["apt-cache", "show"] + ["%s=%s" % kv for kv in
						      sorted(pkgs.items())],
			   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
			   timeout=300)
	kib = sum(int(m) for m in re.findall(rb"^Installed-Size: (\d+)",
					     r.stdout, re.M))
	return kib / 1024


def main(argv):
	root = argv[0]
	fails = []
	with tempfile.TemporaryDirectory(prefix="stfs-deps-") as tmp:
		status = os.path.join(tmp, "status")
		open(status, "w").close()
		conf = os.path.join(tmp, "apt.conf")
		with open(conf, "w") as f:
			f.write('Dir::State::status "%s";\n'
				'Dir::State::extended_states "%s";\n'
				% (status, os.path.join(tmp, "extended_states")))
		env = dict(os.environ, APT_CONFIG=conf, LC_ALL="C")
		try_pkgs = simulate(os.path.join(root, "scripts", "try"), env)
		test_pkgs = simulate(os.path.join(root, "scripts", "test"), env)
	print("scripts/try: %d packages, %.0f MiB installed"
	      % (len(try_pkgs), mib(try_pkgs)))
	extra = {p: v for p, v in test_pkgs.items() if p not in try_pkgs}
	print("scripts/test: %d packages more, %.0f MiB"
	      % (len(extra), mib(extra)))
	for p in sorted(try_pkgs):
		if p in TEST_ONLY or p.startswith(TEST_ONLY_FAMILIES):
			fails.append("scripts/try installs %s, which only the "
				     "tests need" % p)
	for p in TRY_NEEDS:
		if p not in try_pkgs:
			fails.append("scripts/try does not install %s" % p)
	for p in sorted(try_pkgs):
		if p not in test_pkgs:
			fails.append("scripts/test does not install %s, which "
				     "scripts/try does" % p)
	# npm comes with nodejs when that is nodesource's (lib.sh)
	npm = () if shutil.which("npm") else ("npm",)
	for p in TEST_NEEDS + npm:
		if p not in test_pkgs:
			fails.append("scripts/test does not install %s" % p)
	for f in fails:
		print("FAIL:", f)
	if not fails:
		print("ok: try names none of the tests' packages; test names "
		      "all of try's and the tests' own")
	return 1 if fails else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
