/* validate — checks objects against the Tinkerbell v1alpha1 schemas (and
 * core v1 Secret) before the store accepts them.
 *
 * DESIGN: the schemas are data, not code. Each kind is a tree of static
 * `struct vfield` tables (name, JSON type, flags, children, allowed values,
 * an optional check function) transcribed from the CRDs' openAPIV3Schema,
 * and one walker applies any of them. The walker keeps the field path of
 * where it is ("spec.interfaces[0].dhcp.mac") so every message starts with
 * it, as the API server's do.
 *
 * Where we differ from Kubernetes, on purpose:
 *  - Unknown fields in spec are refused with a message. The API server with
 *    a structural schema prunes them silently, which turns a typo (`macc`)
 *    into a machine that never boots. Free-form places stay free-form: the
 *    maps (hardwareMap, references, resources, environment, labels,
 *    annotations, Secret data) and the whole Equinix-legacy spec.metadata
 *    blob, whose listed fields are type-checked but whose unknown keys are
 *    tolerated. Status and metadata tolerate unknown keys too: they are
 *    written by controllers of many versions (tink <= v0.12 used another
 *    status shape under the same v1alpha1).
 *  - A few rules the CRD leaves to the controllers are checked here:
 *    IP addresses, netmasks, enums of boot devices and media kinds, a
 *    port range, and that a Machine names its credentials Secret.
 *  - null counts as absent, as the API server prunes nulls of fields that
 *    are not nullable; YAML writes `userData:` as null.
 * Where the CRD is more demanding than useful (Machine insecureTLS is
 * `required`), we accept the object: defaults apply. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"

#define VALIDATE_MAX_PATH 256           /* longest field path kept for messages */
#define VALIDATE_QUOTE_MAX 64           /* bytes of a value shown in a message */
#define VALIDATE_MAX_ANNOTATIONS 262144 /* Kubernetes' total annotation size */
#define VALIDATE_DNS_SUBDOMAIN_MAX 253
#define VALIDATE_DNS_LABEL_MAX 63

/* ---- the schema language ---- */

enum vtype {
	V_ANY,
	V_STRING,
	V_INT,
	V_BOOL,
	V_ARRAY,         /* items: the element */
	V_OBJECT,        /* fields: the known fields, ending with { NULL } */
	V_MAP,           /* object with arbitrary keys; items: every value */
	V_INT_OR_STRING, /* Kubernetes IntOrString (a resource Quantity) */
};

#define F_REQUIRED 0x01 /* must be present and not null */
#define F_OPEN 0x02     /* object: unknown keys are tolerated */
#define F_NONEMPTY 0x04 /* string: not ""; array: at least one item */
#define F_NOCASE 0x08   /* enum: compared ignoring case */
#define F_ONEOF 0x10    /* object: at most one property set (bmc Action) */

struct vctx;

struct vfield {
	const char *name;
	enum vtype type;
	unsigned flags;
	const struct vfield *fields; /* V_OBJECT */
	const struct vfield *items;  /* V_ARRAY, V_MAP */
	const char *const *enums;    /* V_STRING: allowed values, NULL-terminated */
	int (*check)(struct vctx *c, const json_t *v);     /* after the type check */
	int (*key_check)(struct vctx *c, const char *key); /* V_MAP keys */
};

struct vctx {
	char path[VALIDATE_MAX_PATH];
	size_t plen;
	char *err;
	size_t errlen;
};

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

/* Writes s as a short quoted excerpt with JSON escapes. */
static void vquote(char *out, size_t outlen, const char *s, size_t n)
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

#define VQ(name, json)                          \
	char name[VALIDATE_QUOTE_MAX * 2 + 16]; \
	vquote(name, sizeof(name), json_string_value(json), json_string_length(json))

static size_t vpush(struct vctx *c, const char *name)
{
	size_t mark = c->plen;
	if (vident(name))
		vappend(c, "%s%s", c->plen ? "." : "", name);
	else {
		char q[VALIDATE_QUOTE_MAX * 2 + 16];
		vquote(q, sizeof(q), name, strlen(name));
		vappend(c, "[%s]", q);
	}
	return mark;
}

static size_t vpush_index(struct vctx *c, size_t i)
{
	size_t mark = c->plen;
	vappend(c, "[%zu]", i);
	return mark;
}

static void vpop(struct vctx *c, size_t mark)
{
	c->plen = mark;
	c->path[mark] = '\0';
}

