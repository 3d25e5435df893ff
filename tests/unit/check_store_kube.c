/* check_store_kube — unit tests for what the store offers Kubernetes mode:
 * the sources of a write (local, kube, daemon) and who may change what,
 * the source recorded in the change log (and its migration), the MIRROR
 * op (the cluster's object with its identity, status kept or replaced,
 * unchanged objects, invalid bodies) and store_names() for the relist.
 *
 * Each test opens a fresh database in its own mkdtemp() directory (under
 * $TMPDIR) and removes it afterwards.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "store/store-internal.h"
#include "tests/unit/unit.h"

#define FIXTURE_NAME "check_store_kube"
#include "tests/unit/store_fixture.h"

#define UID_A "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f"
#define CREATED_A "2024-01-02T03:04:05Z"

static json_t *hw(const char *ns, const char *name, const char *mac)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:{s:s}, s:{s:b}}]}}", "apiVersion",
			 "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name", name,
			 "namespace", ns, "spec", "interfaces", "dhcp", "mac", mac, "netboot",
			 "allowPXE", 1);
}

/* A Hardware as the API server returns it: identity, a resourceVersion
 * of the cluster's, managedFields, and a status. */
static json_t *cluster_hw(const char *mac, const char *state, json_int_t generation)
{
	json_t *o = hw("default", "a", mac);
	json_t *m = json_object_get(o, "metadata");
	json_t *id = json_pack("{s:s, s:s, s:I, s:s, s:{s:s}, s:{s:s}, s:[s], s:[{s:s}]}", "uid",
			       UID_A, "creationTimestamp", CREATED_A, "generation", generation,
			       "resourceVersion", "777", "labels", "rack", "r1", "annotations",
			       "note", "n", "finalizers", "tinkerbell.org/x", "managedFields",
			       "manager", "kubectl");
	ck_assert_int_eq(json_object_update(m, id), 0);
	json_decref(id);
	if (state)
		json_object_set_new(o, "status", json_pack("{s:s}", "state", state));
	return o;
}

static const char *meta(const json_t *o, const char *key)
{
	return store_meta_str(o, key);
}

static int run(enum store_op_type t, enum store_kind k, const char *ns, const char *name,
	       json_t *body, const char *source, bool keep_status, struct store_op *out)
{
	struct store_op op = { .type = t,
			       .kind = k,
			       .namespace_ = ns,
			       .name = name,
			       .body = body,
			       .source = source,
			       .keep_status = keep_status };
	int e = store_write1(st, &op);
	ck_assert_int_eq(e, op.error);
	if (out)
		*out = op;
	else
		store_op_clear(&op);
	return e;
}

/* Runs an op on Hardware default/a with a body it takes; its result. */
static enum store_result run_a(enum store_op_type t, json_t *body, const char *source,
			       bool keep_status, int want)
{
	struct store_op op;
	int e = run(t, STORE_KIND_HARDWARE, "default", "a", body, source, keep_status, &op);
	json_decref(body);
	ck_assert_msg(e == want, "op %d: %d (want %d): %s", t, e, want, store_op_message(&op));
	enum store_result r = op.result;
	store_op_clear(&op);
	return r;
}

static json_t *get_a(void)
{
	json_t *o = NULL;
	ck_assert_int_eq(store_get(rd, STORE_KIND_HARDWARE, "default", "a", &o), 0);
	return o;
}

static const char *status_state(const json_t *o)
{
	return json_string_value(json_object_get(json_object_get(o, "status"), "state"));
}

static uint64_t rv_now(void)
{
	uint64_t rv = 0;
	ck_assert_int_eq(store_resource_version(rd, &rv), 0);
	return rv;
}

/* ---- store_names() ---- */

struct names {
	char list[512];
	int stop_after; /* > 0: return -EINTR after that many */
	int n;
};

static int names_fn(const char *ns, const char *name, void *ud)
{
	struct names *nm = ud;
	size_t len = strlen(nm->list);
	snprintf(nm->list + len, sizeof(nm->list) - len, "%s%s/%s", len ? " " : "", ns, name);
	nm->n++;
	return nm->stop_after > 0 && nm->n >= nm->stop_after ? -EINTR : 0;
}

