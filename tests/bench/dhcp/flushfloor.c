/* flushfloor — the lowest latency any server can give a reply that waits
 * for its record to be on disk, on this disk, at a given rate.
 *
 * DESIGN: requests arrive at a fixed rate (-r per second, for -s
 * seconds) from a clock thread; a flusher thread, as in group commit,
 * takes every request that has arrived, writes their records (1 KiB
 * each) in one pwrite after the last, then fdatasyncs, and marks them
 * done; a request that arrives during a flush waits for the next one.
 * Each request's latency runs from its arrival to the end of its flush,
 * so a slow flush counts for every request that waited behind it (fio
 * times each fdatasync alone, from its own start, and cannot see that).
 * This is the path of a DHCP ACK in ironbelld with no DHCP and no
 * SQLite in it: what ironbelld's ACK latency has above this is its own.
 *
 * Prints one line: "p50 p99 max" in milliseconds. Asserts nothing about
 * time (make bench runs it, never make check).
 *
 * Usage: flushfloor [-r rate] [-s seconds] FILE   (FILE is made, then removed)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REC 1024u             /* bytes written per request */
#define FILE_RECS 4096u       /* the file's size in records: reused as a ring */
#define MAX_REQUESTS 1000000u /* rate * seconds, at most */
#define MAX_BATCH 256u        /* records written in one flush, at most */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static uint64_t *arrived, *done; /* monotonic ns per request */
static size_t narrived, total;   /* guarded by lock */
static int fd;
static int failed; /* errno of a failed write or flush (atomic) */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *flusher(void *arg)
{
	static unsigned char buf[MAX_BATCH * REC];
	size_t next = 0; /* first request not yet flushed */
	(void)arg;

	memset(buf, 0x5a, sizeof(buf));
	while (next < total) {
		pthread_mutex_lock(&lock);
		while (narrived == next)
			pthread_cond_wait(&cond, &lock);
		size_t end = narrived;
		pthread_mutex_unlock(&lock);
		if (end - next > MAX_BATCH)
			end = next + MAX_BATCH;
		size_t n = end - next;
		off_t off = (off_t)(next % (FILE_RECS - MAX_BATCH)) * REC;
		if (pwrite(fd, buf, n * REC, off) != (ssize_t)(n * REC) || fdatasync(fd) != 0) {
			__atomic_store_n(&failed, errno ? errno : EIO, __ATOMIC_RELAXED);
			return NULL;
		}
		uint64_t t = now_ns();
		for (size_t i = next; i < end; i++)
			done[i] = t;
		next = end;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned long rate = 1000, secs = 8;
	int c;

	while ((c = getopt(argc, argv, "r:s:")) != -1) {
		switch (c) {
		case 'r': rate = strtoul(optarg, NULL, 10); break;
		case 's': secs = strtoul(optarg, NULL, 10); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || rate == 0 || secs == 0 || rate > 1000000 ||
	    rate * secs > MAX_REQUESTS)
		goto usage;
	const char *path = argv[optind];
	total = rate * secs;
	arrived = calloc(total, sizeof(*arrived));
	done = calloc(total, sizeof(*done));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!arrived || !done || fd < 0) {
		fprintf(stderr, "flushfloor: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* The whole ring written and flushed first: the flushes measured
	 * rewrite blocks that exist, as a WAL that has reached its size. */
	static unsigned char zero[FILE_RECS * REC];
	if (pwrite(fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero) || fsync(fd) != 0) {
		fprintf(stderr, "flushfloor: %s: %s\n", path, strerror(errno));
		unlink(path);
		return 1;
	}

	pthread_t th;
	if ((c = pthread_create(&th, NULL, flusher, NULL)) != 0) {
		fprintf(stderr, "flushfloor: %s\n", strerror(c));
		unlink(path);
		return 1;
	}
	uint64_t t0 = now_ns() + 10000000u, step = 1000000000u / rate;
	for (size_t i = 0; i < total && !__atomic_load_n(&failed, __ATOMIC_RELAXED); i++) {
		uint64_t due = t0 + i * step, t;
		while ((t = now_ns()) < due) {
			uint64_t left = due - t;
			struct timespec ts = { 0, (long)(left > 50000 ? left - 50000 : 0) };
			if (ts.tv_nsec)
				nanosleep(&ts, NULL);
		}
		pthread_mutex_lock(&lock);
		arrived[i] = now_ns();
		narrived = i + 1;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
	}
	pthread_join(th, NULL);
	close(fd);
	unlink(path);
	if (failed) {
		fprintf(stderr, "flushfloor: %s: %s\n", path, strerror(failed));
		return 1;
	}
	for (size_t i = 0; i < total; i++)
		done[i] -= arrived[i];
	qsort(done, total, sizeof(*done), cmp_u64);
	printf("%.3f %.3f %.3f\n", (double)done[total / 2] / 1e6,
	       (double)done[total * 99 / 100] / 1e6, (double)done[total - 1] / 1e6);
	free(arrived);
	free(done);
	return 0;

usage:
	fprintf(stderr, "usage: flushfloor [-r rate] [-s seconds] FILE (rate * seconds <= %u)\n",
		MAX_REQUESTS);
	return 2;
}
