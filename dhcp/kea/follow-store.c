/* follow-store — the Kea hook's follower of ironbelld's store. Skeleton:
 * the thread logs that it cannot read the store yet, and ends. */
#include "config.h"

#include "dhcp/kea/kea-internal.h"

void *ibkea_follow_store(void *arg)
{
	struct ibkea *k = arg;

	ibkea_log(k, IBKEA_LOG_ERROR, "source \"store\": not available in this build yet");
	return NULL;
}
