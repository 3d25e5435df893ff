/* check_yamljson — YAML to JSON and back: scalar typing, errors with their
 * positions, multi-document streams, the limits (alias bombs, nesting),
 * and yj_load(yj_dump(v)) == v for values chosen to be awkward. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/yamljson.h"
#include "tests/unit/unit.h"

static json_t *json(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, je.text);
	return v;
}

/* ---- good input: YAML and the JSON it must become ---- */

static const struct {
	const char *yaml;
	const char *json;
} goods[] = {
	{ "a: 1", "{\"a\": 1}" },
	{ "a: -12\nb: +7\nc: 0\nd: 007", "{\"a\": -12, \"b\": 7, \"c\": 0, \"d\": 7}" },
	{ "[0x1F, 0o17, 0x, 0o8]", "[31, 15, \"0x\", \"0o8\"]" },
	{ "[1.5, -2.5e3, .5, 1., 1e3, 1E-2]", "[1.5, -2500.0, 0.5, 1.0, 1000.0, 0.01]" },
	{ "[9223372036854775807, -9223372036854775808, 9223372036854775808]",
	  "[9223372036854775807, -9223372036854775808, 9223372036854775808.0]" },
	{ "[true, True, TRUE, false, False, FALSE, yes, no, on, off, y, tRue]",
	  "[true, true, true, false, false, false, \"yes\", \"no\", \"on\", \"off\", \"y\", \"tRue\"]" },
	{ "[null, Null, NULL, ~, nULL]", "[null, null, null, null, \"nULL\"]" },
	{ "-\n- x\n", "[null, \"x\"]" },
	{ "a:\nb: ~", "{\"a\": null, \"b\": null}" },
	{ "['1', \"true\", 'null', \"\", '']", "[\"1\", \"true\", \"null\", \"\", \"\"]" },
	{ "a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\nc: |-\n  keep\n",
	  "{\"a\": \"line 1\\nline 2\\n\", \"b\": \"folded text\\n\", \"c\": \"keep\"}" },
	{ "a: \"tab\\there\\u00e9\\x41\\0\"", "{\"a\": \"tab\\there\\u00e9A\\u0000\"}" },
	{ "a: 'it''s'", "{\"a\": \"it's\"}" },
	{ "a: héllo wörld ✓", "{\"a\": \"héllo wörld ✓\"}" },
	{ "[!!str 12, !!int \"12\", !!float 3, !!float \"2.5\", !!bool \"false\", !!null '', ! 12]",
	  "[\"12\", 12, 3.0, 2.5, false, null, \"12\"]" },
	{ "!!map {a: !!seq [x]}", "{\"a\": [\"x\"]}" },
	{ "1: one\ntrue: t\nnull: n\n\"q\": 1\n",
	  "{\"1\": \"one\", \"true\": \"t\", \"null\": \"n\", \"q\": 1}" },
	{ "a: &x [1, {b: 2}]\nc: *x\nd: &s str\ne: *s\n",
	  "{\"a\": [1, {\"b\": 2}], \"c\": [1, {\"b\": 2}], \"d\": \"str\", \"e\": \"str\"}" },
	{ "&k key: 1\nother: *k\n", "{\"key\": 1, \"other\": \"key\"}" },
	{ "a: &x 1\nb: &x 2\nc: *x\n", "{\"a\": 1, \"b\": 2, \"c\": 2}" },
	{ "? complex\n: value\n", "{\"complex\": \"value\"}" },
	{ "\"<<\": quoted merge key is a string", "{\"<<\": \"quoted merge key is a string\"}" },
	{ "{}", "{}" },
	{ "[]", "[]" },
	{ "plain scalar document", "\"plain scalar document\"" },
	{ "# only a comment\nk: v # trailing\n", "{\"k\": \"v\"}" },
	{ "{\"apiVersion\": \"v1\", \"items\": [1, 2.5, \"x\", true, null, {}], \"n\": -0}",
	  "{\"apiVersion\": \"v1\", \"items\": [1, 2.5, \"x\", true, null, {}], \"n\": 0}" },
	{ "\xef\xbb\xbf"
	  "a: bom",
	  "{\"a\": \"bom\"}" },
	{ "%YAML 1.2\n---\na: 1\n", "{\"a\": 1}" },
};

