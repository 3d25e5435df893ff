/* params — the Kea hook's "parameters" (JSON) checked into struct
 * ibkea_params. Skeleton: every default, nothing parsed yet. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dhcp/kea/ironbell-kea.h"

int ibkea_params_parse(const char *json, size_t len, struct ibkea_params *ret, char *err,
		       size_t errlen)
{
	struct ibkea_params p;

	if (json && len) {
		snprintf(err, errlen, "parameters: not yet parsed");
		return -EINVAL;
	}
	memset(&p, 0, sizeof(p));
	p.source = IBKEA_SOURCE_STORE;
	snprintf(p.store, sizeof(p.store), "%s", IBKEA_DEFAULT_STORE);
	p.poll_ms = IBKEA_DEFAULT_POLL_MS;
	p.dhcp.http_port = DHCP_DEFAULT_HTTP_PORT;
	dhcp_policy_config_default(&p.dhcp.policy, 0);
	p.dhcp.policy.server_id = 0;
	p.dhcp.policy.script_url[0] = p.dhcp.policy.binary_url[0] = '\0';
	*ret = p;
	return 0;
}
