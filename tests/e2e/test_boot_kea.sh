#!/bin/sh
# test_boot_kea — a UEFI machine netboots with the site's own kea-dhcp4 as
# its DHCP server, ironbell's hook library (libdhcp_ironbell.so) loaded in
# it, and ironbelld serving only TFTP and HTTP (its DHCP server off). Kea's
# configuration holds a subnet on the test bridge, a pool, and nothing of
# the machine: its reserved address comes from the Hardware in ironbelld's
# store (the hook reads the store file), and so do its boot answers. OVMF's
# PXE client (vendor class PXEClient, arch 7) gets ipxe.efi's name from
# Kea+hook, fetches it over TFTP from ironbelld; that iPXE asks again
# (user class "iPXE"), gets the script URL, then the script, kernel and
# initrd over HTTP, and boots them. See tests/e2e/e2e.sh for the rig.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"

KEA_DHCP4=${KEA_DHCP4:-kea-dhcp4}
KEA_HOOK=$top_builddir/dhcp/kea/libdhcp_ironbell.so
KEA_CONF=$IB_TMP/kea-dhcp4.json
KEA_LOG=$IB_TMP/kea.log
KEA_LEASES=$IB_TMP/kea-leases4.csv
KEA_SOCK=$IB_TMP/kea.sock
KEA_PID=
KEA_PRELOAD=

command -v "$KEA_DHCP4" >/dev/null 2>&1 || skip_all "kea-dhcp4 is not installed (kea-dhcp4-server)"
[ -f "$KEA_HOOK" ] || skip_all "the hook library was not built (configure --disable-kea-hook)"
[ -f "$E2E_OVMF_CODE" ] || skip_all "OVMF is not installed (ovmf)"
command -v ss >/dev/null 2>&1 || skip_all "ss (iproute2) is not installed"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 is needed to talk to Kea's control socket"

# ironbelld's DHCP server off: Kea answers DHCP on the bridge. The rest of
# the rig's configuration (server_address: the public address of the
# script's URLs and grpc_authority) stays.
kea_dhcp_off() {
	sed -i '/^dhcp:/,/^[a-z]/ s/^  enabled: true$/  enabled: false/' "$IB_CONFIG" &&
		grep -A1 '^dhcp:' "$IB_CONFIG" | grep -q '^  enabled: false$'
}

# kea_cmd JSON: sends one command to Kea's control socket and prints the
# answer (bounded: 5 s).
kea_cmd() {
	/usr/bin/python3 - "$KEA_SOCK" "$1" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
buf = b""
while True:
    try:
        json.loads(buf)
        break
    except ValueError:
        pass
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(buf.decode())
EOF
}

# kea_stat NAME: prints the newest value of Kea's statistic NAME (empty
# when it has none).
kea_stat() {
	kea_cmd "{\"command\": \"statistic-get\", \"arguments\": {\"name\": \"$1\"}}" 2>/dev/null |
		/usr/bin/python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)
    print(r["arguments"][sys.argv[1]][0][0])
except (ValueError, KeyError, IndexError, TypeError):
    pass' "$1"
}

# kea_stat_is_positive NAME DESC: Kea's statistic NAME is above 0.
kea_stat_is_positive() {
	_v=$(kea_stat "$1")
	case $_v in
	'' | 0 | *[!0-9]*) fail "$2 ($1: '$_v')" ;;
	*) pass "$2 ($1: $_v)" ;;
	esac
}

# kea_listens: kea-dhcp4 holds UDP port 67 in the namespace.
kea_listens() {
	ip netns exec "$E2E_NS" ss -Hulnp 'sport = :67' 2>/dev/null | grep -q '"kea-dhcp4"'
}

# Ready when the hook has loaded the store (the Hardware is in it) and
# Kea has its socket on the bridge.
kea_ready() { [ "$(kea_stat ironbell.ready)" = 1 ] && kea_listens; }

