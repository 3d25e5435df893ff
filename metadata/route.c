/* route — metadata paths, and the client's address behind trusted proxies.
 *
 * DESIGN: paths arrive percent-encoded (daemon/http/http.c turns unescaping
 * off) and none of ours needs an escape, so a '%' makes a route
 * MD_ROUTE_BAD. An EC2 path is normalised to its components joined by '/'
 * with no leading or trailing slash, so "/latest/meta-data/" and
 * "/2009-04-04/meta-data" are the same key; a component is
 * [A-Za-z0-9._=-] and not "." or "..".
 *
 * X-Forwarded-For (pkg/xff in Tinkerbell): each proxy appends the address
 * it received the request from, so the entries right of the first
 * untrusted one were written by our proxies and can be believed, and
 * everything left of it was written by the client and cannot. The walk
 * goes right to left, skipping trusted proxies, and stops at the first
 * address that is not one.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "metadata/metadata.h"

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '=';
}

static bool has_prefix(const char *p, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && memcmp(p, pre, k) == 0;
}

static enum md_route_type bad(struct md_route *r)
{
	r->type = MD_ROUTE_BAD;
	return r->type;
}

/* The rest of an EC2 path after the version ("", "/", "/meta-data/x/"). */
static enum md_route_type ec2_rest(const char *p, size_t n, struct md_route *r)
{
	size_t o = 0;
	if (n > 0 && p[0] != '/')
		return MD_ROUTE_NONE; /* "/2009-04-04x": not ours */
	for (size_t i = 0; i < n;) {
		while (i < n && p[i] == '/')
			i++;
		size_t s = i;
		while (i < n && p[i] != '/') {
			if (!key_char(p[i]))
				return bad(r);
			i++;
		}
		size_t cn = i - s;
		if (cn == 0)
			break;
		if ((cn == 1 && p[s] == '.') || (cn == 2 && p[s] == '.' && p[s + 1] == '.') ||
		    o + cn + 1 > MD_PATH_MAX)
			return bad(r);
		if (o)
			r->path[o++] = '/';
		memcpy(r->path + o, p + s, cn);
		o += cn;
	}
	r->path[o] = '\0';
	r->type = MD_ROUTE_EC2;
	return r->type;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

enum md_route_type md_route_parse(const char *path, size_t len, struct md_route *ret)
{
	struct md_route r = { .type = MD_ROUTE_NONE };
	const char *q = memchr(path, '?', len);
	size_t n = q ? (size_t)(q - path) : len;
	enum md_route_type t = MD_ROUTE_NONE;

