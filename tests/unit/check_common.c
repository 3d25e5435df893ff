/* check_common — unit tests for the common helpers: bounded buffers, the
 * number parser, the byte cursor, the UTF-8 repair, logfmt escaping, the
 * log sink a host process routes our lines into, the
 * metrics registry's exposition format, the MAC parser (with a table of
 * malformed input), the iPXE binaries' aliases and the token bucket. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/bootfile.h"
#include "common/common.h"
#include "common/jsonarr.h"
#include "common/mac.h"
#include "common/ratelimit.h"
#include "common/timerheap.h"
#include "common/utf8.h"
#include "tests/unit/unit.h"

START_TEST(test_buf_cap)
{
	struct buf b = BUF_INIT(8);
	ck_assert_int_eq(buf_puts(&b, "abcd"), 0);
	ck_assert_int_eq(buf_puts(&b, "efgh"), 0);
	ck_assert_int_eq(buf_putc(&b, 'x'), -E2BIG);
	ck_assert_uint_eq(b.len, 8);
	ck_assert_str_eq(b.data, "abcdefgh");
	buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(buf_printf(&b, "%d-%s", 12, "ab"), 0);
	ck_assert_str_eq(b.data, "12-ab");
	ck_assert_int_eq(buf_printf(&b, "%0300d", 1), -E2BIG);
	ck_assert_str_eq(b.data, "12-ab");
	buf_free(&b);
}
END_TEST

START_TEST(test_buf_long_printf)
{
	struct buf b = BUF_INIT(4096);
	ck_assert_int_eq(buf_printf(&b, "%0600d", 7), 0);
	ck_assert_uint_eq(b.len, 600);
	ck_assert_int_eq(b.data[599], '7');
	char *s = buf_steal(&b);
	ck_assert_uint_eq(strlen(s), 600);
	ck_assert_ptr_null(b.data);
	free(s);
	s = buf_steal(&b);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_buf_json_string)
{
	struct buf b = BUF_INIT(1024);
	ck_assert_int_eq(buf_put_json_string(&b, "a\"b\\c\n\x01", 7), 0);
	ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\n\\u0001\"");
	buf_free(&b);
}
END_TEST

static const struct {
	const char *in;
	uint64_t max;
	int err;
	uint64_t want;
} u64_cases[] = {
	{ "0", 10, 0, 0 },
	{ "10", 10, 0, 10 },
	{ "11", 10, -ERANGE, 0 },
	{ "18446744073709551615", UINT64_MAX, 0, UINT64_MAX },
	{ "18446744073709551616", UINT64_MAX, -ERANGE, 0 },
	{ "99999999999999999999999", UINT64_MAX, -ERANGE, 0 },
	{ "", 10, -EINVAL, 0 },
	{ "-1", 10, -EINVAL, 0 },
	{ "+1", 10, -EINVAL, 0 },
	{ " 1", 10, -EINVAL, 0 },
	{ "1 ", 10, -EINVAL, 0 },
	{ "0x10", 100, -EINVAL, 0 },
	{ "12a", 100, -EINVAL, 0 },
};

START_TEST(test_num_u64)
{
	for (size_t i = 0; i < ARRAY_SIZE(u64_cases); i++) {
		uint64_t v = 12345;
		int r = num_parse_u64_str(u64_cases[i].in, u64_cases[i].max, &v);
		ck_assert_msg(r == u64_cases[i].err, "case %zu \"%s\": got %d want %d", i,
			      u64_cases[i].in, r, u64_cases[i].err);
		if (r == 0)
			ck_assert_uint_eq(v, u64_cases[i].want);
		else
			ck_assert_uint_eq(v, 12345); /* untouched on failure */
	}
	/* Length-bounded: the bytes after len are never read. */
	uint64_t v;
	ck_assert_int_eq(num_parse_u64("123xyz", 3, 1000, &v), 0);
	ck_assert_uint_eq(v, 123);
}
END_TEST

START_TEST(test_num_i64)
{
	int64_t v;
	ck_assert_int_eq(num_parse_i64("-9223372036854775808", 20, INT64_MIN, INT64_MAX, &v), 0);
	ck_assert(v == INT64_MIN);
	ck_assert_int_eq(num_parse_i64("9223372036854775807", 19, INT64_MIN, INT64_MAX, &v), 0);
	ck_assert(v == INT64_MAX);
	ck_assert_int_eq(num_parse_i64("9223372036854775808", 19, INT64_MIN, INT64_MAX, &v),
			 -ERANGE);
	ck_assert_int_eq(num_parse_i64("-5", 2, 0, 10, &v), -ERANGE);
	ck_assert_int_eq(num_parse_i64("-", 1, -10, 10, &v), -EINVAL);
	ck_assert_int_eq(num_parse_i64("-7", 2, -10, 10, &v), 0);
	ck_assert_int_eq(v, -7);
}
END_TEST

