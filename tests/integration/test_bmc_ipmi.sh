#!/bin/sh
# test_bmc_ipmi — the IPMI engine (bmc/ipmi/) against ipmi_sim, through
# tests/bmc/bmc-call, with cipher suite 3: power status, on, off, cycle,
# reset and soft, boot device PXE, disk, BIOS and CD-ROM (one-time,
# persistent, EFI) and reading it back, each compared with what the
# reference client, ipmitool -I lanplus -C 3, says on the same simulator
# and with the state its chassis_control hook keeps. A wrong password and
# an unknown user fail as authentication failures and never show the
# password; a host name is looked up; a port where nothing listens times out while a live BMC in
# the same run is served; a sequence of calls reuses one session; two
# BMCs are driven at once; a change the BMC refuses fails as refused.
#
# ipmi_sim never shows the valid, persistent or EFI bits of boot
# parameter 5 (test_ipmi_sim.sh), so only the device is compared: the
# engine reports it as "boot=unknown device=DEV" (the BMC does not vouch
# for it) and the bits are not asserted here.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/bmc/ipmisim.sh"

ipmisim_require
BMC_CALL=$top_builddir/tests/bmc/bmc-call
[ -x "$BMC_CALL" ] || skip_all "tests/bmc/bmc-call is not built"

U=admin
P='s3cret-pw!'
printf '%s\n' "$P" >"$IB_TMP/pw"
printf '%s\n' 'not-the-password' >"$IB_TMP/badpw"
ipmisim_start "" "$U" "$P" || bail_out "ipmi_sim did not start"
diag "ipmi_sim on 127.0.0.1:$IPMISIM_PORT, in $IPMISIM_DIR"
PORT=$IPMISIM_PORT

# call ARGS...: bmc-call against the simulator with the good credentials
# and suite 3, like run ($rc, $out, $err). The first timeout is above the
# hook's ~1 s, so that a change is not sent twice.
call() {
	run "$BMC_CALL" --port "$PORT" --user "$U" --password-file "$IB_TMP/pw" --cipher 3 \
		--timeout-ms 3000 --retries 2 "$@"
}
# ipmi ARGS...: ipmitool on the same simulator.
ipmi() {
	run ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "$PORT" -U "$U" -P "$P" -N 3 -R 2 "$@"
}

mark() { _mark=$(ipmisim_calls | wc -l); }
since() { ipmisim_calls | tail -n +$((_mark + 1)) | paste -sd, -; }
power_is() { ipmisim_state | grep -q "^power:$1 "; }

# status_agrees WANT: bmc-call's power status and ipmitool's are WANT.
status_agrees() {
	call power-status
	is "$rc $out" "0 $PORT power-status ok power=$1" "bmc-call: power status $1 ($2)"
	ipmi chassis power status
	is "$rc $out" "0 Chassis Power is $1" "ipmitool agrees: power status $1 ($2)"
}

# ---- power ----

is "$(ipmisim_state)" "power:0 boot:none" "the simulated machine starts off"
status_agrees off "at start"

mark
call power on
is "$rc $out" "0 $PORT power ok" "power on: ok"
is "$(ipmisim_state)" "power:1 boot:none" "power on: the hook's power is 1"
like "$(since)" "set power 1" "power on: the hook ran set power 1"
status_agrees on "after power on"

mark
call power off
is "$rc $out" "0 $PORT power ok" "power off: ok"
is "$(ipmisim_state)" "power:0 boot:none" "power off: the hook's power is 0"
status_agrees off "after power off"

call power on
mark
call power cycle
is "$rc $out" "0 $PORT power ok" "power cycle: ok"
cycled() { ipmisim_calls | tail -n +$((_mark + 1)) | grep -q '^set power 1$'; }
if wait_for 20 cycled; then
	pass "power cycle: the hook ran set power 1 again"
else
	fail "power cycle: the hook ran set power 1 again" "calls: $(since)"
fi
like "$(since)" "set power 0,(.*,)?set power 1" "power cycle: off first, then on"
wait_for 10 power_is 1
status_agrees on "after power cycle"

mark
call power reset
is "$rc $out" "0 $PORT power ok" "power reset: ok"
like "$(since)" "set reset 1" "power reset: the hook ran set reset 1"
unlike "$(since)" "set power" "power reset: the power was not switched"
status_agrees on "after power reset"

mark
call power soft
is "$rc $out" "0 $PORT power ok" "power soft: ok"
like "$(since)" "set shutdown 1" "power soft: the hook ran set shutdown 1"
is "$(ipmisim_state)" "power:0 boot:none" "power soft: the simulated OS shut down"
status_agrees off "after power soft"

# ---- boot device ----

# bootdev DEV HOOK SELECTOR [OPTION...]: bmc-call bootdev DEV [OPTION...]
# sets the hook's boot to HOOK; bmc-call reads DEV back and ipmitool
# reads SELECTOR.
bootdev() {
	_dev=$1 _hook=$2 _sel=$3
	shift 3
	_what="bootdev $_dev${*:+ $*}"
	mark
	call bootdev "$_dev" "$@"
	is "$rc $out" "0 $PORT bootdev ok" "$_what: ok"
	is "$(ipmisim_state)" "power:0 boot:$_hook" "$_what: the hook's boot is $_hook"
	like "$(since)" "set boot $_hook" "$_what: the hook ran set boot $_hook"
	call bootdev-get
	is "$rc $out" "0 $PORT bootdev-get ok boot=unknown device=$_dev" "$_what: bmc-call reads $_dev back"
	ipmi chassis bootparam get 5
	like "$out" "Boot Device Selector : $_sel\$" "$_what: ipmitool reads $_sel back"
}

