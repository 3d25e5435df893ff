/* agents — simulated tink-agents: the load generator of the workflow
 * benchmark (tests/bench/workflow/run.sh).
 *
 * DESIGN: N agents, each with its own HTTP/2 connection (h2c with prior
 * knowledge: the client preface and SETTINGS straight after connect, as
 * grpc-go does without TLS), each running tink-agent's loop with empty
 * actions: GetAction(agent_id) -> ReportActionStatus RUNNING ->
 * ReportActionStatus SUCCESS, then GetAction again, until it has done
 * -a actions (or, with -a 0, until GetAction answers NOT_FOUND). One
 * request in flight per agent, as tink-agent has. The agents are shared
 * out over -t threads (agent i on thread i % t), each with one epoll loop
 * on non-blocking sockets and nghttp2 client sessions whose output is
 * gathered with nghttp2_session_mem_send() and written in one write() a
 * turn. An answer FAILED_PRECONDITION, UNAVAILABLE, ABORTED,
 * RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED (the server's "not yet") is
 * retried after -r ms; a lost connection is made again (at most
 * AGENT_MAX_RECONNECTS times) and the request sent again; any other
 * error ends that agent. Everything stops at the deadline (-d seconds).
 *
 * Measures: actions completed (SUCCESS reported and accepted) per second
 * from the start to the last completion; the latency of each GetAction
 * that handed out an action, and of each report, from the request's
 * submission (sent in the same turn) to the end of its stream;
 * the answers that were not OK by grpc-status; the process's CPU time
 * (getrusage) and the busiest thread's share of one core (near 100%:
 * the client, not the server, was the limit; run more threads). Prints
 * one JSON line on stdout. Asserts nothing about time.
 *
 * The agent IDs are the MACs tests/gen-hardware.sh gives Hardware number
 * i, for i = -f .. -f + N - 1, so the Workflows of the fixtures
 * (hardwareMap device_1 = that MAC) are theirs.
 *
 * Usage: agents -p PORT [-h 127.0.0.1] [-n 1000] [-a 10] [-t 1] [-d 120]
 *               [-f 1] [-r 100] [-R actions/s] [-T grpc-timeout]
 *
 * Without -R the agents go as fast as the server lets them (a closed
 * loop: each agent's next call follows the answer to its last), which
 * measures the most actions per second; their latency is then mostly
 * the queue of 1,000 calls in flight (Little's law: in flight / rate).
 * With -R the agents are paced to that many actions per second in all
 * (each agent's GetActions n/R seconds apart, the agents spread evenly
 * over that interval, as agents whose actions take time would be; the
 * first second is for connecting, and is not counted), and
 * a GetAction's latency counts from when it was due, not from when it
 * was sent, so a server that falls behind is charged with the wait.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <pthread.h>
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

#define AGENTS_MAX 100000u
#define THREADS_MAX 64u
#define AGENT_MAX_RECONNECTS 3
#define AGENT_MAX_ACTIONS 1000000u /* with -a 0: a workflow this long is an error */
#define ID_MAX 320u                /* an ID or name the server hands out */
#define OUT_BATCH (32u * 1024u)    /* bytes gathered before a write() */
#define OUT_CAP (64u * 1024u)      /* OUT_BATCH + the largest frame */
#define SAMPLES_MAX (1u << 24)     /* latencies kept per thread */
#define EVENTS_MAX 256
/* Go's zero time.Time in seconds since 1970: the execution_stop that
 * tink-agent sends with RUNNING. */
#define GO_ZERO_TIME_S (-62135596800LL)
/* Paced: the connections are made in this time; the first actions are
 * due from its end on, and the rate is counted from there. */
#define PACE_START_NS 1000000000u

enum phase { PH_GET, PH_RUNNING, PH_SUCCESS, PH_DONE, PH_FAILED };
enum conn { C_NONE, C_CONNECTING, C_UP };

