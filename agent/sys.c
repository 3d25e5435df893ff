/* sys — the agent's small system helpers: logging to stderr, clocks, a
 * sleep that SIGTERM cuts short, numeric addresses, and the syslog lines
 * of each action's output.
 *
 * DESIGN: the agent is linked statically for an initramfs, where glibc's
 * getaddrinfo() would need the NSS modules it cannot load: addresses are
 * numeric (IPv4, [IPv6], or "localhost"), as HookOS's grpc_authority and
 * syslog_host are in practice. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent-internal.h"

volatile sig_atomic_t agent_stop;
int agent_verbose;

void agent_log(int level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	if (level > agent_verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ironbell-agent: %s\n", line);
}

uint64_t agent_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t agent_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void agent_sleep_ms(uint64_t ms)
{
	uint64_t end = agent_mono_ms() + ms;
	while (!agent_stop) {
		uint64_t now = agent_mono_ms();
		if (now >= end)
			break;
		uint64_t left = end - now;
		poll(NULL, 0, left > 200 ? 200 : (int)left);
	}
}

int agent_addr_parse(const char *hostport, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *port;
	size_t hl;
	if (hostport[0] == '[') {
		const char *end = strchr(hostport, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		hl = (size_t)(end - hostport - 1);
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, hostport + 1, hl);
		port = end + 2;
	} else {
		port = strrchr(hostport, ':');
		if (!port)
			return -EINVAL;
		hl = (size_t)(port - hostport);
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, hostport, hl);
		port++;
	}
	host[hl] = '\0';
	unsigned long pn = 0;
	if (!*port || strlen(port) > 5)
		return -EINVAL;
	for (const char *c = port; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		pn = pn * 10 + (unsigned long)(*c - '0');
	}
	if (pn == 0 || pn > 65535)
		return -EINVAL;
	if (strcmp(host, "localhost") == 0)
		memcpy(host, "127.0.0.1", 10);
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)pn);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)pn);
		*len = sizeof(*s6);
		return 0;
	}
	return -EINVAL;
}
