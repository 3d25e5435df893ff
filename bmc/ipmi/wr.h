/* wr — private to bmc/ipmi/: the little-endian readers and the bounded
 * writers the codec shares. IPMI session fields are little-endian
 * (IPMI v2.0 §13.6), so these sit beside common/cursor.h's big-endian
 * ones. */
#pragma once

#include <string.h>

#include "bmc/ipmi/ipmi.h"
#include "common/cursor.h"

static inline int rd_le16(struct rd *r, uint16_t *ret)
{
	const uint8_t *p;
	int e = rd_bytes(r, 2, &p);
	if (e < 0)
		return e;
	*ret = (uint16_t)(p[0] | p[1] << 8);
	return 0;
}

static inline int rd_le32(struct rd *r, uint32_t *ret)
{
	const uint8_t *p;
	int e = rd_bytes(r, 4, &p);
	if (e < 0)
		return e;
	*ret = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return 0;
}

static inline void wr_bytes(struct ipmi_wr *w, const void *p, size_t n)
{
	if (w->over || w->cap - w->len < n) {
		w->over = true;
		return;
	}
	if (n)
		memcpy(w->p + w->len, p, n);
	w->len += n;
}

static inline void wr_u8(struct ipmi_wr *w, uint8_t v)
{
	wr_bytes(w, &v, 1);
}

static inline void wr_le16(struct ipmi_wr *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	wr_bytes(w, b, 2);
}

static inline void wr_le32(struct ipmi_wr *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	wr_bytes(w, b, 4);
}

static inline void wr_zero(struct ipmi_wr *w, size_t n)
{
	static const uint8_t z[16];
	while (n > 0 && !w->over) {
		size_t k = n < sizeof(z) ? n : sizeof(z);
		wr_bytes(w, z, k);
		n -= k;
	}
}

/* The bytes written, or -EMSGSIZE when the writer ran over. */
static inline int wr_result(const struct ipmi_wr *w)
{
	return w->over ? -EMSGSIZE : (int)w->len;
}
