/* check_leases — unit tests for the DHCP leases of store/ (lease.c):
 * blocking put, get by MAC and IP, list, expiry; async puts through a
 * completion queue (a thousand in flight on one eventfd, committed in far
 * fewer transactions, durable across reopen); an IP conflict failing only
 * its own request; the in-flight bound; leases not touching the
 * resourceVersion; take_ip (a reservation taking its address back, and
 * the count of leases taken in its completion); store_leases_each;
 * the asynchronous expiry sweep; a full disk; the v3 -> v4 migration with
 * data.
 *
 * Each test opens a fresh database in its own mkdtemp() directory (under
 * $TMPDIR) and removes it afterwards.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store-internal.h"
#include "tests/unit/unit.h"

#define WAIT_MS 20000 /* most time a test waits for completions */

#define FIXTURE_NAME "check_leases"
#include "tests/unit/store_fixture.h"

static struct store_lease lease(const char *mac, const char *ip, enum store_lease_state state,
				int64_t starts, int64_t expires)
{
	struct store_lease l = { .state = state, .starts = starts, .expires = expires };
	snprintf(l.mac, sizeof(l.mac), "%s", mac);
	snprintf(l.ip, sizeof(l.ip), "%s", ip);
	snprintf(l.ns, sizeof(l.ns), "default");
	snprintf(l.name, sizeof(l.name), "hw-%s", ip);
	return l;
}

static void mac_of(unsigned i, char out[STORE_LEASE_KEY_LEN])
{
	snprintf(out, STORE_LEASE_KEY_LEN, "02:00:00:00:%02x:%02x", (i >> 8) & 0xff, i & 0xff);
}

static void ip_of(unsigned i, char out[STORE_LEASE_KEY_LEN])
{
	snprintf(out, STORE_LEASE_KEY_LEN, "10.1.%u.%u", (i >> 8) & 0xff, i & 0xff);
}

/* Drains c into done[] until want results are in, polling its eventfd
 * with a bounded wait. Returns how many were drained. */
/* What store_leases_each showed: how many, how many bound, the first two;
 * stop_at: the walk stops at that lease (fn returns 7). */
struct each_ctx {
	unsigned n, bound, stop_at;
	struct store_lease first[2];
};

static int each_one(const struct store_lease *l, void *userdata)
{
	struct each_ctx *x = userdata;
	if (x->n < 2)
		x->first[x->n] = *l;
	x->n++;
	x->bound += l->state == STORE_LEASE_BOUND;
	return x->n == x->stop_at ? 7 : 0;
}

/* The number of leases in the store. */
static unsigned lease_count(void)
{
	struct each_ctx x = { 0 };
	ck_assert_int_eq(store_leases_each(rd, each_one, &x), 0);
	return x.n;
}

static size_t drain_all(struct store_completion *c, struct store_done *done, size_t want)
{
	size_t got = 0;
	uint64_t t0 = now_mono_ns();
	while (got < want && now_mono_ns() - t0 < (uint64_t)WAIT_MS * 1000000u) {
		struct pollfd p = { .fd = store_completion_fd(c), .events = POLLIN };
		int rc = poll(&p, 1, 1000);
		ck_assert_int_ge(rc, 0);
		if (rc == 0)
			continue;
		size_t n = store_completion_drain(c, done + got, want - got);
		got += n;
	}
	return got;
}

