/* store — the one SQLite database that every part of ironbelld meets in.
 *
 * Objects are kept in their Kubernetes JSON form (apiVersion, kind,
 * metadata, spec, status). Hardware's MACs, IPs and system UUID are copied
 * into index tables that are unique across all Hardware. Every change bumps
 * a store-wide resourceVersion and is appended to a change log that watches
 * resume from. See docs/architecture.md, "Threads", for who writes.
 *
 * Threads: store_open() starts the single writer thread; every other thread
 * hands it writes through store_write() (which blocks the caller until the
 * transaction holding the write has committed: group commit) and reads
 * through a store_reader of its own (a read-only connection that never
 * leaves the thread that made it).
 *
 * Errors are negative errnos with a human message in the op or error
 * struct:
 *   -ENOENT      not found                          (HTTP 404 NotFound)
 *   -EEXIST      already exists                     (409 AlreadyExists)
 *   -ESTALE      stale resourceVersion              (409 Conflict)
 *   -EADDRINUSE  a MAC/IP/UUID another object holds (409 Conflict)
 *   -EINVAL      fails validation                   (422 Invalid)
 *   -EPERM       owned by Kubernetes, local edit    (403 Forbidden)
 *   -ETIME       watch resourceVersion too old      (410 Gone)
 *   -ECANCELED   rolled back with its atomic batch  (the batch's error)
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf; /* common/buf.h */

enum store_kind {
	STORE_KIND_HARDWARE,
	STORE_KIND_TEMPLATE,
	STORE_KIND_WORKFLOW,
	STORE_KIND_MACHINE, /* bmc.tinkerbell.org */
	STORE_KIND_JOB,     /* bmc.tinkerbell.org */
	STORE_KIND_TASK,    /* bmc.tinkerbell.org */
	STORE_KIND_SECRET,  /* core v1, for BMC credentials */
	STORE_KIND_MAX
};

struct store_kind_info {
	const char *kind;          /* "Hardware" */
	const char *group;         /* "tinkerbell.org", "bmc.tinkerbell.org", "" for core */
	const char *version;       /* "v1alpha1", "v1" */
	const char *api_version;   /* "tinkerbell.org/v1alpha1", "v1" */
	const char *plural;        /* "hardware" */
	const char *singular;      /* "hardware" */
	const char *short_names[3]; /* NULL-terminated: "hw" */
};

/* Never NULL for k < STORE_KIND_MAX. */
const struct store_kind_info *store_kind_info(enum store_kind k);
/* Resolves what a user types: kind, plural, singular or short name, case
 * insensitive, optionally qualified by group ("machines.bmc.tinkerbell.org",
 * "machine.bmc"). Returns 0 or -ENOENT. */
int store_kind_parse(const char *s, enum store_kind *ret);
/* Resolves (apiVersion, kind) as found in an object. 0 or -ENOENT. */
int store_kind_from_object(const char *api_version, const char *kind, enum store_kind *ret);

/* ---- the database ---- */

struct store;

struct store_options {
	uint32_t changes_retention; /* change-log rows kept for watch resume (default 100000) */
	uint32_t events_retention;  /* event rows kept (default 10000) */
	uint32_t batch_max;         /* most write requests per transaction (default 1024) */
	uint32_t commit_delay;      /* microseconds to gather more requests when the last
				     * transaction held STORE_COMMIT_DELAY_MIN or more
				     * (default STORE_DEFAULT_COMMIT_DELAY); see writer.c */
	bool no_commit_delay;       /* commit_delay 0 means the default: this turns it off */
	bool checkpoint_not_idle;   /* tests: the checkpointer at normal priority rather
				     * than SCHED_IDLE, so that a busy machine cannot
				     * starve it (see store/checkpoint.c) */
	uint32_t checkpoint_pages;  /* WAL growth in pages that wakes the checkpointer
				     * (default 4000; tests use less) */
	uint32_t object_cache_kib;  /* decoded objects kept, in KiB of their JSON text
				     * (default 16384; see store/objcache.c) */
};

#define STORE_DEFAULT_COMMIT_DELAY 500u /* microseconds */
#define STORE_COMMIT_DELAY_MIN 4u       /* requests in the last transaction */

