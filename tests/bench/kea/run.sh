#!/bin/bash
# Kea hook benchmark: what libdhcp_ironbell.so costs a site's kea-dhcp4.
# ISC perfdhcp drives full DORA exchanges over a veth pair between two
# network namespaces, in the same run, against:
#   - "kea": kea-dhcp4 alone, with N host reservations (BENCH_KEA_HOSTS,
#     default 10000) in its own configuration;
#   - "kea+hook": the same kea-dhcp4 with the hook loaded and no
#     reservation of its own, the same N machines being Hardware in
#     ironbelld's store (tests/gen-hardware.sh: the objects an operator
#     writes, applied through ironbelld, which keeps running beside Kea
#     as it would on a site, its DHCP server off).
# Everything else is the same configuration: memfile lease database with
# its lease file, one subnet with the same pool, the same option data,
# reservations looked up by hardware address only, logging at INFO to a
# file (Kea logs every lease), Kea's default single thread. Each address,
# host name and router of a reservation is the one of its Hardware, so
# both answer each MAC with the same lease and options; the hook adds its
# own lookups and the copy of ironbelld's answer into Kea's reply. perfdhcp
# picks its MACs from the reserved ones (-M).
#
# For each it prints:
#   - the highest rate with under 1% drops in both exchanges (perfdhcp's
#     own counts) that perfdhcp really sent (its "Rate:" at least 95% of
#     the one asked), found by doubling from 250, then BENCH_KEA_BISECT (4)
#     bisection steps (to within 1/16 of the rate: the target is 10%),
#     BENCH_KEA_SECONDS (8) per step; when perfdhcp could send no faster
#     while Kea still answered nearly everything, the figure is what it
#     reached, marked ">=": the client's limit, not Kea's;
#   - kea-dhcp4's CPU time (all threads, utime + stime from /proc) per
#     completed DORA and as a share of its core, at that rate and at
#     BENCH_KEA_CMP_RATE (2000, one of the steps) where both pass, and the
#     same for perfdhcp (the CPU time of the finished process), so that a
#     client at 100% of its core while Kea is not says who the bottleneck
#     was;
#   - reply latency p50 and p99 at 1,000 DORA/s, DISCOVER -> OFFER and
#     REQUEST -> ACK apart, from a capture on the server's interface
#     (tests/bench/dhcp/latency.py), and how much of kea-dhcp4's core
#     other processes took meanwhile: a p99 is only as quiet as that core;
#   - how many of the N reservations Kea's lease file holds with their
#     reserved address after the warm-up (every MAC leased once, so that
#     both are measured renewing), and for the hook its own statistics
#     (ironbell.hosts, ironbell.answers.*: that it answered at all);
# then the ratios hook / alone against the issue's targets: a rate of at
# least 0.90 of Kea alone's, and a p99 at 1,000/s no more than 0.1 ms
# above it.
#
# kea-dhcp4 is pinned to CPU 1 and perfdhcp to CPU 0
# (BENCH_KEA_SERVER_CPU, BENCH_KEA_CLIENT_CPU); ironbelld, idle once the
# Hardware is applied, to the client's. The run raises net.core.rmem_default
# and rmem_max to 16 MiB (host-wide; restored at exit), as the DHCP
# benchmark does, so that perfdhcp's socket buffer is not the first thing
# to give. BENCH_KEA_CONFIGS chooses and orders the runs ("kea kea+hook");
# BENCH_KEA_ROUNDS (1) runs them all that many times, alternating, for a
# ratio in each round (every other round in the reverse order): on a
# machine whose load changes, rounds side by side say more than one long
# run of each.
#
# BENCH_KEA_PAIRED=K runs both at once instead, each Kea in its own pair
# of namespaces (the same addresses in both) on the same core, and climbs
# a ladder of rates (BENCH_KEA_LADDER, 4,000 to 8,000 by 250) K times, the
# two taking turns at each rate, the one not asked idle in select(). A
# configuration leaves the ladder after two failed steps in a row; its
# max is the highest rate it passed. It prints each pass's max of both
# and their ratio (mean, median, lowest), kea-dhcp4's CPU per DORA of the
# two at each rate both passed, side by side (median of the ratios), and
# the p99 at 1,000/s of each, measured in BENCH_KEA_LAT_ROUNDS (6)
# alternating slices of BENCH_KEA_LAT_SECONDS (4) each and pooled per
# configuration, so that the machine's pauses fall on both alike, as a
# run of each minutes apart does not; each slice with the share of Kea's
# core that other processes and the hypervisor's steal took. Beside it,
# the library's own time per exchange over its slices, from its
# ironbell.time-us histogram: what the library adds to an answer's
# latency, counted inside it, which a pause of the machine reaches only
# when one falls within the microseconds of the library's calls; its p99
# is held to the same 0.1 ms. Steps seconds apart meet the same machine:
# the ratio no longer carries the drift of the minutes between two runs,
# which on a shared machine is larger than the difference measured.
# With BENCH_KEA_OVERLOAD=R, each of the K passes is instead one step of
# each at R DORA/s, a rate above both maxima (the first of the two
# alternating), and what is compared is the ACKs each completed per
# second: the rate a saturated Kea sustains, a figure that does not hang
# on whether one step of a ladder stayed under 1% drops.
#
# BENCH_KEA_NOOP="lease4_select pkt4_send" (or either alone) makes the
# second configuration Kea with its own reservations and an empty hook
# library with those callouts (tests/bench/kea/noop-hook.cc, built with
# $CXX against Kea's headers): what Kea's hooks framework costs a packet
# for those hook points, apart from libdhcp_ironbell.so's own work. The
# configuration keeps its name, kea+hook, in the output.
#
# BENCH_KEA_CALLGRIND=N counts instead the instructions kea-dhcp4
# executes per DORA, under valgrind's callgrind, over N exchanges after a
# warm-up (less the same run without them): a figure that another load on
# the machine does not move, at about 50 times the time.
# The exchanges are asked at BENCH_KEA_CALLGRIND_RATE (40) a second, which
# Kea under callgrind answers (the warm-up too, so that none of it is
# still queued); a run in which over 1% was lost gives no figure. BENCH_KEA_CALLGRIND_DIR=DIR keeps callgrind's files there, named
# cg-<config>-<exchanges>.out, for callgrind_annotate.
# BENCH_KEA_RATES="R1 R2 ..." runs those steps only, in place of the
# search (the max is then the highest that passed). BENCH_KEA_PERF=DIR records perf profiles of kea-dhcp4 during the
# BENCH_KEA_CMP_RATE step of each run (DIR/<config>[-<round>].perf.data),
# for perf report --sort dso,sym; BENCH_KEA_PERF_STAT=EVENTS counts
# those events with perf stat instead (DIR/<config>-<n>.stat, n counting
# the profiled steps of the whole run); BENCH_KEA_PERF_CALLGRAPH (dwarf, fp) records
# the call graphs too, for perf report --children.
#
# It asserts nothing about time; it fails only when a server does not
# answer at all. Needs root, perfdhcp (kea-admin), kea-dhcp4, tcpdump, the
# built ironbelld and ironbell ($top_builddir) and, for "kea+hook", the
# built hook (dhcp/kea/libdhcp_ironbell.so, or BENCH_KEA_HOOK): without the
# hook that run is skipped and said so; without the rest the benchmark
# says why and exits 0.
set -u

