/* delayline — a wire with a fixed delay, for tests and benchmarks on a
 * kernel without netem.
 *
 *   delayline [-d MS] [-q FRAMES] TAP_A TAP_B
 *
 * It creates two tap devices (IFF_TAP | IFF_NO_PI) named TAP_A and TAP_B,
 * prints "ready" on standard output, and from then on copies every frame
 * that the kernel sends on one to the other, MS milliseconds (default 0)
 * after it arrived, in both directions and in order. The caller moves each
 * tap into the namespace of one end (`ip link set TAP_A netns NS1`): a
 * tap's file descriptor keeps working after its device moves, so the two
 * namespaces see an Ethernet link whose round trip is twice MS. Each
 * direction holds at most FRAMES frames in flight (default 8192); a frame
 * that finds its direction full is dropped and counted, as a real queue
 * would. It runs until SIGTERM or SIGINT, then prints its counters on
 * standard error. Every wait is bounded by the next frame's due time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAX 2048 /* an Ethernet frame of a 1500-byte MTU, and room */
#define QUEUE_DEFAULT 8192
#define QUEUE_MAX 1000000

struct slot {
	uint64_t due_ns;
	uint16_t len;
	uint8_t data[FRAME_MAX];
};

struct dir {
	int in, out;
	struct slot *q;
	size_t cap, head, n; /* a ring */
	uint64_t passed, dropped;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int tap_open(const char *name)
{
	struct ifreq ifr = { 0 };
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/* Reads every frame waiting on d->in into the queue. */
static void take(struct dir *d, uint64_t delay_ns)
{
	for (int i = 0; i < 256; i++) {
		uint8_t scratch[FRAME_MAX];
		struct slot *s = d->n < d->cap ? &d->q[(d->head + d->n) % d->cap] : NULL;
		ssize_t got = read(d->in, s ? s->data : scratch, FRAME_MAX);
		if (got <= 0)
			return;
		if (!s) {
			d->dropped++;
			continue;
		}
		s->len = (uint16_t)got;
		s->due_ns = now_ns() + delay_ns;
		d->n++;
	}
}

/* Writes every frame that is due; returns the next due time, or 0. */
static uint64_t give(struct dir *d)
{
	uint64_t now = now_ns();
	while (d->n) {
		struct slot *s = &d->q[d->head];
		if (s->due_ns > now)
			return s->due_ns;
		if (write(d->out, s->data, s->len) < 0 && errno != EAGAIN && errno != EIO)
			d->dropped++;
		else
			d->passed++;
		d->head = (d->head + 1) % d->cap;
		d->n--;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t delay_ms = 0, cap = QUEUE_DEFAULT;
	int opt;
	while ((opt = getopt(argc, argv, "d:q:")) != -1) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(optarg, &end, 10);
		if (errno || *end || end == optarg) {
			fprintf(stderr, "delayline: -%c needs a number\n", opt);
			return 64;
		}
		if (opt == 'd')
			delay_ms = v;
		else if (opt == 'q')
			cap = v;
		else
			return 64;
	}
	if (argc - optind != 2 || delay_ms > 60000 || cap < 1 || cap > QUEUE_MAX) {
		fprintf(stderr, "usage: delayline [-d MS (0..60000)] [-q FRAMES] TAP_A TAP_B\n");
		return 64;
	}
	int a = tap_open(argv[optind]), b = tap_open(argv[optind + 1]);
	if (a < 0 || b < 0) {
		fprintf(stderr, "delayline: cannot create the taps: %s\n",
			strerror(a < 0 ? -a : -b));
		return 1;
	}
	struct dir ab = { .in = a, .out = b, .cap = cap }, ba = { .in = b, .out = a, .cap = cap };
	ab.q = calloc(cap, sizeof(struct slot));
	ba.q = calloc(cap, sizeof(struct slot));
	if (!ab.q || !ba.q) {
		fprintf(stderr, "delayline: out of memory\n");
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);

	uint64_t delay_ns = delay_ms * 1000000u;
	while (!stop) {
		uint64_t t1 = give(&ab), t2 = give(&ba), due = 0;
		if (t1 && (!t2 || t1 < t2))
			due = t1;
		else
			due = t2;
		struct pollfd p[2] = { { .fd = a, .events = POLLIN }, { .fd = b, .events = POLLIN } };
		struct timespec ts = { .tv_sec = 1 }, *tsp = &ts; /* at most 1 s: see stop */
		if (due) {
			uint64_t now = now_ns(), w = due > now ? due - now : 0;
			ts.tv_sec = (time_t)(w / 1000000000u);
			ts.tv_nsec = (long)(w % 1000000000u);
		}
		if (ppoll(p, 2, tsp, NULL) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			take(&ab, delay_ns);
		if (p[1].revents & POLLIN)
			take(&ba, delay_ns);
	}
	fprintf(stderr, "delayline: %s->%s %llu passed %llu dropped; %s->%s %llu passed %llu dropped\n",
		argv[optind], argv[optind + 1], (unsigned long long)ab.passed,
		(unsigned long long)ab.dropped, argv[optind + 1], argv[optind],
		(unsigned long long)ba.passed, (unsigned long long)ba.dropped);
	return 0;
}
