/* check_kea_watch — the decoder of the admin API's answers to the Kea
 * hook's "api" follower (dhcp/kea/watchline.c): the lines ironbelld's
 * watch sends (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR with and without
 * a code), a CR before the newline, a table of malformed lines with the
 * error each gives (not JSON, not an object, no type, an unknown type,
 * an object that is not an object, bad metadata, a resourceVersion that
 * is not a number, duplicate keys, another kind), a line over the byte
 * cap refused before it is parsed, and list answers good and malformed,
 * with the cap on items. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dhcp/kea/kea-internal.h"
#include "tests/unit/unit.h"

#define HW(ns, name, rv)                                                                   \
	"{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Hardware\",\"metadata\":{" \
	"\"name\":\"" name "\",\"namespace\":\"" ns "\",\"resourceVersion\":\"" rv         \
	"\"},\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"02:00:00:00:00:01\"}}]}}"
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}"

static int decode(const char *line, struct ibkea_watch_event *ev, char *err, size_t errlen)
{
	return ibkea_watch_line(line, strlen(line), IBKEA_API_MAX_LINE, ev, err, errlen);
}

START_TEST(test_events)
{
	static const struct {
		const char *line;
		enum ibkea_watch_type type;
		uint64_t rv;
		const char *ns, *name;
	} cases[] = {
		{ EV("ADDED", HW("default", "m1", "12")), IBKEA_WATCH_ADDED, 12, "default", "m1" },
		{ EV("MODIFIED", HW("lab", "m-2.x", "13")), IBKEA_WATCH_MODIFIED, 13, "lab",
		  "m-2.x" },
		{ EV("DELETED", HW("default", "m1", "18446744073709551615")), IBKEA_WATCH_DELETED,
		  UINT64_MAX, "default", "m1" },
		{ EV("BOOKMARK", "{\"metadata\":{\"resourceVersion\":\"40\"}}"),
		  IBKEA_WATCH_BOOKMARK, 40, "", "" },
		{ EV("BOOKMARK", "{\"kind\":\"Hardware\",\"metadata\":{\"resourceVersion\":41}}"),
		  IBKEA_WATCH_BOOKMARK, 41, "", "" },
		/* The object first, as another server may order it. */
		{ "{\"object\":" HW("default", "m3", "7") ",\"type\":\"ADDED\"}", IBKEA_WATCH_ADDED,
		  7, "default", "m3" },
		/* Without apiVersion and kind, as a list's items may come. */
		{ EV("ADDED", "{\"metadata\":{\"name\":\"a\",\"namespace\":\"b\","
			      "\"resourceVersion\":\"3\"}}"),
		  IBKEA_WATCH_ADDED, 3, "b", "a" },
		{ EV("ADDED", HW("default", "m1", "12")) "\r", IBKEA_WATCH_ADDED, 12, "default",
		  "m1" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibkea_watch_event ev;
		char err[256] = "";
		ck_assert_msg(decode(cases[i].line, &ev, err, sizeof(err)) == 0, "case %zu: %s", i,
			      err);
		ck_assert_int_eq(ev.type, cases[i].type);
		ck_assert_msg(ev.rv == cases[i].rv, "case %zu: rv %llu", i,
			      (unsigned long long)ev.rv);
		ck_assert_str_eq(ev.namespace_, cases[i].ns);
		ck_assert_str_eq(ev.name, cases[i].name);
		ck_assert(json_is_object(ev.object));
		ibkea_watch_event_clear(&ev);
		ck_assert_ptr_null(ev.object);
		ibkea_watch_event_clear(&ev); /* twice: harmless */
	}
}
END_TEST

START_TEST(test_error_events)
{
	struct ibkea_watch_event ev;
	char err[256] = "";

	/* What daemon/api/watch.c sends when the resume point expired. */
	ck_assert_int_eq(
		decode("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		       "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
		       "version: 5: list again\",\"reason\":\"Expired\",\"code\":410}}",
		       &ev, err, sizeof(err)),
		0);
	ck_assert_int_eq(ev.type, IBKEA_WATCH_ERROR);
	ck_assert_int_eq(ev.code, 410);
	ck_assert_str_eq(ev.message, "too old resource version: 5: list again");
	ck_assert(ev.rv == 0);
	ibkea_watch_event_clear(&ev);

	/* No code, no message: still an error. */
	ck_assert_int_eq(decode(EV("ERROR", "{}"), &ev, err, sizeof(err)), 0);
	ck_assert_int_eq(ev.type, IBKEA_WATCH_ERROR);
	ck_assert_int_eq(ev.code, 0);
	ck_assert_str_eq(ev.message, "");
	ibkea_watch_event_clear(&ev);

	/* A message with control characters and one too long for the log. */
	char line[2048], msg[1200];
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	msg[0] = '\\';
	msg[1] = 'n';
	snprintf(line, sizeof(line),
		 "{\"type\":\"ERROR\",\"object\":{\"code\":500,\"message\":\"%s\"}}", msg);
	ck_assert_int_eq(decode(line, &ev, err, sizeof(err)), 0);
	ck_assert_int_eq(ev.code, 500);
	ck_assert_uint_le(strlen(ev.message), IBKEA_API_MAX_MESSAGE);
	ck_assert_int_eq(ev.message[0], '?');
	ibkea_watch_event_clear(&ev);
}
END_TEST

