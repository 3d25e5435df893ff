#!/bin/sh
# test_dhcp_pxe — ironbelld's boot decisions in reservation mode, seen on
# the wire: the scapy client (dhcp/pxe_client.py) in a namespace does
# DISCOVER and REQUEST as a PXE ROM, UEFI PXE, UEFI HTTP Boot, iPXE and
# Tinkerbell's iPXE script would (options 60, 77, 93, 94, 97), and each
# OFFER and ACK must carry the reserved address, the network options of
# the Hardware, and the boot file, siaddr and options 43, 60, 66, 67 of
# the table below. An unknown architecture and an unknown MAC get no
# reply (and the daemon counts why); a Hardware with allowPXE false gets
# /netboot-not-allowed; a client that is not netbooting gets an address
# without boot options; a reservation on a subnet that the server's
# interface does not carry gets no offer and a NAK, until the server has
# an address there too. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"

dhcp_require

ns_new SRV srv || bail_out "cannot make a namespace"
ns_new CLI cli || bail_out "cannot make a namespace"
ns_veth "$SRV" srv0 192.168.77.1/24 "$CLI" eth0 - || bail_out "cannot make a veth pair"

dhcp_daemon "$SRV" "  mode: reservation
  interfaces: [srv0]" || bail_out "ironbelld did not start"
PORT=$IB_HTTP_PORT
PUBLIC=192.168.77.1

HW_NTP=192.168.77.123
{
	hw_doc m1 02:00:00:00:00:01 192.168.77.21
	HW_ALLOW_PXE=false hw_doc m9 02:00:00:00:00:09 192.168.77.29
} >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "apply two Hardware (one with allowPXE false)"
wait_hosts 2 || bail_out "the server did not load the Hardware"

MAC=02:00:00:00:00:01
SCRIPT_URL="http://$PUBLIC:$PORT/ipxe/script/$MAC/auto.ipxe"
BINARY_URL="http://$PUBLIC:$PORT/ipxe/binary/$MAC/ipxe.efi"

# ---- the network options, once, for a client that is not netbooting ----

pxe "$CLI" -i eth0 --mac "$MAC" --request --wait 2
is "$(replies '[x["type"] for x in r]')" "['offer', 'ack']" "plain DORA: an OFFER, then an ACK"
is "$(replies '[(x["yiaddr"], x["server_id"], x["src"]) for x in r]')" \
	"[('192.168.77.21', '192.168.77.1', '192.168.77.1'), ('192.168.77.21', '192.168.77.1', '192.168.77.1')]" \
	"both carry the reserved address, from the server's address"
# code -> expected value (hex) in both the OFFER and the ACK.
want='{"1": "ffffff00", "3": "c0a84d01", "6": "c0a84d35", "12": "6d31",
 "15": "6578616d706c652e74657374", "119": "076578616d706c65047465737400",
 "28": "c0a84dff", "42": "c0a84d7b", "121": "100a63c0a84dfe",
 "51": "00000258", "58": "0000012c", "59": "0000020d", "54": "c0a84d01"}'
is "$(replies "[sorted((k, v, x['options'].get(k)) for k, v in json.loads('''$want''').items() if x['options'].get(k) != v) for x in r]")" \
	"[[], []]" "options 1 3 6 12 15 119 28 42 121 51 58 59 54 have the Hardware's values"
is "$(replies '[(x["file"], x["opt67"], x["opt43"], x["opt60"], x["siaddr"]) for x in r]')" \
	"[('', None, None, None, '0.0.0.0'), ('', None, None, None, '0.0.0.0')]" \
	"a client that is not netbooting gets no boot options"

# RFC 2131 §4.1: a client without an address that clears the broadcast
# flag gets its replies unicast to chaddr at yiaddr (a packet socket: it
# cannot answer ARP yet); one that sets the flag gets them broadcast.
is "$(replies '[(x["eth_dst"], x["dst"], x["dport"]) for x in r]')" \
	"[('$MAC', '192.168.77.21', 68), ('$MAC', '192.168.77.21', 68)]" \
	"broadcast flag clear: both replies unicast to chaddr and yiaddr, port 68"
