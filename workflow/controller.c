/* controller — the workflow thread: one loop over the store's changes and
 * the Workflows' timers, which hands each Workflow that may move to the
 * engine (controller-step.c).
 *
 * DESIGN: the engine (engine.c) decides, purely, what a Workflow's next
 * state is; this thread finds the Workflows to ask about and does the
 * I/O. It keeps, for every Workflow in the store, a small entry (its name,
 * its templateRef and hardwareRef, the bmc Jobs its status names) in a
 * hash table, so that a change of any of the four kinds it subscribes to
 * (Workflow, Template, Hardware, Job) queues the Workflows it concerns:
 * the Workflow itself, or those that refer to the Template, Hardware or Job
 * changed. A Workflow is queued once however many changes name it; the
 * queue is worked WF_CTL_LOOKS_PER_TURN at a time, so that a stop is never
 * far. The engine's wake_ms (a timeout, a retry's backoff) arms the
 * entry's timer, in one min-heap ordered by the wall clock, as the engine's
 * times are; a timer that fires queues its Workflow.
 *
 * The change log is read from where the last read stopped, a page at a
 * time (WF_CTL_SYNC_PAGES pages per turn). At start, when the log has
 * moved past what was read (-ETIME), and every resync_s, every Workflow is
 * listed again (store_each(), one row in memory at a time), marked and
 * swept, and queued: the controller is level-triggered, each decision is
 * taken from the objects as stored, so seeing a Workflow twice does
 * nothing twice, and a restart goes on from the stored status. A change
 * that is this thread's own status write (same resourceVersion) queues
 * nothing, and is not decoded: the change log is read undecoded
 * (store_changes_each()), a Template, Hardware or Job change queues by its
 * name alone, and a Workflow change is decoded once, the object kept for
 * the look it queues (which reads the store only when it has none, or
 * after a conflict). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "store/store.h"
#include "workflow/controller-internal.h"

/* ---- small helpers ---- */

const char *wf_ctl_jstr(const json_t *obj, const char *path)
{
	char key[64];
	const char *p = path;
	for (int depth = 0; obj && depth < 16; depth++) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = 0;
		obj = json_object_get(obj, key);
		if (!dot)
			return json_string_value(obj);
		p = dot + 1;
	}
	return NULL;
}

json_t *wf_ctl_own_copy(const json_t *obj)
{
	json_t *c = json_copy((json_t *)obj);
	json_t *md = json_object_get(obj, "metadata");
	if (c && md && json_object_set_new(c, "metadata", json_deep_copy(md)) < 0) {
		json_decref(c);
		c = NULL;
	}
	return c;
}

static uint64_t mono_ms(void)
{
	return now_mono_ns() / 1000000u;
}

static int64_t real_ms(void)
{
	return (int64_t)(now_real_ns() / 1000000u);
}

/* Replaces *dst with a copy of src (NULL: none). */
static void set_str(char **dst, const char *src)
{
	if (*dst && src && strcmp(*dst, src) == 0)
		return;
	free(*dst);
	*dst = src && *src ? strdup(src) : NULL;
}

static bool str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ---- the index ---- */

static size_t bucket_of(const char *ns, const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const char *p = ns; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	h = (h ^ '/') * 16777619u;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h % WF_CTL_BUCKETS;
}

static struct wf_entry *entry_find(struct wf_server *s, const char *ns, const char *name)
{
	for (struct wf_entry *w = s->bucket[bucket_of(ns, name)]; w; w = w->hnext)
		if (strcmp(w->ns, ns) == 0 && strcmp(w->name, name) == 0)
			return w;
	return NULL;
}

static void entry_free(struct wf_entry *w)
{
	if (!w)
		return;
	json_decref(w->changed_obj);
	free(w->ns);
	free(w->name);
	free(w->tmpl);
	free(w->hw);
	for (size_t i = 0; i < w->njobs; i++)
		free(w->jobs[i]);
	free(w);
}

