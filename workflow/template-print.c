/* template-print — Go's fmt as templates print values.
 *
 * DESIGN: what an action writes and what print, printf and quote return
 * are Go's fmt over the value: %v of a map is map[k:v] with the keys
 * sorted, of a slice [a b], of nil <nil>, of a float64 its shortest 'g'
 * form; strings are quoted as strconv.Quote does; a verb that does not fit
 * its operand prints %!verb(type=value), a missing operand
 * %!verb(MISSING), extra ones %!(EXTRA ...), as fmt does. The output goes
 * to a capped buffer (common/buf.h), and nesting is printed to a bounded
 * depth. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workflow/template-internal.h"

#define S(v) json_string_value(v)
#define SN(v) json_string_length(v)

bool tp_truth(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return json_object_size(v) > 0;
	case JSON_ARRAY: return json_array_size(v) > 0;
	case JSON_STRING: return json_string_length(v) > 0;
	case JSON_INTEGER: return json_integer_value(v) != 0;
	case JSON_REAL: return json_real_value(v) != 0;
	case JSON_TRUE: return true;
	default: return false;
	}
}

const char *tp_type_name(const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_OBJECT: return "map[string]interface {}";
	case JSON_ARRAY: return "[]interface {}";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "int";
	case JSON_REAL: return "float64";
	case JSON_TRUE:
	case JSON_FALSE: return "bool";
	default: return "<nil>";
	}
}

/* Go's strconv.FormatFloat(f, 'g', -1, 64) as fmt's %v uses it: the
 * shortest digits that read back as f, in %e form when the exponent is
 * below -4 or at least 6 (1e+06, 1.234567e+06, 123456, 0.0001). */
static int print_float(struct buf *out, double f)
{
	char tmp[40];
	if (isnan(f))
		return buf_puts(out, "NaN");
	if (isinf(f))
		return buf_puts(out, f > 0 ? "+Inf" : "-Inf");
	if (f == 0)
		return buf_puts(out, signbit(f) ? "-0" : "0");
	int prec;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, f);
		if (strtod(tmp, NULL) == f)
			break;
	}
	/* tmp is [-]d[.ddd]e[+-]XX: the digits and the exponent. */
	char digits[24];
	size_t nd = 0;
	const char *s = tmp;
	bool neg = *s == '-';
	if (neg)
		s++;
	for (; *s && *s != 'e'; s++)
		if (*s != '.')
			digits[nd++] = *s;
	int exp = (int)strtol(s + 1, NULL, 10);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	int e = 0;
	if (neg)
		e = buf_putc(out, '-');
	if (exp < -4 || exp >= 6) {
		/* d.ddde+XX */
		e = e ?: buf_putc(out, digits[0]);
		if (nd > 1) {
			e = e ?: buf_putc(out, '.');
			e = e ?: buf_append(out, digits + 1, nd - 1);
		}
		return e ?: buf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
	}
	if (exp < 0) {
		e = e ?: buf_puts(out, "0.");
		for (int i = -1; i > exp && !e; i--)
			e = buf_putc(out, '0');
		return e ?: buf_append(out, digits, nd);
	}
	for (int i = 0; i <= exp && !e; i++)
		e = buf_putc(out, (size_t)i < nd ? digits[i] : '0');
	if ((size_t)exp + 1 < nd) {
		e = e ?: buf_putc(out, '.');
		e = e ?: buf_append(out, digits + exp + 1, nd - (size_t)exp - 1);
	}
	return e;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **tp_sorted_keys(const json_t *o, size_t *ret_n)
{
	size_t n = json_object_size(o), i = 0;
	const char **k = malloc((n ? n : 1) * sizeof(*k));
	const char *key;
	json_t *v;
	if (!k)
		return NULL;
	json_object_foreach ((json_t *)o, key, v)
		k[i++] = key;
	qsort(k, n, sizeof(*k), cmp_keys);
	*ret_n = n;
	return k;
}

int tp_print_value(struct buf *out, const json_t *v, int depth)
{
	int e = 0;
	if (depth > TP_MAX_NESTED_VALUE)
		return buf_puts(out, "...");
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_STRING: return buf_append(out, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: return buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	case JSON_REAL: return print_float(out, json_real_value(v));
	case JSON_TRUE: return buf_puts(out, "true");
	case JSON_FALSE: return buf_puts(out, "false");
	case JSON_NULL: return buf_puts(out, "<nil>");
	case JSON_ARRAY:
		e = buf_putc(out, '[');
		for (size_t i = 0; i < json_array_size(v) && !e; i++) {
			if (i)
				e = buf_putc(out, ' ');
			e = e ?: tp_print_value(out, json_array_get(v, i), depth + 1);
		}
		return e ?: buf_putc(out, ']');
	case JSON_OBJECT: {
		size_t n;
		const char **k = tp_sorted_keys(v, &n);
		if (!k)
			return -ENOMEM;
		e = buf_puts(out, "map[");
		for (size_t i = 0; i < n && !e; i++) {
			if (i)
				e = buf_putc(out, ' ');
			e = e ?: buf_puts(out, k[i]);
			e = e ?: buf_putc(out, ':');
			e = e ?: tp_print_value(out, json_object_get(v, k[i]), depth + 1);
		}
		free(k);
		return e ?: buf_putc(out, ']');
	}
	}
	return 0;
}

/* Go's strconv.Quote. */
int tp_quote(struct buf *b, const char *s, size_t n)
{
	int e = buf_putc(b, '"');
	for (size_t i = 0; i < n && !e; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		switch (c) {
		case '\a': esc = "\\a"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\v': esc = "\\v"; break;
		case '\\': esc = "\\\\"; break;
		case '"': esc = "\\\""; break;
		}
		if (esc)
			e = buf_puts(b, esc);
		else if (c < 0x20 || c == 0x7f)
			e = buf_printf(b, "\\x%02x", c);
		else
			e = buf_putc(b, (char)c);
	}
	return e ?: buf_putc(b, '"');
}

