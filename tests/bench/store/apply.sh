#!/bin/sh
# Apply benchmark through the whole path: 100,000 Hardware written as YAML
# files of 1,000 documents, each applied with `ironbell apply -f` (YAML parse,
# HTTP over the unix socket, validation, one atomic transaction) to a real
# ironbelld. Prints objects/s and the daemon's peak RSS (VmHWM); asserts no
# timing. Needs the built ironbelld and ironbell ($top_builddir).
set -eu
b=${top_builddir:-.}
n=${BENCH_APPLY_OBJECTS:-100000}
per=1000
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ironbell-bench.XXXXXX")
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -s "$tmp/daemon.log" ] && cat "$tmp/daemon.log" >&2
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The documents, written with awk so that generating them is not measured.
awk -v n="$n" -v per="$per" -v dir="$tmp" 'BEGIN {
	for (i = 0; i < n; i++) {
		f = sprintf("%s/hw-%04d.yaml", dir, int(i / per));
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n" > f;
		printf "metadata:\n  name: node-%06d\n  labels: {rack: r%d}\n", i, i % 40 > f;
		printf "spec:\n  interfaces:\n    - dhcp:\n" > f;
		printf "        mac: \"02:00:%02x:%02x:%02x:%02x\"\n", int(i / 16777216) % 256, int(i / 65536) % 256, int(i / 256) % 256, i % 256 > f;
		printf "        hostname: node-%06d\n        lease_time: 86400\n", i > f;
		printf "        ip: {address: 10.%d.%d.%d, netmask: 255.255.0.0, gateway: 10.%d.0.1}\n", int(i / 62500) + 1, int(i / 250) % 250, i % 250 + 1, int(i / 62500) + 1 > f;
		printf "      netboot: {allowPXE: true, allowWorkflow: true}\n" > f;
	}
}'

cat >"$tmp/ironbell.yaml" <<CONF
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: 127.0.0.1:$((20000 + $$ % 20000))
CONF
"$b/ironbelld" --config "$tmp/ironbell.yaml" --log-level warn 2>"$tmp/daemon.log" &
pid=$!
i=0
while [ ! -S "$tmp/api.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
export IRONBELL_SOCKET="$tmp/api.sock"

echo "== store: $n Hardware through ironbell apply -f ($per per file)"
start=$(date +%s.%N)
for f in "$tmp"/hw-*.yaml; do
	"$b/ironbell" apply -f "$f" >/dev/null
done
end=$(date +%s.%N)
hwm=$(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$pid/status")
start_list=$(date +%s.%N)
count=$("$b/ironbell" get hardware -o name | wc -l)
end_list=$(date +%s.%N)
hwm_list=$(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$pid/status")
awk -v s="$start" -v e="$end" -v n="$count" -v hwm="$hwm" 'BEGIN {
	printf "apply via ironbelld: %d Hardware stored in %.1f s: %.0f objects/s; daemon peak RSS %s\n", n, e - s, n / (e - s), hwm
}'
awk -v s="$start_list" -v e="$end_list" -v n="$count" -v hwm="$hwm_list" 'BEGIN {
	printf "list of all %d through ironbell get: %.1f s; daemon peak RSS after it %s\n", n, e - s, hwm
}'
