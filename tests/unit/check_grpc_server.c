/* check_grpc_server — unit tests for the worker API's HTTP/2 and gRPC
 * layer (workflow/grpc-h2.c), driven in memory by an nghttp2 client
 * session: a good call (HEADERS, DATA, trailers), and each malformed
 * request with the grpc-status it gets (unknown path, wrong
 * content-type, not POST, truncated prefix, truncated message, two
 * messages, oversized, malformed grpc-timeout, header list too large),
 * each a trailers-only answer; headers in an unusual order; a deadline
 * passing and a client's RST_STREAM, each telling the handler; a broken
 * connection preface. Then the whole server (wf_grpc_*) on a socket over
 * a store in a temporary directory: a message that is not protobuf and
 * one with an unknown field INVALID_ARGUMENT, GetAction handing out the
 * Workflow's first action, an empty GetAction answered NOT_FOUND before
 * the client's deadline, a report from another agent PERMISSION_DENIED,
 * an idle connection closed.
 * tests/integration/test_grpc_daemon.sh runs real gRPC clients. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/common.h"
#include "common/grpc.h"
#include "common/tink.pb-c.h"
#include "store/store.h"
#include "workflow/grpc-internal.h"
#include "tests/unit/unit.h"

#define MAX_MESSAGE 1024
#define MAX_RESP 8
#define PUMP_ROUNDS 200

struct resp {
	int32_t id;
	int http_status;
	int grpc_status; /* -1: none */
	char grpc_message[256];
	uint8_t data[4096];
	size_t data_len;
	int header_frames;
	bool closed;
	uint32_t rst;
};

static struct resp resps[MAX_RESP];
static size_t n_resps;
static struct wf_h2_call *held; /* a call the handler keeps */
static int cancelled;

static struct resp *resp_of(int32_t id)
{
	for (size_t i = 0; i < n_resps; i++)
		if (resps[i].id == id)
			return &resps[i];
	ck_assert_uint_lt(n_resps, MAX_RESP);
	resps[n_resps] = (struct resp){ .id = id, .grpc_status = -1 };
	return &resps[n_resps++];
}

/* ---- the handler: "ok!" answers "pong", "hold" is kept, the rest
 * INVALID_ARGUMENT ---- */

static void h_call(void *ud, struct wf_h2_call *call)
{
	if (call->msg_len == 3 && memcmp(call->msg, "ok!", 3) == 0)
		wf_h2_reply(call, (const uint8_t *)"pong", 4);
	else if (call->msg_len == 4 && memcmp(call->msg, "hold", 4) == 0)
		held = call;
	else
		wf_h2_fail(call, GRPC_INVALID_ARGUMENT, "bad message");
}

static void h_cancelled(void *ud, struct wf_h2_call *call)
{
	ck_assert_ptr_eq(call, held);
	held = NULL;
	cancelled++;
}

static const struct wf_h2_ops ops = { .call = h_call, .cancelled = h_cancelled };

/* ---- the client ---- */

static int c_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
		    const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	struct resp *r = resp_of(f->hd.stream_id);
	char v[256];
	snprintf(v, sizeof(v), "%.*s", (int)vl, (const char *)value);
	if (nl == 7 && memcmp(name, ":status", 7) == 0)
		r->http_status = (int)strtol(v, NULL, 10);
	else if (nl == 11 && memcmp(name, "grpc-status", 11) == 0)
		r->grpc_status = (int)strtol(v, NULL, 10);
	else if (nl == 12 && memcmp(name, "grpc-message", 12) == 0)
		grpc_message_decode(v, strlen(v), r->grpc_message, sizeof(r->grpc_message));
	return 0;
}

static int c_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	if (f->hd.type == NGHTTP2_HEADERS)
		resp_of(f->hd.stream_id)->header_frames++;
	return 0;
}

