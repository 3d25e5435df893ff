/* loop — the agent's work loop, as tink-agent's: ask for an action, report
 * it RUNNING, run it, report how it ended; back off when there is nothing
 * to do or the server cannot be reached.
 *
 * DESIGN: everything happens on one thread, one call at a time. Reports
 * are retried with exponential backoff (capped at --max-backoff) until
 * the server takes them, except for the codes that will never change
 * (NOT_FOUND, INVALID_ARGUMENT, FAILED_PRECONDITION, PERMISSION_DENIED):
 * those are logged and the loop goes on. While an action runs, RUNNING
 * is sent again every heartbeat: ironbelld answers FAILED_PRECONDITION
 * when it has ended the action itself (the workflow's global timeout, a
 * retry, a deleted workflow), which tink-agent has no message for; the
 * agent then stops the action and asks for the next one. An action that
 * takes the machine down (agent_is_down) is reported SUCCESS before it
 * runs, since it could not be after. Each line of output goes to stderr,
 * to syslog (RFC 5424 over UDP, app-name ironbell-agent, msgid the
 * action's name) when --syslog is given, and to a tail whose last lines
 * are the message of a failed action's report. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent-internal.h"
#include "common/grpc.h"
#include "common/tink.pb-c.h"
#include "common/utf8.h"

#define GET_ACTION_TIMEOUT_MS 60000
#define REPORT_TIMEOUT_MS 10000
#define BACKOFF_START_MS 250
/* The tail of the output kept for a failed action's message. */
#define TAIL_MAX 1536
#define SYSLOG_LINE_MAX 1024

struct run {
	const struct agent_settings *s;
	struct agent_conn *conn;
	int syslog_fd;
	struct sockaddr_storage syslog_addr;
	socklen_t syslog_len;
	/* The action in progress. */
	const Proto__ActionResponse *act;
	uint64_t start_ns;
	uint64_t last_beat;
	char tail[TAIL_MAX];
	size_t tail_len;
};

static uint64_t backoff_next(const struct agent_settings *s, uint64_t cur)
{
	uint64_t n = cur ? cur * 2 : BACKOFF_START_MS;
	return n > s->max_backoff_ms ? s->max_backoff_ms : n;
}

static bool code_permanent(int code)
{
	return code == GRPC_NOT_FOUND || code == GRPC_INVALID_ARGUMENT ||
	       code == GRPC_FAILED_PRECONDITION || code == GRPC_PERMISSION_DENIED;
}

static const char *state_name(Proto__ActionStatusRequest__StateType st)
{
	switch (st) {
	case PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__RUNNING: return "RUNNING";
	case PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__SUCCESS: return "SUCCESS";
	case PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__FAILED: return "FAILED";
	case PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__TIMEOUT: return "TIMEOUT";
	default: return "?";
	}
}

