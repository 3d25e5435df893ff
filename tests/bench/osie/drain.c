/* drain — a download client for the OSIE benchmark
 * (tests/bench/osie/run.sh) that costs little per byte, so that the
 * servers, not the client, set the throughput.
 *
 * wrk reads a body 8 KiB per read() and copies every byte into user
 * space; with 200 clients pulling a 256 MiB file it used 1.5 to 1.8 of
 * this machine's 2 cores, and the throughput it measured was its own.
 * drain asks for the same file, but drops each body in the kernel:
 * recv(MSG_TRUNC) on a TCP socket discards up to len bytes of the
 * receive queue without copying them (Linux tcp_recvmsg), and still
 * moves the window and sends the ACKs as a read does. So what the client
 * costs is its system calls and the kernel's receive work, which any
 * client pays.
 *
 * DESIGN: one thread, one epoll loop, -c non-blocking connections to
 * one http://IPv4:port/path, each asking for it again and again with
 * HTTP/1.1 keep-alive until -d seconds are up (a new connection when
 * the server closes one, or answers "Connection: close"). A response's
 * head is read into a buffer of HEAD_MAX bytes and checked with a
 * cursor: the status line must be "HTTP/1.x 200", and Content-Length
 * must be there (a chunked or unbounded body is refused as an error).
 * Every body byte is then received with MSG_TRUNC, never more than the
 * body has left, so the next response's head is never dropped with it.
 * A connection that fails (refused, reset, a short body, a bad head)
 * counts an error and is made anew; more than MAX_ERRORS errors end the
 * run.
 *
 * Prints one line on stdout: connections, seconds, downloads completed,
 * body bytes received (whole and partial downloads), errors, and the
 * fewest and most downloads and MiB of one connection (how evenly the
 * server shared itself out). Exit 0 when
 * body bytes came and no error was counted, else 1 (at 200 clients a
 * 256 MiB file takes longer than a short run to come whole: the bytes,
 * not the downloads, are what is measured).
 *
 * Usage: drain -c CONNECTIONS -d SECONDS http://A.B.C.D:PORT/PATH
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 4096
#define REQ_MAX 1024
#define CONNS_MAX 10000
#define SECS_MAX 3600
#define MAX_ERRORS 1000
#define EVENTS_MAX 256
#define TRUNC_MAX (64u << 20) /* bytes one recv(MSG_TRUNC) may drop */

enum state { S_CONNECTING, S_SENDING, S_HEAD, S_BODY };

struct conn {
	int fd;
	enum state state;
	size_t sent;       /* bytes of the request written */
	size_t head_len;   /* bytes in head[] */
	uint64_t left;     /* body bytes still to drop */
	bool close_after;  /* the server said Connection: close */
	uint32_t events;   /* what epoll waits for on fd */
	uint64_t done;     /* downloads completed on this client */
	uint64_t bytes;    /* body bytes it received */
	char head[HEAD_MAX];
};

static struct sockaddr_in srv;
static char req[REQ_MAX];
static size_t req_len;
static int ep = -1;
static uint64_t downloads, body_bytes, errors;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parses "http://A.B.C.D:PORT/PATH" into srv and the request. 0 or -1. */
static int parse_url(const char *url)
{
	const char *p, *slash, *colon;
	char host[INET_ADDRSTRLEN];
	unsigned long port;
	char *end;
	int n;

	if (strncmp(url, "http://", 7) != 0)
		return -1;
	p = url + 7;
	slash = strchr(p, '/');
	colon = memchr(p, ':', slash ? (size_t)(slash - p) : strlen(p));
	if (!slash || !colon || (size_t)(colon - p) >= sizeof(host))
		return -1;
	memcpy(host, p, (size_t)(colon - p));
	host[colon - p] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end != slash || port == 0 || port > 65535)
		return -1;
	memset(&srv, 0, sizeof(srv));
	srv.sin_family = AF_INET;
	srv.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &srv.sin_addr) != 1)
		return -1;
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%lu\r\nAccept: */*\r\n\r\n",
		     slash, host, port);
	if (n < 0 || (size_t)n >= sizeof(req))
		return -1;
	req_len = (size_t)n;
	return 0;
}

/* Opens c's connection (non-blocking) and registers it. 0 or -1. */
/* Sets the events c waits for, when they change. */
static int conn_want(struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events | EPOLLRDHUP, .data.ptr = c };

	if (c->events == ev.events)
		return 0;
	c->events = ev.events;
	return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static int conn_open(struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLRDHUP, .data.ptr = c };

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -1;
	if (connect(c->fd, (struct sockaddr *)&srv, sizeof(srv)) < 0 && errno != EINPROGRESS) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	c->state = S_CONNECTING;
	c->sent = 0;
	c->head_len = 0;
	c->left = 0;
	c->close_after = false;
	c->events = ev.events;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd); /* leaves the epoll set with it */
	c->fd = -1;
}

