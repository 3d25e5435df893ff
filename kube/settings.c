/* settings — the kube part's defaults.
 *
 * DESIGN: client-go's rate limit (5 requests a second, bursts of 10) is
 * the default, as every Kubernetes controller starts with; the lease
 * timings are client-go's leaderelection defaults (15 s, 10 s, 2 s). */
#include "config.h"

#include "kube/kube.h"

void kube_settings_default(struct kube_settings *s)
{
	if (!s->qps)
		s->qps = 5;
	if (!s->burst)
		s->burst = 10;
	if (!s->page_size)
		s->page_size = 500;
	if (!s->watch_timeout_s)
		s->watch_timeout_s = 300;
	if (!s->backoff_min_ms)
		s->backoff_min_ms = 800;
	if (!s->backoff_max_ms)
		s->backoff_max_ms = 30000;
	if (!s->request_timeout_ms)
		s->request_timeout_ms = 30000;
	if (!s->write_delay_ms)
		s->write_delay_ms = 100;
	if (!s->lease_name || !*s->lease_name)
		s->lease_name = "ironbelld";
	if (!s->lease_duration_s)
		s->lease_duration_s = 15;
	if (!s->renew_deadline_s)
		s->renew_deadline_s = 10;
	if (!s->retry_period_s)
		s->retry_period_s = 2;
}
