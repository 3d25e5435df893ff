#!/bin/sh
# test_bmc_redfish — the Redfish engine (bmc/redfish/) driven by bmc-call,
# without the daemon, against the emulator of tests/redfish/ over TLS with
# a self-signed certificate; every result is checked against the
# emulator's own state (/emu/state): certificate verification (with the CA
# file, without it, --insecure), session login and its DELETE at exit,
# Basic without a session, each power action, a vendor without PowerCycle
# (a cycle is ForceOff + On), each boot device read back, the If-Match
# retry after a change behind the client, a new login after a session
# expired, a 202 task monitor (and a task that fails), one connection
# for a run's requests (keep-alive), virtual
# media, each fault (500, not JSON, a redirect to another host, a body too
# large, a closed connection, a wrong password, a BMC that never answers),
# the system chosen by name and an unknown name listing the Ids, a vendor
# whose boot override goes to the Settings object, many BMCs at once.
# Needs openssl and curl.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/redfish/emu.sh"

PY=/usr/bin/python3
CALL=$top_builddir/tests/bmc/bmc-call
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
[ -x "$CALL" ] || bail_out "tests/bmc/bmc-call is not built"

# The engine verifies with --ca-file only: none of these may stand in.
unset REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR

emu_cert cert || bail_out "openssl cannot make a certificate"

BMC_USER='admin'
BMC_PASS=s3cret-pw
printf '%s\n' "$BMC_PASS" >"$IB_TMP/pw"
printf 'wrong\n' >"$IB_TMP/badpw"

# fault URL MODE: the emulator's next request gets MODE.
fault() {
	curl -s --max-time 10 --cacert "$CERT" -o /dev/null -w '%{http_code}' -X PATCH \
		-H 'Content-Type: application/json' -d "{\"Mode\":\"$2\",\"Count\":1}" \
		"$1/emu/state/fault"
}

# rf PORT ARGS...: bmc-call with the Redfish engine, the CA file and the
# credentials; output in $out, status in $rc.
rf() {
	_p=$1
	shift
	run "$CALL" --provider redfish --port "$_p" --user "$BMC_USER" \
		--password-file "$IB_TMP/pw" "$@"
}

# ---- A: generic vendor, two systems ----
emu_start a --systems 2 || bail_out "the emulator did not start"
A=$EMU_URL
AP=$EMU_PORT

rf "$AP" --ca-file "$CERT" --summary power-status
is "$rc" 0 "power-status, the certificate verified with --ca-file"
like "$out" "^$AP power-status ok power=off\$" "system 1 is off"
like "$out" 'sessions=1$' "one session was held"
is "$(st "$A" sessions)" 0 "the session was DELETEd at exit"
is "$(st "$A" sessions_created)" 1 "one login"

rf "$AP" power-status
is "$rc" 1 "without the CA file the self-signed certificate fails"
like "$out" "^$AP power-status fail=tls message=GET /redfish/v1: .*certificate" "fail=tls with curl's reason"
rf "$AP" --insecure power-status
is "$rc" 0 "--insecure: not verified, it works"

logins=$(st "$A" sessions_created)
rf "$AP" --ca-file "$CERT" --basic --summary power-status
is "$rc" 0 "--basic power-status"
like "$out" 'sessions=0$' "--basic holds no session"
is "$(st "$A" sessions_created)" "$logins" "--basic made no login"

# Each power action, read back from the emulator.
for step in "on On On" "off ForceOff Off" "on On On" "soft GracefulShutdown Off" \
	"reset ForceRestart On" "cycle PowerCycle On"; do
	set -- $step
	rf "$AP" --ca-file "$CERT" power "$1" + power-status
	is "$rc" 0 "power $1"
	is "$(st "$A" systems/1/Resets/-1)" "$2" "power $1 is ResetType $2"
	is "$(st "$A" systems/1/PowerState)" "$3" "after power $1 the system is $3"
	like "$out" "power-status ok power=$(echo "$3" | tr 'A-Z' 'a-z')\$" "power-status reads $3"
done
is "$(st "$A" systems/2/Resets)" '[]' "system 2 was left alone"

# Boot devices, read back through the emulator and bootdev-get.
for step in "pxe Pxe" "disk Hdd" "bios BiosSetup" "cdrom Cd" "http UefiHttp"; do
	set -- $step
	rf "$AP" --ca-file "$CERT" bootdev "$1" persistent efi + bootdev-get
	is "$rc" 0 "bootdev $1 persistent efi"
	is "$(st "$A" systems/1/Boot)" "{\"BootSourceOverrideTarget\": \"$2\", \"BootSourceOverrideEnabled\": \"Continuous\", \"BootSourceOverrideMode\": \"UEFI\"}" "the emulator holds $2 Continuous UEFI"
	like "$out" "bootdev-get ok boot=$1 persistent=1 efi=1\$" "bootdev-get reads $1 back"
