/* grpc — the small pieces of the gRPC wire that are not HTTP/2 and not
 * protobuf: status code names, the 5-byte length prefix of each message,
 * the grpc-timeout header and grpc-message's percent-encoding (gRPC's
 * doc/PROTOCOL-HTTP2.md). Everything here is pure and reads untrusted
 * bytes through the cursor (common/cursor.h), so the HTTP/2 layers of the
 * server and of ironbell-agent, their unit tests and their fuzzers share
 * one bounds-checked reading of each header. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/cursor.h"
#include "common/grpc.h"

/* grpc-timeout: TimeoutValue is "positive integer as ASCII string of at
 * most 8 digits" (PROTOCOL-HTTP2.md, "Requests"). */
#define GRPC_TIMEOUT_DIGITS 8
#define GRPC_TIMEOUT_VALUE_MAX 99999999ull

static const char *const grpc_code_names[GRPC_CODE_MAX] = {
	[GRPC_OK] = "OK",
	[GRPC_CANCELLED] = "CANCELLED",
	[GRPC_UNKNOWN] = "UNKNOWN",
	[GRPC_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
	[GRPC_DEADLINE_EXCEEDED] = "DEADLINE_EXCEEDED",
	[GRPC_NOT_FOUND] = "NOT_FOUND",
	[GRPC_ALREADY_EXISTS] = "ALREADY_EXISTS",
	[GRPC_PERMISSION_DENIED] = "PERMISSION_DENIED",
	[GRPC_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED",
	[GRPC_FAILED_PRECONDITION] = "FAILED_PRECONDITION",
	[GRPC_ABORTED] = "ABORTED",
	[GRPC_OUT_OF_RANGE] = "OUT_OF_RANGE",
	[GRPC_UNIMPLEMENTED] = "UNIMPLEMENTED",
	[GRPC_INTERNAL] = "INTERNAL",
	[GRPC_UNAVAILABLE] = "UNAVAILABLE",
	[GRPC_DATA_LOSS] = "DATA_LOSS",
	[GRPC_UNAUTHENTICATED] = "UNAUTHENTICATED",
};

const char *grpc_code_name(int code)
{
	if (code < 0 || code >= GRPC_CODE_MAX)
		return "UNKNOWN";
	return grpc_code_names[code];
}

int grpc_prefix_parse(const uint8_t *p, size_t n, size_t max, bool *compressed, size_t *len)
{
	struct rd r = rd_init(p, n);
	uint8_t flag;
	uint32_t l;

	if (rd_u8(&r, &flag) < 0 || rd_be32(&r, &l) < 0)
		return -EAGAIN;
	/* Compressed-Flag is 0 or 1; the other values are not defined. */
	if (flag > 1)
		return -EPROTO;
	if ((uint64_t)l > (uint64_t)max)
		return -EMSGSIZE;
	*compressed = flag == 1;
	*len = l;
	return 0;
}

void grpc_prefix_write(uint8_t out[GRPC_PREFIX_LEN], uint32_t len)
{
	out[0] = 0;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
}

/* v in unit u, in milliseconds rounded up. v has at most 8 digits, so
 * the hours' product (< 3.6e14) never overflows. */
static uint64_t grpc_timeout_ms(uint64_t v, uint8_t u)
{
	switch (u) {
	case 'H': return v * 3600000u;
	case 'M': return v * 60000u;
	case 'S': return v * 1000u;
	case 'm': return v;
	case 'u': return (v + 999u) / 1000u;
	case 'n': return (v + 999999u) / 1000000u;
	default: return UINT64_MAX;
	}
}

int grpc_timeout_parse(const char *v, size_t n, uint64_t *ret_ms)
{
	struct rd r = rd_init(v, n);
	uint64_t val = 0;
	size_t digits = 0;
	uint8_t c;

	/* The last byte is the unit; everything before it is digits. */
	if (n < 2 || n > GRPC_TIMEOUT_DIGITS + 1)
		return -EINVAL;
	while (r.len > 1) {
		if (rd_u8(&r, &c) < 0 || c < '0' || c > '9')
			return -EINVAL;
		val = val * 10 + (uint64_t)(c - '0');
		digits++;
	}
	if (digits == 0 || rd_u8(&r, &c) < 0)
		return -EINVAL;
	uint64_t ms = grpc_timeout_ms(val, c);
	if (ms == UINT64_MAX)
		return -EINVAL;
	*ret_ms = ms;
	return 0;
}

size_t grpc_timeout_format(uint64_t ms, char out[GRPC_TIMEOUT_MAX])
{
	/* The finest unit whose value fits in 8 digits, rounded up so that
	 * the peer never sees a shorter deadline than ours. */
	static const struct {
		uint64_t div;
		char unit;
	} units[] = { { 1, 'm' }, { 1000, 'S' }, { 60000, 'M' }, { 3600000, 'H' } };
	uint64_t v = GRPC_TIMEOUT_VALUE_MAX;
	char unit = 'H';

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t q = ms / units[i].div + (ms % units[i].div != 0);
		if (q <= GRPC_TIMEOUT_VALUE_MAX) {
			v = q;
			unit = units[i].unit;
			break;
		}
	}
	int len = snprintf(out, GRPC_TIMEOUT_MAX, "%llu%c", (unsigned long long)v, unit);
	return len < 0 ? 0 : (size_t)len;
}

static const char grpc_hex[] = "0123456789ABCDEF";

size_t grpc_message_encode(const char *msg, char *out, size_t outlen)
{
	size_t o = 0;

	if (outlen == 0)
		return 0;
	for (const unsigned char *s = (const unsigned char *)msg; *s; s++) {
		/* Percent-Byte-Unencoded is 0x20..0x7E except '%'
		 * (PROTOCOL-HTTP2.md, "Responses"). */
		if (*s >= 0x20 && *s <= 0x7e && *s != '%') {
			if (o + 1 >= outlen)
				break;
			out[o++] = (char)*s;
		} else {
			if (o + 3 >= outlen)
				break;
			out[o++] = '%';
			out[o++] = grpc_hex[*s >> 4];
			out[o++] = grpc_hex[*s & 0xf];
		}
	}
	out[o] = '\0';
	return o;
}

static int grpc_hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t grpc_message_decode(const char *v, size_t n, char *out, size_t outlen)
{
	struct rd r = rd_init(v, n);
	size_t o = 0;
	uint8_t c;

	if (outlen == 0)
		return 0;
	while (o + 1 < outlen && rd_u8(&r, &c) == 0) {
		/* "%XX" is one byte; a '%' not followed by two hex digits
		 * stays as it is ("when decoding invalid values,
		 * implementations MUST NOT error or throw away the
		 * message"). */
		if (c == '%' && r.len >= 2) {
			int hi = grpc_hexval(r.p[0]), lo = grpc_hexval(r.p[1]);
			if (hi >= 0 && lo >= 0) {
				c = (uint8_t)(hi << 4 | lo);
				r.p += 2;
				r.len -= 2;
			}
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return o;
}

bool grpc_content_type_ok(const char *v, size_t n)
{
	static const char base[] = "application/grpc";
	static const char proto[] = "+proto";
	const size_t bl = sizeof(base) - 1, pl = sizeof(proto) - 1;

	/* Media types compare without case (RFC 9110 §8.3.1). */
	if (n < bl || strncasecmp(v, base, bl) != 0)
		return false;
	v += bl;
	n -= bl;
	if (n >= pl && strncasecmp(v, proto, pl) == 0) {
		v += pl;
		n -= pl;
	}
	/* Nothing else, or parameters ("; charset=..."), after optional
	 * white space: "+json" and other codecs are not ours. */
	while (n > 0 && (v[0] == ' ' || v[0] == '\t')) {
		v++;
		n--;
	}
	return n == 0 || v[0] == ';';
}
