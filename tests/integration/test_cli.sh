#!/bin/sh
# test_cli — the `ironbell` client against a real ironbelld: apply (atomic,
# created/configured/unchanged, files, directories, stdin, namespaces),
# get in every output format with selectors, describe, delete, events,
# watch, version, the exit statuses, and the parts of the admin API the
# client has no command for (merge patch, status, TCP with a token,
# metrics), driven with curl.
set -u

. "$top_srcdir/tests/lib.sh"

FIX=$top_srcdir/tests/integration/fixtures
GOOD=$FIX/good
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"

# pyjson EXPR: evaluates the Python expression EXPR with d = the JSON
# document on stdin, and prints the result.
pyjson() {
	"$PY" -c 'import json, sys
d = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$1"
}

# api METHOD PATH [CURL ARGS...]: a request on the admin socket; sets $rc
# to curl's status, $out to the body and $code to the HTTP status.
api() {
	_m=$1
	_p=$2
	shift 2
	run curl -s -o "$IB_TMP/api.body" -w '%{http_code}' --max-time 30 \
		--unix-socket "$IB_SOCK" -X "$_m" "$@" "http://localhost$_p"
	code=$out
	out=$(cat "$IB_TMP/api.body")
}

TOKEN=tok-$$-secret-0123456789abcdef0123456789abcdef
printf '%s\n' "$TOKEN" >"$IB_TMP/token"
chmod 600 "$IB_TMP/token"
ADMIN_PORT=$(ib_free_port) || bail_out "no free port"
IB_API_EXTRA="  listen: 127.0.0.1:$ADMIN_PORT
  token_file: $IB_TMP/token"
# A short idle timeout, so that the quiet-watch case below outlasts it.
# The BMC controllers are off: the status of the Machines, Jobs and Tasks
# below is written by the test, and their BMCs do not exist.
ib_write_config "  idle_timeout: 2
bmc:
  enabled: false" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

# ---- the examples shipped in etc/examples ----

if ls "$top_srcdir"/etc/examples/*.yaml >/dev/null 2>&1; then
	ib apply -f "$top_srcdir/etc/examples"
	is "$rc" 0 "apply -f etc/examples/ succeeds"
	[ "$rc" = 0 ] || diag "$err"
	n=$(printf '%s\n' "$out" | grep -c ' created$')
	docs=$(cat "$top_srcdir"/etc/examples/*.yaml | grep -c '^kind:')
	is "$n" "$docs" "every example object is created ($docs)"
	missing=
	for obj in $(printf '%s\n' "$out" | sed -n 's/ created$//p'); do
		ib get "${obj%%/*}" "${obj#*/}" -o name
		[ "$rc" = 0 ] && [ "$out" = "$obj" ] || missing="$missing $obj"
	done
	is "$missing" "" "every example object can be read back by name"
	ib apply -f "$top_srcdir/etc/examples/bmc-jobs"
	is "$rc" 0 "the example Job is valid"
	ib delete -f "$top_srcdir/etc/examples/bmc-jobs"
	ib delete -f "$top_srcdir/etc/examples"
	is "$rc" 0 "delete -f etc/examples/ succeeds"
	like "$out" '^hardware.tinkerbell.org "machine1" deleted$' "delete prints kubectl's line"
else
	skip "etc/examples/*.yaml" "no examples in this tree"
fi

# ---- apply ----

ib apply -f "$GOOD/10-bmc.yaml" -f "$GOOD/20-hardware.yaml" -f - <"$GOOD/30-template.yaml"
is "$rc" 0 "apply of several -f, one of them stdin"
like "$out" '^secret/bmc-node-a created$' "secret created"
like "$out" '^machine.bmc.tinkerbell.org/bmc-node-a created$' "bmc machine created"
like "$out" '^hardware.tinkerbell.org/node-a created$' "hardware node-a created"
like "$out" '^hardware.tinkerbell.org/node-b created$' "hardware node-b created"
like "$out" '^template.tinkerbell.org/tpl-a created$' "template created from stdin"

ib apply -f "$GOOD"
is "$rc" 0 "apply of a directory"
first=$(printf '%s\n' "$out" | head -n 1)
last=$(printf '%s\n' "$out" | tail -n 1)
is "$first" "secret/bmc-node-a unchanged" "directory files are applied in name order, unchanged ones say so"
is "$last" "workflow.tinkerbell.org/wf-a created" "the workflow of the last file is created"
is "$(printf '%s\n' "$out" | grep -c ' unchanged$')" 5 "five objects unchanged"

sed 's/rack: r2/rack: r2b/' "$GOOD/20-hardware.yaml" >"$IB_TMP/hw-edit.yaml"
ib apply -f "$IB_TMP/hw-edit.yaml"
like "$out" '^hardware.tinkerbell.org/node-b configured$' "an edited object is configured"
like "$out" '^hardware.tinkerbell.org/node-a unchanged$' "its unedited neighbour is unchanged"
ib apply -f "$GOOD/20-hardware.yaml"
like "$out" '^hardware.tinkerbell.org/node-b configured$' "and configured back"

