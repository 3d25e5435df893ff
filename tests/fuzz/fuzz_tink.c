/* fuzz_tink — the body of a gRPC message of the worker protocol (untrusted:
 * any client of port 42113 sends one) through tink_decode() as each of the
 * four messages, and the same bytes through the header helpers of
 * common/grpc.h. Properties: what tink_check() accepts, protobuf-c unpacks
 * (the check is never laxer than protobuf-c: a -ENOMEM here is a schema
 * the check let through); what was decoded packs again into bytes that
 * pass the check, decode, and pack to the same bytes; the header helpers
 * never write past their output and stay within their contracts. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "common/grpc.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_TINK_MAX (64 * 1024)

static void round_trip(enum tink_msg t, const uint8_t *data, size_t size)
{
	struct tink_check_error err;
	ProtobufCMessage *m = NULL, *m2 = NULL;
	int e = tink_decode(t, data, size, &m, &err);
	if (e == -EBADMSG) {
		if (err.offset > size || !memchr(err.message, '\0', sizeof(err.message)))
			abort();
		return;
	}
	if (e < 0)
		abort();
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
	if (!a || !b || protobuf_c_message_pack(m, a) != n)
		abort();
	if (tink_decode(t, a, n, &m2, NULL) < 0)
		abort();
	if (protobuf_c_message_get_packed_size(m2) != n || protobuf_c_message_pack(m2, b) != n ||
	    memcmp(a, b, n) != 0)
		abort();
	protobuf_c_message_free_unpacked(m2, NULL);
	protobuf_c_message_free_unpacked(m, NULL);
	free(a);
	free(b);
}

static void headers(const uint8_t *data, size_t size)
{
	char out[256];
	uint64_t ms;
	bool comp;
	size_t len;

	int e = grpc_prefix_parse(data, size, 1024, &comp, &len);
	if (e == 0 && len > 1024)
		abort();
	if (e == 0 && size < GRPC_PREFIX_LEN)
		abort();
	if (grpc_timeout_parse((const char *)data, size, &ms) == 0) {
		char f[GRPC_TIMEOUT_MAX];
		uint64_t back;
		size_t fl = grpc_timeout_format(ms, f);
		if (fl >= GRPC_TIMEOUT_MAX || grpc_timeout_parse(f, fl, &back) < 0 || back < ms)
			abort();
	}
	size_t dn = grpc_message_decode((const char *)data, size, out, sizeof(out));
	if (dn >= sizeof(out) || out[dn] != '\0')
		abort();
	/* out may hold NULs: encode what is before the first. */
	char enc[sizeof(out) * 3];
	size_t en = grpc_message_encode(out, enc, sizeof(enc));
	if (en >= sizeof(enc) || enc[en] != '\0')
		abort();
	for (size_t i = 0; i < en; i++)
		if (enc[i] < 0x20 || enc[i] > 0x7e)
			abort();
	char dec[sizeof(out)];
	size_t back = grpc_message_decode(enc, en, dec, sizeof(dec));
	if (back != strlen(out) || memcmp(dec, out, back) != 0)
		abort();
	(void)grpc_content_type_ok((const char *)data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_TINK_MAX)
		return 0;
	for (int t = 0; t < TINK_MSG_MAX; t++)
		round_trip(t, data, size);
	headers(data, size);
	return 0;
}
