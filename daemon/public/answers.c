/* answers — the public listener's answer cache: which Hardware a MAC, an
 * address or a system UUID names, without a SQLite read or a JSON decode,
 * and the answers already made for that Hardware.
 *
 * DESIGN: the index is eager and has one writer. A follower thread
 * subscribes to Hardware commits, lists every Hardware once (store_each,
 * decoding what the index needs: namespace, name, resourceVersion, each
 * interface's MAC and address, the system UUID, whether a boot mark is
 * awaited), then follows the change log from the list's resourceVersion
 * (store_changes_each with the Hardware filter; -ETIME, the log trimmed
 * past it: list again). A changed Hardware gets a new record; the old one
 * is unlinked and freed with its answers. The follower prepares a batch of
 * records outside the lock, then applies the whole batch under one write
 * lock of a pthread_rwlock, and only then publishes the resourceVersion it
 * has applied (an atomic). Requests read under the read lock.
 *
 * Fresh answers: store_kind_committed_rv(HARDWARE) is set by the store's
 * writer before it wakes the writer's caller. A request compares it with
 * the applied resourceVersion: when the follower is behind, the request
 * takes the uncached path (the store). So a change is served by the very
 * next request after the write returned, whatever the follower's delay.
 *
 * Answers are opaque here. The request thread that misses makes one
 * (daemon/public/public.c, from the Hardware read by name and checked to
 * have the record's resourceVersion), or, with a prebuild function
 * (answers_set_prebuild), the follower makes some ahead: once it has read
 * the change log up to now, for the records it linked (their names kept in
 * a pending list), and for
 * every record after a listing or a new generation (a new public address,
 * a new configuration), under the read lock, in chunks between which it
 * follows the change log. Either publishes an answer in the record's
 * slot array: the slot is written, then the count is stored with release;
 * readers load the count with acquire and scan the slots before it. A
 * per-record mutex serializes the builders only. Slots are never reused:
 * a record's answers die with the record (a new one per change) or with a
 * configuration change (answers_set_config, under the write lock). The
 * slot array is allocated on the first answer, so a record never asked
 * for costs only its index entries.
 *
 * Maps: one chained hash table keyed by text with a one-letter prefix per
 * index ("m:" MAC, "i:" address, "u:" UUID, "n:" namespace/name), grown by
 * doubling. A key already present is taken over by the newer record (the
 * store keeps MACs, addresses and UUIDs unique, so that happens only
 * inside a batch where one Hardware gives up what the next takes); a key is
 * unlinked only by the record it points to. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <jansson.h>

#include "common/bootmark.h"
#include "common/common.h"
#include "common/jsondec.h"
#include "common/mac.h"
#include "daemon/public/answers.h"
#include "store/store.h"

#define ANSWERS_BATCH 512          /* changes applied under one write lock */
#define ANSWERS_MAX_KEYS 258       /* index keys per Hardware: the store's 256 MACs/IPs, name, UUID */
#define ANSWERS_KEY_MAX 330        /* "n:" + namespace/name */
#define ANSWERS_POLL_MS 1000       /* the follower's wait between checks */
#define ANSWERS_BUCKETS_MIN 1024
#define ANSWERS_SYSTEM_UUID "ironbell.dev/system-uuid" /* the store's annotation */

struct slot {
	enum answers_type type;
	uint32_t pub;
	char *param;
	void *answer;
	size_t bytes;
};

struct rec {
	struct answers_rec pub; /* first: the requests' view */
	struct answers *owner;
	char **keys; /* its index keys, the name's first */
	unsigned n_keys, cap_keys;
	pthread_mutex_t build;
	struct slot *slots; /* atomic pointer; set under build */
	unsigned n_slots;   /* atomic: slots published */
	uint64_t served;    /* atomic: answers served since the last info line */
	uint64_t last_log;  /* atomic: monotonic ns of the last info line, 0: none */
	uint64_t prebuilt_gen; /* follower only: the prebuild_gen it was last prebuilt at */
	bool partial;       /* a key was left out (ANSWERS_MAX_KEYS) */
};

struct entry {
	struct entry *next;
	struct rec *rec;
	uint32_t hash;
	char key[];
};

