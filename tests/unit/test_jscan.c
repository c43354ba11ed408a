/* test_jscan.c - the serde_json-dialect tokenizer on its own: token
 * stream, depth limit, escapes, number classification (the UTF-8 check
 * it relies on is text_utf8_check(), tested in test_text.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "format/safetensors/jscan.h"
#include "suites.h"

/* Scan a whole document; 0 when it is valid JSON, else -1 with the
 * error message in *msg. */
static int
scan_all(const char *doc, size_t len, unsigned depth, const char **msg)
{
	struct jscan s;
	struct jscan_tok t;

	jscan_init(&s, doc, len, depth);
	for (;;) {
		enum jscan_type ty = jscan_next(&s, &t);

		if (ty == JSCAN_END)
			return 0;
		if (ty == JSCAN_ERROR) {
			*msg = s.err_msg;
			return -1;
		}
	}
}

static void
expect_valid(const char *doc)
{
	const char *msg = NULL;

	ck_assert_msg(scan_all(doc, strlen(doc), 127, &msg) == 0,
		      "%s: %s", doc, msg);
}

static void
expect_invalid(const char *doc, const char *want)
{
	const char *msg = NULL;

	ck_assert_msg(scan_all(doc, strlen(doc), 127, &msg) < 0,
		      "accepted %s", doc);
	if (want)
		ck_assert_msg(strstr(msg, want), "%s: got \"%s\", want \"%s\"",
			      doc, msg, want);
}

START_TEST(test_tokens)
{
	static const char doc[] = " {\"k\" : [1, -2.5e3, \"s\\n\", true, "
				  "false, null, {}]}\r\n";
	static const enum jscan_type want[] = {
		JSCAN_OBJECT, JSCAN_KEY, JSCAN_ARRAY, JSCAN_NUMBER,
		JSCAN_NUMBER, JSCAN_STRING, JSCAN_TRUE, JSCAN_FALSE,
		JSCAN_NULL, JSCAN_OBJECT, JSCAN_OBJECT_END, JSCAN_ARRAY_END,
		JSCAN_OBJECT_END, JSCAN_END, JSCAN_END,
	};
	struct jscan s;
	struct jscan_tok t;

	jscan_init(&s, doc, sizeof(doc) - 1, 127);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_int_eq(jscan_next(&s, &t), want[i]);
		if (i == 1) {
			ck_assert_uint_eq(t.len, 1);
			ck_assert_int_eq(t.s[0], 'k');
			ck_assert_uint_eq(t.pos, 2);
		}
		if (i == 3) {
			ck_assert(t.is_uint);
			ck_assert_uint_eq(t.uint, 1);
		}
		if (i == 4) {
			ck_assert(!t.is_uint);
			ck_assert_uint_eq(t.len, 6);
		}
		if (i == 5)
			ck_assert(t.escaped);
	}
}
END_TEST

START_TEST(test_grammar)
{
	const char *msg = NULL;

	/* NUL padding after the value */
	ck_assert_int_eq(scan_all("{}\0", 3, 127, &msg), -1);
	ck_assert_str_eq(msg, "trailing characters");
	expect_valid("{}");
	expect_valid(" \t\n\r[] \t\n\r");
	expect_valid("0");
	expect_valid("\"\"");
	expect_valid("[[],[{}],{\"a\":[]}]");
	expect_invalid("", "EOF while parsing a value");
	expect_invalid(" ", "EOF while parsing a value");
	expect_invalid("{}{}", "trailing characters");
	expect_invalid("{} x", "trailing characters");
	expect_invalid("\f{}", "expected value");
	expect_invalid("\xEF\xBB\xBF{}", "expected value");
	expect_invalid("[1,]", "trailing comma");
	expect_invalid("{\"a\":1,}", "trailing comma");
	expect_invalid("{,}", "key must be a string");
	expect_invalid("{1:2}", "key must be a string");
	expect_invalid("{\"a\" 1}", "expected `:`");
	expect_invalid("{\"a\":1 \"b\":2}", "expected `,` or `}`");
	expect_invalid("[1 2]", "expected `,` or `]`");
	expect_invalid("[1}", "expected `,` or `]`");
	expect_invalid("{\"a\":1]", "expected `,` or `}`");
	expect_invalid("[", "EOF while parsing a value");
	expect_invalid("[1", "EOF while parsing a list");
	expect_invalid("{\"a\":1", "EOF while parsing an object");
	expect_invalid("{\"a\"", "EOF while parsing an object");
	expect_invalid("tru", "EOF while parsing a value");
	expect_invalid("nul", "EOF while parsing a value");
	expect_invalid("True", "expected value");
	expect_invalid("nulL", "expected ident");
	expect_invalid("'a'", "expected value");
}
END_TEST

