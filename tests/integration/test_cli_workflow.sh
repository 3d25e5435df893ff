#!/bin/sh
# test_cli_workflow — the `ironbell` commands for Workflows against a real
# ironbelld: get workflows (the CRD's columns, -o wide, a status in the
# shape of tinkerbell/tink <= v0.12), describe workflow (tasks, actions,
# what failed and its message) and provision (a free
# Hardware chosen among three by labels, --map, --netboot, none free, a
# name that exists). The statuses are written by the test through the
# status subresource, as the engine would write them.
set -u

. "$top_srcdir/tests/lib.sh"

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

# api METHOD PATH [CURL ARGS...]: a request on the admin socket; sets $rc,
# $out (the body) and $code (the HTTP status).
api() {
	_m=$1
	_p=$2
	shift 2
	run curl -s -o "$IB_TMP/api.body" -w '%{http_code}' --max-time 30 \
		--unix-socket "$IB_SOCK" -X "$_m" "$@" "http://localhost$_p"
	code=$out
	out=$(cat "$IB_TMP/api.body")
}

WF=/apis/tinkerbell.org/v1alpha1/namespaces/default/workflows

# set_status NAME JSON: merges JSON (the "status" object) into the
# Workflow's status through the status subresource.
set_status() {
	api PATCH "$WF/$1/status" -H 'Content-Type: application/merge-patch+json' \
		-d "{\"status\":$2}"
	[ "$code" = 200 ] || diag "status of $1: $code $out"
}

ib_write_config "bmc:
  enabled: false" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

cat >"$IB_TMP/objects.yaml" <<'EOF'
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata:
  name: ubuntu
spec:
  data: |
    version: "0.1"
    name: ubuntu
    global_timeout: 1800
    tasks:
      - name: os-installation
        worker: "{{.device_1}}"
        actions:
          - name: stream-image
            image: quay.io/tinkerbell/actions/image2disk:v1.0.0
            timeout: 600
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: pool-c
  labels: {pool: p1, rack: r1}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:01:0c"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: pool-a
  labels: {pool: p1, rack: r1}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:01:0a"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: pool-b
  labels: {pool: p1, rack: r2}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:01:0b"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: other
  labels: {pool: p2}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:02:0a"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: wf-run
spec:
  templateRef: ubuntu
  hardwareRef: other
  hardwareMap: {device_1: "02:00:00:00:02:0a"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: wf-fail
spec:
  templateRef: ubuntu
  hardwareRef: other
  hardwareMap: {device_1: "02:00:00:00:02:0a"}
  bootOptions: {toggleAllowNetboot: true}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: wf-legacy
spec:
  templateRef: ubuntu
  hardwareRef: other
EOF
ib apply -f "$IB_TMP/objects.yaml"
is "$rc" 0 "the Template, four Hardware and three Workflows are applied"
[ "$rc" = 0 ] || diag "$err"

# ---- get workflows ----

set_status wf-run '{"state":"RUNNING","templateRendering":"successful","agentID":"02:00:00:00:02:0a","currentState":{"agentID":"02:00:00:00:02:0a","taskName":"os-installation","actionName":"stream-image","state":"RUNNING"}}'
set_status wf-legacy '{"state":"STATE_FAILED","currentAction":"disk-wipe","templateRending":"successful","tasks":[{"name":"os-installation","worker":"02:00:00:00:02:0a","actions":[{"name":"disk-wipe","image":"quay.io/tinkerbell-actions/disk-wipe:v1","timeout":90,"status":"STATE_FAILED","startedAt":"2026-01-01T00:00:00Z","seconds":42,"message":"wipefs: /dev/sda: probing failed"}]}]}'
is "$code" 200 "a status of the tink v0.12 shape is stored"

ib get workflows -o wide
is "$rc" 0 "get workflows -o wide"
like "$out" '^NAME +TEMPLATE +STATE +TASK +ACTION +AGENT +HARDWARE +TEMPLATE-RENDERING +AGE$' \
	"-o wide has every printer column of the CRD"
like "$out" '^wf-run +ubuntu +RUNNING +os-installation +stream-image +02:00:00:00:02:0a +other +successful +[0-9]' \
	"a running workflow in -o wide"
like "$out" '^wf-legacy +ubuntu +STATE_FAILED +os-installation +disk-wipe +02:00:00:00:02:0a +other +successful +[0-9]' \
	"a legacy workflow shows its state, currentAction as ACTION, its task's worker as AGENT"
for alias in wf workflow workflows.tinkerbell.org; do
	ib get "$alias"
	like "$out" '^NAME +TEMPLATE +STATE +ACTION +AGENT +HARDWARE +AGE$' "get $alias: the narrow columns"
done
like "$out" '^wf-legacy +ubuntu +STATE_FAILED +disk-wipe +02:00:00:00:02:0a +other +[0-9]' \
	"a legacy workflow in the narrow table"

# ---- describe ----

set_status wf-fail '{"state":"FAILED","templateRendering":"successful","agentID":"02:00:00:00:02:0a","globalTimeout":1800,"globalExecutionStop":"2026-01-01T00:30:00Z",
 "currentState":{"agentID":"02:00:00:00:02:0a","taskID":"01TASK","actionID":"01ACT2","taskName":"os-installation","actionName":"grow-fs","state":"FAILED"},
 "conditions":[{"type":"TemplateRenderedSuccess","status":"True","reason":"Complete","message":"template rendered","time":"2026-01-01T00:00:00Z"}],
 "tasks":[{"id":"01TASK","name":"os-installation","agentID":"02:00:00:00:02:0a","actions":[
  {"id":"01ACT1","name":"stream-image","image":"quay.io/tinkerbell/actions/image2disk:v1.0.0","timeout":600,"state":"SUCCESS","executionStart":"2026-01-01T00:00:05Z","executionStop":"2026-01-01T00:01:07Z","executionDuration":"1m2s","attempts":1},
  {"id":"01ACT2","name":"grow-fs","image":"quay.io/tinkerbell/actions/cexec:v1.0.0","timeout":180,"state":"FAILED","executionStart":"2026-01-01T00:01:10Z","executionStop":"2026-01-01T00:01:13Z","attempts":3,"retries":2,
   "message":"growpart: /dev/sda1: no space left\nresize2fs: bad superblock"},
  {"id":"01ACT3","name":"kexec","image":"quay.io/tinkerbell/actions/kexec:v1.0.0","timeout":90,"state":"PENDING"}]}]}'