ib apply -n other -f "$FIX/other-ns.yaml"
is "$rc" 0 "apply -n other"
like "$out" '^hardware.tinkerbell.org/node-c created$' "node-c created in namespace other"
ib apply -n other -f "$GOOD/40-workflow.yaml" -f "$top_srcdir/etc/examples/hardware.yaml"
if grep -q 'namespace: default' "$top_srcdir/etc/examples/hardware.yaml" 2>/dev/null; then
	is "$rc" 1 "apply -n other of an object in namespace default fails"
	like "$err" 'does not match' "and says why"
	ib get wf wf-a -n other
	is "$rc" 1 "nothing of that apply was sent"
else
	skip "namespace mismatch" "etc/examples/hardware.yaml has no namespace"
	skip "namespace mismatch message"
	skip "namespace mismatch sends nothing"
fi

# ---- atomic apply ----

ib apply -f "$FIX/bad-yaml.yaml"
is "$rc" 1 "a YAML error in document 2 fails with status 1"
like "$err" 'bad-yaml\.yaml:15:[0-9]+ \(document 2\)' "the error names the file, line:column and document"
ib get hardware bad-yaml-1
is "$rc" 1 "document 1 of the broken file was not applied"
like "$err" '^Error from server \(NotFound\)' "get of a missing object says NotFound"
ib get hardware bad-yaml-3
is "$rc" 1 "document 3 of the broken file was not applied"

ib apply -f "$FIX/bad-later.yaml"
is "$rc" 1 "a validation error in document 2 fails with status 1"
like "$err" '^Error from server \(Invalid\): .*later-2.* \(item 1\)' "the server names the object and item"
like "$err" 'bad-later\.yaml:[0-9]+ \(document 2\)' "the client maps the item to its file and document"
ib get hw later-1
is "$rc" 1 "the valid document 1 was not applied (all or none)"

ib apply -f "$FIX/dup-mac.yaml"
is "$rc" 1 "two Hardware with one MAC in one apply fail"
like "$err" 'dup-1' "the error names the first"
like "$err" 'dup-2' "the error names the second"
ib get hw dup-1
is "$rc" 1 "neither is stored"
sed -n '1,/^---/p' "$FIX/dup-mac.yaml" | sed '$d' >"$IB_TMP/dup1.yaml"
sed -n '/^---/,$p' "$FIX/dup-mac.yaml" >"$IB_TMP/dup2.yaml"
ib apply -f "$IB_TMP/dup1.yaml"
is "$rc" 0 "dup-1 alone is fine"
ib apply -f "$IB_TMP/dup2.yaml"
is "$rc" 1 "dup-2 later is refused"
like "$err" '^Error from server \(Conflict\)' "as a Conflict"
like "$err" 'dup-1' "naming the holder dup-1"
like "$err" 'dup-2' "and dup-2"
ib delete hw dup-1
is "$rc" 0 "delete dup-1"

# ---- objects as the CRDs define them ----

UP=$top_srcdir/tests/unit/fixtures/upstream
ib apply -f "$UP/rufio-machine-with-opts.yaml" -f "$UP/tink-e2e-01-workflow.yaml"
is "$rc" 0 "Tinkerbell's samples apply: a Machine without authSecretRef, a Workflow without hardwareRef"
[ "$rc" = 0 ] || diag "$err"
ib get machine machine-sample-with-opts -o yaml
like "$out" '^    port: 623$' "the stored Machine has the CRD default port 623"
ib delete -f "$UP/rufio-machine-with-opts.yaml" -f "$UP/tink-e2e-01-workflow.yaml"
is "$rc" 0 "and they delete"

cat >"$IB_TMP/two-errors.yaml" <<'YAML'
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: two-errors
spec:
  interfaces:
    - dhcp:
        mac: "zz"
        ip:
          address: 10.0.0.300
YAML
ib apply -f "$IB_TMP/two-errors.yaml"
is "$rc" 1 "a Hardware with two field errors is refused"
like "$err" 'spec\.interfaces\[0\]\.dhcp\.mac: "zz" is not a MAC address; spec\.interfaces\[0\]\.dhcp\.ip\.address: "10\.0\.0\.300" is not an IP address' \
	"both errors are in the one answer"
{
	printf 'apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata:\n  name: many-errors\nspec:\n  interfaces:\n'
	for i in $(seq 1 60); do printf '    - dhcp: {mac: "zz%s"}\n' "$i"; done
} >"$IB_TMP/many-errors.yaml"
ib apply -f "$IB_TMP/many-errors.yaml"
is "$rc" 1 "a Hardware with 60 field errors is refused"
like "$err" 'spec\.interfaces\[0\]\.dhcp\.mac: "zz1" is not a MAC address; spec\.interfaces\[1\]' \
	"the answer lists the first ones"
like "$err" ' \(and [0-9]+ more errors\)' "and says how many more there are"

# ---- get ----

