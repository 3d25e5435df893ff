/* checkpoint — WAL checkpoints on a thread of their own, off the commit
 * path.
 *
 * DESIGN: by default SQLite checkpoints inside the COMMIT that takes the
 * WAL past 1000 pages: that commit copies those pages into the database
 * file and flushes it, and every caller waiting on it (a DHCP ACK, an API
 * write) waits milliseconds more, tens of them on a large database. Here
 * the writer's connection has no automatic checkpoint; its WAL hook (run
 * by the writer after each commit, with the WAL's size in pages) wakes a
 * checkpointer thread whenever the WAL has grown by STORE_CHECKPOINT_PAGES
 * since the last wake (16000 pages, 64 MiB, rather than SQLite's 1000: a
 * checkpoint copies only the newest frame of each page, so a longer
 * interval copies a page that many commits changed once for all of them.
 * With 100,000 leases renewed at random, 4000 frames are mostly distinct
 * pages of the lease table, each copied and flushed again at every wake;
 * 16000 span more renewals than the table has pages, so a page is copied
 * once for several of its changes. At 8,000 DORA/s on 100,000
 * reservations the whole daemon's CPU fell 25-30% (4000: 493-549 ticks
 * per 8 s, 16000: 363-412, alternating runs). The WAL file keeps its
 * largest size, 64 MiB or so, between restarts.) The
 * checkpointer owns a read-write connection of its own and runs PASSIVE
 * checkpoints: they copy what no reader still needs and never block the
 * writer, which goes on appending.
 *
 * SQLite starts the WAL over only when, as a write transaction begins,
 * every frame in it has been copied. Under a steady stream of commits one
 * checkpoint always ends a few frames behind, and the WAL would grow
 * without end. So the checkpointer runs passes back to back until one
 * finds nothing new (each copies only what arrived during the last,
 * until none did), and publishes how far it got; if the last of its
 * passes still found more than the writer's tail, it starts again at
 * once, up to STORE_CHECKPOINT_REARMS times in a row. Should the
 * writer keep ahead of it, when the writer's hook sees that less than
 * STORE_CHECKPOINT_TAIL frames remain (or the WAL passed
 * STORE_WAL_MAX_PAGES), the writer copies the rest itself before its
 * next transaction, which then starts the WAL over.
 *
 * The checkpointer runs with SCHED_IDLE: it takes only CPU time that the
 * packet loop and the writer leave.
 *
 * Lock: s->ckpt_lock guards ckpt_want and ckpt_stopping (the hook sets
 * the first, store_close the second); the thread's connection is its own.
 * At close, the checkpointer stops first; the writer's connection, closed
 * last, checkpoints what is left and removes the WAL, as SQLite does.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "store/store-internal.h"

/* Writer thread: after each commit. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct store *s = arg;
	uint64_t mark = __atomic_load_n(&s->ckpt_backfilled, __ATOMIC_ACQUIRE);
	int done = (int)(uint32_t)mark;
	(void)db;
	(void)name;
	/* A WAL that started over is smaller than it was: a new generation,
	 * whose frames the published mark does not count. */
	if (pages < s->ckpt_pages_last) {
		s->ckpt_pages_at_wake = 0;
		__atomic_add_fetch(&s->ckpt_gen, 1, __ATOMIC_RELEASE);
	}
	s->ckpt_pages_last = pages;
	if ((mark >> 32 == s->ckpt_gen && done > 0 && done <= pages &&
	     pages - done <= STORE_CHECKPOINT_TAIL) ||
	    pages >= STORE_WAL_MAX_PAGES)
		s->ckpt_finish = true;
	if (pages - s->ckpt_pages_at_wake < s->ckpt_every)
		return SQLITE_OK;
	s->ckpt_pages_at_wake = pages;
	pthread_mutex_lock(&s->ckpt_lock);
	s->ckpt_want = true;
	pthread_cond_signal(&s->ckpt_cond);
	pthread_mutex_unlock(&s->ckpt_lock);
	return SQLITE_OK;
}

