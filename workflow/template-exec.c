/* template-exec — the evaluator of a parsed template over jansson values.
 *
 * DESIGN: Go's text/template executes a tree over reflected Go values;
 * here the values are JSON (the template data is JSON: the hardwareMap,
 * the Hardware), so a value is a json_t: object for Go maps and structs,
 * array for slices, string, integer (Go's int), real (float64), true/false
 * and null (nil). Semantics are Go's with Option("missingkey=error"): a
 * field that is not in its map is an error naming it; {{.}} of nil prints
 * "<no value>"; and/or evaluate lazily and yield an operand; range walks
 * arrays in order and maps in sorted key order, and runs its else when
 * there is nothing to walk. Every render is bounded: the output by
 * WF_TMPL_MAX_OUTPUT (the buffer's cap), the work by WF_TMPL_MAX_STEPS
 * nodes, the recursion by the parse depth. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workflow/template-internal.h"

enum {
	FLOW_BREAK = 1,
	FLOW_CONTINUE = 2
};

struct ex_var {
	const char *name;
	json_t *v;
};

struct ex {
	struct buf *out;
	struct wf_tmpl_error *err;
	struct ex_var vars[TP_MAX_VARS];
	size_t nvars;
	size_t steps;
};

static int ex_fail(struct ex *x, const struct tn *n, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int ex_fail(struct ex *x, const struct tn *n, int e, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tp_fail(x->err, n->line, n->col, "%s", msg);
	return e;
}

static int ex_step(struct ex *x, const struct tn *n)
{
	if (++x->steps > WF_TMPL_MAX_STEPS)
		return ex_fail(x, n, -E2BIG, "more than %d steps", WF_TMPL_MAX_STEPS);
	return 0;
}

static int var_push(struct ex *x, const struct tn *n, const char *name, json_t *v)
{
	if (x->nvars == TP_MAX_VARS)
		return ex_fail(x, n, -E2BIG, "too many variables");
	x->vars[x->nvars++] = (struct ex_var){ name, json_incref(v) };
	return 0;
}

static void var_pop(struct ex *x, size_t mark)
{
	while (x->nvars > mark)
		json_decref(x->vars[--x->nvars].v);
}

static struct ex_var *var_find(struct ex *x, const char *name)
{
	for (size_t i = x->nvars; i-- > 0;)
		if (strcmp(x->vars[i].name, name) == 0)
			return &x->vars[i];
	return NULL;
}

/* ---- evaluation ---- */

static int eval_pipe(struct ex *x, json_t *dot, const struct tn *pipe, bool decl, json_t **ret);
static int eval_arg(struct ex *x, json_t *dot, const struct tn *n, json_t **ret);

static int eval_fields(struct ex *x, const struct tn *n, json_t *recv, json_t **ret)
{
	json_t *v = recv;
	for (size_t i = 0; i < n->nfields; i++) {
		const char *f = n->fields[i];
		if (json_is_object(v)) {
			json_t *next = json_object_get(v, f);
			if (!next)
				return ex_fail(x, n, -EINVAL, "map has no entry for key \"%s\"", f);
			v = next;
		} else if (json_is_null(v)) {
			return ex_fail(x, n, -EINVAL, "nil pointer evaluating interface {}.%s", f);
		} else {
			return ex_fail(x, n, -EINVAL, "can't evaluate field %s in type %s", f,
				       tp_type_name(v));
		}
	}
	*ret = json_incref(v);
	return 0;
}

static int call_func(struct ex *x, json_t *dot, const struct tn *cmd, json_t *final, json_t **ret)
{
	const struct tn *fn = cmd->first;
	enum tp_builtin b;
	json_t *args[32];
	size_t nargs = 0;
	char msg[160];
	int e = 0;

	tp_func_exists(fn->str, &b);
	if (b == TB_AND || b == TB_OR) {
		/* Lazy: stop at the first operand that decides. */
		json_t *v = NULL;
		const struct tn *a = fn->next;
		if (!a && !final)
			return ex_fail(x, fn, -EINVAL,
				       "wrong number of args for %s: want at least 1 got 0",
				       fn->str);
		for (;;) {
			json_decref(v);
			if (a) {
				if ((e = eval_arg(x, dot, a, &v)) < 0)
					return e;
			} else {
				v = json_incref(final);
			}
			bool last = a ? (!a->next && !final) : true;
			if (last || tp_truth(v) == (b == TB_OR))
				break;
			a = a ? a->next : NULL;
		}
		*ret = v;
		return 0;
	}
	for (const struct tn *a = fn->next; a; a = a->next) {
		if (nargs == sizeof(args) / sizeof(args[0]) - 1) {
			e = ex_fail(x, fn, -EINVAL, "too many arguments to %s", fn->str);
			goto out;
		}
		if ((e = eval_arg(x, dot, a, &args[nargs])) < 0)
			goto out;
		nargs++;
	}
	if (final)
		args[nargs++] = json_incref(final);
	msg[0] = '\0';
	e = tp_func_call(fn->str, args, nargs, ret, msg, sizeof(msg));
	if (e < 0 && e != -ENOMEM)
		e = ex_fail(x, fn, e == -E2BIG ? -E2BIG : -EINVAL, "error calling %s: %s", fn->str,
			    msg);
out:
	for (size_t i = 0; i < nargs; i++)
		json_decref(args[i]);
	return e;
}

