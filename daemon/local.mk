noinst_LIBRARIES += libconfig.a
libconfig_a_SOURCES = daemon/config/config.c daemon/config/config-checks.c daemon/config/config-types.c daemon/config/config-internal.h daemon/config/conf.h
libconfig_a_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)

# The admin API: pure parsing (api.c) and the listener shell (http.c,
# handlers.c, watch.c).
noinst_LIBRARIES += libdaemon.a
libdaemon_a_SOURCES = daemon/api/api.c daemon/api/api.h daemon/api/api-internal.h \
	daemon/http/http.c daemon/api/handlers.c daemon/api/apply.c daemon/api/watch.c daemon/public/public.c daemon/public/public.h daemon/public/files.c daemon/public/public-internal.h
libdaemon_a_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(SYSTEMD_CFLAGS)
# The transport's header: what http.c offers daemon/main.c and the handlers.
libdaemon_a_SOURCES += daemon/http/http.h
# Wider sendfile() calls for the file answers (the executable's sendfile64).
libdaemon_a_SOURCES += daemon/http/sendfile.c
# The public listener's answer cache (the index is driven by a unit test).
libdaemon_a_SOURCES += daemon/public/answers.c daemon/public/answers.h

sbin_PROGRAMS += ironbelld
ironbelld_SOURCES = daemon/main.c daemon/privilege.c daemon/privilege.h
ironbelld_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(SYSTEMD_CFLAGS) $(CAP_CFLAGS)
# libpsx before libcap: its psx_load_syscalls() is the one libcap finds, so
# that a capability change reaches every thread (daemon/privilege.c).
ironbelld_LDADD = libdaemon.a $(DHCP_LIBS) $(TFTP_LIBS) $(SYSLOG_LIBS) $(BMC_LIBS) $(WFGRPC_LIBS) $(KUBE_LIBS) libconfig.a $(IPXE_LIBS) $(METADATA_LIBS) $(STORE_LIBS) $(COMMON_LIBS) $(MHD_LIBS) $(SYSTEMD_LIBS) $(PSX_LIBS) $(CAP_LIBS)

# Admin API unit tests: the route, query, status and header helpers.
check_PROGRAMS += tests/unit/check_api
TESTS += tests/unit/check_api
tests_unit_check_api_SOURCES = tests/unit/check_api.c tests/unit/unit.h
tests_unit_check_api_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_api_LDADD = libdaemon.a $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# Route and query-string parser fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_api_route_replay
tests_fuzz_fuzz_api_route_replay_SOURCES = tests/fuzz/fuzz_api_route.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h
tests_fuzz_fuzz_api_route_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_api_route_replay_LDADD = libdaemon.a $(STORE_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_api_route.fuzz
EXTRA_DIST += tests/fuzz/fuzz_api_route.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_api_route
# api.c, kinds.c and net.c (the host:port parser) are compiled into the
# target so that they are instrumented.
tests_fuzz_fuzz_api_route_SOURCES = tests/fuzz/fuzz_api_route.c tests/fuzz/fuzz.h \
	daemon/api/api.c daemon/api/api.h store/kinds.c common/net.c common/net.h
tests_fuzz_fuzz_api_route_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_api_route_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_api_route_LDADD = $(COMMON_LIBS)
endif

include daemon/config/config.mk

# The configuration turned into each part's settings (daemon/settings.c).
libdaemon_a_SOURCES += daemon/settings.c daemon/settings.h
check_PROGRAMS += tests/unit/check_daemon_settings
TESTS += tests/unit/check_daemon_settings
tests_unit_check_daemon_settings_SOURCES = tests/unit/check_daemon_settings.c tests/unit/unit.h
tests_unit_check_daemon_settings_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_daemon_settings_LDADD = libdaemon.a $(DHCP_LIBS) libconfig.a $(IPXE_LIBS) $(METADATA_LIBS) \
	$(BMC_LIBS) $(WORKFLOW_LIBS) $(COMMON_LIBS) $(YAML_LIBS) $(CHECK_LIBS)

# The answer cache's index against a model (a store, no libmicrohttpd).
check_PROGRAMS += tests/unit/check_answers
TESTS += tests/unit/check_answers
tests_unit_check_answers_SOURCES = tests/unit/check_answers.c tests/unit/unit.h tests/unit/store_fixture.h
tests_unit_check_answers_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_answers_LDADD = libdaemon.a $(STORE_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)

# The file answers' wider sendfile() calls (daemon/http/sendfile.c).
check_PROGRAMS += tests/unit/check_sendfile
TESTS += tests/unit/check_sendfile
tests_unit_check_sendfile_SOURCES = tests/unit/check_sendfile.c tests/unit/unit.h
tests_unit_check_sendfile_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_sendfile_LDADD = libdaemon.a $(COMMON_LIBS) $(PTHREAD_LIBS) $(CHECK_LIBS)
