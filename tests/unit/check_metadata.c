/* check_metadata — the pure parts of metadata/: the path router, the
 * client's address behind trusted proxies (X-Forwarded-For), the EC2
 * tree and its listings, and the documents made from a Hardware
 * (network-config for several shapes, NoCloud meta-data, /metadata,
 * Ignition). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>

#include "daemon/config/conf.h"
#include "metadata/metadata-internal.h"
#include "tests/unit/unit.h"

/* ---- routes ---- */

static const struct {
	const char *path;
	enum md_route_type type;
	const char *key; /* EC2 path, or the instance id / uuid */
} routes[] = {
	{ "/2009-04-04", MD_ROUTE_EC2, "" },
	{ "/2009-04-04/", MD_ROUTE_EC2, "" },
	{ "/latest", MD_ROUTE_EC2, "" },
	{ "/latest/meta-data", MD_ROUTE_EC2, "meta-data" },
	{ "/latest/meta-data/", MD_ROUTE_EC2, "meta-data" },
	{ "/2009-04-04/meta-data/hostname", MD_ROUTE_EC2, "meta-data/hostname" },
	{ "/2009-04-04//meta-data//public-keys/0/openssh-key/", MD_ROUTE_EC2,
	  "meta-data/public-keys/0/openssh-key" },
	{ "/2009-04-04/user-data?x=1", MD_ROUTE_EC2, "user-data" },
	{ "/tootles/instanceID/i-123/2009-04-04/meta-data/instance-id", MD_ROUTE_EC2,
	  "meta-data/instance-id" },
	{ "/tootles/instanceID/52:54:00:12:34:56/2009-04-04", MD_ROUTE_EC2, "" },
	{ "/metadata", MD_ROUTE_HEGEL, "" },
	{ "/nocloud", MD_ROUTE_NOCLOUD, "" },
	{ "/nocloud/", MD_ROUTE_NOCLOUD, "" },
	{ "/nocloud/meta-data", MD_ROUTE_NOCLOUD, "" },
	{ "/nocloud/network-config", MD_ROUTE_NOCLOUD, "" },
	{ "/ignition/0B7E6C9A-1111-4222-8333-444455556666", MD_ROUTE_IGNITION,
	  "0b7e6c9a-1111-4222-8333-444455556666" },
	/* not ours */
	{ "/2009-04-04x", MD_ROUTE_NONE, "" },
	{ "/latest-meta", MD_ROUTE_NONE, "" },
	{ "/2021-03-23/meta-data/instance-id", MD_ROUTE_NONE, "" },
	{ "/metadata/x", MD_ROUTE_NONE, "" },
	{ "/healthz", MD_ROUTE_NONE, "" },
	{ "/nocloudy", MD_ROUTE_NONE, "" },
	/* ours, malformed */
	{ "/2009-04-04/meta-data/../user-data", MD_ROUTE_BAD, "" },
	{ "/2009-04-04/./meta-data", MD_ROUTE_BAD, "" },
	{ "/2009-04-04/meta-data/%2e%2e", MD_ROUTE_BAD, "" },
	{ "/2009-04-04/meta data", MD_ROUTE_BAD, "" },
	{ "/tootles/instanceID//2009-04-04/", MD_ROUTE_BAD, "" },
	{ "/tootles/instanceID/i-1/2010-01-01/meta-data", MD_ROUTE_BAD, "" },
	{ "/tootles/instanceID/i-1", MD_ROUTE_BAD, "" },
	{ "/tootles/instanceID/i%201/2009-04-04/", MD_ROUTE_BAD, "" },
	{ "/tootles/instanceID/i-1/2009-04-04x", MD_ROUTE_BAD, "" },
	{ "/nocloud/other", MD_ROUTE_BAD, "" },
	{ "/nocloud/meta-data/x", MD_ROUTE_BAD, "" },
	{ "/ignition/0b7e6c9a-1111-4222-8333-44445555666", MD_ROUTE_BAD, "" },
	{ "/ignition/0b7e6c9a+1111-4222-8333-444455556666", MD_ROUTE_BAD, "" },
	{ "/ignition/", MD_ROUTE_BAD, "" },
};

