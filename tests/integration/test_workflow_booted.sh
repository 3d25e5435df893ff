#!/bin/sh
# test_workflow_booted — the closed loop through the real ironbelld: after
# a Workflow ends SUCCESS, what the machine does next is recorded on it.
# The server in one namespace (DHCP on srv0, the public listener on
# 192.168.77.1), the machine in another (192.168.77.21, the scapy client
# and curl), the worker API played by the scripted agent
# (workflow/wfagent.py). One Workflow with toggleAllowNetboot:
#  - SUCCESS marks the Hardware (ironbell.dev/awaiting-boot, naming the
#    Workflow) and sets the condition Booted Unknown (AwaitingBoot);
#  - a PXE DISCOVER from the machine (netboot now refused:
#    /netboot-not-allowed) is reported: Booted False (NetbootAgain) and a
#    Warning event NetbootAgain on the Workflow and on the Hardware;
#  - the machine's first metadata request from its address, then: Booted
#    True (BootedFromDisk) with the time from power-on, a Normal event
#    Booted on both, the annotations gone.
# A second Workflow on the same Hardware ends SUCCESS, and a DHCP DISCOVER
# without netboot options ends its wait (Booted True, "a DHCP request").
# Every wait is bounded; nothing is asserted about time. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"
. "$top_srcdir/tests/integration/workflow/objects.sh"

dhcp_require
wf_require_grpc
wf_stubs || bail_out "cannot generate the stubs of common/tink.proto"

ns_new SRV srv || bail_out "cannot make a namespace"
ns_new CLI cli || bail_out "cannot make a namespace"
ns_veth "$SRV" srv0 192.168.77.1/24 "$CLI" eth0 192.168.77.21/24 ||
	bail_out "cannot make a veth pair"

IB_GRPC_EXTRA="  long_poll: 1"
ib_write_config "dhcp:
  enabled: true
  mode: reservation
  interfaces: [srv0]" || bail_out "cannot write the config"
PORT=$IB_HTTP_PORT
sed -i "s/^  listen: 127.0.0.1:$PORT/  listen: 192.168.77.1:$PORT/" "$IB_CONFIG"
IB_DAEMON_WRAP="ip netns exec $SRV" ib_start_daemon || bail_out "ironbelld did not start"
WF_ADDR=127.0.0.1:$IB_GRPC_PORT

MAC=02:00:00:00:00:01
HW_ALLOW_PXE=false
tpl_yaml tpl1 600 >"$IB_TMP/tpl1.yaml" <<EOF
      - name: provision
        worker: "{{.device_1}}"
        actions:
          - name: image
            image: img/image2disk
            timeout: 600
EOF
{
	hw_doc m1 "$MAC" 192.168.77.21
	echo ---
	cat "$IB_TMP/tpl1.yaml"
	echo ---
	wf_yaml wf1 tpl1 m1 "$MAC" true
} >"$IB_TMP/objects.yaml"
apply_file "$IB_TMP/objects.yaml"
is "$rc" 0 "apply a Hardware, a Template and a Workflow (toggleAllowNetboot)"
[ "$rc" = 0 ] || diag "$out $err"
wait_hosts 1 || bail_out "the server did not load the Hardware"

# agent MAC: the scripted agent plays every action of MAC's Workflow,
# beside the worker API (in the server's namespace).
agent() {
	run ip netns exec "$SRV" "$OBJ_PY" "$WFAGENT" --addr "$WF_ADDR" run --agent "$1" \
		--max-seconds 60
}

# booted NAME FIELD: FIELD of NAME's Booted condition ("" when none).
booted() {
	wf_get "$1" '([c.get("'"$2"'", "") for c in d.get("status", {}).get("conditions", []) if c["type"] == "Booted"] + [""])[0]'
}
booted_is() { [ "$(booted "$1" status) $(booted "$1" reason)" = "$2" ]; }

# tries N CMD...: CMD until it succeeds, N times at most (each try of
# the DHCP ones below waits a second for replies, so wait_for's tenths
# would make a failure take minutes).
tries() {
	_n=$1
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		_n=$((_n - 1))
	done
	return 1
}

# annotation KEY: the Hardware m1's annotation KEY ("None" when absent).
annotation() {
	ib get hardware m1 -o json
	printf '%s' "$out" | jget 'd["metadata"].get("annotations", {}).get("'"$1"'")'
}

