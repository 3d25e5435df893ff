#!/bin/sh
# test_privilege — ironbelld keeps no capability once its sockets are
# bound (daemon/privilege.c), and still serves DHCP, TFTP and a reload
# after the drop.
#
#   udh (eth0, 02:00:00:00:00:02) — veth — srv (br0 192.168.77.1, ironbelld)
#
# 1. Started as root by hand (no systemd): every thread's CapInh, CapPrm,
#    CapEff, CapBnd and CapAmb are zero and NoNewPrivs is 1; busybox udhcpc
#    (no broadcast flag: the reply goes out of the packet socket) gets its
#    reservation, curl fetches a file over TFTP (port 69, then a transfer
#    socket per request), and SIGHUP reloads.
# 2. Started as an unprivileged user with the unit's capabilities ambient
#    (setpriv, as the unit's AmbientCapabilities= does): it still binds
#    port 67 with SO_BINDTODEVICE, then holds nothing but the bounding set,
#    which it may not change (no CAP_SETPCAP). Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"

ns_require
have udhcpc || skip_all "busybox udhcpc is not installed"
have curl || skip_all "curl is not installed"

ZERO=0000000000000000

# caps_of PID FIELD: the FIELD (CapEff, ...) of every thread of PID, one
# "tid value" line each.
caps_of() {
	for _t in /proc/"$1"/task/*; do
		printf '%s %s\n' "${_t##*/}" "$(sed -n "s/^$2:[[:space:]]*//p" "$_t/status")"
	done
}

# all_are PID FIELD VALUE: every thread of PID has VALUE in FIELD.
all_are() {
	_bad=$(caps_of "$1" "$2" | awk -v v="$3" '$2 != v')
	[ -z "$_bad" ] && return 0
	diag "$2 of threads that differ: $_bad"
	return 1
}

ns_new SRV srv || bail_out "cannot make a namespace"
ns_new UDH udh || bail_out "cannot make a namespace"
ns_bridge "$SRV" br0 192.168.77.1/24 || bail_out "cannot make the bridge"
ns_veth "$SRV" p-udh - "$UDH" eth0 - || bail_out "cannot make a veth pair"
ns_port "$SRV" p-udh br0 || bail_out "cannot add a bridge port"
ip -n "$UDH" link set eth0 address 02:00:00:00:00:02

ROOT=$IB_TMP/tftp
mkdir -p "$ROOT" && head -c 200000 /dev/urandom >"$ROOT/boot.bin" ||
	bail_out "cannot make the TFTP root"
chmod 755 "$ROOT" && chmod 644 "$ROOT/boot.bin"

DAEMON_YAML="dhcp:
  enabled: true
  mode: reservation
  interfaces: [br0]
tftp:
  enabled: true
  listen: 0.0.0.0:69
ipxe:
  binary_dir: $ROOT"

# ==== 1. as root, by hand ====

run grep Cap /proc/self/status
like "$out" "^CapEff:[[:space:]]*0*[1-9a-f]" "the test runs with capabilities to drop"

ib_write_config "$DAEMON_YAML" || bail_out "cannot write the config"
IB_DAEMON_WRAP="ip netns exec $SRV" ib_start_daemon || bail_out "ironbelld did not start"
PID=$IB_DAEMON_PID
run grep Cap "/proc/$PID/status"
diag "$out"
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	is "$(sed -n "s/^$f:[[:space:]]*//p" "/proc/$PID/status")" "$ZERO" "root: $f is empty"
	ok "root: $f is empty in every thread" all_are "$PID" "$f" "$ZERO"
done
threads=$(ls "/proc/$PID/task" | wc -l)
ok "root: the daemon has several threads ($threads)" test "$threads" -gt 2
is "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' "/proc/$PID/status")" 1 "root: no_new_privs is set"
like "$(cat "$IB_LOG")" 'msg="dropped every capability \(held at start: =ep' \
	"root: the log says what was dropped"
unlike "$(cat "$IB_LOG")" 'no packet socket' "root: the packet socket was opened before the drop"

