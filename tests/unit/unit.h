/* unit — shared glue for the Check unit tests: every suite prints TAP on
 * stdout, so the test driver counts each test case on its own. */
#pragma once

#include <check.h>
#include <stdlib.h>

static inline int unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_set_tap(sr, "-");
	srunner_run_all(sr, CK_SILENT);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Adds a test case named after the function. */
#define UNIT_TEST(tc, fn) tcase_add_test(tc, fn)
