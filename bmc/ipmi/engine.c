/* engine — the IPMI 2.0 RMCP+ ("lanplus") engine of bmc/provider.h:
 * every BMC spoken to over one non-blocking UDP socket, from the bmc
 * thread's loop, without ever blocking it.
 *
 * DESIGN: one session (struct ipmi_sess) per endpoint — host, port, user,
 * password and cipher suite — holds the calls submitted for it in a queue and runs
 * them one at a time (a BMC handles few requests at once); sessions run
 * side by side, so a BMC that does not answer delays only its own calls.
 * The protocol of a session, its handshake, commands and retransmission,
 * is session.c; here are the socket, the table of sessions, the timers,
 * the bound on open sessions and the callbacks:
 *
 * - submit() only queues (or, for a call that cannot run, records its
 *   failure); every callback runs from process(), from the list of
 *   finished calls, so a callback may submit again.
 * - A datagram goes to the sessions whose BMC address it came from; one
 *   that none of them takes is dropped and counted.
 * - An established session is kept for the next calls and closed (Close
 *   Session, not waited for) after IPMI_IDLE_MS unused. At most
 *   settings.max_sessions are open or opening: a session that needs one
 *   more closes the least recently used idle one, or waits.
 * - Hosts: an IPv4 address is used as it is; a name is looked up with
 *   glibc's getaddrinfo_a (its own thread, IPv4 results only), which
 *   process() polls every IPMI_LOOKUP_POLL_MS while one is under way;
 *   the address found serves the session until it is closed.
 *
 * The password is kept in the session for its next handshake and zeroed
 * when the session is freed; no message holds it. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <openssl/rand.h>
#include <signal.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bmc/ipmi/engine-internal.h"

int ipmi_random(void *p, size_t n)
{
	return RAND_bytes(p, (int)n) == 1 ? 0 : -EIO;
}

/* Moves c, finished, to the callback list. */
static void call_done(struct ipmi_engine *e, struct ipmi_call *c)
{
	c->reply.seconds = (double)(bmc_now_ms() - c->start_ms) / 1000.0;
	c->next = NULL;
	if (e->done_tail)
		e->done_tail->next = c;
	else
		e->done_head = c;
	e->done_tail = c;
}

static void call_set(struct ipmi_call *c, enum bmc_fail fail, const char *fmt, va_list ap)
{
	c->reply.fail = fail;
	vsnprintf(c->reply.message, sizeof(c->reply.message), fmt, ap);
}

static struct ipmi_call *pop_head(struct ipmi_sess *s)
{
	struct ipmi_call *c = s->head;

	if (c) {
		s->head = c->next;
		if (!s->head)
			s->tail = NULL;
	}
	return c;
}

void ipmi_call_finish(struct ipmi_engine *e, struct ipmi_sess *s, enum bmc_fail fail,
		      const char *fmt, ...)
{
	struct ipmi_call *c = pop_head(s);
	uint64_t now = bmc_now_ms();
	va_list ap;

	if (!c)
		return;
	va_start(ap, fmt);
	call_set(c, fail, fmt, ap);
	va_end(ap);
	call_done(e, c);
	s->ph = IPMI_PH_IDLE;
	s->last_used = now;
	ipmi_sess_advance(e, s, now);
}

void ipmi_call_fail_all(struct ipmi_engine *e, struct ipmi_sess *s, enum bmc_fail fail,
			const char *fmt, ...)
{
	struct ipmi_call *c;
	va_list ap;

	ipmi_sess_down(e, s);
	while ((c = pop_head(s))) {
		va_start(ap, fmt);
		call_set(c, fail, fmt, ap);
		va_end(ap);
		call_done(e, c);
	}
	s->last_used = bmc_now_ms();
}

int ipmi_engine_send(struct ipmi_engine *e, struct ipmi_sess *s, const uint8_t *pkt, size_t len)
{
	ssize_t n = sendto(e->fd, pkt, len, 0, (const struct sockaddr *)&s->addr, sizeof(s->addr));

	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ENOBUFS)
		return -errno;
	return 0;
}

