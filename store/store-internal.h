/* store-internal — what the files of store/ share and nobody else sees
 * (tests/unit/check_store.c includes it for the migration test and the
 * pure helpers).
 *
 * Threads: struct store's queue, subscriptions and flags are guarded by
 * its locks (named per field below). The writer-side fields (db, wstmt,
 * rv, changed) belong to the writer thread once store_open() has started
 * it, and to store_open()/store_close() before and after.
 */
#pragma once

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* ---- named limits ---- */
#define STORE_MAX_NAME 253        /* metadata.name / namespace length */
#define STORE_MAX_PATCH_DEPTH 128 /* nesting of a merge patch */
#define STORE_MAX_HW_KEYS 256     /* index keys one Hardware may hold */
#define STORE_MAX_FIELD 96        /* "spec.interfaces[12].dhcp.ip.address" */
#define STORE_BUSY_TIMEOUT_MS 5000
#define STORE_CACHE_KIB 2048 /* SQLite page cache per connection */

#define STORE_DEFAULT_CHANGES_RETENTION 100000u
#define STORE_DEFAULT_EVENTS_RETENTION 10000u
#define STORE_DEFAULT_BATCH_MAX 1024u
/* Events waiting for the writer (store_event() does not wait): past
 * either bound a new one is dropped and counted. The count bounds the
 * backlog in transactions (four full batches), the bytes the memory when
 * messages are long (a syslog text may have 64 KiB). */
#define STORE_MAX_QUEUED_EVENTS 4096u
#define STORE_MAX_QUEUED_EVENT_BYTES (32u << 20)

#define STORE_ANNOTATION_SYSTEM_UUID "ironbell.dev/system-uuid"

/* The three Hardware index tables, in schema order. */
enum store_index {
	STORE_INDEX_MAC,
	STORE_INDEX_IP,
	STORE_INDEX_UUID,
	STORE_INDEX_MAX
};

/* The table that holds index ix ("hw_mac", "hw_ip", "hw_uuid"). */
const char *store_index_table(enum store_index ix);

/* ---- the write queue ---- */

enum store_req_type {
	STORE_REQ_WRITE,
	STORE_REQ_EVENT,
	STORE_REQ_SYNC,
	STORE_REQ_EXEC, /* tests only: store_test_exec_writer() */
	STORE_REQ_LEASE,        /* lease.c: owned by the writer when async */
	STORE_REQ_LEASE_EXPIRE, /* lease.c */
};

struct store_completion;

struct store_req {
	struct store_req *next;
	enum store_req_type type;
	bool done; /* guarded by store.lock; set after the commit */
	/* WRITE: the caller's ops, borrowed until done (with cq: until the
	 * result is drained; the outcome then goes in lease_error and
	 * lease_message, as a lease's does) */
	struct store_op *ops;
	size_t n;
	bool atomic;
	/* EVENT: owned by the request, freed by the writer */
	enum store_kind ev_kind;
	char *ev_ns, *ev_name, *ev_type, *ev_reason, *ev_message;
	int64_t ev_time;
	size_t ev_bytes; /* what it counts against STORE_MAX_QUEUED_EVENT_BYTES */
	/* EXEC: borrowed until done; the result is set before done */
	const char *sql;
	int exec_result;
	/* LEASE: the normalized lease; with cq, the request belongs to the
	 * writer until completed, then to cq until drained (lease.c) */
	struct store_lease lease;
	struct store_completion *cq;
	uint64_t tag;
	int lease_error;
	char lease_message[STORE_LEASE_MESSAGE_LEN];
	/* LEASE_EXPIRE */
	int64_t expire_now;
	bool expire_chunk; /* the next STORE_EXPIRE_CHUNK leases only (async sweep) */
	uint64_t count; /* leases removed (expiry), or released by take_ip (a put) */
};

struct store_subscription {
	struct store_subscription *next; /* guarded by store.sub_lock */
	uint32_t mask;
	int fd;
};