static int vfail(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int vfail(struct vctx *c, const char *fmt, ...)
{
	char msg[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->errlen)
		snprintf(c->err, c->errlen, "%s: %s", c->plen ? c->path : "object", msg);
	return -EINVAL;
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

/* ---- value checks ---- */

static bool is_alnum_lower(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

static bool is_alnum(char ch)
{
	return is_alnum_lower(ch) || (ch >= 'A' && ch <= 'Z');
}

/* RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static bool dns_label(const char *s, size_t n)
{
	if (n == 0 || n > VALIDATE_DNS_LABEL_MAX || !is_alnum_lower(s[0]) ||
	    !is_alnum_lower(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum_lower(s[i]) && s[i] != '-')
			return false;
	return true;
}

/* RFC 1123 subdomain: labels joined by '.', at most 253 in all. */
static bool dns_subdomain(const char *s, size_t n)
{
	if (n == 0 || n > VALIDATE_DNS_SUBDOMAIN_MAX)
		return false;
	for (size_t start = 0, i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			/* a part may be longer than 63 in a subdomain */
			if (i == start || !is_alnum_lower(s[start]) || !is_alnum_lower(s[i - 1]))
				return false;
			for (size_t k = start; k < i; k++)
				if (!is_alnum_lower(s[k]) && s[k] != '-')
					return false;
			start = i + 1;
		}
	}
	return true;
}

static int check_subdomain(struct vctx *c, const json_t *v)
{
	if (dns_subdomain(json_string_value(v), json_string_length(v)))
		return 0;
	VQ(q, v);
	return vfail(c,
		     "%s is not a valid name: lowercase letters, digits, '-' and '.', "
		     "starting and ending with a letter or digit, at most %d characters",
		     q, VALIDATE_DNS_SUBDOMAIN_MAX);
}

static int check_label(struct vctx *c, const json_t *v)
{
	if (dns_label(json_string_value(v), json_string_length(v)))
		return 0;
	VQ(q, v);
	return vfail(c,
		     "%s is not a valid namespace: lowercase letters, digits and '-', "
		     "starting and ending with a letter or digit, at most %d characters",
		     q, VALIDATE_DNS_LABEL_MAX);
}

/* Kubernetes label value / qualified-name part:
 * ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63. */
static bool qualified_part(const char *s, size_t n)
{
	if (n == 0 || n > VALIDATE_DNS_LABEL_MAX || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* [prefix/]name with a DNS subdomain prefix. */
static int check_qualified_key(struct vctx *c, const char *key)
{
	const char *slash = strchr(key, '/');
	size_t n = strlen(key);
	bool ok = slash ? dns_subdomain(key, (size_t)(slash - key)) &&
				  qualified_part(slash + 1, n - (size_t)(slash - key) - 1) :
			  qualified_part(key, n);
	if (ok)
		return 0;
	return vfail(c, "invalid key: an optional DNS subdomain prefix and '/', then at most "
			"63 letters, digits, '-', '_' or '.', starting and ending with a letter "
			"or digit");
}

static int check_label_value(struct vctx *c, const json_t *v)
{
	if (json_string_length(v) == 0 ||
	    qualified_part(json_string_value(v), json_string_length(v)))
		return 0;
	VQ(q, v);
	return vfail(c,
		     "%s is not a valid label value: at most 63 letters, digits, '-', '_' "
		     "or '.', starting and ending with a letter or digit",
		     q);
}

static int check_annotations(struct vctx *c, const json_t *v)
{
	const char *k;
	const json_t *x;
	size_t total = 0;
	json_object_foreach((json_t *)v, k, x)
	{
		total += strlen(k) + (json_is_string(x) ? json_string_length(x) : 0);
	}
	if (total > VALIDATE_MAX_ANNOTATIONS)
		return vfail(c, "annotations are %zu bytes, more than %d", total,
			     VALIDATE_MAX_ANNOTATIONS);
	return 0;
}

static bool mac_ok(const char *s, size_t n, bool lower_only)
{
	if (n != 17)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (i % 3 == 2) {
			if (ch != ':')
				return false;
		} else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
			     (!lower_only && ch >= 'A' && ch <= 'F'))) {
			return false;
		}
	}
	return true;
}

/* CRD pattern ([0-9a-f]{2}[:]){5}([0-9a-f]{2}), anchored. */
static int check_mac(struct vctx *c, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	VQ(q, v);
	if (mac_ok(s, n, true))
		return 0;
	if (mac_ok(s, n, false)) {
		char lower[18];
		for (size_t i = 0; i < n; i++)
			lower[i] = (s[i] >= 'A' && s[i] <= 'F') ? (char)(s[i] | 0x20) : s[i];
		lower[n] = '\0';
		return vfail(c, "%s must be lowercase (\"%s\")", q, lower);
	}
	return vfail(c, "%s is not a MAC address", q);
}

static bool ip_parse(const json_t *v, int *ret_family, unsigned char addr[16])
{
	const char *s = json_string_value(v);
	if (strlen(s) != json_string_length(v))
		return false; /* a NUL inside */
	if (inet_pton(AF_INET, s, addr) == 1) {
		*ret_family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*ret_family = AF_INET6;
		return true;
	}
	return false;
}

static int check_ip(struct vctx *c, const json_t *v)
{
	unsigned char a[16];
	int fam;
	if (ip_parse(v, &fam, a))
		return 0;
	VQ(q, v);
	return vfail(c, "%s is not an IP address", q);
}

/* An IP address, or "" for none (gateway: "" is common in the wild). */
static int check_ip_or_empty(struct vctx *c, const json_t *v)
{
	return json_string_length(v) == 0 ? 0 : check_ip(c, v);
}

static int check_ipv4(struct vctx *c, const json_t *v)
{
	unsigned char a[16];
	int fam;
	if (ip_parse(v, &fam, a) && fam == AF_INET)
		return 0;
	VQ(q, v);
	return vfail(c, "%s is not an IPv4 address", q);
}

/* A dotted netmask (contiguous ones), IPv4 or IPv6; "" for none. */
static int check_netmask(struct vctx *c, const json_t *v)
{
	unsigned char a[16];
	int fam;
	if (json_string_length(v) == 0)
		return 0;
	if (ip_parse(v, &fam, a)) {
		size_t n = fam == AF_INET ? 4 : 16;
		bool zero = false, ok = true;
		for (size_t i = 0; i < n * 8 && ok; i++) {
			bool bit = a[i / 8] & (0x80 >> (i % 8));
			if (bit && zero)
				ok = false;
			if (!bit)
				zero = true;
		}
		if (ok)
			return 0;
	}
	VQ(q, v);
	return vfail(c, "%s is not a netmask", q);
}

/* "a.b.c.d/n", n 0-32. */
static int check_cidr4(struct vctx *c, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	const char *slash = memchr(s, '/', n);
	char ip[16];
	unsigned char a[4];
	size_t plen = slash ? n - (size_t)(slash - s) - 1 : 0;
	bool ok = slash && (size_t)(slash - s) < sizeof(ip) && plen >= 1 && plen <= 2 &&
		  !memchr(s, '\0', n);
	if (ok) {
		memcpy(ip, s, (size_t)(slash - s));
		ip[slash - s] = '\0';
		ok = inet_pton(AF_INET, ip, a) == 1;
		unsigned p = 0;
		for (size_t i = 0; ok && i < plen; i++) {
			ok = slash[1 + i] >= '0' && slash[1 + i] <= '9';
			p = p * 10 + (unsigned)(slash[1 + i] - '0');
		}
		ok = ok && p <= 32 && !(plen == 2 && slash[1] == '0');
	}
	if (ok)
		return 0;
	VQ(q, v);
	return vfail(c, "%s is not an IPv4 destination like \"10.0.0.0/8\"", q);
}

/* "0"-"4096", or a comma-separated list of them (the CRD's pattern). */
static int check_vlan(struct vctx *c, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	bool ok = n > 0;
	for (size_t i = 0; ok && i < n;) {
		unsigned val = 0;
		size_t d = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9' && d < 5)
			val = val * 10 + (unsigned)(s[i++] - '0'), d++;
		ok = d >= 1 && d <= 4 && val <= 4096;
		if (ok && i < n)
			ok = s[i++] == ',' && i < n;
	}
	if (ok)
		return 0;
	VQ(q, v);
	return vfail(c, "%s is not a VLAN ID (0-4096, or a comma-separated list of them)", q);
}

static int check_port(struct vctx *c, const json_t *v)
{
	json_int_t p = json_integer_value(v);
	if (p >= 1 && p <= 65535)
		return 0;
	return vfail(c, "%" JSON_INTEGER_FORMAT " is not a port (1-65535)", p);
}

static int check_port_or_zero(struct vctx *c, const json_t *v)
{
	return json_integer_value(v) == 0 ? 0 : check_port(c, v);
}

/* format: uri. An absolute URI with a scheme; "" for none. */
static int check_uri(struct vctx *c, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i = 0;
	if (n == 0)
		return 0;
	while (i < n && (is_alnum(s[i]) || (i > 0 && (s[i] == '+' || s[i] == '-' || s[i] == '.'))))
		i++;
	bool ok = i > 0 && i + 1 < n && s[i] == ':' && !((s[0] >= '0' && s[0] <= '9'));
	for (size_t k = 0; ok && k < n; k++)
		ok = (unsigned char)s[k] > 0x20 && s[k] != 0x7f;
	if (ok)
		return 0;
	VQ(q, v);
	return vfail(c, "%s is not an absolute URL", q);
}

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* format: date-time (RFC 3339 §5.6). */
static int check_time(struct vctx *c, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i = 19;
	bool ok = n >= 20 && digits(s, 4) && s[4] == '-' && digits(s + 5, 2) && s[7] == '-' &&
		  digits(s + 8, 2) && (s[10] == 'T' || s[10] == 't' || s[10] == ' ') &&
		  digits(s + 11, 2) && s[13] == ':' && digits(s + 14, 2) && s[16] == ':' &&
		  digits(s + 17, 2);
	if (ok && s[i] == '.') {
		size_t start = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		ok = i > start;
	}
	if (ok && i < n && (s[i] == 'Z' || s[i] == 'z'))
		ok = i + 1 == n;
	else if (ok && i < n && (s[i] == '+' || s[i] == '-'))
		ok = n - i == 6 && digits(s + i + 1, 2) && s[i + 3] == ':' && digits(s + i + 4, 2);
	else
		ok = false;
	if (ok)
		return 0;
	VQ(q, v);
	return vfail(c, "%s is not an RFC 3339 time like \"2026-01-02T15:04:05Z\"", q);
}

/* RFC 4648 §4 base64 with padding, as Kubernetes decodes Secret data. */
static int check_base64(struct vctx *c, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), pad = 0;
	bool ok = n % 4 == 0;
	for (size_t i = 0; ok && i < n; i++) {
		if (s[i] == '=') {
			pad++;
			ok = i >= n - 2;
		} else {
			ok = pad == 0 && (is_alnum(s[i]) || s[i] == '+' || s[i] == '/');
		}
	}
	if (ok)
		return 0;
	return vfail(c, "is not base64 (RFC 4648 with padding)");
}

