/* view_meta.c - what the view says about a tensor besides its bytes: the
 * JSON sidecar and the extended attributes (view_meta.h, view.h). */
#include "view/view_meta.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "format/dequant.h"
#include "format/dtype.h"
#include "format/safetensors/header.h"
#include "model/model.h"
#include "model/quant_model.h"
#include "model/quant_torch.h"
#include "source/source.h"
#include "view/view.h"
#include "view/view_sha256.h"

/* A pretty JSON array of integers, as jansson's JSON_INDENT(2) lays it
 * out one level down: one element per line, "[]" when empty. */
static int
add_u64_array(struct buf *b, const uint64_t *a, size_t n)
{
	int bad = 0;
	size_t i;

	if (n == 0)
		return buf_adds(b, "[]");
	bad |= buf_adds(b, "[\n");
	for (i = 0; i < n; i++) {
		bad |= buf_adds(b, "    ");
		bad |= buf_add_u64(b, a[i]);
		bad |= buf_adds(b, i + 1 < n ? ",\n" : "\n");
	}
	bad |= buf_adds(b, "  ]");
	return bad ? -1 : 0;
}

/* ",\n  \"decode\": ...": how to decode a dtype numpy lacks, and for
 * GGUF's quantized types what the views give. */
static int
add_decode(struct buf *b, enum dtype d)
{
	const struct dtype_info *di = dtype_info(d);
	const char *views = NULL;
	struct buf text = BUF_INIT;
	int bad = 0;

	if (dequant_has(d))
		views = "stfs dequantizes it as ggml does: .npy/, .txt/ and "
			".stats/ give its float32 values, .safetensors/ files "
			"hold them as F32";
	if (!di->note && !views)
		return 0;
	if (di->note)
		bad |= buf_adds(&text, di->note);
	if (di->note && views)
		bad |= buf_adds(&text, "; ");
	if (views)
		bad |= buf_adds(&text, views);
	bad |= buf_adds(b, ",\n  \"decode\": ");
	bad |= buf_add_json_string(b, text.data, text.len);
	buf_free(&text);
	return bad ? -1 : 0;
}

/* A PyTorch tensor's storage: its key, the view's offset and strides,
 * and the other tensors of the model that view the same storage (tied
 * weights).  A storage is one run of its shard's file and the tensors
 * are in file order, so those are mt's neighbours. */
static int
add_storage(const struct model *m, const struct model_tensor *mt,
	    struct buf *b)
{
	const struct tensor *t = mt->t;
	size_t at = (size_t)(mt - m->tensors), lo = at, hi = at + 1, i, n = 0;
	int bad = 0;

	while (lo > 0 && m->tensors[lo - 1].t->storage == t->storage &&
	       m->tensors[lo - 1].shard == mt->shard)
		lo--;
	while (hi < m->ntensors && m->tensors[hi].t->storage == t->storage &&
	       m->tensors[hi].shard == mt->shard)
		hi++;
	bad |= buf_adds(b, ",\n  \"storage\": ");
	bad |= buf_add_json_string(b, t->storage, strlen(t->storage));
	bad |= buf_adds(b, ",\n  \"storage_offset\": ");
	bad |= buf_add_u64(b, t->storage_offset);
	bad |= buf_adds(b, ",\n  \"strides\": ");
	if (t->strides) {
		bad |= add_u64_array(b, t->strides, t->rank);
	} else {
		uint64_t c[64], step = 1;	/* C order; rank <= 64 */
		uint32_t k = t->rank < 64 ? t->rank : 64;

		while (k-- > 0) {
			c[k] = step;
			step *= t->shape[k];
		}
		bad |= add_u64_array(b, c, t->rank < 64 ? t->rank : 64);
	}
	bad |= buf_adds(b, ",\n  \"storage_shared_with\": [");
	for (i = lo; i < hi; i++) {
		const struct tensor *o = m->tensors[i].t;

		if (i == at)
			continue;
		bad |= buf_adds(b, n++ ? ",\n    " : "\n    ");
		bad |= buf_add_json_string(b, o->name, o->name_len);
	}
	bad |= buf_adds(b, hi - lo > 1 ? "\n  ]" : "]");
	return bad ? -1 : 0;
}

/* ",\n  \"gguf\": {...}": a GGUF tensor's ggml type (name and number),
 * its block (elements, bytes; 1 and the element size for plain types)
 * and ggml's ne order of the shape (the row first). */
static int
add_gguf(struct buf *b, const struct tensor *t)
{
	const struct dtype_info *di = dtype_info(t->dtype);
	uint64_t ne[8];
	uint32_t j;
	int bad = 0;

	for (j = 0; j < t->rank && j < 8; j++)
		ne[j] = t->shape[t->rank - 1 - j];
	bad |= buf_adds(b, ",\n  \"gguf\": {\n    \"type\": ");
	bad |= buf_add_json_string(b, di->name, strlen(di->name));
	bad |= buf_adds(b, ",\n    \"type_id\": ");
	bad |= buf_add_u64(b, (uint64_t)dtype_ggml(t->dtype));
	bad |= buf_adds(b, ",\n    \"block_size\": ");
	bad |= buf_add_u64(b, di->block ? di->block : 1);
	bad |= buf_adds(b, ",\n    \"block_bytes\": ");
	bad |= buf_add_u64(b, di->block ? di->block_bytes : di->bits / 8);
	bad |= buf_adds(b, ",\n    \"ne\": [");
	for (j = 0; j < t->rank && j < 8; j++) {
		bad |= buf_adds(b, j ? ", " : "");
		bad |= buf_add_u64(b, ne[j]);
	}
	bad |= buf_adds(b, "]\n  }");
	return bad ? -1 : 0;
}

