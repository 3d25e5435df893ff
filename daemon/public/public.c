/* public — the machine-facing routes of the public HTTP listener: the iPXE
 * script of a machine, the iPXE binaries, the OSIE files and the UEFI HTTP
 * Boot answer (the pure parts are in ipxe/), and instance metadata (the
 * pure parts in metadata/).
 *
 * DESIGN: daemon/http/http.c parses the path with ipxe_route_parse() and hands
 * a route of ours here on the request's first call; this file reads the
 * store (the thread's own reader) or opens the file, and builds the
 * libmicrohttpd response. Nothing here blocks on anything but the local
 * disk and SQLite. The binaries and OSIE files are daemon/public/files.c's.
 *
 * Who is asking: the TCP peer's address. A script asked for without a MAC
 * and /httpboot look the machine up by that address (the store's IP
 * index). The public address written into URLs is dhcp.public_address,
 * else dhcp.server_address, else the local address the request came in
 * on: the address the machine already reached us at.
 *
 * Metadata is found by the client's address only (the store's IP index),
 * the address being the TCP peer's, or, when the peer is one of
 * metadata.trusted_proxies, the one its X-Forwarded-For names
 * (md_client_address). A /tootles/ instance id or an Ignition UUID only
 * narrows that: the Hardware they name must also own the address.
 *
 * The answer cache (daemon/public/answers.c): with http.answer_cache, a
 * script, /httpboot or metadata request is first looked up there (the
 * Hardware by MAC, address or system UUID, the answer by route,
 * parameters and public address); the store path below answers whatever
 * the cache cannot (see serve_cached) and every refusal.
 *
 * Logs: one info line per script served from the store path, and for a
 * cached Hardware one for its first script, then at most one a minute
 * saying how many were served since (the rest at debug); one per whole
 * binary or OSIE file sent, one per refusal (unknown machine, allowPXE, missing file) with the
 * client's address. Anyone who reaches the listener can ask for what is
 * refused, as fast as it likes, so those lines go through a token bucket
 * per kind (common/ratelimit.h: PUBLIC_LOG_BURST lines, then
 * PUBLIC_LOG_RATE a second, shared by the handler threads under a lock);
 * the next one let through after some were held back is preceded by how
 * many. Metrics: ironbell_ipxe_scripts_total{outcome},
 * ironbell_ipxe_files_total{route,outcome}.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "common/bootmark.h"
#include "common/common.h"
#include "common/bootfile.h"
#include "common/file.h"
#include "common/jsonmem.h"
#include "common/mac.h"
#include "common/net.h"
#include "common/ratelimit.h"
#include "daemon/config/conf.h"
#include "daemon/http/http.h"
#include "daemon/public/answers.h"
#include "daemon/public/public.h"
#include "daemon/public/public-internal.h"
#include "daemon/settings.h"
#include "ipxe/ipxe.h"
#include "store/store.h"

#define CT_TEXT "text/plain; charset=utf-8"
#define HTTPBOOT_MAX (64 * 1024) /* bytes of a /httpboot answer */
#define CT_JSON "application/json"
#define PUBLIC_LOG_BURST 10 /* log lines about refusals of a kind at once ... */
#define PUBLIC_LOG_RATE 1   /* ... then this many per second */

bool public_log_allowed(enum public_log kind, const char *subsystem)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct ratelimit rl[PUBLIC_LOG_MAX]; /* guarded by lock */
	bool ok;

	pthread_mutex_lock(&lock);
	ok = ratelimit_log(&rl[kind], now_mono_ns(), PUBLIC_LOG_RATE, PUBLIC_LOG_BURST, subsystem);
	pthread_mutex_unlock(&lock);
	return ok;
}

static void count(const char *name, const char *help, const char *labels)
{
	metric_inc(metrics_counter_cached(name, help, labels), 1);
}

static void count_script(const char *outcome)
{
	char labels[64];
	snprintf(labels, sizeof(labels), "outcome=\"%s\"", outcome);
	count("ironbell_ipxe_scripts_total",
	      "iPXE script requests, by outcome (default, url, contents, discovery, unknown, "
	      "not_allowed, error).",
	      labels);
}

/* ---- the client and the addresses ---- */

/* The peer's IPv4 address as text ("" when it is not IPv4; an IPv4-mapped
 * IPv6 address counts as IPv4). */
static void peer_ip(struct MHD_Connection *c, char out[INET6_ADDRSTRLEN])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	out[0] = '\0';
	if (!ci || !ci->client_addr)
		return;
	const struct sockaddr *sa = ci->client_addr;
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out,
			  INET6_ADDRSTRLEN);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a))
			inet_ntop(AF_INET, &a->s6_addr[12], out, INET6_ADDRSTRLEN);
		else
			inet_ntop(AF_INET6, a, out, INET6_ADDRSTRLEN);
	}
}

/* The public address for URLs, in host byte order (see DESIGN). */
static uint32_t public_address(const struct ib_config *cfg, struct MHD_Connection *c)
{
	if (cfg->dhcp.public_address)
		return cfg->dhcp.public_address;
	if (cfg->dhcp.server_address)
		return cfg->dhcp.server_address;
	return api_conn_local_ipv4(c); /* asked of the kernel once per connection */
}

/* ---- responses ---- */

static struct MHD_Response *text_response(const char *text)
{
	return MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
}

int public_reply_text(unsigned code, const char *text, struct public_reply *rep)
{
	rep->resp = text_response(text);
	if (!rep->resp)
		return -ENOMEM;
	rep->code = code;
	MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_TYPE, CT_TEXT);
	return 0;
}

static int reply_buf(unsigned code, const char *ctype, struct buf *b, struct public_reply *rep)
{
	size_t len = b->len;
	char *data = buf_steal(b);
	rep->resp = data ? MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE) : NULL;
	if (!rep->resp) {
		free(data);
		return -ENOMEM;
	}
	rep->code = code;
	MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return 0;
}

/* ---- the answer cache (daemon/public/answers.c) ----
 *
 * A cached answer is one libmicrohttpd response shared by every request
 * that gets it: MHD_queue_response takes a reference of its own, queued
 * under the cache's read lock, so the record (and the response) cannot be
 * freed before; the cache's own reference goes when the record does
 * (MHD frees the response when its last connection is done with it). */

