/* kube-internal — what the files of kube/ share: the connection settings
 * (kubeconfig.c), the HTTP client (client.c), the watch-stream decoder
 * (watchdec.c). Not for other parts. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/jsonmerge.h"

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
 * they arrive, in pieces of any size, and then, once what has arrived is
 * all given (after each round of reads, and at the end), a call with data
 * NULL and len 0: the moment to act on what the pieces brought, so that a
 * backlog is handled as one; it returns 0 to go on or a negative
 * errno, which ends the stream and is returned. The stream has no
 * timeout of its own (the path carries timeoutSeconds) but ends with
 * -ETIMEDOUT when no byte came for idle_timeout_s. Returns 0 when the
 * server ended the stream; resp->status is its HTTP status (for a status
 * other than 200, fn is not called and resp->body holds the answer). */
typedef int (*kube_stream_fn)(const char *data, size_t len, void *userdata);
int kube_stream(struct kube_session *s, const char *path, unsigned idle_timeout_s,
		kube_stream_fn fn, void *userdata, struct kube_response *resp);

/* ---- the watch stream and list answers (watchdec.c) ---- */

#define KUBE_MAX_EVENT (16u * 1024 * 1024) /* bytes of one watch event line,
					      * its '\n' included */
#define KUBE_MAX_STATUS_MESSAGE 1024 /* bytes of an ERROR's message kept */

enum kube_event_type {
	KUBE_EVENT_ADDED,
	KUBE_EVENT_MODIFIED,
	KUBE_EVENT_DELETED,
	KUBE_EVENT_BOOKMARK,
	KUBE_EVENT_ERROR, /* object is a Status: code (410 Gone: relist), message */
};

/* The strings are borrowed for the callback's duration; the object may be
 * json_incref()ed to keep it. */
struct kube_event {
	enum kube_event_type type;
	json_t *object;   /* borrowed for the callback's duration */
	const char *rv;   /* object.metadata.resourceVersion (ERROR: "") */
	const char *namespace_, *name; /* of the object ("" for ERROR/BOOKMARK) */
	int code;         /* ERROR: Status.code (0 when absent or not 0..999) */
	const char *message; /* ERROR: Status.message ("" when absent), cut to
			      * KUBE_MAX_STATUS_MESSAGE bytes, control
			      * characters made '?': fit for a log line */
};

/* Splits a watch stream into lines (each one JSON event, {"type":...,
 * "object":{...}}, parsed with duplicate keys refused) and checks each: a
 * JSON object, a known type (exactly "ADDED", "MODIFIED", "DELETED",
 * "BOOKMARK" or "ERROR"), an object that is a JSON object and, except for
 * ERROR, has metadata.resourceVersion (a string of 1 to KUBE_MAX_RV
 * printable ASCII characters); except for ERROR and BOOKMARK also
 * metadata.name and metadata.namespace (1 to 253 of lowercase
 * letters, digits, '-' and '.') and the expected apiVersion and kind. A
 * BOOKMARK's apiVersion and kind, when present, must be the expected
 * ones. A line may end in "\r\n"; blank lines (spaces, tabs, '\r') are
 * skipped. */
struct kube_watchdec {
	const char *api_version, *kind; /* what the objects must be */
	struct buf line;                /* an unfinished line */
	uint64_t lines;                 /* complete lines seen */
	int error;                      /* what stopped it, or 0 */
};

/* Borrows api_version and kind (they must outlive d). */
void kube_watchdec_init(struct kube_watchdec *d, const char *api_version, const char *kind);
/* Frees the unfinished line. Accepts a zeroed d. */
void kube_watchdec_free(struct kube_watchdec *d);

typedef int (*kube_event_fn)(const struct kube_event *ev, void *userdata);
/* Feeds len bytes. Calls fn for each complete, valid line, in order; a
 * negative return from fn stops and is returned (err names the line). A
 * line that is not valid stops with -EBADMSG and err saying which line
 * and why (`watch line 3: not JSON: '[' or '{' expected near 'garbage'`,
 * `watch line 4: object is tinkerbell.org/v1alpha1 Template, not
 * Hardware`); a line longer than KUBE_MAX_EVENT stops with -E2BIG as soon
 * as its bytes pass the bound (no more than that is ever buffered).
 * -ENOMEM when memory runs out. Quoted server strings in err are cut and
 * have their control characters made '?'. After an error the decoder must
 * be reset (kube_watchdec_free + init): until then every feed returns the
 * same error. */
int kube_watchdec_feed(struct kube_watchdec *d, const char *data, size_t len, kube_event_fn fn,
		       void *userdata, char *err, size_t errlen);
