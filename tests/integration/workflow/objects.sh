# objects.sh — Templates, Hardware and Workflows of a running ironbelld,
# and the worker side of its gRPC API, for the workflow tests (POSIX sh,
# sourced after tests/lib.sh; needs /usr/bin/python3, and python3-grpcio
# and python3-grpc-tools for the wfa calls).
#
#   wf_require_grpc             skip_all unless python3-grpcio and
#                               python3-grpc-tools import
#   wf_stubs                    generates the stubs of common/tink.proto
#                               into $WF_STUBS, once
#   wfa ARGS...                 tests/integration/workflow/wfagent.py
#                               against $WF_ADDR (and $WF_TLS_CA when set),
#                               as run: $rc, $out, $err
#   jget EXPR                   EXPR evaluated with d = the JSON on stdin
#                               (a missing key prints <error>)
#   hw_yaml NAME MAC [PXE]      a Hardware with one interface, allowPXE
#                               PXE (false)
#   tpl_yaml NAME TIMEOUT       a Template whose data is stdin (its tasks:
#                               lines, indented by 4), global_timeout
#                               TIMEOUT
#   wf_yaml NAME TPL HW MAC [TOGGLE]  a Workflow, hardwareMap device_1 =
#                               MAC, bootOptions.toggleAllowNetboot TOGGLE
#   apply_file FILE             ironbell apply -f FILE (as run)
#   wf_json NAME                prints the Workflow as JSON
#   wf_get NAME EXPR            EXPR with d = the Workflow
#   wf_state NAME               prints status.state
#   wf_is NAME STATE            true when status.state is STATE
#   wf_wait NAME STATE [SECS]   waits (at most SECS, $WF_WAIT) for STATE
#   wf_action NAME I FIELD      field FIELD of action I of the first task
#   hw_pxe NAME                 prints the first interface's allowPXE
#   out_get EXPR                EXPR with d = the last JSON line of $out
#                               (a wfa call's answer)
#   act_get AGENT               one GetAction: ACT_CODE, and on OK ACT_WF,
#                               ACT_TASK, ACT_ID, ACT_NAME
#   act_report STATE [DUR MSG]  reports that action's STATE; prints the
#                               gRPC code

OBJ_PY=/usr/bin/python3
WF_WAIT=${WF_WAIT:-60}
WF_STUBS=$IB_TMP/stubs
export WF_STUBS
WFAGENT=$top_srcdir/tests/integration/workflow/wfagent.py
WF_ADDR=
WF_TLS_CA=

wf_require_grpc() {
	[ -x "$OBJ_PY" ] || skip_all "no /usr/bin/python3"
	"$OBJ_PY" -c 'import grpc, grpc_tools' 2>/dev/null ||
		skip_all "python3-grpcio and python3-grpc-tools are not installed"
}

wf_stubs() {
	[ -f "$WF_STUBS/tink_pb2_grpc.py" ] && return 0
	"$OBJ_PY" "$WFAGENT" gen >"$IB_TMP/gen.log" 2>&1 || {
		diag "$(cat "$IB_TMP/gen.log")"
		return 1
	}
}

wfa() {
	if [ -n "$WF_TLS_CA" ]; then
		run "$OBJ_PY" "$WFAGENT" --addr "$WF_ADDR" --tls "$WF_TLS_CA" "$@"
	else
		run "$OBJ_PY" "$WFAGENT" --addr "$WF_ADDR" "$@"
	fi
}

jget() {
	"$OBJ_PY" -c 'import json, sys
try:
    d = json.load(sys.stdin)
    v = eval(sys.argv[1])
    print(json.dumps(v) if isinstance(v, (dict, list)) else v)
except Exception as e:
    print("<%s: %s>" % (type(e).__name__, e))' "$1"
}

hw_yaml() {
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: $1
  namespace: default
spec:
  disks:
    - device: /dev/vda
  interfaces:
    - dhcp:
        mac: "$2"
        hostname: $1
        arch: x86_64
        ip:
          address: 192.0.2.$(( $(printf '%d' "0x${2##*:}") % 250 + 2 ))
          netmask: 255.255.255.0
      netboot:
        allowPXE: ${3:-false}
        allowWorkflow: true
EOF
}

tpl_yaml() {
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata:
  name: $1
  namespace: default
spec:
  data: |
    version: "0.1"
    name: $1
    global_timeout: $2
    tasks:
EOF
	cat
}

wf_yaml() {
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: $1
  namespace: default
spec:
  templateRef: $2
  hardwareRef: $3
  hardwareMap:
    device_1: "$4"
EOF
	if [ -n "${5:-}" ]; then
		printf '  bootOptions:\n    toggleAllowNetboot: %s\n' "$5"
	fi
}

apply_file() { ib apply -f "$1"; }

wf_json() {
	ib get workflow "$1" -o json
	printf '%s' "$out"
}

wf_get() { wf_json "$1" | jget "$2"; }

wf_state() { wf_get "$1" 'd.get("status", {}).get("state", "")'; }

wf_is() { [ "$(wf_state "$1")" = "$2" ]; }

# wf_wait NAME STATE [SECS]: also returns as soon as the Workflow reaches
# a terminal state other than STATE (its state then in $WF_LAST).
wf_wait() {
	_lim=$(( ${3:-$WF_WAIT} * 5 ))
	_i=0
	while :; do
		WF_LAST=$(wf_state "$1")
		[ "$WF_LAST" = "$2" ] && return 0
		case $WF_LAST in
		SUCCESS | FAILED | TIMEOUT) return 1 ;;
		esac
		_i=$((_i + 1))
		[ $_i -ge $_lim ] && return 1
		sleep 0.2
	done
}

wf_action() {
	wf_get "$1" "d['status']['tasks'][0]['actions'][$2].get('$3', '')"
}

hw_pxe() {
	ib get hardware "$1" -o json
	printf '%s' "$out" | jget 'd["spec"]["interfaces"][0].get("netboot", {}).get("allowPXE")'
}

# the field F of the JSON line $out (of wfa)
out_get() { printf '%s' "$out" | tail -n 1 | jget "$1"; }

# ---- one step at a time, as an agent (wfa get / report) ----

# act_get AGENT: GetAction; on OK sets ACT_WF, ACT_TASK, ACT_ID, ACT_NAME
# and returns 0; else returns 1 (the code in ACT_CODE).
act_get() {
	wfa get --agent "$1"
	ACT_AGENT=$1
	ACT_CODE=$(out_get 'd["code"]')
	[ "$ACT_CODE" = OK ] || return 1
	ACT_WF=$(out_get 'd["response"]["workflow_id"]')
	ACT_TASK=$(out_get 'd["response"]["task_id"]')
	ACT_ID=$(out_get 'd["response"]["action_id"]')
	ACT_NAME=$(out_get 'd["response"]["name"]')
}

# act_report STATE [DURATION MESSAGE]: reports the action of the last
# act_get; prints the code.
act_report() {
	_now=$(date +%s)
	if [ "$1" = RUNNING ]; then
		wfa report --wf "$ACT_WF" --agent "$ACT_AGENT" --task "$ACT_TASK" --action "$ACT_ID" \
			--name "$ACT_NAME" --state RUNNING --start "$_now"
	else
		wfa report --wf "$ACT_WF" --agent "$ACT_AGENT" --task "$ACT_TASK" --action "$ACT_ID" \
			--name "$ACT_NAME" --state "$1" --start "$_now" --stop "$_now" \
			--duration "${2:-}" --message "${3:-}"
	fi
	out_get 'd["code"]'
}
