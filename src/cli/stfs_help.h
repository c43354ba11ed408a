/* stfs_help.h - the text of `stfs --help` (and of mount.stfs --help).
 */
#ifndef STFS_STFS_HELP_H
#define STFS_STFS_HELP_H

#include <stdio.h>

/* The usage line, the tree a mount shows, every option that applies
 * (stfs's, the remote sources', FUSE's) and the exit status, to out.
 * readahead_kib: the default of -o readahead. */
void stfs_help(FILE *out, unsigned readahead_kib);

#endif