pxe "$CLI" -i eth0 --mac "$MAC" --request --broadcast --wait 2
is "$(replies '[(x["type"], x["eth_dst"], x["dst"], x["dport"]) for x in r]')" \
	"[('offer', 'ff:ff:ff:ff:ff:ff', '255.255.255.255', 68), ('ack', 'ff:ff:ff:ff:ff:ff', '255.255.255.255', 68)]" \
	"broadcast flag set: both replies broadcast"

# ---- the boot table ----

# boot DESC ARCH VENDOR_CLASS USER_CLASS FILE SIADDR OPT66 OPT60 [MAC IP]:
# a DORA with those options; the OFFER and the ACK must both carry the
# address and FILE (header and option 67), SIADDR, 66, 60 and 43.
boot() {
	_d=$1
	_m=${9:-$MAC}
	_ip=${10:-192.168.77.21}
	_uc=
	[ -z "$4" ] || _uc="--user-class=$4"
	pxe "$CLI" -i eth0 --mac "$_m" --arch "$2" --vendor-class "$3" $_uc --request --wait 2
	_o66=None
	[ "$7" = - ] || _o66="'$7'"
	_o60=None
	[ "$8" = - ] || _o60="'$8'"
	_w="('$_ip', '$5', '$5', '$6', $_o66, $_o60, '060108ff')"
	is "$(replies '[x["type"] for x in r]')" "['offer', 'ack']" "$_d: OFFER and ACK"
	is "$(replies '[(x["yiaddr"], x["file"], x["opt67"], x["siaddr"], x["opt66"], x["opt60"], x["opt43"]) for x in r]')" \
		"[$_w, $_w]" "$_d: file $5, siaddr $6, 66 $7, 60 $8, 43 = 06 01 08 ff"
}

boot "x86 BIOS PXE (arch 0)" 0 PXEClient:Arch:00000:UNDI:002001 "" \
	undionly.kpxe "$PUBLIC" "$PUBLIC" -
boot "x64 UEFI PXE (arch 7)" 7 PXEClient:Arch:00007:UNDI:003016 "" \
	ipxe.efi "$PUBLIC" "$PUBLIC" -
boot "EBC UEFI PXE (arch 9)" 9 PXEClient:Arch:00009:UNDI:003016 "" \
	ipxe.efi "$PUBLIC" "$PUBLIC" -
boot "ARM64 UEFI PXE (arch 11)" 11 PXEClient:Arch:00011:UNDI:003016 "" \
	snp-arm64.efi "$PUBLIC" "$PUBLIC" -
boot "iPXE on BIOS (user class iPXE)" 0 PXEClient:Arch:00000:UNDI:002001 iPXE \
	"$SCRIPT_URL" "$PUBLIC" - -
boot "iPXE on UEFI (user class iPXE)" 7 PXEClient:Arch:00007:UNDI:003016 iPXE \
	"$SCRIPT_URL" "$PUBLIC" - -
boot "Tinkerbell's iPXE (user class Tinkerbell)" 7 PXEClient:Arch:00007:UNDI:003016 Tinkerbell \
	"$SCRIPT_URL" "$PUBLIC" - -
boot "iPXE on ARM64 (user class iPXE)" 11 PXEClient:Arch:00011:UNDI:003016 iPXE \
	"$SCRIPT_URL" "$PUBLIC" - -
boot "UEFI HTTP Boot (HTTPClient, arch 16)" 16 HTTPClient:Arch:00016:UNDI:003000 "" \
	"$BINARY_URL" "$PUBLIC" - HTTPClient
boot "arch 16 with a PXEClient vendor class" 16 PXEClient:Arch:00016:UNDI:003000 "" \
	"$BINARY_URL" "$PUBLIC" - HTTPClient
boot "iPXE over UEFI HTTP (HTTPClient, user class iPXE)" 16 HTTPClient:Arch:00016:UNDI:003000 iPXE \
	"$SCRIPT_URL" "$PUBLIC" - HTTPClient
