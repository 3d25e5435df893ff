/* check_ipxe — the pure parts of ipxe/: the public paths, the Range
 * header, templates, the script of each source (default, url, contents,
 * template override), allowPXE gating, the escaping of Hardware values,
 * and the /httpboot answer. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/bootfile.h"
#include "ipxe/ipxe-internal.h"
#include "tests/unit/unit.h"

/* ---- routes ---- */

static const struct {
	const char *path;
	enum ipxe_route_type type;
	bool has_mac;
	const char *name;
} routes[] = {
	{ "/ipxe/script/52:54:00:12:34:56/auto.ipxe", IPXE_ROUTE_SCRIPT, true, "auto.ipxe" },
	{ "/ipxe/script/52-54-00-AB-cd-EF/auto.ipxe", IPXE_ROUTE_SCRIPT, true, "auto.ipxe" },
	{ "/ipxe/script/auto.ipxe", IPXE_ROUTE_SCRIPT, false, "auto.ipxe" },
	{ "/auto.ipxe", IPXE_ROUTE_SCRIPT, false, "auto.ipxe" },
	{ "/auto.ipxe?x=1", IPXE_ROUTE_SCRIPT, false, "auto.ipxe" },
	{ "/ipxe/binary/ipxe.efi", IPXE_ROUTE_BINARY, false, "ipxe.efi" },
	{ "/ipxe/binary/52:54:00:12:34:56/snp-arm64.efi", IPXE_ROUTE_BINARY, true,
	  "snp-arm64.efi" },
	{ "/ipxe/binary/undionly.kpxe?mac=1", IPXE_ROUTE_BINARY, false, "undionly.kpxe" },
	{ "/osie/vmlinuz-x86_64", IPXE_ROUTE_OSIE, false, "vmlinuz-x86_64" },
	{ "/osie/hook/v0.10/initramfs-x86_64", IPXE_ROUTE_OSIE, false,
	  "hook/v0.10/initramfs-x86_64" },
	{ "/httpboot", IPXE_ROUTE_HTTPBOOT, false, "" },
	{ "/httpboot?a=b", IPXE_ROUTE_HTTPBOOT, false, "" },
	/* not ours */
	{ "/healthz", IPXE_ROUTE_NONE, false, "" },
	{ "/metrics", IPXE_ROUTE_NONE, false, "" },
	{ "/ipxefoo", IPXE_ROUTE_NONE, false, "" },
	{ "/httpboot/x", IPXE_ROUTE_NONE, false, "" },
	{ "/2009-04-04/meta-data", IPXE_ROUTE_NONE, false, "" },
	/* ours, malformed */
	{ "/ipxe", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/script/", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/script/52:54:00:12:34:56/other.ipxe", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/script/52:54:00:12:34/auto.ipxe", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/script/52:54:00:12:34:5g/auto.ipxe", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/script/52:54-00:12:34:56/auto.ipxe", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/..", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/.hidden", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/%2e%2e", IPXE_ROUTE_BAD, false, "" },
	/* iPXE encodes a MAC's colons; the path is decoded once */
	{ "/ipxe/script/52%3A54%3A00%3A12%3A34%3A56/auto.ipxe", IPXE_ROUTE_SCRIPT, true,
	  "auto.ipxe" },
	{ "/ipxe/binary/52%3a54%3a00%3a12%3a34%3a56/ipxe%2Eefi", IPXE_ROUTE_BINARY, true,
	  "ipxe.efi" },
	{ "/ipxe/binary/a%2Fb", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/ipxe.efi%", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/ipxe.efi%4", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/ipxe%zz", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/ipxe%00.efi", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/%2e%2e/secret", IPXE_ROUTE_BAD, false, "" },
	{ "/%69pxe/binary/ipxe.efi", IPXE_ROUTE_BINARY, false, "ipxe.efi" },
	{ "/ipxe/binary/a/b/c", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/52:54:00:12:34:56/../x", IPXE_ROUTE_BAD, false, "" },
	{ "/ipxe/binary/ipxe efi", IPXE_ROUTE_BAD, false, "" },
	{ "/osie", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/../etc/passwd", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/a/../../x", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/a//b", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/a/", IPXE_ROUTE_BAD, false, "" },
	{ "/osie//etc/passwd", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/a/.b", IPXE_ROUTE_BAD, false, "" },
	{ "/osie/a/b/c/d/e/f/g/h/i", IPXE_ROUTE_BAD, false, "" },
};

START_TEST(test_routes)
{
	struct ipxe_route r;
	const char *p = routes[_i].path;
	enum ipxe_route_type t = ipxe_route_parse(p, strlen(p), &r);
	ck_assert_msg(t == routes[_i].type, "%s: type %d, want %d", p, t, routes[_i].type);
	if (t == IPXE_ROUTE_NONE || t == IPXE_ROUTE_BAD)
		return;
	ck_assert_int_eq(r.has_mac, routes[_i].has_mac);
	ck_assert_str_eq(r.name, routes[_i].name);
	if (r.has_mac)
		ck_assert_uint_eq(r.mac[0], 0x52);
}
END_TEST

START_TEST(test_route_not_nul_terminated)
{
	/* The parser reads len bytes only. */
	char p[64] = "/ipxe/binary/ipxe.efiXXXX";
	struct ipxe_route r;
	ck_assert_int_eq(ipxe_route_parse(p, strlen("/ipxe/binary/ipxe.efi"), &r),
			 IPXE_ROUTE_BINARY);
	ck_assert_str_eq(r.name, "ipxe.efi");
	memset(p, 'a', sizeof(p));
	memcpy(p, "/osie/", 6);
	ck_assert_int_eq(ipxe_route_parse(p, sizeof(p), &r), IPXE_ROUTE_OSIE);
	ck_assert_uint_eq(strlen(r.name), sizeof(p) - 6);
	/* A long OSIE path is refused, not cut. */
	char longp[IPXE_OSIE_PATH_MAX + 16];
	memset(longp, 'b', sizeof(longp));
	memcpy(longp, "/osie/", 6);
	ck_assert_int_eq(ipxe_route_parse(longp, sizeof(longp), &r), IPXE_ROUTE_BAD);
}
END_TEST

START_TEST(test_types_and_aliases)
{
	ck_assert_str_eq(ipxe_content_type("ipxe.efi"), "application/efi");
	ck_assert_str_eq(ipxe_content_type("SNP.EFI"), "application/efi");
	ck_assert_str_eq(ipxe_content_type("undionly.kpxe"), "application/octet-stream");
	ck_assert_str_eq(ipxe_content_type("ipxe.iso"), "application/x-iso9660-image");
	ck_assert_str_eq(ipxe_content_type("efi"), "application/octet-stream");
	ck_assert_str_eq(bootfile_alias("snp.efi"), "snp-arm64.efi");
	ck_assert_str_eq(bootfile_alias("snp-arm64.efi"), "snp.efi");
	ck_assert_ptr_null(bootfile_alias("ipxe.efi"));
}
END_TEST

/* ---- Range ---- */

static const struct {
	const char *h;
	uint64_t size;
	int rr;
	uint64_t off, len;
} ranges[] = {
	{ "bytes=0-9", 100, 1, 0, 10 },
	{ "bytes=90-", 100, 1, 90, 10 },
	{ "bytes=90-1000", 100, 1, 90, 10 },
	{ "bytes=-10", 100, 1, 90, 10 },
	{ "bytes=-1000", 100, 1, 0, 100 },
	{ "Bytes=5-5", 100, 1, 5, 1 },
	{ "bytes = 5-5", 100, 0, 0, 0 },
	{ "bytes=99-99", 100, 1, 99, 1 },
	{ "bytes=100-", 100, -ERANGE, 0, 0 },
	{ "bytes=100-200", 100, -ERANGE, 0, 0 },
	{ "bytes=-0", 100, -ERANGE, 0, 0 },
	{ "bytes=-5", 0, -ERANGE, 0, 0 },
	{ "bytes=0-", 0, -ERANGE, 0, 0 },
	/* ignored: the whole file */
	{ "bytes=9-0", 100, 0, 0, 0 },
	{ "bytes=0-1,5-6", 100, 0, 0, 0 },
	{ "bytes=-", 100, 0, 0, 0 },
	{ "bytes=", 100, 0, 0, 0 },
	{ "items=0-1", 100, 0, 0, 0 },
	{ "bytes=a-b", 100, 0, 0, 0 },
	{ "bytes=99999999999999999999-", 100, 0, 0, 0 },
	{ "bytes=0-99999999999999999999", 100, 0, 0, 0 },
	{ "", 100, 0, 0, 0 },
};

START_TEST(test_ranges)
{
	uint64_t off = 77, len = 77;
	const char *h = ranges[_i].h;
	int rr = ipxe_range_parse(h, strlen(h), ranges[_i].size, &off, &len);
	ck_assert_msg(rr == ranges[_i].rr, "%s: %d, want %d", h, rr, ranges[_i].rr);
	if (rr == 1) {
		ck_assert_uint_eq(off, ranges[_i].off);
		ck_assert_uint_eq(len, ranges[_i].len);
	} else {
		ck_assert_uint_eq(off, 77); /* untouched */
	}
	ck_assert_int_eq(ipxe_range_parse(NULL, 0, 100, &off, &len), 0);
}
END_TEST

/* ---- templates ---- */

/* ---- validators ---- */

static const struct {
	const char *h;
	int e;      /* 0 or -EINVAL */
	int64_t t;
} dates[] = {
	{ "Sun, 06 Nov 1994 08:49:37 GMT", 0, 784111777 },   /* RFC 9110's example */
	{ "Sunday, 06-Nov-94 08:49:37 GMT", 0, 784111777 },  /* RFC 850 */
	{ "Sun Nov  6 08:49:37 1994", 0, 784111777 },        /* asctime */
	{ "  Thu, 01 Jan 1970 00:00:00 GMT ", 0, 0 },
	{ "Tue, 29 Feb 2000 23:59:59 GMT", 0, 951868799 },
	{ "Thu, 31 Dec 9999 23:59:59 GMT", 0, 253402300799 },
	{ "Tue, 29 Feb 2100 00:00:00 GMT", -EINVAL, 0 },     /* not a leap year */
	{ "Sun, 31 Nov 1994 08:49:37 GMT", -EINVAL, 0 },
	{ "Sun, 06 Nov 1994 24:00:00 GMT", -EINVAL, 0 },
	{ "Sun, 06 Nov 1994 08:60:00 GMT", -EINVAL, 0 },
	{ "Sun, 06 Nov 1994 08:49:37 UTC", -EINVAL, 0 },
	{ "Sun, 06 nov 1994 08:49:37 GMT", -EINVAL, 0 },     /* case matters */
	{ "Sun, 6 Nov 1994 08:49:37 GMT", -EINVAL, 0 },
	{ "Sun, 06 Nov 94 08:49:37 GMT", -EINVAL, 0 },
	{ "Wed, 31 Dec 1969 23:59:59 GMT", -EINVAL, 0 },     /* before the epoch */
	{ "Sun, 06 Nov 1994 08:49:37 GMT junk", -EINVAL, 0 },
	{ "Sun, 06 Nov 1994 08:49:37", -EINVAL, 0 },         /* cut short */
	{ "Sun, 06 Nov 1994 08:49:3", -EINVAL, 0 },
	{ "Sun,", -EINVAL, 0 },
	{ "Funday, 06-Nov-94 08:49:37 GMT", -EINVAL, 0 },
	{ "Sun Nov 6 08:49:37 1994", -EINVAL, 0 },
	{ "1994-11-06T08:49:37Z", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
};

START_TEST(test_http_dates)
{
	int64_t t = -7;
	const char *h = dates[_i].h;
	int e = ipxe_http_date_parse(h, strlen(h), &t);
	ck_assert_msg(e == dates[_i].e, "%s: %d, want %d", h, e, dates[_i].e);
	if (e == 0)
		ck_assert_msg(t == dates[_i].t, "%s: %lld", h, (long long)t);
}
END_TEST

START_TEST(test_http_date_format)
{
	char out[IPXE_HTTP_DATE_MAX];
	int64_t t;
	ck_assert_int_eq(ipxe_http_date(784111777, out), 0);
	ck_assert_str_eq(out, "Sun, 06 Nov 1994 08:49:37 GMT");
	ck_assert_int_eq(ipxe_http_date(0, out), 0);
	ck_assert_str_eq(out, "Thu, 01 Jan 1970 00:00:00 GMT");
	ck_assert_int_eq(ipxe_http_date(-1, out), -ERANGE);
	ck_assert_int_eq(ipxe_http_date_parse(NULL, 5, &t), -EINVAL);
	/* Not NUL-terminated: only the length counts. */
	const char longer[] = "Sun, 06 Nov 1994 08:49:37 GMTXXXX";
	ck_assert_int_eq(ipxe_http_date_parse(longer, 29, &t), 0);
	ck_assert_int_eq(t, 784111777);
	ck_assert_int_eq(ipxe_http_date_parse(longer, 28, &t), -EINVAL);
}
END_TEST

START_TEST(test_etag)
{
	char a[IPXE_ETAG_MAX], b[IPXE_ETAG_MAX];
	ipxe_etag(0x803, 0x1a2b, 0x10000000, 1700000000, 123456789, a);
	ck_assert_str_eq(a, "\"803-1a2b-10000000-17979cfe3d85cd15\"");
	ipxe_etag(0x803, 0x1a2b, 0x10000000, 1700000000, 123456790, b);
	ck_assert_str_ne(a, b); /* a rewrite within the second changes it */
	ipxe_etag(UINT64_MAX, UINT64_MAX, UINT64_MAX, INT64_MAX / 1000000000, 999999999, b);
	ck_assert_uint_lt(strlen(b), IPXE_ETAG_MAX);
}
END_TEST

#define TAG "\"803-1a2b-10000000-17979cfe3d85cd15\""

static const struct {
	const char *h;
	int match;
} inms[] = {
	{ TAG, 1 },
	{ "W/" TAG, 1 },                    /* weak comparison */
	{ "*", 1 },
	{ " * ", 1 },
	{ "\"a\", " TAG, 1 },
	{ "\"a\",," TAG " ,", 1 },          /* empty list elements */
	{ "\"a\"\t,\tW/" TAG, 1 },
	{ "\"a\", \"b\"", 0 },
	{ "\"803-1a2b-10000000-17979cfe3d85cd1\"", 0 },
	{ "803-1a2b-10000000-17979cfe3d85cd15", 0 }, /* unquoted */
	{ TAG " junk", 0 },
	{ "\"a\" " TAG, 0 },                /* no comma */
	{ "*, " TAG, 0 },
	{ "w/" TAG, 0 },
	{ "\"unterminated", 0 },
	{ "\"a b\", " TAG, 0 },             /* a space is not an etagc */
	{ "", 0 },
	{ ",", 0 },
};

START_TEST(test_if_none_match)
{
	const char *h = inms[_i].h;
	ck_assert_msg(ipxe_if_none_match(h, strlen(h), TAG) == inms[_i].match, "%s", h);
}
END_TEST

START_TEST(test_if_none_match_limits)
{
	char h[64 * 8 + 64] = "";
	size_t n = 0;
	ck_assert_int_eq(ipxe_if_none_match(NULL, 0, TAG), 0);
	/* Not NUL-terminated: the tag cut by the length does not match. */
	ck_assert_int_eq(ipxe_if_none_match(TAG, strlen(TAG) - 1, TAG), 0);
	/* Past the 64 tags read, a match is not seen: the client gets 200. */
	for (int i = 0; i < 64; i++)
		n += (size_t)snprintf(h + n, sizeof(h) - n, "\"%02d\",", i);
	ck_assert_int_eq(ipxe_if_none_match(h, n - 1, "\"63\""), 1);
	n += (size_t)snprintf(h + n, sizeof(h) - n, "\"xx\"");
	ck_assert_int_eq(ipxe_if_none_match(h, n, "\"xx\""), 0);
}
END_TEST

static const struct {
	const char *h;
	bool ok;
} ifranges[] = {
	{ TAG, true },
	{ " " TAG " ", true },
	{ "W/" TAG, false },                /* strong comparison only */
	{ "\"other\"", false },
	{ TAG ", \"x\"", false },
	{ "Tue, 14 Nov 2023 22:13:20 GMT", true }, /* exactly Last-Modified */
	{ "Tuesday, 14-Nov-23 22:13:20 GMT", true },
	{ "Wed, 15 Nov 2023 22:13:20 GMT", false }, /* a later date is no match */
	{ "Tue, 14 Nov 2023 22:13:19 GMT", false },
	{ "Tue, 14 Nov 2023 22:13:20", false },
	{ "", false },
	{ "\"", false },
};

START_TEST(test_if_range)
{
	const char *h = ifranges[_i].h;
	ck_assert_msg(ipxe_if_range(h, strlen(h), TAG, 1700000000) == ifranges[_i].ok, "%s", h);
}
END_TEST

START_TEST(test_template_check)
{
	char err[256];
	static const char good[] = "#!ipxe\n{{name}} {{ hw_addr }} ${net0/mac} {x} }} {\n";
	ck_assert_int_eq(ipxe_template_check(good, strlen(good), err, sizeof(err)), 0);
	ck_assert_int_eq(ipxe_template_check(ipxe_default_template,
					     strlen(ipxe_default_template), err, sizeof(err)),
			 0);
	static const struct {
		const char *t;
		const char *err;
	} bad[] = {
		{ "#!ipxe\necho {{nope}}\n", "line 2, column 6: unknown placeholder \"{{nope}}\"" },
		{ "{{name", "line 1, column 1: \"{{\" without a matching \"}}\" after a name" },
		{ "ab\n\n  {{}}", "line 3, column 3: an empty placeholder" },
		{ "{{Name}}", "line 1, column 1: \"{{\" without a matching \"}}\" after a name" },
		{ "{{name}}{{name}x", "line 1, column 9: \"{{\" without a matching \"}}\" after a name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(ipxe_template_check(bad[i].t, strlen(bad[i].t), err, sizeof(err)),
				 -EINVAL);
		ck_assert_str_eq(err, bad[i].err);
	}
	ck_assert_int_eq(ipxe_template_check("a\0b", 3, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1, column 2: a NUL byte");
	/* Every name in the table is accepted. */
	for (int v = 0; ipxe_template_vars[v]; v++) {
		char t[64];
		snprintf(t, sizeof(t), "{{%s}}", ipxe_template_vars[v]);
		ck_assert_int_eq(ipxe_template_check(t, strlen(t), err, sizeof(err)), 0);
	}
}
END_TEST

/* ---- scripts ---- */

static const uint8_t mac1[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static json_t *hw_new(const char *iface_extra)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"m1\",\"namespace\":\"lab\"},"
		 "\"spec\":{\"metadata\":{\"facility\":{\"facility_code\":\"onprem\"}},"
		 "\"interfaces\":[{\"dhcp\":{\"mac\":\"aa:bb:cc:dd:ee:ff\"},"
		 "\"netboot\":{\"allowPXE\":true}},"
		 "{\"dhcp\":{\"mac\":\"52:54:00:12:34:56\",\"ip\":{\"address\":\"192.0.2.10\"}%s}}]}}",
		 iface_extra);
	json_error_t je;
	json_t *hw = json_loads(text, 0, &je);
	ck_assert_msg(hw != NULL, "%s: %s", text, je.text);
	return hw;
}

static const struct ipxe_settings settings = {
	.base_url = "http://192.0.2.1:7080",
	.kernel = "vmlinuz-{{arch}}",
	.initrd = "initramfs-{{arch}}",
	.grpc_authority = "192.0.2.1:42113",
	.syslog_host = "192.0.2.1",
	.retries = 3,
};

/* The script for mac1 of a Hardware whose interface has extra (JSON
 * members after "ip"), or the error. */
static int script(const char *extra, const struct ipxe_settings *s, struct buf *out,
		  enum ipxe_script_kind *k, char *err)
{
	json_t *hw = hw_new(extra);
	buf_reset(out);
	int e = ipxe_script(hw, mac1, s ? s : &settings, out, k, err, 512);
	json_decref(hw);
	return e;
}

/* The kernel command line of a default script: what follows the kernel
 * URL on the kernel line, up to " && initrd". */
static void cmdline_of(const char *script_text, char *out, size_t outlen)
{
	const char *k = strstr(script_text, "\nkernel ");
	ck_assert_ptr_nonnull(k);
	k = strchr(k + 8, ' ');
	ck_assert_ptr_nonnull(k);
	const char *e = strstr(k, " && initrd ");
	ck_assert_ptr_nonnull(e);
	snprintf(out, outlen, "%.*s", (int)(e - k - 1), k + 1);
}

START_TEST(test_script_default)
{
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k = IPXE_SCRIPT_KIND_MAX;
	char err[512], cl[IPXE_CMDLINE_MAX];
	ck_assert_int_eq(script(",\"vlan_id\":\"42\"},\"netboot\":{\"allowPXE\":true", NULL, &out,
				&k, err),
			 0);
	ck_assert_int_eq(k, IPXE_SCRIPT_DEFAULT);
	ck_assert_str_eq(ipxe_script_kind_name(k), "default");
	ck_assert(strncmp(out.data, "#!ipxe\n", 7) == 0);
	ck_assert_ptr_nonnull(strstr(out.data, "\nkernel http://192.0.2.1:7080/osie/vmlinuz-x86_64 "));
	ck_assert_ptr_nonnull(
		strstr(out.data, " && initrd http://192.0.2.1:7080/osie/initramfs-x86_64 && boot ||\n"));
	ck_assert_ptr_nonnull(strstr(out.data, "iseq ${ib-try} 3 && goto ib-failed"));
	cmdline_of(out.data, cl, sizeof(cl));
	ck_assert_str_eq(cl, "vlan_id=42 facility=onprem syslog_host=192.0.2.1 "
			     "grpc_authority=192.0.2.1:42113 tinkerbell_tls=false "
			     "tinkerbell_insecure_tls=false worker_id=52:54:00:12:34:56 "
			     "hw_addr=52:54:00:12:34:56 modules=loop,squashfs,sd-mod,usb-storage "
			     "intel_iommu=on iommu=pt initrd=initramfs-x86_64 console=tty0 "
			     "console=ttyS1,115200");
	buf_free(&out);
}
END_TEST

START_TEST(test_script_settings_and_overrides)
{
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k;
	char err[512], cl[IPXE_CMDLINE_MAX];
	struct ipxe_settings s = settings;
	s.osie_url = "http://cdn.example.com/hook/";
	s.kernel_args = "console=ttyS0 ip=${ip}";
	s.tls = true;
	s.syslog_host = NULL;
	ck_assert_int_eq(script(",\"arch\":\"aarch64\"},\"netboot\":{\"allowPXE\":true,"
				"\"osie\":{\"kernelParams\":[\"quiet\",\"a=b\"]}",
				&s, &out, &k, err),
			 0);
	ck_assert_ptr_nonnull(
		strstr(out.data, "\nkernel http://cdn.example.com/hook/vmlinuz-aarch64 "));
	cmdline_of(out.data, cl, sizeof(cl));
	ck_assert_ptr_null(strstr(cl, "syslog_host"));
	ck_assert_ptr_null(strstr(cl, "vlan_id"));
	ck_assert_ptr_nonnull(strstr(cl, " tinkerbell_tls=true "));
	ck_assert_ptr_nonnull(strstr(cl, " initrd=initramfs-aarch64 "));
	/* The operator's arguments, then the Hardware's, last. */
	const char *tail = "console=ttyS1,115200 console=ttyS0 ip=${ip} quiet a=b";
	ck_assert_str_eq(cl + strlen(cl) - strlen(tail), tail);

	/* {{arch}} in the configured base URL: a base per architecture. */
	s.osie_url = "http://cdn.example.com/{{arch}}/hook-{{arch}}";
	buf_reset(&out);
	ck_assert_int_eq(script(",\"arch\":\"aarch64\"},\"netboot\":{\"allowPXE\":true", &s, &out,
				&k, err),
			 0);
	ck_assert_ptr_nonnull(strstr(
		out.data, "\nkernel http://cdn.example.com/aarch64/hook-aarch64/vmlinuz-aarch64 "));
	buf_reset(&out);
	ck_assert_int_eq(script("},\"netboot\":{\"allowPXE\":true", &s, &out, &k, err), 0);
	ck_assert_ptr_nonnull(strstr(
		out.data, " && initrd http://cdn.example.com/x86_64/hook-x86_64/initramfs-x86_64 "));

	/* Per-Hardware osie: base URL (percent-encoded), kernel and initrd names;
	 * spec.agentID as worker_id. */
	json_t *hw = hw_new("},\"netboot\":{\"allowPXE\":true,\"osie\":{\"baseURL\":"
			    "\"http://h/a b$c/\",\"kernel\":\"k-{{arch}}\",\"initrd\":\"i.img\"}");
	json_object_set_new(json_object_get(hw, "spec"), "agentID", json_string("agent-7"));
	buf_reset(&out);
	ck_assert_int_eq(ipxe_script(hw, mac1, &settings, &out, &k, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(out.data, "\nkernel http://h/a%20b%24c/k-x86_64 "));
	ck_assert_ptr_nonnull(strstr(out.data, "initrd http://h/a%20b%24c/i.img && boot"));
	cmdline_of(out.data, cl, sizeof(cl));
	ck_assert_ptr_nonnull(strstr(cl, " worker_id=agent-7 hw_addr=52:54:00:12:34:56 "));
	ck_assert_ptr_nonnull(strstr(cl, " initrd=i.img "));
	json_decref(hw);
	buf_free(&out);
}
END_TEST

START_TEST(test_script_url_and_contents)
{
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k;
	char err[512];
	ck_assert_int_eq(script("},\"netboot\":{\"allowPXE\":true,\"ipxe\":{\"url\":"
				"\"https://x.example/boot.ipxe?m=${mac}\",\"contents\":\"#!ipxe\\nexit\"}",
				NULL, &out, &k, err),
			 0);
	ck_assert_int_eq(k, IPXE_SCRIPT_URL);
	ck_assert_str_eq(out.data, "#!ipxe\nchain --autofree https://x.example/boot.ipxe?m=%24{mac}\n");
	ck_assert_int_eq(script("},\"netboot\":{\"allowPXE\":true,\"ipxe\":{\"contents\":"
				"\"#!ipxe\\necho hi ${mac}\\n\"}",
				NULL, &out, &k, err),
			 0);
	ck_assert_int_eq(k, IPXE_SCRIPT_CONTENTS);
	ck_assert_str_eq(out.data, "#!ipxe\necho hi ${mac}\n");
	ck_assert_int_eq(script("},\"netboot\":{\"allowPXE\":true,\"ipxe\":{\"url\":"
				"\"tftp://x/boot.ipxe\"}",
				NULL, &out, &k, err),
			 -EINVAL);
	ck_assert_str_eq(err, "netboot.ipxe.url: \"tftp://x/boot.ipxe\" is not an http:// or "
			      "https:// URL");
	buf_free(&out);
}
END_TEST

START_TEST(test_script_template_override)
{
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k;
	char err[512];
	static const char t[] = "#!ipxe\nchain {{base_url}}/custom/{{ hw_addr }}?w={{worker_id}}"
				"&a={{arch}}&n={{namespace}}/{{name}}&h={{hostname}}\n";
	struct ipxe_settings s = settings;
	s.template_ = t;
	s.template_len = strlen(t);
	ck_assert_int_eq(script(",\"hostname\":\"node1\"},\"netboot\":{\"allowPXE\":true", &s, &out,
				&k, err),
			 0);
	ck_assert_int_eq(k, IPXE_SCRIPT_DEFAULT);
	ck_assert_str_eq(out.data, "#!ipxe\nchain http://192.0.2.1:7080/custom/52:54:00:12:34:56"
				   "?w=52:54:00:12:34:56&a=x86_64&n=lab/m1&h=node1\n");
	/* The output buffer's bound holds. */
	struct buf small = BUF_INIT(16);
	json_t *hw = hw_new("},\"netboot\":{\"allowPXE\":true");
	ck_assert_int_eq(ipxe_script(hw, mac1, &settings, &small, &k, err, sizeof(err)), -E2BIG);
	json_decref(hw);
	buf_free(&small);
	buf_free(&out);
}
END_TEST

START_TEST(test_script_gating)
{
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k;
	char err[512];
	ck_assert_int_eq(script("},\"other\":{", NULL, &out, &k, err), -EACCES);
	ck_assert_str_eq(err, "netboot.allowPXE is not true");
	ck_assert_int_eq(script("},\"netboot\":{\"allowPXE\":false", NULL, &out, &k, err), -EACCES);
	ck_assert_int_eq(script("},\"netboot\":{\"allowPXE\":\"true\"", NULL, &out, &k, err),
			 -EACCES);
	/* The other interface allows PXE, not this one. */
	ck_assert_int_eq(script("},\"netboot\":{", NULL, &out, &k, err), -EACCES);
	/* An unknown MAC. */
	json_t *hw = hw_new("},\"netboot\":{\"allowPXE\":true");
	static const uint8_t other[6] = { 1, 2, 3, 4, 5, 6 };
	ck_assert_int_eq(ipxe_script(hw, other, &settings, &out, &k, err, sizeof(err)), -ENOENT);
	json_decref(hw);
	buf_free(&out);
}
END_TEST

static const struct {
	const char *extra;
	const char *err;
} unsafe[] = {
	{ "},\"netboot\":{\"allowPXE\":true,\"osie\":{\"kernelParams\":[\"a b\"]}",
	  "netboot.osie.kernelParams[0]: \"a b\" cannot go into an iPXE script (a space, '$', a "
	  "quote, a backslash or a control character)" },
	{ "},\"netboot\":{\"allowPXE\":true,\"osie\":{\"kernelParams\":[\"ok\",\"x=${y}\"]}",
	  "netboot.osie.kernelParams[1]: \"x=${y}\" cannot go into an iPXE script (a space, '$', a "
	  "quote, a backslash or a control character)" },
	{ "},\"netboot\":{\"allowPXE\":true,\"osie\":{\"kernelParams\":[\"a\\nshell\"]}",
	  "netboot.osie.kernelParams[0]: \"a\nshell\" cannot go into an iPXE script (a space, '$', "
	  "a quote, a backslash or a control character)" },
	{ "},\"netboot\":{\"allowPXE\":true,\"osie\":{\"kernelParams\":[1]}",
	  "netboot.osie.kernelParams[0]: not a string" },
	{ ",\"vlan_id\":\"4 2\"},\"netboot\":{\"allowPXE\":true",
	  "dhcp.vlan_id: \"4 2\" cannot go into an iPXE script (a space, '$', a quote, a backslash "
	  "or a control character)" },
	{ ",\"hostname\":\"a;b c\"},\"netboot\":{\"allowPXE\":true",
	  "hostname: \"a;b c\" cannot go into an iPXE script" },
	{ ",\"arch\":\"x86 64\"},\"netboot\":{\"allowPXE\":true",
	  "netboot.osie.initrd: \"initramfs-x86 64\" cannot go into an iPXE script (a space, '$', a "
	  "quote, a backslash or a control character)" },
};

START_TEST(test_script_unsafe_values)
{
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k;
	char err[512] = "";
	ck_assert_int_eq(script(unsafe[_i].extra, NULL, &out, &k, err), -EINVAL);
	ck_assert_str_eq(err, unsafe[_i].err);
	buf_free(&out);
}
END_TEST

START_TEST(test_script_unsafe_agent_id)
{
	struct buf out = BUF_INIT(IPXE_SCRIPT_MAX);
	enum ipxe_script_kind k;
	char err[512];
	json_t *hw = hw_new("},\"netboot\":{\"allowPXE\":true");
	json_object_set_new(json_object_get(hw, "spec"), "agentID", json_string("a$b"));
	ck_assert_int_eq(ipxe_script(hw, mac1, &settings, &out, &k, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "spec.agentID: \"a$b\""));
	json_decref(hw);
	buf_free(&out);
}
END_TEST

/* ---- by address, /httpboot ---- */

START_TEST(test_mac_by_ip_and_httpboot)
{
	uint8_t m[6];
	struct buf out = BUF_INIT(4096);
	json_t *hw = hw_new(",\"arch\":\"arm64\"},\"netboot\":{\"allowPXE\":true");
	ck_assert_int_eq(ipxe_mac_by_ip(hw, "192.0.2.10", m), 0);
	ck_assert_mem_eq(m, mac1, 6);
	ck_assert_int_eq(ipxe_mac_by_ip(hw, "192.0.2.11", m), -ENOENT);
	ck_assert_int_eq(ipxe_mac_by_ip(hw, "::ffff:192.0.2.10", m), -ENOENT);
	/* IPv6: compared as addresses, whatever the case and form. */
	json_t *v6 = json_pack("{s:{s:[{s:{s:s,s:{s:s}}}]}}", "spec", "interfaces", "dhcp", "mac",
			       "52:54:00:12:34:56", "ip", "address", "2001:DB8:0:0::5");
	ck_assert_int_eq(ipxe_mac_by_ip(v6, "2001:db8::5", m), 0);
	ck_assert_int_eq(ipxe_mac_by_ip(v6, "2001:db8::6", m), -ENOENT);
	json_decref(v6);
	ck_assert_int_eq(ipxe_httpboot(hw, "192.0.2.10", "http://s:7080", &out), 0);
	ck_assert_str_eq(out.data, "{\"ClientIPs\":\"192.0.2.10\",\"UKIURL\":"
				   "\"http://s:7080/ipxe/binary/52:54:00:12:34:56/snp-arm64.efi\","
				   "\"SystemUUID\":\"\"}\n");
	buf_reset(&out);
	json_object_set_new(json_object_get(json_object_get(hw, "spec"), "metadata"), "instance",
			    json_pack("{s:s}", "id", "0b7e6c9a-1111-4222-8333-444455556666"));
	ck_assert_int_eq(ipxe_httpboot(hw, "192.0.2.10", "http://s:7080", &out), 0);
	ck_assert_ptr_nonnull(strstr(out.data, "\"SystemUUID\":\"0b7e6c9a-1111-4222-8333-444455556666\""));
	buf_reset(&out);
	ck_assert_int_eq(ipxe_httpboot(NULL, "192.0.2.99", "http://s:7080", &out), 0);
	ck_assert_str_eq(out.data, "{\"ClientIPs\":\"192.0.2.99\",\"UKIURL\":"
				   "\"http://s:7080/ipxe/binary/ipxe.efi\",\"SystemUUID\":\"\"}\n");
	json_decref(hw);
	buf_free(&out);
}
END_TEST

static Suite *ipxe_suite(void)
{
	Suite *s = suite_create("ipxe");
	TCase *tc = tcase_create("routes");
	tcase_add_loop_test(tc, test_routes, 0, sizeof(routes) / sizeof(routes[0]));
	UNIT_TEST(tc, test_route_not_nul_terminated);
	UNIT_TEST(tc, test_types_and_aliases);
	tcase_add_loop_test(tc, test_ranges, 0, sizeof(ranges) / sizeof(ranges[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("validators");
	tcase_add_loop_test(tc, test_http_dates, 0, sizeof(dates) / sizeof(dates[0]));
	UNIT_TEST(tc, test_http_date_format);
	UNIT_TEST(tc, test_etag);
	tcase_add_loop_test(tc, test_if_none_match, 0, sizeof(inms) / sizeof(inms[0]));
	UNIT_TEST(tc, test_if_none_match_limits);
	tcase_add_loop_test(tc, test_if_range, 0, sizeof(ifranges) / sizeof(ifranges[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("scripts");
	UNIT_TEST(tc, test_template_check);
	UNIT_TEST(tc, test_script_default);
	UNIT_TEST(tc, test_script_settings_and_overrides);
	UNIT_TEST(tc, test_script_url_and_contents);
	UNIT_TEST(tc, test_script_template_override);
	UNIT_TEST(tc, test_script_gating);
	tcase_add_loop_test(tc, test_script_unsafe_values, 0, sizeof(unsafe) / sizeof(unsafe[0]));
	UNIT_TEST(tc, test_script_unsafe_agent_id);
	UNIT_TEST(tc, test_mac_by_ip_and_httpboot);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(ipxe_suite());
}
