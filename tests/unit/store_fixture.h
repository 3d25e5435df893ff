/* store_fixture — a store in a fresh temporary directory for each test, and
 * a reader on it, shared by the store's unit tests. Define FIXTURE_NAME (a
 * string, the directory's prefix) before including. Each test file gets its
 * own copy of these statics. */
#pragma once

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "store/store.h"

static char dir[256];
static char dbpath[512];
static struct store *st;
static struct store_reader *rd;

/* Opens the store at dbpath (options o, or NULL for defaults) and a reader. */
static void open_store(const struct store_options *o)
{
	char err[256] = "";
	int e = store_open(dbpath, o, &st, err, sizeof(err));
	ck_assert_msg(e == 0, "store_open: %d %s", e, err);
	rd = store_reader_new(st);
	ck_assert_ptr_nonnull(rd);
}

static void close_store(void)
{
	store_reader_free(rd);
	rd = NULL;
	store_close(st);
	st = NULL;
}

static void setup_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/" FIXTURE_NAME ".XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(dbpath, sizeof(dbpath), "%s/ironbell.db", dir);
}

static void setup(void)
{
	setup_dir();
	open_store(NULL);
}

/* Closes the store and removes the directory with everything in it. */
static void teardown(void)
{
	close_store();
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char p[1024];
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}
