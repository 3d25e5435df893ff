#!/bin/sh
# Store benchmark: 100,000 Hardware applied through store_write() in atomic
# batches of 1000, the same again (unchanged), then 100,000 random lookups
# by MAC, undecoded and decoded. Prints objects/s, lookup p50/p99 and peak
# RSS; asserts no timing.
# Targets: 100k applied in < 60 s, lookup p99 < 50 us, RSS < 64 MiB.
set -e
bin="${top_builddir:-.}/tests/bench/store/bench_store"
if [ ! -x "$bin" ]; then
	echo "bench_store not built: make tests/bench/store/bench_store" >&2
	exit 1
fi
echo "== store: apply and lookup"
exec "$bin" -n "${BENCH_STORE_OBJECTS:-100000}" -b "${BENCH_STORE_BATCH:-1000}"
