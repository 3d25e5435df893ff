/* apply — the admin API's apply endpoint (POST /apply, what `ironbell
 * apply -f` sends): every object of a request, of any kinds, written in
 * ONE atomic store_write(): all or none.
 *
 * DESIGN: a JSON array body (what the client sends) is walked one element
 * at a time (common/jsonarr.h), each op carrying its object's text rather
 * than a tree, and a YAML body is read one document at a time
 * (yj_load_each), each op keeping its object's compact JSON: so an
 * apply's memory is about its body (bounded by http.max_body) and a small
 * op per object, not ten times the body in trees. Events are queued per
 * object that changed, and waited for every API_APPLY_EVENTS_QUEUED so
 * that the queue does not hold them all at once. The reply, an
 * ApplyResult, is written item by item. The routes' shared helpers
 * (replies, object fields, audit events) are in daemon/api/handlers.c. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/jsonarr.h"
#include "common/jsondec.h"
#include "common/yamljson.h"
#include "daemon/api/api-internal.h"
#include "daemon/http/http.h"

#define CT_JSON "application/json"
#define API_APPLY_EVENTS_QUEUED 1000 /* an apply's events queued before it waits for them */
#define API_APPLY_OPS_MIN 64         /* first allocation of an apply's ops */

/* ---- apply ---- */

/* Appends to items the objects of v: an array's elements, a List's items,
 * or v itself. */
static int collect_items(json_t *v, json_t *items)
{
	if (json_is_array(v))
		return json_array_extend(items, v);
	const char *kind = api_obj_str(v, "kind");
	json_t *inner = json_object_get(v, "items");
	if (kind && strcmp(kind, "List") == 0 && json_is_array(inner))
		return json_array_extend(items, inner);
	return json_array_append(items, v);
}

static int load_apply_items(const struct api_ctx *ctx, struct api_reply *rep, json_t *items)
{
	json_t *docs = NULL;
	json_error_t je;
	struct yj_error ye;
	int e = 0;

	if (ctx->body_len == 0) {
		api_reply_error(rep, 400, NULL, NULL, "a request body is required");
		return -EINVAL;
	}
	if (ctx->ctype == API_CT_YAML) {
		if (yj_load(ctx->body, ctx->body_len, &docs, NULL, &ye) < 0) {
			api_reply_error(rep, 400, NULL, NULL,
					"invalid YAML in document %zu at line %zu, column %zu: %s",
					ye.document, ye.line, ye.column, ye.message);
			return -EINVAL;
		}
		size_t i;
		json_t *d;
		json_array_foreach (docs, i, d)
			e |= collect_items(d, items);
	} else if (ctx->ctype == API_CT_JSON || ctx->ctype == API_CT_NONE ||
		   ctx->ctype == API_CT_OTHER) {
		docs = jsondec_loadb(ctx->body, ctx->body_len, JSON_REJECT_DUPLICATES, &je);
		if (!docs) {
			if (ctx->ctype == API_CT_JSON)
				api_reply_error(rep, 400, NULL, NULL,
						"invalid JSON at line %d, column %d: %s", je.line,
						je.column, je.text);
			else
				api_reply_error(
					rep, 415, NULL, NULL,
					"the body must be application/json or application/yaml");
			return -EINVAL;
		}
		e = collect_items(docs, items);
	} else {
		api_reply_error(rep, 415, NULL, NULL,
				"the body must be application/json or application/yaml");
		return -EINVAL;
	}
	json_decref(docs);
	if (e < 0) {
		api_reply_error(rep, 500, NULL, NULL, "out of memory");
		return -ENOMEM;
	}
	if (json_array_size(items) > API_MAX_APPLY_ITEMS) {
		api_reply_error(rep, 413, NULL, NULL, "at most %d objects per apply",
				API_MAX_APPLY_ITEMS);
		return -E2BIG;
	}
	return 0;
}


static void apply_failed(struct api_reply *rep, struct store_op *ops, size_t n, int e)
{
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		if (ops[i].error && ops[i].error != -ECANCELED) {
			bad = i;
			break;
		}
	const char *kind = store_kind_info(ops[bad].kind)->kind, *name = ops[bad].name;
	const char *ns = ops[bad].namespace_, *msg = store_op_message(&ops[bad]);
	int err = ops[bad].error ? ops[bad].error : e;
	int code;
	const char *reason;
	char field[32];
	api_errno_status(err, &code, &reason);
	snprintf(field, sizeof(field), "items[%zu]", bad);
	api_reply_error(rep, code, reason, field, "%s \"%s/%s\" (item %zu): %s",
			kind ? kind : "object", ns ? ns : "default", name ? name : "", bad,
			*msg ? msg : strerror(-err));
}

/* Replies 200 with the ApplyResult of ops: each item rendered on its own
 * into the body, so that no tree of n results is built. */
