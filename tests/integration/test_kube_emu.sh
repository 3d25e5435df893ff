#!/bin/sh
# test_kube_emu — the Kubernetes API-server emulator of tests/kube/ proven
# with the real clients before any ironbell code relies on it: kubectl
# over TLS, once with a client certificate and once with a bearer token
# (discovery, apply -f of a Hardware, Template, Workflow, Machine and
# Secret, created then unchanged then configured; get -o json; get -w
# seeing the MODIFIED event; patch --subresource=status; a label selector;
# the tinkerbell category; delete), a wrong CA refused, a revoked token
# 401; and python3-kubernetes (tests/kube/kube_client_check.py: pages with
# limit/continue, a watch with bookmarks, 410 after a compaction). Then
# with curl what the client tests will lean on: the status subresource,
# conflicts, 415 for a strategic-merge patch of a custom resource, json
# patches, selectors, deletecollection, and each chaos control (500, 429
# with Retry-After, a line that is not JSON, an invalid object, a stream
# cut mid-line, a dropped stream, an expired resourceVersion), the request
# counters, and a restart that keeps the objects, the counter and the
# history (--state). kubectl apply runs with --validate=false (the
# emulator serves OpenAPI v3 for kubectl 1.29 and later, not v2), and once
# without it where kubectl is new enough.
# Needs kubectl, openssl and curl; python3-kubernetes for its part.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/kube/emu.sh"

PY=/usr/bin/python3
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
command -v kubectl >/dev/null 2>&1 || skip_all "kubectl is not installed"

# curl and python-requests take these over their own settings.
unset REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE KUBECONFIG

kemu_certs || bail_out "openssl cannot make the certificates"
kemu_start a --bookmark-interval 1 --state "$IB_TMP/a.state" ||
	bail_out "the emulator did not start"
A_PID=$KEMU_PID
HW=/apis/tinkerbell.org/v1alpha1/namespaces/default/hardware
WF=/apis/tinkerbell.org/v1alpha1/namespaces/default/workflows

# code ARGS...: curl with the client certificate, prints only the HTTP
# status; the body is in $IB_TMP/body, the headers in $IB_TMP/headers.
code() {
	curl -s --max-time 10 --cacert "$KEMU_CA" --cert "$KEMU_CLIENT_CERT" \
		--key "$KEMU_CLIENT_KEY" -o "$IB_TMP/body" -D "$IB_TMP/headers" \
		-w '%{http_code}' "$@"
}
body() { kemu_json "$1" <"$IB_TMP/body"; }

# ---- discovery and authentication, with curl ----
is "$(curl -s --max-time 10 --cacert "$KEMU_CA" -o /dev/null -w '%{http_code}' \
	"$KEMU_URL/version")" 200 "/version needs no credentials"
is "$(curl -s --max-time 10 --cacert "$KEMU_CA" -o "$IB_TMP/body" -w '%{http_code}' \
	"$KEMU_URL/api/v1")" 401 "without credentials: 401"
is "$(body reason)/$(body kind)" Unauthorized/Status "the 401 is a Status, reason Unauthorized"
is "$(code "$KEMU_URL/apis/tinkerbell.org/v1alpha1")" 200 "a client certificate is accepted"
is "$(body resources/0/name) $(body resources/0/shortNames) $(body resources/0/categories)" \
	'hardware ["hw"] ["tinkerbell"]' "the group's APIResourceList names hardware, hw, tinkerbell"
is "$(body resources/1/name)" hardware/status "with its status subresource"
is "$(code -H "Authorization: Bearer $KEMU_TOKEN" "$KEMU_URL/apis")" 200 "the bearer token is accepted"
is "$(code "$KEMU_URL/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workflows.tinkerbell.org")" \
	200 "the Workflow CRD is there from the start"
like "$(body spec/versions/0/schema/openAPIV3Schema/properties/status/properties)" '"currentState"' \
	"its status schema is the monorepo's (currentState)"

# ---- kubectl, with a client certificate and with a token ----
SUBRES=yes
kemu_kubeconfig "$IB_TMP/kc-cert" cert
kc patch --help
printf '%s\n' "$out" | grep -q -- '--subresource' || SUBRES=
kc version
like "$out" '^Server Version: (v1\.30\.0|version\.Info.*GitVersion:"v1\.30\.0")' "kubectl version reads the emulator's /version"
KVERSION=$(printf '%s\n' "$out" | grep '^Client Version')
diag "$KVERSION"

