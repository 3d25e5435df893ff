/* client — the agent's gRPC client: unary calls over one HTTP/2
 * connection (nghttp2), in clear (h2c, prior knowledge) or TLS (OpenSSL,
 * ALPN h2), blocking.
 *
 * DESIGN: one agent makes one call at a time, so the client is a plain
 * blocking loop around an nghttp2 client session: submit the request
 * (HEADERS, then the length-prefixed message as DATA with END_STREAM),
 * then send what nghttp2 has and feed it what the socket gives until the
 * stream closes or the call's deadline passes (then RST_STREAM CANCEL and
 * DEADLINE_EXCEEDED, the connection kept). grpc-status and grpc-message
 * are taken from whichever HEADERS carried them: the trailers, or the
 * only HEADERS of a trailers-only error. A dropped connection is closed
 * and reopened by the next call; the caller backs off. The response body
 * is capped at AGENT_GRPC_MAX and must be exactly one message (gRPC over
 * HTTP/2: a unary response is one Length-Prefixed-Message). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent-internal.h"
#include "common/grpc.h"

#define CONNECT_TIMEOUT_MS 10000

struct agent_conn {
	const struct agent_settings *s;
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	nghttp2_session *h2;
	/* The call in progress. */
	int32_t stream;
	const uint8_t *req;
	size_t req_len, req_off;
	uint8_t *body;
	size_t body_len;
	bool body_over;
	bool done;
	int http_status;
	int grpc_status; /* -1: not seen */
	char grpc_message[512];
};

static void conn_close(struct agent_conn *c)
{
	if (c->h2)
		nghttp2_session_del(c->h2);
	c->h2 = NULL;
	if (c->ssl)
		SSL_free(c->ssl);
	c->ssl = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static ssize_t cb_send(nghttp2_session *h2, const uint8_t *data, size_t len, int flags, void *arg)
{
	struct agent_conn *c = arg;
	size_t off = 0;
	while (off < len) {
		ssize_t w;
		if (c->ssl) {
			int r = SSL_write(c->ssl, data + off, (int)(len - off));
			w = r > 0 ? r : -1;
		} else {
			w = send(c->fd, data + off, len - off, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
		}
		if (w <= 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		off += (size_t)w;
	}
	return (ssize_t)len;
}

static int cb_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name, size_t nl,
		     const uint8_t *value, size_t vl, uint8_t flags, void *arg)
{
	struct agent_conn *c = arg;
	if (f->hd.stream_id != c->stream)
		return 0;
	if (nl == 7 && memcmp(name, ":status", 7) == 0) {
		int v = 0;
		for (size_t i = 0; i < vl && i < 3; i++)
			v = v * 10 + (value[i] >= '0' && value[i] <= '9' ? value[i] - '0' : 0);
		c->http_status = v;
	} else if (nl == 11 && memcmp(name, "grpc-status", 11) == 0) {
		int v = 0;
		bool ok = vl > 0 && vl <= 3;
		for (size_t i = 0; ok && i < vl; i++) {
			ok = value[i] >= '0' && value[i] <= '9';
			v = v * 10 + value[i] - '0';
		}
		c->grpc_status = ok ? v : GRPC_UNKNOWN;
	} else if (nl == 12 && memcmp(name, "grpc-message", 12) == 0) {
		grpc_message_decode((const char *)value, vl, c->grpc_message,
				    sizeof(c->grpc_message));
	}
	return 0;
}

static int cb_data(nghttp2_session *h2, uint8_t flags, int32_t stream, const uint8_t *data,
		   size_t len, void *arg)
{
	struct agent_conn *c = arg;
	if (stream != c->stream)
		return 0;
	if (c->body_over || len > AGENT_GRPC_MAX + GRPC_PREFIX_LEN - c->body_len) {
		c->body_over = true;
		return 0;
	}
	uint8_t *nb = realloc(c->body, c->body_len + len);
	if (!nb) {
		c->body_over = true;
		return 0;
	}
	c->body = nb;
	memcpy(c->body + c->body_len, data, len);
	c->body_len += len;
	return 0;
}

static int cb_close(nghttp2_session *h2, int32_t stream, uint32_t error_code, void *arg)
{
	struct agent_conn *c = arg;
	if (stream == c->stream)
		c->done = true;
	return 0;
}

static ssize_t req_read(nghttp2_session *h2, int32_t stream, uint8_t *buf, size_t len,
			uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	struct agent_conn *c = arg;
	size_t n = c->req_len - c->req_off;
	if (n > len)
		n = len;
	memcpy(buf, c->req + c->req_off, n);
	c->req_off += n;
	if (c->req_off == c->req_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int tcp_connect(const char *authority)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd = -1, e = agent_addr_parse(authority, &ss, &sl);
	if (e < 0)
		return e;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		e = -errno;
		goto fail;
	}
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int r = poll(&p, 1, CONNECT_TIMEOUT_MS);
	if (r <= 0) {
		e = r == 0 ? -ETIMEDOUT : -errno;
		goto fail;
	}
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
		e = err ? -err : -errno;
		goto fail;
	}
	/* Blocking from here on: every read is after a poll. */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		e = -errno;
		goto fail;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	close(fd);
	return e;
}

/* The host part of authority (for SNI and the certificate check). */
static void authority_host(const char *a, char *out, size_t cap)
{
	const char *end;
	if (a[0] == '[') {
		a++;
		end = strchr(a, ']');
	} else {
		end = strrchr(a, ':');
	}
	size_t n = end ? (size_t)(end - a) : strlen(a);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, a, n);
	out[n] = '\0';
}

