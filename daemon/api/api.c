/* api — the pure half of the admin API: request path -> route, query string
 * -> options, errno -> HTTP status, Content-Type -> body format.
 *
 * DESIGN: everything here is a function of its arguments (plus the static
 * kind table of store/store.h), so that tests/unit/check_api.c and the
 * fuzz target tests/fuzz/fuzz_api_route.c drive it without sockets. The
 * listener shell (daemon/http/http.c) gives it the raw path and the raw query
 * pairs: libmicrohttpd is told not to unescape anything, so the decisions
 * about percent-encoding are all made here, once:
 *   - a path is never decoded: '%' anywhere in it is malformed. Object names
 *     are DNS subdomains, which never need escaping, and an escaped '/'
 *     ("%2F") or ".." can then never change which object a path names.
 *   - query keys and values are decoded (%XX and '+'), %00 is refused.
 * Every component is bounded by a named limit before it is copied. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/num.h"
#include "daemon/api/api.h"

#define API_MAX_SEGMENTS 8

struct seg {
	const char *p;
	size_t len;
};

static bool seg_is(const struct seg *s, const char *lit)
{
	size_t n = strlen(lit);
	return s->len == n && memcmp(s->p, lit, n) == 0;
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* RFC 1123 label as Kubernetes checks it: [a-z0-9]([-a-z0-9]*[a-z0-9])?,
 * at most max bytes. */
static bool dns_label_ok(const char *p, size_t len, size_t max)
{
	if (len == 0 || len > max)
		return false;
	if (!is_lower_alnum(p[0]) || !is_lower_alnum(p[len - 1]))
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (!is_lower_alnum(p[i]) && p[i] != '-')
			return false;
	return true;
}

/* DNS-1123 subdomain: labels of dns_label_ok joined by '.', at most 253
 * bytes in all. Rejects "..", a leading or trailing '.'. */
static bool dns_subdomain_ok(const char *p, size_t len)
{
	if (len == 0 || len > API_MAX_NAME)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || p[i] == '.') {
			if (!dns_label_ok(p + start, i - start, 63))
				return false;
			start = i + 1;
		}
	}
	return true;
}

/* Finds the kind served at group/version with this plural. */
static int kind_by_plural(const struct seg *group, const struct seg *version,
			  const struct seg *plural, enum store_kind *ret)
{
	for (int k = 0; k < STORE_KIND_MAX; k++) {
		const struct store_kind_info *ki = store_kind_info((enum store_kind)k);
		if (seg_is(group, ki->group) && seg_is(version, ki->version) &&
		    seg_is(plural, ki->plural)) {
			*ret = (enum store_kind)k;
			return 0;
		}
	}
	return -ENOENT;
}

static bool group_version_known(const struct seg *group, const struct seg *version)
{
	for (int k = 0; k < STORE_KIND_MAX; k++) {
		const struct store_kind_info *ki = store_kind_info((enum store_kind)k);
		if (seg_is(group, ki->group) && seg_is(version, ki->version))
			return true;
	}
	return false;
}

/* Splits the path into its segments. Empty segments (a doubled or
 * trailing '/') are malformed. */
static int split_path(const char *path, size_t len, struct seg *segs, size_t *ret_n)
{
	if (len == 0 || len > API_MAX_PATH || path[0] != '/')
		return -EINVAL;
	size_t n = 0;
	size_t i = 1;
	while (i <= len) {
		size_t start = i;
		while (i < len && path[i] != '/')
			i++;
		if (i == start)
			return -EINVAL;
		if (n == API_MAX_SEGMENTS)
			return -ENOENT;
		segs[n++] = (struct seg){ path + start, i - start };
		i++; /* past the '/' (or past the end) */
	}
	*ret_n = n;
	return 0;
}

