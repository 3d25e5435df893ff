/* server — the syslog receiver thread: one UDP socket, one loop.
 *
 * DESIGN: each datagram is parsed (syslog/codec.c), charged to its
 * source's token bucket (common/ratelimit.h: syslog.rate per second,
 * syslog.burst at once),
 * matched to the Hardware that owns the source address, and appended as
 * an event of that Hardware (store_event: queued for the store's writer,
 * never waited for). The event's reason is "Syslog", its type "Warning"
 * for severities up to warning and "Normal" below, its message
 * "<severity> <app>[<pid>]: <text>" (syslog_event_text), cut at
 * syslog.max_message, in valid UTF-8 and with control bytes replaced;
 * every cut is counted.
 *
 * Both tables are bounded and direct-mapped by the source address: the
 * buckets (SYSLOG_MAX_SOURCES; a source that collides takes the slot over,
 * with a full bucket, which only ever lets a little more through) and the
 * address-to-Hardware answers (SYSLOG_CACHE, each kept SYSLOG_CACHE_TTL_S
 * seconds, so a chatty machine costs one store read every few seconds and
 * a Hardware's new address is seen within that time). A message from an
 * address no Hardware owns is counted and logged (through a bucket of
 * SYSLOG_LOG_BURST lines refilled at SYSLOG_LOG_RATE a second; the next
 * line let through after some were held back is preceded by how many),
 * not stored.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "common/common.h"
#include "common/net.h"
#include "common/ratelimit.h"
#include "store/store.h"
#include "syslog/syslog.h"
#include "syslog/syslog-codec.h"

#define SYSLOG_MAX_SOURCES 4096
#define SYSLOG_CACHE 1024
#define SYSLOG_CACHE_TTL_S 5
#define SYSLOG_LOG_BURST 10 /* lines about unknown sources at once ... */
#define SYSLOG_LOG_RATE 1   /* ... then this many per second */
#define SYSLOG_BATCH 64
#define SYSLOG_NAME_MAX 253

/* A message cut at syslog.max_message (at most SYSLOG_DATAGRAM_MAX) and
 * its prefix fit in an event whole. */
_Static_assert(SYSLOG_DATAGRAM_MAX + SYSLOG_EVENT_PREFIX_MAX <= STORE_MAX_EVENT_MESSAGE,
	       "a syslog event message fits in the store's");

enum drop {
	DROP_MALFORMED,
	DROP_RATE,
	DROP_UNKNOWN,
	DROP_STORE,
	DROP_MAX
};
static const char *const drop_names[DROP_MAX] = { "malformed", "rate_limited", "unknown_source",
						  "store" };

struct source {
	uint32_t ip; /* network order; 0: free */
	struct ratelimit b;
};

struct owner {
	uint32_t ip;
	uint64_t expires_ns;
	bool found;
	char ns[64];
	char name[SYSLOG_NAME_MAX + 1];
};

struct syslog_server {
	struct store *store;
	struct syslog_settings set; /* a copy; its string is ours */
	int fd, stop_fd;
	pthread_t thread;
	bool started;
	struct store_reader *reader; /* the thread's */
	struct source sources[SYSLOG_MAX_SOURCES];
	struct owner owners[SYSLOG_CACHE];
	struct ratelimit rl_unknown; /* log lines about unknown sources */
	uint8_t buf[SYSLOG_DATAGRAM_MAX + 1];
	char *text; /* SYSLOG_EVENT_PREFIX_MAX + max_message() + 1: the event's */
	struct metric *m_received, *m_stored, *m_cut, *m_drop[DROP_MAX];
};

static uint32_t slot_of(uint32_t ip, uint32_t n)
{
	uint32_t h = ip * 2654435761u;
	return (h ^ (h >> 16)) % n;
}

static bool take_token(struct syslog_server *s, uint32_t ip, uint64_t now)
{
	struct source *src = &s->sources[slot_of(ip, SYSLOG_MAX_SOURCES)];
	/* A source that takes over a slot keeps the bucket as it is, not a
	 * full one: two (spoofed) addresses that share a slot share its
	 * budget, instead of refilling each other's by turns. A fresh slot's
	 * bucket is zeroed, which ratelimit_allow fills to the burst. */
	src->ip = ip;
	return ratelimit_allow(&src->b, now, s->set.rate, s->set.burst);
}

/* The Hardware that owns ip, from the cache or the store. */
static const struct owner *owner_of(struct syslog_server *s, uint32_t ip, const char *ipt,
				    uint64_t now)
{
	struct owner *o = &s->owners[slot_of(ip, SYSLOG_CACHE)];
	json_t *hw = NULL;
	if (o->ip == ip && o->expires_ns > now)
		return o;
	*o = (struct owner){ .ip = ip, .expires_ns = now + SYSLOG_CACHE_TTL_S * 1000000000ull };
	if (s->reader && store_hardware_by_ip(s->reader, ipt, &hw) == 0) {
		const json_t *m = json_object_get(hw, "metadata");
		const char *ns = json_string_value(json_object_get(m, "namespace"));
		const char *name = json_string_value(json_object_get(m, "name"));
		if (ns && name && strlen(ns) < sizeof(o->ns) && strlen(name) < sizeof(o->name)) {
			memcpy(o->ns, ns, strlen(ns) + 1);
			memcpy(o->name, name, strlen(name) + 1);
			o->found = true;
		}
		json_decref(hw);
	}
	return o;
}

/* syslog.max_message, which the configuration keeps within
 * SYSLOG_DATAGRAM_MAX. */