static int tls_start(struct agent_conn *c)
{
	static const unsigned char alpn[] = "\x02h2";
	char host[AGENT_AUTHORITY_MAX];
	const unsigned char *proto = NULL;
	unsigned plen = 0;
	struct in6_addr a6;
	authority_host(c->s->authority, host, sizeof(host));
	if (!c->ctx) {
		c->ctx = SSL_CTX_new(TLS_client_method());
		if (!c->ctx)
			return -ENOMEM;
		SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
		if (SSL_CTX_set_alpn_protos(c->ctx, alpn, sizeof(alpn) - 1) != 0)
			return -ENOMEM;
		if (!c->s->insecure_tls) {
			SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
			SSL_CTX_set_default_verify_paths(c->ctx);
		}
	}
	c->ssl = SSL_new(c->ctx);
	if (!c->ssl || !SSL_set_fd(c->ssl, c->fd))
		return -ENOMEM;
	bool is_ip = inet_pton(AF_INET6, host, &a6) == 1 || inet_pton(AF_INET, host, &a6) == 1;
	if (!is_ip)
		SSL_set_tlsext_host_name(c->ssl, host);
	if (!c->s->insecure_tls) {
		X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);
		if (is_ip ? !X509_VERIFY_PARAM_set1_ip_asc(vp, host) : !SSL_set1_host(c->ssl, host))
			return -EINVAL;
	}
	if (SSL_connect(c->ssl) != 1) {
		unsigned long err = ERR_get_error();
		agent_log(0, "TLS with %s: %s", c->s->authority,
			  err ? ERR_reason_error_string(err) : "handshake failed");
		ERR_clear_error();
		return -EPROTO;
	}
	SSL_get0_alpn_selected(c->ssl, &proto, &plen);
	if (plen != 2 || memcmp(proto, "h2", 2) != 0) {
		agent_log(0, "TLS with %s: the server did not choose h2 (ALPN)", c->s->authority);
		return -EPROTO;
	}
	return 0;
}

static int conn_open(struct agent_conn *c)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_ENABLE_PUSH, 0 } };
	int e = tcp_connect(c->s->authority);
	if (e < 0)
		return e;
	c->fd = e;
	if (c->s->tls && (e = tls_start(c)) < 0)
		goto out;
	if (nghttp2_session_callbacks_new(&cb) != 0) {
		e = -ENOMEM;
		goto out;
	}
	nghttp2_session_callbacks_set_send_callback(cb, cb_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, cb_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cb_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, cb_close);
	e = nghttp2_session_client_new(&c->h2, cb, c) == 0 ? 0 : -ENOMEM;
	nghttp2_session_callbacks_del(cb);
	if (e < 0)
		goto out;
	if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, 1) != 0)
		e = -ENOMEM;