objects() {
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: hw-$1
  labels: {role: $2, owner: $1}
spec:
  interfaces:
  - dhcp: {mac: "02:00:00:00:00:0$3", hostname: hw-$1}
    netboot: {allowPXE: true, allowWorkflow: true}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Template
metadata: {name: tpl-$1}
spec:
  data: |
    version: "0.1"
    name: t
    global_timeout: 600
    tasks: []
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata: {name: wf-$1}
spec: {templateRef: tpl-$1, hardwareRef: hw-$1, hardwareMap: {device_1: "02:00:00:00:00:0$3"}}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata: {name: bmc-$1}
spec:
  connection: {host: 192.0.2.$3, port: 623, insecureTLS: true, authSecretRef: {name: bmc-$1, namespace: default}}
---
apiVersion: v1
kind: Secret
metadata: {name: bmc-$1}
type: Opaque
data: {username: YWRtaW4=, password: czNjcmV0}
EOF
}

# kubectl_suite MODE N: the kubectl sequence with the kubeconfig of MODE
# (cert or token); N tells the two runs' objects apart.
kubectl_suite() {
	m=$1
	kemu_kubeconfig "$IB_TMP/kc-$m" "$m"
	objects "$m" worker "$2" >"$IB_TMP/objects-$m.yaml"
	kc apply --validate=false -f "$IB_TMP/objects-$m.yaml"
	is "$rc" 0 "$m: kubectl apply -f of five kinds"
	[ "$rc" -eq 0 ] || diag "$err"
	is "$(printf '%s\n' "$out" | tr '\n' ';')" \
		"hardware.tinkerbell.org/hw-$m created;template.tinkerbell.org/tpl-$m created;workflow.tinkerbell.org/wf-$m created;machine.bmc.tinkerbell.org/bmc-$m created;secret/bmc-$m created;" \
		"$m: each was created"
	kc apply --validate=false -f "$IB_TMP/objects-$m.yaml"
	is "$(printf '%s\n' "$out" | grep -c ' unchanged$')" 5 "$m: applied again, all five unchanged"
	objects "$m" control "$2" >"$IB_TMP/objects-$m.yaml"
	kc apply --validate=false -f "$IB_TMP/objects-$m.yaml"
	like "$out" "^hardware.tinkerbell.org/hw-$m configured$" "$m: a changed label: the Hardware is configured"
	like "$out" "^workflow.tinkerbell.org/wf-$m unchanged$" "$m: and the Workflow unchanged"
	kc get hw "hw-$m" -o json
	is "$(printf '%s' "$out" | kemu_json metadata/labels/role)/$(printf '%s' "$out" | kemu_json spec/interfaces/0/dhcp/mac)" \
		"control/02:00:00:00:00:0$2" "$m: get -o json reads the label and the MAC back"
	is "$(kemu_get "$HW/hw-$m" | kemu_json metadata/labels/role)" control "$m: the emulator holds the new label"

	# get -w in the background: it lists, then watches from the list's rv.
	rm -f "$IB_TMP/watch-$m.out"
	timeout -k 5 40 kubectl --kubeconfig "$IB_TMP/kc-$m" --cache-dir "$IB_TMP/kcache" \
		get wf "wf-$m" -w --output-watch-events -o json >"$IB_TMP/watch-$m.out" 2>&1 &
	wpid=$!
	ib_bg "$wpid"
	wait_for 20 file_has "$IB_TMP/watch-$m.out" '"ADDED"'
	is "$?" 0 "$m: get -w prints the Workflow as ADDED"
	if [ -n "$SUBRES" ]; then
		kc patch wf "wf-$m" --subresource=status --type=merge -p '{"status":{"state":"RUNNING"}}'
		is "$rc" 0 "$m: kubectl patch --subresource=status --type=merge"
		[ "$rc" -eq 0 ] || diag "$err"
	else
		skip "$m: kubectl patch --subresource=status" "this kubectl has no --subresource; the status subresource is checked with curl"
		code -X PATCH -H 'Content-Type: application/merge-patch+json' \
			-d '{"status":{"state":"RUNNING"}}' "$KEMU_URL$WF/wf-$m/status" >/dev/null
	fi
	wait_for 20 file_has "$IB_TMP/watch-$m.out" '"MODIFIED"'
	is "$?" 0 "$m: get -w sees the MODIFIED event"
	like "$(cat "$IB_TMP/watch-$m.out")" '"state": ?"RUNNING"' "$m: with the new status"
	ib_kill "$wpid" 5
	kc get wf "wf-$m" -o 'jsonpath={.status.state}'
	is "$out" RUNNING "$m: the status reads back"
	kc patch wf "wf-$m" --type=merge -p '{"spec":{"disabled":true},"status":{"state":"FAILED"}}'
	kc get wf "wf-$m" -o 'jsonpath={.status.state} {.metadata.generation}'
	is "$out" "RUNNING 2" "$m: a patch of the main resource leaves the status, the generation is 2"

	kc get hw -l "owner=$m,role=control" -o name
	is "$out" "hardware.tinkerbell.org/hw-$m" "$m: get -l role=control finds the Hardware"
	kc get hw -l "owner=$m,role!=control" -o name
	is "$rc/$out" "0/" "$m: get -l role!=control finds none"
	kc get tinkerbell -o name
	like "$out" "^machine.bmc.tinkerbell.org/bmc-$m$" "$m: get tinkerbell lists the category's kinds"
	kc get secret "bmc-$m" -o 'jsonpath={.data.username}'
	is "$out" YWRtaW4= "$m: the Secret reads back"

	kc delete -f "$IB_TMP/objects-$m.yaml" --wait=false
	is "$rc" 0 "$m: kubectl delete -f"
	like "$out" "^workflow.tinkerbell.org \"wf-$m\" deleted$" "$m: the Workflow is deleted"
	kc get hw "hw-$m"
	like "$err" 'NotFound|not found' "$m: a deleted Hardware is not found"
}

