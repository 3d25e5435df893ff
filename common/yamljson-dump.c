/* yamljson-dump — JSON (jansson) to YAML (libyaml), the way back of
 * yamljson.c. See yamljson.h.
 *
 * Dumping drives libyaml's emitter, which already knows YAML's rules for
 * when a string may be plain, needs quotes, or may be a literal block. The
 * one thing it cannot know is our schema, so every string that a plain
 * scalar would turn into something else ("true", "1", "null", "", "~") is
 * forced into double quotes, and so are the YAML 1.1 words (yes, on, ...)
 * and number-like strings (0b1, 1_000, 12:30, 2001-12-14) that older
 * readers such as kubectl's would retype. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/yamljson-internal.h"
#include "common/yamljson.h"

struct yj_dumper {
	yaml_emitter_t em;
	struct buf *out;
	int error; /* the buffer's error, when the write handler failed */
};

static int yj_write(void *data, unsigned char *buffer, size_t size)
{
	struct yj_dumper *d = data;
	int r = buf_append(d->out, buffer, size);
	if (r < 0) {
		d->error = r;
		return 0;
	}
	return 1;
}

static int yj_emit(struct yj_dumper *d, yaml_event_t *ev)
{
	/* yaml_emitter_emit takes the event, even when it fails. */
	if (yaml_emitter_emit(&d->em, ev))
		return 0;
	if (d->error)
		return d->error;
	return d->em.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
}

static const char *const yj_yaml11_words[] = { "y",   "Y",   "yes", "Yes", "YES", "n",  "N",
					       "no",  "No",  "NO",  "on",  "On",  "ON", "off",
					       "Off", "OFF", "<<",  "=",   NULL };

/* Whether a string, written plain, could be read back as something other
 * than that string: by our schema, by YAML 1.1, or as a number or date by
 * some reader's looser idea of one. */
static bool yj_needs_quotes(const char *s, size_t n)
{
	if (yj_plain_type(s, n) != YJ_STR || yj_any(s, n, yj_yaml11_words))
		return true;
	if (n > 64 || !strchr("0123456789+-.", s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\0' || !strchr("0123456789abcdefABCDEF_:.+-xXoOtTzZ ", s[i]))
			return false;
	return true;
}

static int yj_emit_string(struct yj_dumper *d, const char *s, size_t n)
{
	yaml_event_t ev;
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
	if (n > INT_MAX)
		return -E2BIG;
	if (memchr(s, '\n', n))
		style = YAML_LITERAL_SCALAR_STYLE; /* the emitter falls back when it must */
	else if (yj_needs_quotes(s, n))
		style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, 1, 1, style))
		return -ENOMEM;
	return yj_emit(d, &ev);
}

static int yj_emit_plain(struct yj_dumper *d, const char *s)
{
	yaml_event_t ev;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
					  YAML_PLAIN_SCALAR_STYLE))
		return -ENOMEM;
	return yj_emit(d, &ev);
}

/* The shortest "%.*g" that reads back as the same double, made to look
 * like a float (a '.' before any exponent) so it stays a real. */
static void yj_format_real(double v, char *out, size_t outlen)
{
	char tmp[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	if (strpbrk(tmp, ".")) {
		snprintf(out, outlen, "%s", tmp);
		return;
	}
	char *e = strpbrk(tmp, "eE");
	if (e)
		snprintf(out, outlen, "%.*s.0%s", (int)(e - tmp), tmp, e);
	else
		snprintf(out, outlen, "%s.0", tmp);
}

static int yj_emit_value(struct yj_dumper *d, const json_t *v, size_t depth)
{
	yaml_event_t ev;
	char num[64];
	int r = 0;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *c;
		if (depth >= YJ_MAX_DEPTH)
			return -EINVAL;
		bool empty = json_object_size(v) == 0;
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 empty ? YAML_FLOW_MAPPING_STYLE :
								 YAML_BLOCK_MAPPING_STYLE))
			return -ENOMEM;
		if ((r = yj_emit(d, &ev)) < 0)
			return r;
		json_object_foreach((json_t *)v, k, c)
		{
			if ((r = yj_emit_string(d, k, strlen(k))) < 0 ||
			    (r = yj_emit_value(d, c, depth + 1)) < 0)
				return r;
		}
		if (!yaml_mapping_end_event_initialize(&ev))
			return -ENOMEM;
		return yj_emit(d, &ev);
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *c;
		if (depth >= YJ_MAX_DEPTH)
			return -EINVAL;
		bool empty = json_array_size(v) == 0;
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  empty ? YAML_FLOW_SEQUENCE_STYLE :
								  YAML_BLOCK_SEQUENCE_STYLE))
			return -ENOMEM;
		if ((r = yj_emit(d, &ev)) < 0)
			return r;
		json_array_foreach(v, i, c)
		{
			if ((r = yj_emit_value(d, c, depth + 1)) < 0)
				return r;
		}
		if (!yaml_sequence_end_event_initialize(&ev))
			return -ENOMEM;
		return yj_emit(d, &ev);
	}
	case JSON_STRING: return yj_emit_string(d, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return yj_emit_plain(d, num);
	case JSON_REAL:
		if (!isfinite(json_real_value(v)))
			return -EINVAL;
		yj_format_real(json_real_value(v), num, sizeof(num));
		return yj_emit_plain(d, num);
	case JSON_TRUE: return yj_emit_plain(d, "true");
	case JSON_FALSE: return yj_emit_plain(d, "false");
	case JSON_NULL:
	default: return yj_emit_plain(d, "null");
	}
}

/* Emits one of the events that carry nothing: stream, document, ends. */
static int yj_emit_frame(struct yj_dumper *d, yaml_event_type_t type)
{
	yaml_event_t ev;
	int ok;
	switch (type) {
	case YAML_STREAM_START_EVENT:
		ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
		break;
	case YAML_DOCUMENT_START_EVENT:
		ok = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		break;
	case YAML_DOCUMENT_END_EVENT: ok = yaml_document_end_event_initialize(&ev, 1); break;
	case YAML_STREAM_END_EVENT:
	default: ok = yaml_stream_end_event_initialize(&ev); break;
	}
	return ok ? yj_emit(d, &ev) : -ENOMEM;
}

int yj_dump(const json_t *v, struct buf *out)
{
	struct yj_dumper d = { .out = out };
	size_t saved = out->len;
	int r;

	if (!v)
		return -EINVAL;
	if (!yaml_emitter_initialize(&d.em))
		return -ENOMEM;
	yaml_emitter_set_output(&d.em, yj_write, &d);
	yaml_emitter_set_unicode(&d.em, 1);
	yaml_emitter_set_width(&d.em, -1); /* never fold long lines */
	yaml_emitter_set_indent(&d.em, 2);

	if ((r = yj_emit_frame(&d, YAML_STREAM_START_EVENT)) < 0 ||
	    (r = yj_emit_frame(&d, YAML_DOCUMENT_START_EVENT)) < 0 ||
	    (r = yj_emit_value(&d, v, 0)) < 0 ||
	    (r = yj_emit_frame(&d, YAML_DOCUMENT_END_EVENT)) < 0 ||
	    (r = yj_emit_frame(&d, YAML_STREAM_END_EVENT)) < 0)
		goto out;
	if (!yaml_emitter_flush(&d.em))
		r = d.error ? d.error : -ENOMEM;
out:
	if (r < 0 && out->data) {
		out->len = saved;
		out->data[saved] = '\0';
	}
	yaml_emitter_delete(&d.em);
	return r;
}
