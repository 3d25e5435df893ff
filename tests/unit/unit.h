/* unit — shared glue for the Check unit tests: every suite prints TAP on
 * stdout, so the test driver counts each test case on its own. */
#pragma once

#include <check.h>
#include <stdio.h>
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

/* The path of tests/unit/fixtures/NAME under $top_srcdir (or "."). */
static inline void unit_fixture_path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/tests/unit/fixtures/%s", getenv("top_srcdir") ?: ".", name);
}

/* The first max bytes of fixture NAME, NUL-terminated, in a heap buffer
 * the caller frees; its length in *ret_len. Fails the test when the file
 * cannot be opened. */
static inline char *unit_fixture(const char *name, size_t max, size_t *ret_len)
{
	char path[4096];
	unit_fixture_path(path, sizeof(path), name);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f, "%s", path);
	char *s = malloc(max + 1);
	ck_assert_ptr_nonnull(s);
	size_t n = fread(s, 1, max, f);
	fclose(f);
	s[n] = '\0';
	*ret_len = n;
	return s;
}