START_TEST(test_put_get_list)
{
	char err[256] = "";
	struct store_lease l =
		lease("AA-BB-CC-DD-EE-01", "10.0.0.1", STORE_LEASE_BOUND, 1700000000, 1700086400);
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), 0);
	struct store_lease got;
	ck_assert_int_eq(store_lease_get_by_mac(rd, "aa:bb:cc:dd:ee:01", &got), 0);
	ck_assert_str_eq(got.mac, "aa:bb:cc:dd:ee:01");
	ck_assert_str_eq(got.ip, "10.0.0.1");
	ck_assert_str_eq(got.ns, "default");
	ck_assert_str_eq(got.name, "hw-10.0.0.1");
	ck_assert_int_eq(got.state, STORE_LEASE_BOUND);
	ck_assert_int_eq(got.starts, 1700000000);
	ck_assert_int_eq(got.expires, 1700086400);
	/* an IPv4-mapped address finds the IPv4 lease */
	ck_assert_int_eq(store_lease_get_by_ip(rd, "::ffff:10.0.0.1", &got), 0);
	ck_assert_str_eq(got.mac, "aa:bb:cc:dd:ee:01");
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.0.0.9", &got), -ENOENT);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "aa:bb:cc:dd:ee:09", &got), -ENOENT);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "zz", &got), -EINVAL);

	/* the same MAC replaces its lease; a proxy lease has no hardware */
	l = lease("aa:bb:cc:dd:ee:01", "10.0.0.5", STORE_LEASE_BOUND, 1700000100, 1700000200);
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), 0);
	l = lease("aa:bb:cc:dd:ee:02", "10.0.0.2", STORE_LEASE_DECLINED, 0, 60);
	l.ns[0] = l.name[0] = '\0';
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), 0);
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.0.0.1", &got), -ENOENT);

	struct each_ctx x = { 0 };
	ck_assert_int_eq(store_leases_each(rd, each_one, &x), 0);
	ck_assert_uint_eq(x.n, 2);
	const struct store_lease *a = &x.first[0], *b = &x.first[1];
	ck_assert_str_eq(a->ip, "10.0.0.2");
	ck_assert_int_eq(a->state, STORE_LEASE_DECLINED);
	ck_assert_str_eq(a->name, "");
	ck_assert_int_eq(a->expires, 60);
	ck_assert_str_eq(b->mac, "aa:bb:cc:dd:ee:01");
	ck_assert_str_eq(b->ns, "default");
	ck_assert_int_eq(b->starts, 1700000100);

	/* malformed input is refused before it is queued */
	l = lease("not-a-mac", "10.0.0.3", STORE_LEASE_BOUND, 0, 1);
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), -EINVAL);
	l = lease("aa:bb:cc:dd:ee:03", "10.0.0.300", STORE_LEASE_BOUND, 0, 1);
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), -EINVAL);
	l = lease("aa:bb:cc:dd:ee:03", "10.0.0.3", (enum store_lease_state)7, 0, 1);
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_no_resource_version)
{
	uint64_t rv0, rv1;
	json_t *ch;
	ck_assert_int_eq(store_resource_version(rd, &rv0), 0);
	struct store_lease l = lease("aa:bb:cc:dd:ee:01", "10.0.0.1", STORE_LEASE_BOUND, 1, 2);
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	ck_assert_int_eq(store_resource_version(rd, &rv1), 0);
	ck_assert_uint_eq(rv0, rv1);
	ck_assert_int_eq(store_changes(rd, 0, STORE_KIND_MAX, NULL, 10, &ch, NULL), 0);
	ck_assert_uint_eq(json_array_size(ch), 0);
	json_decref(ch);
}
END_TEST

START_TEST(test_conflict)
{
	char err[256] = "";
	struct store_lease l = lease("aa:bb:cc:dd:ee:01", "10.0.0.1", STORE_LEASE_BOUND, 1, 100);
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	l = lease("aa:bb:cc:dd:ee:02", "10.0.0.1", STORE_LEASE_BOUND, 1, 100);
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), -EADDRINUSE);
	ck_assert_msg(strstr(err, "aa:bb:cc:dd:ee:01") && strstr(err, "aa:bb:cc:dd:ee:02"),
		      "message names both MACs: %s", err);

	/* in one async burst, the conflicting request fails alone */
	struct store_completion *c = store_completion_new(16);
	ck_assert_ptr_nonnull(c);
	const char *macs[] = { "aa:bb:cc:dd:ee:03", "aa:bb:cc:dd:ee:04", "aa:bb:cc:dd:ee:05" };
	const char *ips[] = { "10.0.0.3", "10.0.0.1", "10.0.0.5" };
	for (unsigned i = 0; i < 3; i++) {
		l = lease(macs[i], ips[i], STORE_LEASE_BOUND, 1, 100);
		ck_assert_int_eq(store_lease_put_async(st, &l, c, 100 + i), 0);
	}
	struct store_done done[3];
	ck_assert_uint_eq(drain_all(c, done, 3), 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(done[i].tag, 100 + i); /* in queue order */
		ck_assert_int_eq(done[i].error, i == 1 ? -EADDRINUSE : 0);
	}
	ck_assert_ptr_nonnull(strstr(done[1].message, "aa:bb:cc:dd:ee:01"));
	ck_assert_ptr_nonnull(strstr(done[1].message, "aa:bb:cc:dd:ee:04"));
	struct store_lease got;
	ck_assert_int_eq(store_lease_get_by_mac(rd, "aa:bb:cc:dd:ee:04", &got), -ENOENT);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "aa:bb:cc:dd:ee:05", &got), 0);
	ck_assert_int_eq(store_completion_inflight(c), 0);
	ck_assert_int_eq(store_completion_free(c), 0);

	/* a released lease frees its IP */
	l = lease("aa:bb:cc:dd:ee:01", "10.0.0.1", STORE_LEASE_RELEASED, 1, 100);
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	l = lease("aa:bb:cc:dd:ee:02", "10.0.0.1", STORE_LEASE_BOUND, 1, 100);
	ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), 0);
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.0.0.1", &got), 0);
	ck_assert_str_eq(got.mac, "aa:bb:cc:dd:ee:02");
	ck_assert_int_eq(got.state, STORE_LEASE_BOUND);
}
END_TEST