/* Not-OK outcomes beyond the gRPC codes (errors[] after GRPC_CODE_MAX). */
enum {
	E_RST = GRPC_CODE_MAX, /* the stream reset, or the connection lost under it */
	E_HTTP,                /* :status not 200 */
	E_NOSTATUS,            /* ended without grpc-status */
	E_BADMSG,              /* an answer that does not decode */
	E_CONNECT,             /* a connect() that failed */
	E_MAX
};
static const char *const extra_names[] = {"RST_STREAM", "HTTP_STATUS", "NO_GRPC_STATUS",
					  "BAD_MESSAGE", "CONNECT"};

struct samples {
	uint32_t *v; /* microseconds */
	size_t n, cap;
};

struct worker;

struct agent {
	struct worker *w;
	char id[24];
	int fd;
	enum conn conn;
	enum phase phase;
	nghttp2_session *h2;
	int32_t stream;
	uint64_t sent_ns, retry_at;
	uint64_t offset_ns; /* paced: this agent's slot in each interval */
	unsigned done, reconnects;
	/* the request: prefix and message, and how much nghttp2 has taken */
	uint8_t *req;
	size_t req_len, req_off;
	/* the answer */
	int http_status, grpc_status;
	uint8_t *resp;
	size_t resp_len, resp_cap;
	bool resp_bad;
	/* output waiting for the socket */
	uint8_t *out;
	size_t out_len, out_off, out_cap;
	/* the action handed out */
	char wf_id[ID_MAX], task_id[ID_MAX], action_id[ID_MAX], name[ID_MAX];
	struct timespec start; /* when it was reported RUNNING */
};

struct opts {
	struct sockaddr_in addr;
	char authority[64];
	unsigned agents, actions, threads, first;
	uint64_t deadline_ns, retry_ns;
	uint64_t interval_ns; /* paced (-R): one action per agent per interval */
	const char *grpc_timeout;
};

struct worker {
	pthread_t tid;
	const struct opts *o;
	struct agent *agents; /* this thread's */
	size_t n;
	int ep;
	uint64_t t0, deadline;
	unsigned active, waiting;
	uint64_t next_timer; /* no timer is due before */
	/* results */
	struct samples get_lat, rep_lat;
	uint64_t errors[E_MAX];
	uint64_t completed, last_ns, connected_ns, reconnects;
	unsigned done, failed, connected;
	double cpu_s;
};

static nghttp2_session_callbacks *callbacks;

