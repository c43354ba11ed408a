/* test_text.c - the small string helpers of src/base/text.c: suffixes,
 * hex digits, percent-encoding and -decoding (malformed escapes, NUL, the
 * keep and refuse sets), the strict UTF-8 check with the error positions
 * and lengths Rust reports.  Links base only.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "suites.h"

START_TEST(test_ends_with)
{
	ck_assert_int_eq(text_ends_with("model.safetensors", ".safetensors"), 1);
	ck_assert_int_eq(text_ends_with(".safetensors", ".safetensors"), 1);
	ck_assert_int_eq(text_ends_with("x", ""), 1);
	ck_assert_int_eq(text_ends_with("", ""), 1);
	ck_assert_int_eq(text_ends_with("safetensors", ".safetensors"), 0);
	ck_assert_int_eq(text_ends_with("a.json.bak", ".json"), 0);
	ck_assert_int_eq(text_ends_with("", "a"), 0);
	ck_assert_int_eq(text_ends_with("A.JSON", ".json"), 0);
}
END_TEST

START_TEST(test_hexval)
{
	static const char lower[] = "0123456789abcdef";
	static const char upper[] = "0123456789ABCDEF";

	for (int i = 0; i < 16; i++) {
		ck_assert_int_eq(text_hexval(lower[i]), i);
		ck_assert_int_eq(text_hexval(upper[i]), i);
	}
	for (int c = -1; c < 256; c++)
		if (c <= 0 || !strchr("0123456789abcdefABCDEF", c))
			ck_assert_msg(text_hexval(c) == -1, "byte %d", c);
}
END_TEST

/* encode then compare with want; the result is NUL-terminated */
static void
enc(const char *s, size_t n, const char *keep, const char *want)
{
	char *out = text_pct_encode(s, n, keep);

	ck_assert_ptr_nonnull(out);
	ck_assert_str_eq(out, want);
	free(out);
}

START_TEST(test_encode)
{
	enc("", 0, NULL, "");
	enc("AZaz09-._~", 10, NULL, "AZaz09-._~");
	enc("a b/c", 5, NULL, "a%20b%2Fc");
	enc("a b/c", 5, "/", "a%20b/c");
	enc("\xff\x01", 2, NULL, "%FF%01");		/* upper-case hex */
	enc("a\0b", 3, NULL, "a%00b");			/* n bytes, NUL too */
	enc("a\0b", 3, "/", "a%00b");			/* keep never keeps NUL */
	enc("k=v&x", 5, "=&", "k=v&x");
	enc("%", 1, NULL, "%25");
}
END_TEST

/* decode, expecting want (wlen bytes) or NULL */
static void
dec(const char *s, const char *refuse, const char *want, size_t wlen)
{
	size_t len = 12345;
	char *out = text_pct_decode(s, strlen(s), refuse, &len);

	if (!want) {
		ck_assert_msg(out == NULL, "\"%s\" decoded", s);
		return;
	}
	ck_assert_msg(out != NULL, "\"%s\" refused", s);
	ck_assert_uint_eq(len, wlen);
	ck_assert_mem_eq(out, want, wlen);
	ck_assert_int_eq(out[wlen], '\0');
	free(out);
}