START_TEST(test_depth)
{
	char doc[600];
	const char *msg = NULL;
	size_t n;

	/* 127 nested arrays: ok; 128: the 128th opening fails */
	for (unsigned d = 126; d <= 129; d++) {
		n = 0;
		for (unsigned i = 0; i < d; i++)
			doc[n++] = '[';
		for (unsigned i = 0; i < d; i++)
			doc[n++] = ']';
		if (d <= 127) {
			ck_assert_int_eq(scan_all(doc, n, 127, &msg), 0);
		} else {
			ck_assert_int_eq(scan_all(doc, n, 127, &msg), -1);
			ck_assert_str_eq(msg, "recursion limit exceeded");
		}
	}
	/* the limit is clamped to JSCAN_MAX_DEPTH */
	n = 0;
	for (unsigned i = 0; i < 129; i++)
		doc[n++] = '[';
	ck_assert_int_eq(scan_all(doc, n, 1000, &msg), -1);
	ck_assert_str_eq(msg, "recursion limit exceeded");
}
END_TEST

START_TEST(test_strings)
{
	expect_valid("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041 \\u00e9\"");
	expect_valid("\"\\ud83d\\ude00\"");
	expect_valid("\"\\uD83D\\uDE00\"");
	expect_valid("\"\x7f \xc3\xa9 \xe6\x97\xa5\"");
	expect_valid("\"\\u0000\"");
	expect_invalid("\"\x01\"", "control character");
	expect_invalid("\"a\nb\"", "control character");
	expect_invalid("\"\t\"", "control character");
	expect_invalid("\"\\x\"", "invalid escape");
	expect_invalid("\"\\U0041\"", "invalid escape");
	expect_invalid("\"\\u00G1\"", "invalid escape");
	expect_invalid("[\"\\u12\"]", "invalid escape");
	/* fewer than 4 bytes left in the input: serde_json says EOF */
	expect_invalid("\"\\u12\"", "EOF while parsing a string");
	expect_invalid("\"\\u12", "EOF while parsing a string");
	expect_invalid("\"abc", "EOF while parsing a string");
	expect_invalid("\"\\", "EOF while parsing a string");
	expect_invalid("\"\\ud800\"", "unexpected end of hex escape");
	expect_invalid("\"\\ud800x\"", "unexpected end of hex escape");
	expect_invalid("\"\\ud800\\n\"", "unexpected end of hex escape");
	expect_invalid("\"\\ud800\\u0041\"", "lone leading surrogate");
	expect_invalid("\"\\ud800\\ud800\"", "lone leading surrogate");
	expect_invalid("\"\\udc00\"", "lone leading surrogate");
	expect_invalid("\"\\ude00\\ud83d\"", "lone leading surrogate");
}
END_TEST

static void
expect_unescape(const char *raw, const char *want, size_t want_len)
{
	char out[64];
	size_t n = jscan_unescape(raw, strlen(raw), out, sizeof(out));

	ck_assert_uint_eq(n, want_len);
	ck_assert(memcmp(out, want, want_len) == 0);
}

START_TEST(test_unescape)
{
	char small[3];

	expect_unescape("plain", "plain", 5);
	expect_unescape("a\\/b", "a/b", 3);
	expect_unescape("\\\"\\\\\\b\\f\\n\\r\\t", "\"\\\b\f\n\r\t", 7);
	expect_unescape("\\u0000", "\0", 1);
	expect_unescape("\\u005f_metadata__", "__metadata__", 12);
	expect_unescape("\\u00e9", "\xc3\xa9", 2);
	expect_unescape("\\u65e5", "\xe6\x97\xa5", 3);
	expect_unescape("\\ud83d\\ude00!", "\xf0\x9f\x98\x80!", 5);
	expect_unescape("\\uDBFF\\uDFFF", "\xf4\x8f\xbf\xbf", 4);
	/* a short buffer gets a prefix; the full length is returned */
	ck_assert_uint_eq(jscan_unescape("abc\\u00e9", 9, small, 3), 5);
	ck_assert(memcmp(small, "abc", 3) == 0);
}
END_TEST

