#!/bin/sh
# install-helpers.sh HELPERDIR BINDIR - run by `meson install`.
#
# Link the mount(8) helper names to the stfs binary: mount.fuse.stfs is
# what mount(8) runs for type fuse.stfs (fstab), mount.stfs for -t stfs.
# HELPERDIR is -Dhelperdir (default: sbindir): mount(8) looks in /sbin.
# The links point at the final bindir (without DESTDIR) so that staged
# installs (DESTDIR=... for packaging) stay correct once unpacked.
set -e

sbindir=$1
bindir=$2
case $sbindir in /*) ;; *) sbindir=$MESON_INSTALL_PREFIX/$sbindir ;; esac
case $bindir in /*) ;; *) bindir=$MESON_INSTALL_PREFIX/$bindir ;; esac

dest=$DESTDIR$sbindir
mkdir -p "$dest"
for name in mount.stfs mount.fuse.stfs; do
	ln -sf "$bindir/stfs" "$dest/$name"
done
