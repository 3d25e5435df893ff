/* template-lex — the lexer of the Go text/template language.
 *
 * DESIGN: the source is untrusted (a Template object's spec.data). It is
 * read through a byte cursor (common/cursor.h), every peek checked against
 * what remains, into an array of tokens: the text between actions, with
 * the trim markers "{{- " and " -}}" applied and comments dropped, and the
 * tokens inside each action as Go's text/template/parse lexer makes them
 * (fields ".Name", variables "$x", numbers, quoted, raw and character
 * literals, keywords as identifiers). Every token carries its line and
 * column (1-based, in bytes) for the parser's and evaluator's errors. The
 * array grows with the input, which WF_TMPL_MAX_SIZE bounds. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cursor.h"
#include "workflow/template-internal.h"

struct lexer {
	struct rd r;
	size_t line, col;
	struct tp_tok *toks;
	size_t ntoks, alloc;
	struct wf_tmpl_error *err;
};

static int lx_peek(const struct lexer *l, size_t k)
{
	return k < l->r.len ? l->r.p[k] : -1;
}

static bool lx_starts(const struct lexer *l, const char *s)
{
	size_t n = strlen(s);
	return l->r.len >= n && memcmp(l->r.p, s, n) == 0;
}

static void lx_skip(struct lexer *l, size_t n)
{
	const uint8_t *p;
	if (rd_bytes(&l->r, n, &p) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			l->line++;
			l->col = 1;
		} else {
			l->col++;
		}
	}
}

static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_alnum(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c >= 0x80;
}

static int lx_emit(struct lexer *l, enum tp_tk t, const char *s, size_t n, size_t line, size_t col,
		   bool space)
{
	if (l->ntoks == l->alloc) {
		size_t alloc = l->alloc ? l->alloc * 2 : 256;
		struct tp_tok *t2 = realloc(l->toks, alloc * sizeof(*t2));
		if (!t2)
			return -ENOMEM;
		l->toks = t2;
		l->alloc = alloc;
	}
	l->toks[l->ntoks++] = (struct tp_tok){ t, s, n, line, col, space };
	return 0;
}

/* " -}}" with any one space character before the dash. */
static bool lx_right_trim(const struct lexer *l)
{
	return is_space(lx_peek(l, 0)) && lx_peek(l, 1) == '-' && lx_peek(l, 2) == '}' &&
	       lx_peek(l, 3) == '}';
}

static void lx_skip_space(struct lexer *l)
{
	while (is_space(lx_peek(l, 0)))
		lx_skip(l, 1);
}

/* A quoted string, raw string or character constant, delimiters included. */
static int lx_quoted(struct lexer *l, char q, enum tp_tk t, bool space)
{
	const char *s = (const char *)l->r.p;
	size_t line = l->line, col = l->col;
	size_t i = 1;
	for (;;) {
		int c = lx_peek(l, i);
		if (c < 0 || (c == '\n' && q != '`'))
			return tp_fail(l->err, line, col, "unterminated %s",
				       q == '`' ? "raw quoted string" : "quoted string");
		if (c == '\\' && q != '`') {
			if (lx_peek(l, i + 1) < 0)
				return tp_fail(l->err, line, col, "unterminated quoted string");
			i += 2;
			continue;
		}
		i++;
		if (c == q)
			break;
	}
	lx_skip(l, i);
	return lx_emit(l, t, s, i, line, col, space);
}

static int lx_number(struct lexer *l, bool space)
{
	const char *s = (const char *)l->r.p;
	size_t line = l->line, col = l->col, i = 0;
	if (lx_peek(l, 0) == '+' || lx_peek(l, 0) == '-')
		i++;
	for (;;) {
		int c = lx_peek(l, i);
		if (c < 0)
			break;
		if ((c == '+' || c == '-') && i > 0) {
			int p = s[i - 1];
			if (p != 'e' && p != 'E' && p != 'p' && p != 'P')
				break;
			i++;
			continue;
		}
		if (c == '.' || (is_alnum(c) && c < 0x80)) {
			i++;
			continue;
		}
		break;
	}
	lx_skip(l, i);
	return lx_emit(l, TK_NUMBER, s, i, line, col, space);
}

/* Lexes inside one action, after its left delimiter, up to and including
 * the right one. */
