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
TINKPB_LIBS = libtinkpb.a $(PROTOBUF_C_LIBS)
