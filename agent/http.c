/* http — the Docker Engine's HTTP/1.1 responses, parsed with the cursor.
 *
 * DESIGN: the agent talks to the Docker Engine over its unix socket with a
 * small client of its own (no libcurl in an initramfs). The engine is
 * local, but its responses are still parsed as untrusted input: a named
 * cap on the head, the status line and each header read through the byte
 * cursor, Content-Length parsed with an overflow check and refused when
 * repeated with another value, and the chunked transfer coding (RFC 9112
 * §7.1) decoded by a byte-at-a-time state machine that never trusts a
 * chunk size beyond AGENT_HTTP_BODY_MAX. Everything here is pure. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "agent/agent.h"
#include "common/cursor.h"

static bool is_tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* One line up to CRLF: *ret and its length without the CRLF. */
static int rd_line(struct rd *r, const uint8_t **ret, size_t *len)
{
	const uint8_t *cr = memchr(r->p, '\r', r->len);
	if (!cr || (size_t)(cr - r->p) + 1 >= r->len || cr[1] != '\n')
		return -EBADMSG;
	*len = (size_t)(cr - r->p);
	return rd_bytes(r, *len + 2, ret);
}

static int parse_status(const uint8_t *l, size_t n, int *status)
{
	/* "HTTP/1.x SSS[ reason]" */
	if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
		return -EBADMSG;
	int v = 0;
	for (int i = 9; i < 12; i++) {
		if (l[i] < '0' || l[i] > '9')
			return -EBADMSG;
		v = v * 10 + l[i] - '0';
	}
	if (v < 100 || v > 599 || (n > 12 && l[12] != ' '))
		return -EBADMSG;
	for (size_t i = 12; i < n; i++)
		if ((l[i] < 0x20 && l[i] != '\t') || l[i] == 0x7f)
			return -EBADMSG;
	*status = v;
	return 0;
}

static int parse_length(const uint8_t *v, size_t n, int64_t *ret)
{
	uint64_t x = 0;
	if (n == 0 || n > 18)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EBADMSG;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*ret = (int64_t)x;
	return 0;
}

static bool value_is(const uint8_t *v, size_t n, const char *s)
{
	return n == strlen(s) && strncasecmp((const char *)v, s, n) == 0;
}