START_TEST(test_num_duration_mode)
{
	uint64_t ms;
	ck_assert_int_eq(num_parse_duration_ms("30", 2, UINT64_MAX, &ms), 0);
	ck_assert_uint_eq(ms, 30000);
	ck_assert_int_eq(num_parse_duration_ms("250ms", 5, UINT64_MAX, &ms), 0);
	ck_assert_uint_eq(ms, 250);
	ck_assert_int_eq(num_parse_duration_ms("2m", 2, UINT64_MAX, &ms), 0);
	ck_assert_uint_eq(ms, 120000);
	ck_assert_int_eq(num_parse_duration_ms("1h", 2, 1000, &ms), -ERANGE);
	ck_assert_int_eq(num_parse_duration_ms("ms", 2, UINT64_MAX, &ms), -EINVAL);
	ck_assert_int_eq(num_parse_duration_ms("5x", 2, UINT64_MAX, &ms), -EINVAL);
	unsigned mode;
	ck_assert_int_eq(num_parse_mode("0660", 4, &mode), 0);
	ck_assert_uint_eq(mode, 0660);
	ck_assert_int_eq(num_parse_mode("0968", 4, &mode), -EINVAL);
	ck_assert_int_eq(num_parse_mode("17777", 5, &mode), -ERANGE);
}
END_TEST

START_TEST(test_cursor)
{
	const uint8_t bytes[] = { 1, 0x02, 0x03, 0xa, 0xb, 0xc, 0xd, 9 };
	struct rd r = rd_init(bytes, sizeof(bytes));
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	ck_assert_int_eq(rd_u8(&r, &u8), 0);
	ck_assert_uint_eq(u8, 1);
	ck_assert_int_eq(rd_be16(&r, &u16), 0);
	ck_assert_uint_eq(u16, 0x0203);
	ck_assert_int_eq(rd_be32(&r, &u32), 0);
	ck_assert_uint_eq(u32, 0x0a0b0c0d);
	ck_assert_int_eq(rd_be16(&r, &u16), -EBADMSG); /* one byte left */
	ck_assert_uint_eq(r.len, 1);                    /* not advanced */
	const uint8_t *p;
	ck_assert_int_eq(rd_bytes(&r, 2, &p), -EBADMSG);
	ck_assert_int_eq(rd_bytes(&r, 1, &p), 0);
	ck_assert_uint_eq(*p, 9);
	ck_assert_int_eq(rd_u8(&r, &u8), -EBADMSG);
	/* Little-endian: the same bytes the other way round. */
	r = rd_init(bytes + 1, 7);
	ck_assert_int_eq(rd_le16(&r, &u16), 0);
	ck_assert_uint_eq(u16, 0x0302);
	ck_assert_int_eq(rd_le32(&r, &u32), 0);
	ck_assert_uint_eq(u32, 0x0d0c0b0a);
	ck_assert_int_eq(rd_le16(&r, &u16), -EBADMSG); /* one byte left */
	ck_assert_int_eq(rd_le32(&r, &u32), -EBADMSG);
	ck_assert_uint_eq(r.len, 1); /* not advanced */
}
END_TEST

/* U+FFFD, as UTF-8. */
#define R "\xef\xbf\xbd"

/* Well-formed and ill-formed UTF-8 (Unicode §3.9, table 3-7), each
 * ill-formed maximal subpart replaced by one U+FFFD. */
static const struct {
	const char *in;
	size_t n; /* 0: strlen */
	const char *want;
	size_t want_n; /* 0: strlen */
} utf8_cases[] = {
	{ "", 0, "", 0 },
	{ "plain ascii\t~", 0, "plain ascii\t~", 0 },
	{ "caf\xc3\xa9", 0, "caf\xc3\xa9", 0 },
	{ "\xe2\x82\xac \xf0\x9f\x94\x94", 0, "\xe2\x82\xac \xf0\x9f\x94\x94", 0 },
	/* U+0080, U+07FF; either side of the surrogates; U+10FFFF, the last */
	{ "\xc2\x80 \xdf\xbf", 0, "\xc2\x80 \xdf\xbf", 0 },
	{ "\xed\x9f\xbf \xee\x80\x80", 0, "\xed\x9f\xbf \xee\x80\x80", 0 },
	{ "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf", 0 },
	{ "a\0b", 3, "a\0b", 3 }, /* U+0000 is a character */
	/* overlongs */
	{ "\xc0\xaf", 0, R R, 0 },
	{ "\xc1\xbf", 0, R R, 0 },
	{ "\xe0\x80\xaf", 0, R R R, 0 },
	{ "\xe0\x9f\xbf", 0, R R R, 0 },
	{ "\xf0\x80\x80\xaf", 0, R R R R, 0 },
	{ "\xf0\x8f\xbf\xbf", 0, R R R R, 0 },
	/* surrogates */
	{ "\xed\xa0\x80", 0, R R R, 0 },
	{ "\xed\xbf\xbf", 0, R R R, 0 },
	/* past U+10FFFF */
	{ "\xf4\x90\x80\x80", 0, R R R R, 0 },
	{ "\xf5\x80\x80\x80", 0, R R R R, 0 },
	{ "\xf8\x88\x80\x80\x80", 0, R R R R R, 0 },
	{ "\xfe\xff", 0, R R, 0 },
	/* truncated: the maximal subpart is one U+FFFD, the next byte stays */
	{ "\xc3", 0, R, 0 },
	{ "ok \xe2\x82", 0, "ok " R, 0 },
	{ "\xf0\x9f\x94", 0, R, 0 },
	{ "a\xe2\x82" "b", 0, "a" R "b", 0 },
	{ "\xe2\x28\xa1", 0, R "(" R, 0 },
	{ "\xf0\x9f\xc3\xa9", 0, R "\xc3\xa9", 0 },
	{ "caf\xe9 x", 0, "caf" R " x", 0 }, /* Latin-1 */
	/* stray continuation bytes */
	{ "\x80", 0, R, 0 },
	{ "\x80\xbf", 0, R R, 0 },
	{ "a\xbf" "b", 0, "a" R "b", 0 },
	{ "\xc3\xa9\xa9", 0, "\xc3\xa9" R, 0 },
};

