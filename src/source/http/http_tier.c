/* http_tier.c - the shared cache between the disk cache and the origin
 * (see http_tier.h for what it promises). */
#include "source/http/http_tier.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/text.h"
#include "source/http/http_cache.h"
#include "source/http/http_conf.h"
#include "source/http/http_options.h"
#include "source/http/http_stats.h"

#define MAGIC		"stfs shared block 1\n"
#define MAGIC_LEN	(sizeof(MAGIC) - 1)
#define IDENT_MAX	2048
#define PREFIX_MAX	(IDENT_MAX + 128)	/* the header before "mac: " */
#define MAC_HEX		(2 * SHA256_DIGEST_SIZE)
#define MAC_LINE	(5 + MAC_HEX + 1)	/* "mac: HEX\n" */
#define HEAD_MAX	(PREFIX_MAX + MAC_LINE)
#define KEY_ID		"stfs shared cache key id"
#define DRAIN_MS	5000	/* a closing source waits this long for its
				   blocks waiting to be put, at most */
#define ORIGIN_ALPHA	4	/* the origin's time: a new sample weighs
				   1/ORIGIN_ALPHA */

struct put_item {
	STAILQ_ENTRY(put_item) link;
	struct http_tier_src *s;
	struct http_cache_block *b;	/* referenced until put */
};

/* When the tier is passed over: for reads, for puts, or both (a store
 * that does not answer GETs does not answer PUTs). */
struct pass {
	uint64_t until;		/* atomic: passed over before then */
	uint64_t pause;		/* atomic, written under the tier's lock:
				   the last pause, ms (0: none since an
				   answer) */
	int logged;		/* said so: an answer says it is back */
};

struct http_tier {
	const struct http_conf *conf;
	struct http_cache *cache;
	struct http_tier_backend be;
	struct hmac_sha256_ctx keyed;	/* the key set: copied per block */
	char keyid[9];
	pthread_mutex_t lock;		/* everything below */
	pthread_cond_t more;		/* a block to put */
	pthread_cond_t less;		/* a block put */
	struct pass reads, puts;
	unsigned late_run;		/* atomic: deadlines missed in a row */
	STAILQ_HEAD(, put_item) queue;
	uint64_t waiting;		/* bytes queued or being put */
	pthread_t threads[HTTP_TIER_PUT_THREADS];
	unsigned nthreads;
	pid_t pid;			/* whose threads run (0: none) */
	int stop;
};

struct http_tier_src {
	struct http_tier *t;
	char *ident;
	char hash[33];			/* the key's HASH */
	uint64_t size;
	uint64_t origin_ms;		/* atomic: a block's time at the origin */
	unsigned pending;		/* tier's lock: its blocks to put */
	int told;			/* atomic: a rejection was logged */
	struct http_tier_stats st;
};

/* ---- the key ------------------------------------------------------------ */

static int
key_error(struct err *e, const char *path, const char *what)
{
	err_set(e, ERR_USAGE, "the shared cache's key file: %s (the blocks "
		"are signed with a key every node of the fleet holds; make "
		"one with: head -c 32 /dev/urandom | base64 > FILE; chmod 600 "
		"FILE)", what);
	return err_at(e, path);
}

