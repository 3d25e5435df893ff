/* reader — read-only connections for the threads that read the store.
 *
 * DESIGN: each thread that reads makes its own store_reader: a
 * SQLITE_OPEN_READONLY connection to the same file (WAL lets it read while
 * the writer writes) and its prepared statements, prepared on first use
 * and kept for the life of the reader. Nothing here is shared, so nothing
 * is locked; a reader must stay on the thread that made it.
 *
 * Hardware lookups by MAC, IP or system UUID go through the index tables
 * (a primary-key probe, then the object's rowid): no scan. Reads that
 * return more than one row and a resourceVersion (list, changes) run in
 * one read transaction, so what they return is one snapshot; a page of
 * changes that is not full ends at the snapshot's newest resourceVersion.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "common/utf8.h"
#include "store/store-internal.h"

#define STORE_MAX_CHANGES_LIMIT 100000u
#define STORE_MAX_EVENTS_LIMIT 100000u

enum rstmt {
	R_GET,
	R_LIST,
	R_LIST_NS,
	R_COUNT,
	R_NAMES,
	R_RV,
	R_TRIMMED,
	R_CHANGES,
	R_CHANGES_HEAD,
	R_CHANGE_TEXT,
	R_EVENTS,
	R_MIRROR,
	R_BEGIN,
	R_COMMIT,
	R_BY_KEY, /* + index */
	R_STMT_MAX = R_BY_KEY + STORE_INDEX_MAX
};

static const char *const rstmt_sql[R_BY_KEY] = {
	[R_GET] = "SELECT json FROM objects WHERE kind = ?1 AND namespace = ?2 AND name = ?3",
	[R_LIST] = "SELECT json FROM objects WHERE kind = ?1 ORDER BY namespace, name",
	[R_LIST_NS] = "SELECT json FROM objects WHERE kind = ?1 AND namespace = ?2 ORDER BY name",
	[R_COUNT] = "SELECT count(*) FROM objects WHERE kind = ?1",
	/* source is stored before json: the text is not read */
	[R_NAMES] = "SELECT namespace, name FROM objects WHERE kind = ?1 "
		    "AND (?2 IS NULL OR source = ?2) ORDER BY namespace, name",
	[R_RV] = "SELECT value FROM meta WHERE key = 'rv'",
	[R_TRIMMED] = "SELECT value FROM meta WHERE key = 'changes_trimmed'",
	[R_CHANGES] = "SELECT rv, type, json FROM changes WHERE rv > ?1 "
		      "AND (?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR namespace = ?3) "
		      "ORDER BY rv LIMIT ?4",
	/* the same rows without the text (not read off its overflow pages),
	 * which R_CHANGE_TEXT reads when asked */
	[R_CHANGES_HEAD] =
		"SELECT rv, type, kind, namespace, name, source FROM changes WHERE rv > ?1 "
		"AND (?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR namespace = ?3) "
		"ORDER BY rv LIMIT ?4",
	[R_CHANGE_TEXT] = "SELECT json FROM changes WHERE rv = ?1",
	[R_EVENTS] =
		"SELECT id, time, kind, namespace, name, type, reason, message FROM events "
		"WHERE id > ?1 AND (?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR namespace = ?3) "
		"AND (?4 IS NULL OR name = ?4) ORDER BY id LIMIT ?5",
	[R_MIRROR] = "SELECT m.json FROM objects o JOIN mirrors m ON m.obj = o.id "
		     "WHERE o.kind = ?1 AND o.namespace = ?2 AND o.name = ?3",
	[R_BEGIN] = "BEGIN",
	[R_COMMIT] = "COMMIT",
};

struct store_reader {
	struct store *s;
	sqlite3 *db;
	sqlite3_stmt *st[R_STMT_MAX];
	sqlite3_stmt *extra[STORE_READER_EXTRA_STMTS]; /* store_reader_stmt() */
};

struct store_reader *store_reader_new(struct store *s)
{
	struct store_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->s = s;
	if (sqlite3_open_v2(s->path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK ||
	    store_db_tune(r->db) < 0) {
		store_reader_free(r);
		return NULL;
	}
	return r;
}

void store_reader_free(struct store_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < R_STMT_MAX; i++)
		sqlite3_finalize(r->st[i]);
	for (int i = 0; i < STORE_READER_EXTRA_STMTS; i++)
		sqlite3_finalize(r->extra[i]);
	sqlite3_close(r->db);
	free(r);
}