/* Secret data keys: [-._a-zA-Z0-9]+, not "." or "..". */
static int check_config_key(struct vctx *c, const char *key)
{
	size_t n = strlen(key);
	bool ok = n > 0 && n <= VALIDATE_DNS_SUBDOMAIN_MAX && strcmp(key, ".") != 0 &&
		  strcmp(key, "..") != 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = is_alnum(key[i]) || key[i] == '-' || key[i] == '_' || key[i] == '.';
	if (ok)
		return 0;
	return vfail(c, "invalid key: letters, digits, '-', '_' and '.' only");
}

/* A resource Quantity: an integer, or a string such as "16Gi", "500m",
 * "1e3" (^[+-]?(N(.N?)?|.N)(suffix|[eE][+-]?N)?$ with Ki..Ei, n..E). */
static int check_quantity(struct vctx *c, const json_t *v)
{
	if (json_is_integer(v))
		return 0;
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i = 0, d = 0, f = 0;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, d++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9';)
			i++, f++;
	bool ok = d > 0 || f > 0;
	const char *rest = s + i;
	size_t rn = n - i;
	if (ok && rn > 0) {
		static const char *const suffixes[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
							"n",  "u",  "m",  "k",  "M",  "G",
							"T",  "P",  "E",  NULL };
		bool found = false;
		for (size_t k = 0; suffixes[k] && !found; k++)
			found = strlen(suffixes[k]) == rn && memcmp(rest, suffixes[k], rn) == 0;
		if (!found && (rest[0] == 'e' || rest[0] == 'E')) {
			size_t k = 1;
			if (k < rn && (rest[k] == '+' || rest[k] == '-'))
				k++;
			found = k < rn && digits(rest + k, rn - k);
		}
		ok = found;
	}
	if (ok)
		return 0;
	VQ(q, v);
	return vfail(c, "%s is not a quantity like \"16Gi\" or \"500m\"", q);
}

