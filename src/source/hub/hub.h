/* hub.h - hf://ORG/NAME[@REV][/SUBDIR]: models on the Hugging Face Hub (or
 * a mirror at $HF_ENDPOINT), read with the Hub's own conventions.
 *
 * hub_list() pins REV (a branch, tag or commit sha; default main) to one
 * commit sha with one API request and lists the commit's files under
 * SUBDIR; hub_listing_open_ahead() opens the ones the model layer picks
 * from that commit: the files' headers are fetched concurrently (one
 * round trip for a 30-shard model, not 30),
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
#include <stdint.h>

struct err;
struct source;

/* What an hf:// URI lists at the commit REV pins: every file under
 * SUBDIR (a listing without a model, format/naming.h's naming_listed,
 * is refused), or the one file SUBDIR names, each read from the local
 * hub cache when there.  Which of them are models, and where each goes,
 * is the model layer's (model/hub_tree.c). */
#define HUB_SIZE_UNKNOWN UINT64_MAX
struct hub_listing {
	char *label;		/* hf://ORG/NAME@SHA[/SUBDIR] */
	size_t n;
	const char **rel;	/* each file's path below SUBDIR */
	const char **url;	/* its resolve URL: the name to open it by */
	const uint64_t *size;	/* its size, as the Hub's file list (or the
				   local hub cache) says; HUB_SIZE_UNKNOWN
				   when it does not */
	int file;		/* 1: SUBDIR names one file, the only one
				   listed, whatever its name */
	struct hub_listing_priv *priv;
};

/* 0 with *out filled, or -1 with *e (ERR_USAGE for a malformed URI or a
 * missing token, ERR_IO for what the Hub or the network answered; the
 * message says whether the repo, the revision or a file is missing). */
int hub_list(const char *uri, struct hub_listing *out, struct err *e);

/* Open the n listed files url names, all at once (up to the HTTP layer's
 * most requests in flight), to be handed out by hub_listing_open, each
 * counted on meter (may be NULL; base/meter.h) with the bytes its open
 * fetched; arg is the struct hub_listing (the shape of catalog_listing's
 * open_ahead).  0, or -1 with *e from the first failure of a file that
 * is not a config (a config's failure is repeated when it is opened). */
struct meter;
int hub_listing_open_ahead(void *arg, const char *const *url, size_t n,
			   struct meter *meter, struct err *e);

/* A struct source_opener's open and keep, arg the struct hub_listing: a
 * file opened ahead is handed out once (a config that failed ahead fails
 * again, without a request); other files under the endpoint's
 * resolve/ are opened now (an index may name a shard the listing did not
 * have: the Hub then says what is missing). */
int hub_listing_open(void *arg, const char *url, struct source **out,
		     struct err *e);
void hub_listing_keep(void *arg, const char *url, struct source *s);

/* Close what nobody took; forget the listing. */
void hub_listing_free(struct hub_listing *l);

/* A file of a pinned commit by its resolve URL (a hub_listing's url):
 * from the local hub cache when it is there, else from the Hub (not with
 * HF_HUB_OFFLINE=1).  0 or -1 with *e naming url. */
int hub_open_file(const char *url, struct source **out, struct err *e);

#endif
