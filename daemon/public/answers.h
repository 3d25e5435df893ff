/* answers — the public listener's answer cache: an index of every
 * Hardware by MAC, address and system UUID, kept by one follower thread
 * from the store's change log, and per Hardware the answers already made
 * (daemon/public/answers.c). Included only inside daemon/. The answers
 * themselves are opaque here (libmicrohttpd responses for the daemon,
 * anything for a test): the index does not know how they are made. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define ANSWERS_SLOTS 16     /* answers kept per Hardware; more are served uncached */
#define ANSWERS_PARAM_MAX 96 /* bytes of an answer's parameter (a path); longer: uncached */

/* Which index a lookup uses. */
enum answers_by { ANSWERS_BY_MAC, ANSWERS_BY_IP, ANSWERS_BY_UUID, ANSWERS_BY_MAX };

/* Which answer a slot holds (with its parameters, struct answers_key). */
enum answers_type {
	ANSWERS_SCRIPT,   /* iPXE script; param: the MAC, pub: the public address */
	ANSWERS_HTTPBOOT, /* /httpboot; param: the client address, pub */
	ANSWERS_EC2,      /* param: the path */
	ANSWERS_HEGEL,
	ANSWERS_NOCLOUD,  /* param: the file */
	ANSWERS_IGNITION,
	ANSWERS_TYPE_MAX
};

struct answers_key {
	enum answers_type type;
	uint32_t pub;      /* the public address the answer names, host order */
	const char *param; /* NUL-terminated, < ANSWERS_PARAM_MAX bytes; "" for none */
};

/* One Hardware as the index knows it. Valid while the caller holds the
 * read lock (answers_rdlock); the fields never change. */
struct answers_rec {
	const char *namespace_, *name;
	uint64_t rv;       /* its resourceVersion */
	bool awaiting_boot; /* bootmark_awaiting(): served uncached */
	unsigned n_ips;
	char (*ips)[STORE_KEY_LEN]; /* its addresses, as the store indexes them */
	unsigned n_macs;
	uint8_t (*macs)[6]; /* its interfaces' 48-bit MACs */
};

/* Frees one answer (the daemon: MHD_destroy_response). */
typedef void (*answers_free_fn)(void *answer);

/* A new, empty cache over store s (borrowed: it must outlive the cache).
 * Nothing is followed until answers_start() or answers_sync(). NULL on
 * allocation failure. */
struct answers *answers_new(struct store *s, answers_free_fn free_answer);
/* Starts the follower thread and makes a the process's current cache
 * (answers_current). 0 or a negative errno (err says why). */
int answers_start(struct answers *a, char *err, size_t errlen);
/* Stops the follower and waits for it (if started): no prebuild function
 * runs after it returns, and the cache is not started again. Requests still find the index (no longer
 * followed: they take the store path once a Hardware commit is newer).
 * Accepts NULL. */
void answers_stop(struct answers *a);
/* Stops the follower (if started), frees every record and answer. Call it
 * once no request can use a anymore (after the listeners stopped).
 * Accepts NULL. */
void answers_free(struct answers *a);
/* The cache answers_start() made current, or NULL. */
struct answers *answers_current(void);

/* For tests: reads the change log up to now on the calling thread (its
 * own store reader), relisting when the log was trimmed, as the follower
 * does. 0 or a negative errno. Not together with a started follower. */
int answers_sync(struct answers *a);
/* For tests: makes the next answers_sync() list every Hardware again. */
void answers_test_relist(struct answers *a);

/* Answers made before they are asked: fn is called by the follower, on
 * its thread, for each record it has not yet called it for since the
 * last answers_prebuild_again() (records new or changed, every record at
 * start and after a configuration change), with the read lock held (the
 * record and the configuration stay as they are) and the follower's
 * store reader. fn makes what it wants through answers_get(),
 * answers_build_lock() and answers_put(), as a request does. Set before
 * answers_start(); NULL (the default): answers are made on first use
 * only. */
