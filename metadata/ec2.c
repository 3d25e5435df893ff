/* ec2 — the EC2-style metadata tree of one Hardware.
 *
 * DESIGN: the tree is a table: every directory and leaf Hegel serves under
 * /2009-04-04/ (docs/compatibility.md, "Instance metadata"), each leaf with
 * the function that reads
 * its value from the Hardware's JSON, plus what Hegel leaves empty:
 * public-keys/ in EC2's form from metadata.instance.ssh_keys (a listing of
 * "N=name", then N/openssh-key) and vendor-data from spec.vendorData. A
 * directory's listing is its children, one per line, sub-directories with
 * a trailing '/'. An unset leaf is an empty 200, as Hegel answers; a path
 * that is not in the tree is -ENOENT. Where Hegel would answer empty and
 * the Hardware says the same thing elsewhere, the other place is used:
 * hostname falls back to the interface's dhcp.hostname and local-ipv4 to
 * its dhcp.ip.address, which is what cloud-init needs to name the machine.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "metadata/metadata-internal.h"

/* ---- leaves ---- */

static const json_t *instance(const json_t *hw)
{
	return json_object_get(json_object_get(json_object_get(hw, "spec"), "metadata"),
			       "instance");
}

static int put_str(struct buf *out, const json_t *v)
{
	if (json_is_string(v))
		return buf_append(out, json_string_value(v), json_string_length(v));
	if (json_is_integer(v))
		return buf_printf(out, "%lld", (long long)json_integer_value(v));
	return 0;
}

static int leaf_instance_id(const json_t *hw, struct buf *out)
{
	return put_str(out, json_object_get(instance(hw), "id"));
}

static int leaf_hostname(const json_t *hw, struct buf *out)
{
	const json_t *h = json_object_get(instance(hw), "hostname");
	if (json_is_string(h) && json_string_length(h))
		return put_str(out, h);
	return put_str(out, md_iface_field(hw, "hostname"));
}

static int leaf_plan(const json_t *hw, struct buf *out)
{
	return put_str(out, json_object_get(md_facility(hw), "plan_slug"));
}

static int leaf_facility(const json_t *hw, struct buf *out)
{
	return put_str(out, json_object_get(md_facility(hw), "facility_code"));
}

static int leaf_tags(const json_t *hw, struct buf *out)
{
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(instance(hw), "tags"), i, t)
	{
		if (!json_is_string(t))
			continue;
		if ((out->len && buf_putc(out, '\n') < 0) || put_str(out, t) < 0)
			return -E2BIG;
	}
	return 0;
}

/* The first metadata.instance.ips entry of family (4 or 6) whose "public"
 * is want_public (ignored for 6). */
static const json_t *ip_entry(const json_t *hw, int family, bool want_public)
{
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(instance(hw), "ips"), i, e)
	{
		if (json_integer_value(json_object_get(e, "family")) != family)
			continue;
		if (family == 6 || json_is_true(json_object_get(e, "public")) == want_public)
			return e;
	}
	return NULL;
}

static int leaf_public_ipv4(const json_t *hw, struct buf *out)
{
	return put_str(out, json_object_get(ip_entry(hw, 4, true), "address"));
}

static int leaf_local_ipv4(const json_t *hw, struct buf *out)
{
	const json_t *e = ip_entry(hw, 4, false);
	if (e)
		return put_str(out, json_object_get(e, "address"));
	return put_str(out, json_object_get(json_object_get(md_iface_dhcp(hw), "ip"), "address"));
}

static int leaf_public_ipv6(const json_t *hw, struct buf *out)
{
	return put_str(out, json_object_get(ip_entry(hw, 6, true), "address"));
}

static int leaf_empty(const json_t *hw, struct buf *out)
{
	(void)hw;
	(void)out;
	return 0;
}

#define OS_LEAF(fn, key)                                                                        \
	static int fn(const json_t *hw, struct buf *out)                                       \
	{                                                                                      \
		return put_str(out,                                                            \
			       json_object_get(json_object_get(instance(hw), "operating_system"), \
					       key));                                          \
	}
OS_LEAF(leaf_os_slug, "slug")
OS_LEAF(leaf_os_distro, "distro")
OS_LEAF(leaf_os_version, "version")
OS_LEAF(leaf_os_image_tag, "image_tag")

static int leaf_user_data(const json_t *hw, struct buf *out)
{
	return put_str(out, md_user_data(hw));
}

static int leaf_vendor_data(const json_t *hw, struct buf *out)
{
	return put_str(out, json_object_get(json_object_get(hw, "spec"), "vendorData"));
}

/* ---- the tree ---- */

typedef int (*leaf_fn)(const json_t *hw, struct buf *out);

