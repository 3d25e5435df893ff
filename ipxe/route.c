/* route — the public paths this module answers, the Range header and the
 * file types of what it serves.
 *
 * DESIGN: the path arrives still percent-encoded (libmicrohttpd is told not
 * to unescape, daemon/http/http.c). iPXE encodes the colons of a MAC in a URL
 * ("52%3A54%3A00..."), so the path is decoded once, into a bounded buffer,
 * before any rule is applied; a '%' that is not a valid escape, or a NUL,
 * makes the route IPXE_ROUTE_BAD. The rules then apply to the decoded
 * text, so "%2e%2e" is "..", and refused like it. A name is one or more
 * components of [A-Za-z0-9._+~-] that do not start with '.', so no
 * component is "." or "..", and the file opened under its directory
 * (daemon/public/public.c, with openat2 RESOLVE_BENEATH) is one the operator put
 * there.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "common/mac.h"
#include "common/num.h"
#include "ipxe/ipxe-internal.h"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '+' || c == '~';
}

/* One component: 1..max name chars, not starting with '.'. */
static bool component_ok(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

static bool has_prefix(const char *p, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && memcmp(p, pre, k) == 0;
}

static enum ipxe_route_type bad(struct ipxe_route *ret)
{
	ret->type = IPXE_ROUTE_BAD;
	return ret->type;
}

/* [<mac>/]<last>: the rest of a script or binary path. */
static enum ipxe_route_type mac_and_name(const char *p, size_t n, enum ipxe_route_type type,
					 struct ipxe_route *ret)
{
	const char *slash = memchr(p, '/', n);
	if (slash) {
		if (mac_parse(p, (size_t)(slash - p), MAC_COLON | MAC_DASH, ret->mac) < 0)
			return bad(ret);
		ret->has_mac = true;
		n -= (size_t)(slash - p) + 1;
		p = slash + 1;
	}
	if (!component_ok(p, n, IPXE_NAME_MAX))
		return bad(ret);
	memcpy(ret->name, p, n);
	ret->name[n] = '\0';
	if (type == IPXE_ROUTE_SCRIPT && strcmp(ret->name, "auto.ipxe") != 0)
		return bad(ret);
	ret->type = type;
	return type;
}

/* Percent-decodes in (n bytes) into out (at least n + 1 bytes): the
 * decoded length, or -1 for a bad escape or a NUL. */
static long decode(const char *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (c == '%') {
			if (n - i < 3)
				return -1;
			int hi = num_hex_digit(in[i + 1]), lo = num_hex_digit(in[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0')
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return (long)o;
}

enum ipxe_route_type ipxe_route_parse(const char *raw, size_t rawlen, struct ipxe_route *ret)
{
	struct ipxe_route r = { .type = IPXE_ROUTE_NONE };
	const char *q = memchr(raw, '?', rawlen);
	size_t rn = q ? (size_t)(q - raw) : rawlen;
	enum ipxe_route_type t = IPXE_ROUTE_NONE;
	char path[IPXE_PATH_MAX + 1];
	long dn;

	if (rn > IPXE_PATH_MAX || (dn = decode(raw, rn, path)) < 0) {
		/* Too long, or a bad escape: ours (404) only under our prefixes. */
		r.type = (rn >= 5 && (memcmp(raw, "/ipxe", 5) == 0 || memcmp(raw, "/osie", 5) == 0)) ?
				 IPXE_ROUTE_BAD :
				 IPXE_ROUTE_NONE;
		*ret = r;
		return r.type;
	}
	size_t n = (size_t)dn;

	if (n == 10 && memcmp(path, "/auto.ipxe", 10) == 0) {
		r.type = IPXE_ROUTE_SCRIPT;
		memcpy(r.name, "auto.ipxe", 10);
		t = r.type;
	} else if (n == 9 && memcmp(path, "/httpboot", 9) == 0) {
		t = r.type = IPXE_ROUTE_HTTPBOOT;
	} else if (has_prefix(path, n, "/ipxe/script/")) {
		t = mac_and_name(path + 13, n - 13, IPXE_ROUTE_SCRIPT, &r);
	} else if (has_prefix(path, n, "/ipxe/binary/")) {
		t = mac_and_name(path + 13, n - 13, IPXE_ROUTE_BINARY, &r);
	} else if (has_prefix(path, n, "/osie/")) {
		const char *p = path + 6, *end = path + n;
		size_t depth = 0;
		t = IPXE_ROUTE_OSIE;
		if (n - 6 > IPXE_OSIE_PATH_MAX)
			t = bad(&r);
		while (t == IPXE_ROUTE_OSIE && p <= end) {
			const char *s = memchr(p, '/', (size_t)(end - p));
			size_t cn = s ? (size_t)(s - p) : (size_t)(end - p);
			if (!component_ok(p, cn, IPXE_OSIE_PATH_MAX) || ++depth > IPXE_OSIE_DEPTH)
				t = bad(&r);
			p += cn + 1;
		}
		if (t == IPXE_ROUTE_OSIE) {
			memcpy(r.name, path + 6, n - 6);
			r.name[n - 6] = '\0';
			r.type = t;
		}
	} else if (has_prefix(path, n, "/ipxe/") || (n == 5 && memcmp(path, "/ipxe", 5) == 0) ||
		   (n == 5 && memcmp(path, "/osie", 5) == 0)) {
		t = bad(&r);
	}
	*ret = r;
	return t;
}

const char *ipxe_route_template(const struct ipxe_route *r)
{
	switch (r->type) {
	case IPXE_ROUTE_SCRIPT:
		return r->has_mac ? "/ipxe/script/{mac}/auto.ipxe" : "/ipxe/script/auto.ipxe";
	case IPXE_ROUTE_BINARY:
		return r->has_mac ? "/ipxe/binary/{mac}/{name}" : "/ipxe/binary/{name}";
	case IPXE_ROUTE_OSIE:
		return "/osie/{path}";
	case IPXE_ROUTE_HTTPBOOT:
		return "/httpboot";
	default:
		return "(unknown)";
	}
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

const char *ipxe_content_type(const char *name)
{
	if (ends_with(name, ".efi"))
		return "application/efi";
	if (ends_with(name, ".iso"))
		return "application/x-iso9660-image";
	if (ends_with(name, ".ipxe"))
		return "text/plain; charset=utf-8";
	return "application/octet-stream";
}

/* A decimal number of at most 19 digits at *p (advanced), or -1. */
static int64_t range_num(const char **p, const char *end)
{
	const char *s = *p;
	uint64_t v;
	while (*p < end && **p >= '0' && **p <= '9')
		(*p)++;
	if (*p == s || num_parse_u64(s, (size_t)(*p - s), (uint64_t)INT64_MAX, &v) < 0)
		return -1;
	return (int64_t)v;
}

int ipxe_range_parse(const char *h, size_t hlen, uint64_t size, uint64_t *ret_off,
		     uint64_t *ret_len)
{
	const char *p = h, *end = h + hlen;
	int64_t first = -1, last = -1;

	if (!h)
		return 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < 6 || strncasecmp(p, "bytes=", 6) != 0)
		return 0; /* another unit: ignored (RFC 9110 §14.2) */
	p += 6;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p != '-') {
		if ((first = range_num(&p, end)) < 0)
			return 0;
	}
	if (p == end || *p != '-')
		return 0;
	p++;
	if (p < end && *p >= '0' && *p <= '9' && (last = range_num(&p, end)) < 0)
		return 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p != end)
		return 0; /* several ranges, or junk: the whole file */
	if (first < 0 && last < 0)
		return 0;
	if (first < 0) { /* suffix: the last `last` bytes */
		if (last == 0 || size == 0)
			return -ERANGE;
		uint64_t n = (uint64_t)last < size ? (uint64_t)last : size;
		*ret_off = size - n;
		*ret_len = n;
		return 1;
	}
	if (last >= 0 && last < first)
		return 0; /* invalid: ignored */
	if ((uint64_t)first >= size)
		return -ERANGE;
	uint64_t stop = last < 0 || (uint64_t)last >= size ? size - 1 : (uint64_t)last;
	*ret_off = (uint64_t)first;
	*ret_len = stop - (uint64_t)first + 1;
	return 1;
}