done
rf "$AP" --ca-file "$CERT" bootdev pxe + bootdev-get
is "$(st "$A" systems/1/Boot)" '{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "Legacy"}' "bootdev pxe: Once, Legacy"
like "$out" 'bootdev-get ok boot=pxe persistent=0 efi=0$' "bootdev-get reads one-time legacy pxe"
is "$(st "$A" systems/1/IfMatchPatches)" 6 "every PATCH carried the ETag in If-Match"
rf "$AP" --ca-file "$CERT" bootdev safe
is "$rc" 1 "bootdev safe fails"
like "$out" 'bootdev fail=unsupported message=boot device SafeMode' "safe mode: unsupported, not advertised"

# A change between the client's GET and its PATCH: 412, GET, PATCH again.
is "$(fault "$A" etag-change)" 204 "an etag-change fault is set"
rf "$AP" --ca-file "$CERT" bootdev disk
is "$rc" 0 "bootdev disk after a change behind the client"
is "$(st "$A" systems/1/PreconditionFailed)" 1 "the first PATCH got 412"
is "$(st "$A" systems/1/IfMatchPatches)" 7 "the second, with the new ETag, took"
is "$(st "$A" systems/1/Boot/BootSourceOverrideTarget)" Hdd "the boot override is Hdd"

# A session that ends behind the client: 401, a new login, the same
# request again.
logins=$(st "$A" sessions_created)
is "$(fault "$A" expire-sessions)" 204 "an expire-sessions fault is set"
rf "$AP" --ca-file "$CERT" power-status
is "$rc" 0 "power-status after the session expired"
is "$(st "$A" fault/Count)" 0 "the session was expired under the client"
is "$(st "$A" sessions_created)" $((logins + 2)) "the client logged in again"
is "$(st "$A" sessions)" 0 "and DELETEd the new session"

# Virtual media.
rf "$AP" --ca-file "$CERT" media http://192.0.2.1/boot.iso
is "$rc" 0 "media insert"
is "$(st "$A" virtual_media)" '{"Image": "http://192.0.2.1/boot.iso", "Inserted": true}' "the emulator holds the image"
rf "$AP" --ca-file "$CERT" media http://192.0.2.1/other.iso
is "$rc" 0 "media insert over an inserted one (ejected first)"
is "$(st "$A" virtual_media/Image)" http://192.0.2.1/other.iso "the emulator holds the new image"
rf "$AP" --ca-file "$CERT" media-eject
is "$rc" 0 "media eject"
is "$(st "$A" virtual_media/Inserted)" False "the medium is out"

# Faults: each on the next request (the service root).
rf_fault() {
	is "$(fault "$A" "$1")" 204 "a $1 fault is set"
	rf "$AP" --ca-file "$CERT" --basic power-status
	is "$rc" 1 "$1: the call fails"
	like "$out" "^$AP power-status fail=$2 message=$3" "$1: fail=$2 with its message"
}
rf_fault 500 refused 'GET /redfish/v1: HTTP 500: The request failed due to an internal service error'
rf_fault not-json protocol 'GET /redfish/v1: body is not JSON: '
rf_fault redirect protocol 'GET /redfish/v1: HTTP 302: redirect to https://192\.0\.2\.1/redfish/v1 refused'
rf_fault huge protocol 'GET /redfish/v1: body larger than 1048576 bytes'
rf_fault close network 'GET /redfish/v1: '
is "$(st "$A" fault/Count)" 0 "every fault was used"

rf "$AP" --ca-file "$CERT" --password-file "$IB_TMP/badpw" power-status
like "$out" "fail=auth message=POST /redfish/v1/SessionService/Sessions: HTTP 401" "a wrong password: fail=auth (session)"
rf "$AP" --ca-file "$CERT" --basic --password-file "$IB_TMP/badpw" power-status
like "$out" "fail=auth message=GET /redfish/v1/Systems: HTTP 401" "a wrong password: fail=auth (Basic)"
unlike "$out" "wrong|$BMC_PASS" "no password in the messages"

# A BMC whose login error quotes the password sent (Base registry
# PropertyValueFormatError): the message must not.
is "$(fault "$A" echo-password)" 204 "an echo-password fault is set"
rf "$AP" --ca-file "$CERT" power-status
is "$rc" 1 "a login refused with the password quoted fails"
like "$out" "fail=refused message=POST /redfish/v1/SessionService/Sessions: HTTP 400" "fail=refused, HTTP 400"
unlike "$out" "$BMC_PASS" "the password the BMC quoted is not in the message"

# Systems by name.
rf "$AP" --ca-file "$CERT" --system 2 power on + power-status
is "$rc" 0 "--system 2 power on"
is "$(st "$A" systems/2/PowerState)" On "system 2 is on"
rf "$AP" --ca-file "$CERT" --system 7 power-status
is "$rc" 1 "--system 7 fails"
like "$out" 'fail=refused message=GET /redfish/v1/Systems: no system "7" among the Ids: 1, 2$' "an unknown system lists the Ids"