out:
	if (e < 0)
		conn_close(c);
	else
		agent_log(1, "connected to %s (%s)", c->s->authority, c->s->tls ? "TLS" : "h2c");
	return e;
}

struct agent_conn *agent_conn_new(const struct agent_settings *s)
{
	struct agent_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->s = s;
	c->fd = -1;
	return c;
}

void agent_conn_free(struct agent_conn *c)
{
	if (!c)
		return;
	conn_close(c);
	if (c->ctx)
		SSL_CTX_free(c->ctx);
	free(c->body);
	free(c);
}

/* Reads what the socket has and feeds nghttp2. 0, or -ECONNRESET. */
static int conn_pump_in(struct agent_conn *c)
{
	uint8_t buf[16384];
	ssize_t r;
	if (c->ssl) {
		int n = SSL_read(c->ssl, buf, sizeof(buf));
		r = n > 0 ? n : -1;
	} else {
		do
			r = recv(c->fd, buf, sizeof(buf), 0);
		while (r < 0 && errno == EINTR);
	}
	if (r <= 0)
		return -ECONNRESET;
	if (nghttp2_session_mem_recv(c->h2, buf, (size_t)r) < 0)
		return -EPROTO;
	return 0;
}

/* Waits for the stream's end until deadline. 0, -ETIMEDOUT, -EINTR
 * (agent_stop) or a connection error. */
static int conn_wait(struct agent_conn *c, uint64_t deadline)
{
	while (!c->done) {
		if (nghttp2_session_send(c->h2) != 0)
			return -ECONNRESET;
		if (c->done)
			break;
		if (!nghttp2_session_want_read(c->h2))
			return -ECONNRESET;
		if (!c->ssl || SSL_pending(c->ssl) == 0) {
			uint64_t now = agent_mono_ms();
			if (now >= deadline)
				return -ETIMEDOUT;
			uint64_t left = deadline - now;
			struct pollfd p = { .fd = c->fd, .events = POLLIN };
			int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
			if (r < 0 && errno != EINTR)
				return -errno;
			if (agent_stop)
				return -EINTR;
			if (r <= 0)
				continue;
		}
		int e = conn_pump_in(c);
		if (e < 0)
			return e;
	}
	return 0;
}

/* The call's result from what the stream carried. */
static int call_result(struct agent_conn *c, const uint8_t **ret_body, size_t *ret_len, char *msg,
		       size_t msgcap)
{
	bool compressed;
	size_t len;
	snprintf(msg, msgcap, "%s", c->grpc_message);
	if (c->http_status != 200) {
		/* gRPC's HTTP to status mapping (doc/http-grpc-status-mapping.md). */
		snprintf(msg, msgcap, "HTTP status %d", c->http_status);
		switch (c->http_status) {
		case 400: return GRPC_INTERNAL;
		case 401: return GRPC_UNAUTHENTICATED;
		case 403: return GRPC_PERMISSION_DENIED;
		case 404: return GRPC_UNIMPLEMENTED;
		case 429:
		case 502:
		case 503:
		case 504: return GRPC_UNAVAILABLE;
		default: return GRPC_UNKNOWN;
		}
	}
	if (c->grpc_status < 0) {
		snprintf(msg, msgcap, "the response has no grpc-status");
		return GRPC_INTERNAL;
	}
	if (c->grpc_status != GRPC_OK)
		return c->grpc_status < GRPC_CODE_MAX ? c->grpc_status : GRPC_UNKNOWN;
	if (c->body_over) {
		snprintf(msg, msgcap, "the response is over %u bytes", AGENT_GRPC_MAX);
		return GRPC_RESOURCE_EXHAUSTED;
	}
	int e = grpc_prefix_parse(c->body, c->body_len, AGENT_GRPC_MAX, &compressed, &len);
	if (e < 0 || compressed || len != c->body_len - GRPC_PREFIX_LEN) {
		snprintf(msg, msgcap, "the response is not one uncompressed message");
		return GRPC_INTERNAL;
	}
	*ret_body = c->body + GRPC_PREFIX_LEN;
	*ret_len = len;
	return GRPC_OK;
}

