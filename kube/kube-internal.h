/* kube-internal — what the files of kube/ share: the connection settings
 * (kubeconfig.c), the HTTP client (client.c), the watch-stream decoder
 * (watchdec.c). Not for other parts. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* ---- where the API server is and who we are (kubeconfig.c) ---- */

#define KUBE_MAX_KUBECONFIG (1024 * 1024) /* bytes of a kubeconfig file */
#define KUBE_MAX_PEM (256 * 1024)         /* bytes of one PEM file or -data */
#define KUBE_MAX_TOKEN (64 * 1024)        /* bytes of a bearer token */

/* Every member is NULL when absent; all are heap strings. */
struct kube_conn {
	char *server;          /* "https://host:port", no trailing '/' */
	char *tls_server_name; /* the cluster's tls-server-name */
	char *ca_pem;          /* PEM text that verifies the server; NULL: the
				* system's roots */
	char *cert_pem;        /* client certificate chain, PEM text */
	char *key_pem;         /* its private key, PEM text */
	char *token;           /* bearer token */
	char *token_file;      /* read again when the server answers 401 */
	char *namespace_;      /* the context's namespace */
	char *origin;          /* for log lines: `kubeconfig FILE, context
				* NAME` or `in-cluster` */
};

/* Reads the kubeconfig at path (YAML) and the context named (NULL: its
 * current-context): the cluster's server, certificate-authority(-data),
 * tls-server-name; the user's client-certificate(-data),
 * client-key(-data), token, tokenFile; the context's namespace. Relative
 * file names are relative to the kubeconfig's directory. Refuses
 * insecure-skip-tls-verify: true, exec and auth-provider users, a server
 * that is not https://, and a certificate without its key. 0, or -EINVAL
 * (-ENOENT, -ENOMEM, ...) with err naming the file and, for a YAML error,
 * the line and column, else the field ("users[0].user.client-key: ...").
 * On failure *ret is zeroed. */
int kube_conn_from_kubeconfig(const char *path, const char *context, struct kube_conn *ret,
			      char *err, size_t errlen);
/* In-cluster: the server from KUBERNETES_SERVICE_HOST and
 * KUBERNETES_SERVICE_PORT (an IPv6 host in brackets), the token file,
 * ca.crt and namespace of dir (NULL: the service account's
 * /var/run/secrets/kubernetes.io/serviceaccount). 0 or a negative errno
 * with err. */
int kube_conn_in_cluster(const char *dir, struct kube_conn *ret, char *err, size_t errlen);
/* Frees every member and zeroes c. Accepts NULL. */
void kube_conn_clear(struct kube_conn *c);
/* kube_conn_from_kubeconfig's work on the text (data, len) already read:
 * file names the kubeconfig in messages; relative file names resolve
 * under dir, and with dir NULL no file is read at all (a field naming
 * one is refused with -EPERM: the fuzz target's mode). Same returns. */
int kube_conn_parse(const char *data, size_t len, const char *file, const char *dir,
		    const char *context, struct kube_conn *ret, char *err, size_t errlen);
/* Reads a bearer token from the regular file path (at most KUBE_MAX_TOKEN
 * bytes once the white space around it is trimmed; printable ASCII only,
 * as it goes into a header) into a new heap string *ret. 0, or a
 * negative errno with err naming the file. */
int kube_token_read(const char *path, char **ret, char *err, size_t errlen);
/* Decodes standard base64 (padding required; line breaks skipped, as
 * Go's decoder does) of len bytes into out, at most cap bytes; the
 * length in *ret_len. 0, -EINVAL for bad base64, -E2BIG when over cap. */
int kube_base64_decode(const char *in, size_t len, char *out, size_t cap, size_t *ret_len);

/* ---- the HTTP client (client.c) ---- */

/* One API server shared by every thread of the part: the connection
 * settings, the bearer token (read again from token_file on a 401) and
 * the client-side rate limit (client-go's token bucket: qps, burst),
 * behind a lock. */
struct kube_api;

struct kube_api_opts {
	unsigned qps, burst;         /* 0: no limit */
	unsigned timeout_ms;         /* a request other than a stream: 30000 */
	unsigned connect_timeout_ms; /* 10000 */
};

/* Copies conn. 0 or a negative errno with err. */
int kube_api_new(const struct kube_conn *conn, const struct kube_api_opts *opts,
		 struct kube_api **ret, char *err, size_t errlen);
void kube_api_free(struct kube_api *a);
/* The connection's origin, for log lines. */
const char *kube_api_origin(const struct kube_api *a);

/* One connection (a libcurl easy handle, HTTP/2 over TLS when the server
 * offers it, kept alive between requests), used by one thread at a time. */
struct kube_session;

struct kube_session *kube_session_new(struct kube_api *a);
void kube_session_free(struct kube_session *s);
/* From any thread: the request or stream the session is in (and every
 * later one) ends at once with -ECANCELED. */
void kube_session_cancel(struct kube_session *s);

#define KUBE_MAX_BODY (256u * 1024 * 1024) /* bytes of one non-stream answer */

