/* conf — ironbell.yaml, read with libyaml into an immutable snapshot. (The
 * header is conf.h, not config.h, so that "config.h" always names
 * autoheader's.)
 *
 * The snapshot is built whole and never changed: a reload builds a new one
 * and swaps the pointer (daemon/main.c), so a thread that holds a snapshot
 * reads consistent values. An unknown key, a wrong type or a bad value is an
 * error reported as "file:line:column: message" (1-based line and column of
 * the offending key or value), and nothing is returned. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/log.h"
#include "store/store.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/ironbell/ironbell.yaml"
#define CONFIG_MAX_SIZE (1024 * 1024)
#define CONFIG_EXIT_STATUS 78 /* EX_CONFIG */

struct ib_config {
	char *path; /* the file it was read from */
	enum log_level log_level;  /* log_level, default info */
	char *state_dir;           /* state_dir, default /var/lib/ironbell */

	struct {
		char *socket;         /* api.socket, default /run/ironbell/api.sock */
		unsigned socket_mode; /* api.socket_mode, default 0660 (a YAML string "0660") */
		char *listen;         /* api.listen "host:port" for TCP, NULL: no TCP */
		char *token_file;     /* api.token_file; required when api.listen is set */
		char *token;          /* its contents, trailing newline stripped */
	} api;

	struct {
		char *listen;         /* http.listen, default "0.0.0.0:7080" */
		unsigned threads;     /* http.threads, 1..64, default 4 */
		size_t max_body;      /* http.max_body, bytes, default 8 MiB (admin uploads) */
		unsigned idle_timeout; /* http.idle_timeout, seconds a connection may be idle
					* (both listeners; watches exempt), default 120 */
	} http;

	struct store_options store; /* store.changes_retention (100000),
				     * store.events_retention (10000),
				     * store.batch_max (1024) */
};

/* Reads and checks the file at path. On success returns 0 and a new
 * snapshot. On failure returns a negative errno and writes to err a message
 * of the form "path:line:column: message" (or "path: message" when the file
 * cannot be read). */
int config_load(const char *path, struct ib_config **ret, char *err, size_t errlen);
/* The same from memory; name is used in messages as the file name. */
int config_load_string(const char *name, const char *text, size_t len, struct ib_config **ret,
		       char *err, size_t errlen);
/* A snapshot with every default (as from an empty file). NULL on ENOMEM. */
struct ib_config *config_new_default(void);
/* Accepts NULL. */
void config_free(struct ib_config *c);
