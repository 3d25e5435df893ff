/* check_config — unit tests for ironbell.yaml loading (daemon/config/config.c).
 *
 * The test includes config.c itself rather than linking libconfig.a, so it
 * can walk the key table: every row must be documented in
 * man/ironbell.yaml.5 and set to its default in etc/ironbell.yaml, and two
 * snapshots are compared row by row. A row added later is then covered
 * without touching this file. Messages are asserted whole, with the file
 * name, line and column. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/config/config.c"
#include "tests/unit/unit.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define NAME "t.yaml"
#define BAD_PTR ((struct ib_config *)(uintptr_t)1)

/* ---- helpers ---- */

/* The dotted name of the first row where a and b differ, or NULL. */
static const char *cfg_diff(const struct cfg_key *keys, const char *prefix,
			    const struct ib_config *a, const struct ib_config *b)
{
	static char full[256];
	for (const struct cfg_key *k = keys; k->name; k++) {
		snprintf(full, sizeof(full), "%s%s%s", prefix, prefix[0] ? "." : "", k->name);
		if (k->type == CFG_SECTION) {
			char sub[256];
			snprintf(sub, sizeof(sub), "%s", full);
			const char *d = cfg_diff(k->section, sub, a, b);
			if (d)
				return d;
			continue;
		}
		const char *fa = (const char *)a + k->offset, *fb = (const char *)b + k->offset;
		if (cfg_types[k->type].owns_string) {
			const char *sa = *(char *const *)fa, *sb = *(char *const *)fb;
			if ((sa == NULL) != (sb == NULL) || (sa && strcmp(sa, sb) != 0))
				return full;
		} else if (memcmp(fa, fb, k->size) != 0) {
			return full;
		}
	}
	return NULL;
}

/* Every row that is not a section, at any depth, with the dotted path of
 * the section it is in ("" at the top level). */
struct leaf {
	const struct cfg_key *k;
	char section[64];
};
#define MAX_LEAVES 256

static size_t cfg_leaves(const struct cfg_key *keys, const char *prefix, struct leaf *out,
			 size_t n)
{
	for (const struct cfg_key *k = keys; k->name; k++) {
		if (k->type == CFG_SECTION) {
			char sub[64];
			snprintf(sub, sizeof(sub), "%s%s%s", prefix, prefix[0] ? "." : "", k->name);
			n = cfg_leaves(k->section, sub, out, n);
			continue;
		}
		ck_assert_uint_lt(n, MAX_LEAVES);
		out[n].k = k;
		snprintf(out[n].section, sizeof(out[n].section), "%s", prefix);
		n++;
	}
	return n;
}

static int load(const char *text, struct ib_config **ret, char *err, size_t errlen)
{
	return config_load_string(NAME, text, strlen(text), ret, err, errlen);
}

/* Loads text, which must succeed. */
static struct ib_config *load_ok(const char *text)
{
	char err[512] = "";
	struct ib_config *c = NULL;
	int r = load(text, &c, err, sizeof(err));
	ck_assert_msg(r == 0, "load failed: %d %s", r, err);
	ck_assert_ptr_nonnull(c);
	return c;
}

/* Loads text, which must fail with errno e and exactly the message want;
 * *ret must stay untouched. */
static void load_fails(const char *text, size_t len, int e, const char *want)
{
	char err[512] = "";
	struct ib_config *c = BAD_PTR;
	int r = config_load_string(NAME, text, len, &c, err, sizeof(err));
	ck_assert_int_eq(r, e);
	ck_assert_ptr_eq(c, BAD_PTR);
	ck_assert_str_eq(err, want);
}

static char tmpdir[256];

static void tmp_setup(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/check_config.XXXXXX", t && t[0] == '/' ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
	static const char *const names[] = { "token", "empty", "crlf", "space", "big",
					     "c.yaml", "huge.yaml", "dir", "short",
					     "cert.pem", "key.pem" };
	char p[512];
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, names[i]);
		if (unlink(p) < 0)
			rmdir(p);
	}
	rmdir(tmpdir);
}

/* Writes n bytes of data to tmpdir/name; returns the path (static). */
static const char *tmp_file(const char *name, const char *data, size_t n)
{
	static char p[512];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(p, 0600), 0); /* a token file must be private */
	return p;
}

/* Reads top_srcdir/rel into a new string. */
static char *read_src(const char *rel)
{
	const char *top = getenv("top_srcdir");
	char p[1024], *data = NULL;
	size_t len = 0;
	ck_assert_msg(top != NULL, "top_srcdir is not set");
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	ck_assert_msg(cfg_read_file(p, 1 << 20, true, &data, &len) == 0, "cannot read %s", p);
	return data;
}

/* ---- defaults and good files ---- */

START_TEST(test_defaults)
{
	struct ib_config *d = config_new_default();
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_null(d->path);
	ck_assert_int_eq(d->log_level, LOG_LVL_INFO);
	ck_assert_str_eq(d->state_dir, "/var/lib/ironbell");
	ck_assert_str_eq(d->api.socket, "/run/ironbell/api.sock");
	ck_assert_uint_eq(d->api.socket_mode, 0660);
	ck_assert_ptr_null(d->api.listen);
	ck_assert_ptr_null(d->api.token_file);
	ck_assert_ptr_null(d->api.token);
	ck_assert_str_eq(d->http.listen, "0.0.0.0:7080");
	ck_assert_uint_eq(d->http.threads, 0);
	ck_assert_uint_eq(d->http.max_body, 8 * 1024 * 1024);
	ck_assert_uint_eq(d->http.idle_timeout, 120);
	ck_assert(d->http.public_metrics); /* /metrics stays on the public listener */
	ck_assert(d->http.answer_cache);
	ck_assert(d->http.answer_prebuild);
	ck_assert(d->http.pin_threads);
	ck_assert_ptr_null(d->api.tls_cert);
	ck_assert_ptr_null(d->api.tls_key);
	ck_assert_ptr_null(d->api.tls_cert_pem);
	ck_assert_uint_eq(d->store.changes_retention, 100000);
	ck_assert_uint_eq(d->store.events_retention, 10000);
	ck_assert_uint_eq(d->store.batch_max, 1024);
	ck_assert_uint_eq(d->store.commit_delay, 500);
	ck_assert(!d->store.no_commit_delay);
	ck_assert(!d->dhcp.enabled);
	ck_assert_int_eq(d->dhcp.mode, CONFIG_DHCP_RESERVATION);
	ck_assert_uint_eq(d->dhcp.interfaces.n, 0);
	ck_assert_uint_eq(d->dhcp.server_address, 0);
	ck_assert_uint_eq(d->dhcp.public_address, 0);
	ck_assert_uint_eq(d->dhcp.tftp_address, 0);
	ck_assert_ptr_null(d->dhcp.http_base_url);
	ck_assert_uint_eq(d->dhcp.syslog_address, 0);
	ck_assert_uint_eq(d->dhcp.lease_time, 86400);
	ck_assert_uint_eq(d->dhcp.lease_reuse, 25);
	ck_assert_uint_eq(d->dhcp.arch.n, 0);
	ck_assert(d->dhcp.subnet_check);
	ck_assert(d->bmc.enabled);
	ck_assert_uint_eq(d->ipxe.max_downloads_per_client, 4);
	ck_assert_uint_eq(d->bmc.ipmi.cipher_suite, 3);
	ck_assert_uint_eq(d->bmc.ipmi.timeout_ms, 1000);
	ck_assert_uint_eq(d->bmc.ipmi.retries, 3);
	ck_assert_uint_eq(d->bmc.ipmi.max_sessions, 4096);
	ck_assert_uint_eq(d->bmc.redfish.timeout_ms, 20000);
	ck_assert_uint_eq(d->bmc.redfish.max_connections, 128);
	ck_assert_ptr_null(d->bmc.redfish.ca_file);
	ck_assert_uint_eq(d->bmc.poll_interval_s, 30);
	ck_assert_uint_eq(d->bmc.task_timeout_s, 600);
	ck_assert_uint_eq(d->bmc.max_jobs, 64);
	ck_assert_uint_eq(d->bmc.verify_interval_ms, 1000);
	ck_assert(d->workflow.enabled);
	ck_assert_uint_eq(d->workflow.resync_s, 60);
	ck_assert_uint_eq(d->workflow.default_action_timeout_s, 3600);
	ck_assert_uint_eq(d->workflow.action_grace_s, 30);
	ck_assert_uint_eq(d->workflow.retry_base_s, 5);
	ck_assert_uint_eq(d->workflow.retry_max_s, 300);
	ck_assert(d->grpc.enabled);
	ck_assert_str_eq(d->grpc.listen, ":42113");
	ck_assert_ptr_null(d->grpc.tls_cert);
	ck_assert_ptr_null(d->grpc.tls_key);
	ck_assert_uint_eq(d->grpc.max_connections, 4096);
	ck_assert_uint_eq(d->grpc.max_message, 1024 * 1024);
	ck_assert_uint_eq(d->grpc.max_streams, 16);
	ck_assert_uint_eq(d->grpc.long_poll_s, 20);
	ck_assert_uint_eq(d->grpc.idle_timeout_s, 300);
	config_free(d);
	config_free(NULL);
}
END_TEST

