#!/bin/sh
# test_grpc_clients — the worker protocol's test clients proven against a
# real gRPC server before any ironbell code relies on them: the Python
# tink-agent (python3-grpcio) and the Node one (@grpc/grpc-js, its own
# HTTP/2) each run a 3-action workflow of tests/grpc/tink_server.py to
# SUCCESS, and the sequence of reports the server saw is asserted; then a
# failing action, an action that times out, an action never reported (the
# agent asks again and gets it again), "not yet" (FAILED_PRECONDITION)
# polled through, reports refused (another agent, an unknown action, a
# second result), a raw call and its deadline, an nghttp request with its
# own grpc-timeout, frames written by hand (h2raw.py: headers reversed,
# DATA split, PING, two streams, a bad preface), the machine's inventory in
# GetAction, reports made again after UNAVAILABLE, and both clients over
# TLS.
# Needs python3-grpcio and python3-grpc-tools (skips without them); the
# Node part needs node and its modules in build-node/ (tools/install-deps),
# the nghttp part nghttp2-client, the h2raw part python3-hpack, the TLS
# part openssl.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/grpc/grpc.sh"

grpc_need_py
AGENT=52:54:00:12:34:56
# Three actions, each reported RUNNING then SUCCESS.
ALL_OK="action-1-0 RUNNING OK
action-1-0 SUCCESS OK
action-2-1 RUNNING OK
action-2-1 SUCCESS OK
action-3-2 RUNNING OK
action-3-2 SUCCESS OK"

# what NAME: the reports the server saw and the GetAction codes it gave.
server_saw() {
	grpc_reports "$GRPC_EVENTS"
}

# ---- the Python client through a whole workflow ----
grpc_server_start py1 --agent-id "$AGENT" || bail_out "tink_server.py did not start"
grpc_py --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --stubs "$IB_TMP/stubs" \
	--until-done --poll 0.05 --max-calls 20
is "$rc" 0 "python: the agent ends with status 0"
like "$out" '"call": "end".*"reason": "done"' "python: the agent stops at NOT_FOUND after the workflow"
is "$(server_saw)" "$ALL_OK" "python: the server saw RUNNING then SUCCESS for each of the 3 actions"
is "$(grpc_codes "$GRPC_EVENTS" GetAction | tr '\n' ' ')" "OK OK OK NOT_FOUND " \
	"python: GetAction handed out 3 actions, then NOT_FOUND"
printf '%s\n' "$out" >"$IB_TMP/py1.out"
is "$(grpc_reports "$IB_TMP/py1.out")" "$ALL_OK" "python: the client printed the same reports and codes"
like "$(grep '"state": "SUCCESS"' "$GRPC_EVENTS" | sed -n 1p)" \
	'"execution_duration": "[0-9.]+m?s".*"execution_stop": [0-9]{19}' \
	"python: a result carries execution_stop and execution_duration"
like "$(grep '"state": "RUNNING"' "$GRPC_EVENTS" | sed -n 1p)" '"execution_stop": -62135596800000000000' \
	"python: RUNNING carries Go's zero time as its stop, as tink-agent sends it"
like "$(grep '"rpc": "GetAction"' "$GRPC_EVENTS" | sed -n 1p)" '"deadline": (9|10)\.[0-9]+' \
	"python: each call carries the client's deadline (grpc-timeout of 10 s)"
ib_kill "$GRPC_SERVER_PID"

# ---- the Python client: a failing action ends the workflow ----
grpc_server_start py2 --agent-id "$AGENT" || bail_out "tink_server.py did not start"
grpc_py --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --stubs "$IB_TMP/stubs" \
	--until-done --poll 0.05 --max-calls 20 \
	--script '{"actions": {"action-2": {"result": "failed", "message": "exit status 3: no disk"}}}'
is "$(server_saw)" "action-1-0 RUNNING OK
action-1-0 SUCCESS OK
action-2-1 RUNNING OK
action-2-1 FAILED OK" "python: action-2 FAILED, action-3 never handed out"
like "$(grep '"state": "FAILED"' "$GRPC_EVENTS")" '"message": "exit status 3: no disk"' \
	"python: the failure's message reached the server"
like "$(tail -n 1 "$GRPC_EVENTS")" '"code": "NOT_FOUND"' "python: after FAILED, GetAction is NOT_FOUND"
ib_kill "$GRPC_SERVER_PID"

