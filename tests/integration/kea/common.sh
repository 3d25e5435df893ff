# common.sh — ISC kea-dhcp4 in a test's network namespace, with or
# without ironbell's hook library (POSIX sh, sourced after tests/lib.sh,
# tests/netns.sh and tests/integration/dhcp/common.sh, whose address plan,
# Hardware documents and clients the Kea tests share).
#
# Kea runs in the foreground inside the namespace, with a configuration
# generated into $KEA_DIR (under the test's $IB_TMP): one subnet,
# 192.168.77.0/24, a small pool of its own (.100 - .109) and its own
# options, different from every value hw_doc gives a Hardware (router
# .254, name server .99, domain kea.test, lease time 4000 s), so that an
# answer shows whose it is; raw sockets (a client without an address gets
# its reply unicast to chaddr); a memfile lease file written at once and
# never compacted; a control socket; its pid and lock files in $KEA_DIR;
# its log in $KEA_LOG, ironbell's hook logger at DEBUG. With the hook,
# the library's parameters point at the store of the test's ironbelld
# ($IB_STATE/ironbell.db), its public address and HTTP port.
#
#	kea_require             skip_all unless kea-dhcp4 is installed
#	kea_hook_built          true when the hook library is built
#	kea_start NS IFACE      writes the configuration and starts Kea on
#	                        IFACE inside NS (once IFACE has a carrier);
#	                        waits (bounded) until it answers on its
#	                        control socket and holds UDP port 67
#	kea_stop                SIGTERM (SIGKILL after 10 s); also at exit
#	kea_stop_checked        kea_stop, then TAP lines: the hook was
#	                        unloaded, Kea exited 0
#	kea_cmd COMMAND [ARGS]  a control command, like run ($rc, $out)
#	kea_stat NAME           a statistic's value ("none": absent)
#	kea_wait_stat SECONDS NAME VALUE
#	                        waits until NAME is VALUE
#	kea_leases              the lease file's rows, header left out
#	kea_lease_of MAC        "ADDRESS VALID_LIFETIME" of MAC's last row,
#	                        or "none"
#	kea_log_clean           no sanitizer report from Kea or the hook
#
# Settings, read by kea_start: KEA_HOOK (1: load the hook library),
# KEA_HOOK_PARAMS (more members of its "parameters", JSON, each line
# ending with a comma), KEA_SUBNET_EXTRA (more members of the subnet,
# same form), KEA_OPTIONS_EXTRA (more entries of the subnet's
# option-data, same form), KEA_THREADS (0: Kea's single-threaded
# default; N: N packet threads). The hook polls the store's change log
# every 100 ms.

KEA_DIR=$IB_TMP/kea
KEA_LOG=$KEA_DIR/kea.log
KEA_CONFIG=$KEA_DIR/kea-dhcp4.json
KEA_SOCK=$KEA_DIR/kea4.sock
KEA_LEASES=$KEA_DIR/leases4.csv
KEA_PID=
KEA_SANITIZED=
KEA_HOOK=${KEA_HOOK:-0}
KEA_HOOK_PARAMS=${KEA_HOOK_PARAMS:-}
KEA_SUBNET_EXTRA=${KEA_SUBNET_EXTRA:-}
KEA_OPTIONS_EXTRA=${KEA_OPTIONS_EXTRA:-}
KEA_THREADS=${KEA_THREADS:-0}
KEA_BIN=${KEA_BIN:-/usr/sbin/kea-dhcp4}
KEA_CTL=$top_srcdir/tests/integration/kea/kea_ctl.py
# The hook as the build tree holds it.
KEA_HOOK_SO=${KEA_HOOK_SO:-${top_builddir:-.}/dhcp/kea/libdhcp_ironbell.so}

# Kea's own values (see above); the pool is KEA_POOL_LO .. KEA_POOL_HI.
KEA_ROUTER=192.168.77.254
KEA_DNS=192.168.77.99
KEA_DOMAIN=kea.test
KEA_LIFETIME=4000
KEA_POOL_LO=100
KEA_POOL_HI=109

# Kea is stopped before the daemon and the namespaces (netns.sh's trap).
trap 'kea_stop; ib_cleanup; ns_cleanup' EXIT

kea_require() {
	[ -x "$KEA_BIN" ] || skip_all "kea-dhcp4 is not installed (package kea-dhcp4-server)"
}

kea_hook_built() { [ -f "$KEA_HOOK_SO" ]; }