START_TEST(test_good)
{
	json_t *got = NULL, *want = json(goods[_i].json);
	struct yj_error e;
	int r = yj_load_one(goods[_i].yaml, strlen(goods[_i].yaml), &got, &e);
	ck_assert_msg(r == 0, "%s: %zu:%zu %s", goods[_i].yaml, e.line, e.column, e.message);
	char *g = json_dumps(got, JSON_ENCODE_ANY);
	ck_assert_msg(json_equal(got, want), "%s gave %s", goods[_i].yaml, g);
	free(g);
	json_decref(got);
	json_decref(want);
}
END_TEST

/* ---- malformed input: where and why ---- */

static const struct {
	const char *yaml;
	size_t document, line, column;
	const char *message;
} bads[] = {
	{ "a: 1\nb: [1, 2\n", 1, 3, 1,
	  "while parsing a flow sequence: did not find expected ',' or ']'" },
	{ "a: b: c\n", 1, 1, 5, "mapping values are not allowed in this context" },
	{ "key: \"unterminated\n", 1, 2, 1,
	  "while scanning a quoted scalar: found unexpected end of stream" },
	{ "a:\n  - x\n  y: 1\n", 1, 3, 3,
	  "while parsing a block collection: did not find expected '-' indicator" },
	{ "x: @foo\n", 1, 1, 4,
	  "while scanning for the next token: found character that cannot start any token" },
	{ "a: 1\n---\nb: {c: [1, }\n", 2, 3, 12,
	  "while parsing a flow node: did not find expected node content" },
	{ "a: &x 1\nb: *y\n", 1, 2, 4, "undefined alias \"y\"" },
	{ "a: 1\nb: 2\na: 3\n", 1, 3, 1, "duplicate key \"a\"" },
	{ "{a: 1, a: 1}\n", 1, 1, 8, "duplicate key \"a\"" },
	{ "&k a: 1\n*k : 2\n", 1, 2, 1, "duplicate key \"a\"" },
	{ "? [1, 2]\n: x\n", 1, 1, 3, "mapping keys must be scalars" },
	{ "? {a: 1}\n: x\n", 1, 1, 3, "mapping keys must be scalars" },
	{ "base: &b {a: 1}\nderived:\n  <<: *b\n", 1, 3, 3, "merge keys (<<) are not supported" },
	{ "a: .nan\n", 1, 1, 4, "NaN and infinity are not valid JSON numbers" },
	{ "a: [1, -.inf]\n", 1, 1, 8, "NaN and infinity are not valid JSON numbers" },
	{ "a: !!float .Inf\n", 1, 1, 4, "NaN and infinity are not valid JSON numbers" },
	{ "a: 1e400\n", 1, 1, 4, "number out of range" },
	{ "a: !!binary aGk=\n", 1, 1, 4, "unsupported tag \"!!binary\"" },
	{ "a: !custom x\n", 1, 1, 4, "unsupported tag \"!custom\"" },
	{ "a: !!set {x}\n", 1, 1, 4, "unsupported tag \"!!set\" on a mapping" },
	{ "a: !!int 1.5\n", 1, 1, 4, "\"1.5\" is not an integer" },
	{ "a: !!bool yes\n", 1, 1, 4, "\"yes\" is not a boolean" },
	{ "a: !!null x\n", 1, 1, 4, "\"x\" is not a null" },
	{ "a: !!float abc\n", 1, 1, 4, "\"abc\" is not a float" },
	{ "k: v\n---\nk: v\n---\n- [\n", 3, 6, 1,
	  "while parsing a flow node: did not find expected node content" },
	{ "a: \"\xff\"\n", 1, 1, 5, "invalid leading UTF-8 octet" },
	{ "a: b\n\tc: d\n", 1, 2, 1,
	  "while scanning a plain scalar: found a tab character that violates indentation" },
	{ "\"a\\0b\": 1\n", 1, 1, 1, "mapping key contains a NUL byte" },
	{ "s: &s {a: 1}\n*s : x\n", 1, 2, 1, "an alias used as a mapping key must name a string" },
};

