#!/bin/sh
# test_apply_memory — what the daemon keeps after large applies: 20,000
# Hardware in two files of 10,000 (about 4 MB of JSON each, half of
# http.max_body), applied with `ironbell apply -f` and listed, then the
# daemon's resident set (VmRSS) is read from /proc. An apply's trees,
# copies and results are freed when it ends and must be given back to the
# system, not kept by the allocator: VmRSS afterwards stays under
# APPLY_RSS_MAX_KB, far below the ~120 MB such applies used to leave
# resident and above the ~10 MB of a daemon restarted on the same
# database. The figures, and the peak (VmHWM), are printed as comments.
# No time is measured.
set -u

. "$top_srcdir/tests/lib.sh"

# The sanitizers' allocators keep freed memory (quarantine, shadow) by
# design: resident figures mean nothing there.
if grep -aqE '__(asan|tsan)_init' "$IRONBELLD"; then
	skip_all "ironbelld is built with a sanitizer"
fi

APPLY_RSS_MAX_KB=49152 # 48 MiB
N=20000
PER=10000

# The documents: realistic Hardware, one interface each, as the store
# benchmark (tests/bench/store/apply.sh) makes them.
awk -v n="$N" -v per="$PER" -v dir="$IB_TMP" 'BEGIN {
	for (i = 0; i < n; i++) {
		f = sprintf("%s/hw-%d.yaml", dir, int(i / per));
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n" > f;
		printf "metadata:\n  name: node-%06d\n  labels: {rack: r%d}\n", i, i % 40 > f;
		printf "spec:\n  interfaces:\n    - dhcp:\n" > f;
		printf "        mac: \"02:00:%02x:%02x:%02x:%02x\"\n", int(i / 16777216) % 256, int(i / 65536) % 256, int(i / 256) % 256, i % 256 > f;
		printf "        hostname: node-%06d\n        lease_time: 86400\n", i > f;
		printf "        ip: {address: 10.%d.%d.%d, netmask: 255.255.0.0, gateway: 10.%d.0.1}\n", int(i / 62500) + 1, int(i / 250) % 250, i % 250 + 1, int(i / 62500) + 1 > f;
		printf "      netboot: {allowPXE: true, allowWorkflow: true}\n" > f;
	}
}' || bail_out "cannot write the documents"

# status KEY: the daemon's KEY line of /proc/PID/status, in kB.
status() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$IB_DAEMON_PID/status"; }

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

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