/* Files that say nothing, or only null, give exactly the defaults. */
static const char *const empty_files[] = {
	"",
	"# only a comment\n\n",
	"---\n",
	"--- ~\n...\n",
	"{}\n",
	"api:\nhttp: ~\nstore: {}\n",
	"log_level:\nstate_dir: null\napi:\n  listen: ~\n  socket_mode: NULL\n",
	"dhcp:\n  enabled: ~\n  interfaces: []\n  arch: {}\n  server_address:\n",
	"dhcp:\n  interfaces: ~\n  arch: null\n  http_base_url: ~\n",
};

START_TEST(test_empty_is_default)
{
	struct ib_config *d = config_new_default();
	struct ib_config *c = load_ok(empty_files[_i]);
	ck_assert_str_eq(c->path, NAME);
	const char *diff = cfg_diff(cfg_top_keys, "", c, d);
	ck_assert_msg(diff == NULL, "%s differs from its default", diff ? diff : "");
	config_free(c);
	config_free(d);
}
END_TEST

START_TEST(test_every_key)
{
	char text[8192];
	char tok[512], tmpl[512], cert[512], key[512];
	snprintf(tok, sizeof(tok), "%s", tmp_file("token", "s3cr3t-T0ken-0123456789abcdefghij\n", 34));
	snprintf(tmpl, sizeof(tmpl), "%s", tmp_file("auto.ipxe", "#!ipxe\nchain {{base_url}}\n", 26));
	snprintf(cert, sizeof(cert), "%s", tmp_file("cert.pem", "CERT\n", 5));
	snprintf(key, sizeof(key), "%s", tmp_file("key.pem", "KEY\n", 4));
	snprintf(text, sizeof(text),
		 "log_level: debug\n"
		 "state_dir: /srv/ironbell\n"
		 "api:\n"
		 "  socket: '/run/ib/admin.sock'\n"
		 "  socket_mode: \"0600\"\n"
		 "  listen: \"[::1]:7443\"\n"
		 "  token_file: %s\n"
		 "  tls_cert: %s\n"
		 "  tls_key: %s\n"
		 "http:\n"
		 "  listen: 127.0.0.1:8080\n"
		 "  threads: 64\n"
		 "  max_body: 1 GiB\n"
		 "  idle_timeout: 86400\n"
		 "  public_metrics: false\n"
		 "  answer_cache: false\n"
		 "  answer_prebuild: false\n"
		 "  pin_threads: false\n"
		 "store:\n"
		 "  changes_retention: 1000\n"
		 "  events_retention: 10000000\n"
		 "  batch_max: 1\n"
		 "  commit_delay: 0\n"
		 "dhcp:\n"
		 "  enabled: true\n"
		 "  mode: auto-proxy\n"
		 "  interfaces: [eth0, \"bond0.100\", enp1s0f1np1xyz]\n"
		 "  server_address: 192.0.2.10\n"
		 "  public_address: \"198.51.100.7\"\n"
		 "  tftp_address: 10.0.0.1\n"
		 "  http_base_url: https://boot.example.com:8443/tb\n"
		 "  syslog_address: 203.0.113.255\n"
		 "  lease_time: 31536000\n"
		 "  lease_reuse: 0\n"
		 "  arch:\n"
		 "    7: snp-x86_64.efi\n"
		 "    \"0\": ipxe.efi\n"
		 "    65535: my_Boot-1.efi\n"
		 "  subnet_check: false\n"
		 "tftp:\n"
		 "  enabled: true\n"
		 "  listen: 10.0.0.1:6969\n"
		 "  max_transfers: 10000\n"
		 "  blksize_max: 65464\n"
		 "  windowsize_max: 64\n"
		 "  timeout: 255\n"
		 "  retries: 20\n"
		 "ipxe:\n"
		 "  binary_dir: /srv/ipxe\n"
		 "  script_template: %s\n"
		 "  osie_dir: /srv/osie\n"
		 "  osie_url: http://10.0.0.1:8080/hook\n"
		 "  kernel: vmlinuz\n"
		 "  initrd: initrd.img\n"
		 "  kernel_args: 'console=ttyS0,115200 quiet'\n"
		 "  grpc_authority: tink.example.com:42113\n"
		 "  syslog_host: 10.0.0.2\n"
		 "  tinkerbell_tls: true\n"
		 "  tinkerbell_insecure_tls: true\n"
		 "  retries: 100\n"
		 "  max_downloads_per_client: 0\n"
		 "metadata:\n"
		 "  trusted_proxies: [192.0.2.0/24, 10.1.2.3, \"2001:db8::/32\", 0.0.0.0/0]\n"
		 "syslog:\n"
		 "  enabled: true\n"
		 "  listen: :5514\n"
		 "  rate: 100000\n"
		 "  burst: 1\n"
		 "  max_message: 480\n"
		 "bmc:\n"
		 "  enabled: false\n"
		 "  ipmi:\n"
		 "    cipher_suite: 17\n"
		 "    timeout: 100\n"
		 "    retries: 10\n"
		 "    max_sessions: 1\n"
		 "  redfish:\n"
		 "    timeout: 600000\n"
		 "    max_connections: 65536\n"
		 "    ca_file: %s\n"
		 "  poll_interval: 86400\n"
		 "  task_timeout: 1\n"
		 "  max_jobs: 100000\n"
		 "  verify_interval: 60000\n"
		 "workflow:\n"
		 "  enabled: false\n"
		 "  resync_interval: 86400\n"
		 "  default_action_timeout: 31536000\n"
		 "  action_grace: 1\n"
		 "  retry_backoff: 1\n"
		 "  retry_backoff_max: 86400\n"
		 "grpc:\n"
		 "  enabled: false\n"
		 "  listen: 127.0.0.1:50051\n"
		 "  tls_cert: %s\n"
		 "  tls_key: %s\n"
		 "  max_connections: 1\n"
		 "  max_message: 64MiB\n"
		 "  max_streams: 1024\n"
		 "  long_poll: 3600\n"
		 "  idle_timeout: 1\n"
		 "kube:\n"
		 "  enabled: true\n"
		 "  kubeconfig: /etc/ironbell/kubeconfig\n"
		 "  context: prod\n"
		 "  namespace: tink-system\n"
		 "  qps: 10000\n"
		 "  burst: 1\n"
		 "  page_size: 10000\n"
		 "  watch_timeout: 3600\n"
		 "  backoff_min: 10\n"
		 "  backoff_max: 600000\n"
		 "  request_timeout: 1000\n"
		 "  write_delay: 60000\n"
		 "  leader_election: false\n"
		 "  lease_name: ib\n"
		 "  lease_namespace: leases\n"
		 "  identity: host-a\n"
		 "  lease_duration: 3600\n"
		 "  renew_deadline: 3599\n"
		 "  retry_period: 3598\n"
		 "  status_schema: legacy\n",
		 tok, cert, key, tmpl, cert, cert, key);
	struct ib_config *c = load_ok(text);
	ck_assert_str_eq(c->path, NAME);
	ck_assert_int_eq(c->log_level, LOG_LVL_DEBUG);
	ck_assert_str_eq(c->state_dir, "/srv/ironbell");
	ck_assert_str_eq(c->api.socket, "/run/ib/admin.sock");
	ck_assert_uint_eq(c->api.socket_mode, 0600);
	ck_assert_str_eq(c->api.listen, "[::1]:7443");
	ck_assert_str_eq(c->api.token_file, tok);
	ck_assert_str_eq(c->api.tls_cert, cert);
	ck_assert_str_eq(c->api.tls_key_pem, "KEY\n");
	ck_assert_str_eq(c->api.token, "s3cr3t-T0ken-0123456789abcdefghij");
	ck_assert_str_eq(c->http.listen, "127.0.0.1:8080");
	ck_assert_uint_eq(c->http.threads, 64);
	ck_assert_uint_eq(c->http.max_body, 1024 * 1024 * 1024);
	ck_assert_uint_eq(c->http.idle_timeout, 86400);
	ck_assert(!c->http.public_metrics);
	ck_assert(!c->http.answer_cache);
	ck_assert(!c->http.answer_prebuild);
	ck_assert(!c->http.pin_threads);
	ck_assert_uint_eq(c->store.changes_retention, 1000);
	ck_assert_uint_eq(c->store.events_retention, 10000000);
	ck_assert_uint_eq(c->store.batch_max, 1);
	ck_assert_uint_eq(c->store.commit_delay, 0);
	ck_assert(c->store.no_commit_delay);
	ck_assert(c->dhcp.enabled);
	ck_assert_int_eq(c->dhcp.mode, CONFIG_DHCP_AUTO_PROXY);
	ck_assert_uint_eq(c->dhcp.interfaces.n, 3);
	ck_assert_str_eq(c->dhcp.interfaces.name[0], "eth0");
	ck_assert_str_eq(c->dhcp.interfaces.name[1], "bond0.100");
	ck_assert_str_eq(c->dhcp.interfaces.name[2], "enp1s0f1np1xyz");
	ck_assert_uint_eq(c->dhcp.server_address, 0xc000020a);
	ck_assert_uint_eq(c->dhcp.public_address, 0xc6336407);
	ck_assert_uint_eq(c->dhcp.tftp_address, 0x0a000001);
	ck_assert_str_eq(c->dhcp.http_base_url, "https://boot.example.com:8443/tb");
	ck_assert_uint_eq(c->dhcp.syslog_address, 0xcb0071ff);
	ck_assert_uint_eq(c->dhcp.lease_time, 31536000);
	ck_assert_uint_eq(c->dhcp.lease_reuse, 0);
	ck_assert(!c->dhcp.subnet_check);
	ck_assert_uint_eq(c->dhcp.arch.n, 3);
	ck_assert_uint_eq(c->dhcp.arch.e[0].code, 7);
	ck_assert_str_eq(c->dhcp.arch.e[0].binary, "snp-x86_64.efi");
	ck_assert_uint_eq(c->dhcp.arch.e[1].code, 0);
	ck_assert_str_eq(c->dhcp.arch.e[1].binary, "ipxe.efi");
	ck_assert_uint_eq(c->dhcp.arch.e[2].code, 65535);
	ck_assert_str_eq(c->dhcp.arch.e[2].binary, "my_Boot-1.efi");
	ck_assert(c->tftp.enabled);
	ck_assert_str_eq(c->tftp.listen, "10.0.0.1:6969");
	ck_assert_uint_eq(c->tftp.max_transfers, 10000);
	ck_assert_uint_eq(c->tftp.blksize_max, 65464);
	ck_assert_uint_eq(c->tftp.windowsize_max, 64);
	ck_assert_uint_eq(c->tftp.timeout, 255);
	ck_assert_uint_eq(c->tftp.retries, 20);
	ck_assert_str_eq(c->ipxe.binary_dir, "/srv/ipxe");
	ck_assert_str_eq(c->ipxe.script, "#!ipxe\nchain {{base_url}}\n");
	ck_assert_uint_eq(c->ipxe.script_len, 26);
	ck_assert_str_eq(c->ipxe.kernel_args, "console=ttyS0,115200 quiet");
	ck_assert_str_eq(c->ipxe.grpc_authority, "tink.example.com:42113");
	ck_assert(c->ipxe.tinkerbell_tls && c->ipxe.tinkerbell_insecure_tls);
	ck_assert_uint_eq(c->ipxe.max_downloads_per_client, 0);
	ck_assert_uint_eq(c->syslog.max_message, 480);
	ck_assert_uint_eq(c->metadata.trusted_proxies.n, 4);
	ck_assert_uint_eq(c->metadata.trusted_proxies.e[0].prefix, 24);
	ck_assert_uint_eq(c->metadata.trusted_proxies.e[1].prefix, 32);
	ck_assert_uint_eq(c->metadata.trusted_proxies.e[1].addr[3], 3);
	ck_assert_uint_eq(c->metadata.trusted_proxies.e[2].family, AF_INET6);
	ck_assert_uint_eq(c->metadata.trusted_proxies.e[3].prefix, 0);
	ck_assert_uint_eq(c->syslog.burst, 1);
	ck_assert(!c->bmc.enabled);
	ck_assert_uint_eq(c->bmc.ipmi.cipher_suite, 17);
	ck_assert_uint_eq(c->bmc.ipmi.timeout_ms, 100);
	ck_assert_uint_eq(c->bmc.ipmi.retries, 10);
	ck_assert_uint_eq(c->bmc.ipmi.max_sessions, 1);
	ck_assert_uint_eq(c->bmc.redfish.timeout_ms, 600000);
	ck_assert_uint_eq(c->bmc.redfish.max_connections, 65536);
	ck_assert_str_eq(c->bmc.redfish.ca_file, cert);
	ck_assert_uint_eq(c->bmc.poll_interval_s, 86400);
	ck_assert_uint_eq(c->bmc.task_timeout_s, 1);
	ck_assert_uint_eq(c->bmc.max_jobs, 100000);
	ck_assert_uint_eq(c->bmc.verify_interval_ms, 60000);
	ck_assert(!c->workflow.enabled);
	ck_assert_uint_eq(c->workflow.resync_s, 86400);
	ck_assert_uint_eq(c->workflow.default_action_timeout_s, 31536000);
	ck_assert_uint_eq(c->workflow.action_grace_s, 1);
	ck_assert_uint_eq(c->workflow.retry_base_s, 1);
	ck_assert_uint_eq(c->workflow.retry_max_s, 86400);
	ck_assert(!c->grpc.enabled);
	ck_assert_str_eq(c->grpc.listen, "127.0.0.1:50051");
	ck_assert_str_eq(c->grpc.tls_cert, cert);
	ck_assert_str_eq(c->grpc.tls_key, key);
	ck_assert_uint_eq(c->grpc.max_connections, 1);
	ck_assert_uint_eq(c->grpc.max_message, 64 * 1024 * 1024);
	ck_assert_uint_eq(c->grpc.max_streams, 1024);
	ck_assert_uint_eq(c->grpc.long_poll_s, 3600);
	ck_assert_uint_eq(c->grpc.idle_timeout_s, 1);
	ck_assert(c->kube.enabled && !c->kube.leader_election);
	ck_assert_str_eq(c->kube.kubeconfig, "/etc/ironbell/kubeconfig");
	ck_assert_str_eq(c->kube.namespace_, "tink-system");
	ck_assert_uint_eq(c->kube.qps, 10000);
	ck_assert_uint_eq(c->kube.renew_deadline_s, 3599);
	ck_assert_str_eq(c->kube.status_schema, "legacy");
	/* Every row differs from its default, so the test above saw them all. */
	struct ib_config *d = config_new_default();
	static struct leaf leaves[MAX_LEAVES];
	size_t nleaves = cfg_leaves(cfg_top_keys, "", leaves, 0);
	for (size_t i = 0; i < nleaves; i++) {
		const struct cfg_key *k = leaves[i].k;
		const char *fa = (const char *)c + k->offset, *fd = (const char *)d + k->offset;
		if (cfg_types[k->type].owns_string) {
			const char *sa = *(char *const *)fa, *sd = *(char *const *)fd;
			ck_assert_msg(sa && (!sd || strcmp(sa, sd) != 0), "%s.%s kept its default",
				      leaves[i].section, k->name);
		} else {
			ck_assert_msg(memcmp(fa, fd, k->size) != 0, "%s.%s kept its default",
				      leaves[i].section, k->name);
		}
	}
	config_free(d);
	config_free(c);
}
END_TEST

