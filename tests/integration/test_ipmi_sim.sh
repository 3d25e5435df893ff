#!/bin/sh
# test_ipmi_sim — the simulated BMC of the BMC tests (tests/integration/bmc),
# proven with the reference client: ipmitool -I lanplus, cipher suite 3,
# against ipmi_sim on 127.0.0.1. Chassis power status, on, off, cycle,
# reset and soft, boot device PXE (also with options=efiboot), disk,
# CD-ROM and BIOS setup, and Get System Boot Options parameter 5, each
# checked in ipmitool's output and in the state the chassis_control hook
# keeps; a wrong password and an unknown user fail in RAKP with nothing
# changed; cipher suite 17 is refused; a port where no BMC listens makes
# ipmitool give up after its own retries; a hook that refuses the change
# gives errors; a second simulator keeps a machine of its own.
#
# What ipmi_sim 2.0.33 and ipmitool 1.8.19 (Debian 12) were seen to do,
# which the assertions take as given:
# - ipmitool prints the same last line, "Error: Unable to establish IPMI
#   v2 / RMCP+ session", for a wrong password, an unknown user and a BMC
#   that never answers, and exits 1 for each. Only -v tells them apart:
#   "RAKP 2 HMAC is invalid", "RAKP 2 message indicates an error :
#   unauthorized name", "Get Auth Capabilities error".
# - ipmi_sim offers cipher suites 0 to 11; asked for 17, it answers the
#   Open Session with "invalid authentication algorithm".
# - Power status runs the hook's "get power" only; a boot-device change
#   runs "get boot" (ipmitool reads parameter 5 first) then "set boot".
# - Power cycle runs "set power 0" at once and "set power 1" about a
#   second later, after ipmitool has already exited 0: the test waits
#   (bounded) for the power to come back.
# - Soft off runs "set shutdown 1"; reset runs "set reset 1" and nothing
#   else (the hook leaves the power as it was).
# - ipmitool's "disk" is the hook's "default".
# - Parameter 5 as read back holds the device only: ipmitool shows "Boot
#   Flag Invalid", "Options apply to only next boot" and "BIOS PC
#   Compatible (legacy) boot" whatever was set (options=efiboot
#   included), so only the "Boot Device Selector" line is asserted.
# - ipmi_sim blocks while the hook runs. A hook that took 2 s (tried by
#   hand) ran twice for one "chassis power on": ipmitool sent the request
#   again after its 1 s timeout and ipmi_sim ran the hook for each copy.
#   So the hook's calls are checked by what appears in them, in order,
#   never by how many times.
# - When the hook fails (exit 1), ipmi_sim answers "Unspecified error".
#   ipmitool then exits 1 for Chassis Control ("Set Chassis Power Control
#   to Up/On failed: Unspecified error") but 0 for the boot device, after
#   printing "Set Chassis Boot Parameter 5 failed: Unspecified error".
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/bmc/ipmisim.sh"

ipmisim_require

U=admin
P='s3cret-pw!'
ipmisim_start "" "$U" "$P" || bail_out "ipmi_sim did not start"
diag "ipmi_sim on 127.0.0.1:$IPMISIM_PORT, in $IPMISIM_DIR"

# ipmi ARGS...: ipmitool against the simulator with the good credentials,
# like run ($rc, $out, $err).
ipmi() {
	run ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "$IPMISIM_PORT" \
		-U "$U" -P "$P" -N 2 -R 3 "$@"
}

# mark: remembers how many hook calls there were; since: prints the calls
# after the mark, on one line, separated by commas.
mark() { _mark=$(ipmisim_calls | wc -l); }
since() { ipmisim_calls | tail -n +$((_mark + 1)) | paste -sd, -; }

# power_is P: the hook's state has power P.
power_is() { ipmisim_state | grep -q "^power:$1 "; }

# ---- power ----

is "$(ipmisim_state)" "power:0 boot:none" "the simulated machine starts off, with no boot device"

mark
ipmi chassis power status
is "$rc $out" "0 Chassis Power is off" "power status: off"
like "$(since)" "^get power(,get power)*$" "power status asks the hook for the power only"