static int resource_route(const struct seg *group, const struct seg *version,
			  const struct seg *rest, size_t nrest, struct api_route *r)
{
	const struct seg *plural;
	if (!group_version_known(group, version))
		return -ENOENT;
	if (nrest == 1) {
		r->type = API_ROUTE_LIST_ALL;
		plural = &rest[0];
	} else if (nrest >= 3 && nrest <= 5 && seg_is(&rest[0], "namespaces")) {
		if (!dns_label_ok(rest[1].p, rest[1].len, API_MAX_NAMESPACE))
			return -EINVAL;
		memcpy(r->ns, rest[1].p, rest[1].len);
		r->ns[rest[1].len] = '\0';
		plural = &rest[2];
		r->type = API_ROUTE_LIST_NS;
		if (nrest >= 4) {
			if (!dns_subdomain_ok(rest[3].p, rest[3].len))
				return -EINVAL;
			memcpy(r->name, rest[3].p, rest[3].len);
			r->name[rest[3].len] = '\0';
			r->type = API_ROUTE_OBJECT;
		}
		if (nrest == 5) {
			if (!seg_is(&rest[4], "status"))
				return -ENOENT;
			r->type = API_ROUTE_STATUS;
			r->status = true;
		}
	} else {
		return -ENOENT;
	}
	int e = kind_by_plural(group, version, plural, &r->kind);
	if (e < 0)
		return e;
	const struct store_kind_info *ki = store_kind_info(r->kind);
	r->group = ki->group;
	r->version = ki->version;
	return 0;
}

int api_route_parse(const char *path, size_t len, struct api_route *ret)
{
	struct seg segs[API_MAX_SEGMENTS];
	size_t n;
	struct api_route r = { .kind = STORE_KIND_MAX };

	if (!path || memchr(path, '\0', len) || memchr(path, '%', len))
		return -EINVAL;
	int e = split_path(path, len, segs, &n);
	if (e < 0)
		return e;
	for (size_t i = 0; i < n; i++)
		if (seg_is(&segs[i], ".") || seg_is(&segs[i], ".."))
			return -EINVAL;

	if (n == 1) {
		static const struct {
			const char *lit;
			enum api_route_type type;
		} specials[] = {
			{ "version", API_ROUTE_VERSION },
			{ "healthz", API_ROUTE_HEALTHZ },
			{ "readyz", API_ROUTE_READYZ },
			{ "metrics", API_ROUTE_METRICS },
		};
		for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
			if (seg_is(&segs[0], specials[i].lit)) {
				r.type = specials[i].type;
				goto found;
			}
		return -ENOENT;
	}
	if (seg_is(&segs[0], "api") && n >= 3) {
		static const struct seg core = { "", 0 };
		e = resource_route(&core, &segs[1], segs + 2, n - 2, &r);
		if (e < 0)
			return e;
		goto found;
	}
	if (seg_is(&segs[0], "apis") && n >= 4) {
		if (seg_is(&segs[1], "ironbell.dev") && seg_is(&segs[2], "v1")) {
			if (n != 4)
				return -ENOENT;
			if (seg_is(&segs[3], "apply"))
				r.type = API_ROUTE_APPLY;
			else if (seg_is(&segs[3], "events"))
				r.type = API_ROUTE_EVENTS;
			else if (seg_is(&segs[3], "leases"))
				r.type = API_ROUTE_LEASES;
			else
				return -ENOENT;
			goto found;
		}
		if (segs[1].len == 0) /* the core group is only under /api */
			return -ENOENT;
		e = resource_route(&segs[1], &segs[2], segs + 3, n - 3, &r);
		if (e < 0)
			return e;
		goto found;
	}
	return -ENOENT;
found:
	*ret = r;
	return 0;
}