/* Values that are good, and what they read as. */
START_TEST(test_good_values)
{
	struct ib_config *c;
	c = load_ok("api:\n  socket_mode: 0640\n");
	ck_assert_uint_eq(c->api.socket_mode, 0640);
	config_free(c);
	c = load_ok("api:\n  socket_mode: 600\n"); /* octal, as chmod reads it */
	ck_assert_uint_eq(c->api.socket_mode, 0600);
	config_free(c);
	c = load_ok("log_level: warning\n");
	ck_assert_int_eq(c->log_level, LOG_LVL_WARN);
	config_free(c);
	c = load_ok("http:\n  threads: \"8\"\n  max_body: 65536\n");
	ck_assert_uint_eq(c->http.threads, 8);
	ck_assert_uint_eq(c->http.max_body, 65536);
	config_free(c);
	c = load_ok("http:\n  max_body: 1KiB\n");
	ck_assert_uint_eq(c->http.max_body, 1024);
	config_free(c);
	c = load_ok("http:\n  max_body: 16MiB\n");
	ck_assert_uint_eq(c->http.max_body, 16 << 20);
	config_free(c);
	static const char *const listens[] = { ":7080", "[::]:80", "localhost:65535",
					       "boot-1.lab_x:80", "10.0.0.1:080" };
	for (size_t i = 0; i < ARRAY_SIZE(listens); i++) {
		char text[128];
		snprintf(text, sizeof(text), "http:\n  listen: \"%s\"\n", listens[i]);
		c = load_ok(text);
		ck_assert_str_eq(c->http.listen, listens[i]);
		config_free(c);
	}
	/* 107 bytes fit sun_path with its NUL. */
	char text[256], path[108];
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	snprintf(text, sizeof(text), "api:\n  socket: %s\n", path);
	c = load_ok(text);
	ck_assert_str_eq(c->api.socket, path);
	config_free(c);
	c = load_ok("dhcp:\n  enabled: \"false\"\n  mode: proxy\n  lease_time: 60\n"
		    "  http_base_url: http://10.1.2.3\n  interfaces:\n    - eth1\n");
	ck_assert(!c->dhcp.enabled);
	ck_assert_int_eq(c->dhcp.mode, CONFIG_DHCP_PROXY);
	ck_assert_uint_eq(c->dhcp.lease_time, 60);
	ck_assert_str_eq(c->dhcp.http_base_url, "http://10.1.2.3");
	ck_assert_uint_eq(c->dhcp.interfaces.n, 1);
	ck_assert_str_eq(c->dhcp.interfaces.name[0], "eth1");
	config_free(c);
	c = load_ok("dhcp:\n  mode: reservation\n  server_address: 1.0.0.1\n"
		    "  arch: {00041: snp.efi}\n");
	ck_assert_int_eq(c->dhcp.mode, CONFIG_DHCP_RESERVATION);
	ck_assert_uint_eq(c->dhcp.server_address, 0x01000001);
	ck_assert_uint_eq(c->dhcp.arch.n, 1);
	ck_assert_uint_eq(c->dhcp.arch.e[0].code, 41);
	ck_assert_str_eq(c->dhcp.arch.e[0].binary, "snp.efi");
	config_free(c);
	/* Anchors and aliases resolve. */
	c = load_ok("state_dir: &d /srv/x\napi:\n  socket: *d\n");
	ck_assert_str_eq(c->api.socket, "/srv/x");
	config_free(c);
}
END_TEST

