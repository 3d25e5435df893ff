#!/bin/sh
# test_agent_daemon — ironbell-agent against the real ironbelld: its
# worker API on 127.0.0.1, Workflows applied with the client, and the
# agent run with --runtime host --once (each action's command run
# directly, with the task's and the action's environment):
#  - three actions (/bin/true, sh -c 'echo hi', a check of the
#    environment): the Workflow SUCCESS, every action SUCCESS with its
#    times;
#  - a failing action: the Workflow FAILED, the action's output in its
#    message, the next action never run;
#  - an action with timeout 2 that sleeps 30 s: the action and the
#    Workflow TIMEOUT, and its process gone when the agent exits;
#  - the global timeout passed: the agent told at its heartbeat stops
#    the action's process and exits;
#  - ironbelld killed with SIGKILL while an action runs and started
#    again: the agent's result is reported again until it lands, the
#    action is not run twice, and the Workflow ends SUCCESS;
#  - worker_id and grpc_authority read from a kernel command line as
#    HookOS writes it (--cmdline FILE), no flag: SUCCESS.
# Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/workflow/objects.sh"

AGENT=${IRONBELL_AGENT:-$top_builddir/ironbell-agent}
[ -x "$AGENT" ] || skip_all "ironbell-agent is not built ($AGENT)"

# The worker API on 127.0.0.1:$IB_GRPC_PORT (tests/lib.sh), its long poll
# short.
IB_GRPC_EXTRA="  long_poll: 1"
ib_write_config || bail_out "cannot write the config"
[ -n "${IB_GRPC_PORT:-}" ] || bail_out "tests/lib.sh gives the worker API no port"
WF_ADDR=127.0.0.1:$IB_GRPC_PORT
ib_start_daemon || bail_out "ironbelld did not start"

# machine WF MAC: Hardware hw-WF, Workflow WF of Template tpl-WF (stdin:
# the task's lines), applied.
machine() {
	{
		hw_yaml "hw-$1" "$2"
		echo ---
		tpl_yaml "tpl-$1" 600
		echo ---
		wf_yaml "$1" "tpl-$1" "hw-$1" "$2"
	} >"$IB_TMP/$1.yaml"
	apply_file "$IB_TMP/$1.yaml"
	is "$rc" 0 "$1: apply of its Hardware, Template and Workflow"
	[ "$rc" = 0 ] || diag "$out $err"
	ok "$1: PENDING" wf_wait "$1" PENDING
}

# An empty kernel command line: nothing from this machine's /proc/cmdline.
: >"$IB_TMP/cmdline"
agent() { # MAC
	run "$AGENT" --id "$1" --tinkerbell-grpc-authority "$WF_ADDR" --runtime host --once \
		--cmdline "$IB_TMP/cmdline" -v
}

# ---- three actions to SUCCESS ----

MAC_OK=52:54:00:e2:e2:01
machine wf-host "$MAC_OK" <<'EOF'
      - name: host
        worker: "{{.device_1}}"
        environment:
          FROM_TASK: task-value
        actions:
          - name: truth
            image: host
            timeout: 30
            command: ["/bin/true"]
          - name: echo
            image: host
            timeout: 30
            command: ["/bin/sh", "-c", "echo hi"]
          - name: env
            image: host
            timeout: 30
            command: ["/bin/sh", "-c", "test \"$FROM_TASK/$FROM_ACTION\" = task-value/action-value"]
            environment:
              FROM_ACTION: action-value
EOF
agent "$MAC_OK"
is "$rc" 0 "ironbell-agent --runtime host --once: exit 0"
[ "$rc" = 0 ] || diag "$out $err"
ok "wf-host: SUCCESS" wf_wait wf-host SUCCESS
[ "$WF_LAST" = SUCCESS ] || diag "state $WF_LAST: $(wf_json wf-host)"
for i in 0 1 2; do
	is "$(wf_action wf-host $i state)" SUCCESS "wf-host: action $i SUCCESS"
	like "$(wf_action wf-host $i executionStop)" '^[0-9]{4}-' "wf-host: action $i executionStop"
done
like "$(wf_action wf-host 0 executionDuration)" '^[0-9.]+(ns|us|µs|ms|s)$|^[0-9hms.]+$' \
	"wf-host: an executionDuration as Go prints one"

# ---- a failing action ----

MAC_F=52:54:00:e2:e2:02
machine wf-host-fail "$MAC_F" <<'EOF'
      - name: host
        worker: "{{.device_1}}"
        actions:
          - name: fails
            image: host
            timeout: 30
            command: ["/bin/sh", "-c", "echo this-went-wrong; echo on-stderr-too >&2; exit 3"]
          - name: never
            image: host
            timeout: 30
            command: ["/bin/true"]
EOF
agent "$MAC_F"
diag "agent exit status $rc"
ok "wf-host-fail: FAILED" wf_wait wf-host-fail FAILED
[ "$WF_LAST" = FAILED ] || diag "state $WF_LAST: $(wf_json wf-host-fail)"
is "$(wf_action wf-host-fail 0 state)" FAILED "wf-host-fail: the action FAILED"
msg=$(wf_action wf-host-fail 0 message)
like "$msg" 'this-went-wrong' "its output in its message"
diag "message: $msg"
is "$(wf_action wf-host-fail 1 state)" PENDING "the next action never run"

# ---- an action that times out ----

MAC_T=52:54:00:e2:e2:03
MARK=agent-timeout-$$
machine wf-host-timeout "$MAC_T" <<EOF
      - name: host
        worker: "{{.device_1}}"
        actions:
          - name: sleeps
            image: host
            timeout: 2
            command: ["/bin/sh", "-c", "sleep 30; : $MARK"]
