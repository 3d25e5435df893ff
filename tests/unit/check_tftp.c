/* check_tftp — the TFTP codec, negotiation and name cleaning: tables of
 * good requests built byte by byte and of malformed ones, options out of
 * range (blksize 7 and 65465, windowsize 0), round trips of written
 * packets, every option against every limit, netascii (whole, and block by
 * block from a file against the whole conversion), and the paths that
 * must not leave the root; and the server started from settings built
 * here, with no configuration file. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/bootfile.h"
#include "tftp/tftp-internal.h"
#include "tftp/tftp.h"
#include "tests/unit/unit.h"

#define PKT(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

START_TEST(test_good_requests)
{
	struct tftp_request rq;
	enum tftp_bad why;
	/* RRQ "a.efi" octet */
	ck_assert_int_eq(tftp_parse_request(PKT(0, 1, 'a', '.', 'e', 'f', 'i', 0, 'o', 'c', 't',
						'e', 't', 0),
					    &rq, &why),
			 0);
	ck_assert_int_eq(rq.op, TFTP_RRQ);
	ck_assert_str_eq(rq.filename, "a.efi");
	ck_assert_int_eq(rq.mode, TFTP_MODE_OCTET);
	ck_assert(!rq.any_option && !rq.blksize.asked);
	/* WRQ, NETASCII in capitals */
	ck_assert_int_eq(tftp_parse_request(PKT(0, 2, 'f', 0, 'N', 'E', 'T', 'A', 'S', 'C', 'I',
						'I', 0),
					    &rq, &why),
			 0);
	ck_assert_int_eq(rq.op, TFTP_WRQ);
	ck_assert_int_eq(rq.mode, TFTP_MODE_NETASCII);
	/* mail */
	ck_assert_int_eq(tftp_parse_request(PKT(0, 1, 'f', 0, 'm', 'a', 'i', 'l', 0), &rq, &why), 0);
	ck_assert_int_eq(rq.mode, TFTP_MODE_MAIL);
	/* every option, in mixed case, an unknown one, a repeated one */
	ck_assert_int_eq(tftp_parse_request(PKT(0, 1, 'f', 0, 'o', 'c', 't', 'e', 't', 0, 'B', 'l',
						'k', 'S', 'i', 'z', 'e', 0, '1', '4', '6', '8',
						0, 't', 's', 'i', 'z', 'e', 0, '0', 0, 'x', 0, 'y',
						0, 'T', 'I', 'M', 'E', 'O', 'U', 'T', 0, '3', 0,
						'w', 'i', 'n', 'd', 'o', 'w', 's', 'i', 'z', 'e',
						0, '8', 0, 'b', 'l', 'k', 's', 'i', 'z', 'e', 0,
						'5', '1', '2', 0),
					    &rq, &why),
			 0);
	ck_assert(rq.any_option);
	ck_assert(rq.blksize.asked && rq.blksize.value == 1468);
	ck_assert(rq.tsize.asked && rq.tsize.value == 0);
	ck_assert(rq.timeout.asked && rq.timeout.value == 3);
	ck_assert(rq.windowsize.asked && rq.windowsize.value == 8);
}
END_TEST

