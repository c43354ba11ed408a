/* torch_qtensor.c - a quantized tensor described (torch_qtensor.h). */
#include "format/torch/torch_qtensor.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "format/torch/pickle_value.h"
#include "format/torch/torch_fold.h"
#include "format/torch/torch_value.h"

/* torch's name of the dtype of a quantized storage type, or NULL. */
static const char *
qdtype(const struct pickle_value *st)
{
	static const char *const names[][2] = {
		{ "QInt8Storage", "qint8" },
		{ "QUInt8Storage", "quint8" },
		{ "QInt32Storage", "qint32" },
	};

	if (st->kind != PICKLE_TUPLE || st->seq.n != 5 ||
	    st->seq.items[1]->kind != PICKLE_GLOBAL)
		return NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(st->seq.items[1]->global.name, names[i][0]) == 0)
			return names[i][1];
	return NULL;
}

/* A plain tensor (a per-channel scheme's scales, zero points). */
static int
plain(const struct pickle_value *v)
{
	return torch_value_is_tensor(v) && !torch_value_is_qtensor(v);
}

/* 1 when tensor v holds floats: a per-channel scheme's zero points that
 * make it per_channel_affine_float_qparams (torch.save writes
 * per_channel_affine for both; torch.load tells them by this dtype). */
static int
float_tensor(const struct pickle_value *v)
{
	struct torch_fold_tensor t;
	char why[16];

	if (!torch_fold_get(v, &t) &&
	    (v->kind != PICKLE_CALL || v->call.callee->kind != PICKLE_GLOBAL ||
	     v->call.callee->global.id != PICKLE_G_REBUILD_TENSOR_V2 ||
	     torch_fold_read(v->call.args, 0, &t, why, sizeof(why))))
		return 0;
	return t.dtype == DTYPE_F32 || t.dtype == DTYPE_F64 ||
	       t.dtype == DTYPE_F16 || t.dtype == DTYPE_BF16;
}

/* "NAME.q_per_channel_PART" as a JSON string appended to text. */
static int
add_name(struct buf *text, const char *name, size_t len, const char *part)
{
	struct buf full = BUF_INIT;
	int rc;

	rc = buf_add(&full, name, len) ||
	     buf_addf(&full, ".q_per_channel_%s", part) ||
	     buf_add_json_string(text, full.data, full.len);
	buf_free(&full);
	return rc;
}

int
torch_qtensor_describe(const struct pickle_value *a, const char *name,
		       size_t len, struct torch_value *val, struct buf *text,
		       struct torch_qtensor *q)
{
	const struct pickle_value *qp, *st, *it[4] = { 0 };
	const char *scheme = "", *dt;
	int per_tensor, per_channel, bad = 0, rc;
	size_t i;

	memset(q, 0, sizeof(*q));
	if (a->seq.n < 5 || a->seq.items[0]->kind != PICKLE_PERSID) {
		snprintf(q->why, sizeof(q->why), "is a quantized tensor call "
			 "without (storage, offset, size, stride, quantizer "
			 "parameters)");
		return 1;
	}
	qp = a->seq.items[4];
	for (i = 0; qp->kind == PICKLE_TUPLE && i < qp->seq.n && i < 4; i++)
		it[i] = qp->seq.items[i];
	if (it[0] && it[0]->kind == PICKLE_GLOBAL &&
	    strcmp(it[0]->global.module, "torch") == 0)
		scheme = it[0]->global.name;
	per_tensor = strcmp(scheme, "per_tensor_affine") == 0 &&
		     qp->seq.n == 3 && (it[1]->kind == PICKLE_FLOAT ||
					it[1]->kind == PICKLE_INT) &&
		     it[2]->kind == PICKLE_INT;
	per_channel = (strcmp(scheme, "per_channel_affine") == 0 ||
		       strcmp(scheme, "per_channel_affine_float_qparams") ==
		       0) && qp->seq.n == 4 && plain(it[1]) && plain(it[2]) &&
		      it[3]->kind == PICKLE_INT;
	if (!per_tensor && !per_channel) {
		snprintf(q->why, sizeof(q->why), "is a quantized tensor whose "
			 "scheme, %.40s, is neither per_tensor_affine (scale, "
			 "zero point) nor per_channel_affine (scales, zero "
			 "points, axis)", *scheme ? scheme : "unknown");
		return 1;
	}
	st = a->seq.items[0]->persid.pid;
	dt = qdtype(st);
	if (!dt) {
		snprintf(q->why, sizeof(q->why), "is a quantized tensor of "
			 "torch.%.60s, not of QInt8Storage, QUInt8Storage or "
			 "QInt32Storage (packed 4- and 2-bit codes have no "
			 "safetensors dtype)", st->kind == PICKLE_TUPLE &&
			 st->seq.n == 5 && st->seq.items[1]->kind ==
			 PICKLE_GLOBAL ? st->seq.items[1]->global.name :
			 "a storage stfs does not know");
		return 1;
	}
	if (per_channel && float_tensor(it[2]))
		scheme = "per_channel_affine_float_qparams";
	bad |= buf_addf(text, "{\"qscheme\": \"torch.%s\", \"dtype\": "
			"\"torch.%s\", ", scheme, dt);
	if (per_channel) {
		q->scales = it[1];
		q->zero_points = it[2];
		bad |= buf_addf(text, "\"axis\": %" PRId64 ", \"scales\": ",
				it[3]->i) ||
		       add_name(text, name, len, "scales") ||
		       buf_adds(text, ", \"zero_points\": ") ||
		       add_name(text, name, len, "zero_points") ||
		       buf_adds(text, ", ");
	} else {
		bad |= buf_adds(text, "\"scale\": ");
		rc = torch_value_text(val, it[1], text);
		if (rc < 0)
			return -1;
		bad |= rc || buf_addf(text, ", \"zero_point\": %" PRId64 ", ",
				      it[2]->i);
	}
	bad |= buf_adds(text, "\"value\": \"(q - zero_point) * scale\"}");
	if (bad)
		return err_set(val->e, ERR_NO_MEMORY, "out of memory");
	return 0;
}
