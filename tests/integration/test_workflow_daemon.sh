#!/bin/sh
# test_workflow_daemon — the workflow controller end to end: the real
# ironbelld with its workflow: section, a Template, a Hardware and a
# Workflow applied with `ironbell apply -f` as an operator writes them,
# then: the Workflow reaches PENDING with its task and actions, as `ironbell
# get workflows -o json` and the admin API (curl) show it; a Template that
# names an unknown function makes its Workflow FAILED with the line and
# column in its condition and a Warning event; toggleAllowNetboot turns
# allowPXE on on the Hardware; a restart of the daemon keeps every state,
# and one after a kill -9 renders what was applied just before it;
# /metrics counts the transitions. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is not installed"
WAIT=30 # seconds any one state may take to appear

pyjson() {
	"$PY" -c 'import json, sys
try:
    d = json.load(sys.stdin)
    print(eval(sys.argv[1]))
except Exception as e:
    print("<%s>" % e)' "$1"
}

# wf_state NAME: prints the Workflow's status.state.
wf_state() {
	ib get workflow "$1" -o json
	printf '%s' "$out" | pyjson 'd.get("status", {}).get("state", "")'
}
wf_is() { [ "$(wf_state "$1")" = "$2" ]; }

ib_write_config "workflow:
  enabled: true
  resync_interval: 5" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

cat >"$IB_TMP/objects.yaml" <<'YAML'
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: node-a
spec:
  disks:
    - device: /dev/nvme0n1
  interfaces:
    - dhcp:
        mac: "02:00:00:00:00:0a"
        arch: x86_64
        ip: {address: 192.0.2.21, netmask: 255.255.255.0}
      netboot:
        allowPXE: false
---
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
        volumes:
          - /dev:/dev
        actions:
          - name: stream-image
            image: quay.io/tinkerbell/actions/image2disk:latest
            timeout: 600
            environment:
              DEST_DISK: {{ index .Hardware.Disks 0 }}
          - name: kexec
            image: quay.io/tinkerbell/actions/kexec:latest
            timeout: 90
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: wf-a
spec:
  templateRef: ubuntu
  hardwareRef: node-a
  hardwareMap:
    device_1: "02:00:00:00:00:0a"
  bootOptions:
    toggleAllowNetboot: true
YAML
ib apply -f "$IB_TMP/objects.yaml"
is "$rc" 0 "apply of a Hardware, a Template and a Workflow"
[ "$rc" = 0 ] || diag "$out $err"

ok "wf-a reaches PENDING" wait_for "$WAIT" wf_is wf-a PENDING
ib get workflow wf-a -o json
printf '%s' "$out" >"$IB_TMP/wf-a.json"
is "$(pyjson 'len(d["status"]["tasks"])' <"$IB_TMP/wf-a.json")" 1 "one task"
is "$(pyjson 'd["status"]["tasks"][0]["agentID"]' <"$IB_TMP/wf-a.json")" "02:00:00:00:00:0a" \
	"its agentID is the hardwareMap's device_1"
is "$(pyjson '[a["name"] + ":" + a["state"] for a in d["status"]["tasks"][0]["actions"]]' \
	<"$IB_TMP/wf-a.json")" "['stream-image:PENDING', 'kexec:PENDING']" "both actions PENDING"
is "$(pyjson 'd["status"]["templateRendering"]' <"$IB_TMP/wf-a.json")" successful \
	"templateRendering successful"
is "$(pyjson 'd["status"]["tasks"][0]["actions"][0].get("environment", {}).get("DEST_DISK")' \
	<"$IB_TMP/wf-a.json")" /dev/nvme0n1 "the Hardware's first disk rendered into the action"

run curl -sf --max-time 5 --unix-socket "$IB_SOCK" \
	http://localhost/apis/tinkerbell.org/v1alpha1/namespaces/default/workflows/wf-a
is "$rc" 0 "the admin API serves the Workflow"
is "$(printf '%s' "$out" | pyjson 'd["status"]["state"]')" PENDING "and says PENDING too"