struct answers {
	struct store *store;
	answers_free_fn free_answer;
	pthread_rwlock_t lock;
	struct entry **buckets; /* guarded by lock */
	size_t n_buckets, n_entries, n_records;
	const void *cfg;   /* guarded by lock */
	uint64_t applied;  /* atomic: the rv the index has */
	bool incomplete;   /* atomic: a Hardware is not wholly in the index (see answers_complete) */
	bool relist;       /* follower only */
	uint64_t bytes;    /* atomic: the answers' bytes */
	struct store_reader *reader; /* follower's */
	pthread_t thread;
	bool started;
	int stop_fd;
	int wake_fd;                  /* answers_prebuild_again() */
	answers_prebuild_fn prebuild; /* set before the follower starts */
	void *prebuild_arg;
	bool prebuild_on;             /* atomic: answers_prebuild_enable() */
	uint64_t prebuild_gen;        /* atomic: bumped to prebuild every record again */
	uint64_t swept_gen;           /* follower only: the gen of the last whole sweep */
	bool sweep_all;               /* follower only: a relist: every record is new */
	char **pending;               /* follower only: names ("n:" keys) linked since */
	size_t n_pending, cap_pending;
	uint64_t prebuilt;            /* atomic: prebuild calls, for tests */
	struct metric *m_records, *m_bytes;
};

static struct answers *current;
static struct metric *m_result[ANSWERS_RESULT_MAX];

/* ---- the map ---- */

static uint32_t hash_key(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int map_grow(struct answers *a)
{
	size_t n = a->n_buckets ? a->n_buckets * 2 : ANSWERS_BUCKETS_MIN;
	struct entry **b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_buckets; i++) {
		struct entry *e = a->buckets[i], *next;
		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(a->buckets);
	a->buckets = b;
	a->n_buckets = n;
	return 0;
}

static struct entry **map_slot(const struct answers *a, const char *key, uint32_t h)
{
	struct entry **pp = &a->buckets[h & (a->n_buckets - 1)];
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && strcmp((*pp)->key, key) == 0)
			return pp;
	return pp;
}

static struct rec *map_get(const struct answers *a, const char *key)
{
	if (!a->n_buckets)
		return NULL;
	struct entry **pp = map_slot(a, key, hash_key(key));
	return *pp ? (*pp)->rec : NULL;
}

/* Links key to r (taking it over from another record). Write lock. */
static int map_put(struct answers *a, const char *key, struct rec *r)
{
	if ((a->n_entries >= a->n_buckets) && map_grow(a) < 0)
		return -ENOMEM;
	uint32_t h = hash_key(key);
	struct entry **pp = map_slot(a, key, h);
	if (*pp) {
		(*pp)->rec = r;
		return 0;
	}
	size_t n = strlen(key) + 1;
	struct entry *e = malloc(sizeof(*e) + n);
	if (!e)
		return -ENOMEM;
	e->next = NULL;
	e->rec = r;
	e->hash = h;
	memcpy(e->key, key, n);
	*pp = e;
	a->n_entries++;
	return 0;
}

/* Unlinks key when it still points to r. Write lock. */
static void map_del(struct answers *a, const char *key, const struct rec *r)
{
	if (!a->n_buckets)
		return;
	struct entry **pp = map_slot(a, key, hash_key(key));
	struct entry *e = *pp;
	if (!e || e->rec != r)
		return;
	*pp = e->next;
	free(e);
	a->n_entries--;
}

/* ---- records ---- */

static void slots_free(struct answers *a, struct rec *r)
{
	unsigned n = __atomic_load_n(&r->n_slots, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++) {
		if (a->free_answer)
			a->free_answer(r->slots[i].answer);
		free(r->slots[i].param);
		__atomic_sub_fetch(&a->bytes, r->slots[i].bytes, __ATOMIC_RELAXED);
	}
	free(r->slots);
	r->slots = NULL;
	__atomic_store_n(&r->n_slots, 0, __ATOMIC_RELEASE);
}

static void rec_free(struct answers *a, struct rec *r)
{
	if (!r)
		return;
	slots_free(a, r);
	for (unsigned i = 0; i < r->n_keys; i++)
		free(r->keys[i]);
	free(r->keys);
	free(r->pub.ips);
	free(r->pub.macs);
	free((char *)r->pub.namespace_);
	pthread_mutex_destroy(&r->build);
	free(r);
}