/* Statement i, prepared on first use, reset and unbound. NULL on error. */
static sqlite3_stmt *rs(struct store_reader *r, int i)
{
	if (!r->st[i]) {
		char sql[256];
		const char *q = sql;
		if (i < R_BY_KEY)
			q = rstmt_sql[i];
		else
			snprintf(
				sql, sizeof(sql),
				"SELECT o.json FROM %s m JOIN objects o ON o.id = m.obj WHERE m.key = ?1",
				store_index_table(i - R_BY_KEY));
		if (sqlite3_prepare_v3(r->db, q, -1, SQLITE_PREPARE_PERSISTENT, &r->st[i], NULL) !=
		    SQLITE_OK)
			return NULL;
		return r->st[i];
	}
	sqlite3_reset(r->st[i]);
	sqlite3_clear_bindings(r->st[i]);
	return r->st[i];
}

sqlite3_stmt *store_reader_stmt(struct store_reader *r, int slot, const char *sql)
{
	if (slot < 0 || slot >= STORE_READER_EXTRA_STMTS)
		return NULL;
	if (!r->extra[slot]) {
		if (sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &r->extra[slot],
				       NULL) != SQLITE_OK)
			return NULL;
		return r->extra[slot];
	}
	sqlite3_reset(r->extra[slot]);
	sqlite3_clear_bindings(r->extra[slot]);
	return r->extra[slot];
}

static int step_done(struct store_reader *r, int i)
{
	sqlite3_stmt *st = rs(r, i);
	if (!st)
		return -EIO;
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Parses column col of st's current row as JSON. */
static json_t *column_json(sqlite3_stmt *st, int col)
{
	return jsondec_loadb((const char *)sqlite3_column_blob(st, col),
			  (size_t)sqlite3_column_bytes(st, col), 0, NULL);
}

/* Runs a statement bound to one text key and returns the JSON of its first
 * row. */
static int get_one(sqlite3_stmt *st, json_t **ret)
{
	int rc = sqlite3_step(st);
	int e;
	if (rc == SQLITE_DONE) {
		e = -ENOENT;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		e = -EIO;
		goto out;
	}
	json_t *o = column_json(st, 0);
	if (!o) {
		e = -EIO;
		goto out;
	}
	*ret = o;
	e = 0;
out:
	sqlite3_reset(st);
	return e;
}

/* One object by kind, namespace and name, with statement i (R_GET: the
 * store's version; R_MIRROR: the cluster's). */
static int get_named(struct store_reader *r, int i, enum store_kind k, const char *ns,
		     const char *name, json_t **ret)
{
	const struct store_kind_info *ki = store_kind_info(k);
	if (!ki || !ns || !name)
		return -EINVAL;
	sqlite3_stmt *st = rs(r, i);
	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, ki->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	return get_one(st, ret);
}

int store_get(struct store_reader *r, enum store_kind k, const char *ns, const char *name,
	      json_t **ret)
{
	return get_named(r, R_GET, k, ns, name, ret);
}

int store_get_mirror(struct store_reader *r, enum store_kind k, const char *ns, const char *name,
		     json_t **ret)
{
	return get_named(r, R_MIRROR, k, ns, name, ret);
}

static int read_u64(struct store_reader *r, int i, uint64_t *ret)
{
	sqlite3_stmt *st = rs(r, i);
	if (!st)
		return -EIO;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : -EIO;
}

int store_resource_version(struct store_reader *r, uint64_t *ret)
{
	return read_u64(r, R_RV, ret);
}

int store_count(struct store_reader *r, enum store_kind k, uint64_t *ret)
{
	const struct store_kind_info *ki = store_kind_info(k);
	if (!ki)
		return -EINVAL;
	sqlite3_stmt *st = rs(r, R_COUNT);
	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, ki->kind, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : -EIO;
}

/* Appends the matching rows to items (decoded) or, when text is not NULL,
 * their stored JSON texts to text, comma-separated (decoding a row only to
 * match a selector, and freeing it at once: memory stays that of the
 * text). *count gets the number of rows kept. */
static int list_rows(struct store_reader *r, const struct store_kind_info *ki, const char *ns,
		     const struct store_selector *sel, json_t *items, struct buf *text,
		     size_t *count)
{
	sqlite3_stmt *st = rs(r, ns ? R_LIST_NS : R_LIST);
	int rc, e = 0;
	if (!st)
		return -EIO;
	*count = 0;
	sqlite3_bind_text(st, 1, ki->kind, -1, SQLITE_STATIC);
	if (ns)
		sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (text) {
			if (sel) {
				json_t *o = column_json(st, 0);
				bool match = o && store_selector_match(
							  sel, json_object_get(json_object_get(
									   o, "metadata"),
								   "labels"));
				json_decref(o);
				if (!match)
					continue;
			}
			if ((*count && (e = buf_putc(text, ',')) < 0) ||
			    (e = buf_append(text, sqlite3_column_blob(st, 0),
					    (size_t)sqlite3_column_bytes(st, 0))) < 0)
				break;
			(*count)++;
			continue;
		}
		json_t *o = column_json(st, 0);
		if (!o) {
			e = -EIO;
			break;
		}
		const json_t *labels = json_object_get(json_object_get(o, "metadata"), "labels");
		if (store_selector_match(sel, labels)) {
			if (json_array_append_new(items, o) < 0) {
				e = -ENOMEM;
				break;
			}
			(*count)++;
		} else {
			json_decref(o);
		}
	}
	if (e == 0 && rc != SQLITE_DONE)
		e = -EIO;
	sqlite3_reset(st);
	return e;
}

