/* codec — one syslog datagram into its parts, over a byte cursor.
 *
 * DESIGN: both formats start with <PRI> (1 to 3 digits, no leading zero
 * but in "<0>", at most 191). "1 " after it means RFC 5424: six space-
 * separated header fields ("-" for nil), structured data ("-" or bracketed
 * elements whose quoted values may escape '"', '\' and ']'), then the
 * message, maybe behind a UTF-8 BOM. Anything else is RFC 3164 as senders
 * really write it: an optional "Mmm dd hh:mm:ss " timestamp, then either
 * "HOST TAG: msg" (logger --rfc3164, rsyslog) or "TAG: msg" without a host
 * (busybox syslogd); when no tag is recognisable the whole rest is the
 * message. Every part is a (pointer, length) slice of the datagram; nothing
 * is copied until the server cleans it for an event.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "syslog/syslog.h"

const char *syslog_bad_name(enum syslog_bad why)
{
	static const char *const names[SYSLOG_BAD_MAX] = {
		[SYSLOG_BAD_EMPTY] = "empty",
		[SYSLOG_BAD_PRI] = "pri",
		[SYSLOG_BAD_HEADER] = "header",
		[SYSLOG_BAD_SD] = "structured_data",
	};
	return why > 0 && why < SYSLOG_BAD_MAX ? names[why] : "unknown";
}

const char *syslog_severity_name(unsigned severity)
{
	static const char *const names[8] = { "emerg",   "alert",  "crit", "err",
					       "warning", "notice", "info", "debug" };
	return severity < 8 ? names[severity] : "?";
}

static int bad(enum syslog_bad *why, enum syslog_bad w)
{
	if (why)
		*why = w;
	return -EBADMSG;
}

struct cur {
	const char *p;
	size_t n;
};

/* A header field up to the next space (which is consumed); "-" is nil. */
static int field(struct cur *c, struct syslog_slice *ret)
{
	const char *sp = memchr(c->p, ' ', c->n);
	if (!sp)
		return -1;
	size_t k = (size_t)(sp - c->p);
	if (k == 0)
		return -1;
	*ret = (k == 1 && c->p[0] == '-') ? (struct syslog_slice){ c->p, 0 } :
					    (struct syslog_slice){ c->p, k };
	c->p += k + 1;
	c->n -= k + 1;
	return 0;
}

/* Structured data: "-" or one or more [ID params]. */
static int structured_data(struct cur *c)
{
	if (c->n >= 1 && c->p[0] == '-') {
		c->p++;
		c->n--;
		return 0;
	}
	if (c->n == 0 || c->p[0] != '[')
		return -1;
	while (c->n && c->p[0] == '[') {
		bool quoted = false;
		size_t i = 1;
		for (; i < c->n; i++) {
			char ch = c->p[i];
			if (quoted && ch == '\\' && i + 1 < c->n) {
				i++; /* \" \\ \] */
				continue;
			}
			if (ch == '"')
				quoted = !quoted;
			else if (ch == ']' && !quoted)
				break;
		}
		if (i >= c->n)
			return -1;
		c->p += i + 1;
		c->n -= i + 1;
	}
	return 0;
}

static int parse_5424(struct cur c, struct syslog_msg *m, enum syslog_bad *why)
{
	if (field(&c, &m->timestamp) < 0 || field(&c, &m->host) < 0 || field(&c, &m->app) < 0 ||
	    field(&c, &m->procid) < 0)
		return bad(why, SYSLOG_BAD_HEADER);
	/* MSGID, then structured data (the message may be absent: the
	 * datagram may end right after the structured data). */
	if (field(&c, &m->msgid) < 0)
		return bad(why, SYSLOG_BAD_HEADER);
	if (structured_data(&c) < 0)
		return bad(why, SYSLOG_BAD_SD);
	if (c.n && c.p[0] == ' ') {
		c.p++;
		c.n--;
	} else if (c.n) {
		return bad(why, SYSLOG_BAD_SD); /* junk glued to the structured data */
	}
	if (c.n >= 3 && (unsigned char)c.p[0] == 0xef && (unsigned char)c.p[1] == 0xbb &&
	    (unsigned char)c.p[2] == 0xbf) {
		c.p += 3;
		c.n -= 3;
	}
	m->format = SYSLOG_RFC5424;
	m->text = (struct syslog_slice){ c.p, c.n };
	return 0;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* "Mmm dd hh:mm:ss " (the day may be space-padded). */
static bool rfc3164_time(const char *p, size_t n)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	if (n < 16 || p[3] != ' ' || p[6] != ' ' || p[9] != ':' || p[12] != ':' || p[15] != ' ')
		return false;
	bool month = false;
	for (size_t i = 0; i < 12 && !month; i++)
		month = memcmp(p, months + 3 * i, 3) == 0;
	return month && (p[4] == ' ' || is_digit(p[4])) && is_digit(p[5]) && is_digit(p[7]) &&
	       is_digit(p[8]) && is_digit(p[10]) && is_digit(p[11]) && is_digit(p[13]) &&
	       is_digit(p[14]);
}