static void reply_apply_result(struct api_reply *rep, const struct store_op *ops, size_t n)
{
	struct buf *b = &rep->body;
	int e;

	buf_free(b);
	buf_init(b, API_MAX_RESPONSE);
	e = buf_puts(b, "{\"kind\":\"ApplyResult\",\"items\":[");
	for (size_t i = 0; i < n && e >= 0; i++) {
		const struct store_kind_info *ki = store_kind_info(ops[i].kind);
		json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s}", "apiVersion", ki->api_version,
				      "kind", ki->kind, "namespace", ops[i].namespace_, "name",
				      ops[i].name ? ops[i].name : "", "result",
				      api_result_name(ops[i].result));
		if (!r)
			e = -ENOMEM;
		else if ((i > 0 && buf_putc(b, ',') < 0) ||
			 json_dump_callback(r, buf_dump_cb, b, JSON_COMPACT) < 0)
			e = -E2BIG;
		json_decref(r);
	}
	if (e >= 0 && buf_puts(b, "]}\n") < 0)
		e = -E2BIG;
	if (e < 0) {
		api_reply_error(rep, 500, NULL, NULL, e == -ENOMEM ? "out of memory" :
					"the response is too large to render");
		return;
	}
	rep->code = 200;
	rep->content_type = CT_JSON;
}

/* An apply in the making: one op per object, each owning a copy of its
 * namespace and name (one allocation, namespace_ its start). An op's body
 * is the object's text inside the request body when that was walked
 * element by element, else a tree of the items array. The first object
 * refused before the write is kept, not replied at once, so that a
 * syntax error anywhere in the body still wins, as when it was parsed
 * whole. */
struct apply {
	struct store_op *ops;
	size_t n, cap;
	size_t seen;  /* objects in the body, also past API_MAX_APPLY_ITEMS */
	int bad_code; /* 0, or the status of the first object refused */
	char bad_field[32];
	char bad_msg[1024];
};

static void apply_clear(struct apply *a)
{
	for (size_t i = 0; i < a->n; i++) {
		store_op_clear(&a->ops[i]);
		free((char *)a->ops[i].namespace_);
	}
	free(a->ops);
	*a = (struct apply){ 0 };
}

/* Adds object i of the body: it, parsed, and, when the op is to carry
 * text instead, its text (len bytes), inside the request body or, with
 * copy, copied into the op's allocation. 0, or -ENOMEM. */
static int apply_item(struct apply *a, json_t *it, const char *text, size_t len, size_t i,
		      bool copy)
{
	const char *kind = api_obj_str(it, "kind"), *name = api_meta_str(it, "name");
	const char *ns = api_meta_str(it, "namespace");
	enum store_kind k;

	if (++a->seen > API_MAX_APPLY_ITEMS || a->bad_code)
		return 0;
	snprintf(a->bad_field, sizeof(a->bad_field), "items[%zu]", i);
	if (!json_is_object(it)) {
		a->bad_code = 400;
		snprintf(a->bad_msg, sizeof(a->bad_msg),
			 "object \"/\" (item %zu): not a JSON object", i);
		return 0;
	}
	if (!ns || !*ns)
		ns = "default";
	if (store_kind_from_object(api_obj_str(it, "apiVersion"), kind, &k) < 0) {
		a->bad_code = 400;
		snprintf(a->bad_msg, sizeof(a->bad_msg),
			 "%s \"%s/%s\" (item %zu): unknown apiVersion/kind %s/%s",
			 kind ? kind : "object", ns, name ? name : "", i,
			 api_obj_str(it, "apiVersion") ? api_obj_str(it, "apiVersion") : "?",
			 kind ? kind : "?");
		return 0;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : API_APPLY_OPS_MIN;
		struct store_op *ops = reallocarray(a->ops, cap, sizeof(*ops));
		if (!ops)
			return -ENOMEM;
		a->ops = ops;
		a->cap = cap;
	}
	size_t nsl = strlen(ns) + 1, nl = name ? strlen(name) + 1 : 0;
	char *names = malloc(nsl + nl + (copy ? len : 0));
	if (!names)
		return -ENOMEM;
	memcpy(names, ns, nsl);
	if (name)
		memcpy(names + nsl, name, nl);
	if (copy && text)
		text = memcpy(names + nsl + nl, text, len);
	a->ops[a->n++] = (struct store_op){ .type = STORE_OP_APPLY,
					    .kind = k,
					    .namespace_ = names,
					    .name = name ? names + nsl : NULL,
					    .body = text ? NULL : it,
					    .body_text = text,
					    .body_text_len = len,
					    .no_object = true };
	return 0;
}

static int apply_element(json_t *v, const char *text, size_t len, size_t index, void *userdata)
{
	return apply_item(userdata, v, text, len, index, false);
}

/* A YAML body, read a document at a time. */
struct apply_yaml {
	struct apply *a;
	json_t *items; /* the trees kept: what is not an object or not JSON */
	size_t i;      /* objects so far */
};

