/* check_kube_leader — the leader election's decision core (kube/lease.c):
 * the Lease parsed as untrusted input, what is decided from it and this
 * instance's observation, and the bodies of the POST and PUT it sends. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/common.h"
#include "kube/kube-internal.h"
#include "tests/unit/unit.h"

#define S 1000000000ull
/* 2026-11-26T03:12:27.123456789Z */
#define NOW_REAL (1795662747ull * S + 123456789ull)
#define NOW_STR "2026-11-26T03:12:27.123456Z"
#define T0 (1000 * S) /* a monotonic time the record was first seen */

static const struct kube_lease_cfg cfg = {
	.identity = "us-1", .lease_duration_s = 15, .renew_deadline_s = 10, .retry_period_s = 2
};

/* A Lease object around spec (a JSON text, or NULL for none). */
static void lease_with(const char *spec, struct kube_lease *ret)
{
	char text[2048], err[256];
	if (spec)
		snprintf(text, sizeof(text),
			 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			 "\"metadata\":{\"name\":\"ironbelld\",\"namespace\":\"default\","
			 "\"resourceVersion\":\"42\",\"labels\":{\"app\":\"ironbelld\"},"
			 "\"managedFields\":[{\"manager\":\"x\"}]},\"spec\":%s}",
			 spec);
	else
		snprintf(text, sizeof(text),
			 "{\"kind\":\"Lease\",\"metadata\":{\"name\":\"ironbelld\","
			 "\"resourceVersion\":\"42\"}}");
	int r = kube_lease_parse(text, strlen(text), ret, err, sizeof(err));
	ck_assert_msg(r == 0, "%s: %d %s", text, r, err);
}

#define OTHER_SPEC                                                                                  \
	"{\"holderIdentity\":\"them-2\",\"leaseDurationSeconds\":15,"                               \
	"\"acquireTime\":\"2026-11-26T03:00:00.000000Z\",\"renewTime\":\"2026-11-26T03:12:20.5Z\"," \
	"\"leaseTransitions\":4}"

START_TEST(test_no_lease_creates)
{
	struct kube_lease_decision d;
	kube_lease_decide(&cfg, NULL, 0, T0, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_CREATE);
}
END_TEST

