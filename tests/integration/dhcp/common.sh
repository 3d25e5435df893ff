# common.sh — what the DHCP namespace tests share (POSIX sh, sourced after
# tests/lib.sh and tests/netns.sh): ironbelld's DHCP server started inside
# a namespace, Hardware documents, the metrics, the scapy client
# (pxe_client.py) and its JSON replies, ISC dhclient and busybox udhcpc
# with scripts that only touch the test's namespace and temporary
# directory, and dnsmasq as a second, independent server.
#
# The address plan every test starts from: subnet 192.168.77.0/24, the
# server 192.168.77.1, reserved addresses from .21, router .1, a name
# server .53, a static route 10.99.0.0/16 via .254, domain example.test.

DHCP_DIR=$top_srcdir/tests/integration/dhcp
PY=/usr/bin/python3

# dhcp_require: skip_all unless this machine can run the tests.
dhcp_require() {
	ns_require
	command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
	[ -x "$PY" ] || skip_all "$PY is not installed (Debian's python, for scapy)"
	"$PY" -c 'import scapy.all' >/dev/null 2>&1 || skip_all "python3-scapy is not installed"
	command -v timeout >/dev/null 2>&1 || skip_all "timeout (coreutils) is not installed"
}

have() { command -v "$1" >/dev/null 2>&1; }

# ---- the daemon ----

# dhcp_daemon NS DHCP_LINES: writes $IB_CONFIG with a dhcp: section
# (enabled, then DHCP_LINES, each indented by two spaces) and starts
# ironbelld inside NS.
dhcp_daemon() {
	IB_DAEMON_WRAP="ip netns exec $1"
	ib_write_config "dhcp:
  enabled: true
$2" || return 1
	ib_start_daemon
}

# metrics: the daemon's /metrics, in $IB_TMP/metrics.
metrics() {
	curl -s --max-time 5 --unix-socket "$IB_SOCK" http://localhost/metrics >"$IB_TMP/metrics" 2>/dev/null
}

# metric NAME{LABELS}: its value (0 when absent); metric_sum NAME: the
# sum over every label set. Both read /metrics anew.
metric() {
	metrics
	awk -v k="$1" '$1 == k { v = $2; f = 1 } END { print f ? v + 0 : 0 }' "$IB_TMP/metrics"
}
metric_sum() {
	metrics
	awk -v k="$1" 'index($1, k "{") == 1 || $1 == k { s += $2 } END { print s + 0 }' "$IB_TMP/metrics"
}

hosts_are() { [ "$(metric ironbell_dhcp_hosts)" = "$1" ]; }

# wait_hosts N: waits (10 s at most) until the server's table holds N
# reservations; fails the test's plan with a message otherwise.
wait_hosts() {
	wait_for 10 hosts_are "$1" && return 0
	diag "ironbell_dhcp_hosts is $(metric ironbell_dhcp_hosts), not $1"
	return 1
}

# ---- Hardware ----

HW_MASK=255.255.255.0
HW_GW=192.168.77.1
HW_DNS=192.168.77.53
HW_DOMAIN=example.test
HW_ROUTES="10.99.0.0/16 192.168.77.254"
HW_NTP=
HW_LEASE=600
HW_ALLOW_PXE=true

