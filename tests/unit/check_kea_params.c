/* check_kea_params — the Kea hook's parameters (dhcp/kea/params.c): the
 * defaults, every parameter's effect on struct ibkea_params and on the
 * policy configuration it makes, and a table of every refusal, each with
 * the name of the parameter in its message. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/kea/ironbell-kea.h"
#include "tests/unit/unit.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct ibkea_params p;
static char err[512];

static void ok(const char *js)
{
	err[0] = '\0';
	ck_assert_msg(ibkea_params_parse(js, js ? strlen(js) : 0, &p, err, sizeof(err)) == 0,
		      "%s: %s", js, err);
}

START_TEST(test_defaults)
{
	const struct dhcp_policy_config *c = &p.dhcp.policy;
	ok(NULL);
	ck_assert_int_eq(p.source, IBKEA_SOURCE_STORE);
	ck_assert_str_eq(p.store, IBKEA_DEFAULT_STORE);
	ck_assert_uint_eq(p.poll_ms, IBKEA_DEFAULT_POLL_MS);
	ck_assert_str_eq(p.api_url, "");
	ck_assert_str_eq(p.api_token_file, "");
	ck_assert_str_eq(p.api_ca_file, "");
	ck_assert_uint_eq(p.dhcp.http_port, 7080);
	ck_assert_uint_eq(p.dhcp.ninterfaces, 0);
	ck_assert_int_eq(c->mode, DHCP_MODE_RESERVATION);
	ck_assert(c->netboot);
	ck_assert_uint_eq(c->server_id, 0);
	ck_assert_uint_eq(c->http_ip, 0);
	ck_assert_uint_eq(c->tftp_ip, 0);
	ck_assert_uint_eq(c->syslog_ip, 0);
	ck_assert_uint_eq(c->lease_time, DHCP_DEFAULT_LEASE);
	ck_assert_uint_eq(c->lease_reuse, 0);
	ck_assert_str_eq(c->script_url, "");
	ck_assert_str_eq(c->binary_url, "");
	ck_assert_str_eq(dhcp_policy_arch_binary(c, 0), "undionly.kpxe");
	ck_assert_str_eq(dhcp_policy_arch_binary(c, 7), "ipxe.efi");
	/* The same for "" and "{}". */
	ck_assert_int_eq(ibkea_params_parse("", 0, &p, err, sizeof(err)), 0);
	ok("{}");
	ck_assert_str_eq(p.store, IBKEA_DEFAULT_STORE);
}
END_TEST

/* The gaps are Kea's server identifier's, as ironbelld's are its
 * interface's (dhcp_settings_policy). */
