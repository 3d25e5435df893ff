/* host — a Hardware object (its Kubernetes JSON) reduced to what the DHCP
 * policy needs about one interface: struct dhcp_host.
 *
 * DESIGN: the server thread reads a Hardware from its store reader, calls
 * dhcp_host_from_hardware for the client's MAC, drops the JSON and hands the
 * fixed-size struct to dhcp_policy. Every string is copied with a named
 * limit, and a value over its limit is an error that names the field: a
 * silently shortened URL or hostname would boot a machine the wrong way.
 * The store's validation (store/validate.c) has already checked the
 * object's shape; this file still checks every type it relies on, because
 * an object from Kubernetes may be newer than that validation.
 *
 * IPv6 values in fields that DHCPv4 cannot carry (an interface address,
 * name servers) are skipped, not refused: a dual-stack Hardware is valid.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bootmark.h"
#include "common/mac.h"
#include "common/num.h"
#include "dhcp/dhcp-policy.h"

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
						      ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* 1: an IPv4 address in *ret; 0: an IPv6 address (skipped); -1: neither. */
static int parse_ip(const char *s, uint32_t *ret)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		*ret = ntohl(a4.s_addr);
		return 1;
	}
	if (inet_pton(AF_INET6, s, &a6) == 1)
		return 0;
	return -1;
}

/* Copies the optional string member key of obj into out (cap bytes, the
 * limit + 1). Absent or null leaves out empty. */
