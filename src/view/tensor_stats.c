/* tensor_stats.c - statistics over a tensor's decoded values (see
 * tensor_stats.h). */
#include "view/tensor_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "format/dequant.h"
#include "format/safetensors/header.h"
#include "view/npy.h"

#define CHUNK TENSOR_STATS_CHUNK

/* Codes of the formats counted in a histogram; 0 for the wide ones. */
static size_t
hist_size(enum dtype d)
{
	if (dequant_has(d))
		return 0;	/* float32 values, streamed */
	switch (dtype_info(d)->bits) {
	case 4:		/* counted per byte, both nibbles expanded at the end */
	case 8:
		return 256;
	case 6:
		return 64;
	case 16:
		return 65536;
	default:
		return 0;
	}
}

static enum tensor_stats_kind
kind_of(enum dtype d)
{
	switch (d) {
	case DTYPE_I8:
	case DTYPE_I16:
	case DTYPE_I32:
	case DTYPE_I64:
		return TENSOR_STATS_SIGNED;
	case DTYPE_BOOL:
	case DTYPE_U8:
	case DTYPE_U16:
	case DTYPE_U32:
	case DTYPE_U64:
		return TENSOR_STATS_UNSIGNED;
	default:
		return TENSOR_STATS_FLOAT;
	}
}

/* Smallest normal magnitude, 2^(1 - bias); 0 when the format has no
 * subnormals (E8M0) or they are found from the bits (F32, F64, C64). */
static double
min_normal(enum dtype d)
{
	switch (d) {
	case DTYPE_F16:
	case DTYPE_F8_E5M2:
		return 0x1p-14;
	case DTYPE_BF16:
		return 0x1p-126;
	case DTYPE_F8_E4M3:
		return 0x1p-6;
	case DTYPE_F8_E4M3FNUZ:
		return 0x1p-7;
	case DTYPE_F8_E5M2FNUZ:
		return 0x1p-15;
	case DTYPE_F6_E2M3:
	case DTYPE_F4:
		return 1.0;
	case DTYPE_F6_E3M2:
		return 0x1p-2;
	default:
		return 0;
	}
}

int
tensor_stats_init(struct tensor_stats_acc *a, enum dtype d)
{
	memset(a, 0, sizeof(*a));
	a->dtype = d;
	a->min = INFINITY;
	a->max = -INFINITY;
	a->imin = INT64_MAX;
	a->imax = INT64_MIN;
	a->umin = UINT64_MAX;
	a->nhist = hist_size(d);
	if (a->nhist) {
		a->hist = calloc(a->nhist, sizeof(*a->hist));
		if (!a->hist)
			return -1;
	}
	return 0;
}

void
tensor_stats_drop(struct tensor_stats_acc *a)
{
	free(a->hist);
	a->hist = NULL;
}

/* ---- wide formats: chunk results merged pairwise ---------------------- */

static void
merge(struct tensor_stats_acc *a, uint64_t nb, double meanb, double m2b,
      double mn, double mx)
{
	double n, delta;

	if (!nb)
		return;
	if (!a->n) {
		a->mean = meanb;
		a->m2 = m2b;
	} else {
		n = (double)a->n + (double)nb;
		delta = meanb - a->mean;
		a->mean += delta * ((double)nb / n);
		a->m2 += m2b + delta * delta * ((double)a->n * (double)nb / n);
	}
	a->n += nb;
	if (mn < a->min)
		a->min = mn;
	if (mx > a->max)
		a->max = mx;
}

/* IEEE binary32 values (F32, and C64's parts): one pass for the classes,
 * sum and extremes, one for the squared deviations. */
static void
feed_f32(struct tensor_stats_acc *a, const uint8_t *p, size_t n)
{
	uint64_t bad = 0, zeros = 0, sub = 0;
	double s0 = 0, s1 = 0, mn = INFINITY, mx = -INFINITY, mean, m2 = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t b;
		float f;
		double x;

		memcpy(&b, p + 4 * i, 4);
		if ((b & 0x7f800000u) == 0x7f800000u) {
			if (b & 0x7fffffu)
				a->nan++;
			else if (b >> 31)
				a->ninf++;
			else
				a->pinf++;
			bad++;
			continue;
		}
		if ((b & 0x7f800000u) == 0) {
			if (b & 0x7fffffffu)
				sub++;
			else
				zeros++;
		}
		memcpy(&f, &b, 4);
		x = f;
		/* two sums halve the add latency chain */
		if (i & 1)
			s1 += x;
		else
			s0 += x;
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
	}
	a->zeros += zeros;
	a->subnormals += sub;
	a->count += n;
	if (bad == n)
		return;
	mean = (s0 + s1) / (double)(n - bad);
	for (i = 0; i < n; i++) {
		float f;
		double d;

		memcpy(&f, p + 4 * i, 4);
		d = (double)f - mean;
		if (bad && !isfinite(d))
			continue;
		m2 += d * d;
	}
	merge(a, n - bad, mean, m2, mn, mx);
}

