# The JSON decoder's tests and fuzz target (see tests/fuzz/local.mk); the
# decoder itself is in libcommon (common/local.mk).
check_PROGRAMS += tests/unit/check_jsondec
TESTS += tests/unit/check_jsondec
tests_unit_check_jsondec_SOURCES = tests/unit/check_jsondec.c tests/unit/unit.h
tests_unit_check_jsondec_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_jsondec_LDADD = $(COMMON_LIBS) $(CHECK_LIBS)

# make check replays the seed corpus tests/fuzz/corpus/fuzz_jsondec/.
check_PROGRAMS += tests/fuzz/fuzz_jsondec_replay
TESTS += tests/fuzz/fuzz_jsondec.fuzz
EXTRA_DIST += tests/fuzz/fuzz_jsondec.fuzz
tests_fuzz_fuzz_jsondec_replay_SOURCES = tests/fuzz/fuzz_jsondec.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_jsondec_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_jsondec_replay_LDADD = $(COMMON_LIBS)

if ENABLE_FUZZ
# The code under test is compiled in, so libFuzzer sees its coverage.
noinst_PROGRAMS += tests/fuzz/fuzz_jsondec
tests_fuzz_fuzz_jsondec_SOURCES = tests/fuzz/fuzz_jsondec.c tests/fuzz/fuzz.h \
	common/jsondec.c common/utf8.c
tests_fuzz_fuzz_jsondec_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_jsondec_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_jsondec_LDADD = $(JANSSON_LIBS)
endif

check_PROGRAMS += tests/unit/check_jsonmem
TESTS += tests/unit/check_jsonmem
tests_unit_check_jsonmem_SOURCES = tests/unit/check_jsonmem.c tests/unit/unit.h
tests_unit_check_jsonmem_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_jsonmem_LDADD = $(COMMON_LIBS) $(CHECK_LIBS)
TESTS += tests/unit/check_jsonmem_off.sh
EXTRA_DIST += tests/unit/check_jsonmem_off.sh
