/* grpc-h2 — gRPC over HTTP/2 for one connection: an nghttp2 server
 * session fed and drained through memory (wf_h2_conn_recv/pull), so the
 * server, the unit test and the fuzz target drive it without a socket.
 *
 * DESIGN: nghttp2 does the HTTP/2 (frames, HPACK, flow control, SETTINGS,
 * PING, the HTTP semantics of RFC 9113 §8: pseudo-headers, `te`,
 * content-length); this file does what gRPC adds (grpc/doc/
 * PROTOCOL-HTTP2.md): a request is a POST to a known :path with
 * content-type application/grpc, its body exactly one length-prefixed
 * message (common/grpc.h) of at most max_message bytes, its deadline in
 * grpc-timeout. A call is handed to its handler only when complete (the
 * client's END_STREAM); the answer is HEADERS, one DATA and trailers, or
 * for an error a trailers-only HEADERS. Nothing depends on the order of
 * the client's headers, on its SETTINGS, PINGs or window updates: each
 * header is looked at by name, the rest is nghttp2's.
 *
 * What is refused and how (each counted by reason and logged once):
 *   wrong content-type      HTTP 415, grpc-status INVALID_ARGUMENT (as grpc-go)
 *   not POST                HTTP 405, grpc-status UNIMPLEMENTED
 *   unknown :path           UNIMPLEMENTED
 *   message over the cap    RESOURCE_EXHAUSTED, at once (the rest is not read)
 *   truncated prefix or message, two messages, a bad flag byte,
 *   a compressed message    INTERNAL (grpc-go's answer to a broken frame);
 *                           UNIMPLEMENTED for a grpc-encoding we lack
 *   malformed grpc-timeout  INTERNAL (as grpc-go)
 *   headers over 16 KiB     RESOURCE_EXHAUSTED
 *   too many streams        RST_STREAM REFUSED_STREAM (the client retries)
 *   an HTTP/2 protocol error GOAWAY, the connection closed
 * An early answer (before the client has ended its side) is followed by
 * RST_STREAM NO_ERROR once it is sent, so the client stops sending
 * (RFC 9113 §8.1). */
#include "config.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/common.h"
#include "common/grpc.h"
#include "common/log.h"
#include "common/metrics.h"
#include "workflow/grpc-internal.h"

#define H2_PATH_LOG 64 /* bytes of an unknown :path kept for the log */

/* A header field of a literal name (nghttp2 copies them when it submits). */
#define NV(n, v, vl) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), NGHTTP2_NV_FLAG_NONE }

struct h2_stream {
	struct wf_h2_call call; /* what the handler sees */
	struct h2_stream *next, *prev;
	size_t header_bytes;
	bool post, ct_ok, has_path, encoding_other;
	bool dispatched, answered, remote_closed, rst_after;
	int refuse_code; /* GRPC_OK: none */
	enum wf_grpc_refusal refuse_reason;
	int http_status;
	char refuse_msg[128];
	char path[H2_PATH_LOG];
	struct buf body; /* prefix and message, at most GRPC_PREFIX_LEN + max_message */
	size_t msg_len;  /* from the prefix, once body holds it */
	uint8_t *resp;
	size_t resp_len, resp_off;
};

struct wf_h2_conn {
	nghttp2_session *s;
	struct wf_h2_limits lim;
	const struct wf_h2_ops *ops;
	void *ud, *conn_ud;
	char peer[64];
	struct h2_stream *streams;
	size_t n_streams;
	bool in_recv, fatal;
};

static const char *const method_names[] = {
	[WF_GRPC_GET_ACTION] = "GetAction",
	[WF_GRPC_REPORT_ACTION_STATUS] = "ReportActionStatus",
	[WF_GRPC_METHOD_MAX] = "unknown",
};

static const char *const refusal_names[] = {
	[WF_REFUSE_CONTENT_TYPE] = "content_type", [WF_REFUSE_METHOD] = "method",
	[WF_REFUSE_PATH] = "path",                 [WF_REFUSE_FRAMING] = "framing",
	[WF_REFUSE_TOO_LARGE] = "too_large",       [WF_REFUSE_HEADERS] = "headers",
	[WF_REFUSE_PROTOBUF] = "protobuf",         [WF_REFUSE_CONNECTIONS] = "connections",
	[WF_REFUSE_STREAMS] = "streams",           [WF_REFUSE_SESSION] = "session",
};

const char *wf_grpc_method_name(enum wf_grpc_method m)
{
	return (unsigned)m < ARRAY_SIZE(method_names) ? method_names[m] : "unknown";
}

