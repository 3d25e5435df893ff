/* fuzz_dhcp — the DHCPv4 codec (dhcp/codec.c, dhcp/write.c). The input is
 * a message as it would arrive on port 67. When it parses, a reply echoing
 * every option it carries (and the typed ones re-encoded) is written and
 * parsed again: that must succeed, and every option the writer kept must
 * come back byte for byte, or the target aborts. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp-codec.h"
#include "tests/fuzz/fuzz.h"

static struct dhcp_packet req, back;
static struct dhcp_reply rep;
static uint8_t out[DHCP_MAX_MESSAGE];

/* Exercises the typed accessors; results are not checked, only survived. */
static void read_all(const struct dhcp_packet *p)
{
	const uint8_t *d;
	const char *s;
	size_t n;
	uint32_t ips[8], v;
	uint16_t arch[8], v16;
	uint8_t guid[16], v8;
	struct dhcp_ndi ndi;
	struct dhcp_relay_info ri;

	(void)dhcp_opt_u8(p, 53, &v8);
	(void)dhcp_opt_u16(p, 57, &v16);
	(void)dhcp_opt_u32(p, 51, &v);
	(void)dhcp_opt_ip(p, 50, &v);
	(void)dhcp_opt_ips(p, 6, ips, 8, &n);
	(void)dhcp_opt_string(p, 12, &s, &n);
	(void)dhcp_max_message_size(p);
	(void)dhcp_prl(p, &d, &n);
	(void)dhcp_client_id(p, &v8, &d, &n);
	(void)dhcp_has_user_class(p, "iPXE");
	(void)dhcp_has_user_class(p, "Tinkerbell");
	(void)dhcp_client_arch(p, arch, 8, &n);
	(void)dhcp_client_ndi(p, &ndi);
	(void)dhcp_client_guid(p, guid);
	(void)dhcp_relay_info(p, &ri);
	(void)dhcp_pxe_subopt(p, 6, &d, &n);
	for (unsigned c = 0; c < 256; c++)
		(void)dhcp_opt_bad(p, (uint8_t)c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char names[DHCP_MAX_SEARCH][DHCP_MAX_DOMAIN + 1];
	struct dhcp_route routes[DHCP_MAX_ROUTES];
	const char *np[DHCP_MAX_SEARCH];
	struct dhcp_write_info info;
	enum dhcp_bad bad;
	const uint8_t *d, *d2;
	size_t n, n2;
	bool routes_set = false;

	if (dhcp_parse(data, size, &req, &bad) < 0) {
		if (bad <= DHCP_OK || bad >= DHCP_BAD_MAX)
			abort();
		return 0;
	}
	read_all(&req);
	dhcp_reply_init(&rep, &req, DHCP_OFFER);
	rep.max_ip_len = DHCP_MAX_MESSAGE + DHCP_IP_UDP_HEADERS;
	for (unsigned c = 1; c < 255; c++) {
		if (c != DHCP_OPT_OVERLOAD)
			(void)dhcp_reply_echo(&rep, &req, (uint8_t)c);
	}
	/* Typed options re-encoded from their decoded form must come back. */
	if (dhcp_opt_routes(&req, routes, DHCP_MAX_ROUTES, &n) == 0 && n <= DHCP_MAX_ROUTES) {
		for (size_t i = 0; i < n; i++) {
			uint32_t mask = routes[i].prefix ? ~(uint32_t)0 << (32 - routes[i].prefix) : 0;
			routes[i].dest &= mask;
		}
		if (dhcp_reply_set_routes(&rep, routes, n) < 0)
			abort();
		routes_set = true;
	}
	if (dhcp_opt_domain_search(&req, names, DHCP_MAX_SEARCH, &n) == 0 && n <= DHCP_MAX_SEARCH) {
		for (size_t i = 0; i < n; i++)
			np[i] = names[i];
		/* -ENOSPC is possible: compression may differ from the input's. */
		(void)dhcp_reply_set_domain_search(&rep, np, n);
	}
	int len = dhcp_write(&rep, out, sizeof(out), &info);
	if (len == -EMSGSIZE)
		return 0; /* e.g. an echoed 82 too large to place */
	if (len < 0)
		abort();
	if (dhcp_parse(out, (size_t)len, &back, &bad) < 0)
		abort();
	read_all(&back);
	for (unsigned c = 1; c < 255; c++) {
		if (!dhcp_reply_has(&rep, (uint8_t)c))
			continue;
		bool dropped = false;
		for (size_t i = 0; i < info.ndropped; i++)
			dropped |= info.dropped[i] == c;
		if (dropped)
			continue;
		if (dhcp_opt_get(&back, (uint8_t)c, &d2, &n2) < 0)
			abort();
		d = rep.opts.data + rep.opts.off[c];
		n = rep.opts.len[c];
		if (n != n2 || memcmp(d, d2, n) != 0)
			abort();
	}
	/* Re-encoded routes must decode (raw echoes of bad ones need not). */
	if (routes_set && dhcp_opt_routes(&back, routes, DHCP_MAX_ROUTES, &n) < 0)
		abort();
	return 0;
}
