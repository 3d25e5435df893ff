/* server-stub — TEMPORARY: stands in for the BMC controllers' thread
 * (bmc_server_new/start/free of bmc/bmc.h) until bmc/server.c is merged,
 * so that the daemon links and runs with its bmc: section wired. Delete
 * this file and its line in bmc/local.mk when bmc/server.c lands.
 *
 * DESIGN: it keeps a copy of the settings and does nothing else: no
 * socket, no thread, no Machine is ever reconciled. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmc/bmc.h"

struct bmc_server {
	struct store *store;          /* borrowed: outlives the server */
	struct bmc_settings settings; /* ca_file owned */
};

/* See bmc/bmc.h. */
int bmc_server_new(struct store *store, const struct bmc_settings *settings,
		   struct bmc_server **ret, char *err, size_t errlen)
{
	struct bmc_server *srv = calloc(1, sizeof(*srv));
	if (!srv)
		goto nomem;
	srv->store = store;
	srv->settings = *settings;
	srv->settings.ca_file = NULL;
	if (settings->ca_file && !(srv->settings.ca_file = strdup(settings->ca_file)))
		goto nomem;
	bmc_settings_default(&srv->settings);
	*ret = srv;
	return 0;
nomem:
	bmc_server_free(srv);
	snprintf(err, errlen, "bmc: %s", strerror(ENOMEM));
	return -ENOMEM;
}

/* See bmc/bmc.h. The stub has no thread to start. */
int bmc_server_start(struct bmc_server *srv, char *err, size_t errlen)
{
	(void)srv;
	(void)err;
	(void)errlen;
	return 0;
}

/* See bmc/bmc.h. */
void bmc_server_free(struct bmc_server *srv)
{
	if (!srv)
		return;
	free((char *)srv->settings.ca_file);
	free(srv);
}