const char *wf_grpc_refusal_name(enum wf_grpc_refusal r)
{
	return (unsigned)r < ARRAY_SIZE(refusal_names) ? refusal_names[r] : "unknown";
}

void wf_grpc_count_refusal(enum wf_grpc_refusal r)
{
	char labels[64];
	snprintf(labels, sizeof(labels), "reason=\"%s\"", wf_grpc_refusal_name(r));
	metric_inc(metrics_counter_cached("ironbell_grpc_refused_total",
					  "gRPC calls and connections refused, by reason.", labels),
		   1);
}

void wf_grpc_count_call(enum wf_grpc_method m, int code)
{
	char labels[96];
	snprintf(labels, sizeof(labels), "method=\"%s\",code=\"%s\"", wf_grpc_method_name(m),
		 grpc_code_name(code));
	metric_inc(metrics_counter_cached("ironbell_grpc_calls_total",
					  "gRPC calls answered, by method and status code.", labels),
		   1);
}

/* Printable ASCII of v (n bytes) into out, the rest as '?'. */
static void log_safe(const uint8_t *v, size_t n, char *out, size_t outlen)
{
	size_t i;
	for (i = 0; i < n && i + 1 < outlen; i++)
		out[i] = v[i] >= 0x20 && v[i] < 0x7f ? (char)v[i] : '?';
	out[i] = '\0';
}

static struct h2_stream *stream_of(struct wf_h2_conn *c, int32_t id)
{
	return nghttp2_session_get_stream_user_data(c->s, id);
}

static void stream_free(struct wf_h2_conn *c, struct h2_stream *st)
{
	if (st->prev)
		st->prev->next = st->next;
	else
		c->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	c->n_streams--;
	buf_free(&st->body);
	free(st->resp);
	free(st);
}

static void wake(struct wf_h2_conn *c)
{
	if (!c->in_recv && c->ops->want_write)
		c->ops->want_write(c->conn_ud);
}

/* ---- answers ---- */

static void answered(struct h2_stream *st, int code, const char *msg)
{
	struct wf_h2_conn *c = st->call.conn;
	st->answered = true;
	wf_grpc_count_call(st->call.method, code);
	/* "Nothing for you yet" is GetAction's everyday answer, not a
	 * refusal: debug only. */
	bool polling = st->call.method == WF_GRPC_GET_ACTION &&
		       (code == GRPC_NOT_FOUND || code == GRPC_FAILED_PRECONDITION);
	if (code != GRPC_OK && (!polling || log_enabled(LOG_LVL_DEBUG)))
		log_write(polling ? LOG_LVL_DEBUG : LOG_LVL_INFO, "grpc", 0, "%s: %s refused: %s%s%s",
			  c->peer,
			  st->call.method == WF_GRPC_METHOD_MAX ? st->path :
								  wf_grpc_method_name(st->call.method),
			  grpc_code_name(code), msg && *msg ? ": " : "", msg ? msg : "");
}

static void fail_status(struct h2_stream *st, int http_status, int code, const char *msg)
{
	struct wf_h2_conn *c = st->call.conn;
	char status[4], gcode[12], gmsg[WF_GRPC_MESSAGE_MAX];
	if (st->answered)
		return;
	snprintf(status, sizeof(status), "%d", http_status);
	snprintf(gcode, sizeof(gcode), "%d", code);
	size_t mlen = grpc_message_encode(msg ? msg : "", gmsg, sizeof(gmsg));
	nghttp2_nv nva[] = {
		NV(":status", status, strlen(status)),
		NV("content-type", "application/grpc", sizeof("application/grpc") - 1),
		NV("grpc-status", gcode, strlen(gcode)),
		NV("grpc-message", gmsg, mlen),
	};
	size_t n = mlen ? 4 : 3;
	answered(st, code, msg);
	/* An answer before the client has ended its side: reset the stream
	 * once it is out, so that the client stops sending. */
	st->rst_after = !st->remote_closed;
	if (nghttp2_submit_response(c->s, st->call.id, nva, n, NULL) != 0)
		nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->call.id,
					  NGHTTP2_INTERNAL_ERROR);
	wake(c);
}

void wf_h2_fail(struct wf_h2_call *call, int code, const char *msg)
{
	fail_status((struct h2_stream *)call, 200, code, msg);
}

