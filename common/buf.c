/* buf — bounded growable buffers. See buf.h. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

void buf_init(struct buf *b, size_t max)
{
	*b = (struct buf){ .max = max };
}

static int buf_reserve(struct buf *b, size_t extra)
{
	if (extra > b->max || b->len > b->max - extra)
		return -E2BIG;
	size_t need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	size_t n = b->alloc ? b->alloc : 64;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : n * 2;
	char *p = realloc(b->data, n);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->alloc = n;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	int r = buf_reserve(b, n);
	if (r < 0)
		return r;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_dump_cb(const char *p, size_t n, void *data)
{
	return buf_append(data, p, n) < 0 ? -1 : 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_putc(struct buf *b, char c)
{
	return buf_append(b, &c, 1);
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	char small[256];
	int n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(small))
		return buf_append(b, small, (size_t)n);
	int r = buf_reserve(b, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

int buf_put_json_string(struct buf *b, const char *s, size_t n)
{
	int r = buf_putc(b, '"');
	for (size_t i = 0; r == 0 && i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': r = buf_puts(b, "\\\""); break;
		case '\\': r = buf_puts(b, "\\\\"); break;
		case '\n': r = buf_puts(b, "\\n"); break;
		case '\r': r = buf_puts(b, "\\r"); break;
		case '\t': r = buf_puts(b, "\\t"); break;
		default:
			if (c < 0x20)
				r = buf_printf(b, "\\u%04x", c);
			else
				r = buf_putc(b, (char)c);
		}
	}
	return r < 0 ? r : buf_putc(b, '"');
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

char *buf_steal(struct buf *b)
{
	char *p = b->data;
	if (!p)
		p = strdup("");
	b->data = NULL;
	b->len = b->alloc = 0;
	return p;
}

void buf_free(struct buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}
