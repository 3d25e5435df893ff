/* server — the TFTP server thread: one listening socket, one socket per
 * transfer, one epoll loop, one timer.
 *
 * DESIGN. A read request on tftp.listen is parsed and checked (write
 * requests, the mail mode and names that leave the root are refused with
 * a TFTP error and a log line), the file is opened beneath the root, and
 * a transfer gets its own UDP socket bound to the address the request came
 * in on (IP_PKTINFO) with a new port, connected to the client (RFC 1350
 * §4: the transfer identifiers), so the kernel drops stray packets from
 * anyone else. Its block size is also clamped to the path MTU (IP_MTU of
 * the connected socket), so no block is fragmented.
 *
 * Sending follows RFC 7440: a window of windowsize blocks goes out, the
 * client acknowledges the last one it received in order; an ACK inside
 * the window restarts from the block after it. Block numbers are 16 bits
 * on the wire and wrap past 65535; the transfer counts them in 64 bits and
 * maps each ACK into the window sent. A duplicate ACK of a block already
 * acknowledged is ignored (the Sorcerer's Apprentice bug: answering it
 * doubles every packet from then on); only the timer resends, after the
 * negotiated timeout, doubling at each try, tftp.retries times at most.
 *
 * The retransmission timeout adapts to the measured round trip as TCP's
 * does (RFC 6298), from tftp.timeout down to TFTP_RTO_MIN_MS: on a lossy
 * path a lost block then costs a few round trips, not a second. A client
 * that negotiates "timeout" gets exactly its value. A repeated request from
 * the same client port is ignored while its transfer runs.
 *
 * The timer is one timerfd ticking every TFTP_TICK_MS while transfers are
 * open; each tick scans them for expired deadlines (tftp.max_transfers
 * bounds the scan). Files in octet mode are read with pread per block;
 * netascii files are converted block by block as they are read
 * (tftp/netascii.c), so a transfer never holds its file in memory, however
 * many a spoofed flood of requests opens; their converted size (for tsize
 * and the last block) is counted once at the request, over at most
 * TFTP_NETASCII_MAX bytes.
 *
 * A refused request costs its sender one datagram, so the log lines about
 * refusals (a bad name, a missing file, a write, too many transfers) go
 * through a token bucket (common/ratelimit.h: TFTP_LOG_BURST lines, then
 * TFTP_LOG_RATE a second); the next one let through after some were held
 * back is preceded by how many. The TFTP error is sent and counted
 * whatever the log does.
 *
 * Nothing here is shared with other threads but the metrics (atomic).
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
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/common.h"
#include "common/net.h"
#include "common/ratelimit.h"
#include "tftp/tftp-internal.h"
#include "tftp/tftp.h"

#define TFTP_TICK_MS 10
#define TFTP_RTO_MIN_MS 50     /* the shortest adaptive retransmission timeout */
#define TFTP_BACKOFF_MAX_S 30  /* the longest wait between retransmissions */
#define TFTP_RECV_BATCH 32     /* requests read per wakeup of the listening socket */
#define TFTP_EVENTS 64
#define TFTP_LOG_BURST 10 /* log lines about refusals at once ... */
#define TFTP_LOG_RATE 1   /* ... then this many per second */

enum outcome {
	OUT_OK,
	OUT_NOT_FOUND,
	OUT_REFUSED,
	OUT_BUSY,
	OUT_TIMEOUT,
	OUT_CLIENT_ERROR,
	OUT_ERROR,
	OUT_SIZE_ONLY,
	OUT_MAX
};
static const char *const outcome_names[OUT_MAX] = {
	"ok", "not_found", "refused", "busy", "timeout", "client_error", "error", "size_only",
};

