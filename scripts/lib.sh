# scripts/lib.sh - shared by scripts/test and scripts/try; source it.
#
#   stfs_install_deps [PKG...]  install the missing Debian packages of
#                          STFS_DEPS (and PKG...), as root; with
#                          STFS_DEPS_SIMULATE=1 only show what apt-get
#                          would install (apt-get install -s, any user);
#                          with STFS_QUIET=1 apt's output is shown only
#                          when it fails
#   stfs_apt ARGS...       apt-get ARGS, waiting (with a message) while
#                          another apt or dpkg holds the package lock
#   stfs_build DIR [ARGS]  meson setup (or reconfigure) DIR, then ninja
#   stfs_build_quiet DIR [ARGS]  the same, meson's report kept in a log
#                          (shown on failure), ninja's progress shown on
#                          a terminal, else kept in a log too

# What building and running stfs need (scripts/try installs these and
# nothing else): the compiler and meson, and the libraries the programs
# link.  The tests' own tools are STFS_TEST_DEPS below: put a package
# here only if `stfs` or `stfs-inspect` cannot be built or run without it.
STFS_DEPS=(meson ninja-build pkg-config gcc libc6-dev)
# FUSE: the library, and fusermount3 (unmounting; mounts by non-root users)
STFS_DEPS+=(libfuse3-dev fuse3)
# JSON: headers, indexes, sidecars, __summary__.json
STFS_DEPS+=(libjansson-dev)
# http(s)://, hf://, s3:// through libcurl; ca-certificates so that TLS
# can verify a server (libcurl only recommends it)
STFS_DEPS+=(libcurl4-openssl-dev ca-certificates)
# s3://: libxml2 parses ListObjectsV2
STFS_DEPS+=(libxml2-dev)
# the sha256 xattr: nettle's SHA-256
STFS_DEPS+=(nettle-dev)
# the disk cache's block checksums: xxHash's XXH3
STFS_DEPS+=(libxxhash-dev)
# PyTorch checkpoints: zlib inflates a deflated pickle (the zip itself is
# read by src/format/torch/torch_zip.c)
STFS_DEPS+=(zlib1g-dev)
# The README's examples: numpy (with Debian's python3, which also runs
# samples/make.py) and man for the man pages.
STFS_DEPS+=(python3-numpy man-db)
# the .png/ pictures: cairo draws them, libpng (cairo's own) writes them
# with a size fixed before drawing, their text is DejaVu Sans (the font's
# files, read with FreeType)
STFS_DEPS+=(libcairo2-dev libpng-dev libfreetype-dev fonts-dejavu-core)

# What the tests need on top (scripts/test installs STFS_DEPS and these):
# every program a test runs that a minimal Debian 12 (debootstrap
# --variant=minbase) lacks.  Checked on such a root (docs/usage.md).
# Check: the unit tests.
STFS_TEST_DEPS=(check)
# getfattr and setfattr (xattrs of the mount); groff renders the man
# pages without warnings (int-install; man-db brings it too)
STFS_TEST_DEPS+=(attr groff-base)
# remote sources: nginx on 127.0.0.1; openssl req makes the TLS tests'
# certificates; curl fetches through nginx next to stfs (int-remote-gpt2)
STFS_TEST_DEPS+=(nginx-light openssl curl)
# s3://: s3rver (npm, installed by the test into the build directory)
# behind a proxy that checks signatures with botocore; GGUF files are
# compared with @huggingface/gguf (npm).  A nodejs from nodesource
# already brings npm (and conflicts with Debian's).
STFS_TEST_DEPS+=(python3-botocore nodejs)
command -v npm >/dev/null 2>&1 || STFS_TEST_DEPS+=(npm)
# PyTorch checkpoints: the tests write them with torch.save and compare
# with torch.load (also tests/fuzz/make_corpus.py)
STFS_TEST_DEPS+=(python3-torch)
# int-basic counts the getdents64 calls of an ls -l with strace;
# int-faults measures peak memory with /usr/bin/time
STFS_TEST_DEPS+=(strace time)
# int-png decodes every picture with an independent PNG reader (PIL);
# int-html opens .html/ in Debian's Chromium (puppeteer-core from npm,
# installed by the test into the build directory; no browser download)
STFS_TEST_DEPS+=(python3-pil chromium)
# The sanitizer, valgrind and fuzzing runs of CI on top.
STFS_CHECK_DEPS=(clang libclang-rt-14-dev valgrind)
# Building the Debian package (scripts/deb, CI).
STFS_PKG_DEPS=(dpkg-dev debhelper)

stfs_say() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

stfs_pkg_installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = \
		"install ok installed" ]
}

