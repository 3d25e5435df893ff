/* server — the bmc thread: one loop over the engines, the store and the
 * controllers' timers.
 *
 * DESIGN: everything of the BMC part runs on this one thread, so the
 * controllers' state (machine.c, job.c, task.c) needs no lock. The loop
 * polls
 *   - an eventfd that bmc_server_free() writes to stop it;
 *   - a store subscription to Machine, Job, Task and Secret commits, after
 *     which it reads the change log from where it stopped (a page at a
 *     time, BMC_SYNC_PAGES pages per turn) and hands each change to its
 *     controller;
 *   - each engine's fd, then calls its process(), which runs the done
 *     callbacks of the calls that ended;
 * and sleeps no longer than the earliest of the engines' timeouts and the
 * controllers' timers, kept in one min-heap (a Machine's next power poll,
 * a Task's next verification poll and its deadline).
 *
 * At start, and when the change log has moved past what was read
 * (-ETIME), every Machine, Job and Task is listed again: the controllers
 * are level-triggered (each decision is taken from the objects as stored),
 * so seeing an object twice does nothing twice.
 *
 * A call to a BMC goes through bmc_req_start(): it tries the Machine's
 * providers in order (bmclib's semantics: the first that can reach the BMC
 * serves), counts latency and failures per provider and command
 * (ironbell_bmc_request_seconds, ironbell_bmc_failures_total), and keeps
 * a copy of the endpoint whose password it wipes when the call ends. No
 * metric label ever holds a host, a user or a password.
 *
 * Store writes wait for their commit. Jobs' and Tasks' are few and are
 * read back at once (the Job controller decides on what is stored), so
 * they are written as they happen; Machines' statuses, a thousand after
 * one round of polls, are queued and written together before the loop
 * sleeps (bmc_status_patch_later()). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bmc/bmc-internal.h"
#include "common/common.h"
#include "store/store.h"

#define BMC_MAX_HEAP (BMC_MAX_MACHINES + 2 * BMC_MAX_TASKS)

/* ---- small JSON helpers ---- */

const char *bmc_jstr(const json_t *obj, const char *path)
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

bool bmc_copy(char *out, size_t cap, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!s || n >= cap) {
		out[0] = 0;
		return false;
	}
	memcpy(out, s, n + 1);
	return true;
}

const json_t *bmc_cond_true(const json_t *obj, const char *type)
{
	const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
	const json_t *c;
	size_t i;
	json_array_foreach (conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *st = json_string_value(json_object_get(c, "status"));
		if (t && st && strcmp(t, type) == 0 && strcmp(st, "True") == 0)
			return c;
	}
	return NULL;
}

void bmc_time_now(char out[static 21])
{
	time_rfc3339((int64_t)(now_real_ns() / 1000000000u), out);
}

int bmc_status_patch(struct bmc_server *s, int kind, const char *ns, const char *name,
		     json_t *status)
{
	json_t *body = json_pack("{s:O}", "status", status);
	struct store_op op = { .type = STORE_OP_STATUS_PATCH,
			       .source = STORE_SOURCE_DAEMON,
			       .kind = (enum store_kind)kind,
			       .namespace_ = ns,
			       .name = name,
			       .body = body,
			       .no_object = true };
	int e = body ? store_write1(s->store, &op) : -ENOMEM;
	if (e < 0 && e != -ENOENT)
		log_warn("bmc", "%s %s/%s: status not written: %s",
			 store_kind_info((enum store_kind)kind)->singular, ns, name,
			 body ? store_op_message(&op) : "out of memory");
	store_op_clear(&op);
	json_decref(body);
	return e;
}

int bmc_status_patch_later(struct bmc_server *s, const char *ns, const char *name, json_t *status)
{
	json_t *body = json_pack("{s:o}", "status", status);
	char *n = NULL, *nm = NULL;
	if (!s->pend && !(s->pend = calloc(BMC_WRITE_BATCH, sizeof(*s->pend))))
		goto fail;
	if (s->npend == BMC_WRITE_BATCH)
		bmc_status_flush(s);
	n = strdup(ns);
	nm = strdup(name);
	if (!body || !n || !nm)
		goto fail;
	s->pend[s->npend++] = (struct store_op){ .type = STORE_OP_STATUS_PATCH,
						 .source = STORE_SOURCE_DAEMON,
						 .kind = STORE_KIND_MACHINE,
						 .namespace_ = n,
						 .name = nm,
						 .body = body,
						 .no_object = true };
	return 0;
fail:
	free(n);
	free(nm);
	json_decref(body);
	return -ENOMEM;
}