/* spec.interfaces[].dhcp: the CRD's CEL rule. */
static int check_dhcp(struct vctx *c, const json_t *v)
{
	const json_t *t = json_object_get(v, "tftp_server_name");
	const json_t *b = json_object_get(v, "boot_file_name");
	bool has_t = json_is_string(t) && json_string_length(t) > 0;
	bool has_b = json_is_string(b) && json_string_length(b) > 0;
	if (has_t == has_b)
		return 0;
	return vfail(c, "tftp_server_name and boot_file_name must be set together");
}

/* ---- the schemas (from the v1alpha1 CRDs) ---- */

/* clang-format off */

#define END { NULL, V_ANY, 0, NULL, NULL, NULL, NULL, NULL }
#define STR(n) { .name = n, .type = V_STRING }
#define INT(n) { .name = n, .type = V_INT }
#define BOOL(n) { .name = n, .type = V_BOOL }
#define TIME(n) { .name = n, .type = V_STRING, .check = check_time }
#define OBJ(n, f) { .name = n, .type = V_OBJECT, .fields = f }
#define OPEN_OBJ(n, f) { .name = n, .type = V_OBJECT, .flags = F_OPEN, .fields = f }
#define ARR(n, it) { .name = n, .type = V_ARRAY, .items = it }
#define MAP(n, it) { .name = n, .type = V_MAP, .items = it }

static const struct vfield any_item = { .type = V_ANY };
static const struct vfield string_item = { .type = V_STRING };
static const struct vfield ip_item = { .type = V_STRING, .check = check_ip };
static const struct vfield no_fields[] = { END };

/* -- metadata (ObjectMeta) -- */
static const struct vfield owner_ref_fields[] = {
	STR("apiVersion"), STR("kind"), STR("name"), STR("uid"), BOOL("controller"),
	BOOL("blockOwnerDeletion"), END
};
static const struct vfield owner_ref_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = owner_ref_fields };
static const struct vfield label_value_item = { .type = V_STRING, .check = check_label_value };
static const struct vfield metadata_fields[] = {
	{ .name = "name", .type = V_STRING, .flags = F_REQUIRED, .check = check_subdomain },
	{ .name = "namespace", .type = V_STRING, .check = check_label },
	{ .name = "labels", .type = V_MAP, .items = &label_value_item,
	  .key_check = check_qualified_key },
	{ .name = "annotations", .type = V_MAP, .items = &string_item,
	  .check = check_annotations, .key_check = check_qualified_key },
	STR("uid"), STR("resourceVersion"), INT("generation"), STR("generateName"),
	TIME("creationTimestamp"), TIME("deletionTimestamp"), INT("deletionGracePeriodSeconds"),
	ARR("finalizers", &string_item), ARR("ownerReferences", &owner_ref_item),
	ARR("managedFields", &any_item), STR("selfLink"), END
};
#define METADATA \
	{ .name = "metadata", .type = V_OBJECT, .flags = F_OPEN | F_REQUIRED, \
	  .fields = metadata_fields }

/* -- Hardware -- */
static const struct vfield route_fields[] = {
	{ .name = "destination_descriptor", .type = V_STRING, .flags = F_REQUIRED,
	  .check = check_cidr4 },
	{ .name = "router", .type = V_STRING, .flags = F_REQUIRED, .check = check_ipv4 },
	END
};
static const struct vfield route_item = { .type = V_OBJECT, .fields = route_fields };
static const struct vfield dhcp_ip_fields[] = {
	{ .name = "address", .type = V_STRING, .check = check_ip },
	{ .name = "netmask", .type = V_STRING, .check = check_netmask },
	{ .name = "gateway", .type = V_STRING, .check = check_ip_or_empty },
	INT("family"), END
};
static const struct vfield dhcp_fields[] = {
	{ .name = "mac", .type = V_STRING, .check = check_mac },
	STR("hostname"), STR("domain_name"), INT("lease_time"),
	ARR("name_servers", &ip_item), ARR("time_servers", &ip_item),
	STR("arch"), BOOL("uefi"), STR("iface_name"), OBJ("ip", dhcp_ip_fields),
	{ .name = "vlan_id", .type = V_STRING, .check = check_vlan },
	ARR("classless_static_routes", &route_item),
	STR("tftp_server_name"), STR("boot_file_name"), END
};
static const struct vfield ipxe_fields[] = { STR("url"), STR("contents"), STR("binary"), END };
static const struct vfield osie_fields[] = {
	STR("baseURL"), STR("kernel"), STR("initrd"), ARR("kernelParams", &string_item), END
};
static const struct vfield pxelinux_fields[] = { STR("config"), END };
static const struct vfield rpi_fields[] = {
	{ .name = "serialNum", .type = V_STRING, .flags = F_REQUIRED },
	STR("firmwarePath"), STR("configTxt"), END
};
static const struct vfield netboot_fields[] = {
	BOOL("allowPXE"), BOOL("allowWorkflow"), OBJ("ipxe", ipxe_fields),
	OBJ("osie", osie_fields), OBJ("pxelinux", pxelinux_fields), OBJ("rpi", rpi_fields), END
};
static const struct vfield isoboot_fields[] = {
	{ .name = "sourceISO", .type = V_STRING, .check = check_uri }, END
};
static const struct vfield interface_fields[] = {
	{ .name = "dhcp", .type = V_OBJECT, .fields = dhcp_fields, .check = check_dhcp },
	OBJ("netboot", netboot_fields), OBJ("isoboot", isoboot_fields), BOOL("disableDhcp"), END
};
static const struct vfield interface_item = { .type = V_OBJECT, .fields = interface_fields };
static const struct vfield disk_fields[] = { STR("device"), END };
static const struct vfield disk_item = { .type = V_OBJECT, .fields = disk_fields };
static const struct vfield bmc_ref_fields[] = {
	STR("apiGroup"), { .name = "kind", .type = V_STRING, .flags = F_REQUIRED },
	{ .name = "name", .type = V_STRING, .flags = F_REQUIRED, .check = check_subdomain }, END
};
static const struct vfield reference_fields[] = {
	STR("namespace"), STR("name"), STR("group"), STR("version"), STR("resource"), END
};
static const struct vfield reference_item = { .type = V_OBJECT, .fields = reference_fields };
static const struct vfield quantity_item = { .type = V_INT_OR_STRING, .check = check_quantity };
static const struct vfield auto_fields[] = { BOOL("enrollmentEnabled"), END };

