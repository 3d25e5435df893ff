/* handlers — what each admin API route does, between a parsed request
 * (struct api_ctx) and a reply (struct api_reply).
 *
 * DESIGN: the listener shell (daemon/http/http.c) has already authenticated the
 * request, routed it, checked the method, parsed the query and read the
 * body (bounded by http.max_body). A handler parses the body by its
 * Content-Type, turns it into store ops or reads, and answers JSON: the
 * object, a list, or a Kubernetes Status for errors, with the store's
 * errno mapped by api_errno_status(). Reads use the calling thread's own
 * store reader (api_thread_reader()); writes go through store_write(),
 * which waits for the commit. The apply endpoint puts every object of a
 * request into ONE atomic store_write(): all or none. A JSON array body
 * (what `ironbell apply` sends) is walked one element at a time
 * (common/jsonarr.h), each op carrying its object's text rather than a
 * tree, so that an apply's memory is about its body and a small op per
 * object, not ten times the body in trees. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/jsonarr.h"
#include "daemon/api/api-internal.h"
#include "daemon/config/conf.h"
#include "daemon/http/http.h"

#define CT_JSON "application/json"
#define API_TRIM_MIN (1u << 20) /* bytes of a body or reply after which memory is trimmed */
#define API_APPLY_EVENTS_QUEUED 1000 /* an apply's events queued before it waits for them */
#define API_APPLY_OPS_MIN 64         /* first allocation of an apply's ops */

/* ---- replies ---- */

void api_reply_error(struct api_reply *rep, int code, const char *reason, const char *field,
		     const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	buf_free(&rep->body);
	buf_init(&rep->body, API_MAX_RESPONSE);
	rep->code = code;
	rep->content_type = CT_JSON;
	if (!reason)
		reason = api_code_reason(code);
	api_status_render(&rep->body, code, reason, msg, field);
}

static int dump_cb(const char *p, size_t n, void *data)
{
	return buf_append(data, p, n) < 0 ? -1 : 0;
}

void api_reply_json(struct api_reply *rep, int code, const json_t *v)
{
	buf_free(&rep->body);
	buf_init(&rep->body, API_MAX_RESPONSE);
	if (json_dump_callback(v, dump_cb, &rep->body, JSON_COMPACT) < 0 ||
	    buf_putc(&rep->body, '\n') < 0) {
		api_reply_error(rep, 500, NULL, NULL, "the response is too large to render");
		return;
	}
	rep->code = code;
	rep->content_type = CT_JSON;
}

void api_reply_text(struct api_reply *rep, int code, const char *text)
{
	buf_free(&rep->body);
	buf_init(&rep->body, API_MAX_RESPONSE);
	buf_puts(&rep->body, text);
	rep->code = code;
	rep->content_type = "text/plain; charset=utf-8";
}

static void reply_errno(struct api_reply *rep, int err, const char *message)
{
	int code;
	const char *reason;
	api_errno_status(err, &code, &reason);
	api_reply_error(rep, code, reason, NULL, "%s",
			message && *message ? message : strerror(-err));
}

static struct store_reader *reader_or_fail(const struct api_ctx *ctx, struct api_reply *rep)
{
	struct store_reader *r = api_thread_reader(ctx->api);
	if (!r)
		api_reply_error(rep, 500, NULL, NULL, "cannot open a store reader");
	return r;
}

/* ---- bodies ---- */

/* Parses the request body into a new JSON value. patch: the route wants a
 * merge patch. On failure fills rep and returns a negative errno. */
