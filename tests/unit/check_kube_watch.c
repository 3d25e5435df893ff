/* check_kube_watch — the watch-stream decoder and the list pages' reader
 * (kube/watchdec.c): the same events whatever the byte boundaries the
 * stream arrives in (whole, one byte at a time, random pieces), several
 * events in a piece, CRLF and blank lines, BOOKMARK, ERROR 410 with its
 * message, a table of malformed lines with the exact error each gives, a
 * line over KUBE_MAX_EVENT refused without buffering more than the bound,
 * the callback's error stopping the stream, a stream cut mid-line; list
 * pages good and malformed, items filled in with apiVersion and kind. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "kube/kube-internal.h"
#include "tests/unit/unit.h"

#define AV "tinkerbell.org/v1alpha1"
#define OBJ(kind, ns, name, rv)                                                           \
	"{\"apiVersion\":\"" AV "\",\"kind\":\"" kind "\",\"metadata\":{\"name\":\"" name \
	"\",\"namespace\":\"" ns "\",\"resourceVersion\":\"" rv                           \
	"\"},\"spec\":{\"x\":\"\\u00e9\"}}"
#define EV(type, ns, name, rv) \
	"{\"type\":\"" type "\",\"object\":" OBJ("Hardware", ns, name, rv) "}"
#define GOOD EV("ADDED", "default", "hw0", "1")

/* What the callback saw, one line per event. */
struct rec {
	struct buf out;
	int calls;
	int stop_at; /* the call that returns stop_err; 0: none */
	int stop_err;
};

static const char *const type_name[] = { "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" };

static int rec_fn(const struct kube_event *ev, void *userdata)
{
	struct rec *r = userdata;

	r->calls++;
	if (r->stop_at && r->calls == r->stop_at)
		return r->stop_err;
	ck_assert(json_is_object(ev->object));
	ck_assert_int_ge(ev->type, KUBE_EVENT_ADDED);
	ck_assert_int_le(ev->type, KUBE_EVENT_ERROR);
	buf_printf(&r->out, "%s %s/%s rv=%s", type_name[ev->type], ev->namespace_, ev->name,
		   ev->rv);
	if (ev->type == KUBE_EVENT_ERROR)
		buf_printf(&r->out, " code=%d msg=%s", ev->code, ev->message);
	buf_putc(&r->out, '\n');
	return 0;
}

static void rec_init(struct rec *r)
{
	*r = (struct rec){ 0 };
	buf_init(&r->out, 1 << 20);
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

enum split {
	WHOLE,
	BYTES,
	RANDOM
};

/* Feeds text to d in pieces (whole, one byte at a time, or random sizes
 * from seed) and returns the first error, or 0. */
static int feed_split(struct kube_watchdec *d, const char *text, size_t len, enum split how,
		      uint32_t seed, struct rec *r, char *err, size_t errlen)
{
	size_t off = 0;

	while (off < len) {
		size_t n = len - off;
		if (how == BYTES)
			n = 1;
		else if (how == RANDOM) {
			uint32_t x = xorshift(&seed);
			n = 1 + (x % 8 == 0 ? x % 4096 : x % 40);
			if (n > len - off)
				n = len - off;
		}
		int e = kube_watchdec_feed(d, text + off, n, rec_fn, r, err, errlen);
		if (e < 0)
			return e;
		off += n;
	}
	return 0;
}

static const char stream[] = EV(
	"ADDED", "default", "hw1",
	"10") "\n"
	      "\n" EV("MODIFIED", "default", "hw1",
		      "11") "\r\n"
			    "  \t \n"
			    "{\"type\":\"BOOKMARK\",\"object\":{\"apiVersion\":\"" AV
			    "\",\"kind\":\"Hardware\","
			    "\"metadata\":{\"resourceVersion\":\"12\",\"annotations\":"
			    "{\"k8s.io/initial-events-end\":\"true\"}}}}\n"
			    "\r\n"
			    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n" EV(
				    "DELETED", "other", "hw-2.x",
				    "13") "\n"
					  "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
					  "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (13)\","
					  "\"reason\":\"Expired\",\"code\":410}}\n";