START_TEST(test_example_file)
{
	const char *top = getenv("top_srcdir");
	char path[1024], err[512] = "";
	struct ib_config *c = NULL;
	ck_assert_msg(top != NULL, "top_srcdir is not set");
	snprintf(path, sizeof(path), "%s/etc/ironbell.yaml", top);
	int r = config_load(path, &c, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_str_eq(c->path, path);
	struct ib_config *d = config_new_default();
	const char *diff = cfg_diff(cfg_top_keys, "", c, d);
	ck_assert_msg(diff == NULL, "etc/ironbell.yaml: %s is not the default", diff ? diff : "");
	config_free(d);
	config_free(c);
}
END_TEST

/* Finds in the example the line that sets key: at the top level when
 * section is "", else "  key: value" under "section:" (nested sections,
 * dotted, indent two spaces more each: "    key" under "a:" and "  b:"
 * for "a.b"); "#key: value" at the same indentation when commented.
 * Returns the value without quotes (static) or NULL. */
static const char *example_value(const char *text, const char *section, const char *key,
				 bool commented)
{
	static char val[256];
	char stack[8][64] = { { 0 } }, path[256];
	size_t depth = 0, klen = strlen(key);
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		size_t ind = strspn(l, " ");
		const char *s = l + ind;
		size_t level = ind / 2;
		if (ind < len && s[0] != '#' && level < 8) {
			/* A row: the sections it is in are the first level ones. */
			depth = level < depth ? level : depth;
			size_t nlen = strcspn(s, ":");
			const char *after = s + nlen + 1;
			if (nlen < len - ind && (after >= l + len || after[strspn(after, " ")] == '#' ||
						 after + strspn(after, " ") >= l + len) &&
			    depth == level && nlen < sizeof(stack[0])) {
				snprintf(stack[depth], sizeof(stack[0]), "%.*s", (int)nlen, s);
				depth++;
			}
		}
		path[0] = '\0';
		for (size_t i = 0; i < level && i < depth; i++)
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s",
				 i ? "." : "", stack[i]);
		if (level <= depth && strcmp(path, section) == 0 && ind % 2 == 0 &&
		    (s[0] == '#') == commented) {
			s += commented;
			if (strncmp(s, key, klen) == 0 && s[klen] == ':') {
				s += klen + 1;
				s += strspn(s, " ");
				size_t n = (size_t)(l + len - s);
				while (n > 0 && s[n - 1] == ' ')
					n--;
				if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
					s++;
					n -= 2;
				}
				snprintf(val, sizeof(val), "%.*s", (int)n, s);
				return val;
			}
		}
		l += len + (nl != NULL);
	}
	return NULL;
}

/* Every row is in etc/ironbell.yaml: set to its default, or commented out
 * when it has none. */
START_TEST(test_example_has_every_key)
{
	char *text = read_src("etc/ironbell.yaml");
	static struct leaf leaves[MAX_LEAVES];
	size_t nleaves = cfg_leaves(cfg_top_keys, "", leaves, 0);
	for (size_t i = 0; i < nleaves; i++) {
		const struct cfg_key *k = leaves[i].k;
		bool top = leaves[i].section[0] == '\0';
		const char *v = example_value(text, leaves[i].section, k->name, !top && !k->def);
		ck_assert_msg(v != NULL, "%s%s%s is not in the example", leaves[i].section,
			      top ? "" : ".", k->name);
		if (k->def)
			ck_assert_str_eq(v, k->def);
	}
	free(text);
}
END_TEST

/* Every row has an entry in the man page that gives its default. */
START_TEST(test_man_page_has_every_key)
{
	char *man = read_src("man/ironbell.yaml.5");
	char want[256];
	static struct leaf leaves[MAX_LEAVES];
	size_t nleaves = cfg_leaves(cfg_top_keys, "", leaves, 0);
	for (const struct cfg_key *s = cfg_top_keys; s->name; s++) {
		if (s->type == CFG_SECTION) {
			snprintf(want, sizeof(want), "\n.Ss The %s section\n", s->name);
			ck_assert_msg(strstr(man, want) != NULL, "no %s", want + 1);
		}
	}
	for (size_t i = 0; i < nleaves; i++) {
		const struct cfg_key *k = leaves[i].k;
		if (leaves[i].section[0])
			snprintf(want, sizeof(want), "\n.It Cm %s.%s ", leaves[i].section,
				 k->name);
		else
			snprintf(want, sizeof(want), "\n.It Cm %s ", k->name);
		const char *at = strstr(man, want);
		ck_assert_msg(at != NULL, "the man page has no entry %s", want + 1);
		const char *end = strstr(at + 1, "\n.It ");
		const char *el = strstr(at + 1, "\n.El");
		if (!end || (el && el < end))
			end = el;
		/* "Default:", maybe a macro and a quote, then the default
		 * (or "unset") as a whole word. */
		const char *d = strstr(at, "Default:");
		ck_assert_msg(d && (!end || d < end), "%s has no default", want + 1);
		d += strlen("Default:");
		d += strspn(d, " \n");
		if (d[0] == '.')
			d += strcspn(d, " ") + 1;
		if (strncmp(d, "\\(dq", 4) == 0)
			d += 4;
		const char *v = k->def ? k->def : "unset";
		ck_assert_msg(strncmp(d, v, strlen(v)) == 0 && !isalnum((unsigned char)d[strlen(v)]),
			      "%s: the default is not %s", want + 1, v);
	}
	free(man);
}
END_TEST

/* ---- errors ---- */

