/* jsondec — JSON text made into jansson's tree, faster than json_loadb().
 *
 * DESIGN: a recursive descent over the byte cursor (common/cursor.h), as
 * RFC 8259's grammar reads, each value made with the constructor jansson's
 * own parser calls for it, in the same order: json_object_setn_new_nocheck
 * for each member (so a duplicate key replaces the value in its first
 * place, as there), json_array_append_new, json_stringn_nocheck,
 * json_integer, json_real. What decides acceptance is jansson's lexer's
 * rules, kept here one by one:
 *   - a string is well-formed UTF-8 (utf8_next(), Unicode's table, as
 *     jansson's utf8_check_full) with no byte under 0x20; an escape is one
 *     of \" \\ \/ \b \f \n \r \t \uXXXX, a \u of a high surrogate is
 *     followed by one of a low surrogate, a lone low surrogate is refused;
 *   - a number is -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; it is a
 *     real when it has a fraction or an exponent (strtod(), refused on
 *     overflow, as jansson), else an integer (refused out of json_int_t's
 *     range);
 *   - true, false and null; whitespace is space, tab, LF and CR;
 *   - without JSON_DECODE_ANY the text is an object or an array; after it
 *     only whitespace.
 * Anything else, and whatever this leaves to jansson on purpose (see
 * jsondec.h), makes jsondec_fast() return NULL, and jsondec_loadb() asks
 * json_loadb(), whose answer is the answer. Every loop consumes at least
 * one byte per turn, and recursion stops at JSONDEC_DEPTH_MAX, so all is
 * bounded by the input's length. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/cursor.h"
#include "common/jsondec.h"
#include "common/jsonmem.h"
#include "common/num.h"
#include "common/utf8.h"

#define NUM_MAX 64    /* characters of a number decoded here */
#define INT_DIGITS 18 /* digits that always fit in json_int_t */

struct dec {
	struct rd r;
	size_t flags;
	struct buf tmp; /* an escaped string, decoded */
};

static inline bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static inline void adv(struct rd *r, size_t n)
{
	/* Only ever past bytes already looked at. */
	r->p += n;
	r->len -= n;
}

/* Moves r past whitespace; the byte there, unread, or -1 at the end. */
static inline int peek_ws(struct rd *r)
{
	while (r->len > 0) {
		uint8_t c = r->p[0];
		if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
			return c;
		adv(r, 1);
	}
	return -1;
}

