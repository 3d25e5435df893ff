#!/bin/sh
# test_provision — a machine provisioned end to end, as on a rack: a
# virtual machine under a virtual BMC, taken by ironbelld from power-off to
# booting its own disk.
#
# The rig (tests/e2e/provision.sh): ipmi_sim is the BMC, and its
# chassis_control hook starts and stops the VM's QEMU; the VM's disk is
# blank. The osie (tests/e2e/osie.sh, tools/e2e-provision-assets) is
# ironbelld's ipxe.osie_dir: the cloud kernel and an initramfs that runs
# ironbell-agent with the host runtime. The Template is
# tests/e2e/provision-template.yaml (the disk image streamed onto the
# disk, the machine's cloud-init data written into it) with a last action
# that reboots the machine; the Workflow asks for bootMode: netboot and
# toggleAllowNetboot: true. Asserted, in order:
#   - the Workflow's netboot Job (off, one-time PXE, on) completes through
#     the BMC, and the Machine reads on;
#   - the VM netboots the osie and the Workflow ends SUCCESS, every action
#     with its executionDuration;
#   - netboot is off again (allowPXE false) once the Workflow is over;
#   - the VM reboots into the disk it was given: the image's marker, the
#     user-data ironbelld served, its metadata;
#   - the closed loop: the Workflow's Booted condition is True
#     (BootedFromDisk), with a Booted event on the Workflow and on the
#     Hardware;
#   - the installed system powers the VM off: the Machine reads off;
#   - a PXE DISCOVER from the machine's MAC now gets /netboot-not-allowed
#     (when scapy is installed: tests/integration/dhcp/pxe_client.py).
# The phases' wall times and ironbelld's CPU time over them are printed
# as diagnostics (nothing is asserted about time).
# BIOS by default; PROV_FIRMWARE=uefi (test_provision_uefi) boots OVMF.
# ipmi_sim by default; PROV_BMC=redfish (test_provision_redfish) has the
# Redfish emulator as the BMC. PROV_KUBE=1 (test_provision_kube) runs
# ironbelld in Kubernetes mode: the objects are created in the API-server
# emulator with kubectl, and every state above is read back from it (the
# events are ironbelld's own, from its admin API, in both modes).
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"
. "$top_srcdir/tests/e2e/osie.sh"
. "$top_srcdir/tests/e2e/provision.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is not installed"
fw=$PROV_FIRMWARE
WF=wf-vm1
WAIT=60           # seconds for a state ironbelld polls every second
BOOT=$E2E_TIMEOUT # seconds for a TCG boot (300)

osie_assets
PROV_OSIE_DIR=$OSIE_DIR
PROV_CONFIG_EXTRA="workflow:
  enabled: true
  resync_interval: 5"
prov_setup
mode=standalone
[ "$PROV_KUBE" = 1 ] && mode="Kubernetes (API at 127.0.0.1:$PROV_KUBE_PORT in the namespace)"
diag "firmware $fw, BMC $PROV_BMC $PROV_BMC_ADDR:$PROV_BMC_PORT, $mode, disk marker $OSIE_MARKER"

# The Hardware again, with what the installed system asks for (its
# user-data and instance metadata), netboot off: the Workflow turns it on.
# The Template: provision-template.yaml's actions, then a reboot.
prov_hardware false
is "$rc" 0 "$fw: the Hardware, with its bmcRef, netboot off"
prov_template_reboot
prov_apply "$IB_TMP/template.yaml"
is "$rc" 0 "$fw: the Template"
[ "$rc" = 0 ] || diag "$err"
prov_workflow "$WF" e2e-disk
ok "$fw: the Machine reads off before the Workflow" wait_for "$WAIT" prov_power_is off

wf() { prov_wf "$@"; }
booted() {
	wf '([c.get("status", "") + " " + c.get("reason", "") for c in d.get("status", {}).get("conditions", []) if c["type"] == "Booted"] + [""])[0]'
}
booted_is() { [ "$(booted)" = "$1" ]; }
# cpu: ironbelld's CPU time so far, in clock ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$IB_DAEMON_PID/stat" 2>/dev/null || echo 0; }
now() { date +%s%N; }
HZ=$(getconf CLK_TCK)
# phase NAME T0 C0: one diagnostic line for the phase from T0 (ns) with
# ironbelld's CPU at C0 (ticks) then.
phase() {
	_t=$(( ($(now) - $2) / 1000000 ))
	_c=$(( ($(cpu) - $3) * 1000 / HZ ))
	_p=$(awk -v c="$_c" -v t="$_t" 'BEGIN { printf "%.2f", (t > 0 ? 100 * c / t : 0) }')
	diag "$fw: phase $1: $_t ms wall, ironbelld $_c ms CPU ($_p% of the wall time)"
}

t_all=$(now) c_all=$(cpu)
prov_apply "$IB_TMP/workflow.yaml"
is "$rc" 0 "$fw: the Workflow, bootMode netboot and toggleAllowNetboot"

# ---- power off, one-time PXE, power on: the Workflow's netboot Job ----
t=$(now) c=$(cpu)
job_ended() { [ -n "$(prov_job_state "netboot-$WF")" ]; }
ok "$fw: the Workflow's netboot Job ends" wait_for "$BOOT" job_ended
is "$(prov_job_state "netboot-$WF")" Completed "$fw: the netboot Job Completed through the BMC"
calls=$(grep '^set ' "$PROV_VM_DIR/calls.log" | tr '\n' ';')
like "$calls" '^(set power 0;)?set boot pxe;set power 1;' "$fw: the BMC saw PXE, then power on"
is "$(prov_hw_pxe)" True "$fw: netboot is on for the Workflow (toggleAllowNetboot)"
on_or_gone() { prov_power_is on || ! prov_vm_running; }
wait_for "$WAIT" on_or_gone
is "$(prov_power)" on "$fw: the Machine reads on"
phase "power-on (Job)" "$t" "$c"