ib get hardware node-a -o json
is "$(printf '%s' "$out" | pyjson 'd["spec"]["interfaces"][0]["netboot"]["allowPXE"]')" True \
	"toggleAllowNetboot turned allowPXE on"

# ---- a template that names an unknown function ----

cat >"$IB_TMP/bad.yaml" <<'YAML'
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata:
  name: bad
spec:
  data: |
    version: "0.1"
    name: bad
    global_timeout: 60
    tasks:
      - name: os
        worker: "{{ nosuchfn .device_1 }}"
        actions:
          - name: a
            image: alpine
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: wf-bad
spec:
  templateRef: bad
  hardwareRef: node-a
  hardwareMap:
    device_1: "02:00:00:00:00:0a"
YAML
ib apply -f "$IB_TMP/bad.yaml"
is "$rc" 0 "apply of a Template naming an unknown function, and its Workflow"
ok "wf-bad reaches FAILED" wait_for "$WAIT" wf_is wf-bad FAILED
ib get workflow wf-bad -o json
msg=$(printf '%s' "$out" | pyjson '[c.get("message", "") for c in d["status"].get("conditions", []) if c["type"] == "TemplateRenderedSuccess"][0]')
diag "condition: $msg"
like "$msg" 'nosuchfn' "the condition names the function"
like "$msg" '(6:17|line 6, column 17)' "and its line and column"
is "$(printf '%s' "$out" | pyjson 'd["status"]["templateRendering"]')" failed \
	"templateRendering failed"
ib events workflow wf-bad
like "$out" 'Warning.*nosuchfn' "a Warning event names it"
[ "$rc" = 0 ] || diag "$out $err"

# ---- a restart keeps every state ----

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ib_start_daemon || bail_out "ironbelld did not start again"
ok "wf-a is still PENDING after a restart" wait_for 5 wf_is wf-a PENDING
ok "wf-bad is still FAILED" wf_is wf-bad FAILED

# a Workflow applied just before a kill -9 is rendered by the next start
sed 's/wf-a/wf-k/' "$IB_TMP/objects.yaml" >"$IB_TMP/k.yaml"
ib apply -f "$IB_TMP/k.yaml"
is "$rc" 0 "apply of a third Workflow"
ib_crash_daemon
ib_start_daemon || bail_out "ironbelld did not start after a kill -9"
ok "it reaches PENDING after a kill -9 and a start" wait_for "$WAIT" wf_is wf-k PENDING
ok "wf-a is still PENDING" wf_is wf-a PENDING

run curl -sf --max-time 5 --unix-socket "$IB_SOCK" http://localhost/metrics
is "$rc" 0 "/metrics answers"
printf '%s\n' "$out" >"$IB_TMP/metrics"
like "$out" '^ironbell_workflow_followed 3' "ironbell_workflow_followed counts the three Workflows"
like "$out" '^ironbell_workflow_transitions_total' "ironbell_workflow_transitions_total is there"

# ---- a reload names the workflow keys as needing a restart ----

ib_write_config "workflow:
  enabled: true
  resync_interval: 6" || bail_out "cannot write the config"
kill -HUP "$IB_DAEMON_PID"
ok "a reload says workflow.resync_interval takes effect after a restart" \
	wait_for "$WAIT" file_has "$IB_LOG" 'only after a restart: workflow\.resync_interval'

# ---- workflow.enabled: false leaves a Workflow alone ----

ib_stop_daemon
ib_write_config "workflow:
  enabled: false" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start without the controller"
sed 's/wf-a/wf-c/' "$IB_TMP/objects.yaml" >"$IB_TMP/c.yaml"
ib apply -f "$IB_TMP/c.yaml"
is "$rc" 0 "apply of another Workflow with the controller off"
sleep 1 # a negative: give a controller, were there one, the time to act
is "$(wf_state wf-c)" "" "it is not rendered"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
