#!/bin/sh
# test_api_tls — the admin API over TCP with TLS (api.tls_cert,
# api.tls_key), the rules on api.listen and its token, and
# http.public_metrics.
#
# A self-signed certificate is made here with `openssl req -x509`. curl
# --cacert and `ironbell --server https://...` (with --cacert,
# $IRONBELL_CA or --insecure-skip-tls-verify; apply, get, watch) reach
# the API; a wrong token
# gets 401; plain HTTP on the TLS port gets no answer; the certificate is
# verified by default. With http.public_metrics false the public listener
# answers /metrics 404 while the admin socket serves it, and a reload
# turns it back on. A non-loopback api.listen without TLS, a short token
# and a token file others may read stop the daemon with exit 78 and
# file:line:column. Prints TAP.
set -u

. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"

CERT=$IB_TMP/api.crt
KEY=$IB_TMP/api.key
TOK=$IB_TMP/token
TOKEN=tls-$$-0123456789abcdef0123456789abcdef
printf '%s\n' "$TOKEN" >"$TOK" && chmod 600 "$TOK" || bail_out "cannot write the token"
run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$KEY" -out "$CERT" -days 2 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
[ "$rc" = 0 ] || bail_out "openssl req failed: $err"
chmod 600 "$KEY"

ADMIN_PORT=$(ib_free_port) || bail_out "no free port"
URL=https://127.0.0.1:$ADMIN_PORT
IB_API_EXTRA="  listen: 127.0.0.1:$ADMIN_PORT
  token_file: $TOK
  tls_cert: $CERT
  tls_key: $KEY"
ib_write_config "  public_metrics: false" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

# tcurl ARGS...: curl at the TLS listener; $out is the HTTP status.
tcurl() {
	run curl -s -o "$IB_TMP/body" -w '%{http_code}' --max-time 20 "$@"
}

# ---- curl ----

tcurl --cacert "$CERT" -H "Authorization: Bearer $TOKEN" "$URL/apis/tinkerbell.org/v1alpha1/hardware"
is "$rc:$out" "0:200" "curl --cacert with the token: 200"
like "$(cat "$IB_TMP/body")" '"kind": ?"HardwareList"' "a HardwareList"
tcurl --cacert "$CERT" -H "Authorization: Bearer ${TOKEN}x" "$URL/apis/tinkerbell.org/v1alpha1/hardware"
is "$rc:$out" "0:401" "a wrong token: 401"
tcurl --cacert "$CERT" "$URL/version"
is "$rc:$out" "0:401" "no token: 401"
tcurl "$URL/version"
ok "without --cacert curl refuses the self-signed certificate (rc $rc)" test "$rc" = 60
tcurl -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$ADMIN_PORT/version"
ok "plain HTTP on the TLS port gets no answer (rc $rc, status $out)" \
	test "$rc" != 0 -a "$out" != 200
tcurl --cacert "$CERT" -H "Authorization: Bearer $TOKEN" "$URL/readyz"
is "$rc:$out" "0:200" "the TLS listener still answers after that"

# ---- ironbell ----

cat >"$IB_TMP/hw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: tls-node, namespace: default}
spec:
  interfaces:
    - dhcp: {mac: "02:00:00:00:aa:01", ip: {address: 192.0.2.9}}
EOF
# A watch streams over TLS too (an object there before it started comes
# as ADDED as well).
timeout 60 "$IRONBELL" --server "$URL" --token-file "$TOK" --cacert "$CERT" watch hw \
	>"$IB_TMP/watch.out" 2>&1 &