static int rec_key(struct rec *r, char prefix, const char *v)
{
	char k[ANSWERS_KEY_MAX];
	if (r->n_keys >= ANSWERS_MAX_KEYS) {
		r->partial = true; /* beyond the store's own bound: not indexed */
		return 0;
	}
	int n = snprintf(k, sizeof(k), "%c:%s", prefix, v);
	if (n < 0 || (size_t)n >= sizeof(k))
		return -EINVAL;
	for (unsigned i = 0; i < r->n_keys; i++)
		if (strcmp(r->keys[i], k) == 0)
			return 0;
	if (r->n_keys == r->cap_keys) {
		unsigned cap = r->cap_keys ? r->cap_keys * 2 : 4;
		char **keys = realloc(r->keys, cap * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		r->keys = keys;
		r->cap_keys = cap;
	}
	if (!(r->keys[r->n_keys] = strdup(k)))
		return -ENOMEM;
	r->n_keys++;
	return 0;
}

/* The system UUID as the store indexes it: the annotation, else a
 * UUID-shaped spec.metadata.instance.id. */
static const char *hw_uuid(const json_t *hw)
{
	const json_t *ann = json_object_get(json_object_get(hw, "metadata"), "annotations");
	const char *u = json_string_value(json_object_get(ann, ANSWERS_SYSTEM_UUID));
	if (u)
		return u;
	const json_t *inst = json_object_get(
		json_object_get(json_object_get(hw, "spec"), "metadata"), "instance");
	return json_string_value(json_object_get(inst, "id"));
}

static int rec_index(struct rec *r, const json_t *hw)
{
	const json_t *ifs = json_object_get(json_object_get(hw, "spec"), "interfaces");
	const json_t *iface;
	char norm[STORE_KEY_LEN];
	size_t i;
	int e = 0;

	size_t n_ifs = json_array_size(ifs) ? json_array_size(ifs) : 1;
	r->pub.ips = calloc(n_ifs, sizeof(*r->pub.ips));
	r->pub.macs = calloc(n_ifs, sizeof(*r->pub.macs));
	if (!r->pub.ips || !r->pub.macs)
		return -ENOMEM;
	json_array_foreach(ifs, i, iface)
	{
		const json_t *dhcp = json_object_get(iface, "dhcp");
		const char *mac = json_string_value(json_object_get(dhcp, "mac"));
		const char *ip =
			json_string_value(json_object_get(json_object_get(dhcp, "ip"), "address"));
		if (mac && store_norm_mac(mac, norm) == 0) {
			if ((e = rec_key(r, 'm', norm)) < 0)
				return e;
			/* 48-bit MACs only: an InfiniBand address has no script. */
			if (mac_parse(norm, strlen(norm), MAC_COLON, r->pub.macs[r->pub.n_macs]) == 0)
				r->pub.n_macs++;
		}
		if (ip && store_norm_ip(ip, norm) == 0) {
			if ((e = rec_key(r, 'i', norm)) < 0)
				return e;
			memcpy(r->pub.ips[r->pub.n_ips++], norm, sizeof(norm));
		}
	}
	const char *uuid = hw_uuid(hw);
	if (uuid && store_norm_uuid(uuid, norm) == 0 && (e = rec_key(r, 'u', norm)) < 0)
		return e;
	return 0;
}

/* A new record for Hardware hw (borrowed), or NULL (no memory, no name). */
static struct rec *rec_new(struct answers *a, const json_t *hw)
{
	const json_t *m = json_object_get(hw, "metadata");
	const char *ns = json_string_value(json_object_get(m, "namespace"));
	const char *name = json_string_value(json_object_get(m, "name"));
	const char *rv = json_string_value(json_object_get(m, "resourceVersion"));
	struct rec *r = calloc(1, sizeof(*r));
	char nk[ANSWERS_KEY_MAX];

	if (!r || !ns || !name)
		goto fail;
	r->owner = a;
	pthread_mutex_init(&r->build, NULL);
	size_t nl = strlen(ns), ml = strlen(name);
	char *both = malloc(nl + ml + 2);
	if (!both)
		goto fail;
	memcpy(both, ns, nl + 1);
	memcpy(both + nl + 1, name, ml + 1);
	r->pub.namespace_ = both;
	r->pub.name = both + nl + 1;
	if (!rv || num_parse_u64_str(rv, UINT64_MAX, &r->pub.rv) < 0)
		r->pub.rv = 0;
	r->pub.awaiting_boot = bootmark_awaiting(hw);
	snprintf(nk, sizeof(nk), "%s/%s", ns, name);
	if (rec_key(r, 'n', nk) < 0 || rec_index(r, hw) < 0)
		goto fail;
	return r;
fail:
	if (r && !r->owner)
		free(r);
	else
		rec_free(a, r);
	return NULL;
}

static void rec_unlink(struct answers *a, struct rec *r)
{
	for (unsigned i = 0; i < r->n_keys; i++)
		map_del(a, r->keys[i], r);
	a->n_records--;
}

/* Links r, replacing the record of the same name. Write lock. */
static int rec_link(struct answers *a, struct rec *r)
{
	struct rec *old = map_get(a, r->keys[0]);
	if (old) {
		rec_unlink(a, old);
		rec_free(a, old);
	}
	for (unsigned i = 0; i < r->n_keys; i++)
		if (map_put(a, r->keys[i], r) < 0) {
			/* Keep the map consistent: r goes entirely. */
			for (unsigned j = 0; j < i; j++)
				map_del(a, r->keys[j], r);
			rec_free(a, r);
			return -ENOMEM;
		}
	a->n_records++;
	return 0;
}

static void rec_delete(struct answers *a, const char *ns, const char *name)
{
	char k[ANSWERS_KEY_MAX];
	snprintf(k, sizeof(k), "n:%s/%s", ns, name);
	struct rec *old = map_get(a, k);
	if (old) {
		rec_unlink(a, old);
		rec_free(a, old);
	}
}

/* Frees every record. Write lock (or no other thread). */
static void map_clear(struct answers *a)
{
	for (size_t i = 0; i < a->n_buckets; i++) {
		struct entry *e = a->buckets[i];
		while (e) {
			struct entry *next = e->next;
			/* A record is freed through its name entry, which it
			 * always has (keys[0]). */
			if (e->key[0] == 'n' && e->rec->n_keys && strcmp(e->rec->keys[0], e->key) == 0)
				rec_free(a, e->rec);
			free(e);
			e = next;
		}
		a->buckets[i] = NULL;
	}
	a->n_entries = 0;
	a->n_records = 0;
}

/* ---- the follower ---- */

struct change {
	bool deleted;
	char *ns, *name;
	struct rec *rec; /* not deleted: the new record, or NULL (unusable object) */
};

struct batch {
	struct answers *a;
	struct change c[ANSWERS_BATCH];
	size_t n;
};

static void batch_clear(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->c[i].ns);
		free(b->c[i].name);
		rec_free(b->a, b->c[i].rec);
	}
	b->n = 0;
}

