/* engine — the Redfish engine's shell: libcurl's multi interface driven
 * from an epoll fd, the transfer queue, the per-BMC cache, and
 * bmc_redfish_ops (bmc/provider.h).
 *
 * DESIGN: the engine owns one epoll fd (fd()) into which libcurl's sockets
 * go (CURLMOPT_SOCKETFUNCTION); libcurl's single timer
 * (CURLMOPT_TIMERFUNCTION) and the calls' own waits (a task monitor's
 * next poll) make timeout_ms(). process() never blocks: it starts the
 * calls submitted since, runs curl_multi_socket_action() for each fd that
 * epoll_wait(0) says is ready and for an expired timer, reads the ended
 * transfers (curl_multi_info_read) and hands each to its call's state
 * machine (client.c), which starts the next request or ends the call with
 * its callback. At most settings.max_connections transfers run at once;
 * more wait in a FIFO, so CURLOPT_TIMEOUT_MS counts from the start of a
 * transfer, not from its queueing. Connections stay open in the multi
 * handle's cache (at most max_connections of them) and are reused
 * (HTTP/1.1 keep-alive): so that a BMC's next request finds its
 * connection still there, a request to a BMC that answered in the last
 * RF_WARM_MS goes to the head of the FIFO, ahead of BMCs not begun (in
 * FIFO order, each of a thousand BMCs' four discovery requests came after
 * the other BMCs' and found its connection evicted: a TLS handshake per
 * request). The CA file is parsed once, not per connection (see
 * xfer_setup()).
 *
 * Per BMC (host, port, user, system name) a struct rf_ep keeps the
 * session token and its URI, the service root, the system URI and the
 * vendor; its calls run one at a time, in order, so that a login or a
 * discovery is done once for all of them. At most RF_MAX_ENDPOINTS are
 * kept: the least recently used idle one is evicted, its session DELETEd.
 * free() cancels what is pending, DELETEs every session and waits for
 * those answers at most its timeout.
 *
 * A request never carries the password but in its Basic header or the
 * login body; neither is logged nor put in a message. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bmc/bmc.h"
#include "bmc/redfish/redfish.h"
#include "common/buf.h"

#define RF_EPOLL_BATCH 64
#define RF_PROCESS_ROUNDS 8 /* start / act / read rounds in one process() */
#define RF_HDR_MAX 1024     /* a header value kept */

/* One HTTP request. Its curl handle is made only when it leaves the wait
 * queue, so that a thousand queued requests hold no curl buffers. */
struct rf_xfer {
	CURL *h; /* NULL while queued */
	struct rf_engine *e;
	struct rf_call *call; /* NULL: detached (a session DELETE) */
	char *url;            /* owned */
	char method[8];
	bool insecure;
	bool basic; /* with user and password below */
	char user[BMC_USER_MAX];
	char password[BMC_PASSWORD_MAX];
	struct curl_slist *hdrs;
	char *body; /* the request body, owned */
	size_t body_len;
	struct buf resp;
	bool too_big;
	bool active; /* in the multi handle; else queued */
	char location[RF_HDR_MAX];
	char token[RF_TOKEN_MAX];
	char etag[RF_ETAG_MAX];
	char errbuf[CURL_ERROR_SIZE];
	struct rf_xfer *qnext;       /* the wait queue */
	struct rf_xfer *prev, *next; /* every transfer */
};

struct rf_engine {
	struct bmc_settings set;
	char *ca_file;
	CURLM *multi;
	int epfd;
	uint64_t timer_ms; /* curl's deadline; 0: none */
	bool timer_set;
	struct rf_xfer *xfers;         /* all */
	struct rf_xfer *qhead, *qtail; /* waiting for a connection slot */
	unsigned nactive;
	struct rf_ep *eps;
	size_t neps;
	struct rf_call *ready, *ready_tail;
	struct rf_call **waiting;
	size_t nwaiting, capwaiting;
	bool closing;
};

static int curl_users;

