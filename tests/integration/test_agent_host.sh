#!/bin/sh
# test_agent_host — ironbell-agent --runtime host against a real gRPC
# server (tests/grpc/tink_server.py, python3-grpcio; the same assertions
# hold for ironbelld): a three-action workflow to SUCCESS with the
# environment passed, the worker ID and server read from a kernel command
# line, a failing action reported FAILED with its output, an action over
# its timeout reported TIMEOUT, an action that reboots reported SUCCESS
# before it runs, "not yet" and a server refusing reports for a while
# waited through, the output sent to syslog, and the binary linked
# statically. Every assertion is on what the server recorded.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/grpc/grpc.sh"

grpc_need_py
AGENT_BIN=$top_builddir/ironbell-agent
ID=52:54:00:12:34:56

# agent ARGS...: the agent against the current server, --once.
agent() {
	run "$AGENT_BIN" --runtime host --id "$ID" \
		--tinkerbell-grpc-authority "127.0.0.1:$GRPC_PORT" --max-backoff 1 --once "$@"
}
# workflow NAME JSON [ARGS...]: a server with the actions of JSON.
workflow() {
	_n=$1 _j=$2
	shift 2
	printf '%s\n' "$_j" >"$IB_TMP/$_n.json"
	grpc_server_start "$_n" --agent-id "$ID" --workflow "@$IB_TMP/$_n.json" "$@" ||
		bail_out "tink_server.py did not start"
}
saw() { grpc_reports "$GRPC_EVENTS"; }
# field STATE KEY: KEY of the first report in STATE.
field() {
	"$GRPC_PY" -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    if e.get("rpc") == "ReportActionStatus" and e["state"] == sys.argv[2]:
        print(e[sys.argv[3]]); break' "$GRPC_EVENTS" "$1" "$2"
}

if ! command -v file >/dev/null 2>&1; then
	skip "the agent is linked statically" "file(1) is not installed"
elif grep -q '^#define IB_AGENT_STATIC 1' "$top_builddir/config.h"; then
	like "$(file "$AGENT_BIN")" 'statically linked' "the agent is linked statically"
else
	skip "the agent is linked statically" "configured with --disable-static-agent or a sanitizer"
fi

# ---- three actions to SUCCESS, the environment passed ----
workflow ok '[
 {"name": "one", "image": "x/one", "timeout": 30, "command": ["/bin/sh", "-c", "echo one says $GREETING"], "environment": ["GREETING=hello"]},
 {"name": "two", "image": "x/two", "timeout": 30, "command": ["sh", "-c", "test \"$A\" = 1 && test \"$B\" = \"two words\""], "environment": ["A=1", "B=two words"]},
 {"name": "three", "image": "x/three", "timeout": 30, "command": ["true"]}]'
agent
is "$rc" 0 "three actions: the agent exits 0 when the workflow is over"
is "$(saw)" "one-0 RUNNING OK
one-0 SUCCESS OK
two-1 RUNNING OK
two-1 SUCCESS OK
three-2 RUNNING OK
three-2 SUCCESS OK" "three actions: RUNNING then SUCCESS for each, in order"
like "$err" '\[one\] one says hello' "three actions: the action's output, with its environment, is logged"
like "$(field SUCCESS execution_duration)" '^[0-9.]+(ms|s|µs)$' "three actions: a Go duration in the result"
like "$(field SUCCESS execution_stop)" '^[0-9]{19}$' "three actions: execution_stop in the result"
like "$(field RUNNING execution_start)" '^[0-9]{19}$' "three actions: execution_start in RUNNING"
is "$(field SUCCESS agent_id)" "$ID" "three actions: the reports carry the worker ID"
ib_kill "$GRPC_SERVER_PID"

# ---- a failing action: FAILED with the output's last lines ----
workflow fail '[
 {"name": "first", "image": "x/a", "timeout": 30, "command": ["true"]},
 {"name": "broken", "image": "x/b", "timeout": 30, "command": ["/bin/sh", "-c", "echo partition table; printf \"latin-1 \\351t\\351\\n\"; echo no disk /dev/sdz >&2; exit 3"]},
 {"name": "never", "image": "x/c", "timeout": 30, "command": ["true"]}]'