/* The names of kind k with source src, space separated. */
static const char *names_of(enum store_kind k, const char *src, struct names *nm)
{
	uint64_t rv = 0;
	memset(nm, 0, sizeof(*nm));
	ck_assert_int_eq(store_names(rd, k, src, names_fn, nm, &rv), 0);
	ck_assert_uint_eq(rv, rv_now());
	return nm->list;
}

/* ---- sources ---- */

/* The daemon's controllers change a kube object (status patch, merge
 * patch, delete) and it stays kube; the admin API may not. */
START_TEST(test_daemon_on_kube)
{
	struct names nm;
	ck_assert_int_eq(run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", NULL, 1),
			       STORE_SOURCE_KUBE, false, 0),
			 STORE_RESULT_CREATED);
	/* the admin API is refused */
	run_a(STORE_OP_STATUS_PATCH, json_pack("{s:{s:s}}", "status", "state", "x"), NULL, false,
	      -EPERM);
	run_a(STORE_OP_MERGE_PATCH, json_pack("{s:{s:{s:s}}}", "metadata", "labels", "x", "y"),
	      STORE_SOURCE_LOCAL, false, -EPERM);

	/* the daemon's controllers are not, and the object stays kube */
	ck_assert_int_eq(run_a(STORE_OP_STATUS_PATCH,
			       json_pack("{s:{s:s}}", "status", "state", "provisioning"),
			       STORE_SOURCE_DAEMON, false, 0),
			 STORE_RESULT_CONFIGURED);
	ck_assert_int_eq(run_a(STORE_OP_STATUS_PATCH,
			       json_pack("{s:{s:s}}", "status", "state", "provisioning"),
			       STORE_SOURCE_DAEMON, false, 0),
			 STORE_RESULT_UNCHANGED);
	ck_assert_int_eq(
		run_a(STORE_OP_MERGE_PATCH,
		      json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "boot", "seen"),
		      STORE_SOURCE_DAEMON, false, 0),
		STORE_RESULT_CONFIGURED);
	json_t *o = get_a();
	ck_assert_str_eq(status_state(o), "provisioning");
	ck_assert_str_eq(
		json_string_value(json_object_get(
			json_object_get(json_object_get(o, "metadata"), "annotations"), "boot")),
		"seen");
	json_decref(o);
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_KUBE, &nm), "default/a");
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_LOCAL, &nm), "");
	run_a(STORE_OP_MERGE_PATCH, json_pack("{s:{s:{s:s}}}", "metadata", "labels", "x", "y"),
	      NULL, false, -EPERM);

	/* what the daemon creates is local; the admin API may change it */
	json_t *b = hw("default", "b", "aa:bb:cc:dd:ee:02");
	ck_assert_int_eq(run(STORE_OP_CREATE, STORE_KIND_HARDWARE, NULL, NULL, b,
			     STORE_SOURCE_DAEMON, false, NULL),
			 0);
	json_decref(b);
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_LOCAL, &nm), "default/b");
	ck_assert_int_eq(
		run(STORE_OP_DELETE, STORE_KIND_HARDWARE, "default", "b", NULL, NULL, false, NULL),
		0);

	ck_assert_int_eq(run_a(STORE_OP_DELETE, NULL, STORE_SOURCE_DAEMON, false, 0),
			 STORE_RESULT_DELETED);
	ck_assert_int_eq(store_get(rd, STORE_KIND_HARDWARE, "default", "a", &o), -ENOENT);
	/* a source the store does not know */
	run_a(STORE_OP_CREATE, hw("default", "a", "aa:bb:cc:dd:ee:01"), "cluster", false, -EINVAL);
}
END_TEST

/* ---- the change log's source ---- */

struct seen {
	char log[512];
};

static int seen_fn(const struct store_change *c, void *ud)
{
	struct seen *s = ud;
	size_t len = strlen(s->log);
	snprintf(s->log + len, sizeof(s->log) - len, "%s%s %s %s", len ? "; " : "", c->name,
		 c->type, c->source);
	return 0;
}

static const char *changes_since(uint64_t after, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(
		store_changes_each(rd, after, STORE_KIND_MAX, NULL, 0, seen_fn, s, NULL, NULL), 0);
	return s->log;
}