static int c_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *p, size_t n,
		  void *ud)
{
	struct resp *r = resp_of(id);
	ck_assert_uint_le(r->data_len + n, sizeof(r->data));
	memcpy(r->data + r->data_len, p, n);
	r->data_len += n;
	return 0;
}

static int c_close(nghttp2_session *s, int32_t id, uint32_t error, void *ud)
{
	struct resp *r = resp_of(id);
	r->closed = true;
	r->rst = error;
	return 0;
}

static nghttp2_session *cli;
static struct wf_h2_conn *srv;

static void setup(void)
{
	nghttp2_session_callbacks *cb;
	struct wf_h2_limits lim = { .max_message = MAX_MESSAGE, .max_streams = 4 };
	n_resps = 0;
	held = NULL;
	cancelled = 0;
	ck_assert_int_eq(nghttp2_session_callbacks_new(&cb), 0);
	nghttp2_session_callbacks_set_on_header_callback(cb, c_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, c_frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, c_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, c_close);
	ck_assert_int_eq(nghttp2_session_client_new(&cli, cb, NULL), 0);
	nghttp2_session_callbacks_del(cb);
	ck_assert_int_eq(nghttp2_submit_settings(cli, NGHTTP2_FLAG_NONE, NULL, 0), 0);
	srv = wf_h2_conn_new(&lim, &ops, NULL, NULL, "test");
	ck_assert_ptr_nonnull(srv);
}

static void teardown(void)
{
	wf_h2_conn_free(srv);
	nghttp2_session_del(cli);
}

/* Moves bytes both ways until neither side has anything to say. */
static void pump(void)
{
	for (int i = 0; i < PUMP_ROUNDS; i++) {
		const uint8_t *p;
		ssize_t n = nghttp2_session_mem_send(cli, &p);
		ck_assert_int_ge(n, 0);
		if (n > 0)
			ck_assert_int_eq(wf_h2_conn_recv(srv, p, (size_t)n), 0);
		long m = wf_h2_conn_pull(srv, &p);
		ck_assert_int_ge(m, 0);
		if (m > 0)
			ck_assert_int_eq(nghttp2_session_mem_recv(cli, p, (size_t)m), m);
		if (n == 0 && m == 0)
			return;
	}
	ck_abort_msg("the sessions never went quiet");
}

struct body {
	const uint8_t *p;
	size_t len, off;
};

