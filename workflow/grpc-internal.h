/* grpc-internal — what the worker API's files share (workflow/grpc-*.c):
 * the HTTP/2 and gRPC layer of one connection (grpc-h2.c), which the
 * server (grpc-server.c), the worker API (grpc-api.c), the unit test and
 * the fuzz target drive without knowing nghttp2.
 *
 * Threads: everything here belongs to the one thread that made it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workflow/workflow.h"

/* ---- named limits ---- */
#define WF_GRPC_DEFAULT_LISTEN ":42113"
#define WF_GRPC_DEFAULT_MAX_CONNECTIONS 4096
#define WF_GRPC_DEFAULT_MAX_MESSAGE (1024 * 1024)
#define WF_GRPC_DEFAULT_MAX_STREAMS 16
#define WF_GRPC_DEFAULT_LONG_POLL_S 20
#define WF_GRPC_DEFAULT_IDLE_TIMEOUT_S 300
#define WF_GRPC_MAX_MESSAGE_LIMIT (64u * 1024 * 1024) /* largest max_message accepted */
#define WF_GRPC_MAX_STREAMS_LIMIT 1024                /* largest max_streams accepted */
#define WF_GRPC_MAX_LONG_POLL_S 3600
#define WF_GRPC_MAX_HEADER_BYTES 16384 /* a request's header list, as HTTP/2 counts it
					* (name + value + 32 per field) */
#define WF_GRPC_MAX_OUTPUT (256 * 1024) /* bytes pulled from a session and not yet
					 * written to its socket: past this the
					 * session is not asked for more */
#define WF_GRPC_MESSAGE_MAX 256         /* bytes of a grpc-message we send */

enum wf_grpc_method {
	WF_GRPC_GET_ACTION,
	WF_GRPC_REPORT_ACTION_STATUS,
	WF_GRPC_METHOD_MAX /* an unknown :path */
};

/* "GetAction", "ReportActionStatus", "unknown". */
const char *wf_grpc_method_name(enum wf_grpc_method m);

struct wf_h2_conn;

/* One gRPC call (an HTTP/2 stream). Owned by its connection: valid from
 * the handler's call() until the handler answers it or is told with
 * cancelled(). */
struct wf_h2_call {
	struct wf_h2_conn *conn;
	int32_t id;
	enum wf_grpc_method method;
	const uint8_t *msg; /* the request message (without its prefix), msg_len bytes,
			     * valid until the call is answered or cancelled */
	size_t msg_len;
	uint64_t deadline_ms; /* grpc-timeout as a now_mono_ns()/1e6 time; 0: none */
	uint64_t start_ns;    /* when its headers arrived (now_mono_ns()) */
	void *app;            /* the handler's */
};

/* What a connection asks of its owner. */
struct wf_h2_ops {
	/* A complete request for a known method: the handler answers now or
	 * later with wf_h2_reply() or wf_h2_fail(). */
	void (*call)(void *ud, struct wf_h2_call *call);
	/* The call went away unanswered (the client reset the stream, the
	 * connection closed, its deadline passed): the handler forgets it;
	 * call is freed after this returns. Only for calls handed out. */
	void (*cancelled)(void *ud, struct wf_h2_call *call);
	/* The connection has output to send outside a wf_h2_conn_recv()
	 * (an answer given later): its owner calls wf_h2_conn_pull() soon. */
	void (*want_write)(void *conn_ud);
};

struct wf_h2_limits {
	unsigned max_message;
	unsigned max_streams;
};

/* A server session with the limits lim (copied) and the handler ops
 * (borrowed, with ud for every connection and conn_ud for this one).
 * peer names the client in logs (copied). Queues the server's SETTINGS.
 * NULL when memory runs out. */
struct wf_h2_conn *wf_h2_conn_new(const struct wf_h2_limits *lim, const struct wf_h2_ops *ops,
				  void *ud, void *conn_ud, const char *peer);
/* Cancels its calls (ops->cancelled) and frees. Accepts NULL. */
void wf_h2_conn_free(struct wf_h2_conn *c);

/* Feeds n bytes the client sent. 0, or -EPROTO when the session is over
 * (a protocol error: the GOAWAY is queued; pull it, then close). */
int wf_h2_conn_recv(struct wf_h2_conn *c, const uint8_t *p, size_t n);
/* The next bytes to send: *ret points at them (valid until the next call
 * on c), the return is how many; 0 when there is nothing to send now,
 * -EPROTO on a session error. */