/* Malformed packets, each with its reason. */
static const struct {
	uint8_t p[40];
	size_t n;
	enum tftp_bad why;
} bad[] = {
	{ { 0 }, 0, TFTP_BAD_SHORT },
	{ { 0 }, 1, TFTP_BAD_SHORT },
	{ { 0, 3, 0, 1 }, 4, TFTP_BAD_OPCODE },                  /* DATA to the server */
	{ { 0, 9, 'f', 0, 'o', 'c', 't', 'e', 't', 0 }, 10, TFTP_BAD_OPCODE },
	{ { 0, 1, 'f', 'o', 'o' }, 5, TFTP_BAD_UNTERMINATED },  /* no NUL after the name */
	{ { 0, 1, 'f', 0, 'o', 'c', 't', 'e', 't' }, 9, TFTP_BAD_UNTERMINATED },
	{ { 0, 1, 0, 'o', 'c', 't', 'e', 't', 0 }, 9, TFTP_BAD_FILENAME }, /* empty name */
	{ { 0, 1, 'a', '\n', 'b', 0, 'o', 'c', 't', 'e', 't', 0 }, 12, TFTP_BAD_FILENAME },
	{ { 0, 1, 'f', 0, 'b', 'i', 'n', 0 }, 8, TFTP_BAD_MODE },
	{ { 0, 1, 'f', 0, 0 }, 5, TFTP_BAD_MODE },
	{ { 0, 1, 'f', 0, 'o', 'c', 't', 'e', 't', 0, 'b', 'l', 'k' }, 13, TFTP_BAD_OPTIONS },
	{ { 0, 1, 'f', 0, 'o', 'c', 't', 'e', 't', 0, 'x', 0 }, 12, TFTP_BAD_OPTIONS }, /* no value */
	{ { 0, 1, 'f', 0, 'o', 'c', 't', 'e', 't', 0, 0, '1', 0 }, 13, TFTP_BAD_OPTIONS },
};

START_TEST(test_malformed)
{
	struct tftp_request rq;
	enum tftp_bad why = 0;
	ck_assert_int_eq(tftp_parse_request(bad[_i].p, bad[_i].n, &rq, &why), -EBADMSG);
	ck_assert_msg(why == bad[_i].why, "case %d: %s, want %s", _i, tftp_bad_name(why),
		      tftp_bad_name(bad[_i].why));
}
END_TEST

