/* sendfile — larger sendfile() calls for the public listener's file
 * answers (the OSIE files and iPXE binaries of daemon/public/files.c).
 *
 * libmicrohttpd 0.9.75 sends a response made from a file descriptor in
 * sendfile() calls of at most 128 KiB in its polling modes (2 MiB only
 * with a thread per connection), and has no option for it. Over a
 * network device, most of what a GiB costs is paid per call, not per
 * byte: the transmission, and on a veth pair the receiver's TCP work,
 * run in the context of the call, once per call. With 200 clients
 * downloading a 256 MiB file over a veth pair (make bench-osie, a
 * client that drops the bodies in the kernel), the daemon served 0.75 of
 * what nginx (2 MiB per call) served; nginx limited to 128 KiB per call
 * served half of its own figure; the same daemon whose calls asked for
 * 2 MiB served as much as nginx, and 8 MiB more.
 *
 * 2 MiB, nginx's own default, not 8: a listener thread also answers
 * scripts and metadata, and it sends each ready download's call in turn.
 * A 1 KB answer asked during those 200 downloads waited 14 ms (p50) with
 * 128 KiB calls, 131 ms with 2 MiB, 283 ms with 8 MiB, and 164 ms from
 * nginx. 2 MiB keeps that wait at nginx's or below, with nginx's
 * throughput or above.
 *
 * So the executable defines sendfile64() itself. A symbol of the
 * executable comes first in the dynamic linker's lookup, so
 * libmicrohttpd's calls reach this one (ironbelld exports it: the link
 * sees libmicrohttpd refer to it). It widens a call only when all of
 * these hold, and otherwise passes it on untouched:
 *   - the count is libmicrohttpd's chunk (HTTP_MHD_SENDFILE_CHUNK): any
 *     other count is a response's last piece, or another caller;
 *   - the file descriptor was given a span by http_sendfile_span() (the
 *     file answers, as they make the response), and it is still the same
 *     file as then (device, inode, size and modification time, what its
 *     ETag is made of, checked with fstat(): a descriptor number closed
 *     and reused for another file, or a file written since, is never
 *     widened);
 *   - the offset is inside the span, and the span inside the file.
 * The count is then at most HTTP_SENDFILE_CHUNK, and never reaches the
 * span's last byte: libmicrohttpd asks for the rest itself, with the
 * flag that pushes the last frame out (it corks the socket while more
 * is to come), and it learns from the return value how far the response
 * went, as it does from any short or full call. A non-blocking socket
 * takes what its send buffer holds, so a call never holds a thread
 * longer than the buffer takes to fill; the file's pages are read as
 * they would be by any sendfile() (OSIE files live in the page cache).
 *
 * Nothing of libmicrohttpd is changed: a libmicrohttpd that calls
 * sendfile() under another name, or with another chunk, gets no wider
 * calls, and serves as before. Counted in
 * ironbell_http_sendfile_widened_total.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/metrics.h"
#include "daemon/http/http.h"

/* Descriptors below this get a span (more: their calls are left as they
 * are). The table is 40 bytes a descriptor (2.5 MiB of address space);
 * pages never touched cost no memory. */
#define SPAN_FDS 65536

struct span {
	uint64_t end; /* the span's end offset + 1; 0: none (all atomic) */
	uint64_t dev, ino, size, mtime_ns; /* the file, as its ETag names it */
};

/* The file's identity: what a span is checked against. */
static void ident_of(const struct stat *st, uint64_t id[4])
{
	id[0] = (uint64_t)st->st_dev;
	id[1] = (uint64_t)st->st_ino;
	id[2] = (uint64_t)st->st_size;
	id[3] = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

static struct span spans[SPAN_FDS];

static struct metric *widened_metric(void)
{
	return metrics_counter_cached("ironbell_http_sendfile_widened_total",
				      "sendfile() calls of a file answer made larger than "
				      "libmicrohttpd's 128 KiB chunk (daemon/http/sendfile.c).",
				      NULL);
}

void http_sendfile_span(int fd, const struct stat *st, uint64_t end)
{
	(void)widened_metric(); /* listed from the first file answer on */
	if (fd < 0 || fd >= SPAN_FDS)
		return;
	struct span *s = &spans[fd];
	__atomic_store_n(&s->end, 0, __ATOMIC_RELEASE);
	if (end == 0 || !st)
		return;
	uint64_t id[4];
	ident_of(st, id);
	__atomic_store_n(&s->dev, id[0], __ATOMIC_RELAXED);
	__atomic_store_n(&s->ino, id[1], __ATOMIC_RELAXED);
	__atomic_store_n(&s->size, id[2], __ATOMIC_RELAXED);
	__atomic_store_n(&s->mtime_ns, id[3], __ATOMIC_RELAXED);
	__atomic_store_n(&s->end, end + 1, __ATOMIC_RELEASE);
}

size_t http_sendfile_count(int in_fd, uint64_t off, size_t count)
{
	struct stat st;

	if (count != HTTP_MHD_SENDFILE_CHUNK || in_fd < 0 || in_fd >= SPAN_FDS)
		return count;
	const struct span *s = &spans[in_fd];
	uint64_t end = __atomic_load_n(&s->end, __ATOMIC_ACQUIRE);
	if (end-- == 0 || off >= end || end - off <= (uint64_t)count + 1)
		return count;
	uint64_t id[4];
	if (fstat(in_fd, &st) < 0)
		return count;
	ident_of(&st, id);
	if (id[0] != __atomic_load_n(&s->dev, __ATOMIC_RELAXED) ||
	    id[1] != __atomic_load_n(&s->ino, __ATOMIC_RELAXED) ||
	    id[2] != __atomic_load_n(&s->size, __ATOMIC_RELAXED) ||
	    id[3] != __atomic_load_n(&s->mtime_ns, __ATOMIC_RELAXED))
		return count;
	if (end > id[2]) /* a span past the file's end: not as it was made */
		return count;
	uint64_t n = end - off - 1; /* the last byte is libmicrohttpd's */
	return n > HTTP_SENDFILE_CHUNK ? HTTP_SENDFILE_CHUNK : (size_t)n;
}

ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
	size_t n = offset && *offset >= 0 ? http_sendfile_count(in_fd, (uint64_t)*offset, count)
					   : count;
	if (n != count)
		metric_inc(widened_metric(), 1);
#ifdef SYS_sendfile64
	return syscall(SYS_sendfile64, out_fd, in_fd, offset, n);
#else
	return syscall(SYS_sendfile, out_fd, in_fd, offset, n);
#endif
}