START_TEST(test_changes_source)
{
	struct seen s;
	json_t *b = hw("default", "b", "aa:bb:cc:dd:ee:02");
	ck_assert_int_eq(
		run(STORE_OP_CREATE, STORE_KIND_HARDWARE, NULL, NULL, b, NULL, false, NULL), 0);
	json_decref(b);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", NULL, 1), STORE_SOURCE_KUBE, false,
	      0);
	run_a(STORE_OP_STATUS_PATCH, json_pack("{s:{s:s}}", "status", "state", "p"),
	      STORE_SOURCE_DAEMON, false, 0);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", NULL, 2), STORE_SOURCE_KUBE, true,
	      0);
	ck_assert_int_eq(run(STORE_OP_DELETE, STORE_KIND_HARDWARE, "default", "b", NULL,
			     STORE_SOURCE_DAEMON, false, NULL),
			 0);
	run_a(STORE_OP_DELETE, NULL, STORE_SOURCE_KUBE, false, 0);
	ck_assert_str_eq(changes_since(0, &s),
			 "b ADDED local; a ADDED kube; a MODIFIED daemon; a MODIFIED kube; "
			 "b DELETED daemon; a DELETED kube");
	ck_assert_str_eq(changes_since(4, &s), "b DELETED daemon; a DELETED kube");

	/* the watch output is Kubernetes-shaped: no source in it */
	json_t *ch = NULL;
	ck_assert_int_eq(store_changes(rd, 0, STORE_KIND_MAX, NULL, 10, &ch, NULL), 0);
	ck_assert_uint_eq(json_array_size(ch), 6);
	for (size_t i = 0; i < json_array_size(ch); i++)
		ck_assert_uint_eq(json_object_size(json_array_get(ch, i)), 2);
	json_decref(ch);
}
END_TEST

static void sql_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, err ? err : "");
	sqlite3_free(err);
}

static int column_index(sqlite3 *db, const char *col)
{
	sqlite3_stmt *q;
	ck_assert_int_eq(sqlite3_prepare_v2(db,
					    "SELECT cid FROM pragma_table_info('changes') "
					    "WHERE name = ?1",
					    -1, &q, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(q, 1, col, -1, SQLITE_STATIC);
	int cid = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
	sqlite3_finalize(q);
	return cid;
}

/* A v5 database's change log: its rows read back as local, the column
 * goes before the text, and a database set back to v5 migrates again. */
START_TEST(test_migration_source)
{
	struct seen s;
	close_store();
	teardown();
	setup_dir();
	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	sql_exec(db, "PRAGMA journal_mode = WAL");
	sql_exec(db, "BEGIN");
	for (int v = 1; v <= 5; v++)
		sql_exec(db, store_schema_sql(v));
	json_t *o = hw("default", "old", "aa:bb:cc:dd:ee:09");
	char *text = json_dumps(o, JSON_COMPACT);
	char *sql = sqlite3_mprintf(
		"INSERT INTO objects (id, kind, namespace, name, uid, rv, source, json) "
		"VALUES (1, 'Hardware', 'default', 'old', 'uid-1', 1, 'local', %Q);"
		"INSERT INTO changes VALUES (1, 'Hardware', 'default', 'old', 'ADDED', %Q);"
		"UPDATE meta SET value = 1 WHERE key = 'rv'; PRAGMA user_version = 5; COMMIT",
		text, text);
	sql_exec(db, sql);
	sqlite3_free(sql);
	free(text);
	json_decref(o);
	ck_assert_int_eq(column_index(db, "source"), -1);
	sqlite3_close(db);

	open_store(NULL);
	ck_assert_int_ge(store_schema_version(), 6);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", NULL, 1), STORE_SOURCE_KUBE, false,
	      0);
	ck_assert_str_eq(changes_since(0, &s), "old ADDED local; a ADDED kube");
	close_store();

	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_ge(column_index(db, "source"), 0);
	ck_assert_int_lt(column_index(db, "source"), column_index(db, "json"));
	sql_exec(db, "PRAGMA user_version = 5");
	sqlite3_close(db);
	open_store(NULL);
	ck_assert_str_eq(changes_since(0, &s), "old ADDED local; a ADDED kube");
}
END_TEST

/* ---- MIRROR ---- */

START_TEST(test_mirror_identity)
{
	struct store_op op;
	json_t *body = cluster_hw("aa:bb:cc:dd:ee:01", "ready", 7);
	ck_assert_int_eq(run(STORE_OP_MIRROR, STORE_KIND_HARDWARE, NULL, NULL, body,
			     STORE_SOURCE_KUBE, false, &op),
			 0);
	json_decref(body);
	ck_assert_int_eq(op.result, STORE_RESULT_CREATED);
	uint64_t rv = op.rv;
	store_op_clear(&op);
	ck_assert_uint_eq(rv, rv_now());

	json_t *o = get_a();
	ck_assert_str_eq(meta(o, "uid"), UID_A);
	ck_assert_str_eq(meta(o, "creationTimestamp"), CREATED_A);
	json_t *m = json_object_get(o, "metadata");
	ck_assert_int_eq(json_integer_value(json_object_get(m, "generation")), 7);
	char want_rv[24];
	snprintf(want_rv, sizeof(want_rv), "%" PRIu64, rv);
	ck_assert_str_eq(meta(o, "resourceVersion"), want_rv); /* not the cluster's 777 */
	ck_assert_ptr_null(json_object_get(m, "managedFields"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "labels"), "rack")),
			 "r1");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(m, "finalizers"), 0)),
			 "tinkerbell.org/x");
	ck_assert_str_eq(status_state(o), "ready");
	json_decref(o);

	/* the same object again, even at another cluster resourceVersion */
	body = cluster_hw("aa:bb:cc:dd:ee:01", "ready", 7);
	json_object_set_new(json_object_get(body, "metadata"), "resourceVersion",
			    json_string("778"));
	ck_assert_int_eq(run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, false, 0),
			 STORE_RESULT_UNCHANGED);
	ck_assert_uint_eq(rv_now(), rv);
	struct seen s;
	ck_assert_str_eq(changes_since(0, &s), "a ADDED kube");

	/* the identity a body lacks is kept */
	body = cluster_hw("aa:bb:cc:dd:ee:01", "ready", 7);
	json_object_del(json_object_get(body, "metadata"), "uid");
	json_object_del(json_object_get(body, "metadata"), "creationTimestamp");
	ck_assert_int_eq(run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, false, 0),
			 STORE_RESULT_UNCHANGED);
}
END_TEST