static void
feed_f64(struct tensor_stats_acc *a, const uint8_t *p, size_t n)
{
	uint64_t bad = 0;
	double s0 = 0, s1 = 0, mn = INFINITY, mx = -INFINITY, mean, m2 = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t b;
		double x;

		memcpy(&b, p + 8 * i, 8);
		if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) {
			if (b & 0xfffffffffffffull)
				a->nan++;
			else if (b >> 63)
				a->ninf++;
			else
				a->pinf++;
			bad++;
			continue;
		}
		if ((b & 0x7ff0000000000000ull) == 0) {
			if (b & 0x7fffffffffffffffull)
				a->subnormals++;
			else
				a->zeros++;
		}
		memcpy(&x, &b, 8);
		if (i & 1)
			s1 += x;
		else
			s0 += x;
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
	}
	a->count += n;
	if (bad == n)
		return;
	mean = (s0 + s1) / (double)(n - bad);
	for (i = 0; i < n; i++) {
		double x;

		memcpy(&x, p + 8 * i, 8);
		if (bad && !isfinite(x))
			continue;
		m2 += (x - mean) * (x - mean);
	}
	merge(a, n - bad, mean, m2, mn, mx);
}

/* 32- and 64-bit integers: exact extremes, float64 sums. */
#define FEED_INT(NAME, T, EXT_MIN, EXT_MAX)				\
static void								\
NAME(struct tensor_stats_acc *a, const uint8_t *p, size_t n)			\
{									\
	double s = 0, mean, m2 = 0;					\
	T mn, mx, v;							\
	size_t i;							\
									\
	if (!n)								\
		return;							\
	memcpy(&mn, p, sizeof(T));					\
	mx = mn;							\
	for (i = 0; i < n; i++) {					\
		memcpy(&v, p + sizeof(T) * i, sizeof(T));		\
		s += (double)v;						\
		a->zeros += v == 0;					\
		mn = v < mn ? v : mn;					\
		mx = v > mx ? v : mx;					\
	}								\
	mean = s / (double)n;						\
	for (i = 0; i < n; i++) {					\
		memcpy(&v, p + sizeof(T) * i, sizeof(T));		\
		m2 += ((double)v - mean) * ((double)v - mean);		\
	}								\
	if (mn < (T)a->EXT_MIN || !a->n)				\
		a->EXT_MIN = mn;					\
	if (mx > (T)a->EXT_MAX || !a->n)				\
		a->EXT_MAX = mx;					\
	a->count += n;							\
	merge(a, n, mean, m2, (double)mn, (double)mx);			\
}

FEED_INT(feed_i32, int32_t, imin, imax)
FEED_INT(feed_u32, uint32_t, umin, umax)
FEED_INT(feed_i64, int64_t, imin, imax)
FEED_INT(feed_u64, uint64_t, umin, umax)

/* ---- narrow formats: histograms of codes ------------------------------- */

static void
feed_hist(struct tensor_stats_acc *a, const uint8_t *p, size_t len)
{
	uint64_t *h = a->hist;
	size_t i;

	switch (dtype_info(a->dtype)->bits) {
	case 4:
	case 8:
		for (i = 0; i < len; i++)
			h[p[i]]++;
		return;
	case 6:		/* npy.h's packing: 3 bytes, little-endian, 4 codes */
		for (i = 0; i + 2 < len; i += 3) {
			uint32_t v = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 |
				     (uint32_t)p[i + 2] << 16;

			h[v & 63]++;
			h[v >> 6 & 63]++;
			h[v >> 12 & 63]++;
			h[v >> 18]++;
		}
		return;
	case 16:
		for (i = 0; i + 1 < len; i += 2)
			h[(unsigned)p[i] | (unsigned)p[i + 1] << 8]++;
		return;
	}
}

/* Quantized blocks: their float32 values (format/dequant.h), a few
 * blocks at a time, counted like F32. */
static void
feed_blocks(struct tensor_stats_acc *a, const uint8_t *p, size_t len)
{
	enum { BATCH = 4096 };	/* floats: 16 KiB */
	float vals[BATCH];
	size_t bb = dequant_block_bytes(a->dtype);
	size_t per = BATCH / dequant_block(a->dtype), nb = len / bb, k;

	while (nb) {
		k = nb < per ? nb : per;
		dequant_blocks(a->dtype, p, k, vals);
		feed_f32(a, (const uint8_t *)vals, k * dequant_block(a->dtype));
		p += k * bb;
		nb -= k;
	}
}

