#!/bin/sh
# test_kube_capt — what Cluster API's Tinkerbell provider (CAPT) does to
# the cluster, replayed with the real kubectl against the API-server
# emulator while ironbelld runs in Kubernetes mode: Hardware carrying a
# role label, one chosen by a label selector that leaves out Hardware
# already owned (CAPT's v1alpha1.tinkerbell.org/ownerName), claimed with
# CAPT's ownership labels and finalizer by a merge patch with the
# resourceVersion read as precondition, its userData set; a Template and a
# Workflow named for the machine, the Workflow owned by a TinkerbellMachine,
# with hardwareRef, templateRef, hardwareMap device_1 = the Hardware's
# metadata.instance.id and bootOptions.toggleAllowNetboot, as CAPT creates
# them; the status followed as CAPT (and the Tinkerbell status it relies
# on) reads it: status.state, status.bootOptions.allowNetboot, the
# AllowNetbootTrue and AllowNetbootFalse conditions, the Hardware's
# allowPXE, with tests/grpc/tink_agent.py as the agent, to SUCCESS; the
# Hardware annotated provisioned, CAPT's labels, finalizer and userData
# untouched by ironbelld's write-backs. Then the re-provision: the Workflow
# deleted and made again under the same name starts from a fresh status
# (PENDING, not the old SUCCESS) and reaches SUCCESS again. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/kube/emu.sh"
. "$top_srcdir/tests/integration/workflow/objects.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
command -v kubectl >/dev/null 2>&1 || skip_all "kubectl is not installed"
wf_require_grpc
TINK_PY=$top_srcdir/tests/grpc/tink_agent.py
WAIT=30 # seconds a change may take to reach the API

OWNER=v1alpha1.tinkerbell.org/ownerName
OWNER_NS=v1alpha1.tinkerbell.org/ownerNamespace
PROVISIONED=v1alpha1.tinkerbell.org/provisioned
FINALIZER=tinkerbellmachine.infrastructure.cluster.x-k8s.io
MACHINE=capt-cp-0 # the TinkerbellMachine's name: the Template's and the Workflow's

# kget KIND NAME EXPR: EXPR with d = the object as kubectl reads it
ST='d.get("status", {})'
STATE="$ST.get('state')"
TOGGLED="$ST.get('bootOptions', {}).get('allowNetboot', {})"
# cond TYPE: the status of the Workflow's condition TYPE
cond() { echo "[c.get('status') for c in $ST.get('conditions', []) if c.get('type') == '$1']"; }
PXE='d["spec"]["interfaces"][0].get("netboot", {}).get("allowPXE")'

