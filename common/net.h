/* net — resolving and binding the daemon's listening sockets (HTTP,
 * TFTP, syslog), and lists of address prefixes. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Splits "host:port", "[v6]:port" or ":port" (host "" or "*" = any
 * address; the port 1-65535). host gets the host without brackets.
 * Returns 0 or -EINVAL. */
int net_split_hostport(const char *s, char *host, size_t hostlen, uint16_t *ret_port);

#define NET_REUSEADDR 1u /* SO_REUSEADDR */
#define NET_PKTINFO 2u   /* IP_PKTINFO: each datagram says the local address it came to */
#define NET_REUSEPORT 4u /* SO_REUSEPORT: several sockets of this user share the address */

/* Binds a non-blocking socket of socktype (SOCK_STREAM, SOCK_DGRAM) to
 * hostport, resolved in family (AF_INET, or AF_UNSPEC for either), with
 * the options of flags. what names the service in errors ("TFTP"; NULL:
 * none). Returns the fd (not yet listening), or a negative errno with a
 * message naming the address in err (errlen bytes): -EINVAL for a
 * malformed hostport, -EADDRNOTAVAIL when the host does not resolve, else
 * the socket's error. */
int net_bind(const char *hostport, int family, int socktype, unsigned flags, const char *what,
	     char *err, size_t errlen);

#define NET_MAX_CIDRS 64 /* prefixes in a struct net_cidrs */

/* A bounded list of IPv4 and IPv6 prefixes, stored inline (nothing to
 * free): the configuration reads one (metadata.trusted_proxies), the
 * metadata part matches addresses against it. */
struct net_cidrs {
	unsigned n;
	struct net_cidr {
		uint8_t family;   /* AF_INET or AF_INET6 */
		uint8_t prefix;   /* 0..32 or 0..128 */
		uint8_t addr[16]; /* network byte order; host bits zero */
	} e[NET_MAX_CIDRS];
};
