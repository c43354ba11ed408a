/* msglog.c - the last messages of a process (see msglog.h). */
#include "base/msglog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/text.h"

struct msglog {
	pthread_mutex_t lock;
	char *text;		/* whole lines, oldest first */
	size_t len, cap;
	struct timespec last;	/* the last message's time */
	char line[MSGLOG_LINE_MAX + 64];	/* the one being added */
};

struct msglog *
msglog_new(size_t bytes)
{
	struct msglog *l = calloc(1, sizeof(*l));

	if (bytes < MSGLOG_LINE_MAX + 64)
		bytes = MSGLOG_LINE_MAX + 64;
	if (l)
		l->text = malloc(bytes);
	if (!l || !l->text) {
		free(l);
		return NULL;
	}
	l->cap = bytes;
	pthread_mutex_init(&l->lock, NULL);
	clock_gettime(CLOCK_REALTIME, &l->last);
	return l;
}

void
msglog_free(struct msglog *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->text);
	free(l);
}

static const char *
prio_word(int prio)
{
	static const char *const words[] = {
		"emergency", "alert", "critical", "error", "warning",
		"notice", "info", "debug",
	};

	return prio >= 0 && prio <= 7 ? words[prio] : "info";
}

/* Drop whole lines from the front until n more bytes fit (lock held). */
static void
make_room(struct msglog *l, size_t n)
{
	size_t drop;
	char *nl;

	if (l->len + n <= l->cap)
		return;
	drop = l->len + n - l->cap;
	nl = memchr(l->text + drop - 1, '\n', l->len - (drop - 1));
	drop = nl ? (size_t)(nl - l->text) + 1 : l->len;
	memmove(l->text, l->text + drop, l->len - drop);
	l->len -= drop;
}

void
msglog_vadd(struct msglog *l, int prio, const char *fmt, va_list ap)
{
	struct timespec now;
	size_t n, i, head;
	int k;

	if (!l)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&l->lock);
	head = text_time_iso(l->line, sizeof(l->line), &now);
	k = snprintf(l->line + head, sizeof(l->line) - head, " %s: ",
		     prio_word(prio));
	head += k > 0 ? (size_t)k : 0;
	/* the message, cut at MSGLOG_LINE_MAX bytes */
	k = vsnprintf(l->line + head, MSGLOG_LINE_MAX + 1, fmt, ap);
	n = head + (k < 0 ? 0 : (size_t)k > MSGLOG_LINE_MAX ?
		    MSGLOG_LINE_MAX : (size_t)k);
	while (n > head && l->line[n - 1] == '\n')
		n--;
	for (i = head; i < n; i++)
		if (l->line[i] == '\n' || l->line[i] == '\r')
			l->line[i] = ' ';
	l->line[n++] = '\n';
	make_room(l, n);
	memcpy(l->text + l->len, l->line, n);
	l->len += n;
	l->last = now;
	pthread_mutex_unlock(&l->lock);
}

static void addf(struct msglog *l, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
addf(struct msglog *l, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msglog_vadd(l, prio, fmt, ap);
	va_end(ap);
}

void
msglog_add(struct msglog *l, int prio, const char *msg)
{
	addf(l, prio, "%s", msg);
}

int
msglog_render(struct msglog *l, struct buf *out)
{
	int rc;

	pthread_mutex_lock(&l->lock);
	rc = buf_add(out, l->text, l->len);
	pthread_mutex_unlock(&l->lock);
	return rc;
}

size_t
msglog_size(struct msglog *l, struct timespec *last)
{
	size_t n;

	pthread_mutex_lock(&l->lock);
	n = l->len;
	if (last)
		*last = l->last;
	pthread_mutex_unlock(&l->lock);
	return n;
}
