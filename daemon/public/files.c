/* files — the iPXE binaries (ipxe.binary_dir) and the OSIE files
 * (ipxe.osie_dir) of the public listener.
 *
 * DESIGN: files are opened per request under a directory fd
 * (common/file.h): the route parser already refused "..", hidden names and
 * escapes, the kernel refuses any symlink on the way, and a last component
 * that is a link is followed only when root or the daemon's user owns it
 * (Debian's /usr/lib/ipxe/ipxe.efi is a link to /boot/ipxe.efi), so a
 * request never reads outside ipxe.binary_dir or ipxe.osie_dir except
 * where the operator linked it. A file is sent with sendfile by
 * libmicrohttpd (a response from the fd), and a Range of one span gets
 * 206. Metrics: ironbell_ipxe_files_total{route,outcome}.
 *
 * Zero copy: the file leaves in sendfile calls. libmicrohttpd 0.9.75
 * makes them 128 KiB in its polling threads (2 MiB only with a thread per
 * connection, and no option for it); nginx makes them 2 MiB. Measured
 * with a client that does not copy the bodies (make bench-osie), that
 * chunk cost a quarter of the throughput, so each file answer's span is
 * given to daemon/http/sendfile.c, which makes those calls up to 2 MiB,
 * as nginx does.
 *
 * Validators (RFC 9110 §13): every answer carries a strong ETag (device,
 * inode, size, modification time in nanoseconds: a file replaced or
 * rewritten gets another) and Last-Modified. If-None-Match (or, without
 * it, If-Modified-Since) that the file still matches gets 304 and no
 * body; If-Range honours the Range only for the same ETag or the exact
 * Last-Modified date, else the whole file goes with 200. The headers are
 * parsed by ipxe/validators.c; one that does not parse counts as absent.
 *
 * Downloads per client: a rack of machines behind one relay is rare on a
 * provisioning network and iPXE fetches one file at a time, so a client
 * address with ipxe.max_downloads_per_client bodies in flight is refused
 * with 503 and Retry-After (iPXE retries, ipxe.retries) instead of one
 * runaway client or loop taking every connection. The count lives in two
 * small chained hash tables under one mutex (clients by address, holds by
 * connection): the cost is one lock when a file starts and one when its
 * request completes (public_request_done, from the transport's completion
 * callback, which libmicrohttpd calls for aborted downloads too), nothing
 * per byte.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/bootfile.h"
#include "common/common.h"
#include "common/file.h"
#include "daemon/config/conf.h"
#include "daemon/http/http.h"
#include "daemon/public/public-internal.h"
#include "ipxe/ipxe.h"

static void count_file(const char *route, const char *outcome)
{
	char labels[96];
	snprintf(labels, sizeof(labels), "route=\"%s\",outcome=\"%s\"", route, outcome);
	metric_inc(metrics_counter_cached("ironbell_ipxe_files_total",
					  "Binary and OSIE file requests, by route and outcome (ok, "
					  "partial, not_modified, not_found, range_not_satisfiable, "
					  "refused, error).",
					  labels),
		   1);
}

/* ---- downloads in flight per client address ---- */

#define DL_BUCKETS 256      /* of each table; chains are short at fleet scale */
#define DL_ADDR_MAX 46      /* INET6_ADDRSTRLEN */

struct dl_client {
	struct dl_client *next;
	unsigned active;
	char addr[DL_ADDR_MAX];
};

struct dl_hold {
	struct dl_hold *next;
	const struct MHD_Connection *conn;
	struct dl_client *client;
};

static struct {
	pthread_mutex_t lock;
	struct dl_client *clients[DL_BUCKETS];
	struct dl_hold *holds[DL_BUCKETS];
	unsigned long active;
} dl = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned dl_hash_addr(const char *a)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; a[i] && i < DL_ADDR_MAX; i++)
		h = (h ^ (uint8_t)a[i]) * 16777619u;
	return h % DL_BUCKETS;
}

static unsigned dl_hash_conn(const struct MHD_Connection *c)
{
	uintptr_t v = (uintptr_t)c;
	return (unsigned)((v >> 4) ^ (v >> 12)) % DL_BUCKETS;
}

static void dl_gauge(void)
{
	metric_set(metrics_gauge("ironbell_ipxe_downloads_active",
				 "Binary and OSIE file answers in flight.", NULL),
		   (double)dl.active);
}

/* Takes a download slot for connection c from client: 0, -EBUSY when the
 * client has max in flight (max 0: no bound), -ENOMEM. */
