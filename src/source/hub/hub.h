/* hub.h - hf://ORG/NAME[@REV][/SUBDIR]: models on the Hugging Face Hub (or
 * a mirror at $HF_ENDPOINT), read with the Hub's own conventions.
 *
 * hub_open() pins REV (a branch, tag or commit sha; default main) to one
 * commit sha with one API request, lists the commit's files, and opens
 * every safetensors model under SUBDIR from that commit: the files' headers
 * are fetched concurrently (one round trip for a 30-shard model, not 30),
 * each file's redirect is resolved once and the signed location reused
 * until it stops working, and files already in the local hub cache
 * ($HF_HUB_CACHE) are read from there without a request.  With
 * HF_HUB_OFFLINE=1 nothing goes to the network at all.
 *
 * The token (HF_TOKEN, HUGGING_FACE_HUB_TOKEN, $HF_TOKEN_PATH or
 * $HF_HOME/token, as huggingface_hub reads them) is sent to the endpoint's
 * origin only, never to the host a redirect points at.
 */
#ifndef STFS_HUB_H
#define STFS_HUB_H

#include <stddef.h>

struct err;
struct model;

/* 1 when name is an hf:// URI. */
int hub_is_uri(const char *name);

/* TLS settings for the requests to the endpoint (the front ends' --ca-file
 * and --insecure); NULL/0 fall back to $STFS_HTTP_CA_FILE and
 * $STFS_HTTP_INSECURE.  Call before hub_open(). */
struct hub_options {
	const char *ca_file;
	int insecure;
};
void hub_set_options(const struct hub_options *o);

/* What an hf:// URI names: one model (n == 1, dir "") or several, each in
 * a mount-relative directory (the shape of the catalog contract). */
struct hub_model {
	char *dir;		/* "" for the root; components joined by '/' */
	char *label;		/* the model's index or file (resolve URL) */
	struct model *model;	/* owned */
};

struct hub_tree {
	char *label;		/* hf://ORG/NAME@SHA[/SUBDIR] */
	size_t n;
	struct hub_model *models;	/* sorted by dir */
};

/* 0 with *out set, or -1 with *e (ERR_USAGE for a malformed URI or a
 * missing token, ERR_IO for what the Hub or the network answered; the
 * message says whether the repo, the revision or a file is missing). */
int hub_open(const char *uri, struct hub_tree **out, struct err *e);

void hub_tree_free(struct hub_tree *t);

/* hub_open() as a catalog (catalog.h): what catalog_open() answers for
 * an hf:// SOURCE.  0 or -1 with *e. */
struct catalog;
int hub_catalog(const char *uri, struct catalog **out, struct err *e);

/* hub_open() for front ends that take one model: fails, naming the
 * subfolders to choose from, when uri holds several. */
int hub_open_model(const char *uri, struct model **out, struct err *e);

#endif