/* A failed connection: counted, and made anew. */
static void conn_fail(struct conn *c, const char *why)
{
	if (errors < 5)
		fprintf(stderr, "drain: %s\n", why);
	errors++;
	conn_close(c);
	if (errors <= MAX_ERRORS)
		(void)conn_open(c);
}

/* Case-insensitive compare of n bytes. */
static bool eq_ci(const char *a, const char *b, size_t n)
{
	return strncasecmp(a, b, n) == 0;
}

/* Reads c's head[0, end) (without its blank line): the status must be
 * 200, Content-Length present. 0 or -1 (why says). */
static int parse_head(struct conn *c, size_t end, const char **why)
{
	const char *h = c->head, *line = h, *lim = h + end;
	bool have_len = false;

	/* "HTTP/1.x 200 " */
	if (end < 13 || memcmp(h, "HTTP/1.", 7) != 0 || memcmp(h + 8, " 200", 4) != 0 ||
	    (h[12] != ' ' && h[12] != '\r')) {
		*why = "a status other than 200";
		return -1;
	}
	while (line < lim) {
		const char *eol = memchr(line, '\n', (size_t)(lim - line));
		const char *e = eol ? eol : lim, *v, *colon;
		size_t klen;

		if (e > line && e[-1] == '\r')
			e--;
		colon = memchr(line, ':', (size_t)(e - line));
		if (colon) {
			klen = (size_t)(colon - line);
			v = colon + 1;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			if (klen == 14 && eq_ci(line, "Content-Length", 14)) {
				uint64_t n = 0;
				if (v == e) {
					*why = "an empty Content-Length";
					return -1;
				}
				for (; v < e; v++) {
					if (*v < '0' || *v > '9' || n > (UINT64_MAX - 9) / 10) {
						*why = "a bad Content-Length";
						return -1;
					}
					n = n * 10 + (uint64_t)(*v - '0');
				}
				c->left = n;
				have_len = true;
			} else if (klen == 17 && eq_ci(line, "Transfer-Encoding", 17)) {
				*why = "a chunked body (not measured)";
				return -1;
			} else if (klen == 10 && eq_ci(line, "Connection", 10) && (size_t)(e - v) >= 5 &&
				   eq_ci(v, "close", 5)) {
				c->close_after = true;
			}
		}
		line = eol ? eol + 1 : lim;
	}
	if (!have_len) {
		*why = "no Content-Length";
		return -1;
	}
	return 0;
}

/* The download is complete: counted, and the next one asked. */
static void conn_done(struct conn *c)
{
	downloads++;
	c->done++;
	if (c->close_after) {
		conn_close(c);
		if (conn_open(c) < 0)
			conn_fail(c, "cannot open a connection");
		return;
	}
	c->state = S_SENDING;
	c->sent = 0;
	c->head_len = 0;
}

/* Drops what the body has left of the receive queue. 1: more to come,
 * 0: the body is whole, -1: the connection failed. */
