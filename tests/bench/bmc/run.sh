#!/usr/bin/env bash
# tests/bench/bmc/run.sh — BMC control: ironbell's engines and ironbelld
# against Rufio's way of doing the same work, in the same run, on
# simulated BMCs on 127.0.0.1 (no traffic leaves the loopback). Never part
# of make check: it prints figures and asserts nothing about time.
#
# The BMCs: BENCH_BMC_IPMI (100) ipmi_sim instances (package openipmi),
# each its own process on its own UDP port, configured as
# tests/integration/bmc/ipmisim.sh does (lan.conf, bmc.emu, the
# chassis_control.sh hook), started all at once and then waited for, a few
# probes at a time; and BENCH_BMC_REDFISH (1000) Redfish BMCs over TLS
# (a self-signed certificate that curl and bmc-call verify; the daemon's
# Machines say insecureTLS, as Rufio's Machines mostly do), served by
# tests/redfish/redfish_emu.py split into BENCH_BMC_RF_PROCS (4)
# processes of as many ports each, so that one Python process and its
# one core at a time are not what is measured. The first BENCH_BMC_NETBOOT (30) IPMI BMCs take
# the netboot jobs.
#
# The work, each done Rufio's way and ironbell's way:
#   netboot  a Rufio Job per BMC: power off, power status until off,
#            bootdev pxe (one time, legacy), power on, power status until
#            on. Rufio's way: one "ipmitool -I lanplus -C 3" process per
#            command, the commands of a job one after another, jobs at
#            concurrency 1 and BENCH_BMC_CONC (10) (xargs -P). Rufio waits
#            3 s between its checks of the power state; here a check
#            follows at once, which is generous to it (the simulated
#            power changes at once, so one check each way is enough).
#   status   the power state of every BMC, once: for IPMI one "ipmitool
#            power status" process per BMC; for Redfish one small shell
#            per BMC running three curl processes (the session login POST,
#            GET of the system, DELETE of the session: curl 7.88 cannot
#            carry the token from one request to the next in one process;
#            Rufio's Go client makes five requests over one connection, so
#            this is two TLS handshakes more and two requests fewer per
#            BMC than Rufio; redfishtool, a Python start per call, would
#            be slower). Concurrency 1 runs all the IPMI BMCs and the
#            first BENCH_BMC_SAMPLE (100) Redfish ones, and extrapolates
#            the Redfish part to all of them (marked "*"), so the run
#            stays within minutes; concurrency 10 runs them all.
# ironbell's way:
#   bmc-call (tests/bmc), the engines without the daemon, one thread: the
#   same five calls per netboot job on every BMC at once; and one
#   power-status call per BMC, the IPMI and the Redfish engine in two
#   processes at the same time;
#   ironbelld with a fresh state: the 30 Secrets and Machines, then 30
#   Jobs (off, one-time PXE, on), timed from their apply until all are
#   Completed (and again with bmc.verify_interval 100, as
#   "ironbelld-100ms", when the daemon has that key: it checks a power
#   change after 1 s by default, where Rufio's way here checks at once);
#   then, in another fresh daemon, 1,100 Secrets, then 1,100
#   Machines, timed from their apply until every Machine has a
#   status.powerState (the poll that follows a Machine's creation), with
#   the daemon's CPU and peak RSS (VmHWM). The waiting is wait.py's.
#
# Each line says wall time, the client's CPU (user + system, with its
# children: /usr/bin/time; for ironbelld, the daemon's from /proc), the
# simulated BMCs' CPU as "IPMI/Redfish" (every ipmi_sim with its hook's
# children / every emulator process: /proc/PID/stat), the busiest
# emulator process's CPU as a share of one core over the step (near 100%:
# the emulator, not the client, was the limit) and the client's peak RSS
# (of its largest process for Rufio's way; VmHWM for ironbelld). When an engine or the
# daemon's BMC control does not work, its lines say FAILED and why, the
# baseline still runs, and the script exits 1.
#
# BENCH_BMC_PARTS chooses the parts to run ("rufio engines daemon", the
# default: all); BENCH_BMC_RF_CONNS, when set, is the polling daemon's
# bmc.redfish.max_connections and bmc-call's --max-connections (unset:
# their default); BENCH_BMC_PIN, as "C/B" (e.g. "0/1"), pins every client
# (Rufio's way, bmc-call, ironbelld) to CPU list C and every simulated
# BMC to CPU list B with taskset, so that the client's time is not the
# simulators' (unset: no pinning); BENCH_BMC_TIMEOUT (60) bounds each
# wait on the daemon, in
# seconds (10 once a daemon has given no Machine a power state in 20 s:
# its BMC control does not work, and the rest would only wait).
#
# Needs ipmi_sim, ipmitool, curl, openssl, /usr/bin/time, /usr/bin/python3
# and the built ironbelld, ironbell and tests/bmc/bmc-call; without them
# it says why and exits 0. No root needed. Every wait is bounded; the EXIT
# trap stops every process it started.
set -u