/* Opens (creating and migrating as needed) the database at path, in WAL
 * mode, and starts the writer thread. opts may be NULL for defaults. On
 * failure returns a negative errno and writes a message to err. */
int store_open(const char *path, const struct store_options *opts, struct store **ret,
	       char *err, size_t errlen);
/* Opens the database at path for reading only, for another process than
 * the daemon that writes it (the Kea hook): no writer thread, no
 * checkpointer, nothing created or migrated; readers (store_reader_new)
 * and their calls work as usual, every write returns -EROFS (store_write,
 * store_write_async, store_event, the lease writes; store_sync returns 0,
 * store_subscribe NULL with errno EROFS: poll the change log). The file
 * must exist and hold the schema this build reads: -ENOENT (no such
 * file), -EACCES (not readable), -EPROTO (a schema newer or older than
 * store_schema_version(), or not a store at all: the message says which
 * and what to do), -EBUSY (locked past a short busy timeout), -EIO
 * (corrupt, or another SQLite error), each with a message naming path in
 * err. Close with store_close(). */
int store_open_readonly(const char *path, struct store **ret, char *err, size_t errlen);
/* Stops the writer after it has committed everything queued, and closes.
 * Every reader and subscription must be freed first. Accepts NULL. */
void store_close(struct store *s);

/* The schema version this build migrates to (PRAGMA user_version). */
int store_schema_version(void);

/* ---- writes ---- */

/* Who makes a write (store_op.source). Every object is stored with the
 * source that owns it, "local" or "kube"; every change-log row with the
 * source of the op that made it (struct store_change), so that what the
 * daemon's controllers changed can be told from what the watcher mirrored.
 * - STORE_SOURCE_LOCAL: the admin API (the default when op->source is
 *   NULL). Refused on a "kube" object (-EPERM).
 * - STORE_SOURCE_KUBE: the Kubernetes watcher (kube/). Its objects are
 *   stored "kube"; any op of it over a "local" object makes it "kube".
 * - STORE_SOURCE_DAEMON: the daemon's own controllers (bmc/, workflow/,
 *   dhcp/ and daemon/public/ boot marks): allowed on any object, "kube"
 *   ones included; an update leaves the object's stored source as it was,
 *   a create stores "local". Never stored on an object. */
#define STORE_SOURCE_LOCAL "local"
#define STORE_SOURCE_KUBE "kube"
#define STORE_SOURCE_DAEMON "daemon"

enum store_op_type {
	STORE_OP_CREATE,       /* -EEXIST if present */
	STORE_OP_REPLACE,      /* whole object; -ENOENT if absent; rv checked if given */
	STORE_OP_APPLY,        /* create, or replace metadata.labels/annotations and
				* spec of the existing object (status and identity kept);
				* unchanged objects keep their resourceVersion. Like
				* every op, checked against the MAC/IP/UUID indexes as
				* they are when it runs (see store_write()) */
	STORE_OP_MERGE_PATCH,  /* RFC 7386 merge patch of the object, body = patch */
	STORE_OP_STATUS,       /* replace .status only; rv checked if given */
	STORE_OP_STATUS_PATCH, /* merge patch restricted to .status */
	STORE_OP_DELETE,       /* rv checked if given */
	STORE_OP_MIRROR,       /* the object as the API server holds it: source
				* "kube" only (-EINVAL otherwise). Creates or
				* replaces the whole object, identity included:
				* metadata.labels, annotations, ownerReferences,
				* finalizers, deletionTimestamp, uid,
				* creationTimestamp and generation come from body
				* (a uid, creationTimestamp or generation body
				* lacks is kept, or made as by CREATE), every other
				* member of metadata is dropped, resourceVersion
				* is the store's own counter (the cluster's is not
				* stored). Every other top-level member and .status
				* come from body, but with keep_status an existing
				* object keeps its stored .status. Defaulted,
				* validated and indexed as a CREATE; an unchanged
				* object keeps its resourceVersion (UNCHANGED, no
				* change-log row); the object becomes "kube".
				* The labels, annotations and spec that the daemon
				* changed since the last MIRROR (the merge patch
				* from that body to the stored object) are kept
				* over body's, until kube/ has written them back
				* and the cluster sends them; keep_status keeps
				* the status only of the same object (same uid),
				* or of one the store never had from the cluster
				* when body has no status (a Job or Task the
				* daemon made, created there by kube/: the API
				* server gave it a uid and dropped its status).
				* body is kept as the cluster's version
				* (store_get_mirror()) */
	STORE_OP_MAX
};

