/* test_header.c - header_parse()/header_read() and container_open(): one
 * accepted and one
 * refused case for every rule of the reference reader, the error kinds and
 * their order, the index, and the two real files.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "format/container.h"
#include "format/safetensors/header.h"
#include "suites.h"

#define DESER ERR_INVALID_HEADER_DESERIALIZATION
#define U64MAX "18446744073709551615"

/* "name": {"dtype": D, "shape": S, "data_offsets": [B, E]} */
#define T(name, d, shape, b, e) \
	"\"" name "\":{\"dtype\":\"" d "\",\"shape\":" shape \
	",\"data_offsets\":[" #b "," #e "]}"

/* ---- helpers ---------------------------------------------------------- */


/* Tensor by exact name, or NULL: a plain scan (stfs itself looks names up
 * in layout.c's and shards.c's tables, not in the header). */
static const struct tensor *
find_tensor(const struct header *h, const char *name, size_t len)
{
	for (size_t i = 0; h && i < h->ntensors; i++)
		if (h->tensors[i].name_len == len &&
		    memcmp(h->tensors[i].name, name, len) == 0)
			return &h->tensors[i];
	return NULL;
}

static struct header *
parse(const char *json, size_t len, uint64_t data_len, struct err *e)
{
	struct header *h = (struct header *)1;
	int rc;

	err_clear(e);
	rc = header_parse(json, len, 8 + len + data_len, &h, e);
	if (rc == 0) {
		ck_assert_ptr_nonnull(h);
		ck_assert_int_eq(e->code, ERR_OK);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_ptr_null(h);
		ck_assert_int_ne(e->code, ERR_OK);
		ck_assert_msg(e->detail[0], "error without a detail sentence");
	}
	return h;
}

static struct header *
ok_n(const char *json, size_t len, uint64_t data_len, int line)
{
	struct err e;
	struct header *h = parse(json, len, data_len, &e);

	ck_assert_msg(h, "line %d: refused %.*s: %s: %s", line,
		      (int)(len < 300 ? len : 300), json, err_name(e.code),
		      e.detail);
	return h;
}

static void
bad_n(const char *json, size_t len, uint64_t data_len, enum err_code want,
      const char *substr, int line)
{
	struct err e;
	struct header *h = parse(json, len, data_len, &e);

	container_free(h);
	ck_assert_msg(!h, "line %d: accepted %.*s", line,
		      (int)(len < 300 ? len : 300), json);
	ck_assert_msg(e.code == want, "line %d: %.*s: got %s (%s), want %s",
		      line, (int)(len < 300 ? len : 300), json,
		      err_name(e.code), e.detail, err_name(want));
	if (substr)
		ck_assert_msg(strstr(e.detail, substr), "line %d: detail \"%s\" "
			      "lacks \"%s\"", line, e.detail, substr);
}

#define OK(json, data) \
	container_free(ok_n(json, sizeof(json) - 1, data, __LINE__))
#define PARSE(json, data) ok_n(json, sizeof(json) - 1, data, __LINE__)
#define BAD(json, data, code) \
	bad_n(json, sizeof(json) - 1, data, code, NULL, __LINE__)
#define BADM(json, data, code, msg) \
	bad_n(json, sizeof(json) - 1, data, code, msg, __LINE__)

/* printf into a fresh string (tests free it) */
static char * __attribute__((format(printf, 1, 2)))
fmt(const char *f, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	ck_assert_int_ge(n, 0);
	return s;
}

static void
ok_s(char *json, uint64_t data_len, int line)
{
	container_free(ok_n(json, strlen(json), data_len, line));
	free(json);
}

static void
bad_s(char *json, uint64_t data_len, enum err_code want, const char *msg,
      int line)
{
	bad_n(json, strlen(json), data_len, want, msg, line);
	free(json);
}

#define OKS(json, data) ok_s(json, data, __LINE__)
#define BADS(json, data, code, msg) bad_s(json, data, code, msg, __LINE__)

/* A one-tensor header whose entry for "a" is the given JSON value. */
#define ENTRY(v) fmt("{\"a\":%s}", v)
/* ... whose shape is the given JSON value (U8, offsets [0,1]). */
#define SHAPE(v) fmt("{\"a\":{\"dtype\":\"U8\",\"shape\":%s," \
		     "\"data_offsets\":[0,1]}}", v)
/* ... whose data_offsets is the given JSON value (U8 [1]). */
#define OFFS(v) fmt("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]," \
		    "\"data_offsets\":%s}}", v)
/* ... whose dtype is the given JSON value (shape [1], offsets [0,1]). */
#define DTYPE(v) fmt("{\"a\":{\"dtype\":%s,\"shape\":[1]," \
		     "\"data_offsets\":[0,1]}}", v)

/* ---- lengths (reference checks 1-3) ------------------------------------ */

START_TEST(test_lengths_parse)
{
	struct header *h = NULL;
	struct err e = { 0 };

	ck_assert_int_eq(header_parse("{}", 2, 7, &h, &e), -1);
	ck_assert_int_eq(e.code, ERR_HEADER_TOO_SMALL);
	err_clear(&e);
	ck_assert_int_eq(header_parse("{}", 2, 9, &h, &e), -1);
	ck_assert_int_eq(e.code, ERR_INVALID_HEADER_LENGTH);
	err_clear(&e);
	ck_assert_int_eq(header_parse("{}", 2, 10, &h, &e), 0);
	container_free(h);
}
END_TEST

/* n == 100,000,000 passes the length check (here: "{}" and spaces). */
START_TEST(test_max_length_accepted)
{
	size_t n = 100000000;
	char *buf = malloc(n);
	struct header *h = NULL;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(buf);
	memset(buf, ' ', n);
	buf[0] = '{';
	buf[1] = '}';
	ck_assert_msg(header_parse(buf, n, 8 + n, &h, &e) == 0, "%s", e.detail);
	ck_assert_uint_eq(h->header_len, n);
	ck_assert_uint_eq(h->data_start, 8 + n);
	ck_assert_uint_eq(h->ntensors, 0);
	container_free(h);
	free(buf);
}
END_TEST

/* ---- header_read on files ---------------------------------------------- */

static char tmpdir[64];

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/stfs-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
tmp_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* A file of prefix(n) + body, then size extended (sparse) to total. */
static char *
write_file(const char *name, uint64_t n, const void *body, size_t blen,
	   uint64_t total)
{
	char *path = fmt("%s/%s", tmpdir, name);
	unsigned char prefix[8];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 8; i++)
		prefix[i] = (unsigned char)(n >> (8 * i));
	ck_assert_int_eq(write(fd, prefix, 8), 8);
	if (blen)
		ck_assert_int_eq(write(fd, body, blen), (ssize_t)blen);
	ck_assert_int_eq(ftruncate(fd, (off_t)total), 0);
	close(fd);
	return path;
}

/* The test's own reader over a descriptor: the format layer reads
 * through format/reader.h and knows no sources. */
static int
fd_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(*(int *)ctx, buf, len, (off_t)off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Read path's table with read (header_read or container_open). */
static enum err_code
read_with(int (*read)(const struct reader *, struct header **, struct err *),
	  const char *path, struct header **h, struct err *e)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct reader r = { fd_pread, &fd, 0, path };

	err_clear(e);
	*h = NULL;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	r.size = (uint64_t)st.st_size;
	if (read(&r, h, e) == 0)
		ck_assert_ptr_nonnull(*h);
	else
		ck_assert_ptr_null(*h);
	close(fd);
	return e->code;
}

