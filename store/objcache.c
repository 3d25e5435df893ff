/* objcache — the decoded objects the writer last wrote or read, shared
 * read-only with whoever follows the change log.
 *
 * DESIGN: a status write (a Workflow's, many times a second under load)
 * reads the current row, builds the next object and serializes it; the
 * gRPC thread and the workflow controller then each decode the change it
 * logged. Decoding the same few kilobytes of JSON three times per write
 * is most of what a write costs. So the writer keeps the tree of every
 * object it has written or decoded, keyed by kind, namespace and name,
 * with the row id and resourceVersion it had, and:
 *   - an op reads the row's id and resourceVersion only, and takes the
 *     tree from here when both match (ops.c's load_current());
 *   - a follower asks store_change_object() for a change's object and
 *     gets the tree the writer wrote, when it is still the newest one
 *     held for that name at that resourceVersion.
 * The trees are immutable once here: a reference is shared (jansson's
 * reference counts are atomic), and nobody changes a shared tree; whoever
 * needs to change one copies the part it changes (ops.c builds the next
 * object as a new top level that shares the unchanged members).
 *
 * Why a tree held is the right one: every write of a name through ops.c
 * replaces its entry, or removes it (a delete, or a write whose tree is
 * not the caller's to share), before its transaction commits. A
 * resourceVersion is handed out once per committed change; one rolled
 * back is handed out again, but to a later write, which replaces the
 * entry of the name it writes. So an entry (name, rv) that a committed
 * change also names is that change's object, and an entry left by a
 * rolled-back write is never matched: the row keeps its older rv, and a
 * later change of that name at that rv is a later write, which replaced
 * it. A whole batch rolled back clears everything all the same.
 *
 * Only the kinds whose status the controllers write over and over are
 * kept: Workflow, Machine, Job and Task (oc_kept()). Hardware, Templates
 * and Secrets are written by people and by bulk applies, where a cache
 * would only hold tens of thousands of trees nobody asks for again. The
 * memory is bounded by the JSON text of the trees held (a tree takes a
 * few times its text): past opts.object_cache_kib the least recently
 * used go. The Workflows' trees cost little more than their text: the
 * gRPC thread's cache holds the very same trees. A miss costs what every
 * read cost before: decoding the row.
 * One mutex guards it; the writer and the followers hold it for a hash
 * lookup and a reference count at most.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "store/store-internal.h"

#define OC_BUCKETS 4096 /* power of two */

struct oc_ent {
	struct oc_ent *hnext;
	struct oc_ent *prev, *next; /* LRU: head is the most recent */
	enum store_kind kind;
	sqlite3_int64 id;
	uint64_t rv;
	json_t *obj;
	size_t cost;
	char *name; /* points into ns */
	char ns[];
};

struct store_objcache {
	pthread_mutex_t lock;
	struct oc_ent *b[OC_BUCKETS];
	struct oc_ent *head, *tail;
	size_t cost, max_cost, n;
	uint64_t hits, misses;
};

/* Whether trees of kind k are kept at all. */
static bool oc_kept(enum store_kind k)
{
	return k == STORE_KIND_WORKFLOW || k == STORE_KIND_MACHINE || k == STORE_KIND_JOB ||
	       k == STORE_KIND_TASK;
}

static uint64_t oc_hash(enum store_kind k, const char *ns, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)k;
	for (const char *p = ns; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	return h;
}

/* The link that points at the entry for k/ns/name (or at NULL). */
static struct oc_ent **oc_find(struct store_objcache *c, enum store_kind k, const char *ns,
			       const char *name)
{
	struct oc_ent **p = &c->b[oc_hash(k, ns, name) & (OC_BUCKETS - 1)];
	for (; *p; p = &(*p)->hnext)
		if ((*p)->kind == k && strcmp((*p)->name, name) == 0 && strcmp((*p)->ns, ns) == 0)
			return p;
	return p;
}

