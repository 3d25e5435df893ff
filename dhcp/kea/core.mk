# The hook core: parameters, the table and the answers, the store follower.
IBKEA_C_FILES += dhcp/kea/params.c dhcp/kea/core.c dhcp/kea/follow-store.c

# The core as a static library, for the unit tests and the probe (the
# shared object compiles the same files again, position independent).
noinst_LIBRARIES += libibkea.a
libibkea_a_SOURCES = dhcp/kea/ironbell-kea.h dhcp/kea/kea-internal.h $(IBKEA_C_FILES)
libibkea_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
IBKEA_LIBS = libibkea.a $(DHCP_LIBS) $(STORE_LIBS) $(COMMON_LIBS)

check_PROGRAMS += tests/unit/check_kea_core
TESTS += tests/unit/check_kea_core
tests_unit_check_kea_core_SOURCES = tests/unit/check_kea_core.c tests/unit/unit.h \
	tests/unit/dhcp_builder.h
tests_unit_check_kea_core_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kea_core_LDADD = $(IBKEA_LIBS) $(CHECK_LIBS)