/* The key in path into t->keyed, and its fingerprint. */
static int
load_key(struct http_tier *t, const char *path, struct err *e)
{
	unsigned char buf[HTTP_TIER_KEY_MAX + 1], id[SHA256_DIGEST_SIZE];
	struct hmac_sha256_ctx c;
	size_t n = 0;
	struct stat st;
	ssize_t got;
	int fd, rc = -1;

	if (!path || !*path)
		return key_error(e, "-o shared_cache_key", "not given");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		char what[160];

		snprintf(what, sizeof(what), "cannot open it: %s",
			 strerror(errno));
		return key_error(e, path, what);
	}
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		return key_error(e, path, "not a regular file");
	}
	if (st.st_mode & 077)
		http_conf_warn(t->conf, "warning: the shared cache's key file "
			       "%s is readable by group or others (mode %04o); "
			       "chmod 600 it", path,
			       (unsigned)(st.st_mode & 07777));
	while (n < sizeof(buf) &&
	       (got = read(fd, buf + n, sizeof(buf) - n)) > 0)
		n += (size_t)got;
	close(fd);
	while (n && strchr(" \t\r\n", buf[n - 1]))
		n--;
	if (n > HTTP_TIER_KEY_MAX)
		key_error(e, path, "larger than 1024 bytes");
	else if (n < HTTP_TIER_KEY_MIN)
		key_error(e, path, "shorter than 16 bytes");
	else
		rc = 0;
	if (rc == 0) {
		hmac_sha256_set_key(&t->keyed, n, buf);
		c = t->keyed;
		hmac_sha256_update(&c, sizeof(KEY_ID) - 1,
				   (const uint8_t *)KEY_ID);
		hmac_sha256_digest(&c, sizeof(id), id);
		snprintf(t->keyid, sizeof(t->keyid), "%02x%02x%02x%02x",
			 id[0], id[1], id[2], id[3]);
	}
	explicit_bzero(buf, sizeof(buf));
	explicit_bzero(&c, sizeof(c));
	return rc;
}

/* ---- the tier ------------------------------------------------------------ */

struct http_tier *
http_tier_new(const struct http_conf *conf, struct http_cache *cache,
	      const struct http_tier_backend *b, const char *key_path,
	      struct err *e)
{
	struct http_tier *t = calloc(1, sizeof(*t));

	if (!t) {
		if (b->free)
			b->free(b->priv);
		err_set(e, ERR_NO_MEMORY, "out of memory");
		return NULL;
	}
	t->conf = conf;
	t->cache = cache;
	t->be = *b;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->more, NULL);
	http_conf_cond_init(&t->less);
	STAILQ_INIT(&t->queue);
	if (load_key(t, key_path, e)) {
		http_tier_free(t);
		return NULL;
	}
	return t;
}

