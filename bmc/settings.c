/* settings — the defaults of struct bmc_settings (bmc/bmc.h). */
#include "config.h"

#include "bmc/bmc.h"

void bmc_settings_default(struct bmc_settings *s)
{
	if (!s->cipher_suite)
		s->cipher_suite = 3;
	if (!s->timeout_ms)
		s->timeout_ms = 1000;
	if (!s->retries)
		s->retries = 3;
	if (!s->max_sessions)
		s->max_sessions = 4096;
	if (!s->http_timeout_ms)
		s->http_timeout_ms = 20000;
	if (!s->max_connections)
		s->max_connections = 128;
	if (!s->poll_interval_s)
		s->poll_interval_s = 30;
	if (!s->task_timeout_s)
		s->task_timeout_s = 600;
	if (!s->max_jobs)
		s->max_jobs = 64;
	if (!s->verify_interval_ms)
		s->verify_interval_ms = 1000;
}
