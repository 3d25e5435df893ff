/* settings — the server's struct dhcp_settings turned into the policy's
 * struct dhcp_policy_config for one interface.
 *
 * DESIGN: the policy is pure and knows nothing of where its configuration
 * comes from. The daemon fills struct dhcp_settings from ironbell.yaml
 * (daemon/settings.c) with what it knows at start; what depends on the
 * interface a request comes in on is left as a gap, and the server thread
 * fills it here once per local address (the result is cached, so no
 * packet pays for it). The fallbacks, as ironbell.yaml(5) states them:
 * server_address → the interface's address; public_address →
 * server_address; tftp_address → public_address; http_base_url →
 * http://<public_address>:<port of http.listen>. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dhcp/dhcp.h"

int dhcp_policy_set_base_url(struct dhcp_policy_config *cfg, const char *base)
{
	char script[DHCP_POLICY_URL_MAX + 1], binary[DHCP_POLICY_URL_MAX + 1];
	size_t n = strlen(base);
	int a, b;

	while (n > 0 && base[n - 1] == '/')
		n--;
	if (n > DHCP_POLICY_URL_MAX)
		return -ENAMETOOLONG;
	a = snprintf(script, sizeof(script), "%.*s/ipxe/script/{mac}/auto.ipxe", (int)n, base);
	b = snprintf(binary, sizeof(binary), "%.*s/ipxe/binary/{mac}/{binary}", (int)n, base);
	if (a < 0 || b < 0 || (size_t)a >= sizeof(script) || (size_t)b >= sizeof(binary))
		return -ENAMETOOLONG;
	memcpy(cfg->script_url, script, (size_t)a + 1);
	memcpy(cfg->binary_url, binary, (size_t)b + 1);
	return 0;
}

int dhcp_settings_policy(const struct dhcp_settings *s, uint32_t iface_ip,
			 struct dhcp_policy_config *ret, char *err, size_t errlen)
{
	struct dhcp_policy_config p = s->policy, urls;
	char base[64];

	if (!p.server_id)
		p.server_id = iface_ip;
	if (!p.server_id) {
		snprintf(err, errlen,
			 "no address for DHCP option 54: set dhcp.server_address or give the "
			 "interface an IPv4 address");
		return -EADDRNOTAVAIL;
	}
	if (!p.http_ip)
		p.http_ip = p.server_id;
	if (!p.tftp_ip)
		p.tftp_ip = p.server_id;
	if (!p.script_url[0] || !p.binary_url[0]) {
		snprintf(base, sizeof(base), "http://%u.%u.%u.%u:%u", p.http_ip >> 24,
			 (p.http_ip >> 16) & 255, (p.http_ip >> 8) & 255, p.http_ip & 255,
			 s->http_port ? s->http_port : DHCP_DEFAULT_HTTP_PORT);
		if (dhcp_policy_set_base_url(&urls, base) < 0) {
			snprintf(err, errlen, "the boot URLs made from %s are too long", base);
			return -ENAMETOOLONG;
		}
		if (!p.script_url[0])
			memcpy(p.script_url, urls.script_url, sizeof(p.script_url));
		if (!p.binary_url[0])
			memcpy(p.binary_url, urls.binary_url, sizeof(p.binary_url));
	}
	*ret = p;
	return 0;
}
