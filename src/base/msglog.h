/* msglog.h - the last messages of a process, with their times.
 *
 * A daemon's messages go to syslog, and where there is none (a container
 * without /dev/log) they went nowhere: a reader saw EIO and nothing said
 * why.  So the front end also keeps them here, in a ring of text of a
 * fixed size (the oldest lines go first), and the mount shows it as
 * MNT/.stfs/log (view_stfs.c).  One line per message:
 *
 *   2026-11-29T07:31:57.123+0000 error: MESSAGE
 *
 * Thread-safe; nothing is allocated after msglog_new(), so a message
 * about a failed allocation still finds room.
 */
#ifndef STFS_MSGLOG_H
#define STFS_MSGLOG_H

#include <stdarg.h>
#include <stddef.h>
#include <time.h>

struct buf;
struct msglog;

#define MSGLOG_BYTES	(64u << 10)	/* the ring a daemon keeps */
#define MSGLOG_LINE_MAX	1024		/* a longer message is cut */

/* A ring of bytes bytes of text (at least MSGLOG_LINE_MAX); NULL without
 * memory. */
struct msglog *msglog_new(size_t bytes);
void msglog_free(struct msglog *l);

/* One message of syslog priority prio (0-7), stamped now.  Newlines in
 * it become spaces (a trailing one is dropped).  NULL-safe. */
void msglog_add(struct msglog *l, int prio, const char *msg);
void msglog_vadd(struct msglog *l, int prio, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* The lines, oldest first, appended to out: 0, or -1 without memory. */
int msglog_render(struct msglog *l, struct buf *out);

/* The bytes msglog_render() appends now; *last (may be NULL) gets the
 * time of the last message (the ring's creation before any). */
size_t msglog_size(struct msglog *l, struct timespec *last);

#endif
