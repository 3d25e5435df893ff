/* provider — what the engines and the controllers share: the clock and
 * the names of failure reasons (bmc/provider.h). */
#include "config.h"

#include <time.h>

#include "bmc/provider.h"

uint64_t bmc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const char *const fail_names[BMC_FAIL_MAX] = {
	[BMC_FAIL_NONE] = "none",
	[BMC_FAIL_TIMEOUT] = "timeout",
	[BMC_FAIL_AUTH] = "auth",
	[BMC_FAIL_TLS] = "tls",
	[BMC_FAIL_NETWORK] = "network",
	[BMC_FAIL_PROTOCOL] = "protocol",
	[BMC_FAIL_REFUSED] = "refused",
	[BMC_FAIL_UNSUPPORTED] = "unsupported",
	[BMC_FAIL_CANCELED] = "canceled",
};

const char *bmc_fail_name(enum bmc_fail f)
{
	if ((unsigned)f >= BMC_FAIL_MAX)
		return "unknown";
	return fail_names[f];
}
