/* net — the listening UDP sockets of the daemon's datagram services
 * (TFTP, syslog). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Binds a non-blocking IPv4 UDP socket to listen, "host:port" with a
 * numeric port (host empty: every address), for the service what (named
 * in errors: "TFTP", "syslog"); with pktinfo, IP_PKTINFO is on so that
 * each datagram says the local address it came to. Returns the fd, or a
 * negative errno with a message naming the address in err (errlen
 * bytes): -EINVAL for a listen without a port, -EADDRNOTAVAIL when the
 * host does not resolve, else the socket's error. */
int net_bind_udp4(const char *listen, const char *what, bool pktinfo, char *err, size_t errlen);