static void sample(struct samples *s, uint64_t ns)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		uint32_t *v;
		if (cap > SAMPLES_MAX || !(v = realloc(s->v, cap * sizeof(*v))))
			return; /* the histogram is full: later samples are not kept */
		s->v = v;
		s->cap = cap;
	}
	uint64_t us = ns / 1000;
	s->v[s->n++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* ---- output ---- */

/* Gathers nghttp2's frames and writes them: 0, or a negative errno
 * when the connection is gone. */
static int flush(struct agent *a)
{
	for (;;) {
		if (a->out_off == a->out_len) {
			a->out_off = a->out_len = 0;
			while (a->out_len < OUT_BATCH) {
				const uint8_t *d;
				ssize_t n = nghttp2_session_mem_send(a->h2, &d);
				if (n < 0)
					return -EPROTO;
				if (n == 0)
					break;
				if (a->out_len + (size_t)n > a->out_cap) {
					size_t cap = a->out_len + (size_t)n < 4096 ? 4096 : OUT_CAP;
					uint8_t *p;
					if (a->out_len + (size_t)n > cap || !(p = realloc(a->out, cap)))
						return -ENOMEM;
					a->out = p;
					a->out_cap = cap;
				}
				memcpy(a->out + a->out_len, d, (size_t)n);
				a->out_len += (size_t)n;
			}
			if (a->out_len == 0)
				return 0;
		}
		ssize_t wr = write(a->fd, a->out + a->out_off, a->out_len - a->out_off);
		if (wr < 0) {
			if (errno == EAGAIN)
				return 0; /* EPOLLOUT (edge-triggered) calls again */
			if (errno == EINTR)
				continue;
			return -errno;
		}
		a->out_off += (size_t)wr;
	}
}

/* ---- requests ---- */

/* When the agent's next GetAction is due (paced), or 0. */
static uint64_t sched(const struct agent *a)
{
	const struct opts *o = a->w->o;
	return o->interval_ns ? a->w->t0 + PACE_START_NS + a->offset_ns + a->done * o->interval_ns : 0;
}

static ssize_t req_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			nghttp2_data_source *src, void *ud)
{
	struct agent *a = src->ptr;
	size_t n = a->req_len - a->req_off;
	(void)s, (void)id, (void)ud;

	if (n > len)
		n = len;
	memcpy(buf, a->req + a->req_off, n);
	a->req_off += n;
	if (a->req_off == a->req_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}

/* Packs the request of the agent's phase and submits it. 0 or -errno. */
static int issue(struct agent *a)
{
	const struct opts *o = a->w->o;
	Google__Protobuf__Timestamp ts_start = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	Google__Protobuf__Timestamp ts_stop = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	const ProtobufCMessage *m;
	Proto__ActionRequest get = PROTO__ACTION_REQUEST__INIT;
	Proto__ActionStatusRequest rep = PROTO__ACTION_STATUS_REQUEST__INIT;
	Proto__ActionMessage msg = PROTO__ACTION_MESSAGE__INIT;
	char duration[32];
	const char *path;

	a->sent_ns = h2b_now_ns();
	if (a->phase == PH_GET) {
		/* Paced: from the time the action was due, so that a server
		 * that falls behind is not excused by the wait it caused. */
		uint64_t due = sched(a);
		if (o->interval_ns && due < a->sent_ns)
			a->sent_ns = due;
		get.agent_id = a->id;
		m = &get.base;
		path = GRPC_PATH_GET_ACTION;
	} else {
		/* As tink-agent reports: a stop time of Go's zero time while
		 * RUNNING, a message always there, the duration as Go prints
		 * a time.Duration. */
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		rep.workflow_id = a->wf_id;
		rep.agent_id = a->id;
		rep.task_id = a->task_id;
		rep.action_id = a->action_id;
		rep.action_name = a->name;
		if (a->phase == PH_RUNNING) {
			a->start = now;
			rep.action_state = PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__RUNNING;
			ts_stop.seconds = GO_ZERO_TIME_S;
		} else {
			int64_t ns = (now.tv_sec - a->start.tv_sec) * 1000000000LL +
				     (now.tv_nsec - a->start.tv_nsec);
			rep.action_state = PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__SUCCESS;
			ts_stop.seconds = now.tv_sec;
			ts_stop.nanos = (int32_t)now.tv_nsec;
			snprintf(duration, sizeof(duration), "%.6gms", ns > 0 ? ns / 1e6 : 0.0);
			rep.execution_duration = duration;
		}
		ts_start.seconds = a->start.tv_sec;
		ts_start.nanos = (int32_t)a->start.tv_nsec;
		rep.execution_start = &ts_start;
		rep.execution_stop = &ts_stop;
		rep.message = &msg;
		m = &rep.base;
		path = GRPC_PATH_REPORT_ACTION_STATUS;
	}
	size_t len = protobuf_c_message_get_packed_size(m);
	if (len + 5 > H2B_MSG_MAX)
		return -EMSGSIZE;
	if (!a->req && !(a->req = malloc(H2B_MSG_MAX)))
		return -ENOMEM;
	grpc_prefix_write(a->req, (uint32_t)len);
	protobuf_c_message_pack(m, a->req + 5);
	a->req_len = len + 5;
	a->req_off = 0;

	nghttp2_nv hdrs[] = {
		NV(":method", "POST"),
		NV(":scheme", "http"),
		NV(":path", path),
		NV(":authority", o->authority),
		NV("content-type", "application/grpc"),
		NV("te", "trailers"),
		NV("user-agent", "ironbell-bench-agents"),
		NV("grpc-timeout", o->grpc_timeout ? o->grpc_timeout : ""),
	};
	size_t nh = sizeof(hdrs) / sizeof(hdrs[0]) - (o->grpc_timeout && a->phase == PH_GET ? 0 : 1);
	nghttp2_data_provider prd = {.source.ptr = a, .read_callback = req_read};
	a->http_status = a->grpc_status = -1;
	a->resp_len = 0;
	a->resp_bad = false;
	int32_t id = nghttp2_submit_request(a->h2, NULL, hdrs, nh, &prd, a);
	if (id < 0)
		return -EPROTO;
	a->stream = id;
	return 0;
}

/* ---- answers ---- */

static bool copy_id(char dst[ID_MAX], const char *src)
{
	size_t n = strlen(src);
	if (n >= ID_MAX)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

static int take_action(struct agent *a)
{
	const uint8_t *msg;
	size_t len;
	Proto__ActionResponse *r;
	int ret = -EBADMSG;

	if (a->resp_bad || h2b_unprefix(a->resp, a->resp_len, &msg, &len) < 0)
		return -EBADMSG;
	r = proto__action_response__unpack(NULL, len, msg);
	if (!r)
		return -EBADMSG;
	if (r->action_id[0] && copy_id(a->wf_id, r->workflow_id) && copy_id(a->task_id, r->task_id) &&
	    copy_id(a->action_id, r->action_id) && copy_id(a->name, r->name))
		ret = 0;
	proto__action_response__free_unpacked(r, NULL);
	return ret;
}

static void agent_end(struct agent *a, enum phase ph)
{
	if (a->phase >= PH_DONE)
		return;
	a->phase = ph;
	a->w->active--;
	if (ph == PH_DONE)
		a->w->done++;
	else
		a->w->failed++;
}

static void wait_until(struct agent *a, uint64_t t)
{
	a->retry_at = t;
	a->w->waiting++;
	if (t < a->w->next_timer)
		a->w->next_timer = t;
}

static void retry_later(struct agent *a)
{
	wait_until(a, h2b_now_ns() + a->w->o->retry_ns);
}

static bool retryable(int code)
{
	return code == GRPC_FAILED_PRECONDITION || code == GRPC_UNAVAILABLE ||
	       code == GRPC_ABORTED || code == GRPC_RESOURCE_EXHAUSTED ||
	       code == GRPC_DEADLINE_EXCEEDED;
}

/* The stream of the request in flight ended (error_code: its RST). */
static void complete(struct agent *a, uint32_t error_code)
{
	struct worker *w = a->w;
	uint64_t now = h2b_now_ns(), lat = now - a->sent_ns;
	const struct opts *o = w->o;

	a->stream = 0;
	if (error_code || a->http_status != 200 || a->grpc_status < 0) {
		w->errors[error_code ? E_RST : a->http_status != 200 ? E_HTTP : E_NOSTATUS]++;
		retry_later(a);
		return;
	}
	if (a->grpc_status != GRPC_OK) {
		int c = a->grpc_status < GRPC_CODE_MAX ? a->grpc_status : GRPC_UNKNOWN;
		w->errors[c]++;
		if (a->phase == PH_GET && c == GRPC_NOT_FOUND && o->actions == 0)
			agent_end(a, PH_DONE);
		else if (retryable(c))
			retry_later(a);
		else
			agent_end(a, PH_FAILED);
		return;
	}
	switch (a->phase) {
	case PH_GET:
		if (take_action(a) < 0) {
			w->errors[E_BADMSG]++;
			agent_end(a, PH_FAILED);
			return;
		}
		sample(&w->get_lat, lat);
		a->phase = PH_RUNNING;
		break;
	case PH_RUNNING:
		sample(&w->rep_lat, lat);
		a->phase = PH_SUCCESS;
		break;
	case PH_SUCCESS:
		sample(&w->rep_lat, lat);
		a->done++;
		w->completed++;
		w->last_ns = now;
		if ((o->actions && a->done == o->actions) || a->done >= AGENT_MAX_ACTIONS) {
			agent_end(a, o->actions ? PH_DONE : PH_FAILED);
			return;
		}
		a->phase = PH_GET;
		if (sched(a) > now) {
			wait_until(a, sched(a));
			return;
		}
		break;
	default:
		return;
	}
	if (issue(a) < 0)
		agent_end(a, PH_FAILED);
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct agent *a = ud;
	(void)s, (void)flags;

	if (f->hd.type != NGHTTP2_HEADERS || f->hd.stream_id != a->stream)
		return 0;
	if (nlen == 7 && !memcmp(name, ":status", 7))
		a->http_status = h2b_small_int(value, vlen);
	else if (nlen == 11 && !memcmp(name, "grpc-status", 11))
		a->grpc_status = h2b_small_int(value, vlen);
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
		   void *ud)
{
	struct agent *a = ud;
	(void)s, (void)flags;

	if (id != a->stream || a->resp_bad)
		return 0;
	if (a->resp_len + len > a->resp_cap) {
		size_t cap = a->resp_len + len <= 4096 ? 4096 : H2B_MSG_MAX;
		uint8_t *p;
		if (a->resp_len + len > cap || !(p = realloc(a->resp, cap))) {
			a->resp_bad = true; /* too long for the protocol */
			return 0;
		}
		a->resp = p;
		a->resp_cap = cap;
	}
	memcpy(a->resp + a->resp_len, data, len);
	a->resp_len += len;
	return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *ud)
{
	struct agent *a = ud;
	(void)s;

	if (id == a->stream)
		complete(a, error_code);
	return 0;
}

/* ---- connections ---- */

static void disconnect(struct agent *a)
{
	if (a->h2)
		nghttp2_session_del(a->h2);
	a->h2 = NULL;
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->conn = C_NONE;
	a->out_len = a->out_off = 0;
}

static int agent_connect(struct agent *a)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = a};
	int one = 1;

	a->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a->fd < 0)
		return -errno;
	setsockopt(a->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(a->fd, (const struct sockaddr *)&a->w->o->addr, sizeof(a->w->o->addr)) < 0 &&
	    errno != EINPROGRESS)
		goto fail;
	if (epoll_ctl(a->w->ep, EPOLL_CTL_ADD, a->fd, &ev) < 0)
		goto fail;
	a->conn = C_CONNECTING;
	return 0;