struct cached_answer {
	struct MHD_Response *resp;
	enum ipxe_script_kind kind; /* scripts: for the log line and the metric */
	char mac[MAC_STR_SIZE];     /* scripts: the interface's MAC */
	size_t bytes;               /* the body's */
};

/* answers_new()'s answers_free_fn. */
void public_answer_free(void *answer)
{
	struct cached_answer *ca = answer;
	if (!ca)
		return;
	MHD_destroy_response(ca->resp);
	free(ca);
}

struct cache_req;
typedef int (*cache_build_fn)(const json_t *hw, const struct cache_req *q, struct buf *out,
			      struct cached_answer *ca);

/* One request the cache may answer: how to find the record, the answer's
 * key, how to make the answer. */
struct cache_req {
	enum answers_by by;
	const char *lookup;   /* the MAC, address or UUID */
	const char *must_own; /* an address the Hardware must have, or NULL */
	struct answers_key key;
	const char *ctype;
	size_t out_max;
	cache_build_fn build;
	const struct ib_config *cfg;
	const uint8_t *mac;             /* scripts by MAC */
	const struct md_route *md;      /* metadata */
	const char *client;
	const char *what;               /* for the debug line */
};

static bool rec_owns(const struct answers_rec *rec, const char *ip)
{
	for (unsigned i = 0; i < rec->n_ips; i++)
		if (strcmp(rec->ips[i], ip) == 0)
			return true;
	return false;
}

/* rec's Hardware read with r: 0, or -ESTALE when the stored one is not
 * the record's version (the index lags a change not yet committed when
 * the request began), or the store's error. */
static int rec_hardware(struct store_reader *r, const struct answers_rec *rec, json_t **ret)
{
	json_t *hw = NULL;
	uint64_t rv = 0;
	int e;

	if (!r)
		return -EIO;
	if ((e = store_get(r, STORE_KIND_HARDWARE, rec->namespace_, rec->name, &hw)) < 0)
		return e;
	const char *rvs = json_string_value(
		json_object_get(json_object_get(hw, "metadata"), "resourceVersion"));
	if (!rvs || num_parse_u64_str(rvs, UINT64_MAX, &rv) < 0 || rv != rec->rv) {
		json_decref(hw);
		return -ESTALE;
	}
	*ret = hw;
	return 0;
}

/* The answer for q made from hw, or NULL when it is not a 200 (the store
 * path says why) or there is no memory. */
static struct cached_answer *cache_make(const json_t *hw, const struct cache_req *q)
{
	struct cached_answer *ca = calloc(1, sizeof(*ca));
	struct buf out = BUF_INIT(q->out_max);

	if (!ca || q->build(hw, q, &out, ca) < 0)
		goto fail;
	size_t len = out.len;
	char *data = buf_steal(&out);
	ca->bytes = len;
	ca->resp = data ? MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE) : NULL;
	if (!ca->resp) {
		free(data);
		goto fail;
	}
	MHD_add_response_header(ca->resp, MHD_HTTP_HEADER_CONTENT_TYPE, q->ctype);
	MHD_add_response_header(ca->resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	buf_free(&out);
	return ca;
fail:
	free(ca);
	buf_free(&out);
	return NULL;
}

/* ---- the Hardware decoded last ----
 *
 * An answer made on first use costs a store read and, mostly, the decode
 * of the Hardware's JSON (90 µs and more for a fleet's 3.7 KB Hardware
 * with jansson, where serving a made answer costs 10). A machine that
 * reads its metadata asks many answers in a row (cloud-init's EC2 source
 * walks a dozen paths, each on a new connection that may land on any
 * listener thread), each a first use. So the trees of the last HW_RECENT
 * Hardware decoded for an answer are kept, keyed by namespace, name and
 * resourceVersion (a version is one object's, once): the machine's next
 * answers are made from the tree, with no read and no decode. The trees
 * are shared read-only between the listener threads, as the store's
 * object cache shares its own (jansson's reference counts are atomic,
 * and no builder changes the Hardware it is given). One mutex, taken
 * only when an answer is made, never on a made answer; the decode runs
 * outside it. A tree whose strings and nodes come to more than
 * HW_RECENT_TREE_MAX (a Hardware with large user data) is not kept, so
 * that the trees kept, with those waiting for their owner (below), never
 * hold more than 2 x 64 x 256 KiB, and a fleet's a few MiB.
 *
 * A tree is freed by the thread that decoded it. Its hundreds of nodes
 * came from that thread's malloc arena, and each free() from another
 * thread takes that arena's lock while its owner is allocating the next
 * tree: at fleet scale, where most trees are evicted unused, that was
 * two futex calls per answer and a third of the listener's time in
 * json_delete(). A tree evicted by another thread waits in hw_dead until
 * its owner next takes hw_recent_mu, for a kept tree or to keep one (at
 * most HW_RECENT trees wait: past that it is freed where it is). */
#define HW_RECENT 64
#define HW_RECENT_TREE_MAX (256u * 1024u)
#define HW_RECENT_DEPTH_MAX 32

/* About what tree costs in memory: its strings and keys, and a node's
 * bookkeeping each (64 bytes, about jansson's), added until max is
 * passed; more than max when deeper than HW_RECENT_DEPTH_MAX. */
static size_t tree_bytes(const json_t *t, size_t max, unsigned depth)
{
	size_t n = 64;
	const char *k;
	const json_t *v;
	size_t i;

	if (depth > HW_RECENT_DEPTH_MAX)
		return max + 1;
	if (json_is_string(t))
		return n + json_string_length(t);
	if (json_is_object(t)) {
		json_object_foreach((json_t *)t, k, v) {
			n += strlen(k) + tree_bytes(v, max, depth + 1);
			if (n > max)
				return n;
		}
	} else if (json_is_array(t)) {
		json_array_foreach(t, i, v) {
			n += tree_bytes(v, max, depth + 1);
			if (n > max)
				return n;
		}
	}
	return n;
}

struct hw_recent {
	json_t *hw; /* NULL: empty */
	uint64_t rv, used, owner;
	char ns[64], name[254]; /* Kubernetes' bounds: a longer name is not kept */
};

struct hw_dead {
	json_t *hw;
	uint64_t owner;
};

static struct hw_recent hw_recent[HW_RECENT]; /* under hw_recent_mu */
static struct hw_dead hw_dead[HW_RECENT];     /* under hw_recent_mu */
static unsigned hw_ndead;                     /* under hw_recent_mu */
static uint64_t hw_recent_clock;
static pthread_mutex_t hw_recent_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t hw_threads;          /* atomic: thread numbers given */
static _Thread_local uint64_t hw_me; /* this thread's number, 0: none yet */

