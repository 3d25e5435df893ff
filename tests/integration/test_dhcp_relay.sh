#!/bin/sh
# test_dhcp_relay — ironbelld's DHCP server behind a relay agent. Four
# namespaces, three subnets:
#
#   client (eth0, no address)  —  relay (r-down 192.168.77.1/24,
#   r-up 10.0.0.2/24, ISC dhcrelay)  —  server (s0 10.0.0.1/24, ironbelld,
#   routes back to 192.168.77.0/24 and 192.168.78.0/24 via the relay)
#   client2 (eth0, no address)  —  relay (r-down2 192.168.78.1/24)
#
# dhclient in the client's namespace gets the address its Hardware
# reserves on the client subnet, with the router and the static route,
# and option 54 is the server address the relay sent the request to. The
# reply went through giaddr: a tcpdump on the relay's upstream side sees
# the server's replies to 192.168.77.1 port 67, the daemon logs the ACK
# with via=192.168.77.1, and the scapy client sees giaddr in the replies
# the relay hands it (for a PXE client too, with its boot file). Behind
# the relay's second downstream interface, a client of the second subnet
# gets its own reservation there, and a machine whose reservation is on
# the first subnet gets no offer, and a NAK for that address (the wrong
# network, RFC 2131 §4.3.2). Prints TAP.
#
# IB_DHCP_PEER=dnsmasq puts dnsmasq (a static range for the client subnet
# and the same reservation) in the server's place: the rig's own check.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"

dhcp_require
PEER=${IB_DHCP_PEER:-ironbelld}
[ -x /usr/sbin/dhcrelay ] || skip_all "dhcrelay (isc-dhcp-relay) is not installed"
have dhclient || skip_all "dhclient (isc-dhcp-client) is not installed"
have tcpdump || skip_all "tcpdump is not installed"
[ "$PEER" = ironbelld ] || [ -x /usr/sbin/dnsmasq ] || skip_all "dnsmasq is not installed"

ns_new CLI cli || bail_out "cannot make a namespace"
ns_new REL rel || bail_out "cannot make a namespace"
ns_new SRV srv || bail_out "cannot make a namespace"
ns_new CL2 cl2 || bail_out "cannot make a namespace"
ns_veth "$CLI" eth0 - "$REL" r-down 192.168.77.1/24 || bail_out "cannot make a veth pair"
ns_veth "$CL2" eth0 - "$REL" r-down2 192.168.78.1/24 || bail_out "cannot make a veth pair"
ns_veth "$REL" r-up 10.0.0.2/24 "$SRV" s0 10.0.0.1/24 || bail_out "cannot make a veth pair"
ip -n "$SRV" route add 192.168.77.0/24 via 10.0.0.2 || bail_out "cannot add the route back"
ip -n "$SRV" route add 192.168.78.0/24 via 10.0.0.2 || bail_out "cannot add the route back"
ip -n "$CLI" link set eth0 address 02:00:00:00:00:01

SERVER=10.0.0.1
GIADDR=192.168.77.1
MAC=02:00:00:00:00:01

if [ "$PEER" = ironbelld ]; then
	dhcp_daemon "$SRV" "  mode: reservation
  interfaces: [s0]" || bail_out "ironbelld did not start"
	{
		hw_doc m1 "$MAC" 192.168.77.21
		hw_doc m2 02:00:00:00:00:02 192.168.77.22
		hw_doc m3 02:00:00:00:00:03 192.168.78.23
	} >"$IB_TMP/hw.yaml"
	ib apply -f "$IB_TMP/hw.yaml"
	is "$rc" 0 "apply three Hardware"
	wait_hosts 3 || bail_out "the server did not load the Hardware"
else
	dnsmasq_start "$SRV" s0 --dhcp-range=192.168.77.0,static,255.255.255.0,600 \
		$(dnsmasq_host_args m1 "$MAC" 192.168.77.21) \
		--dhcp-range=192.168.78.0,static,255.255.255.0,600 \
		$(dnsmasq_host_args m2 02:00:00:00:00:02 192.168.77.22) \
		$(dnsmasq_host_args m3 02:00:00:00:00:03 192.168.78.23) ||
		bail_out "dnsmasq did not start"
	ok "dnsmasq listens on port 67" udp_listens "$SRV" 67
fi

