/* ipmi — private to bmc/: the IPMI 2.0 RMCP+ ("lanplus") client's pure
 * layer: the codec of every message it sends and receives (rmcp.c, msg.c)
 * and the RAKP handshake, key derivation, integrity and confidentiality
 * (rakp.c). No sockets, no clock, no randomness: the caller passes the
 * random numbers and IVs in, so tests and fuzzers drive it directly.
 *
 * Spec: IPMI v2.0 rev 1.1. Multi-byte fields of the IPMI session and of
 * IPMI payloads are little-endian (§13.6); RMCP and ASF are big-endian.
 *
 * Errors (negative errno), the same in every parser:
 *   -EBADMSG   truncated, or a length field that disagrees with the data,
 *              or bad confidentiality padding
 *   -EMSGSIZE  larger than BMC_MAX_REPLY, or an output buffer too small
 *   -EPROTO    wrong RMCP version or class, ASF IANA or type, auth type
 *   -ENOMSG    not the reply awaited: payload type, tag, command, rqSeq
 *   -ESTALE    a session ID that is not ours
 *   -EILSEQ    a bad IPMI message checksum
 *   -EACCES    a bad HMAC (RAKP 2/4 auth code, packet integrity) or a
 *              packet without integrity/confidentiality once they are on
 *   -ERANGE    a session sequence number outside the replay window
 *   -EALREADY  a session sequence number already seen (a replay)
 *   -ECONNREFUSED  an RMCP+ status code other than 0 (ret_status has it)
 *   -EREMOTEIO a completion code other than 0 (ret_cc has it)
 *   -EPERM     the BMC granted a privilege other than ADMINISTRATOR
 *   -EINVAL    a caller's argument (unknown suite, user name too long) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits. */
#define BMC_MAX_REPLY 1024   /* largest datagram accepted from a BMC */
#define IPMI_MAX_USER 16     /* §13.20: user name, bytes */
#define IPMI_MAX_PASSWORD 20 /* §13.31: Kuid, bytes */
#define IPMI_MAX_DATA 64     /* IPMI message data bytes we send/accept */
#define IPMI_RANDOM_LEN 16   /* Rm, Rc */
#define IPMI_GUID_LEN 16
#define IPMI_HMAC_MAX 32 /* SHA-256 */
#define IPMI_AES_BLOCK 16
#define IPMI_WINDOW 32 /* §6.12.13: the sliding window */

/* RMCP §13.1.3. */
#define RMCP_VERSION 0x06
#define RMCP_SEQ_NOACK 0xff
#define RMCP_CLASS_ASF 0x06
#define RMCP_CLASS_IPMI 0x07
#define ASF_IANA 4542u
#define ASF_TYPE_PING 0x80
#define ASF_TYPE_PONG 0x40

/* Session header §13.6. */
#define IPMI_AUTH_NONE 0x00
#define IPMI_AUTH_RMCPP 0x06
#define IPMI_PT_ENCRYPTED 0x80
#define IPMI_PT_AUTHENTICATED 0x40
enum ipmi_payload {
	IPMI_PAYLOAD_IPMI = 0x00,
	IPMI_PAYLOAD_OPEN_REQ = 0x10,
	IPMI_PAYLOAD_OPEN_RSP = 0x11,
	IPMI_PAYLOAD_RAKP1 = 0x12,
	IPMI_PAYLOAD_RAKP2 = 0x13,
	IPMI_PAYLOAD_RAKP3 = 0x14,
	IPMI_PAYLOAD_RAKP4 = 0x15,
};

/* Privilege levels §6.8. */
#define IPMI_PRIV_ADMIN 0x04

/* Net functions and commands. */
#define IPMI_NETFN_CHASSIS 0x00
#define IPMI_NETFN_APP 0x06
#define IPMI_CMD_CHASSIS_STATUS 0x01
#define IPMI_CMD_CHASSIS_CONTROL 0x02
#define IPMI_CMD_SET_BOOT_OPTIONS 0x08
#define IPMI_CMD_GET_BOOT_OPTIONS 0x09
#define IPMI_CMD_GET_AUTH_CAPS 0x38
#define IPMI_CMD_SET_PRIV 0x3b
#define IPMI_CMD_CLOSE_SESSION 0x3c
#define IPMI_BMC_ADDR 0x20
#define IPMI_CONSOLE_ADDR 0x81

/* A bounded write cursor: the builders append through it; once a write
 * does not fit, over is set and nothing more is written. */
