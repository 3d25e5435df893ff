# net.sh — what the DHCP benchmarks (tests/bench/dhcp/run.sh,
# tests/bench/kea/run.sh) share, sourced by bash after they set NS_S and
# NS_C (the server's and the client's namespace names) and define say()
# and skip():
#   - bench_net_up: the two namespaces and a veth pair between them, ibs0
#     (10.0.0.1/8) in the server's and ibc0 (10.0.0.2/8) in the client's,
#     up, loopback too; skips the benchmark when namespaces cannot be made;
#   - bench_net_down: kills what still runs in them and deletes them;
#   - bench_rmem_raise / bench_rmem_restore: net.core.rmem_default and
#     rmem_max (host-wide) to 16 MiB for the run, so that perfdhcp's socket
#     buffer is not the first thing to give, and back;
#   - received / sent EXCHANGE FILE: perfdhcp's packet counts for one
#     exchange ("DISCOVER-OFFER", "REQUEST-ACK") in its output FILE, 0 when
#     it printed none.

bench_rmem_default=$(sysctl -n net.core.rmem_default 2>/dev/null)
bench_rmem_max=$(sysctl -n net.core.rmem_max 2>/dev/null)

bench_rmem_raise() {
	[ -n "$bench_rmem_default" ] || return 0
	sysctl -qw net.core.rmem_default=16777216 net.core.rmem_max=16777216 || return 0
	say "== socket buffers: net.core.rmem_default and rmem_max 16 MiB for the run (were $bench_rmem_default and $bench_rmem_max)"
}

bench_rmem_restore() {
	[ -n "$bench_rmem_default" ] && sysctl -qw net.core.rmem_default="$bench_rmem_default" \
		net.core.rmem_max="$bench_rmem_max" 2>/dev/null
	return 0
}

bench_net_up() {
	ip netns add "$NS_S" && ip netns add "$NS_C" || skip "ip netns add fails here"
	ip link add ibs0 netns "$NS_S" type veth peer name ibc0 netns "$NS_C" || exit 1
	ip -n "$NS_S" addr add 10.0.0.1/8 dev ibs0
	ip -n "$NS_C" addr add 10.0.0.2/8 dev ibc0
	for ns in "$NS_S" "$NS_C"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_S" link set ibs0 up
	ip -n "$NS_C" link set ibc0 up
}

bench_net_down() {
	for ns in "$NS_S" "$NS_C"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	done
	sleep 0.2
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_C" 2>/dev/null
}

received() {
	awk -v x="***Statistics for: $1***" '$0 == x { f = 1; next } /^\*\*\*/ { f = 0 }
		f && /^received packets:/ { print $3; exit }' "$2" | grep . || echo 0
}
sent() {
	awk -v x="***Statistics for: $1***" '$0 == x { f = 1; next } /^\*\*\*/ { f = 0 }
		f && /^sent packets:/ { print $3; exit }' "$2" | grep . || echo 0
}
