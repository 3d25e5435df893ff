#!/bin/sh
# test_bmc_daemon — BMC control end to end: the real ironbelld with its
# bmc: section, ipmi_sim as the BMC (tests/integration/bmc/ipmisim.sh),
# objects applied with the client as an operator writes them (a Secret
# with stringData, Machines with providerOptions.ipmitool cipher suite 3),
# and then: the Machine's power state and Contactable condition; `ironbell
# power on` and `bootdev pxe` reach the simulator, and ipmitool -I lanplus
# reads the same state back; a Job off -> one-time PXE -> on completes in
# that order; a wrong password and a BMC that never answers give
# Contactable=False with a message, the latter without holding up another
# Machine's Job; get machines,jobs,tasks and events machine show them; and
# the password is nowhere in the client's output, the daemon's log or
# /metrics. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/integration/bmc/ipmisim.sh"
. "$top_srcdir/tests/integration/bmc/objects.sh"

ipmisim_require
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

U=admin
P=E2e-$$-pw.Bmc # at most 20 bytes: ipmi_sim's limit
P64=$(printf '%s' "$P" | base64)
WAIT=60 # seconds any one state may take to appear

ipmisim_start "" "$U" "$P" || bail_out "ipmi_sim did not start"
SIM=$IPMISIM_PORT
SIMDIR=$IPMISIM_DIR
diag "ipmi_sim on 127.0.0.1:$SIM"
DEAD=$(ib_free_port udp) || bail_out "no free UDP port" # nothing listens there

ipmi() {
	run ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "$SIM" -U "$U" -P "$P" -N 2 -R 3 "$@"
}

ib_write_config "bmc:
  enabled: true
  ipmi:
    cipher_suite: 3
    timeout: 200
    retries: 2
  poll_interval: 1
  task_timeout: 60
  verify_interval: 200" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

# ---- a Machine and its Secret, as written for kubectl ----

machine_yaml() { # NAME SECRET PORT
	cat <<EOF
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata:
  name: $1
spec:
  connection:
    host: 127.0.0.1
    port: $3
    insecureTLS: true
    authSecretRef: {name: $2, namespace: default}
    providerOptions:
      preferredOrder: [ipmitool]
      ipmitool:
        port: $3
        cipherSuite: "3"
EOF
}
{
	printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-m1\ntype: kubernetes.io/basic-auth\n'
	printf 'stringData:\n  username: %s\n  password: "%s"\n---\n' "$U" "$P"
	machine_yaml m1 bmc-m1 "$SIM"
} >"$IB_TMP/m1.yaml"
ibc apply -f "$IB_TMP/m1.yaml"
is "$rc" 0 "apply of a Secret (stringData) and a Machine"
[ "$rc" = 0 ] || diag "$err"

ok "m1: powerState off, Contactable True" wait_for "$WAIT" machine_is m1 off True
ibc get machines
like "$out" '^m1   +127\.0\.0\.1   +off   +True   ' "get machines: host, power, Contactable"

# ---- power on and bootdev, checked on the simulator and with ipmitool ----

ibc power on m1 --timeout 60s
is "$rc" 0 "ironbell power on m1: exit 0"
[ "$rc" = 0 ] || diag "$out $err"
like "$out" '^task/power-on-m1-[0-9]+-task-0: power on: Completed' "it prints the Task's transition"
like "$out" '^job/power-on-m1-[0-9]+: Completed$' "and the Job's end"
is "$(ipmisim_state "$SIMDIR")" "power:1 boot:none" "the simulator is on"
ipmi power status
like "$out" 'Chassis Power is on' "ipmitool -I lanplus -C 3 says on too"
ok "m1: powerState on" wait_for "$WAIT" machine_is m1 on True

ibc power status m1 --timeout 60s
is "$rc" 0 "ironbell power status m1: exit 0"
like "$out" '^machine/m1: power on$' "power status prints the Machine's power state"
ipmi power off
is "$rc" 0 "ipmitool turns the simulator off behind the daemon's back"
ibc power status m1 --timeout 60s
like "$out" '^machine/m1: power off$' "power status prints what its Task read, not the last poll"
ipmi power on
ok "m1: on again" wait_for "$WAIT" machine_is m1 on True

ibc bootdev pxe m1 --timeout 60s
is "$rc" 0 "ironbell bootdev pxe m1: exit 0"
[ "$rc" = 0 ] || diag "$out $err"
like "$out" 'bootdev pxe once: Completed' "the boot-device Task completed"
is "$(ipmisim_state "$SIMDIR")" "power:1 boot:pxe" "the simulator boots from pxe next"
ipmi chassis bootparam get 5
like "$out" 'Force PXE' "ipmitool reads the PXE boot flag back"

# ---- a Job: off, one-time PXE, on, in that order ----

before=$(ipmisim_calls "$SIMDIR" | wc -l)
cat >"$IB_TMP/job.yaml" <<'EOF'
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Job
metadata:
  name: netboot-m1
spec:
  machineRef: {name: m1, namespace: default}
  tasks:
  - powerAction: "off"
  - oneTimeBootDeviceAction: {device: [pxe], efiBoot: false}
  - powerAction: "on"
