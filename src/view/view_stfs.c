/* view_stfs.c - the hidden .stfs/ directory at the root.
 *
 * stats.json: per source of the model its display name, for remote
 * sources the transfer counters (source_http_stats()), and for every
 * source its last error (what changed, what failed, and when) or null.
 * The counters move while the mount lives, so the file is rendered on
 * every stat and read, and adapter opens it with direct_io
 * (view_volatile()): readers see the whole current object, never a page
 * cached from an earlier size.
 *
 * log: what the daemon said (base/msglog.h), the last messages with their
 * times, for a mount whose syslog goes nowhere.  Rendered on every read
 * too; its time is its last message's, and attributes of volatile files
 * are never cached (adapter.c), so a mount whose other files are cached
 * (no direct_io at all: a local model) still shows every new line.
 *
 * A hidden directory (struct view_hidden, view_kinds.h) of three inodes:
 * ino_stfs the directory, ino_stfs + 1 stats.json, ino_stfs + 2 log (when
 * the front end keeps one: view_opts.log).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonmem.h"
#include "base/msglog.h"
#include "base/text.h"
#include "model/display.h"
#include "model/model.h"
#include "source/source.h"
#include "source/http/source_http.h"
#include "view/view.h"
#include "view/view_kinds.h"

#define STFS_DIR ".stfs"
#define STFS_STATS "stats.json"
#define STFS_LOG "log"

static int
stfs_build(struct view *v, struct err *e)
{
	(void)e;
	v->ino_stfs = v->ninodes + 1;
	v->ninodes += 3;
	return 0;
}

static uint64_t
stfs_root(const struct view *v)
{
	return v->ino_stfs;
}

static int
stfs_owns(const struct view *v, uint64_t ino)
{
	return v->ino_stfs && ino >= v->ino_stfs &&
	       ino <= v->ino_stfs + (v->opts.log ? 2 : 1);
}

static enum view_kind
stfs_kind(const struct view *v, uint64_t ino)
{
	return ino == v->ino_stfs ? VIEW_DIR : VIEW_HIDDEN_FILE;
}

static uint64_t
stfs_lookup(const struct view *v, uint64_t parent, const char *name, size_t len)
{
	if (parent != v->ino_stfs)
		return 0;
	if (len == strlen(STFS_STATS) && memcmp(name, STFS_STATS, len) == 0)
		return v->ino_stfs + 1;
	if (v->opts.log && len == strlen(STFS_LOG) &&
	    memcmp(name, STFS_LOG, len) == 0)
		return v->ino_stfs + 2;
	return 0;
}

static uint64_t
stfs_nchildren(const struct view *v, uint64_t dir)
{
	return dir == v->ino_stfs ? 1 + (v->opts.log != NULL) : 0;
}

static uint64_t
stfs_child(const struct view *v, uint64_t dir, uint64_t k)
{
	return dir == v->ino_stfs && k < stfs_nchildren(v, dir) ?
	       v->ino_stfs + 1 + k : 0;
}

static size_t
stfs_name(const struct view *v, uint64_t ino, char out[VIEW_NAME_MAX + 1])
{
	const char *s = ino == v->ino_stfs ? STFS_DIR :
			ino == v->ino_stfs + 1 ? STFS_STATS : STFS_LOG;

	strcpy(out, s);
	return strlen(s);
}

/* 1 for its files: their content changes over the mount's life.  ino 0:
 * whether the view has a file that needs direct_io: stats.json when some
 * source of the model is remote (its counters move with every read; the
 * log and a local model's last errors change with their times, which a
 * reader's kernel sees: adapter.c). */
static int
stfs_is_volatile(const struct view *v, uint64_t ino)
{
	size_t i;

	if (!v->ino_stfs)
		return 0;
	if (ino)
		return stfs_owns(v, ino) && ino != v->ino_stfs;
	for (i = 0; i < v->model->nshards; i++) {
		json_t *j = source_http_stats(v->model->shards[i].src);

		if (j) {
			json_decref(j);
			return 1;
		}
	}
	return 0;
}

/* The last error of src: {"time": ..., "message": ...}, or null (a remote
 * source's own comes with its counters). */
