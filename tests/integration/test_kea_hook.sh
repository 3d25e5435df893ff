#!/bin/sh
# test_kea_hook — ISC kea-dhcp4 with ironbell's hook library
# (libdhcp_ironbell.so) and a real ironbelld's store, in network
# namespaces: a bridge in the server's namespace, one client namespace per
# client on it.
#
# Hardware applied with `ironbell apply -f`: ISC dhclient and busybox
# udhcpc get the address the Hardware reserves (one outside Kea's pool,
# one inside it), and the subnet mask, router, classless routes, name
# server, host name, domain and lease time it sets, in place of Kea's own
# values; Kea's lease file holds their leases, for the Hardware's lease
# time. A MAC that no Hardware has gets an address from Kea's pool and
# Kea's options only. A Hardware applied while Kea runs is offered its
# address within a few seconds (the time is reported, not asserted); once
# deleted, its MAC is back to Kea's pool. Kea's statistic-get-all counts
# the hook's lookups and answers.
#
# Without the hook built (build/dhcp/kea/libdhcp_ironbell.so), Kea runs
# alone and only the checks of the rig itself (Kea's pool answers, its
# lease file, its control socket) run; the hook's are skipped. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"
. "$top_srcdir/tests/integration/kea/common.sh"

dhcp_require
kea_require
KEA_HOOK=0
kea_hook_built && KEA_HOOK=1
NOHOOK="the hook library is not built ($KEA_HOOK_SO)"

# hooked_ok DESC CMD...: ok DESC CMD..., skipped without the hook.
hooked_ok() {
	_d=$1
	shift
	if [ "$KEA_HOOK" = 1 ]; then ok "$_d" "$@"; else skip "$_d" "$NOHOOK"; fi
}

host_name=$(uname -n)
resolv_sum=$(cat /etc/resolv.conf 2>/dev/null | cksum)

# ---- the network ----

ns_new SRV srv || bail_out "cannot make a namespace"
ns_bridge "$SRV" br0 192.168.77.1/24 || bail_out "cannot make the bridge"
for c in dhc udh scp; do
	ns_new NS_$c "$c" || bail_out "cannot make a namespace"
	eval "_ns=\$NS_$c"
	ns_veth "$SRV" "p-$c" - "$_ns" eth0 - || bail_out "cannot make a veth pair"
	ns_port "$SRV" "p-$c" br0 || bail_out "cannot add a bridge port"
done
ip -n "$NS_dhc" link set eth0 address 02:00:00:00:00:01
ip -n "$NS_udh" link set eth0 address 02:00:00:00:00:02

# ---- ironbelld (its DHCP server off: Kea answers) and its Hardware ----

ib_start_daemon || bail_out "ironbelld did not start"
# m1 is outside Kea's pool, m2 inside it, m3 is asked by the scapy client.
{
	hw_doc m1 02:00:00:00:00:01 192.168.77.21
	hw_doc m2 02:00:00:00:00:02 192.168.77.105
	hw_doc m3 02:00:00:00:00:03 192.168.77.23
} >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "apply three Hardware"
in_pool 192.168.77.21 && bail_out "the address plan is wrong: .21 is in Kea's pool"
in_pool 192.168.77.105 || bail_out "the address plan is wrong: .105 is not in Kea's pool"

# ---- Kea ----

kea_start "$SRV" br0 || bail_out "kea-dhcp4 did not start"
pass "kea-dhcp4 starts$([ "$KEA_HOOK" = 1 ] && echo " with the hook") and answers on its control socket"
hooked_ok "the hook has loaded the store (ironbell.ready 1)" kea_wait_stat 10 ironbell.ready 1
hooked_ok "the hook's table holds the three Hardware (ironbell.hosts 3)" kea_wait_stat 10 ironbell.hosts 3