void
http_tier_free(struct http_tier *t)
{
	unsigned i;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_broadcast(&t->more);
	pthread_mutex_unlock(&t->lock);
	if (t->pid == getpid())		/* else a fork's: not ours */
		for (i = 0; i < t->nthreads; i++)
			pthread_join(t->threads[i], NULL);
	if (t->be.free)
		t->be.free(t->be.priv);
	explicit_bzero(&t->keyed, sizeof(t->keyed));
	pthread_cond_destroy(&t->more);
	pthread_cond_destroy(&t->less);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

enum { PASS_READS = 1, PASS_PUTS = 2, PASS_ALL = 3 };

/* A failure: pass the tier over (for reads, puts or both: PASS_*), for
 * a pause that doubles while failures go on; said once. */
static void
pass_over(struct http_tier *t, int which, const char *why)
{
	uint64_t now = http_conf_now_ms();
	struct pass *p = which & PASS_READS ? &t->reads : &t->puts;
	uint64_t pause;
	int say;

	pthread_mutex_lock(&t->lock);
	pause = p->pause ? 2 * p->pause : HTTP_TIER_PAUSE_MIN_MS;
	if (pause > HTTP_TIER_PAUSE_MAX_MS)
		pause = HTTP_TIER_PAUSE_MAX_MS;
	__atomic_store_n(&p->pause, pause, __ATOMIC_RELAXED);
	__atomic_store_n(&p->until, now + pause, __ATOMIC_RELAXED);
	if (which == PASS_ALL &&
	    __atomic_load_n(&t->puts.until, __ATOMIC_RELAXED) < now + pause)
		__atomic_store_n(&t->puts.until, now + pause,
				 __ATOMIC_RELAXED);
	say = !p->logged;
	p->logged = 1;
	pthread_mutex_unlock(&t->lock);
	if (!say)
		return;
	if (which & PASS_READS)
		http_conf_log(t->conf, HTTP_LOG_WARNING, "shared cache %s: %s: "
			      "reading blocks from the origin (asking it again "
			      "in %llu s)", t->be.name, why,
			      (unsigned long long)(pause / 1000));
	else
		http_conf_log(t->conf, HTTP_LOG_WARNING, "shared cache %s "
			      "refuses blocks: %s: not putting any for %llu s "
			      "(reads from it go on)", t->be.name, why,
			      (unsigned long long)(pause / 1000));
}

/* An answer: the tier is used again, said when it had been passed
 * over. */
static void
answered(struct http_tier *t, int reads)
{
	struct pass *p = reads ? &t->reads : &t->puts;
	int say;

	if (!__atomic_load_n(&p->pause, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&t->lock);
	say = p->logged;
	p->logged = 0;
	__atomic_store_n(&p->pause, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->lock);
	if (say)
		http_conf_log(t->conf, HTTP_LOG_NOTICE, "shared cache %s %s "
			      "again", t->be.name, reads ? "answers" :
			      "takes blocks");
}

static int
passed_over(struct pass *p)
{
	return http_conf_now_ms() < __atomic_load_n(&p->until,
						    __ATOMIC_RELAXED);
}

/* ---- names and headers ------------------------------------------------------ */

static int
ident_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > IDENT_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static void
ident_hash(const char *ident, char hash[33])
{
	uint8_t d[SHA256_DIGEST_SIZE];
	struct sha256_ctx c;
	int i;

	sha256_init(&c);
	sha256_update(&c, strlen(ident), (const uint8_t *)ident);
	sha256_digest(&c, sizeof(d), d);
	for (i = 0; i < 16; i++)
		snprintf(hash + 2 * i, 3, "%02x", d[i]);
}

static int
object_key(const struct http_tier *t, const char *hash, uint64_t idx,
	   char *out, size_t n)
{
	int k = snprintf(out, n, "stfs1/%s/%.2s/%s/%u.%llu", t->keyid, hash,
			 hash, HTTP_BLOCK_BYTES, (unsigned long long)idx);

	return k < 0 || (size_t)k >= n ? -1 : 0;
}

int
http_tier_key(const struct http_tier *t, const char *identity, uint64_t idx,
	      char *out, size_t n)
{
	char hash[33];

	ident_hash(identity, hash);
	return object_key(t, hash, idx, out, n);
}

/* The header of block idx (len bytes) before its mac line; its length. */
static size_t
head_prefix(const struct http_tier_src *s, uint64_t idx, size_t len,
	    char out[PREFIX_MAX])
{
	int k = snprintf(out, PREFIX_MAX, MAGIC "source: %s\nblock: %u %llu "
			 "%zu\n", s->ident, HTTP_BLOCK_BYTES,
			 (unsigned long long)idx, len);

	return k < 0 || k >= PREFIX_MAX ? 0 : (size_t)k;
}

/* ---- sources ---------------------------------------------------------------- */

struct http_tier_src *
http_tier_src_open(struct http_tier *t, const char *identity, uint64_t size,
		   uint64_t origin_ms)
{
	struct http_tier_src *s;

	if (!t || !identity || !ident_ok(identity))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->ident = strdup(identity))) {
		free(s);
		return NULL;
	}
	s->t = t;
	s->size = size;
	s->origin_ms = origin_ms;
	ident_hash(identity, s->hash);
	return s;
}

const struct http_tier_stats *
http_tier_src_stats(const struct http_tier_src *s)
{
	return &s->st;
}