b=${top_builddir:-.}
src=${top_srcdir:-$(cd "$(dirname "$0")/../../.." && pwd)}
NB=${BENCH_BMC_NETBOOT:-30}
NI=${BENCH_BMC_IPMI:-100}
NR=${BENCH_BMC_REDFISH:-1000}
RFP=${BENCH_BMC_RF_PROCS:-4}
SAMPLE=${BENCH_BMC_SAMPLE:-100}
CONC=${BENCH_BMC_CONC:-10}
WAIT=${BENCH_BMC_TIMEOUT:-60}
CONNS=${BENCH_BMC_RF_CONNS:-}
PIN=${BENCH_BMC_PIN:-}
PARTS=${BENCH_BMC_PARTS:-rufio engines daemon}
PY=/usr/bin/python3
HZ=$(getconf CLK_TCK)

say() { printf '%s\n' "$*"; }
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
skip() {
	say "== bmc benchmark skipped: $*"
	exit 0
}
for t in ipmi_sim ipmitool curl openssl xargs; do
	command -v "$t" >/dev/null 2>&1 || skip "$t is not installed"
done
[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed (package time)"
[ -x "$PY" ] || skip "$PY is not installed"
for f in ironbelld ironbell tests/bmc/bmc-call; do
	[ -x "$b/$f" ] || skip "build $f first"
done
[ "$NB" -le "$NI" ] && [ "$SAMPLE" -le "$NR" ] && [ $((NR % RFP)) = 0 ] ||
	skip "BENCH_BMC_NETBOOT <= BENCH_BMC_IPMI, BENCH_BMC_SAMPLE <= BENCH_BMC_REDFISH, and BENCH_BMC_RF_PROCS dividing it"

pin_c=()
pin_b=()
if [ -n "$PIN" ]; then
	command -v taskset >/dev/null 2>&1 || skip "BENCH_BMC_PIN needs taskset"
	pin_c=(taskset -c "${PIN%%/*}")
	pin_b=(taskset -c "${PIN#*/}")
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ironbell-bench-bmc.XXXXXX") || exit 1
sims=
emus=
dpid=
cleanup() {
	local p
	for p in $dpid $emus $sims; do kill "$p" 2>/dev/null; done
	for _ in $(seq 30); do
		for p in $dpid $emus $sims; do kill -0 "$p" 2>/dev/null && break; p=; done
		[ -z "$p" ] && break
		sleep 0.1
	done
	for p in $dpid $emus $sims; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

BMC_USER='admin'
BMC_PASS=bench-$$-pw
printf '%s\n' "$BMC_PASS" >"$tmp/password"
printf '{"UserName": "%s", "Password": "%s"}' "$BMC_USER" "$BMC_PASS" >"$tmp/login.json"
CERT=$tmp/cert.pem
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/key.pem" -out "$CERT" -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 >"$tmp/openssl.log" 2>&1 ||
	skip "openssl cannot make a certificate"

now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
# ticks PID...: CPU ticks of the processes with their waited-for children.
ticks() {
	local t=0 p v
	for p in "$@"; do
		v=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null) || v=0
		t=$((t + ${v:-0}))
	done
	echo "$t"
}
tsec() { awk -v t="$1" -v hz="$HZ" 'BEGIN { printf "%.2f", t / hz }'; }

# ---- ports: a block below the ephemeral range with nothing listening ----

# IPMI on UDP BASE..BASE+NI-1, Redfish on TCP BASE+NI..BASE+NI+NR-1.
pick_base() {
	local base i used
	used=$(ss -Htuln 2>/dev/null | awk '{ n = split($5, a, ":"); print a[n] }')
	for i in $(seq 0 15); do
		base=$((12000 + (($$ + i) % 16) * 1250))
		awk -v lo="$base" -v hi="$((base + NI + NR))" '$1 >= lo && $1 < hi { f = 1 }
			END { exit f }' <<<"$used" && { echo "$base"; return 0; }
	done
	return 1
}
BASE=$(pick_base) || skip "no free block of $((NI + NR)) ports below 32000"
IP0=$BASE
IP1=$((BASE + NI - 1))
RF0=$((BASE + NI))
RF1=$((BASE + NI + NR - 1))

# ---- the simulated BMCs ----

sim_src=$(cd "$src/tests/integration/bmc" && pwd)
sed_esc() { printf '%s\n' "$1" | sed -e 's/[\\|&]/\\&/g'; }
ipmi_one() { # ipmi_one PORT ARGS...: one ipmitool process, as Rufio runs it
	timeout -k 2 30 ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "$1" -U "$BMC_USER" \
		-f "$tmp/password" "${@:2}"
}
export -f ipmi_one
export BMC_USER tmp CERT

t0=$(now_ns)
for p in $(seq "$IP0" "$IP1"); do
	d=$tmp/ipmisim.$p
	mkdir -p "$d/state"
	sed -e "s|@PORT@|$p|" -e "s|@USER@|$(sed_esc "$BMC_USER")|" \
		-e "s|@PASS@|$(sed_esc "$BMC_PASS")|" \
		-e "s|@HOOK@|$(sed_esc "/bin/sh $sim_src/chassis_control.sh $d/chassis")|" \
		"$sim_src/lan.conf" >"$d/lan.conf"
	"${pin_b[@]}" ipmi_sim -n -p -c "$d/lan.conf" -f "$sim_src/bmc.emu" -s "$d/state" \
		>"$d/sim.log" 2>&1 </dev/null &
	sims="$sims $!"
done
# Each answers an mc info (a session, no hook) within 10 tries.
seq "$IP0" "$IP1" | xargs -P 8 -I{} bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do
	ipmi_one {} -N 1 -R 1 mc info >/dev/null 2>&1 && exit 0; sleep 0.2; done
	echo "ipmi_sim on port {} does not answer"; exit 1' >"$tmp/simstart.out"
t1=$(now_ns)
if [ -s "$tmp/simstart.out" ]; then
	head -n 3 "$tmp/simstart.out"
	tail -n 5 "$tmp/ipmisim.$IP0/sim.log"
	say "== bmc benchmark: the simulated IPMI BMCs do not all start"
	exit 1
fi
sim_kb=$(for p in $sims; do awk '/^VmRSS/ { print $2 }' "/proc/$p/status"; done |
	awk '{ s += $1 } END { print int(s / NR) }')
say "== $NI ipmi_sim on 127.0.0.1 UDP $IP0-$IP1: all answering in $(secs "$t0" "$t1") s, ${sim_kb} KiB RSS each"

t0=$(now_ns)
per=$((NR / RFP))
for i in $(seq 0 $((RFP - 1))); do
	"${pin_b[@]}" "$PY" "$src/tests/redfish/redfish_emu.py" \
		--cert "$CERT" --key "$tmp/key.pem" --user "$BMC_USER" --password "$BMC_PASS" \
		--bmcs "$per" --port $((RF0 + i * per)) --port-file "$tmp/emu.$i.ports" \
		>"$tmp/emu.$i.log" 2>&1 </dev/null &
	emus="$emus $!"
done
for _ in $(seq 150); do
	n=$(cat "$tmp"/emu.*.ports 2>/dev/null | wc -l)
	[ "$n" = "$NR" ] && break
	sleep 0.1
done
t1=$(now_ns)
if [ "$n" != "$NR" ]; then
	tail -n 5 "$tmp"/emu.*.log
	say "== bmc benchmark: the Redfish emulators do not all listen ($n of $NR ports)"
	exit 1
fi
emu_kb=$(for p in $emus; do awk '/^VmRSS/ { print $2 }' "/proc/$p/status"; done |
	awk '{ s += $1 } END { print s }')
say "== $NR Redfish BMCs (TLS) on 127.0.0.1 TCP $RF0-$RF1 in $RFP emulator processes: listening in $(secs "$t0" "$t1") s, $((emu_kb / 1024)) MiB RSS in all"

[ -z "$PIN" ] || say "== pinned: the clients to CPU ${PIN%%/*}, the simulated BMCs to CPU ${PIN#*/}"

# ---- measuring ----

# The results, one line each: WORK WAY CONC WALL CLIENT_CPU SERVER_CPU
# BUSIEST_EMU_PCT RSS_KB NOTE (FAILED lines: WORK WAY CONC FAILED REASON).
results=$tmp/results
: >"$results"
failed=0
# server_ticks: "SIMS EMUS", the ticks of the ipmi_sims and of the Redfish
# emulators; srv_secs BEFORE AFTER: the seconds between, "SIMS/EMUS".
server_ticks() { echo "$(ticks $sims) $(ticks $emus)"; }
srv_secs() {
	awk -v a="$1" -v b="$2" -v hz="$HZ" 'BEGIN { split(a, x, " "); split(b, y, " ");
		printf "%.2f/%.2f", (y[1] - x[1]) / hz, (y[2] - x[2]) / hz }'
}
# emu_mark: the emulators' ticks now, one a line; busiest SINCE_FILE WALL:
# the largest share of one core an emulator took since.
emu_mark() { for p in $emus; do ticks "$p"; done; }
busiest() {
	emu_mark | paste "$1" - | awk -v w="$2" -v hz="$HZ" '{ d = ($2 - $1) / hz; if (d > m) m = d }
		END { printf "%d", (w > 0) ? 100 * m / w : 0 }'
}
record() { printf '%s\n' "$*" >>"$results"; }
fail() {
	record "$1 $2 $3 FAILED ${*:4}"
	say "   FAILED: ${*:4}"
	failed=1
}