/* ---- transfers ---- */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct rf_xfer *x = ud;
	size_t len = size * n;

	if (x->resp.len + len > RF_MAX_BODY || buf_append(&x->resp, p, len) < 0) {
		x->too_big = x->resp.len + len > RF_MAX_BODY;
		return 0; /* CURLE_WRITE_ERROR */
	}
	return len;
}

/* Copies a header's value (trimmed) into out when name matches. */
static void header_value(const char *line, size_t n, const char *name, char *out, size_t cap)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
		return;
	line += k + 1;
	n -= k + 1;
	while (n && (*line == ' ' || *line == '\t'))
		line++, n--;
	while (n && (line[n - 1] == '\r' || line[n - 1] == '\n' || line[n - 1] == ' '))
		n--;
	if (n >= cap || memchr(line, '\0', n)) {
		out[0] = '\0';
		return;
	}
	memcpy(out, line, n);
	out[n] = '\0';
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct rf_xfer *x = ud;
	size_t len = size * n;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* A new response (after a 100 Continue): its own headers. */
		x->location[0] = x->token[0] = x->etag[0] = '\0';
		return len;
	}
	header_value(p, len, "Location", x->location, sizeof(x->location));
	header_value(p, len, "X-Auth-Token", x->token, sizeof(x->token));
	header_value(p, len, "ETag", x->etag, sizeof(x->etag));
	return len;
}

static void xfer_free(struct rf_xfer *x)
{
	struct rf_engine *e = x->e;

	if (x->active) {
		curl_multi_remove_handle(e->multi, x->h);
		e->nactive--;
	} else {
		/* Queued (or just taken off the queue): unlink. */
		struct rf_xfer **pp = &e->qhead, *last = NULL;
		while (*pp && *pp != x) {
			last = *pp;
			pp = &(*pp)->qnext;
		}
		if (*pp) {
			*pp = x->qnext;
			if (e->qtail == x)
				e->qtail = last;
		}
	}
	if (x->prev)
		x->prev->next = x->next;
	else
		e->xfers = x->next;
	if (x->next)
		x->next->prev = x->prev;
	if (x->h)
		curl_easy_cleanup(x->h);
	curl_slist_free_all(x->hdrs);
	free(x->url);
	explicit_bzero(x->password, sizeof(x->password));
	if (x->body) {
		explicit_bzero(x->body, x->body_len); /* a login body holds the password */
		free(x->body);
	}
	buf_free(&x->resp);
	free(x);
}

static int xfer_setup(struct rf_xfer *x);

/* Moves queued transfers into the multi handle while slots are free. */
static void xfer_pump(struct rf_engine *e)
{
	while (e->qhead && e->nactive < e->set.max_connections) {
		struct rf_xfer *x = e->qhead;

		e->qhead = x->qnext;
		if (!e->qhead)
			e->qtail = NULL;
		x->qnext = NULL;
		if (xfer_setup(x) < 0 || curl_multi_add_handle(e->multi, x->h) != CURLM_OK) {
			/* Only short of memory: the call fails at its next
			 * wake-up, from process(). */
			struct rf_call *c = x->call;
			xfer_free(x);
			if (c) {
				c->busy = false;
				c->xfer_failed = true;
				c->wake_ms = 1;
				(void)rf_engine_wait(e, c);
			}
			continue;
		}
		x->active = true;
		e->nactive++;
	}
}