START_TEST(test_limits_of_requests)
{
	uint8_t p[1024];
	struct tftp_request rq;
	enum tftp_bad why;
	char name[TFTP_FILENAME_MAX + 2];
	memset(name, 'n', sizeof(name));
	name[TFTP_FILENAME_MAX] = '\0';
	size_t n = tftp_write_request(p, sizeof(p), TFTP_RRQ, name, "octet", NULL, 0);
	ck_assert_int_eq(tftp_parse_request(p, n, &rq, &why), 0);
	name[TFTP_FILENAME_MAX] = 'n';
	name[TFTP_FILENAME_MAX + 1] = '\0';
	n = tftp_write_request(p, sizeof(p), TFTP_RRQ, name, "octet", NULL, 0);
	ck_assert_int_eq(tftp_parse_request(p, n, &rq, &why), -EBADMSG);
	ck_assert_int_eq(why, TFTP_BAD_FILENAME);
	/* A huge option count. */
	const char *opts[2 * (TFTP_MAX_OPTIONS + 1)];
	for (int i = 0; i < 2 * (TFTP_MAX_OPTIONS + 1); i++)
		opts[i] = i % 2 ? "1" : "x";
	n = tftp_write_request(p, sizeof(p), TFTP_RRQ, "f", "octet", opts, TFTP_MAX_OPTIONS);
	ck_assert_int_eq(tftp_parse_request(p, n, &rq, &why), 0);
	n = tftp_write_request(p, sizeof(p), TFTP_RRQ, "f", "octet", opts, TFTP_MAX_OPTIONS + 1);
	ck_assert_int_eq(tftp_parse_request(p, n, &rq, &why), -EBADMSG);
	ck_assert_int_eq(why, TFTP_BAD_OPTIONS);
	/* An option value too long. */
	char longv[TFTP_OPTION_MAX + 2];
	memset(longv, '1', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	const char *lo[] = { "blksize", longv };
	n = tftp_write_request(p, sizeof(p), TFTP_RRQ, "f", "octet", lo, 1);
	ck_assert_int_eq(tftp_parse_request(p, n, &rq, &why), -EBADMSG);
}
END_TEST

/* Options out of range: left out (not asked), marked invalid. */
static const struct {
	const char *name, *value;
	bool asked;
} ranges[] = {
	{ "blksize", "7", false },      { "blksize", "8", true },      { "blksize", "65464", true },
	{ "blksize", "65465", false },  { "blksize", "-1", false },    { "blksize", "1e3", false },
	{ "blksize", "", false },       { "windowsize", "0", false },  { "windowsize", "1", true },
	{ "windowsize", "65535", true }, { "windowsize", "65536", false },
	{ "timeout", "0", false },      { "timeout", "1", true },      { "timeout", "255", true },
	{ "timeout", "256", false },    { "tsize", "0", true },
	{ "tsize", "99999999999999999999999", false },
};

START_TEST(test_option_ranges)
{
	uint8_t p[256];
	struct tftp_request rq;
	enum tftp_bad why;
	const char *o[] = { ranges[_i].name, ranges[_i].value };
	size_t n = tftp_write_request(p, sizeof(p), TFTP_RRQ, "f", "octet", o, 1);
	ck_assert_int_eq(tftp_parse_request(p, n, &rq, &why), 0);
	const struct tftp_opt *x = ranges[_i].name[0] == 'b' ? &rq.blksize :
				   ranges[_i].name[0] == 'w' ? &rq.windowsize :
				   ranges[_i].name[1] == 'i' ? &rq.timeout :
							       &rq.tsize;
	ck_assert_msg(x->asked == ranges[_i].asked, "%s %s", ranges[_i].name, ranges[_i].value);
	ck_assert(x->invalid == !ranges[_i].asked);
}
END_TEST

START_TEST(test_negotiate)
{
	struct tftp_request rq = { .op = TFTP_RRQ };
	struct tftp_limits lim = { .blksize_max = 1468, .windowsize_max = 16, .timeout = 2 };
	struct tftp_granted g;

	tftp_negotiate(&rq, &lim, 1000, &g);
	ck_assert(!g.oack);
	ck_assert_uint_eq(g.blksize_v, 512);
	ck_assert_uint_eq(g.windowsize_v, 1);
	ck_assert_uint_eq(g.timeout_v, 2);

	rq.blksize = (struct tftp_opt){ .asked = true, .value = 65464 };
	rq.windowsize = (struct tftp_opt){ .asked = true, .value = 64 };
	rq.timeout = (struct tftp_opt){ .asked = true, .value = 5 };
	rq.tsize = (struct tftp_opt){ .asked = true, .value = 0 };
	tftp_negotiate(&rq, &lim, 851968, &g);
	ck_assert(g.oack && g.blksize && g.windowsize && g.timeout && g.tsize);
	ck_assert_uint_eq(g.blksize_v, 1468); /* clamped to the limit */
	ck_assert_uint_eq(g.windowsize_v, 16);
	ck_assert_uint_eq(g.timeout_v, 5);
	ck_assert_uint_eq(g.tsize_v, 851968);

	rq.blksize.value = 1024;
	rq.windowsize.value = 8;
	tftp_negotiate(&rq, &lim, 0, &g);
	ck_assert_uint_eq(g.blksize_v, 1024); /* under the limit: as asked */
	ck_assert_uint_eq(g.windowsize_v, 8);
	ck_assert_uint_eq(g.tsize_v, 0);

	/* An option that was invalid is simply not granted. */
	struct tftp_request only_bad = { .op = TFTP_RRQ,
					 .blksize = { .invalid = true },
					 .windowsize = { .invalid = true } };
	tftp_negotiate(&only_bad, &lim, 10, &g);
	ck_assert(!g.oack);
	/* tsize in a write request is not answered. */
	struct tftp_request w = { .op = TFTP_WRQ, .tsize = { .asked = true, .value = 5 } };
	tftp_negotiate(&w, &lim, 10, &g);
	ck_assert(!g.tsize && !g.oack);
	/* A limit below RFC 2348's minimum still grants a legal size. */
	lim.blksize_max = 4;
	tftp_negotiate(&rq, &lim, 10, &g);
	ck_assert_uint_eq(g.blksize_v, TFTP_BLKSIZE_MIN);
}
END_TEST

START_TEST(test_write_round_trips)
{
	uint8_t b[600];
	uint16_t block, code;
	const char *msg;
	size_t mlen, n;
	enum tftp_bad why;

	n = tftp_write_ack(b, sizeof(b), 65535);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(tftp_parse_ack(b, n, &block, &why), 0);
	ck_assert_uint_eq(block, 65535);
	ck_assert_int_eq(tftp_parse_ack(b, 3, &block, &why), -EBADMSG); /* truncated */
	ck_assert_int_eq(why, TFTP_BAD_SHORT);
	n = tftp_write_data_header(b, sizeof(b), 258);
	ck_assert_uint_eq(n, 4);
	ck_assert_mem_eq(b, ((uint8_t[]){ 0, 3, 1, 2 }), 4);
	ck_assert_int_eq(tftp_parse_ack(b, n, &block, &why), -EBADMSG);
	ck_assert_int_eq(why, TFTP_BAD_OPCODE);

	n = tftp_write_error(b, sizeof(b), TFTP_ENOTFOUND, "file not found");
	ck_assert_int_eq(tftp_parse_error(b, n, &code, &msg, &mlen, &why), 0);
	ck_assert_uint_eq(code, 1);
	ck_assert_uint_eq(mlen, 14);
	ck_assert(memcmp(msg, "file not found", 14) == 0);
	/* Without the NUL: accepted. */
	ck_assert_int_eq(tftp_parse_error(b, n - 1, &code, &msg, &mlen, &why), 0);
	ck_assert_uint_eq(mlen, 14);
	/* A long message is cut, never overflows. */
	char longm[400];
	memset(longm, 'm', sizeof(longm) - 1);
	longm[sizeof(longm) - 1] = '\0';
	n = tftp_write_error(b, sizeof(b), TFTP_EACCESS, longm);
	ck_assert_uint_eq(n, 4 + TFTP_ERRMSG_MAX + 1);
	ck_assert_uint_eq(tftp_write_error(b, 10, TFTP_EACCESS, longm), 0);

	/* OACK: written, then read back as the options of a request. */
	struct tftp_granted g = { .oack = true, .blksize = true, .blksize_v = 1428, .tsize = true,
				  .tsize_v = 1234567890123ull, .windowsize = true,
				  .windowsize_v = 8 };
	n = tftp_write_oack(b, sizeof(b), &g);
	ck_assert_uint_gt(n, 2);
	uint8_t rq_bytes[600] = { 0, 1, 'f', 0, 'o', 'c', 't', 'e', 't', 0 };
	memcpy(rq_bytes + 10, b + 2, n - 2);
	struct tftp_request rq;
	ck_assert_int_eq(tftp_parse_request(rq_bytes, 10 + n - 2, &rq, &why), 0);
	ck_assert(rq.blksize.asked && rq.blksize.value == 1428);
	ck_assert(rq.tsize.asked && rq.tsize.value == 1234567890123ull);
	ck_assert(rq.windowsize.asked && rq.windowsize.value == 8);
	ck_assert(!rq.timeout.asked);
	ck_assert_uint_eq(tftp_write_oack(b, 8, &g), 0);
	ck_assert_uint_eq(tftp_opcode(b, 1), 0);
}
END_TEST

START_TEST(test_netascii)
{
	uint8_t out[32];
	const uint8_t in[] = { 'a', '\n', 'b', '\r', 'c', '\r', '\n' };
	size_t n = tftp_netascii(in, sizeof(in), out);
	ck_assert_uint_eq(n, 11);
	ck_assert_mem_eq(out, ((uint8_t[]){ 'a', '\r', '\n', 'b', '\r', 0, 'c', '\r', 0, '\r', '\n' }),
			 11);
	ck_assert_uint_eq(tftp_netascii(in, sizeof(in), NULL), 11);
	ck_assert_uint_eq(tftp_netascii(in, 0, out), 0);
}
END_TEST

/* A pair cut by the end of the output is finished by the next call. */
START_TEST(test_netascii_step)
{
	struct tftp_netascii_pos pos = { 0 };
	const uint8_t in[] = { 'a', '\n', '\r', 'b' };
	uint8_t out[8];
	ck_assert_uint_eq(tftp_netascii_step(&pos, in, 4, out, 2), 2);
	ck_assert_mem_eq(out, "a\r", 2);
	ck_assert(pos.half);
	ck_assert_uint_eq(pos.in, 2);
	ck_assert_uint_eq(tftp_netascii_step(&pos, in + 2, 2, out, 2), 2);
	ck_assert_mem_eq(out, "\n\r", 2);
	ck_assert(pos.half);
	ck_assert_uint_eq(pos.in, 3);
	ck_assert_uint_eq(tftp_netascii_step(&pos, in + 3, 1, out, 8), 2);
	ck_assert_mem_eq(out, "\0b", 2);
	ck_assert(!pos.half);
	ck_assert_uint_eq(pos.in, 4);
	ck_assert_uint_eq(tftp_netascii_step(&pos, in, 0, out, 8), 0);
	ck_assert_uint_eq(tftp_netascii_step(&pos, in, 4, NULL, 0), 0);
}
END_TEST

/* The inputs of the block-by-block tests: n bytes made by fill(). */
enum na_input {
	NA_EMPTY,
	NA_PLAIN,    /* no CR, no LF */
	NA_LONE_CR,  /* every byte a CR: every block ends inside a pair */
	NA_LONE_LF,
	NA_CRLF,     /* CR LF pairs, which become CR NUL CR LF */
	NA_NUL,      /* NULs and text */
	NA_MIX,      /* pseudo-random a, b, CR, LF, NUL */
	NA_INPUT_MAX
};

static size_t na_fill(enum na_input kind, size_t n, uint8_t *p)
{
	uint32_t x = 13;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		switch (kind) {
		case NA_PLAIN: p[i] = (uint8_t)('a' + i % 26); break;
		case NA_LONE_CR: p[i] = '\r'; break;
		case NA_LONE_LF: p[i] = i % 3 == 2 ? '\n' : 'x'; break;
		case NA_CRLF: p[i] = i % 2 ? '\n' : '\r'; break;
		case NA_NUL: p[i] = i % 2 ? '\0' : 'z'; break;
		case NA_MIX: p[i] = (const uint8_t[]){ 'a', 'b', '\r', '\n', '\0' }[(x >> 16) % 5]; break;
		default: break;
		}
	}
	return kind == NA_EMPTY ? 0 : n;
}

