#!/bin/sh
# test_http_prebuild_netns — boot answers made ahead (http.answer_prebuild)
# by a listener on every address, which learns the public address from the
# requests. Namespaces on one bridge (10.78.0.0/24):
#
#   srv  10.78.0.1   ironbelld, http.listen 0.0.0.0 (inside srv only)
#   a    10.78.0.10  Hardware "a"
#
# Nothing is made ahead until a known machine's boot answer is asked on an
# address: not for a request on loopback (the host itself), not for an
# unknown machine's. Then every machine's script and /httpboot are made
# for that address, and served as hits; a Hardware of many interfaces gets
# at most 8 answers made ahead.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"

ns_require
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"

ns_new SRV srv || bail_out "cannot make a namespace"
ns_bridge "$SRV" br0 10.78.0.1/24 || bail_out "cannot make the bridge"
ns_new NS_a a || bail_out "cannot make a namespace"
ns_veth "$NS_a" eth0 10.78.0.10/24 "$SRV" p-a - || bail_out "cannot link a"
ns_port "$SRV" p-a br0 || bail_out "cannot bridge a"

PORT=7080
IB_HTTP_PORT=$PORT
ib_write_config || bail_out "cannot write the config"
# Every address of srv's namespace: its loopback and the bridge.
sed -i "s/^  listen: 127.0.0.1:$PORT/  listen: 0.0.0.0:$PORT/" "$IB_CONFIG"
grep -q "listen: 0.0.0.0:$PORT" "$IB_CONFIG" || bail_out "cannot set http.listen"
IB_DAEMON_WRAP="ip netns exec $SRV" ib_start_daemon || bail_out "ironbelld did not start"

# hw NAME N: a Hardware with N interfaces, MACs 02:00:00:00:NN:ii and
# addresses 10.78.NN.ii (the first of "a" is 10.78.0.10).
hw() {
	echo "---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: $1
  namespace: default
spec:
  interfaces:"
	_i=0
	while [ $_i -lt "$2" ]; do
		_ip=10.78.$3.$((10 + _i))
		echo "  - dhcp:
      mac: 02:00:00:00:$(printf %02x "$3"):$(printf %02x $_i)
      ip: {address: $_ip, netmask: 255.255.0.0}
    netboot: {allowPXE: true}"
		_i=$((_i + 1))
	done
}
{ hw a 1 0; hw b 1 1; } >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "two Hardware are applied"

from() { ns_get "$@"; }
# metric NAME: a metric's value on the listener (0 when not exported).
metric() {
	_v=$(ip netns exec "$SRV" curl -s --max-time 10 "http://127.0.0.1:$PORT/metrics" |
		awk -v n="$1" '$1 == n { print $2 }')
	echo "${_v:-0}"
}
PRE=ironbell_http_answers_prebuilt_total
BUILT='ironbell_http_answers_total{result="built"}'
HIT='ironbell_http_answers_total{result="hit"}'
IB=http://10.78.0.1:$PORT

# Once the index has both (a request before that goes to the store).
indexed() { [ "$(metric ironbell_http_answer_records)" = 2 ]; }
wait_for 10 indexed || bail_out "the answer cache does not index the Hardware"
is "$(metric $PRE)" 0 "a listener on every address makes nothing ahead at first"

from "$SRV" http://127.0.0.1:$PORT/ipxe/script/02:00:00:00:00:00/auto.ipxe
is "$code" 200 "a's script asked on loopback"
from "$NS_a" $IB/ipxe/script/02:00:00:00:09:09/auto.ipxe
is "$code" 404 "an unknown MAC asked on 10.78.0.1"
sleep 1
is "$(metric $PRE)" 0 "neither teaches an address: nothing is made ahead"
file_has "$IB_LOG" 'made ahead for'
is "$?" 1 "and nothing is logged"

from "$NS_a" $IB/ipxe/script/02:00:00:00:00:00/auto.ipxe
is "$code" 200 "a's script asked on 10.78.0.1"
like "$out" "#!ipxe" "is a script"
# a's /httpboot, b's script and b's /httpboot: a's script was made by
# the request itself.
made3() { [ "$(metric $PRE)" -ge 3 ]; }
ok "then every machine's boot answers are made for 10.78.0.1" wait_for 10 made3
file_has "$IB_LOG" 'boot answers are now made ahead for 10\.78\.0\.1 too'
is "$?" 0 "and a line says so"
b0=$(metric "$BUILT")
h0=$(metric "$HIT")
from "$NS_a" $IB/ipxe/script/02:00:00:00:01:00/auto.ipxe
is "$code" 200 "b's script on 10.78.0.1"
like "$out" "http://10.78.0.1:$PORT/" "names 10.78.0.1"
from "$NS_a" $IB/httpboot
is "$code" 200 "a's /httpboot"
like "$out" '/ipxe/binary/02:00:00:00:00:00/' "with a's binary"
is "$(metric "$BUILT"):$(metric "$HIT")" "$b0:$((h0 + 2))" "both were made ahead: hits, none built"

# A Hardware of 6 interfaces: 6 scripts and 6 /httpboot answers could be
# made, but a Hardware holds at most 8 made ahead.
p0=$(metric $PRE)
hw c 6 2 >"$IB_TMP/c.yaml"
ib apply -f "$IB_TMP/c.yaml"
is "$rc" 0 "a Hardware of 6 interfaces is applied"
made8() { [ "$(metric $PRE)" -ge $((p0 + 8)) ]; }
ok "8 of its answers are made ahead" wait_for 10 made8
sleep 1
is "$(metric $PRE)" "$((p0 + 8))" "and no more"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