START_TEST(test_routes)
{
	struct md_route r;
	const char *p = routes[_i].path;
	enum md_route_type t = md_route_parse(p, strlen(p), &r);
	ck_assert_msg(t == routes[_i].type, "%s: %d, want %d", p, t, routes[_i].type);
	if (t == MD_ROUTE_EC2)
		ck_assert_str_eq(r.path, routes[_i].key);
	if (t == MD_ROUTE_IGNITION)
		ck_assert_str_eq(r.uuid, routes[_i].key);
	if (t != MD_ROUTE_NONE && t != MD_ROUTE_BAD)
		ck_assert_str_ne(md_route_template(&r), "(unknown)");
}
END_TEST

START_TEST(test_route_details)
{
	struct md_route r;
	const char *p = "/tootles/instanceID/i-9/2009-04-04/meta-data";
	ck_assert_int_eq(md_route_parse(p, strlen(p), &r), MD_ROUTE_EC2);
	ck_assert(r.by_instance);
	ck_assert_str_eq(r.instance_id, "i-9");
	ck_assert_str_eq(md_route_template(&r), "/tootles/instanceID/{id}/2009-04-04/{path}");
	ck_assert_int_eq(md_route_parse("/nocloud/user-data", 18, &r), MD_ROUTE_NOCLOUD);
	ck_assert_int_eq(r.file, MD_NOCLOUD_USER_DATA);
	ck_assert_int_eq(md_route_parse("/nocloud/", 9, &r), MD_ROUTE_NOCLOUD);
	ck_assert_int_eq(r.file, MD_NOCLOUD_DIR);
	/* Only len bytes are read. */
	ck_assert_int_eq(md_route_parse("/metadataXYZ", 9, &r), MD_ROUTE_HEGEL);
	/* A path too long for the key buffer is refused, not cut. */
	char longp[MD_PATH_MAX + 32];
	memset(longp, 'a', sizeof(longp));
	memcpy(longp, "/latest/", 8);
	ck_assert_int_eq(md_route_parse(longp, sizeof(longp), &r), MD_ROUTE_BAD);
}
END_TEST

/* ---- the client's address ---- */

static void cidrs_set(struct config_cidrs *l, const char *const *list)
{
	memset(l, 0, sizeof(*l));
	for (; *list; list++) {
		struct config_cidr *c = &l->e[l->n++];
		char a[64];
		const char *slash = strchr(*list, '/');
		snprintf(a, sizeof(a), "%.*s", (int)(slash ? slash - *list : (long)strlen(*list)),
			 *list);
		c->family = strchr(a, ':') ? AF_INET6 : AF_INET;
		ck_assert_int_eq(inet_pton(c->family, a, c->addr), 1);
		c->prefix = (uint8_t)(slash ? atoi(slash + 1) : c->family == AF_INET ? 32 : 128);
	}
}

static const struct {
	const char *peer, *xff, *want;
} xffs[] = {
	/* untrusted peer: the header is ignored */
	{ "198.51.100.1", "10.0.0.5", "198.51.100.1" },
	{ "198.51.100.1", NULL, "198.51.100.1" },
	/* trusted peer */
	{ "192.0.2.1", "10.0.0.5", "10.0.0.5" },
	{ "192.0.2.1", NULL, "192.0.2.1" },
	{ "192.0.2.1", "", "192.0.2.1" },
	{ "192.0.2.1", " , ", "192.0.2.1" },
	/* the rightmost untrusted one: a forged left part is not believed */
	{ "192.0.2.1", "6.6.6.6, 10.0.0.5", "10.0.0.5" },
	{ "192.0.2.1", "6.6.6.6,10.0.0.5, 192.0.2.7", "10.0.0.5" },
	{ "192.0.2.1", "10.0.0.5,192.0.2.9,192.0.2.7", "10.0.0.5" },
	/* all trusted: the leftmost */
	{ "192.0.2.1", "192.0.2.8, 192.0.2.7", "192.0.2.8" },
	/* IPv6 and mapped forms */
	{ "2001:db8::1", "2001:DB8:0:0::77", "2001:db8::77" },
	{ "::ffff:192.0.2.1", "10.0.0.5", "10.0.0.5" },
	{ "192.0.2.1", "::ffff:10.0.0.6", "10.0.0.6" },
	/* garbage where the client should be: no usable address */
	{ "192.0.2.1", "10.0.0.5, unknown", NULL },
	{ "192.0.2.1", "10.0.0.5:1234", NULL },
	{ "192.0.2.1", "[10.0.0.5]", NULL },
	{ "not-an-ip", NULL, NULL },
	/* behind garbage on the left, the right is still read first */
	{ "192.0.2.1", "junk, 10.0.0.5", "10.0.0.5" },
};