static int lx_action(struct lexer *l)
{
	for (;;) {
		bool space = false;
		while (is_space(lx_peek(l, 0)) && !lx_right_trim(l)) {
			lx_skip(l, 1);
			space = true;
		}
		size_t line = l->line, col = l->col;
		const char *s = (const char *)l->r.p;
		int c = lx_peek(l, 0), e;
		if (c < 0)
			return tp_fail(l->err, line, col, "unclosed action");
		if (lx_right_trim(l)) {
			lx_skip(l, 4);
			lx_skip_space(l);
			return lx_emit(l, TK_RIGHT, s, 4, line, col, true);
		}
		if (lx_starts(l, "}}")) {
			lx_skip(l, 2);
			return lx_emit(l, TK_RIGHT, s, 2, line, col, space);
		}
		switch (c) {
		case '|':
		case '(':
		case ')':
		case ',':
		case '=':
			lx_skip(l, 1);
			e = lx_emit(l,
				    c == '|' ? TK_PIPE :
				    c == '(' ? TK_LPAREN :
				    c == ')' ? TK_RPAREN :
				    c == ',' ? TK_COMMA :
					       TK_ASSIGN,
				    s, 1, line, col, space);
			break;
		case ':':
			if (lx_peek(l, 1) != '=')
				return tp_fail(l->err, line, col, "expected :=");
			lx_skip(l, 2);
			e = lx_emit(l, TK_DECLARE, s, 2, line, col, space);
			break;
		case '"': e = lx_quoted(l, '"', TK_STRING, space); break;
		case '`': e = lx_quoted(l, '`', TK_RAW, space); break;
		case '\'': e = lx_quoted(l, '\'', TK_CHAR, space); break;
		case '$': {
			size_t i = 1;
			while (is_alnum(lx_peek(l, i)))
				i++;
			lx_skip(l, i);
			e = lx_emit(l, TK_VAR, s, i, line, col, space);
			break;
		}
		case '.': {
			int d = lx_peek(l, 1);
			if (d >= '0' && d <= '9') {
				e = lx_number(l, space);
				break;
			}
			size_t i = 1;
			while (is_alnum(lx_peek(l, i)))
				i++;
			lx_skip(l, i);
			e = lx_emit(l, i == 1 ? TK_DOT : TK_FIELD, s, i, line, col, space);
			break;
		}
		default:
			if ((c >= '0' && c <= '9') ||
			    ((c == '+' || c == '-') && lx_peek(l, 1) >= '0' &&
			     lx_peek(l, 1) <= '9')) {
				e = lx_number(l, space);
				break;
			}
			if (is_alnum(c)) {
				size_t i = 0;
				while (is_alnum(lx_peek(l, i)))
					i++;
				enum tp_tk t = TK_IDENT;
				if ((i == 4 && memcmp(s, "true", 4) == 0) ||
				    (i == 5 && memcmp(s, "false", 5) == 0))
					t = TK_BOOL;
				else if (i == 3 && memcmp(s, "nil", 3) == 0)
					t = TK_NIL;
				lx_skip(l, i);
				e = lx_emit(l, t, s, i, line, col, space);
				break;
			}
			if (c >= 0x20 && c < 0x7f)
				return tp_fail(l->err, line, col, "unexpected \"%c\" in command",
					       c);
			return tp_fail(l->err, line, col, "unexpected byte 0x%02x in command", c);
		}
		if (e < 0)
			return e;
	}
}

/* A comment, after "{{" or "{{- ": up to "*}}" or "* -}}". */
static int lx_comment(struct lexer *l, size_t line, size_t col)
{
	lx_skip(l, 2);
	for (;;) {
		if (l->r.len == 0)
			return tp_fail(l->err, line, col, "unclosed comment");
		if (lx_starts(l, "*/"))
			break;
		lx_skip(l, 1);
	}
	lx_skip(l, 2);
	if (lx_right_trim(l)) {
		lx_skip(l, 4);
		lx_skip_space(l);
		return 0;
	}
	if (!lx_starts(l, "}}"))
		return tp_fail(l->err, line, col, "comment ends before closing delimiter");
	lx_skip(l, 2);
	return 0;
}

static int lx_run(struct lexer *l)
{
	int e;
	for (;;) {
		const char *s = (const char *)l->r.p;
		size_t line = l->line, col = l->col, n = 0;
		while (n < l->r.len &&
		       !(l->r.p[n] == '{' && n + 1 < l->r.len && l->r.p[n + 1] == '{'))
			n++;
		lx_skip(l, n);
		bool left_trim = lx_starts(l, "{{-") && is_space(lx_peek(l, 3));
		size_t tn = n;
		if (left_trim)
			while (tn > 0 && is_space(s[tn - 1]))
				tn--;
		if (tn > 0 && (e = lx_emit(l, TK_TEXT, s, tn, line, col, false)) < 0)
			return e;
		if (l->r.len == 0)
			return lx_emit(l, TK_EOF, (const char *)l->r.p, 0, l->line, l->col, false);
		line = l->line;
		col = l->col;
		lx_skip(l, left_trim ? 4 : 2);
		if (lx_starts(l, "/*")) {
			if ((e = lx_comment(l, line, col)) < 0)
				return e;
			continue;
		}
		if ((e = lx_emit(l, TK_LEFT, s + n, 2, line, col, false)) < 0 ||
		    (e = lx_action(l)) < 0)
			return e;
	}
}

int tp_lex(const char *src, size_t len, struct tp_tok **ret, size_t *ret_n,
	   struct wf_tmpl_error *err)
{
	struct lexer l = { .r = rd_init(src, len), .line = 1, .col = 1, .err = err };
	int e = lx_run(&l);
	if (e < 0) {
		free(l.toks);
		return e;
	}
	*ret = l.toks;
	*ret_n = l.ntoks;
	return 0;
}
