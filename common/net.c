/* net — the listening UDP sockets of the daemon's datagram services.
 *
 * DESIGN: the configuration has already checked the form of each listen
 * address (daemon/config-types.c); this only splits it at the last ':',
 * resolves the host (numeric or a name, IPv4: the DHCP, TFTP and syslog
 * services are IPv4 today) and binds, so that a failure names the
 * address and the service in one message.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/net.h"

int net_bind_udp4(const char *listen, const char *what, bool pktinfo, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(listen, ':');
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV },
			*ai = NULL;
	int fd, one = 1, e;

	if (!colon || (size_t)(colon - listen) >= sizeof(host)) {
		snprintf(err, errlen, "cannot listen on \"%s\" (%s): not a host:port address",
			 listen, what);
		return -EINVAL;
	}
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	if ((e = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai)) != 0) {
		snprintf(err, errlen, "cannot listen on %s (%s): %s", listen, what, gai_strerror(e));
		return -EADDRNOTAVAIL;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    (pktinfo && setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot listen on %s (%s): %s", listen, what, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return e;
	}
	freeaddrinfo(ai);
	return fd;
}