static enum err_code
read_file(const char *path, struct header **h, struct err *e)
{
	return read_with(header_read, path, h, e);
}

START_TEST(test_read_files)
{
	static const char hdr[] = "{" T("w", "F32", "[2]", 0, 8) "}  ";
	struct header *h;
	struct err e;
	char *p;
	int fd;

	/* a 5-byte file */
	p = fmt("%s/small", tmpdir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(write(fd, "12345", 5), 5);
	close(fd);
	ck_assert_int_eq(read_file(p, &h, &e), ERR_HEADER_TOO_SMALL);
	ck_assert_msg(e.where[0], "where is not set");
	free(p);

	/* n = 100,000,001 (the file is long enough, sparse) */
	p = write_file("toolarge", 100000001, NULL, 0, 8 + 100000001ULL);
	ck_assert_int_eq(read_file(p, &h, &e), ERR_HEADER_TOO_LARGE);
	free(p);

	/* n = 2^64 - 1 */
	p = write_file("huge", UINT64_MAX, NULL, 0, 64);
	ck_assert_int_eq(read_file(p, &h, &e), ERR_HEADER_TOO_LARGE);
	free(p);

	/* n = 100,000,000 passes the length checks: the zeros then fail as
	 * JSON, not as a length */
	p = write_file("maxlen", 100000000, NULL, 0, 8 + 100000000ULL);
	ck_assert_int_eq(read_file(p, &h, &e), DESER);
	free(p);

	/* n larger than what follows */
	p = write_file("short", 100, "{}", 2, 50);
	ck_assert_int_eq(read_file(p, &h, &e), ERR_INVALID_HEADER_LENGTH);
	free(p);

	/* n = 0: an empty header is not JSON */
	p = write_file("empty", 0, NULL, 0, 8);
	ck_assert_int_eq(read_file(p, &h, &e), DESER);
	free(p);

	/* a good file, and the same file with one extra byte */
	p = write_file("good", sizeof(hdr) - 1, hdr, sizeof(hdr) - 1,
		       8 + sizeof(hdr) - 1 + 8);
	ck_assert_int_eq(read_file(p, &h, &e), ERR_OK);
	ck_assert_uint_eq(h->ntensors, 1);
	ck_assert_uint_eq(h->file_size, 8 + sizeof(hdr) - 1 + 8);
	ck_assert_uint_eq(h->data_start, 8 + sizeof(hdr) - 1);
	ck_assert_uint_eq(h->data_len, 8);
	container_free(h);
	free(p);
	p = write_file("extra", sizeof(hdr) - 1, hdr, sizeof(hdr) - 1,
		       8 + sizeof(hdr) - 1 + 9);
	ck_assert_int_eq(read_file(p, &h, &e), ERR_METADATA_INCOMPLETE_BUFFER);
	free(p);
}
END_TEST

static int
failing_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	(void)ctx;
	(void)buf;
	(void)len;
	/* the prefix reads fine, the header does not */
	if (off == 0) {
		memcpy(buf, "\x02\0\0\0\0\0\0\0", 8);
		return 0;
	}
	return -EIO;
}

START_TEST(test_read_io_error)
{
	static const struct reader r = { failing_pread, NULL, 10, "fake" };
	struct header *h = NULL;
	struct err e = { 0 };

	ck_assert_int_eq(header_read(&r, &h, &e), -1);
	ck_assert_ptr_null(h);
	ck_assert_int_eq(e.code, ERR_IO);
	ck_assert_str_eq(e.where, "fake");
}
END_TEST

static int
dead_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	(void)ctx;
	(void)buf;
	(void)len;
	(void)off;
	return -EIO;
}