static int call_once(struct agent_conn *c, const char *path, const uint8_t *req, size_t n,
		     uint64_t timeout_ms, const uint8_t **ret_body, size_t *ret_len, char *msg,
		     size_t msgcap)
{
	char tmo[GRPC_TIMEOUT_MAX];
	const char *scheme = c->s->tls ? "https" : "http";
	uint8_t *framed = malloc(n + GRPC_PREFIX_LEN);
	int e;
	msg[0] = '\0';
	if (!framed)
		return -ENOMEM;
	/* A session the server has sent GOAWAY on takes no new stream. */
	if (c->h2 && !nghttp2_session_want_read(c->h2) && !nghttp2_session_want_write(c->h2))
		conn_close(c);
	grpc_prefix_write(framed, (uint32_t)n);
	if (n)
		memcpy(framed + GRPC_PREFIX_LEN, req, n);
	if (!c->h2 && (e = conn_open(c)) < 0)
		goto out;
	grpc_timeout_format(timeout_ms, tmo);
#define NV(k, v) { (uint8_t *)(k), (uint8_t *)(v), sizeof(k) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }
	nghttp2_nv hdr[] = {
		NV(":method", "POST"),
		NV(":scheme", scheme),
		NV(":path", path),
		NV(":authority", c->s->authority),
		NV("content-type", "application/grpc"),
		NV("te", "trailers"),
		NV("grpc-timeout", tmo),
		NV("user-agent", "ironbell-agent/" PACKAGE_VERSION),
	};
#undef NV
	nghttp2_data_provider dp = { .read_callback = req_read };
	c->req = framed;
	c->req_len = n + GRPC_PREFIX_LEN;
	c->req_off = 0;
	c->body_len = 0;
	c->body_over = false;
	c->done = false;
	c->http_status = 0;
	c->grpc_status = -1;
	c->grpc_message[0] = '\0';
	c->stream =
		nghttp2_submit_request(c->h2, NULL, hdr, sizeof(hdr) / sizeof(hdr[0]), &dp, NULL);
	if (c->stream < 0) {
		e = -EPROTO;
		goto drop;
	}
	e = conn_wait(c, agent_mono_ms() + timeout_ms);
	if (e == -ETIMEDOUT || e == -EINTR) {
		/* Our deadline: cancel the stream, keep the connection. */
		nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, c->stream, NGHTTP2_CANCEL);
		(void)nghttp2_session_send(c->h2);
		snprintf(msg, msgcap, "%s", e == -EINTR ? "stopped" : "deadline exceeded");
		e = e == -EINTR ? GRPC_CANCELLED : GRPC_DEADLINE_EXCEEDED;
		goto out;
	}
	if (e < 0)
		goto drop;
	e = call_result(c, ret_body, ret_len, msg, msgcap);
	goto out;
drop:
	agent_log(0, "connection to %s lost: %s", c->s->authority, strerror(-e));
	conn_close(c);
out:
	c->req = NULL;
	free(framed);
	return e;
}

int agent_conn_call(struct agent_conn *c, const char *path, const uint8_t *req, size_t n,
		    uint64_t timeout_ms, const uint8_t **ret_body, size_t *ret_len, char *msg,
		    size_t msgcap)
{
	/* A connection left idle may have been closed by the server (or a
	 * middlebox) meanwhile: one more try on a new one before failing. */
	bool reused = c->h2 != NULL;
	int e = call_once(c, path, req, n, timeout_ms, ret_body, ret_len, msg, msgcap);
	if (e < 0 && e != -ENOMEM && reused && !agent_stop)
		e = call_once(c, path, req, n, timeout_ms, ret_body, ret_len, msg, msgcap);
	return e;
}