struct ipmi_lookup {
	struct gaicb cb;
	struct addrinfo hints;
	char name[BMC_HOST_MAX];
};

/* Starts looking s->host up. 0, or an EAI_ error. */
static int lookup_start(struct ipmi_sess *s)
{
	struct ipmi_lookup *l = calloc(1, sizeof(*l));
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct gaicb *list[1];
	int r;

	if (!l)
		return EAI_MEMORY;
	snprintf(l->name, sizeof(l->name), "%s", s->host);
	l->hints.ai_family = AF_INET;
	l->hints.ai_socktype = SOCK_DGRAM;
	l->cb.ar_name = l->name;
	l->cb.ar_request = &l->hints;
	list[0] = &l->cb;
	if ((r = getaddrinfo_a(GAI_NOWAIT, list, 1, &sev)) != 0) {
		free(l);
		return r;
	}
	s->lookup = l;
	return 0;
}

/* Ends a lookup of s: 0 with s->addr set, EAI_INPROGRESS, or an EAI_
 * error. */
static int lookup_end(struct ipmi_sess *s)
{
	struct ipmi_lookup *l = s->lookup;
	int r = gai_error(&l->cb);

	if (r == EAI_INPROGRESS)
		return r;
	if (r == 0) {
		r = EAI_NONAME;
		for (struct addrinfo *ai = l->cb.ar_result; ai; ai = ai->ai_next)
			if (ai->ai_family == AF_INET && ai->ai_addrlen == sizeof(s->addr)) {
				memcpy(&s->addr, ai->ai_addr, sizeof(s->addr));
				s->addr.sin_port = htons(s->port);
				s->have_addr = true;
				r = 0;
				break;
			}
		freeaddrinfo(l->cb.ar_result);
	}
	free(l);
	s->lookup = NULL;
	return r;
}

/* Polls the lookups under way; a failed one fails its session's calls. */
static void lookups(struct ipmi_engine *e)
{
	for (struct ipmi_sess *s = e->sessions; s; s = s->next) {
		int r;

		if (!s->lookup || (r = lookup_end(s)) == EAI_INPROGRESS || r == 0)
			continue;
		ipmi_call_fail_all(e, s, BMC_FAIL_NETWORK, "host name lookup of %s: %s", s->host,
				   gai_strerror(r));
	}
}

static void sess_free(struct ipmi_engine *e, struct ipmi_sess *s)
{
	/* A lookup the resolver thread still holds cannot be freed under
	 * it: it is left to it (only when the engine is freed meanwhile). */
	if (s->lookup && gai_cancel(&s->lookup->cb) != EAI_NOTCANCELED) {
		if (s->lookup->cb.ar_result)
			freeaddrinfo(s->lookup->cb.ar_result);
		free(s->lookup);
	}
	s->lookup = NULL;
	ipmi_sess_down(e, s);
	explicit_bzero(s->password, sizeof(s->password));
	free(s);
}

