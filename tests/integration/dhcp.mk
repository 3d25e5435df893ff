# The DHCP server against real clients and peers, each test in network
# namespaces of its own (root only: as another user, or where `ip netns
# add` fails, each test skips). dhclient, udhcpc and nmap get their
# reservations (test_dhcp_clients); the PXE / iPXE / UEFI HTTP Boot
# decisions on the wire, from a scapy client (test_dhcp_pxe); ProxyDHCP
# beside dnsmasq (test_dhcp_proxy); a dhcrelay between two subnets
# (test_dhcp_relay); RELEASE, expiry, kill -9 during a stream of DORAs and
# a flood of malformed datagrams (test_dhcp_leases). Needs
# isc-dhcp-client, udhcpc, nmap, python3-scapy, dnsmasq-base,
# isc-dhcp-relay and tcpdump; tests/integration/dhcp/ holds the scapy
# client, the clients' scripts and the shared shell helpers.
DHCP_INTEGRATION_TESTS = \
	tests/integration/test_dhcp_clients.sh \
	tests/integration/test_dhcp_pxe.sh \
	tests/integration/test_dhcp_proxy.sh \
	tests/integration/test_dhcp_relay.sh \
	tests/integration/test_dhcp_leases.sh
TESTS += $(DHCP_INTEGRATION_TESTS)
EXTRA_DIST += $(DHCP_INTEGRATION_TESTS) \
	tests/netns.sh \
	tests/integration/dhcp/common.sh \
	tests/integration/dhcp/pxe_client.py \
	tests/integration/dhcp/dhclient-script.sh \
	tests/integration/dhcp/udhcpc-script.sh
