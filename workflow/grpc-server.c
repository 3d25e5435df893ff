/* grpc-server — the worker API's thread: the listener, its connections
 * (h2c or TLS) and the loop that feeds them to their HTTP/2 sessions
 * (grpc-h2.c) and the worker API (grpc-api.c).
 *
 * DESIGN: one thread, one epoll (level-triggered), every socket
 * non-blocking. A readable connection is read once per wakeup (up to
 * WF_GRPC_READ_ROUNDS buffers, so that one client cannot starve the
 * others), fed to its session, and what the session then has to say is
 * pulled into the connection's output buffer and written; what the socket
 * does not take waits for EPOLLOUT, and while that buffer is full the
 * connection is not read (backpressure: a client that does not read its
 * answers stops being heard). Answers given later (a long poll woken, a
 * write committed) mark their connection dirty; the loop flushes dirty
 * connections after each round. Once a second the loop expires calls past
 * their grpc-timeout and closes connections idle for idle_timeout_s.
 *
 * TLS: OpenSSL on the socket itself (SSL_set_fd), non-blocking: the
 * handshake is driven by the same events, WANT_READ/WANT_WRITE mapped to
 * the epoll mask; ALPN selects "h2" (gRPC clients offer nothing else).
 * Without tls_cert the listener speaks h2c with prior knowledge, as every
 * gRPC client does over plain TCP.
 *
 * The listener is bound in wf_grpc_new(), before the daemon drops its
 * privileges; the TLS files are read there too. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/common.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/net.h"
#include "workflow/engine.h"
#include "workflow/grpc-internal.h"

#define WF_GRPC_BACKLOG 1024
#define WF_GRPC_READ_BUF 16384
#define WF_GRPC_READ_ROUNDS 4  /* buffers read from one connection per wakeup */
#define WF_GRPC_PULL_ROUNDS 64 /* pulls from a session per flush */
#define WF_GRPC_ACCEPTS 64     /* connections accepted per wakeup */
#define WF_GRPC_TICK_MS 1000   /* deadlines and idle connections looked at */
#define WF_GRPC_EVENTS 32

struct conn {
	struct wf_grpc *g;
	int fd;
	SSL *ssl;
	bool handshaken; /* TLS done, or h2c */
	bool ssl_wants_write;
	struct wf_h2_conn *h2;
	char peer[64];
	struct buf out; /* pulled from the session, not yet written */
	size_t out_off;
	uint32_t events; /* the epoll mask now */
	uint64_t last_active_ms;
	bool dirty, closed;
	struct conn *next, *prev, *dirty_next;
};

struct wf_grpc {
	struct store *store;
	struct wf_grpc_settings set;
	char *listen, *tls_cert, *tls_key;
	SSL_CTX *ssl_ctx;
	int lfd, epfd, stopfd;
	unsigned port;
	pthread_t thread;
	bool started;
	struct wf_grpc_api *api;
	int api_fds[2];
	struct wf_h2_ops ops;
	struct conn *conns, *dirty;
	unsigned n_conns;
	bool accept_paused; /* out of fds: the listener is out of the epoll until the tick */
	struct metric *m_connections, *m_accepted, *m_waiting;
};

static uint64_t now_ms(void)
{
	return now_mono_ns() / 1000000u;
}

void wf_grpc_settings_default(struct wf_grpc_settings *s)
{
	*s = (struct wf_grpc_settings){
		.listen = WF_GRPC_DEFAULT_LISTEN,
		.max_connections = WF_GRPC_DEFAULT_MAX_CONNECTIONS,
		.max_message = WF_GRPC_DEFAULT_MAX_MESSAGE,
		.max_streams = WF_GRPC_DEFAULT_MAX_STREAMS,
		.long_poll_s = WF_GRPC_DEFAULT_LONG_POLL_S,
		.idle_timeout_s = WF_GRPC_DEFAULT_IDLE_TIMEOUT_S,
		.default_action_timeout_s = WF_DEFAULT_ACTION_TIMEOUT_S,
		.action_grace_s = WF_ACTION_GRACE_S,
		.retry_base_s = WF_RETRY_BASE_S,
		.retry_max_s = WF_RETRY_MAX_S,
	};
}

/* ---- connections ---- */

