#!/usr/bin/env bash
# tests/bench/http/run.sh — the per-machine iPXE script over HTTP, against
# nginx serving the same bytes. Never part of make check: it prints
# figures and asserts nothing about time.
#
# What it does, in one run on this machine:
#  - ironbelld with N Hardware objects (BENCH_HTTP_HOSTS, default 10000),
#    each with its own MAC and netboot.allowPXE, on the loopback address;
#  - nginx (nginx-light, run by hand from a private prefix, never as a
#    service) serving one static file holding exactly the script
#    ironbelld renders for a machine, at every /ipxe/script/ path, with
#    one worker and with as many workers as the machine has cores;
#  - wrk against each, its Lua script rotating the request path over the N
#    MACs (so ironbelld looks each one up: no single-row cache), for
#    BENCH_HTTP_SECONDS (10) per case, with keep-alive and with
#    "Connection: close", WRK_CONNS connections (32) on 2 threads.
# It reports requests/s, latency p50/p99 (wrk's own histogram) and the
# ratio to each nginx. http.threads is the default (one per CPU) unless
# BENCH_HTTP_THREADS says otherwise.
set -euo pipefail

: "${top_builddir:?}" "${top_srcdir:?}"
N=${BENCH_HTTP_HOSTS:-10000}
SECS=${BENCH_HTTP_SECONDS:-10}
CONNS=${WRK_CONNS:-32}
THREADS=${BENCH_HTTP_THREADS:-0}
b=$top_builddir

say() { printf '%s\n' "$*"; }
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	say "bench-http: $1 is not installed (tools/install-deps): skipped"
	exit 0
}
need wrk
need curl
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { say "bench-http: nginx is not installed (tools/install-deps): skipped"; exit 0; }

tmp=$(mktemp -d /tmp/ib-bench-http.XXXXXX)
chmod 755 "$tmp" # nginx's workers drop to an unprivileged user and must read www/
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	sleep 0.2
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
	/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- the Hardware ----
awk -v n="$N" -v dir="$tmp" 'BEGIN {
	for (i = 0; i < n; i++) {
		mac = sprintf("02:00:%02x:%02x:%02x:%02x", int(i / 16777216) % 256,
			int(i / 65536) % 256, int(i / 256) % 256, i % 256);
		ip = sprintf("10.%d.%d.%d", int(i / 62500) + 1, int(i / 250) % 250, i % 250 + 1);
		print mac > (dir "/macs.txt");
		f = sprintf("%s/hw-%04d.yaml", dir, int(i / 1000));
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n" > f;
		printf "metadata:\n  name: node-%06d\nspec:\n  interfaces:\n    - dhcp:\n", i > f;
		printf "        mac: \"%s\"\n        arch: x86_64\n        hostname: node-%06d\n", mac, i > f;
		printf "        ip: {address: %s, netmask: 255.0.0.0, gateway: 10.0.0.1}\n", ip > f;
		printf "      netboot: {allowPXE: true}\n" > f;
	}
}'

HPORT=$(free_port)
mkdir -p "$tmp/state"
cat >"$tmp/ironbell.yaml" <<EOF
log_level: warn
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: 127.0.0.1:$HPORT
  threads: $THREADS
EOF
"$b/ironbelld" --config "$tmp/ironbell.yaml" 2>"$tmp/ironbelld.log" &
ipid=$!
pids="$pids $ipid"
for _ in $(seq 100); do [ -S "$tmp/api.sock" ] && break; sleep 0.1; done
for f in "$tmp"/hw-*.yaml; do
	IRONBELL_SOCKET=$tmp/api.sock "$b/ironbell" apply -f "$f" >/dev/null
done
first=$(head -1 "$tmp/macs.txt")
curl -sf "http://127.0.0.1:$HPORT/ipxe/script/$first/auto.ipxe" >"$tmp/auto.ipxe"
size=$(wc -c <"$tmp/auto.ipxe")

