/* dhcp-codec — the DHCPv4 codec, used inside dhcp/ and by its tests; the
 * part's public header is dhcp/dhcp.h.
 *
 * The codec is pure: bytes -> struct dhcp_packet (dhcp_parse) and struct
 * dhcp_reply -> bytes (dhcp_write). No sockets, no store, no logging above
 * debug. Both structs are plain values that a caller owns (no allocation
 * inside); they are a few kilobytes each, so keep them in the thread's own
 * state rather than on a small stack.
 *
 * Conventions: IPv4 addresses are uint32_t in host byte order
 * (10.0.0.1 == 0x0a000001). Option data stays (pointer, length) into the
 * packet that holds it; such pointers live as long as that packet. Every
 * accessor returns 0, -ENOENT when the option is absent, or -EBADMSG when it
 * is present but malformed (dhcp_opt_bad() says why).
 *
 * RFCs: 2131 (DHCP), 2132 (options), 3396 (long options), 3004 (user
 * class), 3046 (relay agent information), 3397 (domain search), 3442
 * (classless routes), 4578 (PXE options 93, 94, 97).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- limits ---- */

#define DHCP_MAX_PACKET 1500       /* default cap on an IP datagram we send (Ethernet MTU) */
#define DHCP_IP_UDP_HEADERS 28     /* IPv4 (no options) + UDP header bytes */
#define DHCP_MAX_MESSAGE 4096      /* largest DHCP message parsed or written */
#define DHCP_MAX_OPTION_BYTES 4096 /* option data held by one packet or reply */
#define DHCP_MIN_MAX_MESSAGE 576   /* RFC 2131 §2: the smallest datagram every client takes */
#define DHCP_BOOTP_MIN 300         /* RFC 1542 §3.3 (BOOTP) minimum message length */
#define DHCP_FIXED_LEN 236         /* op .. file */
#define DHCP_HEADER_LEN 240        /* fixed part + magic cookie */
#define DHCP_CHADDR_LEN 16
#define DHCP_SNAME_LEN 64
#define DHCP_FILE_LEN 128
#define DHCP_MAGIC 0x63825363u
#define DHCP_MAX_DOMAIN 255      /* encoded length of one domain name (RFC 1035 §2.3.4) */
#define DHCP_MAX_LABEL 63        /* one label */
#define DHCP_MAX_SEARCH 32       /* names in one domain search list (119) */
#define DHCP_MAX_ROUTES 64       /* routes in one option 121 */
#define DHCP_MAX_ADDRS 64        /* addresses in one address-list option */
#define DHCP_MAX_SUBOPTS 64      /* sub-options given to dhcp_reply_set_suboptions */

enum { DHCP_BOOTREQUEST = 1, DHCP_BOOTREPLY = 2 };
#define DHCP_FLAG_BROADCAST 0x8000

/* Option 53 (RFC 2132 §9.6, RFC 3203, RFC 4388, RFC 6926, RFC 7724). */
enum dhcp_msg_type {
	DHCP_NONE = 0,
	DHCP_DISCOVER = 1,
	DHCP_OFFER = 2,
	DHCP_REQUEST = 3,
	DHCP_DECLINE = 4,
	DHCP_ACK = 5,
	DHCP_NAK = 6,
	DHCP_RELEASE = 7,
	DHCP_INFORM = 8,
	DHCP_FORCERENEW = 9,
	DHCP_LEASEQUERY = 10,
	DHCP_LEASEUNASSIGNED = 11,
	DHCP_LEASEUNKNOWN = 12,
	DHCP_LEASEACTIVE = 13,
	DHCP_BULKLEASEQUERY = 14,
	DHCP_LEASEQUERYDONE = 15,
	DHCP_ACTIVELEASEQUERY = 16,
	DHCP_LEASEQUERYSTATUS = 17,
	DHCP_TLS = 18,
	DHCP_MSG_TYPE_MAX
};

