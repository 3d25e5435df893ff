/* tink-check — a protobuf message of the worker protocol checked against
 * common/tink.proto before protobuf-c sees it.
 *
 * protobuf-c's unpack is lenient where the worker protocol wants to be
 * strict: it keeps unknown fields, allocates from lengths before it has
 * looked at them all, takes any bytes as a string and cuts a string at
 * its first NUL. So every message from the network is first walked here
 * with a byte cursor against a static copy of the schema (field number,
 * wire type, nested message), which refuses, with the field and the byte
 * offset: an unknown field (the protocol is fixed; an unknown field is a
 * client of another protocol), a wire type that is not the field's, a
 * varint over 10 bytes or past 64 bits, a length past the buffer, a string
 * that is not UTF-8 or holds a NUL, nesting deeper than TINK_MAX_DEPTH.
 * Only then does tink_decode() hand the bytes to protobuf-c.
 *
 * The tables below must say what common/tink.proto says;
 * tests/unit/check_grpc.c packs every field with protobuf-c and checks
 * each message against them. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "common/cursor.h"
#include "common/grpc.h"
#include "common/tink.pb-c.h"
#include "common/utf8.h"

/* Protobuf wire types (protobuf.dev, "Encoding"). */
enum pb_wire {
	PB_WIRE_VARINT = 0,
	PB_WIRE_I64 = 1,
	PB_WIRE_LEN = 2,
	PB_WIRE_SGROUP = 3,
	PB_WIRE_EGROUP = 4,
	PB_WIRE_I32 = 5,
};

#define PB_VARINT_MAX 10 /* bytes of a 64-bit varint */
/* A tag or a length is a 32-bit varint to protobuf-c, read in at most 5
 * bytes (protobuf-c.c, parse_tag_and_wiretype() and
 * scan_length_prefixed_data()): a longer one, even an overlong encoding
 * of a small number that protobuf accepts, is refused here so that what
 * passes the check always unpacks. */
#define PB_VARINT32_MAX 5
#define PB_FIELD_MAX 536870911u /* 2^29 - 1 */

enum tink_kind {
	TINK_VARINT, /* uint32, int32, int64, enum */
	TINK_STRING, /* string (singular or repeated) */
	TINK_MESSAGE,
};

struct tink_schema;

struct tink_field {
	uint32_t number;
	const char *name;
	enum tink_kind kind;
	const struct tink_schema *sub; /* TINK_MESSAGE */
};

struct tink_schema {
	const char *name;
	const struct tink_field *fields;
	size_t n_fields;
};

