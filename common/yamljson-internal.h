/* yamljson-internal — what yamljson.c (the loader) and yamljson-dump.c
 * (the dumper) share: the YAML 1.2 core schema's typing of
 * a plain scalar, which the dumper consults to know when a string must be
 * quoted. Included only by those two files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What a plain (untagged, unquoted) scalar reads as. */
enum yj_type {
	YJ_NULL,
	YJ_BOOL,
	YJ_INT,
	YJ_FLOAT,
	YJ_SPECIAL_FLOAT,
	YJ_STR
};

/* Whether the n bytes at s (not NUL-terminated) equal one of words, a
 * NULL-terminated list of NUL-terminated strings. Pure. */
bool yj_any(const char *s, size_t n, const char *const *words);

/* The type the loader gives the plain scalar of n bytes at s (YAML 1.2.2
 * §10.3.2): YJ_STR when it is none of null, bool, int or float. Pure. */
enum yj_type yj_plain_type(const char *s, size_t n);
