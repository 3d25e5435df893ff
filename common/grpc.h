/* grpc — the gRPC wire as the worker protocol uses it, shared by the
 * server (workflow/) and ironbell-agent (agent/): status codes, the
 * length-prefixed message, grpc-timeout, grpc-message escaping, and the
 * check of a protobuf message against common/tink.proto's schema before
 * protobuf-c decodes it. Pure: no I/O, no allocation except where said.
 *
 * The messages themselves are protobuf-c's, generated at build time from
 * common/tink.proto (package "proto": Proto__ActionRequest,
 * Proto__ActionResponse, Proto__ActionStatusRequest,
 * Proto__ActionStatusResponse; header "common/tink.pb-c.h"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gRPC status codes (grpc/doc/statuscodes.md). */
enum grpc_code {
	GRPC_OK = 0,
	GRPC_CANCELLED = 1,
	GRPC_UNKNOWN = 2,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_ALREADY_EXISTS = 6,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_FAILED_PRECONDITION = 9,
	GRPC_ABORTED = 10,
	GRPC_OUT_OF_RANGE = 11,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAVAILABLE = 14,
	GRPC_DATA_LOSS = 15,
	GRPC_UNAUTHENTICATED = 16,
	GRPC_CODE_MAX
};

/* "NOT_FOUND", ...; "UNKNOWN" for a number out of range. */
const char *grpc_code_name(int code);

/* The service and its methods' :path values. */
#define GRPC_PATH_GET_ACTION "/proto.WorkflowService/GetAction"
#define GRPC_PATH_REPORT_ACTION_STATUS "/proto.WorkflowService/ReportActionStatus"

/* ---- the length-prefixed message (gRPC over HTTP/2, "Length-Prefixed-Message") ---- */

#define GRPC_PREFIX_LEN 5

/* Reads the 5-byte prefix at p (n bytes available). Returns 0 with the
 * compressed flag and the message length (which may exceed what is
 * available yet), -EAGAIN when fewer than 5 bytes are there, -EPROTO when
 * the flag byte is neither 0 nor 1, -EMSGSIZE when the length is over max
 * (the caller answers RESOURCE_EXHAUSTED). */
int grpc_prefix_parse(const uint8_t *p, size_t n, size_t max, bool *compressed, size_t *len);
/* Writes the prefix of an uncompressed message of len bytes. */
void grpc_prefix_write(uint8_t out[GRPC_PREFIX_LEN], uint32_t len);

/* ---- headers ---- */

/* grpc-timeout: 1 to 8 ASCII digits and a unit H M S m u n. 0 and the
 * timeout in milliseconds (rounded up; a nonzero value never becomes 0),
 * or -EINVAL. */
int grpc_timeout_parse(const char *v, size_t n, uint64_t *ret_ms);
/* Formats ms as a grpc-timeout value ("100m", or in S/M/H when the
 * digits would not fit); out has room for GRPC_TIMEOUT_MAX bytes with
 * the NUL. Returns the length. */
#define GRPC_TIMEOUT_MAX 10
size_t grpc_timeout_format(uint64_t ms, char out[GRPC_TIMEOUT_MAX]);

/* grpc-message: percent-encodes msg (bytes outside 0x20..0x7e, and '%')
 * into out (outlen bytes, NUL-terminated, cut between escapes when it
 * does not fit). Returns the length written. */
size_t grpc_message_encode(const char *msg, char *out, size_t outlen);
/* Decodes a grpc-message value of n bytes into out (NUL-terminated, cut
 * to outlen); a malformed escape is kept as it is, as gRPC says. Returns
 * the length written. */
size_t grpc_message_decode(const char *v, size_t n, char *out, size_t outlen);

/* content-type is "application/grpc" or "application/grpc+..." (proto). */
bool grpc_content_type_ok(const char *v, size_t n);

/* ---- the protobuf check (common/tink-check.c) ---- */

enum tink_msg {
	TINK_MSG_ACTION_REQUEST,
	TINK_MSG_ACTION_RESPONSE,
	TINK_MSG_ACTION_STATUS_REQUEST,
	TINK_MSG_ACTION_STATUS_RESPONSE,
	TINK_MSG_MAX
};

/* Where a message is malformed: the byte offset and why, e.g.
 * "field 3 (task_id): wire type 0, expected 2 (length-delimited)",
 * "field 17: unknown field of proto.ActionStatusRequest",
 * "field 2 (agent_id): not UTF-8". */
struct tink_check_error {
	size_t offset;
	char message[160];
};

/* Nesting the check follows (AgentAttributes is 3 deep). */
#define TINK_MAX_DEPTH 8

/* Walks message m (n bytes at p) with a byte cursor against the schema of
 * common/tink.proto, nested messages included: every tag's field number
 * known to its message and its wire type the field's, varints at most 10
 * bytes, lengths within the buffer, strings valid UTF-8, depth at most
 * TINK_MAX_DEPTH. Unknown fields are refused (the worker protocol is
 * fixed; an unknown field means a client of another protocol). 0, or
 * -EBADMSG with err filled (err may be NULL). */
int tink_check(enum tink_msg m, const uint8_t *p, size_t n, struct tink_check_error *err);

/* tink_check() then protobuf-c's unpack. *ret is the message (free it
 * with protobuf_c_message_free_unpacked(ret, NULL)). 0, -EBADMSG (err
 * says why) or -ENOMEM. */
struct ProtobufCMessage;
int tink_decode(enum tink_msg m, const uint8_t *p, size_t n, struct ProtobufCMessage **ret,
		struct tink_check_error *err);
