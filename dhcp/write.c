/* write — building DHCPv4 replies: option encoders and the serializer.
 *
 * DESIGN: a struct dhcp_reply holds the header fields and an option table
 * by code (the same struct dhcp_options a parsed packet has), so the policy
 * sets options in any order and may replace them; the wire order is chosen
 * only by dhcp_write(): 53 and 54, then the client's parameter request list
 * order, then the rest by code, then 82 (RFC 3046 §2.1: last).
 *
 * Fitting is a small first-fit placement, tried in up to four layouts:
 * the options field alone, then with overload into file (52 = 1), sname
 * (2) or both (3) when the reply leaves those fields unused. Each option is
 * cut into instances of at most 255 bytes (RFC 3396); an instance goes to
 * the first region with room, never to a region before the one holding
 * the option's previous instance, so concatenation in options, file, sname
 * order (RFC 3396 §7) gives the value back. When no layout fits, the last
 * optional option in wire order is dropped and the placement is retried:
 * at most 254 rounds over at most DHCP_MAX_MESSAGE bytes. All work happens
 * in fixed buffers; nothing is allocated.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "dhcp/dhcp-internal.h"

/* ---- the option table ---- */

int dhcp_reply_set(struct dhcp_reply *r, uint8_t code, const void *data, size_t len)
{
	struct dhcp_options *o = &r->opts;

	if (code == DHCP_OPT_PAD || code == DHCP_OPT_END || code == DHCP_OPT_OVERLOAD)
		return -EINVAL;
	if (len && !data)
		return -EINVAL;
	/* A value replaced by one of the same length is overwritten where it
	 * is (each code's bytes are its own), so changing a set option, as
	 * dhcp_reply_set_lease does, cannot run out of room half-way. A
	 * value of another length goes at the end, and the old bytes are not
	 * reclaimed: the table is rebuilt per reply, so the waste is bounded
	 * by what one policy run sets. */
	if (len && dhcp_bit(o->present, code) && o->len[code] == len) {
		memcpy(o->data + o->off[code], data, len);
		o->bad[code] = DHCP_OK;
		return 0;
	}
	if (len > sizeof(o->data) - o->used)
		return -ENOSPC;
	if (len)
		memcpy(o->data + o->used, data, len);
	o->off[code] = o->used;
	o->len[code] = (uint16_t)len;
	o->bad[code] = DHCP_OK;
	o->used = (uint16_t)(o->used + len);
	dhcp_bit_set(o->present, code);
	return 0;
}

void dhcp_reply_del(struct dhcp_reply *r, uint8_t code)
{
	dhcp_bit_clear(r->opts.present, code);
}

bool dhcp_reply_has(const struct dhcp_reply *r, uint8_t code)
{
	return dhcp_bit(r->opts.present, code);
}

void dhcp_reply_require(struct dhcp_reply *r, uint8_t code)
{
	dhcp_bit_set(r->required, code);
}

void dhcp_reply_init(struct dhcp_reply *r, const struct dhcp_packet *req, enum dhcp_msg_type type)
{
	const uint8_t *prl;
	size_t n;

	memset(r, 0, offsetof(struct dhcp_reply, opts));
	memset(&r->opts, 0, offsetof(struct dhcp_options, data));
	r->op = DHCP_BOOTREPLY;
	r->htype = req->htype;
	r->hlen = req->hlen;
	r->xid = req->xid;
	r->flags = req->flags;
	r->giaddr = req->giaddr;
	memcpy(r->chaddr, req->chaddr, sizeof(r->chaddr));
	if (dhcp_prl(req, &prl, &n) == 0) {
		memcpy(r->prl, prl, n < sizeof(r->prl) ? n : sizeof(r->prl));
		r->prl_len = (uint8_t)(n < sizeof(r->prl) ? n : sizeof(r->prl));
	}
	r->max_ip_len = dhcp_max_message_size(req);
	if (r->max_ip_len > DHCP_MAX_PACKET)
		r->max_ip_len = DHCP_MAX_PACKET;
	(void)dhcp_reply_set_u8(r, DHCP_OPT_MESSAGE_TYPE, (uint8_t)type);
}

/* ---- encoders ---- */

int dhcp_reply_set_u8(struct dhcp_reply *r, uint8_t code, uint8_t v)
{
	return dhcp_reply_set(r, code, &v, 1);
}

int dhcp_reply_set_u16(struct dhcp_reply *r, uint8_t code, uint16_t v)
{
	uint8_t b[2];
	struct wr w = wr_init(b, sizeof(b));
	int e = wr_be16(&w, v);
	return e < 0 ? e : dhcp_reply_set(r, code, b, w.len);
}

