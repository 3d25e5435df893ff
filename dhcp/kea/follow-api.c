/* follow-api — the Kea hook's follower of ironbelld's admin API (source
 * "api"), for a Kea that runs on another host than ironbelld.
 *
 * DESIGN: one thread (ibkea_follow_api) owns one libcurl easy handle and
 * follows the Hardware of every namespace as the CLI's `ironbell watch`
 * does (cli/client.c): a list (GET /apis/tinkerbell.org/v1alpha1/
 * hardware, one answer: ironbelld's lists are not paged) built into a
 * fresh table aside and swapped in whole (ibkea_table_replace), then a
 * watch from the list's metadata.resourceVersion (?watch=1&
 * resourceVersion=N), one JSON event per line (daemon/api/watch.c),
 * decoded by ibkea_watch_line() (watchline.c). The events of one read
 * from the socket are applied together under the table's write lock
 * (ADDED, MODIFIED: dhcp_hosts_put; DELETED: dhcp_hosts_remove), so Kea's
 * packet threads wait at most for one batch; each moves the resume point
 * to its resourceVersion, as a BOOKMARK does (ironbelld sends none today;
 * they are understood for when it does).
 *
 * What ends a watch, and what comes next:
 *  - a stream that ends cleanly (ironbelld stopping), or that stays quiet
 *    API_WATCH_IDLE_S (ironbelld sends nothing while nothing changes, so
 *    this is also how a server that hung is noticed): watch again from
 *    the resume point;
 *  - an ERROR event with code 410, or an HTTP 410 or 504 (a resume point
 *    the change log no longer holds, or one from a store that was
 *    replaced): list again;
 *  - a malformed line or another ERROR: the stream can no longer be
 *    trusted to be complete: after IBKEA_RETRY_MS, list again;
 *  - a transport error (connect, TLS, a stream cut off) or an HTTP error
 *    (401/403: a configuration error, logged as such; 5xx): logged once
 *    per distinct message, and tried again after IBKEA_RETRY_MS.
 * On every error the table is kept: a follower that lost its server
 * keeps answering what it knew (the Hardware did not go away because
 * the path to ironbelld did), and it is only replaced by a complete list.
 *
 * Security: the bearer token is read from api-token-file at each
 * connection (a rotated token is picked up without a restart) and never
 * logged; TLS is always verified (api-ca-file, or the system's CAs);
 * http:// is allowed only to a loopback address (params.c). Bounds: a
 * line of a watch (IBKEA_API_MAX_LINE), a list answer (API_MAX_LIST), its
 * items (API_MAX_ITEMS), the interfaces the watch may add (API_MAX_HOSTS),
 * an error answer's body (API_MAX_ERROR_BODY), the token (API_MAX_TOKEN).
 * Stopping is prompt: curl's progress callback, called at least once a
 * second while a transfer waits, aborts it when the hook stops.
 */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "dhcp/kea/kea-internal.h"

#define API_HARDWARE_PATH "/apis/tinkerbell.org/v1alpha1/hardware"
#define API_CONNECT_TIMEOUT_S 10L
#define API_LIST_LOW_SPEED_S 30L  /* a list that moves no byte this long: the server is dead */
#define API_WATCH_IDLE_S 60L      /* a watch quiet this long is made again */
#define API_KEEPALIVE_S 15L       /* TCP keepalive: a host that vanished is noticed */
#define API_MAX_TOKEN (64 * 1024) /* bytes of the token file */
#define API_MAX_LIST (128u << 20) /* bytes of a list answer */
#define API_MAX_ITEMS 100000      /* Hardware in a list */
#define API_MAX_HOSTS (4u * API_MAX_ITEMS) /* interfaces the watch may grow the table to */
#define API_MAX_ERROR_BODY (64 * 1024)     /* bytes of an error answer kept */
#define API_BATCH 256                      /* watch events applied under one write lock */
#define API_MSG_MAX 768                    /* bytes of a logged message */
#define API_REFUSED_MAX 200                /* bytes of why a Hardware's interface was refused */
#define API_LIST_WARN_MAX 20               /* refused Hardware logged one by one per list */
#define API_URL_MAX (IBKEA_URL_MAX + 128)