ib get hardware
is "$rc" 0 "get hardware"
like "$out" '^NAME   +STATE   +AGE$' "table header NAME STATE AGE"
like "$out" '^node-a   +[0-9]+[smh]' "node-a row with an age"
like "$out" '^node-b ' "node-b row"
unlike "$out" '^node-c' "node-c of namespace other is not listed"
for k in hw Hardware hardware.tinkerbell.org hardware.tinkerbell HW; do
	ib get "$k" -o name
	is "$out" "hardware.tinkerbell.org/node-a
hardware.tinkerbell.org/node-b" "get $k -o name"
done

ib get hw -A
like "$out" '^NAMESPACE   +NAME   +STATE   +AGE$' "-A adds a NAMESPACE column"
like "$out" '^other   +node-c ' "and lists node-c in other"
like "$out" '^default   +node-a ' "and node-a in default"
ib get hw -n other -o name
is "$out" "hardware.tinkerbell.org/node-c" "-n other lists that namespace only"

ib get hw -o wide
like "$out" '^NAME   +STATE   +AGE$' "wide hardware table"

ib get hw node-a -o json
is "$rc" 0 "get one -o json"
is "$(printf '%s' "$out" | pyjson 'd["kind"], d["metadata"]["name"], d["spec"]["interfaces"][0]["dhcp"]["mac"]')" \
	"('Hardware', 'node-a', '02:00:00:00:00:0a')" "the JSON is the object"
is "$(printf '%s' "$out" | pyjson 'bool(d["metadata"]["uid"]) and int(d["metadata"]["resourceVersion"]) > 0')" \
	"True" "with uid and resourceVersion"
ib get hw -o json
is "$(printf '%s' "$out" | pyjson 'd["kind"], [i["metadata"]["name"] for i in d["items"]]')" \
	"('List', ['node-a', 'node-b'])" "a list is a v1 List"
ib get hw node-a node-b -o json
is "$(printf '%s' "$out" | pyjson 'd["kind"], len(d["items"])')" "('List', 2)" "two names give a List"

ib get hw node-a -o yaml
like "$out" '^kind: Hardware$' "-o yaml prints the object"
like "$out" '^  name: node-a$' "with its name"
like "$out" 'mac: "?02:00:00:00:00:0a' "and its MAC"
ib get hw -o yaml
like "$out" '^kind: List$' "-o yaml of a list"
printf '%s\n' "$out" >"$IB_TMP/roundtrip.yaml"
ib apply -f "$IB_TMP/roundtrip.yaml"
is "$rc" 0 "the YAML of get applies back"
is "$(printf '%s\n' "$out" | grep -c ' unchanged$')" 2 "unchanged"

ib get hw -l rack=r1 -o name
is "$out" "hardware.tinkerbell.org/node-a" "-l rack=r1"
ib get hw -l 'rack!=r1' -o name
is "$out" "hardware.tinkerbell.org/node-b" "-l rack!=r1"
ib get hw -l 'rack in (r1,r2),role=worker' -o name
is "$out" "hardware.tinkerbell.org/node-a
hardware.tinkerbell.org/node-b" "-l set-based selector"
ib get hw -l 'nosuch' -o name
is "$rc:$out" "0:" "-l with no match prints nothing"
ib get hw -l 'nosuch'
like "$err" '^No resources found in default namespace\.$' "an empty table says so on stderr"

ib get templates
like "$out" '^NAME   +STATE   +AGE$' "template table"
like "$out" '^tpl-a ' "template row"
ib get tpl tpl-a -o json
like "$(printf '%s' "$out" | pyjson 'd["spec"]["data"]')" 'name: tpl-a' "template data kept"

ib get workflows
like "$out" '^NAME   +TEMPLATE   +STATE   +ACTION   +AGENT   +HARDWARE   +AGE$' "workflow columns"
like "$out" '^wf-a   +tpl-a   .*node-a   +[0-9]+[smh]' "workflow row with its template and hardware"
ib get wf -o wide
like "$out" '^NAME   +TEMPLATE   +STATE   +TASK   +ACTION   +AGENT   +HARDWARE   +TEMPLATE-RENDERING   +AGE$' \
	"workflow wide columns"

# Several kinds, as kubectl takes them: a table per kind, a blank line
# between them, names with their kind.
ib get hardware,workflows
is "$rc" 0 "get hardware,workflows"
like "$out" '^hardware\.tinkerbell\.org/node-a   +[0-9]+[smh]' "hardware names carry their kind"
like "$out" '^workflow\.tinkerbell\.org/wf-a   +tpl-a ' "workflow names carry their kind"
is "$(printf '%s\n' "$out" | grep -c '^NAME ')" 2 "one table per kind"
is "$(printf '%s\n' "$out" | grep -c '^$')" 1 "separated by one blank line"
is "$(printf '%s\n' "$out" | sed -n 1p | sed 's/ .*//')" NAME "hardware first, in the order asked"
ib get wf,hw -o name
is "$out" "workflow.tinkerbell.org/wf-a
hardware.tinkerbell.org/node-a
hardware.tinkerbell.org/node-b" "get wf,hw -o name"
ib get hw,wf,hw -o json
is "$(printf '%s' "$out" | pyjson '[i["kind"] for i in d["items"]]')" \
	"['Hardware', 'Hardware', 'Workflow']" "-o json: one List of every kind, a repeated kind once"