# ---- the Python client: reports the server refuses ----
grpc_server_start py3 --agent-id "$AGENT" || bail_out "tink_server.py did not start"
grpc_py --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --stubs "$IB_TMP/stubs" \
	--until-done --poll 0.05 --max-calls 20 --script '{"steps": [
		{"running": false, "agent_id": "52:54:00:00:00:99"},
		{"running": false, "action_id": "no-such-action"},
		{"result": "twice"}]}'
printf '%s\n' "$out" >"$IB_TMP/py3.out"
is "$(grpc_reports "$IB_TMP/py3.out" | sed -n 1,4p)" "action-1-0 SUCCESS PERMISSION_DENIED
no-such-action SUCCESS INVALID_ARGUMENT
action-1-0 RUNNING OK
action-1-0 SUCCESS OK" "python: another agent's report PERMISSION_DENIED, an unknown action INVALID_ARGUMENT"
like "$(grpc_reports "$IB_TMP/py3.out" | sed -n 5p)" '^action-1-0 SUCCESS FAILED_PRECONDITION$' \
	"python: a second result for an ended action is FAILED_PRECONDITION"
ib_kill "$GRPC_SERVER_PID"

# ---- raw calls: bytes, metadata and a deadline of the test's choosing ----
# (grpcio rounds a deadline up by a few milliseconds: 3 s may arrive as
# 3.009; the default of 10 s would show as 9.9 or 10.)
grpc_server_start raw --agent-id "$AGENT" || bail_out "tink_server.py did not start"
grpc_py raw --target "127.0.0.1:$GRPC_PORT" --stubs "$IB_TMP/stubs" --method NoSuchMethod --hex 00
like "$out" '"code": "UNIMPLEMENTED"' "raw: an unknown method is UNIMPLEMENTED"
grpc_py raw --target "127.0.0.1:$GRPC_PORT" --stubs "$IB_TMP/stubs" --method GetAction \
	--json '{"agent_id": "nobody"}' --timeout 3 --metadata x-ironbell-test=1
like "$out" '"code": "NOT_FOUND".*"details": "no workflow for agent nobody"' \
	"raw: another agent gets NOT_FOUND with the server's message"
like "$(tail -n 1 "$GRPC_EVENTS")" '"deadline": ([0-2]\.[0-9]+|3\.0[0-9]*),' "raw: the 3 s deadline reached the server"
grpc_py raw --target "127.0.0.1:$GRPC_PORT" --stubs "$IB_TMP/stubs" --method GetAction \
	--hex 0a03616263
like "$out" '"code": "NOT_FOUND".*"details": "no workflow for agent abc"' \
	"raw: a message written in hex is decoded by the server"

if command -v nghttp >/dev/null 2>&1; then
	grpc_py h2 --url "http://127.0.0.1:$GRPC_PORT" --method GetAction \
		--json '{"agent_id": "nobody"}' --header grpc-timeout:2S
	like "$out" '"code": "NOT_FOUND"' "h2: nghttp's request gets the gRPC status in the trailers"
	like "$(tail -n 1 "$GRPC_EVENTS")" '"deadline": ([0-1]\.[0-9]+|2\.0[0-9]*),' \
		"h2: the grpc-timeout header the test wrote (2S) reached the server"
	grpc_py h2 --url "http://127.0.0.1:$GRPC_PORT" --method GetAction \
		--json '{"agent_id": "nobody"}' --header grpc-timeout:1x
	# grpc core logs "invalid value key=grpc-timeout" and runs the call
	# without a deadline: the header arrived as the test wrote it.
	like "$(tail -n 1 "$GRPC_EVENTS")" '"deadline": null,' \
		"h2: a malformed grpc-timeout (1x) is sent as written, and python's server ignores it"
else
	skip "h2: nghttp" "nghttp2-client is not installed"
	skip "h2: grpc-timeout" "nghttp2-client is not installed"
	skip "h2: malformed grpc-timeout" "nghttp2-client is not installed"
fi
ib_kill "$GRPC_SERVER_PID"