agent
is "$rc" 1 "failing action: the agent exits 1"
is "$(saw)" "first-0 RUNNING OK
first-0 SUCCESS OK
broken-1 RUNNING OK
broken-1 FAILED OK" "failing action: reported FAILED, the next never started"
like "$(field FAILED message)" 'exit status 3' "failing action: the message has the exit status"
like "$(field FAILED message)" 'no disk /dev/sdz' "failing action: the message has the output's last lines"
like "$(field FAILED message)" 'latin-1 �t�' "failing action: output that is not UTF-8 is made UTF-8 (protobuf strings must be)"
ib_kill "$GRPC_SERVER_PID"

# ---- a command that is not there ----
workflow missing '[{"name": "nope", "image": "x/a", "timeout": 30, "command": ["no-such-command-here"]}]'
agent
is "$(saw | tail -n 1)" "nope-0 FAILED OK" "missing command: reported FAILED"
like "$(field FAILED message)" 'exit status 127' "missing command: exit status 127"
ib_kill "$GRPC_SERVER_PID"

# ---- an action over its timeout: TIMEOUT, the process group killed ----
workflow slow "[{\"name\": \"slow\", \"image\": \"x/a\", \"timeout\": 1, \"command\": [\"/bin/sh\", \"-c\", \"echo starting; echo \$\$ >$IB_TMP/pids; sleep 30 & echo \$! >>$IB_TMP/pids; sleep 30\"]}]"
agent
is "$(saw)" "slow-0 RUNNING OK
slow-0 TIMEOUT OK" "timeout: reported TIMEOUT"
like "$(field TIMEOUT message)" 'timed out after 1s' "timeout: the message says so"
like "$(field TIMEOUT message)" 'starting' "timeout: with the output"
left=
for p in $(cat "$IB_TMP/pids" 2>/dev/null); do ib_alive "$p" && left="$left $p"; done
is "$(wc -l <"$IB_TMP/pids" 2>/dev/null)/$left" "2/" "timeout: no process of the action is left (its shell and a background child)"
ib_kill "$GRPC_SERVER_PID"

# ---- the heartbeat: RUNNING again while the action runs ----
workflow beat '[{"name": "long", "image": "x/a", "timeout": 30, "command": ["sleep", "3"]}]'
agent --heartbeat 1
n=$(saw | grep -c 'long-0 RUNNING OK')
ok "heartbeat: RUNNING sent again while the action ran ($n in all)" test "$n" -ge 2
is "$(saw | tail -n 1)" "long-0 SUCCESS OK" "heartbeat: then the result"
ib_kill "$GRPC_SERVER_PID"

# ---- the server ends the action: the heartbeat is refused, the action stopped ----
# A second agent with the same ID is handed the running action again (as
# after a restart) and reports it FAILED: for the server the action is
# over, and its answer to the first agent's next heartbeat says so.
workflow ended "[{\"name\": \"long\", \"image\": \"x/a\", \"timeout\": 60, \"command\": [\"/bin/sh\", \"-c\", \"echo \$\$ >$IB_TMP/ended.pid; exec sleep 50\"]}]"
"$AGENT_BIN" --runtime host --id "$ID" --tinkerbell-grpc-authority "127.0.0.1:$GRPC_PORT" \
	--max-backoff 1 --heartbeat 1 --once >"$IB_TMP/ended.out" 2>&1 &
apid=$!
ib_bg $apid
wait_for 20 test -s "$IB_TMP/ended.pid" || diag "the action did not start"
grpc_py --target "127.0.0.1:$GRPC_PORT" --agent-id "$ID" --stubs "$IB_TMP/stubs" --until-done \
	--poll 0.05 --max-calls 10 --script '{"actions": {"long": {"result": "failed", "message": "ended elsewhere"}}}'
wait_for 20 sh -c "! kill -0 $apid 2>/dev/null"
like "$(cat "$IB_TMP/ended.out")" 'the server ended long: stopping it' "server-ended: the refused heartbeat stops the action"
epid=$(cat "$IB_TMP/ended.pid")
if ib_alive "$epid"; then fail "server-ended: the action's process is gone" "pid $epid runs"; else pass "server-ended: the action's process is gone"; fi
ok "server-ended: the agent went back to GetAction and ended (--once)" sh -c "! kill -0 $apid 2>/dev/null"
is "$(saw | grep -c 'long-0 FAILED')" 1 "server-ended: only the other agent's FAILED was reported"
ib_kill "$GRPC_SERVER_PID"

