# lib.sh — shell helpers for the integration tests (POSIX sh, sourced).
#
# Every test prints TAP: each assertion is one "ok N - ..." or
# "not ok N - ..." line, and tap_done prints the plan at the end. A test
# starts its own ironbelld with ib_start_daemon (a config, a state
# directory and an admin socket in a fresh mktemp -d directory, the public
# listener on 127.0.0.1 and a free port) and the EXIT trap stops it and
# every background job the test registered. Every wait is bounded.
#
# The harness exports IRONBELLD, IRONBELL, top_srcdir and top_builddir
# (Makefile.am AM_TESTS_ENVIRONMENT).

: "${IRONBELLD:?IRONBELLD must name the ironbelld binary}"
: "${IRONBELL:?IRONBELL must name the ironbell binary}"
: "${top_srcdir:?top_srcdir must be set}"

IB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ironbell-test.XXXXXX") || {
	echo "Bail out! cannot make a temporary directory"
	exit 1
}
IB_SOCK=$IB_TMP/api.sock
IB_STATE=$IB_TMP/state
IB_CONFIG=$IB_TMP/ironbell.yaml
IB_LOG=$IB_TMP/daemon.log
IB_DAEMON_PID=
IB_BG_PIDS=
IB_HTTP_PORT=
IB_GRPC_PORT=
export IRONBELL_SOCKET="$IB_SOCK"
unset IRONBELL_TOKEN

_tap_n=0
_tap_failed=0

# ---- TAP ----

tap_plan() { echo "1..$1"; }
tap_done() { echo "1..$_tap_n"; }

diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

pass() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1"
}

fail() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $1"
	[ $# -gt 1 ] && diag "$2"
	return 0
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP ${2:-}"
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

bail_out() {
	echo "Bail out! $*"
	[ -f "$IB_LOG" ] && tail -n 30 "$IB_LOG" | diag "$(cat)"
	exit 1
}

# ok DESC CMD...: passes when CMD exits 0.
ok() {
	_d=$1
	shift
	if "$@"; then pass "$_d"; else fail "$_d" "command failed: $*"; fi
}

# is GOT WANT DESC
is() {
	if [ "$1" = "$2" ]; then
		pass "$3"
	else
		fail "$3" "got:  '$1'
want: '$2'"
	fi
}

# like TEXT ERE DESC: passes when some line of TEXT matches ERE.
like() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		pass "$3"
	else
		fail "$3" "no line matches /$2/ in:
$1"
	fi
}

# unlike TEXT ERE DESC: passes when no line of TEXT matches ERE.
unlike() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		fail "$3" "a line matches /$2/ in:
$1"
	else
		pass "$3"
	fi
}

# run CMD...: runs CMD (at most IB_CMD_TIMEOUT seconds) and sets $rc,
# $out (stdout) and $err (stderr).
IB_CMD_TIMEOUT=${IB_CMD_TIMEOUT:-60}
run() {
	timeout -k 5 "$IB_CMD_TIMEOUT" "$@" >"$IB_TMP/run.out" 2>"$IB_TMP/run.err"
	rc=$?
	out=$(cat "$IB_TMP/run.out")
	err=$(cat "$IB_TMP/run.err")
}

# ib ARGS...: runs the client like run.
ib() { run "$IRONBELL" "$@"; }

# ---- processes ----

# ib_alive PID: true while PID runs (a zombie counts as dead: PID 1 on
# these machines may not reap, and kill -0 succeeds on a zombie).
ib_alive() {
	[ -r "/proc/$1/stat" ] || return 1
	_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$_st" ] && [ "$_st" != Z ] && [ "$_st" != X ]
}

# ib_bg PID: registers a background process to kill at exit.
ib_bg() { IB_BG_PIDS="$IB_BG_PIDS $1"; }