/* The base URL https://host:port, brackets around an IPv6 address. */
static int base_url(const struct bmc_endpoint *ep, char *out, size_t cap)
{
	bool v6 = strchr(ep->host, ':') != NULL;
	int n = snprintf(out, cap, "https://%s%s%s:%u", v6 ? "[" : "", ep->host, v6 ? "]" : "",
			 ep->port ? ep->port : 443u);

	return n > 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

static int xfer_headers(struct rf_xfer *x, const struct rf_ep *ep, bool has_body,
			const char *if_match)
{
	char h[RF_TOKEN_MAX + RF_ETAG_MAX + 32];
	struct curl_slist *l = NULL, *t;
	const char *fixed[] = { "Accept: application/json", "OData-Version: 4.0", "Expect:",
				has_body ? "Content-Type: application/json; charset=utf-8" : NULL };

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (!fixed[i])
			continue;
		if (!(t = curl_slist_append(l, fixed[i])))
			goto nomem;
		l = t;
	}
	if (!ep->ep.basic_auth && ep->token[0]) {
		snprintf(h, sizeof(h), "X-Auth-Token: %s", ep->token);
		if (!(t = curl_slist_append(l, h)))
			goto nomem;
		l = t;
	}
	if (if_match && if_match[0]) {
		snprintf(h, sizeof(h), "If-Match: %s", if_match);
		if (!(t = curl_slist_append(l, h)))
			goto nomem;
		l = t;
	}
	x->hdrs = l;
	return 0;
nomem:
	curl_slist_free_all(l);
	return -ENOMEM;
}

/* Makes the request's curl handle. 0, or -ENOMEM. */
static int xfer_setup(struct rf_xfer *x)
{
	struct rf_engine *e = x->e;
	CURL *h = x->h = curl_easy_init();

	if (!h)
		return -ENOMEM;
	curl_easy_setopt(h, CURLOPT_URL, x->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)e->set.http_timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)e->set.http_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, x->insecure ? 0L : 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, x->insecure ? 0L : 2L);
	/* libcurl parses its CA file into a new store for each connection
	 * unless it may cache the store in the multi handle, which it does
	 * only for a CA file without a CA directory (Debian builds it with
	 * both): one file, never a directory. Without verification, no CA at
	 * all, which libcurl would otherwise still parse. */
	if (x->insecure)
		curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
	else if (e->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, e->ca_file);
	curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, x->hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(h, CURLOPT_PRIVATE, x);
	if (x->basic) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, x->user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, x->password);
	}
	if (x->body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, x->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)x->body_len);
	}
	if (strcmp(x->method, "GET") != 0 && strcmp(x->method, "POST") != 0)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, x->method);
	else if (strcmp(x->method, "POST") == 0 && !x->body)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{}");
	return 0;
}

int rf_http(struct rf_engine *e, struct rf_ep *ep, struct rf_call *call, const char *method,
	    const char *path, const char *body, const char *if_match)
{
	char url[BMC_HOST_MAX + RF_URI_MAX + 32];
	struct rf_xfer *x = calloc(1, sizeof(*x));
	int rc;
	size_t n;

	if (!x)
		return -ENOMEM;
	x->e = e;
	x->call = call;
	buf_init(&x->resp, RF_MAX_BODY);
	if ((rc = base_url(&ep->ep, url, sizeof(url))) < 0)
		goto fail;
	n = strlen(url);
	snprintf(url + n, sizeof(url) - n, "%s", path);
	rc = -ENOMEM;
	if (!(x->url = strdup(url)))
		goto fail;
	snprintf(x->method, sizeof(x->method), "%s", method);
	x->insecure = ep->ep.insecure_tls;
	if ((x->basic = ep->ep.basic_auth)) {
		memcpy(x->user, ep->ep.user, sizeof(x->user));
		memcpy(x->password, ep->ep.password, sizeof(x->password));
	}
	if (body) {
		x->body_len = strlen(body);
		if (!(x->body = strdup(body)))
			goto fail;
	}
	if ((rc = xfer_headers(x, ep, body != NULL, if_match)) < 0)
		goto fail;
	x->next = e->xfers;
	if (e->xfers)
		e->xfers->prev = x;
	e->xfers = x;
	if (ep->answer_ms && bmc_now_ms() - ep->answer_ms <= RF_WARM_MS) {
		/* Its connection is in curl's cache now: ahead of the BMCs
		 * not yet begun, before a new connection evicts it. */
		x->qnext = e->qhead;
		e->qhead = x;
		if (!e->qtail)
			e->qtail = x;
	} else {
		if (e->qtail)
			e->qtail->qnext = x;
		else
			e->qhead = x;
		e->qtail = x;
	}
	xfer_pump(e);
	return 0;
fail:
	curl_slist_free_all(x->hdrs);
	if (x->body) {
		explicit_bzero(x->body, x->body_len);
		free(x->body);
	}
	free(x->url);
	explicit_bzero(x->password, sizeof(x->password));
	free(x);
	return rc;
}

