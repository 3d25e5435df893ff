/* net — resolving and binding the daemon's listening sockets: TCP for the
 * HTTP listeners, UDP for TFTP and syslog.
 *
 * DESIGN: the configuration has already checked the form of each listen
 * address (daemon/config/config-types.c); this splits it ("host:port",
 * "[v6]:port", ":port"), resolves the host (numeric or a name) in the
 * family asked and binds, so that a failure names the address (and the
 * service, when given) in one message.
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
#include "common/num.h"

int net_split_hostport(const char *s, char *host, size_t hostlen, uint16_t *ret_port)
{
	const char *h, *colon;
	size_t hl;
	uint64_t port;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
		if (hl == 0)
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		h = s;
		hl = (size_t)(colon - s);
		if (memchr(h, ':', hl)) /* a bare IPv6 address needs brackets */
			return -EINVAL;
	}
	if (num_parse_u64_str(colon + 1, 65535, &port) < 0 || port == 0)
		return -EINVAL;
	if (hl >= hostlen)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (strcmp(host, "*") == 0)
		host[0] = '\0';
	*ret_port = (uint16_t)port;
	return 0;
}

int net_bind(const char *hostport, int family, int socktype, unsigned flags, const char *what,
	     char *err, size_t errlen)
{
	char host[256], port[8], svc[64] = "";
	uint16_t p;
	struct addrinfo hints = { .ai_family = family,
				  .ai_socktype = socktype,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV },
			*ai = NULL;
	int fd, one = 1, e;

	if (what)
		snprintf(svc, sizeof(svc), " (%s)", what);
	if (net_split_hostport(hostport, host, sizeof(host), &p) < 0) {
		snprintf(err, errlen, "cannot listen on \"%s\"%s: not a host:port address", hostport,
			 svc);
		return -EINVAL;
	}
	snprintf(port, sizeof(port), "%u", p);
	if ((e = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai)) != 0) {
		snprintf(err, errlen, "cannot listen on %s%s: %s", hostport, svc, gai_strerror(e));
		return -EADDRNOTAVAIL;
	}
	fd = socket(ai->ai_family, socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    ((flags & NET_REUSEADDR) &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) ||
	    ((flags & NET_REUSEPORT) &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
	    ((flags & NET_PKTINFO) && setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot listen on %s%s: %s", hostport, svc, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return e;
	}
	freeaddrinfo(ai);
	return fd;
}