static const struct {
	const char *text;
	const char *err;
} bad_files[] = {
	/* unknown keys */
	{ "foo: 1\n",
	  NAME ":1:1: unknown key \"foo\" (valid keys: log_level, state_dir, api, http, store, dhcp, "
	       "tftp, ipxe, metadata, syslog, bmc, workflow, grpc, kube)" },
	{ "api:\n  socket: /run/x.sock\n  foo: 1\n",
	  NAME ":3:3: unknown key \"foo\" in \"api\" (valid keys: socket, socket_mode, listen, token_file, "
	       "tls_cert, tls_key)" },
	{ "store:\n  Batch_max: 3\n",
	  NAME ":2:3: unknown key \"Batch_max\" in \"store\" (valid keys: changes_retention, "
	       "events_retention, batch_max, commit_delay)" },
	{ "store:\n  commit_delay: 100001\n",
	  NAME ":2:17: store.commit_delay: 100001 is out of range 0..100000" },
	{ "\"a\\0b\": 1\n", NAME ":1:1: unknown key \"a\\x00b\" (valid keys: log_level, state_dir, "
			      "api, http, store, dhcp, tftp, ipxe, metadata, syslog, bmc, workflow, grpc, "
			      "kube)" },
	{ "<<: {log_level: info}\n", NAME ":1:1: unknown key \"<<\" (valid keys: log_level, "
				       "state_dir, api, http, store, dhcp, tftp, ipxe, metadata, syslog, bmc, "
				       "workflow, grpc, kube)" },
	/* the worker API's certificate without its key */
	{ "grpc:\n  tls_cert: /etc/x.pem\n",
	  NAME ":2:13: grpc.tls_cert and grpc.tls_key go together: set both or neither" },
	/* prefixes */
	{ "metadata:\n  trusted_proxies: [10.0.0.1/8]\n",
	  NAME ":2:21: metadata.trusted_proxies: \"10.0.0.1/8\" has bits set past its /8 prefix "
	       "(did you mean the network?)" },
	{ "metadata:\n  trusted_proxies: [10.0.0.0/33]\n",
	  NAME ":2:21: metadata.trusted_proxies: \"10.0.0.0/33\" is not an address or an "
	       "address/prefix like 192.0.2.0/24" },
	{ "metadata:\n  trusted_proxies: [\"10.0.0.0/+8\"]\n",
	  NAME ":2:21: metadata.trusted_proxies: \"10.0.0.0/+8\" is not an address or an "
	       "address/prefix like 192.0.2.0/24" },
	{ "metadata:\n  trusted_proxies: [proxy.example]\n",
	  NAME ":2:21: metadata.trusted_proxies: \"proxy.example\" is not an address or an "
	       "address/prefix like 192.0.2.0/24" },
	/* free text */
	{ "ipxe:\n  kernel_args: \"a\\tb\"\n",
	  NAME ":2:16: ipxe.kernel_args: \"a\\x09b\" holds a character that is not printable ASCII "
	       "(at byte 2)" },
	{ "ipxe:\n  kernel: \"é\"\n",
	  NAME ":2:11: ipxe.kernel: \"\\xc3\\xa9\" holds a character that is not printable ASCII "
	       "(at byte 1)" },
	{ "tftp:\n  blksize_max: 511\n", NAME ":2:16: tftp.blksize_max: 511 is out of range 512..65464" },
	{ "syslog:\n  max_message: 64KiB\n",
	  NAME ":2:16: syslog.max_message: 64KiB is out of range 480..65535" },
	/* bmc: */
	{ "bmc:\n  ipmi:\n    cipher_suite: 4\n",
	  NAME ":3:19: bmc.ipmi.cipher_suite: 4 is not a cipher suite the IPMI client speaks "
	       "(3 or 17)" },
	{ "bmc:\n  ipmi:\n    cipher_suite: 18\n",
	  NAME ":3:19: bmc.ipmi.cipher_suite: 18 is out of range 3..17" },
	{ "bmc:\n  ipmi:\n    timeout: 99\n",
	  NAME ":3:14: bmc.ipmi.timeout: 99 is out of range 100..60000" },
	{ "bmc:\n  ipmi:\n    retries: 0\n",
	  NAME ":3:14: bmc.ipmi.retries: 0 is out of range 1..10" },
	{ "bmc:\n  redfish:\n    timeout: 10s\n",
	  NAME ":3:14: bmc.redfish.timeout: \"10s\" is not an integer" },
	{ "bmc:\n  redfish:\n    ca_file: /nonexistent/ca.pem\n",
	  NAME ":3:14: bmc.redfish.ca_file: cannot read \"/nonexistent/ca.pem\": No such file or "
	       "directory" },
	{ "bmc:\n  redfish:\n    ca_file: etc/ca.pem\n",
	  NAME ":3:14: bmc.redfish.ca_file: \"etc/ca.pem\" is not an absolute path" },
	{ "bmc:\n  poll_interval: 0\n",
	  NAME ":2:18: bmc.poll_interval: 0 is out of range 1..86400" },
	{ "bmc:\n  max_jobs: 100001\n", NAME ":2:13: bmc.max_jobs: 100001 is out of range 1..100000" },
	{ "bmc:\n  ipmi: 3\n", NAME ":2:9: bmc.ipmi: expected a mapping, got a string" },
	{ "bmc:\n  ipmi:\n    timout: 3\n",
	  NAME ":3:5: unknown key \"timout\" in \"bmc.ipmi\" (valid keys: cipher_suite, timeout, "
	       "retries, max_sessions)" },
	/* workflow: */
	{ "workflow:\n  resync_interval: 0\n",
	  NAME ":2:20: workflow.resync_interval: 0 is out of range 1..86400" },
	{ "workflow:\n  default_action_timeout: 1h\n",
	  NAME ":2:27: workflow.default_action_timeout: \"1h\" is not an integer" },
	{ "workflow:\n  retry_backoff_max: 60\n  retry_backoff: 61\n",
	  NAME ":3:18: workflow.retry_backoff: 61 is longer than workflow.retry_backoff_max (60)" },
	{ "workflow:\n  retry_backoff: 301\n",
	  NAME ":2:18: workflow.retry_backoff: 301 is longer than workflow.retry_backoff_max (300)" },
	{ "workflow:\n  enabled: yes\n", NAME ":2:12: workflow.enabled: \"yes\" is not true or false" },
	{ "workflow:\n  resync: 60\n",
	  NAME ":2:3: unknown key \"resync\" in \"workflow\" (valid keys: enabled, resync_interval, "
	       "default_action_timeout, action_grace, retry_backoff, retry_backoff_max)" },
	{ "? [a]\n: 1\n", NAME ":1:3: a key must be a string, not a sequence" },
	/* wrong types */
	{ "api:\n  socket_mode: {a: 1}\n",
	  NAME ":2:16: api.socket_mode: expected a string like \"0660\", got a mapping" },
	{ "http: 80\n", NAME ":1:7: http: expected a mapping, got a string" },
	{ "api: [1]\n", NAME ":1:6: api: expected a mapping, got a sequence" },
	{ "state_dir: [a]\n", NAME ":1:12: state_dir: expected an absolute path, got a sequence" },
	{ "log_level:\n  a: 1\n",
	  NAME ":2:3: log_level: expected one of error, warn, info, debug, got a mapping" },
	{ "http:\n  threads: [4]\n", NAME ":2:12: http.threads: expected an integer, got a sequence" },
	{ "http:\n  max_body: {}\n", NAME ":2:13: http.max_body: expected a size like 8MiB, got a mapping" },
	{ "http:\n  listen: []\n",
	  NAME ":2:11: http.listen: expected a string like \"0.0.0.0:7080\", got a sequence" },
	/* bad values */
	{ "log_level: loud\n", NAME ":1:12: log_level: \"loud\" is not one of error, warn, info, debug" },
	{ "log_level: INFO\n", NAME ":1:12: log_level: \"INFO\" is not one of error, warn, info, debug" },
	{ "http:\n  idle_timeout: 0\n", NAME ":2:17: http.idle_timeout: 0 is out of range 1..86400" },
	{ "http:\n  threads: 65\n", NAME ":2:12: http.threads: 65 is out of range 0..64" },
	{ "http:\n  threads: -1\n", NAME ":2:12: http.threads: -1 is out of range 0..64" },
	{ "http:\n  threads: 99999999999999999999\n",
	  NAME ":2:12: http.threads: 99999999999999999999 is out of range 0..64" },
	{ "http:\n  threads: four\n", NAME ":2:12: http.threads: \"four\" is not an integer" },
	{ "http:\n  threads: 4.0\n", NAME ":2:12: http.threads: \"4.0\" is not an integer" },
	{ "store:\n  batch_max: 65537\n", NAME ":2:14: store.batch_max: 65537 is out of range 1..65536" },
	{ "store:\n  changes_retention: 999\n",
	  NAME ":2:22: store.changes_retention: 999 is out of range 1000..100000000" },
	{ "store:\n  events_retention: 4294967296\n",
	  NAME ":2:21: store.events_retention: 4294967296 is out of range 100..10000000" },
	{ "http:\n  max_body: 2GiB\n", NAME ":2:13: http.max_body: 2GiB is out of range 1KiB..1GiB" },
	{ "http:\n  max_body: 1023\n", NAME ":2:13: http.max_body: 1023 is out of range 1KiB..1GiB" },
	{ "http:\n  max_body: 99999999999GiB\n",
	  NAME ":2:13: http.max_body: 99999999999GiB is out of range 1KiB..1GiB" },
	{ "http:\n  max_body: 8MB\n",
	  NAME ":2:13: http.max_body: \"8MB\" is not a size (bytes, or a number with KiB, MiB or GiB)" },
	{ "http:\n  max_body: MiB\n",
	  NAME ":2:13: http.max_body: \"MiB\" is not a size (bytes, or a number with KiB, MiB or GiB)" },
	{ "http:\n  listen: 1.2.3.4\n", NAME ":2:11: http.listen: \"1.2.3.4\" is not host:port" },
	{ "http:\n  listen: \"1.2.3.4:\"\n", NAME ":2:11: http.listen: \"1.2.3.4:\" is not host:port" },
	{ "http:\n  listen: \"h:http\"\n", NAME ":2:11: http.listen: \"h:http\" is not host:port" },
	{ "http:\n  listen: \"[::1]\"\n", NAME ":2:11: http.listen: \"[::1]\" is not host:port" },
	{ "http:\n  listen: \"1.2.3.4:0\"\n", NAME ":2:11: http.listen: port 0 is out of range 1..65535" },
	{ "http:\n  listen: \":65536\"\n",
	  NAME ":2:11: http.listen: port 65536 is out of range 1..65535" },
	{ "http:\n  listen: \"::1:80\"\n",
	  NAME ":2:11: http.listen: \"::1:80\" is not host:port (an IPv6 address goes in brackets, "
	       "like [::1]:7080)" },
	{ "http:\n  listen: \"[zz]:80\"\n",
	  NAME ":2:11: http.listen: \"[zz]:80\": \"zz\" is not an IPv6 address" },
	{ "http:\n  listen: \"[]:80\"\n", NAME ":2:11: http.listen: \"[]:80\": \"\" is not an IPv6 address" },
	{ "http:\n  listen: \"1.2.3.999:80\"\n",
	  NAME ":2:11: http.listen: \"1.2.3.999:80\": \"1.2.3.999\" is not an IPv4 address" },
	{ "http:\n  listen: \"a b:80\"\n",
	  NAME ":2:11: http.listen: \"a b:80\": \"a b\" is not a host name" },
	{ "api:\n  listen: 127.0.0.1:7443\n",
	  NAME ":2:11: api.listen is set but api.token_file is not: a TCP listener needs a bearer token" },
	{ "api:\n  socket_mode: \"0999\"\n",
	  NAME ":2:16: api.socket_mode: \"0999\" is not an octal file mode like \"0660\"" },
	{ "api:\n  socket_mode: \"4777\"\n",
	  NAME ":2:16: api.socket_mode: \"4777\" is out of range 0000..0777" },
	{ "api:\n  socket_mode: \"\"\n",
	  NAME ":2:16: api.socket_mode: \"\" is not an octal file mode like \"0660\"" },
	{ "api:\n  socket: run/api.sock\n", NAME ":2:11: api.socket: \"run/api.sock\" is not an absolute path" },
	{ "api:\n  token_file: token\n", NAME ":2:15: api.token_file: \"token\" is not an absolute path" },
	{ "state_dir: var/lib/ironbell\n",
	  NAME ":1:12: state_dir: \"var/lib/ironbell\" is not an absolute path" },
	{ "state_dir: \"\"\n", NAME ":1:12: state_dir: \"\" is not an absolute path" },
	{ "state_dir: \"/a\\0b\"\n", NAME ":1:12: state_dir: the value holds a NUL character" },
	{ "state_dir: \"\\t\\\"\\u00e9\"\n",
	  NAME ":1:12: state_dir: \"\\x09\\\"\\xc3\\xa9\" is not an absolute path" },
	{ "state_dir: \"\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t"
	  "\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\"\n",
	  NAME ":1:12: state_dir: \"\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09"
	       "\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09\\x09...\" is not an absolute path" },
	/* duplicate keys */
	{ "log_level: info\nlog_level: debug\n", NAME ":2:1: duplicate key \"log_level\" (first at line 1)" },
	{ "http:\n  threads: 2\n\n  threads: 3\n",
	  NAME ":4:3: duplicate key \"threads\" in \"http\" (first at line 2)" },
	{ "api: {}\napi: ~\n", NAME ":2:1: duplicate key \"api\" (first at line 1)" },
	/* not a mapping, or not one document */
	{ "hello\n", NAME ":1:1: expected a mapping of keys at the top level, got a string" },
	{ "\n\n- a\n", NAME ":3:1: expected a mapping of keys at the top level, got a sequence" },
	{ "log_level: info\n---\nlog_level: info\n", NAME ":2:1: more than one YAML document" },
	/* dhcp: */
	{ "dhcp:\n  foo: 1\n",
	  NAME ":2:3: unknown key \"foo\" in \"dhcp\" (valid keys: enabled, mode, interfaces, "
	       "server_address, public_address, tftp_address, http_base_url, syslog_address, "
	       "lease_time, lease_reuse, arch, subnet_check)" },
	{ "dhcp: [a]\n", NAME ":1:7: dhcp: expected a mapping, got a sequence" },
	{ "dhcp:\n  enabled: yes\n", NAME ":2:12: dhcp.enabled: \"yes\" is not true or false" },
	{ "dhcp:\n  enabled: True\n", NAME ":2:12: dhcp.enabled: \"True\" is not true or false" },
	{ "dhcp:\n  enabled: [true]\n",
	  NAME ":2:12: dhcp.enabled: expected true or false, got a sequence" },
	{ "dhcp:\n  mode: proxydhcp\n",
	  NAME ":2:9: dhcp.mode: \"proxydhcp\" is not one of reservation, proxy, auto-proxy" },
	{ "dhcp:\n  mode: {}\n",
	  NAME ":2:9: dhcp.mode: expected one of reservation, proxy, auto-proxy, got a mapping" },
	{ "dhcp:\n  interfaces: eth0\n",
	  NAME ":2:15: dhcp.interfaces: expected a list of interface names, got a string" },
	{ "dhcp:\n  interfaces: [eth0, [eth1]]\n",
	  NAME ":2:22: dhcp.interfaces: expected an interface name, got a sequence" },
	{ "dhcp:\n  interfaces: [eth0, ~]\n",
	  NAME ":2:22: dhcp.interfaces: expected an interface name, got null" },
	{ "dhcp:\n  interfaces:\n    - eth0\n    - \"a\\0\"\n",
	  NAME ":4:7: dhcp.interfaces: the value holds a NUL character" },
	{ "dhcp:\n  interfaces: [eth0, eth0]\n",
	  NAME ":2:22: dhcp.interfaces: \"eth0\" is listed twice" },
	{ "dhcp:\n  interfaces: [abcdefghijklmnop]\n",
	  NAME ":2:16: dhcp.interfaces: \"abcdefghijklmnop\" is not an interface name (1 to 15 "
	       "characters, not \".\" or \"..\", without '/', ':' or white space)" },
	{ "dhcp:\n  interfaces: [\"\"]\n",
	  NAME ":2:16: dhcp.interfaces: \"\" is not an interface name (1 to 15 "
	       "characters, not \".\" or \"..\", without '/', ':' or white space)" },
	{ "dhcp:\n  interfaces: [eth/0]\n",
	  NAME ":2:16: dhcp.interfaces: \"eth/0\" is not an interface name (1 to 15 "
	       "characters, not \".\" or \"..\", without '/', ':' or white space)" },
	{ "dhcp:\n  interfaces: [\"eth 0\"]\n",
	  NAME ":2:16: dhcp.interfaces: \"eth 0\" is not an interface name (1 to 15 "
	       "characters, not \".\" or \"..\", without '/', ':' or white space)" },
	{ "dhcp:\n  interfaces: [\"eth0:1\"]\n",
	  NAME ":2:16: dhcp.interfaces: \"eth0:1\" is not an interface name (1 to 15 "
	       "characters, not \".\" or \"..\", without '/', ':' or white space)" },
	{ "dhcp:\n  interfaces: [\"..\"]\n",
	  NAME ":2:16: dhcp.interfaces: \"..\" is not an interface name (1 to 15 "
	       "characters, not \".\" or \"..\", without '/', ':' or white space)" },
	{ "dhcp:\n  server_address: 192.0.2\n",
	  NAME ":2:19: dhcp.server_address: \"192.0.2\" is not an IPv4 address" },
	{ "dhcp:\n  server_address: 192.0.2.010\n",
	  NAME ":2:19: dhcp.server_address: \"192.0.2.010\" is not an IPv4 address" },
	{ "dhcp:\n  public_address: \"::1\"\n",
	  NAME ":2:19: dhcp.public_address: \"::1\" is not an IPv4 address" },
	{ "dhcp:\n  public_address: 192.0.2.10.\n",
	  NAME ":2:19: dhcp.public_address: \"192.0.2.10.\" is not an IPv4 address" },
	{ "dhcp:\n  tftp_address: 0.0.0.0\n",
	  NAME ":2:17: dhcp.tftp_address: \"0.0.0.0\" is not a unicast host address" },
	{ "dhcp:\n  tftp_address: 255.255.255.255\n",
	  NAME ":2:17: dhcp.tftp_address: \"255.255.255.255\" is not a unicast host address" },
	{ "dhcp:\n  syslog_address: 224.0.0.1\n",
	  NAME ":2:19: dhcp.syslog_address: \"224.0.0.1\" is not a unicast host address" },
	{ "dhcp:\n  syslog_address: \" 10.0.0.1\"\n",
	  NAME ":2:19: dhcp.syslog_address: \" 10.0.0.1\" is not an IPv4 address" },
	{ "dhcp:\n  syslog_address: [10.0.0.1]\n",
	  NAME ":2:19: dhcp.syslog_address: expected an IPv4 address, got a sequence" },
	{ "dhcp:\n  http_base_url: ftp://a\n",
	  NAME ":2:18: dhcp.http_base_url: \"ftp://a\" is not an http:// or https:// URL (with a "
	       "host, without a query or a fragment)" },
	{ "dhcp:\n  http_base_url: \"http://\"\n",
	  NAME ":2:18: dhcp.http_base_url: \"http://\" is not an http:// or https:// URL (with a "
	       "host, without a query or a fragment)" },
	{ "dhcp:\n  http_base_url: \"https:///x\"\n",
	  NAME ":2:18: dhcp.http_base_url: \"https:///x\" is not an http:// or https:// URL (with "
	       "a host, without a query or a fragment)" },
	{ "dhcp:\n  http_base_url: \"http://a/b?c=1\"\n",
	  NAME ":2:18: dhcp.http_base_url: \"http://a/b?c=1\" is not an http:// or https:// URL "
	       "(with a host, without a query or a fragment)" },
	{ "dhcp:\n  http_base_url: \"http://a b\"\n",
	  NAME ":2:18: dhcp.http_base_url: \"http://a b\" is not an http:// or https:// URL (with "
	       "a host, without a query or a fragment)" },
	{ "dhcp:\n  http_base_url: HTTP://a\n",
	  NAME ":2:18: dhcp.http_base_url: \"HTTP://a\" is not an http:// or https:// URL (with "
	       "a host, without a query or a fragment)" },
	{ "dhcp:\n  http_base_url: {}\n",
	  NAME ":2:18: dhcp.http_base_url: expected a URL, got a mapping" },
	{ "dhcp:\n  lease_time: 59\n",
	  NAME ":2:15: dhcp.lease_time: 59 is out of range 60..31536000" },
	{ "dhcp:\n  lease_time: 31536001\n",
	  NAME ":2:15: dhcp.lease_time: 31536001 is out of range 60..31536000" },
	{ "dhcp:\n  lease_reuse: 50\n", NAME ":2:16: dhcp.lease_reuse: 50 is out of range 0..49" },
	{ "dhcp:\n  lease_reuse: -1\n", NAME ":2:16: dhcp.lease_reuse: -1 is out of range 0..49" },
	{ "dhcp:\n  arch: [7]\n",
	  NAME ":2:9: dhcp.arch: expected a mapping of architecture codes to file names, got a "
	       "sequence" },
	{ "dhcp:\n  arch: snp.efi\n",
	  NAME ":2:9: dhcp.arch: expected a mapping of architecture codes to file names, got a "
	       "string" },
	{ "dhcp:\n  arch:\n    x86: ipxe.efi\n",
	  NAME ":3:5: dhcp.arch: \"x86\" is not an architecture code (0..65535)" },
	{ "dhcp:\n  arch:\n    65536: ipxe.efi\n",
	  NAME ":3:5: dhcp.arch: \"65536\" is not an architecture code (0..65535)" },
	{ "dhcp:\n  arch:\n    -1: ipxe.efi\n",
	  NAME ":3:5: dhcp.arch: \"-1\" is not an architecture code (0..65535)" },
	{ "dhcp:\n  arch:\n    [7]: ipxe.efi\n",
	  NAME ":3:5: a key must be a string, not a sequence" },
	{ "dhcp:\n  arch:\n    7: a.efi\n    07: b.efi\n",
	  NAME ":4:5: dhcp.arch: code 7 is given twice" },
	{ "dhcp:\n  arch:\n    7: ../x.efi\n",
	  NAME ":3:8: dhcp.arch: 7: \"../x.efi\" is not a file name (1 to 63 of A-Z a-z 0-9 . _ -, "
	       "not starting with '.')" },
	{ "dhcp:\n  arch:\n    7: .hidden\n",
	  NAME ":3:8: dhcp.arch: 7: \".hidden\" is not a file name (1 to 63 of A-Z a-z 0-9 . _ -, "
	       "not starting with '.')" },
	{ "dhcp:\n  arch:\n    7: \"\"\n",
	  NAME ":3:8: dhcp.arch: 7: \"\" is not a file name (1 to 63 of A-Z a-z 0-9 . _ -, "
	       "not starting with '.')" },
	{ "dhcp:\n  arch:\n    7: "
	  "a234567890123456789012345678901234567890123456789012345678901234\n",
	  NAME ":3:8: dhcp.arch: 7: \"a234567890123456789012345678901234567890123456789012345678901234\" "
	       "is not a file name (1 to 63 of A-Z a-z 0-9 . _ -, not starting with '.')" },
	{ "dhcp:\n  arch:\n    7: ~\n", NAME ":3:8: dhcp.arch: 7: expected a file name, got null" },
	{ "dhcp:\n  arch:\n    \"x y\": {}\n",
	  NAME ":3:12: dhcp.arch: \"x y\": expected a file name, got a mapping" },
	{ "dhcp:\n  arch:\n    7: \"a\\0\"\n",
	  NAME ":3:8: dhcp.arch: 7: the value holds a NUL character" },
	{ "dhcp:\n  lease_time: 600\n  lease_time: 700\n",
	  NAME ":3:3: duplicate key \"lease_time\" in \"dhcp\" (first at line 2)" },
	/* YAML syntax, with libyaml's words */
	{ "a: b: c\n", NAME ":1:5: mapping values are not allowed in this context" },
	{ "state_dir: '/x\n",
	  NAME ":2:1: found unexpected end of stream (while scanning a quoted scalar at line 1)" },
	{ "api:\n  socket: /x\n\tsocket_mode: 1\n",
	  NAME ":3:1: found a tab character that violates indentation (while scanning a plain scalar "
	       "at line 2); YAML indents with spaces, not tabs" },
	{ "state_dir: *nowhere\n", NAME ":1:12: found undefined alias" },
	{ "log_level: info\n\xff\n", NAME ":2:1: invalid leading UTF-8 octet (#xFF)" },
	{ "log_level: \x01\n", NAME ":1:12: control characters are not allowed (#x1)" },
};

