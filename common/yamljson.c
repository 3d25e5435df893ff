/* yamljson — YAML (libyaml) to JSON (jansson). See yamljson.h; the way back
 * is yamljson-dump.c.
 *
 * Loading walks libyaml's event stream (yaml_parser_parse) and builds the
 * jansson tree with an explicit stack of open collections, at most
 * YJ_MAX_DEPTH deep, so no input can make us recurse. Plain scalars are
 * typed by the YAML 1.2 core schema (YAML 1.2.2 §10.3.2); quoted and block
 * scalars are strings; the few yaml.org tags a person might write (!!str,
 * !!int, !!float, !!bool, !!null, !!map, !!seq) are honoured and any other
 * tag is refused rather than guessed at. JSON has no NaN or infinity, so
 * .nan/.inf (and a float literal that overflows) are errors.
 *
 * Anchors live for one document, in a jansson object keyed by anchor name
 * whose values remember the node, the number of nodes in its subtree and
 * its height. An alias is a deep copy (callers may edit what they get
 * back), allowed only while the total number of nodes produced stays under
 * YJ_MAX_NODES and the copy does not make the tree deeper than
 * YJ_MAX_DEPTH: a "billion laughs" document is refused after a bounded
 * amount of work, and later code may recurse over any tree we return.
 *
 * The core-schema typing of a plain scalar (yj_plain_type) is shared with
 * the dumper through yamljson-internal.h, so that what the dumper leaves
 * plain is what the loader reads back as a string. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/num.h"
#include "common/yamljson-internal.h"
#include "common/yamljson.h"

#define YJ_TAG(x) "tag:yaml.org,2002:" x
#define YJ_QUOTE_MAX 40 /* bytes of a value quoted in an error message */

/* ---- scalar resolution (YAML 1.2 core schema) ---- */

static bool yj_eq(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* Whether the n bytes at s are one of words (a NULL-terminated list of
 * NUL-terminated strings), compared exactly. */
bool yj_any(const char *s, size_t n, const char *const *words)
{
	for (; *words; words++)
		if (yj_eq(s, n, *words))
			return true;
	return false;
}

static bool yj_digits(const char *s, size_t n, const char *set)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\0' || !strchr(set, s[i]))
			return false;
	return true;
}

#define YJ_DEC "0123456789"
#define YJ_OCT "01234567"
#define YJ_HEX "0123456789abcdefABCDEF"

static bool yj_is_int(const char *s, size_t n)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x'))
		return yj_digits(s + 2, n - 2, s[1] == 'o' ? YJ_OCT : YJ_HEX);
	if (n > 0 && (s[0] == '-' || s[0] == '+'))
		s++, n--;
	return yj_digits(s, n, YJ_DEC);
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool yj_is_float(const char *s, size_t n)
{
	size_t i = 0, d = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, d++;
	if (i < n && s[i] == '.') {
		i++;
		size_t f = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, f++;
		if (d == 0 && f == 0)
			return false;
	} else if (d == 0) {
		return false;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		size_t e = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, e++;
		if (e == 0)
			return false;
	}
	return i == n;
}

static const char *const yj_null_words[] = { "", "~", "null", "Null", "NULL", NULL };
static const char *const yj_true_words[] = { "true", "True", "TRUE", NULL };
static const char *const yj_false_words[] = { "false", "False", "FALSE", NULL };
static const char *const yj_special_words[] = { ".inf",  "+.inf", "-.inf", ".Inf",  "+.Inf",
						"-.Inf", ".INF",  "+.INF", "-.INF", ".nan",
						".NaN",  ".NAN",  NULL };

/* What the plain scalar of n bytes at s means in the core schema: the
 * type the loader gives it when it carries no tag. Pure. */
enum yj_type yj_plain_type(const char *s, size_t n)
{
	if (yj_any(s, n, yj_null_words))
		return YJ_NULL;
	if (yj_any(s, n, yj_true_words) || yj_any(s, n, yj_false_words))
		return YJ_BOOL;
	if (yj_is_int(s, n))
		return YJ_INT;
	if (yj_is_float(s, n))
		return YJ_FLOAT;
	if (yj_any(s, n, yj_special_words))
		return YJ_SPECIAL_FLOAT;
	return YJ_STR;
}