/* What to do after a transfer. */
enum api_next {
	API_NEXT_WATCH,       /* watch from the resume point */
	API_NEXT_LIST,        /* list again */
	API_NEXT_RETRY_WATCH, /* after IBKEA_RETRY_MS, watch from the resume point */
	API_NEXT_RETRY_LIST,  /* after IBKEA_RETRY_MS, list again */
	API_NEXT_STOP,        /* the hook is stopping */
	API_NEXT_MAX
};

struct api_follow {
	struct ibkea *k;
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
	char base[IBKEA_URL_MAX + 1]; /* api-url without a trailing '/' */
	bool watching;                /* the current transfer is a watch */
	bool answered;                /* the watch's head came, with 200 */
	struct buf body;              /* a list, or an error answer */
	struct buf line;              /* a watch line not yet ended */
	uint64_t rv;                  /* the resume point */
	size_t lines;                 /* lines read in this watch */
	/* Set by the write callback when it stops a stream. */
	int stream_err;
	bool expired; /* ERROR 410 */
	char why[API_MSG_MAX];
	/* The events of one read, applied under one lock. */
	size_t npend;
	struct ibkea_watch_event pend[API_BATCH];
	char refused[API_BATCH][API_REFUSED_MAX];
	bool full_logged;       /* the API_MAX_HOSTS warning, once per watch */
	char last[API_MSG_MAX]; /* the last message logged: each is logged once */
	bool failing;           /* an error was logged since the last success */
};

/* Logs the message unless it is the one logged last: a server that stays
 * unreachable is said once, not every IBKEA_RETRY_MS. */
__attribute__((format(printf, 3, 4))) static void
report(struct api_follow *f, enum ibkea_log_level level, const char *fmt, ...)
{
	char msg[API_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->failing = true;
	if (ibkea_relog_take(f->k))
		f->last[0] = '\0';
	if (strcmp(msg, f->last) == 0)
		return;
	memcpy(f->last, msg, sizeof(msg));
	ibkea_log(f->k, level, "source api: %s", msg);
}

/* A success: the next error is logged even if it is the last one again. */
static void recovered(struct api_follow *f, const char *what)
{
	if (f->failing)
		ibkea_log(f->k, IBKEA_LOG_INFO, "source api: %s %s again", what, f->base);
	f->failing = false;
	f->last[0] = '\0';
}

/* Reads the bearer token (one line; trailing whitespace dropped) into
 * tok. 0, or a negative errno after reporting why. */
static int read_token(struct api_follow *f, struct buf *tok)
{
	const char *path = f->k->p.api_token_file;
	char tmp[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), e = 0;

	if (fd < 0) {
		e = -errno;
		report(f, IBKEA_LOG_ERROR, "api-token-file %s: %s", path, strerror(-e));
		return e;
	}
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = -errno;
			report(f, IBKEA_LOG_ERROR, "api-token-file %s: %s", path, strerror(-e));
			goto out;
		}
		if (n == 0)
			break;
		if (buf_append(tok, tmp, (size_t)n) < 0) {
			e = -E2BIG;
			report(f, IBKEA_LOG_ERROR, "api-token-file %s: larger than %d bytes", path,
			       API_MAX_TOKEN);
			goto out;
		}
	}
	while (tok->len && strchr(" \t\r\n", tok->data[tok->len - 1]))
		tok->data[--tok->len] = '\0';
	for (size_t i = 0; i < tok->len; i++)
		if ((unsigned char)tok->data[i] <= ' ' || tok->data[i] == 0x7f) {
			e = -EINVAL;
			break;
		}
	if (e == 0 && tok->len == 0)
		e = -EINVAL;
	if (e < 0)
		report(f, IBKEA_LOG_ERROR,
		       "api-token-file %s: not a token (empty, or with spaces or several lines)",
		       path);
out:
	close(fd);
	return e;
}

/* Frees the request's headers, the token's wiped first. */
static void headers_free(struct curl_slist *hd)
{
	for (struct curl_slist *t = hd; t; t = t->next)
		explicit_bzero(t->data, strlen(t->data));
	curl_slist_free_all(hd);
}

static int on_progress(void *arg, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	struct api_follow *f = arg;
	long code = 0;

	if (ibkea_stopping(f->k))
		return 1;
	/* A watch answers its head at once and then nothing until a
	 * change: the reconnection is said as soon as the head came. */
	if (f->watching && !f->answered &&
	    curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code == 200) {
		f->answered = true;
		recovered(f, "following");
	}
	return 0;
}

/* Applies the pending events under one write lock, then logs the
 * Hardware whose interfaces were refused (not under the lock). */
