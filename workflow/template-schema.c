/* template-schema — a rendered template's YAML to struct wf_template, and
 * its validation (Tinkerbell's Workflow type and template validator).
 *
 * DESIGN: three passes over the rendered text. (1) yj_load_one() decides
 * whether it is YAML at all, with its limits (depth, nodes, aliases,
 * duplicate keys, UTF-8), and gives the values. (2) A walk over libyaml's
 * events records, for every node that is not inside an alias, its path
 * ("tasks[0].actions[2].name") with its line and column, and for a plain
 * scalar its source text: jansson keeps neither. (3) The schema walk reads the
 * values into the structure, and records every error (and every ignored
 * key) with its path and the position of the nearest node that has one;
 * it goes on after an error, so that one answer lists them all, joined
 * with "; " as store/validate.c joins its own.
 *
 * Compatibility with Tinkerbell (gopkg.in/yaml into Go strings and ints):
 * a string field takes any scalar as its source text, so `MODE: 0644`
 * stays "0644" and `COMPRESSED: true` is "true" (not 420, not a bool),
 * and null is ""; an integer field takes an integer only. (A scalar
 * inside an alias has no source text of its own here: it is written as
 * its YAML value, 0644 as "644"; templates seldom use aliases.) Unknown keys
 * are ignored, as Go's decoder does, and listed as warnings. Stricter
 * than Tinkerbell, on purpose: a task must have at least one action (the
 * engine hands out a task's first action; Tinkerbell accepts an empty task
 * and then has nothing to serve), worker must not be empty, timeouts are
 * 0..WF_TIMEOUT_MAX, volumes are "src:dst[:options]", an environment key
 * is not empty and has no '=', and no string has a NUL byte (they end up
 * in execve()). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/yamljson.h"
#include "workflow/workflow.h"

#define WF_PATH_MAX 512    /* bytes of a field path */
#define WF_PATH_KEY_MAX 64 /* bytes of one key in a path */
#define WF_PATH_DEPTH 16   /* levels of the schema walk */
#define WF_POS_DEPTH (YJ_MAX_DEPTH + 1)
#define WF_RAW_MAX 512  /* bytes of a plain scalar's source text kept */
#define WF_MORE_ROOM 32 /* room for " (and N more errors)" */

/* ---- paths ---- */

