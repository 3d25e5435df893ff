/* writer — what the daemon's controllers change in the store, sent back
 * to the cluster.
 *
 * DESIGN: one thread follows the store's change log from where it starts
 * and picks the changes made by source "daemon" (the controllers, DHCP's
 * and the public routes' boot marks) to kinds the watcher syncs; the
 * watcher's own writes (source "kube") and the admin API's ("local") are
 * not sent. Each object is queued once and sent write_delay_ms after its
 * first change, from the store's state then, so a burst of changes is one
 * request. What is sent is decided from that state and what the cluster
 * holds (the watcher's map of resourceVersions and uids):
 * - the object is gone from the store but in the cluster: DELETE;
 * - it is in the store but not in the cluster, or the store's is another
 *   object of the same name (a uid the cluster does not have): a Job or a
 *   Task a controller made is created (POST, then its status); anything
 *   else is not the daemon's to create;
 * - a Workflow, Machine, Job or Task: its status is replaced (PUT on the
 *   status subresource, the cluster's resourceVersion as precondition), as
 *   the instance that leads owns these statuses; a Workflow's status is
 *   converted to the legacy shape when the cluster's CRD has it;
 * - labels, annotations and spec (a Hardware's allowPXE toggles and boot
 *   marks): the merge patch from the cluster's version the store keeps
 *   beside its own (store_get_mirror()) to the store's, with that
 *   version's resourceVersion as precondition. The store keeps the
 *   daemon's changes over every newer version the watcher brings
 *   (STORE_OP_MIRROR), so a 409 waits for the watcher and patches from
 *   the newer version: a concurrent edit in the cluster is never undone.
 * A status conflict (409) reads the resourceVersion again and writes again,
 * up to WRITE_TRIES times; no answer, a 429 or a 5xx retries after a
 * backoff; a 404 or 422 is logged and the change dropped (the cluster's
 * object wins; the watcher brings it back into the store). At a stop,
 * kube_writer_drain() has what is queued sent at once, before the Lease is
 * released: what an agent reported just before is not lost. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "common/jsonmerge.h"
#include "kube/watcher.h"

#define SUB "kube"
#define CHANGES_PER_TURN 1024u
#define WRITE_TRIES 5u           /* conflicts in a row before a backoff */
#define MAX_QUEUED 1000000u      /* objects waiting to be sent */
#define TURN_MS 100              /* longest sleep: stop is checked as often */
#define WAIT_TRIES 3000u         /* write_delay_ms waits for the watcher, at most */
#define DRAIN_POLL_MS 10         /* kube_writer_drain() looks this often */
#define DRAIN_RETRY_MS 500       /* a failed send is retried this soon while draining */

struct queued {
	enum store_kind kind;
	char *ns, *name;
	uint64_t due_ns;
	uint64_t since_ns;   /* the first change not yet sent */
	unsigned tries;      /* sends that failed in a row */
	bool live;
};

struct kube_writer {
	struct kube *p;
	struct kube_session *sess;
	struct store_reader *r;
	struct store_subscription *sub;
	uint64_t rv;                  /* change log followed up to */
	struct queued *q;
	size_t nq, capq;
	struct kube_rvmap index[STORE_KIND_MAX]; /* queued objects; epoch = slot + 1 */
	enum kube_status_schema schema;
	pthread_t thread;
	bool started;
	bool draining;                /* atomic: send what is queued now */
	bool drained;                 /* atomic: a turn since draining left nothing */
	struct metric *m_latency, *m_conflicts, *m_errors, *m_writes;
};

static bool synced_kind(enum store_kind k)
{
	return k != STORE_KIND_MAX;
}

static bool status_kind(enum store_kind k)
{
	return k == STORE_KIND_WORKFLOW || k == STORE_KIND_MACHINE || k == STORE_KIND_JOB ||
	       k == STORE_KIND_TASK;
}

/* ---- the queue ---- */