void bmc_status_flush(struct bmc_server *s)
{
	if (!s->npend)
		return;
	store_write(s->store, s->pend, s->npend, false);
	for (size_t i = 0; i < s->npend; i++) {
		struct store_op *op = &s->pend[i];
		if (op->error < 0 && op->error != -ENOENT) {
			log_warn("bmc", "machine %s/%s: status not written: %s", op->namespace_,
				 op->name, store_op_message(op));
			bmc_machine_status_lost(s, op->namespace_, op->name);
		}
		store_op_clear(op);
		json_decref(op->body);
		free((char *)op->namespace_);
		free((char *)op->name);
	}
	s->npend = 0;
}

/* ---- timers: one timerheap of the controllers' deadlines ---- */

int bmc_timer_set(struct bmc_server *s, struct bmc_timer *t, uint64_t at)
{
	return timerheap_set(&s->timers, &t->node, at);
}

void bmc_timer_cancel(struct bmc_server *s, struct bmc_timer *t)
{
	timerheap_cancel(&s->timers, &t->node);
}

/* Fires the timers that are due, at most BMC_TIMERS_PER_TURN. */
static void timers_run(struct bmc_server *s, uint64_t now)
{
	struct timerheap_node *top;
	for (int n = 0; n < BMC_TIMERS_PER_TURN && (top = timerheap_top(&s->timers)) &&
			top->at <= now;
	     n++) {
		struct bmc_timer *t = timerheap_owner(top, struct bmc_timer, node);
		bmc_timer_cancel(s, t);
		t->fire(s, t);
	}
}

/* ---- calls to a BMC, with provider fallback ---- */

static const char *const cmd_names[BMC_CMD_MAX] = { "power_get", "power_set", "boot_set",
						    "boot_get", "media_set" };

struct req {
	struct bmc_server *s;
	struct bmc_conn conn;
	size_t pos;
	struct bmc_call call;
	bmc_req_fn done;
	void *obj;
	char msg[BMC_COND_MAX]; /* what the providers tried before said */
};

const char *bmc_engine_name(const struct bmc_server *s, int engine)
{
	if (engine < 0 || (size_t)engine >= s->neng)
		return "none";
	return s->eng[engine].ops->name;
}

static void req_free(struct req *q)
{
	explicit_bzero(q->conn.ep.password, sizeof(q->conn.ep.password));
	free(q);
}

/* Whether another provider may do better than one that failed so. */
static bool fall_through(enum bmc_fail f)
{
	return f == BMC_FAIL_TIMEOUT || f == BMC_FAIL_AUTH || f == BMC_FAIL_TLS ||
	       f == BMC_FAIL_NETWORK || f == BMC_FAIL_PROTOCOL || f == BMC_FAIL_UNSUPPORTED;
}

static void note(struct req *q, const char *prov, const char *what)
{
	size_t n = strlen(q->msg);
	snprintf(q->msg + n, sizeof(q->msg) - n, "%s%s: %s", n ? "; " : "", prov, what);
}

static void on_reply(const struct bmc_reply *r, void *ud);

/* Submits q to its engines from q->pos on. 0, or the last engine's
 * refusal (-EAGAIN if any was full). */
static int req_submit(struct req *q)
{
	int ret = -ENODEV;
	for (; q->pos < q->conn.norder; q->pos++) {
		int ei = q->conn.order[q->pos];
		struct bmc_engine *E = &q->s->eng[ei];
		struct bmc_endpoint ep = q->conn.ep;
		ep.port = q->conn.ports[ei];
		int e = E->ops->submit(E->e, &ep, &q->call, on_reply, q);
		explicit_bzero(ep.password, sizeof(ep.password));
		if (e == 0)
			return 0;
		if (e == -EAGAIN)
			ret = e;
		else if (ret != -EAGAIN)
			ret = e;
		note(q, E->ops->name,
		     e == -EINVAL ? "cannot do this" :
		     e == -EAGAIN ? "busy" :
				    strerror(-e));
	}
	return ret;
}

static void on_reply(const struct bmc_reply *r, void *ud)
{
	struct req *q = ud;
	struct bmc_server *s = q->s;
	int ei = q->conn.order[q->pos];
	struct bmc_engine *E = &s->eng[ei];

	if (q->call.cmd < BMC_CMD_MAX && r->fail != BMC_FAIL_CANCELED)
		metric_observe(E->m_seconds[q->call.cmd], r->seconds);
	if (r->fail != BMC_FAIL_NONE && (unsigned)r->fail < BMC_FAIL_MAX)
		metric_inc(E->m_fail[r->fail], 1);
	if (r->fail != BMC_FAIL_NONE && r->fail != BMC_FAIL_CANCELED && fall_through(r->fail) &&
	    q->pos + 1 < q->conn.norder) {
		note(q, E->ops->name, r->message);
		q->pos++;
		if (req_submit(q) == 0)
			return;
		/* every later engine refused at once: report it all */
		q->done(s, r, ei, q->msg, q->obj);
		req_free(q);
		return;
	}
	if (r->fail != BMC_FAIL_NONE) {
		char m[BMC_MESSAGE_MAX];
		snprintf(m, sizeof(m), "%s", r->message);
		note(q, E->ops->name, m);
	}
	q->done(s, r, ei, q->msg, q->obj);
	req_free(q);
}