START_TEST(test_ours_renews)
{
	struct kube_lease l;
	struct kube_lease_decision d;
	lease_with("{\"holderIdentity\":\"us-1\",\"leaseDurationSeconds\":15,"
		   "\"leaseTransitions\":2}",
		   &l);
	ck_assert(l.spec_valid);
	/* Whatever our observation says: it is ours to renew. */
	kube_lease_decide(&cfg, &l, T0, T0 + 100 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_RENEW);
	kube_lease_decide(&cfg, &l, T0, T0, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_RENEW);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_other_waits)
{
	struct kube_lease l;
	struct kube_lease_decision d;
	lease_with(OTHER_SPEC, &l);
	ck_assert(l.spec_valid);
	ck_assert_str_eq(l.holder, "them-2");
	ck_assert_int_eq(l.duration_s, 15);
	ck_assert_int_eq(l.transitions, 4);
	ck_assert_str_eq(l.rv, "42");

	/* Seen 5 s ago: 10 s left; read again after the retry period. */
	kube_lease_decide(&cfg, &l, T0, T0 + 5 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_WAIT);
	ck_assert_str_eq(d.holder, "them-2");
	ck_assert_uint_eq(d.expires_ns, 10 * S);
	ck_assert_uint_eq(d.wait_ns, 2 * S);
	/* 0.5 s left: read again when it expires, not later. */
	kube_lease_decide(&cfg, &l, T0, T0 + 14 * S + S / 2, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_WAIT);
	ck_assert_uint_eq(d.expires_ns, S / 2);
	ck_assert_uint_eq(d.wait_ns, S / 2);
	/* Its renewTime is in the past by the wall clock, but expiry is ours
	 * to judge: just seen, it is alive for a whole duration. */
	kube_lease_decide(&cfg, &l, T0 + 500 * S, T0 + 500 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_WAIT);
	ck_assert_uint_eq(d.expires_ns, 15 * S);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_other_duration_is_theirs)
{
	struct kube_lease l;
	struct kube_lease_decision d;
	/* The holder's leaseDurationSeconds counts, not ours. */
	lease_with("{\"holderIdentity\":\"them-2\",\"leaseDurationSeconds\":60}", &l);
	kube_lease_decide(&cfg, &l, T0, T0 + 30 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_WAIT);
	ck_assert_uint_eq(d.expires_ns, 30 * S);
	kube_lease_decide(&cfg, &l, T0, T0 + 60 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_TAKE);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_expired_takes_over)
{
	struct kube_lease l;
	struct kube_lease_decision d;
	struct buf b = BUF_INIT(65536);
	lease_with(OTHER_SPEC, &l);
	kube_lease_decide(&cfg, &l, T0, T0 + 15 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_TAKE);
	ck_assert_int_eq(kube_lease_body(&cfg, d.action, "default", "ironbelld", &l, NOW_REAL, &b),
			 0);
	ck_assert_str_eq(b.data,
			 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			 "\"metadata\":{\"name\":\"ironbelld\",\"namespace\":\"default\","
			 "\"resourceVersion\":\"42\",\"labels\":{\"app\":\"ironbelld\"}},"
			 "\"spec\":{\"holderIdentity\":\"us-1\",\"leaseDurationSeconds\":15,"
			 "\"acquireTime\":\"" NOW_STR "\",\"renewTime\":\"" NOW_STR "\","
			 "\"leaseTransitions\":5}}");
	buf_free(&b);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_released_taken_at_once)
{
	struct kube_lease l;
	struct kube_lease_decision d;
	/* What a stopping holder leaves (client-go's ReleaseOnCancel). */
	lease_with("{\"holderIdentity\":\"\",\"leaseDurationSeconds\":1,"
		   "\"renewTime\":\"2026-11-26T03:12:27.000000Z\",\"leaseTransitions\":4}",
		   &l);
	ck_assert(l.spec_valid);
	kube_lease_decide(&cfg, &l, T0, T0, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_TAKE);
	kube_lease_clear(&l);
	/* No holder at all, no duration: free too. */
	lease_with("{}", &l);
	ck_assert(l.spec_valid);
	kube_lease_decide(&cfg, &l, T0, T0, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_TAKE);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_renew_deadline)
{
	/* Renewed at T0: leading until renew_deadline_s (10 s) without a
	 * renewal, which is before the others may take over (15 s). */
	ck_assert(!kube_lease_renew_overdue(&cfg, T0, T0));
	ck_assert(!kube_lease_renew_overdue(&cfg, T0, T0 + 10 * S - 1));
	ck_assert(kube_lease_renew_overdue(&cfg, T0, T0 + 10 * S));
	ck_assert(kube_lease_renew_overdue(&cfg, T0, T0 + 3600 * S));
	ck_assert_uint_lt(cfg.renew_deadline_s, cfg.lease_duration_s);
}
END_TEST

/* Specs that are read but not trusted: each is held by an unknown holder
 * for our own duration (15 s) from when we saw it, then ours to take. */
static const struct {
	const char *spec, *why;
} bad_specs[] = {
	{ "{\"holderIdentity\":5,\"leaseDurationSeconds\":15}", "holderIdentity is not a string" },
	{ "{\"holderIdentity\":[\"a\"],\"leaseDurationSeconds\":15}",
	  "holderIdentity is not a string" },
	{ "{\"holderIdentity\":\"a\\u0001b\",\"leaseDurationSeconds\":15}", "control character" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":-1}", "out of range" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":0}", "out of range" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":99999999999}", "out of range" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":3601}", "out of range" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":\"15\"}", "not an integer" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":15.5}", "not an integer" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":true}", "not an integer" },
	{ "{\"holderIdentity\":\"x\"}", "leaseDurationSeconds is missing" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":15,\"leaseTransitions\":-3}",
	  "out of range" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":15,\"leaseTransitions\":{}}",
	  "not an integer" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":15,\"renewTime\":12}",
	  "renewTime is not a string" },
	{ "{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":15,\"acquireTime\":"
	  "\"2026-11-26T03:12:27.123456789012345678901234567890Z\"}",
	  "longer than" },
	{ "[1,2]", "spec is not an object" },
	{ "\"us-1\"", "spec is not an object" },
	{ "null", "no spec" },
	{ NULL, "no spec" },
};

