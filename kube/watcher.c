/* watcher — one kind of the cluster kept equal in the store: list in
 * pages, then watch from the list's resourceVersion.
 *
 * DESIGN: one thread per kind, each with its own connection. The thread
 * lists the collection in pages (limit/continue; a continue token that has
 * expired starts the list again), mirrors every item into the store
 * (STORE_OP_MIRROR, source "kube"), deletes from the store the kube objects
 * the list no longer has, and then watches from the list's
 * resourceVersion with bookmarks. Events are written in batches: the ones
 * one read of the stream brought, in one store_write(), so a burst costs
 * one commit. The resume point (w->rv) moves only after the batch holding
 * an event is committed, so a failed write or a dropped stream resumes
 * where nothing is lost. A stream the server ended resumes at once; an
 * error (a cut stream, a line that is not an event, a 5xx, no answer)
 * resumes after a backoff that doubles with jitter up to backoff_max_ms; a
 * 429 waits its Retry-After; 410 Gone (an ERROR event or a status) lists
 * again. An object the store refuses (it fails validation, or takes a MAC
 * another Hardware holds) is stored nowhere: the old version stays, a log
 * line, an event on the object and ironbell_kube_objects_refused_total
 * name it, and the watch goes on.
 *
 * Status: while this instance leads, the daemon's controllers own the
 * status of Workflows, Machines, Jobs and Tasks; a mirror keeps the
 * store's status of an object it already holds (keep_status), and the
 * writer sends it back. A follower takes status from the cluster. An event
 * older than the one last seen for the object (resourceVersions compared
 * as integers, see kube_rv_newer()) is not applied again.
 *
 * Secrets: only those a Machine names are stored. When a Machine names a
 * Secret for the first time, its watcher fetches it at once, on a second
 * connection of its own: the Machine may come on the watch stream, whose
 * connection is busy until the stream ends. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kube/watcher.h"

#define SUB "kube"
#define MAX_PAGES 100000u          /* pages of one list: far beyond any cluster */
#define MAX_BATCH 1024u            /* events written in one store_write() */
#define WATCH_IDLE_MARGIN_S 60u    /* beyond timeoutSeconds, a silent stream is dead */
#define REFUSED_MESSAGE_MAX 512

/* ---- helpers ---- */

static uint64_t jitter_state(void)
{
	static __thread uint64_t x;
	if (!x)
		x = now_mono_ns() ^ (uint64_t)(uintptr_t)&x;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* ms plus up to half of it again. */
static unsigned jittered(unsigned ms)
{
	return ms + (unsigned)(jitter_state() % (ms / 2 + 1));
}

static void set_state(struct kube_watch *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_state(struct kube_watch *w, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&w->lock);
	va_start(ap, fmt);
	vsnprintf(w->state, sizeof(w->state), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&w->lock);
}

static bool status_owned(enum store_kind k)
{
	return k == STORE_KIND_WORKFLOW || k == STORE_KIND_MACHINE || k == STORE_KIND_JOB ||
	       k == STORE_KIND_TASK;
}

static const char *meta_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
	return s ? s : "";
}

/* ---- writing a batch ---- */

struct pending {
	enum kube_event_type type;
	json_t *object; /* a reference */
	char rv[KUBE_MAX_RV + 1];
};

struct batch {
	struct pending items[MAX_BATCH];
	size_t n;
	uint64_t arrived_ns; /* when the first of them came */
};

static void batch_clear(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		json_decref(b->items[i].object);
	b->n = 0;
}

static void refused(struct kube_watch *w, const json_t *obj, const struct store_op *op)
{
	const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name");
	metric_inc(w->m_refused, 1);
	log_warn(SUB, "%s %s/%s from the cluster refused, not stored: %s", w->ki->singular, ns,
		 name, store_op_message(op));
	store_event(w->part->store, w->kind, ns, name, "Warning", "Refused",
		    "the object in the cluster is not valid here and is not used: %.*s",
		    REFUSED_MESSAGE_MAX, store_op_message(op));
}