int bmc_req_start(struct bmc_server *s, const struct bmc_conn *conn, int prefer,
		  const struct bmc_call *call, bmc_req_fn done, void *obj, char *err, size_t errlen)
{
	struct req *q = calloc(1, sizeof(*q));
	if (!q) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	q->s = s;
	q->conn = *conn;
	q->call = *call;
	q->done = done;
	q->obj = obj;
	snprintf(q->msg, sizeof(q->msg), "%s", conn->unavailable);
	/* the engine that answered last goes first */
	for (size_t i = 1; prefer >= 0 && i < q->conn.norder; i++) {
		if (q->conn.order[i] != prefer)
			continue;
		memmove(&q->conn.order[1], &q->conn.order[0], i * sizeof(q->conn.order[0]));
		q->conn.order[0] = prefer;
		break;
	}
	int e = req_submit(q);
	if (e < 0) {
		snprintf(err, errlen, "%s", q->msg);
		req_free(q);
	}
	return e;
}

/* ---- reading the store ---- */

static void dispatch(struct bmc_server *s, const json_t *obj, bool deleted)
{
	enum store_kind k;
	if (store_kind_from_object(bmc_jstr(obj, "apiVersion"), bmc_jstr(obj, "kind"), &k) < 0)
		return;
	switch (k) {
	case STORE_KIND_MACHINE: bmc_machine_changed(s, deleted, obj); break;
	case STORE_KIND_JOB: bmc_job_changed(s, deleted, obj); break;
	case STORE_KIND_TASK: bmc_task_changed(s, deleted, obj); break;
	case STORE_KIND_SECRET:
		bmc_machine_secret_changed(s, bmc_jstr(obj, "metadata.namespace"),
					   bmc_jstr(obj, "metadata.name"));
		break;
	default: break;
	}
}

/* Jobs by creation: creationTimestamp (seconds), then name. */
static int job_order(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	const char *tx = bmc_jstr(x, "metadata.creationTimestamp");
	const char *ty = bmc_jstr(y, "metadata.creationTimestamp");
	int c = strcmp(tx ? tx : "", ty ? ty : "");
	if (c)
		return c;
	c = strcmp(bmc_jstr(x, "metadata.namespace") ?: "",
		   bmc_jstr(y, "metadata.namespace") ?: "");
	return c ? c :
		   strcmp(bmc_jstr(x, "metadata.name") ?: "", bmc_jstr(y, "metadata.name") ?: "");
}

static int list_kind(struct bmc_server *s, enum store_kind k, json_t **ret)
{
	int e = store_list(s->reader, k, NULL, NULL, ret, NULL);
	if (e < 0)
		log_error("bmc", "listing %s: %s", store_kind_info(k)->plural, strerror(-e));
	return e;
}

/* Every Machine, Job and Task again: at start and after -ETIME. */
static void load_all(struct bmc_server *s)
{
	json_t *items = NULL, *o;
	uint64_t rv = 0;
	size_t i;

	if (store_resource_version(s->reader, &rv) < 0)
		log_error("bmc", "cannot read the store's resourceVersion");
	s->rv = rv;
	bmc_machines_mark(s);
	if (list_kind(s, STORE_KIND_MACHINE, &items) == 0)
		json_array_foreach (items, i, o)
			bmc_machine_changed(s, false, o);
	json_decref(items);
	bmc_machines_sweep(s);
	bmc_jobs_free(s);
	if (list_kind(s, STORE_KIND_JOB, &items) == 0) {
		size_t n = json_array_size(items);
		const json_t **v = calloc(n ? n : 1, sizeof(*v));
		for (i = 0; v && i < n; i++)
			v[i] = json_array_get(items, i);
		if (v) {
			qsort(v, n, sizeof(*v), job_order);
			for (i = 0; i < n; i++)
				bmc_job_changed(s, false, v[i]);
		}
		free(v);
	}
	json_decref(items);
	if (list_kind(s, STORE_KIND_TASK, &items) == 0)
		json_array_foreach (items, i, o)
			bmc_task_changed(s, false, o);
	json_decref(items);
	bmc_jobs_admit(s);
}