START_TEST(test_client_address)
{
	static const char *const trusted[] = { "192.0.2.0/24", "2001:db8::1", NULL };
	struct config_cidrs l;
	char out[INET6_ADDRSTRLEN];
	cidrs_set(&l, trusted);
	int e = md_client_address(xffs[_i].peer, xffs[_i].xff, &l, out, sizeof(out));
	if (xffs[_i].want) {
		ck_assert_msg(e == 0, "%s / %s: %d", xffs[_i].peer, xffs[_i].xff, e);
		ck_assert_str_eq(out, xffs[_i].want);
	} else {
		ck_assert_int_eq(e, -EINVAL);
		ck_assert_str_eq(out, "");
	}
}
END_TEST

START_TEST(test_cidrs)
{
	static const char *const list[] = { "10.0.0.0/8", "192.0.2.128/25", "2001:db8::/33",
					    "198.51.100.7", NULL };
	struct config_cidrs l;
	cidrs_set(&l, list);
	ck_assert(md_cidrs_match(&l, "10.255.1.2"));
	ck_assert(!md_cidrs_match(&l, "11.0.0.1"));
	ck_assert(md_cidrs_match(&l, "192.0.2.200"));
	ck_assert(!md_cidrs_match(&l, "192.0.2.127"));
	ck_assert(md_cidrs_match(&l, "2001:db8:7fff::1"));
	ck_assert(!md_cidrs_match(&l, "2001:db8:8000::1"));
	ck_assert(md_cidrs_match(&l, "198.51.100.7"));
	ck_assert(!md_cidrs_match(&l, "198.51.100.8"));
	ck_assert(md_cidrs_match(&l, "::ffff:10.1.1.1"));
	ck_assert(!md_cidrs_match(&l, "garbage"));
	static const char *const all[] = { "0.0.0.0/0", NULL };
	cidrs_set(&l, all);
	ck_assert(md_cidrs_match(&l, "203.0.113.9"));
	ck_assert(!md_cidrs_match(&l, "2001:db8::1"));
	ck_assert(!md_cidrs_match(NULL, "10.0.0.1"));
}
END_TEST

/* ---- EC2 ---- */

static json_t *load(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);
	ck_assert_msg(v != NULL, "%s: %s", text, je.text);
	return v;
}

static const char full_hw[] =
	"{\"metadata\":{\"name\":\"m1\",\"namespace\":\"lab\",\"uid\":\"u-1\"},"
	"\"spec\":{\"userData\":\"#cloud-config\\n\",\"vendorData\":\"vd\","
	"\"metadata\":{\"facility\":{\"facility_code\":\"onprem\",\"plan_slug\":\"c3\"},"
	"\"instance\":{\"id\":\"i-1\",\"hostname\":\"h1\",\"tags\":[\"a\",\"b\"],"
	"\"ssh_keys\":[\"ssh-ed25519 AAAA alice@x\",\"ssh-rsa BBBB\"],"
	"\"operating_system\":{\"slug\":\"u22\",\"distro\":\"ubuntu\",\"version\":\"22.04\","
	"\"image_tag\":\"t\"},"
	"\"ips\":[{\"address\":\"2001:db8::5\",\"family\":6},"
	"{\"address\":\"10.0.0.5\",\"family\":4,\"public\":false},"
	"{\"address\":\"198.51.100.5\",\"family\":4,\"public\":true}],"
	"\"storage\":{\"disks\":[{\"device\":\"/dev/sda\"}]}}},"
	"\"interfaces\":[{\"dhcp\":{\"mac\":\"52:54:00:00:00:01\",\"hostname\":\"dh\","
	"\"ip\":{\"address\":\"10.0.0.5\",\"netmask\":\"255.255.255.0\",\"gateway\":\"10.0.0.1\"},"
	"\"name_servers\":[\"10.0.0.2\",\"10.0.0.3\"],\"domain_name\":\"lab.example\"}}]}}";

