/* watchline — the admin API's answers to the Kea hook's "api" follower,
 * decoded and checked before the follower touches the table.
 *
 * DESIGN: ironbelld is a trusted peer, but the bytes come over a network,
 * so they are checked as any peer's are. A watch is a stream of lines,
 * one JSON event each ({"type": "ADDED", "object": {...}}, as
 * daemon/api/watch.c writes them); the follower cuts the stream into
 * lines (follow-api.c) and hands each here. The length is checked first
 * (a line over its bound is refused unparsed), then jansson parses it
 * (duplicate keys refused: an object with two resourceVersions is a
 * lie; its recursion is bounded by JSON_PARSER_MAX_DEPTH). Every field
 * the follower relies on is checked here, once: the type as the API
 * spells it, the object a JSON object, the resourceVersion a decimal
 * number (it goes back into the next watch's query), the name and
 * namespace (the table's key) non-empty and bounded, the kind Hardware
 * when it is said. An ERROR's Status keeps its code (410: the change log
 * no longer holds the resume point, list again) and its message,
 * sanitized, for the log. A list answer is checked the same way: an
 * object with metadata.resourceVersion and an array of objects, with
 * the number of items bounded. Errors quote at most a few bytes of what
 * came, with control characters made '?', so that they can go to a log
 * line as they are. Pure: no I/O, no logging, for the unit test and the
 * fuzz target. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/num.h"
#include "common/utf8.h"
#include "dhcp/kea/kea-internal.h"

#define WATCHLINE_QUOTE_MAX 48 /* bytes of the peer's text quoted in err */
#define WATCHLINE_MAX_RV 20    /* digits of a resourceVersion (a uint64) */

static const char *const type_names[IBKEA_WATCH_MAX] = {
	[IBKEA_WATCH_ADDED] = "ADDED",     [IBKEA_WATCH_MODIFIED] = "MODIFIED",
	[IBKEA_WATCH_DELETED] = "DELETED", [IBKEA_WATCH_BOOKMARK] = "BOOKMARK",
	[IBKEA_WATCH_ERROR] = "ERROR",
};

/* Writes the message to err and returns e. */
__attribute__((format(printf, 4, 5))) static int fail(int e, char *err, size_t errlen,
						      const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return e;
}

/* The peer's text, for a message: at most WATCHLINE_QUOTE_MAX bytes. */
static const char *quote(char out[WATCHLINE_QUOTE_MAX + 1], const char *s, size_t n)
{
	utf8_sanitize(s, n, out, WATCHLINE_QUOTE_MAX, UTF8_CONTROLS_QMARK, NULL);
	return out;
}

/* md[key] as a string of 1 to max bytes: 0 with *ret borrowed, or
 * -EBADMSG. */
static int get_name(const json_t *md, const char *key, const char **ret, char *err, size_t errlen)
{
	const json_t *v = json_object_get(md, key);

	if (!json_is_string(v))
		return fail(-EBADMSG, err, errlen, "metadata.%s %s", key,
			    v ? "is not a string" : "missing");
	size_t n = json_string_length(v);
	if (n == 0 || n > IBKEA_API_MAX_NAME)
		return fail(-EBADMSG, err, errlen, "metadata.%s is empty or longer than %d bytes",
			    key, IBKEA_API_MAX_NAME);
	if (strlen(json_string_value(v)) != n)
		return fail(-EBADMSG, err, errlen, "metadata.%s holds a NUL", key);
	*ret = json_string_value(v);
	return 0;
}

/* md.resourceVersion: a decimal string (ironbelld's form) or a positive
 * integer. 0 with *ret > 0, or -EBADMSG. */
static int get_rv(const json_t *md, const char *where, uint64_t *ret, char *err, size_t errlen)
{
	const json_t *v = json_object_get(md, "resourceVersion");
	char q[WATCHLINE_QUOTE_MAX + 1];
	uint64_t u = 0;

	if (json_is_integer(v) && json_integer_value(v) > 0) {
		*ret = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return fail(-EBADMSG, err, errlen, "%s.resourceVersion %s", where,
			    v ? "is not a string" : "missing");
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n == 0 || n > WATCHLINE_MAX_RV || num_parse_u64(s, n, UINT64_MAX, &u) < 0 || u == 0)
		return fail(-EBADMSG, err, errlen, "%s.resourceVersion '%s' is not a number", where,
			    quote(q, s, n));
	*ret = u;
	return 0;
}

/* Checks a Hardware of an ADDED, MODIFIED or DELETED event into *ev. */
static int check_hardware(json_t *obj, struct ibkea_watch_event *ev, char *err, size_t errlen)
{
	const json_t *md = json_object_get(obj, "metadata"), *kind = json_object_get(obj, "kind");
	char q[WATCHLINE_QUOTE_MAX + 1];
	int e;

	if (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "Hardware") != 0))
		return fail(-EBADMSG, err, errlen, "object is a %s, not a Hardware",
			    json_is_string(kind) ?
				    quote(q, json_string_value(kind), json_string_length(kind)) :
				    "kind that is not a string");
	if (!json_is_object(md))
		return fail(-EBADMSG, err, errlen, "object.metadata %s",
			    md ? "is not a JSON object" : "missing");
	if ((e = get_name(md, "namespace", &ev->namespace_, err, errlen)) < 0 ||
	    (e = get_name(md, "name", &ev->name, err, errlen)) < 0)
		return e;
	return get_rv(md, "object.metadata", &ev->rv, err, errlen);
}