static void secret_refs(struct kube_watch *w, const json_t *machine);
static json_t *status_from_cluster(struct kube_watch *w, json_t *obj);

/* Records in w's map what the store now holds of b's item it (after its
 * write): its resourceVersion, uid and the list epoch. Under w->lock. */
static int map_record(struct kube_watch *w, const struct pending *it)
{
	const char *ns = meta_str(it->object, "namespace");
	const char *name = meta_str(it->object, "name");
	if (it->type == KUBE_EVENT_DELETED) {
		kube_rvmap_del(&w->map, ns, name);
		return 0;
	}
	struct kube_rv_entry *en = kube_rvmap_put(&w->map, ns, name);
	if (!en)
		return -ENOMEM;
	snprintf(en->rv, sizeof(en->rv), "%s", it->rv);
	snprintf(en->uid, sizeof(en->uid), "%s", meta_str(it->object, "uid"));
	en->epoch = w->epoch;
	return 0;
}

/* Writes b to the store. An event no newer than the object's last one is
 * not written again (a list still marks it seen). The map follows the
 * store: it is updated after the write, so what it says is in the store.
 * On a store failure returns it: nothing of b is to be taken as applied
 * (the caller resumes from before it). */
static int batch_write(struct kube_watch *w, struct batch *b)
{
	struct store_op ops[MAX_BATCH];
	size_t idx[MAX_BATCH], n = 0;
	struct kube *p = w->part;
	bool keep = kube_part_leading(p) && status_owned(w->kind);
	int e = 0;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < b->n; i++) {
		struct pending *it = &b->items[i];
		const char *ns = meta_str(it->object, "namespace");
		const char *name = meta_str(it->object, "name");
		struct kube_rv_entry *en = kube_rvmap_get(&w->map, ns, name);
		if (it->type != KUBE_EVENT_DELETED) {
			if (en && !kube_rv_newer(it->rv, en->rv)) {
				en->epoch = w->epoch;
				continue;
			}
			if (w->kind == STORE_KIND_SECRET && !kube_part_secret_wanted(p, ns, name))
				continue;
		}
		if (it->type != KUBE_EVENT_DELETED && status_owned(w->kind)) {
			json_t *conv = status_from_cluster(w, it->object);
			if (!conv)
				continue;
			json_decref(it->object);
			it->object = conv;
			ns = meta_str(it->object, "namespace");
			name = meta_str(it->object, "name");
		}
		ops[n] = (struct store_op){
			.type = it->type == KUBE_EVENT_DELETED ? STORE_OP_DELETE : STORE_OP_MIRROR,
			.kind = w->kind,
			.namespace_ = ns,
			.name = name,
			.body = it->type == KUBE_EVENT_DELETED ? NULL : it->object,
			.source = STORE_SOURCE_KUBE,
			.keep_status = keep,
			.no_object = true,
		};
		idx[n++] = i;
	}
	pthread_mutex_unlock(&w->lock);
	if (!n)
		return 0;
	store_write(p->store, ops, n, false);
	uint64_t now = now_mono_ns();
	for (size_t i = 0; i < n; i++) {
		struct pending *it = &b->items[idx[i]];
		bool applied = true;
		switch (ops[i].error) {
		case 0: break;
		case -ENOENT:
			if (ops[i].type == STORE_OP_DELETE)
				break;
			/* fall through */
		case -EINVAL:
		case -EADDRINUSE:
		case -EPERM: refused(w, it->object, &ops[i]); break;
		default:
			applied = false;
			if (!e) {
				e = ops[i].error;
				log_warn(SUB, "%s: the store refused a write: %s", w->ki->plural,
					 store_op_message(&ops[i]));
			}
		}
		if (applied) {
			pthread_mutex_lock(&w->lock);
			int r = map_record(w, it);
			pthread_mutex_unlock(&w->lock);
			if (r < 0 && !e)
				e = r;
		}
		if (!ops[i].error && w->kind == STORE_KIND_MACHINE && it->type != KUBE_EVENT_DELETED)
			secret_refs(w, it->object);
		store_op_clear(&ops[i]);
		metric_inc(w->m_events, 1);
		if (b->arrived_ns)
			metric_observe(w->m_lag, (double)(now - b->arrived_ns) / 1e9);
	}
	return e;
}

