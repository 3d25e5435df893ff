# The shared object kea-dhcp4 loads, and its tests.
#
# libdhcp_ironbell.so is the shim (dhcp/kea/hook.cc, C++ against Kea's
# headers and libraries) over the core (IBKEA_C_FILES) and the parts of
# ironbell the core runs on (IBKEA_DEP_FILES: the DHCP codec, policy and
# reservation table, the store, the common code), all
# compiled again for it: position independent, with hidden visibility,
# and linked with a version script (dhcp/kea/hook.map) that exports the
# hook functions alone, so that no C symbol of ours can stand in for one
# of Kea's. -z defs: every symbol is resolved at link time, never by
# kea-dhcp4's process at load time. Installed where Debian's kea-dhcp4
# looks for its own hooks ($(libdir)/kea/hooks).
#
# The libraries' own source lists, so that a file added to one of them is
# in the hook too.
IBKEA_DEP_FILES = $(libdhcp_a_SOURCES) $(libstore_a_SOURCES) $(libcommon_a_SOURCES)
EXTRA_DIST += dhcp/kea/hook.map dhcp/kea/compat/dhcpsrv/cfg_globals.h
if ENABLE_KEA_HOOK
keahookdir = $(libdir)/kea/hooks
keahook_PROGRAMS = dhcp/kea/libdhcp_ironbell.so
dhcp_kea_libdhcp_ironbell_so_SOURCES = dhcp/kea/hook.cc $(IBKEA_C_FILES) $(IBKEA_DEP_FILES)
# dhcp/kea/compat: what Kea's installed headers lack (see the file), looked
# for after every other include directory.
dhcp_kea_libdhcp_ironbell_so_CPPFLAGS = $(AM_CPPFLAGS) $(KEA_CPPFLAGS) \
	-idirafter $(top_srcdir)/dhcp/kea/compat
# -DJSONMEM_OFF: jansson keeps malloc() in kea-dhcp4's process. jsonmem
# reserves its address range for the life of a process and would make
# itself jansson's allocator again at each load of the hook (Kea loads it
# anew on every configuration reload), and the hook decodes Hardware only
# when they change, not per packet.
dhcp_kea_libdhcp_ironbell_so_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden -DJSONMEM_OFF \
	$(IBKEA_API_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS) $(CURL_CFLAGS) $(YAML_CFLAGS) \
	$(SYSTEMD_CFLAGS)
dhcp_kea_libdhcp_ironbell_so_CXXFLAGS = $(IB_CXXFLAGS) $(PTHREAD_CFLAGS) -std=c++17 -fPIC \
	-fvisibility=hidden -fvisibility-inlines-hidden
dhcp_kea_libdhcp_ironbell_so_LDFLAGS = -shared -fPIC -Wl,-z,defs \
	-Wl,--version-script=$(srcdir)/dhcp/kea/hook.map
dhcp_kea_libdhcp_ironbell_so_LDADD = $(KEA_LIBS) $(IBKEA_API_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) \
	$(YAML_LIBS) $(SYSTEMD_LIBS) $(PTHREAD_LIBS)
EXTRA_dhcp_kea_libdhcp_ironbell_so_DEPENDENCIES = dhcp/kea/hook.map

TESTS += tests/integration/test_kea_load.sh
endif
EXTRA_DIST += tests/integration/test_kea_load.sh