fail:;
	int e = -errno;
	close(a->fd);
	a->fd = -1;
	return e;
}

/* The connection is up: the session, its SETTINGS, and the request of
 * the agent's phase. */
static int agent_up(struct agent *a)
{
	nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};

	if (nghttp2_session_client_new(&a->h2, callbacks, a) != 0)
		return -ENOMEM;
	if (nghttp2_submit_settings(a->h2, NGHTTP2_FLAG_NONE, iv, 1) != 0)
		return -EPROTO;
	a->conn = C_UP;
	if (!a->w->connected_ns && ++a->w->connected == a->w->n)
		a->w->connected_ns = h2b_now_ns();
	if (a->phase == PH_GET && sched(a) > h2b_now_ns()) {
		wait_until(a, sched(a));
		return 0;
	}
	return issue(a);
}

/* The connection failed or was lost: again later, or the agent ends. */
static void agent_lost(struct agent *a, bool at_connect)
{
	struct worker *w = a->w;

	if (a->phase >= PH_DONE) {
		disconnect(a);
		return;
	}
	if (a->stream)
		w->errors[E_RST]++;
	if (at_connect)
		w->errors[E_CONNECT]++;
	a->stream = 0;
	disconnect(a);
	if (a->reconnects++ >= AGENT_MAX_RECONNECTS) {
		agent_end(a, PH_FAILED);
		return;
	}
	w->reconnects++;
	retry_later(a);
}

