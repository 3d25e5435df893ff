/* syslog-server — the syslog receiver thread (syslog/server.c). The
 * socket is bound in syslog_server_new(), so that a busy port stops the
 * daemon at start with a clear message; syslog_server_start() runs one
 * thread until syslog_server_free(). */
#pragma once

#include <stddef.h>

struct ib_config;
struct store;
struct syslog_server;

/* Binds syslog.listen from cfg (which must outlive the server) and
 * registers the metrics. 0, or a negative errno with a message in err. */
int syslog_server_new(struct store *store, const struct ib_config *cfg,
		      struct syslog_server **ret, char *err, size_t errlen);
/* Starts the thread. */
int syslog_server_start(struct syslog_server *srv, char *err, size_t errlen);
/* Stops the thread, closes the socket, frees (before the store closes).
 * Accepts NULL. */
void syslog_server_free(struct syslog_server *srv);
