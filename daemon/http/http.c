/* http — the HTTP listeners of ironbelld (libmicrohttpd): the admin API on
 * a unix socket and, when configured, on TCP with a bearer token; the
 * public listener (http.listen) that serves the machines being provisioned:
 * iPXE scripts and binaries, /httpboot, the OSIE files and the metadata
 * routes (daemon/public/public.c), with /healthz, /readyz and /metrics (unless
 * http.public_metrics is false).
 *
 * DESIGN: every listening socket is bound here, not by libmicrohttpd, so a
 * bind failure names its address and the unix socket gets its mode and its
 * stale-file check, and then handed over with MHD_OPTION_LISTEN_SOCKET.
 * Binding (api_bind) and starting (api_start) are two steps, so that the
 * daemon drops its capabilities in between, before any of libmicrohttpd's
 * threads exists (daemon/privilege.c). The admin TCP listener speaks TLS
 * (GnuTLS, inside libmicrohttpd) when api.tls_cert is set; its certificate
 * and key are the PEM the config snapshot read, given to libmicrohttpd,
 * which loads them once at start.
 *
 * Threads: the public listener runs http.threads daemons of one thread
 * each (one per CPU by default), each on its own socket bound to
 * http.listen with SO_REUSEPORT, on epoll with MHD_USE_TURBO: its handlers
 * never block. The kernel hands each new connection to one socket by a
 * hash of its addresses, so it wakes one thread; libmicrohttpd's own
 * thread pool puts its one listening socket into every thread's epoll set
 * without EPOLLEXCLUSIVE, and a new connection woke them all (with
 * Connection: close, about 34 against 30 µs of CPU per connection;
 * keep-alive the same: docs/http-transport.md). SO_REUSEPORT would let
 * another process of this user that asks for it share the port silently:
 * bind_tcp_n() binds it once without, first, so that a port in use at
 * start fails as it always did (one that binds it later with SO_REUSEPORT
 * too is not refused: the kernel cannot be told to). With one daemon per
 * CPU, http.pin_threads (the default) puts each daemon's thread on its
 * own CPU and has its socket ask for that CPU's connections
 * (SO_INCOMING_CPU): pin_cpus().
 *
 * The admin listeners run one thread per connection (bounded by
 * ADMIN_MAX_CONNECTIONS): a watch is a content
 * reader that blocks its own connection's thread in poll() until the store
 * changes (daemon/api/watch.c), and a write blocks until its commit, neither of
 * which may stall other clients. Each thread that reads the store gets its
 * own store_reader on first use, kept in thread-specific data and freed by
 * the key's destructor when the thread ends; api_stop() joins every thread
 * (MHD_stop_daemon), so no reader outlives the listeners.
 *
 * The config snapshot: struct api holds the current one with a reference
 * count (cfg_lock guards the pointer and the counts) and a generation that
 * api_set_config() bumps. A listener thread does not take that lock per
 * request: it keeps a hold (struct cfg_hold) on the snapshot it last saw,
 * which owns one reference to it, and a request pins the hold of its thread
 * with an atomic count on a line only that thread writes in practice. A
 * request compares the thread's generation with the api's (one acquire
 * load); only when they differ does the thread take cfg_lock, make a hold
 * on the new snapshot and let go of its old hold. A hold is freed, and its
 * reference dropped, when its last user lets go of it: the thread (on a
 * switch, or when it ends: the thread key's destructor) or the last request
 * that began on it. So a reload swaps the pointer without freeing anything
 * a request still reads, and costs each thread one lock at its next request.
 *
 * Each connection has one struct request (MHD_OPTION_NOTIFY_CONNECTION),
 * reused by every request of a keep-alive connection, so a request costs no
 * allocation in the transport; the connection's local IPv4 address is
 * cached there for the public routes' URLs (api_conn_local_ipv4()). The
 * request counter of each (listener, route, code) is looked up once per
 * thread and kept in a small thread-local table (count_request()).
 *
 * libmicrohttpd is told not to unescape the path or the query (a no-op
 * unescape callback): daemon/api/api.c makes every percent-encoding decision. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/common.h"
#include "common/jsonmem.h"
#include "common/net.h"
#include "daemon/api/api-internal.h"
#include "daemon/config/conf.h"
#include "daemon/http/http.h"
#include "daemon/public/public.h"

#define ADMIN_MAX_CONNECTIONS 128
#define PUBLIC_MAX_CONNECTIONS 1024
#define PUBLIC_CONN_MEMORY (16 * 1024)
#define LISTEN_BACKLOG 128
#define WATCH_BLOCK_SIZE (16 * 1024)
#define STOP_WATCH_GRACE_MS 1000

enum listener_type {
	LISTENER_ADMIN,
	LISTENER_PUBLIC
};

#define MAX_DAEMONS 64 /* http.threads' bound */

/* The admin listeners have one socket and one daemon; the public one has
 * one of each per thread (see DESIGN). */
struct listener {
	struct api *api;
	enum listener_type type;
	bool need_token;
	char addr[256]; /* for messages: "unix:/run/ironbell/api.sock", "0.0.0.0:7080" */
	unsigned n;     /* sockets bound: fd[0..n) */
	int fd[MAX_DAEMONS]; /* ours until MHD has started with it; -1: MHD's */
	struct MHD_Daemon *mhd[MAX_DAEMONS];
};