enum store_result {
	STORE_RESULT_NONE,
	STORE_RESULT_CREATED,
	STORE_RESULT_CONFIGURED, /* changed */
	STORE_RESULT_UNCHANGED,
	STORE_RESULT_DELETED,
};

struct store_op {
	/* in */
	enum store_op_type type;
	enum store_kind kind;
	const char *namespace_; /* NULL: taken from body's metadata, else "default" */
	const char *name;       /* NULL: taken from body's metadata */
	json_t *body;           /* borrowed; the object, or the merge patch; an
				 * APPLY fills the CRD defaults into it
				 * (store_default()) */
	const char *body_text;  /* when body is NULL: the same as JSON text of
				 * body_text_len bytes, borrowed; the writer parses
				 * it when the op runs and frees the tree after, so
				 * that a large atomic write holds its objects as
				 * text (a tenth of their trees) */
	size_t body_text_len;
	const char *resource_version; /* precondition for REPLACE/STATUS/DELETE, or NULL;
				       * for REPLACE, metadata.resourceVersion in body
				       * counts too */
	const char *source;           /* STORE_SOURCE_LOCAL (NULL: the default),
				 * STORE_SOURCE_KUBE or STORE_SOURCE_DAEMON (see
				 * above); anything else is -EINVAL. A "kube"
				 * object refuses edits whose source is "local"
				 * (-EPERM) */
	bool keep_status;             /* MIRROR of an existing object: keep its stored
				 * .status rather than body's */
	bool take_body;         /* STATUS: the stored object may keep body's .status
				 * rather than a copy of it; the caller promises not
				 * to change body from when it queues the op (it may
				 * still read and release it) */
	bool no_object;         /* leave object NULL: the writer drops it as soon
				 * as the op has run, so a large atomic write does
				 * not hold a copy of every object until it returns */
	/* out */
	int error;               /* 0 or negative errno */
	enum store_result result;
	json_t *object;          /* new reference: the object as stored (the last
				  * state, for DELETE); caller json_decref()s. It
				  * is shared with the store (store_change_object()):
				  * read it, copy what you change, never change it */
	uint64_t rv;             /* that object's resourceVersion, also with no_object */
	char *message;           /* NULL, or on error a heap string of less than
				  * STORE_OP_MESSAGE_MAX bytes: what and why, naming
				  * the object, e.g. `hardware "default/b":
				  * spec.interfaces[0].dhcp.mac "aa:..:01" is already
				  * used by hardware "default/a"`; owned by the op,
				  * freed by store_op_clear(); read it through
				  * store_op_message(). NULL when the op succeeded, so
				  * that a large atomic write pays nothing for it */
};

/* The longest op message, with its terminating NUL: a longer one is cut. */
#define STORE_OP_MESSAGE_MAX 1024

/* Queues ops to the writer and waits until they are committed or refused.
 * With atomic, all ops are in one savepoint: if any fails, none is applied,
 * that op carries its error and the others -ECANCELED. Without, each op
 * stands alone. Returns 0 when every op succeeded, else the first error.
 *
 * Ops run in order, and each must leave the Hardware indexes unique when
 * it runs: uniqueness is not deferred to the end of an atomic write. So
 * swapping the MACs (or IPs) of two Hardware in one atomic write of two
 * APPLYs fails with -EADDRINUSE (409) and changes nothing; put first an op
 * that frees one of the addresses (a, without the MAC; then b with a's
 * MAC; then a with b's) and the same atomic write succeeds.
 *
 * When the database itself fails (disk full, I/O error), the whole
 * transaction the writer was running is rolled back: every op of every
 * request in it fails with -EIO, "the database refused the write: ...",
 * including ops that had succeeded and requests of other callers, and no
 * resourceVersion is used up. */