static int dl_take(const struct MHD_Connection *c, const char *client, unsigned max)
{
	unsigned ha = dl_hash_addr(client), hc = dl_hash_conn(c);
	struct dl_client *cl;
	struct dl_hold *ho = NULL;
	int e = 0;

	pthread_mutex_lock(&dl.lock);
	for (cl = dl.clients[ha]; cl && strcmp(cl->addr, client) != 0; cl = cl->next)
		;
	if (cl && max && cl->active >= max) {
		e = -EBUSY;
		goto out;
	}
	ho = calloc(1, sizeof(*ho));
	if (!cl && ho && (cl = calloc(1, sizeof(*cl)))) {
		snprintf(cl->addr, sizeof(cl->addr), "%s", client);
		cl->next = dl.clients[ha];
		dl.clients[ha] = cl;
	}
	if (!ho || !cl) {
		free(ho);
		e = -ENOMEM;
		goto out;
	}
	ho->conn = c;
	ho->client = cl;
	ho->next = dl.holds[hc];
	dl.holds[hc] = ho;
	cl->active++;
	dl.active++;
	dl_gauge();
out:
	pthread_mutex_unlock(&dl.lock);
	return e;
}

/* Releases the slot connection c holds, if it holds one. */
static void dl_release(const struct MHD_Connection *c)
{
	struct dl_hold **hp = &dl.holds[dl_hash_conn(c)], *ho;

	pthread_mutex_lock(&dl.lock);
	while (*hp && (*hp)->conn != c)
		hp = &(*hp)->next;
	if ((ho = *hp)) {
		*hp = ho->next;
		struct dl_client *cl = ho->client, **cp = &dl.clients[dl_hash_addr(cl->addr)];
		if (--cl->active == 0) {
			while (*cp && *cp != cl)
				cp = &(*cp)->next;
			if (*cp)
				*cp = cl->next;
			free(cl);
		}
		free(ho);
		dl.active--;
		dl_gauge();
	}
	pthread_mutex_unlock(&dl.lock);
}

void public_request_done(struct MHD_Connection *c, const struct public_route *r)
{
	if (r->kind == PUBLIC_IPXE &&
	    (r->ipxe.type == IPXE_ROUTE_BINARY || r->ipxe.type == IPXE_ROUTE_OSIE))
		dl_release(c);
}

/* ---- the file ---- */

/* Opens name under dir (common/file.h: never outside it; a last component
 * that is a link is followed only when root or we own it). */
static int open_beneath(const char *dir, const char *name, int *ret_fd, struct stat *st)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int e = file_open_beneath(dfd, name, ret_fd, st);
	close(dfd);
	return e;
}

/* A file's validators, as sent and as compared. */
struct validators {
	char etag[IPXE_ETAG_MAX];
	char date[IPXE_HTTP_DATE_MAX];
	int64_t mtime; /* Last-Modified, seconds: never later than now */
	bool has_date;
};

static void validators_of(const struct stat *st, struct validators *v)
{
	int64_t now = (int64_t)time(NULL);
	ipxe_etag((uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		  (int64_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, v->etag);
	v->mtime = (int64_t)st->st_mtim.tv_sec < now ? (int64_t)st->st_mtim.tv_sec : now;
	v->has_date = ipxe_http_date(v->mtime, v->date) == 0;
}

static void add_validators(struct MHD_Response *resp, const struct validators *v)
{
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, v->etag);
	if (v->has_date)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED, v->date);
}

/* RFC 9110 §13.2.2 for GET and HEAD: If-None-Match decides when present,
 * else If-Modified-Since (a date in the future, or one that does not
 * parse, is ignored). True for 304. */
static bool not_modified(struct MHD_Connection *c, const struct validators *v)
{
	const char *inm =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	const char *ims =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_MODIFIED_SINCE);
	int64_t since;

	if (inm)
		return ipxe_if_none_match(inm, strlen(inm), v->etag) == 1;
	return ims && v->has_date && ipxe_http_date_parse(ims, strlen(ims), &since) == 0 &&
	       since <= (int64_t)time(NULL) && v->mtime <= since;
}

/* The Range to answer: 1 with *off, *len (206), 0 for the whole file,
 * -ERANGE (416). A Range under an If-Range that does not match counts as
 * absent. */
static int range_of(struct MHD_Connection *c, const struct validators *v, uint64_t size,
		    uint64_t *off, uint64_t *len)
{
	const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
	const char *if_range =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_RANGE);
	if (!range || (if_range && !ipxe_if_range(if_range, strlen(if_range), v->etag, v->mtime)))
		return 0;
	return ipxe_range_parse(range, strlen(range), size, off, len);
}