/* A memory file holding n bytes of p. */
static int na_file(const uint8_t *p, size_t n)
{
	int fd = memfd_create("netascii", 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	return fd;
}

/* Every input, at several block sizes and file lengths (exactly a block,
 * a block and one byte, odd lengths), read through a scratch buffer
 * smaller and larger than a block: sent in order, each block is the slice
 * of the whole-file conversion; then sent as a window that is partly
 * acknowledged and retransmitted, the same. */
START_TEST(test_netascii_blocks)
{
	static const unsigned sizes[] = { 8, 9, 512 };
	static const size_t lens[] = { 1, 7, 8, 9, 511, 512, 513, 1024, 3001 };
	static const size_t caps[] = { 1, 3, 600 };
	enum na_input kind = (enum na_input)_i;
	uint8_t in[3001], whole[6002], out[512], buf[600];

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t n = na_fill(kind, lens[li], in);
		size_t total = tftp_netascii(in, n, whole);
		int fd = na_file(in, n);
		uint64_t size = 0;
		ck_assert_int_eq(tftp_netascii_size(fd, n, buf, 5, &size), 0);
		ck_assert_uint_eq(size, total);
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			unsigned bs = sizes[si];
			uint64_t nblocks = total / bs + 1;
			for (size_t ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++) {
				struct tftp_netascii_file f;
				tftp_netascii_file_init(&f, fd, bs);
				/* In order, each block acknowledged before the next. */
				for (uint64_t k = 1; k <= nblocks; k++) {
					size_t off = (size_t)(k - 1) * bs;
					size_t len = total - off < bs ? total - off : bs;
					ck_assert_int_eq(tftp_netascii_block(&f, k, k, out, len, buf, caps[ci]), 0);
					ck_assert_msg(memcmp(out, whole + off, len) == 0,
						      "input %d, %zu bytes, blksize %u, cap %zu: block %llu differs",
						      kind, n, bs, caps[ci], (unsigned long long)k);
				}
				/* Windows of 3; every other ACK is of the window's first
				 * block only, so the next window starts inside the last. */
				tftp_netascii_file_init(&f, fd, bs);
				uint64_t acked = 0;
				for (int round = 0; acked < nblocks && round < 10000; round++) {
					uint64_t end = acked + 3 > nblocks ? nblocks : acked + 3;
					for (uint64_t k = acked + 1; k <= end; k++) {
						size_t off = (size_t)(k - 1) * bs;
						size_t len = total - off < bs ? total - off : bs;
						ck_assert_int_eq(tftp_netascii_block(&f, k, acked + 1, out, len,
										     buf, caps[ci]), 0);
						ck_assert_msg(memcmp(out, whole + off, len) == 0,
							      "input %d, %zu bytes, blksize %u, cap %zu: "
							      "windowed block %llu differs",
							      kind, n, bs, caps[ci], (unsigned long long)k);
					}
					acked = round % 2 ? end : acked + 1;
				}
				ck_assert_uint_eq(acked, nblocks);
			}
		}
		close(fd);
	}
}
END_TEST

