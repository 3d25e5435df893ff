/* ops — one write op (create, replace, apply, merge patch, status, status
 * patch, delete, mirror) run by the writer thread inside its transaction.
 *
 * DESIGN: every op reads the current row, builds the next object in
 * memory from it and the request body, and returns early when nothing
 * changes (APPLY of the same YAML: no new resourceVersion, no change-log
 * row, no wakeup). The CRD defaults are filled in first (store_default(),
 * as the API server defaults before it compares or validates), so that the
 * same YAML applied again compares equal. Otherwise the next object is validated
 * (store_validate(), or store_validate_status() for the status
 * subresource), its Hardware index keys are collected, and it is written
 * once: the same serialized text goes into objects.json and changes.json.
 *
 * The store owns the identity fields of metadata: uid (a random UUIDv4),
 * creationTimestamp, generation (1 on create, +1 when the spec changes:
 * every top-level member other than apiVersion, kind, metadata and status,
 * so that a Secret's data counts), resourceVersion (the store-wide counter
 * s->rv, +1 per change) and the namespace (default "default"). Whatever a
 * client sends for them is replaced. As on the API server for kinds with a
 * status subresource, REPLACE and MERGE_PATCH leave .status alone and
 * STATUS/STATUS_PATCH touch nothing else. MIRROR is the exception: the
 * watcher's copy of a cluster object keeps the cluster's identity (uid,
 * creationTimestamp, generation) and, unless told to keep it, its status.
 *
 * Sources (store.h): an object's row holds the source that owns it; each
 * change-log row the source of the op that made it. A "daemon" op stores
 * the object's source as it was ("local" for a create): only "local" and
 * "kube" are ever an object's.
 *
 * The caller (writer.c) wraps each op, or each atomic request, in a
 * SAVEPOINT and restores s->rv and s->changed when it rolls back, so an op
 * may fail at any step after it has written rows.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "common/jsonmerge.h"
#include "store/store-internal.h"

#define RV_TEXT_LEN 24

/* What an op is about: resolved once, used in every message. */
struct opctx {
	enum store_kind kind;
	const struct store_kind_info *ki;
	const char *ns, *name, *source;
	const char *stored; /* the source the object is stored with after the op */
};

/* The row as it is before the op. */
struct current {
	sqlite3_int64 id;
	uint64_t rv;
	char source[8];
	json_t *obj; /* a reference to the tree shared with objcache.c: never changed */
};

void store_op_fail(struct store_op *op, int error, const char *fmt, ...)
{
	char msg[STORE_OP_MESSAGE_MAX];
	va_list ap;
	op->error = error;
	op->result = STORE_RESULT_NONE;
	json_decref(op->object);
	op->object = NULL;
	/* Formatted before the old message is freed: an argument may be it. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(op->message);
	op->message = strdup(msg); /* NULL without memory: an empty message */
}

/* The validation errors of one object, all of them (store_validate()):
 * less than STORE_OP_MESSAGE_MAX, which the object's kind and names precede, and
 * than the admin API's answer, which names the object once more. */
#define OPS_MAX_VALIDATE_MESSAGE 768

#define FAIL(op, c, err, fmt, ...)                                                           \
	(store_op_fail(op, err, "%s \"%s/%s\": " fmt, (c)->ki->singular, (c)->ns, (c)->name, \
		       ##__VA_ARGS__),                                                       \
	 (err))

static const char *const wstmt_sql[W_IDX_DEL] = {
	[W_GET] = "SELECT id, rv, source FROM objects "
		  "WHERE kind = ?1 AND namespace = ?2 AND name = ?3",
	[W_GET_JSON] = "SELECT json FROM objects WHERE id = ?1",
	[W_INSERT] = "INSERT INTO objects (kind, namespace, name, uid, rv, source, json) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[W_UPDATE] = "UPDATE objects SET rv = ?2, source = ?3, json = ?4 WHERE id = ?1",
	[W_DELETE] = "DELETE FROM objects WHERE id = ?1",
	[W_CHANGE] = "INSERT INTO changes (rv, kind, namespace, name, type, json, source) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[W_META_SET] = "UPDATE meta SET value = ?2 WHERE key = ?1",
	[W_TRIM_CHANGES] = "DELETE FROM changes WHERE rv <= ?1",
	[W_EVENT] = "INSERT INTO events (time, kind, namespace, name, type, reason, message) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[W_TRIM_EVENTS] = "DELETE FROM events WHERE id <= (SELECT max(id) FROM events) - ?1",
	[W_MIRROR_GET] = "SELECT json FROM mirrors WHERE obj = ?1",
	[W_MIRROR_SET] = "INSERT OR REPLACE INTO mirrors (obj, json) VALUES (?1, ?2)",
	[W_MIRROR_DEL] = "DELETE FROM mirrors WHERE obj = ?1",
	[W_SAVEPOINT_OP] = "SAVEPOINT op",
	[W_SAVEPOINT_REQ] = "SAVEPOINT req",
	[W_ROLLBACK_OP] = "ROLLBACK TO op",
	[W_ROLLBACK_REQ] = "ROLLBACK TO req",
	[W_RELEASE_OP] = "RELEASE op",
	[W_RELEASE_REQ] = "RELEASE req",
};

int store_wstmt_prepare(struct store *s)
{
	char sql[256];
	for (int i = 0; i < W_STMT_MAX; i++) {
		const char *q = sql;
		if (i < W_IDX_DEL)
			q = wstmt_sql[i];
		else if (i < W_IDX_INS)
			snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE obj = ?1",
				 store_index_table(i - W_IDX_DEL));
		else if (i < W_IDX_OWNER)
			snprintf(sql, sizeof(sql),
				 "INSERT INTO %s (key, obj, field) VALUES (?1, ?2, ?3)",
				 store_index_table(i - W_IDX_INS));
		else
			snprintf(
				sql, sizeof(sql),
				"SELECT o.namespace, o.name FROM %s m JOIN objects o ON o.id = m.obj "
				"WHERE m.key = ?1",
				store_index_table(i - W_IDX_OWNER));
		if (sqlite3_prepare_v3(s->db, q, -1, SQLITE_PREPARE_PERSISTENT, &s->wstmt[i],
				       NULL) != SQLITE_OK)
			return -EIO;
	}
	return 0;
}