#define N_ASYNC 1000

START_TEST(test_async_group_commit)
{
	struct store_completion *c = store_completion_new(N_ASYNC);
	static struct store_done done[N_ASYNC];
	static bool seen[N_ASYNC];
	ck_assert_ptr_nonnull(c);
	memset(seen, 0, sizeof(seen));
	uint64_t tx0 = store_test_transactions(st);
	for (unsigned i = 0; i < N_ASYNC; i++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(i, mac);
		ip_of(i, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1000, 2000 + i);
		ck_assert_int_eq(store_lease_put_async(st, &l, c, i), 0);
	}
	ck_assert_uint_eq(drain_all(c, done, N_ASYNC), N_ASYNC);
	uint64_t tx = store_test_transactions(st) - tx0;
	for (unsigned i = 0; i < N_ASYNC; i++) {
		ck_assert_msg(done[i].error == 0, "tag %" PRIu64 ": %d %s", done[i].tag,
			      done[i].error, done[i].message);
		ck_assert_uint_lt(done[i].tag, N_ASYNC);
		ck_assert(!seen[done[i].tag]);
		seen[done[i].tag] = true;
	}
	ck_assert_msg(tx >= 1 && tx <= N_ASYNC / 10, "%" PRIu64 " transactions for %d leases", tx,
		      N_ASYNC);
	ck_assert_int_eq(store_completion_inflight(c), 0);
	struct pollfd p = { .fd = store_completion_fd(c), .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 0), 0); /* drained: the eventfd is clear */

	/* durable: all are there after a reopen */
	close_store();
	ck_assert_int_eq(store_completion_free(c), 0);
	open_store(NULL);
	ck_assert_uint_eq(lease_count(), N_ASYNC);
	struct store_lease got;
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.1.3.231", &got), 0); /* i = 999 */
	ck_assert_str_eq(got.mac, "02:00:00:00:03:e7");
	ck_assert_int_eq(got.expires, 2999);
}
END_TEST

START_TEST(test_inflight_bound)
{
	struct store_completion *c = store_completion_new(4);
	struct store_done done[4];
	ck_assert_ptr_nonnull(c);
	for (unsigned i = 0; i < 5; i++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(i, mac);
		ip_of(i, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1, 2);
		/* results not yet drained still count */
		ck_assert_int_eq(store_lease_put_async(st, &l, c, i), i < 4 ? 0 : -EAGAIN);
	}
	ck_assert_int_eq(store_completion_inflight(c), 4);
	ck_assert_uint_eq(drain_all(c, done, 4), 4);
	ck_assert_int_eq(store_completion_inflight(c), 0);
	struct store_lease l = lease("02:00:00:00:00:04", "10.1.0.4", STORE_LEASE_BOUND, 1, 2);
	ck_assert_int_eq(store_lease_put_async(st, &l, c, 4), 0);
	/* store_close completes what is queued; the queue is freed after */
	close_store();
	ck_assert_int_eq(store_completion_inflight(c), 1);
	ck_assert_uint_eq(store_completion_drain(c, done, 4), 1);
	ck_assert_int_eq(done[0].error, 0);
	ck_assert_int_eq(store_completion_free(c), 0);
	open_store(NULL);
}
END_TEST

START_TEST(test_expire)
{
	for (unsigned i = 0; i < 3; i++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(i, mac);
		ip_of(i, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 0, 100 * (i + 1));
		ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	}
	uint64_t n = 99;
	ck_assert_int_eq(store_leases_expire(st, 100, &n), 0);
	ck_assert_uint_eq(n, 0); /* expires < now only */
	ck_assert_int_eq(store_leases_expire(st, 250, &n), 0);
	ck_assert_uint_eq(n, 2);
	struct store_lease got;
	ck_assert_int_eq(store_lease_get_by_mac(rd, "02:00:00:00:00:00", &got), -ENOENT);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "02:00:00:00:00:02", &got), 0);
	ck_assert_int_eq(store_leases_expire(st, 1000, &n), 0);
	ck_assert_uint_eq(n, 1);
}
END_TEST