/* This thread's number, for the trees it decodes. */
static uint64_t hw_thread(void)
{
	if (!hw_me)
		hw_me = __atomic_add_fetch(&hw_threads, 1, __ATOMIC_RELAXED);
	return hw_me;
}

/* Moves the trees in hw_dead that are me's to out (room for HW_RECENT),
 * their number returned, for me to free outside the lock. Under
 * hw_recent_mu. */
static unsigned hw_dead_take(uint64_t me, json_t **out)
{
	unsigned n = 0, k = 0;
	for (unsigned i = 0; i < hw_ndead; i++) {
		if (hw_dead[i].owner == me)
			out[n++] = hw_dead[i].hw;
		else
			hw_dead[k++] = hw_dead[i];
	}
	hw_ndead = k;
	return n;
}

static struct metric *hw_recent_metric(bool hit)
{
	return metrics_counter_cached(
		"ironbell_http_answer_hardware_reads_total",
		"Hardware objects an answer made on first use was made from: read and decoded "
		"from the store (result=\"decoded\"), or the tree decoded for an earlier answer "
		"(result=\"reused\").",
		hit ? "result=\"reused\"" : "result=\"decoded\"");
}

/* The kept tree of rec, with a reference, or NULL. Under hw_recent_mu. */
static json_t *hw_recent_find(const struct answers_rec *rec)
{
	for (unsigned i = 0; i < HW_RECENT; i++) {
		struct hw_recent *x = &hw_recent[i];
		if (x->hw && x->rv == rec->rv && strcmp(x->name, rec->name) == 0 &&
		    strcmp(x->ns, rec->namespace_) == 0) {
			x->used = ++hw_recent_clock;
			return json_incref(x->hw);
		}
	}
	return NULL;
}

/* rec's Hardware for an answer made on first use: a kept tree, else
 * rec_hardware() (then kept, in an empty place or the least recently
 * used one's). A reference the caller drops. */
static int rec_hardware_recent(struct store_reader *r, const struct answers_rec *rec,
			       json_t **ret)
{
	size_t nl = strlen(rec->namespace_), ml = strlen(rec->name);
	bool keep = nl < sizeof(hw_recent[0].ns) && ml < sizeof(hw_recent[0].name);
	json_t *old = NULL, *mine[HW_RECENT];
	uint64_t me = hw_thread();
	unsigned n_mine;
	int e;

	if (keep) {
		pthread_mutex_lock(&hw_recent_mu);
		n_mine = hw_dead_take(me, mine);
		*ret = hw_recent_find(rec);
		pthread_mutex_unlock(&hw_recent_mu);
		for (unsigned i = 0; i < n_mine; i++)
			json_decref(mine[i]);
		if (*ret) {
			metric_inc(hw_recent_metric(true), 1);
			return 0;
		}
	}
	/* Kept until 64 newer trees push it out: its nodes from jsonmem's
	 * blocks, which the kept trees (and those waiting for their owner,
	 * 128 at most) hold a few MiB of. */
	jsonmem_begin();
	e = rec_hardware(r, rec, ret);
	jsonmem_end();
	if (e < 0)
		return e;
	metric_inc(hw_recent_metric(false), 1);
	if (!keep || tree_bytes(*ret, HW_RECENT_TREE_MAX, 0) > HW_RECENT_TREE_MAX)
		return 0;
	pthread_mutex_lock(&hw_recent_mu);
	n_mine = hw_dead_take(me, mine);
	json_t *dup = hw_recent_find(rec); /* another thread kept it meanwhile */
	if (!dup) {
		struct hw_recent *v = NULL;
		for (unsigned i = 0; i < HW_RECENT; i++) {
			struct hw_recent *x = &hw_recent[i];
			if (!v || (v->hw && (!x->hw || x->used < v->used)))
				v = x;
		}
		old = v->hw; /* dropped outside the lock, or left to its owner */
		if (old && v->owner != me && hw_ndead < HW_RECENT) {
			hw_dead[hw_ndead++] = (struct hw_dead){ .hw = old, .owner = v->owner };
			old = NULL;
		}
		v->hw = json_incref(*ret);
		v->rv = rec->rv;
		v->used = ++hw_recent_clock;
		v->owner = me;
		memcpy(v->ns, rec->namespace_, nl + 1);
		memcpy(v->name, rec->name, ml + 1);
	}
	pthread_mutex_unlock(&hw_recent_mu);
	json_decref(dup);
	json_decref(old);
	for (unsigned i = 0; i < n_mine; i++)
		json_decref(mine[i]);
	return 0;
}

/* Drops every kept tree, and those waiting for their owner (at shutdown,
 * so that nothing is left). */
void public_recent_clear(void)
{
	pthread_mutex_lock(&hw_recent_mu);
	for (unsigned i = 0; i < HW_RECENT; i++) {
		json_decref(hw_recent[i].hw);
		hw_recent[i].hw = NULL;
	}
	for (unsigned i = 0; i < hw_ndead; i++)
		json_decref(hw_dead[i].hw);
	hw_ndead = 0;
	pthread_mutex_unlock(&hw_recent_mu);
}

/* Makes rec's answer for q from its Hardware, or NULL
 * (rec_hardware_recent, cache_make). */
static struct cached_answer *cache_build(struct api *api, const struct answers_rec *rec,
					 const struct cache_req *q)
{
	json_t *hw = NULL;

	if (rec_hardware_recent(api_thread_reader(api), rec, &hw) < 0)
		return NULL;
	struct cached_answer *ca = cache_make(hw, q);
	json_decref(hw);
	return ca;
}

static void log_cached(const struct answers_rec *rec, const struct cache_req *q,
		       const struct cached_answer *ca)
{
	if (q->key.type != ANSWERS_SCRIPT) {
		log_debug(q->key.type == ANSWERS_HTTPBOOT ? "ipxe" : "metadata",
			  "%s for %s (%s/%s), cached", q->what, q->client, rec->namespace_,
			  rec->name);
		return;
	}
	uint64_t n = answers_log_due(rec, now_mono_ns());
	if (n > 1)
		log_info("ipxe", "script served: mac=%s hardware=%s/%s kind=%s client=%s "
				 "(%llu more since)",
			 ca->mac, rec->namespace_, rec->name, ipxe_script_kind_name(ca->kind),
			 q->client, (unsigned long long)(n - 1));
	else if (n == 1)
		log_info("ipxe", "script served: mac=%s hardware=%s/%s kind=%s client=%s", ca->mac,
			 rec->namespace_, rec->name, ipxe_script_kind_name(ca->kind), q->client);
	else
		log_debug("ipxe", "script served: mac=%s hardware=%s/%s kind=%s client=%s",
			  ca->mac, rec->namespace_, rec->name, ipxe_script_kind_name(ca->kind),
			  q->client);
}

