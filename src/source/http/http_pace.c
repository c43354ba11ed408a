/* http_pace.c - the number of requests in flight, found by measuring. */
#include "source/http/http_pace.h"

#define BUCKET_MS	100	/* a throughput cap allows this much burst */

void
http_pace_init(struct http_pace *p, unsigned cap, uint64_t max_bps,
	       uint64_t now)
{
	*p = (struct http_pace){ 0 };
	p->cap = cap && cap < PACE_MAX ? cap : PACE_MAX;
	p->limit = PACE_START < p->cap ? PACE_START : p->cap;
	p->max_bps = max_bps;
	p->tokens = (double)max_bps * BUCKET_MS / 1000;
	p->t_tokens = now;
	p->t0 = now;
}

static void
refill(struct http_pace *p, uint64_t now)
{
	double most = (double)p->max_bps * BUCKET_MS / 1000;

	if (now > p->t_tokens) {
		p->tokens += (double)(now - p->t_tokens) * p->max_bps / 1000;
		p->t_tokens = now;
	}
	if (p->tokens > most)
		p->tokens = most;
}

int
http_pace_admit(struct http_pace *p, unsigned running, uint64_t bytes,
		uint64_t now, uint64_t *wait_ms)
{
	*wait_ms = 0;
	if (running >= p->limit) {
		p->starved = 1;
		return 0;
	}
	if (p->max_bps) {
		refill(p, now);
		if (p->tokens < 0) {
			*wait_ms = (uint64_t)(-p->tokens * 1000 / p->max_bps) +
				   1;
			return 0;
		}
		p->tokens -= (double)bytes;
	}
	return 1;
}

void
http_pace_waiting(struct http_pace *p, unsigned running)
{
	if (running >= p->limit)
		p->starved = 1;
}

void
http_pace_demand(struct http_pace *p, uint64_t bytes, uint64_t now)
{
	if (p->max_bps) {
		refill(p, now);
		p->tokens -= (double)bytes;
	}
}

static void
new_sample(struct http_pace *p, uint64_t rx, uint64_t now)
{
	p->rx0 = rx;
	p->t0 = now;
	p->bytes = 0;
	p->xfer_ms = 0;
	p->done = 0;
	p->starved = 0;
}

/* One step up from the current level: doubling while each step pays,
 * a quarter more when probing from a hold. */
static void
step_up(struct http_pace *p, uint64_t bps)
{
	unsigned next = p->holding ? p->limit + (p->limit + 3) / 4 :
			p->limit * 2;

	if (p->max_bps && bps >= p->max_bps / 10 * 9)
		return;		/* the cap is reached: more cannot help */
	if (next > p->cap)
		next = p->cap;
	p->prev_limit = p->limit;
	p->limit = next;
}

static void
hold(struct http_pace *p, uint64_t now)
{
	p->holding = 1;
	p->probing = 0;
	p->hold_rate = 0;	/* measured at the next sample */
	p->probe_at = now + PACE_PROBE_MS;
}

/* Half as many connections; the next sample is of the requests begun at
 * the new level (those in flight now were begun at the old one). */
static void
halve(struct http_pace *p)
{
	p->prev_limit = p->limit;
	p->limit /= 2;
	p->settle = p->prev_limit;
}

/* A sample while halving (see http_pace.h; the first one, desc_bps 0,
 * is the full link's reference): on while the link stays as full, else
 * back one step; hold at the last level that kept it full. */
static void
descend(struct http_pace *p, uint64_t bps, uint64_t now)
{
	int full = bps * 100 >= p->desc_bps * (100 - PACE_PROBE_PCT);

	if (full && bps > p->desc_bps)
		p->desc_bps = bps;
	if (full && p->limit / 2 >= PACE_LEAST) {
		halve(p);
		return;
	}
	if (!full)
		p->limit = p->prev_limit;
	p->descending = 0;
	hold(p, now);
}

