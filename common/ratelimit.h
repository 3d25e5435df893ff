/* ratelimit — one token bucket, for whatever a flood of packets must not
 * be able to multiply: log lines about bad requests, messages kept. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* A token is worth RATELIMIT_UNIT credits: the refill of one nanosecond at
 * one token per second, so the bucket counts in integers. */
#define RATELIMIT_UNIT 1000000000ull

/* A bucket of at most burst tokens, refilled at rate tokens per second.
 * Zeroed ({ 0 }, calloc) it is full. Not thread-safe: its owner
 * locks it when several threads share it. */
struct ratelimit {
	uint64_t last_ns; /* the time of the last take; 0: never taken */
	uint64_t credit;  /* tokens x RATELIMIT_UNIT */
	uint64_t refused; /* takes refused since ratelimit_refused_take */
};

/* Takes one token at now_ns (a monotonic time in nanoseconds; a time
 * before the last one refills nothing) from rl, refilled since its last
 * take at rate per second and capped at burst. True when there was one;
 * false, counted in rl->refused, when there was none. */
bool ratelimit_allow(struct ratelimit *rl, uint64_t now_ns, unsigned rate, unsigned burst);

/* Returns the takes refused since the last call, and restarts the count. */
uint64_t ratelimit_refused_take(struct ratelimit *rl);

/* For a log line: ratelimit_allow, and when it allows and lines were
 * refused since the last one allowed, first logs (at info, under
 * subsystem) "N similar lines suppressed". True when the caller may log
 * its line. */
bool ratelimit_log(struct ratelimit *rl, uint64_t now_ns, unsigned rate, unsigned burst,
		   const char *subsystem);