WPID=$!
ib_bg "$WPID"
ib --server "$URL" --token-file "$TOK" --cacert "$CERT" apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "ironbell --cacert apply over https"
ok "ironbell watch over https sees it" wait_for 20 file_has "$IB_TMP/watch.out" '^ADDED hardware/tls-node '
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
ib --server "$URL" --token-file "$TOK" --cacert "$CERT" get hw -o name
is "$rc:$out" "0:hardware.tinkerbell.org/tls-node" "ironbell --cacert get over https"
run env IRONBELL_CA="$CERT" "$IRONBELL" --server "$URL" --token-file "$TOK" get hw tls-node -o name
is "$rc:$out" "0:hardware.tinkerbell.org/tls-node" "ironbell with \$IRONBELL_CA"
ib --server "$URL" --token-file "$TOK" get hw
is "$rc" 1 "ironbell verifies the certificate by default"
like "$err" 'cannot verify ironbelld at .*--cacert' "and says to name the CA with --cacert"
ib --server "$URL" --token-file "$TOK" --insecure-skip-tls-verify get hw -o name
is "$rc:$out" "0:hardware.tinkerbell.org/tls-node" "ironbell --insecure-skip-tls-verify"
printf '%s\n' "${TOKEN}x" >"$IB_TMP/bad" && chmod 600 "$IB_TMP/bad"
ib --server "$URL" --token-file "$IB_TMP/bad" --cacert "$CERT" get hw
is "$rc" 1 "ironbell with a wrong token fails"
like "$err" 'Unauthorized' "as Unauthorized"

# ---- http.public_metrics ----

run curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$IB_HTTP_PORT/metrics"
is "$out" 404 "public_metrics false: /metrics on the public listener is 404"
run curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$IB_HTTP_PORT/healthz"
is "$out" 200 "public_metrics false: /healthz stays"
run curl -s --max-time 10 --unix-socket "$IB_SOCK" http://localhost/metrics
like "$out" '^ironbell_objects\{kind="Hardware"\} 1$' "public_metrics false: the admin socket serves /metrics"
tcurl --cacert "$CERT" -H "Authorization: Bearer $TOKEN" "$URL/metrics"
is "$rc:$out" "0:200" "public_metrics false: the TLS admin listener serves /metrics"
ib_write_config "  public_metrics: true" || bail_out "cannot write the config"
kill -HUP "$IB_DAEMON_PID"
metrics_public() {
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
		"http://127.0.0.1:$IB_HTTP_PORT/metrics")" = 200 ]
}
ok "public_metrics true after a reload: /metrics on the public listener" wait_for 10 metrics_public
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "stops with status 0"

# ---- refusals: exit 78, file:line:column ----

# check_refused DESC API_LINES ERE: ironbelld -n with this api: section
# exits 78 with a message matching ERE.
check_refused() {
	cat >"$IB_TMP/bad.yaml" <<EOF
api:
$2
EOF
	run "$IRONBELLD" -n -c "$IB_TMP/bad.yaml"
	is "$rc" 78 "$1: exit 78"
	like "$err" "$3" "$1: says why, with file:line:column"
}
check_refused "a non-loopback api.listen without TLS" "  listen: 0.0.0.0:$ADMIN_PORT
  token_file: $TOK" 'bad\.yaml:2:11: api\.listen 0\.0\.0\.0:[0-9]+ is not a loopback address: it needs TLS'
printf 'short-token\n' >"$IB_TMP/short" && chmod 600 "$IB_TMP/short"
check_refused "a token shorter than 32 bytes" "  listen: 127.0.0.1:$ADMIN_PORT
  token_file: $IB_TMP/short" 'bad\.yaml:3:15: api\.token_file: the token in .* is 11 bytes long: it must have at least 32'
chmod 640 "$TOK"
check_refused "a token file its group may read" "  listen: 127.0.0.1:$ADMIN_PORT
  token_file: $TOK" 'bad\.yaml:3:15: api\.token_file: .* may be read or written by its group or others \(mode 0640\)'
chmod 600 "$TOK"
check_refused "api.tls_cert without api.tls_key" "  tls_cert: $CERT" \
	'bad\.yaml:2:13: api\.tls_cert and api\.tls_key go together'
run "$IRONBELLD" -n -c "$IB_CONFIG"
is "$rc:$out" "0:config ok" "the TLS configuration itself is good"

ok "no sanitizer report in the daemon's log" ib_log_clean
tap_done