static ssize_t resp_read(nghttp2_session *s, int32_t id, uint8_t *out, size_t len,
			 uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2_stream *st = src->ptr;
	size_t n = st->resp_len - st->resp_off;
	if (n > len)
		n = len;
	memcpy(out, st->resp + st->resp_off, n);
	st->resp_off += n;
	if (st->resp_off == st->resp_len) {
		nghttp2_nv tr[] = { NV("grpc-status", "0", 1) };
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (nghttp2_submit_trailer(s, id, tr, ARRAY_SIZE(tr)) == 0)
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	}
	return (ssize_t)n;
}

int wf_h2_reply(struct wf_h2_call *call, const uint8_t *msg, size_t len)
{
	struct h2_stream *st = (struct h2_stream *)call;
	struct wf_h2_conn *c = call->conn;
	nghttp2_nv nva[] = {
		NV(":status", "200", 3),
		NV("content-type", "application/grpc", sizeof("application/grpc") - 1),
	};
	nghttp2_data_provider dp = { .source.ptr = st, .read_callback = resp_read };
	if (st->answered)
		return 0;
	if (len > UINT32_MAX || !(st->resp = malloc(GRPC_PREFIX_LEN + len))) {
		wf_h2_fail(call, GRPC_INTERNAL, "out of memory");
		return -ENOMEM;
	}
	grpc_prefix_write(st->resp, (uint32_t)len);
	if (len)
		memcpy(st->resp + GRPC_PREFIX_LEN, msg, len);
	st->resp_len = GRPC_PREFIX_LEN + len;
	answered(st, GRPC_OK, NULL);
	if (nghttp2_submit_response(c->s, call->id, nva, ARRAY_SIZE(nva), &dp) != 0)
		nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, call->id,
					  NGHTTP2_INTERNAL_ERROR);
	wake(c);
	return 0;
}

/* ---- requests ---- */

static void refuse(struct h2_stream *st, enum wf_grpc_refusal why, int http_status, int code,
		   const char *msg)
{
	if (st->refuse_code != GRPC_OK || st->answered)
		return;
	st->refuse_code = code;
	st->refuse_reason = why;
	st->http_status = http_status;
	snprintf(st->refuse_msg, sizeof(st->refuse_msg), "%s", msg);
}

/* Sends the refusal decided, if any; true when there was one. */
static bool refuse_now(struct h2_stream *st)
{
	if (st->refuse_code == GRPC_OK)
		return false;
	if (!st->answered) {
		wf_grpc_count_refusal(st->refuse_reason);
		fail_status(st, st->http_status, st->refuse_code, st->refuse_msg);
	}
	return true;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct wf_h2_conn *c = ud;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (c->n_streams >= c->lim.max_streams) {
		/* nghttp2 refuses past our SETTINGS once acknowledged; this
		 * covers the streams a client opens before it has read them. */
		wf_grpc_count_refusal(WF_REFUSE_STREAMS);
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id,
					  NGHTTP2_REFUSED_STREAM);
		return 0;
	}
	struct h2_stream *st = calloc(1, sizeof(*st));
	if (!st)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	st->call.conn = c;
	st->call.id = f->hd.stream_id;
	st->call.method = WF_GRPC_METHOD_MAX;
	st->call.start_ns = now_mono_ns();
	buf_init(&st->body, GRPC_PREFIX_LEN + (size_t)c->lim.max_message);
	st->next = c->streams;
	if (c->streams)
		c->streams->prev = st;
	c->streams = st;
	c->n_streams++;
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
	return 0;
}

static bool eq(const uint8_t *v, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(v, lit, n) == 0;
}

