/* session — the protocol state machine of one IPMI 2.0 RMCP+ session of
 * the engine (engine.c): Get Channel Authentication Capabilities in an
 * IPMI v1.5 header (§22.13), Open Session (§13.17), RAKP 1-4 (§13.20-
 * 13.23), Set Session Privilege Level ADMINISTRATOR (§22.18), then the
 * commands of the calls queued on the session, one at a time: Get Chassis
 * Status (§28.2), Chassis Control (§28.3), Set System Boot Options
 * parameters 3 and 5 (§28.12), Get System Boot Options parameter 5
 * (§28.13); Close Session (§22.19).
 *
 * One message is in flight per session; the engine calls
 * ipmi_sess_timeout() at its deadline and ipmi_sess_rx() for each
 * datagram from its BMC. Every packet and payload is built and parsed by
 * the codec of ipmi.h; here are only the order of the messages, what a
 * reply means for the call, and retransmission: the first timeout is
 * settings.timeout_ms, doubled at each of settings.retries
 * retransmissions. A command in a session is sent again with a new
 * session sequence number and IV but the same rqSeq, so a late reply to
 * either copy answers it.
 *
 * A reply that does not parse, fails its integrity check, carries
 * another session ID, falls outside the replay window or answers another
 * rqSeq is dropped (it may be spoofed) and does not end the call; its
 * reason is kept for the timeout message. Two exceptions end the
 * handshake at once, as ipmitool does: a RAKP 2 whose HMAC does not
 * verify (the password is wrong) and a RAKP 4 whose check value does not
 * (the BMC key differs); a spoofed one can thus fail one call with
 * BMC_FAIL_AUTH, but cannot make one succeed.
 *
 * A command on a session that served earlier calls and that times out,
 * or is answered "insufficient privilege" (what some BMCs say once they
 * have dropped a session), gets the session set up again and is sent
 * once more before the call fails. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bmc/ipmi/engine-internal.h"

#define CC_INSUFFICIENT_PRIVILEGE 0xd4
/* ipmitool's parameter 3 write: mask and data bit 0, "BIOS/POST". */
#define BOOT_ACK_BIOS 0x01

/* RMCP+ status codes (§13.24). */
static const char *rmcpp_status(uint8_t st)
{
	static const char *const names[] = {
		[0x01] = "insufficient resources to create a session",
		[0x02] = "invalid session ID",
		[0x03] = "invalid payload type",
		[0x04] = "invalid authentication algorithm",
		[0x05] = "invalid integrity algorithm",
		[0x06] = "no matching authentication payload",
		[0x07] = "no matching integrity payload",
		[0x08] = "inactive session ID",
		[0x09] = "invalid role",
		[0x0a] = "unauthorized role or privilege level requested",
		[0x0b] = "insufficient resources to create a session at the requested role",
		[0x0c] = "invalid name length",
		[0x0d] = "unauthorized name",
		[0x0e] = "unauthorized GUID",
		[0x0f] = "invalid integrity check value",
		[0x10] = "invalid confidentiality algorithm",
		[0x11] = "no cipher suite match with proposed security algorithms",
		[0x12] = "illegal or unrecognized parameter",
	};
	if (st < sizeof(names) / sizeof(names[0]) && names[st])
		return names[st];
	return "unknown status";
}

/* Completion codes (§5.2, and §28.12's for boot options). */
static const char *completion_code(uint8_t cc)
{
	switch (cc) {
	case 0x80: return "parameter not supported";
	case 0x81: return "set in progress";
	case 0x82: return "write to read-only parameter";
	case 0xc0: return "node busy";
	case 0xc1: return "invalid command";
	case 0xc2: return "command invalid for given LUN";
	case 0xc3: return "timeout while processing command";
	case 0xc4: return "out of space";
	case 0xc5: return "reservation canceled or invalid";
	case 0xc6: return "request data truncated";
	case 0xc7: return "request data length invalid";
	case 0xc8: return "request data field length limit exceeded";
	case 0xc9: return "parameter out of range";
	case 0xca: return "cannot return number of requested data bytes";
	case 0xcb: return "requested data not present";
	case 0xcc: return "invalid data field";
	case 0xcd: return "command illegal for specified sensor or record type";
	case 0xce: return "command response could not be provided";
	case 0xcf: return "cannot execute duplicated request";
	case 0xd0: return "SDR repository in update mode";
	case 0xd1: return "device in firmware update mode";
	case 0xd2: return "BMC initialization in progress";
	case 0xd3: return "destination unavailable";
	case 0xd4: return "insufficient privilege level";
	case 0xd5: return "not supported in present state";
	case 0xd6: return "sub-function disabled or unavailable";
	case 0xff: return "unspecified error";
	default: return "unknown completion code";
	}
}