struct cfg_ref {
	struct ib_config *cfg;
	unsigned refs;        /* guarded by api.cfg_lock; the api's own reference counts */
	struct cfg_ref *next; /* retired snapshots still referenced */
};

/* A thread's hold on one snapshot: see DESIGN. */
struct cfg_hold {
	struct api *api;
	struct cfg_ref *ref; /* one reference, dropped when the hold is freed */
	unsigned users;      /* atomic: the thread while it is current, plus its requests */
};

struct api {
	struct store *store;
	pthread_mutex_t cfg_lock;
	struct cfg_ref *cfg;     /* current; guarded by cfg_lock */
	uint64_t cfg_gen;        /* atomic: bumped by each api_set_config() */
	struct cfg_ref *retired; /* guarded by cfg_lock */
	struct listener admin_unix, admin_tcp, public_;
	char *socket_path; /* the unix socket we bound, to remove at stop */
	dev_t socket_dev;
	ino_t socket_ino;
	int stop_efd;
	bool ready;    /* atomic */
	api_ready_fn ready_fn; /* set before the listeners start */
	void *ready_ud;
	bool stopping; /* atomic */
	bool stopped;  /* main thread only */
	int watches;   /* atomic: open watch streams */
	bool collector;
	bool bound;    /* api_bind() done */
};

/* One per connection (conn_notify()), reset for each of its requests. */
struct request {
	/* the connection's: kept across its requests */
	struct listener *l;
	uint32_t local_ipv4; /* host order; valid when local_known */
	bool local_known;
	bool in_use;         /* a request is between on_request and on_completed */
	/* the request's: zeroed by request_begin() */
	struct cfg_hold *hold;       /* pinned (cfg_pin) */
	const struct ib_config *cfg; /* hold's snapshot */
	struct api_route route;
	const char *template_;
	enum api_method method;
	struct buf body;
	bool too_large;
	bool responded;
	bool public_;              /* a route of daemon/public/public.c, in public_route */
	struct public_route public_route;
};

/* ---- the thread's store reader ---- */

static pthread_key_t reader_key;
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;

static void reader_destroy(void *p)
{
	store_reader_free(p);
}

static void reader_key_init(void)
{
	if (pthread_key_create(&reader_key, reader_destroy) != 0)
		abort();
}

struct store *api_store(struct api *api)
{
	return api->store;
}

struct store_reader *api_thread_reader(struct api *api)
{
	pthread_once(&reader_once, reader_key_init);
	struct store_reader *r = pthread_getspecific(reader_key);
	if (r)
		return r;
	r = store_reader_new(api->store);
	if (!r)
		return NULL;
	if (pthread_setspecific(reader_key, r) != 0) {
		store_reader_free(r);
		return NULL;
	}
	return r;
}

bool api_is_ready(struct api *api)
{
	return __atomic_load_n(&api->ready, __ATOMIC_ACQUIRE);
}

void api_set_ready(struct api *api, bool ready)
{
	__atomic_store_n(&api->ready, ready, __ATOMIC_RELEASE);
}

void api_set_ready_check(struct api *api, api_ready_fn fn, void *userdata)
{
	api->ready_fn = fn;
	api->ready_ud = userdata;
}

api_ready_fn api_ready_check(struct api *api, void **ret_ud)
{
	*ret_ud = api->ready_ud;
	return api->ready_fn;
}

int api_stop_fd(struct api *api)
{
	return api->stop_efd;
}

bool api_stopping(struct api *api)
{
	return __atomic_load_n(&api->stopping, __ATOMIC_ACQUIRE);
}

int api_watch_count(struct api *api, int delta)
{
	return __atomic_add_fetch(&api->watches, delta, __ATOMIC_ACQ_REL);
}

/* ---- config snapshots ---- */

const struct ib_config *api_config_get(struct api *api)
{
	pthread_mutex_lock(&api->cfg_lock);
	api->cfg->refs++;
	const struct ib_config *c = api->cfg->cfg;
	pthread_mutex_unlock(&api->cfg_lock);
	return c;
}

static void cfg_ref_drop_locked(struct api *api, struct cfg_ref *ref)
{
	if (--ref->refs > 0)
		return;
	for (struct cfg_ref **pp = &api->retired; *pp; pp = &(*pp)->next)
		if (*pp == ref) {
			*pp = ref->next;
			break;
		}
	config_free(ref->cfg);
	free(ref);
}

void api_config_put(struct api *api, const struct ib_config *cfg)
{
	if (!cfg)
		return;
	pthread_mutex_lock(&api->cfg_lock);
	struct cfg_ref *ref = api->cfg->cfg == cfg ? api->cfg : NULL;
	for (struct cfg_ref *r = api->retired; !ref && r; r = r->next)
		if (r->cfg == cfg)
			ref = r;
	if (ref)
		cfg_ref_drop_locked(api, ref);
	pthread_mutex_unlock(&api->cfg_lock);
}

