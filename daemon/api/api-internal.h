/* api-internal — what the admin API's handlers (daemon/api/handlers.c,
 * daemon/api/watch.c) offer the transport (daemon/http/http.c) and share;
 * nobody outside daemon/ includes it. What the transport offers them is in
 * daemon/http/http.h.
 *
 * Threads: a request is handled start to end on one libmicrohttpd thread
 * (a connection thread on the admin listeners, a pool thread on the public
 * one), so everything in struct api_ctx and struct api_reply belongs to
 * that thread. struct api's shared fields say what guards them. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"
#include "daemon/api/api.h"

struct api;

/* The most a response body held in memory may grow to (a list of every
 * object of a kind). */
#define API_MAX_RESPONSE (512u << 20)

/* The most changes or events read from the store per fill of a watch. */
#define API_WATCH_PAGE 256
/* How long a watch waits in poll() before it checks again for shutdown
 * (the stop eventfd wakes it at once; this is only a safety net). */
#define API_WATCH_POLL_MS 1000
/* Open watch streams at most: each holds one of the admin listener's
 * connection threads (ADMIN_MAX_CONNECTIONS), and some must stay free for
 * ordinary requests such as apply. */
#define API_MAX_WATCHES 96

struct api_watch;

/* One request, as the handlers see it. Borrowed pointers live for the
 * request. */
struct api_ctx {
	struct api *api;
	struct store *store;
	const struct ib_config *cfg;
	const struct api_route *route;
	const struct api_query *query;
	enum api_method method;
	enum api_content_type ctype;
	const char *body; /* NUL-terminated, body_len bytes; "" when none */
	size_t body_len;
	int client_fd; /* the connection's socket, for watches to notice a hang-up */
};

/* What a handler answers: a body in memory, or a watch stream. */
struct api_reply {
	int code;
	const char *content_type; /* static */
	struct buf body;
	struct api_watch *watch; /* owned; when set, body is unused */
};

/* ---- daemon/api/handlers.c ---- */

/* Handles a routed request whose method the route accepts. Always fills
 * rep (an error is a Status body). */
void api_handle(const struct api_ctx *ctx, struct api_reply *rep);

/* Fills rep with a Status error; fmt is the message. */
void api_reply_error(struct api_reply *rep, int code, const char *reason, const char *field,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Fills rep with the JSON of v (compact) and code. v is borrowed. */
void api_reply_json(struct api_reply *rep, int code, const json_t *v);
/* Fills rep with a text/plain body. */
void api_reply_text(struct api_reply *rep, int code, const char *text);
/* The string member k of obj (borrowed from obj), or NULL. */
const char *api_obj_str(const json_t *obj, const char *k);
/* The string member k of obj's metadata (borrowed from obj), or NULL. */
const char *api_meta_str(const json_t *obj, const char *k);
/* kubectl's word for what a write did: "created", "configured",
 * "unchanged" or "deleted". */
const char *api_result_name(enum store_result r);
/* Queues an audit event (who did what, through via) for a write op that
 * changed an object; true when one was queued. */
bool api_record_event(const struct api_ctx *ctx, const struct store_op *op, const char *via);

/* ---- daemon/api/apply.c ---- */

/* POST /apply: every object of the body in one atomic write; replies with
 * an ApplyResult, or the first error. */
void api_handle_apply(const struct api_ctx *ctx, struct api_reply *rep);

/* ---- daemon/api/watch.c ---- */

/* A watch of objects of kind k (in namespace ns, NULL: all; matching sel,
 * NULL: all; sel is taken over) starting after resourceVersion rv, or with
 * an ADDED for every existing object when initial is true. NULL with rep
 * filled with an error. */
struct api_watch *api_watch_objects(const struct api_ctx *ctx, enum store_kind k, const char *ns,
				    struct store_selector *sel, bool initial, uint64_t rv,
				    struct api_reply *rep);
/* A watch of events (kind STORE_KIND_MAX, ns and name NULL: all) with id >
 * after. */
struct api_watch *api_watch_events(const struct api_ctx *ctx, enum store_kind k, const char *ns,
				   const char *name, uint64_t after, struct api_reply *rep);
/* The content reader and its free callback, for
 * MHD_create_response_from_callback(). */
ssize_t api_watch_read(void *cls, uint64_t pos, char *out, size_t max);
void api_watch_free(void *cls);