const char *api_route_template(const struct api_route *r)
{
	if (!r)
		return "other";
	bool core = r->group && r->group[0] == '\0';
	switch (r->type) {
	case API_ROUTE_LIST_ALL:
		return core ? "/api/{version}/{plural}" : "/apis/{group}/{version}/{plural}";
	case API_ROUTE_LIST_NS:
		return core ? "/api/{version}/namespaces/{ns}/{plural}" :
			      "/apis/{group}/{version}/namespaces/{ns}/{plural}";
	case API_ROUTE_OBJECT:
		return core ? "/api/{version}/namespaces/{ns}/{plural}/{name}" :
			      "/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}";
	case API_ROUTE_STATUS:
		return core ? "/api/{version}/namespaces/{ns}/{plural}/{name}/status" :
			      "/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}/status";
	case API_ROUTE_APPLY: return "/apis/ironbell.dev/v1/apply";
	case API_ROUTE_EVENTS: return "/apis/ironbell.dev/v1/events";
	case API_ROUTE_LEASES: return "/apis/ironbell.dev/v1/leases";
	case API_ROUTE_VERSION: return "/version";
	case API_ROUTE_HEALTHZ: return "/healthz";
	case API_ROUTE_READYZ: return "/readyz";
	case API_ROUTE_METRICS: return "/metrics";
	case API_ROUTE_MAX: break;
	}
	return "other";
}

unsigned api_route_methods(const struct api_route *r)
{
	const unsigned get = API_METHOD_BIT(API_METHOD_GET) | API_METHOD_BIT(API_METHOD_HEAD);
	switch (r->type) {
	case API_ROUTE_LIST_ALL: return get;
	case API_ROUTE_LIST_NS: return get | API_METHOD_BIT(API_METHOD_POST);
	case API_ROUTE_OBJECT:
		return get | API_METHOD_BIT(API_METHOD_PUT) | API_METHOD_BIT(API_METHOD_PATCH) |
		       API_METHOD_BIT(API_METHOD_DELETE);
	case API_ROUTE_STATUS:
		return get | API_METHOD_BIT(API_METHOD_PUT) | API_METHOD_BIT(API_METHOD_PATCH);
	case API_ROUTE_APPLY: return API_METHOD_BIT(API_METHOD_POST);
	case API_ROUTE_EVENTS:
	case API_ROUTE_LEASES:
	case API_ROUTE_VERSION:
	case API_ROUTE_HEALTHZ:
	case API_ROUTE_READYZ:
	case API_ROUTE_METRICS: return get;
	case API_ROUTE_MAX: break;
	}
	return 0;
}

static const char *const method_names[API_METHOD_OTHER] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
};

const char *api_method_name(enum api_method m)
{
	return (unsigned)m < API_METHOD_OTHER ? method_names[m] : "OTHER";
}

enum api_method api_method_parse(const char *method)
{
	const char *const *names = method_names;
	for (int i = 0; method && i < API_METHOD_OTHER; i++)
		if (strcmp(method, names[i]) == 0)
			return (enum api_method)i;
	return API_METHOD_OTHER;
}

/* ---- query strings ---- */

int api_pct_decode(const char *s, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	if (outlen == 0)
		return -E2BIG;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '%') {
			if (len - i < 3)
				return -EINVAL;
			int hi = num_hex_digit(s[i + 1]), lo = num_hex_digit(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -EINVAL;
			c = (char)(hi << 4 | lo);
			i += 2;
		} else if (c == '+') {
			c = ' ';
		} else if (c == '\0') {
			return -EINVAL;
		}
		if (o + 1 >= outlen)
			return -E2BIG;
		out[o++] = c;
	}
	out[o] = '\0';
	return (int)o;
}

void api_query_init(struct api_query *q)
{
	*q = (struct api_query){ .limit = API_EVENTS_LIMIT_DEFAULT };
}

static int decode_into(const char *key, const char *v, size_t vlen, char *out, size_t outlen,
		       char *err, size_t errlen)
{
	int n = api_pct_decode(v, vlen, out, outlen);
	if (n == -E2BIG)
		snprintf(err, errlen, "query parameter %s is too long (at most %zu bytes)", key,
			 outlen - 1);
	else if (n < 0)
		snprintf(err, errlen, "query parameter %s has a bad %%-escape", key);
	return n < 0 ? -EINVAL : n;
}

