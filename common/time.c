/* time — clocks and timestamps. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "common/common.h"

uint64_t now_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t now_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void time_rfc3339(int64_t t, char out[static 21])
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || tm.tm_year < -1900 || tm.tm_year > 9999 - 1900)
		tm = (struct tm){ .tm_year = 70, .tm_mday = 1 };
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