static void
expect_number(const char *doc, int is_uint, uint64_t v)
{
	struct jscan s;
	struct jscan_tok t;

	jscan_init(&s, doc, strlen(doc), 127);
	ck_assert_msg(jscan_next(&s, &t) == JSCAN_NUMBER, "%s: %s", doc,
		      s.err_msg ? s.err_msg : "not a number");
	ck_assert_msg(t.is_uint == is_uint, "%s", doc);
	if (is_uint)
		ck_assert_uint_eq(t.uint, v);
	ck_assert_uint_eq(t.len, strlen(doc));
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_END);
}

START_TEST(test_numbers)
{
	char big[420];

	expect_number("0", 1, 0);
	expect_number("7", 1, 7);
	expect_number("18446744073709551615", 1, UINT64_MAX);
	expect_number("18446744073709551616", 0, 0);	/* becomes f64 */
	expect_number("-0", 0, 0);			/* f64 -0.0 */
	expect_number("-1", 0, 0);
	expect_number("1.0", 0, 0);
	expect_number("1e0", 0, 0);
	expect_number("1E+2", 0, 0);
	expect_number("1e-400", 0, 0);			/* underflow is fine */
	expect_number("-1.5e-3", 0, 0);
	expect_number("1.7976931348623157e308", 0, 0);
	expect_number("0e99999999999", 0, 0);		/* zero significand */
	expect_number("1e-99999999999", 0, 0);
	expect_invalid("1e400", "number out of range");
	expect_invalid("-1e400", "number out of range");
	expect_invalid("1.8e308", "number out of range");
	expect_invalid("1e99999999999", "number out of range");
	expect_invalid("01", "invalid number");
	expect_invalid("-01", "invalid number");
	expect_invalid("+1", "expected value");
	expect_invalid(".5", "expected value");
	expect_invalid("1.", "EOF while parsing a value");
	expect_invalid("[1.]", "invalid number");
	expect_invalid("1.e5", "invalid number");
	expect_invalid("1e", "EOF while parsing a value");
	expect_invalid("[1e]", "invalid number");
	expect_invalid("[1e+]", "invalid number");
	expect_invalid("-", "EOF while parsing a value");
	expect_invalid("[-]", "invalid number");
	expect_invalid("NaN", "expected value");
	expect_invalid("Infinity", "expected value");
	expect_invalid("-Infinity", "invalid number");
	expect_invalid("[0x10]", "expected `,` or `]`");

	/* 400-digit integers: f64 overflow, "number out of range" */
	memset(big, '9', 400);
	big[400] = '\0';
	expect_invalid(big, "number out of range");
	big[0] = '-';
	expect_invalid(big, "number out of range");
	/* 300 digits is still finite */
	memset(big, '1', 300);
	big[300] = '\0';
	expect_number(big, 0, 0);
	/* ... and so is a long fraction */
	memcpy(big, "0.", 2);
	expect_number(big, 0, 0);
}
END_TEST

START_TEST(test_skip)
{
	static const char doc[] = "[{\"a\":[1,{\"b\":[]}]},2]";
	struct jscan s;
	struct jscan_tok t;

	jscan_init(&s, doc, sizeof(doc) - 1, 127);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_ARRAY);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_OBJECT);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_KEY);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_ARRAY);
	ck_assert_uint_eq(s.depth, 3);
	ck_assert_int_eq(jscan_skip_to(&s, 1), 0);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_NUMBER);
	ck_assert_uint_eq(t.uint, 2);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_ARRAY_END);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_END);

	/* skipping still checks the syntax */
	jscan_init(&s, "[[1,]]", 6, 127);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_ARRAY);
	ck_assert_int_eq(jscan_next(&s, &t), JSCAN_ARRAY);
	ck_assert_int_eq(jscan_skip_to(&s, 0), -1);
	ck_assert_str_eq(s.err_msg, "trailing comma");
}
END_TEST

Suite *
jscan_suite(void)
{
	Suite *s = suite_create("jscan");
	TCase *tc = tcase_create("scanner");

	tcase_add_test(tc, test_tokens);
	tcase_add_test(tc, test_grammar);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_unescape);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_skip);
	suite_add_tcase(s, tc);
	return s;
}
