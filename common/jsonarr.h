/* jsonarr — the elements of a large JSON array, parsed one at a time.
 *
 * A request body of many objects parsed whole with json_loadb() costs
 * about ten times its size in jansson trees, all alive at once. This walks
 * the outer array with a byte cursor and hands each element, parsed on its
 * own, to a callback: only one element's tree exists at a time, and the
 * element's own bytes are given too, for a caller that keeps text rather
 * than trees. It accepts no more than json_loadb() does; for anything it
 * does not take (not an array, a syntax error, an element that is not an
 * object or array) the caller parses the whole text, which gives
 * jansson's own message. */
#pragma once

#include <jansson.h>
#include <stddef.h>

/* Called with element index of the array: v (borrowed, freed after the
 * call returns; json_incref() it to keep it) and its text, len bytes
 * inside the data given to jsonarr_each(). Returns 0 to go on, or a
 * negative errno that stops the walk. */
typedef int (*jsonarr_fn)(json_t *v, const char *text, size_t len, size_t index, void *userdata);

/* Calls fn for each element of the JSON array that is the whole of data
 * (len bytes; JSON whitespace around it allowed), in order. flags are
 * json_loadb()'s for each element (e.g. JSON_REJECT_DUPLICATES). Returns
 * 0; -ENOMSG when data does not start with '[' (after whitespace);
 * -EBADMSG when it is not one well-formed array of objects and arrays
 * (elements before the fault may have been given to fn); or fn's negative
 * return. An element may nest as deep as json_loadb() allows a whole
 * text, one level more than in a whole array. */
int jsonarr_each(const char *data, size_t len, size_t flags, jsonarr_fn fn, void *userdata);
