/* check_jsondec — common/jsondec against json_loadb(): documents it
 * decodes itself (the same tree, the same dump, key order included), a
 * table of malformed text it refuses with jansson's own message, and the
 * inputs it leaves to jansson on purpose (deep nesting, \u0000, numbers
 * out of its range, other flags), which still decode exactly as
 * json_loadb() does them. */
#include "config.h"

#include <string.h>

#include <jansson.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "tests/unit/unit.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17))

/* Fails unless a and b are equal and dump to the same bytes. */
static void assert_same(json_t *a, json_t *b)
{
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert(json_equal(a, b));
	char *da = json_dumps(a, DUMP_FLAGS), *db = json_dumps(b, DUMP_FLAGS);
	ck_assert_ptr_nonnull(da);
	ck_assert_ptr_nonnull(db);
	ck_assert_str_eq(da, db);
	free(da);
	free(db);
}

struct good {
	const char *text;
	size_t flags;
	const char *dump; /* what it dumps to */
};

static const struct good good[] = {
	{ "{}", 0, "{}" },
	{ " \t\r\n[ ] \n", 0, "[]" },
	{ "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}", 0,
	  "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}" },
	/* key order is the text's, not sorted */
	{ "{\"z\":1,\"a\":2,\"m\":3}", 0, "{\"z\":1,\"a\":2,\"m\":3}" },
	/* a duplicate key: the last value, in the first one's place */
	{ "{\"a\":1,\"b\":2,\"a\":3}", 0, "{\"a\":3,\"b\":2}" },
	{ "[0,-0,7,-7,123456789012345678,-123456789012345678]", 0,
	  "[0,0,7,-7,123456789012345678,-123456789012345678]" },
	/* 19 digits: through strtoll */
	{ "[9223372036854775807,-9223372036854775808]", 0,
	  "[9223372036854775807,-9223372036854775808]" },
	{ "[1.5,-2.25,1e3,2E-2,3.0e+1,1e-400]", 0, "[1.5,-2.25,1000.0,0.02,30.0,0.0]" },
	{ "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", 0, "[\"\\\"\\\\/\\b\\f\\n\\r\\t\"]" },
	{ "[\"\\u00e9\\u20AC\\ud83d\\ude00\"]", 0, "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]" },
	{ "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f\"]", 0,
	  "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f\"]" },
	/* an escaped key, then a value whose escapes reuse the buffer */
	{ "{\"k\\u00e9\":\"v\\n\",\"x\\ty\":[\"\\u0041\"]}", 0,
	  "{\"k\xc3\xa9\":\"v\\n\",\"x\\ty\":[\"A\"]}" },
	{ "\"s\"", JSON_DECODE_ANY, "\"s\"" },
	{ " 42 ", JSON_DECODE_ANY, "42" },
	{ "null", JSON_DECODE_ANY, "null" },
	{ "{\"a\":1,\"b\":2}", JSON_REJECT_DUPLICATES, "{\"a\":1,\"b\":2}" },
};

START_TEST(test_good)
{
	const struct good *g = &good[_i];
	size_t n = strlen(g->text);
	json_t *f = jsondec_fast(g->text, n, g->flags);
	json_t *j = json_loadb(g->text, n, g->flags, NULL);
	ck_assert_msg(f, "jsondec refused %s", g->text);
	assert_same(f, j);
	char *d = json_dumps(f, DUMP_FLAGS);
	ck_assert_str_eq(d, g->dump);
	free(d);
	json_decref(f);
	json_decref(j);
}
END_TEST

struct bad {
	const char *text;
	size_t len; /* 0: strlen */
	size_t flags;
};

/* Text jansson refuses: jsondec_fast() refuses it too, and
 * jsondec_loadb() says what json_loadb() says. */
static const struct bad bad[] = {
	{ "", 0, 0 },
	{ "   ", 0, 0 },
	{ "\"top\"", 0, 0 },   /* a scalar without JSON_DECODE_ANY */
	{ "42", 0, 0 },
	{ "{", 0, 0 },
	{ "{\"a\"", 0, 0 },
	{ "{\"a\":", 0, 0 },
	{ "{\"a\":1", 0, 0 },
	{ "{\"a\":1,}", 0, 0 },
	{ "{a:1}", 0, 0 },
	{ "{\"a\" 1}", 0, 0 },
	{ "[1,]", 0, 0 },
	{ "[1 2]", 0, 0 },
	{ "[", 0, 0 },
	{ "{} x", 0, 0 },
	{ "{}{}", 0, 0 },
	{ "[01]", 0, 0 },
	{ "[-]", 0, 0 },
	{ "[1.]", 0, 0 },
	{ "[.5]", 0, 0 },
	{ "[1e]", 0, 0 },
	{ "[1e+]", 0, 0 },
	{ "[+1]", 0, 0 },
	{ "[0x10]", 0, 0 },
	{ "[1e309]", 0, 0 },   /* a real's overflow */
	{ "[-1e309]", 0, 0 },
	{ "[9223372036854775808]", 0, 0 }, /* past json_int_t */
	{ "[-9223372036854775809]", 0, 0 },
	{ "[tru]", 0, 0 },
	{ "[truex]", 0, 0 },
	{ "[nul]", 0, 0 },
	{ "[falsey]", 0, 0 },
	{ "[\"a", 0, 0 },
	{ "[\"a\x01\"]", 0, 0 },     /* a control character */
	{ "[\"\\x41\"]", 0, 0 },     /* no such escape */
	{ "[\"\\n\x01\"]", 0, 0 },   /* a control character after an escape */
	{ "\f[]", 0, 0 },            /* a form feed is not whitespace */
	{ "[1,\f2]", 0, 0 },
	{ "[1]\v", 0, 0 },
	{ "[\"\\u12G4\"]", 0, 0 },
	{ "[\"\\u12\"]", 0, 0 },
	{ "[\"\\", 0, 0 },
	{ "[\"\\udc00\"]", 0, 0 },   /* a lone low surrogate */
	{ "[\"\\ud800\"]", 0, 0 },   /* a lone high one */
	{ "[\"\\ud800\\u0041\"]", 0, 0 },
	{ "[\"\\ud800\\ud800\"]", 0, 0 },
	{ "[\"\\u0000\"]", 0, 0 },   /* U+0000 without JSON_ALLOW_NUL */
	{ "[\"\xc0\xaf\"]", 0, 0 },  /* an overlong form */
	{ "[\"\xed\xa0\x80\"]", 0, 0 }, /* a surrogate in UTF-8 */
	{ "[\"\xf4\x90\x80\x80\"]", 0, 0 }, /* past U+10FFFF */
	{ "[\"\xe2\x82\"]", 0, 0 },  /* cut short */
	{ "[\"\x80\"]", 0, 0 },      /* a lone continuation byte */
	{ "\xef\xbb\xbf{}", 0, 0 },  /* a byte order mark */
	{ "[1]\0", 4, 0 },           /* a NUL after the value */
	{ "[\"a\0b\"]", 7, 0 },      /* a raw NUL in a string */
	{ "{\"a\":1,\"a\":2}", 0, JSON_REJECT_DUPLICATES },
	{ "[{\"b\":{},\"b\":[]}]", 0, JSON_REJECT_DUPLICATES },
};

