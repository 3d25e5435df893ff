/* cmdline — the kernel command line as HookOS fills it for tink-agent.
 *
 * DESIGN: the command line is untrusted (a boot loader, a DHCP-served
 * iPXE script, an operator's typing), so it is read with the byte cursor,
 * one parameter at a time, the way the kernel's next_arg() splits it:
 * blanks separate parameters, a double quote starts or ends a quoted run
 * in which blanks are part of the value (the quotes themselves are not).
 * Only the five keys tink-agent reads are kept, each into a fixed buffer;
 * a known key with a value too long is an error rather than a cut value,
 * since a cut authority or worker ID would talk to the wrong server or
 * take the wrong machine's workflow. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/agent.h"
#include "common/cursor.h"

/* The longest parameter looked at; longer unknown ones are skipped. */
#define CMDLINE_TOKEN_MAX 4096

static bool is_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Go's strconv.ParseBool; "" leaves the value unset (Smee's template
 * writes the key with an empty value when it has none). */
static int parse_bool(const char *v, int *ret)
{
	if (!v[0]) {
		*ret = -1;
		return 0;
	}
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(v, yes[i]) == 0) {
			*ret = 1;
			return 0;
		}
		if (strcmp(v, no[i]) == 0) {
			*ret = 0;
			return 0;
		}
	}
	return -EINVAL;
}

/* Reads one parameter into tok (NUL-terminated, quotes removed); *len is
 * its length, or CMDLINE_TOKEN_MAX + 1 when it was longer (then tok holds
 * its start). 0, or -EBADMSG. */
static int next_token(struct rd *r, char *tok, size_t *len)
{
	bool quoted = false;
	size_t n = 0;
	uint8_t c;
	while (r->len && is_blank(r->p[0]))
		(void)rd_u8(r, &c);
	while (rd_u8(r, &c) == 0) {
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (!quoted && is_blank(c))
			break;
		if (c < 0x20 || c == 0x7f)
			return -EBADMSG;
		if (n < CMDLINE_TOKEN_MAX)
			tok[n] = (char)c;
		n++;
	}
	if (quoted)
		return -EBADMSG;
	tok[n < CMDLINE_TOKEN_MAX ? n : CMDLINE_TOKEN_MAX] = '\0';
	*len = n > CMDLINE_TOKEN_MAX ? CMDLINE_TOKEN_MAX + 1 : n;
	return 0;
}

static int keep(const char *tok, size_t len, const char *key, char *dst)
{
	size_t k = strlen(key);
	if (len <= k || strncmp(tok, key, k) != 0 || tok[k] != '=')
		return 0;
	if (len - k - 1 > AGENT_CMDLINE_VALUE_MAX)
		return -ENAMETOOLONG;
	memcpy(dst, tok + k + 1, len - k - 1);
	dst[len - k - 1] = '\0';
	return 1;
}

int agent_cmdline_parse(const char *p, size_t n, struct agent_cmdline *ret)
{
	char tok[CMDLINE_TOKEN_MAX + 1];
	struct agent_cmdline c = { .tls = -1, .insecure_tls = -1 };
	char b[AGENT_CMDLINE_VALUE_MAX + 1];
	struct rd r = rd_init(p, n);
	int e = 0;
	if (n > AGENT_CMDLINE_MAX)
		return -E2BIG;
	while (r.len) {
		size_t len;
		e = next_token(&r, tok, &len);
		if (e < 0)
			goto out;
		if (len == 0)
			continue;
		if ((e = keep(tok, len, "worker_id", c.worker_id)) ||
		    (e = keep(tok, len, "grpc_authority", c.grpc_authority)) ||
		    (e = keep(tok, len, "syslog_host", c.syslog_host))) {
			if (e < 0)
				goto out;
			continue;
		}
		if ((e = keep(tok, len, "tinkerbell_tls", b)) != 0) {
			if (e < 0 || (e = parse_bool(b, &c.tls)) < 0)
				goto out;
			continue;
		}
		if ((e = keep(tok, len, "tinkerbell_insecure_tls", b)) != 0) {
			if (e < 0 || (e = parse_bool(b, &c.insecure_tls)) < 0)
				goto out;
			continue;
		}
	}
	e = 0;
	*ret = c;
out:
	return e;
}
