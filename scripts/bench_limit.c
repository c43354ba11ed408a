/* bench_limit.c - the limiting proxy of scripts/bench-load.
 *
 *   bench_limit --upstream PORT [--port PORT] [--rate BYTES_PER_S]
 *               [--latency-ms MS] [--aggregate BYTES_PER_S]
 *               [--lifetime SECONDS]
 *   bench_limit --self-test
 *
 * A TCP proxy on 127.0.0.1 in front of a server on 127.0.0.1:UPSTREAM that
 * behaves like a CDN edge or an object store seen from far away:
 *
 * - every client connection gets a token bucket of RATE bytes/s for the
 *   answers it receives, kept for the connection's whole life, so the
 *   requests of a keep-alive connection share it (nginx's limit_rate starts
 *   every request with a one-second burst, so short range requests would
 *   not be limited at all).  The bucket holds at most a few milliseconds of
 *   rate (BUCKET_MS, at least MIN_BUCKET bytes): an idle connection does not
 *   bank a burst;
 * - every request waits LATENCY before it is passed on (bytes arriving from
 *   a client on an idle connection start a request; clients do not
 *   pipeline);
 * - --aggregate caps all connections together with one more bucket.
 *
 * Prints "port N" once it listens.  Bounded: it exits after --lifetime
 * seconds (default 3600), when its parent dies, on SIGTERM or SIGINT;
 * connections idle for IDLE_S seconds are closed.  Answers move from the
 * upstream socket into a pipe and from the pipe to the client with splice(),
 * so no byte is copied through user space.
 *
 * --self-test checks the bucket's accounting with a fake clock (no sleeping,
 * no timing): a rate comes out exact across keep-alive requests, and an idle
 * connection never gets more than one bucket.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 500
#define BUCKET_MS 4.0
#define MIN_BUCKET 65536.0
#define PIPE_BYTES (1 << 20)
#define IDLE_S 120.0

/* ---- the token bucket (pure: the clock is an argument) ---- */

struct bucket {
	double rate;	/* bytes per second; 0 = unlimited */
	double cap;	/* most tokens it holds */
	double tokens;
	double t;	/* time of the last refill */
};

static void
bucket_init(struct bucket *b, double rate, double now)
{
	b->rate = rate;
	b->cap = rate * BUCKET_MS / 1000.0;
	if (b->cap < MIN_BUCKET)
		b->cap = MIN_BUCKET;
	b->tokens = b->cap;
	b->t = now;
}

static void
bucket_refill(struct bucket *b, double now)
{
	if (b->rate <= 0 || now <= b->t)
		return;
	b->tokens += (now - b->t) * b->rate;
	if (b->tokens > b->cap)
		b->tokens = b->cap;
	b->t = now;
}

/* How many bytes may go now (a huge number when unlimited). */
static double
bucket_allows(const struct bucket *b)
{
	return b->rate <= 0 ? 1e18 : b->tokens;
}

static void
bucket_take(struct bucket *b, double n)
{
	if (b->rate > 0)
		b->tokens -= n;
}

/* Seconds until the bucket holds `want` tokens (capped at cap). */
static double
bucket_wait(const struct bucket *b, double want)
{
	if (b->rate <= 0)
		return 0;
	if (want > b->cap)
		want = b->cap;
	return b->tokens >= want ? 0 : (want - b->tokens) / b->rate;
}

/* Bytes worth waking up for: half a bucket, or what is left to send. */
static double
bucket_batch(const struct bucket *b, double pending)
{
	double half = b->rate <= 0 ? pending : b->cap / 2;

	return pending < half ? pending : half;
}

/* ---- the proxy ---- */

struct conn {
	int cfd, ufd;		/* client, upstream */
	int pr, pw;		/* pipe: upstream -> client */
	size_t piped;		/* bytes in the pipe */
	int pipe_full;		/* last splice into the pipe found no room */
	int up_eof;
	char req[16384];	/* client -> upstream, held for the latency */
	size_t reqlen;
	double release;		/* when req may go */
	double active;		/* last time anything moved */
	struct bucket b;
};

