/* codec — parsing DHCPv4 messages and reading their options.
 *
 * DESIGN: dhcp_parse() reads the fixed header through a struct rd cursor
 * (never a cast), then walks the option regions in RFC 2132 §9.3 order:
 * the options field, then file (overload 1 or 3), then sname (2 or 3).
 * The walk is done twice. The first pass checks the framing (an option
 * running past its region, option 52 anywhere but the options field, a
 * missing END in file/sname) and adds up each code's total length; the
 * second copies every instance of a code, in order, after the previous ones
 * (RFC 3396 concatenation) into the packet's own data[] buffer, at an
 * offset given by the first pass. The packet then owns all its option
 * bytes: a table indexed by code holds (offset, length), so every lookup is
 * O(1) and no pointer into the receive buffer survives the parse. The
 * input is capped at DHCP_MAX_MESSAGE bytes, so the concatenation always
 * fits DHCP_MAX_OPTION_BYTES.
 *
 * Each known option is then checked for its exact length and, where it
 * matters, its contents. Options that the message cannot be understood
 * without (53, 50, 51, 54, 61) fail the whole parse; for the others the
 * reason is recorded per option, the typed accessor returns -EBADMSG, and
 * the policy decides (a bad 97 only means "not a netboot client").
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/cursor.h"
#include "dhcp/dhcp-internal.h"

static const char *const bad_names[DHCP_BAD_MAX] = {
	[DHCP_OK] = "ok",
	[DHCP_BAD_TRUNCATED_HEADER] = "truncated_header",
	[DHCP_BAD_TOO_LONG] = "too_long",
	[DHCP_BAD_OP] = "op",
	[DHCP_BAD_HLEN] = "hlen",
	[DHCP_BAD_COOKIE] = "cookie",
	[DHCP_BAD_OPTION_OVERRUN] = "option_overrun",
	[DHCP_BAD_OVERLOAD] = "overload",
	[DHCP_BAD_MISSING_END] = "missing_end",
	[DHCP_BAD_OPTION_LENGTH] = "option_length",
	[DHCP_BAD_OPTION_VALUE] = "option_value",
	[DHCP_BAD_SUBOPTION] = "suboption",
	[DHCP_BAD_NO_MESSAGE_TYPE] = "no_message_type",
	[DHCP_BAD_MESSAGE_TYPE] = "message_type",
};

const char *dhcp_bad_reason_name(enum dhcp_bad bad)
{
	if ((unsigned)bad >= DHCP_BAD_MAX)
		return "unknown";
	return bad_names[bad];
}

const char *dhcp_msg_type_name(enum dhcp_msg_type t)
{
	static const char *const names[DHCP_MSG_TYPE_MAX] = {
		[DHCP_NONE] = "none",
		[DHCP_DISCOVER] = "discover",
		[DHCP_OFFER] = "offer",
		[DHCP_REQUEST] = "request",
		[DHCP_DECLINE] = "decline",
		[DHCP_ACK] = "ack",
		[DHCP_NAK] = "nak",
		[DHCP_RELEASE] = "release",
		[DHCP_INFORM] = "inform",
		[DHCP_FORCERENEW] = "forcerenew",
		[DHCP_LEASEQUERY] = "leasequery",
		[DHCP_LEASEUNASSIGNED] = "leaseunassigned",
		[DHCP_LEASEUNKNOWN] = "leaseunknown",
		[DHCP_LEASEACTIVE] = "leaseactive",
		[DHCP_BULKLEASEQUERY] = "bulkleasequery",
		[DHCP_LEASEQUERYDONE] = "leasequerydone",
		[DHCP_ACTIVELEASEQUERY] = "activeleasequery",
		[DHCP_LEASEQUERYSTATUS] = "leasequerystatus",
		[DHCP_TLS] = "tls",
	};
	return (unsigned)t < DHCP_MSG_TYPE_MAX ? names[t] : "unknown";
}

enum region { REGION_OPTIONS, REGION_FILE, REGION_SNAME };

struct walker {
	struct dhcp_options *o;
	bool copy;              /* second pass */
	uint8_t overload;       /* the last option 52 byte seen */
	uint16_t total[256];    /* first pass: bytes per code */
	uint16_t cursor[256];   /* second pass: next write offset per code */
};