void store_wstmt_finalize(struct store *s)
{
	for (int i = 0; i < W_STMT_MAX; i++) {
		sqlite3_finalize(s->wstmt[i]);
		s->wstmt[i] = NULL;
	}
}

/* The writer statement w, reset and unbound. */
static sqlite3_stmt *ws(struct store *s, int w)
{
	sqlite3_stmt *st = s->wstmt[w];
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

static int db_error(struct store *s, struct store_op *op, const struct opctx *c)
{
	return FAIL(op, c, -EIO, "database error: %s", sqlite3_errmsg(s->db));
}

/* The current row: its id, rv and source, and its object from the
 * object cache when it holds this version, else decoded (and then held,
 * unless a MIRROR reads it: see write_object()). */
static int load_current(struct store *s, const struct opctx *c, struct current *cur, bool mirror)
{
	sqlite3_stmt *st = ws(s, W_GET);
	sqlite3_bind_text(st, 1, c->ki->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, c->name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return -EIO;
	cur->id = sqlite3_column_int64(st, 0);
	cur->rv = (uint64_t)sqlite3_column_int64(st, 1);
	snprintf(cur->source, sizeof(cur->source), "%s", (const char *)sqlite3_column_text(st, 2));
	sqlite3_reset(st);
	cur->obj = store_objcache_get(s, c->kind, c->ns, c->name, cur->id, cur->rv);
	if (cur->obj)
		return 0;
	st = ws(s, W_GET_JSON);
	sqlite3_bind_int64(st, 1, cur->id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return -EIO;
	size_t len = (size_t)sqlite3_column_bytes(st, 0);
	cur->obj = jsondec_loadb((const char *)sqlite3_column_blob(st, 0), len, 0, NULL);
	sqlite3_reset(st);
	if (!cur->obj)
		return -EIO;
	if (!mirror)
		store_objcache_put(s, c->kind, c->ns, c->name, cur->id, cur->rv, cur->obj, len);
	return 0;
}

static bool is_identity_member(const char *k)
{
	return strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0 ||
	       strcmp(k, "metadata") == 0 || strcmp(k, "status") == 0;
}

/* Whether the spec (every non-identity top-level member) differs. */
static bool spec_differs(const json_t *a, const json_t *b)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)a, k,
			    v) if (!is_identity_member(k) &&
				   !json_equal(v, json_object_get(b, k))) return true;
	json_object_foreach((json_t *)b, k,
			    v) if (!is_identity_member(k) && !json_object_get(a, k)) return true;
	return false;
}

static json_t *meta_of(json_t *obj)
{
	json_t *m = json_object_get(obj, "metadata");
	if (!json_is_object(m)) {
		m = json_object();
		if (json_object_set_new(obj, "metadata", m) < 0)
			return NULL;
	}
	return m;
}

/* Sets metadata member key of dst to a copy of src's (or removes it). */
static void copy_meta(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(json_object_get(src, "metadata"), key);
	json_t *dm = meta_of(dst);
	if (v)
		json_object_set_new(dm, key, json_deep_copy(v));
	else
		json_object_del(dm, key);
}

static void set_rv(json_t *obj, uint64_t rv)
{
	char t[RV_TEXT_LEN];
	snprintf(t, sizeof(t), "%" PRIu64, rv);
	json_object_set_new(meta_of(obj), "resourceVersion", json_string(t));
}

/* Checks that body's apiVersion and kind, when present, are c's. */
static int check_body_kind(struct store_op *op, const struct opctx *c)
{
	const char *av = json_string_value(json_object_get(op->body, "apiVersion"));
	const char *kd = json_string_value(json_object_get(op->body, "kind"));
	if ((av && strcmp(av, c->ki->api_version) != 0) || (kd && strcmp(kd, c->ki->kind) != 0))
		return FAIL(op, c, -EINVAL, "apiVersion/kind \"%s/%s\" is not %s/%s", av ? av : "",
			    kd ? kd : "", c->ki->api_version, c->ki->kind);
	return 0;
}

