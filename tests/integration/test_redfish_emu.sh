#!/bin/sh
# test_redfish_emu — the Redfish emulator of tests/redfish/ proven with the
# real clients before any ironbell code relies on it: redfishtool (root,
# Systems list/get/reset/setBootOverride) and python3-sushy (session and
# Basic login, get_system, reset_system, set_system_boot_options, virtual
# media), over TLS with a self-signed certificate; each result is checked
# against the emulator's own state (/emu/state). Then with curl: If-Match
# with a stale ETag gets 412, a wrong password 401, a boot uses up a Once
# override, each fault a test can ask for (not JSON, 500, a redirect to
# another host, a closed connection) happens once, a vendor without
# PowerCycle refuses it with 400 and a Redfish error body, a 202 task
# monitor is followed to completion, three BMCs in one process keep their
# own state, a --hook drives a machine's power (the override's device,
# then power on; a machine that went off reads Off; a failing hook 500),
# and SIGTERM stops the emulator.
# Needs redfishtool, python3-sushy, openssl and curl.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/redfish/emu.sh"

PY=/usr/bin/python3
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
command -v redfishtool >/dev/null 2>&1 || skip_all "redfishtool is not installed"
"$PY" -c 'import sushy' 2>/dev/null || skip_all "python3-sushy is not installed"

# python-requests (redfishtool, sushy) and curl take these over their own
# settings; the certificate here is self-signed.
unset REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE

emu_cert cert || bail_out "openssl cannot make a certificate"

BMC_USER='admin'
BMC_PASS=s3cret-pw

# rft URL ARGS...: redfishtool over https with a session login.
rft() {
	_u=$1
	shift
	run redfishtool -r "${_u#https://}" -S Always -A Session -u "$BMC_USER" \
		-p "$BMC_PASS" -T 20 "$@"
}

# code ARGS...: curl, prints only the HTTP status code; the body is in
# $IB_TMP/body, the headers in $IB_TMP/headers.
code() {
	curl -s --max-time 10 --cacert "$CERT" -o "$IB_TMP/body" \
		-D "$IB_TMP/headers" -w '%{http_code}' "$@"
}

# ---- A: generic vendor, two systems ----
emu_start a --systems 2 || bail_out "the emulator did not start"
A=$EMU_URL
A_PID=$EMU_PID

is "$(code "$A/redfish/v1")" 200 "service root over TLS, verified against the certificate, without auth"
is "$(code "$A/redfish")" 200 "GET /redfish without auth"
curl -s --max-time 10 -o /dev/null "$A/redfish/v1"
is "$?" 60 "without the certificate curl refuses the self-signed one"
is "$(code "$A/redfish/v1/Systems")" 401 "the Systems collection needs authentication"
like "$(cat "$IB_TMP/headers")" '^WWW-Authenticate: Basic' "401 names Basic"
is "$(code -u "$BMC_USER:$BMC_PASS" "$A/redfish/v1/Systems")" 200 "Basic auth"
is "$(code -u "$BMC_USER:wrong" "$A/redfish/v1/Systems")" 401 "a wrong password gets 401 (Basic)"
is "$(code -H 'Content-Type: application/json' \
	-d "{\"UserName\":\"$BMC_USER\",\"Password\":\"wrong\"}" \
	"$A/redfish/v1/SessionService/Sessions")" 401 "a wrong password gets 401 (session login)"
like "$(cat "$IB_TMP/body")" '"MessageId": "Base\.[0-9.]+\.NoValidSession"' "401 has a Redfish error body"

# A session by hand: 201 + X-Auth-Token + Location, used, then deleted.
is "$(code -H 'Content-Type: application/json' \
	-d "{\"UserName\":\"$BMC_USER\",\"Password\":\"$BMC_PASS\"}" \
	"$A/redfish/v1/SessionService/Sessions")" 201 "session login gets 201"