# ib_kill PID [TIMEOUT]: SIGTERM, then SIGKILL after TIMEOUT seconds (10).
ib_kill() {
	_pid=$1
	_lim=$(( ${2:-10} * 10 ))
	kill -TERM "$_pid" 2>/dev/null
	_i=0
	while ib_alive "$_pid" && [ $_i -lt $_lim ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	ib_alive "$_pid" && kill -KILL "$_pid" 2>/dev/null
	wait "$_pid" 2>/dev/null
	IB_KILL_STATUS=$?
	return 0
}

# wait_for SECONDS CMD...: retries CMD every 0.1 s until it succeeds or
# SECONDS have passed. Returns CMD's last status.
wait_for() {
	_lim=$(($1 * 10))
	shift
	_i=0
	while :; do
		"$@" && return 0
		_i=$((_i + 1))
		[ $_i -ge $_lim ] && return 1
		sleep 0.1
	done
}

# file_has FILE ERE: FILE has a line matching ERE.
file_has() { grep -Eq -- "$2" "$1" 2>/dev/null; }

# ---- the daemon ----

# ib_free_port [udp]: prints a TCP (or, with udp, a UDP) port free on
# 127.0.0.1 right now. It is drawn at random below the kernel's ephemeral
# range (ip_local_port_range), so that no client socket of another test,
# which takes its local port from that range, can be given it between
# this pick and the server's bind; ib_start_daemon also picks again when
# the daemon still finds its port taken.
ib_free_port() {
	_type=SOCK_STREAM _ssflag=t
	[ "${1:-}" = udp ] && _type=SOCK_DGRAM _ssflag=u
	for _py in /usr/bin/python3 python3; do
		if command -v "$_py" >/dev/null 2>&1; then
			"$_py" -c "import random, socket
try:
    lo = int(open('/proc/sys/net/ipv4/ip_local_port_range').read().split()[0])
except (OSError, ValueError, IndexError):
    lo = 32768
hi = max(lo - 1, 10001)
for _ in range(200):
    p = random.randint(10000, hi)
    s = socket.socket(socket.AF_INET, socket.$_type)
    try:
        s.bind(('127.0.0.1', p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    raise SystemExit(0)
raise SystemExit(1)" && return 0
		fi
	done
	# Fallback: a port from the pid, checked with ss.
	_p=$((20000 + $$ % 12000))
	_i=0
	while [ $_i -lt 100 ]; do
		ss -Hl${_ssflag}n "sport = :$_p" 2>/dev/null | grep -q . || { echo "$_p"; return 0; }
		_p=$((_p + 1))
		_i=$((_i + 1))
	done
	return 1
}

# ib_write_config [EXTRA_YAML]: writes $IB_CONFIG for a private daemon.
# EXTRA_YAML is appended as is, after the http: section (top-level keys
# other than those below, or more lines of http: indented by two spaces);
# $IB_API_EXTRA, when set, holds more lines of the api: section (each
# indented by two spaces), $IB_GRPC_EXTRA the same of the grpc: section.
# The worker API listens on a free port ($IB_GRPC_PORT), not on :42113,
# so that tests running at once do not meet there.
ib_write_config() {
	mkdir -p "$IB_STATE" || return 1
	IB_CONFIG_AUTO=
	# Both ports picked here: ib_start_daemon may pick them again and put
	# the new ones in the configuration.
	[ -z "$IB_HTTP_PORT" ] && [ -z "$IB_GRPC_PORT" ] && IB_CONFIG_AUTO=1
	[ -n "$IB_HTTP_PORT" ] || IB_HTTP_PORT=$(ib_free_port) || return 1
	[ -n "$IB_GRPC_PORT" ] || IB_GRPC_PORT=$(ib_free_port) || return 1
	cat >"$IB_CONFIG" <<EOF
log_level: debug
state_dir: $IB_STATE
api:
  socket: $IB_SOCK
${IB_API_EXTRA:-}
grpc:
  listen: 127.0.0.1:$IB_GRPC_PORT
${IB_GRPC_EXTRA:-}
http:
  listen: 127.0.0.1:$IB_HTTP_PORT
${1:-}
EOF
}

ib_ready() {
	curl -sf --max-time 2 --unix-socket "$IB_SOCK" http://localhost/readyz >/dev/null 2>&1
}

# ib_start_daemon [SECONDS]: starts ironbelld with $IB_CONFIG (written by
# ib_write_config when absent), after the words of $IB_DAEMON_WRAP when
# set, and waits until /readyz answers 200 on the socket, at most SECONDS
# (30). Returns 1, with the log as diagnostics, if it dies or does not get
# ready.
ib_start_daemon() {
	[ -f "$IB_CONFIG" ] || ib_write_config || return 1
	_try=0
	while :; do
		_from=$({ wc -c <"$IB_LOG"; } 2>/dev/null || echo 0)
		_ib_start_once "${1:-30}" && return 0
		# A port picked by ib_write_config can be taken by another
		# program between the pick and the daemon's bind: pick again.
		[ -z "$IB_DAEMON_PID" ] && [ -n "${IB_CONFIG_AUTO:-}" ] &&
			[ $_try -lt 3 ] &&
			tail -c +$((_from + 1)) "$IB_LOG" 2>/dev/null |
				grep -q 'Address already in use' || return 1
		_try=$((_try + 1))
		_oh=$IB_HTTP_PORT _og=$IB_GRPC_PORT
		IB_HTTP_PORT=$(ib_free_port) && IB_GRPC_PORT=$(ib_free_port) || return 1
		sed -i -e "s/127\.0\.0\.1:$_oh\$/127.0.0.1:$IB_HTTP_PORT/" \
			-e "s/127\.0\.0\.1:$_og\$/127.0.0.1:$IB_GRPC_PORT/" "$IB_CONFIG" || return 1
		diag "ports taken at start; again with http $IB_HTTP_PORT, grpc $IB_GRPC_PORT"
	done
}

_ib_start_once() {
	# $IB_DAEMON_WRAP (split into words) goes before the binary, e.g.
	# "ip netns exec NS" to run the daemon inside a network namespace; the
	# wrapper must exec the daemon, so that $! is the daemon's PID.
	${IB_DAEMON_WRAP:-} "$IRONBELLD" --config "$IB_CONFIG" >>"$IB_LOG" 2>&1 </dev/null &
	IB_DAEMON_PID=$!
	_lim=$(( $1 * 10 ))
	_i=0
	while [ $_i -lt $_lim ]; do
		if ! ib_alive "$IB_DAEMON_PID"; then
			wait "$IB_DAEMON_PID" 2>/dev/null
			diag "ironbelld exited at start ($?); its log:"
			tail -n 30 "$IB_LOG" | diag "$(cat)"
			IB_DAEMON_PID=
			return 1
		fi
		ib_ready && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	diag "ironbelld not ready after $1 s; its log:"
	tail -n 30 "$IB_LOG" | diag "$(cat)"
	return 1
}

# ib_stop_daemon: SIGTERM (SIGKILL after 15 s) and reap. Sets
# IB_DAEMON_STATUS to its exit status.
ib_stop_daemon() {
	[ -n "$IB_DAEMON_PID" ] || return 0
	ib_kill "$IB_DAEMON_PID" 15
	IB_DAEMON_STATUS=$IB_KILL_STATUS
	IB_DAEMON_PID=
}

# ib_log_clean: the daemon's log has no sanitizer report.
ib_log_clean() {
	! grep -Eq 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|ThreadSanitizer' "$IB_LOG" 2>/dev/null
}

# ib_crash_daemon: SIGKILL, no chance to clean up, and reap.
ib_crash_daemon() {
	[ -n "$IB_DAEMON_PID" ] || return 0
	kill -KILL "$IB_DAEMON_PID" 2>/dev/null
	wait "$IB_DAEMON_PID" 2>/dev/null
	IB_DAEMON_PID=
}

ib_cleanup() {
	for _p in $IB_BG_PIDS; do
		ib_alive "$_p" && kill -KILL "$_p" 2>/dev/null
	done
	ib_stop_daemon
	if [ -n "${IB_KEEP_TMP:-}" ] || { [ "$_tap_failed" -gt 0 ] && [ -n "${IB_KEEP_ON_FAIL:-}" ]; }; then
		echo "# kept $IB_TMP" >&2
	else
		rm -rf "$IB_TMP"
	fi
}
trap ib_cleanup EXIT
trap 'exit 1' INT TERM HUP