void
http_tier_origin_took(struct http_tier_src *s, uint64_t t0, uint64_t first,
		      uint64_t t1, unsigned n)
{
	uint64_t est, old;

	if (!s || !first || first < t0 || t1 < first || n == 0)
		return;
	est = (first - t0) + (t1 - first) / n;
	old = __atomic_load_n(&s->origin_ms, __ATOMIC_RELAXED);
	if (old)
		est = (old * (ORIGIN_ALPHA - 1) + est) / ORIGIN_ALPHA;
	__atomic_store_n(&s->origin_ms, est, __ATOMIC_RELAXED);
}

/* How long a block may take from the tier: twice what the origin takes
 * for one, at least HTTP_TIER_WAIT_MIN_MS, at most half the read bound
 * (the origin's turn comes after it). */
static uint64_t
deadline_ms(const struct http_tier_src *s)
{
	uint64_t w = 2 * __atomic_load_n(&s->origin_ms, __ATOMIC_RELAXED);
	uint64_t half = http_conf_bound_ms(s->t->conf) / 2;

	if (w < HTTP_TIER_WAIT_MIN_MS)
		w = HTTP_TIER_WAIT_MIN_MS;
	return w < half ? w : half;
}

/* ---- reading a block ----------------------------------------------------- */

/* One GET of a block: the header checked as it comes, the bytes into the
 * block's memory, the MAC over both. */
struct tget {
	struct http_tier_src *s;
	struct http_cache_block *b;
	char want[PREFIX_MAX];		/* the header asked for, to "mac: " */
	size_t plen, hlen;		/* its length; with the mac line */
	char head[HEAD_MAX];		/* the header received */
	uint8_t sent[SHA256_DIGEST_SIZE];	/* the MAC it says */
	uint64_t got;			/* body bytes */
	uint64_t *fed_ms;		/* stamped by every piece */
	struct hmac_sha256_ctx mac;
	int verdict;			/* -1, or HTTP_TIER_REJECT_* */
};

static int
tget_head(void *ud, const struct http_transport_response *r)
{
	(void)ud;
	(void)r;
	return HTTP_SINK_TAKE;
}

/* Parse the mac line's hex; 0, or -1 when malformed. */
static int
parse_mac(const char *p, uint8_t out[SHA256_DIGEST_SIZE])
{
	int i;

	if (memcmp(p, "mac: ", 5) != 0 || p[MAC_LINE - 1] != '\n')
		return -1;
	for (i = 0; i < SHA256_DIGEST_SIZE; i++) {
		int hi = text_hexval(p[5 + 2 * i]), lo = text_hexval(p[6 + 2 * i]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi * 16 + lo);
	}
	return 0;
}

/* The first n bytes of a header: -1 while they may be the one asked for,
 * else what is wrong. */
static int
judge_head(const struct tget *g, size_t n)
{
	size_t k = n < MAGIC_LEN ? n : MAGIC_LEN;

	if (memcmp(g->head, MAGIC, k) != 0)
		return HTTP_TIER_REJECT_CORRUPT;
	k = n < g->plen ? n : g->plen;
	if (memcmp(g->head, g->want, k) != 0)
		return HTTP_TIER_REJECT_FOREIGN;
	return -1;
}

static int
tget_body(void *ud, const char *p, size_t n)
{
	struct tget *g = ud;
	struct http_cache_block *b = g->b;

	http_stats_add(&g->s->st.bytes, n);
	__atomic_store_n(g->fed_ms, http_conf_now_ms(), __ATOMIC_RELAXED);
	if (g->got < g->hlen) {
		size_t k = g->hlen - g->got < n ? (size_t)(g->hlen - g->got) : n;

		memcpy(g->head + g->got, p, k);
		g->got += k;
		p += k;
		n -= k;
		if ((g->verdict = judge_head(g, (size_t)g->got)) >= 0)
			return HTTP_SINK_STOP;
		if (g->got < g->hlen)
			return HTTP_SINK_TAKE;
		if (parse_mac(g->head + g->plen, g->sent)) {
			g->verdict = HTTP_TIER_REJECT_CORRUPT;
			return HTTP_SINK_STOP;
		}
		g->mac = g->s->t->keyed;
		hmac_sha256_update(&g->mac, g->plen, (const uint8_t *)g->head);
	}
	if (n > b->len - (g->got - g->hlen)) {
		g->verdict = HTTP_TIER_REJECT_CORRUPT;	/* longer than it */
		return HTTP_SINK_STOP;
	}
	memcpy(b->data + (g->got - g->hlen), p, n);
	hmac_sha256_update(&g->mac, n, (const uint8_t *)p);
	g->got += n;
	return HTTP_SINK_TAKE;
}