struct transfer {
	struct transfer *prev, *next_t;
	int fd;        /* the connected socket */
	int file_fd;
	bool netascii;
	struct tftp_netascii_file na; /* netascii mode: where the blocks start */
	uint64_t size; /* bytes to send (after netascii conversion) */
	struct tftp_granted g;
	unsigned blksize, window;
	uint64_t nblocks; /* size / blksize + 1: the last one is short */
	uint64_t acked;   /* the highest block acknowledged, 0 for none */
	uint64_t next;    /* the next block to send */
	uint64_t restarted_at; /* the block a duplicate ACK last made us resend from */
	bool oack_pending;
	unsigned tries;        /* retransmissions since the last progress */
	uint64_t sent_ns;      /* when the current window first went out */
	uint64_t progress_ns;  /* the last ACK that moved the transfer on */
	uint64_t srtt_ns, rttvar_ns; /* smoothed round trip (RFC 6298), 0: none yet */
	uint64_t rto_ns;       /* the timeout before a retransmission, backoff aside */
	uint64_t deadline_ns;  /* monotonic */
	uint64_t start_ns;
	uint64_t retransmits, bytes;
	struct sockaddr_in peer;
	char client[INET_ADDRSTRLEN + 8];
	char name[TFTP_FILENAME_MAX + 1];
};

struct tftp_server {
	struct tftp_settings set; /* a copy; its strings are ours */
	int lfd, efd, tfd, stop_fd, root_fd;
	pthread_t thread;
	bool started;
	struct transfer *list;
	unsigned ntransfers;
	bool ticking;
	struct ratelimit rl_refused; /* log lines about refused requests */
	uint8_t buf[TFTP_PACKET_MAX];
	uint8_t in[TFTP_BLKSIZE_MAX]; /* the file's bytes read for netascii */
	struct metric *m_req[2], *m_out[OUT_MAX], *m_bytes, *m_retrans, *m_active;
	struct metric *m_opt[4], *m_drop[TFTP_BAD_MAX];
};

/* ---- metrics ---- */

static void metrics_init(struct tftp_server *s)
{
	char l[64];
	s->m_req[0] = metrics_counter("ironbell_tftp_requests_total",
				      "TFTP requests received, by operation.", "op=\"rrq\"");
	s->m_req[1] = metrics_counter("ironbell_tftp_requests_total",
				      "TFTP requests received, by operation.", "op=\"wrq\"");
	for (int o = 0; o < OUT_MAX; o++) {
		snprintf(l, sizeof(l), "outcome=\"%s\"", outcome_names[o]);
		s->m_out[o] = metrics_counter("ironbell_tftp_transfers_total",
					      "TFTP requests, by how they ended.", l);
	}
	s->m_bytes = metrics_counter("ironbell_tftp_bytes_sent_total",
				     "File bytes sent in DATA packets (retransmissions included).",
				     NULL);
	s->m_retrans = metrics_counter("ironbell_tftp_retransmissions_total",
				       "DATA and OACK packets sent again after a timeout.", NULL);
	s->m_active = metrics_gauge("ironbell_tftp_transfers_active", "TFTP transfers open.", NULL);
	static const char *const opts[4] = { "blksize", "tsize", "timeout", "windowsize" };
	for (int i = 0; i < 4; i++) {
		snprintf(l, sizeof(l), "option=\"%s\"", opts[i]);
		s->m_opt[i] = metrics_counter("ironbell_tftp_options_total",
					      "Options granted in an OACK, by option.", l);
	}
	for (int b = 1; b < TFTP_BAD_MAX; b++) {
		snprintf(l, sizeof(l), "reason=\"%s\"", tftp_bad_name((enum tftp_bad)b));
		s->m_drop[b] = metrics_counter("ironbell_tftp_dropped_total",
					       "Malformed TFTP packets dropped, by reason.", l);
	}
}

/* ---- the timer ---- */

static void ticking(struct tftp_server *s, bool on)
{
	struct itimerspec its = { 0 };
	if (on == s->ticking)
		return;
	if (on) {
		its.it_interval.tv_nsec = TFTP_TICK_MS * 1000000L;
		its.it_value = its.it_interval;
	}
	if (timerfd_settime(s->tfd, 0, &its, NULL) == 0)
		s->ticking = on;
}

/* ---- transfers ---- */

/* True when a line about a refused request may be logged (after one
 * saying how many were not, if some were not). */
static bool refusal_logged(struct tftp_server *s)
{
	return ratelimit_log(&s->rl_refused, now_mono_ns(), TFTP_LOG_RATE, TFTP_LOG_BURST, "tftp");
}