/* An operand as an argument (no arguments of its own). */
static int eval_arg(struct ex *x, json_t *dot, const struct tn *n, json_t **ret)
{
	int e;
	json_t *v;
	if ((e = ex_step(x, n)) < 0)
		return e;
	switch (n->kind) {
	case TN_DOT: *ret = json_incref(dot); return 0;
	case TN_NIL: *ret = json_null(); return 0;
	case TN_BOOL: *ret = json_boolean(n->b); return 0;
	case TN_NUMBER:
		*ret = n->is_int ? json_integer(n->i) : json_real(n->f);
		return *ret ? 0 : -ENOMEM;
	case TN_STRING:
		*ret = json_stringn(n->str, n->len);
		if (!*ret)
			return ex_fail(x, n, -EINVAL, "string is not valid UTF-8");
		return 0;
	case TN_FIELD: return eval_fields(x, n, dot, ret);
	case TN_VAR: {
		struct ex_var *var = var_find(x, n->str);
		if (!var)
			return ex_fail(x, n, -EINVAL, "undefined variable: %s", n->str);
		return eval_fields(x, n, var->v, ret);
	}
	case TN_CHAIN:
		if ((e = eval_pipe(x, dot, n->pipe, false, &v)) < 0)
			return e;
		e = eval_fields(x, n, v, ret);
		json_decref(v);
		return e;
	case TN_PIPE: return eval_pipe(x, dot, n, false, ret);
	case TN_FUNC: {
		struct tn cmd = { .kind = TN_CMD, .line = n->line, .col = n->col };
		struct tn fn = *n;
		fn.next = NULL;
		cmd.first = &fn;
		return call_func(x, dot, &cmd, NULL, ret);
	}
	default: return ex_fail(x, n, -EINVAL, "can't handle node as an argument");
	}
}

static int eval_cmd(struct ex *x, json_t *dot, const struct tn *cmd, json_t *final, json_t **ret)
{
	const struct tn *first = cmd->first;
	if (first->kind == TN_FUNC)
		return call_func(x, dot, cmd, final, ret);
	if (first->next || final) {
		const struct tn *at = first->next ? first->next : first;
		if (first->kind == TN_FIELD || first->kind == TN_VAR || first->kind == TN_CHAIN)
			return ex_fail(x, at, -EINVAL, "%s is not a method but has arguments",
				       first->nfields ? first->fields[first->nfields - 1] :
							first->str);
		return ex_fail(x, at, -EINVAL, "can't give argument to non-function");
	}
	if (first->kind == TN_NIL)
		return ex_fail(x, first, -EINVAL, "nil is not a command");
	return eval_arg(x, dot, first, ret);
}

static int eval_pipe(struct ex *x, json_t *dot, const struct tn *pipe, bool decl, json_t **ret)
{
	json_t *v = NULL;
	int e;
	for (const struct tn *c = pipe->first; c; c = c->next) {
		json_t *next;
		e = eval_cmd(x, dot, c, v, &next);
		json_decref(v);
		if (e < 0)
			return e;
		v = next;
	}
	if (decl && pipe->ndecl) {
		if (pipe->assign) {
			struct ex_var *var = var_find(x, pipe->decl[0]);
			if (!var) {
				json_decref(v);
				return ex_fail(x, pipe, -EINVAL, "undefined variable: %s",
					       pipe->decl[0]);
			}
			json_decref(var->v);
			var->v = json_incref(v);
		} else if ((e = var_push(x, pipe, pipe->decl[0], v)) < 0) {
			json_decref(v);
			return e;
		}
	}
	*ret = v;
	return 0;
}

static int walk_list(struct ex *x, json_t *dot, const struct tn *list);

static int walk_if_with(struct ex *x, json_t *dot, const struct tn *n)
{
	size_t mark = x->nvars;
	json_t *v;
	int e;
	if ((e = eval_pipe(x, dot, n->pipe, true, &v)) < 0)
		return e;
	if (tp_truth(v))
		e = walk_list(x, n->kind == TN_WITH ? v : dot, n->list);
	else if (n->else_list)
		e = walk_list(x, dot, n->else_list);
	json_decref(v);
	var_pop(x, mark);
	return e;
}

static int range_one(struct ex *x, const struct tn *n, json_t *key, json_t *elem)
{
	size_t mark = x->nvars;
	int e = 0;
	if (n->pipe->ndecl == 1)
		e = var_push(x, n, n->pipe->decl[0], elem);
	else if (n->pipe->ndecl == 2) {
		e = var_push(x, n, n->pipe->decl[0], key);
		e = e ?: var_push(x, n, n->pipe->decl[1], elem);
	}
	e = e ?: walk_list(x, elem, n->list);
	var_pop(x, mark);
	return e;
}

