/* cloud — the documents made whole from a Hardware: cloud-init's NoCloud
 * files (meta-data, network-config version 2), Hegel's /metadata JSON and
 * the Ignition config.
 *
 * DESIGN: YAML is written by hand, every string scalar as a JSON string
 * (a JSON string is a YAML double-quoted scalar), so no value from the
 * Hardware can change the document's structure. network-config gives each
 * interface with a MAC an "ethernets" entry matched by that MAC (and named
 * by dhcp.iface_name when set); its address, gateway, DNS, search domain
 * and classless routes go on the entry, or on a "vlans" entry linked to it
 * when dhcp.vlan_id is set (Tinkerbell's VLAN is the one the machine boots
 * on: iPXE tags its traffic, so the OS must too). An interface without an
 * address gets dhcp4: true.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jsondec.h"
#include "metadata/metadata-internal.h"

const json_t *md_iface_dhcp(const json_t *hw)
{
	const json_t *ifs = json_object_get(json_object_get(hw, "spec"), "interfaces");
	size_t i;
	const json_t *it;
	json_array_foreach(ifs, i, it)
	{
		const json_t *d = json_object_get(it, "dhcp");
		if (json_is_string(json_object_get(json_object_get(d, "ip"), "address")))
			return d;
	}
	return json_object_get(json_array_get(ifs, 0), "dhcp");
}

const json_t *md_iface_field(const json_t *hw, const char *key)
{
	return json_object_get(md_iface_dhcp(hw), key);
}

const json_t *md_facility(const json_t *hw)
{
	return json_object_get(json_object_get(json_object_get(hw, "spec"), "metadata"),
			       "facility");
}

const json_t *md_user_data(const json_t *hw)
{
	const json_t *u = json_object_get(json_object_get(hw, "spec"), "userData");
	if (json_is_string(u))
		return u;
	u = json_object_get(json_object_get(json_object_get(json_object_get(hw, "spec"),
							    "metadata"),
					    "instance"),
			    "userdata");
	return json_is_string(u) ? u : NULL;
}

const char *md_instance_id(const json_t *hw)
{
	return json_string_value(json_object_get(
		json_object_get(json_object_get(json_object_get(hw, "spec"), "metadata"),
				"instance"),
		"id"));
}

/* A YAML double-quoted scalar of s (UTF-8, as jansson holds strings),
 * written in ASCII only: '"' and '\\' escaped, every other byte outside
 * 0x20..0x7e as \\xNN, and every non-ASCII character as \\uNNNN or
 * \\UNNNNNNNN. YAML refuses DEL and the C1 controls unescaped, and
 * YAML 1.1 readers take U+0085, U+2028 and U+2029 for line breaks; an
 * all-ASCII scalar has none of these problems. */
