/* rvmap — what the cluster holds, per object of one kind: its
 * resourceVersion as last seen and the list epoch that saw it.
 *
 * DESIGN: open addressing with linear probing over a power-of-two table,
 * keyed by "namespace/name" (FNV-1a), deleted slots left as tombstones and
 * dropped when the table grows. Twenty thousand objects cost about a
 * hundred bytes each; the watcher keeps the cluster's objects themselves
 * only in the store. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/watcher.h"

#define RVMAP_MIN_CAP 64
#define TOMBSTONE ((char *)&tombstone_mark)

static const char tombstone_mark;

static uint64_t hash_key(const char *ns, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = ns; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	h = (h ^ '/') * 1099511628211ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	return h;
}

static bool key_is(const char *key, const char *ns, const char *name)
{
	size_t l = strlen(ns);
	return strncmp(key, ns, l) == 0 && key[l] == '/' && strcmp(key + l + 1, name) == 0;
}

/* The slot of ns/name, or of where it would go (the first tombstone on
 * the way, else the empty slot that ends the probe). */
static struct kube_rv_entry *find(struct kube_rvmap *m, const char *ns, const char *name,
				  bool *found)
{
	struct kube_rv_entry *free_slot = NULL;
	size_t mask = m->cap - 1;
	*found = false;
	for (size_t i = hash_key(ns, name) & mask, n = 0; n < m->cap; i = (i + 1) & mask, n++) {
		struct kube_rv_entry *e = &m->slots[i];
		if (!e->key)
			return free_slot ? free_slot : e;
		if (e->key == TOMBSTONE) {
			if (!free_slot)
				free_slot = e;
			continue;
		}
		if (key_is(e->key, ns, name)) {
			*found = true;
			return e;
		}
	}
	return free_slot;
}

static int grow(struct kube_rvmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : RVMAP_MIN_CAP;
	if (m->n * 4 < m->cap) /* mostly tombstones: rehash at the same size */
		cap = m->cap;
	struct kube_rv_entry *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	struct kube_rvmap next = { .slots = slots, .cap = cap };
	for (size_t i = 0; i < m->cap; i++) {
		struct kube_rv_entry *e = &m->slots[i];
		if (!e->key || e->key == TOMBSTONE)
			continue;
		char *slash = strchr(e->key, '/');
		*slash = '\0';
		bool found;
		struct kube_rv_entry *d = find(&next, e->key, slash + 1, &found);
		*slash = '/';
		*d = *e;
		next.n++;
		next.used++;
	}
	free(m->slots);
	*m = next;
	return 0;
}

struct kube_rv_entry *kube_rvmap_get(struct kube_rvmap *m, const char *ns, const char *name)
{
	bool found;
	if (!m->cap)
		return NULL;
	struct kube_rv_entry *e = find(m, ns, name, &found);
	return found ? e : NULL;
}

struct kube_rv_entry *kube_rvmap_put(struct kube_rvmap *m, const char *ns, const char *name)
{
	bool found;
	if ((m->used + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return NULL;
	struct kube_rv_entry *e = find(m, ns, name, &found);
	if (found)
		return e;
	size_t nl = strlen(ns), ml = strlen(name);
	char *key = malloc(nl + ml + 2);
	if (!key || !e) {
		free(key);
		return NULL;
	}
	memcpy(key, ns, nl);
	key[nl] = '/';
	memcpy(key + nl + 1, name, ml + 1);
	if (!e->key)
		m->used++;
	*e = (struct kube_rv_entry){ .key = key };
	m->n++;
	return e;
}

void kube_rvmap_del(struct kube_rvmap *m, const char *ns, const char *name)
{
	struct kube_rv_entry *e = kube_rvmap_get(m, ns, name);
	if (!e)
		return;
	free(e->key);
	*e = (struct kube_rv_entry){ .key = TOMBSTONE };
	m->n--;
}

void kube_rvmap_each(struct kube_rvmap *m, void (*fn)(struct kube_rv_entry *e, void *ud),
		     void *ud)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key && m->slots[i].key != TOMBSTONE)
			fn(&m->slots[i], ud);
}

void kube_rvmap_free(struct kube_rvmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key != TOMBSTONE)
			free(m->slots[i].key);
	free(m->slots);
	*m = (struct kube_rvmap){ 0 };
}

static bool all_digits(const char *s, size_t *len)
{
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	*len = n;
	return n > 0 && s[n] == '\0';
}

bool kube_rv_newer(const char *rv, const char *have)
{
	size_t a, b;
	if (!*have)
		return true;
	if (!all_digits(rv, &a) || !all_digits(have, &b))
		return strcmp(rv, have) != 0;
	while (a > 1 && *rv == '0')
		rv++, a--;
	while (b > 1 && *have == '0')
		have++, b--;
	if (a != b)
		return a > b;
	return strcmp(rv, have) > 0;
}