/* One object of a YAML document: its op carries a copy of its compact
 * JSON; the tree goes when the document does. One that JSON cannot
 * carry (a YAML .inf, or not an object at all) is kept as a tree, for
 * the store or the checks to refuse as before. */
static int apply_yaml_object(struct apply_yaml *y, json_t *it)
{
	char *t = json_is_object(it) ? json_dumps(it, JSON_COMPACT) : NULL;
	int e;
	if (t)
		e = apply_item(y->a, it, t, strlen(t), y->i++, true);
	else if (json_array_append(y->items, it) < 0)
		e = -ENOMEM;
	else
		e = apply_item(y->a, it, NULL, 0, y->i++, false);
	free(t);
	return e;
}

/* The objects of a document: an array's elements, a List's items, or
 * the document itself (as collect_items() takes them). */
static int apply_yaml_doc(json_t *doc, size_t line, void *userdata)
{
	const char *kind = api_obj_str(doc, "kind");
	json_t *inner = json_object_get(doc, "items"), *it;
	size_t i;
	int e = 0;

	(void)line;
	if (!json_is_array(doc) && kind && strcmp(kind, "List") == 0 && json_is_array(inner))
		doc = inner;
	if (!json_is_array(doc))
		return apply_yaml_object(userdata, doc);
	json_array_foreach (doc, i, it)
		if ((e = apply_yaml_object(userdata, it)) < 0)
			break;
	return e;
}

/* Reads the body into a's ops. A JSON array (what `ironbell apply`
 * sends) is walked element by element: each object is parsed, checked
 * and dropped, its op keeping its text, so that no tree of the whole body
 * exists. A YAML stream is read a document at a time, each object's op
 * keeping a copy of its JSON. Anything else (one JSON object, a List, or
 * what the walk does not take) is parsed whole into items, whose trees
 * the ops borrow. On failure fills rep and returns a negative errno. */
static int load_apply(const struct api_ctx *ctx, struct api_reply *rep, struct apply *a,
		      json_t *items)
{
	size_t i;
	json_t *it;
	int e = -ENOMSG;

	if (ctx->ctype == API_CT_JSON || ctx->ctype == API_CT_NONE || ctx->ctype == API_CT_OTHER)
		e = jsonarr_each(ctx->body, ctx->body_len, JSON_REJECT_DUPLICATES, apply_element,
				 a);
	if (ctx->ctype == API_CT_YAML && ctx->body_len) {
		struct apply_yaml y = { .a = a, .items = items };
		struct yj_error ye;
		e = yj_load_each(ctx->body, ctx->body_len, apply_yaml_doc, &y, &ye);
		if (e < 0 && e != -ENOMEM) {
			api_reply_error(rep, 400, NULL, NULL,
					"invalid YAML in document %zu at line %zu, column %zu: %s",
					ye.document, ye.line, ye.column, ye.message);
			return -EINVAL;
		}
	}
	if (e == -ENOMSG || e == -EBADMSG) {
		apply_clear(a);
		e = load_apply_items(ctx, rep, items);
		if (e < 0)
			return e;
		json_array_foreach (items, i, it)
			if ((e = apply_item(a, it, NULL, 0, i, false)) < 0)
				break;
	}
	if (e < 0) {
		api_reply_error(rep, 500, NULL, NULL, "out of memory");
		return e;
	}
	if (a->seen > API_MAX_APPLY_ITEMS) {
		api_reply_error(rep, 413, NULL, NULL, "at most %d objects per apply",
				API_MAX_APPLY_ITEMS);
		return -E2BIG;
	}
	if (a->bad_code) {
		api_reply_error(rep, a->bad_code, NULL, a->bad_field, "%s", a->bad_msg);
		return -EINVAL;
	}
	return 0;
}

void api_handle_apply(const struct api_ctx *ctx, struct api_reply *rep)
{
	json_t *items = json_array();
	struct apply a = { 0 };
	size_t i, queued = 0;

	if (!items || load_apply(ctx, rep, &a, items) < 0)
		goto out;
	int e = a.n ? store_write(ctx->store, a.ops, a.n, true) : 0;
	if (e < 0) {
		apply_failed(rep, a.ops, a.n, e);
		goto out;
	}
	/* Written: of each tree only its names are still needed (the ops
	 * have copies); the rest goes before the events and the reply take
	 * their share. */
	json_array_clear(items);
	/* Each queued event holds a writer request of about a kilobyte until
	 * it is stored: wait for them every API_APPLY_EVENTS_QUEUED, rather
	 * than queue tens of thousands at once. */
	for (i = 0; i < a.n; i++)
		if (api_record_event(ctx, &a.ops[i], "apply") &&
		    ++queued % API_APPLY_EVENTS_QUEUED == 0)
			store_sync(ctx->store);
	reply_apply_result(rep, a.ops, a.n);
out:
	apply_clear(&a);
	json_decref(items);
}