# Install what is missing.  Nothing is touched (not even `apt-get update`)
# when every package is already there, so running it twice is cheap.
stfs_install_deps() {
	local p missing=()
	local deps=("${STFS_DEPS[@]}" "$@")

	if [ -n "${STFS_DEPS_SIMULATE:-}" ]; then
		# every package, installed or not: apt says which it would
		# install (APT_CONFIG may point it at another dpkg status)
		apt-get install -s --no-install-recommends "${deps[@]}"
		return
	fi
	if ! command -v dpkg-query >/dev/null 2>&1; then
		stfs_say "not a Debian system: install by hand: ${deps[*]}"
		return 0
	fi
	for p in "${deps[@]}"; do
		stfs_pkg_installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		stfs_say "missing packages: ${missing[*]}"
		stfs_say "install them with: sudo apt-get install --no-install-recommends ${missing[*]}"
		return 1
	fi
	stfs_say "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if [ -z "${STFS_QUIET:-}" ]; then
		stfs_apt update
		stfs_apt install -y --no-install-recommends "${missing[@]}"
		return
	fi
	# STFS_QUIET (scripts/try without a terminal): apt's few hundred
	# lines of progress go to a log, shown only when it fails (its
	# warnings and errors, and the lock's message, still reach stderr)
	local log rc=0
	log=$(mktemp)
	{ stfs_apt update && stfs_apt install -y --no-install-recommends \
		"${missing[@]}"; } >"$log" || rc=$?
	[ "$rc" -eq 0 ] || { tail -n 40 "$log" >&2; stfs_say "apt-get failed (above)"; }
	rm -f "$log"
	return "$rc"
}

# How long stfs_apt waits for the package lock, in seconds: on a fresh
# machine unattended-upgrades may hold it for minutes.
STFS_APT_WAIT=${STFS_APT_WAIT:-900}

# apt-get "$@", waiting while another apt or dpkg holds a lock of theirs.
# apt-get's own wait (-o DPkg::Lock::Timeout) covers dpkg's lock but not,
# in Debian 12's apt, the lists lock of `apt-get update`, and would print
# into the log kept here: a lock error is retried here instead, every
# 10 s, after one line saying who holds it (not apt's raw error).
stfs_apt() {
	local log rc waited=0 who
	log=$(mktemp)
	while :; do
		rc=0
		apt-get "$@" 2>"$log" || rc=$?
		if [ "$rc" -ne 0 ] && [ "$waited" -lt "$STFS_APT_WAIT" ] &&
		   grep -q 'Could not get lock\|Unable to lock\|Unable to acquire' "$log"; then
			if [ "$waited" -eq 0 ]; then
				who=$(grep -o 'held by process [0-9]* ([^)]*)' "$log" | head -n 1)
				stfs_say "apt-get $1: the package lock is ${who:-held by another apt or dpkg}" \
					"(unattended-upgrades on a fresh machine?): waiting up to" \
					"${STFS_APT_WAIT}s (STFS_APT_WAIT); see it with: ps -ef | grep -e apt -e dpkg"
			fi
			sleep 10
			waited=$((waited + 10))
			continue
		fi
		if [ -n "${STFS_QUIET:-}" ]; then
			# debconf's note on a root without apt-utils (a
			# minimal one) says nothing wrong
			grep -v '^debconf: delaying package configuration' \
				"$log" >&2 || true
		else
			cat "$log" >&2
		fi
		break
	done
	rm -f "$log"
	if [ "$rc" -ne 0 ] && [ "$waited" -ge "$STFS_APT_WAIT" ]; then
		stfs_say "apt-get $1: the package lock was still held after ${STFS_APT_WAIT}s;" \
			"run this again when the other apt or dpkg is done"
	fi
	return "$rc"
}

# stfs_build DIR [meson options...]: configure once, reconfigure later
# (picks up changed options), wipe only when the old directory is unusable.
stfs_build() {
	local dir=$1
	shift
	if [ -f "$dir/meson-private/coredata.dat" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null ||
			meson setup --wipe "$dir" "$@"
	else
		meson setup "$dir" "$@"
	fi
	ninja -C "$dir"
}

# stfs_build for people watching (scripts/try): meson's report goes to a
# log, shown only when setup fails; ninja's progress line ([N/M] what it
# compiles) stays on the terminal.
stfs_build_quiet() {
	local dir=$1 log rc=0
	shift
	log=$(mktemp)
	if [ -f "$dir/meson-private/coredata.dat" ]; then
		{ meson setup --reconfigure "$dir" "$@" ||
			meson setup --wipe "$dir" "$@"; } >"$log" 2>&1 || rc=$?
	else
		meson setup "$dir" "$@" >"$log" 2>&1 || rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		cat "$log" >&2
		rm -f "$log"
		stfs_say "meson setup $dir failed (above)"
		return "$rc"
	fi
	rm -f "$log"
	if [ -t 1 ]; then
		ninja -C "$dir"
		return
	fi
	# not a terminal (a log, CI): ninja's line per file would bury the
	# steps; show it only when the build fails
	log=$(mktemp)
	ninja -C "$dir" >"$log" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || tail -n 60 "$log" >&2
	rm -f "$log"
	[ "$rc" -eq 0 ] || stfs_say "ninja -C $dir failed (above)"
	return "$rc"
}
