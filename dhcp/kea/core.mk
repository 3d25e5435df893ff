# The hook core: parameters, the table and the answers, the store follower.
IBKEA_C_FILES += dhcp/kea/params.c dhcp/kea/core.c dhcp/kea/follow-store.c

# The core as a static library, for the unit tests and the probe (the
# shared object compiles the same files again, position independent).
noinst_LIBRARIES += libibkea.a
libibkea_a_SOURCES = dhcp/kea/ironbell-kea.h dhcp/kea/kea-internal.h $(IBKEA_C_FILES)
libibkea_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
IBKEA_LIBS = libibkea.a $(DHCP_LIBS) $(STORE_LIBS) $(COMMON_LIBS)

check_PROGRAMS += tests/unit/check_kea_core
TESTS += tests/unit/check_kea_core
tests_unit_check_kea_core_SOURCES = tests/unit/check_kea_core.c tests/unit/unit.h \
	tests/unit/dhcp_builder.h
tests_unit_check_kea_core_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kea_core_LDADD = $(IBKEA_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_kea_params
TESTS += tests/unit/check_kea_params
tests_unit_check_kea_params_SOURCES = tests/unit/check_kea_params.c tests/unit/unit.h
tests_unit_check_kea_params_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kea_params_LDADD = $(IBKEA_LIBS) $(CHECK_LIBS)

# The parameters' fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_kea_params_replay
tests_fuzz_fuzz_kea_params_replay_SOURCES = tests/fuzz/fuzz_kea_params.c tests/fuzz/replay.c
tests_fuzz_fuzz_kea_params_replay_LDADD = $(IBKEA_LIBS)
TESTS += tests/fuzz/fuzz_kea_params.fuzz
EXTRA_DIST += tests/fuzz/fuzz_kea_params.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_kea_params
# The parser is compiled into the target so that it is instrumented.
tests_fuzz_fuzz_kea_params_SOURCES = tests/fuzz/fuzz_kea_params.c dhcp/kea/params.c
tests_fuzz_fuzz_kea_params_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_kea_params_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_kea_params_LDADD = $(DHCP_LIBS) $(COMMON_LIBS)
endif

# The core without Kea, driven line by line by the integration tests.
check_PROGRAMS += tests/kea/ibkea-probe
tests_kea_ibkea_probe_SOURCES = tests/kea/ibkea-probe.c
tests_kea_ibkea_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_kea_ibkea_probe_LDADD = $(IBKEA_LIBS)
# The core on a real ironbelld's store, through the probe.
TESTS += tests/integration/test_kea_store.sh
EXTRA_DIST += tests/integration/test_kea_store.sh

check_PROGRAMS += tests/unit/check_kea_follow
TESTS += tests/unit/check_kea_follow
tests_unit_check_kea_follow_SOURCES = tests/unit/check_kea_follow.c tests/unit/unit.h \
	tests/unit/store_fixture.h
tests_unit_check_kea_follow_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kea_follow_LDADD = $(IBKEA_LIBS) $(CHECK_LIBS)
