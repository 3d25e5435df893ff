#!/bin/bash
# DHCP benchmark: ISC perfdhcp drives full DORA exchanges over a veth pair
# between two network namespaces against ironbelld, Kea (kea-dhcp4,
# memfile with persistence) and dnsmasq (with its lease file and with
# --leasefile-ro), one after another in the same run, each with the same
# N reservations (BENCH_DHCP_HOSTS, default 10000), the same options
# (netmask, router, name server, host name, lease time) and its default
# logging at level info. Kea and dnsmasq log every lease; ironbelld logs
# every ACK through a token bucket (500 lines, then 50 a second, the flood
# guard of ironbelld(8) "DHCP"), so at these rates it writes far fewer
# lines than the others: part of its lead at its maximum rate is that.
# perfdhcp acts as a relay (giaddr set, replies to giaddr:67), so every
# server answers a relay.
#
# For each server it prints:
#   - the highest rate with under 1% drops in both exchanges (perfdhcp's
#     own counts) that perfdhcp really sent (its "Rate:" at least 95% of
#     the one asked), found by doubling, then bisecting, BENCH_DHCP_SECONDS
#     (8) per step; when perfdhcp cannot send faster while the server
#     still answers nearly everything, the figure is what it reached,
#     marked ">=": the load generator's limit, not the server's;
#   - the server process's CPU time (all threads, utime + stime from
#     /proc) per completed DORA at that rate, and at a rate every server
#     can be compared at (BENCH_DHCP_CMP_RATE, 4000, when it passes there:
#     one of the steps, 250 times a power of 2);
#   - reply latency p50 and p99 at 1,000 DORA/s, for DISCOVER -> OFFER and
#     REQUEST -> ACK apart (an ACK waits for its lease's commit in
#     ironbelld; taken together the median would fall between the two),
#     from a capture on the server's interface: each request paired with
#     its reply (latency.py);
#   - right after that, the disk's own floor for such an ACK: fio writing
#     1 KiB and fdatasyncing it, one at a time, 1,000 a second, for as long
#     as the latency step, in the same file system as the server's state
#     (an ACK that waits for its lease to be on disk cannot come sooner
#     than one flush; this says what one flush took in that same minute,
#     the disk of a shared VM being far from steady);
#   - and the floor with queueing: flushfloor (tests/bench/dhcp), the same
#     1 KiB writes arriving at 1,000/s, flushed in group commit one flush
#     at a time, each timed from its arrival: a slow flush delays every
#     write that arrived during it, as it delays ACKs, which fio's
#     per-call times leave out;
# then the ratios of ironbelld to Kea, like against like:
#   - "ironbelld" runs with its defaults, lease reuse on (dhcp.lease_reuse
#     25): once the warm-up has written every lease, a client's next DORA
#     is ACKed the lease on disk with no write, as Kea's lease caching
#     does: it is set against "kea-cache", Kea with cache-threshold 0.25;
#   - "ironbelld-commit" (dhcp.lease_reuse 0) writes every lease and sends
#     the ACK once it is on disk: it is set against "kea", which writes
#     every lease (without a flush).
# The server is pinned to CPU 1 and
# perfdhcp to CPU 0 (BENCH_DHCP_SERVER_CPU, BENCH_DHCP_CLIENT_CPU).
#
# perfdhcp saturates its core near 15,000 DORA/s here, and its socket then
# overflows before the server does: each step prints the datagrams each
# side's kernel dropped for a full socket buffer (RcvbufErrors of its
# namespace), and the run raises net.core.rmem_default and rmem_max to
# 16 MiB (host-wide: namespaces share them; restored at exit) so that
# perfdhcp's buffer is not the first thing to give.
#
# It asserts nothing about time; it fails only when a server does not
# answer at all. Needs root, perfdhcp (kea-admin), kea-dhcp4, dnsmasq,
# tcpdump, fio and the built ironbelld and ironbell ($top_builddir); without
# them it says why and exits 0. BENCH_DHCP_SERVERS chooses and orders the
# servers ("kea kea-cache dnsmasq dnsmasq-ro ironbelld ironbelld-commit").
set -u

