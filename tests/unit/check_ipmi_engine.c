/* check_ipmi_engine — the IPMI engine (bmc/ipmi/engine.c, session.c)
 * against a fake BMC on a loopback UDP socket in the test itself. The
 * fake plays the BMC side of the handshake with the codec of ipmi.h (it
 * knows the password), for cipher suites 3 and 17, and then answers the
 * chassis commands well or badly as each test asks: truncated, with
 * another session ID, a bad HMAC, a sequence number outside the window
 * or replayed, another rqSeq, an oversized datagram. Such replies must
 * not end a call: alone they make it time out naming the drop reason,
 * followed by a good reply they leave it to succeed. Also: a wrong
 * password, a RAKP 2 error status, a completion code, a kept session the
 * BMC forgot (set up again once), a session kept from a call just done
 * (not closed as idle), another password (not on that session),
 * max_sessions reached (the idle session
 * closed), a host name, calls the provider cannot make, and free() with
 * a call pending. No assertion on time: every loop is bounded
 * and waits only for the engine's own retries. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bmc/bmc.h"
#include "bmc/ipmi/ipmi.h"
#include "bmc/provider.h"
#include "tests/unit/unit.h"

#define SIDC 0x0badcafeu
#define USER "admin"
#define PASSWORD "secret"
#define ALWAYS 1000u /* garbage_left: garbage every time */
#define DRIVE_MAX_MS 30000u

enum garbage {
	G_NONE,
	G_TRUNC,
	G_SID,
	G_HMAC,
	G_WINDOW,
	G_REPLAY,
	G_RQSEQ,
	G_OVERSIZE,
};

struct fake {
	int fd;
	uint16_t port;
	const char *password;  /* what the BMC holds */
	enum garbage garbage;  /* how the chassis replies are spoiled */
	unsigned garbage_left; /* spoiled replies still to send (ALWAYS) */
	bool good_after;       /* a good reply after each spoiled one */
	unsigned drop_left;    /* chassis requests still to ignore */
	uint8_t rakp2_status;  /* != 0: RAKP 2 says so */
	uint8_t cc;            /* the chassis commands' completion code */
	unsigned opens, closes, chassis;
	const struct ipmi_suite *suite;
	struct ipmi_rakp r;
	struct ipmi_keys k;
	uint32_t seq;
	struct sockaddr_in peer;
};

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void fake_init(struct fake *f)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);

	memset(f, 0, sizeof(*f));
	f->password = PASSWORD;
	f->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(f->fd, 0);
	ck_assert_int_eq(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(f->fd, (struct sockaddr *)&sa, &sl), 0);
	f->port = ntohs(sa.sin_port);
}

static void fake_send(struct fake *f, const uint8_t *p, size_t n)
{
	ck_assert_int_eq(sendto(f->fd, p, n, 0, (struct sockaddr *)&f->peer, sizeof(f->peer)),
			 (ssize_t)n);
}

/* An IPMI response message to the request message rq. */
static size_t make_msg(const uint8_t *rq, uint8_t cc, const uint8_t *d, size_t n, int rqseq_off,
		       uint8_t *out)
{
	out[0] = IPMI_CONSOLE_ADDR;
	out[1] = (uint8_t)(((rq[1] >> 2) + 1) << 2);
	out[2] = ipmi_checksum(out, 2);
	out[3] = IPMI_BMC_ADDR;
	out[4] = (uint8_t)((((rq[4] >> 2) + rqseq_off) & 0x3f) << 2);
	out[5] = rq[5];
	out[6] = cc;
	if (n)
		memcpy(out + 7, d, n);
	out[7 + n] = ipmi_checksum(out + 3, 4 + n);
	return 8 + n;
}

static void hmac(const struct ipmi_suite *s, const void *key, size_t klen, const uint8_t *m,
		 size_t n, uint8_t *out)
{
	unsigned ol;
	HMAC(s->auth == 3 ? EVP_sha256() : EVP_sha1(), key, (int)klen, m, n, out, &ol);
}