/* The value of the 4 hex digits at s, or -1. */
static long hex4(const uint8_t *s)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = num_hex_digit((char)s[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* The length of the well-formed UTF-8 character at s (n bytes left), or
 * 0. */
static size_t utf8_len(const uint8_t *s, size_t n)
{
	struct rd u = rd_init(s, n);
	uint32_t cp;
	if (utf8_next(&u, &cp) < 0)
		return 0;
	return (size_t)(u.p - s);
}

/* The rest of a string with escapes, from s[i] (s[0..i) plain) to its
 * closing quote; decoded into d->tmp, each run of plain bytes appended
 * whole. */
static int str_escaped(struct dec *d, const uint8_t *s, size_t i, const char **ret,
		       size_t *ret_len)
{
	struct rd *r = &d->r;
	size_t n = r->len, run = 0; /* s[run..i): plain, not yet appended */
	char out[UTF8_CHAR_MAX];
	size_t ol;

	buf_reset(&d->tmp);
	while (i < n) {
		uint8_t c = s[i];
		if (c != '"' && c != '\\') {
			size_t l = c < 0x20 ? 0 : c < 0x80 ? 1 : utf8_len(s + i, n - i);
			if (!l)
				return -EBADMSG;
			i += l;
			continue;
		}
		if (buf_append(&d->tmp, s + run, i - run) < 0)
			return -ENOMEM;
		if (c == '"') {
			*ret = d->tmp.data;
			*ret_len = d->tmp.len;
			adv(r, i + 1);
			return 0;
		}
		if (n - i < 2)
			return -EBADMSG;
		ol = 1;
		switch (s[i + 1]) {
		case '"':
		case '\\':
		case '/':
			out[0] = (char)s[i + 1];
			break;
		case 'b':
			out[0] = '\b';
			break;
		case 'f':
			out[0] = '\f';
			break;
		case 'n':
			out[0] = '\n';
			break;
		case 'r':
			out[0] = '\r';
			break;
		case 't':
			out[0] = '\t';
			break;
		case 'u': {
			long cp = n - i >= 6 ? hex4(s + i + 2) : -1;
			if (cp <= 0) /* not hex, or U+0000: jansson's to say */
				return -EBADMSG;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -EBADMSG;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				const uint8_t *l = s + i + 6;
				long lo = n - i >= 12 && l[0] == '\\' && l[1] == 'u' ? hex4(l + 2) : -1;
				if (lo < 0xdc00 || lo > 0xdfff)
					return -EBADMSG;
				i += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			ol = utf8_write((uint32_t)cp, out);
			i += 4; /* with the 2 below: the six of \uXXXX */
			break;
		}
		default:
			return -EBADMSG;
		}
		if (buf_append(&d->tmp, out, ol) < 0)
			return -ENOMEM;
		i += 2;
		run = i;
	}
	return -EBADMSG;
}

/* Whether the 8 bytes at s hold no quote, backslash, control character
 * or non-ASCII byte: all a string's own, as they are. Bytes equal to a
 * character are found as zero bytes of their XOR with it, bytes under
 * 0x20 by the borrow of a subtraction (the tests of "Bit Twiddling
 * Hacks"); each may also flag a byte after a true one, which only sends
 * the scan to its byte-by-byte path. */
static inline bool plain8(const uint8_t *s)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	uint64_t w, q, b;
	memcpy(&w, s, 8);
	q = w ^ (ones * '"');
	b = w ^ (ones * '\\');
	return ((((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & high) == 0;
}

/* The string at r (its opening quote): its bytes, in the input when it
 * has no escape, else in d->tmp until the next string. */
static int str_read(struct dec *d, const char **ret, size_t *ret_len)
{
	struct rd *r = &d->r;
	adv(r, 1);
	const uint8_t *s = r->p;
	size_t n = r->len, i = 0;
	while (i < n) {
		if (n - i >= 8 && plain8(s + i)) {
			i += 8;
			continue;
		}
		uint8_t c = s[i];
		if (c == '"') {
			*ret = (const char *)s;
			*ret_len = i;
			adv(r, i + 1);
			return 0;
		}
		if (c == '\\')
			return str_escaped(d, s, i, ret, ret_len);
		if (c < 0x20)
			return -EBADMSG;
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t l = utf8_len(s + i, n - i);
		if (!l)
			return -EBADMSG;
		i += l;
	}
	return -EBADMSG;
}

static json_t *num_read(struct dec *d)
{
	struct rd *r = &d->r;
	const uint8_t *s = r->p;
	size_t n = r->len;
	bool neg = n > 0 && s[0] == '-', real = false;
	size_t first = neg ? 1 : 0, i = first;

	if (i >= n)
		return NULL;
	if (s[i] == '0') {
		i++;
		if (i < n && is_digit(s[i]))
			return NULL; /* a leading zero */
	} else if (s[i] >= '1' && s[i] <= '9') {
		while (i < n && is_digit(s[i]))
			i++;
	} else {
		return NULL;
	}
	size_t digits = i - first;
	if (i < n && s[i] == '.') {
		size_t f = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == f)
			return NULL;
		real = true;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t f = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == f)
			return NULL;
		real = true;
	}
	if (i > NUM_MAX)
		return NULL;
	json_t *v;
	if (!real && digits <= INT_DIGITS) {
		json_int_t x = 0;
		for (size_t k = first; k < i; k++)
			x = x * 10 + (s[k] - '0');
		v = json_integer(neg ? -x : x);
	} else {
		char text[NUM_MAX + 1], *end;
		memcpy(text, s, i);
		text[i] = '\0';
		errno = 0;
		if (real) {
			double x = strtod(text, &end);
			/* jansson's test of an overflow; an underflow is taken. */
			if (end != text + i || ((x == HUGE_VAL || x == -HUGE_VAL) && errno == ERANGE))
				return NULL;
			v = json_real(x);
		} else {
			long long x = strtoll(text, &end, 10);
			if (end != text + i || errno == ERANGE)
				return NULL;
			v = json_integer((json_int_t)x);
		}
	}
	if (v)
		adv(r, i);
	return v;
}

static json_t *word_read(struct rd *r, const char *w, size_t wl, json_t *v)
{
	if (r->len < wl || memcmp(r->p, w, wl) != 0)
		return NULL;
	adv(r, wl);
	return v;
}

static json_t *value_read(struct dec *d, unsigned depth);

static json_t *object_read(struct dec *d, unsigned depth)
{
	struct rd *r = &d->r;
	json_t *o = json_object();
	if (!o)
		return NULL;
	adv(r, 1);
	int c = peek_ws(r);
	if (c == '}') {
		adv(r, 1);
		return o;
	}
	/* Each turn consumes a member, three bytes at least. */
	while (c == '"') {
		const char *k;
		size_t kl;
		char *own = NULL;
		if (str_read(d, &k, &kl) < 0)
			break;
		if (k == d->tmp.data) { /* the value's strings reuse d->tmp */
			if (!(own = malloc(kl + 1)))
				break;
			memcpy(own, k, kl);
			k = own;
		}
		json_t *v = NULL;
		if (peek_ws(r) == ':') {
			adv(r, 1);
			v = value_read(d, depth + 1);
		}
		if (v && (d->flags & JSON_REJECT_DUPLICATES) && json_object_getn(o, k, kl)) {
			json_decref(v);
			v = NULL;
		}
		/* json_object_setn_new_nocheck() takes v, even on failure. */
		int e = v ? json_object_setn_new_nocheck(o, k, kl, v) : -1;
		free(own);
		if (e < 0)
			break;
		c = peek_ws(r);
		if (c == '}') {
			adv(r, 1);
			return o;
		}
		if (c != ',')
			break;
		adv(r, 1);
		c = peek_ws(r);
	}
	json_decref(o);
	return NULL;
}

static json_t *array_read(struct dec *d, unsigned depth)
{
	struct rd *r = &d->r;
	json_t *a = json_array();
	if (!a)
		return NULL;
	adv(r, 1);
	int c = peek_ws(r);
	if (c == ']') {
		adv(r, 1);
		return a;
	}
	/* Each turn consumes an element, one byte at least. */
	while (r->len > 0) {
		json_t *v = value_read(d, depth + 1);
		/* json_array_append_new() takes v, even on failure. */
		if (!v || json_array_append_new(a, v) < 0)
			break;
		c = peek_ws(r);
		if (c == ']') {
			adv(r, 1);
			return a;
		}
		if (c != ',')
			break;
		adv(r, 1);
	}
	json_decref(a);
	return NULL;
}

static json_t *value_read(struct dec *d, unsigned depth)
{
	struct rd *r = &d->r;
	const char *s;
	size_t n;

	if (depth >= JSONDEC_DEPTH_MAX)
		return NULL;
	switch (peek_ws(r)) {
	case '{':
		return object_read(d, depth);
	case '[':
		return array_read(d, depth);
	case '"':
		return str_read(d, &s, &n) == 0 ? json_stringn_nocheck(s, n) : NULL;
	case 't':
		return word_read(r, "true", 4, json_true());
	case 'f':
		return word_read(r, "false", 5, json_false());
	case 'n':
		return word_read(r, "null", 4, json_null());
	case '-':
	case '0' ... '9':
		return num_read(d);
	default:
		return NULL;
	}
}

json_t *jsondec_fast(const char *buffer, size_t len, size_t flags)
{
	if (!buffer || (flags & ~(size_t)(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)))
		return NULL;
	struct dec d = { .r = rd_init(buffer, len), .flags = flags, .tmp = BUF_INIT(SIZE_MAX) };
	int c = peek_ws(&d.r);
	if (!(flags & JSON_DECODE_ANY) && c != '{' && c != '[')
		return NULL;
	json_t *v = value_read(&d, 0);
	if (v && peek_ws(&d.r) != -1) {
		json_decref(v);
		v = NULL;
	}
	buf_free(&d.tmp);
	return v;
}

json_t *jsondec_loadb(const char *buffer, size_t len, size_t flags, json_error_t *error)
{
	json_t *v = jsondec_fast(buffer, len, flags);
	if (!v)
		return json_loadb(buffer, len, flags, error);
	if (error) { /* what json_loadb() leaves there on success: it read all */
		error->text[0] = '\0';
		error->line = -1;
		error->column = -1;
		error->position = (int)len;
		snprintf(error->source, sizeof(error->source), "%s", "<buffer>");
	}
	return v;
}

json_t *jsondec_loadb_brief(const char *buffer, size_t len, size_t flags, json_error_t *error)
{
	jsonmem_begin();
	json_t *v = jsondec_loadb(buffer, len, flags, error);
	jsonmem_end();
	return v;
}
