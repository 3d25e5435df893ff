/* fuzz_lease — the leader election's Lease parser (kube/lease.c). The
 * input is the body of a GET of the Lease as the API server would answer;
 * when it parses, every decision is taken from it and every body that
 * could be written after it is built, which must not crash either. */
#include "config.h"

#include "common/common.h"
#include "kube/kube-internal.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_LEASE_MAX (64 * 1024)
#define S 1000000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kube_lease_cfg cfg = { .identity = "us-1",
						   .lease_duration_s = 15,
						   .renew_deadline_s = 10,
						   .retry_period_s = 2 };
	struct kube_lease l;
	struct kube_lease_decision d;
	char err[256];

	if (size > FUZZ_LEASE_MAX)
		return 0;
	if (kube_lease_parse((const char *)data, size, &l, err, sizeof(err)))
		return 0;
	(void)kube_lease_same_record(&l, &l);
	for (uint64_t t = 0; t <= 4000; t += 1000) {
		kube_lease_decide(&cfg, &l, 1000 * S, 1000 * S + t * S / 100, &d);
		if (d.action == KUBE_LEASE_WAIT && (!d.holder || d.wait_ns > d.expires_ns))
			__builtin_trap();
	}
	for (int a = 0; a < KUBE_LEASE_ACTION_MAX; a++) {
		struct buf b = BUF_INIT(FUZZ_LEASE_MAX * 2);
		(void)kube_lease_body(&cfg, (enum kube_lease_action)a, "default", "ironbelld", &l,
				      1795662747ull * S, &b);
		buf_free(&b);
	}
	kube_lease_clear(&l);
	return 0;
}