b=${top_builddir:-.}
src=${top_srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
N=${BENCH_DHCP_HOSTS:-10000}
STEP=${BENCH_DHCP_SECONDS:-8}
SCPU=${BENCH_DHCP_SERVER_CPU:-1}
CCPU=${BENCH_DHCP_CLIENT_CPU:-0}
SERVERS=${BENCH_DHCP_SERVERS:-"kea kea-cache dnsmasq dnsmasq-ro ironbelld ironbelld-commit"}
MAX_RATE=65536
CMP=${BENCH_DHCP_CMP_RATE:-4000}
PY=/usr/bin/python3

say() { printf '%s\n' "$*"; }
skip() {
	say "== dhcp benchmark skipped: $*"
	exit 0
}

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
for t in perfdhcp kea-dhcp4 dnsmasq tcpdump taskset ip fio; do
	command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || skip "$t is not installed"
done
PATH=$PATH:/usr/sbin
[ -x "$PY" ] || skip "$PY is not installed"
[ -x "$b/ironbelld" ] && [ -x "$b/ironbell" ] || skip "build ironbelld and ironbell first"
[ "$(nproc)" -ge 2 ] || { SCPU=0; CCPU=0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ironbell-bench-dhcp.XXXXXX") || exit 1
# The capture goes to memory when it can (/dev/shm): written to the disk
# the servers commit to, its pages, and the blocks freed when the next
# capture truncates it (the file system may be mounted with discard),
# would be the disk's work in the very minute being measured.
cap=$(mktemp -d /dev/shm/ironbell-bench-dhcp.XXXXXX 2>/dev/null) || cap=$tmp
NS_S=ibb$$-s
NS_C=ibb$$-c
spid=
. "$src/tests/bench/dhcp/net.sh"
cleanup() {
	bench_rmem_restore
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	bench_net_down
	rm -rf "$tmp"
	[ "$cap" = "$tmp" ] || rm -rf "$cap"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

bench_net_up

# ---- the reservations, in each server's form ----

bench_rmem_raise
say "== dhcp: $N reservations; server on CPU $SCPU, perfdhcp on CPU $CCPU; $STEP s per step"
awk -v n="$N" -v dir="$tmp" 'BEGIN {
	for (i = 0; i < n; i++) {
		mac = sprintf("02:00:%02x:%02x:%02x:%02x", int(i / 16777216) % 256,
			int(i / 65536) % 256, int(i / 256) % 256, i % 256);
		ip = sprintf("10.%d.%d.%d", int(i / 62500) + 1, int(i / 250) % 250, i % 250 + 1);
		name = sprintf("node-%06d", i);
		print mac > (dir "/macs.txt");
		f = sprintf("%s/hw-%04d.yaml", dir, int(i / 1000));
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n" > f;
		printf "metadata:\n  name: %s\nspec:\n  interfaces:\n    - dhcp:\n", name > f;
		printf "        mac: \"%s\"\n        hostname: %s\n        lease_time: 86400\n", mac, name > f;
		printf "        ip: {address: %s, netmask: 255.0.0.0, gateway: 10.0.0.1}\n", ip > f;
		printf "        name_servers: [10.0.0.1]\n      netboot: {allowPXE: true}\n" > f;
		printf "%s,%s,%s,86400\n", mac, ip, name > (dir "/dnsmasq.hosts");
		printf "%s{\"hw-address\": \"%s\", \"ip-address\": \"%s\", \"hostname\": \"%s\"}\n",
			i ? "," : "", mac, ip, name > (dir "/kea.reservations");
	}
}'

cat >"$tmp/kea.json" <<EOF
{ "Dhcp4": {
  "interfaces-config": { "interfaces": [ "ibs0" ], "dhcp-socket-type": "udp" },
  "lease-database": { "type": "memfile", "persist": true, "lfc-interval": 0,
                      "name": "$tmp/kea-leases4.csv" },
  "valid-lifetime": 86400,
  "cache-threshold": CACHE_THRESHOLD,
  "host-reservation-identifiers": [ "hw-address" ],
  "reservations-out-of-pool": true,
  "option-data": [ { "name": "routers", "data": "10.0.0.1" },
                   { "name": "domain-name-servers", "data": "10.0.0.1" } ],
  "subnet4": [ { "id": 1, "subnet": "10.0.0.0/8", "reservations": [
$(cat "$tmp/kea.reservations")
  ] } ],
  "loggers": [ { "name": "kea-dhcp4", "severity": "INFO",
                 "output_options": [ { "output": "$tmp/kea.log" } ] } ]
} }
EOF
# Kea's lease caching (cache-threshold, a fraction of valid-lifetime) as
# ironbelld's default lease reuse; without it (Kea's default), off.
sed 's/CACHE_THRESHOLD/0.25/' "$tmp/kea.json" >"$tmp/kea-cache.json"
sed -i '/CACHE_THRESHOLD/d' "$tmp/kea.json"

cat >"$tmp/ironbell.yaml" <<EOF
log_level: info
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: 127.0.0.1:$((20000 + $$ % 20000))
dhcp:
  enabled: true
  interfaces: [ibs0]
EOF
sed 's/^  interfaces: \[ibs0\]$/&\n  lease_reuse: 0/' "$tmp/ironbell.yaml" >"$tmp/ironbell-commit.yaml"
grep -q 'lease_reuse: 0' "$tmp/ironbell-commit.yaml" || { say "cannot write ironbell-commit.yaml"; exit 1; }

# ---- servers ----

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# Datagrams a namespace's kernel dropped for a full socket buffer.
rcvbuf_errors() {
	ip netns exec "$1" awk '/^Udp:/ && ++n == 2 { print $6 }' /proc/net/snmp
}

answers() {
	timeout 20 ip netns exec "$NS_C" perfdhcp -4 -l ibc0 -r 50 -p 2 -M "$tmp/macs.txt" 10.0.0.1 \
		>"$tmp/probe.out" 2>&1
	[ "$(received REQUEST-ACK "$tmp/probe.out")" -gt 0 ]
}

start_server() {
	case $1 in
	kea | kea-cache)
		rm -f "$tmp"/kea-leases4.csv*
		mkdir -p "$tmp/kea-run"
		KEA_PIDFILE_DIR=$tmp/kea-run KEA_LOCKFILE_DIR=$tmp/kea-run \
			ip netns exec "$NS_S" taskset -c "$SCPU" kea-dhcp4 -c "$tmp/$1.json" \
			>"$tmp/kea.out" 2>&1 &
		;;
	dnsmasq | dnsmasq-ro)
		rm -f "$tmp/dnsmasq.leases"
		ro=
		[ "$1" = dnsmasq-ro ] && ro=--leasefile-ro
		# --user=root: dnsmasq would drop to nobody, who cannot read the
		# hosts file in our 0700 directory; Kea and ironbelld run as
		# root here too.
		ip netns exec "$NS_S" taskset -c "$SCPU" dnsmasq -k --user=root --port=0 --interface=ibs0 \
			--dhcp-range=10.0.0.0,static,255.0.0.0,86400 --dhcp-hostsfile="$tmp/dnsmasq.hosts" \
			--dhcp-option=3,10.0.0.1 --dhcp-option=6,10.0.0.1 --no-ping \
			--dhcp-lease-max=$((N * 2 + 1000)) --dhcp-authoritative \
			--dhcp-leasefile="$tmp/dnsmasq.leases" $ro --pid-file="$tmp/dnsmasq.pid" \
			--log-facility="$tmp/dnsmasq.log" >"$tmp/dnsmasq.out" 2>&1 &
		;;
	ironbelld | ironbelld-commit)
		rm -rf "$tmp/state"
		ip netns exec "$NS_S" taskset -c "$SCPU" "$b/ironbelld" \
			--config "$tmp/${1/ironbelld/ironbell}.yaml" 2>"$tmp/ironbelld.log" &
		;;
	esac
	spid=$!
	if [ "${1%-commit}" = ironbelld ]; then
		for _ in $(seq 100); do
			[ -S "$tmp/api.sock" ] && break
			sleep 0.1
		done
		for f in "$tmp"/hw-*.yaml; do
			IRONBELL_SOCKET=$tmp/api.sock "$b/ironbell" apply -f "$f" >/dev/null || return 1
		done
		for _ in $(seq 600); do
			curl -s --unix-socket "$tmp/api.sock" http://x/metrics |
				grep -qx "ironbell_dhcp_hosts $N" && break
			sleep 0.1
		done
	fi
	for _ in $(seq 60); do
		answers && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.5
	done
	say "$1 does not answer; its output:"
	tail -n 20 "$tmp"/"${1%%-*}"*.out "$tmp"/"${1%%-*}"*.log 2>/dev/null
	return 1
}