bootdev pxe pxe "Force PXE"
bootdev disk default "Force Boot from default Hard-Drive"
bootdev bios bios "Force Boot into BIOS Setup"
bootdev cdrom cdrom "Force Boot from CD/DVD"
bootdev pxe pxe "Force PXE" persistent efi
bootdev disk default "Force Boot from default Hard-Drive" persistent

# ---- one session for many calls ----

call --summary power-status + bootdev-get + power on + power-status + power off + power-status
is "$rc" 0 "a sequence of six calls: all ok"
like "$out" "^calls=6 failed=0 seconds=[0-9.]+ sessions=1\$" "a sequence of six calls: one session"
is "$(printf '%s\n' "$out" | grep -c "power-status ok power=")" 3 "a sequence: three power statuses"
like "$out" "^$PORT power-status ok power=on\$" "a sequence: the power was on in between"
is "$(ipmisim_state)" "power:0 boot:default" "a sequence: the machine ends off"

# ---- what fails ----

state=$(ipmisim_state)
mark
run "$BMC_CALL" --port "$PORT" --user "$U" --password-file "$IB_TMP/badpw" --cipher 3 power on
is "$rc" 1 "a wrong password: bmc-call exits 1"
like "$out" "^$PORT power fail=auth message=authentication failed: " "a wrong password: fail=auth, an authentication message"
unlike "$out$err" "not-the-password|s3cret" "a wrong password: no password in the output"
is "$(since)" "" "a wrong password: the hook never ran"
is "$(ipmisim_state)" "$state" "a wrong password: nothing changed"

run "$BMC_CALL" --port "$PORT" --user nobody --password-file "$IB_TMP/pw" --cipher 3 power-status
like "$out" "^$PORT power-status fail=auth message=authentication failed: RAKP 2: unauthorized name" "an unknown user: RAKP 2 unauthorized name"

run "$BMC_CALL" --port "$PORT" --user "$U" --password-file "$IB_TMP/pw" --cipher 2 power-status
like "$out" "^$PORT power-status fail=unsupported message=cipher suite 2 not supported" "cipher suite 2: unsupported, said before any packet"
run "$BMC_CALL" --port "$PORT" --user "$U" --password-file "$IB_TMP/pw" --cipher 17 power-status
like "$out" "^$PORT power-status fail=unsupported message=Open Session: cipher suite 17 refused" "cipher suite 17: ipmi_sim refuses it in Open Session"

# Host names are looked up without blocking; one that does not resolve
# fails as a network failure naming it.
run "$BMC_CALL" --host localhost --port "$PORT" --user "$U" --password-file "$IB_TMP/pw" \
	--cipher 3 power-status
is "$rc $out" "0 $PORT power-status ok power=off" "the host name localhost: power status"
run "$BMC_CALL" --host no-such-bmc.invalid --port "$PORT" --user "$U" \
	--password-file "$IB_TMP/pw" --cipher 3 power-status
like "$out" "^$PORT power-status fail=network message=host name lookup of no-such-bmc\.invalid: " "a host name that does not resolve: fail=network"

# A dead BMC beside a live one: the live one is answered first, the dead
# one ends by the engine's own retries (2 s, then 4 s).
dead=$(ib_free_port udp) || bail_out "no free UDP port"
run "$BMC_CALL" --port "$dead" --port "$PORT" --user "$U" --password-file "$IB_TMP/pw" \
	--cipher 3 --timeout-ms 2000 --retries 1 power-status
is "$rc" 1 "a dead BMC beside a live one: bmc-call exits 1"
is "$(printf '%s\n' "$out" | head -n 1)" "$PORT power-status ok power=off" "the live BMC is answered first"
like "$out" "^$dead power-status fail=timeout message=no answer from 127\.0\.0\.1:$dead after 2 tries \(Get Channel Authentication Capabilities\)\$" "the dead BMC: fail=timeout, after 2 tries"

ipmisim_refuse on
state=$(ipmisim_state)
call bootdev cdrom
is "$rc" 1 "a refused boot device: bmc-call exits 1"
like "$out" "^$PORT bootdev fail=refused message=Set System Boot Options: completion code 0x[0-9a-f]{2} " "a refused boot device: fail=refused with the completion code"
call power on
like "$out" "^$PORT power fail=refused message=Chassis Control: completion code 0x[0-9a-f]{2} " "a refused power on: fail=refused with the completion code"
is "$(ipmisim_state)" "$state" "refused changes: nothing changed"
ipmisim_refuse off

# ---- two BMCs at once ----

first=$IPMISIM_DIR
ipmisim_start "" "$U" "$P" || bail_out "a second ipmi_sim did not start"
second=$IPMISIM_PORT
run "$BMC_CALL" --port "$PORT" --port "$second" --user "$U" --password-file "$IB_TMP/pw" \
	--cipher 3 --timeout-ms 3000 --retries 2 --summary power on + power-status
is "$rc" 0 "two BMCs at once: both ok"
like "$out" "^$PORT power-status ok power=on\$" "two BMCs: the first is on"
like "$out" "^$second power-status ok power=on\$" "two BMCs: the second is on"
like "$out" "^calls=4 failed=0 seconds=[0-9.]+ sessions=2\$" "two BMCs: one session each"
is "$(ipmisim_state "$first")" "power:1 boot:default" "two BMCs: the first simulator's hook is on"
is "$(ipmisim_state)" "power:1 boot:none" "two BMCs: the second simulator's hook is on"

tap_done
