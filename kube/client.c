/* client — the HTTP client of the Kubernetes API: one shared kube_api
 * (connection settings, bearer token, rate limit) and one kube_session
 * per thread (a libcurl easy handle, its connection kept alive).
 *
 * DESIGN: every thread of the part (one watch per kind, the writer, the
 * elector) has its own session, so no handle is shared and a blocking
 * curl_easy_perform() is what each thread wants: a watch is a long GET
 * whose bytes the write callback hands on as they come. What the threads
 * share sits in kube_api behind one mutex: the token (read again from
 * the token file when the server answers 401, once per request, as
 * client-go does for rotating service-account tokens) and client-go's
 * client-side rate limit, a token bucket of qps tokens a second holding
 * at most burst, that a request waits on (golang.org/x/time/rate's
 * reservation: the wait is computed under the lock, slept outside it,
 * and refused at once when longer than the request's timeout). TLS is
 * verified always: the CA, the client certificate and its key go to
 * libcurl from memory (CURLOPT_*_BLOB); a cluster's tls-server-name is
 * the URL's host, with CURLOPT_CONNECT_TO sending the connection to the
 * server's real address, so SNI and the certificate's name check both use
 * it. HTTP/2 is used when the server offers it over ALPN. A session is
 * cancelled from another thread by an atomic flag that the progress
 * callback reads (libcurl calls it at least once a second, so a cancel
 * takes effect within a second) and the rate-limit wait checks. A
 * stream's idle time is libcurl's low-speed check (below 1 byte a second
 * on average for that long), which a silent stream fails and a stream of
 * watch events, hundreds of bytes each, passes. With tls-server-name the
 * Host header carries that name too; the API server does not read it. Each
 * answer is counted in ironbell_kube_requests_total{verb,code}, and
 * non-stream requests timed in ironbell_kube_request_seconds{verb}. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/log.h"
#include "common/metrics.h"
#include "common/num.h"
#include "kube/kube-internal.h"

#define KUBE_NS 1000000000ull
#define KUBE_MAX_RETRY_AFTER 3600u      /* seconds of a Retry-After taken */
#define KUBE_MAX_ERROR_BODY 200         /* bytes of a non-Status body quoted */
#define KUBE_SLEEP_SLICE_MS 100         /* a rate-limit wait checks cancel this often */
#define KUBE_MAX_STATUS_BODY (1u << 20) /* bytes kept of a stream's non-200 answer */
#define KUBE_USER_AGENT "ironbelld/" VERSION

enum verb {
	V_GET,
	V_POST,
	V_PUT,
	V_PATCH,
	V_DELETE,
	V_WATCH,
	V_OTHER,
	V_MAX
};
static const char *const verb_names[V_MAX] = { "GET",    "POST",  "PUT",  "PATCH",
					       "DELETE", "WATCH", "OTHER" };

struct kube_api {
	struct kube_conn conn; /* conn.token is behind lock */
	struct kube_api_opts opts;
	char *base_url;   /* scheme, host (tls-server-name), port, path prefix */
	char *connect_to; /* for tls-server-name: "NAME:PORT:HOST:PORT" */
	pthread_mutex_t lock;
	/* the token bucket, in tokens x KUBE_NS */
	uint64_t bucket_ns;    /* the last refill */
	int64_t bucket_credit; /* < 0: reserved ahead */
	struct metric *m_seconds[V_MAX];
};

struct kube_session {
	struct kube_api *api;
	CURL *h;
	struct curl_slist *connect_to_list;
	atomic_bool cancelled;
	char errbuf[CURL_ERROR_SIZE];
	/* the transfer under way */
	struct kube_response *resp;
	kube_stream_fn fn;
	void *userdata;
	bool streaming;
	bool stream_unflushed; /* fn got bytes since its last NULL call */
	bool too_big;
	int cb_rc;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * KUBE_NS + (uint64_t)ts.tv_nsec;
}

/* ---- the api ---- */

/* Splits "https://HOST[:PORT][/PATH]" (checked by kubeconfig.c) for a
 * tls-server-name: base URL with name as the host, and the CONNECT_TO. */