b=${top_builddir:-.}
src=${top_srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
N=${BENCH_KEA_HOSTS:-10000}
STEP=${BENCH_KEA_SECONDS:-8}
SCPU=${BENCH_KEA_SERVER_CPU:-1}
CCPU=${BENCH_KEA_CLIENT_CPU:-0}
CONFIGS=${BENCH_KEA_CONFIGS:-"kea kea+hook"}
HOOK=${BENCH_KEA_HOOK:-$b/dhcp/kea/libdhcp_ironbell.so}
CMP=${BENCH_KEA_CMP_RATE:-2000}
ROUNDS=${BENCH_KEA_ROUNDS:-1}
BISECT=${BENCH_KEA_BISECT:-4}
MAX_RATE=65536
PY=/usr/bin/python3
HZ=$(getconf CLK_TCK)

say() { printf '%s\n' "$*"; }
skip() {
	say "== kea benchmark skipped: $*"
	exit 0
}

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
PATH=$PATH:/usr/sbin
for t in perfdhcp kea-dhcp4 tcpdump taskset ip; do
	command -v "$t" >/dev/null 2>&1 || skip "$t is not installed"
done
[ -x "$PY" ] || skip "$PY is not installed"
[ -x "$b/ironbelld" ] && [ -x "$b/ironbell" ] || skip "build ironbelld and ironbell first"
[ "$(nproc)" -ge 2 ] || { SCPU=0; CCPU=0; }
case $HOOK in /*) ;; *) HOOK=$(pwd)/$HOOK ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ironbell-bench-kea.XXXXXX") || exit 1
# The capture goes to memory when it can, not to the disk Kea writes its
# lease file to.
cap=$(mktemp -d /dev/shm/ironbell-bench-kea.XXXXXX 2>/dev/null) || cap=$tmp
NS_S=ibk$$-s
NS_C=ibk$$-c
NS_S1=$NS_S NS_C1=$NS_C NS_S2= NS_C2=
spid=
perf_n=0
ipid=
. "$src/tests/bench/dhcp/net.sh"
cleanup() {
	bench_rmem_restore
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$ipid" ] && kill "$ipid" 2>/dev/null
	NS_S=$NS_S1 NS_C=$NS_C1 bench_net_down
	[ -z "$NS_S2" ] || NS_S=$NS_S2 NS_C=$NS_C2 bench_net_down
	rm -rf "$tmp"
	[ "$cap" = "$tmp" ] || rm -rf "$cap"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

bench_net_up

bench_rmem_raise
say "== kea: $N reservations; kea-dhcp4 on CPU $SCPU, perfdhcp on CPU $CCPU; $STEP s per step"

# ---- the reservations: Hardware for ironbelld, the same in Kea's form ----

sh "$src/tests/gen-hardware.sh" 0 "$N" 1000 "$tmp/hw-%04d.yaml" || exit 1
# perfdhcp is a relay (giaddr 10.0.0.2), and ironbelld's policy answers a
# relayed request only when the reserved address is on the relay's
# network by the Hardware's netmask (a /16 per rack in gen-hardware.sh):
# here that network is 10.0.0.0/8, Kea's subnet, so the Hardware say so,
# with its router. Otherwise every answer would be "silent" or "mismatch",
# left to Kea, and the run would measure Kea alone twice.
sed -i 's/netmask: 255\.255\.0\.0, gateway: 10\.[0-9]*\.0\.1}/netmask: 255.0.0.0, gateway: 10.0.0.1}/' \
	"$tmp"/hw-*.yaml
# Each Hardware's MAC, address, gateway and host name, read back from the
# YAML that was generated (not computed again), so that the two cannot
# drift apart.
awk -v dir="$tmp" '
	/^ *mac: / { gsub(/"/, "", $2); mac = $2 }
	/^ *hostname: / { name = $2 }
	/^ *ip: / { ip = $3; sub(/,$/, "", ip); gw = $7; sub(/}$/, "", gw);
		print mac > (dir "/macs.txt");
		print mac "," ip > (dir "/reserved.txt");
		printf "%s{\"hw-address\": \"%s\", \"ip-address\": \"%s\", \"hostname\": \"%s\", \"option-data\": [{\"name\": \"routers\", \"data\": \"%s\"}]}\n",
			n++ ? "," : "", mac, ip, name, gw > (dir "/kea.reservations") }' "$tmp"/hw-*.yaml
[ "$(wc -l <"$tmp/macs.txt")" = "$N" ] || { say "cannot read the generated Hardware back"; exit 1; }

# kea_config HOOKS RESERVATIONS DIR: Kea's configuration, the same for both
# but for the hook library and the reservations; its control socket, lease
# file and log in DIR (each configuration its own, so that both can run at
# once: BENCH_KEA_PAIRED). The subnet sends what ironbelld's policy sends
# a machine of gen-hardware.sh beyond Kea's defaults: the renewal and
# rebinding times of its lease time (T1 = 1/2, T2 = 7/8) and the broadcast
# address of its network, so that both Keas pack and send answers of the
# same options and size (checked on the wire: same_answers), and what is
# compared is the hook's work, not a longer answer.
kea_config() {
	cat <<EOF
{ "Dhcp4": {
  "interfaces-config": { "interfaces": [ "ibs0" ], "dhcp-socket-type": "udp" },
  "control-socket": { "socket-type": "unix", "socket-name": "$3/kea.sock" },
  "lease-database": { "type": "memfile", "persist": true, "lfc-interval": 0,
                      "name": "$3/kea-leases4.csv" },
  "valid-lifetime": 86400,
  "host-reservation-identifiers": [ "hw-address" ],
  "reservations-out-of-pool": true,
  "option-data": [ { "name": "domain-name-servers", "data": "10.0.0.1" } ],
  "hooks-libraries": [ $1 ],
  "subnet4": [ { "id": 1, "subnet": "10.0.0.0/8",
                 "pools": [ { "pool": "10.250.0.1 - 10.250.255.254" } ],
                 "renew-timer": 43200, "rebind-timer": 75600,
                 "option-data": [ { "name": "routers", "data": "10.0.0.1" },
                                  { "name": "broadcast-address", "data": "10.255.255.255",
                                    "always-send": true } ],
                 "reservations": [
$2
  ] } ],
  "loggers": [ { "name": "kea-dhcp4", "severity": "INFO",
                 "output_options": [ { "output": "$3/kea.log" } ] } ]
} }
EOF
}
mkdir -p "$tmp/run-kea" "$tmp/run-kea+hook"
kea_config "" "$(cat "$tmp/kea.reservations")" "$tmp/run-kea" >"$tmp/kea.json"
NOOP=${BENCH_KEA_NOOP:-}
if [ -n "$NOOP" ]; then
	defs=
	for c in $NOOP; do
		case $c in
		lease4_select) defs="$defs -DNOOP_LEASE4_SELECT" ;;
		pkt4_send) defs="$defs -DNOOP_PKT4_SEND" ;;
		*) say "BENCH_KEA_NOOP: unknown callout $c (lease4_select, pkt4_send)"; exit 2 ;;
		esac
	done
	# shellcheck disable=SC2086 # flags and libraries, word-split on purpose
	${CXX:-g++} -std=c++17 -O2 -shared -fPIC ${KEA_CPPFLAGS:--isystem /usr/include/kea} $defs \
		-o "$tmp/libnoop.so" "$src/tests/bench/kea/noop-hook.cc" \
		${KEA_LIBS:--lkea-dhcpsrv -lkea-dhcp++ -lkea-hooks -lkea-log -lkea-util -lkea-exceptions} ||
		{ say "cannot build the empty hook library"; exit 1; }
	HOOK=$tmp/libnoop.so
	say "== kea+hook is Kea with its own reservations and an empty hook library (callouts: $NOOP)"
	kea_config "{ \"library\": \"$HOOK\" }" "$(cat "$tmp/kea.reservations")" "$tmp/run-kea+hook" \
		>"$tmp/kea+hook.json"
else
	kea_config "{ \"library\": \"$HOOK\", \"parameters\": {
      \"store\": \"$tmp/state/ironbell.db\", \"public-address\": \"10.0.0.1\" } }" "" "$tmp/run-kea+hook" \
		>"$tmp/kea+hook.json"
fi

cat >"$tmp/ironbell.yaml" <<EOF
log_level: info
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: 127.0.0.1:$((20000 + $$ % 20000))
EOF

# ---- servers ----

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# sys_ticks PID: its system time alone.
sys_ticks() { awk '{ print $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# core_ticks CPU: that core's busy and steal ticks (all processes), from
# /proc/stat: "busy steal".
core_ticks() {
	awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9, $9; exit }' /proc/stat
}

# kea_command JSON: one command on Kea's control socket; prints the reply.
kea_command() {
	"$PY" - "$kdir/kea.sock" "$1" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
data = b""
for _ in range(1000):
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    if not chunk:
        break
    data += chunk
    try:
        json.loads(data)
        break
    except ValueError:
        continue
print(data.decode(errors="replace"))
EOF
}

# hook_stats: the hook's statistics, "name value" a line, from
# statistic-get-all.
hook_stats() {
	kea_command '{ "command": "statistic-get-all" }' 2>/dev/null | "$PY" -c '
import json, sys
try:
    r = json.loads(sys.stdin.read())
except ValueError:
    sys.exit(0)
if isinstance(r, list):
    r = r[0]
for name, v in sorted((r.get("arguments") or {}).items()):
    if name.startswith("ironbell.") and v:
        print(name, v[0][0])'
}

# hook_time_since FILE: the hook's own time per exchange (its
# ironbell.time-us histogram) since the statistics saved in FILE (by
# hook_stats), as "exchanges mean_us p50_le p99_le p999_le buckets": the
# smallest bucket bound that holds that share of the exchanges ("inf"
# past 5000), then each bound with its exchanges ("le:n,...").
hook_time_since() {
	hook_stats | awk 'FNR == NR { a[$1] = $2; next } { b[$1] = $2 }
		END { n = b["ironbell.time-us.le-inf"] - a["ironbell.time-us.le-inf"]
			if (n <= 0) { print "0 nan nan nan nan"; exit }
			split("5 10 20 30 50 75 100 200 500 1000 5000 inf", le, " ")
			q[1] = 0.5; q[2] = 0.99; q[3] = 0.999
			for (j = 1; j <= 3; j++)
				for (i = 1; i <= 12; i++) { k = "ironbell.time-us.le-" le[i]
					if (b[k] - a[k] >= q[j] * n) { r[j] = le[i]; break } }
			h = ""; for (i = 1; i <= 12; i++) { k = "ironbell.time-us.le-" le[i]
				h = h (i > 1 ? "," : "") le[i] ":" (b[k] - a[k]) }
			printf "%d %.1f %s %s %s %s\n", n, (b["ironbell.time-us.sum"] - a["ironbell.time-us.sum"]) / n, r[1], r[2], r[3], h }' "$1" -
}

# kea_sent: the OFFERs and ACKs Kea has sent, by its own statistics.
kea_sent() {
	kea_command '{ "command": "statistic-get-all" }' 2>/dev/null | "$PY" -c '
import json, sys
try:
    r = json.loads(sys.stdin.read())
except ValueError:
    r = {}
if isinstance(r, list):
    r = r[0]
a = r.get("arguments") or {}
v = lambda k: a[k][0][0] if a.get(k) else 0
print(v("pkt4-offer-sent") + v("pkt4-ack-sent"), v("pkt4-received"), v("pkt4-nak-sent"),
      v("pkt4-receive-drop"))'
}

# sample_sent OUT: while a step runs, Kea's OFFERs and ACKs sent per
# second from its 2nd to its 6th second (the queue full, before perfdhcp
# stops), and kea-dhcp4's CPU per answer over the same seconds, into OUT.
sample_sent() {
	local a0 a1 r0 r1 n0 n1 d0 d1 c0 c1 t0 t1
	sleep 2
	t0=$(date +%s%N) c0=$(cpu_ticks "$spid")
	read -r a0 r0 n0 d0 < <(kea_sent)
	sleep 4
	t1=$(date +%s%N) c1=$(cpu_ticks "$spid")
	read -r a1 r1 n1 d1 < <(kea_sent)
	awk -v a="$((a1 - a0))" -v r="$((r1 - r0))" -v n="$((n1 - n0))" -v d="$((d1 - d0))" \
		-v c="$((c1 - c0))" -v hz="$HZ" -v w="$((t1 - t0))" \
		'BEGIN { printf "%d %.1f %d %d %d\n", w ? a * 1e9 / w : 0, a ? c / hz * 1e6 / a : 0,
			w ? r * 1e9 / w : 0, w ? n * 1e9 / w : 0, w ? d * 1e9 / w : 0 }' >"$1"
}

answers() {
	timeout 20 ip netns exec "$NS_C" perfdhcp -4 -l ibc0 -r 50 -p 2 -M "$tmp/macs.txt" 10.0.0.1 \
		>"$tmp/probe.out" 2>&1
	[ "$(received REQUEST-ACK "$tmp/probe.out")" -gt 0 ]
}

# start_ironbelld: ironbelld with the N Hardware in its store, left
# running (idle) beside Kea, as on a site.
start_ironbelld() {
	[ -n "$ipid" ] && return 0
	rm -rf "$tmp/state"
	ip netns exec "$NS_S" taskset -c "$CCPU" "$b/ironbelld" --config "$tmp/ironbell.yaml" \
		2>"$tmp/ironbelld.log" &
	ipid=$!
	for _ in $(seq 100); do
		[ -S "$tmp/api.sock" ] && break
		sleep 0.1
	done
	local t0=$SECONDS
	for f in "$tmp"/hw-*.yaml; do
		IRONBELL_SOCKET=$tmp/api.sock "$b/ironbell" apply -f "$f" >/dev/null || {
			say "ironbell apply -f $f failed; ironbelld's log:"
			tail -n 20 "$tmp/ironbelld.log"
			return 1
		}
	done
	say "   ironbelld: $N Hardware applied in $((SECONDS - t0)) s"
}

# hook_ready: waits (30 s at most) for the hook to have loaded all N.
hook_ready() {
	local st t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "${HOOK_READY_S:-30}" ]; do
		st=$(hook_stats)
		printf '%s\n' "$st" | grep -qx 'ironbell.ready 1' &&
			printf '%s\n' "$st" | grep -qx "ironbell.hosts $N" && return 0
		kill -0 "$spid" 2>/dev/null || return 1
		sleep 0.1
	done
	say "   the hook did not report $N hosts ready in 30 s; its statistics:"
	printf '%s\n' "$st" | sed 's/^/     /'
	return 1
}

start_server() {
	kdir=$tmp/run-$1
	if [ "$1" = kea+hook ] && [ -z "$NOOP" ]; then
		start_ironbelld || return 1
	fi
	rm -f "$kdir"/kea-leases4.csv* "$kdir/kea.sock" "$kdir/kea.log"
	mkdir -p "$kdir/run"
	KEA_PIDFILE_DIR=$kdir/run KEA_LOCKFILE_DIR=$kdir/run \
		ip netns exec "$NS_S" taskset -c "$SCPU" kea-dhcp4 -c "$tmp/$1.json" \
		>"$kdir/kea.out" 2>&1 &
	spid=$!
	if [ "$1" = kea+hook ] && [ -z "$NOOP" ] && ! hook_ready; then
		tail -n 20 "$kdir/kea.out" "$kdir/kea.log" 2>/dev/null
		return 1
	fi
	for _ in $(seq 60); do
		answers && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.5
	done
	say "$1 does not answer; its output:"
	tail -n 20 "$kdir/kea.out" "$kdir/kea.log" 2>/dev/null
	return 1
}

stop_pid() {
	kill "$1" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
stop_server() {
	[ -n "$spid" ] && stop_pid "$spid"
	spid=
}

# perfdhcp_timed SECONDS OUT ARGS...: perfdhcp on the client's CPU for
# SECONDS (-p), its output in OUT; prints the CPU ticks it used (the
# subshell's waited-for children: perfdhcp and the wrappers that exec it).
perfdhcp_timed() {
	local secs=$1 out=$2
	shift 2
	(
		timeout $((secs + 30)) ip netns exec "$NS_C" taskset -c "$CCPU" perfdhcp -4 -l ibc0 \
			-p "$secs" "$@" 10.0.0.1 >"$out" 2>&1
		awk '{ print $16 + $17 }' "/proc/$BASHPID/stat"
	)
}

# run RATE: one step; sets ok (drops < 1% in both exchanges), capped (ok
# but perfdhcp sent < 95% of the rate), us and cpct (server CPU per DORA in
# microseconds, and share of its core), cus and ccpct (the same for
# perfdhcp), sbusy (how busy kea-dhcp4's core was, every process counted,
# and the hypervisor's steal: a core busy with others' work is the
# bottleneck then, neither Kea nor the client).
run() {
	local c0 c1 cc t0 t1 k0 k1 st0 st1 y0 y1 sysus
	c0=$(cpu_ticks "$spid")
	y0=$(sys_ticks "$spid")
	read -r k0 st0 < <(core_ticks "$SCPU")
	local ppid= pdata
	if [ -n "${BENCH_KEA_PERF:-}" ] && [ -z "${BENCH_KEA_PERF_STAT:-}" ] && [ "$1" = "$CMP" ] &&
		command -v perf >/dev/null 2>&1; then
		mkdir -p "$BENCH_KEA_PERF"
		pdata=$BENCH_KEA_PERF/$cfg$([ "$ROUNDS" = 1 ] || echo "-$round").perf.data
		perf record -q ${BENCH_KEA_PERF_EVENT:+-e "$BENCH_KEA_PERF_EVENT"} \
			${BENCH_KEA_PERF_CALLGRAPH:+--call-graph "$BENCH_KEA_PERF_CALLGRAPH"} -p "$spid" -o "$pdata" 2>/dev/null &
		ppid=$!
	elif [ -n "${BENCH_KEA_PERF:-}" ] && [ "$1" = "$CMP" ] && command -v perf >/dev/null 2>&1; then
		mkdir -p "$BENCH_KEA_PERF"
		pdata=$BENCH_KEA_PERF/$cfg-$((++perf_n)).stat
		perf stat -x, -e "$BENCH_KEA_PERF_STAT" -p "$spid" -o "$pdata" 2>/dev/null &
		ppid=$!
	fi
	t0=$(date +%s%N)
	cc=$(perfdhcp_timed "$STEP" "$tmp/step.out" -r "$1" -M "$tmp/macs.txt")
	t1=$(date +%s%N)
	if [ -n "$ppid" ]; then
		kill -INT "$ppid" 2>/dev/null
		wait "$ppid" 2>/dev/null
		say "   perf $([ -n "${BENCH_KEA_PERF_STAT:-}" ] && echo counts || echo profile) of kea-dhcp4 at $1/s: $pdata"
	fi
	c1=$(cpu_ticks "$spid")
	y1=$(sys_ticks "$spid")
	read -r k1 st1 < <(core_ticks "$SCPU")
	local ds rs dr rr got
	ds=$(sent DISCOVER-OFFER "$tmp/step.out")
	rs=$(received DISCOVER-OFFER "$tmp/step.out")
	dr=$(sent REQUEST-ACK "$tmp/step.out")
	rr=$(received REQUEST-ACK "$tmp/step.out")
	[ "$1" -lt "$lowest" ] && lowest=$1
	got=$(awk '/^Rate:/ { print int($2); exit }' "$tmp/step.out")
	achieved=${got:-0}
	read -r ok capped drop us cpct cus ccpct sbusy ssteal < <(awk -v ds="$ds" -v rs="$rs" \
		-v dr="$dr" -v rr="$rr" -v c="$((c1 - c0))" -v cc="${cc:-0}" -v hz="$HZ" \
		-v want="$1" -v got="$achieved" -v wall="$((t1 - t0))" -v k="$((k1 - k0))" \
		-v st="$((st1 - st0))" 'BEGIN {
		d1 = ds ? (ds - rs) / ds : 1; d2 = dr ? (dr - rr) / dr : 1;
		d = d1 > d2 ? d1 : d2;
		good = ds > 0 && d < 0.01; full = got >= 0.95 * want;
		# Both shares are of the wall time of the step, the start of perfdhcp
		# and its wait for the last replies included: a little under the
		# load while it sends.
		printf "%d %d %.2f %.1f %.0f %.1f %.0f %.0f %.0f\n", good && full, good && !full,
			d * 100, rr ? c / hz * 1e6 / rr : 0, wall ? c / hz * 1e11 / wall : 0,
			rr ? cc / hz * 1e6 / rr : 0, wall ? cc / hz * 1e11 / wall : 0,
			wall ? k / hz * 1e11 / wall : 0, wall ? st / hz * 1e11 / wall : 0 }')
	sysus=$(awk -v y="$((y1 - y0))" -v hz="$HZ" -v rr="$rr" 'BEGIN { printf "%.1f", rr ? y / hz * 1e6 / rr : 0 }')
	printf '   %s%6d DORA/s asked, %6d sent: %7d ACKs, drops %5.2f%%; kea-dhcp4 %6.1f us/DORA (%s in the kernel; %3d%% CPU; its core %3d%% busy, %d%% steal), perfdhcp %6.1f us/DORA (%3d%% CPU)%s\n' \
		"${tag:-}" "$1" "$achieved" "$rr" "$drop" "$us" "$sysus" "$cpct" "$sbusy" "$ssteal" "$cus" "$ccpct" \
		"$([ "$ok" = 1 ] || { [ "$capped" = 1 ] && echo '  (perfdhcp cannot send faster)'; } ||
			echo '  (over 1%)')"
	if [ "$1" = "$CMP" ] && [ "$ok" = 1 ]; then
		cmp_us=$us
		cmp_cus=$cus
	fi
}

# step RATE: runs it and records the outcome: 0 passed (lo, best), 1 over
# 1% drops (hi), 2 perfdhcp could send no faster while Kea kept up (best
# ">=" what it sent: the search ends there). The server and client
# figures of the best step are kept beside it, and those of the first
# failing one (where the bottleneck shows).
step() {
	run "$1"
	if [ "$ok" = 1 ]; then
		best=$1
		best_us=$us best_cpct=$cpct best_cus=$cus best_ccpct=$ccpct
		lo=$1
		return 0
	fi
	if [ "$capped" = 1 ]; then
		if [ "$achieved" -gt "${best#>=}" ]; then
			best=">=$achieved"
			best_us=$us best_cpct=$cpct best_cus=$cus best_ccpct=$ccpct
		fi
		client_bound=1
		return 2
	fi
	hi=$1
	fail_cpct=$cpct fail_ccpct=$ccpct fail_sbusy=$sbusy
	return 1
}

# search: doubling from 250, then BISECT bisection steps.
search() {
	local r=250 st=0
	lo=0 hi=0 lowest=$MAX_RATE
	best=0 best_us=0 best_cpct=0 best_cus=0 best_ccpct=0
	fail_cpct=- fail_ccpct=- fail_sbusy=- client_bound=0
	cmp_us=- cmp_cus=-
	if [ -n "${BENCH_KEA_RATES:-}" ]; then
		for r in $BENCH_KEA_RATES; do
			step "$r"
		done
		return 0
	fi
	while [ "$r" -le "$MAX_RATE" ]; do
		step "$r"
		st=$?
		[ "$st" = 0 ] || break
		r=$((r * 2))
	done
	[ "$st" = 1 ] || return 0
	for _ in $(seq "$BISECT"); do
		r=$(((lo + hi) / 2))
		[ "$lo" -gt 0 ] || r=$((hi / 2))
		step "$r"
		[ $? = 2 ] && return 0
	done
	# Who lost the drops at the lowest rate that failed: perfdhcp, when
	# its core was nearly full and Kea's was not (client_bound 1); the
	# machine, when neither was but Kea's core was busy with other work
	# or stolen by the hypervisor (2); otherwise Kea (0).
	[ "$fail_cpct" != - ] || return 0
	if [ "$fail_ccpct" -ge 90 ] && [ "$fail_cpct" -lt 90 ]; then
		client_bound=1
	elif [ "$fail_cpct" -lt 80 ] && [ "$fail_ccpct" -lt 80 ] && [ "$fail_sbusy" -ge 90 ]; then
		client_bound=2
	fi
}

# lat_capture PCAP SECONDS: a capture on the server's interface while
# perfdhcp asks 1,000 DORA/s for SECONDS (after 3 s of the same); sets
# others, the share of kea-dhcp4's core that other processes took
# meanwhile (%), and steal, the share the hypervisor took (%; counted in
# others too).
lat_capture() {
	sleep 2
	rm -f "$1"
	perfdhcp_timed 3 /dev/null -r 1000 -M "$tmp/macs.txt" >/dev/null
	# The capture runs on the client's core, not on Kea's.
	ip netns exec "$NS_S" taskset -c "$CCPU" tcpdump -i ibs0 -n -s 400 --time-stamp-precision=nano -w "$1" \
		'udp port 67' >"$tmp/tcpdump.out" 2>&1 &
	local tpid=$! c0 c1 k0 k1 s0 s1 t0 t1
	sleep 1
	c0=$(cpu_ticks "$spid")
	read -r k0 s0 < <(core_ticks "$SCPU")
	t0=$(date +%s%N)
	perfdhcp_timed "$2" "$tmp/lat.out" -r 1000 -M "$tmp/macs.txt" >/dev/null
	t1=$(date +%s%N)
	c1=$(cpu_ticks "$spid")
	read -r k1 s1 < <(core_ticks "$SCPU")
	others=$(awk -v c="$((c1 - c0))" -v k="$((k1 - k0))" -v hz="$HZ" -v wall="$((t1 - t0))" \
		'BEGIN { o = wall ? (k - c) / hz * 1e11 / wall : 0; printf "%.0f\n", o < 0 ? 0 : o }')
	steal=$(awk -v s="$((s1 - s0))" -v hz="$HZ" -v wall="$((t1 - t0))" \
		'BEGIN { printf "%.1f\n", wall ? s / hz * 1e11 / wall : 0 }')
	sleep 0.5
	kill -INT "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
}

# lat_read FILE: op50 op99 ap50 ap99 from latency.py's lines in FILE.
lat_read() {
	read -r op50 op99 < <(awk '$1 == "discover-offer" { sub("p50=", "", $3); sub("p99=", "", $4);
		print $3, $4 }' "$1")
	read -r ap50 ap99 < <(awk '$1 == "request-ack" { sub("p50=", "", $3); sub("p99=", "", $4);
		print $3, $4 }' "$1")
}

latency() {
	lat_capture "$cap/cap.pcap" "$STEP"
	"$PY" "$src/tests/bench/dhcp/latency.py" "$cap/cap.pcap" >"$tmp/lat.txt"
	sed 's/^/    /' "$tmp/lat.txt"
	say "    other processes on kea-dhcp4's core meanwhile: $others% of it"
	"$PY" "$src/tests/bench/kea/layout.py" "$cap/cap.pcap" >"$tmp/layout-$cfg.txt"
	sed 's/^/    answers: /' "$tmp/layout-$cfg.txt"
	lat_read "$tmp/lat.txt"
}

# latency_paired ROUNDS SECONDS: the latency at 1,000/s of both
# configurations in ROUNDS alternating slices of SECONDS each (the first
# of the two alternating): a pause of the machine lands on either with
# the same odds, where one run of each minutes apart gives it all to one.
# Prints each slice's p99 with the share of Kea's core that other
# processes took, the figures of all slices pooled per configuration, and
# the difference of the two p99s round by round (hook - alone), whose
# median is what is compared: one stall of the machine moves one round,
# where it moves a pooled p99 by as much as it lasted. Sets pd_o and pd_a
# to the medians (OFFER, ACK), in ms.
latency_paired() {
	local k c order files_k= files_h= f
	: >"$tmp/slices.txt"
	use_cfg kea+hook
	[ -n "$NOOP" ] || hook_stats >"$tmp/hook-stats-0.txt"
	for k in $(seq "$1"); do
		order="kea kea+hook"
		[ $((k % 2)) = 0 ] && order="kea+hook kea"
		for c in $order; do
			use_cfg "$c"
			f=$cap/lat-$c-$k.pcap
			lat_capture "$f" "$2"
			"$PY" "$src/tests/bench/dhcp/latency.py" "$f" >"$tmp/lat.txt"
			lat_read "$tmp/lat.txt"
			say "$(printf '   slice %d %-9s p99 OFFER %s ACK %s ms (p50 %s, %s); others on its core %s%%, steal %s%%' \
				"$k" "$c" "$op99" "$ap99" "$op50" "$ap50" "$others" "$steal")"
			echo "$k $c $op99 $ap99 $others $op50 $ap50 $steal" >>"$tmp/slices.txt"
			if [ "$c" = kea ]; then files_k="$files_k $f"; else files_h="$files_h $f"; fi
			[ "$k" = 1 ] && "$PY" "$src/tests/bench/kea/layout.py" "$f" >"$tmp/layout-$c.txt"
		done
	done
	for c in kea kea+hook; do
		say "-- $c: latency at 1,000 DORA/s, $1 slices of $2 s pooled"
		# shellcheck disable=SC2086 # lists of paths without blanks
		if [ "$c" = kea ]; then
			"$PY" "$src/tests/bench/dhcp/latency.py" $files_k >"$tmp/lat.txt"
		else
			"$PY" "$src/tests/bench/dhcp/latency.py" $files_h >"$tmp/lat.txt"
		fi
		sed 's/^/    /' "$tmp/lat.txt"
		sed 's/^/    answers: /' "$tmp/layout-$c.txt"
	done
	# shellcheck disable=SC2086
	rm -f $files_k $files_h
	# The medians of the round-by-round differences, and the spread of the
	# OFFER p99s themselves, to read the difference against.
	read -r pd_o pd_a md_o md_a sp_lo sp_hi sp_med < <(awk "$isort"'
		{ p[++m] = $3 }
		$2 == "kea" { ko[$1] = $3; ka[$1] = $4; ko5[$1] = $6; ka5[$1] = $7 }
		$2 == "kea+hook" { ho[$1] = $3; ha[$1] = $4; ho5[$1] = $6; ha5[$1] = $7 }
		function med(a, n) { isort(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END { for (k in ko) if (k in ho) { n++; o[n] = ho[k] - ko[k]; a[n] = ha[k] - ka[k]
				o5[n] = ho5[k] - ko5[k]; a5[n] = ha5[k] - ka5[k] }
			if (n) printf "%.3f %.3f %.3f %.3f", med(o, n), med(a, n), med(o5, n), med(a5, n)
			else printf "nan nan nan nan"
			if (m) { pm = med(p, m); printf " %.3f %.3f %.3f\n", p[1], p[m], pm }
			else print " nan nan nan" }' "$tmp/slices.txt")
	say "   the slices' OFFER p99s, both configurations: from $sp_lo to $sp_hi ms, median $sp_med"
	# What the hook itself added: its own time in each exchange of its
	# slices, counted by the library (ironbell.time-us), which the
	# machine's pauses reach only when one falls inside the hook.
	ht_n=0
	if [ -z "$NOOP" ]; then
		use_cfg kea+hook
		read -r ht_n ht_mean ht_50 ht_99 ht_999 ht_hist < <(hook_time_since "$tmp/hook-stats-0.txt")
		say "   the hook's own time per exchange in its slices (ironbell.time-us, $ht_n exchanges): mean $ht_mean us, p50 <= $ht_50 us, p99 <= $ht_99 us, p99.9 <= $ht_999 us"
		say "   exchanges within each bound (us:count, cumulative): $ht_hist"
	fi
}

# same_answers: whether Kea alone and Kea with the hook sent OFFERs and
# ACKs with the same options, each of the same length (in any order), and
# of the same size, in their latency captures (layout.py). When they did
# not, the rate compared includes the cost of the larger answer, not of
# the hook alone.
same_answers() {
	local k=$tmp/layout-kea.txt h=$tmp/layout-kea+hook.txt
	[ -s "$k" ] && [ -s "$h" ] || return 0
	if grep -q ' n=0' "$k" "$h"; then
		say "answers: not compared (a capture holds no OFFER or ACK)"
		return 0
	fi
	awk 'function sorted(s,  f, n, i, j, t, o) { n = split(s, f, " ")
			for (i = 2; i <= n; i++) { t = f[i]; for (j = i - 1; j >= 1 && f[j] + 0 > t + 0; j--) f[j + 1] = f[j]; f[j + 1] = t }
			o = ""; for (i = 1; i <= n; i++) o = o " " f[i]; return o }
		FNR == 1 { file++ }
		{ l = $0; sub(/.* layout=/, "", l); L[file, $1] = sorted(l)
			b = $0; sub(/.* bytes=/, "", b); sub(/ .*/, "", b); B[file, $1] = b }
		END { same = 1
			for (t = 1; t <= 2; t++) { k = t == 1 ? "offer" : "ack"
				if (L[1, k] != L[2, k] || B[1, k] != B[2, k]) { same = 0
					printf "answers DIFFER: %s: kea%s (%s bytes), kea+hook%s (%s bytes)\n", k, L[1, k], B[1, k], L[2, k], B[2, k] } }
			if (same) print "answers: the same options, of the same lengths, in OFFERs and ACKs of both" }' "$k" "$h"
}