static size_t max_message(const struct syslog_server *s)
{
	size_t max = s->set.max_message;
	return max < SYSLOG_DATAGRAM_MAX ? max : SYSLOG_DATAGRAM_MAX;
}

static void on_datagram(struct syslog_server *s, size_t n, const struct sockaddr_in *from)
{
	struct syslog_msg m;
	enum syslog_bad why;
	char ipt[INET_ADDRSTRLEN];
	uint64_t now = now_mono_ns();

	metric_inc(s->m_received, 1);
	inet_ntop(AF_INET, &from->sin_addr, ipt, sizeof(ipt));
	if (syslog_parse(s->buf, n, &m, &why) < 0) {
		metric_inc(s->m_drop[DROP_MALFORMED], 1);
		log_debug("syslog", "dropped a message from %s: %s", ipt, syslog_bad_name(why));
		return;
	}
	if (!take_token(s, from->sin_addr.s_addr, now)) {
		metric_inc(s->m_drop[DROP_RATE], 1);
		return;
	}
	const struct owner *o = owner_of(s, from->sin_addr.s_addr, ipt, now);
	if (!o->found) {
		metric_inc(s->m_drop[DROP_UNKNOWN], 1);
		if (ratelimit_log(&s->rl_unknown, now, SYSLOG_LOG_RATE, SYSLOG_LOG_BURST, "syslog"))
			log_info("syslog", "a message from %s, which no Hardware owns: not kept", ipt);
		return;
	}
	bool cut;
	syslog_event_text(&m, s->text, max_message(s), &cut);
	int e = store_event(s->store, STORE_KIND_HARDWARE, o->ns, o->name,
			    m.severity <= 4 ? "Warning" : "Normal", "Syslog", "%s", s->text);
	if (e < 0) {
		metric_inc(s->m_drop[DROP_STORE], 1);
		return;
	}
	/* The store cuts only past STORE_MAX_EVENT_MESSAGE, which the
	 * assertion above keeps out of reach; counted all the same. */
	if (cut || e > 0)
		metric_inc(s->m_cut, 1);
	metric_inc(s->m_stored, 1);
}

static void *run(void *arg)
{
	struct syslog_server *s = arg;
	s->reader = store_reader_new(s->store);
	if (!s->reader)
		log_error("syslog", "cannot open a store reader: messages will not be kept");
	for (;;) {
		struct pollfd p[2] = { { .fd = s->fd, .events = POLLIN },
				       { .fd = s->stop_fd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		for (int i = 0; i < SYSLOG_BATCH; i++) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(s->fd, s->buf, SYSLOG_DATAGRAM_MAX, 0,
					     (struct sockaddr *)&from, &fl);
			if (n < 0)
				break;
			if (fl >= sizeof(from) && from.sin_family == AF_INET)
				on_datagram(s, (size_t)n, &from);
		}
	}
	store_reader_free(s->reader);
	s->reader = NULL;
	return NULL;
}

int syslog_server_new(struct store *store, const struct syslog_settings *settings,
		      struct syslog_server **ret, char *err, size_t errlen)
{
	struct syslog_server *s = calloc(1, sizeof(*s));
	char l[64];
	int e;
	if (!s)
		return -ENOMEM;
	s->store = store;
	s->set = *settings;
	s->fd = s->stop_fd = -1;
	s->text = malloc(SYSLOG_EVENT_PREFIX_MAX + max_message(s) + 1);
	s->set.listen = strdup(settings->listen);
	if (!s->text || !s->set.listen) {
		e = -ENOMEM;
		snprintf(err, errlen, "syslog: out of memory");
		goto fail;
	}
	if ((e = s->fd = net_bind(s->set.listen, AF_INET, SOCK_DGRAM, 0, "syslog", err,
				  errlen)) < 0)
		goto fail;
	if ((s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		e = -errno;
		snprintf(err, errlen, "syslog: %s", strerror(errno));
		goto fail;
	}
	s->m_received = metrics_counter("ironbell_syslog_received_total",
					"Syslog datagrams received.", NULL);
	s->m_stored = metrics_counter("ironbell_syslog_stored_total",
				      "Syslog messages kept as events of their Hardware.", NULL);
	s->m_cut = metrics_counter("ironbell_syslog_truncated_total",
				   "Syslog messages cut (text at syslog.max_message, program, pid).",
				   NULL);
	for (int d = 0; d < DROP_MAX; d++) {
		snprintf(l, sizeof(l), "reason=\"%s\"", drop_names[d]);
		s->m_drop[d] = metrics_counter("ironbell_syslog_dropped_total",
					       "Syslog messages not kept, by reason.", l);
	}
	*ret = s;
	return 0;
fail:
	syslog_server_free(s);
	return e;
}

int syslog_server_start(struct syslog_server *s, char *err, size_t errlen)
{
	int e = pthread_create(&s->thread, NULL, run, s);
	if (e != 0) {
		snprintf(err, errlen, "cannot start the syslog thread: %s", strerror(e));
		return -e;
	}
	pthread_setname_np(s->thread, "syslog");
	s->started = true;
	log_info("syslog", "receiving on %s (UDP)", s->set.listen);
	return 0;
}

void syslog_server_free(struct syslog_server *s)
{
	if (!s)
		return;
	if (s->started) {
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) < 0)
			log_warn("syslog", "cannot stop the thread: %s", strerror(errno));
		pthread_join(s->thread, NULL);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	free(s->text);
	free((char *)s->set.listen);
	free(s);
}