static struct queued *enqueue(struct kube_writer *w, enum store_kind k, const char *ns,
			      const char *name)
{
	struct kube_rv_entry *e = kube_rvmap_put(&w->index[k], ns, name);
	if (!e)
		return NULL;
	if (e->epoch)
		return &w->q[e->epoch - 1];
	if (w->nq == w->capq) {
		size_t cap = w->capq ? w->capq * 2 : 64;
		struct queued *q = cap <= MAX_QUEUED ? realloc(w->q, cap * sizeof(*q)) : NULL;
		if (!q) {
			kube_rvmap_del(&w->index[k], ns, name);
			return NULL;
		}
		w->q = q;
		w->capq = cap;
	}
	struct queued *it = &w->q[w->nq];
	uint64_t now = now_mono_ns();
	*it = (struct queued){ .kind = k, .ns = strdup(ns), .name = strdup(name), .live = true,
			       .since_ns = now,
			       .due_ns = now + (uint64_t)w->p->set.write_delay_ms * 1000000u };
	if (!it->ns || !it->name) {
		free(it->ns);
		free(it->name);
		kube_rvmap_del(&w->index[k], ns, name);
		return NULL;
	}
	e->epoch = (uint32_t)++w->nq;
	return it;
}

static void dequeue(struct kube_writer *w, size_t i)
{
	struct queued *it = &w->q[i];
	kube_rvmap_del(&w->index[it->kind], it->ns, it->name);
	free(it->ns);
	free(it->name);
	it->live = false;
}

/* Drops the dead slots, renumbering the index. */
static void compact(struct kube_writer *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->nq; i++) {
		if (!w->q[i].live)
			continue;
		w->q[n] = w->q[i];
		struct kube_rv_entry *e = kube_rvmap_get(&w->index[w->q[n].kind], w->q[n].ns,
							 w->q[n].name);
		if (e)
			e->epoch = (uint32_t)(n + 1);
		n++;
	}
	w->nq = n;
}

/* ---- following the change log ---- */

static json_t *main_part(const json_t *obj)
{
	const json_t *m = json_object_get(obj, "metadata");
	json_t *out = json_object();
	json_t *meta = json_object();
	if (!out || !meta) {
		json_decref(out);
		json_decref(meta);
		return NULL;
	}
	json_t *labels = json_object_get(m, "labels"), *ann = json_object_get(m, "annotations");
	json_object_set_new(meta, "labels", labels ? json_incref(labels) : json_object());
	json_object_set_new(meta, "annotations", ann ? json_incref(ann) : json_object());
	json_object_set_new(out, "metadata", meta);
	if (json_object_get(obj, "spec"))
		json_object_set(out, "spec", json_object_get(obj, "spec"));
	return out;
}

static int on_change(const struct store_change *c, void *ud)
{
	struct kube_writer *w = ud;
	struct kube *p = w->p;
	if (!synced_kind(c->kind) || !c->source || strcmp(c->source, STORE_SOURCE_DAEMON) != 0)
		return 0;
	if (p->namespace_ && strcmp(c->namespace_, p->namespace_) != 0)
		return 0;
	struct queued *it = enqueue(w, c->kind, c->namespace_, c->name);
	if (!it) {
		log_error(SUB, "%s %s/%s: not sent back: out of memory",
			  store_kind_info(c->kind)->singular, c->namespace_, c->name);
		return 0;
	}
	return 0;
}

/* ---- sending ---- */