# kea_carrier: keeps br0 running before QEMU opens the tap. A bridge has
# a carrier only while one of its ports has one, and the tap has none
# until QEMU attaches; kea-dhcp4 refuses to open a socket on an interface
# that is not running ("DHCPSRV_OPEN_SOCKET_FAIL ... is not running") and
# does not try again. A veth pair, both ends up, one end a port of br0,
# gives the bridge its carrier whatever the tap's state (bounded: 5 s).
kea_carrier() {
	ip -n "$E2E_NS" link add kc0 type veth peer name kc1 || return 1
	ip -n "$E2E_NS" link set kc1 up || return 1
	ns_port "$E2E_NS" kc0 br0 || return 1
	wait_for 5 sh -c "ip -n '$E2E_NS' link show br0 | grep -q LOWER_UP"
}

# kea_runtime: the sanitizer runtimes that a hook built with
# -fsanitize needs loaded first in kea-dhcp4 (empty otherwise).
kea_runtime() {
	_libs=
	for _l in $(ldd "$KEA_HOOK" 2>/dev/null | sed -n 's/^[[:space:]]*\(lib[a-z]*san\.so[^ ]*\) => \([^ ]*\) .*/\2/p'); do
		_libs="$_libs${_libs:+:}$_l"
	done
	printf '%s' "$_libs"
}

kea_write_config() {
	cat >"$KEA_CONF" <<EOF
{
  "Dhcp4": {
    "interfaces-config": { "interfaces": [ "br0" ] },
    "control-socket": { "socket-type": "unix", "socket-name": "$KEA_SOCK" },
    "lease-database": { "type": "memfile", "persist": true, "name": "$KEA_LEASES",
                        "lfc-interval": 0 },
    "valid-lifetime": 3600,
    "subnet4": [ {
      "id": 1,
      "subnet": "10.99.0.0/24",
      "pools": [ { "pool": "10.99.0.100 - 10.99.0.199" } ],
      "option-data": [ { "name": "routers", "data": "$E2E_SERVER" } ]
    } ],
    "hooks-libraries": [ {
      "library": "$KEA_HOOK",
      "parameters": { "store": "$IB_STATE/ironbell.db",
                      "public-address": "$E2E_SERVER",
                      "http-port": $IB_HTTP_PORT }
    } ],
    "loggers": [ {
      "name": "kea-dhcp4",
      "output_options": [ { "output": "$KEA_LOG" } ],
      "severity": "DEBUG",
      "debuglevel": 50
    } ]
  }
}
EOF
}