int agent_http_head_parse(const uint8_t *p, size_t n, struct agent_http_head *ret)
{
	struct agent_http_head h = { .content_length = -1 };
	size_t scan = n < AGENT_HTTP_HEAD_MAX ? n : AGENT_HTTP_HEAD_MAX;
	const uint8_t *end = memmem(p, scan, "\r\n\r\n", 4);
	const uint8_t *l;
	size_t ll;
	if (!end)
		return n >= AGENT_HTTP_HEAD_MAX ? -EMSGSIZE : -EAGAIN;
	h.head_len = (size_t)(end - p) + 4;
	struct rd r = rd_init(p, h.head_len);
	if (rd_line(&r, &l, &ll) < 0 || parse_status(l, ll, &h.status) < 0)
		return -EBADMSG;
	for (;;) {
		if (rd_line(&r, &l, &ll) < 0)
			return -EBADMSG;
		if (ll == 0)
			break;
		size_t k = 0;
		while (k < ll && is_tchar(l[k]))
			k++;
		if (k == 0 || k == ll || l[k] != ':')
			return -EBADMSG;
		const uint8_t *v = l + k + 1;
		size_t vl = ll - k - 1;
		for (size_t i = 0; i < vl; i++)
			if ((v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
				return -EBADMSG;
		while (vl && (v[0] == ' ' || v[0] == '\t'))
			v++, vl--;
		while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
		if (k == 14 && strncasecmp((const char *)l, "Content-Length", 14) == 0) {
			int64_t cl;
			if (parse_length(v, vl, &cl) < 0 ||
			    (h.content_length >= 0 && h.content_length != cl))
				return -EBADMSG;
			h.content_length = cl;
		} else if (k == 17 && strncasecmp((const char *)l, "Transfer-Encoding", 17) == 0) {
			if (!value_is(v, vl, "chunked"))
				return -EBADMSG; /* the engine sends no other coding */
			h.chunked = true;
		}
	}
	if (h.chunked)
		h.content_length = -1;
	*ret = h;
	return 0;
}

enum {
	CH_SIZE,
	CH_EXT,
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER,
	CH_TRAILER_LINE,
	CH_TRAILER_LF,
	CH_END_LF,
	CH_DONE,
};

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int agent_http_chunked_feed(struct agent_http_chunked *c, uint8_t *p, size_t n, size_t *ret_out)
{
	size_t out = 0, i = 0;
	int e = 0;
	while (i < n && c->state != CH_DONE) {
		uint8_t b = p[i];
		switch (c->state) {
		case CH_SIZE:
			if (hexval(b) >= 0) {
				if (c->digits == 16 || c->left > AGENT_HTTP_BODY_MAX) {
					e = -EBADMSG;
					goto out;
				}
				c->left = c->left * 16 + (uint64_t)hexval(b);
				c->digits++;
			} else if (c->digits && (b == ';' || b == ' ' || b == '\t')) {
				c->state = CH_EXT;
			} else if (c->digits && b == '\r') {
				c->state = CH_SIZE_LF;
			} else {
				e = -EBADMSG;
				goto out;
			}
			break;
		case CH_EXT:
			if (b == '\r')
				c->state = CH_SIZE_LF;
			else if ((b < 0x20 && b != '\t') || b == 0x7f) {
				e = -EBADMSG;
				goto out;
			}
			break;
		case CH_SIZE_LF:
			if (b != '\n' || c->left > AGENT_HTTP_BODY_MAX) {
				e = -EBADMSG;
				goto out;
			}
			c->state = c->left ? CH_DATA : CH_TRAILER;
			break;
		case CH_DATA: {
			size_t m = n - i;
			if (m > c->left)
				m = (size_t)c->left;
			memmove(p + out, p + i, m);
			out += m;
			c->left -= m;
			i += m;
			if (!c->left)
				c->state = CH_DATA_CR;
			continue;
		}
		case CH_DATA_CR:
			if (b != '\r') {
				e = -EBADMSG;
				goto out;
			}
			c->state = CH_DATA_LF;
			break;
		case CH_DATA_LF:
			if (b != '\n') {
				e = -EBADMSG;
				goto out;
			}
			c->state = CH_SIZE;
			c->digits = 0;
			c->left = 0;
			break;
		case CH_TRAILER: c->state = b == '\r' ? CH_END_LF : CH_TRAILER_LINE; break;
		case CH_TRAILER_LINE:
			if (b == '\r')
				c->state = CH_TRAILER_LF;
			break;
		case CH_TRAILER_LF:
		case CH_END_LF:
			if (b != '\n') {
				e = -EBADMSG;
				goto out;
			}
			c->state = c->state == CH_END_LF ? CH_DONE : CH_TRAILER;
			break;
		}
		i++;
	}
out:
	*ret_out = out;
	if (e < 0)
		return e;
	return c->state == CH_DONE ? 1 : 0;
}

int agent_mux_feed(struct agent_mux *m, const uint8_t *p, size_t n,
		   void (*out)(void *arg, const uint8_t *p, size_t n), void *arg)
{
	struct rd r = rd_init(p, n);
	while (r.len) {
		if (m->left == 0) {
			uint8_t b;
			(void)rd_u8(&r, &b);
			m->hdr[m->hdr_n++] = b;
			if (m->hdr_n < sizeof(m->hdr))
				continue;
			m->hdr_n = 0;
			if (m->hdr[0] > 2 || m->hdr[1] || m->hdr[2] || m->hdr[3])
				return -EBADMSG;
			struct rd h = rd_init(m->hdr + 4, 4);
			(void)rd_be32(&h, &m->left);
			continue;
		}
		size_t k = r.len < m->left ? r.len : m->left;
		const uint8_t *d = NULL;
		(void)rd_bytes(&r, k, &d);
		m->left -= (uint32_t)k;
		out(arg, d, k);
	}
	return 0;
}
