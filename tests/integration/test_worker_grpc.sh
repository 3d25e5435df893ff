#!/bin/sh
# test_worker_grpc — the worker protocol against the real ironbelld: its
# grpc: listener on 127.0.0.1 with a short long poll, a Template of three
# actions in one task for "{{.device_1}}", a Hardware and a Workflow
# applied with the client; the Workflow rendered and PENDING; then
#  - one GetAction read field by field (IDs, image, timeout, command, the
#    task's and the action's volumes and environment merged and sorted);
#  - tests/grpc/tink_agent.py (python3-grpcio) plays tink-agent through
#    the whole Workflow (RUNNING reported with Go's zero stop time, as
#    tink-agent does): SUCCESS, every action SUCCESS with the
#    executionDuration and message it reported, as get workflows and
#    describe show it;
#  - tests/grpc/tink_agent.js (@grpc/grpc-js under node) does the same
#    with a second Workflow and agent;
#  - an agent with no Workflow gets NOT_FOUND once the long poll is over,
#    and so do 24 long polls at once from h2load on 3 connections;
#  - a report from another agent gets PERMISSION_DENIED, one for an
#    unknown workflow or action NOT_FOUND, one with no state
#    INVALID_ARGUMENT, and the Workflow is unchanged by any of them;
#  - malformed calls: an unknown method UNIMPLEMENTED (also from curl
#    --http2-prior-knowledge, a third HTTP/2 client), a message with an
#    unknown field, a truncated field or a wrong wire type
#    INVALID_ARGUMENT, one over grpc.max_message RESOURCE_EXHAUSTED, all
#    counted in /metrics;
#  - the listener over TLS (grpc.tls_cert/tls_key, a self-signed
#    certificate from openssl): a whole Workflow over TLS; h2c is refused
#    there.
# Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/workflow/objects.sh"

wf_require_grpc
wf_stubs || bail_out "cannot generate the stubs of common/tink.proto"

TINK_PY=$top_srcdir/tests/grpc/tink_agent.py
TINK_JS=$top_srcdir/tests/grpc/tink_agent.js

MAC_PY=52:54:00:e2:e0:01
MAC_JS=52:54:00:e2:e0:02
MAC_NONE=52:54:00:e2:e0:03
MAC_D=52:54:00:e2:e0:04
MAC_X=52:54:00:e2:e0:05
MAC_T=52:54:00:e2:e0:06

# The worker API on 127.0.0.1:$IB_GRPC_PORT (tests/lib.sh), its long poll
# short.
IB_GRPC_EXTRA="  long_poll: 1"
ib_write_config || bail_out "cannot write the config"
[ -n "${IB_GRPC_PORT:-}" ] || bail_out "tests/lib.sh gives the worker API no port"
WF_ADDR=127.0.0.1:$IB_GRPC_PORT
ib_start_daemon || bail_out "ironbelld did not start"

# tpl3 NAME: three actions in one task, with the task's and the actions'
# volumes and environment.
tpl3() {
	tpl_yaml "$1" 600 <<'EOF'
      - name: provision
        worker: "{{.device_1}}"
        volumes:
          - /dev:/dev
        environment:
          TASK_VAR: from-task
        actions:
          - name: a1
            image: quay.io/tinkerbell/actions/image2disk:latest
            timeout: 300
            command: ["/bin/sh", "-c", "echo one"]
            volumes:
              - /tmp:/tmp:ro
            environment:
              B_VAR: "2"
              A_VAR: "{{ .device_1 }}"
          - name: a2
            image: quay.io/tinkerbell/actions/cexec:latest
            timeout: 60
          - name: a3
            image: quay.io/tinkerbell/actions/writefile:latest
            timeout: 60
EOF
}

# machine NAME MAC: a Hardware, the Template tpl-NAME and the Workflow
# NAME for MAC, applied.
machine() {
	{
		hw_yaml "hw-$1" "$2"
		echo ---
		tpl3 "tpl-$1"
		echo ---
		wf_yaml "$1" "tpl-$1" "hw-$1" "$2"
	} >"$IB_TMP/$1.yaml"
	apply_file "$IB_TMP/$1.yaml"
}

