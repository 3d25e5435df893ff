/* server-internal — shared by the files of the server shell only: the
 * DHCP server's sockets (dhcp/sock.c), the subnets of each interface
 * (dhcp/link.c), and the server thread's state and the functions its four
 * files (dhcp/server.c, server-hosts.c, server-acks.c, server-rx.c) call
 * in one another. */
#pragma once

#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ratelimit.h"
#include "dhcp/dhcp.h"
#include "dhcp/dhcp-codec.h"
#include "store/store.h"

#define DHCP_SERVER_PORT 67
#define DHCP_CLIENT_PORT 68
#define DHCP_SOCK_RCVBUF (4 << 20) /* asked for; the kernel may cap it */

/* A UDP socket on port 67 or 4011, bound to one interface or to all. */
struct dhcp_sock {
	int fd;
	uint16_t port;
	int ifindex;       /* the bound interface, 0: all */
	char ifname[16];   /* "" when not bound */
};

/* Opens a non-blocking UDP socket on 0.0.0.0:port with broadcast, packet
 * info and receive timestamps on, bound to interface ifname (NULL: every
 * interface; binding needs CAP_NET_RAW). 0, or a negative errno with a
 * message naming the port and interface in err. */
int dhcp_sock_open(const char *ifname, uint16_t port, struct dhcp_sock *ret, char *err,
		   size_t errlen);
void dhcp_sock_close(struct dhcp_sock *s);

/* One received datagram. Addresses in host byte order. */
struct dhcp_rx {
	size_t len;
	uint32_t src_ip;   /* the sender */
	uint16_t src_port;
	int ifindex;       /* the interface it came in on */
	uint32_t local_ip; /* our address it was for (IP_PKTINFO's spec_dst):
			    * the interface's for a broadcast */
	uint64_t t_ns;     /* kernel receive time, CLOCK_REALTIME ns (0: none) */
	bool truncated;    /* longer than the buffer: dropped */
};

#define DHCP_RX_BATCH 16 /* datagrams taken by one dhcp_sock_recv */

/* Receives the datagrams waiting, at most n (<= DHCP_RX_BATCH), with one
 * recvmmsg: datagram i into bufs[i] (cap bytes each) and its details into
 * ret[i] (a datagram longer than cap is marked truncated). Returns how
 * many, -EAGAIN when none is waiting, or another negative errno. */
int dhcp_sock_recv(const struct dhcp_sock *s, uint8_t (*bufs)[DHCP_MAX_MESSAGE + 1], size_t n,
		   struct dhcp_rx *ret);

/* Sends len bytes to ip:port from s. ifindex (when not 0) and local_ip
 * choose the interface and source address through IP_PKTINFO: what a
 * broadcast to 255.255.255.255 needs to leave by the interface the request
 * came in on. 0 or a negative errno. */
int dhcp_sock_send(const struct dhcp_sock *s, const void *data, size_t len, uint32_t ip,
		   uint16_t port, int ifindex, uint32_t local_ip);

/* One datagram of a batch for dhcp_sock_send_many(): as dhcp_sock_send()'s
 * arguments, and its outcome. */
struct dhcp_tx {
	const void *data;
	size_t len;
	uint32_t ip;
	uint16_t port;
	int ifindex;
	uint32_t local_ip;
	int error; /* out: 0 sent, or a negative errno */
};

#define DHCP_TX_BATCH 32 /* replies held for one sendmmsg */

/* Sends n (<= DHCP_TX_BATCH) datagrams on s with sendmmsg, as few calls as
 * it takes: one, unless one of them fails, which then fails alone. */
void dhcp_sock_send_many(const struct dhcp_sock *s, struct dhcp_tx *tx, size_t n);

/* A packet socket (AF_PACKET, SOCK_DGRAM) for unicast replies to clients
 * that have no address yet and cannot answer ARP (RFC 2131 §4.1): the
 * frame goes straight to the client's hardware address. The fd, or a
 * negative errno (-EPERM without CAP_NET_RAW). */
int dhcp_raw_open(void);

/* Builds an IPv4 + UDP datagram (no IP options, TTL 64, DF clear, both
 * checksums computed) around payload into out (cap bytes). Returns its
 * length, or -ENOSPC. */
int dhcp_build_udp4(uint8_t *out, size_t cap, uint32_t src_ip, uint32_t dst_ip, uint16_t sport,
		    uint16_t dport, const void *payload, size_t len);

/* Sends an IPv4/UDP datagram from local_ip:67 to dst_ip:68 at hardware
 * address mac on interface ifindex through the packet socket fd. 0 or a
 * negative errno. */
