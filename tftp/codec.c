/* codec — TFTP packets over a byte cursor, and option negotiation.
 *
 * DESIGN: a request is read string by string, each string bounded by
 * what is left of the datagram and by its own limit; a string without its
 * NUL is a malformed packet, never read past. Numbers in option values go
 * through the one overflow-checked parser (common/num.h) after a check
 * that they are all digits. Options follow RFC 2347: names are
 * case-insensitive, unknown ones are ignored, and a value the server does
 * not accept leaves the option out of the OACK rather than failing the
 * transfer (the client then runs with the RFC 1350 defaults).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/cursor.h"
#include "common/num.h"
#include "tftp/tftp-codec.h"

const char *tftp_bad_name(enum tftp_bad why)
{
	static const char *const names[TFTP_BAD_MAX] = {
		[TFTP_BAD_SHORT] = "short",
		[TFTP_BAD_OPCODE] = "opcode",
		[TFTP_BAD_UNTERMINATED] = "unterminated",
		[TFTP_BAD_FILENAME] = "filename",
		[TFTP_BAD_MODE] = "mode",
		[TFTP_BAD_OPTIONS] = "options",
	};
	return why > 0 && why < TFTP_BAD_MAX ? names[why] : "unknown";
}

uint16_t tftp_opcode(const uint8_t *p, size_t n)
{
	return n >= 2 ? (uint16_t)(p[0] << 8 | p[1]) : 0;
}

static int bad(enum tftp_bad *why, enum tftp_bad w)
{
	if (why)
		*why = w;
	return -EBADMSG;
}

/* The next NUL-terminated string: its bytes (without the NUL) and length.
 * -EBADMSG when there is no NUL before the end. */
static int rd_cstr(struct rd *r, const char **ret, size_t *ret_len)
{
	const uint8_t *z = memchr(r->p, 0, r->len);
	const uint8_t *s;
	if (!z)
		return -EBADMSG;
	size_t n = (size_t)(z - r->p);
	if (rd_bytes(r, n + 1, &s) < 0)
		return -EBADMSG;
	*ret = (const char *)s;
	*ret_len = n;
	return 0;
}

