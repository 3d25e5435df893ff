/* check_dhcp_hosts — the DHCP server's reservation table (dhcp/hosts.c),
 * its record of the leases on disk (dhcp/leases.c), its IPv4/UDP header
 * builder (dhcp/sock.c) and its table of the interfaces' subnets
 * (dhcp/link.c).
 *
 * The table must give back, for every MAC, exactly what
 * dhcp_host_from_hardware makes of the Hardware (every field, at every
 * limit), follow modifications, deletions and MACs moving between
 * Hardware, refuse an unusable interface without losing the others, and
 * stay right under random churn checked against a plain reference model.
 * Its address index must answer by IPv4 address, leave out interfaces
 * without an address or with disableDhcp, let the entry that took an
 * address last win when several hold it and the one before win again
 * when it goes (never a freed entry: ASan's run checks that), under random
 * churn too; dhcp_hosts_each must visit every entry once and stop when
 * asked.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp-policy.h"
#include "dhcp/dhcp.h"
#include "dhcp/map.h"
#include "dhcp/server-internal.h"
#include "tests/unit/unit.h"

/* ---- fixtures ---- */

static void mac_text(unsigned i, char out[18])
{
	snprintf(out, 18, "02:00:00:00:%02x:%02x", (i >> 8) & 255, i & 255);
}

static void mac_bytes(unsigned i, uint8_t out[6])
{
	const uint8_t m[6] = { 2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i };
	memcpy(out, m, 6);
}

/* A Hardware with one plain interface per MAC index in macs[0..n). */
static json_t *hw(const char *name, const unsigned *macs, size_t n)
{
	json_t *ifaces = json_array();
	for (size_t i = 0; i < n; i++) {
		char mac[18], ip[24];
		mac_text(macs[i], mac);
		snprintf(ip, sizeof(ip), "10.0.%u.%u", (macs[i] >> 8) & 255, macs[i] & 255);
		json_array_append_new(ifaces,
				      json_pack("{s:{s:s, s:s, s:{s:s, s:s}}, s:{s:b}}", "dhcp",
						"mac", mac, "hostname", name, "ip", "address", ip,
						"netmask", "255.255.0.0", "netboot", "allowPXE", 1));
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:o}}", "apiVersion",
			 "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name", name,
			 "namespace", "default", "spec", "interfaces", ifaces);
}

/* Every field of two hosts. */
static void host_eq(const struct dhcp_host *a, const struct dhcp_host *b)
{
	ck_assert_str_eq(a->name, b->name);
	ck_assert_str_eq(a->namespace_, b->namespace_);
	ck_assert_mem_eq(a->mac, b->mac, 6);
	ck_assert_uint_eq(a->ip, b->ip);
	ck_assert_uint_eq(a->netmask, b->netmask);
	ck_assert_uint_eq(a->gateway, b->gateway);
	ck_assert_uint_eq(a->ndns, b->ndns);
	ck_assert_mem_eq(a->dns, b->dns, sizeof(a->dns[0]) * a->ndns);
	ck_assert_uint_eq(a->nntp, b->nntp);
	ck_assert_mem_eq(a->ntp, b->ntp, sizeof(a->ntp[0]) * a->nntp);
	ck_assert_str_eq(a->hostname, b->hostname);
	ck_assert_str_eq(a->domain, b->domain);
	ck_assert_uint_eq(a->lease_time, b->lease_time);
	ck_assert_int_eq(a->vlan_id, b->vlan_id);
	ck_assert_uint_eq(a->nroutes, b->nroutes);
	for (size_t i = 0; i < a->nroutes; i++) {
		ck_assert_uint_eq(a->routes[i].dest, b->routes[i].dest);
		ck_assert_uint_eq(a->routes[i].prefix, b->routes[i].prefix);
		ck_assert_uint_eq(a->routes[i].router, b->routes[i].router);
	}
	ck_assert_str_eq(a->tftp_server_name, b->tftp_server_name);
	ck_assert_str_eq(a->boot_file_name, b->boot_file_name);
	ck_assert_str_eq(a->arch, b->arch);
	ck_assert_int_eq(a->uefi, b->uefi);
	ck_assert_int_eq(a->allow_pxe, b->allow_pxe);
	ck_assert_str_eq(a->ipxe_url, b->ipxe_url);
	ck_assert_str_eq(a->ipxe_binary, b->ipxe_binary);
	ck_assert_int_eq(a->disable_dhcp, b->disable_dhcp);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* Every field set, every string and list at its limit. */
static json_t *hw_full(void)
{
	char *name = repeat('n', DHCP_HOST_NAME_MAX), *ns = repeat('s', DHCP_HOST_NAMESPACE_MAX);
	char *str = repeat('h', DHCP_HOST_STRING_MAX), *url = repeat('u', DHCP_HOST_URL_MAX);
	char *bin = repeat('b', DHCP_HOST_BINARY_MAX), *arch = repeat('a', DHCP_HOST_ARCH_MAX);
	json_t *dns = json_array(), *ntp = json_array(), *routes = json_array();

	for (int i = 0; i < DHCP_HOST_MAX_DNS; i++) {
		char ip[32];
		snprintf(ip, sizeof(ip), "192.0.2.%d", i + 1);
		json_array_append_new(dns, json_string(ip));
		snprintf(ip, sizeof(ip), "198.51.100.%d", i + 1);
		json_array_append_new(ntp, json_string(ip));
	}
	json_array_append_new(dns, json_string("2001:db8::1")); /* IPv6: skipped */
	for (int i = 0; i < DHCP_HOST_MAX_ROUTES; i++) {
		char dd[32];
		snprintf(dd, sizeof(dd), "10.%d.0.0/%d", i, 16 + i % 9);
		json_array_append_new(routes, json_pack("{s:s, s:s}", "destination_descriptor", dd,
							"router", "192.0.2.254"));
	}
	json_t *o = json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:s, "
		"s:{s:s, s:s, s:s}, s:o, s:o, s:o}, s:{s:b, s:{s:s, s:s}}, s:b}, "
		"{s:{s:s}}]}}",
		"apiVersion", "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name", name,
		"namespace", ns, "spec", "interfaces", "dhcp", "mac", "AA:BB:CC:DD:EE:FF", "hostname",
		str, "domain_name", str, "tftp_server_name", str, "boot_file_name", str, "arch", arch,
		"uefi", 0, "lease_time", (json_int_t)4294967296LL, "vlan_id", "4094", "ip", "address",
		"203.0.113.9", "netmask", "255.255.255.0", "gateway", "203.0.113.1", "name_servers",
		dns, "time_servers", ntp, "classless_static_routes", routes, "netboot", "allowPXE", 1,
		"ipxe", "url", url, "binary", bin, "disableDhcp", 1, "dhcp", "mac",
		"aa:bb:cc:dd:ee:01");
	free(name);
	free(ns);
	free(str);
	free(url);
	free(bin);
	free(arch);
	ck_assert_ptr_nonnull(o);
	return o;
}