# actions_done NAME AGENT: every action SUCCESS, with the duration and
# message the agents report ("<n>.5s", "a<n> done by <agent>"), and its
# start time.
actions_done() {
	_j=$(wf_json "$1")
	_acts='d["status"]["tasks"][0]["actions"]'
	is "$(printf '%s' "$_j" | jget "[a.get('state') for a in $_acts]")" \
		'["SUCCESS", "SUCCESS", "SUCCESS"]' "$1: every action SUCCESS"
	is "$(printf '%s' "$_j" | jget "[a.get('executionDuration') for a in $_acts]")" \
		'["1.5s", "2.5s", "3.5s"]' "$1: each executionDuration as reported"
	is "$(printf '%s' "$_j" | jget "[a.get('message') for a in $_acts]")" \
		"[\"a1 done by $2\", \"a2 done by $2\", \"a3 done by $2\"]" "$1: each message as reported"
	for _i in 0 1 2; do
		like "$(printf '%s' "$_j" | jget "$_acts[$_i].get('executionStart', '')")" \
			'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}(\.[0-9]+)?Z$' "$1: action $_i executionStart"
	done
}

# ---- a Workflow rendered, and one GetAction read field by field ----

machine wf-py "$MAC_PY"
is "$rc" 0 "apply of a Hardware, a Template of three actions and a Workflow"
[ "$rc" = 0 ] || diag "$out $err"
ok "wf-py: PENDING" wf_wait wf-py PENDING
[ "$WF_LAST" = PENDING ] || diag "state: $WF_LAST; $(wf_json wf-py)"
is "$(wf_get wf-py 'd["status"].get("templateRendering")')" successful "wf-py: templateRendering successful"
is "$(wf_get wf-py 'd["status"].get("agentID")')" "$MAC_PY" "wf-py: status.agentID is device_1"
is "$(wf_get wf-py '[a["state"] for a in d["status"]["tasks"][0]["actions"]]')" \
	'["PENDING", "PENDING", "PENDING"]' "wf-py: three actions PENDING"

wfa get --agent "$MAC_PY"
is "$(out_get 'd["code"]')" OK "GetAction for $MAC_PY: OK"
[ "$(out_get 'd["code"]')" = OK ] || diag "$out $err"
A1=$(out_get 'd["response"]')
r() { printf '%s' "$A1" | jget "$1"; }
is "$(r 'd["workflow_id"]')" default/wf-py "workflow_id is <namespace>/<name>"
is "$(r 'd["name"]')" a1 "the first action"
is "$(r 'd["agent_id"]')" "$MAC_PY" "agent_id"
is "$(r 'd["task_id"]')" "$(wf_get wf-py 'd["status"]["tasks"][0]["id"]')" "task_id is the status' task ID"
is "$(r 'd["action_id"]')" "$(wf_action wf-py 0 id)" "action_id is the status' action ID"
is "$(r 'd["image"]')" quay.io/tinkerbell/actions/image2disk:latest "image"
is "$(r 'int(d["timeout"])')" 300 "timeout"
is "$(r 'd["command"]')" '["/bin/sh", "-c", "echo one"]' "command"
is "$(r 'd["volumes"]')" '["/dev:/dev", "/tmp:/tmp:ro"]' "volumes: the task's, then the action's"
is "$(r 'd["environment"]')" "[\"A_VAR=$MAC_PY\", \"B_VAR=2\", \"TASK_VAR=from-task\"]" \
	"environment: the task's and the action's, rendered, sorted"
is "$(wf_get wf-py 'd["status"].get("currentState", {}).get("actionName")')" a1 \
	"status.currentState names the action handed out"

# ---- tink_agent.py through the whole Workflow ----

