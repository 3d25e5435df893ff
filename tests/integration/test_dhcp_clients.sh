#!/bin/sh
# test_dhcp_clients — ironbelld's DHCP server (reservation mode) against
# real clients, each in its own network namespace on a bridge in the
# server's namespace: ISC dhclient and busybox udhcpc each get the address
# their Hardware reserves, and their interface ends up configured with it,
# the router (option 3), the classless static routes (121), while the
# name server, host name, domain and search list (6, 12, 15, 119) reach
# their scripts; nmap's broadcast-dhcp-discover sees the offer of the
# reserved address for the reserved MAC, and nothing for an unknown MAC.
# udhcpc, run a second time, is handed the lease on disk for the time it
# has left (lease reuse).
# The clients never touch the host: their scripts, lease and pid files are
# the test's, and the host's /etc/resolv.conf and host name are checked
# unchanged. Prints TAP.
#
# IB_DHCP_PEER=dnsmasq runs the same clients and checks against dnsmasq
# with the same reservations instead of ironbelld (the daemon's own
# checks are skipped): a failure there is the rig's, not the daemon's.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"

dhcp_require
PEER=${IB_DHCP_PEER:-ironbelld}
case $PEER in
ironbelld | dnsmasq) ;;
*) bail_out "IB_DHCP_PEER must be ironbelld or dnsmasq" ;;
esac
[ "$PEER" = ironbelld ] || [ -x /usr/sbin/dnsmasq ] || skip_all "dnsmasq is not installed"
have dhclient || have udhcpc || have nmap || skip_all "none of dhclient, udhcpc, nmap is installed"

# What the clients must not change on the host.
host_name=$(uname -n)
resolv_sum=$(cat /etc/resolv.conf 2>/dev/null | cksum)

# ---- the network: a bridge in the server's namespace, one client
# namespace per client on it ----

ns_new SRV srv || bail_out "cannot make a namespace"
ns_bridge "$SRV" br0 192.168.77.1/24 || bail_out "cannot make the bridge"
for c in dhc udh nmp; do
	ns_new NS_$c "$c" || bail_out "cannot make a namespace"
	eval "_ns=\$NS_$c"
	ns_veth "$SRV" "p-$c" - "$_ns" eth0 - || bail_out "cannot make a veth pair"
	ns_port "$SRV" "p-$c" br0 || bail_out "cannot add a bridge port"
done
ip -n "$NS_dhc" link set eth0 address 02:00:00:00:00:01
ip -n "$NS_udh" link set eth0 address 02:00:00:00:00:02
# nmap's script needs an IPv4 address on its interface (docs/contributing.md,
# "Test peers").
ns_addr "$NS_nmp" eth0 192.168.77.200/24

# ---- the server ----

HOSTS="m1 02:00:00:00:00:01 192.168.77.21
m2 02:00:00:00:00:02 192.168.77.22
m3 02:00:00:00:00:03 192.168.77.23"

if [ "$PEER" = ironbelld ]; then
	dhcp_daemon "$SRV" "  mode: reservation
  interfaces: [br0]" || bail_out "ironbelld did not start"
	printf '%s\n' "$HOSTS" | while read -r n m a; do hw_doc "$n" "$m" "$a"; done >"$IB_TMP/hw.yaml"
	ib apply -f "$IB_TMP/hw.yaml"
	is "$rc" 0 "apply three Hardware"
	ok "the DHCP server's table holds the three reservations" wait_hosts 3
else
	set --
	while read -r n m a; do
		for x in $(dnsmasq_host_args "$n" "$m" "$a"); do set -- "$@" "$x"; done
	done <<EOF
$HOSTS
EOF
	# A static range: only reserved hosts get an address, as in
	# ironbelld's reservation mode.
	dnsmasq_start "$SRV" br0 --dhcp-range=192.168.77.0,static,255.255.255.0,600 "$@" ||
		bail_out "dnsmasq did not start"
	ok "dnsmasq listens on port 67" udp_listens "$SRV" 67
fi

# check_client TAG NS NAME MAC IP: what a client's script applied and saw.
check_client() {
	_t=$1
	_n=$2
	_name=$3
	_mac=$4
	_ip=$5
	run ip -n "$_n" -4 -o addr show dev eth0
	like "$out" " inet $_ip/24 " "$_t: eth0 has the reserved address $_ip/24"
	run ip -n "$_n" -4 route show default
	like "$out" "^default via 192\.168\.77\.1 dev eth0" "$_t: default route via the router of option 3"
	run ip -n "$_n" -4 route show 10.99.0.0/16
	like "$out" "^10\.99\.0\.0/16 via 192\.168\.77\.254 dev eth0" "$_t: the classless static route of option 121"
	is "$(envval "$_t" dns)" 192.168.77.53 "$_t: name server (option 6)"
	is "$(envval "$_t" hostname)" "$_name" "$_t: host name (option 12)"
	is "$(envval "$_t" domain)" example.test "$_t: domain (option 15)"
	like "$(envval "$_t" search)" '^example\.test\.?$' "$_t: search list (option 119)"
	is "$(envval "$_t" server)" 192.168.77.1 "$_t: server identifier (option 54)"
	is "$(envval "$_t" lease)" 600 "$_t: lease time (option 51)"
	if [ "$PEER" = ironbelld ]; then
		ok "$_t: ironbell get leases shows the lease bound to $_ip" wait_for 5 lease_is "$_mac" "bound $_ip"
		like "$(cat "$IB_LOG")" "msg=\"ACK $_ip to $_mac \(hardware default/$_name\)\"" \
			"$_t: the daemon logged the ACK"
	fi
}