static void conn_mask(struct conn *c)
{
	uint32_t ev = 0;
	bool full = c->out.len - c->out_off >= WF_GRPC_MAX_OUTPUT;
	if (!full)
		ev |= EPOLLIN;
	if (c->out.len > c->out_off || c->ssl_wants_write)
		ev |= EPOLLOUT;
	if (ev == c->events)
		return;
	struct epoll_event e = { .events = ev, .data.ptr = c };
	if (epoll_ctl(c->g->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
		c->events = ev;
}

static void conn_close(struct conn *c)
{
	struct wf_grpc *g = c->g;
	if (c->closed)
		return;
	c->closed = true;
	/* Freed by the loop (flush_dirty), so that a pointer held in this
	 * round stays valid. */
	if (!c->dirty) {
		c->dirty = true;
		c->dirty_next = g->dirty;
		g->dirty = c;
	}
	epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	wf_h2_conn_free(c->h2);
	c->h2 = NULL;
	if (c->ssl) {
		SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	close(c->fd);
	buf_free(&c->out);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	g->n_conns--;
	metric_set(g->m_connections, g->n_conns);
}

static void want_write(void *conn_ud)
{
	struct conn *c = conn_ud;
	if (c->dirty || c->closed)
		return;
	c->dirty = true;
	c->dirty_next = c->g->dirty;
	c->g->dirty = c;
}

/* Writes what is buffered: 0, or -EPIPE when the connection is gone. */
static int conn_write(struct conn *c)
{
	while (c->out.len > c->out_off) {
		size_t n = c->out.len - c->out_off;
		ssize_t w;
		c->ssl_wants_write = false;
		if (c->ssl) {
			ERR_clear_error();
			int r = SSL_write(c->ssl, c->out.data + c->out_off, (int)(n > INT32_MAX ? INT32_MAX : n));
			if (r <= 0) {
				int e = SSL_get_error(c->ssl, r);
				if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
					c->ssl_wants_write = e == SSL_ERROR_WANT_WRITE;
					return 0;
				}
				return -EPIPE;
			}
			w = r;
		} else {
			w = send(c->fd, c->out.data + c->out_off, n, MSG_NOSIGNAL);
			if (w < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			if (w < 0)
				return -EPIPE;
		}
		c->out_off += (size_t)w;
	}
	buf_reset(&c->out);
	c->out_off = 0;
	return 0;
}

/* Pulls what the session has to say and writes it; closes the connection
 * when it is over. */
static void conn_flush(struct conn *c)
{
	if (c->closed || !c->handshaken)
		return;
	for (int i = 0; i < WF_GRPC_PULL_ROUNDS; i++) {
		if (conn_write(c) < 0)
			goto close;
		if (c->out.len - c->out_off >= WF_GRPC_MAX_OUTPUT)
			break;
		const uint8_t *p;
		long n = wf_h2_conn_pull(c->h2, &p);
		if (n < 0)
			goto close;
		if (n == 0)
			break;
		if (c->out_off) {
			/* what was written goes: the cap counts what waits */
			memmove(c->out.data, c->out.data + c->out_off, c->out.len - c->out_off);
			c->out.len -= c->out_off;
			c->out_off = 0;
		}
		if (buf_append(&c->out, p, (size_t)n) < 0)
			goto close;
	}
	if (conn_write(c) < 0)
		goto close;
	if (c->out.len == c->out_off && wf_h2_conn_done(c->h2))
		goto close;
	conn_mask(c);
	return;
close:
	conn_close(c);
}

/* TLS: drives the handshake. 0 done or in progress, -EPROTO failed. */
static int conn_handshake(struct conn *c)
{
	ERR_clear_error();
	int r = SSL_accept(c->ssl);
	if (r == 1) {
		c->handshaken = true;
		c->ssl_wants_write = false;
		return 0;
	}
	int e = SSL_get_error(c->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		c->ssl_wants_write = e == SSL_ERROR_WANT_WRITE;
		conn_mask(c);
		return 0;
	}
	char why[128] = "closed";
	unsigned long le = ERR_peek_error();
	if (le)
		ERR_error_string_n(le, why, sizeof(why));
	log_info("grpc", "%s: TLS handshake failed: %s", c->peer, why);
	wf_grpc_count_refusal(WF_REFUSE_SESSION);
	return -EPROTO;
}

/* Reads what the client sent into its session. */
static void conn_read(struct conn *c)
{
	uint8_t in[WF_GRPC_READ_BUF];
	/* Past the rounds, only what OpenSSL holds already (the rest of a
	 * record): epoll would not say it is there. */
	for (int i = 0; i < WF_GRPC_READ_ROUNDS * 2 &&
			(i < WF_GRPC_READ_ROUNDS || (c->ssl && SSL_pending(c->ssl) > 0));
	     i++) {
		ssize_t n;
		if (c->ssl) {
			ERR_clear_error();
			int r = SSL_read(c->ssl, in, sizeof(in));
			if (r <= 0) {
				int e = SSL_get_error(c->ssl, r);
				if (e == SSL_ERROR_WANT_READ)
					break;
				if (e == SSL_ERROR_WANT_WRITE) {
					c->ssl_wants_write = true;
					break;
				}
				goto close;
			}
			n = r;
		} else {
			n = recv(c->fd, in, sizeof(in), 0);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n <= 0)
				goto close;
		}
		c->last_active_ms = now_ms();
		if (wf_h2_conn_recv(c->h2, in, (size_t)n) < 0)
			break; /* the GOAWAY goes out, then the connection closes */
		if ((size_t)n < sizeof(in) && !(c->ssl && SSL_pending(c->ssl)))
			break;
	}
	conn_flush(c);
	return;
close:
	conn_close(c);
}

static void conn_event(struct conn *c, uint32_t ev)
{
	if (c->closed)
		return;
	if (ev & (EPOLLERR | EPOLLHUP) && !(ev & EPOLLIN)) {
		conn_close(c);
		return;
	}
	if (!c->handshaken) {
		if (conn_handshake(c) < 0) {
			conn_close(c);
			return;
		}
		if (!c->handshaken)
			return;
	}
	if (ev & EPOLLIN)
		conn_read(c);
	else
		conn_flush(c);
}

static void peer_name(const struct sockaddr_storage *sa, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		port = ntohs(s4->sin_port);
		snprintf(out, outlen, "%s:%u", a, port);
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		port = ntohs(s6->sin6_port);
		snprintf(out, outlen, "[%s]:%u", a, port);
	} else {
		snprintf(out, outlen, "?");
	}
}

static void conn_accept_one(struct wf_grpc *g, int fd, const struct sockaddr_storage *sa)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->g = g;
	c->fd = fd;
	peer_name(sa, c->peer, sizeof(c->peer));
	buf_init(&c->out, WF_GRPC_MAX_OUTPUT + WF_GRPC_READ_BUF * 4 + 65536);
	c->last_active_ms = now_ms();
	struct wf_h2_limits lim = { .max_message = g->set.max_message,
				    .max_streams = g->set.max_streams };
	c->h2 = wf_h2_conn_new(&lim, &g->ops, g->api, c, c->peer);
	if (!c->h2)
		goto fail;
	if (g->ssl_ctx) {
		if (!(c->ssl = SSL_new(g->ssl_ctx)) || SSL_set_fd(c->ssl, fd) != 1)
			goto fail;
	} else {
		c->handshaken = true;
	}
	c->events = EPOLLIN;
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };
	if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
		goto fail;
	c->next = g->conns;
	if (g->conns)
		g->conns->prev = c;
	g->conns = c;
	g->n_conns++;
	metric_set(g->m_connections, g->n_conns);
	metric_inc(g->m_accepted, 1);
	log_debug("grpc", "%s: connected", c->peer);
	/* The server's SETTINGS go first (h2c: at once). */
	conn_flush(c);
	return;
