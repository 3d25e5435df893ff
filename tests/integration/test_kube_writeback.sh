#!/bin/sh
# test_kube_writeback — what ironbelld does in Kubernetes mode, read back
# from the API with the real kubectl: ironbelld against the API-server
# emulator (tests/kube/) with leader_election false, the workflow
# controller, the worker API and the BMC controllers on (one Machine at a
# port where nothing answers), DHCP off. A Hardware, a Template and a
# Workflow with bootOptions.toggleAllowNetboot made with kubectl; an agent
# (the worker API's client of tests/integration/workflow/, then
# tests/grpc/tink_agent.py playing tink-agent) runs it. Asserted in the
# API (kubectl get -o json): the Workflow's status PENDING, RUNNING with
# currentState and the action's state, each action's state, duration and
# message, SUCCESS; the Hardware's allowPXE on at the start and off at the
# end, in its spec; a status write that gets 409 (the emulator's conflict
# control, and a label changed with kubectl meanwhile) read again and
# written, counted in /metrics with the other write-backs, the label kept;
# a Workflow with bootMode netboot has its bmc Job created in the API,
# owned by the Workflow's uid in the cluster, and its Task owned by the
# Job's, the Job's status written; a Hardware patch that gets 409 is sent
# again rather than dropped; a clean stop sends what is still queued and
# logs no error, and with the API server gone it stops all the same, after
# a bounded wait. Then an emulator whose Workflow CRD has tink v0.12's
# status schema gets that shape (STATE_*, currentAction) and the Workflow
# still runs to the end. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/kube/emu.sh"
. "$top_srcdir/tests/integration/workflow/objects.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
command -v kubectl >/dev/null 2>&1 || skip_all "kubectl is not installed"
wf_require_grpc
wf_stubs || bail_out "cannot generate the stubs of common/tink.proto"
TINK_PY=$top_srcdir/tests/grpc/tink_agent.py
WAIT=30 # seconds a change may take to reach the API

MAC=52:54:00:6b:00:01
MAC2=52:54:00:6b:00:02
MAC3=52:54:00:6b:00:03
MAC4=52:54:00:6b:00:04
MAC5=52:54:00:6b:00:05

api() { curl -s --max-time 10 --unix-socket "$IB_SOCK" "http://localhost$1"; }
metric() {
	api /metrics | sed -n "s/^$1 \\([0-9.e+]*\\)\$/\\1/p" | head -n 1
}
ST='d.get("status", {})'
ACTS='d["status"]["tasks"][0]["actions"]'
PXE='d["spec"]["interfaces"][0].get("netboot", {}).get("allowPXE")'

# objects: a Machine at a port where nothing answers and its Secret; hw
# NAME MAC [BMC]; the Template tpl-3 of three actions.
hw_kube() {
	hw_yaml "$1" "$2"
	[ -z "${3:-}" ] || printf '  bmcRef:\n    apiGroup: bmc.tinkerbell.org\n    kind: Machine\n    name: %s\n' "$3"
}
tpl_kube() {
	tpl_yaml "$1" 600 <<'EOF'
      - name: provision
        worker: "{{.device_1}}"
        actions:
          - name: a1
            image: quay.io/tinkerbell/actions/image2disk:latest
            timeout: 300
          - name: a2
            image: quay.io/tinkerbell/actions/cexec:latest
            timeout: 60
          - name: a3
            image: quay.io/tinkerbell/actions/writefile:latest
            timeout: 60
EOF
}
# tink_py AGENT: tink_agent.py plays tink-agent until the Workflow is
# done, reporting "<n>.5s" and "a<n> done" for the n-th action of the
# remaining ones
tink_py() {
	run "$OBJ_PY" "$TINK_PY" --target "127.0.0.1:$IB_GRPC_PORT" --stubs "$IB_TMP/stubs-py" \
		--agent-id "$1" --until-done --max-calls 50 \
		--script '{"default": {"result": "success", "duration": "2.5s", "message": "done"}}'
}

kemu_certs || bail_out "cannot make the certificates"
kemu_start emu --bookmark-interval 1 || bail_out "the emulator did not start"
kemu_kubeconfig "$IB_TMP/kubeconfig" cert
DEAD_PORT=$(ib_free_port) || bail_out "no free port"

IB_GRPC_EXTRA="  long_poll: 1"
ib_write_config "kube:
  enabled: true
  kubeconfig: $IB_TMP/kubeconfig
  leader_election: false
  write_delay: 100
  backoff_min: 100
  backoff_max: 1000