static int on_change(const struct store_change *c, void *userdata)
{
	struct batch *b = userdata;
	struct change *ch = &b->c[b->n];
	const char *text;
	size_t len;

	if (b->n >= ANSWERS_BATCH)
		return -ENOSPC; /* cannot happen: the limit is the batch's */
	*ch = (struct change){ .deleted = strcmp(c->type, "DELETED") == 0 };
	ch->ns = strdup(c->namespace_);
	ch->name = strdup(c->name);
	if (!ch->ns || !ch->name) {
		free(ch->ns);
		free(ch->name);
		return -ENOMEM;
	}
	b->n++;
	if (ch->deleted)
		return 0;
	json_t *hw = store_change_object(c);
	if (!hw && store_change_text(c, &text, &len) == 0)
		hw = jsondec_loadb_brief(text, len, 0, NULL); /* freed below */
	ch->rec = hw ? rec_new(b->a, hw) : NULL;
	json_decref(hw);
	return 0;
}

/* ---- what the prebuild has to see (follower only) ---- */

static void pending_clear(struct answers *a)
{
	for (size_t i = 0; i < a->n_pending; i++)
		free(a->pending[i]);
	a->n_pending = 0;
}

/* Takes name (a record's "n:" key). 0 or -ENOMEM (name freed). */
static int pending_add(struct answers *a, char *name)
{
	if (a->n_pending == a->cap_pending) {
		size_t cap = a->cap_pending ? a->cap_pending * 2 : 64;
		char **p = realloc(a->pending, cap * sizeof(*p));
		if (!p) {
			free(name);
			return -ENOMEM;
		}
		a->pending = p;
		a->cap_pending = cap;
	}
	a->pending[a->n_pending++] = name;
	return 0;
}

static void publish_gauges(struct answers *a)
{
	metric_set(a->m_records, (double)a->n_records);
	metric_set(a->m_bytes, (double)__atomic_load_n(&a->bytes, __ATOMIC_RELAXED));
}

/* Applies b under one write lock, then publishes rv. */
static void batch_apply(struct answers *a, struct batch *b, uint64_t rv)
{
	pthread_rwlock_wrlock(&a->lock);
	for (size_t i = 0; i < b->n; i++) {
		struct change *ch = &b->c[i];
		if (ch->deleted || !ch->rec) {
			rec_delete(a, ch->ns, ch->name);
			if (!ch->deleted) /* a Hardware the index cannot hold */
				__atomic_store_n(&a->incomplete, true, __ATOMIC_RELAXED);
			continue;
		}
		bool partial = ch->rec->partial;
		bool on = __atomic_load_n(&a->prebuild_on, __ATOMIC_RELAXED);
		char *name = on ? strdup(ch->rec->keys[0]) : NULL;
		if (rec_link(a, ch->rec) < 0 || partial) /* frees it on failure */
			__atomic_store_n(&a->incomplete, true, __ATOMIC_RELAXED);
		ch->rec = NULL;
		if (on && (!name || pending_add(a, name) < 0))
			a->sweep_all = true; /* no memory for the list: sweep every record */
	}
	__atomic_store_n(&a->applied, rv, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&a->lock);
	batch_clear(b);
	publish_gauges(a);
}