# hw NAME MAC ROLE [OWNER]: a Hardware as an operator writes it for CAPT
hw() {
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: $1
  namespace: default
  labels:
    type: $3
EOF
	[ -z "${4:-}" ] || printf '    %s: %s\n    %s: default\n' "$OWNER" "$4" "$OWNER_NS"
	cat <<EOF
spec:
  disks:
    - device: /dev/sda
  metadata:
    instance:
      id: "$2"
      hostname: $1
  interfaces:
    - dhcp:
        mac: "$2"
        hostname: $1
        arch: x86_64
        ip: {address: 192.0.2.$(( $(printf '%d' "0x${2##*:}") % 250 + 2 )), netmask: 255.255.255.0}
      netboot:
        allowPXE: false
        allowWorkflow: true
EOF
}
# capt_objects HW MAC UID: the Template and the Workflow CAPT creates for
# $MACHINE on Hardware HW, owned by the TinkerbellMachine of uid UID
capt_objects() {
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata:
  name: $MACHINE
  namespace: default
spec:
  data: |
    version: "0.1"
    name: $MACHINE
    global_timeout: 6000
    tasks:
      - name: $MACHINE
        worker: "{{.device_1}}"
        volumes:
          - /dev:/dev
        actions:
          - name: stream-image
            image: quay.io/tinkerbell/actions/oci2disk
            timeout: 600
            environment:
              DEST_DISK: '{{ index .Hardware.Disks 0 }}'
          - name: kexec-image
            image: quay.io/tinkerbell/actions/kexec
            timeout: 90
            pid: host
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: $MACHINE
  namespace: default
  ownerReferences:
    - apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: TinkerbellMachine
      name: $MACHINE
      uid: $3
      controller: true
spec:
  templateRef: $MACHINE
  hardwareRef: $1
  hardwareMap:
    device_1: "$2"
  bootOptions:
    toggleAllowNetboot: true
EOF
}
agent() {
	run "$OBJ_PY" "$TINK_PY" --target "127.0.0.1:$IB_GRPC_PORT" --stubs "$IB_TMP/stubs-py" \
		--agent-id "$1" --until-done --max-calls 50
}
# provision MAC WHAT: the Workflow followed as CAPT reads it, to SUCCESS
provision() {
	keventually workflow $MACHINE "$STATE" PENDING "$2: status.state PENDING"
	is "$(kget workflow $MACHINE "$TOGGLED.get('toggledTrue')")" True \
		"$2: status.bootOptions.allowNetboot.toggledTrue"
	is "$(kget workflow $MACHINE "$(cond AllowNetbootTrue)")" '["True"]' \
		"$2: condition AllowNetbootTrue True"
	is "$(kget workflow $MACHINE "$ST.get('templateRendering')")" successful \
		"$2: status.templateRendering successful"
	keventually hardware "$HW" "$PXE" True "$2: the Hardware's allowPXE on"
	agent "$1"
	is "$rc" 0 "$2: tink_agent.py runs the Workflow"
	[ "$rc" = 0 ] || diag "$out $err"
	keventually workflow $MACHINE "$STATE" SUCCESS "$2: status.state SUCCESS"
	is "$(kget workflow $MACHINE "[a['state'] for a in d['status']['tasks'][0]['actions']]")" \
		'["SUCCESS", "SUCCESS"]' "$2: both actions SUCCESS"
	keventually workflow $MACHINE "$TOGGLED.get('toggledFalse')" True \
		"$2: status.bootOptions.allowNetboot.toggledFalse"
	is "$(kget workflow $MACHINE "$(cond AllowNetbootFalse)")" '["True"]' \
		"$2: condition AllowNetbootFalse True"
	keventually hardware "$HW" "$PXE" False "$2: the Hardware's allowPXE off"
}

kemu_certs || bail_out "cannot make the certificates"
kemu_start emu --bookmark-interval 1 || bail_out "the emulator did not start"
kemu_kubeconfig "$IB_TMP/kubeconfig" cert
IB_GRPC_EXTRA="  long_poll: 1"
ib_write_config "kube:
  enabled: true
  kubeconfig: $IB_TMP/kubeconfig
  leader_election: false
  write_delay: 100
  backoff_min: 100
  backoff_max: 1000
bmc:
  enabled: false
workflow:
  enabled: true" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

# ---- the pool: one control-plane machine owned already, one free ----
{
	hw hw-cp-0 52:54:00:7c:00:01 cp other-machine
	echo ---
	hw hw-cp-1 52:54:00:7c:00:02 cp
	echo ---
	hw hw-wk-0 52:54:00:7c:00:03 worker
} >"$IB_TMP/pool.yaml"
kc apply --validate=false -f "$IB_TMP/pool.yaml"
is "$rc" 0 "kubectl applies three Hardware ($err)"

