# Config tests and fuzz target.

# check_config includes daemon/config/config.c itself, to walk its key table (every
# key documented in man/ironbell.yaml.5 and set in etc/ironbell.yaml), so it
# does not link libconfig.a: it compiles the types and the checks beside it.
check_PROGRAMS += tests/unit/check_config
TESTS += tests/unit/check_config
tests_unit_check_config_SOURCES = tests/unit/check_config.c tests/unit/unit.h daemon/config/config-types.c \
	daemon/config/config-checks.c
tests_unit_check_config_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_config_LDADD = $(IPXE_LIBS) $(COMMON_LIBS) $(YAML_LIBS) $(CHECK_LIBS)

# The seed corpus, replayed by make check.
check_PROGRAMS += tests/fuzz/fuzz_config_replay
TESTS += tests/fuzz/fuzz_config.fuzz
EXTRA_DIST += tests/fuzz/fuzz_config.fuzz
tests_fuzz_fuzz_config_replay_SOURCES = tests/fuzz/fuzz_config.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_config_replay_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_config_replay_LDADD = libconfig.a $(IPXE_LIBS) $(COMMON_LIBS) $(YAML_LIBS)

# The libFuzzer binary compiles config.c itself, so the fuzzer sees its
# coverage.
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_config
tests_fuzz_fuzz_config_SOURCES = tests/fuzz/fuzz_config.c tests/fuzz/fuzz.h daemon/config/config.c daemon/config/config-checks.c daemon/config/config-types.c daemon/config/config-internal.h daemon/config/conf.h ipxe/template.c
tests_fuzz_fuzz_config_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_config_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_config_LDADD = $(COMMON_LIBS) $(YAML_LIBS)
endif