/* ---- the table ---- */

START_TEST(test_roundtrip)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	json_t *full = hw_full();
	const unsigned one[] = { 7 };
	json_t *plain = hw("plain", one, 1);
	const uint8_t m_full[6] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	const uint8_t m_second[6] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 };
	struct dhcp_host want, got;
	uint8_t m_plain[6];
	char err[256];

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(dhcp_hosts_put(t, full, err, sizeof(err)), 2);
	ck_assert_int_eq(dhcp_hosts_put(t, plain, err, sizeof(err)), 1);
	ck_assert_uint_eq(dhcp_hosts_count(t), 3);

	ck_assert_int_eq(dhcp_host_from_hardware(full, m_full, &want, err, sizeof(err)), 0);
	ck_assert_int_eq(dhcp_hosts_lookup(t, m_full, &got), 0);
	host_eq(&want, &got);
	/* the limits really were reached */
	ck_assert_uint_eq(strlen(got.hostname), DHCP_HOST_STRING_MAX);
	ck_assert_uint_eq(strlen(got.name), DHCP_HOST_NAME_MAX);
	ck_assert_uint_eq(got.ndns, DHCP_HOST_MAX_DNS);
	ck_assert_uint_eq(got.nroutes, DHCP_HOST_MAX_ROUTES);
	ck_assert_uint_eq(got.lease_time, UINT32_MAX);
	ck_assert_int_eq(got.vlan_id, 4094);
	ck_assert_int_eq(got.uefi, DHCP_FALSE);
	ck_assert(got.disable_dhcp);

	ck_assert_int_eq(dhcp_host_from_hardware(full, m_second, &want, err, sizeof(err)), 0);
	ck_assert_int_eq(dhcp_hosts_lookup(t, m_second, &got), 0);
	host_eq(&want, &got);
	ck_assert_int_eq(got.vlan_id, -1);
	ck_assert_int_eq(got.allow_pxe, DHCP_UNSET);

	mac_bytes(7, m_plain);
	ck_assert_int_eq(dhcp_host_from_hardware(plain, m_plain, &want, err, sizeof(err)), 0);
	ck_assert_int_eq(dhcp_hosts_lookup(t, m_plain, &got), 0);
	host_eq(&want, &got);

	mac_bytes(8, m_plain);
	ck_assert_int_eq(dhcp_hosts_lookup(t, m_plain, &got), -ENOENT);
	/* packed, the full host is far smaller than its struct */
	ck_assert_uint_lt(dhcp_hosts_bytes(t), 3 * sizeof(struct dhcp_host) + 64 * 16);
	json_decref(full);
	json_decref(plain);
	dhcp_hosts_free(t);
}
END_TEST

static bool has(const struct dhcp_hosts *t, unsigned mac, const char *owner)
{
	struct dhcp_host h;
	uint8_t m[6];
	mac_bytes(mac, m);
	if (dhcp_hosts_lookup(t, m, &h) < 0)
		return false;
	return !owner || strcmp(h.name, owner) == 0;
}