static void sync_changes(struct bmc_server *s)
{
	s->sync_more = false;
	for (int page = 0; page < BMC_SYNC_PAGES; page++) {
		json_t *changes = NULL, *ch;
		uint64_t last = s->rv;
		size_t i;
		int e = store_changes(s->reader, s->rv, STORE_KIND_MAX, NULL, BMC_CHANGES_PAGE,
				      &changes, &last);
		if (e == -ETIME) {
			log_warn("bmc", "changes were dropped by retention before they were read: "
					"reading every Machine, Job and Task again");
			load_all(s);
			return;
		}
		if (e < 0) {
			log_error("bmc", "reading changes: %s", strerror(-e));
			return;
		}
		json_array_foreach (changes, i, ch) {
			const char *type = json_string_value(json_object_get(ch, "type"));
			dispatch(s, json_object_get(ch, "object"),
				 type && strcmp(type, "DELETED") == 0);
		}
		size_t n = json_array_size(changes);
		json_decref(changes);
		s->rv = last;
		if (n < BMC_CHANGES_PAGE)
			return;
	}
	s->sync_more = true;
}

/* ---- the loop ---- */

/* The engines first: their pending calls end (canceled) into the
 * controllers' objects, which must still be there; the controllers write
 * nothing once stopping is set. On the bmc thread, whose reader it is. */
static void teardown(struct bmc_server *s)
{
	bmc_status_flush(s);
	s->stopping = true;
	for (size_t i = 0; i < s->neng; i++)
		if (s->eng[i].e)
			s->eng[i].ops->free(s->eng[i].e, BMC_CLOSE_TIMEOUT_MS);
	bmc_tasks_free(s);
	bmc_jobs_free(s);
	bmc_machines_free(s);
	bmc_status_flush(s);
	free(s->pend);
	s->pend = NULL;
	store_reader_free(s->reader);
	s->reader = NULL;
}

static int loop_timeout(struct bmc_server *s, uint64_t now)
{
	long t = -1;
	if (s->sync_more)
		return 0;
	const struct timerheap_node *top = timerheap_top(&s->timers);
	if (top)
		t = top->at <= now ? 0 : (long)(top->at - now);
	for (size_t i = 0; i < s->neng; i++) {
		if (!s->eng[i].e)
			continue;
		int et = s->eng[i].ops->timeout_ms(s->eng[i].e, now);
		if (et >= 0 && (t < 0 || et < t))
			t = et;
	}
	return t > 60000 ? 60000 : (int)t;
}

static void *run(void *arg)
{
	struct bmc_server *s = arg;
	struct pollfd p[2 + BMC_MAX_ENGINES];

	s->reader = store_reader_new(s->store);
	if (!s->reader) {
		log_error("bmc", "cannot open a store reader: BMC control is off");
		teardown(s);
		return NULL;
	}
	load_all(s);
	for (;;) {
		uint64_t now = bmc_now_ms();
		timers_run(s, now);
		/* what the last turn's answers and this turn's timers decided */
		bmc_status_flush(s);
		nfds_t n = 0;
		p[n++] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = store_subscription_fd(s->sub), .events = POLLIN };
		for (size_t i = 0; i < s->neng; i++)
			if (s->eng[i].e)
				p[n++] = (struct pollfd){ .fd = s->eng[i].ops->fd(s->eng[i].e),
							  .events = POLLIN };
		if (poll(p, n, loop_timeout(s, bmc_now_ms())) < 0 && errno != EINTR) {
			log_error("bmc", "poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents) {
			store_subscription_ack(s->sub);
			sync_changes(s);
		} else if (s->sync_more) {
			sync_changes(s);
		}
		now = bmc_now_ms();
		for (size_t i = 0; i < s->neng; i++) {
			if (!s->eng[i].e)
				continue;
			s->eng[i].ops->process(s->eng[i].e, now);
			metric_set(s->eng[i].m_sessions,
				   (double)s->eng[i].ops->sessions(s->eng[i].e));
		}
	}
	teardown(s);
	return NULL;
}

/* ---- the server ---- */