static int split_server(struct kube_api *a)
{
	const char *s = a->conn.server, *auth = s + 8, *end = auth, *host_end, *port = "443";
	size_t port_len = 3;

	if (strncasecmp(s, "https://", 8) != 0)
		return -EINVAL;
	if (*auth == '[') {
		host_end = strchr(auth, ']');
		if (!host_end)
			return -EINVAL;
		end = ++host_end;
	} else {
		host_end = auth + strcspn(auth, ":/");
		end = host_end;
	}
	if (*end == ':') {
		port = end + 1;
		port_len = strcspn(port, "/");
		end = port + port_len;
	}
	if (asprintf(&a->base_url, "https://%s:%.*s%s", a->conn.tls_server_name, (int)port_len,
		     port, end) < 0 ||
	    asprintf(&a->connect_to, "%s:%.*s:%.*s:%.*s", a->conn.tls_server_name, (int)port_len,
		     port, (int)(host_end - auth), auth, (int)port_len, port) < 0)
		return -ENOMEM;
	return 0;
}

static char *dup_opt(const char *s, bool *failed)
{
	char *d = NULL;
	if (s && !(d = strdup(s)))
		*failed = true;
	return d;
}

int kube_api_new(const struct kube_conn *conn, const struct kube_api_opts *opts,
		 struct kube_api **ret, char *err, size_t errlen)
{
	static const double bounds[] = {
		0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
	};
	struct kube_api *a = NULL;
	bool failed = false;
	int rc = -ENOMEM;

	if (!conn->server) {
		snprintf(err, errlen, "no server");
		return -EINVAL;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		snprintf(err, errlen, "curl_global_init: %s", curl_easy_strerror(curl_init_rc));
		return -EIO;
	}
	if (!(a = calloc(1, sizeof(*a))))
		goto fail;
	pthread_mutex_init(&a->lock, NULL);
	a->conn.server = dup_opt(conn->server, &failed);
	a->conn.tls_server_name = dup_opt(conn->tls_server_name, &failed);
	a->conn.ca_pem = dup_opt(conn->ca_pem, &failed);
	a->conn.cert_pem = dup_opt(conn->cert_pem, &failed);
	a->conn.key_pem = dup_opt(conn->key_pem, &failed);
	a->conn.token = dup_opt(conn->token, &failed);
	a->conn.token_file = dup_opt(conn->token_file, &failed);
	a->conn.namespace_ = dup_opt(conn->namespace_, &failed);
	a->conn.origin = dup_opt(conn->origin ? conn->origin : conn->server, &failed);
	if (failed)
		goto fail;
	if (opts)
		a->opts = *opts;
	if (!a->opts.timeout_ms)
		a->opts.timeout_ms = 30000;
	if (!a->opts.connect_timeout_ms)
		a->opts.connect_timeout_ms = 10000;
	if (a->opts.qps && !a->opts.burst)
		a->opts.burst = 1;
	a->bucket_ns = now_ns();
	a->bucket_credit = (int64_t)a->opts.burst * (int64_t)KUBE_NS;
	if (a->conn.tls_server_name) {
		if ((rc = split_server(a)) < 0) {
			if (rc == -EINVAL)
				snprintf(err, errlen, "server %s: not an https:// URL",
					 conn->server);
			goto fail;
		}
	} else if (!(a->base_url = strdup(a->conn.server))) {
		goto fail;
	}
	for (int v = 0; v < V_MAX; v++) {
		char l[32];
		if (v == V_WATCH)
			continue;
		snprintf(l, sizeof(l), "verb=\"%s\"", verb_names[v]);
		a->m_seconds[v] = metrics_histogram("ironbell_kube_request_seconds",
						    "Round trip of a request to the Kubernetes API "
						    "server (watches excepted), by verb.",
						    l, bounds, sizeof(bounds) / sizeof(bounds[0]));
	}
	*ret = a;
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	kube_api_free(a);
	return rc;
}