START_TEST(test_modify_remove)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	const unsigned a1[] = { 1, 2 }, a2[] = { 2, 3 };
	char err[256];
	json_t *o = hw("a", a1, 2);

	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_decref(o);
	o = hw("a", a2, 2);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_decref(o);
	ck_assert(!has(t, 1, NULL));
	ck_assert(has(t, 2, "a"));
	ck_assert(has(t, 3, "a"));
	ck_assert_uint_eq(dhcp_hosts_count(t), 2);

	/* a Hardware with no interface left */
	o = hw("a", NULL, 0);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 0);
	json_decref(o);
	ck_assert_uint_eq(dhcp_hosts_count(t), 0);

	o = hw("a", a1, 2);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_decref(o);
	dhcp_hosts_remove(t, "default", "other"); /* unknown: nothing */
	dhcp_hosts_remove(t, "elsewhere", "a");   /* another namespace */
	ck_assert_uint_eq(dhcp_hosts_count(t), 2);
	dhcp_hosts_remove(t, "default", "a");
	ck_assert_uint_eq(dhcp_hosts_count(t), 0);
	ck_assert(!has(t, 1, NULL));
	/* what is left is the empty slots; another round leaves the same */
	size_t empty = dhcp_hosts_bytes(t);
	o = hw("a", a1, 2);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_decref(o);
	ck_assert_uint_gt(dhcp_hosts_bytes(t), empty);
	dhcp_hosts_remove(t, "default", "a");
	ck_assert_uint_eq(dhcp_hosts_bytes(t), empty);

	/* not a Hardware */
	o = json_pack("{s:{}}", "metadata");
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), -EINVAL);
	json_decref(o);
	dhcp_hosts_clear(t);
	ck_assert_uint_eq(dhcp_hosts_bytes(t), 0);
	dhcp_hosts_free(t);
	dhcp_hosts_free(NULL);
}
END_TEST

/* A MAC handed from one Hardware to another: the new owner keeps it
 * whatever the old one does next. */
START_TEST(test_move)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	const unsigned a[] = { 1, 2 }, b[] = { 2 }, a_only[] = { 1 };
	char err[256];
	json_t *o;

	o = hw("a", a, 2);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_decref(o);
	o = hw("b", b, 1);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 1);
	json_decref(o);
	ck_assert(has(t, 2, "b"));
	ck_assert(has(t, 1, "a"));
	/* a is rewritten without 2: b's entry stays */
	o = hw("a", a_only, 1);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 1);
	json_decref(o);
	ck_assert(has(t, 2, "b"));
	dhcp_hosts_remove(t, "default", "a");
	ck_assert(has(t, 2, "b"));
	ck_assert(!has(t, 1, NULL));
	/* and back again */
	o = hw("a", a, 2);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_decref(o);
	ck_assert(has(t, 2, "a"));
	dhcp_hosts_remove(t, "default", "b");
	ck_assert(has(t, 2, "a"));
	ck_assert_uint_eq(dhcp_hosts_count(t), 2);
	dhcp_hosts_free(t);
}
END_TEST

/* An interface the server cannot use is refused alone, and a refused
 * change takes away the entry it had. */
START_TEST(test_refused_interface)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	const unsigned macs[] = { 1, 2 };
	char err[256];
	json_t *o = hw("a", macs, 2);
	char *longname = repeat('x', DHCP_HOST_STRING_MAX + 1);

	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_object_set_new(
		json_object_get(json_array_get(json_object_get(json_object_get(o, "spec"),
								"interfaces"),
					       1),
				"dhcp"),
		"hostname", json_string(longname));
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "spec.interfaces[1]") && strstr(err, "hostname"), "%s", err);
	ck_assert(has(t, 1, "a"));
	ck_assert(!has(t, 2, NULL));
	ck_assert_uint_eq(dhcp_hosts_count(t), 1);
	/* a MAC that does not parse is skipped, not an error */
	json_object_set_new(
		json_object_get(json_array_get(json_object_get(json_object_get(o, "spec"),
								"interfaces"),
					       1),
				"dhcp"),
		"mac", json_string("not-a-mac"));
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 1);
	free(longname);
	json_decref(o);
	dhcp_hosts_free(t);
}
END_TEST

#define CHURN_OWNERS 300
#define CHURN_MACS 500
#define CHURN_OPS 4000