static int decode_number(const char *key, const char *v, size_t vlen, uint64_t *ret, char *err,
			 size_t errlen)
{
	char tmp[32];
	int n = decode_into(key, v, vlen, tmp, sizeof(tmp), err, errlen);
	if (n < 0)
		return n;
	if (num_parse_u64(tmp, (size_t)n, UINT64_MAX >> 1, ret) < 0) {
		snprintf(err, errlen, "query parameter %s must be a non-negative integer", key);
		return -EINVAL;
	}
	return 0;
}

static int query_set_n(struct api_query *q, const char *k, size_t klen, const char *v, size_t vlen,
		       bool have_value, char *err, size_t errlen)
{
	char key[API_MAX_QUERY_KEY + 1];
	char tmp[16];
	uint64_t u;
	int n = 0;

	if (api_pct_decode(k, klen, key, sizeof(key)) < 0)
		return 0; /* not a key we know: ignored */
	if (strcmp(key, "watch") == 0) {
		if (!have_value) {
			q->watch = true;
			return 0;
		}
		n = decode_into(key, v, vlen, tmp, sizeof(tmp), err, errlen);
		if (n < 0)
			return n;
		if (strcmp(tmp, "1") == 0 || strcmp(tmp, "true") == 0) {
			q->watch = true;
		} else if (strcmp(tmp, "0") == 0 || strcmp(tmp, "false") == 0 || n == 0) {
			q->watch = false;
		} else {
			snprintf(err, errlen, "query parameter watch must be true, false, 1 or 0");
			return -EINVAL;
		}
	} else if (strcmp(key, "resourceVersion") == 0) {
		if (vlen == 0) {
			q->have_rv = false;
			return 0;
		}
		if (decode_number(key, v, vlen, &u, err, errlen) < 0)
			return -EINVAL;
		q->have_rv = true;
		q->resource_version = u;
	} else if (strcmp(key, "labelSelector") == 0) {
		n = decode_into(key, v, vlen, q->label_selector, sizeof(q->label_selector), err,
				errlen);
		if (n < 0)
			return n;
		q->have_selector = n > 0;
	} else if (strcmp(key, "kind") == 0) {
		n = decode_into(key, v, vlen, q->kind, sizeof(q->kind), err, errlen);
	} else if (strcmp(key, "namespace") == 0) {
		n = decode_into(key, v, vlen, q->namespace_, sizeof(q->namespace_), err, errlen);
	} else if (strcmp(key, "name") == 0) {
		n = decode_into(key, v, vlen, q->name, sizeof(q->name), err, errlen);
	} else if (strcmp(key, "after") == 0) {
		if (vlen == 0) {
			q->after = 0;
			return 0;
		}
		if (decode_number(key, v, vlen, &q->after, err, errlen) < 0)
			return -EINVAL;
		n = 0;
	} else if (strcmp(key, "limit") == 0) {
		if (vlen == 0) {
			q->limit = API_EVENTS_LIMIT_DEFAULT;
			return 0;
		}
		if (decode_number(key, v, vlen, &u, err, errlen) < 0)
			return -EINVAL;
		q->limit = u == 0 ? API_EVENTS_LIMIT_DEFAULT :
				    (u > API_EVENTS_LIMIT_MAX ? API_EVENTS_LIMIT_MAX : u);
		n = 0;
	} else {
		return 0;
	}
	return n < 0 ? n : 0;
}

int api_query_set(struct api_query *q, const char *key, const char *value, char *err, size_t errlen)
{
	if (!key)
		return 0;
	return query_set_n(q, key, strlen(key), value ? value : "", value ? strlen(value) : 0,
			   value != NULL, err, errlen);
}