void api_set_config(struct api *api, struct ib_config *cfg)
{
	struct cfg_ref *ref = calloc(1, sizeof(*ref));
	if (!ref) {
		log_error("api", "out of memory: keeping the old configuration");
		config_free(cfg);
		return;
	}
	ref->cfg = cfg;
	ref->refs = 1;
	pthread_mutex_lock(&api->cfg_lock);
	struct cfg_ref *old = api->cfg;
	api->cfg = ref;
	if (old) {
		old->next = api->retired;
		api->retired = old;
		cfg_ref_drop_locked(api, old);
	}
	/* Under the lock, so that a thread that sees the new generation
	 * finds the new snapshot when it takes the lock. */
	__atomic_add_fetch(&api->cfg_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&api->cfg_lock);

	/* The socket's mode can change without a restart. */
	if (api->socket_path && strcmp(api->socket_path, cfg->api.socket) == 0 &&
	    chmod(api->socket_path, cfg->api.socket_mode) < 0)
		log_warn("api", "cannot chmod %s: %s", api->socket_path, strerror(errno));
}

/* ---- the snapshot of each listener thread (see DESIGN) ---- */

struct cfg_thread {
	struct cfg_hold *cur; /* NULL until the thread's first request */
	uint64_t gen;         /* the api's generation cur was taken at */
};

static pthread_key_t cfg_key;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static __thread struct cfg_thread *cfg_tls;

/* Lets go of one use of h; the last one drops its snapshot reference. */
static void cfg_hold_release(struct cfg_hold *h)
{
	if (!h || __atomic_sub_fetch(&h->users, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	pthread_mutex_lock(&h->api->cfg_lock);
	cfg_ref_drop_locked(h->api, h->ref);
	pthread_mutex_unlock(&h->api->cfg_lock);
	free(h);
}

/* The key's destructor: a thread that ends lets go of its hold. Listener
 * threads end inside MHD_stop_daemon(), before api_free(). */
static void cfg_thread_destroy(void *p)
{
	struct cfg_thread *t = p;
	cfg_hold_release(t->cur);
	free(t);
	cfg_tls = NULL; /* this thread's: it runs on the thread that ends */
}

static void cfg_key_init(void)
{
	if (pthread_key_create(&cfg_key, cfg_thread_destroy) != 0)
		abort();
}

/* Makes the calling thread's hold the one of api's current snapshot. The
 * slow path: on a thread's first request and after a reload. */
static struct cfg_hold *cfg_thread_switch(struct api *api, struct cfg_thread *t)
{
	struct cfg_hold *h = calloc(1, sizeof(*h));
	if (!h)
		return t->cur && t->cur->api == api ? t->cur : NULL; /* keep the old one */
	h->api = api;
	h->users = 1; /* the thread's */
	pthread_mutex_lock(&api->cfg_lock);
	h->ref = api->cfg;
	h->ref->refs++;
	t->gen = __atomic_load_n(&api->cfg_gen, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&api->cfg_lock);
	cfg_hold_release(t->cur);
	t->cur = h;
	return h;
}

/* Pins the calling thread's snapshot of api for one request: no lock unless
 * the configuration changed since the thread's last request. Release with
 * cfg_hold_release(). NULL on ENOMEM. */
static struct cfg_hold *cfg_pin(struct api *api)
{
	struct cfg_thread *t = cfg_tls;
	struct cfg_hold *h;

	if (!t) {
		pthread_once(&cfg_once, cfg_key_init);
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		if (pthread_setspecific(cfg_key, t) != 0) {
			free(t);
			return NULL;
		}
		cfg_tls = t;
	}
	h = t->cur;
	if (!h || h->api != api || __atomic_load_n(&api->cfg_gen, __ATOMIC_ACQUIRE) != t->gen)
		h = cfg_thread_switch(api, t);
	if (h)
		__atomic_add_fetch(&h->users, 1, __ATOMIC_RELAXED);
	return h;
}

/* ---- metrics ---- */

static void collect(struct buf *out, void *userdata)
{
	struct api *api = userdata;
	buf_printf(out,
		   "# HELP ironbell_build_info The version of ironbelld that is running.\n"
		   "# TYPE ironbell_build_info gauge\n"
		   "ironbell_build_info{version=\"%s\"} 1\n",
		   PACKAGE_VERSION);
	struct jsonmem_stats js;
	jsonmem_stats(&js);
	buf_printf(out,
		   "# HELP ironbell_json_block_bytes Memory of the blocks decoded JSON "
		   "objects' nodes are cut from, in use or free for reuse (with their pages).\n"
		   "# TYPE ironbell_json_block_bytes gauge\n"
		   "ironbell_json_block_bytes{state=\"used\"} %zu\n"
		   "ironbell_json_block_bytes{state=\"free\"} %zu\n",
		   (js.blocks - js.blocks_free) * JSONMEM_BLOCK,
		   (js.blocks_free - js.blocks_cold) * JSONMEM_BLOCK);
	if (api)
		buf_printf(out,
			   "# HELP ironbell_api_watches Open watch streams on the admin API.\n"
			   "# TYPE ironbell_api_watches gauge\n"
			   "ironbell_api_watches %d\n",
			   __atomic_load_n(&api->watches, __ATOMIC_ACQUIRE));
	/* Only a reader that already exists: the caller made it before it took
	 * the metrics lock (store_reader_new must not run under that lock). */
	pthread_once(&reader_once, reader_key_init);
	struct store_reader *r = pthread_getspecific(reader_key);
	if (!r || !api)
		return;
	buf_puts(out, "# HELP ironbell_objects Objects in the store, by kind.\n"
		      "# TYPE ironbell_objects gauge\n");
	for (int k = 0; k < STORE_KIND_MAX; k++) {
		uint64_t n = 0;
		if (store_count(r, (enum store_kind)k, &n) < 0)
			continue;
		buf_printf(out, "ironbell_objects{kind=\"%s\"} %llu\n",
			   store_kind_info((enum store_kind)k)->kind, (unsigned long long)n);
	}
}

/* The request counters this thread used, by (listener, route template,
 * code): templates are string literals, so their address is the key. A
 * miss (the first request of a kind, or a slot taken by another kind)
 * formats the labels and asks the registry. A series lives as long as the
 * process (only the unit tests' metrics_reset() frees them, and no
 * listener runs there), so the pointers stay valid. */
#define COUNT_CACHE_SIZE 64
struct count_slot {
	const char *template_;
	unsigned code;
	enum listener_type type;
	struct metric *m;
};
static __thread struct count_slot count_cache[COUNT_CACHE_SIZE];

static void count_request(const struct listener *l, const char *template_, unsigned code)
{
	uintptr_t h = ((uintptr_t)template_ >> 3) * 31u + code * 2u + (unsigned)l->type;
	struct count_slot *e = &count_cache[(h ^ (h >> 7)) % COUNT_CACHE_SIZE];
	char labels[256];

	if (e->m && e->template_ == template_ && e->code == code && e->type == l->type) {
		metric_inc(e->m, 1);
		return;
	}
	snprintf(labels, sizeof(labels), "listener=\"%s\",path=\"%s\",code=\"%u\"",
		 l->type == LISTENER_ADMIN ? "admin" : "public", template_, code);
	struct metric *m = metrics_counter("ironbell_http_requests_total",
					   "HTTP requests answered, by listener, route and status code.",
					   labels);
	if (m)
		*e = (struct count_slot){ .template_ = template_, .code = code, .type = l->type, .m = m };
	metric_inc(m, 1);
}

/* ---- responses ---- */

static enum MHD_Result queue(struct MHD_Connection *c, struct request *rq, struct api_reply *rep,
			     const char *url)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (rep->watch) {
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, WATCH_BLOCK_SIZE,
							 api_watch_read, rep->watch,
							 api_watch_free);
		if (!resp)
			api_watch_free(rep->watch);
		rep->watch = NULL;
		/* A watch blocks inside its reader callback, so MHD sees no
		 * activity while it waits for a change: without this, the
		 * idle timeout would close a quiet watch and drop the first
		 * change after it. The watch ends on its own when the client
		 * goes away or the daemon stops. */
		if (resp)
			MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, 0);
	} else {
		size_t len = rep->body.len;
		char *data = buf_steal(&rep->body);
		resp = data ? MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE) :
			      NULL;
		if (!resp)
			free(data);
	}
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				rep->content_type ? rep->content_type : "application/json");
	if (rep->code == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	ret = MHD_queue_response(c, (unsigned)rep->code, resp);
	MHD_destroy_response(resp);
	rq->responded = true;
	count_request(rq->l, rq->template_, (unsigned)rep->code);
	log_debug("api", "%s %s %s -> %d", rq->l->type == LISTENER_ADMIN ? "admin" : "public", url,
		  rq->template_, rep->code);
	return ret;
}