static int load_body(const struct api_ctx *ctx, struct api_reply *rep, bool patch, json_t **ret)
{
	json_error_t je;
	struct yj_error ye;
	json_t *v = NULL;

	if (ctx->body_len == 0) {
		api_reply_error(rep, 400, NULL, NULL, "a request body is required");
		return -EINVAL;
	}
	switch (ctx->ctype) {
	case API_CT_STRATEGIC:
	case API_CT_JSON_PATCH:
		api_reply_error(rep, 415, NULL, NULL,
				"the body of the request was in an unknown format - accepted media "
				"types include: application/merge-patch+json");
		return -EINVAL;
	case API_CT_MERGE_PATCH:
	case API_CT_JSON:
		if (patch != (ctx->ctype == API_CT_MERGE_PATCH))
			goto unsupported;
		v = json_loadb(ctx->body, ctx->body_len, JSON_REJECT_DUPLICATES, &je);
		if (!v) {
			api_reply_error(rep, 400, NULL, NULL,
					"invalid JSON at line %d, column %d: %s", je.line,
					je.column, je.text);
			return -EINVAL;
		}
		break;
	case API_CT_YAML:
		if (patch)
			goto unsupported;
		if (yj_load_one(ctx->body, ctx->body_len, &v, &ye) < 0) {
			api_reply_error(rep, 400, NULL, NULL,
					"invalid YAML at line %zu, column %zu: %s", ye.line,
					ye.column, ye.message);
			return -EINVAL;
		}
		break;
	case API_CT_NONE:
	case API_CT_OTHER:
	case API_CT_MAX:
		if (patch)
			goto unsupported;
		v = json_loadb(ctx->body, ctx->body_len, JSON_REJECT_DUPLICATES, &je);
		if (!v)
			goto unsupported;
		break;
	}
	*ret = v;
	return 0;
unsupported:
	api_reply_error(rep, 415, NULL, NULL,
			"the body of the request was in an unknown format - accepted media types "
			"include: %s",
			patch ? "application/merge-patch+json" :
				"application/json, application/yaml");
	return -EINVAL;
}

static const char *obj_str(const json_t *obj, const char *k)
{
	return json_string_value(json_object_get(obj, k));
}

static const char *meta_str(const json_t *obj, const char *k)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), k));
}

/* Checks that a whole object sent to a route is of the route's kind and,
 * when given, of its namespace and name; fills in apiVersion and kind when
 * absent. */
static int check_object(const struct api_ctx *ctx, struct api_reply *rep, json_t *obj)
{
	const struct api_route *rt = ctx->route;
	const struct store_kind_info *ki = store_kind_info(rt->kind);
	enum store_kind k;

	if (!json_is_object(obj)) {
		api_reply_error(rep, 400, NULL, NULL, "the body must be a JSON object");
		return -EINVAL;
	}
	const char *av = obj_str(obj, "apiVersion"), *kind = obj_str(obj, "kind");
	if (!av && !kind) {
		json_object_set_new(obj, "apiVersion", json_string(ki->api_version));
		json_object_set_new(obj, "kind", json_string(ki->kind));
	} else if (!av || !kind || store_kind_from_object(av, kind, &k) < 0 || k != rt->kind) {
		api_reply_error(
			rep, 400, NULL, NULL,
			"the object's apiVersion/kind %s/%s does not match the path (%s/%s)",
			av ? av : "?", kind ? kind : "?", ki->api_version, ki->kind);
		return -EINVAL;
	}
	const char *ns = meta_str(obj, "namespace");
	if (ns && strcmp(ns, rt->ns) != 0) {
		api_reply_error(rep, 400, NULL, NULL,
				"the namespace of the object (%s) does not match the namespace of "
				"the request (%s)",
				ns, rt->ns);
		return -EINVAL;
	}
	const char *name = meta_str(obj, "name");
	if (rt->name[0] && name && strcmp(name, rt->name) != 0) {
		api_reply_error(
			rep, 400, NULL, NULL,
			"the name of the object (%s) does not match the name in the path (%s)",
			name, rt->name);
		return -EINVAL;
	}
	return 0;
}

static const char *result_name(enum store_result r)
{
	switch (r) {
	case STORE_RESULT_CREATED: return "created";
	case STORE_RESULT_CONFIGURED: return "configured";
	case STORE_RESULT_UNCHANGED: return "unchanged";
	case STORE_RESULT_DELETED: return "deleted";
	case STORE_RESULT_NONE: break;
	}
	return "unchanged";
}

