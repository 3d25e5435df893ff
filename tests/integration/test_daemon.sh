#!/bin/sh
# test_daemon — ironbelld's life cycle: the command-line flags, -n on good
# and bad configurations (exit 78, FILE:LINE:COLUMN, nothing created),
# readiness and the systemd notifications (READY=1 only once the admin
# socket answers, WATCHDOG=1, RELOADING=1, STOPPING=1) seen by a fake
# NOTIFY_SOCKET, SIGHUP with a good and a bad file, SIGTERM and SIGINT
# (exit 0 within 5 s, socket removed, a watch stream ended), a second
# instance on a busy socket, a public port in use, the --state-dir and
# --log-level overrides, and logfmt on stderr. Prints TAP.
#
# Every daemon here is started by this script (not ib_start_daemon: some
# need a special environment), tracked by PID and killed by the EXIT trap.
set -u

. "$top_srcdir/tests/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
command -v "$PY" >/dev/null 2>&1 || skip_all "python3 is not installed"

# Not under systemd here, whatever runs the test: logfmt on stderr, and
# notifications only where a test asks for them.
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID JOURNAL_STREAM LISTEN_FDS LISTEN_PID
IB_CMD_TIMEOUT=10

FIX=$top_srcdir/tests/integration/fixtures

# ---- processes ----

PIDS=
track() { PIDS="$PIDS $1"; }
untrack() {
	_u=
	for _p in $PIDS; do
		[ "$_p" = "$1" ] || _u="$_u $_p"
	done
	PIDS=$_u
}

# reap PID: waits for the (ended) PID, sets $status, forgets it.
reap() {
	wait "$1" 2>/dev/null
	status=$?
	untrack "$1"
}

# stop PID: SIGTERM, SIGKILL after 5 s, and reap.
stop() {
	ib_kill "$1" 5
	untrack "$1"
}

cleanup() {
	for _p in $PIDS; do
		ib_alive "$_p" && kill -KILL "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	PIDS=
	ib_cleanup
}
trap cleanup EXIT

# spawn LOG CMD...: runs CMD in the background, stdout and stderr to LOG;
# sets $DPID.
spawn() {
	_log=$1
	shift
	"$@" >"$_log" 2>&1 </dev/null &
	DPID=$!
	track "$DPID"
}

# now_ms: the wall clock in milliseconds (seconds where date has no %N).
now_ms() {
	_ns=$(date +%s%N)
	case "$_ns" in
	*[!0-9]*) echo $(($(date +%s) * 1000)) ;;
	*) echo $((_ns / 1000000)) ;;
	esac
}

# within TENTHS CMD...: retries CMD every 0.1 s until it succeeds, at
# most TENTHS times.
within() {
	_w_lim=$1
	shift
	_w_i=0
	while :; do
		"$@" && return 0
		_w_i=$((_w_i + 1))
		[ "$_w_i" -ge "$_w_lim" ] && return 1
		sleep 0.1
	done
}

# gone_within MS PID: true when PID ends within MS milliseconds (wall
# clock); sets $elapsed (ms).
gone_within() {
	_g_start=$(now_ms)
	_g_end=$((_g_start + $1))
	while ib_alive "$2" && [ "$(now_ms)" -lt "$_g_end" ]; do
		sleep 0.05
	done
	elapsed=$(($(now_ms) - _g_start))
	! ib_alive "$2"
}

# serving SOCK: `ironbell version` gets the server's answer on SOCK.
serving() {
	timeout -k 2 5 "$IRONBELL" --socket "$1" version >/dev/null 2>&1
}

# no_sanitizer_report LOG: LOG has no ASan, LSan or UBSan report.
no_sanitizer_report() {
	! grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"
}

# ---- text ----

# starts_with TEXT PREFIX DESC: TEXT begins with PREFIX (no pattern).
starts_with() {
	case "$1" in
	"$2"*) pass "$3" ;;
	*) fail "$3" "got:  '$1'
want: '$2...'" ;;
	esac
}

