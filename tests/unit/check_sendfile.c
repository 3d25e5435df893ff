/* check_sendfile — the file answers' wider sendfile() calls
 * (daemon/http/sendfile.c): which calls are widened and how far, that a
 * descriptor reused for another file is not, and that a widened call
 * moves the file's own bytes and advances the offset as far as it says.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/http/http.h"
#include "tests/unit/unit.h"

#define CHUNK HTTP_MHD_SENDFILE_CHUNK
#define WIDE HTTP_SENDFILE_CHUNK

/* Gives fd's span up to end, with fd's stat as the file answer does. */
static void span(int fd, uint64_t end)
{
	struct stat st;
	if (fd >= 0)
		ck_assert_int_eq(fstat(fd, &st), 0);
	http_sendfile_span(fd, fd >= 0 ? &st : NULL, end);
}

/* A new file of size bytes under TMPDIR, unlinked: its byte i is
 * (i * 7 + i / 4096) & 0xff. An open descriptor. */
static int file_of(size_t size)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/ib-sendfile-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	uint8_t *b = malloc(size);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < size; i++)
		b[i] = (uint8_t)((i * 7 + i / 4096) & 0xff);
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, b + off, size - off);
		ck_assert_int_gt(n, 0);
		off += (size_t)n;
	}
	free(b);
	return fd;
}

START_TEST(count_rules)
{
	const size_t size = 10u << 20;
	int fd = file_of(size);

	ck_assert_uint_eq(http_sendfile_count(fd, 0, CHUNK), CHUNK); /* no span yet */
	span(fd, size);
	ck_assert_uint_eq(http_sendfile_count(fd, 0, CHUNK), WIDE);
	/* Only libmicrohttpd's chunk: a last piece or another caller is not. */
	ck_assert_uint_eq(http_sendfile_count(fd, 0, CHUNK - 1), CHUNK - 1);
	ck_assert_uint_eq(http_sendfile_count(fd, 0, 4096), 4096);
	/* Never the span's last byte: libmicrohttpd sends it, and pushes. */
	ck_assert_uint_eq(http_sendfile_count(fd, size - 3 * CHUNK, CHUNK), 3 * CHUNK - 1);
	ck_assert_uint_eq(http_sendfile_count(fd, size - CHUNK - 2, CHUNK), CHUNK + 1);
	ck_assert_uint_eq(http_sendfile_count(fd, size - CHUNK - 1, CHUNK), CHUNK);
	ck_assert_uint_eq(http_sendfile_count(fd, size, CHUNK), CHUNK);
	ck_assert_uint_eq(http_sendfile_count(fd, size + WIDE, CHUNK), CHUNK);
	/* A Range: its own end, not the file's. */
	span(fd, 1000 + CHUNK * 2);
	ck_assert_uint_eq(http_sendfile_count(fd, 1000, CHUNK), CHUNK * 2 - 1);
	/* Cleared. */
	span(fd, 0);
	ck_assert_uint_eq(http_sendfile_count(fd, 0, CHUNK), CHUNK);
	/* A span past the file's end: not as the answer made it. */
	span(fd, size + 1);
	ck_assert_uint_eq(http_sendfile_count(fd, 0, CHUNK), CHUNK);
	/* The file written since the span was given: not widened. */
	span(fd, size);
	ck_assert_int_eq(ftruncate(fd, (off_t)size - 1), 0);
	ck_assert_uint_eq(http_sendfile_count(fd, 0, CHUNK), CHUNK);
	/* The number closed and given to another file (which may get the
	 * same inode number on its file system): not widened. */
	span(fd, size - 1);
	close(fd);
	int fd2 = file_of(size + 4096);
	ck_assert_int_eq(fd2, fd);
	ck_assert_uint_eq(http_sendfile_count(fd2, 0, CHUNK), CHUNK);
	close(fd2);
	/* Descriptors the table does not hold. */
	span(-1, size);
	ck_assert_uint_eq(http_sendfile_count(-1, 0, CHUNK), CHUNK);
	ck_assert_uint_eq(http_sendfile_count(1 << 30, 0, CHUNK), CHUNK);
}
END_TEST

struct reader {
	int fd;
	uint8_t *buf;
	size_t cap, len;
};

static void *read_all(void *arg)
{
	struct reader *r = arg;
	ssize_t n;
	while (r->len < r->cap && (n = read(r->fd, r->buf + r->len, r->cap - r->len)) > 0)
		r->len += (size_t)n;
	return NULL;
}

/* A widened call through the daemon's sendfile64(), on a blocking socket
 * a thread reads: it moves the widened count, the file's bytes from the
 * offset, and the offset follows. */
START_TEST(widened_call_moves_the_bytes)
{
	const size_t size = 12u << 20, start = 4096 * 3 + 5;
	int fd = file_of(size), sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct reader r = { .fd = sv[1], .cap = WIDE, .buf = malloc(WIDE) };
	ck_assert_ptr_nonnull(r.buf);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, read_all, &r), 0);

	span(fd, size);
	off64_t off = (off64_t)start;
	ssize_t n = sendfile64(sv[0], fd, &off, CHUNK);
	ck_assert_int_eq(n, (ssize_t)WIDE);
	ck_assert_int_eq(off, (off64_t)(start + WIDE));
	pthread_join(t, NULL);
	ck_assert_uint_eq(r.len, WIDE);
	for (size_t i = 0; i < WIDE; i++) {
		size_t at = start + i;
		if (r.buf[i] != (uint8_t)((at * 7 + at / 4096) & 0xff))
			ck_abort_msg("byte %zu of the call is not the file's byte %zu", i, at);
	}
	/* Not a span: the count asked. */
	span(fd, 0);
	r.len = 0;
	r.cap = CHUNK;
	ck_assert_int_eq(pthread_create(&t, NULL, read_all, &r), 0);
	n = sendfile64(sv[0], fd, &off, CHUNK);
	ck_assert_int_eq(n, (ssize_t)CHUNK);
	pthread_join(t, NULL);
	ck_assert_uint_eq(r.len, CHUNK);
	free(r.buf);
	close(sv[0]);
	close(sv[1]);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sendfile");
	TCase *tc = tcase_create("sendfile");
	tcase_set_timeout(tc, 30);
	UNIT_TEST(tc, count_rules);
	UNIT_TEST(tc, widened_call_moves_the_bytes);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
