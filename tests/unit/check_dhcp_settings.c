/* check_dhcp_settings — the dhcp: section of ironbell.yaml turned into the
 * policy's configuration: each fallback, the arch overrides, the boot URLs
 * and the errors. Configs are loaded from text with config_load_string, as
 * the daemon loads them. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "daemon/config/conf.h"
#include "dhcp/dhcp-policy.h"
#include "tests/unit/unit.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct ib_config *load(const char *text)
{
	char err[512];
	struct ib_config *c = NULL;
	int r = config_load_string("t.yaml", text, strlen(text), &c, err, sizeof(err));
	ck_assert_msg(r == 0, "config: %s", err);
	return c;
}

START_TEST(test_defaults_use_the_interface)
{
	struct ib_config *c = load("");
	struct dhcp_policy_config p;
	char err[256];
	ck_assert_int_eq(dhcp_policy_config_from(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
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
	ck_assert_int_eq(dhcp_policy_config_from(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
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
	ck_assert_int_eq(dhcp_policy_config_from(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.server_id, IP(10, 1, 0, 1));
	ck_assert_uint_eq(p.http_ip, IP(10, 1, 0, 1));
	ck_assert_uint_eq(p.tftp_ip, IP(10, 1, 0, 1));
	config_free(c);
	c = load("dhcp:\n  public_address: 10.2.0.1\n");
	ck_assert_int_eq(dhcp_policy_config_from(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
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
	ck_assert_int_eq(dhcp_policy_config_from(c, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
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
	ck_assert_int_eq(dhcp_policy_config_from(c, 0, &p, err, sizeof(err)), -EADDRNOTAVAIL);
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
	ck_assert_int_eq(dhcp_policy_config_from(c, IP(10, 0, 0, 1), &p, err, sizeof(err)), 0);
	config_free(c);
	ck_assert_uint_eq(strlen(p.binary_url), strlen("http://") + 149 +
							 strlen("/ipxe/binary/{mac}/{binary}"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dhcp_settings");
	TCase *tc = tcase_create("dhcp_settings");
	UNIT_TEST(tc, test_defaults_use_the_interface);
	UNIT_TEST(tc, test_every_key);
	UNIT_TEST(tc, test_fallback_chain);
	UNIT_TEST(tc, test_base_url);
	UNIT_TEST(tc, test_errors);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
