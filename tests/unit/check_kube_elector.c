/* check_kube_elector — the elector thread (kube/leader.c) against an API
 * server of a few lines: kube_session_* and kube_request are defined here,
 * keeping one Lease in memory with resourceVersion preconditions, so the
 * thread's rounds (create, renew, wait, take over, lose, release) run
 * without a network. Waits are for events, each bounded by WAIT_S; no
 * assertion is on how long anything took. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "kube/kube-internal.h"
#include "tests/unit/unit.h"

#define WAIT_S 20 /* bound of every wait for the thread */

/* The fake API server's state, under mu. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static json_t *lease; /* the stored Lease, or NULL */
static int rv;
static bool fail_puts; /* PUTs answer 500 */
static bool hang_puts; /* PUTs answer nothing until cancelled */
static int cancels;
static int n_gets, n_posts, n_puts;
static int led, unled; /* leading(true), leading(false) calls */

struct kube_session {
	bool cancelled;
};

struct kube_session *kube_session_new(struct kube_api *a)
{
	(void)a;
	return calloc(1, sizeof(struct kube_session));
}

void kube_session_free(struct kube_session *s)
{
	free(s);
}

void kube_session_cancel(struct kube_session *s)
{
	pthread_mutex_lock(&mu);
	s->cancelled = true;
	cancels++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* Stores body as the Lease with the next resourceVersion and answers it. */
static void store(json_t *o, struct kube_response *resp)
{
	char v[16];
	snprintf(v, sizeof(v), "%d", ++rv);
	json_object_set_new(json_object_get(o, "metadata"), "resourceVersion", json_string(v));
	json_decref(lease);
	lease = o;
	json_dump_callback(lease, buf_dump_cb, &resp->body, JSON_COMPACT);
}

int kube_request(struct kube_session *s, const char *method, const char *path,
		 const char *content_type, const char *body, size_t len, struct kube_response *resp)
{
	(void)content_type;
	memset(resp, 0, sizeof(*resp));
	buf_init(&resp->body, KUBE_MAX_BODY);
	pthread_mutex_lock(&mu);
	int r = 0;
	if (s->cancelled) {
		snprintf(resp->error, sizeof(resp->error), "cancelled");
		r = -ECANCELED;
		goto out;
	}
	ck_assert_ptr_nonnull(
		strstr(path, "/apis/coordination.k8s.io/v1/namespaces/default/leases"));
	json_t *o = body ? json_loadb(body, len, 0, NULL) : NULL;
	if (!strcmp(method, "GET")) {
		n_gets++;
		resp->status = lease ? 200 : 404;
		if (lease)
			json_dump_callback(lease, buf_dump_cb, &resp->body, JSON_COMPACT);
	} else if (!strcmp(method, "POST")) {
		n_posts++;
		ck_assert_ptr_nonnull(o);
		resp->status = lease ? 409 : 201;
		if (!lease)
			store(json_incref(o), resp);
	} else if (!strcmp(method, "PUT")) {
		n_puts++;
		ck_assert_ptr_nonnull(o);
		const char *want = json_string_value(
			json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
		char have[16];
		snprintf(have, sizeof(have), "%d", rv);
		if (hang_puts) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += WAIT_S;
			while (!s->cancelled)
				ck_assert_int_ne(pthread_cond_timedwait(&cv, &mu, &ts), ETIMEDOUT);
			snprintf(resp->error, sizeof(resp->error), "cancelled");
			r = -ECANCELED;
		} else if (fail_puts) {
			resp->status = 500;
			snprintf(resp->error, sizeof(resp->error), "HTTP 500: etcd is down");
		} else if (!lease || !want || strcmp(want, have)) {
			resp->status = 409;
		} else {
			resp->status = 200;
			store(json_incref(o), resp);
		}
	} else {
		ck_abort_msg("unexpected %s", method);
	}
	json_decref(o);
out:
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return r;
}

static void on_leading(bool leading, void *userdata)
{
	ck_assert_ptr_eq(userdata, &led);
	pthread_mutex_lock(&mu);
	if (leading)
		led++;
	else
		unled++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* Waits (mu held) until *counter reaches n; fails after WAIT_S. */
static void wait_for(const int *counter, int n)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_S;
	while (*counter < n)
		ck_assert_int_ne(pthread_cond_timedwait(&cv, &mu, &ts), ETIMEDOUT);
}

static const char *spec_str(const char *key)
{
	return json_string_value(json_object_get(json_object_get(lease, "spec"), key));
}

static json_int_t spec_int(const char *key)
{
	return json_integer_value(json_object_get(json_object_get(lease, "spec"), key));
}

static struct kube_api *fake_api = (struct kube_api *)&fake_api;

/* An elector with lease, renew deadline and retry period in seconds. */
static struct kube_elector *elector_with(unsigned lease_s, unsigned deadline_s, unsigned retry_s)
{
	struct kube_elector *e = kube_elector_new(fake_api, "default", "ironbelld", "us-1", lease_s,
						  deadline_s, retry_s, on_leading, &led);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(kube_elector_start(e), 0);
	return e;
}

/* Renewals every second, and a deadline far enough (10 s) that a loaded
 * machine does not miss it where the test is not about deadlines. */
static struct kube_elector *elector(void)
{
	return elector_with(15, 10, 1);
}

START_TEST(test_create_renew_release)
{
	struct kube_elector *e = elector();
	pthread_mutex_lock(&mu);
	wait_for(&led, 1);
	ck_assert_int_eq(n_posts, 1);
	ck_assert_str_eq(spec_str("holderIdentity"), "us-1");
	ck_assert_int_eq(spec_int("leaseTransitions"), 0);
	/* Renewals: PUTs of our own Lease, no GET needed between them. */
	int g = n_gets;
	wait_for(&n_puts, 2);
	ck_assert_int_eq(n_gets, g);
	ck_assert_str_eq(spec_str("holderIdentity"), "us-1");
	ck_assert_int_eq(led, 1);
	pthread_mutex_unlock(&mu);
	ck_assert(kube_elector_leading(e));

	kube_elector_free(e);
	/* Released for the next instance: nobody, 1 s. */
	ck_assert_int_eq(unled, 1);
	ck_assert_str_eq(spec_str("holderIdentity"), "");
	ck_assert_int_eq(spec_int("leaseDurationSeconds"), 1);
	ck_assert_int_eq(spec_int("leaseTransitions"), 0);
}
END_TEST

START_TEST(test_wait_then_take_over)
{
	pthread_mutex_lock(&mu);
	lease = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:i}}", "apiVersion",
			  "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
			  "ironbelld", "namespace", "default", "spec", "holderIdentity", "them-2",
			  "leaseDurationSeconds", 3600, "leaseTransitions", 4);
	rv = 7;
	json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion",
			    json_string("7"));
	pthread_mutex_unlock(&mu);

	struct kube_elector *e = elector();
	pthread_mutex_lock(&mu);
	wait_for(&n_gets, 2);
	/* Held for an hour by another: read, not written. */
	ck_assert_int_eq(n_posts + n_puts, 0);
	ck_assert_int_eq(led, 0);
	/* The holder releases it: taken over at the next read. */
	json_object_set_new(json_object_get(lease, "spec"), "holderIdentity", json_string(""));
	rv++;
	json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion",
			    json_sprintf("%d", rv));
	wait_for(&led, 1);
	ck_assert_str_eq(spec_str("holderIdentity"), "us-1");
	ck_assert_int_eq(spec_int("leaseTransitions"), 5);
	ck_assert_int_eq(spec_int("leaseDurationSeconds"), 15);
	pthread_mutex_unlock(&mu);
	kube_elector_free(e);
	ck_assert_int_eq(unled, 1);
}
END_TEST

