/* fuzz_agent_http — a Docker Engine response through ironbell-agent's
 * HTTP/1.1 parser: the head, then the body through the chunked decoder
 * when the head says chunked, fed in two pieces, then what it decoded
 * through the log stream's frame reader. Properties: the head lies
 * within the input; the decoded payload is never longer than what was
 * fed; no frame payload is longer than its input. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "tests/fuzz/fuzz.h"

static void count(void *arg, const uint8_t *p, size_t n)
{
	*(size_t *)arg += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_http_head h;
	struct agent_http_chunked c = { 0 };
	if (agent_http_head_parse(data, size, &h) < 0)
		return 0;
	if (h.head_len > size || h.status < 100 || h.status > 599)
		abort();
	size_t n = size - h.head_len, out;
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return 0;
	memcpy(b, data + h.head_len, n);
	size_t half = n / 2;
	int e = agent_http_chunked_feed(&c, b, half, &out);
	if (out > half)
		abort();
	if (e == 0) {
		e = agent_http_chunked_feed(&c, b + half, n - half, &out);
		if (out > n - half)
			abort();
	}
	struct agent_mux m = { .hdr_n = 0 };
	size_t total = 0;
	(void)agent_mux_feed(&m, b, half, count, &total);
	if (total > half)
		abort();
	free(b);
	return 0;
}