/* Get Channel Authentication Capabilities, in a v1.5 header. */
static void fake_caps(struct fake *f, const uint8_t *p, size_t n)
{
	static const uint8_t caps[8] = { 0x01, 0x80, 0x00, 0x02, 0, 0, 0, 0 };
	uint8_t out[64], msg[32];
	size_t m;

	ck_assert_uint_ge(n, 14 + 7);
	m = make_msg(p + 14, 0, caps, sizeof(caps), 0, msg);
	memcpy(out, p, 13); /* RMCP, auth none, sequence, session ID */
	out[13] = (uint8_t)m;
	memcpy(out + 14, msg, m);
	fake_send(f, out, 14 + m);
}

static void fake_handshake(struct fake *f, uint8_t pt, const uint8_t *p, size_t n)
{
	uint8_t out[128], pkt[256], buf[128], code[IPMI_HMAC_MAX];
	size_t o = 0;

	if (pt == IPMI_PAYLOAD_OPEN_REQ) {
		ck_assert_uint_eq(n, 32);
		f->opens++;
		f->suite = ipmi_suite_get(p[12] == 3 ? 17 : 3); /* the auth algorithm */
		f->r.tag = p[0];
		f->r.console_sid = get_le32(p + 4);
		out[0] = p[0];
		out[1] = 0;
		out[2] = IPMI_PRIV_ADMIN;
		out[3] = 0;
		put_le32(out + 4, f->r.console_sid);
		put_le32(out + 8, SIDC);
		memcpy(out + 12, p + 8, 24); /* the algorithms asked */
		o = 36;
		pt = IPMI_PAYLOAD_OPEN_RSP;
	} else if (pt == IPMI_PAYLOAD_RAKP1) {
		char user[IPMI_MAX_USER + 1] = "";
		uint32_t csid = f->r.console_sid;

		ck_assert_uint_ge(n, 28);
		ck_assert_uint_le(p[27], IPMI_MAX_USER);
		memcpy(user, p + 28, p[27]);
		ck_assert_int_eq(ipmi_rakp_init(&f->r, f->suite, csid, p + 8, user, f->password),
				 0);
		f->r.tag = p[0];
		f->r.role = p[24];
		f->r.bmc_sid = SIDC;
		memset(f->r.rc, 0x5c, sizeof(f->r.rc));
		memset(f->r.guid, 0x6d, sizeof(f->r.guid));
		out[0] = p[0];
		out[1] = f->rakp2_status;
		out[2] = out[3] = 0;
		put_le32(out + 4, csid);
		o = 8;
		if (!f->rakp2_status) {
			/* §13.31: HMAC_Kuid(SIDm SIDc Rm Rc GUIDc ROLEm ULENGTHm UNAMEm) */
			size_t b = 0;
			put_le32(buf, csid);
			put_le32(buf + 4, SIDC);
			b = 8;
			memcpy(buf + b, f->r.rm, 16), b += 16;
			memcpy(buf + b, f->r.rc, 16), b += 16;
			memcpy(buf + b, f->r.guid, 16), b += 16;
			buf[b++] = f->r.role;
			buf[b++] = f->r.ulen;
			memcpy(buf + b, f->r.user, f->r.ulen), b += f->r.ulen;
			hmac(f->suite, f->password, strlen(f->password), buf, b, code);
			memcpy(out + o, f->r.rc, 16), o += 16;
			memcpy(out + o, f->r.guid, 16), o += 16;
			memcpy(out + o, code, f->suite->hmac_len), o += f->suite->hmac_len;
			ck_assert_int_eq(ipmi_derive_keys(&f->r, &f->k), 0);
		}
		pt = IPMI_PAYLOAD_RAKP2;
	} else if (pt == IPMI_PAYLOAD_RAKP3) {
		/* §13.31: RAKP 4's ICV = HMAC_SIK(Rm SIDc GUIDc), truncated. */
		memcpy(buf, f->r.rm, 16);
		put_le32(buf + 16, SIDC);
		memcpy(buf + 20, f->r.guid, 16);
		hmac(f->suite, f->k.sik, f->suite->hmac_len, buf, 36, code);
		out[0] = p[0];
		out[1] = 0;
		out[2] = out[3] = 0;
		put_le32(out + 4, f->r.console_sid);
		memcpy(out + 8, code, f->suite->icv_len);
		o = 8 + f->suite->icv_len;
		f->seq = 1;
		pt = IPMI_PAYLOAD_RAKP4;
	} else {
		return;
	}
	int w = ipmi_wrap(NULL, pt, 0, 0, NULL, out, o, pkt, sizeof(pkt));
	ck_assert_int_gt(w, 0);
	fake_send(f, pkt, (size_t)w);
}

