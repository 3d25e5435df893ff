/* kea-internal — declarations shared by the C files of dhcp/kea/ only:
 * the core's state, and what the followers (follow-store.c, follow-api.c)
 * use of it.
 *
 * DESIGN: one follower thread per hook, chosen by params.source. It owns
 * its connection to the source and writes the table only through the
 * functions below: a batch of changes under the write lock
 * (ibkea_table_wrlock .. ibkea_table_unlock), a full load built aside
 * (dhcp_hosts_new + dhcp_hosts_put, no lock held) and swapped in whole
 * (ibkea_table_replace), so that Kea's packet threads wait at most for
 * one batch. It sleeps with ibkea_sleep(), which returns early when the
 * hook stops.
 */
#pragma once

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "dhcp/kea/ironbell-kea.h"

#define IBKEA_RETRY_MS 2000 /* a source that failed is tried again after this */

struct ibkea {
	struct ibkea_params p;
	ibkea_log_fn log;

	pthread_rwlock_t lock;
	struct dhcp_hosts *hosts; /* under lock */
	atomic_bool ready;        /* the table holds a complete load */

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t stop_mu;
	pthread_cond_t stop_cv; /* CLOCK_MONOTONIC */
	bool stopping;          /* under stop_mu */
	atomic_bool stop_flag;  /* the same, for polling without the mutex */
};

/* Logs a line through k->log (printf format). */
void ibkea_log(const struct ibkea *k, enum ibkea_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Sleeps ms milliseconds, or less when the hook stops: true when it is
 * stopping. */
bool ibkea_sleep(struct ibkea *k, unsigned ms);
/* Whether the hook is stopping (no lock). */
bool ibkea_stopping(const struct ibkea *k);

/* The table, under the write lock: the follower applies a batch of
 * changes with dhcp_hosts_put/dhcp_hosts_remove on what wrlock returns. */
struct dhcp_hosts *ibkea_table_wrlock(struct ibkea *k);
void ibkea_table_unlock(struct ibkea *k);
/* Swaps fresh (a complete load, built without the lock) in, frees the
 * old table, and sets ready. fresh NULL: empties the table and clears
 * ready (the source is gone: answer nothing). */
void ibkea_table_replace(struct ibkea *k, struct dhcp_hosts *fresh);

/* The followers' thread functions (arg: the struct ibkea). Each loops
 * until ibkea_stopping(): load, follow, and on an error log it (once per
 * distinct message), wait IBKEA_RETRY_MS and start again. */
void *ibkea_follow_store(void *arg);
void *ibkea_follow_api(void *arg);