TOKEN=$(sed -n 's/^X-Auth-Token: *\([0-9a-f]*\).*/\1/p' "$IB_TMP/headers")
LOC=$(sed -n 's/^Location: *\([^[:space:]]*\).*/\1/p' "$IB_TMP/headers")
like "$TOKEN" '^[0-9a-f]{32}$' "the session has an X-Auth-Token"
like "$LOC" '^/redfish/v1/SessionService/Sessions/[0-9]+$' "the session has a Location"
is "$(code -H "X-Auth-Token: $TOKEN" "$A/redfish/v1/Systems/1")" 200 "the token authenticates"
is "$(code -X DELETE -H "X-Auth-Token: $TOKEN" "$A$LOC")" 204 "DELETE of the session"
is "$(code -H "X-Auth-Token: $TOKEN" "$A/redfish/v1/Systems/1")" 401 "the deleted session's token no longer works"

is "$(code -H 'Connection: close' "$A/redfish/v1")" 200 "a request with Connection: close"
like "$(cat "$IB_TMP/headers")" '^Connection: close' "Connection: close is echoed"

# ---- redfishtool ----
rft "$A" root
if [ "$rc" -eq 0 ]; then pass "redfishtool root"; else fail "redfishtool root" "$err"; fi
like "$out" '"RedfishVersion": "1\.6\.0"' "redfishtool root shows the service root"
rft "$A" Systems list
is "$rc" 0 "redfishtool Systems list"
like "$out" '"Members@odata.count": 2' "redfishtool lists both systems"
rft "$A" -I 1 Systems get
is "$rc" 0 "redfishtool Systems get"
like "$out" '"PowerState": "Off"' "redfishtool reads PowerState Off"

rft "$A" -I 1 Systems reset On
is "$rc" 0 "redfishtool Systems reset On"
is "$(st "$A" systems/1/PowerState)" On "after reset On the system is on"
rft "$A" -I 1 Systems reset GracefulRestart
is "$rc" 0 "redfishtool Systems reset GracefulRestart"
is "$(st "$A" systems/1/Resets/1)" GracefulRestart "the emulator saw GracefulRestart"
is "$(st "$A" systems/1/PowerState)" On "after GracefulRestart the system is on"
rft "$A" -I 1 Systems reset ForceOff
is "$rc" 0 "redfishtool Systems reset ForceOff"
is "$(st "$A" systems/1/PowerState)" Off "after ForceOff the system is off"
is "$(st "$A" systems/2/PowerState)" Off "the other system was left alone"

rft "$A" -I 1 Systems setBootOverride Once Pxe
is "$rc" 0 "redfishtool Systems setBootOverride Once Pxe"
is "$(st "$A" systems/1/Boot/BootSourceOverrideTarget)" Pxe "boot override target Pxe"
is "$(st "$A" systems/1/Boot/BootSourceOverrideEnabled)" Once "boot override enabled Once"
is "$(st "$A" systems/1/IfMatchPatches)" 1 "redfishtool sent back the ETag in If-Match"
is "$(st "$A" sessions)" 0 "redfishtool deleted its sessions"

run redfishtool -r "${A#https://}" -S Always -A Basic -u "$BMC_USER" -p wrong -T 20 -I 1 Systems get
if [ "$rc" -ne 0 ]; then pass "redfishtool with a wrong password fails"; else fail "redfishtool with a wrong password fails" "$out"; fi

# ---- sushy ----
cat >"$IB_TMP/sushy_a.py" <<'EOF'
import sys, warnings
import sushy
from sushy import auth
warnings.simplefilter("ignore")
url, user, pw, cert = sys.argv[1:5]

# A session, the certificate verified.
s = sushy.Sushy(url, auth=auth.SessionAuth(user, pw), verify=cert)
print("session", s._auth.get_session_resource_id())
sy = s.get_system("/redfish/v1/Systems/2")
print("power0", sy.power_state.value)
print("allowed", ",".join(sorted(v.value for v in
                                 sy.get_allowed_reset_system_values())))