/* True when bytes of an unfinished line are pending (a stream cut
 * mid-line). */
bool kube_watchdec_partial(const struct kube_watchdec *d);

/* One page of a list answer ({"apiVersion": api_version, "kind":
 * "<Kind>List", "metadata": {"resourceVersion", "continue"}, "items":
 * [...]}; apiVersion, kind and metadata may be absent, items may be null):
 * each item checked as an ADDED event's object is (apiVersion and kind may
 * be absent in items, as the API server leaves them; they are filled in).
 * On success *ret_items is a new reference to the items array, rv and cont
 * (both may be ""; cont of printable ASCII) copied into the caller's
 * buffers. -EBADMSG with err otherwise (`list: items[17]: metadata.name
 * missing`), -ENOMEM; the outputs are written only on success. */
#define KUBE_MAX_RV 64
#define KUBE_MAX_CONTINUE 4096
int kube_list_parse(const char *data, size_t len, const char *api_version, const char *kind,
		    json_t **ret_items, char rv[KUBE_MAX_RV + 1],
		    char cont[KUBE_MAX_CONTINUE + 1], char *err, size_t errlen);

/* ---- write-back (patch.c) ---- */

/* The pure core of the status writer: the Workflow status in the shape
 * the cluster's CRD expects, and the status kept of the cluster's echo.
 * No I/O. */

#include "kube/kube.h"
#include "store/store.h"

/* Longest Go duration string read (executionDuration, "1h2m3.5s"). */
#define KUBE_MAX_DURATION 64

/* Merge patches are made and applied by common/jsonmerge.h. */

/* A Workflow status in the monorepo's shape (what the engine writes) in
 * the shape of tinkerbell/tink <= v0.12's CRD: state PENDING ->
 * STATE_PENDING (and each state so), currentState -> currentAction (its
 * actionName), templateRendering -> templateRending (the CRD's spelling),
 * tasks[].agentID -> worker, actions[].state -> status, executionStart ->
 * startedAt, executionDuration (a Go duration) -> seconds (whole seconds,
 * cut); bootOptions, globalTimeout and conditions as they are; everything
 * the legacy CRD has no field for is dropped (IDs, agentID,
 * globalExecutionStop, executionStop, namespaces, the engine's retry
 * bookkeeping). A status already legacy keeps its fields: the conversion
 * is idempotent. 0 with *ret a new reference; -EINVAL with err naming
 * the field (a task that is not an object, a duration that does not
 * parse); -ENOMEM. */
int kube_status_to_legacy(const json_t *status, json_t **ret, char *err, size_t errlen);
/* The reverse, for a legacy status mirrored from the cluster into the
 * store. prev is the status the store holds for the object (NULL: none).
 * When legacy is not in the legacy shape, or is what
 * kube_status_to_legacy(prev) gives (the echo of the daemon's own write,
 * less the fields an older CRD's schema does not list and the API server
 * dropped), *ret is a copy of it, or of prev: nothing is lost. Otherwise its fields
 * are renamed back (STATE_X -> X, status -> state, startedAt ->
 * executionStart, seconds -> executionDuration, worker -> agentID,
 * currentAction -> currentState), and what legacy cannot hold (task and
 * action IDs, executionStop, globalExecutionStop, the engine's
 * bookkeeping) is taken from prev's task and action of the same name at
 * the same place; agentID is the agent of the first task not done. With
 * no prev (or a legacy one), or when a task or an action gets no ID that
 * way, the engine could not address it: *ret is then a copy of legacy
 * unchanged, which the engine reads as a legacy status (it renders
 * STATE_PENDING and STATE_RUNNING ones again, as Tinkerbell's controller
 * does). 0, -EINVAL with err, -ENOMEM. */
int kube_status_from_legacy(const json_t *legacy, const json_t *prev, json_t **ret, char *err,
			    size_t errlen);
/* The status the store keeps when an object comes from the cluster:
 * cluster_status as the API server gave it (NULL: the object has none),
 * prev what the store holds for the same object (NULL: none; the caller
 * passes NULL when the cluster's object is not the one it mirrored last,
 * e.g. its uid changed: a Workflow deleted and made again). When
 * cluster_status is the echo of what the writer sends for prev (every
 * member it has is there with the same value: the CRD's schema dropped
 * the rest, such as the engine's retry bookkeeping, or prev only moved on
 * since), *ret is a copy of prev. Otherwise a Workflow's goes through
 * kube_status_from_legacy(cluster_status, prev), and another kind's is
 * copied. *ret is NULL when both are absent. 0, -EINVAL with err (a
 * legacy status that is not in shape), -ENOMEM. */
