/* kube — the part: its connection to the API server, one watcher per
 * kind, the writer and the elector, started and stopped together.
 *
 * DESIGN: kube_new() reads the kubeconfig (or the in-cluster files) and
 * fails there, before the daemon starts anything, when it cannot be used.
 * kube_start() starts the watchers; when every kind has been listed once
 * (kube_part_synced()), the instance is ready and the elector starts: the
 * parts that act must not run on a store that does not yet hold the
 * cluster. Without leader election the instance leads from then on. Stop
 * order: the writer sends what is queued (the daemon has stopped the
 * acting parts, the Lease is still held), then the elector (it releases
 * the Lease), then the watchers (their sessions are cancelled, so a long
 * watch ends at once). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "kube/watcher.h"

#define SUB "kube"
#define KUBE_DRAIN_MS 5000 /* a stop waits this long, at most, for the writer */

static const enum store_kind kinds[] = {
	STORE_KIND_SECRET,   /* first: Machines' Secrets are fetched as they are named */
	STORE_KIND_HARDWARE, STORE_KIND_TEMPLATE, STORE_KIND_WORKFLOW,
	STORE_KIND_MACHINE,  STORE_KIND_JOB,      STORE_KIND_TASK,
};

bool kube_part_stopping(struct kube *p)
{
	return __atomic_load_n(&p->stopping, __ATOMIC_ACQUIRE);
}

bool kube_part_leading(struct kube *p)
{
	return __atomic_load_n(&p->leading, __ATOMIC_ACQUIRE);
}

bool kube_part_sleep(struct kube *p, unsigned ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&p->stop_lock);
	while (!kube_part_stopping(p))
		if (pthread_cond_timedwait(&p->stop_cond, &p->stop_lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&p->stop_lock);
	return kube_part_stopping(p);
}

bool kube_part_secret_wanted(struct kube *p, const char *ns, const char *name)
{
	pthread_mutex_lock(&p->refs_lock);
	bool r = kube_rvmap_get(&p->refs, ns, name) != NULL;
	pthread_mutex_unlock(&p->refs_lock);
	return r;
}

bool kube_part_secret_ref(struct kube *p, const char *ns, const char *name)
{
	bool added = false;
	pthread_mutex_lock(&p->refs_lock);
	if (!kube_rvmap_get(&p->refs, ns, name))
		added = kube_rvmap_put(&p->refs, ns, name) != NULL;
	pthread_mutex_unlock(&p->refs_lock);
	return added;
}

static void set_leading(bool leading, void *ud)
{
	struct kube *p = ud;
	__atomic_store_n(&p->leading, leading, __ATOMIC_RELEASE);
	if (p->set.leading)
		p->set.leading(leading, p->set.userdata);
}

bool kube_synced(struct kube *p)
{
	return p && __atomic_load_n(&p->announced, __ATOMIC_ACQUIRE);
}

void kube_part_synced(struct kube *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct kube_watch *w = &p->watch[kinds[i]];
		pthread_mutex_lock(&w->lock);
		bool s = w->synced;
		pthread_mutex_unlock(&w->lock);
		if (!s)
			return;
	}
	bool was = false;
	if (!__atomic_compare_exchange_n(&p->announced, &was, true, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	log_info(SUB, "every kind is synced from %s", kube_api_origin(p->api));
	if (p->set.no_leader_election) {
		set_leading(true, p);
		return;
	}
	if (kube_elector_start(p->elector) < 0)
		log_error(SUB, "cannot start the leader election: this instance will not act");
}

void kube_sync_state(struct kube *p, struct buf *out)
{
	if (!p)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct kube_watch *w = &p->watch[kinds[i]];
		pthread_mutex_lock(&w->lock);
		buf_printf(out, "%s: %s\n", w->ki->plural, w->state);
		pthread_mutex_unlock(&w->lock);
	}
	buf_printf(out, "leader: %s\n", kube_part_leading(p) ? "this instance" : "another instance");
}