sy.reset_system(sushy.ResetType.ON)
sy.refresh()
print("power1", sy.power_state.value)
sy.set_system_boot_options(target=sushy.BOOT_SOURCE_TARGET_PXE,
                           enabled=sushy.BOOT_SOURCE_ENABLED_ONCE,
                           mode=sushy.BOOT_SOURCE_MODE_UEFI)
sy.refresh()
print("boot", sy.boot.target.value, sy.boot.enabled.value, sy.boot.mode.value)
sys.stdout.flush()
s._auth.close()

# Basic, without verification.
b = sushy.Sushy(url, auth=auth.BasicAuth(user, pw), verify=False)
sy = b.get_system("/redfish/v1/Systems/2")
sy.reset_system(sushy.ResetType.FORCE_OFF)
sy.refresh()
print("power2", sy.power_state.value)
vm = b.get_manager("/redfish/v1/Managers/BMC").virtual_media.get_member(
    "/redfish/v1/Managers/BMC/VirtualMedia/Cd")
vm.insert_media("http://192.0.2.1/boot.iso", inserted=True,
                write_protected=True)
vm.refresh()
print("media", vm.inserted, vm.image)
vm.eject_media()
vm.refresh()
print("ejected", vm.inserted)
try:
    sushy.Sushy(url, auth=auth.BasicAuth(user, "wrong"),
                verify=False).get_system("/redfish/v1/Systems/2")
    print("wrongpw accepted")
except sushy.exceptions.AccessError as e:
    print("wrongpw", e.status_code)
EOF
run "$PY" "$IB_TMP/sushy_a.py" "$A" "$BMC_USER" "$BMC_PASS" "$CERT"
is "$rc" 0 "the sushy script ran"
[ "$rc" -eq 0 ] || diag "$err"
like "$out" '^session /redfish/v1/SessionService/Sessions/[0-9]+$' "sushy logged in with a session"
like "$out" '^power0 Off$' "sushy get_system reads PowerState Off"
like "$out" '^allowed .*PowerCycle' "sushy reads the allowed reset types"
like "$out" '^power1 On$' "sushy reset_system On, read back"
like "$out" '^boot Pxe Once UEFI$' "sushy set_system_boot_options Pxe/Once/UEFI, read back"
is "$(st "$A" systems/2/Boot)" '{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}' "the emulator holds sushy's boot override"
is "$(st "$A" systems/2/IfMatchPatches)" 1 "sushy sent back the ETag in If-Match"
like "$out" '^power2 Off$' "sushy with Basic: reset_system ForceOff, read back"
is "$(st "$A" systems/2/PowerState)" Off "the emulator holds sushy's ForceOff"
like "$out" '^media True http://192\.0\.2\.1/boot\.iso$' "sushy inserts virtual media"
like "$out" '^ejected False$' "sushy ejects virtual media"
like "$out" '^wrongpw 401$' "sushy with a wrong password gets 401"
is "$(st "$A" sessions)" 0 "sushy deleted its session"

# A boot uses up the Once override and records the device.
is "$(code -u "$BMC_USER:$BMC_PASS" -H 'Content-Type: application/json' \
	-d '{"ResetType":"On"}' \
	"$A/redfish/v1/Systems/2/Actions/ComputerSystem.Reset")" 204 "reset On gets 204"
is "$(st "$A" systems/2/Boots)" '["Default", "Pxe"]' "the system booted from Pxe after sushy's override"
is "$(st "$A" systems/2/Boot/BootSourceOverrideEnabled)" Disabled "the boot used up the Once override"

# ---- ETags ----
is "$(code -u "$BMC_USER:$BMC_PASS" "$A/redfish/v1/Systems/1")" 200 "GET a system"
ETAG=$(sed -n 's/^ETag: *\(.*[^[:space:]]\).*/\1/p' "$IB_TMP/headers")
like "$ETAG" '^W/"[0-9a-f]+"$' "the system has an ETag"
is "$(code -u "$BMC_USER:$BMC_PASS" -X PATCH -H 'Content-Type: application/json' \
	-H 'If-Match: W/"deadbeef"' \
	-d '{"Boot":{"BootSourceOverrideTarget":"Hdd"}}' \
	"$A/redfish/v1/Systems/1")" 412 "PATCH with a stale If-Match gets 412"
