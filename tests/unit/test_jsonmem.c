/* test_jsonmem.c - jansson's allocations, watched (base/jsonmem.h): a
 * parse whose allocations fail is told, and never reads or writes past
 * a buffer (jansson 2.14's lexer, short of memory, loses a string's
 * closing quote and overruns; ASan and valgrind see it), nor leaves a
 * byte out.  And a text json_dumps() makes short of memory is whole and
 * freed with free(), as its callers do. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonmem.h"
#include "suites.h"

/* the underlying allocator: fails the fail_at-th call from now (0: none) */
static long calls, fail_at;

static void *
failing_malloc(size_t n)
{
	return ++calls == fail_at ? NULL : malloc(n);
}

/* Long strings and keys (the lexer's buffer grows while it reads them),
 * numbers, nesting. */
static const char text[] =
	"{\"quantization_config\": {\"quant_method\": \"fp8\", "
	"\"weight_block_size\": [128, 128], \"activation_scheme\": "
	"\"dynamic\"}, \"a_rather_long_key_that_grows_the_buffer_twice\": "
	"\"and a value of a good many characters, longer than any buffer "
	"the lexer starts with: 0123456789abcdefghijklmnopqrstuvwxyz\", "
	"\"n\": [1, 2.5, -3e7, true, false, null, \"x\"]}";

START_TEST(fail_each)
{
	json_t *ref, *j;
	long n, total;

	jsonmem_watch();
	jsonmem_set_malloc(failing_malloc);
	calls = 0;
	fail_at = 0;
	ref = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(ref);
	total = calls;
	ck_assert_int_gt(total, 10);
	for (n = 1; n <= total; n++) {
		unsigned long before;

		/* a success first: the pool filled again after the last
		 * failure, before the count starts */
		fail_at = 0;
		json_decref(json_string("x"));
		before = jsonmem_failures();
		calls = 0;
		fail_at = n;
		j = json_loads(text, 0, NULL);
		/* told: a failure was counted */
		ck_assert_uint_eq(jsonmem_failures(), before + 1);
		/* and what came back, if anything, is the text's value:
		 * no byte lost (the reserve stood in) */
		ck_assert_msg(!j || json_equal(j, ref),
			      "allocation %ld failed: another value", n);
		json_decref(j);
	}
	/* json_dumps() short of memory: whole, a block free() takes */
	for (n = 1; n <= 40; n++) {
		unsigned long before;
		char *d;

		fail_at = 0;
		json_decref(json_string("x"));
		before = jsonmem_failures();
		calls = 0;
		fail_at = n;
		d = json_dumps(ref, JSON_INDENT(2) | JSON_SORT_KEYS);
		if (jsonmem_failures() != before && d) {
			json_t *back;

			fail_at = 0;
			back = json_loads(d, 0, NULL);
			ck_assert_msg(back && json_equal(back, ref),
				      "dump with allocation %ld failed: "
				      "another text", n);
			json_decref(back);
		}
		free(d);
	}
	fail_at = 0;
	json_decref(ref);
	jsonmem_set_malloc(NULL);
}
END_TEST

Suite *
jsonmem_suite(void)
{
	Suite *s = suite_create("jsonmem");
	TCase *tc = tcase_create("jsonmem");

	tcase_add_test(tc, fail_each);
	suite_add_tcase(s, tc);
	return s;
}