/* container_open(): the table's formats, and what a foreign file is. */
START_TEST(test_container)
{
	static const char hdr[] = "{" T("w", "F32", "[2]", 0, 8) "}  ";
	static const char lfs[] = "version https://git-lfs.github.com/spec/v1\n"
				  "oid sha256:0123\nsize 12345\n";
	static const struct reader dead = { dead_pread, NULL, 100, "dead" };
	struct header *h;
	struct err e = { 0 };
	char *p;
	int fd;

	/* a safetensors file is claimed by its format, and opens */
	p = write_file("good", sizeof(hdr) - 1, hdr, sizeof(hdr) - 1,
		       8 + sizeof(hdr) - 1 + 8);
	ck_assert_int_eq(read_with(container_open, p, &h, &e), ERR_OK);
	ck_assert_uint_eq(h->ntensors, 1);
	container_free(h);
	free(p);
	ck_assert_int_eq(header_claims((const unsigned char *)
				       "\x10\0\0\0\0\0\0\0{\"", 10, 40), 1);
	ck_assert_int_eq(header_claims((const unsigned char *)
				       "\x10\0\0\0\0\0\0\0{\"", 10, 20), 0);
	ck_assert_int_eq(header_claims((const unsigned char *)"GGUF", 4, 40),
			 0);
	/* unclaimed files go to the first format of the table, or to the
	 * one their name's ending says */
	ck_assert_str_eq(container_format((const unsigned char *)
					  "\x89HDF\r\n\x1a\n", 8, 40,
					  "m.h5")->name, "safetensors");
	ck_assert_str_eq(container_format((const unsigned char *)
					  "\x89HDF\r\n\x1a\n", 8, 40,
					  "m.gguf")->name, "gguf");
	ck_assert_str_eq(container_format((const unsigned char *)"GGUF", 4,
					  40, NULL)->name, "gguf");
	/* a damaged GGUF magic before a version and a tensor count, and
	 * llama.cpp's magic from before GGUF ("ggjt" as a little-endian
	 * u32) */
	ck_assert_str_eq(container_format((const unsigned char *)
					  "GGUX\3\0\0\0\2\0\0\0\0\0\0\0",
					  16, 40, "x")->name, "gguf");
	ck_assert_str_eq(container_format((const unsigned char *)"tjgg", 4,
					  40, "x")->name, "gguf");
	ck_assert_str_eq(container_format((const unsigned char *)
					  "GGUX\3\0\0\0\2\0\0\0\0\0\0\1",
					  16, 40, "x")->name, "safetensors");

	/* a foreign file: the reference's error, what the file is in front */
	p = fmt("%s/lfs", tmpdir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(write(fd, lfs, sizeof(lfs) - 1),
			 (ssize_t)sizeof(lfs) - 1);
	close(fd);
	ck_assert_int_eq(read_with(container_open, p, &h, &e),
			 ERR_HEADER_TOO_LARGE);
	ck_assert_msg(strncmp(e.detail, "a Git LFS pointer, not the file "
			      "(12345 bytes)", 45) == 0, "%s", e.detail);
	ck_assert_str_eq(e.where, p);
	free(p);

	/* the first bytes cannot be read */
	err_clear(&e);
	ck_assert_int_eq(container_open(&dead, &h, &e), -1);
	ck_assert_ptr_null(h);
	ck_assert_int_eq(e.code, ERR_IO);
	ck_assert_str_eq(e.where, "dead");
}
END_TEST

/* ---- UTF-8 first, then JSON ------------------------------------------- */

START_TEST(test_utf8)
{
	OK("{" T("\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80", "U8", "[1]", 0, 1) "}", 1);
	BADM("{" T("a\xff", "U8", "[1]", 0, 1) "}", 1, ERR_INVALID_HEADER,
	     "invalid utf-8 sequence of 1 bytes from index 3");
	/* UTF-8 is checked before the JSON: broken JSON too, still UTF-8 */
	BAD("{\xff", 0, ERR_INVALID_HEADER);
	BAD("{\"\xc0\x80\":1}", 0, ERR_INVALID_HEADER);		/* overlong */
	BAD("{\"\xed\xa0\x80\":1}", 0, ERR_INVALID_HEADER);	/* surrogate */
	BAD("{\"\xf4\x90\x80\x80\":1}", 0, ERR_INVALID_HEADER);	/* > U+10FFFF */
	BADM("{}  \xe2\x82", 0, ERR_INVALID_HEADER,
	     "incomplete utf-8 byte sequence from index 4");
	/* a lone surrogate escape is valid UTF-8 but not a valid string */
	BAD("{\"\\ud800\":1}", 0, DESER);
}
END_TEST

/* ---- JSON dialect ----------------------------------------------------- */

START_TEST(test_whitespace)
{
	OK("\t\n{}\r ", 0);
	OK("{}      ", 0);			/* the writer's space padding */
	OK(" { " T("a", "U8", "[ 1 ]", 0, 1) " } ", 1);
	BADM("{}\0", 0, DESER, "trailing characters");	/* NUL padding */
	BAD("{}\0\0\0\0\0\0", 0, DESER);
	BAD("\xef\xbb\xbf{}", 0, DESER);		/* BOM */
	BAD("\f{}", 0, DESER);				/* form feed */
	BAD("{}\v", 0, DESER);
	BADM("{}{}", 0, DESER, "trailing characters");
	BAD("{} x", 0, DESER);
	BADM("", 0, DESER, "EOF while parsing a value");
	BAD("   ", 0, DESER);
}
END_TEST

START_TEST(test_top_level)
{
	OK("{}", 0);
	BADM("[]", 0, DESER, "expected an object");
	BAD("null", 0, DESER);
	BAD("1", 0, DESER);
	BAD("true", 0, DESER);
	BAD("\"{}\"", 0, DESER);
	BAD("{", 0, DESER);
	BAD("{\"a\"}", 0, DESER);
	BAD("{\"a\":}", 0, DESER);
	BAD("{" T("a", "U8", "[1]", 0, 1) ",}", 1, DESER);
}
END_TEST

/* The root counts: 127 nested containers pass, the 128th fails. */
START_TEST(test_depth)
{
	for (int k = 124; k <= 127; k++) {
		char *inner = malloc(2 * (size_t)k + 1);
		char *json;

		for (int i = 0; i < k; i++) {
			inner[i] = '[';
			inner[k + i] = ']';
		}
		inner[2 * k] = '\0';
		json = fmt("{\"a\":{\"dtype\":\"U8\",\"shape\":[],"
			   "\"data_offsets\":[0,1],\"x\":%s}}", inner);
		/* root + entry + k arrays */
		if (k + 2 <= 127)
			OKS(json, 1);
		else
			BADS(json, 1, DESER, "recursion limit exceeded");
		free(inner);
	}
}
END_TEST

START_TEST(test_strings)
{
	/* escapes are decoded before use */
	struct header *h = PARSE("{\"a\\n\\\"\\\\\\/\\u00e9\\ud83d\\ude00\":"
				 "{\"dtype\":\"U8\",\"shape\":[1],"
				 "\"data_offsets\":[0,1]}}", 1);
	static const char want[] = "a\n\"\\/\xc3\xa9\xf0\x9f\x98\x80";

	ck_assert_uint_eq(h->tensors[0].name_len, sizeof(want) - 1);
	ck_assert(memcmp(h->tensors[0].name, want, sizeof(want)) == 0);
	container_free(h);

	OK("{" T("\x7f", "U8", "[1]", 0, 1) "}", 1);	/* DEL is not control */
	BADM("{" T("a\x01", "U8", "[1]", 0, 1) "}", 1, DESER,
	     "control character");
	BAD("{" T("a\tb", "U8", "[1]", 0, 1) "}", 1, DESER);
	BADM("{" T("a\\x", "U8", "[1]", 0, 1) "}", 1, DESER, "invalid escape");
	BAD("{" T("\\u12", "U8", "[1]", 0, 1) "}", 1, DESER);
	BAD("{" T("\\uZZZZ", "U8", "[1]", 0, 1) "}", 1, DESER);
	BAD("{" T("\\ud800", "U8", "[1]", 0, 1) "}", 1, DESER);
	BAD("{" T("\\udc00", "U8", "[1]", 0, 1) "}", 1, DESER);
	BAD("{" T("\\ud800\\u0041", "U8", "[1]", 0, 1) "}", 1, DESER);
	/* the same inside ignored fields and metadata */
	OK("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
	   "\"x\":\"\\ud83d\\ude00\"}}", 1);
	BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
	    "\"x\":\"\\ud800\"}}", 1, DESER);
	BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
	    "\"x\":[\"\\udc00\"]}}", 1, DESER);
	BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
	    "\"x\":{\"\x01\":1}}}", 1, DESER);
	BAD("{\"__metadata__\":{\"k\":\"\\udfff\"}}", 0, DESER);
}
END_TEST