static enum MHD_Result queue_error(struct MHD_Connection *c, struct request *rq, const char *url,
				   int code, const char *msg)
{
	struct api_reply rep = { 0 };
	api_reply_error(&rep, code, NULL, NULL, "%s", msg);
	enum MHD_Result r = queue(c, rq, &rep, url);
	buf_free(&rep.body);
	return r;
}

/* ---- requests ---- */

static bool token_ok(struct MHD_Connection *c, const struct ib_config *cfg)
{
	const char *h =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *want = cfg->api.token;
	if (!h || !want || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	h += 7;
	while (*h == ' ')
		h++;
	return api_token_equal(h, strlen(h), want, strlen(want));
}

struct query_iter {
	struct api_query *q;
	char err[256];
	int e;
};

static enum MHD_Result query_cb(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct query_iter *qi = cls;
	qi->e = api_query_set(qi->q, key, value, qi->err, sizeof(qi->err));
	return qi->e < 0 ? MHD_NO : MHD_YES;
}

/* A machine-facing route of the public listener (daemon/public/public.c): GET
 * and HEAD only, answered once the request is complete (a response
 * queued on the first call makes libmicrohttpd close the connection
 * after it: no keep-alive). */
static enum MHD_Result finish_public(struct listener *l, struct MHD_Connection *c,
				     struct request *rq, const char *url)
{
	struct public_reply rep = { 0 };
	enum MHD_Result ret;

	if (public_handle(l->api, rq->cfg, c, &rq->public_route, &rep) < 0 ||
	    (!rep.resp && !rep.queued))
		return MHD_NO;
	ret = rep.queued ? (enum MHD_Result)rep.queued_ret : MHD_queue_response(c, rep.code, rep.resp);
	if (rep.resp)
		MHD_destroy_response(rep.resp);
	rq->responded = true;
	count_request(l, rq->template_, rep.code);
	log_debug("api", "public %s %s -> %u", url, rq->template_, rep.code);
	return ret;
}

/* The first call for a request: authenticate, route, check the method and
 * the announced body size. Anything wrong is answered at once, before the
 * body is read. */
static enum MHD_Result begin(struct listener *l, struct MHD_Connection *c, struct request *rq,
			     const char *url)
{
	const struct ib_config *cfg = rq->cfg;
	int e;

	if (l->type == LISTENER_PUBLIC && public_route_parse(url, &rq->public_route)) {
		rq->template_ = public_route_template(&rq->public_route);
		if (rq->method != API_METHOD_GET && rq->method != API_METHOD_HEAD)
			return queue_error(c, rq, url, 405, "method not allowed on this path");
		rq->public_ = true;
		return MHD_YES;
	}
	rq->template_ = api_route_template(NULL);
	if (l->need_token && !token_ok(c, cfg))
		return queue_error(c, rq, url, 401, "a valid bearer token is required");
	e = api_route_parse(url, strlen(url), &rq->route);
	if (e == 0 && l->type == LISTENER_PUBLIC && rq->route.type != API_ROUTE_HEALTHZ &&
	    rq->route.type != API_ROUTE_READYZ &&
	    (rq->route.type != API_ROUTE_METRICS || !cfg->http.public_metrics))
		e = -ENOENT;
	if (e < 0)
		return queue_error(c, rq, url, 404,
				   "the server could not find the requested resource");
	rq->template_ = api_route_template(&rq->route);
	if (!(api_route_methods(&rq->route) & API_METHOD_BIT(rq->method)))
		return queue_error(c, rq, url, 405, "method not allowed on this path");
	const char *cl =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	uint64_t n;
	if (cl && num_parse_u64_str(cl, UINT64_MAX, &n) == 0 && n > cfg->http.max_body)
		return queue_error(c, rq, url, 413,
				   "the request body is larger than the limit (http.max_body)");
	buf_init(&rq->body, cfg->http.max_body);
	return MHD_YES;
}

static enum MHD_Result finish(struct listener *l, struct MHD_Connection *c, struct request *rq,
			      const char *url)
{
	struct api_query q;
	struct query_iter qi = { .q = &q };
	struct api_reply rep = { 0 };
	enum MHD_Result ret;

	if (rq->too_large)
		return queue_error(c, rq, url, 413,
				   "the request body is larger than the limit (http.max_body)");
	api_query_init(&q);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_cb, &qi);
	if (qi.e < 0)
		return queue_error(c, rq, url, 400, qi.err);
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct api_ctx ctx = {
		.api = l->api,
		.store = l->api->store,
		.cfg = rq->cfg,
		.route = &rq->route,
		.query = &q,
		.method = rq->method,
		.ctype = api_content_type_parse(MHD_lookup_connection_value(
			c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE)),
		.body = rq->body.data ? rq->body.data : "",
		.body_len = rq->body.len,
		.client_fd = ci ? ci->connect_fd : -1,
	};
	if (rq->route.type == API_ROUTE_METRICS)
		api_thread_reader(l->api); /* before the metrics lock: see collect() */
	api_handle(&ctx, &rep);
	ret = queue(c, rq, &rep, url);
	buf_free(&rep.body);
	if (rep.watch)
		api_watch_free(rep.watch);
	return ret;
}