static void count_script_kind(enum ipxe_script_kind k)
{
	static struct metric *m[IPXE_SCRIPT_KIND_MAX]; /* atomic pointers */
	struct metric *x = __atomic_load_n(&m[k], __ATOMIC_ACQUIRE);
	if (!x) {
		char labels[64];
		snprintf(labels, sizeof(labels), "outcome=\"%s\"", ipxe_script_kind_name(k));
		x = metrics_counter("ironbell_ipxe_scripts_total",
				    "iPXE script requests, by outcome (default, url, contents, "
				    "discovery, unknown, not_allowed, error).",
				    labels);
		__atomic_store_n(&m[k], x, __ATOMIC_RELEASE);
	}
	metric_inc(x, 1);
}

static void pub_seen(const struct ib_config *cfg, uint32_t pub);

/* Answers q from the cache when it can: 1 with the response queued (rep
 * says so), 0 when the request must take the uncached path, -ENOENT when
 * the index is current and whole and no Hardware has q->lookup: the
 * uncached path may answer as for an unknown machine without reading the
 * store (a machine no Hardware has, asking again and again, costs no
 * SQLite read). */
static int serve_cached(struct api *api, struct MHD_Connection *c, const struct cache_req *q,
			struct public_reply *rep)
{
	struct answers *a = answers_current();
	enum answers_result res = ANSWERS_HIT;
	int ret = 0;

	if (!a || !q->cfg->http.answer_cache)
		return 0;
	answers_rdlock(a);
	if (!answers_usable(a, q->cfg))
		goto out;
	const struct answers_rec *rec = answers_find(a, q->by, q->lookup);
	if (!rec) {
		if (answers_complete(a))
			ret = -ENOENT;
		goto out;
	}
	if (rec->awaiting_boot || (q->must_own && !rec_owns(rec, q->must_own)))
		goto out;
	if (q->key.type == ANSWERS_SCRIPT || q->key.type == ANSWERS_HTTPBOOT)
		pub_seen(q->cfg, q->key.pub);
	struct cached_answer *ca = answers_get(rec, &q->key), *own = NULL;
	if (!ca) {
		answers_build_lock(rec);
		ca = answers_get(rec, &q->key);
		if (!ca && (ca = cache_build(api, rec, q)) != NULL) {
			res = ANSWERS_BUILT;
			if (answers_put(rec, &q->key, ca, ca->bytes) < 0) {
				own = ca; /* no room: for this request only */
				res = ANSWERS_UNCACHED;
			}
		}
		answers_build_unlock(rec);
		if (!ca)
			goto out;
	}
	rep->queued_ret = MHD_queue_response(c, 200, ca->resp);
	rep->queued = true;
	rep->code = 200;
	ret = 1;
	if (q->key.type == ANSWERS_SCRIPT)
		count_script_kind(ca->kind);
	log_cached(rec, q, ca);
	public_answer_free(own); /* the queued response keeps its own reference */
out:
	answers_rdunlock(a);
	answers_count(ret > 0 ? res : ret < 0 ? ANSWERS_ABSENT : ANSWERS_UNCACHED);
	return ret;
}

static int build_script(const json_t *hw, const struct cache_req *q, struct buf *out,
			struct cached_answer *ca)
{
	char base[SETTINGS_URL_MAX], grpc[SETTINGS_GRPC_MAX], syslog[SETTINGS_IPV4_MAX];
	char err[512];
	struct ipxe_settings s;
	uint8_t m[6];

	if (q->mac)
		memcpy(m, q->mac, 6);
	else if (ipxe_mac_by_ip(hw, q->client, m) < 0)
		return -ENOENT;
	mac_format(m, ca->mac);
	settings_base_url(q->cfg, q->key.pub, base, sizeof(base));
	settings_ipxe(q->cfg, q->key.pub, base, grpc, syslog, &s);
	return ipxe_script(hw, m, &s, out, &ca->kind, err, sizeof(err));
}

static int build_httpboot(const json_t *hw, const struct cache_req *q, struct buf *out,
			  struct cached_answer *ca)
{
	char base[SETTINGS_URL_MAX];
	(void)ca;
	settings_base_url(q->cfg, q->key.pub, base, sizeof(base));
	return ipxe_httpboot(hw, q->client, base, out);
}

/* The cache request of a script for public address pub: by MAC (mac, and
 * key its text) or, mac NULL, by the client's address. The request path
 * and the answers made ahead use these two, so that both key an answer
 * alike. */
static struct cache_req script_req(const struct ib_config *cfg, uint32_t pub, const uint8_t *mac,
				   const char *key, const char *client)
{
	return (struct cache_req){ .by = mac ? ANSWERS_BY_MAC : ANSWERS_BY_IP,
				   .lookup = mac ? key : client,
				   .key = { .type = ANSWERS_SCRIPT,
					    .pub = pub,
					    .param = mac ? key : client },
				   .ctype = CT_TEXT,
				   .out_max = IPXE_SCRIPT_MAX,
				   .build = build_script,
				   .cfg = cfg,
				   .mac = mac,
				   .client = client };
}

/* The cache request of /httpboot from the machine at client. */
static struct cache_req httpboot_req(const struct ib_config *cfg, uint32_t pub, const char *client)
{
	return (struct cache_req){ .by = ANSWERS_BY_IP,
				   .lookup = client,
				   .key = { .type = ANSWERS_HTTPBOOT, .pub = pub, .param = client },
				   .ctype = CT_JSON,
				   .out_max = HTTPBOOT_MAX,
				   .build = build_httpboot,
				   .cfg = cfg,
				   .what = "/httpboot",
				   .client = client };
}

