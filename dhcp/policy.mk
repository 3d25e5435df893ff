# DHCP policy: the reply decision (dhcp/policy.c) and the Hardware view it
# reads (dhcp/host.c). Included from dhcp/local.mk after libdhcp_a_SOURCES.
# host.c reads Hardware JSON and uses common/num.c: link $(DHCP_LIBS)
# before $(COMMON_LIBS).
libdhcp_a_SOURCES += dhcp/dhcp-policy.h dhcp/policy.c dhcp/host.c dhcp/settings.c \
	dhcp/dhcp.h dhcp/server-internal.h dhcp/map.h dhcp/map.c dhcp/hosts.c \
	dhcp/leases.c dhcp/sock.c dhcp/link.c \
	dhcp/server.c
# The server thread's other files (dhcp/server.c's DESIGN comment).
libdhcp_a_SOURCES += dhcp/server-hosts.c dhcp/server-acks.c dhcp/server-rx.c \
	dhcp/server-boot.c
libdhcp_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)

check_PROGRAMS += tests/unit/check_dhcp_policy
TESTS += tests/unit/check_dhcp_policy
tests_unit_check_dhcp_policy_SOURCES = tests/unit/check_dhcp_policy.c tests/unit/unit.h tests/unit/dhcp_builder.h
tests_unit_check_dhcp_policy_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_dhcp_policy_LDADD = $(DHCP_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_dhcp_settings
TESTS += tests/unit/check_dhcp_settings
tests_unit_check_dhcp_settings_SOURCES = tests/unit/check_dhcp_settings.c tests/unit/unit.h
tests_unit_check_dhcp_settings_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_dhcp_settings_LDADD = $(DHCP_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The reservation table and the IPv4/UDP header builder of the server.
check_PROGRAMS += tests/unit/check_dhcp_hosts
TESTS += tests/unit/check_dhcp_hosts
tests_unit_check_dhcp_hosts_SOURCES = tests/unit/check_dhcp_hosts.c tests/unit/unit.h
tests_unit_check_dhcp_hosts_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_dhcp_hosts_LDADD = $(DHCP_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# Policy fuzz target: every parsed request decided in every mode and port.
check_PROGRAMS += tests/fuzz/fuzz_dhcp_policy_replay
tests_fuzz_fuzz_dhcp_policy_replay_SOURCES = tests/fuzz/fuzz_dhcp_policy.c tests/fuzz/replay.c
tests_fuzz_fuzz_dhcp_policy_replay_LDADD = $(DHCP_LIBS) $(COMMON_LIBS)
TESTS += tests/fuzz/fuzz_dhcp_policy.fuzz
EXTRA_DIST += tests/fuzz/fuzz_dhcp_policy.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_dhcp_policy
tests_fuzz_fuzz_dhcp_policy_SOURCES = tests/fuzz/fuzz_dhcp_policy.c dhcp/codec.c dhcp/write.c \
	dhcp/policy.c common/mac.c
tests_fuzz_fuzz_dhcp_policy_CFLAGS = $(AM_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_dhcp_policy_LDFLAGS = $(FUZZ_FLAGS)
endif