int dhcp_reply_set_u32(struct dhcp_reply *r, uint8_t code, uint32_t v)
{
	uint8_t b[4];
	struct wr w = wr_init(b, sizeof(b));
	int e = wr_be32(&w, v);
	return e < 0 ? e : dhcp_reply_set(r, code, b, w.len);
}

int dhcp_reply_set_ip(struct dhcp_reply *r, uint8_t code, uint32_t ip)
{
	return dhcp_reply_set_u32(r, code, ip);
}

int dhcp_reply_set_lease(struct dhcp_reply *r, uint32_t lease)
{
	static const uint8_t codes[] = { DHCP_OPT_LEASE_TIME, DHCP_OPT_RENEWAL_TIME,
					 DHCP_OPT_REBINDING_TIME };
	const struct dhcp_options *o = &r->opts;
	size_t need = 0;
	int e;

	/* All or nothing: the room the options not yet 4 bytes long take. */
	for (size_t i = 0; i < (lease == UINT32_MAX ? 1 : sizeof(codes)); i++)
		if (!dhcp_bit(o->present, codes[i]) || o->len[codes[i]] != 4)
			need += 4;
	if (need > sizeof(o->data) - o->used)
		return -ENOSPC;
	e = dhcp_reply_set_u32(r, DHCP_OPT_LEASE_TIME, lease);
	if (e < 0 || lease == UINT32_MAX)
		return e;
	if ((e = dhcp_reply_set_u32(r, DHCP_OPT_RENEWAL_TIME, lease / 2)) < 0)
		return e;
	return dhcp_reply_set_u32(r, DHCP_OPT_REBINDING_TIME, (uint32_t)((uint64_t)lease * 7 / 8));
}

int dhcp_reply_set_ips(struct dhcp_reply *r, uint8_t code, const uint32_t *ips, size_t n)
{
	uint8_t b[4 * DHCP_MAX_ADDRS];
	struct wr w = wr_init(b, sizeof(b));

	if (n == 0 || n > DHCP_MAX_ADDRS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int e = wr_be32(&w, ips[i]);
		if (e < 0)
			return e;
	}
	return dhcp_reply_set(r, code, b, w.len);
}

int dhcp_reply_set_string(struct dhcp_reply *r, uint8_t code, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > DHCP_MAX_OPTION_BYTES)
		return -EINVAL;
	return dhcp_reply_set(r, code, s, n);
}

/* An already written name suffix, for compression: names[name] + pos,
 * len bytes of dotted text, written at offset off of the option data. */
struct suffix {
	uint8_t name, pos, len;
	uint16_t off;
};

#define SEARCH_MAX_BYTES 2048 /* encoded option 119; pointers reach 0x3fff */
#define SEARCH_MAX_SUFFIXES (SEARCH_MAX_BYTES / 2)

static size_t name_len(const char *s)
{
	size_t len = strlen(s);
	return len && s[len - 1] == '.' ? len - 1 : len;
}

int dhcp_reply_set_domain_search(struct dhcp_reply *r, const char *const *names, size_t n)
{
	static_assert(SEARCH_MAX_BYTES < 0x3fff, "compression pointers must reach");
	static_assert(DHCP_MAX_SEARCH <= 255, "suffix.name is a byte");
	uint8_t b[SEARCH_MAX_BYTES];
	struct suffix suf[SEARCH_MAX_SUFFIXES];
	size_t nsuf = 0;
	struct wr w = wr_init(b, sizeof(b));
	int e;

	if (n == 0 || n > DHCP_MAX_SEARCH)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const char *s = names[i];
		size_t len = name_len(s);
		/* Encoded: a length byte per label, the text without dots,
		 * and the root's zero: len + 2 bytes. */
		if (len == 0 || len + 2 > DHCP_MAX_DOMAIN)
			return -EINVAL;
		size_t pos = 0;
		bool pointed = false;
		while (pos < len) {
			/* RFC 1035 §4.1.4: the longest suffix already written
			 * becomes a pointer. Names compare case-blind. */
			for (size_t k = 0; k < nsuf && !pointed; k++) {
				const char *t = names[suf[k].name] + suf[k].pos;
				if (suf[k].len != len - pos || strncasecmp(t, s + pos, len - pos))
					continue;
				e = wr_be16(&w, (uint16_t)(0xc000 | suf[k].off));
				if (e < 0)
					return e;
				pointed = true;
			}
			if (pointed)
				break;
			const char *dot = memchr(s + pos, '.', len - pos);
			size_t lab = dot ? (size_t)(dot - (s + pos)) : len - pos;
			if (lab == 0 || lab > DHCP_MAX_LABEL)
				return -EINVAL;
			if (nsuf < SEARCH_MAX_SUFFIXES)
				suf[nsuf++] = (struct suffix){ (uint8_t)i, (uint8_t)pos,
							       (uint8_t)(len - pos), (uint16_t)w.len };
			e = wr_u8(&w, (uint8_t)lab);
			if (e == 0)
				e = wr_bytes(&w, s + pos, lab);
			if (e < 0)
				return e;
			pos += lab + (dot ? 1 : 0);
			if (dot && pos == len)
				return -EINVAL; /* "a..": an empty last label */
		}
		if (!pointed && (e = wr_u8(&w, 0)) < 0)
			return e;
	}
	return dhcp_reply_set(r, DHCP_OPT_DOMAIN_SEARCH, b, w.len);
}

