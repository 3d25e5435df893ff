# netns.sh — network namespaces for the integration tests (POSIX sh,
# sourced after tests/lib.sh).
#
# A test makes its own namespaces and links, and this file removes them at
# exit, whatever happened: the EXIT trap runs lib.sh's ib_cleanup (stop the
# daemon, kill the registered jobs, remove $IB_TMP) and then ns_cleanup
# (kill what still runs inside our namespaces, by PID, and delete them).
# Names carry the test's PID, so tests running in parallel (make check -j)
# never meet: namespace "ib<PID>-<short name>". Interfaces are created
# directly inside their namespace, so their names only need to be unique
# there.
#
#	ns_require                    skip_all unless root and `ip netns add`
#	                              works; removes namespaces left behind by
#	                              earlier runs that were killed (SIGKILL)
#	ns_new VAR SHORT              make a namespace, its name in $VAR, lo up
#	ns_veth NS1 IF1 ADDR1 NS2 IF2 ADDR2
#	                              a veth pair between two namespaces, both
#	                              ends up; ADDR is a CIDR or - for none
#	ns_bridge NS BR ADDR          a bridge in NS, up, with ADDR (or -)
#	ns_port NS IF BR              makes IF (in NS) a port of bridge BR
#	ns_addr NS IF ADDR            adds an address
#	ns_exec NS CMD...             runs CMD in NS (ip netns exec)
#	ns_bg NS CMD...               runs CMD in NS in the background, its
#	                              PID in $NS_PID, killed at exit
#	ns_mac NS IF                  prints the link's MAC
#
# Every command here is bounded: ip(8) calls do not block, and ns_cleanup
# waits at most a few seconds for each process it kills.

NS_LIST=
NS_PID=

# lib.sh's trap, then ours: the daemon stops with SIGTERM first, then
# whatever is left in our namespaces is killed and they are deleted.
trap 'ib_cleanup; ns_cleanup' EXIT

ns_require() {
	[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
	command -v ip >/dev/null 2>&1 || skip_all "ip (iproute2) is not installed"
	_probe=ib$$-probe
	ip netns add "$_probe" >/dev/null 2>&1 || skip_all "ip netns add fails here (no network namespaces)"
	ip netns del "$_probe" >/dev/null 2>&1
	ns_reap_stale
}

# ns_reap_stale: deletes namespaces left by earlier test runs that were
# killed too hard to clean up (their owner PID, in the name, is gone).
# Processes still inside them are left alone.
ns_reap_stale() {
	for _n in $(ip netns list 2>/dev/null | sed -n 's/^\(ib[0-9][0-9]*-[A-Za-z0-9]*\).*/\1/p'); do
		_owner=${_n#ib}
		_owner=${_owner%%-*}
		[ -d "/proc/$_owner" ] || ip netns del "$_n" >/dev/null 2>&1
	done
}

ns_new() {
	_ns=ib$$-$2
	ip netns add "$_ns" || return 1
	NS_LIST="$NS_LIST $_ns"
	ip -n "$_ns" link set lo up || return 1
	eval "$1=\$_ns"
}

ns_addr() {
	[ "$3" = - ] || ip -n "$1" addr add "$3" dev "$2"
}

ns_veth() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" || return 1
	ns_addr "$1" "$2" "$3" || return 1
	ns_addr "$4" "$5" "$6" || return 1
	ip -n "$1" link set "$2" up || return 1
	ip -n "$4" link set "$5" up
}

ns_bridge() {
	ip -n "$1" link add "$2" type bridge || return 1
	# No STP and no forward delay: a port forwards as soon as it is up.
	ip -n "$1" link set "$2" type bridge stp_state 0 forward_delay 0 2>/dev/null
	ns_addr "$1" "$2" "$3" || return 1
	ip -n "$1" link set "$2" up
}

# ns_port NS PORT BRIDGE: PORT into BRIDGE, up, and waits (at most 3 s)
# until the bridge forwards on it: the kernel moves a port to forwarding
# only when it has seen its carrier, which can take a second on a busy
# machine, and a frame sent before then is dropped (a PXE client's one
# DISCOVER with it). A port that does not forward within the 3 s (its
# peer still down) is returned all the same.
ns_port() {
	ip -n "$1" link set "$2" master "$3" || return 1
	ip -n "$1" link set "$2" up || return 1
	_p_i=0
	while [ "$_p_i" -lt 60 ]; do
		[ "$(ip netns exec "$1" cat "/sys/class/net/$2/brport/state" 2>/dev/null)" = 3 ] && return 0
		sleep 0.05
		_p_i=$((_p_i + 1))
	done
	return 0
}

ns_exec() {
	_ns=$1
	shift
	ip netns exec "$_ns" "$@"
}

# `ip netns exec` execs the command after entering the namespace, so $! is
# the command's own PID.
ns_bg() {
	_ns=$1
	shift
	ip netns exec "$_ns" "$@" &
	NS_PID=$!
	ib_bg "$NS_PID"
}

# ns_get NS URL [CURL ARGS...]: GET with curl from inside namespace NS
# (tests/lib.sh's run); sets $code, the status, and $out, the body.
ns_get() {
	_ns=$1
	_url=$2
	shift 2
	run ip netns exec "$_ns" curl -s --max-time 10 -o "$IB_TMP/body" -w '%{http_code}' "$@" "$_url"
	code=$out
	out=$(cat "$IB_TMP/body" 2>/dev/null)
}

ns_mac() {
	ip -n "$1" -o link show dev "$2" | sed -n 's/.* link\/ether \([0-9a-f:]*\) .*/\1/p'
}

ns_cleanup() {
	for _ns in $NS_LIST; do
		for _p in $(ip netns pids "$_ns" 2>/dev/null); do
			kill -KILL "$_p" 2>/dev/null
		done
	done
	for _ns in $NS_LIST; do
		_i=0
		while [ -n "$(ip netns pids "$_ns" 2>/dev/null)" ] && [ $_i -lt 50 ]; do
			sleep 0.1
			_i=$((_i + 1))
		done
		ip netns del "$_ns" 2>/dev/null
	done
	NS_LIST=
}
