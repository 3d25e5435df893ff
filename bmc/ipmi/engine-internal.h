/* engine-internal — private to bmc/ipmi/: what the IPMI engine's shell
 * (engine.c: the socket, the session table, timers, callbacks) and its
 * protocol state machine (session.c: the handshake, the commands, the
 * replies) share. Nothing outside bmc/ipmi/ includes it. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bmc/bmc.h"
#include "bmc/ipmi/ipmi.h"
#include "bmc/provider.h"

#define IPMI_DEFAULT_PORT 623
/* A kept session is closed after this long unused: under the 60 s
 * inactivity timeout most BMCs apply (IPMI v2.0 §6.12.15 leaves it to
 * them), so that we close it before the BMC forgets it. */
#define IPMI_IDLE_MS 50000u
/* Calls queued or in flight at once, all BMCs together. */
#define IPMI_MAX_CALLS 65536u
/* Datagrams read by one process() before the timers get their turn. */
#define IPMI_RX_BURST 256
/* The socket's receive buffer, bytes (the kernel may cap it). */
#define IPMI_RCVBUF (1 << 20)
/* The "host:port" of a message. */
#define IPMI_WHERE_MAX (BMC_HOST_MAX + 8)

/* A submitted call, queued on its session until its callback. */
struct ipmi_call {
	struct ipmi_call *next;
	struct bmc_call call;
	bmc_done_fn done;
	void *userdata;
	uint64_t start_ms;
	struct bmc_reply reply;
	unsigned step;      /* BOOT_SET: 0 acknowledge (param 3), 1 flags */
	bool fresh_session; /* the session was set up while this call waited */
	bool retried;       /* the session was set up again once for it */
};

/* The message a session has in flight (at most one: BMCs handle few
 * requests at once). */
enum ipmi_phase {
	IPMI_PH_IDLE,  /* nothing in flight */
	IPMI_PH_CAPS,  /* Get Channel Authentication Capabilities (v1.5) */
	IPMI_PH_OPEN,  /* Open Session */
	IPMI_PH_RAKP1, /* RAKP 1, awaiting RAKP 2 */
	IPMI_PH_RAKP3, /* RAKP 3, awaiting RAKP 4 */
	IPMI_PH_PRIV,  /* Set Session Privilege Level */
	IPMI_PH_CMD,   /* the head call's command */
	IPMI_PH_CLOSE, /* Close Session (only while the engine is freed) */
};

/* While a host name is looked up (getaddrinfo_a). */
#define IPMI_LOOKUP_POLL_MS 20
struct ipmi_lookup;

/* One endpoint (host, port, user, cipher suite) and its RMCP+ session. */
struct ipmi_sess {
	struct ipmi_sess *next;
	struct sockaddr_in addr;
	bool have_addr;             /* addr is known */
	struct ipmi_lookup *lookup; /* a host name lookup under way */
	char where[IPMI_WHERE_MAX];
	char host[BMC_HOST_MAX];
	uint16_t port;
	char user[BMC_USER_MAX];
	char password[BMC_PASSWORD_MAX]; /* zeroed when freed */
	const struct ipmi_suite *suite;

	struct ipmi_rakp rakp; /* holds the password too: zeroed when down */
	struct ipmi_keys keys;
	bool counted;     /* holds one of settings.max_sessions */
	bool up;          /* established: keys valid */
	uint32_t seq_out; /* our next session sequence number */
	struct ipmi_window win;
	uint8_t rqseq;
	uint8_t tag;

	enum ipmi_phase ph;
	struct ipmi_req rq;
	uint8_t rqdata[IPMI_MAX_DATA];
	const char *what;  /* the message's name, for errors */
	unsigned tries;    /* sends of the message so far, minus one */
	uint64_t deadline; /* when to send it again or give up */
	const char *drop;  /* why the last reply to it was dropped */

	struct ipmi_call *head, *tail;
	uint64_t last_used;
};

struct ipmi_engine {
	int fd;
	struct bmc_settings set;
	struct ipmi_sess *sessions;
	size_t counted; /* sessions holding a slot of max_sessions */
	size_t ncalls;
	struct ipmi_call *done_head, *done_tail; /* awaiting their callback */
	uint64_t dropped;                        /* datagrams dropped: malformed, spoofed, stray */
	bool kick;                               /* a call was queued: process() soon */
	bool closing;                            /* free() runs: submit() refuses */
};

/* session.c */

/* Starts what s must do next when nothing is in flight: the handshake
 * when the session is down (if a slot of max_sessions is free), else the
 * head call's command. */
void ipmi_sess_advance(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now);
/* The message in flight met its deadline: sends it again, or gives up. */
void ipmi_sess_timeout(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now);
/* A datagram from s's address: 0 when s took it, else a negative errno
 * of bmc/ipmi/ipmi.h's table saying why it was dropped. */
int ipmi_sess_rx(struct ipmi_engine *e, struct ipmi_sess *s, const uint8_t *pkt, size_t len,
		 uint64_t now);
/* Sends Close Session on an established session: once, answered or not
 * (ph IPMI_PH_CLOSE awaits the answer when wait is set). */
void ipmi_sess_close(struct ipmi_engine *e, struct ipmi_sess *s, bool wait, uint64_t now);
/* Forgets the session's keys and frees its slot; the calls stay queued. */
void ipmi_sess_down(struct ipmi_engine *e, struct ipmi_sess *s);
/* Why a reply was dropped, for the timeout message. */
const char *ipmi_drop_reason(int err);

/* engine.c */

/* Ends the head call of s with fail and a message (printf format), moves
 * it to the callback list and starts the next call. */
void ipmi_call_finish(struct ipmi_engine *e, struct ipmi_sess *s, enum bmc_fail fail,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Ends every call queued on s with the same failure (the session could
 * not be set up: each would fail alike). */
void ipmi_call_fail_all(struct ipmi_engine *e, struct ipmi_sess *s, enum bmc_fail fail,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Frees a slot of max_sessions by closing the least recently used idle
 * session. true when one was freed. */
bool ipmi_engine_evict(struct ipmi_engine *e, uint64_t now);
/* Sends pkt to s's BMC. 0, or a negative errno (EAGAIN counts as sent:
 * the retransmission covers it). */
int ipmi_engine_send(struct ipmi_engine *e, struct ipmi_sess *s, const uint8_t *pkt, size_t len);
/* Random bytes (libcrypto's CSPRNG). 0 or -EIO. */
int ipmi_random(void *p, size_t n);
