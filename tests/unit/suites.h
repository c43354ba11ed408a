/* suites.h - the Check suites linked into the unit test runners. */
#ifndef STFS_TEST_SUITES_H
#define STFS_TEST_SUITES_H

#include <check.h>

Suite *jscan_suite(void);
Suite *header_suite(void);
Suite *shards_suite(void);	/* test_shards.c */

#endif
