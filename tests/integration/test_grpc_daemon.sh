#!/bin/sh
# test_grpc_daemon — ironbelld's worker API (gRPC on grpc.listen) against
# real gRPC clients: the Python tink-agent (python3-grpcio) runs a
# Workflow's actions to the end (POST, which the workflow controller
# turns into SUCCESS: every action SUCCESS) and so does
# the Node one (@grpc/grpc-js) when it is installed; malformed calls are
# refused with their status (a truncated field and an unknown field
# INVALID_ARGUMENT, an unknown method UNIMPLEMENTED through nghttp, a
# report from another agent PERMISSION_DENIED, an unknown workflow
# NOT_FOUND); an empty GetAction waits (long poll) and is answered OK as
# soon as a Workflow for its agent appears; an action handed out before a
# kill -9 is handed out again after the restart; HTTP/2 frames written by
# hand (tests/grpc/h2raw.py: headers reversed, DATA in 3-byte frames, a
# PING, a truncated message, DATA on stream 0, no preface); the calls
# are counted in /metrics; over TLS with grpc.tls_cert and grpc.tls_key.
# The Workflows are written with their status already rendered, as the
# controller leaves them: this test is the worker API's, not the
# controller's.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/grpc/grpc.sh"

grpc_need_py
AG1=aa:00:00:00:00:01
AG2=aa:00:00:00:00:02
AG3=aa:00:00:00:00:03

# wf NAME AGENT: a rendered Workflow of three actions for AGENT, applied.
wf() {
	cat >"$IB_TMP/$1.json" <<EOF
{"apiVersion": "tinkerbell.org/v1alpha1", "kind": "Workflow",
 "metadata": {"name": "$1", "namespace": "default"},
 "spec": {"templateRef": "t", "hardwareRef": "hw"},
 "status": {"state": "PENDING", "agentID": "$2", "templateRendering": "successful",
  "globalTimeout": 600,
  "tasks": [{"id": "T1", "name": "os", "agentID": "$2",
   "actions": [
    {"id": "A1", "name": "disk", "image": "img1", "timeout": 60, "state": "PENDING"},
    {"id": "A2", "name": "cexec", "image": "img2", "timeout": 60, "state": "PENDING"},
    {"id": "A3", "name": "kexec", "image": "img3", "timeout": 60, "state": "PENDING"}]}]}}
EOF
	ib apply -f "$IB_TMP/$1.json"
}

# The action_id field (4) "A1" in a raw call's response_hex.
HANDED_A1='"code": "OK".*"response_hex": "[0-9a-f]*22024131'

# states NAME: the workflow's state and its actions' states, once the
# workflow controller has taken it past POST (at most 10 s).
states() {
	_i=0
	while [ "$_i" -lt 100 ]; do
		_s=$(states_now "$1")
		case $_s in POST*) ;; *) break ;; esac
		sleep 0.1
		_i=$((_i + 1))
	done
	printf '%s\n' "$_s"
}

states_now() {
	ib get workflow "$1" -o json
	printf '%s\n' "$out" | "$GRPC_PY" -c '
import json, sys
s = json.load(sys.stdin)["status"]
print(s["state"], " ".join(a["state"] for a in s["tasks"][0]["actions"]))'
}

IB_GRPC_EXTRA="  long_poll: 3"
ib_write_config || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"
T=127.0.0.1:$IB_GRPC_PORT

# ---- a whole workflow, Python ----
wf wf1 "$AG1"
is "$rc" 0 "a rendered Workflow is applied"
grpc_py --target "$T" --agent-id "$AG1" --stubs "$IB_TMP/stubs" --until-done --poll 0.05 \
	--max-calls 30
is "$rc" 0 "python: the agent ends with status 0"
printf '%s\n' "$out" >"$IB_TMP/py1.out"
is "$(grpc_reports "$IB_TMP/py1.out")" "A1 RUNNING OK
A1 SUCCESS OK
A2 RUNNING OK
A2 SUCCESS OK
A3 RUNNING OK
A3 SUCCESS OK" "python: each action reported RUNNING then SUCCESS, each accepted"
is "$(grpc_codes "$IB_TMP/py1.out" GetAction | tr '\n' ' ')" "OK OK OK NOT_FOUND " \
	"python: three actions handed out, then NOT_FOUND"
is "$(states wf1)" "SUCCESS SUCCESS SUCCESS SUCCESS" "the stored Workflow: SUCCESS, every action SUCCESS"