/* A copy of body as a whole object of kind c: apiVersion and kind filled
 * when absent and checked when present, metadata.namespace/name set. */
static int body_object(struct store_op *op, const struct opctx *c, json_t **ret)
{
	int e = check_body_kind(op, c);
	if (e < 0)
		return e;
	json_t *o = json_deep_copy(op->body);
	json_t *m = o ? meta_of(o) : NULL;
	store_default(c->kind, o);
	if (!m || json_object_set_new(o, "apiVersion", json_string(c->ki->api_version)) < 0 ||
	    json_object_set_new(o, "kind", json_string(c->ki->kind)) < 0 ||
	    json_object_set_new(m, "name", json_string(c->name)) < 0 ||
	    json_object_set_new(m, "namespace", json_string(c->ns)) < 0) {
		json_decref(o);
		return FAIL(op, c, -ENOMEM, "out of memory");
	}
	*ret = o;
	return 0;
}

/* Checks the resourceVersion precondition: op's, else the one in body's
 * metadata when use_body. */
static int check_rv(struct store_op *op, const struct opctx *c, const struct current *cur,
		    bool use_body)
{
	const char *want = op->resource_version;
	char have[RV_TEXT_LEN];
	if (!want && use_body)
		want = store_meta_str(op->body, "resourceVersion");
	if (!want || !*want)
		return 0;
	snprintf(have, sizeof(have), "%" PRIu64, cur->rv);
	if (strcmp(want, have) == 0)
		return 0;
	return FAIL(op, c, -ESTALE,
		    "the object has been modified; please apply your changes to the latest version "
		    "and try again (resourceVersion \"%.32s\" is not the current \"%s\")",
		    want, have);
}

static int index_write(struct store *s, struct store_op *op, const struct opctx *c,
		       sqlite3_int64 id, const struct store_hw_keys *keys)
{
	for (int ix = 0; ix < STORE_INDEX_MAX; ix++) {
		sqlite3_stmt *st = ws(s, W_IDX_DEL + ix);
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) != SQLITE_DONE)
			return db_error(s, op, c);
	}
	for (size_t i = 0; i < keys->n; i++) {
		const struct store_hw_key *k = &keys->k[i];
		sqlite3_stmt *st = ws(s, W_IDX_INS + k->index);
		sqlite3_bind_text(st, 1, k->value, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, id);
		sqlite3_bind_text(st, 3, k->field, -1, SQLITE_STATIC);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			continue;
		if ((rc & 0xff) != SQLITE_CONSTRAINT)
			return db_error(s, op, c);
		sqlite3_reset(st);
		st = ws(s, W_IDX_OWNER + k->index);
		sqlite3_bind_text(st, 1, k->value, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW)
			return db_error(s, op, c);
		int e = FAIL(op, c, -EADDRINUSE, "%s \"%s\" is already used by hardware \"%s/%s\"",
			     k->field, k->value, (const char *)sqlite3_column_text(st, 0),
			     (const char *)sqlite3_column_text(st, 1));
		sqlite3_reset(st);
		return e;
	}
	return 0;
}

static int log_change(struct store *s, struct store_op *op, const struct opctx *c, uint64_t rv,
		      const char *type, const char *text)
{
	sqlite3_stmt *st = ws(s, W_CHANGE);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)rv);
	sqlite3_bind_text(st, 2, c->ki->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, c->ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, c->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, c->source, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(s, op, c);
}

/* Validates next, indexes it and writes it with a new resourceVersion.
 * Takes next. status_only: validate .status alone, keep the indexes. */