START_TEST(test_mirror_status)
{
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "ready", 1), STORE_SOURCE_KUBE,
	      false, 0);
	run_a(STORE_OP_STATUS_PATCH, json_pack("{s:{s:s}}", "status", "state", "provisioning"),
	      STORE_SOURCE_DAEMON, false, 0);

	/* a spec change from the cluster, its stale status not taken */
	json_t *body = cluster_hw("aa:bb:cc:dd:ee:01", "ready", 2);
	json_t *ifs = json_object_get(json_object_get(body, "spec"), "interfaces");
	json_object_set_new(json_object_get(json_array_get(ifs, 0), "netboot"), "allowPXE",
			    json_false());
	uint64_t before = rv_now();
	ck_assert_int_eq(run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, true, 0),
			 STORE_RESULT_CONFIGURED);
	ck_assert_uint_eq(rv_now(), before + 1);
	json_t *o = get_a();
	ck_assert_str_eq(status_state(o), "provisioning");
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(o, "metadata"), "generation")),
		2);
	json_t *pxe = json_object_get(
		json_object_get(
			json_array_get(json_object_get(json_object_get(o, "spec"), "interfaces"),
				       0),
			"netboot"),
		"allowPXE");
	ck_assert(json_is_false(pxe));
	json_decref(o);

	/* without keep_status the cluster's status replaces it */
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "done", 3), STORE_SOURCE_KUBE, false,
	      0);
	o = get_a();
	ck_assert_str_eq(status_state(o), "done");
	json_decref(o);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", NULL, 3), STORE_SOURCE_KUBE, false,
	      0);
	o = get_a();
	ck_assert_ptr_null(json_object_get(o, "status"));
	json_decref(o);
	/* keep_status on a create takes body's */
	json_t *c = cluster_hw("aa:bb:cc:dd:ee:03", "ready", 1);
	json_object_set_new(json_object_get(c, "metadata"), "name", json_string("c"));
	ck_assert_int_eq(run(STORE_OP_MIRROR, STORE_KIND_HARDWARE, NULL, NULL, c, STORE_SOURCE_KUBE,
			     true, NULL),
			 0);
	json_decref(c);
	ck_assert_int_eq(store_get(rd, STORE_KIND_HARDWARE, "default", "c", &o), 0);
	ck_assert_str_eq(status_state(o), "ready");
	json_decref(o);
}
END_TEST