/* What a whole answer was: -1 (the block), or why it is refused. */
static int
judge_block(struct tget *g)
{
	uint8_t mine[SHA256_DIGEST_SIZE];

	if (g->verdict >= 0)
		return g->verdict;
	if (g->got < g->hlen) {
		int v = judge_head(g, (size_t)g->got);

		return v >= 0 ? v : HTTP_TIER_REJECT_TRUNCATED;
	}
	if (g->got < g->hlen + g->b->len)
		return HTTP_TIER_REJECT_TRUNCATED;
	hmac_sha256_digest(&g->mac, sizeof(mine), mine);
	return memeql_sec(mine, g->sent, sizeof(mine)) ? -1 :
	       HTTP_TIER_REJECT_CORRUPT;
}

static const char *const reject_names[HTTP_TIER_REJECT_KINDS] = {
	"damaged, or signed with another key", "cut short",
	"another block's",
};

int
http_tier_get(struct http_tier_src *s, struct http_cache_block *b,
	      uint64_t *fed_ms)
{
	struct http_tier *t = s->t;
	struct tget *g;
	struct http_transport_sink sink = { NULL, tget_head, tget_body, NULL };
	char key[128], why[256], late[320];
	uint64_t t0, wait;
	int r, v;

	if (passed_over(&t->reads) ||
	    object_key(t, s->hash, b->idx, key, sizeof(key))) {
		http_stats_add(&s->st.passed, 1);
		return HTTP_TIER_PASSED;
	}
	g = malloc(sizeof(*g));
	if (!g)
		return HTTP_TIER_PASSED;
	g->s = s;
	g->b = b;
	g->got = 0;
	g->fed_ms = fed_ms;
	g->verdict = -1;
	g->plen = head_prefix(s, b->idx, b->len, g->want);
	g->hlen = g->plen + MAC_LINE;
	sink.ud = g;
	why[0] = '\0';
	http_stats_add(&s->st.requests, 1);
	wait = deadline_ms(s);
	t0 = http_conf_now_ms();
	r = t->be.get(t->be.priv, key, &sink, wait, why, sizeof(why));
	if (r == HTTP_TIER_FAILED && http_conf_cancelled(t->conf)) {
		free(g);	/* the reader left, or the mount ends */
		return HTTP_TIER_PASSED;
	}
	if (r == HTTP_TIER_FAILED && http_conf_now_ms() - t0 >= wait) {
		/* late: this block from the origin; a run of them, the
		 * shared cache passed over */
		free(g);
		http_stats_add(&s->st.late, 1);
		if (__atomic_add_fetch(&t->late_run, 1, __ATOMIC_RELAXED) >=
		    HTTP_TIER_LATE_RUN) {
			snprintf(late, sizeof(late), "%u blocks in a row not "
				 "there within %.1f s, which the origin takes "
				 "%.1f s for (%s)", HTTP_TIER_LATE_RUN,
				 (double)wait / 1000,
				 (double)__atomic_load_n(&s->origin_ms,
					__ATOMIC_RELAXED) / 1000, why);
			pass_over(t, PASS_READS, late);
		}
		return HTTP_TIER_PASSED;
	}
	if (r == HTTP_TIER_FAILED) {
		free(g);
		http_stats_add(&s->st.failed, 1);
		pass_over(t, PASS_ALL, why[0] ? why : "no answer");
		return HTTP_TIER_PASSED;
	}
	__atomic_store_n(&t->late_run, 0, __ATOMIC_RELAXED);
	answered(t, 1);
	__atomic_store_n(fed_ms, http_conf_now_ms(), __ATOMIC_RELAXED);
	if (r == HTTP_TIER_ABSENT) {
		free(g);
		http_stats_add(&s->st.misses, 1);
		return HTTP_TIER_MISS;
	}
	v = judge_block(g);
	free(g);
	if (v < 0) {
		http_stats_add(&s->st.hits, 1);
		return HTTP_TIER_HIT;
	}
	http_stats_add(&s->st.rejected[v], 1);
	if (!__atomic_exchange_n(&s->told, 1, __ATOMIC_RELAXED))
		http_conf_log(t->conf, HTTP_LOG_WARNING, "shared cache %s: "
			      "block %llu of %s is %s: refused, fetched from "
			      "the origin (.stfs/stats.json counts such "
			      "blocks)", t->be.name,
			      (unsigned long long)b->idx, s->ident,
			      reject_names[v]);
	return HTTP_TIER_REJECTED;
}