static int get_str(const json_t *obj, const char *key, const char *where, char *out, size_t cap,
		   char *err, size_t errlen)
{
	const json_t *v = json_object_get(obj, key);
	size_t n;

	out[0] = '\0';
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return fail(err, errlen, "%s.%s is not a string", where, key);
	n = json_string_length(v);
	if (memchr(json_string_value(v), '\0', n))
		return fail(err, errlen, "%s.%s contains a NUL byte", where, key);
	if (n >= cap)
		return fail(err, errlen, "%s.%s is longer than %zu bytes", where, key, cap - 1);
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

static int get_tristate(const json_t *obj, const char *key, const char *where,
			enum dhcp_tristate *ret, char *err, size_t errlen)
{
	const json_t *v = json_object_get(obj, key);

	*ret = DHCP_UNSET;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return fail(err, errlen, "%s.%s is not a boolean", where, key);
	*ret = json_is_true(v) ? DHCP_TRUE : DHCP_FALSE;
	return 0;
}

/* An address-list member (name_servers, time_servers): IPv4 entries kept,
 * IPv6 ones skipped, more than max IPv4 ones an error. */
static int get_ips(const json_t *obj, const char *key, uint32_t *out, size_t max, size_t *ret_n,
		   char *err, size_t errlen)
{
	const json_t *arr = json_object_get(obj, key), *v;
	size_t i, n = 0;
	uint32_t ip;

	*ret_n = 0;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return fail(err, errlen, "dhcp.%s is not an array", key);
	json_array_foreach (arr, i, v) {
		int k = json_is_string(v) ? parse_ip(json_string_value(v), &ip) : -1;
		if (k < 0)
			return fail(err, errlen, "dhcp.%s[%zu] is not an IP address", key, i);
		if (k == 0)
			continue;
		if (n == max)
			return fail(err, errlen, "dhcp.%s has more than %zu IPv4 addresses", key,
				    max);
		out[n++] = ip;
	}
	*ret_n = n;
	return 0;
}

/* dhcp.ip.{address,netmask,gateway}: an optional IPv4 address. */
static int get_ip_member(const json_t *obj, const char *key, uint32_t *ret, char *err,
			 size_t errlen)
{
	char s[64];
	int e = get_str(obj, key, "dhcp.ip", s, sizeof(s), err, errlen);

	*ret = 0;
	if (e < 0 || !s[0])
		return e;
	if (parse_ip(s, ret) < 0)
		return fail(err, errlen, "dhcp.ip.%s \"%s\" is not an IP address", key, s);
	return 0;
}

/* One classless_static_routes[] item: "a.b.c.d/n" and a router. The
 * destination must have no bits set past its prefix (RFC 3442 §1). */
static int get_route(const json_t *item, size_t i, struct dhcp_route *ret, char *err, size_t errlen)
{
	char dd[32], router[64];
	const char *slash;
	uint64_t prefix;
	uint32_t dest, mask;
	char where[64];

	snprintf(where, sizeof(where), "dhcp.classless_static_routes[%zu]", i);
	if (!json_is_object(item))
		return fail(err, errlen, "%s is not an object", where);
	if (get_str(item, "destination_descriptor", where, dd, sizeof(dd), err, errlen) < 0 ||
	    get_str(item, "router", where, router, sizeof(router), err, errlen) < 0)
		return -EINVAL;
	slash = strchr(dd, '/');
	if (!slash || num_parse_u64_str(slash + 1, 32, &prefix) < 0)
		return fail(err, errlen, "%s.destination_descriptor \"%s\" is not a.b.c.d/n", where,
			    dd);
	dd[slash - dd] = '\0';
	if (parse_ip(dd, &dest) != 1)
		return fail(err, errlen, "%s.destination_descriptor is not IPv4", where);
	mask = prefix ? ~0u << (32 - prefix) : 0;
	if (dest & ~mask)
		return fail(err, errlen,
			    "%s.destination_descriptor has bits set past its prefix /%u", where,
			    (unsigned)prefix);
	if (parse_ip(router, &ret->router) != 1)
		return fail(err, errlen, "%s.router is not an IPv4 address", where);
	ret->dest = dest;
	ret->prefix = (uint8_t)prefix;
	return 0;
}

static int get_dhcp(const json_t *d, struct dhcp_host *h, char *err, size_t errlen)
{
	const json_t *ip = json_object_get(d, "ip"), *v, *routes;
	char vlan[16];
	uint64_t u;
	size_t i;
	int e;

	if ((e = get_str(d, "hostname", "dhcp", h->hostname, sizeof(h->hostname), err, errlen)) <
		    0 ||
	    (e = get_str(d, "domain_name", "dhcp", h->domain, sizeof(h->domain), err, errlen)) <
		    0 ||
	    (e = get_str(d, "tftp_server_name", "dhcp", h->tftp_server_name,
			 sizeof(h->tftp_server_name), err, errlen)) < 0 ||
	    (e = get_str(d, "boot_file_name", "dhcp", h->boot_file_name, sizeof(h->boot_file_name),
			 err, errlen)) < 0 ||
	    (e = get_str(d, "arch", "dhcp", h->arch, sizeof(h->arch), err, errlen)) < 0 ||
	    (e = get_tristate(d, "uefi", "dhcp", &h->uefi, err, errlen)) < 0 ||
	    (e = get_ips(d, "name_servers", h->dns, DHCP_HOST_MAX_DNS, &h->ndns, err, errlen)) <
		    0 ||
	    (e = get_ips(d, "time_servers", h->ntp, DHCP_HOST_MAX_NTP, &h->nntp, err, errlen)) < 0)
		return e;

	if (ip && !json_is_null(ip)) {
		if (!json_is_object(ip))
			return fail(err, errlen, "dhcp.ip is not an object");
		if ((e = get_ip_member(ip, "address", &h->ip, err, errlen)) < 0 ||
		    (e = get_ip_member(ip, "netmask", &h->netmask, err, errlen)) < 0 ||
		    (e = get_ip_member(ip, "gateway", &h->gateway, err, errlen)) < 0)
			return e;
	}

	/* lease_time is an int64 in the CRD; 0 or absent means the default.
	 * Values past 32 bits are the infinite lease (RFC 2131 §3.3). */
	v = json_object_get(d, "lease_time");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return fail(err, errlen, "dhcp.lease_time is not a non-negative integer");
		h->lease_time = json_integer_value(v) > (json_int_t)UINT32_MAX ?
					UINT32_MAX :
					(uint32_t)json_integer_value(v);
	}

	if ((e = get_str(d, "vlan_id", "dhcp", vlan, sizeof(vlan), err, errlen)) < 0)
		return e;
	if (vlan[0]) {
		if (num_parse_u64_str(vlan, 4096, &u) < 0)
			return fail(err, errlen, "dhcp.vlan_id \"%s\" is not 0-4096", vlan);
		h->vlan_id = (int)u;
	}

	routes = json_object_get(d, "classless_static_routes");
	if (routes && !json_is_null(routes)) {
		if (!json_is_array(routes))
			return fail(err, errlen, "dhcp.classless_static_routes is not an array");
		if (json_array_size(routes) > DHCP_HOST_MAX_ROUTES)
			return fail(err, errlen,
				    "dhcp.classless_static_routes has more than %d routes",
				    DHCP_HOST_MAX_ROUTES);
		json_array_foreach (routes, i, v) {
			if ((e = get_route(v, i, &h->routes[i], err, errlen)) < 0)
				return e;
		}
		h->nroutes = json_array_size(routes);
	}
	return 0;
}

