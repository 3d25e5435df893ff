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
#include <sys/types.h>

#include "common/cursor.h"
#include "common/utf8.h"
#include "syslog/syslog-codec.h"

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

static struct syslog_slice slice(const uint8_t *p, size_t n)
{
	return (struct syslog_slice){ (const char *)p, n };
}

/* The byte at offset i of r, not consumed; -1 past the end. */
static int peek(const struct rd *r, size_t i)
{
	return i < r->len ? r->p[i] : -1;
}

/* Consumes the n bytes of lit when r starts with them. */
static bool skip_prefix(struct rd *r, const char *lit, size_t n)
{
	const uint8_t *p;
	if (r->len < n || memcmp(r->p, lit, n) != 0)
		return false;
	return rd_bytes(r, n, &p) == 0;
}

/* Where the next space of r is, from its start; -1 when there is none. */
static ssize_t find_space(const struct rd *r)
{
	const uint8_t *sp = r->len ? memchr(r->p, ' ', r->len) : NULL;
	return sp ? sp - r->p : -1;
}

/* A header field up to the next space (which is consumed); "-" is nil. */
static int field(struct rd *r, struct syslog_slice *ret)
{
	ssize_t k = find_space(r);
	const uint8_t *f, *sp;
	if (k <= 0 || rd_bytes(r, (size_t)k, &f) < 0 || rd_bytes(r, 1, &sp) < 0)
		return -EBADMSG;
	*ret = (k == 1 && f[0] == '-') ? slice(f, 0) : slice(f, (size_t)k);
	return 0;
}

/* Structured data: "-" or one or more [ID params]. */
static int structured_data(struct rd *r)
{
	if (skip_prefix(r, "-", 1))
		return 0;
	if (peek(r, 0) != '[')
		return -EBADMSG;
	while (peek(r, 0) == '[') {
		const uint8_t *elem;
		bool quoted = false;
		size_t i = 1;
		int ch;
		for (; (ch = peek(r, i)) >= 0; i++) {
			if (quoted && ch == '\\' && peek(r, i + 1) >= 0) {
				i++; /* \" \\ \] */
				continue;
			}
			if (ch == '"')
				quoted = !quoted;
			else if (ch == ']' && !quoted)
				break;
		}
		if (ch < 0 || rd_bytes(r, i + 1, &elem) < 0)
			return -EBADMSG;
	}
	return 0;
}

static int parse_5424(struct rd c, struct syslog_msg *m, enum syslog_bad *why)
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
	/* A space before the message; junk glued to the structured data is
	 * bad. Then maybe a UTF-8 BOM. */
	if (!skip_prefix(&c, " ", 1) && c.len)
		return bad(why, SYSLOG_BAD_SD);
	(void)skip_prefix(&c, "\xef\xbb\xbf", 3);
	m->format = SYSLOG_RFC5424;
	m->text = slice(c.p, c.len);
	return 0;
}

static bool is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_tag_char(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '.' ||
	       ch == '_' || ch == '-' || ch == '/';
}

/* "Mmm dd hh:mm:ss " (the day may be space-padded) at the start of r. */
static bool rfc3164_time(const struct rd *r)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	uint8_t t[16];
	if (r->len < sizeof(t))
		return false;
	memcpy(t, r->p, sizeof(t));
	if (t[3] != ' ' || t[6] != ' ' || t[9] != ':' || t[12] != ':' || t[15] != ' ')
		return false;
	bool month = false;
	for (size_t i = 0; i < 12 && !month; i++)
		month = memcmp(t, months + 3 * i, 3) == 0;
	return month && (t[4] == ' ' || is_digit(t[4])) && is_digit(t[5]) && is_digit(t[7]) &&
	       is_digit(t[8]) && is_digit(t[10]) && is_digit(t[11]) && is_digit(t[13]) &&
	       is_digit(t[14]);
}

/* A tag "name[pid]:" or "name:" at the start of c, at most 48 bytes of
 * [A-Za-z0-9._/-]: fills app and procid, consumes it and one space. */