# leased: how many reservations Kea's lease file holds with their reserved
# address (the last line of a MAC is its lease); writes the MACs without a
# lease into unleased.txt.
leased() {
	awk -F, 'FILENAME ~ /reserved.txt$/ { ip[$1] = $2; next }
		FNR > 1 { l[tolower($2)] = $1 }
		END { for (m in ip) if (l[m] == ip[m]) n++; print n + 0 }' \
		"$tmp/reserved.txt" "$kdir/kea-leases4.csv" 2>/dev/null || echo 0
	awk -F, 'FILENAME ~ /macs.txt$/ { m[$1] = 1; next } FNR > 1 { delete m[tolower($2)] }
		END { for (x in m) print x }' "$tmp/macs.txt" "$kdir/kea-leases4.csv" >"$tmp/unleased.txt"
}

# warm_up: every reservation leased once, so that Kea is measured
# renewing, as a busy server is. perfdhcp picks each exchange's MAC at
# random: one pass of N exchanges leaves about a third without a lease, so
# those go round again, three exchanges each, at most 5 times.
warm_up() {
	local left
	perfdhcp_timed $(((N + 1999) / 2000 + 2)) /dev/null -r 2000 -M "$tmp/macs.txt" >/dev/null
	for _ in 1 2 3 4 5; do
		leased >/dev/null
		left=$(wc -l <"$tmp/unleased.txt")
		[ "$left" -gt 0 ] || break
		perfdhcp_timed $((3 * left / 2000 + 2)) /dev/null -r 2000 -M "$tmp/unleased.txt" >/dev/null
	done
	good=$(leased)
	say "   warm-up: $good of $N reservations leased with their reserved address"
}

