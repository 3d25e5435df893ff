/* config-types — the value types of ironbell.yaml: one parse function
 * each, which checks a scalar (or one item of a list, one pair of a
 * mapping) and stores it in its field of struct ib_config, or says why it
 * is refused. The tables of keys and the loader are in config.c. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <yaml.h>

#include "common/num.h"
#include "daemon/config/config-internal.h"

/* Writes s (n bytes) into out as an escaped string literal of at most
 * CFG_QUOTE_MAX characters of s, then "..." when cut: values are user text
 * that ends up in logs. Returns out. */
const char *cfg_quote(char *out, size_t outlen, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		bool plain = ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\';
		size_t w = plain ? 1 : (ch == '"' || ch == '\\') ? 2 : 4;
		if (i == CFG_QUOTE_MAX || o + w + 5 > outlen) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (plain) {
			out[o++] = (char)ch;
		} else if (w == 2) {
			out[o++] = '\\';
			out[o++] = (char)ch;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}


static int cfg_set_string(void *field, const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		return -ENOMEM;
	free(*(char **)field);
	*(char **)field = d;
	return 0;
}

static int parse_log_level(const struct cfg_key *k, const char *s, size_t n, void *field,
			   char *msg, size_t msglen)
{
	char q[QUOTE_BUF];
	char name[16];
	enum log_level l;
	if (n >= sizeof(name))
		goto bad;
	memcpy(name, s, n);
	name[n] = '\0';
	if (log_level_parse(name, &l) < 0)
		goto bad;
	*(enum log_level *)field = l;
	return 0;
bad:
	snprintf(msg, msglen, "%s is not one of error, warn, info, debug",
		 cfg_quote(q, sizeof(q), s, n));
	return -EINVAL;
}

static int check_path(const char *s, size_t n, char *msg, size_t msglen)
{
	char q[QUOTE_BUF];
	if (n == 0 || s[0] != '/') {
		snprintf(msg, msglen, "%s is not an absolute path", cfg_quote(q, sizeof(q), s, n));
		return -EINVAL;
	}
	if (n >= PATH_MAX) {
		snprintf(msg, msglen, "%s is longer than %d bytes", cfg_quote(q, sizeof(q), s, n),
			 PATH_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

static int parse_path(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	int r = check_path(s, n, msg, msglen);
	return r < 0 ? r : cfg_set_string(field, s, n);
}

static int parse_socket(const struct cfg_key *k, const char *s, size_t n, void *field,
			char *msg, size_t msglen)
{
	char q[QUOTE_BUF];
	size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	int r = check_path(s, n, msg, msglen);
	if (r < 0)
		return r;
	if (n > max) {
		snprintf(msg, msglen, "%s is longer than %zu bytes, the most a unix socket path can be",
			 cfg_quote(q, sizeof(q), s, n), max);
		return -EINVAL;
	}
	return cfg_set_string(field, s, n);
}

static int parse_mode(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	char q[QUOTE_BUF];
	unsigned mode;
	int r = num_parse_mode(s, n, &mode);
	if (r == -EINVAL) {
		snprintf(msg, msglen, "%s is not an octal file mode like \"0660\"",
			 cfg_quote(q, sizeof(q), s, n));
		return -EINVAL;
	}
	if (r < 0 || mode < k->min || mode > k->max) {
		snprintf(msg, msglen, "%s is out of range %04o..%04o", cfg_quote(q, sizeof(q), s, n),
			 (unsigned)k->min, (unsigned)k->max);
		return -EINVAL;
	}
	*(unsigned *)field = mode;
	return 0;
}

/* A host name as a listener may name it: letters, digits, '-', '.', '_'. */
static bool is_host_name(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == '_'))
			return false;
	}
	return true;
}

bool cfg_is_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static bool is_dotted_numbers(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
			return false;
	return true;
}

/* Accepts "host:port", "[v6]:port" and ":port" (every address). */
static int parse_listen(const struct cfg_key *k, const char *s, size_t n, void *field,
			char *msg, size_t msglen)
{
	char q[QUOTE_BUF], qh[QUOTE_BUF];
	char addr[INET6_ADDRSTRLEN + 1];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *colon = n ? memrchr(s, ':', n) : NULL;
	const char *host = s, *port;
	size_t hlen, plen;
	uint64_t pnum;

	if (!colon)
		goto not_host_port;
	port = colon + 1;
	plen = n - (size_t)(port - s);
	hlen = (size_t)(colon - s);
	if (!cfg_is_digits(port, plen))
		goto not_host_port;
	if (hlen > 0 && s[0] == '[') {
		if (hlen < 2 || s[hlen - 1] != ']')
			goto not_host_port;
		host = s + 1;
		hlen -= 2;
		if (hlen == 0 || hlen >= sizeof(addr))
			goto not_v6;
		memcpy(addr, host, hlen);
		addr[hlen] = '\0';
		if (inet_pton(AF_INET6, addr, bin) != 1)
			goto not_v6;
	} else if (hlen > 0) {
		if (memchr(host, ':', hlen)) {
			snprintf(msg, msglen,
				 "%s is not host:port (an IPv6 address goes in brackets, like [::1]:7080)",
				 cfg_quote(q, sizeof(q), s, n));
			return -EINVAL;
		}
		if (is_dotted_numbers(host, hlen)) {
			if (hlen >= sizeof(addr))
				goto not_v4;
			memcpy(addr, host, hlen);
			addr[hlen] = '\0';
			if (inet_pton(AF_INET, addr, bin) != 1)
				goto not_v4;
		} else if (!is_host_name(host, hlen)) {
			snprintf(msg, msglen, "%s: %s is not a host name", cfg_quote(q, sizeof(q), s, n),
				 cfg_quote(qh, sizeof(qh), host, hlen));
			return -EINVAL;
		}
	}
	if (num_parse_u64(port, plen, 65535, &pnum) < 0 || pnum == 0) {
		snprintf(msg, msglen, "port %.*s is out of range 1..65535", (int)plen, port);
		return -EINVAL;
	}
	return cfg_set_string(field, s, n);

not_host_port:
	snprintf(msg, msglen, "%s is not host:port", cfg_quote(q, sizeof(q), s, n));
	return -EINVAL;
not_v6:
	snprintf(msg, msglen, "%s: %s is not an IPv6 address", cfg_quote(q, sizeof(q), s, n),
		 cfg_quote(qh, sizeof(qh), host, hlen));
	return -EINVAL;
not_v4:
	snprintf(msg, msglen, "%s: %s is not an IPv4 address", cfg_quote(q, sizeof(q), s, n),
		 cfg_quote(qh, sizeof(qh), host, hlen));
	return -EINVAL;
}

static void cfg_store_uint(const struct cfg_key *k, void *field, uint64_t v)
{
	if (k->size == sizeof(uint32_t)) {
		uint32_t v32 = (uint32_t)v;
		memcpy(field, &v32, sizeof(v32));
	} else {
		memcpy(field, &v, sizeof(v));
	}
}

static int parse_uint(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	char q[QUOTE_BUF];
	int64_t v;
	int r = num_parse_i64(s, n, INT64_MIN, INT64_MAX, &v);
	if (r == -EINVAL) {
		snprintf(msg, msglen, "%s is not an integer", cfg_quote(q, sizeof(q), s, n));
		return -EINVAL;
	}
	if (r < 0 || v < 0 || (uint64_t)v < k->min || (uint64_t)v > k->max) {
		snprintf(msg, msglen, "%.*s is out of range %" PRIu64 "..%" PRIu64, (int)n, s,
			 k->min, k->max);
		return -EINVAL;
	}
	cfg_store_uint(k, field, (uint64_t)v);
	return 0;
}

static const struct {
	const char *suffix;
	uint64_t mult;
} cfg_size_units[] = { { "GiB", GIB }, { "MiB", MIB }, { "KiB", KIB } };

/* Writes a byte count the way the file would say it: "8MiB", "1000". */
static const char *cfg_size_name(char *out, size_t outlen, uint64_t v)
{
	for (size_t i = 0; i < sizeof(cfg_size_units) / sizeof(cfg_size_units[0]); i++)
		if (v && v % cfg_size_units[i].mult == 0) {
			snprintf(out, outlen, "%" PRIu64 "%s", v / cfg_size_units[i].mult,
				 cfg_size_units[i].suffix);
			return out;
		}
	snprintf(out, outlen, "%" PRIu64, v);
	return out;
}

/* Bytes: digits, then optionally one space and KiB, MiB or GiB. */
static int parse_size(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	char q[QUOTE_BUF], lo[32], hi[32];
	uint64_t mult = 1, v;
	size_t digits = n;
	for (size_t i = 0; i < sizeof(cfg_size_units) / sizeof(cfg_size_units[0]); i++) {
		if (n > 3 && memcmp(s + n - 3, cfg_size_units[i].suffix, 3) == 0) {
			mult = cfg_size_units[i].mult;
			digits = n - 3;
			if (digits > 1 && s[digits - 1] == ' ')
				digits--;
			break;
		}
	}
	int r = num_parse_u64(s, digits, UINT64_MAX / mult, &v);
	if (r == -EINVAL) {
		snprintf(msg, msglen, "%s is not a size (bytes, or a number with KiB, MiB or GiB)",
			 cfg_quote(q, sizeof(q), s, n));
		return -EINVAL;
	}
	if (r < 0 || v * mult < k->min || v * mult > k->max) {
		snprintf(msg, msglen, "%.*s is out of range %s..%s", (int)n, s,
			 cfg_size_name(lo, sizeof(lo), k->min), cfg_size_name(hi, sizeof(hi), k->max));
		return -EINVAL;
	}
	cfg_store_uint(k, field, v * mult);
	return 0;
}

static int parse_bool(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	char q[QUOTE_BUF];
	if (n == 4 && memcmp(s, "true", 4) == 0) {
		*(bool *)field = true;
		return 0;
	}
	if (n == 5 && memcmp(s, "false", 5) == 0) {
		*(bool *)field = false;
		return 0;
	}
	snprintf(msg, msglen, "%s is not true or false", cfg_quote(q, sizeof(q), s, n));
	return -EINVAL;
}

static const char *const cfg_dhcp_modes[CONFIG_DHCP_MODE_MAX] = {
	[CONFIG_DHCP_RESERVATION] = "reservation",
	[CONFIG_DHCP_PROXY] = "proxy",
	[CONFIG_DHCP_AUTO_PROXY] = "auto-proxy",
};

static int parse_dhcp_mode(const struct cfg_key *k, const char *s, size_t n, void *field,
			   char *msg, size_t msglen)
{
	char q[QUOTE_BUF];
	for (int i = 0; i < CONFIG_DHCP_MODE_MAX; i++)
		if (strlen(cfg_dhcp_modes[i]) == n && memcmp(s, cfg_dhcp_modes[i], n) == 0) {
			*(enum config_dhcp_mode *)field = (enum config_dhcp_mode)i;
			return 0;
		}
	snprintf(msg, msglen, "%s is not one of reservation, proxy, auto-proxy",
		 cfg_quote(q, sizeof(q), s, n));
	return -EINVAL;
}

/* Dotted quad only, as inet_pton reads it (no leading zeros, no short
 * forms); a host address, so not 0.0.0.0 (which means unset), not
 * multicast and not 255.255.255.255. */
static int parse_ipv4(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	char q[QUOTE_BUF], addr[INET_ADDRSTRLEN];
	struct in_addr in;
	if (n == 0 || n >= sizeof(addr))
		goto bad;
	memcpy(addr, s, n);
	addr[n] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		goto bad;
	uint32_t v = ntohl(in.s_addr);
	if (v == 0 || v == UINT32_MAX || (v >> 28) == 0xe) {
		snprintf(msg, msglen, "%s is not a unicast host address",
			 cfg_quote(q, sizeof(q), s, n));
		return -EINVAL;
	}
	*(uint32_t *)field = v;
	return 0;
bad:
	snprintf(msg, msglen, "%s is not an IPv4 address", cfg_quote(q, sizeof(q), s, n));
	return -EINVAL;
}

/* http:// or https://, a host, then visible ASCII without a query or a
 * fragment: paths are appended to it. */
static int parse_url(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		     size_t msglen)
{
	char q[QUOTE_BUF];
	size_t p = 0;
	if (n > CONFIG_URL_MAX) {
		snprintf(msg, msglen, "%s is longer than %d bytes", cfg_quote(q, sizeof(q), s, n),
			 CONFIG_URL_MAX);
		return -EINVAL;
	}
	if (n >= 7 && memcmp(s, "http://", 7) == 0)
		p = 7;
	else if (n >= 8 && memcmp(s, "https://", 8) == 0)
		p = 8;
	if (p == 0 || p == n || s[p] == '/' || s[p] == ':')
		goto bad;
	for (size_t i = p; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '?' ||
		    s[i] == '#')
			goto bad;
	return cfg_set_string(field, s, n);
bad:
	snprintf(msg, msglen,
		 "%s is not an http:// or https:// URL (with a host, without a query or a fragment)",
		 cfg_quote(q, sizeof(q), s, n));
	return -EINVAL;
}

/* An interface name as the kernel accepts one (dev_valid_name): 1 to 15
 * bytes, not "." or "..", without '/', ':' or white space. Adds it to the
 * list. */
static int parse_ifname(const struct cfg_key *k, const char *s, size_t n, void *field,
			char *msg, size_t msglen)
{
	char q[QUOTE_BUF];
	struct config_ifnames *l = field;
	bool ok = n >= 1 && n <= CONFIG_IFNAME_MAX && !(n == 1 && s[0] == '.') &&
		  !(n == 2 && s[0] == '.' && s[1] == '.');
	for (size_t i = 0; ok && i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '/' ||
		    s[i] == ':')
			ok = false;
	if (!ok) {
		snprintf(msg, msglen,
			 "%s is not an interface name (1 to %d characters, not \".\" or \"..\", "
			 "without '/', ':' or white space)",
			 cfg_quote(q, sizeof(q), s, n), CONFIG_IFNAME_MAX);
		return -EINVAL;
	}
	for (unsigned i = 0; i < l->n; i++)
		if (strlen(l->name[i]) == n && memcmp(l->name[i], s, n) == 0) {
			snprintf(msg, msglen, "%s is listed twice", cfg_quote(q, sizeof(q), s, n));
			return -EINVAL;
		}
	if (l->n == CONFIG_DHCP_MAX_INTERFACES) {
		snprintf(msg, msglen, "more than %d interfaces", CONFIG_DHCP_MAX_INTERFACES);
		return -EINVAL;
	}
	memcpy(l->name[l->n], s, n);
	l->name[l->n][n] = '\0';
	l->n++;
	return 0;
}

/* code: binary. The code is option 93's value, 0..65535; the binary a file
 * name served over TFTP and HTTP: [A-Za-z0-9._-], not starting with '.'. */
static int parse_arch_pair(const struct cfg_key *k, const char *ks, size_t kn, const char *vs,
			   size_t vn, void *field, char *msg, size_t msglen, bool *at_key)
{
	char q[QUOTE_BUF];
	struct config_arch_map *m = field;
	uint64_t code;
	bool ok = vn >= 1 && vn <= CONFIG_BINARY_MAX && vs[0] != '.';
	*at_key = true;
	if (num_parse_u64(ks, kn, 65535, &code) < 0) {
		snprintf(msg, msglen, "%s is not an architecture code (0..65535)",
			 cfg_quote(q, sizeof(q), ks, kn));
		return -EINVAL;
	}
	for (unsigned i = 0; i < m->n; i++)
		if (m->e[i].code == code) {
			snprintf(msg, msglen, "code %" PRIu64 " is given twice", code);
			return -EINVAL;
		}
	if (m->n == CONFIG_DHCP_MAX_ARCH) {
		snprintf(msg, msglen, "more than %d entries", CONFIG_DHCP_MAX_ARCH);
		return -EINVAL;
	}
	*at_key = false;
	for (size_t i = 0; ok && i < vn; i++) {
		char c = vs[i];
		ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		     c == '.' || c == '_' || c == '-';
	}
	if (!ok) {
		snprintf(msg, msglen,
			 "%" PRIu64 ": %s is not a file name (1 to %d of A-Z a-z 0-9 . _ -, "
			 "not starting with '.')",
			 code, cfg_quote(q, sizeof(q), vs, vn), CONFIG_BINARY_MAX);
		return -EINVAL;
	}
	m->e[m->n].code = (uint16_t)code;
	memcpy(m->e[m->n].binary, vs, vn);
	m->e[m->n].binary[vn] = '\0';
	m->n++;
	return 0;
}

/* Free text (kernel arguments, file name patterns): printable ASCII only,
 * so that nothing in it can break a line of a script or a log. */
static int parse_text(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	char q[QUOTE_BUF];
	size_t max = k->max ? (size_t)k->max : 4096;
	if (n > max) {
		snprintf(msg, msglen, "%s is longer than %zu bytes", cfg_quote(q, sizeof(q), s, n),
			 max);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) {
			snprintf(msg, msglen,
				 "%s holds a character that is not printable ASCII (at byte %zu)",
				 cfg_quote(q, sizeof(q), s, n), i + 1);
			return -EINVAL;
		}
	return cfg_set_string(field, s, n);
}

/* "192.0.2.0/24", "2001:db8::/32", or an address alone (all its bits).
 * The host bits must be zero: "192.0.2.5/24" is a mistake worth saying. */
static int parse_cidr(const struct cfg_key *k, const char *s, size_t n, void *field, char *msg,
		      size_t msglen)
{
	char q[QUOTE_BUF], addr[INET6_ADDRSTRLEN + 1];
	struct net_cidrs *l = field;
	struct net_cidr c = { 0 };
	const char *slash = memchr(s, '/', n);
	size_t an = slash ? (size_t)(slash - s) : n;
	uint64_t prefix;

	if (an == 0 || an >= sizeof(addr))
		goto bad;
	memcpy(addr, s, an);
	addr[an] = '\0';
	if (inet_pton(AF_INET, addr, c.addr) == 1)
		c.family = AF_INET;
	else if (inet_pton(AF_INET6, addr, c.addr) == 1)
		c.family = AF_INET6;
	else
		goto bad;
	unsigned max = c.family == AF_INET ? 32 : 128;
	if (!slash)
		prefix = max;
	else if (!cfg_is_digits(slash + 1, n - an - 1) ||
		 num_parse_u64(slash + 1, n - an - 1, max, &prefix) < 0)
		goto bad;
	c.prefix = (uint8_t)prefix;
	for (unsigned bit = c.prefix; bit < max; bit++)
		if (c.addr[bit / 8] & (0x80 >> (bit % 8))) {
			snprintf(msg, msglen,
				 "%s has bits set past its /%u prefix (did you mean the network?)",
				 cfg_quote(q, sizeof(q), s, n), c.prefix);
			return -EINVAL;
		}
	if (l->n == CONFIG_MAX_CIDRS) {
		snprintf(msg, msglen, "more than %d prefixes", CONFIG_MAX_CIDRS);
		return -EINVAL;
	}
	l->e[l->n++] = c;
	return 0;
bad:
	snprintf(msg, msglen, "%s is not an address or an address/prefix like 192.0.2.0/24",
		 cfg_quote(q, sizeof(q), s, n));
	return -EINVAL;
}

const struct cfg_type_info cfg_types[CFG_TYPE_MAX] = {
	[CFG_SECTION] = { .expected = "a mapping" },
	[CFG_LOG_LEVEL] = { .expected = "one of error, warn, info, debug", .parse = parse_log_level },
	[CFG_PATH] = { .expected = "an absolute path", .parse = parse_path, .owns_string = true },
	[CFG_SOCKET] = { .expected = "an absolute path", .parse = parse_socket, .owns_string = true },
	[CFG_MODE] = { .expected = "a string like \"0660\"", .parse = parse_mode },
	[CFG_LISTEN] = { .expected = "a string like \"0.0.0.0:7080\"", .parse = parse_listen,
			 .owns_string = true },
	[CFG_UINT] = { .expected = "an integer", .parse = parse_uint },
	[CFG_SIZE] = { .expected = "a size like 8MiB", .parse = parse_size },
	[CFG_BOOL] = { .expected = "true or false", .parse = parse_bool },
	[CFG_DHCP_MODE] = { .expected = "one of reservation, proxy, auto-proxy",
			    .parse = parse_dhcp_mode },
	[CFG_IPV4] = { .expected = "an IPv4 address", .parse = parse_ipv4 },
	[CFG_URL] = { .expected = "a URL", .parse = parse_url, .owns_string = true },
	[CFG_IFNAMES] = { .expected = "a list of interface names", .parse = parse_ifname,
			  .node = CFG_NODE_SEQUENCE, .item = "an interface name" },
	[CFG_ARCH_MAP] = { .expected = "a mapping of architecture codes to file names",
			   .node = CFG_NODE_MAPPING, .item = "a file name",
			   .parse_pair = parse_arch_pair },
	[CFG_TEXT] = { .expected = "a string", .parse = parse_text, .owns_string = true },
	[CFG_CIDRS] = { .expected = "a list of address prefixes", .parse = parse_cidr,
			.node = CFG_NODE_SEQUENCE, .item = "an address prefix" },
};