START_TEST(test_bad_file)
{
	load_fails(bad_files[_i].text, strlen(bad_files[_i].text), -EINVAL, bad_files[_i].err);
}
END_TEST

START_TEST(test_socket_too_long)
{
	char text[256], path[109], want[512];
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	snprintf(text, sizeof(text), "api:\n  socket: %s\n", path);
	snprintf(want, sizeof(want),
		 NAME ":2:11: api.socket: \"%.80s...\" is longer than 107 bytes, the most a unix "
		      "socket path can be",
		 path);
	load_fails(text, strlen(text), -EINVAL, want);
}
END_TEST

/* dhcp.interfaces and dhcp.arch hold at most their bound. */
START_TEST(test_dhcp_bounds)
{
	char text[4096], want[256];
	size_t o = (size_t)snprintf(text, sizeof(text), "dhcp:\n  interfaces:\n");
	for (int i = 0; i < CONFIG_DHCP_MAX_INTERFACES; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "    - eth%d\n", i);
	struct ib_config *c = load_ok(text);
	ck_assert_uint_eq(c->dhcp.interfaces.n, CONFIG_DHCP_MAX_INTERFACES);
	ck_assert_str_eq(c->dhcp.interfaces.name[CONFIG_DHCP_MAX_INTERFACES - 1], "eth63");
	config_free(c);
	snprintf(text + o, sizeof(text) - o, "    - eth%d\n", CONFIG_DHCP_MAX_INTERFACES);
	snprintf(want, sizeof(want), NAME ":%d:7: dhcp.interfaces: more than 64 interfaces",
		 3 + CONFIG_DHCP_MAX_INTERFACES);
	load_fails(text, strlen(text), -EINVAL, want);

	o = (size_t)snprintf(text, sizeof(text), "dhcp:\n  arch:\n");
	for (int i = 0; i < CONFIG_DHCP_MAX_ARCH; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "    %d: b%d.efi\n", 100 + i, i);
	c = load_ok(text);
	ck_assert_uint_eq(c->dhcp.arch.n, CONFIG_DHCP_MAX_ARCH);
	ck_assert_uint_eq(c->dhcp.arch.e[CONFIG_DHCP_MAX_ARCH - 1].code, 131);
	ck_assert_str_eq(c->dhcp.arch.e[CONFIG_DHCP_MAX_ARCH - 1].binary, "b31.efi");
	config_free(c);
	snprintf(text + o, sizeof(text) - o, "    7: x.efi\n");
	snprintf(want, sizeof(want), NAME ":%d:5: dhcp.arch: more than 32 entries",
		 3 + CONFIG_DHCP_MAX_ARCH);
	load_fails(text, strlen(text), -EINVAL, want);

	/* A URL of the longest length, and one byte more. */
	char url[CONFIG_URL_MAX + 2];
	memset(url, 'a', sizeof(url) - 1);
	memcpy(url, "http://", 7);
	url[CONFIG_URL_MAX] = '\0';
	snprintf(text, sizeof(text), "dhcp:\n  http_base_url: %s\n", url);
	c = load_ok(text);
	ck_assert_str_eq(c->dhcp.http_base_url, url);
	config_free(c);
	url[CONFIG_URL_MAX] = 'a';
	url[CONFIG_URL_MAX + 1] = '\0';
	snprintf(text, sizeof(text), "dhcp:\n  http_base_url: %s\n", url);
	snprintf(want, sizeof(want),
		 NAME ":2:18: dhcp.http_base_url: \"%.80s...\" is longer than 160 bytes", url);
	load_fails(text, strlen(text), -EINVAL, want);
}
END_TEST