const char *ipmi_drop_reason(int err)
{
	switch (err) {
	case -EBADMSG: return "malformed or truncated";
	case -EMSGSIZE: return "oversized datagram";
	case -EPROTO: return "not RMCP+ (version, class or auth type)";
	case -ENOMSG: return "not the reply awaited (payload type, tag, command or rqSeq)";
	case -ESTALE: return "wrong session ID";
	case -EILSEQ: return "bad IPMI checksum";
	case -EACCES: return "bad integrity HMAC";
	case -ERANGE: return "sequence number outside the window";
	case -EALREADY: return "replayed sequence number";
	default: return "unreadable";
	}
}

/* Sends the message in flight (again), built afresh: a command gets a
 * new session sequence number and IV each time. */
static void send_msg(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now)
{
	uint8_t pkt[BMC_MAX_REPLY], pl[BMC_MAX_REPLY], iv[IPMI_AES_BLOCK];
	struct ipmi_wr w = ipmi_wr_init(pl, sizeof(pl));
	int n = -EINVAL;

	switch (s->ph) {
	case IPMI_PH_CAPS: n = ipmi_build_v15(pkt, sizeof(pkt), &s->rq); break;
	case IPMI_PH_OPEN:
	case IPMI_PH_RAKP1:
	case IPMI_PH_RAKP3:
		n = s->ph == IPMI_PH_OPEN  ? ipmi_open_req(&s->rakp, pl, sizeof(pl)) :
		    s->ph == IPMI_PH_RAKP1 ? ipmi_rakp1(&s->rakp, pl, sizeof(pl)) :
					     ipmi_rakp3(&s->rakp, pl, sizeof(pl));
		if (n >= 0)
			n = ipmi_wrap(NULL,
				      s->ph == IPMI_PH_OPEN  ? IPMI_PAYLOAD_OPEN_REQ :
				      s->ph == IPMI_PH_RAKP1 ? IPMI_PAYLOAD_RAKP1 :
							       IPMI_PAYLOAD_RAKP3,
				      0, 0, NULL, pl, (size_t)n, pkt, sizeof(pkt));
		break;
	case IPMI_PH_PRIV:
	case IPMI_PH_CMD:
	case IPMI_PH_CLOSE:
		ipmi_put_msg(&w, &s->rq);
		if (w.over || ipmi_random(iv, sizeof(iv)) < 0) {
			n = -EIO;
			break;
		}
		n = ipmi_wrap(&s->keys, IPMI_PAYLOAD_IPMI, s->rakp.bmc_sid, s->seq_out, iv, pl,
			      w.len, pkt, sizeof(pkt));
		/* §6.12.13: never 0, wrapping past 0xffffffff. */
		if (++s->seq_out == 0)
			s->seq_out = 1;
		break;
	case IPMI_PH_IDLE: return;
	}
	s->deadline = now + ((uint64_t)e->set.timeout_ms << (s->tries < 16 ? s->tries : 16));
	if (n < 0) {
		/* Cannot happen with the sizes above; the timeout ends it. */
		s->drop = "could not build the request";
		return;
	}
	/* The host cannot be reached (no route, ...): every call queued for
	 * it fails alike, and none starts another send from here. */
	if ((n = ipmi_engine_send(e, s, pkt, (size_t)n)) < 0 && s->ph != IPMI_PH_CLOSE)
		ipmi_call_fail_all(e, s, BMC_FAIL_NETWORK, "send to %s: %s", s->where,
				   strerror(-n));
}

static void start_msg(struct ipmi_engine *e, struct ipmi_sess *s, enum ipmi_phase ph,
		      const char *what, uint64_t now)
{
	s->ph = ph;
	s->what = what;
	s->tries = 0;
	s->drop = NULL;
	send_msg(e, s, now);
}

/* An IPMI request of s: a new rqSeq, data copied into s. */
static void set_req(struct ipmi_sess *s, uint8_t netfn, uint8_t cmd, const uint8_t *d, size_t n)
{
	s->rqseq = (uint8_t)((s->rqseq + 1) & 0x3f);
	if (n > sizeof(s->rqdata))
		n = sizeof(s->rqdata);
	if (n)
		memcpy(s->rqdata, d, n);
	s->rq = (struct ipmi_req){
		.netfn = netfn, .cmd = cmd, .rqseq = s->rqseq, .data = s->rqdata, .dlen = n
	};
}

