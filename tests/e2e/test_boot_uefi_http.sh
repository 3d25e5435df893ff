#!/bin/sh
# test_boot_uefi_http — a UEFI machine boots from ironbelld with UEFI HTTP
# Boot: OVMF's PXE turned off, its HTTP Boot client sends vendor class
# HTTPClient (arch 16), gets the http:// URL of ipxe.efi (and HTTPClient
# echoed in option 60), fetches it from ironbelld; that iPXE then gets the
# script, the kernel and the initrd, and boots them. See tests/e2e/e2e.sh.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"

e2e_setup
[ -f "$E2E_OVMF_CODE" ] || skip_all "OVMF is not installed (ovmf)"
cp "$E2E_OVMF_VARS" "$IB_TMP/vars.fd"
e2e_boot uefi-http -machine q35 \
	-drive "if=pflash,format=raw,readonly=on,file=$E2E_OVMF_CODE" \
	-drive "if=pflash,format=raw,file=$IB_TMP/vars.fd" \
	-fw_cfg name=opt/org.tianocore/IPv4PXESupport,string=n \
	-fw_cfg name=opt/org.tianocore/IPv6PXESupport,string=n \
	-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC,romfile="
e2e_check uefi-http
file_has "$IB_LOG" "binary served: ipxe\.efi \([0-9]+ bytes\) to $E2E_IP"
is "$?" 0 "uefi-http: ipxe.efi went to the VM over HTTP"
file_has "$IB_LOG" "sent ipxe\.efi to"
isnt_tftp=$?
is "$isnt_tftp" 1 "uefi-http: and not over TFTP"
file_has "$IB_LOG" "script served: mac=$E2E_MAC hardware=default/vm1 kind=default client=$E2E_IP"
is "$?" 0 "uefi-http: then the per-machine script"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
