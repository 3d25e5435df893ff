# The watcher: one thread per kind keeping the store equal to the
# cluster, and the part that owns the watchers.
libkube_a_SOURCES += kube/watcher.h kube/rvmap.c kube/watcher.c kube/writer.c kube/kube.c

check_PROGRAMS += tests/unit/check_kube_rvmap
TESTS += tests/unit/check_kube_rvmap
tests_unit_check_kube_rvmap_SOURCES = tests/unit/check_kube_rvmap.c tests/unit/unit.h \
	kube/rvmap.c kube/watcher.h
tests_unit_check_kube_rvmap_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kube_rvmap_LDADD = $(COMMON_LIBS) $(CHECK_LIBS)

# The watcher in ironbelld against the API-server emulator (tests/kube/).
TESTS += tests/integration/test_kube_sync.sh
EXTRA_DIST += tests/integration/test_kube_sync.sh tests/kube/store_equals_api.py
