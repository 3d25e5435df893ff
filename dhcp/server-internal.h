/* server-internal — the DHCP server's sockets (dhcp/sock.c), shared by the
 * files of the server shell only. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp.h"

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
