#!/bin/sh
# test_kea_api — the Kea hook's "api" source (dhcp/kea/follow-api.c)
# against a real ironbelld: its admin API on TCP with TLS and a token,
# followed by the hook's core run without Kea in the probe program
# (tests/kea/ibkea-probe, one answer line per command on its stdin).
#
# The follower lists the Hardware applied before it started, then sees a
# change, a new one and a delete through the watch; while ironbelld is
# stopped it keeps answering what it knew, and it catches up once the
# daemon is back. A wrong token is an error in the log (once, not at
# every retry) and the table is never ready, until the token file holds
# the right one (read again at each connection); a CA that did not sign
# the server's certificate is logged and nothing is loaded; `quit` stops
# the probe, and the follower's thread with it, at once. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"

PROBE=${IBKEA_PROBE:-$top_builddir/tests/kea/ibkea-probe}
[ -x "$PROBE" ] || skip_all "the probe $PROBE is not built"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"

CERT=$IB_TMP/api.crt
KEY=$IB_TMP/api.key
TOK=$IB_TMP/token
TOKEN=kea-$$-0123456789abcdef0123456789abcdef
printf '%s\n' "$TOKEN" >"$TOK" && chmod 600 "$TOK" || bail_out "cannot write the token"
# mkcert NAME: a self-signed certificate for 127.0.0.1 in $IB_TMP/NAME.crt.
mkcert() {
	run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$IB_TMP/$1.key" -out "$IB_TMP/$1.crt" -days 2 -subj /CN=localhost \
		-addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
	[ "$rc" = 0 ] || bail_out "openssl req failed: $err"
	chmod 600 "$IB_TMP/$1.key"
}
mkcert api
mkcert other

ADMIN_PORT=$(ib_free_port) || bail_out "no free port"
URL=https://127.0.0.1:$ADMIN_PORT
IB_API_EXTRA="  listen: 127.0.0.1:$ADMIN_PORT
  token_file: $TOK
  tls_cert: $CERT
  tls_key: $KEY"
ib_write_config || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

# hw NAME MAC IP: applies a Hardware with one interface (on the socket).
hw() {
	cat >"$IB_TMP/hw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: $1, namespace: default}
spec:
  interfaces:
    - dhcp: {mac: "$2", ip: {address: $3, netmask: 255.255.255.0}}
EOF
	ib apply -f "$IB_TMP/hw.yaml"
	[ "$rc" = 0 ] || diag "apply $1: $err"
}

# ---- the probe: commands through a FIFO on fd 3, answers in a file ----

PROBE_PID=
# probe_start NAME PARAMS-JSON: starts a probe; its answers go to
# $IB_TMP/NAME.out, its log (stderr) to $IB_TMP/NAME.log.
probe_start() {
	PROBE_NAME=$1
	rm -f "$IB_TMP/$1.in"
	mkfifo "$IB_TMP/$1.in" || bail_out "mkfifo"
	: >"$IB_TMP/$1.out"
	"$PROBE" "$2" <"$IB_TMP/$1.in" >"$IB_TMP/$1.out" 2>"$IB_TMP/$1.log" &
	PROBE_PID=$!
	ib_bg "$PROBE_PID"
	exec 3>"$IB_TMP/$1.in"
}

# probe_has_lines N: the answers file has more than N lines.
probe_has_lines() { [ "$(wc -l <"$IB_TMP/$PROBE_NAME.out")" -gt "$1" ]; }

# probe_ask CMD: prints the probe's answer to CMD (empty if none came).
probe_ask() {
	_n=$(wc -l <"$IB_TMP/$PROBE_NAME.out")
	echo "$1" >&3 || return 1
	wait_for 10 probe_has_lines "$_n" || return 1
	sed -n "$((_n + 1))p" "$IB_TMP/$PROBE_NAME.out"
}

# probe_is CMD WANT: the answer to CMD is WANT.
probe_is() { [ "$(probe_ask "$1")" = "$2" ]; }

# probe_log_has ERE: the probe's log has a line matching ERE.
probe_log_has() { file_has "$IB_TMP/$PROBE_NAME.log" "$1"; }

# probe_stop: `quit`, and the probe must exit by itself (bounded), with
# status 0 (a leak found by LeakSanitizer would change it) and no
# sanitizer report in its log.
probe_stop() {
	echo quit >&3
	exec 3>&-
	wait_for 20 probe_gone
	_gone=$?
	ib_kill "$PROBE_PID" 1
	[ "$_gone" = 0 ] && [ "$IB_KILL_STATUS" = 0 ] &&
		! probe_log_has 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:'
}
probe_gone() { ! ib_alive "$PROBE_PID"; }

