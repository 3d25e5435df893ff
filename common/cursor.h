/* cursor — a read cursor over untrusted bytes (OpenBSD dhcpleased's idea).
 * Every read checks the remaining length first and advances only on
 * success; a short read returns -EBADMSG. Never cast a receive buffer to a
 * struct: read its fields through one of these. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct rd {
	const uint8_t *p;
	size_t len;
};

static inline struct rd rd_init(const void *p, size_t len)
{
	return (struct rd){ .p = p, .len = len };
}

static inline int rd_u8(struct rd *r, uint8_t *ret)
{
	if (r->len < 1)
		return -EBADMSG;
	*ret = r->p[0];
	r->p += 1;
	r->len -= 1;
	return 0;
}

static inline int rd_be16(struct rd *r, uint16_t *ret)
{
	if (r->len < 2)
		return -EBADMSG;
	*ret = (uint16_t)(r->p[0] << 8 | r->p[1]);
	r->p += 2;
	r->len -= 2;
	return 0;
}

static inline int rd_be32(struct rd *r, uint32_t *ret)
{
	if (r->len < 4)
		return -EBADMSG;
	*ret = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	r->len -= 4;
	return 0;
}

/* Little-endian fields (IPMI's session headers, IPMI v2.0 §13.6). */
static inline int rd_le16(struct rd *r, uint16_t *ret)
{
	if (r->len < 2)
		return -EBADMSG;
	*ret = (uint16_t)(r->p[0] | r->p[1] << 8);
	r->p += 2;
	r->len -= 2;
	return 0;
}

static inline int rd_le32(struct rd *r, uint32_t *ret)
{
	if (r->len < 4)
		return -EBADMSG;
	*ret = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
	       (uint32_t)r->p[3] << 24;
	r->p += 4;
	r->len -= 4;
	return 0;
}

static inline int rd_bytes(struct rd *r, size_t n, const uint8_t **ret)
{
	if (r->len < n)
		return -EBADMSG;
	*ret = r->p;
	r->p += n;
	r->len -= n;
	return 0;
}

static inline int rd_copy(struct rd *r, void *dst, size_t n)
{
	const uint8_t *p;
	int e = rd_bytes(r, n, &p);
	if (e < 0)
		return e;
	memcpy(dst, p, n);
	return 0;
}
