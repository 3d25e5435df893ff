/* template-funcs — the functions a Tinkerbell template may call.
 *
 * DESIGN: Go's text/template builtins (and, or, not, eq, ne, lt, le, gt,
 * ge, len, index, print, printf, println), the functions Tinkerbell adds
 * (formatPartition, netmaskToPrefixLength, toYaml, fromYaml) and the
 * Sprig functions real templates use (lower, upper, trim, trimPrefix,
 * trimSuffix, replace, contains, hasPrefix, hasSuffix, default, quote,
 * regexMatch, join, split, indent, nindent, and the cheap ones of its
 * hermetic set: empty, coalesce, ternary, toString, squote, hasKey,
 * splitList, b64enc, b64dec), with Sprig's argument order
 * (the subject last, so that it can be piped in). Arguments arrive as
 * JSON values; a function that takes a string refuses another type, as
 * Go refuses to convert it. Differences from Go, on purpose:
 * - numbers compare by value whatever their type (Go refuses to compare
 *   an int with a float64, and JSON numbers are float64 in Go);
 * - regexMatch uses POSIX extended regular expressions (regex.h), not
 *   RE2: no \d, \w, \s, no (?i) flags, no lazy quantifiers; an invalid
 *   expression does not match, as Sprig's regexMatch answers false;
 * - toYaml writes YAML with the block style of common/yamljson.h. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/yamljson.h"
#include "workflow/template-internal.h"

#define TP_MAX_REGEX 1024 /* bytes of a regexMatch pattern */

typedef int (*tp_fn)(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize);

#define FAIL(...)                                    \
	do {                                         \
		snprintf(msg, msgsize, __VA_ARGS__); \
		return -EINVAL;                      \
	} while (0)

static int want_args(size_t n, size_t want, char *msg, size_t msgsize)
{
	if (n != want)
		FAIL("wrong number of args: want %zu got %zu", want, n);
	return 0;
}

static int want_string(json_t *v, char *msg, size_t msgsize)
{
	if (!json_is_string(v))
		FAIL("wrong type for value; expected string; got %s", tp_type_name(v));
	return 0;
}

static int want_strings(json_t **a, size_t n, size_t want, char *msg, size_t msgsize)
{
	int e = want_args(n, want, msg, msgsize);
	for (size_t i = 0; i < n && !e; i++)
		e = want_string(a[i], msg, msgsize);
	return e;
}

/* The bytes of b as a new string in *ret. A result that is not UTF-8
 * (b64dec of binary data) is -EILSEQ: JSON strings are text. */
static int ret_buf(struct buf *b, json_t **ret, int e)
{
	if (e == 0) {
		if (!utf8_valid(b->data ? b->data : "", b->len))
			e = -EILSEQ;
		else if (!(*ret = json_stringn(b->data ? b->data : "", b->len)))
			e = -ENOMEM;
	}
	buf_free(b);
	return e;
}

#define S(v) json_string_value(v)
#define SN(v) json_string_length(v)

/* ---- comparison (Go's eq and lt, numbers by value) ---- */

static int compare(json_t *x, json_t *y, bool order, int *ret, char *msg, size_t msgsize)
{
	if (json_is_number(x) && json_is_number(y)) {
		if (json_is_integer(x) && json_is_integer(y)) {
			json_int_t a = json_integer_value(x), b = json_integer_value(y);
			*ret = a < b ? -1 : a > b;
		} else {
			double a = json_number_value(x), b = json_number_value(y);
			*ret = a < b ? -1 : a > b;
		}
		return 0;
	}
	if (json_is_string(x) && json_is_string(y)) {
		size_t na = SN(x), nb = SN(y);
		int c = memcmp(S(x), S(y), na < nb ? na : nb);
		*ret = c ? (c < 0 ? -1 : 1) : (na < nb ? -1 : na > nb);
		return 0;
	}
	if (!order && json_is_boolean(x) && json_is_boolean(y)) {
		*ret = json_typeof(x) != json_typeof(y);
		return 0;
	}
	if (!order && (json_is_null(x) || json_is_null(y))) {
		*ret = !(json_is_null(x) && json_is_null(y));
		return 0;
	}
	if (order || json_typeof(x) == json_typeof(y))
		FAIL("%s: %s", order ? "invalid type for comparison" : "non-comparable type",
		     tp_type_name(x));
	FAIL("incompatible types for comparison");
}

