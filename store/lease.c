/* lease — the DHCP leases table: writes through the writer's group
 * commit, completion queues for callers that must not block, and reads.
 *
 * DESIGN: a lease write is a store_req of type STORE_REQ_LEASE carried by
 * the same queue and the same BEGIN ... COMMIT as object writes, so a
 * burst of DHCP ACKs costs one fsync. The DHCP thread does not wait: it
 * queues with store_lease_put_async() and parks the ACK; the writer, after
 * the COMMIT (synchronous=FULL: on disk), links the request into the
 * caller's completion queue under the queue's mutex and writes the
 * queue's eventfd; the DHCP thread, woken in epoll, drains the results
 * and sends the ACKs whose lease is durable. The request itself carries
 * the result, so completing costs no allocation; it is freed when
 * drained. A request counts as in flight from the put to the drain, and a
 * queue refuses more than its max (-EAGAIN): memory is bounded even when
 * the caller is slow to drain.
 *
 * Lock order: the writer never holds store.lock while it takes a queue's
 * lock, and store_lease_put_async() never holds both.
 *
 * Each lease runs in its own savepoint, so one that fails (an IP bound to
 * another MAC) fails alone. Leases bump no resourceVersion and write no
 * change-log row.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store-internal.h"

enum {
	L_OWNER,
	L_PUT,
	L_EXPIRE,
	L_TAKE,
	L_CURRENT,
	L_RENEW,
	L_SAVEPOINT,
	L_RELEASE,
	L_ROLLBACK,
	L_CHUNK_END,
	L_EXPIRE_CHUNK,
};

static const char *const lstmt_sql[STORE_LEASE_WSTMT_MAX] = {
	[L_OWNER] = "SELECT mac FROM leases WHERE ip = ?1 AND state = 'bound' AND mac <> ?2 "
		    "LIMIT 1",
	[L_PUT] = "INSERT INTO leases (mac, ip, namespace, name, state, starts, expires, updated) "
		  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (mac) DO UPDATE SET "
		  "ip = excluded.ip, namespace = excluded.namespace, name = excluded.name, "
		  "state = excluded.state, starts = excluded.starts, expires = excluded.expires, "
		  "updated = excluded.updated",
	[L_EXPIRE] = "DELETE FROM leases WHERE expires < ?1",
	[L_TAKE] = "UPDATE leases SET state = 'released', updated = ?3 WHERE ip = ?1 AND "
		   "state = 'bound' AND mac <> ?2",
	[L_CURRENT] = "SELECT ip, namespace, name, state FROM leases WHERE mac = ?1",
	/* No indexed column in SET: SQLite then leaves the IP index alone,
	 * and only the row's own page changes. */
	[L_RENEW] = "UPDATE leases SET state = ?2, starts = ?3, expires = ?4, updated = ?5 "
		    "WHERE mac = ?1",
	[L_SAVEPOINT] = "SAVEPOINT lease",
	[L_RELEASE] = "RELEASE lease",
	[L_ROLLBACK] = "ROLLBACK TO lease",
	/* The incremental sweep: the last MAC of the next chunk after ?1
	 * (none: the chunk reaches the end), then the expired leases in
	 * (?1, ?2]: both bounds on the primary key, so that SQLite walks the
	 * chunk only (an OR in the bound would make it scan to the end). */
	[L_CHUNK_END] = "SELECT mac FROM leases WHERE mac > ?1 ORDER BY mac LIMIT 1 OFFSET ?2",
	[L_EXPIRE_CHUNK] = "DELETE FROM leases WHERE mac > ?1 AND mac <= ?2 AND expires < ?3",
};

enum {
	LR_BY_MAC,
	LR_BY_IP,
	LR_LIST,
};

#define LEASE_COLUMNS "mac, ip, namespace, name, state, starts, expires"

static const char *const lrstmt_sql[] = {
	[LR_BY_MAC] = "SELECT " LEASE_COLUMNS " FROM leases WHERE mac = ?1",
	[LR_BY_IP] = "SELECT " LEASE_COLUMNS " FROM leases WHERE ip = ?1 "
		     "ORDER BY state = 'bound' DESC, updated DESC LIMIT 1",
	[LR_LIST] = "SELECT " LEASE_COLUMNS " FROM leases ORDER BY ip, mac",
};

static const char *const state_names[] = {
	[STORE_LEASE_BOUND] = "bound",
	[STORE_LEASE_RELEASED] = "released",
	[STORE_LEASE_DECLINED] = "declined",
};

