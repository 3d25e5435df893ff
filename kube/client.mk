# kube/client: the connection settings (a kubeconfig or the pod's service
# account) and the HTTP client of the API server (libcurl).
libkube_a_SOURCES += kube/kubeconfig.c kube/client.c

# Kubeconfig parsing, good and malformed, and in-cluster settings.
check_PROGRAMS += tests/unit/check_kube_client
TESTS += tests/unit/check_kube_client
tests_unit_check_kube_client_SOURCES = tests/unit/check_kube_client.c tests/unit/unit.h
tests_unit_check_kube_client_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kube_client_LDADD = $(KUBE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The kubeconfig parser's fuzz target (see tests/fuzz/local.mk): the text
# of a kubeconfig, parsed without reading any file it names.
check_PROGRAMS += tests/fuzz/fuzz_kubeconfig_replay
tests_fuzz_fuzz_kubeconfig_replay_SOURCES = tests/fuzz/fuzz_kubeconfig.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h
tests_fuzz_fuzz_kubeconfig_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_kubeconfig_replay_LDADD = $(KUBE_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_kubeconfig.fuzz
EXTRA_DIST += tests/fuzz/fuzz_kubeconfig.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_kubeconfig
tests_fuzz_fuzz_kubeconfig_SOURCES = tests/fuzz/fuzz_kubeconfig.c tests/fuzz/fuzz.h \
	kube/kubeconfig.c
tests_fuzz_fuzz_kubeconfig_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_kubeconfig_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_kubeconfig_LDADD = $(COMMON_LIBS)
endif

# The client without the daemon: one request or stream, for the tests.
check_PROGRAMS += tests/kube/kube-call
tests_kube_kube_call_SOURCES = tests/kube/kube-call.c
tests_kube_kube_call_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_kube_kube_call_LDADD = $(KUBE_LIBS) $(COMMON_LIBS)

# The client against a TLS server of the test's own (tests/kube/tls_echo.py):
# client certificates, a wrong CA, bearer tokens, 401 and 429, streams.
TESTS += tests/integration/test_kube_client.sh
EXTRA_DIST += tests/integration/test_kube_client.sh tests/kube/tls_echo.py
