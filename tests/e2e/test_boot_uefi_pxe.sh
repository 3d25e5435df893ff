#!/bin/sh
# test_boot_uefi_pxe — a UEFI machine boots from ironbelld through TFTP:
# OVMF's own network stack (the NIC's iPXE option ROM removed) sends a PXE
# DHCP request (vendor class PXEClient, arch 7), gets ipxe.efi's name,
# fetches it over TFTP; that iPXE asks DHCP again (user class "iPXE"),
# gets the script URL, then the kernel and initrd over HTTP, and boots
# them. See tests/e2e/e2e.sh.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"

e2e_setup
[ -f "$E2E_OVMF_CODE" ] || skip_all "OVMF is not installed (ovmf)"
cp "$E2E_OVMF_VARS" "$IB_TMP/vars.fd"
e2e_boot uefi-pxe -machine q35 \
	-drive "if=pflash,format=raw,readonly=on,file=$E2E_OVMF_CODE" \
	-drive "if=pflash,format=raw,file=$IB_TMP/vars.fd" \
	-fw_cfg name=opt/org.tianocore/IPv6PXESupport,string=n \
	-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC,romfile="
e2e_check uefi-pxe
file_has "$IB_LOG" "sent ipxe\.efi to $E2E_IP:[0-9]+: [0-9]+ bytes"
is "$?" 0 "uefi-pxe: ipxe.efi went to the VM over TFTP"
file_has "$IB_LOG" "script served: mac=$E2E_MAC hardware=default/vm1 kind=default client=$E2E_IP"
is "$?" 0 "uefi-pxe: then the per-machine script"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
