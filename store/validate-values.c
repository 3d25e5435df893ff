/* validate-values — the checks of single values that the CRD schemas
 * express as patterns and formats (a MAC, a VLAN list, a quantity, a
 * date-time), and the ones ironbell adds on purpose (an IP address that
 * is an IP address, a netmask, a port range); docs/strictness.md lists
 * the latter.
 *
 * DESIGN: each check is a pure function of one JSON value whose type the
 * walker (validate.c) has already checked; it returns 0, or reports one
 * message through store_vfail() and returns -EINVAL. The tables in
 * crd-tables.c say which field gets which check. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "store/validate-internal.h"

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

int store_check_subdomain(struct vctx *c, const json_t *v)
{
	if (dns_subdomain(json_string_value(v), json_string_length(v)))
		return 0;
	VQ(q, v);
	return store_vfail(c,
			   "%s is not a valid name: lowercase letters, digits, '-' and '.', "
			   "starting and ending with a letter or digit, at most %d characters",
			   q, VALIDATE_DNS_SUBDOMAIN_MAX);
}

int store_check_label(struct vctx *c, const json_t *v)
{
	if (dns_label(json_string_value(v), json_string_length(v)))
		return 0;
	VQ(q, v);
	return store_vfail(c,
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
int store_check_qualified_key(struct vctx *c, const char *key)
{
	const char *slash = strchr(key, '/');
	size_t n = strlen(key);
	bool ok = slash ? dns_subdomain(key, (size_t)(slash - key)) &&
				  qualified_part(slash + 1, n - (size_t)(slash - key) - 1) :
			  qualified_part(key, n);
	if (ok)
		return 0;
	return store_vfail(c,
			   "invalid key: an optional DNS subdomain prefix and '/', then at most "
			   "63 letters, digits, '-', '_' or '.', starting and ending with a letter "
			   "or digit");
}

int store_check_label_value(struct vctx *c, const json_t *v)
{
	if (json_string_length(v) == 0 ||
	    qualified_part(json_string_value(v), json_string_length(v)))
		return 0;
	VQ(q, v);
	return store_vfail(c,
			   "%s is not a valid label value: at most 63 letters, digits, '-', '_' "
			   "or '.', starting and ending with a letter or digit",
			   q);
}

int store_check_annotations(struct vctx *c, const json_t *v)
{
	const char *k;
	const json_t *x;
	size_t total = 0;
	json_object_foreach((json_t *)v, k, x)
	{
		total += strlen(k) + (json_is_string(x) ? json_string_length(x) : 0);
	}
	if (total > VALIDATE_MAX_ANNOTATIONS)
		return store_vfail(c, "annotations are %zu bytes, more than %d", total,
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
int store_check_mac(struct vctx *c, const json_t *v)
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
		return store_vfail(c, "%s must be lowercase (\"%s\")", q, lower);
	}
	return store_vfail(c, "%s is not a MAC address", q);
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

int store_check_ip(struct vctx *c, const json_t *v)
{
	unsigned char a[16];
	int fam;
	if (ip_parse(v, &fam, a))
		return 0;
	VQ(q, v);
	return store_vfail(c, "%s is not an IP address", q);
}

/* An IP address, or "" for none (gateway: "" is common in the wild). */
int store_check_ip_or_empty(struct vctx *c, const json_t *v)
{
	return json_string_length(v) == 0 ? 0 : store_check_ip(c, v);
}

int store_check_ipv4(struct vctx *c, const json_t *v)
{
	unsigned char a[16];
	int fam;
	if (ip_parse(v, &fam, a) && fam == AF_INET)
		return 0;
	VQ(q, v);
	return store_vfail(c, "%s is not an IPv4 address", q);
}

/* A dotted netmask (contiguous ones), IPv4 or IPv6; "" for none. */
int store_check_netmask(struct vctx *c, const json_t *v)
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
	return store_vfail(c, "%s is not a netmask", q);
}

