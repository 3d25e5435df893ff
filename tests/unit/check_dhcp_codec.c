/* check_dhcp_codec — the DHCPv4 codec (dhcp/codec.c, dhcp/write.c): good
 * and malformed packets built byte by byte, exact reply bytes, round trips. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "dhcp/dhcp-codec.h"
#include "tests/unit/dhcp_builder.h"
#include "tests/unit/unit.h"

/* ---- building test packets byte by byte (dhcp_builder.h) ---- */

static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

/* The 236-byte fixed part and the cookie of a BOOTREQUEST from mac. */
static void tp_header(struct tp *t, uint32_t giaddr)
{
	t->len = 0;
	tp_byte(t, 1);            /* op */
	tp_byte(t, 1);            /* htype ethernet */
	tp_byte(t, 6);            /* hlen */
	tp_byte(t, giaddr ? 1 : 0); /* hops */
	tp_be32(t, 0xdeadbeef);   /* xid */
	tp_byte(t, 0);            /* secs */
	tp_byte(t, 4);
	tp_byte(t, 0x80);         /* flags: broadcast */
	tp_byte(t, 0);
	tp_be32(t, 0);            /* ciaddr */
	tp_be32(t, 0);            /* yiaddr */
	tp_be32(t, 0);            /* siaddr */
	tp_be32(t, giaddr);
	tp_bytes(t, mac, 6);
	while (t->len < 236)
		tp_byte(t, 0);    /* chaddr padding, sname, file */
	tp_be32(t, DHCP_MAGIC);
}

static struct dhcp_packet pkt, pkt2;
static struct dhcp_reply rep;
static uint8_t out[DHCP_MAX_MESSAGE];

static void parse_ok(const struct tp *t)
{
	enum dhcp_bad bad = DHCP_OK;
	int e = dhcp_parse(t->b, t->len, &pkt, &bad);
	ck_assert_msg(e == 0, "parse failed: %s", dhcp_bad_reason_name(bad));
}

/* ---- good packets ---- */