static void transfer_end(struct tftp_server *s, struct transfer *t, enum outcome o,
			 const char *why)
{
	uint64_t ms = (now_mono_ns() - t->start_ns) / 1000000u;
	if (o == OUT_SIZE_ONLY)
		;
	else if (o == OUT_OK)
		log_info("tftp",
			 "sent %s to %s: %llu bytes in %llu blocks of %u, window %u, %llu "
			 "retransmissions, %llu ms",
			 t->name, t->client, (unsigned long long)t->size,
			 (unsigned long long)t->nblocks, t->blksize, t->window,
			 (unsigned long long)t->retransmits, (unsigned long long)ms);
	else if (o == OUT_CLIENT_ERROR)
		log_info("tftp", "%s stopped fetching %s after %llu of %llu blocks: %s", t->client,
			 t->name, (unsigned long long)t->acked, (unsigned long long)t->nblocks, why);
	else
		log_warn("tftp", "transfer of %s to %s failed after %llu of %llu blocks: %s",
			 t->name, t->client, (unsigned long long)t->acked,
			 (unsigned long long)t->nblocks, why);
	metric_inc(s->m_out[o], 1);
	epoll_ctl(s->efd, EPOLL_CTL_DEL, t->fd, NULL);
	close(t->fd);
	if (t->file_fd >= 0)
		close(t->file_fd);
	if (t->prev)
		t->prev->next_t = t->next_t;
	else
		s->list = t->next_t;
	if (t->next_t)
		t->next_t->prev = t->prev;
	free(t);
	s->ntransfers--;
	metric_set(s->m_active, s->ntransfers);
	if (!s->ntransfers)
		ticking(s, false);
}

/* Sends block k (1-based, absolute). false when sending failed. */
static bool send_block(struct tftp_server *s, struct transfer *t, uint64_t k)
{
	uint64_t off = (k - 1) * t->blksize;
	size_t len = off >= t->size ? 0 :
		     t->size - off < t->blksize ? (size_t)(t->size - off) :
						  t->blksize;
	size_t h = tftp_write_data_header(s->buf, sizeof(s->buf), (uint16_t)k);
	if (len) {
		if (t->netascii) {
			int e = tftp_netascii_block(&t->na, k, t->acked + 1, s->buf + h, len, s->in,
						    sizeof(s->in));
			if (e < 0) {
				errno = -e;
				return false;
			}
		} else {
			ssize_t got = pread(t->file_fd, s->buf + h, len, (off_t)off);
			if (got != (ssize_t)len)
				return false;
		}
	}
	if (send(t->fd, s->buf, h + len, 0) < 0 && errno != EAGAIN && errno != ECONNREFUSED)
		return false;
	t->bytes += len;
	metric_inc(s->m_bytes, len);
	return true;
}

static uint64_t backoff_ns(const struct transfer *t)
{
	uint64_t ns = t->rto_ns << (t->tries < 10 ? t->tries : 10);
	return ns > TFTP_BACKOFF_MAX_S * 1000000000ull ? TFTP_BACKOFF_MAX_S * 1000000000ull : ns;
}

/* How long a server retransmitting every tftp.timeout seconds, doubling,
 * tftp.retries times, would wait for an ACK before giving up. */
static uint64_t classic_ns(const struct tftp_server *s)
{
	uint64_t total = 0;
	for (unsigned k = 0; k < s->set.retries; k++) {
		uint64_t step = (uint64_t)s->set.timeout << (k < 10 ? k : 10);
		total += step > TFTP_BACKOFF_MAX_S ? TFTP_BACKOFF_MAX_S : step;
	}
	return total * 1000000000u;
}

/* A round-trip sample (from a window sent once to its ACK; Karn: never
 * from a retransmitted one) updates the timeout as TCP's does (RFC 6298),
 * between TFTP_RTO_MIN_MS and tftp.timeout. A client that negotiated
 * "timeout" (RFC 2349) gets exactly that instead. */