long wf_h2_conn_pull(struct wf_h2_conn *c, const uint8_t **ret);
/* Neither side wants the session any more (GOAWAY sent and received,
 * or a fatal error), and nothing is left to send: close the socket. */
bool wf_h2_conn_done(const struct wf_h2_conn *c);
/* Streams open now. */
size_t wf_h2_conn_streams(const struct wf_h2_conn *c);
/* Queues a GOAWAY (graceful: calls in flight finish). */
void wf_h2_conn_goaway(struct wf_h2_conn *c);
/* Answers DEADLINE_EXCEEDED every call whose deadline_ms is at or before
 * now_ms (after ops->cancelled), and returns the earliest deadline still
 * ahead (0: none). */
uint64_t wf_h2_conn_expire(struct wf_h2_conn *c, uint64_t now_ms);

/* Answers call OK with the message msg (len bytes, copied): HEADERS, DATA
 * and the trailers. The call is the connection's again after this. 0 or
 * -ENOMEM (the call is answered INTERNAL instead). */
int wf_h2_reply(struct wf_h2_call *call, const uint8_t *msg, size_t len);
/* Answers call with code (not GRPC_OK) and message msg (may be NULL), a
 * trailers-only response. */
void wf_h2_fail(struct wf_h2_call *call, int code, const char *msg);

/* Counters of the layer, per reason (metrics and tests). */
enum wf_grpc_refusal {
	WF_REFUSE_CONTENT_TYPE,
	WF_REFUSE_METHOD,       /* not POST */
	WF_REFUSE_PATH,         /* unknown :path: UNIMPLEMENTED */
	WF_REFUSE_FRAMING,      /* truncated, more than one message, compressed */
	WF_REFUSE_TOO_LARGE,    /* over max_message */
	WF_REFUSE_HEADERS,      /* header list over WF_GRPC_MAX_HEADER_BYTES, bad grpc-timeout */
	WF_REFUSE_PROTOBUF,     /* tink_decode() said no: INVALID_ARGUMENT */
	WF_REFUSE_CONNECTIONS,  /* max_connections reached */
	WF_REFUSE_STREAMS,      /* max_streams reached */
	WF_REFUSE_SESSION,      /* HTTP/2 protocol error, the connection closed */
	WF_REFUSE_MAX
};
const char *wf_grpc_refusal_name(enum wf_grpc_refusal r);
/* Counts a refusal (ironbell_grpc_refused_total{reason}). */
void wf_grpc_count_refusal(enum wf_grpc_refusal r);
/* Counts an answered call (ironbell_grpc_calls_total{method,code}). */
void wf_grpc_count_call(enum wf_grpc_method m, int code);

/* ---- the worker API (grpc-api.c) ---- */

struct wf_grpc_api;
struct store;

/* The worker API over the store: the Workflow cache and its handlers.
 * settings borrowed for its life. NULL on failure (message in err). */
struct wf_grpc_api *wf_grpc_api_new(struct store *store, const struct wf_grpc_settings *settings,
				    char *err, size_t errlen);
/* The fds the server's epoll watches (the store subscription and the
 * completion queue); each readable means wf_grpc_api_run(). */
int wf_grpc_api_fds(const struct wf_grpc_api *a, int fds[2]);
/* Does what is due: refreshes the cache, completes writes, wakes and
 * expires long polls. Returns the next time (ms, now_mono_ns()/1e6) it
 * wants to run at, 0 for none. */
uint64_t wf_grpc_api_run(struct wf_grpc_api *a, uint64_t now_ms);
/* The handlers a connection's ops call (struct wf_h2_ops): a complete
 * call, and a call gone. */
void wf_grpc_api_call(struct wf_grpc_api *a, struct wf_h2_call *call);
void wf_grpc_api_cancelled(struct wf_grpc_api *a, struct wf_h2_call *call);
/* When wf_grpc_api_run() wants to run next (a long poll's end), 0 for
 * never; changes when a call is parked. */
uint64_t wf_grpc_api_next(const struct wf_grpc_api *a);
/* Answers every long poll UNAVAILABLE (the server stops). */
void wf_grpc_api_stop(struct wf_grpc_api *a);
/* Long polls waiting now. */
size_t wf_grpc_api_waiting(const struct wf_grpc_api *a);
/* Answers every parked call UNAVAILABLE, waits for the writes in flight
 * and frees. Accepts NULL. */
void wf_grpc_api_free(struct wf_grpc_api *a);