static void request_header(struct h2_stream *st, const uint8_t *name, size_t namelen,
			   const uint8_t *value, size_t valuelen)
{
	if (eq(name, namelen, ":method")) {
		st->post = eq(value, valuelen, "POST");
	} else if (eq(name, namelen, ":path")) {
		st->has_path = true;
		log_safe(value, valuelen, st->path, sizeof(st->path));
		if (eq(value, valuelen, GRPC_PATH_GET_ACTION))
			st->call.method = WF_GRPC_GET_ACTION;
		else if (eq(value, valuelen, GRPC_PATH_REPORT_ACTION_STATUS))
			st->call.method = WF_GRPC_REPORT_ACTION_STATUS;
	} else if (eq(name, namelen, "content-type")) {
		st->ct_ok = grpc_content_type_ok((const char *)value, valuelen);
	} else if (eq(name, namelen, "grpc-timeout")) {
		uint64_t ms;
		if (grpc_timeout_parse((const char *)value, valuelen, &ms) < 0)
			refuse(st, WF_REFUSE_HEADERS, 200, GRPC_INTERNAL, "malformed grpc-timeout");
		else
			st->call.deadline_ms = now_mono_ns() / 1000000u + ms;
	} else if (eq(name, namelen, "grpc-encoding")) {
		st->encoding_other = !eq(value, valuelen, "identity");
	}
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
	struct h2_stream *st = stream_of(ud, f->hd.stream_id);
	if (!st || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	/* RFC 9113 §6.5.2's measure: name, value and 32 bytes per field. */
	st->header_bytes += namelen + valuelen + 32;
	if (st->header_bytes > WF_GRPC_MAX_HEADER_BYTES) {
		refuse(st, WF_REFUSE_HEADERS, 200, GRPC_RESOURCE_EXHAUSTED, "header list too large");
		return 0;
	}
	if (f->headers.cat == NGHTTP2_HCAT_REQUEST)
		request_header(st, name, namelen, value, valuelen);
	return 0;
}

/* The request's headers are all in: decides what can be decided now. */
static void headers_done(struct h2_stream *st)
{
	if (!st->post)
		refuse(st, WF_REFUSE_METHOD, 405, GRPC_UNIMPLEMENTED, "only POST is served");
	else if (!st->ct_ok)
		refuse(st, WF_REFUSE_CONTENT_TYPE, 415, GRPC_INVALID_ARGUMENT,
		       "content-type must be application/grpc");
	else if (st->call.method == WF_GRPC_METHOD_MAX)
		refuse(st, WF_REFUSE_PATH, 200, GRPC_UNIMPLEMENTED, "unknown method");
	refuse_now(st);
}

/* The client has ended its side: one whole message, or a refusal. */
static void request_done(struct wf_h2_conn *c, struct h2_stream *st)
{
	bool compressed = false;
	size_t len = 0;
	if (st->answered || refuse_now(st))
		return;
	int e = grpc_prefix_parse((const uint8_t *)st->body.data, st->body.len,
				  c->lim.max_message, &compressed, &len);
	if (e == -EAGAIN)
		refuse(st, WF_REFUSE_FRAMING, 200, GRPC_INTERNAL,
		       st->body.len ? "truncated message prefix" : "no request message");
	else if (e == 0 && st->body.len < GRPC_PREFIX_LEN + len)
		refuse(st, WF_REFUSE_FRAMING, 200, GRPC_INTERNAL, "truncated message");
	else if (e == 0 && compressed)
		refuse(st, WF_REFUSE_FRAMING, 200,
		       st->encoding_other ? GRPC_UNIMPLEMENTED : GRPC_INTERNAL,
		       "compressed messages are not supported");
	if (e < 0 && e != -EAGAIN)
		refuse(st, WF_REFUSE_FRAMING, 200, GRPC_INTERNAL, "malformed message prefix");
	if (refuse_now(st))
		return;
	st->dispatched = true;
	st->call.msg = (const uint8_t *)st->body.data + GRPC_PREFIX_LEN;
	st->call.msg_len = len;
	c->ops->call(c->ud, &st->call);
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *p, size_t n,
		   void *ud)
{
	struct wf_h2_conn *c = ud;
	struct h2_stream *st = stream_of(c, id);
	bool compressed;
	size_t len;
	if (!st || st->answered || st->refuse_code != GRPC_OK)
		return 0;
	if (st->body.len < GRPC_PREFIX_LEN) {
		size_t k = GRPC_PREFIX_LEN - st->body.len < n ? GRPC_PREFIX_LEN - st->body.len : n;
		if (buf_append(&st->body, p, k) < 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		p += k;
		n -= k;
	}
	int e = grpc_prefix_parse((const uint8_t *)st->body.data, st->body.len, c->lim.max_message,
				  &compressed, &len);
	if (e == -EAGAIN)
		return 0;
	if (e == -EMSGSIZE)
		refuse(st, WF_REFUSE_TOO_LARGE, 200, GRPC_RESOURCE_EXHAUSTED,
		       "message larger than max_message");
	else if (e < 0)
		refuse(st, WF_REFUSE_FRAMING, 200, GRPC_INTERNAL, "malformed message prefix");
	else if (st->body.len + n > GRPC_PREFIX_LEN + len)
		refuse(st, WF_REFUSE_FRAMING, 200, GRPC_INTERNAL,
		       "more than one request message");
	if (refuse_now(st))
		return 0;
	if (n && buf_append(&st->body, p, n) < 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct wf_h2_conn *c = ud;
	struct h2_stream *st;
	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	if (!(st = stream_of(c, f->hd.stream_id)))
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
		headers_done(st);
	if (f->hd.flags & NGHTTP2_FLAG_END_STREAM) {
		st->remote_closed = true;
		request_done(c, st);
	}
	return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct h2_stream *st;
	if (f->hd.type != NGHTTP2_HEADERS || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = stream_of(ud, f->hd.stream_id);
	if (st && st->rst_after && !st->remote_closed)
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_NO_ERROR);
	return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t error, void *ud)
{
	struct wf_h2_conn *c = ud;
	struct h2_stream *st = stream_of(c, id);
	if (!st)
		return 0;
	if (st->dispatched && !st->answered)
		c->ops->cancelled(c->ud, &st->call);
	nghttp2_session_set_stream_user_data(s, id, NULL);
	stream_free(c, st);
	return 0;
}

/* ---- the connection ---- */

struct wf_h2_conn *wf_h2_conn_new(const struct wf_h2_limits *lim, const struct wf_h2_ops *ops,
				  void *ud, void *conn_ud, const char *peer)
{
	struct wf_h2_conn *c = calloc(1, sizeof(*c));
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_option *opt = NULL;
	if (!c)
		return NULL;
	c->lim = *lim;
	c->ops = ops;
	c->ud = ud;
	c->conn_ud = conn_ud;
	snprintf(c->peer, sizeof(c->peer), "%s", peer ? peer : "-");
	if (nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		goto fail;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	/* The peer's view of concurrency before our SETTINGS arrive. */
	nghttp2_option_set_peer_max_concurrent_streams(opt, 100);
	if (nghttp2_session_server_new2(&c->s, cb, c, opt) != 0)
		goto fail;
	nghttp2_settings_entry set[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, lim->max_streams },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, WF_GRPC_MAX_HEADER_BYTES },
	};
	if (nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, set, ARRAY_SIZE(set)) != 0)
		goto fail;
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	return c;
fail:
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	if (c->s)
		nghttp2_session_del(c->s);
	free(c);
	return NULL;
}

void wf_h2_conn_free(struct wf_h2_conn *c)
{
	if (!c)
		return;
	while (c->streams) {
		struct h2_stream *st = c->streams;
		if (st->dispatched && !st->answered)
			c->ops->cancelled(c->ud, &st->call);
		nghttp2_session_set_stream_user_data(c->s, st->call.id, NULL);
		stream_free(c, st);
	}
	nghttp2_session_del(c->s);
	free(c);
}

int wf_h2_conn_recv(struct wf_h2_conn *c, const uint8_t *p, size_t n)
{
	if (c->fatal)
		return -EPROTO;
	c->in_recv = true;
	ssize_t rv = nghttp2_session_mem_recv(c->s, p, n);
	c->in_recv = false;
	if (rv < 0) {
		wf_grpc_count_refusal(WF_REFUSE_SESSION);
		log_info("grpc", "%s: HTTP/2 session ended: %s", c->peer,
			 nghttp2_strerror((int)rv));
		c->fatal = true;
		nghttp2_session_terminate_session(c->s, NGHTTP2_PROTOCOL_ERROR);
		return -EPROTO;
	}
	return 0;
}

long wf_h2_conn_pull(struct wf_h2_conn *c, const uint8_t **ret)
{
	ssize_t n = nghttp2_session_mem_send(c->s, ret);
	if (n < 0) {
		c->fatal = true;
		return -EPROTO;
	}
	return (long)n;
}

bool wf_h2_conn_done(const struct wf_h2_conn *c)
{
	if (nghttp2_session_want_write(c->s))
		return false;
	return c->fatal || !nghttp2_session_want_read(c->s);
}

size_t wf_h2_conn_streams(const struct wf_h2_conn *c)
{
	return c->n_streams;
}

void wf_h2_conn_goaway(struct wf_h2_conn *c)
{
	nghttp2_submit_goaway(c->s, NGHTTP2_FLAG_NONE,
			      nghttp2_session_get_last_proc_stream_id(c->s), NGHTTP2_NO_ERROR,
			      NULL, 0);
	wake(c);
}

uint64_t wf_h2_conn_expire(struct wf_h2_conn *c, uint64_t now_ms)
{
	uint64_t next = 0;
	for (struct h2_stream *st = c->streams; st; st = st->next) {
		uint64_t d = st->call.deadline_ms;
		if (!d || st->answered)
			continue;
		if (d > now_ms) {
			next = next && next < d ? next : d;
			continue;
		}
		if (st->dispatched)
			c->ops->cancelled(c->ud, &st->call);
		wf_h2_fail(&st->call, GRPC_DEADLINE_EXCEEDED, "deadline exceeded");
	}
	return next;
}
