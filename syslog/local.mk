# The syslog receiver: the parser and rate limiter (pure) and the thread.
noinst_LIBRARIES += libsyslog.a
libsyslog_a_SOURCES = syslog/syslog-codec.h syslog/syslog.h syslog/codec.c syslog/server.c
libsyslog_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
SYSLOG_LIBS = libsyslog.a

check_PROGRAMS += tests/unit/check_syslog
TESTS += tests/unit/check_syslog
tests_unit_check_syslog_SOURCES = tests/unit/check_syslog.c tests/unit/unit.h tests/unit/store_fixture.h
tests_unit_check_syslog_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_syslog_LDADD = $(SYSLOG_LIBS) $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The message parser's fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_syslog_replay
tests_fuzz_fuzz_syslog_replay_SOURCES = tests/fuzz/fuzz_syslog.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_syslog_replay_LDADD = $(SYSLOG_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_syslog.fuzz
EXTRA_DIST += tests/fuzz/fuzz_syslog.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_syslog
tests_fuzz_fuzz_syslog_SOURCES = tests/fuzz/fuzz_syslog.c tests/fuzz/fuzz.h syslog/codec.c
tests_fuzz_fuzz_syslog_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_syslog_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_syslog_LDADD = $(COMMON_LIBS)
endif

# From a datagram to the JSON of its event (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_syslog_event_replay
tests_fuzz_fuzz_syslog_event_replay_SOURCES = tests/fuzz/fuzz_syslog_event.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_syslog_event_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_syslog_event_replay_LDADD = $(SYSLOG_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_syslog_event.fuzz
EXTRA_DIST += tests/fuzz/fuzz_syslog_event.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_syslog_event
# The parser and the UTF-8 repair are compiled in, so that they are instrumented.
tests_fuzz_fuzz_syslog_event_SOURCES = tests/fuzz/fuzz_syslog_event.c tests/fuzz/fuzz.h syslog/codec.c common/utf8.c
tests_fuzz_fuzz_syslog_event_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_syslog_event_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_syslog_event_LDADD = $(COMMON_LIBS)
endif

# logger (util-linux) against the real daemon; ironbell logs.
TESTS += tests/integration/test_syslog.sh
EXTRA_DIST += tests/integration/test_syslog.sh
