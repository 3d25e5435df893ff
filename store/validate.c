/* validate — checks objects against the Tinkerbell v1alpha1 schemas (and
 * core v1 Secret) before the store accepts them, and fills in the CRDs'
 * defaults.
 *
 * DESIGN: the schemas are data, not code (crd-tables.c), the checks of
 * single values are pure functions (validate-values.c), and this file is
 * the one walker that applies them. It keeps the field path of where it is
 * ("spec.interfaces[0].dhcp.mac") so that every message starts with it, as
 * the API server's do, and it goes on after an error: one answer lists
 * every field error of the object, joined with "; ", as the API server
 * lists them all in one Status.
 *
 * Defaulting (store_default()) walks the same tables and does what the API
 * server does before it validates: a field with a `default` in the CRD
 * that is absent or null, in an object that is present, gets its default;
 * other nulls of known fields are pruned. The stored object carries them,
 * so that every reader sees the same values as under Kubernetes. A
 * Secret's stringData is merged into data as base64 and dropped, as the
 * API server does.
 *
 * What is checked differently from the CRDs, and why, is said in
 * crd-tables.c and listed in docs/strictness.md. null counts as absent,
 * as the API server prunes nulls of fields that are not nullable; YAML
 * writes `userData:` as null. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"
#include "store/validate-internal.h"

/* ---- paths and messages ---- */