/* clang-format off */
#define S(n, nm) { n, nm, TINK_STRING, NULL }
#define V(n, nm) { n, nm, TINK_VARINT, NULL }
#define M(n, nm, sub) { n, nm, TINK_MESSAGE, &sub }
#define SCHEMA(var, full, ...)                                                      \
	static const struct tink_field var##_fields[] = { __VA_ARGS__ };            \
	static const struct tink_schema var = { full, var##_fields,                 \
						sizeof(var##_fields) / sizeof(var##_fields[0]) }

/* google/protobuf/timestamp.proto */
SCHEMA(tink_timestamp, "google.protobuf.Timestamp", V(1, "seconds"), V(2, "nanos"));

/* GetAction's request: the agent and what it found on the machine. */
SCHEMA(tink_processor, "proto.Processor", V(1, "id"), V(2, "cores"), V(3, "threads"),
       S(4, "vendor"), S(5, "model"), S(6, "capabilities"));
SCHEMA(tink_cpu, "proto.CPU", V(1, "total_cores"), V(2, "total_threads"),
       M(3, "processors", tink_processor));
SCHEMA(tink_memory, "proto.Memory", S(1, "total"), S(2, "usable"));
SCHEMA(tink_block, "proto.Block", S(1, "name"), S(2, "controller_type"), S(3, "drive_type"),
       S(4, "size"), S(5, "physical_block_size"), S(6, "vendor"), S(7, "model"), S(8, "wwn"),
       S(9, "serial_number"));
SCHEMA(tink_network, "proto.Network", S(1, "name"), S(2, "mac"), S(3, "speed"),
       S(4, "enabled_capabilities"));
SCHEMA(tink_pci, "proto.PCI", S(1, "vendor"), S(2, "product"), S(3, "class"), S(4, "driver"));
SCHEMA(tink_gpu, "proto.GPU", S(1, "vendor"), S(2, "product"), S(3, "class"), S(4, "driver"));
SCHEMA(tink_chassis, "proto.Chassis", S(1, "serial"), S(2, "vendor"));
SCHEMA(tink_bios, "proto.BIOS", S(1, "vendor"), S(2, "version"), S(3, "release_date"));
SCHEMA(tink_baseboard, "proto.Baseboard", S(1, "vendor"), S(2, "product"), S(3, "version"),
       S(4, "serial_number"));
SCHEMA(tink_product, "proto.Product", S(1, "name"), S(2, "vendor"), S(3, "serial_number"));
SCHEMA(tink_agent_attributes, "proto.AgentAttributes", M(1, "cpu", tink_cpu),
       M(2, "memory", tink_memory), M(3, "block", tink_block), M(4, "network", tink_network),
       M(5, "pci", tink_pci), M(6, "gpu", tink_gpu), M(7, "chassis", tink_chassis),
       M(8, "bios", tink_bios), M(9, "baseboard", tink_baseboard),
       M(10, "product", tink_product));
SCHEMA(tink_action_request, "proto.ActionRequest", S(1, "agent_id"),
       M(2, "agent_attributes", tink_agent_attributes));

/* GetAction's response. */
SCHEMA(tink_namespaces, "proto.Namespaces", S(1, "network"), S(2, "pid"));
SCHEMA(tink_action_response, "proto.ActionResponse", S(1, "workflow_id"), S(2, "task_id"),
       S(3, "agent_id"), S(4, "action_id"), S(5, "name"), S(6, "image"), V(7, "timeout"),
       S(8, "command"), S(9, "volumes"), S(10, "environment"), S(11, "pid"),
       M(12, "namespaces", tink_namespaces));

/* ReportActionStatus. */
SCHEMA(tink_action_message, "proto.ActionMessage", S(1, "message"));
SCHEMA(tink_action_status_request, "proto.ActionStatusRequest", S(1, "workflow_id"),
       S(2, "agent_id"), S(3, "task_id"), S(4, "action_id"), S(5, "action_name"),
       V(6, "action_state"), M(7, "execution_start", tink_timestamp),
       M(8, "execution_stop", tink_timestamp), S(9, "execution_duration"),
       M(10, "message", tink_action_message));
static const struct tink_schema tink_action_status_response = { "proto.ActionStatusResponse",
								 NULL, 0 };

#undef S
#undef V
#undef M
#undef SCHEMA
/* clang-format on */

static const struct {
	const struct tink_schema *schema;
	const ProtobufCMessageDescriptor *desc;
} tink_msgs[TINK_MSG_MAX] = {
	[TINK_MSG_ACTION_REQUEST] = { &tink_action_request, &proto__action_request__descriptor },
	[TINK_MSG_ACTION_RESPONSE] = { &tink_action_response, &proto__action_response__descriptor },
	[TINK_MSG_ACTION_STATUS_REQUEST] = { &tink_action_status_request,
					     &proto__action_status_request__descriptor },
	[TINK_MSG_ACTION_STATUS_RESPONSE] = { &tink_action_status_response,
					      &proto__action_status_response__descriptor },
};

/* The walk's state: the whole buffer (for offsets) and where to say why. */
struct tink_walk {
	const uint8_t *start;
	struct tink_check_error *err;
};

static __attribute__((format(printf, 3, 4))) int tink_fail(struct tink_walk *w, const uint8_t *at,
							   const char *fmt, ...)
{
	if (w->err) {
		va_list ap;
		w->err->offset = (size_t)(at - w->start);
		va_start(ap, fmt);
		vsnprintf(w->err->message, sizeof(w->err->message), fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* A varint of at most max bytes (PB_VARINT_MAX or PB_VARINT32_MAX) whose
 * value fits in 64 bits. 0, -EBADMSG when the buffer ends inside it,
 * -EOVERFLOW when it is too long. */
static int pb_varint(struct rd *r, unsigned max, uint64_t *ret)
{
	uint64_t v = 0;
	uint8_t b;

	for (unsigned i = 0; i < max; i++) {
		if (rd_u8(r, &b) < 0)
			return -EBADMSG;
		/* The 10th byte holds bit 63 only. */
		if (i == PB_VARINT_MAX - 1 && b > 1)
			return -EOVERFLOW;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EOVERFLOW;
}

static const char *pb_wire_name(unsigned wt)
{
	switch (wt) {
	case PB_WIRE_VARINT: return "varint";
	case PB_WIRE_I64: return "64-bit";
	case PB_WIRE_LEN: return "length-delimited";
	case PB_WIRE_SGROUP:
	case PB_WIRE_EGROUP: return "group";
	case PB_WIRE_I32: return "32-bit";
	default: return "invalid";
	}
}

static const struct tink_field *tink_field_find(const struct tink_schema *s, uint64_t number)
{
	for (size_t i = 0; i < s->n_fields; i++)
		if (s->fields[i].number == number)
			return &s->fields[i];
	return NULL;
}

static int tink_walk_msg(struct tink_walk *w, const struct tink_schema *s, struct rd r,
			 unsigned depth);

/* One field's value, its tag read and its wire type f's. */
static int tink_walk_value(struct tink_walk *w, const struct tink_field *f, struct rd *r,
			   unsigned depth)
{
	const uint8_t *vat = r->p, *data;
	uint64_t v;
	int e;

	if (f->kind == TINK_VARINT) {
		e = pb_varint(r, PB_VARINT_MAX, &v);
		if (e == -EOVERFLOW)
			return tink_fail(w, vat, "field %u (%s): varint over 64 bits", f->number,
					 f->name);
		if (e < 0)
			return tink_fail(w, vat, "field %u (%s): truncated varint", f->number,
					 f->name);
		return 0;
	}
	e = pb_varint(r, PB_VARINT32_MAX, &v);
	if (e == -EOVERFLOW)
		return tink_fail(w, vat, "field %u (%s): length varint over %d bytes", f->number,
				 f->name, PB_VARINT32_MAX);
	if (e < 0)
		return tink_fail(w, vat, "field %u (%s): truncated length", f->number, f->name);
	if (v > r->len)
		return tink_fail(w, vat, "field %u (%s): length %llu past the end (%zu left)",
				 f->number, f->name, (unsigned long long)v, r->len);
	const uint8_t *dat = r->p;
	(void)rd_bytes(r, (size_t)v, &data);
	if (f->kind == TINK_STRING) {
		/* protobuf-c gives a char *: a NUL would cut the string
		 * where the sender did not. */
		if (memchr(data, '\0', (size_t)v))
			return tink_fail(w, dat, "field %u (%s): NUL in a string", f->number,
					 f->name);
		if (!utf8_valid(data, (size_t)v))
			return tink_fail(w, dat, "field %u (%s): not UTF-8", f->number, f->name);
		return 0;
	}
	return tink_walk_msg(w, f->sub, rd_init(data, (size_t)v), depth + 1);
}

/* Message s in r, at nesting depth (1 for the top). */
static int tink_walk_msg(struct tink_walk *w, const struct tink_schema *s, struct rd r,
			 unsigned depth)
{
	if (depth > TINK_MAX_DEPTH)
		return tink_fail(w, r.p, "%s: nested deeper than %d", s->name, TINK_MAX_DEPTH);
	/* Each pass reads at least one byte: bounded by the length. */
	while (r.len > 0) {
		const uint8_t *at = r.p;
		uint64_t tag;
		int e = pb_varint(&r, PB_VARINT32_MAX, &tag);
		if (e == -EOVERFLOW)
			return tink_fail(w, at, "tag varint over %d bytes in %s", PB_VARINT32_MAX,
					 s->name);
		if (e < 0)
			return tink_fail(w, at, "truncated tag in %s", s->name);
		uint64_t number = tag >> 3;
		unsigned wt = (unsigned)(tag & 7);
		if (number == 0 || number > PB_FIELD_MAX)
			return tink_fail(w, at, "field %llu: invalid field number in %s",
					 (unsigned long long)number, s->name);
		const struct tink_field *f = tink_field_find(s, number);
		if (!f)
			return tink_fail(w, at, "field %llu: unknown field of %s",
					 (unsigned long long)number, s->name);
		unsigned want = f->kind == TINK_VARINT ? PB_WIRE_VARINT : PB_WIRE_LEN;
		if (wt != want)
			return tink_fail(w, at, "field %u (%s): wire type %u, expected %u (%s)",
					 f->number, f->name, wt, want, pb_wire_name(want));
		e = tink_walk_value(w, f, &r, depth);
		if (e < 0)
			return e;
	}
	return 0;
}

int tink_check(enum tink_msg m, const uint8_t *p, size_t n, struct tink_check_error *err)
{
	struct tink_walk w = { .start = p, .err = err };

	if ((unsigned)m >= TINK_MSG_MAX)
		return tink_fail(&w, p, "no such message");
	if (n > 0 && !p)
		return tink_fail(&w, p, "no buffer");
	return tink_walk_msg(&w, tink_msgs[m].schema, rd_init(p, n), 1);
}

int tink_decode(enum tink_msg m, const uint8_t *p, size_t n, struct ProtobufCMessage **ret,
		struct tink_check_error *err)
{
	static const uint8_t empty[1];
	int e = tink_check(m, p, n, err);
	if (e < 0)
		return e;
	/* protobuf-c wants a pointer even for an empty message. */
	ProtobufCMessage *msg =
		protobuf_c_message_unpack(tink_msgs[m].desc, NULL, n, n ? p : empty);
	if (!msg)
		return -ENOMEM;
	*ret = msg;
	return 0;
}