stop_server() {
	kill "$spid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=
}

# run RATE: one step; sets ok (drops < 1% in both exchanges), acks and us
# (server CPU per DORA, microseconds).
run() {
	local c0 c1 es0 ec0 es1 ec1
	c0=$(cpu_ticks "$spid")
	es0=$(rcvbuf_errors "$NS_S")
	ec0=$(rcvbuf_errors "$NS_C")
	timeout $((STEP + 30)) ip netns exec "$NS_C" taskset -c "$CCPU" perfdhcp -4 -l ibc0 -r "$1" \
		-p "$STEP" -M "$tmp/macs.txt" 10.0.0.1 >"$tmp/step.out" 2>&1
	c1=$(cpu_ticks "$spid")
	es1=$(rcvbuf_errors "$NS_S")
	ec1=$(rcvbuf_errors "$NS_C")
	local ds rs dr rr
	ds=$(sent DISCOVER-OFFER "$tmp/step.out")
	rs=$(received DISCOVER-OFFER "$tmp/step.out")
	dr=$(sent REQUEST-ACK "$tmp/step.out")
	rr=$(received REQUEST-ACK "$tmp/step.out")
	acks=$rr
	[ "$1" -lt "$lowest" ] && lowest=$1
	local got
	got=$(awk '/^Rate:/ { print int($2); exit }' "$tmp/step.out")
	achieved=${got:-0}
	# ok: drops under 1% at the rate asked; capped: drops under 1%, but
	# perfdhcp sent less than 95% of the rate asked.
	read -r ok capped drop us < <(awk -v ds="$ds" -v rs="$rs" -v dr="$dr" -v rr="$rr" \
		-v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v want="$1" -v got="$achieved" 'BEGIN {
		d1 = ds ? (ds - rs) / ds : 1; d2 = dr ? (dr - rr) / dr : 1;
		d = d1 > d2 ? d1 : d2;
		good = ds > 0 && d < 0.01; full = got >= 0.95 * want;
		printf "%d %d %.2f %.1f\n", good && full, good && !full, d * 100,
			rr ? c / hz * 1e6 / rr : 0 }')
	printf '   %6d DORA/s asked, %6d sent: %7d ACKs, drops %5.2f%%, %6.1f us CPU per DORA; full buffers: server %d, perfdhcp %d%s\n' \
		"$1" "$achieved" "$acks" "$drop" "$us" $((es1 - es0)) $((ec1 - ec0)) \
		"$([ "$ok" = 1 ] || { [ "$capped" = 1 ] && echo '  (perfdhcp cannot send faster)'; } ||
			echo '  (over 1%)')"
	[ "$1" = "$CMP" ] && [ "$ok" = 1 ] && cmp_us=$us
}