static void vappend(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void vappend(struct vctx *c, const char *fmt, ...)
{
	va_list ap;
	if (c->plen >= sizeof(c->path) - 1)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(c->path + c->plen, sizeof(c->path) - c->plen, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->plen += (size_t)n < sizeof(c->path) - c->plen ? (size_t)n :
								   sizeof(c->path) - 1 - c->plen;
}

/* vappend() of n bytes of s as they are, without a format to parse: the
 * path is built for every member checked, most of which are valid. */
static void vappend_raw(struct vctx *c, const char *s, size_t n)
{
	if (c->plen >= sizeof(c->path) - 1)
		return;
	if (n > sizeof(c->path) - 1 - c->plen)
		n = sizeof(c->path) - 1 - c->plen;
	memcpy(c->path + c->plen, s, n);
	c->plen += n;
	c->path[c->plen] = '\0';
}

static bool vident(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

void store_vquote(char *out, size_t outlen, const char *s, size_t n)
{
	size_t o = 0;
	if (outlen < 8)
		return;
	out[o++] = '"';
	for (size_t i = 0; i < n && o + 8 < outlen; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (i >= VALIDATE_QUOTE_MAX && (ch & 0xc0) != 0x80) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (ch == '"' || ch == '\\') {
			out[o++] = '\\';
			out[o++] = (char)ch;
		} else if (ch < 0x20) {
			o += (size_t)snprintf(out + o, outlen - o, "\\u%04x", ch);
		} else {
			out[o++] = (char)ch;
		}
	}
	out[o++] = '"';
	out[o] = '\0';
}

static size_t vpush(struct vctx *c, const char *name)
{
	size_t mark = c->plen;
	if (vident(name)) {
		if (c->plen)
			vappend_raw(c, ".", 1);
		vappend_raw(c, name, strlen(name));
	} else {
		char q[VALIDATE_QUOTE_MAX * 2 + 16];
		store_vquote(q, sizeof(q), name, strlen(name));
		vappend(c, "[%s]", q);
	}
	return mark;
}

static size_t vpush_index(struct vctx *c, size_t i)
{
	size_t mark = c->plen;
	char d[24];
	size_t n = sizeof(d);
	d[--n] = ']';
	do
		d[--n] = (char)('0' + i % 10);
	while ((i /= 10) && n > 1);
	d[--n] = '[';
	vappend_raw(c, d + n, sizeof(d) - n);
	return mark;
}

static void vpop(struct vctx *c, size_t mark)
{
	c->plen = mark;
	c->path[mark] = '\0';
}

/* Room kept at the end of the message for " (and N more errors)". */
#define VALIDATE_MORE_ROOM 32

int store_vfail(struct vctx *c, const char *fmt, ...)
{
	char msg[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->errors++;
	if (!c->err || !c->errlen)
		return -EINVAL;
	const char *path = c->plen ? c->path : "object";
	if (c->shown == 0) {
		/* the first one always, cut to the buffer if it must be */
		int n = snprintf(c->err, c->errlen, "%s: %s", path, msg);
		c->used = n < 0 ? 0 : (size_t)n < c->errlen ? (size_t)n : c->errlen - 1;
		c->shown = 1;
		return -EINVAL;
	}
	size_t need = 2 + strlen(path) + 2 + strlen(msg);
	if (c->used + need + VALIDATE_MORE_ROOM < c->errlen) {
		snprintf(c->err + c->used, c->errlen - c->used, "; %s: %s", path, msg);
		c->used += need;
		c->shown++;
	}
	return -EINVAL;
}

/* Ends the message with how many errors did not fit; returns what the
 * walk returned. */
static int vfinish(struct vctx *c, int r)
{
	unsigned more = c->errors - c->shown;
	if (more && c->shown && c->err && c->used + VALIDATE_MORE_ROOM <= c->errlen)
		snprintf(c->err + c->used, c->errlen - c->used, " (and %u more error%s)", more,
			 more == 1 ? "" : "s");
	return r;
}

static const char *vtype_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* ---- the walker ---- */

static int vcheck(struct vctx *c, const struct vfield *f, const json_t *v, const json_t *old);

static int venum(struct vctx *c, const struct vfield *f, const json_t *v)
{
	const char *s = json_string_value(v);
	char list[256];
	size_t o = 0;
	for (const char *const *e = f->enums; *e; e++) {
		if (strlen(*e) == json_string_length(v) &&
		    ((f->flags & F_NOCASE) ? strcasecmp(*e, s) : strcmp(*e, s)) == 0)
			return 0;
		if (**e && o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", o ? ", " : "",
					      *e);
	}
	VQ(q, v);
	return store_vfail(c, "%s is not one of %s", q, o ? list : "(nothing)");
}

/* Checks every member of obj, then the required ones: each error is
 * recorded and the walk goes on, so that one answer lists them all. */
static int vobject(struct vctx *c, const struct vfield *f, const json_t *obj, const json_t *old)
{
	const char *key;
	const json_t *val;
	size_t set = 0;
	int r = 0;
	json_object_foreach((json_t *)obj, key, val)
	{
		const struct vfield *k = f->fields;
		while (k && k->name && strcmp(k->name, key) != 0)
			k++;
		if (!json_is_null(val))
			set++;
		size_t m = vpush(c, key);
		if (!k || !k->name) {
			if (!(f->flags & F_OPEN))
				r = store_vfail(c, "unknown field");
		} else if (vcheck(c, k, val, json_object_get(old, key)) < 0) {
			r = -EINVAL;
		}
		vpop(c, m);
	}
	for (const struct vfield *k = f->fields; k && k->name; k++) {
		const json_t *x = json_object_get(obj, k->name);
		if ((k->flags & F_REQUIRED) && (!x || json_is_null(x))) {
			size_t m = vpush(c, k->name);
			r = store_vfail(c, "required");
			vpop(c, m);
		}
	}
	if ((f->flags & F_ONEOF) && set > 1)
		r = store_vfail(c, "at most one action may be set, found %zu", set);
	return r;
}

static bool vtype_ok(const struct vfield *f, const json_t *v)
{
	switch (f->type) {
	case V_STRING: return json_is_string(v);
	case V_INT: return json_is_integer(v);
	case V_BOOL: return json_is_boolean(v);
	case V_ARRAY: return json_is_array(v);
	case V_OBJECT:
	case V_MAP: return json_is_object(v);
	case V_INT_OR_STRING: return json_is_integer(v) || json_is_string(v);
	case V_ANY:
	default: return true;
	}
}

/* Checks v against f: at most one error for v itself (type, emptiness,
 * enum or check), and all the errors beneath it. old is v's counterpart
 * in the object as stored (NULL: none): the very same tree (a member a
 * status write shares with the stored object) was checked when it was
 * written, and is not walked again. */
static int vcheck(struct vctx *c, const struct vfield *f, const json_t *v, const json_t *old)
{
	int r = 0;
	if (json_is_null(v) || v == old)
		return 0; /* pruned, as the API server does; or checked already */
	if (!vtype_ok(f, v)) {
		static const char *const want[] = {
			[V_STRING] = "a string",
			[V_INT] = "an integer",
			[V_BOOL] = "a boolean",
			[V_ARRAY] = "an array",
			[V_OBJECT] = "an object",
			[V_MAP] = "an object",
			[V_INT_OR_STRING] = "an integer or a string",
		};
		return store_vfail(c, "must be %s, not %s", want[f->type], vtype_name(v));
	}
	if (f->type == V_STRING) {
		if ((f->flags & F_NONEMPTY) && json_string_length(v) == 0)
			return store_vfail(c, "must not be empty");
		if (f->enums && venum(c, f, v) < 0)
			return -EINVAL;
	} else if (f->type == V_ARRAY) {
		if ((f->flags & F_NONEMPTY) && json_array_size(v) == 0)
			return store_vfail(c, "must have at least one item");
		for (size_t i = 0; i < json_array_size(v); i++) {
			size_t m = vpush_index(c, i);
			if (vcheck(c, f->items, json_array_get(v, i), json_array_get(old, i)) < 0)
				r = -EINVAL;
			vpop(c, m);
		}
	} else if (f->type == V_MAP) {
		const char *key;
		const json_t *val;
		json_object_foreach((json_t *)v, key, val)
		{
			size_t m = vpush(c, key);
			if ((f->key_check && f->key_check(c, key) < 0) ||
			    vcheck(c, f->items, val, json_object_get(old, key)) < 0)
				r = -EINVAL;
			vpop(c, m);
		}
	} else if (f->type == V_OBJECT) {
		r = vobject(c, f, v, old);
	}
	if (f->check && f->check(c, v) < 0)
		r = -EINVAL;
	return r;
}

/* ---- defaults ---- */

/* Fills in f's defaults beneath v, where v has f's type: a member that is
 * absent or null gets its default; another null member is removed, as the
 * API server prunes the nulls of fields that are not nullable. The
 * recursion follows the tables, so it is as deep as they are. */
static void vdefault(const struct vfield *f, json_t *v)
{
	const char *key;
	json_t *val;
	void *tmp;
	size_t i;

	if (f->type == V_OBJECT && json_is_object(v)) {
		for (const struct vfield *k = f->fields; k && k->name; k++) {
			json_t *x = json_object_get(v, k->name);
			if ((!x || json_is_null(x)) && k->def)
				json_object_set_new(v, k->name,
						    json_loads(k->def, JSON_DECODE_ANY, NULL));
			else if (x && json_is_null(x))
				json_object_del(v, k->name);
			else if (x)
				vdefault(k, x);
		}
	} else if (f->type == V_ARRAY && json_is_array(v) && f->items) {
		json_array_foreach(v, i, val)
		{
			vdefault(f->items, val);
		}
	} else if (f->type == V_MAP && json_is_object(v) && f->items) {
		json_object_foreach_safe(v, tmp, key, val)
		{
			if (json_is_null(val))
				json_object_del(v, key);
			else
				vdefault(f->items, val);
		}
	}
}

/* RFC 4648 §4 base64 with padding of s (n bytes), a new NUL-terminated
 * string; NULL on ENOMEM. */
static char *base64_encode(const char *s, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = (const unsigned char *)s;
	char *out = malloc(n / 3 * 4 + 5), *o = out;
	size_t i = 0;
	if (!out)
		return NULL;
	for (; i + 3 <= n; i += 3) {
		uint32_t w = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8 | u[i + 2];
		*o++ = tab[w >> 18];
		*o++ = tab[(w >> 12) & 63];
		*o++ = tab[(w >> 6) & 63];
		*o++ = tab[w & 63];
	}
	if (i < n) {
		uint32_t w = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0);
		*o++ = tab[w >> 18];
		*o++ = tab[(w >> 12) & 63];
		*o++ = i + 1 < n ? tab[(w >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* A Secret's stringData, stored as the API server stores it: each value
 * base64-encoded into data, a stringData key winning over the same key of
 * data, and stringData removed (it is write-only: a read never shows it).
 * Done only when stringData is well-formed (an object of valid keys and
 * string values, and data an object or absent); otherwise both are left
 * for store_validate() to name what is wrong. The new data is built whole
 * before it replaces the old, so an allocation failure changes nothing. */
static void secret_string_data(json_t *obj)
{
	json_t *sd = json_object_get(obj, "stringData"), *data = json_object_get(obj, "data");
	json_t *val, *merged = NULL;
	const char *key;
	if (!json_is_object(sd) || (data && !json_is_object(data)))
		return;
	json_object_foreach (sd, key, val) {
		struct vctx quiet = { .err = NULL };
		if (!json_is_string(val) || store_check_config_key(&quiet, key) < 0)
			return;
	}
	merged = data ? json_copy(data) : json_object();
	if (!merged)
		return;
	json_object_foreach (sd, key, val) {
		char *b = base64_encode(json_string_value(val), json_string_length(val));
		if (!b || json_object_set_new(merged, key, json_string(b)) < 0) {
			free(b);
			json_decref(merged);
			return;
		}
		free(b);
	}
	if (json_object_set_new(obj, "data", merged) == 0)
		json_object_del(obj, "stringData");
}

/* ---- entry points ---- */

void store_default(enum store_kind k, json_t *obj)
{
	if ((unsigned)k >= STORE_KIND_MAX || !json_is_object(obj))
		return;
	const struct vfield top = { .type = V_OBJECT, .fields = store_crd_top[k] };
	vdefault(&top, obj);
	if (k == STORE_KIND_SECRET)
		secret_string_data(obj);
}

int store_validate(enum store_kind k, const json_t *obj, char *err, size_t errlen)
{
	struct vctx c = { .err = err, .errlen = errlen };
	const struct store_kind_info *ki = store_kind_info(k);
	if (!ki) {
		if (err && errlen)
			snprintf(err, errlen, "object: unknown kind");
		return -EINVAL;
	}
	if (!json_is_object(obj))
		return store_vfail(&c, "must be an object, not %s",
				   obj ? vtype_name(obj) : "nothing");

	/* The identity first, alone: nothing else means anything if it is wrong. */
	const json_t *av = json_object_get(obj, "apiVersion");
	const json_t *kd = json_object_get(obj, "kind");
	size_t m = vpush(&c, "apiVersion");
	if (!json_is_string(av))
		return store_vfail(&c, av ? "must be a string" : "required");
	if (strcmp(json_string_value(av), ki->api_version) != 0) {
		VQ(q, av);
		return store_vfail(&c, "%s is wrong for kind %s (want \"%s\")", q, ki->kind,
				   ki->api_version);
	}
	vpop(&c, m);
	m = vpush(&c, "kind");
	if (!json_is_string(kd))
		return store_vfail(&c, kd ? "must be a string" : "required");
	if (strcmp(json_string_value(kd), ki->kind) != 0) {
		VQ(q, kd);
		return store_vfail(&c, "%s is not %s", q, ki->kind);
	}
	vpop(&c, m);

	const struct vfield top = { .type = V_OBJECT, .fields = store_crd_top[k] };
	return vfinish(&c, vcheck(&c, &top, obj, NULL));
}

int store_validate_status(enum store_kind k, const json_t *status, char *err, size_t errlen)
{
	return store_validate_status_since(k, status, NULL, err, errlen);
}

int store_validate_status_since(enum store_kind k, const json_t *status, const json_t *old,
				char *err, size_t errlen)
{
	struct vctx c = { .err = err, .errlen = errlen };
	if ((unsigned)k >= STORE_KIND_MAX) {
		if (err && errlen)
			snprintf(err, errlen, "status: unknown kind");
		return -EINVAL;
	}
	vpush(&c, "status");
	if (k == STORE_KIND_SECRET)
		return store_vfail(&c, "a Secret has no status");
	for (const struct vfield *f = store_crd_top[k]; f->name; f++)
		if (strcmp(f->name, "status") == 0) {
			if (!status)
				return store_vfail(&c, "required");
			return vfinish(&c, vcheck(&c, f, status, old));
		}
	return store_vfail(&c, "unknown field");
}