/* Wraps msg in f's session: seq and session ID given. */
static size_t wrap(struct fake *f, const uint8_t *msg, size_t m, uint32_t seq, uint32_t sid,
		   uint8_t *pkt, size_t cap)
{
	uint8_t iv[IPMI_AES_BLOCK];
	memset(iv, (int)seq, sizeof(iv));
	int w = ipmi_wrap(&f->k, IPMI_PAYLOAD_IPMI, sid, seq, iv, msg, m, pkt, cap);
	ck_assert_int_gt(w, 0);
	return (size_t)w;
}

/* A spoiled copy of the chassis reply msg. */
static void fake_garbage(struct fake *f, const uint8_t *rq, const uint8_t *d, size_t dn,
			 const uint8_t *good, size_t gn)
{
	uint8_t pkt[1500], msg[64];
	size_t n;

	memset(pkt, 0, sizeof(pkt));
	switch (f->garbage) {
	case G_TRUNC:
		memcpy(pkt, good, gn);
		n = gn / 2;
		break;
	case G_SID:
		n = wrap(f, msg, make_msg(rq, f->cc, d, dn, 0, msg), f->seq++, f->r.console_sid ^ 1,
			 pkt, sizeof(pkt));
		break;
	case G_HMAC:
		memcpy(pkt, good, gn);
		pkt[gn - 1] ^= 0x01;
		n = gn;
		break;
	case G_WINDOW:
		n = wrap(f, msg, make_msg(rq, f->cc, d, dn, 0, msg), f->seq + 100, f->r.console_sid,
			 pkt, sizeof(pkt));
		break;
	case G_REPLAY:
		n = wrap(f, msg, make_msg(rq, f->cc, d, dn, 0, msg), 1, f->r.console_sid, pkt,
			 sizeof(pkt));
		break;
	case G_RQSEQ:
		n = wrap(f, msg, make_msg(rq, f->cc, d, dn, 1, msg), f->seq++, f->r.console_sid,
			 pkt, sizeof(pkt));
		break;
	default: /* G_OVERSIZE */
		memcpy(pkt, good, gn);
		n = sizeof(pkt);
		break;
	}
	fake_send(f, pkt, n);
}

static void fake_session(struct fake *f, const uint8_t *p, size_t n)
{
	uint8_t buf[256], msg[64], good[256];
	static const uint8_t on[3] = { 0x01, 0, 0 }, admin[1] = { IPMI_PRIV_ADMIN };
	static const uint8_t flags[7] = { 0x01, 0x05, 0x80, 0x04, 0, 0, 0 };
	const uint8_t *d = NULL;
	struct ipmi_rx rx;
	size_t dn = 0;
	uint8_t cc = 0;

	if (ipmi_unwrap(&f->k, SIDC, IPMI_PAYLOAD_IPMI, p, n, buf, sizeof(buf), &rx) < 0)
		return; /* a session the fake forgot */
	const uint8_t *rq = rx.payload;
	uint8_t netfn = rq[1] >> 2, cmd = rq[5];
	if (netfn == IPMI_NETFN_APP && cmd == IPMI_CMD_SET_PRIV) {
		d = admin, dn = 1;
	} else if (netfn == IPMI_NETFN_APP && cmd == IPMI_CMD_CLOSE_SESSION) {
		f->closes++;
	} else if (netfn == IPMI_NETFN_CHASSIS) {
		f->chassis++;
		if (f->drop_left) {
			f->drop_left--;
			return;
		}
		cc = f->cc;
		if (cmd == IPMI_CMD_CHASSIS_STATUS)
			d = on, dn = 3;
		else if (cmd == IPMI_CMD_GET_BOOT_OPTIONS)
			d = flags, dn = 7;
		if (f->garbage_left && f->garbage != G_NONE) {
			if (f->garbage_left != ALWAYS)
				f->garbage_left--;
			size_t m = make_msg(rq, cc, d, dn, 0, msg);
			uint32_t seq = f->seq;
			size_t gn = wrap(f, msg, m, seq + 1, f->r.console_sid, good, sizeof(good));
			fake_garbage(f, rq, d, dn, good, gn);
			if (!f->good_after)
				return;
		}
	}
	size_t m = make_msg(rq, cc, d, dn, 0, msg);
	size_t gn = wrap(f, msg, m, f->seq++, f->r.console_sid, good, sizeof(good));
	fake_send(f, good, gn);
}

