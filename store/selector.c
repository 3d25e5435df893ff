/* selector — Kubernetes label selectors: parsing and matching.
 *
 * DESIGN: a selector is a list of requirements joined by commas, all of
 * which must hold (AND):
 *
 *   key            the label exists           !key          it does not
 *   key=value      key==value                 key!=value    (absent counts as !=)
 *   key in (a,b)   key notin (a,b)            (absent counts as notin)
 *
 * Whitespace may surround every token. Keys are qualified names
 * ([dns-subdomain "/"] name, name at most 63 characters of [A-Za-z0-9._-]
 * beginning and ending alphanumeric); values follow the name rule and may
 * be empty. The text comes from a URL (labelSelector=) or a command line:
 * untrusted. The parser walks it once with a bounded cursor; every size
 * has a named limit, checked before anything is allocated from it.
 * Matching is a pure function of the parsed selector and a labels object.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#define SEL_MAX_LEN 4096   /* bytes of selector text */
#define SEL_MAX_REQS 64    /* requirements in one selector */
#define SEL_MAX_VALUES 64  /* values in one in/notin set */
#define SEL_MAX_NAME 63    /* label name part and value */
#define SEL_MAX_PREFIX 253 /* DNS subdomain prefix of a key */

enum sel_op {
	SEL_EXISTS,
	SEL_NOT_EXISTS,
	SEL_EQ,
	SEL_NEQ,
	SEL_IN,
	SEL_NOTIN
};

struct sel_req {
	enum sel_op op;
	char *key;
	size_t nvalues;
	char **values;
};

struct store_selector {
	size_t n;
	struct sel_req reqs[SEL_MAX_REQS];
};

struct sel_parser {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
};

