/* schema — the SQL schema and its migrations.
 *
 * DESIGN: the schema version is PRAGMA user_version. migrations[] lists,
 * for every version, the SQL that builds it from the one before and an
 * optional C step; store_schema_migrate() applies each missing version in
 * its own IMMEDIATE transaction (SQL, C step, new user_version, COMMIT),
 * so a crash mid-upgrade leaves the last complete version. Migrations are
 * never edited once released: a change is a new entry at the end.
 *
 *   v1  objects (JSON text + the columns we look up by), meta (the
 *       store-wide resourceVersion), the MAC and IP indexes of Hardware,
 *       the change log that watches resume from.
 *   v2  the system-UUID index of Hardware and the events table; every
 *       Hardware index is rebuilt from the objects, so keys that v1 did
 *       not know about (UUIDs) are found for objects written before.
 *   v3  no new table: the Hardware indexes are rebuilt once more, because
 *       IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are now indexed as
 *       the IPv4 address they map (10.0.0.1).
 *   v4  the leases table of the DHCP server: one row per MAC (normalized
 *       like hw_mac), its IP (normalized like hw_ip), the Hardware it was
 *       given for, its state and times; indexed by IP and by expiry. Not
 *       objects: no resourceVersion, no change log. IF NOT EXISTS, so
 *       that a database whose user_version was set back (tests do) can
 *       run it again.
 *   v5  the expiry index of leases is dropped: every renewal moved the
 *       row's entry in it, one more random page written per lease, while
 *       the expiry sweep that used it runs every few seconds and scans a
 *       table of a few MB at most in milliseconds.
 *   v6  the change log records the source of the op that made each change
 *       (changes.source: "local", "kube" or "daemon"; 'local' for the rows
 *       before), so that what the daemon's controllers changed in a
 *       Kubernetes object can be told from what the watcher mirrored. The
 *       table is rebuilt with the column before json, not added at the
 *       end: a reader of the log's heads (store_changes_each()) must not
 *       walk the text's overflow pages to reach it. A C step that rebuilds
 *       only when the column is missing, so that a database whose
 *       user_version was set back can run it again.
 *   v7  mirrors: for an object from Kubernetes, the cluster's version as
 *       the watcher last wrote it (STORE_OP_MIRROR), keyed by the
 *       object's row. A table of its own, so that the frequent status
 *       writes of those objects do not rewrite it; deleted with the
 *       object.
 *
 * Objects keep their JSON whole; index tables point at objects.id, and
 * are rewritten by the writer whenever a Hardware's keys may change.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "store/store-internal.h"

static const char v1_sql[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO meta (key, value) VALUES ('rv', 0), ('changes_trimmed', 0);"
	"CREATE TABLE objects ("
	"  id INTEGER PRIMARY KEY,"
	"  kind TEXT NOT NULL,"
	"  namespace TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  uid TEXT NOT NULL,"
	"  rv INTEGER NOT NULL,"
	"  source TEXT NOT NULL DEFAULT 'local',"
	"  json TEXT NOT NULL,"
	"  UNIQUE (kind, namespace, name));"
	"CREATE TABLE hw_mac (key TEXT PRIMARY KEY, obj INTEGER NOT NULL, field TEXT NOT NULL)"
	"  WITHOUT ROWID;"
	"CREATE INDEX hw_mac_obj ON hw_mac (obj);"
	"CREATE TABLE hw_ip (key TEXT PRIMARY KEY, obj INTEGER NOT NULL, field TEXT NOT NULL)"
	"  WITHOUT ROWID;"
	"CREATE INDEX hw_ip_obj ON hw_ip (obj);"
	"CREATE TABLE changes ("
	"  rv INTEGER PRIMARY KEY,"
	"  kind TEXT NOT NULL,"
	"  namespace TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  type TEXT NOT NULL,"
	"  json TEXT NOT NULL);";

static const char v2_sql[] =
	"CREATE TABLE hw_uuid (key TEXT PRIMARY KEY, obj INTEGER NOT NULL, field TEXT NOT NULL)"
	"  WITHOUT ROWID;"
	"CREATE INDEX hw_uuid_obj ON hw_uuid (obj);"
	"CREATE TABLE events ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  time INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  namespace TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  type TEXT NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  message TEXT NOT NULL);";

static const char v4_sql[] =
	"CREATE TABLE IF NOT EXISTS leases ("
	"  mac TEXT PRIMARY KEY,"
	"  ip TEXT NOT NULL,"
	"  namespace TEXT NOT NULL DEFAULT '',"
	"  name TEXT NOT NULL DEFAULT '',"
	"  state TEXT NOT NULL CHECK (state IN ('bound', 'released', 'declined')),"
	"  starts INTEGER NOT NULL,"
	"  expires INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS leases_ip ON leases (ip);"
	"CREATE INDEX IF NOT EXISTS leases_expires ON leases (expires);";

struct migration {
	const char *sql;
	int (*step)(sqlite3 *db, char *err, size_t errlen);
};

static const char v6_sql[] =
	"CREATE TABLE changes_v6 ("
	"  rv INTEGER PRIMARY KEY,"
	"  kind TEXT NOT NULL,"
	"  namespace TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  type TEXT NOT NULL,"
	"  source TEXT NOT NULL DEFAULT 'local',"
	"  json TEXT NOT NULL);"
	"INSERT INTO changes_v6 (rv, kind, namespace, name, type, json) "
	"  SELECT rv, kind, namespace, name, type, json FROM changes ORDER BY rv;"
	"DROP TABLE changes;"
	"ALTER TABLE changes_v6 RENAME TO changes;";

/* v6: changes.source, unless the table has it already. */
static int add_changes_source(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	bool have = false;
	int rc, e = -EIO;
	if (sqlite3_prepare_v2(db,
			       "SELECT 1 FROM pragma_table_info('changes') WHERE name = 'source'",
			       -1, &st, NULL) != SQLITE_OK)
		goto out;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		goto out;
	have = rc == SQLITE_ROW;
	sqlite3_finalize(st); /* done before the table it read is dropped */
	st = NULL;
	if (!have && sqlite3_exec(db, v6_sql, NULL, NULL, NULL) != SQLITE_OK)
		goto out;
	e = 0;
out:
	if (e < 0)
		snprintf(err, errlen, "adding the change log's source: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return e;
}

/* migrations[i] builds version i + 1. */
static const struct migration migrations[] = {
	{ v1_sql, NULL },
	{ v2_sql, store_index_rebuild },
	{ "", store_index_rebuild },
	{ v4_sql, NULL },
	{ "DROP INDEX IF EXISTS leases_expires;", NULL },
	{ "", add_changes_source },
	{ "CREATE TABLE IF NOT EXISTS mirrors (obj INTEGER PRIMARY KEY, json TEXT NOT NULL);",
	  NULL },
};

#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

static const char *const index_tables[STORE_INDEX_MAX] = { "hw_mac", "hw_ip", "hw_uuid" };

const char *store_index_table(enum store_index ix)
{
	return (unsigned)ix < STORE_INDEX_MAX ? index_tables[ix] : NULL;
}

int store_schema_version(void)
{
	return SCHEMA_VERSION;
}

const char *store_schema_sql(int v)
{
	if (v < 1 || v > SCHEMA_VERSION)
		return NULL;
	return migrations[v - 1].sql;
}

int store_db_tune(sqlite3 *db)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "PRAGMA busy_timeout = %d; PRAGMA cache_size = -%d;",
		 STORE_BUSY_TIMEOUT_MS, STORE_CACHE_KIB);
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