static int write_object(struct store *s, struct store_op *op, const struct opctx *c, json_t *next,
			const struct current *cur, bool status_only)
{
	char msg[OPS_MAX_VALIDATE_MESSAGE];
	struct store_hw_keys *keys = NULL;
	char *text = NULL;
	uint64_t rv = s->rv + 1;
	sqlite3_int64 id = cur ? cur->id : 0;
	sqlite3_stmt *st;
	int e;

	msg[0] = '\0';
	if (status_only) {
		json_t *status = json_object_get(next, "status");
		e = status ? store_validate_status_since(
				     c->kind, status,
				     cur ? json_object_get(cur->obj, "status") : NULL, msg,
				     sizeof(msg)) :
			     0;
	} else {
		e = store_validate(c->kind, next, msg, sizeof(msg));
	}
	if (e < 0) {
		e = FAIL(op, c, -EINVAL, "%s", msg[0] ? msg : "invalid");
		goto out;
	}
	bool reindex = c->kind == STORE_KIND_HARDWARE && !status_only;
	if (reindex) {
		keys = malloc(sizeof(*keys));
		if (!keys) {
			e = FAIL(op, c, -ENOMEM, "out of memory");
			goto out;
		}
		e = store_hw_keys_get(next, keys, msg, sizeof(msg));
		if (e < 0) {
			e = FAIL(op, c, e, "%s", msg);
			goto out;
		}
	}
	set_rv(next, rv);
	text = json_dumps(next, JSON_COMPACT);
	if (!text) {
		e = FAIL(op, c, -ENOMEM, "out of memory");
		goto out;
	}
	if (cur) {
		st = ws(s, W_UPDATE);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)rv);
		sqlite3_bind_text(st, 3, c->stored, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, text, -1, SQLITE_STATIC);
	} else {
		st = ws(s, W_INSERT);
		sqlite3_bind_text(st, 1, c->ki->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, c->ns, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, c->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, store_meta_str(next, "uid"), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)rv);
		sqlite3_bind_text(st, 6, c->stored, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, text, -1, SQLITE_STATIC);
	}
	if (sqlite3_step(st) != SQLITE_DONE) {
		e = db_error(s, op, c);
		goto out;
	}
	if (!cur)
		id = sqlite3_last_insert_rowid(s->db);
	if (reindex && (e = index_write(s, op, c, id, keys)) < 0)
		goto out;
	e = log_change(s, op, c, rv, cur ? "MODIFIED" : "ADDED", text);
	if (e < 0)
		goto out;
	s->rv = rv;
	s->changed |= 1u << c->kind;
	/* from here next is shared (objcache.c): nobody changes it. What the
	 * Kubernetes watcher mirrors is not kept: a list of the cluster
	 * passes every object through here once, and nobody asks for most of
	 * them again soon (a tree is several times its text: ten thousand
	 * Workflows would fill the cache with trees, twice the daemon's size) */
	if (op->type == STORE_OP_MIRROR)
		store_objcache_del(s, c->kind, c->ns, c->name);
	else
		store_objcache_put(s, c->kind, c->ns, c->name, id, rv, next, strlen(text));
	op->object = next;
	next = NULL;
	op->result = cur ? STORE_RESULT_CONFIGURED : STORE_RESULT_CREATED;
out:
	json_decref(next);
	free(text);
	free(keys);
	return e;
}

static int do_create(struct store *s, struct store_op *op, const struct opctx *c)
{
	char uid[37], ts[21];
	json_t *next;
	int e = body_object(op, c, &next);
	if (e < 0)
		return e;
	json_t *m = meta_of(next);
	e = store_uuid_v4(uid);
	if (e < 0) {
		json_decref(next);
		return FAIL(op, c, e, "cannot make a uid");
	}
	time_rfc3339((int64_t)(now_real_ns() / 1000000000u), ts);
	json_object_set_new(m, "uid", json_string(uid));
	json_object_set_new(m, "creationTimestamp", json_string(ts));
	json_object_set_new(m, "generation", json_integer(1));
	return write_object(s, op, c, next, NULL, false);
}

/* Whether next (at cur's resourceVersion) is cur as stored, with the same
 * source: then op gets cur's object, UNCHANGED, and next is released. */
static bool unchanged(struct store_op *op, const struct opctx *c, json_t *next, struct current *cur)
{
	if (!json_equal(next, cur->obj) || strcmp(cur->source, c->stored) != 0)
		return false;
	json_decref(next);
	op->object = cur->obj;
	cur->obj = NULL;
	op->result = STORE_RESULT_UNCHANGED;
	return true;
}

/* Finishes a change of cur into next: keeps the identity, bumps the
 * generation when the spec changed, and returns UNCHANGED when nothing
 * did. Takes next. */
static int finish_update(struct store *s, struct store_op *op, const struct opctx *c, json_t *next,
			 struct current *cur, bool status_only)
{
	json_t *m = meta_of(next);
	static const char *const keep[] = { "uid", "creationTimestamp", "generation", "namespace",
					    "name" };
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		copy_meta(next, cur->obj, keep[i]);
	set_rv(next, cur->rv);
	if (!status_only && spec_differs(next, cur->obj)) {
		json_int_t g = json_integer_value(json_object_get(m, "generation"));
		json_object_set_new(m, "generation", json_integer(g + 1));
	}
	if (unchanged(op, c, next, cur))
		return 0;
	return write_object(s, op, c, next, cur, status_only);
}

/* Whether member key of a's and b's metadata are equal (or both absent). */
static bool meta_equal(const json_t *a, const json_t *b, const char *key)
{
	const json_t *x = json_object_get(json_object_get(a, "metadata"), key);
	const json_t *y = json_object_get(json_object_get(b, "metadata"), key);
	return (!x && !y) || (x && y && json_equal(x, y));
}

/* APPLY onto an existing object: its spec, labels and annotations become
 * body's; identity and status stay. The common case, the same YAML applied
 * again, is found by comparing in place, without copying anything. */
