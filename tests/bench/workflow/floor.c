/* floor — the least a worker-protocol server can do: the floor the
 * workflow benchmark (tests/bench/workflow/run.sh) measures ironbelld
 * against.
 *
 * DESIGN: one thread, one epoll loop, non-blocking sockets, an nghttp2
 * server session per connection (h2c with prior knowledge), protobuf-c
 * for the messages: the libraries ironbelld's gRPC listener is built
 * on, with nothing of a store, an engine or a template behind them.
 * Every agent that asks gets a canned workflow of -a actions, kept in
 * memory (a hash of agent IDs to the next action's index): GetAction
 * answers the next action (workflow "default/bench-<agent>", task
 * "task-0", action "action-<i>", image busybox, command ["true"],
 * timeout 60), or NOT_FOUND once all are done; ReportActionStatus of
 * that action is accepted, and SUCCESS moves the agent to the next one;
 * a report of another action is FAILED_PRECONDITION, of an unknown agent
 * NOT_FOUND. Answers as a gRPC server does: HEADERS, DATA, then trailers
 * with grpc-status 0; an error is trailers-only. Output is gathered with
 * nghttp2_session_mem_send() and written in one write() a turn. A
 * request is checked and decoded by tink_decode() (common/grpc.h), as
 * ironbelld decodes it.
 *
 * Prints "port N" on stdout once it listens; runs until SIGTERM or
 * SIGINT, then prints the calls it answered on stderr.
 *
 * Usage: floor [-h 127.0.0.1] [-p 0] [-a 10] [-n 100000]
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/num.h"
#include "common/tink.pb-c.h"
#include "tests/bench/workflow/h2bench.h"

#define FLOOR_MAX_AGENTS 1000000u
#define FLOOR_MAX_ACTIONS 100000u
#define OUT_BATCH (32u * 1024u)
#define OUT_CAP (64u * 1024u)
#define EVENTS_MAX 256

enum method { M_NONE, M_GET, M_REPORT };

struct stream {
	enum method method;
	bool bad;
	uint8_t *in;
	size_t in_len;
	uint8_t *out;
	size_t out_len, out_off;
};

struct conn {
	int fd;
	nghttp2_session *h2;
	uint8_t *out; /* grown to OUT_CAP at most */
	size_t out_len, out_off, out_cap;
};

struct slot {
	char *id;
	unsigned next;
};

static struct {
	unsigned actions;
	struct slot *table;
	size_t size, used, cap;
	unsigned long long calls[3], errors;
	nghttp2_session_callbacks *cbs;
} fl;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- the agents' progress ---- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return h;
}

/* The agent's slot, made when create; NULL when absent or full. */
static struct slot *lookup(const char *id, bool create)
{
	size_t i = hash(id) & (fl.size - 1);

	for (size_t k = 0; k < fl.size; k++, i = (i + 1) & (fl.size - 1)) {
		struct slot *s = &fl.table[i];
		if (!s->id) {
			if (!create || fl.used >= fl.cap || !(s->id = strdup(id)))
				return NULL;
			fl.used++;
			return s;
		}
		if (!strcmp(s->id, id))
			return s;
	}
	return NULL;
}

/* ---- answers ---- */

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}