START_TEST(test_too_large)
{
	size_t n = CONFIG_MAX_SIZE + 1;
	char *text = malloc(n);
	ck_assert_ptr_nonnull(text);
	memset(text, '#', n);
	load_fails(text, n, -EFBIG, NAME ": file is larger than 1048576 bytes");
	/* Exactly the limit is fine: a comment. */
	struct ib_config *c = NULL;
	ck_assert_int_eq(config_load_string(NAME, text, n - 1, &c, NULL, 0), 0);
	config_free(c);
	free(text);
}
END_TEST

/* The message is cut to errlen, and err may be NULL. */
START_TEST(test_short_err_buffer)
{
	char err[8];
	struct ib_config *c = BAD_PTR;
	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(load("foo: 1\n", &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.yaml:");
	ck_assert_int_eq(load("foo: 1\n", &c, NULL, 0), -EINVAL);
	ck_assert_ptr_eq(c, BAD_PTR);
}
END_TEST

/* ---- files ---- */

START_TEST(test_load_file)
{
	char err[512] = "", want[1024];
	struct ib_config *c = BAD_PTR;
	const char *p = tmp_file("c.yaml", "http:\n  threads: 9\n", 19);
	char path[512];
	snprintf(path, sizeof(path), "%s", p);
	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->path, path);
	ck_assert_uint_eq(c->http.threads, 9);
	config_free(c);

	tmp_file("c.yaml", "http:\n  threads: 99\n", 20);
	c = BAD_PTR;
	snprintf(want, sizeof(want), "%s:2:12: http.threads: 99 is out of range 0..64", path);
	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_eq(c, BAD_PTR);

	snprintf(path, sizeof(path), "%s/missing.yaml", tmpdir);
	snprintf(want, sizeof(want), "%s: cannot read: No such file or directory", path);
	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, want);

	snprintf(path, sizeof(path), "%s/dir", tmpdir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(want, sizeof(want), "%s: cannot read: Is a directory", path);
	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), -EISDIR);
	ck_assert_str_eq(err, want);

	char *big = malloc(CONFIG_MAX_SIZE + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, '\n', CONFIG_MAX_SIZE + 1);
	snprintf(path, sizeof(path), "%s", tmp_file("huge.yaml", big, CONFIG_MAX_SIZE + 1));
	free(big);
	snprintf(want, sizeof(want), "%s: file is larger than 1048576 bytes", path);
	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), -EFBIG);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_eq(c, BAD_PTR);
}
END_TEST

/* api.token_file: the token is its first line; what cannot be a token is
 * an error that names the file. */
START_TEST(test_script_template)
{
	char text[1024], want[1024], path[512];

	snprintf(path, sizeof(path), "%s",
		 tmp_file("bad.ipxe", "#!ipxe\nkernel {{kernel_url}} {{cmd_line}}\n", 42));
	snprintf(text, sizeof(text), "ipxe:\n  script_template: %s\n", path);
	snprintf(want, sizeof(want),
		 NAME ":2:20: ipxe.script_template: \"%s\": line 2, column 23: unknown "
		      "placeholder \"{{cmd_line}}\"",
		 path);
	load_fails(text, strlen(text), -EINVAL, want);
	snprintf(path, sizeof(path), "%s/nothere.ipxe", tmpdir);
	snprintf(text, sizeof(text), "ipxe:\n  script_template: %s\n", path);
	snprintf(want, sizeof(want),
		 NAME ":2:20: ipxe.script_template: cannot read \"%s\": No such file or directory",
		 path);
	load_fails(text, strlen(text), -EINVAL, want);
	load_fails("ipxe:\n  script_template: /dev/null\n", 35, -EINVAL,
		   NAME ":2:20: ipxe.script_template: \"/dev/null\" is not a regular file");
}
END_TEST