/* Numbers in ignored fields: JSON grammar, finite as f64. */
START_TEST(test_ignored_numbers)
{
	static const char *const good[] = {
		"0", "-0", "1.5", "-2.5e-3", "1E+2", "1e-400", "-1e-400",
		"123456789012345678901234567890", "1.7976931348623157e308",
		"0e99999999999", "[1,2,{\"y\":-7}]",
	};
	static const char *const bad[] = {
		"01", "+1", ".5", "1.", "1.e5", "1e", "-", "NaN", "Infinity",
		"-Infinity", "1e400", "-1e400", "1e99999999999", "0x10",
	};
	char digits[401];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		OKS(fmt("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
			"\"data_offsets\":[0,1],\"x\":%s}}", good[i]), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		BADS(fmt("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
			 "\"data_offsets\":[0,1],\"x\":%s}}", bad[i]), 1, DESER,
		     NULL);
	BADS(fmt("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
		 "\"data_offsets\":[0,1],\"x\":1e400}}"), 1, DESER,
	     "number out of range");
	memset(digits, '9', 400);
	digits[400] = '\0';
	BADS(fmt("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
		 "\"data_offsets\":[0,1],\"x\":%s}}", digits), 1, DESER,
	     "number out of range");
}
END_TEST

/* ---- schema ------------------------------------------------------------ */

START_TEST(test_shape_integers)
{
	static const char *const bad[] = {
		"[1.0]", "[1e0]", "[1E0]", "[-1]", "[-0]",
		"[18446744073709551616]", "[\"1\"]", "[true]", "[null]",
		"[[1]]", "[{}]", "null", "{}", "\"[1]\"", "1",
	};
	struct header *h;

	OKS(SHAPE("[1]"), 1);
	OKS(SHAPE("[1,1,1]"), 1);
	h = PARSE("{" T("a", "U8", "[]", 0, 1) "}", 1);	/* scalar */
	ck_assert_uint_eq(h->tensors[0].rank, 0);
	ck_assert_uint_eq(h->tensors[0].numel, 1);
	container_free(h);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		BADS(SHAPE(bad[i]), 1, DESER, "shape");
	BADS(SHAPE("[01]"), 1, DESER, "invalid number");
	/* 2^64-1 is a valid usize; it then overflows in validation */
	BADS(SHAPE("[" U64MAX "]"), 1, ERR_VALIDATION_OVERFLOW, NULL);
}
END_TEST

START_TEST(test_offsets_integers)
{
	static const char *const bad[] = {
		"[0,1.0]", "[0,1e0]", "[0.0,1]", "[-0,1]", "[0,-1]",
		"[0,18446744073709551616]", "[\"0\",1]", "[0,true]",
		"[null,1]", "[0]", "[0,1,2]", "[]", "null", "{}", "\"0,1\"",
		"[[0],1]", "{\"0\":1}",
	};

	OKS(OFFS("[0,1]"), 1);
	OKS(OFFS("[ 0 , 1 ]"), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		BADS(OFFS(bad[i]), 1, DESER, "data_offsets");
	/* 2^64-1 parses; then it is simply the wrong range */
	BADS(OFFS("[0," U64MAX "]"), 1, ERR_TENSOR_INVALID_INFO, NULL);
}
END_TEST

START_TEST(test_dtype_forms)
{
	static const char *const bad[] = {
		"\"u8\"", "\"f32\"", "\"U8 \"", "\" U8\"", "\"F128\"",
		"\"C128\"", "\"\"", "8", "null", "true", "[\"U8\"]",
		"{\"U8\":1}", "{\"U8\":\"\"}", "{\"U8\":[]}", "{\"U8\":{}}",
		"{\"U8\":null,\"I8\":null}", "{}", "{\"u8\":null}",
		"{\"U8\":false}",
	};
	struct header *h;

	OKS(DTYPE("\"U8\""), 1);
	OKS(DTYPE("\"\\u0055\\u0038\""), 1);		/* escaped */
	h = PARSE("{\"a\":{\"dtype\":{\"U8\":null},\"shape\":[1],"
		  "\"data_offsets\":[0,1]}}", 1);
	ck_assert_int_eq(h->tensors[0].dtype, DTYPE_U8);
	container_free(h);
	OKS(DTYPE("{ \"I8\" : null }"), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		BADS(DTYPE(bad[i]), 1, DESER, "dtype");
	BADS(DTYPE("\"f32\""), 1, DESER, "`f32`");
}
END_TEST

START_TEST(test_entry_forms)
{
	struct header *h;

	/* a struct may come as the sequence of its fields */
	h = PARSE("{\"a\":[\"F16\",[2],[0,4]]}", 4);
	ck_assert_int_eq(h->tensors[0].dtype, DTYPE_F16);
	ck_assert_uint_eq(h->tensors[0].shape[0], 2);
	ck_assert_uint_eq(h->tensors[0].end, 4);
	container_free(h);
	OK("{\"a\":[{\"U8\":null},[],[0,1]]}", 1);
	BAD("{\"a\":[\"F16\",[2],[0,4],1]}", 4, DESER);
	BAD("{\"a\":[\"F16\",[2]]}", 4, DESER);
	BAD("{\"a\":[]}", 0, DESER);
	BAD("{\"a\":[\"X\",[2],[0,4]]}", 4, DESER);
	BAD("{\"a\":[[2],\"F16\",[0,4]]}", 4, DESER);
	BADS(ENTRY("null"), 0, DESER, "null");
	BADS(ENTRY("\"U8\""), 0, DESER, NULL);
	BADS(ENTRY("1"), 0, DESER, NULL);
	BADS(ENTRY("true"), 0, DESER, NULL);
}
END_TEST

START_TEST(test_fields)
{
	/* any order, unknown fields ignored whatever they hold */
	OK("{\"a\":{\"data_offsets\":[0,1],\"shape\":[1],\"dtype\":\"U8\"}}", 1);
	OK("{\"a\":{\"dtype\":\"U8\",\"x\":{\"dtype\":5,\"y\":[null,true]},"
	   "\"shape\":[1],\"data_offsets\":[0,1],\"z\":-0.5e-7}}", 1);
	/* field names are compared after unescaping */
	OK("{\"a\":{\"d\\u0074ype\":\"U8\",\"shape\":[1],"
	   "\"data\\u005foffsets\":[0,1]}}", 1);
	/* "Dtype" is just an unknown field: dtype is then missing */
	BADM("{\"a\":{\"Dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
	     1, DESER, "missing field `dtype`");
	BADM("{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, DESER,
	     "missing field `dtype`");
	BADM("{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", 1, DESER,
	     "missing field `shape`");
	BADM("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, DESER,
	     "missing field `data_offsets`");
	BADM("{\"a\":{}}", 0, DESER, "missing field");
	BADM("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],"
	     "\"data_offsets\":[0,1]}}", 1, DESER, "duplicate field `dtype`");
	BADM("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"shape\":[1],"
	     "\"data_offsets\":[0,1]}}", 1, DESER, "duplicate field `shape`");
	BADM("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
	     "\"data_offsets\":[0,1]}}", 1, DESER,
	     "duplicate field `data_offsets`");
	BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"d\\u0074ype\":\"U8\","
	    "\"data_offsets\":[0,1]}}", 1, DESER);
	/* the detail names the tensor */
	BADM("{\"my.weight\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, DESER,
	     "`my.weight`");
}
END_TEST

START_TEST(test_keys_unescaped)
{
	struct header *h;

	h = PARSE("{\"\\u005f_metadata__\":{\"k\":\"v\"}}", 0);
	ck_assert_int_eq(h->has_metadata, 1);
	ck_assert_uint_eq(h->nmeta, 1);
	ck_assert_uint_eq(h->ntensors, 0);
	container_free(h);

	h = PARSE("{" T("a\\/b", "U8", "[1]", 0, 1) "}", 1);
	ck_assert_ptr_nonnull(find_tensor(h, "a/b", 3));
	ck_assert_ptr_null(find_tensor(h, "a\\/b", 4));
	container_free(h);

	/* case matters: this one is a tensor */
	h = PARSE("{" T("__METADATA__", "U8", "[1]", 0, 1) "}", 1);
	ck_assert_uint_eq(h->ntensors, 1);
	ck_assert_int_eq(h->has_metadata, 0);
	container_free(h);

	/* a duplicate after unescaping is a duplicate */
	BAD("{\"__metadata__\":null,\"\\u005f_metadata__\":null}", 0, DESER);
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("\\u0061", "U8", "[1]", 0, 1)
	     "}", 1, DESER, "duplicate tensor name `a`");
}
END_TEST

START_TEST(test_metadata)
{
	struct header *h;

	h = PARSE("{}", 0);
	ck_assert_int_eq(h->has_metadata, 0);
	ck_assert_uint_eq(h->nmeta, 0);
	container_free(h);

	h = PARSE("{\"__metadata__\":null}", 0);
	ck_assert_int_eq(h->has_metadata, 0);
	container_free(h);

	h = PARSE("{\"__metadata__\":{}}", 0);
	ck_assert_int_eq(h->has_metadata, 1);
	ck_assert_uint_eq(h->nmeta, 0);
	container_free(h);

	h = PARSE("{" T("w", "U8", "[1]", 0, 1) ",\"__metadata__\":"
		  "{\"format\":\"pt\",\"n\\u0000l\":\"a\\\"b\",\"\":\"\"}}", 1);
	ck_assert_int_eq(h->has_metadata, 1);
	ck_assert_uint_eq(h->nmeta, 3);
	ck_assert_str_eq(h->meta[0].key, "format");
	ck_assert_uint_eq(h->meta[0].key_len, 6);
	ck_assert_str_eq(h->meta[0].val, "pt");
	ck_assert_uint_eq(h->meta[0].val_len, 2);
	ck_assert_uint_eq(h->meta[1].key_len, 3);
	ck_assert(memcmp(h->meta[1].key, "n\0l", 4) == 0);
	ck_assert_str_eq(h->meta[1].val, "a\"b");
	ck_assert_uint_eq(h->meta[2].key_len, 0);
	ck_assert_str_eq(h->meta[2].key, "");
	container_free(h);

	BADM("{\"__metadata__\":{\"a\":1}}", 0, DESER, "__metadata__");
	BAD("{\"__metadata__\":{\"a\":null}}", 0, DESER);
	BAD("{\"__metadata__\":{\"a\":{}}}", 0, DESER);
	BAD("{\"__metadata__\":{\"a\":{\"b\":\"c\"}}}", 0, DESER);
	BAD("{\"__metadata__\":{\"a\":[\"x\"]}}", 0, DESER);
	BAD("{\"__metadata__\":{\"a\":true}}", 0, DESER);
	BAD("{\"__metadata__\":[]}", 0, DESER);
	BAD("{\"__metadata__\":\"x\"}", 0, DESER);
	BAD("{\"__metadata__\":1}", 0, DESER);
	BAD("{\"__metadata__\":false}", 0, DESER);
	BADM("{\"__metadata__\":null,\"__metadata__\":null}", 0, DESER,
	     "duplicate field `__metadata__`");
	BADM("{\"__metadata__\":{},\"__metadata__\":{}}", 0, DESER,
	     "duplicate field `__metadata__`");
	/* deliberate deviation: duplicate keys inside are refused */
	BADM("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, DESER,
	     "duplicate __metadata__ key `k`");
}
END_TEST

/* Duplicate tensor names: refused; the reference's error kind is kept
 * when its last-wins reading would also fail. */
START_TEST(test_duplicates)
{
	/* last-wins would accept: refused as a duplicate */
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("a", "U8", "[1]", 0, 1) "}",
	     1, DESER, "duplicate tensor name `a`");
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("b", "U8", "[1]", 1, 2) ","
	     T("a", "U8", "[1]", 0, 1) "}", 2, DESER, "reference reader would");
	/* last-wins fails: the reference's kind, with a note */
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("a", "U8", "[1]", 1, 2) "}",
	     2, ERR_INVALID_OFFSET, "more than once");
	BADM("{" T("a", "U8", "[2]", 0, 2) "," T("a", "U8", "[1]", 0, 1) "}",
	     2, ERR_METADATA_INCOMPLETE_BUFFER, "more than once");
	BAD("{" T("a", "U8", "[1]", 0, 1) "," T("a", "U8", "[2]", 0, 1) "}",
	    1, ERR_TENSOR_INVALID_INFO);
	/* a JSON error anywhere wins over the duplicate */
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("a", "U8", "[1]", 0, 1) "} x",
	     1, DESER, "trailing characters");
	/* the first repeated entry in header order is the one named */
	BADM("{" T("b", "U8", "[0]", 0, 0) "," T("a", "U8", "[0]", 0, 0) ","
	     T("b", "U8", "[0]", 0, 0) "," T("a", "U8", "[0]", 0, 0) "}", 0,
	     DESER, "duplicate tensor name `b`");
	/* duplicate metadata keys follow the same rule */
	BADM("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}," T("a", "U8", "[1]", 1, 2)
	     "}", 2, ERR_INVALID_OFFSET, "more than once");
}
END_TEST