int kube_status_mirror(enum store_kind k, const json_t *cluster_status, const json_t *prev,
		       enum kube_status_schema schema, json_t **ret, char *err, size_t errlen);
/* Parses a Go duration ("1m2s", "350ms", "-1.5h", "0") of len bytes into
 * nanoseconds. 0, -EINVAL (not a duration, longer than
 * KUBE_MAX_DURATION), -ERANGE (beyond int64 nanoseconds). */
int kube_go_duration_ns(const char *s, size_t len, int64_t *ret_ns);

/* Which Workflow status schema the cluster's CRD describes. crd is the
 * CustomResourceDefinition workflows.tinkerbell.org
 * (apiextensions.k8s.io/v1); the properties of
 * spec.versions[name=v1alpha1].schema.openAPIV3Schema.properties.status
 * decide: currentState, templateRendering or agentID -> MONOREPO;
 * currentAction, templateRending, or tasks whose items have worker ->
 * LEGACY (tink's CRDs before currentAction described only tasks);
 * anything else (x-kubernetes-preserve-unknown-fields, no schema, NULL)
 * -> MONOREPO, since such a schema keeps whatever is written and the
 * monorepo's shape is what current Tinkerbell and CAPT read. Never AUTO. */
enum kube_status_schema kube_schema_from_crd(const json_t *crd);

/* ---- leader election (lease.c, leader.c) ---- */

/* The decision core (lease.c, pure: no network, no clock of its own) and
 * the elector thread around it (leader.c), as client-go's leaderelection
 * does with a coordination.k8s.io/v1 Lease: the holder renews the Lease
 * every retry period; another instance takes it over only when it has
 * seen the Lease's record unchanged for a whole leaseDurationSeconds by
 * its own monotonic clock (never by the Lease's renewTime: clocks of
 * different hosts differ). */

#define KUBE_LEASE_MAX_HOLDER 253      /* bytes of a holderIdentity we take */
#define KUBE_LEASE_MAX_DURATION_S 3600 /* longest leaseDurationSeconds honoured */
#define KUBE_LEASE_MAX_TIME 40         /* bytes of an acquireTime kept as read */
#define KUBE_LEASE_TIME_LEN 27         /* "2026-11-26T03:12:27.123456Z" */

/* A Lease as read from the API server (untrusted). */
struct kube_lease {
	json_t *object;           /* the whole object (owned): its metadata is kept
			     * in what is written back */
	char rv[KUBE_MAX_RV + 1]; /* metadata.resourceVersion */
	bool spec_valid;          /* every spec field present has the right type
			     * and range; when false, invalid says why */
	char invalid[160];
	char holder[KUBE_LEASE_MAX_HOLDER + 1];     /* "": nobody holds it */
	int64_t duration_s;                         /* leaseDurationSeconds (0 when absent) */
	int64_t transitions;                        /* leaseTransitions (0 when absent) */
	char acquire_time[KUBE_LEASE_MAX_TIME + 1]; /* as read, or "" */
	char renew_time[KUBE_LEASE_MAX_TIME + 1];   /* as read, or "" */
};

/* Parses the answer to GET .../leases/NAME. The object must be a JSON
 * object with metadata.resourceVersion (1 to KUBE_MAX_RV characters):
 * without it nothing can be written safely, and the answer is refused
 * with -EBADMSG and err saying why. A spec that is absent, null or
 * malformed (holderIdentity not a string or too long, leaseDurationSeconds
 * not an integer in 1..KUBE_LEASE_MAX_DURATION_S, leaseTransitions not an
 * integer >= 0, a time not a string) is not an error: spec_valid is false
 * and invalid says what is wrong; kube_lease_decide() then treats the
 * Lease as held by an unknown holder for this instance's own lease
 * duration. On success *ret holds a new reference (kube_lease_clear() it);
 * on failure *ret is zeroed. */
int kube_lease_parse(const char *data, size_t len, struct kube_lease *ret, char *err,
		     size_t errlen);
/* Drops the object and zeroes l. Accepts NULL. */
void kube_lease_clear(struct kube_lease *l);
/* True when a and b hold the same record (the spec's fields, or both
 * invalid for the same reason): what client-go compares to decide whether
 * the holder is still alive. */
bool kube_lease_same_record(const struct kube_lease *a, const struct kube_lease *b);

struct kube_lease_cfg {
	const char *identity; /* this instance's holderIdentity, not "" */
	unsigned lease_duration_s, renew_deadline_s, retry_period_s;
};