/* spec.metadata: types of the listed fields; unknown keys tolerated. */
static const struct vfield os_fields[] = {
	STR("slug"), STR("distro"), STR("version"), STR("image_tag"), STR("os_slug"), END
};
static const struct vfield md_ip_fields[] = {
	STR("address"), STR("netmask"), STR("gateway"), INT("family"), BOOL("public"),
	BOOL("management"), END
};
static const struct vfield md_ip_item = { .type = V_OBJECT, .flags = F_OPEN,
					  .fields = md_ip_fields };
static const struct vfield partition_fields[] = {
	STR("label"), INT("number"), INT("size"), INT("start"), STR("type_guid"), END
};
static const struct vfield partition_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = partition_fields };
static const struct vfield sdisk_fields[] = {
	STR("device"), ARR("partitions", &partition_item), BOOL("wipe_table"), END
};
static const struct vfield sdisk_item = { .type = V_OBJECT, .flags = F_OPEN,
					  .fields = sdisk_fields };
static const struct vfield raid_fields[] = {
	STR("name"), STR("level"), ARR("devices", &string_item), INT("spare"), END
};
static const struct vfield raid_item = { .type = V_OBJECT, .flags = F_OPEN, .fields = raid_fields };
static const struct vfield create_fields[] = { BOOL("force"), ARR("options", &string_item), END };
static const struct vfield file_fields[] = {
	STR("path"), STR("contents"), INT("mode"), INT("uid"), INT("gid"), END
};
static const struct vfield file_item = { .type = V_OBJECT, .flags = F_OPEN, .fields = file_fields };
static const struct vfield mount_fields[] = {
	STR("device"), STR("format"), STR("point"), OPEN_OBJ("create", create_fields),
	ARR("files", &file_item), END
};
static const struct vfield fs_fields[] = { OPEN_OBJ("mount", mount_fields), END };
static const struct vfield fs_item = { .type = V_OBJECT, .flags = F_OPEN, .fields = fs_fields };
static const struct vfield storage_fields[] = {
	ARR("disks", &sdisk_item), ARR("raid", &raid_item), ARR("filesystems", &fs_item), END
};
static const struct vfield instance_fields[] = {
	STR("id"), STR("state"), STR("hostname"), BOOL("allow_pxe"), BOOL("rescue"),
	BOOL("always_pxe"), STR("ipxe_script_url"), STR("userdata"),
	STR("crypted_root_password"), ARR("tags", &string_item), ARR("ssh_keys", &string_item),
	BOOL("network_ready"), OPEN_OBJ("operating_system", os_fields),
	ARR("ips", &md_ip_item), OPEN_OBJ("storage", storage_fields), END
};
static const struct vfield manufacturer_fields[] = { STR("id"), STR("slug"), END };
static const struct vfield custom_fields[] = {
	OPEN_OBJ("preinstalled_operating_system_version", os_fields),
	ARR("private_subnets", &string_item), END
};
static const struct vfield facility_fields[] = {
	STR("plan_slug"), STR("plan_version_slug"), STR("facility_code"), END
};
static const struct vfield hw_metadata_fields[] = {
	STR("state"), INT("bonding_mode"), OPEN_OBJ("manufacturer", manufacturer_fields),
	OPEN_OBJ("instance", instance_fields), OPEN_OBJ("custom", custom_fields),
	OPEN_OBJ("facility", facility_fields), END
};
static const struct vfield hw_spec_fields[] = {
	STR("agentID"), OBJ("auto", auto_fields), OBJ("bmcRef", bmc_ref_fields),
	ARR("interfaces", &interface_item), MAP("references", &reference_item),
	OPEN_OBJ("metadata", hw_metadata_fields), INT("tinkVersion"), ARR("disks", &disk_item),
	MAP("resources", &quantity_item), STR("userData"), STR("vendorData"), END
};
static const struct vfield hw_status_fields[] = {
	STR("state"), OPEN_OBJ("attributes", no_fields), END
};

/* -- Template -- */
static const char *const template_states[] = { "", "Ready", "Error", NULL };
static const struct vfield tpl_spec_fields[] = {
	{ .name = "data", .type = V_STRING, .flags = F_REQUIRED }, END
};
static const struct vfield tpl_status_fields[] = {
	{ .name = "state", .type = V_STRING, .enums = template_states }, END
};

/* -- bmc Action, shared by Job, Task and Workflow bootOptions -- */
static const char *const power_actions[] = { "on", "off", "soft", "status", "cycle", "reset",
					     NULL };