int store_write(struct store *s, struct store_op *ops, size_t n, bool atomic);

/* Convenience: a single op. */
int store_write1(struct store *s, struct store_op *op);

/* Releases what an op holds (op->object, op->message) and sets them to
 * NULL, so that the op may run again. op may be NULL. */
void store_op_clear(struct store_op *op);

/* op's error message: op->message, or "" when it has none (it succeeded,
 * or the message could not be allocated). Valid until op is cleared or
 * run again. */
const char *store_op_message(const struct store_op *op);

/* The longest event message, in bytes: room for a syslog text of up to
 * 65535 bytes (syslog.max_message's largest) with its prefix. */
#define STORE_MAX_EVENT_MESSAGE (65535 + 1024)

/* Appends an event (Kubernetes-style: type Normal|Warning, reason, message)
 * for an object. Queued; does not wait for the commit. The table keeps the
 * newest events_retention rows. Every field is stored as valid UTF-8, an
 * ill-formed sequence as U+FFFD. A message longer than
 * STORE_MAX_EVENT_MESSAGE is cut between characters, within that length,
 * and ends with "...". At most STORE_MAX_QUEUED_EVENTS events (and
 * STORE_MAX_QUEUED_EVENT_BYTES, store-internal.h) wait for the writer:
 * past that the event
 * is dropped and counted (ironbell_store_events_dropped_total). Returns 0,
 * 1 when the message was cut (the event is queued all the same), -ENOBUFS
 * when the queue is full, -ESHUTDOWN or -ENOMEM. */