static ssize_t out_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			nghttp2_data_source *src, void *ud)
{
	struct stream *st = src->ptr;
	size_t n = st->out_len - st->out_off;
	(void)ud;

	if (n > len)
		n = len;
	memcpy(buf, st->out + st->out_off, n);
	st->out_off += n;
	if (st->out_off == st->out_len) {
		nghttp2_nv tr[] = {NV("grpc-status", "0")};
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(s, id, tr, 1) != 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

/* Trailers-only: the status and why, in the one HEADERS frame. */
static int answer_error(nghttp2_session *s, int32_t id, int code, const char *msg)
{
	char c[8];
	snprintf(c, sizeof(c), "%d", code);
	nghttp2_nv h[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
			  NV("grpc-status", c), NV("grpc-message", msg)};
	fl.errors++;
	return nghttp2_submit_response(s, id, h, 4, NULL);
}

static int answer(nghttp2_session *s, int32_t id, struct stream *st, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	nghttp2_nv h[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
	nghttp2_data_provider prd = {.source.ptr = st, .read_callback = out_read};

	if (len + 5 > H2B_MSG_MAX || !(st->out = malloc(len + 5)))
		return answer_error(s, id, GRPC_RESOURCE_EXHAUSTED, "answer too long");
	grpc_prefix_write(st->out, (uint32_t)len);
	protobuf_c_message_pack(m, st->out + 5);
	st->out_len = len + 5;
	return nghttp2_submit_response(s, id, h, 2, &prd);
}

static int get_action(nghttp2_session *s, int32_t id, struct stream *st, const uint8_t *p, size_t n)
{
	Proto__ActionRequest *rq = NULL;
	Proto__ActionResponse r = PROTO__ACTION_RESPONSE__INIT;
	char wf[320], action[32];
	char *cmd[] = {"true"};
	struct slot *a;
	int ret;

	if (tink_decode(TINK_MSG_ACTION_REQUEST, p, n, (ProtobufCMessage **)&rq, NULL) < 0 ||
	    !rq->agent_id[0]) {
		ret = answer_error(s, id, GRPC_INVALID_ARGUMENT, "no agent_id");
		goto out;
	}
	a = lookup(rq->agent_id, true);
	if (!a) {
		ret = answer_error(s, id, GRPC_RESOURCE_EXHAUSTED, "too many agents");
		goto out;
	}
	if (a->next >= fl.actions) {
		ret = answer_error(s, id, GRPC_NOT_FOUND, "no workflow for this agent");
		goto out;
	}
	snprintf(wf, sizeof(wf), "default/bench-%s", rq->agent_id);
	snprintf(action, sizeof(action), "action-%u", a->next);
	r.workflow_id = wf;
	r.task_id = "task-0";
	r.agent_id = rq->agent_id;
	r.action_id = action;
	r.name = action;
	r.image = "busybox";
	r.timeout = 60;
	r.n_command = 1;
	r.command = cmd;
	ret = answer(s, id, st, &r.base);
out:
	if (rq)
		proto__action_request__free_unpacked(rq, NULL);
	return ret;
}

static int report(nghttp2_session *s, int32_t id, struct stream *st, const uint8_t *p, size_t n)
{
	Proto__ActionStatusRequest *rq = NULL;
	Proto__ActionStatusResponse r = PROTO__ACTION_STATUS_RESPONSE__INIT;
	char action[32];
	struct slot *a;
	int ret;

	if (tink_decode(TINK_MSG_ACTION_STATUS_REQUEST, p, n, (ProtobufCMessage **)&rq, NULL) < 0 ||
	    !rq->agent_id[0] || !rq->action_id[0]) {
		ret = answer_error(s, id, GRPC_INVALID_ARGUMENT, "empty IDs");
		goto out;
	}
	a = lookup(rq->agent_id, false);
	if (!a) {
		ret = answer_error(s, id, GRPC_NOT_FOUND, "no workflow for this agent");
		goto out;
	}
	snprintf(action, sizeof(action), "action-%u", a->next);
	if (strcmp(rq->action_id, action)) {
		ret = answer_error(s, id, GRPC_FAILED_PRECONDITION, "not the action handed out");
		goto out;
	}
	if (rq->action_state == PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__SUCCESS)
		a->next++;
	ret = answer(s, id, st, &r.base);
out:
	if (rq)
		proto__action_status_request__free_unpacked(rq, NULL);
	return ret;
}

/* ---- nghttp2 callbacks ---- */

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct stream *st;
	(void)ud;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	(void)flags, (void)ud;

	if (!st || f->hd.type != NGHTTP2_HEADERS || nlen != 5 || memcmp(name, ":path", 5))
		return 0;
	if (vlen == strlen(GRPC_PATH_GET_ACTION) && !memcmp(value, GRPC_PATH_GET_ACTION, vlen))
		st->method = M_GET;
	else if (vlen == strlen(GRPC_PATH_REPORT_ACTION_STATUS) &&
		 !memcmp(value, GRPC_PATH_REPORT_ACTION_STATUS, vlen))
		st->method = M_REPORT;
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
		   void *ud)
{
	struct stream *st = nghttp2_session_get_stream_user_data(s, id);
	(void)flags, (void)ud;

	if (!st || st->bad)
		return 0;
	if (st->in_len + len > H2B_MSG_MAX) {
		st->bad = true;
		return 0;
	}
	if (!st->in && !(st->in = malloc(H2B_MSG_MAX)))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	memcpy(st->in + st->in_len, data, len);
	st->in_len += len;
	return 0;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct stream *st;
	const uint8_t *msg;
	size_t len;
	int32_t id = f->hd.stream_id;
	(void)ud;

	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(s, id);
	if (!st)
		return 0;
	fl.calls[st->method]++;
	if (st->method == M_NONE)
		return answer_error(s, id, GRPC_UNIMPLEMENTED, "unknown method") ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
	if (st->bad || h2b_unprefix(st->in, st->in_len, &msg, &len) < 0)
		return answer_error(s, id, GRPC_INVALID_ARGUMENT, "not one message") ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
	int r = st->method == M_GET ? get_action(s, id, st, msg, len) : report(s, id, st, msg, len);
	return r ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *ud)
{
	struct stream *st = nghttp2_session_get_stream_user_data(s, id);
	(void)error_code, (void)ud;

	if (st) {
		free(st->in);
		free(st->out);
		free(st);
	}
	return 0;
}

/* ---- connections ---- */

static void conn_close(struct conn *c)
{
	nghttp2_session_del(c->h2);
	close(c->fd);
	free(c->out);
	free(c);
}

static int conn_flush(struct conn *c)
{
	for (;;) {
		if (c->out_off == c->out_len) {
			c->out_off = c->out_len = 0;
			while (c->out_len < OUT_BATCH) {
				const uint8_t *d;
				ssize_t n = nghttp2_session_mem_send(c->h2, &d);
				if (n < 0)
					return -EPROTO;
				if (n == 0)
					break;
				if (c->out_len + (size_t)n > c->out_cap) {
					size_t cap = c->out_len + (size_t)n <= 4096 ? 4096 : OUT_CAP;
					uint8_t *p;
					if (c->out_len + (size_t)n > cap || !(p = realloc(c->out, cap)))
						return -ENOMEM; /* a frame over 32 KiB: not ours */
					c->out = p;
					c->out_cap = cap;
				}
				memcpy(c->out + c->out_len, d, (size_t)n);
				c->out_len += (size_t)n;
			}
			if (c->out_len == 0)
				return nghttp2_session_want_read(c->h2) ? 0 : -ECONNRESET;
		}
		ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
		if (w < 0) {
			if (errno == EAGAIN)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->out_off += (size_t)w;
	}
}

static void conn_event(struct conn *c, uint32_t events)
{
	static uint8_t buf[64 * 1024];

	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		for (;;) {
			ssize_t n = read(c->fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n <= 0 || nghttp2_session_mem_recv(c->h2, buf, (size_t)n) < 0) {
				conn_close(c);
				return;
			}
			if ((size_t)n < sizeof(buf))
				break; /* drained: more data is a new edge */
		}
	}
	if (conn_flush(c) < 0)
		conn_close(c);
}

static void accept_all(int lfd, int ep)
{
	nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
	int one = 1;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; /* EAGAIN, or EMFILE: the rest wait */
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct conn *c = calloc(1, sizeof(*c));
		if (!c || nghttp2_session_server_new(&c->h2, fl.cbs, c) != 0) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c};
		if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, 1) != 0 ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			conn_close(c);
			continue;
		}
	}
}