static const char *const boot_devices[] = { "pxe", "disk", "bios", "cdrom", "safe", NULL };
static const char *const media_kinds[] = { "CD", NULL };
static const struct vfield boot_device_item = { .type = V_STRING, .enums = boot_devices };
static const struct vfield one_time_fields[] = {
	{ .name = "device", .type = V_ARRAY, .flags = F_REQUIRED, .items = &boot_device_item },
	BOOL("efiBoot"), END
};
static const struct vfield boot_device_fields[] = {
	{ .name = "device", .type = V_STRING, .enums = boot_devices },
	BOOL("persistent"), BOOL("efiBoot"), END
};
static const struct vfield media_fields[] = {
	STR("mediaURL"),
	{ .name = "kind", .type = V_STRING, .flags = F_REQUIRED, .enums = media_kinds }, END
};
static const struct vfield action_fields[] = {
	{ .name = "powerAction", .type = V_STRING, .enums = power_actions },
	OBJ("oneTimeBootDeviceAction", one_time_fields), OBJ("bootDevice", boot_device_fields),
	OBJ("virtualMediaAction", media_fields), END
};
static const struct vfield action_item = { .type = V_OBJECT, .flags = F_ONEOF,
					   .fields = action_fields };

/* -- Workflow -- */
static const char *const boot_modes[] = { "netboot", "isoboot", "iso", "customboot", NULL };
static const char *const workflow_states[] = {
	"", "PREPARING", "PENDING", "RUNNING", "POST", "SUCCESS", "FAILED", "TIMEOUT",
	/* tinkerbell/tink <= v0.12 */
	"STATE_PENDING", "STATE_RUNNING", "STATE_FAILED", "STATE_TIMEOUT", "STATE_SUCCESS", NULL
};
static const char *const renderings[] = { "", "successful", "failed", NULL };
static const char *const condition_statuses[] = { "True", "False", "Unknown", NULL };
static const struct vfield custom_boot_fields[] = {
	ARR("preparingActions", &action_item), ARR("postActions", &action_item), END
};
static const struct vfield boot_options_fields[] = {
	BOOL("toggleAllowNetboot"), { .name = "isoURL", .type = V_STRING, .check = check_uri },
	{ .name = "bootMode", .type = V_STRING, .enums = boot_modes },
	OBJ("custombootConfig", custom_boot_fields), END
};
static const struct vfield string_map_item = { .type = V_STRING };
static const struct vfield wf_spec_fields[] = {
	{ .name = "templateRef", .type = V_STRING, .flags = F_REQUIRED, .check = check_subdomain },
	{ .name = "hardwareRef", .type = V_STRING, .flags = F_REQUIRED, .check = check_subdomain },
	MAP("hardwareMap", &string_map_item), BOOL("disabled"),
	OBJ("bootOptions", boot_options_fields), END
};
static const struct vfield allow_netboot_fields[] = { BOOL("toggledTrue"), BOOL("toggledFalse"), END };
static const struct vfield job_status_fields[] = {
	STR("uid"), BOOL("complete"), BOOL("existingJobDeleted"), END
};
static const struct vfield job_status_item = { .type = V_OBJECT, .flags = F_OPEN,
					       .fields = job_status_fields };
static const struct vfield wf_boot_status_fields[] = {
	OPEN_OBJ("allowNetboot", allow_netboot_fields), MAP("jobs", &job_status_item), END
};
static const struct vfield current_state_fields[] = {
	STR("agentID"), STR("taskID"), STR("actionID"), STR("actionName"), STR("taskName"),
	{ .name = "state", .type = V_STRING, .enums = workflow_states }, END
};
static const struct vfield condition_fields[] = {
	{ .name = "type", .type = V_STRING, .flags = F_REQUIRED },
	{ .name = "status", .type = V_STRING, .flags = F_REQUIRED, .enums = condition_statuses },
	STR("reason"), STR("message"), TIME("time"), TIME("lastUpdateTime"), END
};
static const struct vfield condition_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = condition_fields };
static const struct vfield namespaces_fields[] = { STR("network"), STR("pid"), END };
static const struct vfield wf_action_fields[] = {
	STR("id"), STR("name"), STR("image"), INT("timeout"), ARR("command", &string_item),
	ARR("volumes", &string_item), STR("pid"), OPEN_OBJ("namespaces", namespaces_fields),
	MAP("environment", &string_map_item),
	{ .name = "state", .type = V_STRING, .enums = workflow_states },
	TIME("executionStart"), TIME("executionStop"), STR("executionDuration"), STR("message"),
	END
};
static const struct vfield wf_action_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = wf_action_fields };
static const struct vfield wf_task_fields[] = {
	STR("id"), STR("name"), STR("agentID"), ARR("volumes", &string_item),
	MAP("environment", &string_map_item), ARR("actions", &wf_action_item), END
};
static const struct vfield wf_task_item = { .type = V_OBJECT, .flags = F_OPEN,
					    .fields = wf_task_fields };
static const struct vfield wf_status_fields[] = {
	STR("agentID"), { .name = "state", .type = V_STRING, .enums = workflow_states },
	OPEN_OBJ("bootOptions", wf_boot_status_fields),
	{ .name = "templateRendering", .type = V_STRING, .enums = renderings },
	INT("globalTimeout"), TIME("globalExecutionStop"),
	OPEN_OBJ("currentState", current_state_fields), ARR("conditions", &condition_item),
	ARR("tasks", &wf_task_item), END
};

/* -- bmc Machine connection (also copied into each Task) -- */
static const char *const providers[] = { "ipmitool", "asrockrack", "gofish", "IntelAMT", "dell",
					 "supermicro", "openbmc", NULL };
static const char *const host_schemes[] = { "http", "https", NULL };
static const struct vfield provider_item = { .type = V_STRING, .flags = F_NOCASE,
					     .enums = providers };