kubectl_suite cert 1
kubectl_suite token 2

# kubectl 1.29 and later validate through the server with the emulator's
# OpenAPI v3; older ones need OpenAPI v2, which it does not serve.
KMINOR=$(printf '%s\n' "$KVERSION" | sed -n -e 's/^Client Version: v1\.\([0-9]*\)\..*/\1/p' \
	-e 's/^Client Version: version\.Info.*Minor:"\([0-9]*\).*/\1/p')
if [ "${KMINOR:-0}" -ge 29 ]; then
	KUBECONFIG_FILE=$IB_TMP/kc-cert
	objects val worker 3 >"$IB_TMP/objects-val.yaml"
	kc apply -f "$IB_TMP/objects-val.yaml"
	is "$rc/$(printf '%s\n' "$out" | grep -c ' created$')" 0/5 "kubectl 1.$KMINOR apply with validation (OpenAPI v3)"
	[ "$rc" -eq 0 ] || diag "$err"
	kc delete -f "$IB_TMP/objects-val.yaml" --wait=false
else
	skip "kubectl apply with validation" "kubectl 1.${KMINOR:-?} reads OpenAPI v2, which the emulator does not serve"
fi

kemu_kubeconfig "$IB_TMP/kc-wrongca" wrongca
kc get hw
if [ "$rc" -ne 0 ]; then pass "kubectl refuses a server certificate that the CA did not sign"; else fail "kubectl refuses a wrong CA" "$out"; fi
like "$err" 'x509|certificate' "with a certificate error"
is "$(kemu_ctl revoke "{\"token\":\"$KEMU_TOKEN\"}")" '{}' "the token is revoked"
KUBECONFIG_FILE=$IB_TMP/kc-token
kc get hw
like "$err" 'Unauthorized|must be logged in' "kubectl with the revoked token: 401"
is "$(code -H "Authorization: Bearer $KEMU_TOKEN" "$KEMU_URL/apis")" 401 "curl with the revoked token: 401"
kemu_ctl token "{\"token\":\"$KEMU_TOKEN\"}" >/dev/null
is "$(code -H "Authorization: Bearer $KEMU_TOKEN" "$KEMU_URL/apis")" 200 "the token given back authenticates again"

