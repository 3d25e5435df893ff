/* sock — the DHCP server's sockets: UDP 67 (and 4011) per interface, and a
 * packet socket for replies to clients that have no address yet.
 *
 * DESIGN: every UDP socket is bound to 0.0.0.0:port, because a client
 * without an address broadcasts and the kernel delivers broadcasts only to
 * sockets bound to the wildcard address. When dhcp.interfaces names
 * interfaces, there is one such socket per interface, each tied to its
 * interface with SO_BINDTODEVICE (so a request from an interface we do not
 * serve never reaches us) and sharing the port through SO_REUSEADDR; with
 * no list, one socket serves every interface. IP_PKTINFO tells, for each
 * datagram, the interface it came in on and the local address it was for
 * (for a broadcast, the interface's own address): that address is the
 * server identifier when none is configured, and the interface is where a
 * broadcast reply must leave (sendmsg with IP_PKTINFO). SO_TIMESTAMPNS
 * gives the kernel's receive time, so the reply-latency histogram includes
 * the time a request waited in the socket's queue.
 *
 * RFC 2131 §4.1: a reply to a client that has no address, and did not set
 * the broadcast bit, goes unicast to yiaddr at chaddr. The client cannot
 * answer ARP yet, so the kernel's ARP would fail; dnsmasq adds an ARP
 * entry (CAP_NET_ADMIN), we send the frame ourselves through a packet
 * socket (CAP_NET_RAW, which the unit already grants for SO_BINDTODEVICE),
 * with an IPv4 and UDP header built here.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dhcp/server-internal.h"

static int fail(char *err, size_t errlen, int e, const char *what, const struct dhcp_sock *s)
{
	snprintf(err, errlen, "DHCP port %u%s%s: %s: %s", s->port, s->ifname[0] ? " on " : "",
		 s->ifname, what, strerror(-e));
	return e;
}

int dhcp_sock_open(const char *ifname, uint16_t port, struct dhcp_sock *ret, char *err,
		   size_t errlen)
{
	struct dhcp_sock s = { .fd = -1, .port = port };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, rcvbuf = DHCP_SOCK_RCVBUF, e;

	if (ifname) {
		if (strlen(ifname) >= sizeof(s.ifname))
			return fail(err, errlen, -ENAMETOOLONG, "interface name", &s);
		snprintf(s.ifname, sizeof(s.ifname), "%s", ifname);
		s.ifindex = (int)if_nametoindex(ifname);
		if (!s.ifindex)
			return fail(err, errlen, -ENODEV, "no such interface", &s);
	}
	s.fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s.fd < 0)
		return fail(err, errlen, -errno, "socket", &s);
	if (setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(s.fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0 ||
	    setsockopt(s.fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0 ||
	    setsockopt(s.fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0) {
		e = fail(err, errlen, -errno, "setsockopt", &s);
		goto out;
	}
	/* A burst must not overflow the queue while the thread is busy: ask
	 * for more than net.core.rmem_max allows when we may (CAP_NET_ADMIN),
	 * else take what it allows. */
	if (setsockopt(s.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		(void)setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (ifname &&
	    setsockopt(s.fd, SOL_SOCKET, SO_BINDTODEVICE, s.ifname, (socklen_t)strlen(s.ifname)) <
		    0) {
		e = fail(err, errlen, -errno, "SO_BINDTODEVICE (needs CAP_NET_RAW)", &s);
		goto out;
	}
	if (bind(s.fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		e = fail(err, errlen, -errno, "bind", &s);
		goto out;
	}
	*ret = s;
	return 0;
out:
	close(s.fd);
	return e;
}

void dhcp_sock_close(struct dhcp_sock *s)
{
	if (s && s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
}

/* The details of one received message, from its address and control
 * messages. */
static void rx_fill(const struct dhcp_sock *s, struct msghdr *msg, size_t len,
		    struct dhcp_rx *ret)
{
	const struct sockaddr_in *src = msg->msg_name;

	*ret = (struct dhcp_rx){ .len = len,
				 .src_ip = ntohl(src->sin_addr.s_addr),
				 .src_port = ntohs(src->sin_port),
				 .ifindex = s->ifindex,
				 .truncated = (msg->msg_flags & MSG_TRUNC) != 0 };
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			ret->ifindex = pi.ipi_ifindex;
			ret->local_ip = ntohl(pi.ipi_spec_dst.s_addr);
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			ret->t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
	}
}

int dhcp_sock_recv(const struct dhcp_sock *s, uint8_t (*bufs)[DHCP_MAX_MESSAGE + 1], size_t n,
		   struct dhcp_rx *ret)
{
	struct sockaddr_in src[DHCP_RX_BATCH];
	struct iovec iov[DHCP_RX_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo)) + CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl[DHCP_RX_BATCH];
	struct mmsghdr m[DHCP_RX_BATCH];
	int got;

	if (n > DHCP_RX_BATCH)
		n = DHCP_RX_BATCH;
	for (size_t i = 0; i < n; i++) {
		iov[i] = (struct iovec){ bufs[i], DHCP_MAX_MESSAGE + 1 };
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &src[i],
						      .msg_namelen = sizeof(src[i]),
						      .msg_iov = &iov[i],
						      .msg_iovlen = 1,
						      .msg_control = ctl[i].buf,
						      .msg_controllen = sizeof(ctl[i].buf) } };
	}
	got = recvmmsg(s->fd, m, (unsigned)n, MSG_DONTWAIT, NULL);
	if (got < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (int i = 0; i < got; i++)
		rx_fill(s, &m[i].msg_hdr, m[i].msg_len, &ret[i]);
	return got;
}

