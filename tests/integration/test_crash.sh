#!/bin/sh
# test_crash — what ironbelld acknowledged survives kill -9.
#
# Three clients apply single Hardware objects in a loop (300 in all), each
# recording the names whose apply returned 0, while the daemon is killed
# with SIGKILL in the middle of the burst. After a restart every
# acknowledged object must be there, and SQLite must find the database
# intact (PRAGMA integrity_check, with the sqlite3 command-line tool).
set -u

. "$top_srcdir/tests/lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip_all "sqlite3 (the command-line tool) is not installed"
command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"

CLIENTS=3
PER_CLIENT=100

ib_start_daemon || bail_out "ironbelld did not start"

# client C: applies crash-C-1 .. crash-C-PER_CLIENT, one per request,
# appending each acknowledged name to acked-C.
client() {
	_c=$1
	_i=1
	while [ $_i -le $PER_CLIENT ]; do
		_name=crash-$_c-$_i
		_mac=$(printf '02:00:00:%02x:%02x:%02x' "$_c" $((_i / 256)) $((_i % 256)))
		if printf 'apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: %s
spec:
  interfaces:
    - dhcp:
        mac: "%s"
' "$_name" "$_mac" | timeout -k 2 20 "$IRONBELL" apply -f - >/dev/null 2>&1; then
			echo "$_name" >>"$IB_TMP/acked-$_c"
		fi
		_i=$((_i + 1))
	done
}

: >"$IB_TMP/acked-1"
pids=
c=1
while [ $c -le $CLIENTS ]; do
	: >"$IB_TMP/acked-$c"
	client "$c" &
	pids="$pids $!"
	ib_bg "$!"
	c=$((c + 1))
done

# A watcher sees the stream break off without its last chunk: it must say
# so and fail, not end as if the daemon had stopped cleanly.
"$IRONBELL" watch hardware >"$IB_TMP/watch.out" 2>"$IB_TMP/watch.err" &
wpid=$!
ib_bg "$wpid"

acked_count() { cat "$IB_TMP"/acked-* | wc -l; }
enough() { [ "$(acked_count)" -ge 40 ]; }
ok "the burst gets going" wait_for 60 enough
ib_crash_daemon
ok "the watcher ends when the daemon is killed" \
	wait_for 10 sh -c "! test -d /proc/$wpid || grep -q '^State:.*Z' /proc/$wpid/status"
wait "$wpid"
is "$?" 1 "a broken watch stream is an error (status 1)"
like "$(cat "$IB_TMP/watch.err")" 'failed' "and says the request failed"
before=$(acked_count)
diag "killed ironbelld with SIGKILL after $before acknowledged applies"

# The clients now fail fast (nothing listens); let them finish.
for p in $pids; do
	_i=0
	while ib_alive "$p" && [ $_i -lt 600 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	ib_alive "$p" && kill -KILL "$p"
	wait "$p" 2>/dev/null
done
total=$(acked_count)
diag "$total applies acknowledged in all"
ok "the daemon died in the middle of the burst" [ "$total" -gt 0 ] && [ "$total" -lt $((CLIENTS * PER_CLIENT)) ]

ok "ironbelld restarts on the crashed database" ib_start_daemon
ib get hardware -o name
is "$rc" 0 "list after the restart"
printf '%s\n' "$out" | sed 's|^hardware.tinkerbell.org/||' | sort >"$IB_TMP/present"
cat "$IB_TMP"/acked-* | sort >"$IB_TMP/acked"
lost=$(comm -23 "$IB_TMP/acked" "$IB_TMP/present")
is "$lost" "" "every acknowledged object is listed"
missing=
for n in $(cat "$IB_TMP/acked"); do
	"$IRONBELL" get hw "$n" -o name >/dev/null 2>&1 || missing="$missing $n"
done
is "$missing" "" "every acknowledged object can be read by name ($total)"

# The daemon still writes after recovery.
printf 'apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata:\n  name: after-crash\nspec: {}\n' >"$IB_TMP/after.yaml"
ib apply -f "$IB_TMP/after.yaml"
is "$rc:$out" "0:hardware.tinkerbell.org/after-crash created" "a write after the recovery"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM after the recovery"
ok "no sanitizer report in the daemon's log" ib_log_clean
db=
for f in "$IB_STATE"/*.db "$IB_STATE"/*.sqlite "$IB_STATE"/*.sqlite3; do
	[ -f "$f" ] && db=$f && break
done
if [ -n "$db" ]; then
	run sqlite3 "$db" 'PRAGMA integrity_check'
	is "$rc:$out" "0:ok" "PRAGMA integrity_check of $(basename "$db")"
else
	fail "PRAGMA integrity_check" "no database file in $IB_STATE: $(ls "$IB_STATE")"
fi

tap_done
