/* public-internal — what the files of daemon/public/ share: the
 * rate-limited refusal log lines and the plain-text replies. Included only
 * inside daemon/public/. */
#pragma once

#include <stdbool.h>

#include "daemon/public/public.h"

enum public_log {
	PUBLIC_LOG_SCRIPT,   /* no script for a machine */
	PUBLIC_LOG_FILE,     /* a binary or OSIE file not served */
	PUBLIC_LOG_METADATA, /* no metadata for a client */
	PUBLIC_LOG_DOWNLOAD, /* a file refused: too many downloads of one address */
	PUBLIC_LOG_MAX
};

/* True when one more line of kind may be logged (after one saying how
 * many were not, if some were not), across the handler threads: a scan of
 * the listener must not flood the log. */
bool public_log_allowed(enum public_log kind, const char *subsystem);

/* A text/plain reply of text (copied) with status code. 0 or -ENOMEM. */
int public_reply_text(unsigned code, const char *text, struct public_reply *rep);

/* A binary (ipxe.binary_dir) or OSIE (ipxe.osie_dir) file of the
 * configuration snapshot cfg, route being IPXE_ROUTE_BINARY or
 * IPXE_ROUTE_OSIE (files.c): validators, 304, Range, and the bound of
 * ipxe.max_downloads_per_client per client address (503). A 200 or 206
 * holds a download slot of the connection until public_request_done().
 * 0 with *rep filled, or -ENOMEM. */
int public_serve_file(struct MHD_Connection *c, const struct ib_config *cfg,
		      const struct ipxe_route *route, const char *client, struct public_reply *rep);