/* ---- putting blocks ------------------------------------------------------ */

static void
put_one(struct http_tier *t, struct put_item *it)
{
	struct http_tier_src *s = it->s;
	struct http_cache_block *b = it->b;
	struct hmac_sha256_ctx c;
	uint8_t mac[SHA256_DIGEST_SIZE];
	char head[HEAD_MAX], key[128], why[256] = "";
	struct iovec iov[2];
	size_t plen;
	int i, r;

	if (passed_over(&t->puts) || http_conf_cancelled(t->conf) ||
	    object_key(t, s->hash, b->idx, key, sizeof(key)) ||
	    !(plen = head_prefix(s, b->idx, b->len, head))) {
		http_stats_add(&s->st.put_dropped, 1);
		return;
	}
	c = t->keyed;
	hmac_sha256_update(&c, plen, (const uint8_t *)head);
	hmac_sha256_update(&c, b->len, (const uint8_t *)b->data);
	hmac_sha256_digest(&c, sizeof(mac), mac);
	memcpy(head + plen, "mac: ", 5);
	for (i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(head + plen + 5 + 2 * i, 3, "%02x", mac[i]);
	head[plen + MAC_LINE - 1] = '\n';
	iov[0].iov_base = head;
	iov[0].iov_len = plen + MAC_LINE;
	iov[1].iov_base = b->data;
	iov[1].iov_len = b->len;
	r = t->be.put(t->be.priv, key, iov, 2, why, sizeof(why));
	if (r == HTTP_TIER_PUT_OK) {
		http_stats_add(&s->st.puts, 1);
		http_stats_add(&s->st.put_bytes, b->len);
		answered(t, 0);
		return;
	}
	if (http_conf_cancelled(t->conf)) {
		/* the mount ends: no transfer is waited for (http_client.h) */
		http_stats_add(&s->st.put_dropped, 1);
		return;
	}
	http_stats_add(&s->st.put_failed, 1);
	pass_over(t, r == HTTP_TIER_PUT_FAILED ? PASS_ALL : PASS_PUTS,
		  why[0] ? why : "no answer");
}

/* The end of an item (lock held): its source may close. */
static void
item_done(struct http_tier *t, struct put_item *it)
{
	t->waiting -= HTTP_BLOCK_BYTES;
	it->s->pending--;
	__atomic_sub_fetch(&it->s->st.put_pending, 1, __ATOMIC_RELAXED);
	free(it);
	pthread_cond_broadcast(&t->less);
}

static void *
put_main(void *arg)
{
	struct http_tier *t = arg;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		struct put_item *it = STAILQ_FIRST(&t->queue);

		if (!it && t->stop)
			break;
		if (!it) {
			pthread_cond_wait(&t->more, &t->lock);
			continue;
		}
		STAILQ_REMOVE_HEAD(&t->queue, link);
		pthread_mutex_unlock(&t->lock);
		put_one(t, it);
		http_cache_release(t->cache, &it->b, 1, 0);
		pthread_mutex_lock(&t->lock);
		item_done(t, it);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* The putting threads of this process, started at the first block (a
 * daemon forks before it opens a source, and threads do not follow a
 * fork); 0 when one runs.  Lock held. */
static int
threads_running(struct http_tier *t)
{
	sigset_t all, old;
	unsigned i;

	if (t->pid == getpid())
		return 0;
	sigfillset(&all);	/* signals are the FUSE threads' */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	t->nthreads = 0;
	for (i = 0; i < HTTP_TIER_PUT_THREADS; i++)
		if (pthread_create(&t->threads[t->nthreads], NULL, put_main,
				   t) == 0)
			t->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!t->nthreads)
		return -1;
	t->pid = getpid();
	return 0;
}

void
http_tier_put(struct http_tier_src *s, struct http_cache_block *b)
{
	struct http_tier *t = s->t;
	struct put_item *it;

	if (passed_over(&t->puts) || !(it = malloc(sizeof(*it)))) {
		http_stats_add(&s->st.put_dropped, 1);
		return;
	}
	http_cache_ref(t->cache, b);
	it->s = s;
	it->b = b;
	pthread_mutex_lock(&t->lock);
	if (t->stop || t->waiting + HTTP_BLOCK_BYTES > HTTP_TIER_PUT_MAX_BYTES ||
	    threads_running(t)) {
		pthread_mutex_unlock(&t->lock);
		http_cache_release(t->cache, &it->b, 1, 0);
		free(it);
		http_stats_add(&s->st.put_dropped, 1);
		return;
	}
	STAILQ_INSERT_TAIL(&t->queue, it, link);
	t->waiting += HTTP_BLOCK_BYTES;
	s->pending++;
	__atomic_add_fetch(&s->st.put_pending, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&t->more);
	pthread_mutex_unlock(&t->lock);
}

void
http_tier_src_close(struct http_tier_src *s)
{
	STAILQ_HEAD(, put_item) drop = STAILQ_HEAD_INITIALIZER(drop);
	struct http_tier *t;
	struct put_item *it, *next;
	uint64_t until;

	if (!s)
		return;
	t = s->t;
	until = http_conf_now_ms() + DRAIN_MS;
	pthread_mutex_lock(&t->lock);
	while (s->pending && t->pid == getpid() &&
	       !http_conf_cancelled(t->conf) && http_conf_now_ms() < until)
		http_conf_cond_wait_until(&t->less, &t->lock,
					  http_conf_now_ms() + CANCEL_POLL_MS);
	/* too long, or the mount ends (no transfer is waited for then):
	 * what still waits is not put */
	for (it = STAILQ_FIRST(&t->queue); it; it = next) {
		next = STAILQ_NEXT(it, link);
		if (it->s != s)
			continue;
		STAILQ_REMOVE(&t->queue, it, put_item, link);
		STAILQ_INSERT_TAIL(&drop, it, link);
	}
	pthread_mutex_unlock(&t->lock);
	while ((it = STAILQ_FIRST(&drop))) {
		STAILQ_REMOVE_HEAD(&drop, link);
		http_stats_add(&s->st.put_dropped, 1);
		http_cache_release(t->cache, &it->b, 1, 0);
		pthread_mutex_lock(&t->lock);
		item_done(t, it);
		pthread_mutex_unlock(&t->lock);
	}
	/* the ones being put end within their own deadline */
	pthread_mutex_lock(&t->lock);
	while (s->pending && t->pid == getpid())
		pthread_cond_wait(&t->less, &t->lock);
	pthread_mutex_unlock(&t->lock);
	free(s->ident);
	free(s);
}
