#!/usr/bin/env bash
# tests/bench/http/run.sh — the public listener's per-machine answers (the
# iPXE script, /httpboot, EC2 metadata, Hegel's /metadata JSON, NoCloud
# user-data) against nginx serving the same bytes. Never part of make check:
# it prints figures and asserts nothing about time; it fails only when a
# server does not answer.
#
# What it does, in one run on this machine, for each kind of Hardware
# (BENCH_HTTP_HARDWARE, default "rich small"):
#  - rich: N Hardware objects as a fleet's look (tests/gen-hardware.sh
#    --rich: 2-4 interfaces, 2-4 disks with partitions, ~1.5 KiB of
#    metadata, ~1 KiB of cloud-config user data); small: one interface,
#    a hostname and a one-disk storage layout. N is BENCH_HTTP_HOSTS
#    (default 10000; 100000 works). ironbelld listens on the loopback
#    address, 127.0.0.1 being a trusted proxy;
#  - nginx (nginx-light, run by hand from a private prefix, never as a
#    service; access_log off, sendfile on) serving, for each case, one
#    static file holding exactly what ironbelld answered for the first
#    machine (fetched first), with one worker and with as many workers as
#    the machine has cores;
#  - wrk against each, for each case, with two ways of choosing the URL
#    (BENCH_HTTP_URLS, default "rotating plain"): rotating, every request
#    from another of the N machines (a Lua script rotates the MAC in the
#    path or X-Forwarded-For over the machines' addresses); plain, one
#    machine, one fixed URL and header, no Lua (the fairest comparison
#    with nginx serving one file). And three loads (BENCH_HTTP_MODES,
#    default "keepalive close light"): WRK_CONNS connections (32) on 2
#    threads with keep-alive, the same with "Connection: close", and one
#    connection with one request at a time ("light": the p99 of an answer
#    without the queueing of a saturated server). BENCH_HTTP_SECONDS (10)
#    per run.
# Cases (BENCH_HTTP_CASES, default the first five): ipxe
# (/ipxe/script/<mac>/auto.ipxe), httpboot (/httpboot), hostname
# (/2009-04-04/meta-data/hostname), metadata (/metadata), userdata
# (/nocloud/user-data), and crawl: eight EC2 paths of one machine one
# after the other, then the next machine's, as cloud-init's EC2 source
# asks them (rotating only; each wrk thread starts at its own half of
# the machines; nginx serves each path's bytes from its own file). A case a kind of Hardware does not answer with 200
# (small Hardware carry no user data) is left out for that kind, and said.
# /httpboot answers the connecting address (no X-Forwarded-For: UEFI
# firmware asks directly), which over loopback is 127.0.0.1: a copy of the
# first machine (MACs 0a:...) that owns 127.0.0.1 is applied too, so that the case asks
# as a known machine, and it runs plain only (it cannot rotate).
#
# It reports requests/s, latency p50/p99 (wrk's own histogram), the CPU of
# the server (utime+stime of its processes over the run, from /proc), of
# the client (wrk's, as its parent sees it) and of the whole machine
# (/proc/stat: more than server + client means something else ran), each
# as a share of one core, and flags a run "client-bound" when wrk used more CPU than the
# server (not at one connection, where neither is saturated) or ~95% of a
# core per wrk thread: then the figure is wrk's, not the server's. Then the ratio to each nginx per case, and ironbelld's
# RSS after loading and after the load.
#
# BENCH_HTTP_LIGHT_ROUNDS=N (0: none) measures the one-connection p99
# again, side by side: ironbelld and nginx with one worker both running,
# N rounds of BENCH_HTTP_LIGHT_SECONDS (2) of one connection against each
# in turn (the first of the two alternating), for each plain case; it
# prints the median of the rounds' p99s of each and the median of the
# round-by-round differences, against the issue's 0.05 ms. On a machine
# whose pauses come and go, one run of each minutes apart gives a pause
# to whichever was running; rounds side by side give it to both alike.
#
# http.threads is the default (one
# per CPU) unless BENCH_HTTP_THREADS says otherwise, and http.pin_threads
# true unless BENCH_HTTP_PIN_THREADS=false; http.answer_prebuild is true
# unless BENCH_HTTP_PREBUILD=false (answers made on first use).
set -euo pipefail

