# kube/watchdec: see kube/local.mk.
# The watch-stream decoder and the list pages' reader: the API server's
# answers split into events, each checked before the watcher sees it.
libkube_a_SOURCES += kube/watchdec.c

check_PROGRAMS += tests/unit/check_kube_watch
TESTS += tests/unit/check_kube_watch
tests_unit_check_kube_watch_SOURCES = tests/unit/check_kube_watch.c tests/unit/unit.h
tests_unit_check_kube_watch_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kube_watch_LDADD = $(KUBE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The decoder's fuzz target (see tests/fuzz/local.mk): the input is a
# watch stream cut in two at a place its first byte gives, and a list page.
check_PROGRAMS += tests/fuzz/fuzz_kube_watch_replay
tests_fuzz_fuzz_kube_watch_replay_SOURCES = tests/fuzz/fuzz_kube_watch.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h
tests_fuzz_fuzz_kube_watch_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_kube_watch_replay_LDADD = $(KUBE_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_kube_watch.fuzz
EXTRA_DIST += tests/fuzz/fuzz_kube_watch.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_kube_watch
tests_fuzz_fuzz_kube_watch_SOURCES = tests/fuzz/fuzz_kube_watch.c tests/fuzz/fuzz.h \
	kube/watchdec.c kube/kube-internal.h
tests_fuzz_fuzz_kube_watch_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_kube_watch_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_kube_watch_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS)
endif
