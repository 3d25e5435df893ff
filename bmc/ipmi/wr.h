/* wr — private to bmc/ipmi/: the bounded little-endian writers the codec
 * shares (IPMI session fields are little-endian, IPMI v2.0 §13.6); the
 * readers are common/cursor.h's rd_le16 and rd_le32. */
#pragma once

#include <string.h>

#include "bmc/ipmi/ipmi.h"
#include "common/cursor.h"

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