: "${top_builddir:?}" "${top_srcdir:?}"
N=${BENCH_HTTP_HOSTS:-10000}
SECS=${BENCH_HTTP_SECONDS:-10}
CONNS=${WRK_CONNS:-32}
THREADS=${BENCH_HTTP_THREADS:-0}
CASES=${BENCH_HTTP_CASES:-"ipxe httpboot hostname metadata userdata"}
KINDS=${BENCH_HTTP_HARDWARE:-"rich small"}
URLS=${BENCH_HTTP_URLS:-"rotating plain"}
MODES=${BENCH_HTTP_MODES:-"keepalive close light"}
LIGHT_ROUNDS=${BENCH_HTTP_LIGHT_ROUNDS:-0}
LIGHT_SECS=${BENCH_HTTP_LIGHT_SECONDS:-2}
case $LIGHT_ROUNDS$LIGHT_SECS in *[!0-9]*) say "bench-http: BENCH_HTTP_LIGHT_ROUNDS and BENCH_HTTP_LIGHT_SECONDS are counts"; exit 2 ;; esac
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

# BENCH_HTTP_SERVER_QUOTA=F (a share of one core, e.g. 0.5): each server
# runs in a cgroup whose CPU is capped at F (cgroup v1's cpu controller,
# or v2's cpu.max). With Connection: close, wrk spends more CPU per
# request than either server and sets the figure on two cores; under an
# equal cap the server is the limit, and requests/s per server compare
# what a new connection costs each (the kernel's TCP work in its context
# included).
QUOTA=${BENCH_HTTP_SERVER_QUOTA:-}
. "$top_srcdir/tests/bench/http/common.sh"
cap_servers BENCH_HTTP_SERVER_QUOTA bench-http

tmp=$(mktemp -d /tmp/ib-bench-http.XXXXXX)
chmod 755 "$tmp" # nginx's workers drop to an unprivileged user and must read www/
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	sleep 0.2
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	cg_remove
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
	/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

declare -A URL=([ipxe]=/ipxe/script/MAC/auto.ipxe [httpboot]=/httpboot
	[hostname]=/2009-04-04/meta-data/hostname [metadata]=/metadata [userdata]=/nocloud/user-data
	[crawl]=/2009-04-04/meta-data/instance-id)
# The crawl case: what cloud-init's EC2 source asks of one machine, one
# path after the other (none of them another case's path, so that nginx
# serves each from its own location).
CRAWL="/2009-04-04/meta-data/instance-id /2009-04-04/meta-data/local-hostname
/2009-04-04/meta-data/plan /2009-04-04/meta-data/facility /2009-04-04/meta-data/tags
/2009-04-04/meta-data/public-keys /2009-04-04/meta-data/operating-system/slug /2009-04-04/user-data"
for c in $CASES; do
	[ -n "${URL[$c]:-}" ] || { say "bench-http: unknown case $c (ipxe httpboot hostname metadata userdata crawl)"; exit 2; }
done

