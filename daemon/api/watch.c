/* watch — streaming watches of objects and events (?watch=1), one JSON
 * object per line in a chunked response.
 *
 * DESIGN: a watch is a libmicrohttpd content-reader callback
 * (api_watch_read) on an admin connection. The admin listeners run one
 * thread per connection, so the callback may block that thread: when it
 * has nothing to send it waits in poll() on three fds at once — the store
 * subscription's eventfd (a commit touched the kind), the API's stop
 * eventfd (the daemon is stopping: end the stream) and the client's socket
 * (POLLRDHUP: the client hung up) — with a timeout only as a safety net.
 * It never spins. Order matters for not losing a wake-up: the subscription
 * is made before the first read of the store, and acknowledged before each
 * read, so a commit that lands after a read always leaves the eventfd
 * readable.
 *
 * Objects: with no resourceVersion, first an ADDED per existing matching
 * object (one store_list, whose resourceVersion is where the change log is
 * then read from), then every change after that. With resourceVersion=N,
 * every change after N; when the store has dropped them (-ETIME), one ERROR
 * line with a 410 Expired Status and the stream ends. The label selector is
 * applied to each change's object. Events: every stored event after the id,
 * then new ones, as ADDED.
 *
 * The store reader used is the calling thread's (api_thread_reader()): the
 * callback runs on the connection's thread. api_watch_free() may run on
 * another thread and touches only what the watch owns. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "common/common.h"
#include "daemon/api/api-internal.h"
#include "daemon/http/http.h"

enum watch_type {
	WATCH_OBJECTS,
	WATCH_EVENTS
};

struct api_watch {
	struct api *api;
	enum watch_type type;
	enum store_kind kind;           /* STORE_KIND_MAX: any (events) */
	char *ns;                       /* NULL: all */
	char *name;                     /* events only; NULL: all */
	struct store_selector *sel;     /* owned; NULL: all */
	uint64_t after;                 /* last resourceVersion / event id sent */
	struct store_subscription *sub; /* owned */
	struct store *store;
	int client_fd;
	struct buf pending; /* lines not yet handed to MHD */
	size_t off;         /* bytes of pending already handed over */
	bool ending;        /* end the stream once pending is drained */
	bool counted;       /* in api_watch_count() */
};

/* The most a watch buffers before MHD has taken it. */
#define WATCH_MAX_PENDING (64u << 20)

/* Makes a watch, or replies with why not (429 past API_MAX_WATCHES, 500)
 * and returns NULL. */
static struct api_watch *watch_new(const struct api_ctx *ctx, enum watch_type type,
				   enum store_kind k, const char *ns, const char *name,
				   uint32_t mask, struct api_reply *rep)
{
	struct api_watch *w = calloc(1, sizeof(*w));
	if (!w)
		goto fail;
	w->api = ctx->api;
	w->store = ctx->store;
	w->type = type;
	w->kind = k;
	w->client_fd = ctx->client_fd;
	buf_init(&w->pending, WATCH_MAX_PENDING);
	if ((ns && !(w->ns = strdup(ns))) || (name && !(w->name = strdup(name))))
		goto fail;
	w->counted = true;
	if (api_watch_count(w->api, 1) > API_MAX_WATCHES) {
		api_reply_error(rep, 429, "TooManyRequests", NULL,
				"too many open watches (%d): close some and try again",
				API_MAX_WATCHES);
		api_watch_free(w);
		return NULL;
	}
	w->sub = store_subscribe(ctx->store, mask);
	if (!w->sub)
		goto fail;
	return w;
fail:
	api_reply_error(rep, 500, NULL, NULL, "cannot start the watch");
	api_watch_free(w);
	return NULL;
}

void api_watch_free(void *cls)
{
	struct api_watch *w = cls;
	if (!w)
		return;
	if (w->sub)
		store_unsubscribe(w->store, w->sub);
	if (w->counted)
		api_watch_count(w->api, -1);
	store_selector_free(w->sel);
	buf_free(&w->pending);
	free(w->ns);
	free(w->name);
	free(w);
}

/* Appends {"type": type, "object": obj}\n. */
static int put_line(struct api_watch *w, const char *type, const json_t *obj)
{
	int e = buf_puts(&w->pending, "{\"type\":");
	e |= buf_put_json_string(&w->pending, type, strlen(type));
	e |= buf_puts(&w->pending, ",\"object\":");
	if (e < 0 || json_dump_callback(obj, buf_dump_cb, &w->pending, JSON_COMPACT) < 0)
		return -ENOMEM;
	return buf_puts(&w->pending, "}\n");
}

static int put_expired(struct api_watch *w, uint64_t rv)
{
	char msg[160];
	struct buf st = BUF_INIT(4096);
	snprintf(msg, sizeof(msg),
		 "too old resource version: %llu: the change log no longer holds it, list again",
		 (unsigned long long)rv);
	int e = api_status_render(&st, 410, "Expired", msg, NULL);
	e |= buf_puts(&w->pending, "{\"type\":\"ERROR\",\"object\":");
	e |= buf_append(&w->pending, st.data, st.len);
	e |= buf_puts(&w->pending, "}\n");
	buf_free(&st);
	w->ending = true;
	return e < 0 ? -ENOMEM : 0;
}

static bool labels_match(const struct api_watch *w, const json_t *obj)
{
	if (!w->sel)
		return true;
	return store_selector_match(w->sel,
				    json_object_get(json_object_get(obj, "metadata"), "labels"));
}