is "$code" 200 "a FAILED status with three actions is stored"

ib describe workflow wf-fail
is "$rc" 0 "describe workflow"
like "$out" '^Name: +wf-fail$' "describe: the name"
like "$out" '^Template: +ubuntu$' "describe: the template"
like "$out" '^Hardware: +other$' "describe: the hardware"
like "$out" '^Hardware Map: +device_1=02:00:00:00:02:0a$' "describe: the hardware map"
like "$out" '^Boot Options: +toggleAllowNetboot=true$' "describe: the boot options"
like "$out" '^State: +FAILED$' "describe: the state"
like "$out" '^Agent: +02:00:00:00:02:0a$' "describe: the agent"
like "$out" '^Global Timeout: +1800s \(30m0s\)$' "describe: the global timeout"
like "$out" '^Execution Stop: +2026-01-01T00:30:00Z \(' "describe: the global stop time"
like "$out" '^Failed Action: +task os-installation, action grow-fs: FAILED after 3s$' \
	"describe: which action failed, where, after how long"
like "$out" '^  Message: +growpart: /dev/sda1: no space left$' "describe: why, its first line"
like "$out" '^ {20}resize2fs: bad superblock$' "describe: the message's second line indented"
like "$out" '^  TemplateRenderedSuccess +True +Complete +[0-9].* +template rendered$' \
	"describe: the conditions"
like "$out" '^  Task os-installation +agent 02:00:00:00:02:0a, id 01TASK$' "describe: the task and its agent"
like "$out" '^    1\. stream-image +SUCCESS$' "describe: the first action and its state"
like "$out" '^ +Duration: +1m2s$' "describe: the duration the agent reported"
like "$out" '^    2\. grow-fs +FAILED$' "describe: the failed action"
like "$out" '^ +Image: +quay.io/tinkerbell/actions/cexec:v1.0.0$' "describe: its image"
like "$out" '^ +Started: +2026-01-01T00:01:10Z \(' "describe: its start"
like "$out" '^ +Duration: +3s$' "describe: a duration from start and stop"
like "$out" '^ +Attempts: +3 of 3 \(retries 2\)$' "describe: attempts out of retries"
like "$out" '^ +Message: +growpart: /dev/sda1: no space left$' "describe: the action's message"
like "$out" '^ {20}resize2fs: bad superblock$' "describe: its second line indented under it"
like "$out" '^    3\. kexec +PENDING$' "describe: the pending action"
like "$out" '^Events:' "describe: the events"
unlike "$out" '^Status:$' "describe: the tasks instead of the status's YAML"

ib describe wf wf-legacy
is "$rc" 0 "describe of a legacy workflow"
like "$out" '^State: +STATE_FAILED \(the status of tinkerbell/tink v0.12 and before\)$' \
	"describe legacy: the state, said to be legacy"