# measure COMMAND...: runs COMMAND under /usr/bin/time and sets m_wall,
# m_cpu (its user + system with its children), m_srv (the BMCs' CPU,
# "IPMI/Redfish"), m_emu and m_rss (KiB); its output in $tmp/out and
# $tmp/err. Returns COMMAND's status. keep WORK WAY CONC records those
# figures.
measure() {
	local st s0 t0 t1 s1 wall u sy m
	emu_mark >"$tmp/emu0"
	s0=$(server_ticks)
	t0=$(now_ns)
	"${pin_c[@]}" /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	t1=$(now_ns)
	s1=$(server_ticks)
	wall=$(secs "$t0" "$t1")
	# The last line: before it, time says when the command failed.
	read -r u sy m < <(tail -n 1 "$tmp/time") || { u=0 sy=0 m=0; }
	m_wall=$wall m_cpu=$(awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.2f", u + s }')
	m_srv=$(srv_secs "$s0" "$s1") m_emu=$(busiest "$tmp/emu0" "$wall") m_rss=$m
	return "$st"
}
keep() { record "$1 $2 $3 $m_wall $m_cpu $m_srv $m_emu $m_rss -"; }

# ---- Rufio's way ----

rufio_netboot() { # PORT: one job; prints the number of ipmitool calls
	local p=$1 n=0 want out i
	for step in off pxe on; do
		if [ "$step" = pxe ]; then
			ipmi_one "$p" chassis bootdev pxe >/dev/null || return 1
			n=$((n + 1))
			continue
		fi
		ipmi_one "$p" chassis power "$step" >/dev/null || return 1
		n=$((n + 1))
		want=$step
		for i in $(seq 20); do
			out=$(ipmi_one "$p" chassis power status) || return 1
			n=$((n + 1))
			[ "$out" = "Chassis Power is $want" ] && break
			[ "$i" = 20 ] && return 1
		done
	done
	echo "$n"
}
rufio_status() { # KIND PORT: one BMC's power state
	if [ "$1" = i ]; then
		ipmi_one "$2" chassis power status | grep -q '^Chassis Power is \(on\|off\)$'
		return
	fi
	local u=https://127.0.0.1:$2 h line tok='' loc='' body
	h=$(curl -sS --max-time 10 --cacert "$CERT" -D - -o /dev/null \
		-H 'Content-Type: application/json' --data "@$tmp/login.json" \
		"$u/redfish/v1/SessionService/Sessions") || return 1
	while IFS= read -r line; do
		line=${line%$'\r'}
		case ${line,,} in
		x-auth-token:*) tok=${line#*: } ;;
		location:*) loc=${line#*: } ;;
		esac
	done <<<"$h"
	body=$(curl -sS --max-time 10 --cacert "$CERT" -H "X-Auth-Token: $tok" \
		"$u/redfish/v1/Systems/1") || return 1
	curl -sS --max-time 10 --cacert "$CERT" -o /dev/null -X DELETE -H "X-Auth-Token: $tok" \
		"$u$loc" || return 1
	[[ $body == *'"PowerState": "O'[nf]* ]]
}
export -f rufio_netboot rufio_status

if want rufio; then
	say ""
	say "== Rufio's way: one ipmitool -I lanplus -C 3 process per command, curl for Redfish"
	for c in 1 "$CONC"; do
		if measure bash -c "seq $IP0 $((IP0 + NB - 1)) |
			xargs -P $c -I{} bash -c 'rufio_netboot {} || echo fail'"; then
			calls=$(awk '$1 ~ /^[0-9]+$/ { s += $1 } END { print s }' "$tmp/out")
			grep -q fail "$tmp/out" && { fail netboot rufio "$c" "$(grep -c fail "$tmp/out") jobs failed"; continue; }
			keep netboot rufio "$c"
			say "   $NB netboot jobs, concurrency $c: $m_wall s, $calls ipmitool processes, client CPU $m_cpu s, BMCs' CPU $m_srv s"
		else
			fail netboot rufio "$c" "xargs failed: $(head -c 200 "$tmp/err")"
		fi
	done

	{
		for p in $(seq "$IP0" "$IP1"); do echo "i $p"; done
		for p in $(seq "$RF0" "$RF1"); do echo "r $p"; done
	} >"$tmp/all.list"
	# Concurrency 1: all the IPMI BMCs and SAMPLE Redfish ones, the Redfish
	# part scaled to NR (the IPMI part measured apart, so that only the
	# Redfish part is extrapolated).
	if measure bash -c "grep '^i' $tmp/all.list | xargs -n 2 bash -c 'rufio_status \$0 \$1 || echo fail'" &&
		! grep -q fail "$tmp/out"; then
		read -r iw ic is im <<<"$m_wall $m_cpu $m_srv $m_rss"
		if measure bash -c "grep '^r' $tmp/all.list | head -n $SAMPLE | xargs -n 2 bash -c 'rufio_status \$0 \$1 || echo fail'" &&
			! grep -q fail "$tmp/out"; then
			k=$(awk -v n="$NR" -v s="$SAMPLE" 'BEGIN { print n / s }')
			ext=$(awk -v iw="$iw" -v ic="$ic" -v is="$is" -v rw="$m_wall" -v rc="$m_cpu" \
				-v rs="$m_srv" -v k="$k" 'BEGIN { split(is, a, "/"); split(rs, b, "/");
				printf "%.2f %.2f %.2f/%.2f", iw + k * rw, ic + k * rc, a[1] + k * b[1], a[2] + k * b[2] }')
			read -r ew ec es <<<"$ext"
			[ "$SAMPLE" = "$NR" ] && x= || x='*'
			record "status rufio 1 $ew$x $ec$x $es$x $m_emu $((im > m_rss ? im : m_rss)) -"
			say "   power status, concurrency 1: $NI IPMI in $iw s, the first $SAMPLE Redfish in $m_wall s; all $((NI + NR)): $ew s$x"
		else
			fail status rufio 1 "curl to the Redfish emulator failed: $(grep -m1 -v '^$' "$tmp/err")"
		fi
	else
		fail status rufio 1 "ipmitool power status failed: $(grep -m1 -v '^$' "$tmp/err")"
	fi
	if measure bash -c "xargs -P $CONC -n 2 bash -c 'rufio_status \$0 \$1 || echo fail' <$tmp/all.list" &&
		! grep -q fail "$tmp/out"; then
		keep status rufio "$CONC"
		say "   power status, concurrency $CONC: all $((NI + NR)) in $m_wall s, client CPU $m_cpu s, BMCs' CPU $m_srv s"
	else
		fail status rufio "$CONC" "$(grep -c fail "$tmp/out") BMCs failed: $(grep -m1 -v '^$' "$tmp/err")"
	fi
fi

# ---- ironbell's engines: bmc-call ----

if want engines; then
	say ""
	say "== ironbell's engines without the daemon (tests/bmc/bmc-call, one thread per engine)"
	call() { "$b/tests/bmc/bmc-call" --user "$BMC_USER" --password-file "$tmp/password" --summary "$@"; }
	# engine_error FILE: why bmc-call failed, in a line.
	engine_error() {
		{ grep -m1 . "$tmp/err"; grep -m1 'fail=' "$tmp/out"; tail -n 1 "$tmp/out"; } | head -n 1
	}
	if measure "$b/tests/bmc/bmc-call" --provider ipmitool --cipher 3 \
		--user "$BMC_USER" --password-file "$tmp/password" --summary --port "$IP0-$((IP0 + NB - 1))" \
		power off + power-status + bootdev pxe + power on + power-status; then
		keep netboot bmc-call "$NB"
		say "   $NB netboot jobs (5 calls each) at once: $m_wall s, client CPU $m_cpu s, RSS $((m_rss / 1024)) MiB; $(tail -n 1 "$tmp/out")"
	else
		fail netboot bmc-call "$NB" "$(engine_error)"
	fi
	# The poll: both engines at once, as the daemon runs them.
	poll_engines() {
		call --provider ipmitool --cipher 3 --port "$IP0-$IP1" power-status >"$tmp/poll.ipmi" 2>&1 &
		local a=$!
		call --provider redfish --ca-file "$CERT" ${CONNS:+--max-connections "$CONNS"} \
			--port "$RF0-$RF1" power-status >"$tmp/poll.rf" 2>&1
		local r=$?
		wait "$a" && return "$r"
	}
	export -f call poll_engines
	export b IP0 IP1 RF0 RF1 CONNS
	if measure bash -c poll_engines; then
		keep status bmc-call all
		say "   power status of $((NI + NR)) at once: $m_wall s, client CPU $m_cpu s, peak RSS $((m_rss / 1024)) MiB"
		say "   ipmi: $(tail -n 1 "$tmp/poll.ipmi")"
		say "   redfish: $(tail -n 1 "$tmp/poll.rf")"
	else
		fail status bmc-call all "ipmi: $(grep -m1 -e 'fail=' -e 'bmc-call:' "$tmp/poll.ipmi"); redfish: $(grep -m1 -e 'fail=' -e 'bmc-call:' "$tmp/poll.rf")"
	fi
fi

# ---- ironbelld ----

# objects FILE KIND FIRST COUNT PROVIDER: Secrets (KIND secret) or
# Machines (KIND machine) bmc-NAME for BMCs FIRST... on 127.0.0.1.
objects() {
	local f=$1 kind=$2 first=$3 n=$4 prov=$5 p
	: >"$f"
	for p in $(seq "$first" $((first + n - 1))); do
		if [ "$kind" = secret ]; then
			printf -- '---\napiVersion: v1\nkind: Secret\nmetadata: {name: bmc-%s, namespace: default}\ntype: Opaque\nstringData: {username: %s, password: "%s"}\n' \
				"$p" "$BMC_USER" "$BMC_PASS"
		elif [ "$prov" = ipmitool ]; then
			printf -- '---\napiVersion: bmc.tinkerbell.org/v1alpha1\nkind: Machine\nmetadata: {name: bmc-%s, namespace: default}\nspec:\n  connection:\n    host: 127.0.0.1\n    port: %s\n    authSecretRef: {name: bmc-%s, namespace: default}\n    insecureTLS: true\n    providerOptions:\n      preferredOrder: [ipmitool]\n      ipmitool: {cipherSuite: "3"}\n' \
				"$p" "$p" "$p"
		else
			printf -- '---\napiVersion: bmc.tinkerbell.org/v1alpha1\nkind: Machine\nmetadata: {name: bmc-%s, namespace: default}\nspec:\n  connection:\n    host: 127.0.0.1\n    authSecretRef: {name: bmc-%s, namespace: default}\n    insecureTLS: true\n    providerOptions:\n      preferredOrder: [gofish]\n      redfish: {port: %s}\n' \
				"$p" "$p" "$p"
		fi
	done >>"$f"
}
jobs_yaml() { # FILE FIRST COUNT: a netboot Job per Machine
	local p
	for p in $(seq "$2" $(($2 + $3 - 1))); do
		printf -- '---\napiVersion: bmc.tinkerbell.org/v1alpha1\nkind: Job\nmetadata: {name: netboot-%s, namespace: default}\nspec:\n  machineRef: {name: bmc-%s, namespace: default}\n  tasks:\n    - powerAction: "off"\n    - oneTimeBootDeviceAction: {device: [pxe], efiBoot: false}\n    - powerAction: "on"\n' \
			"$p" "$p"
	done >"$1"
}

http_port=$("$PY" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/ironbell.yaml" <<EOF
log_level: warn
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: 127.0.0.1:$http_port
EOF
export IRONBELL_SOCKET=$tmp/api.sock
ib() { "$b/ironbell" "$@"; }

start_daemon() { # [CONFIG]
	rm -rf "$tmp/state" "$tmp/api.sock"
	"${pin_c[@]}" "$b/ironbelld" --config "${1:-$tmp/ironbell.yaml}" 2>"$tmp/ironbelld.log" &
	dpid=$!
	for _ in $(seq 100); do
		curl -sf --max-time 2 --unix-socket "$tmp/api.sock" http://x/readyz >/dev/null 2>&1 && return 0
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	say "   ironbelld does not start: $(tail -n 3 "$tmp/ironbelld.log")"
	return 1
}
stop_daemon() {
	kill "$dpid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	dpid=
}
daemon_note() { grep -m1 -i -e bmc -e machine -e job "$tmp/ironbelld.log" | head -c 200; }

# daemon_netboot WAY CONFIG: a fresh ironbelld with CONFIG, 30 Secrets and
# Machines, then 30 netboot Jobs timed until all are Completed.
daemon_netboot() {
	if start_daemon "$2"; then
		objects "$tmp/s30.yaml" secret "$IP0" "$NB" ipmitool
		objects "$tmp/m30.yaml" machine "$IP0" "$NB" ipmitool
		jobs_yaml "$tmp/j30.yaml" "$IP0" "$NB"
		ib apply -f "$tmp/s30.yaml" >/dev/null && ib apply -f "$tmp/m30.yaml" >/dev/null || {
			fail netboot "$1" "$NB" "apply of the Secrets and Machines failed"
		}
		# Let the first poll of the Machines end, so that the Jobs are timed
		# alone.
		"$PY" "$src/tests/bench/bmc/wait.py" "$b/ironbell" machines "$NB" "$(now_ns)" \
			$((WAIT < 20 ? WAIT : 20)) >"$tmp/w" || {
			say "   (the Machines have no power state yet: $(cat "$tmp/w"))"
			# Not one Machine polled in 20 s: this daemon has no working
			# BMC control, and waiting the full time again says no more.
			grep -q ' ok=0 failed=0 ' "$tmp/w" && WAIT=$((WAIT < 10 ? WAIT : 10))
		}
		c0=$(ticks "$dpid")
		s0=$(server_ticks)
		t0=$(now_ns)
		if ib apply -f "$tmp/j30.yaml" >/dev/null &&
			"$PY" "$src/tests/bench/bmc/wait.py" "$b/ironbell" jobs "$NB" "$t0" "$WAIT" >"$tmp/w"; then
			read -r _ w <"$tmp/w"
			c1=$(ticks "$dpid")
			s1=$(server_ticks)
			rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$dpid/status")
			record "netboot $1 $NB $w $(tsec $((c1 - c0))) $(srv_secs "$s0" "$s1") - $rss -"
			say "   $1: $NB Jobs Completed $w s after their apply; daemon CPU $(tsec $((c1 - c0))) s, VmHWM $((rss / 1024)) MiB"
		else
			fail netboot "$1" "$NB" "Jobs not Completed: $(cat "$tmp/w") $(daemon_note)"
		fi
		stop_daemon
	else
		fail netboot "$1" "$NB" "ironbelld does not start"
	fi
}

if want daemon; then
	say ""
	say "== ironbelld: $NB netboot Jobs; then, in a fresh daemon, the first poll of $((NI + NR)) Machines"
	daemon_netboot ironbelld "$tmp/ironbell.yaml"
	# The same with the power checked every 100 ms, as Rufio's way above
	# checks at once: when this daemon has bmc.verify_interval.
	sed 's/^http:$/bmc:\n  verify_interval: 100\n&/' "$tmp/ironbell.yaml" >"$tmp/ironbell-fast.yaml"
	if "$b/ironbelld" -n --config "$tmp/ironbell-fast.yaml" >/dev/null 2>&1; then
		daemon_netboot ironbelld-100ms "$tmp/ironbell-fast.yaml"
	fi
	poll_conf=$tmp/ironbell.yaml
	if [ -n "$CONNS" ]; then
		poll_conf=$tmp/ironbell-poll.yaml
		sed "s/^http:\$/bmc:\n  redfish:\n    max_connections: $CONNS\n&/" "$tmp/ironbell.yaml" >"$poll_conf"
		say "   (the poll's daemon with bmc.redfish.max_connections $CONNS)"
	fi
	if start_daemon "$poll_conf"; then
		objects "$tmp/si.yaml" secret "$IP0" "$NI" ipmitool
		objects "$tmp/sr.yaml" secret "$RF0" "$NR" gofish
		objects "$tmp/mi.yaml" machine "$IP0" "$NI" ipmitool
		objects "$tmp/mr.yaml" machine "$RF0" "$NR" gofish
		cat "$tmp/mi.yaml" "$tmp/mr.yaml" >"$tmp/m.yaml"
		ib apply -f "$tmp/si.yaml" >/dev/null && ib apply -f "$tmp/sr.yaml" >/dev/null ||
			fail status ironbelld all "apply of the Secrets failed"
		c0=$(ticks "$dpid")
		s0=$(server_ticks)
		emu_mark >"$tmp/emu0"
		t0=$(now_ns)
		if ib apply -f "$tmp/m.yaml" >/dev/null; then
			ta=$(now_ns)
			if "$PY" "$src/tests/bench/bmc/wait.py" "$b/ironbell" machines $((NI + NR)) "$t0" "$WAIT" >"$tmp/w"; then
				read -r _ w <"$tmp/w"
				c1=$(ticks "$dpid")
				s1=$(server_ticks)
				rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$dpid/status")
				record "status ironbelld all $w $(tsec $((c1 - c0))) $(srv_secs "$s0" "$s1") $(busiest "$tmp/emu0" "$w") $rss -"
				say "   $((NI + NR)) Machines with a power state $w s after their apply began (the apply itself $(secs "$t0" "$ta") s); daemon CPU $(tsec $((c1 - c0))) s, VmHWM $((rss / 1024)) MiB"
			else
				fail status ironbelld all "Machines without a power state: $(cat "$tmp/w") $(daemon_note)"
			fi
		else
			fail status ironbelld all "apply of the Machines failed"
		fi
		stop_daemon
	else
		fail status ironbelld all "ironbelld does not start"
	fi
fi

# ---- summary ----

say ""
say "== bmc results: $NB netboot jobs on IPMI (cipher suite 3); one power status of $NI IPMI + $NR Redfish (TLS) BMCs; simulated, on 127.0.0.1, $(nproc) CPUs"
printf '%-8s %-15s %5s %9s %11s %15s %9s %9s\n' work client conc "wall s" "client CPU" "BMCs' CPU" "emu busy" "peak RSS"
while read -r work way conc wall cpu srv emu rss note; do
	if [ "$wall" = FAILED ]; then
		printf '%-8s %-15s %5s   FAILED: %s\n' "$work" "$way" "$conc" "$cpu $srv $emu $rss $note"
		continue
	fi
	case $work in status-*) continue ;; netboot) emu=- ;; esac
	[ "$emu" = - ] || emu="$emu%"
	[ "$rss" = - ] || rss="$((rss / 1024)) MiB"
	printf '%-8s %-15s %5s %9s %11s %15s %9s %9s\n' "$work" "$way" "$conc" "$wall" "$cpu" "$srv" "$emu" "$rss"
