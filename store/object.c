/* object — pure helpers on objects as JSON: the Hardware index keys
 * (MACs, IPs, system UUID) and their normal forms, RFC 7386 merge patch,
 * and random UUIDs for metadata.uid.
 *
 * DESIGN: nothing here touches SQLite or a lock; the writer (ops.c) and
 * the migration that rebuilds the indexes (schema.c) both call
 * store_hw_keys_get(), so an index row always means the same thing. The
 * normal forms are what lookups compare: a MAC in lowercase with colons,
 * an IP as inet_ntop() prints it (an IPv4-mapped IPv6 address as the
 * IPv4 address it maps), a UUID in lowercase.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "common/mac.h"
#include "common/num.h"
#include "store/store-internal.h"

_Static_assert(STORE_KEY_LEN >= MAC_MAX_LEN * 3, "a normal MAC fits a key");

int store_norm_mac(const char *in, char out[STORE_KEY_LEN])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[MAC_MAX_LEN];
	int n;

	if (!in)
		return -EINVAL;
	n = mac_parse_hw(in, strlen(in), MAC_COLON | MAC_DASH, b);
	if (n < 0)
		return n;
	for (size_t k = 0; k < (size_t)n; k++) {
		out[3 * k] = hex[b[k] >> 4];
		out[3 * k + 1] = hex[b[k] & 15];
		out[3 * k + 2] = k + 1 < (size_t)n ? ':' : '\0';
	}
	return 0;
}

int store_norm_ip(const char *in, char out[STORE_KEY_LEN])
{
	struct in_addr a4;
	struct in6_addr a6;
	if (!in)
		return -EINVAL;
	if (inet_pton(AF_INET, in, &a4) == 1)
		return inet_ntop(AF_INET, &a4, out, STORE_KEY_LEN) ? 0 : -EINVAL;
	if (inet_pton(AF_INET6, in, &a6) != 1)
		return -EINVAL;
	/* RFC 4291 §2.5.5.2: ::ffff:a.b.c.d is the IPv4 address a.b.c.d, and
	 * must be the same index key, or two Hardware could hold one IPv4. */
	if (IN6_IS_ADDR_V4MAPPED(&a6))
		return inet_ntop(AF_INET, &a6.s6_addr[12], out, STORE_KEY_LEN) ? 0 : -EINVAL;
	return inet_ntop(AF_INET6, &a6, out, STORE_KEY_LEN) ? 0 : -EINVAL;
}

int store_norm_uuid(const char *in, char out[STORE_KEY_LEN])
{
	if (!in || strlen(in) != 36)
		return -EINVAL;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? in[i] != '-' : num_hex_digit(in[i]) < 0)
			return -EINVAL;
		out[i] = (in[i] >= 'A' && in[i] <= 'F') ? (char)(in[i] - 'A' + 'a') : in[i];
	}
	out[36] = '\0';
	return 0;
}