static const struct {
	const char *path;
	int e;
	const char *body;
} ec2[] = {
	{ "", 0, "meta-data/\nuser-data\nvendor-data" },
	{ "meta-data", 0,
	  "instance-id\nhostname\nlocal-hostname\niqn\nplan\nfacility\ntags\noperating-system/\n"
	  "public-keys/\npublic-ipv4\npublic-ipv6\nlocal-ipv4" },
	{ "meta-data/instance-id", 0, "i-1" },
	{ "meta-data/hostname", 0, "h1" },
	{ "meta-data/local-hostname", 0, "h1" },
	{ "meta-data/iqn", 0, "" },
	{ "meta-data/plan", 0, "c3" },
	{ "meta-data/facility", 0, "onprem" },
	{ "meta-data/tags", 0, "a\nb" },
	{ "meta-data/operating-system", 0, "slug\ndistro\nversion\nimage_tag\nlicense_activation/" },
	{ "meta-data/operating-system/distro", 0, "ubuntu" },
	{ "meta-data/operating-system/image_tag", 0, "t" },
	{ "meta-data/operating-system/license_activation", 0, "state" },
	{ "meta-data/operating-system/license_activation/state", 0, "" },
	{ "meta-data/public-ipv4", 0, "198.51.100.5" },
	{ "meta-data/local-ipv4", 0, "10.0.0.5" },
	{ "meta-data/public-ipv6", 0, "2001:db8::5" },
	{ "meta-data/public-keys", 0, "0=alice@x\n1=key-1" },
	{ "meta-data/public-keys/0", 0, "openssh-key" },
	{ "meta-data/public-keys/1/openssh-key", 0, "ssh-rsa BBBB" },
	{ "meta-data/public-keys/2", -ENOENT, "" },
	{ "meta-data/public-keys/01", -ENOENT, "" },
	{ "meta-data/public-keys/0/other", -ENOENT, "" },
	{ "meta-data/public-keysx", -ENOENT, "" },
	{ "user-data", 0, "#cloud-config\n" },
	{ "vendor-data", 0, "vd" },
	{ "meta-data/nope", -ENOENT, "" },
	{ "meta", -ENOENT, "" },
};

START_TEST(test_ec2)
{
	json_t *hw = load(full_hw);
	struct buf out = BUF_INIT(MD_BODY_MAX);
	int e = md_ec2(hw, ec2[_i].path, &out);
	ck_assert_msg(e == ec2[_i].e, "%s: %d", ec2[_i].path, e);
	if (e == 0)
		ck_assert_str_eq(out.data ? out.data : "", ec2[_i].body);
	buf_free(&out);
	json_decref(hw);
}
END_TEST