static json_t *get_mirror_a(void)
{
	json_t *o = NULL;
	ck_assert_int_eq(store_get_mirror(rd, STORE_KIND_HARDWARE, "default", "a", &o), 0);
	return o;
}

static json_t *allow_pxe(const json_t *o)
{
	return json_object_get(
		json_object_get(
			json_array_get(json_object_get(json_object_get(o, "spec"), "interfaces"), 0),
			"netboot"),
		"allowPXE");
}

/* A daemon's change of a kube object is kept over the cluster's newer
 * versions until the cluster has it; the cluster's version is kept beside
 * the object (store_get_mirror()), defaulted like it; a local object has
 * none, and a deleted one's goes with it. */
START_TEST(test_mirror_keeps_daemon_changes)
{
	json_t *o;
	ck_assert_int_eq(store_get_mirror(rd, STORE_KIND_HARDWARE, "default", "a", &o), -ENOENT);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "ready", 1), STORE_SOURCE_KUBE,
	      false, 0);
	o = get_mirror_a();
	ck_assert_str_eq(meta(o, "resourceVersion"), "777"); /* the cluster's */
	json_decref(o);
	/* the daemon turns allowPXE off and marks the machine */
	o = get_a();
	json_t *ifs = json_deep_copy(json_object_get(json_object_get(o, "spec"), "interfaces"));
	json_decref(o);
	json_t *nb = json_object_get(json_array_get(ifs, 0), "netboot");
	if (!nb)
		json_object_set_new(json_array_get(ifs, 0), "netboot", nb = json_object());
	json_object_set_new(nb, "allowPXE", json_false());
	run_a(STORE_OP_MERGE_PATCH,
	      json_pack("{s:{s:{s:s}}, s:{s:o}}", "metadata", "annotations", "ironbell.dev/mark",
			"x", "spec", "interfaces", ifs),
	      STORE_SOURCE_DAEMON, false, 0);
	/* the cluster changes a label meanwhile: both are kept */
	json_t *body = cluster_hw("aa:bb:cc:dd:ee:01", "ready", 1);
	json_object_set_new(json_object_get(json_object_get(body, "metadata"), "labels"), "rack",
			    json_string("r2"));
	json_object_set_new(json_object_get(body, "metadata"), "resourceVersion",
			    json_string("778"));
	run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, true, 0);
	o = get_a();
	ck_assert(json_is_false(allow_pxe(o)));
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(o, "metadata"), "annotations"),
				 "ironbell.dev/mark")),
			 "x");
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(o, "metadata"), "labels"), "rack")),
			 "r2");
	json_decref(o);
	o = get_mirror_a();
	ck_assert_str_eq(meta(o, "resourceVersion"), "778");
	ck_assert(json_is_true(allow_pxe(o))); /* the cluster does not have it yet */
	json_decref(o);
	/* once the cluster has the change, nothing is left to keep: a later
	 * version that turns it off again wins */
	body = cluster_hw("aa:bb:cc:dd:ee:01", "ready", 1);
	json_object_set_new(json_object_get(json_object_get(body, "metadata"), "annotations"),
			    "ironbell.dev/mark", json_string("x"));
	json_object_set_new(json_object_get(json_array_get(json_object_get(
							   json_object_get(body, "spec"),
							   "interfaces"),
						   0),
					    "netboot"),
			    "allowPXE", json_false());
	run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, true, 0);
	body = cluster_hw("aa:bb:cc:dd:ee:01", "ready", 1);
	json_object_set_new(json_object_get(json_array_get(json_object_get(
							   json_object_get(body, "spec"),
							   "interfaces"),
						   0),
					    "netboot"),
			    "allowPXE", json_true());
	run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, true, 0);
	o = get_a();
	ck_assert(json_is_true(allow_pxe(o)));
	ck_assert_ptr_null(json_object_get(
		json_object_get(json_object_get(o, "metadata"), "annotations"), "ironbell.dev/mark"));
	json_decref(o);
	/* deleted: the mirror goes too, and a local object has none */
	run_a(STORE_OP_DELETE, NULL, STORE_SOURCE_KUBE, false, 0);
	run_a(STORE_OP_CREATE, hw("default", "a", "aa:bb:cc:dd:ee:01"), NULL, false, 0);
	ck_assert_int_eq(store_get_mirror(rd, STORE_KIND_HARDWARE, "default", "a", &o), -ENOENT);
}
END_TEST

