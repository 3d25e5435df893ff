#!/usr/bin/env bash
# tests/bench/osie/run.sh — OSIE downloads at fleet scale: BENCH_OSIE_CLIENTS
# (200) clients downloading one BENCH_OSIE_MIB (256) MiB file of random
# bytes (made once in the run) at the same time, from ironbelld's
# /osie/<file> and from nginx serving the same file (sendfile on,
# access_log off; one worker and one per core). Never part of make check:
# it prints figures and asserts nothing about time; it fails only when a
# server does not answer.
#
# Each server runs alone in a network namespace, the clients in another,
# behind a veth pair (tests/bench/dhcp/net.sh): the bytes cross a network
# device as they would on a provisioning network, not the loopback. For
# each server, over BENCH_OSIE_SECONDS (30): the aggregate throughput
# (MiB/s, the bytes the client's veth received over the wall time), the
# server's CPU (utime+stime of its processes, from /proc) as a share of one
# core and per GiB sent, the client's CPU likewise, and the ratios to
# nginx, and how many of the machine's cores were busy and their time per
# GiB (/proc/stat: the kernel's network work is charged to whatever runs,
# so a server's or a client's own CPU is not the whole cost: a server that
# queues less per sendfile() carries more of the receiving side's work in
# its own context, and the machine's figure is the one to compare). A run is flagged "client-bound"
# when the client used ~95% of a core per thread (drain: one; wrk: two;
# curl: every core). With sendfile the server's own CPU is small and the receiving
# side's larger, so the client using more than the server is no sign here.
#
# The client (BENCH_OSIE_CLIENT, one or several, space-separated): drain
# (the default: tests/bench/osie/drain, CLIENTS keep-alive connections on
# one thread, each downloading the file again and again, each body dropped
# in the kernel with recv(MSG_TRUNC), never copied to user space), wrk
# (-c CLIENTS connections on 2 threads, the body read 8 KiB at a time and
# dropped) or curl (CLIENTS curl processes, each downloading it to
# /dev/null again and again); "both" is "wrk curl". wrk and curl copy
# every byte they receive, and took 1.5 to 1.8 of this machine's 2 cores
# at 200 clients: the throughput they measured was theirs, not the
# servers'. drain costs the client only its system calls and the
# kernel's receive work, which every client pays.
#
# BENCH_OSIE_LINK=RATE (tc's notation: 10gbit) shapes the server's side
# of the veth pair to that rate with a token bucket (tbf), as a
# provisioning host's network card is: at a rate the servers can fill,
# every server sends the same bytes a second and the link, not a core,
# is the limit. The bytes then leave from the shaper's timer more than
# from the server's own sendfile() calls, so the receiving side's TCP
# work, which over a bare veth pair runs in the context of whoever
# transmits, no longer lands in the server's CPU in proportion to its
# throughput, and the server's CPU per GiB compares what the same work
# costs each (docs/http-transport.md).
#
# BENCH_OSIE_NGINX_CHUNK=SIZE (e.g. 8m, or 0: no limit) sets nginx's
# sendfile_max_chunk (its default: 2m, the most ironbelld's calls move:
# daemon/http/sendfile.c).
#
# BENCH_OSIE_SERVER_QUOTA=F (a share of one core, e.g. 0.5) caps each
# server's CPU in a cgroup (tests/bench/http/common.sh), so that the
# server, not the client, is the limit: the throughputs then compare what
# a GiB costs each server, the kernel's work in its context included.
#
# ironbelld's bound on concurrent downloads per client address
# (ipxe.max_downloads_per_client) would refuse most of the clients, who
# all come from one address: the script sets it to 0 (no bound) when the
# daemon knows the key (ironbelld -n accepts the configuration), and runs
# without it otherwise.
#
# Needs root (network namespaces); skipped with a message otherwise.
set -uo pipefail

: "${top_builddir:?}" "${top_srcdir:?}"
MIB=${BENCH_OSIE_MIB:-256}
CLIENTS=${BENCH_OSIE_CLIENTS:-200}
SECS=${BENCH_OSIE_SECONDS:-30}
CLIENT=${BENCH_OSIE_CLIENT:-drain}
NGINX_CHUNK=${BENCH_OSIE_NGINX_CHUNK:-}
LINK=${BENCH_OSIE_LINK:-}
[ "$CLIENT" = both ] && CLIENT="wrk curl"
DRAIN=$top_builddir/tests/bench/osie/drain
b=$top_builddir
NS_S=ibosie-s$$
NS_C=ibosie-c$$