static uint8_t boot_code(enum bmc_boot_device d)
{
	switch (d) {
	case BMC_BOOT_PXE: return IPMI_BOOTDEV_PXE;
	case BMC_BOOT_DISK: return IPMI_BOOTDEV_DISK;
	case BMC_BOOT_BIOS: return IPMI_BOOTDEV_BIOS;
	case BMC_BOOT_CDROM: return IPMI_BOOTDEV_CD;
	case BMC_BOOT_SAFE: return IPMI_BOOTDEV_SAFE;
	default: return IPMI_BOOTDEV_NONE;
	}
}

static bool boot_device(uint8_t code, enum bmc_boot_device *ret)
{
	switch (code) {
	case IPMI_BOOTDEV_NONE: *ret = BMC_BOOT_NONE; return true;
	case IPMI_BOOTDEV_PXE: *ret = BMC_BOOT_PXE; return true;
	case IPMI_BOOTDEV_DISK: *ret = BMC_BOOT_DISK; return true;
	case IPMI_BOOTDEV_SAFE: *ret = BMC_BOOT_SAFE; return true;
	case IPMI_BOOTDEV_CD: *ret = BMC_BOOT_CDROM; return true;
	case IPMI_BOOTDEV_BIOS: *ret = BMC_BOOT_BIOS; return true;
	default: return false;
	}
}

/* Sends the head call's command (its current step). */
static void start_cmd(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now)
{
	static const enum ipmi_chassis_ctl ctl[] = {
		[BMC_ACT_ON] = IPMI_CHASSIS_UP,
		[BMC_ACT_OFF] = IPMI_CHASSIS_DOWN,
		[BMC_ACT_SOFT] = IPMI_CHASSIS_SOFT,
		[BMC_ACT_CYCLE] = IPMI_CHASSIS_CYCLE,
		[BMC_ACT_RESET] = IPMI_CHASSIS_HARD_RESET,
	};
	const struct bmc_call *c = &s->head->call;
	uint8_t d[IPMI_MAX_DATA] = { 0 };
	const char *what = "?";
	size_t n = 0;

	switch (c->cmd) {
	case BMC_CMD_POWER_GET:
		set_req(s, IPMI_NETFN_CHASSIS, IPMI_CMD_CHASSIS_STATUS, d, 0);
		what = "Get Chassis Status";
		break;
	case BMC_CMD_POWER_SET:
		n = ipmi_chassis_control_req(d, (unsigned)c->action < 5 ? ctl[c->action] :
									  IPMI_CHASSIS_UP);
		set_req(s, IPMI_NETFN_CHASSIS, IPMI_CMD_CHASSIS_CONTROL, d, n);
		what = "Chassis Control";
		break;
	case BMC_CMD_BOOT_SET:
		if (s->head->step == 0) {
			n = ipmi_boot_ack_req(d, BOOT_ACK_BIOS, BOOT_ACK_BIOS);
			what = "Set System Boot Options (acknowledge)";
		} else {
			struct ipmi_boot_flags f = { .valid = true,
						     .persistent = c->boot.persistent,
						     .efi = c->boot.efi,
						     .device = boot_code(c->boot.device) };
			n = ipmi_boot_flags_req(d, &f);
			what = "Set System Boot Options";
		}
		set_req(s, IPMI_NETFN_CHASSIS, IPMI_CMD_SET_BOOT_OPTIONS, d, n);
		break;
	default: /* BOOT_GET; submit() refuses the others */
		n = ipmi_boot_get_req(d, IPMI_BOOT_PARAM_FLAGS);
		set_req(s, IPMI_NETFN_CHASSIS, IPMI_CMD_GET_BOOT_OPTIONS, d, n);
		what = "Get System Boot Options";
		break;
	}
	start_msg(e, s, IPMI_PH_CMD, what, now);
}

/* Starts the handshake: a slot, our session ID and Rm, then the
 * capabilities request. */