# contains TEXT STRING DESC: TEXT has STRING (no pattern).
contains() {
	case "$1" in
	*"$2"*) pass "$3" ;;
	*) fail "$3" "no '$2' in:
$1" ;;
	esac
}

# count FILE ERE: the lines of FILE that match ERE.
count() {
	grep -Ec -- "$2" "$1" 2>/dev/null || :
}

# ---- the fake NOTIFY_SOCKET ----

# A unix datagram listener at argv[1] that appends each datagram to
# argv[2] as one line, its newline-separated fields joined by "|". On the
# first READY=1 it at once asks the admin socket argv[3] for /readyz and
# appends "CHECK|readyz=STATUS" (or =error:...). It gives up after 120 s.
LISTENER='
import socket, sys, time
path, out, admin = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(0.5)
end = time.monotonic() + 120

def check():
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(5)
    try:
        c.connect(admin)
        c.sendall(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n")
        words = c.recv(4096).split(b"\r\n")[0].split()
        return "readyz=" + (words[1].decode("ascii", "replace") if len(words) > 1 else "?")
    except OSError as e:
        return "readyz=error:" + type(e).__name__
    finally:
        c.close()

checked = False
with open(out, "a", buffering=1) as f:
    while time.monotonic() < end:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        fields = d.decode("utf-8", "replace").split("\n")
        f.write("|".join(fields) + "\n")
        if "READY=1" in fields and not checked:
            checked = True
            f.write("CHECK|" + check() + "\n")
'

# listen NOTIFY_PATH OUT ADMIN_SOCK: starts a listener; sets $LPID.
listen() {
	: >"$2"
	"$PY" -c "$LISTENER" "$1" "$2" "$3" </dev/null &
	LPID=$!
	track "$LPID"
	within 50 test -S "$1" || bail_out "the notify listener did not start"
}

# field FILE FIELD [MARK]: some notification after line MARK has FIELD.
field() {
	tail -n +$((${3:-0} + 1)) "$1" | grep -Eq -- "(^|[|])$2([|]|\$)"
}

# fields_in_order FILE MARK A B: after line MARK, a notification with
# field A and a later one with field B.
fields_in_order() {
	tail -n +$(($2 + 1)) "$1" | awk -F'|' -v a="$3" -v b="$4" '
		{ for (i = 1; i <= NF; i++) {
			if (at && NR > at && $i == b) found = 1
			if (!at && $i == a) at = NR
		} }
		END { exit !found }'
}

# write_conf FILE STATE_DIR SOCKET HTTP_PORT [LOG_LEVEL]
write_conf() {
	cat >"$1" <<EOF
log_level: ${5:-info}
state_dir: $2
api:
  socket: $3
http:
  listen: 127.0.0.1:$4
grpc:
  enabled: false
EOF
}

# ==== 1. flags ====

version=$(sed -n 's/^AC_INIT(\[ironbell\], *\[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")

run "$IRONBELLD" --help
is "$rc" 0 "--help exits 0"
is "$err" "" "--help writes nothing on stderr"
for f in -c --config -n --check --foreground --log-level --state-dir --version -h --help; do
	like "$out" "(^|[ ,])$f([ ,]|\$)" "--help mentions $f"
done

run "$IRONBELLD" --version
is "$rc" 0 "--version exits 0"
if [ -n "$version" ]; then
	is "$out" "ironbelld $version" "--version prints ironbelld $version"
else
	like "$out" '^ironbelld [0-9]+\.[0-9]+' "--version prints a version"
fi

run "$IRONBELLD" --no-such-flag
is "$rc" 2 "an unknown flag exits 2"
like "$err" '^Usage: ironbelld' "with the usage on stderr"
like "$err" 'no-such-flag' "naming the flag"
is "$out" "" "and nothing on stdout"

run "$IRONBELLD" --log-level loud
is "$rc" 2 "--log-level with an unknown level exits 2"

run "$IRONBELLD" stray-argument
is "$rc" 2 "a stray argument exits 2"

# ==== 2. -n, and bad configurations at start ====

NS=$IB_TMP/nostart
NS_STATE=$NS/state
NS_SOCK=$NS/run/api.sock
mkdir -p "$NS_STATE" || bail_out "mkdir $NS_STATE"
ns_port=$(ib_free_port) || bail_out "no free port"

# nothing_created WHAT: the state directory is still empty and the socket
# directory was not made.
nothing_created() {
	is "$(ls -A "$NS_STATE")" "" "$1: the state directory is left empty (no ironbell.db)"
	ok "$1: no socket (not even its directory)" test ! -e "$NS/run"
}

write_conf "$NS/good.yaml" "$NS_STATE" "$NS_SOCK" "$ns_port"
run "$IRONBELLD" -n -c "$NS/good.yaml"
is "$rc" 0 "-n on a good config exits 0"
is "$out" "config ok" "and prints config ok"
nothing_created "-n on a good config"

run "$IRONBELLD" --check --config "$NS/good.yaml"
is "$out:$rc" "config ok:0" "--check --config is -n -c"

# Line 5, column 3: the unknown key.
cat >"$NS/bad-key.yaml" <<EOF
log_level: info
state_dir: $NS_STATE
api:
  socket: $NS_SOCK
  sockt_mode: "0660"
http:
  listen: 127.0.0.1:$ns_port
EOF
# Line 7, column 12: the value.
cat >"$NS/bad-value.yaml" <<EOF
log_level: info
state_dir: $NS_STATE
api:
  socket: $NS_SOCK
http:
  listen: 127.0.0.1:$ns_port
  threads: 65
EOF
# Line 3, column 8: a mapping value where a scalar goes on.
cat >"$NS/bad-yaml.yaml" <<EOF
log_level: info
state_dir: $NS_STATE
  extra: 1
api:
  socket: $NS_SOCK
http:
  listen: 127.0.0.1:$ns_port
EOF

for spec in 'bad-key.yaml:5:3:unknown key "sockt_mode" in "api"' \
	'bad-value.yaml:7:12:http.threads: 65 is out of range 0..64' \
	'bad-yaml.yaml:3:8:mapping values are not allowed'; do
	file=${spec%%:*}
	rest=${spec#*:}
	line=${rest%%:*}
	rest=${rest#*:}
	col=${rest%%:*}
	msg=${rest#*:}
	f=$NS/$file

	run "$IRONBELLD" -n -c "$f"
	is "$rc" 78 "-n on $file exits 78"
	starts_with "$err" "$f:$line:$col: " "-n on $file reports $file:$line:$col"
	contains "$err" "$f:$line:$col: $msg" "-n on $file says: $msg"
	is "$out" "" "-n on $file prints nothing on stdout"
	nothing_created "-n on $file"

	run "$IRONBELLD" -c "$f"
	is "$rc" 78 "starting on $file exits 78"
	starts_with "$err" "$f:$line:$col: $msg" "starting on $file reports $file:$line:$col: $msg"
	nothing_created "starting on $file"
done

run "$IRONBELLD" -n -c "$NS/no-such.yaml"
is "$rc" 78 "-n on a missing file exits 78"
like "$err" 'no-such\.yaml: cannot read' "and says it cannot read it"

# ==== 3. start-up, readiness and the notifications ====

A=$IB_TMP/a
A_SOCK=$A/api.sock
A_STATE=$A/state
A_CONF=$A/ironbell.yaml
A_NOTIFY=$A/notify.sock
A_NOTES=$A/notify.log
mkdir -p "$A" || bail_out "mkdir $A"
a_port=$(ib_free_port) || bail_out "no free port"
write_conf "$A_CONF" "$A_STATE" "$A_SOCK" "$a_port" info

listen "$A_NOTIFY" "$A_NOTES" "$A_SOCK"
A_LPID=$LPID
spawn "$IB_LOG" env -u WATCHDOG_PID NOTIFY_SOCKET="$A_NOTIFY" WATCHDOG_USEC=400000 \
	"$IRONBELLD" -c "$A_CONF"
A_PID=$DPID

if within 100 field "$A_NOTES" READY=1; then
	pass "READY=1 arrives on NOTIFY_SOCKET"
	ok "ironbell version succeeds as soon as READY=1 is seen" serving "$A_SOCK"
else
	fail "READY=1 arrives on NOTIFY_SOCKET" "$(cat "$A_NOTES"; tail -n 20 "$IB_LOG")"
	bail_out "ironbelld did not get ready"
fi
within 50 field "$A_NOTES" CHECK
is "$(sed -n 's/^CHECK|//p' "$A_NOTES")" "readyz=200" \
	"the admin socket answered /readyz 200 at the moment READY=1 arrived"
ok "READY=1 carries a STATUS= line" field "$A_NOTES" 'STATUS=Running.*'
ok "the database is created in state_dir" test -f "$A_STATE/ironbell.db"
ok "the socket is a socket" test -S "$A_SOCK"

within 20 field "$A_NOTES" WATCHDOG=1
ok "WATCHDOG=1 is sent when WATCHDOG_USEC is set" field "$A_NOTES" WATCHDOG=1
w0=$(count "$A_NOTES" '^WATCHDOG=1$')
sleep 1.5
w1=$(count "$A_NOTES" '^WATCHDOG=1$')
ok "WATCHDOG=1 repeats: >= 2 in 1.5 s at WATCHDOG_USEC=400000 (got $((w1 - w0)))" \
	test $((w1 - w0)) -ge 2

# ==== 9. logfmt on stderr ====

start=$(grep -E 'msg="?ironbelld .* started' "$IB_LOG" | head -n 1)
like "$start" '^ts=[0-9T:.-]+Z level=info ' "the start line is logfmt with level=info"
like "$start" " msg=\"ironbelld [^\"]* started: admin unix:$A_SOCK" "the start line has msg= naming the socket"
is "$(grep -cv '^ts=[^ ]* level=[a-z]* ' "$IB_LOG")" 0 "every stderr line is logfmt (ts= level= first)"

# ==== 4. SIGHUP ====

serving "$A_SOCK"
sleep 0.2
is "$(count "$IB_LOG" 'level=debug')" 0 "at log_level info no debug line is logged"

mark=$(wc -l <"$A_NOTES")
write_conf "$A_CONF" "$A_STATE" "$A_SOCK" "$a_port" debug
kill -HUP "$A_PID"
ok "SIGHUP (good file): RELOADING=1, then READY=1" \
	within 100 fields_in_order "$A_NOTES" "$mark" RELOADING=1 READY=1
ok "the reload is logged with the new level" \
	within 50 file_has "$IB_LOG" 'level=info .*msg="reloaded .* \(log level debug\)"'
ok "ironbelld still serves after SIGHUP" serving "$A_SOCK"
ok "the new log_level takes effect: debug lines appear" \
	within 30 file_has "$IB_LOG" 'level=debug'

# A bad file: log_level error and an unknown key at line 5, column 3.
cat >"$A_CONF" <<EOF
log_level: error
state_dir: $A_STATE
api:
  socket: $A_SOCK
  sockt_mode: "0660"
http:
  listen: 127.0.0.1:$a_port
EOF
mark=$(wc -l <"$A_NOTES")
kill -HUP "$A_PID"
ok "SIGHUP (bad file): RELOADING=1, then READY=1" \
	within 100 fields_in_order "$A_NOTES" "$mark" RELOADING=1 READY=1
within 50 file_has "$IB_LOG" 'reload failed'
failed=$(grep 'reload failed' "$IB_LOG")
like "$failed" '^ts=[^ ]* level=error ' "the failed reload is logged at level=error"
contains "$failed" "$A_CONF:5:3: unknown key" "the log names $A_CONF:5:3"
ok "ironbelld keeps running after a bad SIGHUP" ib_alive "$A_PID"
debug_before=$(count "$IB_LOG" 'level=debug')
debug_grew() { [ "$(count "$IB_LOG" 'level=debug')" -gt "$debug_before" ]; }
ib --socket "$A_SOCK" get hardware
is "$rc" 0 "ironbell get works after a bad SIGHUP"
ok "the old configuration is kept: debug lines still appear (the bad file said error)" \
	within 30 debug_grew

# ==== 6. a second instance on the same socket ====

S=$IB_TMP/second
mkdir -p "$S" || bail_out "mkdir $S"
write_conf "$S/ironbell.yaml" "$S/state" "$A_SOCK" "$(ib_free_port)"
run "$IRONBELLD" -c "$S/ironbell.yaml"
is "$rc" 1 "a second instance on the same socket exits 1"
like "$err" 'another process is listening' "and says another process is listening"
contains "$err" "unix:$A_SOCK" "naming the socket"
ok "the first instance still runs" ib_alive "$A_PID"
ok "its socket file is still there" test -S "$A_SOCK"
ok "and it still serves" serving "$A_SOCK"

# ==== 7. the public port in use ====

P=$IB_TMP/port
mkdir -p "$P" || bail_out "mkdir $P"
write_conf "$P/ironbell.yaml" "$P/state" "$P/api.sock" "$a_port"
run "$IRONBELLD" -c "$P/ironbell.yaml"
is "$rc" 1 "http.listen on a port in use exits 1"
contains "$err" "cannot listen on 127.0.0.1:$a_port" "naming the address 127.0.0.1:$a_port"
like "$err" '[Aa]ddress already in use' "and the reason"
ok "the failed instance leaves no socket behind" test ! -e "$P/api.sock"
ok "the first instance still serves" serving "$A_SOCK"

# ==== 7b. the public port: one socket per thread ====

# http.threads: 3 makes three daemons, each on its own SO_REUSEPORT socket.
R=$IB_TMP/reuseport
mkdir -p "$R" || bail_out "mkdir $R"
r_port=$(ib_free_port) || bail_out "no free port"
write_conf "$R/ironbell.yaml" "$R/state" "$R/api.sock" "$r_port"
sed -i "s/^  listen: 127.0.0.1:$r_port\$/&\n  threads: 3/" "$R/ironbell.yaml"
spawn "$R/log" "$IRONBELLD" -c "$R/ironbell.yaml"
R_PID=$DPID
ok "http.threads: 3 starts" within 100 serving "$R/api.sock"
listeners() { ss -Hltn "sport = :$1" | wc -l; }
is "$(listeners "$r_port")" 3 "three sockets listen on 127.0.0.1:$r_port"
# answered200 PORT N: of N new connections asking /healthz, how many
# were answered 200.
answered200() {
	for _ in $(seq "$2"); do
		curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$1/healthz"
	done | grep -c '^200$'
}
is "$(answered200 "$r_port" 30)" 30 "30 new connections to it are all answered 200"
stop "$R_PID"

# A process of this user listening with SO_REUSEPORT would accept half of
# the connections of a port shared that way: ironbelld refuses the port,
# as it does any port in use, instead of joining it.
"$PY" -c 'import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
print("listening", flush=True)
time.sleep(30)' "$r_port" >"$R/foreign.out" 2>&1 &
F_PID=$!
track "$F_PID"
ok "a foreign SO_REUSEPORT listener is up" within 50 file_has "$R/foreign.out" '^listening$'
run "$IRONBELLD" -c "$R/ironbell.yaml"
is "$rc" 1 "http.threads: 3 on a port another process shares by SO_REUSEPORT exits 1"
contains "$err" "cannot listen on 127.0.0.1:$r_port" "naming the address 127.0.0.1:$r_port"
like "$err" '[Aa]ddress already in use' "and the reason"
is "$(listeners "$r_port")" 1 "and only the foreign socket listens there"
kill "$F_PID" 2>/dev/null
reap "$F_PID"

# ==== 7c. one listener thread on each CPU (http.pin_threads) ====

# affinities PID: "comm cpus" for each of PID's threads.
affinities() {
	for _t in /proc/"$1"/task/*; do
		printf '%s %s\n' "$(cat "$_t/comm" 2>/dev/null)" \
			"$(awk '$1 == "Cpus_allowed_list:" { print $2 }' "$_t/status" 2>/dev/null)"
	done
}
# The first two CPUs this test may run on, "a,b"; empty with fewer.
two_cpus=$("$PY" -c 'import os; c = sorted(os.sched_getaffinity(0)); print("%d,%d" % (c[0], c[1]) if len(c) > 1 else "")')
if [ -n "$two_cpus" ] && command -v taskset >/dev/null 2>&1; then
	cpu_a=${two_cpus%,*} cpu_b=${two_cpus#*,}
	Q=$IB_TMP/pin
	mkdir -p "$Q" || bail_out "mkdir $Q"
	q_port=$(ib_free_port) || bail_out "no free port"
	write_conf "$Q/ironbell.yaml" "$Q/state" "$Q/api.sock" "$q_port"
	spawn "$Q/log" taskset -c "$two_cpus" "$IRONBELLD" -c "$Q/ironbell.yaml"
	Q_PID=$DPID
	ok "on two CPUs, the default http.threads starts" within 100 serving "$Q/api.sock"
	aff=$(affinities "$Q_PID")
	both=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' "/proc/$Q_PID/status")
	is "$(printf '%s\n' "$aff" | awk '$1 == "MHD-single" { print $2 }' | sort | tr '\n' ' ')" \
		"$(printf '%s\n%s\n' "$cpu_a" "$cpu_b" | sort | tr '\n' ' ')" \
		"its two public listener threads are on CPU $cpu_a and CPU $cpu_b, one each"
	is "$(printf '%s\n' "$aff" | awk '$1 != "MHD-single" && $2 != c' c="$both" | wc -l)" 0 \
		"every other thread may run on both"
	ok "the log says so" file_has "$Q/log" "127.0.0.1:$q_port: 2 threads, one on each CPU"
	is "$(answered200 "$q_port" 20)" 20 "20 new connections to the pinned threads are all answered 200"
	# A reload cannot move threads that run: it says a restart is needed.
	sed -i "s/^  listen: 127.0.0.1:$q_port\$/&\n  pin_threads: false/" "$Q/ironbell.yaml"
	kill -HUP "$Q_PID"
	ok "a reload says http.pin_threads takes effect after a restart" \
		within 50 file_has "$Q/log" 'only after a restart: .*http\.pin_threads'
	is "$(affinities "$Q_PID" | awk '$1 == "MHD-single" && $2 != c' c="$both" | wc -l)" 2 \
		"and the two listener threads stay pinned"
	stop "$Q_PID"
	for extra in "pin_threads: false" "threads: 3"; do
		write_conf "$Q/ironbell.yaml" "$Q/state" "$Q/api.sock" "$q_port"
		sed -i "s/^  listen: 127.0.0.1:$q_port\$/&\n  $extra/" "$Q/ironbell.yaml"
		spawn "$Q/log" taskset -c "$two_cpus" "$IRONBELLD" -c "$Q/ironbell.yaml"
		Q_PID=$DPID
		ok "on two CPUs, http.$extra starts" within 100 serving "$Q/api.sock"
		both=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' "/proc/$Q_PID/status")
		is "$(affinities "$Q_PID" | awk '$1 == "MHD-single" && $2 != c' c="$both" | wc -l)" 0 \
			"with http.$extra no listener thread is pinned"
		if [ "$extra" = "threads: 3" ]; then
			ok "the log says the 3 threads are not pinned" \
				file_has "$Q/log" "127.0.0.1:$q_port: 3 threads, not pinned"
		fi
		stop "$Q_PID"
	done
else
	skip "http.pin_threads" "needs two CPUs and taskset"
fi

# ==== 5. SIGTERM with a watch connected ====

"$IRONBELL" --socket "$A_SOCK" watch hardware >"$A/watch.out" 2>"$A/watch.err" </dev/null &
W_PID=$!
track "$W_PID"
ib --socket "$A_SOCK" apply -f "$FIX/good/20-hardware.yaml"
is "$rc" 0 "apply while a watch is connected"
ok "the watch streams" within 50 file_has "$A/watch.out" '^ADDED hardware/node-a'

mark=$(wc -l <"$A_NOTES")
kill -TERM "$A_PID"
if gone_within 5000 "$A_PID"; then
	pass "SIGTERM: ironbelld exits within 5 s with a watch connected (${elapsed} ms)"
	reap "$A_PID"
	is "$status" 0 "SIGTERM: exit status 0"
else
	fail "SIGTERM: ironbelld exits within 5 s with a watch connected" "$(tail -n 20 "$IB_LOG")"
	stop "$A_PID"
	fail "SIGTERM: exit status 0" "killed"
fi
ok "SIGTERM: STOPPING=1 is sent" within 20 field "$A_NOTES" STOPPING=1 "$mark"
ok "SIGTERM: the unix socket is removed" test ! -e "$A_SOCK"
ok "SIGTERM: the database is kept" test -f "$A_STATE/ironbell.db"
like "$(tail -n 2 "$IB_LOG")" 'msg=stopped' "SIGTERM: the last line says stopped"
if gone_within 5000 "$W_PID"; then
	pass "the watcher exits when the daemon stops (${elapsed} ms)"
	reap "$W_PID"
else
	fail "the watcher exits when the daemon stops"
	stop "$W_PID"
fi
ok "no sanitizer report in the log" ib_log_clean
stop "$A_LPID"

# ==== 8. --state-dir and --log-level; SIGINT ====

B=$IB_TMP/b
B_SOCK=$B/api.sock
B_LOG=$B/daemon.log
B_NOTES=$B/notify.log
mkdir -p "$B" || bail_out "mkdir $B"
write_conf "$B/ironbell.yaml" "$B/conf-state" "$B_SOCK" "$(ib_free_port)" error
listen "$B/notify.sock" "$B_NOTES" "$B_SOCK"
B_LPID=$LPID
# WATCHDOG_PID names another process: sd_watchdog_enabled says no.
spawn "$B_LOG" env NOTIFY_SOCKET="$B/notify.sock" WATCHDOG_USEC=400000 WATCHDOG_PID=1 \
	"$IRONBELLD" -c "$B/ironbell.yaml" --state-dir "$B/cli-state" --log-level debug
B_PID=$DPID
within 100 serving "$B_SOCK" || {
	tail -n 20 "$B_LOG" | diag "$(cat)"
	bail_out "ironbelld with --state-dir did not start"
}
ok "--state-dir: the database is created there" test -f "$B/cli-state/ironbell.db"
ok "--state-dir: the configured state_dir is not created" test ! -e "$B/conf-state"
ok "--log-level debug overrides log_level error: debug lines appear" \
	within 30 file_has "$B_LOG" '^ts=[^ ]* level=debug '
like "$(cat "$B_LOG")" 'level=info .*started' "--log-level debug: the info start line is logged"
mark=$(wc -l <"$B_NOTES")
kill -HUP "$B_PID"
ok "--log-level survives a reload" \
	within 50 file_has "$B_LOG" 'msg="reloaded .* \(log level debug\)"'
ok "READY=1 after that reload" within 50 fields_in_order "$B_NOTES" "$mark" RELOADING=1 READY=1
is "$(count "$B_NOTES" '^WATCHDOG=1$')" 0 "no WATCHDOG=1 when WATCHDOG_PID names another process"

mark=$(wc -l <"$B_NOTES")
kill -INT "$B_PID"
if gone_within 5000 "$B_PID"; then
	pass "SIGINT: ironbelld exits within 5 s (${elapsed} ms)"
	reap "$B_PID"
	is "$status" 0 "SIGINT: exit status 0"
else
	fail "SIGINT: ironbelld exits within 5 s" "$(tail -n 20 "$B_LOG")"
	stop "$B_PID"
	fail "SIGINT: exit status 0" "killed"
fi
ok "SIGINT: STOPPING=1 is sent" within 20 field "$B_NOTES" STOPPING=1 "$mark"
ok "SIGINT: the unix socket is removed" test ! -e "$B_SOCK"
like "$(cat "$B_LOG")" 'msg="stopping on Interrupt' "SIGINT: the log says why it stops"
ok "no sanitizer report in the second log" no_sanitizer_report "$B_LOG"
stop "$B_LPID"

tap_done