static void pxe_discover(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_opt(t, 57, 2, 0x04, 0xec); /* 1260 */
	tp_opt(t, 55, 8, 1, 3, 6, 43, 60, 66, 67, 121);
	tp_opt(t, 93, 2, 0, 7);
	tp_opt(t, 94, 3, 1, 3, 16);
	tp_opt(t, 97, 17, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
	tp_opt_str(t, 60, "PXEClient:Arch:00007:UNDI:003016");
	tp_byte(t, 255);
}

START_TEST(test_pxe_discover)
{
	struct tp t;
	pxe_discover(&t);
	parse_ok(&t);
	ck_assert_int_eq(pkt.op, 1);
	ck_assert_int_eq(pkt.hlen, 6);
	ck_assert_uint_eq(pkt.xid, 0xdeadbeef);
	ck_assert_uint_eq(pkt.secs, 4);
	ck_assert_uint_eq(pkt.flags, DHCP_FLAG_BROADCAST);
	ck_assert_mem_eq(pkt.chaddr, mac, 6);
	ck_assert_int_eq(pkt.msg_type, DHCP_DISCOVER);
	ck_assert_uint_eq(dhcp_max_message_size(&pkt), 1260);
	const uint8_t *prl;
	size_t n;
	ck_assert_int_eq(dhcp_prl(&pkt, &prl, &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(prl[3], 43);
	uint16_t arch[4];
	ck_assert_int_eq(dhcp_client_arch(&pkt, arch, 4, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(arch[0], 7);
	struct dhcp_ndi ndi;
	ck_assert_int_eq(dhcp_client_ndi(&pkt, &ndi), 0);
	ck_assert_int_eq(ndi.type, 1);
	ck_assert_int_eq(ndi.major, 3);
	ck_assert_int_eq(ndi.minor, 16);
	uint8_t guid[16];
	ck_assert_int_eq(dhcp_client_guid(&pkt, guid), 0);
	ck_assert_int_eq(guid[0], 1);
	ck_assert_int_eq(guid[15], 16);
	ck_assert(dhcp_vendor_class_prefix(&pkt, "PXEClient"));
	ck_assert(!dhcp_vendor_class_prefix(&pkt, "HTTPClient"));
	const char *s;
	ck_assert_int_eq(dhcp_opt_string(&pkt, 60, &s, &n), 0);
	ck_assert_uint_eq(n, 32);
	ck_assert(!dhcp_has_user_class(&pkt, "iPXE"));
	uint32_t ip;
	ck_assert_int_eq(dhcp_opt_ip(&pkt, 50, &ip), -ENOENT);
	ck_assert_int_eq(dhcp_opt_bad(&pkt, 97), DHCP_OK);
}
END_TEST

START_TEST(test_request)
{
	struct tp t;
	tp_header(&t, 0);
	tp_opt(&t, 53, 1, DHCP_REQUEST);
	tp_opt(&t, 50, 4, 10, 0, 0, 5);
	tp_opt(&t, 54, 4, 10, 0, 0, 1);
	tp_opt(&t, 61, 7, 1, 0x52, 0x54, 0, 0x12, 0x34, 0x56);
	tp_opt(&t, 12, 6, 'h', 'o', 's', 't', '1', 0); /* a NUL-terminating client */
	tp_byte(&t, 255);
	parse_ok(&t);
	ck_assert_int_eq(pkt.msg_type, DHCP_REQUEST);
	uint32_t ip;
	ck_assert_int_eq(dhcp_opt_ip(&pkt, 50, &ip), 0);
	ck_assert_uint_eq(ip, 0x0a000005);
	ck_assert_int_eq(dhcp_opt_ip(&pkt, 54, &ip), 0);
	ck_assert_uint_eq(ip, 0x0a000001);
	uint8_t type;
	const uint8_t *id;
	size_t n;
	ck_assert_int_eq(dhcp_client_id(&pkt, &type, &id, &n), 0);
	ck_assert_int_eq(type, 1);
	ck_assert_uint_eq(n, 6);
	ck_assert_mem_eq(id, mac, 6);
	const char *s;
	ck_assert_int_eq(dhcp_opt_string(&pkt, 12, &s, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(dhcp_max_message_size(&pkt), 576);
}
END_TEST

START_TEST(test_ipxe_user_class)
{
	struct tp t;
	tp_header(&t, 0);
	tp_opt(&t, 53, 1, DHCP_DISCOVER);
	tp_opt_str(&t, 77, "iPXE");
	tp_opt(&t, 175, 3, 19, 1, 1); /* iPXE: http supported */
	tp_byte(&t, 255);
	parse_ok(&t);
	ck_assert(dhcp_has_user_class(&pkt, "iPXE"));
	ck_assert(!dhcp_has_user_class(&pkt, "Tinkerbell"));
	ck_assert(!dhcp_has_user_class(&pkt, "iPX"));
	const uint8_t *d;
	size_t n;
	ck_assert_int_eq(dhcp_opt_get(&pkt, 175, &d, &n), 0);
	ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(test_rfc3004_user_class)
{
	struct tp t;
	tp_header(&t, 0);
	tp_opt(&t, 53, 1, DHCP_REQUEST);
	tp_opt(&t, 77, 16, 10, 'T', 'i', 'n', 'k', 'e', 'r', 'b', 'e', 'l', 'l', 4, 'i', 'P', 'X', 'E');
	tp_byte(&t, 255);
	parse_ok(&t);
	ck_assert(dhcp_has_user_class(&pkt, "Tinkerbell"));
	ck_assert(dhcp_has_user_class(&pkt, "iPXE"));
	ck_assert(!dhcp_has_user_class(&pkt, "Tinker"));
	ck_assert(!dhcp_has_user_class(&pkt, ""));
	/* A trailing instance of length 0 spoils the RFC 3004 form. */
	tp_header(&t, 0);
	tp_opt(&t, 53, 1, DHCP_REQUEST);
	tp_opt(&t, 77, 6, 4, 'i', 'P', 'X', 'E', 0);
	tp_byte(&t, 255);
	parse_ok(&t);
	ck_assert(!dhcp_has_user_class(&pkt, "iPXE"));
}
END_TEST

START_TEST(test_relayed)
{
	struct tp t;
	tp_header(&t, 0x0a010001);
	tp_opt(&t, 53, 1, DHCP_DISCOVER);
	tp_opt(&t, 82, 12, 1, 4, 'e', 't', 'h', '0', 2, 4, 0xaa, 0xbb, 0xcc, 0xdd);
	tp_byte(&t, 255);
	parse_ok(&t);
	ck_assert_uint_eq(pkt.giaddr, 0x0a010001);
	ck_assert_int_eq(pkt.hops, 1);
	struct dhcp_relay_info ri;
	ck_assert_int_eq(dhcp_relay_info(&pkt, &ri), 0);
	ck_assert_uint_eq(ri.raw_len, 12);
	ck_assert_uint_eq(ri.circuit_id_len, 4);
	ck_assert_mem_eq(ri.circuit_id, "eth0", 4);
	ck_assert_uint_eq(ri.remote_id_len, 4);
	ck_assert_int_eq(ri.remote_id[3], 0xdd);
}
END_TEST

START_TEST(test_long_option_split)
{
	struct tp t;
	tp_header(&t, 0);
	tp_opt(&t, 53, 1, DHCP_DISCOVER);
	tp_opt(&t, 60, 3, 'a', 'b', 'c');
	tp_opt(&t, 12, 2, 'x', 'y');
	tp_opt(&t, 60, 2, 'd', 'e');
	tp_byte(&t, 255);
	parse_ok(&t);
	const char *s;
	size_t n;
	ck_assert_int_eq(dhcp_opt_string(&pkt, 60, &s, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_mem_eq(s, "abcde", 5);
	ck_assert_int_eq(dhcp_opt_string(&pkt, 12, &s, &n), 0);
	ck_assert_mem_eq(s, "xy", 2);
}
END_TEST

START_TEST(test_overload_file)
{
	struct tp t;
	tp_header(&t, 0);
	tp_opt(&t, 53, 1, DHCP_REQUEST);
	tp_opt(&t, 52, 1, 1);
	tp_opt(&t, 12, 1, 'a');
	tp_byte(&t, 255);
	/* file starts at 108: hostname continued, vendor class, END. */
	uint8_t *f = t.b + 108;
	memcpy(f, "\x0c\x02" "bc" "\x3c\x03" "PXE" "\xff", 10);
	parse_ok(&t);
	ck_assert_int_eq(pkt.overload, 1);
	const char *s;
	size_t n;
	ck_assert_int_eq(dhcp_opt_string(&pkt, 12, &s, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_mem_eq(s, "abc", 3);
	ck_assert(dhcp_vendor_class_prefix(&pkt, "PXE"));
}
END_TEST

START_TEST(test_overload_both)
{
	struct tp t;
	tp_header(&t, 0);
	tp_opt(&t, 53, 1, DHCP_REQUEST);
	tp_opt(&t, 52, 1, 3);
	tp_opt(&t, 12, 1, 'a');
	tp_byte(&t, 255);
	memcpy(t.b + 108, "\x0c\x01" "b" "\xff", 4); /* file */
	memcpy(t.b + 44, "\x0c\x01" "c" "\x00\x00\x34\x00\xff", 8); /* sname */
	/* 52 of length 0 inside sname: must be rejected as a loop. */
	enum dhcp_bad bad = DHCP_OK;
	ck_assert_int_eq(dhcp_parse(t.b, t.len, &pkt, &bad), -EBADMSG);
	ck_assert_int_eq(bad, DHCP_BAD_OVERLOAD);
	memcpy(t.b + 44, "\x0c\x01" "c" "\x00\x00\xff", 6);
	parse_ok(&t);
	const char *s;
	size_t n;
	ck_assert_int_eq(dhcp_opt_string(&pkt, 12, &s, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_mem_eq(s, "abc", 3); /* options, then file, then sname */
}
END_TEST

/* ---- malformed packets ---- */

struct bad_case {
	const char *name;
	void (*build)(struct tp *t);
	size_t cut;             /* nonzero: keep only this many bytes */
	enum dhcp_bad bad;      /* packet-level, or DHCP_OK */
	uint8_t code;           /* option-level reason of this option ... */
	enum dhcp_bad opt_bad;  /* ... when the packet parses */
};

static void b_discover(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_byte(t, 255);
}
static void b_cookie(struct tp *t)
{
	b_discover(t);
	t->b[239] = 0x64;
}
static void b_hlen(struct tp *t)
{
	b_discover(t);
	t->b[2] = 17;
}
static void b_op(struct tp *t)
{
	b_discover(t);
	t->b[0] = 3;
}
static void b_overrun(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_byte(t, 12);
	tp_byte(t, 10);
	tp_bytes(t, "abc", 3);
}
static void b_overrun_len(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_byte(t, 12); /* code, no length byte */
}
static void b_53_len3(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 3, 1, 0, 0);
	tp_byte(t, 255);
}
static void b_51_len3(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 51, 3, 0, 0, 60);
	tp_byte(t, 255);
}
static void b_50_len3(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 50, 3, 10, 0, 0);
	tp_byte(t, 255);
}
static void b_53_zero(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, 0);
	tp_byte(t, 255);
}
static void b_53_19(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, 19);
	tp_byte(t, 255);
}
static void b_no_53(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 50, 4, 10, 0, 0, 5);
	tp_byte(t, 255);
}
static void b_loop(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_opt(t, 52, 1, 1);
	tp_byte(t, 255);
	memcpy(t->b + 108, "\x34\x01\x02\xff", 4); /* 52 inside file */
}
static void b_overload_no_end(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_opt(t, 52, 1, 2);
	tp_byte(t, 255);
	memset(t->b + 44, 0, 64); /* sname: all PAD, no END */
}
static void b_overload_value(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_opt(t, 52, 1, 4);
	tp_byte(t, 255);
}
static void b_overload_len(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_opt(t, 52, 2, 1, 1);
	tp_byte(t, 255);
}
static void b_file_overrun(struct tp *t)
{
	tp_header(t, 0);
	tp_opt(t, 53, 1, DHCP_DISCOVER);
	tp_opt(t, 52, 1, 1);
	tp_byte(t, 255);
	t->b[108 + 125] = 12; /* an option whose data would pass file's end */
	t->b[108 + 126] = 5;
}
static void b_prl0(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 55, 0);
	tp_byte(t, 255);
}
static void b_97_16(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 97, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	tp_byte(t, 255);
}
static void b_97_type(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 97, 17, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
	tp_byte(t, 255);
}
static void b_93_odd(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 93, 3, 0, 7, 0);
	tp_byte(t, 255);
}
static void b_94_len(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 94, 2, 1, 2);
	tp_byte(t, 255);
}
static void b_57_small(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 57, 2, 1, 0); /* 256 */
	tp_byte(t, 255);
}
static void b_61_short(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 61, 1, 1);
	tp_byte(t, 255);
}
static void b_82_sub(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt(t, 82, 4, 1, 5, 'a', 'b');
	tp_byte(t, 255);
}
static void b_43_pxe(struct tp *t)
{
	b_discover(t);
	t->len--;
	tp_opt_str(t, 60, "PXEClient");
	tp_opt(t, 43, 3, 6, 2, 8);
	tp_byte(t, 255);
}
static void b_too_long(struct tp *t)
{
	b_discover(t);
	while (t->len < DHCP_MAX_MESSAGE + 1)
		tp_byte(t, 0);
}

static const struct bad_case bad_cases[] = {
	{ "empty", b_discover, 1, DHCP_BAD_TRUNCATED_HEADER, 0, DHCP_OK },
	{ "cut 100", b_discover, 100, DHCP_BAD_TRUNCATED_HEADER, 0, DHCP_OK },
	{ "cut 236", b_discover, 236, DHCP_BAD_TRUNCATED_HEADER, 0, DHCP_OK },
	{ "cut 239", b_discover, 239, DHCP_BAD_TRUNCATED_HEADER, 0, DHCP_OK },
	{ "cut 240: no options", b_discover, 240, DHCP_BAD_NO_MESSAGE_TYPE, 0, DHCP_OK },
	{ "bad cookie", b_cookie, 0, DHCP_BAD_COOKIE, 0, DHCP_OK },
	{ "hlen 17", b_hlen, 0, DHCP_BAD_HLEN, 0, DHCP_OK },
	{ "op 3", b_op, 0, DHCP_BAD_OP, 0, DHCP_OK },
	{ "option past the end", b_overrun, 0, DHCP_BAD_OPTION_OVERRUN, 0, DHCP_OK },
	{ "option without length", b_overrun_len, 0, DHCP_BAD_OPTION_OVERRUN, 0, DHCP_OK },
	{ "53 length 3", b_53_len3, 0, DHCP_BAD_OPTION_LENGTH, 0, DHCP_OK },
	{ "51 length 3", b_51_len3, 0, DHCP_BAD_OPTION_LENGTH, 0, DHCP_OK },
	{ "50 length 3", b_50_len3, 0, DHCP_BAD_OPTION_LENGTH, 0, DHCP_OK },
	{ "61 length 1", b_61_short, 0, DHCP_BAD_OPTION_LENGTH, 0, DHCP_OK },
	{ "53 = 0", b_53_zero, 0, DHCP_BAD_MESSAGE_TYPE, 0, DHCP_OK },
	{ "53 = 19", b_53_19, 0, DHCP_BAD_MESSAGE_TYPE, 0, DHCP_OK },
	{ "no 53", b_no_53, 0, DHCP_BAD_NO_MESSAGE_TYPE, 0, DHCP_OK },
	{ "overload loop", b_loop, 0, DHCP_BAD_OVERLOAD, 0, DHCP_OK },
	{ "overload value 4", b_overload_value, 0, DHCP_BAD_OVERLOAD, 0, DHCP_OK },
	{ "overload length 2", b_overload_len, 0, DHCP_BAD_OVERLOAD, 0, DHCP_OK },
	{ "overload without END", b_overload_no_end, 0, DHCP_BAD_MISSING_END, 0, DHCP_OK },
	{ "overrun inside file", b_file_overrun, 0, DHCP_BAD_OPTION_OVERRUN, 0, DHCP_OK },
	{ "too long", b_too_long, 0, DHCP_BAD_TOO_LONG, 0, DHCP_OK },
	/* Option-level: the packet parses, the option reads as malformed. */
	{ "55 length 0", b_prl0, 0, DHCP_OK, 55, DHCP_BAD_OPTION_LENGTH },
	{ "97 of 16 bytes", b_97_16, 0, DHCP_OK, 97, DHCP_BAD_OPTION_LENGTH },
	{ "97 type 1", b_97_type, 0, DHCP_OK, 97, DHCP_BAD_OPTION_VALUE },
	{ "93 odd length", b_93_odd, 0, DHCP_OK, 93, DHCP_BAD_OPTION_LENGTH },
	{ "94 length 2", b_94_len, 0, DHCP_OK, 94, DHCP_BAD_OPTION_LENGTH },
	{ "57 below 576", b_57_small, 0, DHCP_OK, 57, DHCP_BAD_OPTION_VALUE },
	{ "82 sub-option overrun", b_82_sub, 0, DHCP_OK, 82, DHCP_BAD_SUBOPTION },
	{ "43 PXE sub-option overrun", b_43_pxe, 0, DHCP_OK, 43, DHCP_BAD_SUBOPTION },
};

START_TEST(test_malformed)
{
	const struct bad_case *c = &bad_cases[_i];
	struct tp t;
	enum dhcp_bad bad = DHCP_OK;

	c->build(&t);
	if (c->cut)
		t.len = c->cut - (c->cut == 1); /* "empty": zero bytes */
	int e = dhcp_parse(t.b, t.len, &pkt, &bad);
	if (c->bad) {
		ck_assert_msg(e == -EBADMSG, "%s: parsed", c->name);
		ck_assert_msg(bad == c->bad, "%s: got %s, want %s", c->name,
			      dhcp_bad_reason_name(bad), dhcp_bad_reason_name(c->bad));
		return;
	}
	ck_assert_msg(e == 0, "%s: %s", c->name, dhcp_bad_reason_name(bad));
	ck_assert_msg(dhcp_opt_bad(&pkt, c->code) == c->opt_bad, "%s: got %s", c->name,
		      dhcp_bad_reason_name(dhcp_opt_bad(&pkt, c->code)));
	ck_assert(dhcp_opt_present(&pkt, c->code));
}
END_TEST

/* A DISCOVER with option code of len bytes, parsed into pkt. */
static void with_opt(struct tp *t, uint8_t code, uint8_t len, const uint8_t *data)
{
	b_discover(t);
	t->len--;
	tp_byte(t, code);
	tp_byte(t, len);
	if (len)
		tp_bytes(t, data, len);
	tp_byte(t, 255);
	parse_ok(t);
}

START_TEST(test_malformed_accessors)
{
	struct tp t;
	uint8_t guid[16];
	uint16_t arch[2];
	size_t n;
	const uint8_t *d;

	b_97_16(&t);
	parse_ok(&t);
	ck_assert_int_eq(dhcp_client_guid(&pkt, guid), -EBADMSG);
	b_93_odd(&t);
	parse_ok(&t);
	ck_assert_int_eq(dhcp_client_arch(&pkt, arch, 2, &n), -EBADMSG);
	b_57_small(&t);
	parse_ok(&t);
	ck_assert_uint_eq(dhcp_max_message_size(&pkt), 576);
	b_prl0(&t);
	parse_ok(&t);
	ck_assert_int_eq(dhcp_prl(&pkt, &d, &n), -EBADMSG);
	b_43_pxe(&t);
	parse_ok(&t);
	ck_assert_int_eq(dhcp_pxe_subopt(&pkt, 6, &d, &n), -EBADMSG);

	/* Fixed-size address options of the wrong length (54, 50 and 51
	 * reject the whole packet: the "bad cases" table). */
	uint32_t ip, ips[4];
	with_opt(&t, 28, 3, (const uint8_t *)"\x0a\x00\x00");
	ck_assert_int_eq(dhcp_opt_ip(&pkt, 28, &ip), -EBADMSG);
	with_opt(&t, 1, 5, (const uint8_t *)"\xff\xff\xff\x00\x00");
	ck_assert_int_eq(dhcp_opt_ip(&pkt, 1, &ip), -EBADMSG);
	with_opt(&t, 3, 6, (const uint8_t *)"\x0a\x00\x00\x01\x0a\x00");
	ck_assert_int_eq(dhcp_opt_ips(&pkt, 3, ips, 4, &n), -EBADMSG);
	with_opt(&t, 6, 0, NULL);
	ck_assert_int_eq(dhcp_opt_ips(&pkt, 6, ips, 4, &n), -EBADMSG);

	/* 121 (RFC 3442): a prefix over 32; a descriptor cut short; a
	 * router cut short. */
	struct dhcp_route rt[4];
	with_opt(&t, 121, 5, (const uint8_t *)"\x21\x0a\x00\x00\x01");
	ck_assert_int_eq(dhcp_opt_routes(&pkt, rt, 4, &n), -EBADMSG);
	with_opt(&t, 121, 3, (const uint8_t *)"\x18\x0a\x00");
	ck_assert_int_eq(dhcp_opt_routes(&pkt, rt, 4, &n), -EBADMSG);
	with_opt(&t, 121, 5, (const uint8_t *)"\x08\x0a\xc0\xa8\x01");
	ck_assert_int_eq(dhcp_opt_routes(&pkt, rt, 4, &n), -EBADMSG);

	/* 119 (RFC 1035 §4.1.4 names): a label past the end; a pointer to
	 * itself; a pointer past the option. */
	char dom[4][DHCP_MAX_DOMAIN + 1];
	with_opt(&t, 119, 4, (const uint8_t *)"\x07lab");
	ck_assert_int_eq(dhcp_opt_domain_search(&pkt, dom, 4, &n), -EBADMSG);
	with_opt(&t, 119, 2, (const uint8_t *)"\xc0\x00");
	ck_assert_int_eq(dhcp_opt_domain_search(&pkt, dom, 4, &n), -EBADMSG);
	with_opt(&t, 119, 7, (const uint8_t *)"\x03lab\xc0\x40\x00");
	ck_assert_int_eq(dhcp_opt_domain_search(&pkt, dom, 4, &n), -EBADMSG);
}
END_TEST

START_TEST(test_reason_names)
{
	ck_assert_str_eq(dhcp_bad_reason_name(DHCP_BAD_TRUNCATED_HEADER), "truncated_header");
	ck_assert_str_eq(dhcp_bad_reason_name(DHCP_BAD_OPTION_OVERRUN), "option_overrun");
	ck_assert_str_eq(dhcp_bad_reason_name(DHCP_OK), "ok");
	ck_assert_str_eq(dhcp_bad_reason_name(DHCP_BAD_MAX), "unknown");
	for (int i = 0; i < DHCP_BAD_MAX; i++)
		ck_assert_ptr_nonnull(dhcp_bad_reason_name((enum dhcp_bad)i));
}
END_TEST

/* ---- the writer ---- */

/* A reply with only header fields set, as the policy would start one. */
static void reply_base(struct dhcp_reply *r, enum dhcp_msg_type type)
{
	memset(r, 0, sizeof(*r));
	r->op = DHCP_BOOTREPLY;
	r->htype = 1;
	r->hlen = 6;
	r->xid = 0x01020304;
	memcpy(r->chaddr, mac, 6);
	r->yiaddr = 0x0a000005;
	ck_assert_int_eq(dhcp_reply_set_u8(r, 53, (uint8_t)type), 0);
	ck_assert_int_eq(dhcp_reply_set_ip(r, 54, 0x0a000001), 0);
}

/* Reparses what dhcp_write produced into pkt2. */
static int write_parse(const struct dhcp_reply *r, struct dhcp_write_info *info)
{
	enum dhcp_bad bad = DHCP_OK;
	int len = dhcp_write(r, out, sizeof(out), info);
	ck_assert_msg(len > 0, "write: %d", len);
	ck_assert_msg(dhcp_parse(out, (size_t)len, &pkt2, &bad) == 0, "reparse: %s",
		      dhcp_bad_reason_name(bad));
	return len;
}

START_TEST(test_write_exact)
{
	static const uint8_t want_opts[] = {
		0x63, 0x82, 0x53, 0x63,             /* cookie */
		53, 1, 2,                           /* OFFER */
		54, 4, 10, 0, 0, 1,                 /* server id */
		1, 4, 255, 255, 255, 0,             /* netmask */
		51, 4, 0, 0, 0x0e, 0x10,            /* lease 3600 */
		255,
	};
	reply_base(&rep, DHCP_OFFER);
	ck_assert_int_eq(dhcp_reply_set_u32(&rep, 51, 3600), 0);
	ck_assert_int_eq(dhcp_reply_set_ip(&rep, 1, 0xffffff00), 0);
	int len = dhcp_write(&rep, out, sizeof(out), NULL);
	ck_assert_int_eq(len, 300);
	ck_assert_int_eq(out[0], 2);
	ck_assert_int_eq(out[1], 1);
	ck_assert_int_eq(out[2], 6);
	ck_assert_int_eq(out[3], 0);
	ck_assert_int_eq(out[4], 1);
	ck_assert_int_eq(out[7], 4);
	ck_assert_int_eq(out[16], 10); /* yiaddr */
	ck_assert_int_eq(out[19], 5);
	ck_assert_mem_eq(out + 28, mac, 6);
	for (int i = 34; i < 236; i++)
		ck_assert_int_eq(out[i], 0);
	ck_assert_mem_eq(out + 236, want_opts, sizeof(want_opts));
	for (size_t i = 236 + sizeof(want_opts); i < 300; i++)
		ck_assert_int_eq(out[i], 0); /* padding to the BOOTP minimum */
}
END_TEST

START_TEST(test_write_prl_order)
{
	static const uint8_t want[] = { 53, 54, 3, 1, 6, 15, 51, 82 };
	static const uint8_t relay[] = { 1, 2, 'x', 'y' };
	uint32_t dns[2] = { 0x08080808, 0x01010101 };
	reply_base(&rep, DHCP_ACK);
	rep.prl_len = 4;
	memcpy(rep.prl, "\x03\x01\x52\x06", 4); /* asks for 82 too: still last */
	ck_assert_int_eq(dhcp_reply_set(&rep, 82, relay, sizeof(relay)), 0);
	ck_assert_int_eq(dhcp_reply_set_u32(&rep, 51, 60), 0);
	ck_assert_int_eq(dhcp_reply_set_string(&rep, 15, "example.com"), 0);
	ck_assert_int_eq(dhcp_reply_set_ips(&rep, 6, dns, 2), 0);
	ck_assert_int_eq(dhcp_reply_set_ip(&rep, 1, 0xffffff00), 0);
	ck_assert_int_eq(dhcp_reply_set_ip(&rep, 3, 0x0a000001), 0);
	int len = dhcp_write(&rep, out, sizeof(out), NULL);
	ck_assert_int_gt(len, 0);
	size_t pos = 240, k = 0;
	while (out[pos] != 255) {
		ck_assert_uint_lt(k, sizeof(want));
		ck_assert_int_eq(out[pos], want[k]);
		k++;
		pos += 2u + out[pos + 1];
	}
	ck_assert_uint_eq(k, sizeof(want));
}
END_TEST

START_TEST(test_write_domain_search)
{
	/* RFC 1035 §4.1.4: "example.com" is a suffix of the first name, whose
	 * "example" label starts at offset 4: a pointer 0xc004. */
	static const uint8_t want[] = {
		3, 'e', 'n', 'g', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
		0xc0, 0x04,
	};
	const char *names[] = { "eng.example.com", "example.com" };
	reply_base(&rep, DHCP_ACK);
	ck_assert_int_eq(dhcp_reply_set_domain_search(&rep, names, 2), 0);
	ck_assert_uint_eq(rep.opts.len[119], sizeof(want));
	ck_assert_mem_eq(rep.opts.data + rep.opts.off[119], want, sizeof(want));
	write_parse(&rep, NULL);
	char got[4][DHCP_MAX_DOMAIN + 1];
	size_t n;
	ck_assert_int_eq(dhcp_opt_domain_search(&pkt2, got, 4, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(got[0], "eng.example.com");
	ck_assert_str_eq(got[1], "example.com");

	/* Trailing dots, case-blind matching, a whole-name pointer. */
	const char *names2[] = { "a.b.", "x.A.B", "a.b" };
	static const uint8_t want2[] = { 1, 'a', 1, 'b', 0, 1, 'x', 0xc0, 0, 0xc0, 0 };
	ck_assert_int_eq(dhcp_reply_set_domain_search(&rep, names2, 3), 0);
	ck_assert_uint_eq(rep.opts.len[119], sizeof(want2));
	ck_assert_mem_eq(rep.opts.data + rep.opts.off[119], want2, sizeof(want2));
}
END_TEST

START_TEST(test_write_domain_search_invalid)
{
	char label64[80], long_name[300];
	memset(label64, 'a', 64);
	memcpy(label64 + 64, ".com", 5);
	for (int i = 0; i < 64; i++)
		memcpy(long_name + 4 * i, "abc.", 4);
	memcpy(long_name + 252, "abc", 4); /* 255 characters of text */
	const char *bad[] = { "", ".", "a..b", ".a", label64, long_name };
	reply_base(&rep, DHCP_ACK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(dhcp_reply_set_domain_search(&rep, &bad[i], 1) == -EINVAL, "%zu", i);
	ck_assert(!dhcp_reply_has(&rep, 119));
	memset(label64, 'a', 63);
	memcpy(label64 + 63, ".com", 5); /* a 63-byte label is fine */
	const char *ok = label64;
	ck_assert_int_eq(dhcp_reply_set_domain_search(&rep, &ok, 1), 0);
	ck_assert_int_eq(dhcp_reply_set_domain_search(&rep, &ok, 0), -EINVAL);
}
END_TEST

START_TEST(test_write_routes)
{
	static const struct dhcp_route routes[] = {
		{ 0, 0, 0x0a000001 },                   /* default */
		{ 0x0a010280, 25, 0x0a000002 },         /* 10.1.2.128/25 */
		{ 0x0a090909, 32, 0x0a000003 },         /* 10.9.9.9/32 */
		{ 0xac100000, 12, 0x0a000004 },         /* 172.16.0.0/12 */
	};
	static const uint8_t want[] = {
		0, 10, 0, 0, 1,
		25, 10, 1, 2, 128, 10, 0, 0, 2,
		32, 10, 9, 9, 9, 10, 0, 0, 3,
		12, 172, 16, 10, 0, 0, 4,
	};
	reply_base(&rep, DHCP_ACK);
	ck_assert_int_eq(dhcp_reply_set_routes(&rep, routes, 4), 0);
	ck_assert_uint_eq(rep.opts.len[121], sizeof(want));
	ck_assert_mem_eq(rep.opts.data + rep.opts.off[121], want, sizeof(want));
	write_parse(&rep, NULL);
	struct dhcp_route got[8];
	size_t n;
	ck_assert_int_eq(dhcp_opt_routes(&pkt2, got, 8, &n), 0);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(got[i].dest, routes[i].dest);
		ck_assert_uint_eq(got[i].prefix, routes[i].prefix);
		ck_assert_uint_eq(got[i].router, routes[i].router);
	}
	struct dhcp_route bad = { 0, 33, 1 };
	ck_assert_int_eq(dhcp_reply_set_routes(&rep, &bad, 1), -EINVAL);
	bad = (struct dhcp_route){ 0x0a000001, 24, 1 }; /* host bits set */
	ck_assert_int_eq(dhcp_reply_set_routes(&rep, &bad, 1), -EINVAL);
}
END_TEST

START_TEST(test_write_long_split)
{
	uint8_t big[300];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	reply_base(&rep, DHCP_ACK);
	rep.max_ip_len = 1500;
	ck_assert_int_eq(dhcp_reply_set(&rep, 150, big, sizeof(big)), 0);
	write_parse(&rep, NULL);
	/* 53, 54, then 150 as 255 + 45 bytes (RFC 3396). */
	ck_assert_int_eq(out[249], 150);
	ck_assert_int_eq(out[250], 255);
	ck_assert_int_eq(out[251 + 255], 150);
	ck_assert_int_eq(out[251 + 256], 45);
	const uint8_t *d;
	size_t n;
	ck_assert_int_eq(dhcp_opt_get(&pkt2, 150, &d, &n), 0);
	ck_assert_uint_eq(n, sizeof(big));
	ck_assert_mem_eq(d, big, sizeof(big));
}
END_TEST

static void set_str(struct dhcp_reply *r, uint8_t code, size_t n, char c)
{
	char s[256];
	memset(s, c, n);
	s[n] = '\0';
	ck_assert_int_eq(dhcp_reply_set_string(r, code, s), 0);
}

START_TEST(test_write_overload)
{
	struct dhcp_write_info info;
	const char *s;
	size_t n;

	/* 9 + 3 * 102 bytes of options: over the 307 a 576-byte datagram
	 * leaves, so 66 moves to file. */
	reply_base(&rep, DHCP_OFFER);
	set_str(&rep, 12, 100, 'h');
	set_str(&rep, 15, 100, 'd');
	set_str(&rep, 66, 100, 't');
	int len = write_parse(&rep, &info);
	ck_assert_int_le(len, 576 - 28);
	ck_assert_int_eq(info.overload, 1);
	ck_assert_int_eq(info.ndropped, 0);
	ck_assert_int_eq(pkt2.overload, 1);
	ck_assert_int_eq(out[108], 66); /* file holds 66 */
	ck_assert_int_eq(dhcp_opt_string(&pkt2, 66, &s, &n), 0);
	ck_assert_uint_eq(n, 100);
	ck_assert_int_eq(dhcp_opt_string(&pkt2, 15, &s, &n), 0);
	ck_assert_uint_eq(n, 100);

	/* A bigger client limit: no overload. */
	rep.max_ip_len = 1500;
	write_parse(&rep, &info);
	ck_assert_int_eq(info.overload, 0);

	/* file in use: sname (63 bytes) is too small, so the last optional
	 * option goes. */
	rep.max_ip_len = 576;
	memcpy(rep.file, "undionly.kpxe", 13);
	write_parse(&rep, &info);
	ck_assert_int_eq(info.overload, 0);
	ck_assert_int_eq(info.ndropped, 1);
	ck_assert_int_eq(info.dropped[0], 66);
	ck_assert(!dhcp_opt_present(&pkt2, 66));
	ck_assert_mem_eq(pkt2.file, "undionly.kpxe", 14);

	/* Required options are never dropped. */
	dhcp_reply_require(&rep, 66);
	write_parse(&rep, &info);
	ck_assert_int_eq(info.dropped[0], 15);
	ck_assert(dhcp_opt_present(&pkt2, 66));
}
END_TEST

START_TEST(test_write_overload_both)
{
	struct dhcp_write_info info;
	const char *s;
	size_t n;

	reply_base(&rep, DHCP_OFFER);
	set_str(&rep, 12, 200, 'h');
	set_str(&rep, 15, 100, 'd');
	set_str(&rep, 66, 40, 't');
	set_str(&rep, 67, 50, 'f');
	write_parse(&rep, &info);
	ck_assert_int_eq(info.overload, 3);
	ck_assert_int_eq(info.ndropped, 0);
	ck_assert_int_eq(dhcp_opt_string(&pkt2, 67, &s, &n), 0);
	ck_assert_uint_eq(n, 50);
	ck_assert_int_eq(out[44], 67); /* sname */
}
END_TEST

START_TEST(test_write_errors)
{
	static const uint8_t relay[400] = { 1, 255 };
	reply_base(&rep, DHCP_OFFER);
	ck_assert_int_eq(dhcp_write(&rep, out, 299, NULL), -ENOSPC);
	ck_assert_int_eq(dhcp_write(&rep, out, 100, NULL), -ENOSPC);
	ck_assert_int_eq(dhcp_write(&rep, out, 0, NULL), -ENOSPC);
	ck_assert_int_eq(dhcp_write(&rep, out, 300, NULL), 300);
	set_str(&rep, 67, 100, 'f');
	ck_assert_int_eq(dhcp_write(&rep, out, 300, NULL), -ENOSPC);
	ck_assert_int_gt(dhcp_write(&rep, out, 400, NULL), 300);
	/* An 82 too long for the client's limit cannot be dropped. */
	ck_assert_int_eq(dhcp_reply_set(&rep, 82, relay, sizeof(relay)), 0);
	ck_assert_int_eq(dhcp_write(&rep, out, sizeof(out), NULL), -EMSGSIZE);
	dhcp_reply_del(&rep, 82);
	dhcp_reply_del(&rep, 53);
	ck_assert_int_eq(dhcp_write(&rep, out, sizeof(out), NULL), -EINVAL);
	ck_assert_int_eq(dhcp_reply_set(&rep, 52, "\x01", 1), -EINVAL);
	ck_assert_int_eq(dhcp_reply_set(&rep, 0, "", 0), -EINVAL);
	ck_assert_int_eq(dhcp_reply_set(&rep, 255, "", 0), -EINVAL);
	ck_assert_int_eq(dhcp_reply_set_string(&rep, 12, ""), -EINVAL);
	/* The option space runs out. */
	uint8_t big[1000] = { 0 };
	int e = 0;
	for (int i = 0; i < 10 && e == 0; i++)
		e = dhcp_reply_set(&rep, (uint8_t)(150 + i), big, sizeof(big));
	ck_assert_int_eq(e, -ENOSPC);
}
END_TEST

/* Option code of the reply as 4 bytes, big-endian: 0, or -1 when absent
 * or of another length. */
static int rep_u32(const struct dhcp_reply *r, uint8_t code, uint32_t *v)
{
	const uint8_t *p = r->opts.data + r->opts.off[code];

	if (!dhcp_reply_has(r, code) || r->opts.len[code] != 4)
		return -1;
	*v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return 0;
}

/* A value replaced by one of the same length takes no more room; the
 * lease options change all together or not at all. */
START_TEST(test_reply_replace)
{
	struct dhcp_packet req;
	uint8_t big[DHCP_MAX_OPTION_BYTES] = { 0 };
	uint32_t v;
	uint16_t used;

	memset(&req, 0, sizeof(req));
	req.htype = 1;
	req.hlen = 6;
	dhcp_reply_init(&rep, &req, DHCP_ACK);
	ck_assert_int_eq(dhcp_reply_set_lease(&rep, 3600), 0);
	used = rep.opts.used;
	for (uint32_t i = 0; i < 3 * DHCP_MAX_OPTION_BYTES; i++)
		ck_assert_int_eq(dhcp_reply_set_u32(&rep, DHCP_OPT_LEASE_TIME, i), 0);
	ck_assert_uint_eq(rep.opts.used, used);
	/* Another length goes at the end. */
	ck_assert_int_eq(dhcp_reply_set(&rep, DHCP_OPT_LEASE_TIME, "\0\0\0\0\0", 5), 0);
	ck_assert_uint_eq(rep.opts.used, used + 5);
	ck_assert_int_eq(dhcp_reply_set_lease(&rep, 3600), 0);
	ck_assert_uint_eq(rep.opts.used, used + 9);
	/* Fill all but 2 bytes: changing the three in place still works... */
	ck_assert_int_eq(dhcp_reply_set(&rep, 150, big, sizeof(rep.opts.data) - rep.opts.used - 2), 0);
	ck_assert_int_eq(dhcp_reply_set_lease(&rep, 2000), 0);
	ck_assert_int_eq(rep_u32(&rep, DHCP_OPT_RENEWAL_TIME, &v), 0);
	ck_assert_uint_eq(v, 1000);
	/* ...but with T2 of another length (the last 2 bytes) there is no
	 * room for it, and nothing changes, 51 included. */
	ck_assert_int_eq(dhcp_reply_set(&rep, DHCP_OPT_REBINDING_TIME, "\0\0", 2), 0);
	ck_assert_uint_eq(rep.opts.used, sizeof(rep.opts.data));
	ck_assert_int_eq(dhcp_reply_set_lease(&rep, 1000), -ENOSPC);
	ck_assert_int_eq(rep_u32(&rep, DHCP_OPT_LEASE_TIME, &v), 0);
	ck_assert_uint_eq(v, 2000);
	ck_assert_int_eq(rep_u32(&rep, DHCP_OPT_RENEWAL_TIME, &v), 0);
	ck_assert_uint_eq(v, 1000);
}
END_TEST

/* A reply to the PXE DISCOVER with every encoder, parsed back. */
START_TEST(test_round_trip)
{
	struct tp t;
	uint32_t ips[3] = { 0x0a000001, 0x0a000002, 0x0a000003 }, ip, got_ips[4];
	uint8_t ctl = 8;
	struct dhcp_subopt subs[2] = { { 6, 1, &ctl }, { 71, 4, (const uint8_t *)"\x80\x00\x00\x00" } };
	const uint8_t *d;
	const char *s;
	size_t n;

	pxe_discover(&t);
	tp_opt(&t, 61, 7, 1, 0x52, 0x54, 0, 0x12, 0x34, 0x56); /* after END: ignored */
	parse_ok(&t);
	ck_assert(!dhcp_opt_present(&pkt, 61));
	t.len -= 10; /* take off that 61 and the END before it */
	tp_opt(&t, 61, 7, 1, 0x52, 0x54, 0, 0x12, 0x34, 0x56);
	tp_opt(&t, 82, 4, 1, 2, 'p', '1');
	tp_byte(&t, 255);
	parse_ok(&t);

	dhcp_reply_init(&rep, &pkt, DHCP_OFFER);
	ck_assert_int_eq(rep.op, 2);
	ck_assert_uint_eq(rep.xid, 0xdeadbeef);
	ck_assert_uint_eq(rep.max_ip_len, 1260);
	ck_assert_uint_eq(rep.prl_len, 8);
	ck_assert_int_eq(dhcp_reply_set_ip(&rep, 54, 0x0a000001), 0);
	ck_assert_int_eq(dhcp_reply_set_u32(&rep, 51, 86400), 0);
	ck_assert_int_eq(dhcp_reply_set_u32(&rep, 58, 43200), 0);
	ck_assert_int_eq(dhcp_reply_set_ip(&rep, 1, 0xffffff00), 0);
	ck_assert_int_eq(dhcp_reply_set_ips(&rep, 3, ips, 1), 0);
	ck_assert_int_eq(dhcp_reply_set_ips(&rep, 6, ips, 3), 0);
	ck_assert_int_eq(dhcp_reply_set_ip(&rep, 28, 0x0a0000ff), 0);
	ck_assert_int_eq(dhcp_reply_set_string(&rep, 12, "node-1"), 0);
	ck_assert_int_eq(dhcp_reply_set_string(&rep, 67, "ipxe.efi"), 0);
	ck_assert_int_eq(dhcp_reply_set_string(&rep, 60, "PXEClient"), 0);
	ck_assert_int_eq(dhcp_reply_set_suboptions(&rep, 43, subs, 2), 0);
	ck_assert_int_eq(dhcp_reply_echo(&rep, &pkt, 61), 0);
	ck_assert_int_eq(dhcp_reply_echo(&rep, &pkt, 82), 0);
	ck_assert_int_eq(dhcp_reply_echo(&rep, &pkt, 97), 0);
	ck_assert_int_eq(dhcp_reply_echo(&rep, &pkt, 50), -ENOENT);
	rep.yiaddr = 0x0a000005;
	memcpy(rep.file, "ipxe.efi", 8);
	write_parse(&rep, NULL);

	ck_assert_int_eq(pkt2.op, 2);
	ck_assert_int_eq(pkt2.msg_type, DHCP_OFFER);
	ck_assert_uint_eq(pkt2.yiaddr, 0x0a000005);
	ck_assert_uint_eq(pkt2.flags, DHCP_FLAG_BROADCAST);
	ck_assert_mem_eq(pkt2.chaddr, mac, 6);
	ck_assert_int_eq(dhcp_opt_ip(&pkt2, 54, &ip), 0);
	ck_assert_uint_eq(ip, 0x0a000001);
	ck_assert_int_eq(dhcp_opt_u32(&pkt2, 51, &ip), 0);
	ck_assert_uint_eq(ip, 86400);
	ck_assert_int_eq(dhcp_opt_u32(&pkt2, 58, &ip), 0);
	ck_assert_uint_eq(ip, 43200);
	ck_assert_int_eq(dhcp_opt_ip(&pkt2, 28, &ip), 0);
	ck_assert_uint_eq(ip, 0x0a0000ff);
	ck_assert_int_eq(dhcp_opt_ips(&pkt2, 6, got_ips, 4, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_mem_eq(got_ips, ips, sizeof(ips));
	ck_assert_int_eq(dhcp_opt_string(&pkt2, 12, &s, &n), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_mem_eq(s, "node-1", 6);
	ck_assert_int_eq(dhcp_pxe_subopt(&pkt2, 6, &d, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(d[0], 8);
	ck_assert_int_eq(dhcp_pxe_subopt(&pkt2, 71, &d, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(dhcp_pxe_subopt(&pkt2, 9, &d, &n), -ENOENT);
	uint8_t type;
	ck_assert_int_eq(dhcp_client_id(&pkt2, &type, &d, &n), 0);
	ck_assert_mem_eq(d, mac, 6);
	uint8_t guid[16];
	ck_assert_int_eq(dhcp_client_guid(&pkt2, guid), 0);
	ck_assert_int_eq(guid[15], 16);
	struct dhcp_relay_info ri;
	ck_assert_int_eq(dhcp_relay_info(&pkt2, &ri), 0);
	ck_assert_mem_eq(ri.circuit_id, "p1", 2);
	/* Every option the reply holds came back byte for byte. */
	for (unsigned c = 1; c < 255; c++) {
		if (!dhcp_reply_has(&rep, (uint8_t)c))
			continue;
		ck_assert_int_eq(dhcp_opt_get(&pkt2, (uint8_t)c, &d, &n), 0);
		ck_assert_uint_eq(n, rep.opts.len[c]);
		ck_assert_mem_eq(d, rep.opts.data + rep.opts.off[c], n);
	}
	/* 82 is the last option before END. */
	size_t pos = 240, last = 0;
	while (out[pos] != 255) {
		last = out[pos];
		pos += 2u + out[pos + 1];
	}
	ck_assert_uint_eq(last, 82);
}
END_TEST

static Suite *dhcp_codec_suite(void)
{
	Suite *s = suite_create("dhcp_codec");
	TCase *tc = tcase_create("parse");
	UNIT_TEST(tc, test_pxe_discover);
	UNIT_TEST(tc, test_request);
	UNIT_TEST(tc, test_ipxe_user_class);
	UNIT_TEST(tc, test_rfc3004_user_class);
	UNIT_TEST(tc, test_relayed);
	UNIT_TEST(tc, test_long_option_split);
	UNIT_TEST(tc, test_overload_file);
	UNIT_TEST(tc, test_overload_both);
	tcase_add_loop_test(tc, test_malformed, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	UNIT_TEST(tc, test_malformed_accessors);
	UNIT_TEST(tc, test_reason_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("write");
	UNIT_TEST(tc, test_write_exact);
	UNIT_TEST(tc, test_write_prl_order);
	UNIT_TEST(tc, test_write_domain_search);
	UNIT_TEST(tc, test_write_domain_search_invalid);
	UNIT_TEST(tc, test_write_routes);
	UNIT_TEST(tc, test_write_long_split);
	UNIT_TEST(tc, test_write_overload);
	UNIT_TEST(tc, test_write_overload_both);
	UNIT_TEST(tc, test_write_errors);
	UNIT_TEST(tc, test_reply_replace);
	UNIT_TEST(tc, test_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(dhcp_codec_suite());
}