static const struct vfield secret_ref_fields[] = {
	{ .name = "name", .type = V_STRING, .flags = F_REQUIRED, .check = check_subdomain },
	{ .name = "namespace", .type = V_STRING, .check = check_label }, END
};
static const struct vfield secret_ref_item = { .type = V_OBJECT, .fields = secret_ref_fields };
static const struct vfield secret_ref_list = { .type = V_ARRAY, .items = &secret_ref_item };
static const struct vfield string_list = { .type = V_ARRAY, .items = &string_item };
#define PORT(n) { .name = n, .type = V_INT, .check = check_port_or_zero }
static const struct vfield ipmitool_fields[] = { PORT("port"), STR("cipherSuite"), END };
static const struct vfield redfish_fields[] = {
	PORT("port"), BOOL("useBasicAuth"), STR("systemName"), END
};
static const struct vfield amt_fields[] = {
	PORT("port"), { .name = "hostScheme", .type = V_STRING, .enums = host_schemes }, END
};
static const struct vfield ha_fields[] = {
	{ .name = "switchEntityID", .type = V_STRING, .flags = F_REQUIRED },
	INT("powerOperationDelaySeconds"), END
};
static const struct vfield rpc_request_fields[] = {
	STR("httpContentType"), STR("httpMethod"), MAP("staticHeaders", &string_list),
	STR("timestampFormat"), STR("timestampHeader"), END
};
static const struct vfield rpc_signature_fields[] = {
	BOOL("appendAlgoToHeaderDisabled"), STR("headerName"),
	ARR("includedPayloadHeaders", &string_item), END
};
static const struct vfield rpc_hmac_fields[] = {
	BOOL("prefixSigDisabled"), MAP("secrets", &secret_ref_list), END
};
static const struct vfield rpc_experimental_fields[] = {
	STR("customRequestPayload"), STR("dotPath"), END
};
static const struct vfield rpc_fields[] = {
	{ .name = "consumerURL", .type = V_STRING, .flags = F_REQUIRED | F_NONEMPTY },
	OBJ("request", rpc_request_fields), OBJ("signature", rpc_signature_fields),
	OBJ("hmac", rpc_hmac_fields), OBJ("experimental", rpc_experimental_fields),
	BOOL("logNotificationsDisabled"), END
};
static const struct vfield provider_options_fields[] = {
	ARR("preferredOrder", &provider_item), OBJ("ipmitool", ipmitool_fields),
	OBJ("redfish", redfish_fields), OBJ("intelAMT", amt_fields),
	OBJ("homeassistant", ha_fields), OBJ("rpc", rpc_fields), END
};
static const struct vfield connection_fields[] = {
	{ .name = "host", .type = V_STRING, .flags = F_REQUIRED | F_NONEMPTY },
	{ .name = "port", .type = V_INT, .check = check_port },
	{ .name = "authSecretRef", .type = V_OBJECT, .flags = F_REQUIRED,
	  .fields = secret_ref_fields },
	BOOL("insecureTLS"), OBJ("providerOptions", provider_options_fields), END
};
static const struct vfield machine_spec_fields[] = {
	{ .name = "connection", .type = V_OBJECT, .flags = F_REQUIRED,
	  .fields = connection_fields },
	END
};
static const char *const power_states[] = { "on", "off", "unknown", NULL };
static const struct vfield machine_status_fields[] = {
	{ .name = "powerState", .type = V_STRING, .enums = power_states },
	ARR("conditions", &condition_item), END
};

/* -- bmc Job and Task -- */
static const struct vfield machine_ref_fields[] = {
	{ .name = "name", .type = V_STRING, .flags = F_REQUIRED, .check = check_subdomain },
	{ .name = "namespace", .type = V_STRING, .flags = F_REQUIRED, .check = check_label }, END
};
static const struct vfield job_spec_fields[] = {
	{ .name = "machineRef", .type = V_OBJECT, .flags = F_REQUIRED,
	  .fields = machine_ref_fields },
	{ .name = "tasks", .type = V_ARRAY, .flags = F_REQUIRED | F_NONEMPTY,
	  .items = &action_item },
	END
};
static const struct vfield bmc_status_fields[] = {
	ARR("conditions", &condition_item), TIME("startTime"), TIME("completionTime"), END
};
static const struct vfield task_spec_fields[] = {
	{ .name = "task", .type = V_OBJECT, .flags = F_REQUIRED | F_ONEOF,
	  .fields = action_fields },
	OBJ("connection", connection_fields), END
};

/* -- Secret (core v1) -- */
static const struct vfield base64_item = { .type = V_STRING, .check = check_base64 };

/* ---- per kind ---- */

#define TOP(specf, specflags, statusf) \
	{ { .name = "apiVersion", .type = V_STRING }, { .name = "kind", .type = V_STRING }, \
	  METADATA, \
	  { .name = "spec", .type = V_OBJECT, .flags = (specflags), .fields = (specf) }, \
	  { .name = "status", .type = V_OBJECT, .flags = F_OPEN, .fields = (statusf) }, END }

static const struct vfield top_fields[STORE_KIND_MAX][8] = {
	[STORE_KIND_HARDWARE] = TOP(hw_spec_fields, 0, hw_status_fields),
	[STORE_KIND_TEMPLATE] = TOP(tpl_spec_fields, F_REQUIRED, tpl_status_fields),
	[STORE_KIND_WORKFLOW] = TOP(wf_spec_fields, F_REQUIRED, wf_status_fields),
	[STORE_KIND_MACHINE] = TOP(machine_spec_fields, F_REQUIRED, machine_status_fields),
	[STORE_KIND_JOB] = TOP(job_spec_fields, F_REQUIRED, bmc_status_fields),
	[STORE_KIND_TASK] = TOP(task_spec_fields, F_REQUIRED, bmc_status_fields),
	[STORE_KIND_SECRET] = {
		{ .name = "apiVersion", .type = V_STRING }, { .name = "kind", .type = V_STRING },
		METADATA,
		{ .name = "data", .type = V_MAP, .items = &base64_item,
		  .key_check = check_config_key },
		{ .name = "stringData", .type = V_MAP, .items = &string_item,
		  .key_check = check_config_key },
		STR("type"), BOOL("immutable"), END },
};

