#!/bin/sh
# test_kube_sync — Kubernetes mode's watcher against the API-server
# emulator (tests/kube/, proven with kubectl by test_kube_emu.sh): the real
# ironbelld with a kubeconfig (client certificate), objects made, changed
# and deleted with the real kubectl. Asserted: every kind is listed in
# pages and then watched (create, update, delete of each reach the store;
# a Machine's Secret is fetched, another Secret is not stored); bookmarks
# move a quiet kind's resume point on; /readyz
# says each kind is synced; the admin API refuses to change a kube
# object; a dropped stream resumes without a list; a stream cut mid-line
# resumes and is counted; a resourceVersion that is too old (410) lists
# again and deletes what vanished; the emulator restarting (its state
# kept), a 500, a 429 with Retry-After, a slow server, a line that is not
# JSON: each is logged and survived; an invalid object is refused,
# counted and recorded as an event, the old one kept; after each, the
# store equals the API (tests/kube/store_equals_api.py). Then a bearer
# token from a tokenFile that is revoked (401, logged) and replaced, and a
# kubeconfig whose CA does not verify the server (not ready, the TLS error
# logged). Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/kube/emu.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
command -v kubectl >/dev/null 2>&1 || skip_all "kubectl is not installed"
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is not installed"
WAIT=30 # seconds any one change may take to reach the store

api() { curl -s --max-time 10 --unix-socket "$IB_SOCK" "http://localhost$1"; }
# in_store PLURAL_PATH NAME: the object is in the store
in_store() { api "$1/$2" | grep -q '"kind"' && ! api "$1/$2" | grep -q '"kind":"Status"'; }
gone() { ! in_store "$@"; }
# label_is NAME KEY VALUE: the store's Hardware NAME has that label
label_is() { api "$HW/$1" | grep -q "\"$2\":\"$3\""; }
HW=/apis/tinkerbell.org/v1alpha1/namespaces/default/hardware
SEC=/api/v1/namespaces/default/secrets
metric() {
	api /metrics | sed -n "s/^$1 \\([0-9.e+]*\\)\$/\\1/p" | head -n 1
}

# equal: the store equals the API, as store_equals_api.py says
equal() {
	mkdir -p "$IB_TMP/cmp"
	kemu_get /_emu/dump >"$IB_TMP/cmp/dump.json" 2>/dev/null ||
		curl -s --max-time 10 --cacert "$KEMU_CA" "$KEMU_URL/_emu/dump" >"$IB_TMP/cmp/dump.json"
	for p in tinkerbell.org/v1alpha1/hardware tinkerbell.org/v1alpha1/templates \
		tinkerbell.org/v1alpha1/workflows bmc.tinkerbell.org/v1alpha1/machines \
		bmc.tinkerbell.org/v1alpha1/jobs bmc.tinkerbell.org/v1alpha1/tasks; do
		api "/apis/$p" >"$IB_TMP/cmp/${p##*/}.json"
	done
	api /api/v1/secrets >"$IB_TMP/cmp/secrets.json"
	"$PY" "$top_srcdir/tests/kube/store_equals_api.py" "$IB_TMP/cmp/dump.json" "$IB_TMP/cmp" \
		>"$IB_TMP/cmp/out" 2>&1
}
# eventually_equal DESCRIPTION
eventually_equal() {
	if wait_for $WAIT equal; then
		pass "$1"
	else
		fail "$1"
		diag "$(cat "$IB_TMP/cmp/out")"
	fi
}

kemu_certs || bail_out "cannot make the certificates"
kemu_start emu --bookmark-interval 1 --state "$IB_TMP/emu-state.json" ||
	bail_out "the emulator did not start"
kemu_kubeconfig "$IB_TMP/kubeconfig" cert

cat >"$IB_TMP/objects.yaml" <<'YAML'
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: hw-a, labels: {rack: r1}}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:01:0a", ip: {address: 192.0.2.10, netmask: 255.255.255.0}}
      netboot: {allowPXE: false}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: hw-b, labels: {rack: r1}}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:01:0b", ip: {address: 192.0.2.11, netmask: 255.255.255.0}}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: hw-c}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:01:0c"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata: {name: tpl-a}