# The answers, as the probe prints them.
READY=1
NOT_READY=0
NONE=none

# probe_ip MAC WANT: MAC's reservation has the address WANT (the probe
# answers "IP NETMASK HOSTNAME"), or none.
probe_ip() { [ "$(probe_ask "mac $1" | cut -d' ' -f1)" = "$2" ]; }

params() {
	printf '{"source": "api", "api-url": "%s", "api-token-file": "%s", "api-ca-file": "%s"}' \
		"$URL" "$1" "$2"
}

# ---- list, then watch ----

hw kea-a 02:00:00:00:0a:01 192.0.2.11
hw kea-b 02:00:00:00:0a:02 192.0.2.12

probe_start good "$(params "$TOK" "$CERT")"
ok "the follower loads the list (ready)" wait_for 30 probe_is ready "$READY"
is "$(probe_ask count)" 2 "both Hardware are in the table"
is "$(probe_ask "mac 02:00:00:00:0a:01")" "192.0.2.11 255.255.255.0 -" "kea-a's reservation"
is "$(probe_ask "ip 192.0.2.12")" 02:00:00:00:0a:02 "kea-b by its address"
ok "the load is logged with its resourceVersion" probe_log_has 'loaded from .*resourceVersion [0-9]+'

hw kea-a 02:00:00:00:0a:01 192.0.2.21
ok "a change is seen through the watch" wait_for 20 probe_ip 02:00:00:00:0a:01 192.0.2.21
is "$(probe_ask "ip 192.0.2.11")" "$NONE" "the old address is gone"
hw kea-c 02:00:00:00:0a:03 192.0.2.13
ok "a Hardware applied later is seen" wait_for 20 probe_ip 02:00:00:00:0a:03 192.0.2.13
ib delete hw kea-b
is "$rc" 0 "kea-b deleted"
ok "a delete is seen" wait_for 20 probe_ip 02:00:00:00:0a:02 "$NONE"
is "$(probe_ask count)" 2 "two Hardware left"

# ---- ironbelld restarted ----

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld stops"
ok "the follower says it cannot reach the server" wait_for 30 probe_log_has 'failed|cannot'
is "$(probe_ask ready)" "$READY" "while the server is away the table is kept (ready)"
is "$(probe_ask "mac 02:00:00:00:0a:03" | cut -d" " -f1)" 192.0.2.13 "and answered from"
ib_start_daemon || bail_out "ironbelld did not start again"
hw kea-d 02:00:00:00:0a:04 192.0.2.14
ok "after the restart the follower catches up" \
	wait_for 30 probe_ip 02:00:00:00:0a:04 192.0.2.14
ok "and says it follows again" probe_log_has 'following .* again'
hw kea-c 02:00:00:00:0a:03 192.0.2.23
ok "later changes keep coming" wait_for 20 probe_ip 02:00:00:00:0a:03 192.0.2.23
ok "quit stops the probe and its follower (status 0, no sanitizer report)" probe_stop

# ---- a wrong token, then the right one ----

BAD=$IB_TMP/token.bad
printf '%sx\n' "$TOKEN" >"$BAD" && chmod 600 "$BAD"
probe_start badtoken "$(params "$BAD" "$CERT")"
ok "a wrong token is logged as an error" wait_for 30 probe_log_has 'error: source api: .*HTTP 401'
is "$(probe_ask ready)" "$NOT_READY" "and nothing is loaded"
sleep 5 # a couple of retries (IBKEA_RETRY_MS): each must stay silent
is "$(grep -c 'HTTP 401' "$IB_TMP/badtoken.log")" 1 "the same error is logged once"
printf '%s\n' "$TOKEN" >"$BAD"
ok "the token file is read again at each connection" wait_for 30 probe_is ready "$READY"
is "$(probe_ask count)" 3 "and the table is loaded"
ok "quit stops it" probe_stop

# ---- a CA that did not sign the server's certificate ----

probe_start badca "$(params "$TOK" "$IB_TMP/other.crt")"
ok "a wrong CA is logged as an error" wait_for 30 probe_log_has 'error: source api: cannot verify'
is "$(probe_ask ready)" "$NOT_READY" "and nothing is loaded"
ok "quit stops it" probe_stop

