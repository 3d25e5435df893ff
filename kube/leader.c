/* leader — the elector thread: holds the coordination.k8s.io/v1 Lease
 * that decides which ironbelld instance runs the parts that act (the BMC
 * jobs, the workflow engine); DHCP, TFTP, HTTP and metadata serve on every
 * instance and do not ask.
 *
 * DESIGN: the thread is the shell around lease.c's pure decision. Each
 * round reads the Lease (GET; the leader skips the read and renews from
 * the copy its last write returned, as client-go does), notes when its
 * record last changed by the monotonic clock, asks kube_lease_decide() and
 * sends the POST or PUT it says, with the resourceVersion read as the
 * precondition. A 409 Conflict means another instance wrote first: the
 * next round reads again at once (once; then it waits). Rounds are a
 * retry period apart (with client-go's jitter, a factor up to 1.2 more,
 * while not leading), or sooner when a watched lease expires sooner.
 * The leader that has not renewed for renew_deadline_s stops leading
 * (callback false) before the others, who wait lease_duration_s from
 * their own last sight of the record, can take over. A request can take
 * as long as the API's request timeout (30 s by default), longer than the
 * deadline: a guard thread cancels the request in flight when the deadline
 * passes, and the elector, back from it, stops leading and starts a new
 * session (a cancelled one stays cancelled). The thread has a session of
 * its own; its sleeps are waits on a condition variable (CLOCK_MONOTONIC), so
 * kube_elector_free() is prompt: it wakes the thread, which releases a
 * held Lease (holderIdentity "", leaseDurationSeconds 1: the next instance
 * takes over at once), and cancels the session when that takes longer
 * than KUBE_ELECTOR_STOP_MS, or at once when nothing is held. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "kube/kube-internal.h"

#define SUB "kube"
#define NS_PER_S 1000000000ull
#define LEADER_MAX_NAME 253         /* bytes of a namespace or Lease name */
#define LEADER_MAX_BODY (64 * 1024) /* bytes of a request body we send */

struct kube_elector {
	struct kube_api *api; /* borrowed */
	char *ns, *name, *identity;
	char path[2 * LEADER_MAX_NAME + 64]; /* .../namespaces/NS/leases */
	struct kube_lease_cfg cfg;
	void (*leading_fn)(bool, void *);
	void *userdata;
	struct kube_session *session;
	pthread_t thread, guard;
	bool started;

	pthread_mutex_t lock; /* guards the members down to leading */
	pthread_cond_t cond;  /* signalled on stop, when the thread ends and
			       * when the deadline changes */
	bool stop, done;
	bool in_request;      /* the elector is in kube_request() */
	bool cancelled;       /* the session was cancelled */
	uint64_t deadline_ns; /* leading: renew by then (monotonic), else 0 */
	bool leading;         /* written by the thread, read atomically by anyone */

	/* The thread's own. */
	struct kube_lease cur; /* the Lease as last read or written */
	bool have_cur;
	uint64_t observed_ns;                        /* when cur's record was first seen */
	uint64_t last_renew_ns;                      /* the last successful write while leading */
	unsigned conflicts;                          /* 409s in a row */
	char last_error[256];                        /* the last error logged above debug */
	char last_holder[KUBE_LEASE_MAX_HOLDER + 1]; /* last "held by" logged */
	unsigned seed;
	struct metric *m_leader, *m_transitions;
};

static bool name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!n || n > LEADER_MAX_NAME)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

/* What kube_lease_parse() takes as a holder: UTF-8 (JSON's), no control
 * characters, at most KUBE_LEASE_MAX_HOLDER bytes. */
static bool identity_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!n || n > KUBE_LEASE_MAX_HOLDER)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	json_t *j = json_string(s); /* NULL when not UTF-8 */
	json_decref(j);
	return j != NULL;
}