ib get hw,wf node-a
is "$rc" 1 "a name missing in one of the kinds is an error"
like "$out" '^hardware\.tinkerbell\.org/node-a ' "and the kinds that have it are printed"
like "$err" 'NotFound' "the missing one is NotFound"
ib get hw,nosuch
is "$rc" 2 "an unknown kind in the list is a usage error"
like "$err" 'unknown kind "nosuch"' "naming it"
ib get hw,leases
is "$rc" 2 "leases do not mix with other kinds"
ib get templates,jobs -n nosuch-ns
is "$rc" 0 "several kinds with nothing in them"
like "$err" '^No resources found in nosuch-ns namespace\.$' "say so once"

ib get machines.bmc.tinkerbell.org
like "$out" '^NAME   +HOST   +POWER   +CONTACTABLE   +AGE$' "bmc machine table: host, power, contactable"
like "$out" '^bmc-node-a   +192\.0\.2\.10   ' "bmc machine row"
ib get machine -o wide
like "$out" '^NAME   +HOST   +POWER   +CONTACTABLE   +MESSAGE   +AGE$' "bmc machine wide adds MESSAGE"

# The bmc kinds' columns, from status as the controllers write it.
api PATCH /apis/bmc.tinkerbell.org/v1alpha1/namespaces/default/machines/bmc-node-a/status \
	-H 'Content-Type: application/merge-patch+json' \
	-d '{"status":{"powerState":"off","conditions":[{"type":"Contactable","status":"False","message":"authentication failed"}]}}'
is "$code" 200 "machine status patch"
ib get machine -o wide
like "$out" '^bmc-node-a   +192\.0\.2\.10   +off   +False   +authentication failed   +[0-9]' \
	"machine: power, Contactable and its message"
cat >"$IB_TMP/job.yaml" <<'EOF'
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Job
metadata:
  name: nb
spec:
  machineRef: {name: bmc-node-a, namespace: default}
  tasks:
  - powerAction: "off"
  - oneTimeBootDeviceAction: {device: [pxe], efiBoot: true}
  - bootDevice: {device: disk, persistent: true}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Task
metadata:
  name: nb-task-0
  labels: {owner-name: nb}
spec:
  task: {powerAction: "off"}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Task
metadata:
  name: nb-task-1
  labels: {owner-name: nb}
spec:
  task: {oneTimeBootDeviceAction: {device: [pxe], efiBoot: true}}
EOF
ib apply -f "$IB_TMP/job.yaml"
is "$rc" 0 "apply of a Job and two Tasks"
api PATCH /apis/bmc.tinkerbell.org/v1alpha1/namespaces/default/tasks/nb-task-0/status \
	-H 'Content-Type: application/merge-patch+json' \
	-d '{"status":{"startTime":"2026-01-01T00:00:00Z","conditions":[{"type":"Completed","status":"True"}]}}'
api PATCH /apis/bmc.tinkerbell.org/v1alpha1/namespaces/default/tasks/nb-task-1/status \
	-H 'Content-Type: application/merge-patch+json' \
	-d '{"status":{"startTime":"2026-01-01T00:00:00Z"}}'
api PATCH /apis/bmc.tinkerbell.org/v1alpha1/namespaces/default/jobs/nb/status \
	-H 'Content-Type: application/merge-patch+json' \
	-d '{"status":{"startTime":"2026-01-01T00:00:00Z","conditions":[{"type":"Running","status":"True"}]}}'
ib get jobs
like "$out" '^NAME   +MACHINE   +STATE   +TASKS   +AGE$' "job columns"
like "$out" '^nb   +bmc-node-a   +Running   +1/3   ' "job row: machine, state, tasks done/total"
ib get tasks
like "$out" '^NAME   +ACTION   +STATE   +AGE$' "task columns"
like "$out" '^nb-task-0   +power off   +Completed   ' "task row: a power action"
like "$out" '^nb-task-1   +bootdev pxe once efi   +Running   ' "task row: a one-time boot device"
ib get machines,jobs,tasks
is "$rc" 0 "get machines,jobs,tasks"
like "$out" '^job\.bmc\.tinkerbell\.org/nb   +bmc-node-a   +Running   +1/3   ' "jobs among several kinds"
api PATCH /apis/bmc.tinkerbell.org/v1alpha1/namespaces/default/jobs/nb/status \
	-H 'Content-Type: application/merge-patch+json' \
	-d '{"status":{"conditions":[{"type":"Failed","status":"True","message":"bmc task timeout"}]}}'
ib get job nb
like "$out" '^nb   +bmc-node-a   +Failed   ' "a Failed condition: Failed"
ib delete -f "$IB_TMP/job.yaml"

# describe of a Hardware follows spec.bmcRef to its Machine.
cat >"$IB_TMP/hw-bmc.yaml" <<'EOF'
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: hw-bmc
spec:
  bmcRef: {apiGroup: bmc.tinkerbell.org, kind: Machine, name: bmc-node-a}