/* Walks one region. The options field may end without END (the data ends
 * instead: some BOOTP-era relays and clients truncate after the last
 * option); file and sname are fixed-size fields and must hold an END. */
static enum dhcp_bad walk(struct walker *w, const uint8_t *p, size_t len, enum region region)
{
	struct rd r = rd_init(p, len);
	uint8_t code, olen;
	const uint8_t *data;

	while (rd_u8(&r, &code) == 0) {
		if (code == DHCP_OPT_PAD)
			continue;
		if (code == DHCP_OPT_END)
			return DHCP_OK;
		if (rd_u8(&r, &olen) < 0 || rd_bytes(&r, olen, &data) < 0)
			return DHCP_BAD_OPTION_OVERRUN;
		/* RFC 2132 §9.3: 52 only in the options field; one in file
		 * or sname would loop. */
		if (code == DHCP_OPT_OVERLOAD && region != REGION_OPTIONS)
			return DHCP_BAD_OVERLOAD;
		if (w->copy) {
			memcpy(w->o->data + w->cursor[code], data, olen);
			w->cursor[code] = (uint16_t)(w->cursor[code] + olen);
		} else {
			dhcp_bit_set(w->o->present, code);
			w->total[code] = (uint16_t)(w->total[code] + olen);
			if (code == DHCP_OPT_OVERLOAD && olen == 1)
				w->overload = data[0];
		}
	}
	return region == REGION_OPTIONS ? DHCP_OK : DHCP_BAD_MISSING_END;
}

static enum dhcp_bad walk_all(struct walker *w, const struct dhcp_packet *p, const uint8_t *opts,
			      size_t optlen)
{
	enum dhcp_bad bad = walk(w, opts, optlen, REGION_OPTIONS);
	if (bad)
		return bad;
	if (!w->copy && w->total[DHCP_OPT_OVERLOAD]) {
		if (w->total[DHCP_OPT_OVERLOAD] != 1 || w->overload < 1 || w->overload > 3)
			return DHCP_BAD_OVERLOAD;
	}
	if (w->overload & 1) {
		bad = walk(w, p->file, sizeof(p->file), REGION_FILE);
		if (bad)
			return bad;
	}
	if (w->overload & 2)
		bad = walk(w, p->sname, sizeof(p->sname), REGION_SNAME);
	return bad;
}

static bool strings_ok(const uint8_t *d, size_t n)
{
	return n >= 1;
}

static int decode_routes(const uint8_t *d, size_t n, struct dhcp_route *ret, size_t max,
			 size_t *ret_n);
static int decode_names(const uint8_t *d, size_t n, char (*ret)[DHCP_MAX_DOMAIN + 1], size_t max,
			size_t *ret_n);

/* The option-level check of one known option (RFC 2132 and the RFCs in
 * dhcp-codec.h); unknown codes are always DHCP_OK. */