/* The commit delay: after a transaction of STORE_COMMIT_DELAY_MIN or more
 * requests, the writer waits for more, so requests queued one by one
 * right after it share one transaction; with the delay off, a request
 * queued alone is committed alone. (The window is 5 s here, so that the
 * test does not depend on how fast the machine queues four requests.) */
static void queue_and_drain(struct store_completion *c, unsigned from, unsigned n)
{
	struct store_done done[16];
	for (unsigned i = from; i < from + n; i++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(i, mac);
		ip_of(i, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1, 2);
		ck_assert_int_eq(store_lease_put_async(st, &l, c, i), 0);
	}
	ck_assert_uint_eq(drain_all(c, done, n), n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(done[i].error, 0);
}

START_TEST(test_commit_delay)
{
	struct store_options o = { .commit_delay = 5000000, .batch_max = 8 };
	struct store_completion *c = store_completion_new(16);
	uint64_t tx;

	close_store();
	open_store(&o);
	ck_assert_ptr_nonnull(c);
	/* Rounds of eight until one is committed whole: its transaction
	 * held 8 (>= STORE_COMMIT_DELAY_MIN), so the next request waits. */
	unsigned next = 0, rounds = 0;
	do {
		tx = store_test_transactions(st);
		queue_and_drain(c, next, 8);
		next += 8;
	} while (store_test_transactions(st) - tx != 1 && ++rounds < 20);
	ck_assert_uint_lt(rounds, 20);
	/* One lease, a pause, seven more: the first waited for the others,
	 * and the batch went as soon as it was full (batch_max), not at the
	 * end of the 5 s window. */
	tx = store_test_transactions(st);
	{
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(next, mac);
		ip_of(next, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1, 2);
		ck_assert_int_eq(store_lease_put_async(st, &l, c, next), 0);
	}
	usleep(50000);
	ck_assert_uint_eq(store_test_transactions(st) - tx, 0);
	queue_and_drain(c, next + 1, 7);
	struct store_done first;
	ck_assert_uint_eq(drain_all(c, &first, 1), 1);
	ck_assert_uint_eq(store_test_transactions(st) - tx, 1);
	ck_assert_int_eq(store_completion_free(c), 0);

	/* Off: one request, one transaction, at once. */
	close_store();
	o = (struct store_options){ .no_commit_delay = true };
	open_store(&o);
	c = store_completion_new(16);
	ck_assert_ptr_nonnull(c);
	queue_and_drain(c, 16, 8);
	for (unsigned i = 0; i < 3; i++) {
		tx = store_test_transactions(st);
		queue_and_drain(c, 24 + i, 1);
		ck_assert_uint_eq(store_test_transactions(st) - tx, 1);
	}
	ck_assert_int_eq(store_completion_free(c), 0);
}
END_TEST

/* Checkpoints run on their own thread: after more than PAGES pages of
 * commits (the wake-up interval, set below the default for a quicker
 * test), one has run, and the WAL starts over rather than grows with
 * every commit.
 *
 * When it starts over depends on the machine: the checkpointer must come
 * within STORE_CHECKPOINT_TAIL frames of the writer, which a writer
 * committing as fast as it can on a loaded machine (slow fsyncs for the
 * checkpointer) may keep it from (the WAL is then bounded by
 * STORE_WAL_MAX_PAGES, where the writer copies it itself). So the burst
 * checks that checkpoints run, and the WAL's restart is checked once the
 * writes come at a pace the checkpointer can follow, as between bursts of
 * DHCP traffic. */
#define PAGES 1000
/* The writer's WAL goes out one write per commit (walbuf.c), and what a
 * commit wrote is in the file when it returns: a process that dies right
 * after its commits, with no close, leaves every one of them readable by
 * a connection of the default VFS, with the database intact. */
START_TEST(test_wal_gathered)
{
	enum { N = 200 };
	char err[256] = "", mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];

	/* One commit per lease here: every one is a few frames (the row's
	 * page and the index's), two write calls each without gathering. */
	unsigned long w0 = store_walbuf_writes();
	for (unsigned i = 0; i < N; i++) {
		mac_of(i, mac);
		ip_of(i, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1700000000, 1700086400);
		ck_assert_int_eq(store_lease_put(st, &l, err, sizeof(err)), 0);
	}
	unsigned long writes = store_walbuf_writes() - w0;
	ck_assert_msg(writes >= N && writes <= N + 8, "%lu WAL writes for %d commits", writes, N);
	close_store();

	/* A child commits N more and dies without closing anything. */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct store *s2;
		if (store_open(dbpath, NULL, &s2, err, sizeof(err)) < 0)
			_exit(2);
		for (unsigned i = N; i < 2 * N; i++) {
			mac_of(i, mac);
			ip_of(i, ip);
			struct store_lease l =
				lease(mac, ip, STORE_LEASE_BOUND, 1700000000, 1700086400);
			if (store_lease_put(s2, &l, err, sizeof(err)) < 0)
				_exit(3);
		}
		_exit(0);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);

	sqlite3 *db;
	sqlite3_stmt *q;
	ck_assert_int_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), "ok");
	sqlite3_finalize(q);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM leases", -1, &q, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(q, 0), 2 * N);
	sqlite3_finalize(q);
	sqlite3_close(db);
	open_store(NULL);
}
END_TEST

