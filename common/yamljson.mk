# YAML <-> JSON tests and fuzz target (see tests/fuzz/local.mk).

# The dumper, beside the loader (common/yamljson.c, listed in common/local.mk).
libcommon_a_SOURCES += common/yamljson-dump.c common/yamljson-internal.h

check_PROGRAMS += tests/unit/check_yamljson
TESTS += tests/unit/check_yamljson
tests_unit_check_yamljson_SOURCES = tests/unit/check_yamljson.c tests/unit/unit.h
tests_unit_check_yamljson_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_yamljson_LDADD = $(COMMON_LIBS) $(CHECK_LIBS)

# make check replays the seed corpus tests/fuzz/corpus/fuzz_yaml/.
check_PROGRAMS += tests/fuzz/fuzz_yaml_replay
TESTS += tests/fuzz/fuzz_yaml.fuzz
EXTRA_DIST += tests/fuzz/fuzz_yaml.fuzz
tests_fuzz_fuzz_yaml_replay_SOURCES = tests/fuzz/fuzz_yaml.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_yaml_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_yaml_replay_LDADD = $(STORE_LIBS) $(COMMON_LIBS)

if ENABLE_FUZZ
# The code under test is compiled in, so libFuzzer sees its coverage.
noinst_PROGRAMS += tests/fuzz/fuzz_yaml
tests_fuzz_fuzz_yaml_SOURCES = tests/fuzz/fuzz_yaml.c tests/fuzz/fuzz.h \
	common/yamljson.c common/jsonarr.c store/validate.c store/validate-values.c \
	store/crd-tables.c store/kinds.c
tests_fuzz_fuzz_yaml_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_yaml_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_yaml_LDADD = $(COMMON_LIBS)
# and the dumper, which every document that loads goes through.
tests_fuzz_fuzz_yaml_SOURCES += common/yamljson-dump.c common/yamljson-internal.h
endif
