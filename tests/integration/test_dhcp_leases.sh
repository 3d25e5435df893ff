#!/bin/sh
# test_dhcp_leases — the leases of ironbelld's DHCP server, with clients in
# network namespaces on a bridge in the server's namespace:
#
#  - RELEASE (dhclient -r, and the scapy client) turns a lease's state to
#    released in `ironbell get leases` (table and JSON);
#  - a lease of 4 s whose client goes away without releasing disappears
#    from `ironbell get leases` after it expires (at most 30 s);
#  - kill -9 of ironbelld in the middle of a stream of DORAs for 300
#    reserved MACs loses no acknowledged lease: after a restart, every MAC
#    that got an ACK has a bound lease with the ACKed address, and the
#    rest of the stream then completes;
#  - lease reuse: after the restart, a DORA of a MAC whose lease is on disk
#    is ACKed that lease for the time it has left (51, 58, 59), with no
#    write, counted and logged; after a RELEASE, the next DORA writes;
#    with dhcp.lease_reuse 0 (after a restart) such a DORA writes a new
#    lease;
#  - a flood of malformed datagrams does not stop service: udhcpc, started
#    during the flood, gets its lease, and the drop counters went up by
#    reason.
#
# Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"

dhcp_require

NSTREAM=${IB_DHCP_STREAM:-300}  # MACs in the DORA stream
NGARBAGE=${IB_DHCP_GARBAGE:-20000}

ns_new SRV srv || bail_out "cannot make a namespace"
ns_new CLI cli || bail_out "cannot make a namespace"
ns_new CL2 cl2 || bail_out "cannot make a namespace"
ns_bridge "$SRV" br0 192.168.77.1/24 || bail_out "cannot make the bridge"
# The stream's reservations are on a second subnet of the same link.
ip -n "$SRV" addr add 10.80.0.1/16 dev br0 || bail_out "cannot add a second address"
ns_veth "$SRV" p-cli - "$CLI" eth0 - || bail_out "cannot make a veth pair"
ns_veth "$SRV" p-cl2 - "$CL2" eth0 - || bail_out "cannot make a veth pair"
ns_port "$SRV" p-cli br0 || bail_out "cannot add a bridge port"
ns_port "$SRV" p-cl2 br0 || bail_out "cannot add a bridge port"
ip -n "$CLI" link set eth0 address 02:00:00:00:00:01
ip -n "$CL2" link set eth0 address 02:00:00:00:00:04

dhcp_daemon "$SRV" "  mode: reservation
  interfaces: [br0]" || bail_out "ironbelld did not start"

# m1..m4 on 192.168.77.0/24; the stream's hosts s000.. on 10.80.0.0/16,
# the link's second subnet.
{
	hw_doc m1 02:00:00:00:00:01 192.168.77.21
	hw_doc m2 02:00:00:00:00:02 192.168.77.22
	HW_LEASE=4 hw_doc m3 02:00:00:00:00:03 192.168.77.23
	hw_doc m4 02:00:00:00:00:04 192.168.77.24
	HW_MASK=255.255.0.0 HW_GW=10.80.0.1 HW_ROUTES='' HW_DNS=''
	i=0
	while [ $i -lt "$NSTREAM" ]; do
		mac=$(printf '02:00:00:01:%02x:%02x' $((i / 256)) $((i % 256)))
		echo "$mac" >>"$IB_TMP/stream.macs"
		hw_doc "$(printf 's%03d' $i)" "$mac" "10.80.$((i / 200)).$((i % 200 + 10))"
		i=$((i + 1))
	done
} >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "apply $((NSTREAM + 4)) Hardware"
ok "the server's table holds them" wait_hosts $((NSTREAM + 4))

ib get leases
is "$rc:$out" "0:" "no lease yet: get leases prints nothing on stdout"
like "$err" '^No leases found$' "and says so on stderr"

# ---- a 4 s lease, its client gone without a RELEASE ----

pxe "$CLI" -i eth0 --mac 02:00:00:00:00:03 --request --wait 2
is "$(replies '[(x["type"], x["yiaddr"], x["options"].get("51")) for x in r]')" \
	"[('offer', '192.168.77.23', '00000004'), ('ack', '192.168.77.23', '00000004')]" \
	"m3: DORA with a 4 s lease"
ok "m3: its lease is bound" wait_for 5 lease_is 02:00:00:00:00:03 "bound 192.168.77.23"
expired0=$(metric ironbell_dhcp_leases_expired_total)