# check_client TAG NS NAME MAC IP: what a client's script applied and saw:
# everything the Hardware sets, nothing of Kea's own options.
check_client() {
	_t=$1 _n=$2 _name=$3 _mac=$4 _ip=$5
	run ip -n "$_n" -4 -o addr show dev eth0
	like "$out" " inet $_ip/24 " "$_t: eth0 has the reserved address $_ip/24"
	is "$(envval "$_t" mask)" "$HW_MASK" "$_t: subnet mask (option 1)"
	is "$(envval "$_t" router)" "$HW_GW" "$_t: the Hardware's router (option 3), not Kea's"
	run ip -n "$_n" -4 route show 10.99.0.0/16
	like "$out" "^10\.99\.0\.0/16 via 192\.168\.77\.254 dev eth0" "$_t: the classless static route (option 121)"
	is "$(envval "$_t" dns)" "$HW_DNS" "$_t: the Hardware's name server (option 6), not Kea's"
	is "$(envval "$_t" hostname)" "$_name" "$_t: host name (option 12)"
	is "$(envval "$_t" domain)" "$HW_DOMAIN" "$_t: the Hardware's domain (option 15), not Kea's"
	is "$(envval "$_t" lease)" "$HW_LEASE" "$_t: the Hardware's lease time (option 51), not Kea's"
	is "$(envval "$_t" server)" 192.168.77.1 "$_t: Kea's server identifier (option 54)"
	ok "$_t: Kea's lease file has $_mac at $_ip for $HW_LEASE s" \
		wait_for 5 lease_row_is "$_mac" "$_ip $HW_LEASE"
}
lease_row_is() { [ "$(kea_lease_of "$1")" = "$2" ]; }

# check_pool_client TAG: without the hook, the same client gets Kea's
# own answer (the rig's check: the clients and their scripts work here).
check_pool_client() {
	_t=$1
	_ip=$(envval "$_t" ip)
	ok "$_t (Kea alone): an address of Kea's pool ($_ip)" in_pool "$_ip"
	is "$(envval "$_t" router) $(envval "$_t" dns) $(envval "$_t" domain) $(envval "$_t" lease)" \
		"$KEA_ROUTER $KEA_DNS $KEA_DOMAIN $KEA_LIFETIME" \
		"$_t (Kea alone): Kea's router, name server, domain and lease time"
}

# ---- ISC dhclient: m1, outside the pool ----

if have dhclient; then
	dhclient_start "$NS_dhc" eth0 dhc
	ok "dhclient: bound within 30 s" wait_for 30 file_has "$IB_TMP/dhc.env" '^reason=BOUND$'
	[ -f "$IB_TMP/dhc.env" ] || diag "$(tail -n 20 "$IB_TMP/dhc.log")"
	if [ "$KEA_HOOK" = 1 ]; then
		check_client dhc "$NS_dhc" m1 02:00:00:00:00:01 192.168.77.21
	else
		check_pool_client dhc
	fi
else
	skip "dhclient" "isc-dhcp-client is not installed"
fi

# ---- busybox udhcpc: m2, inside the pool ----

if have udhcpc; then
	udhcpc_run "$NS_udh" eth0 udh
	is "$rc" 0 "udhcpc: obtained a lease and exited (-q)"
	[ "$rc" = 0 ] || diag "$(tail -n 20 "$IB_TMP/udh.log")"
	if [ "$KEA_HOOK" = 1 ]; then
		check_client udh "$NS_udh" m2 02:00:00:00:00:02 192.168.77.105
	else
		check_pool_client udh
	fi
else
	skip "udhcpc" "busybox udhcpc is not installed"
fi

# ---- a MAC that no Hardware has: Kea's own answer ----

KEA_WANT="{'1': 'ffffff00', '3': 'c0a84dfe', '6': 'c0a84d63', '15': '6b65612e74657374', '51': '00000fa0'}"
[ "$KEA_HOOK" = 1 ] && n0=$(kea_stat ironbell.answers.not-ours)
pxe "$NS_scp" -i eth0 --mac 02:00:00:00:00:99 --request --wait 2
is "$(replies '[x["type"] for x in r]')" "['offer', 'ack']" "unknown MAC: an OFFER, then an ACK"
unknown_ip=$(replies 'r[-1]["yiaddr"] if r else ""')
ok "unknown MAC: an address from Kea's pool ($unknown_ip)" in_pool "$unknown_ip"
is "$(replies "[sorted((k, v, x['options'].get(k)) for k, v in $KEA_WANT.items() if x['options'].get(k) != v) for x in r]")" \
	"[[], []]" "unknown MAC: Kea's mask, router, name server, domain and lease time"
is "$(replies '[[k for k in ("12", "121", "43", "66", "67") if k in x["options"]] for x in r]')" \
	"[[], []]" "unknown MAC: none of ironbell's options (12, 121) and no boot options"
