/* writer — opening the database, the single writer thread, group commit,
 * events and change notification.
 *
 * DESIGN: one thread owns the only read-write connection (DESIGN.md
 * "Threads"). store_write() puts a request on a queue (s->lock,
 * queue_cond) and sleeps on done_cond until the writer marks it done.
 * The writer takes everything queued, up to batch_max requests, into one
 * BEGIN IMMEDIATE ... COMMIT: a burst of writes costs one fsync (group
 * commit). Inside it each request (atomic) or each op (not atomic) runs
 * in its own SAVEPOINT, so a failure rolls back only its own part; the
 * in-memory resourceVersion and the changed-kinds mask are rolled back
 * with it. After COMMIT returns (synchronous=FULL: the WAL is fsynced, so
 * an acknowledged write survives kill -9 and power loss) the writer wakes
 * the callers, then writes to the eventfd of every subscription whose kind
 * mask meets the kinds that changed.
 *
 * Trimming of the change log (changes_retention rows; rvs are dense, one
 * per change, so rows are an rv range) and of events happens in the same
 * transaction. The highest trimmed rv is kept in meta so that readers can
 * answer -ETIME for a resume point that is gone.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store-internal.h"

#define STORE_MAX_EVENT_MESSAGE 1024
#define STORE_MAX_EVENT_FIELD 253

/* ---- transactions ---- */

static int exec(struct store *s, const char *sql)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

static int meta_set(struct store *s, const char *key, uint64_t v)
{
	sqlite3_stmt *st = s->wstmt[W_META_SET];
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)v);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
}

static void cancel_others(struct store_op *ops, size_t n, size_t failed)
{
	for (size_t j = 0; j < n; j++) {
		if (j == failed)
			continue;
		store_op_fail(&ops[j], -ECANCELED,
			      "not applied: op %zu of the same atomic write failed: %s", failed,
			      ops[failed].message);
	}
}

static void run_write(struct store *s, struct store_req *rq)
{
	uint64_t rv0 = s->rv;
	uint32_t ch0 = s->changed;

	if (rq->atomic) {
		if (exec(s, "SAVEPOINT req") < 0) {
			for (size_t i = 0; i < rq->n; i++)
				store_op_fail(&rq->ops[i], -EIO, "database error: %s",
					      sqlite3_errmsg(s->db));
			return;
		}
		size_t failed = rq->n;
		for (size_t i = 0; i < rq->n && failed == rq->n; i++)
			if (store_op_exec(s, &rq->ops[i]) < 0)
				failed = i;
		if (failed < rq->n) {
			exec(s, "ROLLBACK TO req");
			s->rv = rv0;
			s->changed = ch0;
			cancel_others(rq->ops, rq->n, failed);
		}
		exec(s, "RELEASE req");
		return;
	}
	for (size_t i = 0; i < rq->n; i++) {
		rv0 = s->rv;
		ch0 = s->changed;
		if (exec(s, "SAVEPOINT op") < 0) {
			store_op_fail(&rq->ops[i], -EIO, "database error: %s",
				      sqlite3_errmsg(s->db));
			continue;
		}
		if (store_op_exec(s, &rq->ops[i]) < 0) {
			exec(s, "ROLLBACK TO op");
			s->rv = rv0;
			s->changed = ch0;
		}
		exec(s, "RELEASE op");
	}
}

static void run_event(struct store *s, struct store_req *rq)
{
	sqlite3_stmt *st = s->wstmt[W_EVENT];
	const struct store_kind_info *ki = store_kind_info(rq->ev_kind);
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, rq->ev_time);
	sqlite3_bind_text(st, 2, ki ? ki->kind : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, rq->ev_ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, rq->ev_name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, rq->ev_type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, rq->ev_reason, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, rq->ev_message, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		log_warn("store", "event for %s/%s not stored: %s", rq->ev_ns, rq->ev_name,
			 sqlite3_errmsg(s->db));
	else
		s->changed |= 1u << STORE_KIND_MAX;
}

/* Housekeeping at the end of a transaction: persists the rv counter and
 * trims the change log and the events. */