static void rtt_sample(struct tftp_server *s, struct transfer *t, uint64_t now)
{
	if (t->g.timeout || t->tries || !t->sent_ns || now < t->sent_ns)
		return;
	uint64_t r = now - t->sent_ns;
	if (!t->srtt_ns) {
		t->srtt_ns = r;
		t->rttvar_ns = r / 2;
	} else {
		uint64_t d = r > t->srtt_ns ? r - t->srtt_ns : t->srtt_ns - r;
		t->rttvar_ns = (3 * t->rttvar_ns + d) / 4;
		t->srtt_ns = (7 * t->srtt_ns + r) / 8;
	}
	uint64_t rto = t->srtt_ns + 4 * t->rttvar_ns;
	uint64_t lo = TFTP_RTO_MIN_MS * 1000000ull, hi = s->set.timeout * 1000000000ull;
	t->rto_ns = rto < lo ? lo : rto > hi ? hi : rto;
}

/* Sends from t->next to the end of the window, and arms the deadline. */
static bool send_window(struct tftp_server *s, struct transfer *t)
{
	uint64_t end = t->acked + t->window;
	t->sent_ns = now_mono_ns();
	if (end > t->nblocks)
		end = t->nblocks;
	for (; t->next <= end; t->next++)
		if (!send_block(s, t, t->next))
			return false;
	t->deadline_ns = now_mono_ns() + backoff_ns(t);
	return true;
}

static bool send_oack(struct tftp_server *s, struct transfer *t)
{
	size_t n = tftp_write_oack(s->buf, sizeof(s->buf), &t->g);
	t->sent_ns = now_mono_ns();
	t->deadline_ns = now_mono_ns() + backoff_ns(t);
	return n && (send(t->fd, s->buf, n, 0) >= 0 || errno == EAGAIN || errno == ECONNREFUSED);
}

static void on_ack(struct tftp_server *s, struct transfer *t, uint16_t b)
{
	if (t->oack_pending) {
		if (b != 0)
			return; /* not an answer to the OACK */
		rtt_sample(s, t, now_mono_ns());
		t->progress_ns = now_mono_ns();
		t->oack_pending = false;
		t->tries = 0;
		if (!send_window(s, t))
			transfer_end(s, t, OUT_ERROR, strerror(errno ? errno : EIO));
		return;
	}
	/* Which block of the window sent, (acked, next - 1], is b? */
	uint64_t abs = t->acked + (uint16_t)(b - (uint16_t)t->acked);
	if (abs == t->acked && t->window > 1 && t->next > t->acked + 1 &&
	    t->restarted_at != t->acked + 1) {
		/* RFC 7440 §4: in a window, the client acknowledges the last
		 * block it got in order when one is missing; here that is the
		 * block already acknowledged, so acked + 1 was lost. Resend
		 * from there, once per block: further duplicates wait for the
		 * timer, so a delayed ACK cannot double the traffic (the
		 * Sorcerer's Apprentice, below). */
		t->restarted_at = t->acked + 1;
		t->next = t->acked + 1;
		if (!send_window(s, t))
			transfer_end(s, t, OUT_ERROR, strerror(errno ? errno : EIO));
		return;
	}
	if (abs == t->acked || abs >= t->next)
		return; /* a duplicate, or not a block we sent: ignored */
	rtt_sample(s, t, now_mono_ns());
	t->progress_ns = now_mono_ns();
	t->acked = abs;
	t->tries = 0;
	if (t->acked == t->nblocks) {
		transfer_end(s, t, OUT_OK, NULL);
		return;
	}
	t->next = t->acked + 1; /* an ACK inside the window: resend from there */
	if (!send_window(s, t))
		transfer_end(s, t, OUT_ERROR, strerror(errno ? errno : EIO));
}

