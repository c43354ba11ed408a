/* meter.h - how far a long piece of work has got, told by the layer that
 * does it to whoever shows it.
 *
 * Opening a model of many files over a slow link takes seconds.  The
 * front end (src/cli/progress.h) makes a meter with its show callback and
 * passes it down (catalog_opts, then source_opener); the code that opens
 * many files says what it is waiting for and how many there are
 * (meter_phase), then counts each one done with the bytes it read
 * (meter_step).  Nothing here prints or decides when to: show is called
 * after every change and the front end draws what and when it likes.
 *
 * Steps may come from several threads (files opened concurrently): the
 * meter's lock hands show one state at a time.  A NULL meter is fine
 * everywhere: nobody is told.
 */
#ifndef STFS_METER_H
#define STFS_METER_H

#include <pthread.h>
#include <stdint.h>

struct meter {
	/* Called with the meter locked after each change: read the fields
	 * below, do not call back into the meter. */
	void (*show)(void *arg, const struct meter *m);
	void *arg;
	pthread_mutex_t lock;
	const char *what;	/* static text naming the items counted, e.g.
				   "shards' headers read"; NULL before the
				   first phase */
	uint64_t done, total;	/* items of this phase */
	uint64_t bytes;		/* bytes those items read (0: not known) */
};

void meter_init(struct meter *m, void (*show)(void *arg,
		const struct meter *m), void *arg);
void meter_destroy(struct meter *m);

/* A new phase: total items of what, none done yet. */
void meter_phase(struct meter *m, const char *what, uint64_t total);

/* One more item of the phase done, having read bytes. */
void meter_step(struct meter *m, uint64_t bytes);

#endif