START_TEST(test_ec2_sparse)
{
	/* A Hardware with nearly nothing: every leaf is an empty 200, the
	 * fallbacks find the interface's hostname and address. */
	json_t *hw = load("{\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"52:54:00:00:00:01\"}},"
			  "{\"dhcp\":{\"hostname\":\"dh\",\"ip\":{\"address\":\"10.0.0.9\"}}}]}}");
	struct buf out = BUF_INIT(4096);
	static const char *const empty[] = { "meta-data/instance-id", "meta-data/tags",
					     "meta-data/public-keys", "meta-data/public-ipv4",
					     "user-data", "vendor-data", "meta-data/plan" };
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		buf_reset(&out);
		ck_assert_int_eq(md_ec2(hw, empty[i], &out), 0);
		ck_assert_uint_eq(out.len, 0);
	}
	buf_reset(&out);
	ck_assert_int_eq(md_ec2(hw, "meta-data/hostname", &out), 0);
	ck_assert_str_eq(out.data, "dh");
	buf_reset(&out);
	ck_assert_int_eq(md_ec2(hw, "meta-data/local-ipv4", &out), 0);
	ck_assert_str_eq(out.data, "10.0.0.9");
	buf_free(&out);
	json_decref(hw);
	/* The body bound holds. */
	hw = load(full_hw);
	struct buf small = BUF_INIT(8);
	ck_assert_int_eq(md_ec2(hw, "meta-data", &small), -E2BIG);
	buf_free(&small);
	json_decref(hw);
}
END_TEST

/* ---- documents ---- */

static char *doc(const char *hwtext, enum md_nocloud_file f)
{
	json_t *hw = load(hwtext);
	struct buf out = BUF_INIT(MD_BODY_MAX);
	ck_assert_int_eq(md_nocloud(hw, f, &out), 0);
	json_decref(hw);
	char *s = buf_steal(&out);
	return s ? s : strdup("");
}

START_TEST(test_network_config_static)
{
	char *s = doc(full_hw, MD_NOCLOUD_NETWORK_CONFIG);
	ck_assert_str_eq(s, "version: 2\n"
			    "ethernets:\n"
			    "  nic0:\n"
			    "    match:\n"
			    "      macaddress: \"52:54:00:00:00:01\"\n"
			    "    dhcp4: false\n"
			    "    addresses:\n"
			    "      - \"10.0.0.5/24\"\n"
			    "    routes:\n"
			    "      - to: \"0.0.0.0/0\"\n"
			    "        via: \"10.0.0.1\"\n"
			    "    nameservers:\n"
			    "      addresses:\n"
			    "        - \"10.0.0.2\"\n"
			    "        - \"10.0.0.3\"\n"
			    "      search:\n"
			    "        - \"lab.example\"\n");
	free(s);
}
END_TEST

