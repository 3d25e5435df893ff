#!/bin/sh
# test_kube_lease — two ironbelld instances in Kubernetes mode (state
# directories, sockets and ports of their own; one kubeconfig and one
# Lease) against the API-server emulator, with short Lease timings
# (lease_duration 4, renew_deadline 3, retry_period 1). Asserted: one holds
# the Lease (its identity in the Lease as kubectl reads it,
# ironbell_kube_leader 1 on it and 0 on the other); only the holder's
# worker API listens; a Workflow made with kubectl is run through the
# holder and only the holder sent write-backs; SIGTERM of the holder
# releases the Lease and the other takes over, starts its worker API and
# runs a Workflow made then, and the stop logs no error; SIGKILL of the
# holder (no release): the other takes over once the Lease expires; a
# holder whose Lease kubectl gives to another identity stops leading and
# exits with status 1 (for the service manager to start it again as a
# follower). Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/kube/emu.sh"
. "$top_srcdir/tests/integration/workflow/objects.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
command -v kubectl >/dev/null 2>&1 || skip_all "kubectl is not installed"
wf_require_grpc
TINK_PY=$top_srcdir/tests/grpc/tink_agent.py
WAIT=30 # seconds any one change may take

# ---- the two instances, a and b ----
PORT_a=$(ib_free_port) && PORT_b=$(ib_free_port) && HTTP_a=$(ib_free_port) &&
	HTTP_b=$(ib_free_port) || bail_out "no free port"
PID_a= PID_b=
sock() { echo "$IB_TMP/$1/api.sock"; }
iapi() { curl -s --max-time 10 --unix-socket "$(sock "$1")" "http://localhost$2"; }
imetric() { iapi "$1" /metrics | sed -n "s/^$2 \\([0-9.e+]*\\)\$/\\1/p" | head -n 1; }
leads() { [ "$(imetric "$1" ironbell_kube_leader)" = 1 ]; }
follows() { [ "$(imetric "$1" ironbell_kube_leader)" = 0 ]; }
# listening PORT: something accepts a connection on 127.0.0.1:PORT
listening() {
	"$OBJ_PY" -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2).close()' "$1" 2>/dev/null
}
closed() { ! listening "$1"; }
# start X: instance X with its config, ready (every kind synced)
start() {
	mkdir -p "$IB_TMP/$1/state"
	eval "_port=\$PORT_$1 _http=\$HTTP_$1"
	cat >"$IB_TMP/$1/ironbell.yaml" <<EOF
log_level: debug
state_dir: $IB_TMP/$1/state
api:
  socket: $(sock "$1")
grpc:
  listen: 127.0.0.1:$_port
  long_poll: 1
http:
  listen: 127.0.0.1:$_http
kube:
  enabled: true
  kubeconfig: $IB_TMP/kubeconfig
  identity: ironbell-$1
  lease_duration: 4
  renew_deadline: 3
  retry_period: 1
  write_delay: 100
  backoff_min: 100
  backoff_max: 1000
bmc:
  enabled: false
workflow:
  enabled: true
EOF
	"$IRONBELLD" --config "$IB_TMP/$1/ironbell.yaml" >>"$IB_TMP/$1.log" 2>&1 </dev/null &
	eval "PID_$1=\$!"
	ib_bg "$!"
	wait_for $WAIT sh -c "curl -sf --max-time 2 --unix-socket '$(sock "$1")' http://localhost/readyz >/dev/null" ||
		{ tail -n 30 "$IB_TMP/$1.log" | diag "$(cat)"; return 1; }
}
# stop X SIGNAL: sends SIGNAL and reaps; the exit status in STATUS
stop() {
	eval "_pid=\$PID_$1"
	kill -"$2" "$_pid" 2>/dev/null
	wait_for $WAIT sh -c "! [ -r /proc/$_pid/stat ] || grep -q ') Z' /proc/$_pid/stat"
	wait "$_pid" 2>/dev/null
	STATUS=$?
}
holder() {
	kc get lease ironbelld -o json
	printf '%s' "$out" | kemu_json spec/holderIdentity
}
holder_is() { [ "$(holder)" = "$1" ]; }
# released: the Lease is held by nobody or by b
released() { _h=$(holder); [ "$_h" = "" ] || [ "$_h" = None ] || [ "$_h" = ironbell-b ]; }
wstate() {
	kc get workflow "$1" -o json
	printf '%s' "$out" | kemu_json status/state
}
wstate_is() { [ "$(wstate "$1")" = "$2" ]; }
# machine NAME MAC: a Hardware, a Template of one action and a Workflow
machine() {
	{
		hw_yaml "hw-$1" "$2"
		echo ---
		tpl_yaml "tpl-$1" 600 <<'EOF'
      - name: provision
        worker: "{{.device_1}}"
        actions:
          - name: a1
            image: quay.io/tinkerbell/actions/image2disk:latest
            timeout: 300
EOF
		echo ---
		wf_yaml "$1" "tpl-$1" "hw-$1" "$2"
	} >"$IB_TMP/$1.yaml"
	kc apply --validate=false -f "$IB_TMP/$1.yaml"
}
# agent PORT MAC: tink_agent.py through the Workflow of MAC
agent() {
	run "$OBJ_PY" "$TINK_PY" --target "127.0.0.1:$1" --stubs "$IB_TMP/stubs-py" \
		--agent-id "$2" --until-done --max-calls 50
}

