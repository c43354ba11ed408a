/* pickle_names.c - opcode names, the globals stfs knows (pickle_names.h).
 */
#include "format/torch/pickle_names.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

static const char *const op_names[256] = {
	['('] = "MARK", ['.'] = "STOP", ['0'] = "POP", ['1'] = "POP_MARK",
	['2'] = "DUP", ['F'] = "FLOAT", ['I'] = "INT", ['J'] = "BININT",
	['K'] = "BININT1", ['L'] = "LONG", ['M'] = "BININT2", ['N'] = "NONE",
	['P'] = "PERSID", ['Q'] = "BINPERSID", ['R'] = "REDUCE",
	['S'] = "STRING", ['T'] = "BINSTRING", ['U'] = "SHORT_BINSTRING",
	['V'] = "UNICODE", ['X'] = "BINUNICODE", ['a'] = "APPEND",
	['b'] = "BUILD", ['c'] = "GLOBAL", ['d'] = "DICT", ['}'] = "EMPTY_DICT",
	['e'] = "APPENDS", ['g'] = "GET", ['h'] = "BINGET", ['i'] = "INST",
	['j'] = "LONG_BINGET", ['l'] = "LIST", [']'] = "EMPTY_LIST",
	['o'] = "OBJ", ['p'] = "PUT", ['q'] = "BINPUT", ['r'] = "LONG_BINPUT",
	['s'] = "SETITEM", ['t'] = "TUPLE", [')'] = "EMPTY_TUPLE",
	['u'] = "SETITEMS", ['G'] = "BINFLOAT", ['B'] = "BINBYTES",
	['C'] = "SHORT_BINBYTES", [0x80] = "PROTO", [0x81] = "NEWOBJ",
	[0x82] = "EXT1", [0x83] = "EXT2", [0x84] = "EXT4", [0x85] = "TUPLE1",
	[0x86] = "TUPLE2", [0x87] = "TUPLE3", [0x88] = "NEWTRUE",
	[0x89] = "NEWFALSE", [0x8a] = "LONG1", [0x8b] = "LONG4",
	[0x8c] = "SHORT_BINUNICODE", [0x8d] = "BINUNICODE8",
	[0x8e] = "BINBYTES8", [0x8f] = "EMPTY_SET", [0x90] = "ADDITEMS",
	[0x91] = "FROZENSET", [0x92] = "NEWOBJ_EX", [0x93] = "STACK_GLOBAL",
	[0x94] = "MEMOIZE", [0x95] = "FRAME", [0x96] = "BYTEARRAY8",
	[0x97] = "NEXT_BUFFER", [0x98] = "READONLY_BUFFER",
};

/* What torch.save writes for state dicts, optimizer states and the
 * values trainers keep beside them (torch 1.13, checked with pickletools;
 * torch 2 adds _rebuild_tensor_v3 over a torch.storage.UntypedStorage for
 * its new dtypes, and _rebuild_parameter_with_state), and numpy's
 * scalars and arrays (numpy 1's numpy.core, numpy 2's numpy._core).
 * These are the globals whose calls stfs interprets (pickle_call.c,
 * pickle_numpy.c); the storage types
 * and dtypes are inert names; nothing is ever imported or called.  A
 * protocol 2 pickle names Python 3's builtins as __builtin__. */
