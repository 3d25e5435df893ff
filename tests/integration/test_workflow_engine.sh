#!/bin/sh
# test_workflow_engine — the workflow engine through the real ironbelld
# and its worker API, with a scripted agent (workflow/wfagent.py):
#  - an action with retries: 1 that fails once is handed out again after
#    its backoff (workflow.retry_backoff), and the Workflow ends SUCCESS
#    with two attempts;
#  - an action with no retries that fails: the Workflow FAILED with the
#    agent's message, and, with bootOptions.toggleAllowNetboot, the
#    Hardware's allowPXE on while it ran and off again after (cleanup on
#    failure, which Tinkerbell does not do);
#  - a global_timeout of a few seconds with an agent that starts an
#    action and never reports its end: TIMEOUT, and the agent is then
#    told to stop (FAILED_PRECONDITION to its heartbeat), its late result
#    changes nothing, and it is given nothing more;
#  - an action with timeout 2 whose agent says nothing after RUNNING:
#    its deadline is start + 2 + workflow.action_grace, then the action
#    and the Workflow TIMEOUT;
#  - two Workflows for one agent: the finished one does not hide the new
#    one; of two pending, the newest goes first, then the other;
#  - a Workflow with spec.disabled gets its agentID and hands nothing
#    out until disabled is set to false;
#  - ironbelld killed with SIGKILL just after an action was reported
#    RUNNING: after a restart the reports made before are all there, the
#    same action is handed out again, and the Workflow completes.
# Every wait is bounded; nothing is asserted about time. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/workflow/objects.sh"

wf_require_grpc
wf_stubs || bail_out "cannot generate the stubs of common/tink.proto"

# The worker API on 127.0.0.1:$IB_GRPC_PORT (tests/lib.sh), its long poll
# short.
IB_GRPC_EXTRA="  long_poll: 1"
ib_write_config "workflow:
  action_grace: 1
  retry_backoff: 1" || bail_out "cannot write the config"
[ -n "${IB_GRPC_PORT:-}" ] || bail_out "tests/lib.sh gives the worker API no port"
WF_ADDR=127.0.0.1:$IB_GRPC_PORT
ib_start_daemon || bail_out "ironbelld did not start"

# tpl NAME GLOBAL_TIMEOUT [RETRIES_OF_A2 [TIMEOUT_OF_A1]]: three actions
# in one task.
tpl() {
	tpl_yaml "$1" "$2" <<EOF
      - name: provision
        worker: "{{.device_1}}"
        actions:
          - name: a1
            image: img/a1
            timeout: ${4:-600}
          - name: a2
            image: img/a2
            timeout: 600
            retries: ${3:-0}
          - name: a3
            image: img/a3
            timeout: 600
EOF
}

# machine WF MAC GLOBAL_TIMEOUT RETRIES TOGGLE [A1_TIMEOUT]: Hardware
# hw-WF, Template tpl-WF, Workflow WF, applied.
machine() {
	{
		hw_yaml "hw-$1" "$2"
		echo ---
		tpl "tpl-$1" "$3" "$4" "${6:-600}"
		echo ---
		wf_yaml "$1" "tpl-$1" "hw-$1" "$2" "${5:-}"
	} >"$IB_TMP/$1.yaml"
	apply_file "$IB_TMP/$1.yaml"
	is "$rc" 0 "$1: apply of its Hardware, Template and Workflow"
	[ "$rc" = 0 ] || diag "$out $err"
}

# ---- retries: 1, one failure, then SUCCESS ----

MAC_R=52:54:00:e2:e1:01
machine wf-retry "$MAC_R" 600 1
ok "wf-retry: PENDING" wf_wait wf-retry PENDING
wfa run --agent "$MAC_R" --fail a2:1 --max-seconds 120
is "$rc" 0 "the agent plays wf-retry, a2 failing once"
[ "$rc" = 0 ] || diag "$out $err"
like "$out" '"action": "a2".*"report": "FAILED".*"result": \{"code": "OK"' "its FAILED report of a2 was accepted"
ok "wf-retry: SUCCESS" wf_wait wf-retry SUCCESS
[ "$WF_LAST" = SUCCESS ] || diag "state $WF_LAST: $(wf_json wf-retry)"
is "$(wf_action wf-retry 1 state)" SUCCESS "wf-retry: a2 SUCCESS"
is "$(wf_action wf-retry 1 attempts)" 2 "wf-retry: a2 was started twice"
is "$(wf_action wf-retry 0 attempts)" 1 "wf-retry: a1 once"
like "$(wf_get wf-retry '[c["type"] for c in d["status"].get("conditions", [])]')" \
	'ActionRetry' "wf-retry: an ActionRetry condition"
