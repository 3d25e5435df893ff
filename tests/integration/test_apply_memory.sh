#!/bin/sh
# test_apply_memory — the daemon's memory around large applies.
#
# 1. What it keeps: 20,000 Hardware in two files of 10,000 (about 4 MB of
#    JSON each, half of http.max_body), applied with `ironbell apply -f`
#    and listed, then the daemon's resident set (VmRSS) is read from
#    /proc. An apply's trees, copies and results are freed when it ends
#    and must be given back to the system, not kept by the allocator:
#    VmRSS afterwards stays under APPLY_RSS_MAX_KB, far below the ~120 MB
#    such applies used to leave resident and above the ~10 MB of a daemon
#    restarted on the same database.
# 2. Its peak: two files of BIG Hardware each, as many as one request
#    may carry (just under the default http.max_body of 8 MiB), applied
#    after the peak (VmHWM) was reset; VmHWM must stay under
#    APPLY_PEAK_MAX_KB. One such apply is one atomic write of every object
#    in it, which used to cost ~5 kB per object (the request's jansson
#    trees, the queued events): ~120 MB.
# 3. The same peak for BIG Hardware sent as one YAML body (with curl, as
#    a client other than `ironbell` may), which is read a document at a
#    time.
# The figures are printed as comments. No time is measured.
set -u

. "$top_srcdir/tests/lib.sh"

# The sanitizers' allocators keep freed memory (quarantine, shadow) by
# design: resident figures mean nothing there.
if grep -aqE '__(asan|tsan)_init' "$IRONBELLD"; then
	skip_all "ironbelld is built with a sanitizer"
fi

APPLY_RSS_MAX_KB=49152  # 48 MiB
APPLY_PEAK_MAX_KB=65536 # 64 MiB
N=20000
PER=10000
BIG=22000 # about 7.9 MB of JSON as `ironbell apply` sends it

# gen FIRST COUNT PER PREFIX: Hardware FIRST .. FIRST+COUNT-1 in files
# $IB_TMP/PREFIX-0.yaml, PREFIX-1.yaml, ... of PER documents each, as the
# store benchmark (tests/bench/store/apply.sh) makes them.
gen() {
	sh "$top_srcdir/tests/gen-hardware.sh" "$1" "$2" "$3" "$IB_TMP/$4-%d.yaml"
}
gen 0 "$N" "$PER" hw || bail_out "cannot write the documents"
gen "$N" $((2 * BIG)) "$BIG" big || bail_out "cannot write the documents"
gen $((N + 2 * BIG)) "$BIG" "$BIG" yaml || bail_out "cannot write the documents"

# status KEY: the daemon's KEY line of /proc/PID/status, in kB.
status() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$IB_DAEMON_PID/status"; }

# What is measured is an apply's memory. The public listener's answer
# cache keeps an index of every Hardware stored (about 0.9 kB each, which
# check_answers measures), so with it these figures would grow with the
# 86,000 Hardware this test stores rather than with what one apply costs.
ib_write_config "  answer_cache: false" || bail_out "cannot write the configuration"
ib_start_daemon || bail_out "ironbelld did not start"
diag "at start: VmRSS $(status VmRSS) kB"
i=0
while [ $i -lt $((N / PER)) ]; do
	IB_CMD_TIMEOUT=120 ib apply -f "$IB_TMP/hw-$i.yaml"
	is "$rc" 0 "apply of hw-$i.yaml ($PER Hardware)"
	i=$((i + 1))
done
ib get hardware -o name
is "$(printf '%s\n' "$out" | grep -c .)" "$N" "$N Hardware stored"
# The list's own buffers are freed too; read after it.
rss=$(status VmRSS)
hwm=$(status VmHWM)
diag "after the applies and a list: VmRSS $rss kB, VmHWM $hwm kB"
ok "VmRSS after applying $N Hardware is $rss kB (< $APPLY_RSS_MAX_KB kB)" \
	test "$rss" -lt "$APPLY_RSS_MAX_KB"

# reset_hwm: the daemon's VmHWM back to its VmRSS. Writing 5 to
# clear_refs does that (Linux 4.0); where it does not, a restarted daemon
# starts from its own.
reset_hwm() {
	if ! { echo 5 >"/proc/$IB_DAEMON_PID/clear_refs"; } 2>/dev/null ||
		[ "$(status VmHWM)" -gt $(($(status VmRSS) + 1024)) ]; then
		diag "VmHWM cannot be reset: restarting the daemon"
		ib_stop_daemon
		ib_start_daemon || bail_out "ironbelld did not start again"
	fi
	diag "VmHWM reset: VmRSS $(status VmRSS) kB, VmHWM $(status VmHWM) kB"
}

# The peak of one apply near the body limit.
reset_hwm
i=0
while [ $i -lt 2 ]; do
	IB_CMD_TIMEOUT=120 ib apply -f "$IB_TMP/big-$i.yaml"
	is "$rc" 0 "apply of big-$i.yaml ($BIG Hardware, one request)"
	hwm=$(status VmHWM)
	diag "after big-$i.yaml: VmRSS $(status VmRSS) kB, VmHWM $hwm kB"
	ok "VmHWM through an apply of $BIG Hardware is $hwm kB (< $APPLY_PEAK_MAX_KB kB)" \
		test "$hwm" -lt "$APPLY_PEAK_MAX_KB"
	i=$((i + 1))
done

# The same as one YAML body.
reset_hwm
code=$(curl -s -o "$IB_TMP/yaml.out" -w '%{http_code}' --max-time 120 --unix-socket "$IB_SOCK" \
	-X POST -H 'Content-Type: application/yaml' --data-binary "@$IB_TMP/yaml-0.yaml" \
	http://localhost/apis/ironbell.dev/v1/apply)
is "$code" 200 "apply of yaml-0.yaml ($BIG Hardware) as one YAML body"
hwm=$(status VmHWM)
diag "after yaml-0.yaml: VmRSS $(status VmRSS) kB, VmHWM $hwm kB"
ok "VmHWM through an apply of $BIG Hardware as YAML is $hwm kB (< $APPLY_PEAK_MAX_KB kB)" \
	test "$hwm" -lt "$APPLY_PEAK_MAX_KB"

ib get hardware -o name -l rack=r0
is "$(printf '%s\n' "$out" | grep -c .)" $(((N + 3 * BIG) / 40)) "every Hardware stored"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