/* Answers every datagram waiting on the fake's socket. */
static void fake_serve(struct fake *f)
{
	uint8_t p[1500];

	for (int i = 0; i < 64; i++) {
		socklen_t sl = sizeof(f->peer);
		ssize_t n = recvfrom(f->fd, p, sizeof(p), 0, (struct sockaddr *)&f->peer, &sl);

		if (n < 0)
			return;
		if (n >= 14 && p[3] == RMCP_CLASS_IPMI && p[4] == IPMI_AUTH_NONE)
			fake_caps(f, p, (size_t)n);
		else if (n >= 16 && p[4] == IPMI_AUTH_RMCPP && (p[5] & 0x3f) != IPMI_PAYLOAD_IPMI)
			fake_handshake(f, p[5] & 0x3f, p + 16, (size_t)n - 16);
		else if (n >= 16 && p[4] == IPMI_AUTH_RMCPP)
			fake_session(f, p, (size_t)n);
	}
}

/* ---- the engine's side ---- */

struct result {
	bool done;
	unsigned count;
	struct bmc_reply reply;
};

static void on_done(const struct bmc_reply *r, void *userdata)
{
	struct result *res = userdata;
	res->done = true;
	res->count++;
	res->reply = *r;
}

static const struct bmc_engine_ops *ops = &bmc_ipmi_ops;

static void *engine(unsigned timeout_ms, unsigned retries)
{
	struct bmc_settings set = { .timeout_ms = timeout_ms, .retries = retries };
	char err[128];
	void *e = NULL;

	bmc_settings_default(&set);
	ck_assert_int_eq(ops->new (&set, &e, err, sizeof(err)), 0);
	return e;
}

static struct bmc_endpoint endpoint(const struct fake *f, unsigned suite)
{
	struct bmc_endpoint ep = { .host = "127.0.0.1",
				   .port = f->port,
				   .user = USER,
				   .password = PASSWORD,
				   .cipher_suite = suite };
	return ep;
}

/* Runs the engine and the fakes fs[0..n) until res is done (bounded). */
static void drive_all(struct fake **fs, size_t n, void *e, struct result *res)
{
	uint64_t end = bmc_now_ms() + DRIVE_MAX_MS;

	ck_assert_uint_le(n, 2);
	while (!res->done && bmc_now_ms() < end) {
		struct pollfd p[3] = { { .fd = ops->fd(e), .events = POLLIN } };
		int t = ops->timeout_ms(e, bmc_now_ms());

		for (size_t i = 0; i < n; i++)
			p[i + 1] = (struct pollfd){ .fd = fs[i]->fd, .events = POLLIN };
		if (t < 0 || t > 100)
			t = 100;
		poll(p, n + 1, t);
		for (size_t i = 0; i < n; i++)
			fake_serve(fs[i]);
		ops->process(e, bmc_now_ms());
	}
	ck_assert_msg(res->done, "the call did not end");
}

static void drive(struct fake *f, void *e, struct result *res)
{
	drive_all(&f, 1, e, res);
}

static struct result call(struct fake *f, void *e, unsigned suite, enum bmc_cmd cmd)
{
	struct bmc_endpoint ep = endpoint(f, suite);
	struct bmc_call c = { .cmd = cmd, .action = BMC_ACT_ON };
	struct result res = { 0 };

