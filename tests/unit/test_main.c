/* test_main.c - the one Check runner of every unit test executable.
 *
 * meson builds it once per executable with UNIT_SUITES defined to the
 * suite constructors of that executable (e.g. -DUNIT_SUITES=npy_suite), so
 * each area shows up under its own test name and a suite that fails to
 * build or crashes is named.  A suite listed here but not linked, or a
 * test file renamed without its meson line, fails the build: nothing
 * vanishes silently.  CK_FORK=no (the valgrind setup) runs the cases in
 * this process.
 */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

#ifndef UNIT_SUITES
#error "UNIT_SUITES must name the suites of this executable"
#endif

int
main(void)
{
	static Suite *(*const suites[])(void) = { UNIT_SUITES };
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