static double opt_rate, opt_aggregate, opt_latency;
static struct conn *conns[MAX_CONNS];
static int nconns;
static struct bucket global;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what)
{
	fprintf(stderr, "bench_limit: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
conn_close(int i)
{
	struct conn *c = conns[i];

	close(c->cfd);
	close(c->ufd);
	close(c->pr);
	close(c->pw);
	free(c);
	conns[i] = conns[--nconns];
}

static void
sock_setup(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void
conn_accept(int lfd, int uport, double now)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(uport),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int cfd = accept(lfd, NULL, NULL);
	int ufd, p[2];
	struct conn *c;

	if (cfd < 0)
		return;
	ufd = socket(AF_INET, SOCK_STREAM, 0);
	if (ufd < 0 || connect(ufd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    pipe2(p, O_NONBLOCK) != 0 || !(c = calloc(1, sizeof *c))) {
		fprintf(stderr, "bench_limit: upstream 127.0.0.1:%d: %s\n",
			uport, strerror(errno));
		close(cfd);
		if (ufd >= 0)
			close(ufd);
		return;
	}
	fcntl(p[0], F_SETPIPE_SZ, PIPE_BYTES);
	sock_setup(cfd);
	sock_setup(ufd);
	c->cfd = cfd;
	c->ufd = ufd;
	c->pr = p[0];
	c->pw = p[1];
	c->active = now;
	bucket_init(&c->b, opt_rate, now);
	conns[nconns++] = c;
}

/* May the pipe's bytes start moving to the client now? */
static int
conn_can_send(struct conn *c)
{
	double want;

	if (c->piped == 0)
		return 0;
	want = bucket_batch(&c->b, c->piped);
	if (bucket_allows(&c->b) < want)
		return 0;
	return bucket_allows(&global) >= bucket_batch(&global, want);
}

/* Seconds until this connection has something to do: its request's latency
 * ends, or its bucket (and the aggregate one) allow the next batch. */
static double
conn_wait(struct conn *c, double now)
{
	double wait = IDLE_S, want, w, g;

	if (c->reqlen > 0 && now < c->release)
		wait = c->release - now;
	if (c->piped > 0 && !conn_can_send(c)) {
		want = bucket_batch(&c->b, c->piped);
		w = bucket_wait(&c->b, want);
		g = bucket_wait(&global, bucket_batch(&global, want));
		if (g > w)
			w = g;
		if (w < wait)
			wait = w;
	}
	return wait;
}

/* 0: keep the connection, -1: close it. */
static int
conn_client_in(struct conn *c, double now)
{
	ssize_t n = read(c->cfd, c->req + c->reqlen,
			 sizeof c->req - c->reqlen);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return -1;
	if (n > 0) {
		if (c->reqlen == 0)
			c->release = now + opt_latency;
		c->reqlen += n;
		c->active = now;
	}
	return 0;
}

static int
conn_upstream_out(struct conn *c, double now)
{
	ssize_t n = send(c->ufd, c->req, c->reqlen, MSG_NOSIGNAL);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	memmove(c->req, c->req + n, c->reqlen - n);
	c->reqlen -= n;
	c->active = now;
	return 0;
}

static int
conn_upstream_in(struct conn *c, double now)
{
	ssize_t n = splice(c->ufd, NULL, c->pw, NULL, PIPE_BYTES - c->piped,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

	if (n == 0) {
		c->up_eof = 1;
		return 0;
	}
	if (n < 0) {
		if (errno == EAGAIN) {
			/* readable but the pipe has no room: wait for a drain */
			if (c->piped > 0)
				c->pipe_full = 1;
			return 0;
		}
		return errno == EINTR ? 0 : -1;
	}
	c->piped += n;
	c->active = now;
	return 0;
}

static int
conn_client_out(struct conn *c, double now)
{
	double allow = bucket_allows(&c->b), g = bucket_allows(&global);
	size_t len = c->piped;
	ssize_t n;

	if (g < allow)
		allow = g;
	if (allow < (double)len)
		len = (size_t)allow;
	if (len == 0)
		return 0;
	n = splice(c->pr, NULL, c->cfd, NULL, len,
		   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	bucket_take(&c->b, n);
	bucket_take(&global, n);
	c->piped -= n;
	c->pipe_full = 0;
	c->active = now;
	return 0;
}

static void
serve(int lfd, int uport, double lifetime)
{
	static struct pollfd fds[1 + 2 * MAX_CONNS];
	double start = now_s(), now, wait;
	unsigned rot = 0;
	int i, k, n;

	for (;;) {
		now = now_s();
		if (now - start > lifetime)
			return;
		bucket_refill(&global, now);
		fds[0].fd = lfd;
		fds[0].events = nconns < MAX_CONNS ? POLLIN : 0;
		wait = lifetime - (now - start);
		for (i = 0; i < nconns; i++) {
			struct conn *c = conns[i];
			short ce = 0, ue = 0;

			bucket_refill(&c->b, now);
			if (c->reqlen < sizeof c->req)
				ce |= POLLIN;
			if (conn_can_send(c))
				ce |= POLLOUT;
			if (conn_wait(c, now) < wait)
				wait = conn_wait(c, now);
			if (!c->up_eof && !c->pipe_full && c->piped < PIPE_BYTES)
				ue |= POLLIN;
			if (c->reqlen > 0 && now >= c->release)
				ue |= POLLOUT;
			fds[1 + 2 * i] = (struct pollfd){ c->cfd, ce, 0 };
			/* no events: leave it out (a hang-up would wake us
			 * in a loop while the pipe waits for the bucket) */
			fds[2 + 2 * i] = (struct pollfd){ ue ? c->ufd : -1, ue,
							  0 };
		}
		if (wait < 50e-6)
			wait = 50e-6;
		n = ppoll(fds, 1 + 2 * nconns, &(struct timespec){
			(time_t)wait, (long)((wait - floor(wait)) * 1e9) }, NULL);
		if (n < 0 && errno != EINTR)
			die("poll");
		now = now_s();
		bucket_refill(&global, now);
		/* start with another connection each round: fair shares of the
		 * aggregate bucket */
		k = nconns;
		rot++;
		for (int j = k - 1; j >= 0; j--) {
			i = (int)((j + rot) % (unsigned)k);
			if (i >= nconns)
				continue;
			struct conn *c = conns[i];
			short cr = fds[1 + 2 * i].revents;
			short ur = fds[2 + 2 * i].revents;
			int bad = 0;

			if (fds[1 + 2 * i].fd != c->cfd)
				continue;	/* moved by a close this round */
			bucket_refill(&c->b, now);
			if (cr & (POLLIN | POLLHUP | POLLERR))
				bad |= conn_client_in(c, now);
			if (!bad && (ur & POLLOUT))
				bad |= conn_upstream_out(c, now);
			if (!bad && (ur & (POLLIN | POLLHUP | POLLERR)))
				bad |= conn_upstream_in(c, now);
			if (!bad && (cr & POLLOUT))
				bad |= conn_client_out(c, now);
			if (bad || (c->up_eof && c->piped == 0) ||
			    now - c->active > IDLE_S)
				conn_close(i);
		}
		if (fds[0].revents & POLLIN)
			conn_accept(lfd, uport, now);
	}
}

/* ---- self-test: the bucket's accounting on a fake clock ---- */

static int failures;

static void
check(int ok, const char *what, double got, double want)
{
	if (!ok) {
		fprintf(stderr, "bench_limit: self-test: %s: got %.9g, want %.9g\n",
			what, got, want);
		failures++;
	}
}

/* Serve `nreq` answers of `size` bytes over one keep-alive connection the
 * way serve() does, the fake clock jumping to each wake-up; returns the
 * seconds the transfers took (latency not counted). */
static double
fake_transfers(struct bucket *b, int nreq, double size, double latency,
	       double *t)
{
	double busy = 0;

	for (int r = 0; r < nreq; r++) {
		double left = size, t0;

		*t += latency;		/* the request waits; the bucket refills */
		bucket_refill(b, *t);
		t0 = *t;
		while (left > 0) {
			double want = bucket_batch(b, left), n;

			*t += bucket_wait(b, want);
			bucket_refill(b, *t);
			/* whole bytes, as splice() moves them */
			n = floor(bucket_allows(b) < left ? bucket_allows(b)
							  : left);
			if (n < 1) {
				*t += 50e-6;	/* serve()'s shortest wait */
				continue;
			}
			bucket_take(b, n);
			left -= n;
		}
		busy += *t - t0;
	}
	return busy;
}

static int
self_test(void)
{
	struct bucket b;
	double t = 100.0, busy, want;

	/* 8 MB/s, 100 answers of 1 MiB with 20 ms between them: after its
	 * first bucket each answer runs at exactly the rate */
	bucket_init(&b, 8e6, t);
	busy = fake_transfers(&b, 100, 1048576, 0.020, &t);
	want = 100 * (1048576 - b.cap) / 8e6;
	check(fabs(busy - want) < 1e-3 * want, "8 MB/s, 100 x 1 MiB", busy, want);

	/* short answers (64 KiB, as a page fault asks) on one connection:
	 * limited too, not one free burst per request */
	bucket_init(&b, 32e6, t);
	busy = fake_transfers(&b, 1000, 4 * MIN_BUCKET, 0, &t);
	want = (1000 * 4 * MIN_BUCKET - b.cap) / 32e6;
	check(fabs(busy - want) < 1e-3 * want, "32 MB/s, 1000 x 256 KiB", busy, want);

	/* ten idle seconds bank one bucket, not ten seconds of rate */
	bucket_init(&b, 32e6, t);
	bucket_take(&b, b.cap);
	bucket_refill(&b, t + 10);
	check(b.tokens == b.cap, "idle refill", b.tokens, b.cap);
	check(b.cap == 32e6 * BUCKET_MS / 1000, "bucket size", b.cap,
	      32e6 * BUCKET_MS / 1000);

	/* unlimited: never waits */
	bucket_init(&b, 0, t);
	check(bucket_wait(&b, 1e9) == 0, "unlimited", bucket_wait(&b, 1e9), 0);
	if (failures == 0)
		printf("bench_limit: self-test passed\n");
	return failures ? 1 : 0;
}

static double
num_arg(const char *name, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0) || v > 1e12) {
		fprintf(stderr, "bench_limit: %s: not a number >= 0: %s\n",
			name, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof a;
	double lifetime = 3600;
	int uport = 0, port = 0, lfd, one = 1;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--self-test"))
			return self_test();
		if (!v) {
			fprintf(stderr, "bench_limit: %s needs a value\n", o);
			return 2;
		}
		i++;
		if (!strcmp(o, "--upstream"))
			uport = (int)num_arg(o, v);
		else if (!strcmp(o, "--port"))
			port = (int)num_arg(o, v);
		else if (!strcmp(o, "--rate"))
			opt_rate = num_arg(o, v);
		else if (!strcmp(o, "--latency-ms"))
			opt_latency = num_arg(o, v) / 1000.0;
		else if (!strcmp(o, "--aggregate"))
			opt_aggregate = num_arg(o, v);
		else if (!strcmp(o, "--lifetime"))
			lifetime = num_arg(o, v);
		else {
			fprintf(stderr, "bench_limit: unknown option %s\n", o);
			return 2;
		}
	}
	if (uport <= 0 || uport > 65535 || port > 65535) {
		fprintf(stderr, "bench_limit: --upstream PORT is required\n");
		return 2;
	}
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		return 1;	/* the parent is already gone */
	signal(SIGPIPE, SIG_IGN);
	bucket_init(&global, opt_aggregate, now_s());
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	a.sin_port = htons(port);
	if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    listen(lfd, 128) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0)
		die("listen on 127.0.0.1");
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	serve(lfd, uport, lifetime);
	return 0;
}