static int fn_eq(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	if (n < 2)
		FAIL("missing argument for comparison");
	bool eq = false;
	for (size_t i = 1; i < n && !eq; i++) {
		int c, e = compare(a[0], a[i], false, &c, msg, msgsize);
		if (e < 0)
			return e;
		eq = c == 0;
	}
	*ret = json_boolean(eq);
	return 0;
}

static int cmp2(json_t **a, size_t n, int *c, char *msg, size_t msgsize)
{
	int e = want_args(n, 2, msg, msgsize);
	return e ?: compare(a[0], a[1], true, c, msg, msgsize);
}

static int fn_ne(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int c, e = want_args(n, 2, msg, msgsize);
	if (e || (e = compare(a[0], a[1], false, &c, msg, msgsize)) < 0)
		return e;
	*ret = json_boolean(c != 0);
	return 0;
}

#define CMP_FN(name, expr)                                                             \
	static int name(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize) \
	{                                                                              \
		int c, e = cmp2(a, n, &c, msg, msgsize);                               \
		if (e < 0)                                                             \
			return e;                                                      \
		*ret = json_boolean(expr);                                             \
		return 0;                                                              \
	}
CMP_FN(fn_lt, c < 0)
CMP_FN(fn_le, c <= 0)
CMP_FN(fn_gt, c > 0)
CMP_FN(fn_ge, c >= 0)

static int fn_not(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_args(n, 1, msg, msgsize);
	if (e)
		return e;
	*ret = json_boolean(!tp_truth(a[0]));
	return 0;
}

static int fn_len(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_args(n, 1, msg, msgsize);
	size_t len;
	if (e)
		return e;
	if (json_is_string(a[0]))
		len = SN(a[0]);
	else if (json_is_array(a[0]))
		len = json_array_size(a[0]);
	else if (json_is_object(a[0]))
		len = json_object_size(a[0]);
	else
		FAIL("len of type %s", tp_type_name(a[0]));
	*ret = json_integer((json_int_t)len);
	return *ret ? 0 : -ENOMEM;
}

static int fn_index(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	if (n < 1)
		FAIL("wrong number of args: want at least 1 got 0");
	json_t *v = a[0];
	for (size_t i = 1; i < n; i++) {
		if (json_is_array(v)) {
			if (!json_is_integer(a[i]))
				FAIL("cannot index slice/array with type %s", tp_type_name(a[i]));
			json_int_t k = json_integer_value(a[i]);
			if (k < 0 || (size_t)k >= json_array_size(v))
				FAIL("index out of range: %" JSON_INTEGER_FORMAT, k);
			v = json_array_get(v, (size_t)k);
		} else if (json_is_object(v)) {
			if (!json_is_string(a[i]))
				FAIL("value has type %s; should be string", tp_type_name(a[i]));
			/* A missing key gives the map's zero value, nil: index
			 * does not follow missingkey=error. */
			json_t *next = json_object_get(v, S(a[i]));
			v = next ? next : json_null();
		} else if (json_is_string(v)) {
			if (!json_is_integer(a[i]))
				FAIL("cannot index string with type %s", tp_type_name(a[i]));
			json_int_t k = json_integer_value(a[i]);
			if (k < 0 || (size_t)k >= SN(v))
				FAIL("index out of range: %" JSON_INTEGER_FORMAT, k);
			*ret = json_integer((unsigned char)S(v)[k]);
			return *ret ? 0 : -ENOMEM;
		} else if (json_is_null(v)) {
			FAIL("index of untyped nil");
		} else {
			FAIL("can't index item of type %s", tp_type_name(v));
		}
	}
	*ret = json_incref(v);
	return 0;
}

/* fmt.Sprint: a space between operands when neither is a string. */
static int fn_print(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = 0;
	(void)msg, (void)msgsize;
	for (size_t i = 0; i < n && !e; i++) {
		if (i && !json_is_string(a[i]) && !json_is_string(a[i - 1]))
			e = buf_putc(&b, ' ');
		e = e ?: tp_print_value(&b, a[i], 0);
	}
	return ret_buf(&b, ret, e);
}