fail:
	wf_h2_conn_free(c->h2);
	SSL_free(c->ssl);
	buf_free(&c->out);
	free(c);
	close(fd);
}

static void do_accept(struct wf_grpc *g)
{
	for (int i = 0; i < WF_GRPC_ACCEPTS; i++) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		int fd = accept4(g->lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			       errno == ENOMEM)) {
			/* The listener would stay readable: a busy loop. Rest
			 * until the next tick. */
			log_warn("grpc", "accept: %s; accepting again in a second", strerror(errno));
			if (epoll_ctl(g->epfd, EPOLL_CTL_DEL, g->lfd, NULL) == 0)
				g->accept_paused = true;
			return;
		}
		if (fd < 0)
			return;
		if (g->n_conns >= g->set.max_connections) {
			char peer[64];
			peer_name(&sa, peer, sizeof(peer));
			wf_grpc_count_refusal(WF_REFUSE_CONNECTIONS);
			log_info("grpc", "%s: connection refused: %u connections (max_connections)",
				 peer, g->n_conns);
			close(fd);
			continue;
		}
		/* An answer is one small write that nothing follows until the
		 * agent asks again: with Nagle's algorithm it would wait for
		 * the ACK of the last one, which the agent delays (40 ms). As
		 * grpc-go, no Nagle; the writes are gathered per turn anyway. */
		int one = 1;
		if (sa.ss_family != AF_UNIX)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		conn_accept_one(g, fd, &sa);
	}
}