static enum dhcp_bad check_option(const struct dhcp_packet *p, uint8_t code, const uint8_t *d,
				  size_t n)
{
	size_t cnt;

	switch (code) {
	case DHCP_OPT_SUBNET_MASK:
	case DHCP_OPT_BROADCAST:
	case DHCP_OPT_REQUESTED_IP:
	case DHCP_OPT_SERVER_ID:
	case DHCP_OPT_LEASE_TIME:
	case DHCP_OPT_RENEWAL_TIME:
	case DHCP_OPT_REBINDING_TIME:
		return n == 4 ? DHCP_OK : DHCP_BAD_OPTION_LENGTH;
	case DHCP_OPT_ROUTER:
	case DHCP_OPT_DNS:
	case DHCP_OPT_LOG_SERVER:
	case DHCP_OPT_NTP:
		return n >= 4 && n % 4 == 0 ? DHCP_OK : DHCP_BAD_OPTION_LENGTH;
	case DHCP_OPT_MESSAGE_TYPE:
		if (n != 1)
			return DHCP_BAD_OPTION_LENGTH;
		return d[0] >= 1 && d[0] < DHCP_MSG_TYPE_MAX ? DHCP_OK : DHCP_BAD_MESSAGE_TYPE;
	case DHCP_OPT_MAX_MESSAGE_SIZE:
		if (n != 2)
			return DHCP_BAD_OPTION_LENGTH;
		return (d[0] << 8 | d[1]) >= DHCP_MIN_MAX_MESSAGE ? DHCP_OK : DHCP_BAD_OPTION_VALUE;
	case DHCP_OPT_CLIENT_ID:
		return n >= 2 ? DHCP_OK : DHCP_BAD_OPTION_LENGTH;
	case DHCP_OPT_PRL:
	case DHCP_OPT_HOSTNAME:
	case DHCP_OPT_DOMAIN_NAME:
	case DHCP_OPT_VENDOR_CLASS:
	case DHCP_OPT_TFTP_SERVER:
	case DHCP_OPT_BOOTFILE:
	case DHCP_OPT_USER_CLASS:
	case DHCP_OPT_FQDN:
		return strings_ok(d, n) ? DHCP_OK : DHCP_BAD_OPTION_LENGTH;
	case DHCP_OPT_CLIENT_ARCH:
		return n >= 2 && n % 2 == 0 ? DHCP_OK : DHCP_BAD_OPTION_LENGTH;
	case DHCP_OPT_CLIENT_NDI:
		if (n != 3)
			return DHCP_BAD_OPTION_LENGTH;
		return d[0] == 1 ? DHCP_OK : DHCP_BAD_OPTION_VALUE;
	case DHCP_OPT_CLIENT_GUID:
		if (n != 17)
			return DHCP_BAD_OPTION_LENGTH;
		return d[0] == 0 ? DHCP_OK : DHCP_BAD_OPTION_VALUE;
	case DHCP_OPT_RELAY_AGENT:
		/* RFC 3046 §2.0: at least one sub-option. */
		if (n < 2)
			return DHCP_BAD_OPTION_LENGTH;
		return dhcp_subopt_find(d, n, 0, NULL, NULL) == 0 ? DHCP_OK : DHCP_BAD_SUBOPTION;
	case DHCP_OPT_VENDOR_SPECIFIC:
		if (!dhcp_vendor_class_prefix(p, "PXEClient"))
			return DHCP_OK;
		return dhcp_subopt_find(d, n, 0, NULL, NULL) == 0 ? DHCP_OK : DHCP_BAD_SUBOPTION;
	case DHCP_OPT_CLASSLESS_ROUTES:
		return decode_routes(d, n, NULL, 0, &cnt) == 0 ? DHCP_OK : DHCP_BAD_OPTION_VALUE;
	case DHCP_OPT_DOMAIN_SEARCH:
		return decode_names(d, n, NULL, 0, &cnt) == 0 ? DHCP_OK : DHCP_BAD_OPTION_VALUE;
	default:
		return DHCP_OK;
	}
}

/* Options without which the message cannot be handled at all. */
static bool fatal_option(uint8_t code)
{
	switch (code) {
	case DHCP_OPT_MESSAGE_TYPE:
	case DHCP_OPT_REQUESTED_IP:
	case DHCP_OPT_LEASE_TIME:
	case DHCP_OPT_SERVER_ID:
	case DHCP_OPT_CLIENT_ID:
		return true;
	default:
		return false;
	}
}

static enum dhcp_bad parse(const uint8_t *buf, size_t len, struct dhcp_packet *p)
{
	struct rd r = rd_init(buf, len);
	struct walker w = { .o = &p->opts };
	struct dhcp_options *o = &p->opts;
	uint32_t cookie;
	size_t off = 0;
	enum dhcp_bad bad;