# script AGENT: what the test agents report for a1, a2, a3.
script() {
	printf '{"steps": ['
	for _i in 1 2 3; do
		[ $_i = 1 ] || printf ', '
		printf '{"result": "success", "duration": "%d.5s", "message": "a%d done by %s"}' \
			"$_i" "$_i" "$1"
	done
	printf ']}'
}
# reports_ok: every ReportActionStatus in $out answered OK, and there
# were six of them (RUNNING and SUCCESS of three actions).
reports_ok() {
	printf '%s\n' "$out" | "$OBJ_PY" -c 'import json, sys
codes = [json.loads(l)["code"] for l in sys.stdin if l.startswith("{") and json.loads(l).get("call") == "ReportActionStatus"]
sys.exit(0 if codes == ["OK"] * 6 else 1)'
}
tink_py() { # AGENT [ARGS...]
	_ag=$1
	shift
	run "$OBJ_PY" "$TINK_PY" --target "$WF_ADDR" --stubs "$IB_TMP/stubs-py" --agent-id "$_ag" \
		--script "$(script "$_ag")" --until-done --max-calls 50 "$@"
}
NODE_MODULES=${IRONBELL_NODE_MODULES:-$top_srcdir/build-node/node_modules}
have_node() {
	command -v node >/dev/null 2>&1 && [ -f "$TINK_JS" ] &&
		[ -d "$NODE_MODULES/@grpc/grpc-js" ] && [ -d "$NODE_MODULES/@grpc/proto-loader" ]
}

if [ -f "$TINK_PY" ]; then
	tink_py "$MAC_PY"
	is "$rc" 0 "tink_agent.py plays tink-agent through wf-py"
	[ "$rc" = 0 ] || diag "$out $err"
	ok "tink_agent.py: its six reports answered OK" reports_ok
	reports_ok || diag "$out"
else
	skip "tink_agent.py plays tink-agent through wf-py" "tests/grpc/tink_agent.py is missing"
	wfa run --agent "$MAC_PY"
	is "$rc" 0 "the scripted agent plays wf-py instead"
	[ "$rc" = 0 ] || diag "$out $err"
fi
ok "wf-py: SUCCESS" wf_wait wf-py SUCCESS
[ "$WF_LAST" = SUCCESS ] || diag "state $WF_LAST: $(wf_json wf-py)"
actions_done wf-py "$MAC_PY"
ib get workflows
like "$out" "^wf-py +tpl-wf-py +SUCCESS +a3 +$MAC_PY +hw-wf-py " "get workflows: wf-py SUCCESS, its last action and agent"
ib describe workflow wf-py
like "$out" "^ +Message: +a2 done by $MAC_PY\$" "describe workflow shows an action's message"

# ---- tink_agent.js (@grpc/grpc-js) through a second Workflow ----

machine wf-js "$MAC_JS"
is "$rc" 0 "apply of a second Hardware, Template and Workflow"
ok "wf-js: PENDING" wf_wait wf-js PENDING
if have_node; then
	run node "$TINK_JS" --target "$WF_ADDR" --agent-id "$MAC_JS" --script "$(script "$MAC_JS")" \
		--until-done --max-calls 50
	is "$rc" 0 "tink_agent.js plays tink-agent through wf-js"
	[ "$rc" = 0 ] || diag "$out $err"
	ok "tink_agent.js: its six reports answered OK" reports_ok
	reports_ok || diag "$out"
	ok "wf-js: SUCCESS" wf_wait wf-js SUCCESS
	[ "$WF_LAST" = SUCCESS ] || diag "state $WF_LAST: $(wf_json wf-js)"
	actions_done wf-js "$MAC_JS"
else
	skip "tink_agent.js plays tink-agent through wf-js" \
		"needs node, tests/grpc/tink_agent.js and @grpc/grpc-js in $NODE_MODULES (tools/install-deps)"
fi

# ---- an agent with no Workflow ----