START_TEST(test_bad)
{
	const struct bad *b = &bad[_i];
	size_t n = b->len ? b->len : strlen(b->text);
	json_error_t ej, ed;
	ck_assert_ptr_null(json_loadb(b->text, n, b->flags, &ej));
	ck_assert_ptr_null(jsondec_fast(b->text, n, b->flags));
	ck_assert_ptr_null(jsondec_loadb(b->text, n, b->flags, &ed));
	ck_assert_str_eq(ed.text, ej.text);
	ck_assert_int_eq(ed.line, ej.line);
	ck_assert_int_eq(ed.column, ej.column);
	ck_assert_int_eq(ed.position, ej.position);
}
END_TEST

/* Valid text jsondec leaves to jansson: jsondec_fast() refuses it, and
 * jsondec_loadb() still gives jansson's tree. */
START_TEST(test_left_to_jansson)
{
	char deep[2 * (JSONDEC_DEPTH_MAX + 1) + 1];
	memset(deep, '[', JSONDEC_DEPTH_MAX + 1);
	memset(deep + JSONDEC_DEPTH_MAX + 1, ']', JSONDEC_DEPTH_MAX + 1);
	deep[sizeof(deep) - 1] = '\0';
	char num[80];
	memset(num, '1', 70);
	memcpy(num + 70, ".5", 3);
	const struct {
		const char *text;
		size_t flags;
	} left[] = {
		{ deep, 0 },
		{ num, JSON_DECODE_ANY },
		{ "[\"a\\u0000b\"]", JSON_ALLOW_NUL },
		{ "[1]", JSON_DECODE_INT_AS_REAL },
		{ "[1] x", JSON_DISABLE_EOF_CHECK },
	};
	for (size_t i = 0; i < ARRAY_SIZE(left); i++) {
		size_t n = strlen(left[i].text);
		ck_assert_ptr_null(jsondec_fast(left[i].text, n, left[i].flags));
		json_t *d = jsondec_loadb(left[i].text, n, left[i].flags, NULL);
		json_t *j = json_loadb(left[i].text, n, left[i].flags, NULL);
		assert_same(d, j);
		json_decref(d);
		json_decref(j);
	}
	/* One level less is decoded here. */
	char edge[2 * JSONDEC_DEPTH_MAX + 1];
	memset(edge, '[', JSONDEC_DEPTH_MAX);
	memset(edge + JSONDEC_DEPTH_MAX, ']', JSONDEC_DEPTH_MAX);
	edge[sizeof(edge) - 1] = '\0';
	json_t *f = jsondec_fast(edge, strlen(edge), 0);
	json_t *j = json_loadb(edge, strlen(edge), 0, NULL);
	assert_same(f, j);
	json_decref(f);
	json_decref(j);
	ck_assert_ptr_null(jsondec_fast(NULL, 0, 0));
}
END_TEST

/* A fleet's Hardware, as the store holds it, and what *error holds after
 * a success. */
START_TEST(test_hardware)
{
	size_t n;
	char *text = unit_fixture("template-ubuntu.hw.json", 1 << 20, &n);
	json_error_t ed, ej;
	memset(&ed, 0x55, sizeof(ed));
	json_t *d = jsondec_loadb(text, n, JSON_REJECT_DUPLICATES, &ed);
	json_t *j = json_loadb(text, n, JSON_REJECT_DUPLICATES, &ej);
	json_t *f = jsondec_fast(text, n, 0);
	ck_assert_ptr_nonnull(f);
	assert_same(f, j);
	assert_same(d, j);
	json_decref(f);
	ck_assert_str_eq(ed.text, ej.text);
	ck_assert_str_eq(ed.source, ej.source);
	ck_assert_int_eq(ed.line, ej.line);
	ck_assert_int_eq(ed.column, ej.column);
	ck_assert_int_eq(ed.position, ej.position);
	json_decref(d);
	json_decref(j);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jsondec");
	TCase *tc = tcase_create("jsondec");
	tcase_add_loop_test(tc, test_good, 0, (int)ARRAY_SIZE(good));
	tcase_add_loop_test(tc, test_bad, 0, (int)ARRAY_SIZE(bad));
	UNIT_TEST(tc, test_left_to_jansson);
	UNIT_TEST(tc, test_hardware);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