/* Random puts and removes against a reference: model[mac] = owner + 1. */
START_TEST(test_churn)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	int model[CHURN_MACS] = { 0 };
	unsigned seed = 12345;
	char err[256], name[16];

	for (int op = 0; op < CHURN_OPS; op++) {
		unsigned owner = (unsigned)rand_r(&seed) % CHURN_OWNERS;
		snprintf(name, sizeof(name), "o%u", owner);
		if (rand_r(&seed) % 4 == 0) {
			dhcp_hosts_remove(t, "default", name);
			for (int m = 0; m < CHURN_MACS; m++)
				if (model[m] == (int)owner + 1)
					model[m] = 0;
		} else {
			unsigned macs[6];
			size_t n = (size_t)rand_r(&seed) % 6, k = 0;
			for (size_t i = 0; i < n; i++) {
				unsigned m = (unsigned)rand_r(&seed) % CHURN_MACS;
				bool dup = false;
				for (size_t j = 0; j < k; j++)
					dup |= macs[j] == m;
				if (!dup)
					macs[k++] = m;
			}
			json_t *o = hw(name, macs, k);
			ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), (int)k);
			json_decref(o);
			for (int m = 0; m < CHURN_MACS; m++)
				if (model[m] == (int)owner + 1)
					model[m] = 0;
			for (size_t j = 0; j < k; j++)
				model[macs[j]] = (int)owner + 1;
		}
		size_t want = 0;
		for (int m = 0; m < CHURN_MACS; m++)
			want += model[m] != 0;
		ck_assert_uint_eq(dhcp_hosts_count(t), want);
		if (op % 97 == 0 || op == CHURN_OPS - 1) {
			for (int m = 0; m < CHURN_MACS; m++) {
				char o[16];
				snprintf(o, sizeof(o), "o%d", model[m] - 1);
				ck_assert_msg(model[m] ? has(t, (unsigned)m, o) : !has(t, (unsigned)m, NULL),
					      "op %d mac %d", op, m);
				/* hw() gives MAC m the address 10.0.m */
				struct dhcp_host h;
				int e = dhcp_hosts_lookup_ip(t, 0x0a000000u | (unsigned)m, &h);
				ck_assert_int_eq(e, model[m] ? 0 : -ENOENT);
				ck_assert(!model[m] || strcmp(h.name, o) == 0);
			}
		}
	}
	dhcp_hosts_free(t);
}
END_TEST

/* ---- the address index ---- */

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* A Hardware with one interface per MAC index in macs[0..n), MAC i with
 * address ips[i] (0: none), disableDhcp where disable has bit i. */
static json_t *hw_ips(const char *name, const unsigned *macs, const uint32_t *ips, size_t n,
		      unsigned disable)
{
	json_t *ifaces = json_array();
	for (size_t i = 0; i < n; i++) {
		char mac[18], ip[24];
		mac_text(macs[i], mac);
		json_t *dhcp = json_pack("{s:s, s:s}", "mac", mac, "hostname", name);
		if (ips[i]) {
			snprintf(ip, sizeof(ip), "%u.%u.%u.%u", ips[i] >> 24, (ips[i] >> 16) & 255,
				 (ips[i] >> 8) & 255, ips[i] & 255);
			json_object_set_new(
				dhcp, "ip",
				json_pack("{s:s, s:s}", "address", ip, "netmask", "255.255.0.0"));
		}
		json_array_append_new(ifaces, json_pack("{s:o, s:b}", "dhcp", dhcp, "disableDhcp",
							(disable >> i) & 1));
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:o}}", "apiVersion",
			 "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name", name,
			 "namespace", "default", "spec", "interfaces", ifaces);
}

static void put_ips(struct dhcp_hosts *t, const char *name, const unsigned *macs,
		    const uint32_t *ips, size_t n, unsigned disable)
{
	char err[256];
	json_t *o = hw_ips(name, macs, ips, n, disable);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), (int)n);
	json_decref(o);
}

/* Who answers for ip: "name/mac index", or "" when nobody. */
static const char *by_ip(const struct dhcp_hosts *t, uint32_t ip)
{
	static char who[DHCP_HOST_NAME_MAX + 16];
	struct dhcp_host h;
	memset(&h, 0x5a, sizeof(h));
	int e = dhcp_hosts_lookup_ip(t, ip, &h);
	if (e == -ENOENT)
		return "";
	ck_assert_int_eq(e, 0);
	ck_assert_uint_eq(h.ip, ip);
	snprintf(who, sizeof(who), "%s/%u", h.name, (unsigned)h.mac[4] << 8 | h.mac[5]);
	return who;
}