static const char stream_events[] = "ADDED default/hw1 rv=10\n"
				    "MODIFIED default/hw1 rv=11\n"
				    "BOOKMARK / rv=12\n"
				    "BOOKMARK / rv=12\n"
				    "DELETED other/hw-2.x rv=13\n"
				    "ERROR / rv= code=410 msg=too old resource version: 1 (13)\n";

static void check_stream(enum split how, uint32_t seed)
{
	struct kube_watchdec d;
	struct rec r;
	char err[256] = "";

	rec_init(&r);
	kube_watchdec_init(&d, AV, "Hardware");
	int e = feed_split(&d, stream, sizeof(stream) - 1, how, seed, &r, err, sizeof(err));
	ck_assert_msg(e == 0, "split %d seed %u: %d %s", how, seed, e, err);
	ck_assert_str_eq(r.out.data, stream_events);
	ck_assert(!kube_watchdec_partial(&d));
	ck_assert_uint_eq(d.lines, 9);
	kube_watchdec_free(&d);
	buf_free(&r.out);
}

START_TEST(test_stream_whole)
{
	check_stream(WHOLE, 0);
}
END_TEST

START_TEST(test_stream_bytes)
{
	check_stream(BYTES, 0);
}
END_TEST

START_TEST(test_stream_random)
{
	for (uint32_t seed = 1; seed <= 200; seed++)
		check_stream(RANDOM, seed * 2654435761u);
}
END_TEST

/* Every cut of the stream in two pieces gives the same events. */
START_TEST(test_stream_every_cut)
{
	size_t len = sizeof(stream) - 1;

	for (size_t cut = 0; cut <= len; cut++) {
		struct kube_watchdec d;
		struct rec r;
		char err[256] = "";

		rec_init(&r);
		kube_watchdec_init(&d, AV, "Hardware");
		ck_assert_int_eq(kube_watchdec_feed(&d, stream, cut, rec_fn, &r, err, sizeof(err)),
				 0);
		ck_assert_int_eq(kube_watchdec_feed(&d, stream + cut, len - cut, rec_fn, &r, err,
						    sizeof(err)),
				 0);
		ck_assert_str_eq(r.out.data, stream_events);
		kube_watchdec_free(&d);
		buf_free(&r.out);
	}
}
END_TEST

/* An ERROR's message is cut and made fit for a log line; a code that is
 * not an integer of 0..999 is 0. */