int store_uuid_v4(char out[37])
{
	uint8_t b[16];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t r = getrandom(b + got, sizeof(b) - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* RFC 9562 §5.4: version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* variant 10 */
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	return 0;
}

const char *store_meta_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* Adds key (index ix, value v, field path) unless another field of the
 * same object already holds v. */
static int keys_add(struct store_hw_keys *ks, enum store_index ix, const char *v, const char *field,
		    char *err, size_t errlen)
{
	for (size_t i = 0; i < ks->n; i++) {
		if (ks->k[i].index == ix && strcmp(ks->k[i].value, v) == 0) {
			snprintf(err, errlen,
				 "%s \"%s\" is already used by %s of the same hardware", field, v,
				 ks->k[i].field);
			return -EINVAL;
		}
	}
	if (ks->n >= STORE_MAX_HW_KEYS) {
		snprintf(err, errlen, "more than %d MAC/IP addresses", STORE_MAX_HW_KEYS);
		return -EINVAL;
	}
	struct store_hw_key *k = &ks->k[ks->n++];
	k->index = ix;
	snprintf(k->value, sizeof(k->value), "%s", v);
	snprintf(k->field, sizeof(k->field), "%s", field);
	return 0;
}

static int uuid_key(const json_t *obj, struct store_hw_keys *ks, char *err, size_t errlen)
{
	char norm[STORE_KEY_LEN];
	const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
	const char *a = json_string_value(json_object_get(ann, STORE_ANNOTATION_SYSTEM_UUID));
	if (a) {
		if (store_norm_uuid(a, norm) < 0) {
			snprintf(err, errlen,
				 "metadata.annotations[\"%s\"]: \"%.64s\" is not a UUID",
				 STORE_ANNOTATION_SYSTEM_UUID, a);
			return -EINVAL;
		}
		return keys_add(ks, STORE_INDEX_UUID, norm,
				"metadata.annotations[\"" STORE_ANNOTATION_SYSTEM_UUID "\"]", err,
				errlen);
	}
	const json_t *inst = json_object_get(
		json_object_get(json_object_get(obj, "spec"), "metadata"), "instance");
	const char *id = json_string_value(json_object_get(inst, "id"));
	/* instance.id is free text in Tinkerbell (often a MAC): only a
	 * UUID-shaped one is a system UUID. */
	if (id && store_norm_uuid(id, norm) == 0)
		return keys_add(ks, STORE_INDEX_UUID, norm, "spec.metadata.instance.id", err,
				errlen);
	return 0;
}

int store_hw_keys_get(const json_t *obj, struct store_hw_keys *ret, char *err, size_t errlen)
{
	char norm[STORE_KEY_LEN], field[STORE_MAX_FIELD];
	const json_t *ifs = json_object_get(json_object_get(obj, "spec"), "interfaces");
	size_t i;
	const json_t *iface;
	int e;

	ret->n = 0;
	json_array_foreach(ifs, i, iface)
	{
		const json_t *dhcp = json_object_get(iface, "dhcp");
		const char *mac = json_string_value(json_object_get(dhcp, "mac"));
		const char *ip =
			json_string_value(json_object_get(json_object_get(dhcp, "ip"), "address"));
		if (mac && *mac) {
			snprintf(field, sizeof(field), "spec.interfaces[%zu].dhcp.mac", i);
			if (store_norm_mac(mac, norm) < 0) {
				snprintf(err, errlen, "%s: \"%.64s\" is not a MAC address", field,
					 mac);
				return -EINVAL;
			}
			e = keys_add(ret, STORE_INDEX_MAC, norm, field, err, errlen);
			if (e < 0)
				return e;
		}
		if (ip && *ip) {
			snprintf(field, sizeof(field), "spec.interfaces[%zu].dhcp.ip.address", i);
			if (store_norm_ip(ip, norm) < 0) {
				snprintf(err, errlen, "%s: \"%.64s\" is not an IP address", field,
					 ip);
				return -EINVAL;
			}
			e = keys_add(ret, STORE_INDEX_IP, norm, field, err, errlen);
			if (e < 0)
				return e;
		}
	}
	return uuid_key(obj, ret, err, errlen);
}

static json_t *merge(const json_t *target, const json_t *patch, int depth)
{
	if (depth > STORE_MAX_PATCH_DEPTH)
		return NULL;
	if (!json_is_object(patch))
		return json_deep_copy(patch);
	json_t *out = json_is_object(target) ? json_deep_copy(target) : json_object();
	if (!out)
		return NULL;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)patch, k, v)
	{
		if (json_is_null(v)) {
			json_object_del(out, k);
			continue;
		}
		json_t *m = merge(json_object_get(out, k), v, depth + 1);
		if (!m || json_object_set_new(out, k, m) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

json_t *store_merge_patch(const json_t *target, const json_t *patch)
{
	return merge(target, patch, 0);
}