START_TEST(test_checkpoint_thread)
{
	/* At normal priority: an idle-class thread may be starved for
	 * seconds on a busy test machine, and this tests the WAL's restart,
	 * not the scheduler. */
	struct store_options o = { .no_commit_delay = true,
				   .checkpoint_not_idle = true,
				   .checkpoint_pages = PAGES };
	char wal[600];
	struct stat sb;
	uint64_t t0 = now_mono_ns(), restarts = 0;
	int pages = 0;
	unsigned n = 0;

	close_store();
	open_store(&o);
	ck_assert_uint_eq(store_test_checkpoints(st), 0);
	/* Each put is a transaction of its own: at least one WAL page. */
	for (; n < 2 * PAGES + 100; n++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(n, mac);
		ip_of(n, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1, 2);
		ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	}
	while (store_test_checkpoints(st) == 0 && now_mono_ns() - t0 < (uint64_t)WAIT_MS * 1000000u)
		usleep(10000);
	ck_assert_uint_ge(store_test_checkpoints(st), 1);
	store_test_wal(st, &restarts, &pages);
	uint64_t r0 = restarts;
	/* At a pace it can follow, at most 1000 more commits or WAIT_MS,
	 * until the WAL starts over once more (whether it did during the
	 * burst depends on the machine). */
	t0 = now_mono_ns();
	for (unsigned k = 0; restarts == r0 && k < 1000 &&
			     now_mono_ns() - t0 < (uint64_t)WAIT_MS * 1000000u;
	     k++, n++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(n, mac);
		ip_of(n, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1, 2);
		ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
		store_test_wal(st, &restarts, &pages);
		usleep(5000);
	}
	ck_assert_msg(restarts > r0, "the WAL did not start over (%d pages)", pages);
	/* just after it did: the commits since, not the burst's */
	ck_assert_int_lt(pages, 16);
	ck_assert_uint_eq(lease_count(), n);
	/* At close, the last connection checkpoints the rest and removes the
	 * WAL. */
	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	ck_assert_int_eq(stat(wal, &sb), 0);
	close_store();
	ck_assert_int_eq(stat(wal, &sb), -1);
	open_store(NULL);
}
END_TEST

/* A renewal (same MAC, IP and Hardware) takes the short path: new times
 * and state, nothing else; any other change takes the full one. */
START_TEST(test_renewal)
{
	struct store_lease l = lease("aa:bb:cc:dd:ee:01", "10.0.0.1", STORE_LEASE_BOUND, 10, 100);
	struct store_lease got;

	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	l.starts = 50;
	l.expires = 500;
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	ck_assert_int_eq(store_lease_get_by_mac(rd, l.mac, &got), 0);
	ck_assert_int_eq(got.starts, 50);
	ck_assert_int_eq(got.expires, 500);
	ck_assert_int_eq(got.state, STORE_LEASE_BOUND);
	ck_assert_str_eq(got.ip, "10.0.0.1");
	/* released, then bound again: the IP checks run again */
	l.state = STORE_LEASE_RELEASED;
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	struct store_lease other = lease("aa:bb:cc:dd:ee:02", "10.0.0.1", STORE_LEASE_BOUND, 60, 600);
	ck_assert_int_eq(store_lease_put(st, &other, NULL, 0), 0);
	l.state = STORE_LEASE_BOUND;
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), -EADDRINUSE);
	l.take_ip = true;
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	ck_assert_int_eq(store_lease_get_by_mac(rd, other.mac, &got), 0);
	ck_assert_int_eq(got.state, STORE_LEASE_RELEASED);
	/* another Hardware name: the full path, which records it */
	snprintf(l.name, sizeof(l.name), "renamed");
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.0.0.1", &got), 0);
	ck_assert_str_eq(got.name, "renamed");
	ck_assert_str_eq(got.mac, "aa:bb:cc:dd:ee:01");
	/* another IP: the full path */
	snprintf(l.ip, sizeof(l.ip), "10.0.0.9");
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	ck_assert_int_eq(store_lease_get_by_mac(rd, l.mac, &got), 0);
	ck_assert_str_eq(got.ip, "10.0.0.9");
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.0.0.1", &got), 0);
	ck_assert_str_eq(got.mac, other.mac);
}
END_TEST

