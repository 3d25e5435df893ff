/* template-parse — the parser of the Go text/template language.
 *
 * DESIGN: the lexer (template-lex.c) turns the untrusted source into an
 * array of tokens, each with its line and column. The parser is recursive
 * descent over that array, as Go's
 * text/template/parse builds its tree: lists of text, actions and
 * if/range/with blocks; pipelines of commands; commands of operands. Names
 * are checked here, as Go does at parse time: an unknown function or an
 * undefined variable is an error with its position. Nesting is bounded by
 * WF_TMPL_MAX_DEPTH, the source by WF_TMPL_MAX_SIZE, so every loop and the
 * recursion are bounded by the input. Not supported (an error): define,
 * template and block, as Tinkerbell's templates are a single text. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workflow/template-internal.h"

#define TP_CHUNK_SIZE 16384

struct tp_chunk {
	struct tp_chunk *next;
	size_t used, size;
	_Alignas(max_align_t) unsigned char data[];
};

void *tp_alloc(struct tp_arena *a, size_t n)
{
	n = (n + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
	if (!a->head || a->head->size - a->head->used < n) {
		size_t size = n > TP_CHUNK_SIZE ? n : TP_CHUNK_SIZE;
		struct tp_chunk *c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->size = size;
		a->head = c;
	}
	void *p = a->head->data + a->head->used;
	a->head->used += n;
	memset(p, 0, n);
	return p;
}

void tp_arena_free(struct tp_arena *a)
{
	struct tp_chunk *c = a ? a->head : NULL;
	while (c) {
		struct tp_chunk *next = c->next;
		free(c);
		c = next;
	}
	if (a)
		a->head = NULL;
}

int tp_fail(struct wf_tmpl_error *err, size_t line, size_t col, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err->line = line;
	err->column = col;
	snprintf(err->message, sizeof(err->message), "template: %zu:%zu: %s", line, col, msg);
	return -EINVAL;
}

/* ---- parser ---- */

struct parser {
	struct tp_tok *toks;
	size_t pos, ntoks;
	struct tp_arena *a;
	struct wf_tmpl_error *err;
	const char *vars[TP_MAX_VARS];
	size_t nvars;
	size_t depth;
	size_t range_depth;
	const struct tp_tok *term; /* the keyword of the last {{end}} or {{else}} */
};

enum term {
	TERM_EOF,
	TERM_END,
	TERM_ELSE,
	TERM_ELSE_CHAIN
};

static struct tp_tok *pk(struct parser *p)
{
	return &p->toks[p->pos];
}

static struct tp_tok *nx(struct parser *p)
{
	struct tp_tok *t = &p->toks[p->pos];
	if (t->t != TK_EOF)
		p->pos++;
	return t;
}

static bool tok_is(const struct tp_tok *t, const char *word)
{
	return t->t == TK_IDENT && t->n == strlen(word) && memcmp(t->s, word, t->n) == 0;
}

static struct tn *mknode(struct parser *p, enum tn_kind k, const struct tp_tok *t)
{
	struct tn *n = tp_alloc(p->a, sizeof(*n));
	if (n) {
		n->kind = k;
		n->line = t->line;
		n->col = t->col;
	}
	return n;
}

