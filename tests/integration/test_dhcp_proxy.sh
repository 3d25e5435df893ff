#!/bin/sh
# test_dhcp_proxy — ironbelld as a ProxyDHCP server (dhcp.mode: proxy)
# beside dnsmasq, which leases the addresses. Three namespaces on a bridge:
# ironbelld's (the bridge, 192.168.77.1), dnsmasq's (192.168.77.2, a
# dynamic range .100-.150) and the clients'. A PXE client's DISCOVER gets
# two offers: the address from dnsmasq, with no boot file of ours, and the
# boot file from ironbelld, with no address, option 60 PXEClient, 43, 97
# echoed and 54 = ironbelld's address. After the client takes dnsmasq's
# address, a REQUEST to ironbelld's port 4011 gets an ACK with the boot
# file, sent back to the request's source address and port. A plain
# dhclient still gets its address from dnsmasq and nothing from ironbelld;
# a netboot client without Hardware gets nothing from it either, until
# the daemon restarts in auto-proxy mode, where it gets a boot file too.
# Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"

dhcp_require
[ -x /usr/sbin/dnsmasq ] || skip_all "dnsmasq (dnsmasq-base) is not installed"

ns_new SRV srv || bail_out "cannot make a namespace"
ns_new DNM dnm || bail_out "cannot make a namespace"
ns_new CLI cli || bail_out "cannot make a namespace"
ns_new DHC dhc || bail_out "cannot make a namespace"
ns_bridge "$SRV" br0 192.168.77.1/24 || bail_out "cannot make the bridge"
ns_veth "$SRV" p-dnm - "$DNM" eth0 192.168.77.2/24 || bail_out "cannot make a veth pair"
ns_veth "$SRV" p-cli - "$CLI" eth0 - || bail_out "cannot make a veth pair"
ns_veth "$SRV" p-dhc - "$DHC" eth0 - || bail_out "cannot make a veth pair"
for p in p-dnm p-cli p-dhc; do
	ns_port "$SRV" "$p" br0 || bail_out "cannot add a bridge port"
done
ip -n "$DHC" link set eth0 address 02:00:00:00:00:02

IB=192.168.77.1
DNSMASQ=192.168.77.2
MAC=02:00:00:00:00:01
GUID=00101112131415161718191a1b1c1d1e1f

dnsmasq_start "$DNM" eth0 --dhcp-range=192.168.77.100,192.168.77.150,255.255.255.0,600 ||
	bail_out "dnsmasq did not start"
dhcp_daemon "$SRV" "  mode: proxy
  interfaces: [br0]" || bail_out "ironbelld did not start"
PORT=$IB_HTTP_PORT

# Both machines have Hardware; in proxy mode its address is not used.
{
	hw_doc m1 "$MAC" 192.168.77.21
	hw_doc m2 02:00:00:00:00:02 192.168.77.22
} >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "apply two Hardware"
wait_hosts 2 || bail_out "the server did not load the Hardware"

PXE_ARGS="--arch 7 --vendor-class PXEClient:Arch:00007:UNDI:003016"

# ---- DISCOVER: two offers ----

pxe "$CLI" -i eth0 --mac "$MAC" $PXE_ARGS --wait 3
is "$(replies 'sorted((x["type"], x["server_id"]) for x in r)')" \
	"[('offer', '$IB'), ('offer', '$DNSMASQ')]" "a PXE DISCOVER gets two offers, from ironbelld and dnsmasq"
is "$(replies '[x["src"] for x in r if x["server_id"] == "'$IB'"]')" "['$IB']" \
	"ironbelld's offer comes from its address"
lease_ip=$(replies '[x["yiaddr"] for x in r if x["server_id"] == "'$DNSMASQ'"][0]' 2>/dev/null)
like "$lease_ip" '^192\.168\.77\.(1[0-4][0-9]|150)$' "dnsmasq's offer has an address from its range"
is "$(replies '[(x["file"], x["opt67"]) for x in r if x["server_id"] == "'$DNSMASQ'"]')" "[('', None)]" \
	"dnsmasq's offer has no boot file (none of ours)"