# ---- RELEASE: dhclient -r ----

dhclient_start "$CLI" eth0 dhc
ok "dhclient: bound within 30 s" wait_for 30 file_has "$IB_TMP/dhc.env" '^reason=BOUND$'
[ -f "$IB_TMP/dhc.env" ] || diag "$(tail -n 20 "$IB_TMP/dhc.log")"
ok "m1: its lease is bound" wait_for 5 lease_is 02:00:00:00:00:01 "bound 192.168.77.21"
rel0=$(metric 'ironbell_dhcp_received_total{type="release"}')
dhclient_release "$CLI" eth0 dhc
is "$rc" 0 "dhclient -r"
[ "$rc" = 0 ] || diag "$err"
ok "m1: released in ironbell get leases" wait_for 10 lease_is 02:00:00:00:00:01 "released 192.168.77.21"
ok "the RELEASE was counted" test "$(metric 'ironbell_dhcp_received_total{type="release"}')" -gt "$rel0"
ib get leases 02:00:00:00:00:01
like "$out" '^02:00:00:00:00:01 +192\.168\.77\.21 +default/m1 +released +[0-9]' \
	"the table: MAC, IP, HARDWARE, STATE released, EXPIRES"
like "$(cat "$IB_LOG")" 'msg="RELEASE of 192\.168\.77\.21 by 02:00:00:00:00:01 \(hardware default/m1\)"' \
	"the daemon logged the RELEASE"
run ip -n "$CLI" -4 -o addr show dev eth0
unlike "$out" '192\.168\.77\.21' "dhclient's script removed the address"

# ---- RELEASE: the scapy client ----

pxe "$CLI" -i eth0 --mac 02:00:00:00:00:02 --request --wait 2
is "$(replies '[(x["type"], x["yiaddr"]) for x in r]')" \
	"[('offer', '192.168.77.22'), ('ack', '192.168.77.22')]" "m2: DORA"
ok "m2: bound" wait_for 5 lease_is 02:00:00:00:00:02 "bound 192.168.77.22"
srv_mac=$(ns_mac "$SRV" br0)
pxe "$CLI" -i eth0 --mac 02:00:00:00:00:02 --release --ciaddr 192.168.77.22 --server 192.168.77.1 \
	--server-mac "$srv_mac"
is "$rc" 0 "m2: RELEASE sent"
ok "m2: released" wait_for 10 lease_is 02:00:00:00:00:02 "released 192.168.77.22"

# ---- the 4 s lease expires ----

ok "m3: the lease of 4 s is gone from get leases within 30 s" \
	wait_for 30 lease_is 02:00:00:00:00:03 none
ok "ironbell_dhcp_leases_expired_total went up" \
	test "$(metric ironbell_dhcp_leases_expired_total)" -gt "$expired0"
is "$(lease_of 02:00:00:00:00:01)" "released 192.168.77.21" "the released lease of m1 is still listed"

# ---- kill -9 in the middle of a stream of DORAs ----

: >"$IB_TMP/stream.acks"
ns_bg "$CLI" "$PY" "$DHCP_DIR/pxe_client.py" -i eth0 --dora-loop "$IB_TMP/stream.macs" \
	--record "$IB_TMP/stream.acks" --wait 1 --tries 1 >"$IB_TMP/stream.out" 2>&1
stream_pid=$NS_PID
t0=$(date +%s.%N)
half=$((NSTREAM / 3))
nacks() { grep -c '^02:' "$IB_TMP/stream.acks"; }
acks_at_least() { [ "$(nacks)" -ge "$1" ]; }
ok "the stream got $half ACKs" wait_for 60 acks_at_least "$half"
ok "the stream is still running" ib_alive "$stream_pid"
ib_crash_daemon
at_kill=$(nacks)
t1=$(date +%s.%N)
sleep 1
ib_kill "$stream_pid" 5
acked=$(nacks)
diag "kill -9 after $at_kill ACKs in $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s; $acked ACKs in all"
ok "the kill came before the end of the stream ($acked of $NSTREAM)" test "$acked" -lt "$NSTREAM"
ib_start_daemon || bail_out "ironbelld did not restart after kill -9"
pass "ironbelld restarts after kill -9"
ib get leases -o json
printf '%s' "$out" >"$IB_TMP/leases.json"
missing=$("$PY" -c 'import json, sys
leases = {i["mac"].lower(): i for i in json.load(open(sys.argv[1]))["items"]}
bad = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) != 2:
        continue
    l = leases.get(f[0].lower())
    if not l or l["state"] != "bound" or l["ip"] != f[1]:
        bad.append("%s %s: %s" % (f[0], f[1], l and (l["state"], l["ip"])))