static void flush(struct api_follow *f)
{
	struct dhcp_hosts *t;
	size_t i;

	if (!f->npend)
		return;
	t = ibkea_table_wrlock(f->k);
	for (i = 0; i < f->npend; i++) {
		struct ibkea_watch_event *ev = &f->pend[i];
		f->refused[i][0] = '\0';
		if (ev->type == IBKEA_WATCH_DELETED) {
			dhcp_hosts_remove(t, ev->namespace_, ev->name);
		} else if (ev->type == IBKEA_WATCH_ADDED && dhcp_hosts_count(t) >= API_MAX_HOSTS) {
			/* Said once per watch, not once per Hardware. */
			if (!f->full_logged)
				snprintf(f->refused[i], API_REFUSED_MAX,
					 "the table already holds %u interfaces: new hardware "
					 "is not taken",
					 API_MAX_HOSTS);
			f->full_logged = true;
		} else if (dhcp_hosts_put(t, ev->object, f->refused[i], API_REFUSED_MAX) >= 0) {
			f->refused[i][0] = '\0';
		} else if (!f->refused[i][0]) {
			snprintf(f->refused[i], API_REFUSED_MAX, "out of memory");
		}
		if (ev->rv > f->rv)
			f->rv = ev->rv;
	}
	ibkea_table_unlock(f->k);
	for (i = 0; i < f->npend; i++) {
		if (f->refused[i][0])
			ibkea_log(f->k, IBKEA_LOG_WARN,
				  "source api: hardware %s/%s (resourceVersion %llu): %s: its "
				  "interface is not answered",
				  f->pend[i].namespace_, f->pend[i].name,
				  (unsigned long long)f->pend[i].rv, f->refused[i]);
		ibkea_watch_event_clear(&f->pend[i]);
	}
	f->npend = 0;
}

/* Stops the stream with e and why. Returns -1 (for the caller to return). */
__attribute__((format(printf, 3, 4))) static int stop_stream(struct api_follow *f, int e,
							     const char *fmt, ...)
{
	va_list ap;

	f->stream_err = e;
	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* One line of a watch: 0, or -1 to stop the stream. */
static int on_line(struct api_follow *f, const char *s, size_t n)
{
	struct ibkea_watch_event ev;
	char err[256];

	if (n == 0 || (n == 1 && s[0] == '\r'))
		return 0;
	f->lines++;
	int e = ibkea_watch_line(s, n, IBKEA_API_MAX_LINE, &ev, err, sizeof(err));
	if (e < 0)
		return stop_stream(f, e, "a malformed watch line after resourceVersion %llu: %s",
				   (unsigned long long)f->rv, err);
	switch (ev.type) {
	case IBKEA_WATCH_ERROR:
		flush(f);
		f->expired = ev.code == 410;
		stop_stream(f, -EPROTO, "the watch ended with an error (code %d): %s", ev.code,
			    ev.message[0] ? ev.message : "no message");
		ibkea_watch_event_clear(&ev);
		return -1;
	case IBKEA_WATCH_BOOKMARK:
		flush(f);
		if (ev.rv > f->rv)
			f->rv = ev.rv;
		ibkea_watch_event_clear(&ev);
		return 0;
	default:
		f->pend[f->npend++] = ev;
		if (f->npend == API_BATCH)
			flush(f);
		return 0;
	}
}

/* Cuts a 200 watch answer into lines; a line whole in the piece is
 * decoded where it lies, the rest of a line kept in f->line (capped). */
static size_t on_watch_data(struct api_follow *f, const char *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(p + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (p + off)) : len - off;
		int e = 0;
		if (f->line.len + n > IBKEA_API_MAX_LINE) {
			stop_stream(f, -E2BIG, "a watch line longer than %u bytes",
				    IBKEA_API_MAX_LINE);
			break;
		}
		if (nl && f->line.len == 0) {
			e = on_line(f, p + off, n);
		} else if (buf_append(&f->line, p + off, n) < 0) {
			stop_stream(f, -ENOMEM, "out of memory for a watch line");
			break;
		} else if (nl) {
			e = on_line(f, f->line.data, f->line.len);
			buf_reset(&f->line);
		}
		if (e < 0)
			break;
		off += n + (nl ? 1 : 0);
	}
	flush(f);
	return f->stream_err ? 0 : len;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct api_follow *f = arg;
	size_t len = size * nmemb;
	long code = 0;

	curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &code);
	if (f->watching && code == 200)
		return on_watch_data(f, p, len);
	if (buf_append(&f->body, p, len) < 0) {
		if (code != 200)
			return len; /* an error's body: what fits is enough */
		stop_stream(f, -E2BIG, "the list is larger than %u bytes", API_MAX_LIST);
		return 0;
	}
	return len;
}