static int get_netboot(const json_t *nb, struct dhcp_host *h, char *err, size_t errlen)
{
	const json_t *ipxe;
	int e;

	if (!nb || json_is_null(nb))
		return 0;
	if (!json_is_object(nb))
		return fail(err, errlen, "netboot is not an object");
	if ((e = get_tristate(nb, "allowPXE", "netboot", &h->allow_pxe, err, errlen)) < 0)
		return e;
	ipxe = json_object_get(nb, "ipxe");
	if (!ipxe || json_is_null(ipxe))
		return 0;
	if (!json_is_object(ipxe))
		return fail(err, errlen, "netboot.ipxe is not an object");
	if ((e = get_str(ipxe, "url", "netboot.ipxe", h->ipxe_url, sizeof(h->ipxe_url), err,
			 errlen)) < 0 ||
	    (e = get_str(ipxe, "binary", "netboot.ipxe", h->ipxe_binary, sizeof(h->ipxe_binary),
			 err, errlen)) < 0)
		return e;
	return 0;
}

/* The index of the first interface whose dhcp.mac is mac, or -ENOENT. */
static int find_interface(const json_t *ifaces, const uint8_t mac[6])
{
	const json_t *ifc;
	size_t i;
	uint8_t m[6];

	json_array_foreach (ifaces, i, ifc) {
		const json_t *s = json_object_get(json_object_get(ifc, "dhcp"), "mac");
		if (json_is_string(s) &&
		    mac_parse(json_string_value(s), json_string_length(s), MAC_COLON, m) == 0 &&
		    memcmp(m, mac, 6) == 0)
			return (int)i;
	}
	return -ENOENT;
}

int dhcp_host_from_hardware(const struct json_t *hw, const uint8_t mac[6], struct dhcp_host *ret,
			    char *err, size_t errlen)
{
	struct dhcp_host *h = NULL;
	const json_t *meta, *ifaces, *ifc, *v;
	int e, idx;

	if (errlen)
		err[0] = '\0';
	if (!json_is_object(hw) || !mac || !ret)
		return fail(err, errlen, "not a Hardware object");
	meta = json_object_get(hw, "metadata");
	ifaces = json_object_get(json_object_get(hw, "spec"), "interfaces");
	if (!json_is_array(ifaces)) {
		if (errlen)
			snprintf(err, errlen, "no spec.interfaces");
		return -ENOENT;
	}
	idx = find_interface(ifaces, mac);
	if (idx < 0) {
		char ms[MAC_STR_SIZE];
		mac_format(mac, ms);
		if (errlen)
			snprintf(err, errlen, "no interface with mac %s", ms);
		return idx;
	}
	ifc = json_array_get(ifaces, (size_t)idx);

	/* A few KiB: built in a scratch copy on the heap, so that *ret is
	 * written only on success and the caller's stack stays small. */
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->vlan_id = -1;
	memcpy(h->mac, mac, 6);
	if (json_is_object(meta)) {
		if ((e = get_str(meta, "name", "metadata", h->name, sizeof(h->name), err, errlen)) <
			    0 ||
		    (e = get_str(meta, "namespace", "metadata", h->namespace_,
				 sizeof(h->namespace_), err, errlen)) < 0)
			goto out;
	}
	if ((e = get_dhcp(json_object_get(ifc, "dhcp"), h, err, errlen)) < 0 ||
	    (e = get_netboot(json_object_get(ifc, "netboot"), h, err, errlen)) < 0)
		goto out;
	v = json_object_get(ifc, "disableDhcp");
	if (v && !json_is_null(v) && !json_is_boolean(v)) {
		e = fail(err, errlen, "disableDhcp is not a boolean");
		goto out;
	}
	h->disable_dhcp = json_is_true(v);
	h->awaiting_boot = bootmark_awaiting(hw);
	*ret = *h;
	e = 0;
out:
	free(h);
	return e;
}