# DHCP after the drop: a reply unicast through the packet socket.
hw_apply m2 02:00:00:00:00:02 192.168.77.22 || bail_out "cannot apply the Hardware"
ok "the DHCP server's table holds the reservation" wait_hosts 1
udhcpc_run "$UDH" eth0 udh
is "$rc" 0 "DHCP after the drop: udhcpc obtained a lease"
[ "$rc" = 0 ] || diag "$(tail -n 20 "$IB_TMP/udh.log")"
is "$(envval udh ip)" 192.168.77.22 "DHCP after the drop: the reserved address"
ok "DHCP after the drop: the lease is on disk" wait_for 5 lease_is 02:00:00:00:00:02 "bound 192.168.77.22"

# TFTP after the drop: a transfer socket of its own, from port 69.
run timeout 60 ip netns exec "$UDH" curl -s --max-time 30 -o "$IB_TMP/got.bin" \
	tftp://192.168.77.1/boot.bin
is "$rc" 0 "TFTP after the drop: curl fetched boot.bin"
ok "TFTP after the drop: the same bytes" cmp -s "$ROOT/boot.bin" "$IB_TMP/got.bin"

# A reload after the drop re-reads the file and keeps running.
kill -HUP "$PID"
ok "SIGHUP after the drop: reloaded" wait_for 10 file_has "$IB_LOG" 'msg="reloaded '
ok "SIGHUP after the drop: still ready" ib_ready
is "$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$PID/status")" "$ZERO" "SIGHUP: still no capability"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "root: stops with status 0"

# A state directory that root may use only through CAP_DAC_OVERRIDE: the
# start stops there, rather than every new store reader failing later.
S2=$IB_TMP/other
mkdir -p "$S2" && chown nobody:nogroup "$S2" && chmod 700 "$S2" ||
	bail_out "cannot make nobody's state directory"
cat >"$IB_TMP/other.yaml" <<EOF
state_dir: $S2
api:
  socket: $IB_TMP/other.sock
http:
  listen: 127.0.0.1:$IB_HTTP_PORT
EOF
run "$IRONBELLD" -c "$IB_TMP/other.yaml"
is "$rc" 1 "root on nobody's 0700 state directory: exits 1 at start"
like "$err" "may no longer use $S2 \\(owner uid [0-9]+, mode 0700\\)" "and names the directory"

# ==== 2. as an unprivileged user with ambient capabilities ====

if ! command -v setpriv >/dev/null 2>&1 || ! setpriv --help 2>&1 | grep -q ambient-caps; then
	skip "unprivileged run" "setpriv with --ambient-caps is not installed"
	tap_done
	exit 0
fi
U=$IB_TMP/user
mkdir -p "$U/state" && chown -R nobody:nogroup "$U" && chmod 711 "$IB_TMP" ||
	bail_out "cannot make nobody's directory"
IB_SOCK=$U/api.sock
IB_STATE=$U/state
IB_CONFIG=$U/ironbell.yaml
export IRONBELL_SOCKET="$IB_SOCK"
: >"$IB_LOG.2" && IB_LOG=$IB_LOG.2
ib_write_config "$DAEMON_YAML" || bail_out "cannot write the config"
chmod 644 "$IB_CONFIG"
CAPS=+net_bind_service,+net_raw
IB_DAEMON_WRAP="ip netns exec $SRV setpriv --reuid=nobody --regid=nogroup --clear-groups
	--inh-caps=$CAPS --ambient-caps=$CAPS" ib_start_daemon ||
	bail_out "ironbelld did not start as nobody"
PID=$IB_DAEMON_PID
run grep Cap "/proc/$PID/status"
diag "$out"
is "$(stat -c %U "/proc/$PID")" nobody "user: runs as nobody"
for f in CapInh CapPrm CapEff CapAmb; do
	ok "user: $f is empty in every thread" all_are "$PID" "$f" "$ZERO"
done
bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)
ok "user: the bounding set is left as it was given (no CAP_SETPCAP)" \
	all_are "$PID" CapBnd "$bnd"
ok "user: DHCP port 67 is bound" udp_listens "$SRV" 67
like "$(cat "$IB_LOG")" 'held at start: cap_net_bind_service,cap_net_raw=eip' \
	"user: the log names the two ambient capabilities"
hw_apply m2 02:00:00:00:00:02 192.168.77.22 || bail_out "cannot apply the Hardware"
ok "user: the DHCP server's table holds the reservation" wait_hosts 1
udhcpc_run "$UDH" eth0 udh2
is "$(envval udh2 ip)" 192.168.77.22 "user: DHCP after the drop"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "user: stops with status 0"

ok "no sanitizer report in the daemon's logs" ib_log_clean
tap_done