ok "wf1: PENDING (allowPXE toggled on first)" wf_wait wf1 PENDING
agent "$MAC"
is "$rc" 0 "the agent plays wf1"
[ "$rc" = 0 ] || diag "$out $err"
ok "wf1: SUCCESS" wf_wait wf1 SUCCESS
[ "$WF_LAST" = SUCCESS ] || diag "state $WF_LAST: $(wf_json wf1)"
ok "wf1: Booted Unknown, AwaitingBoot" wait_for 10 booted_is wf1 "Unknown AwaitingBoot"
like "$(annotation ironbell.dev/awaiting-boot)" '^wf1 [0-9]{4}-[0-9]{2}-[0-9]{2}T' \
	"m1 is marked ironbell.dev/awaiting-boot with wf1 and its power-on time"
is "$(hw_pxe m1)" False "m1: allowPXE off again after POST"

# ---- it netboots again: reported ----

# The DHCP server learns of the mark from the change log: DISCOVER as a
# UEFI PXE ROM until the report is there (a bounded number of times).
netboot_seen() {
	pxe "$CLI" -i eth0 --mac "$MAC" --arch 7 --vendor-class PXEClient:Arch:00007:UNDI:003016 \
		--wait 1
	booted_is wf1 "False NetbootAgain"
}
ok "a PXE DISCOVER from m1 after SUCCESS: wf1 Booted False, NetbootAgain" \
	tries 15 netboot_seen
is "$(replies '[x["file"] for x in r]')" "['/netboot-not-allowed']" \
	"and its netboot is refused (/netboot-not-allowed)"
like "$(booted wf1 message)" 'netbooted again .* after power-on \(a DHCP request\)' \
	"the condition says it netbooted again, how long after power-on"
ib events workflow wf1
like "$out" 'Warning +NetbootAgain' "a Warning event NetbootAgain on wf1"
ib events hardware m1
like "$out" 'Warning +NetbootAgain' "and on the Hardware m1"
like "$(annotation ironbell.dev/awaiting-boot)" '^wf1 ' "the mark is kept: the disk boot may follow"
is "$(annotation ironbell.dev/boot-observed)" None "the observation itself is taken away"

# ---- it comes up from its disk: its first metadata request ----

run ip netns exec "$CLI" curl -s --max-time 10 -o "$IB_TMP/md" -w '%{http_code}' \
	"http://192.168.77.1:$PORT/2009-04-04/meta-data/hostname"
is "$out" 200 "m1's metadata request from its address is answered"
ok "wf1: Booted True, BootedFromDisk" wait_for 10 booted_is wf1 "True BootedFromDisk"
like "$(booted wf1 message)" \
	'^hardware m1 booted from its disk [0-9hms.]+ after power-on \(its first metadata request\)$' \
	"the condition gives the time from power-on and what was seen"
ib events workflow wf1
like "$out" 'Normal +Booted +.*booted from its disk' "a Normal event Booted on wf1"
ib events hardware m1
like "$out" 'Normal +Booted +.*wf1.*booted from its disk' "and on the Hardware m1, naming wf1"
is "$(annotation ironbell.dev/awaiting-boot)" None "the mark is gone"
is "$(annotation ironbell.dev/boot-observed)" None "and so is the observation"
is "$(wf_state wf1)" SUCCESS "wf1 is still SUCCESS"

# ---- a second Workflow; a DHCP request without netboot options ----

wf_yaml wf2 tpl1 m1 "$MAC" true >"$IB_TMP/wf2.yaml"
apply_file "$IB_TMP/wf2.yaml"
is "$rc" 0 "apply a second Workflow for m1"
ok "wf2: PENDING" wf_wait wf2 PENDING
agent "$MAC"
is "$rc" 0 "the agent plays wf2"
ok "wf2: SUCCESS" wf_wait wf2 SUCCESS
ok "wf2: Booted Unknown, AwaitingBoot" wait_for 10 booted_is wf2 "Unknown AwaitingBoot"
dhcp_seen() {
	pxe "$CLI" -i eth0 --mac "$MAC" --wait 1
	booted_is wf2 "True BootedFromDisk"
}
ok "a DISCOVER without netboot options from m1: wf2 Booted True" tries 15 dhcp_seen
like "$(booted wf2 message)" 'booted from its disk .* after power-on \(a DHCP request\)' \
	"the condition says a DHCP request was seen"
is "$(booted wf1 status) $(booted wf1 reason)" "True BootedFromDisk" \
	"wf1's condition is left as it was"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean
tap_done