static int body_drop(struct conn *c)
{
	while (c->left > 0) {
		size_t want = c->left > TRUNC_MAX ? TRUNC_MAX : (size_t)c->left;
		ssize_t n = recv(c->fd, NULL, want, MSG_TRUNC | MSG_DONTWAIT);
		if (n > 0) {
			if ((uint64_t)n > c->left)
				return -1; /* never: MSG_TRUNC drops at most want */
			c->left -= (uint64_t)n;
			c->bytes += (uint64_t)n;
			body_bytes += (uint64_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		return -1; /* EOF or an error before the body's end */
	}
	return 0;
}

/* Moves c on after an epoll event: as far as it goes without waiting. */
static void conn_step(struct conn *c)
{
	for (;;) {
		switch (c->state) {
		case S_CONNECTING: {
			int err = 0;
			socklen_t len = sizeof(err);
			if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
				conn_fail(c, "connect failed");
				return;
			}
			c->state = S_SENDING;
			break;
		}
		case S_SENDING: {
			ssize_t n = send(c->fd, req + c->sent, req_len - c->sent, MSG_NOSIGNAL);
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				if (conn_want(c, EPOLLOUT) < 0)
					conn_fail(c, "epoll_ctl failed");
				return;
			}
			if (n <= 0) {
				conn_fail(c, "send failed");
				return;
			}
			c->sent += (size_t)n;
			if (c->sent < req_len)
				break;
			c->state = S_HEAD;
			if (conn_want(c, EPOLLIN) < 0) {
				conn_fail(c, "epoll_ctl failed");
				return;
			}
			break;
		}
		case S_HEAD: {
			const char *why = NULL, *eoh;
			ssize_t n = recv(c->fd, c->head + c->head_len, sizeof(c->head) - c->head_len,
					 MSG_DONTWAIT);
			size_t hl, extra;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return;
			if (n <= 0) {
				conn_fail(c, "the server closed before answering");
				return;
			}
			c->head_len += (size_t)n;
			eoh = memmem(c->head, c->head_len, "\r\n\r\n", 4);
			if (!eoh) {
				if (c->head_len == sizeof(c->head)) {
					conn_fail(c, "a response head over 4 KiB");
					return;
				}
				break; /* the rest of the head: read on */
			}
			hl = (size_t)(eoh - c->head) + 4;
			if (parse_head(c, hl - 4, &why) < 0) {
				conn_fail(c, why);
				return;
			}
			/* The body's first bytes came with the head (read, not
			 * dropped: at most 4 KiB). */
			extra = c->head_len - hl;
			if (extra > c->left) {
				conn_fail(c, "more bytes than the body's length");
				return;
			}
			c->left -= extra;
			c->bytes += extra;
			body_bytes += extra;
			c->state = S_BODY;
			break;
		}
		case S_BODY: {
			int r = body_drop(c);
			if (r > 0)
				return;
			if (r < 0) {
				conn_fail(c, "the body ended early");
				return;
			}
			conn_done(c);
			if (c->fd < 0)
				return;
			if (c->state == S_CONNECTING)
				return; /* a new connection: its own events */
			break;
		}
		}
	}
}

int main(int argc, char **argv)
{
	struct epoll_event evs[EVENTS_MAX];
	unsigned long conns = 0, secs = 0;
	struct conn *cs;
	double t0, end;
	int opt;

	while ((opt = getopt(argc, argv, "c:d:")) != -1) {
		char *e;
		switch (opt) {
		case 'c':
			conns = strtoul(optarg, &e, 10);
			if (*e || conns == 0 || conns > CONNS_MAX)
				goto usage;
			break;
		case 'd':
			secs = strtoul(optarg, &e, 10);
			if (*e || secs == 0 || secs > SECS_MAX)
				goto usage;
			break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || !conns || !secs)
		goto usage;
	if (parse_url(argv[optind]) < 0) {
		fprintf(stderr, "drain: %s: not http://A.B.C.D:PORT/PATH\n", argv[optind]);
		return 2;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	cs = calloc(conns, sizeof(*cs));
	if (ep < 0 || !cs) {
		perror("drain");
		return 2;
	}
	for (unsigned long i = 0; i < conns; i++) {
		cs[i].fd = -1;
		if (conn_open(&cs[i]) < 0)
			conn_fail(&cs[i], "cannot open a connection");
	}
	t0 = now_s();
	end = t0 + (double)secs;
	while (errors <= MAX_ERRORS) {
		double left = end - now_s();
		int n;
		if (left <= 0)
			break;
		n = epoll_wait(ep, evs, EVENTS_MAX, (int)(left * 1000) + 1);
		if (n < 0 && errno != EINTR) {
			perror("drain: epoll_wait");
			return 2;
		}
		for (int i = 0; i < n; i++)
			conn_step(evs[i].data.ptr);
	}
	uint64_t bmin = UINT64_MAX, bmax = 0, dmin = UINT64_MAX, dmax = 0;
	for (unsigned long i = 0; i < conns; i++) {
		conn_close(&cs[i]);
		bmin = cs[i].bytes < bmin ? cs[i].bytes : bmin;
		bmax = cs[i].bytes > bmax ? cs[i].bytes : bmax;
		dmin = cs[i].done < dmin ? cs[i].done : dmin;
		dmax = cs[i].done > dmax ? cs[i].done : dmax;
	}
	printf("drain: %lu connections, %.1f s: %llu downloads, %llu body bytes, %llu errors; "
	       "per connection %llu-%llu downloads, %.0f-%.0f MiB\n",
	       conns, now_s() - t0, (unsigned long long)downloads, (unsigned long long)body_bytes,
	       (unsigned long long)errors, (unsigned long long)dmin, (unsigned long long)dmax,
	       (double)bmin / 1048576.0, (double)bmax / 1048576.0);
	free(cs);
	return body_bytes > 0 && errors == 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: drain -c CONNECTIONS -d SECONDS http://A.B.C.D:PORT/PATH\n");
	return 2;
}
