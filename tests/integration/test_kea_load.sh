#!/bin/sh
# test_kea_load — the Kea hook library (dhcp/kea/libdhcp_ironbell.so) as
# kea-dhcp4 loads it, with no network: no interface in Kea's
# configuration, a control socket to talk to it.
#
#  - the library exports the hook functions and nothing else, and every
#    library it needs is found;
#  - kea-dhcp4 -t accepts a configuration with the hook;
#  - good parameters load; each bad one (an unknown name, a bad address, a
#    bad port, a relative store path, the API without a token file) makes
#    kea-dhcp4 refuse its configuration, with the hook's message naming
#    the parameter in its log;
#  - a store that does not exist loads, with a warning;
#  - statistic-get-all lists every ironbell.* statistic;
#  - the "api" source, with an API that does not answer, loads with a
#    warning, reloads and shuts down the same;
#  - config-reload (twice) and SIGHUP unload and load the hook again; a
#    reload with bad parameters is refused and Kea goes on; kea-dhcp4
#    keeps answering and shuts down cleanly.
#
# A sanitizer build's library needs the sanitizer's runtime loaded first
# in kea-dhcp4, which is not built with it: kea_env (below) preloads the
# runtimes the library names, with leak detection off (Kea's own
# allocations at exit are not ours).
set -u

. "$top_srcdir/tests/lib.sh"

KEA=$(command -v kea-dhcp4) || skip_all "kea-dhcp4 (kea-dhcp4-server) is not installed"
HOOK=$top_builddir/dhcp/kea/libdhcp_ironbell.so
[ -f "$HOOK" ] || skip_all "the hook library was not built (configure --disable-kea-hook)"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

KEA_RUN=$IB_TMP/kea-run
mkdir -p "$KEA_RUN"

# $KEA_ENV CMD...: a script that execs CMD with Kea's pid and lock files in
# the test's directory and, when the hook library was built with a
# sanitizer, its runtimes preloaded (LD_PRELOAD) and leak detection off.
kea_preload=
for _lib in $(readelf -d "$HOOK" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(lib[a-z]*san\.so[.0-9]*\)\].*/\1/p'); do
	_path=$(${CC:-gcc} -print-file-name="$_lib")
	[ -f "$_path" ] && kea_preload="$kea_preload${kea_preload:+ }$_path"
done
KEA_ENV=$IB_TMP/kea-env
{
	echo '#!/bin/sh'
	echo "export KEA_PIDFILE_DIR='$KEA_RUN' KEA_LOCKFILE_DIR='$KEA_RUN'"
	if [ -n "$kea_preload" ]; then
		echo "export LD_PRELOAD='$kea_preload'"
		echo 'export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"'
	fi
	echo 'exec "$@"'
} >"$KEA_ENV"
chmod 755 "$KEA_ENV"
[ -n "$kea_preload" ] && diag "sanitizer runtimes preloaded: $kea_preload"

SOCK=$IB_TMP/kea.sock
# kea_config FILE PARAMETERS: a configuration with the hook given
# PARAMETERS (a JSON object), one subnet, no interface, the control
# socket $SOCK, logging at INFO to stdout.
kea_config() {
	cat >"$1" <<EOF
{ "Dhcp4": {
  "interfaces-config": { "interfaces": [ ] },
  "lease-database": { "type": "memfile", "persist": false },
  "control-socket": { "socket-type": "unix", "socket-name": "$SOCK" },
  "subnet4": [ { "id": 1, "subnet": "10.99.0.0/24",
                 "pools": [ { "pool": "10.99.0.100 - 10.99.0.200" } ] } ],
  "hooks-libraries": [ { "library": "$HOOK", "parameters": $2 } ],
  "loggers": [ { "name": "kea-dhcp4", "severity": "INFO",
                 "output_options": [ { "output": "stdout" } ] } ]
} }
EOF
}

# kea_cmd COMMAND: sends one command on the control socket; prints the
# answer's JSON (one line), or nothing.
kea_cmd() {
	"$PY" - "$SOCK" "$1" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(json.dumps({"command": sys.argv[2]}).encode())
buf = b""
for _ in range(10000):
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(json.dumps(json.loads(buf)))
EOF
}

# ironbell_stats: the names of the ironbell.* statistics, sorted, one a line.
ironbell_stats() {
	kea_cmd statistic-get-all | "$PY" -c '
import json, sys
a = json.load(sys.stdin)["arguments"]
print("\n".join(sorted(k for k in a if k.startswith("ironbell."))))'
}