print("\n".join(bad))' "$IB_TMP/leases.json" "$IB_TMP/stream.acks" 2>&1)
is "$missing" "" "every ACKed lease ($acked) is bound to the ACKed address after the restart"

sed -n 's/^\(02:[0-9a-f:]*\) .*/\1/p' "$IB_TMP/stream.acks" >"$IB_TMP/acked.macs"
grep -v -x -F -f "$IB_TMP/acked.macs" "$IB_TMP/stream.macs" >"$IB_TMP/rest.macs"
rest=$(grep -c . "$IB_TMP/rest.macs")
run ip netns exec "$CLI" "$PY" "$DHCP_DIR/pxe_client.py" -i eth0 --dora-loop "$IB_TMP/rest.macs" \
	--record "$IB_TMP/rest.acks" --wait 2 --tries 3
is "$out" "{\"acks\": $rest, \"failed\": 0}" "after the restart the other $rest MACs of the stream get their ACKs"
n=$(timeout 10 "$IRONBELL" get leases -o json | "$PY" -c 'import json, sys
print(sum(1 for i in json.load(sys.stdin)["items"] if i["mac"].startswith("02:00:00:01:") and i["state"] == "bound"))')
is "$n" "$NSTREAM" "all $NSTREAM leases of the stream are bound"

# ---- lease reuse ----

# The stream's first leases were written before the kill and read back
# at the restart: a DORA of one of them is offered and ACKed the lease on
# disk, for the time it has left, and nothing is written.
# acked_dora N: a DORA of the Nth MAC of the stream that got an ACK
# before the kill; sets mac0, ip0 (its ACKed address), times0 (its lease's
# start and expiry before the DORA), committed0 and reused0 (the counters
# before it).
acked_dora() {
	mac0=$(sed -n "$1p" "$IB_TMP/acked.macs")
	ip0=$(awk -v m="$mac0" '$1 == m { print $2; exit }' "$IB_TMP/stream.acks")
	times0=$(lease_of "$mac0" "starts expires")
	committed0=$(metric ironbell_dhcp_leases_committed_total)
	reused0=$(metric ironbell_dhcp_leases_reused_total)
	pxe "$CLI" -i eth0 --mac "$mac0" --request --wait 2
}
acked_dora 1
is "$(replies '[(x["type"], x["yiaddr"]) for x in r]')" "[('offer', '$ip0'), ('ack', '$ip0')]" \
	"reuse: $mac0 DORA after the restart"
# 51, 58 and 59 of the ACK against the lease's expiry in the store.
check=$(replies '[x["options"] for x in r if x["type"] == "ack"]' | "$PY" -c 'import datetime, json, sys, time
o = eval(sys.stdin.read())[0]
t = int(o["51"], 16); t1 = int(o["58"], 16); t2 = int(o["59"], 16)
exp = datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00")).timestamp()
left = exp - time.time()
print("ok" if 450 <= t < 600 and abs(t - left) <= 3 and t1 == t // 2 and t2 == t * 7 // 8
      else "51=%d 58=%d 59=%d, %.0f s left" % (t, t1, t2, left))' "${times0#* }" 2>&1)
is "$check" ok "reuse: the ACK's lease time is the time the lease on disk has left, T1 and T2 halve and 7/8 it"
is "$(metric ironbell_dhcp_leases_reused_total)" "$((reused0 + 1))" "reuse: counted in ironbell_dhcp_leases_reused_total"
is "$(metric ironbell_dhcp_leases_committed_total)" "$committed0" "reuse: nothing was written"
is "$(lease_of "$mac0" "state ip starts expires")" "bound $ip0 $times0" \
	"reuse: the lease in get leases is the one the ACK handed out"
like "$(cat "$IB_LOG")" "msg=\"ACK $ip0 to $mac0 \\(hardware default/s[0-9]+; lease on disk reused, [0-9]+ s left\\)\"" \
	"reuse: the ACK's log line says so"

# After a RELEASE the next DORA writes a new lease of the full time.
pxe "$CLI" -i eth0 --mac "$mac0" --release --ciaddr "$ip0" --server 192.168.77.1 \
	--server-mac "$srv_mac"
ok "reuse: $mac0 released" wait_for 10 lease_is "$mac0" "released $ip0"
pxe "$CLI" -i eth0 --mac "$mac0" --request --wait 2
is "$(replies '[(x["type"], x["yiaddr"], x["options"].get("51")) for x in r]')" \
	"[('offer', '$ip0', '00000258'), ('ack', '$ip0', '00000258')]" \
	"reuse: after a RELEASE, OFFER and ACK of a new lease of 600 s"
ok "reuse: bound again" wait_for 5 lease_is "$mac0" "bound $ip0"
is "$(metric ironbell_dhcp_leases_committed_total)" "$((committed0 + 2))" \
	"reuse: the RELEASE and the new lease were written"
is "$(metric ironbell_dhcp_leases_reused_total)" "$((reused0 + 1))" "reuse: no lease reused for it"

# ---- a flood of garbage ----

drop0=$(metric_sum ironbell_dhcp_dropped_total)
metrics
cp "$IB_TMP/metrics" "$IB_TMP/metrics.before"
ns_bg "$CLI" "$PY" "$DHCP_DIR/pxe_client.py" -i eth0 --garbage "$NGARBAGE" --rate 2000 \
	>"$IB_TMP/garbage.out" 2>&1
flood_pid=$NS_PID
sleep 1
ok "the flood is under way" ib_alive "$flood_pid"
udhcpc_run "$CL2" eth0 udh
during=no
ib_alive "$flood_pid" && during=yes
is "$rc" 0 "udhcpc, started during the flood, obtained its lease"
[ "$rc" = 0 ] || diag "$(tail -n 20 "$IB_TMP/udh.log")"
is "$during" yes "the flood was still running when udhcpc finished"
is "$(envval udh ip)" 192.168.77.24 "udhcpc: the reserved address"
ok "m4: bound in get leases" wait_for 5 lease_is 02:00:00:00:00:04 "bound 192.168.77.24"
ok "the flood ends" wait_for 60 sh -c "! test -d /proc/$flood_pid || grep -q '^State:.*Z' /proc/$flood_pid/status"
like "$(cat "$IB_TMP/garbage.out")" '^\{"garbage": ' "the flood sent its datagrams"
diag "$(cat "$IB_TMP/garbage.out")"
sleep 1
drop1=$(metric_sum ironbell_dhcp_dropped_total)
ok "ironbell_dhcp_dropped_total went up by at least $((NGARBAGE / 4)) ($drop0 -> $drop1)" \
	test "$((drop1 - drop0))" -ge $((NGARBAGE / 4))
for reason in truncated_header cookie option_overrun option_length no_message_type message_type overload hlen; do
	b=$(awk -v k="ironbell_dhcp_dropped_total{reason=\"$reason\"}" '$1 == k { print $2 + 0 }' "$IB_TMP/metrics.before")
	a=$(metric "ironbell_dhcp_dropped_total{reason=\"$reason\"}")
	ok "dropped, reason $reason, went up (${b:-0} -> $a)" test "$a" -gt "${b:-0}"
done
pxe "$CLI" -i eth0 --mac 02:00:00:00:00:02 --request --wait 2
is "$(replies '[x["type"] for x in r]')" "['offer', 'ack']" "after the flood, a DORA still works"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"

# ---- lease reuse off ----

# With dhcp.lease_reuse 0 a DORA of a MAC whose lease is on disk (the
# stream's second ACKed MAC, leased earlier in this test) writes a new lease of the
# full time, and the ACK leaves only once it is committed.
dhcp_daemon "$SRV" "  mode: reservation
  interfaces: [br0]
  lease_reuse: 0" || bail_out "ironbelld did not start with lease_reuse 0"
ok "lease_reuse 0: the table holds the reservations again" wait_hosts $((NSTREAM + 4))
acked_dora 2
is "$(replies '[(x["type"], x["yiaddr"], x["options"].get("51")) for x in r]')" \
	"[('offer', '$ip0', '00000258'), ('ack', '$ip0', '00000258')]" \
	"reuse off: $mac0, whose lease is on disk, is offered and ACKed a new lease of 600 s"
is "$(metric ironbell_dhcp_leases_committed_total)" "$((committed0 + 1))" \
	"reuse off: the new lease was committed"
is "$(metric ironbell_dhcp_leases_reused_total)" "$reused0" "reuse off: no lease reused"
ok "reuse off: the lease on disk is the new one" \
	test "$(lease_of "$mac0" "state ip starts expires")" != "bound $ip0 $times0"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
