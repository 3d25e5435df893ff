#!/bin/sh
# test_kube_client — kube/'s HTTP client (through tests/kube/kube-call)
# against a real TLS server, tests/kube/tls_echo.py, that requires a
# client certificate signed by the test's CA.
#
# A CA, a server certificate (localhost, 127.0.0.1, kubernetes.test) and
# a client certificate are made here with openssl. Checked: the CA and
# the client certificate from files and from -data fields work, and the
# server sees the client's certificate, the bearer token, the
# User-Agent and Accept; a body and its Content-Type arrive; a wrong CA
# fails with a TLS error that names the URL; tls-server-name is what the
# certificate is checked against; a token file is read again after a
# 401 and the request is sent once more; a 429's Retry-After and
# Status message are reported; a stream's first bytes come before the
# server sends the rest; a silent stream ends after its idle time, and a
# cancelled one ends. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"

command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
KC=$(cd "$top_builddir" && pwd)/tests/kube/kube-call
[ -x "$KC" ] || skip_all "tests/kube/kube-call is not built (make check builds it)"
ECHO=$(cd "$top_srcdir" && pwd)/tests/kube/tls_echo.py

D=$IB_TMP
cd "$D" || bail_out "cannot enter $D"
mkcert() { # NAME SUBJECT [EXTFILE]: a key and a certificate signed by ca
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null &&
		openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
			-out "$1.crt" -days 2 ${3:+-extfile "$3"} 2>/dev/null
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout ca.key -out ca.crt -days 2 -subj /CN=kube-test-ca 2>/dev/null ||
	bail_out "cannot make the CA"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout other.key -out other.crt -days 2 -subj /CN=another-ca 2>/dev/null ||
	bail_out "cannot make the other CA"
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:kubernetes.test\n' >srv.ext
mkcert srv /CN=localhost srv.ext || bail_out "cannot make the server certificate"
mkcert cli /CN=ironbelld-test || bail_out "cannot make the client certificate"
printf 'first-token\n' >expected
printf 'first-token\n' >tok

python3 "$ECHO" --cert srv.crt --key srv.key --client-ca ca.crt --token-file expected \
	--port-file port --log requests.log >echo.log 2>&1 &
EPID=$!
ib_bg "$EPID"
wait_for 20 test -s port || bail_out "tls_echo.py did not start: $(cat echo.log)"
PORT=$(cat port)
URL=https://127.0.0.1:$PORT

b64() { base64 -w0 <"$1"; }

# kubeconfig NAME CLUSTER-LINES USER-LINES
kubeconfig() {
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: c, user: u, namespace: tink-system}
clusters:
- name: c
  cluster:
$2
users:
- name: u
  user:
$3
EOF
}

CERTS="    client-certificate: cli.crt
    client-key: cli.key"
kubeconfig files.yaml "    server: $URL/
    certificate-authority: ca.crt" "$CERTS
    token: the-token"
kubeconfig data.yaml "    server: $URL
    certificate-authority-data: $(b64 ca.crt)" "    client-certificate-data: $(b64 cli.crt)
    client-key-data: $(b64 cli.key)"
kubeconfig wrongca.yaml "    server: $URL
    certificate-authority: other.crt" "$CERTS"
kubeconfig sni.yaml "    server: $URL
    certificate-authority: ca.crt
    tls-server-name: kubernetes.test" "$CERTS"
kubeconfig badsni.yaml "    server: $URL
    certificate-authority: ca.crt
    tls-server-name: wrong.test" "$CERTS"
kubeconfig tokfile.yaml "    server: $URL
    certificate-authority: ca.crt" "$CERTS
    tokenFile: tok"

# ---- TLS, client certificate, token ----

run "$KC" --kubeconfig files.yaml GET /echo
is "$rc" 0 "CA and client certificate from files: a 2xx answer"
like "$out" '^HTTP 200$' "HTTP 200"
like "$out" '"client_cn": "ironbelld-test"' "the server saw the client certificate"
like "$out" '"authorization": "Bearer the-token"' "the bearer token is sent"
like "$out" '"user-agent": "ironbelld/' "User-Agent ironbelld/VERSION"
like "$out" '"accept": "application/json"' "Accept: application/json"

run "$KC" --kubeconfig data.yaml PATCH /echo '{"spec":{"a":1}}' \
	--content-type application/merge-patch+json
is "$rc" 64 "options after the arguments are a usage error"
run "$KC" --kubeconfig data.yaml --content-type application/merge-patch+json PATCH /echo \
	'{"spec":{"a":1}}'
is "$rc" 0 "CA, certificate and key from -data fields"
like "$out" '"method": "PATCH"' "the method is sent"
like "$out" '"content-type": "application/merge-patch\+json"' "the content type is sent"
like "$out" '"body": "\{\\"spec\\": ?\{\\"a\\": ?1\}\}"' "the body arrives"
unlike "$out" '"authorization"' "no token: no Authorization header"