/* One ReportActionStatus call. Returns the gRPC code or a negative errno. */
static int report_once(struct run *r, Proto__ActionStatusRequest__StateType st, uint64_t stop_ns,
		       const char *message)
{
	const Proto__ActionResponse *a = r->act;
	Proto__ActionStatusRequest q = PROTO__ACTION_STATUS_REQUEST__INIT;
	Proto__ActionMessage m = PROTO__ACTION_MESSAGE__INIT;
	Google__Protobuf__Timestamp t0 = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	Google__Protobuf__Timestamp t1 = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	char dur[AGENT_DURATION_MAX], msg[256];
	const uint8_t *body;
	size_t blen;
	q.workflow_id = a->workflow_id;
	q.agent_id = (char *)r->s->id;
	q.task_id = a->task_id;
	q.action_id = a->action_id;
	q.action_name = a->name;
	q.action_state = st;
	t0.seconds = (int64_t)(r->start_ns / 1000000000ull);
	t0.nanos = (int32_t)(r->start_ns % 1000000000ull);
	q.execution_start = &t0;
	if (stop_ns) {
		t1.seconds = (int64_t)(stop_ns / 1000000000ull);
		t1.nanos = (int32_t)(stop_ns % 1000000000ull);
		q.execution_stop = &t1;
		q.execution_duration = agent_duration_format(
			stop_ns > r->start_ns ? stop_ns - r->start_ns : 0, dur);
	}
	if (message && *message) {
		m.message = (char *)message;
		q.message = &m;
	}
	size_t n = proto__action_status_request__get_packed_size(&q);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	proto__action_status_request__pack(&q, buf);
	int e = agent_conn_call(r->conn, GRPC_PATH_REPORT_ACTION_STATUS, buf, n, REPORT_TIMEOUT_MS,
				&body, &blen, msg, sizeof(msg));
	free(buf);
	if (e != GRPC_OK)
		agent_log(e >= 0 && code_permanent(e) ? 0 : 1, "report %s of %s: %s%s%s",
			  state_name(st), a->name, e < 0 ? strerror(-e) : grpc_code_name(e),
			  msg[0] ? ": " : "", msg);
	return e;
}

/* Reports until the server takes it or refuses it for good. Returns the
 * last code (GRPC_OK, a permanent code, or GRPC_CANCELLED when stopped). */
static int report(struct run *r, Proto__ActionStatusRequest__StateType st, uint64_t stop_ns,
		  const char *message)
{
	uint64_t wait = 0;
	for (;;) {
		int e = report_once(r, st, stop_ns, message);
		if (e == GRPC_OK) {
			agent_log(1, "reported %s %s", r->act->name, state_name(st));
			return e;
		}
		if (e >= 0 && code_permanent(e))
			return e;
		if (agent_stop)
			return GRPC_CANCELLED;
		wait = backoff_next(r->s, wait);
		agent_sleep_ms(wait);
	}
}

