/* log — journal or logfmt output, or a host's sink. See log.h.
 *
 * The level is an int read and written with relaxed atomics, without a lock
 * on the hot path (a stale read only means one line more or less during a
 * reload); the output itself is
 * serialized by a mutex so lines from several threads never interleave.
 * The sink (log_set_sink) is a pointer read with an acquire load; it is
 * called without that mutex, since the host's logger has its own and may
 * call back into code that logs. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>

#include "common/buf.h"
#include "common/log.h"

int log_level_current = LOG_LVL_INFO;
static bool log_to_journal;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static log_sink_fn log_sink;
static const char *const level_names[LOG_LVL_MAX] = { "error", "warn", "info", "debug" };
static const int level_prio[LOG_LVL_MAX] = { 3, 4, 6, 7 };

int log_level_parse(const char *s, enum log_level *ret)
{
	if (!s)
		return -EINVAL;
	for (int i = 0; i < LOG_LVL_MAX; i++)
		if (strcmp(s, level_names[i]) == 0) {
			*ret = (enum log_level)i;
			return 0;
		}
	if (strcmp(s, "warning") == 0) {
		*ret = LOG_LVL_WARN;
		return 0;
	}
	return -EINVAL;
}

const char *log_level_name(enum log_level l)
{
	return (unsigned)l < LOG_LVL_MAX ? level_names[l] : "?";
}

void log_init(enum log_level level, bool to_journal)
{
	log_level_current = (int)level;
	log_to_journal = to_journal;
}

void log_init_auto(enum log_level level)
{
	bool j = false;
	const char *js = getenv("JOURNAL_STREAM");
	struct stat st;
	if (js && fstat(STDERR_FILENO, &st) == 0) {
		char want[64];
		snprintf(want, sizeof(want), "%lu:%lu", (unsigned long)st.st_dev, (unsigned long)st.st_ino);
		j = strcmp(js, want) == 0;
	}
	log_init(level, j);
}

void log_set_level(enum log_level level)
{
	__atomic_store_n(&log_level_current, (int)level, __ATOMIC_RELAXED);
}

enum log_level log_get_level(void)
{
	return (enum log_level)__atomic_load_n(&log_level_current, __ATOMIC_RELAXED);
}

/* logfmt: a value is quoted when it has a space, '=', '"' or a control
 * character; control characters are escaped so a peer cannot forge lines. */
static void put_logfmt_value(struct buf *b, const char *v)
{
	bool quote = *v == '\0';
	for (const char *p = v; *p && !quote; p++)
		if ((unsigned char)*p <= ' ' || *p == '=' || *p == '"' || *p == 0x7f)
			quote = true;
	if (quote)
		buf_put_json_string(b, v, strlen(v));
	else
		buf_puts(b, v);
}

/* The fields of a record in logfmt: " key=value" each. */
static void put_logfmt_fields(struct buf *b, const struct log_field *fields)
{
	for (const struct log_field *f = fields; f && f->key; f++) {
		if (!f->value)
			continue;
		buf_putc(b, ' ');
		for (const char *k = f->key; *k; k++)
			buf_putc(b, (char)tolower((unsigned char)*k));
		buf_putc(b, '=');
		put_logfmt_value(b, f->value);
	}
}

void log_set_sink(log_sink_fn fn)
{
	__atomic_store_n(&log_sink, fn, __ATOMIC_RELEASE);
}

/* The sink's line: the message unquoted but for its control characters,
 * escaped so that it stays one line, then the fields. */
static void write_sink(log_sink_fn fn, enum log_level level, const char *sub,
		       const struct log_field *fields, const char *msg)
{
	struct buf b = BUF_INIT(64 * 1024);
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p == '\n')
			buf_puts(&b, "\\n");
		else if (*p == '\t')
			buf_puts(&b, "\\t");
		else if (*p < ' ' || *p == 0x7f)
			buf_printf(&b, "\\x%02x", *p);
		else
			buf_putc(&b, (char)*p);
	}
	put_logfmt_fields(&b, fields);
	fn(level, sub ? sub : "", b.data ? b.data : ""); /* "": out of memory */
	buf_free(&b);
}

static void write_logfmt(enum log_level level, const char *sub, const struct log_field *fields,
			 const char *msg)
{
	struct buf b = BUF_INIT(64 * 1024);
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	buf_printf(&b, "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s", tm.tm_year + 1900,
		   tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		   ts.tv_nsec / 1000000, level_names[level]);
	if (sub) {
		buf_puts(&b, " subsystem=");
		put_logfmt_value(&b, sub);
	}
	buf_puts(&b, " msg=");
	put_logfmt_value(&b, msg);
	put_logfmt_fields(&b, fields);
	buf_putc(&b, '\n');
	if (b.data) {
		pthread_mutex_lock(&log_lock);
		fwrite(b.data, 1, b.len, stderr);
		fflush(stderr);
		pthread_mutex_unlock(&log_lock);
	}
	buf_free(&b);
}

#define LOG_MAX_FIELDS 16

static void write_journal(enum log_level level, const char *sub, const struct log_field *fields,
			  const char *msg)
{
	struct iovec iov[LOG_MAX_FIELDS + 3];
	char *strs[LOG_MAX_FIELDS + 3];
	int n = 0;
	if (asprintf(&strs[n], "MESSAGE=%s", msg) >= 0)
		n++;
	if (asprintf(&strs[n], "PRIORITY=%d", level_prio[level]) >= 0)
		n++;
	if (sub && asprintf(&strs[n], "SUBSYSTEM=%s", sub) >= 0)
		n++;
	for (const struct log_field *f = fields; f && f->key && n < LOG_MAX_FIELDS + 3; f++)
		if (f->value && asprintf(&strs[n], "%s=%s", f->key, f->value) >= 0)
			n++;
	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){ strs[i], strlen(strs[i]) };
	sd_journal_sendv(iov, n);
	for (int i = 0; i < n; i++)
		free(strs[i]);
}

void log_write(enum log_level level, const char *subsystem, const struct log_field *fields,
	       const char *fmt, ...)
{
	if ((unsigned)level >= LOG_LVL_MAX || !log_enabled(level))
		return;
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_sink_fn sink = __atomic_load_n(&log_sink, __ATOMIC_ACQUIRE);
	if (sink)
		write_sink(sink, level, subsystem, fields, msg);
	else if (log_to_journal)
		write_journal(level, subsystem, fields, msg);
	else
		write_logfmt(level, subsystem, fields, msg);
}
