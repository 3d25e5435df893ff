/* check_store_readonly — unit tests for store_open_readonly() (store/readonly.c):
 * a second handle on a store that a store_open() handle writes (same
 * process, as the Kea hook is another process on the daemon's file) reads
 * what was written and what is committed after; every write through it is
 * -EROFS; and a file that is missing (and stays missing), a directory,
 * unreadable, of random bytes, empty, of a newer or older schema, another
 * program's, corrupt, or locked by another connection fails with the
 * errno and a message naming the path.
 *
 * Each test works in its own mkdtemp() directory (under $TMPDIR) and
 * removes it afterwards.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store.h"
#include "tests/unit/unit.h"

#define FIXTURE_NAME "check_store_readonly"
#include "tests/unit/store_fixture.h"

#define NOBODY_UID 65534 /* an unprivileged user for the unreadable case */

static struct store *ro;
static struct store_reader *rr;

static void ro_teardown(void)
{
	store_reader_free(rr);
	rr = NULL;
	store_close(ro);
	ro = NULL;
	teardown();
}

/* A directory without a store in it: the file tests make their own. */
static void setup_empty(void)
{
	setup_dir();
}

static json_t *hw(const char *name, const char *mac, const char *ip)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s, s:{s:s, s:s}}}]}}", "apiVersion",
			 "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name", name,
			 "spec", "interfaces", "dhcp", "mac", mac, "ip", "address", ip, "netmask",
			 "255.255.255.0");
}

/* Applies Hardware name through the writing handle st. */
static void put_hw(const char *name, const char *mac, const char *ip)
{
	json_t *o = hw(name, mac, ip);
	struct store_op op = { .type = STORE_OP_APPLY, .kind = STORE_KIND_HARDWARE, .body = o };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	json_decref(o);
}

/* store_open_readonly() on dbpath must fail with want, saying what
 * (and naming the path); *ret must stay untouched. */
static void expect_fail(int want, const char *what)
{
	char err[512] = "";
	struct store *s = (struct store *)&err; /* must not be written */
	int e = store_open_readonly(dbpath, &s, err, sizeof(err));
	ck_assert_msg(e == want, "store_open_readonly: %d (%s), want %d", e, err, want);
	ck_assert_ptr_eq(s, (struct store *)&err);
	ck_assert_msg(strstr(err, dbpath), "message does not name the path: %s", err);
	ck_assert_msg(strstr(err, what), "message lacks \"%s\": %s", what, err);
}

static void open_ro(void)
{
	char err[512] = "";
	int e = store_open_readonly(dbpath, &ro, err, sizeof(err));
	ck_assert_msg(e == 0, "store_open_readonly: %d %s", e, err);
	rr = store_reader_new(ro);
	ck_assert_ptr_nonnull(rr);
}

/* A store made and closed by store_open(), with one Hardware. */
static void make_store(void)
{
	open_store(NULL);
	put_hw("a", "02:00:00:00:00:01", "10.0.0.1");
	close_store();
}

/* Runs sql on its own connection to dbpath. */
static void exec_sql(const char *sql)
{
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg ? msg : "");
	sqlite3_close(db);
}