static int do_apply(struct store *s, struct store_op *op, const struct opctx *c,
		    struct current *cur)
{
	const char *k;
	json_t *v;
	void *tmp;
	int e = check_body_kind(op, c);
	if (e < 0)
		return e;
	store_default(c->kind, op->body); /* before comparing: the stored object has them */
	if (strcmp(cur->source, c->stored) == 0 && !spec_differs(op->body, cur->obj) &&
	    meta_equal(op->body, cur->obj, "labels") &&
	    meta_equal(op->body, cur->obj, "annotations")) {
		op->object = cur->obj;
		cur->obj = NULL;
		op->result = STORE_RESULT_UNCHANGED;
		return 0;
	}
	json_t *next = json_deep_copy(cur->obj);
	if (!next)
		return FAIL(op, c, -ENOMEM, "out of memory");
	json_object_foreach_safe(next, tmp, k,
				 v) if (!is_identity_member(k) && !json_object_get(op->body, k))
		json_object_del(next, k);
	json_object_foreach(op->body, k, v) if (!is_identity_member(k))
		json_object_set_new(next, k, json_deep_copy(v));
	copy_meta(next, op->body, "labels");
	copy_meta(next, op->body, "annotations");
	return finish_update(s, op, c, next, cur, false);
}

/* The main resource does not write .status (the status subresource
 * does), as with the API server for kinds that have one: next gets cur's. */
static void keep_status(json_t *next, const struct current *cur)
{
	json_t *st = json_object_get(cur->obj, "status");
	if (st)
		json_object_set_new(next, "status", json_deep_copy(st));
	else
		json_object_del(next, "status");
}

static int do_replace(struct store *s, struct store_op *op, const struct opctx *c,
		      struct current *cur)
{
	json_t *next;
	int e = check_rv(op, c, cur, true);
	if (e < 0)
		return e;
	e = body_object(op, c, &next);
	if (e < 0)
		return e;
	keep_status(next, cur);
	return finish_update(s, op, c, next, cur, false);
}

static bool same_str(const json_t *a, const json_t *b)
{
	return json_is_string(a) && json_is_string(b) && json_equal(a, b);
}

static int do_merge_patch(struct store *s, struct store_op *op, const struct opctx *c,
			  struct current *cur)
{
	int e = check_rv(op, c, cur, true);
	if (e < 0)
		return e;
	json_t *next = store_merge_patch(cur->obj, op->body);
	if (!json_is_object(next)) {
		json_decref(next);
		return FAIL(op, c, -EINVAL,
			    "the merge patch is not an object or nests deeper than %d",
			    STORE_MAX_PATCH_DEPTH);
	}
	const json_t *nm = json_object_get(next, "metadata"),
		     *om = json_object_get(cur->obj, "metadata");
	if (!same_str(json_object_get(next, "apiVersion"),
		      json_object_get(cur->obj, "apiVersion")) ||
	    !same_str(json_object_get(next, "kind"), json_object_get(cur->obj, "kind")) ||
	    !same_str(json_object_get(nm, "name"), json_object_get(om, "name")) ||
	    !same_str(json_object_get(nm, "namespace"), json_object_get(om, "namespace"))) {
		json_decref(next);
		return FAIL(
			op, c, -EINVAL,
			"a patch cannot change apiVersion, kind, metadata.name or metadata.namespace");
	}
	keep_status(next, cur);
	store_default(c->kind, next);
	return finish_update(s, op, c, next, cur, false);
}

static int do_status(struct store *s, struct store_op *op, const struct opctx *c,
		     struct current *cur)
{
	json_t *status = json_object_get(op->body, "status");
	int e = check_rv(op, c, cur, true);
	if (e < 0)
		return e;
	/* Only .status and metadata change: the rest (the spec, a Workflow's
	 * largest part) is shared with cur->obj, not copied. */
	json_t *next = json_copy(cur->obj);
	json_t *md = json_deep_copy(json_object_get(cur->obj, "metadata"));
	if (!next || (md && json_object_set_new(next, "metadata", md) < 0)) {
		json_decref(next);
		return FAIL(op, c, -ENOMEM, "out of memory");
	}
	if (op->type == STORE_OP_STATUS_PATCH) {
		if (status && !json_is_null(status)) {
			json_t *merged =
				store_merge_patch(json_object_get(cur->obj, "status"), status);
			if (!merged) {
				json_decref(next);
				return FAIL(op, c, -EINVAL, "the status patch nests deeper than %d",
					    STORE_MAX_PATCH_DEPTH);
			}
			json_object_set_new(next, "status", merged);
		} else if (status) {
			json_object_del(next, "status");
		}
	} else if (status) {
		json_object_set_new(next, "status",
				    op->take_body ? json_incref(status) : json_deep_copy(status));
	} else {
		json_object_del(next, "status");
	}
	return finish_update(s, op, c, next, cur, true);
}

