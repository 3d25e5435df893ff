/* template — iPXE script templates: text with {{name}} placeholders.
 *
 * DESIGN: the language is deliberately small: a placeholder is "{{", an
 * optional run of spaces, a name from ipxe_template_vars[], spaces, "}}";
 * everything else is copied. There are no conditionals: a value that is
 * unset renders empty, and the default template is written so that an
 * empty value still makes a good script (the command line is assembled in
 * C, script.c, where "unset" can drop a whole argument). iPXE's own
 * ${...} settings pass through untouched, so an operator's template can use
 * them. A template is checked once, when the configuration is loaded
 * (ipxe_template_check, with the line and column of a fault), and rendered
 * per request in one pass (ipxe_template_render).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ipxe/ipxe-internal.h"

const char *const ipxe_template_vars[] = {
	[IPXE_VAR_NAME] = "name",
	[IPXE_VAR_NAMESPACE] = "namespace",
	[IPXE_VAR_HW_ADDR] = "hw_addr",
	[IPXE_VAR_WORKER_ID] = "worker_id",
	[IPXE_VAR_ARCH] = "arch",
	[IPXE_VAR_HOSTNAME] = "hostname",
	[IPXE_VAR_FACILITY] = "facility",
	[IPXE_VAR_VLAN_ID] = "vlan_id",
	[IPXE_VAR_BASE_URL] = "base_url",
	[IPXE_VAR_OSIE_URL] = "osie_url",
	[IPXE_VAR_KERNEL] = "kernel",
	[IPXE_VAR_INITRD] = "initrd",
	[IPXE_VAR_KERNEL_URL] = "kernel_url",
	[IPXE_VAR_INITRD_URL] = "initrd_url",
	[IPXE_VAR_CMDLINE] = "cmdline",
	[IPXE_VAR_KERNEL_ARGS] = "kernel_args",
	[IPXE_VAR_GRPC_AUTHORITY] = "grpc_authority",
	[IPXE_VAR_SYSLOG_HOST] = "syslog_host",
	[IPXE_VAR_TLS] = "tinkerbell_tls",
	[IPXE_VAR_INSECURE_TLS] = "tinkerbell_insecure_tls",
	[IPXE_VAR_RETRIES] = "retries",
	[IPXE_VAR_MAX] = NULL,
};

/* The built-in script: fetch the kernel and initrd, retrying a bounded
 * number of times a second apart, and boot; when every try failed, say why
 * and return to the firmware (exit 1), which tries its next boot entry.
 * imgfree first, so that a retry does not pass a stale initrd. */
const char ipxe_default_template[] =
	"#!ipxe\n"
	"# {{namespace}}/{{name}} ({{hw_addr}}), from ironbelld\n"
	"\n"
	"echo Booting {{name}} ({{hw_addr}}, {{arch}}) from {{osie_url}}\n"
	"set ib-try:int32 0\n"
	":ib-fetch\n"
	"imgfree\n"
	"kernel {{kernel_url}} {{cmdline}} && initrd {{initrd_url}} && boot ||\n"
	"iseq ${ib-try} {{retries}} && goto ib-failed ||\n"
	"inc ib-try\n"
	"echo Retrying in 1 s\n"
	"sleep 1\n"
	"goto ib-fetch\n"
	":ib-failed\n"
	"echo Could not boot {{name}} from {{osie_url}}: giving up\n"
	"exit 1\n";

/* Finds the placeholder starting at t[i] ("{{"): its name's span and the
 * index just past "}}". -EINVAL with *why when it is not one. */
static int placeholder(const char *t, size_t len, size_t i, size_t *name_at, size_t *name_len,
		       size_t *next, const char **why)
{
	size_t p = i + 2;
	while (p < len && t[p] == ' ')
		p++;
	size_t s = p;
	while (p < len && ((t[p] >= 'a' && t[p] <= 'z') || t[p] == '_'))
		p++;
	size_t e = p;
	while (p < len && t[p] == ' ')
		p++;
	if (p + 1 >= len || t[p] != '}' || t[p + 1] != '}') {
		*why = "\"{{\" without a matching \"}}\" after a name";
		return -EINVAL;
	}
	if (e == s) {
		*why = "an empty placeholder";
		return -EINVAL;
	}
	*name_at = s;
	*name_len = e - s;
	*next = p + 2;
	return 0;
}

int ipxe_var_lookup(const char *s, size_t n)
{
	for (int v = 0; v < IPXE_VAR_MAX; v++)
		if (strlen(ipxe_template_vars[v]) == n && memcmp(ipxe_template_vars[v], s, n) == 0)
			return v;
	return -1;
}

int ipxe_template_check(const char *t, size_t len, char *err, size_t errlen)
{
	size_t line = 1, col = 1;
	const char *why = NULL;

	if (len > IPXE_TEMPLATE_MAX) {
		snprintf(err, errlen, "the template is longer than %d bytes", IPXE_TEMPLATE_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++, col++) {
		if (t[i] == '\0') {
			why = "a NUL byte";
			goto bad;
		}
		if (t[i] == '\n') {
			line++;
			col = 0;
			continue;
		}
		if (t[i] != '{' || i + 1 >= len || t[i + 1] != '{')
			continue;
		size_t at, n, next;
		if (placeholder(t, len, i, &at, &n, &next, &why) < 0)
			goto bad;
		if (ipxe_var_lookup(t + at, n) < 0) {
			snprintf(err, errlen, "line %zu, column %zu: unknown placeholder \"{{%.*s}}\"",
				 line, col, (int)(n > 40 ? 40 : n), t + at);
			return -EINVAL;
		}
		col += next - i - 1;
		i = next - 1;
	}
	return 0;
bad:
	snprintf(err, errlen, "line %zu, column %zu: %s", line, col, why);
	return -EINVAL;
}

int ipxe_template_render(const char *t, size_t len, const char *const vals[IPXE_VAR_MAX],
			 struct buf *out)
{
	size_t i = 0, lit = 0;
	const char *why;

	while (i < len) {
		if (t[i] != '{' || i + 1 >= len || t[i + 1] != '{') {
			i++;
			continue;
		}
		size_t at, n, next;
		int v;
		if (placeholder(t, len, i, &at, &n, &next, &why) < 0 ||
		    (v = ipxe_var_lookup(t + at, n)) < 0)
			return -EINVAL; /* ipxe_template_check let it through: cannot be */
		if (buf_append(out, t + lit, i - lit) < 0 || (vals[v] && buf_puts(out, vals[v]) < 0))
			return -E2BIG;
		i = lit = next;
	}
	return buf_append(out, t + lit, len - lit) < 0 ? -E2BIG : 0;
}