/* Writes s as a short, escaped, quoted excerpt for an error message. */
static void yj_excerpt(char *dst, size_t dstlen, const char *s, size_t n)
{
	struct buf b = BUF_INIT(dstlen > 8 ? dstlen - 8 : 0);
	size_t cut = n > YJ_QUOTE_MAX ? YJ_QUOTE_MAX : n;
	while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--; /* do not split a UTF-8 sequence */
	if (buf_put_json_string(&b, s, cut) == 0 && cut < n)
		buf_puts(&b, "...");
	snprintf(dst, dstlen, "%s", b.data ? b.data : "\"\"");
	buf_free(&b);
}

/* A tag for a message: "!!binary" rather than the expanded form. */
static void yj_tag_excerpt(char *dst, size_t dstlen, const char *tag)
{
	static const char prefix[] = YJ_TAG("");
	char shortened[YJ_QUOTE_MAX + 3];
	if (strncmp(tag, prefix, sizeof(prefix) - 1) == 0) {
		snprintf(shortened, sizeof(shortened), "!!%s", tag + sizeof(prefix) - 1);
		tag = shortened;
	}
	yj_excerpt(dst, dstlen, tag, strlen(tag));
}

/* ---- loader ---- */

struct yj_frame {
	json_t *node;  /* the array or object being filled (owned) */
	char *key;     /* object: the key waiting for its value, or NULL */
	char *anchor;  /* anchor to register when the collection closes, or NULL */
	size_t nodes;  /* nodes in this subtree, itself and keys included */
	size_t height; /* collections on the longest path down, itself included */
};

struct yj_loader {
	const char *data;
	size_t len;
	struct yj_error *err;
	struct yj_frame stack[YJ_MAX_DEPTH];
	size_t depth;
	json_t *anchors; /* name -> [node, nodes, height], this document's */
	size_t nodes;    /* nodes produced in the whole stream */
	size_t document; /* documents started */
	bool in_document;
	json_t *root; /* the finished root of the current document */
	json_t *docs;
	yj_each_fn each; /* when set, documents go to it rather than docs */
	void *userdata;
	size_t *lines;
	size_t nlines, alines;
	size_t doc_line;
};