	if (len > DHCP_MAX_MESSAGE)
		return DHCP_BAD_TOO_LONG;
	if (len < DHCP_HEADER_LEN)
		return DHCP_BAD_TRUNCATED_HEADER;
	memset(p, 0, offsetof(struct dhcp_packet, opts));
	memset(o, 0, offsetof(struct dhcp_options, data));
	p->size = len;
	/* The length was checked above; the cursor checks it again. */
	if (rd_u8(&r, &p->op) < 0 || rd_u8(&r, &p->htype) < 0 || rd_u8(&r, &p->hlen) < 0 ||
	    rd_u8(&r, &p->hops) < 0 || rd_be32(&r, &p->xid) < 0 || rd_be16(&r, &p->secs) < 0 ||
	    rd_be16(&r, &p->flags) < 0 || rd_be32(&r, &p->ciaddr) < 0 ||
	    rd_be32(&r, &p->yiaddr) < 0 || rd_be32(&r, &p->siaddr) < 0 ||
	    rd_be32(&r, &p->giaddr) < 0 || rd_copy(&r, p->chaddr, sizeof(p->chaddr)) < 0 ||
	    rd_copy(&r, p->sname, sizeof(p->sname)) < 0 ||
	    rd_copy(&r, p->file, sizeof(p->file)) < 0 || rd_be32(&r, &cookie) < 0)
		return DHCP_BAD_TRUNCATED_HEADER;
	if (p->op != DHCP_BOOTREQUEST && p->op != DHCP_BOOTREPLY)
		return DHCP_BAD_OP;
	if (p->hlen > DHCP_CHADDR_LEN)
		return DHCP_BAD_HLEN;
	if (cookie != DHCP_MAGIC)
		return DHCP_BAD_COOKIE;

	bad = walk_all(&w, p, r.p, r.len);
	if (bad)
		return bad;
	p->overload = w.overload;
	/* Lay the codes out in ascending order; the total is at most the
	 * input length, so it fits data[]. */
	uint8_t codes[254];
	unsigned n = dhcp_bits_list(o->present, codes);
	for (unsigned i = 0; i < n; i++) {
		uint8_t c = codes[i];
		o->off[c] = (uint16_t)off;
		o->len[c] = w.total[c];
		w.cursor[c] = (uint16_t)off;
		off += w.total[c];
	}
	o->used = (uint16_t)off;
	w.copy = true;
	return walk_all(&w, p, r.p, r.len); /* DHCP_OK: the first pass accepted it */
}

int dhcp_parse(const void *data, size_t len, struct dhcp_packet *ret, enum dhcp_bad *ret_bad)
{
	struct dhcp_options *o = &ret->opts;
	enum dhcp_bad bad = parse(data, len, ret);

	if (bad)
		goto out;
	uint8_t codes[254];
	unsigned n = dhcp_bits_list(o->present, codes);
	for (unsigned i = 0; i < n; i++) {
		uint8_t c = codes[i];
		o->bad[c] = (uint8_t)check_option(ret, c, o->data + o->off[c], o->len[c]);
		if (o->bad[c] && fatal_option(c)) {
			bad = o->bad[c];
			goto out;
		}
	}
	if (!dhcp_bit(o->present, DHCP_OPT_MESSAGE_TYPE)) {
		bad = DHCP_BAD_NO_MESSAGE_TYPE;
		goto out;
	}
	ret->msg_type = (enum dhcp_msg_type)o->data[o->off[DHCP_OPT_MESSAGE_TYPE]];
out:
	if (bad && ret_bad)
		*ret_bad = bad;
	return bad ? -EBADMSG : 0;
}

/* ---- sub-options, routes, names ---- */

int dhcp_subopt_find(const uint8_t *data, size_t len, uint8_t want, const uint8_t **ret,
		     size_t *ret_len)
{
	struct rd r = rd_init(data, len);
	const uint8_t *found = NULL, *d;
	size_t found_len = 0;
	uint8_t code, n;

	while (rd_u8(&r, &code) == 0 && code != DHCP_OPT_END) {
		if (code == DHCP_OPT_PAD)
			continue;
		if (rd_u8(&r, &n) < 0 || rd_bytes(&r, n, &d) < 0)
			return -EBADMSG;
		if (want && code == want && !found) {
			found = d;
			found_len = n;
		}
	}
	if (!want)
		return 0;
	if (!found)
		return -ENOENT;
	*ret = found;
	*ret_len = found_len;
	return 0;
}