START_TEST(test_malformed)
{
	static const struct {
		const char *line;
		const char *err; /* a part of the message */
	} cases[] = {
		{ "", "not JSON" },
		{ "not json", "not JSON" },
		{ "{\"type\":\"ADDED\",\"object\":{}", "not JSON" },
		{ "[1,2]", "not a JSON object" },
		{ "\"ADDED\"", "not JSON" },
		{ "{\"object\":" HW("default", "m1", "1") "}", "type missing" },
		{ "{\"type\":7,\"object\":{}}", "type is not a string" },
		{ EV("ADDDED", HW("default", "m1", "1")), "unknown type 'ADDDED'" },
		{ EV("added", HW("default", "m1", "1")), "unknown type 'added'" },
		{ "{\"type\":\"ADDED\\u0000\",\"object\":{}}", "not JSON" },
		{ "{\"type\":\"\\u001b[31m\",\"object\":{}}", "unknown type '?[31m'" },
		{ "{\"type\":\"ADDED\"}", "ADDED: object missing" },
		{ EV("ADDED", "[]"), "ADDED: object is not a JSON object" },
		{ EV("MODIFIED", "\"x\""), "MODIFIED: object is not a JSON object" },
		{ EV("DELETED", "null"), "DELETED: object is not a JSON object" },
		{ EV("ERROR", "\"gone\""), "ERROR: object is not a JSON object" },
		{ EV("ERROR", "{\"code\":\"410\"}"), "code is not an HTTP status" },
		{ EV("ERROR", "{\"code\":-1}"), "code is not an HTTP status" },
		{ EV("ERROR", "{\"code\":410,\"message\":5}"), "message is not a string" },
		{ EV("BOOKMARK", "{}"), "resourceVersion missing" },
		{ EV("BOOKMARK", "{\"metadata\":{\"resourceVersion\":\"\"}}"), "not a number" },
		{ EV("BOOKMARK", "{\"metadata\":{\"resourceVersion\":\"0\"}}"), "not a number" },
		{ EV("BOOKMARK", "{\"metadata\":{\"resourceVersion\":-3}}"), "is not a string" },
		{ EV("ADDED", "{\"metadata\":{\"name\":\"a\",\"namespace\":\"b\"}}"),
		  "resourceVersion missing" },
		{ EV("ADDED", HW("default", "m1", "12a")), "'12a' is not a number" },
		{ EV("ADDED", HW("default", "m1", "18446744073709551616")), "is not a number" },
		{ EV("ADDED", HW("default", "m1", "-1")), "is not a number" },
		{ EV("ADDED", "{\"metadata\":[]}"), "metadata is not a JSON object" },
		{ EV("ADDED", "{\"spec\":{}}"), "metadata missing" },
		{ EV("ADDED", HW("default", "", "1")), "metadata.name is empty" },
		{ EV("ADDED", HW("", "m1", "1")), "metadata.namespace is empty" },
		{ EV("ADDED",
		     "{\"metadata\":{\"name\":1,\"namespace\":\"b\",\"resourceVersion\":\"1\"}}"),
		  "metadata.name is not a string" },
		{ EV("ADDED", "{\"metadata\":{\"name\":\"a\\u0000b\",\"namespace\":\"b\","
			      "\"resourceVersion\":\"1\"}}"),
		  "not JSON" },
		{ EV("ADDED", "{\"kind\":\"Template\",\"metadata\":{\"name\":\"a\",\"namespace\":"
			      "\"b\",\"resourceVersion\":\"1\"}}"),
		  "object is a Template, not a Hardware" },
		{ EV("ADDED", "{\"kind\":3,\"metadata\":{}}"), "not a Hardware" },
		{ "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":" HW("default", "m1",
									    "1") "}",
		  "not JSON: duplicate object key" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibkea_watch_event ev = { .rv = 99 };
		char err[256] = "";
		int e = decode(cases[i].line, &ev, err, sizeof(err));
		ck_assert_msg(e == -EBADMSG, "case %zu (%s): %d", i, cases[i].line, e);
		ck_assert_msg(strstr(err, cases[i].err), "case %zu: \"%s\" lacks \"%s\"", i, err,
			      cases[i].err);
		ck_assert_msg(ev.rv == 99 && !ev.object, "case %zu: *ret written", i);
	}
	/* A NULL err with no room is fine. */
	struct ibkea_watch_event ev;
	ck_assert_int_eq(ibkea_watch_line("x", 1, 10, &ev, NULL, 0), -EBADMSG);
}
END_TEST