boot "allowPXE false" 7 PXEClient:Arch:00007:UNDI:003016 "" \
	/netboot-not-allowed 0.0.0.0 - - 02:00:00:00:00:09 192.168.77.29

# ---- silence ----

# silent DESC WHY ARGS...: no reply within 2 s, and the daemon counted
# the request as ignored for WHY.
silent() {
	_d=$1
	_why=$2
	shift 2
	_before=$(metric "ironbell_dhcp_ignored_total{why=\"$_why\"}")
	pxe "$CLI" -i eth0 --wait 2 "$@"
	is "$(replies 'len(r)')" 0 "$_d: no reply"
	[ -z "$out" ] || diag "$out"
	_after=$(metric "ironbell_dhcp_ignored_total{why=\"$_why\"}")
	ok "$_d: counted as ignored, $_why ($_before -> $_after)" test "$_after" -gt "$_before"
}

silent "unknown arch 0x0055" unknown-arch --mac "$MAC" --arch 0x0055 \
	--vendor-class PXEClient:Arch:00085:UNDI:003016
silent "unknown MAC" unknown-mac --mac 02:00:00:00:00:99 --arch 7 \
	--vendor-class PXEClient:Arch:00007:UNDI:003016
silent "unknown MAC, not netbooting" unknown-mac --mac 02:00:00:00:00:98
unknown_log=$(grep -c 'no Hardware has this MAC' "$IB_LOG")
ok "unknown MACs are logged ($unknown_log lines)" test "$unknown_log" -ge 1

# ---- counters ----

is "$(metric 'ironbell_dhcp_sent_total{type="offer"}')" 14 "14 OFFERs counted"
is "$(metric 'ironbell_dhcp_sent_total{type="ack"}')" 14 "14 ACKs counted"
is "$(metric 'ironbell_dhcp_received_total{type="discover"}')" 17 "17 DISCOVERs counted"

# ---- a bulk apply: more Hardware than one page of the change log ----

# The server reads the change log a page (1000 changes) at a time between
# datagrams; 2500 in one apply must all reach its table.
awk 'BEGIN { for (i = 0; i < 2500; i++) {
	printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n"
	printf "metadata: {name: bulk-%04d, namespace: default}\nspec:\n  interfaces:\n", i
	printf "    - dhcp:\n        mac: \"02:00:00:10:%02x:%02x\"\n", int(i / 256), i % 256
	printf "        ip: {address: 10.90.%d.%d, netmask: 255.255.0.0}\n", int(i / 200), i % 200 + 10
} }' >"$IB_TMP/bulk.yaml"
ib apply -f "$IB_TMP/bulk.yaml"
is "$rc" 0 "apply 2500 Hardware at once"
ok "all 2502 reservations reach the server's table" wait_hosts 2502

# ---- the subnet check of directly attached clients ----

# Those reservations are on 10.90.0.0/16, which srv0 does not carry: a
# client asking on it is on the wrong network (RFC 2131 §4.3.2). Once the
# server has an address on that subnet too (one link, two subnets), the
# same client gets its address: the address change reaches the server by
# netlink, with no restart.
wrong0=$(metric 'ironbell_dhcp_ignored_total{why="wrong-subnet"}')
pxe "$CLI" -i eth0 --mac 02:00:00:10:09:c3 --request --wait 2
is "$(replies 'len(r)')" 0 "a reservation on a subnet srv0 does not carry: no offer"
wrong1=$(metric 'ironbell_dhcp_ignored_total{why="wrong-subnet"}')
ok "counted as wrong-subnet (${wrong0:-0} -> ${wrong1:-0})" test "${wrong1:-0}" -gt "${wrong0:-0}"
like "$(cat "$IB_LOG")" \
	'level=warn .*msg="discover from 02:00:00:10:09:c3 \(hardware default/bulk-2499\) on srv0: its address 10\.90\.12\.109 is on none of the interface.s subnets \(192\.168\.77\.0/24\); no reply"' \
	"the daemon says why, naming the interface and its subnets"