like "$(cat "$IB_TMP/body")" '"MessageId": "Base\.[0-9.]+\.PreconditionFailed"' "412 has a Redfish error body"
is "$(st "$A" systems/1/Boot/BootSourceOverrideTarget)" Pxe "the 412 changed nothing"
is "$(code -u "$BMC_USER:$BMC_PASS" -X PATCH -H 'Content-Type: application/json' \
	-H "If-Match: $ETAG" \
	-d '{"Boot":{"BootSourceOverrideTarget":"Hdd"}}' \
	"$A/redfish/v1/Systems/1")" 200 "PATCH with the served ETag gets 200"
is "$(st "$A" systems/1/Boot/BootSourceOverrideTarget)" Hdd "the PATCH took"
is "$(code -u "$BMC_USER:$BMC_PASS" -X PATCH -H 'Content-Type: application/json' \
	-H "If-Match: $ETAG" \
	-d '{"Boot":{"BootSourceOverrideTarget":"Pxe"}}' \
	"$A/redfish/v1/Systems/1")" 412 "the same ETag again is stale: 412"
is "$(code -u "$BMC_USER:$BMC_PASS" -X PATCH -H 'Content-Type: application/json' \
	-d '{"Boot":{"BootSourceOverrideTarget":"Floppy"}}' \
	"$A/redfish/v1/Systems/1")" 400 "a target outside AllowableValues gets 400"

# ---- faults and the back door ----
fault() {
	code -X PATCH -H 'Content-Type: application/json' \
		-d "{\"Mode\":\"$1\",\"Count\":1}" "$A/emu/state/fault"
}
is "$(fault not-json)" 204 "a not-json fault is set"
is "$(code -u "$BMC_USER:$BMC_PASS" "$A/redfish/v1/Systems/1")" 200 "the faulty answer has status 200"
"$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$IB_TMP/body" 2>/dev/null
is "$?" 1 "its body is not JSON"
is "$(code -u "$BMC_USER:$BMC_PASS" "$A/redfish/v1/Systems/1")" 200 "the fault was used up"
like "$(cat "$IB_TMP/body")" '"PowerState"' "the next answer is the system"
is "$(fault 500)" 204 "a 500 fault is set"
is "$(code -u "$BMC_USER:$BMC_PASS" "$A/redfish/v1/Systems/1")" 500 "500 fault"
like "$(cat "$IB_TMP/body")" '"MessageId": "Base\.[0-9.]+\.InternalError"' "500 has a Redfish error body"
is "$(fault redirect)" 204 "a redirect fault is set"
is "$(code -u "$BMC_USER:$BMC_PASS" "$A/redfish/v1/Systems/1")" 302 "redirect fault"
like "$(cat "$IB_TMP/headers")" '^Location: https://192\.0\.2\.1/redfish/v1/Systems/1' "it redirects to another host"
is "$(fault close)" 204 "a close fault is set"
code -u "$BMC_USER:$BMC_PASS" "$A/redfish/v1/Systems/1" >/dev/null
is "$?" 52 "close fault: curl gets an empty reply"
is "$(fault bogus)" 400 "an unknown fault is refused"
is "$(code -X PATCH -H 'Content-Type: application/json' -d '{"PowerState":"On"}' \
	"$A/emu/state/systems/1")" 204 "the back door turns system 1 on"
is "$(st "$A" systems/1/PowerState)" On "system 1 is on"
is "$(st "$A" systems/1/Boots)" '["Default", "Default"]' "without a boot recorded"

# ---- B: a vendor without PowerCycle, a 202 task monitor ----
emu_start b --vendor no-powercycle --task-polls 3 || bail_out "the second emulator did not start"
B=$EMU_URL
B_PID=$EMU_PID

