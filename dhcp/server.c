/* server — the DHCP server thread: sockets in, policy, leases, replies out.
 *
 * DESIGN: one thread, one epoll loop, no lock on the packet path. It owns
 * the UDP sockets (sock.c), a read-only store connection, the reservation
 * table (hosts.c) and a completion queue of the store. Per datagram:
 * parse (codec.c), look the MAC up in the table, decide (policy.c, with
 * the policy configuration of the local address the request was for),
 * write the reply, and send it where RFC 2131 §4.1 says. Nothing waits:
 *
 *  - An ACK that grants a lease is parked, its bytes and destination in a
 *    slot, while the lease goes to the store's writer
 *    (store_lease_put_async); the writer commits everything queued in one
 *    transaction (group commit: a burst of ACKs costs one fsync), then
 *    wakes the completion queue's eventfd, and the loop sends the ACKs
 *    whose lease is on disk. A lease the store refuses is logged and its
 *    ACK never sent: the client asks again. OFFERs, NAKs and proxy replies
 *    grant nothing and go out at once.
 *  - Lease reuse (dhcp.lease_reuse): the thread knows which bound lease
 *    of each MAC is on disk (leases.c: read at start, then the outcome of
 *    each of its writes). A client that asks again while that lease still
 *    has nearly all its time left (the PXE ROM, iPXE and the OS of one
 *    boot, a minute apart) is offered and ACKed that lease for the time
 *    it has left: the ACK goes out at once, with nothing to write.
 *  - Hardware changes arrive through a store subscription (an eventfd):
 *    the loop reads the change log from where it left off and updates the
 *    table. If retention has dropped changes it missed, it reloads.
 *  - Expired leases are swept every DHCP_EXPIRE_INTERVAL seconds by an
 *    asynchronous request to the writer, 500 leases at a time, so that
 *    the sweep never holds the writer long, however many leases there
 *    are.
 *
 * The table is loaded before dhcp_server_start() returns, so once the
 * daemon says READY the server answers every Hardware stored until then.
 * At stop, the loop reads no more requests but waits (at most
 * DHCP_STOP_WAIT_MS) for the leases being committed, and sends their ACKs.
 *
 * Logs: one line per ACK and NAK (info), per DECLINE (warn), RELEASE
 * (info); unknown clients at info and clients whose reservation is on
 * none of their interface's subnets (link.c) at warn, each at most
 * DHCP_LOG_BURST lines per DHCP_LOG_INTERVAL seconds; malformed packets
 * at debug (they are counted). Metrics: see man/ironbelld.8, "DHCP".
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/config/conf.h"
#include "dhcp/dhcp-server.h"
#include "dhcp/map.h"
#include "dhcp/server-internal.h"
#include "store/store.h"

#define DHCP_MAX_SOCKS (2 * CONFIG_DHCP_MAX_INTERFACES)
#define DHCP_INFLIGHT_MAX 1024  /* leases being committed (ACKs parked) */
#define DHCP_CFG_CACHE 16       /* policy configurations, by local address */
#define DHCP_EXPIRE_INTERVAL 1  /* seconds between lease expiry sweeps (each
				 * examines 500 leases: store.h) */
#define DHCP_STOP_WAIT_MS 5000  /* at stop, for the leases being committed */
#define DHCP_RX_BURST 64        /* datagrams read from one socket per wakeup */
#define DHCP_CHANGES_PAGE 1000  /* change-log rows read at a time */
#define DHCP_LOG_BURST 10       /* rate-limited log lines ... */
#define DHCP_LOG_INTERVAL 10    /* ... per this many seconds */
#define DHCP_RELEASED_KEEP 3600 /* seconds a released lease stays listed */
#define DHCP_MARK_SWEEP 1024  /* lease marks examined per expiry tick */

/* Completion tags: 1..DHCP_INFLIGHT_MAX a parked ACK's slot + 1; a
 * RELEASE or DECLINE carries its MAC. */
#define TAG_EXPIRE UINT64_MAX
#define TAG_RELEASE (1ull << 62) /* | the MAC's 48 bits */

enum {
	ID_SOCK = 0, /* + socket index */
	ID_STOP = 1000,
	ID_DONE,
	ID_CHANGES,
	ID_TIMER,
	ID_LINKS,
};

/* Drop reasons beyond the codec's (enum dhcp_bad). */
enum {
	DROP_OVERSIZE = DHCP_BAD_MAX, /* a datagram over DHCP_MAX_MESSAGE */
	DROP_NO_ADDRESS,              /* no server address for the interface */
	DROP_INTERNAL,                /* the policy or the writer failed */
	DROP_QUEUE_FULL,              /* DHCP_INFLIGHT_MAX leases in flight */
	DROP_LEASE_FAILED,            /* the store refused the lease */
	DROP_SEND_FAILED,             /* sendmsg failed */
	DROP_REPLY_TOO_LARGE,         /* a relay's option 82 leaves no room */
	DROP_MAX
};

static const char *const drop_names[DROP_MAX - DHCP_BAD_MAX] = {
	"oversize", "no_server_address", "internal", "lease_queue_full", "lease_write_failed",
	"send_failed", "reply_too_large",
};

/* Where and how a reply goes. */
struct target {
	const struct dhcp_sock *sock; /* the socket the request came in on */
	enum dhcp_dest dest;
	uint32_t ip;       /* destination */
	uint16_t port;     /* destination port */
	int ifindex;       /* the request's interface */
	uint32_t local_ip; /* our address on it */
	uint8_t chaddr[6];
};

/* A reply held for the next sendmmsg on its socket (tx_flush). */
struct queued {
	const struct dhcp_sock *sock;
	struct dhcp_tx tx; /* tx.data points at pkt */
	enum dhcp_msg_type type;
	uint32_t to;   /* the client's address, for the log */
	uint64_t t_ns; /* the request's receive time, or 0 */
	uint8_t pkt[DHCP_MAX_PACKET];
};