/* The end of a sample in which work waited for a connection, whose
 * requests ran at rate bytes/s each once their first byte came, bps in
 * all.  While each connection still gets what one got at the start, the
 * link is not what limits: more connections, more throughput.  When a
 * doubling makes them get less, they share a full link: halfway back,
 * hold, and (from the hold's first sample, whose throughput is the
 * link's) halve while the link stays as full.  A hold never lowers the
 * level on its own after that (a loaded machine makes rates noisy; a
 * level found once stays); it probes a quarter more now and then, kept
 * when the connections lose no rate by it. */
static void
decide(struct http_pace *p, uint64_t bps, uint64_t rate, uint64_t now)
{
	uint64_t ref = p->holding ? p->hold_rate : p->best_rate;
	int shared = ref && rate * 100 < ref * (100 - (p->holding ?
						     PACE_PROBE_PCT :
						     PACE_SHARE_PCT));

	if (p->descending) {
		descend(p, bps, now);
		return;
	}
	if (!p->holding || p->probing) {
		if (shared) {
			/* a doubling goes halfway back (too few connections
			 * cost more than a few too many), a probe all the
			 * way */
			int doubled = !p->probing;

			if (p->prev_limit && p->prev_limit < p->limit)
				p->limit = p->probing ? p->prev_limit :
					   (p->prev_limit + p->limit) / 2;
			hold(p, now);
			p->descending = doubled;
			p->desc_bps = 0;
			return;
		}
		if (!p->holding) {
			if (rate > p->best_rate)
				p->best_rate = rate;
			step_up(p, bps);
			return;
		}
		p->probing = 0;		/* the probe's level stays */
		p->probe_at = now + PACE_PROBE_MS;
	}
	p->hold_rate = rate;
	if (now >= p->probe_at && p->limit < p->cap) {
		unsigned was = p->limit;

		step_up(p, bps);
		p->probing = p->limit > was;
	}
}

void
http_pace_done(struct http_pace *p, uint64_t bytes, uint64_t xfer_ms,
	       uint64_t rx, uint64_t now)
{
	uint64_t ms;

	if (p->settle) {
		if (--p->settle == 0)
			new_sample(p, rx, now);
		return;
	}
	p->bytes += bytes;
	p->xfer_ms += xfer_ms ? xfer_ms : 1;
	p->done++;
	ms = now - p->t0;
	if (ms < PACE_SAMPLE_MS || p->done < p->limit)
		return;
	if (p->starved)
		decide(p, (rx >= p->rx0 ? rx - p->rx0 : p->bytes) * 1000 / ms,
		       p->bytes * 1000 / p->xfer_ms, now);
	new_sample(p, rx, now);
}

void
http_pace_conn_sample(struct http_pace_conn *c, uint64_t bytes,
		      uint64_t first_ms, uint64_t total_ms)
{
	uint64_t rate;

	if (first_ms == 0)
		first_ms = 1;
	if (total_ms <= first_ms || bytes == 0)
		return;		/* too quick to say anything */
	rate = bytes * 1000 / (total_ms - first_ms);
	if (c->rate == 0) {
		c->rate = rate;
		c->first_ms = first_ms;
		return;
	}
	c->rate = (c->rate * 3 + rate) / 4;
	c->first_ms = (c->first_ms * 3 + first_ms) / 4;
}

unsigned
http_pace_part(const struct http_pace_conn *c, unsigned limit,
	       uint64_t window_blocks, uint64_t block_bytes)
{
	uint64_t want = PACE_PART_START;

	if (c->rate && c->first_ms)
		want = (c->rate * c->first_ms / 1000 * PACE_LAT_FACTOR +
			block_bytes / 2) / block_bytes;
	if (want < PACE_PART_START)
		want = PACE_PART_START;
	/* every allowed connection gets a part of the window */
	if (limit && window_blocks / limit < want)
		want = window_blocks / limit;
	if (want < PACE_PART_MIN)
		want = PACE_PART_MIN;
	if (want > PACE_PART_MAX)
		want = PACE_PART_MAX;
	return (unsigned)want;
}
