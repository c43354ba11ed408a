/* test_main.c - one Check runner for the suites named at build time.
 *
 * meson builds it once per test executable with UNIT_CORE and/or
 * UNIT_SHARDS defined, so a suite that fails to build or crashes shows up
 * under its own test name.
 */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

int
main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

#ifdef UNIT_CORE
	srunner_add_suite(sr, jscan_suite());
	srunner_add_suite(sr, header_suite());
#endif
#ifdef UNIT_SHARDS
	srunner_add_suite(sr, shards_suite());
#endif
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
