# Validation tests.
check_PROGRAMS += tests/unit/check_validate
TESTS += tests/unit/check_validate
tests_unit_check_validate_SOURCES = tests/unit/check_validate.c tests/unit/unit.h
tests_unit_check_validate_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_validate_LDADD = $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)
EXTRA_DIST += tests/unit/fixtures