retry_msg=$(wf_get wf-retry '[c.get("message", "") for c in d["status"].get("conditions", []) if c["type"] == "ActionRetry"]')
like "$retry_msg" 'retried in 1s' "wf-retry: its backoff is workflow.retry_backoff, 1 s"

# ---- no retries: FAILED, and allowPXE back off ----

MAC_F=52:54:00:e2:e1:02
machine wf-fail "$MAC_F" 600 0 true
ok "wf-fail: PENDING (allowPXE toggled on first)" wf_wait wf-fail PENDING
is "$(hw_pxe hw-wf-fail)" True "hw-wf-fail: allowPXE on while the Workflow runs"
is "$(wf_get wf-fail 'd["status"]["bootOptions"]["allowNetboot"].get("toggledTrue")')" True \
	"wf-fail: bootOptions.allowNetboot.toggledTrue"
wfa run --agent "$MAC_F" --fail a2 --max-seconds 120
is "$rc" 0 "the agent plays wf-fail, a2 failing"
[ "$rc" = 0 ] || diag "$out $err"
ok "wf-fail: FAILED" wf_wait wf-fail FAILED
is "$(wf_action wf-fail 0 state)" SUCCESS "wf-fail: a1 SUCCESS"
is "$(wf_action wf-fail 1 state)" FAILED "wf-fail: a2 FAILED"
is "$(wf_action wf-fail 1 message)" "a2 failed (attempt 1) on $MAC_F" "wf-fail: a2's message as reported"
is "$(wf_action wf-fail 2 state)" PENDING "wf-fail: a3 never handed out"
pxe_off() { [ "$(hw_pxe hw-wf-fail)" = False ]; }
ok "hw-wf-fail: allowPXE off again after the failure" wait_for "$WF_WAIT" pxe_off
is "$(wf_get wf-fail 'd["status"]["bootOptions"]["allowNetboot"].get("toggledFalse")')" True \
	"wf-fail: bootOptions.allowNetboot.toggledFalse"
act_get "$MAC_F"
is "$ACT_CODE" NOT_FOUND "wf-fail's agent then gets NOT_FOUND"

# ironbell workflow retry: from the failed action on.
ib workflow retry wf-fail
if [ "$rc" = 2 ] && printf '%s' "$err" | grep -q 'unknown command'; then
	skip "ironbell workflow retry wf-fail" "the client has no workflow retry"
else
	is "$rc" 0 "ironbell workflow retry wf-fail: exit 0"
	[ "$rc" = 0 ] || diag "$out $err"
	ok "wf-fail: PENDING again" wf_wait wf-fail PENDING
	is "$(wf_action wf-fail 0 state)" SUCCESS "wf-fail: a1 still SUCCESS"
	is "$(wf_action wf-fail 1 state)" PENDING "wf-fail: a2 PENDING again"
	act_get "$MAC_F"
	is "$ACT_NAME" a2 "the retried Workflow hands out a2, not a1"
	wfa run --agent "$MAC_F"
	is "$rc" 0 "the agent plays the rest of wf-fail"
	ok "wf-fail: SUCCESS after the retry" wf_wait wf-fail SUCCESS
	is "$(wf_action wf-fail 0 attempts)" 1 "a1 was not run again"
fi

# ---- the global timeout, with an agent that never reports a result ----

MAC_T=52:54:00:e2:e1:03
machine wf-gtimeout "$MAC_T" 3 0
ok "wf-gtimeout: PENDING" wf_wait wf-gtimeout PENDING
act_get "$MAC_T"
is "$ACT_CODE" OK "wf-gtimeout: a1 handed out"
is "$(act_report RUNNING)" OK "wf-gtimeout: a1 reported RUNNING, and then nothing"
like "$(wf_get wf-gtimeout 'd["status"].get("globalExecutionStop", "")')" '^[0-9]{4}-' \
	"wf-gtimeout: globalExecutionStop set at the first action's start"
ok "wf-gtimeout: TIMEOUT" wf_wait wf-gtimeout TIMEOUT
[ "$WF_LAST" = TIMEOUT ] || diag "state $WF_LAST: $(wf_json wf-gtimeout)"
is "$(act_report RUNNING)" FAILED_PRECONDITION "a heartbeat after the timeout: FAILED_PRECONDITION (stop)"
is "$(act_report SUCCESS 1s late)" OK "a late SUCCESS: answered OK (tink-agent would stop its loop on 9)"
is "$(wf_state wf-gtimeout)" TIMEOUT "wf-gtimeout still TIMEOUT"
unlike "$(wf_action wf-gtimeout 0 state)" '^SUCCESS$' "a1 not SUCCESS"
act_get "$MAC_T"
is "$ACT_CODE" NOT_FOUND "wf-gtimeout's agent then gets NOT_FOUND"

