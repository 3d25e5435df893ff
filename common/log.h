/* log — one logging call for every module. Under systemd (when stderr is
 * the journal stream, $JOURNAL_STREAM) each line goes to the journal with
 * structured fields (SUBSYSTEM=, MAC=, HARDWARE=, ...); otherwise it is one
 * logfmt line on stderr:
 *
 *   ts=2026-11-22T07:31:44.123Z level=info subsystem=store msg="..." mac=...
 *
 * Thread-safe. Codec and policy code log at debug only (docs/contributing.md,
 * "Logging"). */
#pragma once

#include <stdbool.h>

enum log_level {
	LOG_LVL_ERROR,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
	LOG_LVL_MAX
};

/* A structured field: key in UPPER_CASE as the journal wants it; logfmt
 * output lowercases it. */
struct log_field {
	const char *key;
	const char *value;
};

/* A NULL-terminated field list literal:
 *   log_write(LOG_LVL_INFO, "dhcp", LOG_FIELDS({"MAC", mac}, {"HARDWARE", hw}), "ACK %s", ip); */
#define LOG_FIELDS(...) ((const struct log_field[]){ __VA_ARGS__, { 0, 0 } })

/* Parses "error", "warn"/"warning", "info", "debug". Returns 0 or -EINVAL. */
int log_level_parse(const char *s, enum log_level *ret);
const char *log_level_name(enum log_level l);

/* Sets where logs go: the journal when to_journal is true, else stderr as
 * logfmt. log_init_auto() picks the journal when $JOURNAL_STREAM names
 * stderr. */
void log_init(enum log_level level, bool to_journal);
void log_init_auto(enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
static inline bool log_enabled(enum log_level l);

/* Where a log line goes instead of stderr or the journal: a host process
 * that loads our code as a library (the Kea hook) routes our lines into
 * its own logger. fn gets the record's level, its subsystem ("" when
 * none) and the line: the message, its control characters escaped
 * (\n, \xNN), then each field as " key=value" in logfmt (see above);
 * no timestamp, level or subsystem in it. Both strings are valid during
 * the call only. fn is called from whichever thread logs, without a lock
 * held (it may log itself, and must be thread-safe); the level set by
 * log_init()/log_set_level() still filters what reaches it. NULL
 * restores the output log_init() chose. Thread-safe. */
typedef void (*log_sink_fn)(enum log_level level, const char *subsystem, const char *line);
void log_set_sink(log_sink_fn fn);

/* Writes one log record. fields may be NULL. */
void log_write(enum log_level level, const char *subsystem, const struct log_field *fields,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

extern int log_level_current;
static inline bool log_enabled(enum log_level l)
{
	/* Relaxed: any recent value will do, but the read must be atomic, as
	 * log_set_level's store is (a reload changes it under the threads). */
	return (int)l <= __atomic_load_n(&log_level_current, __ATOMIC_RELAXED);
}

#define log_error(sub, ...) log_write(LOG_LVL_ERROR, sub, 0, __VA_ARGS__)
#define log_warn(sub, ...) log_write(LOG_LVL_WARN, sub, 0, __VA_ARGS__)
#define log_info(sub, ...) log_write(LOG_LVL_INFO, sub, 0, __VA_ARGS__)
#define log_debug(sub, ...)                                          \
	do {                                                         \
		if (log_enabled(LOG_LVL_DEBUG))                      \
			log_write(LOG_LVL_DEBUG, sub, 0, __VA_ARGS__); \
	} while (0)
