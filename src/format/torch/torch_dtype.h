/* torch_dtype.h - the element types a checkpoint's pickle names, as
 * safetensors dtypes: the storage types of _rebuild_tensor_v2's
 * persistent ids (torch.FloatStorage: F32) and the torch dtypes
 * _rebuild_tensor_v3 names (torch.uint16: U16, torch.float8_e4m3fn:
 * F8_E4M3).  A quantized tensor's storage (torch.QInt8Storage: I8) is
 * its integers (torch_qtensor.h).  Those safetensors lacks (complex128,
 * complex32, float4_e2m1fn_x2, bits8, packed 4-bit quantized codes) are
 * in neither table.
 */
#ifndef STFS_TORCH_DTYPE_H
#define STFS_TORCH_DTYPE_H

#include "format/dtype.h"

/* The dtype of storage type torch.name ("FloatStorage"; an
 * UntypedStorage is U8, its numel is bytes): 0, or -1 for none. */
int torch_dtype_of_storage(const char *name, enum dtype *out);

/* The dtype of torch.name ("uint16", "float32"): 0, or -1 for none. */
int torch_dtype_of_name(const char *name, enum dtype *out);

#endif