typedef void (*answers_prebuild_fn)(void *arg, struct answers *a, const struct answers_rec *rec,
				    struct store_reader *r);
void answers_set_prebuild(struct answers *a, answers_prebuild_fn fn, void *arg);
/* Turns the prebuild on or off (on at answers_set_prebuild with a
 * function): off, the follower calls nothing; turned on, every record
 * gets fn. Any thread. */
void answers_prebuild_enable(struct answers *a, bool on);
/* Every record gets fn again, soon, on the follower's thread (a public
 * address answers are made for was added). Any thread; a NULL a is
 * ignored. */
void answers_prebuild_again(struct answers *a);
/* How many answers rec holds (at most ANSWERS_SLOTS). Under the read
 * lock. */
unsigned answers_held(const struct answers_rec *rec);
/* Records fn was called for since the cache was made (for tests). */
uint64_t answers_prebuilt(struct answers *a);
/* True when cfg is the configuration of the answers (answers_set_config).
 * Under the read lock. */
bool answers_config_is(struct answers *a, const void *cfg);

/* The configuration the answers are made with (a pointer compared, never
 * read): every answer is dropped, and a request whose snapshot is not cfg
 * is served uncached. Call it after each reload with the new snapshot. */
void answers_set_config(struct answers *a, const void *cfg);

/* The request path. Between answers_rdlock() and answers_rdunlock() the
 * records found stay valid and their answers alive. */
void answers_rdlock(struct answers *a);
void answers_rdunlock(struct answers *a);
/* True when the index has every committed Hardware change and cfg is the
 * configuration of the answers: the cache may answer. Under the read
 * lock. */
bool answers_usable(struct answers *a, const void *cfg);
/* True when every Hardware the index has applied is wholly in it (none
 * left out for want of memory or a parse, none with keys beyond
 * ANSWERS_MAX_KEYS since the last full listing): with answers_usable(), a
 * miss in answers_find() then means that no Hardware has the key. Under
 * the read lock. */
bool answers_complete(struct answers *a);
/* The record whose MAC, IPv4/IPv6 address or system UUID is key (text,
 * any case; normalized here), or NULL. Under the read lock. */
const struct answers_rec *answers_find(struct answers *a, enum answers_by by, const char *key);
/* The answer of rec for k, or NULL. Lock-free on the record: under the
 * read lock only. */
void *answers_get(const struct answers_rec *rec, const struct answers_key *k);
/* Serializes the builders of one record's answers (a miss). */
void answers_build_lock(const struct answers_rec *rec);
void answers_build_unlock(const struct answers_rec *rec);
/* Publishes answer (ownership taken on success) of bytes bytes for k in
 * rec, under the read lock and the record's build lock. 0, or -ENOSPC
 * (slots full, parameter too long) / -ENOMEM: the caller keeps answer. */
int answers_put(const struct answers_rec *rec, const struct answers_key *k, void *answer,
		size_t bytes);
/* Counts one answer served from rec at now_ns (monotonic): returns how
 * many were served since the last time it returned non-zero, when an info
 * line is due (the first one, then at most one per ANSWERS_LOG_EVERY_NS),
 * else 0 (debug). */
#define ANSWERS_LOG_EVERY_NS (60ull * 1000000000ull)
uint64_t answers_log_due(const struct answers_rec *rec, uint64_t now_ns);

/* Counts a request's outcome for ironbell_http_answers_total; absent: no
 * Hardware has what was asked for, known without a store read. */
enum answers_result {
	ANSWERS_HIT,
	ANSWERS_BUILT,
	ANSWERS_UNCACHED,
	ANSWERS_ABSENT,
	ANSWERS_RESULT_MAX
};
void answers_count(enum answers_result r);

/* For tests and the figures: records in the index, answers' bytes. */
size_t answers_records(struct answers *a);
size_t answers_bytes(struct answers *a);
