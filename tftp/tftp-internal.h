/* tftp-internal — what the files of tftp/ share. Included only inside
 * tftp/ and by its unit tests. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "tftp/tftp-codec.h"

/* Cleans a requested name into out (outlen bytes): leading '/' and a
 * leading "<mac>/" component dropped; refuses (-EINVAL) an empty name, an
 * empty, "." or ".." component, or a backslash. */
int tftp_path_clean(const char *name, char *out, size_t outlen);
/* Opens the cleaned name beneath root_fd (its alias, common/bootfile.h,
 * when it is missing): 0 with the fd, its stat and the name opened (clean
 * or a static alias); -ENOENT, -EPERM (a symlink, or an escape), -EISDIR
 * (not a regular file), or another negative errno. */
int tftp_open(int root_fd, const char *clean, int *ret_fd, struct stat *st,
	      const char **ret_name);

/* ---- netascii block by block (tftp/netascii.c) ---- */

/* Where a netascii conversion stands: the file's bytes converted, and
 * when the last pair (CR LF or CR NUL) was cut by the end of the output,
 * its second byte, still owed. */
struct tftp_netascii_pos {
	uint64_t in;   /* bytes of the file consumed */
	bool half;     /* owed is still to be written */
	uint8_t owed;  /* '\n' or '\0' */
};

/* Converts as tftp_netascii does the n bytes of in, which follow the
 * file's first pos->in bytes, into at most cap bytes of out (NULL: counts
 * only), the byte owed first. Stops when out is full: a pair cut there is
 * owed to the next call. Returns the bytes written; pos->in moves on by
 * the bytes of in consumed. */
size_t tftp_netascii_step(struct tftp_netascii_pos *pos, const uint8_t *in, size_t n,
			  uint8_t *out, size_t cap);

/* The converted size of the first n bytes of the file fd, read through
 * buf (cap bytes). 0 with *ret set, -EIO when the file is shorter, or a
 * negative errno. */
int tftp_netascii_size(int fd, uint64_t n, uint8_t *buf, size_t cap, uint64_t *ret);

/* A file sent in netascii: where block cur_k starts, and where block
 * base_k (the first not acknowledged) starts. */
struct tftp_netascii_file {
	int fd;           /* borrowed: the caller closes it */
	unsigned blksize;
	struct tftp_netascii_pos cur, base;
	uint64_t cur_k, base_k;
};

/* Starts f at block 1 of fd, in blocks of blksize bytes. */
void tftp_netascii_file_init(struct tftp_netascii_file *f, int fd, unsigned blksize);
/* Writes the len bytes of converted block k (1-based; len is blksize but
 * for the last block) to out, reading the file through buf (cap bytes).
 * keep is the first block the caller may ask again (the first one not
 * acknowledged), never more than k and never less than in an earlier
 * call; blocks from keep on are then found without converting from the
 * file's start. 0, -EIO when the file ends first, -EINVAL, or a negative
 * errno from pread. */
int tftp_netascii_block(struct tftp_netascii_file *f, uint64_t k, uint64_t keep, uint8_t *out,
			size_t len, uint8_t *buf, size_t cap);
