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
 * Logs: one line per ACK (info), through a token bucket wide enough for a
 * rack that boots at once (DHCP_LOG_ACK_BURST lines, then
 * DHCP_LOG_ACK_RATE a second: a flood of REQUESTs in a reserved MAC's name
 * is ACKed from the lease on disk at no other cost); per NAK (info),
 * DECLINE (warn), RELEASE (info), unknown client (info) and client whose
 * reservation is on none of its interface's subnets (link.c, warn), each
 * kind through its own bucket (common/ratelimit.h: DHCP_LOG_BURST lines,
 * then DHCP_LOG_RATE a second), since anyone on the link can send them in
 * a flood; the next line let through after some were held back is
 * preceded by how many. Malformed packets at debug (they are counted). Metrics:
 * see man/ironbelld.8, "DHCP".
 *
 * The thread's code is in four files, which share its state (struct
 * dhcp_server) through dhcp/server-internal.h: this one (the thread: its
 * creation and stop, the loop, the metrics, the expiry sweep),
 * dhcp/server-hosts.c (the reservation table's load and sync, the leases
 * on disk read at start), dhcp/server-acks.c (leases queued to the store,
 * parked ACKs, the writer's results, sending) and dhcp/server-rx.c (one
 * request, from the socket to its reply).
 */
#include "config.h"

#include <errno.h>
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
#include "common/ratelimit.h"
#include "dhcp/dhcp.h"
#include "dhcp/server-internal.h"
#include "store/store.h"

#define DHCP_EXPIRE_INTERVAL 1  /* seconds between lease expiry sweeps (each
				 * examines 500 leases: store.h) */
#define DHCP_STOP_WAIT_MS 5000  /* at stop, for the leases being committed */
#define DHCP_LOG_BURST 10       /* rate-limited log lines at once ... */
#define DHCP_LOG_RATE 1         /* ... then this many per second */
#define DHCP_LOG_ACK_BURST 500  /* ACK lines at once: a rack that boots together ... */
#define DHCP_LOG_ACK_RATE 50    /* ... then this many per second */
#define DHCP_MARK_SWEEP 1024  /* lease marks examined per expiry tick */

enum {
	ID_SOCK = 0, /* + socket index */
	ID_STOP = 1000,
	ID_DONE,
	ID_CHANGES,
	ID_TIMER,
	ID_LINKS,
};

static const char *const drop_names[DROP_MAX - DHCP_BAD_MAX] = {
	"oversize", "no_server_address", "internal", "lease_queue_full", "lease_write_failed",
	"send_failed", "reply_too_large",
};

/* ---- small helpers ---- */

int64_t dhcp_srv_now_s(void)
{
	return (int64_t)(now_real_ns() / 1000000000u);
}

/* True when one more line may be logged (after a line saying how many
 * were not, if some were not). */
bool dhcp_srv_rl_allow(struct ratelimit *rl)
{
	return ratelimit_log(rl, now_mono_ns(), DHCP_LOG_RATE, DHCP_LOG_BURST, "dhcp");
}

bool dhcp_srv_rl_allow_ack(struct dhcp_server *S)
{
	return ratelimit_log(&S->rl_ack, now_mono_ns(), DHCP_LOG_ACK_RATE, DHCP_LOG_ACK_BURST,
			     "dhcp");
}

void dhcp_srv_drop(struct dhcp_server *S, int reason)
{
	metric_inc(S->m_drop[reason], 1);
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

/* ---- the thread ---- */

static void expire(struct dhcp_server *S)
{
	uint64_t n;
	if (read(S->timer_fd, &n, sizeof(n)) < 0)
		return;
	int64_t now = dhcp_srv_now_s();

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
				dhcp_srv_drain(S);
				dhcp_srv_tx_flush(S);
			} else if (S->stopping) {
				continue;
			} else if (id == ID_STOP) {
				S->stopping = true;
				deadline = now_mono_ns() + DHCP_STOP_WAIT_MS * 1000000ull;
			} else if (id == ID_CHANGES) {
				store_subscription_ack(S->sub);
				dhcp_srv_hosts_sync(S);
			} else if (id == ID_TIMER) {
				expire(S);
			} else if (id == ID_LINKS) {
				dhcp_links_changed(S->links);
			} else if (id < S->nsocks) {
				dhcp_srv_read_socket(S, &S->socks[id]);
				dhcp_srv_tx_flush(S); /* not behind the other events' work */
			}
		}
		/* Every reply of this turn, in as few calls as it takes. */
		dhcp_srv_tx_flush(S);
		if (S->sync_more && !S->stopping)
			dhcp_srv_hosts_sync(S);
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
	} else if ((S->start_error = dhcp_srv_hosts_load(S)) < 0) {
		snprintf(S->start_msg, sizeof(S->start_msg), "DHCP: loading Hardware: %s",
			 strerror(-S->start_error));
	} else if ((S->start_error = dhcp_srv_leases_load(S)) < 0) {
		snprintf(S->start_msg, sizeof(S->start_msg), "DHCP: loading leases: %s",
			 strerror(-S->start_error));
	}
	sem_post(&S->ready);
	if (S->start_error == 0) {
		/* Changes committed while the table loaded are read now. */
		dhcp_srv_hosts_sync(S);
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

int dhcp_server_new(struct store *store, const struct dhcp_settings *settings,
		    struct dhcp_server **ret, char *err, size_t errlen)
{
	struct dhcp_server *S = calloc(1, sizeof(*S));
	bool proxy = settings->policy.mode != DHCP_MODE_RESERVATION;
	size_t nif = settings->ninterfaces;
	struct itimerspec its = { .it_interval = { DHCP_EXPIRE_INTERVAL, 0 },
				  .it_value = { DHCP_EXPIRE_INTERVAL, 0 } };
	int e = -ENOMEM;

	if (!S) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (nif > DHCP_SETTINGS_MAX_INTERFACES) {
		free(S);
		snprintf(err, errlen, "DHCP: more than %d interfaces", DHCP_SETTINGS_MAX_INTERFACES);
		return -EINVAL;
	}
	S->store = store;
	S->set = *settings;
	S->raw_fd = S->ep = S->stop_fd = S->timer_fd = -1;
	S->parked = calloc(DHCP_INFLIGHT_MAX, sizeof(*S->parked));
	S->cq = store_completion_new(DHCP_INFLIGHT_MAX + DHCP_BOOT_INFLIGHT);
	if (!S->parked || !S->cq) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < DHCP_INFLIGHT_MAX; i++)
		S->free_slots[S->nfree++] = DHCP_INFLIGHT_MAX - 1 - i;
	for (size_t i = 0; i < (nif ? nif : 1); i++) {
		const char *ifname = nif ? S->set.interfaces[i] : NULL;
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
	if (!proxy && S->set.subnet_check && (e = dhcp_links_new(&S->links)) < 0) {
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