START_TEST(test_bad_spec)
{
	struct kube_lease l;
	struct kube_lease_decision d;
	lease_with(bad_specs[_i].spec, &l);
	ck_assert_msg(!l.spec_valid, "%s", bad_specs[_i].spec);
	ck_assert_msg(strstr(l.invalid, bad_specs[_i].why), "%s: %s", bad_specs[_i].spec,
		      l.invalid);
	kube_lease_decide(&cfg, &l, T0, T0 + 14 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_WAIT);
	ck_assert_str_eq(d.holder, "an unknown holder");
	ck_assert_uint_eq(d.expires_ns, S);
	kube_lease_decide(&cfg, &l, T0, T0 + 15 * S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_TAKE);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_bad_spec_holding_our_name)
{
	struct kube_lease l;
	struct kube_lease_decision d;
	/* Our name beside a bad field: not taken as ours on trust. */
	lease_with("{\"holderIdentity\":\"us-1\",\"leaseDurationSeconds\":-5}", &l);
	ck_assert(!l.spec_valid);
	kube_lease_decide(&cfg, &l, T0, T0 + S, &d);
	ck_assert_int_eq(d.action, KUBE_LEASE_WAIT);
	kube_lease_clear(&l);
}
END_TEST

/* Answers that are refused: nothing can be written after them. */
static const struct {
	const char *text, *why;
} refused[] = {
	{ "", "not JSON" },
	{ "{\"metadata\":", "not JSON" },
	{ "[]", "not a JSON object" },
	{ "{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"1\"}}", "not a Lease" },
	{ "{\"kind\":7,\"metadata\":{\"resourceVersion\":\"1\"}}", "not a Lease" },
	{ "{\"spec\":{}}", "resourceVersion" },
	{ "{\"metadata\":[],\"spec\":{}}", "resourceVersion" },
	{ "{\"metadata\":{\"resourceVersion\":42}}", "resourceVersion" },
	{ "{\"metadata\":{\"resourceVersion\":\"\"}}", "resourceVersion" },
	{ "{\"metadata\":{\"resourceVersion\":\"1234567890123456789012345678901234567890"
	  "12345678901234567890123456\"}}",
	  "resourceVersion" },
	{ "{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"}}", "not JSON" },
};

START_TEST(test_refused)
{
	struct kube_lease l;
	char err[256] = "";
	int r = kube_lease_parse(refused[_i].text, strlen(refused[_i].text), &l, err, sizeof(err));
	ck_assert_msg(r == -EBADMSG, "%s: %d", refused[_i].text, r);
	ck_assert_msg(strstr(err, refused[_i].why), "%s: %s", refused[_i].text, err);
	ck_assert_ptr_null(l.object);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_same_record)
{
	struct kube_lease a, b;
	lease_with(OTHER_SPEC, &a);
	lease_with(OTHER_SPEC, &b);
	ck_assert(kube_lease_same_record(&a, &b));
	kube_lease_clear(&b);
	/* A renewal changes renewTime: the holder is alive. */
	lease_with("{\"holderIdentity\":\"them-2\",\"leaseDurationSeconds\":15,"
		   "\"acquireTime\":\"2026-11-26T03:00:00.000000Z\","
		   "\"renewTime\":\"2026-11-26T03:12:22.5Z\",\"leaseTransitions\":4}",
		   &b);
	ck_assert(!kube_lease_same_record(&a, &b));
	kube_lease_clear(&b);
	lease_with("{\"holderIdentity\":5}", &b);
	ck_assert(!kube_lease_same_record(&a, &b));
	ck_assert(kube_lease_same_record(&b, &b));
	kube_lease_clear(&b);
	kube_lease_clear(&a);
}
END_TEST

START_TEST(test_body_create)
{
	struct buf b = BUF_INIT(65536);
	ck_assert_int_eq(kube_lease_body(&cfg, KUBE_LEASE_CREATE, "default", "ironbelld", NULL,
					 NOW_REAL, &b),
			 0);
	ck_assert_str_eq(b.data,
			 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			 "\"metadata\":{\"name\":\"ironbelld\",\"namespace\":\"default\"},"
			 "\"spec\":{\"holderIdentity\":\"us-1\",\"leaseDurationSeconds\":15,"
			 "\"acquireTime\":\"" NOW_STR "\",\"renewTime\":\"" NOW_STR "\","
			 "\"leaseTransitions\":0}}");
	buf_free(&b);
}
END_TEST

