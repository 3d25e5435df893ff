# emu.sh — the Kubernetes API-server emulator (apiserver_emu.py) for the
# shell tests (POSIX sh, sourced after tests/lib.sh). Needs openssl and
# curl; kc needs kubectl.
#
#   kemu_certs             a CA, a server certificate for 127.0.0.1 and a
#                          client certificate (CN ironbell-test) signed by
#                          it, and a second CA that signed nothing, all in
#                          $IB_TMP/kube/; sets KEMU_CA, KEMU_CERT, KEMU_KEY,
#                          KEMU_CLIENT_CERT, KEMU_CLIENT_KEY, KEMU_WRONG_CA
#   kemu_start NAME ARGS...
#                          starts an emulator over TLS with those
#                          certificates, client certificates verified
#                          against KEMU_CA and the bearer token $KEMU_TOKEN,
#                          on a free port (it binds port 0 and writes the
#                          port it got), with ARGS; sets KEMU_PID, KEMU_PORT
#                          and KEMU_URL; its log is $IB_TMP/NAME.log. A
#                          restart (with --state) on the same port: ARGS
#                          --port $KEMU_PORT
#   kemu_kubeconfig FILE cert|token|wrongca
#                          a kubeconfig for it: the client certificate, the
#                          token, or the client certificate with the wrong
#                          CA as the cluster's certificate-authority
#   kc ARGS...             kubectl with $KUBECONFIG_FILE (kemu_kubeconfig's
#                          last FILE) and a discovery cache in $IB_TMP, run
#                          as tests/lib.sh's run does: sets rc, out, err
#   kemu_ctl NAME [JSON]   POST of the control API /_emu/NAME; prints the
#                          answer
#   kemu_get PATH          GET of an API path with the client certificate;
#                          prints the answer
#   kemu_json KEY/KEY/...  one value of the JSON document on standard input
#                          (a list index may be negative; absent: None)
#   kemu_stat KEY/KEY/...  one value of /_emu/stats
#   kget KIND NAME EXPR    EXPR (python, d = the object) of the object as
#                          kubectl reads it from the API; needs jget
#                          (tests/integration/workflow/objects.sh)
#   kis KIND NAME EXPR WANT
#                          EXPR of the API's object is WANT
#   keventually KIND NAME EXPR WANT DESC
#                          a TAP check: waits for kis, at most $WAIT s
#
# $KEMU_WRAP (split into words), when set, goes before the emulator,
# kubectl and curl, e.g. "ip netns exec NS" to run them all inside a
# network namespace, on its loopback (the certificates are for
# 127.0.0.1); the wrapper must exec its command, so that KEMU_PID is the
# emulator's.
#
# The emulator runs under /usr/bin/python3 and is registered with ib_bg,
# so the EXIT trap of tests/lib.sh stops it.

KEMU_PY=/usr/bin/python3
KEMU=$top_srcdir/tests/kube/apiserver_emu.py
KEMU_TOKEN=${KEMU_TOKEN:-ironbell-test-token-0123456789}
KEMU_DIR=$IB_TMP/kube

kemu_certs() {
	mkdir -p "$KEMU_DIR" || return 1
	KEMU_CA=$KEMU_DIR/ca.pem
	KEMU_CERT=$KEMU_DIR/server.pem
	KEMU_KEY=$KEMU_DIR/server.key
	KEMU_CLIENT_CERT=$KEMU_DIR/client.pem
	KEMU_CLIENT_KEY=$KEMU_DIR/client.key
	KEMU_WRONG_CA=$KEMU_DIR/wrong-ca.pem
	_log=$IB_TMP/openssl.log
	for _ca in ca wrong-ca; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
			-nodes -keyout "$KEMU_DIR/$_ca.key" -out "$KEMU_DIR/$_ca.pem" \
			-days 2 -subj "/CN=ironbell test $_ca" \
			-addext basicConstraints=critical,CA:TRUE \
			-addext keyUsage=critical,keyCertSign,cRLSign >>"$_log" 2>&1 || return 1
	done
	printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$KEMU_DIR/server.ext"
	printf 'extendedKeyUsage=clientAuth\n' >"$KEMU_DIR/client.ext"
	for _c in server:127.0.0.1 client:ironbell-test; do
		_n=${_c%%:*}
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
			-nodes -keyout "$KEMU_DIR/$_n.key" -out "$KEMU_DIR/$_n.csr" \
			-subj "/CN=${_c#*:}" >>"$_log" 2>&1 || return 1
		openssl x509 -req -in "$KEMU_DIR/$_n.csr" -CA "$KEMU_CA" \
			-CAkey "$KEMU_DIR/ca.key" -CAcreateserial -days 2 \
			-extfile "$KEMU_DIR/$_n.ext" -out "$KEMU_DIR/$_n.pem" >>"$_log" 2>&1 || return 1
	done
}