enum store_wstmt {
	W_GET,
	W_GET_JSON,
	W_INSERT,
	W_UPDATE,
	W_DELETE,
	W_CHANGE,
	W_META_SET,
	W_TRIM_CHANGES,
	W_EVENT,
	W_TRIM_EVENTS,
	W_MIRROR_GET,
	W_MIRROR_SET,
	W_MIRROR_DEL,
	/* the savepoints of writer.c: "op" (one op), "req" (an atomic request) */
	W_SAVEPOINT_OP,
	W_SAVEPOINT_REQ,
	W_ROLLBACK_OP,
	W_ROLLBACK_REQ,
	W_RELEASE_OP,
	W_RELEASE_REQ,
	W_IDX_DEL, /* + index: 3 statements */
	W_IDX_INS = W_IDX_DEL + STORE_INDEX_MAX,
	W_IDX_OWNER = W_IDX_INS + STORE_INDEX_MAX,
	W_STMT_MAX = W_IDX_OWNER + STORE_INDEX_MAX
};

#define STORE_LEASE_WSTMT_MAX 11 /* writer statements of lease.c */
#define STORE_EXPIRE_CHUNK 500   /* leases an asynchronous expiry sweep examines */

struct store {
	char *path;
	struct store_options opts;
	bool readonly; /* store_open_readonly(): no writer, no checkpointer;
			* every write is -EROFS (readonly.c) */

	pthread_mutex_t lock;      /* guards queue_head/tail, stopping, done flags */
	pthread_cond_t queue_cond; /* writer waits for work */
	pthread_cond_t done_cond;  /* writers' callers wait for their commit */
	struct store_req *queue_head, *queue_tail;
	size_t queued;     /* requests in the queue */
	size_t queued_events, queued_event_bytes; /* EVENT requests in it, and their size */
	bool writer_idle;  /* the writer sleeps on queue_cond for work */
	bool stopping;
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t sub_lock; /* guards subs */
	struct store_subscription *subs;

	/* writer thread only */
	sqlite3 *db;
	sqlite3_stmt *wstmt[W_STMT_MAX];
	uint64_t rv;              /* newest resourceVersion handed out */
	uint64_t rv_committed;    /* as of the last commit */
	uint64_t changes_trimmed; /* highest change rv dropped by retention */
	uint32_t changed;         /* kind bits changed in the open transaction */
	uint64_t kind_rv[STORE_KIND_MAX]; /* atomic: rv of the last commit that changed
					   * the kind (store_kind_committed_rv) */
	size_t last_batch;        /* requests in the last transaction */

	sqlite3_stmt *lstmt[STORE_LEASE_WSTMT_MAX]; /* writer thread: lease.c's */
	char expire_from[STORE_LEASE_KEY_LEN];       /* writer thread: where the next
						      * expiry chunk starts ("": the
						      * first lease) */
	uint64_t transactions; /* guarded by lock: batches run (for tests) */

	/* checkpoint.c */
	pthread_t ckpt_thread;
	bool ckpt_started;
	sqlite3 *ckpt_db;           /* the checkpointer thread's */
	int ckpt_pages_at_wake;     /* writer thread: WAL size at the last wake */
	int ckpt_pages_last;        /* writer thread: WAL size after the last commit */
	bool ckpt_finish;           /* writer thread: copy the WAL's tail itself */
	uint64_t ckpt_gen;          /* WAL generations (starts over); writer writes,
				     * checkpointer reads; atomic */
	uint64_t ckpt_backfilled;   /* gen << 32 | frames copied; checkpointer writes,
				     * writer reads; atomic */
	pthread_mutex_t ckpt_lock;  /* guards the three below */
	pthread_cond_t ckpt_cond;
	bool ckpt_want, ckpt_stopping;
	bool ckpt_not_idle;         /* opts.checkpoint_not_idle */
	int ckpt_every;             /* WAL growth in pages between wakes */
	uint64_t checkpoints;       /* run (for tests) */
	struct metric *m_checkpoint_seconds, *m_checkpoint_tail_seconds;

	struct metric *m_write_seconds, *m_transactions, *m_writes_ok, *m_writes_error;
	struct metric *m_events_dropped;

	struct store_objcache *oc; /* objcache.c: its own lock */
};

