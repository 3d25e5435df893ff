/* jsondec — JSON text made into jansson's tree, faster than json_loadb().
 *
 * jansson reads its input a byte at a time through a stream reader that
 * saves each byte of a token into a buffer and copies it out again: about
 * 35 MB/s, 120 µs for a fleet's 4 KiB Hardware, where serving an answer
 * made from it costs ten. This decoder walks the text with the byte cursor
 * and builds the same tree through jansson's own constructors, the keys
 * and plain strings taken straight from the input.
 *
 * Same contract as json_loadb(): for any input, jsondec_loadb() returns
 * the tree json_loadb() would (the same types, values, and key order, the
 * same choice between a duplicate key's values), or NULL where it would,
 * with jansson's own message in *error. It accepts only what it is sure
 * of, and hands everything else to json_loadb() whole: text it refuses
 * (so every error message is jansson's), \u0000, numbers of over 64
 * characters or an integer out of range, a value nested in more than
 * JSONDEC_DEPTH_MAX - 1 objects and arrays, and any flag but
 * JSON_REJECT_DUPLICATES and JSON_DECODE_ANY. tests/fuzz/fuzz_jsondec
 * holds it to that, input by input, against json_loadb(). */
#pragma once

#include <jansson.h>
#include <stddef.h>

#define JSONDEC_DEPTH_MAX 64

/* json_loadb(buffer, len, flags, error), made faster. */
json_t *jsondec_loadb(const char *buffer, size_t len, size_t flags, json_error_t *error);

/* The same, the tree's nodes cut from jsonmem's blocks (common/jsonmem.h):
 * for a tree its caller frees soon. */
json_t *jsondec_loadb_brief(const char *buffer, size_t len, size_t flags, json_error_t *error);

/* The fast path alone, for its tests and fuzz target: the tree, or NULL
 * where jsondec_loadb() would ask json_loadb(). */
json_t *jsondec_fast(const char *buffer, size_t len, size_t flags);