static int walk_range(struct ex *x, json_t *dot, const struct tn *n)
{
	size_t mark = x->nvars, count = 0;
	json_t *v, *key = NULL;
	int e = 0;
	if ((e = eval_pipe(x, dot, n->pipe, false, &v)) < 0)
		return e;
	if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v) && e >= 0; i++, count++) {
			if (!(key = json_integer((json_int_t)i))) {
				e = -ENOMEM;
				break;
			}
			e = range_one(x, n, key, json_array_get(v, i));
			json_decref(key);
			if (e == FLOW_BREAK)
				break;
		}
	} else if (json_is_object(v)) {
		size_t nk;
		const char **k = tp_sorted_keys(v, &nk);
		if (!k)
			e = -ENOMEM;
		for (size_t i = 0; k && i < nk && e >= 0; i++, count++) {
			if (!(key = json_string(k[i]))) {
				e = -ENOMEM;
				break;
			}
			e = range_one(x, n, key, json_object_get(v, k[i]));
			json_decref(key);
			if (e == FLOW_BREAK)
				break;
		}
		free(k);
	} else if (json_is_integer(v)) {
		/* Go 1.22: range over an integer n walks 0..n-1. */
		json_int_t lim = json_integer_value(v);
		for (json_int_t i = 0; i < lim && e >= 0; i++, count++) {
			if ((e = ex_step(x, n)) < 0 || !(key = json_integer(i)))
				break;
			e = range_one(x, n, key, key);
			json_decref(key);
			if (e == FLOW_BREAK)
				break;
		}
	} else if (!json_is_null(v)) {
		e = ex_fail(x, n, -EINVAL, "range can't iterate over %s", tp_type_name(v));
	}
	if (e >= 0 && count == 0 && n->else_list)
		e = walk_list(x, dot, n->else_list);
	json_decref(v);
	var_pop(x, mark);
	return e < 0 ? e : 0;
}

static int walk_list(struct ex *x, json_t *dot, const struct tn *list)
{
	int e = 0;
	for (const struct tn *n = list->first; n && e == 0; n = n->next) {
		if ((e = ex_step(x, n)) < 0)
			return e;
		switch (n->kind) {
		case TN_TEXT: e = buf_append(x->out, n->str, n->len); break;
		case TN_ACTION: {
			json_t *v;
			if ((e = eval_pipe(x, dot, n->pipe, true, &v)) < 0)
				return e;
			if (!n->pipe->ndecl)
				e = json_is_null(v) ? buf_puts(x->out, "<no value>") :
						      tp_print_value(x->out, v, 0);
			json_decref(v);
			break;
		}
		case TN_IF:
		case TN_WITH: e = walk_if_with(x, dot, n); break;
		case TN_RANGE: e = walk_range(x, dot, n); break;
		case TN_BREAK: return FLOW_BREAK;
		case TN_CONTINUE: return FLOW_CONTINUE;
		default: return ex_fail(x, n, -EINVAL, "unknown node");
		}
		/* Only the output's own appends: an inner block's error
		 * already has its message. */
		if (e == -E2BIG && (n->kind == TN_TEXT || n->kind == TN_ACTION))
			return ex_fail(x, n, -E2BIG, "rendered template exceeds %d bytes",
				       WF_TMPL_MAX_OUTPUT);
	}
	return e;
}

int wf_tmpl_render(const char *src, size_t len, const json_t *data, char **ret, size_t *ret_len,
		   struct wf_tmpl_error *err)
{
	struct tp_arena a = { 0 };
	struct buf out = BUF_INIT(WF_TMPL_MAX_OUTPUT);
	struct ex *x = NULL;
	struct tn *root;
	int e;

	memset(err, 0, sizeof(*err));
	if ((e = tp_parse(src, len, &a, &root, err)) < 0)
		goto out;
	if (!(x = calloc(1, sizeof(*x)))) {
		e = -ENOMEM;
		goto out;
	}
	x->out = &out;
	x->err = err;
	json_t *dot = data ? (json_t *)data : json_null();
	if ((e = var_push(x, root, "$", dot)) < 0)
		goto out;
	e = walk_list(x, dot, root);
	var_pop(x, 0);
	if (e > 0)
		e = 0;
	if (e < 0)
		goto out;
	size_t n = out.len;
	char *s = buf_steal(&out);
	if (!s) {
		e = -ENOMEM;
		goto out;
	}
	*ret = s;
	if (ret_len)
		*ret_len = n;
out:
	if (e == -ENOMEM)
		snprintf(err->message, sizeof(err->message), "template: out of memory");
	free(x);
	buf_free(&out);
	tp_arena_free(&a);
	return e;
}