is "$(code -u "$BMC_USER:$BMC_PASS" "$B/redfish/v1/Systems/1")" 200 "GET the no-PowerCycle system"
unlike "$(cat "$IB_TMP/body")" 'PowerCycle' "its AllowableValues lack PowerCycle"
rft "$B" -1 Systems reset PowerCycle
if [ "$rc" -ne 0 ]; then pass "redfishtool refuses PowerCycle there"; else fail "redfishtool refuses PowerCycle there" "$out"; fi

cat >"$IB_TMP/sushy_b.py" <<'EOF'
import sys, warnings
import sushy
from sushy import auth
warnings.simplefilter("ignore")
url, user, pw, cert = sys.argv[1:5]
s = sushy.Sushy(url, auth=auth.SessionAuth(user, pw), verify=cert)
sy = s.get_system()
print("system", sy.identity)
try:
    sy.reset_system(sushy.ResetType.POWER_CYCLE)
    print("powercycle accepted")
except sushy.exceptions.InvalidParameterValueError:
    print("powercycle refused")
s._auth.close()
EOF
run "$PY" "$IB_TMP/sushy_b.py" "$B" "$BMC_USER" "$BMC_PASS" "$CERT"
is "$rc" 0 "the second sushy script ran"
[ "$rc" -eq 0 ] || diag "$err"
like "$out" '^system 1$' "sushy get_system finds the only system"
like "$out" '^powercycle refused$' "sushy refuses PowerCycle from AllowableValues"
is "$(code -u "$BMC_USER:$BMC_PASS" -H 'Content-Type: application/json' \
	-d '{"ResetType":"PowerCycle"}' \
	"$B/redfish/v1/Systems/1/Actions/ComputerSystem.Reset")" 400 "a raw PowerCycle gets 400"
like "$(cat "$IB_TMP/body")" '"MessageId": "Base\.[0-9.]+\.ActionParameterValueNotInList"' "400 has a Redfish error body naming the value"
is "$(st "$B" systems/1/Resets)" '[]' "no reset was done"

is "$(code -u "$BMC_USER:$BMC_PASS" -H 'Content-Type: application/json' \
	-d '{"ResetType":"On"}' \
	"$B/redfish/v1/Systems/1/Actions/ComputerSystem.Reset")" 202 "reset On gets 202"
MON=$(sed -n 's/^Location: *\([^[:space:]]*\).*/\1/p' "$IB_TMP/headers")
like "$MON" '^/redfish/v1/TaskService/TaskMonitors/[0-9]+$' "202 has a task monitor Location"
is "$(st "$B" systems/1/PowerState)" Off "the task has not run yet"
# Follow the monitor: 202 while running, 200 when done (at the 3rd GET).
polls=0
status=202
while [ "$status" = 202 ] && [ $polls -lt 20 ]; do
	status=$(code -u "$BMC_USER:$BMC_PASS" "$B$MON")
	polls=$((polls + 1))
done
is "$status" 200 "the task monitor ends with 200"
is "$polls" 3 "after the 3 polls asked for"
like "$(cat "$IB_TMP/body")" '"TaskState": "Completed"' "the task is Completed"
is "$(st "$B" systems/1/PowerState)" On "the system is on once the task completed"

# ---- C: three BMCs in one process ----
emu_start c --bmcs 3 || bail_out "the third emulator did not start"
C_PID=$EMU_PID
is "$(printf '%s\n' "$EMU_PORTS" | sort -u | grep -c .)" 3 "three BMCs on three ports"
C2=https://127.0.0.1:$(printf '%s\n' "$EMU_PORTS" | sed -n 2p)
rft "$C2" -1 Systems reset On
is "$rc" 0 "redfishtool resets the second BMC's system"
for n in 1 2 3; do
	got=$(st "https://127.0.0.1:$(printf '%s\n' "$EMU_PORTS" | sed -n ${n}p)" systems/1/PowerState)
	if [ $n -eq 2 ]; then want=On; else want=Off; fi
	is "$got" "$want" "BMC $n has its own state ($want)"
