/* check_common — unit tests for the common helpers: bounded buffers, the
 * number parser, the byte cursor, logfmt escaping and the metrics
 * registry's exposition format. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "common/jsonarr.h"
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
	UNIT_TEST(tc, test_metrics_render);
	UNIT_TEST(tc, test_metrics_collector);
	UNIT_TEST(tc, test_log_logfmt);
	UNIT_TEST(tc, test_time);
	tcase_add_loop_test(tc, test_jsonarr, 0, (int)ARRAY_SIZE(jsonarr_cases));
	UNIT_TEST(tc, test_jsonarr_embedded);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
