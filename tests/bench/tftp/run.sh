#!/usr/bin/env bash
# tests/bench/tftp/run.sh — TFTP transfer times: ironbelld against
# tftpd-hpa and atftpd, serving the same ipxe.efi in the same run. Never
# part of make check: it prints figures and asserts nothing about time.
# Needs root (network namespaces).
#
# The server namespace reaches two client namespaces: one over a veth
# (no added delay) and one through tests/delayline with BENCH_TFTP_DELAY_MS
# each way (1 ms: a 2 ms round trip; this kernel has no netem). Every
# server in turn listens on port 69 there. The client is atftp (the one
# TFTP client here that can ask for windowsize), with blksize 1428 and
# windowsize 1, 8 and 16 (tftpd-hpa does not negotiate windowsize and
# runs each at 1: that is its real speed). For each server, path and
# window: one client alone (the median of BENCH_TFTP_REPS runs, default
# 5), and 50 clients at once (the time until the last one is done). atftpd
# conflicts with tftpd-hpa, so it is unpacked from its Debian package
# (tools/deb-fetch), never installed.
set -euo pipefail

: "${top_builddir:?}" "${top_srcdir:?}"
REPS=${BENCH_TFTP_REPS:-5}
DELAY=${BENCH_TFTP_DELAY_MS:-1}
CONC=${BENCH_TFTP_CONCURRENT:-50}
b=$top_builddir

say() { printf '%s\n' "$*"; }
[ "$(id -u)" = 0 ] || { say "bench-tftp: needs root (network namespaces): skipped"; exit 0; }
for p in atftp ip; do
	command -v $p >/dev/null 2>&1 || { say "bench-tftp: $p is not installed: skipped"; exit 0; }
done
[ -x /usr/sbin/in.tftpd ] || { say "bench-tftp: tftpd-hpa is not installed: skipped"; exit 0; }
[ -f /usr/lib/ipxe/ipxe.efi ] || { say "bench-tftp: the ipxe package is not installed: skipped"; exit 0; }

tmp=$(mktemp -d /tmp/ib-bench-tftp.XXXXXX)
chmod 755 "$tmp"
NS_S=ibbt$$-s
NS_C=ibbt$$-c
NS_D=ibbt$$-d
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	sleep 0.3
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	for n in $NS_S $NS_C $NS_D; do ip netns del "$n" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

ATFTPD=$("$top_srcdir/tools/deb-fetch" atftpd "$b/tests/cache/atftpd")/usr/sbin/atftpd
root=$tmp/root
mkdir -p "$root"
chmod 777 "$root" # atftpd wants a world-writable directory
cp /usr/lib/ipxe/ipxe.efi "$root/ipxe.efi"
chmod 644 "$root/ipxe.efi"
size=$(wc -c <"$root/ipxe.efi")

for n in $NS_S $NS_C $NS_D; do
	ip netns add "$n"
	ip -n "$n" link set lo up
done
ip link add e0 netns "$NS_S" type veth peer name e1 netns "$NS_C"
ip -n "$NS_S" addr add 10.70.0.1/24 dev e0
ip -n "$NS_C" addr add 10.70.0.2/24 dev e1
ip -n "$NS_S" link set e0 up
ip -n "$NS_C" link set e1 up
"$b/tests/delayline" -d "$DELAY" ibbta$$ ibbtb$$ >"$tmp/dl.out" 2>"$tmp/dl.err" &
pids="$pids $!"
for _ in $(seq 50); do grep -q ready "$tmp/dl.out" && break; sleep 0.1; done
ip link set ibbta$$ netns "$NS_S"
ip link set ibbtb$$ netns "$NS_D"
ip -n "$NS_S" addr add 10.71.0.1/24 dev ibbta$$
ip -n "$NS_D" addr add 10.71.0.2/24 dev ibbtb$$
ip -n "$NS_S" link set ibbta$$ up
ip -n "$NS_D" link set ibbtb$$ up

cat >"$tmp/ironbell.yaml" <<EOF
log_level: warn
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: 127.0.0.1:$((20000 + $$ % 20000))
tftp:
  enabled: true
  listen: 0.0.0.0:69
  windowsize_max: 64
  max_transfers: 1000
ipxe:
  binary_dir: $root
EOF
mkdir -p "$tmp/state"

