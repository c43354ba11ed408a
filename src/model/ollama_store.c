/* ollama_store.c - Ollama's manifests and blobs (ollama_store.h). */
#include "model/ollama_store.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/jsonmem.h"

#define DEFAULT_REGISTRY "registry.ollama.ai"
#define DEFAULT_NAMESPACE "library"

static int
is_dir(const char *root, const char *sub)
{
	struct stat st;
	char *p;
	int ok;

	if (asprintf(&p, "%s/%s", root, sub) < 0)
		return 0;
	ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return ok;
}

int
ollama_is_root(const char *path)
{
	return is_dir(path, "manifests") && is_dir(path, "blobs");
}

/* The sorted names in dir (no '.' names), or NULL with *n 0. */
static char **
list(const char *dir, size_t *n)
{
	char **v = NULL, **nv;
	size_t cap = 0;
	struct dirent *d;
	DIR *dp = opendir(dir);

	*n = 0;
	if (!dp)
		return NULL;
	while ((d = readdir(dp)) && *n < OLLAMA_MODELS_MAX) {
		if (d->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[*n] = strdup(d->d_name)))
			break;
		(*n)++;
	}
	closedir(dp);
	return v;
}

static void
list_free(char **v, size_t n)
{
	while (n)
		free(v[--n]);
	free(v);
}

/* 1 when dg is "sha256:" and 64 lowercase hex digits. */
static int
digest_ok(const char *dg)
{
	size_t k;

	if (!dg || strncmp(dg, "sha256:", 7) != 0 || strlen(dg) != 7 + 64)
		return 0;
	for (k = 7; k < 7 + 64; k++)
		if (!strchr("0123456789abcdef", dg[k]))
			return 0;
	return 1;
}

/* The model layers' blobs ("sha256-HEX") of the manifest at path, in its
 * order, into m (m->nblobs 0 when the manifest has none, or is no
 * manifest); -1 with *e when a digest is malformed or memory ran out. */
static int
model_blobs(const char *path, struct ollama_model *m, struct err *e)
{
	unsigned long jf = jsonmem_failures();
	json_t *root = json_load_file(path, 0, NULL);
	json_t *layers = json_object_get(root, "layers"), *l;
	size_t i, n = json_array_size(layers);
	int rc = 0;

	m->nblobs = 0;
	m->blobs = calloc(n ? n : 1, sizeof(*m->blobs));
	/* a parse short of memory may fail, or drop a byte (jsonmem.h) */
	if (!m->blobs || jsonmem_failures() != jf)
		rc = err_set(e, ERR_NO_MEMORY, "out of memory");
	json_array_foreach(layers, i, l) {
		const char *mt = json_string_value(json_object_get(l,
							"mediaType"));
		const char *dg = json_string_value(json_object_get(l,
							"digest"));

		if (rc || !mt || strcmp(mt, OLLAMA_MODEL_MEDIA_TYPE) != 0)
			continue;
		if (!digest_ok(dg)) {
			rc = err_set(e, ERR_USAGE, "model layer digest is not "
				     "sha256:<64 hex digits>");
		} else if (asprintf(&m->blobs[m->nblobs], "sha256-%s",
				    dg + 7) < 0) {
			m->blobs[m->nblobs] = NULL;
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
		} else {
			m->nblobs++;
		}
	}
	json_decref(root);
	return rc;
}

static void
model_blobs_free(struct ollama_model *m)
{
	while (m->blobs && m->nblobs)
		free(m->blobs[--m->nblobs]);
	free(m->blobs);
	m->blobs = NULL;
}

static char *
model_name(const char *reg, const char *ns, const char *model,
	   const char *tag)
{
	char *s;
	int rc;

	if (strcmp(reg, DEFAULT_REGISTRY) != 0)
		rc = asprintf(&s, "%s/%s/%s:%s", reg, ns, model, tag);
	else if (strcmp(ns, DEFAULT_NAMESPACE) != 0)
		rc = asprintf(&s, "%s/%s:%s", ns, model, tag);
	else
		rc = asprintf(&s, "%s:%s", model, tag);
	return rc < 0 ? NULL : s;
}

struct walk {
	struct ollama_model *v;
	size_t n, cap;
	struct err *e;
};

/* One manifest file: add its model, if it has one. */
static int
add_manifest(struct walk *w, const char *path, const char *const part[4])
{
	struct ollama_model m = { 0 };
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > OLLAMA_MANIFEST_MAX)
		return 0;
	if (model_blobs(path, &m, w->e)) {
		model_blobs_free(&m);
		return err_at(w->e, path);
	}
	if (!m.nblobs) {
		model_blobs_free(&m);
		return 0;
	}
	m.name = model_name(part[0], part[1], part[2], part[3]);
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		struct ollama_model *nv = realloc(w->v, cap * sizeof(*nv));

		if (nv) {
			w->v = nv;
			w->cap = cap;
		}
	}
	if (!m.name || w->n == w->cap || w->n >= OLLAMA_MODELS_MAX) {
		free(m.name);
		model_blobs_free(&m);
		return err_set(w->e, ERR_NO_MEMORY, "out of memory");
	}
	w->v[w->n++] = m;
	return 0;
}