static bool path_ident(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* Appends a key (".key", or `["odd key"]`) to path[*len]; false, and
 * nothing written, when it does not fit. */
static bool path_add_key(char *path, size_t *len, const char *key, size_t n)
{
	char part[WF_PATH_KEY_MAX * 2 + 16];
	size_t o = 0;
	if (path_ident(key, n) && n <= WF_PATH_KEY_MAX) {
		o = (size_t)snprintf(part, sizeof(part), "%s%.*s", *len ? "." : "", (int)n, key);
	} else {
		part[o++] = '[';
		part[o++] = '"';
		for (size_t i = 0; i < n && i < WF_PATH_KEY_MAX; i++) {
			unsigned char ch = (unsigned char)key[i];
			if (ch == '"' || ch == '\\')
				part[o++] = '\\', part[o++] = (char)ch;
			else
				part[o++] = ch < 0x20 ? '?' : (char)ch;
		}
		if (n > WF_PATH_KEY_MAX)
			memcpy(part + o, "...", 3), o += 3;
		part[o++] = '"';
		part[o++] = ']';
		part[o] = '\0';
	}
	if (*len + o + 1 > WF_PATH_MAX)
		return false;
	memcpy(path + *len, part, o + 1);
	*len += o;
	return true;
}

static bool path_add_index(char *path, size_t *len, size_t i)
{
	char part[32];
	int o = snprintf(part, sizeof(part), "[%zu]", i);
	if (*len + (size_t)o + 1 > WF_PATH_MAX)
		return false;
	memcpy(path + *len, part, (size_t)o + 1);
	*len += (size_t)o;
	return true;
}

/* ---- pass 2: positions ---- */

struct pos_frame {
	bool map;
	bool lost;     /* the path did not fit: nothing below is recorded */
	bool have_key; /* map: the key of the next value is in the path */
	bool key_lost; /* map: that key is not (an alias or too long) */
	size_t plen;   /* the path of this collection */
	size_t index;  /* sequence: the next item's index */
};

struct pos_scan {
	json_t *pos; /* path -> line << 32 | column, for every node */
	json_t *raw; /* path -> source text, for plain scalars */
	char path[WF_PATH_MAX];
	size_t plen;
	struct pos_frame st[WF_POS_DEPTH];
	size_t depth;
};

static int pos_record(struct pos_scan *ps, const yaml_event_t *ev)
{
	json_int_t at = (json_int_t)(ev->start_mark.line + 1) << 32 |
			(json_int_t)(ev->start_mark.column + 1);
	if (json_object_set_new(ps->pos, ps->path, json_integer(at)) < 0)
		return -ENOMEM;
	if (ev->type != YAML_SCALAR_EVENT || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    ev->data.scalar.length > WF_RAW_MAX)
		return 0;
	json_t *text =
		json_stringn_nocheck((const char *)ev->data.scalar.value, ev->data.scalar.length);
	if (json_object_set_new(ps->raw, ps->path, text) < 0)
		return -ENOMEM;
	return 0;
}

/* One node event (scalar, alias, collection start). */
static int pos_node(struct pos_scan *ps, const yaml_event_t *ev)
{
	struct pos_frame *top = ps->depth ? &ps->st[ps->depth - 1] : NULL;
	bool lost = top && top->lost;
	bool start = ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT;
	int r = 0;

	if (top && top->map && !top->have_key) { /* a key */
		ps->plen = top->plen;
		ps->path[ps->plen] = '\0';
		top->have_key = true;
		top->key_lost =
			lost || ev->type != YAML_SCALAR_EVENT ||
			!path_add_key(ps->path, &ps->plen, (const char *)ev->data.scalar.value,
				      ev->data.scalar.length);
		if (start) /* refused by pass 1; keep the stack balanced */
			goto push;
		return 0;
	}
	if (top && top->map) {
		top->have_key = false;
		lost = lost || top->key_lost;
	} else if (top) {
		ps->plen = top->plen;
		ps->path[ps->plen] = '\0';
		if (!lost && !path_add_index(ps->path, &ps->plen, top->index))
			lost = true;
		top->index++;
	}
	if (!lost && (r = pos_record(ps, ev)) < 0)
		return r;
push:
	if (start) {
		if (ps->depth >= WF_POS_DEPTH)
			return -EINVAL; /* pass 1 refuses it first */
		ps->st[ps->depth++] = (struct pos_frame){
			.map = ev->type == YAML_MAPPING_START_EVENT, .lost = lost, .plen = ps->plen
		};
	}
	if (!start && top) {
		ps->plen = top->plen;
		ps->path[ps->plen] = '\0';
	}
	return 0;
}

static int pos_end(struct pos_scan *ps)
{
	if (ps->depth == 0)
		return -EINVAL;
	ps->depth--;
	ps->plen = ps->depth ? ps->st[ps->depth - 1].plen : 0;
	ps->path[ps->plen] = '\0';
	return 0;
}

/* Pass 2 over text already accepted by yj_load_one(): *ret_pos and
 * *ret_raw are the path maps. */
static int pos_load(const char *text, size_t len, json_t **ret_pos, json_t **ret_raw)
{
	struct pos_scan *ps = calloc(1, sizeof(*ps));
	yaml_parser_t p;
	yaml_event_t ev;
	bool done = false;
	int r = 0;

	if (!ps)
		return -ENOMEM;
	if (!yaml_parser_initialize(&p)) {
		free(ps);
		return -ENOMEM;
	}
	ps->pos = json_object();
	ps->raw = json_object();
	if (!ps->pos || !ps->raw) {
		r = -ENOMEM;
		goto out;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			r = p.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
			goto out;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT: r = pos_node(ps, &ev); break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT: r = pos_end(ps); break;
		default: break;
		}
		yaml_event_delete(&ev);
		if (r < 0)
			goto out;
	}
	*ret_pos = ps->pos;
	*ret_raw = ps->raw;
	ps->pos = ps->raw = NULL;
out:
	json_decref(ps->pos);
	json_decref(ps->raw);
	free(ps);
	yaml_parser_delete(&p);
	return r;
}

/* ---- pass 3: the schema walk ---- */

struct sctx {
	const json_t *pos;
	const json_t *raw;
	char path[WF_PATH_MAX];
	size_t plen;
	size_t marks[WF_PATH_DEPTH];
	size_t nmarks;
	struct wf_template_report *rep;
	size_t eused, wused;
	unsigned eshown, wshown;
	bool oom;
};