	if (has_prefix(path, n, "/2009-04-04")) {
		t = ec2_rest(path + 11, n - 11, &r);
	} else if (has_prefix(path, n, "/latest")) {
		t = ec2_rest(path + 7, n - 7, &r);
	} else if (has_prefix(path, n, "/tootles/instanceID/")) {
		const char *id = path + 20, *end = path + n;
		const char *slash = memchr(id, '/', (size_t)(end - id));
		size_t idn = slash ? (size_t)(slash - id) : 0;
		t = bad(&r);
		if (slash && idn > 0 && idn <= MD_ID_MAX &&
		    has_prefix(slash, (size_t)(end - slash), "/2009-04-04")) {
			bool ok = true;
			for (size_t i = 0; i < idn; i++)
				ok = ok && (key_char(id[i]) || id[i] == ':');
			if (ok) {
				memcpy(r.instance_id, id, idn);
				r.instance_id[idn] = '\0';
				r.by_instance = true;
				t = ec2_rest(slash + 11, (size_t)(end - slash - 11), &r);
				if (t == MD_ROUTE_NONE)
					t = bad(&r);
			}
		}
	} else if (n == 9 && memcmp(path, "/metadata", 9) == 0) {
		t = r.type = MD_ROUTE_HEGEL;
	} else if ((n == 8 && memcmp(path, "/nocloud", 8) == 0) ||
		   has_prefix(path, n, "/nocloud/")) {
		static const char *const files[] = { "meta-data", "user-data", "vendor-data",
						     "network-config" };
		const char *f = path + 9;
		size_t fn = n > 9 ? n - 9 : 0;
		t = bad(&r);
		if (fn == 0) {
			r.file = MD_NOCLOUD_DIR;
			t = r.type = MD_ROUTE_NOCLOUD;
		}
		for (int i = 0; fn && i < MD_NOCLOUD_DIR; i++)
			if (strlen(files[i]) == fn && memcmp(f, files[i], fn) == 0) {
				r.file = (enum md_nocloud_file)i;
				t = r.type = MD_ROUTE_NOCLOUD;
			}
	} else if (has_prefix(path, n, "/ignition/")) {
		const char *u = path + 10;
		size_t un = n - 10;
		t = bad(&r);
		if (un == 36) {
			bool ok = true;
			for (size_t i = 0; i < 36 && ok; i++) {
				bool dash = i == 8 || i == 13 || i == 18 || i == 23;
				ok = dash ? u[i] == '-' : hexval(u[i]) >= 0;
				r.uuid[i] = (char)(u[i] >= 'A' && u[i] <= 'F' ? u[i] - 'A' + 'a' : u[i]);
			}
			r.uuid[36] = '\0';
			if (ok)
				t = r.type = MD_ROUTE_IGNITION;
		}
	}
	*ret = r;
	return t;
}

const char *md_route_template(const struct md_route *r)
{
	switch (r->type) {
	case MD_ROUTE_EC2:
		if (r->by_instance)
			return "/tootles/instanceID/{id}/2009-04-04/{path}";
		if (strncmp(r->path, "meta-data", 9) == 0)
			return "/2009-04-04/meta-data/{key}";
		return r->path[0] ? "/2009-04-04/{path}" : "/2009-04-04/";
	case MD_ROUTE_HEGEL:
		return "/metadata";
	case MD_ROUTE_NOCLOUD:
		return "/nocloud/{file}";
	case MD_ROUTE_IGNITION:
		return "/ignition/{uuid}";
	default:
		return "(unknown)";
	}
}

/* ---- addresses ---- */

struct addr {
	int family;
	uint8_t b[16];
};

static bool addr_parse(const char *s, size_t n, struct addr *a)
{
	char t[INET6_ADDRSTRLEN + 1];
	if (n == 0 || n >= sizeof(t))
		return false;
	memcpy(t, s, n);
	t[n] = '\0';
	if (inet_pton(AF_INET, t, a->b) == 1) {
		a->family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, t, a->b) != 1)
		return false;
	a->family = AF_INET6;
	/* ::ffff:a.b.c.d is the IPv4 address a.b.c.d. */
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (memcmp(a->b, mapped, 12) == 0) {
		memmove(a->b, a->b + 12, 4);
		a->family = AF_INET;
	}
	return true;
}

static bool in_cidrs(const struct net_cidrs *l, const struct addr *a)
{
	for (unsigned i = 0; l && i < l->n; i++) {
		const struct net_cidr *c = &l->e[i];
		if (c->family != a->family)
			continue;
		unsigned full = c->prefix / 8, rest = c->prefix % 8;
		if (memcmp(c->addr, a->b, full) != 0)
			continue;
		if (rest && ((c->addr[full] ^ a->b[full]) & (uint8_t)(0xff << (8 - rest))))
			continue;
		return true;
	}
	return false;
}

bool md_cidrs_match(const struct net_cidrs *l, const char *ip)
{
	struct addr a;
	return addr_parse(ip, strlen(ip), &a) && in_cidrs(l, &a);
}

static int put_addr(const struct addr *a, char *out, size_t outlen)
{
	return inet_ntop(a->family, a->b, out, (socklen_t)outlen) ? 0 : -EINVAL;
}

int md_client_address(const char *peer, const char *xff, const struct net_cidrs *trusted,
		      char *out, size_t outlen)
{
	struct addr a, last;
	out[0] = '\0';
	if (!addr_parse(peer, strlen(peer), &a))
		return -EINVAL;
	if (!xff || !in_cidrs(trusted, &a))
		return put_addr(&a, out, outlen);
	/* Right to left over the comma-separated entries. */
	size_t end = strlen(xff);
	bool any = false;
	for (int k = 0; k < MD_XFF_MAX && end > 0; k++) {
		size_t s = end;
		while (s > 0 && xff[s - 1] != ',')
			s--;
		size_t i = s, j = end;
		while (i < j && (xff[i] == ' ' || xff[i] == '\t'))
			i++;
		while (j > i && (xff[j - 1] == ' ' || xff[j - 1] == '\t'))
			j--;
		end = s > 0 ? s - 1 : 0;
		if (i == j && s == 0 && !any)
			break; /* an empty header */
		if (i == j)
			continue; /* an empty entry between commas */
		if (!addr_parse(xff + i, j - i, &last))
			return -EINVAL; /* garbage where a client should be */
		any = true;
		if (!in_cidrs(trusted, &last))
			return put_addr(&last, out, outlen);
		if (s == 0)
			break;
	}
	/* Every entry read was a trusted proxy: the leftmost one read. */
	return any ? put_addr(&last, out, outlen) : put_addr(&a, out, outlen);
}
