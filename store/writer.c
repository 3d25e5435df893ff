/* writer — opening the database, the single writer thread, group commit,
 * events and change notification.
 *
 * DESIGN: one thread owns the only read-write connection
 * (docs/architecture.md, "Threads"). store_write() puts a request on a queue (s->lock,
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
 * When the database itself fails (disk full, I/O error, out of memory),
 * SQLite may roll the whole transaction back, not just the statement; the
 * connection is then in autocommit mode, where each later SAVEPOINT ...
 * RELEASE would commit on its own. So the writer checks every SAVEPOINT,
 * ROLLBACK TO, RELEASE and COMMIT, and after every op asks
 * sqlite3_get_autocommit(): once the transaction is gone, the whole batch
 * is abandoned: every op of every request in it fails with -EIO ("the
 * database refused the write"), those that had succeeded too, since they
 * were rolled back; the in-memory rv, trim mark and changed mask go back
 * to what they were, then rv and the trim mark are read again from the
 * database. Nothing else changes, so once space is back the next batch
 * simply works.
 *
 * Group commit has a delay, as PostgreSQL's commit_delay and MySQL's
 * binlog_group_commit_sync_delay do: the cost of a transaction is mostly
 * its flush (fdatasync, and in a VM the exit that rings the disk), the
 * same for one request as for a hundred. When the last transaction held
 * STORE_COMMIT_DELAY_MIN requests or more, requests are arriving faster
 * than flushes complete, so the writer waits commit_delay microseconds
 * (or until batch_max are queued) before taking the next batch: under load
 * each flush carries more requests, and the CPU per request falls; under
 * light load (one request per transaction) nothing waits.
 *
 * Events (store_event) are not waited for, so nothing but a bound holds
 * their queue back when the writer stalls: at most STORE_MAX_QUEUED_EVENTS
 * of them, and STORE_MAX_QUEUED_EVENT_BYTES, wait; a new one past that is
 * dropped and counted (ironbell_store_events_dropped_total).
 *
 * Lease requests (lease.c) ride in the same batches: each runs in its own
 * savepoint; an async one belongs to the writer until it is committed,
 * then is handed to its completion queue after the lock is dropped.
 *
 * WAL checkpoints run on a thread of their own (checkpoint.c), so no
 * commit pays for copying the WAL into the database.
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
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "common/utf8.h"
#include "store/store-internal.h"

#define STORE_MAX_EVENT_FIELD 253

/* ---- transactions ---- */

/* Why a batch is abandoned: the first cause, kept before later calls
 * overwrite sqlite3_errmsg(). */
struct abort_reason {
	char why[256];
};

static int exec(struct store *s, const char *sql)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Runs one of the prepared savepoint statements (SAVEPOINT, ROLLBACK TO,
 * RELEASE): the same as exec() without parsing the SQL each op. */
static int exec_w(struct store *s, enum store_wstmt w)
{
	sqlite3_stmt *st = s->wstmt[w];
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Whether the batch's transaction is gone. SQLite may roll a whole
 * transaction back by itself when a statement fails with SQLITE_FULL,
 * SQLITE_IOERR, SQLITE_NOMEM or SQLITE_BUSY ("Response To Errors Within A
 * Transaction" in its documentation); the connection is then back in
 * autocommit mode, where every later statement, SAVEPOINT and RELEASE
 * would commit on its own. */
static bool txn_lost(struct store *s)
{
	return sqlite3_get_autocommit(s->db) != 0;
}

/* Records why the batch is abandoned (the first cause wins) and returns
 * -EIO. Call it right after the failing call, before any other. */
static int abandon(struct store *s, struct abort_reason *ar)
{
	if (!ar->why[0])
		snprintf(ar->why, sizeof(ar->why), "%s",
			 sqlite3_errcode(s->db) != SQLITE_OK ? sqlite3_errmsg(s->db) :
							       "the transaction was rolled back");
	return -EIO;
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
			      store_op_message(&ops[failed]));
	}
}

/* Runs ops [from, to) of rq in one savepoint named sp, stopping at the
 * first failure when all_or_none. A failed op is rolled back (with the
 * in-memory rv and changed mask) and, when all_or_none, the ops before it
 * too. Returns 0, or -EIO when the whole batch must be abandoned: the
 * transaction is gone, or a ROLLBACK TO or RELEASE failed and what the
 * savepoint holds is unknown. */