EOF
ib apply -f "$IB_TMP/hw-bmc.yaml"
is "$rc" 0 "apply of a Hardware with bmcRef"
ib describe hw hw-bmc
like "$out" '^BMC: +machine/bmc-node-a: power off, contactable False: authentication failed$' \
	"describe hardware: its Machine's power state and Contactable"
ib describe hw node-a
unlike "$out" '^BMC:' "describe hardware without bmcRef: no BMC line"
ib delete -f "$IB_TMP/hw-bmc.yaml"

# power and bootdev: usage, a missing Machine, and (no controller acts on
# the Job here) the timeout.
ib power on
is "$rc" 2 "power without a machine: status 2"
ib power sideways bmc-node-a
is "$rc" 2 "power with an unknown action: status 2"
ib bootdev floppy bmc-node-a
is "$rc" 2 "bootdev with an unknown device: status 2"
ib power on bmc-node-a --timeout soon
is "$rc" 2 "a bad --timeout: status 2"
ib power on nosuch
is "$rc" 1 "power of a missing machine: status 1"
like "$err" 'machine "nosuch" not found' "says the machine is not found"
ib bootdev pxe --persistent --efi bmc-node-a --timeout 1s
is "$rc" 1 "a Job nobody runs: status 1 after --timeout"
like "$out" '^job\.bmc\.tinkerbell\.org/bootdev-pxe-bmc-node-a-[0-9]+ created$' "the Job is created"
like "$err" 'did not finish within 1 s' "says it timed out"
job=$(printf '%s\n' "$out" | sed -n 's|^job\.bmc\.tinkerbell\.org/\(.*\) created$|\1|p')
ib get job "$job" -o json
is "$(printf '%s' "$out" | pyjson 'd["spec"]')" \
	"{'machineRef': {'name': 'bmc-node-a', 'namespace': 'default'}, 'tasks': [{'bootDevice': {'device': 'pxe', 'persistent': True, 'efiBoot': True}}]}" \
	"the Job names the Machine and the one action"
ib delete job "$job"

# A name already taken (a Job of the same second) gets a suffix.
now=$(date +%s)
: >"$IB_TMP/taken.yaml"
for t in $now $((now + 1)) $((now + 2)) $((now + 3)); do
	printf 'apiVersion: bmc.tinkerbell.org/v1alpha1\nkind: Job\nmetadata:\n  name: power-off-bmc-node-a-%s\nspec:\n  machineRef: {name: bmc-node-a, namespace: default}\n  tasks: [{powerAction: "off"}]\n---\n' "$t" >>"$IB_TMP/taken.yaml"
done
ib apply -f "$IB_TMP/taken.yaml"
is "$rc" 0 "Jobs named as power would name them in the next seconds"
ib power off bmc-node-a --timeout 1s
like "$out" '^job\.bmc\.tinkerbell\.org/power-off-bmc-node-a-[0-9]+-1 created$' \
	"power takes the next free name"
job=$(printf '%s\n' "$out" | sed -n 's|^job\.bmc\.tinkerbell\.org/\(.*\) created$|\1|p')
ib delete -f "$IB_TMP/taken.yaml"
ib delete job "$job"
is "$rc" 0 "and that Job can be deleted"

ib get secrets
like "$out" '^NAME   +TYPE   +DATA   +AGE$' "secret columns"
like "$out" '^bmc-node-a   +Opaque   +2   ' "secret row: type and key count"

ib get jobs
is "$rc" 0 "get of an empty kind succeeds"
is "$out" "" "and prints nothing on stdout"
like "$err" '^No resources found in default namespace\.$' "but says so on stderr"
ib get jobs -o json
is "$(printf '%s' "$out" | pyjson 'd["kind"], d["items"]')" "('List', [])" "-o json of nothing is an empty List"

ib get hw nosuch
is "$rc" 1 "get of a missing name fails"
like "$err" '^Error from server \(NotFound\): ' "with the server's reason"

# ---- the API parts without a command, with curl ----

api PATCH /apis/tinkerbell.org/v1alpha1/namespaces/default/hardware/node-a \
	-H 'Content-Type: application/merge-patch+json' -d '{"metadata":{"labels":{"patched":"yes"}}}'
is "$code" 200 "merge patch over the socket"
ib get hw -l patched=yes -o name
is "$out" "hardware.tinkerbell.org/node-a" "the patched label is selectable"
api PATCH /apis/tinkerbell.org/v1alpha1/namespaces/default/hardware/node-a \
	-H 'Content-Type: application/strategic-merge-patch+json' -d '{"metadata":{}}'
is "$code" 415 "a strategic merge patch is 415, as for custom resources"

api PATCH /apis/tinkerbell.org/v1alpha1/namespaces/default/hardware/node-a/status \
	-H 'Content-Type: application/merge-patch+json' -d '{"status":{"state":"Ready"}}'
is "$code" 200 "status patch"
ib get hw node-a
like "$out" '^node-a   +Ready   +[0-9]' "the STATE column shows .status.state"

api PATCH /apis/tinkerbell.org/v1alpha1/namespaces/default/workflows/wf-a/status \
	-H 'Content-Type: application/merge-patch+json' \
	-d '{"status":{"state":"RUNNING","templateRendering":"successful","currentState":{"agentID":"02:00:00:00:00:0a","taskName":"install","actionName":"stream-image","state":"RUNNING"}}}'