static void agent_event(struct agent *a, uint32_t events)
{
	static __thread uint8_t buf[64 * 1024];

	if (a->conn == C_CONNECTING) {
		int err = 0;
		socklen_t l = sizeof(err);
		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err) {
			agent_lost(a, true);
			return;
		}
		if (agent_up(a) < 0) {
			agent_lost(a, false);
			return;
		}
	}
	if (a->conn != C_UP)
		return;
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		for (;;) {
			ssize_t n = read(a->fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n <= 0 || nghttp2_session_mem_recv(a->h2, buf, (size_t)n) < 0) {
				agent_lost(a, false);
				return;
			}
			/* complete() may have ended the agent or made it wait */
			if (a->phase >= PH_DONE)
				break;
			/* short: the socket is drained, and more data is a new
			 * edge (saves the read that would say EAGAIN) */
			if ((size_t)n < sizeof(buf))
				break;
		}
	}
	if (a->phase >= PH_DONE) {
		disconnect(a);
		return;
	}
	if (flush(a) < 0)
		agent_lost(a, false);
}

/* The agents whose wait is over: connect again, or send again. */
static uint64_t run_timers(struct worker *w, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < w->n && w->waiting; i++) {
		struct agent *a = &w->agents[i];
		if (!a->retry_at || a->phase >= PH_DONE)
			continue;
		if (a->retry_at > now) {
			if (a->retry_at < next)
				next = a->retry_at;
			continue;
		}
		a->retry_at = 0;
		w->waiting--;
		if (a->conn == C_NONE) {
			if (agent_connect(a) < 0)
				agent_lost(a, true);
			continue;
		}
		if (issue(a) < 0 || flush(a) < 0)
			agent_lost(a, false);
	}
	return next;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[EVENTS_MAX];
	struct rusage ru;

	for (size_t i = 0; i < w->n; i++)
		if (agent_connect(&w->agents[i]) < 0)
			agent_lost(&w->agents[i], true);
	while (w->active) {
		uint64_t now = h2b_now_ns(), next = UINT64_MAX;
		if (now >= w->deadline)
			break;
		if (w->waiting && now >= w->next_timer) {
			w->next_timer = UINT64_MAX;
			next = run_timers(w, now);
			if (next < w->next_timer)
				w->next_timer = next;
		}
		next = w->waiting ? w->next_timer : UINT64_MAX;
		uint64_t until = next < w->deadline ? next : w->deadline;
		uint64_t ns = until - now > 100000000u ? 100000000u : until - now;
		/* to the nanosecond: a paced call sent late is charged to the
		 * server */
		struct timespec tmo = {.tv_sec = 0, .tv_nsec = (long)ns};
		int n = epoll_pwait2(w->ep, evs, EVENTS_MAX, &tmo, NULL);
		if (n < 0 && errno == ENOSYS)
			n = epoll_wait(w->ep, evs, EVENTS_MAX, (int)((ns + 999999) / 1000000));
		for (int i = 0; i < n; i++)
			agent_event(evs[i].data.ptr, evs[i].events);
	}
	if (getrusage(RUSAGE_THREAD, &ru) == 0)
		w->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
			   ru.ru_stime.tv_usec / 1e6;
	return NULL;
}

