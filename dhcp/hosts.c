/* hosts — the DHCP server's reservation table: MAC -> struct dhcp_host,
 * kept in memory and packed.
 *
 * DESIGN: looking a MAC up in SQLite and decoding its Hardware with
 * jansson costs ~30 µs (the store benchmark), more than the whole rest of
 * a DHCP exchange; so the server keeps what the policy needs in memory,
 * built once per Hardware change rather than once per packet. A struct
 * dhcp_host is ~2.3 KB of mostly empty fixed-size strings; an entry here
 * holds it packed (the numbers, then only the addresses and routes in use,
 * then each string as a length and its bytes), typically 100-200 bytes,
 * so 100,000 reservations take a few tens of MB. A lookup is one probe
 * and one unpack (a few hundred bytes of copying).
 *
 * Two hash tables (map.c): MAC -> entry, and "namespace/name" -> owner,
 * the list of the MACs the Hardware has in the table. The owner list is
 * what lets a MODIFIED or DELETED Hardware take away exactly the MACs it
 * had, without a scan.
 * Each entry points at its owner; a MAC that moves from one Hardware to
 * another (the store allows it once the first lets go) is taken from the
 * old owner's list.
 *
 * A third, for a follower that answers by address (the Kea hook's host
 * data source): IPv4 address -> the entries reserving it (ip set,
 * disable_dhcp clear), chained through entry.ip_next, the one that took
 * the address last at the head. The store keeps addresses unique, but a
 * follower applies one change at a time, so two entries may hold the
 * same address for a while (or for good, from a source that does not
 * check): the newest wins, and when it goes, or changes address, the one
 * before it wins again; no entry is ever left in the index after it is
 * freed. It is touched only when the table changes: the MAC lookup of
 * the packet path does not see it.
 *
 * Not thread-safe: the DHCP thread owns its table.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mac.h"
#include "dhcp/dhcp.h"
#include "dhcp/map.h"

/* ---- entries and owners ---- */

struct owner {
	uint64_t *macs; /* the MACs of this Hardware in the table */
	size_t n, cap;
	char key[]; /* "namespace/name" */
};

struct entry {
	uint64_t mac; /* 48 bits, first octet highest */
	struct owner *owner;
	uint16_t len;
	uint32_t ip;           /* the address indexed (host order), 0: none */
	struct entry *ip_next; /* the next older entry of the same ip */
	uint8_t data[];        /* the packed struct dhcp_host */
};

struct dhcp_hosts {
	struct dhcp_map macs;   /* mac -> struct entry */
	struct dhcp_map owners; /* key -> struct owner */
	struct dhcp_map ips;    /* ip -> the newest struct entry of that ip */
	size_t bytes;      /* entries' and owners' allocations */
};

static bool entry_eq(const void *v, const void *key)
{
	return ((const struct entry *)v)->mac == *(const uint64_t *)key;
}

static bool owner_eq(const void *v, const void *key)
{
	return strcmp(((const struct owner *)v)->key, key) == 0;
}

static bool ip_eq(const void *v, const void *key)
{
	return ((const struct entry *)v)->ip == *(const uint32_t *)key;
}

/* ---- packing ---- */

/* The numbers of a struct dhcp_host, as they are packed. */
struct packed_head {
	uint8_t mac[6];
	uint8_t ndns, nntp, nroutes;
	uint8_t uefi, allow_pxe, disable_dhcp, awaiting_boot;
	int16_t vlan_id;
	uint32_t ip, netmask, gateway, lease_time;
};

#define HOST_STR(f) { offsetof(struct dhcp_host, f), sizeof(((struct dhcp_host *)0)->f) }
static const struct {
	size_t off, cap;
} host_strings[] = {
	HOST_STR(name),		  HOST_STR(namespace_),	    HOST_STR(hostname),
	HOST_STR(domain),	  HOST_STR(tftp_server_name), HOST_STR(boot_file_name),
	HOST_STR(arch),		  HOST_STR(ipxe_url),	    HOST_STR(ipxe_binary),
};