static void write_file(const void *p, size_t n)
{
	int fd = open(dbpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
}

/* ---- reads ---- */

static int count_each(const char *json, size_t len, void *userdata)
{
	(void)json;
	(void)len;
	(*(int *)userdata)++;
	return 0;
}

static int count_change(const struct store_change *c, void *userdata)
{
	ck_assert_int_eq(c->kind, STORE_KIND_HARDWARE);
	(*(int *)userdata)++;
	return 0;
}

START_TEST(test_reads_what_the_writer_wrote)
{
	uint64_t rv_w, rv_r, last;
	json_t *o = NULL, *changes = NULL;
	int n = 0;
	size_t nc = 0;

	put_hw("a", "02:00:00:00:00:01", "10.0.0.1");
	open_ro();
	ck_assert_int_eq(store_hardware_by_mac(rr, "02:00:00:00:00:01", &o), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
			 "a");
	json_decref(o);
	ck_assert_int_eq(store_get(rr, STORE_KIND_HARDWARE, "default", "a", &o), 0);
	json_decref(o);
	ck_assert_int_eq(store_each(rr, STORE_KIND_HARDWARE, count_each, &n, &rv_r), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(store_resource_version(rd, &rv_w), 0);
	ck_assert_uint_eq(rv_r, rv_w);

	/* A commit after the open is seen, through the change log too. */
	put_hw("b", "02:00:00:00:00:02", "10.0.0.2");
	ck_assert_int_eq(store_hardware_by_ip(rr, "10.0.0.2", &o), 0);
	json_decref(o);
	ck_assert_int_eq(store_changes(rr, rv_r, STORE_KIND_HARDWARE, NULL, 100, &changes, &last),
			 0);
	ck_assert_uint_eq(json_array_size(changes), 1);
	json_decref(changes);
	n = 0;
	ck_assert_int_eq(
		store_changes_each(rr, 0, STORE_KIND_MAX, NULL, 100, count_change, &n, &nc, &last),
		0);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(nc, 2);
	ck_assert_int_eq(store_resource_version(rr, &rv_r), 0);
	ck_assert_uint_eq(rv_r, last);
	ck_assert_int_eq(store_hardware_by_mac(rr, "02:00:00:00:00:09", &o), -ENOENT);
}
END_TEST

/* The daemon is not running: its last close removed the WAL. */
START_TEST(test_reads_a_closed_store)
{
	json_t *o = NULL;
	make_store();
	open_ro();
	ck_assert_int_eq(store_hardware_by_mac(rr, "02-00-00-00-00-01", &o), 0);
	json_decref(o);
}
END_TEST

/* ---- writes ---- */

START_TEST(test_writes_are_erofs)
{
	struct store_completion *cq = store_completion_new(4);
	struct store_lease l = { .mac = "02:00:00:00:00:01", .ip = "10.0.0.1", .expires = 1 };
	char err[256] = "";
	json_t *o = hw("c", "02:00:00:00:00:03", "10.0.0.3");
	struct store_op op = { .type = STORE_OP_APPLY, .kind = STORE_KIND_HARDWARE, .body = o };
	uint64_t n = 7;

	ck_assert_ptr_nonnull(cq);
	make_store();
	open_ro();
	ck_assert_int_eq(store_write1(ro, &op), -EROFS);
	ck_assert_int_eq(op.error, -EROFS);
	ck_assert_ptr_nonnull(strstr(store_op_message(&op), "read-only"));
	store_op_clear(&op);
	ck_assert_int_eq(store_write_async(ro, &op, 1, true, cq, 1), -EROFS);
	ck_assert_int_eq(store_event(ro, STORE_KIND_HARDWARE, "default", "a", "Normal", "R", "m"),
			 -EROFS);
	ck_assert_int_eq(store_lease_put(ro, &l, err, sizeof(err)), -EROFS);
	ck_assert_ptr_nonnull(strstr(err, "read-only"));
	ck_assert_int_eq(store_lease_put_async(ro, &l, cq, 2), -EROFS);
	ck_assert_int_eq(store_leases_expire(ro, 2, &n), -EROFS);
	ck_assert_uint_eq(n, 7);
	ck_assert_int_eq(store_leases_expire_async(ro, 2, cq, 3), -EROFS);
	ck_assert_uint_eq(store_completion_inflight(cq), 0);
	ck_assert_int_eq(store_sync(ro), 0);
	errno = 0;
	ck_assert_ptr_null(store_subscribe(ro, 1u << STORE_KIND_HARDWARE));
	ck_assert_int_eq(errno, EROFS);
	/* nothing was written */
	ck_assert_int_eq(store_get(rr, STORE_KIND_HARDWARE, "default", "c", &o), -ENOENT);
	ck_assert_int_eq(store_completion_free(cq), 0);
	json_decref(op.body);
}
END_TEST

/* ---- files that are not a readable store ---- */

START_TEST(test_missing_is_not_created)
{
	struct stat sb;
	expect_fail(-ENOENT, "no such file");
	ck_assert_int_eq(stat(dbpath, &sb), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* A path through a file, and a directory where the file should be. */
START_TEST(test_not_a_file)
{
	write_file("", 0);
	char file[sizeof(dbpath)];
	snprintf(file, sizeof(file), "%s", dbpath);
	ck_assert_uint_lt(strlen(file) + sizeof("/x.db"), sizeof(dbpath));
	memcpy(dbpath + strlen(file), "/x.db", sizeof("/x.db"));
	expect_fail(-ENOENT, "no such file");
	snprintf(dbpath, sizeof(dbpath), "%s/sub", dir);
	ck_assert_int_eq(mkdir(dbpath, 0755), 0);
	expect_fail(-EPROTO, "not a regular file");
	ck_assert_int_eq(rmdir(dbpath), 0);
	snprintf(dbpath, sizeof(dbpath), "%s", file);
}
END_TEST

START_TEST(test_random_bytes)
{
	uint8_t b[8192];
	uint32_t x = 2463534242u; /* xorshift32: the same bytes every run */
	for (size_t i = 0; i < sizeof(b); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (uint8_t)x;
	}
	write_file(b, sizeof(b));
	expect_fail(-EPROTO, "not an ironbell store");
}
END_TEST

START_TEST(test_zero_length)
{
	struct stat sb;
	write_file("", 0);
	expect_fail(-EPROTO, "an empty database");
	ck_assert_int_eq(stat(dbpath, &sb), 0);
	ck_assert_int_eq(sb.st_size, 0);
}
END_TEST

START_TEST(test_other_program)
{
	exec_sql("CREATE TABLE t (x)");
	expect_fail(-EPROTO, "another program's database");
	/* this build's version number, but not its tables */
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", store_schema_version());
	exec_sql(sql);
	expect_fail(-EPROTO, "not an ironbell store");
}
END_TEST

START_TEST(test_newer_schema)
{
	char sql[64], want[128];
	make_store();
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", store_schema_version() + 1);
	exec_sql(sql);
	snprintf(want, sizeof(want), "written by a newer ironbelld: schema %d, this build reads %d",
		 store_schema_version() + 1, store_schema_version());
	expect_fail(-EPROTO, want);
}
END_TEST

START_TEST(test_older_schema)
{
	char sql[64];
	struct stat before, after;
	make_store();
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", store_schema_version() - 1);
	exec_sql(sql);
	ck_assert_int_eq(stat(dbpath, &before), 0);
	expect_fail(-EPROTO, "run ironbelld once to migrate it");
	/* not migrated: still the old version */
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	ck_assert_int_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(q, 0), store_schema_version() - 1);
	sqlite3_finalize(q);
	sqlite3_close(db);
	ck_assert_int_eq(stat(dbpath, &after), 0);
	ck_assert_int_eq(after.st_size, before.st_size);
}
END_TEST

/* Every page but the header's overwritten: the header and the schema
 * read, the meta table does not. */
START_TEST(test_corrupt)
{
	struct stat sb;
	uint8_t junk[4096];
	make_store();
	ck_assert_int_eq(stat(dbpath, &sb), 0);
	ck_assert_int_gt(sb.st_size, 4096);
	memset(junk, 0xa5, sizeof(junk));
	int fd = open(dbpath, O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	for (off_t off = 4096; off < sb.st_size; off += (off_t)sizeof(junk))
		ck_assert_int_eq(pwrite(fd, junk, sizeof(junk), off), (ssize_t)sizeof(junk));
	close(fd);
	expect_fail(-EIO, "malformed");
}
END_TEST

/* Another connection holds the database in exclusive locking mode with
 * a write transaction open: the open gives up after its short busy
 * timeout (the test would hang on a wait without end), and works once
 * the lock is gone. */
START_TEST(test_locked)
{
	sqlite3 *db = NULL;
	make_store();
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db,
				      "PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; "
				      "UPDATE meta SET value = value WHERE key = 'rv';",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	expect_fail(-EBUSY, "locked");
	ck_assert_int_eq(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	open_ro();
}
END_TEST

/* A file this user may not read. root reads every file whatever its
 * mode, so as root the call runs in a child that has become nobody. */
START_TEST(test_unreadable)
{
	make_store();
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(dbpath, 0), 0);
	if (geteuid() != 0) {
		expect_fail(-EACCES, "permission denied");
		return;
	}
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char err[512] = "";
		struct store *s = NULL;
		if (setgid(NOBODY_UID) < 0 || setuid(NOBODY_UID) < 0)
			_exit(2);
		int e = store_open_readonly(dbpath, &s, err, sizeof(err));
		_exit(e == -EACCES && strstr(err, dbpath) && strstr(err, "permission denied") ? 0 :
												1);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_readonly");
	TCase *tc = tcase_create("live");
	tcase_add_checked_fixture(tc, setup, ro_teardown);
	UNIT_TEST(tc, test_reads_what_the_writer_wrote);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup_empty, ro_teardown);
	UNIT_TEST(tc, test_reads_a_closed_store);
	UNIT_TEST(tc, test_writes_are_erofs);
	UNIT_TEST(tc, test_missing_is_not_created);
	UNIT_TEST(tc, test_not_a_file);
	UNIT_TEST(tc, test_random_bytes);
	UNIT_TEST(tc, test_zero_length);
	UNIT_TEST(tc, test_other_program);
	UNIT_TEST(tc, test_newer_schema);
	UNIT_TEST(tc, test_older_schema);
	UNIT_TEST(tc, test_corrupt);
	UNIT_TEST(tc, test_locked);
	UNIT_TEST(tc, test_unreadable);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