static int pad(struct buf *out, const char *s, size_t n, int width, bool left, bool zero)
{
	int e = 0;
	size_t w = width > 0 ? (size_t)width : 0;
	if (!left)
		for (size_t i = n; i < w && !e; i++)
			e = buf_putc(out, zero ? '0' : ' ');
	e = e ?: buf_append(out, s, n);
	if (left)
		for (size_t i = n; i < w && !e; i++)
			e = buf_putc(out, ' ');
	return e;
}

static int bad_verb(struct buf *out, char verb, json_t *v)
{
	int e = buf_printf(out, "%%!%c(", verb);
	if (json_is_null(v))
		return e ?: buf_puts(out, "<nil>)");
	e = e ?: buf_printf(out, "%s=", tp_type_name(v));
	e = e ?: tp_print_value(out, v, 0);
	return e ?: buf_putc(out, ')');
}

static int one_verb(struct buf *out, char verb, json_t *v, int width, int prec, bool left,
		    bool zero, bool plus)
{
	struct buf t = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	int e = 0;
	switch (verb) {
	case 'v': e = tp_print_value(&t, v, 0); break;
	case 's':
		if (json_is_string(v) || json_is_array(v) || json_is_object(v))
			e = tp_print_value(&t, v, 0);
		else
			e = bad_verb(&t, verb, v);
		if (!e && prec >= 0 && t.len > (size_t)prec)
			t.len = (size_t)prec;
		break;
	case 'd':
		if (json_is_integer(v))
			e = buf_printf(&t,
				       plus ? "%+" JSON_INTEGER_FORMAT : "%" JSON_INTEGER_FORMAT,
				       json_integer_value(v));
		else
			e = bad_verb(&t, verb, v);
		break;
	case 'f':
	case 'F':
		if (json_is_number(v))
			e = buf_printf(&t, plus ? "%+.*f" : "%.*f", prec >= 0 ? prec : 6,
				       json_number_value(v));
		else
			e = bad_verb(&t, verb, v);
		break;
	case 't':
		if (json_is_boolean(v))
			e = buf_puts(&t, json_is_true(v) ? "true" : "false");
		else
			e = bad_verb(&t, verb, v);
		break;
	case 'q':
		if (json_is_string(v))
			e = tp_quote(&t, S(v), SN(v));
		else
			e = bad_verb(&t, verb, v);
		break;
	case 'x':
	case 'X':
		if (json_is_integer(v)) {
			json_int_t i = json_integer_value(v);
			e = buf_printf(&t, verb == 'x' ? "%s%llx" : "%s%llX", i < 0 ? "-" : "",
				       (unsigned long long)(i < 0 ? -(unsigned long long)i :
								    (unsigned long long)i));
		} else if (json_is_string(v)) {
			for (size_t i = 0; i < SN(v) && !e; i++)
				e = buf_printf(&t, verb == 'x' ? "%02x" : "%02X",
					       (unsigned char)S(v)[i]);
		} else {
			e = bad_verb(&t, verb, v);
		}
		break;
	default: e = bad_verb(&t, verb, v);
	}
	if (!e)
		e = pad(out, t.data ? t.data : "", t.len, width, left,
			zero && verb != 's' && verb != 'q');
	buf_free(&t);
	return e;
}

int tp_sprintf(struct buf *out, const char *fmt, size_t fmtlen, json_t **args, size_t nargs)
{
	size_t ai = 0;
	int e = 0;
	for (size_t i = 0; i < fmtlen && !e;) {
		if (fmt[i] != '%') {
			e = buf_putc(out, fmt[i++]);
			continue;
		}
		i++;
		bool left = false, zero = false, plus = false;
		for (; i < fmtlen && strchr("-0+# ", fmt[i]) && fmt[i]; i++) {
			left |= fmt[i] == '-';
			zero |= fmt[i] == '0';
			plus |= fmt[i] == '+';
		}
		int width = -1, prec = -1;
		for (; i < fmtlen && fmt[i] >= '0' && fmt[i] <= '9'; i++)
			width = (width < 0 ? 0 : width) * 10 + (fmt[i] - '0') > 4096 ?
					4096 :
					(width < 0 ? 0 : width) * 10 + (fmt[i] - '0');
		if (i < fmtlen && fmt[i] == '.') {
			prec = 0;
			for (i++; i < fmtlen && fmt[i] >= '0' && fmt[i] <= '9'; i++)
				prec = prec * 10 + (fmt[i] - '0') > 4096 ?
					       4096 :
					       prec * 10 + (fmt[i] - '0');
		}
		if (i >= fmtlen) {
			e = buf_puts(out, "%!(NOVERB)");
			break;
		}
		char verb = fmt[i++];
		if (verb == '%') {
			e = buf_putc(out, '%');
			continue;
		}
		if (ai >= nargs) {
			e = buf_printf(out, "%%!%c(MISSING)", verb);
			continue;
		}
		e = one_verb(out, verb, args[ai++], width, prec, left, zero, plus);
	}
	if (!e && ai < nargs) {
		e = buf_puts(out, "%!(EXTRA ");
		for (; ai < nargs && !e; ai++) {
			e = buf_printf(out, "%s=", tp_type_name(args[ai]));
			e = e ?: tp_print_value(out, args[ai], 0);
			if (ai + 1 < nargs)
				e = e ?: buf_puts(out, ", ");
		}
		e = e ?: buf_putc(out, ')');
	}
	return e;
}