is "$(replies '[(x["yiaddr"], x["siaddr"], x["file"], x["opt67"], x["opt66"]) for x in r if x["server_id"] == "'$IB'"]')" \
	"[('0.0.0.0', '$IB', 'ipxe.efi', 'ipxe.efi', '$IB')]" \
	"ironbelld's offer: no address, the UEFI binary from siaddr and 66"
is "$(replies '[(x["opt60"], x["opt43"], x["opt97"]) for x in r if x["server_id"] == "'$IB'"]')" \
	"[('PXEClient', '060108ff', '$GUID')]" \
	"ironbelld's offer: 60 PXEClient, 43 = 06 01 08 ff, the client's 97 echoed"
is "$(replies '[sorted(set(x["options"]) & {"1", "3", "6", "51", "58", "59"}) for x in r if x["server_id"] == "'$IB'"]')" \
	"[[]]" "ironbelld's offer has no lease or network options"

# ---- the client takes dnsmasq's address (REQUEST on port 67) ----

not_for_proxy0=$(metric 'ironbell_dhcp_ignored_total{why="not-for-proxy"}')
pxe "$CLI" -i eth0 --mac "$MAC" $PXE_ARGS --request --server "$DNSMASQ" --wait 3
is "$(replies '[(x["type"], x["server_id"]) for x in r if x["stage"] == "request"]')" \
	"[('ack', '$DNSMASQ')]" "the REQUEST for dnsmasq's offer is ACKed by dnsmasq, and by no one else"
addr=$(replies '[x["yiaddr"] for x in r if x["type"] == "ack"][0]' 2>/dev/null)
like "$addr" '^192\.168\.77\.[0-9]+$' "the client has an address from dnsmasq ($addr)"
not_for_proxy1=$(metric 'ironbell_dhcp_ignored_total{why="not-for-proxy"}')
ok "ironbelld ignored the REQUEST on port 67 as not-for-proxy ($not_for_proxy0 -> $not_for_proxy1)" \
	test "$not_for_proxy1" -gt "$not_for_proxy0"

# ---- REQUEST to port 4011 ----

ns_addr "$CLI" eth0 "$addr/24"
for sport in 68 4011; do
	pxe "$CLI" -i eth0 --mac "$MAC" $PXE_ARGS --proxy-request "$IB" --ciaddr "$addr" --sport "$sport" --wait 3
	is "$(replies '[(x["type"], x["src"], x["sport"], x["dst"], x["dport"]) for x in r]')" \
		"[('ack', '$IB', 4011, '$addr', $sport)]" \
		"REQUEST to $IB:4011 from port $sport: an ACK from 4011 back to $addr:$sport"
	is "$(replies '[(x["yiaddr"], x["siaddr"], x["file"], x["opt67"], x["opt66"], x["opt60"], x["opt43"], x["opt97"], x["server_id"]) for x in r]')" \
		"[('0.0.0.0', '$IB', 'ipxe.efi', 'ipxe.efi', '$IB', 'PXEClient', '060108ff', '$GUID', '$IB')]" \
		"the ACK from port 4011 ($sport) carries the boot file, 60, 43, 97 and 54"
done

pxe "$CLI" -i eth0 --mac "$MAC" $PXE_ARGS --user-class iPXE --proxy-request "$IB" --ciaddr "$addr" --wait 3
is "$(replies '[(x["type"], x["file"], x["siaddr"]) for x in r]')" \
	"[('ack', 'http://$IB:$PORT/ipxe/script/$MAC/auto.ipxe', '$IB')]" \
	"iPXE through the proxy: the script URL"
pxe "$CLI" -i eth0 --mac "$MAC" --arch 16 --vendor-class HTTPClient:Arch:00016:UNDI:003000 \
	--proxy-request "$IB" --ciaddr "$addr" --wait 3
is "$(replies '[(x["type"], x["file"], x["opt60"]) for x in r]')" \
	"[('ack', 'http://$IB:$PORT/ipxe/binary/$MAC/ipxe.efi', 'HTTPClient')]" \
	"UEFI HTTP Boot through the proxy: the binary URL, 60 HTTPClient"

# ---- who gets nothing from ironbelld ----

unknown0=$(metric 'ironbell_dhcp_ignored_total{why="unknown-mac"}')
pxe "$CLI" -i eth0 --mac 02:00:00:00:00:77 $PXE_ARGS --wait 3
is "$(replies 'sorted(x["server_id"] for x in r)')" "['$DNSMASQ']" \
	"a netboot client without Hardware: only dnsmasq's offer (mode proxy, not auto-proxy)"