# in_pool IP: IP is in Kea's pool.
in_pool() {
	case $1 in
	192.168.77.*) ;;
	*) return 1 ;;
	esac
	_h=${1##*.}
	[ "$_h" -ge "$KEA_POOL_LO" ] && [ "$_h" -le "$KEA_POOL_HI" ]
}

# _kea_hook_json: the hooks-libraries member (empty without the hook).
_kea_hook_json() {
	[ "$KEA_HOOK" = 1 ] || return 0
	cat <<EOF
    "hooks-libraries": [ {
      "library": "$KEA_HOOK_SO",
      "parameters": {
        $KEA_HOOK_PARAMS
        "store": "$IB_STATE/ironbell.db",
        "poll-interval-ms": 100,
        "public-address": "192.168.77.1",
        "http-port": $IB_HTTP_PORT
      }
    } ],
EOF
}

# kea_config IFACE: writes $KEA_CONFIG.
kea_config() {
	_mt=false
	[ "$KEA_THREADS" -gt 0 ] && _mt=true
	cat >"$KEA_CONFIG" <<EOF
{
  "Dhcp4": {
    "interfaces-config": { "interfaces": [ "$1" ], "dhcp-socket-type": "raw" },
    "control-socket": { "socket-type": "unix", "socket-name": "$KEA_SOCK" },
    "lease-database": { "type": "memfile", "name": "$KEA_LEASES",
                        "persist": true, "lfc-interval": 0 },
    "multi-threading": { "enable-multi-threading": $_mt,
                         "thread-pool-size": $KEA_THREADS, "packet-queue-size": 64 },
    "valid-lifetime": $KEA_LIFETIME,
    "renew-timer": 1000,
    "rebind-timer": 2000,
    "subnet4": [ {
      "id": 1,
      "subnet": "192.168.77.0/24",
      $KEA_SUBNET_EXTRA
      "pools": [ { "pool": "192.168.77.$KEA_POOL_LO - 192.168.77.$KEA_POOL_HI" } ],
      "option-data": [
        $KEA_OPTIONS_EXTRA
        { "name": "routers", "data": "$KEA_ROUTER" },
        { "name": "domain-name-servers", "data": "$KEA_DNS" },
        { "name": "domain-name", "data": "$KEA_DOMAIN" }
      ]
    } ],
$(_kea_hook_json)
    "loggers": [
      { "name": "kea-dhcp4", "severity": "INFO",
        "output_options": [ { "output": "$KEA_LOG", "flush": true } ] },
      { "name": "kea-dhcp4.ironbell-hooks", "severity": "DEBUG", "debuglevel": 99,
        "output_options": [ { "output": "$KEA_LOG", "flush": true } ] }
    ]
  }
}
EOF
}

# _kea_sanitizer_env: when the hook was built with the sanitizers, Kea
# (not built with them) must load their runtimes first: LD_PRELOAD of
# the libasan and libubsan the hook links, and reports written to files
# in $KEA_DIR (kea_log_clean reads them). Prints the env(1) arguments.
_kea_sanitizer_env() {
	[ "$KEA_HOOK" = 1 ] || return 0
	_libs=$(ldd "$KEA_HOOK_SO" 2>/dev/null | awk '$1 ~ /^lib(asan|ubsan)\.so/ && $3 ~ /^\// { print $3 }' |
		sort | tr '\n' ':')
	[ -n "$_libs" ] || return 0
	echo "LD_PRELOAD=${_libs%:}"
	# Kea's own allocations at exit are not the hook's: leaks are
	# checked by the hook's unit tests, not here.
	echo "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0:log_path=$KEA_DIR/sanitizer"
	echo "UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:print_stacktrace=1:log_path=$KEA_DIR/sanitizer"
}

# kea_cmd COMMAND [ARGUMENTS_JSON]: like run.
kea_cmd() { run "$PY" "$KEA_CTL" "$KEA_SOCK" "$@"; }

kea_answers() { "$PY" "$KEA_CTL" "$KEA_SOCK" version-get >/dev/null 2>&1; }

# kea_listens NS: kea-dhcp4 holds UDP port 67 in NS.
kea_listens() { ip netns exec "$1" ss -Hulnp 'sport = :67' 2>/dev/null | grep -q '"kea-dhcp4"'; }

# _kea_running NS IFACE: IFACE is up with a carrier. kea-dhcp4 opens no
# socket on an interface that is not running, and does not try again.
_kea_running() { ip -n "$1" link show "$2" 2>/dev/null | grep -q LOWER_UP; }