# ---- CPU accounting ----
# procs PID: PID and its children (nginx's master and workers).
procs() {
	echo "$1"
	cat /proc/"$1"/task/*/children 2>/dev/null || true
}

# wrk's latencies ("412.00us", "1.20ms", "2.00s") in ms, for awk programs.
AWK_MS='function ms(s) { if (s ~ /us$/) return s / 1000; if (s ~ /ms$/) return s + 0; if (s ~ /s$/) return s * 1000; return s }'

# light_paired KIND NGINX_PORT: BENCH_HTTP_LIGHT_ROUNDS rounds of one
# connection against ironbelld and nginx in turn, for each plain case
# (the same URL and header as run's); prints and records the medians.
light_paired() {
	local kind=$1 nport=$2 c r s order port path xff p99
	xff=$(head -1 "$tmp/$kind/ips.txt")
	for c in $kcases; do
		[ "$c" = crawl ] && continue
		path=${URL[$c]/MAC/$(head -1 "$tmp/$kind/macs.txt")}
		: >"$tmp/light.txt"
		for r in $(seq "$LIGHT_ROUNDS"); do
			order="ironbelld nginx"
			[ $((r % 2)) = 0 ] && order="nginx ironbelld"
			for s in $order; do
				port=$HPORT
				[ "$s" = nginx ] && port=$nport
				wrk -t1 -c1 -d"${LIGHT_SECS}s" --latency -H "X-Forwarded-For: $xff" \
					"http://127.0.0.1:$port$path" >"$tmp/wrk.out" 2>&1 || true
				p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.out")
				[ -n "$p99" ] || { say "bench-http: wrk failed against $s ($c, one connection):"; cat "$tmp/wrk.out"; exit 1; }
				echo "$r $s $p99" >>"$tmp/light.txt"
			done
		done
		awk -v kind="$kind" -v c="$c" -v n="$LIGHT_ROUNDS" -v secs="$LIGHT_SECS" "$AWK_MS"'
		function med(a, m,  i, j, t) { for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		{ v = ms($3); if ($2 == "ironbelld") { ib[$1] = v; a[++na] = v } else { ng[$1] = v; b[++nb] = v } }
		END { for (r in ib) if (r in ng) d[++nd] = ib[r] - ng[r]
			lo = 1e9; hi = 0; for (i = 1; i <= na; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
			for (i = 1; i <= nb; i++) { if (b[i] < lo) lo = b[i]; if (b[i] > hi) hi = b[i] }
			dm = med(d, nd)
			printf "%-5s plain    %-9s one connection, %d rounds of %d s side by side: p99 median ironbelld %.3f ms, nginx 1 worker %.3f ms; ironbelld - nginx, median of the rounds, %+.3f ms (within +0.05 ms: %s); the rounds'"'"' p99s from %.3f to %.3f ms\n",
				kind, c, n, secs, med(a, na), med(b, nb), dm, dm <= 0.05 + 1e-9 ? "holds" : "MISSED", lo, hi }' "$tmp/light.txt" |
			tee -a "$tmp/light-lines.txt"
	done
}

# ---- the runs ----
results=$tmp/results
: >"$results"
srv_pids= # what "run" charges the server's CPU to
# run KIND URLS CASE SERVER PORT MODE: one wrk run; prints one result line
# and records it.
run() {
	local kind=$1 urls=$2 case=$3 name=$4 port=$5 mode=$6 hdr=() out rps p50 p99 non2xx errs
	local load=(-t2 -c"$CONNS") wthreads=2 script=() path t0 t1 m0 m1 wall cu cs scpu ccpu mcpu flag="" us
	[ "$mode" = close ] && hdr=(-H "Connection: close")
	[ "$mode" = light ] && { load=(-t1 -c1); wthreads=1; }
	path=${URL[$case]}
	if [ "$urls" = rotating ]; then
		script=(-s "$tmp/$case.lua")
		path=/
	else
		path=${path/MAC/$(head -1 "$tmp/$kind/macs.txt")}
		hdr+=(-H "X-Forwarded-For: $(head -1 "$tmp/$kind/ips.txt")")
	fi
	cg_join $srv_pids
	t0=$(ticks $srv_pids)
	m0=$(busy)
	TIMEFORMAT='%R %U %S'
	{ time wrk "${load[@]}" -d"${SECS}s" --latency "${hdr[@]}" "${script[@]}" \
		"http://127.0.0.1:$port$path" >"$tmp/wrk.out" 2>&1 || true; } 2>"$tmp/wrk.time"
	t1=$(ticks $srv_pids)
	m1=$(busy)
	out=$(cat "$tmp/wrk.out")
	read -r wall cu cs <"$tmp/wrk.time"
	scpu=$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v w="$wall" 'BEGIN { printf "%.2f", d / hz / w }')
	ccpu=$(awk -v u="$cu" -v s="$cs" -v w="$wall" 'BEGIN { printf "%.2f", (u + s) / w }')
	mcpu=$(awk -v d=$((m1 - m0)) -v hz="$HZ" -v w="$wall" 'BEGIN { printf "%.2f", d / hz / w }')
	# At one connection nothing saturates: only wrk's own core counts.
	# Under a cap, the server is the limit when it used nearly all of it.
	if [ -n "$QUOTA" ]; then
		awk -v c="$ccpu" -v s="$scpu" -v t="$wthreads" -v q="$QUOTA" -v m="$mode" \
			'BEGIN { exit !(m != "light" && s < 0.9 * q && c >= 0.95 * t) }' &&
			flag=client-bound
	else
		awk -v c="$ccpu" -v s="$scpu" -v t="$wthreads" -v m="$mode" \
			'BEGIN { exit !((m != "light" && c > s) || c >= 0.95 * t) }' &&
			flag=client-bound
	fi
	rps=$(printf '%s\n' "$out" | awk '/^Requests\/sec/ {print $2}')
	p50=$(printf '%s\n' "$out" | awk '$1 == "50%" {print $2}')
	p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
	non2xx=$(printf '%s\n' "$out" | awk '/Non-2xx/ {print $NF}')
	errs=$(printf '%s\n' "$out" | awk '/Socket errors/ {print $0}')
	if [ -z "$rps" ]; then
		say "bench-http: wrk failed against $name ($case $urls $mode):"
		say "$out"
		exit 1
	fi
	# The server's CPU per request, in µs: the cost of an answer whether
	# or not the server was the limit (uncapped, a server that waits for
	# the client also pays for going to sleep and waking up).
	us=$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v r="$rps" -v w="$wall" \
		'BEGIN { printf "%.1f", (r > 0 ? d / hz * 1e6 / (r * w) : 0) }')
	printf '%-5s %-8s %-9s %-15s %-9s %9s req/s  p50 %8s  p99 %8s  cpu server %5s (%5s µs/req) client %5s machine %5s %s%s%s\n' \
		"$kind" "$urls" "$case" "$name" "$mode" "$rps" "$p50" "$p99" "$scpu" "$us" "$ccpu" "$mcpu" \
		"$flag" "${non2xx:+ non-2xx $non2xx}" "${errs:+ ($errs)}"
	echo "$kind $urls $case $name $mode $rps $p50 $p99 $scpu $ccpu ${flag:--} $us" >>"$results"
}

# ---- nginx's configuration ----
nginx_conf() { # KIND WORKERS PORT
	nginx_write_conf "$tmp/nginx/nginx-$2.conf" "$2" 1024 <<EOF
  server {
    listen 127.0.0.1:$3;
    root $tmp/$1/www;
    default_type text/plain;
    location /ipxe/script/ { try_files /ipxe/body =404; }
    location = /httpboot { default_type application/json; try_files /httpboot/body =404; }
    location = /2009-04-04/meta-data/hostname { try_files /hostname/body =404; }
    location = /metadata { default_type application/json; try_files /metadata/body =404; }
    location = /nocloud/user-data { try_files /userdata/body =404; }
$(i=0; for p in $CRAWL; do i=$((i + 1)); echo "    location = $p { try_files /crawl/$i =404; }"; done)
  }
EOF
}

cores=$(nproc)
rssline=
prebuildline=
for kind in $KINDS; do
	case $kind in
	rich) gen=--rich ;;
	small) gen= ;;
	*) say "bench-http: unknown Hardware kind $kind (rich small)"; exit 2 ;;
	esac
	k=$tmp/$kind
	mkdir -p "$k/state" "$k/www"
	sh "$top_srcdir/tests/gen-hardware.sh" $gen 0 "$N" 1000 "$k/hw-%04d.yaml"
	awk '/^ *mac: "02:00:/ { gsub(/"/, "", $2); print $2 }' "$k"/hw-*.yaml >"$k/macs.txt"
	awk '/^ *ip: \{address: 10\./ { sub(/,$/, "", $3); print $3 }' "$k"/hw-*.yaml >"$k/ips.txt"
	[ "$(wc -l <"$k/macs.txt")" -eq "$N" ] && [ "$(wc -l <"$k/ips.txt")" -eq "$N" ] ||
		{ say "bench-http: the generated Hardware has not $N MACs and addresses"; exit 1; }
	# The loopback machine of /httpboot: the first one's copy, its MACs
	# 0a:..., its interfaces' addresses 127.0.0.1, 127.0.1.2, ...
	awk '/^---$/ && n++ { exit } n {
		sub(/^  name: node-/, "  name: loopback-node-")
		sub(/"02:/, "\"0a:")
		if (sub(/ip: \{address: [0-9.]*,/, "ip: {address: 127.0." (i ? 1 : 0) "." (i + 1) ","))
			i++
		print }' "$(ls "$k"/hw-*.yaml | head -1)" >"$k/loopback.yaml"
	grep -q 'address: 127.0.0.1,' "$k/loopback.yaml" ||
		{ say "bench-http: cannot make the loopback machine"; exit 1; }

	HPORT=$(free_port)
	cat >"$k/ironbell.yaml" <<EOF
log_level: warn
state_dir: $k/state
api:
  socket: $k/api.sock
http:
  listen: 127.0.0.1:$HPORT
  threads: $THREADS
  pin_threads: ${BENCH_HTTP_PIN_THREADS:-true}
  answer_prebuild: ${BENCH_HTTP_PREBUILD:-true}
metadata:
  trusted_proxies: [127.0.0.1]
EOF
	"$b/ironbelld" --config "$k/ironbell.yaml" 2>"$k/ironbelld.log" &
	ipid=$!
	pids="$pids $ipid"
	for _ in $(seq 100); do [ -S "$k/api.sock" ] && break; sleep 0.1; done
	for f in "$k"/hw-*.yaml "$k/loopback.yaml"; do
		IRONBELL_SOCKET=$k/api.sock "$b/ironbell" apply -f "$f" >/dev/null
	done

	# What ironbelld answers for the first machine: nginx serves these bytes.
	first=$(head -1 "$k/macs.txt")
	firstip=$(head -1 "$k/ips.txt")
	kcases=
	for c in $CASES; do
		mkdir -p "$k/www/$c"
		code=$(curl -s -o "$k/www/$c/body" -w '%{http_code}' -H "X-Forwarded-For: $firstip" \
			"http://127.0.0.1:$HPORT${URL[$c]/MAC/$first}") || code=000
		if [ "$code" = 200 ] && [ "$c" = crawl ]; then
			# Every path of the crawl, for nginx to serve.
			i=0
			for p in $CRAWL; do
				i=$((i + 1))
				pc=$(curl -s -o "$k/www/crawl/$i" -w '%{http_code}' \
					-H "X-Forwarded-For: $firstip" "http://127.0.0.1:$HPORT$p")
				[ "$pc" = 200 ] || { say "bench-http: $kind Hardware: the crawl's $p answers $pc"; exit 1; }
			done
			kcases="$kcases $c"
		elif [ "$code" = 200 ]; then
			kcases="$kcases $c"
		elif [ "$code" = 000 ]; then
			say "bench-http: ironbelld does not answer"; exit 1
		else
			say "bench-http: $kind Hardware: $c answers $code, left out"
		fi
	done
	rss() { awk '/^VmRSS/ {print $2}' "/proc/$ipid/status"; }
	rss0=$(rss)
	# With http.answer_prebuild (the default) every machine's boot
	# answers are made as its Hardware is indexed, on the cache's thread,
	# for the listener's address. The runs start once that is done (the
	# count of answers made ahead still for 2 s; at most 10 min), as on a
	# site where the Hardware was applied before the rack powered on.
	prebuilt() {
		curl -s "http://127.0.0.1:$HPORT/metrics" |
			awk '$1 == "ironbell_http_answers_prebuilt_total" { print $2 + 0; f = 1 } END { if (!f) print 0 }'
	}
	t0=$(date +%s%N) last=-1 same=0
	for _ in $(seq 1200); do
		cur=$(prebuilt)
		if [ "$cur" = "$last" ]; then same=$((same + 1)); else same=0; fi
		last=$cur
		[ "$same" -ge 4 ] && break
		sleep 0.5
	done
	rssp=$(rss)
	prebuildline="$prebuildline
$kind Hardware: $last boot answers made ahead in $(( ($(date +%s%N) - t0) / 1000000 - 2000 )) ms (RSS $rss0 kB before, $rssp kB after: $(( (rssp - rss0) / 1024 )) MiB)"

	# ---- wrk's request generators ----
	cat >"$tmp/ipxe.lua" <<EOF
local macs = {}
for line in io.lines("$k/macs.txt") do macs[#macs + 1] = line end
local i = 0
request = function()
  i = i % #macs + 1
  return wrk.format("GET", "/ipxe/script/" .. macs[i] .. "/auto.ipxe")
end
EOF
	for c in httpboot hostname metadata userdata; do
		cat >"$tmp/$c.lua" <<EOF
local ips = {}
for line in io.lines("$k/ips.txt") do ips[#ips + 1] = line end
local i = 0
request = function()
  i = i % #ips + 1
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  h["X-Forwarded-For"] = ips[i]
  return wrk.format("GET", "${URL[$c]}", h)
end
EOF
	done

	cat >"$tmp/crawl.lua" <<EOF
local ips = {}
for line in io.lines("$k/ips.txt") do ips[#ips + 1] = line end
local paths = {}
for p in string.gmatch("$(echo $CRAWL)", "%S+") do paths[#paths + 1] = p end
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local i, j = nil, 0
request = function()
  -- Each wrk thread crawls its own half of the machines, from its start.
  if not i then i = math.floor((tid or 0) * #ips / 2) + 1 end
  j = j + 1
  if j > #paths then j = 1; i = i % #ips + 1 end
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  h["X-Forwarded-For"] = ips[i]
  return wrk.format("GET", paths[j], h)
end
EOF

	say "== http, $kind Hardware: $N of them; wrk 2 threads, $CONNS connections, $SECS s per run; ironbelld http.threads $THREADS (0: one per CPU), pin_threads ${BENCH_HTTP_PIN_THREADS:-true}; cpu: share of one core${QUOTA:+; each server capped at $QUOTA of a core}"
	for c in $kcases; do
		say "   $c: $(wc -c <"$k/www/$c/body") bytes per answer"
	done
	srv_pids=$ipid
	for u in $URLS; do
		for c in $kcases; do
			[ "$u.$c" = rotating.httpboot ] || [ "$u.$c" = plain.crawl ] && continue
			for mode in $MODES; do
				run "$kind" "$u" "$c" ironbelld "$HPORT" "$mode"
			done
		done
	done
	rss1=$(rss)
	rssline="$rssline
ironbelld RSS, $kind Hardware: $rss0 kB after loading $N, $rss1 kB after the load ($(( (rss1 - rss0) / 1024 )) MiB more)"
	# ironbelld stays up, idle, for BENCH_HTTP_LIGHT_ROUNDS.
	[ "$LIGHT_ROUNDS" -gt 0 ] || { kill "$ipid"; wait "$ipid" 2>/dev/null || true; }
	for w in 1 "$cores"; do
		port=$(free_port)
		nginx_conf "$kind" "$w" "$port"
		"$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx-$w.conf" 2>>"$tmp/nginx/logs/stderr" &
		npid=$!
		pids="$pids $npid"
		for _ in $(seq 50); do
			curl -sf -o /dev/null "http://127.0.0.1:$port/ipxe/script/x/auto.ipxe" && break
			sleep 0.1
		done
		for c in $kcases; do
			[ "$c" = crawl ] && continue
			cmp -s <(curl -s "http://127.0.0.1:$port${URL[$c]/MAC/$first}") "$k/www/$c/body" ||
				{ say "bench-http: nginx does not serve the bytes of $c"; exit 1; }
		done
		i=0
		for p in $CRAWL; do
			case " $kcases " in *" crawl "*) ;; *) break ;; esac
			i=$((i + 1))
			cmp -s <(curl -s "http://127.0.0.1:$port$p") "$k/www/crawl/$i" ||
				{ say "bench-http: nginx does not serve the bytes of the crawl's $p"; exit 1; }
		done
		srv_pids=$(procs "$npid")
		for u in $URLS; do
			for c in $kcases; do
				[ "$u.$c" = rotating.httpboot ] || [ "$u.$c" = plain.crawl ] && continue
				for mode in $MODES; do
					run "$kind" "$u" "$c" "nginx-${w}worker" "$port" "$mode"
				done
			done
		done
		[ "$w" = 1 ] && [ "$LIGHT_ROUNDS" -gt 0 ] && light_paired "$kind" "$port"
		kill "$npid"
		wait "$npid" 2>/dev/null || true
	done
	if [ "$LIGHT_ROUNDS" -gt 0 ]; then
		kill "$ipid"
		wait "$ipid" 2>/dev/null || true
	fi
done

say ""
say "== ratios (ironbelld / nginx, requests/s; cpu: share of one core, server/client; * client-bound; µs/req: the server's CPU per request, ironbelld / nginx 1 worker / nginx $cores workers)"
awk -v cores="$cores" "$AWK_MS"'
function cpu(k) { return sprintf("%s/%s%s", scpu[k], ccpu[k], flag[k] == "-" ? "" : "*") }
{
	k = $1 " " $2 " " $3 " " $4 " " $5;
	rps[k] = $6; p99[k] = ms($8); scpu[k] = $9; ccpu[k] = $10; flag[k] = $11; us[k] = $12;
	g = $1 " " $2 " " $3 " " $5;
	if (!(g in seen)) { seen[g] = 1; order[++n] = g }
}
END {
	for (i = 1; i <= n; i++) {
		split(order[i], f, " ");
		pre = f[1] " " f[2] " " f[3] " ";
		ib = pre "ironbelld " f[4]; n1 = pre "nginx-1worker " f[4]; nn = pre "nginx-" cores "worker " f[4];
		if (!(ib in rps) || !(n1 in rps) || !(nn in rps) || !rps[n1] || !rps[nn])
			continue;
		if (f[4] == "light")
			printf "%-5s %-8s %-9s one connection: p99 ironbelld %.3f ms, nginx 1 worker %.3f ms, nginx %s workers %.3f ms (ironbelld - nginx 1 worker %+.3f ms)\n",
				f[1], f[2], f[3], p99[ib], p99[n1], cores, p99[nn], p99[ib] - p99[n1];
		else
			printf "%-5s %-8s %-9s %-9s x%.2f vs nginx 1 worker, x%.2f vs nginx %s workers   cpu ironbelld %s  nginx-1 %s  nginx-%s %s   µs/req %s / %s / %s   ironbelld p99 %.2f ms\n",
				f[1], f[2], f[3], f[4], rps[ib] / rps[n1], rps[ib] / rps[nn], cores,
				cpu(ib), cpu(n1), cores, cpu(nn), us[ib], us[n1], us[nn], p99[ib];
	}
}' "$results"
[ -s "$tmp/light-lines.txt" ] && cat "$tmp/light-lines.txt"
say "${prebuildline#?}"
say "${rssline#?}"