START_TEST(test_network_config_shapes)
{
	/* Two interfaces, one named, one on a VLAN with routes, one with no
	 * address (DHCP), no gateway. */
	char *s = doc("{\"spec\":{\"interfaces\":["
		      "{\"dhcp\":{\"mac\":\"52:54:00:00:00:01\",\"iface_name\":\"eno1\","
		      "\"ip\":{\"address\":\"10.0.0.5\",\"netmask\":\"255.255.0.0\"}}},"
		      "{\"dhcp\":{\"mac\":\"52:54:00:00:00:02\",\"vlan_id\":\"100\","
		      "\"ip\":{\"address\":\"172.16.0.9\",\"netmask\":\"255.255.255.252\","
		      "\"gateway\":\"172.16.0.10\"},"
		      "\"classless_static_routes\":[{\"destination_descriptor\":\"10.9.0.0/16\","
		      "\"router\":\"172.16.0.10\"}]}},"
		      "{\"dhcp\":{\"mac\":\"52:54:00:00:00:03\"}},"
		      "{\"netboot\":{}}]}}",
		      MD_NOCLOUD_NETWORK_CONFIG);
	ck_assert_str_eq(s, "version: 2\n"
			    "ethernets:\n"
			    "  nic0:\n"
			    "    match:\n"
			    "      macaddress: \"52:54:00:00:00:01\"\n"
			    "    set-name: \"eno1\"\n"
			    "    dhcp4: false\n"
			    "    addresses:\n"
			    "      - \"10.0.0.5/16\"\n"
			    "  nic1:\n"
			    "    match:\n"
			    "      macaddress: \"52:54:00:00:00:02\"\n"
			    "    dhcp4: false\n"
			    "  nic2:\n"
			    "    match:\n"
			    "      macaddress: \"52:54:00:00:00:03\"\n"
			    "    dhcp4: true\n"
			    "vlans:\n"
			    "  nic1.100:\n"
			    "    id: 100\n"
			    "    link: nic1\n"
			    "    dhcp4: false\n"
			    "    addresses:\n"
			    "      - \"172.16.0.9/30\"\n"
			    "    routes:\n"
			    "      - to: \"0.0.0.0/0\"\n"
			    "        via: \"172.16.0.10\"\n"
			    "      - to: \"10.9.0.0/16\"\n"
			    "        via: \"172.16.0.10\"\n");
	free(s);
	/* A value cannot break out of its scalar. */
	s = doc("{\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"x\\\"\\nversion: 1\","
		"\"ip\":{\"address\":\"1.2.3.4\",\"netmask\":\"255.0.255.0\"}}}]}}",
		MD_NOCLOUD_NETWORK_CONFIG);
	ck_assert_ptr_nonnull(strstr(s, "macaddress: \"x\\\"\\x0aversion: 1\"\n"));
	ck_assert_ptr_nonnull(strstr(s, "\"1.2.3.4/32\"")); /* a bad mask: a host route */
	free(s);
	/* IPv6: its own default route and prefix length; no netmask is a /64;
	 * an address that is not one cannot break out of its scalar either. */
	s = doc("{\"spec\":{\"interfaces\":["
		"{\"dhcp\":{\"mac\":\"52:54:00:00:00:01\",\"ip\":{\"address\":\"2001:db8::5\","
		"\"netmask\":\"ffff:ffff:ffff:ff00::\",\"gateway\":\"2001:db8::1\"}}},"
		"{\"dhcp\":{\"mac\":\"52:54:00:00:00:02\",\"ip\":{\"address\":\"fd00::9\"}}},"
		"{\"dhcp\":{\"mac\":\"52:54:00:00:00:03\",\"ip\":{\"address\":\"1.2.3.4\\\"x\"}}}]}}",
		MD_NOCLOUD_NETWORK_CONFIG);
	ck_assert_ptr_nonnull(strstr(s, "  nic0:\n"
					"    match:\n"
					"      macaddress: \"52:54:00:00:00:01\"\n"
					"    dhcp4: false\n"
					"    dhcp6: false\n"
					"    addresses:\n"
					"      - \"2001:db8::5/56\"\n"
					"    routes:\n"
					"      - to: \"::/0\"\n"
					"        via: \"2001:db8::1\"\n"));
	ck_assert_ptr_nonnull(strstr(s, "      - \"fd00::9/64\"\n"));
	ck_assert_ptr_nonnull(strstr(s, "      - \"1.2.3.4\\\"x/32\"\n"));
	free(s);
	/* YAML refuses DEL and C1 controls raw: everything outside printable
	 * ASCII is escaped. */
	s = doc("{\"spec\":{\"interfaces\":[{\"dhcp\":{\"mac\":\"a\\u007fb\\u0085c\\u00e9"
		"\\ud83d\\ude00\\u2028\"}}]}}",
		MD_NOCLOUD_NETWORK_CONFIG);
	ck_assert_ptr_nonnull(strstr(s, "macaddress: \"a\\x7fb\\u0085c\\u00e9\\U0001f600\\u2028\"\n"));
	free(s);
}
END_TEST

