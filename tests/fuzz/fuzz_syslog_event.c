/* fuzz_syslog_event — the path from a syslog datagram to the JSON of its
 * event. The first two bytes choose syslog.max_message (480..65535, as the
 * configuration allows); the rest is the datagram (untrusted: anyone can
 * send to UDP 514). It is parsed and its event message built as the server
 * builds it (syslog_event_text). Properties: jansson takes the message
 * (json_stringn does not fail), which is within its bound, holds no NUL,
 * and which the store keeps as it is (already valid UTF-8, not past
 * STORE_MAX_EVENT_MESSAGE). The raw datagram through the repair alone, with
 * a small bound, gives valid UTF-8 within that bound too. */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "store/store.h"
#include "syslog/syslog-codec.h"
#include "tests/fuzz/fuzz.h"

#define MAX_MESSAGE_MIN 480 /* syslog.max_message's range */
#define MAX_MESSAGE_MAX 65535

static void must_be_json(const char *p, size_t n)
{
	json_t *j = json_stringn(p, n);
	if (!j)
		abort();
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syslog_msg m;
	enum syslog_bad why;
	char small[65];
	bool cut;

	if (size < 2 || size - 2 > SYSLOG_DATAGRAM_MAX)
		return 0;
	size_t max = MAX_MESSAGE_MIN +
		     (size_t)(data[0] << 8 | data[1]) % (MAX_MESSAGE_MAX - MAX_MESSAGE_MIN + 1);
	const uint8_t *d = data + 2;
	size_t n = size - 2;

	size_t k = utf8_sanitize(d, n, small, data[0] % sizeof(small), 0, &cut);
	if (k > data[0] % sizeof(small) || small[k] != '\0' || !utf8_valid(small, k))
		abort();
	must_be_json(small, k);

	if (syslog_parse(d, n, &m, &why) < 0)
		return 0;
	char *out = malloc(SYSLOG_EVENT_PREFIX_MAX + max + 1);
	if (!out)
		return 0;
	k = syslog_event_text(&m, out, max, &cut);
	if (k > SYSLOG_EVENT_PREFIX_MAX + max || strlen(out) != k || k > STORE_MAX_EVENT_MESSAGE ||
	    utf8_sanitized_len(out, k, 0) != k)
		abort();
	must_be_json(out, k);
	free(out);
	return 0;
}
