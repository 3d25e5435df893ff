/* utf8 — decoding untrusted bytes as UTF-8 and repairing them.
 *
 * DESIGN: one decoder, utf8_next(), reads a character through the byte
 * cursor (common/cursor.h) by the table of well-formed sequences of
 * Unicode §3.9 (table 3-7): the lead byte fixes the length and the range
 * of the second byte (E0 A0..BF keeps out overlongs, ED 80..9F the
 * surrogates, F0 90..BF overlongs again, F4 80..8F what lies past
 * U+10FFFF), every later byte is 80..BF. At the first byte out of range
 * the sequence stops being well formed: what was read so far is the
 * maximal subpart, replaced by one U+FFFD, and the byte that broke it is
 * read again as the start of the next character. The rest is built on it:
 * utf8_valid() and utf8_sanitize(), which writes the repaired text within
 * a bound, cutting between characters. Every loop consumes at least one
 * byte per turn, so each is bounded by the input's length.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/utf8.h"

int utf8_next(struct rd *r, uint32_t *ret_cp)
{
	struct rd t = *r;
	uint8_t b0, lo = 0x80, hi = 0xbf;
	size_t need;
	uint32_t cp;

	if (rd_u8(&t, &b0) < 0)
		return -EBADMSG;
	if (b0 < 0x80) {
		need = 0;
		cp = b0;
	} else if (b0 >= 0xc2 && b0 <= 0xdf) {
		need = 1;
		cp = b0 & 0x1f;
	} else if (b0 >= 0xe0 && b0 <= 0xef) {
		need = 2;
		cp = b0 & 0x0f;
		if (b0 == 0xe0)
			lo = 0xa0; /* no overlong */
		else if (b0 == 0xed)
			hi = 0x9f; /* no surrogate */
	} else if (b0 >= 0xf0 && b0 <= 0xf4) {
		need = 3;
		cp = b0 & 0x07;
		if (b0 == 0xf0)
			lo = 0x90; /* no overlong */
		else if (b0 == 0xf4)
			hi = 0x8f; /* not past U+10FFFF */
	} else {
		/* 80..BF (a continuation byte), C0, C1 (overlongs of ASCII),
		 * F5..FF (past U+10FFFF): never a lead. */
		*r = t;
		*ret_cp = UTF8_REPLACEMENT;
		return -EILSEQ;
	}
	for (size_t i = 0; i < need; i++) {
		struct rd u = t;
		uint8_t b;
		if (rd_u8(&u, &b) < 0 || b < lo || b > hi) {
			*r = t; /* past the maximal subpart, not past b */
			*ret_cp = UTF8_REPLACEMENT;
			return -EILSEQ;
		}
		t = u;
		cp = cp << 6 | (b & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*r = t;
	*ret_cp = cp;
	return 0;
}

bool utf8_valid(const void *p, size_t n)
{
	struct rd r = rd_init(p, n);
	uint32_t cp;
	while (r.len)
		if (utf8_next(&r, &cp) < 0)
			return false;
	return true;
}

size_t utf8_write(uint32_t cp, char c[UTF8_CHAR_MAX])
{
	if (cp < 0x80) {
		c[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		c[0] = (char)(0xc0 | cp >> 6);
		c[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		c[0] = (char)(0xe0 | cp >> 12);
		c[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		c[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	c[0] = (char)(0xf0 | cp >> 18);
	c[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	c[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	c[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The next character of r as it is written out (flags applied) into c;
 * returns its length. r must not be empty. */
static size_t next_out(struct rd *r, unsigned flags, char c[UTF8_CHAR_MAX])
{
	uint32_t cp;
	(void)utf8_next(r, &cp); /* U+FFFD when ill formed */
	if ((flags & UTF8_CONTROLS_QMARK) && ((cp < 0x20 && cp != '\t') || cp == 0x7f))
		cp = '?';
	return utf8_write(cp, c);
}

size_t utf8_sanitized_len(const void *in, size_t n, unsigned flags)
{
	struct rd r = rd_init(in, n);
	char c[UTF8_CHAR_MAX];
	size_t len = 0;
	while (r.len)
		len += next_out(&r, flags, c);
	return len;
}

size_t utf8_sanitize(const void *in, size_t n, char *out, size_t max, unsigned flags, bool *ret_cut)
{
	const size_t mark = strlen(UTF8_CUT_MARK);
	bool cut = utf8_sanitized_len(in, n, flags) > max;
	size_t room = !cut ? max : max > mark ? max - mark : 0;
	struct rd r = rd_init(in, n);
	char c[UTF8_CHAR_MAX];
	size_t o = 0;

	while (r.len) {
		size_t k = next_out(&r, flags, c);
		if (k > room - o)
			break;
		memcpy(out + o, c, k);
		o += k;
	}
	for (size_t i = 0; cut && i < mark && o < max; i++)
		out[o++] = UTF8_CUT_MARK[i];
	out[o] = '\0';
	if (ret_cut)
		*ret_cut = cut;
	return o;
}
