/* leases — the DHCP server's record of the leases it knows to be on disk,
 * by MAC: what lease reuse (dhcp_lease_reuse, dhcp-policy.h) may hand out
 * again without a write.
 *
 * DESIGN: the DHCP thread is the only writer of leases (the store's
 * expiry sweep only deletes leases past their expiry, which reuse never
 * hands out), so it can know what is on disk without reading it: the
 * bound leases read at start, then the outcome of each of its own writes,
 * which the store's writer completes in the order they were queued. A
 * mark is what the last completed write of a MAC left on disk. While a
 * write of the MAC is in flight (queued, not completed) the disk is about
 * to change, so the mark is not handed out: a RELEASE queued behind a
 * bound lease, say, must not be overtaken by an ACK that writes nothing.
 * Four more rules keep a mark true:
 *  - a write that fails leaves no mark (what is on disk is then unknown);
 *  - a bound write that took its IP from another MAC's bound lease (the
 *    store reports it: take_ip) erases the other MAC's mark;
 *  - while a bound write of an address is in flight, no mark of that
 *    address is handed out, whoever's it is: the write may take the
 *    address from it (the reservation moved to another Hardware and back,
 *    say), and the mark is erased only once that write completes;
 *  - a mark carries its Hardware (a hash of namespace/name, as the lease
 *    row records it), and is handed out only for that Hardware.
 * Entries whose mark expired, or that have none and no write in flight,
 * are removed by a sweep that visits a bounded number of slots per call.
 *
 * Two hash tables (map.c): MAC -> entry, and address -> the bound writes
 * of it in flight. Not thread-safe: the DHCP thread owns them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp.h"
#include "dhcp/map.h"

struct mark {
	uint64_t mac;
	uint64_t owner;
	struct dhcp_lease_mark m; /* m.ip 0: no mark */
	uint32_t pending;         /* writes queued, not completed */
};

/* Bound writes of an address in flight; there is no entry when none. */
struct inflight {
	uint32_t ip;
	uint32_t n;
};

struct dhcp_leases {
	struct dhcp_map macs;
	struct dhcp_map ips; /* struct inflight */
	size_t cursor;       /* the sweep's next slot of macs */
};

static bool mark_eq(const void *v, const void *key)
{
	return ((const struct mark *)v)->mac == *(const uint64_t *)key;
}

static bool inflight_eq(const void *v, const void *key)
{
	return ((const struct inflight *)v)->ip == *(const uint32_t *)key;
}

static struct inflight *find_ip(const struct dhcp_leases *t, uint32_t ip, long *ret_slot)
{
	long i = dhcp_map_find(&t->ips, dhcp_map_hash64(ip), inflight_eq, &ip);
	if (ret_slot)
		*ret_slot = i;
	return i < 0 ? NULL : t->ips.s[i].v;
}

/* One more bound write of ip in flight: 0 or -ENOMEM. */
static int ip_queued(struct dhcp_leases *t, uint32_t ip)
{
	struct inflight *f = find_ip(t, ip, NULL);

	if (f) {
		f->n++;
		return 0;
	}
	if (!(f = malloc(sizeof(*f))))
		return -ENOMEM;
	*f = (struct inflight){ ip, 1 };
	if (dhcp_map_insert(&t->ips, dhcp_map_hash64(ip), f) < 0) {
		free(f);
		return -ENOMEM;
	}
	return 0;
}

static void ip_done(struct dhcp_leases *t, uint32_t ip)
{
	long i;
	struct inflight *f = find_ip(t, ip, &i);

	if (f && --f->n == 0) {
		free(f);
		dhcp_map_delete_at(&t->ips, (size_t)i);
	}
}

static struct mark *find(const struct dhcp_leases *t, uint64_t mac, long *ret_slot)
{
	long i = dhcp_map_find(&t->macs, dhcp_map_hash64(mac), mark_eq, &mac);
	if (ret_slot)
		*ret_slot = i;
	return i < 0 ? NULL : t->macs.s[i].v;
}

