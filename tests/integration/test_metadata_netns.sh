#!/bin/sh
# test_metadata_netns — no machine gets another's metadata. Namespaces on
# one bridge (10.77.0.0/24) in the server's namespace:
#
#   srv    10.77.0.1   ironbelld (metadata.trusted_proxies: [10.77.0.20])
#   a      10.77.0.10  Hardware "a"
#   b      10.77.0.11  Hardware "b"
#   x      10.77.0.12  no Hardware
#   proxy  10.77.0.20  nginx, proxying to ironbelld with X-Forwarded-For
#   d      10.77.0.30  Hardware "d", also asking through nginx
#
# Each machine gets its own user-data and hostname, an address no Hardware
# owns gets 404, a forged X-Forwarded-For from an untrusted peer changes
# nothing, and through the trusted proxy the forwarded address is the
# client (but an X-Forwarded-For forged before the proxy is not).
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"

ns_require
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip_all "nginx is not installed"

ns_new SRV srv || bail_out "cannot make a namespace"
ns_bridge "$SRV" br0 10.77.0.1/24 || bail_out "cannot make the bridge"
for m in a:10 b:11 x:12 proxy:20 d:30; do
	n=${m%%:*}
	ns_new NS "$n" || bail_out "cannot make a namespace"
	eval "NS_$n=\$NS"
	ns_veth "$NS" eth0 "10.77.0.${m#*:}/24" "$SRV" "p-$n" - || bail_out "cannot link $n"
	ns_port "$SRV" "p-$n" br0 || bail_out "cannot bridge $n"
done

PORT=7080
IB_HTTP_PORT=$PORT
ib_write_config || bail_out "cannot write the config"
# Listen on the bridge address, and believe the proxy.
sed -i "s/^  listen: 127.0.0.1:$PORT/  listen: 10.77.0.1:$PORT/" "$IB_CONFIG"
cat >>"$IB_CONFIG" <<EOF
metadata:
  trusted_proxies: [10.77.0.20]
EOF
IB_DAEMON_WRAP="ip netns exec $SRV" ib_start_daemon || bail_out "ironbelld did not start"

hw() { # NAME IP
	cat <<EOF
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: $1
  namespace: default
spec:
  userData: "secret of $1"
  metadata:
    instance: {id: i-$1, hostname: host-$1}
  interfaces:
  - dhcp:
      mac: 02:00:00:00:00:$(printf %02x "${2##*.}")
      ip: {address: $2, netmask: 255.255.255.0}
EOF
}
{ hw a 10.77.0.10; hw b 10.77.0.11; hw d 10.77.0.30; } >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "three Hardware are applied"

from() { ns_get "$@"; }
IB=http://10.77.0.1:$PORT

from "$NS_a" $IB/2009-04-04/user-data
is "$code $out" "200 secret of a" "a gets a's user-data"
from "$NS_a" $IB/2009-04-04/meta-data/hostname
is "$out" "host-a" "and a's hostname"
from "$NS_b" $IB/2009-04-04/user-data
is "$code $out" "200 secret of b" "b gets b's user-data"
from "$NS_b" $IB/nocloud/meta-data
like "$out" 'instance-id: "i-b"' "b's NoCloud meta-data is b's"
from "$NS_x" $IB/2009-04-04/user-data
is "$code" 404 "an address no Hardware owns gets 404"
from "$NS_x" $IB/2009-04-04/user-data -H "X-Forwarded-For: 10.77.0.10"
is "$code" 404 "a forged X-Forwarded-For from an untrusted peer is ignored"
from "$NS_a" $IB/2009-04-04/user-data -H "X-Forwarded-For: 10.77.0.11"
is "$out" "secret of a" "and cannot get b's data for a either"
from "$NS_a" $IB/tootles/instanceID/i-b/2009-04-04/user-data
is "$code" 404 "naming b's instance id from a's address gets 404"
from "$NS_d" $IB/2009-04-04/user-data
is "$code $out" "200 secret of d" "d directly gets d's own data"
# The proxy itself owns no Hardware.
from "$NS_proxy" $IB/2009-04-04/user-data
is "$code" 404 "the proxy's own address gets 404"

# ---- through nginx, a trusted proxy ----

mkdir -p "$IB_TMP/nginx/logs"
chmod 755 "$IB_TMP"
cat >"$IB_TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $IB_TMP/nginx/nginx.pid;
error_log $IB_TMP/nginx/logs/error.log;
daemon off;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $IB_TMP/nginx/body;
  proxy_temp_path $IB_TMP/nginx/proxy;
  fastcgi_temp_path $IB_TMP/nginx/fastcgi;
  uwsgi_temp_path $IB_TMP/nginx/uwsgi;
  scgi_temp_path $IB_TMP/nginx/scgi;
  server {
    listen 10.77.0.20:8080;
    location / {
      proxy_pass $IB;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
    }
  }
}
EOF
ns_bg "$NS_proxy" "$NGINX" -p "$IB_TMP/nginx" -c "$IB_TMP/nginx/nginx.conf"
wait_for 10 ip netns exec "$NS_proxy" sh -c 'ss -Hltn "sport = :8080" | grep -q .'
is "$?" 0 "nginx listens in the proxy's namespace"
PX=http://10.77.0.20:8080
from "$NS_d" $PX/2009-04-04/user-data
is "$code $out" "200 secret of d" "through the trusted proxy, d gets d's data (the forwarded address)"
from "$NS_d" $PX/2009-04-04/meta-data/instance-id
is "$out" "i-d" "and d's instance id"
from "$NS_x" $PX/2009-04-04/user-data -H "X-Forwarded-For: 10.77.0.10"
is "$code" 404 "an X-Forwarded-For forged before the proxy is not believed"
from "$NS_a" $PX/2009-04-04/user-data
is "$out" "secret of a" "a through the proxy is still a"
from "$NS_b" $PX/2009-04-04/user-data -H "X-Forwarded-For: 10.77.0.10"
is "$out" "secret of b" "b pretending to be a through the proxy gets b's"

# A proxy that adds a line of its own (HAProxy's option forwardfor does)
# rather than extending the client's: the lines are one list, and the
# client's forged line, first, is not the one believed.
from "$NS_proxy" $IB/2009-04-04/user-data -H "X-Forwarded-For: 10.77.0.10" \
	-H "X-Forwarded-For: 10.77.0.11"
is "$code $out" "200 secret of b" "of two X-Forwarded-For lines from a proxy, the last address counts"
from "$NS_proxy" $IB/2009-04-04/user-data -H "X-Forwarded-For: 10.77.0.10" \
	-H "X-Forwarded-For: 10.77.0.12"
is "$code" 404 "and a forged first line gets nothing when the added one owns nothing"
long=$(printf '10.77.0.10, %.0s' $(seq 400))
from "$NS_proxy" $IB/2009-04-04/user-data -H "X-Forwarded-For: ${long}10.77.0.11"
is "$code" 404 "an X-Forwarded-For too long to read whole is not believed"

file_has "$IB_LOG" 'no metadata for 10\.77\.0\.12 \(peer 10\.77\.0\.20, X-Forwarded-For present\)'
is "$?" 0 "the log names the client and the proxy it came through"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
