#!/bin/sh
# dhclient-script.sh — the -sf script the DHCP tests give ISC dhclient, in
# place of /sbin/dhclient-script, which would rewrite the host's
# /etc/resolv.conf and host name (the UTS namespace and /etc are shared
# with the host; only the network is the test's).
#
# dhclient gives its script a fresh environment, not the caller's: the test
# writes a two-line wrapper that sets IB_DHCP_OUT (a path prefix in the
# test's temporary directory) and execs this file. Inside the client's
# network namespace (dhclient runs there), it applies the address, the
# router (option 3) and the classless static routes (option 121) with ip,
# and writes what it got to $IB_DHCP_OUT.env, as key=value lines that a
# test can compare between clients (udhcpc-script.sh writes the same
# keys). Every reason it is called with is appended to
# $IB_DHCP_OUT.reasons.
#
# Option 3 and 121 are both applied, although RFC 3442 says that a client
# that takes 121 ignores 3: the point is to see that both arrived.

out=${IB_DHCP_OUT:?IB_DHCP_OUT must be set by the wrapper}
echo "${reason:-none}" >>"$out.reasons"

# mask2len 255.255.255.0 -> 24
mask2len() {
	_n=0
	_ifs=$IFS
	IFS=.
	for _o in $1; do
		case $_o in
		255) _n=$((_n + 8)) ;; 254) _n=$((_n + 7)) ;; 252) _n=$((_n + 6)) ;;
		248) _n=$((_n + 5)) ;; 240) _n=$((_n + 4)) ;; 224) _n=$((_n + 3)) ;;
		192) _n=$((_n + 2)) ;; 128) _n=$((_n + 1)) ;;
		esac
	done
	IFS=$_ifs
	echo "$_n"
}

# rfc3442 "16 10 99 192 168 77 254 ..." (dhclient's array of unsigned
# integer 8) -> lines "10.99.0.0/16 192.168.77.254"
rfc3442() {
	set -- $1
	while [ $# -gt 0 ]; do
		_w=$1
		shift
		_nb=$(((_w + 7) / 8))
		_d=
		_i=0
		while [ $_i -lt 4 ]; do
			if [ $_i -lt $_nb ]; then
				_d="$_d${_d:+.}$1"
				shift
			else
				_d="$_d${_d:+.}0"
			fi
			_i=$((_i + 1))
		done
		[ $# -ge 4 ] || return 1
		echo "$_d/$_w $1.$2.$3.$4"
		shift 4
	done
}

case ${reason:-} in
PREINIT)
	ip link set dev "$interface" up
	;;
BOUND | RENEW | REBIND | REBOOT)
	if [ -n "${old_ip_address:-}" ] && [ "$old_ip_address" != "$new_ip_address" ]; then
		ip -4 addr flush dev "$interface"
	fi
	len=$(mask2len "${new_subnet_mask:-255.255.255.255}")
	ip -4 addr replace "$new_ip_address/$len" ${new_broadcast_address:+broadcast "$new_broadcast_address"} \
		dev "$interface"
	for r in ${new_routers:-}; do
		ip route replace default via "$r" dev "$interface"
		break
	done
	routes=
	if [ -n "${new_rfc3442_classless_static_routes:-}" ]; then
		routes=$(rfc3442 "$new_rfc3442_classless_static_routes")
		printf '%s\n' "$routes" | while read -r dst gw; do
			[ -n "$dst" ] || continue
			if [ "$gw" = 0.0.0.0 ]; then
				ip route replace "$dst" dev "$interface"
			else
				ip route replace "$dst" via "$gw" dev "$interface"
			fi
		done
	fi
	{
		echo "client=dhclient"
		echo "reason=$reason"
		echo "interface=$interface"
		echo "ip=$new_ip_address"
		echo "mask=${new_subnet_mask:-}"
		echo "router=${new_routers:-}"
		echo "dns=${new_domain_name_servers:-}"
		echo "hostname=${new_host_name:-}"
		echo "domain=${new_domain_name:-}"
		echo "search=${new_domain_search:-}"
		echo "routes=$(printf '%s' "$routes" | tr '\n' ',')"
		echo "lease=${new_dhcp_lease_time:-}"
		echo "server=${new_dhcp_server_identifier:-}"
		echo "broadcast=${new_broadcast_address:-}"
	} >"$out.env.tmp" && mv "$out.env.tmp" "$out.env"
	;;
EXPIRE | FAIL | RELEASE | STOP)
	ip -4 addr flush dev "$interface"
	;;
esac
exit 0