START_TEST(test_huge_line)
{
	/* A good event padded past the cap: refused on its length, unparsed. */
	size_t cap = 4096, len = cap + 1;
	char *line = malloc(len + 1);
	struct ibkea_watch_event ev = { .rv = 99 };
	char err[256] = "";

	ck_assert_ptr_nonnull(line);
	const char *good = EV("ADDED", HW("default", "m1", "1"));
	memset(line, ' ', len);
	memcpy(line, good, strlen(good));
	line[len] = '\0';
	ck_assert_int_eq(ibkea_watch_line(line, len, cap, &ev, err, sizeof(err)), -E2BIG);
	ck_assert_ptr_nonnull(strstr(err, "longer than 4096 bytes"));
	ck_assert(ev.rv == 99);
	/* At the cap exactly, it is taken. */
	ck_assert_int_eq(ibkea_watch_line(line, cap, cap, &ev, err, sizeof(err)), 0);
	ibkea_watch_event_clear(&ev);
	free(line);

	/* Nesting deeper than jansson's bound is an error, not a crash. */
	size_t depth = 100000;
	char *deep = malloc(2 * depth + 64);
	ck_assert_ptr_nonnull(deep);
	size_t n = (size_t)snprintf(deep, 64, "{\"type\":\"ADDED\",\"object\":");
	memset(deep + n, '[', depth);
	n += depth;
	memset(deep + n, ']', depth);
	n += depth;
	deep[n++] = '}';
	ck_assert_int_eq(ibkea_watch_line(deep, n, IBKEA_API_MAX_LINE, &ev, err, sizeof(err)),
			 -EBADMSG);
	free(deep);
}
END_TEST

#define LIST(rv, items)                                                                       \
	"{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"HardwareList\",\"metadata\":" \
	"{\"resourceVersion\":\"" rv "\"},\"items\":[" items "]}\n"

static int parse_list(const char *body, size_t max_items, json_t **items, uint64_t *rv, char *err)
{
	return ibkea_list_parse(body, strlen(body), 1 << 20, max_items, items, rv, err, 256);
}

START_TEST(test_list)
{
	json_t *items = NULL;
	uint64_t rv = 0;
	char err[256] = "";

	ck_assert_int_eq(parse_list(LIST("42", HW("default", "a", "40") "," HW("lab", "b", "41")),
				    10, &items, &rv, err),
			 0);
	ck_assert(rv == 42);
	ck_assert_uint_eq(json_array_size(items), 2);
	json_decref(items);
	items = NULL;
	ck_assert_int_eq(parse_list(LIST("7", ""), 10, &items, &rv, err), 0);
	ck_assert(rv == 7);
	ck_assert_uint_eq(json_array_size(items), 0);
	json_decref(items);

	static const struct {
		const char *body;
		int e;
		const char *err;
	} bad[] = {
		{ "", -EBADMSG, "not JSON" },
		{ "[]", -EBADMSG, "not a JSON object" },
		{ "{\"items\":[]}", -EBADMSG, "resourceVersion missing" },
		{ "{\"metadata\":{\"resourceVersion\":\"x\"},\"items\":[]}", -EBADMSG,
		  "not a number" },
		{ "{\"metadata\":{\"resourceVersion\":\"3\"}}", -EBADMSG, "items missing" },
		{ "{\"metadata\":{\"resourceVersion\":\"3\"},\"items\":{}}", -EBADMSG,
		  "items is not an array" },
		{ LIST("3", HW("default", "a", "1") ",5"), -EBADMSG,
		  "items[1] is not a JSON object" },
		{ LIST("3", HW("default", "a", "1") "," HW("default", "b", "1") "," HW("default",
										       "c", "1")),
		  -E2BIG, "more than 2 items" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		items = NULL;
		rv = 99;
		int e = parse_list(bad[i].body, 2, &items, &rv, err);
		ck_assert_msg(e == bad[i].e, "case %zu: %d", i, e);
		ck_assert_msg(strstr(err, bad[i].err), "case %zu: \"%s\" lacks \"%s\"", i, err,
			      bad[i].err);
		ck_assert(!items && rv == 99);
	}
	/* Longer than its cap: refused before parsing. */
	const char *body = LIST("3", "");
	ck_assert_int_eq(ibkea_list_parse(body, strlen(body), 8, 10, &items, &rv, err, sizeof(err)),
			 -E2BIG);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("kea_watch");
	TCase *tc = tcase_create("core");

	UNIT_TEST(tc, test_events);
	UNIT_TEST(tc, test_error_events);
	UNIT_TEST(tc, test_malformed);
	UNIT_TEST(tc, test_huge_line);
	UNIT_TEST(tc, test_list);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