static int listen_on(const char *host, uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int one = 1, fd;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static void usage(void)
{
	fprintf(stderr, "usage: floor [-h 127.0.0.1] [-p port (0: any)] [-a actions] [-n agents]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1";
	uint64_t v, port = 0, agents = 100000;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct epoll_event evs[EVENTS_MAX];
	int c, lfd, ep;

	fl.actions = 10;
	while ((c = getopt(argc, argv, "h:p:a:n:")) != -1) {
		switch (c) {
		case 'h': host = optarg; break;
		case 'p':
			if (num_parse_u64_str(optarg, 65535, &port) < 0)
				usage();
			break;
		case 'a':
			if (num_parse_u64_str(optarg, FLOOR_MAX_ACTIONS, &v) < 0)
				usage();
			fl.actions = (unsigned)v;
			break;
		case 'n':
			if (num_parse_u64_str(optarg, FLOOR_MAX_AGENTS, &agents) < 0 || !agents)
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	fl.cap = agents;
	for (fl.size = 16; fl.size < 2 * agents; fl.size *= 2)
		;
	fl.table = calloc(fl.size, sizeof(*fl.table));
	if (!fl.table)
		return 1;

	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	lfd = listen_on(host, (uint16_t)port);
	if (lfd < 0) {
		fprintf(stderr, "floor: cannot listen on %s:%u: %s\n", host, (unsigned)port, strerror(-lfd));
		return 1;
	}
	getsockname(lfd, (struct sockaddr *)&sa, &sl);
	ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) < 0) {
		perror("floor: epoll");
		return 1;
	}
	nghttp2_session_callbacks_new(&fl.cbs);
	nghttp2_session_callbacks_set_on_begin_headers_callback(fl.cbs, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(fl.cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(fl.cbs, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(fl.cbs, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(fl.cbs, on_close);

	printf("port %u\n", ntohs(sa.sin_port));
	fflush(stdout);
	while (!stop) {
		int n = epoll_wait(ep, evs, EVENTS_MAX, 200);
		for (int i = 0; i < n; i++) {
			if (!evs[i].data.ptr)
				accept_all(lfd, ep);
			else
				conn_event(evs[i].data.ptr, evs[i].events);
		}
	}
	fprintf(stderr, "floor: GetAction %llu, ReportActionStatus %llu, unknown %llu, errors %llu, agents %zu\n",
		fl.calls[M_GET], fl.calls[M_REPORT], fl.calls[M_NONE], fl.errors, fl.used);
	return 0;
}