kea_start() {
	kea_write_config || return 1
	mkdir -p "$IB_TMP/kea-run" || return 1
	KEA_PRELOAD=$(kea_runtime)
	# Kea's own leaks at exit are not the hook's to report (a later
	# option overrides an earlier one).
	ip netns exec "$E2E_NS" env KEA_PIDFILE_DIR="$IB_TMP/kea-run" \
		KEA_LOCKFILE_DIR="$IB_TMP/kea-run" ${KEA_PRELOAD:+LD_PRELOAD=$KEA_PRELOAD} \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$KEA_DHCP4" -c "$KEA_CONF" >"$IB_TMP/kea.out" 2>&1 </dev/null &
	KEA_PID=$!
	ib_bg "$KEA_PID"
	_i=0
	while [ $_i -lt 300 ]; do
		ib_alive "$KEA_PID" || return 1
		kea_ready && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

kea_diag() {
	diag "kea-dhcp4's output: $(cat "$IB_TMP/kea.out" 2>/dev/null)"
	diag "kea-dhcp4's log tail:"
	tail -n 30 "$KEA_LOG" 2>/dev/null | diag "$(cat)"
}

E2E_BEFORE_DAEMON=kea_dhcp_off
e2e_setup
kea_carrier || bail_out "br0 has no carrier with a veth port on it"
kea_start || {
	kea_diag
	bail_out "kea-dhcp4 with the hook did not start, or the hook did not load the store"
}
pass "kea-dhcp4 runs with the hook, which has loaded ironbelld's store"

cp "$E2E_OVMF_VARS" "$IB_TMP/vars.fd"
e2e_boot kea -machine q35 \
	-drive "if=pflash,format=raw,readonly=on,file=$E2E_OVMF_CODE" \
	-drive "if=pflash,format=raw,file=$IB_TMP/vars.fd" \
	-fw_cfg name=opt/org.tianocore/IPv6PXESupport,string=n \
	-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC,romfile="
e2e_check kea
grep -aq 'IRONBELL-E2E-BOOTED' "$E2E_SERIAL" || kea_diag

# Kea answered, with the hook's decisions: the PXE binary to OVMF, the
# script's URL to iPXE (Kea's statistics), from the store's Hardware.
kea_stat_is_positive ironbell.answers.applied "kea: the hook's answers went out"
kea_stat_is_positive ironbell.boot.pxe-binary "kea: the hook gave OVMF the PXE binary"
kea_stat_is_positive ironbell.boot.ipxe-script "kea: the hook gave iPXE the script's URL"
file_has "$KEA_LOG" "kea-dhcp4\\.ironbell-hooks.* loaded from $IB_STATE/ironbell\\.db"
is "$?" 0 "kea: Kea's log has the hook's load of ironbelld's store"
# The reserved address, allocated and recorded by Kea itself.
file_has "$KEA_LEASES" "^$E2E_IP,$E2E_MAC,"
is "$?" 0 "kea: Kea's lease file holds $E2E_IP for the VM's MAC"
# ironbelld served the files.
file_has "$IB_LOG" "sent ipxe\.efi to $E2E_IP:[0-9]+: [0-9]+ bytes"
is "$?" 0 "kea: ipxe.efi went to the VM over TFTP from ironbelld"
file_has "$IB_LOG" "script served: mac=$E2E_MAC hardware=default/vm1 kind=default client=$E2E_IP"
is "$?" 0 "kea: then the per-machine script over HTTP"
file_has "$IB_LOG" "osie served: vmlinuz-x86_64 .* to $E2E_IP"
is "$?" 0 "kea: then the kernel"
# ironbelld's DHCP server was off: it never answered, and port 67 in the
# namespace is Kea's alone.
file_has "$IB_LOG" "subsystem=dhcp .*$E2E_MAC"
is "$?" 1 "kea: ironbelld's DHCP server never answered the VM"
owners=$(ip netns exec "$E2E_NS" ss -Hulnp 'sport = :67' 2>/dev/null | sed -n 's/.*users:(("\([^"]*\)".*/\1/p' | sort -u)
is "$owners" kea-dhcp4 "kea: only kea-dhcp4 listens on UDP port 67"

# Kea unloads the hook when it stops. Its exit status tells only without
# a sanitizer's runtime preloaded: with one, kea-dhcp4 hangs in its exit
# handlers (libp11-kit's, in freelocale), with the hook or without.
kill -TERM "$KEA_PID" 2>/dev/null
wait_for 15 file_has "$KEA_LOG" 'HOOKS_LIBRARY_CLOSED .*libdhcp_ironbell\.so'
is "$?" 0 "kea-dhcp4 unloads the hook when it stops"
if [ -z "$KEA_PRELOAD" ]; then
	ib_kill "$KEA_PID" 15
	is "$IB_KILL_STATUS" 0 "kea-dhcp4 exits cleanly"
else
	ib_kill "$KEA_PID" 1
	skip "kea-dhcp4 exits cleanly" "a sanitizer's runtime is preloaded (kea-dhcp4 then hangs at exit)"
fi
grep -Eq 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|ThreadSanitizer' "$IB_TMP/kea.out"
is "$?" 1 "no sanitizer report in kea-dhcp4's output"
file_has "$KEA_LOG" 'IRONBELL_ERROR'
is "$?" 1 "the hook logged no error in Kea's log"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
