/* watcher — internal to kube/: the map of what the cluster holds
 * (rvmap.c), one watcher per kind (watcher.c) and the part that owns them
 * (kube.c). */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/kube-internal.h"
#include "kube/kube.h"
#include "store/store.h"

/* ---- what the cluster holds (rvmap.c) ----
 * Per object of one kind, keyed by namespace and name: the cluster's
 * resourceVersion and uid as last seen, and the list epoch that last saw
 * it (a relist deletes what an older epoch saw). Not locked: its owner
 * locks it. */

#define KUBE_MAX_NAME 253
#define KUBE_MAX_UID 64

struct kube_rv_entry {
	char *key;  /* "namespace/name" */
	char rv[KUBE_MAX_RV + 1];
	char uid[KUBE_MAX_UID + 1];
	uint32_t epoch;
};

struct kube_rvmap {
	struct kube_rv_entry *slots; /* open addressing, linear probing */
	size_t cap;                  /* a power of two, or 0 */
	size_t n;                    /* live entries */
	size_t used;                 /* live and deleted (tombstone) slots */
};

/* The entry of ns/name, or NULL. */
struct kube_rv_entry *kube_rvmap_get(struct kube_rvmap *m, const char *ns, const char *name);
/* The entry of ns/name, made (rv "", epoch 0) when absent; NULL when out
 * of memory. */
struct kube_rv_entry *kube_rvmap_put(struct kube_rvmap *m, const char *ns, const char *name);
void kube_rvmap_del(struct kube_rvmap *m, const char *ns, const char *name);
/* Calls fn for every entry; fn may not change the map. */
void kube_rvmap_each(struct kube_rvmap *m, void (*fn)(struct kube_rv_entry *e, void *ud),
		     void *ud);
void kube_rvmap_free(struct kube_rvmap *m);
/* True when rv is newer than have: both decimal integers (every API server
 * built on etcd), a greater one is newer; otherwise (opaque versions) any
 * different one is. */
bool kube_rv_newer(const char *rv, const char *have);

/* ---- one kind (watcher.c) ---- */

struct kube; /* kube.c */

struct kube_watch {
	struct kube *part;
	enum store_kind kind;
	const struct store_kind_info *ki;
	char path[512];            /* the collection: /apis/G/V[/namespaces/NS]/PLURAL */
	struct kube_session *sess;
	struct kube_session *fetch; /* Machines: for the Secrets they name,
				     * fetched while sess is in a watch */
	struct store_reader *reader; /* the thread's, for legacy statuses */
	pthread_t thread;
	bool started;

	pthread_mutex_t lock;      /* guards what follows */
	struct kube_rvmap map;
	char rv[KUBE_MAX_RV + 1];  /* where the watch resumes; "" = relist */
	uint32_t epoch;
	bool synced;               /* listed in full at least once */
	char state[256];           /* for /readyz?verbose */

	/* Metrics */
	struct metric *m_restarts, *m_relists, *m_refused, *m_events, *m_lag, *m_synced,
		*m_objects;
};

/* Makes the watcher of kind k (not started). 0 or a negative errno. */
int kube_watch_init(struct kube_watch *w, struct kube *p, enum store_kind k);
int kube_watch_start(struct kube_watch *w);
/* Asks the thread to stop (from any thread); kube_watch_fini() joins. */
void kube_watch_stop(struct kube_watch *w);
void kube_watch_fini(struct kube_watch *w);
/* The cluster's resourceVersion and uid of ns/name as last written to
 * the store, into rv and uid; false when the store holds nothing of it
 * from the cluster. */
bool kube_watch_cluster_obj(struct kube_watch *w, const char *ns, const char *name,
			    char rv[KUBE_MAX_RV + 1], char uid[KUBE_MAX_UID + 1]);

/* ---- the writer (writer.c) ---- */

struct kube_writer;
struct kube_writer *kube_writer_new(struct kube *p);
int kube_writer_start(struct kube_writer *w);
/* Sends every queued change now and waits until none is left (sent, or
 * refused), at most ms; before the part stops. From any thread but the
 * writer's; nothing if the writer did not start. */
void kube_writer_drain(struct kube_writer *w, unsigned ms);
/* From any thread: ends the request in flight; kube_writer_free() joins. */
void kube_writer_stop(struct kube_writer *w);
void kube_writer_free(struct kube_writer *w);

/* ---- the part (kube.c) ---- */

struct kube {
	struct store *store;
	struct kube_settings set;
	struct kube_conn conn;
	struct kube_api *api;
	const char *namespace_;    /* set.namespace_, or NULL for all */
	struct kube_watch watch[STORE_KIND_MAX];
	struct kube_writer *writer;
	int schema;                /* atomic enum kube_status_schema: the
				    * Workflow status the cluster's CRD has,
				    * decided before Workflows are listed */
	bool leading;              /* atomic: this instance holds the Lease */
	bool announced;            /* atomic: every kind synced and said so */
	struct kube_elector *elector; /* NULL with no_leader_election */
	bool stopping;             /* atomic */
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;  /* signalled when stopping */

	pthread_mutex_t refs_lock; /* the Secrets Machines name */
	struct kube_rvmap refs;
};

/* Sleeps up to ms, or until the part stops: true when it stops. */
bool kube_part_sleep(struct kube *p, unsigned ms);
bool kube_part_stopping(struct kube *p);
bool kube_part_leading(struct kube *p);
/* A kind has been listed in full for the first time. */
void kube_part_synced(struct kube *p);
/* Secrets: whether a Machine names ns/name; a Machine's reference added
 * (true when it is new: the Secret must be fetched). */
bool kube_part_secret_wanted(struct kube *p, const char *ns, const char *name);
bool kube_part_secret_ref(struct kube *p, const char *ns, const char *name);