static void strip_identity(json_t *obj)
{
	json_t *m = json_object_get(obj, "metadata");
	static const char *const keys[] = { "uid", "resourceVersion", "creationTimestamp",
					    "generation", "managedFields", "selfLink" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		json_object_del(m, keys[i]);
}

static void item_path(struct kube_writer *w, const struct queued *it, char *out, size_t len,
		      const char *sub)
{
	const struct store_kind_info *ki = store_kind_info(it->kind);
	if (*ki->group)
		snprintf(out, len, "/apis/%s/%s/namespaces/%s/%s%s%s%s", ki->group, ki->version,
			 it->ns, ki->plural, it->name ? "/" : "", it->name ? it->name : "", sub);
	else
		snprintf(out, len, "/api/%s/namespaces/%s/%s%s%s%s", ki->version, it->ns,
			 ki->plural, it->name ? "/" : "", it->name ? it->name : "", sub);
	(void)w;
}

/* Sends one request with body obj (NULL: none); the answer's object into
 * *ret (may be NULL). Returns the HTTP status, or a negative errno. */
static long send(struct kube_writer *w, const char *method, const char *path,
		 const char *ctype, const json_t *obj, json_t **ret, char *why, size_t whylen)
{
	struct kube_response resp;
	char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	if (obj && !body)
		return -ENOMEM;
	int e = kube_request(w->sess, method, path, ctype, body, body ? strlen(body) : 0, &resp);
	free(body);
	metric_inc(w->m_writes, 1);
	snprintf(why, whylen, "%s", resp.error);
	if (ret)
		*ret = NULL;
	if (e < 0) {
		buf_free(&resp.body);
		return e;
	}
	if (ret && resp.body.len)
		*ret = json_loadb(resp.body.data, resp.body.len, JSON_REJECT_DUPLICATES, NULL);
	buf_free(&resp.body);
	return resp.status;
}

/* The cluster's resourceVersion of the object (a read). */
static long read_rv(struct kube_writer *w, const struct queued *it, char rv[KUBE_MAX_RV + 1],
		    json_t **ret_obj, char *why, size_t whylen)
{
	char path[1024];
	json_t *obj = NULL;
	item_path(w, it, path, sizeof(path), "");
	long st = send(w, "GET", path, NULL, NULL, &obj, why, whylen);
	const char *v = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	if (st == 200 && (!v || strlen(v) > KUBE_MAX_RV)) {
		snprintf(why, whylen, "the object read has no resourceVersion");
		st = -EBADMSG;
	}
	if (st == 200)
		snprintf(rv, KUBE_MAX_RV + 1, "%s", v);
	if (ret_obj && st == 200)
		*ret_obj = obj;
	else
		json_decref(obj);
	return st;
}

/* PUT of the status: local's status, the cluster's resourceVersion. */
static long put_status(struct kube_writer *w, const struct queued *it, const json_t *local,
		       const char *rv, char *why, size_t whylen)
{
	char path[1024], err[256];
	json_t *body = json_deep_copy(local);
	long st;
	if (!body)
		return -ENOMEM;
	json_t *status = json_object_get(body, "status");
	if (it->kind == STORE_KIND_WORKFLOW && w->schema == KUBE_STATUS_LEGACY && status) {
		json_t *legacy = NULL;
		if (kube_status_to_legacy(status, &legacy, err, sizeof(err)) < 0) {
			snprintf(why, whylen, "the status has no legacy form: %s", err);
			json_decref(body);
			return -EINVAL;
		}
		json_object_set_new(body, "status", legacy);
	}
	strip_identity(body);
	json_object_set_new(json_object_get(body, "metadata"), "resourceVersion",
			    json_string(rv));
	item_path(w, it, path, sizeof(path), "/status");
	st = send(w, "PUT", path, "application/json", body, NULL, why, whylen);
	json_decref(body);
	return st;
}

/* The ownerReferences of body with the cluster's uid of each owner (a Task
 * made for a Job the daemon made before the Job was in the cluster names
 * the store's uid). -EAGAIN when an owner is not in the cluster yet. */
static int fix_owners(struct kube_writer *w, const struct queued *it, json_t *body, char *why,
		      size_t whylen)
{
	json_t *refs = json_object_get(json_object_get(body, "metadata"), "ownerReferences");
	size_t i;
	json_t *ref;
	json_array_foreach(refs, i, ref)
	{
		const char *av = json_string_value(json_object_get(ref, "apiVersion"));
		const char *kd = json_string_value(json_object_get(ref, "kind"));
		const char *nm = json_string_value(json_object_get(ref, "name"));
		enum store_kind k;
		char rv[KUBE_MAX_RV + 1], uid[KUBE_MAX_UID + 1];
		if (!av || !kd || !nm || store_kind_from_object(av, kd, &k) < 0)
			continue;
		if (!kube_watch_cluster_obj(&w->p->watch[k], it->ns, nm, rv, uid)) {
			snprintf(why, whylen, "its owner %s %s/%s is not in the cluster yet",
				 store_kind_info(k)->singular, it->ns, nm);
			return -EAGAIN;
		}
		json_object_set_new(ref, "uid", json_string(uid));
	}
	return 0;
}

/* Creates local (a Job or Task a controller made) in the cluster, then
 * its status. */
static long create(struct kube_writer *w, struct queued *it, const json_t *local, char *why,
		   size_t whylen)
{
	char path[1024];
	json_t *body = json_deep_copy(local), *made = NULL;
	if (!body)
		return -ENOMEM;
	strip_identity(body);
	json_object_del(body, "status");
	int e = fix_owners(w, it, body, why, whylen);
	if (e < 0) {
		json_decref(body);
		return e;
	}
	char *name = it->name;
	it->name = NULL; /* the collection's path */
	item_path(w, it, path, sizeof(path), "");
	it->name = name;
	long st = send(w, "POST", path, "application/json", body, &made, why, whylen);
	json_decref(body);
	const char *rv = json_string_value(
		json_object_get(json_object_get(made, "metadata"), "resourceVersion"));
	if (st == 201 && rv && json_object_size(json_object_get(local, "status")))
		st = put_status(w, it, local, rv, why, whylen);
	json_decref(made);
	return st;
}

/* A Hardware's labels, annotations and spec as the daemon changed them:
 * the merge patch from the cluster's version the store holds (mirror) to
 * the store's, with the mirror's resourceVersion as precondition. The
 * store keeps the daemon's changes on top of every newer version the
 * watcher brings (STORE_OP_MIRROR), so after a 409 the next try, once the
 * watcher has it, patches from the newer one. */
static long patch_main(struct kube_writer *w, struct queued *it, const json_t *mirror,
		       const json_t *local, char *why, size_t whylen)
{
	char path[1024], err[256];
	json_t *a = main_part(mirror), *b = main_part(local), *d = NULL;
	const char *rv = json_string_value(
		json_object_get(json_object_get(mirror, "metadata"), "resourceVersion"));
	long st;
	int e = a && b ? json_merge_diff(a, b, &d, err, sizeof(err)) : -ENOMEM;
	if (e < 0) {
		snprintf(why, whylen, "%s", e == -ENOMEM ? "out of memory" : err);
		st = e;
	} else if (!d) {
		st = 200; /* the cluster already says so */
	} else if (!rv) {
		snprintf(why, whylen, "the cluster's version has no resourceVersion");
		st = -EINVAL;
	} else {
		json_t *m = json_object_get(d, "metadata");
		if (!m)
			json_object_set_new(d, "metadata", m = json_object());
		json_object_set_new(m, "resourceVersion", json_string(rv));
		item_path(w, it, path, sizeof(path), "");
		st = send(w, "PATCH", path, "application/merge-patch+json", d, NULL, why, whylen);
	}
	json_decref(a);
	json_decref(b);
	json_decref(d);
	return st;
}

/* Whether local's status differs from what the cluster holds (mirror's,
 * which the watcher read into the store's shape). */
static bool status_differs(const json_t *local, const json_t *mirror)
{
	const json_t *ls = json_object_get(local, "status");
	return ls && !json_equal(ls, json_object_get(mirror, "status"));
}

/* One attempt for a queued object: the HTTP status of the last request
 * (2xx done, 409 conflict), or a negative errno (-EAGAIN: not yet). */
static long send_one(struct kube_writer *w, struct queued *it, char *why, size_t whylen)
{
	struct kube_watch *kw = &w->p->watch[it->kind];
	char rv[KUBE_MAX_RV + 1], uid[KUBE_MAX_UID + 1], path[1024];
	json_t *local = NULL, *mirror = NULL;
	long st = 200;
	if (!kube_synced(w->p)) {
		snprintf(why, whylen, "the cluster is not synced yet");
		return -EAGAIN;
	}
	int e = store_get(w->r, it->kind, it->ns, it->name, &local);
	bool in_cluster = kube_watch_cluster_obj(kw, it->ns, it->name, rv, uid);
	if (e < 0 && e != -ENOENT)
		return e;
	item_path(w, it, path, sizeof(path), "");
	if (e == -ENOENT) {
		if (!in_cluster)
			return 200;
		st = send(w, "DELETE", path, NULL, NULL, NULL, why, whylen);
		return st == 404 ? 200 : st;
	}
	e = store_get_mirror(w->r, it->kind, it->ns, it->name, &mirror);
	if (e < 0 && e != -ENOENT) {
		st = e;
		goto out;
	}
	if (!mirror) {
		/* The store's object is not the cluster's: one a controller made. */
		if (it->kind != STORE_KIND_JOB && it->kind != STORE_KIND_TASK)
			goto out; /* not the daemon's to create */
		if (in_cluster) { /* made again under the same name */
			st = send(w, "DELETE", path, NULL, NULL, NULL, why, whylen);
			if (st != 200 && st != 202 && st != 404)
				goto out;
		}
		st = create(w, it, local, why, whylen);
		goto out;
	}
	const char *mrv = json_string_value(
		json_object_get(json_object_get(mirror, "metadata"), "resourceVersion"));
	snprintf(rv, sizeof(rv), "%s", mrv ? mrv : "");
	if (status_kind(it->kind) && status_differs(local, mirror)) {
		st = put_status(w, it, local, rv, why, whylen);
		for (unsigned t = 1; st == 409 && t < WRITE_TRIES; t++) {
			metric_inc(w->m_conflicts, 1);
			st = read_rv(w, it, rv, NULL, why, whylen);
			if (st == 200)
				st = put_status(w, it, local, rv, why, whylen);
		}
		if (st < 200 || st >= 300)
			goto out;
	}
	st = patch_main(w, it, mirror, local, why, whylen);
	if (st == 409) {
		/* The cluster's object changed: once the watcher brings it, the
		 * store holds the daemon's changes over it; try then. */
		metric_inc(w->m_conflicts, 1);
		snprintf(why, whylen, "the object changed in the cluster; again from the new one");
		st = -EAGAIN;
	}
out:
	json_decref(local);
	json_decref(mirror);
	return st;
}

static void flush(struct kube_writer *w)
{
	uint64_t now = now_mono_ns();
	size_t n = w->nq;
	for (size_t i = 0; i < n && !kube_part_stopping(w->p); i++) {
		struct queued *it = &w->q[i];
		char why[512] = "";
		if (!it->live || it->due_ns > now)
			continue;
		long st = send_one(w, it, why, sizeof(why));
		const char *kind = store_kind_info(it->kind)->singular;
		if (st >= 200 && st < 300) {
			metric_observe(w->m_latency, (double)(now_mono_ns() - it->since_ns) / 1e9);
			dequeue(w, i);
			continue;
		}
		if (st == -EAGAIN && it->tries + 1 < WAIT_TRIES) { /* wait for the watcher */
			it->tries++;
			it->due_ns = now + (uint64_t)w->p->set.write_delay_ms * 1000000u;
			log_debug(SUB, "%s %s/%s: not yet: %s", kind, it->ns, it->name, why);
			continue;
		}
		metric_inc(w->m_errors, 1);
		if (st == 404 || st == 422 || (st >= 400 && st < 500 && st != 409 && st != 429)) {
			log_warn(SUB, "%s %s/%s: the cluster refused the change (%ld): %s", kind,
				 it->ns, it->name, st, why);
			store_event(w->p->store, it->kind, it->ns, it->name, "Warning",
				    "WriteBackRefused", "the cluster refused the change (%ld): %s",
				    st, why);
			dequeue(w, i);
			continue;
		}
		unsigned ms = w->p->set.backoff_min_ms << (it->tries < 10 ? it->tries : 10);
		if (ms > w->p->set.backoff_max_ms)
			ms = w->p->set.backoff_max_ms;
		it->tries++;
		it->due_ns = now + (uint64_t)ms * 1000000u;
		log_warn(SUB, "%s %s/%s: not written back (%ld), again in %u ms: %s", kind, it->ns,
			 it->name, st, ms, why);
	}
	if (w->nq > 64 && w->nq > 2 * n / 3)
		compact(w);
	else {
		size_t live = 0;
		for (size_t i = 0; i < w->nq; i++)
			live += w->q[i].live;
		if (live * 2 < w->nq)
			compact(w);
	}
}

static uint64_t next_due_ms(struct kube_writer *w)
{
	uint64_t now = now_mono_ns(), best = UINT64_MAX;
	for (size_t i = 0; i < w->nq; i++)
		if (w->q[i].live && w->q[i].due_ns < best)
			best = w->q[i].due_ns;
	if (best == UINT64_MAX)
		return TURN_MS;
	return best <= now ? 0 : (best - now) / 1000000u + 1;
}

/* Whether no queued object is left. */
static bool queue_empty(const struct kube_writer *w)
{
	for (size_t i = 0; i < w->nq; i++)
		if (w->q[i].live)
			return false;
	return true;
}

static void *run(void *arg)
{
	struct kube_writer *w = arg;
	while (!kube_part_stopping(w->p)) {
		bool drain = __atomic_load_n(&w->draining, __ATOMIC_ACQUIRE);
		w->schema = (enum kube_status_schema)__atomic_load_n(&w->p->schema, __ATOMIC_ACQUIRE);
		uint64_t ms = next_due_ms(w);
		struct pollfd pfd = { .fd = store_subscription_fd(w->sub), .events = POLLIN };
		if (poll(&pfd, 1, (int)(ms < TURN_MS ? ms : TURN_MS)) > 0)
			store_subscription_ack(w->sub);
		for (unsigned turn = 0; turn < 64; turn++) {
			size_t n = 0;
			uint64_t last = w->rv;
			int e = store_changes_each(w->r, w->rv, STORE_KIND_MAX, NULL, CHANGES_PER_TURN,
						   on_change, w, &n, &last);
			if (e == -ETIME) {
				log_warn(SUB, "the change log moved past the writer: changes made "
					      "before now are not sent back");
				store_resource_version(w->r, &last);
			} else if (e < 0) {
				break;
			}
			w->rv = last;
			if (n < CHANGES_PER_TURN)
				break;
		}
		if (drain) { /* everything is due now; a retry soon */
			uint64_t soon = now_mono_ns() + (uint64_t)DRAIN_RETRY_MS * 1000000u;
			for (size_t i = 0; i < w->nq; i++) {
				struct queued *it = &w->q[i];
				uint64_t due = it->tries ? soon : 0;
				if (it->live && it->due_ns > due)
					it->due_ns = due;
			}
		}
		flush(w);
		if (drain && queue_empty(w))
			__atomic_store_n(&w->drained, true, __ATOMIC_RELEASE);
	}
	return NULL;
}

struct kube_writer *kube_writer_new(struct kube *p)
{
	struct kube_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->p = p;
	w->m_latency = metrics_histogram("ironbell_kube_writeback_seconds",
					 "From a change by the daemon to the cluster's answer that "
					 "holds it.",
					 NULL,
					 metrics_latency_buckets, metrics_latency_nbuckets);
	w->m_conflicts = metrics_counter("ironbell_kube_writeback_conflicts_total",
					 "Write-backs the cluster answered 409 Conflict, read "
					 "again and sent again.",
					 NULL);
	w->m_errors = metrics_counter("ironbell_kube_writeback_errors_total",
				      "Write-backs that failed (retried, or dropped when the "
				      "cluster refused them).",
				      NULL);
	w->m_writes = metrics_counter("ironbell_kube_writeback_requests_total",
				      "Requests made to send changes back.", NULL);
	return w;
}

int kube_writer_start(struct kube_writer *w)
{
	uint32_t mask = 0;
	for (int k = 0; k < STORE_KIND_MAX; k++)
		mask |= 1u << k;
	w->sess = kube_session_new(w->p->api);
	w->r = store_reader_new(w->p->store);
	w->sub = store_subscribe(w->p->store, mask);
	if (!w->sess || !w->r || !w->sub || store_resource_version(w->r, &w->rv) < 0)
		return -ENOMEM;
	int e = pthread_create(&w->thread, NULL, run, w);
	if (e)
		return -e;
	w->started = true;
	return 0;
}

void kube_writer_drain(struct kube_writer *w, unsigned ms)
{
	if (!w || !w->started)
		return;
	uint64_t end = now_mono_ns() + (uint64_t)ms * 1000000u;
	__atomic_store_n(&w->draining, true, __ATOMIC_RELEASE);
	/* Bounded by end: the writer's turns are at most TURN_MS apart. */
	while (!__atomic_load_n(&w->drained, __ATOMIC_ACQUIRE) && now_mono_ns() < end) {
		struct timespec ts = { .tv_nsec = DRAIN_POLL_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (!__atomic_load_n(&w->drained, __ATOMIC_ACQUIRE))
		log_warn(SUB, "stopping with changes not yet sent back to the cluster");
}

void kube_writer_stop(struct kube_writer *w)
{
	if (w && w->sess)
		kube_session_cancel(w->sess);
}

void kube_writer_free(struct kube_writer *w)
{
	if (!w)
		return;
	if (w->started)
		pthread_join(w->thread, NULL);
	for (size_t i = 0; i < w->nq; i++)
		if (w->q[i].live)
			dequeue(w, i);
	free(w->q);
	for (int k = 0; k < STORE_KIND_MAX; k++)
		kube_rvmap_free(&w->index[k]);
	if (w->sub)
		store_unsubscribe(w->p->store, w->sub);
	store_reader_free(w->r);
	if (w->sess)
		kube_session_free(w->sess);
	free(w);
}