static int yj_fail(struct yj_loader *ld, const yaml_mark_t *mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int yj_fail(struct yj_loader *ld, const yaml_mark_t *mark, const char *fmt, ...)
{
	struct yj_error *e = ld->err;
	va_list ap;
	e->document = ld->document + (ld->in_document ? 0 : 1);
	if (e->document == 0)
		e->document = 1;
	e->line = mark ? mark->line + 1 : 1;
	e->column = mark ? mark->column + 1 : 1;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool yj_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t len;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* Integer from a core-schema int form; out of int64 range becomes a real. */
static int yj_make_int(struct yj_loader *ld, const yaml_event_t *ev, const char *s, size_t n,
		       json_t **ret)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
		unsigned base = s[1] == 'o' ? 8 : 16;
		uint64_t v = 0;
		double dv = 0;
		bool big = false;
		for (size_t i = 2; i < n; i++) {
			unsigned d =
				(unsigned)(s[i] <= '9' ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
			if (!big && v > (UINT64_MAX - d) / base) {
				big = true;
				dv = (double)v;
			}
			if (big)
				dv = dv * base + d;
			else
				v = v * base + d;
		}
		if (!big && v <= INT64_MAX)
			*ret = json_integer((json_int_t)v);
		else if (!big)
			*ret = json_real((double)v);
		else if (isfinite(dv))
			*ret = json_real(dv);
		else
			return yj_fail(ld, &ev->start_mark, "number out of range");
		return *ret ? 0 : -ENOMEM;
	}
	int64_t v;
	const char *p = s[0] == '+' ? s + 1 : s;
	int r = num_parse_i64(p, n - (size_t)(p - s), INT64_MIN, INT64_MAX, &v);
	if (r == 0) {
		*ret = json_integer((json_int_t)v);
		return *ret ? 0 : -ENOMEM;
	}
	/* Too large for int64: a real, as a JSON decoder would make it. The
	 * value is NUL-terminated by libyaml and checked by yj_is_int. */
	double d = strtod(s, NULL);
	if (!isfinite(d))
		return yj_fail(ld, &ev->start_mark, "number out of range");
	*ret = json_real(d);
	return *ret ? 0 : -ENOMEM;
}

static int yj_make_float(struct yj_loader *ld, const yaml_event_t *ev, const char *s, size_t n,
			 json_t **ret)
{
	char *end;
	double d = strtod(s, &end);
	if (end != s + n)
		return yj_fail(ld, &ev->start_mark, "malformed number");
	if (!isfinite(d))
		return yj_fail(ld, &ev->start_mark, "number out of range");
	*ret = json_real(d);
	return *ret ? 0 : -ENOMEM;
}

static int yj_make_string(struct yj_loader *ld, const yaml_event_t *ev, const char *s, size_t n,
			  json_t **ret)
{
	if (!yj_utf8_valid((const unsigned char *)s, n))
		return yj_fail(ld, &ev->start_mark, "string is not valid UTF-8");
	*ret = json_stringn_nocheck(s, n);
	return *ret ? 0 : -ENOMEM;
}

/* Types a scalar event: by its tag if it has one, else by its style and,
 * when plain, by the core schema. */
static int yj_resolve(struct yj_loader *ld, const yaml_event_t *ev, json_t **ret)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	char ex[64];
	enum yj_type t;

	if (tag && strcmp(tag, "!") != 0) {
		enum yj_type pt = yj_plain_type(s, n);
		const char *want;
		if (strcmp(tag, YJ_TAG("str")) == 0)
			return yj_make_string(ld, ev, s, n, ret);
		if (strcmp(tag, YJ_TAG("null")) == 0)
			t = YJ_NULL, want = "a null";
		else if (strcmp(tag, YJ_TAG("bool")) == 0)
			t = YJ_BOOL, want = "a boolean";
		else if (strcmp(tag, YJ_TAG("int")) == 0)
			t = YJ_INT, want = "an integer";
		else if (strcmp(tag, YJ_TAG("float")) == 0)
			t = YJ_FLOAT, want = "a float";
		else {
			yj_tag_excerpt(ex, sizeof(ex), tag);
			return yj_fail(ld, &ev->start_mark, "unsupported tag %s", ex);
		}
		if (t == YJ_FLOAT && pt == YJ_INT && s[1] != 'o' && s[1] != 'x')
			pt = YJ_FLOAT; /* !!float 1 is 1.0 */
		if (t == YJ_FLOAT && pt == YJ_SPECIAL_FLOAT)
			return yj_fail(ld, &ev->start_mark,
				       "NaN and infinity are not valid JSON numbers");
		if (pt != t) {
			yj_excerpt(ex, sizeof(ex), s, n);
			return yj_fail(ld, &ev->start_mark, "%s is not %s", ex, want);
		}
	} else if (tag || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		return yj_make_string(ld, ev, s, n, ret);
	} else {
		t = yj_plain_type(s, n);
	}

	switch (t) {
	case YJ_NULL: *ret = json_null(); return 0;
	case YJ_BOOL: *ret = json_boolean(yj_any(s, n, yj_true_words)); return 0;
	case YJ_INT: return yj_make_int(ld, ev, s, n, ret);
	case YJ_FLOAT: return yj_make_float(ld, ev, s, n, ret);
	case YJ_SPECIAL_FLOAT:
		return yj_fail(ld, &ev->start_mark, "NaN and infinity are not valid JSON numbers");
	case YJ_STR:
	default: return yj_make_string(ld, ev, s, n, ret);
	}
}

/* Counts n more produced nodes against YJ_MAX_NODES. */
static int yj_count(struct yj_loader *ld, const yaml_mark_t *mark, size_t n)
{
	if (n > YJ_MAX_NODES - ld->nodes)
		return yj_fail(ld, mark, "too many nodes (more than %d, aliases expanded)",
			       YJ_MAX_NODES);
	ld->nodes += n;
	return 0;
}

