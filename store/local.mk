noinst_LIBRARIES += libstore.a
libstore_a_SOURCES = \
	store/store.h store/store-internal.h \
	store/kinds.c store/schema.c store/writer.c store/reader.c store/readonly.c store/selector.c \
	store/object.c store/objcache.c store/ops.c store/lease.c store/checkpoint.c store/walbuf.c \
	store/validate.c store/validate-values.c store/crd-tables.c store/validate-internal.h
libstore_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
STORE_LIBS = libstore.a $(SQLITE_LIBS)

check_PROGRAMS += tests/unit/check_store
TESTS += tests/unit/check_store
tests_unit_check_store_SOURCES = tests/unit/check_store.c tests/unit/unit.h tests/unit/store_fixture.h
tests_unit_check_store_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_check_store_LDADD = $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_store_kube
TESTS += tests/unit/check_store_kube
tests_unit_check_store_kube_SOURCES = tests/unit/check_store_kube.c tests/unit/unit.h \
	tests/unit/store_fixture.h
tests_unit_check_store_kube_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_check_store_kube_LDADD = $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_objcache
TESTS += tests/unit/check_objcache
tests_unit_check_objcache_SOURCES = tests/unit/check_objcache.c tests/unit/unit.h \
	tests/unit/store_fixture.h
tests_unit_check_objcache_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_check_objcache_LDADD = $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_leases
TESTS += tests/unit/check_leases
tests_unit_check_leases_SOURCES = tests/unit/check_leases.c tests/unit/unit.h tests/unit/store_fixture.h
tests_unit_check_leases_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_check_leases_LDADD = $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_store_readonly
TESTS += tests/unit/check_store_readonly
tests_unit_check_store_readonly_SOURCES = tests/unit/check_store_readonly.c tests/unit/unit.h \
	tests/unit/store_fixture.h
tests_unit_check_store_readonly_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_check_store_readonly_LDADD = $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_store_async
TESTS += tests/unit/check_store_async
tests_unit_check_store_async_SOURCES = tests/unit/check_store_async.c tests/unit/unit.h \
	tests/unit/store_fixture.h
tests_unit_check_store_async_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_store_async_LDADD = $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# Label selector parser fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_selector_replay
tests_fuzz_fuzz_selector_replay_SOURCES = tests/fuzz/fuzz_selector.c tests/fuzz/replay.c
tests_fuzz_fuzz_selector_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_selector_replay_LDADD = $(STORE_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_selector.fuzz
EXTRA_DIST += tests/fuzz/fuzz_selector.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_selector
# selector.c is compiled into the target so that it is instrumented.
tests_fuzz_fuzz_selector_SOURCES = tests/fuzz/fuzz_selector.c store/selector.c
tests_fuzz_fuzz_selector_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_selector_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_selector_LDADD = $(JANSSON_LIBS)
endif

# Benchmark: never part of make check. `make bench` builds and runs it.
EXTRA_PROGRAMS += tests/bench/store/bench_store
tests_bench_store_bench_store_SOURCES = tests/bench/store/bench_store.c
tests_bench_store_bench_store_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_bench_store_bench_store_LDADD = $(STORE_LIBS) $(COMMON_LIBS)
EXTRA_DIST += tests/bench/store/run.sh tests/bench/store/apply.sh
CLEANFILES += tests/bench/store/bench_store
bench: bench-store
bench-store: tests/bench/store/bench_store ironbelld ironbell
	top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/tests/bench/store/run.sh
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' $(SHELL) $(top_srcdir)/tests/bench/store/apply.sh
.PHONY: bench-store

include store/validate.mk
