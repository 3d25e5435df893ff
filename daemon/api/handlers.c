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
 * which waits for the commit. The apply endpoint is in
 * daemon/api/apply.c. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "daemon/api/api-internal.h"
#include "daemon/config/conf.h"
#include "daemon/http/http.h"

#define CT_JSON "application/json"
#define API_TRIM_MIN (1u << 20) /* bytes of a body or reply after which memory is trimmed */

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

void api_reply_json(struct api_reply *rep, int code, const json_t *v)
{
	buf_free(&rep->body);
	buf_init(&rep->body, API_MAX_RESPONSE);
	if (json_dump_callback(v, buf_dump_cb, &rep->body, JSON_COMPACT) < 0 ||
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

/* /readyz: ready once the daemon said so and the further check (the
 * cluster synced, in Kubernetes mode) agrees; its lines follow. */
static void handle_readyz(const struct api_ctx *ctx, struct api_reply *rep)
{
	struct buf out = BUF_INIT(64 * 1024);
	void *ud;
	api_ready_fn fn = api_ready_check(ctx->api, &ud);
	bool ready = api_is_ready(ctx->api);
	buf_puts(&out, ready ? "ok\n" : "not ready\n");
	if (fn && !fn(&out, ud) && ready) {
		buf_reset(&out);
		buf_puts(&out, "not ready\n");
		fn(&out, ud);
		ready = false;
	}
	api_reply_text(rep, ready ? 200 : 503, out.data ? out.data : "");
	buf_free(&out);
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
		v = jsondec_loadb(ctx->body, ctx->body_len, JSON_REJECT_DUPLICATES, &je);
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
		v = jsondec_loadb(ctx->body, ctx->body_len, JSON_REJECT_DUPLICATES, &je);
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

const char *api_obj_str(const json_t *obj, const char *k)
{
	return json_string_value(json_object_get(obj, k));
}

const char *api_meta_str(const json_t *obj, const char *k)
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
	const char *av = api_obj_str(obj, "apiVersion"), *kind = api_obj_str(obj, "kind");
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
	const char *ns = api_meta_str(obj, "namespace");
	if (ns && strcmp(ns, rt->ns) != 0) {
		api_reply_error(rep, 400, NULL, NULL,
				"the namespace of the object (%s) does not match the namespace of "
				"the request (%s)",
				ns, rt->ns);
		return -EINVAL;
	}
	const char *name = api_meta_str(obj, "name");
	if (rt->name[0] && name && strcmp(name, rt->name) != 0) {
		api_reply_error(
			rep, 400, NULL, NULL,
			"the name of the object (%s) does not match the name in the path (%s)",
			name, rt->name);
		return -EINVAL;
	}
	return 0;
}

const char *api_result_name(enum store_result r)
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
bool api_record_event(const struct api_ctx *ctx, const struct store_op *op, const char *via)
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
			   api_result_name(op->result), via, rv ? rv : "?") == 0;
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
		api_record_event(ctx, op, api_method_name(ctx->method));
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
		opts = jsondec_loadb(ctx->body, ctx->body_len, 0, &je);
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
	case API_ROUTE_APPLY: api_handle_apply(ctx, rep); break;
	case API_ROUTE_EVENTS: handle_events(ctx, rep); break;
	case API_ROUTE_LEASES: handle_leases(ctx, rep); break;
	case API_ROUTE_VERSION: handle_version(ctx, rep); break;
	case API_ROUTE_HEALTHZ: api_reply_text(rep, 200, "ok"); break;
	case API_ROUTE_READYZ: handle_readyz(ctx, rep); break;
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
