/* map — see map.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "dhcp/map.h"

#define MIN_CAP 64u

uint64_t dhcp_map_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x | 1;
}

uint64_t dhcp_map_fnv(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

uint64_t dhcp_map_hash_str(const char *s)
{
	return dhcp_map_hash64(dhcp_map_fnv(DHCP_MAP_FNV_BASIS, s));
}

long dhcp_map_find(const struct dhcp_map *m, uint64_t h, dhcp_map_eq_fn eq, const void *key)
{
	if (!m->cap)
		return -1;
	size_t mask = m->cap - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		if (!m->s[i].h)
			return -1;
		if (m->s[i].h == h && eq(m->s[i].v, key))
			return (long)i;
	}
}

static void place(struct dhcp_map_slot *s, size_t cap, uint64_t h, void *v)
{
	size_t i = h & (cap - 1);
	while (s[i].h)
		i = (i + 1) & (cap - 1);
	s[i] = (struct dhcp_map_slot){ h, v };
}

int dhcp_map_insert(struct dhcp_map *m, uint64_t h, void *v)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : MIN_CAP;
		struct dhcp_map_slot *s = calloc(cap, sizeof(*s));
		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->s[i].h)
				place(s, cap, m->s[i].h, m->s[i].v);
		free(m->s);
		m->s = s;
		m->cap = cap;
	}
	place(m->s, m->cap, h, v);
	m->n++;
	return 0;
}

/* Empties slot i and shifts back the entries of its probe run that would
 * no longer be found (Knuth 6.4, algorithm R). */
void dhcp_map_delete_at(struct dhcp_map *m, size_t i)
{
	size_t mask = m->cap - 1, j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (!m->s[j].h)
			break;
		size_t k = m->s[j].h & mask; /* where j's entry wants to be */
		/* Move it into the hole unless its home lies cyclically in
		 * (i, j]. */
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (stays)
			continue;
		m->s[i] = m->s[j];
		i = j;
	}
	m->s[i] = (struct dhcp_map_slot){ 0, NULL };
	m->n--;
}

void dhcp_map_reset(struct dhcp_map *m)
{
	free(m->s);
	*m = (struct dhcp_map){ 0 };
}