# step RATE: runs it and records the outcome: 0 passed (lo, best), 1 over
# 1% drops (hi), 2 perfdhcp could send no faster while the server kept up
# (best ">=" what it sent: the search ends there).
step() {
	run "$1"
	if [ "$ok" = 1 ]; then
		best=$1
		best_us=$us
		lo=$1
		return 0
	fi
	if [ "$capped" = 1 ]; then
		if [ "$achieved" -gt "${best#>=}" ]; then
			best=">=$achieved"
			best_us=$us
		fi
		return 2
	fi
	hi=$1
	return 1
}

# search: doubling from 250, then two bisection steps; sets best, best_us.
search() {
	local r=250 st=0
	lo=0
	hi=0
	lowest=$MAX_RATE
	best=0
	best_us=0
	cmp_us=-
	while [ "$r" -le "$MAX_RATE" ]; do
		step "$r"
		st=$?
		[ "$st" = 0 ] || break
		r=$((r * 2))
	done
	[ "$st" = 1 ] || return 0
	for _ in 1 2; do
		r=$(((lo + hi) / 2))
		[ "$lo" -gt 0 ] || r=$((hi / 2))
		step "$r"
		[ $? = 2 ] && return 0
	done
}

latency() {
	# The search ends at the server's limit: let what that left behind
	# (checkpoints, the kernel writing back dirty pages) settle, and warm
	# up at 1,000/s, before measuring the steady state at that rate.
	# And no dirty page of anyone's writes left to the kernel's periodic
	# writeback (30 s old, every 5 s): at 100,000 reservations this
	# script's own input files are 50 MB, and their writeback in the
	# middle of the step held a flush for 100 ms.
	sleep 5
	rm -f "$cap/cap.pcap"
	sync
	timeout 30 ip netns exec "$NS_C" taskset -c "$CCPU" perfdhcp -4 -l ibc0 -r 1000 -p 3 \
		-M "$tmp/macs.txt" 10.0.0.1 >/dev/null 2>&1
	ip netns exec "$NS_S" tcpdump -i ibs0 -n -s 400 --time-stamp-precision=nano -w "$cap/cap.pcap" \
		'udp port 67' >"$tmp/tcpdump.out" 2>&1 &
	local tpid=$!
	sleep 1
	timeout $((STEP + 30)) ip netns exec "$NS_C" taskset -c "$CCPU" perfdhcp -4 -l ibc0 -r 1000 \
		-p "$STEP" -M "$tmp/macs.txt" 10.0.0.1 >"$tmp/lat.out" 2>&1
	sleep 0.5
	kill -INT "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	"$PY" "$src/tests/bench/dhcp/latency.py" "$cap/cap.pcap" >"$tmp/lat.txt"
	sed 's/^/    /' "$tmp/lat.txt"
	read -r op50 op99 < <(awk '$1 == "discover-offer" { sub("p50=", "", $3); sub("p99=", "", $4);
		print $3, $4 }' "$tmp/lat.txt")
	read -r ap50 ap99 < <(awk '$1 == "request-ack" { sub("p50=", "", $3); sub("p99=", "", $4);
		print $3, $4 }' "$tmp/lat.txt")
}

