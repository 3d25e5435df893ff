# kube/wback: see kube/local.mk. The pure core of the status write-back:
# merge patches and the Workflow status schemas (kube/patch.c).
libkube_a_SOURCES += kube/patch.c

check_PROGRAMS += tests/unit/check_kube_patch
TESTS += tests/unit/check_kube_patch
tests_unit_check_kube_patch_SOURCES = tests/unit/check_kube_patch.c tests/unit/unit.h
tests_unit_check_kube_patch_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kube_patch_LDADD = $(KUBE_LIBS) $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/fuzz/fuzz_kube_patch_replay
tests_fuzz_fuzz_kube_patch_replay_SOURCES = tests/fuzz/fuzz_kube_patch.c tests/fuzz/replay.c
tests_fuzz_fuzz_kube_patch_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_kube_patch_replay_LDADD = $(KUBE_LIBS) $(STORE_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_kube_patch.fuzz
EXTRA_DIST += tests/fuzz/fuzz_kube_patch.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_kube_patch
# patch.c is compiled into the target so that it is instrumented.
tests_fuzz_fuzz_kube_patch_SOURCES = tests/fuzz/fuzz_kube_patch.c kube/patch.c
tests_fuzz_fuzz_kube_patch_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_kube_patch_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_kube_patch_LDADD = $(STORE_LIBS) $(COMMON_LIBS)
endif