/* ---- the report ---- */

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void print_lat(const char *name, struct worker *ws, size_t nw, bool get)
{
	size_t n = 0, k = 0;
	uint32_t *all;

	for (size_t i = 0; i < nw; i++)
		n += get ? ws[i].get_lat.n : ws[i].rep_lat.n;
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		n = 0;
	for (size_t i = 0; i < nw && all; i++) {
		struct samples *s = get ? &ws[i].get_lat : &ws[i].rep_lat;
		memcpy(all + k, s->v, s->n * sizeof(*all));
		k += s->n;
	}
	qsort(all, n, sizeof(*all), cmp_u32);
#define PCT(p) (n ? all[(size_t)((n - 1) * (p))] / 1000.0 : 0.0)
	printf("\"%s\":{\"n\":%zu,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f}",
	       name, n, PCT(0.50), PCT(0.90), PCT(0.99), n ? all[n - 1] / 1000.0 : 0.0);
#undef PCT
	free(all);
}

static void report(const struct opts *o, struct worker *ws, size_t nw, uint64_t t0, uint64_t t1)
{
	uint64_t completed = 0, last = 0, conn = 0, reconnects = 0, errors[E_MAX] = {0};
	unsigned done = 0, failed = 0;
	double busiest = 0;
	struct rusage ru;
	bool first = true;

	for (size_t i = 0; i < nw; i++) {
		struct worker *w = &ws[i];
		completed += w->completed;
		done += w->done;
		failed += w->failed;
		reconnects += w->reconnects;
		if (w->last_ns > last)
			last = w->last_ns;
		if (!w->connected_ns)
			conn = UINT64_MAX;
		else if (conn != UINT64_MAX && w->connected_ns > conn)
			conn = w->connected_ns;
		for (int e = 0; e < E_MAX; e++)
			errors[e] += w->errors[e];
		if (w->cpu_s > busiest)
			busiest = w->cpu_s;
	}
	bool all_done = done == o->agents;
	/* The rate over the run: to the last completion when every agent
	 * finished, else to the end of the run. */
	uint64_t base = o->interval_ns ? t0 + PACE_START_NS : t0;
	double wall = ((all_done && last ? last : t1) - base) / 1e9;
	double run = (t1 - t0) / 1e9;
	getrusage(RUSAGE_SELF, &ru);
	double user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	double sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;

	printf("{\"agents\":%u,\"actions_per_agent\":%u,\"threads\":%zu,\"completed_actions\":%llu,"
	       "\"agents_done\":%u,\"agents_failed\":%u,\"agents_unfinished\":%u,"
	       "\"wall_s\":%.3f,\"actions_per_s\":%.1f,\"connect_ms\":",
	       o->agents, o->actions, nw, (unsigned long long)completed, done, failed,
	       o->agents - done - failed, wall, wall > 0 ? completed / wall : 0.0);
	if (conn == UINT64_MAX)
		printf("null,");
	else
		printf("%.1f,", (conn - t0) / 1e6);
	print_lat("getaction", ws, nw, true);
	putchar(',');
	print_lat("report", ws, nw, false);
	printf(",\"errors\":{");
	for (int e = 0; e < E_MAX; e++) {
		if (!errors[e])
			continue;
		printf("%s\"%s\":%llu", first ? "" : ",",
		       e < GRPC_CODE_MAX ? grpc_code_name(e) : extra_names[e - GRPC_CODE_MAX],
		       (unsigned long long)errors[e]);
		first = false;
	}
	printf("},\"reconnects\":%llu,\"cpu_user_s\":%.2f,\"cpu_sys_s\":%.2f,\"cpu_pct\":%.1f,"
	       "\"busiest_thread_pct\":%.1f,\"timed_out\":%s}\n",
	       (unsigned long long)reconnects, user, sys, run > 0 ? 100 * (user + sys) / run : 0.0,
	       run > 0 ? 100 * busiest / run : 0.0, all_done || done + failed == o->agents ? "false" : "true");
	fflush(stdout);
}

