/* server-rx — one DHCP request on the server thread, from the socket to
 * its reply.
 *
 * DESIGN: dhcp_srv_read_socket() takes a batch of datagrams with one
 * recvmmsg, and handle() does, for each, what the thread does per packet:
 * parse (dhcp/codec.c), look the MAC up in the reservation table, take the
 * policy configuration of the local address the request was for (cached,
 * DHCP_CFG_CACHE of them), decide (dhcp/policy.c) with the subnets of the
 * client's interface (dhcp/link.c), offer again the lease on disk when
 * lease reuse allows, write the reply, and either send it
 * (dhcp/server-acks.c) or park it when it is an ACK whose lease must be
 * written first. A request answered with silence is counted by its reason.
 * The log lines of one request (an unknown client, a NAK, a client off its
 * subnets) are here, each through its own token bucket.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "common/mac.h"
#include "common/ratelimit.h"
#include "dhcp/dhcp.h"
#include "dhcp/server-internal.h"

#define DHCP_RX_BURST 64 /* datagrams read from one socket per wakeup */

/* ---- small helpers ---- */

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

/* ---- policy configuration per local address ---- */

static const struct dhcp_policy_config *policy_cfg(struct dhcp_server *S, uint32_t local_ip)
{
	/* A configured server address makes every interface's the same. */
	uint32_t key = S->set.policy.server_id ? 0 : local_ip;
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
	sl->error = dhcp_settings_policy(&S->set, key, &sl->cfg, err, sizeof(err));
	if (sl->error) {
		char ip[16];
		dhcp_ip_str(key, ip);
		log_warn("dhcp", "requests to local address %s are not answered: %s", ip, err);
		return NULL;
	}
	return &sl->cfg;
}

/* ---- one request ---- */

static void log_unknown(struct dhcp_server *S, const struct dhcp_rx *rx)
{
	char mac[MAC_STR_SIZE], via[16];
	if (!dhcp_srv_rl_allow(&S->rl_unknown))
		return;
	mac_format(S->req.chaddr, mac);
	dhcp_ip_str(S->req.giaddr, via);
	log_write(LOG_LVL_INFO, "dhcp",
		  LOG_FIELDS({ "MAC", mac }, { "VIA", S->req.giaddr ? via : NULL }),
		  "%s from %s: no Hardware has this MAC", dhcp_msg_type_name(S->req.msg_type),
		  mac);
	(void)rx;
}

static void log_nak(struct dhcp_server *S, const struct dhcp_host *h)
{
	char mac[MAC_STR_SIZE], want[16];
	uint32_t ip = 0;
	if (!dhcp_srv_rl_allow(&S->rl_nak))
		return;
	if (dhcp_opt_ip(&S->req, DHCP_OPT_REQUESTED_IP, &ip) < 0)
		ip = S->req.ciaddr;
	mac_format(S->req.chaddr, mac);
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
	char mac[MAC_STR_SIZE], ip[16], nets[256];
	if (!dhcp_srv_rl_allow(&S->rl_subnet))
		return;
	mac_format(S->req.chaddr, mac);
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
		dhcp_srv_drop(S, bad ? (int)bad : DROP_INTERNAL);
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
		dhcp_srv_drop(S, DROP_NO_ADDRESS);
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
		dhcp_srv_drop(S, DROP_INTERNAL);
		if (dhcp_srv_rl_allow(&S->rl_misc))
			log_warn("dhcp", "no reply to a %s: %s (%s)",
				 dhcp_msg_type_name(S->req.msg_type), strerror(-r), S->dec.why);
		return;
	}
	dhcp_srv_boot_seen(S, h);
	if (r == 0) {
		ignored(S, S->dec.why);
		if (h && (strcmp(S->dec.why, "release") == 0 || strcmp(S->dec.why, "decline") == 0))
			dhcp_srv_record_release(S, S->dec.why[0] == 'd');
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
		if (dhcp_lease_reuse(m, cfg, dhcp_srv_now_s(), S->expired_by, &S->reply, &S->dec) ==
		    1)
			reused = S->dec.lease_time;
	}
	n = dhcp_write(&S->reply, S->tx, sizeof(S->tx), NULL);
	if (n < 0) {
		dhcp_srv_drop(S, n == -EMSGSIZE ? DROP_REPLY_TOO_LARGE : DROP_INTERNAL);
		if (dhcp_srv_rl_allow(&S->rl_misc))
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
		dhcp_srv_park_ack(S, &t, (size_t)n, rx->t_ns);
		return;
	}
	dhcp_srv_send_reply(S, &t, S->tx, (size_t)n, S->dec.type, rx->t_ns);
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
			dhcp_srv_log_ack(S, &t, S->dec.yiaddr, S->req.giaddr, hw, reused);
		}
	} else if (log_enabled(LOG_LVL_DEBUG)) {
		char ms[MAC_STR_SIZE];
		mac_format(t.chaddr, ms);
		log_debug("dhcp", "%s to %s (%s)", dhcp_msg_type_name(S->dec.type), ms, S->dec.why);
	}
}

/* Takes what the socket holds, a batch at a time, DHCP_RX_BURST at most
 * before the other sockets get their turn (epoll is level-triggered). */
void dhcp_srv_read_socket(struct dhcp_server *S, const struct dhcp_sock *sock)
{
	struct dhcp_rx rx[DHCP_RX_BATCH];

	for (int done = 0; done < DHCP_RX_BURST;) {
		int n = dhcp_sock_recv(sock, S->rx, DHCP_RX_BATCH, rx);
		if (n == -EAGAIN)
			return;
		if (n < 0) {
			if (dhcp_srv_rl_allow(&S->rl_misc))
				log_warn("dhcp", "receiving on port %u: %s", sock->port,
					 strerror(-n));
			return;
		}
		for (int i = 0; i < n; i++) {
			if (rx[i].truncated || rx[i].len > DHCP_MAX_MESSAGE)
				dhcp_srv_drop(S, DROP_OVERSIZE);
			else
				handle(S, sock, S->rx[i], &rx[i]);
		}
		done += n;
		if (n < DHCP_RX_BATCH)
			return; /* the queue is empty: no need to ask again */
	}
}