# ---- the osie runs the Workflow ----
t=$(now) c=$(cpu)
if prov_wait_console "$BOOT" 'IRONBELL-E2E-OSIE-UP'; then
	pass "$fw: the VM netbooted the osie"
else
	fail "$fw: the VM netbooted the osie"
	prov_diag
fi
phase "netboot to the agent" "$t" "$c"
t=$(now) c=$(cpu)
ok "$fw: the Workflow ends" wait_for $((BOOT * 2)) prov_wf_over
state=$(prov_wf_state)
is "$state" SUCCESS "$fw: the Workflow ran to SUCCESS on the VM"
if [ "$state" != SUCCESS ]; then
	prov_diag
	diag "the Workflow's status: $(wf 'json.dumps(d.get("status", {}))')"
fi
is "$(wf '",".join(a["name"] + "=" + a.get("state", "") for t in d["status"]["tasks"] for a in t["actions"])')" \
	"stream-image=SUCCESS,write-cloud-init=SUCCESS,reboot=SUCCESS" "$fw: every action SUCCESS"
is "$(wf 'all(a.get("executionDuration") for t in d["status"]["tasks"] for a in t["actions"])')" True \
	"$fw: every action has its executionDuration"
diag "$fw: actions $(wf '" ".join(a["name"] + "=" + a.get("executionDuration", "") for t in d["status"]["tasks"] for a in t["actions"])')"
phase "the Workflow" "$t" "$c"
pxe_off() { [ "$(prov_hw_pxe)" = False ]; }
ok "$fw: netboot is off again after the Workflow" wait_for "$WAIT" pxe_off

# ---- the reboot into the disk ----
t=$(now) c=$(cpu)
if prov_wait_console "$BOOT" "IRONBELL-E2E-DISK-BOOTED marker=$OSIE_MARKER"; then
	pass "$fw: the VM booted the disk it was given (its marker)"
else
	fail "$fw: the VM booted the disk it was given (its marker)"
	prov_diag
fi
phase "reboot to the disk" "$t" "$c"
prov_wait_console "$WAIT" 'IRONBELL-E2E-DISK-DONE' >/dev/null
line=$(grep -a 'IRONBELL-E2E-USERDATA' "$PROV_SERIAL" | tail -n 1 | tr -d '\r')
like "$line" 'hostname: vm1-installed' "$fw: the disk holds the user-data ironbelld served"
line=$(grep -a 'IRONBELL-E2E-METADATA' "$PROV_SERIAL" | tail -n 1 | tr -d '\r')
like "$line" 'hostname=vm1-installed' "$fw: the installed system read its metadata from ironbelld"

# ---- the closed loop ----
ok "$fw: the Workflow's Booted condition is True, BootedFromDisk" \
	wait_for "$WAIT" booted_is "True BootedFromDisk"
[ "$(booted)" = "True BootedFromDisk" ] || diag "Booted: $(booted); $(wf 'json.dumps(d.get("status", {}).get("conditions"))')"
ib events workflow "$WF"
like "$out" 'Booted' "$fw: a Booted event on the Workflow"
ib events hardware vm1
like "$out" 'Booted' "$fw: and on the Hardware"
like "$(wf '[c.get("message", "") for c in d["status"]["conditions"] if c["type"] == "Booted"][0]')" \
	'booted from its disk .* after power-on' "$fw: the condition says how long after power-on"
is "$(prov_wf_state)" SUCCESS "$fw: the Workflow stays SUCCESS"

# ---- the installed system powers off ----
vm_off() { ! prov_vm_running; }
ok "$fw: the installed system powers the VM off" wait_for "$WAIT" vm_off
ok "$fw: the Machine reads off" wait_for "$WAIT" prov_power_is off
phase "the whole provisioning" "$t_all" "$c_all"

# ---- a netboot now is refused ----
DHCP_DIR=$top_srcdir/tests/integration/dhcp
if "$PY" -c 'import scapy' 2>/dev/null; then
	ns_new CLI cli || bail_out "cannot make a namespace"
	ns_veth "$E2E_NS" vcli - "$CLI" eth0 - || bail_out "cannot make a veth pair"
	ns_port "$E2E_NS" vcli br0 || bail_out "cannot bridge the veth"
	# As a PXE ROM does, the DISCOVER goes again when nothing answered
	# (a frame can be lost while the new port is not yet forwarding).
	for _try in 1 2 3; do
		run ip netns exec "$CLI" "$PY" "$DHCP_DIR/pxe_client.py" -i eth0 --mac "$E2E_MAC" \
			--arch 0 --vendor-class PXEClient:Arch:00000:UNDI:002001 --wait 2
		files=$(printf '%s\n' "$out" | "$PY" -c 'import json, sys
print([json.loads(l).get("file") for l in sys.stdin if l.startswith("{")])')
		[ "$files" = "[]" ] || break
		diag "$fw: no answer to DISCOVER $_try of 3"
	done
	like "$files" "/netboot-not-allowed" "$fw: a PXE DISCOVER from the machine now gets /netboot-not-allowed"
else
	skip "$fw: a PXE DISCOVER from the machine now gets /netboot-not-allowed" "scapy is not installed"
fi

prov_stop
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
