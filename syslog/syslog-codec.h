/* syslog-codec — the syslog receiver's parser: messages from the machines being
 * provisioned (DHCP option 7 and the syslog_host kernel argument point at
 * it) become events of the Hardware that owns the sender's address.
 *
 * This header is the pure parser (RFC 3164 and the loose forms real
 * senders use, RFC 5424); the per-source rate limiter is
 * common/ratelimit.h; the server thread is syslog/syslog.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYSLOG_PORT 514
#define SYSLOG_DATAGRAM_MAX 65535
#define SYSLOG_PRI_MAX 191 /* facility 23, severity 7 */

enum syslog_format {
	SYSLOG_RFC3164,
	SYSLOG_RFC5424,
};

enum syslog_bad {
	SYSLOG_BAD_EMPTY = 1,   /* nothing, or only a NUL */
	SYSLOG_BAD_PRI,         /* no <PRI>, a bad number, leading zeros, over 191 */
	SYSLOG_BAD_HEADER,      /* an RFC 5424 header cut short or malformed */
	SYSLOG_BAD_SD,          /* RFC 5424 structured data not closed */
	SYSLOG_BAD_MAX
};
const char *syslog_bad_name(enum syslog_bad why);

/* A part of the datagram: not NUL-terminated; n = 0 when absent ("-"). */
struct syslog_slice {
	const char *p;
	size_t n;
};

struct syslog_msg {
	enum syslog_format format;
	unsigned facility, severity; /* PRI / 8, PRI % 8 */
	struct syslog_slice timestamp, host, app, procid, msgid, text;
};

/* Parses one datagram. Returns 0 with *ret pointing into p, or -EBADMSG
 * with *why. */
int syslog_parse(const uint8_t *p, size_t n, struct syslog_msg *ret, enum syslog_bad *why);

/* "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug". */
const char *syslog_severity_name(unsigned severity);

/* Writes s as one line for an event, at most max bytes, in valid UTF-8:
 * control bytes become '?', an ill-formed sequence U+FFFD, a cut falls
 * between characters and is marked with "...". Returns the length written
 * (out holds max + 1 bytes). */
size_t syslog_clean(const struct syslog_slice *s, char *out, size_t max);

#define SYSLOG_APP_MAX 63 /* bytes of the program name in an event */
#define SYSLOG_PID_MAX 23 /* bytes of the pid */
/* The most "<severity> <app>[<pid>]: " takes (severity names have at most
 * 7 bytes). */
#define SYSLOG_EVENT_PREFIX_MAX (7 + 1 + SYSLOG_APP_MAX + 1 + SYSLOG_PID_MAX + 1 + 2)

/* Writes the message of the event m becomes, "<severity> <app>[<pid>]:
 * <text>" ("-" for no app, no brackets for no pid), each part cleaned as
 * syslog_clean() does: the program name cut at SYSLOG_APP_MAX bytes, the
 * pid at SYSLOG_PID_MAX, the text at max. out holds
 * SYSLOG_EVENT_PREFIX_MAX + max + 1 bytes. Returns the length written, and
 * in *ret_cut whether any part was cut. */
size_t syslog_event_text(const struct syslog_msg *m, char *out, size_t max, bool *ret_cut);