static void s_push_key(struct sctx *c, const char *key)
{
	c->marks[c->nmarks++] = c->plen;
	if (!path_add_key(c->path, &c->plen, key, strlen(key)))
		path_add_key(c->path, &c->plen, "?", 1);
}

static void s_push_index(struct sctx *c, size_t i)
{
	c->marks[c->nmarks++] = c->plen;
	path_add_index(c->path, &c->plen, i);
}

static void s_pop(struct sctx *c)
{
	c->plen = c->marks[--c->nmarks];
	c->path[c->plen] = '\0';
}

/* The position entry of the current path, or of the nearest ancestor
 * that has one (a node inside an alias has none of its own). */
static const json_t *s_entry(const struct sctx *c)
{
	char tmp[WF_PATH_MAX];
	const json_t *e = json_object_get(c->pos, c->path);
	for (size_t i = c->nmarks; !e && i > 0; i--) {
		memcpy(tmp, c->path, c->marks[i - 1]);
		tmp[c->marks[i - 1]] = '\0';
		e = json_object_get(c->pos, tmp);
	}
	return e;
}

/* The source text of the scalar at the current path, or NULL. */
static const char *s_raw(const struct sctx *c)
{
	return json_string_value(json_object_get(c->raw, c->path));
}

static void s_note(struct sctx *c, bool warn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records an error (or, warn, a warning) at the current path. */
static void s_note(struct sctx *c, bool warn, const char *fmt, ...)
{
	char msg[384], one[WF_PATH_MAX + 512];
	va_list ap;
	const json_t *e = s_entry(c);
	size_t line = e ? (size_t)(json_integer_value(e) >> 32) : 1;
	size_t col = e ? (size_t)(json_integer_value(e) & 0xffffffff) : 1;
	struct wf_template_report *rep = c->rep;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(one, sizeof(one), "%s: %s (line %zu, column %zu)", c->plen ? c->path : "template",
		 msg, line, col);
	char *buf = warn ? rep->warning : rep->error;
	size_t *used = warn ? &c->wused : &c->eused;
	unsigned *shown = warn ? &c->wshown : &c->eshown;
	unsigned *count = warn ? &rep->warnings : &rep->errors;
	if (!warn && rep->errors == 0)
		rep->line = line, rep->column = col;
	(*count)++;
	size_t need = (*shown ? 2 : 0) + strlen(one);
	if (*shown == 0 || *used + need + WF_MORE_ROOM < WF_REPORT_MAX) {
		int n = snprintf(buf + *used, WF_REPORT_MAX - *used, "%s%s", *shown ? "; " : "",
				 one);
		*used += n < 0                             ? 0 :
			 (size_t)n < WF_REPORT_MAX - *used ? (size_t)n :
							     WF_REPORT_MAX - 1 - *used;
		(*shown)++;
	}
}

static void s_finish(struct sctx *c)
{
	struct wf_template_report *rep = c->rep;
	unsigned more = rep->errors - c->eshown;
	if (more && c->eused + WF_MORE_ROOM <= WF_REPORT_MAX)
		snprintf(rep->error + c->eused, WF_REPORT_MAX - c->eused, " (and %u more error%s)",
			 more, more == 1 ? "" : "s");
	more = rep->warnings - c->wshown;
	if (more && c->wused + WF_MORE_ROOM <= WF_REPORT_MAX)
		snprintf(rep->warning + c->wused, WF_REPORT_MAX - c->wused,
			 " (and %u more warning%s)", more, more == 1 ? "" : "s");
}

static const char *s_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "a mapping";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static char *s_dup(struct sctx *c, const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		c->oom = true;
	return d;
}

/* A string field as Go's YAML decoder fills a Go string: any scalar, as
 * its source text; null or absent is "". *out is always set (to NULL only
 * when memory runs out). */
static void s_string(struct sctx *c, const json_t *v, char **out)
{
	char num[64];
	const char *raw;
	*out = NULL;
	if (!v || json_is_null(v)) {
		*out = s_dup(c, "", 0);
		return;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		if (memchr(s, '\0', n))
			s_note(c, false, "contains a NUL byte");
		*out = s_dup(c, s, n);
		return;
	}
	if (json_is_object(v) || json_is_array(v)) {
		s_note(c, false, "must be a string, not %s", s_type(v));
		*out = s_dup(c, "", 0);
		return;
	}
	raw = s_raw(c);
	if (!raw) { /* inside an alias: the value as YAML would write it */
		if (json_is_integer(v))
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(num, sizeof(num), "%.17g", json_real_value(v));
		else
			snprintf(num, sizeof(num), "%s", json_is_true(v) ? "true" : "false");
		raw = num;
	}
	*out = s_dup(c, raw, strlen(raw));
}

/* An integer field in min..max; absent or null is 0. */
static long long s_int(struct sctx *c, const json_t *v, long long min, long long max)
{
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max)
		return json_integer_value(v);
	if (json_is_integer(v) || json_is_real(v)) {
		const char *raw = s_raw(c);
		s_note(c, false, "%s is not an integer in %lld..%lld", raw ? raw : "the number",
		       min, max);
	} else {
		s_note(c, false, "must be an integer, not %s", s_type(v));
	}
	return 0;
}