is "$code" 200 "workflow status patch"
[ "$code" = 200 ] || diag "$out"
ib get wf -o wide
like "$out" '^wf-a   +tpl-a   +RUNNING   +install   +stream-image   +02:00:00:00:00:0a   +node-a   +successful   +[0-9]' \
	"every workflow column in -o wide"
ib get wf
like "$out" '^wf-a   +tpl-a   +RUNNING   +stream-image   +02:00:00:00:00:0a   +node-a   +[0-9]' \
	"the narrow table hides TASK and TEMPLATE-RENDERING"

# ---- describe ----

ib describe hw node-a
is "$rc" 0 "describe hardware"
like "$out" '^Name: +node-a$' "describe: name"
like "$out" '^Namespace: +default$' "describe: namespace"
like "$out" '^Labels: +patched=yes$|^ +patched=yes$' "describe: labels"
like "$out" '^Spec:$' "describe: spec"
like "$out" '^ +mac: "?02:00:00:00:00:0a' "describe: spec fields, indented"
like "$out" '^Status:$' "describe: status"
like "$out" '^Events:' "describe: events"
ib describe secret bmc-node-a
like "$out" '^password: +6 bytes$' "describe secret: sizes"
unlike "$out" 'c2VjcmV0|secret$' "describe secret: never the value"
ib describe hw nosuch
is "$rc" 1 "describe of a missing object fails"

# ---- a Secret's values never reach the output ----

# Written with stringData, as for kubectl: stored as data (base64), and
# neither the value nor its base64 is printed by any command.
PW=Pw-$$-never-printed
PW64=$(printf '%s' "$PW" | base64)
printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: redact\ntype: Opaque\nstringData:\n  username: admin\n  password: %s\n' "$PW" >"$IB_TMP/redact.yaml"
ib apply -f "$IB_TMP/redact.yaml"
is "$rc" 0 "apply of a Secret written with stringData"
api GET /api/v1/namespaces/default/secrets/redact
is "$(printf '%s' "$out" | pyjson 'd["data"]["password"]')" "$PW64" \
	"stringData is stored as base64 data"
is "$(printf '%s' "$out" | pyjson '"stringData" in d')" "False" "and stringData is not kept"
leaks=
for cmd in "get secret redact" "get secret redact -o wide" "get secret redact -o yaml" \
	"get secret redact -o json" "get secrets -o yaml" "get secrets,machines -o json" \
	"get secret redact -o name" "describe secret redact" "events secret redact" \
	"events secret redact -o json" "get secrets -A -o yaml"; do
	# shellcheck disable=SC2086 # the command's words
	ib $cmd
	case "$out$err" in
	*"$PW"* | *"$PW64"*) leaks="$leaks [$cmd]" ;;
	esac
	[ "$rc" = 0 ] || leaks="$leaks [$cmd: status $rc]"
done
is "$leaks" "" "no command prints the password or its base64"
ib get secret redact -o yaml
like "$out" '^  password: "?<redacted>"?$' "get -o yaml: the value is redacted"
ib get secret redact -o json
is "$(printf '%s' "$out" | pyjson 'd["data"]["username"]')" "<redacted>" \
	"get -o json: every value is redacted"
ib describe secret redact
like "$out" "^password: +${#PW} bytes\$" "describe: the size of the value, not the value"
"$IRONBELL" watch secrets -o json >"$IB_TMP/watch-secret.out" 2>&1 &
rpid=$!
ib_bg "$rpid"
ok "watch -o json shows the Secret" wait_for 10 file_has "$IB_TMP/watch-secret.out" '"redact"'
kill -INT "$rpid"
wait "$rpid"
ok "watch -o json: the value is redacted" file_has "$IB_TMP/watch-secret.out" '"password": ?"<redacted>"'
if grep -q -e "$PW" -e "$PW64" "$IB_TMP/watch-secret.out"; then
	fail "watch -o json prints the password"
else
	pass "watch -o json never prints the password"
fi
ib delete secret redact

# ---- events ----

# Every create, update and delete through the admin API leaves an event.
ib events
is "$rc" 0 "events"
like "$out" '^TIME   +TYPE   +REASON   +OBJECT   +MESSAGE$' "events table header"
like "$out" 'Normal +Created +hardware/node-a +created through the admin API \(apply\)' \
	"events: apply of node-a recorded as Created"
like "$out" 'Normal +Updated +hardware/node-a +configured through the admin API' \
	"events: the change of node-a recorded as Updated"
ib describe hw node-a
like "$out" '^  Normal +Created +[0-9]+[smhd] +created through the admin API' \
	"describe: lists the object's own events"
ib events -n nosuch-ns
like "$err" '^No events found in nosuch-ns namespace\.$' "no events: says so"
ib events hw node-a -o json
is "$(printf '%s' "$out" | pyjson 'd["kind"]')" "EventList" "events -o json is an EventList"
is "$(printf '%s' "$out" | pyjson 'd["items"][0]["reason"]')" "Created" \
	"events -o json: the first event of node-a is its creation"