/* ---- main ---- */

static int num_opt(const char *s, uint64_t min, uint64_t max, unsigned *ret)
{
	uint64_t v;
	if (num_parse_u64_str(s, max, &v) < 0 || v < min)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: agents -p PORT [-h 127.0.0.1] [-n agents] [-a actions (0: until NOT_FOUND)]\n"
			"              [-t threads] [-d deadline-s] [-f first] [-r retry-ms] [-R actions/s]\n"
			"              [-T grpc-timeout]\n");
	exit(2);
}

/* The options into o; exits 2 on a bad one. */
static void parse_opts(int argc, char **argv, struct opts *ret)
{
	struct opts o = {.agents = 1000, .actions = 10, .threads = 1, .first = 1};
	const char *host = "127.0.0.1";
	unsigned port = 0, deadline_s = 120, retry_ms = 100, rate = 0;
	int c;

	while ((c = getopt(argc, argv, "h:p:n:a:t:d:f:r:R:T:")) != -1) {
		int r = 0;
		switch (c) {
		case 'h': host = optarg; break;
		case 'p': r = num_opt(optarg, 1, 65535, &port); break;
		case 'n': r = num_opt(optarg, 1, AGENTS_MAX, &o.agents); break;
		case 'a': r = num_opt(optarg, 0, AGENT_MAX_ACTIONS, &o.actions); break;
		case 't': r = num_opt(optarg, 1, THREADS_MAX, &o.threads); break;
		case 'd': r = num_opt(optarg, 1, 86400, &deadline_s); break;
		case 'f': r = num_opt(optarg, 0, 1u << 30, &o.first); break;
		case 'r': r = num_opt(optarg, 1, 60000, &retry_ms); break;
		case 'R': r = num_opt(optarg, 1, 10000000, &rate); break;
		case 'T': o.grpc_timeout = optarg; break;
		default: usage();
		}
		if (r < 0)
			usage();
	}
	if (!port || optind != argc)
		usage();
	o.addr.sin_family = AF_INET;
	o.addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &o.addr.sin_addr) != 1)
		usage();
	snprintf(o.authority, sizeof(o.authority), "%s:%u", host, port);
	o.deadline_ns = (uint64_t)deadline_s * 1000000000u;
	o.retry_ns = (uint64_t)retry_ms * 1000000u;
	if (rate)
		o.interval_ns = (uint64_t)o.agents * 1000000000u / rate;
	if (o.threads > o.agents)
		o.threads = o.agents;
	*ret = o;
}