START_TEST(test_token_file)
{
	char text[1024], want[1024], path[512];
	struct ib_config *c;

	snprintf(path, sizeof(path), "%s",
		 tmp_file("crlf", "abc=0123456789abcdef0123456789abcdef\r\n", 38));
	snprintf(text, sizeof(text), "api:\n  token_file: %s\n", path);
	c = load_ok(text);
	ck_assert_str_eq(c->api.token, "abc=0123456789abcdef0123456789abcdef");
	ck_assert_ptr_null(c->api.listen); /* a token without a listener is allowed */
	config_free(c);

	snprintf(path, sizeof(path), "%s", tmp_file("empty", "\n", 1));
	snprintf(text, sizeof(text), "api:\n  listen: :7443\n  token_file: %s\n", path);
	snprintf(want, sizeof(want), NAME ":3:15: api.token_file: \"%s\" is empty", path);
	load_fails(text, strlen(text), -EINVAL, want);

	snprintf(path, sizeof(path), "%s", tmp_file("space", "two words\n", 10));
	snprintf(text, sizeof(text), "api:\n  token_file: %s\n", path);
	snprintf(want, sizeof(want),
		 NAME ":2:15: api.token_file: \"%s\" must hold one line of visible ASCII characters",
		 path);
	load_fails(text, strlen(text), -EINVAL, want);

	char big[CFG_TOKEN_MAX + 1];
	memset(big, 'k', sizeof(big));
	snprintf(path, sizeof(path), "%s", tmp_file("big", big, sizeof(big)));
	snprintf(text, sizeof(text), "api:\n  token_file: %s\n", path);
	snprintf(want, sizeof(want), NAME ":2:15: api.token_file: \"%s\" is larger than 4096 bytes",
		 path);
	load_fails(text, strlen(text), -EINVAL, want);

	snprintf(path, sizeof(path), "%s/nothere", tmpdir);
	snprintf(text, sizeof(text), "api:\n  listen: :7443\n  token_file: \"%s\"\n", path);
	snprintf(want, sizeof(want),
		 NAME ":3:15: api.token_file: cannot read \"%s\": No such file or directory", path);
	load_fails(text, strlen(text), -EINVAL, want);

	load_fails("api:\n  token_file: /dev/null\n", 29, -EINVAL,
		   NAME ":2:15: api.token_file: \"/dev/null\" is not a regular file");

	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s", tmp_file("token", "t\n", 2));
		ck_assert_int_eq(chmod(path, 0), 0);
		snprintf(text, sizeof(text), "api:\n  token_file: %s\n", path);
		snprintf(want, sizeof(want),
			 NAME ":2:15: api.token_file: cannot read \"%s\": Permission denied", path);
		load_fails(text, strlen(text), -EINVAL, want);
	}
}
END_TEST

/* The admin TCP listener: a token of at least 32 bytes in a file only its
 * owner may read, and TLS (api.tls_cert and api.tls_key, both) unless it
 * listens on loopback only. */
#define GOOD_TOKEN "0123456789abcdef0123456789abcdef\n"

START_TEST(test_api_tls)
{
	char text[2048], want[2048], tok[512], cert[512], key[512], path[512];
	struct ib_config *c;

	snprintf(tok, sizeof(tok), "%s", tmp_file("token", GOOD_TOKEN, strlen(GOOD_TOKEN)));
	snprintf(cert, sizeof(cert), "%s", tmp_file("cert.pem", "CERT\n", 5));
	snprintf(key, sizeof(key), "%s", tmp_file("key.pem", "KEY\n", 4));

	/* Loopback without TLS is allowed. */
	static const char *const loopback[] = { "127.0.0.1:7443", "127.1.2.3:7443",
						"\"[::1]:7443\"", "localhost:7443" };
	for (size_t i = 0; i < ARRAY_SIZE(loopback); i++) {
		snprintf(text, sizeof(text), "api:\n  listen: %s\n  token_file: %s\n",
			 loopback[i], tok);
		c = load_ok(text);
		ck_assert_ptr_null(c->api.tls_cert_pem);
		config_free(c);
	}
	/* Any other address without TLS: refused, at api.listen. */
	static const char *const open_[] = { ":7443", "0.0.0.0:7443", "192.0.2.1:7443",
					     "\"[::]:7443\"", "admin.example.com:7443" };
	for (size_t i = 0; i < ARRAY_SIZE(open_); i++) {
		snprintf(text, sizeof(text), "api:\n  listen: %s\n  token_file: %s\n", open_[i],
			 tok);
		char bare[64];
		snprintf(bare, sizeof(bare), "%s", open_[i][0] == '"' ? open_[i] + 1 : open_[i]);
		if (strchr(bare, '"'))
			*strchr(bare, '"') = '\0';
		snprintf(want, sizeof(want),
			 NAME ":2:11: api.listen %s is not a loopback address: it needs TLS "
			      "(api.tls_cert and api.tls_key)",
			 bare);
		load_fails(text, strlen(text), -EINVAL, want);
	}
	/* With TLS, any address; both files are read. */
	snprintf(text, sizeof(text),
		 "api:\n  listen: 0.0.0.0:7443\n  token_file: %s\n  tls_cert: %s\n  tls_key: %s\n",
		 tok, cert, key);
	c = load_ok(text);
	ck_assert_str_eq(c->api.tls_cert, cert);
	ck_assert_str_eq(c->api.tls_cert_pem, "CERT\n");
	ck_assert_str_eq(c->api.tls_key_pem, "KEY\n");
	config_free(c);

	/* One without the other. */
	snprintf(text, sizeof(text), "api:\n  tls_cert: %s\n", cert);
	load_fails(text, strlen(text), -EINVAL,
		   NAME ":2:13: api.tls_cert and api.tls_key go together: set both or neither");
	snprintf(text, sizeof(text), "api:\n  listen: 127.0.0.1:1\n  token_file: %s\n  tls_key: %s\n",
		 tok, key);
	load_fails(text, strlen(text), -EINVAL,
		   NAME ":4:12: api.tls_cert and api.tls_key go together: set both or neither");

	/* A key others may read. */
	ck_assert_int_eq(chmod(key, 0640), 0);
	snprintf(text, sizeof(text), "api:\n  tls_cert: %s\n  tls_key: %s\n", cert, key);
	snprintf(want, sizeof(want),
		 NAME ":3:12: api.tls_key: \"%s\" may be read or written by its group or others "
		      "(mode 0640): make it 0600",
		 key);
	load_fails(text, strlen(text), -EINVAL, want);
	ck_assert_int_eq(unlink(key), 0);
	snprintf(want, sizeof(want),
		 NAME ":3:12: api.tls_key: cannot read \"%s\": No such file or directory", key);
	load_fails(text, strlen(text), -EINVAL, want);

	/* A token shorter than 32 bytes. */
	snprintf(path, sizeof(path), "%s", tmp_file("short", "0123456789abcdef0123456789abcde\n", 32));
	snprintf(text, sizeof(text), "api:\n  listen: 127.0.0.1:7443\n  token_file: %s\n", path);
	snprintf(want, sizeof(want),
		 NAME ":3:15: api.token_file: the token in \"%s\" is 31 bytes long: it must have "
		      "at least 32",
		 path);
	load_fails(text, strlen(text), -EINVAL, want);

	/* A token file its group or others may read. */
	static const unsigned modes[] = { 0644, 0640, 0604, 0620 };
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		ck_assert_int_eq(chmod(tok, modes[i]), 0);
		snprintf(text, sizeof(text), "api:\n  listen: 127.0.0.1:7443\n  token_file: %s\n",
			 tok);
		snprintf(want, sizeof(want),
			 NAME ":3:15: api.token_file: \"%s\" may be read or written by its group or "
			      "others (mode %04o): make it 0600",
			 tok, modes[i]);
		load_fails(text, strlen(text), -EINVAL, want);
	}
	ck_assert_int_eq(chmod(tok, 0400), 0);
	snprintf(text, sizeof(text), "api:\n  listen: 127.0.0.1:7443\n  token_file: %s\n", tok);
	config_free(load_ok(text));
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");
	UNIT_TEST(tc, test_defaults);
	tcase_add_loop_test(tc, test_empty_is_default, 0, ARRAY_SIZE(empty_files));
	UNIT_TEST(tc, test_good_values);
	UNIT_TEST(tc, test_example_file);
	UNIT_TEST(tc, test_example_has_every_key);
	UNIT_TEST(tc, test_man_page_has_every_key);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_bad_file, 0, ARRAY_SIZE(bad_files));
	UNIT_TEST(tc, test_socket_too_long);
	UNIT_TEST(tc, test_dhcp_bounds);
	UNIT_TEST(tc, test_too_large);
	UNIT_TEST(tc, test_short_err_buffer);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	UNIT_TEST(tc, test_every_key);
	UNIT_TEST(tc, test_load_file);
	UNIT_TEST(tc, test_token_file);
	UNIT_TEST(tc, test_api_tls);
	UNIT_TEST(tc, test_script_template);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(config_suite());
}