static struct wf_entry *entry_add(struct wf_server *s, const char *ns, const char *name)
{
	if (s->n >= WF_CTL_MAX_WORKFLOWS) {
		log_warn("workflow", "workflow %s/%s: more than %d Workflows: not followed", ns,
			 name, WF_CTL_MAX_WORKFLOWS);
		return NULL;
	}
	struct wf_entry *w = calloc(1, sizeof(*w));
	if (!w || !(w->ns = strdup(ns)) || !(w->name = strdup(name))) {
		entry_free(w);
		return NULL;
	}
	size_t b = bucket_of(ns, name);
	w->hnext = s->bucket[b];
	s->bucket[b] = w;
	s->n++;
	metric_set(s->m_followed, (double)s->n);
	return w;
}

/* Unlinks w from the bucket, the queue and the heap, and frees it. */
static void entry_remove(struct wf_server *s, struct wf_entry *w)
{
	struct wf_entry **pp = &s->bucket[bucket_of(w->ns, w->name)];
	while (*pp && *pp != w)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = w->hnext;
	if (w->queued) {
		struct wf_entry *prev = NULL;
		for (struct wf_entry *q = s->qhead; q; prev = q, q = q->qnext) {
			if (q != w)
				continue;
			if (prev)
				prev->qnext = q->qnext;
			else
				s->qhead = q->qnext;
			if (s->qtail == w)
				s->qtail = prev;
			break;
		}
	}
	wf_ctl_timer(s, w, 0);
	s->n--;
	metric_set(s->m_followed, (double)s->n);
	entry_free(w);
}

void wf_ctl_refs(struct wf_entry *w, const json_t *wf)
{
	set_str(&w->tmpl, wf_ctl_jstr(wf, "spec.templateRef"));
	set_str(&w->hw, wf_ctl_jstr(wf, "spec.hardwareRef"));
	const json_t *jobs = json_object_get(
		json_object_get(json_object_get(wf, "status"), "bootOptions"), "jobs");
	const char *key;
	const json_t *v;
	size_t n = 0;
	for (size_t i = 0; i < w->njobs; i++)
		free(w->jobs[i]);
	json_object_foreach ((json_t *)jobs, key, v) {
		if (n == WF_CTL_MAX_JOB_REFS)
			break;
		if ((w->jobs[n] = strdup(key)))
			n++;
	}
	w->njobs = n;
}

/* ---- the queue ---- */

void wf_ctl_queue(struct wf_server *s, struct wf_entry *w)
{
	if (w->queued)
		return;
	w->queued = true;
	w->qnext = NULL;
	if (s->qtail)
		s->qtail->qnext = w;
	else
		s->qhead = w;
	s->qtail = w;
}

static struct wf_entry *queue_pop(struct wf_server *s)
{
	struct wf_entry *w = s->qhead;
	if (!w)
		return NULL;
	s->qhead = w->qnext;
	if (!s->qhead)
		s->qtail = NULL;
	w->qnext = NULL;
	w->queued = false;
	return w;
}

/* ---- timers ---- */

void wf_ctl_timer(struct wf_server *s, struct wf_entry *w, int64_t at_ms)
{
	if (at_ms <= 0) {
		timerheap_cancel(&s->timers, &w->timer);
		return;
	}
	if (timerheap_set(&s->timers, &w->timer, (uint64_t)at_ms) < 0)
		/* the resync looks at it all the same */
		log_warn("workflow", "workflow %s/%s: timer not set: out of memory", w->ns,
			 w->name);
}

/* Queues the Workflows whose timer is due. */
static void timers_run(struct wf_server *s, int64_t now)
{
	struct timerheap_node *top;
	for (size_t n = 0; n <= WF_CTL_MAX_WORKFLOWS && (top = timerheap_top(&s->timers)) &&
			   (int64_t)top->at <= now;
	     n++) {
		struct wf_entry *w = timerheap_owner(top, struct wf_entry, timer);
		timerheap_cancel(&s->timers, top);
		wf_ctl_queue(s, w);
	}
}