/* One name repeated 20,000 times: refused, and in linear time. */
START_TEST(test_many_duplicates)
{
	enum { N = 20000 };
	static const char one[] = "\"same\":[\"U8\",[0],[0,0]]";
	size_t len = 0, cap = N * sizeof(one) + 8;
	char *json = malloc(cap);

	json[len++] = '{';
	for (int i = 0; i < N; i++) {
		if (i)
			json[len++] = ',';
		memcpy(json + len, one, sizeof(one) - 1);
		len += sizeof(one) - 1;
	}
	json[len++] = '}';
	bad_n(json, len, 0, DESER, "duplicate tensor name `same`", __LINE__);
	free(json);
}
END_TEST

/* Tensor-entry errors are reported only if the rest of the top-level
 * object is well-formed (serde's flatten buffer); __metadata__ errors and
 * syntax errors come first. */
START_TEST(test_error_order)
{
	BADM("{\"a\":{\"dtype\":\"XX\",\"shape\":[],\"data_offsets\":[0,1]},"
	     "\"__metadata__\":5}", 1, DESER, "__metadata__");
	BADM("{\"a\":{\"dtype\":\"XX\",\"shape\":[],\"data_offsets\":[0,1]},"
	     "\"b\":}", 1, DESER, "expected value");
	BADM("{\"a\":{\"dtype\":\"XX\",\"shape\":[],\"data_offsets\":[0,1]}} x",
	     1, DESER, "unknown dtype `XX`");
	BADM("{\"a\":{\"dtype\":\"XX\",\"shape\":[],\"data_offsets\":[0,1]},"
	     "\"b\":{\"dtype\":\"YY\",\"shape\":[],\"data_offsets\":[0,1]}}",
	     1, DESER, "tensor `a`");
	/* after a schema error the rest is still checked for syntax */
	BADM("{\"a\":{\"dtype\":5,\"shape\":[[[1,]]],\"data_offsets\":[0,1]}}",
	     1, DESER, "trailing comma");
	BADM("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,\"x\",{1:2}]}}", 1, DESER,
	     "key must be a string");
	BADM("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,\"x\",[1,}]]}}", 1, DESER,
	     "expected value");
	/* JSON errors give the byte position in the header */
	BADM("{\"a\":1x}", 0, DESER, "header byte 6");
}
END_TEST

/* ---- validate() -------------------------------------------------------- */

