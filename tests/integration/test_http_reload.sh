#!/bin/sh
# test_http_reload — a reload while a request is in flight on the public
# listener: the request keeps the configuration snapshot it began with,
# while the next requests of the same listener thread (http.threads: 1)
# already see the new one, and nothing the first request still reads is
# freed (the ASan build of this test turns a use after free into a crash).
# The request in flight is a GET of an iPXE script whose body is held back:
# libmicrohttpd's "100 Continue" says that the request has begun (its
# snapshot is taken) before the reload is sent; a second such request,
# whose client goes away, ends on the same snapshot first. glibc's malloc fills
# what is freed (MALLOC_PERTURB_), so that the plain build sees a freed
# snapshot too. Needs python3 and curl.
set -u

. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"

printf '#!ipxe\necho snapshot-zero {{hw_addr}}\n' >"$IB_TMP/zero.ipxe"
printf '#!ipxe\necho snapshot-one {{hw_addr}}\n' >"$IB_TMP/one.ipxe"
printf '#!ipxe\necho snapshot-two {{hw_addr}}\n' >"$IB_TMP/two.ipxe"
cp "$IB_TMP/zero.ipxe" "$IB_TMP/tmpl.ipxe"
ib_write_config "  threads: 1
ipxe:
  script_template: $IB_TMP/tmpl.ipxe" || bail_out "cannot write the config"
export MALLOC_PERTURB_=165
ib_start_daemon || bail_out "ironbelld did not start"
BASE=http://127.0.0.1:$IB_HTTP_PORT
SCRIPT=/ipxe/script/52:54:00:12:34:56/auto.ipxe

cat >"$IB_TMP/hw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: m1
  namespace: default
spec:
  interfaces:
  - dhcp:
      mac: 52:54:00:12:34:56
      ip:
        address: 127.0.0.1
        netmask: 255.0.0.0
    netboot:
      allowPXE: true
EOF
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "the Hardware is applied"
run curl -s --max-time 10 "$BASE$SCRIPT"
like "$out" 'snapshot-zero' "the script comes from the first template"
# The daemon keeps its first snapshot for good (DHCP's settings): the slow
# request below begins on the second one, which only requests hold.
cp "$IB_TMP/one.ipxe" "$IB_TMP/tmpl.ipxe"
kill -HUP "$IB_DAEMON_PID"
wait_for 10 sh -c "curl -s --max-time 5 $BASE$SCRIPT | grep -q snapshot-one"
is "$?" 0 "a reload puts the second template in use"

# The slow request: headers with a body announced, then (once the server
# has begun it, 100 Continue) a wait for $IB_TMP/go, then the body. The
# answer's body goes to $IB_TMP/slow.out.
cat >"$IB_TMP/slow.py" <<'EOF'
import os, socket, sys, time
port, path, tmp, tag = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
           "Expect: 100-continue\r\n\r\n" % path).encode())
got = b""
while b"\r\n\r\n" not in got:
    chunk = s.recv(4096)
    if not chunk:
        sys.exit("closed before 100 Continue: %r" % got)
    got += chunk
if not got.startswith(b"HTTP/1.1 100"):
    sys.exit("no 100 Continue: %r" % got)
open(os.path.join(tmp, tag + ".begun"), "w").close()
for _ in range(200):
    if os.path.exists(os.path.join(tmp, "go")):
        break
    time.sleep(0.1)
if tag == "abort":
    s.close()  # the client goes away: the request ends without an answer
    sys.exit(0)
s.sendall(b"body")
resp = got.split(b"\r\n\r\n", 1)[1]
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    resp += chunk
    head, _, body = resp.partition(b"\r\n\r\n")
    n = [int(l.split(b":")[1]) for l in head.split(b"\r\n")
         if l.lower().startswith(b"content-length:")]
    if n and len(body) >= n[0]:
        break
open(os.path.join(tmp, "slow.out"), "wb").write(resp)
EOF
rm -f "$IB_TMP"/*.begun "$IB_TMP/go" "$IB_TMP/slow.out"
python3 "$IB_TMP/slow.py" "$IB_HTTP_PORT" "$SCRIPT" "$IB_TMP" slow 2>"$IB_TMP/slow.err" &
SLOW_PID=$!
# A second one, whose client goes away instead of sending its body: its
# end (an abort) lets go of the same snapshot.
python3 "$IB_TMP/slow.py" "$IB_HTTP_PORT" "$SCRIPT" "$IB_TMP" abort 2>"$IB_TMP/abort.err" &
ABORT_PID=$!
wait_for 10 test -f "$IB_TMP/slow.begun"
is "$?" 0 "the slow request has begun (100 Continue)"
wait_for 10 test -f "$IB_TMP/abort.begun"
is "$?" 0 "and the one that will be aborted"

cp "$IB_TMP/two.ipxe" "$IB_TMP/tmpl.ipxe"
kill -HUP "$IB_DAEMON_PID"
# Each of these requests runs on the listener's only thread, which moves
# to the new snapshot while the slow request still holds the old one.
wait_for 10 sh -c "curl -s --max-time 5 $BASE$SCRIPT | grep -q snapshot-two"
is "$?" 0 "after the reload, new requests see the new template"
run curl -s --max-time 10 "$BASE$SCRIPT" "$BASE$SCRIPT" "$BASE/healthz"
is "$(printf '%s\n' "$out" | grep -c 'echo snapshot-two')" 2 "keep-alive requests too"
# Another reload: the thread lets go of the third snapshot as well.
cp "$IB_TMP/zero.ipxe" "$IB_TMP/tmpl.ipxe"
kill -HUP "$IB_DAEMON_PID"
wait_for 10 sh -c "curl -s --max-time 5 $BASE$SCRIPT | grep -q snapshot-zero"
is "$?" 0 "another reload is seen too"

touch "$IB_TMP/go"
wait "$ABORT_PID"
is "$?" 0 "the second client goes away"
wait "$SLOW_PID"
is "$?" 0 "the slow request gets an answer"
[ -s "$IB_TMP/slow.err" ] && diag "$(cat "$IB_TMP/slow.err")"
run cat "$IB_TMP/slow.out"
like "$out" '^HTTP/1.1 200' "with 200"
like "$out" 'echo snapshot-one 52:54:00:12:34:56' "from the snapshot it began with"
ok "ironbelld is still alive" ib_alive "$IB_DAEMON_PID"
run curl -s --max-time 10 "$BASE$SCRIPT"
like "$out" 'snapshot-zero' "and serves the current template"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
