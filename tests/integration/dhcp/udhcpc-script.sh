#!/bin/sh
# udhcpc-script.sh — the -s script the DHCP tests give busybox udhcpc, in
# place of /etc/udhcpc/default.script (which would rewrite the host's
# /etc/resolv.conf). Run through a wrapper that sets IB_DHCP_OUT, like
# dhclient-script.sh, whose key=value lines ($IB_DHCP_OUT.env) it writes
# too, so that a test compares both clients with the same checks. It
# applies the address, the router (option 3) and the static routes
# (option 121, udhcpc's $staticroutes: "10.99.0.0/16 192.168.77.254 ...")
# with ip, inside the client's namespace. $1 (the event) is appended to
# $IB_DHCP_OUT.reasons.

out=${IB_DHCP_OUT:?IB_DHCP_OUT must be set by the wrapper}
reason=${1:-none}
echo "$reason" >>"$out.reasons"

case $reason in
deconfig)
	ip link set dev "$interface" up
	ip -4 addr flush dev "$interface"
	;;
bound | renew)
	ip -4 addr replace "$ip/${mask:-32}" ${broadcast:+broadcast "$broadcast"} dev "$interface"
	for r in ${router:-}; do
		ip route replace default via "$r" dev "$interface"
		break
	done
	routes=
	if [ -n "${staticroutes:-}" ]; then
		set -- $staticroutes
		while [ $# -ge 2 ]; do
			if [ "$2" = 0.0.0.0 ]; then
				ip route replace "$1" dev "$interface"
			else
				ip route replace "$1" via "$2" dev "$interface"
			fi
			routes="$routes$1 $2,"
			shift 2
		done
	fi
	{
		echo "client=udhcpc"
		echo "reason=$reason"
		echo "interface=$interface"
		echo "ip=$ip"
		echo "mask=${subnet:-}"
		echo "router=${router:-}"
		echo "dns=${dns:-}"
		echo "hostname=${hostname:-}"
		echo "domain=${domain:-}"
		echo "search=${search:-}"
		echo "routes=$routes"
		echo "lease=${lease:-}"
		echo "server=${serverid:-}"
		echo "broadcast=${broadcast:-}"
	} >"$out.env.tmp" && mv "$out.env.tmp" "$out.env"
	;;
esac
exit 0