# ---- nginx, serving the same bytes ----
mkdir -p "$tmp/nginx/logs" "$tmp/www"
cp "$tmp/auto.ipxe" "$tmp/www/auto.ipxe"
nginx_conf() { # WORKERS PORT
	cat >"$tmp/nginx/nginx-$1.conf" <<EOF
worker_processes $1;
pid $tmp/nginx/nginx-$1.pid;
error_log $tmp/nginx/logs/error.log;
daemon off;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  server {
    listen 127.0.0.1:$2;
    root $tmp/www;
    default_type text/plain;
    location /ipxe/script/ { try_files /auto.ipxe =404; }
  }
}
EOF
}

cat >"$tmp/rotate.lua" <<EOF
local macs = {}
for line in io.lines("$tmp/macs.txt") do macs[#macs + 1] = line end
local i = 0
request = function()
  i = i % #macs + 1
  return wrk.format("GET", "/ipxe/script/" .. macs[i] .. "/auto.ipxe")
end
EOF

# run NAME PORT MODE: one wrk case; prints one result line and records it.
results=$tmp/results
: >"$results"
run() {
	local name=$1 port=$2 mode=$3 hdr=() out rps p50 p99 non2xx
	[ "$mode" = close ] && hdr=(-H "Connection: close")
	out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "${hdr[@]}" -s "$tmp/rotate.lua" \
		"http://127.0.0.1:$port/" 2>&1)
	rps=$(printf '%s\n' "$out" | awk '/^Requests\/sec/ {print $2}')
	p50=$(printf '%s\n' "$out" | awk '$1 == "50%" {print $2}')
	p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
	non2xx=$(printf '%s\n' "$out" | awk '/Non-2xx/ {print $NF}')
	errs=$(printf '%s\n' "$out" | awk '/Socket errors/ {print $0}')
	printf '%-22s %-10s %10s req/s   p50 %8s   p99 %8s   %s%s\n' "$name" "$mode" "$rps" "$p50" \
		"$p99" "${non2xx:+non-2xx $non2xx }" "${errs:+($errs)}"
	echo "$name $mode $rps $p50 $p99" >>"$results"
}

cores=$(nproc)
say "== http: /ipxe/script/<mac>/auto.ipxe, $N Hardware, a $size-byte script; wrk 2 threads, $CONNS connections, $SECS s per case; ironbelld http.threads $THREADS (0: one per CPU)"
for mode in keepalive close; do
	run ironbelld "$HPORT" "$mode"
done
kill "$ipid"
wait "$ipid" 2>/dev/null || true
for w in 1 "$cores"; do
	port=$(free_port)
	nginx_conf "$w" "$port"
	"$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx-$w.conf" 2>>"$tmp/nginx/logs/stderr" &
	npid=$!
	pids="$pids $npid"
	for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/ipxe/script/x/auto.ipxe" && break; sleep 0.1; done
	cmp -s <(curl -s "http://127.0.0.1:$port/ipxe/script/$first/auto.ipxe") "$tmp/auto.ipxe" ||
		say "bench-http: nginx does not serve the same bytes"
	for mode in keepalive close; do
		run "nginx-${w}worker" "$port" "$mode"
	done
	kill "$npid"
	wait "$npid" 2>/dev/null || true
done

say ""
say "== ratios (ironbelld / nginx, requests/s)"
awk '
function ms(s) { if (s ~ /us$/) return s / 1000; if (s ~ /ms$/) return s + 0; if (s ~ /s$/) return s * 1000; return s }
{ rps[$1 " " $2] = $3; p99[$1 " " $2] = ms($5) }
END {
	for (m = 0; m < 2; m++) {
		mode = m ? "close" : "keepalive";
		printf "%-10s  vs nginx 1 worker x%.2f   vs nginx %s workers x%.2f   ironbelld p99 %.2f ms\n",
			mode, rps["ironbelld " mode] / rps["nginx-1worker " mode],
			"'"$cores"'", rps["ironbelld " mode] / rps["nginx-'"$cores"'worker " mode],
			p99["ironbelld " mode];
	}
}' "$results"