static int sel_error(struct sel_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int sel_error(struct sel_parser *p, const char *fmt, ...)
{
	if (p->err && p->errlen) {
		char msg[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		snprintf(p->err, p->errlen, "label selector: %s (at offset %zu)", msg, p->pos);
	}
	return -EINVAL;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_special(char c)
{
	return is_space(c) || c == '!' || c == '=' || c == ',' || c == '(' || c == ')' ||
	       c == '<' || c == '>';
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static void skip_ws(struct sel_parser *p)
{
	while (p->pos < p->len && is_space(p->s[p->pos]))
		p->pos++;
}

static bool at_end(const struct sel_parser *p)
{
	return p->pos >= p->len;
}

static char peek(const struct sel_parser *p)
{
	return at_end(p) ? '\0' : p->s[p->pos];
}

/* Reads an identifier (a run of non-special characters): *ret points into
 * the text, *ret_len may be 0. */
static void read_ident(struct sel_parser *p, const char **ret, size_t *ret_len)
{
	size_t start = p->pos;
	while (p->pos < p->len && !is_special(p->s[p->pos]))
		p->pos++;
	*ret = p->s + start;
	*ret_len = p->pos - start;
}

/* A label name or value: at most 63 of [A-Za-z0-9._-], alphanumeric at
 * both ends. Empty is allowed only when allow_empty. */
static bool name_valid(const char *s, size_t n, bool allow_empty)
{
	if (n == 0)
		return allow_empty;
	if (n > SEL_MAX_NAME || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A DNS subdomain: dot-separated labels of [a-z0-9-], alphanumeric ends. */
static bool subdomain_valid(const char *s, size_t n)
{
	if (n == 0 || n > SEL_MAX_PREFIX)
		return false;
	size_t lab = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '.') {
			if (lab == 0 || s[i - 1] == '-')
				return false;
			lab = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
		if (lab == 0 && c == '-')
			return false;
		lab++;
	}
	return lab > 0 && s[n - 1] != '-';
}

static bool key_valid(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);
	if (!slash)
		return name_valid(s, n, false);
	size_t pl = (size_t)(slash - s);
	return subdomain_valid(s, pl) && name_valid(slash + 1, n - pl - 1, false);
}

static int req_add_value(struct sel_parser *p, struct sel_req *r, const char *v, size_t n)
{
	if (!name_valid(v, n, true))
		return sel_error(p, "invalid label value \"%.*s\"", (int)(n > 80 ? 80 : n), v);
	if (r->nvalues >= SEL_MAX_VALUES)
		return sel_error(p, "more than %d values in a set", SEL_MAX_VALUES);
	if (!r->values) {
		r->values = calloc(SEL_MAX_VALUES, sizeof(char *));
		if (!r->values)
			return -ENOMEM;
	}
	r->values[r->nvalues] = strndup(v, n);
	if (!r->values[r->nvalues])
		return -ENOMEM;
	r->nvalues++;
	return 0;
}

/* Parses "(v1, v2, ...)" after in/notin. */
static int parse_set(struct sel_parser *p, struct sel_req *r)
{
	skip_ws(p);
	if (peek(p) != '(')
		return sel_error(p, "expected \"(\" after in/notin");
	p->pos++;
	for (;;) {
		skip_ws(p);
		const char *v;
		size_t n;
		read_ident(p, &v, &n);
		int e = req_add_value(p, r, v, n);
		if (e < 0)
			return e;
		skip_ws(p);
		char c = peek(p);
		p->pos++;
		if (c == ')')
			break;
		if (c != ',') {
			p->pos--;
			return sel_error(p, "expected \",\" or \")\" in a value set");
		}
	}
	if (r->nvalues == 1 && r->values[0][0] == '\0')
		return sel_error(p, "empty value set");
	return 0;
}

static int parse_req(struct sel_parser *p, struct sel_req *r)
{
	skip_ws(p);
	bool neg = false;
	if (peek(p) == '!') {
		neg = true;
		p->pos++;
		skip_ws(p);
	}
	const char *key;
	size_t kn;
	read_ident(p, &key, &kn);
	if (kn == 0)
		return sel_error(p, "expected a label key");
	if (!key_valid(key, kn))
		return sel_error(p, "invalid label key \"%.*s\"", (int)(kn > 80 ? 80 : kn), key);
	r->key = strndup(key, kn);
	if (!r->key)
		return -ENOMEM;
	skip_ws(p);
	char c = peek(p);
	if (neg) {
		r->op = SEL_NOT_EXISTS;
		return 0;
	}
	if (at_end(p) || c == ',') {
		r->op = SEL_EXISTS;
		return 0;
	}
	if (c == '=' || c == '!') {
		if (c == '!') {
			if (p->pos + 1 >= p->len || p->s[p->pos + 1] != '=')
				return sel_error(p, "expected \"!=\"");
			r->op = SEL_NEQ;
			p->pos += 2;
		} else {
			r->op = SEL_EQ;
			p->pos += (p->pos + 1 < p->len && p->s[p->pos + 1] == '=') ? 2 : 1;
		}
		skip_ws(p);
		const char *v;
		size_t vn;
		read_ident(p, &v, &vn);
		return req_add_value(p, r, v, vn);
	}
	const char *word;
	size_t wn;
	read_ident(p, &word, &wn);
	if (wn == 2 && memcmp(word, "in", 2) == 0)
		r->op = SEL_IN;
	else if (wn == 5 && memcmp(word, "notin", 5) == 0)
		r->op = SEL_NOTIN;
	else
		return sel_error(
			p,
			"expected \"=\", \"==\", \"!=\", \"in\", \"notin\", \",\" or the end "
			"after key \"%s\"",
			r->key);
	return parse_set(p, r);
}

int store_selector_parse(const char *s, struct store_selector **ret, char *err, size_t errlen)
{
	struct sel_parser p = { .s = s ? s : "", .err = err, .errlen = errlen };
	struct store_selector *sel = NULL;
	int e;

	p.len = strnlen(p.s, SEL_MAX_LEN + 1);
	if (p.len > SEL_MAX_LEN) {
		e = sel_error(&p, "longer than %d bytes", SEL_MAX_LEN);
		goto out;
	}
	sel = calloc(1, sizeof(*sel));
	if (!sel) {
		e = -ENOMEM;
		goto out;
	}
	skip_ws(&p);
	while (!at_end(&p)) {
		if (sel->n >= SEL_MAX_REQS) {
			e = sel_error(&p, "more than %d requirements", SEL_MAX_REQS);
			goto out;
		}
		e = parse_req(&p, &sel->reqs[sel->n++]);
		if (e < 0)
			goto out;
		skip_ws(&p);
		if (at_end(&p))
			break;
		if (peek(&p) != ',') {
			e = sel_error(&p, "expected \",\" between requirements");
			goto out;
		}
		p.pos++;
		skip_ws(&p);
		if (at_end(&p)) {
			e = sel_error(&p, "expected a requirement after \",\"");
			goto out;
		}
	}
	*ret = sel;
	sel = NULL;
	e = 0;
out:
	if (e == -ENOMEM && err && errlen)
		snprintf(err, errlen, "label selector: out of memory");
	store_selector_free(sel);
	return e;
}

static bool in_set(const struct sel_req *r, const char *v)
{
	for (size_t i = 0; i < r->nvalues; i++)
		if (strcmp(r->values[i], v) == 0)
			return true;
	return false;
}

bool store_selector_match(const struct store_selector *sel, const json_t *labels)
{
	if (!sel)
		return true;
	for (size_t i = 0; i < sel->n; i++) {
		const struct sel_req *r = &sel->reqs[i];
		const json_t *jv = json_is_object(labels) ? json_object_get(labels, r->key) : NULL;
		const char *v = json_string_value(jv);
		bool ok;
		switch (r->op) {
		case SEL_EXISTS: ok = jv != NULL; break;
		case SEL_NOT_EXISTS: ok = jv == NULL; break;
		case SEL_EQ:
		case SEL_IN: ok = v && in_set(r, v); break;
		case SEL_NEQ:
		case SEL_NOTIN: ok = !v || !in_set(r, v); break;
		default: ok = false;
		}
		if (!ok)
			return false;
	}
	return true;
}

void store_selector_free(struct store_selector *sel)
{
	if (!sel)
		return;
	for (size_t i = 0; i < sel->n; i++) {
		for (size_t j = 0; j < sel->reqs[i].nvalues; j++)
			free(sel->reqs[i].values[j]);
		free(sel->reqs[i].values);
		free(sel->reqs[i].key);
	}
	free(sel);
}
