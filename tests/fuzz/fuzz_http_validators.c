/* fuzz_http_validators — the conditional request headers a file answer
 * reads (ipxe/validators.c): If-None-Match, If-Modified-Since (an HTTP
 * date) and If-Range.
 *
 * The first byte chooses the header. Properties checked, not only "no
 * crash": a date that parses formats back (IMF-fixdate) to a date that
 * parses to the same second; an If-None-Match or If-Range that matches
 * holds the file's tag (or is "*", or the exact date). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ipxe/ipxe.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_VALIDATORS_MAX 4096

static const char etag[] = "\"803-1a2b-10000000-17d4a1b2c3d4e5f6\"";
static const int64_t mtime = 784111777; /* Sun, 06 Nov 1994 08:49:37 GMT */

static bool holds(const uint8_t *d, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(d + i, s, k) == 0)
			return true;
	return false;
}

static void date(const uint8_t *d, size_t n)
{
	int64_t t, t2;
	char out[IPXE_HTTP_DATE_MAX];
	if (ipxe_http_date_parse((const char *)d, n, &t) < 0)
		return;
	if (ipxe_http_date(t, out) < 0 || ipxe_http_date_parse(out, strlen(out), &t2) < 0 ||
	    t2 != t)
		abort();
}

static void none_match(const uint8_t *d, size_t n)
{
	if (ipxe_if_none_match((const char *)d, n, etag) == 1 && !holds(d, n, etag) &&
	    !holds(d, n, "*"))
		abort();
}

static void if_range(const uint8_t *d, size_t n)
{
	int64_t t;
	if (ipxe_if_range((const char *)d, n, etag, mtime) && !holds(d, n, etag) &&
	    !(ipxe_http_date_parse((const char *)d, n, &t) == 0 && t == mtime))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_VALIDATORS_MAX)
		return 0;
	switch (data[0] % 3) {
	case 0:
		date(data + 1, size - 1);
		break;
	case 1:
		none_match(data + 1, size - 1);
		break;
	default:
		if_range(data + 1, size - 1);
		break;
	}
	return 0;
}
