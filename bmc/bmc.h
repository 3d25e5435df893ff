/* bmc — the part's public header: BMC power and boot control. For now it
 * holds the settings the part will be configured with; the IPMI 2.0
 * RMCP+ codec and crypto (bmc/ipmi/) are private to the folder and are
 * driven by the tests directly. The session thread and the controllers
 * come later. */
#pragma once

#include <stddef.h>

/* What the BMC part is configured with (a placeholder: the daemon does not
 * read it yet). */
struct bmc_settings {
	unsigned cipher_suite; /* IPMI cipher suite: 3 or 17 */
	unsigned timeout_ms;   /* first retransmission timeout of a request */
	unsigned retries;      /* retransmissions before a request fails */
	unsigned max_sessions; /* sessions one thread keeps open */
};