/* Records an audit event for a write that changed an object: who did what
 * shows in `ironbell events` and `ironbell describe`. Status writes are not
 * recorded (controllers write status often; the change log has them). The
 * event is queued, not waited for: the object's own commit is what the
 * client was promised. */
static bool record_event(const struct api_ctx *ctx, const struct store_op *op, const char *via)
{
	static const char *const reasons[] = {
		[STORE_RESULT_CREATED] = "Created",
		[STORE_RESULT_CONFIGURED] = "Updated",
		[STORE_RESULT_DELETED] = "Deleted",
	};
	char rvs[24];
	if (op->error || op->type == STORE_OP_STATUS || op->type == STORE_OP_STATUS_PATCH ||
	    op->result == STORE_RESULT_NONE || op->result == STORE_RESULT_UNCHANGED ||
	    (!op->object && !op->no_object))
		return false;
	/* Without the object (no_object), its names are the op's own. */
	json_t *md = json_object_get(op->object, "metadata");
	const char *ns = op->object ? json_string_value(json_object_get(md, "namespace")) :
				      op->namespace_;
	const char *name = op->object ? json_string_value(json_object_get(md, "name")) : op->name;
	const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
	if (!ns || !name)
		return false;
	if (!op->object && op->rv) {
		snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)op->rv);
		rv = rvs;
	}
	return store_event(ctx->store, op->kind, ns, name, "Normal", reasons[op->result],
			   "%s through the admin API (%s), resourceVersion %s",
			   result_name(op->result), via, rv ? rv : "?") == 0;
}

/* Runs one op and replies with the object (code on success). */
static void write_one(const struct api_ctx *ctx, struct api_reply *rep, struct store_op *op,
		      int code)
{
	const struct api_route *rt = ctx->route;
	op->kind = rt->kind;
	op->namespace_ = rt->ns;
	if (rt->name[0])
		op->name = rt->name;
	int e = store_write1(ctx->store, op);
	if (e < 0) {
		reply_errno(rep, op->error ? op->error : e, store_op_message(op));
	} else {
		record_event(ctx, op, api_method_name(ctx->method));
		api_reply_json(rep, code, op->object);
	}
	store_op_clear(op);
}

/* ---- objects ---- */

static void handle_list(const struct api_ctx *ctx, struct api_reply *rep)
{
	const struct api_route *rt = ctx->route;
	const struct api_query *q = ctx->query;
	const struct store_kind_info *ki = store_kind_info(rt->kind);
	const char *ns = rt->type == API_ROUTE_LIST_NS ? rt->ns : NULL;
	struct store_selector *sel = NULL;
	struct store_reader *r;
	struct buf *b = &rep->body;
	uint64_t rv = 0;
	char err[256];
	int e;

	if (q->have_selector &&
	    store_selector_parse(q->label_selector, &sel, err, sizeof(err)) < 0) {
		api_reply_error(rep, 400, NULL, NULL, "labelSelector: %s", err);
		return;
	}
	if (q->watch && ctx->method == API_METHOD_GET) {
		bool initial = !q->have_rv || q->resource_version == 0;
		rep->watch = api_watch_objects(ctx, rt->kind, ns, sel, initial, q->resource_version,
					       rep);
		return; /* sel taken over */
	}
	if (!(r = reader_or_fail(ctx, rep)))
		goto out;
	/* The items are the stored texts, copied as they are: decoding a
	 * large list into a tree would cost ten times its size. The
	 * resourceVersion is only known after the read, so the head is
	 * written after the items and the two swapped. */
	buf_free(b);
	buf_init(b, API_MAX_RESPONSE);
	e = store_list_text(r, rt->kind, ns, sel, b, NULL, &rv);
	if (e < 0) {
		reply_errno(rep, e, e == -E2BIG ? "the list is too large: use a label selector or a namespace"
						 : "cannot list objects");
		goto out;
	}
	struct buf head = BUF_INIT(1024);
	if (buf_printf(&head, "{\"apiVersion\":\"%s\",\"kind\":\"%sList\",\"metadata\":"
			      "{\"resourceVersion\":\"%llu\"},\"items\":[",
		       ki->api_version, ki->kind, (unsigned long long)rv) < 0 ||
	    buf_puts(b, "]}\n") < 0 || buf_append(b, head.data, head.len) < 0) {
		buf_free(&head);
		api_reply_error(rep, 500, NULL, NULL, "the list is too large to render");
		goto out;
	}
	/* items..."]}\n" head -> head items..."]}\n" by rotating in place */
	size_t hl = head.len, il = b->len - hl;
	memmove(b->data + hl, b->data, il);
	memcpy(b->data, head.data, hl);
	buf_free(&head);
	rep->code = 200;
	rep->content_type = CT_JSON;
out:
	store_selector_free(sel);
}

