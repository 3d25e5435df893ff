# The follower of ironbelld's admin API (the hook's "api" source): the
# thread (follow-api.c, libcurl) and the decoder of the API's answers
# (watchline.c, pure). Whatever links the core (the shared object)
# also links $(IBKEA_API_LIBS) and compiles with $(IBKEA_API_CFLAGS);
# libibkea.a's users get them through IBKEA_LIBS.
IBKEA_C_FILES += dhcp/kea/follow-api.c dhcp/kea/watchline.c
IBKEA_API_CFLAGS = $(CURL_CFLAGS) $(JANSSON_CFLAGS)
IBKEA_API_LIBS = $(CURL_LIBS)
libibkea_a_CFLAGS += $(CURL_CFLAGS)
IBKEA_LIBS += $(IBKEA_API_LIBS)

# The decoder's unit test: malformed lines and lists beside good ones.
check_PROGRAMS += tests/unit/check_kea_watch
TESTS += tests/unit/check_kea_watch
tests_unit_check_kea_watch_SOURCES = tests/unit/check_kea_watch.c tests/unit/unit.h \
	dhcp/kea/watchline.c dhcp/kea/kea-internal.h
tests_unit_check_kea_watch_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kea_watch_LDADD = $(COMMON_LIBS) $(CHECK_LIBS)

# The decoder's fuzz target (see tests/fuzz/local.mk): the input is cut
# into lines, each decoded as a watch line, and read whole as a list.
check_PROGRAMS += tests/fuzz/fuzz_kea_watch_replay
tests_fuzz_fuzz_kea_watch_replay_SOURCES = tests/fuzz/fuzz_kea_watch.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h dhcp/kea/watchline.c
tests_fuzz_fuzz_kea_watch_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_kea_watch_replay_LDADD = $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_kea_watch.fuzz
EXTRA_DIST += tests/fuzz/fuzz_kea_watch.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_kea_watch
tests_fuzz_fuzz_kea_watch_SOURCES = tests/fuzz/fuzz_kea_watch.c tests/fuzz/fuzz.h \
	dhcp/kea/watchline.c
tests_fuzz_fuzz_kea_watch_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_kea_watch_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_kea_watch_LDADD = $(COMMON_LIBS)
endif

# The follower against a real ironbelld (TLS, a token), through the
# probe program of the core.
TESTS += tests/integration/test_kea_api.sh
EXTRA_DIST += tests/integration/test_kea_api.sh