static void syslog_line(struct run *r, const char *s, size_t n)
{
	char out[SYSLOG_LINE_MAX + 256], ts[40], msgid[33], host[65];
	struct timespec now;
	struct tm tm;
	size_t k = 0;
	if (r->syslog_fd < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	if (gethostname(host, sizeof(host)) != 0 || !host[0])
		memcpy(host, "-", 2);
	host[64] = '\0';
	/* MSGID: PRINTUSASCII, 1*32 (RFC 5424 §6). */
	for (const char *p = r->act->name; *p && k < 32; p++)
		msgid[k++] = *p > 32 && *p < 127 ? *p : '_';
	if (!k)
		msgid[k++] = '-';
	msgid[k] = '\0';
	int len = snprintf(out, sizeof(out), "<14>1 %s.%06ldZ %s ironbell-agent %d %s - %.*s", ts,
			   now.tv_nsec / 1000, host, (int)getpid(), msgid,
			   (int)(n > SYSLOG_LINE_MAX ? SYSLOG_LINE_MAX : n), s);
	if (len > 0)
		(void)sendto(r->syslog_fd, out,
			     (size_t)len < sizeof(out) ? (size_t)len : sizeof(out) - 1,
			     MSG_DONTWAIT, (struct sockaddr *)&r->syslog_addr, r->syslog_len);
}

static void hook_line(void *arg, const char *raw, size_t rawn)
{
	struct run *r = arg;
	/* Output is any bytes; a protobuf string (the report's message) must
	 * be UTF-8, or the server refuses the report for good. */
	char clean[AGENT_LINE_MAX * UTF8_REPLACEMENT_LEN + 1];
	size_t n = utf8_sanitize(raw, rawn, clean, sizeof(clean) - 1, UTF8_CONTROLS_QMARK, NULL);
	const char *s = clean;
	fprintf(stderr, "[%s] %.*s\n", r->act->name, (int)n, s);
	syslog_line(r, s, n);
	/* The tail: the last lines that fit, older ones dropped from the front
	 * (a line too long alone loses its start, at a character's start). */
	if (n + 1 > TAIL_MAX) {
		s += n - (TAIL_MAX - 1);
		n = TAIL_MAX - 1;
		while (n && ((uint8_t)*s & 0xc0) == 0x80)
			s++, n--;
	}
	if (r->tail_len + n + 1 > TAIL_MAX) {
		size_t drop = r->tail_len + n + 1 - TAIL_MAX;
		const char *nl = memchr(r->tail + drop, '\n', r->tail_len - drop);
		if (nl)
			drop = (size_t)(nl + 1 - r->tail);
		memmove(r->tail, r->tail + drop, r->tail_len - drop);
		r->tail_len -= drop;
	}
	memcpy(r->tail + r->tail_len, s, n);
	r->tail_len += n;
	r->tail[r->tail_len++] = '\n';
}

/* The heartbeat: RUNNING again every s->heartbeat_ms; nonzero when the
 * server says the action is over. */
static int hook_tick(void *arg)
{
	struct run *r = arg;
	uint64_t now = agent_mono_ms();
	if (now - r->last_beat < r->s->heartbeat_ms)
		return 0;
	r->last_beat = now;
	int e = report_once(r, PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__RUNNING, 0, NULL);
	if (e == GRPC_FAILED_PRECONDITION || e == GRPC_NOT_FOUND) {
		agent_log(0, "the server ended %s: stopping it", r->act->name);
		return 1;
	}
	return 0;
}

/* Runs the action a. Returns 1 when the workflow is over (a FAILED or
 * TIMEOUT report), 0 to ask for the next action; *ok is false after a
 * failure. */
static int run_action(struct run *r, const Proto__ActionResponse *a, bool *ok)
{
	struct agent_action act = {
		.name = a->name,
		.image = a->image,
		.timeout_s = a->timeout > 0 ? (uint64_t)a->timeout : 0,
		.command = a->command,
		.ncmd = a->n_command,
		.env = a->environment,
		.nenv = a->n_environment,
		.volumes = a->volumes,
		.nvol = a->n_volumes,
		.pidns = a->namespaces && a->namespaces->pid[0] ? a->namespaces->pid : a->pid,
		.netns = a->namespaces ? a->namespaces->network : "",
	};
	struct agent_hooks h = { .arg = r, .tick = hook_tick, .line = hook_line };
	const struct agent_settings *s = r->s;
	char why[256], *msg;
	bool host = s->runtime == AGENT_RUNTIME_HOST;
	r->act = a;
	r->tail_len = 0;
	r->start_ns = agent_wall_ns();
	r->last_beat = agent_mono_ms();
	agent_log(0, "action %s (%s) of %s", a->name, a->image, a->workflow_id);
	int e = report(r, PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__RUNNING, 0, NULL);
	if (e != GRPC_OK)
		return 0;
	if (agent_is_down(s->down, host, a->image, a->command, a->n_command, a->environment,
			  a->n_environment)) {
		report(r, PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__SUCCESS, agent_wall_ns(),
		       "reported before it ran: the action takes the machine down (reboot, kexec, "
		       "poweroff)");
		agent_log(0, "%s takes the machine down: reported SUCCESS, running it", a->name);
	}
	enum agent_outcome o = host ? agent_host_run(s, &act, &h, why, sizeof(why)) :
				      agent_docker_run(s, &act, &h, why, sizeof(why));
	uint64_t stop = agent_wall_ns();
	agent_log(0, "action %s: %s", a->name, why);
	if (o == AGENT_OUT_STOPPED)
		return 0;
	if (agent_is_down(s->down, host, a->image, a->command, a->n_command, a->environment,
			  a->n_environment))
		return 0;
	Proto__ActionStatusRequest__StateType st =
		o == AGENT_OUT_SUCCESS ? PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__SUCCESS :
		o == AGENT_OUT_TIMEOUT ? PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__TIMEOUT :
					 PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__FAILED;
	size_t ml = strlen(why) + r->tail_len + 4;
	msg = malloc(ml);
	if (msg) {
		/* The reason, then the output's last lines. */
		int k = snprintf(msg, ml, "%s%s%.*s", why, r->tail_len ? "\n" : "",
				 (int)(r->tail_len && r->tail[r->tail_len - 1] == '\n' ?
					       r->tail_len - 1 :
					       r->tail_len),
				 r->tail);
		(void)k;
	}
	report(r, st, stop, o == AGENT_OUT_SUCCESS ? why : msg ? msg : why);
	free(msg);
	*ok = o == AGENT_OUT_SUCCESS;
	return o == AGENT_OUT_SUCCESS ? 0 : 1;
}

static void syslog_open(struct run *r)
{
	r->syslog_fd = -1;
	if (!r->s->syslog[0])
		return;
	if (agent_addr_parse(r->s->syslog, &r->syslog_addr, &r->syslog_len) < 0) {
		agent_log(0, "--syslog %s: not a numeric host:port; output not sent", r->s->syslog);
		return;
	}
	r->syslog_fd = socket(r->syslog_addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

/* One GetAction. Returns the code; *ret the action when GRPC_OK. */
static int get_action(struct run *r, Proto__ActionResponse **ret)
{
	Proto__ActionRequest q = PROTO__ACTION_REQUEST__INIT;
	uint8_t buf[AGENT_ID_MAX + 16];
	const uint8_t *body;
	size_t blen;
	char msg[256];
	struct tink_check_error err;
	q.agent_id = (char *)r->s->id;
	size_t n = proto__action_request__pack(&q, buf);
	int e = agent_conn_call(r->conn, GRPC_PATH_GET_ACTION, buf, n, GET_ACTION_TIMEOUT_MS, &body,
				&blen, msg, sizeof(msg));
	if (e != GRPC_OK) {
		agent_log(e == GRPC_NOT_FOUND || e == GRPC_FAILED_PRECONDITION ? 2 : 0,
			  "GetAction: %s%s%s", e < 0 ? strerror(-e) : grpc_code_name(e),
			  msg[0] ? ": " : "", msg);
		return e;
	}
	e = tink_decode(TINK_MSG_ACTION_RESPONSE, body, blen, (struct ProtobufCMessage **)ret,
			&err);
	if (e < 0) {
		agent_log(0, "GetAction: a malformed action at byte %zu: %s", err.offset,
			  err.message);
		return GRPC_INTERNAL;
	}
	return GRPC_OK;
}

int agent_run(const struct agent_settings *s)
{
	struct run r = { .s = s };
	uint64_t wait = 0;
	bool ran = false, ok = true;
	agent_verbose = s->verbose;
	r.conn = agent_conn_new(s);
	if (!r.conn)
		return 1;
	syslog_open(&r);
	agent_log(0, "worker %s, server %s (%s), runtime %s", s->id, s->authority,
		  s->tls ? "TLS" : "h2c", s->runtime == AGENT_RUNTIME_HOST ? "host" : "docker");
	while (!agent_stop) {
		Proto__ActionResponse *a = NULL;
		int e = get_action(&r, &a);
		if (e == GRPC_OK) {
			wait = 0;
			ran = true;
			int over = run_action(&r, a, &ok);
			protobuf_c_message_free_unpacked(&a->base, NULL);
			if (over && s->once)
				break;
			continue;
		}
		if (e == GRPC_DEADLINE_EXCEEDED)
			continue; /* a long poll that ran out: ask again */
		if (e == GRPC_NOT_FOUND && ran && s->once)
			break;
		wait = backoff_next(s, wait);
		agent_sleep_ms(wait);
	}
	if (r.syslog_fd >= 0)
		close(r.syslog_fd);
	agent_conn_free(r.conn);
	return ok ? 0 : 1;
}