# ---- python3-kubernetes ----
if "$PY" -c 'import kubernetes' 2>/dev/null; then
	run "$PY" "$top_srcdir/tests/kube/kube_client_check.py" "$IB_TMP/kc-cert" "$KEMU_URL" "$KEMU_CA"
	is "$rc" 0 "the python3-kubernetes script ran"
	[ "$rc" -eq 0 ] || diag "$err"
	like "$out" '^pages 3 items 5$' "python: five objects in three pages of two (limit/_continue)"
	like "$out" '^names py-0,py-1,py-2,py-3,py-4$' "python: each once, in order"
	like "$out" '^watch ADDED MODIFIED DELETED py-w$' "python: the watch sees ADDED, MODIFIED, DELETED"
	like "$out" '^bookmark [0-9]+$' "python: and a BOOKMARK"
	like "$out" '^continue-410$' "python: a continue token from before a compaction gets 410"
	like "$out" '^watch-410 (exception 410|event 410)$' "python: a watch from before a compaction gets 410"
else
	skip "python3-kubernetes" "python3-kubernetes is not installed"
fi

# ---- the rest of the API, with curl ----
is "$(code -H 'Content-Type: application/json' -d '{"metadata":{"generateName":"gen-","labels":{"k":"a"}},"spec":{"n":1},"status":{"state":"Ready"}}' \
	"$KEMU_URL$HW")" 201 "POST with generateName: 201"
G1=$(body metadata/name)
like "$G1" '^gen-[a-z0-9]{5}$' "the name is made from generateName"
is "$(body status)" None "the status of a created custom resource is dropped"
is "$(code -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"$G1\"}}" "$KEMU_URL$HW")" 409 "POST of an existing name: 409"
is "$(body reason)" AlreadyExists "reason AlreadyExists"
RV1=$(code "$KEMU_URL$HW/$G1" >/dev/null; body metadata/resourceVersion)
is "$(code -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"status":{"state":"Ready"},"spec":{"n":9}}' \
	"$KEMU_URL$HW/$G1/status")" 200 "a merge patch of the status subresource"
is "$(body status/state)/$(body spec/n)/$(body metadata/generation)" Ready/1/1 "changes the status only"
is "$(code -X PUT -H 'Content-Type: application/json' \
	-d "{\"metadata\":{\"name\":\"$G1\",\"resourceVersion\":\"$RV1\"},\"spec\":{\"n\":2}}" "$KEMU_URL$HW/$G1")" 409 \
	"PUT with a stale resourceVersion: 409"
is "$(body reason)/$(body code)" Conflict/409 "a Conflict Status"
is "$(code -X PATCH -H 'Content-Type: application/merge-patch+json' \
	-d "{\"metadata\":{\"resourceVersion\":\"$RV1\"},\"spec\":{\"n\":2}}" "$KEMU_URL$HW/$G1")" 409 \
	"a merge patch with a stale resourceVersion: 409"
is "$(code -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' -d '{"spec":{"n":2}}' \
	"$KEMU_URL$HW/$G1")" 415 "a strategic-merge patch of a custom resource: 415"
is "$(code -X PATCH -H 'Content-Type: application/json-patch+json' \
	-d '[{"op":"test","path":"/spec/n","value":1},{"op":"replace","path":"/spec/n","value":3}]' \
	"$KEMU_URL$HW/$G1")" 200 "a json patch"
is "$(body spec/n)/$(body metadata/generation)/$(body status/state)" 3/2/Ready "changes the spec, the generation, not the status"
is "$(code -X PATCH -H 'Content-Type: application/json-patch+json' \
	-d '[{"op":"test","path":"/spec/n","value":1}]' "$KEMU_URL$HW/$G1")" 422 "a json patch whose test fails: 422"
is "$(code "$KEMU_URL/apis/tinkerbell.org/v1alpha1/hardware?labelSelector=k+in+(a,b),!gone")" 200 "a list of all namespaces with a set selector"
is "$(body items/0/metadata/name)/$(body items/1)" "$G1/None" "finds the one object"
is "$(code "$KEMU_URL$HW?fieldSelector=metadata.name%3D$G1")" 200 "a field selector"
is "$(body items/0/metadata/name)" "$G1" "finds it by name"
is "$(code "$KEMU_URL$HW?fieldSelector=spec.n%3D3")" 400 "a field selector on another field: 400"