static void on_transfer_packet(struct tftp_server *s, struct transfer *t)
{
	for (int i = 0; i < TFTP_RECV_BATCH; i++) {
		ssize_t n = recv(t->fd, s->buf, sizeof(s->buf), 0);
		if (n < 0) {
			if (errno == ECONNREFUSED) {
				/* After the last block, a closed port is a client that
				 * got it and left; its final ACK was lost (RFC 1350
				 * §6 asks it to dally, few do). */
				if (t->next > t->nblocks && t->acked + 1 == t->nblocks) {
					t->acked = t->nblocks;
					transfer_end(s, t, OUT_OK, NULL);
				} else {
					transfer_end(s, t, OUT_CLIENT_ERROR, "the client's port is closed");
				}
				return;
			}
			return;
		}
		uint16_t op = tftp_opcode(s->buf, (size_t)n), block, code;
		enum tftp_bad why = TFTP_BAD_SHORT;
		const char *msg;
		size_t mlen;
		if (op == TFTP_ACK && tftp_parse_ack(s->buf, (size_t)n, &block, &why) == 0) {
			on_ack(s, t, block);
			return; /* t may be gone */
		}
		if (op == TFTP_ERROR &&
		    tftp_parse_error(s->buf, (size_t)n, &code, &msg, &mlen, &why) == 0) {
			char text[160]; /* the logger escapes control characters */
			if (code == TFTP_EOPTNEG && t->oack_pending && t->g.tsize) {
				/* UEFI firmware asks for the size first and ends that
				 * request once it has it (RFC 2347's error 8): not a
				 * failure. */
				log_debug("tftp", "%s asked only for the size of %s", t->client,
					  t->name);
				t->acked = t->nblocks; /* nothing more owed */
				transfer_end(s, t, OUT_SIZE_ONLY, NULL);
				return;
			}
			snprintf(text, sizeof(text), "it sent error %u \"%.*s\"", code,
				 (int)(mlen > 80 ? 80 : mlen), msg);
			transfer_end(s, t, OUT_CLIENT_ERROR, text);
			return;
		}
		metric_inc(s->m_drop[op == TFTP_ACK || op == TFTP_ERROR ? why : TFTP_BAD_OPCODE], 1);
	}
}

static void on_tick(struct tftp_server *s)
{
	uint64_t now = now_mono_ns(), x;
	if (read(s->tfd, &x, sizeof(x)) < 0 && errno != EAGAIN)
		log_debug("tftp", "timerfd: %s", strerror(errno));
	for (struct transfer *t = s->list, *n; t; t = n) {
		n = t->next_t;
		if (t->deadline_ns > now)
			continue;
		/* Given up after tftp.retries retransmissions, but never sooner
		 * than a server with the fixed tftp.timeout would: a client that
		 * only answers after its own (seconds-long) timeout must not
		 * lose its transfer to our quicker adaptive one. */
		if (t->tries >= s->set.retries && now - t->progress_ns >= classic_ns(s)) {
			transfer_end(s, t, OUT_TIMEOUT, "no acknowledgement after every retry");
			continue;
		}
		t->tries++;
		t->retransmits++;
		metric_inc(s->m_retrans, 1);
		bool ok;
		if (t->oack_pending) {
			ok = send_oack(s, t);
		} else {
			t->next = t->acked + 1;
			ok = send_window(s, t);
		}
		if (!ok)
			transfer_end(s, t, OUT_ERROR, strerror(errno ? errno : EIO));
	}
}

/* ---- requests ---- */

/* Answers the request's source with an error, from the listening socket. */
static void reply_error(struct tftp_server *s, const struct sockaddr_in *to, enum tftp_error code,
			const char *msg)
{
	uint8_t b[4 + TFTP_ERRMSG_MAX + 1];
	size_t n = tftp_write_error(b, sizeof(b), code, msg);
	if (n && sendto(s->lfd, b, n, 0, (const struct sockaddr *)to, sizeof(*to)) < 0)
		log_debug("tftp", "cannot send an error: %s", strerror(errno));
}

/* The largest block that fits the path to the client: IP_MTU of the
 * connected socket less the IPv4, UDP and TFTP headers. */
static unsigned path_blksize(int fd)
{
	int mtu = 0;
	socklen_t sl = sizeof(mtu);
	if (getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &sl) < 0 || mtu < 68)
		return TFTP_BLKSIZE_MAX;
	return (unsigned)mtu - 20 - 8 - 4;
}