struct ipmi_wr {
	uint8_t *p;
	size_t cap;
	size_t len;
	bool over;
};

static inline struct ipmi_wr ipmi_wr_init(void *p, size_t cap)
{
	return (struct ipmi_wr){ .p = p, .cap = cap };
}

/* ---- rmcp.c: RMCP, ASF, IPMI messages, the v1.5 null session ---- */

struct asf_pong {
	uint8_t tag;
	uint32_t iana;
	bool ipmi; /* supported entities bit 7 */
};

/* Builds an ASF presence ping (§13.2.3) with message tag. Bytes written,
 * or -EMSGSIZE. */
int ipmi_build_ping(uint8_t *out, size_t cap, uint8_t tag);
/* Parses a presence pong (§13.2.4) answering tag. 0 and *ret, or an error
 * of the table in this header. */
int ipmi_parse_pong(const uint8_t *pkt, size_t len, uint8_t tag, struct asf_pong *ret);

/* The IPMI message checksum (§13.8): the two's complement of the sum. */
uint8_t ipmi_checksum(const uint8_t *p, size_t n);

/* An IPMI request to the BMC (§13.8): rsAddr 0x20, rqAddr 0x81, LUN 0. */
struct ipmi_req {
	uint8_t netfn;
	uint8_t cmd;
	uint8_t rqseq; /* 6 bits */
	const uint8_t *data;
	size_t dlen; /* <= IPMI_MAX_DATA */
};
/* A response: data points into the parsed buffer (borrowed). */
struct ipmi_rsp {
	uint8_t cc;
	const uint8_t *data;
	size_t dlen;
};

/* Writes the IPMI message of rq into w (§13.8). */
void ipmi_put_msg(struct ipmi_wr *w, const struct ipmi_req *rq);
/* Parses the IPMI response message msg (len bytes) to rq: addresses, net
 * function rq->netfn + 1, command, rqSeq and both checksums checked. data
 * of *ret points into msg. */
int ipmi_parse_msg(const uint8_t *msg, size_t len, const struct ipmi_req *rq, struct ipmi_rsp *ret);

/* Builds a request outside any session, in an IPMI v1.5 header with auth
 * type none (§13.6, §22.13: Get Channel Authentication Capabilities is
 * sent so). Bytes written or -EMSGSIZE. */
int ipmi_build_v15(uint8_t *out, size_t cap, const struct ipmi_req *rq);
/* Parses a v1.5 auth-type-none reply to rq. ret->data points into pkt. */
int ipmi_parse_v15(const uint8_t *pkt, size_t len, const struct ipmi_req *rq, struct ipmi_rsp *ret);

/* ---- msg.c: the commands ---- */

struct ipmi_auth_caps {
	uint8_t channel;
	bool v20;        /* IPMI 2.0 extended capabilities (RMCP+) */
	bool anonymous;  /* anonymous login enabled */
	bool null_users; /* null user names enabled */
	bool kg_set;     /* a non-zero BMC key Kg is set */
	uint32_t oem_iana;
};
/* Request data of Get Channel Authentication Capabilities (§22.13): the
 * current channel, v2.0 data asked, privilege ADMINISTRATOR. 2 bytes. */
size_t ipmi_auth_caps_req(uint8_t out[2]);
int ipmi_auth_caps_parse(const struct ipmi_rsp *rsp, struct ipmi_auth_caps *ret);

struct ipmi_chassis_status {
	bool power_on;
	bool overload;
	bool interlock;
	bool power_fault;
	bool control_fault;
	uint8_t restore_policy; /* 0 off, 1 previous, 2 on, 3 unknown */
	uint8_t last_event;
	uint8_t misc;
};
/* Parses a Get Chassis Status response (§28.2). */
int ipmi_chassis_status_parse(const struct ipmi_rsp *rsp, struct ipmi_chassis_status *ret);

enum ipmi_chassis_ctl { /* §28.3 */
	IPMI_CHASSIS_DOWN = 0,
	IPMI_CHASSIS_UP = 1,
	IPMI_CHASSIS_CYCLE = 2,
	IPMI_CHASSIS_HARD_RESET = 3,
	IPMI_CHASSIS_SOFT = 5,
};

/* Chassis Control (§28.3) request data: the control byte. 1 byte. */
size_t ipmi_chassis_control_req(uint8_t out[1], enum ipmi_chassis_ctl ctl);
/* Set Session Privilege Level (§22.18) request data: ADMINISTRATOR. 1
 * byte. Its response is checked with ipmi_priv_parse(): -EREMOTEIO for a
 * completion code, -EPERM when the level granted is not the one asked. */