/* clang-format on */

/* ---- the walker ---- */

static int vcheck(struct vctx *c, const struct vfield *f, const json_t *v);

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
	return vfail(c, "%s is not one of %s", q, o ? list : "(nothing)");
}

static int vobject(struct vctx *c, const struct vfield *f, const json_t *obj)
{
	const char *key;
	const json_t *val;
	size_t set = 0;
	int r;
	json_object_foreach((json_t *)obj, key, val)
	{
		const struct vfield *k = f->fields;
		while (k && k->name && strcmp(k->name, key) != 0)
			k++;
		if (!json_is_null(val))
			set++;
		if (!k || !k->name) {
			if (f->flags & F_OPEN)
				continue;
			size_t m = vpush(c, key);
			r = vfail(c, "unknown field");
			vpop(c, m);
			return r;
		}
		size_t m = vpush(c, key);
		r = vcheck(c, k, val);
		vpop(c, m);
		if (r < 0)
			return r;
	}
	for (const struct vfield *k = f->fields; k && k->name; k++) {
		const json_t *x = json_object_get(obj, k->name);
		if ((k->flags & F_REQUIRED) && (!x || json_is_null(x))) {
			size_t m = vpush(c, k->name);
			r = vfail(c, "required");
			vpop(c, m);
			return r;
		}
	}
	if ((f->flags & F_ONEOF) && set > 1)
		return vfail(c, "at most one action may be set, found %zu", set);
	return 0;
}

static int vcheck(struct vctx *c, const struct vfield *f, const json_t *v)
{
	bool ok;
	int r;
	if (json_is_null(v))
		return 0; /* pruned, as the API server does */
	switch (f->type) {
	case V_STRING: ok = json_is_string(v); break;
	case V_INT: ok = json_is_integer(v); break;
	case V_BOOL: ok = json_is_boolean(v); break;
	case V_ARRAY: ok = json_is_array(v); break;
	case V_OBJECT:
	case V_MAP: ok = json_is_object(v); break;
	case V_INT_OR_STRING: ok = json_is_integer(v) || json_is_string(v); break;
	case V_ANY:
	default: ok = true; break;
	}
	if (!ok) {
		static const char *const want[] = {
			[V_STRING] = "a string",
			[V_INT] = "an integer",
			[V_BOOL] = "a boolean",
			[V_ARRAY] = "an array",
			[V_OBJECT] = "an object",
			[V_MAP] = "an object",
			[V_INT_OR_STRING] = "an integer or a string",
		};
		return vfail(c, "must be %s, not %s", want[f->type], vtype_name(v));
	}
	if (f->type == V_STRING) {
		if ((f->flags & F_NONEMPTY) && json_string_length(v) == 0)
			return vfail(c, "must not be empty");
		if (f->enums && (r = venum(c, f, v)) < 0)
			return r;
	} else if (f->type == V_ARRAY) {
		if ((f->flags & F_NONEMPTY) && json_array_size(v) == 0)
			return vfail(c, "must have at least one item");
		for (size_t i = 0; i < json_array_size(v); i++) {
			size_t m = vpush_index(c, i);
			r = vcheck(c, f->items, json_array_get(v, i));
			vpop(c, m);
			if (r < 0)
				return r;
		}
	} else if (f->type == V_MAP) {
		const char *key;
		const json_t *val;
		json_object_foreach((json_t *)v, key, val)
		{
			size_t m = vpush(c, key);
			r = f->key_check ? f->key_check(c, key) : 0;
			if (r == 0)
				r = vcheck(c, f->items, val);
			vpop(c, m);
			if (r < 0)
				return r;
		}
	} else if (f->type == V_OBJECT) {
		if ((r = vobject(c, f, v)) < 0)
			return r;
	}
	return f->check ? f->check(c, v) : 0;
}

/* ---- entry points ---- */

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
		return vfail(&c, "must be an object, not %s", obj ? vtype_name(obj) : "nothing");

	const json_t *av = json_object_get(obj, "apiVersion");
	const json_t *kd = json_object_get(obj, "kind");
	size_t m = vpush(&c, "apiVersion");
	if (!json_is_string(av))
		return vfail(&c, av ? "must be a string" : "required");
	if (strcmp(json_string_value(av), ki->api_version) != 0) {
		VQ(q, av);
		return vfail(&c, "%s is wrong for kind %s (want \"%s\")", q, ki->kind,
			     ki->api_version);
	}
	vpop(&c, m);
	m = vpush(&c, "kind");
	if (!json_is_string(kd))
		return vfail(&c, kd ? "must be a string" : "required");
	if (strcmp(json_string_value(kd), ki->kind) != 0) {
		VQ(q, kd);
		return vfail(&c, "%s is not %s", q, ki->kind);
	}
	vpop(&c, m);

	const struct vfield top = { .type = V_OBJECT, .fields = top_fields[k] };
	return vcheck(&c, &top, obj);
}

int store_validate_status(enum store_kind k, const json_t *status, char *err, size_t errlen)
{
	struct vctx c = { .err = err, .errlen = errlen };
	if ((unsigned)k >= STORE_KIND_MAX) {
		if (err && errlen)
			snprintf(err, errlen, "status: unknown kind");
		return -EINVAL;
	}
	vpush(&c, "status");
	if (k == STORE_KIND_SECRET)
		return vfail(&c, "a Secret has no status");
	for (const struct vfield *f = top_fields[k]; f->name; f++)
		if (strcmp(f->name, "status") == 0) {
			if (!status)
				return vfail(&c, "required");
			return vcheck(&c, f, status);
		}
	return vfail(&c, "unknown field");
}