/* A list of strings; absent or null is empty. */
static void s_strv(struct sctx *c, const json_t *v, struct wf_strv *out)
{
	size_t i;
	const json_t *item;
	if (!v || json_is_null(v))
		return;
	if (!json_is_array(v)) {
		s_note(c, false, "must be a list, not %s", s_type(v));
		return;
	}
	out->v = calloc(json_array_size(v) + 1, sizeof(*out->v));
	if (!out->v) {
		c->oom = true;
		return;
	}
	json_array_foreach (v, i, item) {
		s_push_index(c, i);
		s_string(c, item, &out->v[out->n++]);
		s_pop(c);
	}
}

/* A map of strings to strings, the environment; absent or null is empty.
 * Keys end up as "KEY=value": not empty, no '='. */
static void s_env(struct sctx *c, const json_t *v, struct wf_env *out)
{
	const char *key;
	const json_t *val;
	if (!v || json_is_null(v))
		return;
	if (!json_is_object(v)) {
		s_note(c, false, "must be a mapping, not %s", s_type(v));
		return;
	}
	out->keys = calloc(json_object_size(v) + 1, sizeof(*out->keys));
	out->values = calloc(json_object_size(v) + 1, sizeof(*out->values));
	if (!out->keys || !out->values) {
		c->oom = true;
		return;
	}
	json_object_foreach ((json_t *)v, key, val) {
		s_push_key(c, key);
		if (!*key || strchr(key, '='))
			s_note(c, false,
			       "an environment variable's name must not be empty or "
			       "contain '='");
		out->keys[out->n] = s_dup(c, key, strlen(key));
		s_string(c, val, &out->values[out->n]);
		out->n++;
		s_pop(c);
	}
}

/* A name: 1..WF_NAME_MAX bytes (Tinkerbell's hasValidLength). */
static void s_name(struct sctx *c, const json_t *obj, const char *field, char **out)
{
	s_push_key(c, field);
	s_string(c, json_object_get(obj, field), out);
	if (!json_object_get(obj, field))
		s_note(c, false, "a name is required");
	else if (*out && (!**out || strlen(*out) > WF_NAME_MAX))
		s_note(c, false, "a name must be 1 to %d characters long, not %zu", WF_NAME_MAX,
		       strlen(*out));
	s_pop(c);
}

/* Warns of each key of obj not in known (NULL-terminated). */
static void s_unknown(struct sctx *c, const json_t *obj, const char *const *known)
{
	const char *key;
	const json_t *val;
	json_object_foreach ((json_t *)obj, key, val) {
		const char *const *k = known;
		while (*k && strcmp(*k, key) != 0)
			k++;
		if (*k)
			continue;
		s_push_key(c, key);
		s_note(c, true, "unknown key, ignored");
		s_pop(c);
	}
}

/* ---- checks of single values ---- */

/* An OCI image reference, lightly: [host[:port]/]path[:tag][@digest]
 * with no whitespace. The full grammar is the registry's business. */
static void s_image(struct sctx *c, const char *s)
{
	if (!*s) {
		s_note(c, false, "an image is required");
		return;
	}
	if (strlen(s) > WF_IMAGE_MAX) {
		s_note(c, false, "image reference longer than %d bytes", WF_IMAGE_MAX);
		return;
	}
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._-/:@", *p))) {
			s_note(c, false, "image reference has an invalid character 0x%02x",
			       (unsigned char)*p);
			return;
		}
	size_t n = strlen(s);
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')) ||
	    s[n - 1] == ':' || s[n - 1] == '/' || s[n - 1] == '@' || strstr(s, "//"))
		s_note(c, false, "malformed image reference");
}