union pktinfo_cmsg {
	char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct cmsghdr align;
};

/* msg for one datagram to ip:port, from local_ip on ifindex when ifindex
 * is set; dst, iov and ctl are the caller's, and outlive msg's use. */
static void tx_msg(struct msghdr *msg, struct sockaddr_in *dst, struct iovec *iov,
		   union pktinfo_cmsg *ctl, const void *data, size_t len, uint32_t ip,
		   uint16_t port, int ifindex, uint32_t local_ip)
{
	*dst = (struct sockaddr_in){ .sin_family = AF_INET,
				     .sin_port = htons(port),
				     .sin_addr.s_addr = htonl(ip) };
	*iov = (struct iovec){ (void *)data, len };
	*msg = (struct msghdr){ .msg_name = dst,
				.msg_namelen = sizeof(*dst),
				.msg_iov = iov,
				.msg_iovlen = 1 };
	if (ifindex) {
		struct in_pktinfo pi = { .ipi_ifindex = ifindex,
					 .ipi_spec_dst.s_addr = htonl(local_ip) };
		memset(ctl, 0, sizeof(*ctl));
		msg->msg_control = ctl->buf;
		msg->msg_controllen = sizeof(ctl->buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(msg);
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	}
}

void dhcp_sock_send_many(const struct dhcp_sock *s, struct dhcp_tx *tx, size_t n)
{
	struct sockaddr_in dst[DHCP_TX_BATCH];
	struct iovec iov[DHCP_TX_BATCH];
	union pktinfo_cmsg ctl[DHCP_TX_BATCH];
	struct mmsghdr m[DHCP_TX_BATCH];

	if (n > DHCP_TX_BATCH)
		n = DHCP_TX_BATCH;
	for (size_t i = 0; i < n; i++) {
		tx_msg(&m[i].msg_hdr, &dst[i], &iov[i], &ctl[i], tx[i].data, tx[i].len, tx[i].ip,
		       tx[i].port, tx[i].ifindex, tx[i].local_ip);
		m[i].msg_len = 0;
		tx[i].error = 0;
	}
	/* sendmmsg stops at the first datagram it cannot send and returns
	 * how many went; called again from there, it fails with that one's
	 * error. Each turn sends at least one or fails one: bounded by n. */
	for (size_t i = 0; i < n;) {
		int r = sendmmsg(s->fd, m + i, (unsigned)(n - i), MSG_DONTWAIT);
		if (r <= 0)
			tx[i++].error = r < 0 ? -errno : -EAGAIN;
		else
			i += (size_t)r;
	}
}

int dhcp_sock_send(const struct dhcp_sock *s, const void *data, size_t len, uint32_t ip,
		   uint16_t port, int ifindex, uint32_t local_ip)
{
	struct dhcp_tx tx = { .data = data,
			      .len = len,
			      .ip = ip,
			      .port = port,
			      .ifindex = ifindex,
			      .local_ip = local_ip };

	dhcp_sock_send_many(s, &tx, 1);
	return tx.error;
}

int dhcp_raw_open(void)
{
	/* Protocol 0: this socket only sends; it receives nothing. */
	int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return fd < 0 ? -errno : fd;
}

/* The Internet checksum (RFC 1071) of n bytes, folded, continuing sum. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	for (; n > 1; p += 2, n -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (n)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

int dhcp_build_udp4(uint8_t *out, size_t cap, uint32_t src_ip, uint32_t dst_ip, uint16_t sport,
		    uint16_t dport, const void *payload, size_t len)
{
	size_t total = 20 + 8 + len;
	uint8_t *ip = out, *udp = out + 20;
	uint32_t sum;
	uint16_t c;

	if (total > cap || total > 0xffff)
		return -ENOSPC;
	memset(out, 0, 28);
	ip[0] = 0x45; /* version 4, 5 words of header */
	put16(ip + 2, (uint16_t)total);
	ip[8] = 64;          /* TTL */
	ip[9] = IPPROTO_UDP; /* 17 */
	put32(ip + 12, src_ip);
	put32(ip + 16, dst_ip);
	put16(ip + 10, csum_fold(csum_add(0, ip, 20)));

	put16(udp, sport);
	put16(udp + 2, dport);
	put16(udp + 4, (uint16_t)(8 + len));
	memcpy(udp + 8, payload, len);
	/* RFC 768: the pseudo-header (addresses, protocol, UDP length),
	 * then the header and data; a computed 0 goes out as 0xffff. */
	sum = csum_add(0, ip + 12, 8);
	sum += IPPROTO_UDP + (uint32_t)(8 + len);
	sum = csum_add(sum, udp, 8 + len);
	c = csum_fold(sum);
	put16(udp + 6, c ? c : 0xffff);
	return (int)total;
}

int dhcp_raw_send(int fd, int ifindex, const uint8_t mac[6], uint32_t local_ip, uint32_t dst_ip,
		  const void *payload, size_t len)
{
	uint8_t frame[20 + 8 + 4096];
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_IP),
				  .sll_ifindex = ifindex,
				  .sll_halen = 6 };
	int n = dhcp_build_udp4(frame, sizeof(frame), local_ip, dst_ip, DHCP_SERVER_PORT,
				DHCP_CLIENT_PORT, payload, len);

	if (n < 0)
		return n;
	memcpy(ll.sll_addr, mac, 6);
	if (sendto(fd, frame, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		return -errno;
	return 0;
}
