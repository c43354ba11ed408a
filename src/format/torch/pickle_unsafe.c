/* pickle_unsafe.c - the imports and calls torch.load(weights_only=True)
 * refuses (pickle_unsafe.h).
 */
#include "format/torch/pickle_unsafe.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* What torch.load(weights_only=True) imports: torch 1.13's
 * _weights_only_unpickler allow-list (OrderedDict, Parameter, _get_layout,
 * Size, Tensor, ten dtypes, the tensor and storage classes, six
 * rebuilders) and newer torch's (which adds Counter, torch.device,
 * _codecs.encode, bytearray, set, complex, every dtype, the quantization
 * schemes, the other rebuilders and _rebuild_from_type_v2), as
 * "module.name", sorted by bytes (strcmp) for bsearch.  A class or
 * function a user allows with torch.serialization.add_safe_globals is not
 * here: that is the user's trust, not the file's. */
static const char *const allowed[] = {
	"_codecs.encode", "builtins.bytearray", "builtins.complex",
	"builtins.set", "collections.Counter", "collections.OrderedDict",
	"torch.BFloat16Storage", "torch.BFloat16Tensor", "torch.BoolStorage",
	"torch.BoolTensor", "torch.ByteStorage", "torch.ByteTensor",
	"torch.CharStorage", "torch.CharTensor", "torch.ComplexDoubleStorage",
	"torch.ComplexFloatStorage", "torch.DoubleStorage",
	"torch.DoubleTensor", "torch.FloatStorage", "torch.FloatTensor",
	"torch.HalfStorage", "torch.HalfTensor", "torch.IntStorage",
	"torch.IntTensor", "torch.LongStorage", "torch.LongTensor",
	"torch.QInt32Storage", "torch.QInt8Storage", "torch.QUInt2x4Storage",
	"torch.QUInt4x2Storage", "torch.QUInt8Storage", "torch.ShortStorage",
	"torch.ShortTensor", "torch.Size", "torch.Tensor",
	"torch.TypedStorage", "torch.UntypedStorage",
	"torch._tensor._rebuild_from_type_v2",
	"torch._utils._rebuild_device_tensor_from_cpu_tensor",
	"torch._utils._rebuild_device_tensor_from_numpy",
	"torch._utils._rebuild_meta_tensor_no_storage",
	"torch._utils._rebuild_parameter",
	"torch._utils._rebuild_parameter_with_state",
	"torch._utils._rebuild_qtensor",
	"torch._utils._rebuild_sparse_csr_tensor",
	"torch._utils._rebuild_sparse_tensor", "torch._utils._rebuild_tensor",
	"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3",
	"torch._utils._rebuild_wrapper_subclass", "torch.bfloat16",
	"torch.bits16", "torch.bits1x8", "torch.bits2x4", "torch.bits4x2",
	"torch.bits8", "torch.bool", "torch.complex128", "torch.complex32",
	"torch.complex64", "torch.cuda.BFloat16Storage",
	"torch.cuda.BFloat16Tensor", "torch.cuda.BoolStorage",
	"torch.cuda.BoolTensor", "torch.cuda.ByteStorage",
	"torch.cuda.ByteTensor", "torch.cuda.CharStorage",
	"torch.cuda.CharTensor", "torch.cuda.ComplexDoubleStorage",
	"torch.cuda.ComplexFloatStorage", "torch.cuda.DoubleStorage",
	"torch.cuda.DoubleTensor", "torch.cuda.FloatStorage",
	"torch.cuda.FloatTensor", "torch.cuda.HalfStorage",
	"torch.cuda.HalfTensor", "torch.cuda.IntStorage",
	"torch.cuda.IntTensor", "torch.cuda.LongStorage",
	"torch.cuda.LongTensor", "torch.cuda.ShortStorage",
	"torch.cuda.ShortTensor", "torch.cuda.sparse.BFloat16Tensor",
	"torch.cuda.sparse.ByteTensor", "torch.cuda.sparse.CharTensor",
	"torch.cuda.sparse.DoubleTensor", "torch.cuda.sparse.FloatTensor",
	"torch.cuda.sparse.HalfTensor", "torch.cuda.sparse.IntTensor",
	"torch.cuda.sparse.LongTensor", "torch.cuda.sparse.ShortTensor",
	"torch.device", "torch.float16", "torch.float32",
	"torch.float4_e2m1fn_x2", "torch.float64", "torch.float8_e4m3fn",
	"torch.float8_e4m3fnuz", "torch.float8_e5m2", "torch.float8_e5m2fnuz",
	"torch.float8_e8m0fnu", "torch.int1", "torch.int16", "torch.int2",
	"torch.int3", "torch.int32", "torch.int4", "torch.int5", "torch.int6",
	"torch.int64", "torch.int7", "torch.int8",
	"torch.nn.parameter.Parameter", "torch.per_channel_affine",
	"torch.per_channel_affine_float_qparams",
	"torch.per_channel_symmetric", "torch.per_tensor_affine",
	"torch.per_tensor_symmetric", "torch.qint32", "torch.qint8",
	"torch.quint2x4", "torch.quint4x2", "torch.quint8",
	"torch.serialization._get_layout", "torch.sparse.BFloat16Tensor",
	"torch.sparse.ByteTensor", "torch.sparse.CharTensor",
	"torch.sparse.DoubleTensor", "torch.sparse.FloatTensor",
	"torch.sparse.HalfTensor", "torch.sparse.IntTensor",
	"torch.sparse.LongTensor", "torch.sparse.ShortTensor",
	"torch.storage.TypedStorage", "torch.storage.UntypedStorage",
	"torch.uint1", "torch.uint16", "torch.uint2", "torch.uint3",
	"torch.uint32", "torch.uint4", "torch.uint5", "torch.uint6",
	"torch.uint64", "torch.uint7", "torch.uint8",
};

