/* common — small helpers shared by every module: logging, bounded buffers,
 * overflow-checked number parsing, a byte cursor for wire formats, metrics,
 * and YAML <-> JSON conversion. Each has its own header; this one pulls them
 * all in. */
#pragma once

#include "common/buf.h"
#include "common/cursor.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/num.h"
#include "common/yamljson.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define STRLEN(s) (sizeof(s) - 1)

/* Returns the monotonic clock in nanoseconds. */
uint64_t now_mono_ns(void);
/* Returns the wall clock in nanoseconds since the epoch. */
uint64_t now_real_ns(void);
/* Writes an RFC 3339 UTC timestamp with second precision ("2026-11-22T07:31:44Z")
 * for the wall-clock time t (seconds) into out (at least 21 bytes). */
void time_rfc3339(int64_t t, char out[static 21]);