int
view_meta_sidecar(const struct model *m, const struct model_tensor *mt,
		  struct buf *b)
{
	const struct tensor *t = mt->t;
	const struct dtype_info *di = dtype_info(t->dtype);
	const struct source *src = m->shards[mt->shard].src;
	const struct header *hdr = m->shards[mt->shard].hdr;
	uint64_t offs[2] = { t->begin, t->end };
	int bad = 0;

	bad |= buf_adds(b, "{\n  \"name\": ");
	bad |= buf_add_json_string(b, t->name, t->name_len);
	bad |= buf_adds(b, ",\n  \"dtype\": ");
	bad |= buf_add_json_string(b, di->name, strlen(di->name));
	bad |= buf_adds(b, ",\n  \"shape\": ");
	bad |= add_u64_array(b, t->shape, t->rank);
	bad |= buf_adds(b, ",\n  \"data_offsets\": ");
	bad |= add_u64_array(b, offs, 2);
	bad |= buf_adds(b, ",\n  \"nbytes\": ");
	bad |= buf_add_u64(b, model_tensor_nbytes(mt));
	bad |= buf_adds(b, ",\n  \"numel\": ");
	bad |= buf_add_u64(b, t->numel);
	bad |= buf_adds(b, ",\n  \"offset\": ");
	bad |= buf_add_u64(b, model_tensor_offset(m, mt));
	bad |= buf_adds(b, ",\n  \"numpy\": ");
	if (di->numpy) {
		bad |= buf_add_json_string(b, di->numpy, strlen(di->numpy));
	} else {
		bad |= buf_adds(b, "null");
		bad |= add_decode(b, t->dtype);
	}
	if (t->storage)
		bad |= add_storage(m, mt, b);
	if (hdr->format && strcmp(hdr->format, "gguf") == 0)
		bad |= add_gguf(b, t);
	bad |= quant_torch_sidecar(m, mt, b);
	bad |= quant_model_sidecar(m, mt, b);
	bad |= buf_adds(b, ",\n  \"source\": ");
	bad |= buf_add_json_string(b, src->base, strlen(src->base));
	bad |= buf_adds(b, "\n}\n");
	return bad ? -1 : 0;
}

/* --- extended attributes ---------------------------------------------- */

#define XATTR_PREFIX "user.safetensors."

static const char *const xattr_names[] = {
	"name", "dtype", "shape", "offset", "nbytes",
};

int
view_meta_xattr_list(struct buf *out)
{
	size_t i;

	for (i = 0; i < sizeof(xattr_names) / sizeof(xattr_names[0]); i++)
		if (buf_adds(out, XATTR_PREFIX) ||
		    buf_add(out, xattr_names[i], strlen(xattr_names[i]) + 1))
			return -1;
	return 0;
}

int
view_meta_xattr_get(const struct view *v, const struct model_tensor *mt,
		    const char *name, struct buf *out)
{
	const struct tensor *t;
	size_t plen = strlen(XATTR_PREFIX);
	int bad = 0, rc;
	uint32_t i;

	if (strncmp(name, XATTR_PREFIX, plen) != 0)
		return 1;
	name += plen;
	t = mt->t;
	if (strcmp(name, "name") == 0) {
		bad = buf_add(out, t->name, t->name_len);
	} else if (strcmp(name, "dtype") == 0) {
		bad = buf_adds(out, dtype_info(t->dtype)->name);
	} else if (strcmp(name, "shape") == 0) {
		bad = buf_adds(out, "[");
		for (i = 0; i < t->rank; i++) {
			if (i)
				bad |= buf_adds(out, ",");
			bad |= buf_add_u64(out, t->shape[i]);
		}
		bad |= buf_adds(out, "]");
	} else if (strcmp(name, "offset") == 0) {
		bad = buf_add_u64(out, model_tensor_offset(v->model, mt));
	} else if (strcmp(name, "nbytes") == 0) {
		bad = buf_add_u64(out, model_tensor_nbytes(mt));
	} else if (strcmp(name, "sha256") == 0) {
		/* not listed: it reads the whole tensor, and cp -a or
		 * getfattr -d would ask for every file's */
		rc = view_sha256(v, mt, out);
		return rc == 0 ? 0 : rc == -ENOMEM ? -1 :
		       rc == -EWOULDBLOCK ? -3 : rc == -EINTR ? -4 : -2;
	} else {
		return 1;
	}
	return bad ? -1 : 0;
}