# What crosses the relay's upstream side, packet by packet (-U), as text.
ns_bg "$REL" timeout 120 tcpdump -v -n -l -U -i r-up udp port 67 >"$IB_TMP/tcpdump.txt" 2>"$IB_TMP/tcpdump.err"
ok "tcpdump listens on the relay's upstream side" \
	wait_for 10 file_has "$IB_TMP/tcpdump.err" 'listening on r-up'

ns_bg "$REL" /usr/sbin/dhcrelay -d -4 -pf "$IB_TMP/dhcrelay.pid" -id r-down -id r-down2 -iu r-up "$SERVER" \
	>"$IB_TMP/dhcrelay.log" 2>&1 </dev/null
relay_pid=$NS_PID
ok "dhcrelay runs" wait_for 10 udp_listens "$REL" 67
sleep 0.5
ok "dhcrelay is still running" ib_alive "$relay_pid"
[ -n "$(ip netns exec "$REL" ss -Hlun 'sport = :67')" ] || diag "$(cat "$IB_TMP/dhcrelay.log")"

# ---- dhclient through the relay ----

dhclient_start "$CLI" eth0 dhc
ok "dhclient: bound through the relay within 30 s" wait_for 30 file_has "$IB_TMP/dhc.env" '^reason=BOUND$'
[ -f "$IB_TMP/dhc.env" ] || diag "$(tail -n 20 "$IB_TMP/dhc.log"; tail -n 20 "$IB_TMP/dhcrelay.log")"
run ip -n "$CLI" -4 -o addr show dev eth0
like "$out" " inet 192\.168\.77\.21/24 " "dhclient: eth0 has the reserved address on the client subnet"
run ip -n "$CLI" -4 route show default
like "$out" "^default via $GIADDR dev eth0" "dhclient: default route via the relay (option 3)"
run ip -n "$CLI" -4 route show 10.99.0.0/16
like "$out" '^10\.99\.0\.0/16 via 192\.168\.77\.254 dev eth0' "dhclient: the static route (option 121)"
is "$(envval dhc server)" "$SERVER" "dhclient: option 54 is the address the relay sent to"
is "$(envval dhc hostname)" m1 "dhclient: host name"
run ip -n "$CLI" route get 10.0.0.1
is "$rc" 0 "the client can route to the server's subnet"

# ---- the replies went through giaddr ----

# tcpdump -v: the addresses on the second line of each packet, the
# fields (Gateway-IP) below.
has_reply() { file_has "$IB_TMP/tcpdump.txt" "$SERVER\.(67|bootps) > $GIADDR\.(67|bootps): BOOTP/DHCP, Reply"; }
ok "tcpdump on r-up: the server's replies go to giaddr $GIADDR port 67" wait_for 5 has_reply
like "$(cat "$IB_TMP/tcpdump.txt")" "10\.0\.0\.2\.(67|bootps) > $SERVER\.(67|bootps): BOOTP/DHCP, Request" \
	"tcpdump on r-up: the relay forwards the requests from its upstream address"
ngw=$(grep -c "Gateway-IP $GIADDR\$" "$IB_TMP/tcpdump.txt")
ok "tcpdump on r-up: requests and replies carry giaddr $GIADDR ($ngw packets)" test "$ngw" -ge 4
[ -s "$IB_TMP/tcpdump.txt" ] || diag "$(cat "$IB_TMP/tcpdump.err")"
if [ "$PEER" = ironbelld ]; then
	like "$(cat "$IB_LOG")" "msg=\"ACK 192\.168\.77\.21 to $MAC \(hardware default/m1\)\".* via=$GIADDR( |\$)" \
		"the daemon logged the ACK with via=$GIADDR"
	ok "ironbell get leases: bound to 192.168.77.21" wait_for 5 lease_is "$MAC" "bound 192.168.77.21"
fi

# ---- the second subnet, through the same relay ----

pxe "$CL2" -i eth0 --mac 02:00:00:00:00:03 --request --wait 3
is "$(replies '[(x["type"], x["yiaddr"], x["giaddr"]) for x in r]')" \
	"[('offer', '192.168.78.23', '192.168.78.1'), ('ack', '192.168.78.23', '192.168.78.1')]" \
	"a client of the second subnet gets its reservation there, through giaddr 192.168.78.1"
