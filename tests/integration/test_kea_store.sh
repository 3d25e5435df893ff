#!/bin/sh
# test_kea_store — the Kea hook's core following a real ironbelld's store,
# without Kea: tests/kea/ibkea-probe runs the core (dhcp/kea/) on the
# daemon's SQLite file, read-only, and answers lookups on stdin. The
# probe sees the Hardware applied with `ironbell apply -f`, a change and
# a delete within a bounded wait, a store that appears after it started
# (not ready, then ready), a missing store and a corrupt file (not ready,
# the log says why, the probe goes on answering), and a store removed
# while it runs (not ready again). Every wait is bounded.
set -u

. "$top_srcdir/tests/lib.sh"

PROBE=$top_builddir/tests/kea/ibkea-probe
[ -x "$PROBE" ] || skip_all "tests/kea/ibkea-probe is not built"

DB=$IB_STATE/ironbell.db
M1=52:54:00:aa:00:01
M2=52:54:00:aa:00:02

# hw NAME MAC IP: a Hardware with one interface.
hw() {
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: $1
  namespace: default
spec:
  interfaces:
    - dhcp:
        mac: "$2"
        hostname: $1
        ip:
          address: $3
          netmask: 255.255.255.0
      netboot:
        allowPXE: true
EOF
}

# probe_start N PARAMS: starts probe N (1..3) on fd N+2 (its commands) and
# $IB_TMP/probeN.out / .err.
probe_start() {
	mkfifo "$IB_TMP/probe$1.in" || return 1
	# Made here: the probe's shell may open them after this function
	# has returned (the fifo's open is the only rendezvous).
	: >"$IB_TMP/probe$1.out"
	: >"$IB_TMP/probe$1.err"
	"$PROBE" "$2" <"$IB_TMP/probe$1.in" >"$IB_TMP/probe$1.out" 2>"$IB_TMP/probe$1.err" &
	eval "PROBE_PID$1=\$!"
	ib_bg "$!"
	eval "exec $(($1 + 2))>\"\$IB_TMP/probe$1.in\""
}

# ask N CMD: sends CMD to probe N and sets $ans to its answer (empty when
# none came within 10 s).
ask() {
	_n=$(wc -l <"$IB_TMP/probe$1.out")
	eval "printf '%s\n' \"\$2\" >&$(($1 + 2))"
	ans=
	wait_for 10 lines_over "$IB_TMP/probe$1.out" "$_n" || return 0
	ans=$(sed -n "$((_n + 1))p" "$IB_TMP/probe$1.out")
}

lines_over() { [ "$(wc -l <"$1")" -gt "$2" ]; }

# ask_until SECS N CMD WANT: asks again until the answer is WANT, at most
# SECS seconds; $ans is the last answer.
ask_until() {
	_lim=$(($1 * 10))
	_i=0
	while :; do
		ask "$2" "$3"
		[ "$ans" = "$4" ] && return 0
		_i=$((_i + 1))
		[ $_i -ge $_lim ] && return 1
		sleep 0.1
	done
}

# probe_quit N: "quit", and the probe exits 0 within 10 s.
probe_quit() {
	eval "_pid=\$PROBE_PID$1"
	eval "printf 'quit\n' >&$(($1 + 2))"
	_i=0
	while ib_alive "$_pid" && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	if ib_alive "$_pid"; then
		fail "probe $1 exits on quit" "still running"
		return
	fi
	wait "$_pid"
	is "$?" 0 "probe $1 exits 0 on quit"
}

ib_write_config || bail_out "cannot write the config"

# ---- a store that is not there yet ----
probe_start 1 "{\"store\":\"$DB\",\"poll-interval-ms\":20}" || bail_out "cannot start the probe"
ask 1 ready
is "$ans" 0 "no store yet: not ready"
ask 1 "mac $M1"
is "$ans" none "no store yet: no reservation"
wait_for 10 file_has "$IB_TMP/probe1.err" "$DB: No such file" ||
	diag "$(cat "$IB_TMP/probe1.err")"
ok "no store yet: the log says why" file_has "$IB_TMP/probe1.err" "$DB: No such file"

# ---- the store appears ----
ib_start_daemon || bail_out "ironbelld did not start"
{ hw m1 "$M1" 10.0.0.50; echo ---; hw m2 "$M2" 10.0.0.51; } >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "apply two Hardware"
ask_until 20 1 ready 1
is "$ans" 1 "the store appeared: ready"
ask_until 10 1 count 2
is "$ans" 2 "two interfaces in the table"
ask 1 "mac $M1"
is "$ans" "10.0.0.50 255.255.255.0 m1" "m1's reservation by MAC"
ask 1 "ip 10.0.0.51"
is "$ans" "$M2" "m2's reservation by address"
ask 1 "mac 52:54:00:aa:00:99"
is "$ans" none "an unknown MAC: none"
ok "the load is logged" file_has "$IB_TMP/probe1.err" "Hardware interfaces loaded from $DB in"

# ---- a change, a delete ----
hw m1 "$M1" 10.0.0.60 >"$IB_TMP/m1.yaml"
ib apply -f "$IB_TMP/m1.yaml"
is "$rc" 0 "apply m1 with another address"
ask_until 5 1 "mac $M1" "10.0.0.60 255.255.255.0 m1"
is "$ans" "10.0.0.60 255.255.255.0 m1" "the change is seen within the bounded wait"
ask 1 "ip 10.0.0.50"
is "$ans" none "the old address is free"
ib delete hardware m2
is "$rc" 0 "delete m2"
ask_until 5 1 "mac $M2" none
is "$ans" none "the delete is seen within the bounded wait"
ask 1 count
is "$ans" 1 "one interface left"

# ---- a corrupt file ----
printf 'this is not a database, not at all\n%.0s' 1 2 3 4 5 6 7 8 >"$IB_TMP/corrupt.db"
probe_start 2 "{\"store\":\"$IB_TMP/corrupt.db\"}" || bail_out "cannot start the probe"
wait_for 10 file_has "$IB_TMP/probe2.err" "corrupt.db" || diag "$(cat "$IB_TMP/probe2.err")"
ok "a corrupt file: the log names it" file_has "$IB_TMP/probe2.err" "corrupt.db"
ask 2 ready
is "$ans" 0 "a corrupt file: not ready"
ask 2 count
is "$ans" 0 "a corrupt file: the probe still answers"
probe_quit 2

# ---- a missing store named from the start ----
probe_start 3 "{\"store\":\"$IB_TMP/nowhere/ironbell.db\"}" || bail_out "cannot start the probe"
wait_for 10 file_has "$IB_TMP/probe3.err" "nowhere/ironbell.db: No such file"
ok "a missing store: the log says why" \
	file_has "$IB_TMP/probe3.err" "nowhere/ironbell.db: No such file"
ask 3 ready
is "$ans" 0 "a missing store: not ready"
probe_quit 3

# ---- the store removed while the probe runs ----
ib_stop_daemon
rm -f "$DB" "$DB-wal" "$DB-shm"
ask_until 10 1 ready 0
is "$ans" 0 "the store removed: not ready again"
ask 1 count
is "$ans" 0 "the store removed: the table is empty"
ask 1 "mac $M1"
is "$ans" none "the store removed: no reservation"
probe_quit 1

unlike "$(cat "$IB_TMP"/probe*.err)" 'AddressSanitizer|runtime error' "no sanitizer report"
tap_done