run "$KC" --kubeconfig wrongca.yaml GET /echo
is "$rc" 2 "a wrong CA: no answer"
like "$err" "^TLS: cannot verify the server's certificate for $URL/echo: .*certificate" \
	"the error is TLS's, names the URL and says why"
[ "$(grep -c '' requests.log)" = 2 ] && pass "the server never saw that request" ||
	fail "the server never saw that request" "$(cat requests.log)"

run "$KC" --kubeconfig sni.yaml GET /echo
is "$rc" 0 "tls-server-name: the certificate is checked against it"
like "$out" '"host": "kubernetes.test:' "and the request names it"
run "$KC" --kubeconfig badsni.yaml GET /echo
is "$rc" 2 "a tls-server-name that the certificate lacks: refused"
like "$err" "^TLS: .*wrong.test" "naming the name"

kubeconfig nocert.yaml "    server: $URL
    certificate-authority: ca.crt" "    token: x"
run "$KC" --kubeconfig nocert.yaml GET /echo
is "$rc" 2 "no client certificate: the server refuses the connection"

# ---- 401: the token file read again ----

run "$KC" --kubeconfig tokfile.yaml GET /auth
is "$rc" 0 "tokenFile: the token is accepted"
: >wait
rm -f wait
"$KC" --kubeconfig tokfile.yaml --wait-file "$D/wait" GET /auth >auth.out 2>auth.err &
KPID=$!
ib_bg "$KPID"
wait_for 20 file_has auth.err '^loaded$' || fail "kube-call loaded the kubeconfig" "$(cat auth.err)"
printf 'second-token\n' >expected
printf 'second-token\n' >tok
: >wait
wait "$KPID"
is "$?" 0 "a 401 with the old token: the file is read again and the request succeeds"
like "$(cat auth.out)" '^HTTP 200$' "the second answer is the one reported"
like "$(tail -n 2 requests.log)" '^GET /auth Bearer first-token$' "first sent with the old token"
like "$(tail -n 1 requests.log)" '^GET /auth Bearer second-token$' "then with the new one"
printf 'third-token\n' >expected
run "$KC" --kubeconfig tokfile.yaml GET /auth
is "$rc" 1 "a token file that stays wrong: the 401 is reported"
like "$err" '^HTTP 401: Unauthorized$' "with the Status message"
is "$(tail -n 2 requests.log | grep -c 'GET /auth Bearer second-token')" 2 "tried twice, not more"

# ---- statuses ----

run "$KC" --kubeconfig files.yaml GET '/status/429?retry_after=7'
is "$rc" 1 "429: an answer, not a success"
like "$out" '^retry-after 7$' "Retry-After is reported"
like "$err" '^HTTP 429: the status asked for: 429$' "the Status message is the error"
run "$KC" --kubeconfig files.yaml GET '/status/500'
like "$out$err" 'HTTP 500: the status asked for: 500' "500: the Status message"

# ---- streams ----

rm -f gate
"$KC" --kubeconfig files.yaml --stream "/stream?lines=3&gate=$D/gate" >stream.out 2>&1 &
SPID=$!
ib_bg "$SPID"
ok "a stream's first line comes while the server holds the rest" \
	wait_for 20 file_has stream.out '^line 1$'
unlike "$(cat stream.out)" '^line 2$' "the rest has not come yet"
: >gate
wait "$SPID"
is "$?" 0 "the stream ends when the server ends it"
is "$(tr '\n' ' ' <stream.out)" "line 1 line 2 line 3 end: ok " "every byte, in order"

run "$KC" --kubeconfig files.yaml --idle 2 --stream '/stream?lines=1&hang=1'
is "$rc" 2 "a stream with no byte for its idle time ends"
like "$out" '^end: .*idle' "as idle"
run "$KC" --kubeconfig files.yaml --seconds 2 --stream '/stream?lines=1&hang=1'
is "$rc" 2 "a cancelled stream ends"
like "$out" '^end: .*cancelled' "as cancelled"
like "$out" '^line 1$' "after the bytes that came"
run "$KC" --kubeconfig files.yaml --stream '/status/410'
is "$rc" 1 "a stream answered 410: no bytes handed on, the answer reported"
like "$out" '"code": 410' "with its body"

# ---- rate limit: 3 requests at 1/s and burst 1 take about 2 s; only
# their success is checked (no timing assertion) ----
run "$KC" --kubeconfig files.yaml --qps 1 --burst 1 --count 3 GET /echo
is "$rc:$(printf '%s\n' "$out" | grep -c '^HTTP 200$')" "0:3" "rate-limited requests all succeed"

kill "$EPID" 2>/dev/null
wait "$EPID" 2>/dev/null
tap_done