EOF
ibc apply -f "$IB_TMP/job.yaml"
is "$rc" 0 "apply of a Job off -> one-time PXE -> on"
ok "the Job ends" wait_for "$WAIT" job_done netboot-m1
is "$(job_state netboot-m1)" "Completed" "the Job Completed"
changes=$(ipmisim_calls "$SIMDIR" | sed -n "$((before + 1)),\$p" | grep '^set ' | tr '\n' ';')
is "$changes" "set power 0;set boot pxe;set power 1;" "the simulator saw off, PXE, on, in order"
is "$(ipmisim_state "$SIMDIR")" "power:1 boot:pxe" "and ends on, booting from PXE"
ibc get tasks
like "$out" '^netboot-m1-task-0   +power off   +Completed   ' "task 0: power off, Completed"
like "$out" '^netboot-m1-task-1   +bootdev pxe once   +Completed   ' "task 1: one-time PXE, Completed"
like "$out" '^netboot-m1-task-2   +power on   +Completed   ' "task 2: power on, Completed"

# ---- a wrong password; a BMC that does not answer, beside a Job ----

{
	printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-bad\n'
	printf 'stringData:\n  username: %s\n  password: wrong-password\n---\n' "$U"
	machine_yaml m-badpw bmc-bad "$SIM"
	printf -- '---\n'
	machine_yaml m-dead bmc-m1 "$DEAD"
} >"$IB_TMP/bad.yaml"
cat >"$IB_TMP/job2.yaml" <<'EOF'
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Job
metadata:
  name: cycle-m1
spec:
  machineRef: {name: m1, namespace: default}
  tasks:
  - powerAction: "off"
  - powerAction: "on"
EOF
ibc apply -f "$IB_TMP/bad.yaml" -f "$IB_TMP/job2.yaml"
is "$rc" 0 "apply of a Machine with a wrong password, one at a dead port, and a Job of m1"
ok "m1's Job completes while m-dead does not answer" wait_for "$WAIT" job_done cycle-m1
is "$(job_state cycle-m1)" "Completed" "m1's Job Completed"
ok "m-badpw: Contactable False" wait_for "$WAIT" contactable_false m-badpw
msg=$(contactable_msg m-badpw)
like "$msg" '[Aa]uth|[Pp]assword|RAKP|[Uu]nauthori[sz]ed' "with an authentication message"
diag "m-badpw: $msg"
ok "m-dead: Contactable False after the timeout" wait_for "$WAIT" contactable_false m-dead
msg=$(contactable_msg m-dead)
like "$msg" '[Tt]ime|[Nn]o answer|respond|unreachable' "with a timeout message"
diag "m-dead: $msg"
ok "m1 is still contactable" wait_for "$WAIT" machine_is m1 on True

# ---- the client's views ----

ibc get machines,jobs,tasks
is "$rc" 0 "get machines,jobs,tasks"
like "$out" '^machine\.bmc\.tinkerbell\.org/m1   +127\.0\.0\.1   +on   +True   ' "m1 listed: on, contactable"
like "$out" '^machine\.bmc\.tinkerbell\.org/m-badpw   +127\.0\.0\.1   +[a-z]*   +False   ' "m-badpw listed: not contactable"
like "$out" '^machine\.bmc\.tinkerbell\.org/m-dead   +127\.0\.0\.1   +[a-z]*   +False   ' "m-dead listed: not contactable"
like "$out" '^job\.bmc\.tinkerbell\.org/netboot-m1   +m1   +Completed   +3/3   ' "the netboot Job: Completed, 3/3"
like "$out" '^job\.bmc\.tinkerbell\.org/cycle-m1   +m1   +Completed   +2/2   ' "the cycle Job: Completed, 2/2"
like "$out" '^task\.bmc\.tinkerbell\.org/cycle-m1-task-1   +power on   +Completed   ' "its Tasks listed"
ibc get machines -o wide
like "$out" '^m-badpw   .*   +False   +[^ ].*[0-9]+[smhd]$' "-o wide shows the message"

ibc events machine m1
is "$rc" 0 "events machine m1"
like "$out" 'netboot-m1' "events of m1 name its Job"
like "$out" '[Cc]ompleted' "and the transitions to Completed"
like "$out" 'task' "and its Tasks"

# ---- the password is nowhere ----

ibc get secret bmc-m1 -o yaml
ibc get secrets -o json
ibc describe secret bmc-m1
ibc get machines,jobs,tasks,secrets -o yaml
ibc events
ibc events -o json
run curl -sf --max-time 10 "http://127.0.0.1:$IB_HTTP_PORT/metrics"
is "$rc" 0 "/metrics answers"
printf '%s\n' "$out" >"$IB_TMP/metrics"
like "$out" '^ironbell_bmc_request_seconds' "/metrics has ironbell_bmc_request_seconds"
like "$out" '^ironbell_bmc_failures_total' "and ironbell_bmc_failures_total"
like "$out" '^ironbell_bmc_sessions_open' "and ironbell_bmc_sessions_open"
like "$out" '^ironbell_bmc_jobs_running' "and ironbell_bmc_jobs_running"
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
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