# disk_floor: sets fp50 and fp99 (ms), the latency of fdatasync after a
# 1 KiB write at 1,000 writes a second, from fio's own percentiles, on a
# file beside the server's state (pinned like the server).
disk_floor() {
	fp50=-
	fp99=-
	taskset -c "$SCPU" fio --name=flush --filename="$tmp/fio.dat" --size=4m --bs=1k --rw=write \
		--ioengine=sync --fdatasync=1 --rate_iops=1000 --time_based --runtime="$STEP" \
		--output-format=json >"$tmp/fio.json" 2>"$tmp/fio.err" || {
		say "   fio failed: $(head -c 300 "$tmp/fio.err")"
		return
	}
	read -r fp50 fp99 < <("$PY" -c 'import json, sys
p = json.load(open(sys.argv[1]))["jobs"][0]["sync"]["lat_ns"]["percentile"]
print("%.3f %.3f" % (p["50.000000"] / 1e6, p["99.000000"] / 1e6))' "$tmp/fio.json")
	rm -f "$tmp/fio.dat"
	say "    disk: 1 KiB write + fdatasync at 1,000/s (fio) p50=$fp50 p99=$fp99 ms"
}

# group_floor: sets gp50 and gp99 (ms): flushfloor, the same writes as
# group commit at 1,000 arrivals a second, each timed from its arrival,
# so that it counts the wait behind a slow flush as an ACK does; the best
# any server whose ACK waits for its record on disk can do in that minute.
group_floor() {
	gp50=-
	gp99=-
	local out
	if ! out=$(taskset -c "$SCPU" "$b/tests/bench/dhcp/flushfloor" -r 1000 -s "$STEP" \
		"$tmp/floor.dat" 2>&1); then
		say "   flushfloor failed: $out"
		return
	fi
	read -r gp50 gp99 gmax <<<"$out"
	say "    floor: group commit of 1 KiB records at 1,000/s, from arrival (flushfloor) p50=$gp50 p99=$gp99 max=$gmax ms"
}

# unleased SERVER: the MACs of macs.txt that SERVER has no lease for, read
# from its lease file (Kea) or, read-only, from its database (ironbelld:
# `ironbell get leases` would build all of them as one JSON reply in the
# daemon, and its peak RSS would be that reply's), into unleased.txt;
# prints how many. Fails for a server whose leases it does not read.
unleased() {
	case $1 in
	kea | kea-cache) awk -F, 'NR > 1 { print tolower($2) }' "$tmp/kea-leases4.csv" ;;
	ironbelld | ironbelld-commit)
		"$PY" -c 'import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
for (mac,) in db.execute("SELECT mac FROM leases WHERE state = \x27bound\x27"):
    print(mac.lower())' "$tmp/state/ironbell.db"
		;;
	*) return 1 ;;
	esac >"$tmp/leased.txt" 2>/dev/null || return 1
	grep -v -x -F -f "$tmp/leased.txt" "$tmp/macs.txt" >"$tmp/unleased.txt"
	wc -l <"$tmp/unleased.txt"
}

