/* config-checks — the rules run after the walk of ironbell.yaml.
 *
 * DESIGN. The walker (config.c) checks each value on its own, against its
 * row's type and range. What it cannot see from one value is here: the
 * rules that tie several keys together (api.listen needs api.token_file,
 * and TLS unless it is a loopback address; api.tls_cert and api.tls_key go
 * together) and those that read a file a key names, so that the snapshot
 * holds its contents and a bad file stops the load rather than a later
 * request (the bearer token, the TLS certificate and key, the iPXE script
 * template). Each rule is one function in cfg_checks[], run in order by
 * cfg_run_checks() with the marks of the rows the file set, so a message
 * points at the value at fault. The bounded file reader, which also reads
 * ironbell.yaml itself for config_load(), lives here with the rules that
 * read files: it opens only regular files when asked, at most max bytes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/net.h"
#include "daemon/config/conf.h"
#include "daemon/config/config-internal.h"
#include "ipxe/ipxe.h"

/* See config-internal.h. */
int cfg_read_file(const char *path, size_t max, bool regular_only, char **ret, size_t *ret_len)
{
	struct stat st;
	char *data = NULL;
	size_t len = 0;
	int r;
	if (regular_only) {
		if (stat(path, &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode))
			return -EBADF;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (regular_only ? O_NONBLOCK : 0));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (regular_only && !S_ISREG(st.st_mode)) {
		r = -EBADF;
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		r = -EFBIG;
		goto out;
	}
	data = malloc(max + 2);
	if (!data) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t got = read(fd, data + len, max + 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
		if (len > max) {
			r = -EFBIG;
			goto out;
		}
	}
	data[len] = '\0';
	*ret = data;
	*ret_len = len;
	data = NULL;
	r = 0;
out:
	free(data);
	close(fd);
	return r;
}

/* Reads the file (at most max bytes, a regular file) that row name of
 * the table keys of section names into *ret (NUL-terminated, *ret_len
 * bytes, the caller's), refusing one that group or others may touch when
 * private. Returns 0, or a negative errno with the error reported at that
 * row's value. */
