/* readonly — opening the store for reading only, from another process.
 *
 * DESIGN: the Kea hook library reads ironbelld's database from inside
 * kea-dhcp4. It must never write it, create it, migrate it or checkpoint
 * its WAL: the daemon's writer owns all of that (writer.c). So
 * store_open_readonly() makes a struct store with no writer thread and no
 * checkpointer, flagged readonly; readers (reader.c) open their own
 * SQLITE_OPEN_READONLY connections from it as they do on a daemon's
 * store, and every write entry point (writer.c, lease.c) answers -EROFS
 * on it instead of queueing to a writer that does not exist.
 *
 * Before it hands the store out, it looks at the file once, through a
 * connection of its own that it closes again: the file must exist and be
 * readable (checked with open(2) first, so that the error is the
 * system's and nothing is created), be an SQLite database, hold this
 * build's schema version (PRAGMA user_version) and the meta table every
 * store has. That connection waits at most STORE_RO_BUSY_TIMEOUT_MS for a
 * lock, so a database that another process holds locked fails fast with
 * -EBUSY rather than stalling the host process's startup.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store-internal.h"

#define STORE_RO_BUSY_TIMEOUT_MS 100 /* the check's wait for a lock */

/* The file as the system sees it: 0, or -ENOENT, -EACCES, -EPROTO (not
 * a regular file) or -EIO, with a message. Opened non-blocking so that a
 * FIFO cannot stall us; nothing is created. */
static int check_file(const char *path, char *err, size_t errlen)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	int e = 0;

	if (fd < 0) {
		int sys = errno;
		e = sys == ENOENT || sys == ENOTDIR ? -ENOENT :
		    sys == EACCES || sys == EPERM   ? -EACCES :
						      -EIO;
		snprintf(err, errlen, "%s: %s", path,
			 e == -ENOENT ? "no such file (ironbelld has not made its store there)" :
			 e == -EACCES ? "permission denied (the store must be readable by this "
					"process's user)" :
					strerror(sys));
		return e;
	}
	if (fstat(fd, &sb) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		e = -EIO;
	} else if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file, so not an ironbell store", path);
		e = -EPROTO;
	}
	close(fd);
	return e;
}

/* Maps an SQLite result code of the check's connection to an errno, with
 * a message naming path. */
static int sqlite_error(sqlite3 *db, int rc, const char *path, const char *what, char *err,
			size_t errlen)
{
	const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		snprintf(err, errlen,
			 "%s: locked by another process for more than %d ms while %s (%s); "
			 "try again",
			 path, STORE_RO_BUSY_TIMEOUT_MS, what, msg);
		return -EBUSY;
	case SQLITE_NOTADB:
		snprintf(err, errlen, "%s: not an ironbell store: %s", path, msg);
		return -EPROTO;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		snprintf(err, errlen, "%s: permission denied while %s: %s", path, what, msg);
		return -EACCES;
	case SQLITE_NOMEM: snprintf(err, errlen, "%s: out of memory", path); return -ENOMEM;
	default: /* SQLITE_CORRUPT, SQLITE_IOERR, SQLITE_CANTOPEN, ... */
		snprintf(err, errlen, "%s: %s: %s", path, what, msg);
		return -EIO;
	}
}

/* One integer from sql's first row on db: 0, 1 when sql returns no row
 * (or a NULL), or a negative errno with a message. */
static int query_int(sqlite3 *db, const char *sql, const char *path, const char *what, int *ret,
		     char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	int e = 1;

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*ret = sqlite3_column_int(st, 0);
		e = 0;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		e = sqlite_error(db, rc, path, what, err, errlen);
	}
	sqlite3_finalize(st);
	return e;
}

/* Whether db at path is a store of this build's schema: 0, or -EPROTO,
 * -EBUSY, -EIO ... with a message. */
static int check_schema(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	int want = store_schema_version(), have = 0, tables = 0, rv = 0;
	int e = query_int(db, "PRAGMA user_version", path, "reading the schema version", &have, err,
			  errlen);
	if (e < 0)
		return e;
	if (have > want) {
		snprintf(err, errlen,
			 "%s: written by a newer ironbelld: schema %d, this build reads %d; "
			 "use a hook library of the same version as ironbelld",
			 path, have, want);
		return -EPROTO;
	}
	e = query_int(db, "SELECT count(*) FROM sqlite_master", path, "reading the schema", &tables,
		      err, errlen);
	if (e < 0)
		return e;
	if (have == 0 || tables == 0) {
		snprintf(err, errlen,
			 "%s: not an ironbell store (%s, schema version %d; this build reads %d)",
			 path, tables ? "another program's database" : "an empty database", have,
			 want);
		return -EPROTO;
	}
	if (have < want) {
		snprintf(err, errlen,
			 "%s: an older ironbelld's store: schema %d, this build reads %d; run "
			 "ironbelld once to migrate it",
			 path, have, want);
		return -EPROTO;
	}
	e = query_int(db, "SELECT value FROM meta WHERE key = 'rv'", path,
		      "reading the resourceVersion", &rv, err, errlen);
	if (e == 1 || (e < 0 && strstr(err, "no such table"))) {
		snprintf(err, errlen, "%s: not an ironbell store (schema version %d, but no meta)",
			 path, have);
		return -EPROTO;
	}
	return e;
}

/* Opens path read-only and checks it (see the DESIGN above). */
static int check_db(const char *path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	int e;

	if (rc != SQLITE_OK) {
		e = sqlite_error(db, rc, path, "opening", err, errlen);
		goto out;
	}
	sqlite3_busy_timeout(db, STORE_RO_BUSY_TIMEOUT_MS);
	e = check_schema(db, path, err, errlen);
out:
	sqlite3_close(db);
	return e;
}

int store_open_readonly(const char *path, struct store **ret, char *err, size_t errlen)
{
	struct store *s = NULL;
	int e;

	if (!path || !*path) {
		snprintf(err, errlen, "no store path given");
		return -EINVAL;
	}
	e = check_file(path, err, errlen);
	if (e < 0)
		goto out;
	e = check_db(path, err, errlen);
	if (e < 0)
		goto out;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto out;
	}
	s->readonly = true;
	/* store_close() destroys them, and store_subscribe() and friends
	 * take them. */
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->sub_lock, NULL);
	pthread_cond_init(&s->queue_cond, NULL);
	pthread_cond_init(&s->done_cond, NULL);
	*ret = s;
	s = NULL;
out:
	if (s)
		free(s->path);
	free(s);
	return e;
}
