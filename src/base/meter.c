/* meter.c - progress of long work, counted for whoever shows it
 * (meter.h). */
#include "base/meter.h"

void
meter_init(struct meter *m, void (*show)(void *arg, const struct meter *m),
	   void *arg)
{
	m->show = show;
	m->arg = arg;
	pthread_mutex_init(&m->lock, NULL);
	m->what = NULL;
	m->done = m->total = m->bytes = 0;
}

void
meter_destroy(struct meter *m)
{
	pthread_mutex_destroy(&m->lock);
}

void
meter_phase(struct meter *m, const char *what, uint64_t total)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->what = what;
	m->done = m->bytes = 0;
	m->total = total;
	m->show(m->arg, m);
	pthread_mutex_unlock(&m->lock);
}

void
meter_step(struct meter *m, uint64_t bytes)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->done++;
	m->bytes += bytes;
	m->show(m->arg, m);
	pthread_mutex_unlock(&m->lock);
}