static json_t *
last_error(const struct source *src)
{
	char when[TEXT_TIME_ISO];
	struct timespec at;
	const char *why = source_stale_why(src, &at);
	json_t *j;
	char *msg;

	if (!why)
		return json_null();
	if (asprintf(&msg, "changed while mounted (%s): every further read "
		     "of it fails with EIO", why) < 0)
		return NULL;
	text_time_iso(when, sizeof(when), &at);
	j = json_pack("{s:s, s:s}", "time", when, "message", msg);
	free(msg);
	return j;
}

/* The current stats.json appended to b.  0 or -ENOMEM. */
static int
render(const struct view *v, struct buf *b)
{
	unsigned long jf = jsonmem_failures();
	json_t *root = json_object(), *list = json_array();
	char *text = NULL;
	size_t i;
	int rc = -ENOMEM;

	if (!root || !list || json_object_set(root, "sources", list))
		goto out;
	for (i = 0; i < v->model->nshards; i++) {
		struct source *src = v->model->shards[i].src;
		json_t *s = source_http_stats(src);
		char *name = display_name(src->name);

		if (!s)
			s = json_object();
		if (!s || !name ||
		    json_object_set_new(s, "name", json_string(name)) ||
		    json_object_set_new(s, "remote",
					json_boolean(source_is_url(src->name))) ||
		    (!json_object_get(s, "last_error") &&
		     json_object_set_new(s, "last_error", last_error(src))) ||
		    json_array_append_new(list, s)) {
			json_decref(s);
			free(name);
			goto out;
		}
		free(name);
	}
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	/* jansson short of memory may leave a key out (jsonmem.h) */
	if (text && jsonmem_failures() == jf &&
	    !buf_add(b, text, strlen(text)) && !buf_add(b, "\n", 1))
		rc = 0;
out:
	free(text);
	json_decref(list);
	json_decref(root);
	return rc;
}

static uint64_t
stfs_size(const struct view *v, uint64_t ino)
{
	struct buf b = BUF_INIT;
	uint64_t n;

	if (v->opts.log && ino == v->ino_stfs + 2)
		return msglog_size(v->opts.log, NULL);
	if (ino != v->ino_stfs + 1 || render(v, &b))
		return 0;
	n = b.len;
	buf_free(&b);
	return n;
}

/* A file's size for stat: stats.json rendered now, 0 or -ENOMEM (never a
 * size of 0 for a file that is not empty). */
static int
stfs_prepare(const struct view *v, uint64_t ino, uint64_t *size)
{
	struct buf b = BUF_INIT;

	*size = 0;
	if (ino != v->ino_stfs + 1) {
		*size = stfs_size(v, ino);	/* the log's: no memory */
		return 0;
	}
	if (render(v, &b))
		return -ENOMEM;
	*size = b.len;
	buf_free(&b);
	return 0;
}

static int
stfs_read(const struct view *v, uint64_t ino, uint64_t off, size_t size,
	  struct view_segs *out)
{
	struct buf b = BUF_INIT;
	int rc;

	if (ino == v->ino_stfs)
		return -EISDIR;
	rc = ino == v->ino_stfs + 1 ? render(v, &b) :
	     msglog_render(v->opts.log, &b) ? -ENOMEM : 0;
	if (!rc)
		rc = view_segs_add_copy(out, b.data, b.len, off, size);
	buf_free(&b);
	return rc;
}

/* The log changes with every message: its time is the last one's;
 * stats.json's the latest change of a source (its last error). */
static int
stfs_mtime(const struct view *v, uint64_t ino, struct timespec *t)
{
	struct timespec at;
	size_t i;
	int found = 0;

	if (v->opts.log && ino == v->ino_stfs + 2) {
		msglog_size(v->opts.log, t);
		return 1;
	}
	for (i = 0; ino == v->ino_stfs + 1 && i < v->model->nshards; i++)
		if (source_stale_why(v->model->shards[i].src, &at) &&
		    (!found || view_newer(&at, t))) {
			*t = at;
			found = 1;
		}
	return found;
}

const struct view_hidden view_stfs_dir = {
	.dir = STFS_DIR,
	.build = stfs_build,
	.root = stfs_root,
	.owns = stfs_owns,
	.kind = stfs_kind,
	.lookup = stfs_lookup,
	.nchildren = stfs_nchildren,
	.child = stfs_child,
	.name = stfs_name,
	.size = stfs_size,
	.read = stfs_read,
	.prepare = stfs_prepare,
	.is_volatile = stfs_is_volatile,
	.mtime = stfs_mtime,
};
