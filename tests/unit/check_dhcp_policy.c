/* check_dhcp_policy — the DHCP policy (dhcp/policy.c) and the Hardware view
 * it reads (dhcp/host.c): requests built byte by byte and parsed, replies
 * written with dhcp_write and parsed back, every boot decision, message
 * type and mode; Hardware JSON good and bad. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <string.h>

#include "dhcp/dhcp-policy.h"
#include "tests/unit/dhcp_builder.h"
#include "tests/unit/unit.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define PUBLIC IP(10, 0, 0, 5)
#define HOST_IP IP(10, 0, 0, 50)
#define RELAY_IP IP(10, 0, 0, 254) /* a relay on the host's subnet */
#define MAC_STR "52:54:00:12:34:56"

static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t *client_mac = mac; /* the chaddr of requests built */

/* ---- building requests byte by byte ---- */

/* Header, cookie and option 53 of a BOOTREQUEST from mac. */
static void tp_start(struct tp *t, uint8_t type, uint32_t ciaddr, uint32_t giaddr, bool bcast)
{
	t->len = 0;
	tp_byte(t, DHCP_BOOTREQUEST);
	tp_byte(t, 1);
	tp_byte(t, 6);
	tp_byte(t, giaddr ? 1 : 0);
	tp_be32(t, 0x01020304); /* xid */
	tp_byte(t, 0);
	tp_byte(t, 0); /* secs */
	tp_byte(t, bcast ? 0x80 : 0);
	tp_byte(t, 0); /* flags */
	tp_be32(t, ciaddr);
	tp_be32(t, 0);
	tp_be32(t, 0);
	tp_be32(t, giaddr);
	tp_bytes(t, client_mac, 6);
	while (t->len < DHCP_FIXED_LEN)
		tp_byte(t, 0);
	tp_be32(t, DHCP_MAGIC);
	tp_byte(t, DHCP_OPT_MESSAGE_TYPE);
	tp_byte(t, 1);
	tp_byte(t, type);
}

static void tp_ip(struct tp *t, uint8_t code, uint32_t ip)
{
	tp_byte(t, code);
	tp_byte(t, 4);
	tp_be32(t, ip);
}

static const uint8_t guid[17] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* The options of a PXE/HTTP boot client: 60, 93, 94, 97, 55. */
static void tp_pxe(struct tp *t, const char *vendor, uint16_t arch)
{
	tp_opt(t, 55, 9, 1, 3, 6, 12, 15, 43, 60, 66, 67);
	tp_opt_str(t, 60, vendor);
	tp_opt(t, 93, 2, arch >> 8, arch & 0xff);
	tp_opt(t, 94, 3, 1, 3, 16);
	tp_byte(t, 97);
	tp_byte(t, 17);
	tp_bytes(t, guid, 17);
}

static struct dhcp_packet req, rp;
static struct dhcp_reply rep;
static struct dhcp_decision dec;
static struct dhcp_host host;
static struct dhcp_policy_config cfg;
static struct dhcp_write_info winfo;
static const struct dhcp_link *link_in; /* the interface's subnets; NULL: none known */
static uint8_t out[DHCP_MAX_MESSAGE + 64];

static void tp_end(struct tp *t)
{
	enum dhcp_bad bad = DHCP_OK;
	tp_byte(t, DHCP_OPT_END);
	ck_assert_msg(dhcp_parse(t->b, t->len, &req, &bad) == 0, "request does not parse: %s",
		      dhcp_bad_reason_name(bad));
}

/* Runs the policy; when it answers, writes the reply and parses it back
 * into rp. Returns what dhcp_policy returned. */
static int run(uint16_t port, const struct dhcp_host *h)
{
	int e = dhcp_policy(&req, port, h, link_in, &cfg, &rep, &dec);
	ck_assert_ptr_nonnull(dec.why);
	if (e == 1) {
		int n = dhcp_write(&rep, out, sizeof(out), &winfo);
		ck_assert_msg(n > 0, "dhcp_write: %d", n);
		ck_assert_int_eq(dhcp_parse(out, (size_t)n, &rp, NULL), 0);
		ck_assert_int_eq(rp.op, DHCP_BOOTREPLY);
		ck_assert_uint_eq(rp.xid, 0x01020304);
		ck_assert_mem_eq(rp.chaddr, client_mac, 6);
	}
	return e;
}

static void expect_silent(uint16_t port, const struct dhcp_host *h, const char *why)
{
	ck_assert_int_eq(run(port, h), 0);
	ck_assert_str_eq(dec.why, why);
	ck_assert_int_eq(dec.type, DHCP_NONE);
}

static uint32_t opt_ip(uint8_t code)
{
	uint32_t v = 0;
	ck_assert_msg(dhcp_opt_ip(&rp, code, &v) == 0, "option %u missing", code);
	return v;
}

static uint32_t opt_u32(uint8_t code)
{
	uint32_t v = 0;
	ck_assert_msg(dhcp_opt_u32(&rp, code, &v) == 0, "option %u missing", code);
	return v;
}

static void expect_str(uint8_t code, const char *want)
{
	const char *s;
	size_t n;
	ck_assert_msg(dhcp_opt_string(&rp, code, &s, &n) == 0, "option %u missing", code);
	ck_assert_msg(n == strlen(want) && memcmp(s, want, n) == 0, "option %u: %.*s != %s", code,
		      (int)n, s, want);
}

static void expect_file(const char *want)
{
	char f[DHCP_FILE_LEN + 1] = { 0 };
	memcpy(f, rp.file, DHCP_FILE_LEN);
	ck_assert_str_eq(f, want);
	expect_str(DHCP_OPT_BOOTFILE, want);
	ck_assert_str_eq(dec.file, want);
}

/* Option 43 = PXE discovery control 8, then END. */
static void expect_pxe43(void)
{
	static const uint8_t want[] = { 6, 1, 8, 255 };
	const uint8_t *d;
	size_t n;
	ck_assert_int_eq(dhcp_opt_get(&rp, DHCP_OPT_VENDOR_SPECIFIC, &d, &n), 0);
	ck_assert_uint_eq(n, sizeof(want));
	ck_assert_mem_eq(d, want, sizeof(want));
}

/* ---- Hardware fixtures ---- */

static const char hw_json[] =
	"{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Hardware\","
	"\"metadata\":{\"name\":\"m1\",\"namespace\":\"prov\"},"
	"\"spec\":{\"interfaces\":["
	"{\"dhcp\":{\"mac\":\"52:54:00:aa:bb:01\",\"ip\":{\"address\":\"10.1.0.50\"}}},"
	"{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"hostname\":\"m1\","
	"\"domain_name\":\"lab.example\",\"lease_time\":3600,"
	"\"name_servers\":[\"10.0.0.2\",\"2001:db8::1\",\"10.0.0.3\"],"
	"\"time_servers\":[\"10.0.0.4\"],"
	"\"ip\":{\"address\":\"10.0.0.50\",\"netmask\":\"255.255.255.0\","
	"\"gateway\":\"10.0.0.1\",\"family\":4},"
	"\"vlan_id\":\"12\",\"arch\":\"x86_64\",\"uefi\":true,\"iface_name\":\"eth0\","
	"\"classless_static_routes\":[{\"destination_descriptor\":\"192.168.0.0/16\","
	"\"router\":\"10.0.0.254\"}]},"
	"\"netboot\":{\"allowPXE\":true,\"allowWorkflow\":true}}]}}";

static json_t *load(const char *s)
{
	json_error_t jerr;
	json_t *j = json_loads(s, 0, &jerr);
	ck_assert_msg(j != NULL, "bad test JSON: %s", jerr.text);
	return j;
}

static void setup(void)
{
	char err[256];
	json_t *hw = load(hw_json);
	memset(&host, 0, sizeof(host));
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &host, err, sizeof(err)), 0);
	json_decref(hw);
	dhcp_policy_config_default(&cfg, PUBLIC);
}

/* ---- dhcp_host_from_hardware ---- */