# ---- refusals ----
grpc_py raw --target "$T" --method GetAction --hex 0a05616263 --timeout 5 --stubs "$IB_TMP/stubs"
like "$out" '"code": "INVALID_ARGUMENT".*length 5 past the end' "a truncated field: INVALID_ARGUMENT"
grpc_py raw --target "$T" --method GetAction --hex a80101 --timeout 5 --stubs "$IB_TMP/stubs"
like "$out" '"code": "INVALID_ARGUMENT".*unknown field' "an unknown field: INVALID_ARGUMENT"
wf wf2 "$AG2"
grpc_py raw --target "$T" --method ReportActionStatus --timeout 5 --stubs "$IB_TMP/stubs" \
	--json "{\"workflow_id\": \"default/wf2\", \"agent_id\": \"$AG1\", \"task_id\": \"T1\",
		\"action_id\": \"A1\", \"action_name\": \"disk\", \"action_state\": 2}"
like "$out" '"code": "PERMISSION_DENIED"' "a report from another agent: PERMISSION_DENIED"
grpc_py raw --target "$T" --method ReportActionStatus --timeout 5 --stubs "$IB_TMP/stubs" \
	--json "{\"workflow_id\": \"default/nope\", \"agent_id\": \"$AG2\", \"task_id\": \"T1\",
		\"action_id\": \"A1\", \"action_state\": 2}"
like "$out" '"code": "NOT_FOUND"' "a report for an unknown workflow: NOT_FOUND"
is "$(states wf2)" "PENDING PENDING PENDING PENDING" "the refused reports changed nothing"
if command -v nghttp >/dev/null 2>&1; then
	grpc_py h2 --url "http://$T" --method Nope --hex 0a00
	like "$out" '"code": "UNIMPLEMENTED"' "nghttp: an unknown method: UNIMPLEMENTED"
else
	skip "nghttp (nghttp2-client) is not installed"
fi
ib_log_has() { grep -q "$1" "$IB_LOG"; }
ok "a refused call is logged" ib_log_has 'GetAction refused: INVALID_ARGUMENT'

# ---- restart: an action handed out is handed out again ----
grpc_py raw --target "$T" --method GetAction --json "{\"agent_id\": \"$AG2\"}" --timeout 5 \
	--stubs "$IB_TMP/stubs"
like "$out" "$HANDED_A1" "wf2: A1 handed out"
ib_crash_daemon
ib_start_daemon || bail_out "ironbelld did not start again"
grpc_py raw --target "$T" --method GetAction --json "{\"agent_id\": \"$AG2\"}" --timeout 5 \
	--stubs "$IB_TMP/stubs"
like "$out" "$HANDED_A1" "after kill -9 and a restart, A1 is handed out again"

# ---- HTTP/2 frames by hand (tests/grpc/h2raw.py) ----
summary() {
	printf '%s\n' "$out" | "$GRPC_PY" -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1:]:
    d = d[int(k)] if isinstance(d, list) else d[k]
print(json.dumps(d) if isinstance(d, (dict, list)) else d)' "$@" 2>/dev/null
}
if "$GRPC_PY" -c 'import hpack' 2>/dev/null; then
	H2="--target $T --timeout 5"
	# wf2's agent: the regular headers reversed, the message in 3-byte
	# DATA frames, a PING between, an unknown method on a second stream.
	grpc_h2raw $H2 '[{"preface": true},
		{"grpc": {"hex": "0a1161613a30303a30303a30303a30303a3032", "reverse": true,
			"split": 3, "headers": [["user-agent", "h2raw"], ["grpc-timeout", "5S"]]}},
		{"ping": "0102030405060708"},
		{"grpc": {"stream": 3, "method": "NoSuchMethod", "hex": ""}}]'
	is "$(summary streams 1 code)" "OK" "h2raw: headers reversed, DATA in 3-byte frames: OK"
	like "$(summary streams 1 messages_hex 0)" '^0a0b64656661756c742f776632' \
		"h2raw: the answer is wf2's action (workflow_id default/wf2)"
	is "$(summary streams 3 code)" "UNIMPLEMENTED" "h2raw: an unknown method on a second stream"
	like "$(summary frames)" '"ack": true, "data": "0102030405060708"' "h2raw: the PING is acknowledged"
	# a prefix that promises 16 bytes, 3 sent, then the end of the stream
	grpc_h2raw $H2 '[{"preface": true},
		{"grpc": {"hex": "0000000010616263", "prefix": false}}]'
	is "$(summary streams 1 code)" "INTERNAL" "h2raw: a truncated message: INTERNAL"
	grpc_h2raw $H2 '[{"preface": true},
		{"frame": {"type": 0, "flags": 1, "stream": 0, "payload": "00"}}]'
	like "$(summary goaway)" 'PROTOCOL_ERROR' "h2raw: DATA on stream 0: GOAWAY PROTOCOL_ERROR"
	grpc_h2raw $H2 '[{"preface": "474554202f20485454502f312e310d0a0d0a"}]'
	like "$(summary goaway)" 'PROTOCOL_ERROR' "h2raw: HTTP/1.1 instead of the preface: GOAWAY"
	conns0() {
		curl -sf "http://127.0.0.1:$IB_HTTP_PORT/metrics" | grep -q '^ironbell_grpc_connections 0'
	}
	wait_for 10 conns0
	ok "h2raw: each connection is closed after (ironbell_grpc_connections 0)" conns0