START_TEST(test_bad)
{
	json_t *docs = (json_t *)0x1;
	size_t *lines = (size_t *)0x1;
	struct yj_error e;
	int r = yj_load(bads[_i].yaml, strlen(bads[_i].yaml), &docs, &lines, &e);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_eq(docs, (json_t *)0x1); /* outputs untouched */
	ck_assert_ptr_eq(lines, (size_t *)0x1);
	ck_assert_str_eq(e.message, bads[_i].message);
	ck_assert_uint_eq(e.document, bads[_i].document);
	ck_assert_uint_eq(e.line, bads[_i].line);
	ck_assert_uint_eq(e.column, bads[_i].column);
}
END_TEST

/* Input is taken by length: a NUL byte is a character libyaml refuses, and
 * nothing past len is read. */
START_TEST(test_byte_bounded)
{
	static const char with_nul[] = "a: 1\0b: 2";
	json_t *docs = NULL;
	struct yj_error e;
	ck_assert_int_eq(yj_load(with_nul, sizeof(with_nul) - 1, &docs, NULL, &e), -EINVAL);
	ck_assert_uint_eq(e.line, 1);
	ck_assert_uint_eq(e.column, 5);
	ck_assert_str_eq(e.message, "control characters are not allowed");

	/* only the first 4 bytes of "a: 12345" */
	ck_assert_int_eq(yj_load("a: 12345", 4, &docs, NULL, &e), 0);
	json_t *want = json("[{\"a\": 1}]");
	ck_assert(json_equal(docs, want));
	json_decref(want);
	json_decref(docs);

	ck_assert_int_eq(yj_load("", 0, &docs, NULL, &e), 0);
	ck_assert_uint_eq(json_array_size(docs), 0);
	json_decref(docs);
	ck_assert_int_eq(yj_load(NULL, 0, &docs, NULL, NULL), 0);
	json_decref(docs);
}
END_TEST

/* ---- streams ---- */

START_TEST(test_multi_document)
{
	static const char yaml[] = "# leading comment\n"
				   "\n"
				   "kind: Hardware\n" /* 3 */
				   "---\n"            /* 4 */
				   "# a document of comments only\n"
				   "---\n" /* 6: null, skipped */
				   "null\n"
				   "--- \n" /* 8 */
				   "kind: Template\n"
				   "...\n"
				   "---\n" /* 11 */
				   "[1, 2]\n"
				   "--- scalar\n"; /* 13 */
	json_t *docs = NULL;
	size_t *lines = NULL;
	struct yj_error e;
	ck_assert_int_eq(yj_load(yaml, sizeof(yaml) - 1, &docs, &lines, &e), 0);
	json_t *want =
		json("[{\"kind\": \"Hardware\"}, {\"kind\": \"Template\"}, [1, 2], \"scalar\"]");
	ck_assert(json_equal(docs, want));
	ck_assert_uint_eq(lines[0], 3);
	ck_assert_uint_eq(lines[1], 8);
	ck_assert_uint_eq(lines[2], 11);
	ck_assert_uint_eq(lines[3], 13);
	json_decref(want);
	json_decref(docs);
	free(lines);

	/* anchors do not cross documents */
	static const char cross[] = "a: &x 1\n---\nb: *x\n";
	ck_assert_int_eq(yj_load(cross, sizeof(cross) - 1, &docs, NULL, &e), -EINVAL);
	ck_assert_uint_eq(e.document, 2);
	ck_assert_uint_eq(e.line, 3);
	ck_assert_str_eq(e.message, "undefined alias \"x\"");
}
END_TEST

