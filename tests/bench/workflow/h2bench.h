/* h2bench.h — what the workflow benchmark's load generator (agents.c)
 * and its floor server (floor.c) share beyond common/grpc.h: a
 * monotonic clock, one whole message out of a stream's DATA, a small
 * number out of a header. Static inline: two programs, no library. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common/grpc.h"

/* One gRPC message in a request or an answer, at most (the messages of
 * the worker protocol are a few hundred bytes). */
#define H2B_MSG_MAX (64u * 1024u)

static inline uint64_t h2b_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The one message in buf (n bytes: prefix and message, nothing after):
 * *msg and *len, or -EBADMSG (short, compressed, too long, or bytes
 * left over). */
static inline int h2b_unprefix(const uint8_t *buf, size_t n, const uint8_t **msg, size_t *len)
{
	bool compressed;
	size_t l;

	if (grpc_prefix_parse(buf, n, H2B_MSG_MAX, &compressed, &l) < 0 || compressed ||
	    l != n - GRPC_PREFIX_LEN)
		return -EBADMSG;
	*msg = buf + GRPC_PREFIX_LEN;
	*len = l;
	return 0;
}

/* A header value of digits only, as an int (at most 9 digits), or -1. */
static inline int h2b_small_int(const uint8_t *v, size_t n)
{
	int x = 0;

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	return x;
}