START_TEST(test_lookup_ip)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	const uint32_t x = IP(10, 9, 0, 1), y = IP(10, 9, 0, 2), z = IP(10, 9, 0, 3);
	const unsigned m1[] = { 1 }, m2[] = { 2 }, m3[] = { 3 }, m45[] = { 4, 5 };
	const uint32_t ipx[] = { x }, ipy[] = { y }, ipzz[] = { z, z }, none[] = { 0 };

	/* one holder; the address 0 and an unknown one are nobody's */
	put_ips(t, "a", m1, ipx, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "a/1");
	ck_assert_str_eq(by_ip(t, y), "");
	ck_assert_str_eq(by_ip(t, 0), "");

	/* b takes x too: the last entered wins; b goes: a again */
	put_ips(t, "b", m2, ipx, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "b/2");
	dhcp_hosts_remove(t, "default", "b");
	ck_assert_str_eq(by_ip(t, x), "a/1");

	/* three holders; the middle one goes, then the newest */
	put_ips(t, "b", m2, ipx, 1, 0);
	put_ips(t, "c", m3, ipx, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "c/3");
	dhcp_hosts_remove(t, "default", "b");
	ck_assert_str_eq(by_ip(t, x), "c/3");
	dhcp_hosts_remove(t, "default", "c");
	ck_assert_str_eq(by_ip(t, x), "a/1");

	/* a put that keeps its address keeps its place: b stays ahead */
	put_ips(t, "b", m2, ipx, 1, 0);
	put_ips(t, "a", m1, ipx, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "b/2");
	/* b moves to y: a answers for x again */
	put_ips(t, "b", m2, ipy, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "a/1");
	ck_assert_str_eq(by_ip(t, y), "b/2");
	/* a loses its address: x is nobody's, its MAC is still served */
	put_ips(t, "a", m1, none, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "");
	ck_assert(has(t, 1, "a"));
	/* disableDhcp: the MAC is in the table, its address is not indexed */
	put_ips(t, "a", m1, ipx, 1, 1);
	ck_assert(has(t, 1, "a"));
	ck_assert_str_eq(by_ip(t, x), "");
	put_ips(t, "a", m1, ipx, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "a/1");

	/* a MAC taken over by another Hardware with another address */
	put_ips(t, "c", m1, ipy, 1, 0);
	ck_assert_str_eq(by_ip(t, x), "");
	ck_assert_str_eq(by_ip(t, y), "c/1"); /* newer than b's */
	dhcp_hosts_remove(t, "default", "a"); /* owns nothing now */
	ck_assert_str_eq(by_ip(t, y), "c/1");
	dhcp_hosts_remove(t, "default", "c");
	ck_assert_str_eq(by_ip(t, y), "b/2");

	/* two interfaces of one Hardware reserve z: the later one */
	put_ips(t, "d", m45, ipzz, 2, 0);
	ck_assert_str_eq(by_ip(t, z), "d/5");
	/* the later interface dropped: the earlier answers */
	put_ips(t, "d", m45, ipzz, 1, 0);
	ck_assert_str_eq(by_ip(t, z), "d/4");
	dhcp_hosts_remove(t, "default", "d");
	ck_assert_str_eq(by_ip(t, z), "");

	dhcp_hosts_clear(t);
	ck_assert_str_eq(by_ip(t, y), "");
	ck_assert_uint_eq(dhcp_hosts_bytes(t), 0);
	dhcp_hosts_free(t);
}
END_TEST

/* dhcp_hosts_bytes counts the index: the same entries take more room
 * when their addresses are indexed. */
START_TEST(test_lookup_ip_bytes)
{
	struct dhcp_hosts *with = dhcp_hosts_new(), *without = dhcp_hosts_new();
	unsigned macs[32];
	uint32_t ips[32], none[32] = { 0 };
	for (unsigned i = 0; i < 32; i++) {
		macs[i] = i;
		ips[i] = IP(10, 9, 1, i + 1);
	}
	put_ips(with, "a", macs, ips, 32, 0);
	put_ips(without, "a", macs, none, 32, 0);
	ck_assert_uint_eq(dhcp_hosts_count(with), dhcp_hosts_count(without));
	ck_assert_uint_ge(dhcp_hosts_bytes(with),
			  dhcp_hosts_bytes(without) + 32 * sizeof(struct dhcp_map_slot));
	dhcp_hosts_free(with);
	dhcp_hosts_free(without);
}
END_TEST

#define IPCHURN_MACS 64
#define IPCHURN_ADDRS 6 /* few: addresses are shared often */
#define IPCHURN_OPS 3000
#define IPCHURN_NONE (-1)

/* The reference: each MAC's address (IPCHURN_NONE: not in the table, or
 * no address) and the time its address was entered. */
struct ipmodel {
	int owner[IPCHURN_MACS]; /* owner + 1, 0: absent */
	int addr[IPCHURN_MACS];
	unsigned long since[IPCHURN_MACS];
	unsigned long clock;
};

static void ipmodel_drop(struct ipmodel *m, int mac)
{
	m->owner[mac] = 0;
	m->addr[mac] = IPCHURN_NONE;
}

/* Random puts and removes of Hardware whose interfaces share a handful of
 * addresses, against the model: for each address, the MAC that entered
 * it last among those holding it answers. */
START_TEST(test_lookup_ip_churn)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	struct ipmodel m = { 0 };
	unsigned seed = 777;
	char name[16];

	for (int i = 0; i < IPCHURN_MACS; i++)
		m.addr[i] = IPCHURN_NONE;
	for (int op = 0; op < IPCHURN_OPS; op++) {
		unsigned owner = (unsigned)rand_r(&seed) % 16;
		snprintf(name, sizeof(name), "o%u", owner);
		if (rand_r(&seed) % 4 == 0) {
			dhcp_hosts_remove(t, "default", name);
			for (int i = 0; i < IPCHURN_MACS; i++)
				if (m.owner[i] == (int)owner + 1)
					ipmodel_drop(&m, i);
		} else {
			unsigned macs[5];
			uint32_t ips[5];
			int addr[5];
			size_t n = (size_t)rand_r(&seed) % 5, k = 0;
			for (size_t i = 0; i < n; i++) {
				unsigned mac = (unsigned)rand_r(&seed) % IPCHURN_MACS;
				bool dup = false;
				for (size_t j = 0; j < k; j++)
					dup |= macs[j] == mac;
				if (dup)
					continue;
				addr[k] = (int)((unsigned)rand_r(&seed) % (IPCHURN_ADDRS + 1)) - 1;
				ips[k] = addr[k] == IPCHURN_NONE ? 0 : IP(10, 9, 2, addr[k] + 1);
				macs[k++] = mac;
			}
			put_ips(t, name, macs, ips, k, 0);
			/* in interface order, as the table enters them */
			for (size_t j = 0; j < k; j++) {
				int mac = (int)macs[j];
				if (m.owner[mac] == 0 || m.addr[mac] != addr[j])
					m.since[mac] = ++m.clock;
				m.owner[mac] = (int)owner + 1;
				m.addr[mac] = addr[j];
			}
			for (int i = 0; i < IPCHURN_MACS; i++) {
				bool kept = false;
				for (size_t j = 0; j < k; j++)
					kept |= macs[j] == (unsigned)i;
				if (m.owner[i] == (int)owner + 1 && !kept)
					ipmodel_drop(&m, i);
			}
		}
		for (int a = 0; a < IPCHURN_ADDRS; a++) {
			int best = -1;
			char want[32] = "";
			for (int i = 0; i < IPCHURN_MACS; i++)
				if (m.addr[i] == a && (best < 0 || m.since[i] > m.since[best]))
					best = i;
			if (best >= 0)
				snprintf(want, sizeof(want), "o%d/%d", m.owner[best] - 1, best);
			ck_assert_msg(strcmp(by_ip(t, IP(10, 9, 2, a + 1)), want) == 0,
				      "op %d address %d: %s, want %s", op, a,
				      by_ip(t, IP(10, 9, 2, a + 1)), want);
		}
	}
	dhcp_hosts_free(t);
}
END_TEST