START_TEST(test_error_event)
{
	struct kube_watchdec d;
	struct rec r;
	char err[256] = "", *line;
	struct buf b = BUF_INIT(1 << 20);

	rec_init(&r);
	kube_watchdec_init(&d, AV, "Hardware");
	const char *two = "{\"type\":\"ERROR\",\"object\":{\"message\":\"a\\u001b[31mb\\nc\","
			  "\"code\":\"410\"}}\n"
			  "{\"type\":\"ERROR\",\"object\":{\"code\":5000}}\n"
			  "{\"type\":\"ERROR\",\"object\":{\"code\":-1,\"message\":7}}\n";
	ck_assert_int_eq(kube_watchdec_feed(&d, two, strlen(two), rec_fn, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.out.data, "ERROR / rv= code=0 msg=a?[31mb?c\n"
				     "ERROR / rv= code=0 msg=\n"
				     "ERROR / rv= code=0 msg=\n");
	buf_reset(&r.out);
	buf_puts(&b, "{\"type\":\"ERROR\",\"object\":{\"code\":500,\"message\":\"");
	for (int i = 0; i < 3000; i++)
		buf_putc(&b, 'm');
	buf_puts(&b, "\"}}\n");
	ck_assert_int_eq(kube_watchdec_feed(&d, b.data, b.len, rec_fn, &r, err, sizeof(err)), 0);
	line = strstr(r.out.data, "msg=");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(strlen(line + 4), KUBE_MAX_STATUS_MESSAGE + 1); /* and its '\n' */
	ck_assert(strstr(line, "...\n"));
	ck_assert(strncmp(r.out.data, "ERROR / rv= code=500 msg=mmm", 28) == 0);
	kube_watchdec_free(&d);
	buf_free(&r.out);
	buf_free(&b);
}
END_TEST

struct bad_line {
	const char *line;
	const char *err; /* after "watch line 2: "; a trailing '*' matches a prefix */
};

#define MD(rest)                                                                           \
	"{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"" AV "\",\"kind\":\"Hardware\"," \
	"\"metadata\":" rest "}}"
#define RV65 "12345678901234567890123456789012345678901234567890123456789012345"

static const struct bad_line bad_lines[] = {
	{ "garbage", "not JSON: '[' or '{' expected near 'garbage'" },
	{ "[1,2]", "not a JSON object but an array" },
	{ "\"s\"", "not JSON: *" },
	{ "{\"type\":\"ADDED\"", "not JSON: *" },
	{ GOOD " x", "not JSON: end of file expected near 'x'" },
	{ GOOD GOOD, "not JSON: *" },
	{ "{\"object\":{}}", "type missing" },
	{ "{\"type\":1,\"object\":{}}", "type is not a string" },
	{ "{\"type\":null,\"object\":{}}", "type is not a string" },
	{ "{\"type\":\"FOO\",\"object\":{}}", "type 'FOO' unknown" },
	{ "{\"type\":\"added\",\"object\":{}}", "type 'added' unknown" },
	{ "{\"type\":\"ADDED \",\"object\":{}}", "type 'ADDED ' unknown" },
	{ "{\"type\":\"\\u0007X\",\"object\":{}}", "type '?X' unknown" },
	{ "{\"type\":\"ADDED\"}", "object missing" },
	{ "{\"type\":\"ADDED\",\"object\":[]}", "object is not a JSON object" },
	{ "{\"type\":\"MODIFIED\",\"object\":\"x\"}", "object is not a JSON object" },
	{ "{\"type\":\"ERROR\",\"object\":null}", "object is not a JSON object" },
	{ "{\"type\":\"BOOKMARK\",\"object\":[]}", "object is not a JSON object" },
	{ "{\"type\":\"DELETED\",\"object\":{\"apiVersion\":\"" AV "\",\"kind\":\"Hardware\"}}",
	  "metadata missing" },
	{ MD("[]"), "metadata is not a JSON object" },
	{ MD("{\"name\":\"a\",\"namespace\":\"b\"}"), "metadata.resourceVersion missing" },
	{ MD("{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":12}"),
	  "metadata.resourceVersion is not a string" },
	{ MD("{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":\"\"}"),
	  "metadata.resourceVersion is empty" },
	{ MD("{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":\"" RV65 "\"}"),
	  "metadata.resourceVersion is longer than 64 characters" },
	{ MD("{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":\"1 2\"}"),
	  "metadata.resourceVersion '1 2' has a character not allowed" },
	{ MD("{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":\"\\u001b[2J\"}"),
	  "metadata.resourceVersion '?[2J' has a character not allowed" },
	{ MD("{\"namespace\":\"b\",\"resourceVersion\":\"1\"}"), "metadata.name missing" },
	{ MD("{\"name\":7,\"namespace\":\"b\",\"resourceVersion\":\"1\"}"),
	  "metadata.name is not a string" },
	{ MD("{\"name\":\"a/b\",\"namespace\":\"b\",\"resourceVersion\":\"1\"}"),
	  "metadata.name 'a/b' has a character not allowed" },
	{ MD("{\"name\":\"A\",\"namespace\":\"b\",\"resourceVersion\":\"1\"}"),
	  "metadata.name 'A' has a character not allowed" },
	{ MD("{\"name\":\"a\",\"resourceVersion\":\"1\"}"), "metadata.namespace missing" },
	{ MD("{\"name\":\"a\",\"namespace\":\"\",\"resourceVersion\":\"1\"}"),
	  "metadata.namespace is empty" },
	{ "{\"type\":\"ADDED\",\"object\":" OBJ("Template", "d", "t1", "5") "}",
	  "object is tinkerbell.org/v1alpha1 Template, not Hardware" },
	{ "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"tinkerbell.org/v1beta1\",\"kind\":"
	  "\"Hardware\",\"metadata\":{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":\"1\"}}}",
	  "object is tinkerbell.org/v1beta1 Hardware, not tinkerbell.org/v1alpha1 Hardware" },
	{ "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Hardware\",\"metadata\":{\"name\":\"a\","
	  "\"namespace\":\"b\",\"resourceVersion\":\"1\"}}}",
	  "apiVersion missing" },
	{ "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"" AV "\",\"metadata\":{\"name\":\"a\","
	  "\"namespace\":\"b\",\"resourceVersion\":\"1\"}}}",
	  "kind missing" },
	{ "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"" AV "\",\"kind\":[],\"metadata\":"
	  "{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":\"1\"}}}",
	  "kind is not a string" },
	{ "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Template\",\"metadata\":"
	  "{\"resourceVersion\":\"1\"}}}",
	  "object is tinkerbell.org/v1alpha1 Template, not Hardware" },
	{ "{\"type\":\"BOOKMARK\",\"object\":{\"apiVersion\":\"" AV "\",\"kind\":\"Hardware\","
	  "\"metadata\":{}}}",
	  "metadata.resourceVersion missing" },
	{ "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":" OBJ("Hardware", "a", "b", "1") "}",
	  "not JSON: duplicate object key near '\"type\"'" },
	{ MD("{\"name\":\"a\",\"namespace\":\"b\",\"resourceVersion\":\"1\","
	     "\"resourceVersion\":\"2\"}"),
	  "not JSON: duplicate object key near '\"resourceVersion\"'" },
	{ "{\"type\":\"ADDED\",\"object\":{\"a\":\"\\u0000\"}}", "not JSON: *" },
	{ "{\"type\":\"ADDED\",\"object\":{\"a\":\"\xff\"}}", "not JSON: *" },
};