int api_query_parse(struct api_query *q, const char *s, size_t len, char *err, size_t errlen)
{
	size_t i = 0;
	while (i < len) {
		size_t start = i;
		while (i < len && s[i] != '&')
			i++;
		const char *part = s + start;
		size_t plen = i - start;
		i++;
		if (plen == 0)
			continue;
		const char *eq = memchr(part, '=', plen);
		int e;
		if (eq)
			e = query_set_n(q, part, (size_t)(eq - part), eq + 1,
					plen - (size_t)(eq - part) - 1, true, err, errlen);
		else
			e = query_set_n(q, part, plen, "", 0, false, err, errlen);
		if (e < 0)
			return e;
	}
	return 0;
}

/* ---- statuses ---- */

void api_errno_status(int err, int *ret_code, const char **ret_reason)
{
	int code = 500;
	const char *reason = "InternalError";
	switch (err) {
	case -ENOENT: code = 404, reason = "NotFound"; break;
	case -EEXIST: code = 409, reason = "AlreadyExists"; break;
	case -ESTALE:
	case -EADDRINUSE: code = 409, reason = "Conflict"; break;
	case -EINVAL: code = 422, reason = "Invalid"; break;
	case -EPERM: code = 403, reason = "Forbidden"; break;
	case -ETIME: code = 410, reason = "Expired"; break;
	case -E2BIG: code = 413, reason = "RequestEntityTooLarge"; break;
	default: break;
	}
	*ret_code = code;
	*ret_reason = reason;
}

const char *api_code_reason(int code)
{
	switch (code) {
	case 400: return "BadRequest";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "NotFound";
	case 405: return "MethodNotAllowed";
	case 409: return "Conflict";
	case 410: return "Expired";
	case 413: return "RequestEntityTooLarge";
	case 415: return "UnsupportedMediaType";
	case 422: return "Invalid";
	case 503: return "ServiceUnavailable";
	default: return "InternalError";
	}
}

int api_status_render(struct buf *out, int code, const char *reason, const char *message,
		      const char *field)
{
	int e = 0;
	e |= buf_puts(out, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
			   "\"status\":\"Failure\",\"message\":");
	e |= buf_put_json_string(out, message, strlen(message));
	e |= buf_puts(out, ",\"reason\":");
	e |= buf_put_json_string(out, reason, strlen(reason));
	if (field) {
		e |= buf_puts(out, ",\"details\":{\"causes\":[{\"field\":");
		e |= buf_put_json_string(out, field, strlen(field));
		e |= buf_puts(out, "}]}");
	}
	e |= buf_printf(out, ",\"code\":%d}", code);
	return e < 0 ? -ENOMEM : 0;
}

/* ---- bodies, tokens, addresses ---- */

enum api_content_type api_content_type_parse(const char *ct)
{
	static const struct {
		const char *name;
		enum api_content_type type;
	} types[] = {
		{ "application/json", API_CT_JSON },
		{ "application/yaml", API_CT_YAML },
		{ "application/x-yaml", API_CT_YAML },
		{ "text/yaml", API_CT_YAML },
		{ "text/x-yaml", API_CT_YAML },
		{ "application/merge-patch+json", API_CT_MERGE_PATCH },
		{ "application/strategic-merge-patch+json", API_CT_STRATEGIC },
		{ "application/json-patch+json", API_CT_JSON_PATCH },
	};
	if (!ct)
		return API_CT_NONE;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	size_t n = strcspn(ct, ";");
	while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
		n--;
	if (n == 0)
		return API_CT_NONE;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == n && strncasecmp(ct, types[i].name, n) == 0)
			return types[i].type;
	return API_CT_OTHER;
}

bool api_token_equal(const char *given, size_t given_len, const char *want, size_t want_len)
{
	volatile unsigned char d = given_len != want_len;
	for (size_t i = 0; i < want_len; i++) {
		unsigned char g = i < given_len ? (unsigned char)given[i] : 0;
		d |= g ^ (unsigned char)want[i];
	}
	return d == 0 && want_len > 0;
}