/* dhcp_hosts_each's callback: counts, and stops at stop_at. */
struct each_seen {
	size_t calls, stop_at;
	unsigned macs[8];
};

static int each_count(const struct dhcp_host *h, void *arg)
{
	struct each_seen *s = arg;
	ck_assert_uint_lt(s->calls, 8);
	s->macs[s->calls++] = (unsigned)h->mac[4] << 8 | h->mac[5];
	return s->calls == s->stop_at;
}

START_TEST(test_each)
{
	struct dhcp_hosts *t = dhcp_hosts_new();
	const unsigned a[] = { 1, 2 }, b[] = { 3 };
	struct each_seen seen = { 0 };
	char err[256];

	ck_assert_uint_eq(dhcp_hosts_each(t, each_count, &seen), 0);
	ck_assert_uint_eq(seen.calls, 0);
	json_t *o = hw("a", a, 2);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 2);
	json_decref(o);
	o = hw("b", b, 1);
	ck_assert_int_eq(dhcp_hosts_put(t, o, err, sizeof(err)), 1);
	json_decref(o);
	/* every entry once */
	ck_assert_uint_eq(dhcp_hosts_each(t, each_count, &seen), 3);
	ck_assert_uint_eq(seen.calls, 3);
	unsigned sum = 0, mask = 0;
	for (size_t i = 0; i < 3; i++) {
		sum += seen.macs[i];
		mask |= 1u << seen.macs[i];
	}
	ck_assert_uint_eq(mask, 0xe);
	ck_assert_uint_eq(sum, 6);
	/* stopped by the callback: the calls made, the stopping one counted */
	seen = (struct each_seen){ .stop_at = 2 };
	ck_assert_uint_eq(dhcp_hosts_each(t, each_count, &seen), 2);
	ck_assert_uint_eq(seen.calls, 2);
	dhcp_hosts_remove(t, "default", "a");
	seen = (struct each_seen){ 0 };
	ck_assert_uint_eq(dhcp_hosts_each(t, each_count, &seen), 1);
	ck_assert_uint_eq(seen.macs[0], 3);
	dhcp_hosts_free(t);
}
END_TEST

/* ---- the IPv4/UDP header builder ---- */