static const char *const volume_options[] = { "ro",      "rw",       "z",      "Z",
					      "shared",  "rshared",  "slave",  "rslave",
					      "private", "rprivate", "nocopy", NULL };

/* A Docker bind, "src:dst[:opt[,opt]]": src a path or a volume name, dst
 * an absolute path, options among Docker's. */
static void s_volume(struct sctx *c, const char *s)
{
	const char *a = strchr(s, ':');
	const char *b = a ? strchr(a + 1, ':') : NULL;
	if (!a || a == s || a[1] == '\0' || (b && (b == a + 1 || b[1] == '\0'))) {
		s_note(c, false, "a volume must be \"src:dst[:options]\"");
		return;
	}
	if (a[1] != '/') {
		s_note(c, false, "a volume's destination must be an absolute path");
		return;
	}
	if (!b)
		return;
	for (const char *o = b + 1; *o;) {
		size_t n = strcspn(o, ",");
		const char *const *k = volume_options;
		while (*k && !(strlen(*k) == n && memcmp(*k, o, n) == 0))
			k++;
		if (!*k) {
			s_note(c, false, "unknown volume option \"%.*s\"", (int)(n > 32 ? 32 : n),
			       o);
			return;
		}
		o += n + (o[n] == ',');
	}
}

static void s_volumes(struct sctx *c, const json_t *obj, struct wf_strv *out)
{
	s_push_key(c, "volumes");
	s_strv(c, json_object_get(obj, "volumes"), out);
	for (size_t i = 0; i < out->n; i++) {
		if (!out->v[i])
			continue;
		s_push_index(c, i);
		s_volume(c, out->v[i]);
		s_pop(c);
	}
	s_pop(c);
}

/* ---- the walk ---- */

static const char *const action_keys[] = { "name",       "image",      "timeout", "command",
					   "on-timeout", "on-failure", "volumes", "environment",
					   "pid",        "namespaces", "retries", NULL };
static const char *const ns_keys[] = { "network", "pid", NULL };
static const char *const task_keys[] = {
	"name", "worker", "volumes", "environment", "actions", NULL
};
static const char *const top_keys[] = { "version", "name", "id", "global_timeout", "tasks", NULL };

static void s_field_string(struct sctx *c, const json_t *obj, const char *field, char **out)
{
	s_push_key(c, field);
	s_string(c, json_object_get(obj, field), out);
	s_pop(c);
}

static void s_field_strv(struct sctx *c, const json_t *obj, const char *field, struct wf_strv *out)
{
	s_push_key(c, field);
	s_strv(c, json_object_get(obj, field), out);
	s_pop(c);
}

static long long s_field_int(struct sctx *c, const json_t *obj, const char *field, long long max)
{
	s_push_key(c, field);
	long long v = s_int(c, json_object_get(obj, field), 0, max);
	s_pop(c);
	return v;
}

static void s_namespaces(struct sctx *c, const json_t *obj, struct wf_action *a)
{
	const json_t *ns = json_object_get(obj, "namespaces");
	s_push_key(c, "namespaces");
	if (ns && !json_is_null(ns) && !json_is_object(ns)) {
		s_note(c, false, "must be a mapping, not %s", s_type(ns));
		ns = NULL;
	}
	if (ns && json_is_object(ns))
		s_unknown(c, ns, ns_keys);
	s_field_string(c, ns, "network", &a->ns_network);
	s_field_string(c, ns, "pid", &a->ns_pid);
	s_pop(c);
}