/* A socket bound to local (port 0) and connected to peer. */
static int transfer_socket(const struct in_addr *local, const struct sockaddr_in *peer)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr = *local };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    connect(fd, (const struct sockaddr *)peer, sizeof(*peer)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static void start_transfer(struct tftp_server *s, const struct tftp_request *rq,
			   const struct sockaddr_in *peer, const struct in_addr *local,
			   const char *client)
{
	char clean[TFTP_FILENAME_MAX + 1];
	const char *shown = rq->filename; /* the logger escapes control characters */
	const char *opened = NULL;
	struct transfer *t = NULL;
	struct stat st;
	int ffd = -1, e;

	if (tftp_path_clean(rq->filename, clean, sizeof(clean)) < 0) {
		if (refusal_logged(s))
			log_warn("tftp", "refused \"%s\" to %s: not a name under the root", shown,
				 client);
		reply_error(s, peer, TFTP_EACCESS, "access violation: not a name under the root");
		metric_inc(s->m_out[OUT_REFUSED], 1);
		return;
	}
	e = tftp_open(s->root_fd, clean, &ffd, &st, &opened);
	if (e == -ENOENT) {
		if (refusal_logged(s))
			log_warn("tftp", "%s asked for \"%s\": no such file in %s", client, shown,
				 s->set.root);
		reply_error(s, peer, TFTP_ENOTFOUND, "file not found");
		metric_inc(s->m_out[OUT_NOT_FOUND], 1);
		return;
	}
	if (e < 0) {
		if (refusal_logged(s))
			log_warn("tftp", "refused \"%s\" to %s: %s", shown, client,
				 e == -EPERM ?
					 "a symbolic link root did not make, or outside the root" :
				 e == -EISDIR ? "not a regular file" :
						strerror(-e));
		reply_error(s, peer, TFTP_EACCESS, "access violation");
		metric_inc(s->m_out[OUT_REFUSED], 1);
		return;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->fd = -1;
	t->file_fd = ffd;
	t->size = (uint64_t)st.st_size;
	snprintf(t->client, sizeof(t->client), "%s", client);
	t->peer = *peer;
	snprintf(t->name, sizeof(t->name), "%s", opened);
	if (rq->mode == TFTP_MODE_NETASCII) {
		if (t->size > TFTP_NETASCII_MAX) {
			if (refusal_logged(s))
				log_warn("tftp",
					 "refused %s to %s in netascii mode: larger than %u bytes",
					 opened, client, TFTP_NETASCII_MAX);
			reply_error(s, peer, TFTP_EACCESS, "file too large for netascii; use octet");
			metric_inc(s->m_out[OUT_REFUSED], 1);
			goto drop;
		}
		e = tftp_netascii_size(ffd, t->size, s->in, sizeof(s->in), &t->size);
		if (e < 0) {
			errno = -e;
			goto fail;
		}
		t->netascii = true;
	}
	e = transfer_socket(local, peer);
	if (e < 0) {
		errno = -e;
		goto fail;
	}
	t->fd = e;
	struct tftp_limits lim = {
		.blksize_max = s->set.blksize_max,
		.windowsize_max = s->set.windowsize_max,
		.timeout = s->set.timeout,
	};
	unsigned pmtu = path_blksize(t->fd);
	if (pmtu < lim.blksize_max)
		lim.blksize_max = pmtu;
	tftp_negotiate(rq, &lim, t->size, &t->g);
	t->blksize = t->g.blksize_v;
	t->window = t->g.windowsize_v;
	t->nblocks = t->size / t->blksize + 1;
	tftp_netascii_file_init(&t->na, t->file_fd, t->blksize);
	t->next = 1;
	t->rto_ns = (uint64_t)t->g.timeout_v * 1000000000u;
	t->start_ns = t->progress_ns = now_mono_ns();
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = t };
	if (epoll_ctl(s->efd, EPOLL_CTL_ADD, t->fd, &ev) < 0)
		goto fail;
	t->next_t = s->list;
	if (s->list)
		s->list->prev = t;
	s->list = t;
	s->ntransfers++;
	metric_set(s->m_active, s->ntransfers);
	ticking(s, true);
	if (t->g.blksize)
		metric_inc(s->m_opt[0], 1);
	if (t->g.tsize)
		metric_inc(s->m_opt[1], 1);
	if (t->g.timeout)
		metric_inc(s->m_opt[2], 1);
	if (t->g.windowsize)
		metric_inc(s->m_opt[3], 1);
	log_debug("tftp", "%s: %s (%s), %llu bytes, blksize %u, window %u%s", client, opened,
		  rq->mode == TFTP_MODE_NETASCII ? "netascii" : "octet",
		  (unsigned long long)t->size, t->blksize, t->window, t->g.oack ? ", OACK" : "");
	bool ok;
	if (t->g.oack) {
		t->oack_pending = true;
		ok = send_oack(s, t);
	} else {
		ok = send_window(s, t);
	}
	if (!ok)
		transfer_end(s, t, OUT_ERROR, strerror(errno ? errno : EIO));
	return;
fail:
	e = errno ? errno : EIO; /* before the bucket's clock and log can change it */
	if (refusal_logged(s))
		log_error("tftp", "cannot serve \"%s\" to %s: %s", shown, client, strerror(e));
	reply_error(s, peer, TFTP_ENOTDEFINED, "internal error");
	metric_inc(s->m_out[OUT_ERROR], 1);
drop:
	if (t) {
		if (t->fd >= 0)
			close(t->fd);
		free(t);
	}
	if (ffd >= 0)
		close(ffd);
}

static void on_request(struct tftp_server *s, const uint8_t *p, size_t n,
		       const struct sockaddr_in *peer, const struct in_addr *local)
{
	struct tftp_request rq;
	enum tftp_bad why;
	char client[INET_ADDRSTRLEN + 8], ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &peer->sin_addr, ip, sizeof(ip));
	snprintf(client, sizeof(client), "%s:%u", ip, ntohs(peer->sin_port));
	if (tftp_parse_request(p, n, &rq, &why) < 0) {
		metric_inc(s->m_drop[why], 1);
		log_debug("tftp", "dropped a packet from %s: %s", client, tftp_bad_name(why));
		if (why == TFTP_BAD_MODE || why == TFTP_BAD_FILENAME || why == TFTP_BAD_OPTIONS ||
		    why == TFTP_BAD_UNTERMINATED)
			reply_error(s, peer, TFTP_EBADOP, "malformed request");
		return;
	}
	metric_inc(s->m_req[rq.op == TFTP_WRQ], 1);
	if (rq.op == TFTP_WRQ) {
		if (refusal_logged(s))
			log_warn("tftp",
				 "refused a write of \"%s\" from %s: this server is read-only",
				 rq.filename, client);
		reply_error(s, peer, TFTP_EACCESS, "this server is read-only");
		metric_inc(s->m_out[OUT_REFUSED], 1);
		return;
	}
	if (rq.mode == TFTP_MODE_MAIL) {
		reply_error(s, peer, TFTP_EBADOP, "mail mode is not supported");
		metric_inc(s->m_out[OUT_REFUSED], 1);
		return;
	}
	/* A request repeated by a client whose first one we are answering
	 * (its retransmission crossed our OACK or first block): the transfer
	 * under way answers it; a second one would confuse the client with
	 * two servers (two transfer identifiers). */
	for (struct transfer *t = s->list; t; t = t->next_t)
		if (t->peer.sin_addr.s_addr == peer->sin_addr.s_addr &&
		    t->peer.sin_port == peer->sin_port) {
			log_debug("tftp", "%s repeated its request: the transfer under way answers it",
				  client);
			return;
		}
	if (s->ntransfers >= s->set.max_transfers) {
		if (refusal_logged(s))
			log_warn("tftp", "refused %s: %u transfers already (tftp.max_transfers)",
				 client, s->ntransfers);
		reply_error(s, peer, TFTP_ENOTDEFINED, "server busy, try again later");
		metric_inc(s->m_out[OUT_BUSY], 1);
		return;
	}
	start_transfer(s, &rq, peer, local, client);
}

