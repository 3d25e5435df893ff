#!/bin/sh
# test_cli_workflow — the `ironbell` commands for Workflows against a real
# ironbelld: get workflows (the CRD's columns, -o wide, a status in the
# shape of tinkerbell/tink <= v0.12), describe workflow (tasks, actions,
# what failed and its message), workflow retry (the status reset through
# the daemon; a Workflow that has not failed refused) and provision (a free
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

# set_status NAME JSON: replaces the Workflow's status with JSON through
# the status subresource (a PUT: nothing of a status written before stays).
set_status() {
	api PUT "$WF/$1/status" -H 'Content-Type: application/json' \
		-d "{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Workflow\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},\"status\":$2}"
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

# ---- workflow retry ----

ib workflow retry wf-run
is "$rc" 1 "retry of a RUNNING workflow fails"
like "$err" 'cannot be retried: .*RUNNING' "and says why, with its state"
api GET "$WF/wf-run"
is "$(printf '%s' "$out" | pyjson 'd["status"]["state"]')" RUNNING "and the workflow is unchanged"

ib workflow retry wf-fail
is "$rc" 0 "retry of a FAILED workflow"
[ "$rc" = 0 ] || diag "$err"
like "$out" '^workflow.tinkerbell.org/wf-fail retried: FAILED -> PENDING$' "retry says what changed"
like "$out" '^  task os-installation, action grow-fs: FAILED -> PENDING \(attempts 3 cleared\)$' \
	"retry names the failed action it reset"
unlike "$out" 'stream-image' "the action that succeeded is not reset"
api GET "$WF/wf-fail"
is "$(printf '%s' "$out" | pyjson 'd["status"]["state"]')" PENDING "the daemon has the workflow PENDING"
is "$(printf '%s' "$out" | pyjson '[a["state"] for a in d["status"]["tasks"][0]["actions"]]')" \
	"['SUCCESS', 'PENDING', 'PENDING']" "from the failed action on"
is "$(printf '%s' "$out" | pyjson '"message" in d["status"]["tasks"][0]["actions"][1]')" False \
	"the failed action's message is cleared"
ib describe wf wf-fail
like "$out" '^  Retried +True +Retry +[0-9]+s +retried from action "grow-fs" of task "os-installation"$' \
	"describe after the retry: its condition"
unlike "$out" '^Failed Action:' "and no failed action"
ib workflow retry wf-fail
is "$rc" 1 "a second retry is refused: the workflow is no longer FAILED"
ib workflow retry wf-legacy
is "$rc" 1 "retry of a legacy STATE_FAILED workflow is refused"
like "$err" 'tinkerbell/tink v0.12 and before: delete the Workflow and create it again' \
	"and says what to do instead"
ib workflow retry nosuch
is "$rc" 1 "retry of a missing workflow fails"
like "$err" 'NotFound' "with the server's NotFound"
ib workflow nosuch wf-fail
is "$rc" 2 "an unknown workflow subcommand is a usage error"

# ---- workflow retry against a Workflow that changes meanwhile ----

# A stand-in admin API on TCP (--server) whose Workflow changes after each
# of the first BUMPS reads, as the daemon's engine or an agent would
# change it between the client's read and its write: each write that
# carries a stale resourceVersion is refused 409 Conflict. It records the
# path and resourceVersion of each write.
cat >"$IB_TMP/conflict.py" <<'EOF'
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
port, bumps, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
state = {"rv": 10, "reads": 0}
def wf():
    return {"apiVersion": "tinkerbell.org/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "wf-x", "namespace": "default", "resourceVersion": str(state["rv"])},
            "spec": {"templateRef": "t", "hardwareRef": "h"},
            "status": {"state": "FAILED", "tasks": [{"name": "t1", "agentID": "aa", "actions": [
                {"name": "a1", "state": "FAILED", "attempts": 1, "message": "boom"}]}]}}
class H(BaseHTTPRequestHandler):
    def reply(self, code, body):
        b = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def do_GET(self):
        if self.path == "/readyz":
            return self.reply(200, {})
        self.reply(200, wf())
        state["reads"] += 1
        if state["reads"] <= bumps:
            state["rv"] += 1
    def do_PUT(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        rv = body["metadata"].get("resourceVersion")
        with open(log, "a") as f:
            f.write("%s %s\n" % (self.path.rsplit("/", 2)[-2] + "/" + self.path.rsplit("/", 1)[-1], rv))
        if rv != str(state["rv"]):
            return self.reply(409, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                    "reason": "Conflict", "code": 409,
                                    "message": "the object has been modified"})
        self.reply(200, body)
    def log_message(self, *a):
        pass
HTTPServer(("127.0.0.1", port), H).serve_forever()
EOF

# fake_api BUMPS: starts the stand-in; sets $fake_url and $fake_pid.
fake_api() {
	_port=$(ib_free_port) || bail_out "no free port"
	: >"$IB_TMP/puts.log"
	"$PY" "$IB_TMP/conflict.py" "$_port" "$1" "$IB_TMP/puts.log" 2>>"$IB_TMP/fake.err" &
	fake_pid=$!
	ib_bg "$fake_pid"
	fake_url=http://127.0.0.1:$_port
	wait_for 10 curl -sf --max-time 2 -o /dev/null "$fake_url/readyz" ||
		bail_out "the stand-in admin API did not start"
}

fake_api 2
ib --server "$fake_url" workflow retry wf-x
is "$rc" 0 "retry succeeds after two conflicts"
like "$err" 'changed while it was being retried \(409 Conflict\): reading it again \(2 of 5\)' \
	"and says it read the workflow again after each"
like "$out" '^workflow.tinkerbell.org/wf-x retried: FAILED -> PENDING$' "then says what it did"
is "$(tr '\n' ' ' <"$IB_TMP/puts.log")" "wf-x/status 10 wf-x/status 11 wf-x/status 12 " \
	"each write goes to the status subresource with the resourceVersion of the read before it"
ib_kill "$fake_pid"

fake_api 100
ib --server "$fake_url" workflow retry wf-x
is "$rc" 1 "retry of a workflow that keeps changing fails"
like "$err" 'kept changing: gave up after 5 tries; nothing was written' "and says so"
is "$(wc -l <"$IB_TMP/puts.log" | tr -d ' ')" 5 "after 5 writes, each refused"
ib_kill "$fake_pid"

# ---- provision ----

# pool-a is held by a Workflow that has no status yet (or, where the
# daemon runs the engine, one it rendered: PENDING), pool-b by a RUNNING
# one; a finished and a disabled Workflow do not hold pool-c.
cat >"$IB_TMP/holders.yaml" <<'EOF'
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: hold-a
spec:
  templateRef: ubuntu
  hardwareRef: pool-a
  hardwareMap: {device_1: "02:00:00:00:01:0a"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: hold-b
spec:
  templateRef: ubuntu
  hardwareRef: pool-b
  hardwareMap: {device_1: "02:00:00:00:01:0b"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: done-c
spec:
  templateRef: ubuntu
  hardwareRef: pool-c
  hardwareMap: {device_1: "02:00:00:00:01:0c"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: off-c
spec:
  templateRef: ubuntu
  hardwareRef: pool-c
  hardwareMap: {device_1: "02:00:00:00:01:0c"}
  disabled: true
EOF
ib apply -f "$IB_TMP/holders.yaml"
is "$rc" 0 "four workflows on the pool's hardware"
set_status hold-b '{"state":"RUNNING"}'
set_status done-c '{"state":"SUCCESS"}'

ib provision --template ubuntu --selector pool=p1 --map os=jammy
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
is "$(printf '%s' "$out" | pyjson '"bootOptions" in d["spec"]')" False "no boot options without --netboot"

ib provision --template ubuntu --selector pool=p1
is "$rc" 1 "provision when every matching hardware is busy fails"
like "$err" 'no free Hardware: 3 in namespace "default" match "pool=p1", 3 busy' \
	"and says how many matched and how many are busy"

ib provision --template ubuntu --selector pool=p1,rack=r2 --name hold-a
is "$rc" 1 "provision with only busy hardware fails before the name matters"
set_status hold-b '{"state":"FAILED"}'
ib provision --template ubuntu --selector pool=p1,rack=r2 --name hold-a
is "$rc" 1 "provision to a workflow name that exists fails"
like "$err" 'hold-a.* exists already' "and says so"

# Last, since a daemon that runs the engine may fail a netboot Workflow
# whose Hardware has no BMC, and so free its Hardware.
ib provision --template ubuntu -l pool=p1,rack=r2 --map device_1=aa:bb:cc:dd:ee:ff --netboot
is "$rc" 0 "provision of the hardware freed by a FAILED workflow, with -l"
is "$out" "ubuntu-pool-b" "pool-b is chosen"
api GET "$WF/ubuntu-pool-b"
is "$(printf '%s' "$out" | pyjson 'd["spec"]["hardwareMap"]["device_1"]')" "aa:bb:cc:dd:ee:ff" \
	"--map device_1 replaces the MAC"
is "$(printf '%s' "$out" | pyjson 'd["spec"]["bootOptions"]')" \
	"{'toggleAllowNetboot': True, 'bootMode': 'netboot'}" "--netboot sets the boot options"

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