START_TEST(test_host_full)
{
	ck_assert_str_eq(host.name, "m1");
	ck_assert_str_eq(host.namespace_, "prov");
	ck_assert_mem_eq(host.mac, mac, 6);
	ck_assert_uint_eq(host.ip, HOST_IP);
	ck_assert_uint_eq(host.netmask, IP(255, 255, 255, 0));
	ck_assert_uint_eq(host.gateway, IP(10, 0, 0, 1));
	ck_assert_uint_eq(host.ndns, 2); /* the IPv6 server is skipped */
	ck_assert_uint_eq(host.dns[0], IP(10, 0, 0, 2));
	ck_assert_uint_eq(host.dns[1], IP(10, 0, 0, 3));
	ck_assert_uint_eq(host.nntp, 1);
	ck_assert_uint_eq(host.ntp[0], IP(10, 0, 0, 4));
	ck_assert_str_eq(host.hostname, "m1");
	ck_assert_str_eq(host.domain, "lab.example");
	ck_assert_uint_eq(host.lease_time, 3600);
	ck_assert_int_eq(host.vlan_id, 12);
	ck_assert_uint_eq(host.nroutes, 1);
	ck_assert_uint_eq(host.routes[0].dest, IP(192, 168, 0, 0));
	ck_assert_uint_eq(host.routes[0].prefix, 16);
	ck_assert_uint_eq(host.routes[0].router, IP(10, 0, 0, 254));
	ck_assert_str_eq(host.arch, "x86_64");
	ck_assert_int_eq(host.uefi, DHCP_TRUE);
	ck_assert_int_eq(host.allow_pxe, DHCP_TRUE);
	ck_assert(!host.disable_dhcp);
	ck_assert_str_eq(host.tftp_server_name, "");
	ck_assert_str_eq(host.ipxe_url, "");
}
END_TEST

START_TEST(test_host_other_interface_minimal)
{
	static const uint8_t mac1[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0x01 };
	struct dhcp_host h;
	char err[256];
	json_t *hw = load(hw_json);
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac1, &h, err, sizeof(err)), 0);
	json_decref(hw);
	ck_assert_uint_eq(h.ip, IP(10, 1, 0, 50));
	ck_assert_uint_eq(h.netmask, 0);
	ck_assert_uint_eq(h.gateway, 0);
	ck_assert_uint_eq(h.ndns, 0);
	ck_assert_uint_eq(h.lease_time, 0);
	ck_assert_int_eq(h.vlan_id, -1);
	ck_assert_int_eq(h.allow_pxe, DHCP_UNSET);
	ck_assert_int_eq(h.uefi, DHCP_UNSET);
	ck_assert_str_eq(h.hostname, "");
	ck_assert(!h.disable_dhcp);
}
END_TEST

START_TEST(test_host_no_match)
{
	static const uint8_t other[6] = { 2, 0, 0, 0, 0, 9 };
	struct dhcp_host h;
	char err[256];
	json_t *hw = load(hw_json);
	ck_assert_int_eq(dhcp_host_from_hardware(hw, other, &h, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "02:00:00:00:00:09"));
	json_decref(hw);
	hw = load("{\"metadata\":{\"name\":\"x\"},\"spec\":{}}");
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), -ENOENT);
	json_decref(hw);
}
END_TEST

START_TEST(test_host_flags_and_netboot)
{
	struct dhcp_host h;
	char err[256];
	json_t *hw = load("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"interfaces\":["
			  "{\"dhcp\":{\"mac\":\"52:54:00:12:34:56\",\"vlan_id\":\"\","
			  "\"tftp_server_name\":\"10.9.9.9\",\"boot_file_name\":\"pxelinux.0\"},"
			  "\"disableDhcp\":true,"
			  "\"netboot\":{\"allowPXE\":false,\"ipxe\":{\"url\":\"http://a/b.ipxe\","
			  "\"binary\":\"snp-x86_64.efi\"}}}]}}");
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), 0);
	json_decref(hw);
	ck_assert(h.disable_dhcp);
	ck_assert_int_eq(h.allow_pxe, DHCP_FALSE);
	ck_assert_str_eq(h.ipxe_url, "http://a/b.ipxe");
	ck_assert_str_eq(h.ipxe_binary, "snp-x86_64.efi");
	ck_assert_str_eq(h.tftp_server_name, "10.9.9.9");
	ck_assert_str_eq(h.boot_file_name, "pxelinux.0");
	ck_assert_int_eq(h.vlan_id, -1);
	ck_assert_str_eq(h.name, "x");
	ck_assert_str_eq(h.namespace_, "");
	/* Upper-case MAC in the object still matches. */
	hw = load("{\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"52:54:00:12:34:56\"}}]}}");
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), 0);
	json_decref(hw);
	hw = load("{\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"52:54:00:12:34:56\","
		  "\"lease_time\":99999999999}}]}}");
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), 0);
	ck_assert_uint_eq(h.lease_time, UINT32_MAX);
	json_decref(hw);
}
END_TEST

/* Malformed or over-long fields: -EINVAL naming the field, *ret untouched. */
static const struct {
	const char *iface; /* the interface object */
	const char *field; /* expected in the message */
} bad_hosts[] = {
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"ip\":{\"address\":\"10.0.0.300\"}}}",
	  "dhcp.ip.address" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"ip\":{\"netmask\":7}}}", "dhcp.ip.netmask" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"vlan_id\":\"5000\"}}", "dhcp.vlan_id" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"vlan_id\":\"-1\"}}", "dhcp.vlan_id" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"lease_time\":-5}}", "dhcp.lease_time" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"lease_time\":\"60\"}}", "dhcp.lease_time" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"name_servers\":[\"dns1\"]}}",
	  "dhcp.name_servers[0]" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"time_servers\":\"10.0.0.1\"}}",
	  "dhcp.time_servers" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"classless_static_routes\":[{"
	  "\"destination_descriptor\":\"10.0.0.1/8\",\"router\":\"10.0.0.254\"}]}}",
	  "classless_static_routes[0].destination_descriptor" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"classless_static_routes\":[{"
	  "\"destination_descriptor\":\"10.0.0.0/33\",\"router\":\"10.0.0.254\"}]}}",
	  "classless_static_routes[0].destination_descriptor" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"classless_static_routes\":[{"
	  "\"destination_descriptor\":\"10.0.0.0/8\",\"router\":\"fe80::1\"}]}}",
	  "classless_static_routes[0].router" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"hostname\":5}}", "dhcp.hostname" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\",\"uefi\":\"yes\"}}", "dhcp.uefi" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\"},\"netboot\":{\"allowPXE\":\"true\"}}",
	  "netboot.allowPXE" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\"},\"netboot\":{\"ipxe\":[]}}", "netboot.ipxe" },
	{ "{\"dhcp\":{\"mac\":\"" MAC_STR "\"},\"disableDhcp\":1}", "disableDhcp" },
};

START_TEST(test_host_bad_fields)
{
	char doc[1024], err[256];
	struct dhcp_host h;
	memset(&h, 0xa5, sizeof(h));
	snprintf(doc, sizeof(doc), "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"interfaces\":[%s]}}",
		 bad_hosts[_i].iface);
	json_t *hw = load(doc);
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), -EINVAL);
	json_decref(hw);
	ck_assert_msg(strstr(err, bad_hosts[_i].field), "row %d: \"%s\" lacks %s", _i, err,
		      bad_hosts[_i].field);
	ck_assert_uint_eq(((uint8_t *)&h)[0], 0xa5);
	ck_assert_uint_eq(((uint8_t *)&h)[sizeof(h) - 1], 0xa5);
}
END_TEST

/* A value one byte over its limit is refused, at the limit accepted. */
static void limit_case(const char *obj, const char *key, size_t max, const char *field)
{
	char s[1100], err[256];
	struct dhcp_host h;
	json_t *hw = load("{\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"" MAC_STR "\"},"
			  "\"netboot\":{\"ipxe\":{}}}]}}");
	json_t *ifc = json_array_get(json_object_get(json_object_get(hw, "spec"), "interfaces"), 0);
	json_t *o = strcmp(obj, "ipxe") == 0 ?
			    json_object_get(json_object_get(ifc, "netboot"), "ipxe") :
			    json_object_get(ifc, "dhcp");
	ck_assert_uint_lt(max + 1, sizeof(s));
	memset(s, 'a', max);
	s[max] = '\0';
	json_object_set_new(o, key, json_string(s));
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), 0);
	s[max] = 'a';
	s[max + 1] = '\0';
	json_object_set_new(o, key, json_string(s));
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, field), "%s", err);
	json_decref(hw);
}

START_TEST(test_host_limits)
{
	limit_case("dhcp", "hostname", DHCP_HOST_STRING_MAX, "dhcp.hostname");
	limit_case("dhcp", "domain_name", DHCP_HOST_STRING_MAX, "dhcp.domain_name");
	limit_case("dhcp", "boot_file_name", DHCP_HOST_STRING_MAX, "dhcp.boot_file_name");
	limit_case("ipxe", "url", DHCP_HOST_URL_MAX, "netboot.ipxe.url");
	limit_case("ipxe", "binary", DHCP_HOST_BINARY_MAX, "netboot.ipxe.binary");
}
END_TEST