static const struct pickle_names_global known[] = {
	{ "torch._utils", "_rebuild_tensor_v2", PICKLE_G_REBUILD_TENSOR_V2 },
	{ "torch._utils", "_rebuild_tensor_v3", PICKLE_G_REBUILD_TENSOR_V3 },
	{ "torch._utils", "_rebuild_parameter", PICKLE_G_REBUILD_PARAMETER },
	{ "torch._utils", "_rebuild_parameter_with_state",
	  PICKLE_G_REBUILD_PARAMETER },
	{ "torch._tensor", "_rebuild_from_type_v2",
	  PICKLE_G_REBUILD_FROM_TYPE },
	{ "collections", "OrderedDict", PICKLE_G_ORDERED_DICT },
	{ "collections", "defaultdict", PICKLE_G_DEFAULTDICT },
	{ "_codecs", "encode", PICKLE_G_CODECS_ENCODE },
	{ "builtins", "set", PICKLE_G_SET },
	{ "builtins", "frozenset", PICKLE_G_SET },
	{ "__builtin__", "set", PICKLE_G_SET },
	{ "__builtin__", "frozenset", PICKLE_G_SET },
	{ "builtins", "bytes", PICKLE_G_BYTES },
	{ "__builtin__", "bytes", PICKLE_G_BYTES },
	{ "numpy.core.multiarray", "scalar", PICKLE_G_NUMPY_SCALAR },
	{ "numpy._core.multiarray", "scalar", PICKLE_G_NUMPY_SCALAR },
	{ "numpy.core.multiarray", "_reconstruct", PICKLE_G_NUMPY_RECONSTRUCT },
	{ "numpy._core.multiarray", "_reconstruct",
	  PICKLE_G_NUMPY_RECONSTRUCT },
	{ "numpy.core.numeric", "_frombuffer", PICKLE_G_NUMPY_FROMBUFFER },
	{ "numpy._core.numeric", "_frombuffer", PICKLE_G_NUMPY_FROMBUFFER },
	{ "numpy", "dtype", PICKLE_G_NUMPY_DTYPE },
	{ "numpy", "ndarray", PICKLE_G_NUMPY_NDARRAY },
	{ "torch", "Size", PICKLE_G_SIZE },
	{ "torch", "device", PICKLE_G_DEVICE },
	{ "torch", "DoubleStorage", PICKLE_G_STORAGE },
	{ "torch", "FloatStorage", PICKLE_G_STORAGE },
	{ "torch", "HalfStorage", PICKLE_G_STORAGE },
	{ "torch", "BFloat16Storage", PICKLE_G_STORAGE },
	{ "torch", "LongStorage", PICKLE_G_STORAGE },
	{ "torch", "IntStorage", PICKLE_G_STORAGE },
	{ "torch", "ShortStorage", PICKLE_G_STORAGE },
	{ "torch", "CharStorage", PICKLE_G_STORAGE },
	{ "torch", "ByteStorage", PICKLE_G_STORAGE },
	{ "torch", "BoolStorage", PICKLE_G_STORAGE },
	{ "torch", "ComplexFloatStorage", PICKLE_G_STORAGE },
	{ "torch", "ComplexDoubleStorage", PICKLE_G_STORAGE },
	{ "torch", "QInt8Storage", PICKLE_G_STORAGE },
	{ "torch", "QUInt8Storage", PICKLE_G_STORAGE },
	{ "torch", "QInt32Storage", PICKLE_G_STORAGE },
	{ "torch", "QUInt4x2Storage", PICKLE_G_STORAGE },
	{ "torch", "QUInt2x4Storage", PICKLE_G_STORAGE },
	{ "torch", "UntypedStorage", PICKLE_G_STORAGE },
	{ "torch.storage", "UntypedStorage", PICKLE_G_STORAGE },
	{ "torch.storage", "TypedStorage", PICKLE_G_STORAGE },
	{ "torch", "float64", PICKLE_G_DTYPE },
	{ "torch", "float32", PICKLE_G_DTYPE },
	{ "torch", "float16", PICKLE_G_DTYPE },
	{ "torch", "bfloat16", PICKLE_G_DTYPE },
	{ "torch", "float8_e4m3fn", PICKLE_G_DTYPE },
	{ "torch", "float8_e5m2", PICKLE_G_DTYPE },
	{ "torch", "float8_e4m3fnuz", PICKLE_G_DTYPE },
	{ "torch", "float8_e5m2fnuz", PICKLE_G_DTYPE },
	{ "torch", "float8_e8m0fnu", PICKLE_G_DTYPE },
	{ "torch", "int64", PICKLE_G_DTYPE },
	{ "torch", "int32", PICKLE_G_DTYPE },
	{ "torch", "int16", PICKLE_G_DTYPE },
	{ "torch", "int8", PICKLE_G_DTYPE },
	{ "torch", "uint64", PICKLE_G_DTYPE },
	{ "torch", "uint32", PICKLE_G_DTYPE },
	{ "torch", "uint16", PICKLE_G_DTYPE },
	{ "torch", "uint8", PICKLE_G_DTYPE },
	{ "torch", "bool", PICKLE_G_DTYPE },
	{ "torch", "complex32", PICKLE_G_DTYPE },
	{ "torch", "complex64", PICKLE_G_DTYPE },
	{ "torch", "complex128", PICKLE_G_DTYPE },
	{ "torch", "qint8", PICKLE_G_DTYPE },
	{ "torch", "quint8", PICKLE_G_DTYPE },
	{ "torch", "qint32", PICKLE_G_DTYPE },
	{ "torch", "quint4x2", PICKLE_G_DTYPE },
	{ "torch", "quint2x4", PICKLE_G_DTYPE },
};

const char *
pickle_names_op(unsigned char op)
{
	return op_names[op];
}

const struct pickle_names_global *
pickle_names_global(const char *module, size_t mlen, const char *name,
		    size_t nlen)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct pickle_names_global *a = &known[i];

		if (strlen(a->module) == mlen && strlen(a->name) == nlen &&
		    memcmp(a->module, module, mlen) == 0 &&
		    memcmp(a->name, name, nlen) == 0)
			return a;
	}
	return NULL;
}

static int
dotted(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.'))
			return 0;
	}
	return 1;
}

void
pickle_names_text(char *buf, size_t cap, const char *module, size_t mlen,
		  const char *name, size_t nlen)
{
	char raw[256];
	size_t n;

	if (mlen < 128 && nlen < 128 && dotted(module, mlen) &&
	    dotted(name, nlen)) {
		snprintf(buf, cap, "%.*s.%.*s", (int)mlen, module, (int)nlen,
			 name);
		return;
	}
	/* quote at most sizeof(raw) bytes of module.name */
	n = mlen < sizeof(raw) - 1 ? mlen : sizeof(raw) - 1;
	memcpy(raw, module, n);
	raw[n++] = '.';
	if (nlen > sizeof(raw) - n)
		nlen = sizeof(raw) - n;
	memcpy(raw + n, name, nlen);
	err_quote(buf, cap, raw, n + nlen);
}