done <"$results"
say "(client: Rufio's way, every ipmitool, curl and shell it started; bmc-call, the process(es);"
say " ironbelld, the daemon alone. BMCs' CPU: every ipmi_sim / every Redfish emulator process."
say " emu busy: the busiest Redfish emulator process's CPU over the step, in % of one core;"
say " bmc-call's wall time includes its start and, at its exit, the close of every session."
say " * extrapolated: the first $SAMPLE of $NR Redfish BMCs measured, scaled to $NR.)"

say ""
say "== ratios (Rufio's way / ironbell: above 1, ironbell is faster or uses less CPU)"
awk '$4 != "FAILED" { w = $4; c = $5; sub(/\*$/, "", w); sub(/\*$/, "", c)
		t[$1 " " $2 " " $3] = w; u[$1 " " $2 " " $3] = c }
	# A CPU time of 0 is under the 0.01 s that /usr/bin/time and /proc count.
	function r(a, b) {
		if (a == "" || b == "")
			return "-";
		return b == 0 ? sprintf(">x%.0f", a / 0.01) : sprintf("x%.1f", a / b)
	}
	END {
		split("netboot status", W, " ");
		split("bmc-call ironbelld ironbelld-100ms", I, " ");
		for (i = 1; i <= 2; i++)
			for (j = 1; j <= 3; j++) {
				k = W[i] " " I[j] " " (W[i] == "netboot" ? conc_nb : "all");
				if (j == 3 && !(k in t))
					continue;
				a = W[i] " rufio 1";
				b = W[i] " rufio " conc;
				printf "%-8s %-15s time: vs concurrency 1 %-7s vs %s %-7s  client CPU: vs 1 %-7s vs %s %s\n",
					W[i], I[j], r(t[a], t[k]), conc, r(t[b], t[k]), r(u[a], u[k]), conc, r(u[b], u[k]);
			}
	}' conc="$CONC" conc_nb="$NB" "$results"
say "(the concurrency-1 status time of Rufio's way is extrapolated: see above)"

say ""
say "== targets"
awk -v nb="$NB" -v n="$((NI + NR))" '
	$1 == "netboot" && $2 == "ironbelld" && $4 != "FAILED" {
		printf "%d netboot Jobs under 10 s: %s s, %s\n", nb, $4, $4 < 10 ? "met" : "MISSED"; a = 1 }
	$1 == "status" && $2 == "ironbelld" && $4 != "FAILED" {
		printf "%d power states under 5 s with RSS under 64 MiB: %s s, %d MiB, %s\n", n, $4,
			$8 / 1024, ($4 < 5 && $8 < 65536) ? "met" : "MISSED"; b = 1 }
	END {
		if (!a) printf "%d netboot Jobs under 10 s: not measured (FAILED above)\n", nb;
		if (!b) printf "%d power states under 5 s with RSS under 64 MiB: not measured (FAILED above)\n", n
	}' "$results"
exit "$failed"