/* Unlinks and frees s (its queue must be empty). */
static void sess_remove(struct ipmi_engine *e, struct ipmi_sess *s)
{
	for (struct ipmi_sess **p = &e->sessions; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	sess_free(e, s);
}

static bool sess_idle(const struct ipmi_sess *s)
{
	return s->up && s->ph == IPMI_PH_IDLE && !s->head;
}

bool ipmi_engine_evict(struct ipmi_engine *e, uint64_t now)
{
	struct ipmi_sess *lru = NULL;

	for (struct ipmi_sess *s = e->sessions; s; s = s->next)
		if (sess_idle(s) && (!lru || s->last_used < lru->last_used))
			lru = s;
	if (!lru)
		return false;
	ipmi_sess_close(e, lru, false, now);
	sess_remove(e, lru);
	return true;
}

static int engine_new(const struct bmc_settings *settings, void **ret, char *err, size_t errlen)
{
	struct ipmi_engine *e = calloc(1, sizeof(*e));
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	int r;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->set = *settings;
	e->set.ca_file = NULL; /* not ours; not kept */
	bmc_settings_default(&e->set);
	e->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (e->fd < 0 || bind(e->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		snprintf(err, errlen, "ipmi: UDP socket: %s", strerror(errno));
		if (e->fd >= 0)
			close(e->fd);
		free(e);
		return r;
	}
	/* Best effort: room for the answers of many BMCs at once; what
	 * overflows is sent again by the retransmission. */
	int rcvbuf = IPMI_RCVBUF;
	setsockopt(e->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	*ret = e;
	return 0;
}

static int engine_fd(void *engine)
{
	return ((struct ipmi_engine *)engine)->fd;
}

static int engine_timeout_ms(void *engine, uint64_t now)
{
	struct ipmi_engine *e = engine;
	uint64_t best = UINT64_MAX;

	if (e->done_head || e->kick)
		return 0;
	for (struct ipmi_sess *s = e->sessions; s; s = s->next) {
		uint64_t t = UINT64_MAX;

		if (s->lookup)
			t = now + IPMI_LOOKUP_POLL_MS;
		else if (s->ph != IPMI_PH_IDLE)
			t = s->deadline;
		else if (sess_idle(s))
			t = s->last_used + IPMI_IDLE_MS;
		if (t < best)
			best = t;
	}
	if (best == UINT64_MAX)
		return -1;
	if (best <= now)
		return 0;
	return best - now > INT32_MAX ? INT32_MAX : (int)(best - now);
}

/* Reads what the socket holds (IPMI_RX_BURST datagrams at most). */
static void receive(struct ipmi_engine *e, uint64_t now)
{
	uint8_t pkt[BMC_MAX_REPLY];

	for (int i = 0; i < IPMI_RX_BURST; i++) {
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		/* MSG_TRUNC: the datagram's real length, to refuse the
		 * oversized rather than read a prefix of them. */
		ssize_t n = recvfrom(e->fd, pkt, sizeof(pkt), MSG_TRUNC, (struct sockaddr *)&from,
				     &flen);
		bool taken = false;

		if (n < 0)
			break; /* EAGAIN; an ICMP error left by a peer: nothing to read */
		if (flen != sizeof(from) || from.sin_family != AF_INET) {
			e->dropped++;
			continue;
		}
		for (struct ipmi_sess *s = e->sessions; s && !taken; s = s->next) {
			int r;

			if (s->addr.sin_addr.s_addr != from.sin_addr.s_addr ||
			    s->addr.sin_port != from.sin_port || s->ph == IPMI_PH_IDLE)
				continue;
			r = (size_t)n > sizeof(pkt) ? -EMSGSIZE :
						      ipmi_sess_rx(e, s, pkt, (size_t)n, now);
			if (r == 0)
				taken = true;
			else
				s->drop = ipmi_drop_reason(r);
		}
		if (!taken)
			e->dropped++;
	}
}

/* Deadlines of the messages in flight, and idle sessions to close. */
static void timers(struct ipmi_engine *e, uint64_t now)
{
	struct ipmi_sess **p = &e->sessions;

	while (*p) {
		struct ipmi_sess *s = *p;

		if (s->ph != IPMI_PH_IDLE && s->deadline <= now)
			ipmi_sess_timeout(e, s, now);
		/* last_used may be later than now: a call's end stamps it
		 * with the clock read then, after the caller read now. */
		if (s->ph == IPMI_PH_IDLE && !s->head && !s->lookup &&
		    (!s->up || now >= s->last_used + IPMI_IDLE_MS)) {
			ipmi_sess_close(e, s, false, now);
			*p = s->next;
			sess_free(e, s);
			continue;
		}
		p = &s->next;
	}
}

/* Runs the callbacks of the calls finished so far; those finished by
 * the callbacks themselves wait for the next process(). */
static void callbacks(struct ipmi_engine *e)
{
	struct ipmi_call *c = e->done_head;

	e->done_head = e->done_tail = NULL;
	while (c) {
		struct ipmi_call *next = c->next;

		e->ncalls--;
		c->done(&c->reply, c->userdata);
		free(c);
		c = next;
	}
}

static void engine_process(void *engine, uint64_t now)
{
	struct ipmi_engine *e = engine;

	receive(e, now);
	lookups(e);
	timers(e, now);
	e->kick = false;
	for (struct ipmi_sess *s = e->sessions; s; s = s->next)
		ipmi_sess_advance(e, s, now);
	callbacks(e);
}

static struct ipmi_sess *sess_find(struct ipmi_engine *e, const struct bmc_endpoint *ep,
				   uint16_t port, const struct ipmi_suite *suite)
{
	/* The password too: a call must not ride on a session that other
	 * credentials opened (another Machine's Secret, or the old one). */
	for (struct ipmi_sess *s = e->sessions; s; s = s->next)
		if (s->port == port && s->suite == suite && strcmp(s->host, ep->host) == 0 &&
		    strcmp(s->user, ep->user) == 0 && strcmp(s->password, ep->password) == 0)
			return s;
	return NULL;
}

/* Why the call cannot run at all, or NULL. */
static const char *call_check(const struct bmc_endpoint *ep, const struct bmc_call *call,
			      const struct ipmi_suite *suite, enum bmc_fail *ret_fail)
{
	*ret_fail = BMC_FAIL_UNSUPPORTED;
	if (!suite)
		return "cipher suite not supported (3 and 17 are)";
	if (call->cmd == BMC_CMD_POWER_SET && (unsigned)call->action > BMC_ACT_RESET)
		return "no such power action";
	if (call->cmd == BMC_CMD_BOOT_SET && (unsigned)call->boot.device > BMC_BOOT_SAFE)
		return "IPMI has no such boot device (HTTP boot is Redfish only)";
	if (strnlen(ep->user, sizeof(ep->user)) > IPMI_MAX_USER)
		return "user name longer than IPMI's 16 bytes";
	if (strnlen(ep->password, sizeof(ep->password)) > IPMI_MAX_PASSWORD)
		return "password longer than IPMI's 20 bytes";
	*ret_fail = BMC_FAIL_NETWORK;
	if (memchr(ep->host, '\0', sizeof(ep->host)) == NULL || ep->host[0] == '\0')
		return "no host";
	/* A name or an address: letters, digits, '-', '.' (RFC 1123). */
	if (strspn(ep->host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") !=
	    strlen(ep->host))
		return "not a host name or IPv4 address";
	return NULL;
}

static struct ipmi_sess *sess_new(struct ipmi_engine *e, const struct bmc_endpoint *ep,
				  uint16_t port, const struct ipmi_suite *suite)
{
	struct ipmi_sess *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->addr.sin_family = AF_INET;
	s->addr.sin_port = htons(port);
	s->have_addr = inet_pton(AF_INET, ep->host, &s->addr.sin_addr) == 1;
	snprintf(s->host, sizeof(s->host), "%s", ep->host);
	snprintf(s->user, sizeof(s->user), "%s", ep->user);
	snprintf(s->where, sizeof(s->where), "%s:%u", ep->host, port);
	s->port = port;
	s->suite = suite;
	s->next = e->sessions;
	e->sessions = s;
	return s;
}

static int engine_submit(void *engine, const struct bmc_endpoint *ep, const struct bmc_call *call,
			 bmc_done_fn done, void *userdata)
{
	struct ipmi_engine *e = engine;
	uint16_t port = ep->port ? ep->port : IPMI_DEFAULT_PORT;
	unsigned id = ep->cipher_suite ? ep->cipher_suite : e->set.cipher_suite;
	const struct ipmi_suite *suite = ipmi_suite_get(id);
	struct ipmi_sess *s = NULL;
	struct ipmi_call *c;
	enum bmc_fail fail;
	const char *why;
	int r;

	if (!done || (unsigned)call->cmd >= BMC_CMD_MAX || call->cmd == BMC_CMD_MEDIA_SET)
		return -EINVAL;
	/* A callback run by free() may submit: nothing would call it back. */
	if (e->closing)
		return -ECANCELED;
	if (e->ncalls >= IPMI_MAX_CALLS)
		return -EAGAIN;
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	c->call = *call;
	c->done = done;
	c->userdata = userdata;
	c->start_ms = bmc_now_ms();
	e->ncalls++;
	e->kick = true;
	why = call_check(ep, call, suite, &fail);
	if (!why && !(s = sess_find(e, ep, port, suite)) && !(s = sess_new(e, ep, port, suite)))
		why = "out of memory", fail = BMC_FAIL_NETWORK;
	if (why) {
		c->reply.fail = fail;
		if (!suite)
			snprintf(c->reply.message, sizeof(c->reply.message),
				 "cipher suite %u not supported (3 and 17 are)", id);
		else
			snprintf(c->reply.message, sizeof(c->reply.message), "%s", why);
		call_done(e, c);
		return 0;
	}
	if (!s->have_addr && !s->lookup && (r = lookup_start(s)) != 0) {
		c->reply.fail = BMC_FAIL_NETWORK;
		snprintf(c->reply.message, sizeof(c->reply.message), "host name lookup of %.200s: %s",
			 s->host, gai_strerror(r));
		call_done(e, c);
		return 0;
	}
	snprintf(s->password, sizeof(s->password), "%s", ep->password);
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	return 0;
}

static size_t engine_sessions(void *engine)
{
	struct ipmi_engine *e = engine;
	size_t n = 0;

	for (struct ipmi_sess *s = e->sessions; s; s = s->next)
		n += s->up;
	return n;
}

/* Sends Close Session on every established session and reads the
 * answers until all came or timeout_ms passed. */
static void close_all(struct ipmi_engine *e, unsigned timeout_ms)
{
	uint64_t now = bmc_now_ms(), end = now + timeout_ms;
	bool waiting = false;

	for (struct ipmi_sess *s = e->sessions; s; s = s->next) {
		s->ph = IPMI_PH_IDLE; /* a handshake or command is abandoned */
		if (!s->up)
			continue;
		ipmi_sess_close(e, s, true, now);
		waiting = true;
	}
	e->set.retries = 0; /* one try each: the wait is bounded anyway */
	while (waiting && now < end) {
		struct pollfd pfd = { .fd = e->fd, .events = POLLIN };
		uint64_t left = end - now;

		poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		now = bmc_now_ms();
		receive(e, now);
		waiting = false;
		for (struct ipmi_sess *s = e->sessions; s; s = s->next)
			if (s->ph == IPMI_PH_CLOSE)
				waiting = true;
	}
}

static void engine_free(void *engine, unsigned timeout_ms)
{
	struct ipmi_engine *e = engine;
	struct ipmi_call *c;

	if (!e)
		return;
	e->closing = true;
	close_all(e, timeout_ms);
	while (e->sessions) {
		struct ipmi_sess *s = e->sessions;

		while ((c = pop_head(s))) {
			c->reply.fail = BMC_FAIL_CANCELED;
			snprintf(c->reply.message, sizeof(c->reply.message),
				 "canceled: the IPMI engine was stopped");
			call_done(e, c);
		}
		e->sessions = s->next;
		sess_free(e, s);
	}
	callbacks(e);
	close(e->fd);
	free(e);
}

const struct bmc_engine_ops bmc_ipmi_ops = {
	.name = "ipmitool",
	.new = engine_new,
	.fd = engine_fd,
	.timeout_ms = engine_timeout_ms,
	.process = engine_process,
	.submit = engine_submit,
	.sessions = engine_sessions,
	.free = engine_free,
};
