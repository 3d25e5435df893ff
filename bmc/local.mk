# BMC control: for now the IPMI 2.0 RMCP+ client's codec and crypto
# (pure, bmc/ipmi/); the session thread and the controllers come later.
noinst_LIBRARIES += libbmc.a
libbmc_a_SOURCES = bmc/bmc.h bmc/ipmi/ipmi.h bmc/ipmi/wr.h bmc/ipmi/rmcp.c bmc/ipmi/msg.c \
	bmc/ipmi/rakp.c
libbmc_a_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
BMC_LIBS = libbmc.a $(CRYPTO_LIBS)

check_PROGRAMS += tests/unit/check_ipmi
TESTS += tests/unit/check_ipmi
tests_unit_check_ipmi_SOURCES = tests/unit/check_ipmi.c tests/unit/unit.h
tests_unit_check_ipmi_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(CRYPTO_CFLAGS)
tests_unit_check_ipmi_LDADD = $(BMC_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The RMCP+ reply parser's fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_ipmi_replay
tests_fuzz_fuzz_ipmi_replay_SOURCES = tests/fuzz/fuzz_ipmi.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_ipmi_replay_LDADD = $(BMC_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_ipmi.fuzz
EXTRA_DIST += tests/fuzz/fuzz_ipmi.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_ipmi
tests_fuzz_fuzz_ipmi_SOURCES = tests/fuzz/fuzz_ipmi.c tests/fuzz/fuzz.h bmc/ipmi/rmcp.c \
	bmc/ipmi/msg.c bmc/ipmi/rakp.c
tests_fuzz_fuzz_ipmi_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_ipmi_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_ipmi_LDADD = $(CRYPTO_LIBS) $(COMMON_LIBS)
endif