int store_event(struct store *s, enum store_kind k, const char *ns, const char *name,
		const char *type, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* Waits until everything queued before this call is committed. */
int store_sync(struct store *s);

/* ---- reads ---- */

struct store_reader;

/* A read-only connection for the calling thread. Use it from that thread
 * only. NULL on failure. */
struct store_reader *store_reader_new(struct store *s);
void store_reader_free(struct store_reader *r);

/* Gets one object. 0 and a new reference, or -ENOENT. */
int store_get(struct store_reader *r, enum store_kind k, const char *ns, const char *name,
	      json_t **ret);

/* The cluster's version of an object from Kubernetes, as the watcher last
 * mirrored it (STORE_OP_MIRROR's body: the cluster's resourceVersion,
 * status and all), while the store holds the object. 0 and a new
 * reference, or -ENOENT (no such object, or not from the cluster). */
int store_get_mirror(struct store_reader *r, enum store_kind k, const char *ns, const char *name,
		     json_t **ret);

/* Lists objects of a kind, sorted by namespace then name. ns NULL means all
 * namespaces. selector is a parsed label selector or NULL. Returns 0, a new
 * JSON array in *ret_items, and the store's resourceVersion at the time of
 * the read in *ret_rv (may be NULL). */
struct store_selector;
int store_list(struct store_reader *r, enum store_kind k, const char *ns,
	       const struct store_selector *sel, json_t **ret_items, uint64_t *ret_rv);

/* The same list without decoding: appends the objects' stored JSON texts to
 * out, separated by commas (the inside of a JSON array), decoding a row only
 * when a selector must look at its labels. For large lists, whose decoded
 * form would cost ten times the text. On failure out is as it was. */
int store_list_text(struct store_reader *r, enum store_kind k, const char *ns,
		    const struct store_selector *sel, struct buf *out, size_t *ret_n,
		    uint64_t *ret_rv);

/* Calls fn for each object of kind k (every namespace, sorted by namespace
 * then name) with its stored JSON text (len bytes, not NUL-terminated,
 * valid during the call only), inside one read transaction: the objects
 * are one snapshot, whose resourceVersion goes to *ret_rv (may be NULL),
 * so a caller can follow with store_changes() from there. Memory stays
 * that of one row, however many objects there are. fn returns 0 to go
 * on, or a negative errno that stops the walk and is returned. */
typedef int (*store_each_fn)(const char *json, size_t len, void *userdata);
int store_each(struct store_reader *r, enum store_kind k, store_each_fn fn, void *userdata,
	       uint64_t *ret_rv);

/* Calls fn(namespace, name, userdata) for every object of kind k whose
 * stored source is source (NULL: any), sorted by namespace then name,
 * inside one read transaction whose resourceVersion goes to *ret_rv (may
 * be NULL); the objects' JSON is not read. The strings are valid during
 * the call only. For the Kubernetes watcher's relist: what the cluster no
 * longer has is deleted from the store. fn returns 0 to go on, or a
 * negative errno that stops the walk and is returned. 0, -EINVAL (unknown
 * kind, no fn), fn's error or -EIO. */
typedef int (*store_name_fn)(const char *ns, const char *name, void *userdata);
int store_names(struct store_reader *r, enum store_kind k, const char *source, store_name_fn fn,
		void *userdata, uint64_t *ret_rv);

/* Counts objects of a kind. */
int store_count(struct store_reader *r, enum store_kind k, uint64_t *ret);

/* The index keys of Hardware as the store writes them, for whoever keeps
 * an index of its own that must find what the store's finds. */
#define STORE_KEY_LEN 64 /* normalized MAC, IP or UUID text */
/* "AA-BB-cc-dd-ee-ff" -> "aa:bb:cc:dd:ee:ff" (6 bytes; 20-byte
 * InfiniBand-style addresses are accepted too), as mac_parse_hw() reads
 * them: colons or dashes, one kind throughout. 0 or -EINVAL. */
int store_norm_mac(const char *in, char out[STORE_KEY_LEN]);
/* An IPv4 or IPv6 address in its canonical text (inet_ntop); an
 * IPv4-mapped IPv6 address (::ffff:10.0.0.1) as its IPv4 address
 * (10.0.0.1). 0 or -EINVAL. */
int store_norm_ip(const char *in, char out[STORE_KEY_LEN]);
/* A UUID (8-4-4-4-12 hex digits) in lowercase. 0 or -EINVAL. */
int store_norm_uuid(const char *in, char out[STORE_KEY_LEN]);

/* Hardware by index: MAC (any case, ':' or '-' separated), IPv4/IPv6
 * address (text), or system UUID. 0 and a new reference, or -ENOENT. */
int store_hardware_by_mac(struct store_reader *r, const char *mac, json_t **ret);
int store_hardware_by_ip(struct store_reader *r, const char *ip, json_t **ret);
int store_hardware_by_uuid(struct store_reader *r, const char *uuid, json_t **ret);

/* The same lookup by MAC without decoding: appends the Hardware's stored
 * JSON text to out. For hot paths that decode only the fields they need
 * (decoding a whole object with jansson costs more than the lookup). 0,
 * -ENOENT, -E2BIG (out's cap) or -EIO. */
int store_hardware_json_by_mac(struct store_reader *r, const char *mac, struct buf *out);

/* The newest committed resourceVersion. */
int store_resource_version(struct store_reader *r, uint64_t *ret);

/* Change log for watches: up to limit changes with resourceVersion > after,
 * of kind k (STORE_KIND_MAX: every kind) in namespace ns (NULL: all), as a
 * new JSON array of {"type": "ADDED|MODIFIED|DELETED", "object": {...}}
 * (object.metadata.resourceVersion is the change's). *ret_last is where
 * to resume: when limit changes were returned, the rv of the last one;
 * otherwise the newest resourceVersion of the snapshot read (never less
 * than `after`), so that a filtered watch moves past the changes it does
 * not want. Returns -ETIME when changes after `after` have already been
 * dropped by retention (the caller must relist: 410 Gone). */
int store_changes(struct store_reader *r, uint64_t after, enum store_kind k, const char *ns,
		  size_t limit, json_t **ret_changes, uint64_t *ret_last);

/* The same change log without decoding: calls fn for each change, oldest
 * first, inside one read transaction, with its kind (STORE_KIND_MAX when
 * the row names a kind this build does not know), namespace, name,
 * resourceVersion, type ("ADDED", "MODIFIED", "DELETED") and the source of
 * the op that made it (STORE_SOURCE_*; "local" for rows written before the
 * store recorded it), all valid
 * during the call only. The object's text is not read unless fn asks for
 * it with store_change_text(): a follower that already holds a change
 * (its own write) costs neither the text's pages nor its decoding. fn
 * returns 0 to go on, or a negative errno that stops the walk and is
 * returned (*ret_n and *ret_last are then left as they were; the changes
 * already given must be given again from `after`). Otherwise *ret_n (may
 * be NULL) is the number of changes given and *ret_last (may be NULL) is
 * where to resume, as for store_changes(); -ETIME as store_changes(). */
struct store_change {
	enum store_kind kind;
	const char *namespace_, *name;
	uint64_t rv;
	const char *type;
	const char *source;
	struct store_reader *reader_; /* private */
};
typedef int (*store_change_fn)(const struct store_change *c, void *userdata);
int store_changes_each(struct store_reader *r, uint64_t after, enum store_kind k, const char *ns,
		       size_t limit, store_change_fn fn, void *userdata, size_t *ret_n,
		       uint64_t *ret_last);
/* Inside fn only: the stored JSON text of change c's object (*ret_len
 * bytes, not NUL-terminated; its metadata.resourceVersion is c->rv),
 * valid until fn returns or asks again. 0 or -EIO. */
int store_change_text(const struct store_change *c, const char **ret_json, size_t *ret_len);
/* Inside fn only: change c's object as the writer built it, when the
 * store still holds that tree (a new reference), else NULL: decode
 * store_change_text() then. The tree is shared with the store and other
 * threads: read it, copy what you change, never change it. Never for a
 * DELETED change. */
json_t *store_change_object(const struct store_change *c);

/* Events, oldest first, with id > after_id, filtered by kind/ns/name when
 * given (k = STORE_KIND_MAX, NULLs: all). Each is {"id", "time" (RFC 3339),
 * "kind", "namespace", "name", "type", "reason", "message"}. */
int store_events(struct store_reader *r, uint64_t after_id, enum store_kind k, const char *ns,
		 const char *name, size_t limit, json_t **ret_events);

/* ---- change notification ---- */

struct store_subscription;

/* A subscription to commits that change objects of the kinds in kind_mask
 * (bit 1u << kind; events count as kind STORE_KIND_MAX's bit). Its fd (an
 * eventfd, non-blocking) becomes readable after such a commit; read it with
 * store_subscription_ack(). Any thread may own it. NULL on failure, with
 * errno EROFS on a store_open_readonly() store (no writer to wake it). */
struct store_subscription *store_subscribe(struct store *s, uint32_t kind_mask);
int store_subscription_fd(const struct store_subscription *sub);
void store_subscription_ack(struct store_subscription *sub);
void store_unsubscribe(struct store *s, struct store_subscription *sub);

/* The resourceVersion of the last commit that changed objects of kind k
 * (the store's resourceVersion at open until one does), set before the
 * writer wakes that commit's callers: a follower of the change log that
 * has applied this rv has everything a returned write made. Lock-free (an
 * acquire load). 0 on a store_open_readonly() store or for an unknown k. */
uint64_t store_kind_committed_rv(struct store *s, enum store_kind k);

/* ---- label selectors (Kubernetes syntax) ----
 * "a=b", "a==b", "a!=b", "a", "!a", "a in (x,y)", "a notin (x)", joined by
 * commas. */
int store_selector_parse(const char *s, struct store_selector **ret, char *err, size_t errlen);
bool store_selector_match(const struct store_selector *sel, const json_t *labels);
void store_selector_free(struct store_selector *sel);

/* ---- validation (store/validate.c, crd-tables.c, validate-values.c) ----
 * Checks obj against the v1alpha1 schema of kind k (Secret: core v1):
 * apiVersion and kind, metadata.name (DNS subdomain) and namespace (DNS
 * label), labels, the CRD's required lists, types, patterns and enums, and
 * the stricter rules of docs/strictness.md (IP addresses, ...). On failure
 * returns -EINVAL and writes every field error, each naming its path,
 * joined with "; " (cut to errlen, then " (and N more errors)"):
 * `spec.interfaces[0].dhcp.mac: "zz" is not a MAC address; spec.userData:
 * must be a string, not an integer`. A wrong apiVersion or kind is the
 * only error reported. */
int store_validate(enum store_kind k, const json_t *obj, char *err, size_t errlen);
/* Only .status of obj (for the status subresource). */
int store_validate_status(enum store_kind k, const json_t *status, char *err, size_t errlen);
/* The same, where old is the status as stored (NULL: none): a member of
 * status that is the very tree at the same place in old (shared, as a
 * status write shares what it did not change) was checked when it was
 * written, and is not walked again. */
int store_validate_status_since(enum store_kind k, const json_t *status, const json_t *old,
				char *err, size_t errlen);
/* Fills in the CRD defaults of kind k in obj as the API server does before
 * it validates (e.g. a Machine's spec.connection.port 623, an interface's
 * disableDhcp false), where the parent object is present and the field is
 * absent or null; prunes the other nulls of known fields. A Secret's
 * stringData is base64-encoded into data (stringData wins) and removed.
 * Anything of the wrong type is left for store_validate() to report. */
void store_default(enum store_kind k, json_t *obj);

/* ---- DHCP leases ----
 * Leases are not Kubernetes objects: they do not bump the resourceVersion
 * and do not go to the change log, but they are written by the same writer
 * thread in the same group transactions as every other write (and count in
 * ironbell_store_write_seconds / _transactions_total / _writes_total).
 *
 * A MAC has at most one lease. An IP held by one MAC's bound lease cannot
 * be bound to another MAC (-EADDRINUSE naming both MACs) unless the write
 * says take_ip; released and declined leases do not hold their IP.
 */

#define STORE_LEASE_KEY_LEN 64   /* normalized MAC / IP text, NUL included */
#define STORE_LEASE_NAME_LEN 254 /* Hardware namespace / name, NUL included */
#define STORE_LEASE_MESSAGE_LEN 256
#define STORE_COMPLETION_DEFAULT_MAX 4096u /* in-flight requests per queue */

enum store_lease_state {
	STORE_LEASE_BOUND,
	STORE_LEASE_RELEASED,
	STORE_LEASE_DECLINED,
};

struct store_lease {
	char mac[STORE_LEASE_KEY_LEN]; /* any case, ':' or '-'; stored normalized */
	char ip[STORE_LEASE_KEY_LEN];  /* IPv4/IPv6 text; stored normalized */
	char ns[STORE_LEASE_NAME_LEN];   /* Hardware namespace; "" when none */
	char name[STORE_LEASE_NAME_LEN]; /* Hardware name; "" when none */
	enum store_lease_state state;
	int64_t starts, expires; /* unix seconds */
	bool take_ip; /* bound: a bound lease of another MAC on the same IP is
		       * marked released instead of failing the write (for
		       * reservations, where the Hardware says whose the
		       * address is now) */
};

/* "bound", "released", "declined" (NULL for a value out of range), and
 * back: 0 or -EINVAL. */
const char *store_lease_state_name(enum store_lease_state st);
int store_lease_state_parse(const char *s, enum store_lease_state *ret);

/* A completion queue: where the writer reports the outcome of async lease
 * writes and of store_write_async(). It owns a non-blocking eventfd
 * (store_completion_fd()) that becomes readable when results are
 * waiting; store_completion_drain() takes them (and clears the eventfd
 * when it empties the queue).
 *
 * Ownership and lifetime: the caller creates and frees the queue; any one
 * thread may drain it (the writer thread only appends, under the queue's
 * mutex). A request stays "in flight" from store_lease_put_async() until
 * its result has been drained, so at most max (store_completion_new())
 * results exist at once; beyond that store_lease_put_async() returns
 * -EAGAIN. The queue must outlive its in-flight requests: store_close()
 * commits and completes everything queued before it returns, so the order
 * is store_close() (or waiting until store_completion_inflight() is 0),
 * then store_completion_free(). */
struct store_completion;

struct store_done {
	uint64_t tag;   /* the caller's, from store_lease_put_async() */
	int error;      /* 0 (durable: committed) or a negative errno */
	uint64_t count; /* store_leases_expire_async(): leases removed;
			 * store_lease_put_async() of a bound lease with
			 * take_ip: other MACs' bound leases of its IP that it
			 * released */
	char message[STORE_LEASE_MESSAGE_LEN]; /* on error: why */
};

/* max: most in-flight requests (0: STORE_COMPLETION_DEFAULT_MAX). NULL on
 * failure (no memory, no eventfd). */
struct store_completion *store_completion_new(unsigned max);
int store_completion_fd(const struct store_completion *c);
/* Moves up to max finished results into out, oldest first; returns how
 * many. Never blocks. */
size_t store_completion_drain(struct store_completion *c, struct store_done *out, size_t max);
/* Requests queued and not yet drained. */
unsigned store_completion_inflight(struct store_completion *c);
/* Frees the queue. Requests must not be in flight (see above): when some
 * are, it returns -EBUSY and frees nothing. Accepts NULL. */
int store_completion_free(struct store_completion *c);

/* Queues a write of n ops as store_write() does, on a completion queue,
 * and returns at once: 0, -EINVAL (n is 0), -EAGAIN (c has max requests
 * in flight), -ENOMEM or -ESHUTDOWN; nothing is queued on an error. ops,
 * their bodies and strings are borrowed until the result has been
 * drained from c; the writer fills each op's error, result, object, rv
 * and message as store_write() does (the caller store_op_clear()s them
 * after). Once the transaction holding the write has committed (or
 * failed), the writer appends {tag, error, message} to c: error is what
 * store_write() would have returned (0: every op is on disk), message
 * the failing op's. For threads that must not block: the worker API
 * answers a call once its write is durable. */
int store_write_async(struct store *s, struct store_op *ops, size_t n, bool atomic,
		      struct store_completion *c, uint64_t tag);

/* Queues a lease write (insert or replace the lease of l->mac) and returns
 * at once: 0, -EINVAL (malformed MAC/IP/state, too long names; nothing
 * queued, message not reported), -EAGAIN (c has max requests in flight),
 * -ENOMEM or -ESHUTDOWN. On 0, once the transaction holding it has
 * committed (or failed), the writer appends {tag, error, message} to c and
 * wakes its eventfd: error 0 means the lease is on disk. */
int store_lease_put_async(struct store *s, const struct store_lease *l, struct store_completion *c,
			  uint64_t tag);
/* The same, waiting for the commit. err (may be NULL) gets the message on
 * failure. 0 or a negative errno. */
int store_lease_put(struct store *s, const struct store_lease *l, char *err, size_t errlen);
/* Deletes (in the writer, waiting for the commit) every lease with
 * expires < now; *ret_n (may be NULL) gets how many. 0 or negative errno. */
int store_leases_expire(struct store *s, int64_t now, uint64_t *ret_n);

/* Without waiting, and a chunk at a time: each call examines the next
 * 500 leases in MAC order after the last call's (from the first again
 * after the last), so that its cost does not grow with the table; the
 * caller sweeps every few seconds, and a table of n leases is covered in
 * n / 500 calls. The result goes to c like a lease write's, with the
 * number of leases removed in its count. */
int store_leases_expire_async(struct store *s, int64_t now, struct store_completion *c,
			      uint64_t tag);

/* The lease of a MAC (any form), or the lease of an IP (the bound one if
 * any, else the most recently updated). 0, -ENOENT, -EINVAL (malformed
 * key) or -EIO. */
int store_lease_get_by_mac(struct store_reader *r, const char *mac, struct store_lease *ret);
int store_lease_get_by_ip(struct store_reader *r, const char *ip, struct store_lease *ret);
/* Calls fn for every lease, sorted by IP text (l is valid during the
 * call only), until fn returns non-zero. 0, fn's value, or -EIO. */
int store_leases_each(struct store_reader *r,
		      int (*fn)(const struct store_lease *l, void *userdata), void *userdata);

/* ---- metrics ---- */
/* The store registers ironbell_store_write_seconds (histogram of commit
 * latency), ironbell_store_transactions_total and
 * ironbell_store_writes_total{result=...} in the common metrics registry. */