kea_start() {
	_ns=$1
	mkdir -p "$KEA_DIR" || return 1
	if ! wait_for 5 _kea_running "$_ns" "$2"; then
		diag "$2 in $_ns has no carrier: kea-dhcp4 would open no socket on it"
		return 1
	fi
	kea_config "$2" || return 1
	: >>"$KEA_LOG"
	KEA_SANITIZED=$(_kea_sanitizer_env)
	# Kea writes its pid file and lock file where these say (the
	# defaults are under /run and /var, the host's).
	ns_bg "$_ns" env KEA_PIDFILE_DIR="$KEA_DIR" KEA_LOCKFILE_DIR="$KEA_DIR" \
		$(_kea_sanitizer_env) "$KEA_BIN" -c "$KEA_CONFIG" >>"$KEA_DIR/kea.out" 2>&1 </dev/null
	KEA_PID=$NS_PID
	_i=0
	while [ $_i -lt 200 ]; do
		if ! ib_alive "$KEA_PID"; then
			wait "$KEA_PID" 2>/dev/null
			diag "kea-dhcp4 exited at start ($?):"
			diag "$(tail -n 20 "$KEA_DIR/kea.out" "$KEA_LOG")"
			KEA_PID=
			return 1
		fi
		kea_answers && kea_listens "$_ns" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	diag "kea-dhcp4 does not answer on its control socket, or holds no UDP port 67, after 20 s:"
	diag "$(tail -n 20 "$KEA_DIR/kea.out" "$KEA_LOG")"
	return 1
}

# kea_unloaded_at_shutdown: Kea's log says it closed the hook library
# after its shutdown began (it also closes it once at start, after
# checking the configuration: that close does not count).
kea_unloaded_at_shutdown() {
	awk '/DHCP4_SHUTDOWN/ { s = 1 } s && /HOOKS_LIBRARY_CLOSED/ { f = 1 } END { exit !f }' \
		"$KEA_LOG" 2>/dev/null
}
_kea_gone() { ! ib_alive "$KEA_PID" || kea_unloaded_at_shutdown; }

# With the sanitizers' runtimes preloaded, kea-dhcp4 deadlocks in its
# exit handlers (libp11-kit's destructor waits for glibc's locale lock),
# with the hook or without it: there, once Kea has shut down and
# unloaded the hook, it is killed.
kea_stop() {
	[ -n "$KEA_PID" ] || return 0
	if [ -n "$KEA_SANITIZED" ]; then
		kill -TERM "$KEA_PID" 2>/dev/null
		wait_for 10 _kea_gone
		ib_kill "$KEA_PID" 1
	else
		ib_kill "$KEA_PID" 10
	fi
	KEA_STATUS=$IB_KILL_STATUS
	KEA_PID=
}

# kea_stop_checked: kea_stop, and TAP lines: Kea unloaded the hook (when
# it had one), and exited 0 (not where the sanitizers make it hang, see
# above).
kea_stop_checked() {
	kea_stop
	if [ "$KEA_HOOK" = 1 ]; then
		ok "kea-dhcp4 unloads the hook on SIGTERM" kea_unloaded_at_shutdown
	fi
	if [ -n "$KEA_SANITIZED" ]; then
		skip "kea-dhcp4 exits 0 on SIGTERM" "with the sanitizers preloaded it hangs in its exit handlers"
	else
		is "$KEA_STATUS" 0 "kea-dhcp4 exits 0 on SIGTERM"
	fi
}

kea_stat() {
	"$PY" "$KEA_CTL" "$KEA_SOCK" --stat "$1" 2>/dev/null || echo error
}

kea_stat_is() { [ "$(kea_stat "$1")" = "$2" ]; }

kea_wait_stat() {
	wait_for "$1" kea_stat_is "$2" "$3" && return 0
	diag "statistic $2 is $(kea_stat "$2"), not $3"
	return 1
}

kea_leases() {
	sed 1d "$KEA_LEASES" 2>/dev/null
}

# The memfile columns: address, hwaddr, client_id, valid_lifetime,
# expire, subnet_id, fqdn_fwd, fqdn_rev, hostname, state, user_context.
kea_lease_of() {
	kea_leases | awk -F, -v m="$1" 'tolower($2) == tolower(m) { l = $1 " " $4 }
		END { print l == "" ? "none" : l }'
}

kea_log_clean() {
	! grep -Eqs 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:' \
		"$KEA_LOG" "$KEA_DIR/kea.out" "$KEA_DIR"/sanitizer.*
}
