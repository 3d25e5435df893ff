/* jsonarr — the elements of a large JSON array, parsed one at a time.
 *
 * DESIGN: the outer array's punctuation ('[', ',', ']' and whitespace) is
 * read with the byte cursor; each element is parsed by json_loadb() with
 * JSON_DISABLE_EOF_CHECK, which stops after the element's closing '}' or
 * ']' and reports in json_error_t.position how many bytes it read. An
 * element must be an object or an array: jansson, without JSON_DECODE_ANY,
 * refuses a scalar there, and so does this walk (the caller's whole parse
 * then decides). Every turn of the loop consumes at least an element's
 * two bytes and a separator, so it ends within len. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/cursor.h"
#include "common/jsonarr.h"

static bool is_ws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Moves r past whitespace; returns the byte there, unread, or -1 at the
 * end. */
static int skip_ws(struct rd *r)
{
	uint8_t c;
	struct rd t = *r;
	while (rd_u8(&t, &c) == 0) {
		if (!is_ws(c))
			return c;
		*r = t;
	}
	return -1;
}

/* Parses the element at r's position and hands it to fn. */
static int one_element(struct rd *r, size_t flags, jsonarr_fn fn, size_t index, void *userdata)
{
	json_error_t je;
	const uint8_t *text;
	json_t *v = json_loadb((const char *)r->p, r->len, flags | JSON_DISABLE_EOF_CHECK, &je);
	if (!v)
		return -EBADMSG;
	size_t used = je.position > 0 ? (size_t)je.position : 0;
	int e = -EBADMSG;
	if ((json_is_object(v) || json_is_array(v)) && used >= 2 && rd_bytes(r, used, &text) == 0 &&
	    (text[used - 1] == '}' || text[used - 1] == ']'))
		e = fn(v, (const char *)text, used, index, userdata);
	json_decref(v);
	return e;
}

int jsonarr_each(const char *data, size_t len, size_t flags, jsonarr_fn fn, void *userdata)
{
	struct rd r = rd_init(data, len);
	uint8_t c;
	int e;

	if (skip_ws(&r) != '[')
		return -ENOMSG;
	(void)rd_u8(&r, &c);
	if (skip_ws(&r) == ']') {
		(void)rd_u8(&r, &c);
		goto tail;
	}
	for (size_t i = 0;; i++) {
		int b = skip_ws(&r);
		if (b != '{' && b != '[')
			return -EBADMSG;
		e = one_element(&r, flags, fn, i, userdata);
		if (e < 0)
			return e;
		b = skip_ws(&r);
		if (b != ',' && b != ']')
			return -EBADMSG;
		(void)rd_u8(&r, &c);
		if (b == ']')
			break;
	}
tail:
	/* Nothing but whitespace may follow. */
	return skip_ws(&r) < 0 ? 0 : -EBADMSG;
}