# ---- a fake API: what ironbelld does not send often (on loopback, so
# plain http:// is allowed) ----
#
# Each list answer holds more Hardware than the one before; each watch,
# by its resourceVersion, ends in a way the follower must handle: an
# ERROR 410 (list again), a BOOKMARK then the end of the stream (watch
# again from the bookmark), a line that is not JSON and a line over
# IBKEA_API_MAX_LINE (both: list again); the last one stays open.
if ! command -v python3 >/dev/null 2>&1; then
	skip "the fake API" "python3 is not installed"
	tap_done
	exit 0
fi
cat >"$IB_TMP/fake.py" <<'PY'
import http.server, json, os, sys, time
port_file, log_file, token = sys.argv[1:4]
def hw(name, mac, ip, rv):
    return {"apiVersion": "tinkerbell.org/v1alpha1", "kind": "Hardware",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)},
            "spec": {"interfaces": [{"dhcp": {"mac": mac,
                     "ip": {"address": ip, "netmask": "255.255.255.0"}}}]}}
A = hw("fa", "02:00:00:00:0b:01", "192.0.2.31", 3)
B = hw("fb", "02:00:00:00:0b:02", "192.0.2.32", 6)
C = hw("fc", "02:00:00:00:0b:03", "192.0.2.33", 8)
D = hw("fd", "02:00:00:00:0b:04", "192.0.2.34", 15)
E = hw("fe", "02:00:00:00:0b:05", "192.0.2.35", 25)
LISTS = [(5, [A]), (9, [A, C]), (20, [A, C, D]), (30, [A, C, D, E])]
def line(t, o):
    return (json.dumps({"type": t, "object": o}) + "\n").encode()
WATCH = {
    "5": [line("ADDED", B), line("ERROR", {"kind": "Status", "code": 410,
                                           "message": "too old resource version: 5"})],
    "9": [line("BOOKMARK", {"metadata": {"resourceVersion": "12"}})],
    "12": [b"not json\n"],
    "20": [b"x" * (1100 * 1024)],
}
lists = 0
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        global lists
        with open(log_file, "a") as f:
            f.write(self.path + "\n")
        if self.headers.get("Authorization") != "Bearer " + token:
            self.send_response(401)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if "watch=1" not in self.path:
            rv, items = LISTS[min(lists, len(LISTS) - 1)]
            lists += 1
            self.wfile.write(json.dumps({"metadata": {"resourceVersion": str(rv)},
                                         "items": items}).encode())
            return
        rv = self.path.split("resourceVersion=")[-1]
        for l in WATCH.get(rv, []):
            self.wfile.write(l)
            self.wfile.flush()
        if rv not in WATCH:
            for _ in range(600):  # open, quiet, 2 minutes at most
                time.sleep(0.2)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
os.rename(port_file + ".tmp", port_file)
s.serve_forever()
PY
python3 "$IB_TMP/fake.py" "$IB_TMP/fake.port" "$IB_TMP/fake-requests.log" "$TOKEN" 2>"$IB_TMP/fake.err" &
ib_bg $!
wait_for 20 test -s "$IB_TMP/fake.port" || bail_out "the fake API did not start"
FAKE=http://127.0.0.1:$(cat "$IB_TMP/fake.port")
probe_start fake "$(printf '{"api-url": "%s", "api-token-file": "%s"}' "$FAKE" "$TOK")"
ok "fake: the last list is loaded" wait_for 60 probe_ip 02:00:00:00:0b:05 192.0.2.35
is "$(probe_ask count)" 4 "fake: its four Hardware"
is "$(probe_ask "mac 02:00:00:00:0b:02" | cut -d" " -f1)" "$NONE" "fake: a new list drops what it no longer has"
WATCHES=$(grep -o 'resourceVersion=[0-9]*' "$IB_TMP/fake-requests.log" | tr '\n' ' ')
is "$WATCHES" "resourceVersion=5 resourceVersion=9 resourceVersion=12 resourceVersion=20 resourceVersion=30 " \
	"fake: a watch from each list, and one from the bookmark"
is "$(grep -vc watch "$IB_TMP/fake-requests.log")" 4 "fake: a list after the 410, the bad line and the long line"
ok "fake: the 410 is logged" probe_log_has 'code 410.*listing again'
ok "fake: the line that is not JSON is logged" probe_log_has 'malformed watch line.*not JSON'
ok "fake: the long line is logged" probe_log_has 'longer than 1048576 bytes'
ok "fake: quit ends an open watch" probe_stop

ok "no sanitizer report in the daemon's log" ib_log_clean
tap_done