static void on_listen(struct tftp_server *s)
{
	for (int i = 0; i < TFTP_RECV_BATCH; i++) {
		struct sockaddr_in peer;
		char cbuf[CMSG_SPACE(sizeof(struct in_pktinfo))];
		struct iovec iov = { .iov_base = s->buf, .iov_len = sizeof(s->buf) };
		struct msghdr mh = {
			.msg_name = &peer,
			.msg_namelen = sizeof(peer),
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = cbuf,
			.msg_controllen = sizeof(cbuf),
		};
		ssize_t n = recvmsg(s->lfd, &mh, 0);
		if (n < 0)
			return;
		if (mh.msg_namelen < sizeof(peer) || peer.sin_family != AF_INET)
			continue;
		struct in_addr local = { .s_addr = htonl(INADDR_ANY) };
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi;
				memcpy(&pi, CMSG_DATA(c), sizeof(pi));
				local = pi.ipi_spec_dst;
			}
		on_request(s, s->buf, (size_t)n, &peer, &local);
	}
}

static void *run(void *arg)
{
	struct tftp_server *s = arg;
	struct epoll_event evs[TFTP_EVENTS];

	for (;;) {
		int n = epoll_wait(s->efd, evs, TFTP_EVENTS, -1);
		if (n < 0 && errno != EINTR) {
			log_error("tftp", "epoll_wait: %s", strerror(errno));
			break;
		}
		bool stop = false, tick = false;
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &s->stop_fd)
				stop = true;
			else if (p == &s->tfd)
				tick = true;
			else if (p == &s->lfd)
				on_listen(s);
		}
		/* Transfers after the listener, and one event at a time: an
		 * event may end its transfer, and only this loop frees one. */
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &s->stop_fd || p == &s->tfd || p == &s->lfd)
				continue;
			for (struct transfer *t = s->list; t; t = t->next_t)
				if (t == p) {
					on_transfer_packet(s, t);
					break;
				}
		}
		if (tick)
			on_tick(s);
		if (stop)
			break;
	}
	return NULL;
}

