#!/usr/bin/env bash
# tests/bench/http/run.sh — the public listener's per-machine answers (the
# iPXE script, EC2 metadata, Hegel's /metadata JSON) against nginx serving
# the same bytes. Never part of make check: it prints figures and asserts
# nothing about time.
#
# What it does, in one run on this machine:
#  - ironbelld with N Hardware objects (BENCH_HTTP_HOSTS, default 10000),
#    each with its own MAC, address, hostname and storage layout, on the
#    loopback address, 127.0.0.1 being a trusted proxy;
#  - nginx (nginx-light, run by hand from a private prefix, never as a
#    service) serving, for each case, one static file holding exactly what
#    ironbelld answers for one machine, with one worker and with as many
#    workers as the machine has cores;
#  - wrk against each, its Lua script making every request come from
#    another of the N machines (so ironbelld looks each one up: no
#    single-row cache): the iPXE case rotates the MAC in the path, the
#    metadata cases rotate X-Forwarded-For over the machines' addresses.
#    BENCH_HTTP_SECONDS (10) per run, with keep-alive and with
#    "Connection: close", WRK_CONNS connections (32) on 2 threads; and once
#    more with one connection and one request at a time ("light"), for the
#    latency of an answer without the queueing of a saturated server (on a
#    2-core machine wrk and the server share the cores, and the p99 of a
#    saturated run mostly measures the scheduler, nginx's as much as ours).
# Cases (BENCH_HTTP_CASES, default all three): ipxe
# (/ipxe/script/<mac>/auto.ipxe), hostname (/2009-04-04/meta-data/hostname),
# metadata (/metadata). It reports requests/s, latency p50/p99 (wrk's own
# histogram), the ratio to each nginx, and ironbelld's RSS after loading
# and after the load. http.threads is the default (one per CPU) unless
# BENCH_HTTP_THREADS says otherwise.
set -euo pipefail

: "${top_builddir:?}" "${top_srcdir:?}"
N=${BENCH_HTTP_HOSTS:-10000}
SECS=${BENCH_HTTP_SECONDS:-10}
CONNS=${WRK_CONNS:-32}
THREADS=${BENCH_HTTP_THREADS:-0}
CASES=${BENCH_HTTP_CASES:-"ipxe hostname metadata"}
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
		print ip > (dir "/ips.txt");
		f = sprintf("%s/hw-%04d.yaml", dir, int(i / 1000));
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n" > f;
		printf "metadata:\n  name: node-%06d\nspec:\n", i > f;
		printf "  metadata:\n    instance:\n      id: i-%06d\n", i > f;
		printf "      hostname: node-%06d.lab.example\n", i > f;
		printf "      storage: {disks: [{device: /dev/sda, wipe_table: true, " > f;
		printf "partitions: [{label: ROOT, number: 1, size: 0}]}]}\n" > f;
		printf "  interfaces:\n    - dhcp:\n" > f;
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
metadata:
  trusted_proxies: [127.0.0.1]
EOF
"$b/ironbelld" --config "$tmp/ironbell.yaml" 2>"$tmp/ironbelld.log" &
ipid=$!
pids="$pids $ipid"
for _ in $(seq 100); do [ -S "$tmp/api.sock" ] && break; sleep 0.1; done
for f in "$tmp"/hw-*.yaml; do
	IRONBELL_SOCKET=$tmp/api.sock "$b/ironbell" apply -f "$f" >/dev/null
done

# What ironbelld answers for the first machine: nginx serves these bytes.
first=$(head -1 "$tmp/macs.txt")
firstip=$(head -1 "$tmp/ips.txt")
mkdir -p "$tmp/www/ipxe" "$tmp/www/hostname" "$tmp/www/metadata"
curl -sf "http://127.0.0.1:$HPORT/ipxe/script/$first/auto.ipxe" >"$tmp/www/ipxe/body"
curl -sf -H "X-Forwarded-For: $firstip" "http://127.0.0.1:$HPORT/2009-04-04/meta-data/hostname" \
	>"$tmp/www/hostname/body"
curl -sf -H "X-Forwarded-For: $firstip" "http://127.0.0.1:$HPORT/metadata" >"$tmp/www/metadata/body"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$ipid/status"; }
rss0=$(rss)

# ---- nginx's configuration ----
mkdir -p "$tmp/nginx/logs"
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
    location /ipxe/script/ { try_files /ipxe/body =404; }
    location = /2009-04-04/meta-data/hostname { try_files /hostname/body =404; }
    location = /metadata { default_type application/json; try_files /metadata/body =404; }
  }
}
EOF
}