EOF
agent "$MAC_T"
diag "agent exit status $rc"
ok "wf-host-timeout: TIMEOUT" wf_wait wf-host-timeout TIMEOUT
[ "$WF_LAST" = TIMEOUT ] || diag "state $WF_LAST: $(wf_json wf-host-timeout)"
is "$(wf_action wf-host-timeout 0 state)" TIMEOUT "wf-host-timeout: the action TIMEOUT"
gone() { ! pgrep -f "$MARK" >/dev/null 2>&1; }
ok "the timed-out action's process is gone" wait_for 10 gone

# ---- the global timeout: the server tells the agent to stop ----

# global_timeout 3, an action of 300 s with timeout 600: only the
# server's TIMEOUT, told at the agent's next heartbeat, can stop it.
MAC_G=52:54:00:e2:e2:05
MARK_G=agent-global-$$
{
	hw_yaml "hw-wf-host-global" "$MAC_G"
	echo ---
	tpl_yaml "tpl-wf-host-global" 3 <<EOF
      - name: host
        worker: "{{.device_1}}"
        actions:
          - name: long
            image: host
            timeout: 600
            command: ["/bin/sh", "-c", "sleep 300; : $MARK_G"]
EOF
	echo ---
	wf_yaml wf-host-global tpl-wf-host-global hw-wf-host-global "$MAC_G"
} >"$IB_TMP/wf-host-global.yaml"
apply_file "$IB_TMP/wf-host-global.yaml"
is "$rc" 0 "wf-host-global: apply of its Hardware, Template and Workflow"
ok "wf-host-global: PENDING" wf_wait wf-host-global PENDING
IB_CMD_TIMEOUT=120 run "$AGENT" --id "$MAC_G" --tinkerbell-grpc-authority "$WF_ADDR" --runtime host \
	--once --heartbeat 1 --cmdline "$IB_TMP/cmdline" -v
diag "agent exit status $rc"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	fail "ironbell-agent stops the action when told and exits" "$(printf '%s\n' "$err" | tail -n 20)"
else
	pass "ironbell-agent stops the action when told and exits"
fi
ok "wf-host-global: TIMEOUT" wf_wait wf-host-global TIMEOUT
[ "$WF_LAST" = TIMEOUT ] || diag "state $WF_LAST: $(wf_json wf-host-global)"
gone_g() { ! pgrep -f "$MARK_G" >/dev/null 2>&1; }
ok "the stopped action's process is gone" wait_for 10 gone_g
for p in $(pgrep -f "$MARK_G" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done

# ---- ironbelld killed with SIGKILL while an action runs ----

# The agent reports RUNNING, the daemon dies and comes back while the
# action runs; the agent's result, reported again until it lands, ends
# the Workflow.
MAC_K=52:54:00:e2:e2:06
MARK_K=$IB_TMP/killed-action-may-end
machine wf-host-kill "$MAC_K" <<EOF
      - name: host
        worker: "{{.device_1}}"
        actions:
          - name: waits
            image: host
            timeout: 120
            command: ["/bin/sh", "-c", "echo run >>$MARK_K.runs; i=0; while [ ! -e $MARK_K ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done"]
          - name: after
            image: host
            timeout: 30
            command: ["/bin/true"]
EOF
timeout -k 5 120 "$AGENT" --id "$MAC_K" --tinkerbell-grpc-authority "$WF_ADDR" --runtime host \
	--once --max-backoff 1 --cmdline "$IB_TMP/cmdline" -v >"$IB_TMP/agent-kill.out" 2>&1 &
AGENT_PID=$!
ib_bg "$AGENT_PID"
ok "wf-host-kill: RUNNING" wf_wait wf-host-kill RUNNING
ib_crash_daemon
touch "$MARK_K" # the action ends while the daemon is away
ib_start_daemon || bail_out "ironbelld did not start again after SIGKILL"
pass "ironbelld killed with SIGKILL while the action ran, and started again"
ok "wf-host-kill: SUCCESS" wf_wait wf-host-kill SUCCESS
[ "$WF_LAST" = SUCCESS ] || diag "state $WF_LAST: $(wf_json wf-host-kill); agent: $(tail -n 20 "$IB_TMP/agent-kill.out")"
agent_gone() { ! ib_alive "$AGENT_PID"; }
ok "the agent exits once the Workflow is over" wait_for 30 agent_gone
wait "$AGENT_PID" 2>/dev/null
is "$?" 0 "the agent's exit status is 0"
is "$(wc -l <"$MARK_K.runs" | tr -d ' ')" 1 "the action ran once: its result was reported again, not run again"

# ---- worker_id and grpc_authority from the kernel command line ----

MAC_C=52:54:00:e2:e2:04
machine wf-host-cmdline "$MAC_C" <<'EOF'
      - name: host
        worker: "{{.device_1}}"
        actions:
          - name: only
            image: host
            timeout: 30
            command: ["/bin/sh", "-c", "echo from the kernel command line"]
EOF
printf 'BOOT_IMAGE=/vmlinuz console=ttyS0 worker_id=%s grpc_authority=%s tinkerbell_tls=false hw_addr=%s\n' \
	"$MAC_C" "$WF_ADDR" "$MAC_C" >"$IB_TMP/cmdline-hookos"
run "$AGENT" --runtime host --once --cmdline "$IB_TMP/cmdline-hookos" -v
is "$rc" 0 "ironbell-agent with worker_id and grpc_authority from HookOS's command line: exit 0"
[ "$rc" = 0 ] || diag "$out $err"
ok "wf-host-cmdline: SUCCESS" wf_wait wf-host-cmdline SUCCESS

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