ok "Kea's lease file has the unknown MAC's lease at $unknown_ip" \
	wait_for 5 lease_row_is 02:00:00:00:00:99 "$unknown_ip $KEA_LIFETIME"
if [ "$KEA_HOOK" = 1 ]; then
	n1=$(kea_stat ironbell.answers.not-ours)
	ok "the hook counted it as not ours ($n0 -> $n1)" test "${n1#none}" -ge $((${n0#none} + 2))
fi
ok "Kea's statistics count the DORA (pkt4-ack-sent $(kea_stat pkt4-ack-sent))" \
	test "$(kea_stat pkt4-ack-sent)" -ge 1

# ---- m3 with the scapy client: the hook's statistics ----

if [ "$KEA_HOOK" = 1 ]; then
	l0=$(kea_stat ironbell.lookups)
	a0=$(kea_stat ironbell.answers.applied)
	t0=$(kea_stat ironbell.time-us.le-inf)
	pxe "$NS_scp" -i eth0 --mac 02:00:00:00:00:03 --request --wait 2
	is "$(replies '[(x["type"], x["yiaddr"]) for x in r]')" \
		"[('offer', '192.168.77.23'), ('ack', '192.168.77.23')]" "m3: OFFER and ACK of its reserved address"
	is "$(replies '[(x["options"].get("3"), x["options"].get("12"), x["options"].get("51")) for x in r]')" \
		"[('c0a84d01', '6d33', '00000258'), ('c0a84d01', '6d33', '00000258')]" \
		"m3: its router, host name and lease time in both"
	l1=$(kea_stat ironbell.lookups)
	a1=$(kea_stat ironbell.answers.applied)
	ok "statistic ironbell.lookups counts the OFFER and the ACK ($l0 -> $l1)" \
		test "${l1#none}" -ge $((${l0#none} + 2))
	is "$((${a1#none} - ${a0#none}))" 2 "statistic ironbell.answers.applied counts both ($a0 -> $a1)"
	t1=$(kea_stat ironbell.time-us.le-inf)
	ok "statistic ironbell.time-us.le-inf counts the OFFER and the ACK ($t0 -> $t1)" \
		test "${t1#none}" -ge $((${t0#none} + 2))
	# The histogram's buckets are cumulative: each at least the one
	# below, the last one all; and the exchanges took some time.
	prev=0 hist=
	for le in 5 10 20 30 50 75 100 200 500 1000 5000 inf; do
		v=$(kea_stat "ironbell.time-us.le-$le")
		hist="$hist $le:$v"
		[ "${v#none}" -ge "$prev" ] 2>/dev/null || prev=bad
		[ "$prev" = bad ] && break
		prev=${v#none}
	done
	ok "the buckets of ironbell.time-us grow to le-inf ($hist)" test "$prev" = "${t1#none}"
	tsum=$(kea_stat ironbell.time-us.sum)
	ok "statistic ironbell.time-us.sum is the exchanges' µs in the library ($tsum)" \
		test "${tsum#none}" -ge 1
	kea_cmd statistic-get-all
	like "$out" '"ironbell\.lookups"' "statistic-get-all lists ironbell.lookups"
	like "$out" '"ironbell\.answers\.applied"' "statistic-get-all lists ironbell.answers.applied"
	like "$out" '"ironbell\.time-us\.le-100"' "statistic-get-all lists ironbell.time-us.le-100"
else
	skip "the hook's statistics" "$NOHOOK"
fi

# ---- a Hardware applied while Kea runs ----

M4=02:00:00:00:00:04
if [ "$KEA_HOOK" = 1 ]; then
	hw_doc m4 "$M4" 192.168.77.24 >"$IB_TMP/hw-m4.yaml"
	# The watcher's DISCOVERs go out every 0.1 s from before the apply;
	# the clock starts once its socket is open.
	rm -f "$IB_TMP/watch.ready"
	timeout -k 5 30 ip netns exec "$NS_scp" "$PY" "$top_srcdir/tests/integration/kea/pxe_compare.py" \
		-i eth0 --watch-offer 192.168.77.24 --mac "$M4" --wait 10 --ready "$IB_TMP/watch.ready" \
		>"$IB_TMP/watch.out" 2>"$IB_TMP/watch.err" &
	watch_pid=$!
	ib_bg "$watch_pid"
	wait_for 10 test -f "$IB_TMP/watch.ready" || diag "the watcher did not start: $(cat "$IB_TMP/watch.err")"
	t0=$("$PY" -c 'import time; print(time.time())')
	ib apply -f "$IB_TMP/hw-m4.yaml"
	is "$rc" 0 "apply m4 while Kea runs"
	wait "$watch_pid"
	at=$("$PY" -c 'import json, sys; print(json.load(sys.stdin)["offer_at"])' <"$IB_TMP/watch.out" 2>/dev/null)
	if [ -n "$at" ] && [ "$at" != None ]; then
		pass "m4 is offered 192.168.77.24 within 10 s of the apply"
		diag "m4's first OFFER of its reserved address came $("$PY" -c "print('%.3f' % ($at - $t0))") s after the apply started"
	else
		fail "m4 is offered 192.168.77.24 within 10 s of the apply" "$(cat "$IB_TMP/watch.out" "$IB_TMP/watch.err")"
	fi
	# Deleted: Kea's pool again, without the Hardware's options.
	ib delete hardware m4
	is "$rc" 0 "delete m4 while Kea runs"
	back_to_pool() {
		pxe "$NS_scp" -i eth0 --mac "$M4" --wait 0.5
		_ip=$(replies 'r[0]["yiaddr"] if r else ""')
		in_pool "$_ip"
	}
	ok "after the delete, m4 is offered an address of Kea's pool within 10 s" wait_for 10 back_to_pool
	is "$(replies '[(x["options"].get("3"), x["options"].get("12"), x["options"].get("51")) for x in r]')" \
		"[('c0a84dfe', None, '00000fa0')]" "after the delete, m4 gets Kea's router and lease time, no host name"
else
	skip "a Hardware applied and deleted while Kea runs" "$NOHOOK"
fi

# ---- a reservation Kea cannot give: Kea's answer, untouched, and a warning ----

# m5 reserves an address on none of Kea's subnets: Kea's host source
# offers no reservation for the subnet the request came in on, so Kea gives
# a pool address; ironbelld would offer the reservation. The hook leaves
# Kea's answer as it is (none of m5's options), counts a mismatch and says
# so in Kea's log.
M5=02:00:00:00:00:05
if [ "$KEA_HOOK" = 1 ]; then
	m0=$(kea_stat ironbell.answers.mismatch)
	hw_doc m5 "$M5" 10.55.0.5 >"$IB_TMP/hw-m5.yaml"
	ib apply -f "$IB_TMP/hw-m5.yaml"
	is "$rc" 0 "apply m5, reserving 10.55.0.5, on none of Kea's subnets"
	m5_offered() {
		pxe "$NS_scp" -i eth0 --mac "$M5" --wait 0.5
		_ip=$(replies 'r[0]["yiaddr"] if r else ""')
		in_pool "$_ip"
	}
	ok "m5 is offered an address of Kea's pool" wait_for 10 m5_offered
	is "$(replies '[(x["options"].get("3"), x["options"].get("12"), x["options"].get("51")) for x in r]')" \
		"[('c0a84dfe', None, '00000fa0')]" "m5: Kea's router and lease time, no host name: untouched"
	m1=$(kea_stat ironbell.answers.mismatch)
	ok "statistic ironbell.answers.mismatch counts it ($m0 -> $m1)" \
		test "${m1#none}" -ge $((${m0#none} + 1))
	ok "Kea's log warns of it, naming both addresses" wait_for 5 grep -q \
		"IRONBELL_WARN.*$M5: Kea answers offer 192\\.168\\.77\\.[0-9]*, ironbelld would answer offer 10\\.55\\.0\\.5" \
		"$KEA_LOG"
else
	skip "a reservation on none of Kea's subnets" "$NOHOOK"
fi

# ---- the end ----

if [ "$KEA_HOOK" = 1 ]; then
	like "$(cat "$KEA_LOG")" 'ironbell-hooks' "Kea's log has the hook's logger's lines"
fi
kea_stop_checked
ok "no sanitizer report from Kea or the hook" kea_log_clean
is "$(uname -n)" "$host_name" "the host name is unchanged"
is "$(cat /etc/resolv.conf 2>/dev/null | cksum)" "$resolv_sum" "the host's /etc/resolv.conf is unchanged"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"

tap_done