static int run_savepoint(struct store *s, struct store_req *rq, size_t from, size_t to,
			 bool all_or_none, struct abort_reason *ar)
{
	uint64_t rv0 = s->rv;
	uint32_t ch0 = s->changed;
	size_t failed = to;

	if (exec_w(s, all_or_none ? W_SAVEPOINT_REQ : W_SAVEPOINT_OP) < 0) {
		if (txn_lost(s))
			return abandon(s, ar);
		/* Nothing written: only these ops fail. */
		for (size_t i = from; i < to; i++)
			store_op_fail(&rq->ops[i], -EIO, "database error: %s",
				      sqlite3_errmsg(s->db));
		return 0;
	}
	for (size_t i = from; i < to && failed == to; i++) {
		int e = store_op_exec(s, &rq->ops[i]);
		if (txn_lost(s))
			return abandon(s, ar);
		if (e < 0)
			failed = i;
	}
	if (failed < to) {
		if (exec_w(s, all_or_none ? W_ROLLBACK_REQ : W_ROLLBACK_OP) < 0)
			return abandon(s, ar);
		s->rv = rv0;
		s->changed = ch0;
		if (all_or_none)
			cancel_others(rq->ops + from, to - from, failed - from);
	}
	if (exec_w(s, all_or_none ? W_RELEASE_REQ : W_RELEASE_OP) < 0)
		return abandon(s, ar);
	return 0;
}

/* Runs a write request: atomic, in one savepoint; else each op in its
 * own. 0, or -EIO when the batch must be abandoned. */
static int run_write(struct store *s, struct store_req *rq, struct abort_reason *ar)
{
	if (rq->atomic)
		return run_savepoint(s, rq, 0, rq->n, true, ar);
	for (size_t i = 0; i < rq->n; i++) {
		int e = run_savepoint(s, rq, i, i + 1, false, ar);
		if (e < 0)
			return e;
	}
	return 0;
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
 * trims the change log and the events. 0, or -EIO with ar filled. */
static int finish_txn(struct store *s, uint64_t rv0, bool had_events, struct abort_reason *ar)
{
	uint32_t keep = s->opts.changes_retention;
	if (s->rv != rv0 && meta_set(s, "rv", s->rv) < 0)
		return abandon(s, ar);
	if (s->rv > keep && s->rv - keep > s->changes_trimmed) {
		sqlite3_stmt *st = s->wstmt[W_TRIM_CHANGES];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)(s->rv - keep));
		if (sqlite3_step(st) != SQLITE_DONE)
			return abandon(s, ar);
		s->changes_trimmed = s->rv - keep;
		if (meta_set(s, "changes_trimmed", s->changes_trimmed) < 0)
			return abandon(s, ar);
	}
	if (had_events) {
		sqlite3_stmt *st = s->wstmt[W_TRIM_EVENTS];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, s->opts.events_retention);
		if (sqlite3_step(st) != SQLITE_DONE)
			return abandon(s, ar);
	}
	return 0;
}

/* The counters as the database has them: rv is the larger of meta's and
 * the newest change-log row's, so a meta row that fell behind (a bug, a
 * hand edit) cannot make every later write collide on changes.rv. */