START_TEST(test_renew_fails_lost)
{
	struct kube_elector *e = elector_with(15, 3, 1);
	pthread_mutex_lock(&mu);
	wait_for(&led, 1);
	fail_puts = true;
	/* No renewal for renew_deadline_s: leading stops, the Lease still
	 * names us (nothing could be written). */
	wait_for(&unled, 1);
	ck_assert_str_eq(spec_str("holderIdentity"), "us-1");
	pthread_mutex_unlock(&mu);
	ck_assert(!kube_elector_leading(e));
	kube_elector_free(e);
	/* Each start told one stop, never twice. */
	ck_assert_int_eq(unled, led);
}
END_TEST

START_TEST(test_renew_hangs_lost)
{
	struct kube_elector *e = elector_with(15, 3, 1);
	pthread_mutex_lock(&mu);
	wait_for(&led, 1);
	/* A renewal that hangs longer than the deadline (a request timeout
	 * is 30 s): cut short, and leading stops. */
	hang_puts = true;
	wait_for(&unled, 1);
	ck_assert_int_ge(cancels, 1);
	/* The server answers again: a new session renews the Lease, which
	 * still names us. */
	hang_puts = false;
	wait_for(&led, 2);
	ck_assert_str_eq(spec_str("holderIdentity"), "us-1");
	pthread_mutex_unlock(&mu);
	kube_elector_free(e);
	ck_assert_int_eq(unled, led);
}
END_TEST

