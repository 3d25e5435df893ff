/* follow-store — the Kea hook's follower of ironbelld's store: the SQLite
 * file on this host, opened read-only.
 *
 * DESIGN: one thread (started by ibkea_new() for source "store") owns the
 * store connection and its reader. It loads every Hardware into a fresh
 * table, built without the lock, and swaps it in whole; then every
 * poll-interval-ms it reads the Hardware change log from the version that
 * load saw, a page at a time, each page applied under one write lock, so
 * that Kea's packet threads wait at most for one page. When retention
 * dropped changes it had not read (-ETIME), it loads again, as ironbelld's
 * own DHCP thread does (dhcp/server-hosts.c).
 *
 * The file may be missing (ironbelld not started yet), replaced (restored
 * from a backup), removed, or unreadable for a while (locked, corrupt).
 * Each poll compares the path's device and inode with those of the file
 * opened: a file replaced is opened again and loaded, and a store that is
 * gone (or replaced by a file that does not open) empties the table, so
 * that the hook answers nothing rather than from Hardware nobody keeps
 * any more. An error that leaves the file in
 * place keeps the table (Kea goes on answering from it) and the store is
 * opened again every IBKEA_RETRY_MS. Each distinct error is logged once,
 * not every retry.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "dhcp/kea/kea-internal.h"
#include "store/store.h"

#define IBKEA_CHANGES_PAGE 1000 /* change-log rows applied under one write lock */
#define IBKEA_ERR_MAX 512       /* bytes of an error message */

struct follower {
	struct ibkea *k;
	const char *path;
	struct store *store;
	struct store_reader *reader;
	dev_t dev;
	ino_t ino;
	uint64_t rv;            /* the change log is read from here */
	struct dhcp_hosts *put; /* the table being filled (load_one) */
	char last_err[IBKEA_ERR_MAX + 128];
};

/* Logs msg unless it is the last error logged. */
static void report(struct follower *f, enum ibkea_log_level level, const char *msg)
{
	size_t n = strnlen(msg, sizeof(f->last_err) - 1);

	if (ibkea_relog_take(f->k))
		f->last_err[0] = '\0';
	if (strncmp(f->last_err, msg, sizeof(f->last_err)) == 0)
		return;
	memcpy(f->last_err, msg, n);
	f->last_err[n] = '\0';
	ibkea_log(f->k, level, "%s", msg);
}

/* Puts one Hardware into t; a refused interface is logged, as ironbelld's
 * server logs it. -ENOMEM stops. */
static int put_one(struct follower *f, struct dhcp_hosts *t, json_t *hw)
{
	char err[IBKEA_ERR_MAX];
	int e = dhcp_hosts_put(t, hw, err, sizeof(err));

	if (e == -EINVAL) {
		const json_t *meta = json_object_get(hw, "metadata");
		const char *ns = json_string_value(json_object_get(meta, "namespace"));
		const char *name = json_string_value(json_object_get(meta, "name"));
		ibkea_log(f->k, IBKEA_LOG_WARN,
			  "hardware %s/%s: an interface is not served by DHCP: %s", ns ? ns : "",
			  name ? name : "", err);
	}
	return e == -ENOMEM ? e : 0;
}

static int load_one(const char *text, size_t len, void *userdata)
{
	struct follower *f = userdata;
	json_t *hw;
	int e = 0;

	if (ibkea_stopping(f->k))
		return -ECANCELED;
	if ((hw = jsondec_loadb(text, len, 0, NULL)))
		e = put_one(f, f->put, hw);
	json_decref(hw);
	return e;
}

/* Loads every Hardware into a fresh table and swaps it in. */
static int load(struct follower *f)
{
	uint64_t t0 = now_mono_ns();
	char msg[IBKEA_ERR_MAX];
	struct dhcp_hosts *fresh = dhcp_hosts_new();
	size_t n;
	int e;

	if (!fresh)
		return -ENOMEM;
	f->put = fresh;
	e = store_each(f->reader, STORE_KIND_HARDWARE, load_one, f, &f->rv);
	f->put = NULL;
	if (e < 0) {
		dhcp_hosts_free(fresh);
		if (e != -ECANCELED) {
			snprintf(msg, sizeof(msg), "store %s: loading Hardware: %s", f->path,
				 strerror(-e));
			report(f, IBKEA_LOG_ERROR, msg);
		}
		return e;
	}
	n = dhcp_hosts_count(fresh);
	ibkea_table_replace(f->k, fresh);
	f->last_err[0] = '\0';
	ibkea_log(f->k, IBKEA_LOG_INFO, "%zu Hardware interfaces loaded from %s in %.0f ms", n,
		  f->path, (double)(now_mono_ns() - t0) / 1e6);
	return 0;
}

static void close_store(struct follower *f)
{
	store_reader_free(f->reader);
	store_close(f->store);
	f->reader = NULL;
	f->store = NULL;
}