static int read_counters(sqlite3 *db, uint64_t *ret_rv, uint64_t *ret_trimmed)
{
	sqlite3_stmt *st = NULL;
	int e = -EIO;
	if (sqlite3_prepare_v2(db,
			       "SELECT (SELECT value FROM meta WHERE key = 'rv'), "
			       "(SELECT value FROM meta WHERE key = 'changes_trimmed'), "
			       "(SELECT max(rv) FROM changes)",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL ||
	    sqlite3_column_type(st, 1) == SQLITE_NULL)
		goto out;
	uint64_t rv = (uint64_t)sqlite3_column_int64(st, 0);
	uint64_t newest = (uint64_t)sqlite3_column_int64(st, 2);
	if (newest > rv) {
		log_warn("store",
			 "meta rv %" PRIu64 " is behind the change log (%" PRIu64
			 "): going on from %" PRIu64,
			 rv, newest, newest);
		rv = newest;
	}
	*ret_rv = rv;
	*ret_trimmed = (uint64_t)sqlite3_column_int64(st, 1);
	e = 0;
out:
	sqlite3_finalize(st);
	return e;
}

/* After a failed transaction: every op of every write request in the
 * batch fails, those that had succeeded too (they were rolled back), and
 * the in-memory counters go back to what the database holds. */
static void abort_batch(struct store *s, struct store_req *batch, size_t n, uint64_t rv0,
			uint64_t trimmed0, const struct abort_reason *ar)
{
	struct store_req *rq;
	size_t i, events = 0;

	for (rq = batch, i = 0; i < n; rq = rq->next, i++)
		events += rq->type == STORE_REQ_EVENT;
	log_error("store", "a batch of %zu requests (%zu events) was rolled back: %s", n, events,
		  ar->why);
	if (!txn_lost(s) && exec(s, "ROLLBACK") < 0)
		log_error("store", "ROLLBACK: %s", sqlite3_errmsg(s->db));
	for (i = 0; i < W_STMT_MAX; i++)
		sqlite3_reset(s->wstmt[i]);
	s->rv = rv0;
	s->changes_trimmed = trimmed0;
	s->changed = 0;
	/* the trees of the writes rolled back would never match (objcache.c);
	 * a batch lost is rare enough to start afresh */
	store_objcache_clear(s);
	/* Backstop: the database is the truth. */
	uint64_t rv, trimmed;
	if (txn_lost(s) && read_counters(s->db, &rv, &trimmed) == 0) {
		if (rv != rv0)
			log_warn("store", "rv %" PRIu64 " after the rollback, not %" PRIu64, rv,
				 rv0);
		s->rv = rv;
		s->changes_trimmed = trimmed;
	}
	for (rq = batch, i = 0; i < n; rq = rq->next, i++) {
		for (size_t j = 0; rq->type == STORE_REQ_WRITE && j < rq->n; j++)
			store_op_fail(&rq->ops[j], -EIO, "the database refused the write: %s",
				      ar->why);
		if (rq->type == STORE_REQ_EXEC)
			rq->exec_result = -EIO;
		if (rq->type == STORE_REQ_LEASE || rq->type == STORE_REQ_LEASE_EXPIRE)
			store_lease_fail(rq, -EIO, ar->why);
	}
}

/* Runs the requests of batch (n of them, linked) in one transaction. */
static void run_batch(struct store *s, struct store_req *batch, size_t n)
{
	uint64_t t0 = now_mono_ns();
	uint64_t rv0 = s->rv, trimmed0 = s->changes_trimmed;
	struct abort_reason ar = { .why = "" };
	bool had_events = false;
	struct store_req *rq;
	size_t i;
	int e = 0;

	s->changed = 0;
	/* A transaction that a failed ROLLBACK left open must not absorb
	 * this batch. */
	if (!txn_lost(s) && exec(s, "ROLLBACK") < 0)
		e = abandon(s, &ar);
	if (e == 0 && exec(s, "BEGIN IMMEDIATE") < 0)
		e = abandon(s, &ar);
	for (rq = batch, i = 0; e == 0 && i < n; rq = rq->next, i++) {
		if (rq->type == STORE_REQ_WRITE) {
			e = run_write(s, rq, &ar);
		} else if (rq->type == STORE_REQ_EVENT) {
			run_event(s, rq);
			had_events = true;
		} else if (rq->type == STORE_REQ_EXEC) {
			rq->exec_result = exec(s, rq->sql);
		} else if (rq->type == STORE_REQ_LEASE || rq->type == STORE_REQ_LEASE_EXPIRE) {
			if (store_lease_exec(s, rq) < 0)
				e = abandon(s, &ar);
		}
		if (e == 0 && txn_lost(s))
			e = abandon(s, &ar);
	}
	if (e == 0)
		e = finish_txn(s, rv0, had_events, &ar);
	if (e == 0 && exec(s, "COMMIT") < 0)
		e = abandon(s, &ar);
	if (e < 0)
		abort_batch(s, batch, n, rv0, trimmed0, &ar);
	s->rv_committed = s->rv;
	/* Before the callers are woken: a write that returned is visible to
	 * anyone comparing store_kind_committed_rv() with what it follows. */
	for (unsigned k = 0; s->rv != rv0 && k < STORE_KIND_MAX; k++)
		if (s->changed & (1u << k))
			__atomic_store_n(&s->kind_rv[k], s->rv, __ATOMIC_RELEASE);
	metric_observe(s->m_write_seconds, (double)(now_mono_ns() - t0) / 1e9);
	metric_inc(s->m_transactions, 1);
	for (rq = batch, i = 0; i < n; rq = rq->next, i++) {
		for (size_t j = 0; rq->type == STORE_REQ_WRITE && j < rq->n; j++)
			metric_inc(rq->ops[j].error ? s->m_writes_error : s->m_writes_ok, 1);
		if (rq->type == STORE_REQ_LEASE)
			metric_inc(rq->lease_error ? s->m_writes_error : s->m_writes_ok, 1);
	}
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

/* The commit delay: with s->lock held, waits until commit_delay has
 * passed, batch_max requests are queued, or the store stops. Enqueuers do
 * not wake the writer meanwhile (it is not idle), except to fill a batch. */
static void gather(struct store *s)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += (long)s->opts.commit_delay * 1000;
	until.tv_sec += until.tv_nsec / 1000000000;
	until.tv_nsec %= 1000000000;
	while (s->queued < s->opts.batch_max && !s->stopping)
		if (pthread_cond_timedwait(&s->queue_cond, &s->lock, &until) == ETIMEDOUT)
			break;
}

/* With s->lock held: rq leaves the queue for the writer's batch. */
static void dequeued(struct store *s, const struct store_req *rq)
{
	if (rq->type != STORE_REQ_EVENT)
		return;
	s->queued_events--;
	s->queued_event_bytes -= rq->ev_bytes;
}

/* A write's outcome: the first error, the cause rather than the
 * -ECANCELED of the ops it took along; the index of its op in *ret_i
 * (n when none failed). */
static int write_error(const struct store_op *ops, size_t n, size_t *ret_i)
{
	size_t at = n;
	for (size_t i = 0; i < n; i++) {
		if (ops[i].error && ops[i].error != -ECANCELED) {
			*ret_i = i;
			return ops[i].error;
		}
		if (ops[i].error && at == n)
			at = i;
	}
	*ret_i = at;
	return at < n ? ops[at].error : 0;
}

/* Writer thread, after the commit: an async write's outcome goes where
 * the completion queue reads a lease's, its ops' error and message. */
static void write_outcome(struct store_req *rq)
{
	size_t at;
	rq->lease_error = write_error(rq->ops, rq->n, &at);
	rq->lease_message[0] = '\0';
	if (at < rq->n)
		snprintf(rq->lease_message, sizeof(rq->lease_message), "%s",
			 store_op_message(&rq->ops[at]));
}

static void *writer_main(void *arg)
{
	struct store *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		s->writer_idle = true;
		while (!s->queue_head && !s->stopping)
			pthread_cond_wait(&s->queue_cond, &s->lock);
		s->writer_idle = false;
		if (!s->queue_head) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		if (s->opts.commit_delay && s->last_batch >= STORE_COMMIT_DELAY_MIN)
			gather(s);
		struct store_req *batch = s->queue_head, *last = batch;
		size_t n = 1;
		dequeued(s, batch);
		while (last->next && n < s->opts.batch_max) {
			last = last->next;
			dequeued(s, last);
			n++;
		}
		s->queue_head = last->next;
		if (!s->queue_head)
			s->queue_tail = NULL;
		s->queued -= n;
		s->last_batch = n;
		pthread_mutex_unlock(&s->lock);

		store_ckpt_finish(s);
		run_batch(s, batch, n);

		/* Once done is set the caller may free its request: read
		 * next first. Event requests belong to the writer; async
		 * lease requests too, until handed to their queue below. */
		struct store_req *async = NULL, **async_tail = &async;
		pthread_mutex_lock(&s->lock);
		s->transactions++;
		struct store_req *rq = batch;
		for (size_t i = 0; i < n; i++) {
			struct store_req *next = rq->next;
			if (rq->type == STORE_REQ_EVENT) {
				req_free_event(rq);
			} else if (rq->cq) {
				/* async: a lease, an expiry, a write; completed
				 * in queue order */
				if (rq->type == STORE_REQ_WRITE)
					write_outcome(rq);
				rq->next = NULL;
				*async_tail = rq;
				async_tail = &rq->next;
			} else {
				rq->done = true;
			}
			rq = next;
		}
		pthread_cond_broadcast(&s->done_cond);
		pthread_mutex_unlock(&s->lock);
		store_lease_complete(async);
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
	s->queued++;
	/* The writer gathering a batch is woken only once it is full. */
	if (s->writer_idle || s->queued >= s->opts.batch_max)
		pthread_cond_signal(&s->queue_cond);
}

uint64_t store_test_transactions(struct store *s)
{
	pthread_mutex_lock(&s->lock);
	uint64_t n = s->transactions;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Queues rq, which the writer then owns, without waiting (lease.c).
 * 0 or -ESHUTDOWN (rq is the caller's again). */
int store_submit_async(struct store *s, struct store_req *rq)
{
	if (s->readonly)
		return -EROFS;
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		return -ESHUTDOWN;
	}
	enqueue(s, rq);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Queues rq and waits until the writer has committed it. */
int store_submit_wait(struct store *s, struct store_req *rq)
{
	if (s->readonly)
		return -EROFS;
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
	size_t at;
	if (n == 0)
		return 0;
	int e = store_submit_wait(s, &rq);
	if (e < 0) {
		for (size_t i = 0; i < n; i++)
			store_op_fail(&ops[i], e,
				      e == -EROFS ? "the store is open read-only" :
						    "the store is closing");
		return e;
	}
	return write_error(ops, n, &at);
}

int store_write_async(struct store *s, struct store_op *ops, size_t n, bool atomic,
		      struct store_completion *c, uint64_t tag)
{
	struct store_req *rq;
	if (n == 0)
		return -EINVAL;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	rq->type = STORE_REQ_WRITE;
	rq->ops = ops;
	rq->n = n;
	rq->atomic = atomic;
	return store_submit_completed(s, rq, c, tag);
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
	free(op->message);
	op->message = NULL;
}

const char *store_op_message(const struct store_op *op)
{
	return op->message ? op->message : "";
}

int store_sync(struct store *s)
{
	struct store_req rq = { .type = STORE_REQ_SYNC };
	if (s->readonly)
		return 0; /* nothing is ever queued */
	return store_submit_wait(s, &rq);
}

int store_test_exec_writer(struct store *s, const char *sql)
{
	struct store_req rq = { .type = STORE_REQ_EXEC, .sql = sql };
	int e = store_submit_wait(s, &rq);
	return e < 0 ? e : rq.exec_result;
}

/* v (NULL: "") as valid UTF-8 of at most max bytes: an ill-formed
 * sequence becomes U+FFFD; a longer text is cut between characters and
 * ends with "..." (*ret_cut, may be NULL). NULL when memory runs out. */
static char *dup_text(const char *v, size_t n, size_t max, bool *ret_cut)
{
	size_t len = v ? utf8_sanitized_len(v, n, 0) : 0;
	char *t = malloc((len < max ? len : max) + 1);
	if (t)
		utf8_sanitize(v, v ? n : 0, t, len < max ? len : max, 0, ret_cut);
	return t;
}

static char *dup_bounded(const char *v)
{
	return dup_text(v, v ? strnlen(v, STORE_MAX_EVENT_FIELD + 1) : 0, STORE_MAX_EVENT_FIELD,
			NULL);
}

/* The message fmt and ap make, as valid UTF-8 of at most
 * STORE_MAX_EVENT_MESSAGE bytes: a longer one is cut between characters
 * and ends with "..." (*ret_cut). NULL when memory runs out. */
static char *event_message(const char *fmt, va_list ap, bool *ret_cut)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		n = 0;
	/* Repairing never shortens a text, so the first MAX + 1 bytes tell
	 * whether it is cut, and hold all that is kept. */
	size_t len = (size_t)n > STORE_MAX_EVENT_MESSAGE ? STORE_MAX_EVENT_MESSAGE + 1 : (size_t)n;
	char *raw = malloc(len + 1), *m;
	if (!raw)
		return NULL;
	vsnprintf(raw, len + 1, fmt, ap);
	*ret_cut = false;
	if (len <= STORE_MAX_EVENT_MESSAGE && utf8_valid(raw, len))
		return raw;
	m = dup_text(raw, len, STORE_MAX_EVENT_MESSAGE, ret_cut);
	free(raw);
	return m;
}

int store_event(struct store *s, enum store_kind k, const char *ns, const char *name,
		const char *type, const char *reason, const char *fmt, ...)
{
	struct store_req *rq;
	bool cut = false;
	va_list ap;

	if (s->readonly)
		return -EROFS;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	va_start(ap, fmt);
	rq->ev_message = event_message(fmt, ap, &cut);
	va_end(ap);
	rq->type = STORE_REQ_EVENT;
	rq->ev_kind = k;
	rq->ev_time = (int64_t)(now_real_ns() / 1000000000u);
	rq->ev_ns = dup_bounded(ns ? ns : "default");
	rq->ev_name = dup_bounded(name);
	rq->ev_type = dup_bounded(type ? type : "Normal");
	rq->ev_reason = dup_bounded(reason);
	if (!rq->ev_ns || !rq->ev_name || !rq->ev_type || !rq->ev_reason || !rq->ev_message) {
		req_free_event(rq);
		return -ENOMEM;
	}
	rq->ev_bytes = sizeof(*rq) + strlen(rq->ev_message);
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		req_free_event(rq);
		return -ESHUTDOWN;
	}
	if (s->queued_events >= STORE_MAX_QUEUED_EVENTS ||
	    s->queued_event_bytes + rq->ev_bytes > STORE_MAX_QUEUED_EVENT_BYTES) {
		pthread_mutex_unlock(&s->lock);
		req_free_event(rq);
		metric_inc(s->m_events_dropped, 1);
		return -ENOBUFS;
	}
	s->queued_events++;
	s->queued_event_bytes += rq->ev_bytes;
	enqueue(s, rq);
	pthread_mutex_unlock(&s->lock);
	return cut ? 1 : 0;
}

uint64_t store_kind_committed_rv(struct store *s, enum store_kind k)
{
	if (s->readonly || (unsigned)k >= STORE_KIND_MAX)
		return 0;
	return __atomic_load_n(&s->kind_rv[k], __ATOMIC_ACQUIRE);
}

/* ---- subscriptions ---- */

struct store_subscription *store_subscribe(struct store *s, uint32_t kind_mask)
{
	struct store_subscription *sub;
	if (s->readonly) {
		/* no writer of ours to wake it: the reader polls */
		errno = EROFS;
		return NULL;
	}
	sub = calloc(1, sizeof(*sub));
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

/* WAL for concurrent readers; synchronous=FULL so that COMMIT fsyncs the
 * WAL (NORMAL would lose the last commits on power loss); the WAL written
 * one commit at a time (walbuf.c). */
static int open_db(struct store *s, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	const char *vfs = NULL;
	if (store_walbuf_register() == 0)
		vfs = STORE_WALBUF_VFS;
	else
		log_warn("store", "%s: the WAL's writes go out one by one (cannot register the "
				  "gathering VFS)",
			 s->path);
	int rc = sqlite3_open_v2(s->path, &s->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
				 vfs);
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
	if (store_wstmt_prepare(s) < 0 || read_counters(s->db, &s->rv, &s->changes_trimmed) < 0) {
		snprintf(err, errlen, "%s: %s", s->path, sqlite3_errmsg(s->db));
		return -EIO;
	}
	s->rv_committed = s->rv;
	for (unsigned k = 0; k < STORE_KIND_MAX; k++)
		s->kind_rv[k] = s->rv;
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
	s->m_events_dropped = metrics_counter(
		"ironbell_store_events_dropped_total",
		"Events not kept because the store's queue of them was full.", NULL);
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
	s->opts.commit_delay = opts && opts->no_commit_delay ? 0 :
			       opts && opts->commit_delay ? opts->commit_delay :
							    STORE_DEFAULT_COMMIT_DELAY;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->sub_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->queue_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&s->done_cond, NULL);
	e = store_objcache_new(s, (size_t)(opts && opts->object_cache_kib ?
						   opts->object_cache_kib :
						   STORE_DEFAULT_OBJECT_CACHE_KIB) *
					      1024u);
	if (e < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	e = open_db(s, err, errlen);
	if (e < 0)
		goto out;
	register_metrics(s);
	s->ckpt_not_idle = opts && opts->checkpoint_not_idle;
	s->ckpt_every = STORE_CHECKPOINT_PAGES;
	if (opts && opts->checkpoint_pages && opts->checkpoint_pages <= STORE_WAL_MAX_PAGES)
		s->ckpt_every = (int)opts->checkpoint_pages;
	e = store_ckpt_start(s, err, errlen);
	if (e < 0)
		goto out;
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
	/* Before the writer's connection closes: that last close checkpoints
	 * what is left and removes the WAL. */
	store_ckpt_stop(s);
	store_wstmt_finalize(s);
	for (size_t i = 0; i < ARRAY_SIZE(s->lstmt); i++)
		sqlite3_finalize(s->lstmt[i]);
	if (s->db)
		sqlite3_close(s->db);
	store_objcache_free(s);
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
