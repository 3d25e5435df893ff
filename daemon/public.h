/* public — the machine-facing routes of the public listener (daemon/public.c),
 * called by daemon/http.c. Included only inside daemon/. */
#pragma once

#include "ipxe/ipxe.h"

struct api;
struct ib_config;
struct MHD_Connection;
struct MHD_Response;

/* A response to queue: the status and the libmicrohttpd response (owned
 * by the caller, who queues and destroys it). */
struct public_reply {
	unsigned code;
	struct MHD_Response *resp;
};

/* Answers route (a route of ours, from ipxe_route_parse()) on connection
 * c with the configuration snapshot cfg (borrowed for the call). Returns
 * 0 with *rep filled, or -ENOMEM when no response could be made. */
int public_handle(struct api *api, const struct ib_config *cfg, struct MHD_Connection *c,
		  const struct ipxe_route *route, struct public_reply *rep);