mark
ipmi chassis power on
is "$rc $out" "0 Chassis Power Control: Up/On" "power on: ipmitool says Up/On"
is "$(ipmisim_state)" "power:1 boot:none" "power on: the hook's power is 1"
like "$(since)" "set power 1" "power on: the hook ran set power 1"
ipmi chassis power status
is "$rc $out" "0 Chassis Power is on" "power status: on"

mark
ipmi chassis power off
is "$rc $out" "0 Chassis Power Control: Down/Off" "power off: ipmitool says Down/Off"
is "$(ipmisim_state)" "power:0 boot:none" "power off: the hook's power is 0"
like "$(since)" "set power 0" "power off: the hook ran set power 0"
ipmi chassis power status
is "$rc $out" "0 Chassis Power is off" "power status: off again"

ipmi chassis power on
mark
ipmi chassis power cycle
is "$rc $out" "0 Chassis Power Control: Cycle" "power cycle: ipmitool says Cycle"
# The power comes back a moment after ipmitool has returned.
cycled() { ipmisim_calls | tail -n +$((_mark + 1)) | grep -q '^set power 1$'; }
if wait_for 20 cycled; then
	pass "power cycle: the hook ran set power 1 again"
else
	fail "power cycle: the hook ran set power 1 again" "calls: $(since)"
fi
like "$(since)" "set power 0,(.*,)?set power 1" "power cycle: off first, then on"
wait_for 10 power_is 1
is "$(ipmisim_state)" "power:1 boot:none" "power cycle: the hook's power ends at 1"
ipmi chassis power status
is "$rc $out" "0 Chassis Power is on" "power status after the cycle: on"

mark
ipmi chassis power reset
is "$rc $out" "0 Chassis Power Control: Reset" "power reset: ipmitool says Reset"
like "$(since)" "set reset 1" "power reset: the hook ran set reset 1"
unlike "$(since)" "set power" "power reset: the hook was not asked to change the power"
is "$(ipmisim_state)" "power:1 boot:none" "power reset: the power stays on"

mark
ipmi chassis power soft
is "$rc $out" "0 Chassis Power Control: Soft" "power soft: ipmitool says Soft"
like "$(since)" "set shutdown 1" "power soft: the hook ran set shutdown 1"
is "$(ipmisim_state)" "power:0 boot:none" "power soft: the simulated OS shut down"

# ---- boot device ----

# bootdev DEVICE HOOK_DEVICE SELECTOR [OPTIONS]: chassis bootdev DEVICE
# [options=OPTIONS] sets the hook's boot to HOOK_DEVICE, and parameter 5
# read back shows SELECTOR.
bootdev() {
	_what="bootdev $1${4:+ options=$4}"
	mark
	if [ -n "${4:-}" ]; then
		ipmi chassis bootdev "$1" "options=$4"
	else
		ipmi chassis bootdev "$1"
	fi
	is "$rc $out" "0 Set Boot Device to $1" "$_what: ipmitool says so"
	is "$(ipmisim_state)" "power:0 boot:$2" "$_what: the hook's boot is $2"
	like "$(since)" "^get boot(,get boot)*,set boot $2(,set boot $2)*$" "$_what: the hook read the device, then set it"
	mark
	ipmi chassis bootparam get 5
	is "$rc" 0 "$_what: bootparam get 5 succeeds"
	like "$out" "Boot Device Selector : $3\$" "$_what: parameter 5 reads back $3"
	like "$(since)" "^get boot(,get boot)*$" "$_what: reading parameter 5 asks the hook"
}

bootdev pxe pxe "Force PXE"
bootdev disk default "Force Boot from default Hard-Drive"
bootdev cdrom cdrom "Force Boot from CD/DVD"
bootdev bios bios "Force Boot into BIOS Setup"
bootdev pxe pxe "Force PXE" efiboot

# ---- what fails ----

state=$(ipmisim_state)
mark
run ipmitool -v -I lanplus -C 3 -H 127.0.0.1 -p "$IPMISIM_PORT" \
	-U "$U" -P wrong-password -N 2 -R 3 chassis power on
is "$rc" 1 "a wrong password: ipmitool exits 1"
like "$err" "^Error: Unable to establish IPMI v2 / RMCP\+ session" "a wrong password: no session"
like "$err" "RAKP 2 HMAC is invalid" "a wrong password: the RAKP 2 HMAC does not verify"
is "$(since)" "" "a wrong password: the hook never ran"
is "$(ipmisim_state)" "$state" "a wrong password: nothing changed"

