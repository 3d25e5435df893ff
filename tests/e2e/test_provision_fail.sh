#!/bin/sh
# test_provision_fail — test_provision's rig, with an install that fails:
# the Template is tests/e2e/provision-template-fail.yaml (the disk image
# written, then an action that exits 3 with a line on its standard
# error). The Workflow asks for bootMode: netboot and toggleAllowNetboot:
# true, as test_provision's. Asserted:
#   - the netboot Job (off, one-time PXE, on) completes and the VM
#     netboots the osie, as in test_provision;
#   - the Workflow ends FAILED; the failed action's message carries its
#     exit status and its output; the action after it never ran;
#   - the cleanup on failure: netboot is off again (allowPXE false,
#     toggledFalse, the condition AllowNetbootFalse), so the machine's
#     next boot does not run the installer again;
#   - the machine is left powered as configured. bootMode: netboot has no
#     cleanup Job (docs/workflows.md, "Boot options"), and the Machine has
#     no bmc.ironbell.dev/desired-power annotation, under which ironbelld
#     never changes a machine's power by itself (docs/bmc.md): so the
#     machine stays on, in the osie, for an operator to look at. The BMC
#     saw no power call after the Job's power-on, the VM still runs and
#     the Machine reads on, a few BMC polls after the cleanup;
#   - nothing claims a disk boot: the Workflow has no Booted condition
#     (it is set only on entering SUCCESS) and the Hardware no
#     awaiting-boot or boot-observed annotation.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"
. "$top_srcdir/tests/e2e/osie.sh"
. "$top_srcdir/tests/e2e/provision.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is not installed"
WF=wf-fail
WAIT=60           # seconds for a state ironbelld polls every second
BOOT=$E2E_TIMEOUT # seconds for a TCG boot (300)
# BMC polls (bmc.poll_interval: 1 s) to let pass after the cleanup
# before the power is read: time for a power change, if one came.
POLLS=3

osie_assets
PROV_OSIE_DIR=$OSIE_DIR
PROV_CONFIG_EXTRA="workflow:
  enabled: true
  resync_interval: 5"
prov_setup
diag "BMC $PROV_BMC_ADDR:$PROV_BMC_PORT"

prov_hardware false
is "$rc" 0 "the Hardware, with its bmcRef, netboot off"
ib apply -f "$top_srcdir/tests/e2e/provision-template-fail.yaml"
is "$rc" 0 "the failing Template"
[ "$rc" = 0 ] || diag "$err"
ok "the Machine reads off before the Workflow" wait_for "$WAIT" prov_power_is off
ib get machine "$PROV_MACHINE" -o json
unlike "$out" 'desired-power' "the Machine has no desired-power annotation"

prov_workflow "$WF" e2e-disk-fail
wf() { prov_wf "$@"; }
# action NAME FIELD: the field of the Workflow's action NAME.
action() {
	wf "[a.get(\"$2\", \"\") for t in d[\"status\"][\"tasks\"] for a in t[\"actions\"] if a[\"name\"] == \"$1\"][0]"
}
hw() { prov_hw "$@"; }
pxe_off() { [ "$(prov_hw_pxe)" = False ]; }

ib apply -f "$IB_TMP/workflow.yaml"
is "$rc" 0 "the Workflow, bootMode netboot and toggleAllowNetboot"

# ---- power off, one-time PXE, power on; the osie ----
job_ended() { [ -n "$(prov_job_state "netboot-$WF")" ]; }
ok "the Workflow's netboot Job ends" wait_for "$BOOT" job_ended
is "$(prov_job_state "netboot-$WF")" Completed "the netboot Job Completed through the BMC"
is "$(prov_hw_pxe)" True "netboot is on for the Workflow (toggleAllowNetboot)"
if prov_wait_console "$BOOT" 'IRONBELL-E2E-OSIE-UP'; then
	pass "the VM netbooted the osie"
else
	fail "the VM netbooted the osie"
	prov_diag
fi

# ---- the failure ----
ok "the Workflow ends" wait_for $((BOOT * 2)) prov_wf_over
state=$(prov_wf_state)
is "$state" FAILED "the Workflow ends FAILED"
[ "$state" = FAILED ] || {
	prov_diag
	diag "the Workflow's status: $(wf 'json.dumps(d.get("status", {}))')"
}
is "$(action stream-image state)" SUCCESS "the action before the failing one SUCCESS"
is "$(action grow-partition state)" FAILED "the failing action FAILED"
msg=$(action grow-partition message)
diag "its message: $msg"
like "$msg" 'exit status 3' "its message has the exit status"
like "$msg" 'grow-partition: no partition 9 on /dev/vda' "and the action's output"
ok "the action after it never ran" test "$(action write-cloud-init state)" != SUCCESS
is "$(action write-cloud-init executionStart)" "" "and was never started"

# ---- the cleanup on failure: netboot off ----
ok "netboot is off again after the failure (allowPXE false)" wait_for "$WAIT" pxe_off
is "$(wf 'd["status"]["bootOptions"]["allowNetboot"].get("toggledFalse")')" True \
	"the status says netboot was toggled off"
is "$(wf '[c["status"] for c in d["status"]["conditions"] if c["type"] == "AllowNetbootFalse"]')" \
	"['True']" "the condition AllowNetbootFalse is True"
is "$(prov_wf_state)" FAILED "the Workflow stays FAILED after its cleanup"

# ---- the power, as configured: left on ----
sleep "$POLLS"
calls=$(grep '^set ' "$PROV_VM_DIR/calls.log" | tr '\n' ';')
like "$calls" 'set boot pxe;set power 1;$' "the BMC saw no power call after the Job's power-on"
ok "the VM still runs, in the osie" prov_vm_running
is "$(prov_power)" on "the Machine reads on"
ib get job -o json
is "$(printf '%s' "$out" | _prov_json '" ".join(sorted(i["metadata"]["name"] for i in d.get("items", [])))')" \
	"netboot-$WF" "no Job but the netboot Job was made for the Workflow"

# ---- nothing claims a disk boot ----
is "$(wf '[c["type"] for c in d["status"].get("conditions", []) if c["type"] == "Booted"]')" "[]" \
	"the Workflow has no Booted condition"
is "$(hw '[k for k in d["metadata"].get("annotations", {}) if k.startswith("ironbell.dev/")]')" "[]" \
	"the Hardware is not marked awaiting a boot"
ib events workflow "$WF"
unlike "$out" 'Booted|NetbootAgain' "no Booted event on the Workflow"

prov_stop
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