# ---- the library ----

exported=$(nm -D --defined-only "$HOOK" | awk '{ print $3 }' | LC_ALL=C sort | tr '\n' ' ')
is "$exported" "command_processed dhcp4_srv_configured lease4_select load multi_threading_compatible pkt4_send unload version " \
	"the library exports the hook functions and nothing else"
run ldd "$HOOK"
unlike "$out" 'not found' "every library it needs is found"

# ---- kea-dhcp4 -t ----

kea_config "$IB_TMP/good.json" "{ \"store\": \"$IB_TMP/missing.db\", \"public-address\": \"10.99.0.1\" }"
run "$KEA_ENV" "$KEA" -t "$IB_TMP/good.json"
is "$rc" 0 "kea-dhcp4 -t accepts a configuration with the hook"
[ "$rc" = 0 ] || diag "$out$err"

# ---- bad parameters: kea-dhcp4 refuses its configuration ----

# refused NAME PARAMETERS: kea-dhcp4 -c with PARAMETERS exits with status
# 1 (not by an abort: Kea unloads a library whose load failed before it
# has made its host manager), and the hook's error names parameter NAME.
refused() {
	kea_config "$IB_TMP/bad.json" "$2"
	rm -f "$SOCK"
	run "$KEA_ENV" "$KEA" -c "$IB_TMP/bad.json"
	if [ "$rc" != 1 ]; then
		fail "parameters $2: kea-dhcp4 refuses them and exits with status 1" \
			"exit status $rc:
$(printf '%s\n' "$out$err" | tail -n 5)"
		return
	fi
	like "$out$err" "ERROR .*ironbell-hooks.* IRONBELL_ERROR .*parameter \"$1\"" \
		"parameters $2: kea-dhcp4 refuses them, the hook names \"$1\""
}
refused no-such-parameter '{ "no-such-parameter": 1 }'
refused public-address '{ "public-address": "10.99.0.300" }'
refused http-port '{ "http-port": 65536 }'
refused store '{ "store": "relative/ironbell.db" }'
refused api-token-file '{ "source": "api", "api-url": "https://127.0.0.1:7443" }'

# ---- kea-dhcp4 with the hook, for real ----

LOG=$IB_TMP/kea.log
rm -f "$SOCK"
"$KEA_ENV" "$KEA" -c "$IB_TMP/good.json" >"$LOG" 2>&1 &
KEA_PID=$!
ib_bg "$KEA_PID"
wait_for 20 test -S "$SOCK"
ok "kea-dhcp4 starts with the hook and opens its control socket" test -S "$SOCK"
ok "the hook is loaded" file_has "$LOG" 'HOOKS_LIBRARY_LOADED .*libdhcp_ironbell\.so'
wait_for 10 file_has "$LOG" 'WARN .*ironbell-hooks.*missing\.db'
ok "a store that does not exist loads, with a warning naming it" \
	file_has "$LOG" 'WARN .*ironbell-hooks.*missing\.db'

want="ironbell.answers.applied
ironbell.answers.error
ironbell.answers.malformed
ironbell.answers.mismatch
ironbell.answers.not-ours
ironbell.answers.not-ready
ironbell.answers.silent
ironbell.boot.explicit
ironbell.boot.http-boot
ironbell.boot.ipxe-script
ironbell.boot.none
ironbell.boot.not-allowed
ironbell.boot.pxe-binary
ironbell.hosts
ironbell.lookups
ironbell.ready
ironbell.time-us.le-10
ironbell.time-us.le-100
ironbell.time-us.le-1000
ironbell.time-us.le-20
ironbell.time-us.le-200
ironbell.time-us.le-30
ironbell.time-us.le-5
ironbell.time-us.le-50
ironbell.time-us.le-500
ironbell.time-us.le-5000
ironbell.time-us.le-75
ironbell.time-us.le-inf
ironbell.time-us.sum"
is "$(ironbell_stats)" "$want" "statistic-get-all lists every ironbell.* statistic"

# loads: how many times the log says the hook was loaded.
loads() { grep -c 'HOOKS_LIBRARY_LOADED .*libdhcp_ironbell\.so' "$LOG"; }
n0=$(loads)
for i in 1 2; do
	r=$(kea_cmd config-reload)
	like "$r" '"result": 0' "config-reload $i succeeds"