/* Reads an ERROR's Status into *ev: its code and message, both optional
 * (a server that sends neither still ends the watch with an error). */
static int check_status(const json_t *obj, struct ibkea_watch_event *ev, char *err, size_t errlen)
{
	const json_t *code = json_object_get(obj, "code"), *msg = json_object_get(obj, "message");

	if (code) {
		if (!json_is_integer(code) || json_integer_value(code) < 0 ||
		    json_integer_value(code) > 999)
			return fail(-EBADMSG, err, errlen, "ERROR: code is not an HTTP status");
		ev->code = (int)json_integer_value(code);
	}
	if (msg && !json_is_string(msg))
		return fail(-EBADMSG, err, errlen, "ERROR: message is not a string");
	if (msg)
		utf8_sanitize(json_string_value(msg), json_string_length(msg), ev->message,
			      IBKEA_API_MAX_MESSAGE, UTF8_CONTROLS_QMARK, NULL);
	return 0;
}

int ibkea_watch_line(const char *line, size_t len, size_t max, struct ibkea_watch_event *ret,
		     char *err, size_t errlen)
{
	struct ibkea_watch_event ev = { .namespace_ = "", .name = "" };
	char q[WATCHLINE_QUOTE_MAX + 1];
	json_error_t je;
	json_t *root = NULL, *obj;
	const json_t *type;
	int e = -EBADMSG;

	if (len > max)
		return fail(-E2BIG, err, errlen, "a watch line longer than %zu bytes", max);
	if (len && line[len - 1] == '\r')
		len--;
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		e = fail(-EBADMSG, err, errlen, "not JSON: %s at column %d", je.text, je.column);
		goto out;
	}
	if (!json_is_object(root)) {
		e = fail(-EBADMSG, err, errlen, "not a JSON object");
		goto out;
	}
	type = json_object_get(root, "type");
	if (!json_is_string(type)) {
		e = fail(-EBADMSG, err, errlen, "type %s", type ? "is not a string" : "missing");
		goto out;
	}
	for (ev.type = 0; ev.type < IBKEA_WATCH_MAX; ev.type++)
		if (strcmp(json_string_value(type), type_names[ev.type]) == 0 &&
		    json_string_length(type) == strlen(type_names[ev.type]))
			break;
	if (ev.type == IBKEA_WATCH_MAX) {
		e = fail(-EBADMSG, err, errlen, "unknown type '%s'",
			 quote(q, json_string_value(type), json_string_length(type)));
		goto out;
	}
	obj = json_object_get(root, "object");
	if (!json_is_object(obj)) {
		e = fail(-EBADMSG, err, errlen, "%s: object %s", type_names[ev.type],
			 obj ? "is not a JSON object" : "missing");
		goto out;
	}
	if (ev.type == IBKEA_WATCH_ERROR)
		e = check_status(obj, &ev, err, errlen);
	else if (ev.type == IBKEA_WATCH_BOOKMARK)
		e = get_rv(json_object_get(obj, "metadata"), "BOOKMARK: metadata", &ev.rv, err,
			   errlen);
	else
		e = check_hardware(obj, &ev, err, errlen);
	if (e < 0)
		goto out;
	ev.object = json_incref(obj);
	*ret = ev;
out:
	json_decref(root);
	return e;
}

void ibkea_watch_event_clear(struct ibkea_watch_event *ev)
{
	if (!ev)
		return;
	json_decref(ev->object);
	*ev = (struct ibkea_watch_event){ .namespace_ = "", .name = "" };
}

int ibkea_list_parse(const char *body, size_t len, size_t max, size_t max_items, json_t **ret_items,
		     uint64_t *ret_rv, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = NULL, *items, *it;
	uint64_t rv = 0;
	size_t i;
	int e;

	if (len > max)
		return fail(-E2BIG, err, errlen, "a list answer longer than %zu bytes", max);
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(root)) {
		e = root ? fail(-EBADMSG, err, errlen, "the list is not a JSON object") :
			   fail(-EBADMSG, err, errlen, "the list is not JSON: %s at line %d",
				je.text, je.line);
		goto out;
	}
	if ((e = get_rv(json_object_get(root, "metadata"), "list: metadata", &rv, err, errlen)) < 0)
		goto out;
	items = json_object_get(root, "items");
	if (!json_is_array(items)) {
		e = fail(-EBADMSG, err, errlen, "list: items %s",
			 items ? "is not an array" : "missing");
		goto out;
	}
	if (json_array_size(items) > max_items) {
		e = fail(-E2BIG, err, errlen, "list: more than %zu items", max_items);
		goto out;
	}
	json_array_foreach (items, i, it)
		if (!json_is_object(it)) {
			e = fail(-EBADMSG, err, errlen, "list: items[%zu] is not a JSON object", i);
			goto out;
		}
	*ret_items = json_incref(items);
	*ret_rv = rv;
	e = 0;
out:
	json_decref(root);
	return e;
}