int dhcp_reply_set_routes(struct dhcp_reply *r, const struct dhcp_route *routes, size_t n)
{
	uint8_t b[DHCP_MAX_ROUTES * 9];
	struct wr w = wr_init(b, sizeof(b));
	int e = 0;

	if (n == 0 || n > DHCP_MAX_ROUTES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct dhcp_route *rt = &routes[i];
		if (rt->prefix > 32)
			return -EINVAL;
		uint32_t mask = rt->prefix ? ~(uint32_t)0 << (32 - rt->prefix) : 0;
		if (rt->dest & ~mask)
			return -EINVAL;
		/* RFC 3442 §3: width, then only the significant octets. */
		e = wr_u8(&w, rt->prefix);
		for (unsigned k = 0; e == 0 && k < (rt->prefix + 7u) / 8; k++)
			e = wr_u8(&w, (uint8_t)(rt->dest >> (24 - 8 * k)));
		if (e == 0)
			e = wr_be32(&w, rt->router);
		if (e < 0)
			return e;
	}
	return dhcp_reply_set(r, DHCP_OPT_CLASSLESS_ROUTES, b, w.len);
}

int dhcp_reply_set_suboptions(struct dhcp_reply *r, uint8_t code, const struct dhcp_subopt *subs,
			      size_t n)
{
	uint8_t b[DHCP_MAX_SUBOPTS * 257 + 1];
	struct wr w = wr_init(b, sizeof(b));
	int e = 0;

	if (n == 0 || n > DHCP_MAX_SUBOPTS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (subs[i].code == DHCP_OPT_PAD || subs[i].code == DHCP_OPT_END)
			return -EINVAL;
		if (subs[i].len && !subs[i].data)
			return -EINVAL;
		e = wr_u8(&w, subs[i].code);
		if (e == 0)
			e = wr_u8(&w, subs[i].len);
		if (e == 0)
			e = wr_bytes(&w, subs[i].data, subs[i].len);
		if (e < 0)
			return e;
	}
	e = wr_u8(&w, DHCP_OPT_END);
	return e < 0 ? e : dhcp_reply_set(r, code, b, w.len);
}

int dhcp_reply_echo(struct dhcp_reply *r, const struct dhcp_packet *req, uint8_t code)
{
	const uint8_t *d;
	size_t len;
	int e = dhcp_opt_get(req, code, &d, &len);

	return e < 0 ? e : dhcp_reply_set(r, code, d, len);
}

/* ---- the serializer ---- */

enum { REG_OPTIONS, REG_FILE, REG_SNAME, REG_MAX };

struct layout {
	uint8_t opts[DHCP_MAX_MESSAGE];
	uint8_t file[DHCP_FILE_LEN];
	uint8_t sname[DHCP_SNAME_LEN];
	struct wr w[REG_MAX];
};

static bool required(const struct dhcp_reply *r, uint8_t code)
{
	return code == DHCP_OPT_MESSAGE_TYPE || code == DHCP_OPT_SERVER_ID ||
	       code == DHCP_OPT_LEASE_TIME || code == DHCP_OPT_RELAY_AGENT ||
	       dhcp_bit(r->required, code);
}

/* Bytes an option takes on the wire once split into 255-byte instances. */
static size_t wire_size(size_t len)
{
	return len == 0 ? 2 : len + 2 * ((len + 254) / 255);
}