/* ---- the Workflow status schema ---- */

/* Decides, before Workflows are listed, which status shape the cluster's
 * CRD has (kube.status_schema auto), else takes the setting. */
static void decide_schema(struct kube_watch *w)
{
	struct kube *p = w->part;
	struct kube_response resp;
	enum kube_status_schema sch = p->set.status_schema;
	json_t *crd = NULL;
	if (sch == KUBE_STATUS_AUTO) {
		int e = kube_request(w->sess, "GET",
				     "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
				     "workflows.tinkerbell.org",
				     NULL, NULL, 0, &resp);
		if (e == 0 && resp.status == 200)
			crd = json_loadb(resp.body.data, resp.body.len, 0, NULL);
		sch = kube_schema_from_crd(crd);
		if (!crd)
			log_warn(SUB, "cannot read the Workflow CRD (%s): the monorepo's Workflow "
				      "status is written; set kube.status_schema to choose",
				 resp.error[0] ? resp.error : "not found");
		else
			log_info(SUB, "the cluster's Workflow CRD has the %s status",
				 sch == KUBE_STATUS_LEGACY ? "legacy (STATE_*)" : "monorepo's");
		json_decref(crd);
		buf_free(&resp.body);
	}
	__atomic_store_n(&p->schema, (int)sch, __ATOMIC_RELEASE);
}

/* obj (from the cluster) with the status the store is to keep
 * (kube_status_mirror()): the store's own when the cluster's is the echo
 * of what was written back for it (the API server drops the fields its
 * CRD lacks, such as the engine's retry bookkeeping), a legacy Workflow
 * status read into the engine's shape. A new reference; NULL when it
 * cannot be read (logged: the object is not written). */
static json_t *status_from_cluster(struct kube_watch *w, json_t *obj)
{
	char err[256];
	json_t *prev = NULL, *st = NULL, *out = NULL;
	if (!w->reader)
		w->reader = store_reader_new(w->part->store);
	if (w->reader)
		store_get(w->reader, w->kind, meta_str(obj, "namespace"), meta_str(obj, "name"),
			  &prev);
	const json_t *ps = json_object_get(prev, "status");
	if (prev && strcmp(meta_str(prev, "uid"), meta_str(obj, "uid")) != 0)
		ps = NULL; /* another object of the same name */
	enum kube_status_schema sch =
		(enum kube_status_schema)__atomic_load_n(&w->part->schema, __ATOMIC_ACQUIRE);
	if (kube_status_mirror(w->kind, json_object_get(obj, "status"), ps, sch, &st, err,
			       sizeof(err)) < 0) {
		log_warn(SUB, "%s %s/%s: its status is not read: %s", w->ki->singular,
			 meta_str(obj, "namespace"), meta_str(obj, "name"), err);
	} else if ((out = json_copy(obj))) {
		if (st)
			json_object_set_new(out, "status", st);
		else
			json_object_del(out, "status");
		st = NULL;
	}
	json_decref(st);
	json_decref(prev);
	return out;
}

/* ---- Secrets that Machines name ---- */