/* The connection's struct request, made when it opens and freed when it
 * closes: every request of a keep-alive connection reuses it. */
static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	struct listener *l = cls;
	struct request *rq = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		rq = calloc(1, sizeof(*rq));
		if (rq)
			rq->l = l;
		*socket_context = rq; /* NULL: on_request refuses the connection's requests */
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && rq) {
		free(rq);
		*socket_context = NULL;
	}
}

/* The connection's struct request, cleared of the last request's state. */
static struct request *request_begin(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct request *rq = ci ? ci->socket_context : NULL;
	if (!rq || rq->in_use)
		return NULL;
	memset(&rq->hold, 0, sizeof(*rq) - offsetof(struct request, hold));
	rq->in_use = true;
	return rq;
}

uint32_t api_conn_local_ipv4(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct request *rq = ci ? ci->socket_context : NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	uint32_t v = 0;

	if (rq && rq->local_known)
		return rq->local_ipv4;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || getsockname(ci->connect_fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	if (ss.ss_family == AF_INET) {
		v = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	} else if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(&v, &a->s6_addr[12], 4);
			v = ntohl(v);
		}
	}
	if (rq) {
		rq->local_ipv4 = v;
		rq->local_known = true;
	}
	return v;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct listener *l = cls;
	struct request *rq = *con_cls;

	if (!rq) {
		rq = request_begin(c);
		if (!rq)
			return MHD_NO;
		rq->hold = cfg_pin(l->api);
		if (!rq->hold) {
			rq->in_use = false;
			return MHD_NO;
		}
		rq->cfg = rq->hold->ref->cfg;
		rq->method = api_method_parse(method);
		*con_cls = rq;
		return begin(l, c, rq, url);
	}
	if (rq->responded) {
		*upload_data_size = 0; /* answered early: drop the rest of the body */
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (rq->public_) { /* a GET with a body: the body means nothing */
			*upload_data_size = 0;
			return MHD_YES;
		}
		if (!rq->too_large && buf_append(&rq->body, upload_data, *upload_data_size) < 0)
			rq->too_large = true;
		*upload_data_size = 0;
		return MHD_YES;
	}
	return rq->public_ ? finish_public(l, c, rq, url) : finish(l, c, rq, url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;
	if (!rq)
		return;
	if (rq->public_)
		public_request_done(c, &rq->public_route);
	buf_free(&rq->body);
	cfg_hold_release(rq->hold);
	rq->hold = NULL;
	rq->cfg = NULL;
	rq->in_use = false; /* the connection's struct stays for its next request */
	*con_cls = NULL;
}