struct listing {
	struct answers *a;
	struct entry **buckets; /* the new map, swapped in whole */
	size_t n_buckets, n_entries, n_records;
};

static int on_listed(const char *json, size_t len, void *userdata)
{
	struct answers *a = userdata;
	json_t *hw = jsondec_loadb_brief(json, len, 0, NULL); /* freed below */
	struct rec *r = hw ? rec_new(a, hw) : NULL;
	json_decref(hw);
	/* An unusable object is left to the store's path, and the index
	 * says it is not whole. */
	bool partial = r && r->partial;
	if (!r || rec_link(a, r) < 0 || partial)
		a->incomplete = true;
	return 0;
}

/* Lists every Hardware into a fresh map and swaps it in. */
static int relist(struct answers *a)
{
	struct answers tmp = { .store = a->store, .free_answer = a->free_answer };
	uint64_t rv = 0;
	int e = store_each(a->reader, STORE_KIND_HARDWARE, on_listed, &tmp, &rv);
	if (e < 0) {
		map_clear(&tmp);
		free(tmp.buckets);
		return e;
	}
	pthread_rwlock_wrlock(&a->lock);
	map_clear(a);
	free(a->buckets);
	a->buckets = tmp.buckets;
	a->n_buckets = tmp.n_buckets;
	a->n_entries = tmp.n_entries;
	a->n_records = tmp.n_records;
	/* The records' owner was tmp while listing: only for the bytes,
	 * which are 0 in a new record. */
	for (size_t i = 0; i < a->n_buckets; i++)
		for (struct entry *en = a->buckets[i]; en; en = en->next)
			en->rec->owner = a;
	__atomic_store_n(&a->incomplete, tmp.incomplete, __ATOMIC_RELAXED);
	__atomic_store_n(&a->applied, rv, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&a->lock);
	a->relist = false;
	a->sweep_all = true;
	publish_gauges(a);
	return 0;
}

/* Reads the change log up to now. 0 or a negative errno. */
static int follow(struct answers *a, struct batch *b)
{
	for (unsigned round = 0; round < 100000; round++) {
		if (a->relist) {
			int e = relist(a);
			if (e < 0)
				return e;
		}
		uint64_t from = __atomic_load_n(&a->applied, __ATOMIC_ACQUIRE), last = from;
		size_t n = 0;
		b->n = 0;
		int e = store_changes_each(a->reader, from, STORE_KIND_HARDWARE, NULL, ANSWERS_BATCH,
					   on_change, b, &n, &last);
		if (e == -ETIME) {
			batch_clear(b);
			a->relist = true;
			continue;
		}
		if (e < 0) {
			batch_clear(b);
			return e;
		}
		if (n == 0 && last == from)
			return 0;
		batch_apply(a, b, last);
		if (n < ANSWERS_BATCH)
			return 0;
	}
	return 0;
}

/* ---- answers made before they are asked ---- */

#define PREBUILD_CHUNK 64 /* records prebuilt under one hold of the read lock */
#define PREBUILD_PASSES 4 /* passes in a row while records keep coming */

static bool stop_requested(const struct answers *a)
{
	struct pollfd p = { .fd = a->stop_fd, .events = POLLIN };
	return a->stop_fd >= 0 && poll(&p, 1, 0) > 0;
}

/* Prebuilds r unless it was at gen. Read lock. */
static bool prebuild_rec(struct answers *a, struct rec *r, uint64_t gen)
{
	if (r->prebuilt_gen == gen)
		return false;
	a->prebuild(a->prebuild_arg, a, &r->pub, a->reader);
	r->prebuilt_gen = gen; /* made or not: a miss is made on first use */
	__atomic_add_fetch(&a->prebuilt, 1, __ATOMIC_RELAXED);
	return true;
}

/* Every record, PREBUILD_CHUNK prebuilt per hold of the read lock, the
 * change log followed between chunks so that the index does not fall
 * behind the store while a large sweep runs. The map may grow or be
 * listed again between chunks: only the bucket cursor is kept, and a
 * record moved behind it is found by the next pass (a relist sets
 * sweep_all, a change adds to pending). False when asked to stop. */