/* Flushes the connections that have answers to send; frees those that
 * closed meanwhile. */
static void flush_dirty(struct wf_grpc *g)
{
	for (int round = 0; g->dirty && round < 4; round++) {
		struct conn *list = g->dirty;
		g->dirty = NULL;
		while (list) {
			struct conn *c = list;
			list = c->dirty_next;
			c->dirty = false;
			if (c->closed)
				free(c);
			else
				conn_flush(c);
		}
	}
}

/* Once a second: deadlines, idle connections. */
static void tick(struct wf_grpc *g, uint64_t now)
{
	uint64_t idle = (uint64_t)g->set.idle_timeout_s * 1000u;
	struct conn *c = g->conns;
	while (c) {
		struct conn *next = c->next;
		wf_h2_conn_expire(c->h2, now);
		if (wf_h2_conn_streams(c->h2) == 0 && now - c->last_active_ms >= idle) {
			log_debug("grpc", "%s: idle for %us, closed", c->peer, g->set.idle_timeout_s);
			wf_h2_conn_goaway(c->h2);
			conn_flush(c);
			conn_close(c);
		}
		c = next;
	}
	metric_set(g->m_waiting, (double)wf_grpc_api_waiting(g->api));
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = &g->lfd };
	if (g->accept_paused && epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->lfd, &e) == 0)
		g->accept_paused = false;
}

/* ---- the thread ---- */

static void ops_call(void *ud, struct wf_h2_call *call)
{
	wf_grpc_api_call(ud, call);
}

static void ops_cancelled(void *ud, struct wf_h2_call *call)
{
	wf_grpc_api_cancelled(ud, call);
}

static void shutdown_all(struct wf_grpc *g)
{
	/* Long polls are answered UNAVAILABLE; every client is told to go
	 * away; what can be sent is sent; then the connections close. */
	wf_grpc_api_stop(g->api);
	for (struct conn *c = g->conns; c; c = c->next)
		wf_h2_conn_goaway(c->h2);
	for (struct conn *c = g->conns; c; c = c->next)
		conn_flush(c);
	while (g->conns)
		conn_close(g->conns);
	while (g->dirty)
		flush_dirty(g); /* every connection is closed: this frees them */
}

static void *grpc_main(void *arg)
{
	struct wf_grpc *g = arg;
	struct epoll_event ev[WF_GRPC_EVENTS];
	/* The first run reads every Workflow. */
	uint64_t next_tick = now_ms() + WF_GRPC_TICK_MS, api_at = 1;
	for (;;) {
		uint64_t now = now_ms(), at = next_tick;
		if (api_at && api_at < at)
			at = api_at;
		int timeout = at > now ? (int)(at - now) : 0;
		int n = epoll_wait(g->epfd, ev, WF_GRPC_EVENTS, timeout);
		if (n < 0 && errno != EINTR) {
			log_error("grpc", "epoll_wait: %s", strerror(errno));
			break;
		}
		bool stop = false, api = false;
		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;
			if (p == &g->stopfd)
				stop = true;
			else if (p == &g->lfd)
				do_accept(g);
			else if (p == &g->api_fds[0] || p == &g->api_fds[1])
				api = true;
			else
				conn_event(p, ev[i].events);
			/* an answer leaves as soon as it is made, not after the
			 * whole turn's calls */
			flush_dirty(g);
		}
		if (stop)
			break;
		now = now_ms();
		if (api || (api_at && api_at <= now))
			wf_grpc_api_run(g->api, now);
		api_at = wf_grpc_api_next(g->api);
		if (now >= next_tick) {
			tick(g, now);
			next_tick = now + WF_GRPC_TICK_MS;
		}
		flush_dirty(g);
	}
	shutdown_all(g);
	return NULL;
}