/* A tag "name[pid]:" or "name:" at the start of c, at most 48 bytes of
 * [A-Za-z0-9._/-]: fills app and procid, consumes it and one space. */
static bool tag(struct cur *c, struct syslog_msg *m)
{
	size_t i = 0;
	while (i < c->n && i < 48 &&
	       ((c->p[i] >= 'a' && c->p[i] <= 'z') || (c->p[i] >= 'A' && c->p[i] <= 'Z') ||
		is_digit(c->p[i]) || c->p[i] == '.' || c->p[i] == '_' || c->p[i] == '-' ||
		c->p[i] == '/'))
		i++;
	if (i == 0 || i >= c->n)
		return false;
	size_t name = i;
	struct syslog_slice pid = { 0 };
	if (c->p[i] == '[') {
		size_t s = ++i;
		while (i < c->n && i < 64 && is_digit(c->p[i]))
			i++;
		if (i >= c->n || c->p[i] != ']' || i == s)
			return false;
		pid = (struct syslog_slice){ c->p + s, i - s };
		i++;
	}
	if (i >= c->n || c->p[i] != ':')
		return false;
	i++;
	m->app = (struct syslog_slice){ c->p, name };
	m->procid = pid;
	if (i < c->n && c->p[i] == ' ')
		i++;
	c->p += i;
	c->n -= i;
	return true;
}

static int parse_3164(struct cur c, struct syslog_msg *m)
{
	m->format = SYSLOG_RFC3164;
	if (rfc3164_time(c.p, c.n)) {
		m->timestamp = (struct syslog_slice){ c.p, 15 };
		c.p += 16;
		c.n -= 16;
		/* "HOST TAG: msg" or "TAG: msg". */
		if (!tag(&c, m)) {
			const char *sp = memchr(c.p, ' ', c.n);
			if (sp && sp > c.p) {
				struct cur after = { sp + 1, c.n - (size_t)(sp - c.p) - 1 };
				struct syslog_slice host = { c.p, (size_t)(sp - c.p) };
				if (tag(&after, m)) {
					m->host = host;
					c = after;
				}
			}
		}
	} else {
		(void)tag(&c, m);
	}
	m->text = (struct syslog_slice){ c.p, c.n };
	return 0;
}

int syslog_parse(const uint8_t *bytes, size_t n, struct syslog_msg *ret, enum syslog_bad *why)
{
	struct syslog_msg m = { 0 };
	struct cur c = { (const char *)bytes, n };
	unsigned pri = 0;
	size_t i;

	/* A trailing NUL or newline is common (busybox sends the NUL). */
	while (c.n && (c.p[c.n - 1] == '\0' || c.p[c.n - 1] == '\n' || c.p[c.n - 1] == '\r'))
		c.n--;
	if (c.n == 0)
		return bad(why, SYSLOG_BAD_EMPTY);
	if (c.p[0] != '<')
		return bad(why, SYSLOG_BAD_PRI);
	for (i = 1; i < c.n && i <= 4 && is_digit(c.p[i]); i++)
		pri = pri * 10 + (unsigned)(c.p[i] - '0');
	if (i == 1 || i > 4 || i >= c.n || c.p[i] != '>' || pri > SYSLOG_PRI_MAX ||
	    (c.p[1] == '0' && i > 2))
		return bad(why, SYSLOG_BAD_PRI);
	c.p += i + 1;
	c.n -= i + 1;
	m.facility = pri / 8;
	m.severity = pri % 8;
	int e = (c.n >= 2 && c.p[0] == '1' && c.p[1] == ' ') ?
			parse_5424((struct cur){ c.p + 2, c.n - 2 }, &m, why) :
			parse_3164(c, &m);
	if (e < 0)
		return e;
	*ret = m;
	return 0;
}

size_t syslog_clean(const struct syslog_slice *s, char *out, size_t max)
{
	size_t n = s->n, o = 0;
	bool cut = n > max;
	if (cut)
		n = max > 3 ? max - 3 : 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s->p[i];
		out[o++] = (ch < 0x20 && ch != '\t') || ch == 0x7f ? '?' : (char)ch;
	}
	if (cut)
		for (size_t i = 0; i < 3 && o < max; i++)
			out[o++] = '.';
	out[o] = '\0';
	return o;
}
