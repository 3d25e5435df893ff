/* dhcp_builder — DHCP packets built byte by byte for the DHCP unit tests,
 * so that a test states every byte it sends rather than trusting the
 * writer it is testing. Each test file builds its own header on these. */
#pragma once

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "dhcp/dhcp-codec.h"

struct tp {
	uint8_t b[DHCP_MAX_MESSAGE + 16]; /* room past the limit, for oversize cases */
	size_t len;
};

static void tp_byte(struct tp *t, uint8_t v)
{
	ck_assert_uint_lt(t->len, sizeof(t->b));
	t->b[t->len++] = v;
}

static void tp_bytes(struct tp *t, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tp_byte(t, ((const uint8_t *)p)[i]);
}

static void tp_be32(struct tp *t, uint32_t v)
{
	tp_byte(t, (uint8_t)(v >> 24));
	tp_byte(t, (uint8_t)(v >> 16));
	tp_byte(t, (uint8_t)(v >> 8));
	tp_byte(t, (uint8_t)v);
}

/* An option: code, length n, then n bytes given as ints. */
static void tp_opt(struct tp *t, uint8_t code, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	tp_byte(t, code);
	tp_byte(t, (uint8_t)n);
	for (int i = 0; i < n; i++)
		tp_byte(t, (uint8_t)va_arg(ap, int));
	va_end(ap);
}

/* An option holding the string s (at most 255 bytes). */
static void tp_opt_str(struct tp *t, uint8_t code, const char *s)
{
	tp_byte(t, code);
	tp_byte(t, (uint8_t)strlen(s));
	tp_bytes(t, s, strlen(s));
}
