# The hook core: parameters, the table and the answers, the store follower.
IBKEA_C_FILES += dhcp/kea/params.c dhcp/kea/core.c dhcp/kea/follow-store.c

# The core as a static library, for the unit tests and the probe (the
# shared object compiles the same files again, position independent).
noinst_LIBRARIES += libibkea.a
libibkea_a_SOURCES = dhcp/kea/ironbell-kea.h dhcp/kea/kea-internal.h $(IBKEA_C_FILES)
libibkea_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
IBKEA_LIBS = libibkea.a $(DHCP_LIBS) $(STORE_LIBS) $(COMMON_LIBS)
