/* num — the one overflow-checked number parser for config, wire and HTTP
 * fields. No atoi, strtol without checks, or sscanf anywhere else. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Parses exactly len bytes of s as an unsigned decimal integer (no sign, no
 * spaces, no leading '+', at least one digit) that is at most max. Returns 0
 * and writes *ret, -EINVAL when s is not a number, or -ERANGE when it is
 * larger than max. *ret is written only on success. */
int num_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *ret);
/* The same with an optional leading '-', within [min, max]. */
int num_parse_i64(const char *s, size_t len, int64_t min, int64_t max, int64_t *ret);
/* Convenience for NUL-terminated strings. */
int num_parse_u64_str(const char *s, uint64_t max, uint64_t *ret);
/* Parses a duration: a number with an optional unit suffix ms, s, m, h
 * (plain number = seconds), into milliseconds not above max_ms. */
int num_parse_duration_ms(const char *s, size_t len, uint64_t max_ms, uint64_t *ret);
/* The value of a hexadecimal digit (either case), or -1. */
static inline int num_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses an octal file mode such as "0660" (at most 07777). */
int num_parse_mode(const char *s, size_t len, unsigned *ret);
