/* params — the Kea hook's "parameters" (a JSON object in Kea's
 * configuration) checked into struct ibkea_params.
 *
 * DESIGN: Kea hands the hook its parameters as JSON; the shim passes the
 * text here, so that the checks are C, tested and fuzzed without Kea. Every
 * name is known (a typo is refused, not ignored), every value is checked
 * for its type and range, and the error names the parameter. The netboot
 * ones become a struct dhcp_settings the way ironbelld's configuration
 * becomes its server's (daemon/settings.c settings_dhcp()), except that
 * the gaps left for the interface a request comes in on are filled from
 * Kea's server identifier of each reply (dhcp_settings_policy()). The
 * text is untrusted only as far as a configuration file is: jansson
 * parses it, with a cap on its length.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/num.h"
#include "dhcp/kea/ironbell-kea.h"

#define IBKEA_ERR_NAME "parameter \"%s\": "

/* What the object says, before the settings are made from it. */
struct raw {
	bool has_source, has_api_url;
	uint32_t public_ip, tftp_ip, syslog_ip;
	const char *base_url; /* borrowed from the JSON */
	bool netboot;
	uint16_t http_port;
};

static int fail(char *err, size_t errlen, const char *name, const char *what)
{
	snprintf(err, errlen, IBKEA_ERR_NAME "%s", name, what);
	return -EINVAL;
}

static int get_string(const char *name, const json_t *v, size_t max, const char **ret, char *err,
		      size_t errlen)
{
	char what[64];

	if (!json_is_string(v))
		return fail(err, errlen, name, "must be a string");
	if (json_string_length(v) > max) {
		snprintf(what, sizeof(what), "longer than %zu bytes", max);
		return fail(err, errlen, name, what);
	}
	if (strlen(json_string_value(v)) != json_string_length(v))
		return fail(err, errlen, name, "must not contain a NUL byte");
	*ret = json_string_value(v);
	return 0;
}

/* An absolute path; "" too when empty_ok. */
static int get_path(const char *name, const json_t *v, bool empty_ok, char out[IBKEA_PATH_MAX + 1],
		    char *err, size_t errlen)
{
	const char *s;
	int e;

	if ((e = get_string(name, v, IBKEA_PATH_MAX, &s, err, errlen)) < 0)
		return e;
	if (!(s[0] == '/' || (empty_ok && !s[0])))
		return fail(err, errlen, name, "must be an absolute path");
	snprintf(out, IBKEA_PATH_MAX + 1, "%s", s);
	return 0;
}

static int get_uint(const char *name, const json_t *v, uint32_t min, uint32_t max, uint32_t *ret,
		    char *err, size_t errlen)
{
	char what[64];

	if (!json_is_integer(v))
		return fail(err, errlen, name, "must be an integer");
	if (json_integer_value(v) < (json_int_t)min || json_integer_value(v) > (json_int_t)max) {
		snprintf(what, sizeof(what), "must be %u..%u", min, max);
		return fail(err, errlen, name, what);
	}
	*ret = (uint32_t)json_integer_value(v);
	return 0;
}

static int get_ipv4(const char *name, const json_t *v, uint32_t *ret, char *err, size_t errlen)
{
	struct in_addr a;
	const char *s;
	int e;

	if ((e = get_string(name, v, 15, &s, err, errlen)) < 0)
		return e;
	if (inet_pton(AF_INET, s, &a) != 1 || a.s_addr == 0)
		return fail(err, errlen, name, "must be an IPv4 address (a.b.c.d)");
	*ret = ntohl(a.s_addr);
	return 0;
}

/* https://host[:port][/...], or http:// to a loopback address only: the
 * bearer token must not cross a network in clear. */