static int yj_set_anchor(struct yj_loader *ld, const char *name, json_t *v, size_t nodes,
			 size_t height)
{
	json_t *a = json_pack("[OII]", v, (json_int_t)nodes, (json_int_t)height);
	if (!a || json_object_set_new(ld->anchors, name, a) < 0)
		return -ENOMEM;
	return 0;
}

/* Hands a finished value (stolen) to its parent, or makes it the root. */
static int yj_add(struct yj_loader *ld, json_t *v, size_t nodes, size_t height, const char *anchor)
{
	int r = 0;
	if (anchor && (r = yj_set_anchor(ld, anchor, v, nodes, height)) < 0)
		goto out;
	if (ld->depth == 0) {
		json_decref(ld->root);
		ld->root = v;
		return 0;
	}
	struct yj_frame *top = &ld->stack[ld->depth - 1];
	if (json_is_array(top->node)) {
		if (json_array_append_new(top->node, v) < 0)
			return -ENOMEM;
	} else {
		r = json_object_set_new_nocheck(top->node, top->key, v);
		free(top->key);
		top->key = NULL;
		if (r < 0)
			return -ENOMEM;
	}
	top->nodes += nodes;
	if (height + 1 > top->height)
		top->height = height + 1;
	return 0;
out:
	json_decref(v);
	return r;
}

/* A scalar (or alias) in key position of the innermost mapping. */
static int yj_key(struct yj_loader *ld, const yaml_event_t *ev, const char *s, size_t n)
{
	struct yj_frame *top = &ld->stack[ld->depth - 1];
	char ex[64];
	int r = yj_count(ld, &ev->start_mark, 1);
	if (r < 0)
		return r;
	if (memchr(s, '\0', n))
		return yj_fail(ld, &ev->start_mark, "mapping key contains a NUL byte");
	if (!yj_utf8_valid((const unsigned char *)s, n))
		return yj_fail(ld, &ev->start_mark, "mapping key is not valid UTF-8");
	if (json_object_get(top->node, s)) {
		yj_excerpt(ex, sizeof(ex), s, n);
		return yj_fail(ld, &ev->start_mark, "duplicate key %s", ex);
	}
	top->key = strndup(s, n);
	if (!top->key)
		return -ENOMEM;
	top->nodes += 1;
	return 0;
}

static bool yj_want_key(const struct yj_loader *ld)
{
	return ld->depth > 0 && json_is_object(ld->stack[ld->depth - 1].node) &&
	       !ld->stack[ld->depth - 1].key;
}

static int yj_on_scalar(struct yj_loader *ld, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const char *anchor = (const char *)ev->data.scalar.anchor;
	json_t *v = NULL;
	int r;

	if (yj_want_key(ld)) {
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag &&
		    yj_eq(s, n, "<<"))
			return yj_fail(ld, &ev->start_mark, "merge keys (<<) are not supported");
		r = yj_key(ld, ev, s, n);
		if (r < 0 || !anchor)
			return r;
		/* An anchored key is a string wherever it is aliased. */
		v = json_stringn_nocheck(s, n);
		r = v ? yj_set_anchor(ld, anchor, v, 1, 0) : -ENOMEM;
		json_decref(v);
		return r;
	}
	r = yj_count(ld, &ev->start_mark, 1);
	if (r < 0)
		return r;
	r = yj_resolve(ld, ev, &v);
	if (r < 0)
		return r;
	return yj_add(ld, v, 1, 0, anchor);
}