static void engine_metrics(struct bmc_engine *E)
{
	static const double bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
					 1,     2.5,  5,     10,   30,  60 };
	char l[128];
	for (int c = 0; c < BMC_CMD_MAX; c++) {
		snprintf(l, sizeof(l), "provider=\"%s\",command=\"%s\"", E->ops->name,
			 cmd_names[c]);
		E->m_seconds[c] = metrics_histogram("ironbell_bmc_request_seconds",
						    "Round trip of a call to a BMC, session set-up "
						    "included, by provider and command.",
						    l, bounds, ARRAY_SIZE(bounds));
	}
	for (int f = 1; f < BMC_FAIL_MAX; f++) {
		snprintf(l, sizeof(l), "provider=\"%s\",reason=\"%s\"", E->ops->name,
			 bmc_fail_name((enum bmc_fail)f));
		E->m_fail[f] =
			metrics_counter("ironbell_bmc_failures_total",
					"Calls to a BMC that failed, by provider and reason.", l);
	}
	snprintf(l, sizeof(l), "provider=\"%s\"", E->ops->name);
	E->m_sessions = metrics_gauge("ironbell_bmc_sessions_open",
				      "IPMI sessions or Redfish logins open now.", l);
}

static void server_metrics(struct bmc_server *s)
{
	static const char *const outcomes[2] = { "completed", "failed" };
	char l[64];
	s->m_jobs_running = metrics_gauge("ironbell_bmc_jobs_running",
					  "Machines with a Job running now.", NULL);
	for (int i = 0; i < 2; i++) {
		snprintf(l, sizeof(l), "outcome=\"%s\"", outcomes[i]);
		s->m_tasks[i] = metrics_counter("ironbell_bmc_tasks_total",
						"BMC Tasks finished, by outcome.", l);
		s->m_jobs[i] = metrics_counter("ironbell_bmc_jobs_total",
					       "BMC Jobs finished, by outcome.", l);
	}
}

int bmc_server_new_with(struct store *store, const struct bmc_settings *settings,
			const struct bmc_engine_ops *const *ops, size_t nops,
			struct bmc_server **ret, char *err, size_t errlen)
{
	struct bmc_server *s;
	int e = 0;

	if (nops > BMC_MAX_ENGINES) {
		snprintf(err, errlen, "bmc: more than %d engines", BMC_MAX_ENGINES);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "bmc: out of memory");
		return -ENOMEM;
	}
	s->store = store;
	s->set = *settings;
	s->timers.max = BMC_MAX_HEAP;
	bmc_settings_default(&s->set);
	s->stop_fd = -1;
	s->set.ca_file = NULL; /* ours, or none */
	if (settings->ca_file && !(s->set.ca_file = strdup(settings->ca_file))) {
		e = -ENOMEM;
		snprintf(err, errlen, "bmc: out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nops; i++) {
		struct bmc_engine *E = &s->eng[s->neng++];
		E->ops = ops[i];
		int ee = E->ops->new (&s->set, &E->e, E->why, sizeof(E->why));
		if (ee < 0) {
			E->e = NULL;
			if (!E->why[0])
				snprintf(E->why, sizeof(E->why), "%s", strerror(-ee));
			log_warn("bmc", "the %s provider is unavailable: %s", E->ops->name, E->why);
		}
		engine_metrics(E);
	}
	server_metrics(s);
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->stop_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "bmc: eventfd: %s", strerror(errno));
		goto fail;
	}
	s->sub = store_subscribe(store, 1u << STORE_KIND_MACHINE | 1u << STORE_KIND_JOB |
						1u << STORE_KIND_TASK | 1u << STORE_KIND_SECRET);
	if (!s->sub) {
		e = -ENOMEM;
		snprintf(err, errlen, "bmc: cannot subscribe to the store");
		goto fail;
	}
	*ret = s;
	return 0;
fail:
	bmc_server_free(s);
	return e;
}

int bmc_server_new(struct store *store, const struct bmc_settings *settings,
		   struct bmc_server **ret, char *err, size_t errlen)
{
	static const struct bmc_engine_ops *const ops[] = { &bmc_ipmi_ops, &bmc_redfish_ops };
	return bmc_server_new_with(store, settings, ops, ARRAY_SIZE(ops), ret, err, errlen);
}

int bmc_server_start(struct bmc_server *s, char *err, size_t errlen)
{
	int e = pthread_create(&s->thread, NULL, run, s);
	if (e) {
		snprintf(err, errlen, "bmc: cannot start the thread: %s", strerror(e));
		return -e;
	}
	s->started = true;
	return 0;
}

void bmc_server_free(struct bmc_server *s)
{
	if (!s)
		return;
	if (s->started) {
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) < 0)
			log_error("bmc", "cannot stop the thread: %s", strerror(errno));
		pthread_join(s->thread, NULL);
	} else {
		teardown(s);
	}
	metric_set(s->m_jobs_running, 0);
	if (s->sub)
		store_unsubscribe(s->store, s->sub);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	timerheap_free(&s->timers);
	free((char *)s->set.ca_file);
	free(s);
}