"$IRONBELL" events -f >"$IB_TMP/events.out" 2>"$IB_TMP/events.err" &
epid=$!
ib_bg "$epid"
ok "events -f prints its header and keeps following" wait_for 10 file_has "$IB_TMP/events.out" '^TIME +TYPE'
sleep 0.5
ok "events -f is still running" ib_alive "$epid"
printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: ev-probe\nstringData:\n  k: v\n' |
	"$IRONBELL" apply -f - >/dev/null 2>&1
ok "events -f shows an event that happens while it follows" \
	wait_for 10 file_has "$IB_TMP/events.out" 'Created +secret/ev-probe'
kill -INT "$epid"
wait "$epid"
is "$?" 0 "events -f ends cleanly on SIGINT"

# ---- watch ----

"$IRONBELL" watch hardware >"$IB_TMP/watch.out" 2>"$IB_TMP/watch.err" &
wpid=$!
ib_bg "$wpid"
"$IRONBELL" watch hw -l rack=r1 >"$IB_TMP/watch-sel.out" 2>&1 &
spid=$!
ib_bg "$spid"
"$IRONBELL" watch hw -o json >"$IB_TMP/watch-json.out" 2>&1 &
jpid=$!
ib_bg "$jpid"
ok "watch starts with ADDED for existing objects" \
	wait_for 10 file_has "$IB_TMP/watch.out" '^ADDED hardware/node-a rv=[0-9]+$'
cat >"$IB_TMP/w.yaml" <<'EOF'
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: watched
  labels: {rack: r1}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:00:41"}
EOF
ib apply -f "$IB_TMP/w.yaml"
ok "watch sees ADDED" wait_for 10 file_has "$IB_TMP/watch.out" '^ADDED hardware/watched rv=[0-9]+$'
sed 's/rack: r1/rack: r1, extra: x/' "$IB_TMP/w.yaml" >"$IB_TMP/w2.yaml"
ib apply -f "$IB_TMP/w2.yaml"
like "$out" 'watched configured' "modify the watched object"
ok "watch sees MODIFIED" wait_for 10 file_has "$IB_TMP/watch.out" '^MODIFIED hardware/watched rv=[0-9]+$'
ib delete hw watched
ok "watch sees DELETED" wait_for 10 file_has "$IB_TMP/watch.out" '^DELETED hardware/watched rv=[0-9]+$'
ok "watch -l sees the matching object" wait_for 10 file_has "$IB_TMP/watch-sel.out" '^DELETED hardware/watched '
unlike "$(cat "$IB_TMP/watch-sel.out")" 'node-b' "watch -l does not see the others"
ok "watch -o json prints raw events" \
	wait_for 10 file_has "$IB_TMP/watch-json.out" '^\{"type": ?"DELETED", ?"object": ?\{'
ok "watch is still running" ib_alive "$wpid"
# A watch that stays quiet for longer than http.idle_timeout (2 s here)
# is not closed: the first change after the silence still arrives.
"$IRONBELL" watch templates >"$IB_TMP/watch-quiet.out" 2>"$IB_TMP/watch-quiet.err" &
qpid=$!
ib_bg "$qpid"
sleep 4
cat >"$IB_TMP/quiet.yaml" <<'EOF'
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata:
  name: after-silence
spec:
  data: "version: \"0.1\"\nname: x\nglobal_timeout: 60\ntasks: []\n"
EOF
ib apply -f "$IB_TMP/quiet.yaml"
is "$rc" 0 "apply after a quiet period"
ok "a quiet watch outlives the idle timeout and sees the change" \
	wait_for 10 file_has "$IB_TMP/watch-quiet.out" '^ADDED template/after-silence rv=[0-9]+$'
ok "the quiet watch is still running" ib_alive "$qpid"
kill -INT "$qpid"
wait "$qpid"
ib delete template after-silence

# A resourceVersion from the future is refused, as the API server does.
api GET "/apis/tinkerbell.org/v1alpha1/hardware?watch=1&resourceVersion=999999999"
is "$code" 504 "watch from a future resourceVersion: 504"
like "$out" '"reason": ?"Timeout"' "with reason Timeout"
like "$out" 'Too large resource version: 999999999' "naming the version"

# Watches are capped below the admin listener's connection limit, so that
# ordinary requests always get through.
cap_pids=
i=0
while [ $i -lt 100 ]; do
	curl -s -N --max-time 30 --unix-socket "$IB_SOCK" \
		"http://localhost/apis/bmc.tinkerbell.org/v1alpha1/jobs?watch=1" >/dev/null 2>&1 &
	cap_pids="$cap_pids $!"
	ib_bg "$!"
	i=$((i + 1))
