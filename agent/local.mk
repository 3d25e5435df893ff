# ironbell-agent: the worker that runs a workflow's actions on the machine
# being provisioned (agent/agent.h). In sbin: it runs as root at boot.
#
# Linked statically (configure --disable-static-agent, or a sanitizer
# build, links it dynamically) so that it fits in an initramfs alone:
# the libraries are named as static archives' dependencies need them
# (pkg-config --static), and no NSS function is used (addresses are
# numeric: agent/sys.c).
noinst_LIBRARIES += libagent.a
libagent_a_SOURCES = agent/agent.h agent/agent-internal.h agent/cmdline.c agent/util.c \
	agent/http.c agent/sys.c agent/client.c agent/host.c agent/docker.c agent/loop.c
libagent_a_CFLAGS = $(AM_CFLAGS) $(TINKPB_CFLAGS) $(NGHTTP2_CFLAGS) $(CRYPTO_CFLAGS) $(JANSSON_CFLAGS)
AGENT_STATIC_LIBS = -lnghttp2 -lprotobuf-c -ljansson -lssl -lcrypto -ldl

sbin_PROGRAMS += ironbell-agent
dist_man_MANS += man/ironbell-agent.8
ironbell_agent_SOURCES = agent/main.c
ironbell_agent_CFLAGS = $(AM_CFLAGS)
ironbell_agent_LDFLAGS = $(AGENT_STATIC_LDFLAGS) $(PTHREAD_LIBS)
ironbell_agent_LDADD = libagent.a libtinkgrpc.a libtinkpb.a libcommon.a $(AGENT_STATIC_LIBS)

check_PROGRAMS += tests/unit/check_agent
TESTS += tests/unit/check_agent
tests_unit_check_agent_SOURCES = tests/unit/check_agent.c tests/unit/unit.h
tests_unit_check_agent_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_agent_LDADD = libagent.a $(TINKPB_LIBS) $(COMMON_LIBS) $(NGHTTP2_LIBS) \
	$(CRYPTO_LIBS) -lssl $(JANSSON_LIBS) $(CHECK_LIBS)

# The kernel command line's and the Docker Engine responses' parsers'
# fuzz targets (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_agent_cmdline_replay tests/fuzz/fuzz_agent_http_replay
tests_fuzz_fuzz_agent_cmdline_replay_SOURCES = tests/fuzz/fuzz_agent_cmdline.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_agent_cmdline_replay_LDADD = libagent.a
tests_fuzz_fuzz_agent_http_replay_SOURCES = tests/fuzz/fuzz_agent_http.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_agent_http_replay_LDADD = libagent.a
TESTS += tests/fuzz/fuzz_agent_cmdline.fuzz tests/fuzz/fuzz_agent_http.fuzz
EXTRA_DIST += tests/fuzz/fuzz_agent_cmdline.fuzz tests/fuzz/fuzz_agent_http.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_agent_cmdline tests/fuzz/fuzz_agent_http
tests_fuzz_fuzz_agent_cmdline_SOURCES = tests/fuzz/fuzz_agent_cmdline.c tests/fuzz/fuzz.h agent/cmdline.c
tests_fuzz_fuzz_agent_cmdline_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_agent_cmdline_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_agent_http_SOURCES = tests/fuzz/fuzz_agent_http.c tests/fuzz/fuzz.h agent/http.c
tests_fuzz_fuzz_agent_http_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_agent_http_LDFLAGS = $(FUZZ_FLAGS)
endif

TESTS += tests/integration/test_agent_host.sh tests/integration/test_agent_docker.sh \
	tests/integration/test_agent_dockerd.sh
EXTRA_DIST += tests/integration/test_agent_host.sh tests/integration/test_agent_docker.sh \
	tests/integration/test_agent_dockerd.sh \
	tests/integration/fake_dockerd.py