else
	for t in reversed message "second stream" PING truncated "stream 0" preface; do
		skip "h2raw: $t" "python3-hpack is not installed"
	done
fi

# ---- long poll: an empty GetAction waits and gets the new work ----
grpc_py raw --target "$T" --method GetAction --json "{\"agent_id\": \"$AG3\"}" --timeout 2 \
	--stubs "$IB_TMP/stubs"
like "$out" '"code": "NOT_FOUND"' "no workflow for the agent: NOT_FOUND (after the long poll)"
"$GRPC_PY" "$GRPC_DIR/tink_agent.py" raw --target "$T" --method GetAction \
	--json "{\"agent_id\": \"$AG3\"}" --timeout 60 --stubs "$IB_TMP/stubs" \
	>"$IB_TMP/lp.out" 2>&1 &
lp=$!
ib_bg "$lp"
waiting() {
	curl -sf "http://127.0.0.1:$IB_HTTP_PORT/metrics" | grep -q '^ironbell_grpc_long_polls 1'
}
wait_for 20 waiting
ok "the call waits (ironbell_grpc_long_polls 1)" waiting
wf wf3 "$AG3"
wait_for 20 test -s "$IB_TMP/lp.out"
like "$(cat "$IB_TMP/lp.out")" "$HANDED_A1" \
	"the waiting GetAction is answered with the new workflow's first action"

# ---- metrics ----
grpc_py raw --target "$T" --method GetAction --hex 0a --timeout 5 --stubs "$IB_TMP/stubs"
like "$out" '"code": "INVALID_ARGUMENT"' "a field with no length: INVALID_ARGUMENT"
run curl -sf "http://127.0.0.1:$IB_HTTP_PORT/metrics"
like "$out" 'ironbell_grpc_calls_total\{method="GetAction",code="OK"\} [1-9]' "calls counted by method and code"
like "$out" 'ironbell_grpc_refused_total\{reason="protobuf"\} [1-9]' "refusals counted by reason"
like "$out" 'ironbell_grpc_get_action_seconds_count [1-9]' "GetAction latency observed"

# ---- Node (@grpc/grpc-js) ----
if grpc_have_node; then
	wf wf4 aa:00:00:00:00:04
	grpc_js --target "$T" --agent-id aa:00:00:00:00:04 --until-done --poll 0.05 --max-calls 30
	is "$(states wf4)" "SUCCESS SUCCESS SUCCESS SUCCESS" "node: the workflow runs to the end"
else
	skip "node or its modules (build-node/node_modules) are missing"
fi

# ---- TLS ----
if command -v openssl >/dev/null 2>&1; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-keyout "$IB_TMP/key.pem" -out "$IB_TMP/cert.pem" -subj /CN=localhost \
		-addext subjectAltName=DNS:localhost >/dev/null 2>&1
	ib_stop_daemon
	IB_GRPC_EXTRA="  tls_cert: $IB_TMP/cert.pem
  tls_key: $IB_TMP/key.pem"
	ib_write_config || bail_out "cannot write the config"
	ib_start_daemon || bail_out "ironbelld did not start with TLS"
	wf wf5 aa:00:00:00:00:05
	grpc_py --target "$T" --agent-id aa:00:00:00:00:05 --stubs "$IB_TMP/stubs" --until-done \
		--poll 0.05 --max-calls 30 --tls-ca "$IB_TMP/cert.pem" --tls-name localhost
	is "$(states wf5)" "SUCCESS SUCCESS SUCCESS SUCCESS" "TLS: the workflow runs to the end"
else
	skip "openssl is not installed"
fi

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld stops cleanly"
ok "no sanitizer report in the log" ib_log_clean
tap_done