kemu_certs || bail_out "cannot make the certificates"
kemu_start emu --bookmark-interval 1 || bail_out "the emulator did not start"
kemu_kubeconfig "$IB_TMP/kubeconfig" cert

# ---- a leads, b follows ----
start a || bail_out "instance a did not start"
ok "a takes the Lease" wait_for $WAIT leads a
start b || bail_out "instance b did not start"
is "$(holder)" ironbell-a "the Lease's holderIdentity is a's identity"
ok "ironbell_kube_leader is 1 on a" leads a
ok "ironbell_kube_leader is 0 on b" follows b
ok "a's worker API listens" wait_for $WAIT listening "$PORT_a"
ok "b's worker API does not" closed "$PORT_b"
like "$(iapi b /readyz)" "leader: another instance" "b's /readyz says another instance leads"

machine wf-1 52:54:00:6c:00:01
is "$rc" 0 "kubectl applies a Workflow ($err)"
ok "wf-1: PENDING in the API" wait_for $WAIT wstate_is wf-1 PENDING
agent "$PORT_a" 52:54:00:6c:00:01
is "$rc" 0 "tink_agent.py runs wf-1 through a"
ok "wf-1: SUCCESS in the API" wait_for $WAIT wstate_is wf-1 SUCCESS
w=$(imetric a ironbell_kube_writeback_requests_total)
ok "a sent the write-backs ($w requests)" test "${w:-0}" -gt 0
is "$(imetric b ironbell_kube_writeback_requests_total)" 0 "b sent none"
# every write-back the emulator got (the Workflow's statuses, the
# Hardware's boot marks) is one of a's requests
writes() { kemu_stat requests | jget 'd.get("update workflows/status", 0) + d.get("patch hardware", 0)'; }
same_writes() { [ "$(writes)" = "$(imetric a ironbell_kube_writeback_requests_total)" ]; }
ok "every write-back the emulator got is one of a's" wait_for $WAIT same_writes
diag "write-backs: $(writes), a's requests: $(imetric a ironbell_kube_writeback_requests_total)"
ok "b's store has wf-1's SUCCESS from the cluster" \
	wait_for $WAIT sh -c "curl -s --unix-socket '$(sock b)' http://localhost/apis/tinkerbell.org/v1alpha1/namespaces/default/workflows/wf-1 | grep -q '\"state\":\"SUCCESS\"'"

# ---- SIGTERM of the holder: released, b takes over ----
stop a TERM
is "$STATUS" 0 "a stops on SIGTERM with status 0"
ok "a's log says it released the Lease" file_has "$IB_TMP/a.log" "released the lease"
sed -n '/stopping on Terminated/,$p' "$IB_TMP/a.log" >"$IB_TMP/a-stop.log"
ok "the holder's clean stop logs no error" sh -c "! grep -q 'level=error' '$IB_TMP/a-stop.log'"
ok "the Lease is released (holder none, or b)" released
ok "b takes the Lease" wait_for $WAIT leads b
is "$(holder)" ironbell-b "the Lease's holderIdentity is b's identity"
ok "b's worker API listens" wait_for $WAIT listening "$PORT_b"
machine wf-2 52:54:00:6c:00:02
is "$rc" 0 "kubectl applies a Workflow after the takeover ($err)"
ok "wf-2: PENDING in the API, through b" wait_for $WAIT wstate_is wf-2 PENDING
agent "$PORT_b" 52:54:00:6c:00:02
is "$rc" 0 "tink_agent.py runs wf-2 through b"
ok "wf-2: SUCCESS in the API" wait_for $WAIT wstate_is wf-2 SUCCESS

# ---- SIGKILL of the holder: a takes over once the Lease expires ----
start a || bail_out "instance a did not start again"
ok "a, started again, follows" follows a
ok "a's worker API does not listen" closed "$PORT_a"
stop b KILL
is "$(holder)" ironbell-b "b killed: the Lease still names it"
ok "a takes the Lease once it expires" wait_for $WAIT leads a
is "$(holder)" ironbell-a "the Lease's holderIdentity is a's identity"
ok "a's worker API listens" wait_for $WAIT listening "$PORT_a"

# ---- the Lease taken from the holder: it exits with status 1 ----
start b || bail_out "instance b did not start again"
kc patch lease ironbelld --type merge -p '{"spec": {"holderIdentity": "someone-else"}}'
is "$rc" 0 "kubectl gives the Lease to another identity ($err)"
ok "a stops leading and exits" wait_for $WAIT sh -c "! [ -r /proc/$PID_a/stat ] || grep -q ') Z' /proc/$PID_a/stat"
wait "$PID_a" 2>/dev/null
is "$?" 1 "a exits with status 1"
ok "a's log says it lost the Lease" file_has "$IB_TMP/a.log" "lost the lease"
ok "b takes the Lease once someone-else's expires" wait_for $WAIT leads b

stop b TERM
is "$STATUS" 0 "b stops on SIGTERM with status 0"
ok "the logs have no sanitizer report" sh -c "! grep -Eq 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:' '$IB_TMP/a.log' '$IB_TMP/b.log'"
tap_done