void kube_api_free(struct kube_api *a)
{
	if (!a)
		return;
	kube_conn_clear(&a->conn);
	free(a->base_url);
	free(a->connect_to);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

const char *kube_api_origin(const struct kube_api *a)
{
	return a->conn.origin;
}

/* Reserves one token of the bucket: the nanoseconds to wait for it (0:
 * now), or -ETIMEDOUT (nothing reserved) when that is over max_ns. The
 * credit goes below zero by the tokens reserved ahead of the refill. */
static int64_t bucket_reserve(struct kube_api *a, uint64_t max_ns)
{
	uint64_t qps = a->opts.qps, now, dt;
	int64_t cap = (int64_t)a->opts.burst * (int64_t)KUBE_NS, wait = 0;

	if (!qps)
		return 0;
	pthread_mutex_lock(&a->lock);
	now = now_ns();
	dt = now > a->bucket_ns ? now - a->bucket_ns : 0;
	if (now > a->bucket_ns)
		a->bucket_ns = now;
	/* dt * qps cannot overflow below what fills the bucket */
	if (dt >= (uint64_t)(cap - a->bucket_credit) / qps + 1)
		a->bucket_credit = cap;
	else
		a->bucket_credit += (int64_t)(dt * qps);
	if (a->bucket_credit > cap)
		a->bucket_credit = cap;
	if (a->bucket_credit >= (int64_t)KUBE_NS) {
		a->bucket_credit -= (int64_t)KUBE_NS;
	} else {
		uint64_t need = (uint64_t)((int64_t)KUBE_NS - a->bucket_credit);
		uint64_t ns = (need + qps - 1) / qps;
		if (ns > max_ns) {
			wait = -ETIMEDOUT;
		} else {
			a->bucket_credit -= (int64_t)KUBE_NS;
			wait = (int64_t)ns;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return wait;
}

/* Reads the token file again (after a 401). 0 when a token was read. */
static int token_reload(struct kube_api *a)
{
	char *tok = NULL, err[256];
	int rc;

	if (!a->conn.token_file)
		return -ENOENT;
	rc = kube_token_read(a->conn.token_file, &tok, err, sizeof(err));
	if (rc < 0) {
		log_warn("kube", "%s: after a 401: %s", a->conn.origin, err);
		return rc;
	}
	pthread_mutex_lock(&a->lock);
	char *old = a->conn.token;
	a->conn.token = tok;
	pthread_mutex_unlock(&a->lock);
	if (old) {
		explicit_bzero(old, strlen(old));
		free(old);
	}
	return 0;
}

/* ---- the session ---- */

static size_t on_header(char *p, size_t size, size_t n, void *userdata)
{
	struct kube_session *s = userdata;
	size_t len = size * n;
	static const char name[] = "retry-after:";

	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		s->resp->retry_after = 0; /* a new answer (after a 100, a 401) */
		return len;
	}
	if (len > sizeof(name) - 1 && strncasecmp(p, name, sizeof(name) - 1) == 0) {
		const char *v = p + sizeof(name) - 1, *e = p + len;
		uint64_t secs;
		while (v < e && (*v == ' ' || *v == '\t'))
			v++;
		while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		/* seconds only; an HTTP-date is ignored, as client-go does */
		int rc = num_parse_u64(v, (size_t)(e - v), KUBE_MAX_RETRY_AFTER, &secs);
		if (rc == 0)
			s->resp->retry_after = (unsigned)secs;
		else if (rc == -ERANGE)
			s->resp->retry_after = KUBE_MAX_RETRY_AFTER;
	}
	return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
	struct kube_session *s = userdata;
	size_t len = size * n;
	long status = 0;

	if (s->streaming) {
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
		if (status == 200) {
			s->stream_unflushed = true;
			int rc = s->fn(p, len, s->userdata);
			if (rc < 0) {
				s->cb_rc = rc;
				return 0;
			}
			return len;
		}
	}
	int rc = buf_append(&s->resp->body, p, len);
	if (rc < 0) {
		s->too_big = rc == -E2BIG;
		s->cb_rc = rc;
		return 0;
	}
	return len;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct kube_session *s = userdata;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	/* libcurl calls this after each round of reads: what the stream has
	 * brought so far is all there is for now. */
	if (s->streaming && s->stream_unflushed) {
		s->stream_unflushed = false;
		int rc = s->fn(NULL, 0, s->userdata);
		if (rc < 0) {
			s->cb_rc = rc;
			return 1;
		}
	}
	return atomic_load_explicit(&s->cancelled, memory_order_relaxed) ? 1 : 0;
}

struct kube_session *kube_session_new(struct kube_api *a)
{
	struct kube_session *s = calloc(1, sizeof(*s));
	struct curl_blob blob;
	CURL *h;

	if (!s || !(s->h = curl_easy_init())) {
		free(s);
		return NULL;
	}
	h = s->h;
	s->api = a;
	atomic_init(&s->cancelled, false);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)a->opts.connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_USERAGENT, KUBE_USER_AGENT);
	if (a->conn.ca_pem) {
		blob = (struct curl_blob){ a->conn.ca_pem, strlen(a->conn.ca_pem), CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	if (a->conn.cert_pem) {
		blob = (struct curl_blob){ a->conn.cert_pem, strlen(a->conn.cert_pem),
					   CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (a->conn.key_pem) {
		blob = (struct curl_blob){ a->conn.key_pem, strlen(a->conn.key_pem),
					   CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (a->connect_to) {
		if (!(s->connect_to_list = curl_slist_append(NULL, a->connect_to))) {
			kube_session_free(s);
			return NULL;
		}
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, s->connect_to_list);
	}
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	return s;
}

void kube_session_free(struct kube_session *s)
{
	if (!s)
		return;
	curl_easy_cleanup(s->h);
	curl_slist_free_all(s->connect_to_list);
	free(s);
}

void kube_session_cancel(struct kube_session *s)
{
	atomic_store(&s->cancelled, true);
}

/* ---- requests ---- */

static enum verb verb_of(const char *method)
{
	for (int v = 0; v < V_WATCH; v++)
		if (strcmp(method, verb_names[v]) == 0)
			return (enum verb)v;
	return V_OTHER;
}

/* Waits for a token of the rate limit, at most the request timeout,
 * watching for a cancel. */
static int rate_wait(struct kube_session *s, struct kube_response *resp)
{
	int64_t ns = bucket_reserve(s->api, (uint64_t)s->api->opts.timeout_ms * 1000000u);

	if (ns < 0) {
		snprintf(resp->error, sizeof(resp->error),
			 "client rate limit (%u/s, burst %u): no token within %u ms",
			 s->api->opts.qps, s->api->opts.burst, s->api->opts.timeout_ms);
		return (int)ns;
	}
	while (ns > 0) {
		if (atomic_load(&s->cancelled))
			goto cancelled;
		uint64_t slice = (uint64_t)KUBE_SLEEP_SLICE_MS * 1000000u;
		if ((uint64_t)ns < slice)
			slice = (uint64_t)ns;
		struct timespec ts = { (time_t)(slice / KUBE_NS), (long)(slice % KUBE_NS) };
		nanosleep(&ts, NULL);
		ns -= (int64_t)slice;
	}
	if (atomic_load(&s->cancelled))
		goto cancelled;
	return 0;
cancelled:
	snprintf(resp->error, sizeof(resp->error), "cancelled");
	return -ECANCELED;
}

/* A curl failure as a negative errno and a line in resp->error. */
static int curl_failure(struct kube_session *s, CURLcode cc, const char *method, const char *url,
			struct kube_response *resp)
{
	const char *why = s->errbuf[0] ? s->errbuf : curl_easy_strerror(cc);
	char *e = resp->error;
	size_t n = sizeof(resp->error);

	switch (cc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		snprintf(e, n, "TLS: cannot verify the server's certificate for %s: %s", url, why);
		return -EPROTO;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_SHUTDOWN_FAILED:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CLIENTCERT:
		snprintf(e, n, "TLS: handshake with %s failed: %s", url, why);
		return -EPROTO;
	case CURLE_SSL_CERTPROBLEM:
		snprintf(e, n, "TLS: the client certificate for %s: %s", url, why);
		return -EPROTO;
	case CURLE_ABORTED_BY_CALLBACK:
		if (s->cb_rc < 0) { /* the stream's fn, called from on_progress */
			snprintf(e, n, "%s %s: stopped: %s", method, url, strerror(-s->cb_rc));
			return s->cb_rc;
		}
		snprintf(e, n, "%s %s: cancelled", method, url);
		return -ECANCELED;
	case CURLE_WRITE_ERROR:
		if (s->too_big) {
			snprintf(e, n, "%s %s: the answer is larger than %zu bytes", method, url,
				 resp->body.max);
			return -E2BIG;
		}
		if (s->cb_rc < 0) {
			if (!e[0])
				snprintf(e, n, "%s %s: stopped: %s", method, url,
					 strerror(-s->cb_rc));
			return s->cb_rc;
		}
		break;
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(e, n, "%s %s: %s", method, url,
			 s->streaming ? "idle: no byte came in time" : why);
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		snprintf(e, n, "%s %s: %s", method, url, why);
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(e, n, "%s %s: %s", method, url, why);
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		snprintf(e, n, "%s %s: out of memory", method, url);
		return -ENOMEM;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		snprintf(e, n, "%s %s: connection lost: %s", method, url, why);
		return -ECONNRESET;
	default: break;
	}
	snprintf(e, n, "%s %s: %s", method, url, why);
	return -EIO;
}

/* The headers of one request; the token copied under the lock. */
static struct curl_slist *make_headers(struct kube_api *a, const char *content_type)
{
	struct curl_slist *l = NULL, *t;
	struct buf auth = BUF_INIT(KUBE_MAX_TOKEN + 64);
	bool ok = true;

	if (!(t = curl_slist_append(l, "Accept: application/json")))
		return NULL;
	l = t;
	if (content_type) {
		struct buf ct = BUF_INIT(512);
		ok = buf_printf(&ct, "Content-Type: %s", content_type) == 0 &&
		     (t = curl_slist_append(l, ct.data)) != NULL;
		buf_free(&ct);
		if (!ok)
			goto fail;
		l = t;
		if (!(t = curl_slist_append(l, "Expect:")))
			goto fail;
		l = t;
	}
	pthread_mutex_lock(&a->lock);
	if (a->conn.token)
		ok = buf_printf(&auth, "Authorization: Bearer %s", a->conn.token) == 0;
	pthread_mutex_unlock(&a->lock);
	if (!ok)
		goto fail;
	if (auth.len) {
		t = curl_slist_append(l, auth.data);
		explicit_bzero(auth.data, auth.len);
		buf_free(&auth);
		if (!t)
			goto fail;
		l = t;
	}
	return l;
fail:
	buf_free(&auth);
	curl_slist_free_all(l);
	return NULL;
}

static void free_headers(struct curl_slist *l)
{
	for (struct curl_slist *i = l; i; i = i->next)
		if (strncmp(i->data, "Authorization:", 14) == 0)
			explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(l);
}

struct call {
	enum verb verb;
	const char *method, *path, *content_type, *body;
	size_t len;
	bool stream;
	unsigned idle_timeout_s;
};

/* One attempt: sets the handle up for c and performs it. */
static int perform_once(struct kube_session *s, const struct call *c, struct kube_response *resp)
{
	struct kube_api *a = s->api;
	struct curl_slist *hdrs = NULL;
	struct buf url = BUF_INIT(KUBE_MAX_BODY);
	CURL *h = s->h;
	CURLcode cc;
	int rc = -ENOMEM;

	s->errbuf[0] = '\0';
	s->resp = resp;
	s->cb_rc = 0;
	s->too_big = false;
	if (buf_printf(&url, "%s%s", a->base_url, c->path) < 0) {
		snprintf(resp->error, sizeof(resp->error), "out of memory");
		goto out;
	}
	if (!(hdrs = make_headers(a, c->body ? c->content_type : NULL))) {
		snprintf(resp->error, sizeof(resp->error), "out of memory");
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (c->body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->len);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
				 strcmp(c->method, "POST") == 0 ? NULL : c->method);
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
				 strcmp(c->method, "GET") == 0 ? NULL : c->method);
	}
	if (c->stream) {
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 0L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, c->idle_timeout_s ? 1L : 0L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)c->idle_timeout_s);
	} else {
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)a->opts.timeout_ms);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 0L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 0L);
	}
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	if (cc == CURLE_OK) {
		rc = 0;
	} else {
		rc = curl_failure(s, cc, c->method, url.data, resp);
		/* what came before a failure is not an answer */
		if (!(c->stream && resp->status == 200))
			resp->status = 0;
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
out:
	free_headers(hdrs);
	buf_free(&url);
	s->resp = NULL;
	return rc;
}

