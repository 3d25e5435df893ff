/* public — the machine-facing routes of the public listener (daemon/public/public.c),
 * called by daemon/http/http.c. Included only inside daemon/. */
#pragma once

#include <stdbool.h>

#include "ipxe/ipxe.h"
#include "metadata/metadata.h"

struct api;
struct ib_config;
struct MHD_Connection;
struct MHD_Response;

/* A response to queue: the status and the libmicrohttpd response (owned
 * by the caller, who queues and destroys it), or, when queued is true, a
 * response already queued (a shared one of the answer cache) with
 * MHD_queue_response's result in queued_ret and resp NULL. */
struct public_reply {
	unsigned code;
	struct MHD_Response *resp;
	bool queued;
	int queued_ret;
};

/* Frees an answer of the answer cache (daemon/public/answers.h's
 * answers_free_fn): the daemon gives it to answers_new(). */
void public_answer_free(void *answer);

struct answers;
struct answers_rec;
struct store_reader;
/* The answer cache's prebuild function (answers_set_prebuild, arg: the
 * api): makes rec's boot answers ahead of their first request, with
 * http.answer_prebuild (public.c says which). */
void public_prebuild(void *arg, struct answers *a, const struct answers_rec *rec,
		     struct store_reader *r);
/* Drops the Hardware trees kept for answers made on first use (public.c):
 * once no request runs (the daemon, after the listeners stopped). */
void public_recent_clear(void);

/* A route of the public listener that this file answers. */
struct public_route {
	enum { PUBLIC_NONE, PUBLIC_IPXE, PUBLIC_METADATA } kind;
	struct ipxe_route ipxe;
	struct md_route md;
};

/* Parses the path url (NUL-terminated, still percent-encoded): true when
 * it is ours (malformed ones too: they get 404). */
bool public_route_parse(const char *url, struct public_route *ret);
/* The route's template for logs and metrics. */
const char *public_route_template(const struct public_route *r);

/* Answers route on connection c with the configuration snapshot cfg
 * (borrowed for the call). Returns 0 with *rep filled, or -ENOMEM when no
 * response could be made. */
int public_handle(struct api *api, const struct ib_config *cfg, struct MHD_Connection *c,
		  const struct public_route *route, struct public_reply *rep);
/* Called when libmicrohttpd completes (or aborts) the request of route on
 * connection c: releases the download slot a file answer held
 * (daemon/public/files.c). Cheap for every other route. */
void public_request_done(struct MHD_Connection *c, const struct public_route *route);