static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	return strlen(s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	const struct listener *l = cls;
	char msg[512];
	if (!log_enabled(LOG_LVL_DEBUG))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_debug("http", "%s: %s", l->addr, msg);
}

/* ---- sockets ---- */

/* Binds the unix socket at path: creates its directory when missing,
 * removes a stale socket file (only when nothing accepts on it), and gives
 * it mode. Returns the listening fd or a negative errno with err set. */
static int bind_unix(struct api *api, const char *path, unsigned mode, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd = -1, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "cannot listen on unix:%s: the path is too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			e = -errno;
			snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
			free(dir);
			return e;
		}
	}
	free(dir);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen,
				 "cannot listen on unix:%s: it exists and is not a socket", path);
			return -EEXIST;
		}
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			snprintf(err, errlen,
				 "cannot listen on unix:%s: another process is listening on it",
				 path);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(path); /* stale: nobody accepts on it */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	mode_t old = umask(0177);
	e = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (e < 0 || chmod(path, mode) < 0 || listen(fd, LISTEN_BACKLOG) < 0 || stat(path, &st) < 0)
		goto fail;
	api->socket_path = strdup(path);
	api->socket_dev = st.st_dev;
	api->socket_ino = st.st_ino;
	return fd;
fail:
	e = -errno;
	snprintf(err, errlen, "cannot listen on unix:%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return e;
}

/* Binds "host:port" (host "" or "*": every address) and listens. With
 * shared, the socket has SO_REUSEPORT, for more of its kind. */
static int bind_tcp(const char *hostport, bool shared, char *err, size_t errlen)
{
	int fd = net_bind(hostport, AF_UNSPEC, SOCK_STREAM,
			  NET_REUSEADDR | (shared ? NET_REUSEPORT : 0), NULL, err, errlen);
	if (fd >= 0 && listen(fd, LISTEN_BACKLOG) < 0) {
		int e = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", hostport, strerror(errno));
		close(fd);
		return e;
	}
	return fd;
}

/* Binds l's n sockets on hostport. With more than one they share the
 * address by SO_REUSEPORT, which would also let another process of this
 * user that asked for it (a second ironbelld, nginx with reuseport) bind
 * the port silently: so the address is first bound once without it, which
 * fails as usual when anything listens there, and let go. */
static int bind_tcp_n(struct listener *l, const char *hostport, unsigned n, char *err,
		      size_t errlen)
{
	int fd;
	if (n > 1) {
		if ((fd = net_bind(hostport, AF_UNSPEC, SOCK_STREAM, NET_REUSEADDR, NULL, err,
				   errlen)) < 0)
			return fd;
		close(fd);
	}
	for (l->n = 0; l->n < n; l->n++)
		if ((fd = l->fd[l->n] = bind_tcp(hostport, n > 1, err, errlen)) < 0)
			return fd;
	return 0;
}

/* http.pin_threads: the CPUs a public listener's n daemons go on, one
 * each, into cpus[]; false when they are not pinned (the option off, or
 * not one daemon per CPU this process may run on). A daemon's thread
 * takes the affinity of the thread that starts it, and its socket asks
 * the kernel (SO_INCOMING_CPU, which Linux 6.2 and later, and stable
 * kernels with that fix, honour within a SO_REUSEPORT group) for the
 * connections whose packets that CPU handles: a new connection is then
 * accepted and answered on the CPU that received it, by a thread that
 * is not woken from another CPU. An older kernel picks the socket by a
 * hash all the same, which costs what threads not pinned cost.
 * docs/http-transport.md has the figures. */
static bool pin_cpus(const struct listener *l, const struct ib_config *cfg, cpu_set_t *orig,
		     int *cpus)
{
	unsigned n = 0;

	if (l->type != LISTENER_PUBLIC || !cfg->http.pin_threads || l->n < 2 ||
	    pthread_getaffinity_np(pthread_self(), sizeof(*orig), orig) != 0 ||
	    (unsigned)CPU_COUNT(orig) != l->n)
		return false;
	for (int c = 0; c < CPU_SETSIZE && n < l->n; c++)
		if (CPU_ISSET(c, orig))
			cpus[n++] = c;
	return n == l->n;
}

/* Gives the calling thread the CPUs it had before pinning; every thread
 * it starts later inherits them. Should the kernel refuse (a cpuset
 * changed meanwhile), every CPU, which the kernel narrows to those the
 * process may use. */