static uint16_t fold(const uint8_t *p, size_t n, uint32_t sum)
{
	for (; n > 1; p += 2, n -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (n)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* ---- the leases on disk (leases.c) ---- */

static const uint8_t ma[6] = { 2, 0, 0, 0, 0, 0xa }, mb[6] = { 2, 0, 0, 0, 0, 0xb };

START_TEST(test_lease_marks)
{
	struct dhcp_leases *t = dhcp_leases_new();
	uint64_t own = dhcp_leases_owner("default", "m1"), other = dhcp_leases_owner("default", "m2");
	struct dhcp_lease_mark m1 = { 0x0a000001, 100, 700 }, m2 = { 0x0a000001, 200, 800 };
	const struct dhcp_lease_mark *got;

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_ne(own, other);
	ck_assert_uint_ne(own, dhcp_leases_owner("default/m", "1"));
	ck_assert_uint_eq(own, dhcp_leases_owner("default", "m1"));
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));

	/* Loaded at start: handed out, to its own Hardware only. */
	ck_assert_int_eq(dhcp_leases_load(t, ma, &m1, own), 0);
	got = dhcp_leases_get(t, ma, own);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(got->ip, m1.ip);
	ck_assert_int_eq(got->starts, 100);
	ck_assert_int_eq(got->expires, 700);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, other));
	ck_assert_ptr_null(dhcp_leases_get(t, mb, own));

	/* A write in flight holds it back, and its completion replaces it. */
	ck_assert_int_eq(dhcp_leases_queued(t, ma, m2.ip), 0);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));
	dhcp_leases_done(t, ma, m2.ip, &m2, own);
	got = dhcp_leases_get(t, ma, own);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(got->starts, 200);

	/* Two in flight, a bound then a RELEASE: nothing until both are
	 * done, and then nothing, as on disk. */
	ck_assert_int_eq(dhcp_leases_queued(t, ma, m1.ip), 0);
	ck_assert_int_eq(dhcp_leases_queued(t, ma, 0), 0);
	dhcp_leases_done(t, ma, m1.ip, &m1, own);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));
	dhcp_leases_done(t, ma, 0, NULL, 0);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));
	ck_assert_uint_eq(dhcp_leases_count(t), 0); /* nothing left to keep */

	/* A failed write leaves nothing either. */
	ck_assert_int_eq(dhcp_leases_load(t, ma, &m1, own), 0);
	ck_assert_int_eq(dhcp_leases_queued(t, ma, m1.ip), 0);
	dhcp_leases_done(t, ma, m1.ip, NULL, 0);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));

	/* A load does not overwrite what a write in flight will leave. */
	ck_assert_int_eq(dhcp_leases_queued(t, ma, m2.ip), 0);
	ck_assert_int_eq(dhcp_leases_load(t, ma, &m1, own), 0);
	dhcp_leases_done(t, ma, m2.ip, &m2, own);
	ck_assert_int_eq(dhcp_leases_get(t, ma, own)->starts, 200);

	/* mb's bound write took the address: ma's mark of it is erased,
	 * mb's own stays. */
	ck_assert_int_eq(dhcp_leases_queued(t, mb, m1.ip), 0);
	dhcp_leases_done(t, mb, m1.ip, &m1, other);
	dhcp_leases_ip_taken(t, m1.ip, mb);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));
	ck_assert_ptr_nonnull(dhcp_leases_get(t, mb, other));

	/* A completion for a MAC with nothing queued changes nothing. */
	dhcp_leases_done(t, ma, 0, &m1, own);
	ck_assert_ptr_nonnull(dhcp_leases_get(t, ma, own));

	/* While mb's bound write of ma's address is in flight, ma's mark is
	 * held back, though ma has no write of its own queued... */
	ck_assert_int_eq(dhcp_leases_queued(t, mb, m1.ip), 0);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));
	/* ...and comes back when that write fails (the disk is as it was). */
	dhcp_leases_done(t, mb, m1.ip, NULL, 0);
	ck_assert_ptr_nonnull(dhcp_leases_get(t, ma, own));
	/* ma's own write, queued before mb's of the same address, completes
	 * first: still held back until mb's completes, which took it. */
	ck_assert_int_eq(dhcp_leases_queued(t, ma, m1.ip), 0);
	ck_assert_int_eq(dhcp_leases_queued(t, mb, m1.ip), 0);
	dhcp_leases_done(t, ma, m1.ip, &m1, own);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));
	dhcp_leases_done(t, mb, m1.ip, &m1, other);
	dhcp_leases_ip_taken(t, m1.ip, mb);
	ck_assert_ptr_null(dhcp_leases_get(t, ma, own));
	ck_assert_ptr_nonnull(dhcp_leases_get(t, mb, other));
	/* A write of another address leaves the mark alone. */
	ck_assert_int_eq(dhcp_leases_queued(t, ma, m1.ip + 1), 0);
	ck_assert_ptr_nonnull(dhcp_leases_get(t, mb, other));
	dhcp_leases_done(t, ma, m1.ip + 1, NULL, 0);

	dhcp_leases_free(t);
	dhcp_leases_free(NULL);
}
END_TEST

START_TEST(test_lease_marks_sweep)
{
	struct dhcp_leases *t = dhcp_leases_new();
	enum { N = 3000 };

	ck_assert_uint_eq(dhcp_leases_sweep(t, 0, 100), 0);
	/* Even MACs expire at 1000, odd ones at 5000; every tenth has a
	 * write in flight. */
	for (unsigned i = 0; i < N; i++) {
		uint8_t mac[6] = { 2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i };
		struct dhcp_lease_mark m = { 0x0a000000 + i, 0, i % 2 ? 5000 : 1000 };
		ck_assert_int_eq(dhcp_leases_load(t, mac, &m, 1), 0);
		if (i % 10 == 0)
			ck_assert_int_eq(dhcp_leases_queued(t, mac, m.ip), 0);
	}
	ck_assert_uint_eq(dhcp_leases_count(t), N);
	ck_assert_uint_eq(dhcp_leases_sweep(t, 999, 1 << 20), 0);
	/* Bounded: 64 slots visited remove at most 64. */
	size_t first = dhcp_leases_sweep(t, 1000, 64);
	ck_assert_uint_le(first, 64);
	size_t removed = first;
	for (int pass = 0; pass < 64 && dhcp_leases_count(t) > N / 2 + N / 10; pass++)
		removed += dhcp_leases_sweep(t, 1000, 1024);
	/* Every expired one without a write in flight is gone. */
	ck_assert_uint_eq(dhcp_leases_count(t), N / 2 + N / 10);
	ck_assert_uint_eq(removed, N / 2 - N / 10);
	for (unsigned i = 0; i < N; i++) {
		uint8_t mac[6] = { 2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i };
		const struct dhcp_lease_mark *m = dhcp_leases_get(t, mac, 1);
		if (i % 10 == 0)
			ck_assert_ptr_null(m); /* held back */
		else if (i % 2)
			ck_assert_msg(m && m->ip == 0x0a000000 + i, "lease %u lost", i);
		else
			ck_assert_ptr_null(m);
	}
	dhcp_leases_free(t);
}
END_TEST