static int yj_on_alias(struct yj_loader *ld, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	json_t *a = json_object_get(ld->anchors, name);
	char ex[64];
	if (!a) {
		yj_excerpt(ex, sizeof(ex), name, strlen(name));
		return yj_fail(ld, &ev->start_mark, "undefined alias %s", ex);
	}
	json_t *node = json_array_get(a, 0);
	size_t nodes = (size_t)json_integer_value(json_array_get(a, 1));
	size_t height = (size_t)json_integer_value(json_array_get(a, 2));
	if (yj_want_key(ld)) {
		if (!json_is_string(node))
			return yj_fail(ld, &ev->start_mark,
				       "an alias used as a mapping key must name a string");
		return yj_key(ld, ev, json_string_value(node), json_string_length(node));
	}
	if (ld->depth + height > YJ_MAX_DEPTH)
		return yj_fail(ld, &ev->start_mark, "nesting deeper than %d levels", YJ_MAX_DEPTH);
	int r = yj_count(ld, &ev->start_mark, nodes);
	if (r < 0)
		return r;
	json_t *copy = json_deep_copy(node);
	if (!copy)
		return -ENOMEM;
	return yj_add(ld, copy, nodes, height, NULL);
}

static int yj_on_start(struct yj_loader *ld, const yaml_event_t *ev)
{
	bool map = ev->type == YAML_MAPPING_START_EVENT;
	const char *tag =
		(const char *)(map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
	const char *anchor = (const char *)(map ? ev->data.mapping_start.anchor :
						  ev->data.sequence_start.anchor);
	char ex[64];
	if (yj_want_key(ld))
		return yj_fail(ld, &ev->start_mark, "mapping keys must be scalars");
	if (tag && strcmp(tag, "!") != 0 && strcmp(tag, map ? YJ_TAG("map") : YJ_TAG("seq")) != 0) {
		yj_tag_excerpt(ex, sizeof(ex), tag);
		return yj_fail(ld, &ev->start_mark, "unsupported tag %s on a %s", ex,
			       map ? "mapping" : "sequence");
	}
	if (ld->depth >= YJ_MAX_DEPTH)
		return yj_fail(ld, &ev->start_mark, "nesting deeper than %d levels", YJ_MAX_DEPTH);
	int r = yj_count(ld, &ev->start_mark, 1);
	if (r < 0)
		return r;
	struct yj_frame *f = &ld->stack[ld->depth];
	*f = (struct yj_frame){ .node = map ? json_object() : json_array(),
				.nodes = 1,
				.height = 1 };
	if (!f->node)
		return -ENOMEM;
	if (anchor && !(f->anchor = strdup(anchor))) {
		json_decref(f->node);
		f->node = NULL;
		return -ENOMEM;
	}
	ld->depth++;
	return 0;
}

static int yj_on_end(struct yj_loader *ld, const yaml_event_t *ev)
{
	if (ld->depth == 0)
		return yj_fail(ld, &ev->start_mark, "unbalanced collection end");
	struct yj_frame f = ld->stack[--ld->depth];
	int r = yj_add(ld, f.node, f.nodes, f.height, f.anchor);
	free(f.anchor);
	free(f.key);
	return r;
}

static int yj_on_document_end(struct yj_loader *ld)
{
	json_t *root = ld->root;
	ld->root = NULL;
	ld->in_document = false;
	json_object_clear(ld->anchors); /* anchors are per document (YAML 1.2 §3.2.2.2) */
	if (!root || json_is_null(root)) {
		json_decref(root);
		return 0;
	}
	if (ld->each) {
		int r = ld->each(root, ld->doc_line, ld->userdata);
		json_decref(root);
		return r;
	}
	if (ld->nlines == ld->alines) {
		size_t n = ld->alines ? ld->alines * 2 : 4;
		size_t *p = reallocarray(ld->lines, n, sizeof(*p));
		if (!p) {
			json_decref(root);
			return -ENOMEM;
		}
		ld->lines = p;
		ld->alines = n;
	}
	ld->lines[ld->nlines++] = ld->doc_line;
	return json_array_append_new(ld->docs, root) < 0 ? -ENOMEM : 0;
}

/* Turns a libyaml failure into our error. */
static int yj_parser_error(struct yj_loader *ld, const yaml_parser_t *p)
{
	if (p->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (p->error == YAML_READER_ERROR) {
		/* The reader reports a byte offset, not a mark. */
		yaml_mark_t m = { 0 };
		size_t end = p->problem_offset < ld->len ? p->problem_offset : ld->len;
		for (size_t i = 0; i < end; i++) {
			if (ld->data[i] == '\n')
				m.line++, m.column = 0;
			else if (((unsigned char)ld->data[i] & 0xc0) != 0x80)
				m.column++;
		}
		return yj_fail(ld, &m, "%s", p->problem ? p->problem : "cannot read input");
	}
	const char *problem = p->problem ? p->problem : "malformed YAML";
	if (p->context)
		return yj_fail(ld, &p->problem_mark, "%s: %s", p->context, problem);
	return yj_fail(ld, &p->problem_mark, "%s", problem);
}

static int yj_on_event(struct yj_loader *ld, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		ld->document++;
		ld->in_document = true;
		ld->doc_line = ev->start_mark.line + 1;
		return 0;
	case YAML_DOCUMENT_END_EVENT: return yj_on_document_end(ld);
	case YAML_SCALAR_EVENT: return yj_on_scalar(ld, ev);
	case YAML_ALIAS_EVENT: return yj_on_alias(ld, ev);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: return yj_on_start(ld, ev);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: return yj_on_end(ld, ev);
	default: return 0;
	}
}

/* yj_load() and yj_load_each(): with each, documents go to it and
 * ret_docs and ret_lines are not written. */
static int yj_load_stream(const char *data, size_t len, yj_each_fn each, void *userdata,
			  json_t **ret_docs, size_t **ret_lines, struct yj_error *err)
{
	struct yj_error dummy;
	struct yj_loader ld = { .data = data,
				.len = len,
				.err = err ? err : &dummy,
				.each = each,
				.userdata = userdata };
	yaml_parser_t p;
	yaml_event_t ev;
	bool done = false;
	int r = 0;

	memset(ld.err, 0, sizeof(*ld.err));
	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	ld.docs = json_array();
	ld.anchors = json_object();
	if (!ld.docs || !ld.anchors) {
		r = -ENOMEM;
		goto out;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)(data ? data : ""), data ? len : 0);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			r = yj_parser_error(&ld, &p);
			goto out;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		r = yj_on_event(&ld, &ev);
		yaml_event_delete(&ev);
		if (r < 0) {
			if (r == -ENOMEM)
				snprintf(ld.err->message, sizeof(ld.err->message), "out of memory");
			goto out;
		}
	}
	if (each)
		goto out;
	*ret_docs = ld.docs;
	ld.docs = NULL;
	if (ret_lines) {
		*ret_lines = ld.lines;
		ld.lines = NULL;
	}