/* ---- following the store ---- */

/* A Workflow as listed or changed: its entry made or refreshed, and
 * queued unless the change is this thread's own write. */
static void workflow_changed(struct wf_server *s, bool deleted, const json_t *obj)
{
	const char *ns = wf_ctl_jstr(obj, "metadata.namespace");
	const char *name = wf_ctl_jstr(obj, "metadata.name");
	const char *rvs = wf_ctl_jstr(obj, "metadata.resourceVersion");
	uint64_t rv = 0;
	if (!ns || !name)
		return;
	struct wf_entry *w = entry_find(s, ns, name);
	if (deleted) {
		if (w)
			entry_remove(s, w);
		return;
	}
	if (!w && !(w = entry_add(s, ns, name)))
		return;
	w->seen = true;
	wf_ctl_refs(w, obj);
	if (rvs && num_parse_u64_str(rvs, UINT64_MAX, &rv) == 0 && rv && rv == w->written_rv)
		return;
	wf_ctl_queue(s, w);
}

/* Queues the Workflows of namespace ns that refer to name as a Template
 * (k TEMPLATE), a Hardware (HARDWARE) or a Job (JOB). */
static void refs_changed(struct wf_server *s, enum store_kind k, const char *ns, const char *name)
{
	if (!ns || !name)
		return;
	for (size_t b = 0; b < WF_CTL_BUCKETS; b++) {
		for (struct wf_entry *w = s->bucket[b]; w; w = w->hnext) {
			bool hit = false;
			if (strcmp(w->ns, ns) != 0)
				continue;
			if (k == STORE_KIND_TEMPLATE)
				hit = str_eq(w->tmpl, name);
			else if (k == STORE_KIND_HARDWARE)
				hit = str_eq(w->hw, name);
			for (size_t i = 0; k == STORE_KIND_JOB && !hit && i < w->njobs; i++)
				hit = str_eq(w->jobs[i], name);
			if (hit)
				wf_ctl_queue(s, w);
		}
	}
}

static uint64_t obj_rv(const json_t *obj)
{
	const char *rvs = wf_ctl_jstr(obj, "metadata.resourceVersion");
	uint64_t rv = 0;
	if (!rvs || num_parse_u64_str(rvs, UINT64_MAX, &rv) < 0)
		return 0;
	return rv;
}

static int list_one(const char *text, size_t len, void *ud)
{
	struct wf_server *s = ud;
	json_t *obj = jsondec_loadb(text, len, 0, NULL);
	if (obj)
		workflow_changed(s, false, obj);
	json_decref(obj);
	return 0;
}

/* Every Workflow again: at start, after -ETIME, and every resync_s. */
static void relist(struct wf_server *s)
{
	uint64_t rv = 0;
	for (size_t b = 0; b < WF_CTL_BUCKETS; b++)
		for (struct wf_entry *w = s->bucket[b]; w; w = w->hnext)
			w->seen = false;
	int e = store_each(s->reader, STORE_KIND_WORKFLOW, list_one, s, &rv);
	if (e < 0) {
		log_error("workflow", "listing workflows: %s", strerror(-e));
		return;
	}
	/* an own write seen again in a listing is looked at: the resync's point */
	for (size_t b = 0; b < WF_CTL_BUCKETS; b++) {
		struct wf_entry *w = s->bucket[b], *next;
		for (; w; w = next) {
			next = w->hnext;
			if (!w->seen) {
				entry_remove(s, w);
				continue;
			}
			/* the look reads what was listed, not an older change */
			json_decref(w->changed_obj);
			w->changed_obj = NULL;
			wf_ctl_queue(s, w);
		}
	}
	/* changes before rv are in the listing; an earlier s->rv would only
	 * queue again what is queued */
	if (rv > s->rv)
		s->rv = rv;
	s->next_resync_ms = mono_ms() + (uint64_t)s->set.resync_s * 1000u;
}