/* Reads what happened after w->after into pending: one page. Returns the
 * number of rows read (some may have been filtered out), or a negative
 * errno. */
static int fill(struct api_watch *w, struct store_reader *r)
{
	json_t *arr = NULL, *it;
	size_t i;
	int e;

	if (w->type == WATCH_OBJECTS) {
		uint64_t last = w->after;
		e = store_changes(r, w->after, w->kind, w->ns, API_WATCH_PAGE, &arr, &last);
		if (e == -ETIME)
			return put_expired(w, w->after);
		if (e < 0)
			return e;
		json_array_foreach (arr, i, it) {
			const char *type = json_string_value(json_object_get(it, "type"));
			const json_t *obj = json_object_get(it, "object");
			if (!type || !obj || !labels_match(w, obj))
				continue;
			if ((e = put_line(w, type, obj)) < 0)
				goto out;
		}
		w->after = last;
	} else {
		e = store_events(r, w->after, w->kind, w->ns, w->name, API_WATCH_PAGE, &arr);
		if (e < 0)
			return e;
		json_array_foreach (arr, i, it) {
			json_t *id = json_object_get(it, "id");
			uint64_t v = 0;
			if (json_is_integer(id) && json_integer_value(id) > 0)
				v = (uint64_t)json_integer_value(id);
			else if (json_is_string(id))
				num_parse_u64_str(json_string_value(id), UINT64_MAX, &v);
			if (v > w->after)
				w->after = v;
			if ((e = put_line(w, "ADDED", it)) < 0)
				goto out;
		}
	}
	e = (int)json_array_size(arr);
out:
	json_decref(arr);
	return e;
}

struct api_watch *api_watch_objects(const struct api_ctx *ctx, enum store_kind k, const char *ns,
				    struct store_selector *sel, bool initial, uint64_t rv,
				    struct api_reply *rep)
{
	struct api_watch *w = watch_new(ctx, WATCH_OBJECTS, k, ns, NULL, 1u << k, rep);
	struct store_reader *r = api_thread_reader(ctx->api);
	json_t *items = NULL, *it;
	uint64_t now;
	size_t i;

	if (!w) {
		store_selector_free(sel);
		return NULL;
	}
	w->sel = sel;
	if (!r || store_resource_version(r, &now) < 0) {
		api_reply_error(rep, 500, NULL, NULL, "cannot start the watch");
		goto fail;
	}
	/* As the Kubernetes API server: a version from the future is refused
	 * rather than waited for. */
	if (!initial && rv > now) {
		api_reply_error(rep, 504, "Timeout", NULL,
				"Too large resource version: %llu, current: %llu",
				(unsigned long long)rv, (unsigned long long)now);
		goto fail;
	}
	w->after = rv;
	if (initial) {
		int e = store_list(r, k, ns, sel, &items, &w->after);
		if (e < 0) {
			api_reply_error(rep, 500, NULL, NULL, "cannot list objects: %s",
					strerror(-e));
			goto fail;
		}
		json_array_foreach (items, i, it)
			if (put_line(w, "ADDED", it) < 0) {
				api_reply_error(rep, 413, NULL, NULL,
						"too many objects for one watch: use a selector");
				goto fail;
			}
		json_decref(items);
	}
	rep->code = 200;
	rep->content_type = "application/json";
	return w;
fail:
	json_decref(items);
	api_watch_free(w);
	return NULL;
}

struct api_watch *api_watch_events(const struct api_ctx *ctx, enum store_kind k, const char *ns,
				   const char *name, uint64_t after, struct api_reply *rep)
{
	struct api_watch *w = watch_new(ctx, WATCH_EVENTS, k, ns, name, 1u << STORE_KIND_MAX, rep);
	if (!w)
		return NULL;
	w->after = after;
	rep->code = 200;
	rep->content_type = "application/json";
	return w;
}

/* Waits for a commit, a stop or a hang-up. Returns 1 to read again, 0 to
 * end the stream, -1 when the client is gone. */
static int wait_change(struct api_watch *w)
{
	struct pollfd pfd[3] = {
		{ .fd = store_subscription_fd(w->sub), .events = POLLIN },
		{ .fd = api_stop_fd(w->api), .events = POLLIN },
		{ .fd = w->client_fd, .events = POLLRDHUP },
	};
	int n = poll(pfd, w->client_fd >= 0 ? 3 : 2, API_WATCH_POLL_MS);
	if (n < 0 && errno != EINTR)
		return -1;
	if (pfd[1].revents || api_stopping(w->api))
		return 0;
	if (w->client_fd >= 0 && (pfd[2].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
		return -1;
	return 1;
}

ssize_t api_watch_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct api_watch *w = cls;
	for (;;) {
		if (w->off < w->pending.len) {
			size_t n = w->pending.len - w->off;
			if (n > max)
				n = max;
			memcpy(out, w->pending.data + w->off, n);
			w->off += n;
			if (w->off == w->pending.len) {
				buf_reset(&w->pending);
				w->off = 0;
			}
			return (ssize_t)n;
		}
		if (w->ending || api_stopping(w->api))
			return MHD_CONTENT_READER_END_OF_STREAM;
		struct store_reader *r = api_thread_reader(w->api);
		if (!r)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		store_subscription_ack(w->sub);
		int rows = fill(w, r);
		if (rows < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (w->pending.len || w->ending || rows > 0)
			continue;
		int e = wait_change(w);
		if (e < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (e == 0)
			w->ending = true;
	}
}