# ---- instructions per DORA (BENCH_KEA_CALLGRIND=N) ----

# cg_total FILE: the instructions callgrind counted in FILE.
cg_total() {
	callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
}

# cg_pass CFG N: kea-dhcp4 of CFG under callgrind, from an empty lease
# file: a warm-up of every reservation (as the rate runs have), then N
# exchanges when N > 0, then stopped; sets cg_i (instructions) and cg_a
# (ACKs). Not in a subshell: ironbelld, started once, is the run's.
cg_pass() {
	local out=$tmp/cg-$1-$2.out acks=0
	kdir=$tmp/run-$1
	# Started here, not by start_server: its probe sends a number of
	# exchanges that varies from run to run.
	if [ "$1" = kea+hook ]; then
		start_ironbelld >/dev/null || return 1
	fi
	rm -f "$kdir"/kea-leases4.csv* "$kdir/kea.sock" "$kdir/kea.log"
	mkdir -p "$kdir/run"
	KEA_PIDFILE_DIR=$kdir/run KEA_LOCKFILE_DIR=$kdir/run \
		ip netns exec "$NS_S" taskset -c "$SCPU" valgrind --tool=callgrind \
		--callgrind-out-file="$out" kea-dhcp4 -c "$tmp/$1.json" >"$kdir/kea.out" 2>&1 &
	spid=$!
	for _ in $(seq 1200); do
		[ -S "$kdir/kea.sock" ] && break
		sleep 0.1
	done
	if [ "$1" = kea+hook ]; then
		HOOK_READY_S=300 hook_ready >/dev/null || return 1
	fi
	# Each given the time it takes at CG_RATE, and then 2 s for the
	# last answers (-W, in microseconds).
	local wn=$((2 * N)) wacks
	timeout $((wn / CG_RATE + 120)) ip netns exec "$NS_C" perfdhcp -4 -l ibc0 -r "$CG_RATE" \
		-n "$wn" -W 2000000 -M "$tmp/macs.txt" 10.0.0.1 >"$tmp/cg-warm.out" 2>&1
	wacks=$(received REQUEST-ACK "$tmp/cg-warm.out")
	if [ $(((wn - wacks) * 100)) -gt "$wn" ]; then
		say "   $1: the warm-up completed $wacks of $wn exchanges at $CG_RATE/s under callgrind: no count (lower BENCH_KEA_CALLGRIND_RATE)"
		return 1
	fi
	if [ "$2" -gt 0 ]; then
		timeout $(($2 / CG_RATE + 120)) ip netns exec "$NS_C" perfdhcp -4 -l ibc0 \
			-r "$CG_RATE" -n "$2" -W 2000000 -M "$tmp/macs.txt" 10.0.0.1 >"$tmp/cg.out" 2>&1
		acks=$(received REQUEST-ACK "$tmp/cg.out")
		# An exchange that perfdhcp gave up on was still worked on.
		cg_lost=$(($2 - acks))
	fi
	kill "$spid" 2>/dev/null
	for _ in $(seq 600); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$spid" 2>/dev/null
	spid=
	cg_i=$(cg_total "$out")
	cg_a=$acks
	if [ -n "${BENCH_KEA_CALLGRIND_DIR:-}" ]; then
		mkdir -p "$BENCH_KEA_CALLGRIND_DIR" && cp "$out" "$BENCH_KEA_CALLGRIND_DIR/" ||
			{ say "   cannot keep callgrind's file in $BENCH_KEA_CALLGRIND_DIR"; return 1; }
		[ "$2" = 0 ] || cp "$tmp/cg.out" "$BENCH_KEA_CALLGRIND_DIR/perfdhcp-$1-$2.txt" ||
			{ say "   cannot keep perfdhcp's output in $BENCH_KEA_CALLGRIND_DIR"; return 1; }
	fi
}