/* One change, undecoded: a Template, Hardware or Job queues the
 * Workflows that refer to it by its name alone; a Workflow's own status
 * write queues nothing and is not decoded; any other Workflow change is
 * decoded once, and the object kept for the look it queues. */
static int change_one(const struct store_change *c, void *ud)
{
	struct wf_server *s = ud;
	struct wf_entry *w;
	switch (c->kind) {
	case STORE_KIND_TEMPLATE:
	case STORE_KIND_HARDWARE:
	case STORE_KIND_JOB: refs_changed(s, c->kind, c->namespace_, c->name); return 0;
	case STORE_KIND_WORKFLOW: break;
	default: return 0;
	}
	w = entry_find(s, c->namespace_, c->name);
	if (strcmp(c->type, "DELETED") == 0) {
		if (w)
			entry_remove(s, w);
		return 0;
	}
	if (w && c->rv && c->rv == w->written_rv)
		return 0;
	/* the writer's own tree when the store still holds it (shared: the
	 * look copies what it changes), else the change decoded */
	json_t *obj = store_change_object(c);
	if (!obj) {
		const char *text;
		size_t len;
		obj = store_change_text(c, &text, &len) == 0 ? jsondec_loadb(text, len, 0, NULL) :
								NULL;
	}
	if (!obj)
		return 0;
	workflow_changed(s, false, obj);
	w = entry_find(s, c->namespace_, c->name);
	if (w && w->queued && obj_rv(obj) == c->rv) {
		json_decref(w->changed_obj);
		w->changed_obj = obj;
	} else {
		json_decref(obj);
	}
	return 0;
}

static void sync_changes(struct wf_server *s)
{
	s->sync_more = false;
	for (int page = 0; page < WF_CTL_SYNC_PAGES; page++) {
		uint64_t last = s->rv;
		size_t n = 0;
		int e = store_changes_each(s->reader, s->rv, STORE_KIND_MAX, NULL,
					   WF_CTL_CHANGES_PAGE, change_one, s, &n, &last);
		if (e == -ETIME) {
			log_warn("workflow", "changes were dropped by retention before they were "
					     "read: reading every Workflow again");
			s->rv = 0;
			relist(s);
			return;
		}
		if (e < 0) {
			log_error("workflow", "reading changes: %s", strerror(-e));
			return;
		}
		s->rv = last;
		if (n < WF_CTL_CHANGES_PAGE)
			return;
	}
	s->sync_more = true;
}

/* ---- the loop ---- */

static void work_queue(struct wf_server *s)
{
	for (int n = 0; n < WF_CTL_LOOKS_PER_TURN; n++) {
		struct wf_entry *w = queue_pop(s);
		if (!w)
			return;
		if (wf_ctl_look(s, w) == -ENOENT)
			entry_remove(s, w);
	}
}

static int loop_timeout(struct wf_server *s)
{
	int64_t t = WF_CTL_MAX_WAIT_MS;
	if (s->sync_more || s->qhead)
		return 0;
	const struct timerheap_node *top = timerheap_top(&s->timers);
	if (top) {
		int64_t d = (int64_t)top->at - real_ms();
		if (d < t)
			t = d;
	}
	uint64_t m = mono_ms();
	int64_t r = s->next_resync_ms > m ? (int64_t)(s->next_resync_ms - m) : 0;
	if (r < t)
		t = r;
	return t < 0 ? 0 : (int)t;
}

static void free_all(struct wf_server *s)
{
	for (size_t b = 0; b < WF_CTL_BUCKETS; b++) {
		struct wf_entry *w = s->bucket[b], *next;
		for (; w; w = next) {
			next = w->hnext;
			entry_free(w);
		}
		s->bucket[b] = NULL;
	}
	s->n = 0;
	s->timers.n = 0;
	s->qhead = s->qtail = NULL;
}