# warm_up SERVER: every reservation leased once, so that each server is
# measured renewing, as a busy one is (and, with lease reuse, is measured
# handing out the leases on disk). perfdhcp picks each exchange's MAC at
# random from its list: one pass of N exchanges leaves about a third of
# the MACs without a lease, so the MACs still without one go round again,
# three exchanges each, at most 5 times.
warm_up() {
	local left round
	timeout 60 ip netns exec "$NS_C" taskset -c "$CCPU" perfdhcp -4 -l ibc0 -r 2000 \
		-p $(((N + 1999) / 2000 + 2)) -M "$tmp/macs.txt" 10.0.0.1 >/dev/null 2>&1
	for round in 1 2 3 4 5; do
		left=$(unleased "$1") || return 0
		[ "$left" -gt 0 ] || break
		timeout 300 ip netns exec "$NS_C" taskset -c "$CCPU" perfdhcp -4 -l ibc0 -r 2000 \
			-p $((3 * left / 2000 + 2)) -M "$tmp/unleased.txt" 10.0.0.1 >/dev/null 2>&1
	done
	left=$(unleased "$1")
	say "   warm-up: $((N - left)) of $N reservations leased"
}

results=
failed=0
for srv in $SERVERS; do
	say "-- $srv"
	if ! start_server "$srv"; then
		failed=1
		stop_server
		continue
	fi
	warm_up "$srv"
	search
	latency
	rss=$(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$spid/status" 2>/dev/null)
	rss=${rss// /}
	stop_server
	disk_floor
	group_floor
	[ "$best" = 0 ] && best="<$lowest"
	results="$results$srv $best $best_us $cmp_us $op50/$op99 $ap50/$ap99 ${rss:--} $fp50/$fp99 $gp50/$gp99
"
done

say ""
say "== dhcp results: $N reservations, $STEP s steps (server CPU $SCPU, perfdhcp CPU $CCPU)"
printf '%-16s %15s %11s %12s %18s %18s %10s %16s %16s\n' server "max DORA/s <1%" "CPU us@max" \
	"CPU us@$CMP" "OFFER p50/p99 ms" "ACK p50/p99 ms" "peak RSS" "disk p50/p99 ms" "floor p50/p99 ms"
printf '%s' "$results" | while read -r s r u c o a m d g; do
	[ -n "$s" ] && printf '%-16s %15s %11s %12s %18s %18s %10s %16s %16s\n' "$s" "$r" "$u" "$c" "$o" \
		"$a" "$m" "$d" "$g"
done
say "(latency at 1,000 DORA/s, on the server's interface; CPU of the whole server process;"
say " disk: fio's fdatasync of 1 KiB at 1,000/s right after, one flush timed alone;"
say " floor: the same writes in group commit, timed from each one's arrival: the best a"
say " server whose ACK waits for the disk can do in that minute)"
# ratios IRONBELLD KEA: the rate and CPU of one against the other.
ratios() {
	printf '%s' "$results" | awk -v i="$1" -v k="$2" -v cmp="$CMP" '
	{ atleast = sub(/^>=/, "", $2); sub(/^</, "", $2) }
	$1 == k { kr = $2; ku = $3; kc = $4 }
	$1 == i { ir = $2; iu = $3; ic = $4; igeq = atleast }
	END {
		if (!(kr && ir && ku && iu))
			exit
		printf "%s / %s: rate x%s%.2f, CPU per DORA at each one'"'"'s max x%.2f", i, k,
			igeq ? ">=" : "", ir / kr, iu / ku;
		if (kc + 0 && ic + 0)
			printf ", at %s DORA/s x%.2f", cmp, ic / kc;
		print ""
	}'
}
ratios ironbelld kea-cache
ratios ironbelld-commit kea
ratios ironbelld kea
# The ACK p99 of each ironbelld against the disk's flush and the
# group-commit floor of its own minute.
printf '%s' "$results" | awk '$1 ~ /^ironbelld/ { split($6, a, "/"); split($8, d, "/");
	split($9, g, "/");
	if (d[2] + 0 > 0) printf "%s ACK p99 / the disk'"'"'s flush p99 in the same minute: x%.2f\n",
		$1, a[2] / d[2];
	if (g[2] + 0 > 0) printf "%s ACK p99 / the group-commit floor'"'"'s p99 in the same minute: x%.2f\n",
		$1, a[2] / g[2] }'
say "(>= N: the server kept up with all perfdhcp could send, N DORA/s on its one core)"
exit "$failed"