static int finish_txn(struct store *s, uint64_t rv0, bool had_events)
{
	uint32_t keep = s->opts.changes_retention;
	if (s->rv != rv0 && meta_set(s, "rv", s->rv) < 0)
		return -EIO;
	if (s->rv > keep && s->rv - keep > s->changes_trimmed) {
		sqlite3_stmt *st = s->wstmt[W_TRIM_CHANGES];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)(s->rv - keep));
		if (sqlite3_step(st) != SQLITE_DONE)
			return -EIO;
		s->changes_trimmed = s->rv - keep;
		if (meta_set(s, "changes_trimmed", s->changes_trimmed) < 0)
			return -EIO;
	}
	if (had_events) {
		sqlite3_stmt *st = s->wstmt[W_TRIM_EVENTS];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, s->opts.events_retention);
		if (sqlite3_step(st) != SQLITE_DONE)
			return -EIO;
	}
	return 0;
}

/* Runs the requests of batch (n of them, linked) in one transaction. */
static void run_batch(struct store *s, struct store_req *batch, size_t n)
{
	uint64_t t0 = now_mono_ns();
	uint64_t rv0 = s->rv, trimmed0 = s->changes_trimmed;
	bool had_events = false;
	struct store_req *rq;
	size_t i;
	int e;

	s->changed = 0;
	e = exec(s, "BEGIN IMMEDIATE");
	for (rq = batch, i = 0; e == 0 && i < n; rq = rq->next, i++) {
		if (rq->type == STORE_REQ_WRITE)
			run_write(s, rq);
		else if (rq->type == STORE_REQ_EVENT) {
			run_event(s, rq);
			had_events = true;
		}
	}
	if (e == 0)
		e = finish_txn(s, rv0, had_events);
	if (e == 0)
		e = exec(s, "COMMIT");
	if (e < 0) {
		char msg[256];
		snprintf(msg, sizeof(msg), "database error: %s", sqlite3_errmsg(s->db));
		log_error("store", "transaction failed: %s", msg);
		exec(s, "ROLLBACK");
		s->rv = rv0;
		s->changes_trimmed = trimmed0;
		s->changed = 0;
		for (rq = batch, i = 0; i < n; rq = rq->next, i++)
			for (size_t j = 0; rq->type == STORE_REQ_WRITE && j < rq->n; j++)
				if (rq->ops[j].error == 0)
					store_op_fail(&rq->ops[j], -EIO, "%s", msg);
	}
	s->rv_committed = s->rv;
	metric_observe(s->m_write_seconds, (double)(now_mono_ns() - t0) / 1e9);
	metric_inc(s->m_transactions, 1);
	for (rq = batch, i = 0; i < n; rq = rq->next, i++)
		for (size_t j = 0; rq->type == STORE_REQ_WRITE && j < rq->n; j++)
			metric_inc(rq->ops[j].error ? s->m_writes_error : s->m_writes_ok, 1);
}