/* An ACK waiting for its lease to be committed. */
struct parked {
	bool used;
	struct target to;
	uint64_t t_ns; /* when the request arrived */
	uint32_t yiaddr, giaddr;
	struct dhcp_lease_mark mark; /* the lease being written */
	uint64_t owner;              /* its Hardware: dhcp_leases_owner */
	uint16_t len;
	char hw[DHCP_HOST_NAMESPACE_MAX + DHCP_HOST_NAME_MAX + 2];
	uint8_t pkt[DHCP_MAX_PACKET];
};

struct ratelimit {
	uint64_t start;
	unsigned n, suppressed;
};

struct why_metric {
	const char *why;
	struct metric *m;
};

struct cfg_slot {
	bool used;
	uint32_t local_ip;
	int error; /* dhcp_policy_config_from's */
	struct dhcp_policy_config cfg;
};

struct dhcp_server {
	struct store *store;
	const struct ib_config *c; /* borrowed, outlives us */
	struct dhcp_sock socks[DHCP_MAX_SOCKS];
	size_t nsocks;
	int raw_fd; /* -1: none (no CAP_NET_RAW): unicast becomes broadcast */
	int ep, stop_fd, timer_fd;
	struct store_completion *cq;
	struct store_subscription *sub;
	pthread_t thread;
	bool started;
	sem_t ready;
	int start_error;
	char start_msg[256];

	/* the thread's own */
	struct store_reader *reader;
	struct dhcp_hosts *hosts;
	struct dhcp_leases *leases; /* what is on disk, for lease reuse */
	uint64_t rv; /* of the last change applied to hosts */
	bool sync_more; /* changes may be left to read after S->rv */
	bool expiring;
	/* The latest time given to the store's expiry: leases that expired
	 * by then may be gone from disk, whatever the clock says now. */
	int64_t expired_by;
	bool stopping;
	struct cfg_slot cfgs[DHCP_CFG_CACHE];
	unsigned next_cfg;
	struct parked *parked; /* DHCP_INFLIGHT_MAX slots */
	uint32_t free_slots[DHCP_INFLIGHT_MAX];
	size_t nfree;
	struct ratelimit rl_unknown, rl_misc, rl_subnet;
	struct dhcp_links *links; /* NULL: no subnet check (dhcp.subnet_check, proxy) */
	uint8_t rx[DHCP_RX_BATCH][DHCP_MAX_MESSAGE + 1];
	uint8_t tx[DHCP_MAX_PACKET];
	struct queued txq[DHCP_TX_BATCH]; /* replies to send at the end of the turn */
	size_t ntxq;
	struct dhcp_packet req;
	struct dhcp_reply reply;
	struct dhcp_host host;
	struct dhcp_decision dec;

	/* metrics */
	struct metric *m_rx[DHCP_MSG_TYPE_MAX], *m_tx[DHCP_MSG_TYPE_MAX];
	struct metric *m_drop[DROP_MAX];
	struct why_metric m_why[64];
	size_t nwhy;
	struct metric *m_reply_seconds, *m_hosts, *m_hosts_bytes, *m_leases_committed,
		*m_leases_expired, *m_leases_reused;
};

/* ---- small helpers ---- */