/* keep_status keeps the status of the same object only: one deleted and
 * made again in the cluster under the same name (another uid) takes the
 * cluster's. */
START_TEST(test_mirror_new_uid_status)
{
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "ready", 1), STORE_SOURCE_KUBE,
	      false, 0);
	run_a(STORE_OP_STATUS_PATCH, json_pack("{s:{s:s}}", "status", "state", "provisioning"),
	      STORE_SOURCE_DAEMON, false, 0);
	json_t *body = cluster_hw("aa:bb:cc:dd:ee:01", "fresh", 1);
	json_object_set_new(json_object_get(body, "metadata"), "uid",
			    json_string("11111111-2222-4333-8444-555555555555"));
	run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, true, 0);
	json_t *o = get_a();
	ck_assert_str_eq(status_state(o), "fresh");
	json_decref(o);
}
END_TEST

/* The cluster's first version of an object the daemon made here (a bmc
 * Job or Task its controllers made, which kube/ then created in the
 * cluster: the API server gives it its own uid and drops its status) is
 * that object: keep_status keeps the status the controllers gave it. Once
 * the store has a version from the cluster, another uid is another object
 * again, with or without a status. */
START_TEST(test_mirror_made_here_status)
{
	run_a(STORE_OP_CREATE, hw("default", "a", "aa:bb:cc:dd:ee:01"), STORE_SOURCE_DAEMON,
	      false, 0);
	run_a(STORE_OP_STATUS_PATCH, json_pack("{s:{s:s}}", "status", "state", "provisioning"),
	      STORE_SOURCE_DAEMON, false, 0);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", NULL, 1), STORE_SOURCE_KUBE, true,
	      0);
	json_t *o = get_a();
	ck_assert_str_eq(meta(o, "uid"), UID_A);
	ck_assert_str_eq(status_state(o), "provisioning");
	json_decref(o);
	json_t *body = cluster_hw("aa:bb:cc:dd:ee:01", NULL, 1);
	json_object_set_new(json_object_get(body, "metadata"), "uid",
			    json_string("11111111-2222-4333-8444-555555555555"));
	run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, true, 0);
	o = get_a();
	ck_assert_ptr_null(json_object_get(o, "status"));
	json_decref(o);
}
END_TEST

START_TEST(test_mirror_refused)
{
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "ready", 1), STORE_SOURCE_KUBE,
	      false, 0);
	json_t *before = get_a();
	uint64_t rv = rv_now();

	/* only the watcher mirrors */
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "x", 2), NULL, false, -EINVAL);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "x", 2), STORE_SOURCE_LOCAL, false,
	      -EINVAL);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", "x", 2), STORE_SOURCE_DAEMON, false,
	      -EINVAL);
	/* an invalid object is refused whole */
	run_a(STORE_OP_MIRROR, cluster_hw("zz", "x", 2), STORE_SOURCE_KUBE, false, -EINVAL);
	json_t *body = cluster_hw("aa:bb:cc:dd:ee:01", "x", 2);
	json_object_set_new(json_object_get(body, "metadata"), "uid", json_integer(5));
	run_a(STORE_OP_MIRROR, body, STORE_SOURCE_KUBE, false, -EINVAL);
	/* a MAC another Hardware holds */
	json_t *b = hw("default", "b", "aa:bb:cc:dd:ee:02");
	ck_assert_int_eq(
		run(STORE_OP_CREATE, STORE_KIND_HARDWARE, NULL, NULL, b, NULL, false, NULL), 0);
	json_decref(b);
	run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:02", "x", 2), STORE_SOURCE_KUBE, false,
	      -EADDRINUSE);

	json_t *after = get_a();
	ck_assert(json_equal(before, after));
	json_decref(before);
	json_decref(after);
	ck_assert_uint_eq(rv_now(), rv + 1); /* b's create only */
}
END_TEST

/* A mirror over a local object makes it kube; uid and creation time
 * become the cluster's. */