spec:
  data: |
    version: "0.1"
    name: t
    global_timeout: 600
    tasks:
      - name: t1
        worker: "{{.device_1}}"
        actions:
          - name: a1
            image: alpine
            timeout: 60
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata: {name: wf-a}
spec:
  templateRef: tpl-a
  hardwareRef: hw-a
  hardwareMap: {device_1: "02:00:00:00:01:0a"}
---
apiVersion: v1
kind: Secret
metadata: {name: bmc-a}
type: Opaque
stringData: {username: admin, password: secret}
---
apiVersion: v1
kind: Secret
metadata: {name: unrelated}
type: Opaque
stringData: {token: nothing-to-see}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata: {name: bmc-a}
spec:
  connection:
    host: 127.0.0.1
    port: 1623
    authSecretRef: {name: bmc-a, namespace: default}
    insecureTLS: true
YAML
kc apply --validate=false -f "$IB_TMP/objects.yaml"
is "$rc" 0 "kubectl applies the objects to the emulator ($err)"
kc apply --validate=false -n lab -f - <<'YAML'
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: hw-lab}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:02:0a"}
YAML

# One page per object: the lists go in pages.
IB_GRPC_EXTRA="  enabled: false"
ib_write_config "kube:
  enabled: true
  kubeconfig: $IB_TMP/kubeconfig
  leader_election: false
  page_size: 1
  watch_timeout: 30
  backoff_min: 100
  backoff_max: 2000
bmc:
  enabled: false
workflow:
  enabled: false" || bail_out "cannot write the config"
lists0=$(kemu_stat lists)
ib_start_daemon || bail_out "ironbelld did not start"

out=$(api /readyz)
like "$out" "hardware: synced" "/readyz: Hardware is synced"
like "$out" "workflows: synced" "/readyz: Workflows are synced"
like "$out" "secrets: synced" "/readyz: Secrets are synced"
lists=$(kemu_stat lists)
ok "the kinds were listed in pages (list requests $lists0 -> $lists)" \
	test "$((lists - lists0))" -ge 9
is "$(metric 'ironbell_kube_listed_objects{kind="Hardware"}')" 4 "four Hardware listed"
eventually_equal "after the first list the store equals the API"

kc get hardware hw-a -o json
uid=$(printf '%s' "$out" | kemu_json metadata/uid)
is "$(api $HW/hw-a | kemu_json metadata/uid)" "$uid" "the store keeps the cluster's uid"
ok "a Hardware of another namespace is in the store (all namespaces watched)" \
	in_store /apis/tinkerbell.org/v1alpha1/namespaces/lab/hardware hw-lab
ok "a Machine's Secret is in the store" in_store $SEC bmc-a
ok "a Secret no Machine names is not" gone $SEC unrelated

# The admin API refuses to change what Kubernetes owns.
out=$(curl -s --max-time 10 --unix-socket "$IB_SOCK" -X PATCH \
	-H 'Content-Type: application/merge-patch+json' \
	-d '{"metadata":{"labels":{"rack":"local"}}}' "http://localhost$HW/hw-a")
like "$out" "owned by Kubernetes" "a local edit of a kube object is refused"

# ---- create, update, delete of each kind ----
kc apply --validate=false -f - <<'YAML'
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: hw-d}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:01:0d"}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Job
metadata: {name: job-a}
spec:
  machineRef: {name: bmc-a, namespace: default}
  tasks:
    - powerAction: "off"
YAML
ok "a created Hardware reaches the store" wait_for $WAIT in_store $HW hw-d
ok "a created Job reaches the store" \
	wait_for $WAIT in_store /apis/bmc.tinkerbell.org/v1alpha1/namespaces/default/jobs job-a
# A Secret made before the Machine that names it, both while watching (as
# one kubectl apply of an operator's file makes them): the Machine's event
# comes on its watch stream, and the Secret is fetched then.
kc apply --validate=false -f - <<'YAML'
apiVersion: v1
kind: Secret
metadata: {name: bmc-b}
type: Opaque
stringData: {username: admin, password: secret-b}
YAML
kc apply --validate=false -f - <<'YAML'
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata: {name: bmc-b}
spec:
  connection:
    host: 127.0.0.1
    port: 1624
    authSecretRef: {name: bmc-b, namespace: default}
    insecureTLS: true