static int check_api_url(const char *url, char *err, size_t errlen)
{
	const char *name = "api-url", *host, *end;
	struct in_addr a;
	char h[16];
	size_t n;

	if (strncmp(url, "https://", 8) == 0) {
		if (!url[8] || url[8] == '/' || url[8] == ':')
			return fail(err, errlen, name, "has no host");
		return 0;
	}
	if (strncmp(url, "http://", 7) != 0)
		return fail(err, errlen, name, "must start with https://");
	host = url + 7;
	if (strncmp(host, "[::1]", 5) == 0 && (host[5] == '\0' || host[5] == ':' || host[5] == '/'))
		return 0;
	end = host + strcspn(host, ":/");
	n = (size_t)(end - host);
	if (n < sizeof(h)) {
		memcpy(h, host, n);
		h[n] = '\0';
		if (inet_pton(AF_INET, h, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127)
			return 0;
	}
	return fail(err, errlen, name,
		    "must start with https:// (http:// only to 127.0.0.0/8 or [::1])");
}

/* A binary of the arch table: a file name served over TFTP and HTTP, as
 * ironbell.yaml's dhcp.arch takes it ([A-Za-z0-9._-], not starting with
 * '.'). */
static bool binary_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > DHCP_HOST_BINARY_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static int get_arch(const json_t *v, struct dhcp_policy_config *p, char *err, size_t errlen)
{
	const char *key;
	json_t *bin;
	uint64_t code;
	char what[128];

	if (!json_is_object(v))
		return fail(err, errlen, "arch",
			    "must be an object of option 93 codes to binaries");
	json_object_foreach ((json_t *)v, key, bin) {
		if (num_parse_u64_str(key, 65535, &code) < 0) {
			snprintf(what, sizeof(what),
				 "\"%.16s\" is not an architecture code (0..65535)", key);
			return fail(err, errlen, "arch", what);
		}
		if (!json_is_string(bin) ||
		    strlen(json_string_value(bin)) != json_string_length(bin) ||
		    !binary_ok(json_string_value(bin))) {
			snprintf(what, sizeof(what),
				 "%u: not a file name (1 to %d of A-Z a-z 0-9 . _ -, not starting "
				 "with '.')",
				 (unsigned)code, DHCP_HOST_BINARY_MAX);
			return fail(err, errlen, "arch", what);
		}
		if (dhcp_policy_set_arch(p, (uint16_t)code, json_string_value(bin)) < 0) {
			snprintf(what, sizeof(what), "more than %d architectures in all",
				 DHCP_POLICY_MAX_ARCHES);
			return fail(err, errlen, "arch", what);
		}
	}
	return 0;
}

/* One name of the object; the arch table is read later, into the
 * policy. */
static int get_one(const char *name, const json_t *v, struct ibkea_params *p, struct raw *r,
		   char *err, size_t errlen)
{
	const char *s;
	uint32_t u;
	int e;

	if (strcmp(name, "source") == 0) {
		if ((e = get_string(name, v, 16, &s, err, errlen)) < 0)
			return e;
		if (strcmp(s, "store") == 0)
			p->source = IBKEA_SOURCE_STORE;
		else if (strcmp(s, "api") == 0)
			p->source = IBKEA_SOURCE_API;
		else
			return fail(err, errlen, name, "must be \"store\" or \"api\"");
		r->has_source = true;
	} else if (strcmp(name, "store") == 0) {
		return get_path(name, v, false, p->store, err, errlen);
	} else if (strcmp(name, "poll-interval-ms") == 0) {
		return get_uint(name, v, IBKEA_MIN_POLL_MS, IBKEA_MAX_POLL_MS, &p->poll_ms, err,
				errlen);
	} else if (strcmp(name, "api-url") == 0) {
		if ((e = get_string(name, v, IBKEA_URL_MAX, &s, err, errlen)) < 0 ||
		    (e = check_api_url(s, err, errlen)) < 0)
			return e;
		snprintf(p->api_url, sizeof(p->api_url), "%s", s);
		r->has_api_url = true;
	} else if (strcmp(name, "api-token-file") == 0) {
		return get_path(name, v, false, p->api_token_file, err, errlen);
	} else if (strcmp(name, "api-ca-file") == 0) {
		return get_path(name, v, true, p->api_ca_file, err, errlen);
	} else if (strcmp(name, "netboot") == 0) {
		if (!json_is_boolean(v))
			return fail(err, errlen, name, "must be true or false");
		r->netboot = json_is_true(v);
	} else if (strcmp(name, "public-address") == 0) {
		return get_ipv4(name, v, &r->public_ip, err, errlen);
	} else if (strcmp(name, "tftp-address") == 0) {
		return get_ipv4(name, v, &r->tftp_ip, err, errlen);
	} else if (strcmp(name, "syslog-address") == 0) {
		return get_ipv4(name, v, &r->syslog_ip, err, errlen);
	} else if (strcmp(name, "http-base-url") == 0) {
		if ((e = get_string(name, v, DHCP_POLICY_URL_MAX, &s, err, errlen)) < 0)
			return e;
		if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
			return fail(err, errlen, name, "must start with http:// or https://");
		r->base_url = s;
	} else if (strcmp(name, "http-port") == 0) {
		if ((e = get_uint(name, v, 1, 65535, &u, err, errlen)) < 0)
			return e;
		r->http_port = (uint16_t)u;
	} else if (strcmp(name, "arch") != 0) {
		return fail(err, errlen, name, "unknown (a typo?)");
	}
	return 0;
}

/* The settings, as daemon/settings.c settings_dhcp() makes ironbelld's
 * with no dhcp.server_address: mode reservation, no lease reuse (Kea has
 * its own cache-threshold), option 54 Kea's. */
static int make_settings(const struct raw *r, const json_t *arch, struct dhcp_settings *s,
			 char *err, size_t errlen)
{
	struct dhcp_policy_config *p = &s->policy;
	char base[DHCP_POLICY_URL_MAX + 1], ip[16];
	int e;

	memset(s, 0, sizeof(*s));
	s->http_port = r->http_port;
	dhcp_policy_config_default(p, r->public_ip);
	p->mode = DHCP_MODE_RESERVATION;
	p->netboot = r->netboot;
	p->server_id = 0;
	p->http_ip = r->public_ip;
	p->tftp_ip = r->tftp_ip ? r->tftp_ip : r->public_ip;
	p->syslog_ip = r->syslog_ip;
	p->lease_time = DHCP_DEFAULT_LEASE;
	p->lease_reuse = 0;
	if (arch && (e = get_arch(arch, p, err, errlen)) < 0)
		return e;
	if (r->base_url) {
		snprintf(base, sizeof(base), "%s", r->base_url);
	} else if (r->public_ip) {
		dhcp_ip_str(r->public_ip, ip);
		snprintf(base, sizeof(base), "http://%s:%u", ip, (unsigned)s->http_port);
	} else {
		base[0] = '\0'; /* made per reply, from Kea's server identifier */
	}
	if (!base[0])
		p->script_url[0] = p->binary_url[0] = '\0';
	else if (dhcp_policy_set_base_url(p, base) < 0)
		return fail(err, errlen, "http-base-url",
			    "too long for the boot URLs made from it");
	return 0;
}

int ibkea_params_parse(const char *json, size_t len, struct ibkea_params *ret, char *err,
		       size_t errlen)
{
	struct ibkea_params p = { .source = IBKEA_SOURCE_STORE, .poll_ms = IBKEA_DEFAULT_POLL_MS };
	struct raw r = { .netboot = true, .http_port = DHCP_DEFAULT_HTTP_PORT };
	json_t *root = NULL, *v;
	json_error_t jerr;
	const char *name;
	int e = -EINVAL;

	snprintf(p.store, sizeof(p.store), "%s", IBKEA_DEFAULT_STORE);
	if (json && len > IBKEA_PARAMS_MAX) {
		snprintf(err, errlen, "parameters: longer than %d bytes", IBKEA_PARAMS_MAX);
		goto out;
	}
	if (json && len) {
		root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
		if (!root) {
			snprintf(err, errlen, "parameters: %s (line %d, column %d)", jerr.text,
				 jerr.line, jerr.column);
			goto out;
		}
		if (!json_is_object(root)) {
			snprintf(err, errlen, "parameters: must be a JSON object");
			goto out;
		}
		json_object_foreach (root, name, v)
			if ((e = get_one(name, v, &p, &r, err, errlen)) < 0)
				goto out;
	}
	e = -EINVAL;
	if (r.has_api_url && !r.has_source)
		p.source = IBKEA_SOURCE_API;
	if (p.source == IBKEA_SOURCE_API && !p.api_url[0]) {
		fail(err, errlen, "api-url", "required with source \"api\"");
		goto out;
	}
	if (p.source == IBKEA_SOURCE_API && !p.api_token_file[0]) {
		fail(err, errlen, "api-token-file", "required with source \"api\"");
		goto out;
	}
	if (p.source == IBKEA_SOURCE_STORE && r.has_api_url) {
		fail(err, errlen, "api-url", "only with source \"api\"");
		goto out;
	}
	if ((e = make_settings(&r, root ? json_object_get(root, "arch") : NULL, &p.dhcp, err,
			       errlen)) < 0)
		goto out;
	*ret = p;
	e = 0;
out:
	json_decref(root);
	return e;
}