static bool eq_nocase(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* One option value into o, within [min, max]. */
static void set_opt(struct tftp_opt *o, const char *v, size_t vn, uint64_t min, uint64_t max)
{
	uint64_t x;
	if (o->asked || o->invalid)
		return; /* the first one counts */
	bool digits = vn > 0;
	for (size_t i = 0; i < vn; i++)
		digits = digits && v[i] >= '0' && v[i] <= '9';
	if (!digits || num_parse_u64(v, vn, UINT64_MAX, &x) < 0 || x < min || x > max) {
		o->invalid = true;
		return;
	}
	o->asked = true;
	o->value = x;
}

int tftp_parse_request(const uint8_t *p, size_t n, struct tftp_request *ret,
		       enum tftp_bad *why)
{
	struct rd r = rd_init(p, n);
	struct tftp_request rq = { 0 };
	uint16_t op;
	const char *s, *v;
	size_t sn, vn;

	if (rd_be16(&r, &op) < 0)
		return bad(why, TFTP_BAD_SHORT);
	if (op != TFTP_RRQ && op != TFTP_WRQ)
		return bad(why, TFTP_BAD_OPCODE);
	rq.op = (enum tftp_op)op;
	if (rd_cstr(&r, &s, &sn) < 0)
		return bad(why, TFTP_BAD_UNTERMINATED);
	if (sn == 0 || sn > TFTP_FILENAME_MAX)
		return bad(why, TFTP_BAD_FILENAME);
	for (size_t i = 0; i < sn; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return bad(why, TFTP_BAD_FILENAME);
	memcpy(rq.filename, s, sn);
	rq.filename[sn] = '\0';
	if (rd_cstr(&r, &s, &sn) < 0)
		return bad(why, TFTP_BAD_UNTERMINATED);
	if (eq_nocase(s, sn, "octet"))
		rq.mode = TFTP_MODE_OCTET;
	else if (eq_nocase(s, sn, "netascii"))
		rq.mode = TFTP_MODE_NETASCII;
	else if (eq_nocase(s, sn, "mail"))
		rq.mode = TFTP_MODE_MAIL;
	else
		return bad(why, TFTP_BAD_MODE);
	for (int k = 0; r.len > 0; k++) {
		if (k == TFTP_MAX_OPTIONS)
			return bad(why, TFTP_BAD_OPTIONS);
		if (rd_cstr(&r, &s, &sn) < 0 || rd_cstr(&r, &v, &vn) < 0)
			return bad(why, TFTP_BAD_OPTIONS);
		if (sn == 0 || sn > TFTP_OPTION_MAX || vn > TFTP_OPTION_MAX)
			return bad(why, TFTP_BAD_OPTIONS);
		rq.any_option = true;
		if (eq_nocase(s, sn, "blksize"))
			set_opt(&rq.blksize, v, vn, TFTP_BLKSIZE_MIN, TFTP_BLKSIZE_MAX);
		else if (eq_nocase(s, sn, "tsize"))
			set_opt(&rq.tsize, v, vn, 0, UINT64_MAX);
		else if (eq_nocase(s, sn, "timeout"))
			set_opt(&rq.timeout, v, vn, TFTP_TIMEOUT_MIN, TFTP_TIMEOUT_MAX);
		else if (eq_nocase(s, sn, "windowsize"))
			set_opt(&rq.windowsize, v, vn, 1, TFTP_WINDOWSIZE_MAX);
	}
	*ret = rq;
	return 0;
}

int tftp_parse_ack(const uint8_t *p, size_t n, uint16_t *ret_block, enum tftp_bad *why)
{
	struct rd r = rd_init(p, n);
	uint16_t op, block;
	if (rd_be16(&r, &op) < 0 || (op == TFTP_ACK && rd_be16(&r, &block) < 0))
		return bad(why, TFTP_BAD_SHORT);
	if (op != TFTP_ACK)
		return bad(why, TFTP_BAD_OPCODE);
	/* Trailing bytes are tolerated: some clients pad small packets. */
	*ret_block = block;
	return 0;
}

int tftp_parse_error(const uint8_t *p, size_t n, uint16_t *ret_code, const char **ret_msg,
		     size_t *ret_len, enum tftp_bad *why)
{
	struct rd r = rd_init(p, n);
	uint16_t op, code;
	if (rd_be16(&r, &op) < 0 || (op == TFTP_ERROR && rd_be16(&r, &code) < 0))
		return bad(why, TFTP_BAD_SHORT);
	if (op != TFTP_ERROR)
		return bad(why, TFTP_BAD_OPCODE);
	const uint8_t *z = memchr(r.p, 0, r.len);
	*ret_code = code;
	*ret_msg = (const char *)r.p;
	*ret_len = z ? (size_t)(z - r.p) : r.len;
	return 0;
}

void tftp_negotiate(const struct tftp_request *rq, const struct tftp_limits *lim,
		    uint64_t file_size, struct tftp_granted *ret)
{
	struct tftp_granted g = {
		.blksize_v = TFTP_BLKSIZE_DEFAULT,
		.timeout_v = lim->timeout,
		.windowsize_v = 1,
	};
	if (rq->blksize.asked) {
		unsigned max = lim->blksize_max < TFTP_BLKSIZE_MIN ? TFTP_BLKSIZE_MIN :
			       lim->blksize_max > TFTP_BLKSIZE_MAX ? TFTP_BLKSIZE_MAX :
								     lim->blksize_max;
		g.blksize = true;
		g.blksize_v = rq->blksize.value < max ? (unsigned)rq->blksize.value : max;
	}
	if (rq->windowsize.asked) {
		unsigned max = lim->windowsize_max ? lim->windowsize_max : 1;
		g.windowsize = true;
		g.windowsize_v = rq->windowsize.value < max ? (unsigned)rq->windowsize.value : max;
	}
	if (rq->timeout.asked) {
		g.timeout = true;
		g.timeout_v = (unsigned)rq->timeout.value;
	}
	/* tsize in a read request asks for the size (RFC 2349 §3: the
	 * client sends 0). */
	if (rq->tsize.asked && rq->op == TFTP_RRQ) {
		g.tsize = true;
		g.tsize_v = file_size;
	}
	g.oack = g.blksize || g.windowsize || g.timeout || g.tsize;
	*ret = g;
}

size_t tftp_write_data_header(uint8_t *buf, size_t cap, uint16_t block)
{
	if (cap < 4)
		return 0;
	buf[0] = 0;
	buf[1] = TFTP_DATA;
	buf[2] = (uint8_t)(block >> 8);
	buf[3] = (uint8_t)block;
	return 4;
}

size_t tftp_write_ack(uint8_t *buf, size_t cap, uint16_t block)
{
	if (cap < 4)
		return 0;
	buf[0] = 0;
	buf[1] = TFTP_ACK;
	buf[2] = (uint8_t)(block >> 8);
	buf[3] = (uint8_t)block;
	return 4;
}

size_t tftp_write_error(uint8_t *buf, size_t cap, enum tftp_error code, const char *msg)
{
	size_t n = strnlen(msg, TFTP_ERRMSG_MAX);
	if (cap < 4 + n + 1)
		return 0;
	buf[0] = 0;
	buf[1] = TFTP_ERROR;
	buf[2] = 0;
	buf[3] = (uint8_t)code;
	memcpy(buf + 4, msg, n);
	buf[4 + n] = 0;
	return 4 + n + 1;
}

/* Appends "name\0value\0" at buf + *o. */
static bool put_pair(uint8_t *buf, size_t cap, size_t *o, const char *name, const char *value)
{
	size_t a = strlen(name) + 1, b = strlen(value) + 1;
	if (*o + a + b > cap)
		return false;
	memcpy(buf + *o, name, a);
	memcpy(buf + *o + a, value, b);
	*o += a + b;
	return true;
}

size_t tftp_write_oack(uint8_t *buf, size_t cap, const struct tftp_granted *g)
{
	char v[24];
	size_t o = 2;
	if (cap < 2)
		return 0;
	buf[0] = 0;
	buf[1] = TFTP_OACK;
	if (g->blksize) {
		snprintf(v, sizeof(v), "%u", g->blksize_v);
		if (!put_pair(buf, cap, &o, "blksize", v))
			return 0;
	}
	if (g->tsize) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)g->tsize_v);
		if (!put_pair(buf, cap, &o, "tsize", v))
			return 0;
	}
	if (g->timeout) {
		snprintf(v, sizeof(v), "%u", g->timeout_v);
		if (!put_pair(buf, cap, &o, "timeout", v))
			return 0;
	}
	if (g->windowsize) {
		snprintf(v, sizeof(v), "%u", g->windowsize_v);
		if (!put_pair(buf, cap, &o, "windowsize", v))
			return 0;
	}
	return o;
}

size_t tftp_write_request(uint8_t *buf, size_t cap, enum tftp_op op, const char *filename,
			  const char *mode, const char *const *opts, size_t nopts)
{
	size_t o = 2;
	if (cap < 2)
		return 0;
	buf[0] = 0;
	buf[1] = (uint8_t)op;
	if (!put_pair(buf, cap, &o, filename, mode))
		return 0;
	for (size_t i = 0; i + 1 < nopts * 2; i += 2)
		if (!put_pair(buf, cap, &o, opts[i], opts[i + 1]))
			return 0;
	return o;
}

size_t tftp_netascii(const uint8_t *in, size_t n, uint8_t *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i] == '\n' || in[i] == '\r') {
			if (out) {
				out[o] = '\r';
				out[o + 1] = in[i] == '\n' ? '\n' : '\0';
			}
			o += 2;
		} else {
			if (out)
				out[o] = in[i];
			o++;
		}
	}
	return o;
}
