/* bmc — the part's public header: BMC power and boot control, Rufio's
 * Machine, Job and Task objects reconciled from the store.
 *
 * One thread (bmc_server_start()) runs the controllers and drives every
 * BMC through two non-blocking engines: IPMI 2.0 RMCP+ over one UDP socket
 * (bmc/ipmi/) and Redfish over libcurl's multi interface (bmc/redfish/).
 * It reads Machines, Jobs, Tasks and Secrets from the store and writes
 * their status, Tasks and events back; nothing else reaches it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct store;
struct bmc_server;

/* What the BMC part is configured with. The daemon fills it from the bmc:
 * section of its configuration; a test fills it by hand. Zero fields take
 * the defaults named here (bmc_settings_default()). */
struct bmc_settings {
	/* IPMI */
	unsigned cipher_suite; /* when a Machine names none: 3 (or 17) */
	unsigned timeout_ms;   /* first retransmission timeout: 1000 */
	unsigned retries;      /* retransmissions before a request fails: 3
				* (the timeout doubles each time) */
	unsigned max_sessions; /* IPMI sessions kept open at once: 4096 */
	/* Redfish */
	unsigned http_timeout_ms;   /* one HTTP request, connect included: 20000 */
	unsigned max_connections;   /* HTTP connections at once: 128 */
	const char *ca_file;        /* PEM bundle that verifies BMC certificates;
				     * NULL: the system's */
	/* Controllers */
	unsigned poll_interval_s;   /* Machine power poll: 30 */
	unsigned task_timeout_s;    /* a Task fails after: 600 */
	unsigned max_jobs;          /* Machines with a Job running at once: 64 */
	unsigned verify_interval_ms; /* power-state polls while a power Task
				      * is verified: 1000 */
};

/* Fills every zero field of s with its default. */
void bmc_settings_default(struct bmc_settings *s);

/* Makes the engines and registers the metrics. An engine that cannot
 * start (no UDP socket, no libcurl) is logged and left out: the Machines
 * that need it are Contactable=False saying why, the others go on.
 * settings is copied, strings too. 0, or a negative errno with a message
 * in err. */
int bmc_server_new(struct store *store, const struct bmc_settings *settings,
		   struct bmc_server **ret, char *err, size_t errlen);
/* Starts the thread. */
int bmc_server_start(struct bmc_server *srv, char *err, size_t errlen);
/* Stops the thread, closes the BMC sessions (a bounded wait), frees.
 * Before the store closes. Accepts NULL. */
void bmc_server_free(struct bmc_server *srv);