done

# ---- D: --hook, the machine's power through a chassis_control hook ----
# A stand-in for tests/e2e/vm-bmc.sh: the power in a file, every call
# logged; it fails while the file "fail" exists.
H=$IB_TMP/hook
mkdir -p "$H" || bail_out "cannot make $H"
echo 0 >"$H/power"
cat >"$H/hook.sh" <<'EOF'
d=$1
shift
echo "$*" >>"$d/calls.log"
[ -f "$d/fail" ] && { echo "the machine is broken"; exit 1; }
case $1:$2:${3:-} in
get:power:) echo "power:$(cat "$d/power")" ;;
set:power:*) echo "$3" >"$d/power" ;;
set:reset:1 | set:boot:*) ;;
*) echo "unknown $*"; exit 1 ;;
esac
EOF
calls() { grep '^set ' "$H/calls.log" 2>/dev/null | tr '\n' ';'; }
run "$PY" "$EMU" --hook "/bin/sh $H/hook.sh $H" --systems 2
is "$rc" 2 "--hook with two systems is refused (usage error)"
emu_start d --hook "/bin/sh '$H/hook.sh' '$H'" || bail_out "the fourth emulator did not start"
D=$EMU_URL
D_PID=$EMU_PID
rft "$D" -1 Systems get
like "$out" '"PowerState": "Off"' "hook: PowerState Off, as the hook reads it"
rft "$D" -1 Systems setBootOverride Once Pxe
is "$rc" 0 "hook: setBootOverride Once Pxe"
is "$(calls)" "" "hook: the override alone calls nothing"
rft "$D" -1 Systems reset On
is "$rc" 0 "hook: reset On"
is "$(calls)" "set boot pxe;set power 1;" "hook: the override's device, then power on"
is "$(cat "$H/power")" 1 "hook: the machine is on"
is "$(st "$D" systems/1/Boots/-1)" Pxe "hook: the boot recorded from Pxe"
echo 0 >"$H/power"
rft "$D" -1 Systems get
like "$out" '"PowerState": "Off"' "hook: a machine that went off by itself reads Off"
: >"$H/calls.log"
rft "$D" -1 Systems reset On
is "$(calls)" "set power 1;" "hook: the Once override is used up: power on alone"
rft "$D" -1 Systems reset ForceRestart
is "$(calls)" "set power 1;set reset 1;" "hook: ForceRestart of a running machine resets it"
rft "$D" -1 Systems reset ForceOff
is "$(calls)" "set power 1;set reset 1;set power 0;" "hook: ForceOff powers it off"
rft "$D" -1 Systems reset ForceOff
is "$(calls)" "set power 1;set reset 1;set power 0;" "hook: ForceOff of an off machine calls nothing"
: >"$H/fail"
is "$(code -u "$BMC_USER:$BMC_PASS" -H 'Content-Type: application/json' \
	-d '{"ResetType":"On"}' "$D/redfish/v1/Systems/1/Actions/ComputerSystem.Reset")" 500 \
	"hook: a failing hook makes the reset fail with 500"
like "$(cat "$IB_TMP/body")" 'the machine is broken' "hook: with the hook's message"
rm -f "$H/fail"
ib_kill "$D_PID" 10
is "$IB_KILL_STATUS" 0 "SIGTERM stops the emulator with a hook cleanly"

# ---- SIGTERM ----
ib_kill "$A_PID" 10
is "$IB_KILL_STATUS" 0 "SIGTERM stops the first emulator cleanly"
ib_kill "$B_PID" 10
is "$IB_KILL_STATUS" 0 "SIGTERM stops the second emulator cleanly"
ib_kill "$C_PID" 10
is "$IB_KILL_STATUS" 0 "SIGTERM stops the three BMCs cleanly"
unlike "$(cat "$IB_TMP/a.log" "$IB_TMP/b.log" "$IB_TMP/c.log" "$IB_TMP/d.log")" "$BMC_PASS|Traceback" "the logs hold no password and no traceback"

tap_done