/* The entry of mac, made (with no mark) when there is none. */
static struct mark *get(struct dhcp_leases *t, uint64_t mac)
{
	struct mark *k = find(t, mac, NULL);
	if (k)
		return k;
	if (!(k = calloc(1, sizeof(*k))))
		return NULL;
	k->mac = mac;
	if (dhcp_map_insert(&t->macs, dhcp_map_hash64(mac), k) < 0) {
		free(k);
		return NULL;
	}
	return k;
}

static void remove_at(struct dhcp_leases *t, size_t i)
{
	free(t->macs.s[i].v);
	dhcp_map_delete_at(&t->macs, i);
}

struct dhcp_leases *dhcp_leases_new(void)
{
	return calloc(1, sizeof(struct dhcp_leases));
}

void dhcp_leases_free(struct dhcp_leases *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->macs.cap; i++)
		free(t->macs.s[i].v);
	for (size_t i = 0; i < t->ips.cap; i++)
		free(t->ips.s[i].v);
	dhcp_map_reset(&t->macs);
	dhcp_map_reset(&t->ips);
	free(t);
}

uint64_t dhcp_leases_owner(const char *ns, const char *name)
{
	return dhcp_map_fnv(dhcp_map_fnv(dhcp_map_fnv(DHCP_MAP_FNV_BASIS, ns), "/"), name);
}

int dhcp_leases_load(struct dhcp_leases *t, const uint8_t mac[6], const struct dhcp_lease_mark *m,
		     uint64_t owner)
{
	struct mark *k = get(t, dhcp_map_mac_key(mac));
	if (!k)
		return -ENOMEM;
	if (!k->pending) {
		k->m = *m;
		k->owner = owner;
	}
	return 0;
}

int dhcp_leases_queued(struct dhcp_leases *t, const uint8_t mac[6], uint32_t ip)
{
	struct mark *k;

	if (ip && ip_queued(t, ip) < 0)
		return -ENOMEM;
	if (!(k = get(t, dhcp_map_mac_key(mac)))) {
		if (ip)
			ip_done(t, ip);
		return -ENOMEM;
	}
	k->pending++;
	return 0;
}

void dhcp_leases_done(struct dhcp_leases *t, const uint8_t mac[6], uint32_t ip,
		      const struct dhcp_lease_mark *m, uint64_t owner)
{
	long i;
	struct mark *k;

	if (ip)
		ip_done(t, ip);
	if (!(k = find(t, dhcp_map_mac_key(mac), &i)))
		return;
	if (k->pending)
		k->pending--;
	if (m) {
		k->m = *m;
		k->owner = owner;
	} else {
		k->m.ip = 0;
	}
	if (!k->pending && !k->m.ip)
		remove_at(t, (size_t)i);
}

const struct dhcp_lease_mark *dhcp_leases_get(const struct dhcp_leases *t, const uint8_t mac[6],
					      uint64_t owner)
{
	const struct mark *k = find(t, dhcp_map_mac_key(mac), NULL);

	if (!k || k->pending || !k->m.ip || k->owner != owner || find_ip(t, k->m.ip, NULL))
		return NULL;
	return &k->m;
}

void dhcp_leases_ip_taken(struct dhcp_leases *t, uint32_t ip, const uint8_t mac[6])
{
	uint64_t key = dhcp_map_mac_key(mac);

	/* Rare (two reservations of one address, or an address moved from
	 * one Hardware to another): a scan, and the sweep removes what it
	 * leaves empty. */
	for (size_t i = 0; i < t->macs.cap; i++) {
		struct mark *k = t->macs.s[i].v;
		if (k && k->m.ip == ip && k->mac != key)
			k->m.ip = 0;
	}
}

size_t dhcp_leases_sweep(struct dhcp_leases *t, int64_t now, size_t n)
{
	size_t removed = 0;

	if (!t->macs.cap)
		return 0;
	for (size_t seen = 0; seen < n && seen < t->macs.cap; seen++) {
		size_t i = t->cursor++ & (t->macs.cap - 1);
		struct mark *k = t->macs.s[i].v;
		if (!k || k->pending || (k->m.ip && k->m.expires > now))
			continue;
		/* Deletion may shift the next entry of the run into slot i:
		 * it is looked at again in the next pass, not now. */
		remove_at(t, i);
		removed++;
	}
	return removed;
}

size_t dhcp_leases_count(const struct dhcp_leases *t)
{
	return t->macs.n;
}