START_TEST(test_host_too_many_dns)
{
	char err[256];
	struct dhcp_host h;
	json_t *hw = load("{\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"" MAC_STR "\"}}]}}");
	json_t *d = json_object_get(
		json_array_get(json_object_get(json_object_get(hw, "spec"), "interfaces"), 0),
		"dhcp");
	json_t *arr = json_array();
	for (unsigned i = 0; i < DHCP_HOST_MAX_DNS; i++) {
		char ip[32];
		snprintf(ip, sizeof(ip), "10.0.1.%u", (i + 1) & 0xff);
		json_array_append_new(arr, json_string(ip));
	}
	json_object_set_new(d, "name_servers", arr);
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), 0);
	ck_assert_uint_eq(h.ndns, DHCP_HOST_MAX_DNS);
	json_array_append_new(arr, json_string("10.0.2.1"));
	ck_assert_int_eq(dhcp_host_from_hardware(hw, mac, &h, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "dhcp.name_servers"));
	json_decref(hw);
}
END_TEST

/* ---- configuration ---- */

static const struct {
	uint16_t arch;
	const char *bin;
} arch_table[] = {
	{ 0, "undionly.kpxe" },  { 1, "undionly.kpxe" },  { 2, "undionly.kpxe" },
	{ 3, "undionly.kpxe" },  { 4, "undionly.kpxe" },  { 5, "undionly.kpxe" },
	{ 20, "undionly.kpxe" }, { 6, "ipxe.efi" },       { 7, "ipxe.efi" },
	{ 8, "ipxe.efi" },       { 9, "ipxe.efi" },       { 15, "ipxe.efi" },
	{ 10, "snp-arm64.efi" }, { 11, "snp-arm64.efi" }, { 18, "snp-arm64.efi" },
	{ 19, "snp-arm64.efi" }, { 41, "snp-arm64.efi" },
};

START_TEST(test_config_default)
{
	ck_assert_int_eq(cfg.mode, DHCP_MODE_RESERVATION);
	ck_assert(cfg.netboot);
	ck_assert_uint_eq(cfg.server_id, PUBLIC);
	ck_assert_uint_eq(cfg.tftp_ip, PUBLIC);
	ck_assert_uint_eq(cfg.syslog_ip, 0);
	ck_assert_uint_eq(cfg.lease_time, 604800);
	ck_assert_str_eq(cfg.script_url, "http://10.0.0.5:7080/ipxe/script/{mac}/auto.ipxe");
	ck_assert_str_eq(cfg.binary_url, "http://10.0.0.5:7080/ipxe/binary/{mac}/{binary}");
	for (size_t i = 0; i < sizeof(arch_table) / sizeof(arch_table[0]); i++)
		ck_assert_str_eq(dhcp_policy_arch_binary(&cfg, arch_table[i].arch),
				 arch_table[i].bin);
	ck_assert_str_eq(dhcp_policy_arch_binary(&cfg, 16), "ipxe.efi");
	ck_assert_ptr_null(dhcp_policy_arch_binary(&cfg, 12));
	ck_assert_ptr_null(dhcp_policy_arch_binary(&cfg, 0xffff));
	ck_assert_str_eq(dhcp_boot_name(DHCP_BOOT_HTTP_BOOT), "http-boot");
	ck_assert_str_eq(dhcp_boot_name(DHCP_BOOT_NOT_ALLOWED), "not-allowed");
	ck_assert_str_eq(dhcp_boot_name(DHCP_BOOT_MAX), "unknown");
}
END_TEST

/* ---- reservation mode: message types ---- */

static void discover(bool bcast)
{
	struct tp t;
	tp_start(&t, DHCP_DISCOVER, 0, 0, bcast);
	tp_opt(&t, 55, 4, 1, 3, 6, 15);
	tp_end(&t);
}

START_TEST(test_discover_offer_options)
{
	char names[2][DHCP_MAX_DOMAIN + 1];
	struct dhcp_route routes[4];
	uint32_t ips[4];
	size_t n;

	discover(true);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
	ck_assert_int_eq(dec.type, DHCP_OFFER);
	ck_assert_str_eq(dec.why, "offer");
	ck_assert_int_eq(dec.boot, DHCP_BOOT_NONE);
	ck_assert_uint_eq(rp.yiaddr, HOST_IP);
	ck_assert_uint_eq(dec.yiaddr, HOST_IP);
	ck_assert_uint_eq(rp.siaddr, 0);
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SERVER_ID), PUBLIC);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_LEASE_TIME), 3600);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_RENEWAL_TIME), 1800);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_REBINDING_TIME), 3150);
	ck_assert_uint_eq(dec.lease_time, 3600);
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SUBNET_MASK), IP(255, 255, 255, 0));
	ck_assert_uint_eq(opt_ip(DHCP_OPT_BROADCAST), IP(10, 0, 0, 255));
	ck_assert_int_eq(dhcp_opt_ips(&rp, DHCP_OPT_ROUTER, ips, 4, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ips[0], IP(10, 0, 0, 1));
	ck_assert_int_eq(dhcp_opt_ips(&rp, DHCP_OPT_DNS, ips, 4, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(ips[0], IP(10, 0, 0, 2));
	ck_assert_uint_eq(ips[1], IP(10, 0, 0, 3));
	ck_assert_int_eq(dhcp_opt_ips(&rp, DHCP_OPT_NTP, ips, 4, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ips[0], IP(10, 0, 0, 4));
	expect_str(DHCP_OPT_HOSTNAME, "m1");
	expect_str(DHCP_OPT_DOMAIN_NAME, "lab.example");
	ck_assert_int_eq(dhcp_opt_domain_search(&rp, names, 2, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(names[0], "lab.example");
	ck_assert_int_eq(dhcp_opt_routes(&rp, routes, 4, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(routes[0].dest, IP(192, 168, 0, 0));
	ck_assert_uint_eq(routes[0].prefix, 16);
	ck_assert_uint_eq(routes[0].router, IP(10, 0, 0, 254));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_LOG_SERVER));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_VENDOR_SPECIFIC));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_BOOTFILE));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_VENDOR_CLASS));
	ck_assert_int_eq(dec.dest, DHCP_DEST_BROADCAST);
	/* Without the broadcast flag: unicast to the offered address. */
	discover(false);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.dest, DHCP_DEST_UNICAST);
	ck_assert_uint_eq(dec.dest_ip, HOST_IP);
}
END_TEST

START_TEST(test_syslog_and_default_lease)
{
	cfg.syslog_ip = IP(10, 0, 0, 7);
	host.lease_time = 0;
	host.netmask = 0;
	discover(true);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_uint_eq(opt_ip(DHCP_OPT_LOG_SERVER), IP(10, 0, 0, 7));
	ck_assert_uint_eq(opt_u32(DHCP_OPT_LEASE_TIME), 604800);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_RENEWAL_TIME), 302400);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_REBINDING_TIME), 529200);
	/* No netmask: neither 1 nor the computed broadcast. */
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_SUBNET_MASK));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_BROADCAST));
	/* Infinite lease: no T1/T2. */
	host.lease_time = UINT32_MAX;
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_LEASE_TIME), UINT32_MAX);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_RENEWAL_TIME));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_REBINDING_TIME));
}
END_TEST

/* A REQUEST with optional 54 (server id) and 50 (requested address). */
static void request(uint32_t sid, uint32_t want, uint32_t ciaddr)
{
	struct tp t;
	tp_start(&t, DHCP_REQUEST, ciaddr, 0, true);
	if (sid)
		tp_ip(&t, DHCP_OPT_SERVER_ID, sid);
	if (want)
		tp_ip(&t, DHCP_OPT_REQUESTED_IP, want);
	tp_end(&t);
}

static void expect_nak(const char *why)
{
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_NAK);
	ck_assert_int_eq(dec.type, DHCP_NAK);
	ck_assert_str_eq(dec.why, why);
	ck_assert_uint_eq(rp.yiaddr, 0);
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SERVER_ID), PUBLIC);
	ck_assert(dhcp_opt_present(&rp, DHCP_OPT_MESSAGE));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_LEASE_TIME));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_SUBNET_MASK));
	ck_assert_int_eq(dec.dest, DHCP_DEST_BROADCAST);
}

START_TEST(test_request_selecting)
{
	request(PUBLIC, HOST_IP, 0);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_str_eq(dec.why, "ack");
	ck_assert_uint_eq(rp.yiaddr, HOST_IP);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_LEASE_TIME), 3600);
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SUBNET_MASK), IP(255, 255, 255, 0));
	/* The client chose another server: silence. */
	request(IP(10, 0, 0, 99), HOST_IP, 0);
	expect_silent(67, &host, "wrong-server-id");
	/* Chose us, but for an address that is not its reservation. */
	request(PUBLIC, IP(10, 0, 0, 51), 0);
	expect_nak("nak-wrong-address");
}
END_TEST