/* Option codes the codec knows by name. */
enum {
	DHCP_OPT_PAD = 0,
	DHCP_OPT_SUBNET_MASK = 1,
	DHCP_OPT_ROUTER = 3,
	DHCP_OPT_DNS = 6,
	DHCP_OPT_LOG_SERVER = 7,
	DHCP_OPT_HOSTNAME = 12,
	DHCP_OPT_DOMAIN_NAME = 15,
	DHCP_OPT_BROADCAST = 28,
	DHCP_OPT_NTP = 42,
	DHCP_OPT_VENDOR_SPECIFIC = 43,
	DHCP_OPT_REQUESTED_IP = 50,
	DHCP_OPT_LEASE_TIME = 51,
	DHCP_OPT_OVERLOAD = 52,
	DHCP_OPT_MESSAGE_TYPE = 53,
	DHCP_OPT_SERVER_ID = 54,
	DHCP_OPT_PRL = 55,
	DHCP_OPT_MESSAGE = 56,
	DHCP_OPT_MAX_MESSAGE_SIZE = 57,
	DHCP_OPT_RENEWAL_TIME = 58,
	DHCP_OPT_REBINDING_TIME = 59,
	DHCP_OPT_VENDOR_CLASS = 60,
	DHCP_OPT_CLIENT_ID = 61,
	DHCP_OPT_TFTP_SERVER = 66,
	DHCP_OPT_BOOTFILE = 67,
	DHCP_OPT_USER_CLASS = 77,
	DHCP_OPT_FQDN = 81,
	DHCP_OPT_RELAY_AGENT = 82,
	DHCP_OPT_CLIENT_ARCH = 93,
	DHCP_OPT_CLIENT_NDI = 94,
	DHCP_OPT_CLIENT_GUID = 97,
	DHCP_OPT_DOMAIN_SEARCH = 119,
	DHCP_OPT_CLASSLESS_ROUTES = 121,
	DHCP_OPT_IPXE = 175,
	DHCP_OPT_END = 255
};

/* PXE sub-options of option 43 (PXE 2.1 spec). */
#define DHCP_PXE_DISCOVERY_CONTROL 6
#define DHCP_PXE_BOOT_MENU 9
#define DHCP_PXE_MENU_PROMPT 10

/* Why a packet, or one option in it, is malformed. A packet-level reason
 * makes dhcp_parse fail; an option-level one is kept per option (see
 * dhcp_opt_bad) and the option reads as malformed. */
enum dhcp_bad {
	DHCP_OK = 0,
	DHCP_BAD_TRUNCATED_HEADER, /* shorter than 240 bytes (fixed part + cookie) */
	DHCP_BAD_TOO_LONG,         /* longer than DHCP_MAX_MESSAGE */
	DHCP_BAD_OP,               /* op neither BOOTREQUEST nor BOOTREPLY */
	DHCP_BAD_HLEN,             /* hlen > 16 */
	DHCP_BAD_COOKIE,           /* no DHCP magic cookie (plain BOOTP is not served) */
	DHCP_BAD_OPTION_OVERRUN,   /* an option runs past the end of its region */
	DHCP_BAD_OVERLOAD,         /* option 52 with a bad length or value, or inside file/sname */
	DHCP_BAD_MISSING_END,      /* an overloaded file/sname region has no END */
	DHCP_BAD_OPTION_LENGTH,    /* length wrong for the option's type */
	DHCP_BAD_OPTION_VALUE,     /* length right, contents invalid */
	DHCP_BAD_SUBOPTION,        /* sub-options (82, PXE 43) do not parse */
	DHCP_BAD_NO_MESSAGE_TYPE,  /* no option 53 */
	DHCP_BAD_MESSAGE_TYPE,     /* option 53 outside 1..18 */
	DHCP_BAD_MAX
};

/* The reason's metric label: the enum name without DHCP_BAD_, in lower
 * case ("truncated_header"); "ok" for DHCP_OK; "unknown" out of range. */
const char *dhcp_bad_reason_name(enum dhcp_bad bad);

/* The message type's name in lower case ("discover", "ack"), for logs and
 * metric labels; "none" for 0, "unknown" out of range. */
const char *dhcp_msg_type_name(enum dhcp_msg_type t);

