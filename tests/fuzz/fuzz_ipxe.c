/* fuzz_ipxe — the public listener's untrusted inputs in ipxe/: the request
 * path (ipxe_route_parse), the Range header (ipxe_range_parse), a template
 * (ipxe_template_check, then a render through ipxe_script) and a Hardware
 * object's fields as they reach a script (ipxe_script, ipxe_httpboot).
 *
 * The first byte chooses what the rest is. Properties checked, not only
 * "no crash": a parsed route's name never holds "..", '/' (binary) or a
 * leading '.'; a satisfiable range lies inside the file; a rendered script
 * never holds a byte of the Hardware that iPXE would read as a separator or
 * a variable (checked on the command line, which is where such values
 * land). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ipxe/ipxe.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_IPXE_MAX 16384

static void route(const uint8_t *d, size_t n)
{
	struct ipxe_route r;
	enum ipxe_route_type t = ipxe_route_parse((const char *)d, n, &r);
	if (t != r.type && !(t == IPXE_ROUTE_NONE && r.type == IPXE_ROUTE_NONE))
		abort();
	if (t == IPXE_ROUTE_BINARY || t == IPXE_ROUTE_OSIE) {
		if (!r.name[0] || r.name[0] == '.' || strstr(r.name, "..") == r.name ||
		    strstr(r.name, "/.") || (t == IPXE_ROUTE_BINARY && strchr(r.name, '/')))
			abort();
	}
	(void)ipxe_route_template(&r);
}

static void range(const uint8_t *d, size_t n)
{
	uint64_t size = 0, off = 0, len = 0;
	if (n < 4)
		return;
	memcpy(&size, d, 4);
	int rr = ipxe_range_parse((const char *)d + 4, n - 4, size, &off, &len);
	if (rr == 1 && (len == 0 || off >= size || len > size - off))
		abort();
}

static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static void script_of(const json_t *hw, const char *tmpl, size_t tlen)
{
	struct ipxe_settings s = {
		.template_ = tmpl,
		.template_len = tlen,
		.base_url = "http://192.0.2.1:7080",
		.kernel = "vmlinuz-{{arch}}",
		.initrd = "initramfs-{{arch}}",
		.grpc_authority = "192.0.2.1:42113",
		.retries = 2,
	};
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k;
	char err[512];
	int e = ipxe_script(hw, mac, &s, &out, &k, err, sizeof(err));
	if (e == 0 && k == IPXE_SCRIPT_DEFAULT && !tmpl && out.data) {
		/* The built-in template: the kernel line is one line, and every
		 * token of it is free of '$' (the Hardware cannot inject iPXE
		 * settings expansion). */
		const char *kl = strstr(out.data, "\nkernel ");
		if (!kl)
			abort();
		const char *eol = strchr(kl + 1, '\n');
		for (const char *p = kl + 1; p < eol; p++)
			if (*p == '$' || *p == '\r' || *p == '\t')
				abort();
	}
	buf_free(&out);
	buf_reset(&out);
	(void)ipxe_httpboot(hw, "192.0.2.10", "http://192.0.2.1:7080", &out);
	buf_free(&out);
}

static void hardware(const uint8_t *d, size_t n)
{
	json_t *hw = json_loadb((const char *)d, n, 0, NULL);
	if (!hw)
		return;
	script_of(hw, NULL, 0);
	json_decref(hw);
}

/* A template, rendered for a fixed Hardware when it checks out. */
static void template_(const uint8_t *d, size_t n)
{
	static json_t *hw;
	char err[256];
	if (!hw)
		hw = json_pack("{s:{s:s,s:s},s:{s:[{s:{s:s,s:s,s:{s:s}},s:{s:b}}]}}", "metadata",
			       "name", "m1", "namespace", "default", "spec", "interfaces", "dhcp",
			       "mac", "52:54:00:12:34:56", "arch", "x86_64", "ip", "address",
			       "192.0.2.10", "netboot", "allowPXE", 1);
	if (ipxe_template_check((const char *)d, n, err, sizeof(err)) == 0)
		script_of(hw, (const char *)d, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_IPXE_MAX)
		return 0;
	switch (data[0] % 4) {
	case 0:
		route(data + 1, size - 1);
		break;
	case 1:
		range(data + 1, size - 1);
		break;
	case 2:
		template_(data + 1, size - 1);
		break;
	default:
		hardware(data + 1, size - 1);
		break;
	}
	return 0;
}