static void s_action(struct sctx *c, const json_t *obj, struct wf_action *a)
{
	if (!json_is_object(obj)) {
		s_note(c, false, "an action must be a mapping, not %s", s_type(obj));
		return;
	}
	s_unknown(c, obj, action_keys);
	s_name(c, obj, "name", &a->name);
	s_field_string(c, obj, "image", &a->image);
	if (a->image) {
		s_push_key(c, "image");
		s_image(c, a->image);
		s_pop(c);
	}
	a->timeout = s_field_int(c, obj, "timeout", WF_TIMEOUT_MAX);
	s_field_strv(c, obj, "command", &a->command);
	s_field_strv(c, obj, "on-timeout", &a->on_timeout);
	s_field_strv(c, obj, "on-failure", &a->on_failure);
	s_volumes(c, obj, &a->volumes);
	s_push_key(c, "environment");
	s_env(c, json_object_get(obj, "environment"), &a->environment);
	s_pop(c);
	s_field_string(c, obj, "pid", &a->pid);
	s_namespaces(c, obj, a);
	a->retries = (unsigned)s_field_int(c, obj, "retries", WF_RETRIES_MAX);
}

/* Whether name is the name of one of the n items before it. */
static bool s_dup_name(const char *name, const char *const *names, size_t stride, size_t n)
{
	for (size_t i = 0; name && i < n; i++) {
		const char *other = *(const char *const *)((const char *)names + i * stride);
		if (other && strcmp(other, name) == 0)
			return true;
	}
	return false;
}

static void s_task(struct sctx *c, const json_t *obj, struct wf_task *t)
{
	const json_t *acts = json_object_get(obj, "actions"), *item;
	size_t i;
	if (!json_is_object(obj)) {
		s_note(c, false, "a task must be a mapping, not %s", s_type(obj));
		return;
	}
	s_unknown(c, obj, task_keys);
	s_name(c, obj, "name", &t->name);
	s_field_string(c, obj, "worker", &t->worker);
	if (t->worker && !*t->worker) {
		s_push_key(c, "worker");
		s_note(c, false, "a worker is required (it rendered empty)");
		s_pop(c);
	}
	s_volumes(c, obj, &t->volumes);
	s_push_key(c, "environment");
	s_env(c, json_object_get(obj, "environment"), &t->environment);
	s_pop(c);
	s_push_key(c, "actions");
	if (!json_is_array(acts) || json_array_size(acts) == 0) {
		s_note(c, false,
		       acts && !json_is_null(acts) && !json_is_array(acts) ?
			       "must be a list of actions" :
			       "a task needs at least one action");
		s_pop(c);
		return;
	}
	t->actions = calloc(json_array_size(acts), sizeof(*t->actions));
	if (!t->actions) {
		c->oom = true;
		s_pop(c);
		return;
	}
	json_array_foreach (acts, i, item) {
		struct wf_action *a = &t->actions[t->n_actions++];
		s_push_index(c, i);
		s_action(c, item, a);
		if (s_dup_name(a->name, (const char *const *)&t->actions[0].name, sizeof(*a), i)) {
			s_push_key(c, "name");
			s_note(c, false, "duplicate action name \"%.64s\"", a->name);
			s_pop(c);
		}
		s_pop(c);
	}
	s_pop(c);
}

static void s_template(struct sctx *c, const json_t *root, struct wf_template *t)
{
	const json_t *tasks = json_object_get(root, "tasks"), *item;
	size_t i;
	if (!json_is_object(root)) {
		s_note(c, false, "a template must be a mapping, not %s", s_type(root));
		return;
	}
	s_unknown(c, root, top_keys);
	s_field_string(c, root, "version", &t->version);
	s_name(c, root, "name", &t->name);
	s_field_string(c, root, "id", &t->id);
	t->global_timeout = s_field_int(c, root, "global_timeout", WF_TIMEOUT_MAX);
	s_push_key(c, "tasks");
	if (!json_is_array(tasks) || json_array_size(tasks) == 0) {
		s_note(c, false,
		       tasks && !json_is_null(tasks) && !json_is_array(tasks) ?
			       "must be a list of tasks" :
			       "a template needs at least one task");
		s_pop(c);
		return;
	}
	t->tasks = calloc(json_array_size(tasks), sizeof(*t->tasks));
	if (!t->tasks) {
		c->oom = true;
		s_pop(c);
		return;
	}
	json_array_foreach (tasks, i, item) {
		struct wf_task *k = &t->tasks[t->n_tasks++];
		s_push_index(c, i);
		s_task(c, item, k);
		if (s_dup_name(k->name, (const char *const *)&t->tasks[0].name, sizeof(*k), i)) {
			s_push_key(c, "name");
			s_note(c, false, "duplicate task name \"%.64s\"", k->name);
			s_pop(c);
		}
		s_pop(c);
	}
	s_pop(c);
}

/* ---- the API ---- */