static int open_file(const char *dir, const struct ipxe_route *route, const char *what,
		     const char *client, const char **name, int *fd, struct stat *st)
{
	const char *alias;
	int e = open_beneath(dir, route->name, fd, st);
	if (e == -ENOENT && route->type == IPXE_ROUTE_BINARY && (alias = bootfile_alias(route->name))) {
		e = open_beneath(dir, alias, fd, st);
		if (e == 0)
			*name = alias;
	}
	if (e < 0 && public_log_allowed(PUBLIC_LOG_FILE, "ipxe"))
		log_warn("ipxe", "%s %s asked for by %s is not served: %s (%s/%s)", what,
			 route->name, client,
			 e == -ENOENT ? "no such file" :
			 e == -EPERM  ? "a symbolic link root did not make, or outside the "
					"directory" :
			 e == -EISDIR ? "not a regular file" :
					strerror(-e),
			 dir, route->name);
	return e;
}

int public_serve_file(struct MHD_Connection *c, const struct ib_config *cfg,
		      const struct ipxe_route *route, const char *client, struct public_reply *rep)
{
	const char *what = route->type == IPXE_ROUTE_BINARY ? "binary" : "osie";
	const char *dir = route->type == IPXE_ROUTE_BINARY ? cfg->ipxe.binary_dir : cfg->ipxe.osie_dir;
	const char *name = route->name;
	struct validators v;
	struct stat st;
	uint64_t off = 0, len;
	int fd = -1, e, rr;
	char crange[96];

	if (!dir) {
		count_file(what, "not_found");
		return public_reply_text(404, "no OSIE directory is configured (ipxe.osie_dir)\n", rep);
	}
	e = open_file(dir, route, what, client, &name, &fd, &st);
	if (e < 0) {
		bool nf = e == -ENOENT || e == -EPERM || e == -EISDIR;
		count_file(what, nf ? "not_found" : "error");
		return public_reply_text(nf ? 404 : 500, "no such file\n", rep);
	}
	validators_of(&st, &v);
	uint64_t size = (uint64_t)st.st_size;
	if (not_modified(c, &v)) {
		close(fd);
		e = public_reply_text(304, "", rep); /* no body is sent with 304 */
		if (e == 0)
			add_validators(rep->resp, &v);
		count_file(what, "not_modified");
		return e;
	}
	rr = range_of(c, &v, size, &off, &len);
	if (rr == -ERANGE) {
		close(fd);
		e = public_reply_text(416, "range not satisfiable\n", rep);
		if (e == 0) {
			snprintf(crange, sizeof(crange), "bytes */%llu", (unsigned long long)size);
			MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_RANGE, crange);
		}
		count_file(what, "range_not_satisfiable");
		return e;
	}
	if (rr == 0) {
		off = 0;
		len = size;
	}
	e = dl_take(c, client, cfg->ipxe.max_downloads_per_client);
	if (e == -EBUSY) {
		close(fd);
		if (public_log_allowed(PUBLIC_LOG_DOWNLOAD, "ipxe"))
			log_warn("ipxe", "%s %s refused to %s: %u downloads of that address in "
					 "flight (ipxe.max_downloads_per_client)",
				 what, name, client, cfg->ipxe.max_downloads_per_client);
		metric_inc(metrics_counter_cached("ironbell_ipxe_downloads_refused_total",
						  "File answers refused with 503: the client "
						  "address had ipxe.max_downloads_per_client in "
						  "flight.",
						  NULL),
			   1);
		count_file(what, "refused");
		e = public_reply_text(503, "too many downloads from this address; retry\n", rep);
		if (e == 0)
			MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		return e;
	}
	if (e == 0)
		http_sendfile_span(fd, &st, off + len); /* calls wider than libmicrohttpd's */
	rep->resp = e < 0 ? NULL : MHD_create_response_from_fd_at_offset64(len, fd, (int64_t)off);
	if (!rep->resp) {
		if (e == 0)
			dl_release(c);
		close(fd);
		return -ENOMEM;
	}
	rep->code = rr == 1 ? 206 : 200;
	MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_TYPE, ipxe_content_type(name));
	MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	add_validators(rep->resp, &v);
	if (rr == 1) {
		snprintf(crange, sizeof(crange), "bytes %llu-%llu/%llu", (unsigned long long)off,
			 (unsigned long long)(off + len - 1), (unsigned long long)size);
		MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_RANGE, crange);
		log_debug("ipxe", "%s %s: bytes %llu-%llu to %s", what, name,
			  (unsigned long long)off, (unsigned long long)(off + len - 1), client);
	} else {
		log_info("ipxe", "%s served: %s (%llu bytes) to %s", what, name,
			 (unsigned long long)size, client);
	}
	count_file(what, rr == 1 ? "partial" : "ok");
	return 0;
}
