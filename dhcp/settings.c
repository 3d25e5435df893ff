/* settings — the dhcp: section of the configuration snapshot turned into
 * the policy's struct dhcp_policy_config.
 *
 * DESIGN: the policy is pure and knows nothing of ironbell.yaml; the server
 * thread calls this once per interface at start (the receiving interface's
 * address is the last fallback of option 54), so no packet pays for it.
 * Fallbacks, as ironbell.yaml(5) states them: server_address → the
 * interface's address; public_address → server_address; tftp_address →
 * public_address; http_base_url → http://<public_address>:<port of
 * http.listen>. The dhcp.arch entries replace or extend the built-in
 * architecture table. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config/conf.h"
#include "dhcp/dhcp-policy.h"

_Static_assert((int)CONFIG_DHCP_RESERVATION == (int)DHCP_MODE_RESERVATION &&
		       (int)CONFIG_DHCP_PROXY == (int)DHCP_MODE_PROXY &&
		       (int)CONFIG_DHCP_AUTO_PROXY == (int)DHCP_MODE_AUTO_PROXY,
	       "config and policy DHCP modes must match");
_Static_assert(CONFIG_BINARY_MAX <= DHCP_HOST_BINARY_MAX, "binary names must fit the policy");

/* The port of a "host:port", "[v6]:port" or ":port" listen address, or 0. */
static unsigned listen_port(const char *listen)
{
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	unsigned port = 0;
	if (!colon || !colon[1])
		return 0;
	for (const char *p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9' || port > 65535)
			return 0;
		port = port * 10 + (unsigned)(*p - '0');
	}
	return port <= 65535 ? port : 0;
}

static int set_arch(struct dhcp_policy_config *p, uint16_t code, const char *binary)
{
	size_t i;
	for (i = 0; i < p->narches && p->arches[i].arch != code; i++)
		;
	if (i == p->narches) {
		if (p->narches == DHCP_POLICY_MAX_ARCHES)
			return -E2BIG;
		p->narches++;
	}
	p->arches[i].arch = code;
	snprintf(p->arches[i].binary, sizeof(p->arches[i].binary), "%s", binary);
	return 0;
}

int dhcp_policy_config_from(const struct ib_config *c, uint32_t iface_ip,
			    struct dhcp_policy_config *ret, char *err, size_t errlen)
{
	struct dhcp_policy_config p;
	uint32_t server = c->dhcp.server_address ? c->dhcp.server_address : iface_ip;
	uint32_t public_ = c->dhcp.public_address ? c->dhcp.public_address : server;
	char base[DHCP_POLICY_URL_MAX + 1];
	int n;

	if (!server) {
		snprintf(err, errlen,
			 "no address for DHCP option 54: set dhcp.server_address or give the "
			 "interface an IPv4 address");
		return -EADDRNOTAVAIL;
	}
	dhcp_policy_config_default(&p, public_);
	p.mode = (enum dhcp_mode)c->dhcp.mode;
	p.server_id = server;
	p.http_ip = public_;
	p.tftp_ip = c->dhcp.tftp_address ? c->dhcp.tftp_address : public_;
	p.syslog_ip = c->dhcp.syslog_address;
	p.lease_time = c->dhcp.lease_time;
	p.lease_reuse = c->dhcp.lease_reuse;
	for (size_t i = 0; i < c->dhcp.arch.n; i++)
		if (set_arch(&p, c->dhcp.arch.e[i].code, c->dhcp.arch.e[i].binary) < 0) {
			snprintf(err, errlen, "dhcp.arch: more than %d architectures in all",
				 DHCP_POLICY_MAX_ARCHES);
			return -E2BIG;
		}
	if (c->dhcp.http_base_url) {
		n = snprintf(base, sizeof(base), "%s", c->dhcp.http_base_url);
		/* "https://h/" + "/ipxe/..." would give "//": drop one slash. */
		while (n > 0 && base[n - 1] == '/')
			base[--n] = '\0';
	} else {
		unsigned port = listen_port(c->http.listen);
		n = snprintf(base, sizeof(base), "http://%u.%u.%u.%u:%u", public_ >> 24,
			     (public_ >> 16) & 255, (public_ >> 8) & 255, public_ & 255,
			     port ? port : 7080);
	}
	int a = snprintf(p.script_url, sizeof(p.script_url), "%s/ipxe/script/{mac}/auto.ipxe", base);
	int b = snprintf(p.binary_url, sizeof(p.binary_url), "%s/ipxe/binary/{mac}/{binary}", base);
	if (n < 0 || a < 0 || b < 0 || (size_t)a >= sizeof(p.script_url) ||
	    (size_t)b >= sizeof(p.binary_url)) {
		snprintf(err, errlen, "dhcp.http_base_url: too long for the boot URLs made from it");
		return -ENAMETOOLONG;
	}
	*ret = p;
	return 0;
}