/* manifests/REGISTRY/NAMESPACE/MODEL/TAG: depth 0..3 below dir. */
static int
walk(struct walk *w, const char *dir, const char *part[4], int depth)
{
	size_t n, i;
	char **v = list(dir, &n);
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++) {
		char *p;

		if (asprintf(&p, "%s/%s", dir, v[i]) < 0) {
			rc = err_set(w->e, ERR_NO_MEMORY, "out of memory");
			break;
		}
		part[depth] = v[i];
		rc = depth == 3 ? add_manifest(w, p, part) :
		     walk(w, p, part, depth + 1);
		free(p);
	}
	list_free(v, n);
	return rc;
}

static int
cmp_model(const void *a, const void *b)
{
	return strcmp(((const struct ollama_model *)a)->name,
		      ((const struct ollama_model *)b)->name);
}

int
ollama_models(const char *root, struct ollama_model **out, size_t *n,
	      struct err *e)
{
	struct walk w = { NULL, 0, 0, e };
	const char *part[4];
	char *dir;

	if (asprintf(&dir, "%s/manifests", root) < 0)
		return err_set(e, ERR_NO_MEMORY, "out of memory");
	if (walk(&w, dir, part, 0)) {
		free(dir);
		ollama_models_free(w.v, w.n);
		return -1;
	}
	free(dir);
	if (w.n)
		qsort(w.v, w.n, sizeof(*w.v), cmp_model);
	*out = w.v;
	*n = w.n;
	return 0;
}

void
ollama_models_free(struct ollama_model *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		model_blobs_free(&v[i]);
	}
	free(v);
}

/* The store path's blob is in (path is ROOT/blobs/NAME), malloc'd, with
 * *blob pointing at NAME in path; NULL when path is not so placed. */
static char *
blob_root(const char *path, const char **blob)
{
	const char *slash = strrchr(path, '/'), *dir;
	char *root;

	if (!slash || slash - path < 5 ||
	    strncmp(slash - 5, "blobs", 5) != 0 ||
	    (slash - 5 > path && slash[-6] != '/') ||
	    strncmp(slash + 1, "sha256-", 7) != 0)
		return NULL;
	*blob = slash + 1;
	dir = slash - 5;
	root = dir == path ? strdup(".") :
	       dir - 1 == path ? strdup("/") :
	       strndup(path, (size_t)(dir - 1 - path));
	if (root && !ollama_is_root(root)) {
		free(root);
		return NULL;
	}
	return root;
}

int
ollama_split_blobs(const char *path, char ***out, size_t *n, struct err *e)
{
	struct ollama_model *v;
	const char *blob = NULL;
	char *root = blob_root(path, &blob);
	size_t nv, i, k;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!root)
		return 0;
	if (ollama_models(root, &v, &nv, e)) {
		free(root);
		return -1;
	}
	for (i = 0; i < nv && !*n; i++) {
		for (k = 0; v[i].nblobs > 1 && k < v[i].nblobs; k++)
			if (strcmp(v[i].blobs[k], blob) == 0)
				break;
		if (v[i].nblobs < 2 || k == v[i].nblobs)
			continue;
		*out = calloc(v[i].nblobs, sizeof(**out));
		for (k = 0; *out && k < v[i].nblobs; k++)
			if (asprintf(&(*out)[k], "%s/blobs/%s", root,
				     v[i].blobs[k]) < 0)
				break;
		if (!*out || k < v[i].nblobs) {
			while (*out && k)
				free((*out)[--k]);
			free(*out);
			*out = NULL;
			rc = err_set(e, ERR_NO_MEMORY, "out of memory");
			break;
		}
		*n = v[i].nblobs;
	}
	ollama_models_free(v, nv);
	free(root);
	return rc;
}

static char *
store_root(struct err *e)
{
	const char *env = getenv("OLLAMA_MODELS"), *home = getenv("HOME");
	char *p;

	if (env && *env) {
		p = strdup(env);
	} else if (home && *home) {
		if (asprintf(&p, "%s/.ollama/models", home) < 0)
			p = NULL;
	} else {
		err_set(e, ERR_USAGE, "neither OLLAMA_MODELS nor HOME is set: "
			"name the store's directory");
		return NULL;
	}
	if (!p)
		err_set(e, ERR_NO_MEMORY, "out of memory");
	return p;
}

char *
ollama_store_path(const char *source, struct err *e)
{
	const char *name = source + strlen(OLLAMA_SCHEME);
	struct ollama_model *v;
	char *root = store_root(e), *want = NULL, *path = NULL;
	size_t n, i;

	if (!root || !*name)
		return root;
	if (!ollama_is_root(root)) {
		err_set(e, ERR_USAGE, "no Ollama store here (manifests/ and "
			"blobs/); OLLAMA_MODELS names another");
		err_at(e, root);
		free(root);
		return NULL;
	}
	if (ollama_models(root, &v, &n, e)) {
		free(root);
		return NULL;
	}
	if (asprintf(&want, strchr(name, ':') ? "%s" : "%s:latest", name) < 0)
		want = NULL;
	for (i = 0; want && i < n; i++)
		if (strcmp(v[i].name, want) == 0)
			break;
	if (!want)
		err_set(e, ERR_NO_MEMORY, "out of memory");
	else if (i == n)
		err_set(e, ERR_USAGE, "no model %s in this Ollama store (ollama "
			"list names them)", want);
	else if (asprintf(&path, "%s/blobs/%s", root, v[i].blobs[0]) < 0) {
		path = NULL;
		err_set(e, ERR_NO_MEMORY, "out of memory");
	}
	if (!path && e->code != ERR_NO_MEMORY)
		err_at(e, root);
	ollama_models_free(v, n);
	free(want);
	free(root);
	return path;
}