bmc:
  enabled: true
workflow:
  enabled: true" || bail_out "cannot write the config"
WF_ADDR=127.0.0.1:$IB_GRPC_PORT
ib_start_daemon || bail_out "ironbelld did not start"

{
	cat <<EOF
apiVersion: v1
kind: Secret
metadata: {name: bmc-nowhere, namespace: default}
type: Opaque
stringData: {username: admin, password: secret}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata: {name: bmc-nowhere, namespace: default}
spec:
  connection:
    host: 127.0.0.1
    port: $DEAD_PORT
    authSecretRef: {name: bmc-nowhere, namespace: default}
    insecureTLS: true
---
EOF
	hw_kube hw-1 "$MAC"
	echo ---
	tpl_kube tpl-3
	echo ---
	wf_yaml wf-1 tpl-3 hw-1 "$MAC" true
} >"$IB_TMP/objects.yaml"
kc apply --validate=false -f "$IB_TMP/objects.yaml"
is "$rc" 0 "kubectl applies a Machine, a Hardware, a Template and a Workflow ($err)"

# ---- PENDING, and the Hardware's allowPXE turned on in the API ----
keventually workflow wf-1 "$ST.get('state')" PENDING "wf-1: status.state PENDING in the API"
is "$(kget workflow wf-1 "[a['state'] for a in $ACTS]")" '["PENDING", "PENDING", "PENDING"]' \
	"wf-1: its three actions PENDING in the API"
is "$(kget workflow wf-1 "$ST.get('templateRendering')")" successful \
	"wf-1: templateRendering successful in the API"
keventually hardware hw-1 "$PXE" True "hw-1: allowPXE turned on in the API's spec"
is "$(kget hardware hw-1 "'allowPXE' in json.dumps(d.get('status', {}))")" False \
	"hw-1: the toggle is not written as status"

# ---- RUNNING, step by step ----
ACT_NAME=
act_get "$MAC"
[ "$ACT_CODE" = OK ] || diag "$out $err"
is "$ACT_CODE" OK "GetAction for $MAC hands out an action"
is "$ACT_NAME" a1 "the first action is a1"
is "$(act_report RUNNING)" OK "a1 reported RUNNING"
keventually workflow wf-1 "$ST.get('state')" RUNNING "wf-1: status.state RUNNING in the API"
is "$(kget workflow wf-1 "$ST.get('currentState', {}).get('actionName')")" a1 \
	"wf-1: status.currentState names a1 in the API"
is "$(kget workflow wf-1 "$ST.get('currentState', {}).get('state')")" RUNNING \
	"wf-1: status.currentState.state RUNNING in the API"
is "$(kget workflow wf-1 "$ACTS[0]['state']")" RUNNING "wf-1: a1 RUNNING in the API"

# ---- a conflict: a label changes, the next two status writes get 409 ----
c0=$(metric ironbell_kube_writeback_conflicts_total)
kc label workflow wf-1 ironbell.test/phase=running --overwrite
is "$rc" 0 "kubectl labels wf-1 while it runs ($err)"
kemu_ctl conflict '{"resource": "workflows", "count": 2}' >/dev/null
is "$(act_report SUCCESS 1.5s "a1 done")" OK "a1 reported SUCCESS"
keventually workflow wf-1 "$ACTS[0]['state']" SUCCESS "wf-1: after two 409s a1's SUCCESS reaches the API"
is "$(kget workflow wf-1 "$ACTS[0].get('executionDuration')")" 1.5s \
	"wf-1: a1's executionDuration in the API"
is "$(kget workflow wf-1 "$ACTS[0].get('message')")" "a1 done" "wf-1: a1's message in the API"
is "$(kemu_stat 'requests/fault 409')" 2 "the emulator answered two writes with 409"
c1=$(metric ironbell_kube_writeback_conflicts_total)
ok "the conflicts are counted ($c0 -> $c1)" test "${c1:-0}" -gt "${c0:-0}"
is "$(kget workflow wf-1 "d['metadata']['labels'].get('ironbell.test/phase')")" running \
	"the label set with kubectl is kept"