static void start_handshake(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now)
{
	uint8_t d[2], rm[IPMI_RANDOM_LEN];
	uint32_t sid = 0;
	int r;

	if (!s->counted) {
		if (e->counted >= e->set.max_sessions && !ipmi_engine_evict(e, now))
			return; /* waits for a slot: process() tries again */
		s->counted = true;
		e->counted++;
	}
	for (int i = 0; i < 4 && sid == 0; i++)
		if (ipmi_random(&sid, sizeof(sid)) < 0)
			break;
	if (sid == 0 || ipmi_random(rm, sizeof(rm)) < 0) {
		ipmi_call_fail_all(e, s, BMC_FAIL_PROTOCOL, "no random numbers for the session");
		return;
	}
	/* submit() checked the lengths; the password is copied into rakp and
	 * zeroed with it. */
	r = ipmi_rakp_init(&s->rakp, s->suite, sid, rm, s->user, s->password);
	if (r < 0) {
		ipmi_call_fail_all(e, s, BMC_FAIL_UNSUPPORTED, "user name or password too long");
		return;
	}
	s->rakp.tag = ++s->tag;
	set_req(s, IPMI_NETFN_APP, IPMI_CMD_GET_AUTH_CAPS, d, ipmi_auth_caps_req(d));
	start_msg(e, s, IPMI_PH_CAPS, "Get Channel Authentication Capabilities", now);
}

void ipmi_sess_advance(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now)
{
	if (s->ph != IPMI_PH_IDLE || !s->head || !s->have_addr)
		return;
	if (!s->up)
		start_handshake(e, s, now);
	else
		start_cmd(e, s, now);
}

void ipmi_sess_down(struct ipmi_engine *e, struct ipmi_sess *s)
{
	if (s->counted) {
		s->counted = false;
		e->counted--;
	}
	s->up = false;
	s->ph = IPMI_PH_IDLE;
	/* explicit_bzero: the password and the keys, even right before free(). */
	explicit_bzero(&s->rakp, sizeof(s->rakp));
	explicit_bzero(&s->keys, sizeof(s->keys));
	memset(&s->win, 0, sizeof(s->win));
}

void ipmi_sess_close(struct ipmi_engine *e, struct ipmi_sess *s, bool wait, uint64_t now)
{
	uint8_t d[4];

	if (!s->up)
		return;
	set_req(s, IPMI_NETFN_APP, IPMI_CMD_CLOSE_SESSION, d, ipmi_close_req(d, s->rakp.bmc_sid));
	start_msg(e, s, IPMI_PH_CLOSE, "Close Session", now);
	if (!wait)
		ipmi_sess_down(e, s);
}

/* The command in flight gave up or was refused as a session the BMC no
 * longer knows: set the session up again once for the head call. true
 * when that was done. */
static bool retry_fresh(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now)
{
	struct ipmi_call *c = s->head;

	if (c->fresh_session || c->retried)
		return false;
	c->retried = true;
	ipmi_sess_down(e, s);
	ipmi_sess_advance(e, s, now);
	return true;
}

void ipmi_sess_timeout(struct ipmi_engine *e, struct ipmi_sess *s, uint64_t now)
{
	if (s->tries < e->set.retries) {
		s->tries++;
		send_msg(e, s, now);
		return;
	}
	if (s->ph == IPMI_PH_CLOSE) {
		ipmi_sess_down(e, s);
		return;
	}
	char why[128] = "";
	if (s->drop)
		snprintf(why, sizeof(why), " (last reply dropped: %s)", s->drop);
	if (s->ph == IPMI_PH_CMD) {
		if (retry_fresh(e, s, now))
			return;
		/* The session may be gone: the next call sets up a new one. */
		ipmi_sess_down(e, s);
		ipmi_call_finish(e, s, BMC_FAIL_TIMEOUT, "no answer from %s after %u tries (%s)%s",
				 s->where, s->tries + 1, s->what, why);
		return;
	}
	ipmi_sess_down(e, s);
	ipmi_call_fail_all(e, s, BMC_FAIL_TIMEOUT, "no answer from %s after %u tries (%s)%s",
			   s->where, s->tries + 1, s->what, why);
}

/* An RMCP+ status in an Open Session or RAKP reply ends the handshake. */
static void handshake_refused(struct ipmi_engine *e, struct ipmi_sess *s, const char *msg,
			      uint8_t st)
{
	enum bmc_fail f = BMC_FAIL_REFUSED;
	const char *pre = "";

	switch (st) {
	case 0x04:
	case 0x05:
	case 0x06:
	case 0x07:
	case 0x10:
	case 0x11: f = BMC_FAIL_UNSUPPORTED; break;
	case 0x09:
	case 0x0a:
	case 0x0c:
	case 0x0d:
	case 0x0e:
	case 0x0f:
		f = BMC_FAIL_AUTH;
		pre = "authentication failed: ";
		break;
	}
	ipmi_sess_down(e, s);
	if (f == BMC_FAIL_UNSUPPORTED)
		ipmi_call_fail_all(e, s, f, "%s: cipher suite %u refused by %s: %s (status 0x%02x)",
				   msg, s->suite->id, s->where, rmcpp_status(st), st);
	else
		ipmi_call_fail_all(e, s, f, "%s%s: %s (status 0x%02x)", pre, msg, rmcpp_status(st),
				   st);
}

