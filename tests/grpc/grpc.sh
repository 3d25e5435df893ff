# grpc.sh — the worker protocol's test clients and reference server for
# the shell tests (POSIX sh, sourced after tests/lib.sh).
#
#   grpc_need_py           skip_all unless python3-grpcio and -grpc-tools
#                          import under /usr/bin/python3; generates the
#                          stubs once into $IB_TMP/stubs
#   grpc_have_node         true when node and the Node client's modules
#                          are there: build-node/node_modules (npm ci by
#                          tools/install-deps) or $IRONBELL_NODE_MODULES
#   grpc_server_start NAME ARGS...
#                          tests/grpc/tink_server.py on 127.0.0.1 and a
#                          free port (it binds port 0 and writes the port
#                          it got), events in $IB_TMP/NAME.events; sets
#                          GRPC_SERVER_PID, GRPC_PORT and GRPC_EVENTS
#   grpc_h2raw ARGS...     tests/grpc/h2raw.py ARGS (HTTP/2 frames by
#                          hand; needs python3-hpack), like run
#   grpc_py ARGS...        tests/grpc/tink_agent.py ARGS (at most
#                          $IB_CMD_TIMEOUT seconds): $rc, $out, $err
#   grpc_js ARGS...        the same with tests/grpc/tink_agent.js
#   grpc_reports FILE      from a JSON-lines file of tink_agent's output or
#                          of tink_server's events: one line per
#                          ReportActionStatus, "ACTION_ID STATE CODE"
#   grpc_codes FILE CALL   the codes of every CALL (GetAction, ...) in
#                          order, one per line
#
# The server is registered with ib_bg, so the EXIT trap stops it.

GRPC_PY=/usr/bin/python3
GRPC_DIR=$top_srcdir/tests/grpc

grpc_need_py() {
	"$GRPC_PY" -c 'import grpc, grpc_tools' 2>/dev/null ||
		skip_all "python3-grpcio or python3-grpc-tools is not installed"
	"$GRPC_PY" "$GRPC_DIR/tinkproto.py" "$IB_TMP/stubs" >/dev/null 2>"$IB_TMP/stubs.err" ||
		bail_out "grpc_tools.protoc cannot compile common/tink.proto: $(cat "$IB_TMP/stubs.err")"
}

grpc_have_node() {
	_nm=${IRONBELL_NODE_MODULES:-$top_srcdir/build-node/node_modules}
	command -v node >/dev/null 2>&1 &&
		[ -d "$_nm/@grpc/grpc-js" ] && [ -d "$_nm/@grpc/proto-loader" ] && [ -d "$_nm/protobufjs" ]
}

grpc_server_start() {
	_name=$1
	shift
	GRPC_EVENTS=$IB_TMP/$_name.events
	rm -f "$IB_TMP/$_name.port" "$GRPC_EVENTS"
	"$GRPC_PY" "$GRPC_DIR/tink_server.py" --stubs "$IB_TMP/stubs" \
		--port-file "$IB_TMP/$_name.port" --events "$GRPC_EVENTS" "$@" \
		>>"$IB_TMP/$_name.log" 2>&1 </dev/null &
	GRPC_SERVER_PID=$!
	ib_bg "$GRPC_SERVER_PID"
	if ! wait_for 20 test -s "$IB_TMP/$_name.port"; then
		diag "$(tail -n 20 "$IB_TMP/$_name.log")"
		return 1
	fi
	GRPC_PORT=$(head -n 1 "$IB_TMP/$_name.port")
}

grpc_py() { run "$GRPC_PY" "$GRPC_DIR/tink_agent.py" "$@"; }
grpc_h2raw() { run "$GRPC_PY" "$GRPC_DIR/h2raw.py" "$@"; }
grpc_js() { run node "$GRPC_DIR/tink_agent.js" "$@"; }

grpc_reports() {
	"$GRPC_PY" -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("call", e.get("rpc")) == "ReportActionStatus":
        print(e["action_id"], e["state"], e["code"])' "$1"
}

grpc_codes() {
	"$GRPC_PY" -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("call", e.get("rpc")) == sys.argv[2]:
        print(e["code"])' "$1" "$2"
}
