# The worker protocol's wire: the messages of common/tink.proto, generated
# by protoc-c into the build tree (common/tink.pb-c.[ch] and the
# Timestamp they use), and the gRPC helpers around them (common/grpc.h).
# A library of its own so that only the programs that speak gRPC link
# protobuf-c.
TINK_PB_GEN = common/tink.pb-c.c common/tink.pb-c.h \
	common/google/protobuf/timestamp.pb-c.c common/google/protobuf/timestamp.pb-c.h
BUILT_SOURCES += $(TINK_PB_GEN)
CLEANFILES += $(TINK_PB_GEN)
EXTRA_DIST += common/tink.proto common/google/protobuf/timestamp.proto

common/tink.pb-c.h: common/tink.pb-c.c
common/tink.pb-c.c: common/tink.proto common/google/protobuf/timestamp.proto
	$(AM_V_GEN)$(MKDIR_P) common && \
	$(PROTOC_C) --c_out=common -I$(top_srcdir)/common $(top_srcdir)/common/tink.proto
common/google/protobuf/timestamp.pb-c.h: common/google/protobuf/timestamp.pb-c.c
common/google/protobuf/timestamp.pb-c.c: common/google/protobuf/timestamp.proto
	$(AM_V_GEN)$(MKDIR_P) common && \
	$(PROTOC_C) --c_out=common -I$(top_srcdir)/common \
		$(top_srcdir)/common/google/protobuf/timestamp.proto

noinst_LIBRARIES += libtinkpb.a
nodist_libtinkpb_a_SOURCES = $(TINK_PB_GEN)
libtinkpb_a_SOURCES = common/grpc.h
# Generated code: warnings are protoc-c's, not ours.
libtinkpb_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/common
libtinkpb_a_CFLAGS = $(PTHREAD_CFLAGS) $(PROTOBUF_C_CFLAGS) -w
# Our own code around them, with our warnings: the gRPC helpers and the
# schema check (common/grpc.h). It uses libcommon's UTF-8 check, so
# $(TINKPB_LIBS) goes before $(COMMON_LIBS) on a link line; a program
# that includes common/tink.pb-c.h compiles with $(TINKPB_CFLAGS).
noinst_LIBRARIES += libtinkgrpc.a
libtinkgrpc_a_SOURCES = common/grpc.c common/grpc.h common/tink-check.c
libtinkgrpc_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/common
libtinkgrpc_a_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
TINKPB_CFLAGS = -I$(top_builddir)/common $(PROTOBUF_C_CFLAGS)
TINKPB_LIBS = libtinkgrpc.a libtinkpb.a $(PROTOBUF_C_LIBS)

check_PROGRAMS += tests/unit/check_grpc
TESTS += tests/unit/check_grpc
tests_unit_check_grpc_SOURCES = tests/unit/check_grpc.c tests/unit/unit.h
tests_unit_check_grpc_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(TINKPB_CFLAGS)
tests_unit_check_grpc_LDADD = $(TINKPB_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The protobuf check and the header helpers' fuzz target (see
# tests/fuzz/local.mk); the input is a message body.
check_PROGRAMS += tests/fuzz/fuzz_tink_replay
tests_fuzz_fuzz_tink_replay_SOURCES = tests/fuzz/fuzz_tink.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_tink_replay_CFLAGS = $(AM_CFLAGS) $(TINKPB_CFLAGS)
tests_fuzz_fuzz_tink_replay_LDADD = $(TINKPB_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_tink.fuzz
EXTRA_DIST += tests/fuzz/fuzz_tink.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_tink
tests_fuzz_fuzz_tink_SOURCES = tests/fuzz/fuzz_tink.c tests/fuzz/fuzz.h \
	common/grpc.c common/tink-check.c
tests_fuzz_fuzz_tink_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/common
tests_fuzz_fuzz_tink_CFLAGS = $(AM_CFLAGS) $(TINKPB_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_tink_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_tink_LDADD = libtinkpb.a $(PROTOBUF_C_LIBS) $(COMMON_LIBS)
endif

# The worker protocol's test clients (tests/grpc/: a Python and a Node
# tink-agent, a reference server in python3-grpcio) proven against each
# other, and h2raw.py, HTTP/2 frames by hand (test_grpc_clients). Needs
# python3-grpcio and python3-grpc-tools; h2raw needs python3-hpack;
# the Node client's modules come from tests/grpc/package-lock.json
# (tools/install-deps runs npm ci).
GRPC_CLIENT_TESTS = tests/integration/test_grpc_clients.sh
TESTS += $(GRPC_CLIENT_TESTS)
EXTRA_DIST += $(GRPC_CLIENT_TESTS) \
	tests/grpc/grpc.sh tests/grpc/tinkproto.py tests/grpc/tink_agent.py \
	tests/grpc/tink_server.py tests/grpc/tink_agent.js tests/grpc/h2raw.py \
	tests/grpc/attributes.json tests/grpc/package.json tests/grpc/package-lock.json
