/* netascii — a file sent in netascii mode, converted block by block as
 * it goes out, so that a transfer holds no copy of its file.
 *
 * DESIGN: the conversion (tftp_netascii: LF becomes CR LF, CR becomes
 * CR NUL) turns each byte of the file into one or two bytes on the wire,
 * so where block k starts in the file depends on every byte before it,
 * and the two bytes of a pair may fall on either side of a block's end.
 * A position is the file offset reached plus, when a pair was cut by the
 * end of a block, its second byte still owed. A transfer keeps two: where
 * the next block to send starts (sending a window goes on from it, block
 * after block), and where the first block not yet acknowledged starts
 * (a retransmission, or an ACK inside the window, starts again from
 * there). Moving from the second to a later block converts the blocks in
 * between again without keeping them: at most a window's worth of
 * reading, from the page cache, instead of a buffer the size of the file.
 * The bytes sent are those of the whole-file conversion, block for block
 * (the unit tests compare them).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "tftp/tftp-internal.h"

size_t tftp_netascii_step(struct tftp_netascii_pos *pos, const uint8_t *in, size_t n,
			  uint8_t *out, size_t cap)
{
	size_t o = 0, i = 0;

	if (pos->half && o < cap) {
		if (out)
			out[o] = pos->owed;
		o++;
		pos->half = false;
	}
	for (; i < n && o < cap; i++) {
		uint8_t c = in[i];
		if (c == '\n' || c == '\r') {
			if (out)
				out[o] = '\r';
			o++;
			pos->owed = c == '\n' ? '\n' : '\0';
			if (o == cap) {
				pos->half = true; /* the pair is cut by the end of out */
				i++;
				break;
			}
			if (out)
				out[o] = pos->owed;
			o++;
		} else {
			if (out)
				out[o] = c;
			o++;
		}
	}
	pos->in += i;
	return o;
}

int tftp_netascii_size(int fd, uint64_t n, uint8_t *buf, size_t cap, uint64_t *ret)
{
	uint64_t off = 0, total = 0;

	while (off < n) {
		size_t want = n - off < cap ? (size_t)(n - off) : cap;
		ssize_t got = pread(fd, buf, want, (off_t)off);
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EIO; /* shorter than its stat said */
		total += tftp_netascii(buf, (size_t)got, NULL);
		off += (uint64_t)got;
	}
	*ret = total;
	return 0;
}

/* Converts the next len bytes from pos into out (NULL: only moves pos on),
 * reading the file through buf (cap bytes). 0, -EIO when the file ends
 * first, or a negative errno. */
static int produce(int fd, struct tftp_netascii_pos *pos, uint8_t *out, size_t len, uint8_t *buf,
		   size_t cap)
{
	size_t done = 0;

	/* Each round either writes at least one byte or fails. */
	while (done < len) {
		ssize_t got = 0;
		size_t want = len - done < cap ? len - done : cap; /* a byte gives one or two */
		if (!pos->half) {
			got = pread(fd, buf, want, (off_t)pos->in);
			if (got < 0)
				return -errno;
			if (got == 0)
				return -EIO;
		}
		done += tftp_netascii_step(pos, buf, (size_t)got, out ? out + done : NULL,
					   len - done);
	}
	return 0;
}

void tftp_netascii_file_init(struct tftp_netascii_file *f, int fd, unsigned blksize)
{
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->blksize = blksize;
	f->base_k = f->cur_k = 1;
}

int tftp_netascii_block(struct tftp_netascii_file *f, uint64_t k, uint64_t keep, uint8_t *out,
			size_t len, uint8_t *buf, size_t cap)
{
	int e;

	if (k < 1 || keep > k || !f->blksize || !cap)
		return -EINVAL;
	if (f->cur_k > k) {
		/* Back to the first block not acknowledged, or to the start
		 * if the caller's keep moved backwards (it must not). */
		if (f->base_k <= k) {
			f->cur = f->base;
			f->cur_k = f->base_k;
		} else {
			memset(&f->cur, 0, sizeof(f->cur));
			f->cur_k = 1;
		}
	}
	while (f->cur_k < k) {
		if (f->cur_k == keep) {
			f->base = f->cur;
			f->base_k = f->cur_k;
		}
		if ((e = produce(f->fd, &f->cur, NULL, f->blksize, buf, cap)) < 0)
			return e;
		f->cur_k++;
	}
	if (k == keep) {
		f->base = f->cur;
		f->base_k = k;
	}
	if ((e = produce(f->fd, &f->cur, out, len, buf, cap)) < 0)
		return e;
	f->cur_k++;
	return 0;
}