int dhcp_raw_send(int fd, int ifindex, const uint8_t mac[6], uint32_t local_ip, uint32_t dst_ip,
		  const void *payload, size_t len);

/* ---- the subnets of each interface (dhcp/link.c) ---- */

struct dhcp_link;
struct dhcp_links;

/* A table of every interface's IPv4 subnets, read with getifaddrs, and a
 * netlink socket (RTMGRP_IPV4_IFADDR) that says when an address came or
 * went. 0 or -ENOMEM; without netlink (refused), the table is read again
 * when it is DHCP_LINKS_MAX_AGE seconds old. */
#define DHCP_LINKS_MAX_AGE 10
int dhcp_links_new(struct dhcp_links **ret);
void dhcp_links_free(struct dhcp_links *l);
/* The netlink socket to watch for input, or -1. */
int dhcp_links_fd(const struct dhcp_links *l);
/* Its input: drained; the table is read again at the next lookup. */
void dhcp_links_changed(struct dhcp_links *l);
/* The subnets of interface ifindex (none, n = 0, when it has no IPv4
 * address or is not known) and its name ("" when not known), both valid
 * until the next call. */
const struct dhcp_link *dhcp_links_get(struct dhcp_links *l, int ifindex, const char **ret_name);
/* "a.b.c.d/n, ..." of link into out (cap bytes, truncated). */
void dhcp_link_str(const struct dhcp_link *link, char *out, size_t cap);

/* ---- the server thread (dhcp/server.c, server-hosts.c, server-acks.c,
 * server-rx.c) ---- */

struct metric;
struct store;
struct store_completion;
struct store_reader;
struct store_subscription;

#define DHCP_MAX_SOCKS (2 * DHCP_SETTINGS_MAX_INTERFACES)
#define DHCP_INFLIGHT_MAX 1024  /* leases being committed (ACKs parked) */
#define DHCP_CFG_CACHE 16       /* policy configurations, by local address */

/* Completion tags: 1..DHCP_INFLIGHT_MAX a parked ACK's slot + 1; a
 * RELEASE or DECLINE carries its MAC. */
#define TAG_EXPIRE UINT64_MAX
#define TAG_RELEASE (1ull << 62) /* | the MAC's 48 bits */
#define TAG_BOOT (1ull << 61)    /* | a boot observation's slot */

/* Boot observations being written at once (dhcp/server-boot.c). */
#define DHCP_BOOT_INFLIGHT 8

/* A boot observation being written: its op and what the op borrows. */
struct dhcp_boot_obs {
	bool used;
	uint8_t mac[6];
	char ns[DHCP_HOST_NAMESPACE_MAX + 1], name[DHCP_HOST_NAME_MAX + 1];
	struct store_op op;
	struct json_t *patch;
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

/* A reply held for the next sendmmsg on its socket (dhcp_srv_tx_flush). */
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

struct why_metric {
	const char *why;
	struct metric *m;
};

struct cfg_slot {
	bool used;
	uint32_t local_ip;
	int error; /* dhcp_settings_policy's */
	struct dhcp_policy_config cfg;
};

struct dhcp_server {
	struct store *store;
	struct dhcp_settings set; /* a copy */
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
	struct ratelimit rl_unknown, rl_misc, rl_subnet, rl_nak, rl_release, rl_ack;
	struct dhcp_links *links; /* NULL: no subnet check (dhcp.subnet_check, proxy) */
	uint8_t rx[DHCP_RX_BATCH][DHCP_MAX_MESSAGE + 1];
	uint8_t tx[DHCP_MAX_PACKET];
	struct queued txq[DHCP_TX_BATCH]; /* replies to send at the end of the turn */
	size_t ntxq;
	struct dhcp_packet req;
	struct dhcp_reply reply;
	struct dhcp_host host;
	struct dhcp_decision dec;
	struct dhcp_boot_obs boot[DHCP_BOOT_INFLIGHT];