/* yj_load_each: the documents yj_load() gives, one at a time, with their
 * lines; those before a syntax error are given, then the error; the
 * callback's error stops the stream. */
struct each_got {
	json_t *docs;
	size_t lines[8], n, stop_at;
};

static int each_doc(json_t *doc, size_t line, void *userdata)
{
	struct each_got *g = userdata;
	if (g->n == g->stop_at)
		return -ECANCELED;
	if (g->n < 8)
		g->lines[g->n] = line;
	g->n++;
	return json_array_append(g->docs, doc);
}

START_TEST(test_load_each)
{
	static const char yaml[] = "kind: Hardware\n---\n# only comments\n---\nnull\n--- \n"
				   "kind: Template\n---\n[1, 2]\n";
	static const char bad[] = "a: 1\n---\nb: [\n---\nc: 3\n";
	struct each_got g = { .docs = json_array(), .stop_at = 99 };
	json_t *docs = NULL;
	size_t *lines = NULL;
	struct yj_error e;

	ck_assert_int_eq(yj_load(yaml, sizeof(yaml) - 1, &docs, &lines, &e), 0);
	ck_assert_int_eq(yj_load_each(yaml, sizeof(yaml) - 1, each_doc, &g, &e), 0);
	ck_assert(json_equal(docs, g.docs));
	ck_assert_uint_eq(g.n, 3);
	for (size_t i = 0; i < g.n; i++)
		ck_assert_uint_eq(g.lines[i], lines[i]);
	json_decref(docs);
	free(lines);

	json_array_clear(g.docs);
	g.n = 0;
	ck_assert_int_eq(yj_load_each(bad, sizeof(bad) - 1, each_doc, &g, &e), -EINVAL);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_uint_eq(e.document, 2);
	ck_assert_uint_eq(e.line, 4);
	ck_assert_str_ne(e.message, "");

	json_array_clear(g.docs);
	g.n = 0;
	g.stop_at = 1;
	ck_assert_int_eq(yj_load_each(yaml, sizeof(yaml) - 1, each_doc, &g, &e), -ECANCELED);
	ck_assert_uint_eq(g.n, 1);
	json_decref(g.docs);
}
END_TEST

START_TEST(test_load_one)
{
	json_t *v = NULL;
	struct yj_error e;
	static const char two[] = "a: 1\n---\nb: 2\n";
	ck_assert_int_eq(yj_load_one(two, sizeof(two) - 1, &v, &e), -EINVAL);
	ck_assert_ptr_null(v);
	ck_assert_uint_eq(e.document, 2);
	ck_assert_uint_eq(e.line, 2);
	ck_assert_str_eq(e.message, "expected one document, found more");
	ck_assert_int_eq(yj_load_one("# nothing\n", 10, &v, &e), -EINVAL);
	ck_assert_str_eq(e.message, "no document");
	ck_assert_int_eq(yj_load_one("---\nx\n", 6, &v, &e), 0);
	ck_assert_str_eq(json_string_value(v), "x");
	json_decref(v);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_alias_bomb)
{
	/* ten levels of ten aliases each: 10^10 nodes if expanded */
	struct buf b = BUF_INIT(1 << 16);
	buf_puts(&b, "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 10; i++) {
		buf_printf(&b, "l%d: &l%d [", i, i);
		for (int k = 0; k < 10; k++)
			buf_printf(&b, "%s*l%d", k ? ", " : "", i - 1);
		buf_puts(&b, "]\n");
	}
	json_t *docs = NULL;
	struct yj_error e;
	ck_assert_int_eq(yj_load(b.data, b.len, &docs, NULL, &e), -EINVAL);
	ck_assert_str_eq(e.message, "too many nodes (more than 1000000, aliases expanded)");
	ck_assert_uint_eq(e.document, 1);
	ck_assert_uint_ge(e.line, 5);
	buf_free(&b);

	/* a few aliases are fine */
	static const char ok[] = "a: &a [1, 2]\nb: [*a, *a, *a]\n";
	ck_assert_int_eq(yj_load(ok, sizeof(ok) - 1, &docs, NULL, &e), 0);
	json_t *want = json("[{\"a\": [1, 2], \"b\": [[1, 2], [1, 2], [1, 2]]}]");
	ck_assert(json_equal(docs, want));
	/* expanded, not shared: editing one copy leaves the others alone */
	json_t *b0 = json_array_get(json_object_get(json_array_get(docs, 0), "b"), 0);
	json_array_append_new(b0, json_integer(3));
	ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(docs, 0), "a")), 2);
	json_decref(want);
	json_decref(docs);
}
END_TEST