void
tensor_stats_feed(struct tensor_stats_acc *a, const uint8_t *buf, size_t len)
{
	if (a->hist) {
		feed_hist(a, buf, len);
		return;
	}
	if (dequant_has(a->dtype)) {
		feed_blocks(a, buf, len);
		return;
	}
	switch (a->dtype) {
	case DTYPE_F32:
	case DTYPE_C64:
		feed_f32(a, buf, len / 4);
		break;
	case DTYPE_F64:
		feed_f64(a, buf, len / 8);
		break;
	case DTYPE_I32:
		feed_i32(a, buf, len / 4);
		break;
	case DTYPE_U32:
		feed_u32(a, buf, len / 4);
		break;
	case DTYPE_I64:
		feed_i64(a, buf, len / 8);
		break;
	case DTYPE_U64:
		feed_u64(a, buf, len / 8);
		break;
	default:
		break;
	}
}

double
tensor_stats_code_value(enum dtype d, unsigned c)
{
	switch (d) {
	case DTYPE_BOOL:
	case DTYPE_U8:
	case DTYPE_U16:
		return c;
	case DTYPE_I8:
		return (int8_t)c;
	case DTYPE_I16:
		return (int16_t)c;
	default:
		return npy_f32(npy_code_f32(d, c));
	}
}

static void
finish_hist(struct tensor_stats_acc *a, struct tensor_stats *out)
{
	enum dtype d = a->dtype;
	uint64_t four[16], *h = a->hist, n = 0;
	double sum = 0, mean, m2 = 0, thr = min_normal(d);
	size_t nh = a->nhist, c;

	if (d == DTYPE_F4) {	/* bytes to nibbles: element 0 is the low one */
		memset(four, 0, sizeof(four));
		for (c = 0; c < 256; c++) {
			four[c & 15] += h[c];
			four[c >> 4] += h[c];
		}
		h = four;
		nh = 16;
	}
	for (c = 0; c < nh; c++) {
		double v;

		if (!h[c])
			continue;
		v = tensor_stats_code_value(d, (unsigned)c);
		out->count += h[c];
		if (isnan(v)) {
			out->nan += h[c];
			continue;
		}
		if (isinf(v)) {
			if (v < 0)
				out->ninf += h[c];
			else
				out->pinf += h[c];
			continue;
		}
		if (v == 0)
			out->zeros += h[c];
		else if (fabs(v) < thr)
			out->subnormals += h[c];
		n += h[c];
		sum += (double)h[c] * v;
		if (v < out->min)
			out->min = v;
		if (v > out->max)
			out->max = v;
	}
	out->finite = n;
	if (!n)
		return;
	mean = sum / (double)n;
	for (c = 0; c < nh; c++) {
		double v;

		if (!h[c])
			continue;
		v = tensor_stats_code_value(d, (unsigned)c);
		if (isfinite(v))
			m2 += (double)h[c] * (v - mean) * (v - mean);
	}
	out->mean = mean;
	out->std = sqrt(m2 / (double)n);
	/* the exact extremes of integers (16 bits at most here); a float's
	 * extremes may be past what an int64_t holds (BF16: 3e38) */
	if (out->kind == TENSOR_STATS_SIGNED) {
		out->imin = (int64_t)out->min;
		out->imax = (int64_t)out->max;
	} else if (out->kind == TENSOR_STATS_UNSIGNED) {
		out->umin = (uint64_t)out->min;
		out->umax = (uint64_t)out->max;
	}
}

void
tensor_stats_finish(struct tensor_stats_acc *a, struct tensor_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->dtype = a->dtype;
	out->kind = kind_of(a->dtype);
	out->min = INFINITY;
	out->max = -INFINITY;
	if (a->hist) {
		finish_hist(a, out);
	} else {
		out->count = a->count;
		out->finite = a->n;
		out->nan = a->nan;
		out->pinf = a->pinf;
		out->ninf = a->ninf;
		out->zeros = a->zeros;
		out->subnormals = a->subnormals;
		out->min = a->min;
		out->max = a->max;
		out->mean = a->mean;
		out->std = a->n ? sqrt(a->m2 / (double)a->n) : 0;
		out->imin = a->imin;
		out->imax = a->imax;
		out->umin = a->umin;
		out->umax = a->umax;
	}
	if (!out->finite)
		out->min = out->max = out->mean = out->std = NAN;
	tensor_stats_drop(a);
}

