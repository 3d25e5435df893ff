/* fuzz_kea_watch — the decoder of the admin API's answers to the Kea
 * hook's "api" follower (dhcp/kea/watchline.c). The input is cut at each
 * '\n' and every piece decoded as a watch line, with a small byte cap
 * (the first byte of the input sets it) and with the follower's own;
 * the whole input is also read as a list answer. Every event given must
 * carry fields within their bounds. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dhcp/kea/kea-internal.h"
#include "tests/fuzz/fuzz.h"

static void check_event(const struct ibkea_watch_event *ev)
{
	if ((unsigned)ev->type >= IBKEA_WATCH_MAX || !json_is_object(ev->object) ||
	    strlen(ev->namespace_) > IBKEA_API_MAX_NAME || strlen(ev->name) > IBKEA_API_MAX_NAME ||
	    strlen(ev->message) > IBKEA_API_MAX_MESSAGE)
		abort();
	if (ev->type != IBKEA_WATCH_ERROR && ev->rv == 0)
		abort();
	if (ev->type <= IBKEA_WATCH_DELETED && (!*ev->name || !*ev->namespace_))
		abort();
}

static void line(const char *p, size_t n, size_t cap)
{
	struct ibkea_watch_event ev;
	char err[128];

	err[0] = '\0';
	if (ibkea_watch_line(p, n, cap, &ev, err, sizeof(err)) == 0) {
		if (n > cap)
			abort();
		check_event(&ev);
		ibkea_watch_event_clear(&ev);
	} else if (!err[0] || strlen(err) >= sizeof(err)) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *items = NULL;
	uint64_t rv = 0;
	char err[128];

	if (size < 1)
		return 0;
	const char *p = (const char *)data + 1;
	size_t n = size - 1, cap = (size_t)data[0] * 16, off = 0;

	while (off <= n) {
		const char *nl = memchr(p + off, '\n', n - off);
		size_t len = nl ? (size_t)(nl - (p + off)) : n - off;
		line(p + off, len, cap);
		line(p + off, len, IBKEA_API_MAX_LINE);
		off += len + 1;
	}
	if (ibkea_list_parse(p, n, IBKEA_API_MAX_LINE, 64, &items, &rv, err, sizeof(err)) == 0) {
		if (!json_is_array(items) || json_array_size(items) > 64 || rv == 0)
			abort();
		json_decref(items);
	}
	return 0;
}