static int load_conn(struct kube *p, char *err, size_t errlen)
{
	if (p->set.kubeconfig && *p->set.kubeconfig)
		return kube_conn_from_kubeconfig(p->set.kubeconfig, p->set.context, &p->conn, err,
						 errlen);
	return kube_conn_in_cluster(NULL, &p->conn, err, errlen);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

int kube_new(struct store *store, const struct kube_settings *settings, struct kube **ret,
	     char *err, size_t errlen)
{
	struct kube *p = calloc(1, sizeof(*p));
	char host[256], ident[320];
	int e;

	if (!p) {
		snprintf(err, errlen, "kube: out of memory");
		return -ENOMEM;
	}
	p->store = store;
	p->set = *settings;
	kube_settings_default(&p->set);
	pthread_mutex_init(&p->stop_lock, NULL);
	pthread_mutex_init(&p->refs_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->stop_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "ironbelld");
	host[sizeof(host) - 1] = '\0';
	snprintf(ident, sizeof(ident), "%s_%ld", host, (long)getpid());
	/* Owned copies of the strings the settings point to. */
	p->set.kubeconfig = dup_or_null(settings->kubeconfig);
	p->set.context = dup_or_null(settings->context);
	p->set.namespace_ = dup_or_null(settings->namespace_);
	p->set.identity = dup_or_null(settings->identity ? settings->identity : ident);
	p->set.lease_name = strdup(p->set.lease_name);
	p->namespace_ = p->set.namespace_;
	e = load_conn(p, err, errlen);
	if (e < 0)
		goto fail;
	p->set.lease_namespace = dup_or_null(
		settings->lease_namespace && *settings->lease_namespace ? settings->lease_namespace :
		p->namespace_ ? p->namespace_ :
		p->conn.namespace_ ? p->conn.namespace_ : "default");
	struct kube_api_opts o = { .qps = p->set.qps, .burst = p->set.burst,
				   .timeout_ms = p->set.request_timeout_ms };
	e = kube_api_new(&p->conn, &o, &p->api, err, errlen);
	if (e < 0)
		goto fail;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		e = kube_watch_init(&p->watch[kinds[i]], p, kinds[i]);
		if (e < 0) {
			snprintf(err, errlen, "kube: the namespace name is too long");
			goto fail;
		}
	}
	p->writer = kube_writer_new(p);
	if (!p->writer) {
		e = -ENOMEM;
		snprintf(err, errlen, "kube: out of memory");
		goto fail;
	}
	if (!p->set.no_leader_election) {
		p->elector = kube_elector_new(p->api, p->set.lease_namespace, p->set.lease_name,
					      p->set.identity, p->set.lease_duration_s,
					      p->set.renew_deadline_s, p->set.retry_period_s,
					      set_leading, p);
		if (!p->elector) {
			e = -ENOMEM;
			snprintf(err, errlen, "kube: out of memory");
			goto fail;
		}
	}
	if (!p->set.lease_name || !p->set.identity ||
	    !p->set.lease_namespace) {
		e = -ENOMEM;
		snprintf(err, errlen, "kube: out of memory");
		goto fail;
	}
	log_info(SUB, "the API server is %s (%s), %s", p->conn.server, kube_api_origin(p->api),
		 p->namespace_ ? p->namespace_ : "all namespaces");
	*ret = p;
	return 0;
fail:
	kube_free(p);
	return e;
}

int kube_start(struct kube *p, char *err, size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		int e = kube_watch_start(&p->watch[kinds[i]]);
		if (e < 0) {
			snprintf(err, errlen, "kube: cannot start the %s watcher: %s",
				 p->watch[kinds[i]].ki->plural, strerror(-e));
			return e;
		}
	}
	int e = kube_writer_start(p->writer);
	if (e < 0) {
		snprintf(err, errlen, "kube: cannot start the writer: %s", strerror(-e));
		return e;
	}
	return 0;
}

void kube_free(struct kube *p)
{
	if (!p)
		return;
	/* While the Lease is still held: what the acting parts changed last
	 * goes to the cluster before another instance takes over. One that
	 * lost it sends nothing more: the statuses are the new holder's. */
	if (kube_part_leading(p))
		kube_writer_drain(p->writer, KUBE_DRAIN_MS);
	pthread_mutex_lock(&p->stop_lock);
	__atomic_store_n(&p->stopping, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->stop_cond);
	pthread_mutex_unlock(&p->stop_lock);
	if (p->elector)
		kube_elector_free(p->elector); /* releases the Lease; leading(false) */
	kube_writer_stop(p->writer);
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		kube_watch_stop(&p->watch[kinds[i]]);
	kube_writer_free(p->writer);
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		kube_watch_fini(&p->watch[kinds[i]]);
	if (p->set.no_leader_election && kube_part_leading(p))
		set_leading(false, p);
	kube_api_free(p->api);
	kube_conn_clear(&p->conn);
	kube_rvmap_free(&p->refs);
	free((char *)p->set.kubeconfig);
	free((char *)p->set.context);
	free((char *)p->set.namespace_);
	free((char *)p->set.identity);
	free((char *)p->set.lease_name);
	free((char *)p->set.lease_namespace);
	pthread_cond_destroy(&p->stop_cond);
	pthread_mutex_destroy(&p->stop_lock);
	pthread_mutex_destroy(&p->refs_lock);
	free(p);
}