unknown1=$(metric 'ironbell_dhcp_ignored_total{why="unknown-mac"}')
ok "ironbelld counted it as unknown-mac ($unknown0 -> $unknown1)" test "$unknown1" -gt "$unknown0"

if have dhclient; then
	notnb0=$(metric 'ironbell_dhcp_ignored_total{why="not-netboot"}')
	dhclient_start "$DHC" eth0 dhc
	ok "dhclient: bound within 30 s" wait_for 30 file_has "$IB_TMP/dhc.env" '^reason=BOUND$'
	[ -f "$IB_TMP/dhc.env" ] || diag "$(tail -n 20 "$IB_TMP/dhc.log")"
	is "$(envval dhc server)" "$DNSMASQ" "dhclient: its lease is from dnsmasq"
	like "$(envval dhc ip)" '^192\.168\.77\.(1[0-4][0-9]|150)$' "dhclient: an address from dnsmasq's range"
	run ip -n "$DHC" -4 -o addr show dev eth0
	like "$out" " inet $(envval dhc ip)/24 " "dhclient: eth0 has it"
	like "$(cat "$IB_TMP/dnsmasq.leases")" "02:00:00:00:00:02 $(envval dhc ip) " "dnsmasq's lease file has it"
	notnb1=$(metric 'ironbell_dhcp_ignored_total{why="not-netboot"}')
	ok "ironbelld ignored dhclient's DISCOVER as not-netboot ($notnb0 -> $notnb1)" test "$notnb1" -gt "$notnb0"
	is "$(metric 'ironbell_dhcp_sent_total{type="ack"}')" 4 "ironbelld sent only the four proxy ACKs"
else
	skip "dhclient beside the proxy" "isc-dhcp-client is not installed"
fi

ib get leases -o json
is "$(printf '%s' "$out" | "$PY" -c 'import json, sys; print(len(json.load(sys.stdin)["items"]))')" 0 \
	"a proxy records no lease"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

# ---- auto-proxy: every netboot client, Hardware or not ----

dhcp_daemon "$SRV" "  mode: auto-proxy
  interfaces: [br0]" || bail_out "ironbelld did not start in auto-proxy mode"
wait_hosts 2 || bail_out "the server did not load the Hardware"
pxe "$CLI" -i eth0 --mac 02:00:00:00:00:77 $PXE_ARGS --wait 3
is "$(replies 'sorted((x["type"], x["server_id"]) for x in r)')" \
	"[('offer', '$IB'), ('offer', '$DNSMASQ')]" \
	"auto-proxy: a netboot client without Hardware gets ironbelld's offer too"
is "$(replies '[(x["yiaddr"], x["file"], x["siaddr"], x["opt60"], x["opt43"]) for x in r if x["server_id"] == "'$IB'"]')" \
	"[('0.0.0.0', 'ipxe.efi', '$IB', 'PXEClient', '060108ff')]" \
	"auto-proxy: no address, the binary for its architecture, 60 and 43"
pxe "$CLI" -i eth0 --mac 02:00:00:00:00:77 $PXE_ARGS --user-class iPXE --wait 3
is "$(replies '[x["file"] for x in r if x["server_id"] == "'$IB'"]')" \
	"['http://$IB:$PORT/ipxe/script/02:00:00:00:00:77/auto.ipxe']" \
	"auto-proxy: its iPXE gets the script URL of its MAC"
notnb0=$(metric 'ironbell_dhcp_ignored_total{why="not-netboot"}')
pxe "$CLI" -i eth0 --mac 02:00:00:00:00:78 --arch none --no-ndi --no-guid --wait 3
is "$(replies 'sorted(x["server_id"] for x in r)')" "['$DNSMASQ']" \
	"auto-proxy: a client that is not netbooting gets nothing from ironbelld"
notnb1=$(metric 'ironbell_dhcp_ignored_total{why="not-netboot"}')
ok "counted as not-netboot ($notnb0 -> $notnb1)" test "$notnb1" -gt "$notnb0"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM (auto-proxy)"
ok "no sanitizer report in the daemon's log (auto-proxy)" ib_log_clean

tap_done
