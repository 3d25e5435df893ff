/* server-acks — the DHCP server thread's writes and replies: the leases
 * queued to the store, the ACKs parked until their lease is on disk, and
 * the sending of every reply.
 *
 * DESIGN: an ACK that grants a lease is not sent until the lease is
 * durable, and the thread never waits for a commit: dhcp_srv_park_ack()
 * copies the ACK and its destination into one of DHCP_INFLIGHT_MAX slots
 * and queues the lease to the store's writer (store_lease_put_async) with
 * the slot as its tag; the writer commits all it has queued in one
 * transaction and wakes the completion queue, and dhcp_srv_drain() sends
 * the ACKs whose lease it committed, drops those it refused, and updates
 * the lease marks (dhcp/leases.c) with what is now on disk. A RELEASE or
 * DECLINE is queued the same way, tagged with its MAC, and has no reply.
 * Replies go out through the packet socket at once (a unicast to a client
 * with no address yet) or are held for one sendmmsg per socket at the end
 * of the loop's turn (dhcp_srv_tx_flush()). Runs on the server thread
 * only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "common/mac.h"
#include "common/ratelimit.h"
#include "dhcp/dhcp.h"
#include "dhcp/map.h"
#include "dhcp/server-internal.h"
#include "store/store.h"

#define DHCP_RELEASED_KEEP 3600 /* seconds a released lease stays listed */

/* ---- sending ---- */

/* Counts a reply sent (e == 0) or not. */
static void sent(struct dhcp_server *S, int e, uint32_t ip, enum dhcp_msg_type type,
		 uint64_t t_ns)
{
	if (e < 0) {
		char a[16];
		dhcp_srv_drop(S, DROP_SEND_FAILED);
		dhcp_ip_str(ip, a);
		if (dhcp_srv_rl_allow(&S->rl_misc))
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
void dhcp_srv_tx_flush(struct dhcp_server *S)
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
void dhcp_srv_send_reply(struct dhcp_server *S, const struct target *t, const uint8_t *pkt,
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
		dhcp_srv_tx_flush(S);
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
void dhcp_srv_log_ack(struct dhcp_server *S, const struct target *t, uint32_t yiaddr,
		      uint32_t giaddr, const char *hw, uint32_t reused)
{
	char mac[MAC_STR_SIZE], ip[16], via[16], left[48] = "";
	if (!log_enabled(LOG_LVL_INFO) || !dhcp_srv_rl_allow_ack(S))
		return;
	mac_format(t->chaddr, mac);
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
	mac_format(mac, l->mac);
	dhcp_ip_str(ip, l->ip);
	snprintf(l->ns, sizeof(l->ns), "%s", h->namespace_);
	snprintf(l->name, sizeof(l->name), "%s", h->name);
	l->state = st;
	l->starts = dhcp_srv_now_s();
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
		dhcp_srv_drop(S, e == -EAGAIN ? DROP_QUEUE_FULL : DROP_INTERNAL);
		if (e != -EAGAIN && dhcp_srv_rl_allow(&S->rl_misc))
			log_error("dhcp", "queueing the lease of %s (%s): %s", l->mac,
				  store_lease_state_name(l->state), strerror(-e));
	}
	return e;
}

/* Parks the ACK in S->tx and queues its lease. */
void dhcp_srv_park_ack(struct dhcp_server *S, const struct target *t, size_t len, uint64_t t_ns)
{
	const struct dhcp_host *h = &S->host;
	struct store_lease l;
	struct parked *p;
	uint32_t slot;
	int e;

	if (!S->nfree) {
		dhcp_srv_drop(S, DROP_QUEUE_FULL);
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
void dhcp_srv_record_release(struct dhcp_server *S, bool decline)
{
	const struct dhcp_host *h = &S->host;
	struct store_lease l;
	uint32_t ip = 0;
	char mac[MAC_STR_SIZE], ips[16];

	if (decline)
		dhcp_opt_ip(&S->req, DHCP_OPT_REQUESTED_IP, &ip);
	else
		ip = S->req.ciaddr;
	if (!ip)
		ip = h->ip;
	lease_init(&l, h, S->req.chaddr, ip, decline ? STORE_LEASE_DECLINED : STORE_LEASE_RELEASED);
	l.expires = l.starts +
		    (decline ? (int64_t)(h->lease_time ? h->lease_time : S->set.policy.lease_time) :
			       DHCP_RELEASED_KEEP);
	mac_format(S->req.chaddr, mac);
	dhcp_ip_str(ip, ips);
	if (decline) {
		/* RFC 2131 §4.3.3: the client found the address in use. A
		 * reservation has no other address to offer: the operator must
		 * find the other user of it. */
		if (dhcp_srv_rl_allow(&S->rl_release))
			log_write(
				LOG_LVL_WARN, "dhcp",
				LOG_FIELDS({ "MAC", mac }, { "IP", ips }, { "HARDWARE", h->name }),
				"DECLINE of %s by %s (hardware %s/%s): the address is in use on "
				"the network",
				ips, mac, h->namespace_, h->name);
		store_event(S->store, STORE_KIND_HARDWARE, h->namespace_, h->name, "Warning",
			    "DHCPDecline",
			    "%s declined %s: another host on the network uses the address", mac,
			    ips);
	} else if (dhcp_srv_rl_allow(&S->rl_release)) {
		log_write(LOG_LVL_INFO, "dhcp",
			  LOG_FIELDS({ "MAC", mac }, { "IP", ips }, { "HARDWARE", h->name }),
			  "RELEASE of %s by %s (hardware %s/%s)", ips, mac, h->namespace_, h->name);
	}
	lease_queue(S, &l, S->req.chaddr, 0, TAG_RELEASE | dhcp_map_mac_key(S->req.chaddr));
}

/* Results of the writer: send the ACKs whose lease is durable. */
void dhcp_srv_drain(struct dhcp_server *S)
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
			if ((done[i].tag & (TAG_RELEASE | TAG_BOOT)) == TAG_BOOT) {
				dhcp_srv_boot_done(S, &done[i]);
				continue;
			}
			if (done[i].error < 0) {
				dhcp_srv_drop(S, DROP_LEASE_FAILED);
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
				dhcp_srv_send_reply(S, &p->to, p->pkt, p->len, DHCP_ACK, p->t_ns);
				dhcp_srv_log_ack(S, &p->to, p->yiaddr, p->giaddr, p->hw, 0);
			} else {
				dhcp_leases_done(S->leases, p->to.chaddr, p->yiaddr, NULL, 0);
			}
			p->used = false;
			S->free_slots[S->nfree++] = slot;
		}
	}
}