/* Opens the store and loads it. On an error the table is emptied only
 * when the file is not there (or is not a store any more): 0 or a
 * negative errno. */
static int open_store(struct follower *f)
{
	char err[IBKEA_ERR_MAX], msg[IBKEA_ERR_MAX + 64];
	struct stat st;
	int e;

	if (stat(f->path, &st) < 0) {
		e = -errno;
		snprintf(msg, sizeof(msg), "store %s: %s (is ironbelld running on this host?)",
			 f->path, strerror(-e));
		report(f, IBKEA_LOG_WARN, msg);
		ibkea_table_replace(f->k, NULL);
		return e;
	}
	e = store_open_readonly(f->path, &f->store, err, sizeof(err));
	if (e == 0 && !(f->reader = store_reader_new(f->store))) {
		snprintf(err, sizeof(err), "store %s: cannot open a reader", f->path);
		e = -ENOMEM;
	}
	if (e < 0) {
		close_store(f);
		report(f, e == -ENOENT ? IBKEA_LOG_WARN : IBKEA_LOG_ERROR, err);
		/* Missing, or not the store this build reads: nothing to
		 * answer from. Busy, or another error: what was loaded
		 * stays. */
		if (e == -ENOENT || e == -EPROTO)
			ibkea_table_replace(f->k, NULL);
		return e;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if ((e = load(f)) < 0)
		close_store(f);
	return e;
}

/* Whether the path still names the file opened. */
static bool same_file(struct follower *f)
{
	struct stat st;

	return stat(f->path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

/* Applies changes (a JSON array of store_changes()) to the table under
 * one write lock. A poll that found none takes no lock: Kea's threads are
 * not held, and the table's generation, which Kea's cached Hosts are
 * valid for, does not move. */
static void apply(struct follower *f, const json_t *changes)
{
	struct dhcp_hosts *t;
	const json_t *ch;
	size_t i;

	if (json_array_size(changes) == 0)
		return;
	t = ibkea_table_wrlock(f->k);

	json_array_foreach (changes, i, ch) {
		const char *type = json_string_value(json_object_get(ch, "type"));
		json_t *obj = json_object_get(ch, "object");
		if (type && strcmp(type, "DELETED") == 0) {
			const json_t *meta = json_object_get(obj, "metadata");
			dhcp_hosts_remove(t, json_string_value(json_object_get(meta, "namespace")),
					  json_string_value(json_object_get(meta, "name")));
		} else if (obj) {
			put_one(f, t, obj);
		}
	}
	ibkea_table_unlock(f->k);
}

/* Reads the Hardware changes since f->rv, a page at a time: 0 or a
 * negative errno (the store is then opened again). */
static int follow(struct follower *f)
{
	char msg[IBKEA_ERR_MAX];
	json_t *changes = NULL;
	uint64_t last;
	size_t n;
	int e;

	do {
		last = f->rv;
		e = store_changes(f->reader, f->rv, STORE_KIND_HARDWARE, NULL, IBKEA_CHANGES_PAGE,
				  &changes, &last);
		if (e == -ETIME) {
			ibkea_log(f->k, IBKEA_LOG_WARN,
				  "store %s: Hardware changes were dropped by retention before "
				  "they were read: reloading every Hardware",
				  f->path);
			return load(f);
		}
		if (e < 0) {
			snprintf(msg, sizeof(msg), "store %s: reading Hardware changes: %s",
				 f->path, strerror(-e));
			report(f, IBKEA_LOG_ERROR, msg);
			return e;
		}
		apply(f, changes);
		n = json_array_size(changes);
		json_decref(changes);
		changes = NULL;
		f->rv = last;
	} while (n == IBKEA_CHANGES_PAGE && !ibkea_stopping(f->k));
	return 0;
}

void *ibkea_follow_store(void *arg)
{
	struct follower f = { .k = arg, .path = ((struct ibkea *)arg)->p.store };
	bool replaced = false;
	unsigned wait;

	while (!ibkea_stopping(f.k)) {
		if (f.store && !same_file(&f)) {
			/* Removed or replaced: open what is there now, if
			 * anything. */
			close_store(&f);
			replaced = true;
			ibkea_log(f.k, IBKEA_LOG_INFO,
				  "store %s: the file changed: opening it again", f.path);
		}
		if (!f.store) {
			wait = f.k->p.poll_ms;
			if (open_store(&f) < 0) {
				/* What was loaded came from a file that is no
				 * longer at the path: answer nothing from it. */
				if (replaced)
					ibkea_table_replace(f.k, NULL);
				wait = IBKEA_RETRY_MS;
			}
			replaced = false;
		} else if (follow(&f) < 0) {
			close_store(&f);
			wait = IBKEA_RETRY_MS;
		} else {
			wait = f.k->p.poll_ms;
		}
		if (ibkea_sleep(f.k, wait))
			break;
	}
	close_store(&f);
	return NULL;
}