/* ---- TLS ---- */

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned inlen, void *arg)
{
	static const unsigned char h2[] = "\x02h2";
	if (SSL_select_next_proto((unsigned char **)out, outlen, h2, sizeof(h2) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL; /* gRPC is HTTP/2 only */
	return SSL_TLSEXT_ERR_OK;
}

static int tls_init(struct wf_grpc *g, char *err, size_t errlen)
{
	char why[160] = "";
	if (!(g->ssl_ctx = SSL_CTX_new(TLS_server_method())))
		goto fail;
	SSL_CTX_set_min_proto_version(g->ssl_ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(g->ssl_ctx,
			 SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(g->ssl_ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_alpn_select_cb(g->ssl_ctx, alpn_select, NULL);
	if (SSL_CTX_use_certificate_chain_file(g->ssl_ctx, g->tls_cert) != 1) {
		snprintf(why, sizeof(why), "%s: ", g->tls_cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(g->ssl_ctx, g->tls_key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(g->ssl_ctx) != 1) {
		snprintf(why, sizeof(why), "%s: ", g->tls_key);
		goto fail;
	}
	return 0;
fail:;
	char ossl[160] = "";
	ERR_error_string_n(ERR_get_error(), ossl, sizeof(ossl));
	snprintf(err, errlen, "grpc TLS: %s%s", why, ossl);
	ERR_clear_error();
	return -EINVAL;
}

/* ---- the public face ---- */

static int settings_copy(struct wf_grpc *g, const struct wf_grpc_settings *s, char *err,
			 size_t errlen)
{
	struct wf_grpc_settings d;
	wf_grpc_settings_default(&d);
	g->set = *s;
#define DEF(f) \
	if (!g->set.f) \
		g->set.f = d.f
	DEF(max_connections);
	DEF(max_message);
	DEF(max_streams);
	DEF(long_poll_s);
	DEF(idle_timeout_s);
	DEF(default_action_timeout_s);
	DEF(action_grace_s);
	DEF(retry_base_s);
	DEF(retry_max_s);
#undef DEF
	if (g->set.max_message > WF_GRPC_MAX_MESSAGE_LIMIT ||
	    g->set.max_streams > WF_GRPC_MAX_STREAMS_LIMIT ||
	    g->set.long_poll_s > WF_GRPC_MAX_LONG_POLL_S) {
		snprintf(err, errlen, "grpc: max_message, max_streams or long_poll out of range");
		return -EINVAL;
	}
	if (!!s->tls_cert != !!s->tls_key) {
		snprintf(err, errlen, "grpc: tls_cert and tls_key go together");
		return -EINVAL;
	}
	g->listen = strdup(s->listen ? s->listen : d.listen);
	g->tls_cert = s->tls_cert ? strdup(s->tls_cert) : NULL;
	g->tls_key = s->tls_key ? strdup(s->tls_key) : NULL;
	if (!g->listen || (s->tls_cert && !g->tls_cert) || (s->tls_key && !g->tls_key)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->set.listen = g->listen;
	g->set.tls_cert = g->tls_cert;
	g->set.tls_key = g->tls_key;
	return 0;
}

/* "host:0" (tests): a port the kernel picks, on a numeric host ("" or
 * "*": every IPv4 address), which net_bind() does not offer. The fd, or
 * -EINVAL when listen is not of that form (net_bind() then says why). */
static int bind_port0(const char *listen_on)
{
	const char *colon = strrchr(listen_on, ':');
	char host[INET6_ADDRSTRLEN + 2];
	struct sockaddr_storage sa = { 0 };
	socklen_t sl;
	int one = 1, fd;
	size_t n;
	if (!colon || strcmp(colon + 1, "0") != 0 || (n = (size_t)(colon - listen_on)) >= sizeof(host))
		return -EINVAL;
	memcpy(host, listen_on, n);
	host[n] = '\0';
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)&sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&sa;
	if (!host[0] || strcmp(host, "*") == 0 || inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		sl = sizeof(*s6);
	} else {
		return -EINVAL;
	}
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sl) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int listen_on(struct wf_grpc *g, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	g->lfd = bind_port0(g->listen);
	if (g->lfd < 0 && g->lfd != -EINVAL) {
		snprintf(err, errlen, "cannot listen on %s (gRPC): %s", g->listen, strerror(-g->lfd));
		return g->lfd;
	}
	if (g->lfd < 0)
		g->lfd = net_bind(g->listen, AF_UNSPEC, SOCK_STREAM, NET_REUSEADDR, "gRPC", err,
				  errlen);
	if (g->lfd < 0)
		return g->lfd;
	if (listen(g->lfd, WF_GRPC_BACKLOG) < 0 ||
	    getsockname(g->lfd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", g->listen, strerror(errno));
		return e;
	}
	g->port = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port) :
					     ntohs(((struct sockaddr_in *)&sa)->sin_port);
	return 0;
}

static int epoll_add(struct wf_grpc *g, int fd, void *tag)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = tag };
	return epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

int wf_grpc_new(struct store *store, const struct wf_grpc_settings *settings,
		struct wf_grpc **ret, char *err, size_t errlen)
{
	struct wf_grpc *g = calloc(1, sizeof(*g));
	int e = -ENOMEM;
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->lfd = g->epfd = g->stopfd = -1;
	g->store = store;
	if ((e = settings_copy(g, settings, err, errlen)) < 0)
		goto out;
	if (g->tls_cert && (e = tls_init(g, err, errlen)) < 0)
		goto out;
	if ((e = listen_on(g, err, errlen)) < 0)
		goto out;
	if (!(g->api = wf_grpc_api_new(store, &g->set, err, errlen))) {
		e = -ENOMEM;
		goto out;
	}
	wf_grpc_api_fds(g->api, g->api_fds);
	g->epfd = epoll_create1(EPOLL_CLOEXEC);
	g->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->epfd < 0 || g->stopfd < 0 || epoll_add(g, g->lfd, &g->lfd) < 0 ||
	    epoll_add(g, g->stopfd, &g->stopfd) < 0 ||
	    epoll_add(g, g->api_fds[0], &g->api_fds[0]) < 0 ||
	    epoll_add(g, g->api_fds[1], &g->api_fds[1]) < 0) {
		e = -errno;
		snprintf(err, errlen, "grpc: epoll: %s", strerror(errno));
		goto out;
	}
	g->ops = (struct wf_h2_ops){ .call = ops_call, .cancelled = ops_cancelled,
				     .want_write = want_write };
	g->m_connections = metrics_gauge("ironbell_grpc_connections",
					 "gRPC (worker API) connections open.", NULL);
	g->m_accepted = metrics_counter("ironbell_grpc_connections_total",
					"gRPC (worker API) connections accepted.", NULL);
	g->m_waiting = metrics_gauge("ironbell_grpc_long_polls",
				     "GetAction calls waiting for work (long polls).", NULL);
	*ret = g;
	return 0;
out:
	wf_grpc_free(g);
	return e;
}

unsigned wf_grpc_port(const struct wf_grpc *g)
{
	return g->port;
}

int wf_grpc_start(struct wf_grpc *g, char *err, size_t errlen)
{
	int e = -pthread_create(&g->thread, NULL, grpc_main, g);
	if (e < 0) {
		snprintf(err, errlen, "cannot start the gRPC thread: %s", strerror(-e));
		return e;
	}
	g->started = true;
	log_info("grpc", "worker API on %s (%s)", g->listen, g->ssl_ctx ? "TLS" : "h2c");
	return 0;
}

void wf_grpc_free(struct wf_grpc *g)
{
	if (!g)
		return;
	if (g->started) {
		uint64_t one = 1;
		if (write(g->stopfd, &one, sizeof(one)) < 0)
			log_warn("grpc", "stop: %s", strerror(errno));
		pthread_join(g->thread, NULL);
	}
	wf_grpc_api_free(g->api);
	if (g->epfd >= 0)
		close(g->epfd);
	if (g->stopfd >= 0)
		close(g->stopfd);
	if (g->lfd >= 0)
		close(g->lfd);
	SSL_CTX_free(g->ssl_ctx);
	free(g->listen);
	free(g->tls_cert);
	free(g->tls_key);
	free(g);
}