START_TEST(test_utf8_table)
{
	const char *in = utf8_cases[_i].in, *want = utf8_cases[_i].want;
	size_t n = utf8_cases[_i].n ? utf8_cases[_i].n : strlen(in);
	size_t wn = utf8_cases[_i].want_n ? utf8_cases[_i].want_n : strlen(want);
	bool valid = n == wn && memcmp(in, want, n) == 0, cut = true;
	char out[64];

	ck_assert_msg(utf8_valid(in, n) == valid, "case %d: utf8_valid", _i);
	/* jansson agrees on what is UTF-8 */
	json_t *j = json_stringn(in, n);
	ck_assert_msg((j != NULL) == valid, "case %d: jansson says %s", _i,
		      j ? "valid" : "invalid");
	json_decref(j);
	ck_assert_uint_eq(utf8_sanitized_len(in, n, 0), wn);
	ck_assert_uint_eq(utf8_sanitize(in, n, out, sizeof(out) - 1, 0, &cut), wn);
	ck_assert(!cut);
	ck_assert_msg(memcmp(out, want, wn + 1) == 0, "case %d: got \"%s\"", _i, out);
	ck_assert(utf8_valid(out, wn));
	j = json_stringn(out, wn);
	ck_assert_ptr_nonnull(j);
	json_decref(j);
}
END_TEST

START_TEST(test_utf8_next)
{
	/* one bad subpart, then a good character: the decoder does not
	 * swallow the byte that broke the sequence */
	struct rd r = rd_init("\xe2\x82\xc3\xa9", 4);
	uint32_t cp = 0;
	ck_assert_int_eq(utf8_next(&r, &cp), -EILSEQ);
	ck_assert_uint_eq(cp, UTF8_REPLACEMENT);
	ck_assert_uint_eq(r.len, 2);
	ck_assert_int_eq(utf8_next(&r, &cp), 0);
	ck_assert_uint_eq(cp, 0xe9);
	ck_assert_uint_eq(r.len, 0);
	cp = 7;
	ck_assert_int_eq(utf8_next(&r, &cp), -EBADMSG);
	ck_assert_uint_eq(cp, 7);
	r = rd_init("\xf0\x9f\x94\x94", 4);
	ck_assert_int_eq(utf8_next(&r, &cp), 0);
	ck_assert_uint_eq(cp, 0x1f514);
}
END_TEST