/* "a.b.c.d" of ip (host order, as everywhere here) into out. */
static inline void dhcp_ip_str(uint32_t ip, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

/* Options, indexed by code: each code's data is the concatenation, in
 * order, of every instance of it in the packet (RFC 3396), stored in data[].
 * Codes 0 and 255 are never present. */
struct dhcp_options {
	uint8_t present[32];  /* bitmap by code */
	uint16_t off[256];    /* offset of the code's data in data[] */
	uint16_t len[256];    /* its total length */
	uint8_t bad[256];     /* enum dhcp_bad per code (parsed packets only) */
	uint16_t used;        /* bytes of data[] in use */
	uint8_t data[DHCP_MAX_OPTION_BYTES];
};

/* A parsed message (usually a client's request). Filled by dhcp_parse;
 * treat as read-only afterwards. */
struct dhcp_packet {
	uint8_t op, htype, hlen, hops;
	uint32_t xid;
	uint16_t secs, flags;
	uint32_t ciaddr, yiaddr, siaddr, giaddr;
	uint8_t chaddr[DHCP_CHADDR_LEN]; /* hlen bytes meaningful, rest as received */
	uint8_t sname[DHCP_SNAME_LEN];   /* raw; holds options when overload & 2 */
	uint8_t file[DHCP_FILE_LEN];     /* raw; holds options when overload & 1 */
	uint8_t overload;                /* option 52's value: 0 (none), 1 file, 2 sname, 3 both */
	enum dhcp_msg_type msg_type;     /* option 53, always valid after a parse */
	size_t size;                     /* bytes received */
	struct dhcp_options opts;
};

/* Parses len bytes of a BOOTP/DHCP message into *ret (RFC 2131 §2, §4.1;
 * RFC 3396 concatenation; RFC 2132 §9.3 overload, options then file then
 * sname). Checks the header, cookie, option framing, option 53 and the
 * lengths of options that the packet cannot be understood without (50, 51,
 * 53, 54, 61: packet-level DHCP_BAD_OPTION_LENGTH); other known options
 * with a wrong length or value are marked per option and the parse
 * succeeds. Returns 0, or -EBADMSG and writes the reason to *ret_bad (may
 * be NULL); *ret is scribbled on either way. Both BOOTREQUEST and
 * BOOTREPLY parse; the caller filters on op. */
int dhcp_parse(const void *data, size_t len, struct dhcp_packet *ret, enum dhcp_bad *ret_bad);

/* ---- reading options of a parsed packet ---- */

bool dhcp_opt_present(const struct dhcp_packet *p, uint8_t code);
/* DHCP_OK when code is absent or well-formed, else why it is malformed. */
enum dhcp_bad dhcp_opt_bad(const struct dhcp_packet *p, uint8_t code);
/* Raw data of an option (even a malformed one): 0 or -ENOENT. */
int dhcp_opt_get(const struct dhcp_packet *p, uint8_t code, const uint8_t **ret, size_t *ret_len);
/* Fixed-size integers: exactly 1, 2 or 4 bytes, big-endian. */
int dhcp_opt_u8(const struct dhcp_packet *p, uint8_t code, uint8_t *ret);
int dhcp_opt_u16(const struct dhcp_packet *p, uint8_t code, uint16_t *ret);
int dhcp_opt_u32(const struct dhcp_packet *p, uint8_t code, uint32_t *ret);
/* One IPv4 address (exactly 4 bytes), e.g. 50, 54, 1, 28. */
int dhcp_opt_ip(const struct dhcp_packet *p, uint8_t code, uint32_t *ret);
/* A list of addresses (a non-zero multiple of 4 bytes), e.g. 3, 6, 42, 7.
 * Writes at most max; *ret_n is the number in the option (may be > max). */
int dhcp_opt_ips(const struct dhcp_packet *p, uint8_t code, uint32_t *ret, size_t max,
		 size_t *ret_n);
/* A non-empty string option (12, 15, 60, 66, 67): pointer and length, not
 * NUL-terminated; trailing NULs that some clients add are not counted. */
int dhcp_opt_string(const struct dhcp_packet *p, uint8_t code, const char **ret, size_t *ret_len);
/* Does option 60 start with prefix ("PXEClient", "HTTPClient")? */
bool dhcp_vendor_class_prefix(const struct dhcp_packet *p, const char *prefix);
/* Option 57 when well-formed (>= 576), else 576: the largest IP datagram
 * the client takes, IP and UDP headers included. */
uint16_t dhcp_max_message_size(const struct dhcp_packet *p);
/* Option 55: the codes, in the client's order (at least one). */
int dhcp_prl(const struct dhcp_packet *p, const uint8_t **ret, size_t *ret_len);
/* Option 61: type byte and identifier (at least 1 byte). */
int dhcp_client_id(const struct dhcp_packet *p, uint8_t *ret_type, const uint8_t **ret_id,
		   size_t *ret_len);
/* Option 77 carries s (exactly, case-sensitive) either as one of RFC 3004's
 * length-prefixed instances or as the whole option, the plain form iPXE
 * sends ("iPXE", "Tinkerbell"). */
bool dhcp_has_user_class(const struct dhcp_packet *p, const char *s);
/* Option 93 (RFC 4578 §2.1): architecture types, in order. Writes at most
 * max; *ret_n is the number in the option. */
int dhcp_client_arch(const struct dhcp_packet *p, uint16_t *ret, size_t max, size_t *ret_n);
/* Option 94 (RFC 4578 §2.2): type 1 (UNDI), major, minor. */
struct dhcp_ndi {
	uint8_t type, major, minor;
};
int dhcp_client_ndi(const struct dhcp_packet *p, struct dhcp_ndi *ret);
/* Option 97 (RFC 4578 §2.3): type 0 then a 16-byte GUID. */
int dhcp_client_guid(const struct dhcp_packet *p, uint8_t ret[16]);
/* Option 82 (RFC 3046): the raw bytes (to echo) and the circuit-id (1) and
 * remote-id (2) sub-options, each NULL/0 when absent. Pointers into p. */
struct dhcp_relay_info {
	const uint8_t *raw, *circuit_id, *remote_id;
	size_t raw_len, circuit_id_len, remote_id_len;
};
int dhcp_relay_info(const struct dhcp_packet *p, struct dhcp_relay_info *ret);
/* A PXE sub-option of option 43, when option 60 starts with "PXEClient":
 * 0, -ENOENT (absent, or not a PXE client), or -EBADMSG. */
int dhcp_pxe_subopt(const struct dhcp_packet *p, uint8_t sub, const uint8_t **ret,
		    size_t *ret_len);

/* Option 121 (RFC 3442): destination, prefix length 0..32, router. */
struct dhcp_route {
	uint32_t dest;
	uint8_t prefix;
	uint32_t router;
};
int dhcp_opt_routes(const struct dhcp_packet *p, struct dhcp_route *ret, size_t max,
		    size_t *ret_n);
/* Option 119 (RFC 3397): the names, dotted, without a trailing dot, each
 * NUL-terminated in a buffer of DHCP_MAX_DOMAIN + 1 bytes. */
int dhcp_opt_domain_search(const struct dhcp_packet *p, char (*ret)[DHCP_MAX_DOMAIN + 1],
			   size_t max, size_t *ret_n);

/* ---- building a reply ---- */

/* A message to send. Header fields go out as they are; options are set
 * through dhcp_reply_set*() and ordered by dhcp_write. A zeroed struct is
 * a valid empty reply. */
struct dhcp_reply {
	uint8_t op, htype, hlen, hops;
	uint32_t xid;
	uint16_t secs, flags;
	uint32_t ciaddr, yiaddr, siaddr, giaddr;
	uint8_t chaddr[DHCP_CHADDR_LEN];
	uint8_t sname[DHCP_SNAME_LEN]; /* all zero = unused (then free for overload) */
	uint8_t file[DHCP_FILE_LEN];   /* all zero = unused */
	uint8_t prl[255];              /* the client's option 55, for ordering */
	uint8_t prl_len;
	uint16_t max_ip_len; /* largest IP datagram to build (0: 576); see dhcp_write */
	uint8_t required[32]; /* bitmap: options never dropped to fit (53, 54, 51, 82 always) */
	struct dhcp_options opts;
};

/* Starts a reply to req (RFC 2131 §4.3.1 table 3): op BOOTREPLY; htype,
 * hlen, chaddr, xid, flags, giaddr copied; hops, secs, ciaddr, yiaddr,
 * siaddr zero; sname, file empty; option 53 = type; prl from req's 55;
 * max_ip_len = dhcp_max_message_size(req) capped at DHCP_MAX_PACKET. */
void dhcp_reply_init(struct dhcp_reply *r, const struct dhcp_packet *req, enum dhcp_msg_type type);

/* Sets option code (1..254, not 52, which dhcp_write owns) to len bytes,
 * replacing an earlier value. len may exceed 255 (split on write, RFC
 * 3396). Returns 0, -EINVAL, or -ENOSPC when the reply's option space
 * (DHCP_MAX_OPTION_BYTES) is used up. */
int dhcp_reply_set(struct dhcp_reply *r, uint8_t code, const void *data, size_t len);
void dhcp_reply_del(struct dhcp_reply *r, uint8_t code);
bool dhcp_reply_has(const struct dhcp_reply *r, uint8_t code);
/* Marks code as required: dhcp_write fails rather than drop it. */
void dhcp_reply_require(struct dhcp_reply *r, uint8_t code);
int dhcp_reply_set_u8(struct dhcp_reply *r, uint8_t code, uint8_t v);
int dhcp_reply_set_u16(struct dhcp_reply *r, uint8_t code, uint16_t v);
int dhcp_reply_set_u32(struct dhcp_reply *r, uint8_t code, uint32_t v); /* 51, 58, 59 */
int dhcp_reply_set_ip(struct dhcp_reply *r, uint8_t code, uint32_t ip); /* 1, 28, 50, 54 */
/* The lease time (51) and, unless it is infinite (UINT32_MAX), T1 (58)
 * at 50% and T2 (59) at 87.5% of it (RFC 2131 §4.4.5). 0, or -ENOSPC and
 * the reply unchanged. */
int dhcp_reply_set_lease(struct dhcp_reply *r, uint32_t lease);
/* 1..DHCP_MAX_ADDRS addresses (3, 6, 7, 42). */
int dhcp_reply_set_ips(struct dhcp_reply *r, uint8_t code, const uint32_t *ips, size_t n);
/* A non-empty NUL-terminated string, sent without the NUL (12, 15, 60, 66, 67). */
int dhcp_reply_set_string(struct dhcp_reply *r, uint8_t code, const char *s);
/* Option 119 from 1..DHCP_MAX_SEARCH dotted names (a trailing dot is
 * allowed), compressed as RFC 1035 §4.1.4 describes (RFC 3397 §2). -EINVAL
 * for an empty label, a label over 63 bytes or a name over 255. */
int dhcp_reply_set_domain_search(struct dhcp_reply *r, const char *const *names, size_t n);
/* Option 121 from 1..DHCP_MAX_ROUTES routes. -EINVAL for a prefix over 32
 * or a destination with bits set past its prefix. */
int dhcp_reply_set_routes(struct dhcp_reply *r, const struct dhcp_route *routes, size_t n);
/* An encapsulated option (43 for PXE, 175 for iPXE) from 1..DHCP_MAX_SUBOPTS
 * sub-options, in the given order, followed by a sub-option END (255) as
 * PXE 2.1 asks. Sub-option codes 1..254. */
struct dhcp_subopt {
	uint8_t code;
	uint8_t len;
	const uint8_t *data;
};
int dhcp_reply_set_suboptions(struct dhcp_reply *r, uint8_t code, const struct dhcp_subopt *subs,
			      size_t n);
/* Copies option code from req as received (61, 82, 97, ...). -ENOENT when
 * req does not have it. */
int dhcp_reply_echo(struct dhcp_reply *r, const struct dhcp_packet *req, uint8_t code);

/* What dhcp_write did to make the reply fit. */
struct dhcp_write_info {
	uint8_t overload;      /* option 52 written: 0, 1 (file), 2 (sname), 3 (both) */
	uint16_t ndropped;     /* optional options left out to fit */
	uint8_t dropped[256];  /* their codes, first dropped first */
};

/* Serializes r into buf (cap bytes). Options go out 53 and 54 first, then
 * the ones the client listed in 55 in its order, then the rest by code, and
 * 82 last before END (RFC 3046 §2.1); an option over 255 bytes is split
 * into instances (RFC 3396). The message is kept within max_ip_len - 28
 * bytes (max_ip_len 0 or below 576 counts as 576; at most DHCP_MAX_MESSAGE
 * + 28): when the options do not fit, they continue into file and/or sname
 * if the reply leaves them unused (option 52, RFC 2132 §9.3), else optional
 * options are dropped from the end of that order and listed in *ret_info
 * (may be NULL). The message is padded to 300 bytes. Returns the length
 * written, -ENOSPC when cap is too small for it, -EMSGSIZE when the
 * required options alone do not fit, or -EINVAL. */
int dhcp_write(const struct dhcp_reply *r, uint8_t *buf, size_t cap,
	       struct dhcp_write_info *ret_info);