# ---- ISC dhclient ----

if have dhclient; then
	dhclient_start "$NS_dhc" eth0 dhc
	ok "dhclient: bound within 30 s" wait_for 30 file_has "$IB_TMP/dhc.env" '^reason=BOUND$'
	[ -f "$IB_TMP/dhc.env" ] || diag "$(tail -n 20 "$IB_TMP/dhc.log")"
	check_client dhc "$NS_dhc" m1 02:00:00:00:00:01 192.168.77.21
	like "$(cat "$IB_TMP/dhc.leases" 2>/dev/null)" 'fixed-address 192\.168\.77\.21;' \
		"dhclient: its own lease file (-lf) has the lease"
	ok "dhclient: its own pid file (-pf)" test -s "$IB_TMP/dhc.pid"
else
	skip "dhclient" "isc-dhcp-client is not installed"
fi

# ---- busybox udhcpc ----

if have udhcpc; then
	udhcpc_run "$NS_udh" eth0 udh
	is "$rc" 0 "udhcpc: obtained a lease and exited (-q)"
	[ "$rc" = 0 ] || diag "$(tail -n 20 "$IB_TMP/udh.log")"
	check_client udh "$NS_udh" m2 02:00:00:00:00:02 192.168.77.22
	if [ "$PEER" = ironbelld ]; then
		# udhcpc -q left without a RELEASE: run again, as the next
		# stage of a boot would, it is handed the same lease, for the
		# time it has left, and nothing is written (dhcp.lease_reuse).
		reused0=$(metric ironbell_dhcp_leases_reused_total)
		committed0=$(metric ironbell_dhcp_leases_committed_total)
		udhcpc_run "$NS_udh" eth0 udh2
		is "$rc" 0 "udhcpc again: obtained a lease"
		is "$(envval udh2 ip)" 192.168.77.22 "udhcpc again: the reserved address"
		left=$(envval udh2 lease)
		ok "udhcpc again: the time the lease has left, 450 to 600 s (got '$left')" \
			test "${left:-0}" -ge 450 -a "${left:-0}" -le 600
		is "$(metric ironbell_dhcp_leases_reused_total)" "$((reused0 + 1))" \
			"udhcpc again: the lease on disk was reused"
		is "$(metric ironbell_dhcp_leases_committed_total)" "$committed0" \
			"udhcpc again: nothing was written"
		run ip -n "$NS_udh" -4 -o addr show dev eth0
		like "$out" " inet 192\.168\.77\.22/24 " "udhcpc again: eth0 keeps the reserved address"
	fi
else
	skip "udhcpc" "busybox udhcpc is not installed"
fi

# ---- nmap broadcast-dhcp-discover ----

if have nmap; then
	[ "$PEER" = ironbelld ] && unknown0=$(metric 'ironbell_dhcp_ignored_total{why="unknown-mac"}')
	run ip netns exec "$NS_nmp" nmap -n -e eth0 --script broadcast-dhcp-discover \
		--script-args broadcast-dhcp-discover.mac=02:00:00:00:00:03,broadcast-dhcp-discover.timeout=5
	is "$rc" 0 "nmap: broadcast-dhcp-discover ran"
	like "$out" 'IP Offered: 192\.168\.77\.23$' "nmap: the reserved address is offered to the reserved MAC"
	like "$out" 'DHCP Message Type: DHCPOFFER$' "nmap: as a DHCPOFFER"
	like "$out" 'Server Identifier: 192\.168\.77\.1$' "nmap: from the server's address"
	like "$out" 'Router: 192\.168\.77\.1$' "nmap: with the router"
	like "$out" 'Domain Name Server: 192\.168\.77\.53$' "nmap: with the name server"
	printf '%s\n' "$out" | grep -q 'IP Offered' || diag "$out"
	run ip netns exec "$NS_nmp" nmap -n -e eth0 --script broadcast-dhcp-discover \
		--script-args broadcast-dhcp-discover.timeout=3
	is "$rc" 0 "nmap: ran again with its default MAC"
	unlike "$out" 'IP Offered' "nmap: an unknown MAC (nmap's DE:AD:C0:DE:CA:FE) is offered nothing"
	if [ "$PEER" = ironbelld ]; then
		unknown1=$(metric 'ironbell_dhcp_ignored_total{why="unknown-mac"}')
		ok "the daemon counted it as ignored, unknown-mac ($unknown0 -> $unknown1)" \
			test "$unknown1" -gt "$unknown0"
	fi
else
	skip "nmap" "nmap is not installed"
fi

# ---- nothing on the host changed ----

is "$(uname -n)" "$host_name" "the host name is unchanged"
is "$(cat /etc/resolv.conf 2>/dev/null | cksum)" "$resolv_sum" "the host's /etc/resolv.conf is unchanged"
if [ "$PEER" = ironbelld ]; then
	ok "no sanitizer report in the daemon's log" ib_log_clean
fi

tap_done
