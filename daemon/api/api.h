/* api — the admin API of ironbelld (Kubernetes-style CRUD and watch for
 * every kind, apply, events, version, health, metrics). The HTTP
 * listeners that serve it are the transport's (daemon/http/http.h).
 *
 * Two layers:
 *  - pure helpers (daemon/api/api.c): the route parser, the query-string parser,
 *    errno -> HTTP status mapping, Content-Type classification, the token
 *    compare. No sockets, no store; the unit tests and the fuzz target call
 *    them directly.
 *  - the handlers (daemon/api/handlers.c, daemon/api/watch.c), which read
 *    and write the store for the requests the transport routes to them
 *    (daemon/api/api-internal.h).
 *
 * See the admin API contract (man/ironbelld.8, "ADMIN API"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "store/store.h"

/* ---- limits ---- */

#define API_MAX_PATH 1024     /* bytes of a request path (without the query) */
#define API_MAX_NAMESPACE 63  /* a DNS label */
#define API_MAX_NAME 253      /* a DNS subdomain */
#define API_MAX_SELECTOR 1024 /* labelSelector, decoded */
#define API_MAX_QUERY_KEY 64  /* a query key, decoded */
#define API_MAX_KIND 128      /* events ?kind=, decoded */
#define API_EVENTS_LIMIT_DEFAULT 500
#define API_EVENTS_LIMIT_MAX 10000
#define API_MAX_APPLY_ITEMS 100000

/* ---- routes ---- */

enum api_route_type {
	API_ROUTE_LIST_ALL, /* {base}/{plural} */
	API_ROUTE_LIST_NS,  /* {base}/namespaces/{ns}/{plural} */
	API_ROUTE_OBJECT,   /* {base}/namespaces/{ns}/{plural}/{name} */
	API_ROUTE_STATUS,   /* {base}/namespaces/{ns}/{plural}/{name}/status */
	API_ROUTE_APPLY,    /* /apis/ironbell.dev/v1/apply */
	API_ROUTE_EVENTS,   /* /apis/ironbell.dev/v1/events */
	API_ROUTE_LEASES,   /* /apis/ironbell.dev/v1/leases */
	API_ROUTE_VERSION,  /* /version */
	API_ROUTE_HEALTHZ,  /* /healthz */
	API_ROUTE_READYZ,   /* /readyz */
	API_ROUTE_METRICS,  /* /metrics */
	API_ROUTE_MAX
};

enum api_method {
	API_METHOD_GET,
	API_METHOD_HEAD,
	API_METHOD_POST,
	API_METHOD_PUT,
	API_METHOD_PATCH,
	API_METHOD_DELETE,
	API_METHOD_OTHER,
	API_METHOD_MAX
};

#define API_METHOD_BIT(m) (1u << (m))

struct api_route {
	enum api_route_type type;
	/* resource routes only (LIST_ALL .. STATUS) */
	enum store_kind kind;
	const char *group;              /* static: "tinkerbell.org", "" for the core group */
	const char *version;            /* static: "v1alpha1", "v1" */
	bool status;                    /* the /status subresource */
	char ns[API_MAX_NAMESPACE + 1]; /* "" when not in the path */
	char name[API_MAX_NAME + 1];    /* "" when not in the path */
};

/* Parses a raw (not percent-decoded) request path, without its query string,
 * into *ret. Every segment must be non-empty; namespaces are DNS labels and
 * names DNS subdomains (lowercase alphanumerics, '-', '.'; no "..", no '%'):
 * a percent-encoded path is never decoded, so "%2F" cannot smuggle a
 * separator. Returns 0, -ENOENT for a path that names nothing, or -EINVAL for
 * a malformed one (both are 404 to the client). *ret is written only on
 * success. */
int api_route_parse(const char *path, size_t len, struct api_route *ret);

/* The route template used as the metrics path label, e.g.
 * "/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}"; never the raw
 * path. r may be NULL (an unknown path): "other". Static string. */
const char *api_route_template(const struct api_route *r);

/* The methods a route accepts, as API_METHOD_BIT()s. */
unsigned api_route_methods(const struct api_route *r);

/* Maps an HTTP method name to enum api_method (API_METHOD_OTHER for the
 * rest). */
enum api_method api_method_parse(const char *method);
/* The method's name ("GET"), or "OTHER". */
const char *api_method_name(enum api_method m);

/* ---- query strings ---- */

struct api_query {
	bool watch;
	bool have_rv;
	uint64_t resource_version;
	bool have_selector;
	char label_selector[API_MAX_SELECTOR + 1];
	/* events */
	char kind[API_MAX_KIND + 1];            /* "" when absent */
	char namespace_[API_MAX_NAMESPACE + 1]; /* "" when absent */
	char name[API_MAX_NAME + 1];            /* "" when absent */
	uint64_t after;
	uint64_t limit;
};

/* Resets q to the defaults (no watch, no rv, after 0, limit 500). */
void api_query_init(struct api_query *q);
/* Records one raw (percent-encoded) key=value pair. value may be NULL (a
 * key without '='). Unknown keys are ignored, as the Kubernetes API server
 * does. Returns 0 or -EINVAL (bad escape, bad number, too long) with a
 * message in err. */
int api_query_set(struct api_query *q, const char *key, const char *value, char *err,
		  size_t errlen);
/* Parses a whole raw query string "a=b&c=d" (without '?') of len bytes. */
int api_query_parse(struct api_query *q, const char *s, size_t len, char *err, size_t errlen);

/* Decodes %XX escapes and '+' (as a space) of s[0..len) into out (NUL
 * terminated, at most outlen - 1 bytes). Rejects a truncated or non-hex
 * escape and %00. Returns the decoded length, -EINVAL or -E2BIG. */
int api_pct_decode(const char *s, size_t len, char *out, size_t outlen);

/* ---- statuses ---- */

/* Maps a store errno (negative) to the HTTP code and Kubernetes reason of
 * the contract: -ENOENT 404 NotFound, -EEXIST 409 AlreadyExists, -ESTALE and
 * -EADDRINUSE 409 Conflict, -EINVAL 422 Invalid, -EPERM 403 Forbidden,
 * -ETIME 410 Expired, -E2BIG 413 RequestEntityTooLarge, anything else 500
 * InternalError. */
void api_errno_status(int err, int *ret_code, const char **ret_reason);
/* The reason for an HTTP error code we send (400 BadRequest, ...). */
const char *api_code_reason(int code);
/* Appends a Kubernetes Status JSON object for code/reason/message to out;
 * field, when not NULL, becomes details.causes[0].field. */
int api_status_render(struct buf *out, int code, const char *reason, const char *message,
		      const char *field);

/* ---- request bodies ---- */

enum api_content_type {
	API_CT_NONE,        /* no Content-Type */
	API_CT_JSON,        /* application/json */
	API_CT_YAML,        /* application/yaml, application/x-yaml, text/yaml */
	API_CT_MERGE_PATCH, /* application/merge-patch+json */
	API_CT_STRATEGIC,   /* application/strategic-merge-patch+json */
	API_CT_JSON_PATCH,  /* application/json-patch+json */
	API_CT_OTHER,
	API_CT_MAX
};

/* Classifies a Content-Type header value (case-insensitive, parameters such
 * as "; charset=utf-8" ignored). NULL is API_CT_NONE. */
enum api_content_type api_content_type_parse(const char *ct);

/* Compares a presented secret with the expected one in time that depends
 * only on their lengths, not on where they differ. */
bool api_token_equal(const char *given, size_t given_len, const char *want, size_t want_len);