/* ---- libcurl's callbacks ---- */

static int on_socket(CURL *h, curl_socket_t s, int what, void *ud, void *sockp)
{
	struct rf_engine *e = ud;
	struct epoll_event ev = { .data.fd = s };

	(void)h;
	(void)sockp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(e->epfd, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
	if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, s, &ev) < 0 && errno == ENOENT)
		epoll_ctl(e->epfd, EPOLL_CTL_ADD, s, &ev);
	return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *ud)
{
	struct rf_engine *e = ud;

	(void)m;
	e->timer_set = timeout_ms >= 0;
	e->timer_ms = timeout_ms >= 0 ? bmc_now_ms() + (uint64_t)timeout_ms : 0;
	return 0;
}

/* ---- endpoints ---- */

static bool ep_matches(const struct rf_ep *p, const struct bmc_endpoint *ep)
{
	return p->ep.port == ep->port && strcmp(p->ep.host, ep->host) == 0 &&
	       strcmp(p->ep.user, ep->user) == 0 && strcmp(p->ep.system_name, ep->system_name) == 0;
}

void rf_engine_drop_session(struct rf_engine *e, struct rf_ep *ep)
{
	if (ep->token[0] && ep->session[0] && !ep->ep.basic_auth)
		(void)rf_http(e, ep, NULL, "DELETE", ep->session, NULL, NULL);
	explicit_bzero(ep->token, sizeof(ep->token));
	ep->session[0] = '\0';
}

static void ep_free(struct rf_engine *e, struct rf_ep *p)
{
	struct rf_ep **pp = &e->eps;

	rf_engine_drop_session(e, p);
	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	e->neps--;
	explicit_bzero(p, sizeof(*p));
	free(p);
}

static struct rf_ep *ep_get(struct rf_engine *e, const struct bmc_endpoint *ep, uint64_t now)
{
	struct rf_ep *p, *lru = NULL;

	for (p = e->eps; p; p = p->next) {
		if (ep_matches(p, ep))
			return p;
		if (!p->head && (!lru || p->used_ms < lru->used_ms))
			lru = p;
	}
	if (e->neps >= RF_MAX_ENDPOINTS) {
		if (!lru)
			return NULL;
		ep_free(e, lru);
	}
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->ep = *ep;
	p->used_ms = now;
	p->vendor = rf_vendor_find(NULL);
	p->next = e->eps;
	e->eps = p;
	e->neps++;
	return p;
}

static void ready_push(struct rf_engine *e, struct rf_call *c)
{
	c->ready_next = NULL;
	if (e->ready_tail)
		e->ready_tail->ready_next = c;
	else
		e->ready = c;
	e->ready_tail = c;
}

void rf_engine_call_done(struct rf_engine *e, struct rf_call *c)
{
	struct rf_ep *ep = c->ep;

	if (ep->head == c) {
		ep->head = c->next;
		if (!ep->head)
			ep->tail = NULL;
		else if (!e->closing)
			ready_push(e, ep->head);
	}
	for (size_t i = 0; i < e->nwaiting; i++) {
		if (e->waiting[i] == c) {
			e->waiting[i] = e->waiting[--e->nwaiting];
			break;
		}
	}
}

