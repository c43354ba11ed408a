/* dtype.c - the dtype table: header names, bit sizes, numpy equivalents. */
#include "format/dtype.h"

#include <string.h>

#define NOTE_BF16 "bfloat16: the upper 16 bits of an IEEE float32; widen " \
	"with (uint32(x) << 16) viewed as <f4 (.npy/ serves it so), or use " \
	"ml_dtypes.bfloat16"
#define NOTE_F8 "8-bit float, no numpy dtype; .npy/ serves it as " \
	"float32, or decode with ml_dtypes."
#define NOTE_F6 "6-bit floats, 4 per 3 bytes read as a little-endian " \
	"24-bit integer, element k in bits 6k..6k+5 (stfs's convention: " \
	"safetensors defines none); .npy/ serves them as float32, or decode " \
	"with ml_dtypes."
#define NOTE_F4 "4-bit floats (MXFP4 E2M1), 2 per byte, low nibble " \
	"first (torch float4_e2m1fn_x2); .npy/ serves them as float32, or " \
	"decode with ml_dtypes.float4_e2m1fn"

static const struct dtype_info dtype_table[DTYPE__COUNT] = {
	[DTYPE_BOOL] = { "BOOL", 8, "|b1", NULL },
	[DTYPE_F4] = { "F4", 4, NULL, NOTE_F4 },
	[DTYPE_F6_E2M3] = { "F6_E2M3", 6, NULL, NOTE_F6 "float6_e2m3fn" },
	[DTYPE_F6_E3M2] = { "F6_E3M2", 6, NULL, NOTE_F6 "float6_e3m2fn" },
	[DTYPE_U8] = { "U8", 8, "|u1", NULL },
	[DTYPE_I8] = { "I8", 8, "|i1", NULL },
	[DTYPE_F8_E5M2] = { "F8_E5M2", 8, NULL, NOTE_F8 "float8_e5m2" },
	[DTYPE_F8_E4M3] = { "F8_E4M3", 8, NULL, NOTE_F8 "float8_e4m3fn" },
	[DTYPE_F8_E8M0] = { "F8_E8M0", 8, NULL, NOTE_F8 "float8_e8m0fnu" },
	[DTYPE_F8_E4M3FNUZ] = { "F8_E4M3FNUZ", 8, NULL,
				NOTE_F8 "float8_e4m3fnuz" },
	[DTYPE_F8_E5M2FNUZ] = { "F8_E5M2FNUZ", 8, NULL,
				NOTE_F8 "float8_e5m2fnuz" },
	[DTYPE_I16] = { "I16", 16, "<i2", NULL },
	[DTYPE_U16] = { "U16", 16, "<u2", NULL },
	[DTYPE_F16] = { "F16", 16, "<f2", NULL },
	[DTYPE_BF16] = { "BF16", 16, NULL, NOTE_BF16 },
	[DTYPE_I32] = { "I32", 32, "<i4", NULL },
	[DTYPE_U32] = { "U32", 32, "<u4", NULL },
	[DTYPE_F32] = { "F32", 32, "<f4", NULL },
	[DTYPE_C64] = { "C64", 64, "<c8", NULL },
	[DTYPE_F64] = { "F64", 64, "<f8", NULL },
	[DTYPE_I64] = { "I64", 64, "<i8", NULL },
	[DTYPE_U64] = { "U64", 64, "<u8", NULL },
};

const struct dtype_info *
dtype_info(enum dtype d)
{
	if ((unsigned)d >= DTYPE__COUNT)
		return NULL;
	return &dtype_table[d];
}

int
dtype_from_name(const char *s, size_t len, enum dtype *out)
{
	unsigned i;

	/* 22 entries of at most 11 bytes: a linear scan beats hashing. */
	for (i = 0; i < DTYPE__COUNT; i++) {
		const char *n = dtype_table[i].name;

		if (strlen(n) == len && memcmp(n, s, len) == 0) {
			*out = (enum dtype)i;
			return 0;
		}
	}
	return -1;
}
