/* torch_unsafe.h - what a checkpoint's pickle would import and call in
 * Python beyond torch.load(weights_only=True), as table.h's list.
 *
 * Each use the pickle reader recorded (pickle_unsafe.h) becomes a line:
 * the callable ("posix.system"; what a call returned, "builtins.getattr
 * (...)"), how (a call, cls.__new__, an import never called: a global
 * used as a value, defaultdict's factory), the arguments as JSON cut
 * short, where the tree holds what it made (a flattened name), its opcode
 * and byte.  An import that is called is its call's line, one per name.
 */
#ifndef STFS_TORCH_UNSAFE_H
#define STFS_TORCH_UNSAFE_H

#include <stddef.h>
#include <stdint.h>

#include "format/table.h"
#include "format/torch/pickle.h"

struct err;

/* The arguments shown, in bytes of JSON (then "..."). */
#define TORCH_UNSAFE_ARGS_SHOWN 200

/* The uses of p: *out one allocation (the array, then its strings; NULL
 * when there are none), *n of them, *total with those past the ones the
 * reader kept.  0, or -1 with ERR_NO_MEMORY. */
int torch_unsafe_list(const struct pickle *p, struct unsafe_use **out,
		      size_t *n, uint64_t *total, struct err *e);

#endif