static void unpin_self(const struct listener *l, const cpu_set_t *orig)
{
	cpu_set_t all;
	int e = pthread_setaffinity_np(pthread_self(), sizeof(*orig), orig);

	if (e == 0)
		return;
	log_warn("http", "%s: cannot give the starting thread its CPUs back: %s; trying all",
		 l->addr, strerror(e));
	CPU_ZERO(&all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	if ((e = pthread_setaffinity_np(pthread_self(), sizeof(all), &all)) != 0)
		log_error("http", "%s: the starting thread stays on one CPU: %s", l->addr,
			  strerror(e));
}

/* Starts libmicrohttpd on each of l's bound sockets, one daemon each; the
 * admin TCP listener speaks TLS when cfg has a certificate (api.tls_cert,
 * api.tls_key). */
static int start_mhd(struct listener *l, const struct ib_config *cfg, char *err, size_t errlen)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	unsigned limit = PUBLIC_MAX_CONNECTIONS, idle_timeout = cfg->http.idle_timeout;
	bool tls = l == &l->api->admin_tcp && cfg->api.tls_cert_pem && cfg->api.tls_key_pem;
	if (l->type == LISTENER_ADMIN) {
		flags |= MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
		limit = ADMIN_MAX_CONNECTIONS;
	} else {
		flags |= MHD_USE_EPOLL | MHD_USE_TURBO;
	}
	if (tls)
		flags |= MHD_USE_TLS;
	cpu_set_t orig;
	int cpus[ARRAY_SIZE(l->fd)];
	bool pin = pin_cpus(l, cfg, &orig, cpus);
	for (unsigned i = 0; i < l->n; i++) {
		if (pin) {
			cpu_set_t one;
			int e;
			CPU_ZERO(&one);
			CPU_SET(cpus[i], &one);
			if ((e = pthread_setaffinity_np(pthread_self(), sizeof(one), &one)) != 0) {
				/* the rest as they were: none on another's CPU */
				log_warn("http", "%s: cannot pin a thread to CPU %d: %s", l->addr,
					 cpus[i], strerror(e));
				unpin_self(l, &orig);
				pin = false;
			} else if (setsockopt(l->fd[i], SOL_SOCKET, SO_INCOMING_CPU, &cpus[i],
					      sizeof(cpus[i])) < 0) {
				log_warn("http", "%s: SO_INCOMING_CPU %d: %s", l->addr, cpus[i],
					 strerror(errno));
			}
		}
		/* The listener's bound, shared out: each daemon takes the
		 * connections the kernel hashes to its socket, up to its part. */
		unsigned part = limit / l->n + (i < limit % l->n);
		/* The logger first, so that no option is logged by MHD's default. */
		struct MHD_OptionItem opts[] = {
			{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, l },
			{ MHD_OPTION_LISTEN_SOCKET, l->fd[i], NULL },
			{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, l },
			{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)conn_notify, l },
			{ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)no_unescape, NULL },
			{ MHD_OPTION_CONNECTION_LIMIT, part, NULL },
			{ MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout, NULL },
			{ MHD_OPTION_END, 0, NULL }, /* the pool's size, when public */
			{ MHD_OPTION_END, 0, NULL }, /* the certificate and key, when tls */
			{ MHD_OPTION_END, 0, NULL },
			{ MHD_OPTION_END, 0, NULL },
		};
		size_t n = ARRAY_SIZE(opts) - 4;
		if (l->type != LISTENER_ADMIN)
			opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT,
							     PUBLIC_CONN_MEMORY, NULL };
		if (tls) {
			opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
							     (void *)cfg->api.tls_cert_pem };
			opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
							     (void *)cfg->api.tls_key_pem };
		}
		l->mhd[i] = MHD_start_daemon(flags, 0, NULL, NULL, on_request, l, MHD_OPTION_ARRAY,
					     opts, MHD_OPTION_END);
		if (!l->mhd[i]) {
			if (pin)
				unpin_self(l, &orig);
			snprintf(err, errlen, "cannot start the HTTP%s server on %s%s",
				 tls ? "S" : "", l->addr,
				 tls ? " (is api.tls_key the key of api.tls_cert?)" : "");
			return -EIO;
		}
		l->fd[i] = -1; /* MHD's now */
	}
	if (pin) {
		unpin_self(l, &orig);
		log_info("http", "%s: %u threads, one on each CPU (http.pin_threads)", l->addr, l->n);
	} else if (l->type == LISTENER_PUBLIC && cfg->http.pin_threads && l->n > 1) {
		log_info("http", "%s: %u threads, not pinned (http.pin_threads pins one thread per CPU "
			 "this process may run on)", l->addr, l->n);
	}
	return 0;
}