static void notify(struct store *s, uint32_t changed)
{
	if (!changed)
		return;
	pthread_mutex_lock(&s->sub_lock);
	for (struct store_subscription *sub = s->subs; sub; sub = sub->next) {
		if (!(sub->mask & changed))
			continue;
		uint64_t one = 1;
		/* EAGAIN means the counter is already non-zero: still readable. */
		if (write(sub->fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_warn("store", "subscription wakeup: %s", strerror(errno));
	}
	pthread_mutex_unlock(&s->sub_lock);
}

static void req_free_event(struct store_req *rq)
{
	free(rq->ev_ns);
	free(rq->ev_name);
	free(rq->ev_type);
	free(rq->ev_reason);
	free(rq->ev_message);
	free(rq);
}

static void *writer_main(void *arg)
{
	struct store *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (!s->queue_head && !s->stopping)
			pthread_cond_wait(&s->queue_cond, &s->lock);
		if (!s->queue_head) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		struct store_req *batch = s->queue_head, *last = batch;
		size_t n = 1;
		while (last->next && n < s->opts.batch_max) {
			last = last->next;
			n++;
		}
		s->queue_head = last->next;
		if (!s->queue_head)
			s->queue_tail = NULL;
		pthread_mutex_unlock(&s->lock);

		run_batch(s, batch, n);

		/* Once done is set the caller may free its request: read
		 * next first. Event requests belong to the writer. */
		pthread_mutex_lock(&s->lock);
		struct store_req *rq = batch;
		for (size_t i = 0; i < n; i++) {
			struct store_req *next = rq->next;
			if (rq->type == STORE_REQ_EVENT)
				req_free_event(rq);
			else
				rq->done = true;
			rq = next;
		}
		pthread_cond_broadcast(&s->done_cond);
		pthread_mutex_unlock(&s->lock);
		notify(s, s->changed);
	}
	return NULL;
}

static void enqueue(struct store *s, struct store_req *rq)
{
	rq->next = NULL;
	if (s->queue_tail)
		s->queue_tail->next = rq;
	else
		s->queue_head = rq;
	s->queue_tail = rq;
	pthread_cond_signal(&s->queue_cond);
}

/* Queues rq and waits until the writer has committed it. */
static int submit_wait(struct store *s, struct store_req *rq)
{
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		return -ESHUTDOWN;
	}
	enqueue(s, rq);
	while (!rq->done)
		pthread_cond_wait(&s->done_cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int store_write(struct store *s, struct store_op *ops, size_t n, bool atomic)
{
	struct store_req rq = { .type = STORE_REQ_WRITE, .ops = ops, .n = n, .atomic = atomic };
	if (n == 0)
		return 0;
	int e = submit_wait(s, &rq);
	if (e < 0) {
		for (size_t i = 0; i < n; i++)
			store_op_fail(&ops[i], e, "the store is closing");
		return e;
	}
	/* The cause, rather than the -ECANCELED of the ops it took along. */
	e = 0;
	for (size_t i = 0; i < n; i++) {
		if (ops[i].error && ops[i].error != -ECANCELED)
			return ops[i].error;
		if (ops[i].error)
			e = ops[i].error;
	}
	return e;
}

int store_write1(struct store *s, struct store_op *op)
{
	return store_write(s, op, 1, true);
}

void store_op_clear(struct store_op *op)
{
	if (!op)
		return;
	json_decref(op->object);
	op->object = NULL;
}

int store_sync(struct store *s)
{
	struct store_req rq = { .type = STORE_REQ_SYNC };
	return submit_wait(s, &rq);
}

static char *dup_bounded(const char *v)
{
	return strndup(v ? v : "", STORE_MAX_EVENT_FIELD);
}

int store_event(struct store *s, enum store_kind k, const char *ns, const char *name,
		const char *type, const char *reason, const char *fmt, ...)
{
	struct store_req *rq = calloc(1, sizeof(*rq));
	char msg[STORE_MAX_EVENT_MESSAGE];
	va_list ap;

	if (!rq)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rq->type = STORE_REQ_EVENT;
	rq->ev_kind = k;
	rq->ev_time = (int64_t)(now_real_ns() / 1000000000u);
	rq->ev_ns = dup_bounded(ns ? ns : "default");
	rq->ev_name = dup_bounded(name);
	rq->ev_type = dup_bounded(type ? type : "Normal");
	rq->ev_reason = dup_bounded(reason);
	rq->ev_message = strdup(msg);
	if (!rq->ev_ns || !rq->ev_name || !rq->ev_type || !rq->ev_reason || !rq->ev_message) {
		req_free_event(rq);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		req_free_event(rq);
		return -ESHUTDOWN;
	}
	enqueue(s, rq);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* ---- subscriptions ---- */

struct store_subscription *store_subscribe(struct store *s, uint32_t kind_mask)
{
	struct store_subscription *sub = calloc(1, sizeof(*sub));
	if (!sub)
		return NULL;
	sub->mask = kind_mask;
	sub->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (sub->fd < 0) {
		free(sub);
		return NULL;
	}
	pthread_mutex_lock(&s->sub_lock);
	sub->next = s->subs;
	s->subs = sub;
	pthread_mutex_unlock(&s->sub_lock);
	return sub;
}

int store_subscription_fd(const struct store_subscription *sub)
{
	return sub ? sub->fd : -EBADF;
}

void store_subscription_ack(struct store_subscription *sub)
{
	uint64_t v;
	if (sub && read(sub->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("store", "subscription ack: %s", strerror(errno));
}

void store_unsubscribe(struct store *s, struct store_subscription *sub)
{
	if (!sub)
		return;
	pthread_mutex_lock(&s->sub_lock);
	for (struct store_subscription **p = &s->subs; *p; p = &(*p)->next) {
		if (*p == sub) {
			*p = sub->next;
			break;
		}
	}
	pthread_mutex_unlock(&s->sub_lock);
	close(sub->fd);
	free(sub);
}

/* ---- open and close ---- */

static int meta_get(sqlite3 *db, const char *key, uint64_t *ret)
{
	sqlite3_stmt *st = NULL;
	int e = -EIO;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		goto out;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*ret = (uint64_t)sqlite3_column_int64(st, 0);
		e = 0;
	}
out:
	sqlite3_finalize(st);
	return e;
}

/* WAL for concurrent readers; synchronous=FULL so that COMMIT fsyncs the
 * WAL (NORMAL would lose the last commits on power loss). */
static int open_db(struct store *s, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_open_v2(s->path, &s->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
				 NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", s->path,
			 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		return -EIO;
	}
	if (store_db_tune(s->db) < 0 ||
	    sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(st, 0), "wal") != 0) {
		snprintf(err, errlen, "%s: cannot use WAL mode: %s", s->path,
			 sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return -EIO;
	}
	sqlite3_finalize(st);
	if (sqlite3_exec(s->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", s->path, sqlite3_errmsg(s->db));
		return -EIO;
	}
	int e = store_schema_migrate(s->db, err, errlen);
	if (e < 0)
		return e;
	if (store_wstmt_prepare(s) < 0 || meta_get(s->db, "rv", &s->rv) < 0 ||
	    meta_get(s->db, "changes_trimmed", &s->changes_trimmed) < 0) {
		snprintf(err, errlen, "%s: %s", s->path, sqlite3_errmsg(s->db));
		return -EIO;
	}
	s->rv_committed = s->rv;
	return 0;
}

static void register_metrics(struct store *s)
{
	s->m_write_seconds = metrics_histogram(
		"ironbell_store_write_seconds", "Time from BEGIN to COMMIT of a store transaction.",
		NULL, metrics_latency_buckets, metrics_latency_nbuckets);
	s->m_transactions = metrics_counter("ironbell_store_transactions_total",
					    "Store transactions run (group commits).", NULL);
	s->m_writes_ok = metrics_counter("ironbell_store_writes_total",
					 "Store write ops by outcome.", "result=\"ok\"");
	s->m_writes_error = metrics_counter("ironbell_store_writes_total",
					    "Store write ops by outcome.", "result=\"error\"");
}

int store_open(const char *path, const struct store_options *opts, struct store **ret, char *err,
	       size_t errlen)
{
	struct store *s = calloc(1, sizeof(*s));
	int e;

	if (!s || !(s->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto out;
	}
	s->opts.changes_retention = opts && opts->changes_retention ?
					    opts->changes_retention :
					    STORE_DEFAULT_CHANGES_RETENTION;
	s->opts.events_retention = opts && opts->events_retention ? opts->events_retention :
								    STORE_DEFAULT_EVENTS_RETENTION;
	s->opts.batch_max = opts && opts->batch_max ? opts->batch_max : STORE_DEFAULT_BATCH_MAX;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->sub_lock, NULL);
	pthread_cond_init(&s->queue_cond, NULL);
	pthread_cond_init(&s->done_cond, NULL);
	e = open_db(s, err, errlen);
	if (e < 0)
		goto out;
	register_metrics(s);
	e = -pthread_create(&s->thread, NULL, writer_main, s);
	if (e < 0) {
		snprintf(err, errlen, "cannot start the writer thread: %s", strerror(-e));
		goto out;
	}
	s->thread_started = true;
	*ret = s;
	s = NULL;
out:
	store_close(s);
	return e;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_signal(&s->queue_cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	store_wstmt_finalize(s);
	if (s->db)
		sqlite3_close(s->db);
	while (s->subs) {
		struct store_subscription *sub = s->subs;
		s->subs = sub->next;
		close(sub->fd);
		free(sub);
	}
	if (s->path) {
		pthread_mutex_destroy(&s->lock);
		pthread_mutex_destroy(&s->sub_lock);
		pthread_cond_destroy(&s->queue_cond);
		pthread_cond_destroy(&s->done_cond);
	}
	free(s->path);
	free(s);
}