static const char *dupstr(struct parser *p, const char *s, size_t n)
{
	char *d = tp_alloc(p->a, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int unexpected(struct parser *p, const struct tp_tok *t, const char *where)
{
	if (t->t == TK_EOF)
		return tp_fail(p->err, t->line, t->col, "unexpected EOF%s", where);
	return tp_fail(p->err, t->line, t->col, "unexpected \"%.*s\"%s",
		       (int)(t->n > 40 ? 40 : t->n), t->s, where);
}

static bool var_defined(const struct parser *p, const char *s, size_t n)
{
	for (size_t i = p->nvars; i-- > 0;)
		if (strlen(p->vars[i]) == n && memcmp(p->vars[i], s, n) == 0)
			return true;
	return false;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static size_t put_utf8(char *d, uint32_t cp)
{
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Go's strconv.Unquote for "..." and '...': the token t without its
 * quotes into d (which has room for t->n bytes). */
static int unquote(struct parser *p, const struct tp_tok *t, char *d, size_t *ret_n)
{
	const char *s = t->s + 1;
	size_t n = t->n - 2, o = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] != '\\') {
			d[o++] = s[i++];
			continue;
		}
		char c = s[i + 1];
		i += 2;
		const char *simple = "a\ab\bf\fn\nr\rt\tv\v\\\\\"\"''";
		const char *m = strchr(simple, c);
		if (c && m && (m - simple) % 2 == 0) {
			d[o++] = m[1];
			continue;
		}
		size_t digits = c == 'x'               ? 2 :
				c == 'u'               ? 4 :
				c == 'U'               ? 8 :
				(c >= '0' && c <= '7') ? 3 :
							 0;
		if (!digits)
			return tp_fail(p->err, t->line, t->col,
				       "invalid syntax: bad escape in %.*s",
				       (int)(t->n > 40 ? 40 : t->n), t->s);
		if (c >= '0' && c <= '7')
			i--;
		uint32_t v = 0;
		for (size_t k = 0; k < digits; k++, i++) {
			int h = i < n ? (c >= '0' && c <= '7' ?
						 (s[i] >= '0' && s[i] <= '7' ? s[i] - '0' : -1) :
						 hexval(s[i])) :
					-1;
			if (h < 0)
				return tp_fail(p->err, t->line, t->col,
					       "invalid syntax: bad escape");
			v = v * (c >= '0' && c <= '7' ? 8 : 16) + (uint32_t)h;
		}
		if (c == 'x' || (c >= '0' && c <= '7')) {
			if (v > 255)
				return tp_fail(p->err, t->line, t->col,
					       "invalid syntax: bad escape");
			d[o++] = (char)v;
		} else {
			o += put_utf8(d + o, v);
		}
	}
	*ret_n = o;
	return 0;
}

static int parse_number(struct parser *p, const struct tp_tok *t, struct tn *n)
{
	char tmp[64];
	if (t->n >= sizeof(tmp))
		return tp_fail(p->err, t->line, t->col, "number too long: %.20s...", t->s);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i] != '_')
			tmp[k++] = t->s[i];
	tmp[k] = '\0';
	const char *s = tmp;
	bool neg = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
		base = 8, s += 2;
	else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		base = 2, s += 2;
	else if (s[0] == '0' && s[1] >= '0' && s[1] <= '9' && !strpbrk(s, ".eE"))
		base = 8, s += 1;
	bool isint = *s != '\0';
	uint64_t v = 0;
	for (const char *q = s; *q && isint; q++) {
		int h = hexval(*q);
		if (h < 0 || h >= base || v > (UINT64_MAX - (uint64_t)h) / (uint64_t)base)
			isint = false;
		else
			v = v * (uint64_t)base + (uint64_t)h;
	}
	if (isint && v <= (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
		n->is_int = true;
		n->i = neg ? (int64_t)(0 - v) : (int64_t)v;
		n->f = (double)n->i;
		return 0;
	}
	if (base == 10 || base == 8) {
		char *end;
		errno = 0;
		double f = strtod(tmp, &end);
		if (*end == '\0' && end != tmp && errno == 0 && !strpbrk(tmp, "xXpP") &&
		    !strstr(tmp, "inf") && !strstr(tmp, "nan")) {
			n->f = f;
			return 0;
		}
	}
	return tp_fail(p->err, t->line, t->col, "bad number syntax: \"%s\"", tmp);
}

