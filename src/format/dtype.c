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

#define NOTE_QUANT "GGUF quantized blocks (ggml's layout, ggml-common.h): " \
	"no numpy dtype; the tensor file holds the blocks as stored"
#define Q(name, block, bytes) \
	[DTYPE_##name] = { #name, 0, NULL, NOTE_QUANT, block, bytes }

static const struct dtype_info dtype_table[DTYPE__COUNT] = {
	[DTYPE_BOOL] = { "BOOL", 8, "|b1", NULL, 0, 0 },
	[DTYPE_F4] = { "F4", 4, NULL, NOTE_F4, 0, 0 },
	[DTYPE_F6_E2M3] = { "F6_E2M3", 6, NULL, NOTE_F6 "float6_e2m3fn", 0, 0 },
	[DTYPE_F6_E3M2] = { "F6_E3M2", 6, NULL, NOTE_F6 "float6_e3m2fn", 0, 0 },
	[DTYPE_U8] = { "U8", 8, "|u1", NULL, 0, 0 },
	[DTYPE_I8] = { "I8", 8, "|i1", NULL, 0, 0 },
	[DTYPE_F8_E5M2] = { "F8_E5M2", 8, NULL, NOTE_F8 "float8_e5m2", 0, 0 },
	[DTYPE_F8_E4M3] = { "F8_E4M3", 8, NULL, NOTE_F8 "float8_e4m3fn", 0, 0 },
	[DTYPE_F8_E8M0] = { "F8_E8M0", 8, NULL, NOTE_F8 "float8_e8m0fnu",
			    0, 0 },
	[DTYPE_F8_E4M3FNUZ] = { "F8_E4M3FNUZ", 8, NULL,
				NOTE_F8 "float8_e4m3fnuz", 0, 0 },
	[DTYPE_F8_E5M2FNUZ] = { "F8_E5M2FNUZ", 8, NULL,
				NOTE_F8 "float8_e5m2fnuz", 0, 0 },
	[DTYPE_I16] = { "I16", 16, "<i2", NULL, 0, 0 },
	[DTYPE_U16] = { "U16", 16, "<u2", NULL, 0, 0 },
	[DTYPE_F16] = { "F16", 16, "<f2", NULL, 0, 0 },
	[DTYPE_BF16] = { "BF16", 16, NULL, NOTE_BF16, 0, 0 },
	[DTYPE_I32] = { "I32", 32, "<i4", NULL, 0, 0 },
	[DTYPE_U32] = { "U32", 32, "<u4", NULL, 0, 0 },
	[DTYPE_F32] = { "F32", 32, "<f4", NULL, 0, 0 },
	[DTYPE_C64] = { "C64", 64, "<c8", NULL, 0, 0 },
	[DTYPE_F64] = { "F64", 64, "<f8", NULL, 0, 0 },
	[DTYPE_I64] = { "I64", 64, "<i8", NULL, 0, 0 },
	[DTYPE_U64] = { "U64", 64, "<u8", NULL, 0, 0 },
	Q(Q4_0, 32, 18),
	Q(Q4_1, 32, 20),
	Q(Q5_0, 32, 22),
	Q(Q5_1, 32, 24),
	Q(Q8_0, 32, 34),
	Q(Q8_1, 32, 36),
	Q(Q2_K, 256, 84),
	Q(Q3_K, 256, 110),
	Q(Q4_K, 256, 144),
	Q(Q5_K, 256, 176),
	Q(Q6_K, 256, 210),
	Q(Q8_K, 256, 292),
	Q(IQ2_XXS, 256, 66),
	Q(IQ2_XS, 256, 74),
	Q(IQ3_XXS, 256, 98),
	Q(IQ1_S, 256, 50),
	Q(IQ4_NL, 32, 18),
	Q(IQ3_S, 256, 110),
	Q(IQ2_S, 256, 82),
	Q(IQ4_XS, 256, 136),
	Q(IQ1_M, 256, 56),
	Q(TQ1_0, 256, 54),
	Q(TQ2_0, 256, 66),
	Q(MXFP4, 32, 17),
	Q(NVFP4, 64, 36),
	Q(Q1_0, 128, 18),
	Q(Q2_0, 64, 18),
};

const struct dtype_info *
dtype_info(enum dtype d)
{
	if ((unsigned)d >= DTYPE__COUNT)
		return NULL;
	return &dtype_table[d];
}

static int
find_name(const char *s, size_t len, unsigned count, enum dtype *out)
{
	unsigned i;

	/* a few dozen entries of at most 11 bytes: a linear scan beats
	 * hashing. */
	for (i = 0; i < count; i++) {
		const char *n = dtype_table[i].name;

		if (strlen(n) == len && memcmp(n, s, len) == 0) {
			*out = (enum dtype)i;
			return 0;
		}
	}
	return -1;
}

int
dtype_from_name(const char *s, size_t len, enum dtype *out)
{
	return find_name(s, len, DTYPE_SAFETENSORS_COUNT, out);
}

int
dtype_from_any_name(const char *s, size_t len, enum dtype *out)
{
	return find_name(s, len, DTYPE__COUNT, out);
}

/* ggml's type numbers (ggml.h, enum ggml_type); the gaps are types ggml
 * removed. */
static const struct {
	uint32_t ggml;
	enum dtype d;
} ggml_types[] = {
	{ 0, DTYPE_F32 },
	{ 1, DTYPE_F16 },
	{ 2, DTYPE_Q4_0 },
	{ 3, DTYPE_Q4_1 },
	{ 6, DTYPE_Q5_0 },
	{ 7, DTYPE_Q5_1 },
	{ 8, DTYPE_Q8_0 },
	{ 9, DTYPE_Q8_1 },
	{ 10, DTYPE_Q2_K },
	{ 11, DTYPE_Q3_K },
	{ 12, DTYPE_Q4_K },
	{ 13, DTYPE_Q5_K },
	{ 14, DTYPE_Q6_K },
	{ 15, DTYPE_Q8_K },
	{ 16, DTYPE_IQ2_XXS },
	{ 17, DTYPE_IQ2_XS },
	{ 18, DTYPE_IQ3_XXS },
	{ 19, DTYPE_IQ1_S },
	{ 20, DTYPE_IQ4_NL },
	{ 21, DTYPE_IQ3_S },
	{ 22, DTYPE_IQ2_S },
	{ 23, DTYPE_IQ4_XS },
	{ 24, DTYPE_I8 },
	{ 25, DTYPE_I16 },
	{ 26, DTYPE_I32 },
	{ 27, DTYPE_I64 },
	{ 28, DTYPE_F64 },
	{ 29, DTYPE_IQ1_M },
	{ 30, DTYPE_BF16 },
	{ 34, DTYPE_TQ1_0 },
	{ 35, DTYPE_TQ2_0 },
	{ 39, DTYPE_MXFP4 },
	{ 40, DTYPE_NVFP4 },
	{ 41, DTYPE_Q1_0 },
	{ 42, DTYPE_Q2_0 },
};
#define NGGML (sizeof(ggml_types) / sizeof(ggml_types[0]))

int
dtype_from_ggml(uint32_t t, enum dtype *out)
{
	size_t i;

	for (i = 0; i < NGGML; i++) {
		if (ggml_types[i].ggml == t) {
			*out = ggml_types[i].d;
			return 0;
		}
	}
	return -1;
}

int
dtype_ggml(enum dtype d)
{
	size_t i;

	for (i = 0; i < NGGML; i++)
		if (ggml_types[i].d == d)
			return (int)ggml_types[i].ggml;
	return -1;
}
