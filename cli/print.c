/* print — how `ironbell` shows objects: kubectl-style tables, ages,
 * values picked by a dotted path, JSON and YAML.
 *
 * Tables are built whole, then printed with each column as wide as its
 * widest cell (counted in UTF-8 characters, not bytes) and three spaces
 * between columns, as kubectl's printer does; the last column is not
 * padded, so lines carry no trailing blanks.
 *
 * A Secret's values never reach the terminal: before an object is printed
 * as JSON or YAML, cli_redact_secrets() replaces each value of its data
 * and stringData with CLI_REDACTED, which is not base64, so that output
 * applied again is refused rather than overwriting the credentials. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/common.h"

struct cli_table {
	json_t *rows; /* array of arrays of strings */
};

struct cli_table *cli_table_new(void)
{
	struct cli_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->rows = json_array();
	if (!t->rows) {
		free(t);
		return NULL;
	}
	return t;
}

void cli_table_free(struct cli_table *t)
{
	if (!t)
		return;
	json_decref(t->rows);
	free(t);
}

int cli_table_row(struct cli_table *t)
{
	return json_array_append_new(t->rows, json_array()) < 0 ? -ENOMEM : 0;
}

int cli_table_cell(struct cli_table *t, const char *s)
{
	size_t n = json_array_size(t->rows);
	if (n == 0)
		return -EINVAL;
	json_t *row = json_array_get(t->rows, n - 1);
	/* A cell is one line: a newline or tab would break the columns. */
	char *clean = strdup(s ? s : "");
	if (!clean)
		return -ENOMEM;
	for (char *p = clean; *p; p++)
		if (*p == '\n' || *p == '\t' || *p == '\r')
			*p = ' ';
	json_t *v = json_string(clean);
	if (!v)
		v = json_string("<invalid UTF-8>");
	free(clean);
	return json_array_append_new(row, v) < 0 ? -ENOMEM : 0;
}

size_t cli_table_rows(const struct cli_table *t)
{
	return json_array_size(t->rows);
}

static size_t text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void cli_table_print(const struct cli_table *t, FILE *f)
{
	size_t ncols = 0, i;
	json_t *row, *cell;
	json_array_foreach (t->rows, i, row)
		if (json_array_size(row) > ncols)
			ncols = json_array_size(row);
	size_t *width = calloc(ncols ? ncols : 1, sizeof(*width));
	if (!width)
		return;
	json_array_foreach (t->rows, i, row) {
		size_t j;
		json_array_foreach (row, j, cell) {
			size_t w = text_width(json_string_value(cell));
			if (w > width[j])
				width[j] = w;
		}
	}
	json_array_foreach (t->rows, i, row) {
		size_t j, n = json_array_size(row);
		json_array_foreach (row, j, cell) {
			const char *s = json_string_value(cell);
			fputs(s, f);
			if (j + 1 < n)
				fprintf(f, "%*s", (int)(width[j] - text_width(s) + 3), "");
		}
		fputc('\n', f);
	}
	free(width);
}