# ---- the rest with tink_agent.py, SUCCESS ----
tink_py "$MAC"
is "$rc" 0 "tink_agent.py plays tink-agent through the rest of wf-1"
[ "$rc" = 0 ] || diag "$out $err"
keventually workflow wf-1 "$ST.get('state')" SUCCESS "wf-1: status.state SUCCESS in the API"
is "$(kget workflow wf-1 "[a['state'] for a in $ACTS]")" '["SUCCESS", "SUCCESS", "SUCCESS"]' \
	"wf-1: every action SUCCESS in the API"
is "$(kget workflow wf-1 "[a.get('executionDuration') for a in $ACTS]")" \
	'["1.5s", "2.5s", "2.5s"]' "wf-1: each action's duration in the API"
like "$(kget workflow wf-1 "$ACTS[2].get('executionStart', '')")" \
	'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}(\.[0-9]+)?Z$' "wf-1: a3's executionStart in the API"
keventually hardware hw-1 "$PXE" False "hw-1: allowPXE turned off in the API's spec at POST"
like "$(api /metrics)" '^ironbell_kube_writeback_requests_total [1-9]' \
	"the write-back requests are counted"
like "$(api /metrics)" '^ironbell_kube_writeback_seconds_count [1-9]' \
	"the write-backs' latency is observed"

# ---- bootMode netboot: the bmc Job created in the API ----
{
	hw_kube hw-2 "$MAC2" bmc-nowhere
	echo ---
	wf_yaml wf-2 tpl-3 hw-2 "$MAC2"
	printf '  bootOptions:\n    bootMode: netboot\n'
} >"$IB_TMP/wf2.yaml"
kc apply --validate=false -f "$IB_TMP/wf2.yaml"
is "$rc" 0 "kubectl applies a Hardware with a bmcRef and a Workflow with bootMode netboot ($err)"
# job_of_wf2: the name of the Job in the API that wf-2 owns
job_of_wf2() {
	kc get jobs.bmc.tinkerbell.org -o json
	[ "$rc" = 0 ] || return 1
	_uid=$(kget workflow wf-2 'd["metadata"]["uid"]')
	JOB=$(printf '%s' "$out" | jget "[j['metadata']['name'] for j in d['items'] if any(r.get('uid') == '$_uid' and r.get('kind') == 'Workflow' for r in j['metadata'].get('ownerReferences', []))]")
	[ "$JOB" != "[]" ] && case $JOB in "<"*) false ;; esac
}
ok "wf-2's bmc Job is created in the API, owned by the Workflow's uid there" \
	wait_for $WAIT job_of_wf2
diag "wf-2's Job: $JOB"
like "$JOB" "netboot-wf-2" "the Job is named for wf-2"
# task_of_job: the Task in the API that the Job owns, by its uid there
task_of_job() {
	kc get tasks.bmc.tinkerbell.org -o json
	[ "$rc" = 0 ] || return 1
	_uid=$(kget jobs.bmc.tinkerbell.org netboot-wf-2 'd["metadata"]["uid"]')
	TASK=$(printf '%s' "$out" | jget "[t['metadata']['name'] for t in d['items'] if any(r.get('uid') == '$_uid' and r.get('kind') == 'Job' for r in t['metadata'].get('ownerReferences', []))]")
	[ "$TASK" != "[]" ] && case $TASK in "<"*) false ;; esac
}
ok "the Job's first Task is created in the API, owned by the Job's uid there" \
	wait_for $WAIT task_of_job
diag "netboot-wf-2's Task: ${TASK:-}"
has_status() { [ "$(kget jobs.bmc.tinkerbell.org netboot-wf-2 "len(d.get('status', {}).get('conditions', []))")" -gt 0 ] 2>/dev/null; }
ok "the Job's status (its conditions) reaches the API" wait_for $WAIT has_status

# ---- a Hardware patch that gets 409 is sent again ----
f0=$(kemu_stat 'requests/fault 409')
kemu_ctl conflict '{"resource": "hardware", "count": 1}' >/dev/null
{
	hw_kube hw-4 "$MAC4"
	echo ---
	wf_yaml wf-4 tpl-3 hw-4 "$MAC4" true
} >"$IB_TMP/wf4.yaml"
kc apply --validate=false -f "$IB_TMP/wf4.yaml"
is "$rc" 0 "kubectl applies a Hardware and a Workflow that toggles it ($err)"
keventually hardware hw-4 "$PXE" True "hw-4: after a 409, allowPXE still turned on in the API"
is "$(kemu_stat 'requests/fault 409')" "$((f0 + 1))" "the emulator answered the Hardware's patch with 409"
ok "the conflict is not logged as a refusal" sh -c "! grep -q 'hardware default/hw-4: the cluster refused' '$IB_LOG'"