static int do_delete(struct store *s, struct store_op *op, const struct opctx *c,
		     struct current *cur)
{
	uint64_t rv = s->rv + 1;
	char *text = NULL;
	int e = check_rv(op, c, cur, false);
	if (e < 0)
		return e;
	sqlite3_stmt *st = ws(s, W_DELETE);
	sqlite3_bind_int64(st, 1, cur->id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, op, c);
	st = ws(s, W_MIRROR_DEL);
	sqlite3_bind_int64(st, 1, cur->id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, op, c);
	if (c->kind == STORE_KIND_HARDWARE) {
		for (int ix = 0; ix < STORE_INDEX_MAX; ix++) {
			st = ws(s, W_IDX_DEL + ix);
			sqlite3_bind_int64(st, 1, cur->id);
			if (sqlite3_step(st) != SQLITE_DONE)
				return db_error(s, op, c);
		}
	}
	store_objcache_del(s, c->kind, c->ns, c->name);
	/* the last state, at the delete's rv: a top level of its own over the
	 * shared members of cur->obj, which is not changed */
	json_t *gone = json_copy(cur->obj);
	json_t *md = json_deep_copy(json_object_get(cur->obj, "metadata"));
	if (!gone || !md || json_object_set_new(gone, "metadata", md) < 0) {
		if (!gone)
			json_decref(md);
		json_decref(gone);
		return FAIL(op, c, -ENOMEM, "out of memory");
	}
	set_rv(gone, rv);
	text = json_dumps(gone, JSON_COMPACT);
	if (!text) {
		json_decref(gone);
		return FAIL(op, c, -ENOMEM, "out of memory");
	}
	e = log_change(s, op, c, rv, "DELETED", text);
	free(text);
	if (e < 0) {
		json_decref(gone);
		return e;
	}
	s->rv = rv;
	s->changed |= 1u << c->kind;
	op->object = gone;
	op->result = STORE_RESULT_DELETED;
	return 0;
}

/* What the daemon may change in a Kubernetes object besides its status:
 * {"metadata": {"labels", "annotations"}, "spec"}; a new reference. */
static json_t *main_fields(const json_t *obj)
{
	const json_t *m = json_object_get(obj, "metadata");
	json_t *out = json_object(), *meta = json_object();
	if (!out || !meta) {
		json_decref(out);
		json_decref(meta);
		return NULL;
	}
	if (json_object_get(m, "labels"))
		json_object_set(meta, "labels", json_object_get(m, "labels"));
	if (json_object_get(m, "annotations"))
		json_object_set(meta, "annotations", json_object_get(m, "annotations"));
	json_object_set_new(out, "metadata", meta);
	if (json_object_get(obj, "spec"))
		json_object_set(out, "spec", json_object_get(obj, "spec"));
	return out;
}

/* Keeps in next (the cluster's newer version) what the daemon changed in
 * cur's labels, annotations and spec since the cluster's version the
 * store mirrored last (the merge patch from that one to cur), so that a
 * change not yet written back is not undone by a newer version from the
 * cluster: kube/ writes it back from there. *mirrored: whether the store
 * had a version of cur from the cluster. */