/* For a status >= 400: "HTTP 404: <Status.message>", or the start of a
 * body that is not a Status, made printable. */
static void status_error(struct kube_response *resp)
{
	json_t *st = json_loadb(resp->body.data ? resp->body.data : "", resp->body.len, 0, NULL);
	const char *msg = json_string_value(json_object_get(st, "message"));
	char *e = resp->error;
	size_t n = sizeof(resp->error);

	if (msg && *msg) {
		snprintf(e, n, "HTTP %ld: %s", resp->status, msg);
	} else if (resp->body.len) {
		char quote[KUBE_MAX_ERROR_BODY + 1];
		size_t q =
			resp->body.len < KUBE_MAX_ERROR_BODY ? resp->body.len : KUBE_MAX_ERROR_BODY;
		for (size_t i = 0; i < q; i++) {
			unsigned char ch = (unsigned char)resp->body.data[i];
			quote[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
		}
		quote[q] = '\0';
		snprintf(e, n, "HTTP %ld: %s", resp->status, quote);
	} else {
		snprintf(e, n, "HTTP %ld", resp->status);
	}
	json_decref(st);
}

static void count(struct kube_session *s, const struct call *c, const struct kube_response *resp,
		  uint64_t start)
{
	char l[64];
	if (resp->status)
		snprintf(l, sizeof(l), "verb=\"%s\",code=\"%ld\"", verb_names[c->verb],
			 resp->status);
	else
		snprintf(l, sizeof(l), "verb=\"%s\",code=\"error\"", verb_names[c->verb]);
	metric_inc(metrics_counter_cached("ironbell_kube_requests_total",
					  "Requests to the Kubernetes API server, by verb and "
					  "HTTP status (error: no answer).",
					  l),
		   1);
	if (!c->stream)
		metric_observe(s->api->m_seconds[c->verb], (double)(now_ns() - start) / 1e9);
}

static int call(struct kube_session *s, const struct call *c, struct kube_response *resp)
{
	int rc = 0;

	memset(resp, 0, sizeof(*resp));
	resp->body = BUF_INIT(c->stream ? KUBE_MAX_STATUS_BODY : KUBE_MAX_BODY);
	if (!c->path || c->path[0] != '/') {
		snprintf(resp->error, sizeof(resp->error), "the path must start with '/'");
		return -EINVAL;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		if (atomic_load(&s->cancelled)) {
			snprintf(resp->error, sizeof(resp->error), "%s %s: cancelled", c->method,
				 c->path);
			return -ECANCELED;
		}
		if ((rc = rate_wait(s, resp)) < 0)
			return rc;
		uint64_t start = now_ns();
		rc = perform_once(s, c, resp);
		count(s, c, resp, start);
		if (rc == 0 && resp->status == 401 && attempt == 0 && token_reload(s->api) == 0) {
			log_info("kube",
				 "%s: 401 on %s %s: token file read again, trying once more",
				 s->api->conn.origin, c->method, c->path);
			buf_reset(&resp->body);
			resp->status = 0;
			resp->retry_after = 0;
			continue;
		}
		break;
	}
	if (rc == 0 && resp->status >= 400)
		status_error(resp);
	if (rc < 0)
		log_debug("kube", "%s %s: %s", c->method, c->path, resp->error);
	return rc;
}

int kube_request(struct kube_session *s, const char *method, const char *path,
		 const char *content_type, const char *body, size_t len, struct kube_response *resp)
{
	struct call c = { .verb = verb_of(method),
			  .method = method,
			  .path = path,
			  .content_type = content_type ? content_type : "application/json",
			  .body = body,
			  .len = len };
	return call(s, &c, resp);
}

int kube_stream(struct kube_session *s, const char *path, unsigned idle_timeout_s,
		kube_stream_fn fn, void *userdata, struct kube_response *resp)
{
	struct call c = { .verb = V_WATCH,
			  .method = "GET",
			  .path = path,
			  .stream = true,
			  .idle_timeout_s = idle_timeout_s };
	int rc;

	s->streaming = true;
	s->stream_unflushed = false;
	s->fn = fn;
	s->userdata = userdata;
	rc = call(s, &c, resp);
	if (s->stream_unflushed) {
		/* the end of the stream: what its last read brought */
		s->stream_unflushed = false;
		int e = fn(NULL, 0, userdata);
		if (e < 0 && rc == 0)
			rc = e;
	}
	s->streaming = false;
	s->fn = NULL;
	s->userdata = NULL;
	return rc;
}