/* take_ip: a reservation's lease takes its IP from another MAC's bound
 * lease, which becomes released, instead of failing. */
START_TEST(test_take_ip)
{
	struct store_lease l = lease("aa:bb:cc:dd:ee:01", "10.0.0.1", STORE_LEASE_BOUND, 1, 100);
	struct store_lease got;
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	l = lease("aa:bb:cc:dd:ee:02", "10.0.0.1", STORE_LEASE_BOUND, 2, 200);
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), -EADDRINUSE);
	l.take_ip = true;
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "aa:bb:cc:dd:ee:01", &got), 0);
	ck_assert_int_eq(got.state, STORE_LEASE_RELEASED);
	ck_assert_int_eq(got.expires, 100); /* otherwise untouched */
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.0.0.1", &got), 0);
	ck_assert_str_eq(got.mac, "aa:bb:cc:dd:ee:02");
	ck_assert_int_eq(got.state, STORE_LEASE_BOUND);
	/* taking it again from itself changes nothing else */
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "aa:bb:cc:dd:ee:01", &got), 0);
	ck_assert_int_eq(got.state, STORE_LEASE_RELEASED);

	/* Asynchronous: the completion counts the leases taken (the DHCP
	 * server forgets what it knew of them), none for a renewal. */
	struct store_completion *c = store_completion_new(4);
	struct store_done done[3];
	ck_assert_ptr_nonnull(c);
	l = lease("aa:bb:cc:dd:ee:01", "10.0.0.1", STORE_LEASE_BOUND, 3, 300);
	l.take_ip = true;
	ck_assert_int_eq(store_lease_put_async(st, &l, c, 1), 0);
	ck_assert_int_eq(store_lease_put_async(st, &l, c, 2), 0);
	l = lease("aa:bb:cc:dd:ee:03", "10.0.0.3", STORE_LEASE_BOUND, 3, 300);
	l.take_ip = true;
	ck_assert_int_eq(store_lease_put_async(st, &l, c, 3), 0);
	ck_assert_uint_eq(drain_all(c, done, 3), 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(done[i].error, 0);
		ck_assert_uint_eq(done[i].tag, (uint64_t)i + 1);
		ck_assert_uint_eq(done[i].count, i == 0 ? 1 : 0);
	}
	ck_assert_int_eq(store_lease_get_by_mac(rd, "aa:bb:cc:dd:ee:02", &got), 0);
	ck_assert_int_eq(got.state, STORE_LEASE_RELEASED);
	ck_assert_int_eq(store_completion_free(c), 0);
}
END_TEST

START_TEST(test_each)
{
	struct store_lease l;
	struct each_ctx x = { 0 };

	ck_assert_int_eq(store_leases_each(rd, each_one, &x), 0);
	ck_assert_uint_eq(x.n, 0);
	for (unsigned i = 0; i < 10; i++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(i, mac);
		ip_of(9 - i, ip);
		l = lease(mac, ip, i % 3 ? STORE_LEASE_BOUND : STORE_LEASE_RELEASED, 1, 100);
		ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	}
	ck_assert_int_eq(store_leases_each(rd, each_one, &x), 0);
	ck_assert_uint_eq(x.n, 10);
	ck_assert_uint_eq(x.bound, 6);
	ck_assert_str_eq(x.first[0].ip, "10.1.0.0"); /* by IP */
	/* fn's non-zero value stops the walk and is returned */
	x = (struct each_ctx){ .stop_at = 4 };
	ck_assert_int_eq(store_leases_each(rd, each_one, &x), 7);
	ck_assert_uint_eq(x.n, 4);
}
END_TEST

/* The expiry sweep without waiting: its result and count arrive on the
 * completion queue, in order with the lease writes queued around it. */