static void order_add(const struct dhcp_reply *r, const uint8_t *dropped, uint8_t *seen,
		      uint8_t *order, size_t *n, uint8_t code)
{
	if (code == DHCP_OPT_PAD || code == DHCP_OPT_END || code == DHCP_OPT_OVERLOAD)
		return;
	if (!dhcp_bit(r->opts.present, code) || dhcp_bit(dropped, code) || dhcp_bit(seen, code))
		return;
	dhcp_bit_set(seen, code);
	order[(*n)++] = code;
}

/* The wire order: 53, 54, the client's 55 order, the rest by code, 82. */
static size_t build_order(const struct dhcp_reply *r, const uint8_t *dropped, uint8_t *order)
{
	uint8_t seen[32] = { 0 };
	size_t n = 0;

	dhcp_bit_set(seen, DHCP_OPT_RELAY_AGENT);
	order_add(r, dropped, seen, order, &n, DHCP_OPT_MESSAGE_TYPE);
	order_add(r, dropped, seen, order, &n, DHCP_OPT_SERVER_ID);
	for (size_t i = 0; i < r->prl_len; i++)
		order_add(r, dropped, seen, order, &n, r->prl[i]);
	for (unsigned c = 1; c < 255; c++)
		order_add(r, dropped, seen, order, &n, (uint8_t)c);
	dhcp_bit_clear(seen, DHCP_OPT_RELAY_AGENT);
	order_add(r, dropped, seen, order, &n, DHCP_OPT_RELAY_AGENT);
	return n;
}

/* Writes one option as instances of at most 255 bytes, each into the first
 * region from *reg on with room. -EMSGSIZE when one fits nowhere. */
static int place_opt(struct layout *l, unsigned *reg, unsigned last, uint8_t code,
		     const uint8_t *d, size_t len)
{
	size_t done = 0;

	do {
		size_t chunk = len - done > 255 ? 255 : len - done;
		while (*reg <= last && wr_room(&l->w[*reg]) < chunk + 2)
			(*reg)++;
		if (*reg > last)
			return -EMSGSIZE;
		struct wr *w = &l->w[*reg];
		(void)wr_u8(w, code);
		(void)wr_u8(w, (uint8_t)chunk);
		(void)wr_bytes(w, d + done, chunk);
		done += chunk;
	} while (done < len);
	return 0;
}

/* Tries one layout. opts_room is the options field's room, END excluded. */
static int place(const struct dhcp_reply *r, const uint8_t *order, size_t n, uint8_t overload,
		 size_t opts_room, struct layout *l)
{
	const struct dhcp_options *o = &r->opts;
	size_t reserve = overload ? 3 : 0;
	bool wrote52 = false;
	int e;

	if (n && order[n - 1] == DHCP_OPT_RELAY_AGENT)
		reserve += wire_size(o->len[DHCP_OPT_RELAY_AGENT]);
	if (reserve > opts_room)
		return -EMSGSIZE;
	l->w[REG_OPTIONS] = wr_init(l->opts, opts_room - reserve);
	/* file and sname keep one byte for their END. */
	l->w[REG_FILE] = wr_init(l->file, overload & 1 ? sizeof(l->file) - 1 : 0);
	l->w[REG_SNAME] = wr_init(l->sname, overload & 2 ? sizeof(l->sname) - 1 : 0);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = order[i];
		unsigned reg = REG_OPTIONS;
		if (overload && !wrote52 && c != DHCP_OPT_MESSAGE_TYPE && c != DHCP_OPT_SERVER_ID) {
			/* RFC 2132 §9.3: 52 in the options field; after 53/54. */
			l->w[REG_OPTIONS].cap += 3;
			if ((e = place_opt(l, &reg, REG_OPTIONS, DHCP_OPT_OVERLOAD, &overload, 1)) < 0)
				return e;
			wrote52 = true;
		}
		if (c == DHCP_OPT_RELAY_AGENT) {
			/* RFC 3046 §2.1: last, so in the options field. */
			l->w[REG_OPTIONS].cap += wire_size(o->len[c]);
			e = place_opt(l, &reg, REG_OPTIONS, c, o->data + o->off[c], o->len[c]);
		} else {
			e = place_opt(l, &reg, REG_SNAME, c, o->data + o->off[c], o->len[c]);
		}
		if (e < 0)
			return e;
	}
	if (overload && !wrote52)
		return -EMSGSIZE; /* nothing went past 53/54: no overload needed */
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* A region's content: its options, END, zeros to the field's size. */
static int wr_region(struct wr *w, const struct wr *reg, size_t size)
{
	int e = wr_bytes(w, reg->p, reg->len);
	if (e == 0)
		e = wr_u8(w, DHCP_OPT_END);
	if (e == 0)
		e = wr_zero(w, size - reg->len - 1);
	return e;
}