static char *nested(int depth)
{
	struct buf b = BUF_INIT(1 << 20);
	for (int i = 0; i < depth; i++)
		buf_putc(&b, '[');
	for (int i = 0; i < depth; i++)
		buf_putc(&b, ']');
	return buf_steal(&b);
}

START_TEST(test_depth)
{
	json_t *docs = NULL;
	struct yj_error e;
	char *s = nested(YJ_MAX_DEPTH);
	ck_assert_int_eq(yj_load(s, strlen(s), &docs, NULL, &e), 0);
	json_decref(docs);
	free(s);

	s = nested(YJ_MAX_DEPTH + 1);
	ck_assert_int_eq(yj_load(s, strlen(s), &docs, NULL, &e), -EINVAL);
	ck_assert_str_eq(e.message, "nesting deeper than 64 levels");
	ck_assert_uint_eq(e.line, 1);
	ck_assert_uint_eq(e.column, YJ_MAX_DEPTH + 1);
	free(s);

	s = nested(100000);
	ck_assert_int_eq(yj_load(s, strlen(s), &docs, NULL, &e), -EINVAL);
	free(s);

	/* an alias must not make the tree deeper than the limit either */
	struct buf b = BUF_INIT(1 << 16);
	buf_puts(&b, "a: &a ");
	for (int i = 0; i < 40; i++)
		buf_putc(&b, '[');
	for (int i = 0; i < 40; i++)
		buf_putc(&b, ']');
	buf_puts(&b, "\nb: ");
	for (int i = 0; i < 30; i++)
		buf_putc(&b, '[');
	buf_puts(&b, "*a");
	for (int i = 0; i < 30; i++)
		buf_putc(&b, ']');
	buf_putc(&b, '\n');
	ck_assert_int_eq(yj_load(b.data, b.len, &docs, NULL, &e), -EINVAL);
	ck_assert_str_eq(e.message, "nesting deeper than 64 levels");
	ck_assert_uint_eq(e.line, 2);
	buf_free(&b);
}
END_TEST

/* ---- dumping ---- */

START_TEST(test_dump_format)
{
	json_t *v = json("{\"apiVersion\": \"tinkerbell.org/v1alpha1\", \"kind\": \"Hardware\","
			 " \"spec\": {\"interfaces\": [{\"dhcp\": {\"mac\": \"aa:bb:cc:dd:ee:ff\","
			 " \"uefi\": true, \"lease_time\": 86400}}], \"disks\": [],"
			 " \"metadata\": {}, \"vlan\": \"100\", \"ratio\": 0.5, \"none\": null,"
			 " \"userData\": \"#cloud-config\\nhostname: a\\n\"}}");
	struct buf out = BUF_INIT(1 << 16);
	buf_puts(&out, "---\n");
	ck_assert_int_eq(yj_dump(v, &out), 0);
	ck_assert_str_eq(out.data, "---\n"
				   "apiVersion: tinkerbell.org/v1alpha1\n"
				   "kind: Hardware\n"
				   "spec:\n"
				   "  interfaces:\n"
				   "  - dhcp:\n"
				   "      mac: aa:bb:cc:dd:ee:ff\n"
				   "      uefi: true\n"
				   "      lease_time: 86400\n"
				   "  disks: []\n"
				   "  metadata: {}\n"
				   "  vlan: \"100\"\n"
				   "  ratio: 0.5\n"
				   "  none: null\n"
				   "  userData: |\n"
				   "    #cloud-config\n"
				   "    hostname: a\n");
	json_decref(v);
	buf_free(&out);
}
END_TEST

