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
#define IBKEA_CFG_SLOTS 8   /* Kea server identifiers whose policy configuration is kept */

/* The policy configuration for one of Kea's server identifiers
 * (dhcp_settings_policy(), as ironbelld's server keeps one per local
 * address): made once, under cfg_mu, then only read. ready is set last
 * (release), so a reader that sees it (acquire) sees the rest. */
struct ibkea_cfg_slot {
	atomic_bool ready;
	uint32_t server_id;
	int error; /* dhcp_settings_policy's: logged once, when the slot is made */
	struct dhcp_policy_config cfg;
};

struct ibkea {
	struct ibkea_params p;
	ibkea_log_fn log;

	pthread_rwlock_t lock;
	struct dhcp_hosts *hosts; /* under lock */
	atomic_bool ready;        /* the table holds a complete load */
	atomic_uint_fast64_t generation; /* bumped by every change of the table,
					  * under the write lock */

	pthread_mutex_t cfg_mu; /* makes slots; never held to read one */
	struct ibkea_cfg_slot cfgs[IBKEA_CFG_SLOTS];

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t stop_mu;
	pthread_cond_t stop_cv; /* CLOCK_MONOTONIC */
	bool stopping;          /* under stop_mu */
	atomic_bool stop_flag;  /* the same, for polling without the mutex */
	atomic_bool relog;      /* ibkea_relog(): the source's next error is said again */
};

/* For the sources: true once after ibkea_relog(), when the error they last
 * logged is to be forgotten, so that it is logged again. */
bool ibkea_relog_take(struct ibkea *k);

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

/* ---- the admin API's answers, decoded (watchline.c) ---- */

#define IBKEA_API_MAX_LINE (1024u * 1024) /* bytes of one watch event line */
#define IBKEA_API_MAX_NAME 253            /* metadata.name, .namespace */
#define IBKEA_API_MAX_MESSAGE 256         /* bytes of an ERROR's message kept */

enum ibkea_watch_type {
	IBKEA_WATCH_ADDED,
	IBKEA_WATCH_MODIFIED,
	IBKEA_WATCH_DELETED,
	IBKEA_WATCH_BOOKMARK,
	IBKEA_WATCH_ERROR,
	IBKEA_WATCH_MAX
};

/* One line of a watch, checked. */
struct ibkea_watch_event {
	enum ibkea_watch_type type;
	struct json_t *object;         /* owned: the Hardware, the bookmark, or the Status */
	uint64_t rv;                   /* metadata.resourceVersion (> 0); 0 for ERROR */
	const char *namespace_, *name; /* borrowed from object; "" for BOOKMARK, ERROR */
	int code;                      /* ERROR: the Status's code, 0 when it has none */
	char message[IBKEA_API_MAX_MESSAGE + 1]; /* ERROR: its message, control
						  * characters made '?', "" if none */
};

/* Decodes one line of the admin API's watch stream (len bytes, without
 * its '\n'; a trailing '\r' is allowed) into *ret: {"type": T, "object":
 * {...}} with T one of ADDED, MODIFIED, DELETED (a Hardware with
 * metadata.name, .namespace and a decimal .resourceVersion), BOOKMARK
 * (metadata.resourceVersion) or ERROR (a Status; its code and message
 * optional). A line longer than max bytes is refused before it is parsed.
 * 0 with ret->object owned by the caller (ibkea_watch_event_clear), or
 * -E2BIG (over max), -EBADMSG (anything else wrong), -ENOMEM, with a
 * message in err that quotes at most a few bytes of the line, sanitized;
 * *ret is then untouched. Pure: no I/O, no logging. */
int ibkea_watch_line(const char *line, size_t len, size_t max, struct ibkea_watch_event *ret,
		     char *err, size_t errlen);
/* Drops ev's object. Accepts a cleared event. */
void ibkea_watch_event_clear(struct ibkea_watch_event *ev);

/* Decodes the admin API's answer to a list of Hardware (len bytes, at
 * most max, at most max_items items): {"metadata": {"resourceVersion":
 * "N"}, "items": [{...}, ...]}. 0 with a new reference to the items array
 * in *ret_items (each item a JSON object) and N in *ret_rv; -E2BIG (too
 * large, too many items), -EBADMSG, -ENOMEM with a message in err. */
int ibkea_list_parse(const char *body, size_t len, size_t max, size_t max_items,
		     struct json_t **ret_items, uint64_t *ret_rv, char *err, size_t errlen);