# Bound, it renews by unicast to the server (RFC 2131 §4.4.5): no relay,
# no giaddr, and the request arrives on the server's uplink, whose subnet
# is not the client's. The server trusts ciaddr (§4.3.2) and ACKs it.
ip -n "$CL2" addr add 192.168.78.23/24 dev eth0 || bail_out "cannot give the client its address"
ip -n "$CL2" route add 10.0.0.0/24 via 192.168.78.1 || bail_out "cannot add the client's route"
ip netns exec "$REL" sysctl -qw net.ipv4.ip_forward=1 || bail_out "cannot make the relay route"
pxe "$CL2" -i eth0 --mac 02:00:00:00:00:03 --renew "$SERVER" --ciaddr 192.168.78.23 --wait 3
is "$(replies '[(x["type"], x["yiaddr"], x["src"], x["dport"]) for x in r]')" \
	"[('ack', '192.168.78.23', '$SERVER', 68)]" \
	"its renewal, unicast past the relay to the server, gets an ACK from $SERVER"
ip -n "$CL2" addr flush dev eth0
ip -n "$CL2" route flush table main 2>/dev/null
if [ "$PEER" = ironbelld ]; then
	wrong0=$(metric 'ironbell_dhcp_ignored_total{why="wrong-subnet"}')
	pxe "$CL2" -i eth0 --mac 02:00:00:00:00:02 --wait 2
	is "$(replies 'len(r)')" 0 "a machine reserved on the first subnet gets no offer on the second"
	wrong1=$(metric 'ironbell_dhcp_ignored_total{why="wrong-subnet"}')
	ok "counted as wrong-subnet ($wrong0 -> $wrong1)" test "${wrong1:-0}" -gt "${wrong0:-0}"
	pxe "$CL2" -i eth0 --mac 02:00:00:00:00:02 --init-reboot 192.168.77.22 --broadcast --wait 3
	is "$(replies '[(x["type"], x["yiaddr"], x["giaddr"]) for x in r]')" \
		"[('nak', '0.0.0.0', '192.168.78.1')]" \
		"and a REQUEST for its address there gets a NAK: the wrong network"
	like "$(cat "$IB_LOG")" "msg=\"NAK 192\.168\.77\.22 to 02:00:00:00:00:02 .*nak-wrong-subnet" \
		"the NAK is logged with its reason"
	pxe "$CLI" -i eth0 --mac 02:00:00:00:00:02 --init-reboot 192.168.77.22 --broadcast --wait 3
	is "$(replies '[(x["type"], x["yiaddr"]) for x in r]')" "[('ack', '192.168.77.22')]" \
		"the same REQUEST on its own subnet gets an ACK"
fi

# ---- the scapy client through the relay: giaddr and a PXE boot file ----

pxe "$CLI" -i eth0 --mac 02:00:00:00:00:02 --arch 7 --vendor-class PXEClient:Arch:00007:UNDI:003016 \
	--request --wait 3
is "$(replies '[(x["type"], x["yiaddr"], x["giaddr"], x["server_id"]) for x in r]')" \
	"[('offer', '192.168.77.22', '$GIADDR', '$SERVER'), ('ack', '192.168.77.22', '$GIADDR', '$SERVER')]" \
	"a relayed DORA: OFFER and ACK of the reservation, giaddr $GIADDR, 54 = $SERVER"
is "$(replies '[x["src"] for x in r]')" "['$GIADDR', '$GIADDR']" "the relay handed them to the client"
if [ "$PEER" = ironbelld ]; then
	is "$(replies '[(x["file"], x["siaddr"], x["opt43"]) for x in r]')" \
		"[('ipxe.efi', '$SERVER', '060108ff'), ('ipxe.efi', '$SERVER', '060108ff')]" \
		"a relayed UEFI PXE client gets its boot file from the server's address"
	like "$(cat "$IB_LOG")" "msg=\"ACK 192\.168\.77\.22 to 02:00:00:00:00:02 .* via=$GIADDR( |\$)" \
		"that ACK is logged with via=$GIADDR too"
	unknown0=$(metric 'ironbell_dhcp_ignored_total{why="unknown-mac"}')
	pxe "$CLI" -i eth0 --mac 02:00:00:00:00:99 --wait 2
	is "$(replies 'len(r)')" 0 "an unknown MAC through the relay: no reply"
	unknown1=$(metric 'ironbell_dhcp_ignored_total{why="unknown-mac"}')
	ok "counted as unknown-mac ($unknown0 -> $unknown1)" test "$unknown1" -gt "$unknown0"
	like "$(cat "$IB_LOG")" "02:00:00:00:00:99: no Hardware has this MAC\".* via=$GIADDR" \
		"and logged with the relay's address"
	ib_stop_daemon
	is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
	ok "no sanitizer report in the daemon's log" ib_log_clean
fi

tap_done