/* Strings that must be quoted to stay strings, and how. */
static const struct {
	const char *json;
	const char *yaml;
} dump_exact[] = {
	{ "\"yes\"", "\"yes\"\n" },
	{ "\"1\"", "\"1\"\n" },
	{ "\"null\"", "\"null\"\n" },
	{ "\"\"", "\"\"\n" },
	{ "\"~\"", "\"~\"\n" },
	{ "\"0x10\"", "\"0x10\"\n" },
	{ "\"1e3\"", "\"1e3\"\n" },
	{ "\"2001-12-14\"", "\"2001-12-14\"\n" },
	{ "\"12:30\"", "\"12:30\"\n" },
	{ "\".inf\"", "\".inf\"\n" },
	{ "\"<<\"", "\"<<\"\n" },
	{ "\"plain words\"", "plain words\n" },
	{ "1.0", "1.0\n" },
	{ "100000000000000000000.0", "1.0e+20\n" },
	{ "-7", "-7\n" },
	{ "{\"true\": \"false\"}", "\"true\": \"false\"\n" },
};

START_TEST(test_dump_exact)
{
	json_t *v = json(dump_exact[_i].json);
	struct buf out = BUF_INIT(1 << 12);
	ck_assert_int_eq(yj_dump(v, &out), 0);
	ck_assert_str_eq(out.data, dump_exact[_i].yaml);
	json_decref(v);
	buf_free(&out);
}
END_TEST

/* yj_load(yj_dump(v)) == v */
static const char *const round_trips[] = {
	"[\"yes\", \"no\", \"on\", \"off\", \"y\", \"n\", \"Y\", \"NO\", \"True\", \"FALSE\"]",
	"[\"1\", \"-1\", \"+1\", \"007\", \"0o7\", \"0x1F\", \"1.5\", \".5\", \"1e3\", \"1_000\", \"0b101\"]",
	"[\"null\", \"Null\", \"~\", \"\", \".nan\", \".inf\", \"-.Inf\"]",
	"[\" a\", \"a \", \"  \", \"\\t\", \"a: b\", \"a:b\", \"#x\", \"a #b\", \"a#b\", \"- x\", \"-\", \"?\", \":\"]",
	"[\"'\", \"\\\"\", \"\\\\\", \"[x]\", \"{x}\", \"&a\", \"*a\", \"!t\", \"%x\", \"@x\", \"`x\", \"|\", \">\", \",\"]",
	"[\"---\", \"...\", \"--- x\", \"<<\", \"=\"]",
	"[\"line1\\nline2\", \"trailing\\n\", \"two\\n\\n\", \"\\nleading\", \"  indented\\nx\", \"a \\nb\", \"\\n\"]",
	"[\"tab\\tinside\", \"cr\\r\\n\", \"nul\\u0000byte\", \"bell\\u0007\", \"del\\u007f\", \"nel\\u0085\", \"ls\\u2028ps\\u2029\", \"bom\\ufeff\"]",
	"[\"héllo\", \"日本語\", \"emoji 😀\", \"\\u00a0nbsp\"]",
	"{\"\": 1, \" \": 2, \"a: b\": 3, \"#\": 4, \"yes\": 5, \"1\": 6, \"null\": 7, \"multi\\nline\": 8}",
	"{\"k\": {}, \"l\": [], \"m\": [[]], \"n\": [{}], \"o\": [[1, [2, [3]]]], \"p\": {\"q\": {\"r\": {}}}}",
	"[0, -0, 1, -1, 9223372036854775807, -9223372036854775808]",
	"[0.0, -0.0, 0.1, 1.5, -2.25, 1e-300, 1.7976931348623157e308, 5e-324, 123456789.123456789, 1e20, 3.0]",
	"[true, false, null, [null], {\"x\": null}]",
	"\"plain\"",
	"\"\"",
	"42",
	"{\"long\": \"" /* a long plain string and a long key: no folding, explicit key */
	"aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd eeeeeeeeee ffffffffff gggggggggg hhhhhhhhhh "
	"iiiiiiiiii jjjjjjjjjj kkkkkkkkkk llllllllll mmmmmmmmmm nnnnnnnnnn\", "
	"\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
	"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\": 1}",
};

