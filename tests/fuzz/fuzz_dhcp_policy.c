/* fuzz_dhcp_policy — the DHCP server's decision (dhcp/policy.c) on any
 * request that parses. The input is a message as it would arrive. Each
 * one is decided in every mode, on both ports, for a client with and
 * without Hardware (a host with every boot field set, one with allowPXE
 * unset and an explicit boot file, none), and the target aborts when:
 *  - dhcp_policy fails for a reason other than its documented ones;
 *  - a decision to answer cannot be written (unless a relay's option 82
 *    alone is too large), or its bytes do not parse
 *    back as a BOOTREPLY of the decided type for the client's xid;
 *  - a reservation-mode OFFER or lease ACK carries an address other than
 *    the host's, or a proxy reply carries any address;
 *  - the destination is not one RFC 2131 section 4.1 allows for the
 *    request (a relayed request must go back to its giaddr);
 *  - lease reuse (dhcp_lease_reuse) of a lease that was decided hands out
 *    one longer than decided or shorter than 51% of it, or leaves a reply
 *    that does not write or whose option 51 says otherwise.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp-policy.h"
#include "tests/fuzz/fuzz.h"

static struct dhcp_packet req, back;
static struct dhcp_reply rep;
static struct dhcp_policy_config cfg;
static struct dhcp_host hosts[2];
static uint8_t out[DHCP_MAX_PACKET];

static void hosts_init(const uint8_t mac[6])
{
	struct dhcp_host *h = &hosts[0];
	memset(hosts, 0, sizeof(hosts));
	snprintf(h->name, sizeof(h->name), "m1");
	snprintf(h->namespace_, sizeof(h->namespace_), "default");
	h->ip = 0xc0a84d15;
	h->netmask = 0xffffff00;
	h->gateway = 0xc0a84d01;
	h->dns[h->ndns++] = 0xc0a84d35;
	h->ntp[h->nntp++] = 0xc0a84d01;
	snprintf(h->hostname, sizeof(h->hostname), "m1");
	snprintf(h->domain, sizeof(h->domain), "example.test");
	h->vlan_id = -1;
	h->routes[h->nroutes++] = (struct dhcp_route){ 0x0a630000, 16, 0xc0a84dfe };
	h->allow_pxe = DHCP_TRUE;
	memcpy(h->mac, mac, 6);

	hosts[1] = hosts[0];
	h = &hosts[1];
	h->allow_pxe = DHCP_UNSET;
	h->lease_time = UINT32_MAX;
	snprintf(h->tftp_server_name, sizeof(h->tftp_server_name), "192.0.2.7");
	snprintf(h->boot_file_name, sizeof(h->boot_file_name), "pxelinux.0");
}

/* The subnets of the request's interface: none, the reservation's
 * (192.168.77.0/24) among others, and only others; and (NULL) not known. */
static const struct dhcp_link links[] = {
	{ 0 },
	{ .n = 2, .net = { { 0x0a000000, 0xff000000 }, { 0xc0a84d00, 0xffffff00 } } },
	{ .n = 1, .net = { { 0x0a000000, 0xff000000 } } },
};
#define NLINKS (sizeof(links) / sizeof(links[0]))

/* Lease reuse of the decision d, with a lease on disk of the host's
 * address whose age and time left come from the request's xid: a lease
 * handed out is never longer than the one decided nor shorter than 51% of
 * it, and the reply still writes, with 51 saying so. */