/* http.threads, with 0 meaning one per CPU this process may run on. */
static unsigned public_threads(unsigned configured)
{
	cpu_set_t set;
	int n;
	if (configured)
		return configured;
	n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
	if (n < 1)
		n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* ---- life cycle ---- */

struct api *api_new(struct store *store, struct ib_config *cfg)
{
	struct api *api = calloc(1, sizeof(*api));
	if (!api) {
		config_free(cfg);
		return NULL;
	}
	api->store = store;
	pthread_mutex_init(&api->cfg_lock, NULL);
	api->admin_unix = (struct listener){ .api = api, .type = LISTENER_ADMIN };
	api->admin_tcp = (struct listener){ .api = api, .type = LISTENER_ADMIN, .need_token = true };
	api->public_ = (struct listener){ .api = api, .type = LISTENER_PUBLIC };
	api->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	api->cfg = calloc(1, sizeof(*api->cfg));
	if (api->stop_efd < 0 || !api->cfg) {
		config_free(cfg);
		api_free(api);
		return NULL;
	}
	api->cfg->cfg = cfg;
	api->cfg->refs = 1;
	if (metrics_add_collector(collect, api) == 0)
		api->collector = true;
	return api;
}

int api_bind(struct api *api, char *err, size_t errlen)
{
	const struct ib_config *cfg = api_config_get(api);
	struct listener *l;
	int e = 0;

	if (api->bound)
		goto out;
	if (cfg->api.listen && cfg->api.tls_cert_pem &&
	    MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(err, errlen,
			 "cannot serve TLS on %s: libmicrohttpd was built without TLS support",
			 cfg->api.listen);
		e = -ENOTSUP;
		goto out;
	}
	l = &api->admin_unix;
	snprintf(l->addr, sizeof(l->addr), "unix:%s", cfg->api.socket);
	if ((e = l->fd[0] = bind_unix(api, cfg->api.socket, cfg->api.socket_mode, err, errlen)) <
	    0)
		goto out;
	l->n = 1;
	if (cfg->api.listen) {
		l = &api->admin_tcp;
		snprintf(l->addr, sizeof(l->addr), "%s", cfg->api.listen);
		if ((e = bind_tcp_n(l, cfg->api.listen, 1, err, errlen)) < 0)
			goto out;
	}
	l = &api->public_;
	snprintf(l->addr, sizeof(l->addr), "%s", cfg->http.listen);
	if ((e = bind_tcp_n(l, cfg->http.listen, public_threads(cfg->http.threads), err,
			    errlen)) < 0)
		goto out;
	api->bound = true;
out:
	api_config_put(api, cfg);
	return e < 0 ? e : 0;
}

int api_start(struct api *api, char *err, size_t errlen)
{
	const struct ib_config *cfg;
	int e;

	if ((e = api_bind(api, err, errlen)) < 0)
		return e;
	cfg = api_config_get(api);
	if ((e = start_mhd(&api->admin_unix, cfg, err, errlen)) < 0)
		goto out;
	if (cfg->api.listen && (e = start_mhd(&api->admin_tcp, cfg, err, errlen)) < 0)
		goto out;
	e = start_mhd(&api->public_, cfg, err, errlen);
out:
	api_config_put(api, cfg);
	return e < 0 ? e : 0;
}

static void stop_listener(struct listener *l)
{
	/* Every socket first, so that no daemon takes another's connections
	 * while the others stop. */
	for (unsigned i = 0; i < l->n; i++)
		if (l->mhd[i])
			l->fd[i] = MHD_quiesce_daemon(l->mhd[i]);
	for (unsigned i = 0; i < l->n; i++) {
		if (l->mhd[i]) {
			MHD_stop_daemon(l->mhd[i]);
			l->mhd[i] = NULL;
		}
		if (l->fd[i] >= 0) {
			close(l->fd[i]);
			l->fd[i] = -1;
		}
	}
	l->n = 0;
}

void api_stop(struct api *api)
{
	if (!api || api->stopped)
		return;
	api->stopped = true;
	api_set_ready(api, false);
	__atomic_store_n(&api->stopping, true, __ATOMIC_RELEASE);
	uint64_t one = 1;
	if (api->stop_efd >= 0 && write(api->stop_efd, &one, sizeof(one)) < 0)
		log_warn("api", "cannot wake the watches: %s", strerror(errno));
	/* Let the woken watches send their last chunk, so that clients see a
	 * stream that ended rather than a connection that broke. */
	for (int i = 0;
	     i < STOP_WATCH_GRACE_MS / 10 && __atomic_load_n(&api->watches, __ATOMIC_ACQUIRE) > 0;
	     i++)
		poll(NULL, 0, 10);
	stop_listener(&api->public_);
	stop_listener(&api->admin_tcp);
	stop_listener(&api->admin_unix);
	if (api->socket_path) {
		struct stat st;
		/* Only our socket: another daemon may have replaced it since. */
		if (lstat(api->socket_path, &st) == 0 && st.st_dev == api->socket_dev &&
		    st.st_ino == api->socket_ino)
			unlink(api->socket_path);
		free(api->socket_path);
		api->socket_path = NULL;
	}
}

void api_free(struct api *api)
{
	if (!api)
		return;
	api_stop(api);
	if (api->collector)
		metrics_remove_collector(collect, api);
	if (api->stop_efd >= 0)
		close(api->stop_efd);
	if (api->cfg) {
		config_free(api->cfg->cfg);
		free(api->cfg);
	}
	while (api->retired) {
		struct cfg_ref *r = api->retired;
		api->retired = r->next;
		config_free(r->cfg);
		free(r);
	}
	pthread_mutex_destroy(&api->cfg_lock);
	free(api);
}