	/* metrics */
	struct metric *m_rx[DHCP_MSG_TYPE_MAX], *m_tx[DHCP_MSG_TYPE_MAX];
	struct metric *m_drop[DROP_MAX];
	struct why_metric m_why[64];
	size_t nwhy;
	struct metric *m_reply_seconds, *m_hosts, *m_hosts_bytes, *m_leases_committed,
		*m_leases_expired, *m_leases_reused;
};

/* -- dhcp/server.c -- */

/* The wall clock, in seconds since the epoch. */
int64_t dhcp_srv_now_s(void);
/* True when one more line may be logged through the token bucket rl
 * (DHCP_LOG_BURST lines, then DHCP_LOG_RATE a second), after a line
 * saying how many were not, if some were not. */
bool dhcp_srv_rl_allow(struct ratelimit *rl);
/* The same for the ACK lines, through S->rl_ack (DHCP_LOG_ACK_BURST lines,
 * then DHCP_LOG_ACK_RATE a second). */
bool dhcp_srv_rl_allow_ack(struct dhcp_server *S);
/* Counts a datagram dropped for reason (an enum dhcp_bad, or a DROP_). */
void dhcp_srv_drop(struct dhcp_server *S, int reason);

/* -- dhcp/server-hosts.c: the reservation table, the leases on disk -- */

/* Loads every Hardware of the store into the (cleared) reservation table
 * and sets S->rv to the store's version it was read at. 0, or the store's
 * negative errno (logged). */
int dhcp_srv_hosts_load(struct dhcp_server *S);
/* Applies one page (DHCP_CHANGES_PAGE) of the Hardware changes committed
 * since S->rv, and sets S->sync_more when there may be more: the loop
 * calls again after the datagrams waiting. Reloads the whole table when
 * retention dropped changes before they were read. Errors are logged. */
void dhcp_srv_hosts_sync(struct dhcp_server *S);
/* Reads the bound leases of the store into S->leases, as marks for lease
 * reuse. 0, or a negative errno (logged). */
int dhcp_srv_leases_load(struct dhcp_server *S);

/* -- dhcp/server-acks.c: leases, parked ACKs, sending -- */

/* Sends the replies held this turn (S->txq): one sendmmsg for each run of
 * them on the same socket, counting each as sent or dropped. */
void dhcp_srv_tx_flush(struct dhcp_server *S);
/* Sends the reply pkt (len bytes, copied) of type to where t says:
 * through the packet socket at once, or held in S->txq for this turn's
 * dhcp_srv_tx_flush(). Counts it; t_ns is the request's receive time (0:
 * none) for the reply-time histogram. */
void dhcp_srv_send_reply(struct dhcp_server *S, const struct target *t, const uint8_t *pkt,
			 size_t len, enum dhcp_msg_type type, uint64_t t_ns);
/* Logs (info, through S's ACK bucket) the ACK of yiaddr to t's client, via
 * the relay giaddr (0: none), for the Hardware hw ("ns/name" or "none");
 * reused is the seconds left of a lease handed out again (lease reuse),
 * UINT32_MAX for an infinite one, or 0. */
void dhcp_srv_log_ack(struct dhcp_server *S, const struct target *t, uint32_t yiaddr,
		      uint32_t giaddr, const char *hw, uint32_t reused);
/* Parks the ACK that S->tx holds (len bytes, for the request S->req, the
 * decision S->dec and the Hardware S->host) in a free slot and queues its
 * lease to the store; dhcp_srv_drain() sends it once the lease is on
 * disk. With no slot free, or the lease refused by the queue, the ACK is
 * dropped (counted). */
void dhcp_srv_park_ack(struct dhcp_server *S, const struct target *t, size_t len, uint64_t t_ns);
/* Records the RELEASE (decline false) or DECLINE of S->req by the client
 * of the Hardware S->host: logs it, stores an event for a DECLINE, and
 * queues the lease's new state to the store. */
void dhcp_srv_record_release(struct dhcp_server *S, bool decline);
/* Takes the writer's results from S->cq: sends the parked ACKs whose lease
 * is on disk (and drops those whose lease was refused), updates the lease
 * marks, and ends the expiry sweep in flight. */
void dhcp_srv_drain(struct dhcp_server *S);

/* -- dhcp/server-boot.c: the closed loop -- */

/* After the policy decided on S->req from host h (NULL: none): when h's
 * Hardware waits for its boot to be seen, queues the observation ("disk"
 * or "netboot", from S->dec.boot) without waiting. */
void dhcp_srv_boot_seen(struct dhcp_server *S, const struct dhcp_host *h);
/* A result tagged TAG_BOOT: its slot freed. */
void dhcp_srv_boot_done(struct dhcp_server *S, const struct store_done *d);

/* -- dhcp/server-rx.c: one request -- */

/* Reads the datagrams waiting on sock, DHCP_RX_BURST at most (epoll is
 * level-triggered: the other sockets get their turn), and handles each:
 * parse, look up, decide, reply or park its ACK. */
void dhcp_srv_read_socket(struct dhcp_server *S, const struct dhcp_sock *sock);