int
tensor_stats_compute(const struct tensor *t, tensor_stats_read_fn read, void *arg,
	       struct tensor_stats *out, void (*progress)(void *arg, uint64_t done),
	       void *parg)
{
	/* a strided view's bytes are its elements gathered (table.h) */
	uint64_t len = t->strides ? t->numel * (dtype_info(t->dtype)->bits /
		       8) : t->end - t->begin, done = 0;
	struct tensor_stats_acc a;
	/* whole blocks per chunk for quantized types */
	size_t bb = dequant_block_bytes(t->dtype);
	size_t chunk = bb ? CHUNK / bb * bb : CHUNK;
	uint8_t *buf;
	int rc;

	if (!npy_readable(t))
		return -EOPNOTSUPP;	/* a quantization stfs does not decode */
	if (tensor_stats_init(&a, t->dtype))
		return -ENOMEM;
	buf = malloc(len < chunk ? (len ? len : 1) : chunk);
	if (!buf) {
		tensor_stats_drop(&a);
		return -ENOMEM;
	}
	while (done < len) {
		size_t n = len - done < chunk ? (size_t)(len - done) : chunk;

		rc = read(arg, done, n, buf);
		if (rc) {
			free(buf);
			tensor_stats_drop(&a);
			return rc;
		}
		tensor_stats_feed(&a, buf, n);
		done += n;
		if (progress)
			progress(parg, done);
	}
	free(buf);
	tensor_stats_finish(&a, out);
	return 0;
}

int
tensor_stats_bad(const struct tensor_stats *s)
{
	return s->nan || s->pinf || s->ninf;
}

/* ",\n  \"key\": value" with a float as the shortest %.17g text, or null
 * when it is not finite */
static int
add_real(struct buf *b, const char *key, double x)
{
	if (!isfinite(x))
		return buf_addf(b, ",\n  \"%s\": null", key);
	/* keep a float looking like one: 1 -> 1.0 */
	if (x == floor(x) && fabs(x) < 1e17)
		return buf_addf(b, ",\n  \"%s\": %.1f", key, x);
	return buf_addf(b, ",\n  \"%s\": %.17g", key, x);
}

static int
add_u64(struct buf *b, const char *key, uint64_t v)
{
	return buf_addf(b, ",\n  \"%s\": %" PRIu64, key, v);
}

/* Written by hand rather than with jansson: U64 extremes beyond 2^63
 * stay exact integers. */
char *
tensor_stats_json(const struct tensor_stats *s, const char *name, size_t name_len)
{
	struct buf b = BUF_INIT;
	int rc;

	rc = buf_adds(&b, "{\n  \"name\": ");
	rc |= buf_add_json_string(&b, name, name_len);
	rc |= buf_addf(&b, ",\n  \"dtype\": \"%s\"", dtype_info(s->dtype)->name);
	rc |= add_u64(&b, "count", s->count);
	if (s->kind == TENSOR_STATS_FLOAT || !s->finite) {
		rc |= add_real(&b, "min", s->min);
		rc |= add_real(&b, "max", s->max);
	} else if (s->kind == TENSOR_STATS_SIGNED) {
		rc |= buf_addf(&b, ",\n  \"min\": %" PRId64 ",\n  \"max\": %"
			       PRId64, s->imin, s->imax);
	} else {
		rc |= add_u64(&b, "min", s->umin);
		rc |= add_u64(&b, "max", s->umax);
	}
	rc |= add_real(&b, "mean", s->mean);
	rc |= add_real(&b, "std", s->std);
	rc |= add_u64(&b, "zeros", s->zeros);
	if (s->kind == TENSOR_STATS_FLOAT) {
		rc |= add_u64(&b, "finite", s->finite);
		rc |= add_u64(&b, "nan", s->nan);
		rc |= add_u64(&b, "+inf", s->pinf);
		rc |= add_u64(&b, "-inf", s->ninf);
		rc |= add_u64(&b, "subnormals", s->subnormals);
	}
	rc |= buf_adds(&b, "\n}\n");
	if (rc) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

/* The widest object tensor_stats_json() writes, name aside: 12 bytes before the
 * name, the dtype line (at most 26 with an 11-letter dtype), 11 numeric
 * fields of at most 8 + 10 (key) + 24 (%.17g with sign and exponent)
 * bytes, and "\n}\n". */
#define JSON_FIXED (12 + 26 + 11 * (8 + 10 + 24) + 3)

size_t
tensor_stats_json_size(const char *name, size_t name_len)
{
	/* counted, not written: a size never fails (a stat that said 0
	 * when short of memory kept the file empty for the mount's life) */
	return JSON_FIXED + buf_put_json_string(NULL, name, name_len);
}

char *
tensor_stats_json_padded(const struct tensor_stats *s, const char *name, size_t name_len,
		   size_t *len)
{
	size_t size = tensor_stats_json_size(name, name_len), n;
	char *text = tensor_stats_json(s, name, name_len), *out;

	if (!text || !size)
		goto fail;
	n = strlen(text);
	if (n > size)		/* cannot happen: JSON_FIXED is the widest */
		goto fail;
	out = realloc(text, size + 1);
	if (!out)
		goto fail;
	memset(out + n - 1, ' ', size - n);
	out[size - 1] = '\n';
	out[size] = '\0';
	*len = size;
	return out;
fail:
	free(text);
	return NULL;
}