if [ -n "${BENCH_KEA_CALLGRIND:-}" ]; then
	CG_RATE=${BENCH_KEA_CALLGRIND_RATE:-40} cg_lost=0
	command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
	say "== instructions per DORA under callgrind: $BENCH_KEA_CALLGRIND exchanges after a warm-up of $((2 * N))"
	cg_res=
	for cfg in $CONFIGS; do
		cg_pass "$cfg" 0 || exit 1
		i0=$cg_i
		cg_pass "$cfg" "$BENCH_KEA_CALLGRIND" || exit 1
		i1=$cg_i a1=$cg_a
		if [ -z "$i0" ] || [ -z "$i1" ] || [ "${a1:-0}" -le 0 ]; then
			say "   $cfg: no count (callgrind or Kea failed)"
			exit 1
		fi
		if [ $((cg_lost * 100)) -gt "$BENCH_KEA_CALLGRIND" ]; then
			say "   $cfg: $cg_lost of $BENCH_KEA_CALLGRIND exchanges not completed at $CG_RATE/s under callgrind: no count (lower BENCH_KEA_CALLGRIND_RATE, or see perfdhcp's output)"
			exit 1
		fi
		per=$(((i1 - i0) / a1))
		say "   $cfg: $per instructions per DORA ($a1 DORAs; $i1 - $i0)"
		cg_res="$cg_res $per"
	done
	set -- $cg_res
	[ $# = 2 ] && awk -v a="$1" -v h="$2" 'BEGIN { printf "   hook / alone: x%.3f\n", h / a }'
	exit 0
fi

# ---- both at once, step by step (BENCH_KEA_PAIRED=K) ----

# use_cfg CFG: the namespaces, files and process of CFG's server, for the
# functions above. In paired mode each configuration has its own pair of
# namespaces (the same addresses in both), and both Keas run at once; the
# one not asked sleeps in select() and costs nothing.
use_cfg() {
	kdir=$tmp/run-$1
	cfg=$1
	if [ "$1" = kea+hook ]; then
		NS_S=$NS_S2 NS_C=$NS_C2 spid=$spid_h
	else
		NS_S=$NS_S1 NS_C=$NS_C1 spid=$spid_k
	fi
}

if [ -n "${BENCH_KEA_PAIRED:-}" ]; then
	[ -f "$HOOK" ] || { say "no hook library at $HOOK (build it: make)"; exit 1; }
	NS_S2=ibk$$-t NS_C2=ibk$$-d
	NS_S=$NS_S2 NS_C=$NS_C2 bench_net_up
	spid_k= spid_h=
	LAT_ROUNDS=${BENCH_KEA_LAT_ROUNDS:-6} LAT_SECONDS=${BENCH_KEA_LAT_SECONDS:-4}
	case $LAT_ROUNDS$LAT_SECONDS in *[!0-9]*) say "BENCH_KEA_LAT_ROUNDS and BENCH_KEA_LAT_SECONDS are counts"; exit 1 ;; esac
	[ "$LAT_ROUNDS" -ge 1 ] && [ "$LAT_SECONDS" -ge 1 ] || { say "BENCH_KEA_LAT_ROUNDS and BENCH_KEA_LAT_SECONDS must be at least 1"; exit 1; }
	LADDER=${BENCH_KEA_LADDER:-4000 4250 4500 4750 5000 5250 5500 5750 6000 6250 6500 6750 7000 7250 7500 7750 8000}
	OVER=${BENCH_KEA_OVERLOAD:-}
	[ -z "$OVER" ] || [ "$STEP" -ge 8 ] ||
		{ say "BENCH_KEA_OVERLOAD samples seconds 2 to 6 of each step: BENCH_KEA_SECONDS must be 8 or more"; exit 2; }
	if [ -n "$OVER" ]; then
		say "== paired: kea and kea+hook both running, each in its own namespaces on CPU $SCPU; $BENCH_KEA_PAIRED passes of one step of each at $OVER DORA/s asked, both saturated (the first of the two alternating)"
	else
		say "== paired: kea and kea+hook both running, each in its own namespaces on CPU $SCPU; $BENCH_KEA_PAIRED passes up a ladder of rates, the two taking turns at each rate (the first of the two alternating), a configuration leaving the ladder after two failed steps in a row"
	fi
	for c in kea kea+hook; do
		use_cfg "$c"
		say "-- $c: start and warm-up"
		start_server "$c" || exit 1
		if [ "$c" = kea ]; then spid_k=$spid; else spid_h=$spid; fi
		warm_up
	done
	CMP=${OVER:-0} lowest=$MAX_RATE # BENCH_KEA_PERF profiles the overload steps
	pres=
	cpu_pairs=
	for pass in $(seq "$BENCH_KEA_PAIRED"); do
		say "-- pass $pass of $BENCH_KEA_PAIRED"
		if [ -n "$OVER" ]; then
			order="kea kea+hook"
			[ $((pass % 2)) = 0 ] && order="kea+hook kea"
			for c in $order; do
				use_cfg "$c"
				tag=$(printf '%-9s' "$c")
				sample_sent "$tmp/sent.out" &
				sampler=$!
				taskset -cp "$CCPU" "$sampler" >/dev/null 2>&1 # off Kea's core
				run "$OVER"
				wait "$sampler"
				tag=
				read -r sent_s sent_us recv_s nak_s drop_s <"$tmp/sent.out"
				say "$(printf '   %-9s Kea sent %d OFFERs and ACKs a second from the 2nd to the 6th second, at %.1f us of CPU each (received %d/s, NAKs %d/s, dropped %d/s)' "$c" "$sent_s" "$sent_us" "$recv_s" "$nak_s" "$drop_s")"
				if [ "$c" = kea ]; then ack_k=$sent_s us_k=$sent_us; else ack_h=$sent_s us_h=$sent_us; fi
			done
			say "   pass $pass at $OVER DORA/s asked: kea $ack_k answers/s, kea+hook $ack_h answers/s"
			pres="$pres$ack_k $ack_h