_Static_assert(DHCP_HOST_MAX_DNS <= 255 && DHCP_HOST_MAX_NTP <= 255 &&
		       DHCP_HOST_MAX_ROUTES <= 255 && DHCP_HOST_NAME_MAX <= 255 &&
		       DHCP_HOST_STRING_MAX <= 255 && DHCP_HOST_URL_MAX <= 255,
	       "every count and string length of a host packs into one byte");

#define PACKED_MAX                                                                          \
	(sizeof(struct packed_head) + 4 * (DHCP_HOST_MAX_DNS + DHCP_HOST_MAX_NTP) +        \
	 sizeof(struct dhcp_route) * DHCP_HOST_MAX_ROUTES + 9 * 256)

/* Packs h into out (PACKED_MAX bytes); returns the length. */
static size_t host_pack(const struct dhcp_host *h, uint8_t *out)
{
	struct packed_head hd = {
		.ndns = (uint8_t)h->ndns,
		.nntp = (uint8_t)h->nntp,
		.nroutes = (uint8_t)h->nroutes,
		.uefi = (uint8_t)h->uefi,
		.allow_pxe = (uint8_t)h->allow_pxe,
		.disable_dhcp = h->disable_dhcp,
		.awaiting_boot = h->awaiting_boot,
		.vlan_id = (int16_t)h->vlan_id,
		.ip = h->ip,
		.netmask = h->netmask,
		.gateway = h->gateway,
		.lease_time = h->lease_time,
	};
	size_t n = 0;

	memcpy(hd.mac, h->mac, 6);
	memcpy(out, &hd, sizeof(hd));
	n += sizeof(hd);
	memcpy(out + n, h->dns, 4 * h->ndns);
	n += 4 * h->ndns;
	memcpy(out + n, h->ntp, 4 * h->nntp);
	n += 4 * h->nntp;
	memcpy(out + n, h->routes, sizeof(h->routes[0]) * h->nroutes);
	n += sizeof(h->routes[0]) * h->nroutes;
	for (size_t i = 0; i < sizeof(host_strings) / sizeof(host_strings[0]); i++) {
		const char *s = (const char *)h + host_strings[i].off;
		size_t len = strnlen(s, host_strings[i].cap - 1);
		out[n++] = (uint8_t)len;
		memcpy(out + n, s, len);
		n += len;
	}
	return n;
}

/* The inverse of host_pack, over data that host_pack wrote. */
static void host_unpack(const uint8_t *p, struct dhcp_host *h)
{
	struct packed_head hd;
	size_t n = 0;

	memcpy(&hd, p, sizeof(hd));
	n += sizeof(hd);
	memset(h, 0, sizeof(*h));
	memcpy(h->mac, hd.mac, 6);
	h->ip = hd.ip;
	h->netmask = hd.netmask;
	h->gateway = hd.gateway;
	h->lease_time = hd.lease_time;
	h->vlan_id = hd.vlan_id;
	h->uefi = (enum dhcp_tristate)hd.uefi;
	h->allow_pxe = (enum dhcp_tristate)hd.allow_pxe;
	h->disable_dhcp = hd.disable_dhcp;
	h->awaiting_boot = hd.awaiting_boot;
	h->ndns = hd.ndns;
	h->nntp = hd.nntp;
	h->nroutes = hd.nroutes;
	memcpy(h->dns, p + n, 4 * h->ndns);
	n += 4 * h->ndns;
	memcpy(h->ntp, p + n, 4 * h->nntp);
	n += 4 * h->nntp;
	memcpy(h->routes, p + n, sizeof(h->routes[0]) * h->nroutes);
	n += sizeof(h->routes[0]) * h->nroutes;
	for (size_t i = 0; i < sizeof(host_strings) / sizeof(host_strings[0]); i++) {
		size_t len = p[n++];
		memcpy((char *)h + host_strings[i].off, p + n, len);
		n += len;
	}
}

/* ---- the table ---- */

struct dhcp_hosts *dhcp_hosts_new(void)
{
	return calloc(1, sizeof(struct dhcp_hosts));
}