pxe "$CLI" -i eth0 --mac 02:00:00:10:09:c3 --init-reboot 10.90.12.109 --broadcast --wait 2
is "$(replies '[(x["type"], x["yiaddr"]) for x in r]')" "[('nak', '0.0.0.0')]" \
	"an INIT-REBOOT REQUEST for it there gets a NAK"
like "$(cat "$IB_LOG")" 'msg="NAK 10\.90\.12\.109 to 02:00:00:10:09:c3 .*nak-wrong-subnet' \
	"the NAK is logged with its reason"
ip -n "$SRV" addr add 10.90.0.1/16 dev srv0 || bail_out "cannot add a second address"
got=
for _ in 1 2 3 4 5; do
	pxe "$CLI" -i eth0 --mac 02:00:00:10:09:c3 --request --wait 2
	got=$(replies '[(x["type"], x["yiaddr"]) for x in r]')
	[ "$got" = "[]" ] || break
done
is "$got" "[('offer', '10.90.12.109'), ('ack', '10.90.12.109')]" \
	"with 10.90.0.1/16 on srv0 too, the last of them gets its address"

# ---- floods of REQUESTs ----

# flood TYPE ADDRESS COUNT WAIT: COUNT INIT-REBOOT REQUESTs in $MAC's name
# for ADDRESS, at once; each must get its TYPE (nak or ack), and the lines
# the daemon logs of them are counted: $sent_n replies of that type (by
# the metric), $lines_n log lines, and, after at most 10 more single
# REQUESTs a second apart, $sup_n new lines saying how many were held back
# (the next line let through after some were is preceded by that count).
flood() {
	_type=$1 _ip=$2 _count=$3 _wait=$4
	_TYPE=$(echo "$_type" | tr a-z A-Z)
	_pat="msg=\"$_TYPE $(echo "$_ip" | sed 's/\./\\./g') to $MAC"
	_sup='dhcp.*[0-9]+ similar lines suppressed'
	_s0=$(grep -Ec "$_sup" "$IB_LOG")
	_m0=$(metric "ironbell_dhcp_sent_total{type=\"$_type\"}")
	_l0=$(grep -c "$_pat" "$IB_LOG")
	pxe "$CLI" -i eth0 --mac "$MAC" --init-reboot "$_ip" --broadcast --count "$_count" --wait "$_wait"
	like "$out" "\"sent\": $_count" "a flood of $_count INIT-REBOOT REQUESTs for $_ip went out"
	sent_n=$(($(metric "ironbell_dhcp_sent_total{type=\"$_type\"}") - _m0))
	ok "each got its $_TYPE ($sent_n sent)" test "$sent_n" -ge $((_count / 2))
	lines_n=$(($(grep -c "$_pat" "$IB_LOG") - _l0))
	_i=0
	while [ $_i -lt 10 ] && [ "$(grep -Ec "$_sup" "$IB_LOG")" -le "$_s0" ]; do
		sleep 1
		pxe "$CLI" -i eth0 --mac "$MAC" --init-reboot "$_ip" --broadcast --wait 1
		_i=$((_i + 1))
	done
	sup_n=$(($(grep -Ec "$_sup" "$IB_LOG") - _s0))
}

# Anyone on the link can send REQUESTs for the wrong address in a reserved
# MAC's name: each gets its NAK, but the log lines about them are
# rate-limited (10, then one a second).
flood nak 192.168.77.99 300 3
ok "the NAKs' log lines are rate-limited: $lines_n for $sent_n NAKs" test "$lines_n" -le 30
ok "a later NAK line says how many were held back ($sup_n such lines)" test "$sup_n" -gt 0

# REQUESTs in a reserved MAC's name for its own address are ACKed from the
# lease on disk, at no other cost: their log lines go through a bucket
# wide enough for a rack that boots at once (500 lines), then 50 a second.
flood ack 192.168.77.21 2000 5
ok "the ACKs' log lines are rate-limited: $lines_n for $sent_n ACKs" test "$lines_n" -lt "$sent_n"
ok "the ACK lines held back are counted in the log ($sup_n lines say how many)" \
	test "$sup_n" -gt 0

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
