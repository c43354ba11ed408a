/* torch_dtype.c - storage types and torch dtypes as safetensors dtypes
 * (torch_dtype.h). */
#include "format/torch/torch_dtype.h"

#include <string.h>

struct named {
	const char *name;
	enum dtype dtype;
};

/* Storage types (the persistent id's GLOBAL) and their dtypes. */
static const struct named storage_types[] = {
	{ "FloatStorage", DTYPE_F32 },
	{ "DoubleStorage", DTYPE_F64 },
	{ "HalfStorage", DTYPE_F16 },
	{ "BFloat16Storage", DTYPE_BF16 },
	{ "ByteStorage", DTYPE_U8 },
	{ "CharStorage", DTYPE_I8 },
	{ "ShortStorage", DTYPE_I16 },
	{ "IntStorage", DTYPE_I32 },
	{ "LongStorage", DTYPE_I64 },
	{ "BoolStorage", DTYPE_BOOL },
	{ "ComplexFloatStorage", DTYPE_C64 },
	{ "UntypedStorage", DTYPE_U8 },	/* bytes: _rebuild_tensor_v3's */
	/* a quantized tensor's integers (torch_tree.c: _rebuild_qtensor);
	 * QUInt4x2Storage and QUInt2x4Storage pack several a byte, which no
	 * safetensors dtype does */
	{ "QInt8Storage", DTYPE_I8 },
	{ "QUInt8Storage", DTYPE_U8 },
	{ "QInt32Storage", DTYPE_I32 },
};

/* torch's dtypes: torch 2's own, which _rebuild_tensor_v3 names, and the
 * others too, should a v3 call name one. */
static const struct named torch_dtypes[] = {
	{ "float32", DTYPE_F32 },
	{ "float64", DTYPE_F64 },
	{ "float16", DTYPE_F16 },
	{ "bfloat16", DTYPE_BF16 },
	{ "uint8", DTYPE_U8 },
	{ "int8", DTYPE_I8 },
	{ "int16", DTYPE_I16 },
	{ "int32", DTYPE_I32 },
	{ "int64", DTYPE_I64 },
	{ "bool", DTYPE_BOOL },
	{ "complex64", DTYPE_C64 },
	{ "uint16", DTYPE_U16 },
	{ "uint32", DTYPE_U32 },
	{ "uint64", DTYPE_U64 },
	{ "float8_e4m3fn", DTYPE_F8_E4M3 },
	{ "float8_e5m2", DTYPE_F8_E5M2 },
	{ "float8_e4m3fnuz", DTYPE_F8_E4M3FNUZ },
	{ "float8_e5m2fnuz", DTYPE_F8_E5M2FNUZ },
	{ "float8_e8m0fnu", DTYPE_F8_E8M0 },
};

static int
lookup(const struct named *t, size_t n, const char *name, enum dtype *out)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0) {
			*out = t[i].dtype;
			return 0;
		}
	return -1;
}

int
torch_dtype_of_storage(const char *name, enum dtype *out)
{
	return lookup(storage_types, sizeof(storage_types) /
		      sizeof(storage_types[0]), name, out);
}

int
torch_dtype_of_name(const char *name, enum dtype *out)
{
	return lookup(torch_dtypes, sizeof(torch_dtypes) /
		      sizeof(torch_dtypes[0]), name, out);
}