size_t ipmi_set_priv_req(uint8_t out[1]);
int ipmi_priv_parse(const struct ipmi_rsp *rsp);
/* Close Session (§22.19) request data: the BMC's session ID, 4 bytes. */
size_t ipmi_close_req(uint8_t out[4], uint32_t bmc_sid);

enum ipmi_bootdev { /* §28.13 parameter 5, data 2 bits 5:2 */
	IPMI_BOOTDEV_NONE = 0x0,
	IPMI_BOOTDEV_PXE = 0x1,
	IPMI_BOOTDEV_DISK = 0x2,
	IPMI_BOOTDEV_SAFE = 0x3,
	IPMI_BOOTDEV_CD = 0x5,
	IPMI_BOOTDEV_BIOS = 0x6,
};
struct ipmi_boot_flags {
	bool valid;
	bool persistent;
	bool efi;
	uint8_t device; /* enum ipmi_bootdev */
};
#define IPMI_BOOT_PARAM_ACK 3
#define IPMI_BOOT_PARAM_FLAGS 5
/* Set System Boot Options (§28.12) parameter 5 data: 6 bytes written. */
size_t ipmi_boot_flags_req(uint8_t out[6], const struct ipmi_boot_flags *f);
/* Parameter 3, boot info acknowledge: mask and data. 3 bytes written. */
size_t ipmi_boot_ack_req(uint8_t out[3], uint8_t mask, uint8_t data);
/* Get System Boot Options (§28.13) request data for param. 3 bytes. */
size_t ipmi_boot_get_req(uint8_t out[3], uint8_t param);
/* Parses a Get System Boot Options parameter 5 response. */
int ipmi_boot_flags_parse(const struct ipmi_rsp *rsp, struct ipmi_boot_flags *ret);

/* ---- rakp.c: Open Session, RAKP, keys, the session packet ---- */

struct ipmi_suite {
	uint8_t id;       /* 3 or 17 */
	uint8_t auth;     /* §13.28: 1 RAKP-HMAC-SHA1, 3 RAKP-HMAC-SHA256 */
	uint8_t integ;    /* §13.28.4: 1 HMAC-SHA1-96, 4 HMAC-SHA256-128 */
	uint8_t conf;     /* §13.28.5: 1 AES-CBC-128 */
	uint8_t hmac_len; /* 20 or 32: RAKP 2/3 codes, SIK, K1, K2 */
	uint8_t icv_len;  /* 12 or 16: RAKP 4 and the packet auth code */
};
/* Suite 3 or 17; NULL for any other. The returned suite is static. */
const struct ipmi_suite *ipmi_suite_get(unsigned id);

/* The handshake's state, filled by the caller (ids, randoms, user,
 * password, Kg) and by the parsers (BMC id, Rc, GUID, keys). */
struct ipmi_rakp {
	const struct ipmi_suite *suite;
	uint8_t tag;
	uint32_t console_sid; /* SIDm, ours */
	uint32_t bmc_sid;     /* SIDc */
	uint8_t rm[IPMI_RANDOM_LEN];
	uint8_t rc[IPMI_RANDOM_LEN];
	uint8_t guid[IPMI_GUID_LEN];
	uint8_t role; /* RAKP 1 byte 25: ADMINISTRATOR, bit 4 name-only lookup */
	uint8_t user[IPMI_MAX_USER];
	uint8_t ulen;
	uint8_t kuid[IPMI_MAX_PASSWORD];
	uint8_t kuid_len;
	uint8_t kg[IPMI_MAX_PASSWORD];
	uint8_t kg_len; /* 0: Kg is Kuid */
};

/* The session's keys (§13.31, §13.32). */
struct ipmi_keys {
	const struct ipmi_suite *suite;
	uint8_t sik[IPMI_HMAC_MAX];
	uint8_t k1[IPMI_HMAC_MAX];
	uint8_t k2[IPMI_HMAC_MAX];
};

/* Fills r for a handshake: suite, our session ID, Rm, user and password
 * (copied), role ADMINISTRATOR with name-only lookup (bit 4, §13.20: the
 * BMC finds the user by name, as other lanplus clients ask by default).
 * -EINVAL when user or password is too long, or sid is 0. */
int ipmi_rakp_init(struct ipmi_rakp *r, const struct ipmi_suite *suite, uint32_t console_sid,
		   const uint8_t rm[IPMI_RANDOM_LEN], const char *user, const char *password);

