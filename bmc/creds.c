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
#include "common/base64.h"
#include "store/store.h"

/* Key key of secret into out (cap bytes, NUL-terminated). */
static int secret_key(const json_t *secret, const char *ns, const char *name, const char *key,
		      char *out, size_t cap, char *err, size_t errlen)
{
	const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), key));
	const char *plain =
		json_string_value(json_object_get(json_object_get(secret, "stringData"), key));
	char buf[BMC_PASSWORD_MAX + 4];
	size_t len = 0;
	int n;

	if (b64) {
		n = base64_decode(b64, strlen(b64), buf, sizeof(buf), &len);
		if (n == 0)
			n = (int)len;
		if (n == -E2BIG || (n >= 0 && (size_t)n >= cap)) {
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