YAML
ok "a Secret named by a Machine made while watching is fetched into the store" \
	wait_for $WAIT in_store $SEC bmc-b
unlike "$(grep 'cannot read secret default/bmc-b' "$IB_LOG")" "." "and its fetch did not fail"
kc label hardware hw-b rack=r2 --overwrite
ok "a label change reaches the store" \
	wait_for $WAIT label_is hw-b rack r2
kc delete hardware hw-c
ok "a deletion reaches the store" wait_for $WAIT gone $HW hw-c
# Every other kind: made, changed, deleted.
kc apply --validate=false -f - <<'YAML'
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata: {name: tpl-x}
spec: {data: "version: \"0.1\"\nname: x\nglobal_timeout: 60\ntasks: []\n"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata: {name: wf-x}
spec: {templateRef: tpl-x, hardwareRef: hw-b}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata: {name: bmc-x}
spec:
  connection: {host: 127.0.0.1, port: 1625, authSecretRef: {name: bmc-a, namespace: default}, insecureTLS: true}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Job
metadata: {name: job-x}
spec:
  machineRef: {name: bmc-x, namespace: default}
  tasks:
    - powerAction: "on"
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Task
metadata: {name: job-x-task-0}
spec:
  task: {powerAction: "on"}
  connection: {host: 127.0.0.1, port: 1625, authSecretRef: {name: bmc-a, namespace: default}, insecureTLS: true}
YAML
is "$rc" 0 "kubectl makes a Template, Workflow, Machine, Job and Task ($err)"
# has PATH NAME TEXT: the store's object holds TEXT
has() { api "$1/$2" | grep -q "$3"; }
for k in templates:tinkerbell.org/v1alpha1:template:tpl-x \
	workflows:tinkerbell.org/v1alpha1:workflow:wf-x \
	machines:bmc.tinkerbell.org/v1alpha1:machine:bmc-x \
	jobs:bmc.tinkerbell.org/v1alpha1:job:job-x \
	tasks:bmc.tinkerbell.org/v1alpha1:task:job-x-task-0; do
	plural=${k%%:*}
	rest=${k#*:}
	gv=${rest%%:*}
	rest=${rest#*:}
	kind=${rest%%:*}
	name=${rest#*:}
	path=/apis/$gv/namespaces/default/$plural
	ok "a created $kind reaches the store" wait_for $WAIT in_store "$path" "$name"
	kc label "$plural.${gv%/*}" "$name" changed=yes
	ok "a changed $kind reaches the store" wait_for $WAIT has "$path" "$name" '"changed":"yes"'
	kc delete "$plural.${gv%/*}" "$name"
	ok "a deleted $kind leaves the store" wait_for $WAIT gone "$path" "$name"
done
eventually_equal "after create, update and delete the store equals the API"

# ---- bookmarks: a quiet kind's watch moves on with the others' changes ----
kc label template tpl-a bookmark=1
trv=$(kemu_stat resourceVersion)
# hw_rv: the resourceVersion the Hardware watch would resume from
hw_rv() { api /readyz | sed -n 's/^hardware: synced, watching from rv \([0-9]*\)$/\1/p'; }
ok "a bookmark moves the Hardware watch past a Template's change (rv $trv)" \
	wait_for $WAIT sh -c "[ \"\$(curl -s --unix-socket '$IB_SOCK' http://localhost/readyz | sed -n 's/^hardware: synced, watching from rv \\([0-9]*\\)\$/\\1/p')\" -ge $trv ] 2>/dev/null"
diag "the Hardware watch would resume from rv $(hw_rv)"

# ---- a dropped stream resumes from where it was, without a list ----
lists0=$(kemu_stat lists)
kemu_ctl drop-watches >/dev/null
kc label hardware hw-a drop=1
ok "a change after a dropped stream reaches the store" \
	wait_for $WAIT label_is hw-a drop 1
is "$(kemu_stat lists)" "$lists0" "the watch resumed without a list"
is "$(metric 'ironbell_kube_relists_total{kind="Hardware"}')" 0 "no relist was counted"

# ---- a stream cut mid-line ----
r0=$(metric 'ironbell_kube_watch_restarts_total{kind="Hardware"}')
kemu_ctl cut-watches >/dev/null
kc label hardware hw-a cut=1
ok "a change after a stream cut mid-line reaches the store" \
	wait_for $WAIT label_is hw-a cut 1
r1=$(metric 'ironbell_kube_watch_restarts_total{kind="Hardware"}')
ok "the cut stream is counted as a restart ($r0 -> $r1)" test "${r1:-0}" -gt "${r0:-0}"
ok "the cut is logged" file_has "$IB_LOG" "hardware: watch failed"
grep "hardware: watch failed" "$IB_LOG" | head -n 3 | diag "$(cat)"
eventually_equal "after the cut the store equals the API"

# ---- 410 Gone: too old a resourceVersion lists again ----
# The daemon is stopped (SIGSTOP) while its streams are cut, a Hardware is
# deleted and the history compacted: it can only resume from before both.
kill -STOP "$IB_DAEMON_PID"
kemu_ctl cut-watches >/dev/null
kc delete hardware hw-d
kemu_ctl compact >/dev/null
kill -CONT "$IB_DAEMON_PID"
ok "a Hardware deleted while the watch was gone is deleted by the relist" \
	wait_for $WAIT gone $HW hw-d
ok "the relist is counted" \
	wait_for $WAIT sh -c "[ \"\$(curl -s --unix-socket '$IB_SOCK' http://localhost/metrics | sed -n 's/^ironbell_kube_relists_total{kind=\"Hardware\"} //p')\" -ge 1 ]"
ok "410 is logged" file_has "$IB_LOG" "too old \\(410 Gone\\): listing again"
eventually_equal "after the relist the store equals the API"

# ---- the emulator restarts, its objects kept ----
kill -TERM "$KEMU_PID" 2>/dev/null
wait "$KEMU_PID" 2>/dev/null
port=$KEMU_PORT
kemu_start emu2 --bookmark-interval 1 --state "$IB_TMP/emu-state.json" --port "$port" ||
	bail_out "the emulator did not start again"
kc label hardware hw-b restart=1
ok "after the emulator restarted, a change reaches the store" \
	wait_for $WAIT label_is hw-b restart 1
eventually_equal "after the emulator's restart the store equals the API"

# ---- 500, 429, a slow server, a line that is not JSON ----
# faults N KIND: the emulator has answered N requests with KIND ("fault
# 500") in all
faults() { [ "$(kemu_stat "requests/fault $2")" -ge "$1" ] 2>/dev/null; }
kemu_ctl fail '{"count": 3, "code": 500}' >/dev/null
kemu_ctl drop-watches >/dev/null
ok "the daemon's requests got the three 500s" wait_for $WAIT faults 3 500
kc label hardware hw-a e500=1
ok "after three 500s a change reaches the store" \
	wait_for $WAIT label_is hw-a e500 1
ok "the 500 is logged" file_has "$IB_LOG" "watch failed.*500"
kemu_ctl throttle '{"count": 2, "retry_after": 1}' >/dev/null
kemu_ctl drop-watches >/dev/null
ok "the daemon's requests got the two 429s" wait_for $WAIT faults 2 429
kc label hardware hw-a e429=1
ok "after two 429s a change reaches the store" \
	wait_for $WAIT label_is hw-a e429 1
ok "the 429 is logged" file_has "$IB_LOG" "watch failed.*429"
kemu_ctl delay '{"ms": 300}' >/dev/null
kemu_ctl drop-watches >/dev/null
kc label hardware hw-a slow=1
ok "through a slow server a change reaches the store" \
	wait_for $WAIT label_is hw-a slow 1
kemu_ctl delay '{"ms": 0}' >/dev/null
kemu_ctl garbage '{"line": "this is not JSON"}' >/dev/null
kc label hardware hw-a garbage=1
ok "after a line that is not JSON a change reaches the store" \
	wait_for $WAIT label_is hw-a garbage 1
ok "the bad line is logged" file_has "$IB_LOG" "watch failed.*not JSON"
eventually_equal "after the faults the store equals the API"

# ---- an object that fails validation ----
f0=$(metric 'ironbell_kube_objects_refused_total{kind="Hardware"}')
kemu_ctl inject "{\"resource\": \"hardware\", \"type\": \"MODIFIED\", \"object\": {\"apiVersion\": \"tinkerbell.org/v1alpha1\", \"kind\": \"Hardware\", \"metadata\": {\"name\": \"hw-a\", \"namespace\": \"default\", \"uid\": \"$uid\", \"resourceVersion\": \"99999999\"}, \"spec\": {\"interfaces\": [{\"dhcp\": {\"mac\": \"zz\"}}]}}}" >/dev/null
ok "an invalid object is refused and counted" \
	wait_for $WAIT sh -c "[ \"\$(curl -s --unix-socket '$IB_SOCK' http://localhost/metrics | sed -n 's/^ironbell_kube_objects_refused_total{kind=\"Hardware\"} //p')\" -gt ${f0:-0} ]"
is "$(api $HW/hw-a | kemu_json spec/interfaces/0/dhcp/mac)" "02:00:00:00:01:0a" \
	"the store keeps the valid version"
ok "the refusal is logged with the reason" file_has "$IB_LOG" "hardware default/hw-a from the cluster refused.*is not a MAC"
ok "the refusal is an event of the Hardware" \
	sh -c "curl -s --unix-socket '$IB_SOCK' 'http://localhost/apis/ironbell.dev/v1/events' | grep -q 'Refused'"

# ---- a bearer token from a file, revoked and replaced ----
ib_stop_daemon
printf '%s' "$KEMU_TOKEN" >"$IB_TMP/token"
cat >"$IB_TMP/kubeconfig-token" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: emu
  cluster: {server: "$KEMU_URL", certificate-authority: "$KEMU_CA"}
users:
- name: t
  user: {tokenFile: "$IB_TMP/token"}
contexts:
- name: emu
  context: {cluster: emu, user: t}
current-context: emu
EOF
sed -i "s|kubeconfig: .*|kubeconfig: $IB_TMP/kubeconfig-token\n  namespace: default|" "$IB_CONFIG"
ib_start_daemon || bail_out "ironbelld did not start with a token"
pass "with a bearer token every kind syncs"
ok "watching one namespace, the other's Hardware is deleted from the store" \
	wait_for $WAIT gone /apis/tinkerbell.org/v1alpha1/namespaces/lab/hardware hw-lab
ok "and the namespace's own is kept" in_store $HW hw-a
kemu_ctl revoke "{\"token\": \"$KEMU_TOKEN\"}" >/dev/null
kemu_ctl drop-watches >/dev/null
ok "a revoked token's 401 is logged" wait_for $WAIT file_has "$IB_LOG" "401"
kemu_ctl token '{"token": "a-new-token-0123456789abcdef"}' >/dev/null
printf '%s' "a-new-token-0123456789abcdef" >"$IB_TMP/token"
kc label hardware hw-a token=1
ok "with the token file replaced, a change reaches the store" \
	wait_for $WAIT label_is hw-a token 1

# ---- a CA that does not verify the server ----
ib_stop_daemon
kemu_kubeconfig "$IB_TMP/kubeconfig-wrong" wrongca
sed -i "s|kubeconfig: .*|kubeconfig: $IB_TMP/kubeconfig-wrong|" "$IB_CONFIG"
"$IRONBELLD" --config "$IB_CONFIG" >>"$IB_LOG" 2>&1 </dev/null &
IB_DAEMON_PID=$!
ok "a wrong CA is logged as a TLS error naming the server" \
	wait_for $WAIT file_has "$IB_LOG" "list failed.*(certificate|TLS).*127.0.0.1:$port"
readyz_says() { api /readyz | grep -q "$1"; }
ok "with a wrong CA the daemon is not ready" wait_for $WAIT readyz_says "not ready"
ok "/readyz says why" readyz_says "list failed, retrying: TLS"
api /readyz | head -n 3 | diag "$(cat)"
ib_stop_daemon
ok "the log has no sanitizer report" ib_log_clean
tap_done