START_TEST(test_round_trip)
{
	json_t *v = json(round_trips[_i]), *again = NULL;
	struct buf out = BUF_INIT(1 << 16);
	struct yj_error e;
	ck_assert_int_eq(yj_dump(v, &out), 0);
	int r = yj_load_one(out.data, out.len, &again, &e);
	ck_assert_msg(r == 0, "%s -> %s: %zu:%zu %s", round_trips[_i], out.data, e.line, e.column,
		      e.message);
	char *g = json_dumps(again, JSON_ENCODE_ANY);
	ck_assert_msg(json_equal(v, again), "%s -> %s -> %s", round_trips[_i], out.data, g);
	free(g);
	json_decref(again);
	json_decref(v);
	buf_free(&out);
}
END_TEST

START_TEST(test_dump_limits)
{
	json_t *v = json("{\"a\": \"0123456789012345678901234567890123456789\"}");
	struct buf out = BUF_INIT(16);
	buf_puts(&out, "keep");
	ck_assert_int_eq(yj_dump(v, &out), -E2BIG);
	ck_assert_str_eq(out.data, "keep"); /* unchanged on failure */
	ck_assert_uint_eq(out.len, 4);
	json_decref(v);
	buf_free(&out);

	/* deeper than yj_load would take back */
	json_t *deep = json_array(), *cur = deep;
	for (int i = 0; i < YJ_MAX_DEPTH; i++) {
		json_t *n = json_array();
		json_array_append_new(cur, n);
		cur = n;
	}
	struct buf o2 = BUF_INIT(1 << 16);
	ck_assert_int_eq(yj_dump(deep, &o2), -EINVAL);
	ck_assert_uint_eq(o2.len, 0);
	json_decref(deep);
	buf_free(&o2);
	ck_assert_int_eq(yj_dump(NULL, &o2), -EINVAL);
}
END_TEST

static Suite *yamljson_suite(void)
{
	Suite *s = suite_create("yamljson");
	TCase *tc = tcase_create("yamljson");
	tcase_add_loop_test(tc, test_good, 0, (int)(sizeof(goods) / sizeof(goods[0])));
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	UNIT_TEST(tc, test_byte_bounded);
	UNIT_TEST(tc, test_multi_document);
	UNIT_TEST(tc, test_load_each);
	UNIT_TEST(tc, test_load_one);
	UNIT_TEST(tc, test_alias_bomb);
	UNIT_TEST(tc, test_depth);
	UNIT_TEST(tc, test_dump_format);
	tcase_add_loop_test(tc, test_dump_exact, 0,
			    (int)(sizeof(dump_exact) / sizeof(dump_exact[0])));
	tcase_add_loop_test(tc, test_round_trip, 0,
			    (int)(sizeof(round_trips) / sizeof(round_trips[0])));
	UNIT_TEST(tc, test_dump_limits);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(yamljson_suite());
}