# ---- an action's own timeout, declared by the server ----

# a1 has timeout 2 and workflow.action_grace is 1: the server ends it 3 s
# after it started when the agent says nothing.
MAC_D=52:54:00:e2:e1:07
machine wf-adeadline "$MAC_D" 600 0 "" 2
ok "wf-adeadline: PENDING" wf_wait wf-adeadline PENDING
act_get "$MAC_D"
is "$(out_get 'int(d["response"]["timeout"])')" 2 "wf-adeadline: a1 handed out with timeout 2"
d_before=$(date +%s)
is "$(act_report RUNNING)" OK "wf-adeadline: a1 reported RUNNING, and then nothing"
d_after=$(date +%s)
secs() { # RFC 3339 -> Unix seconds
	"$OBJ_PY" -c 'import sys, datetime
print(int(datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00")).timestamp()))' "$1"
}
d_start=$(secs "$(wf_action wf-adeadline 0 executionStart)")
d_deadline=$(secs "$(wf_action wf-adeadline 0 deadline)")
# The server counts from when the report reached it, somewhere between
# the two readings of this clock around the call (a second either way
# for the rounding to seconds).
ok "wf-adeadline: a1's deadline is the report's arrival + timeout 2 + action_grace 1" \
	test "$d_deadline" -ge $((d_before + 3 - 1)) -a "$d_deadline" -le $((d_after + 3 + 1))
[ "$d_deadline" -ge $((d_before + 2)) ] && [ "$d_deadline" -le $((d_after + 4)) ] ||
	diag "deadline $d_deadline, report sent at $d_before, answered at $d_after, start $d_start"
ok "wf-adeadline: TIMEOUT" wf_wait wf-adeadline TIMEOUT
[ "$WF_LAST" = TIMEOUT ] || diag "state $WF_LAST: $(wf_json wf-adeadline)"
is "$(wf_action wf-adeadline 0 state)" TIMEOUT "wf-adeadline: a1 TIMEOUT"
is "$(act_report RUNNING)" FAILED_PRECONDITION "a heartbeat after the deadline: FAILED_PRECONDITION"

# ---- two Workflows for one agent ----

MAC_2=52:54:00:e2:e1:04
machine wf-first "$MAC_2" 600 0
ok "wf-first: PENDING" wf_wait wf-first PENDING
wfa run --agent "$MAC_2"
is "$rc" 0 "the agent plays wf-first"
ok "wf-first: SUCCESS" wf_wait wf-first SUCCESS
wf_yaml a-wf-again tpl-wf-first hw-wf-first "$MAC_2" >"$IB_TMP/again.yaml"
apply_file "$IB_TMP/again.yaml"
is "$rc" 0 "a second Workflow for the same agent (its name sorted first)"
ok "a-wf-again: PENDING" wf_wait a-wf-again PENDING
act_get "$MAC_2"
is "$ACT_CODE" OK "GetAction: the finished Workflow does not hide the new one"
is "$ACT_WF" default/a-wf-again "the action is a-wf-again's"
wfa run --agent "$MAC_2"
ok "a-wf-again: SUCCESS" wf_wait a-wf-again SUCCESS
is "$(wf_state wf-first)" SUCCESS "wf-first untouched"

MAC_N=52:54:00:e2:e1:05
machine wf-older "$MAC_N" 600 0
ok "wf-older: PENDING" wf_wait wf-older PENDING
# creationTimestamp has seconds: let one pass.
t0=$(date +%s)
later() { [ "$(date +%s)" -gt "$t0" ]; }
wait_for 5 later
wf_yaml wf-newer tpl-wf-older hw-wf-older "$MAC_N" >"$IB_TMP/newer.yaml"
apply_file "$IB_TMP/newer.yaml"
ok "wf-newer: PENDING" wf_wait wf-newer PENDING
act_get "$MAC_N"
is "$ACT_WF" default/wf-newer "of two pending Workflows, the newest is handed out first"
wfa run --agent "$MAC_N" --stop-after 3
ok "wf-newer: SUCCESS" wf_wait wf-newer SUCCESS
is "$(wf_state wf-older)" PENDING "wf-older still PENDING"
act_get "$MAC_N"
is "$ACT_WF" default/wf-older "then the older one"
wfa run --agent "$MAC_N"
ok "wf-older: SUCCESS" wf_wait wf-older SUCCESS

# ---- spec.disabled: nothing handed out until it is cleared ----

MAC_Q=52:54:00:e2:e1:08
{
	hw_yaml hw-wf-disabled "$MAC_Q"
	echo ---
	tpl tpl-wf-disabled 600 0
	echo ---
	wf_yaml wf-disabled tpl-wf-disabled hw-wf-disabled "$MAC_Q"
	echo "  disabled: true"
} >"$IB_TMP/disabled.yaml"
apply_file "$IB_TMP/disabled.yaml"
is "$rc" 0 "wf-disabled: apply of a Workflow with spec.disabled"
agent_set() { [ "$(wf_get wf-disabled 'd.get("status", {}).get("agentID", "")')" = "$MAC_Q" ]; }
ok "wf-disabled: status.agentID set" wait_for "$WF_WAIT" agent_set
act_get "$MAC_Q"
is "$ACT_CODE" NOT_FOUND "wf-disabled: its agent gets NOT_FOUND"
unlike "$(wf_state wf-disabled)" '^(RUNNING|SUCCESS)$' "wf-disabled: not started"
sed 's/^  disabled: true$/  disabled: false/' "$IB_TMP/disabled.yaml" >"$IB_TMP/enabled.yaml"
apply_file "$IB_TMP/enabled.yaml"
is "$rc" 0 "wf-disabled: spec.disabled set to false"
ok "wf-disabled: PENDING" wf_wait wf-disabled PENDING
wfa run --agent "$MAC_Q"
is "$rc" 0 "the agent plays wf-disabled once enabled"
ok "wf-disabled: SUCCESS" wf_wait wf-disabled SUCCESS

# ---- kill -9 in the middle ----

MAC_K=52:54:00:e2:e1:06
machine wf-kill "$MAC_K" 600 0
ok "wf-kill: PENDING" wf_wait wf-kill PENDING
act_get "$MAC_K"
is "$ACT_NAME" a1 "wf-kill: a1 handed out"
is "$(act_report RUNNING)" OK "wf-kill: a1 RUNNING"
is "$(act_report SUCCESS 1.5s "a1 done before the crash")" OK "wf-kill: a1 SUCCESS"
act_get "$MAC_K"
is "$ACT_NAME" a2 "wf-kill: a2 handed out"
K_A2=$ACT_ID
is "$(act_report RUNNING)" OK "wf-kill: a2 RUNNING"
K_BEFORE=$(wf_get wf-kill '[d["status"]["tasks"][0]["actions"][i].get(k) for i in (0, 1) for k in ("state", "executionStart", "executionStop", "executionDuration", "message")]')
ib_crash_daemon
ib_start_daemon || bail_out "ironbelld did not start again after SIGKILL"
pass "ironbelld killed with SIGKILL and started again"
is "$(wf_state wf-kill)" RUNNING "wf-kill: RUNNING after the restart"
is "$(wf_action wf-kill 0 state)" SUCCESS "a1's SUCCESS kept"
is "$(wf_action wf-kill 0 message)" "a1 done before the crash" "a1's message kept"
is "$(wf_get wf-kill '[d["status"]["tasks"][0]["actions"][i].get(k) for i in (0, 1) for k in ("state", "executionStart", "executionStop", "executionDuration", "message")]')" \
	"$K_BEFORE" "a1's and a2's states, times, durations and messages as before the kill"
is "$(wf_action wf-kill 1 state)" RUNNING "a2's RUNNING kept"
like "$(wf_action wf-kill 1 executionStart)" '^[0-9]{4}-' "a2's executionStart kept"
got=
again() { act_get "$MAC_K" && got=$ACT_ID; }
ok "GetAction answers after the restart" wait_for 30 again
is "$got" "$K_A2" "the same action, a2, is handed out again"
wfa run --agent "$MAC_K"
is "$rc" 0 "the agent goes on with wf-kill"
[ "$rc" = 0 ] || diag "$out $err"
ok "wf-kill: SUCCESS" wf_wait wf-kill SUCCESS
is "$(wf_action wf-kill 0 message)" "a1 done before the crash" "a1's message still there"
is "$(wf_get wf-kill '[a["state"] for a in d["status"]["tasks"][0]["actions"]]')" \
	'["SUCCESS", "SUCCESS", "SUCCESS"]' "wf-kill: every action SUCCESS"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
