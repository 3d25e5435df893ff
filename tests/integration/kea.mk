# kea-dhcp4 with ironbell's hook library (dhcp/kea/libdhcp_ironbell.so) in
# network namespaces of its own, beside a real ironbelld (root only: as
# another user, or where `ip netns add` fails, each test skips; without
# kea-dhcp4 too). Real clients get their reservations and options from
# Kea, Kea's lease file and statistics show them, a Hardware applied or
# deleted while Kea runs is seen (test_kea_hook); the PXE, iPXE and UEFI
# HTTP Boot answers of Kea+hook are ironbelld's own, byte for byte, for
# one table of cases asked of both (test_kea_pxe). When the hook library
# is not built, Kea runs alone and only the rig's own checks run. Under
# make check-asan, Kea loads the sanitizers' runtimes first (LD_PRELOAD,
# tests/integration/kea/common.sh). Needs kea-dhcp4-server,
# isc-dhcp-client, udhcpc and python3-scapy.
KEA_INTEGRATION_TESTS = \
	tests/integration/test_kea_hook.sh \
	tests/integration/test_kea_pxe.sh
TESTS += $(KEA_INTEGRATION_TESTS)
EXTRA_DIST += $(KEA_INTEGRATION_TESTS) \
	tests/integration/kea/common.sh \
	tests/integration/kea/kea_ctl.py \
	tests/integration/kea/pxe_compare.py