START_TEST(test_nocloud_files)
{
	char *s = doc(full_hw, MD_NOCLOUD_META_DATA);
	ck_assert_str_eq(s, "instance-id: \"i-1\"\nlocal-hostname: \"h1\"\npublic-keys:\n"
			    "  - \"ssh-ed25519 AAAA alice@x\"\n  - \"ssh-rsa BBBB\"\n");
	free(s);
	s = doc("{\"metadata\":{\"name\":\"m2\",\"uid\":\"u-2\"},\"spec\":{}}", MD_NOCLOUD_META_DATA);
	ck_assert_str_eq(s, "instance-id: \"u-2\"\nlocal-hostname: \"m2\"\n");
	free(s);
	s = doc(full_hw, MD_NOCLOUD_USER_DATA);
	ck_assert_str_eq(s, "#cloud-config\n");
	free(s);
	s = doc("{\"spec\":{\"metadata\":{\"instance\":{\"userdata\":\"ud\"}}}}",
		MD_NOCLOUD_USER_DATA);
	ck_assert_str_eq(s, "ud");
	free(s);
	s = doc(full_hw, MD_NOCLOUD_VENDOR_DATA);
	ck_assert_str_eq(s, "vd");
	free(s);
	s = doc("{}", MD_NOCLOUD_USER_DATA);
	ck_assert_str_eq(s, "");
	free(s);
	s = doc("{}", MD_NOCLOUD_DIR);
	ck_assert_str_eq(s, "meta-data\nuser-data\nvendor-data\nnetwork-config");
	free(s);
}
END_TEST

START_TEST(test_hegel_json_and_ignition)
{
	json_t *hw = load(full_hw);
	struct buf out = BUF_INIT(MD_BODY_MAX);
	ck_assert_int_eq(md_hegel_json(hw, &out), 0);
	ck_assert_str_eq(out.data,
			 "{\"metadata\":{\"instance\":{\"storage\":{\"disks\":[{\"device\":\"/dev/sda\"}]}}}}\n");
	buf_reset(&out);
	ck_assert_int_eq(md_ignition(hw, &out), -ENOENT); /* cloud-config is not Ignition */
	ck_assert_str_eq(md_instance_id(hw), "i-1");
	json_decref(hw);
	hw = load("{\"spec\":{\"userData\":\"{\\\"ignition\\\":{\\\"version\\\":\\\"3.4.0\\\"}}\"}}");
	ck_assert_int_eq(md_ignition(hw, &out), 0);
	ck_assert_str_eq(out.data, "{\"ignition\":{\"version\":\"3.4.0\"}}");
	buf_reset(&out);
	ck_assert_int_eq(md_hegel_json(hw, &out), 0);
	ck_assert_str_eq(out.data, "{\"metadata\":{\"instance\":{\"storage\":{}}}}\n");
	ck_assert_ptr_null(md_instance_id(hw));
	json_decref(hw);
	static const char *const not_ignition[] = {
		"{\"spec\":{\"userData\":\"{\\\"ignition\\\":{}}\"}}",
		"{\"spec\":{\"userData\":\"[1]\"}}",
		"{\"spec\":{\"userData\":\"{\\\"ignition\\\":{\\\"version\\\":3}}\"}}",
		"{\"spec\":{\"userData\":\"{\\\"a\\\":1,\\\"a\\\":2,\\\"ignition\\\":{\\\"version\\\":\\\"3\\\"}}\"}}",
		"{\"spec\":{}}",
	};
	for (size_t i = 0; i < sizeof(not_ignition) / sizeof(not_ignition[0]); i++) {
		hw = load(not_ignition[i]);
		buf_reset(&out);
		ck_assert_int_eq(md_ignition(hw, &out), -ENOENT);
		json_decref(hw);
	}
	buf_free(&out);
}
END_TEST

static Suite *metadata_suite(void)
{
	Suite *s = suite_create("metadata");
	TCase *tc = tcase_create("routes");
	tcase_add_loop_test(tc, test_routes, 0, sizeof(routes) / sizeof(routes[0]));
	UNIT_TEST(tc, test_route_details);
	tcase_add_loop_test(tc, test_client_address, 0, sizeof(xffs) / sizeof(xffs[0]));
	UNIT_TEST(tc, test_cidrs);
	suite_add_tcase(s, tc);
	tc = tcase_create("answers");
	tcase_add_loop_test(tc, test_ec2, 0, sizeof(ec2) / sizeof(ec2[0]));
	UNIT_TEST(tc, test_ec2_sparse);
	UNIT_TEST(tc, test_network_config_static);
	UNIT_TEST(tc, test_network_config_shapes);
	UNIT_TEST(tc, test_nocloud_files);
	UNIT_TEST(tc, test_hegel_json_and_ignition);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(metadata_suite());
}