static int fetch_secret(struct kube_watch *w, const char *ns, const char *name)
{
	struct kube *p = w->part;
	struct kube_watch *sw = &p->watch[STORE_KIND_SECRET];
	struct kube_response resp;
	char path[768];
	json_t *obj = NULL;
	int e;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, name);
	e = kube_request(w->fetch, "GET", path, NULL, NULL, 0, &resp);
	if (e < 0 || resp.status != 200) {
		if (resp.status != 404)
			log_warn(SUB, "cannot read secret %s/%s that a Machine names: %s", ns, name,
				 resp.error);
		e = e < 0 ? e : -EIO;
		goto out;
	}
	obj = json_loadb(resp.body.data, resp.body.len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(obj) || strcmp(meta_str(obj, "name"), name) != 0 ||
	    strcmp(meta_str(obj, "namespace"), ns) != 0 || !*meta_str(obj, "resourceVersion")) {
		log_warn(SUB, "secret %s/%s: the answer is not that Secret", ns, name);
		e = -EBADMSG;
		goto out;
	}
	struct batch *b = calloc(1, sizeof(*b));
	if (!b) {
		e = -ENOMEM;
		goto out;
	}
	b->items[0] = (struct pending){ .type = KUBE_EVENT_ADDED, .object = json_incref(obj) };
	snprintf(b->items[0].rv, sizeof(b->items[0].rv), "%s", meta_str(obj, "resourceVersion"));
	b->n = 1;
	e = batch_write(sw, b);
	batch_clear(b);
	free(b);
out:
	json_decref(obj);
	buf_free(&resp.body);
	return e;
}

static void secret_refs(struct kube_watch *w, const json_t *machine)
{
	const json_t *ref = json_object_get(
		json_object_get(json_object_get(machine, "spec"), "connection"), "authSecretRef");
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *ns = json_string_value(json_object_get(ref, "namespace"));
	if (!name || !*name)
		return;
	if (!ns || !*ns)
		ns = meta_str(machine, "namespace");
	if (kube_part_secret_ref(w->part, ns, name))
		fetch_secret(w, ns, name);
}

/* ---- listing ---- */

struct stale {
	char **keys;
	size_t n, cap;
	uint32_t epoch;
	struct kube_rvmap *map;
};

static int stale_add(struct stale *s, const char *ns, const char *name)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **k = realloc(s->keys, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		s->keys = k;
		s->cap = cap;
	}
	size_t nl = strlen(ns), ml = strlen(name);
	char *key = malloc(nl + ml + 2);
	if (!key)
		return -ENOMEM;
	memcpy(key, ns, nl + 1);
	memcpy(key + nl + 1, name, ml + 1);
	s->keys[s->n++] = key;
	return 0;
}

static int stale_name(const char *ns, const char *name, void *ud)
{
	struct stale *s = ud;
	struct kube_rv_entry *e = kube_rvmap_get(s->map, ns, name);
	if (e && e->epoch == s->epoch)
		return 0;
	return stale_add(s, ns, name);
}

/* Deletes from the store (and the map) every kube object of w's kind that
 * the list of epoch did not see. */
static int delete_stale(struct kube_watch *w)
{
	struct stale s = { .epoch = w->epoch, .map = &w->map };
	struct store_reader *r = store_reader_new(w->part->store);
	int e = r ? 0 : -ENOMEM;
	pthread_mutex_lock(&w->lock);
	if (!e)
		e = store_names(r, w->kind, STORE_SOURCE_KUBE, stale_name, &s, NULL);
	pthread_mutex_unlock(&w->lock);
	store_reader_free(r);
	for (size_t i = 0; !e && i < s.n; i++) {
		const char *ns = s.keys[i], *name = ns + strlen(ns) + 1;
		struct store_op op = { .type = STORE_OP_DELETE, .kind = w->kind, .namespace_ = ns,
				       .name = name, .source = STORE_SOURCE_KUBE, .no_object = true };
		int r2 = store_write1(w->part->store, &op);
		if (r2 < 0 && r2 != -ENOENT)
			e = r2;
		else
			log_info(SUB, "%s %s/%s is no longer in the cluster: deleted", w->ki->singular,
				 ns, name);
		store_op_clear(&op);
		pthread_mutex_lock(&w->lock);
		kube_rvmap_del(&w->map, ns, name);
		pthread_mutex_unlock(&w->lock);
	}
	for (size_t i = 0; i < s.n; i++)
		free(s.keys[i]);
	free(s.keys);
	return e;
}

static void drop_old_epoch(struct kube_rv_entry *en, void *ud)
{
	struct stale *s = ud;
	if (en->epoch != s->epoch) {
		char *slash = strchr(en->key, '/');
		*slash = '\0';
		stale_add(s, en->key, slash + 1);
		*slash = '/';
	}
}