START_TEST(test_udp4)
{
	uint8_t out[600], payload[301];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	int n = dhcp_build_udp4(out, sizeof(out), 0xc0a84d01, 0xc0a84d15, 67, 68, payload,
				sizeof(payload));
	ck_assert_int_eq(n, 20 + 8 + 301);
	ck_assert_uint_eq(out[0], 0x45);
	ck_assert_uint_eq(out[2] << 8 | out[3], (unsigned)n);
	ck_assert_uint_eq(out[8], 64);
	ck_assert_uint_eq(out[9], 17);
	const uint8_t addrs[8] = { 192, 168, 77, 1, 192, 168, 77, 21 };
	ck_assert_mem_eq(out + 12, addrs, 8);
	/* a header whose checksum is right sums to 0xffff */
	ck_assert_uint_eq(fold(out, 20, 0), 0xffff);
	ck_assert_uint_eq(out[20] << 8 | out[21], 67);
	ck_assert_uint_eq(out[22] << 8 | out[23], 68);
	ck_assert_uint_eq(out[24] << 8 | out[25], 8 + 301);
	ck_assert_mem_eq(out + 28, payload, sizeof(payload));
	/* UDP: pseudo-header + header + data (odd length) */
	uint32_t pseudo = fold(out + 12, 8, 0) + 17 + 8 + 301;
	ck_assert_uint_eq(fold(out + 20, 8 + 301, pseudo), 0xffff);
	ck_assert_uint_ne(out[26] << 8 | out[27], 0);
	/* too small a buffer */
	ck_assert_int_eq(dhcp_build_udp4(out, 20 + 8 + 300, 1, 2, 67, 68, payload, 301), -ENOSPC);
	ck_assert_int_eq(dhcp_build_udp4(out, sizeof(out), 1, 2, 67, 68, payload, 0), 28);
}
END_TEST

/* The loopback interface, which every machine has with 127.0.0.1/8: its
 * subnets as the kernel has them; an unknown interface has none. */
START_TEST(test_links)
{
	struct dhcp_links *l = NULL;
	const char *name = NULL;
	char str[256];
	int lo = (int)if_nametoindex("lo");

	ck_assert_int_gt(lo, 0);
	ck_assert_int_eq(dhcp_links_new(&l), 0);
	const struct dhcp_link *k = dhcp_links_get(l, lo, &name);
	ck_assert_str_eq(name, "lo");
	dhcp_link_str(k, str, sizeof(str));
	ck_assert_msg(strstr(str, "127.0.0.0/8") != NULL, "lo: %s", str);
	ck_assert(!dhcp_link_off(k, 0x7f000005, 0));
	ck_assert(dhcp_link_off(k, 0x0a000005, 0xffffff00));
	for (size_t i = 0; i < k->n; i++)
		ck_assert_uint_eq(k->net[i].addr & ~k->net[i].mask, 0);
	/* a change said by netlink: read again at the next lookup */
	if (dhcp_links_fd(l) >= 0)
		dhcp_links_changed(l);
	k = dhcp_links_get(l, lo, &name);
	ck_assert_str_eq(name, "lo");
	ck_assert(!dhcp_link_off(k, 0x7f000005, 0));
	k = dhcp_links_get(l, 0x7ffffff0, &name);
	ck_assert_uint_eq(k->n, 0);
	ck_assert_str_eq(name, "");
	dhcp_links_free(l);

	/* the text form, truncated to what fits */
	struct dhcp_link two = { .n = 2,
				 .net = { { 0xc0a84d00, 0xffffff00 }, { 0x0a000000, 0xff000000 } } };
	dhcp_link_str(&two, str, sizeof(str));
	ck_assert_str_eq(str, "192.168.77.0/24, 10.0.0.0/8");
	dhcp_link_str(&two, str, 10);
	ck_assert_str_eq(str, "192.168.7");
}
END_TEST

static Suite *hosts_suite(void)
{
	Suite *s = suite_create("dhcp_hosts");
	TCase *tc = tcase_create("hosts");
	tcase_set_timeout(tc, 60);
	UNIT_TEST(tc, test_roundtrip);
	UNIT_TEST(tc, test_modify_remove);
	UNIT_TEST(tc, test_move);
	UNIT_TEST(tc, test_refused_interface);
	UNIT_TEST(tc, test_churn);
	UNIT_TEST(tc, test_lookup_ip);
	UNIT_TEST(tc, test_lookup_ip_bytes);
	UNIT_TEST(tc, test_lookup_ip_churn);
	UNIT_TEST(tc, test_each);
	UNIT_TEST(tc, test_lease_marks);
	UNIT_TEST(tc, test_lease_marks_sweep);
	UNIT_TEST(tc, test_udp4);
	UNIT_TEST(tc, test_links);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(hosts_suite());
}