int store_list_text(struct store_reader *r, enum store_kind k, const char *ns,
		    const struct store_selector *sel, struct buf *out, size_t *ret_n,
		    uint64_t *ret_rv)
{
	const struct store_kind_info *ki = store_kind_info(k);
	uint64_t rv = 0;
	size_t n = 0, len0 = out->len;
	int e;

	if (!ki)
		return -EINVAL;
	e = step_done(r, R_BEGIN);
	if (e < 0)
		return e;
	if ((e = read_u64(r, R_RV, &rv)) < 0 ||
	    (e = list_rows(r, ki, ns, sel, NULL, out, &n)) < 0) {
		out->len = len0; /* nothing half-written */
		if (out->data)
			out->data[len0] = '\0';
		goto out;
	}
	if (ret_n)
		*ret_n = n;
	if (ret_rv)
		*ret_rv = rv;
out:
	step_done(r, R_COMMIT);
	return e;
}

int store_each(struct store_reader *r, enum store_kind k, store_each_fn fn, void *userdata,
	       uint64_t *ret_rv)
{
	const struct store_kind_info *ki = store_kind_info(k);
	sqlite3_stmt *st;
	uint64_t rv = 0;
	int e, rc;

	if (!ki || !fn)
		return -EINVAL;
	e = step_done(r, R_BEGIN);
	if (e < 0)
		return e;
	if ((e = read_u64(r, R_RV, &rv)) < 0)
		goto out;
	if (!(st = rs(r, R_LIST))) {
		e = -EIO;
		goto out;
	}
	sqlite3_bind_text(st, 1, ki->kind, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		e = fn((const char *)sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
		       userdata);
		if (e < 0)
			break;
	}
	if (e >= 0 && rc != SQLITE_DONE)
		e = -EIO;
	sqlite3_reset(st);
	if (e >= 0 && ret_rv)
		*ret_rv = rv;
	if (e > 0)
		e = 0;
out:
	step_done(r, R_COMMIT);
	return e;
}

int store_names(struct store_reader *r, enum store_kind k, const char *source, store_name_fn fn,
		void *userdata, uint64_t *ret_rv)
{
	const struct store_kind_info *ki = store_kind_info(k);
	sqlite3_stmt *st;
	uint64_t rv = 0;
	int e, rc;

	if (!ki || !fn)
		return -EINVAL;
	e = step_done(r, R_BEGIN);
	if (e < 0)
		return e;
	if ((e = read_u64(r, R_RV, &rv)) < 0)
		goto out;
	if (!(st = rs(r, R_NAMES))) {
		e = -EIO;
		goto out;
	}
	sqlite3_bind_text(st, 1, ki->kind, -1, SQLITE_STATIC);
	if (source)
		sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *ns = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		if (!ns || !name) {
			e = -EIO;
			break;
		}
		e = fn(ns, name, userdata);
		if (e < 0)
			break;
	}
	if (e >= 0 && rc != SQLITE_DONE)
		e = -EIO;
	sqlite3_reset(st);
	if (e >= 0 && ret_rv)
		*ret_rv = rv;
	if (e > 0)
		e = 0;