static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *out, size_t len,
			 uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct body *b = src->ptr;
	size_t n = b->len - b->off < len ? b->len - b->off : len;
	memcpy(out, b->p + b->off, n);
	b->off += n;
	if (b->off == b->len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

#define NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE }

/* Sends a request to path with content type ct, extra headers (name,
 * value pairs, NULL-ended) and body; returns its stream. */
static int32_t request(const char *method, const char *path, const char *ct,
		       const char *const *extra, struct body *b)
{
	nghttp2_nv nva[16] = {
		NV(":method", method), NV(":scheme", "http"), NV(":path", path),
		NV(":authority", "localhost"),
	};
	size_t n = 4;
	/* te and content-type after the others, the grpc-* before them:
	 * the order a client picks must not matter */
	for (size_t i = 0; extra && extra[i]; i += 2)
		nva[n++] = (nghttp2_nv)NV(extra[i], extra[i + 1]);
	if (ct)
		nva[n++] = (nghttp2_nv)NV("content-type", ct);
	nva[n++] = (nghttp2_nv)NV("te", "trailers");
	nghttp2_data_provider dp = { .source.ptr = b, .read_callback = body_read };
	int32_t id = nghttp2_submit_request(cli, NULL, nva, n, b ? &dp : NULL, NULL);
	ck_assert_int_gt(id, 0);
	pump();
	return id;
}

/* A message with its prefix. */
static size_t framed(const char *msg, uint8_t *out)
{
	size_t n = strlen(msg);
	grpc_prefix_write(out, (uint32_t)n);
	memcpy(out + GRPC_PREFIX_LEN, msg, n);
	return GRPC_PREFIX_LEN + n;
}

static void assert_trailers_only(int32_t id, int http, int code)
{
	struct resp *r = resp_of(id);
	ck_assert_msg(r->grpc_status == code, "grpc-status %d, want %d (%s)", r->grpc_status, code,
		      r->grpc_message);
	ck_assert_int_eq(r->http_status, http);
	ck_assert_int_eq(r->header_frames, 1);
	ck_assert_uint_eq(r->data_len, 0);
	ck_assert(r->closed);
}

START_TEST(test_good_call)
{
	uint8_t m[64];
	struct body b = { m, framed("ok!", m), 0 };
	const char *extra[] = { "grpc-timeout", "5S", "user-agent", "test", NULL };
	int32_t id = request("POST", GRPC_PATH_GET_ACTION, "application/grpc+proto", extra, &b);
	struct resp *r = resp_of(id);
	ck_assert_int_eq(r->http_status, 200);
	ck_assert_int_eq(r->grpc_status, 0);
	ck_assert_int_eq(r->header_frames, 2); /* headers, trailers */
	ck_assert_uint_eq(r->data_len, GRPC_PREFIX_LEN + 4);
	ck_assert_int_eq(memcmp(r->data + GRPC_PREFIX_LEN, "pong", 4), 0);
	ck_assert_int_eq(r->data[0], 0);
	ck_assert(r->closed);
	ck_assert_uint_eq(r->rst, 0);
	ck_assert_uint_eq(wf_h2_conn_streams(srv), 0);
}
END_TEST

START_TEST(test_handler_error)
{
	uint8_t m[64];
	struct body b = { m, framed("nope", m), 0 };
	int32_t id = request("POST", GRPC_PATH_REPORT_ACTION_STATUS, "application/grpc", NULL, &b);
	assert_trailers_only(id, 200, GRPC_INVALID_ARGUMENT);
	ck_assert_str_eq(resp_of(id)->grpc_message, "bad message");
}
END_TEST

/* Each malformed request and the grpc-status it gets. */
static const struct {
	const char *name, *method, *path, *ct, *timeout;
	const char *body; /* "" with body_len: raw bytes */
	size_t body_len;
	int http, code;
} bad[] = {
	{ "unknown path", "POST", "/proto.WorkflowService/Nope", "application/grpc", NULL,
	  "\0\0\0\0\3ok!", 8, 200, GRPC_UNIMPLEMENTED },
	{ "other service", "POST", "/grpc.health.v1.Health/Check", "application/grpc", NULL,
	  "\0\0\0\0\0", 5, 200, GRPC_UNIMPLEMENTED },
	{ "wrong content-type", "POST", GRPC_PATH_GET_ACTION, "application/json", NULL,
	  "\0\0\0\0\3ok!", 8, 415, GRPC_INVALID_ARGUMENT },
	{ "no content-type", "POST", GRPC_PATH_GET_ACTION, NULL, NULL, "\0\0\0\0\3ok!", 8, 415,
	  GRPC_INVALID_ARGUMENT },
	{ "GET", "GET", GRPC_PATH_GET_ACTION, "application/grpc", NULL, NULL, 0, 405,
	  GRPC_UNIMPLEMENTED },
	{ "no body", "POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL, NULL, 0, 200,
	  GRPC_INTERNAL },
	{ "truncated prefix", "POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL, "\0\0\0",
	  3, 200, GRPC_INTERNAL },
	{ "truncated message", "POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL,
	  "\0\0\0\0\12ok!", 8, 200, GRPC_INTERNAL },
	{ "two messages", "POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL,
	  "\0\0\0\0\3ok!\0\0\0\0\3ok!", 16, 200, GRPC_INTERNAL },
	{ "bad flag byte", "POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL,
	  "\2\0\0\0\3ok!", 8, 200, GRPC_INTERNAL },
	{ "compressed", "POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL,
	  "\1\0\0\0\3ok!", 8, 200, GRPC_INTERNAL },
	{ "oversized", "POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL,
	  "\0\0\0\4\1xxxx", 10, 200, GRPC_RESOURCE_EXHAUSTED }, /* 1025 > MAX_MESSAGE */
	{ "malformed grpc-timeout", "POST", GRPC_PATH_GET_ACTION, "application/grpc", "5 seconds",
	  "\0\0\0\0\3ok!", 8, 200, GRPC_INTERNAL },
};

START_TEST(test_malformed)
{
	struct body b = { (const uint8_t *)bad[_i].body, bad[_i].body_len, 0 };
	const char *extra[] = { "grpc-timeout", bad[_i].timeout, NULL };
	int32_t id = request(bad[_i].method, bad[_i].path, bad[_i].ct,
			     bad[_i].timeout ? extra : NULL, bad[_i].body ? &b : NULL);
	struct resp *r = resp_of(id);
	ck_assert_msg(r->grpc_status == bad[_i].code && r->http_status == bad[_i].http,
		      "%s: HTTP %d grpc-status %d (%s), want %d %d", bad[_i].name, r->http_status,
		      r->grpc_status, r->grpc_message, bad[_i].http, bad[_i].code);
	assert_trailers_only(id, bad[_i].http, bad[_i].code);
	ck_assert_ptr_null(held);
	/* the connection goes on: a good call after it */
	uint8_t m[64];
	struct body g = { m, framed("ok!", m), 0 };
	id = request("POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL, &g);
	ck_assert_int_eq(resp_of(id)->grpc_status, 0);
}
END_TEST

START_TEST(test_headers_too_large)
{
	static char big[WF_GRPC_MAX_HEADER_BYTES];
	memset(big, 'a', sizeof(big) - 1);
	uint8_t m[64];
	struct body b = { m, framed("ok!", m), 0 };
	const char *extra[] = { "x-big", big, NULL };
	int32_t id = request("POST", GRPC_PATH_GET_ACTION, "application/grpc", extra, &b);
	assert_trailers_only(id, 200, GRPC_RESOURCE_EXHAUSTED);
}
END_TEST

START_TEST(test_deadline)
{
	uint8_t m[64];
	struct body b = { m, framed("hold", m), 0 };
	const char *extra[] = { "grpc-timeout", "100m", NULL };
	int32_t id = request("POST", GRPC_PATH_GET_ACTION, "application/grpc", extra, &b);
	ck_assert_ptr_nonnull(held);
	ck_assert_uint_ne(held->deadline_ms, 0);
	uint64_t now = now_mono_ns() / 1000000u;
	/* not yet: the deadline is said back */
	ck_assert_uint_eq(wf_h2_conn_expire(srv, now), held->deadline_ms);
	ck_assert_uint_eq(wf_h2_conn_expire(srv, now + 60000), 0);
	pump();
	ck_assert_int_eq(cancelled, 1);
	ck_assert_ptr_null(held);
	assert_trailers_only(id, 200, GRPC_DEADLINE_EXCEEDED);
}
END_TEST

START_TEST(test_client_reset)
{
	uint8_t m[64];
	struct body b = { m, framed("hold", m), 0 };
	int32_t id = request("POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL, &b);
	ck_assert_ptr_nonnull(held);
	ck_assert_uint_eq(wf_h2_conn_streams(srv), 1);
	ck_assert_int_eq(nghttp2_submit_rst_stream(cli, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL), 0);
	pump();
	ck_assert_int_eq(cancelled, 1);
	ck_assert_ptr_null(held);
	ck_assert_uint_eq(wf_h2_conn_streams(srv), 0);
}
END_TEST

START_TEST(test_held_then_freed)
{
	uint8_t m[64];
	struct body b = { m, framed("hold", m), 0 };
	request("POST", GRPC_PATH_GET_ACTION, "application/grpc", NULL, &b);
	ck_assert_ptr_nonnull(held);
	/* the connection closing tells the handler */
	wf_h2_conn_free(srv);
	srv = NULL;
	ck_assert_int_eq(cancelled, 1);
}
END_TEST

START_TEST(test_bad_preface)
{
	static const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct wf_h2_limits lim = { .max_message = MAX_MESSAGE, .max_streams = 4 };
	struct wf_h2_conn *c = wf_h2_conn_new(&lim, &ops, NULL, NULL, "test");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(wf_h2_conn_recv(c, (const uint8_t *)junk, sizeof(junk) - 1), -EPROTO);
	const uint8_t *p;
	for (int i = 0; i < 10 && wf_h2_conn_pull(c, &p) > 0; i++)
		;
	ck_assert(wf_h2_conn_done(c));
	wf_h2_conn_free(c);
}
END_TEST

/* ---- the whole server on a socket ---- */

#define WAIT_MS 10000 /* most time a call may take here */

static char dir[256];
static struct store *st;
static struct wf_grpc *g;
static int sock = -1;

static const char wf_json[] =
	"{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Workflow\","
	"\"metadata\":{\"name\":\"wf1\",\"namespace\":\"default\"},"
	"\"spec\":{\"templateRef\":\"t\",\"hardwareRef\":\"hw\"},"
	"\"status\":{\"state\":\"PENDING\",\"agentID\":\"ag1\",\"templateRendering\":\"successful\","
	"\"globalTimeout\":600,\"tasks\":[{\"id\":\"T1\",\"name\":\"os\",\"agentID\":\"ag1\","
	"\"actions\":[{\"id\":\"A1\",\"name\":\"disk\",\"image\":\"img1\",\"timeout\":60,"
	"\"state\":\"PENDING\"}]}]}}";

static void server_setup(void)
{
	char err[256] = "", db[512];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/check_grpc_server.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/ironbell.db", dir);
	ck_assert_msg(store_open(db, NULL, &st, err, sizeof(err)) == 0, "%s", err);
	json_t *wf = json_loads(wf_json, 0, NULL);
	struct store_op op = { .type = STORE_OP_CREATE, .kind = STORE_KIND_WORKFLOW, .body = wf };
	ck_assert_msg(store_write1(st, &op) == 0, "%s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(wf);

	/* port 0: the kernel picks one, wf_grpc_port() says which */
	struct wf_grpc_settings set = { .listen = "127.0.0.1:0", .long_poll_s = 5,
					.idle_timeout_s = 2 };
	ck_assert_msg(wf_grpc_new(st, &set, &g, err, sizeof(err)) == 0, "%s", err);
	unsigned port = wf_grpc_port(g);
	ck_assert_uint_ne(port, 0);
	ck_assert_msg(wf_grpc_start(g, err, sizeof(err)) == 0, "%s", err);

	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	sock = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(sock, 0);
	ck_assert_int_eq(connect(sock, (struct sockaddr *)&a, sizeof(a)), 0);
	setup();
}

static void server_teardown(void)
{
	teardown();
	close(sock);
	wf_grpc_free(g);
	store_close(st);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char p[1024];
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Sends a call on the socket and waits until its stream closes. */
static struct resp *call_sock(const char *path, const uint8_t *msg, size_t len,
			      const char *timeout)
{
	static uint8_t m[4096];
	static struct body b;
	nghttp2_nv nva[] = {
		NV(":method", "POST"), NV(":scheme", "http"), NV(":path", path),
		NV(":authority", "localhost"), NV("content-type", "application/grpc"),
		NV("te", "trailers"), NV("grpc-timeout", timeout ? timeout : "10S"),
	};
	ck_assert_uint_le(len + GRPC_PREFIX_LEN, sizeof(m));
	grpc_prefix_write(m, (uint32_t)len);
	memcpy(m + GRPC_PREFIX_LEN, msg, len);
	b = (struct body){ m, len + GRPC_PREFIX_LEN, 0 };
	nghttp2_data_provider dp = { .source.ptr = &b, .read_callback = body_read };
	int32_t id = nghttp2_submit_request(cli, NULL, nva, ARRAY_SIZE(nva), &dp, NULL);
	ck_assert_int_gt(id, 0);
	uint64_t t0 = now_mono_ns();
	while (!resp_of(id)->closed) {
		const uint8_t *p;
		ssize_t n;
		while ((n = nghttp2_session_mem_send(cli, &p)) > 0)
			ck_assert_int_eq(send(sock, p, (size_t)n, MSG_NOSIGNAL), n);
		ck_assert_int_ge(n, 0);
		ck_assert_msg(now_mono_ns() - t0 < (uint64_t)WAIT_MS * 1000000u, "no answer");
		struct pollfd pf = { .fd = sock, .events = POLLIN };
		if (poll(&pf, 1, 100) <= 0)
			continue;
		uint8_t in[16384];
		ssize_t r = recv(sock, in, sizeof(in), 0);
		ck_assert_int_gt(r, 0);
		ck_assert_int_eq(nghttp2_session_mem_recv(cli, in, (size_t)r), r);
	}
	return resp_of(id);
}

static const uint8_t *packed(const ProtobufCMessage *m, size_t *len)
{
	static uint8_t out[4096];
	*len = protobuf_c_message_get_packed_size(m);
	ck_assert_uint_le(*len, sizeof(out));
	protobuf_c_message_pack(m, out);
	return out;
}

START_TEST(test_server_malformed_protobuf)
{
	/* field 1 says 5 bytes, 3 follow */
	struct resp *r = call_sock(GRPC_PATH_GET_ACTION, (const uint8_t *)"\x0a\x05" "abc", 5, NULL);
	ck_assert_int_eq(r->grpc_status, GRPC_INVALID_ARGUMENT);
	ck_assert_int_eq(r->header_frames, 1);
	/* field 21, unknown to proto.ActionRequest */
	r = call_sock(GRPC_PATH_GET_ACTION, (const uint8_t *)"\xa8\x01\x01", 3, NULL);
	ck_assert_int_eq(r->grpc_status, GRPC_INVALID_ARGUMENT);
	ck_assert_msg(strstr(r->grpc_message, "unknown field"), "%s", r->grpc_message);
	r = call_sock(GRPC_PATH_REPORT_ACTION_STATUS, (const uint8_t *)"\x0a", 1, NULL);
	ck_assert_int_eq(r->grpc_status, GRPC_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_server_get_action)
{
	Proto__ActionRequest q = PROTO__ACTION_REQUEST__INIT;
	size_t len;
	q.agent_id = "ag1";
	const uint8_t *m = packed(&q.base, &len);
	struct resp *r = call_sock(GRPC_PATH_GET_ACTION, m, len, NULL);
	ck_assert_msg(r->grpc_status == GRPC_OK, "%d %s", r->grpc_status, r->grpc_message);
	ck_assert_uint_ge(r->data_len, GRPC_PREFIX_LEN);
	Proto__ActionResponse *a = proto__action_response__unpack(
		NULL, r->data_len - GRPC_PREFIX_LEN, r->data + GRPC_PREFIX_LEN);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a->workflow_id, "default/wf1");
	ck_assert_str_eq(a->action_id, "A1");
	ck_assert_str_eq(a->image, "img1");
	proto__action_response__free_unpacked(a, NULL);

	/* another agent's report changes nothing */
	Proto__ActionStatusRequest rq = PROTO__ACTION_STATUS_REQUEST__INIT;
	rq.workflow_id = "default/wf1";
	rq.agent_id = "someone-else";
	rq.task_id = "T1";
	rq.action_id = "A1";
	rq.action_name = "disk";
	rq.action_state = PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__RUNNING;
	m = packed(&rq.base, &len);
	r = call_sock(GRPC_PATH_REPORT_ACTION_STATUS, m, len, NULL);
	ck_assert_int_eq(r->grpc_status, GRPC_PERMISSION_DENIED);
	/* its own is accepted once on disk */
	rq.agent_id = "ag1";
	m = packed(&rq.base, &len);
	r = call_sock(GRPC_PATH_REPORT_ACTION_STATUS, m, len, NULL);
	ck_assert_msg(r->grpc_status == GRPC_OK, "%d %s", r->grpc_status, r->grpc_message);
	struct store_reader *rd = store_reader_new(st);
	json_t *wf = NULL;
	ck_assert_int_eq(store_get(rd, STORE_KIND_WORKFLOW, "default", "wf1", &wf), 0);
	json_t *act = json_array_get(
		json_object_get(json_array_get(json_object_get(json_object_get(wf, "status"),
							       "tasks"),
					       0),
				"actions"),
		0);
	ck_assert_str_eq(json_string_value(json_object_get(act, "state")), "RUNNING");
	json_decref(wf);
	store_reader_free(rd);
}
END_TEST

START_TEST(test_server_long_poll_deadline)
{
	Proto__ActionRequest q = PROTO__ACTION_REQUEST__INIT;
	size_t len;
	q.agent_id = "nobody";
	const uint8_t *m = packed(&q.base, &len);
	/* long_poll is 5 s; the client's deadline is shorter: the server
	 * answers what it found before the deadline passes */
	struct resp *r = call_sock(GRPC_PATH_GET_ACTION, m, len, "900m");
	ck_assert_msg(r->grpc_status == GRPC_NOT_FOUND, "%d %s", r->grpc_status, r->grpc_message);
}
END_TEST

START_TEST(test_server_idle_close)
{
	/* a call, then nothing: idle_timeout (2 s) closes the connection,
	 * with a GOAWAY first */
	struct resp *r = call_sock(GRPC_PATH_GET_ACTION, (const uint8_t *)"\x0a", 1, NULL);
	ck_assert_int_eq(r->grpc_status, GRPC_INVALID_ARGUMENT);
	uint64_t t0 = now_mono_ns();
	bool eof = false;
	while (!eof && now_mono_ns() - t0 < (uint64_t)WAIT_MS * 1000000u) {
		struct pollfd pf = { .fd = sock, .events = POLLIN };
		if (poll(&pf, 1, 100) <= 0)
			continue;
		uint8_t in[4096];
		ssize_t n = recv(sock, in, sizeof(in), 0);
		if (n <= 0)
			eof = true;
		else
			ck_assert_int_eq(nghttp2_session_mem_recv(cli, in, (size_t)n), n);
	}
	ck_assert_msg(eof, "the idle connection stays open");
	/* the client read a GOAWAY: it wants nothing more */
	ck_assert(!nghttp2_session_want_read(cli));
}
END_TEST

static Suite *grpc_server_suite(void)
{
	Suite *s = suite_create("grpc_server");
	TCase *tc = tcase_create("h2");
	tcase_add_checked_fixture(tc, setup, teardown);
	UNIT_TEST(tc, test_good_call);
	UNIT_TEST(tc, test_handler_error);
	tcase_add_loop_test(tc, test_malformed, 0, (int)ARRAY_SIZE(bad));
	UNIT_TEST(tc, test_headers_too_large);
	UNIT_TEST(tc, test_deadline);
	UNIT_TEST(tc, test_client_reset);
	UNIT_TEST(tc, test_held_then_freed);
	UNIT_TEST(tc, test_bad_preface);
	suite_add_tcase(s, tc);
	tc = tcase_create("server");
	tcase_add_checked_fixture(tc, server_setup, server_teardown);
	tcase_set_timeout(tc, 60);
	UNIT_TEST(tc, test_server_malformed_protobuf);
	UNIT_TEST(tc, test_server_get_action);
	UNIT_TEST(tc, test_server_long_poll_deadline);
	UNIT_TEST(tc, test_server_idle_close);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(grpc_server_suite());
}