	ck_assert_int_eq(ops->submit(e, &ep, &c, on_done, &res), 0);
	ck_assert(!res.done); /* never from submit() */
	drive(f, e, &res);
	ck_assert_uint_eq(res.count, 1);
	return res;
}

START_TEST(test_good_suites)
{
	for (unsigned suite = 3; suite <= 17; suite += 14) {
		struct fake f;
		fake_init(&f);
		void *e = engine(200, 2);
		struct result r = call(&f, e, suite, BMC_CMD_POWER_GET);
		ck_assert_msg(r.reply.fail == BMC_FAIL_NONE, "suite %u: %s", suite,
			      r.reply.message);
		ck_assert_int_eq(r.reply.power, BMC_POWER_ON);
		ck_assert_uint_eq(f.suite->id, suite);
		r = call(&f, e, suite, BMC_CMD_BOOT_GET);
		ck_assert_int_eq(r.reply.fail, BMC_FAIL_NONE);
		ck_assert(r.reply.boot_known);
		ck_assert_int_eq(r.reply.boot.device, BMC_BOOT_PXE);
		ck_assert_uint_eq(f.opens, 1); /* the session was reused */
		ck_assert_uint_eq(ops->sessions(e), 1);
		ops->free(e, 0); /* sends Close Session, waits for nothing */
		fake_serve(&f);
		ck_assert_uint_eq(f.closes, 1);
		close(f.fd);
	}
}
END_TEST

/* A process() whose now was read before the last call's end was stamped
 * (the caller reads the clock, then the reply is read and handled) does
 * not take the session for one idle since the clock began: it stays
 * open. */