# hw_doc NAME MAC IP: one Hardware document, with the HW_* settings.
hw_doc() {
	echo "---"
	echo "apiVersion: tinkerbell.org/v1alpha1"
	echo "kind: Hardware"
	echo "metadata: {name: $1, namespace: default}"
	echo "spec:"
	echo "  interfaces:"
	echo "    - dhcp:"
	echo "        mac: \"$2\""
	echo "        hostname: $1"
	[ -z "$HW_DOMAIN" ] || echo "        domain_name: $HW_DOMAIN"
	echo "        lease_time: $HW_LEASE"
	echo "        ip: {address: $3, netmask: $HW_MASK, gateway: $HW_GW}"
	[ -z "$HW_DNS" ] || echo "        name_servers: [$HW_DNS]"
	[ -z "$HW_NTP" ] || echo "        time_servers: [$HW_NTP]"
	if [ -n "$HW_ROUTES" ]; then
		echo "        classless_static_routes:"
		set -- $HW_ROUTES
		while [ $# -ge 2 ]; do
			echo "          - {destination_descriptor: $1, router: $2}"
			shift 2
		done
	fi
	echo "      netboot: {allowPXE: $HW_ALLOW_PXE, allowWorkflow: true}"
}

# hw_apply NAME MAC IP: applies one Hardware (with the HW_* settings).
hw_apply() {
	hw_doc "$@" >"$IB_TMP/hw-$1.yaml"
	ib apply -f "$IB_TMP/hw-$1.yaml"
	[ "$rc" = 0 ] || diag "apply of $1: $err"
	[ "$rc" = 0 ]
}

# lease_of MAC [FIELDS]: the FIELDS ("state ip" unless given) of MAC's
# lease in `ironbell get leases -o json`, or "none".
lease_of() {
	timeout 10 "$IRONBELL" get leases -o json 2>/dev/null | "$PY" -c 'import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    d = {"items": []}
m = [i for i in d.get("items", []) if i.get("mac", "").lower() == sys.argv[1].lower()]
print(" ".join(str(m[0].get(k)) for k in sys.argv[2].split()) if m else "none")' "$1" "${2:-state ip}"
}
lease_is() { [ "$(lease_of "$1")" = "$2" ]; }

# ---- the scapy client ----

# pxe NS ARGS...: runs pxe_client.py inside NS (bounded), like run: $rc,
# $out (one JSON object per reply), $err.
pxe() {
	_ns=$1
	shift
	run ip netns exec "$_ns" "$PY" "$DHCP_DIR/pxe_client.py" "$@"
}

# replies EXPR: evaluates the Python expression EXPR with r = the list of
# replies in $out (and json, so EXPR can print JSON).
replies() {
	printf '%s\n' "$out" | "$PY" -c 'import json, sys
r = [json.loads(l) for l in sys.stdin if l.startswith("{")]
print(eval(sys.argv[1]))' "$1"
}

# ---- real clients ----

# The scripts are wrapped: dhclient runs its script with a fresh
# environment, so the output prefix is written into a wrapper.
_client_wrapper() {
	printf "#!/bin/sh\nIB_DHCP_OUT='%s' exec /bin/sh '%s' \"\$@\"\n" "$1" "$2" >"$1.sh"
	chmod +x "$1.sh"
}

# dhclient_conf FILE: a dhclient.conf that asks for the options the
# tests check, 121 included.
dhclient_conf() {
	cat >"$1" <<'EOF'
option rfc3442-classless-static-routes code 121 = array of unsigned integer 8;
request subnet-mask, broadcast-address, routers, domain-name,
	domain-name-servers, domain-search, host-name,
	rfc3442-classless-static-routes, ntp-servers, dhcp-lease-time,
	dhcp-renewal-time, dhcp-rebinding-time;
timeout 60;
retry 5;
EOF
}

# dhclient_args TAG: the arguments that keep dhclient off the host's
# files (script, lease file, pid file, config), all under $IB_TMP/TAG.*.
dhclient_args() {
	echo "-4 -sf $IB_TMP/$1.sh -lf $IB_TMP/$1.leases -pf $IB_TMP/$1.pid -cf $IB_TMP/$1.conf"
}

# dhclient_start NS IFACE TAG [ARGS...]: dhclient in the foreground (-d)
# in the background, inside NS; its output in $IB_TMP/TAG.log, what it
# got in $IB_TMP/TAG.env (see dhclient-script.sh). $NS_PID is its PID.
dhclient_start() {
	_ns=$1
	_if=$2
	_t=$3
	shift 3
	_client_wrapper "$IB_TMP/$_t" "$DHCP_DIR/dhclient-script.sh"
	dhclient_conf "$IB_TMP/$_t.conf"
	ns_bg "$_ns" dhclient -d $(dhclient_args "$_t") "$@" "$_if" >"$IB_TMP/$_t.log" 2>&1 </dev/null
}

# dhclient_release NS IFACE TAG: dhclient -r with the same files: stops
# the running dhclient (its pid file) and sends a RELEASE.
dhclient_release() {
	run ip netns exec "$1" dhclient -r -v $(dhclient_args "$3") "$2"
}

# udhcpc_run NS IFACE TAG [ARGS...]: busybox udhcpc until it has a lease
# (-q), at most ~20 s; output in $IB_TMP/TAG.log, results in
# $IB_TMP/TAG.env (see udhcpc-script.sh). Sets $rc.
udhcpc_run() {
	_ns=$1
	_if=$2
	_t=$3
	shift 3
	_client_wrapper "$IB_TMP/$_t" "$DHCP_DIR/udhcpc-script.sh"
	timeout -k 5 30 ip netns exec "$_ns" udhcpc -f -q -n -i "$_if" -s "$IB_TMP/$_t.sh" \
		-p "$IB_TMP/$_t.pid" -t 20 -T 1 \
		-O staticroutes -O search -O domain -O hostname -O dns -O router -O subnet \
		-O broadcast -O lease "$@" >"$IB_TMP/$_t.log" 2>&1 </dev/null
	rc=$?
}

# envval TAG KEY: KEY's value in $IB_TMP/TAG.env.
envval() {
	sed -n "s/^$2=//p" "$IB_TMP/$1.env" 2>/dev/null
}

# ---- dnsmasq, an independent server ----

# dnsmasq_start NS IFACE ARGS...: dnsmasq as a DHCP server only (no DNS:
# --port=0) on IFACE inside NS, in the foreground, its leases in
# $IB_TMP/dnsmasq.leases and its log in $IB_TMP/dnsmasq.log; waits until
# it listens on port 67. $DNSMASQ_PID is its PID.
dnsmasq_start() {
	_ns=$1
	_if=$2
	shift 2
	: >"$IB_TMP/dnsmasq.leases"
	ns_bg "$_ns" /usr/sbin/dnsmasq --conf-file=/dev/null --port=0 --no-daemon \
		--interface="$_if" --bind-interfaces --no-ping --log-dhcp --user=root \
		--dhcp-leasefile="$IB_TMP/dnsmasq.leases" "$@" >"$IB_TMP/dnsmasq.log" 2>&1 </dev/null
	DNSMASQ_PID=$NS_PID
	wait_for 10 udp_listens "$_ns" 67 && return 0
	diag "dnsmasq did not start:"
	diag "$(tail -n 20 "$IB_TMP/dnsmasq.log")"
	return 1
}
# udp_listens NS PORT: something in NS listens on UDP PORT.
udp_listens() { ip netns exec "$1" ss -Hlun "sport = :$2" 2>/dev/null | grep -q .; }

# dnsmasq_host_args NAME MAC IP: the dnsmasq options that give one host
# what hw_doc gives a Hardware (a tag per host).
dnsmasq_host_args() {
	_tag=$1
	echo "--dhcp-host=$2,set:$_tag,$3,$_tag,$HW_LEASE"
	echo "--dhcp-option=tag:$_tag,option:router,$HW_GW"
	[ -z "$HW_DNS" ] || echo "--dhcp-option=tag:$_tag,option:dns-server,$HW_DNS"
	[ -z "$HW_NTP" ] || echo "--dhcp-option=tag:$_tag,option:ntp-server,$HW_NTP"
	[ -z "$HW_DOMAIN" ] || echo "--dhcp-option=tag:$_tag,option:domain-name,$HW_DOMAIN"
	[ -z "$HW_DOMAIN" ] || echo "--dhcp-option=tag:$_tag,option:domain-search,$HW_DOMAIN"
	if [ -n "$HW_ROUTES" ]; then
		_r=
		set -- $HW_ROUTES
		while [ $# -ge 2 ]; do
			_r="$_r,$1,$2"
			shift 2
		done
		echo "--dhcp-option=tag:$_tag,option:classless-static-route$_r"
	fi
}
