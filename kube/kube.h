/* kube — the part's public header: Tinkerbell's CRDs in a Kubernetes
 * cluster as the source of truth.
 *
 * In Kubernetes mode (kube.enabled) ironbelld is a client of the cluster's
 * API server (libcurl, TLS verified always):
 * - the watcher lists (in pages) and then watches Hardware, Template,
 *   Workflow (tinkerbell.org/v1alpha1), Machine, Job, Task
 *   (bmc.tinkerbell.org/v1alpha1) and the Secrets that Machines name, and
 *   keeps the store equal to the cluster: every object stored with source
 *   "kube" (which the store refuses to let the admin API edit);
 * - the writer follows the store's change log and sends back what the
 *   daemon's own controllers changed in those objects (status through the
 *   status subresource, the Hardware allowPXE toggles as a spec patch, the
 *   Jobs and Tasks they create or delete);
 * - the elector holds a coordination.k8s.io/v1 Lease: only its holder runs
 *   the parts that act (the BMC jobs, the workflow engine, the worker API);
 *   DHCP, TFTP, HTTP and metadata serve on every instance.
 * It reaches the rest of ironbelld through the store only; the daemon
 * learns of leadership through a callback it gives in the settings. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct buf;
struct kube;

/* How what the daemon writes back into a Workflow's status is shaped. */
enum kube_status_schema {
	KUBE_STATUS_AUTO,     /* read the cluster's Workflow CRD at start */
	KUBE_STATUS_MONOREPO, /* state PENDING..., currentState, IDs */
	KUBE_STATUS_LEGACY,   /* tink <= v0.12: STATE_*, currentAction */
};

/* What the part is configured with: the daemon fills it from its kube:
 * section; a test fills it by hand. Zero fields take the defaults named
 * here (kube_settings_default()). Strings are copied by kube_new(). */
struct kube_settings {
	const char *kubeconfig;  /* a kubeconfig file; NULL: in-cluster (the
				  * service account's token and CA, and
				  * KUBERNETES_SERVICE_HOST/PORT) */
	const char *context;     /* the kubeconfig's context; NULL: its
				  * current-context */
	const char *namespace_;  /* the one namespace watched; NULL or "": all */
	unsigned qps;            /* requests per second: 5 (client-go's) */
	unsigned burst;          /* requests at once above qps: 10 */
	unsigned page_size;      /* objects per list page: 500 */
	unsigned watch_timeout_s; /* a watch is renewed after (server side,
				   * with jitter): 300 */
	unsigned backoff_min_ms; /* first retry after an error: 800 */
	unsigned backoff_max_ms; /* longest retry (doubling, with jitter): 30000 */
	unsigned request_timeout_ms; /* one request other than a watch: 30000 */
	unsigned write_delay_ms; /* changes of one object within this are
				  * sent back as one patch: 100 */
	/* Leader election */
	bool no_leader_election; /* act without a Lease (one instance only) */
	const char *lease_namespace; /* "default", or the watched namespace */
	const char *lease_name;  /* "ironbelld" */
	const char *identity;    /* this instance's name in the Lease: the
				  * host name and the pid */
	unsigned lease_duration_s; /* 15 */
	unsigned renew_deadline_s; /* 10 */
	unsigned retry_period_s;   /* 2 */
	enum kube_status_schema status_schema;
	/* Called from the elector's thread when this instance starts (true)
	 * or stops (false) leading; with no_leader_election, once with true
	 * after the first full sync. May be NULL. */
	void (*leading)(bool leading, void *userdata);
	void *userdata;
};

/* Fills every zero field of s with its default. */
void kube_settings_default(struct kube_settings *s);

/* Reads the kubeconfig (or the in-cluster files), registers the metrics;
 * starts nothing. A kubeconfig that cannot be read or that asks for
 * anything this client refuses (insecure-skip-tls-verify, an exec or
 * auth-provider plugin) fails here, naming the file, line and column or
 * the field. 0, or a negative errno with a message in err. */
int kube_new(struct store *store, const struct kube_settings *settings, struct kube **ret,
	     char *err, size_t errlen);
/* Starts the watcher, the writer and the elector threads. */
int kube_start(struct kube *k, char *err, size_t errlen);
/* True once every kind has been listed in full once (readiness). */
bool kube_synced(struct kube *k);
/* Appends, one line per kind, "hardware: synced (rv 123)" or "workflows:
 * listing (page 3)" or "machines: retrying in 4s: <why>", for /readyz's
 * verbose answer. */
void kube_sync_state(struct kube *k, struct buf *out);
/* Sends back what the writer still has queued (a bounded wait, while the
 * Lease is still held: stop the acting parts first), then stops the
 * threads (the Lease is released when held), frees; before the store
 * closes. Accepts NULL. */
void kube_free(struct kube *k);