/* Sets the BMC key Kg (§13.31), copied: the SIK is then keyed with it
 * instead of Kuid. -EINVAL when longer than IPMI_MAX_PASSWORD. */
int ipmi_rakp_set_kg(struct ipmi_rakp *r, const uint8_t *kg, size_t len);

/* The payloads (§13.17, §13.20, §13.22): written to out; bytes or
 * -EMSGSIZE. */
int ipmi_open_req(const struct ipmi_rakp *r, uint8_t *out, size_t cap);
int ipmi_rakp1(const struct ipmi_rakp *r, uint8_t *out, size_t cap);
int ipmi_rakp3(const struct ipmi_rakp *r, uint8_t *out, size_t cap);
/* Parse the replies (§13.18, §13.21, §13.23) into r: tag and our session
 * ID checked, the suite's algorithms checked, RAKP 2's auth code and
 * RAKP 4's integrity check value verified. ret_status gets the RMCP+
 * status code when it is not 0. RAKP 2 also derives keys. */
int ipmi_open_rsp(struct ipmi_rakp *r, const uint8_t *p, size_t len, uint8_t *ret_status);
int ipmi_rakp2(struct ipmi_rakp *r, const uint8_t *p, size_t len, struct ipmi_keys *keys,
	       uint8_t *ret_status);
int ipmi_rakp4(const struct ipmi_rakp *r, const struct ipmi_keys *keys, const uint8_t *p,
	       size_t len, uint8_t *ret_status);
/* Derives SIK, K1, K2 from r (§13.31, §13.32). 0 or -EIO (libcrypto). */
int ipmi_derive_keys(const struct ipmi_rakp *r, struct ipmi_keys *ret);

/* AES-CBC-128 with the spec's padding (§13.29): out gets IV, then the
 * encrypted data + pad bytes 1, 2, ... + pad length. Bytes written. */
int ipmi_encrypt(const struct ipmi_keys *k, const uint8_t iv[IPMI_AES_BLOCK], const uint8_t *in,
		 size_t len, uint8_t *out, size_t cap);
/* Inverse of ipmi_encrypt; the padding is checked. Bytes of data. */
int ipmi_decrypt(const struct ipmi_keys *k, const uint8_t *in, size_t len, uint8_t *out,
		 size_t cap);

/* Wraps payload in an RMCP + IPMI 2.0 session header (§13.6). With keys
 * NULL (before the session is up): unauthenticated, session ID and
 * sequence 0 as §13.17-13.23 ask. With keys: encrypted with iv and
 * authenticated with K1 (integrity pad, pad length, next header 0x07,
 * auth code). Bytes written, or -EMSGSIZE / -EIO. */
int ipmi_wrap(const struct ipmi_keys *keys, uint8_t ptype, uint32_t bmc_sid, uint32_t seq,
	      const uint8_t iv[IPMI_AES_BLOCK], const uint8_t *payload, size_t plen, uint8_t *out,
	      size_t cap);

/* What ipmi_unwrap found; payload points into the caller's buffer. */
struct ipmi_rx {
	uint8_t ptype; /* enum ipmi_payload */
	uint32_t seq;
	const uint8_t *payload;
	size_t plen;
};
/* Parses a datagram from the BMC carrying a payload of type want (enum
 * ipmi_payload; -ENOMSG for another). With keys NULL only an
 * unauthenticated pre-session payload with session ID 0 is accepted; with
 * keys the packet must carry our session ID (console_sid), be
 * authenticated and encrypted, its auth code is checked (before anything
 * is decrypted) and the payload decrypted into buf (cap bytes). The
 * sequence number is returned, not checked: see ipmi_window_accept(). */
int ipmi_unwrap(const struct ipmi_keys *keys, uint32_t console_sid, uint8_t want,
		const uint8_t *pkt, size_t len, uint8_t *buf, size_t cap, struct ipmi_rx *ret);

/* The inbound sequence numbers of a session (§6.12.13): a window of 32
 * around the highest seen, up to 16 ahead and 15 behind, each accepted
 * once. seen bit i: top - i received. Zeroed: nothing seen yet. */
struct ipmi_window {
	uint32_t top;
	uint32_t seen; /* bit i: top - i received */
};
/* Checks seq against the window and records it. 0 (accepted), -ERANGE
 * (0, more than 16 ahead or 16 or more behind) or -EALREADY (a replay).
 * The first number of a session is taken as it comes (BMCs start where
 * they like); call this only for packets whose integrity was checked. */
int ipmi_window_accept(struct ipmi_window *w, uint32_t seq);