/* The handshake's pre-session replies. */
static int rx_handshake(struct ipmi_engine *e, struct ipmi_sess *s, const uint8_t *pkt, size_t len,
			uint64_t now)
{
	uint8_t buf[BMC_MAX_REPLY], st = 0;
	struct ipmi_auth_caps caps;
	struct ipmi_rsp rsp;
	struct ipmi_rx rx;
	int r;

	switch (s->ph) {
	case IPMI_PH_CAPS:
		if ((r = ipmi_parse_v15(pkt, len, &s->rq, &rsp)) < 0)
			return r;
		r = ipmi_auth_caps_parse(&rsp, &caps);
		if (r == -EREMOTEIO) {
			ipmi_sess_down(e, s);
			ipmi_call_fail_all(e, s, BMC_FAIL_REFUSED,
					   "%s: completion code 0x%02x (%s)", s->what, rsp.cc,
					   completion_code(rsp.cc));
			return 0;
		}
		if (r < 0)
			return r;
		if (!caps.v20) {
			ipmi_sess_down(e, s);
			ipmi_call_fail_all(e, s, BMC_FAIL_UNSUPPORTED,
					   "%s does not offer IPMI 2.0 (RMCP+) sessions", s->where);
			return 0;
		}
		start_msg(e, s, IPMI_PH_OPEN, "Open Session", now);
		return 0;
	case IPMI_PH_OPEN:
		if ((r = ipmi_unwrap(NULL, 0, IPMI_PAYLOAD_OPEN_RSP, pkt, len, buf, sizeof(buf),
				     &rx)) < 0)
			return r;
		r = ipmi_open_rsp(&s->rakp, rx.payload, rx.plen, &st);
		if (r == -ECONNREFUSED) {
			handshake_refused(e, s, "Open Session", st);
			return 0;
		}
		if (r < 0)
			return r;
		start_msg(e, s, IPMI_PH_RAKP1, "RAKP 1", now);
		return 0;
	case IPMI_PH_RAKP1:
		if ((r = ipmi_unwrap(NULL, 0, IPMI_PAYLOAD_RAKP2, pkt, len, buf, sizeof(buf),
				     &rx)) < 0)
			return r;
		r = ipmi_rakp2(&s->rakp, rx.payload, rx.plen, &s->keys, &st);
		if (r == -ECONNREFUSED) {
			handshake_refused(e, s, "RAKP 2", st);
			return 0;
		}
		if (r == -EACCES) {
			ipmi_sess_down(e, s);
			ipmi_call_fail_all(e, s, BMC_FAIL_AUTH,
					   "authentication failed: RAKP 2 HMAC does not verify "
					   "(wrong password for user \"%s\"?)",
					   s->user);
			return 0;
		}
		if (r < 0)
			return r;
		start_msg(e, s, IPMI_PH_RAKP3, "RAKP 3", now);
		return 0;
	default: /* IPMI_PH_RAKP3 */
		if ((r = ipmi_unwrap(NULL, 0, IPMI_PAYLOAD_RAKP4, pkt, len, buf, sizeof(buf),
				     &rx)) < 0)
			return r;
		r = ipmi_rakp4(&s->rakp, &s->keys, rx.payload, rx.plen, &st);
		if (r == -ECONNREFUSED) {
			handshake_refused(e, s, "RAKP 4", st);
			return 0;
		}
		if (r == -EACCES) {
			ipmi_sess_down(e, s);
			ipmi_call_fail_all(e, s, BMC_FAIL_AUTH,
					   "authentication failed: RAKP 4 check value does not "
					   "verify (a BMC key Kg set?)");
			return 0;
		}
		if (r < 0)
			return r;
		s->seq_out = 1;
		memset(&s->win, 0, sizeof(s->win));
		set_req(s, IPMI_NETFN_APP, IPMI_CMD_SET_PRIV, buf, ipmi_set_priv_req(buf));
		start_msg(e, s, IPMI_PH_PRIV, "Set Session Privilege Level", now);
		return 0;
	}
}