int main(int argc, char **argv)
{
	struct opts o;

	parse_opts(argc, argv, &o);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < o.agents + 64u) {
		rl.rlim_cur = rl.rlim_max < o.agents + 64u ? rl.rlim_max : o.agents + 64u;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	nghttp2_session_callbacks_new(&callbacks);
	nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);

	struct worker *ws = calloc(o.threads, sizeof(*ws));
	struct agent *as = calloc(o.agents, sizeof(*as));
	if (!ws || !as) {
		fprintf(stderr, "agents: out of memory\n");
		return 1;
	}
	uint64_t t0 = h2b_now_ns();
	for (unsigned t = 0; t < o.threads; t++) {
		ws[t].o = &o;
		ws[t].t0 = t0;
		ws[t].deadline = t0 + o.deadline_ns;
		ws[t].ep = epoll_create1(EPOLL_CLOEXEC);
		if (ws[t].ep < 0) {
			perror("agents: epoll_create1");
			return 1;
		}
	}
	/* Agent i on thread i % threads, each thread's agents contiguous. */
	size_t k = 0;
	for (unsigned t = 0; t < o.threads; t++) {
		ws[t].agents = &as[k];
		for (unsigned i = t; i < o.agents; i += o.threads, k++) {
			struct agent *a = &as[k];
			unsigned n = o.first + i;
			/* tests/gen-hardware.sh's MAC of Hardware n */
			snprintf(a->id, sizeof(a->id), "02:00:%02x:%02x:%02x:%02x", (n >> 24) & 255,
				 (n >> 16) & 255, (n >> 8) & 255, n & 255);
			a->w = &ws[t];
			a->fd = -1;
			a->offset_ns = o.interval_ns * i / o.agents;
			ws[t].n++;
		}
		ws[t].active = (unsigned)ws[t].n;
	}
	for (unsigned t = 0; t < o.threads; t++)
		if (pthread_create(&ws[t].tid, NULL, worker_run, &ws[t]) != 0) {
			fprintf(stderr, "agents: cannot start thread %u\n", t);
			return 1;
		}
	for (unsigned t = 0; t < o.threads; t++)
		pthread_join(ws[t].tid, NULL);
	uint64_t t1 = h2b_now_ns();
	report(&o, ws, o.threads, t0, t1);

	for (size_t i = 0; i < o.agents; i++) {
		disconnect(&as[i]);
		free(as[i].req);
		free(as[i].resp);
		free(as[i].out);
	}
	for (unsigned t = 0; t < o.threads; t++) {
		close(ws[t].ep);
		free(ws[t].get_lat.v);
		free(ws[t].rep_lat.v);
	}
	free(ws);
	free(as);
	nghttp2_session_callbacks_del(callbacks);
	return 0;
}