static int fn_println(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = 0;
	(void)msg, (void)msgsize;
	for (size_t i = 0; i < n && !e; i++) {
		if (i)
			e = buf_putc(&b, ' ');
		e = e ?: tp_print_value(&b, a[i], 0);
	}
	e = e ?: buf_putc(&b, '\n');
	return ret_buf(&b, ret, e);
}

static int fn_printf(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	if (n < 1)
		FAIL("wrong number of args: want at least 1 got 0");
	if (!json_is_string(a[0]))
		FAIL("wrong type for value; expected string; got %s", tp_type_name(a[0]));
	return ret_buf(&b, ret, tp_sprintf(&b, S(a[0]), SN(a[0]), a + 1, n - 1));
}

/* ---- Tinkerbell's functions ---- */

/* formatPartition "/dev/sda" 1 = "/dev/sda1"; a device whose name ends
 * in a digit (/dev/nvme0n1, /dev/mmcblk0, /dev/md0) takes a "p" before the
 * number, and a /dev/disk/by-* link "-part", as Tinkerbell's. */
static int fn_format_partition(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(4096);
	int e = want_args(n, 2, msg, msgsize);
	if (e || (e = want_string(a[0], msg, msgsize)))
		return e;
	if (!json_is_integer(a[1]))
		FAIL("wrong type for value; expected int; got %s", tp_type_name(a[1]));
	const char *dev = S(a[0]);
	const char *sep = "";
	size_t dn = SN(a[0]);
	if (dn >= 10 && memcmp(dev, "/dev/disk/", 10) == 0)
		sep = "-part";
	else if (dn > 0 && dev[dn - 1] >= '0' && dev[dn - 1] <= '9')
		sep = "p";
	e = buf_append(&b, dev, SN(a[0]));
	e = e ?: buf_printf(&b, "%s%" JSON_INTEGER_FORMAT, sep, json_integer_value(a[1]));
	return ret_buf(&b, ret, e == -E2BIG ? -EINVAL : e);
}

/* netmaskToPrefixLength "255.255.255.0" = "24" (a string, as
 * Tinkerbell's); a mask whose ones are not contiguous gives "0", as Go's
 * net.IPMask.Size. An IPv6 address is refused, an IPv4-mapped one taken. */
static int fn_netmask(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct in_addr in;
	struct in6_addr in6;
	char num[8];
	int e = want_strings(a, n, 1, msg, msgsize);
	if (e)
		return e;
	const char *s = S(a[0]);
	bool nul = strlen(s) != SN(a[0]);
	if (nul || inet_pton(AF_INET, s, &in) != 1) {
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (nul || inet_pton(AF_INET6, s, &in6) != 1)
			FAIL("invalid netmask format: %.64s", s);
		if (memcmp(in6.s6_addr, mapped, sizeof(mapped)) != 0)
			FAIL("netmask must be IPv4: %.64s", s);
		memcpy(&in.s_addr, in6.s6_addr + 12, 4);
	}
	uint32_t m = ntohl(in.s_addr);
	int ones = 0;
	while (ones < 32 && (m & (1u << (31 - ones))))
		ones++;
	if (ones < 32 && (m << ones) != 0)
		ones = 0;
	snprintf(num, sizeof(num), "%d", ones);
	*ret = json_string(num);
	return *ret ? 0 : -ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A copy of v whose objects have their keys in sorted order, as Go's YAML
 * encoder writes a map. */
static json_t *sorted_copy(const json_t *v, int depth)
{
	if (depth > TP_MAX_NESTED_VALUE)
		return NULL;
	if (json_is_array(v)) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < json_array_size(v); i++)
			if (json_array_append_new(a, sorted_copy(json_array_get(v, i), depth + 1)) <
			    0) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	if (json_is_real(v)) {
		/* Go's encoding/json writes an integral float64 below 1e21 without
		 * a fraction, and the YAML reads it as an integer. */
		double f = json_real_value(v);
		if (f > -9.2e18 && f < 9.2e18 && f == (double)(json_int_t)f)
			return json_integer((json_int_t)f);
	}
	if (!json_is_object(v))
		return json_incref((json_t *)v);
	size_t nk = json_object_size(v), i = 0;
	const char **k = malloc((nk ? nk : 1) * sizeof(*k));
	json_t *o = json_object(), *val;
	const char *key;
	if (!k || !o)
		goto fail;
	json_object_foreach ((json_t *)v, key, val)
		k[i++] = key;
	qsort(k, nk, sizeof(*k), cmp_str);
	for (i = 0; i < nk; i++)
		if (json_object_set_new(o, k[i], sorted_copy(json_object_get(v, k[i]), depth + 1)) <
		    0)
			goto fail;
	free(k);
	return o;
fail:
	free(k);
	json_decref(o);
	return NULL;
}

