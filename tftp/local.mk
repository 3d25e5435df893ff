# TFTP: the codec and negotiation (pure), file resolution, and the server
# thread.
noinst_LIBRARIES += libtftp.a
libtftp_a_SOURCES = tftp/tftp-codec.h tftp/tftp-internal.h tftp/tftp.h \
	tftp/codec.c tftp/files.c tftp/netascii.c tftp/server.c
TFTP_LIBS = libtftp.a

check_PROGRAMS += tests/unit/check_tftp
TESTS += tests/unit/check_tftp
tests_unit_check_tftp_SOURCES = tests/unit/check_tftp.c tests/unit/unit.h
tests_unit_check_tftp_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_tftp_LDADD = $(TFTP_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The request parser and negotiation fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_tftp_replay
tests_fuzz_fuzz_tftp_replay_SOURCES = tests/fuzz/fuzz_tftp.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_tftp_replay_LDADD = $(TFTP_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_tftp.fuzz
EXTRA_DIST += tests/fuzz/fuzz_tftp.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_tftp
tests_fuzz_fuzz_tftp_SOURCES = tests/fuzz/fuzz_tftp.c tests/fuzz/fuzz.h tftp/codec.c tftp/files.c \
	common/mac.c
tests_fuzz_fuzz_tftp_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_tftp_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_tftp_LDADD = $(COMMON_LIBS)
endif

# A wire with a fixed delay between two taps (this kernel has no netem):
# the TFTP tests and benchmark give it to namespace pairs.
check_PROGRAMS += tests/delayline
tests_delayline_SOURCES = tests/delayline.c

# tftp-hpa, atftp and curl against the real daemon in namespaces (root).
TESTS += tests/integration/test_tftp.sh
EXTRA_DIST += tests/integration/test_tftp.sh tests/integration/tftp/dup_ack.py \
	tests/integration/tftp/no_ack.py \
	tests/integration/tftp/flood.py