# ---- a clean stop sends what is queued, and is not an error ----
{
	hw_kube hw-5 "$MAC5"
	echo ---
	wf_yaml wf-5 tpl-3 hw-5 "$MAC5"
} >"$IB_TMP/wf5.yaml"
kc apply --validate=false -f "$IB_TMP/wf5.yaml"
is "$rc" 0 "kubectl applies a fifth Workflow ($err)"
keventually workflow wf-5 "$ST.get('state')" PENDING "wf-5: PENDING in the API"
# Changes wait 60 s before they are sent: only the stop can send them.
ib_stop_daemon
sed -i 's/write_delay: 100$/write_delay: 60000/' "$IB_CONFIG"
ib_start_daemon || bail_out "ironbelld did not start again"
lines0=$(wc -l <"$IB_LOG")
act_get "$MAC5"
is "$ACT_CODE" OK "GetAction for $MAC5 hands out wf-5's first action"
is "$(act_report RUNNING)" OK "wf-5: a1 reported RUNNING"
is "$(act_report SUCCESS 0.5s "a1 done")" OK "wf-5: a1 reported SUCCESS"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld stops with status 0"
is "$(kget workflow wf-5 "$ACTS[0]['state']")" SUCCESS \
	"wf-5: a1's SUCCESS, queued at the stop, was sent before the daemon ended"
tail -n "+$((lines0 + 1))" "$IB_LOG" >"$IB_TMP/stop.log"
ok "a clean stop logs no error" sh -c "! grep -q 'level=error' '$IB_TMP/stop.log'"
grep -q 'level=error' "$IB_TMP/stop.log" && grep 'level=error' "$IB_TMP/stop.log" | head -n 3 | diag "$(cat)"

# ---- a stop with the API server gone: a bounded wait, then the exit ----
ib_start_daemon || bail_out "ironbelld did not start again"
act_get "$MAC5"
is "$ACT_NAME" a2 "GetAction for $MAC5 hands out a2"
is "$(act_report RUNNING)" OK "wf-5: a2 reported RUNNING"
kill -TERM "$KEMU_PID" 2>/dev/null
wait "$KEMU_PID" 2>/dev/null
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "with the API server gone, ironbelld still stops with status 0"
ok "it says what it could not send" file_has "$IB_LOG" "stopping with changes not yet sent back"
sed -i 's/write_delay: 60000$/write_delay: 100/' "$IB_CONFIG"

# ---- tink v0.12's Workflow CRD: the legacy status shape ----
kemu_start emu-legacy --bookmark-interval 1 --workflow-crd legacy ||
	bail_out "the legacy emulator did not start"
kemu_kubeconfig "$IB_TMP/kubeconfig" cert
rm -rf "$IB_STATE" # the cache of the other cluster
ib_start_daemon || bail_out "ironbelld did not start against the legacy emulator"
{
	hw_kube hw-3 "$MAC3"
	echo ---
	tpl_kube tpl-3
	echo ---
	wf_yaml wf-3 tpl-3 hw-3 "$MAC3"
} >"$IB_TMP/wf3.yaml"
kc apply --validate=false -f "$IB_TMP/wf3.yaml"
is "$rc" 0 "kubectl applies a Workflow to the legacy emulator ($err)"
keventually workflow wf-3 "$ST.get('state')" STATE_PENDING "legacy: status.state STATE_PENDING in the API"
tink_py "$MAC3"
is "$rc" 0 "legacy: tink_agent.py plays tink-agent through wf-3"
[ "$rc" = 0 ] || diag "$out $err"
keventually workflow wf-3 "$ST.get('state')" STATE_SUCCESS "legacy: status.state STATE_SUCCESS in the API"
is "$(kget workflow wf-3 "$ST.get('currentAction')")" a3 "legacy: status.currentAction is the last action"
is "$(kget workflow wf-3 "[a.get('status') for a in $ACTS]")" \
	'["STATE_SUCCESS", "STATE_SUCCESS", "STATE_SUCCESS"]' "legacy: every action's status STATE_SUCCESS"
is "$(kget workflow wf-3 "'currentState' in d.get('status', {})")" False \
	"legacy: no monorepo field in the status"
ok "the daemon's own view of wf-3 is SUCCESS" wf_wait wf-3 SUCCESS 10

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld stops cleanly"
ok "the log has no sanitizer report" ib_log_clean
tap_done