run ipmitool -v -I lanplus -C 3 -H 127.0.0.1 -p "$IPMISIM_PORT" \
	-U nobody -P "$P" -N 2 -R 3 chassis power on
is "$rc" 1 "an unknown user: ipmitool exits 1"
like "$err" "RAKP 2 message indicates an error : unauthorized name" "an unknown user: RAKP 2 says unauthorized name"
is "$(since)" "" "an unknown user: the hook never ran"

ipmi channel getciphers ipmi 1
like "$out" "^3 +N/A +hmac_sha1 +hmac_sha1_96 +aes_cbc_128" "cipher suite 3 is offered: HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128"
unlike "$out" "^17 " "cipher suite 17 is not offered"
run ipmitool -I lanplus -C 17 -H 127.0.0.1 -p "$IPMISIM_PORT" \
	-U "$U" -P "$P" -N 2 -R 3 chassis power status
is "$rc" 1 "cipher suite 17: ipmitool exits 1"
like "$err" "invalid authentication algorithm" "cipher suite 17: the Open Session is refused"

# A port where nothing listens: ipmitool gives up by itself after one
# retry of one second (run's own timeout, far above, is not what ends it).
dead=$(ib_free_port udp) || bail_out "no free UDP port"
run ipmitool -v -I lanplus -C 3 -H 127.0.0.1 -p "$dead" \
	-U "$U" -P "$P" -N 1 -R 1 chassis power status
is "$rc" 1 "no BMC on the port: ipmitool exits 1 by itself"
like "$err" "Get Auth Capabilities error" "no BMC on the port: the first request is never answered"
like "$err" "^Error: Unable to establish IPMI v2 / RMCP\+ session" "no BMC on the port: no session"

# A BMC that refuses the change: ipmi_sim answers "Unspecified error".
# ipmitool exits 1 for Chassis Control but 0 for the boot device, having
# printed the failure: only reading the device back tells.
ipmisim_refuse on
state=$(ipmisim_state)
mark
ipmi chassis power on
is "$rc" 1 "a refused power on: ipmitool exits 1"
like "$err" "^Set Chassis Power Control to Up/On failed: Unspecified error" "a refused power on: ipmitool says it failed"
like "$(since)" "set power 1" "a refused power on: the hook was asked"
is "$(ipmisim_state)" "$state" "a refused power on: nothing changed"
ipmi chassis bootdev disk
is "$rc" 0 "a refused boot device: ipmitool still exits 0"
like "$err" "^Set Chassis Boot Parameter 5 failed: Unspecified error" "a refused boot device: ipmitool says it failed"
is "$(ipmisim_state)" "$state" "a refused boot device: nothing changed"
ipmi chassis bootparam get 5
like "$out" "Boot Device Selector : Force PXE\$" "a refused boot device: parameter 5 still reads back PXE"
ipmisim_refuse off

# A second simulator beside the first: each keeps its own machine.
first=$IPMISIM_DIR
first_state=$(ipmisim_state)
first_port=$IPMISIM_PORT
first_pid=$IPMISIM_PID
ipmisim_start "" other other-pw || bail_out "a second ipmi_sim did not start"
isnt_port() { [ "$IPMISIM_PORT" != "$first_port" ]; }
ok "the second simulator has a port of its own" isnt_port
run ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "$IPMISIM_PORT" \
	-U other -P other-pw -N 2 -R 3 chassis power on
is "$rc $out" "0 Chassis Power Control: Up/On" "the second simulator: power on"
is "$(ipmisim_state)" "power:1 boot:none" "the second simulator: its power is 1"
is "$(ipmisim_state "$first")" "$first_state" "the first simulator: unchanged"
run ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "$IPMISIM_PORT" \
	-U "$U" -P "$P" -N 2 -R 3 chassis power status
is "$rc" 1 "the second simulator knows only its own user"

ok "the first ipmi_sim still runs" ib_alive "$first_pid"
ok "the second ipmi_sim still runs" ib_alive "$IPMISIM_PID"

tap_done