/* For tests only: runs sql on the writer's connection, from the writer
 * thread, inside the transaction of the batch that holds the request (so
 * a PRAGMA such as max_page_count takes effect for the writes queued after
 * it). sql is borrowed until the call returns. Returns 0, -EIO when SQLite
 * refused it, or -ESHUTDOWN. */
int store_test_exec_writer(struct store *s, const char *sql);

/* writer.c: queues rq and waits until the writer has run and committed it
 * (0), or -ESHUTDOWN. */
int store_submit_wait(struct store *s, struct store_req *rq);
/* writer.c: queues rq, which the writer then owns, and returns at once.
 * 0, or -ESHUTDOWN (rq stays the caller's). */
int store_submit_async(struct store *s, struct store_req *rq);
/* For tests: how many transactions (batches) the writer has run. */
uint64_t store_test_transactions(struct store *s);

/* ---- objcache.c: the trees the writer last wrote or read ---- */

#define STORE_DEFAULT_OBJECT_CACHE_KIB 16384u /* of JSON text, Workflows and bmc objects */

struct store_objcache;
int store_objcache_new(struct store *s, size_t max_text_bytes);
void store_objcache_free(struct store *s);
/* Drops every tree held. */
void store_objcache_clear(struct store *s);
/* A new reference to the tree held for k/ns/name when it is at rv (and
 * row id, unless id < 0), else NULL. The tree is shared: read it only. */
json_t *store_objcache_get(struct store *s, enum store_kind k, const char *ns, const char *name,
			   sqlite3_int64 id, uint64_t rv);
/* The writer: k/ns/name is now obj (a reference is taken; from now on
 * nobody changes obj) at row id and rv, text_len bytes of JSON; obj NULL
 * (or a put that fails) removes what was held. */
void store_objcache_put(struct store *s, enum store_kind k, const char *ns, const char *name,
			sqlite3_int64 id, uint64_t rv, json_t *obj, size_t text_len);
void store_objcache_del(struct store *s, enum store_kind k, const char *ns, const char *name);
/* For tests and metrics: trees held, their text, hits and misses. */
void store_objcache_stats(struct store *s, size_t *ret_n, size_t *ret_text, uint64_t *ret_hits,
			  uint64_t *ret_misses);

/* ---- checkpoint.c ---- */

#define STORE_CHECKPOINT_PAGES 16000 /* WAL growth that wakes the checkpointer (default) */
#define STORE_CHECKPOINT_TAIL 16     /* frames left that the writer copies itself */
#define STORE_CHECKPOINT_PASSES 8    /* back-to-back passes of the checkpointer */
#define STORE_CHECKPOINT_REARMS 4    /* rounds of passes it starts itself, in a row */
#define STORE_WAL_MAX_PAGES 32768    /* past this, the writer copies what is left */

/* Opens the checkpointer's connection, starts its thread and hooks the
 * writer's connection (s->db, already open) to wake it. 0, or -EIO /
 * -errno with a message. */
int store_ckpt_start(struct store *s, char *err, size_t errlen);
/* Stops the thread (after the writer thread has stopped) and closes its
 * connection. Safe when not started. */
void store_ckpt_stop(struct store *s);
/* Writer thread, between transactions: when the hook asked for it, copies
 * the WAL's last frames so that the next transaction starts it over. */
void store_ckpt_finish(struct store *s);
/* For tests: checkpoints run so far. */
uint64_t store_test_checkpoints(struct store *s);
/* For tests, after a write has returned: how many times the WAL has
 * started over, and its size in pages after the last commit. */
void store_test_wal(struct store *s, uint64_t *ret_restarts, int *ret_pages);

/* ---- walbuf.c ---- */

/* The VFS of the writer's connection: the default one, but for its WAL
 * writes, gathered into one write per commit. */
#define STORE_WALBUF_VFS "ironbell-walbuf"
/* Registers it (once per process; not the default VFS). 0 or -EIO. */
int store_walbuf_register(void);
/* For tests: write calls made to WAL files through it so far. */
unsigned long store_walbuf_writes(void);

