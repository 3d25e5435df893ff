/* tftp-codec — the TFTP protocol (RFC 1350) with option negotiation (RFC 2347):
 * blksize (RFC 2348), tsize and timeout (RFC 2349), windowsize (RFC 7440).
 *
 * This header is the pure codec and the negotiation: packets in and out
 * over a byte cursor, and the options a request is granted, given the
 * server's limits. The server thread is tftp/tftp.h. No function
 * here opens a socket or a file, so tests and the fuzzer call them as they
 * are.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TFTP_PORT 69
#define TFTP_FILENAME_MAX 255     /* bytes of a requested file name */
#define TFTP_MAX_OPTIONS 16       /* options read from one request */
#define TFTP_OPTION_MAX 64        /* bytes of an option name or value */
#define TFTP_BLKSIZE_DEFAULT 512  /* RFC 1350 */
#define TFTP_BLKSIZE_MIN 8        /* RFC 2348 */
#define TFTP_BLKSIZE_MAX 65464    /* RFC 2348 */
#define TFTP_WINDOWSIZE_MAX 65535 /* RFC 7440 */
#define TFTP_TIMEOUT_MIN 1        /* seconds, RFC 2349 */
#define TFTP_TIMEOUT_MAX 255
#define TFTP_ERRMSG_MAX 255       /* bytes of an error message we send */
#define TFTP_PACKET_MAX (4 + TFTP_BLKSIZE_MAX) /* a DATA packet */

enum tftp_op {
	TFTP_RRQ = 1,
	TFTP_WRQ = 2,
	TFTP_DATA = 3,
	TFTP_ACK = 4,
	TFTP_ERROR = 5,
	TFTP_OACK = 6,
};

/* Error codes (RFC 1350 §5, RFC 2347). */
enum tftp_error {
	TFTP_ENOTDEFINED = 0, /* "see the message": busy, internal */
	TFTP_ENOTFOUND = 1,
	TFTP_EACCESS = 2,
	TFTP_ENOSPACE = 3,
	TFTP_EBADOP = 4,
	TFTP_EBADID = 5,
	TFTP_EEXISTS = 6,
	TFTP_ENOUSER = 7,
	TFTP_EOPTNEG = 8,
};

enum tftp_mode {
	TFTP_MODE_NETASCII,
	TFTP_MODE_OCTET,
	TFTP_MODE_MAIL,
	TFTP_MODE_MAX
};

/* Why a packet was refused, for the drop counters. */
enum tftp_bad {
	TFTP_BAD_SHORT = 1,     /* shorter than its opcode and fixed fields */
	TFTP_BAD_OPCODE,        /* not an opcode a server receives */
	TFTP_BAD_UNTERMINATED,  /* a string without its NUL */
	TFTP_BAD_FILENAME,      /* empty, too long, or with control bytes */
	TFTP_BAD_MODE,          /* not netascii, octet or mail */
	TFTP_BAD_OPTIONS,       /* an option without a value, too many, too long */
	TFTP_BAD_MAX
};
const char *tftp_bad_name(enum tftp_bad why);

/* An option as the client sent it. A value out of the RFC's range, or not
 * a number, leaves the option out of the request (asked = false) and sets
 * invalid: RFC 2347 lets the server ignore an option it does not accept. */
struct tftp_opt {
	bool asked;
	bool invalid;
	uint64_t value;
};

struct tftp_request {
	enum tftp_op op; /* TFTP_RRQ or TFTP_WRQ */
	char filename[TFTP_FILENAME_MAX + 1];
	enum tftp_mode mode;
	struct tftp_opt blksize, tsize, timeout, windowsize;
	bool any_option; /* any option at all, known or not */
};

/* Parses a request (RRQ or WRQ: opcode, filename, mode, then option name
 * and value pairs, every string NUL-terminated). Option names and modes
 * are case-insensitive; unknown options are skipped; a repeated option
 * keeps its first value. Returns 0, or -EBADMSG with *why set. */
int tftp_parse_request(const uint8_t *p, size_t n, struct tftp_request *ret,
		       enum tftp_bad *why);

/* Parses an ACK: its block number. 0 or -EBADMSG (*why set). */
int tftp_parse_ack(const uint8_t *p, size_t n, uint16_t *ret_block, enum tftp_bad *why);
/* Parses an ERROR: code and message (a pointer into p, *ret_len bytes, the
 * NUL not included; a missing NUL is accepted, many clients send none).
 * 0 or -EBADMSG. */
int tftp_parse_error(const uint8_t *p, size_t n, uint16_t *ret_code, const char **ret_msg,
		     size_t *ret_len, enum tftp_bad *why);
/* The opcode of a packet, or 0 when it has none. */
uint16_t tftp_opcode(const uint8_t *p, size_t n);

/* The server's limits, from the configuration and the path to the client. */
struct tftp_limits {
	unsigned blksize_max;    /* tftp.blksize_max, also bounded by the path MTU */
	unsigned windowsize_max; /* tftp.windowsize_max */
	unsigned timeout;        /* seconds, when the client asks none */
};

/* What a transfer runs with. */
struct tftp_granted {
	bool oack; /* an OACK is owed: some option was granted */
	bool blksize, tsize, timeout, windowsize; /* which ones */
	unsigned blksize_v;
	uint64_t tsize_v;
	unsigned timeout_v;
	unsigned windowsize_v;
};

/* The options of rq granted under lim for a file of file_size bytes (as
 * sent: after netascii conversion). blksize is clamped to the limit (RFC
 * 2348 lets the server answer a smaller one), windowsize too (RFC 7440),
 * timeout is granted as asked, tsize is answered with the size. */
void tftp_negotiate(const struct tftp_request *rq, const struct tftp_limits *lim,
		    uint64_t file_size, struct tftp_granted *ret);

/* ---- writing ---- (each returns the packet's length, or 0 when cap is
 * too small) */

/* A DATA header (the data goes at buf + 4). */
size_t tftp_write_data_header(uint8_t *buf, size_t cap, uint16_t block);
size_t tftp_write_ack(uint8_t *buf, size_t cap, uint16_t block);
/* An ERROR with msg cut to TFTP_ERRMSG_MAX bytes. */
size_t tftp_write_error(uint8_t *buf, size_t cap, enum tftp_error code, const char *msg);
/* An OACK of the granted options. */
size_t tftp_write_oack(uint8_t *buf, size_t cap, const struct tftp_granted *g);
/* An RRQ or WRQ (for tests and tools): opts is a list of nopts name,
 * value pairs. */
size_t tftp_write_request(uint8_t *buf, size_t cap, enum tftp_op op, const char *filename,
			  const char *mode, const char *const *opts, size_t nopts);

/* netascii (RFC 764 as RFC 1350 uses it): LF becomes CR LF, CR becomes
 * CR NUL. Returns the converted length of n bytes of in; writes them to
 * out when out is not NULL (out holds at least twice n). */
size_t tftp_netascii(const uint8_t *in, size_t n, uint8_t *out);