# ---- wrk's request generators ----
cat >"$tmp/ipxe.lua" <<EOF
local macs = {}
for line in io.lines("$tmp/macs.txt") do macs[#macs + 1] = line end
local i = 0
request = function()
  i = i % #macs + 1
  return wrk.format("GET", "/ipxe/script/" .. macs[i] .. "/auto.ipxe")
end
EOF
for c in hostname:/2009-04-04/meta-data/hostname metadata:/metadata; do
	cat >"$tmp/${c%%:*}.lua" <<EOF
local ips = {}
for line in io.lines("$tmp/ips.txt") do ips[#ips + 1] = line end
local i = 0
request = function()
  i = i % #ips + 1
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  h["X-Forwarded-For"] = ips[i]
  return wrk.format("GET", "${c#*:}", h)
end
EOF
done

# run CASE NAME PORT MODE: one wrk run; prints one result line and records it.
results=$tmp/results
: >"$results"
run() {
	local case=$1 name=$2 port=$3 mode=$4 hdr=() out rps p50 p99 non2xx errs load=(-t2 -c"$CONNS")
	[ "$mode" = close ] && hdr=(-H "Connection: close")
	[ "$mode" = light ] && load=(-t1 -c1)
	out=$(wrk "${load[@]}" -d"${SECS}s" --latency "${hdr[@]}" -s "$tmp/$case.lua" \
		"http://127.0.0.1:$port/" 2>&1)
	rps=$(printf '%s\n' "$out" | awk '/^Requests\/sec/ {print $2}')
	p50=$(printf '%s\n' "$out" | awk '$1 == "50%" {print $2}')
	p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
	non2xx=$(printf '%s\n' "$out" | awk '/Non-2xx/ {print $NF}')
	errs=$(printf '%s\n' "$out" | awk '/Socket errors/ {print $0}')
	printf '%-9s %-16s %-10s %10s req/s   p50 %8s   p99 %8s   %s%s\n' "$case" "$name" "$mode" \
		"$rps" "$p50" "$p99" "${non2xx:+non-2xx $non2xx }" "${errs:+($errs)}"
	echo "$case $name $mode $rps $p50 $p99" >>"$results"
}

cores=$(nproc)
say "== http: $N Hardware; wrk 2 threads, $CONNS connections, $SECS s per run; ironbelld http.threads $THREADS (0: one per CPU)"
for c in $CASES; do
	say "   $c: $(wc -c <"$tmp/www/$c/body") bytes per answer"
done
for c in $CASES; do
	for mode in keepalive close light; do
		run "$c" ironbelld "$HPORT" "$mode"
	done
done
rss1=$(rss)
kill "$ipid"
wait "$ipid" 2>/dev/null || true
for w in 1 "$cores"; do
	port=$(free_port)
	nginx_conf "$w" "$port"
	"$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx-$w.conf" 2>>"$tmp/nginx/logs/stderr" &
	npid=$!
	pids="$pids $npid"
	for _ in $(seq 50); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/ipxe/script/x/auto.ipxe" && break
		sleep 0.1
	done
	cmp -s <(curl -s "http://127.0.0.1:$port/metadata") "$tmp/www/metadata/body" ||
		say "bench-http: nginx does not serve the same bytes"
	for c in $CASES; do
		for mode in keepalive close light; do
			run "$c" "nginx-${w}worker" "$port" "$mode"
		done
	done
	kill "$npid"
	wait "$npid" 2>/dev/null || true
done

say ""
say "== ratios (ironbelld / nginx, requests/s)"
awk -v cores="$cores" -v cases="$CASES" '
function ms(s) { if (s ~ /us$/) return s / 1000; if (s ~ /ms$/) return s + 0; if (s ~ /s$/) return s * 1000; return s }
{ rps[$1 " " $2 " " $3] = $4; p99[$1 " " $2 " " $3] = ms($6) }
END {
	n = split(cases, cs, " ");
	for (i = 1; i <= n; i++)
		for (m = 0; m < 2; m++) {
			mode = m ? "close" : "keepalive";
			k = cs[i] " ironbelld " mode;
			printf "%-9s %-10s vs nginx 1 worker x%.2f   vs nginx %s workers x%.2f   ironbelld p99 %.2f ms\n",
				cs[i], mode, rps[k] / rps[cs[i] " nginx-1worker " mode], cores,
				rps[k] / rps[cs[i] " nginx-" cores "worker " mode], p99[k];
		}
	print "== latency with one connection (keep-alive, one request at a time: the answer time without queueing)";
	for (i = 1; i <= n; i++)
		printf "%-9s p99 ironbelld %.2f ms   nginx 1 worker %.2f ms   nginx %s workers %.2f ms\n", cs[i],
			p99[cs[i] " ironbelld light"], p99[cs[i] " nginx-1worker light"], cores,
			p99[cs[i] " nginx-" cores "worker light"];
}' "$results"
say "ironbelld RSS: $rss0 kB after loading, $rss1 kB after the load ($(( (rss1 - rss0) / 1024 )) MiB more)"
