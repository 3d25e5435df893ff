#!/bin/sh
# test_boot_bios — a BIOS machine boots from ironbelld: SeaBIOS runs
# QEMU's own iPXE option ROM (user class "iPXE"), whose DHCP request gets
# the script URL; iPXE fetches the per-machine script, then the kernel
# and initrd over HTTP, and boots them. See tests/e2e/e2e.sh.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"

e2e_setup
e2e_boot bios -machine pc,graphics=off -boot n \
	-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC"
e2e_check bios
file_has "$IB_LOG" "DHCP.*$E2E_MAC|ACK.*$E2E_IP"
is "$?" 0 "bios: ironbelld leased the reserved address"
file_has "$IB_LOG" "script served: mac=$E2E_MAC hardware=default/vm1 kind=default client=$E2E_IP"
is "$?" 0 "bios: the per-machine script was served to the VM"
file_has "$IB_LOG" "osie served: vmlinuz-x86_64 .* to $E2E_IP"
is "$?" 0 "bios: the kernel came over HTTP from ironbelld"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