done
# Probe only once every slot is taken: a probe that got in first would hold
# a slot itself and race the others.
all_open() {
	api GET /metrics
	printf '%s\n' "$out" | grep -Eq '^ironbell_api_watches (9[6-9]|[1-9][0-9][0-9])$'
}
ok "the metrics count the open watches up to the cap" wait_for 20 all_open
api GET "/apis/bmc.tinkerbell.org/v1alpha1/jobs?watch=1" --max-time 5
is "$code" 429 "past the cap a watch gets 429"
like "$out" '"reason": ?"TooManyRequests"' "with reason TooManyRequests"
ib get hw node-a -o name
is "$rc:$out" "0:hardware.tinkerbell.org/node-a" "ordinary requests still get through"
for p in $cap_pids; do kill "$p" 2>/dev/null; done
for p in $cap_pids; do wait "$p" 2>/dev/null; done
kill -INT "$wpid"
wait "$wpid"
is "$?" 0 "watch ends cleanly on SIGINT"
rv1=$(sed -n 's/^ADDED hardware\/watched rv=//p' "$IB_TMP/watch.out")
if [ -n "$rv1" ]; then
	run timeout 5 "$IRONBELL" watch hw --resource-version "$rv1"
	like "$out" '^MODIFIED hardware/watched ' "watch --resource-version resumes after it"
	unlike "$out" '^ADDED hardware/node-a ' "without the older objects"
else
	fail "watch --resource-version resumes after it" "no rv seen"
fi

# ---- delete ----

ib delete hw node-b
is "$rc:$out" '0:hardware.tinkerbell.org "node-b" deleted' "delete KIND NAME"
ib get hw node-b
is "$rc" 1 "the deleted object is gone"
ib delete -f "$GOOD/40-workflow.yaml"
is "$rc:$out" '0:workflow.tinkerbell.org "wf-a" deleted' "delete -f"
ib delete hw nosuch
is "$rc" 1 "delete of a missing object fails"
like "$err" '^Error from server \(NotFound\)' "with NotFound"
ib delete hw nosuch --ignore-not-found
is "$rc" 0 "unless --ignore-not-found"

# ---- version, TCP, token ----

ib version
is "$rc" 0 "version"
like "$out" '^Client Version: [0-9]' "client version"
like "$out" '^Server Version: [0-9]' "server version"
client_line=$(printf '%s\n' "$out" | sed -n '/^Client Version: /p')
run env IRONBELL_SOCKET="$IB_TMP/no-such.sock" "$IRONBELL" version --client
is "$rc" 0 "version --client needs no daemon"
is "$out" "$client_line" "version --client prints the client's line alone"

ib --server "http://127.0.0.1:$ADMIN_PORT" --token-file "$IB_TMP/token" get hw -o name
is "$rc:$out" "0:hardware.tinkerbell.org/node-a" "--server with --token-file"
run env IRONBELL_TOKEN="$TOKEN" "$IRONBELL" --server "http://127.0.0.1:$ADMIN_PORT" get hw node-a -o name
is "$rc" 0 "--server with \$IRONBELL_TOKEN"
ib --server "http://127.0.0.1:$ADMIN_PORT" get hw
is "$rc" 1 "--server without a token fails"
like "$err" 'Unauthorized' "as Unauthorized"

# ---- metrics ----

run curl -sf --max-time 10 "http://127.0.0.1:$IB_HTTP_PORT/metrics"
is "$rc" 0 "metrics on the public listener"
like "$out" '^ironbell_objects\{kind="Hardware"\} [0-9]+' "ironbell_objects for Hardware"
like "$out" '^ironbell_objects\{kind="Workflow"\} [0-9]+' "ironbell_objects for Workflow"
run curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$IB_HTTP_PORT/apis/tinkerbell.org/v1alpha1/hardware"
is "$out" 404 "the admin API is not on the public listener"

# ---- usage and connection errors ----

ib
is "$rc" 2 "no command: status 2"
ib frobnicate
is "$rc" 2 "unknown command: status 2"
like "$err" 'unknown command' "and says so"
ib get
is "$rc" 2 "get without a kind: status 2"
ib get nosuchkind
is "$rc" 2 "unknown kind: status 2"
ib get hw --bogus
is "$rc" 2 "unknown flag: status 2"
ib get hw -o xml
is "$rc" 2 "unknown output format: status 2"
ib apply
is "$rc" 2 "apply without -f: status 2"
ib delete hw
is "$rc" 2 "delete without a name: status 2"
ib --help
is "$rc" 0 "--help: status 0"
like "$out" 'apply -f' "--help lists the commands"
ib --socket "$IB_TMP/nosuch.sock" get hw
is "$rc" 1 "no daemon: status 1"
like "$err" "nosuch\.sock" "the error names the socket"
ib apply -f "$IB_TMP/does-not-exist.yaml"
is "$rc" 1 "a missing file: status 1"

"$IRONBELL" watch hw >"$IB_TMP/watch-stop.out" 2>&1 &
wpid=$!
ib_bg "$wpid"
ok "a last watch is running" wait_for 10 file_has "$IB_TMP/watch-stop.out" '^ADDED hardware/node-a '
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean
ok "the watch ends when the daemon stops" wait_for 15 sh -c "! test -d /proc/$wpid || grep -q '^State:.*Z' /proc/$wpid/status"
wait "$wpid"
is "$?" 0 "with status 0"
ib get hw
is "$rc" 1 "daemon stopped: status 1"
like "$err" 'cannot connect' "says it cannot connect"

tap_done
