# The Kea hook library (libdhcp_ironbell.so): a C core (dhcp/kea/*.c, the
# reservation table, the follower of ironbelld's store or admin API, the
# answers) behind dhcp/kea/ironbell-kea.h, and a thin C++ shim
# (dhcp/kea/hook.cc) that kea-dhcp4 loads. IBKEA_C_FILES lists the core's
# own files; the shim's rules (hook.mk) compile them again, position
# independent, into the shared object.
IBKEA_C_FILES =
include dhcp/kea/core.mk
include dhcp/kea/api.mk
include dhcp/kea/hook.mk