# CAPT's choice: its affinity term and "not owned yet"
kc get hardware -l "type=cp,!$OWNER" -o name
is "$out" hardware.tinkerbell.org/hw-cp-1 "the label selector chooses the free control-plane Hardware"
HW=${out#*/}
MAC=52:54:00:7c:00:02
is "$(kget hardware "$HW" 'd["spec"]["metadata"]["instance"]["id"]')" "$MAC" \
	"its metadata.instance.id, CAPT's device_1"

# the claim: a merge patch of the labels and the finalizer, with the
# resourceVersion read as precondition (a concurrent claim gets 409)
rv=$(kget hardware "$HW" 'd["metadata"]["resourceVersion"]')
kc patch hardware "$HW" --type merge -p "{\"metadata\": {\"resourceVersion\": \"$rv\", \"labels\": {\"$OWNER\": \"$MACHINE\", \"$OWNER_NS\": \"default\"}, \"finalizers\": [\"$FINALIZER\"]}}"
is "$rc" 0 "CAPT's ownership labels and finalizer written ($err)"
kc patch hardware "$HW" --type merge -p "{\"metadata\": {\"resourceVersion\": \"$rv\", \"labels\": {\"$OWNER\": \"late\"}}}"
ok "a second claim with the same resourceVersion gets a conflict" test "$rc" != 0
like "$err" "Conflict|modified" "kubectl says why ($err)"
kc patch hardware "$HW" --type merge -p '{"spec": {"userData": "#cloud-config\nhostname: capt-cp-0\n"}}'
is "$rc" 0 "CAPT's userData written"
kc get hardware -l "type=cp,!$OWNER" -o name
is "$out" "" "the selector now finds no free control-plane Hardware"

capt_objects "$HW" "$MAC" 6f1c2a3e-0000-4000-8000-00000000c4b7 >"$IB_TMP/capt.yaml"
kc apply --validate=false -f "$IB_TMP/capt.yaml"
is "$rc" 0 "kubectl applies the Template and the Workflow as CAPT creates them ($err)"
uid1=$(kget workflow $MACHINE 'd["metadata"]["uid"]')

provision "$MAC" "provision"
is "$(kget hardware "$HW" "d['metadata']['labels'].get('$OWNER')")" "$MACHINE" \
	"the ownership label is kept through ironbelld's patches"
is "$(kget hardware "$HW" "d['metadata'].get('finalizers')")" "[\"$FINALIZER\"]" \
	"CAPT's finalizer is kept"
like "$(kget hardware "$HW" "d['spec'].get('userData')")" "hostname: capt-cp-0" \
	"CAPT's userData is kept"
is "$(kget workflow $MACHINE "d['metadata']['ownerReferences'][0]['kind']")" TinkerbellMachine \
	"the Workflow's owner is still the TinkerbellMachine"
kc annotate hardware "$HW" "$PROVISIONED=true"
is "$rc" 0 "CAPT marks the Hardware provisioned"

# ---- re-provision: the Workflow deleted and made again ----
kc delete workflow $MACHINE
is "$rc" 0 "kubectl deletes the Workflow ($err)"
kc annotate hardware "$HW" "$PROVISIONED-"
gone_locally() { ib get workflow $MACHINE -o json; [ "$rc" != 0 ]; }
ok "the deletion reaches ironbelld's store" wait_for $WAIT gone_locally
kc apply --validate=false -f "$IB_TMP/capt.yaml"
is "$rc" 0 "kubectl makes the Workflow again under the same name ($err)"
uid2=$(kget workflow $MACHINE 'd["metadata"]["uid"]')
ok "it is another object (uid $uid1 -> $uid2)" test "$uid1" != "$uid2"
has_state() { [ -n "$(kget workflow $MACHINE "$ST.get('state') or ''")" ]; }
ok "the new Workflow gets a status" wait_for $WAIT has_state
st=$(kget workflow $MACHINE "$STATE")
ok "it starts from a fresh status, not the old SUCCESS ($st)" test "$st" != SUCCESS
is "$(kget workflow $MACHINE "$TOGGLED.get('toggledFalse')")" None \
	"the old toggledFalse is not carried over"
provision "$MAC" "re-provision"
is "$(kget workflow $MACHINE 'd["metadata"]["uid"]')" "$uid2" "the SUCCESS is the new Workflow's"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld stops cleanly"
ok "the log has no sanitizer report" ib_log_clean
tap_done