/* ---- life cycle ---- */

int tftp_server_new(const struct tftp_settings *settings, struct tftp_server **ret, char *err,
		    size_t errlen)
{
	struct tftp_server *s = calloc(1, sizeof(*s));
	int e;

	if (!s)
		return -ENOMEM;
	s->lfd = s->efd = s->tfd = s->stop_fd = s->root_fd = -1;
	s->set = *settings;
	s->set.root = s->set.listen = NULL;
	if (!(s->set.root = strdup(settings->root)) || !(s->set.listen = strdup(settings->listen))) {
		e = -ENOMEM;
		snprintf(err, errlen, "TFTP server: out of memory");
		goto fail;
	}
	s->root_fd = open(s->set.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->root_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "ipxe.binary_dir: cannot open %s for TFTP: %s", s->set.root,
			 strerror(errno));
		goto fail;
	}
	if ((e = s->lfd = net_bind(s->set.listen, AF_INET, SOCK_DGRAM, NET_PKTINFO, "TFTP", err,
				   errlen)) < 0)
		goto fail;
	s->efd = epoll_create1(EPOLL_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event el = { .events = EPOLLIN, .data.ptr = &s->lfd },
			   et = { .events = EPOLLIN, .data.ptr = &s->tfd },
			   es = { .events = EPOLLIN, .data.ptr = &s->stop_fd };
	if (s->efd < 0 || s->tfd < 0 || s->stop_fd < 0 ||
	    epoll_ctl(s->efd, EPOLL_CTL_ADD, s->lfd, &el) < 0 ||
	    epoll_ctl(s->efd, EPOLL_CTL_ADD, s->tfd, &et) < 0 ||
	    epoll_ctl(s->efd, EPOLL_CTL_ADD, s->stop_fd, &es) < 0) {
		e = -errno;
		snprintf(err, errlen, "TFTP server: %s", strerror(errno));
		goto fail;
	}
	metrics_init(s);
	*ret = s;
	return 0;
fail:
	tftp_server_free(s);
	return e;
}

int tftp_server_start(struct tftp_server *s, char *err, size_t errlen)
{
	int e = pthread_create(&s->thread, NULL, run, s);
	if (e != 0) {
		snprintf(err, errlen, "cannot start the TFTP thread: %s", strerror(e));
		return -e;
	}
	pthread_setname_np(s->thread, "tftp");
	s->started = true;
	log_info("tftp", "serving %s on %s (UDP)", s->set.root, s->set.listen);
	return 0;
}

void tftp_server_free(struct tftp_server *s)
{
	if (!s)
		return;
	if (s->started) {
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) < 0)
			log_warn("tftp", "cannot stop the thread: %s", strerror(errno));
		pthread_join(s->thread, NULL);
	}
	while (s->list)
		transfer_end(s, s->list, OUT_ERROR, "the daemon is stopping");
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->efd >= 0)
		close(s->efd);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	if (s->root_fd >= 0)
		close(s->root_fd);
	free((char *)s->set.root);
	free((char *)s->set.listen);
	free(s);
}