/* The reply to the head call's command. */
static void cmd_reply(struct ipmi_engine *e, struct ipmi_sess *s, const struct ipmi_rsp *rsp,
		      uint64_t now)
{
	struct ipmi_call *c = s->head;
	struct ipmi_chassis_status cs;
	struct ipmi_boot_flags bf;
	int r;

	s->ph = IPMI_PH_IDLE;
	if (rsp->cc == CC_INSUFFICIENT_PRIVILEGE && retry_fresh(e, s, now))
		return;
	if (c->call.cmd == BMC_CMD_BOOT_SET && c->step == 0) {
		/* Parameter 3 is optional (§28.12): many BMCs refuse it, and
		 * the flags are what counts. */
		c->step = 1;
		ipmi_sess_advance(e, s, now);
		return;
	}
	if (rsp->cc != 0) {
		ipmi_call_finish(e, s,
				 rsp->cc == 0xc1 || rsp->cc == 0x80 ? BMC_FAIL_UNSUPPORTED :
								      BMC_FAIL_REFUSED,
				 "%s: completion code 0x%02x (%s)", s->what, rsp->cc,
				 completion_code(rsp->cc));
		return;
	}
	switch (c->call.cmd) {
	case BMC_CMD_POWER_GET:
		if ((r = ipmi_chassis_status_parse(rsp, &cs)) < 0)
			goto bad;
		c->reply.power = cs.power_on ? BMC_POWER_ON : BMC_POWER_OFF;
		break;
	case BMC_CMD_BOOT_GET:
		if ((r = ipmi_boot_flags_parse(rsp, &bf)) < 0)
			goto bad;
		/* The device is reported whatever the valid bit says; only
		 * with it does the BMC vouch for it (boot_known). */
		if (boot_device(bf.device, &c->reply.boot.device)) {
			c->reply.boot.persistent = bf.persistent;
			c->reply.boot.efi = bf.efi;
			c->reply.boot_known = bf.valid;
		}
		break;
	default: break;
	}
	ipmi_call_finish(e, s, BMC_FAIL_NONE, "%s", "");
	return;
bad:
	ipmi_call_finish(e, s, BMC_FAIL_PROTOCOL, "%s: malformed reply from %s (%s)", s->what,
			 s->where, ipmi_drop_reason(r));
}

int ipmi_sess_rx(struct ipmi_engine *e, struct ipmi_sess *s, const uint8_t *pkt, size_t len,
		 uint64_t now)
{
	uint8_t buf[BMC_MAX_REPLY];
	struct ipmi_rsp rsp;
	struct ipmi_rx rx;
	int r;

	if (s->ph == IPMI_PH_IDLE)
		return -ENOMSG;
	if (s->ph < IPMI_PH_PRIV)
		return rx_handshake(e, s, pkt, len, now);
	if ((r = ipmi_unwrap(&s->keys, s->rakp.console_sid, IPMI_PAYLOAD_IPMI, pkt, len, buf,
			     sizeof(buf), &rx)) < 0)
		return r;
	if ((r = ipmi_window_accept(&s->win, rx.seq)) < 0)
		return r;
	if ((r = ipmi_parse_msg(rx.payload, rx.plen, &s->rq, &rsp)) < 0)
		return r;
	s->last_used = now;
	switch (s->ph) {
	case IPMI_PH_PRIV:
		r = ipmi_priv_parse(&rsp);
		if (r == -EBADMSG)
			return r;
		if (r < 0) {
			ipmi_sess_down(e, s);
			if (r == -EREMOTEIO)
				ipmi_call_fail_all(e, s, BMC_FAIL_AUTH,
						   "%s ADMINISTRATOR: completion code 0x%02x (%s)",
						   s->what, rsp.cc, completion_code(rsp.cc));
			else
				ipmi_call_fail_all(e, s, BMC_FAIL_AUTH,
						   "%s: the BMC did not grant ADMINISTRATOR",
						   s->what);
			return 0;
		}
		s->up = true;
		s->ph = IPMI_PH_IDLE;
		if (s->head)
			s->head->fresh_session = true;
		ipmi_sess_advance(e, s, now);
		return 0;
	case IPMI_PH_CLOSE: ipmi_sess_down(e, s); return 0;
	default: cmd_reply(e, s, &rsp, now); return 0;
	}
}