/* "a.b.c.d/n", n 0-32. */
int store_check_cidr4(struct vctx *c, const json_t *v)
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
	return store_vfail(c, "%s is not an IPv4 destination like \"10.0.0.0/8\"", q);
}

/* "0"-"4096", or a comma-separated list of them (the CRD's pattern). */
int store_check_vlan(struct vctx *c, const json_t *v)
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
	return store_vfail(c, "%s is not a VLAN ID (0-4096, or a comma-separated list of them)", q);
}

int store_check_port(struct vctx *c, const json_t *v)
{
	json_int_t p = json_integer_value(v);
	if (p >= 1 && p <= 65535)
		return 0;
	return store_vfail(c, "%" JSON_INTEGER_FORMAT " is not a port (1-65535)", p);
}

int store_check_port_or_zero(struct vctx *c, const json_t *v)
{
	return json_integer_value(v) == 0 ? 0 : store_check_port(c, v);
}

/* format: uri. An absolute URI with a scheme; "" for none. */
int store_check_uri(struct vctx *c, const json_t *v)
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
	return store_vfail(c, "%s is not an absolute URL", q);
}

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* format: date-time (RFC 3339 §5.6). */
int store_check_time(struct vctx *c, const json_t *v)
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
	return store_vfail(c, "%s is not an RFC 3339 time like \"2026-01-02T15:04:05Z\"", q);
}

/* RFC 4648 §4 base64 with padding, as Kubernetes decodes Secret data. */
int store_check_base64(struct vctx *c, const json_t *v)
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
	return store_vfail(c, "is not base64 (RFC 4648 with padding)");
}

/* Secret data keys: [-._a-zA-Z0-9]+, not "." or "..". */
int store_check_config_key(struct vctx *c, const char *key)
{
	size_t n = strlen(key);
	bool ok = n > 0 && n <= VALIDATE_DNS_SUBDOMAIN_MAX && strcmp(key, ".") != 0 &&
		  strcmp(key, "..") != 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = is_alnum(key[i]) || key[i] == '-' || key[i] == '_' || key[i] == '.';
	if (ok)
		return 0;
	return store_vfail(c, "invalid key: letters, digits, '-', '_' and '.' only");
}

/* [+-]?(N(.N?)?|.N) from s[*i], N a run of digits; moves *i past it. */
static bool signed_decimal(const char *s, size_t n, size_t *i)
{
	size_t d = 0, f = 0;
	if (*i < n && (s[*i] == '+' || s[*i] == '-'))
		(*i)++;
	while (*i < n && s[*i] >= '0' && s[*i] <= '9')
		(*i)++, d++;
	if (*i < n && s[*i] == '.')
		for ((*i)++; *i < n && s[*i] >= '0' && s[*i] <= '9';)
			(*i)++, f++;
	return d > 0 || f > 0;
}

/* A resource Quantity: an integer, or a string such as "16Gi", "500m",
 * "1e3": the CRD's pattern ^[+-]?(N(.N?)?|.N)(Ki..Ei|n|u|m|k|M..E|[eE]
 * [+-]?(N(.N?)?|.N))?$. */
int store_check_quantity(struct vctx *c, const json_t *v)
{
	if (json_is_integer(v))
		return 0;
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i = 0;
	bool ok = signed_decimal(s, n, &i);
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
			found = signed_decimal(rest, rn, &k) && k == rn;
		}
		ok = found;
	}
	if (ok)
		return 0;
	VQ(q, v);
	return store_vfail(c, "%s is not a quantity like \"16Gi\" or \"500m\"", q);
}

/* spec.interfaces[].dhcp: the CRD's CEL rule. */
int store_check_dhcp(struct vctx *c, const json_t *v)
{
	const json_t *t = json_object_get(v, "tftp_server_name");
	const json_t *b = json_object_get(v, "boot_file_name");
	bool has_t = json_is_string(t) && json_string_length(t) > 0;
	bool has_b = json_is_string(b) && json_string_length(b) > 0;
	if (has_t == has_b)
		return 0;
	return store_vfail(c, "tftp_server_name and boot_file_name must be set together");
}