# A BMC that accepts the connection and never answers: a timeout.
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
time.sleep(120)' "$IB_TMP/mute.port" &
ib_bg $!
wait_for 10 test -s "$IB_TMP/mute.port" || bail_out "the mute listener did not start"
rf "$(cat "$IB_TMP/mute.port")" --ca-file "$CERT" --http-timeout-ms 500 power-status
like "$out" 'fail=timeout message=GET /redfish/v1: ' "a BMC that never answers: fail=timeout"
rf 1 --ca-file "$CERT" power-status
like "$out" '^1 power-status fail=network message=GET /redfish/v1: ' "connection refused: fail=network"

# ---- B: no PowerCycle, a 202 task monitor ----
emu_start b --vendor no-powercycle --task-polls 3 || bail_out "the second emulator did not start"
B=$EMU_URL
rf "$EMU_PORT" --ca-file "$CERT" power on + power cycle + power-status
is "$rc" 0 "no PowerCycle: power on, power cycle"
is "$(st "$B" systems/1/Resets)" '["On", "ForceOff", "On"]' "the cycle was ForceOff then On"
like "$out" 'power-status ok power=on$' "the system is on after the cycle"
is "$(st "$B" tasks/3/polls)" 3 "each reset's task monitor was followed to completion"
is "$(st "$B" tasks/3/done)" True "the last task is done"
is "$(st "$B" sessions)" 0 "the session was DELETEd"
# Keep-alive: one call after another, one connection (the emulator counts
# its TLS handshakes; st's own request is one of them).
c0=$(st "$B" connections)
rf "$EMU_PORT" --ca-file "$CERT" power-status + bootdev pxe + bootdev-get + power-status
is "$rc" 0 "four calls in a run"
is "$(($(st "$B" connections) - c0 - 1))" 1 "the run's requests all went over one connection"
is "$(fault "$B" task-exception)" 204 "a task-exception fault is set"
rf "$EMU_PORT" --ca-file "$CERT" power off
is "$rc" 1 "a reset whose task fails"
like "$out" 'power fail=refused message=/redfish/v1/TaskService/TaskMonitors/4: task Exception: The reset failed\.$' "fail=refused with the task's message"
is "$(st "$B" systems/1/PowerState)" On "the failed task changed nothing"

# ---- C: the boot override on the Settings object ----
emu_start c --vendor settings-boot || bail_out "the third emulator did not start"
C=$EMU_URL
rf "$EMU_PORT" --ca-file "$CERT" bootdev pxe persistent + bootdev-get
is "$rc" 0 "settings-boot vendor: bootdev pxe persistent"
is "$(st "$C" systems/1/SettingsPatches)" 1 "the PATCH went to the Settings object"
like "$out" 'bootdev-get ok boot=pxe persistent=1 efi=0$' "read back"

# ---- D: many BMCs at once ----
N=40
emu_start d --bmcs $N || bail_out "the fourth emulator did not start"
PORTARGS=
for p in $EMU_PORTS; do PORTARGS="$PORTARGS --port $p"; done
run "$CALL" --provider redfish $PORTARGS --user "$BMC_USER" --password-file "$IB_TMP/pw" \
	--ca-file "$CERT" --summary power on + power-status
is "$rc" 0 "$N BMCs at once: power on, power-status"
is "$(printf '%s\n' "$out" | grep -c ' power-status ok power=on$')" $N "each of the $N reads on"
like "$out" "^calls=$((2 * N)) failed=0 " "$((2 * N)) calls, none failed"
bad=0
for p in $EMU_PORTS; do
	[ "$(st "https://127.0.0.1:$p" systems/1/PowerState)" = On ] || bad=$((bad + 1))
	[ "$(st "https://127.0.0.1:$p" sessions)" = 0 ] || bad=$((bad + 1))
done
is "$bad" 0 "every emulated BMC is on, its session DELETEd"
# Fewer connection slots than BMCs: each BMC's discovery (service root,
# login, Systems, system) still goes over one connection, and one more
# at exit for its session's DELETE (the cache holds 4 connections only);
# a few more where a BMC's connection was evicted at a turn, but far from
# a connection per request (five a BMC).
c0=0
for p in $EMU_PORTS; do c0=$((c0 + $(st "https://127.0.0.1:$p" connections))); done
run "$CALL" --provider redfish $PORTARGS --user "$BMC_USER" --password-file "$IB_TMP/pw" \
	--ca-file "$CERT" --max-connections 4 --summary power-status
is "$rc" 0 "$N BMCs through 4 connections: power-status"
c1=0
for p in $EMU_PORTS; do c1=$((c1 + $(st "https://127.0.0.1:$p" connections))); done
# Less the state queries' own connections, one per BMC.
ok "a connection per BMC for its calls, one for its DELETE ($((c1 - c0 - N)) for $N)" \
	[ $((c1 - c0 - N)) -le $((3 * N)) ]

unlike "$(cat "$IB_TMP"/*.log)" "$BMC_PASS|Traceback" "the emulator logs hold no password and no traceback"

tap_done
