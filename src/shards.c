/* shards.c - sharded sets (placeholder until the index reader lands). */
#include "shards.h"

#include "error.h"
#include "model.h"

int
shards_open_index(const char *dir, const char *index_path,
		  struct model **out, struct err *e)
{
	(void)dir;
	(void)out;
	err_where(e, index_path);
	return err_set(e, ERR_USAGE, "sharded sets are not supported yet");
}

const struct model_tensor *
shards_find(const struct model *m, const char *name, size_t len)
{
	(void)m;
	(void)name;
	(void)len;
	return NULL;
}

void
shards_free_priv(struct model *m)
{
	(void)m;
}