static const struct node {
	const char *path; /* below the version */
	leaf_fn leaf;     /* NULL: a directory */
} tree[] = {
	{ "", NULL },
	{ "meta-data", NULL },
	{ "meta-data/instance-id", leaf_instance_id },
	{ "meta-data/hostname", leaf_hostname },
	{ "meta-data/local-hostname", leaf_hostname },
	{ "meta-data/iqn", leaf_empty },
	{ "meta-data/plan", leaf_plan },
	{ "meta-data/facility", leaf_facility },
	{ "meta-data/tags", leaf_tags },
	{ "meta-data/operating-system", NULL },
	{ "meta-data/operating-system/slug", leaf_os_slug },
	{ "meta-data/operating-system/distro", leaf_os_distro },
	{ "meta-data/operating-system/version", leaf_os_version },
	{ "meta-data/operating-system/image_tag", leaf_os_image_tag },
	{ "meta-data/operating-system/license_activation", NULL },
	{ "meta-data/operating-system/license_activation/state", leaf_empty },
	{ "meta-data/public-keys", NULL }, /* listed by public_keys() */
	{ "meta-data/public-ipv4", leaf_public_ipv4 },
	{ "meta-data/public-ipv6", leaf_public_ipv6 },
	{ "meta-data/local-ipv4", leaf_local_ipv4 },
	{ "user-data", leaf_user_data },
	{ "vendor-data", leaf_vendor_data },
};

/* The children of directory dir, one per line. */
static int list(const char *dir, struct buf *out)
{
	size_t dn = strlen(dir);
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		const char *p = tree[i].path;
		if (!p[0] || (dn && (strncmp(p, dir, dn) != 0 || p[dn] != '/')))
			continue;
		const char *name = dn ? p + dn + 1 : p;
		if (strchr(name, '/'))
			continue; /* a grandchild */
		if ((out->len && buf_putc(out, '\n') < 0) || buf_puts(out, name) < 0 ||
		    (!tree[i].leaf && buf_putc(out, '/') < 0))
			return -E2BIG;
	}
	return 0;
}

/* The ssh key's name: its comment (the third field), else "key-N". */
static void key_name(const char *key, size_t i, char *out, size_t outlen)
{
	const char *p = key;
	for (int field = 0; field < 2 && p; field++) {
		p = strchr(p, ' ');
		while (p && *p == ' ')
			p++;
	}
	size_t n = 0;
	while (p && p[n] && p[n] != '\n' && p[n] != '\r' && n + 1 < outlen)
		n++;
	if (p && n) {
		memcpy(out, p, n);
		out[n] = '\0';
		for (size_t k = 0; k < n; k++)
			if (out[k] == '=' || (unsigned char)out[k] < 0x20)
				out[k] = '_';
	} else {
		snprintf(out, outlen, "key-%zu", i);
	}
}

/* public-keys, public-keys/N, public-keys/N/openssh-key. */
static int public_keys(const json_t *hw, const char *rest, struct buf *out)
{
	const json_t *keys = json_object_get(instance(hw), "ssh_keys");
	size_t nkeys = json_is_array(keys) ? json_array_size(keys) : 0;
	if (nkeys > MD_MAX_KEYS)
		nkeys = MD_MAX_KEYS;
	if (!rest[0]) {
		for (size_t i = 0; i < nkeys; i++) {
			const char *k = json_string_value(json_array_get(keys, i));
			char name[128];
			key_name(k ? k : "", i, name, sizeof(name));
			if ((out->len && buf_putc(out, '\n') < 0) ||
			    buf_printf(out, "%zu=%s", i, name) < 0)
				return -E2BIG;
		}
		return 0;
	}
	size_t idx = 0, n = 0;
	while (rest[n] >= '0' && rest[n] <= '9' && n < 4)
		idx = idx * 10 + (size_t)(rest[n++] - '0');
	if (n == 0 || (n > 1 && rest[0] == '0') || idx >= nkeys)
		return -ENOENT;
	if (!rest[n])
		return buf_puts(out, "openssh-key") < 0 ? -E2BIG : 0;
	if (strcmp(rest + n, "/openssh-key") != 0)
		return -ENOENT;
	return put_str(out, json_array_get(keys, idx)) < 0 ? -E2BIG : 0;
}

int md_ec2(const json_t *hw, const char *path, struct buf *out)
{
	static const char pk[] = "meta-data/public-keys";
	if (strncmp(path, pk, sizeof(pk) - 1) == 0 &&
	    (path[sizeof(pk) - 1] == '\0' || path[sizeof(pk) - 1] == '/'))
		return public_keys(hw, path[sizeof(pk) - 1] ? path + sizeof(pk) : "", out);
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		if (strcmp(tree[i].path, path) != 0)
			continue;
		int e = tree[i].leaf ? tree[i].leaf(hw, out) : list(path, out);
		return e < 0 ? -E2BIG : 0;
	}
	return -ENOENT;
}
