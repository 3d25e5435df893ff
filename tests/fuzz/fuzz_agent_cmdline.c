/* fuzz_agent_cmdline — the kernel command line (untrusted: a boot loader
 * or a served iPXE script writes it) through ironbell-agent's parser.
 * Properties: on success every value is NUL-terminated within its buffer
 * and holds no control byte; the booleans are -1, 0 or 1. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "tests/fuzz/fuzz.h"

static void clean(const char *v)
{
	size_t n = strnlen(v, AGENT_CMDLINE_VALUE_MAX + 1);
	if (n > AGENT_CMDLINE_VALUE_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_cmdline c;
	if (agent_cmdline_parse((const char *)data, size, &c) < 0)
		return 0;
	clean(c.worker_id);
	clean(c.grpc_authority);
	clean(c.syslog_host);
	if (c.tls < -1 || c.tls > 1 || c.insecure_tls < -1 || c.insecure_tls > 1)
		abort();
	return 0;
}
