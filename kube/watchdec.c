/* watchdec — the watch stream and the list answers of the Kubernetes API
 * server, decoded and checked before the watcher sees them.
 *
 * DESIGN: the API server is untrusted input like any peer. A watch answer
 * is a stream of lines, one JSON event each ({"type": "ADDED", "object":
 * {...}}, the Kubernetes API concepts' "Efficient detection of changes"),
 * arriving in pieces cut at any byte. The decoder walks each piece with a
 * byte cursor: a line found whole in the piece is parsed where it lies;
 * the bytes of an unfinished line are kept in a buffer capped at
 * KUBE_MAX_EVENT, so a server that never sends '\n' costs that much and
 * no more (-E2BIG as soon as the bound is passed, not at the newline).
 * jansson parses each line (json_loadb, duplicate keys refused: two
 * "resourceVersion"s in one object are a server that lies); its parser is
 * recursive but stops at JSON_PARSER_MAX_DEPTH (2048 in jansson 2.14, a
 * compile-time bound of the library), which bounds the stack. Every field
 * the watcher relies on is checked here, once: the type exactly as the
 * API spells it, the resourceVersion (printable ASCII, at most
 * KUBE_MAX_RV, as it goes back into a query), the name and namespace
 * (the characters of a DNS subdomain, as they go into paths and the
 * store's keys), and the apiVersion and kind, so that a Template never
 * lands where a Hardware is expected. A list page is checked the same way
 * item by item; its items lack apiVersion and kind on real servers, so
 * they are filled in. Errors name the line or item and quote what the
 * server sent, cut short and with control characters made '?', so that
 * they can go to a log line or an event as they are. Pure: no I/O, no
 * logging, for the unit test and the fuzz target. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/cursor.h"
#include "common/utf8.h"
#include "kube/kube-internal.h"

#define WATCHDEC_MAX_NAME 253           /* metadata.name, .namespace: a DNS subdomain */
#define WATCHDEC_QUOTE_MAX 64           /* bytes of a server's string quoted in err */
#define WATCHDEC_KEEP_ALLOC (64 * 1024) /* a line buffer larger is freed after its line */
#define WATCHDEC_WHERE_MAX 48           /* "watch line N", "list: items[N]" */

/* What an object must carry, by where it comes from. */
enum obj_mode {
	OBJ_EVENT,    /* ADDED, MODIFIED, DELETED: all of it */
	OBJ_BOOKMARK, /* metadata.resourceVersion; apiVersion, kind if present */
	OBJ_ITEM,     /* a list's item: apiVersion and kind filled in if absent */
};

/* The fields of a checked object, borrowed from it. */
struct obj_info {
	const char *rv, *namespace_, *name;
};

static const char *const type_names[] = {
	[KUBE_EVENT_ADDED] = "ADDED",     [KUBE_EVENT_MODIFIED] = "MODIFIED",
	[KUBE_EVENT_DELETED] = "DELETED", [KUBE_EVENT_BOOKMARK] = "BOOKMARK",
	[KUBE_EVENT_ERROR] = "ERROR",
};
#define N_TYPES (sizeof(type_names) / sizeof(type_names[0]))

/* Writes "where: <fmt>" to err and returns -EBADMSG. */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, const char *where,
						      const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!errlen)
		return -EBADMSG;
	n = snprintf(err, errlen, "%s: ", where);
	if (n < 0 || (size_t)n >= errlen)
		return -EBADMSG;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* A server's string, for an error message: at most WATCHDEC_QUOTE_MAX
 * bytes of valid UTF-8 without control characters. */
static const char *quote(char out[WATCHDEC_QUOTE_MAX + 1], const char *s, size_t n)
{
	utf8_sanitize(s, n, out, WATCHDEC_QUOTE_MAX, UTF8_CONTROLS_QMARK, NULL);
	return out;
}

static bool str_eq(const json_t *v, const char *s)
{
	size_t n = strlen(s);

	return json_is_string(v) && json_string_length(v) == n &&
	       memcmp(json_string_value(v), s, n) == 0;
}