out:
	step_done(r, R_COMMIT);
	return e;
}

int store_list(struct store_reader *r, enum store_kind k, const char *ns,
	       const struct store_selector *sel, json_t **ret_items, uint64_t *ret_rv)
{
	const struct store_kind_info *ki = store_kind_info(k);
	json_t *items = NULL;
	uint64_t rv = 0;
	int e;

	if (!ki)
		return -EINVAL;
	e = step_done(r, R_BEGIN);
	if (e < 0)
		return e;
	items = json_array();
	if (!items) {
		e = -ENOMEM;
		goto out;
	}
	e = read_u64(r, R_RV, &rv);
	if (e < 0)
		goto out;
	size_t n;
	e = list_rows(r, ki, ns, sel, items, NULL, &n);
	if (e < 0)
		goto out;
	*ret_items = items;
	items = NULL;
	if (ret_rv)
		*ret_rv = rv;
out:
	step_done(r, R_COMMIT);
	json_decref(items);
	return e;
}

static int by_key(struct store_reader *r, enum store_index ix, const char *key, json_t **ret)
{
	sqlite3_stmt *st = rs(r, R_BY_KEY + ix);
	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	return get_one(st, ret);
}

int store_hardware_json_by_mac(struct store_reader *r, const char *mac, struct buf *out)
{
	char k[STORE_KEY_LEN];
	if (store_norm_mac(mac, k) < 0)
		return -ENOENT;
	sqlite3_stmt *st = rs(r, R_BY_KEY + STORE_INDEX_MAC);
	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st), e;
	if (rc == SQLITE_DONE)
		e = -ENOENT;
	else if (rc != SQLITE_ROW)
		e = -EIO;
	else
		e = buf_append(out, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_reset(st);
	return e;
}

int store_hardware_by_mac(struct store_reader *r, const char *mac, json_t **ret)
{
	char k[STORE_KEY_LEN];
	if (store_norm_mac(mac, k) < 0)
		return -ENOENT;
	return by_key(r, STORE_INDEX_MAC, k, ret);
}

int store_hardware_by_ip(struct store_reader *r, const char *ip, json_t **ret)
{
	char k[STORE_KEY_LEN];
	if (store_norm_ip(ip, k) < 0)
		return -ENOENT;
	return by_key(r, STORE_INDEX_IP, k, ret);
}

int store_hardware_by_uuid(struct store_reader *r, const char *uuid, json_t **ret)
{
	char k[STORE_KEY_LEN];
	if (store_norm_uuid(uuid, k) < 0)
		return -ENOENT;
	return by_key(r, STORE_INDEX_UUID, k, ret);
}

/* Appends the changes after `after` that match kind and ns (NULL: any) to
 * out, at most limit of them; *last becomes the rv of the last one. */
static int change_rows(struct store_reader *r, uint64_t after, const char *kind, const char *ns,
		       size_t limit, json_t *out, uint64_t *last)
{
	sqlite3_stmt *st = rs(r, R_CHANGES);
	int rc, e = 0;
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)after);
	if (kind)
		sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	if (ns)
		sqlite3_bind_text(st, 3, ns, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = column_json(st, 2);
		json_t *c = o ? json_pack("{s:s, s:o}", "type",
					  (const char *)sqlite3_column_text(st, 1), "object", o) :
				NULL;
		if (!c || json_array_append_new(out, c) < 0) {
			e = o ? -ENOMEM : -EIO;
			break;
		}
		*last = (uint64_t)sqlite3_column_int64(st, 0);
	}
	if (e == 0 && rc != SQLITE_DONE)
		e = -EIO;
	sqlite3_reset(st);
	return e;
}