START_TEST(test_defaults_filled_per_reply)
{
	struct dhcp_policy_config c;
	ok("{}");
	ck_assert_int_eq(dhcp_settings_policy(&p.dhcp, IP(10, 0, 0, 1), &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.server_id, IP(10, 0, 0, 1));
	ck_assert_uint_eq(c.http_ip, IP(10, 0, 0, 1));
	ck_assert_uint_eq(c.tftp_ip, IP(10, 0, 0, 1));
	ck_assert_str_eq(c.script_url, "http://10.0.0.1:7080/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(c.binary_url, "http://10.0.0.1:7080/ipxe/binary/{mac}/{binary}");
	ok("{\"http-port\":8080}");
	ck_assert_uint_eq(p.dhcp.http_port, 8080);
	ck_assert_int_eq(dhcp_settings_policy(&p.dhcp, IP(10, 0, 0, 1), &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.script_url, "http://10.0.0.1:8080/ipxe/script/{mac}/auto.ipxe");
}
END_TEST

START_TEST(test_store_params)
{
	ok("{\"source\":\"store\",\"store\":\"/srv/ib/ironbell.db\",\"poll-interval-ms\":10}");
	ck_assert_int_eq(p.source, IBKEA_SOURCE_STORE);
	ck_assert_str_eq(p.store, "/srv/ib/ironbell.db");
	ck_assert_uint_eq(p.poll_ms, 10);
	ok("{\"poll-interval-ms\":10000}");
	ck_assert_uint_eq(p.poll_ms, IBKEA_MAX_POLL_MS);
}
END_TEST

START_TEST(test_api_params)
{
	ok("{\"source\":\"api\",\"api-url\":\"https://ib.example:7443\","
	   "\"api-token-file\":\"/etc/kea/ironbell.token\",\"api-ca-file\":\"/etc/kea/ca.pem\"}");
	ck_assert_int_eq(p.source, IBKEA_SOURCE_API);
	ck_assert_str_eq(p.api_url, "https://ib.example:7443");
	ck_assert_str_eq(p.api_token_file, "/etc/kea/ironbell.token");
	ck_assert_str_eq(p.api_ca_file, "/etc/kea/ca.pem");
	/* api-url alone implies "api". */
	ok("{\"api-url\":\"http://127.0.0.1:7443\",\"api-token-file\":\"/t\",\"api-ca-file\":\"\"}");
	ck_assert_int_eq(p.source, IBKEA_SOURCE_API);
	ck_assert_str_eq(p.api_ca_file, "");
	ok("{\"api-url\":\"http://127.1.2.3/\",\"api-token-file\":\"/t\"}");
	ok("{\"api-url\":\"http://[::1]:7443\",\"api-token-file\":\"/t\"}");
	ok("{\"api-url\":\"https://[2001:db8::1]:7443\",\"api-token-file\":\"/t\"}");
}
END_TEST

START_TEST(test_netboot_params)
{
	const struct dhcp_policy_config *c = &p.dhcp.policy;
	ok("{\"netboot\":false,\"public-address\":\"192.0.2.7\"}");
	ck_assert(!c->netboot);
	ck_assert_uint_eq(c->http_ip, IP(192, 0, 2, 7));
	ck_assert_uint_eq(c->tftp_ip, IP(192, 0, 2, 7));
	ck_assert_uint_eq(c->server_id, 0); /* always Kea's */
	ck_assert_str_eq(c->script_url, "http://192.0.2.7:7080/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(c->binary_url, "http://192.0.2.7:7080/ipxe/binary/{mac}/{binary}");
	ok("{\"public-address\":\"192.0.2.7\",\"http-port\":80,\"tftp-address\":\"192.0.2.8\","
	   "\"syslog-address\":\"192.0.2.9\"}");
	ck_assert(c->netboot);
	ck_assert_uint_eq(c->tftp_ip, IP(192, 0, 2, 8));
	ck_assert_uint_eq(c->syslog_ip, IP(192, 0, 2, 9));
	ck_assert_str_eq(c->script_url, "http://192.0.2.7:80/ipxe/script/{mac}/auto.ipxe");
	ok("{\"http-base-url\":\"https://boot.example/ib/\",\"public-address\":\"192.0.2.7\"}");
	ck_assert_str_eq(c->script_url, "https://boot.example/ib/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(c->binary_url, "https://boot.example/ib/ipxe/binary/{mac}/{binary}");
	ok("{\"netboot\":true}");
	ck_assert(c->netboot);
}
END_TEST

START_TEST(test_arch)
{
	const struct dhcp_policy_config *c = &p.dhcp.policy;
	size_t n;
	ok("{}");
	n = c->narches;
	ok("{\"arch\":{\"0\":\"custom.kpxe\",\"65535\":\"x-1_2.efi\",\"99\":\"new.efi\"}}");
	ck_assert_uint_eq(c->narches, n + 2); /* 0 replaced, two added */
	ck_assert_str_eq(dhcp_policy_arch_binary(c, 0), "custom.kpxe");
	ck_assert_str_eq(dhcp_policy_arch_binary(c, 65535), "x-1_2.efi");
	ck_assert_str_eq(dhcp_policy_arch_binary(c, 99), "new.efi");
	ck_assert_str_eq(dhcp_policy_arch_binary(c, 7), "ipxe.efi");
	ok("{\"arch\":{}}");
	ck_assert_uint_eq(c->narches, n);
}
END_TEST

/* The longest values that are taken. */
START_TEST(test_limits)
{
	char js[4096], path[IBKEA_PATH_MAX + 1], bin[DHCP_HOST_BINARY_MAX + 1];
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	memset(bin, 'b', sizeof(bin) - 1);
	bin[sizeof(bin) - 1] = '\0';
	snprintf(js, sizeof(js), "{\"store\":\"%s\",\"arch\":{\"1\":\"%s\"}}", path, bin);
	ok(js);
	ck_assert_str_eq(p.store, path);
	ck_assert_str_eq(dhcp_policy_arch_binary(&p.dhcp.policy, 1), bin);
}
END_TEST

static const struct {
	const char *json;
	const char *name; /* in the message */
} bad[] = {
	/* the text */
	{ "{", "line 1" },
	{ "[]", "JSON object" },
	{ "\"store\"", "parameters: " },
	{ "{\"store\":\"/a\",\"store\":\"/b\"}", "duplicate" },
	{ "{\"no-such\":1}", "\"no-such\"" },
	{ "{\"Store\":\"/a\"}", "\"Store\"" },
	/* source */
	{ "{\"source\":\"kube\"}", "\"source\"" },
	{ "{\"source\":1}", "\"source\"" },
	{ "{\"source\":\"api\"}", "\"api-url\"" },
	{ "{\"source\":\"api\",\"api-url\":\"https://h\"}", "\"api-token-file\"" },
	{ "{\"api-url\":\"https://h\"}", "\"api-token-file\"" },
	{ "{\"source\":\"store\",\"api-url\":\"https://h\",\"api-token-file\":\"/t\"}",
	  "\"api-url\"" },
	/* store */
	{ "{\"store\":\"ironbell.db\"}", "\"store\"" },
	{ "{\"store\":\"\"}", "\"store\"" },
	{ "{\"store\":true}", "\"store\"" },
	{ "{\"store\":\"/a\\u0000b\"}", "line 1" },
	/* poll-interval-ms */
	{ "{\"poll-interval-ms\":9}", "\"poll-interval-ms\"" },
	{ "{\"poll-interval-ms\":10001}", "\"poll-interval-ms\"" },
	{ "{\"poll-interval-ms\":-1}", "\"poll-interval-ms\"" },
	{ "{\"poll-interval-ms\":1.5}", "\"poll-interval-ms\"" },
	{ "{\"poll-interval-ms\":\"200\"}", "\"poll-interval-ms\"" },
	{ "{\"poll-interval-ms\":99999999999999999999}", "line 1" },
	/* api-url */
	{ "{\"api-url\":\"http://10.0.0.1:7443\",\"api-token-file\":\"/t\"}", "\"api-url\"" },
	{ "{\"api-url\":\"http://localhost:7443\",\"api-token-file\":\"/t\"}", "\"api-url\"" },
	{ "{\"api-url\":\"http://127.0.0.1.evil.example/\",\"api-token-file\":\"/t\"}",
	  "\"api-url\"" },
	{ "{\"api-url\":\"http://[::2]:7443\",\"api-token-file\":\"/t\"}", "\"api-url\"" },
	{ "{\"api-url\":\"ftp://h\",\"api-token-file\":\"/t\"}", "\"api-url\"" },
	{ "{\"api-url\":\"https://\",\"api-token-file\":\"/t\"}", "\"api-url\"" },
	{ "{\"api-url\":\"ib.example:7443\",\"api-token-file\":\"/t\"}", "\"api-url\"" },
	{ "{\"api-url\":7443}", "\"api-url\"" },
	/* api-token-file, api-ca-file */
	{ "{\"api-url\":\"https://h\",\"api-token-file\":\"token\"}", "\"api-token-file\"" },
	{ "{\"api-url\":\"https://h\",\"api-token-file\":\"\"}", "\"api-token-file\"" },
	{ "{\"api-ca-file\":\"ca.pem\"}", "\"api-ca-file\"" },
	{ "{\"api-ca-file\":null}", "\"api-ca-file\"" },
	/* netboot */
	{ "{\"netboot\":\"true\"}", "\"netboot\"" },
	{ "{\"netboot\":1}", "\"netboot\"" },
	/* addresses */
	{ "{\"public-address\":\"10.0.0\"}", "\"public-address\"" },
	{ "{\"public-address\":\"10.0.0.256\"}", "\"public-address\"" },
	{ "{\"public-address\":\"10.0.0.1 \"}", "\"public-address\"" },
	{ "{\"public-address\":\"0.0.0.0\"}", "\"public-address\"" },
	{ "{\"public-address\":\"2001:db8::1\"}", "\"public-address\"" },
	{ "{\"public-address\":167772161}", "\"public-address\"" },
	{ "{\"tftp-address\":\"1.2.3.4.5\"}", "\"tftp-address\"" },
	{ "{\"syslog-address\":\"host\"}", "\"syslog-address\"" },
	/* http */
	{ "{\"http-port\":0}", "\"http-port\"" },
	{ "{\"http-port\":65536}", "\"http-port\"" },
	{ "{\"http-port\":\"80\"}", "\"http-port\"" },
	{ "{\"http-base-url\":\"boot.example\"}", "\"http-base-url\"" },
	{ "{\"http-base-url\":\"\"}", "\"http-base-url\"" },
	{ "{\"http-base-url\":false}", "\"http-base-url\"" },
	/* arch */
	{ "{\"arch\":[]}", "\"arch\"" },
	{ "{\"arch\":{\"x86\":\"a.efi\"}}", "\"arch\"" },
	{ "{\"arch\":{\"65536\":\"a.efi\"}}", "\"arch\"" },
	{ "{\"arch\":{\"-1\":\"a.efi\"}}", "\"arch\"" },
	{ "{\"arch\":{\"+7\":\"a.efi\"}}", "\"arch\"" },
	{ "{\"arch\":{\"\":\"a.efi\"}}", "\"arch\"" },
	{ "{\"arch\":{\"7\":\"../a.efi\"}}", "\"arch\"" },
	{ "{\"arch\":{\"7\":\"dir/a.efi\"}}", "\"arch\"" },
	{ "{\"arch\":{\"7\":\".hidden\"}}", "\"arch\"" },
	{ "{\"arch\":{\"7\":\"\"}}", "\"arch\"" },
	{ "{\"arch\":{\"7\":7}}", "\"arch\"" },
};

START_TEST(test_refused)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ibkea_params q;
		memset(&q, 0x5a, sizeof(q));
		err[0] = '\0';
		int e = ibkea_params_parse(bad[i].json, strlen(bad[i].json), &q, err, sizeof(err));
		ck_assert_msg(e == -EINVAL, "%s: %d", bad[i].json, e);
		ck_assert_msg(strstr(err, bad[i].name), "%s: message \"%s\" does not name %s",
			      bad[i].json, err, bad[i].name);
		/* *ret untouched */
		ck_assert_uint_eq(((unsigned char *)&q)[0], 0x5a);
		ck_assert_uint_eq(q.poll_ms, 0x5a5a5a5au);
	}
}
END_TEST

/* The error messages of the spec: the parameter, then what is wrong. */
START_TEST(test_messages)
{
	static const char js[] = "{\"http-port\":0}";
	ck_assert_int_eq(ibkea_params_parse(js, strlen(js), &p, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "parameter \"http-port\": must be 1..65535");
	ck_assert_int_eq(ibkea_params_parse("{\n\"a\":", 6, &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "line 2"));
}
END_TEST

START_TEST(test_too_long)
{
	size_t n = IBKEA_PARAMS_MAX + 1;
	char *js = malloc(n + 1);
	ck_assert_ptr_nonnull(js);
	/* A valid object, one byte too long. */
	memset(js, ' ', n);
	js[0] = '{';
	js[n - 1] = '}';
	js[n] = '\0';
	ck_assert_int_eq(ibkea_params_parse(js, n, &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "longer than"));
	ck_assert_int_eq(ibkea_params_parse(js + 1, n - 1, &p, err, sizeof(err)), -EINVAL);
	js[1] = '{';
	ck_assert_int_eq(ibkea_params_parse(js + 1, n - 1, &p, err, sizeof(err)), 0);
	free(js);
	/* Too long for the boot URLs made from it. */
	char url[DHCP_POLICY_URL_MAX + 64];
	char big[DHCP_POLICY_URL_MAX + 128];
	memset(url, 'u', sizeof(url) - 1);
	memcpy(url, "http://", 7);
	url[DHCP_POLICY_URL_MAX - 10] = '\0';
	snprintf(big, sizeof(big), "{\"http-base-url\":\"%s\"}", url);
	ck_assert_int_eq(ibkea_params_parse(big, strlen(big), &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "\"http-base-url\""));
	/* A path one byte too long. */
	char path[IBKEA_PATH_MAX + 2], pj[IBKEA_PATH_MAX + 64];
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	snprintf(pj, sizeof(pj), "{\"store\":\"%s\"}", path);
	ck_assert_int_eq(ibkea_params_parse(pj, strlen(pj), &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "\"store\""));
	/* A binary one byte too long. */
	char bin[DHCP_HOST_BINARY_MAX + 2], bj[256];
	memset(bin, 'b', sizeof(bin) - 1);
	bin[sizeof(bin) - 1] = '\0';
	snprintf(bj, sizeof(bj), "{\"arch\":{\"7\":\"%s\"}}", bin);
	ck_assert_int_eq(ibkea_params_parse(bj, strlen(bj), &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "\"arch\""));
}
END_TEST

/* More architectures than the table holds. */
START_TEST(test_arch_full)
{
	char js[8192];
	size_t n = 0;
	n += (size_t)snprintf(js + n, sizeof(js) - n, "{\"arch\":{");
	for (int i = 0; i < DHCP_POLICY_MAX_ARCHES; i++)
		n += (size_t)snprintf(js + n, sizeof(js) - n, "%s\"%d\":\"a.efi\"", i ? "," : "",
				      1000 + i);
	snprintf(js + n, sizeof(js) - n, "}}");
	ck_assert_int_eq(ibkea_params_parse(js, strlen(js), &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "more than"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kea_params");
	TCase *tc = tcase_create("params");
	UNIT_TEST(tc, test_defaults);
	UNIT_TEST(tc, test_defaults_filled_per_reply);
	UNIT_TEST(tc, test_store_params);
	UNIT_TEST(tc, test_api_params);
	UNIT_TEST(tc, test_netboot_params);
	UNIT_TEST(tc, test_arch);
	UNIT_TEST(tc, test_limits);
	UNIT_TEST(tc, test_refused);
	UNIT_TEST(tc, test_messages);
	UNIT_TEST(tc, test_too_long);
	UNIT_TEST(tc, test_arch_full);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