# Watches by hand: W FILE QUERY starts curl on a watch stream.
W() {
	curl -sN --max-time 30 --cacert "$KEMU_CA" --cert "$KEMU_CLIENT_CERT" \
		--key "$KEMU_CLIENT_KEY" "$KEMU_URL$HW?watch=1&$2" >"$IB_TMP/$1" 2>/dev/null &
	wpid=$!
	ib_bg "$wpid"
}
open_watches() { [ "$(kemu_stat watchesOpen)" = "$1" ]; }
RV=$(code "$KEMU_URL$HW" >/dev/null; body metadata/resourceVersion)
W w1 "resourceVersion=$RV&allowWatchBookmarks=true"
W1=$wpid
ok "a watch is open" wait_for 10 open_watches 1
is "$(kemu_stat watchesOpenBy/hardware)" 1 "a watch of hardware"
is "$(kemu_ctl garbage)" '{"streams": 1}' "a line that is not JSON, into one stream"
kemu_ctl inject >/dev/null
code -X DELETE "$KEMU_URL$HW/$G1" >/dev/null
wait_for 10 file_has "$IB_TMP/w1" '"DELETED"'
is "$(grep -c '^this is not JSON$' "$IB_TMP/w1")" 1 "the stream carries the line that is not JSON"
like "$(cat "$IB_TMP/w1")" '"interfaces": "not-a-list"' "and the invalid Hardware"
like "$(cat "$IB_TMP/w1")" "^\{\"type\": \"DELETED\", \"object\": .*\"name\": \"$G1\"" "and the DELETED event"
wait_for 10 file_has "$IB_TMP/w1" '"BOOKMARK"'
is "$?" 0 "and a BOOKMARK"
is "$(kemu_ctl drop-watches)" '{"streams": 1}' "drop-watches ends the stream"
wait "$W1"
is "$?" 0 "curl saw the stream end cleanly"

W w2 "resourceVersion=$RV"
W2=$wpid
wait_for 10 open_watches 1
kemu_ctl cut-watches >/dev/null
wait "$W2"
like "$?" '^(18|56)$' "cut-watches: the stream ends mid-chunk (curl: 18 or, over TLS, 56)"
like "$(tail -c 300 "$IB_TMP/w2")" '^\{"type": "MODIFIED", "object": \{[^}]*$' "after half an event line"

W w6 "resourceVersion=$RV"
W6=$wpid
wait_for 10 open_watches 1
kill "$W6"
wait "$W6" 2>/dev/null
ok "a watch whose client went away is closed" wait_for 10 open_watches 0

# put: objects stored as given, status included; churn: changes made by
# the emulator itself.
is "$(kemu_ctl put '{"resource":"workflows","objects":[
	{"metadata":{"name":"p1","namespace":"default"},"spec":{},"status":{"state":"STATE_PENDING"}},
	{"metadata":{"name":"p2","namespace":"default"},"spec":{}}]}')" '{"count": 2}' "put of two Workflows"
is "$(code "$KEMU_URL$WF/p1" >/dev/null; body status/state)/$(body kind)" STATE_PENDING/Workflow "put keeps the status and fills in the kind"
is "$(kemu_ctl churn '{"resource":"workflows","count":3,"rate":50}')" '{"count": 3}' "churn of three changes"
churned() {
	code "$KEMU_URL$WF/p1" >/dev/null &&
		body metadata/annotations | grep -q '"ironbell.test/churn": "2 [0-9]*"'
}
ok "the third change of churn went to the first Workflow again" wait_for 10 churned

is "$(kemu_ctl fail '{"count":1}')" '{}' "fail: set"
is "$(code "$KEMU_URL$HW")" 500 "the next request gets 500"
is "$(code "$KEMU_URL$HW")" 200 "and the one after 200"
kemu_ctl throttle '{"count":1,"retry_after":7}' >/dev/null
is "$(code "$KEMU_URL$HW")" 429 "throttle: 429"
like "$(cat "$IB_TMP/headers")" '^Retry-After: 7' "with Retry-After"
is "$(kemu_stat 'requests/fault 500')/$(kemu_stat 'requests/fault 429')" 1/1 "the faults are counted"
kemu_ctl delay '{"ms":100}' >/dev/null
is "$(code "$KEMU_URL$HW")" 200 "a slow answer is an answer"
kemu_ctl delay '{"ms":0}' >/dev/null