done
is "$(loads)" "$((n0 + 2))" "each config-reload loaded the hook again"
# A reload with bad parameters is refused, and Kea goes on (without the
# hook, as Kea leaves a library that failed to load); the next good one
# loads it again.
kea_config "$IB_TMP/good.json" '{ "http-port": 0 }'
r=$(kea_cmd config-reload)
like "$r" '"result": 1' "config-reload with bad parameters is refused"
ok "kea-dhcp4 runs after it" ib_alive "$KEA_PID"
kea_config "$IB_TMP/good.json" "{ \"store\": \"$IB_TMP/missing.db\", \"public-address\": \"10.99.0.1\" }"
r=$(kea_cmd config-reload)
like "$r" '"result": 0' "the next config-reload, with good parameters, succeeds"
n0=$(loads)
kill -HUP "$KEA_PID"
loaded_since() { [ "$(loads)" -gt "$1" ]; }
wait_for 10 loaded_since "$n0"
is "$(loads)" "$((n0 + 1))" "SIGHUP loaded the hook again"
ok "kea-dhcp4 runs after the reloads" ib_alive "$KEA_PID"
is "$(ironbell_stats)" "$want" "the statistics are there after the reloads"

# kea_shutdown WHAT: the shutdown command to the Kea of $KEA_PID and
# $LOG, which must unload the hook and exit with status 0.
kea_shutdown() {
	r=$(kea_cmd shutdown)
	like "$r" '"result": 0' "$1: kea-dhcp4 shuts down on command"
	_i=0
	while ib_alive "$KEA_PID" && [ $_i -lt 200 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	like "$(sed -n '/DHCP4_SHUTDOWN/,$p' "$LOG")" 'HOOKS_LIBRARY_CLOSED .*libdhcp_ironbell\.so' \
		"$1: kea-dhcp4 unloads the hook on its way out"
	if [ -n "$kea_preload" ] && ib_alive "$KEA_PID"; then
		# With ASan preloaded, a process in which any thread has called
		# strerror() hangs in libp11-kit's exit handler (freelocale()
		# waits on glibc's locale lock): the same with a ten-line program
		# and no ironbell code in it. Kea's exit is then not the hook's to
		# judge.
		kill -KILL "$KEA_PID"
		wait "$KEA_PID" 2>/dev/null
		skip "$1: kea-dhcp4 exits with status 0" "ASan preloaded: its exit hangs in libp11-kit"
	else
		wait "$KEA_PID"
		is "$?" 0 "$1: kea-dhcp4 exits with status 0"
	fi
}
kea_shutdown store
unlike "$(cat "$LOG")" 'ERROR: AddressSanitizer|runtime error:|Segmentation|Aborted|IRONBELL_ERROR (load|unload|pkt4_send|lease4_select)' \
	"no sanitizer report, crash or hook error in Kea's log"


# ---- the "api" source: its thread starts and stops with each load ----

echo token >"$IB_TMP/token"
chmod 600 "$IB_TMP/token"
kea_config "$IB_TMP/api.json" "{ \"api-url\": \"https://127.0.0.1:1\", \"api-token-file\": \"$IB_TMP/token\" }"
LOG=$IB_TMP/kea-api.log
rm -f "$SOCK"
"$KEA_ENV" "$KEA" -c "$IB_TMP/api.json" >"$LOG" 2>&1 &
KEA_PID=$!
ib_bg "$KEA_PID"
wait_for 20 test -S "$SOCK"
ok "api: kea-dhcp4 starts with the hook" test -S "$SOCK"
wait_for 10 file_has "$LOG" 'WARN .*ironbell-hooks.*127\.0\.0\.1'
ok "api: an API that does not answer loads, with a warning naming it" \
	file_has "$LOG" 'WARN .*ironbell-hooks.*127\.0\.0\.1'
r=$(kea_cmd config-reload)
like "$r" '"result": 0' "api: config-reload succeeds"
kea_shutdown api
unlike "$(cat "$LOG")" 'ERROR: AddressSanitizer|runtime error:|Segmentation|Aborted|IRONBELL_ERROR (load|unload|pkt4_send|lease4_select)' \
	"api: no sanitizer report, crash or hook error in Kea's log"

tap_done
[ "$_tap_failed" -eq 0 ]