int store_changes(struct store_reader *r, uint64_t after, enum store_kind k, const char *ns,
		  size_t limit, json_t **ret_changes, uint64_t *ret_last)
{
	const struct store_kind_info *ki = k == STORE_KIND_MAX ? NULL : store_kind_info(k);
	json_t *out = NULL;
	uint64_t trimmed, newest, last = after;
	int e;

	if (k != STORE_KIND_MAX && !ki)
		return -EINVAL;
	if (limit == 0 || limit > STORE_MAX_CHANGES_LIMIT)
		limit = STORE_MAX_CHANGES_LIMIT;
	e = step_done(r, R_BEGIN);
	if (e < 0)
		return e;
	e = read_u64(r, R_TRIMMED, &trimmed);
	if (e == 0)
		e = read_u64(r, R_RV, &newest);
	if (e < 0)
		goto out;
	if (after < trimmed) {
		e = -ETIME;
		goto out;
	}
	out = json_array();
	if (!out) {
		e = -ENOMEM;
		goto out;
	}
	e = change_rows(r, after, ki ? ki->kind : NULL, ns, limit, out, &last);
	if (e < 0)
		goto out;
	/* Fewer than limit: every row of this snapshot was scanned, so the
	 * caller may resume from its newest rv. A filtered watch that matches
	 * nothing thus moves on with the others' changes, rather than
	 * scanning them again each time and being left behind by retention
	 * (a false -ETIME). */
	if (json_array_size(out) < limit && newest > last)
		last = newest;
	*ret_changes = out;
	out = NULL;
	if (ret_last)
		*ret_last = last;
out:
	step_done(r, R_COMMIT);
	json_decref(out);
	return e;
}

/* The kind of a change row's kind column; STORE_KIND_MAX when unknown. */
static enum store_kind kind_of_text(const char *s)
{
	for (int k = 0; s && k < STORE_KIND_MAX; k++)
		if (strcmp(store_kind_info((enum store_kind)k)->kind, s) == 0)
			return (enum store_kind)k;
	return STORE_KIND_MAX;
}

int store_change_text(const struct store_change *c, const char **ret_json, size_t *ret_len)
{
	struct store_reader *r = c->reader_;
	sqlite3_stmt *st = r ? rs(r, R_CHANGE_TEXT) : NULL;
	if (!st)
		return -EIO;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)c->rv);
	if (sqlite3_step(st) != SQLITE_ROW || !sqlite3_column_blob(st, 0)) {
		sqlite3_reset(st);
		return -EIO;
	}
	*ret_json = (const char *)sqlite3_column_blob(st, 0);
	*ret_len = (size_t)sqlite3_column_bytes(st, 0);
	return 0;
}

json_t *store_change_object(const struct store_change *c)
{
	struct store_reader *r = c->reader_;
	if (!r || !r->s || c->kind >= STORE_KIND_MAX || strcmp(c->type, "DELETED") == 0)
		return NULL;
	return store_objcache_get(r->s, c->kind, c->namespace_, c->name, -1, c->rv);
}

int store_changes_each(struct store_reader *r, uint64_t after, enum store_kind k, const char *ns,
		       size_t limit, store_change_fn fn, void *userdata, size_t *ret_n,
		       uint64_t *ret_last)
{
	const struct store_kind_info *ki = k == STORE_KIND_MAX ? NULL : store_kind_info(k);
	uint64_t trimmed, newest, last = after;
	sqlite3_stmt *st = NULL, *text;
	size_t n = 0;
	int rc, e;

	if ((k != STORE_KIND_MAX && !ki) || !fn)
		return -EINVAL;
	if (limit == 0 || limit > STORE_MAX_CHANGES_LIMIT)
		limit = STORE_MAX_CHANGES_LIMIT;
	e = step_done(r, R_BEGIN);
	if (e < 0)
		return e;
	e = read_u64(r, R_TRIMMED, &trimmed);
	if (e == 0)
		e = read_u64(r, R_RV, &newest);
	if (e < 0)
		goto out;
	if (after < trimmed) {
		e = -ETIME;
		goto out;
	}
	if (!(st = rs(r, R_CHANGES_HEAD)) || !(text = rs(r, R_CHANGE_TEXT))) {
		e = -EIO;
		goto out;
	}
	sqlite3_bind_int64(st, 1, (sqlite3_int64)after);
	if (ki)
		sqlite3_bind_text(st, 2, ki->kind, -1, SQLITE_STATIC);
	if (ns)
		sqlite3_bind_text(st, 3, ns, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_change c = {
			.kind = kind_of_text((const char *)sqlite3_column_text(st, 2)),
			.namespace_ = (const char *)sqlite3_column_text(st, 3),
			.name = (const char *)sqlite3_column_text(st, 4),
			.rv = (uint64_t)sqlite3_column_int64(st, 0),
			.type = (const char *)sqlite3_column_text(st, 1),
			.source = (const char *)sqlite3_column_text(st, 5),
			.reader_ = r,
		};
		if (!c.namespace_ || !c.name || !c.type || !c.source) {
			e = -EIO;
			break;
		}
		e = fn(&c, userdata);
		sqlite3_reset(text);
		if (e < 0)
			break;
		last = c.rv;
		n++;
	}
	if (e == 0 && rc != SQLITE_DONE)
		e = -EIO;
	sqlite3_reset(st);
	if (e < 0)
		goto out;
	/* as store_changes(): a page not full moves on to the snapshot's newest */
	if (n < limit && newest > last)
		last = newest;
	if (ret_n)
		*ret_n = n;
	if (ret_last)
		*ret_last = last;
out:
	step_done(r, R_COMMIT);
	return e;
}