/* ---- answers made before they are asked ----
 *
 * With http.answer_prebuild (and the cache), the cache's follower makes
 * each Hardware's boot answers when it indexes the Hardware (new or
 * changed, and every one after a listing, a reload or a new public
 * address): the iPXE script of each interface's MAC, the path ironbelld's
 * DHCP hands out, and /httpboot of each interface's address, for each
 * public address answers name: dhcp.public_address or
 * dhcp.server_address when set; else the address of http.listen when it
 * is one IPv4 address; else each local address on which the listener
 * answered a script or /httpboot of a machine it has (at most PUBS_MAX,
 * never a loopback one: a request made on the host itself; the first
 * request on a new one has every machine's made for it too). So a rack
 * that powers on finds its answers made. /httpboot for IPv4 addresses
 * only (an IPv6 connection names no IPv4 public address). A Hardware
 * gets answers made ahead while it holds fewer than PREBUILD_MAX, shared
 * out between the public addresses, so that its metadata keeps room in
 * its slots; it is read only when one of them is missing. Metadata, a
 * script asked by address and the rest are made on first use. */
#define PUBS_MAX 4
#define PREBUILD_MAX (ANSWERS_SLOTS / 2)

static uint32_t pubs_seen[PUBS_MAX]; /* each atomic; written under pubs_mu */
static unsigned n_pubs_seen;         /* atomic */
static pthread_mutex_t pubs_mu = PTHREAD_MUTEX_INITIALIZER;

static bool is_loopback(uint32_t ip)
{
	return ip >> 24 == 127;
}