wfa get --agent "$MAC_NONE"
is "$(out_get 'd["code"]')" NOT_FOUND "an agent with no Workflow: NOT_FOUND after the long poll"
wfa get --agent "$MAC_PY"
is "$(out_get 'd["code"]')" NOT_FOUND "an agent whose Workflow is over: NOT_FOUND"

# Long polls at once, several on a connection: h2load (nghttp2-client),
# 3 connections of 4 streams, 24 GetAction of the agent with nothing.
if command -v h2load >/dev/null 2>&1; then
	"$OBJ_PY" -c 'import sys
a = sys.argv[1].encode()
m = b"\x0a" + bytes([len(a)]) + a
sys.stdout.buffer.write(b"\0" + len(m).to_bytes(4, "big") + m)' "$MAC_NONE" >"$IB_TMP/getaction.grpc"
	run h2load -n 24 -c 3 -m 4 -d "$IB_TMP/getaction.grpc" -H 'content-type: application/grpc' \
		-H 'te: trailers' "http://$WF_ADDR/proto.WorkflowService/GetAction"
	like "$out" '^requests: 24 total, 24 started, 24 done, 24 succeeded, 0 failed' \
		"h2load: 24 long polls on 3 connections of 4 streams all answered"
	like "$out" '^status codes: 24 2xx' "h2load: each with HTTP status 200 (the gRPC status in its trailers)"
else
	skip "h2load: 24 long polls on 3 connections of 4 streams all answered" "h2load is not installed"
fi

# ---- reports refused, the Workflow unchanged ----

machine wf-deny "$MAC_D"
ok "wf-deny: PENDING" wf_wait wf-deny PENDING
wfa get --agent "$MAC_D"
is "$(out_get 'd["code"]')" OK "GetAction for $MAC_D: OK"
D_TASK=$(out_get 'd["response"]["task_id"]')
D_ACT=$(out_get 'd["response"]["action_id"]')
before=$(wf_get wf-deny '[d["metadata"]["resourceVersion"], d["status"]]')

refused() { # DESC WANT REPORT-ARGS...
	_desc=$1 _want=$2
	shift 2
	wfa report "$@"
	is "$(out_get 'd["code"]')" "$_want" "$_desc: $_want"
	[ "$(out_get 'd["code"]')" = "$_want" ] || diag "$out $err"
}
now=$(date +%s)
refused "a report from another agent" PERMISSION_DENIED --wf default/wf-deny --agent "$MAC_X" \
	--task "$D_TASK" --action "$D_ACT" --name a1 --state RUNNING --start "$now"
refused "a SUCCESS from another agent" PERMISSION_DENIED --wf default/wf-deny --agent "$MAC_X" \
	--task "$D_TASK" --action "$D_ACT" --name a1 --state SUCCESS --start "$now" --stop "$now"
refused "a report for an unknown action" NOT_FOUND --wf default/wf-deny --agent "$MAC_D" \
	--task "$D_TASK" --action 01JZZZZZZZZZZZZZZZZZZZZZZZ --name a1 --state RUNNING --start "$now"
refused "a report for an unknown workflow" NOT_FOUND --wf default/no-such-wf --agent "$MAC_D" \
	--task "$D_TASK" --action "$D_ACT" --name a1 --state RUNNING --start "$now"
refused "a report with state UNSPECIFIED" INVALID_ARGUMENT --wf default/wf-deny --agent "$MAC_D" \
	--task "$D_TASK" --action "$D_ACT" --name a1 --state UNSPECIFIED --start "$now"
refused "a report with empty IDs" INVALID_ARGUMENT --wf default/wf-deny --agent "$MAC_D" \
	--task "" --action "" --name a1 --state RUNNING --start "$now"

# ---- malformed calls ----