/* Forgets the map entries an older list saw and this one did not (objects
 * refused by the store are in the map but not in the store). */
static void forget_unseen(struct kube_watch *w)
{
	struct stale s = { .epoch = w->epoch };
	pthread_mutex_lock(&w->lock);
	kube_rvmap_each(&w->map, drop_old_epoch, &s);
	for (size_t i = 0; i < s.n; i++) {
		kube_rvmap_del(&w->map, s.keys[i], s.keys[i] + strlen(s.keys[i]) + 1);
		free(s.keys[i]);
	}
	pthread_mutex_unlock(&w->lock);
	free(s.keys);
}

static void url_escape(char *out, size_t outlen, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (; *s && o + 4 < outlen; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}

/* The answer of a request that failed: what to wait before the next try
 * (0: the backoff), and the state line. */
static unsigned failed(struct kube_watch *w, const char *what, int e,
		       const struct kube_response *resp)
{
	const char *why = resp->error[0] ? resp->error : strerror(e < 0 ? -e : EIO);
	set_state(w, "%s failed, retrying: %s", what, why);
	log_warn(SUB, "%s: %s failed: %s", w->ki->plural, what, why);
	return resp->status == 429 && resp->retry_after ? resp->retry_after * 1000u : 0;
}

/* Lists the collection into the store. 0, -ESTALE when the list must start
 * again at once (a continue token expired), or another error; *wait_ms is
 * set when the server asked for a wait. */
static int list_all(struct kube_watch *w, unsigned *wait_ms)
{
	struct kube *p = w->part;
	char path[1024 + KUBE_MAX_CONTINUE * 3], cont[KUBE_MAX_CONTINUE + 1] = "";
	char rv[KUBE_MAX_RV + 1] = "", page_rv[KUBE_MAX_RV + 1], esc[KUBE_MAX_CONTINUE * 3 + 1];
	struct batch *b = calloc(1, sizeof(*b));
	size_t total = 0;
	int e = 0;

	if (!b)
		return -ENOMEM;
	pthread_mutex_lock(&w->lock);
	w->epoch++;
	pthread_mutex_unlock(&w->lock);
	for (unsigned page = 0; page < MAX_PAGES; page++) {
		struct kube_response resp;
		char err[256];
		json_t *items = NULL;
		set_state(w, "listing (page %u)", page + 1);
		url_escape(esc, sizeof(esc), cont);
		snprintf(path, sizeof(path), "%s?limit=%u%s%s", w->path, p->set.page_size,
			 *cont ? "&continue=" : "", esc);
		e = kube_request(w->sess, "GET", path, NULL, NULL, 0, &resp);
		if (e < 0 || resp.status != 200) {
			*wait_ms = failed(w, "list", e, &resp);
			e = resp.status == 410 ? -ESTALE : e < 0 ? e : -EIO;
			buf_free(&resp.body);
			goto out;
		}
		e = kube_list_parse(resp.body.data, resp.body.len, w->ki->api_version, w->ki->kind,
				    &items, page_rv, cont, err, sizeof(err));
		buf_free(&resp.body);
		if (e < 0) {
			set_state(w, "list failed, retrying: %s", err);
			log_warn(SUB, "%s: the list's answer is refused: %s", w->ki->plural, err);
			goto out;
		}
		if (!page)
			snprintf(rv, sizeof(rv), "%s", page_rv);
		size_t i;
		json_t *item;
		json_array_foreach(items, i, item)
		{
			struct pending *it = &b->items[b->n++];
			*it = (struct pending){ .type = KUBE_EVENT_ADDED, .object = json_incref(item) };
			snprintf(it->rv, sizeof(it->rv), "%s", meta_str(item, "resourceVersion"));
			if (b->n == MAX_BATCH || i + 1 == json_array_size(items)) {
				e = batch_write(w, b);
				batch_clear(b);
				if (e < 0)
					break;
			}
		}
		total += json_array_size(items);
		json_decref(items);
		if (e < 0 || !*cont)
			break;
		if (kube_part_stopping(p)) {
			e = -ECANCELED;
			break;
		}
	}
	if (e < 0 || *cont) {
		e = e < 0 ? e : -E2BIG;
		goto out;
	}
	forget_unseen(w);
	e = delete_stale(w);
	if (e < 0)
		goto out;
	pthread_mutex_lock(&w->lock);
	snprintf(w->rv, sizeof(w->rv), "%s", rv);
	bool first = !w->synced;
	w->synced = true;
	snprintf(w->state, sizeof(w->state), "synced (rv %s)", rv);
	pthread_mutex_unlock(&w->lock);
	metric_set(w->m_synced, 1);
	metric_set(w->m_objects, (double)total);
	if (first) {
		log_info(SUB, "%s: %zu listed from the cluster (rv %s)", w->ki->plural, total, rv);
		kube_part_synced(p);
	} else
		metric_inc(w->m_relists, 1);
out:
	batch_clear(b);
	free(b);
	return e;
}

/* ---- watching ---- */

struct watch_ctx {
	struct kube_watch *w;
	struct kube_watchdec dec;
	struct batch *b;
	bool gone;            /* 410: list again */
	bool events;          /* at least one event or bookmark came */
	char bookmark[KUBE_MAX_RV + 1];
	char err[256];
	int error;            /* why the stream was stopped by us */
};

/* The watch resumes from rv from now on (its events up to rv are in the
 * store); /readyz says so. */
static void resume_at(struct kube_watch *w, const char *rv)
{
	pthread_mutex_lock(&w->lock);
	snprintf(w->rv, sizeof(w->rv), "%s", rv);
	snprintf(w->state, sizeof(w->state), "synced, watching from rv %s", w->rv);
	pthread_mutex_unlock(&w->lock);
}

static int on_event(const struct kube_event *ev, void *ud)
{
	struct watch_ctx *c = ud;
	c->events = true;
	switch (ev->type) {
	case KUBE_EVENT_BOOKMARK:
		snprintf(c->bookmark, sizeof(c->bookmark), "%s", ev->rv);
		return 0;
	case KUBE_EVENT_ERROR:
		if (ev->code == 410) {
			c->gone = true;
			return -ESTALE;
		}
		snprintf(c->err, sizeof(c->err), "the server sent an error (%d): %s", ev->code,
			 ev->message);
		return -EREMOTEIO;
	default: break;
	}
	struct pending *it = &c->b->items[c->b->n++];
	*it = (struct pending){ .type = ev->type, .object = json_incref(ev->object) };
	snprintf(it->rv, sizeof(it->rv), "%s", ev->rv);
	if (c->b->n == MAX_BATCH) {
		/* A full batch is written before more is decoded. */
		int e = batch_write(c->w, c->b);
		if (e < 0)
			return e;
		resume_at(c->w, it->rv);
		batch_clear(c->b);
	}
	return 0;
}

static int on_bytes(const char *data, size_t len, void *ud)
{
	struct watch_ctx *c = ud;
	int e = 0;
	/* The events of every piece that came in one round of reads are
	 * gathered and written together when the round ends (data NULL):
	 * libcurl gives one HTTP chunk, an event, at a time, and a backlog
	 * written event by event would never catch up. */
	if (data) {
		if (!c->b->n)
			c->b->arrived_ns = now_mono_ns();
		e = kube_watchdec_feed(&c->dec, data, len, on_event, c, c->err, sizeof(c->err));
		if (!e)
			return 0;
	}
	/* What came before an error is written all the same. */
	int e2 = 0;
	if (c->b->n) {
		char last[KUBE_MAX_RV + 1];
		snprintf(last, sizeof(last), "%s", c->b->items[c->b->n - 1].rv);
		e2 = batch_write(c->w, c->b);
		batch_clear(c->b);
		if (!e2)
			resume_at(c->w, last);
	}
	if (!e && !e2 && *c->bookmark) {
		resume_at(c->w, c->bookmark);
		c->bookmark[0] = '\0';
	}
	if (e < 0 && !c->error)
		c->error = e;
	return e < 0 ? e : e2;
}

/* One watch. 0 when the server ended it in order; -ESTALE when the list
 * must be made again; another error to back off and resume. */
static int watch_once(struct kube_watch *w, unsigned *wait_ms)
{
	struct kube *p = w->part;
	struct watch_ctx c = { .w = w };
	struct kube_response resp;
	char path[1024], rv[KUBE_MAX_RV + 1];
	unsigned t = p->set.watch_timeout_s;
	int e;

	c.b = calloc(1, sizeof(*c.b));
	if (!c.b)
		return -ENOMEM;
	kube_watchdec_init(&c.dec, w->ki->api_version, w->ki->kind);
	pthread_mutex_lock(&w->lock);
	snprintf(rv, sizeof(rv), "%s", w->rv);
	snprintf(w->state, sizeof(w->state), "synced, watching from rv %s", rv);
	pthread_mutex_unlock(&w->lock);
	t = t + (unsigned)(jitter_state() % (t / 4 + 1));
	snprintf(path, sizeof(path),
		 "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%u",
		 w->path, rv, t);
	e = kube_stream(w->sess, path, t + WATCH_IDLE_MARGIN_S, on_bytes, &c, &resp);
	if (c.gone || resp.status == 410) {
		log_info(SUB, "%s: watch from rv %s is too old (410 Gone): listing again",
			 w->ki->plural, rv);
		e = -ESTALE;
	} else if (e == 0 && resp.status == 200 && kube_watchdec_partial(&c.dec)) {
		snprintf(resp.error, sizeof(resp.error), "the stream ended inside an event");
		*wait_ms = failed(w, "watch", -EPIPE, &resp);
		e = -EPIPE;
	} else if (e == 0 && resp.status != 200) {
		*wait_ms = failed(w, "watch", -EIO, &resp);
		e = -EIO;
	} else if (e < 0 && e != -ECANCELED) {
		if (c.err[0])
			snprintf(resp.error, sizeof(resp.error), "%s", c.err);
		*wait_ms = failed(w, "watch", e, &resp);
	}
	if (e < 0 && e != -ESTALE && e != -ECANCELED)
		metric_inc(w->m_restarts, 1);
	kube_watchdec_free(&c.dec);
	batch_clear(c.b);
	free(c.b);
	buf_free(&resp.body);
	return e < 0 ? e : (c.events ? 0 : -ENODATA);
}

/* ---- the thread ---- */

static void *run(void *arg)
{
	struct kube_watch *w = arg;
	struct kube *p = w->part;
	unsigned backoff = p->set.backoff_min_ms;

	if (w->kind == STORE_KIND_WORKFLOW)
		decide_schema(w);
	while (!kube_part_stopping(p)) {
		unsigned wait_ms = 0;
		int e = 0;
		pthread_mutex_lock(&w->lock);
		bool listed = w->rv[0] != '\0';
		pthread_mutex_unlock(&w->lock);
		if (!listed) {
			e = list_all(w, &wait_ms);
			if (e == -ESTALE)
				continue; /* a continue token expired: again from the start */
		} else {
			e = watch_once(w, &wait_ms);
			if (e == -ESTALE) {
				pthread_mutex_lock(&w->lock);
				w->rv[0] = '\0';
				pthread_mutex_unlock(&w->lock);
				continue;
			}
			if (e == -ENODATA)
				e = 0; /* ended by the server with nothing new: resume */
		}
		if (e == -ECANCELED)
			break;
		if (e == 0) {
			backoff = p->set.backoff_min_ms;
			continue;
		}
		unsigned ms = wait_ms ? wait_ms : jittered(backoff);
		if (backoff < p->set.backoff_max_ms / 2)
			backoff *= 2;
		else
			backoff = p->set.backoff_max_ms;
		if (ms > p->set.backoff_max_ms && !wait_ms)
			ms = p->set.backoff_max_ms;
		if (kube_part_sleep(p, ms))
			break;
	}
	store_reader_free(w->reader);
	w->reader = NULL;
	return NULL;
}

/* ---- the watcher ---- */

int kube_watch_init(struct kube_watch *w, struct kube *p, enum store_kind k)
{
	char l[64];
	*w = (struct kube_watch){ .part = p, .kind = k, .ki = store_kind_info(k) };
	const struct store_kind_info *ki = w->ki;
	int n;
	if (*ki->group)
		n = snprintf(w->path, sizeof(w->path), "/apis/%s/%s", ki->group, ki->version);
	else
		n = snprintf(w->path, sizeof(w->path), "/api/%s", ki->version);
	if (p->namespace_)
		n += snprintf(w->path + n, sizeof(w->path) - (size_t)n, "/namespaces/%s",
			      p->namespace_);
	if ((size_t)n + strlen(ki->plural) + 2 > sizeof(w->path))
		return -ENAMETOOLONG;
	snprintf(w->path + n, sizeof(w->path) - (size_t)n, "/%s", ki->plural);
	pthread_mutex_init(&w->lock, NULL);
	snprintf(w->state, sizeof(w->state), "not started");
	snprintf(l, sizeof(l), "kind=\"%s\"", ki->kind);
	w->m_restarts = metrics_counter("ironbell_kube_watch_restarts_total",
					"Watches that ended in an error and were resumed.", l);
	w->m_relists = metrics_counter("ironbell_kube_relists_total",
				       "Lists made again after the first (410 Gone).", l);
	w->m_refused = metrics_counter("ironbell_kube_objects_refused_total",
				       "Objects from the cluster the store refused (invalid).", l);
	w->m_events = metrics_counter("ironbell_kube_events_total",
				      "Objects from the cluster written to the store.", l);
	w->m_lag = metrics_histogram("ironbell_kube_event_lag_seconds",
				     "From an event's arrival to its commit in the store.", l,
				     metrics_latency_buckets, metrics_latency_nbuckets);
	w->m_synced = metrics_gauge("ironbell_kube_synced",
				    "1 once the kind has been listed in full.", l);
	w->m_objects = metrics_gauge("ironbell_kube_listed_objects",
				     "Objects of the kind in the last full list.", l);
	return 0;
}

int kube_watch_start(struct kube_watch *w)
{
	w->sess = kube_session_new(w->part->api);
	if (!w->sess)
		return -ENOMEM;
	if (w->kind == STORE_KIND_MACHINE && !(w->fetch = kube_session_new(w->part->api)))
		return -ENOMEM;
	int e = pthread_create(&w->thread, NULL, run, w);
	if (e)
		return -e;
	w->started = true;
	return 0;
}

void kube_watch_stop(struct kube_watch *w)
{
	if (w->sess)
		kube_session_cancel(w->sess);
	if (w->fetch)
		kube_session_cancel(w->fetch);
}

void kube_watch_fini(struct kube_watch *w)
{
	if (w->started)
		pthread_join(w->thread, NULL);
	w->started = false;
	if (w->sess)
		kube_session_free(w->sess);
	w->sess = NULL;
	if (w->fetch)
		kube_session_free(w->fetch);
	w->fetch = NULL;
	kube_rvmap_free(&w->map);
	if (w->ki)
		pthread_mutex_destroy(&w->lock);
}

bool kube_watch_cluster_obj(struct kube_watch *w, const char *ns, const char *name,
			    char rv[KUBE_MAX_RV + 1], char uid[KUBE_MAX_UID + 1])
{
	pthread_mutex_lock(&w->lock);
	struct kube_rv_entry *e = kube_rvmap_get(&w->map, ns, name);
	if (e) {
		snprintf(rv, KUBE_MAX_RV + 1, "%s", e->rv);
		snprintf(uid, KUBE_MAX_UID + 1, "%s", e->uid);
	}
	pthread_mutex_unlock(&w->lock);
	return e != NULL;
}