START_TEST(test_idle_clock)
{
	struct fake f;
	fake_init(&f);
	void *e = engine(200, 2);
	uint64_t before = bmc_now_ms() - 1;
	struct result r = call(&f, e, 3, BMC_CMD_POWER_GET);

	ck_assert_int_eq(r.reply.fail, BMC_FAIL_NONE);
	ck_assert_uint_eq(ops->sessions(e), 1);
	ops->process(e, before);
	ck_assert_uint_eq(ops->sessions(e), 1);
	fake_serve(&f);
	ck_assert_uint_eq(f.closes, 0);
	r = call(&f, e, 3, BMC_CMD_POWER_GET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_NONE);
	ck_assert_uint_eq(f.opens, 1); /* the same session */
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

/* A session is the credentials' too: a call with another password (a
 * second Machine on the same BMC with a wrong Secret, or a Secret
 * changed) does not ride on the session that the right one opened. */
START_TEST(test_session_password)
{
	struct fake f;
	fake_init(&f);
	void *e = engine(200, 2);
	struct result r = call(&f, e, 3, BMC_CMD_POWER_GET);

	ck_assert_int_eq(r.reply.fail, BMC_FAIL_NONE);
	ck_assert_uint_eq(ops->sessions(e), 1);

	struct bmc_endpoint ep = endpoint(&f, 3);
	struct bmc_call c = { .cmd = BMC_CMD_POWER_GET };
	snprintf(ep.password, sizeof(ep.password), "%s", "not-the-password");
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(ops->submit(e, &ep, &c, on_done, &r), 0);
	drive(&f, e, &r);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_AUTH);
	ck_assert_uint_eq(f.opens, 2); /* a handshake of its own */

	/* The right one still works (the fake keeps one session only: the
	 * failed handshake made it forget the first, so it may be opened
	 * again). */
	r = call(&f, e, 3, BMC_CMD_POWER_GET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_NONE);
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

static const struct {
	enum garbage g;
	const char *why;
} garbage[] = {
	{ G_TRUNC, "malformed or truncated" },
	{ G_SID, "wrong session ID" },
	{ G_HMAC, "bad integrity HMAC" },
	{ G_WINDOW, "sequence number outside the window" },
	{ G_REPLAY, "replayed sequence number" },
	{ G_RQSEQ, "not the reply awaited" },
	{ G_OVERSIZE, "oversized datagram" },
};

START_TEST(test_garbage_only)
{
	struct fake f;
	char want[256];

	fake_init(&f);
	f.garbage = garbage[_i].g;
	f.garbage_left = ALWAYS;
	void *e = engine(100, 2);
	struct result r = call(&f, e, 3, BMC_CMD_POWER_GET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_TIMEOUT);
	snprintf(want, sizeof(want),
		 "no answer from 127.0.0.1:%u after 3 tries (Get Chassis Status) (last reply "
		 "dropped: %s",
		 f.port, garbage[_i].why);
	ck_assert_msg(strncmp(r.reply.message, want, strlen(want)) == 0, "got \"%s\", want \"%s\"",
		      r.reply.message, want);
	ck_assert_uint_eq(f.chassis, 3); /* sent thrice, never more */
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

START_TEST(test_garbage_then_good)
{
	struct fake f;

	fake_init(&f);
	f.garbage = garbage[_i].g;
	f.garbage_left = ALWAYS;
	f.good_after = true;
	void *e = engine(1000, 3);
	struct result r = call(&f, e, 17, BMC_CMD_POWER_GET);
	ck_assert_msg(r.reply.fail == BMC_FAIL_NONE, "%s", r.reply.message);
	ck_assert_int_eq(r.reply.power, BMC_POWER_ON);
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

START_TEST(test_wrong_password)
{
	struct fake f;

	fake_init(&f);
	f.password = "another";
	void *e = engine(200, 2);
	struct result r = call(&f, e, 3, BMC_CMD_POWER_SET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_AUTH);
	ck_assert_msg(strstr(r.reply.message, "authentication failed") != NULL, "%s",
		      r.reply.message);
	ck_assert(strstr(r.reply.message, PASSWORD) == NULL);
	ck_assert_uint_eq(f.chassis, 0);
	ck_assert_uint_eq(ops->sessions(e), 0);
	ops->free(e, 0);

	f.password = PASSWORD;
	f.rakp2_status = 0x0d;
	e = engine(200, 2);
	r = call(&f, e, 17, BMC_CMD_POWER_GET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_AUTH);
	ck_assert_str_eq(r.reply.message,
			 "authentication failed: RAKP 2: unauthorized name (status 0x0d)");
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

START_TEST(test_refused)
{
	struct fake f;

	fake_init(&f);
	f.cc = 0xcc;
	void *e = engine(200, 2);
	struct result r = call(&f, e, 3, BMC_CMD_POWER_SET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_REFUSED);
	ck_assert_str_eq(r.reply.message,
			 "Chassis Control: completion code 0xcc (invalid data field)");
	ck_assert_uint_eq(f.chassis, 1);
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

/* A kept session the BMC has forgotten: the command goes unanswered, the
 * engine sets the session up again and sends it once more. */
START_TEST(test_session_reestablished)
{
	struct fake f;

	fake_init(&f);
	void *e = engine(100, 1);
	struct result r = call(&f, e, 3, BMC_CMD_POWER_GET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_NONE);
	f.drop_left = 2; /* both tries of the next command */
	r = call(&f, e, 3, BMC_CMD_POWER_GET);
	ck_assert_msg(r.reply.fail == BMC_FAIL_NONE, "%s", r.reply.message);
	ck_assert_uint_eq(f.opens, 2);
	ck_assert_uint_eq(f.chassis, 4);
	/* On a session set up for the call, no second chance. */
	f.drop_left = 4;
	r = call(&f, e, 3, BMC_CMD_POWER_GET);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_TIMEOUT);
	ck_assert_uint_eq(f.opens, 3);
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

START_TEST(test_cannot)
{
	struct fake f;
	struct bmc_call media = { .cmd = BMC_CMD_MEDIA_SET };
	struct bmc_call http = { .cmd = BMC_CMD_BOOT_SET, .boot = { .device = BMC_BOOT_HTTP } };
	struct bmc_call status = { .cmd = BMC_CMD_POWER_GET };
	struct result r = { 0 }, r2 = { 0 }, r3 = { 0 };

	fake_init(&f);
	void *e = engine(200, 2);
	struct bmc_endpoint ep = endpoint(&f, 3);
	ck_assert_int_eq(ops->submit(e, &ep, &media, on_done, &r), -EINVAL);
	ck_assert_int_eq(ops->submit(e, &ep, &http, on_done, &r), 0);
	ep.cipher_suite = 2;
	ck_assert_int_eq(ops->submit(e, &ep, &http, on_done, &r2), 0);
	ep.cipher_suite = 3;
	snprintf(ep.host, sizeof(ep.host), "bmc;example");
	ck_assert_int_eq(ops->submit(e, &ep, &status, on_done, &r3), 0);
	ck_assert(!r.done && !r2.done && !r3.done);
	ck_assert_int_eq(ops->timeout_ms(e, bmc_now_ms()), 0);
	ops->process(e, bmc_now_ms());
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_UNSUPPORTED);
	ck_assert_int_eq(r2.reply.fail, BMC_FAIL_UNSUPPORTED);
	ck_assert_str_eq(r2.reply.message, "cipher suite 2 not supported (3 and 17 are)");
	ck_assert_int_eq(r3.reply.fail, BMC_FAIL_NETWORK);
	ck_assert_str_eq(r3.reply.message, "not a host name or IPv4 address");
	ck_assert_uint_eq(r.count + r2.count + r3.count, 3);
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

/* A power action the engine does not know is refused, not sent as some
 * other one (it was sent as chassis up: power on). */
START_TEST(test_unknown_action)
{
	struct fake f;
	struct bmc_call c = { .cmd = BMC_CMD_POWER_SET, .action = (enum bmc_power_action)9 };
	struct result r = { 0 };

	fake_init(&f);
	void *e = engine(200, 2);
	struct bmc_endpoint ep = endpoint(&f, 3);
	ck_assert_int_eq(ops->submit(e, &ep, &c, on_done, &r), 0);
	ops->process(e, bmc_now_ms());
	ck_assert_uint_eq(r.count, 1);
	ck_assert_int_eq(r.reply.fail, BMC_FAIL_UNSUPPORTED);
	ck_assert_uint_eq(f.opens, 0);
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

/* A host name, looked up without blocking: localhost (from the hosts
 * file) reaches the fake on 127.0.0.1. */
START_TEST(test_host_name)
{
	struct fake f;
	struct bmc_call c = { .cmd = BMC_CMD_POWER_GET };
	struct result r = { 0 };

	fake_init(&f);
	void *e = engine(200, 2);
	struct bmc_endpoint ep = endpoint(&f, 3);
	snprintf(ep.host, sizeof(ep.host), "localhost");
	ck_assert_int_eq(ops->submit(e, &ep, &c, on_done, &r), 0);
	drive(&f, e, &r);
	ck_assert_msg(r.reply.fail == BMC_FAIL_NONE, "%s", r.reply.message);
	ck_assert_int_eq(r.reply.power, BMC_POWER_ON);
	ck_assert_uint_eq(f.opens, 1);
	ops->free(e, 0);
	close(f.fd);
}
END_TEST

/* max_sessions 1: a session for a second BMC closes the idle first one
 * (Close Session) rather than wait or exceed the bound. */
START_TEST(test_max_sessions)
{
	struct bmc_settings set = { .timeout_ms = 200, .retries = 2, .max_sessions = 1 };
	struct fake a, b, *both[2] = { &a, &b };
	struct bmc_call c = { .cmd = BMC_CMD_POWER_GET };
	struct result ra = { 0 }, rb = { 0 };
	char err[128];
	void *e = NULL;

	fake_init(&a);
	fake_init(&b);
	bmc_settings_default(&set);
	ck_assert_int_eq(ops->new (&set, &e, err, sizeof(err)), 0);
	struct bmc_endpoint ea = endpoint(&a, 3), eb = endpoint(&b, 3);
	ck_assert_int_eq(ops->submit(e, &ea, &c, on_done, &ra), 0);
	drive_all(both, 2, e, &ra);
	ck_assert_int_eq(ra.reply.fail, BMC_FAIL_NONE);
	ck_assert_uint_eq(ops->sessions(e), 1);
	ck_assert_int_eq(ops->submit(e, &eb, &c, on_done, &rb), 0);
	drive_all(both, 2, e, &rb);
	ck_assert_int_eq(rb.reply.fail, BMC_FAIL_NONE);
	ck_assert_uint_eq(a.closes, 1);
	ck_assert_uint_eq(b.opens, 1);
	ck_assert_uint_eq(ops->sessions(e), 1);
	ops->free(e, 0);
	close(a.fd);
	close(b.fd);
}
END_TEST

/* free() with a call in flight and one queued: both canceled, once. */
START_TEST(test_free_cancels)
{
	struct fake f;
	struct result r1 = { 0 }, r2 = { 0 };
	struct bmc_call c = { .cmd = BMC_CMD_POWER_GET };

	fake_init(&f);
	void *e = engine(200, 2);
	struct bmc_endpoint ep = endpoint(&f, 3);
	ck_assert_int_eq(ops->submit(e, &ep, &c, on_done, &r1), 0);
	ck_assert_int_eq(ops->submit(e, &ep, &c, on_done, &r2), 0);
	ops->process(e, bmc_now_ms()); /* sends; the fake never answers */
	ops->free(e, 100);
	ck_assert_uint_eq(r1.count, 1);
	ck_assert_uint_eq(r2.count, 1);
	ck_assert_int_eq(r1.reply.fail, BMC_FAIL_CANCELED);
	ck_assert_int_eq(r2.reply.fail, BMC_FAIL_CANCELED);
	close(f.fd);
}
END_TEST

/* A callback that submits again while free() cancels: the new call is
 * refused, or it too gets its callback; never left without one. */
struct again {
	void *e;
	struct bmc_endpoint ep;
	int rc;
	struct result first, second;
};

static void on_done_again(const struct bmc_reply *r, void *userdata)
{
	struct again *a = userdata;
	struct bmc_call c = { .cmd = BMC_CMD_POWER_GET };

	on_done(r, &a->first);
	a->rc = ops->submit(a->e, &a->ep, &c, on_done, &a->second);
}

START_TEST(test_free_resubmit)
{
	struct fake f;
	struct again a = { 0 };
	struct bmc_call c = { .cmd = BMC_CMD_POWER_GET };

	fake_init(&f);
	a.e = engine(200, 2);
	a.ep = endpoint(&f, 3);
	ck_assert_int_eq(ops->submit(a.e, &a.ep, &c, on_done_again, &a), 0);
	ops->process(a.e, bmc_now_ms()); /* sends; the fake never answers */
	ops->free(a.e, 0);
	ck_assert_uint_eq(a.first.count, 1);
	ck_assert_int_eq(a.first.reply.fail, BMC_FAIL_CANCELED);
	ck_assert_msg(a.rc < 0 || a.second.count == 1,
		      "submit() from a callback during free() returned %d, callback ran %u times",
		      a.rc, a.second.count);
	close(f.fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ipmi_engine");
	TCase *tc = tcase_create("ipmi_engine");
	size_t ng = sizeof(garbage) / sizeof(garbage[0]);

	tcase_set_timeout(tc, 120);
	UNIT_TEST(tc, test_good_suites);
	UNIT_TEST(tc, test_idle_clock);
	UNIT_TEST(tc, test_session_password);
	tcase_add_loop_test(tc, test_garbage_only, 0, (int)ng);
	tcase_add_loop_test(tc, test_garbage_then_good, 0, (int)ng);
	UNIT_TEST(tc, test_wrong_password);
	UNIT_TEST(tc, test_refused);
	UNIT_TEST(tc, test_session_reestablished);
	UNIT_TEST(tc, test_cannot);
	UNIT_TEST(tc, test_unknown_action);
	UNIT_TEST(tc, test_host_name);
	UNIT_TEST(tc, test_max_sessions);
	UNIT_TEST(tc, test_free_cancels);
	UNIT_TEST(tc, test_free_resubmit);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