static void *ckpt_main(void *arg)
{
	struct store *s = arg;
	struct sched_param sp = { .sched_priority = 0 };

	/* Nothing waits for a checkpoint: it runs when the CPU has nothing
	 * else to do, never ahead of a packet or a commit. Under a load that
	 * leaves it no time, the WAL grows to STORE_WAL_MAX_PAGES and the
	 * writer copies it itself. */
	if (!s->ckpt_not_idle && pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
		log_debug("store", "checkpoint thread: SCHED_IDLE refused");

	unsigned rearms = 0; /* times in a row this thread woke itself */

	pthread_mutex_lock(&s->ckpt_lock);
	for (;;) {
		while (!s->ckpt_want && !s->ckpt_stopping)
			pthread_cond_wait(&s->ckpt_cond, &s->ckpt_lock);
		if (s->ckpt_stopping)
			break;
		s->ckpt_want = false;
		pthread_mutex_unlock(&s->ckpt_lock);

		/* Passes until one finds nothing new: each copies what the
		 * writer appended during the one before, fewer frames each
		 * time, so the WAL ends fully copied and the writer's next
		 * transaction starts it over, with no copying of its own. */
		int prev = -1, grew = 0, rc = SQLITE_OK, pass;
		for (pass = 0; pass < STORE_CHECKPOINT_PASSES; pass++) {
			uint64_t t0 = now_mono_ns();
			uint64_t gen = __atomic_load_n(&s->ckpt_gen, __ATOMIC_ACQUIRE);
			int log = 0, done = 0;
			rc = sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL, SQLITE_CHECKPOINT_PASSIVE,
						       &log, &done);
			metric_observe(s->m_checkpoint_seconds,
				       (double)(now_mono_ns() - t0) / 1e9);
			if (rc != SQLITE_OK)
				break;
			/* How far this generation of the WAL is copied: the
			 * writer finishes a short tail (store_ckpt_finish). */
			if (done > 0)
				__atomic_store_n(&s->ckpt_backfilled,
						 gen << 32 | (uint32_t)done, __ATOMIC_RELEASE);
			log_debug("store", "checkpoint: %d of %d WAL pages copied", done, log);
			if (done < log || log == prev)
				break; /* a reader holds the rest, or nothing new */
			grew = prev < 0 ? log : log - prev;
			prev = log;
		}
		if (rc != SQLITE_OK && rc != SQLITE_BUSY)
			log_warn("store", "checkpoint: %s", sqlite3_errmsg(s->ckpt_db));

		pthread_mutex_lock(&s->ckpt_lock);
		s->checkpoints++;
		/* Every pass still found new frames, the last more than the
		 * writer's tail: the writer kept ahead (this thread lost the
		 * CPU, or the passes ran long). Go on rather than wait for
		 * another wake, or the WAL might never get within the tail
		 * and start over; but a few times only, so that a writer
		 * that always keeps ahead does not have this thread flush
		 * the database without end (the WAL is then bounded by
		 * STORE_WAL_MAX_PAGES). */
		if (rc == SQLITE_OK && pass == STORE_CHECKPOINT_PASSES &&
		    grew > STORE_CHECKPOINT_TAIL && rearms < STORE_CHECKPOINT_REARMS) {
			s->ckpt_want = true;
			rearms++;
		} else {
			rearms = 0;
		}
	}
	pthread_mutex_unlock(&s->ckpt_lock);
	return NULL;
}

int store_ckpt_start(struct store *s, char *err, size_t errlen)
{
	int rc = sqlite3_open_v2(s->path, &s->ckpt_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
				 NULL);
	if (rc != SQLITE_OK || store_db_tune(s->ckpt_db) < 0 ||
	    sqlite3_exec(s->ckpt_db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: the checkpoint connection: %s", s->path,
			 s->ckpt_db ? sqlite3_errmsg(s->ckpt_db) : sqlite3_errstr(rc));
		return -EIO;
	}
	pthread_mutex_init(&s->ckpt_lock, NULL);
	pthread_cond_init(&s->ckpt_cond, NULL);
	s->m_checkpoint_seconds = metrics_histogram(
		"ironbell_store_checkpoint_seconds",
		"Time of a WAL checkpoint (its own thread: commits do not wait for it).", NULL,
		metrics_latency_buckets, metrics_latency_nbuckets);
	s->m_checkpoint_tail_seconds = metrics_histogram(
		"ironbell_store_checkpoint_tail_seconds",
		"Time the writer spends copying the last frames of the WAL so that it can "
		"start over.",
		NULL, metrics_latency_buckets, metrics_latency_nbuckets);
	rc = pthread_create(&s->ckpt_thread, NULL, ckpt_main, s);
	if (rc) {
		snprintf(err, errlen, "cannot start the checkpoint thread: %s", strerror(rc));
		return -rc;
	}
	s->ckpt_started = true;
	/* Replaces SQLite's automatic checkpoint on the writer's connection. */
	sqlite3_wal_hook(s->db, wal_hook, s);
	return 0;
}

void store_ckpt_stop(struct store *s)
{
	if (s->ckpt_started) {
		pthread_mutex_lock(&s->ckpt_lock);
		s->ckpt_stopping = true;
		pthread_cond_signal(&s->ckpt_cond);
		pthread_mutex_unlock(&s->ckpt_lock);
		pthread_join(s->ckpt_thread, NULL);
		s->ckpt_started = false;
		pthread_mutex_destroy(&s->ckpt_lock);
		pthread_cond_destroy(&s->ckpt_cond);
	}
	if (s->db)
		sqlite3_wal_hook(s->db, NULL, NULL);
	if (s->ckpt_db) {
		sqlite3_close(s->ckpt_db);
		s->ckpt_db = NULL;
	}
}

void store_ckpt_finish(struct store *s)
{
	int log = 0, done = 0;

	if (!s->ckpt_finish)
		return;
	s->ckpt_finish = false;
	uint64_t t0 = now_mono_ns();
	int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
	/* Busy or locked: the checkpointer is copying it right now. */
	if (rc != SQLITE_OK && rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
		log_warn("store", "checkpoint of the WAL's tail: %s", sqlite3_errmsg(s->db));
	metric_observe(s->m_checkpoint_tail_seconds, (double)(now_mono_ns() - t0) / 1e9);
}

uint64_t store_test_checkpoints(struct store *s)
{
	if (!s->ckpt_started)
		return 0;
	pthread_mutex_lock(&s->ckpt_lock);
	uint64_t n = s->checkpoints;
	pthread_mutex_unlock(&s->ckpt_lock);
	return n;
}

void store_test_wal(struct store *s, uint64_t *ret_restarts, int *ret_pages)
{
	*ret_restarts = __atomic_load_n(&s->ckpt_gen, __ATOMIC_ACQUIRE);
	*ret_pages = s->ckpt_pages_last;
}
