# scripts/lib.sh - shared by scripts/test and scripts/try; source it.
#
#   stfs_install_deps [PKG...]  install the missing Debian packages of
#                          STFS_DEPS (and PKG...), as root
#   stfs_build DIR [ARGS]  meson setup (or reconfigure) DIR, then ninja

# Build and test: the tests also need nginx (remote sources, on loopback),
# getfattr (attr) and man (man-db) for the views and man pages.
STFS_DEPS=(meson ninja-build pkg-config gcc libc6-dev libfuse3-dev fuse3
	libjansson-dev check python3-numpy libcurl4-openssl-dev attr
	nginx-light man-db)
# s3:// sources: libxml2 parses ListObjectsV2; their tests run s3rver (npm,
# installed by the test into the build directory) behind a proxy that checks
# signatures with botocore.  A nodejs from nodesource already brings npm.
STFS_DEPS+=(libxml2-dev python3-botocore)
command -v npm >/dev/null 2>&1 || STFS_DEPS+=(nodejs npm)
# the sha256 xattr: nettle's SHA-256
STFS_DEPS+=(nettle-dev)
# the disk cache's block checksums: xxHash's XXH3
STFS_DEPS+=(libxxhash-dev)
# PyTorch checkpoints: libzip reads the zip; the tests write checkpoints
# with torch.save and compare with torch.load
STFS_DEPS+=(libzip-dev python3-torch)
# TLS tests (int-remote, int-s3) make their certificates with openssl req
STFS_DEPS+=(openssl)
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

	if ! command -v dpkg-query >/dev/null 2>&1; then
		stfs_say "not a Debian system: install by hand: ${STFS_DEPS[*]}"
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
	apt-get update
	apt-get install -y --no-install-recommends "${missing[@]}"
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