static int user_version(sqlite3 *db, int *ret)
{
	sqlite3_stmt *st = NULL;
	int e = -EIO;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW)
		goto out;
	*ret = sqlite3_column_int(st, 0);
	e = 0;
out:
	sqlite3_finalize(st);
	return e;
}

/* Inserts one object's keys; a key another object holds is logged and
 * skipped (an upgrade must not lose the object over it). */
static int rebuild_one(sqlite3 *db, sqlite3_stmt *ins[STORE_INDEX_MAX], sqlite3_int64 id,
		       const char *ns, const char *name, const char *text)
{
	struct store_hw_keys keys;
	char msg[256];
	json_t *obj = json_loads(text, 0, NULL);
	int e = 0;

	if (!obj || store_hw_keys_get(obj, &keys, msg, sizeof(msg)) < 0) {
		log_warn("store", "hardware \"%s/%s\": not indexed: %s", ns, name,
			 obj ? msg : "stored JSON does not parse");
		goto out;
	}
	for (size_t i = 0; i < keys.n; i++) {
		sqlite3_stmt *st = ins[keys.k[i].index];
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, keys.k[i].value, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, id);
		sqlite3_bind_text(st, 3, keys.k[i].field, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE) {
			e = -EIO;
			goto out;
		}
		if (sqlite3_changes(db) == 0)
			log_warn("store",
				 "hardware \"%s/%s\": %s \"%s\" is held by another hardware; "
				 "not indexed",
				 ns, name, keys.k[i].field, keys.k[i].value);
	}