START_TEST(test_expire_async)
{
	struct store_completion *c = store_completion_new(8);
	struct store_done done[3];
	char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
	struct store_lease l, got;

	ck_assert_ptr_nonnull(c);
	for (unsigned i = 0; i < 4; i++) {
		mac_of(i, mac);
		ip_of(i, ip);
		l = lease(mac, ip, STORE_LEASE_BOUND, 0, i < 3 ? 50 : 500);
		ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	}
	mac_of(9, mac);
	ip_of(9, ip);
	l = lease(mac, ip, STORE_LEASE_BOUND, 0, 60);
	ck_assert_int_eq(store_lease_put_async(st, &l, c, 1), 0);
	ck_assert_int_eq(store_leases_expire_async(st, 100, c, 2), 0);
	ck_assert_int_eq(store_leases_expire_async(st, 100, c, 3), 0);
	ck_assert_uint_eq(drain_all(c, done, 3), 3);
	ck_assert_uint_eq(done[0].tag, 1);
	ck_assert_int_eq(done[0].error, 0);
	ck_assert_uint_eq(done[1].tag, 2);
	ck_assert_int_eq(done[1].error, 0);
	ck_assert_uint_eq(done[1].count, 4); /* the three at 50 and the one at 60 */
	ck_assert_uint_eq(done[2].tag, 3);
	ck_assert_uint_eq(done[2].count, 0);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "02:00:00:00:00:03", &got), 0);
	ck_assert_int_eq(store_lease_get_by_mac(rd, "02:00:00:00:00:09", &got), -ENOENT);
	ck_assert_int_eq(store_completion_free(c), 0);
}
END_TEST

/* The asynchronous sweep walks the table STORE_EXPIRE_CHUNK leases at a
 * time in MAC order, wrapping around: one call removes only the expired
 * leases of its chunk, and a full turn removes them all. */
START_TEST(test_expire_chunks)
{
	const unsigned n = 2 * STORE_EXPIRE_CHUNK + 500;
	struct store_completion *c = store_completion_new(4);
	struct store_done done;
	uint64_t removed = 0;

	ck_assert_ptr_nonnull(c);
	/* every third lease expired (at 50), the rest live (at 500) */
	for (unsigned i = 0; i < n; i++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		snprintf(mac, sizeof(mac), "02:00:00:%02x:%02x:%02x", i >> 16, (i >> 8) & 255,
			 i & 255);
		snprintf(ip, sizeof(ip), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 0, i % 3 ? 500 : 50);
		ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	}
	/* the first chunk: the expired among the first STORE_EXPIRE_CHUNK MACs */
	ck_assert_int_eq(store_leases_expire_async(st, 100, c, 1), 0);
	ck_assert_uint_eq(drain_all(c, &done, 1), 1);
	ck_assert_int_eq(done.error, 0);
	ck_assert_uint_eq(done.count, (STORE_EXPIRE_CHUNK + 2) / 3);
	removed += done.count;
	struct store_lease got;
	ck_assert_int_eq(store_lease_get_by_mac(rd, "02:00:00:00:00:00", &got), -ENOENT);
	char past[STORE_LEASE_KEY_LEN];
	unsigned j = (STORE_EXPIRE_CHUNK / 3 + 1) * 3; /* an expired one past the chunk */
	snprintf(past, sizeof(past), "02:00:00:%02x:%02x:%02x", j >> 16, (j >> 8) & 255, j & 255);
	ck_assert_int_eq(store_lease_get_by_mac(rd, past, &got), 0);
	/* the rest of the turn, then around again with nothing left */
	for (unsigned k = 2; k <= 4; k++) {
		ck_assert_int_eq(store_leases_expire_async(st, 100, c, k), 0);
		ck_assert_uint_eq(drain_all(c, &done, 1), 1);
		ck_assert_int_eq(done.error, 0);
		removed += done.count;
	}
	ck_assert_uint_eq(removed, (n + 2) / 3);
	ck_assert_int_eq(store_lease_get_by_mac(rd, past, &got), -ENOENT);
	ck_assert_uint_eq(lease_count(), n - (n + 2) / 3);
	ck_assert_int_eq(store_completion_free(c), 0);
}
END_TEST

/* A full disk: the leases of a refused batch fail with -EIO and are not
 * stored; those reported done are. */
START_TEST(test_disk_full)
{
	static struct store_done done[N_ASYNC];
	struct store_completion *c = store_completion_new(N_ASYNC);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(store_test_exec_writer(st, "PRAGMA max_page_count = 1"), 0);
	for (unsigned i = 0; i < N_ASYNC; i++) {
		char mac[STORE_LEASE_KEY_LEN], ip[STORE_LEASE_KEY_LEN];
		mac_of(i, mac);
		ip_of(i, ip);
		struct store_lease l = lease(mac, ip, STORE_LEASE_BOUND, 1, 2);
		memset(l.name, 'x', sizeof(l.name) - 1);
		ck_assert_int_eq(store_lease_put_async(st, &l, c, i), 0);
	}
	ck_assert_uint_eq(drain_all(c, done, N_ASYNC), N_ASYNC);
	size_t failed = 0;
	for (unsigned i = 0; i < N_ASYNC; i++) {
		char mac[STORE_LEASE_KEY_LEN];
		struct store_lease got;
		ck_assert_msg(done[i].error == 0 || done[i].error == -EIO, "%d %s", done[i].error,
			      done[i].message);
		mac_of((unsigned)done[i].tag, mac);
		ck_assert_int_eq(store_lease_get_by_mac(rd, mac, &got),
				 done[i].error ? -ENOENT : 0);
		failed += done[i].error != 0;
	}
	ck_assert_uint_gt(failed, 0);
	ck_assert_int_eq(store_completion_free(c), 0);
}
END_TEST