# ---- the Node client ----
if grpc_have_node; then
	grpc_server_start js1 --agent-id "$AGENT" || bail_out "tink_server.py did not start"
	grpc_js --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --until-done --poll 0.05 \
		--max-calls 20
	is "$rc" 0 "node: the agent ends with status 0"
	like "$out" '"call":"end".*"reason":"done"' "node: the agent stops at NOT_FOUND after the workflow"
	is "$(server_saw)" "$ALL_OK" "node: the server saw RUNNING then SUCCESS for each of the 3 actions"
	printf '%s\n' "$out" >"$IB_TMP/js1.out"
	is "$(grpc_reports "$IB_TMP/js1.out")" "$ALL_OK" "node: the client printed the same reports and codes"
	like "$(grep '"state": "SUCCESS"' "$GRPC_EVENTS" | sed -n 1p)" \
		'"execution_duration": "[0-9.]+m?s".*"execution_stop": [0-9]{19}' \
		"node: a result carries execution_stop and execution_duration"
	like "$(grep '"state": "RUNNING"' "$GRPC_EVENTS" | sed -n 1p)" '"execution_stop": -62135596800000000000' \
		"node: RUNNING carries Go's zero time as its stop, as tink-agent sends it"
	ib_kill "$GRPC_SERVER_PID"

	# Not yet, an action never reported (asked for again: the same one),
	# and a timeout.
	grpc_server_start js2 --agent-id "$AGENT" --not-yet 2 || bail_out "tink_server.py did not start"
	grpc_js --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --until-done --poll 0.05 \
		--max-calls 20 --script '{"steps": [{"result": "none"}],
			"actions": {"action-3": {"result": "timeout"}}}'
	printf '%s\n' "$out" >"$IB_TMP/js2.out"
	is "$(grpc_codes "$IB_TMP/js2.out" GetAction | tr '\n' ' ')" \
		"FAILED_PRECONDITION FAILED_PRECONDITION OK OK OK OK NOT_FOUND " \
		"node: FAILED_PRECONDITION polled through, then 4 hand-outs and NOT_FOUND"
	is "$(server_saw)" "action-1-0 RUNNING OK
action-1-0 RUNNING OK
action-1-0 SUCCESS OK
action-2-1 RUNNING OK
action-2-1 SUCCESS OK
action-3-2 RUNNING OK
action-3-2 TIMEOUT OK" "node: an unreported action is handed out again; the last one TIMEOUT"
	ib_kill "$GRPC_SERVER_PID"

	grpc_server_start js3 --agent-id "$AGENT" || bail_out "tink_server.py did not start"
	grpc_js raw --target "127.0.0.1:$GRPC_PORT" --method ReportActionStatus \
		--json '{"agent_id": "nobody", "action_state": "SUCCESS"}' --timeout 3
	like "$out" '"code":"PERMISSION_DENIED"' "node raw: another agent's report is PERMISSION_DENIED"
	like "$(tail -n 1 "$GRPC_EVENTS")" '"deadline": ([0-2]\.[0-9]+|3\.0[0-9]*),' "node raw: the deadline reached the server"
	ib_kill "$GRPC_SERVER_PID"
else
	for t in "status 0" "stops at NOT_FOUND" "server saw" "client printed" "execution fields" "zero time" \
		"not yet and handed out again" "timeout" "raw" "raw deadline"; do
		skip "node: $t" "node or build-node/node_modules is missing (tools/install-deps)"
	done
fi

# ---- HTTP/2 frames by hand (tests/grpc/h2raw.py) ----
# summary KEYS...: one value of h2raw's JSON summary in $out.
summary() {
	printf '%s\n' "$out" | "$GRPC_PY" -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1:]:
    d = d[int(k)] if isinstance(d, list) else d[k]
print(json.dumps(d) if isinstance(d, (dict, list)) else d)' "$@" 2>/dev/null
}
if "$GRPC_PY" -c 'import hpack' 2>/dev/null; then
	grpc_server_start h2raw --agent-id "$AGENT" || bail_out "tink_server.py did not start"
	H2="--target 127.0.0.1:$GRPC_PORT --timeout 5"
	grpc_h2raw $H2 '[{"preface": true},
		{"grpc": {"hex": "0a066e6f626f6479", "headers": [["grpc-timeout", "2S"]]}}]'
	is "$(summary streams 1 code) $(summary streams 1 details)" "NOT_FOUND no workflow for agent nobody" \
		"h2raw: a request by hand gets NOT_FOUND and its grpc-message"
	like "$(tail -n 1 "$GRPC_EVENTS")" '"deadline": ([0-1]\.[0-9]+|2\.0[0-9]*),' \
		"h2raw: its grpc-timeout reached the server"
	# GetAction for the agent, the regular headers reversed and the
	# message in 3-byte DATA frames, a PING between, and a second stream.
	grpc_h2raw $H2 '[{"preface": true},
		{"grpc": {"hex": "0a1135323a35343a30303a31323a33343a3536", "reverse": true, "split": 3,
			"headers": [["user-agent", "h2raw"]]}},
		{"ping": "0102030405060708"},
		{"grpc": {"stream": 3, "method": "NoSuchMethod", "hex": ""}}]'
	is "$(summary streams 1 code)" "OK" "h2raw: headers reversed and DATA in 3-byte frames: OK"
	like "$(summary streams 1 messages_hex 0)" '^0a0b64656661756c742f776631' \
		"h2raw: the answer's message is read back (workflow_id default/wf1)"
	is "$(summary streams 3 code)" "UNIMPLEMENTED" "h2raw: a second stream on the connection"
	like "$(summary frames)" '"ack": true, "data": "0102030405060708"' "h2raw: the PING is acknowledged"
	grpc_h2raw $H2 '[{"preface": "474554202f20485454502f312e310d0a0d0a"}]'
	is "$(summary closed)" "True" "h2raw: an HTTP/1.1 request instead of the preface: the server closes"
	ib_kill "$GRPC_SERVER_PID"
