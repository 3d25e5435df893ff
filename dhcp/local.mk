# DHCPv4: codec (bytes <-> structs), policy (request + host -> reply), and
# the server thread (sockets, reservation table, leases).
noinst_LIBRARIES += libdhcp.a
libdhcp_a_SOURCES = \
	dhcp/dhcp-codec.h dhcp/dhcp-internal.h \
	dhcp/codec.c dhcp/write.c
DHCP_LIBS = libdhcp.a
include dhcp/policy.mk

check_PROGRAMS += tests/unit/check_dhcp_codec
TESTS += tests/unit/check_dhcp_codec
tests_unit_check_dhcp_codec_SOURCES = tests/unit/check_dhcp_codec.c tests/unit/unit.h tests/unit/dhcp_builder.h
tests_unit_check_dhcp_codec_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_dhcp_codec_LDADD = $(DHCP_LIBS) $(CHECK_LIBS)

# DHCP message codec fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_dhcp_replay
tests_fuzz_fuzz_dhcp_replay_SOURCES = tests/fuzz/fuzz_dhcp.c tests/fuzz/replay.c
tests_fuzz_fuzz_dhcp_replay_LDADD = $(DHCP_LIBS)
TESTS += tests/fuzz/fuzz_dhcp.fuzz
EXTRA_DIST += tests/fuzz/fuzz_dhcp.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_dhcp
# The codec is compiled into the target so that it is instrumented.
tests_fuzz_fuzz_dhcp_SOURCES = tests/fuzz/fuzz_dhcp.c dhcp/codec.c dhcp/write.c
tests_fuzz_fuzz_dhcp_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_dhcp_LDFLAGS = $(FUZZ_FLAGS)
endif