/* "watch line 2: " + want, or its prefix when want ends in '*'. */
static void check_err(const char *err, const char *prefix, const char *want)
{
	char full[512];
	size_t n = strlen(want);

	snprintf(full, sizeof(full), "%s%s", prefix, want);
	if (n && want[n - 1] == '*')
		ck_assert_msg(strncmp(err, full, strlen(full) - 1) == 0, "'%s' is not '%s'", err,
			      full);
	else
		ck_assert_str_eq(err, full);
}

static void check_bad(const char *line, size_t len, const char *want, enum split how)
{
	struct kube_watchdec d;
	struct rec r;
	char err[256] = "";
	struct buf text = BUF_INIT(1 << 20);

	buf_puts(&text, GOOD "\n");
	buf_append(&text, line, len);
	buf_puts(&text, "\n" GOOD "\n");
	rec_init(&r);
	kube_watchdec_init(&d, AV, "Hardware");
	int e = feed_split(&d, text.data, text.len, how, 7, &r, err, sizeof(err));
	ck_assert_msg(e == -EBADMSG, "%s: %d (%s)", line, e, err);
	check_err(err, "watch line 2: ", want);
	for (const char *p = err; *p; p++)
		ck_assert_msg((unsigned char)*p >= ' ' && *p != 0x7f, "%s: control byte in err",
			      line);
	ck_assert_int_eq(r.calls, 1);
	/* Stopped for good: the good line after it is not given. */
	ck_assert_int_eq(
		kube_watchdec_feed(&d, GOOD "\n", strlen(GOOD) + 1, rec_fn, &r, err, sizeof(err)),
		-EBADMSG);
	ck_assert_int_eq(r.calls, 1);
	kube_watchdec_free(&d);
	buf_free(&r.out);
	buf_free(&text);
}

START_TEST(test_bad_lines)
{
	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		check_bad(bad_lines[i].line, strlen(bad_lines[i].line), bad_lines[i].err, WHOLE);
		check_bad(bad_lines[i].line, strlen(bad_lines[i].line), bad_lines[i].err, BYTES);
	}
}
END_TEST