static bool rv_char(unsigned char c)
{
	return c > ' ' && c < 0x7f;
}

static bool name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* o[key] (named field in messages) as a string of 1 to max bytes, each
 * accepted by ok(). 0 with *ret borrowed from o, or -EBADMSG. */
static int get_str(const json_t *o, const char *key, const char *field, size_t max,
		   bool (*ok)(unsigned char), const char **ret, const char *where, char *err,
		   size_t errlen)
{
	const json_t *v = json_object_get(o, key);
	char q[WATCHDEC_QUOTE_MAX + 1];

	if (!v)
		return fail(err, errlen, where, "%s missing", field);
	if (!json_is_string(v))
		return fail(err, errlen, where, "%s is not a string", field);
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n == 0)
		return fail(err, errlen, where, "%s is empty", field);
	if (n > max)
		return fail(err, errlen, where, "%s is longer than %zu characters", field, max);
	for (size_t i = 0; i < n; i++)
		if (!ok((unsigned char)s[i]))
			return fail(err, errlen, where, "%s '%s' has a character not allowed",
				    field, quote(q, s, n));
	*ret = s;
	return 0;
}

/* The object's apiVersion and kind against the expected ones; in
 * OBJ_EVENT mode they must be there, in OBJ_ITEM mode they are filled in
 * when absent. */
static int check_type(json_t *obj, enum obj_mode mode, const char *api_version, const char *kind,
		      const char *where, char *err, size_t errlen)
{
	json_t *av = json_object_get(obj, "apiVersion"), *k = json_object_get(obj, "kind");
	char qa[WATCHDEC_QUOTE_MAX + 1], qk[WATCHDEC_QUOTE_MAX + 1];

	if (mode == OBJ_EVENT && !av)
		return fail(err, errlen, where, "apiVersion missing");
	if (mode == OBJ_EVENT && !k)
		return fail(err, errlen, where, "kind missing");
	if (av && !json_is_string(av))
		return fail(err, errlen, where, "apiVersion is not a string");
	if (k && !json_is_string(k))
		return fail(err, errlen, where, "kind is not a string");
	bool av_ok = !av || str_eq(av, api_version), k_ok = !k || str_eq(k, kind);
	if (!av_ok || !k_ok) {
		quote(qa, av ? json_string_value(av) : api_version,
		      av ? json_string_length(av) : strlen(api_version));
		quote(qk, k ? json_string_value(k) : kind,
		      k ? json_string_length(k) : strlen(kind));
		if (av_ok)
			return fail(err, errlen, where, "object is %s %s, not %s", qa, qk, kind);
		return fail(err, errlen, where, "object is %s %s, not %s %s", qa, qk, api_version,
			    kind);
	}
	if (mode != OBJ_ITEM)
		return 0;
	if ((!av && json_object_set_new(obj, "apiVersion", json_string(api_version)) < 0) ||
	    (!k && json_object_set_new(obj, "kind", json_string(kind)) < 0)) {
		snprintf(err, errlen, "%s: out of memory", where);
		return -ENOMEM;
	}
	return 0;
}

/* Checks an event's object or a list's item (see kube-internal.h); on
 * success *ret holds its name, namespace and resourceVersion ("" for a
 * BOOKMARK's name and namespace). */
static int check_object(json_t *obj, enum obj_mode mode, const char *api_version, const char *kind,
			struct obj_info *ret, const char *where, char *err, size_t errlen)
{
	struct obj_info info = { .rv = "", .namespace_ = "", .name = "" };
	int e;