static int yq(struct buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	if (buf_putc(out, '"') < 0)
		return -E2BIG;
	while (*p) {
		unsigned c = *p;
		size_t n = 1;
		int e;
		if (c >= 0x80) { /* decode one UTF-8 sequence (valid: jansson checked) */
			n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			c &= n == 4 ? 0x07 : n == 3 ? 0x0f : 0x1f;
			for (size_t i = 1; i < n; i++) {
				if ((p[i] & 0xc0) != 0x80) { /* cannot be; stop safely */
					n = i;
					break;
				}
				c = c << 6 | (p[i] & 0x3f);
			}
			e = c > 0xffff ? buf_printf(out, "\\U%08x", c) : buf_printf(out, "\\u%04x", c);
		} else if (c == '"' || c == '\\') {
			e = buf_printf(out, "\\%c", (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			e = buf_printf(out, "\\x%02x", c);
		} else {
			e = buf_putc(out, (char)c);
		}
		if (e < 0)
			return -E2BIG;
		p += n;
	}
	return buf_putc(out, '"') < 0 ? -E2BIG : 0;
}

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s && s[0] ? s : NULL;
}

/* ---- meta-data ---- */

static int meta_data(const json_t *hw, struct buf *out)
{
	const json_t *inst = json_object_get(
		json_object_get(json_object_get(hw, "spec"), "metadata"), "instance");
	const json_t *meta = json_object_get(hw, "metadata");
	const char *id = str(inst, "id");
	const char *host = str(inst, "hostname");
	if (!id)
		id = str(meta, "uid");
	if (!id)
		id = str(meta, "name");
	if (!host)
		host = json_string_value(md_iface_field(hw, "hostname"));
	if (!host)
		host = str(meta, "name");
	if (buf_puts(out, "instance-id: ") < 0 || yq(out, id ? id : "") < 0 ||
	    buf_puts(out, "\nlocal-hostname: ") < 0 || yq(out, host ? host : "") < 0 ||
	    buf_putc(out, '\n') < 0)
		return -E2BIG;
	const json_t *keys = json_object_get(inst, "ssh_keys");
	size_t i;
	const json_t *k;
	if (json_array_size(keys) && buf_puts(out, "public-keys:\n") < 0)
		return -E2BIG;
	json_array_foreach(keys, i, k)
	{
		if (i >= MD_MAX_KEYS)
			break;
		if (json_is_string(k) &&
		    (buf_puts(out, "  - ") < 0 || yq(out, json_string_value(k)) < 0 ||
		     buf_putc(out, '\n') < 0))
			return -E2BIG;
	}
	return 0;
}

/* ---- network-config ---- */

/* The prefix length of a netmask of family af, written as an address of
 * that family (255.255.255.0, ffff:ffff:ffff:ffff::; what the store's
 * validation takes), or -1 when it is not one. */
static int mask_len(const char *mask, int af)
{
	uint8_t b[16];
	size_t n = af == AF_INET6 ? 16 : 4;
	if (!mask || inet_pton(af, mask, b) != 1)
		return -1;
	int len = 0;
	size_t i = 0;
	while (i < n && b[i] == 0xff)
		i++, len += 8;
	if (i < n) {
		uint8_t x = b[i++];
		while (x & 0x80)
			x = (uint8_t)(x << 1), len++;
		if (x)
			return -1;
	}
	while (i < n)
		if (b[i++])
			return -1;
	return len;
}

/* addresses, routes and nameservers of one interface, at indent ind. An
 * IPv6 dhcp.ip (the store takes either family) is a static IPv6 address
 * with its default route to ::/0; without a netmask a host gets /32 in
 * IPv4 and /64 in IPv6 (the size of an IPv6 subnet). */
static int iface_l3(const json_t *d, const char *ind, struct buf *out)
{
	const json_t *ip = json_object_get(d, "ip");
	const char *addr = str(ip, "address"), *gw = str(ip, "gateway");
	struct in6_addr a6;
	int af = addr && inet_pton(AF_INET6, addr, &a6) == 1 ? AF_INET6 : AF_INET;
	int len = mask_len(str(ip, "netmask"), af);
	char cidr[INET6_ADDRSTRLEN + 8];
	size_t i;
	const json_t *v;

	if (!addr)
		return buf_printf(out, "%sdhcp4: true\n", ind) < 0 ? -E2BIG : 0;
	if (len < 0)
		len = af == AF_INET6 ? 64 : 32;
	if ((size_t)snprintf(cidr, sizeof(cidr), "%s/%d", addr, len) >= sizeof(cidr))
		return -EINVAL; /* the store's validation refuses such an address */
	if (buf_printf(out, "%sdhcp4: false\n", ind) < 0 ||
	    (af == AF_INET6 && buf_printf(out, "%sdhcp6: false\n", ind) < 0) ||
	    buf_printf(out, "%saddresses:\n%s  - ", ind, ind) < 0 || yq(out, cidr) < 0 ||
	    buf_putc(out, '\n') < 0)
		return -E2BIG;
	const json_t *routes = json_object_get(d, "classless_static_routes");
	if ((gw || json_array_size(routes)) && buf_printf(out, "%sroutes:\n", ind) < 0)
		return -E2BIG;
	if (gw && (buf_printf(out, "%s  - to: \"%s\"\n%s    via: ", ind,
			      af == AF_INET6 ? "::/0" : "0.0.0.0/0", ind) < 0 ||
		   yq(out, gw) < 0 || buf_putc(out, '\n') < 0))
		return -E2BIG;
	json_array_foreach(routes, i, v)
	{
		const char *to = str(v, "destination_descriptor"), *via = str(v, "router");
		if (!to || !via)
			continue;
		if (buf_printf(out, "%s  - to: ", ind) < 0 || yq(out, to) < 0 ||
		    buf_printf(out, "\n%s    via: ", ind) < 0 || yq(out, via) < 0 ||
		    buf_putc(out, '\n') < 0)
			return -E2BIG;
	}
	const json_t *dns = json_object_get(d, "name_servers");
	const char *domain = str(d, "domain_name");
	if (!json_array_size(dns) && !domain)
		return 0;
	if (buf_printf(out, "%snameservers:\n", ind) < 0)
		return -E2BIG;
	if (json_array_size(dns) && buf_printf(out, "%s  addresses:\n", ind) < 0)
		return -E2BIG;
	json_array_foreach(dns, i, v)
	{
		if (json_is_string(v) && (buf_printf(out, "%s    - ", ind) < 0 ||
					  yq(out, json_string_value(v)) < 0 ||
					  buf_putc(out, '\n') < 0))
			return -E2BIG;
	}
	if (domain && (buf_printf(out, "%s  search:\n%s    - ", ind, ind) < 0 ||
		       yq(out, domain) < 0 || buf_putc(out, '\n') < 0))
		return -E2BIG;
	return 0;
}

/* dhcp.vlan_id as a number 1..4094, or 0. */
static int vlan_of(const json_t *d)
{
	const json_t *v = json_object_get(d, "vlan_id");
	long long id = 0;
	if (json_is_integer(v))
		id = json_integer_value(v);
	else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		for (size_t i = 0; s[i] && i < 5; i++) {
			if (s[i] < '0' || s[i] > '9')
				return 0;
			id = id * 10 + (s[i] - '0');
		}
	}
	return id >= 1 && id <= 4094 ? (int)id : 0;
}