static int key_file(struct cfg_ctx *ctx, const char *section, const struct cfg_key *keys,
		    const char *name, const char *path, size_t max, bool private_, char **ret,
		    size_t *ret_len)
{
	char q[QUOTE_BUF];
	const yaml_mark_t *m = cfg_value_mark(ctx, keys, name);
	struct stat st;
	int r;

	cfg_quote(q, sizeof(q), path, strlen(path));
	r = cfg_read_file(path, max, true, ret, ret_len);
	if (r == -EBADF)
		return cfg_error(ctx, m, "%s.%s: %s is not a regular file", section, name, q);
	if (r == -EFBIG)
		return cfg_error(ctx, m, "%s.%s: %s is larger than %zu bytes", section, name, q,
				 max);
	if (r == -ENOMEM) {
		cfg_errorf(ctx->err, ctx->errlen, "%s: %s", ctx->name, strerror(ENOMEM));
		return r;
	}
	if (r < 0)
		return cfg_error(ctx, m, "%s.%s: cannot read %s: %s", section, name, q,
				 strerror(-r));
	if (private_ && stat(path, &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO))) {
		free(*ret);
		*ret = NULL;
		return cfg_error(ctx, m,
				 "%s.%s: %s may be read or written by its group or others "
				 "(mode %04o): make it 0600",
				 section, name, q, (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

/* True when host (of a "host:port" that net_split_hostport split) names
 * the loopback interface only: 127.0.0.0/8, ::1 or localhost. */
static bool is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (strcmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* api.tls_cert and api.tls_key: both or neither, read into api.tls_*_pem;
 * api.listen off the loopback interface needs them. */
static int check_api_tls(struct cfg_ctx *ctx, struct ib_config *c)
{
	char host[256];
	uint16_t port;
	size_t len;
	int r;

	if (!c->api.tls_cert != !c->api.tls_key)
		return cfg_error(
			ctx,
			cfg_value_mark(ctx, cfg_api_keys, c->api.tls_cert ? "tls_cert" : "tls_key"),
			"api.tls_cert and api.tls_key go together: set both or neither");
	if (c->api.listen && !c->api.tls_cert &&
	    (net_split_hostport(c->api.listen, host, sizeof(host), &port) < 0 ||
	     !is_loopback(host)))
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_api_keys, "listen"),
				 "api.listen %s is not a loopback address: it needs TLS "
				 "(api.tls_cert and api.tls_key)",
				 c->api.listen);
	if (!c->api.tls_cert)
		return 0;
	if ((r = key_file(ctx, "api", cfg_api_keys, "tls_cert", c->api.tls_cert, CFG_TLS_FILE_MAX,
			  false, &c->api.tls_cert_pem, &len)) < 0)
		return r;
	return key_file(ctx, "api", cfg_api_keys, "tls_key", c->api.tls_key, CFG_TLS_FILE_MAX, true,
			&c->api.tls_key_pem, &len);
}

/* api.listen needs a token; api.token_file is read into api.token: one
 * line of at least CFG_TOKEN_MIN visible characters, in a file that only
 * its owner may read. Then the TLS keys (check_api_tls). */
static int check_api(struct cfg_ctx *ctx, struct ib_config *c)
{
	char q[QUOTE_BUF];
	const yaml_mark_t *tf = cfg_value_mark(ctx, cfg_api_keys, "token_file");
	char *data = NULL;
	size_t len = 0;
	int r;

	if (c->api.listen && !c->api.token_file) {
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_api_keys, "listen"),
				 "api.listen is set but api.token_file is not: a TCP listener needs a bearer token");
	}
	if (!c->api.token_file)
		return check_api_tls(ctx, c);
	cfg_quote(q, sizeof(q), c->api.token_file, strlen(c->api.token_file));
	/* Whether others may read it is checked last, as it always was. */
	r = key_file(ctx, "api", cfg_api_keys, "token_file", c->api.token_file, CFG_TOKEN_MAX,
		     false, &data, &len);
	if (r < 0)
		return r;
	while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		data[--len] = '\0';
	if (len == 0) {
		r = cfg_error(ctx, tf, "api.token_file: %s is empty", q);
		goto out;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)data[i] <= 0x20 || (unsigned char)data[i] >= 0x7f) {
			r = cfg_error(ctx, tf,
				      "api.token_file: %s must hold one line of visible ASCII characters",
				      q);
			goto out;
		}
	if (len < CFG_TOKEN_MIN) {
		r = cfg_error(ctx, tf,
			      "api.token_file: the token in %s is %zu bytes long: it must have at "
			      "least %d",
			      q, len, CFG_TOKEN_MIN);
		goto out;
	}
	struct stat st;
	if (stat(c->api.token_file, &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO))) {
		r = cfg_error(ctx, tf,
			      "api.token_file: %s may be read or written by its group or others "
			      "(mode %04o): make it 0600",
			      q, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	c->api.token = data;
	data = NULL;
	r = check_api_tls(ctx, c);
out:
	free(data);
	return r;
}

/* http.listen's address, worked out once for the request path
 * (http.listen_ipv4). */
static int check_http(struct cfg_ctx *ctx, struct ib_config *c)
{
	char host[256];
	uint16_t port;
	struct in_addr in;

	(void)ctx;
	c->http.listen_ipv4 = 0;
	if (c->http.listen &&
	    net_split_hostport(c->http.listen, host, sizeof(host), &port) == 0 &&
	    inet_pton(AF_INET, host, &in) == 1)
		c->http.listen_ipv4 = ntohl(in.s_addr);
	return 0;
}

/* store.commit_delay 0 turns the delay off; for the store, an option of 0
 * means its default. */
static int check_store(struct cfg_ctx *ctx, struct ib_config *c)
{
	(void)ctx;
	c->store.no_commit_delay = c->store.commit_delay == 0;
	return 0;
}

/* ipxe.script_template is read into ipxe.script and checked: a template
 * the daemon could not render stops the load, with the file's own line and
 * column. */
static int check_ipxe(struct cfg_ctx *ctx, struct ib_config *c)
{
	char q[QUOTE_BUF], why[256];
	const yaml_mark_t *m = cfg_value_mark(ctx, cfg_ipxe_keys, "script_template");
	char *data = NULL;
	size_t len = 0;
	int r;

	if (!c->ipxe.script_template)
		return 0;
	cfg_quote(q, sizeof(q), c->ipxe.script_template, strlen(c->ipxe.script_template));
	r = key_file(ctx, "ipxe", cfg_ipxe_keys, "script_template", c->ipxe.script_template,
		     IPXE_TEMPLATE_MAX, false, &data, &len);
	if (r < 0)
		return r;
	if (ipxe_template_check(data, len, why, sizeof(why)) < 0) {
		free(data);
		return cfg_error(ctx, m, "ipxe.script_template: %s: %s", q, why);
	}
	c->ipxe.script = data;
	c->ipxe.script_len = len;
	return 0;
}

/* bmc.ipmi.cipher_suite: the two suites the IPMI client speaks (IPMI v2.0
 * §22.15.2: 3 is HMAC-SHA1 + AES-CBC-128, 17 HMAC-SHA256 + AES-CBC-128);
 * bmc.redfish.ca_file: a regular file that can be read now, so that a typo
 * stops the start rather than every TLS connection to a BMC. */
static int check_bmc(struct cfg_ctx *ctx, struct ib_config *c)
{
	char *data = NULL;
	size_t len = 0;
	int r;

	if (c->bmc.ipmi.cipher_suite != 3 && c->bmc.ipmi.cipher_suite != 17)
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_bmc_ipmi_keys, "cipher_suite"),
				 "bmc.ipmi.cipher_suite: %u is not a cipher suite the IPMI client "
				 "speaks (3 or 17)",
				 c->bmc.ipmi.cipher_suite);
	if (!c->bmc.redfish.ca_file)
		return 0;
	r = key_file(ctx, "bmc.redfish", cfg_bmc_redfish_keys, "ca_file", c->bmc.redfish.ca_file,
		     CFG_CA_FILE_MAX, false, &data, &len);
	free(data);
	return r;
}