/* RFC 3442 §3: width, the significant octets of the destination, router. */
static int decode_routes(const uint8_t *d, size_t n, struct dhcp_route *ret, size_t max,
			 size_t *ret_n)
{
	struct rd r = rd_init(d, n);
	size_t cnt = 0;
	uint8_t width;

	if (n == 0)
		return -EBADMSG;
	while (r.len) {
		uint8_t dest[4] = { 0 };
		uint32_t router;
		if (rd_u8(&r, &width) < 0 || width > 32)
			return -EBADMSG;
		if (rd_copy(&r, dest, (width + 7u) / 8) < 0 || rd_be32(&r, &router) < 0)
			return -EBADMSG;
		if (cnt < max) {
			ret[cnt].dest = (uint32_t)dest[0] << 24 | (uint32_t)dest[1] << 16 |
					(uint32_t)dest[2] << 8 | dest[3];
			ret[cnt].prefix = width;
			ret[cnt].router = router;
		}
		cnt++;
	}
	*ret_n = cnt;
	return 0;
}

/* One name of a compressed list (RFC 1035 §4.1.4) starting at *pos.
 * Loops are impossible: every pointer must go strictly below the start of
 * the labels being read, so targets decrease. */
static int decode_name(const uint8_t *d, size_t n, size_t *pos, char *out)
{
	size_t i = *pos, limit = *pos, next = 0, enc = 0, olen = 0;
	bool jumped = false;

	for (;;) {
		if (i >= n)
			return -EBADMSG;
		uint8_t c = d[i];
		if (c == 0) {
			if (!jumped)
				next = i + 1;
			break;
		}
		if ((c & 0xc0) == 0xc0) {
			if (i + 1 >= n)
				return -EBADMSG;
			size_t t = (size_t)(c & 0x3f) << 8 | d[i + 1];
			if (t >= limit)
				return -EBADMSG;
			if (!jumped)
				next = i + 2;
			jumped = true;
			limit = t;
			i = t;
			continue;
		}
		if (c & 0xc0)
			return -EBADMSG; /* 0x40 and 0x80 label types are reserved */
		if (c > n - i - 1)
			return -EBADMSG;
		enc += 1u + c;
		if (enc + 1 > DHCP_MAX_DOMAIN)
			return -EBADMSG;
		for (size_t k = 0; k < c; k++) {
			uint8_t ch = d[i + 1 + k];
			/* A dot or NUL inside a label has no dotted text form. */
			if (ch == '.' || ch == 0)
				return -EBADMSG;
		}
		if (out) {
			if (olen)
				out[olen++] = '.';
			memcpy(out + olen, d + i + 1, c);
			olen += c;
		}
		i += 1u + c;
	}
	if (enc == 0)
		return -EBADMSG; /* the root name is no search domain */
	if (out)
		out[olen] = '\0';
	*pos = next;
	return 0;
}

static int decode_names(const uint8_t *d, size_t n, char (*ret)[DHCP_MAX_DOMAIN + 1], size_t max,
			size_t *ret_n)
{
	size_t pos = 0, cnt = 0;

	if (n == 0)
		return -EBADMSG;
	while (pos < n) {
		int e = decode_name(d, n, &pos, cnt < max ? ret[cnt] : NULL);
		if (e < 0)
			return e;
		cnt++;
	}
	*ret_n = cnt;
	return 0;
}

/* ---- accessors ---- */

bool dhcp_opt_present(const struct dhcp_packet *p, uint8_t code)
{
	return dhcp_bit(p->opts.present, code);
}

enum dhcp_bad dhcp_opt_bad(const struct dhcp_packet *p, uint8_t code)
{
	if (!dhcp_bit(p->opts.present, code))
		return DHCP_OK;
	return (enum dhcp_bad)p->opts.bad[code];
}

int dhcp_opt_get(const struct dhcp_packet *p, uint8_t code, const uint8_t **ret, size_t *ret_len)
{
	if (!dhcp_bit(p->opts.present, code))
		return -ENOENT;
	*ret = p->opts.data + p->opts.off[code];
	*ret_len = p->opts.len[code];
	return 0;
}