/* A NUL byte, nesting past jansson's depth bound, a quoted type cut short. */
START_TEST(test_bad_lines_more)
{
	static const char nul[] = "{\"type\":\"ADDED\",\0\"object\":{}}";
	struct buf b = BUF_INIT(1 << 20);
	char want[256];

	check_bad(nul, sizeof(nul) - 1, "not JSON: *", WHOLE);
	buf_puts(&b, "{\"type\":\"ADDED\",\"object\":{\"a\":");
	for (int i = 0; i < 5000; i++)
		buf_putc(&b, '[');
	check_bad(b.data, b.len, "not JSON: maximum parsing depth reached*", WHOLE);
	buf_reset(&b);
	buf_puts(&b, "{\"type\":\"");
	for (int i = 0; i < 300; i++)
		buf_putc(&b, 'T');
	buf_puts(&b, "\",\"object\":{}}");
	snprintf(want, sizeof(want), "type '%.*s...' unknown", 61,
		 "TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT");
	check_bad(b.data, b.len, want, WHOLE);
	buf_free(&b);
}
END_TEST

/* An ADDED event padded to exactly len bytes (its '\n' not counted). */
static char *padded_event(size_t len)
{
	static const char head[] =
		"{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"" AV
		"\",\"kind\":\"Hardware\",\"metadata\":{\"name\":\"big\","
		"\"namespace\":\"default\",\"resourceVersion\":\"7\"},\"pad\":\"";
	static const char tail[] = "\"}}";
	char *s = malloc(len + 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_gt(len, sizeof(head) + sizeof(tail));
	memcpy(s, head, sizeof(head) - 1);
	memset(s + sizeof(head) - 1, 'p', len - (sizeof(head) - 1) - (sizeof(tail) - 1));
	memcpy(s + len - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
	s[len] = '\n';
	return s;
}

/* Feeds s in 64 KiB pieces; the line buffer never holds or allocates
 * more than the bound. */
static int feed_chunks(struct kube_watchdec *d, const char *s, size_t len, struct rec *r, char *err,
		       size_t errlen)
{
	for (size_t off = 0; off < len;) {
		size_t n = len - off < 65536 ? len - off : 65536;
		int e = kube_watchdec_feed(d, s + off, n, rec_fn, r, err, errlen);
		ck_assert_uint_lt(d->line.len, KUBE_MAX_EVENT);
		ck_assert_uint_le(d->line.alloc, KUBE_MAX_EVENT);
		if (e < 0)
			return e;
		off += n;
	}
	return 0;
}

START_TEST(test_too_long)
{
	struct kube_watchdec d;
	struct rec r;
	char err[256] = "";
	char *fits = padded_event(KUBE_MAX_EVENT - 1), *over = padded_event(KUBE_MAX_EVENT);

	/* KUBE_MAX_EVENT bytes with the '\n': taken, whole and in pieces. */
	rec_init(&r);
	kube_watchdec_init(&d, AV, "Hardware");
	ck_assert_int_eq(kube_watchdec_feed(&d, fits, KUBE_MAX_EVENT, rec_fn, &r, err, sizeof(err)),
			 0);
	ck_assert_int_eq(feed_chunks(&d, fits, KUBE_MAX_EVENT, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.out.data, "ADDED default/big rv=7\nADDED default/big rv=7\n");
	/* The buffer of the large line is given back. */
	ck_assert_uint_le(d.line.alloc, 64 * 1024);
	kube_watchdec_free(&d);

	/* One byte more: refused whole, and in pieces before its '\n' comes. */
	kube_watchdec_init(&d, AV, "Hardware");
	ck_assert_int_eq(
		kube_watchdec_feed(&d, over, KUBE_MAX_EVENT + 1, rec_fn, &r, err, sizeof(err)),
		-E2BIG);
	ck_assert_str_eq(err, "watch line 1: longer than 16777216 bytes");
	kube_watchdec_free(&d);
	kube_watchdec_init(&d, AV, "Hardware");
	ck_assert_int_eq(feed_chunks(&d, over, KUBE_MAX_EVENT, &r, err, sizeof(err)), -E2BIG);
	ck_assert_str_eq(err, "watch line 1: longer than 16777216 bytes");
	ck_assert_int_eq(r.calls, 2);
	kube_watchdec_free(&d);

	/* After a good line, the error names the next one. */
	kube_watchdec_init(&d, AV, "Hardware");
	ck_assert_int_eq(
		kube_watchdec_feed(&d, GOOD "\n", strlen(GOOD) + 1, rec_fn, &r, err, sizeof(err)),
		0);
	ck_assert_int_eq(feed_chunks(&d, over, KUBE_MAX_EVENT + 1, &r, err, sizeof(err)), -E2BIG);
	ck_assert_str_eq(err, "watch line 2: longer than 16777216 bytes");
	kube_watchdec_free(&d);
	free(fits);
	free(over);
	buf_free(&r.out);
}
END_TEST

START_TEST(test_fn_stops)
{
	struct kube_watchdec d;
	struct rec r;
	char err[256] = "";
	const char *three = EV("ADDED", "a", "x", "1") "\n" EV("MODIFIED", "a", "x", "2") "\n" EV(
		"DELETED", "a", "x", "3") "\n";

	rec_init(&r);
	r.stop_at = 2;
	r.stop_err = -ECANCELED;
	kube_watchdec_init(&d, AV, "Hardware");
	ck_assert_int_eq(kube_watchdec_feed(&d, three, strlen(three), rec_fn, &r, err, sizeof(err)),
			 -ECANCELED);
	ck_assert_int_eq(r.calls, 2);
	ck_assert_str_eq(r.out.data, "ADDED a/x rv=1\n");
	ck_assert_msg(strncmp(err, "watch line 2: MODIFIED event not taken: ", 40) == 0, "%s", err);
	ck_assert_int_eq(
		kube_watchdec_feed(&d, GOOD "\n", strlen(GOOD) + 1, rec_fn, &r, err, sizeof(err)),
		-ECANCELED);
	ck_assert_int_eq(r.calls, 2);
	kube_watchdec_free(&d);

	/* A positive return is taken as 0. */
	kube_watchdec_init(&d, AV, "Hardware");
	r.stop_at = 0;
	r.calls = 0;
	ck_assert_int_eq(kube_watchdec_feed(&d, three, strlen(three), rec_fn, &r, err, sizeof(err)),
			 0);
	ck_assert_int_eq(r.calls, 3);
	kube_watchdec_free(&d);
	buf_free(&r.out);
}
END_TEST

START_TEST(test_partial)
{
	struct kube_watchdec d;
	struct rec r;
	char err[256] = "";
	const char *cut = GOOD "\n{\"type\":\"ADD";

	rec_init(&r);
	kube_watchdec_init(&d, AV, "Hardware");
	ck_assert(!kube_watchdec_partial(&d));
	ck_assert_int_eq(kube_watchdec_feed(&d, cut, strlen(cut), rec_fn, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.calls, 1);
	ck_assert(kube_watchdec_partial(&d));
	ck_assert_uint_eq(d.lines, 1);
	kube_watchdec_free(&d);
	kube_watchdec_init(&d, AV, "Hardware");
	ck_assert(!kube_watchdec_partial(&d));
	/* Cut between '\r' and '\n'. */
	ck_assert_int_eq(
		kube_watchdec_feed(&d, GOOD "\r", strlen(GOOD) + 1, rec_fn, &r, err, sizeof(err)),
		0);
	ck_assert(kube_watchdec_partial(&d));
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(kube_watchdec_feed(&d, "\n", 1, rec_fn, &r, err, sizeof(err)), 0);
	ck_assert(!kube_watchdec_partial(&d));
	ck_assert_int_eq(r.calls, 2);
	/* Nothing fed: nothing changes. */
	ck_assert_int_eq(kube_watchdec_feed(&d, "", 0, rec_fn, &r, err, sizeof(err)), 0);
	ck_assert(!kube_watchdec_partial(&d));
	kube_watchdec_free(&d);
	buf_free(&r.out);
}
END_TEST

/* ---- list pages ---- */

#define ITEM(ns, name, rv)                                                                        \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\",\"resourceVersion\":\"" rv \
	"\"},\"spec\":{}}"

static int list(const char *text, json_t **items, char *rv, char *cont, char *err)
{
	return kube_list_parse(text, strlen(text), AV, "Hardware", items, rv, cont, err, 256);
}

START_TEST(test_list_good)
{
	const char *page =
		"{\"apiVersion\":\"" AV "\",\"kind\":\"HardwareList\",\"metadata\":"
		"{\"resourceVersion\":\"500\",\"continue\":\"eyJ2IjoibWV0YS5rOHMuaW8vdjEi"
		"LCJydiI6NTAwfQ==\",\"remainingItemCount\":3},\"items\":[" ITEM(
			"default", "hw1", "10") "," OBJ("Hardware", "other", "hw2", "11") "]}";
	char rv[KUBE_MAX_RV + 1], cont[KUBE_MAX_CONTINUE + 1], err[256] = "";
	json_t *items = NULL;

	ck_assert_msg(list(page, &items, rv, cont, err) == 0, "%s", err);
	ck_assert_str_eq(rv, "500");
	ck_assert_str_eq(cont, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NTAwfQ==");
	ck_assert_uint_eq(json_array_size(items), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *it = json_array_get(items, i);
		ck_assert_str_eq(json_string_value(json_object_get(it, "apiVersion")), AV);
		ck_assert_str_eq(json_string_value(json_object_get(it, "kind")), "Hardware");
	}
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_array_get(items, 1), "metadata"), "name")),
			 "hw2");
	/* A new reference, alive after the page is gone. */
	ck_assert_int_eq(items->refcount, 1);
	json_decref(items);

	/* The last page; no apiVersion, kind or metadata; null or empty items. */
	static const char *const last[] = {
		"{\"kind\":\"HardwareList\",\"metadata\":{\"resourceVersion\":\"9\",\"continue\":\"\"},"
		"\"items\":[]}",
		"{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":null}",
		"{\"items\":[]}",
	};
	for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
		items = NULL;
		ck_assert_msg(list(last[i], &items, rv, cont, err) == 0, "%s: %s", last[i], err);
		ck_assert_str_eq(rv, i < 2 ? "9" : "");
		ck_assert_str_eq(cont, "");
		ck_assert(json_is_array(items));
		ck_assert_uint_eq(json_array_size(items), 0);
		json_decref(items);
	}
}
END_TEST

