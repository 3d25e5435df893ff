/* link — the IPv4 subnets of each interface, for the check that a directly
 * attached client's reservation is on the network its request came from
 * (dhcp_policy's link argument).
 *
 * DESIGN: the table is read whole with getifaddrs(3) and kept until a
 * netlink message of the IPv4 address group (RTMGRP_IPV4_IFADDR) says an
 * address was added or removed; the messages themselves are not parsed,
 * only drained: any of them marks the table stale, and the next lookup
 * reads it again. Addresses change seldom, lookups happen per packet: a
 * lookup is a scan of a few entries. Where netlink is refused, the table
 * is read again once it is DHCP_LINKS_MAX_AGE seconds old; a read that
 * fails leaves the last table in use, and is tried again as seldom.
 *
 * Owned by the DHCP thread; no lock. */
#include "config.h"

#include <errno.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/common.h"
#include "dhcp/dhcp-policy.h"
#include "dhcp/server-internal.h"

#define LINKS_DRAIN_MAX 64 /* netlink reads per wakeup */

struct link_entry {
	int ifindex;
	char name[IF_NAMESIZE];
	bool overflow; /* more subnets than DHCP_LINK_MAX_NETS: not checked */
	struct dhcp_link link;
};

struct dhcp_links {
	int nl_fd;
	bool stale;
	bool failing;     /* the last read failed: warned once */
	uint64_t read_at; /* CLOCK_MONOTONIC ns of the last read attempt */
	struct link_entry *e;
	size_t n, cap;
	struct dhcp_link none;
};

static struct link_entry *entry_for(struct link_entry **tab, size_t *n, size_t *cap, int ifindex,
				    const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if ((*tab)[i].ifindex == ifindex)
			return &(*tab)[i];
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct link_entry *e = realloc(*tab, c * sizeof(*e));
		if (!e)
			return NULL;
		*tab = e;
		*cap = c;
	}
	struct link_entry *e = &(*tab)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->ifindex = ifindex;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return e;
}

static void add_net(struct link_entry *e, uint32_t ip, uint32_t mask)
{
	struct dhcp_link_net net = { ip & mask, mask };
	for (size_t i = 0; i < e->link.n; i++)
		if (e->link.net[i].addr == net.addr && e->link.net[i].mask == net.mask)
			return;
	if (e->link.n < DHCP_LINK_MAX_NETS)
		e->link.net[e->link.n++] = net;
	else
		e->overflow = true;
}

/* Reads the table again. On failure the one read before stays in use,
 * and the next try comes DHCP_LINKS_MAX_AGE seconds later. */
static void links_read(struct dhcp_links *l)
{
	struct ifaddrs *ifa = NULL;
	struct link_entry *tab = NULL;
	size_t n = 0, cap = 0;

	l->read_at = now_mono_ns();
	l->stale = false;
	if (getifaddrs(&ifa) < 0) {
		if (!l->failing)
			log_warn("dhcp", "reading the interfaces' addresses: %s; the subnets read "
					 "before stay in use, and it is tried again every %d s",
				 strerror(errno), DHCP_LINKS_MAX_AGE);
		l->failing = true;
		l->stale = true;
		return;
	}
	for (struct ifaddrs *a = ifa; a; a = a->ifa_next) {
		if (!a->ifa_addr || !a->ifa_netmask || a->ifa_addr->sa_family != AF_INET ||
		    !a->ifa_name)
			continue;
		uint32_t ip = ntohl(((const struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr);
		uint32_t mask = ntohl(((const struct sockaddr_in *)a->ifa_netmask)->sin_addr.s_addr);
		/* A /32 names no subnet; a link-local address (RFC 3927) is
		 * not one that clients get reservations on. */
		if (mask == 0xffffffffu || (ip & 0xffff0000u) == 0xa9fe0000u)
			continue;
		/* An address with a label ("eth0:1") is the interface's. */
		char name[IF_NAMESIZE];
		snprintf(name, sizeof(name), "%s", a->ifa_name);
		name[strcspn(name, ":")] = '\0';
		unsigned idx = if_nametoindex(name);
		struct link_entry *e;
		if (!idx || !(e = entry_for(&tab, &n, &cap, (int)idx, name)))
			continue;
		add_net(e, ip, mask);
	}
	freeifaddrs(ifa);
	for (size_t i = 0; i < n; i++)
		if (tab[i].overflow)
			log_warn("dhcp", "interface %s has more than %d IPv4 subnets: its clients' "
					 "subnets are not checked",
				 tab[i].name, DHCP_LINK_MAX_NETS);
	free(l->e);
	l->e = tab;
	l->n = n;
	l->cap = cap;
	if (l->failing)
		log_info("dhcp", "the interfaces' addresses are read again");
	l->failing = false;
	log_debug("dhcp", "interface subnets read: %zu interfaces with IPv4 subnets", n);
}

int dhcp_links_new(struct dhcp_links **ret)
{
	struct dhcp_links *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (l->nl_fd >= 0) {
		struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_IFADDR };
		if (bind(l->nl_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			close(l->nl_fd);
			l->nl_fd = -1;
		}
	}
	if (l->nl_fd < 0)
		log_warn("dhcp", "no netlink socket for address changes (%s): the interfaces' "
				 "subnets are read again every %d s",
			 strerror(errno), DHCP_LINKS_MAX_AGE);
	links_read(l);
	*ret = l;
	return 0;
}

void dhcp_links_free(struct dhcp_links *l)
{
	if (!l)
		return;
	if (l->nl_fd >= 0)
		close(l->nl_fd);
	free(l->e);
	free(l);
}

int dhcp_links_fd(const struct dhcp_links *l)
{
	return l ? l->nl_fd : -1;
}

void dhcp_links_changed(struct dhcp_links *l)
{
	char buf[8192];

	/* Bounded: the table is read again anyway. ENOBUFS (messages lost to
	 * an overrun) means the same: read it again. */
	for (int i = 0; i < LINKS_DRAIN_MAX; i++)
		if (recv(l->nl_fd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno != ENOBUFS)
			break;
	l->stale = true;
}

const struct dhcp_link *dhcp_links_get(struct dhcp_links *l, int ifindex, const char **ret_name)
{
	/* A failed read is tried again only once it is old, and so is the
	 * table when no netlink says when it changes; the clock is read
	 * only then. */
	if (l->stale || l->nl_fd < 0) {
		bool due = now_mono_ns() - l->read_at > DHCP_LINKS_MAX_AGE * 1000000000ull;
		if ((l->stale && (!l->failing || due)) || (l->nl_fd < 0 && due))
			links_read(l);
	}
	*ret_name = "";
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].ifindex == ifindex) {
			*ret_name = l->e[i].name;
			return l->e[i].overflow ? &l->none : &l->e[i].link;
		}
	return &l->none;
}

void dhcp_link_str(const struct dhcp_link *link, char *out, size_t cap)
{
	size_t len = 0;

	if (cap)
		out[0] = '\0';
	for (size_t i = 0; i < link->n && len < cap; i++) {
		char a[16];
		dhcp_ip_str(link->net[i].addr, a);
		int k = snprintf(out + len, cap - len, "%s%s/%d", i ? ", " : "", a,
				 __builtin_popcount(link->net[i].mask));
		if (k < 0)
			break;
		len += (size_t)k;
	}
}
