# iPXE scripts, binaries, OSIE files and the HTTP Boot answer: the pure
# parts (routes, Range, templates, scripts); daemon/public/public.c is the shell.
noinst_LIBRARIES += libipxe.a
libipxe_a_SOURCES = ipxe/ipxe.h ipxe/ipxe-internal.h \
	ipxe/route.c ipxe/template.c ipxe/script.c ipxe/validators.c
libipxe_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
IPXE_LIBS = libipxe.a

check_PROGRAMS += tests/unit/check_ipxe
TESTS += tests/unit/check_ipxe
tests_unit_check_ipxe_SOURCES = tests/unit/check_ipxe.c tests/unit/unit.h
tests_unit_check_ipxe_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_ipxe_LDADD = $(IPXE_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)

# The path, Range and template parsers' fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_ipxe_replay
tests_fuzz_fuzz_ipxe_replay_SOURCES = tests/fuzz/fuzz_ipxe.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_ipxe_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_ipxe_replay_LDADD = $(IPXE_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS)
TESTS += tests/fuzz/fuzz_ipxe.fuzz
EXTRA_DIST += tests/fuzz/fuzz_ipxe.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_ipxe
tests_fuzz_fuzz_ipxe_SOURCES = tests/fuzz/fuzz_ipxe.c tests/fuzz/fuzz.h \
	ipxe/route.c ipxe/template.c ipxe/script.c ipxe/validators.c common/mac.c
tests_fuzz_fuzz_ipxe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_ipxe_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_ipxe_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS)
endif

# The conditional request headers' fuzz target (ETag, dates, If-Range).
check_PROGRAMS += tests/fuzz/fuzz_http_validators_replay
tests_fuzz_fuzz_http_validators_replay_SOURCES = tests/fuzz/fuzz_http_validators.c \
	tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_http_validators_replay_LDADD = $(IPXE_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_http_validators.fuzz
EXTRA_DIST += tests/fuzz/fuzz_http_validators.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_http_validators
tests_fuzz_fuzz_http_validators_SOURCES = tests/fuzz/fuzz_http_validators.c tests/fuzz/fuzz.h \
	ipxe/validators.c
tests_fuzz_fuzz_http_validators_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_http_validators_LDFLAGS = $(FUZZ_FLAGS)
endif

# The routes with curl against the real daemon (loopback, no root needed).
TESTS += tests/integration/test_ipxe_http.sh
EXTRA_DIST += tests/integration/test_ipxe_http.sh
# Validators, 304, If-Range and the per-client download bound, with curl.
TESTS += tests/integration/test_osie_files.sh
EXTRA_DIST += tests/integration/test_osie_files.sh