"
			cpu_pairs="$cpu_pairs$OVER $us_k $us_h
"
			continue
		fi
		top_k=0 top_h=0 fail_k=0 fail_h=0 cap_k=0 cap_h=0 i=0
		for r in $LADDER; do
			i=$((i + 1))
			order="kea kea+hook"
			[ $(((i + pass) % 2)) = 0 ] && order="kea+hook kea"
			us_k= us_h=
			for c in $order; do
				use_cfg "$c"
				if [ "$c" = kea ]; then
					[ "$fail_k" -lt 2 ] && [ "$cap_k" = 0 ] || continue
				else
					[ "$fail_h" -lt 2 ] && [ "$cap_h" = 0 ] || continue
				fi
				tag=$(printf '%-9s' "$c")
				run "$r"
				tag=
				if [ "$c" = kea ]; then
					if [ "$ok" = 1 ]; then top_k=$r fail_k=0 us_k=$us; else fail_k=$((fail_k + 1)); fi
					[ "$capped" = 1 ] && cap_k=1
				else
					if [ "$ok" = 1 ]; then top_h=$r fail_h=0 us_h=$us; else fail_h=$((fail_h + 1)); fi
					[ "$capped" = 1 ] && cap_h=1
				fi
			done
			[ -n "$us_k" ] && [ -n "$us_h" ] && cpu_pairs="$cpu_pairs$r $us_k $us_h