static void *run(void *arg)
{
	struct wf_server *s = arg;
	struct epoll_event ev[2];

	s->reader = store_reader_new(s->store);
	if (!s->reader) {
		log_error("workflow", "cannot open a store reader: workflows are not run");
		return NULL;
	}
	relist(s);
	for (;;) {
		timers_run(s, real_ms());
		if (mono_ms() >= s->next_resync_ms)
			relist(s);
		work_queue(s);
		int n = epoll_wait(s->ep_fd, ev, 2, loop_timeout(s));
		if (n < 0 && errno != EINTR) {
			log_error("workflow", "epoll_wait: %s", strerror(errno));
			break;
		}
		bool changed = false, stop = false;
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == s->stop_fd)
				stop = true;
			else
				changed = true;
		}
		if (stop)
			break;
		if (changed) {
			store_subscription_ack(s->sub);
			sync_changes(s);
		} else if (s->sync_more) {
			sync_changes(s);
		}
	}
	free_all(s);
	store_reader_free(s->reader);
	s->reader = NULL;
	return NULL;
}

/* ---- the server ---- */

static void server_metrics(struct wf_server *s)
{
	char l[64];
	for (int st = WF_STATE_PREPARING; st < WF_STATE_MAX; st++) {
		snprintf(l, sizeof(l), "state=\"%s\"", wf_state_name((enum wf_state)st));
		s->m_trans[st] = metrics_counter("ironbell_workflow_transitions_total",
						 "Workflow state changes the controller wrote, by "
						 "the state entered.",
						 l);
	}
	s->m_render_fail =
		metrics_counter("ironbell_workflow_render_failures_total",
				"Workflows whose template did not render or validate.", NULL);
	s->m_step_err = metrics_counter("ironbell_workflow_step_errors_total",
					"Looks at a Workflow that failed (store, engine) and are "
					"tried again later.",
					NULL);
	s->m_followed = metrics_gauge("ironbell_workflow_followed",
				      "Workflows the controller follows.", NULL);
}

int wf_server_new(struct store *store, const struct wf_settings *settings, struct wf_server **ret,
		  char *err, size_t errlen)
{
	struct wf_server *s = calloc(1, sizeof(*s));
	int e;
	if (!s) {
		snprintf(err, errlen, "workflow: out of memory");
		return -ENOMEM;
	}
	s->store = store;
	s->set = *settings;
	wf_settings_default(&s->set);
	s->stop_fd = s->ep_fd = -1;
	server_metrics(s);
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->ep_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->stop_fd < 0 || s->ep_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "workflow: %s: %s", s->stop_fd < 0 ? "eventfd" : "epoll",
			 strerror(errno));
		goto fail;
	}
	s->sub = store_subscribe(store, 1u << STORE_KIND_WORKFLOW | 1u << STORE_KIND_TEMPLATE |
						1u << STORE_KIND_HARDWARE | 1u << STORE_KIND_JOB);
	if (!s->sub) {
		e = -ENOMEM;
		snprintf(err, errlen, "workflow: cannot subscribe to the store");
		goto fail;
	}
	int fds[2] = { s->stop_fd, store_subscription_fd(s->sub) };
	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };
		if (epoll_ctl(s->ep_fd, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
			e = -errno;
			snprintf(err, errlen, "workflow: epoll_ctl: %s", strerror(errno));
			goto fail;
		}
	}
	*ret = s;
	return 0;
fail:
	wf_server_free(s);
	return e;
}

int wf_server_start(struct wf_server *s, char *err, size_t errlen)
{
	int e = pthread_create(&s->thread, NULL, run, s);
	if (e) {
		snprintf(err, errlen, "workflow: cannot start the thread: %s", strerror(e));
		return -e;
	}
	s->started = true;
	return 0;
}

void wf_server_free(struct wf_server *s)
{
	if (!s)
		return;
	if (s->started) {
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) < 0)
			log_error("workflow", "cannot stop the thread: %s", strerror(errno));
		pthread_join(s->thread, NULL);
	}
	free_all(s);
	if (s->sub)
		store_unsubscribe(s->store, s->sub);
	if (s->ep_fd >= 0)
		close(s->ep_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	timerheap_free(&s->timers);
	free(s);
}
