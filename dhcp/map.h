/* map — the open-addressing hash table under the DHCP server's in-memory
 * tables (hosts.c: reservations; leases.c: the leases on disk).
 *
 * Linear probing, a load of at most one half, and backward-shift deletion
 * (no tombstones, so a table that churns does not slow down). A slot holds
 * the key's 64-bit hash with bit 0 set (0 marks an empty slot) and a
 * pointer to the caller's value, which carries the key: the caller's eq
 * function compares them. Not thread-safe; the values belong to the caller.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dhcp_map_slot {
	uint64_t h; /* 0: empty; otherwise the key's hash with bit 0 set */
	void *v;
};

struct dhcp_map {
	struct dhcp_map_slot *s;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* splitmix64's finalizer, with bit 0 set: a slot hash of a 64-bit key. */
uint64_t dhcp_map_hash64(uint64_t x);
#define DHCP_MAP_FNV_BASIS 0xcbf29ce484222325ull
/* FNV-1a, from h, over a NUL-terminated string (NULL: none). */
uint64_t dhcp_map_fnv(uint64_t h, const char *s);
/* FNV-1a of a NUL-terminated string, through dhcp_map_hash64. */
uint64_t dhcp_map_hash_str(const char *s);

/* A MAC as a 48-bit number, first octet highest: the key of both tables. */
static inline uint64_t dhcp_map_mac_key(const uint8_t mac[6])
{
	uint64_t k = 0;
	for (int i = 0; i < 6; i++)
		k = k << 8 | mac[i];
	return k;
}

typedef bool (*dhcp_map_eq_fn)(const void *v, const void *key);

/* The slot holding key (hash h), or -1. */
long dhcp_map_find(const struct dhcp_map *m, uint64_t h, dhcp_map_eq_fn eq, const void *key);
/* Inserts a key known to be absent: 0 or -ENOMEM (nothing inserted). */
int dhcp_map_insert(struct dhcp_map *m, uint64_t h, void *v);
/* Empties slot i (its value is the caller's to free first). */
void dhcp_map_delete_at(struct dhcp_map *m, size_t i);
/* Frees the slots (not the values) and leaves an empty map. */
void dhcp_map_reset(struct dhcp_map *m);