/* A continue token of exactly KUBE_MAX_CONTINUE is taken, one more is
 * not; the 18th item of a page is named in the error. */
START_TEST(test_list_bounds)
{
	char rv[KUBE_MAX_RV + 1], cont[KUBE_MAX_CONTINUE + 1], err[256] = "";
	struct buf b = BUF_INIT(1 << 20);
	json_t *items = NULL;

	for (int extra = 0; extra < 2; extra++) {
		buf_reset(&b);
		buf_puts(&b, "{\"metadata\":{\"resourceVersion\":\"1\",\"continue\":\"");
		for (int i = 0; i < KUBE_MAX_CONTINUE + extra; i++)
			buf_putc(&b, 'c');
		buf_puts(&b, "\"},\"items\":[]}");
		int e = list(b.data, &items, rv, cont, err);
		if (!extra) {
			ck_assert_int_eq(e, 0);
			ck_assert_uint_eq(strlen(cont), KUBE_MAX_CONTINUE);
			json_decref(items);
		} else {
			ck_assert_int_eq(e, -EBADMSG);
			ck_assert_str_eq(err,
					 "list: metadata.continue is longer than 4096 characters");
		}
	}
	buf_reset(&b);
	buf_puts(&b, "{\"items\":[");
	for (int i = 0; i < 20; i++) {
		if (i)
			buf_putc(&b, ',');
		if (i == 17)
			buf_puts(&b,
				 "{\"metadata\":{\"namespace\":\"d\",\"resourceVersion\":\"1\"}}");
		else
			buf_printf(&b, ITEM("d", "h%d", "1"), i);
	}
	buf_puts(&b, "]}");
	items = NULL;
	ck_assert_int_eq(list(b.data, &items, rv, cont, err), -EBADMSG);
	ck_assert_str_eq(err, "list: items[17]: metadata.name missing");
	ck_assert_ptr_null(items);
	buf_free(&b);
}
END_TEST