static bool sweep_all(struct answers *a, struct batch *b, uint64_t gen)
{
	size_t i = 0;

	for (bool more = true; more;) {
		unsigned done = 0, seen = 0;
		pthread_rwlock_rdlock(&a->lock);
		for (; i < a->n_buckets && done < PREBUILD_CHUNK && seen < 64 * PREBUILD_CHUNK; i++)
			for (struct entry *e = a->buckets[i]; e; e = e->next) {
				/* Each record once, through its name entry. */
				if (e->key[0] != 'n' || strcmp(e->rec->keys[0], e->key) != 0)
					continue;
				seen++;
				done += prebuild_rec(a, e->rec, gen);
			}
		more = i < a->n_buckets;
		pthread_rwlock_unlock(&a->lock);
		if (more && stop_requested(a))
			return false;
		if (more && done)
			(void)follow(a, b); /* its error is the main loop's to log */
	}
	return true;
}

/* The records named in pending (taken whole: following between chunks
 * adds to a new list, for the next pass). False when asked to stop. */
static bool sweep_pending(struct answers *a, struct batch *b, uint64_t gen)
{
	char **names = a->pending;
	size_t n = a->n_pending, i = 0;
	bool ok = true;

	a->pending = NULL;
	a->n_pending = a->cap_pending = 0;
	while (i < n) {
		pthread_rwlock_rdlock(&a->lock);
		for (size_t end = i + PREBUILD_CHUNK; i < n && i < end; i++) {
			struct rec *r = map_get(a, names[i]); /* the newest, or gone */
			if (r)
				prebuild_rec(a, r, gen);
		}
		pthread_rwlock_unlock(&a->lock);
		if (i < n && stop_requested(a)) {
			ok = false;
			break;
		}
		if (i < n)
			(void)follow(a, b);
	}
	for (size_t k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return ok;
}

/* Calls a->prebuild for the records that need it: every one after a
 * listing, a new public address or a configuration change (a new
 * generation), else those linked since the last pass. */
static void prebuild_run(struct answers *a, struct batch *b)
{
	if (!a->prebuild)
		return;
	for (unsigned pass = 0; pass < PREBUILD_PASSES; pass++) {
		if (!__atomic_load_n(&a->prebuild_on, __ATOMIC_ACQUIRE)) {
			pending_clear(a);
			a->sweep_all = false;
			return;
		}
		uint64_t gen = __atomic_load_n(&a->prebuild_gen, __ATOMIC_ACQUIRE);
		if (a->sweep_all || gen != a->swept_gen) {
			a->sweep_all = false;
			pending_clear(a);
			if (!sweep_all(a, b, gen))
				return;
			a->swept_gen = gen;
		} else if (a->n_pending) {
			if (!sweep_pending(a, b, gen))
				return;
		} else {
			return;
		}
	}
}

void answers_set_prebuild(struct answers *a, answers_prebuild_fn fn, void *arg)
{
	a->prebuild = fn;
	a->prebuild_arg = arg;
	a->prebuild_on = fn != NULL;
}

void answers_prebuild_enable(struct answers *a, bool on)
{
	if (!a || __atomic_exchange_n(&a->prebuild_on, on && a->prebuild, __ATOMIC_ACQ_REL) == on)
		return;
	answers_prebuild_again(a); /* turned on: every record; off: the follower drops its list */
}

void answers_prebuild_again(struct answers *a)
{
	uint64_t one = 1;

	if (!a)
		return;
	__atomic_add_fetch(&a->prebuild_gen, 1, __ATOMIC_RELEASE);
	if (a->wake_fd >= 0 && write(a->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("http", "answer cache: cannot wake its follower: %s", strerror(errno));
}

uint64_t answers_prebuilt(struct answers *a)
{
	return __atomic_load_n(&a->prebuilt, __ATOMIC_RELAXED);
}

bool answers_config_is(struct answers *a, const void *cfg)
{
	return a->cfg == cfg;
}

static void *follower_main(void *arg)
{
	struct answers *a = arg;
	struct store_subscription *sub = store_subscribe(a->store, 1u << STORE_KIND_HARDWARE);
	struct batch *b = calloc(1, sizeof(*b));
	bool warned = false;

	if (!sub || !b) {
		log_error("http", "answer cache: cannot follow the store: %s",
			  strerror(errno ? errno : ENOMEM));
		goto out;
	}
	b->a = a;
	for (;;) {
		/* Before reading: a commit during the read wakes us again. */
		store_subscription_ack(sub);
		int e = follow(a, b);
		if (e >= 0)
			prebuild_run(a, b);
		if (e < 0 && !warned)
			log_warn("http", "answer cache: cannot read the store: %s (requests are "
					 "answered from the store meanwhile)",
				 strerror(-e));
		warned = e < 0;
		struct pollfd p[3] = { { .fd = store_subscription_fd(sub), .events = POLLIN },
				       { .fd = a->stop_fd, .events = POLLIN },
				       { .fd = a->wake_fd, .events = POLLIN } };
		if (poll(p, 3, ANSWERS_POLL_MS) > 0 && (p[1].revents & POLLIN))
			break;
		uint64_t n;
		if ((p[2].revents & POLLIN) && read(a->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			log_warn("http", "answer cache: %s", strerror(errno));
	}
out:
	free(b);
	if (sub)
		store_unsubscribe(a->store, sub);
	store_reader_free(a->reader);
	a->reader = NULL;
	return NULL;
}

/* ---- life cycle ---- */

struct answers *answers_new(struct store *s, answers_free_fn free_answer)
{
	struct answers *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->store = s;
	a->free_answer = free_answer;
	a->relist = true;
	a->stop_fd = -1;
	a->wake_fd = -1;
	a->prebuild_gen = 1;
	pthread_rwlock_init(&a->lock, NULL);
	a->m_records = metrics_gauge("ironbell_http_answer_records",
				     "Hardware in the public listener's answer cache.", NULL);
	a->m_bytes = metrics_gauge("ironbell_http_answer_bytes",
				   "Bytes of the answers the answer cache holds.", NULL);
	static const char *const result[] = { "result=\"hit\"", "result=\"built\"",
					      "result=\"uncached\"", "result=\"absent\"" };
	for (unsigned i = 0; i < ANSWERS_RESULT_MAX; i++)
		m_result[i] = metrics_counter("ironbell_http_answers_total",
					      "Machine answers by how they were served: from the "
					      "cache (hit), made and kept (built), from the store "
					      "(uncached), or as for an unknown machine, which the "
					      "cache knows no Hardware to be (absent).",
					      result[i]);
	return a;
}

int answers_start(struct answers *a, char *err, size_t errlen)
{
	/* A start retried after a failed one keeps what that one made. */
	if (a->stop_fd < 0)
		a->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->wake_fd < 0)
		a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->stop_fd < 0 || a->wake_fd < 0) {
		snprintf(err, errlen, "answer cache: eventfd: %s", strerror(errno));
		return -errno;
	}
	if (!a->reader && !(a->reader = store_reader_new(a->store))) {
		snprintf(err, errlen, "answer cache: cannot read the store");
		return -EIO;
	}
	int e = pthread_create(&a->thread, NULL, follower_main, a);
	if (e) {
		snprintf(err, errlen, "answer cache: cannot start its thread: %s", strerror(e));
		return -e;
	}
	a->started = true;
	__atomic_store_n(&current, a, __ATOMIC_RELEASE);
	return 0;
}

void answers_stop(struct answers *a)
{
	if (!a || !a->started)
		return;
	/* Not started again: the stop fd stays signalled. */
	uint64_t one = 1;
	if (write(a->stop_fd, &one, sizeof(one)) < 0)
		log_warn("http", "answer cache: cannot stop: %s", strerror(errno));
	pthread_join(a->thread, NULL);
	a->started = false;
}

void answers_free(struct answers *a)
{
	if (!a)
		return;
	if (__atomic_load_n(&current, __ATOMIC_ACQUIRE) == a)
		__atomic_store_n(&current, NULL, __ATOMIC_RELEASE);
	answers_stop(a);
	pending_clear(a);
	free(a->pending);
	if (a->stop_fd >= 0)
		close(a->stop_fd);
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	store_reader_free(a->reader);
	map_clear(a);
	free(a->buckets);
	pthread_rwlock_destroy(&a->lock);
	free(a);
}

struct answers *answers_current(void)
{
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

int answers_sync(struct answers *a)
{
	struct batch *b = calloc(1, sizeof(*b));
	int e;
	if (!b)
		return -ENOMEM;
	b->a = a;
	if (!a->reader && !(a->reader = store_reader_new(a->store))) {
		free(b);
		return -EIO;
	}
	e = follow(a, b);
	if (e >= 0)
		prebuild_run(a, b);
	free(b);
	return e;
}

void answers_test_relist(struct answers *a)
{
	a->relist = true;
}

void answers_set_config(struct answers *a, const void *cfg)
{
	if (!a)
		return;
	pthread_rwlock_wrlock(&a->lock);
	a->cfg = cfg;
	for (size_t i = 0; i < a->n_buckets; i++)
		for (struct entry *e = a->buckets[i]; e; e = e->next)
			if (e->key[0] == 'n')
				slots_free(a, e->rec);
	pthread_rwlock_unlock(&a->lock);
	publish_gauges(a);
	answers_prebuild_again(a); /* the answers just dropped, with the new configuration */
}

/* ---- the request path ---- */

void answers_rdlock(struct answers *a)
{
	pthread_rwlock_rdlock(&a->lock);
}

void answers_rdunlock(struct answers *a)
{
	pthread_rwlock_unlock(&a->lock);
}

bool answers_usable(struct answers *a, const void *cfg)
{
	return a->cfg == cfg &&
	       store_kind_committed_rv(a->store, STORE_KIND_HARDWARE) <=
		       __atomic_load_n(&a->applied, __ATOMIC_ACQUIRE);
}

bool answers_complete(struct answers *a)
{
	return !__atomic_load_n(&a->incomplete, __ATOMIC_RELAXED);
}

const struct answers_rec *answers_find(struct answers *a, enum answers_by by, const char *key)
{
	char norm[STORE_KEY_LEN], k[ANSWERS_KEY_MAX];
	int e = !key			? -EINVAL :
		by == ANSWERS_BY_MAC  ? store_norm_mac(key, norm) :
		by == ANSWERS_BY_IP   ? store_norm_ip(key, norm) :
		by == ANSWERS_BY_UUID ? store_norm_uuid(key, norm) :
					-EINVAL;
	if (e < 0)
		return NULL;
	snprintf(k, sizeof(k), "%c:%s", by == ANSWERS_BY_MAC ? 'm' : by == ANSWERS_BY_IP ? 'i' : 'u',
		 norm);
	struct rec *r = map_get(a, k);
	return r ? &r->pub : NULL;
}

static bool key_eq(const struct slot *s, const struct answers_key *k)
{
	return s->type == k->type && s->pub == k->pub && strcmp(s->param, k->param) == 0;
}

void *answers_get(const struct answers_rec *rec, const struct answers_key *k)
{
	const struct rec *r = (const struct rec *)rec;
	unsigned n = __atomic_load_n(&r->n_slots, __ATOMIC_ACQUIRE);
	const struct slot *slots = __atomic_load_n(&r->slots, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (key_eq(&slots[i], k))
			return slots[i].answer;
	return NULL;
}

void answers_build_lock(const struct answers_rec *rec)
{
	pthread_mutex_lock(&((struct rec *)rec)->build);
}

void answers_build_unlock(const struct answers_rec *rec)
{
	pthread_mutex_unlock(&((struct rec *)rec)->build);
}

int answers_put(const struct answers_rec *rec, const struct answers_key *k, void *answer,
		size_t bytes)
{
	struct rec *r = (struct rec *)rec;
	unsigned n = __atomic_load_n(&r->n_slots, __ATOMIC_ACQUIRE);
	size_t pl = strlen(k->param);
	if (n >= ANSWERS_SLOTS || pl >= ANSWERS_PARAM_MAX)
		return -ENOSPC;
	if (!r->slots) {
		struct slot *s = calloc(ANSWERS_SLOTS, sizeof(*s));
		if (!s)
			return -ENOMEM;
		__atomic_store_n(&r->slots, s, __ATOMIC_RELEASE);
	}
	char *param = malloc(pl + 1);
	if (!param)
		return -ENOMEM;
	memcpy(param, k->param, pl + 1);
	r->slots[n] = (struct slot){
		.type = k->type, .pub = k->pub, .param = param, .answer = answer, .bytes = bytes
	};
	__atomic_store_n(&r->n_slots, n + 1, __ATOMIC_RELEASE);
	uint64_t total = __atomic_add_fetch(&r->owner->bytes, bytes, __ATOMIC_RELAXED);
	metric_set(r->owner->m_bytes, (double)total);
	return 0;
}

unsigned answers_held(const struct answers_rec *rec)
{
	const struct rec *r = (const struct rec *)rec;
	return __atomic_load_n(&r->n_slots, __ATOMIC_ACQUIRE);
}

uint64_t answers_log_due(const struct answers_rec *rec, uint64_t now_ns)
{
	struct rec *r = (struct rec *)rec;
	__atomic_add_fetch(&r->served, 1, __ATOMIC_RELAXED);
	uint64_t last = __atomic_load_n(&r->last_log, __ATOMIC_RELAXED);
	if (last && now_ns - last < ANSWERS_LOG_EVERY_NS)
		return 0;
	/* One thread wins the line; the others count on. */
	if (!__atomic_compare_exchange_n(&r->last_log, &last, now_ns ? now_ns : 1, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return 0;
	return __atomic_exchange_n(&r->served, 0, __ATOMIC_RELAXED);
}

void answers_count(enum answers_result r)
{
	metric_inc(m_result[r], 1);
}

size_t answers_records(struct answers *a)
{
	pthread_rwlock_rdlock(&a->lock);
	size_t n = a->n_records;
	pthread_rwlock_unlock(&a->lock);
	return n;
}

size_t answers_bytes(struct answers *a)
{
	return __atomic_load_n(&a->bytes, __ATOMIC_RELAXED);
}