void dhcp_hosts_clear(struct dhcp_hosts *t)
{
	for (size_t i = 0; i < t->macs.cap; i++)
		free(t->macs.s[i].v);
	for (size_t i = 0; i < t->owners.cap; i++) {
		struct owner *o = t->owners.s[i].v;
		if (o)
			free(o->macs);
		free(o);
	}
	dhcp_map_reset(&t->macs);
	dhcp_map_reset(&t->owners);
	dhcp_map_reset(&t->ips);
	t->bytes = 0;
}

void dhcp_hosts_free(struct dhcp_hosts *t)
{
	if (!t)
		return;
	dhcp_hosts_clear(t);
	free(t);
}

size_t dhcp_hosts_count(const struct dhcp_hosts *t)
{
	return t->macs.n;
}

size_t dhcp_hosts_bytes(const struct dhcp_hosts *t)
{
	return t->bytes + (t->macs.cap + t->owners.cap + t->ips.cap) * sizeof(struct dhcp_map_slot);
}

int dhcp_hosts_lookup(const struct dhcp_hosts *t, const uint8_t mac[6], struct dhcp_host *ret)
{
	uint64_t k = dhcp_map_mac_key(mac);
	long i = dhcp_map_find(&t->macs, dhcp_map_hash64(k), entry_eq, &k);
	if (i < 0)
		return -ENOENT;
	host_unpack(((const struct entry *)t->macs.s[i].v)->data, ret);
	return 0;
}

int dhcp_hosts_lookup_ip(const struct dhcp_hosts *t, uint32_t ip, struct dhcp_host *ret)
{
	long i;
	if (ip == 0)
		return -ENOENT;
	i = dhcp_map_find(&t->ips, dhcp_map_hash64(ip), ip_eq, &ip);
	if (i < 0)
		return -ENOENT;
	host_unpack(((const struct entry *)t->ips.s[i].v)->data, ret);
	return 0;
}

size_t dhcp_hosts_each(const struct dhcp_hosts *t, int (*fn)(const struct dhcp_host *h, void *arg),
		       void *arg)
{
	struct dhcp_host *h = malloc(sizeof(*h));
	size_t n = 0;

	if (!h)
		return 0;
	for (size_t i = 0; i < t->macs.cap; i++) {
		const struct entry *e = t->macs.s[i].v;
		if (!t->macs.s[i].h || !e)
			continue;
		host_unpack(e->data, h);
		n++;
		if (fn(h, arg))
			break;
	}
	free(h);
	return n;
}

/* ---- the address index ---- */

/* The address e is indexed under: its reservation, unless it has none or
 * its interface is not served. */
static uint32_t entry_ip(const struct dhcp_host *h)
{
	return h->disable_dhcp ? 0 : h->ip;
}

/* Puts e at the head of its address's chain: the newest wins. 0 or
 * -ENOMEM (e not indexed). */
static int ip_link(struct dhcp_hosts *t, struct entry *e)
{
	uint64_t h = dhcp_map_hash64(e->ip);
	long i;

	e->ip_next = NULL;
	if (!e->ip)
		return 0;
	i = dhcp_map_find(&t->ips, h, ip_eq, &e->ip);
	if (i < 0)
		return dhcp_map_insert(&t->ips, h, e);
	e->ip_next = t->ips.s[i].v;
	t->ips.s[i].v = e;
	return 0;
}

/* Takes e out of its address's chain; the entry before it (older) wins
 * again, or the address leaves the index. */
static void ip_unlink(struct dhcp_hosts *t, struct entry *e)
{
	long i;

	if (!e->ip)
		return;
	i = dhcp_map_find(&t->ips, dhcp_map_hash64(e->ip), ip_eq, &e->ip);
	if (i < 0)
		return;
	struct entry *head = t->ips.s[i].v;
	if (head == e) {
		if (e->ip_next)
			t->ips.s[i].v = e->ip_next;
		else
			dhcp_map_delete_at(&t->ips, (size_t)i);
	} else {
		for (struct entry *q = head; q->ip_next; q = q->ip_next)
			if (q->ip_next == e) {
				q->ip_next = e->ip_next;
				break;
			}
	}
	e->ip_next = NULL;
}