/* Prepares f->h for GET base+path; *ret_hd (the headers) must be freed
 * after the transfer. 0, or a negative errno after reporting why. */
static int setup(struct api_follow *f, const char *path, bool watch, struct curl_slist **ret_hd)
{
	const struct ibkea_params *p = &f->k->p;
	struct buf tok = BUF_INIT(API_MAX_TOKEN), hdr = BUF_INIT(API_MAX_TOKEN + 64);
	struct curl_slist *hd = NULL, *t;
	char url[API_URL_MAX];
	int e;

	if ((e = read_token(f, &tok)) < 0)
		goto out;
	e = -ENOMEM;
	if (buf_printf(&hdr, "Authorization: Bearer %s", tok.data) < 0 ||
	    !(t = curl_slist_append(hd, hdr.data)))
		goto fail;
	hd = t;
	if (!(t = curl_slist_append(hd, "Accept: application/json")))
		goto fail;
	hd = t;
	snprintf(url, sizeof(url), "%s%s", f->base, path);
	curl_easy_reset(f->h);
	f->errbuf[0] = '\0';
	curl_easy_setopt(f->h, CURLOPT_URL, url);
	curl_easy_setopt(f->h, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(f->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(f->h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(f->h, CURLOPT_USERAGENT, "ironbell-kea/" PACKAGE_VERSION);
	curl_easy_setopt(f->h, CURLOPT_ERRORBUFFER, f->errbuf);
	curl_easy_setopt(f->h, CURLOPT_CONNECTTIMEOUT, API_CONNECT_TIMEOUT_S);
	curl_easy_setopt(f->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(f->h, CURLOPT_LOW_SPEED_TIME,
			 watch ? API_WATCH_IDLE_S : API_LIST_LOW_SPEED_S);
	curl_easy_setopt(f->h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(f->h, CURLOPT_TCP_KEEPIDLE, API_KEEPALIVE_S);
	curl_easy_setopt(f->h, CURLOPT_TCP_KEEPINTVL, API_KEEPALIVE_S);
	/* Verified always (curl's default, said again): there is no switch
	 * to turn it off. */
	curl_easy_setopt(f->h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(f->h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (p->api_ca_file[0])
		curl_easy_setopt(f->h, CURLOPT_CAINFO, p->api_ca_file);
	curl_easy_setopt(f->h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(f->h, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(f->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(f->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(f->h, CURLOPT_XFERINFODATA, f);
	f->watching = watch;
	f->answered = false;
	f->stream_err = 0;
	f->expired = false;
	f->why[0] = '\0';
	f->lines = 0;
	f->full_logged = false;
	buf_free(&f->body);
	buf_init(&f->body, watch ? API_MAX_ERROR_BODY : API_MAX_LIST);
	buf_reset(&f->line);
	*ret_hd = hd;
	hd = NULL;
	e = 0;
	goto out;
fail:
	report(f, IBKEA_LOG_ERROR, "out of memory");
out:
	/* The header holds the token: wiped before it is freed. */
	if (hdr.data)
		explicit_bzero(hdr.data, hdr.len);
	if (tok.data)
		explicit_bzero(tok.data, tok.len);
	buf_free(&hdr);
	buf_free(&tok);
	headers_free(hd);
	return e;
}

/* Cuts " after N ms" out of curl's message (in place): the same failure
 * then gives the same text, and is logged once. */
static const char *untimed(char *msg)
{
	char *p = strstr(msg, " after ");

	if (!p)
		return msg;
	size_t i = 7;
	while (p[i] >= '0' && p[i] <= '9')
		i++;
	if (i == 7 || strncmp(p + i, " ms", 3) != 0)
		return msg;
	memmove(p, p + i + 3, strlen(p + i + 3) + 1);
	return msg;
}

/* Logs a failed transfer (rc not CURLE_OK, or an HTTP status not 200)
 * and says what to do next: next_retry, or for 410/504 a new list. */
static enum api_next failed(struct api_follow *f, const char *what, CURLcode rc, long code,
			    enum api_next next_retry)
{
	const char *why = f->errbuf[0] ? untimed(f->errbuf) : curl_easy_strerror(rc);

	if (rc == CURLE_ABORTED_BY_CALLBACK || ibkea_stopping(f->k))
		return API_NEXT_STOP;
	if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
	    rc == CURLE_SSL_CERTPROBLEM) {
		report(f, IBKEA_LOG_ERROR,
		       "cannot verify %s: %s (is api-ca-file the CA that signed its certificate?)",
		       f->base, why);
		return next_retry;
	}
	if (rc != CURLE_OK) {
		report(f, IBKEA_LOG_WARN, "%s %s failed: %s", what, f->base, why);
		return next_retry;
	}
	/* An HTTP error: its Status's message says why. */
	json_t *st = json_loadb(f->body.data ? f->body.data : "", f->body.len, 0, NULL);
	const json_t *m = json_object_get(st, "message");
	char msg[IBKEA_API_MAX_MESSAGE + 1] = "";
	if (json_is_string(m))
		utf8_sanitize(json_string_value(m), json_string_length(m), msg,
			      IBKEA_API_MAX_MESSAGE, UTF8_CONTROLS_QMARK, NULL);
	json_decref(st);
	if (code == 410 || code == 504) {
		ibkea_log(f->k, IBKEA_LOG_INFO,
			  "source api: resourceVersion %llu is no longer followed (%ld: %s): "
			  "listing again",
			  (unsigned long long)f->rv, code, msg);
		return API_NEXT_LIST;
	}
	report(f, code == 401 || code == 403 ? IBKEA_LOG_ERROR : IBKEA_LOG_WARN,
	       "%s %s: HTTP %ld%s%s%s", what, f->base, code, msg[0] ? ": " : "", msg,
	       code == 401 || code == 403 ? " (check api-token-file)" : "");
	return next_retry;
}

/* Builds a fresh table from the list's items and swaps it in. */
static enum api_next load(struct api_follow *f, json_t *items, uint64_t rv)
{
	struct dhcp_hosts *fresh = dhcp_hosts_new();
	char why[API_REFUSED_MAX];
	size_t i, refused = 0;
	json_t *it;

	if (!fresh) {
		report(f, IBKEA_LOG_ERROR, "out of memory for the table");
		return API_NEXT_RETRY_LIST;
	}
	json_array_foreach (items, i, it) {
		if (ibkea_stopping(f->k))
			break;
		int e = dhcp_hosts_put(fresh, it, why, sizeof(why));
		if (e == -ENOMEM) {
			dhcp_hosts_free(fresh);
			report(f, IBKEA_LOG_ERROR, "out of memory for the table");
			return API_NEXT_RETRY_LIST;
		}
		if (e < 0 && refused++ < API_LIST_WARN_MAX) {
			const json_t *md = json_object_get(it, "metadata");
			ibkea_log(f->k, IBKEA_LOG_WARN,
				  "source api: hardware %s/%s: %s: its interface is not answered",
				  json_string_value(json_object_get(md, "namespace")) ?: "?",
				  json_string_value(json_object_get(md, "name")) ?: "?", why);
		}
	}
	if (ibkea_stopping(f->k)) {
		dhcp_hosts_free(fresh);
		return API_NEXT_STOP;
	}
	if (refused > API_LIST_WARN_MAX)
		ibkea_log(f->k, IBKEA_LOG_WARN,
			  "source api: %zu more hardware with interfaces not answered",
			  refused - API_LIST_WARN_MAX);
	size_t n = dhcp_hosts_count(fresh);
	ibkea_table_replace(f->k, fresh);
	f->rv = rv;
	recovered(f, "following");
	ibkea_log(f->k, IBKEA_LOG_INFO,
		  "source api: %zu hardware, %zu interfaces loaded from %s (resourceVersion %llu)",
		  json_array_size(items), n, f->base, (unsigned long long)rv);
	return API_NEXT_WATCH;
}

/* Lists the Hardware and loads them. */
static enum api_next list(struct api_follow *f)
{
	struct curl_slist *hd = NULL;
	json_t *items = NULL;
	enum api_next next;
	char err[256];
	uint64_t rv = 0;
	long code = 0;

	if (setup(f, API_HARDWARE_PATH, false, &hd) < 0)
		return API_NEXT_RETRY_LIST;
	CURLcode rc = curl_easy_perform(f->h);
	headers_free(hd);
	curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &code);
	if (f->stream_err) {
		report(f, IBKEA_LOG_WARN, "the list from %s: %s", f->base, f->why);
		next = API_NEXT_RETRY_LIST;
	} else if (rc != CURLE_OK || code != 200) {
		next = failed(f, "the list from", rc, code, API_NEXT_RETRY_LIST);
		if (next == API_NEXT_LIST)
			next = API_NEXT_RETRY_LIST; /* 410 on a list: nothing better to do */
	} else if (ibkea_list_parse(f->body.data ? f->body.data : "", f->body.len, API_MAX_LIST,
				    API_MAX_ITEMS, &items, &rv, err, sizeof(err)) < 0) {
		report(f, IBKEA_LOG_WARN, "the list from %s: %s", f->base, err);
		next = API_NEXT_RETRY_LIST;
	} else {
		/* The text is no longer needed: freed before the table grows. */
		buf_free(&f->body);
		next = load(f, items, rv);
	}
	json_decref(items);
	buf_free(&f->body);
	return next;
}

/* Watches from f->rv until the stream ends. */
static enum api_next watch(struct api_follow *f)
{
	struct curl_slist *hd = NULL;
	char path[sizeof(API_HARDWARE_PATH) + 64];
	long code = 0;

	snprintf(path, sizeof(path), "%s?watch=1&resourceVersion=%llu", API_HARDWARE_PATH,
		 (unsigned long long)f->rv);
	if (setup(f, path, true, &hd) < 0)
		return API_NEXT_RETRY_WATCH;
	CURLcode rc = curl_easy_perform(f->h);
	headers_free(hd);
	curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &code);
	flush(f);
	if (rc == CURLE_ABORTED_BY_CALLBACK || ibkea_stopping(f->k))
		return API_NEXT_STOP;
	if (f->expired) {
		ibkea_log(f->k, IBKEA_LOG_INFO, "source api: %s: listing again", f->why);
		return API_NEXT_LIST;
	}
	if (f->stream_err) {
		report(f, IBKEA_LOG_WARN, "the watch of %s: %s", f->base, f->why);
		return API_NEXT_RETRY_LIST;
	}
	if (code != 200)
		return failed(f, "the watch of", rc, code, API_NEXT_RETRY_WATCH);
	recovered(f, "following");
	/* Quiet for API_WATCH_IDLE_S, or ended by the server: both are the
	 * ordinary end of a watch. */
	if (rc == CURLE_OK || rc == CURLE_OPERATION_TIMEDOUT)
		return f->lines || rc == CURLE_OPERATION_TIMEDOUT ? API_NEXT_WATCH :
								    API_NEXT_RETRY_WATCH;
	return failed(f, "the watch of", rc, code, API_NEXT_RETRY_WATCH);
}

static void follow_free(struct api_follow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->npend; i++)
		ibkea_watch_event_clear(&f->pend[i]);
	curl_easy_cleanup(f->h);
	buf_free(&f->body);
	buf_free(&f->line);
	free(f);
}

void *ibkea_follow_api(void *arg)
{
	struct ibkea *k = arg;
	struct api_follow *f = NULL;
	enum api_next next = API_NEXT_LIST;
	size_t n;

	/* Thread-safe in the libcurl of Debian 12 (7.84 and later), and
	 * counted: the cleanup below balances it. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		ibkea_log(k, IBKEA_LOG_ERROR, "source api: libcurl cannot start");
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->h = curl_easy_init())) {
		ibkea_log(k, IBKEA_LOG_ERROR, "source api: out of memory");
		goto out;
	}
	f->k = k;
	buf_init(&f->line, IBKEA_API_MAX_LINE);
	n = strlen(k->p.api_url);
	while (n && k->p.api_url[n - 1] == '/')
		n--;
	memcpy(f->base, k->p.api_url, n);
	f->base[n] = '\0';
	while (next != API_NEXT_STOP && !ibkea_stopping(k)) {
		switch (next) {
		case API_NEXT_RETRY_LIST:
		case API_NEXT_RETRY_WATCH:
			if (ibkea_sleep(k, IBKEA_RETRY_MS))
				goto out;
			next = next == API_NEXT_RETRY_LIST ? list(f) : watch(f);
			break;
		case API_NEXT_LIST: next = list(f); break;
		default: next = watch(f); break;
		}
	}
out:
	follow_free(f);
	curl_global_cleanup();
	return NULL;
}
