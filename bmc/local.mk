# BMC control: the IPMI 2.0 RMCP+ client (bmc/ipmi/: the pure codec and
# crypto, and the non-blocking engine), the Redfish client (bmc/redfish/,
# libcurl multi + jansson), both behind bmc/provider.h.
noinst_LIBRARIES += libbmc.a
libbmc_a_SOURCES = bmc/bmc.h bmc/provider.h bmc/provider.c bmc/settings.c \
	bmc/ipmi/ipmi.h bmc/ipmi/wr.h bmc/ipmi/rmcp.c bmc/ipmi/msg.c bmc/ipmi/rakp.c \
	bmc/ipmi/engine.c \
	bmc/redfish/engine.c
libbmc_a_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS)
BMC_LIBS = libbmc.a $(CRYPTO_LIBS) $(CURL_LIBS) $(JANSSON_LIBS)

# The engines without the daemon: the tests' and the benchmark's client.
check_PROGRAMS += tests/bmc/bmc-call
tests_bmc_bmc_call_SOURCES = tests/bmc/bmc-call.c
tests_bmc_bmc_call_CFLAGS = $(AM_CFLAGS)
tests_bmc_bmc_call_LDADD = $(BMC_LIBS) $(COMMON_LIBS)

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

# TEMPORARY, until bmc/server.c is merged: delete with bmc/server-stub.c.
libbmc_a_SOURCES += bmc/server-stub.c