static int emit(const struct dhcp_reply *r, const struct layout *l, uint8_t overload, uint8_t *buf,
		size_t cap)
{
	struct wr w = wr_init(buf, cap);
	int e;

	if ((e = wr_u8(&w, r->op)) < 0 || (e = wr_u8(&w, r->htype)) < 0 ||
	    (e = wr_u8(&w, r->hlen)) < 0 || (e = wr_u8(&w, r->hops)) < 0 ||
	    (e = wr_be32(&w, r->xid)) < 0 || (e = wr_be16(&w, r->secs)) < 0 ||
	    (e = wr_be16(&w, r->flags)) < 0 || (e = wr_be32(&w, r->ciaddr)) < 0 ||
	    (e = wr_be32(&w, r->yiaddr)) < 0 || (e = wr_be32(&w, r->siaddr)) < 0 ||
	    (e = wr_be32(&w, r->giaddr)) < 0 || (e = wr_bytes(&w, r->chaddr, DHCP_CHADDR_LEN)) < 0)
		return e;
	if (overload & 2)
		e = wr_region(&w, &l->w[REG_SNAME], DHCP_SNAME_LEN);
	else
		e = wr_bytes(&w, r->sname, DHCP_SNAME_LEN);
	if (e < 0)
		return e;
	if (overload & 1)
		e = wr_region(&w, &l->w[REG_FILE], DHCP_FILE_LEN);
	else
		e = wr_bytes(&w, r->file, DHCP_FILE_LEN);
	if (e < 0)
		return e;
	if ((e = wr_be32(&w, DHCP_MAGIC)) < 0 ||
	    (e = wr_bytes(&w, l->opts, l->w[REG_OPTIONS].len)) < 0 ||
	    (e = wr_u8(&w, DHCP_OPT_END)) < 0)
		return e;
	/* RFC 1542 §3.3: relays and old clients expect at least 300 bytes. */
	if (w.len < DHCP_BOOTP_MIN && (e = wr_zero(&w, DHCP_BOOTP_MIN - w.len)) < 0)
		return e;
	return (int)w.len;
}

int dhcp_write(const struct dhcp_reply *r, uint8_t *buf, size_t cap,
	       struct dhcp_write_info *ret_info)
{
	static const uint8_t layouts[] = { 0, 1, 2, 3 };
	struct layout l;
	uint8_t order[256], dropped[32] = { 0 };
	struct dhcp_write_info info = { 0 };
	size_t max_ip = r->max_ip_len, n;
	bool file_free = all_zero(r->file, sizeof(r->file));
	bool sname_free = all_zero(r->sname, sizeof(r->sname));

	if ((r->op != DHCP_BOOTREQUEST && r->op != DHCP_BOOTREPLY) || r->hlen > DHCP_CHADDR_LEN)
		return -EINVAL;
	if (!dhcp_bit(r->opts.present, DHCP_OPT_MESSAGE_TYPE))
		return -EINVAL;
	if (max_ip < DHCP_MIN_MAX_MESSAGE)
		max_ip = DHCP_MIN_MAX_MESSAGE;
	if (max_ip > DHCP_MAX_MESSAGE + DHCP_IP_UDP_HEADERS)
		max_ip = DHCP_MAX_MESSAGE + DHCP_IP_UDP_HEADERS;
	/* Room for options: the message limit less header, cookie and END. */
	size_t opts_room = max_ip - DHCP_IP_UDP_HEADERS - DHCP_HEADER_LEN - 1;

	for (unsigned round = 0; round < 256; round++) {
		n = build_order(r, dropped, order);
		for (size_t i = 0; i < sizeof(layouts); i++) {
			uint8_t ov = layouts[i];
			if (((ov & 1) && !file_free) || ((ov & 2) && !sname_free))
				continue;
			if (place(r, order, n, ov, opts_room, &l) < 0)
				continue;
			int len = emit(r, &l, ov, buf, cap);
			if (len >= 0 && ret_info) {
				info.overload = ov;
				*ret_info = info;
			}
			return len;
		}
		/* Drop the optional option last in wire order. */
		size_t i = n;
		while (i > 0 && required(r, order[i - 1]))
			i--;
		if (i == 0)
			return -EMSGSIZE;
		dhcp_bit_set(dropped, order[i - 1]);
		info.dropped[info.ndropped++] = order[i - 1];
	}
	return -EMSGSIZE;
}