/* The ".a.b" fields right after a term, with no space between. */
static int parse_fields(struct parser *p, struct tn *n)
{
	size_t start = p->pos, count = 0;
	while (pk(p)->t == TK_FIELD && !pk(p)->space_before) {
		if (++count > TP_MAX_FIELDS)
			return tp_fail(p->err, pk(p)->line, pk(p)->col,
				       "too many fields in a chain");
		p->pos++;
	}
	if (!count)
		return 0;
	const char **f = tp_alloc(p->a, (n->nfields + count) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	if (n->nfields)
		memcpy(f, n->fields, n->nfields * sizeof(*f));
	for (size_t i = 0; i < count; i++) {
		const struct tp_tok *t = &p->toks[start + i];
		if (!(f[n->nfields + i] = dupstr(p, t->s + 1, t->n - 1)))
			return -ENOMEM;
	}
	n->fields = f;
	n->nfields += count;
	return 0;
}

static int parse_pipeline(struct parser *p, enum tp_tk end, bool decl_ok, bool two_ok,
			  struct tn **ret);

static int parse_operand(struct parser *p, struct tn **ret)
{
	struct tp_tok *t = nx(p);
	struct tn *n = NULL;
	int e;

	switch (t->t) {
	case TK_IDENT: {
		static const char *const kw[] = {
			"if",    "else",     "end",    "range",    "with",
			"break", "continue", "define", "template", "block"
		};
		for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
			if (tok_is(t, kw[i]))
				return unexpected(p, t, " in command");
		if (!(n = mknode(p, TN_FUNC, t)) || !(n->str = dupstr(p, t->s, t->n)))
			return -ENOMEM;
		if (!tp_func_exists(n->str, NULL))
			return tp_fail(p->err, t->line, t->col, "function \"%s\" not defined",
				       n->str);
		break;
	}
	case TK_DOT:
		if (!(n = mknode(p, TN_DOT, t)))
			return -ENOMEM;
		break;
	case TK_NIL:
		if (!(n = mknode(p, TN_NIL, t)))
			return -ENOMEM;
		break;
	case TK_BOOL:
		if (!(n = mknode(p, TN_BOOL, t)))
			return -ENOMEM;
		n->b = t->n == 4;
		break;
	case TK_NUMBER:
		if (!(n = mknode(p, TN_NUMBER, t)))
			return -ENOMEM;
		if ((e = parse_number(p, t, n)) < 0)
			return e;
		break;
	case TK_CHAR: {
		char d[16];
		size_t dn;
		if (t->n > sizeof(d) || !(n = mknode(p, TN_NUMBER, t)))
			return t->n > sizeof(d) ? tp_fail(p->err, t->line, t->col,
							  "malformed character constant") :
						  -ENOMEM;
		if ((e = unquote(p, t, d, &dn)) < 0)
			return e;
		uint32_t cp = 0;
		const unsigned char *u = (const unsigned char *)d;
		if (dn == 1 && u[0] < 0x80)
			cp = u[0];
		else if (dn == 2 && (u[0] & 0xe0) == 0xc0)
			cp = (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f);
		else if (dn == 3 && (u[0] & 0xf0) == 0xe0)
			cp = (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 |
			     (u[2] & 0x3f);
		else if (dn == 4 && (u[0] & 0xf8) == 0xf0)
			cp = (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
			     (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
		else
			return tp_fail(p->err, t->line, t->col, "malformed character constant");
		n->is_int = true;
		n->i = cp;
		n->f = cp;
		break;
	}
	case TK_STRING: {
		char *d = tp_alloc(p->a, t->n);
		if (!d || !(n = mknode(p, TN_STRING, t)))
			return -ENOMEM;
		if ((e = unquote(p, t, d, &n->len)) < 0)
			return e;
		n->str = d;
		break;
	}
	case TK_RAW:
		if (!(n = mknode(p, TN_STRING, t)) || !(n->str = dupstr(p, t->s + 1, t->n - 2)))
			return -ENOMEM;
		n->len = t->n - 2;
		break;
	case TK_FIELD:
		p->pos--;
		if (!(n = mknode(p, TN_FIELD, t)))
			return -ENOMEM;
		t->space_before = false; /* the first field starts the chain */
		if ((e = parse_fields(p, n)) < 0)
			return e;
		return *ret = n, 0;
	case TK_VAR:
		if (!var_defined(p, t->s, t->n))
			return tp_fail(p->err, t->line, t->col, "undefined variable \"%.*s\"",
				       (int)(t->n > 40 ? 40 : t->n), t->s);
		if (!(n = mknode(p, TN_VAR, t)) || !(n->str = dupstr(p, t->s, t->n)))
			return -ENOMEM;
		if ((e = parse_fields(p, n)) < 0)
			return e;
		return *ret = n, 0;
	case TK_LPAREN: {
		struct tn *pipe;
		if (++p->depth > WF_TMPL_MAX_DEPTH)
			return tp_fail(p->err, t->line, t->col, "nesting deeper than %d",
				       WF_TMPL_MAX_DEPTH);
		if ((e = parse_pipeline(p, TK_RPAREN, false, false, &pipe)) < 0)
			return e;
		p->depth--;
		if (pk(p)->t == TK_FIELD && !pk(p)->space_before) {
			if (!(n = mknode(p, TN_CHAIN, t)))
				return -ENOMEM;
			n->pipe = pipe;
			if ((e = parse_fields(p, n)) < 0)
				return e;
			return *ret = n, 0;
		}
		return *ret = pipe, 0;
	}
	default: return unexpected(p, t, " in operand");
	}
	if (pk(p)->t == TK_FIELD && !pk(p)->space_before)
		return unexpected(p, pk(p), ": a field on a literal or a function");
	*ret = n;
	return 0;
}

static int parse_command(struct parser *p, enum tp_tk end, struct tn **ret)
{
	struct tn *cmd = mknode(p, TN_CMD, pk(p)), **tail;
	int e;
	if (!cmd)
		return -ENOMEM;
	tail = &cmd->first;
	while (pk(p)->t != TK_PIPE && pk(p)->t != end) {
		struct tn *op = NULL;
		if (pk(p)->t == TK_RIGHT || pk(p)->t == TK_RPAREN || pk(p)->t == TK_EOF)
			return unexpected(p, pk(p), " in command");
		if ((e = parse_operand(p, &op)) < 0)
			return e;
		*tail = op;
		tail = &op->next;
	}
	if (!cmd->first)
		return tp_fail(p->err, cmd->line, cmd->col, "missing value for command");
	*ret = cmd;
	return 0;
}

static int parse_decl(struct parser *p, struct tn *pipe, bool two_ok)
{
	size_t save = p->pos, nd = 0;
	const struct tp_tok *v[TP_MAX_DECL];
	for (;;) {
		if (pk(p)->t != TK_VAR || nd == TP_MAX_DECL)
			goto none;
		v[nd++] = nx(p);
		if (pk(p)->t == TK_COMMA && two_ok && nd == 1) {
			p->pos++;
			continue;
		}
		if (pk(p)->t == TK_DECLARE || (pk(p)->t == TK_ASSIGN && nd == 1))
			break;
		goto none;
	}
	pipe->assign = nx(p)->t == TK_ASSIGN;
	for (size_t i = 0; i < nd; i++) {
		if (!(pipe->decl[i] = dupstr(p, v[i]->s, v[i]->n)))
			return -ENOMEM;
		if (pipe->assign) {
			if (!var_defined(p, v[i]->s, v[i]->n))
				return tp_fail(p->err, v[i]->line, v[i]->col,
					       "undefined variable \"%s\"", pipe->decl[i]);
		} else {
			if (p->nvars == TP_MAX_VARS)
				return tp_fail(p->err, v[i]->line, v[i]->col, "too many variables");
			p->vars[p->nvars++] = pipe->decl[i];
		}
	}
	pipe->ndecl = nd;
	return 0;
none:
	p->pos = save;
	return 0;
}

static int parse_pipeline(struct parser *p, enum tp_tk end, bool decl_ok, bool two_ok,
			  struct tn **ret)
{
	struct tn *pipe = mknode(p, TN_PIPE, pk(p)), **tail;
	int e;
	if (!pipe)
		return -ENOMEM;
	if (decl_ok && (e = parse_decl(p, pipe, two_ok)) < 0)
		return e;
	tail = &pipe->first;
	for (;;) {
		struct tn *cmd = NULL;
		if ((e = parse_command(p, end, &cmd)) < 0)
			return e;
		*tail = cmd;
		tail = &cmd->next;
		if (nx(p)->t == end)
			break;
		if (pk(p)->t == end)
			return tp_fail(p->err, pk(p)->line, pk(p)->col, "missing command after |");
	}
	*ret = pipe;
	return 0;
}

static int parse_list(struct parser *p, struct tn **ret, enum term *ret_term);

static int parse_control(struct parser *p, enum tn_kind kind, const struct tp_tok *kw,
			 struct tn **ret)
{
	struct tn *n = mknode(p, kind, kw);
	size_t mark = p->nvars;
	enum term term;
	int e;
	if (!n)
		return -ENOMEM;
	if (++p->depth > WF_TMPL_MAX_DEPTH)
		return tp_fail(p->err, kw->line, kw->col, "nesting deeper than %d",
			       WF_TMPL_MAX_DEPTH);
	if ((e = parse_pipeline(p, TK_RIGHT, true, kind == TN_RANGE, &n->pipe)) < 0)
		return e;
	if (kind == TN_RANGE)
		p->range_depth++;
	if ((e = parse_list(p, &n->list, &term)) < 0)
		return e;
	if (kind == TN_RANGE)
		p->range_depth--;
	if (term == TERM_ELSE_CHAIN) {
		/* {{else if ...}} / {{else with ...}}: a nested block that
		 * shares this one's {{end}}. */
		struct tp_tok *kw2 = nx(p);
		struct tn *inner;
		if (kind == TN_RANGE)
			return unexpected(p, kw2, " after else in range");
		if ((e = parse_control(p, tok_is(kw2, "if") ? TN_IF : TN_WITH, kw2, &inner)) < 0)
			return e;
		if (!(n->else_list = mknode(p, TN_LIST, kw2)))
			return -ENOMEM;
		n->else_list->first = inner;
	} else if (term == TERM_ELSE) {
		if ((e = parse_list(p, &n->else_list, &term)) < 0)
			return e;
		if (term != TERM_END)
			return tp_fail(p->err, kw->line, kw->col,
				       term == TERM_EOF ? "unexpected EOF: no {{end}}" :
							  "expected end; found else");
	} else if (term != TERM_END) {
		return tp_fail(p->err, kw->line, kw->col,
			       "unexpected EOF: no {{end}} for this block");
	}
	p->nvars = mark;
	p->depth--;
	*ret = n;
	return 0;
}

static int parse_item(struct parser *p, struct tn **ret, enum term *ret_term)
{
	struct tp_tok *left = nx(p), *t = pk(p);
	int e;
	*ret = NULL;
	if (tok_is(t, "end") || tok_is(t, "break") || tok_is(t, "continue")) {
		p->term = t;
		p->pos++;
		if (pk(p)->t != TK_RIGHT)
			return unexpected(p, pk(p), " after keyword");
		p->pos++;
		if (tok_is(t, "end"))
			return *ret_term = TERM_END, 0;
		if (!p->range_depth)
			return tp_fail(p->err, t->line, t->col, "{{%.*s}} outside {{range}}",
				       (int)t->n, t->s);
		if (!(*ret = mknode(p, tok_is(t, "break") ? TN_BREAK : TN_CONTINUE, t)))
			return -ENOMEM;
		return 0;
	}
	if (tok_is(t, "else")) {
		p->term = t;
		p->pos++;
		if (tok_is(pk(p), "if") || tok_is(pk(p), "with"))
			return *ret_term = TERM_ELSE_CHAIN, 0;
		if (pk(p)->t != TK_RIGHT)
			return unexpected(p, pk(p), " in else");
		p->pos++;
		return *ret_term = TERM_ELSE, 0;
	}
	if (tok_is(t, "if") || tok_is(t, "range") || tok_is(t, "with")) {
		p->pos++;
		return parse_control(p,
				     tok_is(t, "if")    ? TN_IF :
				     tok_is(t, "range") ? TN_RANGE :
							  TN_WITH,
				     t, ret);
	}
	if (tok_is(t, "define") || tok_is(t, "template") || tok_is(t, "block"))
		return tp_fail(p->err, t->line, t->col, "{{%.*s}} is not supported", (int)t->n,
			       t->s);
	struct tn *act = mknode(p, TN_ACTION, left);
	if (!act)
		return -ENOMEM;
	if ((e = parse_pipeline(p, TK_RIGHT, true, false, &act->pipe)) < 0)
		return e;
	*ret = act;
	return 0;
}

static int parse_list(struct parser *p, struct tn **ret, enum term *ret_term)
{
	struct tn *list = mknode(p, TN_LIST, pk(p)), **tail;
	int e;
	if (!list)
		return -ENOMEM;
	tail = &list->first;
	for (;;) {
		struct tp_tok *t = pk(p);
		struct tn *n = NULL;
		enum term term = TERM_EOF;
		if (t->t == TK_EOF) {
			*ret_term = TERM_EOF;
			break;
		}
		if (t->t == TK_TEXT) {
			p->pos++;
			if (!(n = mknode(p, TN_TEXT, t)))
				return -ENOMEM;
			n->str = t->s;
			n->len = t->n;
		} else {
			if ((e = parse_item(p, &n, &term)) < 0)
				return e;
			if (!n) {
				*ret_term = term;
				break;
			}
		}
		*tail = n;
		tail = &n->next;
	}
	*ret = list;
	return 0;
}

int tp_parse(const char *src, size_t len, struct tp_arena *a, struct tn **ret,
	     struct wf_tmpl_error *err)
{
	struct tp_tok *toks = NULL;
	size_t ntoks = 0;
	struct parser *p = NULL;
	struct tn *list;
	enum term term;
	int e;

	if (len > WF_TMPL_MAX_SIZE) {
		e = tp_fail(err, 1, 1, "template larger than %d bytes", WF_TMPL_MAX_SIZE);
		e = -E2BIG;
		goto out;
	}
	if ((e = tp_lex(src, len, &toks, &ntoks, err)) < 0)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p) {
		e = -ENOMEM;
		goto out;
	}
	p->toks = toks;
	p->ntoks = ntoks;
	p->a = a;
	p->err = err;
	p->vars[p->nvars++] = "$";
	if ((e = parse_list(p, &list, &term)) < 0)
		goto out;
	if (term != TERM_EOF) {
		const struct tp_tok *t = p->term;
		e = tp_fail(err, t->line, t->col, "unexpected {{%s}}",
			    term == TERM_END ? "end" : "else");
		goto out;
	}
	*ret = list;
out:
	if (e == -ENOMEM)
		snprintf(err->message, sizeof(err->message), "template: out of memory");
	free(p);
	free(toks);
	return e;
}
