/* dhcp-internal — declarations shared by the files of dhcp/ only. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dhcp/dhcp-codec.h"

/* A write cursor over a caller's buffer: the mirror of common/cursor.h's
 * struct rd. Every write checks the room left first and advances only on
 * success; a short buffer returns -ENOSPC. */
struct wr {
	uint8_t *p;
	size_t len, cap;
};

static inline struct wr wr_init(void *p, size_t cap)
{
	return (struct wr){ .p = p, .len = 0, .cap = cap };
}

static inline size_t wr_room(const struct wr *w)
{
	return w->cap - w->len;
}

static inline int wr_bytes(struct wr *w, const void *src, size_t n)
{
	if (wr_room(w) < n)
		return -ENOSPC;
	if (n)
		memcpy(w->p + w->len, src, n);
	w->len += n;
	return 0;
}

static inline int wr_zero(struct wr *w, size_t n)
{
	if (wr_room(w) < n)
		return -ENOSPC;
	if (n)
		memset(w->p + w->len, 0, n);
	w->len += n;
	return 0;
}

static inline int wr_u8(struct wr *w, uint8_t v)
{
	return wr_bytes(w, &v, 1);
}

static inline int wr_be16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	return wr_bytes(w, b, 2);
}

static inline int wr_be32(struct wr *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	return wr_bytes(w, b, 4);
}

static inline bool dhcp_bit(const uint8_t *map, uint8_t code)
{
	return map[code >> 3] & (1u << (code & 7));
}

static inline void dhcp_bit_set(uint8_t *map, uint8_t code)
{
	map[code >> 3] |= (uint8_t)(1u << (code & 7));
}

static inline void dhcp_bit_clear(uint8_t *map, uint8_t code)
{
	map[code >> 3] &= (uint8_t)~(1u << (code & 7));
}

/* Writes the codes 1-254 set in map (a 256-bit map, dhcp_bit's), in
 * ascending order, into codes; returns how many. A word at a time: the
 * per-packet loops over a message's options visit the few there are, not
 * all 254 codes. */
static inline unsigned dhcp_bits_list(const uint8_t *map, uint8_t codes[254])
{
	unsigned n = 0;

	for (unsigned w = 0; w < 4; w++) {
		uint64_t x = 0;
		for (unsigned b = 0; b < 8; b++)
			x |= (uint64_t)map[8 * w + b] << (8 * b);
		if (w == 0)
			x &= ~(uint64_t)1; /* code 0: pad */
		if (w == 3)
			x &= ~(1ull << 63); /* code 255: end */
		while (x) {
			codes[n++] = (uint8_t)(64 * w + (unsigned)__builtin_ctzll(x));
			x &= x - 1;
		}
	}
	return n;
}

/* Validates a sub-option list (code, len, data; 0 pad and 255 end take no
 * length), as in options 43 and 82. With want != 0, finds that sub-option
 * (*ret, *ret_len; -ENOENT when absent). Returns 0 or -EBADMSG. */
int dhcp_subopt_find(const uint8_t *data, size_t len, uint8_t want, const uint8_t **ret,
		     size_t *ret_len);
