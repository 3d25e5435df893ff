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

# The documents (tests/gen-hardware.sh), written before anything is measured.
sh "${top_srcdir:-.}/tests/gen-hardware.sh" 0 "$n" "$per" "$tmp/hw-%04d.yaml"

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
