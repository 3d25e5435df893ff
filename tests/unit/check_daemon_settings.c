/* check_daemon_settings — ironbell.yaml turned into each part's settings
 * (daemon/settings.c): the dhcp: section through to the policy's
 * configuration of an interface (each fallback, the arch overrides, the
 * boot URLs and the errors), and the tftp:, syslog:, metadata: and ipxe:
 * sections. Configs are loaded from text with config_load_string, as the
 * daemon loads them. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bmc/bmc.h"
#include "daemon/config/conf.h"
#include "daemon/settings.h"
#include "dhcp/dhcp.h"
#include "ipxe/ipxe.h"
#include "metadata/metadata.h"
#include "syslog/syslog.h"
#include "tests/unit/unit.h"
#include "tftp/tftp.h"
#include "workflow/workflow.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct ib_config *load(const char *text)
{
	char err[512];
	struct ib_config *c = NULL;
	int r = config_load_string("t.yaml", text, strlen(text), &c, err, sizeof(err));
	ck_assert_msg(r == 0, "config: %s", err);
	return c;
}

/* What the DHCP server of c answers with on an interface whose address is
 * iface: the daemon's settings, then the server's per-interface step. */
static int policy_for(const struct ib_config *c, uint32_t iface, struct dhcp_policy_config *p,
		      char *err, size_t errlen)
{
	struct dhcp_settings s;
	int e = settings_dhcp(c, &s, err, errlen);
	return e < 0 ? e : dhcp_settings_policy(&s, iface, p, err, errlen);
}

