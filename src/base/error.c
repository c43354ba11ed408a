/* error.c - error names and the one-line error record. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const err_names[ERR__COUNT] = {
	[ERR_OK] = "Ok",
	[ERR_HEADER_TOO_SMALL] = "HeaderTooSmall",
	[ERR_HEADER_TOO_LARGE] = "HeaderTooLarge",
	[ERR_INVALID_HEADER_LENGTH] = "InvalidHeaderLength",
	[ERR_INVALID_HEADER] = "InvalidHeader",
	[ERR_INVALID_HEADER_DESERIALIZATION] = "InvalidHeaderDeserialization",
	[ERR_INVALID_OFFSET] = "InvalidOffset",
	[ERR_VALIDATION_OVERFLOW] = "ValidationOverflow",
	[ERR_MISALIGNED_SLICE] = "MisalignedSlice",
	[ERR_TENSOR_INVALID_INFO] = "TensorInvalidInfo",
	[ERR_METADATA_INCOMPLETE_BUFFER] = "MetadataIncompleteBuffer",
	[ERR_IO] = "IoError",
	[ERR_NO_MEMORY] = "OutOfMemory",
	[ERR_INVALID_INDEX] = "InvalidIndex",
	[ERR_USAGE] = "UsageError",
	[ERR_INVALID_PICKLE] = "InvalidPickle",
	[ERR_INVALID_CHECKPOINT] = "InvalidCheckpoint",
	[ERR_INVALID_GGUF] = "InvalidGguf",
};

const char *
err_name(enum err_code code)
{
	if ((unsigned)code >= ERR__COUNT || !err_names[code])
		return "UnknownError";
	return err_names[code];
}

static void
record(struct err *e, enum err_code code, const char *fmt, va_list ap)
{
	e->code = code;
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
}

int
err_set(struct err *e, enum err_code code, const char *fmt, ...)
{
	va_list ap;

	if (!e || e->code != ERR_OK)
		return -1;
	va_start(ap, fmt);
	record(e, code, fmt, ap);
	va_end(ap);
	return -1;
}

static void
name_where(struct err *e, const char *where)
{
	const char *host = where ? strstr(where, "://") : NULL;

	if (!e || e->where[0] || !where)
		return;
	if (host) {
		/* A URL: its query (presigned signatures) and user info
		 * never go into messages. */
		const char *at;
		size_t n = strcspn(where, "?#");

		host += 3;
		at = memchr(host, '@', strcspn(host, "/?#"));
		if (at)
			snprintf(e->where, sizeof(e->where), "%.*s%.*s",
				 (int)(host - where), where,
				 (int)(n - (size_t)(at + 1 - where)), at + 1);
		else
			snprintf(e->where, sizeof(e->where), "%.*s", (int)n,
				 where);
		return;
	}
	snprintf(e->where, sizeof(e->where), "%s", where);
}

int
err_at(struct err *e, const char *where)
{
	if (e && e->code != ERR_OK && !e->where[0] && where)
		name_where(e, where);
	return -1;
}

int
err_replace(struct err *e, enum err_code code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	record(e, code, fmt, ap);
	va_end(ap);
	return -1;
}

void
err_clear(struct err *e)
{
	if (e)
		memset(e, 0, sizeof(*e));
}

char *
err_quote(char *buf, size_t cap, const char *name, size_t len)
{
	/* Room for the closing quote, an ellipsis and the NUL. */
	size_t o = 0, i;

	if (cap < 16) {
		if (cap)
			buf[0] = '\0';
		return buf;
	}
	buf[o++] = '`';
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (o + 14 >= cap) {	/* room: 2 escapes, "...", "`", NUL */
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f || c == '`' || c == '\\' ||
		    /* C1 controls (UTF-8 C2 80..9F) drive terminals too */
		    (c == 0xc2 && i + 1 < len &&
		     (unsigned char)name[i + 1] >= 0x80 &&
		     (unsigned char)name[i + 1] <= 0x9f)) {
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
			if (c == 0xc2)
				o += (size_t)snprintf(buf + o, cap - o, "\\x%02x",
						      (unsigned char)name[++i]);
		} else
			buf[o++] = (char)c;
	}
	buf[o++] = '`';
	buf[o] = '\0';
	return buf;
}

void
err_print(const char *prog, const struct err *e)
{
	/* One line: "prog: where: Name: detail". */
	fprintf(stderr, "%s%s%s%s%s%s%s\n", prog ? prog : "", prog ? ": " : "",
		e->where, e->where[0] ? ": " : "", err_name(e->code),
		e->detail[0] ? ": " : "", e->detail);
}

int
err_exit_status(enum err_code code)
{
	switch (code) {
	case ERR_IO:
	case ERR_USAGE:
	case ERR_NO_MEMORY:
		return 2;
	default:
		return 1;
	}
}