START_TEST(test_decode)
{
	dec("", NULL, "", 0);
	dec("plain", NULL, "plain", 5);
	dec("a%20b", NULL, "a b", 3);
	dec("%2f%2F", NULL, "//", 2);		/* either case */
	dec("%FF", NULL, "\xff", 1);
	dec("a+b", NULL, "a+b", 3);		/* '+' is not a space here */
	/* malformed escapes */
	dec("%", NULL, NULL, 0);
	dec("%4", NULL, NULL, 0);
	dec("a%4", NULL, NULL, 0);
	dec("%4g", NULL, NULL, 0);
	dec("%g4", NULL, NULL, 0);
	dec("%%41", NULL, NULL, 0);
	dec("100%", NULL, NULL, 0);
	/* a NUL byte is always refused */
	dec("a%00b", NULL, NULL, 0);
	/* the refuse set, escaped or not */
	dec("a/b", "/", NULL, 0);
	dec("a%2Fb", "/", NULL, 0);
	dec("a%2Fb", "\\", "a/b", 3);
	dec("..%5C", "\\", NULL, 0);
	/* outlen may be NULL */
	{
		char *out = text_pct_decode("x%41", 4, NULL, NULL);

		ck_assert_ptr_nonnull(out);
		ck_assert_str_eq(out, "xA");
		free(out);
	}
	/* only n bytes are read */
	{
		size_t len;
		char *out = text_pct_decode("ab%41", 2, NULL, &len);

		ck_assert_ptr_nonnull(out);
		ck_assert_str_eq(out, "ab");
		ck_assert_uint_eq(len, 2);
		free(out);
		ck_assert_ptr_null(text_pct_decode("a%4141", 3, NULL, &len));
	}
}
END_TEST

/* Every byte survives encode then decode. */
START_TEST(test_round_trip)
{
	char all[256], *e, *d;
	size_t len;

	for (int i = 0; i < 256; i++)
		all[i] = (char)(i + 1);	/* 1..255, then 0 (refused) */
	e = text_pct_encode(all, 255, "/");
	ck_assert_ptr_nonnull(e);
	d = text_pct_decode(e, strlen(e), NULL, &len);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(len, 255);
	ck_assert_mem_eq(d, all, 255);
	free(d);
	free(e);
}
END_TEST

static void
expect_utf8_bad(const char *s, size_t len, size_t at, unsigned blen)
{
	size_t i = 99;
	unsigned l = 99;

	ck_assert_int_eq(text_utf8_check(s, len, &i, &l), -1);
	ck_assert_uint_eq(i, at);
	ck_assert_uint_eq(l, blen);
}

START_TEST(test_utf8)
{
	size_t i;
	unsigned l;
	static const char ok[] = "plain ascii, \xc3\xa9, \xe6\x97\xa5, "
				 "\xf0\x9f\x98\x80, \xf4\x8f\xbf\xbf, "
				 "\xed\x9f\xbf \xee\x80\x80 \0 end";

	ck_assert_int_eq(text_utf8_check(ok, sizeof(ok) - 1, &i, &l), 0);
	ck_assert_int_eq(text_utf8_check("", 0, &i, &l), 0);
	/* the error lengths Rust's Utf8Error::error_len() reports */
	expect_utf8_bad("\x80", 1, 0, 1);
	expect_utf8_bad("ab\xff", 3, 2, 1);
	expect_utf8_bad("\xc0\x80", 2, 0, 1);		/* overlong */
	expect_utf8_bad("\xc1\xbf", 2, 0, 1);
	expect_utf8_bad("\xe0\x80\x80", 3, 0, 1);	/* overlong */
	expect_utf8_bad("\xed\xa0\x80", 3, 0, 1);	/* surrogate */
	expect_utf8_bad("\xf0\x80\x80\x80", 4, 0, 1);	/* overlong */
	expect_utf8_bad("\xf4\x90\x80\x80", 4, 0, 1);	/* > U+10FFFF */
	expect_utf8_bad("\xf5\x80\x80\x80", 4, 0, 1);
	expect_utf8_bad("\xe1\x80\x41", 3, 0, 2);
	expect_utf8_bad("a\xf0\x90\x80\x41", 5, 1, 3);
	expect_utf8_bad("\xc3", 1, 0, 0);		/* incomplete */
	expect_utf8_bad("0123456789\xe1\x80", 12, 10, 0);
	expect_utf8_bad("\xf0\x9f\x98", 3, 0, 0);
}
END_TEST

Suite *
text_suite(void)
{
	Suite *s = suite_create("text");
	TCase *t = tcase_create("text");

	tcase_add_test(t, test_ends_with);
	tcase_add_test(t, test_hexval);
	tcase_add_test(t, test_encode);
	tcase_add_test(t, test_decode);
	tcase_add_test(t, test_round_trip);
	tcase_add_test(t, test_utf8);
	suite_add_tcase(s, t);
	return s;
}