/* A cut falls between characters, within max, and ends with "...". */
START_TEST(test_utf8_cut)
{
	static const struct {
		const char *in;
		size_t max;
		unsigned flags;
		const char *want;
		bool cut;
	} t[] = {
		{ "a\xc3\xa9", 3, 0, "a\xc3\xa9", false },
		{ "0123456789", 5, 0, "01...", true },
		{ "\xc3\xa9\xc3\xa9\xc3\xa9", 5, 0, "\xc3\xa9...", true },
		{ "\xe2\x82\xac\xe2\x82\xac", 5, 0, "...", true },
		{ "\xff\xff", 5, 0, "...", true }, /* 6 bytes once replaced */
		{ "\xff", 3, 0, R, false },
		{ "abcdef", 2, 0, "..", true },
		{ "abcdef", 0, 0, "", true },
		{ "a\x1b[1m\x7f\tb", 15, UTF8_CONTROLS_QMARK, "a?[1m?\tb", false },
		{ "a\x1b[1m\x7f\tb", 15, 0, "a\x1b[1m\x7f\tb", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char out[16];
		bool cut = !t[i].cut;
		size_t n = utf8_sanitize(t[i].in, strlen(t[i].in), out, t[i].max, t[i].flags, &cut);
		ck_assert_msg(strcmp(out, t[i].want) == 0, "%zu: got \"%s\"", i, out);
		ck_assert_uint_eq(n, strlen(t[i].want));
		ck_assert_msg(cut == t[i].cut, "%zu: cut %d", i, cut);
		ck_assert(n <= t[i].max);
	}
}
END_TEST

START_TEST(test_metrics_render)
{
	metrics_reset();
	struct metric *a = metrics_counter("t_requests_total", "Requests.", "code=\"200\"");
	struct metric *b = metrics_counter("t_requests_total", "Requests.", "code=\"404\"");
	ck_assert_ptr_eq(a, metrics_counter("t_requests_total", "Requests.", "code=\"200\""));
	metric_inc(a, 3);
	metric_inc(b, 1);
	double bounds[] = { 0.1, 1 };
	struct metric *h = metrics_histogram("t_seconds", "Latency.", NULL, bounds, 2);
	metric_observe(h, 0.05);
	metric_observe(h, 0.5);
	metric_observe(h, 5);
	struct metric *g = metrics_gauge("t_gauge", "A gauge.", NULL);
	metric_set(g, 2.5);
	struct buf out = BUF_INIT(1 << 20);
	ck_assert_int_eq(metrics_render(&out), 0);
	const char *want[] = {
		"# HELP t_requests_total Requests.\n# TYPE t_requests_total counter\n"
		"t_requests_total{code=\"200\"} 3\nt_requests_total{code=\"404\"} 1\n",
		"# TYPE t_seconds histogram\n",
		"t_seconds_bucket{le=\"0.1\"} 1\n",
		"t_seconds_bucket{le=\"1\"} 2\n",
		"t_seconds_bucket{le=\"+Inf\"} 3\n",
		"t_seconds_sum 5.55\n",
		"t_seconds_count 3\n",
		"t_gauge 2.5\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_msg(strstr(out.data, want[i]), "missing %s in:\n%s", want[i], out.data);
	/* HELP/TYPE once per name */
	const char *first = strstr(out.data, "# TYPE t_requests_total");
	ck_assert_ptr_null(strstr(first + 1, "# TYPE t_requests_total"));
	buf_free(&out);
	metrics_reset();
}
END_TEST

static void collect(struct buf *out, void *ud)
{
	buf_printf(out, "t_collected %d\n", *(int *)ud);
}

START_TEST(test_metrics_collector)
{
	metrics_reset();
	int v = 42;
	ck_assert_int_eq(metrics_add_collector(collect, &v), 0);
	struct buf out = BUF_INIT(4096);
	metrics_render(&out);
	ck_assert_ptr_nonnull(strstr(out.data, "t_collected 42\n"));
	metrics_remove_collector(collect, &v);
	buf_reset(&out);
	metrics_render(&out);
	ck_assert_ptr_null(out.data ? strstr(out.data, "t_collected") : NULL);
	buf_free(&out);
}
END_TEST

START_TEST(test_log_logfmt)
{
	/* Capture stderr through a pipe: a value with spaces, quotes and a
	 * newline comes out quoted and escaped on one line. */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	int saved = dup(STDERR_FILENO);
	dup2(p[1], STDERR_FILENO);
	log_init(LOG_LVL_INFO, false);
	log_write(LOG_LVL_INFO, "test", LOG_FIELDS({ "MAC", "aa:bb" }, { "HARDWARE", "a b\"\n" }),
		  "hello %s", "world");
	log_debug("test", "not shown");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(p[1]);
	char got[1024] = { 0 };
	ssize_t n = read(p[0], got, sizeof(got) - 1);
	close(p[0]);
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(strstr(got, " level=info subsystem=test msg=\"hello world\" mac=aa:bb "
					  "hardware=\"a b\\\"\\n\"\n"));
	ck_assert_ptr_null(strstr(got, "not shown"));
	ck_assert_ptr_eq(strchr(got, '\n'), got + n - 1); /* one line, escaped newline */
	enum log_level l;
	ck_assert_int_eq(log_level_parse("warning", &l), 0);
	ck_assert_int_eq(l, LOG_LVL_WARN);
	ck_assert_int_eq(log_level_parse("loud", &l), -EINVAL);
}
END_TEST

/* What the sink of test_log_sink received. */
static struct {
	int calls;
	enum log_level level;
	char sub[32];
	char line[256];
} sunk;

static void sink(enum log_level level, const char *subsystem, const char *line)
{
	sunk.calls++;
	sunk.level = level;
	snprintf(sunk.sub, sizeof(sunk.sub), "%s", subsystem);
	snprintf(sunk.line, sizeof(sunk.line), "%s", line);
}

START_TEST(test_log_sink)
{
	/* With a sink, a record goes there as one line, message then
	 * fields, and nothing reaches stderr; with the sink removed, stderr
	 * has it again. */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	int saved = dup(STDERR_FILENO);
	dup2(p[1], STDERR_FILENO);
	log_init(LOG_LVL_INFO, false);
	log_set_sink(sink);
	log_write(LOG_LVL_WARN, "store", LOG_FIELDS({ "MAC", "aa:bb" }, { "HARDWARE", "a b\"" }),
		  "two\nlines\x01 %s", "here");
	ck_assert_int_eq(sunk.calls, 1);
	ck_assert_int_eq(sunk.level, LOG_LVL_WARN);
	ck_assert_str_eq(sunk.sub, "store");
	ck_assert_str_eq(sunk.line, "two\\nlines\\x01 here mac=aa:bb hardware=\"a b\\\"\"");
	log_debug("store", "below the level");
	ck_assert_int_eq(sunk.calls, 1);
	log_write(LOG_LVL_ERROR, NULL, NULL, "plain");
	ck_assert_int_eq(sunk.calls, 2);
	ck_assert_str_eq(sunk.sub, "");
	ck_assert_str_eq(sunk.line, "plain");
	log_set_sink(NULL);
	log_info("test", "to stderr");
	ck_assert_int_eq(sunk.calls, 2);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	char got[1024] = { 0 };
	ssize_t n = read(p[0], got, sizeof(got) - 1);
	close(p[0]);
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_null(strstr(got, "lines"));
	ck_assert_ptr_null(strstr(got, "plain"));
	ck_assert_ptr_nonnull(strstr(got, " level=info subsystem=test msg=\"to stderr\"\n"));
}
END_TEST

START_TEST(test_time)
{
	char s[21];
	time_rfc3339(0, s);
	ck_assert_str_eq(s, "1970-01-01T00:00:00Z");
	time_rfc3339(1795333904, s);
	ck_assert_str_eq(s, "2026-11-22T07:51:44Z");
	ck_assert_uint_gt(now_mono_ns(), 0);
}
END_TEST

START_TEST(test_mac_good)
{
	static const struct {
		const char *s;
		unsigned seps;
		uint8_t want[6];
	} good[] = {
		{ "52:54:00:12:34:56", MAC_COLON, { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 } },
		{ "AA:bb:Cc:0d:0E:ff", MAC_COLON, { 0xaa, 0xbb, 0xcc, 0x0d, 0x0e, 0xff } },
		{ "52-54-00-12-34-56", MAC_DASH, { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 } },
		{ "52:54:00:12:34:56",
		  MAC_COLON | MAC_DASH,
		  { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 } },
		{ "FF-FF-FF-FF-FF-FF",
		  MAC_COLON | MAC_DASH,
		  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
		{ "00:00:00:00:00:00", MAC_COLON, { 0 } },
	};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint8_t m[6];
		ck_assert_msg(mac_parse(good[i].s, strlen(good[i].s), good[i].seps, m) == 0, "%s",
			      good[i].s);
		ck_assert_mem_eq(m, good[i].want, 6);
	}
	/* Only len bytes are read: a MAC followed by a path. */
	uint8_t m[6];
	ck_assert_int_eq(mac_parse("52:54:00:12:34:56/ipxe.efi", 17, MAC_COLON, m), 0);
	ck_assert_uint_eq(m[5], 0x56);
}
END_TEST

/* Malformed: each refused with -EINVAL, the output untouched. */
static const struct {
	const char *s;
	size_t len; /* 0: strlen(s) */
	unsigned seps;
} mac_bad[] = {
	{ "", 0, MAC_COLON | MAC_DASH },
	{ "52:54:00:12:34", 0, MAC_COLON },          /* five bytes */
	{ "52:54:00:12:34:5", 0, MAC_COLON },        /* 16 characters */
	{ "52:54:00:12:34:56:", 0, MAC_COLON },      /* 18 characters */
	{ "52:54:00:12:34:56:78", 0, MAC_COLON },    /* eight bytes */
	{ "525400123456", 0, MAC_COLON | MAC_DASH }, /* no separators */
	{ "5254.0012.3456", 0, MAC_COLON | MAC_DASH },
	{ "52.54.00.12.34.56", 0, MAC_COLON | MAC_DASH },
	{ "52 54 00 12 34 56", 0, MAC_COLON | MAC_DASH },
	{ "52:54-00:12:34:56", 0, MAC_COLON | MAC_DASH }, /* mixed */
	{ "52-54-00-12-34:56", 0, MAC_COLON | MAC_DASH },
	{ "52-54-00-12-34-56", 0, MAC_COLON }, /* dashes where only colons go */
	{ "52:54:00:12:34:56", 0, MAC_DASH },  /* and the other way */
	{ "52:54:00:12:34:56", 0, 0 },         /* no separator allowed */
	{ "g2:54:00:12:34:56", 0, MAC_COLON },
	{ "52:54:00:12:34:5z", 0, MAC_COLON },
	{ "52:54:0x:12:34:56", 0, MAC_COLON },
	{ " 52:54:00:12:34:5", 0, MAC_COLON }, /* shifted by a space */
	{ "525:4:00:12:34:56", 0, MAC_COLON }, /* separator misplaced */
	{ "+2:54:00:12:34:56", 0, MAC_COLON },
	{ "52:54:00\0:12:34:5", 17, MAC_COLON }, /* a NUL inside */
	{ "::::::::::::::::::", 17, MAC_COLON },
	{ "52:54:00:12:34:56", 16, MAC_COLON }, /* len short of the text */
	{ NULL, 17, MAC_COLON },
};

START_TEST(test_mac_bad)
{
	const char *s = mac_bad[_i].s;
	size_t len = mac_bad[_i].len ? mac_bad[_i].len : strlen(s);
	uint8_t m[6] = { 1, 2, 3, 4, 5, 6 };
	const uint8_t keep[6] = { 1, 2, 3, 4, 5, 6 };
	ck_assert_msg(mac_parse(s, len, mac_bad[_i].seps, m) == -EINVAL, "case %d", _i);
	ck_assert_mem_eq(m, keep, 6);
	/* The parser that also takes InfiniBand addresses refuses them too. */
	uint8_t hw[MAC_MAX_LEN];
	memset(hw, 7, sizeof(hw));
	ck_assert_msg(mac_parse_hw(s, len, mac_bad[_i].seps, hw) == -EINVAL, "case %d", _i);
	for (size_t i = 0; i < sizeof(hw); i++)
		ck_assert_uint_eq(hw[i], 7);
}
END_TEST

#define IB_TEXT "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0C"
static const uint8_t ib_bytes[MAC_MAX_LEN] = { 0x80, 0x00, 0x02, 0x08, 0xfe, 0x80, 0x00,
					       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
					       0xc9, 0x03, 0x00, 0x0a, 0x0b, 0x0c };

/* mac_parse_hw: a MAC as mac_parse reads it, or a 20-byte InfiniBand
 * address; the count of bytes comes back. */
START_TEST(test_mac_hw_good)
{
	uint8_t m[MAC_MAX_LEN];
	const uint8_t six[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	ck_assert_int_eq(mac_parse_hw("52:54:00:12:34:56", 17, MAC_COLON, m), 6);
	ck_assert_mem_eq(m, six, 6);
	ck_assert_int_eq(mac_parse_hw("52-54-00-12-34-56", 17, MAC_COLON | MAC_DASH, m), 6);
	ck_assert_mem_eq(m, six, 6);
	ck_assert_int_eq(mac_parse_hw(IB_TEXT, strlen(IB_TEXT), MAC_COLON, m), MAC_MAX_LEN);
	ck_assert_mem_eq(m, ib_bytes, MAC_MAX_LEN);
	char dash[] = IB_TEXT;
	for (size_t i = 2; i + 1 < sizeof(dash); i += 3)
		dash[i] = '-';
	ck_assert_int_eq(mac_parse_hw(dash, strlen(dash), MAC_DASH, m), MAC_MAX_LEN);
	ck_assert_mem_eq(m, ib_bytes, MAC_MAX_LEN);
	/* Only len bytes are read. */
	ck_assert_int_eq(mac_parse_hw(IB_TEXT "/x", strlen(IB_TEXT), MAC_COLON, m), MAC_MAX_LEN);
}
END_TEST

/* The InfiniBand forms that are malformed, and the 20-byte text where
 * only a 48-bit MAC goes. */
static const struct {
	const char *s;
	unsigned seps;
} mac_hw_bad[] = {
	{ "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b", MAC_COLON }, /* 19 */
	{ "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c:0d", MAC_COLON }, /* 21 */
	{ "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c:", MAC_COLON },
	{ "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b-0c", MAC_COLON | MAC_DASH },
	{ "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0g", MAC_COLON },
	{ "80-00-02-08-fe-80-00-00-00-00-00-00-00-02-c9-03-00-0a-0b-0c", MAC_COLON },
	{ "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c", 0 },
	{ "800:0:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c", MAC_COLON }, /* separator misplaced */
	{ " 80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0", MAC_COLON }, /* shifted by a space */
	{ "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c:0d:0e:0f:10", MAC_COLON },
};

START_TEST(test_mac_hw_bad)
{
	const char *s = mac_hw_bad[_i].s;
	uint8_t m[MAC_MAX_LEN];
	memset(m, 7, sizeof(m));
	ck_assert_msg(mac_parse_hw(s, strlen(s), mac_hw_bad[_i].seps, m) == -EINVAL, "case %d",
		      _i);
	for (size_t i = 0; i < sizeof(m); i++)
		ck_assert_uint_eq(m[i], 7);
	/* mac_parse takes 48-bit MACs only. */
	uint8_t six[6] = { 1, 2, 3, 4, 5, 6 };
	ck_assert_int_eq(mac_parse(IB_TEXT, strlen(IB_TEXT), MAC_COLON, six), -EINVAL);
	ck_assert_uint_eq(six[0], 1);
}
END_TEST

START_TEST(test_bootfile_alias)
{
	ck_assert_str_eq(bootfile_alias("snp.efi"), "snp-arm64.efi");
	ck_assert_str_eq(bootfile_alias("snp-arm64.efi"), "snp.efi");
	ck_assert_ptr_null(bootfile_alias("ipxe.efi"));
	ck_assert_ptr_null(bootfile_alias("SNP.EFI"));
	ck_assert_ptr_null(bootfile_alias(""));
	ck_assert_ptr_null(bootfile_alias(NULL));
}
END_TEST

START_TEST(test_ratelimit_bucket)
{
	/* syslog's per-source bucket: 10 a second, 20 at once. */
	struct ratelimit b = { 0 };
	uint64_t t = 1000000000ull;
	int ok = 0;
	for (int i = 0; i < 100; i++)
		ok += ratelimit_allow(&b, t, 10, 20);
	ck_assert_int_eq(ok, 20); /* the burst */
	ck_assert_uint_eq(ratelimit_refused_take(&b), 80);
	ck_assert_uint_eq(ratelimit_refused_take(&b), 0);
	ck_assert(!ratelimit_allow(&b, t + 50000000ull, 10, 20)); /* 0.5 token */
	ck_assert(ratelimit_allow(&b, t + 100000000ull, 10, 20)); /* 1 token after 0.1 s */
	ok = 0;
	for (int i = 0; i < 100; i++)
		ok += ratelimit_allow(&b, t + 10000000000ull, 10, 20); /* long after: full */
	ck_assert_int_eq(ok, 20);
	/* Time that goes backwards refills nothing... */
	ck_assert(!ratelimit_allow(&b, t, 10, 20));
	/* ... and is not counted again when it comes back. */
	ck_assert(!ratelimit_allow(&b, t + 10000000000ull, 10, 20));
	ck_assert_uint_eq(ratelimit_refused_take(&b), 80 + 1 + 1 + 1);

	/* The log lines' bucket: 10 at once, then one a second. */
	struct ratelimit l = { 0 };
	ok = 0;
	for (int i = 0; i < 300; i++)
		ok += ratelimit_allow(&l, t + (uint64_t)i * 1000000ull, 1, 10); /* 0.3 s */
	ck_assert_int_eq(ok, 10);
	ok = 0;
	for (int s = 1; s <= 5; s++)
		for (int i = 0; i < 3; i++)
			ok += ratelimit_allow(&l, t + 300000000ull + (uint64_t)s * 1000000000ull, 1,
					      10);
	ck_assert_int_eq(ok, 5); /* one a second */

	/* Time 0 is a time like another: the bucket still counts as used. */
	struct ratelimit z = { 0 };
	ck_assert(ratelimit_allow(&z, 0, 1, 1));
	ck_assert(!ratelimit_allow(&z, 0, 1, 1));

	/* No refill at rate 0; nothing ever at burst 0. */
	struct ratelimit r0 = { 0 }, b0 = { 0 };
	ck_assert(ratelimit_allow(&r0, t, 0, 1));
	ck_assert(!ratelimit_allow(&r0, t + 100000000000ull, 0, 1));
	ck_assert(!ratelimit_allow(&b0, t, 5, 0));
	ck_assert(!ratelimit_allow(&b0, t + 100000000000ull, 5, 0));

	/* The largest rate and burst, the longest gaps: no overflow. */
	struct ratelimit big = { 0 };
	ck_assert(ratelimit_allow(&big, 1, UINT_MAX, UINT_MAX));
	ck_assert(ratelimit_allow(&big, UINT64_MAX, UINT_MAX, UINT_MAX));
	ck_assert_uint_eq(big.credit, (uint64_t)UINT_MAX * RATELIMIT_UNIT - RATELIMIT_UNIT);
	struct ratelimit slow = { 0 };
	for (unsigned i = 0; i < 3; i++)
		ck_assert(ratelimit_allow(&slow, 1, 1, 3));
	ck_assert(!ratelimit_allow(&slow, 2, 1, 3));
	ck_assert(ratelimit_allow(&slow, UINT64_MAX, 1, 3)); /* refilled, capped at 3 */
	ck_assert_uint_eq(slow.credit, 2 * RATELIMIT_UNIT);
}
END_TEST

START_TEST(test_ratelimit_log)
{
	/* Lines past the burst are held back; the next one let through is
	 * preceded by how many were. */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	int saved = dup(STDERR_FILENO);
	dup2(p[1], STDERR_FILENO);
	log_init(LOG_LVL_INFO, false);
	struct ratelimit rl = { 0 };
	uint64_t t = 5000000000ull;
	int ok = 0;
	for (int i = 0; i < 5; i++)
		ok += ratelimit_log(&rl, t, 1, 2, "test");
	bool later = ratelimit_log(&rl, t + 1000000000ull, 1, 2, "test");
	bool again = ratelimit_log(&rl, t + 1000000000ull, 1, 2, "test");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	char got[1024] = { 0 };
	ssize_t n = read(p[0], got, sizeof(got) - 1);
	close(p[0]);
	ck_assert_int_eq(ok, 2);
	ck_assert(later);
	ck_assert(!again);
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(
		strstr(got, " level=info subsystem=test msg=\"3 similar lines suppressed\"\n"));
	ck_assert_ptr_eq(strchr(got, '\n'), got + n - 1); /* that one line only */
	ck_assert_uint_eq(rl.refused, 1); /* "again", for the next line let through */
}
END_TEST

/* jsonarr_each: elements one by one, each with its own bytes; anything
 * json_loadb() would refuse, or that is not an array of objects and
 * arrays, is refused too. */
static int jsonarr_collect(json_t *v, const char *text, size_t len, size_t index, void *userdata)
{
	json_t *again = json_loadb(text, len, 0, NULL);
	int e = json_equal(v, again) && index == json_array_size(userdata) ? 0 : -EPROTO;
	json_decref(again);
	return e < 0 ? e : json_array_append(userdata, v);
}

static int jsonarr_stop(json_t *v, const char *text, size_t len, size_t index, void *userdata)
{
	(void)v, (void)text, (void)len, (void)userdata;
	return index == 1 ? -ECANCELED : 0;
}

static const struct {
	const char *in;
	int ret;
} jsonarr_cases[] = {
	{ "[]", 0 },
	{ " \t\r\n[ ]\n", 0 },
	{ "[{}]", 0 },
	{ "[{\"a\":1},[1,2],{\"b\":\"}]\"}]", 0 },
	{ "[ {\"a\" : [ {} ] } ,\n {\"c\":\"\\u00e9\xc3\xa9\"} ]  ", 0 },
	{ "", -ENOMSG },
	{ "   ", -ENOMSG },
	{ "{}", -ENOMSG },
	{ "x[]", -ENOMSG },
	{ "\xef\xbb\xbf[]", -ENOMSG },
	{ "[", -EBADMSG },
	{ "[ ", -EBADMSG },
	{ "[{}", -EBADMSG },
	{ "[{},", -EBADMSG },
	{ "[{},]", -EBADMSG },
	{ "[,{}]", -EBADMSG },
	{ "[{}{}]", -EBADMSG },
	{ "[{} {}]", -EBADMSG },
	{ "[1]", -EBADMSG },
	{ "[{}, \"s\"]", -EBADMSG },
	{ "[null]", -EBADMSG },
	{ "[{\"a\":}]", -EBADMSG },
	{ "[{\"a\":1,\"a\":2}]", -EBADMSG },
	{ "[{\"a\":\"\xff\"}]", -EBADMSG },
	{ "[{}] x", -EBADMSG },
	{ "[{}]]", -EBADMSG },
};

START_TEST(test_jsonarr)
{
	const char *in = jsonarr_cases[_i].in;
	size_t len = strlen(in);
	json_t *got = json_array();
	int e = jsonarr_each(in, len, JSON_REJECT_DUPLICATES, jsonarr_collect, got);
	ck_assert_msg(e == jsonarr_cases[_i].ret, "%s: %d", in, e);
	if (e == 0) {
		json_t *whole = json_loadb(in, len, JSON_REJECT_DUPLICATES, NULL);
		ck_assert_msg(json_equal(whole, got), "%s", in);
		json_decref(whole);
	} else if (e == -EBADMSG) {
		/* Refused whole too, unless for a scalar element. */
		json_t *whole = json_loadb(in, len, JSON_REJECT_DUPLICATES, NULL), *v;
		bool scalar = false;
		size_t i;
		json_array_foreach (whole, i, v)
			scalar |= !json_is_object(v) && !json_is_array(v);
		ck_assert_msg(!whole || scalar, "%s: json_loadb takes it", in);
		json_decref(whole);
	}
	json_decref(got);
}
END_TEST

START_TEST(test_jsonarr_embedded)
{
	/* Bytes past len are not read; a NUL inside is refused. */
	static const char in[] = "[{\"a\":1}]garbage";
	ck_assert_int_eq(jsonarr_each(in, 9, 0, jsonarr_stop, NULL), 0);
	ck_assert_int_eq(jsonarr_each(in, 8, 0, jsonarr_stop, NULL), -EBADMSG);
	static const char nul[] = "[{}]\0";
	ck_assert_int_eq(jsonarr_each(nul, sizeof(nul) - 1, 0, jsonarr_stop, NULL), -EBADMSG);
	/* fn's error stops the walk. */
	ck_assert_int_eq(jsonarr_each("[{},{},{}]", 10, 0, jsonarr_stop, NULL), -ECANCELED);
}
END_TEST

/* timerheap: nodes come out in deadline order whatever the order they
 * were armed, re-armed and cancelled in; a cancelled node never comes
 * out; the cap refuses a new node but moves an armed one. */
START_TEST(test_timerheap)
{
	enum { N = 600 };
	static struct timerheap_node nodes[N];
	struct timerheap h = { 0 };
	memset(nodes, 0, sizeof(nodes));
	uint64_t x = 12345;
	for (size_t i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ck_assert_int_eq(timerheap_set(&h, &nodes[i], x >> 40), 0);
	}
	for (size_t i = 0; i < N; i += 3) /* re-armed */
		ck_assert_int_eq(timerheap_set(&h, &nodes[i], nodes[i].at / 2), 0);
	for (size_t i = 1; i < N; i += 5) /* cancelled, twice: the second does nothing */
		timerheap_cancel(&h, &nodes[i]), timerheap_cancel(&h, &nodes[i]);
	size_t left = 0;
	for (size_t i = 0; i < N; i++)
		left += nodes[i].idx != 0;
	ck_assert_uint_eq(h.n, left);
	uint64_t last = 0;
	size_t out = 0;
	for (struct timerheap_node *t; (t = timerheap_top(&h)); out++) {
		ck_assert_uint_ge(t->at, last);
		ck_assert_uint_ne((size_t)(t - nodes) % 5, 1);
		last = t->at;
		timerheap_cancel(&h, t);
		ck_assert_uint_eq(t->idx, 0);
	}
	ck_assert_uint_eq(out, left);
	h.max = 2;
	ck_assert_int_eq(timerheap_set(&h, &nodes[0], 5), 0);
	ck_assert_int_eq(timerheap_set(&h, &nodes[1], 7), 0);
	ck_assert_int_eq(timerheap_set(&h, &nodes[2], 1), -ENOMEM);
	ck_assert_uint_eq(nodes[2].idx, 0);
	ck_assert_int_eq(timerheap_set(&h, &nodes[1], 3), 0);
	ck_assert_ptr_eq(timerheap_top(&h), &nodes[1]);
	timerheap_free(&h);
	ck_assert_ptr_null(timerheap_top(&h));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("common");
	UNIT_TEST(tc, test_buf_cap);
	UNIT_TEST(tc, test_buf_long_printf);
	UNIT_TEST(tc, test_buf_json_string);
	UNIT_TEST(tc, test_num_u64);
	UNIT_TEST(tc, test_num_i64);
	UNIT_TEST(tc, test_num_duration_mode);
	UNIT_TEST(tc, test_cursor);
	tcase_add_loop_test(tc, test_utf8_table, 0, ARRAY_SIZE(utf8_cases));
	UNIT_TEST(tc, test_utf8_next);
	UNIT_TEST(tc, test_utf8_cut);
	UNIT_TEST(tc, test_metrics_render);
	UNIT_TEST(tc, test_metrics_collector);
	UNIT_TEST(tc, test_log_logfmt);
	UNIT_TEST(tc, test_log_sink);
	UNIT_TEST(tc, test_time);
	UNIT_TEST(tc, test_mac_good);
	tcase_add_loop_test(tc, test_mac_bad, 0, (int)ARRAY_SIZE(mac_bad));
	UNIT_TEST(tc, test_mac_hw_good);
	tcase_add_loop_test(tc, test_mac_hw_bad, 0, (int)ARRAY_SIZE(mac_hw_bad));
	UNIT_TEST(tc, test_bootfile_alias);
	UNIT_TEST(tc, test_ratelimit_bucket);
	UNIT_TEST(tc, test_ratelimit_log);
	tcase_add_loop_test(tc, test_jsonarr, 0, (int)ARRAY_SIZE(jsonarr_cases));
	UNIT_TEST(tc, test_jsonarr_embedded);
	UNIT_TEST(tc, test_timerheap);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
