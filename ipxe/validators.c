/* validators — the HTTP validators of a served file (RFC 9110 §8.8, §13):
 * its ETag and Last-Modified, and the request headers that test them
 * (If-None-Match, If-Modified-Since, If-Range).
 *
 * DESIGN: every header is untrusted bytes, read with the byte cursor
 * (common/cursor.h), never past its length and never assumed
 * NUL-terminated. What does not parse is treated as absent, which is what
 * RFC 9110 asks of a recipient (§13.1.3: an invalid date is ignored;
 * §13.1.2: a list it cannot read is not a match), so a malformed header
 * costs the client a full 200 answer, never a wrong 304 or 206. Dates are
 * turned into seconds since the epoch with a civil-calendar formula (no
 * timegm, no locale, no time zone), in the three forms a recipient must
 * accept (§5.6.7): IMF-fixdate, the obsolete RFC 850 form and asctime.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/cursor.h"
#include "ipxe/ipxe-internal.h"

#define HTTP_DATE_YEAR_MIN 1970
#define HTTP_DATE_YEAR_MAX 9999
#define ETAG_LIST_MAX 64 /* entity tags of one If-None-Match considered */

static const char wdays[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
static const char *const long_wdays[7] = { "Sunday",   "Monday", "Tuesday", "Wednesday",
					   "Thursday", "Friday", "Saturday" };

void ipxe_etag(uint64_t dev, uint64_t ino, uint64_t size, int64_t mtime_sec, long mtime_nsec,
	       char out[IPXE_ETAG_MAX])
{
	uint64_t ns = (uint64_t)mtime_sec * 1000000000u + (uint64_t)mtime_nsec;
	snprintf(out, IPXE_ETAG_MAX, "\"%llx-%llx-%llx-%llx\"", (unsigned long long)dev,
		 (unsigned long long)ino, (unsigned long long)size, (unsigned long long)ns);
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int ipxe_http_date(int64_t t, char out[IPXE_HTTP_DATE_MAX])
{
	struct tm tm;
	time_t tt = (time_t)t;
	if (t < 0 || !gmtime_r(&tt, &tm) || tm.tm_year + 1900 > HTTP_DATE_YEAR_MAX)
		return -ERANGE;
	char tmp[96]; /* what the compiler allows for any int; 29 bytes here */
	int n = snprintf(tmp, sizeof(tmp), "%s, %02d %s %04d %02d:%02d:%02d GMT",
			 wdays[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (n < 0 || n >= IPXE_HTTP_DATE_MAX)
		return -ERANGE;
	memcpy(out, tmp, (size_t)n + 1);
	return 0;
}

/* ---- reading with the cursor ---- */

static bool rd_lit(struct rd *r, const char *s)
{
	size_t n = strlen(s);
	if (r->len < n || memcmp(r->p, s, n) != 0)
		return false;
	r->p += n;
	r->len -= n;
	return true;
}

/* Exactly n digits (or, with n_min < n, n_min..n of them). */
static bool rd_digits(struct rd *r, unsigned n_min, unsigned n, unsigned *ret)
{
	unsigned v = 0, i = 0;
	while (i < n && r->len > 0 && r->p[0] >= '0' && r->p[0] <= '9') {
		v = v * 10 + (unsigned)(r->p[0] - '0');
		r->p++;
		r->len--;
		i++;
	}
	*ret = v;
	return i >= n_min;
}

static bool rd_month(struct rd *r, unsigned *ret)
{
	for (unsigned i = 0; i < 12; i++)
		if (r->len >= 3 && memcmp(r->p, months[i], 3) == 0) {
			r->p += 3;
			r->len -= 3;
			*ret = i + 1;
			return true;
		}
	return false;
}

static void rd_ows(struct rd *r)
{
	while (r->len > 0 && (r->p[0] == ' ' || r->p[0] == '\t')) {
		r->p++;
		r->len--;
	}
}

/* hh:mm:ss */
static bool rd_clock(struct rd *r, unsigned *h, unsigned *mi, unsigned *s)
{
	return rd_digits(r, 2, 2, h) && rd_lit(r, ":") && rd_digits(r, 2, 2, mi) &&
	       rd_lit(r, ":") && rd_digits(r, 2, 2, s) && *h < 24 && *mi < 60 && *s < 61;
}

static bool day_ok(unsigned y, unsigned m, unsigned d)
{
	static const unsigned char mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m >= 1 && m <= 12 && d >= 1 && d <= mdays[m - 1] && (m != 2 || d < 29 || leap);
}

int ipxe_http_date_parse(const char *h, size_t n, int64_t *ret)
{
	struct rd r = rd_init(h, h ? n : 0);
	unsigned y = 0, m = 0, d = 0, hh, mi, ss;
	bool ok = false;

	if (!h)
		return -EINVAL;
	rd_ows(&r);
	if (r.len >= 4 && r.p[3] == ',') { /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
		r.p += 4;
		r.len -= 4;
		ok = rd_lit(&r, " ") && rd_digits(&r, 2, 2, &d) && rd_lit(&r, " ") &&
		     rd_month(&r, &m) && rd_lit(&r, " ") && rd_digits(&r, 4, 4, &y) &&
		     rd_lit(&r, " ") && rd_clock(&r, &hh, &mi, &ss) && rd_lit(&r, " GMT");
	} else if (r.len >= 4 && r.p[3] == ' ') { /* asctime: Sun Nov  6 08:49:37 1994 */
		r.p += 4;
		r.len -= 4;
		ok = rd_month(&r, &m) && rd_lit(&r, " ");
		if (ok && r.len > 0 && r.p[0] == ' ')
			ok = rd_lit(&r, " ") && rd_digits(&r, 1, 1, &d);
		else
			ok = ok && rd_digits(&r, 2, 2, &d);
		ok = ok && rd_lit(&r, " ") && rd_clock(&r, &hh, &mi, &ss) && rd_lit(&r, " ") &&
		     rd_digits(&r, 4, 4, &y);
	} else { /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
		for (unsigned i = 0; i < 7 && !ok; i++)
			ok = rd_lit(&r, long_wdays[i]);
		ok = ok && rd_lit(&r, ", ") && rd_digits(&r, 2, 2, &d) && rd_lit(&r, "-") &&
		     rd_month(&r, &m) && rd_lit(&r, "-") && rd_digits(&r, 2, 2, &y) &&
		     rd_lit(&r, " ") && rd_clock(&r, &hh, &mi, &ss) && rd_lit(&r, " GMT");
		/* §5.6.7: a two-digit year more than 50 years ahead is in the past. */
		if (ok)
			y += y < 70 ? 2000 : 1900;
	}
	rd_ows(&r);
	if (!ok || r.len != 0 || y < HTTP_DATE_YEAR_MIN || y > HTTP_DATE_YEAR_MAX ||
	    !day_ok(y, m, d))
		return -EINVAL;
	if (ss == 60)
		ss = 59; /* a leap second: the second before it */
	*ret = days_from_civil(y, m, d) * 86400 + hh * 3600 + mi * 60 + ss;
	return 0;
}

/* ---- entity tags ---- */

/* One entity-tag at r (RFC 9110 §8.8.3): [W/]"<etagc*>"; *weak set, *tag
 * and *tlen the quoted text with its quotes. */
static bool rd_etag(struct rd *r, bool *weak, const uint8_t **tag, size_t *tlen)
{
	*weak = rd_lit(r, "W/");
	if (r->len == 0 || r->p[0] != '"')
		return false;
	size_t i = 1;
	while (i < r->len && r->p[i] != '"') {
		uint8_t c = r->p[i];
		if (c != 0x21 && (c < 0x23 || c == 0x7f)) /* etagc, obs-text allowed */
			return false;
		i++;
	}
	if (i == r->len)
		return false;
	*tag = r->p;
	*tlen = i + 1;
	r->p += i + 1;
	r->len -= i + 1;
	return true;
}

static bool same_tag(const uint8_t *t, size_t n, const char *etag)
{
	return n == strlen(etag) && memcmp(t, etag, n) == 0;
}

int ipxe_if_none_match(const char *h, size_t n, const char *etag)
{
	struct rd r = rd_init(h, h ? n : 0);
	bool match = false;

	if (!h)
		return 0;
	rd_ows(&r);
	if (r.len > 0 && r.p[0] == '*') {
		r.p++;
		r.len--;
		rd_ows(&r);
		return r.len == 0 ? 1 : 0;
	}
	for (unsigned k = 0; k < ETAG_LIST_MAX; k++) {
		bool weak;
		const uint8_t *t;
		size_t tl;
		if (!rd_etag(&r, &weak, &t, &tl))
			return 0; /* not a list we can read: no match */
		match = match || same_tag(t, tl, etag); /* weak comparison, §8.8.3.2 */
		rd_ows(&r);
		if (r.len == 0)
			return match ? 1 : 0;
		if (!rd_lit(&r, ","))
			return 0;
		do /* empty elements are allowed (§5.6.1.2); each turn eats a byte */
			rd_ows(&r);
		while (rd_lit(&r, ","));
		if (r.len == 0)
			return match ? 1 : 0;
	}
	return 0; /* longer than we read: no match, the client gets the file */
}

bool ipxe_if_range(const char *h, size_t n, const char *etag, int64_t mtime)
{
	struct rd r = rd_init(h, h ? n : 0);
	bool weak;
	const uint8_t *t;
	size_t tl;
	int64_t date;

	if (!h)
		return true;
	rd_ows(&r);
	if ((r.len > 0 && r.p[0] == '"') || (r.len > 1 && r.p[0] == 'W' && r.p[1] == '/')) {
		/* An entity tag: the strong comparison (§13.1.5). */
		if (!rd_etag(&r, &weak, &t, &tl))
			return false;
		rd_ows(&r);
		return r.len == 0 && !weak && same_tag(t, tl, etag);
	}
	/* A date: only the exact Last-Modified. */
	return ipxe_http_date_parse((const char *)r.p, r.len, &date) == 0 && date == mtime;
}