START_TEST(test_offsets_rules)
{
	/* JSON order does not matter */
	OK("{" T("b", "U8", "[2]", 1, 3) "," T("a", "U8", "[1]", 0, 1) "}", 3);
	/* a gap, an overlap, a range that ends before it begins */
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("b", "U8", "[1]", 2, 3) "}",
	     3, ERR_INVALID_OFFSET, "`b`");
	BADM("{" T("a", "U8", "[2]", 0, 2) "," T("b", "U8", "[2]", 1, 3) "}",
	     3, ERR_INVALID_OFFSET, "`b`");
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("b", "U8", "[0]", 1, 0) "}",
	     1, ERR_INVALID_OFFSET, "end before");
	BADM("{" T("a", "U8", "[1]", 1, 2) "}", 2, ERR_INVALID_OFFSET, "`a`");
	/* two names for one range (tied weights) */
	BADM("{" T("a", "F32", "[1]", 0, 4) "," T("b", "F32", "[1]", 0, 4) "}",
	     4, ERR_INVALID_OFFSET, "`b`");
	/* zero-size tensors wherever the running end is */
	OK("{" T("z0", "F32", "[0]", 0, 0) "," T("a", "U8", "[1]", 0, 1) ","
	   T("z1", "U8", "[3,0]", 1, 1) "," T("b", "U8", "[1]", 1, 2) ","
	   T("z2", "F64", "[0,7]", 2, 2) "}", 2);
	BADM("{" T("a", "U8", "[1]", 0, 1) "," T("z", "U8", "[0]", 5, 5) "}",
	     1, ERR_INVALID_OFFSET, "`z`");
	/* the first failing tensor in offset order decides */
	BAD("{" T("a", "F32", "[2]", 0, 4) "," T("b", "U8", "[1]", 9, 10) "}",
	    10, ERR_TENSOR_INVALID_INFO);
	/* the whole data section must be covered */
	OK("{}", 0);
	BAD("{}", 1, ERR_METADATA_INCOMPLETE_BUFFER);
	BAD("{" T("a", "U8", "[1]", 0, 1) "}", 2, ERR_METADATA_INCOMPLETE_BUFFER);
	BAD("{" T("a", "U8", "[2]", 0, 2) "}", 1, ERR_METADATA_INCOMPLETE_BUFFER);
	BAD("{" T("a", "U8", "[1000]", 0, 1000) "}", 0,
	    ERR_METADATA_INCOMPLETE_BUFFER);
}
END_TEST

START_TEST(test_overflow_rules)
{
	struct header *h;

	/* the product is folded left to right with checked multiplication */
	h = PARSE("{" T("a", "U8", "[0," U64MAX ",2]", 0, 0) "}", 0);
	ck_assert_uint_eq(h->tensors[0].numel, 0);
	container_free(h);
	BAD("{" T("a", "U8", "[" U64MAX ",2,0]", 0, 0) "}", 0,
	    ERR_VALIDATION_OVERFLOW);
	BAD("{" T("a", "U8", "[4294967296,4294967296]", 0, 0) "}", 0,
	    ERR_VALIDATION_OVERFLOW);
	/* ... and in bits: U8 [2^61] overflows, [2^61-1] does not */
	BAD("{" T("a", "U8", "[2305843009213693952]", 0, 0) "}", 0,
	    ERR_VALIDATION_OVERFLOW);
	BAD("{" T("a", "F4", "[4611686018427387904]", 0, 0) "}", 0,
	    ERR_VALIDATION_OVERFLOW);
	BAD("{" T("a", "U8", "[2305843009213693951]", 0, 2305843009213693951)
	    "}", 0, ERR_METADATA_INCOMPLETE_BUFFER);
}
END_TEST

/* Offsets beyond 2^63, and a data length whose sum with the data start
 * does not fit in 64 bits: no wrap-around anywhere. */
START_TEST(test_big_offsets)
{
	const uint64_t s = 2305843009213693951ULL;	/* 2^61 - 1 bytes */
	char *json = fmt("{\"__metadata__\":null}");

	for (int k = 1; k <= 8; k++) {
		char *prev = json;

		json = fmt("%.*s,\"t%d\":{\"dtype\":\"U8\",\"shape\":[%llu],"
			   "\"data_offsets\":[%llu,%llu]}}",
			   (int)strlen(prev) - 1, prev, k,
			   (unsigned long long)s,
			   (unsigned long long)((k - 1) * s),
			   (unsigned long long)(k * s));
		free(prev);
		/* k >= 5 ends past 2^63; k == 8 ends at 2^64 - 8 */
		bad_n(json, strlen(json), 0, ERR_METADATA_INCOMPLETE_BUFFER,
		      NULL, __LINE__);
	}
	free(json);
	BAD("{" T("a", "U8", "[0]", 9223372036854775808, 9223372036854775808)
	    "}", 0, ERR_INVALID_OFFSET);
	BAD("{" T("a", "U8", "[0]", 0, 0) "," T("b", "U8", "[1]",
	    18446744073709551614, 18446744073709551615) "}", 1,
	    ERR_INVALID_OFFSET);
}
END_TEST

struct dsize {
	const char *name;
	enum dtype d;
	unsigned bits;
};

/* The bit sizes from the format reference (not from dtype.c). */
static const struct dsize dsizes[] = {
	{ "BOOL", DTYPE_BOOL, 8 }, { "F4", DTYPE_F4, 4 },
	{ "F6_E2M3", DTYPE_F6_E2M3, 6 }, { "F6_E3M2", DTYPE_F6_E3M2, 6 },
	{ "U8", DTYPE_U8, 8 }, { "I8", DTYPE_I8, 8 },
	{ "F8_E5M2", DTYPE_F8_E5M2, 8 }, { "F8_E4M3", DTYPE_F8_E4M3, 8 },
	{ "F8_E8M0", DTYPE_F8_E8M0, 8 },
	{ "F8_E4M3FNUZ", DTYPE_F8_E4M3FNUZ, 8 },
	{ "F8_E5M2FNUZ", DTYPE_F8_E5M2FNUZ, 8 },
	{ "I16", DTYPE_I16, 16 }, { "U16", DTYPE_U16, 16 },
	{ "F16", DTYPE_F16, 16 }, { "BF16", DTYPE_BF16, 16 },
	{ "I32", DTYPE_I32, 32 }, { "U32", DTYPE_U32, 32 },
	{ "F32", DTYPE_F32, 32 }, { "C64", DTYPE_C64, 64 },
	{ "F64", DTYPE_F64, 64 }, { "I64", DTYPE_I64, 64 },
	{ "U64", DTYPE_U64, 64 },
};

START_TEST(test_dtype_sizes)
{
	for (size_t i = 0; i < sizeof(dsizes) / sizeof(dsizes[0]); i++) {
		const struct dsize *z = &dsizes[i];
		unsigned bytes = 12 * z->bits / 8;	/* shape [3,4] */
		char *json = fmt("{\"t\":{\"dtype\":\"%s\",\"shape\":[3,4],"
				 "\"data_offsets\":[0,%u]}}", z->name, bytes);
		struct header *h = ok_n(json, strlen(json), bytes, __LINE__);

		ck_assert_int_eq(h->tensors[0].dtype, z->d);
		ck_assert_uint_eq(h->tensors[0].numel, 12);
		container_free(h);
		free(json);
		BADS(fmt("{\"t\":{\"dtype\":\"%s\",\"shape\":[3,4],"
			 "\"data_offsets\":[0,%u]}}", z->name, bytes + 1),
		     bytes + 1, ERR_TENSOR_INVALID_INFO, "`t`");
	}
	OK("{" T("a", "F4", "[4]", 0, 2) "}", 2);
	OK("{" T("a", "F4", "[2,1]", 0, 1) "}", 1);
	BADM("{" T("a", "F4", "[3]", 0, 1) "}", 1, ERR_MISALIGNED_SLICE, "`a`");
	BAD("{" T("a", "F4", "[3]", 0, 2) "}", 2, ERR_MISALIGNED_SLICE);
	OK("{" T("a", "F6_E2M3", "[4]", 0, 3) "}", 3);
	OK("{" T("a", "F6_E3M2", "[2,2]", 0, 3) "}", 3);
	BAD("{" T("a", "F6_E2M3", "[2]", 0, 1) "}", 1, ERR_MISALIGNED_SLICE);
	BAD("{" T("a", "F6_E3M2", "[3]", 0, 2) "}", 2, ERR_MISALIGNED_SLICE);
	OK("{" T("a", "C64", "[1]", 0, 8) "}", 8);
	OK("{" T("a", "BOOL", "[3]", 0, 3) "}", 3);
	/* a scalar is one element: 4 bits */
	BAD("{" T("a", "F4", "[]", 0, 0) "}", 0, ERR_MISALIGNED_SLICE);
	BAD("{" T("a", "F4", "[]", 0, 1) "}", 1, ERR_MISALIGNED_SLICE);
	OK("{" T("a", "F4", "[0]", 0, 0) "," T("b", "U8", "[1]", 0, 1) "}", 1);
}
END_TEST