/* A file shorter than its size (cut while it was sent): -EIO, not junk. */
START_TEST(test_netascii_short_file)
{
	uint8_t in[64], out[16], buf[16];
	struct tftp_netascii_file f;
	uint64_t size;
	na_fill(NA_MIX, sizeof(in), in);
	int fd = na_file(in, sizeof(in));
	ck_assert_int_eq(tftp_netascii_size(fd, sizeof(in) + 1, buf, sizeof(buf), &size), -EIO);
	tftp_netascii_file_init(&f, fd, 16);
	ck_assert_int_eq(tftp_netascii_block(&f, 1, 1, out, 16, buf, sizeof(buf)), 0);
	ck_assert_int_eq(ftruncate(fd, 20), 0);
	ck_assert_int_eq(tftp_netascii_block(&f, 9, 2, out, 16, buf, sizeof(buf)), -EIO);
	ck_assert_int_eq(tftp_netascii_block(&f, 1, 2, out, 16, buf, sizeof(buf)), -EINVAL);
	close(fd);
}
END_TEST

static const struct {
	const char *in, *out; /* out NULL: refused */
} paths[] = {
	{ "ipxe.efi", "ipxe.efi" },
	{ "/ipxe.efi", "ipxe.efi" },
	{ "//ipxe.efi", "ipxe.efi" },
	{ "52:54:00:12:34:56/ipxe.efi", "ipxe.efi" },
	{ "/52-54-00-AB-CD-EF/undionly.kpxe", "undionly.kpxe" },
	{ "52:54:00:12:34:56/sub/x", "sub/x" },
	{ "sub/dir/file", "sub/dir/file" },
	{ "5254.0012.3456/ipxe.efi", "5254.0012.3456/ipxe.efi" }, /* not a MAC: a directory */
	{ "..", NULL },
	{ "../x", NULL },
	{ "a/../../x", NULL },
	{ "a/./b", NULL },
	{ "a//b", NULL },
	{ "a/", NULL },
	{ "/", NULL },
	{ "52:54:00:12:34:56/", NULL },
	{ "52:54:00:12:34:56/../x", NULL },
	{ "..\\windows", NULL },
	{ "/etc/passwd", "etc/passwd" }, /* relative to the root: not found there */
};