/* workflow.retry_backoff: the first wait cannot be longer than the
 * longest (workflow.retry_backoff_max), or the doubling would shorten it. */
static int check_workflow(struct cfg_ctx *ctx, struct ib_config *c)
{
	if (c->workflow.retry_base_s > c->workflow.retry_max_s)
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_workflow_keys, "retry_backoff"),
				 "workflow.retry_backoff: %u is longer than "
				 "workflow.retry_backoff_max (%u)",
				 c->workflow.retry_base_s, c->workflow.retry_max_s);
	return 0;
}

/* grpc.tls_cert and grpc.tls_key: both or neither (the worker API reads
 * them when it starts, before the daemon drops its privileges). */
static int check_grpc(struct cfg_ctx *ctx, struct ib_config *c)
{
	if (!c->grpc.tls_cert != !c->grpc.tls_key)
		return cfg_error(
			ctx,
			cfg_value_mark(ctx, cfg_grpc_keys, c->grpc.tls_cert ? "tls_cert" : "tls_key"),
			"grpc.tls_cert and grpc.tls_key go together: set both or neither");
	return 0;
}

/* kube: the Lease's timings nest (a holder stops acting before others
 * may take the Lease, and tries again before it gives up), and
 * kube.status_schema is one of its three words. */
static int check_kube(struct cfg_ctx *ctx, struct ib_config *c)
{
	const char *s = c->kube.status_schema;
	if (s && strcmp(s, "auto") != 0 && strcmp(s, "monorepo") != 0 && strcmp(s, "legacy") != 0)
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_kube_keys, "status_schema"),
				 "kube.status_schema: \"%s\" is not auto, monorepo or legacy", s);
	if (c->kube.renew_deadline_s >= c->kube.lease_duration_s)
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_kube_keys, "renew_deadline"),
				 "kube.renew_deadline: %u must be less than kube.lease_duration "
				 "(%u)",
				 c->kube.renew_deadline_s, c->kube.lease_duration_s);
	if (c->kube.retry_period_s >= c->kube.renew_deadline_s)
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_kube_keys, "retry_period"),
				 "kube.retry_period: %u must be less than kube.renew_deadline (%u)",
				 c->kube.retry_period_s, c->kube.renew_deadline_s);
	if (c->kube.backoff_min_ms > c->kube.backoff_max_ms)
		return cfg_error(ctx, cfg_value_mark(ctx, cfg_kube_keys, "backoff_min"),
				 "kube.backoff_min: %u is longer than kube.backoff_max (%u)",
				 c->kube.backoff_min_ms, c->kube.backoff_max_ms);
	return 0;
}

typedef int (*cfg_check_fn)(struct cfg_ctx *ctx, struct ib_config *c);
static const cfg_check_fn cfg_checks[] = { check_api,  check_http,     check_store, check_ipxe,
					   check_bmc,  check_workflow, check_grpc,  check_kube };

/* See config-internal.h: each rule in turn, the first error stops. */
int cfg_run_checks(struct cfg_ctx *ctx, struct ib_config *c)
{
	for (size_t i = 0; i < sizeof(cfg_checks) / sizeof(cfg_checks[0]); i++) {
		int r = cfg_checks[i](ctx, c);
		if (r < 0)
			return r;
	}
	return 0;
}