wfa raw --path /proto.WorkflowService/NoSuchMethod --hex ""
is "$(out_get 'd["code"]')" UNIMPLEMENTED "an unknown method: UNIMPLEMENTED"
wfa raw --path /other.Service/GetAction --hex ""
is "$(out_get 'd["code"]')" UNIMPLEMENTED "an unknown service: UNIMPLEMENTED"
# ActionRequest{agent_id: MAC_D} then field 15, varint 1: unknown.
agent_hex=$(printf '%s' "$MAC_D" | od -An -tx1 | tr -d ' \n')
wfa raw --path /proto.WorkflowService/GetAction --hex "0a11${agent_hex}7801"
is "$(out_get 'd["code"]')" INVALID_ARGUMENT "GetAction with an unknown field: INVALID_ARGUMENT"
if have_node; then
	run node "$TINK_JS" raw --target "$WF_ADDR" --method GetAction --hex "0a11${agent_hex}7801"
	is "$(out_get 'd["code"]')" INVALID_ARGUMENT "the same from @grpc/grpc-js: INVALID_ARGUMENT"
	run node "$TINK_JS" raw --target "$WF_ADDR" --method /proto.WorkflowService/NoSuchMethod --hex ""
	is "$(out_get 'd["code"]')" UNIMPLEMENTED "an unknown method from @grpc/grpc-js: UNIMPLEMENTED"
else
	skip "the same from @grpc/grpc-js: INVALID_ARGUMENT" "no node or @grpc/grpc-js"