static bool tag(struct rd *c, struct syslog_msg *m)
{
	struct syslog_slice pid = { 0 };
	const uint8_t *t;
	size_t i = 0;

	while (i < 48 && is_tag_char(peek(c, i)))
		i++;
	if (i == 0 || i >= c->len)
		return false;
	size_t name = i;
	if (peek(c, i) == '[') {
		size_t s = ++i;
		while (i < 64 && is_digit(peek(c, i)))
			i++;
		if (peek(c, i) != ']' || i == s)
			return false;
		pid = slice(c->p + s, i - s);
		i++;
	}
	if (peek(c, i) != ':')
		return false;
	i++;
	if (peek(c, i) == ' ')
		i++;
	if (rd_bytes(c, i, &t) < 0)
		return false;
	m->app = slice(t, name);
	m->procid = pid;
	return true;
}

static int parse_3164(struct rd c, struct syslog_msg *m)
{
	const uint8_t *ts, *host;
	m->format = SYSLOG_RFC3164;
	if (rfc3164_time(&c) && rd_bytes(&c, 16, &ts) == 0) {
		m->timestamp = slice(ts, 15);
		/* "HOST TAG: msg" or "TAG: msg". */
		ssize_t k = find_space(&c);
		if (!tag(&c, m) && k > 0) {
			struct rd after = c;
			if (rd_bytes(&after, (size_t)k + 1, &host) == 0 && tag(&after, m)) {
				m->host = slice(host, (size_t)k);
				c = after;
			}
		}
	} else {
		(void)tag(&c, m);
	}
	m->text = slice(c.p, c.len);
	return 0;
}

int syslog_parse(const uint8_t *bytes, size_t n, struct syslog_msg *ret, enum syslog_bad *why)
{
	struct syslog_msg m = { 0 };
	struct rd c = rd_init(bytes, n);
	const uint8_t *p;
	unsigned pri = 0;
	size_t i;

	/* A trailing NUL or newline is common (busybox sends the NUL). */
	while (c.len &&
	       (c.p[c.len - 1] == '\0' || c.p[c.len - 1] == '\n' || c.p[c.len - 1] == '\r'))
		c.len--;
	if (c.len == 0)
		return bad(why, SYSLOG_BAD_EMPTY);
	/* <PRI>: 1 to 3 digits, no leading zero but in "<0>" (RFC 5424 §6.2.1). */
	if (!skip_prefix(&c, "<", 1))
		return bad(why, SYSLOG_BAD_PRI);
	for (i = 0; i < 4 && is_digit(peek(&c, i)); i++)
		pri = pri * 10 + (unsigned)(c.p[i] - '0');
	if (i == 0 || i == 4 || peek(&c, i) != '>' || pri > SYSLOG_PRI_MAX ||
	    (c.p[0] == '0' && i > 1) || rd_bytes(&c, i + 1, &p) < 0)
		return bad(why, SYSLOG_BAD_PRI);
	m.facility = pri / 8;
	m.severity = pri % 8;
	int e = skip_prefix(&c, "1 ", 2) ? parse_5424(c, &m, why) : parse_3164(c, &m);
	if (e < 0)
		return e;
	*ret = m;
	return 0;
}

size_t syslog_clean(const struct syslog_slice *s, char *out, size_t max)
{
	return utf8_sanitize(s->p, s->n, out, max, UTF8_CONTROLS_QMARK, NULL);
}

size_t syslog_event_text(const struct syslog_msg *m, char *out, size_t max, bool *ret_cut)
{
	const char *sev = syslog_severity_name(m->severity);
	struct syslog_slice app = m->app.n ? m->app : (struct syslog_slice){ "-", 1 };
	bool cut_app, cut_pid = false, cut_text;
	size_t o = strlen(sev);

	memcpy(out, sev, o);
	out[o++] = ' ';
	o += utf8_sanitize(app.p, app.n, out + o, SYSLOG_APP_MAX, UTF8_CONTROLS_QMARK, &cut_app);
	if (m->procid.n) {
		out[o++] = '[';
		o += utf8_sanitize(m->procid.p, m->procid.n, out + o, SYSLOG_PID_MAX,
				   UTF8_CONTROLS_QMARK, &cut_pid);
		out[o++] = ']';
	}
	out[o++] = ':';
	out[o++] = ' ';
	o += utf8_sanitize(m->text.p, m->text.n, out + o, max, UTF8_CONTROLS_QMARK, &cut_text);
	*ret_cut = cut_app || cut_pid || cut_text;
	return o;
}