static int fn_to_yaml(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = want_args(n, 1, msg, msgsize);
	if (e)
		return e;
	json_t *sorted = sorted_copy(a[0], 0);
	if (!sorted)
		FAIL("value too deep or out of memory");
	e = yj_dump(sorted, &b);
	json_decref(sorted);
	if (e == 0)
		while (b.len > 0 && b.data[b.len - 1] == '\n')
			b.data[--b.len] = '\0';
	return ret_buf(&b, ret, e);
}

/* Numbers as float64, as Go's YAML-through-JSON decoding gives them. */
static int floats(json_t *v, int depth)
{
	const char *key;
	json_t *c;
	if (depth > TP_MAX_NESTED_VALUE)
		return -EINVAL;
	if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			c = json_array_get(v, i);
			if (json_is_integer(c)) {
				if (json_array_set_new(
					    v, i, json_real((double)json_integer_value(c))) < 0)
					return -ENOMEM;
			} else if (floats(c, depth + 1) < 0) {
				return -EINVAL;
			}
		}
	} else if (json_is_object(v)) {
		json_object_foreach (v, key, c) {
			if (json_is_integer(c)) {
				if (json_object_set_new(
					    v, key, json_real((double)json_integer_value(c))) < 0)
					return -ENOMEM;
			} else if (floats(c, depth + 1) < 0) {
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* fromYaml S: any YAML value (map, list, scalar); empty input or bad YAML
 * is an error, as Tinkerbell's. */
static int fn_from_yaml(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct yj_error err;
	json_t *v;
	int e = want_strings(a, n, 1, msg, msgsize);
	if (e)
		return e;
	if (SN(a[0]) == 0)
		FAIL("fromYaml: empty YAML input");
	if ((e = yj_load_one(S(a[0]), SN(a[0]), &v, &err)) < 0) {
		if (e == -ENOMEM)
			return e;
		FAIL("fromYaml: yaml: line %zu: %s", err.line, err.message);
	}
	if (json_is_integer(v)) {
		json_t *f = json_real((double)json_integer_value(v));
		json_decref(v);
		v = f;
	}
	if (!v || (e = floats(v, 0)) < 0) {
		json_decref(v);
		if (e == -ENOMEM || !v)
			return -ENOMEM;
		FAIL("fromYaml: value nested too deep");
	}
	*ret = v;
	return 0;
}

/* ---- Sprig ---- */

static int map_case(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize, bool up)
{
	int e = want_strings(a, n, 1, msg, msgsize);
	if (e)
		return e;
	char *s = malloc(SN(a[0]) + 1);
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i <= SN(a[0]); i++) {
		char c = S(a[0])[i];
		s[i] = up ? (c >= 'a' && c <= 'z' ? c - 32 : c) :
			    (c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	*ret = json_stringn(s, SN(a[0]));
	free(s);
	return *ret ? 0 : -ENOMEM;
}

static int fn_lower(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	return map_case(a, n, ret, msg, msgsize, false);
}

static int fn_upper(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	return map_case(a, n, ret, msg, msgsize, true);
}

static bool ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int fn_trim(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_strings(a, n, 1, msg, msgsize);
	if (e)
		return e;
	const char *s = S(a[0]);
	size_t b = 0, end = SN(a[0]);
	while (b < end && ws(s[b]))
		b++;
	while (end > b && ws(s[end - 1]))
		end--;
	*ret = json_stringn(s + b, end - b);
	return *ret ? 0 : -ENOMEM;
}

/* trimPrefix PREFIX S, trimSuffix SUFFIX S */
static int trim_affix(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize, bool prefix)
{
	int e = want_strings(a, n, 2, msg, msgsize);
	if (e)
		return e;
	size_t na = SN(a[0]), ns = SN(a[1]);
	const char *s = S(a[1]);
	if (na <= ns && memcmp(prefix ? s : s + ns - na, S(a[0]), na) == 0) {
		*ret = json_stringn(prefix ? s + na : s, ns - na);
		return *ret ? 0 : -ENOMEM;
	}
	*ret = json_incref(a[1]);
	return 0;
}

static int fn_trim_prefix(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	return trim_affix(a, n, ret, msg, msgsize, true);
}

static int fn_trim_suffix(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	return trim_affix(a, n, ret, msg, msgsize, false);
}

static int fn_has_prefix(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_strings(a, n, 2, msg, msgsize);
	if (e)
		return e;
	*ret = json_boolean(SN(a[0]) <= SN(a[1]) && memcmp(S(a[1]), S(a[0]), SN(a[0])) == 0);
	return 0;
}

static int fn_has_suffix(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_strings(a, n, 2, msg, msgsize);
	if (e)
		return e;
	size_t na = SN(a[0]), ns = SN(a[1]);
	*ret = json_boolean(na <= ns && memcmp(S(a[1]) + ns - na, S(a[0]), na) == 0);
	return 0;
}

/* Go's strings.Index, in linear time (glibc's memmem is two-way). */
static const char *find(const char *h, size_t hn, const char *nd, size_t nn)
{
	if (nn == 0)
		return h;
	return memmem(h, hn, nd, nn);
}

/* The length of the UTF-8 sequence at s (n bytes left): 1 for a byte
 * that does not start one, 0 at the end. */
static size_t rune_len(const char *s, size_t n)
{
	size_t r = 1;
	if (n == 0)
		return 0;
	while (r < n && r < 4 && ((unsigned char)s[r] & 0xc0) == 0x80 &&
	       ((unsigned char)s[0] & 0xc0) == 0xc0)
		r++;
	return r;
}

/* contains SUBSTR S */
static int fn_contains(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_strings(a, n, 2, msg, msgsize);
	if (e)
		return e;
	*ret = json_boolean(find(S(a[1]), SN(a[1]), S(a[0]), SN(a[0])) != NULL);
	return 0;
}

/* replace OLD NEW S: every OLD in S; an empty OLD matches between every
 * character, as Go's strings.Replace. */
static int fn_replace(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = want_strings(a, n, 3, msg, msgsize);
	if (e)
		return e;
	const char *s = S(a[2]), *old = S(a[0]);
	size_t ns = SN(a[2]), no = SN(a[0]), i = 0;
	if (no == 0) {
		/* Between runes, not bytes: UTF-8 continuation bytes stay
		 * with their rune. */
		for (i = 0; i <= ns && !e;) {
			size_t r = rune_len(s + i, ns - i);
			e = buf_append(&b, S(a[1]), SN(a[1]));
			e = e ?: buf_append(&b, s + i, r);
			i += r ? r : 1;
		}
		return ret_buf(&b, ret, e == -E2BIG ? -E2BIG : e);
	}
	while (!e) {
		const char *hit = find(s + i, ns - i, old, no);
		if (!hit) {
			e = buf_append(&b, s + i, ns - i);
			break;
		}
		e = buf_append(&b, s + i, (size_t)(hit - (s + i)));
		e = e ?: buf_append(&b, S(a[1]), SN(a[1]));
		i = (size_t)(hit - s) + no;
	}
	return ret_buf(&b, ret, e);
}

/* Sprig's empty(): nil, false, 0, "" and empty collections. */
static int fn_default(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	if (n < 1 || n > 2)
		FAIL("wrong number of args: want 1 or 2 got %zu", n);
	*ret = json_incref(n == 2 && tp_truth(a[1]) ? a[1] : a[0]);
	return 0;
}

/* Sprig's strval: a string as it is, anything else as %v. */
static int strval(struct buf *b, json_t *v)
{
	return tp_print_value(b, v, 0);
}

/* quote A B ...: each non-nil argument as a Go-quoted string, joined by
 * spaces. */
static int fn_quote(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT), tmp = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = 0;
	bool first = true;
	(void)msg, (void)msgsize;
	for (size_t i = 0; i < n && !e; i++) {
		if (json_is_null(a[i]))
			continue;
		buf_reset(&tmp);
		e = strval(&tmp, a[i]);
		if (!first)
			e = e ?: buf_putc(&b, ' ');
		first = false;
		e = e ?: tp_quote(&b, tmp.data ? tmp.data : "", tmp.len);
	}
	buf_free(&tmp);
	return ret_buf(&b, ret, e);
}

/* A back-reference (\\1): glibc accepts it in an ERE, RE2 does not, and
 * it makes matching exponential. Such a pattern does not match, as an
 * invalid one. */
static bool has_backref(const char *re)
{
	for (; *re; re++)
		if (*re == '\\' && re[1]) {
			if (re[1] >= '1' && re[1] <= '9')
				return true;
			re++;
		}
	return false;
}

static int fn_regex_match(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	regex_t re;
	int e = want_strings(a, n, 2, msg, msgsize);
	if (e)
		return e;
	bool match = false;
	if (SN(a[0]) <= TP_MAX_REGEX && strlen(S(a[0])) == SN(a[0]) && !has_backref(S(a[0])) &&
	    regcomp(&re, S(a[0]), REG_EXTENDED | REG_NOSUB) == 0) {
		match = regexec(&re, S(a[1]), 0, NULL, 0) == 0;
		regfree(&re);
	}
	*ret = json_boolean(match);
	return 0;
}

/* join SEP LIST: Sprig's strslice, nil elements left out. */
static int fn_join(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = want_args(n, 2, msg, msgsize);
	if (e || (e = want_string(a[0], msg, msgsize)))
		return e;
	if (json_is_array(a[1])) {
		bool first = true;
		for (size_t i = 0; i < json_array_size(a[1]) && !e; i++) {
			json_t *v = json_array_get(a[1], i);
			if (json_is_null(v))
				continue;
			if (!first)
				e = buf_append(&b, S(a[0]), SN(a[0]));
			first = false;
			e = e ?: strval(&b, v);
		}
	} else if (!json_is_null(a[1])) {
		e = strval(&b, a[1]);
	}
	return ret_buf(&b, ret, e);
}

/* split SEP S: a map {"_0": first, "_1": second, ...}, as Sprig's split. */
static int fn_split(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_strings(a, n, 2, msg, msgsize);
	if (e)
		return e;
	json_t *m = json_object();
	const char *s = S(a[1]), *sep = S(a[0]);
	size_t ns = SN(a[1]), nsep = SN(a[0]), i = 0, k = 0;
	char key[32];
	if (!m)
		return -ENOMEM;
	while (i <= ns) {
		size_t r = rune_len(s + i, ns - i);
		const char *hit =
			nsep ? find(s + i, ns - i, sep, nsep) : (i + r < ns ? s + i + r : NULL);
		size_t end = hit ? (size_t)(hit - s) : ns;
		if (!nsep && ns == 0)
			break;
		snprintf(key, sizeof(key), "_%zu", k++);
		if (json_object_set_new(m, key, json_stringn(s + i, end - i)) < 0) {
			json_decref(m);
			return -ENOMEM;
		}
		if (!hit)
			break;
		i = end + nsep;
	}
	*ret = m;
	return 0;
}

static int do_indent(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize, bool nl)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = want_args(n, 2, msg, msgsize);
	if (e || (e = want_string(a[1], msg, msgsize)))
		return e;
	if (!json_is_integer(a[0]))
		FAIL("wrong type for value; expected int; got %s", tp_type_name(a[0]));
	json_int_t w = json_integer_value(a[0]);
	if (w < 0 || w > 1024)
		FAIL("indent width out of range: %" JSON_INTEGER_FORMAT, w);
	if (nl)
		e = buf_putc(&b, '\n');
	for (json_int_t i = 0; i < w && !e; i++)
		e = buf_putc(&b, ' ');
	for (size_t i = 0; i < SN(a[1]) && !e; i++) {
		e = buf_putc(&b, S(a[1])[i]);
		for (json_int_t k = 0; S(a[1])[i] == '\n' && k < w && !e; k++)
			e = buf_putc(&b, ' ');
	}
	return ret_buf(&b, ret, e);
}

static int fn_indent(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	return do_indent(a, n, ret, msg, msgsize, false);
}

static int fn_nindent(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	return do_indent(a, n, ret, msg, msgsize, true);
}

/* empty V: Sprig's test for the zero value. */
static int fn_empty(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_args(n, 1, msg, msgsize);
	if (e)
		return e;
	*ret = json_boolean(!tp_truth(a[0]));
	return 0;
}

/* coalesce A B ...: the first argument that is not empty, else nil. */
static int fn_coalesce(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	(void)msg, (void)msgsize;
	for (size_t i = 0; i < n; i++)
		if (tp_truth(a[i])) {
			*ret = json_incref(a[i]);
			return 0;
		}
	*ret = json_null();
	return 0;
}

/* ternary IF_TRUE IF_FALSE COND */
static int fn_ternary(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_args(n, 3, msg, msgsize);
	if (e)
		return e;
	if (!json_is_boolean(a[2]))
		FAIL("wrong type for value; expected bool; got %s", tp_type_name(a[2]));
	*ret = json_incref(json_is_true(a[2]) ? a[0] : a[1]);
	return 0;
}

static int fn_to_string(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = want_args(n, 1, msg, msgsize);
	if (e)
		return e;
	return ret_buf(&b, ret, strval(&b, a[0]));
}

/* squote A ...: each non-nil argument in single quotes, unescaped. */
static int fn_squote(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = 0;
	bool first = true;
	(void)msg, (void)msgsize;
	for (size_t i = 0; i < n && !e; i++) {
		if (json_is_null(a[i]))
			continue;
		if (!first)
			e = buf_putc(&b, ' ');
		first = false;
		e = e ?: buf_putc(&b, '\'');
		e = e ?: strval(&b, a[i]);
		e = e ?: buf_putc(&b, '\'');
	}
	return ret_buf(&b, ret, e);
}

/* hasKey MAP KEY */
static int fn_has_key(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	int e = want_args(n, 2, msg, msgsize);
	if (e || (e = want_string(a[1], msg, msgsize)))
		return e;
	if (!json_is_object(a[0]))
		FAIL("wrong type for value; expected map[string]interface {}; got %s",
		     tp_type_name(a[0]));
	*ret = json_boolean(json_object_get(a[0], S(a[1])) != NULL);
	return 0;
}

/* splitList SEP S: a list, as Go's strings.Split. */
static int fn_split_list(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	json_t *m, *l;
	int e = fn_split(a, n, &m, msg, msgsize);
	if (e)
		return e;
	l = json_array();
	for (size_t i = 0; l && i < json_object_size(m); i++) {
		char key[32];
		snprintf(key, sizeof(key), "_%zu", i);
		if (json_array_append(l, json_object_get(m, key)) < 0) {
			json_decref(l);
			l = NULL;
		}
	}
	json_decref(m);
	*ret = l;
	return l ? 0 : -ENOMEM;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int fn_b64enc(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = want_strings(a, n, 1, msg, msgsize);
	if (e)
		return e;
	const unsigned char *s = (const unsigned char *)S(a[0]);
	size_t len = SN(a[0]);
	for (size_t i = 0; i < len && !e; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0) |
			     (i + 2 < len ? s[i + 2] : 0);
		char q[4] = { b64[v >> 18 & 63], b64[v >> 12 & 63],
			      i + 1 < len ? b64[v >> 6 & 63] : '=',
			      i + 2 < len ? b64[v & 63] : '=' };
		e = buf_append(&b, q, 4);
	}
	return ret_buf(&b, ret, e);
}

/* b64dec S: Go's StdEncoding (padding required, newlines skipped); bad
 * input gives the error's text as the result, as Sprig's does. */
static int fn_b64dec(json_t **a, size_t n, json_t **ret, char *msg, size_t msgsize)
{
	struct buf b = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = want_strings(a, n, 1, msg, msgsize);
	if (e)
		return e;
	const char *s = S(a[0]);
	size_t len = SN(a[0]), i = 0, bad = SIZE_MAX;
	while (i < len && bad == SIZE_MAX && !e) {
		int v[4], k = 0, pads = 0;
		size_t start = i;
		while (k < 4 && i < len) {
			char c = s[i];
			if (c == '\r' || c == '\n') {
				i++;
				continue;
			}
			const char *p = c ? strchr(b64, c) : NULL;
			if (c == '=' && k >= 2) {
				v[k++] = 0;
				pads++;
			} else if (p && !pads) {
				v[k++] = (int)(p - b64);
			} else {
				bad = i;
				break;
			}
			i++;
		}
		if (bad != SIZE_MAX)
			break;
		if (k < 4) {
			bad = k ? start : SIZE_MAX;
			break;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		char out[3] = { (char)(w >> 16), (char)(w >> 8), (char)w };
		e = buf_append(&b, out, 3 - (size_t)pads);
		if (pads && i < len)
			bad = i;
	}
	if (!e && bad != SIZE_MAX) {
		buf_reset(&b);
		e = buf_printf(&b, "illegal base64 data at input byte %zu", bad);
	}
	return ret_buf(&b, ret, e);
}

static const struct {
	const char *name;
	tp_fn fn;
	enum tp_builtin builtin;
} funcs[] = {
	{ "and", NULL, TB_AND },
	{ "or", NULL, TB_OR },
	{ "not", fn_not, TB_OTHER },
	{ "eq", fn_eq, TB_OTHER },
	{ "ne", fn_ne, TB_OTHER },
	{ "lt", fn_lt, TB_OTHER },
	{ "le", fn_le, TB_OTHER },
	{ "gt", fn_gt, TB_OTHER },
	{ "ge", fn_ge, TB_OTHER },
	{ "len", fn_len, TB_OTHER },
	{ "index", fn_index, TB_OTHER },
	{ "print", fn_print, TB_OTHER },
	{ "printf", fn_printf, TB_OTHER },
	{ "println", fn_println, TB_OTHER },
	{ "formatPartition", fn_format_partition, TB_OTHER },
	{ "netmaskToPrefixLength", fn_netmask, TB_OTHER },
	{ "toYaml", fn_to_yaml, TB_OTHER },
	{ "fromYaml", fn_from_yaml, TB_OTHER },
	{ "lower", fn_lower, TB_OTHER },
	{ "upper", fn_upper, TB_OTHER },
	{ "trim", fn_trim, TB_OTHER },
	{ "trimPrefix", fn_trim_prefix, TB_OTHER },
	{ "trimSuffix", fn_trim_suffix, TB_OTHER },
	{ "replace", fn_replace, TB_OTHER },
	{ "contains", fn_contains, TB_OTHER },
	{ "hasPrefix", fn_has_prefix, TB_OTHER },
	{ "hasSuffix", fn_has_suffix, TB_OTHER },
	{ "default", fn_default, TB_OTHER },
	{ "quote", fn_quote, TB_OTHER },
	{ "regexMatch", fn_regex_match, TB_OTHER },
	{ "join", fn_join, TB_OTHER },
	{ "split", fn_split, TB_OTHER },
	{ "indent", fn_indent, TB_OTHER },
	{ "empty", fn_empty, TB_OTHER },
	{ "coalesce", fn_coalesce, TB_OTHER },
	{ "ternary", fn_ternary, TB_OTHER },
	{ "toString", fn_to_string, TB_OTHER },
	{ "squote", fn_squote, TB_OTHER },
	{ "hasKey", fn_has_key, TB_OTHER },
	{ "splitList", fn_split_list, TB_OTHER },
	{ "b64enc", fn_b64enc, TB_OTHER },
	{ "b64dec", fn_b64dec, TB_OTHER },
	{ "nindent", fn_nindent, TB_OTHER },
};

bool tp_func_exists(const char *name, enum tp_builtin *ret_builtin)
{
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (strcmp(funcs[i].name, name) == 0) {
			if (ret_builtin)
				*ret_builtin = funcs[i].builtin;
			return true;
		}
	if (ret_builtin)
		*ret_builtin = TB_NONE;
	return false;
}

int tp_func_call(const char *name, json_t **args, size_t nargs, json_t **ret, char *msg,
		 size_t msgsize)
{
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (strcmp(funcs[i].name, name) == 0 && funcs[i].fn) {
			int e = funcs[i].fn(args, nargs, ret, msg, msgsize);
			if (e == -E2BIG)
				snprintf(msg, msgsize, "result larger than %d bytes",
					 WF_TMPL_MAX_OUTPUT);
			if (e == -EILSEQ) {
				snprintf(msg, msgsize, "result is not UTF-8 text");
				e = -EINVAL;
			}
			return e;
		}
	snprintf(msg, msgsize, "function \"%s\" not defined", name);
	return -EINVAL;
}
