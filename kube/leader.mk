# kube/leader: leader election with a coordination.k8s.io/v1 Lease. The
# decision core (lease.c) is pure and tested alone; the elector thread
# (leader.c) runs it against the API through client.c.
libkube_a_SOURCES += kube/lease.c kube/leader.c

check_PROGRAMS += tests/unit/check_kube_leader
TESTS += tests/unit/check_kube_leader
tests_unit_check_kube_leader_SOURCES = tests/unit/check_kube_leader.c tests/unit/unit.h \
	kube/lease.c kube/kube-internal.h
tests_unit_check_kube_leader_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kube_leader_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)

# The elector thread against a fake API server that the test defines
# (kube_session_* and kube_request), so it links leader.c, not libkube.a.
check_PROGRAMS += tests/unit/check_kube_elector
TESTS += tests/unit/check_kube_elector
tests_unit_check_kube_elector_SOURCES = tests/unit/check_kube_elector.c tests/unit/unit.h \
	kube/leader.c kube/lease.c kube/kube-internal.h
tests_unit_check_kube_elector_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kube_elector_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)

# The Lease parser's fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_lease_replay
tests_fuzz_fuzz_lease_replay_SOURCES = tests/fuzz/fuzz_lease.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h kube/lease.c
tests_fuzz_fuzz_lease_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_lease_replay_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS)
TESTS += tests/fuzz/fuzz_lease.fuzz
EXTRA_DIST += tests/fuzz/fuzz_lease.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_lease
tests_fuzz_fuzz_lease_SOURCES = tests/fuzz/fuzz_lease.c tests/fuzz/fuzz.h kube/lease.c
tests_fuzz_fuzz_lease_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_lease_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_lease_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS)
endif