static int keep_changes(struct store *s, struct store_op *op, const struct opctx *c, json_t *next,
			const struct current *cur, bool *mirrored)
{
	sqlite3_stmt *st = ws(s, W_MIRROR_GET);
	json_t *old = NULL, *a = NULL, *b = NULL, *delta = NULL, *base = NULL, *merged = NULL;
	char err[256];
	int e = 0;
	sqlite3_bind_int64(st, 1, cur->id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		old = jsondec_loadb((const char *)sqlite3_column_blob(st, 0),
				 (size_t)sqlite3_column_bytes(st, 0), 0, NULL);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_error(s, op, c);
	*mirrored = rc == SQLITE_ROW;
	if (!old)
		return 0; /* the store's object was not the cluster's */
	a = main_fields(old);
	b = main_fields(cur->obj);
	if (!a || !b) {
		e = FAIL(op, c, -ENOMEM, "out of memory");
		goto out;
	}
	e = json_merge_diff(a, b, &delta, err, sizeof(err));
	if (e < 0 || !delta) {
		if (e < 0)
			log_warn("store", "%s %s/%s: the daemon's change is not kept over the "
					  "cluster's newer version: %s",
				 c->ki->singular, c->ns, c->name, err);
		e = 0;
		goto out;
	}
	base = main_fields(next);
	e = base ? json_merge_apply(base, delta, &merged) : -ENOMEM;
	if (e < 0) {
		e = FAIL(op, c, e, "the daemon's changes cannot be kept");
		goto out;
	}
	json_t *mm = json_object_get(merged, "metadata"), *nm = json_object_get(next, "metadata");
	static const char *const keys[] = { "labels", "annotations" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		json_t *v = json_object_get(mm, keys[i]);
		if (v)
			json_object_set(nm, keys[i], v);
		else
			json_object_del(nm, keys[i]);
	}
	if (json_object_get(merged, "spec"))
		json_object_set(next, "spec", json_object_get(merged, "spec"));
	else
		json_object_del(next, "spec");
out:
	json_decref(old);
	json_decref(a);
	json_decref(b);
	json_decref(delta);
	json_decref(base);
	json_decref(merged);
	return e;
}

/* Records op's body as the cluster's version of the object (for kube/'s
 * write-back, store_get_mirror()); cur is NULL when the op created it. */
static int mirror_set(struct store *s, struct store_op *op, const struct opctx *c,
		      const struct current *cur)
{
	sqlite3_int64 id;
	if (cur) {
		id = cur->id;
	} else {
		sqlite3_stmt *g = ws(s, W_GET);
		sqlite3_bind_text(g, 1, c->ki->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(g, 2, c->ns, -1, SQLITE_STATIC);
		sqlite3_bind_text(g, 3, c->name, -1, SQLITE_STATIC);
		int rc = sqlite3_step(g);
		id = rc == SQLITE_ROW ? sqlite3_column_int64(g, 0) : -1;
		sqlite3_reset(g);
		if (id < 0)
			return db_error(s, op, c);
	}
	/* Defaulted as the store's object is, so that the difference between
	 * them is only what the daemon changed. */
	json_t *m = json_deep_copy(op->body);
	if (m)
		store_default(c->kind, m);
	char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	if (!text)
		return FAIL(op, c, -ENOMEM, "out of memory");
	sqlite3_stmt *st = ws(s, W_MIRROR_SET);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	free(text);
	return rc == SQLITE_DONE ? 0 : db_error(s, op, c);
}

/* The metadata members a MIRROR takes from the cluster's object as they
 * are; uid, creationTimestamp and generation too, when body has them. */
static const char *const mirror_meta[] = { "labels", "annotations", "ownerReferences", "finalizers",
					   "deletionTimestamp" };

/* MIRROR: next is body whole (its status too unless keep_status), with
 * the cluster's identity; cur is NULL when the object is absent. */
static int do_mirror(struct store *s, struct store_op *op, const struct opctx *c,
		     struct current *cur)
{
	static const char *const identity[] = { "uid", "creationTimestamp", "generation" };
	const json_t *bm = json_object_get(op->body, "metadata");
	char uid[37], ts[21];
	json_t *next, *m = json_object();
	int e = m ? body_object(op, c, &next) : FAIL(op, c, -ENOMEM, "out of memory");
	if (e < 0) {
		json_decref(m);
		return e;
	}
	json_object_set_new(m, "name", json_string(c->name));
	json_object_set_new(m, "namespace", json_string(c->ns));
	for (size_t i = 0; i < ARRAY_SIZE(identity); i++) {
		json_t *v = json_object_get(bm, identity[i]);
		if (!v && cur)
			v = json_object_get(json_object_get(cur->obj, "metadata"), identity[i]);
		if (v)
			json_object_set_new(m, identity[i], json_deep_copy(v));
	}
	for (size_t i = 0; i < ARRAY_SIZE(mirror_meta); i++) {
		json_t *v = json_object_get(bm, mirror_meta[i]);
		if (v)
			json_object_set_new(m, mirror_meta[i], json_deep_copy(v));
	}
	if (!json_object_get(m, "uid")) {
		e = store_uuid_v4(uid);
		if (e < 0) {
			json_decref(m);
			json_decref(next);
			return FAIL(op, c, e, "cannot make a uid");
		}
		json_object_set_new(m, "uid", json_string(uid));
	}
	if (!json_object_get(m, "creationTimestamp")) {
		time_rfc3339((int64_t)(now_real_ns() / 1000000000u), ts);
		json_object_set_new(m, "creationTimestamp", json_string(ts));
	}
	if (!json_object_get(m, "generation"))
		json_object_set_new(m, "generation", json_integer(1));
	if (json_object_set_new(next, "metadata", m) < 0) {
		json_decref(next);
		return FAIL(op, c, -ENOMEM, "out of memory");
	}
	if (!cur) {
		e = write_object(s, op, c, next, NULL, false);
		return e < 0 ? e : mirror_set(s, op, c, NULL);
	}
	bool mirrored = false;
	e = keep_changes(s, op, c, next, cur, &mirrored);
	if (e < 0) {
		json_decref(next);
		return e;
	}
	/* A status of another object of the same name (deleted and made
	 * again in the cluster) is not kept. But the cluster's first version,
	 * without a status, of an object the store never had from it is the
	 * one made from the store's (a Job or Task the controllers made, that
	 * kube/ created: the API server gave it its uid and dropped its
	 * status): its status is the store's. */
	bool same = strcmp(store_meta_str(next, "uid") ?: "",
			   store_meta_str(cur->obj, "uid") ?: "") == 0 ||
		    (!mirrored && !json_object_size(json_object_get(op->body, "status")));
	if (op->keep_status && same)
		keep_status(next, cur);
	set_rv(next, cur->rv);
	if (!unchanged(op, c, next, cur))
		e = write_object(s, op, c, next, cur, false);
	return e < 0 ? e : mirror_set(s, op, c, cur);
}

/* Resolves kind, namespace, name and source; checks what every op needs. */
static int resolve(struct store_op *op, struct opctx *c)
{
	static struct store_kind_info unknown = { .singular = "object" };
	c->kind = op->kind;
	c->ki = store_kind_info(op->kind);
	c->ns = "";
	c->name = "";
	if (!c->ki) {
		c->ki = &unknown;
		return FAIL(op, c, -EINVAL, "unknown kind");
	}
	const char *bns = store_meta_str(op->body, "namespace");
	const char *bname = store_meta_str(op->body, "name");
	c->ns = op->namespace_ ? op->namespace_ : bns ? bns : "default";
	c->name = op->name ? op->name : bname ? bname : "";
	c->source = op->source ? op->source : STORE_SOURCE_LOCAL;
	c->stored = c->source;
	if ((unsigned)op->type >= STORE_OP_MAX)
		return FAIL(op, c, -EINVAL, "unknown op");
	if (strcmp(c->source, STORE_SOURCE_LOCAL) != 0 &&
	    strcmp(c->source, STORE_SOURCE_KUBE) != 0 &&
	    strcmp(c->source, STORE_SOURCE_DAEMON) != 0)
		return FAIL(op, c, -EINVAL, "unknown source \"%.16s\"", c->source);
	if (op->type == STORE_OP_MIRROR && strcmp(c->source, STORE_SOURCE_KUBE) != 0)
		return FAIL(op, c, -EINVAL, "only the Kubernetes watcher mirrors (source \"%s\")",
			    c->source);
	if (!*c->name)
		return FAIL(op, c, -EINVAL, "metadata.name is required");
	if (!*c->ns || strlen(c->ns) > STORE_MAX_NAME || strlen(c->name) > STORE_MAX_NAME)
		return FAIL(op, c, -EINVAL,
			    "metadata.name and metadata.namespace must be 1 to %d "
			    "characters",
			    STORE_MAX_NAME);
	if (op->type != STORE_OP_DELETE && !json_is_object(op->body))
		return FAIL(op, c, -EINVAL, "the request body is not an object");
	bool whole = op->type == STORE_OP_CREATE || op->type == STORE_OP_REPLACE ||
		     op->type == STORE_OP_APPLY || op->type == STORE_OP_MIRROR;
	if (whole && bns && strcmp(bns, c->ns) != 0)
		return FAIL(op, c, -EINVAL, "metadata.namespace \"%.64s\" does not match \"%s\"",
			    bns, c->ns);
	if (whole && bname && strcmp(bname, c->name) != 0)
		return FAIL(op, c, -EINVAL, "metadata.name \"%.64s\" does not match \"%s\"", bname,
			    c->name);
	return 0;
}

int store_op_exec(struct store *s, struct store_op *op)
{
	struct opctx c;
	struct current cur = { 0 };
	json_t *parsed = NULL;
	int e;

	op->error = 0;
	op->result = STORE_RESULT_NONE;
	op->object = NULL;
	op->rv = 0;
	free(op->message);
	op->message = NULL;
	/* A body given as text is a tree only while its op runs; one that
	 * does not parse is no object, which resolve() refuses. */
	if (!op->body && op->body_text)
		op->body = parsed = jsondec_loadb(op->body_text, op->body_text_len,
					       JSON_REJECT_DUPLICATES, NULL);
	e = resolve(op, &c);
	if (e < 0)
		goto out;
	e = load_current(s, &c, &cur, op->type == STORE_OP_MIRROR);
	if (e == -EIO) {
		e = db_error(s, op, &c);
		goto out;
	}
	bool exists = e == 0;
	/* the daemon's controllers leave the owner as it is */
	if (strcmp(c.source, STORE_SOURCE_DAEMON) == 0)
		c.stored = exists ? cur.source : STORE_SOURCE_LOCAL;
	if (exists && strcmp(cur.source, STORE_SOURCE_KUBE) == 0 &&
	    strcmp(c.source, STORE_SOURCE_LOCAL) == 0) {
		e = FAIL(
			op, &c, -EPERM,
			"the object is owned by Kubernetes; change it in the cluster, not locally");
		goto out;
	}
	if (op->type == STORE_OP_CREATE && exists) {
		e = FAIL(op, &c, -EEXIST, "already exists");
		goto out;
	}
	if (!exists && op->type != STORE_OP_CREATE && op->type != STORE_OP_APPLY &&
	    op->type != STORE_OP_MIRROR) {
		e = FAIL(op, &c, -ENOENT, "not found");
		goto out;
	}
	switch (op->type) {
	case STORE_OP_CREATE: e = do_create(s, op, &c); break;
	case STORE_OP_APPLY: e = exists ? do_apply(s, op, &c, &cur) : do_create(s, op, &c); break;
	case STORE_OP_REPLACE: e = do_replace(s, op, &c, &cur); break;
	case STORE_OP_MERGE_PATCH: e = do_merge_patch(s, op, &c, &cur); break;
	case STORE_OP_STATUS:
	case STORE_OP_STATUS_PATCH: e = do_status(s, op, &c, &cur); break;
	case STORE_OP_DELETE: e = do_delete(s, op, &c, &cur); break;
	case STORE_OP_MIRROR: e = do_mirror(s, op, &c, exists ? &cur : NULL); break;
	default: e = FAIL(op, &c, -EINVAL, "unknown op");
	}
out:
	json_decref(cur.obj);
	if (parsed) {
		op->body = NULL;
		json_decref(parsed);
	}
	if (e < 0 && !op->error)
		store_op_fail(op, e, "failed");
	if (op->object) {
		const char *rv = json_string_value(
			json_object_get(json_object_get(op->object, "metadata"), "resourceVersion"));
		if (!rv || num_parse_u64_str(rv, UINT64_MAX, &op->rv) < 0)
			op->rv = 0;
		if (op->no_object) {
			json_decref(op->object);
			op->object = NULL;
		}
	}
	return op->error;
}