/* e takes the place of old (the same address) in its chain. */
static void ip_swap(struct dhcp_hosts *t, struct entry *old, struct entry *e)
{
	long i;

	e->ip_next = NULL;
	if (!e->ip)
		return;
	i = dhcp_map_find(&t->ips, dhcp_map_hash64(e->ip), ip_eq, &e->ip);
	if (i < 0)
		return;
	e->ip_next = old->ip_next;
	if (t->ips.s[i].v == old) {
		t->ips.s[i].v = e;
		return;
	}
	for (struct entry *q = t->ips.s[i].v; q->ip_next; q = q->ip_next)
		if (q->ip_next == old) {
			q->ip_next = e;
			return;
		}
}

/* ---- changes ---- */

static void owner_drop_mac(struct owner *o, uint64_t mac)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->macs[i] == mac) {
			o->macs[i] = o->macs[--o->n];
			return;
		}
}

static void owner_delete(struct dhcp_hosts *t, struct owner *o)
{
	long i = dhcp_map_find(&t->owners, dhcp_map_hash_str(o->key), owner_eq, o->key);
	if (i >= 0)
		dhcp_map_delete_at(&t->owners, (size_t)i);
	t->bytes -= sizeof(*o) + strlen(o->key) + 1 + o->cap * sizeof(uint64_t);
	free(o->macs);
	free(o);
}

/* Removes the entry of mac if o owns it. */
static void entry_delete(struct dhcp_hosts *t, uint64_t mac, const struct owner *o)
{
	long i = dhcp_map_find(&t->macs, dhcp_map_hash64(mac), entry_eq, &mac);
	if (i < 0)
		return;
	struct entry *e = t->macs.s[i].v;
	if (e->owner != o)
		return;
	ip_unlink(t, e);
	t->bytes -= sizeof(*e) + e->len;
	free(e);
	dhcp_map_delete_at(&t->macs, (size_t)i);
}

/* Puts (replacing) the entry for h, owned by o. */
static int entry_put(struct dhcp_hosts *t, struct owner *o, const struct dhcp_host *h)
{
	uint8_t buf[PACKED_MAX];
	size_t len = host_pack(h, buf);
	uint64_t mac = dhcp_map_mac_key(h->mac), hh = dhcp_map_hash64(mac);
	struct entry *e = malloc(sizeof(*e) + len);
	long i;

	if (!e)
		return -ENOMEM;
	*e = (struct entry){ .mac = mac, .owner = o, .len = (uint16_t)len, .ip = entry_ip(h) };
	memcpy(e->data, buf, len);
	i = dhcp_map_find(&t->macs, hh, entry_eq, &mac);
	if (i >= 0) {
		struct entry *old = t->macs.s[i].v;
		if (old->ip == e->ip) {
			ip_swap(t, old, e); /* an address kept keeps its place */
		} else if (ip_link(t, e) < 0) {
			free(e);
			return -ENOMEM;
		} else {
			ip_unlink(t, old);
		}
		if (old->owner != o)
			owner_drop_mac(old->owner, mac);
		t->bytes -= sizeof(*old) + old->len;
		free(old);
		t->macs.s[i].v = e; /* i still holds: only t->ips changed */
	} else if (ip_link(t, e) < 0) {
		free(e);
		return -ENOMEM;
	} else if (dhcp_map_insert(&t->macs, hh, e) < 0) {
		ip_unlink(t, e);
		free(e);
		return -ENOMEM;
	}
	t->bytes += sizeof(*e) + len;
	return 0;
}

static struct owner *owner_get(struct dhcp_hosts *t, const char *key)
{
	uint64_t h = dhcp_map_hash_str(key);
	long i = dhcp_map_find(&t->owners, h, owner_eq, key);
	size_t klen = strlen(key);
	struct owner *o;

	if (i >= 0)
		return t->owners.s[i].v;
	o = calloc(1, sizeof(*o) + klen + 1);
	if (!o)
		return NULL;
	memcpy(o->key, key, klen + 1);
	if (dhcp_map_insert(&t->owners, h, o) < 0) {
		free(o);
		return NULL;
	}
	t->bytes += sizeof(*o) + klen + 1;
	return o;
}