enum kube_lease_action {
	KUBE_LEASE_CREATE,  /* no Lease (404): POST one held by us */
	KUBE_LEASE_TAKE,    /* free or expired: PUT it as ours (rv precondition,
			    * leaseTransitions + 1, acquireTime now) */
	KUBE_LEASE_RENEW,   /* ours: PUT with renewTime now */
	KUBE_LEASE_WAIT,    /* held by another, not expired by our observation */
	KUBE_LEASE_RELEASE, /* (kube_lease_body only) give it up on stop */
	KUBE_LEASE_ACTION_MAX
};

struct kube_lease_decision {
	enum kube_lease_action action;
	uint64_t wait_ns;    /* WAIT: read again after this (the retry period,
			      * or less when the lease expires sooner) */
	uint64_t expires_ns; /* WAIT: the lease expires, by our observation,
			      * this long from now */
	const char *holder;  /* WAIT: who holds it ("an unknown holder" for
			      * an invalid spec); borrowed from the lease */
};

/* Decides what to do with lease as just read (NULL: the API answered 404)
 * at monotonic time now_ns, when this instance has seen its record
 * unchanged since observed_ns (the time of the read that first showed the
 * record as it is). Never fails. */
void kube_lease_decide(const struct kube_lease_cfg *cfg, const struct kube_lease *lease,
		       uint64_t observed_ns, uint64_t now_ns, struct kube_lease_decision *ret);
/* True when this instance, leading, last renewed at last_renew_ns and has
 * not managed to since for renew_deadline_s: it must stop leading now,
 * before the lease (lease_duration_s > renew_deadline_s) can expire for
 * the others. */
bool kube_lease_renew_overdue(const struct kube_lease_cfg *cfg, uint64_t last_renew_ns,
			      uint64_t now_ns);
/* Writes the wall-clock time real_ns (ns since the epoch) as the Lease's
 * MicroTime, RFC 3339 in UTC with microseconds. */
void kube_lease_time(uint64_t real_ns, char out[static KUBE_LEASE_TIME_LEN + 1]);
/* Appends to out the JSON body of the request that action sends (CREATE:
 * a POST; TAKE, RENEW, RELEASE: a PUT of the Lease old as read, its
 * metadata kept, resourceVersion included as the precondition, the spec
 * replaced). The spec: holderIdentity (cfg's identity; "" for RELEASE),
 * leaseDurationSeconds (cfg's; 1 for RELEASE, as client-go's
 * ReleaseOnCancel does), acquireTime (now, or old's when renewing),
 * renewTime (now), leaseTransitions (old's, + 1 for TAKE, 0 for CREATE).
 * now_real_ns is the wall clock. 0, -EINVAL (old missing for a PUT, or
 * WAIT), -ENOMEM or -E2BIG. */
int kube_lease_body(const struct kube_lease_cfg *cfg, enum kube_lease_action action, const char *ns,
		    const char *name, const struct kube_lease *old, uint64_t now_real_ns,
		    struct buf *out);

/* The elector: a thread with a session of its own that runs the core
 * above against the API. */
struct kube_elector;

/* Makes an elector for the Lease ns/name, held as identity (not ""),
 * with client-go's timings (lease_duration_s > renew_deadline_s >
 * retry_period_s > 0, else NULL with errno EINVAL). leading is called
 * from the elector's thread with true when this instance becomes the
 * leader and with false when it stops (a lost lease, a renewal overdue,
 * or kube_elector_free()); it may be NULL. api is borrowed and must
 * outlive the elector. Starts nothing. NULL on failure. */
struct kube_elector *kube_elector_new(struct kube_api *api, const char *ns, const char *name,
				      const char *identity, unsigned lease_duration_s,
				      unsigned renew_deadline_s, unsigned retry_period_s,
				      void (*leading)(bool, void *), void *userdata);
/* Starts the elector's thread and its guard (which cancels a request
 * still in flight when a renewal deadline passes). 0 or a negative
 * errno. */
int kube_elector_start(struct kube_elector *e);
/* True while this instance holds the Lease (from any thread). */
bool kube_elector_leading(const struct kube_elector *e);
/* Stops the thread: when it holds the Lease it releases it (holderIdentity
 * "", leaseDurationSeconds 1) so that another instance takes over at
 * once, waiting for that at most KUBE_ELECTOR_STOP_MS, and calls
 * leading(false); then frees. Accepts NULL and an elector never started. */
#define KUBE_ELECTOR_STOP_MS 3000
void kube_elector_free(struct kube_elector *e);
