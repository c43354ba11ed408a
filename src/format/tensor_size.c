/* tensor_size.c - the sizes of a table's tensors, checked (tensor_size.h). */
#include "format/tensor_size.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "format/dtype.h"

/* Room for a quoted name in a one-line message. */
#define QUOTE_MAX 200

static int __attribute__((format(printf, 4, 5)))
refuse(struct err *e, enum err_code code, const struct tensor *t,
       const char *fmt, ...)
{
	char q[QUOTE_MAX], msg[ERR_DETAIL_MAX - QUOTE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(e, code, "tensor %s: %s", err_quote(q, sizeof(q),
		       t->name, t->name_len), msg);
}

/* The product of t's shape, or -1 when it overflows 64 bits. */
static int
shape_numel(const struct tensor *t, uint64_t *out)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < t->rank; i++) {
		if (t->shape[i] && n > UINT64_MAX / t->shape[i])
			return -1;
		n *= t->shape[i];
	}
	*out = n;
	return 0;
}

/* A tensor stored as its bytes: they are numel elements of its dtype. */
static int
check_stored(const struct tensor *t, const struct dtype_info *di,
	     struct err *e)
{
	uint64_t want, stored = t->end - t->begin;

	if (di->block) {
		if (t->numel % di->block)
			return refuse(e, ERR_TENSOR_INVALID_INFO, t, "%" PRIu64
				      " elements are not whole blocks of %u "
				      "(%s)", t->numel, di->block, di->name);
		want = t->numel / di->block * di->block_bytes;
	} else {
		/* numel <= 2^56 and bits <= 64: no overflow */
		if (t->numel * di->bits % 8)
			return refuse(e, ERR_MISALIGNED_SLICE, t, "%" PRIu64
				      " elements of %s (%u bits each) do not "
				      "fill whole bytes", t->numel, di->name,
				      di->bits);
		want = t->numel * di->bits / 8;
	}
	if (stored != want)
		return refuse(e, ERR_TENSOR_INVALID_INFO, t, "%" PRIu64
			      " elements of %s take %" PRIu64 " bytes, but "
			      "its range holds %" PRIu64, t->numel, di->name,
			      want, stored);
	return 0;
}

/* A strided view: whole-byte elements; the bytes it adds beyond the run
 * it reads are counted in *repeat, at most budget. */
static int
check_view(const struct tensor *t, const struct dtype_info *di,
	   uint64_t budget, uint64_t *repeat, struct err *e)
{
	uint64_t bytes, stored = t->end - t->begin, extra;

	if (di->block || di->bits % 8)
		return refuse(e, ERR_TENSOR_INVALID_INFO, t, "a strided view "
			      "of %s, whose elements are not whole bytes",
			      di->name);
	bytes = t->numel * (di->bits / 8);
	if (t->numel && stored < di->bits / 8)
		return refuse(e, ERR_TENSOR_INVALID_INFO, t, "a strided view "
			      "of %" PRIu64 " elements that reads %" PRIu64
			      " bytes", t->numel, stored);
	extra = bytes > stored ? bytes - stored : 0;
	if (extra > budget - *repeat)
		return refuse(e, ERR_VALIDATION_OVERFLOW, t, "a view that "
			      "repeats its %" PRIu64 " stored bytes as %" PRIu64
			      " (an expand); stfs serves at most %" PRIu64
			      " bytes of repeats per file (1 GiB, or the "
			      "file's size): save a copy (.contiguous()) "
			      "instead", stored, bytes, budget);
	*repeat += extra;
	return 0;
}

int
tensor_size_check(const struct header *h, struct err *e)
{
	uint64_t budget = h->file_size > TENSOR_SIZE_REPEAT_MIN ?
			  h->file_size : TENSOR_SIZE_REPEAT_MIN;
	uint64_t repeat = 0, numel, room;
	size_t i;

	room = h->file_size >= h->data_start ?
	       h->file_size - h->data_start : 0;
	for (i = 0; i < h->ntensors; i++) {
		const struct tensor *t = &h->tensors[i];
		const struct dtype_info *di = dtype_info(t->dtype);

		if (!di || (!di->bits && !di->block))
			return refuse(e, ERR_TENSOR_INVALID_INFO, t, "a "
				      "dtype stfs does not know");
		if (shape_numel(t, &numel) || numel != t->numel)
			return refuse(e, ERR_TENSOR_INVALID_INFO, t, "its "
				      "shape does not hold its %" PRIu64
				      " elements", t->numel);
		if (numel > TENSOR_SIZE_NUMEL_MAX)
			return refuse(e, ERR_VALIDATION_OVERFLOW, t, "%" PRIu64
				      " elements, more than the 2^56 stfs "
				      "serves (its files would not fit a file "
				      "size): the file is damaged or crafted",
				      numel);
		if (t->end < t->begin || t->end > room)
			return refuse(e, ERR_INVALID_OFFSET, t, "bytes [%"
				      PRIu64 ", %" PRIu64 ") of the data are "
				      "not in the file's %" PRIu64, t->begin,
				      t->end, room);
		if (t->strides ? check_view(t, di, budget, &repeat, e) :
		    check_stored(t, di, e))
			return -1;
	}
	return 0;
}
