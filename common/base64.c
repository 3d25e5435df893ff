/* base64 — RFC 4648 standard base64 decoding.
 *
 * DESIGN: one pass over the text, four sextets to three bytes, the output
 * bounded by cap before each group is written; only line breaks may be
 * skipped (Go's StdEncoding, which Kubernetes decodes Secret data and
 * kubeconfig -data fields with, skips them), and nothing but line breaks
 * may follow the padding. */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "common/base64.h"

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

int base64_decode(const char *in, size_t len, char *out, size_t cap, size_t *ret_len)
{
	uint32_t quad = 0;
	size_t n = 0, got = 0, pad = 0;

	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		int v;
		if (c == '\r' || c == '\n')
			continue; /* Go's StdEncoding skips them too */
		if (c == '=') {
			if (got < 2)
				return -EINVAL;
			pad++;
			got++;
			quad <<= 6;
			if (got == 4)
				goto group;
			continue;
		}
		if (pad || (v = b64_value(c)) < 0)
			return -EINVAL;
		quad = quad << 6 | (uint32_t)v;
		if (++got < 4)
			continue;
group:
		if (n + 3 - pad > cap)
			return -E2BIG;
		out[n++] = (char)(quad >> 16);
		if (pad < 2)
			out[n++] = (char)(quad >> 8);
		if (pad < 1)
			out[n++] = (char)quad;
		got = 0;
		quad = 0;
		if (pad) {
			/* only line breaks may follow the padding */
			for (size_t j = i + 1; j < len; j++)
				if (in[j] != '\r' && in[j] != '\n')
					return -EINVAL;
			break;
		}
	}
	if (got)
		return -EINVAL;
	*ret_len = n;
	return 0;
}