static void mac_str(const uint8_t *m, char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static int64_t now_s(void)
{
	return (int64_t)(now_real_ns() / 1000000000u);
}

/* True when one more line may be logged; counts the ones that may not. */
static bool rl_allow(struct ratelimit *rl)
{
	uint64_t now = now_mono_ns();
	if (now - rl->start >= (uint64_t)DHCP_LOG_INTERVAL * 1000000000u) {
		if (rl->suppressed)
			log_info("dhcp", "%u similar lines suppressed in %d s", rl->suppressed,
				 DHCP_LOG_INTERVAL);
		rl->start = now;
		rl->n = 0;
		rl->suppressed = 0;
	}
	if (rl->n < DHCP_LOG_BURST) {
		rl->n++;
		return true;
	}
	rl->suppressed++;
	return false;
}

static void drop(struct dhcp_server *S, int reason)
{
	metric_inc(S->m_drop[reason], 1);
}

/* ignored_total{why=...}: policy reasons are static strings, so the
 * pointer is the key; a new one registers its series once. */
static void ignored(struct dhcp_server *S, const char *why)
{
	size_t i;
	for (i = 0; i < S->nwhy; i++)
		if (S->m_why[i].why == why || strcmp(S->m_why[i].why, why) == 0)
			break;
	if (i == S->nwhy) {
		char labels[96];
		if (S->nwhy == sizeof(S->m_why) / sizeof(S->m_why[0]))
			return;
		snprintf(labels, sizeof(labels), "why=\"%s\"", why);
		S->m_why[i] = (struct why_metric){
			why, metrics_counter("ironbell_dhcp_ignored_total",
					     "DHCP requests answered with silence, by reason.",
					     labels)
		};
		S->nwhy++;
	}
	metric_inc(S->m_why[i].m, 1);
}

static void metrics_register(struct dhcp_server *S)
{
	char labels[64];

	for (int t = 1; t < DHCP_MSG_TYPE_MAX; t++) {
		snprintf(labels, sizeof(labels), "type=\"%s\"", dhcp_msg_type_name(t));
		if (t == DHCP_DISCOVER || t == DHCP_REQUEST || t == DHCP_DECLINE ||
		    t == DHCP_RELEASE || t == DHCP_INFORM || t >= DHCP_LEASEQUERY)
			S->m_rx[t] = metrics_counter("ironbell_dhcp_received_total",
						     "DHCP messages received, by type.", labels);
		if (t == DHCP_OFFER || t == DHCP_ACK || t == DHCP_NAK)
			S->m_tx[t] = metrics_counter("ironbell_dhcp_sent_total",
						     "DHCP messages sent, by type.", labels);
	}
	for (int r = 1; r < DROP_MAX; r++) {
		snprintf(labels, sizeof(labels), "reason=\"%s\"",
			 r < DHCP_BAD_MAX ? dhcp_bad_reason_name(r) : drop_names[r - DHCP_BAD_MAX]);
		S->m_drop[r] = metrics_counter(
			"ironbell_dhcp_dropped_total",
			"DHCP datagrams dropped (malformed, or not answered for a fault), by reason.",
			labels);
	}
	S->m_reply_seconds = metrics_histogram(
		"ironbell_dhcp_reply_seconds",
		"Time from a DHCP request's arrival to its reply leaving (ACKs: lease committed).",
		NULL, metrics_latency_buckets, metrics_latency_nbuckets);
	S->m_hosts = metrics_gauge("ironbell_dhcp_hosts",
				   "Hardware interfaces (MACs) in the DHCP server's table.", NULL);
	S->m_hosts_bytes = metrics_gauge("ironbell_dhcp_hosts_bytes",
					 "Memory held by the DHCP server's table.", NULL);
	S->m_leases_committed = metrics_counter(
		"ironbell_dhcp_leases_committed_total",
		"DHCP leases written to the store (bound, released, declined).", NULL);
	S->m_leases_expired = metrics_counter("ironbell_dhcp_leases_expired_total",
					      "DHCP leases removed at expiry.", NULL);
	S->m_leases_reused = metrics_counter(
		"ironbell_dhcp_leases_reused_total",
		"DHCP ACKs that handed out the lease already on disk (dhcp.lease_reuse), with no "
		"write.",
		NULL);
}

/* ---- the reservation table ---- */

static void hosts_gauges(struct dhcp_server *S)
{
	metric_set(S->m_hosts, (double)dhcp_hosts_count(S->hosts));
	metric_set(S->m_hosts_bytes, (double)dhcp_hosts_bytes(S->hosts));
}

/* Puts one Hardware; a refused interface is logged (and, when it comes
 * from a change rather than the start-up load, recorded as an event). */
static void hosts_put(struct dhcp_server *S, json_t *hw, bool event)
{
	char err[512];
	if (dhcp_hosts_put(S->hosts, hw, err, sizeof(err)) != -EINVAL)
		return;
	const json_t *meta = json_object_get(hw, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	log_write(LOG_LVL_WARN, "dhcp", LOG_FIELDS({ "HARDWARE", name }),
		  "hardware %s/%s: an interface is not served by DHCP: %s", ns ? ns : "",
		  name ? name : "", err);
	if (event && ns && name)
		store_event(S->store, STORE_KIND_HARDWARE, ns, name, "Warning", "DHCPNotServed",
			    "not served by DHCP: %s", err);
}

static int load_one(const char *text, size_t len, void *userdata)
{
	struct dhcp_server *S = userdata;
	json_t *hw = json_loadb(text, len, 0, NULL);
	if (hw)
		hosts_put(S, hw, false);
	json_decref(hw);
	return 0;
}

static int hosts_load(struct dhcp_server *S)
{
	uint64_t t0 = now_mono_ns();
	int e;

	dhcp_hosts_clear(S->hosts);
	e = store_each(S->reader, STORE_KIND_HARDWARE, load_one, S, &S->rv);
	hosts_gauges(S);
	if (e < 0)
		log_error("dhcp", "loading Hardware: %s", strerror(-e));
	else
		log_info("dhcp", "%zu Hardware interfaces loaded in %.0f ms (%zu KiB)",
			 dhcp_hosts_count(S->hosts), (double)(now_mono_ns() - t0) / 1e6,
			 dhcp_hosts_bytes(S->hosts) / 1024);
	return e;
}

/* Applies one page (DHCP_CHANGES_PAGE) of the Hardware changes committed
 * since S->rv, and sets S->sync_more when there may be more: the loop
 * calls again after the datagrams waiting, so that a bulk apply of
 * 100,000 Hardware does not hold packets for seconds. */
static void hosts_sync(struct dhcp_server *S)
{
	json_t *changes = NULL, *ch;
	uint64_t last = S->rv;
	size_t i;
	int e;

	S->sync_more = false;
	e = store_changes(S->reader, S->rv, STORE_KIND_HARDWARE, NULL, DHCP_CHANGES_PAGE,
			  &changes, &last);
	if (e == -ETIME) {
		log_warn("dhcp", "Hardware changes were dropped by retention before they were "
				 "read: reloading every Hardware");
		hosts_load(S);
		return;
	}
	if (e < 0) {
		log_error("dhcp", "reading Hardware changes: %s", strerror(-e));
		return;
	}
	json_array_foreach (changes, i, ch) {
		const char *type = json_string_value(json_object_get(ch, "type"));
		json_t *obj = json_object_get(ch, "object");
		if (type && strcmp(type, "DELETED") == 0) {
			const json_t *meta = json_object_get(obj, "metadata");
			dhcp_hosts_remove(S->hosts,
					  json_string_value(json_object_get(meta, "namespace")),
					  json_string_value(json_object_get(meta, "name")));
		} else if (obj) {
			hosts_put(S, obj, true);
		}
	}
	S->sync_more = json_array_size(changes) == DHCP_CHANGES_PAGE;
	json_decref(changes);
	S->rv = last;
	hosts_gauges(S);
}

/* ---- the leases on disk ---- */

static int mark_one(const struct store_lease *l, void *userdata)
{
	struct dhcp_server *S = userdata;
	struct dhcp_lease_mark m = { .starts = l->starts, .expires = l->expires };
	struct in_addr a;
	uint8_t mac[6];

	if (l->state != STORE_LEASE_BOUND || !dhcp_mac_parse(l->mac, strlen(l->mac), mac) ||
	    inet_pton(AF_INET, l->ip, &a) != 1)
		return 0;
	m.ip = ntohl(a.s_addr);
	return dhcp_leases_load(S->leases, mac, &m, dhcp_leases_owner(l->ns, l->name));
}

/* The bound leases in the store, as marks for lease reuse. */
static int leases_load(struct dhcp_server *S)
{
	uint64_t t0 = now_mono_ns();
	int e = store_leases_each(S->reader, mark_one, S);

	if (e < 0)
		log_error("dhcp", "loading leases: %s", strerror(-e));
	else
		log_info("dhcp", "%zu bound leases loaded in %.0f ms",
			 dhcp_leases_count(S->leases), (double)(now_mono_ns() - t0) / 1e6);
	return e;
}

/* ---- policy configuration per local address ---- */

static const struct dhcp_policy_config *policy_cfg(struct dhcp_server *S, uint32_t local_ip)
{
	/* A configured server address makes every interface's the same. */
	uint32_t key = S->c->dhcp.server_address ? 0 : local_ip;
	struct cfg_slot *sl;
	char err[256];

	for (size_t i = 0; i < DHCP_CFG_CACHE; i++) {
		sl = &S->cfgs[i];
		if (sl->used && sl->local_ip == key)
			return sl->error ? NULL : &sl->cfg;
	}
	sl = &S->cfgs[S->next_cfg++ % DHCP_CFG_CACHE];
	sl->used = true;
	sl->local_ip = key;
	sl->error = dhcp_policy_config_from(S->c, key, &sl->cfg, err, sizeof(err));
	if (sl->error) {
		char ip[16];
		dhcp_ip_str(key, ip);
		log_warn("dhcp", "requests to local address %s are not answered: %s", ip, err);
		return NULL;
	}
	return &sl->cfg;
}

/* ---- sending ---- */

/* Counts a reply sent (e == 0) or not. */
static void sent(struct dhcp_server *S, int e, uint32_t ip, enum dhcp_msg_type type,
		 uint64_t t_ns)
{
	if (e < 0) {
		char a[16];
		drop(S, DROP_SEND_FAILED);
		dhcp_ip_str(ip, a);
		if (rl_allow(&S->rl_misc))
			log_warn("dhcp", "sending a DHCP %s to %s: %s", dhcp_msg_type_name(type), a,
				 strerror(-e));
		return;
	}
	metric_inc(S->m_tx[type], 1);
	if (t_ns) {
		uint64_t now = now_real_ns();
		metric_observe(S->m_reply_seconds, now > t_ns ? (double)(now - t_ns) / 1e9 : 0);
	}
}

/* Sends the replies held this turn: one sendmmsg for each run of them on
 * the same socket, rather than a sendmsg each. */
static void tx_flush(struct dhcp_server *S)
{
	struct dhcp_tx tx[DHCP_TX_BATCH];

	for (size_t i = 0, j; i < S->ntxq; i = j) {
		for (j = i; j < S->ntxq && S->txq[j].sock == S->txq[i].sock; j++)
			tx[j - i] = S->txq[j].tx;
		dhcp_sock_send_many(S->txq[i].sock, tx, j - i);
		for (size_t k = i; k < j; k++)
			sent(S, tx[k - i].error, S->txq[k].to, S->txq[k].type, S->txq[k].t_ns);
	}
	S->ntxq = 0;
}

/* Sends (or holds, to go with the others of this turn), counts and logs a
 * reply. */
static void send_reply(struct dhcp_server *S, const struct target *t, const uint8_t *pkt,
		       size_t len, enum dhcp_msg_type type, uint64_t t_ns)
{
	struct dhcp_tx tx = { .data = pkt, .len = len, .ip = t->ip, .port = DHCP_CLIENT_PORT };
	enum dhcp_dest d = t->dest;

	if (d == DHCP_DEST_UNICAST && S->raw_fd >= 0 && t->ifindex && t->local_ip) {
		/* The packet socket, at once. */
		sent(S,
		     dhcp_raw_send(S->raw_fd, t->ifindex, t->chaddr, t->local_ip, t->ip, pkt, len),
		     t->ip, type, t_ns);
		return;
	}
	if (d == DHCP_DEST_UNICAST)
		d = DHCP_DEST_BROADCAST; /* without a packet socket, a broadcast reaches it too */
	switch (d) {
	case DHCP_DEST_RELAY: tx.port = DHCP_SERVER_PORT; break;
	case DHCP_DEST_CIADDR: break;
	case DHCP_DEST_SOURCE: tx.port = t->port; break;
	case DHCP_DEST_BROADCAST:
		tx.ip = 0xffffffffu;
		tx.ifindex = t->ifindex;
		tx.local_ip = t->local_ip;
		break;
	default: sent(S, -EINVAL, t->ip, type, t_ns); return;
	}
	if (S->ntxq == DHCP_TX_BATCH)
		tx_flush(S);
	struct queued *q = &S->txq[S->ntxq++];
	memcpy(q->pkt, pkt, len);
	tx.data = q->pkt;
	q->sock = t->sock;
	q->tx = tx;
	q->type = type;
	q->to = t->ip;
	q->t_ns = t_ns;
}

/* reused: the seconds left of a lease handed out again (lease reuse), or
 * 0. */
static void log_ack(const struct target *t, uint32_t yiaddr, uint32_t giaddr, const char *hw,
		    uint32_t reused)
{
	char mac[18], ip[16], via[16], left[48] = "";
	if (!log_enabled(LOG_LVL_INFO))
		return;
	mac_str(t->chaddr, mac);
	dhcp_ip_str(yiaddr, ip);
	dhcp_ip_str(giaddr, via);
	if (reused == UINT32_MAX)
		snprintf(left, sizeof(left), "; lease on disk reused, infinite");
	else if (reused)
		snprintf(left, sizeof(left), "; lease on disk reused, %u s left", reused);
	log_write(LOG_LVL_INFO, "dhcp",
		  LOG_FIELDS({ "MAC", mac }, { "IP", ip }, { "HARDWARE", hw },
			     { "VIA", giaddr ? via : NULL }, { "LEASE", reused ? "reused" : NULL }),
		  "ACK %s to %s (hardware %s%s)", ip, mac, hw, left);
}

/* ---- leases ---- */

static void lease_init(struct store_lease *l, const struct dhcp_host *h, const uint8_t mac[6],
		       uint32_t ip, enum store_lease_state st)
{
	memset(l, 0, sizeof(*l));
	mac_str(mac, l->mac);
	dhcp_ip_str(ip, l->ip);
	snprintf(l->ns, sizeof(l->ns), "%s", h->namespace_);
	snprintf(l->name, sizeof(l->name), "%s", h->name);
	l->state = st;
	l->starts = now_s();
}

/* Queues the write of l, for the client mac, with tag; the lease marks
 * (leases.c) hold its MAC's mark back until it completes, and, for a
 * bound write, every mark of its address ip (0 for another state). 0, or
 * a negative errno (counted and logged). */
static int lease_queue(struct dhcp_server *S, const struct store_lease *l, const uint8_t mac[6],
		       uint32_t ip, uint64_t tag)
{
	int e = dhcp_leases_queued(S->leases, mac, ip);

	if (e == 0 && (e = store_lease_put_async(S->store, l, S->cq, tag)) < 0)
		dhcp_leases_done(S->leases, mac, ip, NULL, 0);
	if (e < 0) {
		drop(S, e == -EAGAIN ? DROP_QUEUE_FULL : DROP_INTERNAL);
		if (e != -EAGAIN && rl_allow(&S->rl_misc))
			log_error("dhcp", "queueing the lease of %s (%s): %s", l->mac,
				  store_lease_state_name(l->state), strerror(-e));
	}
	return e;
}

/* Parks the ACK in S->tx and queues its lease. */
static void park_ack(struct dhcp_server *S, const struct target *t, size_t len, uint64_t t_ns)
{
	const struct dhcp_host *h = &S->host;
	struct store_lease l;
	struct parked *p;
	uint32_t slot;
	int e;

	if (!S->nfree) {
		drop(S, DROP_QUEUE_FULL);
		return;
	}
	slot = S->free_slots[S->nfree - 1];
	p = &S->parked[slot];
	lease_init(&l, h, t->chaddr, S->dec.yiaddr, STORE_LEASE_BOUND);
	l.expires = S->dec.lease_time == UINT32_MAX ? DHCP_INFINITE_EXPIRY :
						      l.starts + S->dec.lease_time;
	l.take_ip = true; /* the reservation says whose the address is */
	if ((e = lease_queue(S, &l, t->chaddr, S->dec.yiaddr, slot + 1)) < 0)
		return;
	S->nfree--;
	p->used = true;
	p->to = *t;
	p->t_ns = t_ns;
	p->yiaddr = S->dec.yiaddr;
	p->giaddr = S->req.giaddr;
	p->mark = (struct dhcp_lease_mark){ S->dec.yiaddr, l.starts, l.expires };
	p->owner = dhcp_leases_owner(h->namespace_, h->name);
	p->len = (uint16_t)len;
	snprintf(p->hw, sizeof(p->hw), "%s/%s", h->namespace_, h->name);
	memcpy(p->pkt, S->tx, len);
}

/* RELEASE and DECLINE from a client that has Hardware: recorded. */
static void record_release(struct dhcp_server *S, bool decline)
{
	const struct dhcp_host *h = &S->host;
	struct store_lease l;
	uint32_t ip = 0;
	char mac[18], ips[16];

	if (decline)
		dhcp_opt_ip(&S->req, DHCP_OPT_REQUESTED_IP, &ip);
	else
		ip = S->req.ciaddr;
	if (!ip)
		ip = h->ip;
	lease_init(&l, h, S->req.chaddr, ip, decline ? STORE_LEASE_DECLINED : STORE_LEASE_RELEASED);
	l.expires = l.starts + (decline ? (int64_t)(h->lease_time ? h->lease_time : S->c->dhcp.lease_time) :
					  DHCP_RELEASED_KEEP);
	mac_str(S->req.chaddr, mac);
	dhcp_ip_str(ip, ips);
	if (decline) {
		/* RFC 2131 §4.3.3: the client found the address in use. A
		 * reservation has no other address to offer: the operator must
		 * find the other user of it. */
		log_write(LOG_LVL_WARN, "dhcp",
			  LOG_FIELDS({ "MAC", mac }, { "IP", ips }, { "HARDWARE", h->name }),
			  "DECLINE of %s by %s (hardware %s/%s): the address is in use on the "
			  "network",
			  ips, mac, h->namespace_, h->name);
		store_event(S->store, STORE_KIND_HARDWARE, h->namespace_, h->name, "Warning",
			    "DHCPDecline",
			    "%s declined %s: another host on the network uses the address", mac,
			    ips);
	} else {
		log_write(LOG_LVL_INFO, "dhcp",
			  LOG_FIELDS({ "MAC", mac }, { "IP", ips }, { "HARDWARE", h->name }),
			  "RELEASE of %s by %s (hardware %s/%s)", ips, mac, h->namespace_, h->name);
	}
	lease_queue(S, &l, S->req.chaddr, 0, TAG_RELEASE | dhcp_map_mac_key(S->req.chaddr));
}

/* Results of the writer: send the ACKs whose lease is durable. */
static void drain(struct dhcp_server *S)
{
	struct store_done done[64];
	size_t n;

	while ((n = store_completion_drain(S->cq, done, 64)) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (done[i].tag == TAG_EXPIRE) {
				S->expiring = false;
				if (done[i].error < 0)
					log_warn("dhcp", "lease expiry: %s", done[i].message);
				metric_inc(S->m_leases_expired, done[i].count);
				if (done[i].count)
					log_debug("dhcp", "%llu leases expired",
						  (unsigned long long)done[i].count);
				continue;
			}
			if (done[i].error < 0) {
				drop(S, DROP_LEASE_FAILED);
				log_warn("dhcp", "lease not written%s: %s",
					 done[i].tag & TAG_RELEASE ? "" : ", no ACK sent",
					 done[i].message);
			} else {
				metric_inc(S->m_leases_committed, 1);
			}
			if (done[i].tag & TAG_RELEASE) {
				uint8_t mac[6];
				for (int k = 0; k < 6; k++)
					mac[k] = (uint8_t)(done[i].tag >> (40 - 8 * k));
				dhcp_leases_done(S->leases, mac, 0, NULL, 0);
				continue;
			}
			if (done[i].tag == 0 || done[i].tag > DHCP_INFLIGHT_MAX)
				continue;
			uint32_t slot = (uint32_t)(done[i].tag - 1);
			struct parked *p = &S->parked[slot];
			if (!p->used)
				continue;
			if (done[i].error == 0) {
				dhcp_leases_done(S->leases, p->to.chaddr, p->yiaddr, &p->mark,
						 p->owner);
				if (done[i].count)
					dhcp_leases_ip_taken(S->leases, p->yiaddr, p->to.chaddr);
				send_reply(S, &p->to, p->pkt, p->len, DHCP_ACK, p->t_ns);
				log_ack(&p->to, p->yiaddr, p->giaddr, p->hw, 0);
			} else {
				dhcp_leases_done(S->leases, p->to.chaddr, p->yiaddr, NULL, 0);
			}
			p->used = false;
			S->free_slots[S->nfree++] = slot;
		}
	}
}

/* ---- one request ---- */

static void log_unknown(struct dhcp_server *S, const struct dhcp_rx *rx)
{
	char mac[18], via[16];
	if (!rl_allow(&S->rl_unknown))
		return;
	mac_str(S->req.chaddr, mac);
	dhcp_ip_str(S->req.giaddr, via);
	log_write(LOG_LVL_INFO, "dhcp",
		  LOG_FIELDS({ "MAC", mac }, { "VIA", S->req.giaddr ? via : NULL }),
		  "%s from %s: no Hardware has this MAC", dhcp_msg_type_name(S->req.msg_type),
		  mac);
	(void)rx;
}

static void log_nak(struct dhcp_server *S, const struct dhcp_host *h)
{
	char mac[18], want[16];
	uint32_t ip = 0;
	if (dhcp_opt_ip(&S->req, DHCP_OPT_REQUESTED_IP, &ip) < 0)
		ip = S->req.ciaddr;
	mac_str(S->req.chaddr, mac);
	dhcp_ip_str(ip, want);
	log_write(LOG_LVL_INFO, "dhcp",
		  LOG_FIELDS({ "MAC", mac }, { "IP", want }, { "HARDWARE", h ? h->name : NULL },
			     { "REASON", S->dec.why }),
		  "NAK %s to %s (hardware %s%s%s): %s", want, mac, h ? h->namespace_ : "",
		  h ? "/" : "", h ? h->name : "none", S->dec.why);
}

/* A directly attached client whose reservation is on none of the subnets
 * of the interface it asked on: what the operator must fix (the cable,
 * the reservation, or an address of ours on that subnet). */
static void log_off_link(struct dhcp_server *S, const struct dhcp_host *h,
			 const struct dhcp_link *link, const char *ifname)
{
	char mac[18], ip[16], nets[256];
	if (!rl_allow(&S->rl_subnet))
		return;
	mac_str(S->req.chaddr, mac);
	dhcp_ip_str(h->ip, ip);
	dhcp_link_str(link, nets, sizeof(nets));
	log_write(LOG_LVL_WARN, "dhcp",
		  LOG_FIELDS({ "MAC", mac }, { "IP", ip }, { "HARDWARE", h->name },
			     { "INTERFACE", ifname[0] ? ifname : NULL }, { "REASON", S->dec.why }),
		  "%s from %s (hardware %s/%s) on %s: its address %s is on none of the "
		  "interface's subnets (%s); %s",
		  dhcp_msg_type_name(S->req.msg_type), mac, h->namespace_, h->name,
		  ifname[0] ? ifname : "an interface", ip, nets,
		  S->dec.type == DHCP_NAK ? "NAK sent" : "no reply");
}

static void handle(struct dhcp_server *S, const struct dhcp_sock *sock, const uint8_t *data,
		   const struct dhcp_rx *rx)
{
	const struct dhcp_policy_config *cfg;
	const struct dhcp_host *h = NULL;
	enum dhcp_bad bad = DHCP_OK;
	struct target t;
	int r, n;

	if (dhcp_parse(data, rx->len, &S->req, &bad) < 0) {
		drop(S, bad ? (int)bad : DROP_INTERNAL);
		log_debug("dhcp", "malformed datagram from %u.%u.%u.%u:%u: %s", rx->src_ip >> 24,
			  (rx->src_ip >> 16) & 255, (rx->src_ip >> 8) & 255, rx->src_ip & 255,
			  rx->src_port, dhcp_bad_reason_name(bad));
		return;
	}
	if (S->req.op != DHCP_BOOTREQUEST) {
		ignored(S, "not-a-request");
		return;
	}
	metric_inc(S->m_rx[S->req.msg_type], 1);
	if (S->req.htype == 1 && S->req.hlen == 6 &&
	    dhcp_hosts_lookup(S->hosts, S->req.chaddr, &S->host) == 0)
		h = &S->host;
	if (!(cfg = policy_cfg(S, rx->local_ip))) {
		drop(S, DROP_NO_ADDRESS);
		return;
	}
	/* A directly attached client: the subnets of its interface. */
	const struct dhcp_link *link = NULL;
	const char *ifname = "";
	if (S->links && h && !S->req.giaddr)
		link = dhcp_links_get(S->links, rx->ifindex, &ifname);
	r = dhcp_policy(&S->req, sock->port, h, link, cfg, &S->reply, &S->dec);
	if (r >= 0 && link &&
	    (strcmp(S->dec.why, "wrong-subnet") == 0 || strcmp(S->dec.why, "nak-wrong-subnet") == 0))
		log_off_link(S, h, link, ifname);
	if (r < 0) {
		drop(S, DROP_INTERNAL);
		if (rl_allow(&S->rl_misc))
			log_warn("dhcp", "no reply to a %s: %s (%s)",
				 dhcp_msg_type_name(S->req.msg_type), strerror(-r), S->dec.why);
		return;
	}
	if (r == 0) {
		ignored(S, S->dec.why);
		if (h && (strcmp(S->dec.why, "release") == 0 || strcmp(S->dec.why, "decline") == 0))
			record_release(S, S->dec.why[0] == 'd');
		else if (!h && strcmp(S->dec.why, "unknown-mac") == 0)
			log_unknown(S, rx);
		return;
	}
	/* The lease on disk, when it can be handed out again. */
	uint32_t reused = 0;
	if (h && cfg->lease_reuse && S->dec.lease_time && S->dec.yiaddr &&
	    (S->dec.type == DHCP_OFFER || S->dec.type == DHCP_ACK)) {
		const struct dhcp_lease_mark *m = dhcp_leases_get(
			S->leases, S->req.chaddr, dhcp_leases_owner(h->namespace_, h->name));
		if (dhcp_lease_reuse(m, cfg, now_s(), S->expired_by, &S->reply, &S->dec) == 1)
			reused = S->dec.lease_time;
	}
	n = dhcp_write(&S->reply, S->tx, sizeof(S->tx), NULL);
	if (n < 0) {
		drop(S, n == -EMSGSIZE ? DROP_REPLY_TOO_LARGE : DROP_INTERNAL);
		if (rl_allow(&S->rl_misc))
			log_warn("dhcp", "writing a %s: %s", dhcp_msg_type_name(S->dec.type),
				 strerror(-n));
		return;
	}
	t = (struct target){ .sock = sock,
			     .dest = S->dec.dest,
			     .ip = S->dec.dest_ip,
			     .ifindex = rx->ifindex,
			     .local_ip = rx->local_ip ? rx->local_ip : cfg->server_id };
	memcpy(t.chaddr, S->req.chaddr, 6);
	if (t.dest == DHCP_DEST_SOURCE) {
		t.ip = rx->src_ip;
		t.port = rx->src_port;
	}
	if (S->dec.type == DHCP_ACK && S->dec.lease_time && S->dec.yiaddr && h && !reused) {
		park_ack(S, &t, (size_t)n, rx->t_ns);
		return;
	}
	send_reply(S, &t, S->tx, (size_t)n, S->dec.type, rx->t_ns);
	if (S->dec.type == DHCP_NAK) {
		log_nak(S, h);
	} else if (S->dec.type == DHCP_ACK) {
		/* A lease reused; INFORM, or a proxy ACK: no lease. */
		char hw[sizeof(((struct parked *)0)->hw)];
		if (reused)
			metric_inc(S->m_leases_reused, 1);
		if (log_enabled(LOG_LVL_INFO)) {
			snprintf(hw, sizeof(hw), "%s%s%s", h ? h->namespace_ : "", h ? "/" : "",
				 h ? h->name : "none");
			log_ack(&t, S->dec.yiaddr, S->req.giaddr, hw, reused);
		}
	} else
		log_debug("dhcp", "%s to %02x:%02x:%02x:%02x:%02x:%02x (%s)",
			  dhcp_msg_type_name(S->dec.type), t.chaddr[0], t.chaddr[1], t.chaddr[2],
			  t.chaddr[3], t.chaddr[4], t.chaddr[5], S->dec.why);
}

/* Takes what the socket holds, a batch at a time, DHCP_RX_BURST at most
 * before the other sockets get their turn (epoll is level-triggered). */
static void read_socket(struct dhcp_server *S, const struct dhcp_sock *sock)
{
	struct dhcp_rx rx[DHCP_RX_BATCH];

	for (int done = 0; done < DHCP_RX_BURST;) {
		int n = dhcp_sock_recv(sock, S->rx, DHCP_RX_BATCH, rx);
		if (n == -EAGAIN)
			return;
		if (n < 0) {
			if (rl_allow(&S->rl_misc))
				log_warn("dhcp", "receiving on port %u: %s", sock->port,
					 strerror(-n));
			return;
		}
		for (int i = 0; i < n; i++) {
			if (rx[i].truncated || rx[i].len > DHCP_MAX_MESSAGE)
				drop(S, DROP_OVERSIZE);
			else
				handle(S, sock, S->rx[i], &rx[i]);
		}
		done += n;
		if (n < DHCP_RX_BATCH)
			return; /* the queue is empty: no need to ask again */
	}
}

/* ---- the thread ---- */

static void expire(struct dhcp_server *S)
{
	uint64_t n;
	if (read(S->timer_fd, &n, sizeof(n)) < 0)
		return;
	int64_t now = now_s();

	dhcp_leases_sweep(S->leases, now, DHCP_MARK_SWEEP);
	if (S->expiring)
		return;
	if (store_leases_expire_async(S->store, now, S->cq, TAG_EXPIRE) == 0) {
		S->expiring = true;
		if (now > S->expired_by)
			S->expired_by = now;
	}
}

static void loop(struct dhcp_server *S)
{
	struct epoll_event ev[16];
	uint64_t deadline = 0;

	for (;;) {
		/* More Hardware changes to read: look at the sockets, but do
		 * not sleep. */
		int timeout = S->sync_more && !S->stopping ? 0 : -1;
		if (S->stopping) {
			uint64_t now = now_mono_ns();
			if (store_completion_inflight(S->cq) == 0 || now >= deadline)
				break;
			timeout = (int)((deadline - now) / 1000000u) + 1;
		}
		int n = epoll_wait(S->ep, ev, 16, timeout);
		if (n < 0 && errno != EINTR) {
			log_error("dhcp", "epoll_wait: %s", strerror(errno));
			return;
		}
		for (int i = 0; i < n; i++) {
			uint32_t id = ev[i].data.u32;
			if (id == ID_DONE) {
				drain(S);
				tx_flush(S);
			} else if (S->stopping) {
				continue;
			} else if (id == ID_STOP) {
				S->stopping = true;
				deadline = now_mono_ns() + DHCP_STOP_WAIT_MS * 1000000ull;
			} else if (id == ID_CHANGES) {
				store_subscription_ack(S->sub);
				hosts_sync(S);
			} else if (id == ID_TIMER) {
				expire(S);
			} else if (id == ID_LINKS) {
				dhcp_links_changed(S->links);
			} else if (id < S->nsocks) {
				read_socket(S, &S->socks[id]);
				tx_flush(S); /* not behind the other events' work */
			}
		}
		/* Every reply of this turn, in as few calls as it takes. */
		tx_flush(S);
		if (S->sync_more && !S->stopping)
			hosts_sync(S);
	}
	if (store_completion_inflight(S->cq))
		log_warn("dhcp", "stopping with %u leases still being committed",
			 store_completion_inflight(S->cq));
}

static void *thread_main(void *arg)
{
	struct dhcp_server *S = arg;

	S->reader = store_reader_new(S->store);
	S->hosts = dhcp_hosts_new();
	S->leases = dhcp_leases_new();
	if (!S->reader || !S->hosts || !S->leases) {
		S->start_error = -ENOMEM;
		snprintf(S->start_msg, sizeof(S->start_msg), "DHCP: cannot open a store reader");
	} else if ((S->start_error = hosts_load(S)) < 0) {
		snprintf(S->start_msg, sizeof(S->start_msg), "DHCP: loading Hardware: %s",
			 strerror(-S->start_error));
	} else if ((S->start_error = leases_load(S)) < 0) {
		snprintf(S->start_msg, sizeof(S->start_msg), "DHCP: loading leases: %s",
			 strerror(-S->start_error));
	}
	sem_post(&S->ready);
	if (S->start_error == 0) {
		/* Changes committed while the table loaded are read now. */
		hosts_sync(S);
		loop(S);
	}
	dhcp_hosts_free(S->hosts);
	S->hosts = NULL;
	dhcp_leases_free(S->leases);
	S->leases = NULL;
	store_reader_free(S->reader);
	S->reader = NULL;
	return NULL;
}

static int ep_add(int ep, int fd, uint32_t id)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = id };
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int dhcp_server_new(struct store *store, const struct ib_config *cfg, struct dhcp_server **ret,
		    char *err, size_t errlen)
{
	struct dhcp_server *S = calloc(1, sizeof(*S));
	bool proxy = cfg->dhcp.mode != CONFIG_DHCP_RESERVATION;
	size_t nif = cfg->dhcp.interfaces.n;
	struct itimerspec its = { .it_interval = { DHCP_EXPIRE_INTERVAL, 0 },
				  .it_value = { DHCP_EXPIRE_INTERVAL, 0 } };
	int e = -ENOMEM;

	if (!S) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	S->store = store;
	S->c = cfg;
	S->raw_fd = S->ep = S->stop_fd = S->timer_fd = -1;
	S->parked = calloc(DHCP_INFLIGHT_MAX, sizeof(*S->parked));
	S->cq = store_completion_new(DHCP_INFLIGHT_MAX);
	if (!S->parked || !S->cq) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < DHCP_INFLIGHT_MAX; i++)
		S->free_slots[S->nfree++] = DHCP_INFLIGHT_MAX - 1 - i;
	for (size_t i = 0; i < (nif ? nif : 1); i++) {
		const char *ifname = nif ? cfg->dhcp.interfaces.name[i] : NULL;
		for (int k = 0; k < (proxy ? 2 : 1); k++) {
			uint16_t port = k ? DHCP_PROXY_PORT : DHCP_SERVER_PORT;
			S->socks[S->nsocks].fd = -1;
			if ((e = dhcp_sock_open(ifname, port, &S->socks[S->nsocks], err, errlen)) < 0)
				goto fail;
			S->nsocks++;
		}
	}
	S->raw_fd = dhcp_raw_open();
	if (S->raw_fd < 0)
		log_warn("dhcp", "no packet socket (%s): replies to clients without an address "
				 "will be broadcast",
			 strerror(-S->raw_fd));
	S->ep = epoll_create1(EPOLL_CLOEXEC);
	S->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	S->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	S->sub = store_subscribe(store, 1u << STORE_KIND_HARDWARE);
	if (S->ep < 0 || S->stop_fd < 0 || S->timer_fd < 0 || !S->sub ||
	    timerfd_settime(S->timer_fd, 0, &its, NULL) < 0) {
		e = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "DHCP: %s", strerror(-e));
		goto fail;
	}
	if (!proxy && cfg->dhcp.subnet_check && (e = dhcp_links_new(&S->links)) < 0) {
		snprintf(err, errlen, "DHCP: %s", strerror(-e));
		goto fail;
	}
	e = 0;
	for (size_t i = 0; i < S->nsocks && e == 0; i++)
		e = ep_add(S->ep, S->socks[i].fd, ID_SOCK + (uint32_t)i);
	if (e == 0)
		e = ep_add(S->ep, S->stop_fd, ID_STOP);
	if (e == 0)
		e = ep_add(S->ep, store_completion_fd(S->cq), ID_DONE);
	if (e == 0)
		e = ep_add(S->ep, store_subscription_fd(S->sub), ID_CHANGES);
	if (e == 0)
		e = ep_add(S->ep, S->timer_fd, ID_TIMER);
	if (e == 0 && dhcp_links_fd(S->links) >= 0)
		e = ep_add(S->ep, dhcp_links_fd(S->links), ID_LINKS);
	if (e < 0) {
		snprintf(err, errlen, "DHCP: epoll: %s", strerror(-e));
		goto fail;
	}
	metrics_register(S);
	sem_init(&S->ready, 0, 0);
	*ret = S;
	return 0;