struct kube_response {
	long status;          /* HTTP status; 0 when no answer came */
	struct buf body;      /* the answer's body (buf_free() it) */
	unsigned retry_after; /* seconds of a Retry-After header, else 0 */
	char error[512];      /* on failure: why, e.g. `TLS: certificate
			       * verify failed for https://...: self-signed
			       * certificate` or `HTTP 500: <Status.message>` */
};

/* Sends one request: method "GET", "POST", "PUT", "PATCH", "DELETE";
 * path with its query ("/apis/tinkerbell.org/v1alpha1/hardware?limit=500");
 * body of len bytes with content_type, or NULL. Waits for a token of the
 * rate limit first (bounded by the request timeout). Returns 0 when an
 * answer came, whatever its status (resp->status; for a status >= 400,
 * resp->error holds the Status object's message), or a negative errno
 * when none came (-ECONNREFUSED, -ETIMEDOUT, -EPROTO for TLS, -ECANCELED,
 * -E2BIG for a body over KUBE_MAX_BODY) with resp->error saying why. resp
 * is initialised by the call; buf_free(&resp->body) after. A 401 is tried
 * once more after the token file is read again. */
int kube_request(struct kube_session *s, const char *method, const char *path,
		 const char *content_type, const char *body, size_t len,
		 struct kube_response *resp);

/* A GET whose answer is a stream (a watch): fn gets the body's bytes as
 * they arrive, in pieces of any size; it returns 0 to go on or a negative
 * errno, which ends the stream and is returned. The stream has no
 * timeout of its own (the path carries timeoutSeconds) but ends with
 * -ETIMEDOUT when no byte came for idle_timeout_s. Returns 0 when the
 * server ended the stream; resp->status is its HTTP status (for a status
 * other than 200, fn is not called and resp->body holds the answer). */
typedef int (*kube_stream_fn)(const char *data, size_t len, void *userdata);
int kube_stream(struct kube_session *s, const char *path, unsigned idle_timeout_s,
		kube_stream_fn fn, void *userdata, struct kube_response *resp);

/* ---- the watch stream and list answers (watchdec.c) ---- */

#define KUBE_MAX_EVENT (16u * 1024 * 1024) /* bytes of one watch event line */

enum kube_event_type {
	KUBE_EVENT_ADDED,
	KUBE_EVENT_MODIFIED,
	KUBE_EVENT_DELETED,
	KUBE_EVENT_BOOKMARK,
	KUBE_EVENT_ERROR, /* object is a Status: code (410 Gone: relist), message */
};

struct kube_event {
	enum kube_event_type type;
	json_t *object;   /* borrowed for the callback's duration */
	const char *rv;   /* object.metadata.resourceVersion (ERROR: "") */
	const char *namespace_, *name; /* of the object ("" for ERROR/BOOKMARK) */
	int code;         /* ERROR: Status.code (0 when absent) */
	const char *message; /* ERROR: Status.message ("" when absent) */
};

/* Splits a watch stream into lines (each one JSON event, {"type":...,
 * "object":{...}}) and checks each: a JSON object, a known type, an
 * object with metadata.resourceVersion (a string of 1 to 64 characters)
 * and, except for ERROR and BOOKMARK, metadata.name and namespace
 * (strings) and the expected apiVersion and kind. Empty lines are
 * skipped. */
struct kube_watchdec {
	const char *api_version, *kind; /* what the objects must be */
	struct buf line;                /* an unfinished line */
	uint64_t lines;                 /* complete lines seen */
};

void kube_watchdec_init(struct kube_watchdec *d, const char *api_version, const char *kind);
void kube_watchdec_free(struct kube_watchdec *d);

typedef int (*kube_event_fn)(const struct kube_event *ev, void *userdata);
/* Feeds len bytes. Calls fn for each complete, valid line, in order; a
 * negative return from fn stops and is returned. A line that is not valid
 * stops with -EBADMSG and err saying which line and why ("line 3: not
 * JSON: ...", "line 4: object is a Template, not a Hardware"); a line
 * longer than KUBE_MAX_EVENT stops with -E2BIG. After an error the
 * decoder must be reset (kube_watchdec_free + init) before more input. */
int kube_watchdec_feed(struct kube_watchdec *d, const char *data, size_t len, kube_event_fn fn,
		       void *userdata, char *err, size_t errlen);
/* True when bytes of an unfinished line are pending (a stream cut
 * mid-line). */
bool kube_watchdec_partial(const struct kube_watchdec *d);

/* One page of a list answer ({"kind": "<Kind>List", "metadata":
 * {"resourceVersion", "continue"}, "items": [...]}): each item checked as
 * a watch event's object is (apiVersion and kind may be absent in items,
 * as the API server leaves them; they are filled in). On success *ret_items
 * is a new reference to the items array, rv and cont (both may be "")
 * copied into the caller's buffers. -EBADMSG with err otherwise. */
#define KUBE_MAX_RV 64
#define KUBE_MAX_CONTINUE 4096
int kube_list_parse(const char *data, size_t len, const char *api_version, const char *kind,
		    json_t **ret_items, char rv[KUBE_MAX_RV + 1],
		    char cont[KUBE_MAX_CONTINUE + 1], char *err, size_t errlen);
