/* follow-api — the Kea hook's follower of ironbelld's admin API: not yet
 * written; the thread logs that the source is not available and ends. */
#include "config.h"

#include "dhcp/kea/kea-internal.h"

void *ibkea_follow_api(void *arg)
{
	struct ibkea *k = arg;

	ibkea_log(k, IBKEA_LOG_ERROR, "source \"api\": not available in this build");
	return NULL;
}