static const struct bad_line bad_pages[] = {
	{ "garbage", "not JSON: '[' or '{' expected near 'garbage'" },
	{ "", "not JSON: *" },
	{ "[]", "not a JSON object but an array" },
	{ "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
	  "\"message\":\"forbidden\",\"code\":403}",
	  "answer is v1 Status, not tinkerbell.org/v1alpha1 HardwareList" },
	{ "{\"kind\":\"TemplateList\",\"items\":[]}",
	  "answer is tinkerbell.org/v1alpha1 TemplateList, not tinkerbell.org/v1alpha1 "
	  "HardwareList" },
	{ "{\"kind\":1,\"items\":[]}", "kind is not a string" },
	{ "{\"apiVersion\":{},\"items\":[]}", "apiVersion is not a string" },
	{ "{\"metadata\":{}}", "items missing" },
	{ "{\"items\":{}}", "items is not a JSON array" },
	{ "{\"items\":\"x\"}", "items is not a JSON array" },
	{ "{\"items\":[1]}", "items[0]: not a JSON object" },
	{ "{\"items\":[" ITEM("d", "a", "1") ",null]}", "items[1]: not a JSON object" },
	{ "{\"items\":[" ITEM("d", "a", "1") ",{\"metadata\":{\"namespace\":\"d\","
					     "\"resourceVersion\":\"1\"}}]}",
	  "items[1]: metadata.name missing" },
	{ "{\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"d\"}}]}",
	  "items[0]: metadata.resourceVersion missing" },
	{ "{\"items\":[{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}]}",
	  "items[0]: metadata.namespace missing" },
	{ "{\"items\":[{\"spec\":{}}]}", "items[0]: metadata missing" },
	{ "{\"items\":[" OBJ("Template", "d", "t", "1") "]}",
	  "items[0]: object is tinkerbell.org/v1alpha1 Template, not Hardware" },
	{ "{\"items\":[{\"kind\":\"Hardware\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\","
	  "\"namespace\":\"d\",\"resourceVersion\":\"1\"}}]}",
	  "items[0]: object is v1 Hardware, not tinkerbell.org/v1alpha1 Hardware" },
	{ "{\"metadata\":[],\"items\":[]}", "metadata is not a JSON object" },
	{ "{\"metadata\":{\"resourceVersion\":5},\"items\":[]}",
	  "metadata.resourceVersion is not a string" },
	{ "{\"metadata\":{\"resourceVersion\":\"" RV65 "\"},\"items\":[]}",
	  "metadata.resourceVersion is longer than 64 characters" },
	{ "{\"metadata\":{\"resourceVersion\":\"\"},\"items\":[]}",
	  "metadata.resourceVersion is empty" },
	{ "{\"metadata\":{\"continue\":7},\"items\":[]}", "metadata.continue is not a string" },
	{ "{\"metadata\":{\"continue\":\"a b\"},\"items\":[]}",
	  "metadata.continue 'a b' has a character not allowed" },
	{ "{\"items\":[],\"items\":[]}", "not JSON: duplicate object key near '\"items\"'" },
	{ "{\"items\":[]} {}", "not JSON: end of file expected near '{'" },
};