kemu_start() {
	_name=$1
	shift
	rm -f "$IB_TMP/$_name.port"
	${KEMU_WRAP:-} "$KEMU_PY" "$KEMU" --cert "$KEMU_CERT" --key "$KEMU_KEY" \
		--client-ca "$KEMU_CA" --token "$KEMU_TOKEN" \
		--port-file "$IB_TMP/$_name.port" "$@" \
		>>"$IB_TMP/$_name.log" 2>&1 </dev/null &
	KEMU_PID=$!
	ib_bg "$KEMU_PID"
	if ! wait_for 15 test -s "$IB_TMP/$_name.port"; then
		diag "$(tail -n 20 "$IB_TMP/$_name.log")"
		return 1
	fi
	KEMU_PORT=$(head -n 1 "$IB_TMP/$_name.port")
	KEMU_URL=https://127.0.0.1:$KEMU_PORT
}

kemu_kubeconfig() {
	KUBECONFIG_FILE=$1
	_ca=$KEMU_CA
	[ "$2" = wrongca ] && _ca=$KEMU_WRONG_CA
	if [ "$2" = token ]; then
		_user="    token: $KEMU_TOKEN"
	else
		_user="    client-certificate: $KEMU_CLIENT_CERT
    client-key: $KEMU_CLIENT_KEY"
	fi
	cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: emu
  cluster:
    server: $KEMU_URL
    certificate-authority: $_ca
users:
- name: tester
  user:
$_user
contexts:
- name: emu
  context:
    cluster: emu
    user: tester
    namespace: default
current-context: emu
EOF
}

kc() {
	run ${KEMU_WRAP:-} kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$IB_TMP/kcache" \
		--request-timeout 20s "$@"
}

kemu_ctl() {
	_body=${2:-}
	[ -n "$_body" ] || _body='{}'
	${KEMU_WRAP:-} curl -s --max-time 10 --cacert "$KEMU_CA" -X POST \
		-H 'Content-Type: application/json' -d "$_body" \
		"$KEMU_URL/_emu/$1"
}

kemu_get() {
	${KEMU_WRAP:-} curl -s --max-time 10 --cacert "$KEMU_CA" --cert "$KEMU_CLIENT_CERT" \
		--key "$KEMU_CLIENT_KEY" "$KEMU_URL$1"
}

kemu_json() {
	"$KEMU_PY" -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("/") if sys.argv[1] else []:
    if isinstance(d, list):
        d = d[int(k)] if -len(d) <= int(k) < len(d) else None
    else:
        d = d.get(k) if isinstance(d, dict) else None
print(json.dumps(d, sort_keys=True) if isinstance(d, (dict, list)) else d)' "$1" 2>/dev/null
}

kemu_stat() {
	${KEMU_WRAP:-} curl -s --max-time 10 --cacert "$KEMU_CA" "$KEMU_URL/_emu/stats" | kemu_json "$1"
}

kget() {
	kc get "$1" "$2" -o json
	[ "$rc" = 0 ] || { echo "<kubectl: $err>"; return 0; }
	printf '%s' "$out" | jget "$3"
}
kis() { [ "$(kget "$1" "$2" "$3")" = "$4" ]; }
keventually() {
	if wait_for $WAIT kis "$1" "$2" "$3" "$4"; then
		pass "$5"
	else
		fail "$5" "got: $(kget "$1" "$2" "$3")"
	fi
}
