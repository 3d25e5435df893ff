#!/bin/sh
# test_bmc_vm — ironbelld powers a virtual machine through its BMC and the
# machine netboots: ipmi_sim is the BMC, its chassis_control hook
# (tests/e2e/vm-bmc.sh) starts and stops the VM's QEMU; a bmc Job
# (off, one-time PXE, on) for the Machine completes, the VM boots the
# kernel and initrd from ironbelld (the marker on its console), the
# Machine's powerState reads on while it runs and off once the guest has
# powered itself off, and ipmitool -I lanplus agrees with it both times;
# powered on again with no boot device, the VM tries its (blank) disk
# first: the one-time PXE was spent.
# BIOS by default; PROV_FIRMWARE=uefi (test_bmc_vm_uefi) boots OVMF's PXE
# instead. See tests/e2e/provision.sh.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"
. "$top_srcdir/tests/e2e/provision.sh"

WAIT=60 # seconds for a state ironbelld polls every second
BOOT=$E2E_TIMEOUT # seconds for a TCG boot (300)
fw=$PROV_FIRMWARE

prov_setup
diag "firmware $fw, BMC $PROV_BMC_ADDR:$PROV_BMC_PORT in namespace $E2E_NS"

ok "$fw: the Machine reads off before the Job" wait_for "$WAIT" prov_power_is off
prov_vm_running
is "$?" 1 "$fw: no QEMU runs yet"

prov_netboot_job netboot-vm1 || bail_out "cannot apply the Job"
job_ended() { [ -n "$(prov_job_state netboot-vm1)" ]; }
ok "$fw: the Job ends" wait_for "$BOOT" job_ended
is "$(prov_job_state netboot-vm1)" Completed "$fw: the Job Completed"
ok "$fw: the VM's QEMU runs" prov_vm_running
prov_ipmi chassis power status
like "$out" 'Chassis Power is on' "$fw: ipmitool -I lanplus reads the power on"
on_or_gone() { prov_power_is on || ! prov_vm_running; }
wait_for "$WAIT" on_or_gone
is "$(prov_power)" on "$fw: the Machine's powerState reads on while the VM runs"

calls=$(grep '^set ' "$PROV_VM_DIR/calls.log" | tr '\n' ';')
is "$calls" "set power 0;set boot pxe;set power 1;" "$fw: the BMC saw off, PXE, on, in order"
is "$(cat "$PROV_VM_DIR/starts" 2>/dev/null)" "1 pxe" "$fw: the VM powered on once, from PXE"
prov_ipmi chassis bootparam get 5
like "$out" 'No override' "$fw: the power-on took the one-time boot device"

if prov_wait_console "$BOOT" 'IRONBELL-E2E-BOOTED'; then
	pass "$fw: the VM netbooted the kernel and initrd from ironbelld"
else
	fail "$fw: the VM netbooted the kernel and initrd from ironbelld"
	prov_diag
fi
line=$(grep -a 'IRONBELL-E2E-BOOTED' "$PROV_SERIAL" | head -n 1 | tr -d '\r')
like "$line" " hw_addr=$E2E_MAC " "$fw: its command line is the Hardware's"
file_has "$IB_LOG" "script served: mac=$E2E_MAC hardware=default/vm1 kind=default client=$E2E_IP"
is "$?" 0 "$fw: ironbelld served the VM its script"

# The marker's /init powers the guest off: QEMU exits, the power reads 0.
vm_off() { ! prov_vm_running; }
ok "$fw: the guest powers itself off" wait_for "$WAIT" vm_off
ok "$fw: the Machine's powerState reads off" wait_for "$WAIT" prov_power_is off
prov_ipmi chassis power status
like "$out" 'Chassis Power is off' "$fw: ipmitool -I lanplus reads the power off"

# On again, with no boot device: the one-time PXE is spent, so the disk
# comes first; the blank disk fails and the firmware falls through to
# the network, as a real machine does.
if [ "$fw" = uefi ]; then
	disk_ere='UEFI Misc Device' net_ere='Start PXE over IPv4'
else
	disk_ere='Booting from Hard Disk' net_ere='Booting from ROM'
fi
from=$(prov_console_size)
ib power on "$PROV_MACHINE" --timeout 120s
is "$rc" 0 "$fw: ironbell power on, with no boot device set"
[ "$rc" = 0 ] || diag "$out $err"
if prov_wait_console "$BOOT" 'IRONBELL-E2E-BOOTED' "$from"; then
	pass "$fw: the VM netbooted again"
else
	fail "$fw: the VM netbooted again"
	prov_diag
fi
is "$(sed -n 2p "$PROV_VM_DIR/starts")" "2 none" "$fw: the second power-on had no boot device"
first=$(sed -n '/=== vm-bmc: power on 2 /,$p' "$PROV_FIRMWARE_LOG" | tr -d '\r' |
	grep -aEo -- "$disk_ere|$net_ere" | head -n 1)
is "$first" "$disk_ere" "$fw: it tried the disk before the network"
ok "$fw: the guest powers itself off again" wait_for "$WAIT" vm_off
ok "$fw: the Machine's powerState reads off again" wait_for "$WAIT" prov_power_is off

ib_alive "$PROV_SIM_PID"
is "$?" 0 "$fw: the BMC still runs"
ns_exec "$E2E_NS" ss -Hltn "sport = :42113" >"$IB_TMP/ss.out" 2>&1
file_has "$IB_TMP/ss.out" "$E2E_SERVER:42113"
is "$?" 0 "$fw: the worker API listens where the script's grpc_authority points"
prov_stop
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