START_TEST(test_body_renew)
{
	struct kube_lease l;
	struct buf b = BUF_INIT(65536);
	lease_with("{\"holderIdentity\":\"us-1\",\"leaseDurationSeconds\":15,"
		   "\"acquireTime\":\"2026-11-26T03:00:00.000000Z\","
		   "\"renewTime\":\"2026-11-26T03:12:25.000000Z\",\"leaseTransitions\":7}",
		   &l);
	ck_assert_int_eq(
		kube_lease_body(&cfg, KUBE_LEASE_RENEW, "default", "ironbelld", &l, NOW_REAL, &b),
		0);
	/* acquireTime and leaseTransitions kept, renewTime now. */
	ck_assert_str_eq(b.data,
			 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			 "\"metadata\":{\"name\":\"ironbelld\",\"namespace\":\"default\","
			 "\"resourceVersion\":\"42\",\"labels\":{\"app\":\"ironbelld\"}},"
			 "\"spec\":{\"holderIdentity\":\"us-1\",\"leaseDurationSeconds\":15,"
			 "\"acquireTime\":\"2026-11-26T03:00:00.000000Z\","
			 "\"renewTime\":\"" NOW_STR "\",\"leaseTransitions\":7}}");
	buf_free(&b);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_body_release)
{
	struct kube_lease l;
	struct buf b = BUF_INIT(65536);
	lease_with("{\"holderIdentity\":\"us-1\",\"leaseDurationSeconds\":15,"
		   "\"acquireTime\":\"2026-11-26T03:00:00.000000Z\",\"leaseTransitions\":7}",
		   &l);
	ck_assert_int_eq(
		kube_lease_body(&cfg, KUBE_LEASE_RELEASE, "default", "ironbelld", &l, NOW_REAL, &b),
		0);
	ck_assert_str_eq(b.data, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
				 "\"metadata\":{\"name\":\"ironbelld\",\"namespace\":\"default\","
				 "\"resourceVersion\":\"42\",\"labels\":{\"app\":\"ironbelld\"}},"
				 "\"spec\":{\"holderIdentity\":\"\",\"leaseDurationSeconds\":1,"
				 "\"acquireTime\":\"" NOW_STR "\",\"renewTime\":\"" NOW_STR "\","
				 "\"leaseTransitions\":7}}");
	buf_free(&b);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_body_refused)
{
	struct kube_lease l;
	struct buf b = BUF_INIT(65536);
	/* A PUT needs the Lease it replaces; WAIT writes nothing. */
	ck_assert_int_eq(
		kube_lease_body(&cfg, KUBE_LEASE_TAKE, "default", "ironbelld", NULL, NOW_REAL, &b),
		-EINVAL);
	ck_assert_int_eq(
		kube_lease_body(&cfg, KUBE_LEASE_RENEW, "default", "ironbelld", NULL, NOW_REAL, &b),
		-EINVAL);
	lease_with(OTHER_SPEC, &l);
	ck_assert_int_eq(
		kube_lease_body(&cfg, KUBE_LEASE_WAIT, "default", "ironbelld", &l, NOW_REAL, &b),
		-EINVAL);
	ck_assert_uint_eq(b.len, 0);
	/* A body over the buffer's cap. */
	struct buf small = BUF_INIT(64);
	ck_assert_int_eq(kube_lease_body(&cfg, KUBE_LEASE_TAKE, "default", "ironbelld", &l,
					 NOW_REAL, &small),
			 -E2BIG);
	buf_free(&small);
	buf_free(&b);
	kube_lease_clear(&l);
}
END_TEST

START_TEST(test_time)
{
	char t[KUBE_LEASE_TIME_LEN + 1];
	kube_lease_time(NOW_REAL, t);
	ck_assert_str_eq(t, NOW_STR);
	kube_lease_time(0, t);
	ck_assert_str_eq(t, "1970-01-01T00:00:00.000000Z");
	kube_lease_time(1795662747ull * S + 999999999ull, t);
	ck_assert_str_eq(t, "2026-11-26T03:12:27.999999Z");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kube_leader");
	TCase *tc = tcase_create("lease");
	UNIT_TEST(tc, test_no_lease_creates);
	UNIT_TEST(tc, test_ours_renews);
	UNIT_TEST(tc, test_other_waits);
	UNIT_TEST(tc, test_other_duration_is_theirs);
	UNIT_TEST(tc, test_expired_takes_over);
	UNIT_TEST(tc, test_released_taken_at_once);
	UNIT_TEST(tc, test_renew_deadline);
	tcase_add_loop_test(tc, test_bad_spec, 0, (int)ARRAY_SIZE(bad_specs));
	UNIT_TEST(tc, test_bad_spec_holding_our_name);
	tcase_add_loop_test(tc, test_refused, 0, (int)ARRAY_SIZE(refused));
	UNIT_TEST(tc, test_same_record);
	UNIT_TEST(tc, test_body_create);
	UNIT_TEST(tc, test_body_renew);
	UNIT_TEST(tc, test_body_release);
	UNIT_TEST(tc, test_body_refused);
	UNIT_TEST(tc, test_time);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