fail:
	dhcp_server_free(S);
	return e < 0 ? e : -ENOMEM;
}

int dhcp_server_start(struct dhcp_server *S, char *err, size_t errlen)
{
	int e = pthread_create(&S->thread, NULL, thread_main, S);
	if (e) {
		snprintf(err, errlen, "DHCP: cannot start its thread: %s", strerror(e));
		return -e;
	}
	S->started = true;
	while (sem_wait(&S->ready) < 0 && errno == EINTR)
		;
	if (S->start_error) {
		snprintf(err, errlen, "%s", S->start_msg);
		return S->start_error;
	}
	return 0;
}

void dhcp_server_free(struct dhcp_server *S)
{
	if (!S)
		return;
	if (S->started) {
		uint64_t one = 1;
		if (write(S->stop_fd, &one, sizeof(one)) < 0)
			log_warn("dhcp", "stop: %s", strerror(errno));
		pthread_join(S->thread, NULL);
		sem_destroy(&S->ready);
	}
	for (size_t i = 0; i < S->nsocks; i++)
		dhcp_sock_close(&S->socks[i]);
	if (S->sub)
		store_unsubscribe(S->store, S->sub);
	/* Leases still in flight (the stop wait ran out) would be completed
	 * into a freed queue: leave it to the process's end. */
	if (store_completion_free(S->cq) == -EBUSY)
		log_warn("dhcp", "leases still in flight at stop: their completion queue is kept");
	if (S->raw_fd >= 0)
		close(S->raw_fd);
	if (S->ep >= 0)
		close(S->ep);
	if (S->stop_fd >= 0)
		close(S->stop_fd);
	if (S->timer_fd >= 0)
		close(S->timer_fd);
	dhcp_links_free(S->links);
	free(S->parked);
	free(S);
}