say() { printf '%s\n' "$*"; }
skip() { say "bench-osie: $*: skipped"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
command -v curl >/dev/null 2>&1 || skip "curl is not installed (tools/install-deps)"
for cl in $CLIENT; do
	case $cl in
	drain) [ -x "$DRAIN" ] || { say "bench-osie: $DRAIN is not built (make bench-osie builds it)"; exit 2; } ;;
	wrk) command -v wrk >/dev/null 2>&1 || skip "wrk is not installed (tools/install-deps)" ;;
	curl) ;;
	*) say "bench-osie: BENCH_OSIE_CLIENT is drain, wrk, curl or a list of them"; exit 2 ;;
	esac
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx is not installed (tools/install-deps)"

# shellcheck source=../dhcp/net.sh
. "$top_srcdir/tests/bench/dhcp/net.sh"

. "$top_srcdir/tests/bench/http/common.sh" # (its functions read $tmp when called)
QUOTA=${BENCH_OSIE_SERVER_QUOTA:-}
cap_servers BENCH_OSIE_SERVER_QUOTA bench-osie
tmp=$(mktemp -d /tmp/ib-bench-osie.XXXXXX)
chmod 755 "$tmp" # nginx's workers drop to an unprivileged user and must read osie/
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	bench_net_down
	cg_remove
	rm -rf "$tmp"
}
trap cleanup EXIT
bench_net_up
if [ -n "$LINK" ]; then
	ip netns exec "$NS_S" tc qdisc add dev ibs0 root tbf rate "$LINK" burst 512kb latency 20ms ||
		{ say "bench-osie: BENCH_OSIE_LINK=$LINK: tc refuses it (a rate such as 10gbit)"; exit 2; }
fi
SRV=10.0.0.1
PORT=8080

mkdir -p "$tmp/osie" "$tmp/state" "$tmp/nginx/logs"
head -c "$((MIB * 1024 * 1024))" /dev/urandom >"$tmp/osie/vmlinuz" || exit 1
chmod 644 "$tmp/osie/vmlinuz"
SIZE=$(stat -c %s "$tmp/osie/vmlinuz")

rx_bytes() { ip netns exec "$NS_C" cat /sys/class/net/ibc0/statistics/rx_bytes; }

# wait_http URL: until it answers 200 (HEAD), at most 10 s.
wait_http() {
	local i
	for i in $(seq 100); do
		ip netns exec "$NS_C" curl -sf -I -o /dev/null "$1" && return 0
		sleep 0.1
	done
	return 1
}

# The curl client: CLIENTS loops of downloads until SECS are up.
cat >"$tmp/curls.sh" <<'EOF'
url=$1 n=$2 secs=$3
end=$(($(date +%s) + secs))
for i in $(seq "$n"); do
	(
		while left=$((end - $(date +%s))); [ "$left" -gt 0 ]; do
			curl -s -o /dev/null --max-time "$left" "$url" || true
		done
	) &
done
wait
EOF

results=$tmp/results
: >"$results"
# measure SERVER CLIENT URL PID...: one run; prints and records one line.
measure() {
	local name=$1 client=$2 url=$3 r0 r1 t0 t1 m0 m1 wall cu cs out wthreads=2
	shift 3
	[ "$client" = curl ] && wthreads=$(nproc)
	[ "$client" = drain ] && wthreads=1
	cg_join "$@"
	r0=$(rx_bytes)
	t0=$(ticks "$@")
	m0=$(busy)
	TIMEFORMAT='%R %U %S'
	if [ "$client" = drain ]; then
		{ time ip netns exec "$NS_C" "$DRAIN" -c "$CLIENTS" -d "$SECS" "$url" \
			>"$tmp/client.out" 2>&1; } 2>"$tmp/client.time" ||
			{ say "bench-osie: $name: drain counted errors:"; cat "$tmp/client.out"; }
	elif [ "$client" = wrk ]; then
		{ time ip netns exec "$NS_C" wrk -t2 -c"$CLIENTS" -d"${SECS}s" --timeout 600s "$url" \
			>"$tmp/client.out" 2>&1; } 2>"$tmp/client.time"
	else
		{ time ip netns exec "$NS_C" bash "$tmp/curls.sh" "$url" "$CLIENTS" "$SECS" \
			>"$tmp/client.out" 2>&1; } 2>"$tmp/client.time"
	fi
	t1=$(ticks "$@")
	m1=$(busy)
	r1=$(rx_bytes)
	read -r wall cu cs <"$tmp/client.time"
	if [ $((r1 - r0)) -lt "$SIZE" ]; then
		say "bench-osie: $name sent less than one file in $SECS s ($((r1 - r0)) bytes):"
		cat "$tmp/client.out"
		exit 1
	fi
	out=$(awk -v b=$((r1 - r0)) -v w="$wall" -v d=$((t1 - t0)) -v hz="$HZ" -v cu="$cu" -v cs="$cs" \
		-v t="$wthreads" -v m=$((m1 - m0)) -v name="$name" -v client="$client" -v q="$QUOTA" 'BEGIN {
		gib = b / 1073741824; s = d / hz; c = cu + cs;
		# Under a cap, the server is the limit when it used nearly all of it.
		flag = c / w >= 0.95 * t && (q == "" || s / w < 0.9 * q) ? " client-bound" : "";
		printf "%-15s %-5s %8.1f MiB/s  cpu server %.2f of a core, %.2f s per GiB  client %.2f of a core, %.2f s per GiB  machine %.2f cores busy, %.2f s per GiB%s\n",
			name, client, b / 1048576 / w, s / w, s / gib, c / w, c / gib, m / hz / w, m / hz / gib, flag;
		printf "RESULT %s %s %.3f %.4f %.4f\n", name, client, b / 1048576 / w, s / gib, c / gib >> "/dev/stderr";
	}' 2>>"$results")
	say "$out"
	[ "$client" = drain ] && sed 's/^/   /' "$tmp/client.out"
	return 0
}