/* The data of a present, well-formed option: 0, -ENOENT or -EBADMSG. */
static int opt_good(const struct dhcp_packet *p, uint8_t code, const uint8_t **ret, size_t *ret_len)
{
	int e = dhcp_opt_get(p, code, ret, ret_len);
	if (e < 0)
		return e;
	return p->opts.bad[code] ? -EBADMSG : 0;
}

/* An option of exactly n bytes, big-endian, whatever its code. */
static int opt_uint(const struct dhcp_packet *p, uint8_t code, size_t n, uint32_t *ret)
{
	const uint8_t *d;
	size_t len;
	uint32_t v = 0;
	int e = opt_good(p, code, &d, &len);

	if (e < 0)
		return e;
	if (len != n)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | d[i];
	*ret = v;
	return 0;
}

int dhcp_opt_u8(const struct dhcp_packet *p, uint8_t code, uint8_t *ret)
{
	uint32_t v;
	int e = opt_uint(p, code, 1, &v);
	if (e == 0)
		*ret = (uint8_t)v;
	return e;
}

int dhcp_opt_u16(const struct dhcp_packet *p, uint8_t code, uint16_t *ret)
{
	uint32_t v;
	int e = opt_uint(p, code, 2, &v);
	if (e == 0)
		*ret = (uint16_t)v;
	return e;
}

int dhcp_opt_u32(const struct dhcp_packet *p, uint8_t code, uint32_t *ret)
{
	return opt_uint(p, code, 4, ret);
}

int dhcp_opt_ip(const struct dhcp_packet *p, uint8_t code, uint32_t *ret)
{
	return opt_uint(p, code, 4, ret);
}

int dhcp_opt_ips(const struct dhcp_packet *p, uint8_t code, uint32_t *ret, size_t max,
		 size_t *ret_n)
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, code, &d, &len);

	if (e < 0)
		return e;
	if (len == 0 || len % 4)
		return -EBADMSG;
	struct rd r = rd_init(d, len);
	for (size_t i = 0; i < len / 4; i++) {
		uint32_t ip;
		if (rd_be32(&r, &ip) < 0)
			return -EBADMSG;
		if (i < max)
			ret[i] = ip;
	}
	*ret_n = len / 4;
	return 0;
}

int dhcp_opt_string(const struct dhcp_packet *p, uint8_t code, const char **ret, size_t *ret_len)
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, code, &d, &len);

	if (e < 0)
		return e;
	/* Client quirk: some (old Windows, some embedded stacks) count a
	 * terminating NUL in the option length. */
	while (len && d[len - 1] == 0)
		len--;
	if (len == 0)
		return -EBADMSG;
	*ret = (const char *)d;
	*ret_len = len;
	return 0;
}

bool dhcp_vendor_class_prefix(const struct dhcp_packet *p, const char *prefix)
{
	const uint8_t *d;
	size_t len, n = strlen(prefix);

	if (dhcp_opt_get(p, DHCP_OPT_VENDOR_CLASS, &d, &len) < 0)
		return false;
	return len >= n && memcmp(d, prefix, n) == 0;
}

uint16_t dhcp_max_message_size(const struct dhcp_packet *p)
{
	uint16_t v;

	if (dhcp_opt_u16(p, DHCP_OPT_MAX_MESSAGE_SIZE, &v) < 0 || v < DHCP_MIN_MAX_MESSAGE)
		return DHCP_MIN_MAX_MESSAGE;
	return v;
}

int dhcp_prl(const struct dhcp_packet *p, const uint8_t **ret, size_t *ret_len)
{
	return opt_good(p, DHCP_OPT_PRL, ret, ret_len);
}

int dhcp_client_id(const struct dhcp_packet *p, uint8_t *ret_type, const uint8_t **ret_id,
		   size_t *ret_len)
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, DHCP_OPT_CLIENT_ID, &d, &len);

	if (e < 0)
		return e;
	*ret_type = d[0];
	*ret_id = d + 1;
	*ret_len = len - 1;
	return 0;
}