START_TEST(test_mirror_takes_local)
{
	struct names nm;
	run_a(STORE_OP_CREATE, hw("default", "a", "aa:bb:cc:dd:ee:01"), NULL, false, 0);
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_LOCAL, &nm), "default/a");
	ck_assert_int_eq(run_a(STORE_OP_MIRROR, cluster_hw("aa:bb:cc:dd:ee:01", NULL, 1),
			       STORE_SOURCE_KUBE, false, 0),
			 STORE_RESULT_CONFIGURED);
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_KUBE, &nm), "default/a");
	json_t *o = get_a();
	ck_assert_str_eq(meta(o, "uid"), UID_A);
	json_decref(o);
	run_a(STORE_OP_MERGE_PATCH, json_pack("{s:{s:{s:s}}}", "metadata", "labels", "x", "y"),
	      NULL, false, -EPERM);
}
END_TEST

/* ---- store_names() ---- */

START_TEST(test_names)
{
	struct names nm;
	static const struct {
		const char *ns, *name, *mac, *source;
	} objs[] = {
		{ "ns2", "a", "aa:bb:cc:dd:ee:01", STORE_SOURCE_KUBE },
		{ "default", "b", "aa:bb:cc:dd:ee:02", STORE_SOURCE_LOCAL },
		{ "default", "c", "aa:bb:cc:dd:ee:03", STORE_SOURCE_KUBE },
		{ "default", "a", "aa:bb:cc:dd:ee:04", STORE_SOURCE_KUBE },
		{ "default", "d", "aa:bb:cc:dd:ee:05", STORE_SOURCE_DAEMON },
	};
	for (size_t i = 0; i < ARRAY_SIZE(objs); i++) {
		json_t *o = hw(objs[i].ns, objs[i].name, objs[i].mac);
		ck_assert_int_eq(run(STORE_OP_CREATE, STORE_KIND_HARDWARE, NULL, NULL, o,
				     objs[i].source, false, NULL),
				 0);
		json_decref(o);
	}
	json_t *t =
		json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "tinkerbell.org/v1alpha1",
			  "kind", "Template", "metadata", "name", "t", "spec", "data", "x: 1\n");
	ck_assert_int_eq(run(STORE_OP_CREATE, STORE_KIND_TEMPLATE, NULL, NULL, t, STORE_SOURCE_KUBE,
			     false, NULL),
			 0);
	json_decref(t);

	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_KUBE, &nm),
			 "default/a default/c ns2/a");
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, NULL, &nm),
			 "default/a default/b default/c default/d ns2/a");
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_LOCAL, &nm),
			 "default/b default/d");
	ck_assert_str_eq(names_of(STORE_KIND_HARDWARE, STORE_SOURCE_DAEMON, &nm), "");
	ck_assert_str_eq(names_of(STORE_KIND_TEMPLATE, STORE_SOURCE_KUBE, &nm), "default/t");
	ck_assert_str_eq(names_of(STORE_KIND_WORKFLOW, NULL, &nm), "");

	/* fn's error stops the walk */
	memset(&nm, 0, sizeof(nm));
	nm.stop_after = 2;
	ck_assert_int_eq(store_names(rd, STORE_KIND_HARDWARE, NULL, names_fn, &nm, NULL), -EINTR);
	ck_assert_str_eq(nm.list, "default/a default/b");
	ck_assert_int_eq(store_names(rd, STORE_KIND_MAX, NULL, names_fn, &nm, NULL), -EINVAL);
	ck_assert_int_eq(store_names(rd, STORE_KIND_HARDWARE, NULL, NULL, NULL, NULL), -EINVAL);
}
END_TEST

static Suite *store_kube_suite(void)
{
	Suite *s = suite_create("store_kube");
	TCase *tc = tcase_create("db");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	UNIT_TEST(tc, test_daemon_on_kube);
	UNIT_TEST(tc, test_changes_source);
	UNIT_TEST(tc, test_migration_source);
	UNIT_TEST(tc, test_mirror_identity);
	UNIT_TEST(tc, test_mirror_status);
	UNIT_TEST(tc, test_mirror_refused);
	UNIT_TEST(tc, test_mirror_keeps_daemon_changes);
	UNIT_TEST(tc, test_mirror_new_uid_status);
	UNIT_TEST(tc, test_mirror_made_here_status);
	UNIT_TEST(tc, test_mirror_takes_local);
	UNIT_TEST(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(store_kube_suite());
}