/* The public addresses answers are made ahead for, into pubs: their number. */
static unsigned prebuild_pubs(const struct ib_config *cfg, uint32_t pubs[PUBS_MAX])
{
	if (cfg->dhcp.public_address || cfg->dhcp.server_address) {
		pubs[0] = cfg->dhcp.public_address ? cfg->dhcp.public_address
						   : cfg->dhcp.server_address;
		return 1;
	}
	if ((pubs[0] = cfg->http.listen_ipv4) != 0)
		return 1;
	unsigned n = __atomic_load_n(&n_pubs_seen, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		pubs[i] = __atomic_load_n(&pubs_seen[i], __ATOMIC_RELAXED);
	return n;
}

/* A boot answer of a machine the cache has was asked on public address
 * pub: when answers are learnt from requests (prebuild_pubs) and it is a
 * new one, every machine's answers are made for it too. Cheap once pub is
 * known: on every cached script and /httpboot. */
static void pub_seen(const struct ib_config *cfg, uint32_t pub)
{
	char ip[INET_ADDRSTRLEN];
	bool added = false;

	if (!cfg->http.answer_prebuild || !pub || cfg->dhcp.public_address ||
	    cfg->dhcp.server_address)
		return;
	unsigned n = __atomic_load_n(&n_pubs_seen, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (__atomic_load_n(&pubs_seen[i], __ATOMIC_RELAXED) == pub)
			return;
	if (n >= PUBS_MAX)
		return;
	/* A listener on one address: that one is every request's, made
	 * ahead from the start; kept in the list only so that the next
	 * request stops above. A loopback address (a request made on the
	 * host itself) would cost every machine answers no machine asks
	 * for. */
	uint32_t listen = cfg->http.listen_ipv4;
	bool quiet = listen != 0;
	if ((listen && pub != listen) || (!listen && is_loopback(pub)))
		return;
	pthread_mutex_lock(&pubs_mu);
	n = n_pubs_seen;
	for (unsigned i = 0; i < n; i++)
		if (pubs_seen[i] == pub)
			goto out;
	if (n < PUBS_MAX) {
		__atomic_store_n(&pubs_seen[n], pub, __ATOMIC_RELAXED);
		__atomic_store_n(&n_pubs_seen, n + 1, __ATOMIC_RELEASE);
		added = true;
	}
out:
	pthread_mutex_unlock(&pubs_mu);
	if (!added || quiet)
		return;
	struct in_addr in = { .s_addr = htonl(pub) };
	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	log_info("http", "boot answers are now made ahead for %s too (%u of %d public addresses)",
		 ip, n + 1, PUBS_MAX);
	answers_prebuild_again(answers_current());
}

static struct metric *prebuilt_metric(void)
{
	static struct metric *m; /* atomic pointer */
	struct metric *x = __atomic_load_n(&m, __ATOMIC_ACQUIRE);
	if (!x) {
		x = metrics_counter("ironbell_http_answers_prebuilt_total",
				    "Boot answers (iPXE scripts, /httpboot) made ahead of their first "
				    "request, when a Hardware was indexed.",
				    NULL);
		__atomic_store_n(&m, x, __ATOMIC_RELEASE);
	}
	return x;
}

/* One answer to make ahead: its request and the MAC text it keys on. */
struct prebuild_item {
	struct cache_req q;
	char key[MAC_STR_SIZE];
};

void public_prebuild(void *arg, struct answers *a, const struct answers_rec *rec,
		     struct store_reader *r)
{
	struct api *api = arg;
	const struct ib_config *cfg = api_config_get(api);
	struct prebuild_item items[PREBUILD_MAX];
	uint32_t pubs[PUBS_MAX];
	unsigned n, n_items = 0, made = 0;
	json_t *hw = NULL;

	(void)prebuilt_metric(); /* listed from the first sweep on */
	if (!cfg || !cfg->http.answer_cache || !cfg->http.answer_prebuild || rec->awaiting_boot ||
	    !answers_config_is(a, cfg) || !(n = prebuild_pubs(cfg, pubs)))
		goto out;
	/* The answers missing, PREBUILD_MAX / n for each public address. */
	for (unsigned p = 0; p < n; p++) {
		unsigned quota = PREBUILD_MAX / n, k = 0;
		for (unsigned i = 0; i < rec->n_macs && k < quota; i++, k++) {
			struct prebuild_item *it = &items[n_items];
			mac_format(rec->macs[i], it->key);
			it->q = script_req(cfg, pubs[p], rec->macs[i], it->key, "");
			n_items += !answers_get(rec, &it->q.key);
		}
		for (unsigned i = 0; i < rec->n_ips && k < quota; i++) {
			if (strchr(rec->ips[i], ':'))
				continue; /* IPv6: see above */
			struct prebuild_item *it = &items[n_items];
			it->q = httpboot_req(cfg, pubs[p], rec->ips[i]);
			n_items += !answers_get(rec, &it->q.key);
			k++;
		}
	}
	if (!n_items || answers_held(rec) >= PREBUILD_MAX || rec_hardware(r, rec, &hw) < 0)
		goto out;
	for (unsigned i = 0; i < n_items; i++) {
		answers_build_lock(rec);
		/* Answers made for an address learnt earlier count too: a
		 * Hardware never holds more than PREBUILD_MAX made ahead. */
		if (answers_held(rec) < PREBUILD_MAX && !answers_get(rec, &items[i].q.key)) {
			struct cached_answer *ca = cache_make(hw, &items[i].q);
			if (ca && answers_put(rec, &items[i].q.key, ca, ca->bytes) == 0)
				made++;
			else
				public_answer_free(ca);
		}
		answers_build_unlock(rec);
	}
	if (made)
		metric_inc(prebuilt_metric(), made);
out:
	json_decref(hw);
	if (cfg)
		api_config_put(api, cfg);
}

/* ---- scripts ---- */

static const char *hw_name(const json_t *hw, char out[320])
{
	const json_t *m = json_object_get(hw, "metadata");
	snprintf(out, 320, "%s/%s", json_string_value(json_object_get(m, "namespace")) ?: "",
		 json_string_value(json_object_get(m, "name")) ?: "");
	return out;
}

/* The closed loop (common/bootmark.h): when hw waits for its boot to be
 * seen, records kind (seen through via) on it. A merge patch of one
 * annotation, written at most once per provisioning of a machine, so the
 * request waits for that one commit; a failure is logged and the request
 * answered all the same. */
static void boot_seen(struct api *api, const json_t *hw, const char *kind, const char *via,
		      const char *client)
{
	char name[320];
	if (!bootmark_awaiting(hw))
		return;
	const json_t *m = json_object_get(hw, "metadata");
	json_t *patch = bootmark_patch(kind, via, (int64_t)(now_real_ns() / 1000000u));
	struct store_op op = { .type = STORE_OP_MERGE_PATCH,
			       .source = STORE_SOURCE_DAEMON,
			       .kind = STORE_KIND_HARDWARE,
			       .namespace_ = json_string_value(json_object_get(m, "namespace")),
			       .name = json_string_value(json_object_get(m, "name")),
			       .body = patch,
			       .no_object = true };
	const char *sub = strcmp(via, "ipxe") == 0 ? "ipxe" : "metadata";
	int e = patch && op.name ? store_write1(api_store(api), &op) : -ENOMEM;
	if (e < 0)
		log_warn(sub, "hardware %s: boot from %s not recorded: %s", hw_name(hw, name),
			 client, patch ? store_op_message(&op) : strerror(-e));
	else
		log_info(sub, "hardware %s: %s boot seen (%s request from %s)", hw_name(hw, name),
			 kind, via, client);
	store_op_clear(&op);
	json_decref(patch);
}

static int serve_script(struct api *api, const struct ib_config *cfg, struct MHD_Connection *c,
			const struct ipxe_route *route, const char *client, struct public_reply *rep)
{
	struct store_reader *r = api_thread_reader(api);
	char mac[MAC_STR_SIZE], base[SETTINGS_URL_MAX], grpc[SETTINGS_GRPC_MAX], syslog[SETTINGS_IPV4_MAX];
	char name[320], err[512] = "";
	uint8_t m[6];
	json_t *hw = NULL;
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	struct ipxe_settings s;
	enum ipxe_script_kind kind;
	bool discovery = false;
	int e, cached = 0;

	if (!r)
		return public_reply_text(500, "the store cannot be read\n", rep);
	if (cfg->http.answer_cache && (route->has_mac || client[0])) {
		char key[MAC_STR_SIZE];
		mac_format(route->mac, key);
		struct cache_req q = script_req(cfg, public_address(cfg, c),
						route->has_mac ? route->mac : NULL, key, client);
		if ((cached = serve_cached(api, c, &q, rep)) > 0)
			return 0;
	}
	if (route->has_mac) {
		memcpy(m, route->mac, 6);
		mac_format(m, mac);
		e = cached == -ENOENT ? -ENOENT : store_hardware_by_mac(r, mac, &hw);
	} else {
		snprintf(mac, sizeof(mac), "(by address)");
		e = client[0] && cached != -ENOENT ? store_hardware_by_ip(r, client, &hw) : -ENOENT;
		if (e == 0 && ipxe_mac_by_ip(hw, client, m) < 0)
			e = -ENOENT;
		if (e == 0)
			mac_format(m, mac);
	}
	if (e == -ENOENT && route->has_mac && cfg->dhcp.mode == CONFIG_DHCP_AUTO_PROXY) {
		/* auto-proxy boots machines no Hardware has, for discovery
		 * (Smee's static script): the default script, for a machine
		 * known only by its MAC (worker_id = hw_addr = the MAC, the
		 * default architecture). */
		hw = json_pack("{s:{s:s,s:s},s:{s:[{s:{s:s},s:{s:b}}]}}", "metadata", "name", "",
			       "namespace", "", "spec", "interfaces", "dhcp", "mac", mac, "netboot",
			       "allowPXE", 1);
		e = hw ? 0 : -ENOMEM;
		discovery = e == 0;
		if (e == 0)
			log_info("ipxe", "discovery script for %s from %s: no Hardware has this MAC "
					 "(dhcp.mode auto-proxy)",
				 mac, client);
	}
	if (e == -ENOENT) {
		if (public_log_allowed(PUBLIC_LOG_SCRIPT, "ipxe"))
			log_info("ipxe", "no script for %s from %s: no Hardware has this %s", mac,
				 client, route->has_mac ? "MAC" : "address");
		count_script("unknown");
		e = public_reply_text(404, "no Hardware for this machine\n", rep);
		goto out;
	}
	if (e < 0) {
		log_error("ipxe", "cannot look up %s for %s: %s", mac, client, strerror(-e));
		count_script("error");
		e = public_reply_text(500, "the store cannot be read\n", rep);
		goto out;
	}
	uint32_t pub = public_address(cfg, c);
	settings_base_url(cfg, pub, base, sizeof(base));
	settings_ipxe(cfg, pub, base, grpc, syslog, &s);
	e = ipxe_script(hw, m, &s, &out, &kind, err, sizeof(err));
	if (e == -EACCES || e == -ENOENT) {
		if (public_log_allowed(PUBLIC_LOG_SCRIPT, "ipxe"))
			log_info("ipxe", "no script for %s (%s) from %s: %s", mac,
				 hw_name(hw, name), client,
				 e == -ENOENT ? "the MAC is no longer in it" : err);
		count_script(e == -EACCES ? "not_allowed" : "unknown");
		if (e == -EACCES)
			boot_seen(api, hw, BOOTMARK_NETBOOT, "ipxe", client);
		e = public_reply_text(404, "netboot is not allowed for this machine\n", rep);
		goto out;
	}
	if (e < 0) {
		log_error("ipxe", "cannot make the script of %s (%s): %s", mac, hw_name(hw, name),
			  e == -E2BIG ? "it is too long" : err);
		count_script("error");
		e = public_reply_text(500, "the script cannot be made; the server's log says why\n", rep);
		goto out;
	}
	log_info("ipxe", "script served: mac=%s hardware=%s kind=%s client=%s", mac,
		 discovery ? "none" : hw_name(hw, name),
		 discovery ? "discovery" : ipxe_script_kind_name(kind), client);
	count_script(discovery ? "discovery" : ipxe_script_kind_name(kind));
	e = reply_buf(200, CT_TEXT, &out, rep);
out:
	json_decref(hw);
	buf_free(&out);
	return e;
}

/* ---- /httpboot ---- */

static int serve_httpboot(struct api *api, const struct ib_config *cfg, struct MHD_Connection *c,
			  const char *client, struct public_reply *rep)
{
	struct store_reader *r = api_thread_reader(api);
	json_t *hw = NULL;
	char base[SETTINGS_URL_MAX];
	struct buf out = BUF_INIT(HTTPBOOT_MAX);
	int e = 0;

	if (!r)
		return public_reply_text(500, "the store cannot be read\n", rep);
	if (cfg->http.answer_cache && client[0]) {
		struct cache_req q = httpboot_req(cfg, public_address(cfg, c), client);
		if ((e = serve_cached(api, c, &q, rep)) > 0)
			return 0;
	}
	if (e != -ENOENT)
		e = client[0] ? store_hardware_by_ip(r, client, &hw) : -ENOENT;
	if (e < 0 && e != -ENOENT) {
		log_error("ipxe", "cannot look up %s: %s", client, strerror(-e));
		return public_reply_text(500, "the store cannot be read\n", rep);
	}
	settings_base_url(cfg, public_address(cfg, c), base, sizeof(base));
	e = ipxe_httpboot(hw, client, base, &out);
	json_decref(hw);
	if (e == 0)
		e = reply_buf(200, CT_JSON, &out, rep);
	buf_free(&out);
	return e;
}

/* ---- metadata ---- */

static const char *md_ctype(const struct md_route *r)
{
	switch (r->type) {
	case MD_ROUTE_HEGEL:
		return MD_CT_JSON;
	case MD_ROUTE_IGNITION:
		return MD_CT_IGNITION;
	case MD_ROUTE_NOCLOUD:
		return r->file == MD_NOCLOUD_META_DATA || r->file == MD_NOCLOUD_NETWORK_CONFIG ?
			       MD_CT_YAML :
			       MD_CT_TEXT;
	default:
		return MD_CT_TEXT;
	}
}

/* Every X-Forwarded-For line of a request, joined in order with commas,
 * as RFC 9110 §5.3 says several lines of one field mean. A proxy may add a
 * line of its own instead of extending the client's: reading only one of
 * them would believe what the client wrote. */
struct xff_join {
	char s[MD_XFF_JOINED_MAX];
	size_t len;
	unsigned lines;
	bool over;
};

static enum MHD_Result xff_line(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct xff_join *x = cls;
	(void)kind;
	if (!key || strcasecmp(key, "X-Forwarded-For") != 0)
		return MHD_YES;
	size_t n = value ? strlen(value) : 0;
	if (x->len + (x->lines ? 1 : 0) + n >= sizeof(x->s)) {
		x->over = true;
		return MHD_NO;
	}
	if (x->lines++)
		x->s[x->len++] = ',';
	memcpy(x->s + x->len, value ? value : "", n);
	x->len += n;
	x->s[x->len] = '\0';
	return MHD_YES;
}

static int build_md(const json_t *hw, const struct cache_req *q, struct buf *out,
		    struct cached_answer *ca)
{
	const struct md_route *route = q->md;
	(void)ca;
	if (route->by_instance &&
	    (!md_instance_id(hw) || strcmp(md_instance_id(hw), route->instance_id) != 0))
		return -ENOENT;
	switch (route->type) {
	case MD_ROUTE_EC2:
		return md_ec2(hw, route->path, out);
	case MD_ROUTE_HEGEL:
		return md_hegel_json(hw, out);
	case MD_ROUTE_NOCLOUD:
		return md_nocloud(hw, route->file, out);
	case MD_ROUTE_IGNITION:
		return md_ignition(hw, out);
	default:
		return -ENOENT;
	}
}

/* The metadata answer of route for client from the answer cache: 1 when
 * queued, 0 when the store path must answer. The key names the route:
 * its type, and the EC2 path (after the instance id it was asked
 * through) or the NoCloud file. */
static int serve_md_cached(struct api *api, const struct ib_config *cfg,
			   struct MHD_Connection *c, const struct md_route *route,
			   const char *client, struct public_reply *rep)
{
	char param[ANSWERS_PARAM_MAX];
	enum answers_type t;
	int n = 0;

	switch (route->type) {
	case MD_ROUTE_EC2:
		t = ANSWERS_EC2;
		n = route->by_instance ?
			    snprintf(param, sizeof(param), "%s/%s", route->instance_id, route->path) :
			    snprintf(param, sizeof(param), "/%s", route->path);
		break;
	case MD_ROUTE_HEGEL:
		t = ANSWERS_HEGEL;
		param[0] = '\0';
		break;
	case MD_ROUTE_NOCLOUD:
		t = ANSWERS_NOCLOUD;
		n = snprintf(param, sizeof(param), "%d", (int)route->file);
		break;
	case MD_ROUTE_IGNITION:
		t = ANSWERS_IGNITION;
		param[0] = '\0';
		break;
	default:
		return 0;
	}
	if (n < 0 || (size_t)n >= sizeof(param))
		return 0; /* too long to be a key: the store path */
	struct cache_req q = { .by = t == ANSWERS_IGNITION ? ANSWERS_BY_UUID : ANSWERS_BY_IP,
			       .lookup = t == ANSWERS_IGNITION ? route->uuid : client,
			       .must_own = t == ANSWERS_IGNITION ? client : NULL,
			       .key = { .type = t, .pub = 0, .param = param },
			       .ctype = md_ctype(route),
			       .out_max = MD_BODY_MAX,
			       .build = build_md,
			       .cfg = cfg,
			       .md = route,
			       .client = client,
			       .what = md_route_template(route) };
	return serve_cached(api, c, &q, rep);
}

static int serve_metadata(struct api *api, const struct ib_config *cfg, struct MHD_Connection *c,
			  const struct md_route *route, const char *peer, struct public_reply *rep)
{
	struct store_reader *r = api_thread_reader(api);
	struct xff_join xj = { .len = 0 };
	MHD_get_connection_values(c, MHD_HEADER_KIND, xff_line, &xj);
	/* Too long to read whole: no address can be trusted from it. */
	const char *xff = xj.over ? "unusable" : xj.lines ? xj.s : NULL;
	char client[INET6_ADDRSTRLEN], name[320];
	struct buf out = BUF_INIT(MD_BODY_MAX);
	json_t *hw = NULL;
	uint8_t mac[6];
	int e;

	if (!r)
		return public_reply_text(500, "the store cannot be read\n", rep);
	if (route->type == MD_ROUTE_BAD)
		return public_reply_text(404, "not found\n", rep);
	struct md_settings md;
	settings_metadata(cfg, &md);
	e = md_client_address(peer, xff, md.trusted_proxies, client, sizeof(client));
	int cached = e == 0 && cfg->http.answer_cache ?
			     serve_md_cached(api, cfg, c, route, client, rep) :
			     0;
	if (cached > 0)
		return 0;
	if (cached == -ENOENT) {
		e = -ENOENT;
	} else if (e == 0) {
		/* Ignition names the machine by its system UUID; the address
		 * must still be one of that machine's. Everything else is
		 * found by the address alone. */
		e = route->type == MD_ROUTE_IGNITION ? store_hardware_by_uuid(r, route->uuid, &hw) :
						       store_hardware_by_ip(r, client, &hw);
		if (e == 0 && route->type == MD_ROUTE_IGNITION && ipxe_mac_by_ip(hw, client, mac) < 0)
			e = -ENOENT;
		if (e == 0 && route->by_instance &&
		    (!md_instance_id(hw) || strcmp(md_instance_id(hw), route->instance_id) != 0))
			e = -ENOENT;
	} else {
		e = -ENOENT;
	}
	if (e == -ENOENT) {
		metric_inc(metrics_counter_cached("ironbell_metadata_unknown_clients_total",
						  "Metadata requests from an address that no "
						  "Hardware owns (or not the one asked for).",
						  NULL),
			   1);
		if (public_log_allowed(PUBLIC_LOG_METADATA, "metadata"))
			log_info("metadata", "no metadata for %s (peer %s%s%s): %s",
				 client[0] ? client : "an unusable X-Forwarded-For", peer,
				 xff ? ", X-Forwarded-For " : "", xff ? "present" : "",
				 route->type == MD_ROUTE_IGNITION ?
					 "no Hardware with this system UUID has this address" :
				 route->by_instance ? "not the Hardware with this instance id" :
						      "no Hardware has this address");
		e = public_reply_text(404, "no Hardware for this address\n", rep);
		goto out;
	}
	if (e < 0) {
		log_error("metadata", "cannot look up %s: %s", client, strerror(-e));
		e = public_reply_text(500, "the store cannot be read\n", rep);
		goto out;
	}
	boot_seen(api, hw, BOOTMARK_DISK, "metadata", client);
	switch (route->type) {
	case MD_ROUTE_EC2:
		e = md_ec2(hw, route->path, &out);
		break;
	case MD_ROUTE_HEGEL:
		e = md_hegel_json(hw, &out);
		break;
	case MD_ROUTE_NOCLOUD:
		e = md_nocloud(hw, route->file, &out);
		break;
	case MD_ROUTE_IGNITION:
		e = md_ignition(hw, &out);
		break;
	default:
		e = -ENOENT;
	}
	if (e == -ENOENT) {
		e = public_reply_text(404, "no such key\n", rep);
	} else if (e < 0) {
		log_error("metadata", "cannot answer %s for %s (%s): %s", md_route_template(route),
			  client, hw_name(hw, name), e == -E2BIG ? "too large" : strerror(-e));
		e = public_reply_text(500, "the answer cannot be made; the server's log says why\n", rep);
	} else {
		log_debug("metadata", "%s for %s (%s)", md_route_template(route), client,
			  hw_name(hw, name));
		e = reply_buf(200, md_ctype(route), &out, rep);
	}
out:
	json_decref(hw);
	buf_free(&out);
	return e;
}

/* ---- routing ---- */

bool public_route_parse(const char *url, struct public_route *ret)
{
	size_t n = strlen(url);
	ret->kind = PUBLIC_NONE;
	if (ipxe_route_parse(url, n, &ret->ipxe) != IPXE_ROUTE_NONE)
		ret->kind = PUBLIC_IPXE;
	else if (md_route_parse(url, n, &ret->md) != MD_ROUTE_NONE)
		ret->kind = PUBLIC_METADATA;
	return ret->kind != PUBLIC_NONE;
}

const char *public_route_template(const struct public_route *r)
{
	return r->kind == PUBLIC_IPXE ? ipxe_route_template(&r->ipxe) :
	       r->kind == PUBLIC_METADATA ? md_route_template(&r->md) :
					     "(unknown)";
}

int public_handle(struct api *api, const struct ib_config *cfg, struct MHD_Connection *c,
		  const struct public_route *pr, struct public_reply *rep)
{
	char client[INET6_ADDRSTRLEN];
	const struct ipxe_route *route = &pr->ipxe;
	peer_ip(c, client);
	if (pr->kind == PUBLIC_METADATA)
		return serve_metadata(api, cfg, c, &pr->md, client, rep);
	switch (route->type) {
	case IPXE_ROUTE_SCRIPT:
		return serve_script(api, cfg, c, route, client, rep);
	case IPXE_ROUTE_BINARY:
		return public_serve_file(c, cfg, route, client, rep);
	case IPXE_ROUTE_OSIE:
		return public_serve_file(c, cfg, route, client, rep);
	case IPXE_ROUTE_HTTPBOOT:
		return serve_httpboot(api, cfg, c, client, rep);
	default:
		return public_reply_text(404, "not found\n", rep);
	}
}