say "== osie: one $MIB MiB file, $CLIENTS clients at once over a veth pair, $SECS s per run; client $CLIENT${LINK:+; the link shaped to $LINK on the server side (tbf)}${QUOTA:+; each server capped at $QUOTA of a core}${NGINX_CHUNK:+; nginx sendfile_max_chunk $NGINX_CHUNK}"

# ---- ironbelld ----
cat >"$tmp/ironbell.yaml" <<EOF
log_level: warn
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: $SRV:$PORT
ipxe:
  osie_dir: $tmp/osie
EOF
cp "$tmp/ironbell.yaml" "$tmp/ironbell-nobound.yaml"
printf '  max_downloads_per_client: 0\n' >>"$tmp/ironbell-nobound.yaml"
if "$b/ironbelld" -n --config "$tmp/ironbell-nobound.yaml" >/dev/null 2>&1; then
	cfg=$tmp/ironbell-nobound.yaml
	say "   ironbelld: ipxe.max_downloads_per_client: 0 (no bound: the $CLIENTS clients share one address)"
else
	cfg=$tmp/ironbell.yaml
	say "   ironbelld: no ipxe.max_downloads_per_client in this build: no bound to lift"
fi
ip netns exec "$NS_S" "$b/ironbelld" --config "$cfg" 2>"$tmp/ironbelld.log" &
ipid=$!
pids="$pids $ipid"
wait_http "http://$SRV:$PORT/osie/vmlinuz" ||
	{ say "bench-osie: ironbelld does not serve /osie/vmlinuz"; cat "$tmp/ironbelld.log"; exit 1; }
clients=$CLIENT
for cl in $clients; do
	measure ironbelld "$cl" "http://$SRV:$PORT/osie/vmlinuz" "$ipid"
done
kill "$ipid"
wait "$ipid" 2>/dev/null

# ---- nginx ----
cores=$(nproc)
for w in 1 "$cores"; do
	nginx_write_conf "$tmp/nginx/nginx-$w.conf" "$w" 4096 <<EOF
  server {
    listen $SRV:$PORT;
    location /osie/ { alias $tmp/osie/; }${NGINX_CHUNK:+
    sendfile_max_chunk $NGINX_CHUNK;}
  }
EOF
	ip netns exec "$NS_S" "$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx-$w.conf" \
		2>>"$tmp/nginx/logs/stderr" &
	npid=$!
	pids="$pids $npid"
	wait_http "http://$SRV:$PORT/osie/vmlinuz" ||
		{ say "bench-osie: nginx does not serve the file"; cat "$tmp/nginx/logs/"*; exit 1; }
	# shellcheck disable=SC2046
	for cl in $clients; do
		measure "nginx-${w}worker" "$cl" "http://$SRV:$PORT/osie/vmlinuz" \
			"$npid" $(cat /proc/"$npid"/task/*/children 2>/dev/null)
	done
	kill "$npid"
	wait "$npid" 2>/dev/null
done

say ""
say "== ratios (ironbelld / nginx): throughput, and server CPU per GiB"
awk '$1 == "RESULT" { k = $2 " " $3; tp[k] = $4; cpg[k] = $5; if (!($3 in seen)) { seen[$3] = 1; cl[++n] = $3 } }
END {
	for (i = 1; i <= n; i++)
		for (k in tp) {
			split(k, f, " ");
			if (f[2] != cl[i] || f[1] == "ironbelld" || !(("ironbelld " cl[i]) in tp)) continue;
			ib = "ironbelld " cl[i];
			printf "%-5s vs %-15s throughput x%.2f   CPU per GiB x%.2f (ironbelld %.2f s, %s %.2f s)\n",
				cl[i], f[1], tp[ib] / tp[k], cpg[k] ? cpg[ib] / cpg[k] : 0, cpg[ib], f[1], cpg[k];
		}
}' "$results"