START_TEST(test_defaults_use_the_interface)
{
	struct ib_config *c = load("");
	struct dhcp_policy_config p;
	char err[256];
	ck_assert_int_eq(policy_for(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_int_eq(p.mode, DHCP_MODE_RESERVATION);
	ck_assert_uint_eq(p.server_id, IP(192, 168, 1, 2));
	ck_assert_uint_eq(p.http_ip, IP(192, 168, 1, 2));
	ck_assert_uint_eq(p.tftp_ip, IP(192, 168, 1, 2));
	ck_assert_uint_eq(p.syslog_ip, 0);
	ck_assert_uint_eq(p.lease_time, 86400); /* the config's default wins over Smee's */
	/* the port of http.listen (default 7080) */
	ck_assert_str_eq(p.script_url, "http://192.168.1.2:7080/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(p.binary_url, "http://192.168.1.2:7080/ipxe/binary/{mac}/{binary}");
	ck_assert_str_eq(dhcp_policy_arch_binary(&p, 0), "undionly.kpxe");
	ck_assert_str_eq(dhcp_policy_arch_binary(&p, 7), "ipxe.efi");
	ck_assert_str_eq(dhcp_policy_arch_binary(&p, 11), "snp-arm64.efi");
	config_free(c);
}
END_TEST

START_TEST(test_every_key)
{
	struct ib_config *c = load("http:\n  listen: 0.0.0.0:8080\n"
				   "dhcp:\n"
				   "  mode: proxy\n"
				   "  server_address: 10.0.0.1\n"
				   "  public_address: 10.0.0.2\n"
				   "  tftp_address: 10.0.0.3\n"
				   "  syslog_address: 10.0.0.4\n"
				   "  lease_time: 3600\n"
				   "  arch: {7: snp-x86_64.efi, 300: custom.efi}\n");
	struct dhcp_policy_config p;
	char err[256];
	ck_assert_int_eq(policy_for(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_int_eq(p.mode, DHCP_MODE_PROXY);
	ck_assert_uint_eq(p.server_id, IP(10, 0, 0, 1));
	ck_assert_uint_eq(p.http_ip, IP(10, 0, 0, 2));
	ck_assert_uint_eq(p.tftp_ip, IP(10, 0, 0, 3));
	ck_assert_uint_eq(p.syslog_ip, IP(10, 0, 0, 4));
	ck_assert_uint_eq(p.lease_time, 3600);
	ck_assert_str_eq(p.script_url, "http://10.0.0.2:8080/ipxe/script/{mac}/auto.ipxe");
	/* an override replaces its entry; a new code is added; the rest stay */
	ck_assert_str_eq(dhcp_policy_arch_binary(&p, 7), "snp-x86_64.efi");
	ck_assert_str_eq(dhcp_policy_arch_binary(&p, 300), "custom.efi");
	ck_assert_str_eq(dhcp_policy_arch_binary(&p, 9), "ipxe.efi");
	ck_assert_ptr_null(dhcp_policy_arch_binary(&p, 301));
	config_free(c);
}
END_TEST

START_TEST(test_fallback_chain)
{
	/* public falls back to server, tftp to public; the interface is not
	 * used once server_address is set. */
	struct ib_config *c = load("dhcp:\n  server_address: 10.1.0.1\n");
	struct dhcp_policy_config p;
	char err[256];
	ck_assert_int_eq(policy_for(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.server_id, IP(10, 1, 0, 1));
	ck_assert_uint_eq(p.http_ip, IP(10, 1, 0, 1));
	ck_assert_uint_eq(p.tftp_ip, IP(10, 1, 0, 1));
	config_free(c);
	c = load("dhcp:\n  public_address: 10.2.0.1\n");
	ck_assert_int_eq(policy_for(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.server_id, IP(192, 168, 1, 2));
	ck_assert_uint_eq(p.tftp_ip, IP(10, 2, 0, 1));
	ck_assert_str_eq(p.binary_url, "http://10.2.0.1:7080/ipxe/binary/{mac}/{binary}");
	config_free(c);
}
END_TEST

START_TEST(test_base_url)
{
	struct ib_config *c = load("dhcp:\n  http_base_url: https://boot.example.com/tink/\n");
	struct dhcp_policy_config p;
	char err[256];
	ck_assert_int_eq(policy_for(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_str_eq(p.script_url, "https://boot.example.com/tink/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(p.binary_url, "https://boot.example.com/tink/ipxe/binary/{mac}/{binary}");
	config_free(c);
}
END_TEST

START_TEST(test_errors)
{
	struct ib_config *c = load("");
	struct dhcp_policy_config p = { .lease_time = 12345 };
	char err[256] = "";
	/* no configured address and an interface without one */
	ck_assert_int_eq(policy_for(c, 0, &p, err, sizeof(err)), -EADDRNOTAVAIL);
	ck_assert_ptr_nonnull(strstr(err, "dhcp.server_address"));
	ck_assert_uint_eq(p.lease_time, 12345); /* untouched on failure */
	config_free(c);

	/* a base URL near the longest the config takes (160 bytes) still
	 * leaves room for the boot paths: the two limits agree */
	char text[512];
	char host[150];
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	snprintf(text, sizeof(text), "dhcp:\n  http_base_url: http://%s\n", host);
	c = load(text);
	ck_assert_int_eq(policy_for(c, IP(10, 0, 0, 1), &p, err, sizeof(err)), 0);
	config_free(c);
	ck_assert_uint_eq(strlen(p.binary_url),
			  strlen("http://") + 149 + strlen("/ipxe/binary/{mac}/{binary}"));
}
END_TEST

/* What the server itself takes from dhcp:, and the gaps it leaves. */
START_TEST(test_dhcp_server_settings)
{
	struct ib_config *c = load("http:\n  listen: 0.0.0.0:8080\n"
				   "dhcp:\n"
				   "  mode: auto-proxy\n"
				   "  interfaces: [eth1, enp3s0f1]\n"
				   "  subnet_check: false\n"
				   "  lease_reuse: 20\n");
	struct dhcp_settings s;
	char err[256];
	ck_assert_int_eq(settings_dhcp(c, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.ninterfaces, 2);
	ck_assert_str_eq(s.interfaces[0], "eth1");
	ck_assert_str_eq(s.interfaces[1], "enp3s0f1");
	ck_assert(!s.subnet_check);
	ck_assert_uint_eq(s.http_port, 8080);
	ck_assert_int_eq(s.policy.mode, DHCP_MODE_AUTO_PROXY);
	ck_assert_uint_eq(s.policy.lease_reuse, 20);
	/* no address configured: every one is the interface's */
	ck_assert_uint_eq(s.policy.server_id, 0);
	ck_assert_uint_eq(s.policy.http_ip, 0);
	ck_assert_uint_eq(s.policy.tftp_ip, 0);
	ck_assert_str_eq(s.policy.script_url, "");
	ck_assert_str_eq(s.policy.binary_url, "");
	config_free(c);

	c = load("");
	ck_assert_int_eq(settings_dhcp(c, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.ninterfaces, 0);
	ck_assert(s.subnet_check);
	ck_assert_uint_eq(s.policy.lease_reuse, 25);
	config_free(c);
}
END_TEST

START_TEST(test_tftp_syslog_metadata)
{
	struct ib_config *c = load("ipxe:\n  binary_dir: /srv/ipxe\n"
				   "tftp:\n  listen: 127.0.0.1:6969\n  max_transfers: 9\n"
				   "  blksize_max: 1024\n  windowsize_max: 4\n  timeout: 3\n"
				   "  retries: 7\n"
				   "syslog:\n  listen: 127.0.0.1:5514\n  rate: 5\n  burst: 6\n"
				   "  max_message: 1000\n"
				   "metadata:\n  trusted_proxies: [192.0.2.0/24]\n");
	struct tftp_settings t;
	struct syslog_settings y;
	struct md_settings m;
	settings_tftp(c, &t);
	ck_assert_str_eq(t.root, "/srv/ipxe");
	ck_assert_str_eq(t.listen, "127.0.0.1:6969");
	ck_assert_uint_eq(t.max_transfers, 9);
	ck_assert_uint_eq(t.blksize_max, 1024);
	ck_assert_uint_eq(t.windowsize_max, 4);
	ck_assert_uint_eq(t.timeout, 3);
	ck_assert_uint_eq(t.retries, 7);
	settings_syslog(c, &y);
	ck_assert_str_eq(y.listen, "127.0.0.1:5514");
	ck_assert_uint_eq(y.rate, 5);
	ck_assert_uint_eq(y.burst, 6);
	ck_assert_uint_eq(y.max_message, 1000);
	settings_metadata(c, &m);
	ck_assert_ptr_eq(m.trusted_proxies, &c->metadata.trusted_proxies);
	ck_assert(md_cidrs_match(m.trusted_proxies, "192.0.2.9"));
	ck_assert(!md_cidrs_match(m.trusted_proxies, "198.51.100.1"));
	config_free(c);
}
END_TEST

START_TEST(test_ipxe)
{
	struct ib_config *c = load("http:\n  listen: 0.0.0.0:8080\n");
	struct ipxe_settings s;
	char base[SETTINGS_URL_MAX], grpc[SETTINGS_GRPC_MAX], syslog[SETTINGS_IPV4_MAX];

	/* the request's public address fills every default */
	settings_base_url(c, IP(10, 0, 0, 9), base, sizeof(base));
	ck_assert_str_eq(base, "http://10.0.0.9:8080");
	settings_ipxe(c, IP(10, 0, 0, 9), base, grpc, syslog, &s);
	ck_assert_ptr_eq(s.base_url, base);
	ck_assert_str_eq(s.grpc_authority, "10.0.0.9:42113");
	ck_assert_str_eq(s.syslog_host, "10.0.0.9");
	ck_assert_str_eq(s.kernel, "vmlinuz-{{arch}}");
	ck_assert_uint_eq(s.retries, 3);
	ck_assert(!s.tls);
	/* none known: nothing made up */
	settings_base_url(c, 0, base, sizeof(base));
	ck_assert_str_eq(base, "");
	settings_ipxe(c, 0, base, grpc, syslog, &s);
	ck_assert_ptr_null(s.grpc_authority);
	ck_assert_ptr_null(s.syslog_host);
	config_free(c);

	/* configured values win; the base URL loses its trailing slash */
	c = load("dhcp:\n  http_base_url: https://boot.example.com/\n"
		 "  syslog_address: 10.0.0.4\n"
		 "ipxe:\n  grpc_authority: tink.example.com:42113\n  tinkerbell_tls: true\n");
	settings_base_url(c, IP(10, 0, 0, 9), base, sizeof(base));
	ck_assert_str_eq(base, "https://boot.example.com");
	settings_ipxe(c, IP(10, 0, 0, 9), base, grpc, syslog, &s);
	ck_assert_str_eq(s.grpc_authority, "tink.example.com:42113");
	ck_assert_str_eq(s.syslog_host, "10.0.0.4");
	ck_assert(s.tls);
	config_free(c);
}
END_TEST

/* The bmc: section becomes struct bmc_settings field by field; the
 * defaults of the file are the part's own, so bmc_settings_default()
 * changes nothing in what the daemon hands over. */
START_TEST(test_bmc)
{
	struct ib_config *c = load("bmc:\n  ipmi:\n    cipher_suite: 17\n    timeout: 250\n"
				   "    retries: 5\n    max_sessions: 9\n"
				   "  redfish:\n    timeout: 3000\n    max_connections: 7\n"
				   "  poll_interval: 11\n  task_timeout: 12\n  max_jobs: 13\n"
				   "  verify_interval: 140\n");
	struct bmc_settings b, d;
	settings_bmc(c, &b);
	ck_assert_uint_eq(b.cipher_suite, 17);
	ck_assert_uint_eq(b.timeout_ms, 250);
	ck_assert_uint_eq(b.retries, 5);
	ck_assert_uint_eq(b.max_sessions, 9);
	ck_assert_uint_eq(b.http_timeout_ms, 3000);
	ck_assert_uint_eq(b.max_connections, 7);
	ck_assert_ptr_null(b.ca_file);
	ck_assert_uint_eq(b.poll_interval_s, 11);
	ck_assert_uint_eq(b.task_timeout_s, 12);
	ck_assert_uint_eq(b.max_jobs, 13);
	ck_assert_uint_eq(b.verify_interval_ms, 140);
	config_free(c);

	c = load("");
	ck_assert(c->bmc.enabled);
	settings_bmc(c, &b);
	d = b;
	bmc_settings_default(&d);
	ck_assert_mem_eq(&b, &d, sizeof(b));
	ck_assert_uint_eq(b.cipher_suite, 3);
	ck_assert_uint_eq(b.poll_interval_s, 30);
	ck_assert_uint_eq(b.task_timeout_s, 600);
	ck_assert_uint_eq(b.max_jobs, 64);
	config_free(c);
}
END_TEST

/* The workflow: section, every key, and its defaults those of
 * wf_settings_default(). */
START_TEST(test_workflow)
{
	struct wf_settings w, d;
	struct ib_config *c = load("workflow:\n"
				   "  enabled: false\n"
				   "  resync_interval: 7\n"
				   "  default_action_timeout: 8\n"
				   "  action_grace: 9\n"
				   "  retry_backoff: 10\n"
				   "  retry_backoff_max: 11\n");
	ck_assert(!c->workflow.enabled);
	settings_workflow(c, &w);
	ck_assert_uint_eq(w.resync_s, 7);
	ck_assert_uint_eq(w.default_action_timeout_s, 8);
	ck_assert_uint_eq(w.action_grace_s, 9);
	ck_assert_uint_eq(w.retry_base_s, 10);
	ck_assert_uint_eq(w.retry_max_s, 11);
	config_free(c);

	c = load("");
	ck_assert(c->workflow.enabled);
	settings_workflow(c, &w);
	d = w;
	wf_settings_default(&d);
	ck_assert_mem_eq(&w, &d, sizeof(w));
	ck_assert_uint_eq(w.resync_s, 60);
	ck_assert_uint_eq(w.default_action_timeout_s, 3600);
	ck_assert_uint_eq(w.action_grace_s, 30);
	ck_assert_uint_eq(w.retry_base_s, 5);
	ck_assert_uint_eq(w.retry_max_s, 300);
	config_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon_settings");
	TCase *tc = tcase_create("daemon_settings");
	UNIT_TEST(tc, test_defaults_use_the_interface);
	UNIT_TEST(tc, test_every_key);
	UNIT_TEST(tc, test_fallback_chain);
	UNIT_TEST(tc, test_base_url);
	UNIT_TEST(tc, test_errors);
	UNIT_TEST(tc, test_dhcp_server_settings);
	UNIT_TEST(tc, test_tftp_syslog_metadata);
	UNIT_TEST(tc, test_ipxe);
	UNIT_TEST(tc, test_bmc);
	UNIT_TEST(tc, test_workflow);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