const char *wf_template_stage_name(enum wf_template_stage stage)
{
	switch (stage) {
	case WF_STAGE_RENDER: return "render";
	case WF_STAGE_YAML: return "yaml";
	case WF_STAGE_SCHEMA: return "schema";
	default: return "none";
	}
}

static void strv_free(struct wf_strv *v)
{
	for (size_t i = 0; v->v && i < v->n; i++)
		free(v->v[i]);
	free(v->v);
}

static void env_free(struct wf_env *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->keys ? e->keys[i] : NULL);
		free(e->values ? e->values[i] : NULL);
	}
	free(e->keys);
	free(e->values);
}

void wf_template_free(struct wf_template *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->tasks && i < t->n_tasks; i++) {
		struct wf_task *k = &t->tasks[i];
		for (size_t j = 0; k->actions && j < k->n_actions; j++) {
			struct wf_action *a = &k->actions[j];
			free(a->name);
			free(a->image);
			strv_free(&a->command);
			strv_free(&a->on_timeout);
			strv_free(&a->on_failure);
			strv_free(&a->volumes);
			env_free(&a->environment);
			free(a->pid);
			free(a->ns_network);
			free(a->ns_pid);
		}
		free(k->actions);
		free(k->name);
		free(k->worker);
		strv_free(&k->volumes);
		env_free(&k->environment);
	}
	free(t->tasks);
	free(t->version);
	free(t->name);
	free(t->id);
	free(t);
}

static void report_reset(struct wf_template_report *rep)
{
	memset(rep, 0, sizeof(*rep));
}

static void report_one(struct wf_template_report *rep, enum wf_template_stage stage, size_t line,
		       size_t col, const char *msg)
{
	rep->stage = stage;
	rep->errors = 1;
	rep->line = line;
	rep->column = col;
	snprintf(rep->error, sizeof(rep->error), "%s (line %zu, column %zu)", msg, line, col);
}

int wf_template_parse(const char *text, size_t len, struct wf_template **ret,
		      struct wf_template_report *rep)
{
	struct wf_template_report dummy;
	struct yj_error yerr;
	json_t *root = NULL, *pos = NULL, *raw = NULL;
	struct wf_template *t = NULL;
	struct sctx *c = NULL;
	int r;

	if (!rep)
		rep = &dummy;
	report_reset(rep);
	if (len > WF_TMPL_MAX_OUTPUT) {
		report_one(rep, WF_STAGE_YAML, 1, 1, "template: larger than 256 KiB");
		return -E2BIG;
	}
	r = yj_load_one(text, len, &root, &yerr);
	if (r == -EINVAL) {
		char msg[300];
		snprintf(msg, sizeof(msg), "template: %s", yerr.message);
		report_one(rep, WF_STAGE_YAML, yerr.line, yerr.column, msg);
	}
	if (r < 0)
		goto out;
	r = pos_load(text, len, &pos, &raw);
	if (r < 0)
		goto out;
	t = calloc(1, sizeof(*t));
	c = calloc(1, sizeof(*c));
	if (!t || !c) {
		r = -ENOMEM;
		goto out;
	}
	c->pos = pos;
	c->raw = raw;
	c->rep = rep;
	s_template(c, root, t);
	s_finish(c);
	if (c->oom) {
		r = -ENOMEM;
		goto out;
	}
	if (rep->errors) {
		rep->stage = WF_STAGE_SCHEMA;
		r = -EINVAL;
		goto out;
	}
	*ret = t;
	t = NULL;
out:
	wf_template_free(t);
	free(c);
	json_decref(root);
	json_decref(pos);
	json_decref(raw);
	return r;
}

int wf_template_load(const char *src, size_t len, const json_t *data, struct wf_template **ret,
		     struct wf_template_report *rep)
{
	struct wf_template_report dummy;
	struct wf_tmpl_error terr;
	char *out = NULL;
	size_t out_len = 0;

	if (!rep)
		rep = &dummy;
	report_reset(rep);
	int r = wf_tmpl_render(src, len, data, &out, &out_len, &terr);
	if (r < 0) {
		report_one(rep, WF_STAGE_RENDER, terr.line, terr.column,
			   r == -ENOMEM ? "out of memory" : terr.message);
		return r;
	}
	r = wf_template_parse(out, out_len, ret, rep);
	free(out);
	return r;
}