struct kube_elector *kube_elector_new(struct kube_api *api, const char *ns, const char *name,
				      const char *identity, unsigned lease_duration_s,
				      unsigned renew_deadline_s, unsigned retry_period_s,
				      void (*leading)(bool, void *), void *userdata)
{
	struct kube_elector *e = NULL;
	pthread_condattr_t ca;

	if (!api || !name_ok(ns) || !name_ok(name) || !identity_ok(identity) || !retry_period_s ||
	    renew_deadline_s <= retry_period_s || lease_duration_s <= renew_deadline_s ||
	    lease_duration_s > KUBE_LEASE_MAX_DURATION_S) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->api = api;
	e->ns = strdup(ns);
	e->name = strdup(name);
	e->identity = strdup(identity);
	e->session = kube_session_new(api);
	if (!e->ns || !e->name || !e->identity || !e->session)
		goto fail;
	snprintf(e->path, sizeof(e->path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
	e->cfg = (struct kube_lease_cfg){ .identity = e->identity,
					  .lease_duration_s = lease_duration_s,
					  .renew_deadline_s = renew_deadline_s,
					  .retry_period_s = retry_period_s };
	e->leading_fn = leading;
	e->userdata = userdata;
	e->seed = (unsigned)(now_mono_ns() ^ ((uint64_t)getpid() << 16));
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	e->m_leader = metrics_gauge("ironbell_kube_leader",
				    "1 while this instance holds the leader election Lease", NULL);
	e->m_transitions = metrics_counter("ironbell_kube_leader_transitions_total",
					   "Times this instance became the leader", NULL);
	metric_set(e->m_leader, 0);
	return e;
fail:
	kube_session_free(e->session);
	free(e->ns);
	free(e->name);
	free(e->identity);
	free(e);
	errno = ENOMEM;
	return NULL;
}

bool kube_elector_leading(const struct kube_elector *e)
{
	return e && __atomic_load_n(&e->leading, __ATOMIC_ACQUIRE);
}

static bool stopping(struct kube_elector *e)
{
	pthread_mutex_lock(&e->lock);
	bool s = e->stop;
	pthread_mutex_unlock(&e->lock);
	return s;
}

/* Sleeps ns, or until stop. */
static void elector_sleep(struct kube_elector *e, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t t = (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec += (time_t)(t / NS_PER_S);
	ts.tv_nsec = (long)(t % NS_PER_S);
	pthread_mutex_lock(&e->lock);
	/* Bounded: each pass either sees stop or reaches the deadline. */
	while (!e->stop && pthread_cond_timedwait(&e->cond, &e->lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&e->lock);
}

/* A retry period stretched by client-go's jitter (up to 1.2 times more). */
static uint64_t jittered(struct kube_elector *e)
{
	uint64_t base = (uint64_t)e->cfg.retry_period_s * NS_PER_S;
	return base + (uint64_t)((double)base * 1.2 * ((double)rand_r(&e->seed) / RAND_MAX));
}

/* Sets the time by which the leader must have renewed (0: none). */
static void set_deadline(struct kube_elector *e, uint64_t deadline_ns)
{
	pthread_mutex_lock(&e->lock);
	e->deadline_ns = deadline_ns;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void set_leading(struct kube_elector *e, bool leading)
{
	if (!leading)
		set_deadline(e, 0);
	__atomic_store_n(&e->leading, leading, __ATOMIC_RELEASE);
	metric_set(e->m_leader, leading ? 1 : 0);
	if (e->leading_fn)
		e->leading_fn(leading, e->userdata);
}

/* Logs an error once (at warn) until another one, or a success, comes. */
static void elector_error(struct kube_elector *e, const char *what)
{
	if (stopping(e)) {
		log_debug(SUB, "lease %s/%s: %s", e->ns, e->name, what);
		return;
	}
	if (strcmp(what, e->last_error)) {
		log_warn(SUB, "lease %s/%s: %s", e->ns, e->name, what);
		snprintf(e->last_error, sizeof(e->last_error), "%s", what);
	} else {
		log_debug(SUB, "lease %s/%s: %s", e->ns, e->name, what);
	}
}

static void lose(struct kube_elector *e, const char *why)
{
	log_warn(SUB, "lost the lease: %s (lease %s/%s)", why, e->ns, e->name);
	e->have_cur = false;
	set_leading(e, false);
}

/* Takes the Lease the answer body holds as cur, seen at now. */
static void adopt(struct kube_elector *e, const struct buf *body, uint64_t now)
{
	struct kube_lease l;
	char err[256];
	if (kube_lease_parse(body->data ? body->data : "", body->len, &l, err, sizeof(err))) {
		/* Renew from a fresh read next time. */
		elector_error(e, err);
		e->have_cur = false;
		return;
	}
	if (!e->have_cur || !kube_lease_same_record(&e->cur, &l))
		e->observed_ns = now;
	kube_lease_clear(&e->cur);
	e->cur = l;
	e->have_cur = true;
}

/* kube_request() on the current session, which the guard may cancel
 * meanwhile; a cancelled session is replaced (unless stopping). None is
 * started past the leader's renewal deadline (-ETIMEDOUT). */
static int elector_request(struct kube_elector *e, const char *method, const char *path,
			   const char *body, size_t len, struct kube_response *resp)
{
	pthread_mutex_lock(&e->lock);
	if (e->deadline_ns && now_mono_ns() >= e->deadline_ns) {
		pthread_mutex_unlock(&e->lock);
		*resp = (struct kube_response){ .body = BUF_INIT(0) };
		snprintf(resp->error, sizeof(resp->error), "the renewal deadline passed");
		return -ETIMEDOUT;
	}
	struct kube_session *s = e->session;
	e->in_request = true;
	pthread_mutex_unlock(&e->lock);
	int r = kube_request(s, method, path, body ? "application/json" : NULL, body, len, resp);
	pthread_mutex_lock(&e->lock);
	e->in_request = false;
	if (e->cancelled && !e->stop) {
		struct kube_session *fresh = kube_session_new(e->api);
		if (fresh) { /* else the next round tries again */
			kube_session_free(e->session);
			e->session = fresh;
			e->cancelled = false;
		}
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* "what: HTTP 500: <the Status's message>", as kube_request puts it in
 * resp->error, or the bare status when it gave none. */
static void status_error(char *out, size_t cap, const char *what, const struct kube_response *resp)
{
	if (*resp->error)
		snprintf(out, cap, "%s: %s", what, resp->error);
	else
		snprintf(out, cap, "%s: HTTP %ld", what, resp->status);
}

/* GETs the Lease into cur. 1 when found, 0 when absent (404), or a
 * negative errno (logged). */
static int elector_read(struct kube_elector *e)
{
	struct kube_response resp;
	char path[sizeof(e->path) + LEADER_MAX_NAME + 2], why[600];
	snprintf(path, sizeof(path), "%s/%s", e->path, e->name);
	int r = elector_request(e, "GET", path, NULL, 0, &resp);
	uint64_t now = now_mono_ns();
	if (r < 0) {
		snprintf(why, sizeof(why), "read: %s", resp.error);
	} else if (resp.status == 404) {
		kube_lease_clear(&e->cur);
		e->have_cur = false;
		r = 0;
	} else if (resp.status != 200) {
		status_error(why, sizeof(why), "read", &resp);
		r = -EPROTO;
	} else {
		adopt(e, &resp.body, now);
		r = e->have_cur ? 1 : -EBADMSG;
	}
	buf_free(&resp.body);
	if (r < 0 && r != -EBADMSG)
		elector_error(e, why);
	return r;
}

/* Sends the write d says. 0 when it went through, -EAGAIN on a 409,
 * another negative errno (logged) otherwise. */
static int elector_write(struct kube_elector *e, enum kube_lease_action action)
{
	struct buf body = BUF_INIT(LEADER_MAX_BODY);
	struct kube_response resp = { 0 };
	char path[sizeof(e->path) + LEADER_MAX_NAME + 2], why[600];
	const char *method = action == KUBE_LEASE_CREATE ? "POST" : "PUT";
	int r = kube_lease_body(&e->cfg, action, e->ns, e->name, e->have_cur ? &e->cur : NULL,
				now_real_ns(), &body);
	if (r < 0) {
		snprintf(why, sizeof(why), "cannot build the Lease: %s", strerror(-r));
		elector_error(e, why);
		goto out;
	}
	if (action == KUBE_LEASE_CREATE)
		snprintf(path, sizeof(path), "%s", e->path);
	else
		snprintf(path, sizeof(path), "%s/%s", e->path, e->name);
	r = elector_request(e, method, path, body.data, body.len, &resp);
	if (r < 0) {
		snprintf(why, sizeof(why), "%s: %s", method, resp.error);
		elector_error(e, why);
	} else if (resp.status == 200 || resp.status == 201) {
		adopt(e, &resp.body, now_mono_ns());
		e->last_error[0] = '\0';
		r = 0;
	} else if (resp.status == 409) {
		log_debug(SUB, "lease %s/%s: conflict, reading again", e->ns, e->name);
		e->have_cur = false;
		r = -EAGAIN;
	} else {
		status_error(why, sizeof(why), method, &resp);
		elector_error(e, why);
		r = -EPROTO;
	}
	buf_free(&resp.body);
out:
	buf_free(&body);
	return r;
}

static void became_leader(struct kube_elector *e, uint64_t now)
{
	e->last_renew_ns = now;
	set_deadline(e, now + (uint64_t)e->cfg.renew_deadline_s * NS_PER_S);
	e->last_holder[0] = '\0';
	if (kube_elector_leading(e))
		return;
	log_info(SUB, "became leader (lease %s/%s, transitions %lld)", e->ns, e->name,
		 e->have_cur ? (long long)e->cur.transitions : 0LL);
	metric_inc(e->m_transitions, 1);
	set_leading(e, true);
}

/* Stops leading when the last renewal is renew_deadline_s old. */
static void check_overdue(struct kube_elector *e, uint64_t now)
{
	if (kube_elector_leading(e) && kube_lease_renew_overdue(&e->cfg, e->last_renew_ns, now)) {
		char why[400];
		snprintf(why, sizeof(why), "not renewed for %us: %s", e->cfg.renew_deadline_s,
			 *e->last_error ? e->last_error : "conflicts");
		lose(e, why);
	}
}

/* One round: read (unless renewing from a fresh copy), decide, write.
 * Returns how long to sleep before the next one. */
static uint64_t elector_round(struct kube_elector *e)
{
	struct kube_lease_decision d;
	uint64_t now = now_mono_ns();
	int r = 0;

	/* No request is started past the deadline (the guard only cuts the
	 * one in flight short). */
	check_overdue(e, now);
	bool leading = kube_elector_leading(e);
	uint64_t sleep = leading ? (uint64_t)e->cfg.retry_period_s * NS_PER_S : jittered(e);
	if (!(leading && e->have_cur))
		r = elector_read(e);
	now = now_mono_ns();
	if (r < 0)
		goto out;
	kube_lease_decide(&e->cfg, e->have_cur ? &e->cur : NULL, e->observed_ns, now, &d);
	if (d.action == KUBE_LEASE_WAIT) {
		if (leading)
			lose(e, "the Lease is held by another instance");
		if (e->have_cur && !e->cur.spec_valid)
			elector_error(e, e->cur.invalid);
		if (strcmp(d.holder, e->last_holder)) {
			log_info(SUB, "lease held by %s until ~%llus (lease %s/%s)", d.holder,
				 (unsigned long long)((d.expires_ns + NS_PER_S - 1) / NS_PER_S),
				 e->ns, e->name);
			snprintf(e->last_holder, sizeof(e->last_holder), "%s", d.holder);
		}
		e->conflicts = 0;
		return d.wait_ns < sleep ? d.wait_ns : sleep;
	}
	if (d.action == KUBE_LEASE_TAKE && e->have_cur && !e->cur.spec_valid)
		log_warn(SUB, "lease %s/%s: taking over a Lease with a bad spec: %s", e->ns,
			 e->name, e->cur.invalid);
	r = elector_write(e, d.action);
	if (r == -EAGAIN && !e->conflicts++)
		return 0; /* read again at once, once */
	if (r < 0)
		goto out;
	e->conflicts = 0;
	became_leader(e, now);
	return (uint64_t)e->cfg.retry_period_s * NS_PER_S;
out:
	check_overdue(e, now_mono_ns());
	return sleep;
}

/* Gives the Lease up on stop, so that the next instance need not wait for
 * it to expire. */
static void elector_release(struct kube_elector *e)
{
	/* Twice at most: a 409 (our copy was stale) reads again. */
	for (int tries = 0; tries < 2; tries++) {
		if (!e->have_cur && elector_read(e) <= 0)
			return;
		if (!e->cur.spec_valid || strcmp(e->cur.holder, e->identity))
			return; /* no longer ours */
		int r = elector_write(e, KUBE_LEASE_RELEASE);
		if (!r)
			log_info(SUB, "released the lease %s/%s", e->ns, e->name);
		if (r != -EAGAIN)
			return;
	}
}

static void *elector_main(void *arg)
{
	struct kube_elector *e = arg;
	/* Bounded by stop: every round ends in a sleep that stop cuts short,
	 * or (after a first 409) in at most one immediate round. */
	while (!stopping(e)) {
		uint64_t ns = elector_round(e);
		if (ns)
			elector_sleep(e, ns);
	}
	if (kube_elector_leading(e)) {
		elector_release(e);
		set_leading(e, false);
	}
	pthread_mutex_lock(&e->lock);
	e->done = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* The guard: when the leader's renewal deadline passes while a request
 * is in flight, cancels it, so that leading stops on time whatever the
 * request's own timeout. */
static void *guard_main(void *arg)
{
	struct kube_elector *e = arg;
	uint64_t fired = 0; /* the deadline already acted on */
	pthread_mutex_lock(&e->lock);
	/* Bounded by stop: every pass waits for a signal or a deadline. */
	while (!e->stop) {
		if (!e->deadline_ns || e->deadline_ns == fired) {
			pthread_cond_wait(&e->cond, &e->lock);
			continue;
		}
		if (now_mono_ns() < e->deadline_ns) {
			struct timespec ts = { .tv_sec = (time_t)(e->deadline_ns / NS_PER_S),
					       .tv_nsec = (long)(e->deadline_ns % NS_PER_S) };
			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
			continue;
		}
		if (e->in_request) {
			log_debug(SUB, "lease %s/%s: renewal deadline passed, cancelling", e->ns,
				  e->name);
			kube_session_cancel(e->session);
			e->cancelled = true;
		}
		fired = e->deadline_ns; /* once; the elector sees the rest */
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int kube_elector_start(struct kube_elector *e)
{
	if (e->started)
		return -EALREADY;
	int r = pthread_create(&e->guard, NULL, guard_main, e);
	if (r)
		return -r;
	r = pthread_create(&e->thread, NULL, elector_main, e);
	if (r) {
		pthread_mutex_lock(&e->lock);
		e->stop = true;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
		pthread_join(e->guard, NULL);
		e->stop = false;
		return -r;
	}
	e->started = true;
	return 0;
}

void kube_elector_free(struct kube_elector *e)
{
	if (!e)
		return;
	if (e->started) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t = (uint64_t)ts.tv_nsec + (uint64_t)KUBE_ELECTOR_STOP_MS * 1000000u;
		ts.tv_sec += (time_t)(t / NS_PER_S);
		ts.tv_nsec = (long)(t % NS_PER_S);

		pthread_mutex_lock(&e->lock);
		e->stop = true;
		pthread_cond_broadcast(&e->cond);
		/* Nothing to release: end whatever request is under way. */
		if (!kube_elector_leading(e))
			kube_session_cancel(e->session);
		while (!e->done && pthread_cond_timedwait(&e->cond, &e->lock, &ts) != ETIMEDOUT)
			;
		if (!e->done)
			kube_session_cancel(e->session);
		pthread_mutex_unlock(&e->lock);
		pthread_join(e->thread, NULL);
		pthread_join(e->guard, NULL);
	}
	kube_session_free(e->session);
	kube_lease_clear(&e->cur);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e->ns);
	free(e->name);
	free(e->identity);
	free(e);
}