fi
# agent_id announced as 32 bytes, 2 there.
wfa raw --path /proto.WorkflowService/GetAction --hex "0a20abcd"
is "$(out_get 'd["code"]')" INVALID_ARGUMENT "GetAction with a truncated field: INVALID_ARGUMENT"
# agent_id with wire type 0 (varint) instead of 2.
wfa raw --path /proto.WorkflowService/GetAction --hex "0801"
is "$(out_get 'd["code"]')" INVALID_ARGUMENT "GetAction with a field of the wrong wire type: INVALID_ARGUMENT"
# A message over grpc.max_message (1 MiB by default).
wfa raw --path /proto.WorkflowService/GetAction --big 2097152
is "$(out_get 'd["code"]')" RESOURCE_EXHAUSTED "a GetAction of 2 MiB: RESOURCE_EXHAUSTED"
wfa get --agent "$MAC_NONE"
is "$(out_get 'd["code"]')" NOT_FOUND "the listener still answers after it"
# ActionStatusRequest{workflow_id, agent_id, task_id, action_id,
# action_state RUNNING} and field 17 (length 1): unknown.
pbstr() { # FIELD STRING: a length-delimited field, in hex
	printf '%02x%02x' $(($1 << 3 | 2)) "${#2}"
	printf '%s' "$2" | od -An -tx1 | tr -d ' \n'
}
# execution_start (field 7) = Timestamp{seconds (field 1): now}.
secs_hex=$("$OBJ_PY" -c 'import sys
n, b = int(sys.argv[1]), b""
while n > 0x7f:
    b += bytes([n & 0x7f | 0x80]); n >>= 7
print((b + bytes([n])).hex())' "$(date +%s)")
ts_len=$(printf '%02x' $((${#secs_hex} / 2 + 1)))
rep_hex="$(pbstr 1 default/wf-deny)$(pbstr 2 "$MAC_D")$(pbstr 3 "$D_TASK")$(pbstr 4 "$D_ACT")3002"
rep_hex="${rep_hex}3a${ts_len}08${secs_hex}"
wfa raw --path /proto.WorkflowService/ReportActionStatus --hex "${rep_hex}8a010178"
is "$(out_get 'd["code"]')" INVALID_ARGUMENT "ReportActionStatus with an unknown field: INVALID_ARGUMENT"
[ "$(out_get 'd["code"]')" = INVALID_ARGUMENT ] || diag "$out $err"
# The same bytes without the unknown field are a valid RUNNING report:
# proves the message above was refused for that field alone. It is sent
# after the check of the Workflow below.

if command -v curl >/dev/null 2>&1; then
	# No body: the server answers an unknown method as soon as it has
	# the headers and, when the client has not ended its side, resets
	# the stream (NO_ERROR) to stop it sending, as RFC 9113 §8.1 allows
	# and grpc-go does; curl then fails with 92 if the reset overtakes
	# its body, a race of the client's, not what this checks.
	run curl -s --max-time 20 --http2-prior-knowledge -o /dev/null -D - -X POST \
		-H 'content-type: application/grpc' -H 'te: trailers' \
		"http://$WF_ADDR/proto.WorkflowService/NoSuchMethod"
	like "$out" '^grpc-status: *12' "curl --http2-prior-knowledge: an unknown method, grpc-status 12"
	[ "$rc" = 0 ] || diag "curl: $rc $err"
else
	skip "curl --http2-prior-knowledge: an unknown method, grpc-status 12" "curl is not installed"
fi

run curl -sf --max-time 10 "http://127.0.0.1:$IB_HTTP_PORT/metrics"
is "$rc" 0 "/metrics answers"
like "$out" '^ironbell_grpc_calls_total\{method="ReportActionStatus",code="PERMISSION_DENIED"\} [1-9]' \
	"/metrics counts the reports refused PERMISSION_DENIED"
like "$out" '^ironbell_grpc_refused_total\{reason="protobuf"\} [1-9]' \
	"and the messages refused for their protobuf"
like "$out" '^ironbell_grpc_refused_total\{reason="too_large"\} [1-9]' "and those too large"

after=$(wf_get wf-deny '[d["metadata"]["resourceVersion"], d["status"]]')
is "$after" "$before" "wf-deny unchanged by the refused reports and calls"
is "$(wf_action wf-deny 0 state)" PENDING "its first action still PENDING"

wfa raw --path /proto.WorkflowService/ReportActionStatus --hex "$rep_hex"
is "$(out_get 'd["code"]')" OK "the same report without the unknown field: OK"
ok "wf-deny: RUNNING" wf_wait wf-deny RUNNING
wfa run --agent "$MAC_D"
is "$rc" 0 "the right agent then plays wf-deny"
[ "$rc" = 0 ] || diag "$out $err"
ok "wf-deny: SUCCESS" wf_wait wf-deny SUCCESS
actions_done wf-deny "$MAC_D"

# ---- TLS ----

if command -v openssl >/dev/null 2>&1; then
	CERT=$IB_TMP/grpc.crt
	KEY=$IB_TMP/grpc.key
	run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$KEY" -out "$CERT" -days 2 -subj /CN=localhost \
		-addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
	[ "$rc" = 0 ] || bail_out "openssl req failed: $err"
	chmod 600 "$KEY"
	ib_stop_daemon
	is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
	IB_GRPC_EXTRA="  long_poll: 1
  tls_cert: $CERT
  tls_key: $KEY"
	ib_write_config || bail_out "cannot write the config"
	ib_start_daemon || bail_out "ironbelld did not start with grpc.tls_cert/tls_key"
	machine wf-tls "$MAC_T"
	ok "wf-tls: PENDING" wf_wait wf-tls PENDING
	wfa --deadline 10 get --agent "$MAC_T"
	unlike "$(out_get 'd["code"]')" '^OK$' "h2c to the TLS listener gets no answer"
	if [ -f "$TINK_PY" ]; then
		tink_py "$MAC_T" --tls-ca "$CERT"
		is "$rc" 0 "tink_agent.py plays wf-tls over TLS"
		[ "$rc" = 0 ] || diag "$out $err"
		ok "tink_agent.py over TLS: its six reports answered OK" reports_ok
	else
		WF_TLS_CA=$CERT
		wfa run --agent "$MAC_T"
		is "$rc" 0 "the scripted agent plays wf-tls over TLS"
		[ "$rc" = 0 ] || diag "$out $err"
		WF_TLS_CA=
	fi
	ok "wf-tls: SUCCESS" wf_wait wf-tls SUCCESS
	actions_done wf-tls "$MAC_T"
else
	skip "the worker API over TLS" "openssl is not installed"
fi

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