int rf_engine_wait(struct rf_engine *e, struct rf_call *c)
{
	if (e->nwaiting == e->capwaiting) {
		size_t cap = e->capwaiting ? e->capwaiting * 2 : 16;
		struct rf_call **w = realloc(e->waiting, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		e->waiting = w;
		e->capwaiting = cap;
	}
	e->waiting[e->nwaiting++] = c;
	return 0;
}

/* ---- the ops ---- */

static int engine_new(const struct bmc_settings *settings, void **ret, char *err, size_t errlen)
{
	struct rf_engine *e = calloc(1, sizeof(*e));
	int rc = -ENOMEM;

	if (!e)
		goto fail;
	e->epfd = -1;
	e->set = *settings;
	bmc_settings_default(&e->set);
	e->set.ca_file = NULL;
	if (settings->ca_file && !(e->ca_file = strdup(settings->ca_file)))
		goto fail;
	if (curl_users++ == 0 && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		curl_users--;
		snprintf(err, errlen, "curl_global_init failed");
		rc = -EIO;
		goto fail;
	}
	if ((e->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		goto fail_curl;
	}
	if (!(e->multi = curl_multi_init())) {
		snprintf(err, errlen, "curl_multi_init failed");
		goto fail_curl;
	}
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)e->set.max_connections);
	curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, (long)e->set.max_connections);
	*ret = e;
	return 0;
fail_curl:
	if (e->epfd >= 0)
		close(e->epfd);
	if (--curl_users == 0)
		curl_global_cleanup();
fail:
	if (e)
		free(e->ca_file);
	free(e);
	if (rc == -ENOMEM && err[0] == '\0')
		snprintf(err, errlen, "out of memory");
	return rc;
}

static int engine_fd(void *engine)
{
	return ((struct rf_engine *)engine)->epfd;
}

static int engine_timeout_ms(void *engine, uint64_t now)
{
	struct rf_engine *e = engine;
	uint64_t at = 0;

	if (e->ready)
		return 0;
	if (e->timer_set)
		at = e->timer_ms;
	for (size_t i = 0; i < e->nwaiting; i++)
		if (!at || e->waiting[i]->wake_ms < at)
			at = e->waiting[i]->wake_ms;
	if (!at)
		return -1;
	if (at <= now)
		return 0;
	return at - now > 60000 ? 60000 : (int)(at - now);
}

/* Runs curl on the ready sockets and an expired timer. */
static void run_sockets(struct rf_engine *e, uint64_t now)
{
	struct epoll_event evs[RF_EPOLL_BATCH];
	int running, n;

	for (int round = 0; round < RF_PROCESS_ROUNDS; round++) {
		n = epoll_wait(e->epfd, evs, RF_EPOLL_BATCH, 0);
		for (int i = 0; i < n; i++) {
			int flags = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
				    (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				    (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
			curl_multi_socket_action(e->multi, evs[i].data.fd, flags, &running);
		}
		if (n < RF_EPOLL_BATCH)
			break;
	}
	if (e->timer_set && e->timer_ms <= now) {
		e->timer_set = false;
		curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
}

/* Hands each ended transfer to its call. */
static void read_done(struct rf_engine *e, uint64_t now)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(e->multi, &left))) {
		struct rf_xfer *x = NULL;
		long status = 0;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
		struct rf_resp r = {
			.curl_code = m->data.result,
			.curl_err = x->errbuf[0] ? x->errbuf : curl_easy_strerror(m->data.result),
			.status = status,
			.body = x->resp.data ? x->resp.data : "",
			.len = x->resp.len,
			.too_big = x->too_big,
			.location = x->location,
			.token = x->token,
			.etag = x->etag,
		};
		curl_multi_remove_handle(e->multi, x->h);
		x->active = false;
		e->nactive--;
		if (x->call) {
			x->call->busy = false;
			if (r.curl_code == CURLE_OK)
				x->call->ep->answer_ms = now;
			rf_call_resp(x->call, &r, now);
		}
		xfer_free(x);
		xfer_pump(e);
	}
}