START_TEST(test_request_init_reboot)
{
	request(0, HOST_IP, 0);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_uint_eq(rp.yiaddr, HOST_IP);
	request(0, IP(10, 0, 0, 51), 0);
	expect_nak("nak-wrong-address");
	request(0, IP(192, 168, 1, 50), 0); /* another subnet */
	expect_nak("nak-wrong-address");
}
END_TEST

START_TEST(test_request_renewing)
{
	request(0, 0, HOST_IP);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_uint_eq(rp.yiaddr, HOST_IP);
	ck_assert_int_eq(dec.dest, DHCP_DEST_CIADDR);
	ck_assert_uint_eq(dec.dest_ip, HOST_IP);
	request(0, 0, IP(10, 0, 0, 51));
	expect_nak("nak-wrong-address");
	/* Neither 50 nor ciaddr: not a valid REQUEST. */
	request(0, 0, 0);
	expect_silent(67, &host, "bad-request");
}
END_TEST

/* ---- lease reuse ---- */

#define NOW 1700000000LL
static int64_t expired_by; /* run_reuse's: the latest expiry sweep */

/* Decides req, then lease reuse with m at NOW, writes the reply and parses
 * it back into rp. Returns what dhcp_lease_reuse returned. */
static int run_reuse(const struct dhcp_lease_mark *m)
{
	ck_assert_int_eq(dhcp_policy(&req, 67, &host, NULL, &cfg, &rep, &dec), 1);
	int r = dhcp_lease_reuse(m, &cfg, NOW, expired_by, &rep, &dec);
	int n = dhcp_write(&rep, out, sizeof(out), &winfo);
	ck_assert_msg(n > 0, "dhcp_write: %d", n);
	ck_assert_int_eq(dhcp_parse(out, (size_t)n, &rp, NULL), 0);
	return r;
}

/* The reply's 51, 58 and 59, and the decision's lease time, are lease. */
static void expect_lease(uint32_t lease)
{
	ck_assert_uint_eq(dec.lease_time, lease);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_LEASE_TIME), lease);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_RENEWAL_TIME), lease / 2);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_REBINDING_TIME), (uint32_t)((uint64_t)lease * 7 / 8));
}

START_TEST(test_lease_reuse)
{
	/* Written 600 s ago for the host's 3600 s: 3000 s left, 83%. */
	struct dhcp_lease_mark m = { HOST_IP, NOW - 600, NOW + 3000 };

	ck_assert_uint_eq(host.lease_time, 3600);
	/* Off (the policy's default): a new lease. */
	request(PUBLIC, HOST_IP, 0);
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	cfg.lease_reuse = 25;
	/* No lease known. */
	ck_assert_int_eq(run_reuse(NULL), 0);
	expect_lease(3600);
	/* ACK of a SELECTING, INIT-REBOOT and RENEWING REQUEST, and an OFFER:
	 * the lease on disk, for the 3000 s it has left. */
	ck_assert_int_eq(run_reuse(&m), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_uint_eq(rp.yiaddr, HOST_IP);
	expect_lease(3000);
	request(0, HOST_IP, 0);
	ck_assert_int_eq(run_reuse(&m), 1);
	expect_lease(3000);
	request(0, 0, HOST_IP);
	ck_assert_int_eq(run_reuse(&m), 1);
	expect_lease(3000);
	discover(true);
	ck_assert_int_eq(run_reuse(&m), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
	expect_lease(3000);
	/* Written this second: the whole lease. */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW, NOW + 3600 };
	ck_assert_int_eq(run_reuse(&m), 1);
	expect_lease(3600);
	/* Exactly 75% left (2700 s) is enough; a second less is not. */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW - 900, NOW + 2700 };
	ck_assert_int_eq(run_reuse(&m), 1);
	expect_lease(2700);
	m.expires--;
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	/* Another address than the reservation's (the Hardware changed). */
	m = (struct dhcp_lease_mark){ HOST_IP + 1, NOW - 10, NOW + 3590 };
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	/* More time left than the lease time now (it was lowered). */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW - 10, NOW + 7190 };
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	/* Expired, and a start in the future (the clock went back). */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW - 4000, NOW - 400 };
	ck_assert_int_eq(run_reuse(&m), 0);
	m = (struct dhcp_lease_mark){ HOST_IP, NOW + 60, NOW + 3600 };
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	/* Infinite: reused only as infinite, and then nothing changes. */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW - 10, DHCP_INFINITE_EXPIRY };
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	host.lease_time = UINT32_MAX;
	ck_assert_int_eq(run_reuse(&m), 1);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_LEASE_TIME), UINT32_MAX);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_RENEWAL_TIME));
	m = (struct dhcp_lease_mark){ HOST_IP, NOW - 10, NOW + 3590 };
	ck_assert_int_eq(run_reuse(&m), 0);
	ck_assert_uint_eq(opt_u32(DHCP_OPT_LEASE_TIME), UINT32_MAX);
	host.lease_time = 3600;
	/* A wider setting reaches older leases: 49% takes 1836 s left. */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW - 1764, NOW + 1836 };
	ck_assert_int_eq(run_reuse(&m), 0);
	cfg.lease_reuse = 49;
	ck_assert_int_eq(run_reuse(&m), 1);
	expect_lease(1836);
	/* Out of range: off. */
	cfg.lease_reuse = 50;
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	cfg.lease_reuse = 25;
	/* The clock stepped back 400 s after an expiry sweep: time left is
	 * counted from the sweep. 3000 s left by the clock, 2600 by the
	 * sweep: under 75%, refused; a sweep 100 s ahead leaves 2900. */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW - 600, NOW + 3000 };
	expired_by = NOW + 400;
	ck_assert_int_eq(run_reuse(&m), 0);
	expect_lease(3600);
	expired_by = NOW + 100;
	ck_assert_int_eq(run_reuse(&m), 1);
	expect_lease(2900);
	/* A sweep past the lease's expiry may have deleted it. */
	expired_by = NOW + 3000;
	ck_assert_int_eq(run_reuse(&m), 0);
	/* A sweep behind the clock changes nothing. */
	expired_by = NOW - 100;
	ck_assert_int_eq(run_reuse(&m), 1);
	expect_lease(3000);
	expired_by = 0;
	/* A NAK (wrong address) has no lease to reuse; nor has INFORM. */
	m = (struct dhcp_lease_mark){ HOST_IP, NOW, NOW + 3600 };
	request(PUBLIC, HOST_IP + 1, 0);
	ck_assert_int_eq(dhcp_policy(&req, 67, &host, NULL, &cfg, &rep, &dec), 1);
	ck_assert_int_eq(dec.type, DHCP_NAK);
	ck_assert_int_eq(dhcp_lease_reuse(&m, &cfg, NOW, 0, &rep, &dec), 0);
	ck_assert(!dhcp_reply_has(&rep, DHCP_OPT_LEASE_TIME));
	struct tp t;
	tp_start(&t, DHCP_INFORM, HOST_IP, 0, false);
	tp_end(&t);
	ck_assert_int_eq(dhcp_policy(&req, 67, &host, NULL, &cfg, &rep, &dec), 1);
	ck_assert_str_eq(dec.why, "inform");
	ck_assert_int_eq(dhcp_lease_reuse(&m, &cfg, NOW, 0, &rep, &dec), 0);
	ck_assert(!dhcp_reply_has(&rep, DHCP_OPT_LEASE_TIME));
}
END_TEST

START_TEST(test_request_unknown_mac)
{
	/* SELECTING us without a reservation (any more): NAK. */
	request(PUBLIC, HOST_IP, 0);
	ck_assert_int_eq(run(67, NULL), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_NAK);
	ck_assert_str_eq(dec.why, "nak-no-reservation");
	/* INIT-REBOOT with no record: RFC 2131 §4.3.2 says silence. */
	request(0, HOST_IP, 0);
	expect_silent(67, NULL, "unknown-mac");
	request(0, 0, HOST_IP);
	expect_silent(67, NULL, "unknown-mac");
	request(IP(10, 0, 0, 99), HOST_IP, 0);
	expect_silent(67, NULL, "unknown-mac");
	discover(true);
	expect_silent(67, NULL, "unknown-mac");
}
END_TEST