/* Column i of st as a JSON string. The writer stores valid UTF-8; a row
 * an older version stored as the bytes came is repaired here (U+FFFD for
 * each ill-formed sequence), so that one bad row cannot fail a page.
 * NULL only when memory runs out. */
static json_t *text_column(sqlite3_stmt *st, int i)
{
	const char *p = (const char *)sqlite3_column_text(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);
	if (!p)
		return sqlite3_column_type(st, i) == SQLITE_NULL ? json_string("") : NULL;
	if (utf8_valid(p, n))
		return json_stringn_nocheck(p, n);
	size_t len = utf8_sanitized_len(p, n, 0);
	char *fixed = malloc(len + 1);
	if (!fixed)
		return NULL;
	utf8_sanitize(p, n, fixed, len, 0, NULL);
	json_t *j = json_stringn_nocheck(fixed, len);
	free(fixed);
	return j;
}

static json_t *event_json(sqlite3_stmt *st)
{
	static const char *const text_keys[] = { "kind", "namespace", "name",
						 "type", "reason",    "message" };
	char ts[21];
	json_t *ev = json_object();
	int e;

	time_rfc3339(sqlite3_column_int64(st, 1), ts);
	e = json_object_set_new(ev, "id", json_integer((json_int_t)sqlite3_column_int64(st, 0)));
	e |= json_object_set_new(ev, "time", json_string(ts));
	for (size_t i = 0; i < ARRAY_SIZE(text_keys); i++)
		e |= json_object_set_new(ev, text_keys[i], text_column(st, (int)i + 2));
	if (e) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

int store_events(struct store_reader *r, uint64_t after_id, enum store_kind k, const char *ns,
		 const char *name, size_t limit, json_t **ret_events)
{
	const struct store_kind_info *ki = k == STORE_KIND_MAX ? NULL : store_kind_info(k);
	json_t *out = NULL;
	int rc, e = 0;

	if (k != STORE_KIND_MAX && !ki)
		return -EINVAL;
	if (limit == 0 || limit > STORE_MAX_EVENTS_LIMIT)
		limit = STORE_MAX_EVENTS_LIMIT;
	sqlite3_stmt *st = rs(r, R_EVENTS);
	if (!st)
		return -EIO;
	out = json_array();
	if (!out)
		return -ENOMEM;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)after_id);
	if (ki)
		sqlite3_bind_text(st, 2, ki->kind, -1, SQLITE_STATIC);
	if (ns)
		sqlite3_bind_text(st, 3, ns, -1, SQLITE_STATIC);
	if (name)
		sqlite3_bind_text(st, 4, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *ev = event_json(st);
		if (!ev || json_array_append_new(out, ev) < 0) {
			e = -ENOMEM;
			break;
		}
	}
	if (e == 0 && rc != SQLITE_DONE)
		e = -EIO;
	sqlite3_reset(st);
	if (e == 0) {
		*ret_events = out;
		out = NULL;
	}
	json_decref(out);
	return e;
}