static void sql_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, err ? err : "");
	sqlite3_free(err);
}

START_TEST(test_migration_v3)
{
	close_store();
	teardown();
	setup_dir();
	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	sql_exec(db, "PRAGMA journal_mode = WAL");
	sql_exec(db, "BEGIN");
	for (int v = 1; v <= 3; v++)
		sql_exec(db, store_schema_sql(v));
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion",
			      "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name",
			      "a", "namespace", "default", "spec", "interfaces", "dhcp", "mac",
			      "aa:bb:cc:dd:ee:01");
	char *text = json_dumps(o, JSON_COMPACT);
	char *sql = sqlite3_mprintf(
		"INSERT INTO objects (id, kind, namespace, name, uid, rv, source, json) "
		"VALUES (1, 'Hardware', 'default', 'a', 'uid-1', 1, 'local', %Q);"
		"INSERT INTO changes VALUES (1, 'Hardware', 'default', 'a', 'ADDED', %Q);"
		"INSERT INTO hw_mac VALUES ('aa:bb:cc:dd:ee:01', 1, 'spec.interfaces[0].dhcp.mac');"
		"UPDATE meta SET value = 1 WHERE key = 'rv'; PRAGMA user_version = 3; COMMIT",
		text, text);
	sql_exec(db, sql);
	sqlite3_free(sql);
	free(text);
	json_decref(o);
	sqlite3_close(db);

	open_store(NULL);
	ck_assert_int_ge(store_schema_version(), 5);
	uint64_t n, rv;
	ck_assert_int_eq(store_count(rd, STORE_KIND_HARDWARE, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(store_resource_version(rd, &rv), 0);
	ck_assert_uint_eq(rv, 1);
	json_t *got;
	ck_assert_int_eq(store_hardware_by_mac(rd, "aa:bb:cc:dd:ee:01", &got), 0);
	json_decref(got);
	struct store_lease l = lease("aa:bb:cc:dd:ee:01", "10.0.0.1", STORE_LEASE_BOUND, 1, 2);
	snprintf(l.name, sizeof(l.name), "a");
	ck_assert_int_eq(store_lease_put(st, &l, NULL, 0), 0);
	struct store_lease gl;
	ck_assert_int_eq(store_lease_get_by_ip(rd, "10.0.0.1", &gl), 0);
	ck_assert_str_eq(gl.name, "a");
	close_store();

	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	sqlite3_stmt *q;
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(q, 0), store_schema_version());
	sqlite3_finalize(q);
	/* v5 dropped the expiry index; the IP index stays */
	ck_assert_int_eq(sqlite3_prepare_v2(db,
					    "SELECT group_concat(name) FROM sqlite_master WHERE type = "
					    "'index' AND name IN ('leases_ip', 'leases_expires')",
					    -1, &q, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), "leases_ip");
	sqlite3_finalize(q);
	sqlite3_close(db);
	open_store(NULL);
}
END_TEST

static Suite *leases_suite(void)
{
	Suite *s = suite_create("leases");
	TCase *tc = tcase_create("db");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	UNIT_TEST(tc, test_put_get_list);
	UNIT_TEST(tc, test_no_resource_version);
	UNIT_TEST(tc, test_conflict);
	UNIT_TEST(tc, test_async_group_commit);
	UNIT_TEST(tc, test_inflight_bound);
	UNIT_TEST(tc, test_expire);
	UNIT_TEST(tc, test_commit_delay);
	UNIT_TEST(tc, test_wal_gathered);
	UNIT_TEST(tc, test_checkpoint_thread);
	UNIT_TEST(tc, test_renewal);
	UNIT_TEST(tc, test_take_ip);
	UNIT_TEST(tc, test_each);
	UNIT_TEST(tc, test_expire_async);
	UNIT_TEST(tc, test_expire_chunks);
	UNIT_TEST(tc, test_disk_full);
	UNIT_TEST(tc, test_migration_v3);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(leases_suite());
}