struct store_completion {
	pthread_mutex_t lock; /* guards everything below but fd and max */
	int fd;
	unsigned max;
	unsigned inflight;             /* queued or finished, not drained */
	struct store_req *head, *tail; /* finished, oldest first */
};

const char *store_lease_state_name(enum store_lease_state st)
{
	return (unsigned)st < ARRAY_SIZE(state_names) ? state_names[st] : NULL;
}

int store_lease_state_parse(const char *s, enum store_lease_state *ret)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(state_names); i++) {
		if (strcmp(s, state_names[i]) == 0) {
			*ret = (enum store_lease_state)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- completion queues ---- */

struct store_completion *store_completion_new(unsigned max)
{
	struct store_completion *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->fd < 0) {
		free(c);
		return NULL;
	}
	c->max = max ? max : STORE_COMPLETION_DEFAULT_MAX;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

int store_completion_fd(const struct store_completion *c)
{
	return c ? c->fd : -EBADF;
}

unsigned store_completion_inflight(struct store_completion *c)
{
	pthread_mutex_lock(&c->lock);
	unsigned n = c->inflight;
	pthread_mutex_unlock(&c->lock);
	return n;
}

size_t store_completion_drain(struct store_completion *c, struct store_done *out, size_t max)
{
	struct store_req *taken = NULL, **tail = &taken;
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	while (c->head && n < max) {
		struct store_req *rq = c->head;
		c->head = rq->next;
		rq->next = NULL;
		*tail = rq;
		tail = &rq->next;
		n++;
	}
	if (!c->head) {
		c->tail = NULL;
		/* Emptied: clear the eventfd. The writer writes it under the
		 * lock, so no wakeup is lost. */
		uint64_t v;
		if (read(c->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			log_warn("store", "completion queue: %s", strerror(errno));
	}
	c->inflight -= (unsigned)n;
	pthread_mutex_unlock(&c->lock);

	for (size_t i = 0; taken; i++) {
		struct store_req *next = taken->next;
		out[i].tag = taken->tag;
		out[i].error = taken->lease_error;
		out[i].count = taken->count;
		snprintf(out[i].message, sizeof(out[i].message), "%s", taken->lease_message);
		free(taken);
		taken = next;
	}
	return n;
}

int store_completion_free(struct store_completion *c)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	unsigned finished = 0;
	for (struct store_req *rq = c->head; rq; rq = rq->next)
		finished++;
	/* Finished but undrained results are freed with the queue; queued
	 * ones would be completed into freed memory. */
	bool busy = c->inflight > finished;
	pthread_mutex_unlock(&c->lock);
	if (busy)
		return -EBUSY;
	while (c->head) {
		struct store_req *rq = c->head;
		c->head = rq->next;
		free(rq);
	}
	close(c->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

void store_lease_complete(struct store_req *list)
{
	while (list) {
		struct store_completion *c = list->cq;
		struct store_req **p = &list, *rest = NULL, **rest_tail = &rest;
		uint64_t one = 1;

		/* Every request of this queue goes in under one lock, and the
		 * queue's eventfd is written once for them all: its owner
		 * wakes once per transaction, not once per lease. */
		pthread_mutex_lock(&c->lock);
		while (*p) {
			struct store_req *rq = *p;
			*p = rq->next;
			rq->next = NULL;
			if (rq->cq != c) {
				*rest_tail = rq;
				rest_tail = &rq->next;
				continue;
			}
			if (c->tail)
				c->tail->next = rq;
			else
				c->head = rq;
			c->tail = rq;
		}
		/* EAGAIN: the counter is already non-zero, still readable. */
		if (write(c->fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_warn("store", "completion wakeup: %s", strerror(errno));
		pthread_mutex_unlock(&c->lock);
		list = rest;
	}
}

/* ---- writes ---- */

static void lease_fail(struct store_req *rq, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void lease_fail(struct store_req *rq, int error, const char *fmt, ...)
{
	va_list ap;
	rq->lease_error = error;
	va_start(ap, fmt);
	vsnprintf(rq->lease_message, sizeof(rq->lease_message), fmt, ap);
	va_end(ap);
}

/* The database failed a statement of rq's lease. */
static void lease_fail_io(struct store *s, struct store_req *rq)
{
	lease_fail(rq, -EIO, "lease of %s: database error: %s", rq->lease.mac,
		   sqlite3_errmsg(s->db));
}

void store_lease_fail(struct store_req *rq, int error, const char *why)
{
	rq->count = 0;
	lease_fail(rq, error, "the database refused the write: %s", why);
}

static sqlite3_stmt *lstmt(struct store *s, int i)
{
	if (!s->lstmt[i]) {
		if (sqlite3_prepare_v3(s->db, lstmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->lstmt[i], NULL) != SQLITE_OK)
			return NULL;
		return s->lstmt[i];
	}
	sqlite3_reset(s->lstmt[i]);
	sqlite3_clear_bindings(s->lstmt[i]);
	return s->lstmt[i];
}

/* Steps a statement that returns no row, and resets it. */
static bool step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE;
}

/* Runs statement i, which takes no parameter and returns no row. */
static bool lexec(struct store *s, int i)
{
	sqlite3_stmt *st = lstmt(s, i);
	return st && step_done(st);
}

/* The lease of the same MAC is already this one but for its state and
 * times (a renewal, the common case): *ret_bound tells whether it is
 * bound. 1 yes, 0 no (or no row), -1 database error. */
static int lease_same(struct store *s, const struct store_lease *l, bool *ret_bound)
{
	sqlite3_stmt *st = lstmt(s, L_CURRENT);
	int rc, same = 0;

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, l->mac, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *ip = (const char *)sqlite3_column_text(st, 0);
		const char *ns = (const char *)sqlite3_column_text(st, 1);
		const char *name = (const char *)sqlite3_column_text(st, 2);
		const char *state = (const char *)sqlite3_column_text(st, 3);
		same = ip && ns && name && strcmp(ip, l->ip) == 0 && strcmp(ns, l->ns) == 0 &&
		       strcmp(name, l->name) == 0;
		*ret_bound = state && strcmp(state, "bound") == 0;
	} else if (rc != SQLITE_DONE) {
		same = -1;
	}
	sqlite3_reset(st);
	return same;
}

/* The lease write proper, inside the savepoint. 0 or a negative errno
 * with the message set. */
static int lease_put(struct store *s, struct store_req *rq)
{
	const struct store_lease *l = &rq->lease;
	sqlite3_stmt *st;
	bool bound = false;
	int rc, same = lease_same(s, l, &bound);
	sqlite3_int64 now = (sqlite3_int64)(now_real_ns() / 1000000000u);

	if (same < 0)
		goto fail;
	if (same && bound && l->state == STORE_LEASE_BOUND) {
		/* A renewal of a lease that holds the IP bound: no other MAC
		 * can hold it (the checks below kept it so), and nothing but
		 * the row's times change. */
		if (!(st = lstmt(s, L_RENEW)))
			goto fail;
		sqlite3_bind_text(st, 1, l->mac, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, store_lease_state_name(l->state), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, l->starts);
		sqlite3_bind_int64(st, 4, l->expires);
		sqlite3_bind_int64(st, 5, now);
		if (step_done(st))
			return 0;
		goto fail;
	}
	if (l->state == STORE_LEASE_BOUND && l->take_ip) {
		if (!(st = lstmt(s, L_TAKE)))
			goto fail;
		sqlite3_bind_text(st, 1, l->ip, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, l->mac, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, now);
		if (!step_done(st))
			goto fail;
		rq->count = (uint64_t)sqlite3_changes(s->db);
	} else if (l->state == STORE_LEASE_BOUND) {
		if (!(st = lstmt(s, L_OWNER)))
			goto fail;
		sqlite3_bind_text(st, 1, l->ip, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, l->mac, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			lease_fail(rq, -EADDRINUSE,
				   "lease of %s: IP %s is bound to another MAC, %s", l->mac, l->ip,
				   (const char *)sqlite3_column_text(st, 0));
			sqlite3_reset(st);
			return rq->lease_error;
		}
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			goto fail;
	}
	if (!(st = lstmt(s, L_PUT)))
		goto fail;
	sqlite3_bind_text(st, 1, l->mac, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, l->ip, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, l->ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, l->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, store_lease_state_name(l->state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, l->starts);
	sqlite3_bind_int64(st, 7, l->expires);
	sqlite3_bind_int64(st, 8, now);
	if (step_done(st))
		return 0;
fail:
	lease_fail_io(s, rq);
	return rq->lease_error;
}

/* The next STORE_EXPIRE_CHUNK leases in MAC order after s->expire_from
 * (wrapping around at the end): their expired ones are deleted. */
static int lease_expire_chunk(struct store *s, struct store_req *rq)
{
	sqlite3_stmt *st = lstmt(s, L_CHUNK_END);
	char end[STORE_LEASE_KEY_LEN] = "";
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, s->expire_from, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, STORE_EXPIRE_CHUNK - 1);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		snprintf(end, sizeof(end), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -EIO;
	if (!(st = lstmt(s, L_EXPIRE_CHUNK)))
		return -EIO;
	sqlite3_bind_text(st, 1, s->expire_from, -1, SQLITE_STATIC);
	/* The last chunk reaches the end: "~" sorts after every MAC text
	 * (hex digits and separators). */
	sqlite3_bind_text(st, 2, end[0] ? end : "~", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, rq->expire_now);
	if (!step_done(st))
		return -EIO;
	rq->count = (uint64_t)sqlite3_changes(s->db);
	/* The next sweep goes on after this chunk, or from the start. */
	snprintf(s->expire_from, sizeof(s->expire_from), "%s", end);
	return 0;
}

static int lease_expire(struct store *s, struct store_req *rq)
{
	sqlite3_stmt *st;

	if (rq->expire_chunk) {
		if (lease_expire_chunk(s, rq) < 0)
			goto fail;
		return 0;
	}
	if (!(st = lstmt(s, L_EXPIRE)))
		goto fail;
	sqlite3_bind_int64(st, 1, rq->expire_now);
	if (!step_done(st))
		goto fail;
	rq->count = (uint64_t)sqlite3_changes(s->db);
	return 0;
fail:
	lease_fail(rq, -EIO, "expiring leases: database error: %s", sqlite3_errmsg(s->db));
	return rq->lease_error;
}

int store_lease_exec(struct store *s, struct store_req *rq)
{
	rq->lease_error = 0;
	rq->lease_message[0] = '\0';
	rq->count = 0;
	if (!lexec(s, L_SAVEPOINT)) {
		if (sqlite3_get_autocommit(s->db))
			return -EIO;
		lease_fail(rq, -EIO, "database error: %s", sqlite3_errmsg(s->db));
		return 0;
	}
	int e = rq->type == STORE_REQ_LEASE ? lease_put(s, rq) : lease_expire(s, rq);
	if (sqlite3_get_autocommit(s->db))
		return -EIO;
	if (e < 0)
		rq->count = 0; /* rolled back: nothing was taken */
	if (e < 0 && !lexec(s, L_ROLLBACK))
		return -EIO;
	if (!lexec(s, L_RELEASE))
		return -EIO;
	return 0;
}

/* Copies l into rq->lease normalized. 0 or -EINVAL. */
static int lease_norm(const struct store_lease *l, struct store_req *rq)
{
	char key[STORE_KEY_LEN];

	if (strnlen(l->mac, sizeof(l->mac)) == sizeof(l->mac) ||
	    strnlen(l->ip, sizeof(l->ip)) == sizeof(l->ip) ||
	    strnlen(l->ns, sizeof(l->ns)) == sizeof(l->ns) ||
	    strnlen(l->name, sizeof(l->name)) == sizeof(l->name) ||
	    !store_lease_state_name(l->state))
		return -EINVAL;
	rq->lease = *l;
	if (store_norm_mac(l->mac, key) < 0)
		return -EINVAL;
	snprintf(rq->lease.mac, sizeof(rq->lease.mac), "%s", key);
	if (store_norm_ip(l->ip, key) < 0)
		return -EINVAL;
	snprintf(rq->lease.ip, sizeof(rq->lease.ip), "%s", key);
	return 0;
}

int store_submit_completed(struct store *s, struct store_req *rq, struct store_completion *c,
			   uint64_t tag)
{
	int e = 0;

	rq->cq = c;
	rq->tag = tag;
	pthread_mutex_lock(&c->lock);
	if (c->inflight >= c->max)
		e = -EAGAIN;
	else
		c->inflight++;
	pthread_mutex_unlock(&c->lock);
	if (e < 0)
		goto out;
	e = store_submit_async(s, rq);
	if (e < 0) {
		pthread_mutex_lock(&c->lock);
		c->inflight--;
		pthread_mutex_unlock(&c->lock);
		goto out;
	}
	return 0;
out:
	free(rq);
	return e;
}

/* A new lease request for l, normalized: 0, -ENOMEM or -EINVAL. */
static int lease_req_new(const struct store_lease *l, struct store_req **ret)
{
	struct store_req *rq = calloc(1, sizeof(*rq));
	int e;

	if (!rq)
		return -ENOMEM;
	rq->type = STORE_REQ_LEASE;
	if ((e = lease_norm(l, rq)) < 0) {
		free(rq);
		return e;
	}
	*ret = rq;
	return 0;
}

int store_lease_put_async(struct store *s, const struct store_lease *l, struct store_completion *c,
			  uint64_t tag)
{
	struct store_req *rq;
	int e = lease_req_new(l, &rq);

	return e < 0 ? e : store_submit_completed(s, rq, c, tag);
}

int store_leases_expire_async(struct store *s, int64_t now, struct store_completion *c,
			      uint64_t tag)
{
	struct store_req *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return -ENOMEM;
	rq->type = STORE_REQ_LEASE_EXPIRE;
	rq->expire_now = now;
	rq->expire_chunk = true;
	return store_submit_completed(s, rq, c, tag);
}

int store_lease_put(struct store *s, const struct store_lease *l, char *err, size_t errlen)
{
	struct store_req *rq = NULL;
	int e = lease_req_new(l, &rq);

	if (e < 0) {
		if (err)
			snprintf(err, errlen, "lease of \"%.64s\": %s", l->mac,
				 e == -ENOMEM ? "out of memory" : "malformed MAC, IP or state");
		return e;
	}
	e = store_submit_wait(s, rq);
	if (e == 0)
		e = rq->lease_error;
	if (e < 0 && err)
		snprintf(err, errlen, "%s",
			 rq->lease_error ? rq->lease_message :
			 e == -EROFS     ? "the store is open read-only" :
					   "the store is closing");
	free(rq);
	return e;
}

int store_leases_expire(struct store *s, int64_t now, uint64_t *ret_n)
{
	struct store_req rq = { .type = STORE_REQ_LEASE_EXPIRE, .expire_now = now };
	int e = store_submit_wait(s, &rq);
	if (e == 0)
		e = rq.lease_error;
	if (e == 0 && ret_n)
		*ret_n = rq.count;
	return e;
}

/* ---- reads ---- */

static void copy_col(sqlite3_stmt *st, int col, char *out, size_t len)
{
	const char *v = (const char *)sqlite3_column_text(st, col);
	snprintf(out, len, "%s", v ? v : "");
}

static void row_lease(sqlite3_stmt *st, struct store_lease *ret)
{
	memset(ret, 0, sizeof(*ret));
	copy_col(st, 0, ret->mac, sizeof(ret->mac));
	copy_col(st, 1, ret->ip, sizeof(ret->ip));
	copy_col(st, 2, ret->ns, sizeof(ret->ns));
	copy_col(st, 3, ret->name, sizeof(ret->name));
	if (store_lease_state_parse((const char *)sqlite3_column_text(st, 4), &ret->state) < 0)
		ret->state = STORE_LEASE_RELEASED;
	ret->starts = sqlite3_column_int64(st, 5);
	ret->expires = sqlite3_column_int64(st, 6);
}

static int get_by(struct store_reader *r, int slot, const char *key, struct store_lease *ret)
{
	sqlite3_stmt *st = store_reader_stmt(r, slot, lrstmt_sql[slot]);
	int e = -EIO, rc;
	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		row_lease(st, ret);
		e = 0;
	} else if (rc == SQLITE_DONE) {
		e = -ENOENT;
	}
	sqlite3_reset(st);
	return e;
}

int store_lease_get_by_mac(struct store_reader *r, const char *mac, struct store_lease *ret)
{
	char key[STORE_KEY_LEN];
	if (store_norm_mac(mac, key) < 0)
		return -EINVAL;
	return get_by(r, LR_BY_MAC, key, ret);
}

int store_lease_get_by_ip(struct store_reader *r, const char *ip, struct store_lease *ret)
{
	char key[STORE_KEY_LEN];
	if (store_norm_ip(ip, key) < 0)
		return -EINVAL;
	return get_by(r, LR_BY_IP, key, ret);
}

int store_leases_each(struct store_reader *r,
		      int (*fn)(const struct store_lease *l, void *userdata), void *userdata)
{
	sqlite3_stmt *st = store_reader_stmt(r, LR_LIST, lrstmt_sql[LR_LIST]);
	struct store_lease l;
	int e = 0, rc;

	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row_lease(st, &l);
		if ((e = fn(&l, userdata)) != 0)
			break;
	}
	if (e == 0 && rc != SQLITE_DONE)
		e = -EIO;
	sqlite3_reset(st);
	return e;
}