START_TEST(test_release_decline)
{
	struct tp t;
	tp_start(&t, DHCP_RELEASE, HOST_IP, 0, false);
	tp_ip(&t, DHCP_OPT_SERVER_ID, PUBLIC);
	tp_end(&t);
	expect_silent(67, &host, "release");
	tp_start(&t, DHCP_DECLINE, 0, 0, false);
	tp_ip(&t, DHCP_OPT_SERVER_ID, PUBLIC);
	tp_ip(&t, DHCP_OPT_REQUESTED_IP, HOST_IP);
	tp_end(&t);
	expect_silent(67, &host, "decline");
	tp_start(&t, DHCP_DECLINE, 0, 0, false);
	tp_ip(&t, DHCP_OPT_SERVER_ID, IP(10, 0, 0, 99));
	tp_end(&t);
	expect_silent(67, &host, "wrong-server-id");
}
END_TEST

START_TEST(test_inform)
{
	struct tp t;
	tp_start(&t, DHCP_INFORM, HOST_IP, 0, false);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_str_eq(dec.why, "inform");
	ck_assert_uint_eq(rp.yiaddr, 0);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_LEASE_TIME));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_RENEWAL_TIME));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_REBINDING_TIME));
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SUBNET_MASK), IP(255, 255, 255, 0));
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SERVER_ID), PUBLIC);
	expect_str(DHCP_OPT_HOSTNAME, "m1");
	ck_assert_int_eq(dec.dest, DHCP_DEST_CIADDR);
	ck_assert_uint_eq(dec.dest_ip, HOST_IP);
	ck_assert_uint_eq(dec.lease_time, 0);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_BOOTFILE));
	/* Explicit boot information is configuration: INFORM gets it too
	 * (RFC 2131 §4.3.5: "local configuration parameters"). */
	snprintf(host.tftp_server_name, sizeof(host.tftp_server_name), "10.9.9.9");
	snprintf(host.boot_file_name, sizeof(host.boot_file_name), "pxelinux.0");
	tp_start(&t, DHCP_INFORM, HOST_IP, 0, false);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_EXPLICIT);
	expect_str(DHCP_OPT_BOOTFILE, "pxelinux.0");
	expect_str(DHCP_OPT_TFTP_SERVER, "10.9.9.9");
	ck_assert_uint_eq(rp.siaddr, IP(10, 9, 9, 9));
	ck_assert_uint_eq(rp.yiaddr, 0);
}
END_TEST

static void pxe_request(uint8_t type, const char *vendor, uint16_t arch, const char *user_class);

START_TEST(test_silences)
{
	struct tp t;
	discover(true);
	host.disable_dhcp = true;
	expect_silent(67, &host, "dhcp-disabled");
	cfg.mode = DHCP_MODE_PROXY;
	expect_silent(67, &host, "dhcp-disabled");
	cfg.mode = DHCP_MODE_RESERVATION;
	host.disable_dhcp = false;
	host.ip = 0;
	expect_silent(67, &host, "no-address");
	/* A BOOTREPLY (another server's answer) is not for us. */
	discover(true);
	req.op = DHCP_BOOTREPLY;
	expect_silent(67, &host, "not-a-request");
	/* Not Ethernet (htype 6, IEEE 802), or an Ethernet hlen other
	 * than 6: chaddr cannot be a Hardware MAC. */
	discover(true);
	req.htype = 6;
	expect_silent(67, &host, "not-ethernet");
	discover(true);
	req.hlen = 8;
	expect_silent(67, &host, "not-ethernet");
	/* Proxy mode with netboot options turned off has nothing to say. */
	cfg.mode = DHCP_MODE_PROXY;
	cfg.netboot = false;
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	expect_silent(67, &host, "netboot-disabled");
	cfg.netboot = true;
	cfg.mode = DHCP_MODE_RESERVATION;
	/* Port 4011 outside the proxy modes. */
	discover(true);
	expect_silent(DHCP_PROXY_PORT, &host, "not-proxy-mode");
	tp_start(&t, DHCP_LEASEQUERY, 0, 0, false);
	tp_end(&t);
	host.ip = HOST_IP;
	expect_silent(67, &host, "unsupported-type");
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct dhcp_host other = host;
	other.mac[5] ^= 1;
	discover(true);
	ck_assert_int_eq(dhcp_policy(&req, 67, &other, NULL, &cfg, &rep, &dec), -EINVAL);
	ck_assert_int_eq(dhcp_policy(&req, 68, &host, NULL, &cfg, &rep, &dec), -EINVAL);
	ck_assert_int_eq(dhcp_policy(NULL, 67, &host, NULL, &cfg, &rep, &dec), -EINVAL);
	ck_assert_int_eq(dhcp_policy(&req, 67, &host, NULL, &cfg, &rep, NULL), -EINVAL);
	cfg.mode = DHCP_MODE_MAX;
	ck_assert_int_eq(dhcp_policy(&req, 67, &host, NULL, &cfg, &rep, &dec), -EINVAL);
	/* A URL pattern that expands past its limit is an internal error. */
	cfg.mode = DHCP_MODE_RESERVATION;
	memset(cfg.script_url, 'x', DHCP_POLICY_URL_MAX - 5);
	memcpy(cfg.script_url + DHCP_POLICY_URL_MAX - 5, "{mac}", 6);
	struct tp t;
	tp_start(&t, DHCP_DISCOVER, 0, 0, true);
	tp_pxe(&t, "PXEClient:Arch:00007:UNDI:003000", 7);
	tp_opt_str(&t, 77, "iPXE");
	tp_end(&t);
	ck_assert_int_eq(dhcp_policy(&req, 67, &host, NULL, &cfg, &rep, &dec), -ENAMETOOLONG);
}
END_TEST

/* The reservation is on the wrong network for a client through giaddr
 * (0: directly attached, broadcasting): no offer, and its INIT-REBOOT
 * REQUEST gets a NAK (RFC 2131 §4.3.2). */
static void expect_wrong_net(uint32_t giaddr)
{
	struct tp t;
	tp_start(&t, DHCP_DISCOVER, 0, giaddr, !giaddr);
	tp_end(&t);
	expect_silent(67, &host, "wrong-subnet");
	tp_start(&t, DHCP_REQUEST, 0, giaddr, !giaddr);
	tp_ip(&t, DHCP_OPT_REQUESTED_IP, HOST_IP);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_NAK);
	ck_assert_str_eq(dec.why, "nak-wrong-subnet");
	ck_assert_uint_eq(rp.yiaddr, 0);
}

/* Through a relay on another subnet than the reservation's: no offer, and
 * a REQUEST for the reserved address is on the wrong network (RFC 2131
 * §4.3.2). Without a netmask nothing tells the subnet: answered. */
