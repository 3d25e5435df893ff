/* syslog — the part's public header: the syslog receiver thread
 * (syslog/server.c) and its settings (struct syslog_settings). The
 * socket is bound in syslog_server_new(), so that a busy port stops the
 * daemon at start with a clear message; syslog_server_start() runs one
 * thread until syslog_server_free(). */
#pragma once

#include <stddef.h>

struct store;
struct syslog_server;

/* What the receiver is configured with. The daemon fills it from the
 * syslog: section of its configuration; a test fills it by hand. */
struct syslog_settings {
	const char *listen; /* "host:port", IPv4 */
	unsigned rate;      /* messages per second per source */
	unsigned burst;     /* messages a source may send at once */
	size_t max_message; /* bytes of a message kept; the rest is cut */
};

/* Binds settings->listen and registers the metrics. settings is copied,
 * its string too: the caller may free them once this returns. 0, or a
 * negative errno with a message in err. */
int syslog_server_new(struct store *store, const struct syslog_settings *settings,
		      struct syslog_server **ret, char *err, size_t errlen);
/* Starts the thread. */
int syslog_server_start(struct syslog_server *srv, char *err, size_t errlen);
/* Stops the thread, closes the socket, frees (before the store closes).
 * Accepts NULL. */
void syslog_server_free(struct syslog_server *srv);