/* "namespace/name" of a Hardware's metadata into key. */
static int owner_key(const json_t *meta, char *key, size_t cap)
{
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	if (!name)
		return -EINVAL;
	int n = snprintf(key, cap, "%s/%s", ns ? ns : "default", name);
	return n > 0 && (size_t)n < cap ? 0 : -EINVAL;
}

int dhcp_hosts_put(struct dhcp_hosts *t, const struct json_t *hw, char *err, size_t errlen)
{
	char key[DHCP_HOST_NAMESPACE_MAX + DHCP_HOST_NAME_MAX + 2];
	uint64_t macs[DHCP_HOSTS_MAX_INTERFACES];
	const json_t *ifaces, *ifc;
	struct dhcp_host *h = NULL;
	struct owner *o;
	size_t i, n = 0;
	int e = 0, refused = 0;

	if (errlen)
		err[0] = '\0';
	if (!json_is_object(hw) || owner_key(json_object_get(hw, "metadata"), key, sizeof(key)) < 0) {
		snprintf(err, errlen, "not a Hardware object with a name");
		return -EINVAL;
	}
	if (!(o = owner_get(t, key)) || !(h = malloc(sizeof(*h)))) {
		e = -ENOMEM;
		goto out;
	}
	ifaces = json_object_get(json_object_get(hw, "spec"), "interfaces");
	json_array_foreach (ifaces, i, ifc) {
		const json_t *s = json_object_get(json_object_get(ifc, "dhcp"), "mac");
		char why[256];
		uint8_t mac[6];
		size_t j;

		if (!json_is_string(s) ||
		    mac_parse(json_string_value(s), json_string_length(s), MAC_COLON, mac) < 0)
			continue;
		for (j = 0; j < n && macs[j] != dhcp_map_mac_key(mac); j++)
			;
		if (j < n)
			continue; /* the same MAC twice: the first interface serves it */
		if (n == DHCP_HOSTS_MAX_INTERFACES ||
		    dhcp_host_from_hardware(hw, mac, h, why, sizeof(why)) < 0) {
			if (!refused++)
				snprintf(err, errlen, "spec.interfaces[%zu]: %s", i,
					 n == DHCP_HOSTS_MAX_INTERFACES ? "too many interfaces" :
									  why);
			continue;
		}
		if ((e = entry_put(t, o, h)) < 0)
			goto out;
		macs[n++] = dhcp_map_mac_key(mac);
	}
	/* The MACs this Hardware had and no longer has. */
	for (i = 0; i < o->n; i++) {
		size_t j;
		for (j = 0; j < n && macs[j] != o->macs[i]; j++)
			;
		if (j == n)
			entry_delete(t, o->macs[i], o);
	}
	if (n == 0) {
		owner_delete(t, o);
		o = NULL;
	} else {
		if (n > o->cap) {
			uint64_t *p = realloc(o->macs, n * sizeof(*p));
			if (!p) {
				e = -ENOMEM;
				goto out;
			}
			t->bytes += (n - o->cap) * sizeof(*p);
			o->macs = p;
			o->cap = n;
		}
		memcpy(o->macs, macs, n * sizeof(*macs));
		o->n = n;
	}
	e = refused ? -EINVAL : (int)n;
out:
	free(h);
	if (e == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return e;
}

void dhcp_hosts_remove(struct dhcp_hosts *t, const char *ns, const char *name)
{
	char key[DHCP_HOST_NAMESPACE_MAX + DHCP_HOST_NAME_MAX + 2];
	int n = snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default", name ? name : "");
	long i;

	if (n < 0 || (size_t)n >= sizeof(key))
		return;
	i = dhcp_map_find(&t->owners, dhcp_map_hash_str(key), owner_eq, key);
	if (i < 0)
		return;
	struct owner *o = t->owners.s[i].v;
	for (size_t j = 0; j < o->n; j++)
		entry_delete(t, o->macs[j], o);
	owner_delete(t, o);
}