char *cli_json_path_text(const json_t *obj, const char *path)
{
	const json_t *v = obj;
	const char *p = path;
	if (*p == '.')
		p++;
	while (*p && v) {
		size_t n = strcspn(p, ".");
		char key[256];
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		v = json_object_get(v, key);
		p += n;
		if (*p == '.')
			p++;
	}
	if (!v || json_is_null(v))
		return NULL;
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

const char *cli_meta_string(const json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static int digits(const char *s, size_t n, uint64_t max, int *ret)
{
	uint64_t v;
	int r = num_parse_u64(s, n, max, &v);
	if (r < 0)
		return r;
	*ret = (int)v;
	return 0;
}

int cli_parse_time(const char *s, int64_t *ret)
{
	/* 2026-11-22T07:31:44[.123456][Z|+hh:mm|-hh:mm] */
	struct tm tm = { 0 };
	int year, mon, mday, hour, min, sec, oh = 0, om = 0, sign = 0;
	if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
	    s[13] != ':' || s[16] != ':')
		return -EINVAL;
	if (digits(s, 4, 9999, &year) < 0 || digits(s + 5, 2, 12, &mon) < 0 ||
	    digits(s + 8, 2, 31, &mday) < 0 || digits(s + 11, 2, 23, &hour) < 0 ||
	    digits(s + 14, 2, 59, &min) < 0 || digits(s + 17, 2, 60, &sec) < 0 || mon < 1 ||
	    mday < 1)
		return -EINVAL;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		size_t n = 0;
		while (p[n] >= '0' && p[n] <= '9')
			n++;
		if (n == 0)
			return -EINVAL;
		p += n;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (strlen(p) < 6 || p[3] != ':' || digits(p + 1, 2, 23, &oh) < 0 ||
		    digits(p + 4, 2, 59, &om) < 0)
			return -EINVAL;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = mday;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*ret = (int64_t)t - sign * (oh * 3600 + om * 60);
	return 0;
}

void cli_format_age(int64_t d, char out[static 32])
{
	/* kubectl's thresholds: seconds up to 2 minutes, minutes and seconds
	 * up to 10 minutes, then minutes, hours and minutes up to 8 hours,
	 * hours up to 2 days, days and hours up to 8 days, days up to 2 years,
	 * then years and days up to 8 years, then years. */
	const int64_t m = 60, h = 3600, day = 86400, y = 365 * 86400;
	if (d < 0)
		d = 0;
	if (d < 2 * m)
		snprintf(out, 32, "%llds", (long long)d);
	else if (d < 10 * m)
		snprintf(out, 32, d % m ? "%lldm%llds" : "%lldm", (long long)(d / m),
			 (long long)(d % m));
	else if (d < 3 * h)
		snprintf(out, 32, "%lldm", (long long)(d / m));
	else if (d < 8 * h)
		snprintf(out, 32, d % h / m ? "%lldh%lldm" : "%lldh", (long long)(d / h),
			 (long long)(d % h / m));
	else if (d < 2 * day)
		snprintf(out, 32, "%lldh", (long long)(d / h));
	else if (d < 8 * day)
		snprintf(out, 32, d % day / h ? "%lldd%lldh" : "%lldd", (long long)(d / day),
			 (long long)(d % day / h));
	else if (d < 2 * y)
		snprintf(out, 32, "%lldd", (long long)(d / day));
	else if (d < 8 * y)
		snprintf(out, 32, d % y / day ? "%lldy%lldd" : "%lldy", (long long)(d / y),
			 (long long)(d % y / day));
	else
		snprintf(out, 32, "%lldy", (long long)(d / y));
}

void cli_object_age(const json_t *obj, int64_t now, char out[static 32])
{
	int64_t t;
	if (cli_parse_time(cli_meta_string(obj, "creationTimestamp"), &t) < 0) {
		snprintf(out, 32, "<unknown>");
		return;
	}
	cli_format_age(now - t, out);
}

int cli_print_yaml(const json_t *v, FILE *f, int indent)
{
	struct buf out = BUF_INIT(CLI_MAX_RESPONSE);
	int r = yj_dump(v, &out);
	if (r < 0)
		goto out;
	const char *p = out.data ? out.data : "";
	while (*p) {
		size_t n = strcspn(p, "\n");
		if (n)
			fprintf(f, "%*s%.*s", indent, "", (int)n, p);
		fputc('\n', f);
		p += n;
		if (*p)
			p++;
	}
out:
	buf_free(&out);
	return r;
}

void cli_print_json(const json_t *v, FILE *f)
{
	json_dumpf(v, f, JSON_INDENT(4));
	fputc('\n', f);
}

/* A Secret: core v1 kind Secret (as the server sends it). */
static bool is_secret(const json_t *v)
{
	const char *av = json_string_value(json_object_get(v, "apiVersion"));
	const char *kind = json_string_value(json_object_get(v, "kind"));
	return av && kind && strcmp(av, "v1") == 0 && strcmp(kind, "Secret") == 0;
}

static void redact_map(json_t *m)
{
	const char *key;
	json_t *val;
	if (!json_is_object(m))
		return;
	json_object_foreach (m, key, val)
		json_object_set_new(m, key, json_string(CLI_REDACTED));
}

void cli_redact_secrets(json_t *v)
{
	size_t i;
	json_t *item;
	if (!json_is_object(v))
		return;
	if (is_secret(v)) {
		redact_map(json_object_get(v, "data"));
		redact_map(json_object_get(v, "stringData"));
	}
	/* A List's items, a watch event's object: one level each, as the
	 * server sends them. */
	json_array_foreach (json_object_get(v, "items"), i, item)
		if (is_secret(item)) {
			redact_map(json_object_get(item, "data"));
			redact_map(json_object_get(item, "stringData"));
		}
	item = json_object_get(v, "object");
	if (is_secret(item)) {
		redact_map(json_object_get(item, "data"));
		redact_map(json_object_get(item, "stringData"));
	}
}
