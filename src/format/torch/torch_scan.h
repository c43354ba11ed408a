/* torch_scan.h - what loading a file with torch.load (or pickle.load)
 * would import and call beyond torch.load(weights_only=True), without
 * building its table: for stfs-inspect --scan, a drop-in for a CI step.
 *
 * The file is read as torch.load reads it: a zip (torch.save since 1.6)
 * by its FOLDER/data.pkl; anything else by the pickles at its start (the
 * legacy format: torch's magic number, the protocol, the system info,
 * the object, the storage keys; torch.load unpickles the first whatever
 * it is, the others only after the magic number).  Every pickle is read
 * by pickle.h's reader, which runs nothing; its uses are
 * torch_unsafe.h's list.  A pickle the reader cannot read to its end
 * (damaged, or past its limits) is reported with what was found before
 * the point where it stopped, which Python would have made too.
 */
#ifndef STFS_TORCH_SCAN_H
#define STFS_TORCH_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "format/reader.h"
#include "format/table.h"

/* The pickles of the legacy format torch.load reads. */
#define TORCH_SCAN_PICKLES 5

struct torch_scan_part {
	char name[64];		/* "archive/data.pkl", "pickle 2 of 5" */
	struct unsafe_use *use;	/* torch_unsafe.h's list */
	size_t n;
	uint64_t total;
};

struct torch_scan {
	/* what the file is: "a PyTorch checkpoint", "a PyTorch checkpoint
	 * in the legacy format", "a pickle", "not a pickle" */
	const char *what;
	struct torch_scan_part part[TORCH_SCAN_PICKLES];
	size_t nparts;
	uint64_t total;		/* uses in all the parts */
	/* a pickle read only in part: why (code ERR_OK: none); the parts
	 * hold what was found before */
	struct err broke;
};

/* Scan r.  maybe: nothing says it is a pickle (neither its first byte,
 * PROTO, nor its name): a file that is no pickle from its first opcode
 * on is then "not a pickle", with nothing to report.  0 with *out (also
 * when a pickle broke off: out->broke), or -1 with *e (I/O, memory). */
int torch_scan(const struct reader *r, int maybe, struct torch_scan *out,
	       struct err *e);

void torch_scan_free(struct torch_scan *s);

#endif