"
			{ [ "$fail_k" -ge 2 ] || [ "$cap_k" = 1 ]; } && { [ "$fail_h" -ge 2 ] || [ "$cap_h" = 1 ]; } && break
		done
		say "   pass $pass: kea $top_k DORA/s, kea+hook $top_h DORA/s$([ "$cap_k$cap_h" = 00 ] || echo ' (perfdhcp could send no faster: a floor, not a max)')"
		pres="$pres$top_k $top_h
"
	done
	# (mawk has no asort)
	isort='function isort(a, n,  i, j, t) { for (i = 2; i <= n; i++) { t = a[i];
		for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }'
	latency_paired "$LAT_ROUNDS" "$LAT_SECONDS"
	use_cfg kea+hook
	[ -n "$NOOP" ] || hook_stats | grep -c '^ironbell.answers.applied [1-9]' >/dev/null ||
		say "WARNING: the hook applied no answer: this run measured Kea, not the hook"
	say ""
	say "== paired results: $N reservations, $STEP s steps, $BENCH_KEA_PAIRED passes"
	printf '%s' "$pres" | awk -v what="${OVER:+OFFERs and ACKs sent per second, saturated at $OVER DORA/s asked}" "$isort"'
		{ n++; r[n] = $1 ? $2 / $1 : 0; s += r[n]; printf "pass %d: %s: kea %d, kea+hook %d, x%.2f\n", n, what ? what : "max DORA/s <1%", $1, $2, r[n] }
		END { if (!n) exit; isort(r, n); m = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2;
			printf "rate hook / alone: mean x%.2f, median x%.2f, lowest x%.2f; >= 0.90: %s\n",
				s / n, m, r[1], (m >= 0.90 ? "holds (median)" : "MISSED (median)") }'
	printf '%s' "$cpu_pairs" | awk -v over="$OVER" "$isort"'
		{ n++; q[n] = $3 / $2; s += q[n]; rate[n] = $1 }
		END { if (!n) { print "no rate where both passed"; exit }
			isort(q, n); m = n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2;
			printf "kea-dhcp4 CPU per %s, hook / alone, at the same rate, %s (%d steps side by side): median x%.3f, mean x%.3f, from x%.3f to x%.3f\n",
				over ? "answer" : "DORA", over ? "both saturated" : "both passing", n, m, s / n, q[1], q[n] }'
	same_answers
	awk -v o="$pd_o" -v a="$pd_a" -v o5="$md_o" -v a5="$md_a" -v n="$LAT_ROUNDS" \
		-v hn="$ht_n" -v hm="${ht_mean:-}" -v h99="${ht_99:-}" -v h999="${ht_999:-}" 'BEGIN {
		printf "p50 at 1,000/s, hook - alone, median of %d rounds side by side: OFFER %+.3f ms, ACK %+.3f ms\n", n, o5, a5
		printf "p99 at 1,000/s, hook - alone, median of %d rounds side by side: OFFER %+.3f ms, ACK %+.3f ms; within +0.1 ms: %s\n",
			n, o, a, (o <= 0.1 + 1e-9 && a <= 0.1 + 1e-9 ? "holds" : "MISSED")
		if (hn > 0)
			printf "the hook'"'"'s own time per exchange at 1,000/s (%d exchanges): mean %s us, p99 <= %s us, p99.9 <= %s us; p99 within 100 us: %s\n",
				hn, hm, h99, h999, (h99 != "inf" && h99 + 0 <= 100 ? "holds" : "MISSED") }'
	# Both Keas stopped here, not killed by the cleanup (whose SIGKILL
	# bash would report as a job "Killed").
	stop_pid "$spid_k"
	stop_pid "$spid_h"
	spid=
	exit 0