kemu_ctl reset-stats >/dev/null
code "$KEMU_URL$HW" >/dev/null
code "$KEMU_URL$HW/x" >/dev/null
is "$(kemu_stat lists)/$(kemu_stat 'requests/get hardware')" 1/1 "the counters count lists and gets"

D=$(curl -s --max-time 10 --cacert "$KEMU_CA" "$KEMU_URL/_emu/dump")
is "$(printf '%s' "$D" | kemu_json objects/workflows/0/metadata/name)/$(printf '%s' "$D" | kemu_json objects/customresourcedefinitions/0/metadata/name)" \
	p1/hardware.tinkerbell.org "the dump holds every object by resource"

# Compaction: rv before now is expired for a watch; a relist's rv is not.
kemu_ctl compact >/dev/null
W w3 "resourceVersion=$RV"
wait "$wpid"
like "$(cat "$IB_TMP/w3")" '^\{"type": "ERROR", "object": .*"reason": "Expired".*"code": 410' "a watch from before the compaction: ERROR 410 Expired"
RV2=$(code "$KEMU_URL$HW" >/dev/null; body metadata/resourceVersion)
W w4 "resourceVersion=$RV2&timeoutSeconds=1"
wait "$wpid"
unlike "$(cat "$IB_TMP/w4")" 'ERROR' "a watch from a relist's rv is not expired"

# deletecollection with a selector.
for n in d1 d2 d3; do
	code -H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"$n\",\"labels\":{\"batch\":\"$n\"}}}" "$KEMU_URL$HW" >/dev/null
done
is "$(code -X DELETE "$KEMU_URL$HW?labelSelector=batch+notin+(d3)")" 200 "deletecollection with a selector"
is "$(code "$KEMU_URL$HW" >/dev/null; body items/0/metadata/name)/$(body items/1)" d3/None "left the object outside the selector"

# Restart with --state: objects, counter and history are kept.
code "$KEMU_URL$HW" >/dev/null
RV3=$(body metadata/resourceVersion)
RV_D3=$(body items/0/metadata/resourceVersion)
ib_kill "$A_PID" 10
is "$IB_KILL_STATUS" 0 "SIGTERM stops the emulator cleanly"
A_PORT=$KEMU_PORT
kemu_start a2 --port "$A_PORT" --bookmark-interval 1 --state "$IB_TMP/a.state" ||
	bail_out "the emulator did not restart"
A_PID=$KEMU_PID
is "$KEMU_PORT" "$A_PORT" "it restarts on the same port (a kubeconfig's server stays right)"
is "$(code "$KEMU_URL$HW/d3")/$(body metadata/resourceVersion)" "200/$RV_D3" "after the restart the object is there, as it was"
code -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"spec":{"n":5}}' "$KEMU_URL$HW/d3" >/dev/null
RV4=$(body metadata/resourceVersion)
is "$((RV4 > RV3))" 1 "the resourceVersion counter goes on"
W w5 "resourceVersion=$RV3&timeoutSeconds=2"
wait "$wpid"
like "$(cat "$IB_TMP/w5")" "\"resourceVersion\": \"$RV4\"" "a watch from before the restart resumes"

# The legacy Workflow CRD.
"$PY" "$KEMU" --plain --workflow-crd legacy --port-file "$IB_TMP/b.port" >>"$IB_TMP/b.log" 2>&1 </dev/null &
B_PID=$!
ib_bg "$B_PID"
wait_for 15 test -s "$IB_TMP/b.port" || bail_out "the second emulator did not start"
S=$(curl -s --max-time 10 "http://127.0.0.1:$(cat "$IB_TMP/b.port")/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workflows.tinkerbell.org" |
	kemu_json spec/versions/0/schema/openAPIV3Schema/properties/status/properties)
like "$S" '"currentAction"' "--workflow-crd legacy: the status has currentAction"
unlike "$S" '"currentState"' "and no currentState"
ib_kill "$B_PID" 10
ib_kill "$A_PID" 10
unlike "$(cat "$IB_TMP"/a*.log "$IB_TMP/b.log")" 'Traceback' "the logs hold no traceback"

tap_done