# ---- a reboot: reported SUCCESS before it runs ----
mkdir -p "$IB_TMP/bin"
printf '#!/bin/sh\necho rebooting >"%s/rebooted"\n' "$IB_TMP" >"$IB_TMP/bin/reboot"
chmod +x "$IB_TMP/bin/reboot"
workflow down "[{\"name\": \"write\", \"image\": \"x/a\", \"timeout\": 30, \"command\": [\"true\"]},
 {\"name\": \"reboot\", \"image\": \"quay.io/tinkerbell/actions/reboot:latest\", \"timeout\": 30, \"command\": [\"$IB_TMP/bin/reboot\"]}]"
agent
is "$(saw)" "write-0 RUNNING OK
write-0 SUCCESS OK
reboot-1 RUNNING OK
reboot-1 SUCCESS OK" "reboot: reported SUCCESS"
like "$(grep '"reboot-1"' "$GRPC_EVENTS" | grep SUCCESS)" 'takes the machine down' \
	"reboot: the message says why it was reported first"
ok "reboot: then the command ran" test -s "$IB_TMP/rebooted"
is "$(grpc_codes "$GRPC_EVENTS" GetAction | tail -n 1)" "NOT_FOUND" "reboot: the workflow was over (SUCCESS) for the server"
ib_kill "$GRPC_SERVER_PID"

# ---- from the kernel command line; not yet started; reports refused a while ----
workflow cmdline '[{"name": "only", "image": "x/a", "timeout": 30, "command": ["true"]}]' \
	--not-yet 2 --flaky-reports 2
printf 'BOOT_IMAGE=/vmlinuz console=ttyS1,115200 grpc_authority=127.0.0.1:%s tinkerbell_tls=false worker_id=%s syslog_host=127.0.0.1:1\n' \
	"$GRPC_PORT" "$ID" >"$IB_TMP/cmdline"
run "$AGENT_BIN" --runtime host --cmdline "$IB_TMP/cmdline" --max-backoff 1 --once
is "$rc" 0 "kernel command line: the agent found its ID and server there"
is "$(grpc_codes "$GRPC_EVENTS" GetAction | tr '\n' ' ')" "FAILED_PRECONDITION FAILED_PRECONDITION OK NOT_FOUND " \
	"not yet: the agent asked again until the workflow started"
is "$(saw)" "only-0 RUNNING UNAVAILABLE
only-0 RUNNING UNAVAILABLE
only-0 RUNNING OK
only-0 SUCCESS OK" "UNAVAILABLE: the report was made again until taken"
ib_kill "$GRPC_SERVER_PID"

# ---- from tink-agent's environment variables ----
workflow env '[{"name": "only", "image": "x/a", "timeout": 30, "command": ["true"]}]'
WORKER_ID=$ID TINKERBELL_GRPC_AUTHORITY=127.0.0.1:$GRPC_PORT TINKERBELL_TLS=false \
	run "$AGENT_BIN" --runtime host --cmdline /dev/null --max-backoff 1 --once
is "$rc/$(saw | tr '\n' ' ')" "0/only-0 RUNNING OK only-0 SUCCESS OK " \
	"environment: WORKER_ID and TINKERBELL_GRPC_AUTHORITY, as HookOS sets them for tink-agent"
ib_kill "$GRPC_SERVER_PID"

# ---- the server away, then the connection dropped mid-action ----
# A TCP relay on a port of our own stands for the server: the agent starts
# before it exists (refused: backoff), and it is killed and started again
# while the action runs, which drops the agent's connection.
relay() {
	"$GRPC_PY" -c '
import socket, sys, threading
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", int(sys.argv[1])))
ls.listen(8)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = ls.accept()
    u = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()' "$1" "$2" &
	RELAY_PID=$!
	ib_bg $RELAY_PID
}
workflow relay "[{\"name\": \"steady\", \"image\": \"x/a\", \"timeout\": 60, \"command\": [\"/bin/sh\", \"-c\", \"touch $IB_TMP/steady.started; sleep 3\"]}]"
RPORT=$(ib_free_port)
"$AGENT_BIN" --runtime host --id "$ID" --tinkerbell-grpc-authority "127.0.0.1:$RPORT" \
	--max-backoff 1 --once >"$IB_TMP/relay.out" 2>&1 &
apid=$!
ib_bg $apid
wait_for 20 file_has "$IB_TMP/relay.out" 'Connection refused' || diag "the agent did not try yet"
relay "$RPORT" "$GRPC_PORT"
wait_for 30 test -e "$IB_TMP/steady.started" || diag "the action did not start through the relay"
ib_kill "$RELAY_PID"
relay "$RPORT" "$GRPC_PORT"
wait_for 30 sh -c "! kill -0 $apid 2>/dev/null"
wait "$apid"
is "$?/$(saw | tr '\n' ' ')" "0/steady-0 RUNNING OK steady-0 SUCCESS OK " \
	"reconnect: the agent waited for the server, and reported through a new connection"
like "$(cat "$IB_TMP/relay.out")" 'GetAction: Connection refused' "reconnect: the refused connection was logged"
like "$(cat "$IB_TMP/relay.out")" "connection to 127.0.0.1:$RPORT lost" "reconnect: the dropped connection was seen, and a new one made"
ib_kill "$RELAY_PID"
ib_kill "$GRPC_SERVER_PID"

# ---- output to syslog ----
SPORT=$(ib_free_port udp)
"$GRPC_PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.settimeout(30)
open(sys.argv[2] + ".ready", "w").close()
with open(sys.argv[2], "a") as f:
    while True:
        d = s.recv(4096)
        f.write(d.decode("utf-8", "replace") + "\n"); f.flush()
        if b"line two" in d:
            break' "$SPORT" "$IB_TMP/syslog" &
ib_bg $!
wait_for 20 test -e "$IB_TMP/syslog.ready" || diag "the syslog listener did not start"
workflow sys '[{"name": "talk", "image": "x/a", "timeout": 30, "command": ["/bin/sh", "-c", "echo line one; echo line two"]}]'
agent --syslog "127.0.0.1:$SPORT"
wait_for 10 file_has "$IB_TMP/syslog" 'line two' || true
like "$(cat "$IB_TMP/syslog" 2>/dev/null)" '^<14>1 [0-9T:.-]+Z [^ ]+ ironbell-agent [0-9]+ talk - line one$' \
	"syslog: each line as RFC 5424, app ironbell-agent, msgid the action's name"
ib_kill "$GRPC_SERVER_PID"

# ---- TLS: ALPN h2, the certificate checked unless told not to ----
if command -v openssl >/dev/null 2>&1 &&
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$IB_TMP/key.pem" -out "$IB_TMP/cert.pem" \
		>/dev/null 2>&1; then
	workflow tls '[{"name": "secure", "image": "x/a", "timeout": 30, "command": ["true"]}]' \
		--cert "$IB_TMP/cert.pem" --key "$IB_TMP/key.pem"
	SSL_CERT_FILE=$IB_TMP/cert.pem agent --tinkerbell-tls
	is "$rc/$(saw | tr '\n' ' ')" "0/secure-0 RUNNING OK secure-0 SUCCESS OK " \
		"TLS: the workflow runs over TLS with the server's certificate trusted"
	ib_kill "$GRPC_SERVER_PID"
	workflow tls2 '[{"name": "secure", "image": "x/a", "timeout": 30, "command": ["true"]}]' \
		--cert "$IB_TMP/cert.pem" --key "$IB_TMP/key.pem"
	IB_CMD_TIMEOUT=3 agent --tinkerbell-tls
	is "$(saw)" "" "TLS: an untrusted certificate is refused: nothing reported"
	like "$err" 'TLS with 127.0.0.1' "TLS: and the agent says why"
	agent --tinkerbell-tls --tinkerbell-insecure-tls
	is "$rc/$(saw | tr '\n' ' ')" "0/secure-0 RUNNING OK secure-0 SUCCESS OK " \
		"TLS: --tinkerbell-insecure-tls takes any certificate"
	ib_kill "$GRPC_SERVER_PID"
else
	skip "TLS: the workflow runs over TLS" "no openssl"
	skip "TLS: an untrusted certificate is refused" "no openssl"
	skip "TLS: and the agent says why" "no openssl"
	skip "TLS: --tinkerbell-insecure-tls" "no openssl"
fi

# ---- bad settings ----
run "$AGENT_BIN" --help
like "$rc/$out" '^0/usage: ironbell-agent' "--help: the usage, exit 0"
run "$AGENT_BIN" --max-backoff 0 --id x --tinkerbell-grpc-authority 127.0.0.1:1
is "$rc" 2 "--max-backoff 0: refused, exit 2"
run "$AGENT_BIN" --runtime podman --id x --tinkerbell-grpc-authority 127.0.0.1:1
is "$rc" 2 "an unknown runtime: refused, exit 2"
run "$AGENT_BIN" --runtime host --cmdline /dev/null
is "$rc" 2 "no worker ID anywhere: exit 2"
printf 'worker_id="unterminated\n' >"$IB_TMP/badline"
run "$AGENT_BIN" --runtime host --cmdline "$IB_TMP/badline"
like "$err" 'badline' "a malformed kernel command line is named"

tap_done