static void engine_process(void *engine, uint64_t now)
{
	struct rf_engine *e = engine;

	for (int round = 0; round < RF_PROCESS_ROUNDS; round++) {
		struct rf_call *c = e->ready;

		e->ready = e->ready_tail = NULL;
		while (c) {
			struct rf_call *next = c->ready_next;
			rf_call_start(c, now);
			c = next;
		}
		run_sockets(e, now);
		read_done(e, now);
		for (size_t i = 0; i < e->nwaiting;) {
			struct rf_call *w = e->waiting[i];
			if (w->wake_ms > now) {
				i++;
				continue;
			}
			e->waiting[i] = e->waiting[--e->nwaiting];
			rf_call_wake(w, now);
		}
		if (!e->ready && !(e->timer_set && e->timer_ms <= now))
			break;
	}
}

static int engine_submit(void *engine, const struct bmc_endpoint *ep, const struct bmc_call *call,
			 bmc_done_fn done, void *userdata)
{
	struct rf_engine *e = engine;
	uint64_t now = bmc_now_ms();
	struct rf_ep *p;
	struct rf_call *c;

	if ((unsigned)call->cmd >= BMC_CMD_MAX || !ep->host[0] || !done ||
	    (call->cmd == BMC_CMD_BOOT_SET && (unsigned)call->boot.device > BMC_BOOT_HTTP))
		return -EINVAL;
	if (e->closing)
		return -ECANCELED;
	if (!(p = ep_get(e, ep, now)))
		return -EAGAIN;
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	c->e = e;
	c->ep = p;
	c->target = *ep;
	c->call = *call;
	c->done = done;
	c->userdata = userdata;
	c->submit_ms = now;
	p->used_ms = now;
	if (p->tail) {
		p->tail->next = c;
		p->tail = c;
	} else {
		p->head = p->tail = c;
		ready_push(e, c);
	}
	return 0;
}

static size_t engine_sessions(void *engine)
{
	struct rf_engine *e = engine;
	size_t n = 0;

	for (struct rf_ep *p = e->eps; p; p = p->next)
		n += p->token[0] != '\0';
	return n;
}

/* Cancels every call: their transfers go, their callbacks run. */
static void cancel_all(struct rf_engine *e, uint64_t now)
{
	struct rf_xfer *x, *next;

	for (x = e->xfers; x; x = next) {
		next = x->next;
		if (x->call) {
			x->call->busy = false;
			xfer_free(x);
		}
	}
	e->ready = e->ready_tail = NULL;
	for (struct rf_ep *p = e->eps; p; p = p->next)
		while (p->head)
			rf_call_fail(p->head, BMC_FAIL_CANCELED, "the Redfish engine stopped", now);
	e->nwaiting = 0;
}

static void engine_free(void *engine, unsigned timeout_ms)
{
	struct rf_engine *e = engine;
	uint64_t start = bmc_now_ms(), now = start;

	if (!e)
		return;
	e->closing = true;
	cancel_all(e, now);
	while (e->eps)
		ep_free(e, e->eps); /* DELETEs each session, detached */
	/* Wait for the DELETEs, at most timeout_ms. */
	while (e->xfers && now - start < timeout_ms) {
		int wait = engine_timeout_ms(e, now);
		uint64_t left = timeout_ms - (now - start);
		struct epoll_event ev;

		if (wait < 0 || (uint64_t)wait > left)
			wait = (int)left;
		if (wait > 100)
			wait = 100;
		epoll_wait(e->epfd, &ev, 1, wait);
		now = bmc_now_ms();
		run_sockets(e, now);
		read_done(e, now);
	}
	while (e->xfers)
		xfer_free(e->xfers);
	curl_multi_cleanup(e->multi);
	close(e->epfd);
	if (--curl_users == 0)
		curl_global_cleanup();
	free(e->waiting);
	free(e->ca_file);
	free(e);
}

const struct bmc_engine_ops bmc_redfish_ops = {
	.name = "redfish",
	.new = engine_new,
	.fd = engine_fd,
	.timeout_ms = engine_timeout_ms,
	.process = engine_process,
	.submit = engine_submit,
	.sessions = engine_sessions,
	.free = engine_free,
};