/* ---- names and the index --------------------------------------------- */

static void
expect_name(const char *json_name, const char *name, size_t len)
{
	char *json = fmt("{\"%s\":{\"dtype\":\"U8\",\"shape\":[1],"
			 "\"data_offsets\":[0,1]}}", json_name);
	struct header *h = ok_n(json, strlen(json), 1, __LINE__);
	const struct tensor *t = find_tensor(h, name, len);

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->name_len, len);
	ck_assert(len == 0 || memcmp(t->name, name, len) == 0);
	ck_assert_int_eq(t->name[len], '\0');
	container_free(h);
	free(json);
}

START_TEST(test_odd_names)
{
	char big[65537];

	expect_name("", "", 0);
	expect_name("/", "/", 1);
	expect_name(".", ".", 1);
	expect_name("..", "..", 2);
	expect_name("\\u0000", "\0", 1);
	expect_name("a\\u0000b", "a\0b", 3);
	expect_name("\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9", 5);
	expect_name("\\u65e5\\u672c", "\xe6\x97\xa5\xe6\x9c\xac", 6);
	expect_name("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 4);
	expect_name(" lead and trail ", " lead and trail ", 16);
	memset(big, 'n', 300);
	big[300] = '\0';
	expect_name(big, big, 300);
	memset(big, 'x', 65536);
	big[65536] = '\0';
	expect_name(big, big, 65536);
}
END_TEST

/* A name full of control bytes, 64 KiB long, in an error: the detail
 * stays bounded and escaped. */
START_TEST(test_error_detail_names)
{
	char *name = malloc(65537), *json;
	struct header *h;
	struct err e;

	memset(name, 'y', 65536);
	memcpy(name, "\\u0001\\u0000", 12);
	name[65536] = '\0';
	json = fmt("{\"%s\":{\"dtype\":\"U8\",\"shape\":[2],"
		   "\"data_offsets\":[0,1]}}", name);
	h = parse(json, strlen(json), 1, &e);
	ck_assert_ptr_null(h);
	ck_assert_int_eq(e.code, ERR_TENSOR_INVALID_INFO);
	ck_assert_uint_lt(strlen(e.detail), sizeof(e.detail));
	ck_assert_msg(strstr(e.detail, "\\x01\\x00yyy"), "%s", e.detail);
	ck_assert_msg(strstr(e.detail, "..."), "%s", e.detail);
	ck_assert_msg(strstr(e.detail, "need 2 bytes"), "%s", e.detail);
	free(json);
	free(name);
}
END_TEST

START_TEST(test_index)
{
	/* JSON order differs from file order */
	struct header *h = PARSE(
		"{\"__metadata__\":{\"format\":\"pt\"},"
		T("c", "F32", "[2,3]", 10, 34) ","
		T("a", "U8", "[2]", 0, 2) ","
		T("b", "BF16", "[4]", 2, 10) "}", 34);
	static const char *const names[] = { "a", "b", "c" };
	const struct tensor *t;

	ck_assert_uint_eq(h->ntensors, 3);
	ck_assert_uint_eq(h->data_len, 34);
	for (int i = 0; i < 3; i++) {
		ck_assert_str_eq(h->tensors[i].name, names[i]);
		ck_assert_ptr_eq(find_tensor(h, names[i], 1), &h->tensors[i]);
	}
	t = &h->tensors[2];
	ck_assert_int_eq(t->dtype, DTYPE_F32);
	ck_assert_uint_eq(t->rank, 2);
	ck_assert_uint_eq(t->shape[0], 2);
	ck_assert_uint_eq(t->shape[1], 3);
	ck_assert_uint_eq(t->numel, 6);
	ck_assert_uint_eq(t->begin, 10);
	ck_assert_uint_eq(t->end, 34);
	ck_assert_ptr_null(find_tensor(h, "d", 1));
	ck_assert_ptr_null(find_tensor(h, "a", 0));
	ck_assert_ptr_null(find_tensor(h, "ab", 2));
	ck_assert_ptr_null(find_tensor(NULL, "a", 1));
	container_free(h);

	h = PARSE("{}", 0);
	ck_assert_ptr_null(find_tensor(h, "", 0));
	container_free(h);
	container_free(NULL);
}
END_TEST

/* Many tensors, written in a shuffled order: all found, file order kept. */
START_TEST(test_many)
{
	enum { N = 5000 };
	size_t cap = (size_t)N * 100, len;
	char *json, name[32];
	uint32_t *perm = malloc(N * sizeof(*perm));
	struct header *h;

	for (uint32_t i = 0; i < N; i++)
		perm[i] = i;
	for (uint32_t i = N - 1; i > 0; i--) {	/* fixed shuffle */
		uint32_t j = (i * 2654435761u) % (i + 1), x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	/* offsets: tensor i holds i % 3 F16 elements, back to back */
	{
		uint64_t *off = malloc((N + 1) * sizeof(*off));

		off[0] = 0;
		for (uint32_t i = 0; i < N; i++)
			off[i + 1] = off[i] + 2 * (i % 3);
		json = malloc(cap);
		len = (size_t)snprintf(json, cap, "{");
		for (uint32_t k = 0; k < N; k++) {
			uint32_t i = perm[k];

			len += (size_t)snprintf(json + len, cap - len,
				"%s\"model.layers.%u.mlp.weight\":{\"dtype\":"
				"\"F16\",\"shape\":[%u%s],\"data_offsets\":"
				"[%llu,%llu]}", k ? "," : "", i, i % 3,
				i % 5 == 4 ? ",1" : "",
				(unsigned long long)off[i],
				(unsigned long long)off[i + 1]);
		}
		len += (size_t)snprintf(json + len, cap - len, "}");
		h = ok_n(json, len, off[N], __LINE__);
		ck_assert_uint_eq(h->ntensors, N);
		for (uint32_t i = 0; i < N; i++) {
			const struct tensor *t;
			int n = snprintf(name, sizeof(name),
					 "model.layers.%u.mlp.weight", i);

			t = find_tensor(h, name, (size_t)n);
			ck_assert_ptr_nonnull(t);
			ck_assert_uint_eq(t->begin, off[i]);
			/* shapes are shared between tensors, values kept */
			ck_assert_uint_eq(t->rank, i % 5 == 4 ? 2 : 1);
			ck_assert_uint_eq(t->shape[0], i % 3);
			if (t->rank == 2)
				ck_assert_uint_eq(t->shape[1], 1);
			ck_assert_uint_eq(t->numel, i % 3);
			if (i)	/* file order: sorted by (begin, end) */
				ck_assert(h->tensors[i - 1].begin < h->tensors[i].begin ||
					  (h->tensors[i - 1].begin == h->tensors[i].begin &&
					   h->tensors[i - 1].end <= h->tensors[i].end));
		}
		container_free(h);
		free(off);
		free(json);
	}
	free(perm);
}
END_TEST

/* Many small headers of distinct names: every name is kept and found. */
START_TEST(test_small_tables)
{
	for (int k = 1; k <= 400; k++) {
		int count = k % 48 + 1;
		size_t len = 0, cap = (size_t)count * 80 + 8;
		char *json = malloc(cap), name[16];
		struct header *h;

		len += (size_t)snprintf(json + len, cap - len, "{");
		for (int i = 0; i < count; i++)
			len += (size_t)snprintf(json + len, cap - len,
				"%s\"n%d\":[\"U8\",[0],[0,0]]", i ? "," : "", i);
		len += (size_t)snprintf(json + len, cap - len, "}");
		h = ok_n(json, len, 0, __LINE__);
		for (int i = 0; i < count + 8; i++) {
			int n = snprintf(name, sizeof(name), "n%d", i);
			const struct tensor *t = find_tensor(h, name, (size_t)n);

			if (i < count) {
				ck_assert_ptr_nonnull(t);
				ck_assert_str_eq(t->name, name);
			} else {
				ck_assert_ptr_null(t);
			}
		}
		container_free(h);
		free(json);
	}
}
END_TEST

/* ---- the real files --------------------------------------------------- */

static void
check_real(const char *file, const char *name, enum dtype d, uint32_t rank,
	   const uint64_t *shape, uint64_t bytes)
{
	const char *dir = getenv("STFS_REAL_DIR");
	char *path;
	struct header *h;
	struct err e;
	const struct tensor *t;

	ck_assert_msg(dir && *dir, "STFS_REAL_DIR is not set (meson sets it "
		      "to tests/data/real)");
	path = fmt("%s/%s", dir, file);
	ck_assert_msg(access(path, R_OK) == 0, "missing real test file %s", path);
	ck_assert_msg(read_with(container_open, path, &h, &e) == ERR_OK,
		      "%s: %s: %s", path, err_name(e.code), e.detail);
	ck_assert_uint_eq(h->ntensors, 1);
	ck_assert_int_eq(h->has_metadata, 0);
	t = find_tensor(h, name, strlen(name));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->dtype, d);
	ck_assert_uint_eq(t->rank, rank);
	for (uint32_t i = 0; i < rank; i++)
		ck_assert_uint_eq(t->shape[i], shape[i]);
	ck_assert_uint_eq(t->begin, 0);
	ck_assert_uint_eq(t->end, bytes);
	ck_assert_uint_eq(h->data_start + h->data_len, h->file_size);
	ck_assert_uint_eq(h->data_start % 8, 0);	/* writer pads to 8 */
	container_free(h);
	free(path);
}

START_TEST(test_real_files)
{
	static const uint64_t codes[] = { 1, 2, 828 };
	static const uint64_t mel[] = { 80, 201 };

	check_real("candle-encodec-jfk-codes.safetensors", "codes", DTYPE_I64,
		   3, codes, 1 * 2 * 828 * 8);
	check_real("candle-whisper-mel-filters.safetensors", "mel_80",
		   DTYPE_F32, 2, mel, 80 * 201 * 4);
}
END_TEST

/* err_quote() stays within its cap for every cap and every mix of
 * escapes, including doubled C1 escapes (\xc2\x9b) at the cut. */
START_TEST(test_quote_bound)
{
	static const char *const pieces[] = { "a", "\xc2\x9b", "\x01", "`",
					      "\xc2\xa0", "\\" };
	char name[400], buf[512];

	for (int mix = 0; mix < 64; mix++) {
		size_t len = 0;

		for (int k = 0; len < sizeof(name) - 4; k++) {
			const char *pc = pieces[(k * 7 + mix + k / (mix + 1)) % 6];

			memcpy(name + len, pc, strlen(pc));
			len += strlen(pc);
		}
		for (size_t cap = 0; cap <= 300; cap++) {
			memset(buf, 'Z', sizeof(buf));
			err_quote(buf, cap, name, len);
			for (size_t j = cap; j < sizeof(buf); j++)
				if (buf[j] != 'Z')
					ck_abort_msg("cap %zu: byte %zu written",
						     cap, j);
			if (cap)
				ck_assert_uint_lt(strlen(buf), cap);
		}
	}
}
END_TEST

Suite *
header_suite(void)
{
	Suite *s = suite_create("header");
	TCase *tj = tcase_create("json");
	TCase *ts = tcase_create("schema");
	TCase *tv = tcase_create("validate");
	TCase *ti = tcase_create("index");
	TCase *tf = tcase_create("files");

	tcase_add_test(tj, test_lengths_parse);
	tcase_add_test(tj, test_quote_bound);
	tcase_add_test(tj, test_utf8);
	tcase_add_test(tj, test_whitespace);
	tcase_add_test(tj, test_top_level);
	tcase_add_test(tj, test_depth);
	tcase_add_test(tj, test_strings);
	tcase_add_test(tj, test_ignored_numbers);
	suite_add_tcase(s, tj);

	tcase_add_test(ts, test_shape_integers);
	tcase_add_test(ts, test_offsets_integers);
	tcase_add_test(ts, test_dtype_forms);
	tcase_add_test(ts, test_entry_forms);
	tcase_add_test(ts, test_fields);
	tcase_add_test(ts, test_keys_unescaped);
	tcase_add_test(ts, test_metadata);
	tcase_add_test(ts, test_duplicates);
	tcase_add_test(ts, test_many_duplicates);
	tcase_add_test(ts, test_error_order);
	suite_add_tcase(s, ts);

	tcase_add_test(tv, test_offsets_rules);
	tcase_add_test(tv, test_overflow_rules);
	tcase_add_test(tv, test_big_offsets);
	tcase_add_test(tv, test_dtype_sizes);
	suite_add_tcase(s, tv);

	tcase_add_test(ti, test_odd_names);
	tcase_add_test(ti, test_error_detail_names);
	tcase_add_test(ti, test_index);
	tcase_add_test(ti, test_many);
	tcase_add_test(ti, test_small_tables);
	suite_add_tcase(s, ti);

	/* the 100 MB cases take a moment under the sanitizers */
	tcase_set_timeout(tf, 120);
	tcase_add_unchecked_fixture(tf, tmp_setup, tmp_teardown);
	tcase_add_test(tf, test_max_length_accepted);
	tcase_add_test(tf, test_read_files);
	tcase_add_test(tf, test_read_io_error);
	tcase_add_test(tf, test_container);
	tcase_add_test(tf, test_real_files);
	suite_add_tcase(s, tf);
	return s;
}