fi

results=
failed=0
for round in $(seq "$ROUNDS"); do
order=$CONFIGS
# Every other round in the reverse order: the first run of a round meets
# a machine the second does not (the page cache, the core's last
# minutes), and neither configuration should always have it.
[ $((round % 2)) = 0 ] && order=$(printf '%s\n' $CONFIGS | tac | tr '\n' ' ')
for cfg in $order; do
	say "-- $cfg$([ "$ROUNDS" = 1 ] || echo ", round $round of $ROUNDS")"
	case $cfg in
	kea) ;;
	kea+hook)
		if [ ! -f "$HOOK" ]; then
			say "   skipped: no hook library at $HOOK (build it: make)"
			continue
		fi
		;;
	*)
		say "   unknown configuration $cfg (kea, kea+hook)"
		failed=1
		continue
		;;
	esac
	if ! start_server "$cfg"; then
		failed=1
		stop_server
		continue
	fi
	warm_up
	search
	latency
	if [ "$cfg" = kea+hook ] && [ -z "$NOOP" ]; then
		say "   the hook's statistics:"
		hook_stats | sed 's/^/     /'
		hook_stats | grep -c '^ironbell.answers.applied [1-9]' >/dev/null ||
			say "   WARNING: the hook applied no answer: this run measured Kea, not the hook"
	fi
	stop_server
	[ "$best" = 0 ] && best="<$lowest"
	results="$results$cfg $best $best_us $best_cpct $best_cus $best_ccpct $cmp_us $cmp_cus $op50/$op99 $ap50/$ap99 $good $client_bound $round $others
"
done
done
[ -n "$ipid" ] && stop_pid "$ipid"
ipid=

say ""
say "== kea results: $N reservations, $STEP s steps (kea-dhcp4 on CPU $SCPU, perfdhcp on CPU $CCPU)"
printf '%-11s %14s %15s %15s %12s %16s %16s %7s %11s  %s\n' config "max DORA/s <1%" \
	"kea us (CPU%)" "client us(CPU%)" "kea us@$CMP" "OFFER p50/p99 ms" "ACK p50/p99 ms" "others" \
	"leased" "bottleneck"
printf '%s' "$results" | while read -r c r u p cu cp k kc o a g cb rd ot; do
	[ -n "$c" ] || continue
	[ "$ROUNDS" = 1 ] || c="$c/$rd"
	case $cb in
	1) cb="perfdhcp (the client)" ;;
	2) cb="other work on kea-dhcp4's core" ;;
	*) cb="kea-dhcp4" ;;
	esac
	printf '%-11s %14s %15s %15s %12s %16s %16s %7s %11s  %s\n' "$c" "$r" "$u ($p%)" "$cu ($cp%)" \
		"$k" "$o" "$a" "$ot%" "$g/$N" "$cb"
done
say "(us: CPU time per completed DORA at the max rate, of kea-dhcp4 and of perfdhcp, and"
say " the share of one core each used; latency at 1,000 DORA/s on the server's interface;"
say " others: the share of kea-dhcp4's core that other processes took during that latency;"
say " leased: reservations in Kea's lease file with their reserved address after warm-up;"
say " bottleneck: at the lowest rate over 1% drops, whose core was full)"
same_answers
# The ratios hook / alone, each round on its own line, and against the
# targets; with several rounds, the mean of the rounds' ratios.
printf '%s' "$results" | awk -v cmp="$CMP" -v rounds="$ROUNDS" '
	{ atleast = sub(/^>=/, "", $2); sub(/^</, "", $2); n = $13 }
	$1 == "kea" { kr[n] = $2; ku[n] = $3; kc[n] = $7; split($9, o, "/"); ko[n] = o[2];
		split($10, o, "/"); ka[n] = o[2]; kb[n] = $12 ? $12 : atleast }
	$1 == "kea+hook" { hr[n] = $2; hu[n] = $3; hc[n] = $7; split($9, o, "/"); ho[n] = o[2];
		split($10, o, "/"); ha[n] = o[2]; hb[n] = $12 ? $12 : atleast }
	function verdict(rr, dof, dac, kb, hb, label) {
		printf "%srate x%.2f", label, rr;
		if (kb == 2 || hb == 2)
			printf "; rate >= 0.90: %s (other work on the server core limited %s: compare on a quiet machine)",
				(rr >= 0.90 ? "holds as measured" : "not shown"),
				(kb == 2 && hb == 2 ? "both runs" : kb == 2 ? "Kea alone" : "Kea with the hook");
		else if (kb || hb)
			printf "; rate >= 0.90: %s (the client was the bottleneck: %s)",
				(rr >= 0.90 ? "holds as far as measured" : "not shown"),
				(kb && hb ? "both runs" : kb ? "Kea alone" : "Kea with the hook");
		else
			printf "; rate >= 0.90: %s", (rr >= 0.90 ? "holds" : "MISSED");
		printf "; p99 at 1,000/s: OFFER %+.3f ms, ACK %+.3f ms, within +0.1 ms: %s\n", dof, dac,
			(dof <= 0.1 + 1e-9 && dac <= 0.1 + 1e-9 ? "holds" : "MISSED");
	}
	END {
		for (i = 1; i <= rounds; i++) {
			if (!(kr[i] && hr[i]))
				continue;
			m++;
			rr = hr[i] / kr[i]; srr += rr;
			dof = ho[i] - ko[i]; sdo += dof;
			dac = ha[i] - ka[i]; sda += dac;
			if (kb[i]) akb = kb[i];
			if (hb[i]) ahb = hb[i];
			printf "hook / alone%s: kea-dhcp4 CPU per DORA at the max x%.2f",
				(rounds > 1 ? ", round " i : ""), (ku[i] ? hu[i] / ku[i] : 0);
			if (kc[i] + 0 && hc[i] + 0)
				printf ", at %s DORA/s x%.2f", cmp, hc[i] / kc[i];
			printf "\n";
			verdict(rr, dof, dac, kb[i], hb[i], "  ");
		}
		if (m > 1)
			verdict(srr / m, sdo / m, sda / m, akb, ahb, "mean of " m " rounds: ");
	}'
exit "$failed"
