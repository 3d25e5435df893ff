/* creds — a BMC's credentials from the Secret a Machine names.
 *
 * DESIGN: Rufio reads keys `username` and `password` of the Secret in
 * spec.connection.authSecretRef. The store keeps a Secret as the API
 * server does, its values base64 in .data; one written with .stringData
 * (as people write them for kubectl) is read from there when .data lacks
 * the key. The Secret is read for each call to the BMC, not cached, so an
 * edited Secret counts at the next call; the password goes straight into
 * the endpoint the engine copies, and the decoding buffer is wiped. A
 * missing Secret or key is an error that names exactly what is missing,
 * never a value. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bmc/bmc-internal.h"
#include "store/store.h"

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int bmc_base64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
	size_t n = 0;
	if (len % 4)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			if (in[i + j] == '=' && i + 4 == len && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			if (pad || (v[j] = b64_value(in[i + j])) < 0)
				return -EINVAL;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		uint8_t b[3] = { (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w };
		if (n + 3 - (size_t)pad > cap)
			return -ENOSPC;
		memcpy(out + n, b, 3 - (size_t)pad);
		n += 3 - (size_t)pad;
	}
	return (int)n;
}

/* Key key of secret into out (cap bytes, NUL-terminated). */
static int secret_key(const json_t *secret, const char *ns, const char *name, const char *key,
		      char *out, size_t cap, char *err, size_t errlen)
{
	const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), key));
	const char *plain =
		json_string_value(json_object_get(json_object_get(secret, "stringData"), key));
	uint8_t buf[BMC_PASSWORD_MAX + 4];
	int n;

	if (b64) {
		n = bmc_base64_decode(b64, strlen(b64), buf, sizeof(buf));
		if (n == -ENOSPC || (n >= 0 && (size_t)n >= cap)) {
			snprintf(err, errlen, "secret %s/%s: key \"%s\" is longer than %zu bytes",
				 ns, name, key, cap - 1);
			n = -EINVAL;
		} else if (n < 0) {
			snprintf(err, errlen, "secret %s/%s: key \"%s\" is not base64", ns, name,
				 key);
		} else if (memchr(buf, 0, (size_t)n)) {
			snprintf(err, errlen, "secret %s/%s: key \"%s\" holds a NUL byte", ns, name,
				 key);
			n = -EINVAL;
		} else {
			memcpy(out, buf, (size_t)n);
			out[n] = 0;
		}
		explicit_bzero(buf, sizeof(buf));
		return n < 0 ? n : 0;
	}
	if (plain) {
		if (strlen(plain) >= cap) {
			snprintf(err, errlen, "secret %s/%s: key \"%s\" is longer than %zu bytes",
				 ns, name, key, cap - 1);
			return -EINVAL;
		}
		memcpy(out, plain, strlen(plain) + 1);
		return 0;
	}
	snprintf(err, errlen, "secret %s/%s has no key \"%s\"", ns, name, key);
	return -ENOENT;
}

int bmc_creds_read(struct store_reader *r, const char *ns, const char *name,
		   struct bmc_endpoint *ep, char *err, size_t errlen)
{
	json_t *secret = NULL;
	int e = store_get(r, STORE_KIND_SECRET, ns, name, &secret);
	if (e == -ENOENT) {
		snprintf(err, errlen, "secret %s/%s not found", ns, name);
		return e;
	}
	if (e < 0) {
		snprintf(err, errlen, "secret %s/%s: cannot read it: %s", ns, name, strerror(-e));
		return e;
	}
	e = secret_key(secret, ns, name, "username", ep->user, sizeof(ep->user), err, errlen);
	if (e == 0)
		e = secret_key(secret, ns, name, "password", ep->password, sizeof(ep->password),
			       err, errlen);
	if (e < 0)
		explicit_bzero(ep->password, sizeof(ep->password));
	json_decref(secret);
	return e;
}