start_server() {
	case $1 in
	ironbelld)
		ip netns exec "$NS_S" "$b/ironbelld" --config "$tmp/ironbell.yaml" 2>"$tmp/ironbelld.log" &
		;;
	tftpd-hpa)
		ip netns exec "$NS_S" /usr/sbin/in.tftpd -L -u root -s "$root" -a 0.0.0.0:69 \
			2>"$tmp/tftpd-hpa.log" &
		;;
	atftpd)
		ip netns exec "$NS_S" "$ATFTPD" --daemon --no-fork --user root.root --port 69 \
			--maxthread 1000 --logfile "$tmp/atftpd.log" "$root" &
		;;
	esac
	spid=$!
	pids="$pids $spid"
	for _ in $(seq 100); do
		kill -0 "$spid" 2>/dev/null || break
		ip netns exec "$NS_C" timeout 5 atftp -g -r ipxe.efi -l "$tmp/probe" 10.70.0.1 \
			>/dev/null 2>&1 && cmp -s "$tmp/probe" "$root/ipxe.efi" && return 0
		sleep 0.1
	done
	say "bench-tftp: $1 does not serve; its log:"
	tail -n 5 "$tmp/$1.log" 2>/dev/null
	return 1
}

# fetch NS ADDR WINDOW OUT: one atftp transfer; 0 when the bytes are right.
fetch() {
	local opts=(--option "blksize 1428")
	[ "$3" -gt 1 ] && opts+=(--option "windowsize $3")
	ip netns exec "$1" timeout 300 atftp "${opts[@]}" -g -r ipxe.efi -l "$4" "$2" >/dev/null 2>&1 &&
		cmp -s "$4" "$root/ipxe.efi"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# one NS ADDR WINDOW: the median single-client time in ms ("fail" if any
# transfer came back wrong).
one() {
	local t=() i t0
	for i in $(seq "$REPS"); do
		t0=$(now_ms)
		fetch "$1" "$2" "$3" "$tmp/one" || { echo fail; return; }
		t+=($(($(now_ms) - t0)))
	done
	printf '%s\n' "${t[@]}" | sort -n | sed -n "$(((REPS + 1) / 2))p"
}

# many NS ADDR WINDOW: CONC clients at once; ms until the last is done.
many() {
	local i t0 bad=0 ps=()
	t0=$(now_ms)
	for i in $(seq "$CONC"); do
		fetch "$1" "$2" "$3" "$tmp/many.$i" &
		ps+=($!)
	done
	for p in "${ps[@]}"; do wait "$p" || bad=1; done
	[ "$bad" = 0 ] && echo $(($(now_ms) - t0)) || echo fail
}

results=$tmp/results
: >"$results"
say "== tftp: ipxe.efi ($size bytes), blksize 1428, atftp; round trip ~0 (veth) and $((2 * DELAY)) ms (delay line); single: median of $REPS; $CONC at once: until the last is done"
for server in ironbelld tftpd-hpa atftpd; do
	start_server "$server" || continue
	for path in veth delay; do
		if [ "$path" = veth ]; then ns=$NS_C addr=10.70.0.1; else ns=$NS_D addr=10.71.0.1; fi
		for w in 1 8 16; do
			s1=$(one "$ns" "$addr" "$w")
			sN=$(many "$ns" "$addr" "$w")
			printf '%-10s %-6s window %-3s single %6s ms   %d at once %7s ms\n' "$server" "$path" \
				"$w" "$s1" "$CONC" "$sN"
			echo "$server $path $w $s1 $sN" >>"$results"
		done
	done
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	sleep 0.3
done

say ""
say "== ratios (time of the peer / time of ironbelld: above 1, ironbelld is faster)"
awk '
{ t[$1 " " $2 " " $3 " 1"] = $4; t[$1 " " $2 " " $3 " N"] = $5 }
function r(a, b) { return (a == "fail" || b == "fail" || b == 0) ? "-" : sprintf("x%.2f", a / b) }
END {
	split("veth delay", P, " ");
	split("1 8 16", W, " ");
	for (p = 1; p <= 2; p++)
		for (w = 1; w <= 3; w++)
			for (c = 0; c < 2; c++) {
				k = P[p] " " W[w] " " (c ? "N" : "1");
				printf "%-6s window %-3s %-7s vs tftpd-hpa %-7s vs atftpd %s\n", P[p], W[w],
					c ? "many" : "single", r(t["tftpd-hpa " k], t["ironbelld " k]),
					r(t["atftpd " k], t["ironbelld " k]);
			}
}' "$results"
