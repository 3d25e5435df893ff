/* fuzz_kea_params — the Kea hook's parameters (dhcp/kea/params.c) on any
 * text. The target aborts when:
 *  - the parse fails with anything but -EINVAL, or without a message;
 *  - it succeeds with a value the contract excludes: a relative store
 *    path, a poll interval out of range, source "api" without an
 *    https:// (or loopback http://) URL or a token file, an http port 0,
 *    a policy that is not reservation mode with Kea's server identifier,
 *    lease reuse on, or an arch table with an empty or slashed binary;
 *  - the policy configuration it makes cannot be completed for a reply
 *    (dhcp_settings_policy) with a server identifier.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/kea/ironbell-kea.h"
#include "tests/fuzz/fuzz.h"

static struct ibkea_params p;

static void check(const struct ibkea_params *q)
{
	const struct dhcp_policy_config *c = &q->dhcp.policy;
	struct dhcp_policy_config out;
	char err[256];

	if (q->store[0] != '/' || q->poll_ms < IBKEA_MIN_POLL_MS || q->poll_ms > IBKEA_MAX_POLL_MS)
		abort();
	if ((unsigned)q->source >= IBKEA_SOURCE_MAX)
		abort();
	if (q->source == IBKEA_SOURCE_API &&
	    (q->api_token_file[0] != '/' ||
	     (strncmp(q->api_url, "https://", 8) != 0 && strncmp(q->api_url, "http://", 7) != 0)))
		abort();
	if (q->api_ca_file[0] && q->api_ca_file[0] != '/')
		abort();
	if (!q->dhcp.http_port || c->mode != DHCP_MODE_RESERVATION || c->server_id ||
	    c->lease_reuse || c->narches > DHCP_POLICY_MAX_ARCHES)
		abort();
	for (size_t i = 0; i < c->narches; i++)
		if (!c->arches[i].binary[0] || strchr(c->arches[i].binary, '/'))
			abort();
	if (dhcp_settings_policy(&q->dhcp, 0x0a000001u, &out, err, sizeof(err)) != 0)
		abort();
	if (out.server_id != 0x0a000001u || !out.script_url[0] || !out.binary_url[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	int e;

	err[0] = '\0';
	e = ibkea_params_parse((const char *)data, size, &p, err, sizeof(err));
	if (e == 0)
		check(&p);
	else if (e != -EINVAL || !err[0] || !memchr(err, '\0', sizeof(err)))
		abort();
	return 0;
}