out:
	json_decref(obj);
	return e;
}

int store_index_rebuild(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *ins[STORE_INDEX_MAX] = { 0 }, *sel = NULL;
	char sql[256];
	int e = -EIO, rc;

	for (int ix = 0; ix < STORE_INDEX_MAX; ix++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s", index_tables[ix]);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			goto out;
		snprintf(sql, sizeof(sql),
			 "INSERT OR IGNORE INTO %s (key, obj, field) VALUES (?, ?, ?)",
			 index_tables[ix]);
		if (sqlite3_prepare_v2(db, sql, -1, &ins[ix], NULL) != SQLITE_OK)
			goto out;
	}
	if (sqlite3_prepare_v2(
		    db,
		    "SELECT id, namespace, name, json FROM objects WHERE kind = 'Hardware' "
		    "ORDER BY id",
		    -1, &sel, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		e = rebuild_one(db, ins, sqlite3_column_int64(sel, 0),
				(const char *)sqlite3_column_text(sel, 1),
				(const char *)sqlite3_column_text(sel, 2),
				(const char *)sqlite3_column_text(sel, 3));
		if (e < 0)
			goto out;
	}
	e = rc == SQLITE_DONE ? 0 : -EIO;
out:
	if (e < 0)
		snprintf(err, errlen, "rebuilding the hardware indexes: %s", sqlite3_errmsg(db));
	for (int ix = 0; ix < STORE_INDEX_MAX; ix++)
		sqlite3_finalize(ins[ix]);
	sqlite3_finalize(sel);
	return e;
}

static int migrate_one(sqlite3 *db, int v, char *err, size_t errlen)
{
	const struct migration *m = &migrations[v - 1];
	char sql[64];
	int e = -EIO;

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "migrating to schema v%d: %s", v, sqlite3_errmsg(db));
		return -EIO;
	}
	if (sqlite3_exec(db, m->sql, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "migrating to schema v%d: %s", v, sqlite3_errmsg(db));
		goto out;
	}
	if (m->step && (e = m->step(db, err, errlen)) < 0)
		goto out;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "migrating to schema v%d: %s", v, sqlite3_errmsg(db));
		e = -EIO;
		goto out;
	}
	return 0;
out:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return e < 0 ? e : -EIO;
}

int store_schema_migrate(sqlite3 *db, char *err, size_t errlen)
{
	int cur, e;

	e = user_version(db, &cur);
	if (e < 0) {
		snprintf(err, errlen, "reading the schema version: %s", sqlite3_errmsg(db));
		return e;
	}
	if (cur > SCHEMA_VERSION) {
		snprintf(err, errlen, "the database has schema v%d, newer than this build's v%d",
			 cur, SCHEMA_VERSION);
		return -EPROTO;
	}
	for (int v = cur + 1; v <= SCHEMA_VERSION; v++) {
		e = migrate_one(db, v, err, errlen);
		if (e < 0)
			return e;
		if (cur > 0)
			log_info("store", "migrated the database to schema v%d", v);
	}
	return 0;
}