like "$out" '^Current Action: +task os-installation, action disk-wipe$' "describe legacy: currentAction"
like "$out" '^Failed Action: +task os-installation, action disk-wipe: STATE_FAILED after 42s$' \
	"describe legacy: the failed action with its seconds"
like "$out" '^  Task os-installation +agent 02:00:00:00:02:0a$' "describe legacy: the worker"
like "$out" '^ +Started: +2026-01-01T00:00:00Z \(' "describe legacy: startedAt"
like "$out" '^ +Message: +wipefs: /dev/sda: probing failed$' "describe legacy: the message"
like "$out" '^Template Rendering: +successful$' "describe legacy: templateRending"

# ---- provision ----

# pool-a is held by a Workflow that has no status yet, pool-b by a RUNNING
# one; a finished and a disabled Workflow do not hold pool-c.
cat >"$IB_TMP/holders.yaml" <<'EOF'
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: hold-a
spec:
  templateRef: ubuntu
  hardwareRef: pool-a
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: hold-b
spec:
  templateRef: ubuntu
  hardwareRef: pool-b
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: done-c
spec:
  templateRef: ubuntu
  hardwareRef: pool-c
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: off-c
spec:
  templateRef: ubuntu
  hardwareRef: pool-c
  disabled: true
EOF
ib apply -f "$IB_TMP/holders.yaml"
is "$rc" 0 "four workflows on the pool's hardware"
set_status hold-b '{"state":"RUNNING"}'
set_status done-c '{"state":"SUCCESS"}'

ib provision --template ubuntu --selector pool=p1 --map os=jammy --netboot
is "$rc" 0 "provision chooses a free hardware"
[ "$rc" = 0 ] || diag "$err"
is "$out" "ubuntu-pool-c" "and prints the workflow's name, <template>-<hardware>"
like "$err" 'pool-c' "it says which hardware it chose"
api GET "$WF/ubuntu-pool-c"
is "$code" 200 "the workflow exists"
is "$(printf '%s' "$out" | pyjson '(d["spec"]["templateRef"], d["spec"]["hardwareRef"])')" \
	"('ubuntu', 'pool-c')" "with templateRef and the free hardware"
is "$(printf '%s' "$out" | pyjson 'sorted(d["spec"]["hardwareMap"].items())')" \
	"[('device_1', '02:00:00:00:01:0c'), ('os', 'jammy')]" "hardwareMap: device_1 the MAC, and --map"
is "$(printf '%s' "$out" | pyjson 'd["spec"]["bootOptions"]')" \
	"{'toggleAllowNetboot': True, 'bootMode': 'netboot'}" "--netboot sets the boot options"

ib provision --template ubuntu --selector pool=p1
is "$rc" 1 "provision when every matching hardware is busy fails"
like "$err" 'no free Hardware: 3 .* match "pool=p1", and all are busy' "and says how many matched and are busy"

ib provision --template ubuntu --selector pool=p1,rack=r2 --name hold-a
is "$rc" 1 "provision with only busy hardware fails before the name matters"
set_status hold-b '{"state":"FAILED"}'
ib provision --template ubuntu --selector pool=p1,rack=r2 --name hold-a
is "$rc" 1 "provision to a workflow name that exists fails"
like "$err" 'hold-a.* exists already' "and says so"

ib provision --template ubuntu -l pool=p1,rack=r2 --map device_1=aa:bb:cc:dd:ee:ff
is "$rc" 0 "provision of the hardware freed by a FAILED workflow, with -l"
is "$out" "ubuntu-pool-b" "pool-b is chosen"
api GET "$WF/ubuntu-pool-b"
is "$(printf '%s' "$out" | pyjson 'd["spec"]["hardwareMap"]["device_1"]')" "aa:bb:cc:dd:ee:ff" \
	"--map device_1 replaces the MAC"
is "$(printf '%s' "$out" | pyjson '"bootOptions" in d["spec"]')" False "no boot options without --netboot"

ib provision --template ubuntu --selector pool=nosuch
is "$rc" 1 "provision with a selector that matches nothing fails"
like "$err" 'no Hardware .* matches the selector "pool=nosuch"' "and says so"
ib provision --template nosuch --selector pool=p2
is "$rc" 1 "provision with a missing template fails"
like "$err" 'NotFound' "with the server's NotFound"
ib provision --selector pool=p2
is "$rc" 2 "provision without --template is a usage error"
ib provision --template ubuntu
is "$rc" 2 "provision without --selector is a usage error"
ib provision --template ubuntu --selector pool=p2 --map novalue
is "$rc" 2 "a --map without = is a usage error"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean
tap_done