START_TEST(test_relay_wrong_subnet)
{
	struct tp t;
	expect_wrong_net(IP(10, 2, 0, 1));
	ck_assert_int_eq(dec.dest, DHCP_DEST_RELAY);
	ck_assert_uint_eq(dec.dest_ip, IP(10, 2, 0, 1));
	ck_assert(dhcp_opt_present(&rp, DHCP_OPT_MESSAGE));
	/* The same REQUEST through a relay on the reservation's subnet. */
	tp_start(&t, DHCP_REQUEST, 0, RELAY_IP, false);
	tp_ip(&t, DHCP_OPT_REQUESTED_IP, HOST_IP);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	/* A directly attached client is checked against its interface's
	 * subnets, not the relay's: none known here, so none checked. */
	request(0, HOST_IP, 0);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	struct dhcp_host nomask = host;
	nomask.netmask = 0;
	tp_start(&t, DHCP_DISCOVER, 0, IP(10, 2, 0, 1), false);
	tp_end(&t);
	ck_assert_int_eq(run(67, &nomask), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
}
END_TEST

/* A directly attached client: its reservation must be on one of the
 * subnets of the interface the request came in on (the server passes
 * them; several for a link that carries several). */
START_TEST(test_direct_wrong_subnet)
{
	struct dhcp_link other = { .n = 2,
				   .net = { { IP(192, 168, 77, 0), 0xffffff00 },
					    { IP(172, 16, 0, 0), 0xffff0000 } } };
	struct dhcp_link ours = other;
	struct tp t;

	ours.net[ours.n++] = (struct dhcp_link_net){ IP(10, 0, 0, 0), 0xff000000 };
	ck_assert(dhcp_link_off(&other, HOST_IP, 0xffffff00));
	ck_assert(dhcp_link_off(&other, HOST_IP, 0));
	ck_assert(!dhcp_link_off(&ours, HOST_IP, 0xffffff00));
	ck_assert(!dhcp_link_off(&ours, IP(172, 16, 200, 1), 0xffffff00));
	ck_assert(!dhcp_link_off(NULL, HOST_IP, 0));
	struct dhcp_link none = { 0 };
	ck_assert(!dhcp_link_off(&none, HOST_IP, 0));
	/* A reservation whose own subnet holds the interface's address is
	 * on the link too: 192.168.76.9/23 holds 192.168.77.0/24. */
	ck_assert(!dhcp_link_off(&other, IP(192, 168, 76, 9), 0xfffffe00));
	ck_assert(dhcp_link_off(&other, IP(192, 168, 78, 9), 0xfffffe00));
	ck_assert(dhcp_link_off(&other, IP(192, 168, 76, 9), 0xffffff00));
	ck_assert(dhcp_link_off(&other, IP(192, 168, 76, 9), 0));

	link_in = &other;
	/* INIT-REBOOT for the reserved address, broadcast: a NAK, broadcast. */
	expect_wrong_net(0);
	ck_assert_int_eq(dec.dest, DHCP_DEST_BROADCAST);
	/* Another address is wrong before the subnet is looked at. */
	tp_start(&t, DHCP_REQUEST, 0, 0, true);
	tp_ip(&t, DHCP_OPT_REQUESTED_IP, IP(192, 168, 77, 9));
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_str_eq(dec.why, "nak-wrong-address");
	/* A renewal (ciaddr, no option 50) is unicast: from a client behind
	 * a router it comes in on the interface facing that router, whose
	 * subnets say nothing of the client's. It is trusted (§4.3.2). */
	request(0, 0, HOST_IP);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_str_eq(dec.why, "ack");
	/* A relay's giaddr decides for relayed requests, not the interface
	 * the relay reached us by. */
	tp_start(&t, DHCP_DISCOVER, 0, RELAY_IP, false);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_OFFER);

	/* On an interface that carries the reservation's subnet among
	 * others: the DORA as usual; and so with no subnets known (an
	 * unnumbered interface): nothing to check. */
	const struct dhcp_link *answered[] = { &ours, &none };
	for (size_t i = 0; i < 2; i++) {
		link_in = answered[i];
		tp_start(&t, DHCP_DISCOVER, 0, 0, true);
		tp_end(&t);
		ck_assert_int_eq(run(67, &host), 1);
		ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
		ck_assert_uint_eq(rp.yiaddr, HOST_IP);
		tp_start(&t, DHCP_REQUEST, 0, 0, true);
		tp_ip(&t, DHCP_OPT_REQUESTED_IP, HOST_IP);
		tp_end(&t);
		ck_assert_int_eq(run(67, &host), 1);
		ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	}
	link_in = NULL;
}
END_TEST

START_TEST(test_relay_and_client_id)
{
	struct tp t;
	tp_start(&t, DHCP_DISCOVER, 0, RELAY_IP, false);
	tp_opt(&t, 61, 7, 1, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56);
	tp_opt(&t, 82, 6, 1, 4, 'p', 'o', 'r', 't');
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.dest, DHCP_DEST_RELAY);
	ck_assert_uint_eq(dec.dest_ip, RELAY_IP);
	ck_assert_uint_eq(rp.giaddr, RELAY_IP);
	const uint8_t *d;
	size_t n;
	ck_assert_int_eq(dhcp_opt_get(&rp, 82, &d, &n), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_mem_eq(d, "\x01\x04port", 6);
	ck_assert_int_eq(dhcp_opt_get(&rp, 61, &d, &n), 0);
	ck_assert_uint_eq(n, 7);
	/* A NAK through a relay has the broadcast bit (RFC 2131 §4.3.2). */
	tp_start(&t, DHCP_REQUEST, 0, RELAY_IP, false);
	tp_ip(&t, DHCP_OPT_REQUESTED_IP, IP(10, 0, 0, 77));
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_NAK);
	ck_assert_uint_eq(rp.flags & DHCP_FLAG_BROADCAST, DHCP_FLAG_BROADCAST);
	ck_assert_int_eq(dec.dest, DHCP_DEST_RELAY);

	/* Option 82 from a client (no giaddr) is not echoed (RFC 3046 §2.1). */
	tp_start(&t, DHCP_DISCOVER, 0, 0, true);
	tp_opt(&t, 82, 6, 1, 4, 'p', 'o', 'r', 't');
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert(!dhcp_opt_present(&rp, 82));

	/* A relay's 82 of 400 bytes: the relay strips it before the client
	 * sees the reply, so the reply to the relay may pass 576 by that
	 * much, and every option the client needs is still there. */
	uint8_t big[400];
	memset(big, 'x', sizeof(big));
	big[0] = 1;
	big[1] = 200;
	big[202] = 2;
	big[203] = 196;
	tp_start(&t, DHCP_DISCOVER, 0, RELAY_IP, false);
	tp_byte(&t, 82);
	tp_byte(&t, 200);
	tp_bytes(&t, big, 200);
	tp_byte(&t, 82);
	tp_byte(&t, 200);
	tp_bytes(&t, big + 200, 200);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dhcp_opt_get(&rp, 82, &d, &n), 0);
	ck_assert_uint_eq(n, 400);
	ck_assert_uint_eq(winfo.ndropped, 0);
	ck_assert(dhcp_opt_present(&rp, DHCP_OPT_ROUTER));
	ck_assert(dhcp_opt_present(&rp, DHCP_OPT_CLASSLESS_ROUTES));
	ck_assert_uint_gt(rp.size, DHCP_MIN_MAX_MESSAGE - DHCP_IP_UDP_HEADERS);
}
END_TEST

/* ---- reservation mode: boot decisions ---- */

static void pxe_request(uint8_t type, const char *vendor, uint16_t arch, const char *user_class)
{
	struct tp t;
	tp_start(&t, type, 0, 0, true);
	if (type == DHCP_REQUEST) {
		tp_ip(&t, DHCP_OPT_SERVER_ID, PUBLIC);
		tp_ip(&t, DHCP_OPT_REQUESTED_IP, HOST_IP);
	}
	tp_pxe(&t, vendor, arch);
	if (user_class)
		tp_opt_str(&t, 77, user_class);
	tp_end(&t);
}

START_TEST(test_pxe_rom_arch)
{
	char vendor[64];
	uint16_t arch = arch_table[_i].arch;
	snprintf(vendor, sizeof(vendor), "PXEClient:Arch:%05u:UNDI:003000", arch);
	pxe_request(DHCP_DISCOVER, vendor, arch, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
	ck_assert_uint_eq(rp.yiaddr, HOST_IP);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_PXE_BINARY);
	expect_file(arch_table[_i].bin);
	ck_assert_uint_eq(rp.siaddr, PUBLIC);
	expect_str(DHCP_OPT_TFTP_SERVER, "10.0.0.5");
	expect_pxe43();
	/* Reservation mode echoes only HTTPClient. */
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_VENDOR_CLASS));
	/* The same on the REQUEST. */
	pxe_request(DHCP_REQUEST, vendor, arch, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	expect_file(arch_table[_i].bin);
}
END_TEST

/* A Raspberry Pi (by its OUI) says arch 0 but gets the arm64 binary, and
 * the boot menu sub-options of option 43, in both modes. */
START_TEST(test_raspberry_pi)
{
	static const uint8_t pi[6] = { 0xdc, 0xa6, 0x32, 0x01, 0x02, 0x03 };
	static const uint8_t want43[] = { 6, 1, 8, 9, 20, 0, 0, 17, 'R', 'a', 's', 'p', 'b', 'e',
					  'r', 'r', 'y', ' ', 'P', 'i', ' ', 'B', 'o', 'o', 't',
					  10, 4, 0, 'P', 'X', 'E', 255 };
	const uint8_t *d;
	size_t n;

	client_mac = pi;
	memcpy(host.mac, pi, 6);
	for (int mode = 0; mode < 2; mode++) {
		cfg.mode = mode ? DHCP_MODE_PROXY : DHCP_MODE_RESERVATION;
		pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00000:UNDI:002001", 0, NULL);
		ck_assert_int_eq(run(67, &host), 1);
		ck_assert_int_eq(dec.boot, DHCP_BOOT_PXE_BINARY);
		expect_file("snp-arm64.efi");
		ck_assert_int_eq(dhcp_opt_get(&rp, DHCP_OPT_VENDOR_SPECIFIC, &d, &n), 0);
		ck_assert_uint_eq(n, sizeof(want43));
		ck_assert_mem_eq(d, want43, sizeof(want43));
	}
	/* The table's arch 41 entry decides, like any other. */
	cfg.mode = DHCP_MODE_RESERVATION;
	for (size_t i = 0; i < cfg.narches; i++)
		if (cfg.arches[i].arch == 41)
			snprintf(cfg.arches[i].binary, sizeof(cfg.arches[i].binary), "rpi.efi");
	ck_assert_int_eq(run(67, &host), 1);
	expect_file("rpi.efi");
	client_mac = mac;
	/* Anyone else with arch 0 still gets the BIOS binary and plain 43. */
	memcpy(host.mac, mac, 6);
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	expect_file("undionly.kpxe");
	expect_pxe43();
}
END_TEST