bool dhcp_has_user_class(const struct dhcp_packet *p, const char *s)
{
	const uint8_t *d, *inst;
	size_t len, n = strlen(s);
	bool found = false;
	uint8_t ilen;

	if (dhcp_opt_get(p, DHCP_OPT_USER_CLASS, &d, &len) < 0 || n == 0)
		return false;
	/* The plain form: iPXE sends its user class as the whole option
	 * ("iPXE"), not as RFC 3004 length-prefixed instances. */
	if (len == n && memcmp(d, s, n) == 0)
		return true;
	/* RFC 3004 §2: instances of (length >= 1, data), filling the option
	 * exactly. A match counts only if the whole option has that form. */
	struct rd r = rd_init(d, len);
	while (r.len) {
		if (rd_u8(&r, &ilen) < 0 || ilen == 0 || rd_bytes(&r, ilen, &inst) < 0)
			return false;
		if (ilen == n && memcmp(inst, s, n) == 0)
			found = true;
	}
	return found;
}

int dhcp_client_arch(const struct dhcp_packet *p, uint16_t *ret, size_t max, size_t *ret_n)
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, DHCP_OPT_CLIENT_ARCH, &d, &len);

	if (e < 0)
		return e;
	struct rd r = rd_init(d, len);
	for (size_t i = 0; i < len / 2; i++) {
		uint16_t v;
		if (rd_be16(&r, &v) < 0)
			return -EBADMSG;
		if (i < max)
			ret[i] = v;
	}
	*ret_n = len / 2;
	return 0;
}

int dhcp_client_ndi(const struct dhcp_packet *p, struct dhcp_ndi *ret)
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, DHCP_OPT_CLIENT_NDI, &d, &len);

	if (e < 0)
		return e;
	ret->type = d[0];
	ret->major = d[1];
	ret->minor = d[2];
	return 0;
}

int dhcp_client_guid(const struct dhcp_packet *p, uint8_t ret[16])
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, DHCP_OPT_CLIENT_GUID, &d, &len);

	if (e < 0)
		return e;
	memcpy(ret, d + 1, 16);
	return 0;
}

int dhcp_relay_info(const struct dhcp_packet *p, struct dhcp_relay_info *ret)
{
	struct dhcp_relay_info ri = { 0 };
	int e = opt_good(p, DHCP_OPT_RELAY_AGENT, &ri.raw, &ri.raw_len);

	if (e < 0)
		return e;
	e = dhcp_subopt_find(ri.raw, ri.raw_len, 1, &ri.circuit_id, &ri.circuit_id_len);
	if (e < 0 && e != -ENOENT)
		return e;
	e = dhcp_subopt_find(ri.raw, ri.raw_len, 2, &ri.remote_id, &ri.remote_id_len);
	if (e < 0 && e != -ENOENT)
		return e;
	*ret = ri;
	return 0;
}

int dhcp_pxe_subopt(const struct dhcp_packet *p, uint8_t sub, const uint8_t **ret,
		    size_t *ret_len)
{
	const uint8_t *d;
	size_t len;
	int e;

	if (!dhcp_vendor_class_prefix(p, "PXEClient"))
		return -ENOENT;
	e = opt_good(p, DHCP_OPT_VENDOR_SPECIFIC, &d, &len);
	if (e < 0)
		return e;
	if (sub == DHCP_OPT_PAD || sub == DHCP_OPT_END)
		return -ENOENT;
	return dhcp_subopt_find(d, len, sub, ret, ret_len);
}

int dhcp_opt_routes(const struct dhcp_packet *p, struct dhcp_route *ret, size_t max,
		    size_t *ret_n)
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, DHCP_OPT_CLASSLESS_ROUTES, &d, &len);

	if (e < 0)
		return e;
	return decode_routes(d, len, ret, max, ret_n);
}

int dhcp_opt_domain_search(const struct dhcp_packet *p, char (*ret)[DHCP_MAX_DOMAIN + 1],
			   size_t max, size_t *ret_n)
{
	const uint8_t *d;
	size_t len;
	int e = opt_good(p, DHCP_OPT_DOMAIN_SEARCH, &d, &len);

	if (e < 0)
		return e;
	return decode_names(d, len, ret, max, ret_n);
}