START_TEST(test_conflict_reads_again)
{
	struct kube_elector *e = elector();
	pthread_mutex_lock(&mu);
	wait_for(&led, 1);
	/* Another writer bumps the resourceVersion (say, a label edit): our
	 * renewal n_gets a 409, reads again and renews from the fresh copy. */
	json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion",
			    json_sprintf("%d", ++rv));
	int g = n_gets;
	wait_for(&n_gets, g + 1);
	int p = n_puts;
	wait_for(&n_puts, p + 1);
	ck_assert_str_eq(spec_str("holderIdentity"), "us-1");
	ck_assert_int_eq(unled, 0);
	pthread_mutex_unlock(&mu);
	kube_elector_free(e);
}
END_TEST

START_TEST(test_release_stale_copy)
{
	struct kube_elector *e = elector();
	pthread_mutex_lock(&mu);
	wait_for(&led, 1);
	int p = n_puts;
	wait_for(&n_puts, p + 1);
	/* Right after a renewal (the next is a retry period away), another
	 * writer bumps the resourceVersion: the release's PUT gets a 409,
	 * reads again and releases. */
	json_object_set_new(json_object_get(lease, "metadata"), "resourceVersion",
			    json_sprintf("%d", ++rv));
	pthread_mutex_unlock(&mu);
	kube_elector_free(e);
	ck_assert_str_eq(spec_str("holderIdentity"), "");
	ck_assert_int_eq(unled, 1);
}
END_TEST

START_TEST(test_new_refused)
{
	struct kube_elector *e;
	/* client-go's order of timings: lease > renew deadline > retry. */
	errno = 0;
	ck_assert_ptr_null(kube_elector_new(fake_api, "default", "l", "me", 10, 10, 2, NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(
		kube_elector_new(fake_api, "default", "l", "me", 15, 10, 10, NULL, NULL));
	ck_assert_ptr_null(kube_elector_new(fake_api, "default", "l", "me", 15, 10, 0, NULL, NULL));
	ck_assert_ptr_null(kube_elector_new(fake_api, "Default", "l", "me", 15, 10, 2, NULL, NULL));
	ck_assert_ptr_null(
		kube_elector_new(fake_api, "default", "a/b", "me", 15, 10, 2, NULL, NULL));
	ck_assert_ptr_null(kube_elector_new(fake_api, "default", "l", "", 15, 10, 2, NULL, NULL));
	ck_assert_ptr_null(
		kube_elector_new(fake_api, "default", "l", "a\nb", 15, 10, 2, NULL, NULL));
	ck_assert_ptr_null(
		kube_elector_new(fake_api, "default", "l", "a\xff", 15, 10, 2, NULL, NULL));
	ck_assert_ptr_null(kube_elector_new(NULL, "default", "l", "me", 15, 10, 2, NULL, NULL));
	/* Never started: freed without a thread. */
	e = kube_elector_new(fake_api, "default", "l", "me", 15, 10, 2, NULL, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert(!kube_elector_leading(e));
	kube_elector_free(e);
	kube_elector_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kube_elector");
	TCase *tc = tcase_create("elector");
	tcase_set_timeout(tc, 2 * WAIT_S);
	UNIT_TEST(tc, test_create_renew_release);
	UNIT_TEST(tc, test_wait_then_take_over);
	UNIT_TEST(tc, test_renew_fails_lost);
	UNIT_TEST(tc, test_renew_hangs_lost);
	UNIT_TEST(tc, test_conflict_reads_again);
	UNIT_TEST(tc, test_release_stale_copy);
	UNIT_TEST(tc, test_new_refused);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