START_TEST(test_unknown_arch)
{
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00012:UNDI:003000", 12, NULL);
	expect_silent(67, &host, "unknown-arch");
	ck_assert_uint_eq(dec.lease_time, 0);
	/* The Hardware's own binary needs no table entry. */
	snprintf(host.ipxe_binary, sizeof(host.ipxe_binary), "snp-x86_64.efi");
	ck_assert_int_eq(run(67, &host), 1);
	expect_file("snp-x86_64.efi");
	/* ... and overrides the table. */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	expect_file("snp-x86_64.efi");
	/* An iPXE client needs no binary: its arch does not matter. */
	host.ipxe_binary[0] = '\0';
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00012:UNDI:003000", 12, "iPXE");
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_IPXE_SCRIPT);
}
END_TEST

#define SCRIPT_URL "http://10.0.0.5:7080/ipxe/script/" MAC_STR "/auto.ipxe"

START_TEST(test_ipxe_user_class)
{
	struct tp t;
	/* iPXE's plain form, with PXEClient and an arch that would otherwise
	 * get undionly.kpxe (the BIOS loop in docs/compatibility.md,
	 * "Client quirks"). */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00000:UNDI:002001", 0, "iPXE");
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_IPXE_SCRIPT);
	expect_file(SCRIPT_URL);
	expect_pxe43();
	/* RFC 3004 form, among other instances. */
	tp_start(&t, DHCP_DISCOVER, 0, 0, true);
	tp_pxe(&t, "PXEClient:Arch:00007:UNDI:003000", 7);
	tp_opt(&t, 77, 9, 3, 'f', 'o', 'o', 4, 'i', 'P', 'X', 'E');
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_IPXE_SCRIPT);
	expect_file(SCRIPT_URL);
	/* Tinkerbell (our embedded script). */
	pxe_request(DHCP_REQUEST, "PXEClient:Arch:00007:UNDI:003000", 7, "Tinkerbell");
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_IPXE_SCRIPT);
	expect_file(SCRIPT_URL);
	/* Even when the vendor class says HTTPClient. */
	pxe_request(DHCP_DISCOVER, "HTTPClient:Arch:00016:UNDI:003000", 16, "iPXE");
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_IPXE_SCRIPT);
	/* The Hardware's ipxe.url replaces the script URL. */
	snprintf(host.ipxe_url, sizeof(host.ipxe_url), "https://boot.example/m1.ipxe");
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, "iPXE");
	ck_assert_int_eq(run(67, &host), 1);
	expect_file("https://boot.example/m1.ipxe");
	/* A user class that is not iPXE's: the binary. */
	host.ipxe_url[0] = '\0';
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, "ipxe");
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_PXE_BINARY);
}
END_TEST

START_TEST(test_http_boot)
{
	pxe_request(DHCP_DISCOVER, "HTTPClient:Arch:00016:UNDI:003000", 16, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_HTTP_BOOT);
	expect_file("http://10.0.0.5:7080/ipxe/binary/" MAC_STR "/ipxe.efi");
	expect_str(DHCP_OPT_VENDOR_CLASS, "HTTPClient");
	ck_assert_uint_eq(rp.siaddr, PUBLIC);
	expect_pxe43();
	/* arm64 HTTP boot by prefix. */
	pxe_request(DHCP_DISCOVER, "HTTPClient:Arch:00019:UNDI:003000", 19, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	expect_file("http://10.0.0.5:7080/ipxe/binary/" MAC_STR "/snp-arm64.efi");
	expect_str(DHCP_OPT_VENDOR_CLASS, "HTTPClient");
	/* Arch 16 alone makes it HTTP boot. */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00016:UNDI:003000", 16, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_HTTP_BOOT);
	expect_str(DHCP_OPT_VENDOR_CLASS, "HTTPClient");
	/* ipxe.binary applies to HTTP boot too. */
	snprintf(host.ipxe_binary, sizeof(host.ipxe_binary), "snp-x86_64.efi");
	pxe_request(DHCP_REQUEST, "HTTPClient:Arch:00016:UNDI:003000", 16, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	expect_file("http://10.0.0.5:7080/ipxe/binary/" MAC_STR "/snp-x86_64.efi");
}
END_TEST

START_TEST(test_explicit_boot)
{
	snprintf(host.tftp_server_name, sizeof(host.tftp_server_name), "10.9.9.9");
	snprintf(host.boot_file_name, sizeof(host.boot_file_name), "pxelinux.0");
	host.allow_pxe = DHCP_FALSE; /* does not gate explicit boot files */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, "iPXE");
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_EXPLICIT);
	expect_file("pxelinux.0");
	expect_str(DHCP_OPT_TFTP_SERVER, "10.9.9.9");
	ck_assert_uint_eq(rp.siaddr, IP(10, 9, 9, 9));
	ck_assert_str_eq((const char *)rp.sname, "10.9.9.9");
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_VENDOR_SPECIFIC));
	/* A plain DHCP client gets them too; a server name is not siaddr. */
	snprintf(host.tftp_server_name, sizeof(host.tftp_server_name), "tftp.example");
	discover(true);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_EXPLICIT);
	expect_file("pxelinux.0");
	expect_str(DHCP_OPT_TFTP_SERVER, "tftp.example");
	ck_assert_uint_eq(rp.siaddr, 0);
}
END_TEST

START_TEST(test_not_allowed)
{
	for (int i = 0; i < 2; i++) {
		host.allow_pxe = i ? DHCP_UNSET : DHCP_FALSE;
		pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
		ck_assert_int_eq(run(67, &host), 1);
		ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
		ck_assert_uint_eq(rp.yiaddr, HOST_IP); /* the address is still given */
		ck_assert_int_eq(dec.boot, DHCP_BOOT_NOT_ALLOWED);
		expect_file("/netboot-not-allowed");
		ck_assert_uint_eq(rp.siaddr, 0);
		/* iPXE too, and an unknown arch does not matter. */
		pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00012:UNDI:003000", 12, "iPXE");
		ck_assert_int_eq(run(67, &host), 1);
		ck_assert_int_eq(dec.boot, DHCP_BOOT_NOT_ALLOWED);
		expect_file("/netboot-not-allowed");
	}
}
END_TEST

START_TEST(test_not_netboot_client)
{
	struct tp t;
	/* No option 94. */
	tp_start(&t, DHCP_DISCOVER, 0, 0, true);
	tp_opt_str(&t, 60, "PXEClient:Arch:00007:UNDI:003000");
	tp_opt(&t, 93, 2, 0, 7);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_NONE);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_BOOTFILE));
	/* Option 97 of the wrong type. */
	tp_start(&t, DHCP_DISCOVER, 0, 0, true);
	tp_opt_str(&t, 60, "PXEClient:Arch:00007:UNDI:003000");
	tp_opt(&t, 93, 2, 0, 7);
	tp_opt(&t, 94, 3, 1, 3, 16);
	tp_byte(&t, 97);
	tp_byte(&t, 17);
	tp_byte(&t, 1);
	tp_bytes(&t, guid + 1, 16);
	tp_end(&t);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_NONE);
	/* Another vendor class. */
	pxe_request(DHCP_DISCOVER, "MSFT 5.0", 7, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_NONE);
	/* Netboot turned off in the config. */
	cfg.netboot = false;
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_NONE);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_VENDOR_SPECIFIC));
}
END_TEST

/* A 576-byte reply with a crowded host: optional options give way, the
 * netboot ones (43, 60, 67) stay. */
START_TEST(test_size_pressure)
{
	host.ndns = DHCP_HOST_MAX_DNS;
	for (size_t i = 0; i < host.ndns; i++)
		host.dns[i] = IP(10, 0, 1, (uint32_t)i + 1);
	host.nntp = DHCP_HOST_MAX_NTP;
	for (size_t i = 0; i < host.nntp; i++)
		host.ntp[i] = IP(10, 0, 2, (uint32_t)i + 1);
	host.nroutes = DHCP_HOST_MAX_ROUTES;
	for (size_t i = 0; i < host.nroutes; i++)
		host.routes[i] =
			(struct dhcp_route){ IP(172, 16, (uint32_t)i, 0), 24, IP(10, 0, 0, 254) };
	memset(host.hostname, 'h', 200);
	host.hostname[200] = '\0';
	pxe_request(DHCP_DISCOVER, "HTTPClient:Arch:00016:UNDI:003000", 16, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_uint_gt(winfo.ndropped, 0);
	expect_pxe43();
	expect_str(DHCP_OPT_VENDOR_CLASS, "HTTPClient");
	expect_file("http://10.0.0.5:7080/ipxe/binary/" MAC_STR "/ipxe.efi");
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SERVER_ID), PUBLIC);
}
END_TEST