static void handle_get(const struct api_ctx *ctx, struct api_reply *rep)
{
	const struct api_route *rt = ctx->route;
	json_t *obj = NULL;
	struct store_reader *r = reader_or_fail(ctx, rep);
	if (!r)
		return;
	int e = store_get(r, rt->kind, rt->ns, rt->name, &obj);
	if (e == -ENOENT) {
		api_reply_error(rep, 404, NULL, NULL, "%s \"%s/%s\" not found",
				store_kind_info(rt->kind)->singular, rt->ns, rt->name);
		return;
	}
	if (e < 0) {
		reply_errno(rep, e, "cannot read the object");
		return;
	}
	api_reply_json(rep, 200, obj);
	json_decref(obj);
}

static void handle_write(const struct api_ctx *ctx, struct api_reply *rep)
{
	const struct api_route *rt = ctx->route;
	struct store_op op = { 0 };
	json_t *body = NULL;
	int code = 200;

	switch (ctx->method) {
	case API_METHOD_POST:
		op.type = STORE_OP_CREATE;
		code = 201;
		break;
	case API_METHOD_PUT: op.type = rt->status ? STORE_OP_STATUS : STORE_OP_REPLACE; break;
	case API_METHOD_PATCH:
		op.type = rt->status ? STORE_OP_STATUS_PATCH : STORE_OP_MERGE_PATCH;
		break;
	default: api_reply_error(rep, 405, NULL, NULL, "method not allowed"); return;
	}
	if (load_body(ctx, rep, ctx->method == API_METHOD_PATCH, &body) < 0)
		return;
	if (ctx->method == API_METHOD_PATCH) {
		if (!json_is_object(body)) {
			api_reply_error(rep, 400, NULL, NULL,
					"a merge patch must be a JSON object");
			goto out;
		}
	} else if (check_object(ctx, rep, body) < 0) {
		goto out;
	}
	op.body = body;
	write_one(ctx, rep, &op, code);
out:
	json_decref(body);
}

static void handle_delete(const struct api_ctx *ctx, struct api_reply *rep)
{
	struct store_op op = { .type = STORE_OP_DELETE };
	json_t *opts = NULL;
	json_error_t je;

	/* DeleteOptions: only preconditions.resourceVersion is honoured. */
	if (ctx->body_len) {
		opts = json_loadb(ctx->body, ctx->body_len, 0, &je);
		if (!json_is_object(opts)) {
			api_reply_error(rep, 400, NULL, NULL,
					"the body of a DELETE must be DeleteOptions JSON");
			goto out;
		}
		op.resource_version = json_string_value(
			json_object_get(json_object_get(opts, "preconditions"), "resourceVersion"));
	}
	write_one(ctx, rep, &op, 200);
out:
	json_decref(opts);
}

/* ---- apply ---- */

/* Appends to items the objects of v: an array's elements, a List's items,
 * or v itself. */
