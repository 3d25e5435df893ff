#!/bin/sh
# test_bmc_daemon_redfish — BMC control end to end over Redfish: the real
# ironbelld against tests/redfish/redfish_emu.py over TLS, its certificate
# verified with bmc.redfish.ca_file. A Machine (preferredOrder gofish,
# redfish.systemName picking one of two systems) gets its power state and
# Contactable; `ironbell power on` reaches the emulator; a Job off ->
# one-time PXE (UEFI) -> on -> persistent disk boots the system from PXE
# once and leaves it on disk, read back; the desired-power annotation
# brings back a system turned off behind the daemon's back; a BMC whose
# certificate does not verify gives Contactable=False naming the
# certificate; the password is in no output. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/redfish/emu.sh"
. "$top_srcdir/tests/integration/bmc/objects.sh"

PY=/usr/bin/python3
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
[ -x "$PY" ] || skip_all "no /usr/bin/python3"
# The daemon verifies with bmc.redfish.ca_file only.
unset REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR

U=admin
P=Rf-$$-secret.Pw
P64=$(printf '%s' "$P" | base64)
WAIT=60

BMC_USER=$U
BMC_PASS=$P
emu_cert other || bail_out "openssl cannot make a certificate"
emu_start untrusted || bail_out "the second emulator did not start"
UNTRUSTED=$EMU_PORT
emu_cert good || bail_out "openssl cannot make a certificate"
emu_start rf --systems 2 || bail_out "the emulator did not start"
RF=$EMU_PORT
RF_URL=$EMU_URL
st_is() { [ "$(st "$RF_URL" "$1")" = "$2" ]; }

ib_write_config "bmc:
  enabled: true
  redfish:
    ca_file: $CERT
    timeout: 10000
  poll_interval: 1
  task_timeout: 60
  verify_interval: 200" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

machine_yaml() { # NAME PORT SYSTEM
	cat <<EOF
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata:
  name: $1
spec:
  connection:
    host: 127.0.0.1
    port: $2
    insecureTLS: false
    authSecretRef: {name: bmc-rf, namespace: default}
    providerOptions:
      preferredOrder: [gofish]
      redfish:
        port: $2
        systemName: "$3"
EOF
}
{
	printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-rf\n'
	printf 'stringData:\n  username: %s\n  password: "%s"\n---\n' "$U" "$P"
	machine_yaml rf2 "$RF" 2
} >"$IB_TMP/rf.yaml"
ibc apply -f "$IB_TMP/rf.yaml"
is "$rc" 0 "apply of a Secret and a Redfish Machine"
ok "rf2: powerState off, Contactable True" wait_for "$WAIT" machine_is rf2 off True

ibc power on rf2 --timeout 60s
is "$rc" 0 "ironbell power on rf2: exit 0"
[ "$rc" = 0 ] || diag "$out $err"
is "$(st "$RF_URL" systems/2/PowerState)" "On" "system 2 is on"
is "$(st "$RF_URL" systems/1/PowerState)" "Off" "system 1 is not touched"
is "$(st "$RF_URL" systems/2/Resets/-1)" "On" "by a Reset On"

# ---- netboot, ending on a persistent disk ----

cat >"$IB_TMP/job.yaml" <<'EOF'
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Job
metadata:
  name: netboot-rf2
spec:
  machineRef: {name: rf2, namespace: default}
  tasks:
  - powerAction: "off"
  - bootDevice: {device: pxe, persistent: false, efiBoot: true}
  - powerAction: "on"
  - bootDevice: {device: disk, persistent: true, efiBoot: true}
EOF
ibc apply -f "$IB_TMP/job.yaml"
is "$rc" 0 "apply of a Job off -> one-time PXE -> on -> persistent disk"
ok "the Job ends" wait_for "$WAIT" job_done netboot-rf2
is "$(job_state netboot-rf2)" "Completed" "the Job Completed"
is "$(st "$RF_URL" systems/2/Boots/-1)" "Pxe" "the system booted from PXE"
is "$(st "$RF_URL" systems/2/Boot/BootSourceOverrideTarget)" "Hdd" "and is left on the disk"
is "$(st "$RF_URL" systems/2/Boot/BootSourceOverrideEnabled)" "Continuous" "persistently"
is "$(st "$RF_URL" systems/2/Boot/BootSourceOverrideMode)" "UEFI" "in UEFI mode"
is "$(st "$RF_URL" systems/2/PowerState)" "On" "and on"
ibc get task netboot-rf2-task-3 -o json
cond=$(printf '%s' "$out" | pyjson '[c.get("message", "") for c in d["status"]["conditions"] if c["type"] == "Completed"][0]')
unlike "$cond" 'not verifiable' "the persistent disk was read back, not taken on trust"
diag "task 3: $cond"

# ---- the desired power state comes back after drift ----

machine_yaml rf2 "$RF" 2 |
	sed 's/^metadata:$/metadata:\n  annotations: {bmc.ironbell.dev\/desired-power: "on"}/' \
		>"$IB_TMP/rf-desired.yaml"
ibc apply -f "$IB_TMP/rf-desired.yaml"
is "$rc" 0 "rf2 annotated desired-power on"
code=$(curl -s --max-time 10 --cacert "$CERT" -o /dev/null -w '%{http_code}' \
	-X PATCH -H 'Content-Type: application/json' -d '{"PowerState":"Off"}' \
	"https://127.0.0.1:$RF/emu/state/systems/2")
like "$code" "^20[04]$" "system 2 turned off behind the daemon's back"
ok "the controller turns it back on" wait_for "$WAIT" st_is systems/2/PowerState On
ibc events machine rf2
like "$out" 'PowerRestored' "a PowerRestored event says so"

# ---- a certificate that does not verify ----

machine_yaml rf-untrusted "$UNTRUSTED" "" >"$IB_TMP/untrusted.yaml"
ibc apply -f "$IB_TMP/untrusted.yaml"
is "$rc" 0 "apply of a Machine whose BMC's certificate is not trusted"
ok "rf-untrusted: Contactable False" wait_for "$WAIT" contactable_false rf-untrusted
msg=$(contactable_msg rf-untrusted)
like "$msg" '[Cc]ertificate|SSL|TLS' "the message names the certificate"
diag "rf-untrusted: $msg"
ok "rf2 is still contactable" wait_for "$WAIT" machine_is rf2 on True

# ---- the password is nowhere ----

ibc get machines,jobs,tasks,secrets -o yaml
ibc events -o json
run curl -sf --max-time 10 "http://127.0.0.1:$IB_HTTP_PORT/metrics"
printf '%s\n' "$out" >"$IB_TMP/metrics"
like "$out" 'ironbell_bmc_request_seconds_count\{provider="redfish"' "/metrics has Redfish latencies"
for f in "$CLI_OUT" "$IB_LOG" "$IB_TMP/metrics"; do
	what=$(basename "$f")
	if grep -Fq -e "$P" -e "$P64" "$f"; then
		fail "the password is not in $what" "$(grep -Fn -e "$P" -e "$P64" "$f" | head -3)"
	else
		pass "the password is not in $what"
	fi
done

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
is "$(st "$RF_URL" sessions)" 0 "the daemon logged out of the BMC on the way out"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