/* ---- proxy modes ---- */

START_TEST(test_proxy_discover)
{
	const uint8_t *d;
	size_t n;
	cfg.mode = DHCP_MODE_PROXY;
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
	ck_assert_str_eq(dec.why, "proxy-offer");
	ck_assert_uint_eq(rp.yiaddr, 0);
	ck_assert_uint_eq(dec.lease_time, 0);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_LEASE_TIME));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_RENEWAL_TIME));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_SUBNET_MASK));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_ROUTER));
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_DNS));
	ck_assert_uint_eq(opt_ip(DHCP_OPT_SERVER_ID), PUBLIC);
	expect_str(DHCP_OPT_VENDOR_CLASS, "PXEClient");
	expect_pxe43();
	ck_assert_int_eq(dhcp_opt_get(&rp, DHCP_OPT_CLIENT_GUID, &d, &n), 0);
	ck_assert_uint_eq(n, 17);
	ck_assert_mem_eq(d, guid, 17);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_PXE_BINARY);
	expect_file("ipxe.efi");
	ck_assert_uint_eq(rp.siaddr, PUBLIC);
	ck_assert_int_eq(dec.dest, DHCP_DEST_BROADCAST);
	/* The REQUEST for another server's address, on port 67: not ours. */
	pxe_request(DHCP_REQUEST, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	expect_silent(67, &host, "not-for-proxy");
	/* Non-netboot clients and unknown MACs: silence. */
	discover(true);
	expect_silent(67, &host, "not-netboot");
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	expect_silent(67, NULL, "unknown-mac");
	/* HTTP boot through the proxy. */
	pxe_request(DHCP_DISCOVER, "HTTPClient:Arch:00016:UNDI:003000", 16, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	expect_str(DHCP_OPT_VENDOR_CLASS, "HTTPClient");
	expect_file("http://10.0.0.5:7080/ipxe/binary/" MAC_STR "/ipxe.efi");
	/* iPXE through the proxy. */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, "iPXE");
	ck_assert_int_eq(run(67, &host), 1);
	expect_file(SCRIPT_URL);
	expect_str(DHCP_OPT_VENDOR_CLASS, "PXEClient");
	/* Unknown arch: silence. */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00012:UNDI:003000", 12, NULL);
	expect_silent(67, &host, "unknown-arch");
}
END_TEST

START_TEST(test_proxy_4011)
{
	struct tp t;
	cfg.mode = DHCP_MODE_PROXY;
	tp_start(&t, DHCP_REQUEST, IP(10, 0, 0, 66), 0, false);
	tp_pxe(&t, "PXEClient:Arch:00000:UNDI:002001", 0);
	tp_end(&t);
	ck_assert_int_eq(run(DHCP_PROXY_PORT, &host), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_ACK);
	ck_assert_str_eq(dec.why, "proxy-ack");
	ck_assert_uint_eq(rp.yiaddr, 0);
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_LEASE_TIME));
	expect_file("undionly.kpxe");
	expect_str(DHCP_OPT_VENDOR_CLASS, "PXEClient");
	expect_pxe43();
	ck_assert(dhcp_opt_present(&rp, DHCP_OPT_CLIENT_GUID));
	ck_assert_int_eq(dec.dest, DHCP_DEST_SOURCE);
	ck_assert_uint_eq(dec.dest_ip, IP(10, 0, 0, 66));
	/* A DISCOVER on 4011 is not a PXE boot server request. */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	expect_silent(DHCP_PROXY_PORT, &host, "not-for-proxy");
}
END_TEST

START_TEST(test_proxy_not_allowed_and_explicit)
{
	cfg.mode = DHCP_MODE_PROXY;
	host.allow_pxe = DHCP_UNSET;
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_NOT_ALLOWED);
	expect_file("/" MAC_STR "/netboot-not-allowed");
	ck_assert_uint_eq(rp.siaddr, 0);
	expect_str(DHCP_OPT_VENDOR_CLASS, "PXEClient");
	/* Explicit boot file through the proxy keeps 60 and 43. */
	snprintf(host.tftp_server_name, sizeof(host.tftp_server_name), "10.9.9.9");
	snprintf(host.boot_file_name, sizeof(host.boot_file_name), "grubx64.efi");
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_EXPLICIT);
	expect_file("grubx64.efi");
	expect_str(DHCP_OPT_VENDOR_CLASS, "PXEClient");
	expect_pxe43();
	ck_assert(!dhcp_opt_present(&rp, DHCP_OPT_LEASE_TIME));
}
END_TEST

START_TEST(test_auto_proxy)
{
	cfg.mode = DHCP_MODE_AUTO_PROXY;
	/* A machine with no Hardware is served (discovery). */
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, NULL);
	ck_assert_int_eq(run(67, NULL), 1);
	ck_assert_int_eq(rp.msg_type, DHCP_OFFER);
	ck_assert_uint_eq(rp.yiaddr, 0);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_PXE_BINARY);
	expect_file("ipxe.efi");
	pxe_request(DHCP_DISCOVER, "PXEClient:Arch:00007:UNDI:003000", 7, "Tinkerbell");
	ck_assert_int_eq(run(67, NULL), 1);
	expect_file(SCRIPT_URL);
	/* A known machine still needs allowPXE. */
	host.allow_pxe = DHCP_FALSE;
	ck_assert_int_eq(run(67, &host), 1);
	ck_assert_int_eq(dec.boot, DHCP_BOOT_NOT_ALLOWED);
	/* Still only netboot clients. */
	discover(true);
	expect_silent(67, NULL, "not-netboot");
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("dhcp_policy");
	TCase *tc = tcase_create("host");
	tcase_add_checked_fixture(tc, setup, NULL);
	UNIT_TEST(tc, test_host_full);
	UNIT_TEST(tc, test_host_other_interface_minimal);
	UNIT_TEST(tc, test_host_no_match);
	UNIT_TEST(tc, test_host_flags_and_netboot);
	tcase_add_loop_test(tc, test_host_bad_fields, 0,
			    (int)(sizeof(bad_hosts) / sizeof(bad_hosts[0])));
	UNIT_TEST(tc, test_host_limits);
	UNIT_TEST(tc, test_host_too_many_dns);
	suite_add_tcase(s, tc);

	tc = tcase_create("reservation");
	tcase_add_checked_fixture(tc, setup, NULL);
	UNIT_TEST(tc, test_config_default);
	UNIT_TEST(tc, test_discover_offer_options);
	UNIT_TEST(tc, test_syslog_and_default_lease);
	UNIT_TEST(tc, test_request_selecting);
	UNIT_TEST(tc, test_request_init_reboot);
	UNIT_TEST(tc, test_request_renewing);
	UNIT_TEST(tc, test_request_unknown_mac);
	UNIT_TEST(tc, test_lease_reuse);
	UNIT_TEST(tc, test_release_decline);
	UNIT_TEST(tc, test_inform);
	UNIT_TEST(tc, test_silences);
	UNIT_TEST(tc, test_bad_arguments);
	UNIT_TEST(tc, test_relay_wrong_subnet);
	UNIT_TEST(tc, test_direct_wrong_subnet);
	UNIT_TEST(tc, test_relay_and_client_id);
	suite_add_tcase(s, tc);

	tc = tcase_create("boot");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_loop_test(tc, test_pxe_rom_arch, 0,
			    (int)(sizeof(arch_table) / sizeof(arch_table[0])));
	UNIT_TEST(tc, test_unknown_arch);
	UNIT_TEST(tc, test_raspberry_pi);
	UNIT_TEST(tc, test_ipxe_user_class);
	UNIT_TEST(tc, test_http_boot);
	UNIT_TEST(tc, test_explicit_boot);
	UNIT_TEST(tc, test_not_allowed);
	UNIT_TEST(tc, test_not_netboot_client);
	UNIT_TEST(tc, test_size_pressure);
	suite_add_tcase(s, tc);

	tc = tcase_create("proxy");
	tcase_add_checked_fixture(tc, setup, NULL);
	UNIT_TEST(tc, test_proxy_discover);
	UNIT_TEST(tc, test_proxy_4011);
	UNIT_TEST(tc, test_proxy_not_allowed_and_explicit);
	UNIT_TEST(tc, test_auto_proxy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(policy_suite());
}