static void check_reuse(const struct dhcp_host *h, struct dhcp_decision *d)
{
	const int64_t now = 1700000000;
	uint32_t granted = d->lease_time, t = 0;
	struct dhcp_lease_mark m = { h->ip, now - (int64_t)(req.xid & 0xffff),
				     now + (int64_t)(req.xid >> 16) * 16 };
	/* The latest expiry sweep, either side of the clock. */
	const int64_t expired_by = now + (int64_t)(int16_t)req.flags * 16;
	enum dhcp_bad bad;

	cfg.lease_reuse = req.secs % (DHCP_LEASE_REUSE_MAX + 2);
	if (req.xid == 0xffffffffu)
		m.expires = DHCP_INFINITE_EXPIRY;
	int r = dhcp_lease_reuse(&m, &cfg, now, expired_by, &rep, d);
	cfg.lease_reuse = 0;
	if (r < 0 || r > 1)
		abort();
	if (r == 0) {
		if (d->lease_time != granted)
			abort();
		return;
	}
	if (d->lease_time > granted || (uint64_t)d->lease_time * 100 < (uint64_t)granted * 51 ||
	    (granted == UINT32_MAX) != (m.expires == DHCP_INFINITE_EXPIRY))
		abort();
	/* Never past the lease's end, by the clock or by the last sweep. */
	if (granted != UINT32_MAX &&
	    (int64_t)d->lease_time > m.expires - (expired_by > now ? expired_by : now))
		abort();
	int len = dhcp_write(&rep, out, sizeof(out), NULL);
	if (len < 0)
		return; /* as above: a relay's option 82 alone */
	if (dhcp_parse(out, (size_t)len, &back, &bad) < 0 ||
	    dhcp_opt_u32(&back, DHCP_OPT_LEASE_TIME, &t) < 0 || t != d->lease_time)
		abort();
}

static void check(uint16_t port, const struct dhcp_host *h, const struct dhcp_link *link)
{
	struct dhcp_decision d;
	enum dhcp_bad bad;
	int r = dhcp_policy(&req, port, h, link, &cfg, &rep, &d);

	if (r < 0) {
		/* only an over-long URL may fail, and this config has none */
		abort();
	}
	if (r == 0) {
		if (d.type != DHCP_NONE || !d.why)
			abort();
		return;
	}
	if (d.type != DHCP_OFFER && d.type != DHCP_ACK && d.type != DHCP_NAK)
		abort();
	int len = dhcp_write(&rep, out, sizeof(out), NULL);
	/* A relay's option 82 may be too large for any reply (the server
	 * counts the drop); nothing else may fail. */
	if (len == -EMSGSIZE && req.giaddr && dhcp_opt_present(&req, DHCP_OPT_RELAY_AGENT))
		return;
	if (len < 0)
		abort();
	if (dhcp_parse(out, (size_t)len, &back, &bad) < 0 || back.op != DHCP_BOOTREPLY ||
	    back.msg_type != d.type || back.xid != req.xid)
		abort();
	if (cfg.mode == DHCP_MODE_RESERVATION) {
		if (d.type != DHCP_NAK && back.yiaddr && (!h || back.yiaddr != h->ip))
			abort();
		/* No address for a directly attached client off its link
		 * that has none yet (a renewal, from ciaddr, is trusted). */
		if (!req.giaddr && h && dhcp_link_off(link, h->ip, h->netmask) && back.yiaddr &&
		    (req.msg_type == DHCP_DISCOVER ||
		     dhcp_opt_present(&req, DHCP_OPT_REQUESTED_IP)))
			abort();
	} else if (back.yiaddr) {
		abort();
	}
	if (req.giaddr && port != DHCP_PROXY_PORT &&
	    (d.dest != DHCP_DEST_RELAY || d.dest_ip != req.giaddr))
		abort();
	if (port == DHCP_PROXY_PORT && d.dest != DHCP_DEST_SOURCE)
		abort();
	if (h && d.lease_time)
		check_reuse(h, &d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum dhcp_bad bad;

	if (dhcp_parse(data, size, &req, &bad) < 0)
		return 0;
	hosts_init(req.chaddr);
	for (int mode = 0; mode < DHCP_MODE_MAX; mode++) {
		dhcp_policy_config_default(&cfg, 0xc0a84d01);
		cfg.mode = (enum dhcp_mode)mode;
		cfg.syslog_ip = 0xc0a84d01;
		for (int port = 0; port < 2; port++) {
			uint16_t p = port ? DHCP_PROXY_PORT : 67;
			for (size_t k = 0; k <= NLINKS; k++) {
				const struct dhcp_link *l = k < NLINKS ? &links[k] : NULL;
				check(p, &hosts[0], l);
				check(p, &hosts[1], l);
				check(p, NULL, l);
			}
		}
	}
	return 0;
}