static int network_config(const json_t *hw, struct buf *out)
{
	const json_t *ifs = json_object_get(json_object_get(hw, "spec"), "interfaces");
	size_t i;
	const json_t *it;
	bool any_vlan = false;
	int e;

	if (buf_puts(out, "version: 2\nethernets:\n") < 0)
		return -E2BIG;
	json_array_foreach(ifs, i, it)
	{
		const json_t *d = json_object_get(it, "dhcp");
		const char *mac = str(d, "mac"), *name = str(d, "iface_name");
		if (!mac)
			continue;
		if (buf_printf(out, "  nic%zu:\n    match:\n      macaddress: ", i) < 0 ||
		    yq(out, mac) < 0 || buf_putc(out, '\n') < 0 ||
		    (name && (buf_puts(out, "    set-name: ") < 0 || yq(out, name) < 0 ||
			      buf_putc(out, '\n') < 0)))
			return -E2BIG;
		if (vlan_of(d)) {
			any_vlan = true;
			if (buf_puts(out, "    dhcp4: false\n") < 0)
				return -E2BIG;
		} else if ((e = iface_l3(d, "    ", out)) < 0) {
			return e;
		}
	}
	if (!any_vlan)
		return 0;
	if (buf_puts(out, "vlans:\n") < 0)
		return -E2BIG;
	json_array_foreach(ifs, i, it)
	{
		const json_t *d = json_object_get(it, "dhcp");
		int id = vlan_of(d);
		if (!str(d, "mac") || !id)
			continue;
		if (buf_printf(out, "  nic%zu.%d:\n    id: %d\n    link: nic%zu\n", i, id, id, i) < 0)
			return -E2BIG;
		if ((e = iface_l3(d, "    ", out)) < 0)
			return e;
	}
	return 0;
}

int md_nocloud(const json_t *hw, enum md_nocloud_file f, struct buf *out)
{
	const json_t *v;
	switch (f) {
	case MD_NOCLOUD_META_DATA:
		return meta_data(hw, out);
	case MD_NOCLOUD_USER_DATA:
		v = md_user_data(hw);
		return v && buf_append(out, json_string_value(v), json_string_length(v)) < 0 ?
			       -E2BIG :
			       0;
	case MD_NOCLOUD_VENDOR_DATA:
		v = json_object_get(json_object_get(hw, "spec"), "vendorData");
		return json_is_string(v) &&
				       buf_append(out, json_string_value(v), json_string_length(v)) < 0 ?
			       -E2BIG :
			       0;
	case MD_NOCLOUD_NETWORK_CONFIG:
		return network_config(hw, out);
	case MD_NOCLOUD_DIR:
		return buf_puts(out, "meta-data\nuser-data\nvendor-data\nnetwork-config") < 0 ?
			       -E2BIG :
			       0;
	default:
		return -ENOENT;
	}
}

int md_hegel_json(const json_t *hw, struct buf *out)
{
	const json_t *storage = json_object_get(
		json_object_get(json_object_get(json_object_get(hw, "spec"), "metadata"),
				"instance"),
		"storage");
	json_t *st = json_is_object(storage) ? json_incref((json_t *)storage) : json_object();
	json_t *doc = json_pack("{s:{s:{s:o}}}", "metadata", "instance", "storage", st);
	int e = 0;
	if (!doc)
		return -ENOMEM;
	if (json_dump_callback(doc, buf_dump_cb, out, JSON_COMPACT) < 0 || buf_putc(out, '\n') < 0)
		e = -E2BIG;
	json_decref(doc);
	return e;
}

int md_ignition(const json_t *hw, struct buf *out)
{
	const json_t *u = md_user_data(hw);
	json_t *doc;
	int e = -ENOENT;
	if (!u)
		return -ENOENT;
	doc = jsondec_loadb(json_string_value(u), json_string_length(u), JSON_REJECT_DUPLICATES,
			 NULL);
	if (json_is_object(doc) &&
	    json_is_string(json_object_get(json_object_get(doc, "ignition"), "version")))
		e = buf_append(out, json_string_value(u), json_string_length(u)) < 0 ? -E2BIG : 0;
	json_decref(doc);
	return e;
}
