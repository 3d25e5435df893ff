/* buf — a growable byte buffer with a hard cap (curl's dynbuf idea): every
 * buffer that grows from peer input says how large it may become. The data
 * is always NUL-terminated so it can be used as a C string. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;   /* NULL until the first append; owned */
	size_t len;   /* bytes used, not counting the terminating NUL */
	size_t alloc; /* bytes allocated */
	size_t max;   /* hard cap on len */
};

#define BUF_INIT(maxlen) ((struct buf){ .max = (maxlen) })

/* Initializes b empty with the given cap on its length. */
void buf_init(struct buf *b, size_t max);
/* Appends n bytes. Returns 0, -E2BIG when len would pass max (b unchanged),
 * or -ENOMEM. */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_putc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* A sink for jansson's json_dump_callback(): appends the n bytes at p to
 * the struct buf that data points to. Returns 0, or -1 (the dump stops)
 * when the buffer is full or memory runs out. */
int buf_dump_cb(const char *p, size_t n, void *data);
/* Appends s as a JSON string literal (with quotes and escapes). */
int buf_put_json_string(struct buf *b, const char *s, size_t n);
/* Empties b, keeping its allocation. */
void buf_reset(struct buf *b);
/* Returns the data (caller frees; never NULL on success: "" for empty) and
 * leaves b empty. Returns NULL on allocation failure. */
char *buf_steal(struct buf *b);
/* Frees the data; b may be reused after buf_init. Accepts NULL. */
void buf_free(struct buf *b);
