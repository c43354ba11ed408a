/* dtype.h - the 22 safetensors dtypes, their sizes and numpy names. */
#ifndef STFS_DTYPE_H
#define STFS_DTYPE_H

#include <stddef.h>

/* Enum order is the reference's `Dtype` order (it decides the writer's
 * sort); do not reorder. */
enum dtype {
	DTYPE_BOOL,
	DTYPE_F4,
	DTYPE_F6_E2M3,
	DTYPE_F6_E3M2,
	DTYPE_U8,
	DTYPE_I8,
	DTYPE_F8_E5M2,
	DTYPE_F8_E4M3,
	DTYPE_F8_E8M0,
	DTYPE_F8_E4M3FNUZ,
	DTYPE_F8_E5M2FNUZ,
	DTYPE_I16,
	DTYPE_U16,
	DTYPE_F16,
	DTYPE_BF16,
	DTYPE_I32,
	DTYPE_U32,
	DTYPE_F32,
	DTYPE_C64,
	DTYPE_F64,
	DTYPE_I64,
	DTYPE_U64,
	DTYPE__COUNT
};

struct dtype_info {
	const char *name;	/* as in the header: "F32" */
	unsigned bits;		/* 4, 6, 8, 16, 32 or 64 */
	const char *numpy;	/* "<f4", "|b1", ... or NULL when numpy has none */
	const char *note;	/* how to decode when numpy is NULL, else NULL */
};

const struct dtype_info *dtype_info(enum dtype d);

/* Exact, case-sensitive match of the header's dtype string.
 * Returns 0 and sets *out, or -1 for an unknown name. */
int dtype_from_name(const char *s, size_t len, enum dtype *out);

#endif
