/* fuzz_api_route — the admin API's request-target parsing: the input is a
 * request target "path?query"; the path goes through api_route_parse() (and,
 * when it names a route, its template and methods), the query through
 * api_query_parse(); the whole input also through the Content-Type and
 * host:port parsers. Each must survive anything and keep its bounds. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/net.h"
#include "daemon/api/api.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	const char *q = memchr(s, '?', size);
	size_t plen = q ? (size_t)(q - s) : size;
	struct api_route r;
	if (api_route_parse(s, plen, &r) == 0) {
		const char *t = api_route_template(&r);
		if (!t || t[0] != '/' || strlen(r.ns) > API_MAX_NAMESPACE ||
		    strlen(r.name) > API_MAX_NAME || api_route_methods(&r) == 0)
			abort();
	}
	if (q) {
		struct api_query aq;
		char err[256];
		api_query_init(&aq);
		if (api_query_parse(&aq, q + 1, size - plen - 1, err, sizeof(err)) == 0 &&
		    (strlen(aq.label_selector) > API_MAX_SELECTOR ||
		     aq.limit > API_EVENTS_LIMIT_MAX))
			abort();
	}
	char host[64];
	uint16_t port;
	api_content_type_parse(s);
	net_split_hostport(s, host, sizeof(host), &port);
	free(s);
	return 0;
}
