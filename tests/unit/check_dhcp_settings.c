/* check_dhcp_settings — the server's struct dhcp_settings turned into the
 * policy's configuration of one interface (dhcp_settings_policy): each gap
 * filled from the interface's address, the boot URLs made from the public
 * listener's port, what is set kept, and the errors; and the boot URLs
 * made from a base (dhcp_policy_set_base_url). The settings are built
 * here, as a test or the daemon (daemon/settings.c, check_daemon_settings)
 * builds them: no configuration file is read. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "dhcp/dhcp.h"
#include "tests/unit/unit.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* Settings with no address and no URL: every gap left open. */
static void open_settings(struct dhcp_settings *s, uint16_t http_port)
{
	memset(s, 0, sizeof(*s));
	dhcp_policy_config_default(&s->policy, 0);
	s->policy.server_id = s->policy.http_ip = s->policy.tftp_ip = 0;
	s->policy.script_url[0] = s->policy.binary_url[0] = '\0';
	s->http_port = http_port;
}

START_TEST(test_gaps_from_the_interface)
{
	struct dhcp_settings s;
	struct dhcp_policy_config p;
	char err[256];
	open_settings(&s, 8080);
	ck_assert_int_eq(dhcp_settings_policy(&s, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.server_id, IP(192, 168, 1, 2));
	ck_assert_uint_eq(p.http_ip, IP(192, 168, 1, 2));
	ck_assert_uint_eq(p.tftp_ip, IP(192, 168, 1, 2));
	ck_assert_str_eq(p.script_url, "http://192.168.1.2:8080/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(p.binary_url, "http://192.168.1.2:8080/ipxe/binary/{mac}/{binary}");
	/* the rest of the policy is the settings' own */
	ck_assert_str_eq(dhcp_policy_arch_binary(&p, 7), "ipxe.efi");
	ck_assert_uint_eq(p.lease_time, DHCP_DEFAULT_LEASE);
	/* another interface, other answers; the settings are not changed */
	ck_assert_int_eq(dhcp_settings_policy(&s, IP(10, 9, 0, 1), &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.server_id, IP(10, 9, 0, 1));
	ck_assert_str_eq(p.binary_url, "http://10.9.0.1:8080/ipxe/binary/{mac}/{binary}");
	ck_assert_uint_eq(s.policy.server_id, 0);
	ck_assert_str_eq(s.policy.script_url, "");
	/* no port: the public listener's default */
	open_settings(&s, 0);
	ck_assert_int_eq(dhcp_settings_policy(&s, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_str_eq(p.script_url, "http://192.168.1.2:7080/ipxe/script/{mac}/auto.ipxe");
}
END_TEST

START_TEST(test_set_values_kept)
{
	struct dhcp_settings s;
	struct dhcp_policy_config p;
	char err[256];
	/* a server address: the interface's is not used; http and tftp
	 * fall back to it */
	open_settings(&s, 7080);
	s.policy.server_id = IP(10, 1, 0, 1);
	ck_assert_int_eq(dhcp_settings_policy(&s, IP(192, 168, 1, 2), &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.server_id, IP(10, 1, 0, 1));
	ck_assert_uint_eq(p.http_ip, IP(10, 1, 0, 1));
	ck_assert_uint_eq(p.tftp_ip, IP(10, 1, 0, 1));
	ck_assert_str_eq(p.binary_url, "http://10.1.0.1:7080/ipxe/binary/{mac}/{binary}");
	/* every one set: all kept */
	s.policy.http_ip = IP(10, 0, 0, 2);
	s.policy.tftp_ip = IP(10, 0, 0, 3);
	ck_assert_int_eq(dhcp_policy_set_base_url(&s.policy, "https://boot.example.com"), 0);
	ck_assert_int_eq(dhcp_settings_policy(&s, 0, &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.server_id, IP(10, 1, 0, 1));
	ck_assert_uint_eq(p.http_ip, IP(10, 0, 0, 2));
	ck_assert_uint_eq(p.tftp_ip, IP(10, 0, 0, 3));
	ck_assert_str_eq(p.script_url, "https://boot.example.com/ipxe/script/{mac}/auto.ipxe");
	/* one URL set, the other made */
	s.policy.binary_url[0] = '\0';
	ck_assert_int_eq(dhcp_settings_policy(&s, 0, &p, err, sizeof(err)), 0);
	ck_assert_str_eq(p.script_url, "https://boot.example.com/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(p.binary_url, "http://10.0.0.2:7080/ipxe/binary/{mac}/{binary}");
}
END_TEST

START_TEST(test_no_address)
{
	struct dhcp_settings s;
	struct dhcp_policy_config p = { .lease_time = 12345 };
	char err[256] = "";
	open_settings(&s, 7080);
	ck_assert_int_eq(dhcp_settings_policy(&s, 0, &p, err, sizeof(err)), -EADDRNOTAVAIL);
	ck_assert_ptr_nonnull(strstr(err, "dhcp.server_address"));
	ck_assert_uint_eq(p.lease_time, 12345); /* untouched on failure */
}
END_TEST

START_TEST(test_base_url)
{
	struct dhcp_policy_config p;
	char base[DHCP_POLICY_URL_MAX + 2];
	dhcp_policy_config_default(&p, IP(10, 0, 0, 1));
	/* "https://h/" + "/ipxe/..." would give "//" */
	ck_assert_int_eq(dhcp_policy_set_base_url(&p, "https://boot.example.com/tink//"), 0);
	ck_assert_str_eq(p.script_url, "https://boot.example.com/tink/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(p.binary_url, "https://boot.example.com/tink/ipxe/binary/{mac}/{binary}");
	/* the longest that fits, and one byte more: refused, nothing changed */
	size_t fit = DHCP_POLICY_URL_MAX - strlen("/ipxe/script/{mac}/auto.ipxe");
	memset(base, 'a', fit);
	base[fit] = '\0';
	ck_assert_int_eq(dhcp_policy_set_base_url(&p, base), 0);
	ck_assert_uint_eq(strlen(p.script_url), DHCP_POLICY_URL_MAX);
	ck_assert_int_eq(dhcp_policy_set_base_url(&p, "http://x"), 0);
	base[fit] = 'a';
	base[fit + 1] = '\0';
	ck_assert_int_eq(dhcp_policy_set_base_url(&p, base), -ENAMETOOLONG);
	ck_assert_str_eq(p.script_url, "http://x/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(p.binary_url, "http://x/ipxe/binary/{mac}/{binary}");
	/* longer than any URL, before the paths are added */
	memset(base, 'a', sizeof(base) - 1);
	base[sizeof(base) - 1] = '\0';
	ck_assert_int_eq(dhcp_policy_set_base_url(&p, base), -ENAMETOOLONG);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dhcp_settings");
	TCase *tc = tcase_create("dhcp_settings");
	UNIT_TEST(tc, test_gaps_from_the_interface);
	UNIT_TEST(tc, test_set_values_kept);
	UNIT_TEST(tc, test_no_address);
	UNIT_TEST(tc, test_base_url);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