static void lru_unlink(struct store_objcache *c, struct oc_ent *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_front(struct store_objcache *c, struct oc_ent *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

/* Unlinks *p's entry and puts it on *dead, to be freed (with its tree)
 * once the lock is dropped: no lock is held while a tree is freed. */
static void oc_unlink(struct store_objcache *c, struct oc_ent **p, struct oc_ent **dead)
{
	struct oc_ent *e = *p;
	*p = e->hnext;
	lru_unlink(c, e);
	c->cost -= e->cost;
	c->n--;
	e->hnext = *dead;
	*dead = e;
}

static void oc_free_list(struct oc_ent *e)
{
	while (e) {
		struct oc_ent *next = e->hnext;
		json_decref(e->obj);
		free(e);
		e = next;
	}
}

int store_objcache_new(struct store *s, size_t max_text_bytes)
{
	struct store_objcache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->max_cost = max_text_bytes;
	s->oc = c;
	return 0;
}

void store_objcache_free(struct store *s)
{
	struct store_objcache *c = s ? s->oc : NULL;
	if (!c)
		return;
	store_objcache_clear(s);
	pthread_mutex_destroy(&c->lock);
	free(c);
	s->oc = NULL;
}

void store_objcache_clear(struct store *s)
{
	struct store_objcache *c = s->oc;
	struct oc_ent *dead = NULL;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	while (c->tail) {
		struct oc_ent *t = c->tail;
		oc_unlink(c, oc_find(c, t->kind, t->ns, t->name), &dead);
	}
	pthread_mutex_unlock(&c->lock);
	oc_free_list(dead);
}

json_t *store_objcache_get(struct store *s, enum store_kind k, const char *ns, const char *name,
			   sqlite3_int64 id, uint64_t rv)
{
	struct store_objcache *c = s->oc;
	json_t *o = NULL;
	if (!c || !oc_kept(k))
		return NULL;
	pthread_mutex_lock(&c->lock);
	struct oc_ent *e = *oc_find(c, k, ns, name);
	if (e && e->rv == rv && (id < 0 || e->id == id)) {
		o = json_incref(e->obj);
		lru_unlink(c, e);
		lru_front(c, e);
		c->hits++;
	} else {
		c->misses++;
	}
	pthread_mutex_unlock(&c->lock);
	return o;
}

void store_objcache_put(struct store *s, enum store_kind k, const char *ns, const char *name,
			sqlite3_int64 id, uint64_t rv, json_t *obj, size_t text_len)
{
	struct store_objcache *c = s->oc;
	struct oc_ent *dead = NULL;
	if (!c || !oc_kept(k)) /* never an entry of such a kind to replace */
		return;
	size_t nsl = strlen(ns), nl = strlen(name);
	/* a tree larger than the whole budget is not kept: the entry goes */
	struct oc_ent *n = obj && text_len <= c->max_cost ? malloc(sizeof(*n) + nsl + nl + 2) :
							     NULL;
	if (n) {
		*n = (struct oc_ent){ .kind = k, .id = id, .rv = rv, .obj = json_incref(obj),
				      .cost = text_len };
		memcpy(n->ns, ns, nsl + 1);
		n->name = n->ns + nsl + 1;
		memcpy(n->name, name, nl + 1);
	}
	pthread_mutex_lock(&c->lock);
	struct oc_ent **p = oc_find(c, k, ns, name);
	if (*p)
		oc_unlink(c, p, &dead);
	if (n) {
		p = oc_find(c, k, ns, name);
		n->hnext = *p;
		*p = n;
		lru_front(c, n);
		c->cost += n->cost;
		c->n++;
	}
	while (c->cost > c->max_cost && c->tail) {
		struct oc_ent *t = c->tail;
		oc_unlink(c, oc_find(c, t->kind, t->ns, t->name), &dead);
	}
	pthread_mutex_unlock(&c->lock);
	oc_free_list(dead);
}

void store_objcache_del(struct store *s, enum store_kind k, const char *ns, const char *name)
{
	store_objcache_put(s, k, ns, name, 0, 0, NULL, 0);
}

void store_objcache_stats(struct store *s, size_t *ret_n, size_t *ret_text, uint64_t *ret_hits,
			  uint64_t *ret_misses)
{
	struct store_objcache *c = s->oc;
	size_t n = 0, t = 0;
	uint64_t h = 0, m = 0;
	if (c) {
		pthread_mutex_lock(&c->lock);
		n = c->n;
		t = c->cost;
		h = c->hits;
		m = c->misses;
		pthread_mutex_unlock(&c->lock);
	}
	if (ret_n)
		*ret_n = n;
	if (ret_text)
		*ret_text = t;
	if (ret_hits)
		*ret_hits = h;
	if (ret_misses)
		*ret_misses = m;
}