	if (!json_is_object(obj))
		return fail(err, errlen, where, "%s a JSON object",
			    mode == OBJ_ITEM ? "not" : "object is not");
	const json_t *md = json_object_get(obj, "metadata");
	if (!md)
		return fail(err, errlen, where, "metadata missing");
	if (!json_is_object(md))
		return fail(err, errlen, where, "metadata is not a JSON object");
	if (mode != OBJ_BOOKMARK) {
		e = get_str(md, "name", "metadata.name", WATCHDEC_MAX_NAME, name_char, &info.name,
			    where, err, errlen);
		if (e < 0)
			return e;
		e = get_str(md, "namespace", "metadata.namespace", WATCHDEC_MAX_NAME, name_char,
			    &info.namespace_, where, err, errlen);
		if (e < 0)
			return e;
	}
	e = get_str(md, "resourceVersion", "metadata.resourceVersion", KUBE_MAX_RV, rv_char,
		    &info.rv, where, err, errlen);
	if (e < 0)
		return e;
	e = check_type(obj, mode, api_version, kind, where, err, errlen);
	if (e < 0)
		return e;
	*ret = info;
	return 0;
}

/* "not JSON: <jansson's reason>", the reason's quote of the input made
 * printable. */
static int not_json(const json_error_t *je, const char *where, char *err, size_t errlen)
{
	char text[sizeof(je->text)];

	utf8_sanitize(je->text, strnlen(je->text, sizeof(je->text)), text, sizeof(text) - 1,
		      UTF8_CONTROLS_QMARK, NULL);
	return fail(err, errlen, where, "not JSON: %s", text);
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* The event's type: 0 with *ret, or -EBADMSG. */
static int event_type(const json_t *ev, enum kube_event_type *ret, const char *where, char *err,
		      size_t errlen)
{
	const json_t *t = json_object_get(ev, "type");
	char q[WATCHDEC_QUOTE_MAX + 1];

	if (!t)
		return fail(err, errlen, where, "type missing");
	if (!json_is_string(t))
		return fail(err, errlen, where, "type is not a string");
	for (size_t i = 0; i < N_TYPES; i++) {
		if (str_eq(t, type_names[i])) {
			*ret = (enum kube_event_type)i;
			return 0;
		}
	}
	return fail(err, errlen, where, "type '%s' unknown",
		    quote(q, json_string_value(t), json_string_length(t)));
}

/* An ERROR's Status: its code (0 unless an integer 0..999) and its
 * message, made fit for a log line in msg. */
static void error_status(const json_t *status, struct kube_event *ev,
			 char msg[KUBE_MAX_STATUS_MESSAGE + 1])
{
	const json_t *c = json_object_get(status, "code"), *m = json_object_get(status, "message");

	msg[0] = '\0';
	if (json_is_integer(c) && json_integer_value(c) >= 0 && json_integer_value(c) <= 999)
		ev->code = (int)json_integer_value(c);
	if (json_is_string(m))
		utf8_sanitize(json_string_value(m), json_string_length(m), msg,
			      KUBE_MAX_STATUS_MESSAGE, UTF8_CONTROLS_QMARK, NULL);
	ev->message = msg;
}

/* One complete line (without its '\n'): skipped when blank, else parsed,
 * checked and given to fn. */
static int decode_line(struct kube_watchdec *d, const char *p, size_t n, kube_event_fn fn,
		       void *userdata, char *err, size_t errlen)
{
	char where[WATCHDEC_WHERE_MAX], msg[KUBE_MAX_STATUS_MESSAGE + 1];
	struct kube_event ev = { .rv = "", .namespace_ = "", .name = "", .message = "" };
	struct obj_info info;
	json_error_t je;
	json_t *root = NULL;
	size_t i;
	int e;

	/* Blank lines are skipped; the '\r' of a "\r\n" line is JSON
	 * whitespace (RFC 8259 §2), which jansson skips. */
	for (i = 0; i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'); i++)
		;
	if (i == n)
		return 0;
	snprintf(where, sizeof(where), "watch line %" PRIu64, d->lines);
	root = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return not_json(&je, where, err, errlen);
	if (!json_is_object(root)) {
		e = fail(err, errlen, where, "not a JSON object but %s", json_kind(root));
		goto out;
	}
	e = event_type(root, &ev.type, where, err, errlen);
	if (e < 0)
		goto out;
	ev.object = json_object_get(root, "object");
	if (!ev.object) {
		e = fail(err, errlen, where, "object missing");
		goto out;
	}
	if (ev.type == KUBE_EVENT_ERROR) {
		if (!json_is_object(ev.object)) {
			e = fail(err, errlen, where, "object is not a JSON object");
			goto out;
		}
		error_status(ev.object, &ev, msg);
	} else {
		e = check_object(ev.object,
				 ev.type == KUBE_EVENT_BOOKMARK ? OBJ_BOOKMARK : OBJ_EVENT,
				 d->api_version, d->kind, &info, where, err, errlen);
		if (e < 0)
			goto out;
		ev.rv = info.rv;
		ev.namespace_ = info.namespace_;
		ev.name = info.name;
	}
	e = fn(&ev, userdata);
	if (e < 0)
		snprintf(err, errlen, "%s: %s event not taken: %s", where, type_names[ev.type],
			 strerror(-e));
	else
		e = 0;
out:
	json_decref(root);
	return e;
}

void kube_watchdec_init(struct kube_watchdec *d, const char *api_version, const char *kind)
{
	*d = (struct kube_watchdec){ .api_version = api_version, .kind = kind };
	/* The buffer holds a line without its '\n'. */
	buf_init(&d->line, KUBE_MAX_EVENT - 1);
}

void kube_watchdec_free(struct kube_watchdec *d)
{
	if (!d)
		return;
	buf_free(&d->line);
}

bool kube_watchdec_partial(const struct kube_watchdec *d)
{
	return d->line.len > 0;
}

/* Empties the line buffer after a line, giving back a large allocation
 * (one 16 MiB event must not stay resident per watch). */
static void line_done(struct kube_watchdec *d)
{
	if (d->line.alloc > WATCHDEC_KEEP_ALLOC) {
		size_t max = d->line.max;
		buf_free(&d->line);
		buf_init(&d->line, max);
	} else {
		buf_reset(&d->line);
	}
}

static int too_long(uint64_t line, char *err, size_t errlen)
{
	snprintf(err, errlen, "watch line %" PRIu64 ": longer than %u bytes", line, KUBE_MAX_EVENT);
	return -E2BIG;
}

/* Adds n bytes to the unfinished line: 0, -E2BIG past the bound, -ENOMEM. */
static int line_add(struct kube_watchdec *d, const uint8_t *p, size_t n, char *err, size_t errlen)
{
	int e = buf_append(&d->line, p, n);

	if (e == -E2BIG)
		return too_long(d->lines + 1, err, errlen);
	if (e < 0)
		snprintf(err, errlen, "watch line %" PRIu64 ": out of memory", d->lines + 1);
	return e;
}

int kube_watchdec_feed(struct kube_watchdec *d, const char *data, size_t len, kube_event_fn fn,
		       void *userdata, char *err, size_t errlen)
{
	struct rd r = rd_init(data, len);
	const uint8_t *seg = NULL, *nl;
	int e = 0;

	if (d->error) {
		snprintf(err, errlen, "watch line %" PRIu64 ": the stream stopped at an error",
			 d->lines);
		return d->error;
	}
	while (r.len > 0) {
		nl = memchr(r.p, '\n', r.len);
		if (!nl) {
			size_t n = r.len;
			rd_bytes(&r, n, &seg);
			e = line_add(d, seg, n, err, errlen);
			break;
		}
		size_t n = (size_t)(nl - r.p);
		rd_bytes(&r, n + 1, &seg); /* the line and its '\n' */
		if (d->line.len > 0) {
			e = line_add(d, seg, n, err, errlen);
			if (e < 0)
				break;
			d->lines++;
			e = decode_line(d, d->line.data, d->line.len, fn, userdata, err, errlen);
			line_done(d);
		} else if (n > d->line.max) {
			e = too_long(d->lines + 1, err, errlen);
		} else {
			d->lines++;
			e = decode_line(d, (const char *)seg, n, fn, userdata, err, errlen);
		}
		if (e < 0)
			break;
	}
	if (e < 0) {
		d->error = e;
		line_done(d);
	}
	return e;
}

/* A list page's own apiVersion and kind ("<Kind>List"), when present. */
static int check_list_type(const json_t *doc, const char *api_version, const char *kind, char *err,
			   size_t errlen)
{
	const json_t *av = json_object_get(doc, "apiVersion"), *k = json_object_get(doc, "kind");
	char list_kind[128], qa[WATCHDEC_QUOTE_MAX + 1], qk[WATCHDEC_QUOTE_MAX + 1];

	snprintf(list_kind, sizeof(list_kind), "%sList", kind);
	if ((!av || str_eq(av, api_version)) && (!k || str_eq(k, list_kind)))
		return 0;
	if (av && !json_is_string(av))
		return fail(err, errlen, "list", "apiVersion is not a string");
	if (k && !json_is_string(k))
		return fail(err, errlen, "list", "kind is not a string");
	quote(qa, av ? json_string_value(av) : api_version,
	      av ? json_string_length(av) : strlen(api_version));
	quote(qk, k ? json_string_value(k) : list_kind,
	      k ? json_string_length(k) : strlen(list_kind));
	return fail(err, errlen, "list", "answer is %s %s, not %s %s", qa, qk, api_version,
		    list_kind);
}

/* metadata.resourceVersion and .continue of a list page, both optional;
 * borrowed from doc, "" when absent. */
static int list_meta(const json_t *doc, const char **ret_rv, const char **ret_cont, char *err,
		     size_t errlen)
{
	const json_t *md = json_object_get(doc, "metadata");
	int e;

	*ret_rv = *ret_cont = "";
	if (!md)
		return 0;
	if (!json_is_object(md))
		return fail(err, errlen, "list", "metadata is not a JSON object");
	if (json_object_get(md, "resourceVersion")) {
		e = get_str(md, "resourceVersion", "metadata.resourceVersion", KUBE_MAX_RV, rv_char,
			    ret_rv, "list", err, errlen);
		if (e < 0)
			return e;
	}
	const json_t *c = json_object_get(md, "continue");
	if (c && !(json_is_string(c) && json_string_length(c) == 0)) {
		e = get_str(md, "continue", "metadata.continue", KUBE_MAX_CONTINUE, rv_char,
			    ret_cont, "list", err, errlen);
		if (e < 0)
			return e;
	}
	return 0;
}

int kube_list_parse(const char *data, size_t len, const char *api_version, const char *kind,
		    json_t **ret_items, char rv[KUBE_MAX_RV + 1], char cont[KUBE_MAX_CONTINUE + 1],
		    char *err, size_t errlen)
{
	char where[WATCHDEC_WHERE_MAX];
	const char *list_rv, *list_cont;
	struct obj_info info;
	json_error_t je;
	json_t *doc, *items;
	int e;

	doc = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return not_json(&je, "list", err, errlen);
	if (!json_is_object(doc)) {
		e = fail(err, errlen, "list", "not a JSON object but %s", json_kind(doc));
		goto out;
	}
	e = check_list_type(doc, api_version, kind, err, errlen);
	if (e < 0)
		goto out;
	e = list_meta(doc, &list_rv, &list_cont, err, errlen);
	if (e < 0)
		goto out;
	items = json_object_get(doc, "items");
	if (!items) {
		e = fail(err, errlen, "list", "items missing");
		goto out;
	}
	if (json_is_null(items)) {
		/* Go encodes a nil slice as null. */
		items = json_array();
		if (!items || json_object_set_new(doc, "items", items) < 0) {
			snprintf(err, errlen, "list: out of memory");
			e = -ENOMEM;
			goto out;
		}
	}
	if (!json_is_array(items)) {
		e = fail(err, errlen, "list", "items is not a JSON array");
		goto out;
	}
	for (size_t i = 0; i < json_array_size(items); i++) {
		snprintf(where, sizeof(where), "list: items[%zu]", i);
		e = check_object(json_array_get(items, i), OBJ_ITEM, api_version, kind, &info,
				 where, err, errlen);
		if (e < 0)
			goto out;
	}
	memcpy(rv, list_rv, strlen(list_rv) + 1);
	memcpy(cont, list_cont, strlen(list_cont) + 1);
	*ret_items = json_incref(items);
	e = 0;
out:
	json_decref(doc);
	return e;
}
