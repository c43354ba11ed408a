/* container.c - the table of formats and the one way in (container.h). */
#include "format/container.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/gguf/gguf.h"
#include "format/naming.h"
#include "format/safetensors/header.h"
#include "format/sniff.h"
#include "format/tensor_size.h"
#include "format/torch/torch.h"

/* One line per format.  The first is also the one for files nobody
 * claims (see container.h). */
_Static_assert(TORCH_NOT_MINE == CONTAINER_NOT_MINE, "one value");

static const struct container_format formats[] = {
	{ "safetensors", header_claims, header_read },
	{ NAMING_TORCH, torch_claims, torch_open },
	{ "gguf", gguf_claims, gguf_read },
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

/* The format for a file nobody claims: the one its name says reads it
 * (naming.h), else the first. */
static const struct container_format *
unclaimed(const char *name)
{
	struct naming nm;

	if (name && naming_of(name, &nm) != NAMING_NONE && nm.reader)
		for (size_t i = 0; i < NFORMATS; i++)
			if (strcmp(formats[i].name, nm.reader) == 0)
				return &formats[i];
	return &formats[0];
}

const struct container_format *
container_format(const unsigned char *head, size_t n, uint64_t size,
		 const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i].claims(head, n, size))
			return &formats[i];
	return unclaimed(name);
}

int
container_open(const struct reader *r, struct header **out, struct err *e)
{
	const struct container_format *fmt;
	unsigned char head[CONTAINER_HEAD];
	size_t n = r->size < sizeof(head) ? (size_t)r->size : sizeof(head);
	int rc;

	*out = NULL;
	rc = n ? reader_pread(r, head, n, 0) : 0;
	if (rc < 0) {
		err_set(e, ERR_IO, "reading the first %zu bytes: %s", n,
			strerror(-rc));
		return err_at(e, r->name);
	}
	fmt = container_format(head, n, r->size, r->name);
	rc = fmt->open(r, out, e);
	if (rc == CONTAINER_NOT_MINE) {
		/* (the name's format said no already: the first's error) */
		fmt = unclaimed(r->name) == fmt ? &formats[0] :
		      unclaimed(r->name);
		rc = fmt->open(r, out, e);
	}
	if (rc == 0 && tensor_size_check(*out, e)) {
		/* sizes no view could serve: not a file to sniff */
		container_free(*out);
		*out = NULL;
		return err_at(e, r->name);
	}
	if (rc == 0) {
		(*out)->format = fmt->name;
		return 0;
	}
	sniff_explain(r, e);
	return err_at(e, r->name);
}

void
container_free(struct header *h)
{
	if (!h)
		return;
	if (h->free_priv)
		h->free_priv(h->priv);
	free(h->unsafe);
	free(h->tensors);
	free(h->meta);
	free(h);
}
