/* ratelimit — a token bucket in integers.
 *
 * DESIGN: the DHCP, TFTP and syslog threads and the public HTTP handlers
 * each answer packets that anyone can send, and each has something a
 * flood must not multiply (a log line per refusal, a stored message per
 * datagram). They share this one bucket: rate tokens per second, burst at
 * most, the time passed in by the caller (a monotonic clock in the
 * daemon, any number in a unit test), and a count of what it refused, so
 * that a log can say how many lines it left out. Credits are integers:
 * one token is RATELIMIT_UNIT credits, and a nanosecond at rate r adds r
 * credits; the refill is capped before it is multiplied, so no product
 * overflows for any rate or burst of 32 bits. The bucket holds no lock:
 * a thread owns it, or its owner locks around it.
 */
#include "config.h"

#include "common/log.h"
#include "common/ratelimit.h"

bool ratelimit_allow(struct ratelimit *rl, uint64_t now_ns, unsigned rate, unsigned burst)
{
	uint64_t full = (uint64_t)burst * RATELIMIT_UNIT;

	if (rl->last_ns == 0) {
		rl->credit = full;
	} else if (now_ns > rl->last_ns && rate > 0) {
		uint64_t dt = now_ns - rl->last_ns;
		/* dt * rate reaches full from any credit once dt >= full / rate */
		if (dt >= full / rate)
			rl->credit = full;
		else
			rl->credit += dt * rate;
		if (rl->credit > full)
			rl->credit = full;
	}
	if (now_ns > rl->last_ns || rl->last_ns == 0)
		rl->last_ns = now_ns ? now_ns : 1;
	if (rl->credit < RATELIMIT_UNIT) {
		rl->refused++;
		return false;
	}
	rl->credit -= RATELIMIT_UNIT;
	return true;
}

uint64_t ratelimit_refused_take(struct ratelimit *rl)
{
	uint64_t n = rl->refused;
	rl->refused = 0;
	return n;
}

bool ratelimit_log(struct ratelimit *rl, uint64_t now_ns, unsigned rate, unsigned burst,
		   const char *subsystem)
{
	if (!ratelimit_allow(rl, now_ns, rate, burst))
		return false;
	uint64_t n = ratelimit_refused_take(rl);
	if (n)
		log_info(subsystem, "%llu similar lines suppressed", (unsigned long long)n);
	return true;
}
