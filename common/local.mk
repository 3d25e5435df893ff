noinst_LIBRARIES += libcommon.a
libcommon_a_SOURCES = \
	common/common.h common/buf.c common/buf.h common/cursor.h \
	common/file.c common/file.h common/log.c common/log.h common/metrics.c common/metrics.h \
	common/net.c common/net.h common/num.c common/num.h common/time.c \
	common/jsonarr.c common/jsonarr.h common/jsonmerge.c common/jsonmerge.h common/base64.c common/base64.h common/yamljson.c common/yamljson.h \
	common/bootfile.c common/bootfile.h common/mac.c common/mac.h \
	common/ratelimit.c common/ratelimit.h \
	common/timerheap.c common/timerheap.h common/bootmark.c common/bootmark.h
libcommon_a_SOURCES += common/utf8.c common/utf8.h common/jsondec.c common/jsondec.h \
	common/jsonmem.c common/jsonmem.h
libcommon_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(SYSTEMD_CFLAGS)
COMMON_LIBS = libcommon.a $(JANSSON_LIBS) $(YAML_LIBS) $(SYSTEMD_LIBS) $(PTHREAD_LIBS)

check_PROGRAMS += tests/unit/check_common
TESTS += tests/unit/check_common
tests_unit_check_common_SOURCES = tests/unit/check_common.c tests/unit/unit.h
tests_unit_check_common_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_common_LDADD = $(COMMON_LIBS) $(CHECK_LIBS)

include common/yamljson.mk

include common/jsondec.mk

include common/grpc.mk