#define NALLOWED (sizeof(allowed) / sizeof(allowed[0]))

static int
cmp_name(const void *key, const void *item)
{
	return strcmp(key, *(const char *const *)item);
}

int
pickle_unsafe_global(const char *module, size_t mlen, const char *name,
		     size_t nlen)
{
	char full[128];

	/* Python 3 reads protocol 2's __builtin__ as builtins
	 * (_compat_pickle.IMPORT_MAPPING), and so does torch */
	if (mlen == 11 && memcmp(module, "__builtin__", 11) == 0) {
		module = "builtins";
		mlen = 8;
	}
	if (mlen + 1 + nlen >= sizeof(full) || memchr(module, '\0', mlen) ||
	    memchr(name, '\0', nlen))
		return 1;
	memcpy(full, module, mlen);
	full[mlen] = '.';
	memcpy(full + mlen + 1, name, nlen);
	full[mlen + 1 + nlen] = '\0';
	return bsearch(full, allowed, NALLOWED, sizeof(allowed[0]),
		       cmp_name) == NULL;
}

int
pickle_unsafe_add(struct pickle_unsafe *u, const struct pickle_unsafe_use *use,
		  struct err *e)
{
	u->total++;
	if (u->n == PICKLE_UNSAFE_KEPT)
		return 0;
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 8;
		struct pickle_unsafe_use *p = realloc(u->use,
						      cap * sizeof(*p));

		if (!p)
			return err_set(e, ERR_NO_MEMORY, "out of memory "
				       "reading a pickle");
		u->use = p;
		u->cap = cap;
	}
	u->use[u->n++] = *use;
	return 0;
}

void
pickle_unsafe_reached(void *ctx, const struct pickle_value *made,
		      const struct pickle_step *path)
{
	struct pickle_unsafe *u = ctx;

	for (size_t i = 0; i < u->n; i++)
		if (u->use[i].made == made && !u->use[i].reached) {
			u->use[i].reached = 1;
			u->use[i].path = path;
		}
}

void
pickle_unsafe_free(struct pickle_unsafe *u)
{
	free(u->use);
	memset(u, 0, sizeof(*u));
}