/* ---- lease.c ---- */

/* Runs a LEASE or LEASE_EXPIRE request inside the writer's transaction
 * (writer thread, in its own savepoint): sets lease_error (and the
 * message) or expired. Returns 0, or -EIO when the whole batch must be
 * abandoned (the transaction is gone). */
int store_lease_exec(struct store *s, struct store_req *rq);
/* After the batch: fails a lease request with error and message (the
 * batch was rolled back). */
void store_lease_fail(struct store_req *rq, int error, const char *why);
/* Hands rq (heap, owned) to the writer with completion queue c and the
 * caller's tag: it counts against c's max (-EAGAIN, rq freed, when c is
 * full) and belongs to the writer, then to c until drained, where it is
 * freed. 0, -EAGAIN or -ESHUTDOWN (rq freed). */
int store_submit_completed(struct store *s, struct store_req *rq, struct store_completion *c,
			   uint64_t tag);
/* After the commit, with no store lock held: hands the async lease
 * requests of list (linked by next, in commit order) to their completion
 * queues (which then own them), keeping their order, and wakes each
 * queue's eventfd once. */
void store_lease_complete(struct store_req *list);
/* A statement of reader r kept for its life (lease reads): slot <
 * STORE_READER_EXTRA_STMTS, the same sql on every call for a slot. NULL on
 * error. Reset and unbound. */
#define STORE_READER_EXTRA_STMTS 8
sqlite3_stmt *store_reader_stmt(struct store_reader *r, int slot, const char *sql);

/* ---- schema.c ---- */

/* The SQL that creates schema version v from v-1 (v >= 1), or NULL. Tests
 * use it to build an old database by hand. */
const char *store_schema_sql(int v);
/* Applies every missing migration to db, each in its own transaction.
 * 0, or a negative errno and a message in err. */
int store_schema_migrate(sqlite3 *db, char *err, size_t errlen);
/* Refills the Hardware index tables from the objects table (in the
 * caller's transaction). A key two objects claim is kept for the first and
 * logged. 0 or a negative errno. */
int store_index_rebuild(sqlite3 *db, char *err, size_t errlen);
/* Sets the pragmas every connection wants (busy timeout, cache). */
int store_db_tune(sqlite3 *db);

/* ---- object.c: pure helpers on JSON ---- */

/* One index key of a Hardware: the normalized value and the field path
 * that holds it. */
struct store_hw_key {
	enum store_index index;
	char value[STORE_KEY_LEN];
	char field[STORE_MAX_FIELD];
};

struct store_hw_keys {
	size_t n;
	struct store_hw_key k[STORE_MAX_HW_KEYS];
};

/* Collects the index keys of Hardware obj. A value held twice within obj
 * is -EINVAL with a message naming both fields; a malformed MAC/IP/UUID
 * is -EINVAL too. 0 on success. */
int store_hw_keys_get(const json_t *obj, struct store_hw_keys *ret, char *err, size_t errlen);

/* A random version 4 UUID (getrandom), lowercase. 0 or a negative errno. */
int store_uuid_v4(char out[37]);

/* RFC 7386: returns a new value, target merged with patch (neither is
 * changed), or NULL when the patch nests deeper than
 * STORE_MAX_PATCH_DEPTH or memory runs out. target may be NULL. */
json_t *store_merge_patch(const json_t *target, const json_t *patch);

/* A string member of obj.metadata, or NULL. */
const char *store_meta_str(const json_t *obj, const char *key);

/* ---- ops.c: one write op inside the writer's transaction ---- */

/* Runs op against s->db (writer thread, inside a savepoint). Fills
 * op->error, result, object, message. Returns op->error. */
int store_op_exec(struct store *s, struct store_op *op);
/* Sets op->error and op->message (printf-style, cut to less than
 * STORE_OP_MESSAGE_MAX bytes, a heap string that replaces the one op held)
 * and drops op->object. */
void store_op_fail(struct store_op *op, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prepares the writer's statements. 0 or a negative errno. */
int store_wstmt_prepare(struct store *s);
void store_wstmt_finalize(struct store *s);