out:
	while (ld.depth > 0) {
		struct yj_frame *f = &ld.stack[--ld.depth];
		json_decref(f->node);
		free(f->key);
		free(f->anchor);
	}
	json_decref(ld.root);
	json_decref(ld.docs);
	json_decref(ld.anchors);
	free(ld.lines);
	yaml_parser_delete(&p);
	return r;
}

int yj_load(const char *data, size_t len, json_t **ret_docs, size_t **ret_lines,
	    struct yj_error *err)
{
	return yj_load_stream(data, len, NULL, NULL, ret_docs, ret_lines, err);
}

int yj_load_each(const char *data, size_t len, yj_each_fn fn, void *userdata, struct yj_error *err)
{
	return yj_load_stream(data, len, fn, userdata, NULL, NULL, err);
}

int yj_load_one(const char *data, size_t len, json_t **ret, struct yj_error *err)
{
	json_t *docs = NULL;
	size_t *lines = NULL;
	struct yj_error dummy;
	if (!err)
		err = &dummy;
	int r = yj_load(data, len, &docs, &lines, err);
	if (r < 0)
		return r;
	if (json_array_size(docs) != 1) {
		bool none = json_array_size(docs) == 0;
		*err = (struct yj_error){ .document = none ? 1 : 2,
					  .line = none ? 1 : lines[1],
					  .column = 1 };
		snprintf(err->message, sizeof(err->message), "%s",
			 none ? "no document" : "expected one document, found more");
		r = -EINVAL;
		goto out;
	}
	*ret = json_incref(json_array_get(docs, 0));
out:
	json_decref(docs);
	free(lines);
	return r;
}