else
	for t in "NOT_FOUND" "grpc-timeout" "reversed" "message" "second stream" "PING" "preface"; do
		skip "h2raw: $t" "python3-hpack is not installed"
	done
fi

# ---- inventory in GetAction, and reports tried again as tink-agent does ----
FLAKY="action-1-0 RUNNING UNAVAILABLE
action-1-0 RUNNING UNAVAILABLE
action-1-0 RUNNING OK
action-1-0 SUCCESS OK"
for c in py js; do
	if [ $c = js ] && ! grpc_have_node; then
		skip "js: attributes" "node or build-node/node_modules is missing"
		skip "js: reports retried" "node or build-node/node_modules is missing"
		continue
	fi
	grpc_server_start "flaky-$c" --agent-id "$AGENT" --flaky-reports 2 ||
		bail_out "tink_server.py did not start"
	"grpc_$c" --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --stubs "$IB_TMP/stubs" \
		--attributes default --report-retries 3 --max-actions 1 --poll 0.05 --max-calls 5
	like "$(grep '"rpc": "GetAction"' "$GRPC_EVENTS" | sed -n 1p)" \
		'"attributes": \{"block": \["sda"\], "cpu_cores": 4, "gpu": 1, "network": \["52:54:00:12:34:56"\], "processors": 1, "product": "Standard PC' \
		"$c: agent_attributes (tests/grpc/attributes.json) reach the server"
	is "$(server_saw)" "$FLAKY" "$c: a report answered UNAVAILABLE is made again, until OK"
	ib_kill "$GRPC_SERVER_PID"
done

# ---- both clients over TLS ----
if command -v openssl >/dev/null 2>&1 &&
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$IB_TMP/tls.key" -out "$IB_TMP/tls.pem" -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 >"$IB_TMP/openssl.log" 2>&1; then
	grpc_server_start tls --agent-id "$AGENT" --cert "$IB_TMP/tls.pem" --key "$IB_TMP/tls.key" ||
		bail_out "tink_server.py did not start with TLS"
	grpc_py --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --stubs "$IB_TMP/stubs" \
		--tls-ca "$IB_TMP/tls.pem" --max-actions 1 --poll 0.05 --max-calls 5
	like "$out" '"code": "OK".*"state": "SUCCESS"' "tls: the python client, the certificate verified"
	if grpc_have_node; then
		grpc_js --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --tls-ca "$IB_TMP/tls.pem" \
			--max-actions 1 --poll 0.05 --max-calls 5
		like "$out" '"code":"OK".*"state":"SUCCESS"' "tls: the node client, the certificate verified"
	else
		skip "tls: node" "node or build-node/node_modules is missing"
	fi
	is "$(server_saw)" "action-1-0 RUNNING OK
action-1-0 SUCCESS OK
action-2-1 RUNNING OK
action-2-1 SUCCESS OK" "tls: the server saw both clients' reports"
	grpc_py --target "127.0.0.1:$GRPC_PORT" --agent-id "$AGENT" --stubs "$IB_TMP/stubs" \
		--max-calls 1 --rpc-timeout 5
	like "$out" '"code": "UNAVAILABLE"' "tls: plaintext to a TLS server is UNAVAILABLE"
	ib_kill "$GRPC_SERVER_PID"
else
	skip "tls: python" "openssl cannot make a certificate"
	skip "tls: node" "openssl cannot make a certificate"
	skip "tls: server" "openssl cannot make a certificate"
	skip "tls: plaintext" "openssl cannot make a certificate"
fi

tap_done