START_TEST(test_paths)
{
	char out[TFTP_FILENAME_MAX + 1] = "untouched";
	int e = tftp_path_clean(paths[_i].in, out, sizeof(out));
	if (paths[_i].out) {
		ck_assert_msg(e == 0, "%s", paths[_i].in);
		ck_assert_str_eq(out, paths[_i].out);
	} else {
		ck_assert_msg(e == -EINVAL, "%s: %d", paths[_i].in, e);
		ck_assert_str_eq(out, "untouched");
	}
	ck_assert_str_eq(bootfile_alias("snp.efi"), "snp-arm64.efi");
	ck_assert_str_eq(bootfile_alias("snp-arm64.efi"), "snp.efi");
	ck_assert_ptr_null(bootfile_alias("ipxe.efi"));
}
END_TEST

START_TEST(test_server_from_settings)
{
	char root[] = "/tmp/check_tftp.XXXXXX", listen[32], err[256] = "";
	struct tftp_server *srv = NULL;
	struct tftp_settings set = { .root = "/nonexistent/ironbell", .listen = "127.0.0.1:69",
				     .max_transfers = 4, .blksize_max = 1468,
				     .windowsize_max = 16, .timeout = 1, .retries = 5 };
	int e = -EADDRINUSE;

	ck_assert_ptr_nonnull(mkdtemp(root));
	/* a missing root stops it, named, before any socket is bound */
	ck_assert_int_eq(tftp_server_new(&set, &srv, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/ironbell"));
	ck_assert_ptr_null(srv);
	set.root = root;
	set.listen = "no port";
	ck_assert_int_eq(tftp_server_new(&set, &srv, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(srv);
	/* a free port on the loopback (at most 64 tries) */
	for (unsigned k = 0; k < 64 && e == -EADDRINUSE; k++) {
		snprintf(listen, sizeof(listen), "127.0.0.1:%u",
			 20000 + ((unsigned)getpid() * 7 + k * 131) % 40000);
		set.listen = listen;
		e = tftp_server_new(&set, &srv, err, sizeof(err));
	}
	ck_assert_msg(e == 0, "%s", err);
	/* the settings were copied: the caller's may go */
	memset(listen, 0, sizeof(listen));
	set.listen = set.root = NULL;
	ck_assert_int_eq(tftp_server_start(srv, err, sizeof(err)), 0);
	tftp_server_free(srv);
	ck_assert_int_eq(rmdir(root), 0);
}
END_TEST

static Suite *tftp_suite(void)
{
	Suite *s = suite_create("tftp");
	TCase *tc = tcase_create("codec");
	UNIT_TEST(tc, test_good_requests);
	tcase_add_loop_test(tc, test_malformed, 0, sizeof(bad) / sizeof(bad[0]));
	UNIT_TEST(tc, test_limits_of_requests);
	tcase_add_loop_test(tc, test_option_ranges, 0, sizeof(ranges) / sizeof(ranges[0]));
	UNIT_TEST(tc, test_negotiate);
	UNIT_TEST(tc, test_write_round_trips);
	UNIT_TEST(tc, test_netascii);
	UNIT_TEST(tc, test_netascii_step);
	tcase_add_loop_test(tc, test_netascii_blocks, 0, NA_INPUT_MAX);
	UNIT_TEST(tc, test_netascii_short_file);
	tcase_add_loop_test(tc, test_paths, 0, sizeof(paths) / sizeof(paths[0]));
	UNIT_TEST(tc, test_server_from_settings);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(tftp_suite());
}