START_TEST(test_list_bad)
{
	for (size_t i = 0; i < sizeof(bad_pages) / sizeof(bad_pages[0]); i++) {
		char rv[KUBE_MAX_RV + 1] = "keep", cont[KUBE_MAX_CONTINUE + 1] = "keep",
				      err[256] = "";
		json_t *items = (json_t *)&items;

		ck_assert_msg(list(bad_pages[i].line, &items, rv, cont, err) == -EBADMSG, "%s",
			      bad_pages[i].line);
		check_err(err, "list: ", bad_pages[i].err);
		ck_assert(items == (json_t *)&items);
		ck_assert_str_eq(rv, "keep");
		ck_assert_str_eq(cont, "keep");
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kube_watch");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	UNIT_TEST(tc, test_stream_whole);
	UNIT_TEST(tc, test_stream_bytes);
	UNIT_TEST(tc, test_stream_random);
	UNIT_TEST(tc, test_stream_every_cut);
	UNIT_TEST(tc, test_error_event);
	UNIT_TEST(tc, test_bad_lines);
	UNIT_TEST(tc, test_bad_lines_more);
	UNIT_TEST(tc, test_too_long);
	UNIT_TEST(tc, test_fn_stops);
	UNIT_TEST(tc, test_partial);
	UNIT_TEST(tc, test_list_good);
	UNIT_TEST(tc, test_list_bounds);
	UNIT_TEST(tc, test_list_bad);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
