/* utf8 — untrusted bytes made into valid UTF-8, for text that leaves as
 * JSON (jansson refuses a string that is not UTF-8) or goes to a terminal.
 *
 * Well-formed is as Unicode defines it (The Unicode Standard §3.9, table
 * 3-7; RFC 3629 §4): no overlong form, no surrogate (U+D800..U+DFFF),
 * nothing past U+10FFFF. Each maximal subpart of an ill-formed sequence
 * becomes one U+FFFD (the practice of §3.9 "U+FFFD Substitution of Maximal
 * Subparts", which browsers and Python follow), so a stray byte costs one
 * replacement and never swallows the valid character after it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cursor.h"

#define UTF8_REPLACEMENT 0xfffdu /* U+FFFD REPLACEMENT CHARACTER */
#define UTF8_REPLACEMENT_LEN 3   /* its length in UTF-8 */
#define UTF8_CUT_MARK "..."      /* what ends a text cut short */
#define UTF8_CHAR_MAX 4          /* bytes of the longest character */

/* Flags of utf8_sanitize(). */
#define UTF8_CONTROLS_QMARK 1u /* C0 controls but tab, and DEL, become '?' */

/* Reads the next character of r. 0 with its code point in *ret_cp and r
 * past it; -EILSEQ when r starts with an ill-formed sequence: r is past
 * its maximal subpart (one byte at least) and *ret_cp is U+FFFD; -EBADMSG
 * when r is empty (r and *ret_cp untouched). */
int utf8_next(struct rd *r, uint32_t *ret_cp);

/* Writes code point cp (at most U+10FFFF, no surrogate) to c as UTF-8;
 * returns its length (1 to 4). */
size_t utf8_write(uint32_t cp, char c[UTF8_CHAR_MAX]);

/* Whether p[0..n) is all well-formed UTF-8 (a NUL byte is U+0000: well
 * formed). */
bool utf8_valid(const void *p, size_t n);

/* Writes in[0..n) to out as valid UTF-8, each ill-formed subpart as
 * U+FFFD, and with flags (UTF8_CONTROLS_QMARK) applied. At most max bytes
 * are written, then a NUL: out holds max + 1 bytes. When the whole result
 * is longer than max it is cut between two characters and ends with
 * UTF8_CUT_MARK, still within max (when max is under the mark's length,
 * it is max dots), and *ret_cut (may be NULL) is set. Returns the length
 * written. out may be NULL with max SIZE_MAX: only the length is counted
 * (utf8_sanitized_len). */
size_t utf8_sanitize(const void *in, size_t n, char *out, size_t max, unsigned flags,
		     bool *ret_cut);

/* The length utf8_sanitize() gives in[0..n) when nothing is cut. */
size_t utf8_sanitized_len(const void *in, size_t n, unsigned flags);