static int collect_items(json_t *v, json_t *items)
{
	if (json_is_array(v))
		return json_array_extend(items, v);
	const char *kind = obj_str(v, "kind");
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
		docs = json_loadb(ctx->body, ctx->body_len, JSON_REJECT_DUPLICATES, &je);
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
				      result_name(ops[i].result));
		if (!r)
			e = -ENOMEM;
		else if ((i > 0 && buf_putc(b, ',') < 0) ||
			 json_dump_callback(r, dump_cb, b, JSON_COMPACT) < 0)
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
	const char *kind = obj_str(it, "kind"), *name = meta_str(it, "name");
	const char *ns = meta_str(it, "namespace");
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
	if (store_kind_from_object(obj_str(it, "apiVersion"), kind, &k) < 0) {
		a->bad_code = 400;
		snprintf(a->bad_msg, sizeof(a->bad_msg),
			 "%s \"%s/%s\" (item %zu): unknown apiVersion/kind %s/%s",
			 kind ? kind : "object", ns, name ? name : "", i,
			 obj_str(it, "apiVersion") ? obj_str(it, "apiVersion") : "?",
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
	const char *kind = obj_str(doc, "kind");
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

static void handle_apply(const struct api_ctx *ctx, struct api_reply *rep)
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
		if (record_event(ctx, &a.ops[i], "apply") &&
		    ++queued % API_APPLY_EVENTS_QUEUED == 0)
			store_sync(ctx->store);
	reply_apply_result(rep, a.ops, a.n);
out:
	apply_clear(&a);
	json_decref(items);
}

/* ---- events, leases, version, health, metrics ---- */

/* Replies 200 with an ironbell.dev/v1 list of kind `kind` whose items are
 * items (a reference taken). */
static void reply_list(struct api_reply *rep, const char *kind, json_t *items)
{
	json_t *list = json_pack("{s:s, s:s, s:o}", "apiVersion", "ironbell.dev/v1", "kind", kind,
				 "items", items);
	if (!list) {
		api_reply_error(rep, 500, NULL, NULL, "out of memory");
		return;
	}
	api_reply_json(rep, 200, list);
	json_decref(list);
}

static void handle_events(const struct api_ctx *ctx, struct api_reply *rep)
{
	const struct api_query *q = ctx->query;
	enum store_kind k = STORE_KIND_MAX;
	const char *ns = q->namespace_[0] ? q->namespace_ : NULL;
	const char *name = q->name[0] ? q->name : NULL;
	json_t *evs = NULL;

	if (q->kind[0] && store_kind_parse(q->kind, &k) < 0) {
		api_reply_error(rep, 400, NULL, NULL, "unknown kind \"%s\"", q->kind);
		return;
	}
	if (q->watch && ctx->method == API_METHOD_GET) {
		rep->watch = api_watch_events(ctx, k, ns, name, q->after, rep);
		return;
	}
	struct store_reader *r = reader_or_fail(ctx, rep);
	if (!r)
		return;
	int e = store_events(r, q->after, k, ns, name, (size_t)q->limit, &evs);
	if (e < 0) {
		reply_errno(rep, e, "cannot read events");
		return;
	}
	reply_list(rep, "EventList", evs);
}

/* One lease of a LeaseList, written as JSON text straight into the body. */
static int lease_item(const struct store_lease *l, void *userdata)
{
	struct buf *b = userdata;
	char starts[21], expires[21];
	const char *state = store_lease_state_name(l->state);
	const struct {
		const char *key, *value;
	} f[] = {
		{ "mac", l->mac },	   { "ip", l->ip },	     { "namespace", l->ns },
		{ "name", l->name },	   { "state", state ? state : "" }, { "starts", starts },
		{ "expires", expires },
	};
	int e = 0;

	time_rfc3339(l->starts, starts);
	time_rfc3339(l->expires, expires);
	if (b->len && b->data[b->len - 1] == '}')
		e = buf_putc(b, ',');
	for (size_t i = 0; i < ARRAY_SIZE(f) && e == 0; i++) {
		if ((e = buf_printf(b, "%s\"%s\":", i ? "," : "{", f[i].key)) == 0)
			e = buf_put_json_string(b, f[i].value, strlen(f[i].value));
	}
	return e < 0 ? e : buf_putc(b, '}');
}

/* The DHCP server's leases, sorted by IP. Written as they are read,
 * without a JSON tree of them all: at 100,000 leases the tree took the
 * daemon's peak RSS from ~60 to ~225 MB; the text is ~20 MB. */
static void handle_leases(const struct api_ctx *ctx, struct api_reply *rep)
{
	struct store_reader *r = reader_or_fail(ctx, rep);
	int e;

	if (!r)
		return;
	buf_free(&rep->body);
	buf_init(&rep->body, API_MAX_RESPONSE);
	e = buf_puts(&rep->body, "{\"apiVersion\":\"ironbell.dev/v1\",\"kind\":\"LeaseList\","
				 "\"items\":[");
	if (e == 0)
		e = store_leases_each(r, lease_item, &rep->body);
	if (e == 0)
		e = buf_puts(&rep->body, "]}\n");
	if (e == -E2BIG) {
		api_reply_error(rep, 500, NULL, NULL, "the response is too large to render");
		return;
	}
	if (e < 0) {
		reply_errno(rep, e, "cannot read the leases");
		return;
	}
	rep->code = 200;
	rep->content_type = CT_JSON;
}

static void handle_version(const struct api_ctx *ctx, struct api_reply *rep)
{
	json_t *v = json_pack("{s:s, s:i}", "version", PACKAGE_VERSION, "schema",
			      store_schema_version());
	if (!v) {
		api_reply_error(rep, 500, NULL, NULL, "out of memory");
		return;
	}
	api_reply_json(rep, 200, v);
	json_decref(v);
}

static void handle_metrics(const struct api_ctx *ctx, struct api_reply *rep)
{
	buf_free(&rep->body);
	buf_init(&rep->body, API_MAX_RESPONSE);
	if (metrics_render(&rep->body) < 0) {
		api_reply_error(rep, 500, NULL, NULL, "cannot render the metrics");
		return;
	}
	rep->code = 200;
	rep->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

void api_handle(const struct api_ctx *ctx, struct api_reply *rep)
{
	switch (ctx->route->type) {
	case API_ROUTE_LIST_ALL: handle_list(ctx, rep); break;
	case API_ROUTE_LIST_NS:
		if (ctx->method == API_METHOD_POST)
			handle_write(ctx, rep);
		else
			handle_list(ctx, rep);
		break;
	case API_ROUTE_OBJECT:
	case API_ROUTE_STATUS:
		if (ctx->method == API_METHOD_GET || ctx->method == API_METHOD_HEAD)
			handle_get(ctx, rep);
		else if (ctx->method == API_METHOD_DELETE)
			handle_delete(ctx, rep);
		else
			handle_write(ctx, rep);
		break;
	case API_ROUTE_APPLY: handle_apply(ctx, rep); break;
	case API_ROUTE_EVENTS: handle_events(ctx, rep); break;
	case API_ROUTE_LEASES: handle_leases(ctx, rep); break;
	case API_ROUTE_VERSION: handle_version(ctx, rep); break;
	case API_ROUTE_HEALTHZ: api_reply_text(rep, 200, "ok"); break;
	case API_ROUTE_READYZ:
		if (api_is_ready(ctx->api))
			api_reply_text(rep, 200, "ok");
		else
			api_reply_text(rep, 503, "not ready\n");
		break;
	case API_ROUTE_METRICS: handle_metrics(ctx, rep); break;
	case API_ROUTE_MAX:
		api_reply_error(rep, 404, NULL, NULL,
				"the server could not find the requested resource");
		break;
	}
	/* A large body or reply had its trees (several kB per object) freed
	 * by now, and the store writer's copies too; glibc keeps what a
	 * thread frees in that thread's arena, where a little that stays
	 * pins the rest: give it back, or the daemon stays at the peak of its
	 * largest apply or list (the reply itself is mmapped: it goes when
	 * sent). The events an apply queued are freed by the writer once
	 * stored: wait for that first, or they stay behind in this arena. */
	if (ctx->body_len >= API_TRIM_MIN || rep->body.len >= API_TRIM_MIN) {
		if (ctx->route->type == API_ROUTE_APPLY)
			store_sync(ctx->store);
		malloc_trim(0);
	}
}
