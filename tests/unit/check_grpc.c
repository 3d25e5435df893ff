/* check_grpc — unit tests for the gRPC wire helpers (common/grpc.c) and
 * the protobuf check of the worker protocol (common/tink-check.c): the
 * length prefix, grpc-timeout, grpc-message, content-type, each with its
 * malformed input; a table of malformed messages refused with the field
 * and the offset; and the pin of the wire: every field of every message of
 * common/tink.proto set, packed by protobuf-c, and its tag bytes compared
 * with bytes written here by hand from Tinkerbell's pkg/proto, so a
 * changed field number or type in tink.proto fails here. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "common/grpc.h"
#include "common/tink.pb-c.h"
#include "tests/unit/unit.h"

#define BUF_MAX 4096

/* ---- status codes and the prefix ---- */

START_TEST(test_code_name)
{
	ck_assert_str_eq(grpc_code_name(GRPC_OK), "OK");
	ck_assert_str_eq(grpc_code_name(GRPC_INVALID_ARGUMENT), "INVALID_ARGUMENT");
	ck_assert_str_eq(grpc_code_name(GRPC_NOT_FOUND), "NOT_FOUND");
	ck_assert_str_eq(grpc_code_name(GRPC_PERMISSION_DENIED), "PERMISSION_DENIED");
	ck_assert_str_eq(grpc_code_name(GRPC_FAILED_PRECONDITION), "FAILED_PRECONDITION");
	ck_assert_str_eq(grpc_code_name(GRPC_UNAUTHENTICATED), "UNAUTHENTICATED");
	ck_assert_str_eq(grpc_code_name(-1), "UNKNOWN");
	ck_assert_str_eq(grpc_code_name(GRPC_CODE_MAX), "UNKNOWN");
	ck_assert_str_eq(grpc_code_name(1000), "UNKNOWN");
	for (int c = 0; c < GRPC_CODE_MAX; c++)
		ck_assert_ptr_nonnull(grpc_code_name(c));
}
END_TEST

START_TEST(test_prefix)
{
	uint8_t p[GRPC_PREFIX_LEN + 1];
	bool comp = true;
	size_t len = 0;

	grpc_prefix_write(p, 0x01020304);
	ck_assert_mem_eq(p, "\x00\x01\x02\x03\x04", 5);
	ck_assert_int_eq(grpc_prefix_parse(p, 5, 0x01020304, &comp, &len), 0);
	ck_assert(!comp);
	ck_assert_uint_eq(len, 0x01020304);
	/* Over the cap by one. */
	comp = true;
	len = 7;
	ck_assert_int_eq(grpc_prefix_parse(p, 5, 0x01020303, &comp, &len), -EMSGSIZE);
	ck_assert(comp);
	ck_assert_uint_eq(len, 7);
	/* Short: every length under 5. */
	for (size_t n = 0; n < GRPC_PREFIX_LEN; n++)
		ck_assert_int_eq(grpc_prefix_parse(p, n, SIZE_MAX, &comp, &len), -EAGAIN);
	/* The compressed flag, and a flag that is neither. */
	memcpy(p, "\x01\x00\x00\x00\x00", 5);
	ck_assert_int_eq(grpc_prefix_parse(p, 5, 16, &comp, &len), 0);
	ck_assert(comp);
	ck_assert_uint_eq(len, 0);
	p[0] = 2;
	ck_assert_int_eq(grpc_prefix_parse(p, 5, 16, &comp, &len), -EPROTO);
	p[0] = 0x80;
	ck_assert_int_eq(grpc_prefix_parse(p, 5, 16, &comp, &len), -EPROTO);
	/* The length may exceed what is there yet. */
	memcpy(p, "\x00\x00\x00\x00\x10\xaa", 6);
	ck_assert_int_eq(grpc_prefix_parse(p, 6, 16, &comp, &len), 0);
	ck_assert_uint_eq(len, 16);
	/* The largest length. */
	grpc_prefix_write(p, UINT32_MAX);
	ck_assert_int_eq(grpc_prefix_parse(p, 5, UINT32_MAX, &comp, &len), 0);
	ck_assert_uint_eq(len, UINT32_MAX);
	ck_assert_int_eq(grpc_prefix_parse(p, 5, 4 << 20, &comp, &len), -EMSGSIZE);
}
END_TEST

/* ---- grpc-timeout ---- */

static const struct {
	const char *v;
	uint64_t ms;
} timeout_good[] = {
	{ "1m", 1 },
	{ "100m", 100 },
	{ "0m", 0 },
	{ "1S", 1000 },
	{ "2M", 120000 },
	{ "1H", 3600000 },
	{ "1u", 1 },
	{ "1000u", 1 },
	{ "1001u", 2 },
	{ "1n", 1 },
	{ "1000000n", 1 },
	{ "1000001n", 2 },
	{ "0n", 0 },
	{ "00000005S", 5000 },
	{ "99999999m", 99999999 },
	{ "99999999H", 99999999ull * 3600000 },
};

static const char *const timeout_bad[] = {
	"",    "m",    "1",   "S",   "123456789m", "1x",  "1s", "1h",  "-1m", " 1m",
	"1m ", "1.5S", "1mm", "+1S", "0x10m",      "1 m", "١m", "1Sm", "m1",
};

START_TEST(test_timeout_parse)
{
	for (size_t i = 0; i < sizeof(timeout_good) / sizeof(timeout_good[0]); i++) {
		uint64_t ms = 12345;
		ck_assert_msg(
			grpc_timeout_parse(timeout_good[i].v, strlen(timeout_good[i].v), &ms) == 0,
			"%s", timeout_good[i].v);
		ck_assert_msg(ms == timeout_good[i].ms, "%s: %llu", timeout_good[i].v,
			      (unsigned long long)ms);
	}
	for (size_t i = 0; i < sizeof(timeout_bad) / sizeof(timeout_bad[0]); i++) {
		uint64_t ms = 12345;
		size_t n = strlen(timeout_bad[i]);
		ck_assert_msg(grpc_timeout_parse(timeout_bad[i], n, &ms) == -EINVAL, "'%s'",
			      timeout_bad[i]);
		ck_assert_uint_eq(ms, 12345);
	}
	/* A NUL inside the value, and the length is what counts. */
	uint64_t ms = 0;
	ck_assert_int_eq(grpc_timeout_parse("1\0m", 3, &ms), -EINVAL);
	ck_assert_int_eq(grpc_timeout_parse("15mjunk", 3, &ms), 0);
	ck_assert_uint_eq(ms, 15);
}
END_TEST

START_TEST(test_timeout_format)
{
	static const struct {
		uint64_t ms;
		const char *v;
	} t[] = {
		{ 0, "0m" },
		{ 1, "1m" },
		{ 100, "100m" },
		{ 99999999, "99999999m" },
		{ 100000000, "100000S" },
		{ 100000001, "100001S" },
		{ 99999999000ull, "99999999S" },
		{ 99999999001ull, "1666667M" },
		{ 99999999ull * 60000 + 1, "1666667H" },
		{ UINT64_MAX, "99999999H" },
	};
	char out[GRPC_TIMEOUT_MAX];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = grpc_timeout_format(t[i].ms, out);
		ck_assert_str_eq(out, t[i].v);
		ck_assert_uint_eq(n, strlen(t[i].v));
		ck_assert_uint_lt(n, GRPC_TIMEOUT_MAX);
		/* What we format, we parse, and never to a shorter time. */
		uint64_t back = 0;
		ck_assert_int_eq(grpc_timeout_parse(out, n, &back), 0);
		if (t[i].ms <= 99999999ull * 3600000)
			ck_assert_uint_ge(back, t[i].ms);
	}
}
END_TEST

/* ---- grpc-message ---- */

START_TEST(test_message_encode)
{
	char out[64];
	ck_assert_uint_eq(grpc_message_encode("no workflow", out, sizeof(out)), 11);
	ck_assert_str_eq(out, "no workflow");
	grpc_message_encode("50% done", out, sizeof(out));
	ck_assert_str_eq(out, "50%25 done");
	grpc_message_encode("a\nb\x7f~ ", out, sizeof(out));
	ck_assert_str_eq(out, "a%0Ab%7F~ ");
	grpc_message_encode("caf\xc3\xa9", out, sizeof(out));
	ck_assert_str_eq(out, "caf%C3%A9");
	ck_assert_uint_eq(grpc_message_encode("", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	/* Cut between escapes: "ab" then "%25" does not fit in 5 with the
	 * NUL. */
	ck_assert_uint_eq(grpc_message_encode("ab%cd", out, 5), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(grpc_message_encode("ab%cd", out, 6), 5);
	ck_assert_str_eq(out, "ab%25");
	ck_assert_uint_eq(grpc_message_encode("abc", out, 3), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(grpc_message_encode("abc", out, 1), 0);
	ck_assert_str_eq(out, "");
	out[0] = 'x';
	ck_assert_uint_eq(grpc_message_encode("abc", out, 0), 0);
	ck_assert_int_eq(out[0], 'x');
}
END_TEST

START_TEST(test_message_decode)
{
	static const struct {
		const char *in, *out;
	} t[] = {
		{ "no workflow", "no workflow" },
		{ "50%25 done", "50% done" },
		{ "a%0Ab", "a\nb" },
		{ "caf%C3%A9", "caf\xc3\xa9" },
		{ "caf%c3%a9", "caf\xc3\xa9" },
		/* Malformed escapes are kept as they are. */
		{ "%zz", "%zz" },
		{ "%4", "%4" },
		{ "%", "%" },
		{ "a%4g", "a%4g" },
		{ "%%41", "%A" },
		{ "", "" },
	};
	char out[64];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t n = grpc_message_decode(t[i].in, strlen(t[i].in), out, sizeof(out));
		ck_assert_str_eq(out, t[i].out);
		ck_assert_uint_eq(n, strlen(t[i].out));
	}
	/* Cut to the room there is, and only n bytes read. */
	ck_assert_uint_eq(grpc_message_decode("abcdef", 6, out, 4), 3);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(grpc_message_decode("abcdef", 2, out, sizeof(out)), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(grpc_message_decode("%41%42", 4, out, sizeof(out)), 2);
	ck_assert_str_eq(out, "A%");
	ck_assert_uint_eq(grpc_message_decode("abc", 3, out, 0), 0);
	/* Round trip of every byte value but NUL. */
	char all[256], enc[256 * 3 + 1], dec[257];
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	size_t en = grpc_message_encode(all, enc, sizeof(enc));
	for (size_t i = 0; i < en; i++)
		ck_assert(enc[i] >= 0x20 && enc[i] <= 0x7e);
	ck_assert_uint_eq(grpc_message_decode(enc, en, dec, sizeof(dec)), 255);
	ck_assert_mem_eq(dec, all, 256);
}
END_TEST

START_TEST(test_content_type)
{
	static const char *const good[] = {
		"application/grpc",           "application/grpc+proto",
		"Application/GRPC",           "application/grpc; charset=utf-8",
		"application/grpc+proto;x=1", "application/grpc ; x=1",
		"application/grpc\t"
	};
	static const char *const bad[] = { "",
					   "application/grp",
					   "application/grpcx",
					   "application/grpc+json",
					   "application/grpc+",
					   "application/grpc+protobuf",
					   "application/json",
					   "text/plain",
					   "application/grpc-web",
					   "application/grpc json",
					   "application/grpc +proto" };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(grpc_content_type_ok(good[i], strlen(good[i])), "%s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!grpc_content_type_ok(bad[i], strlen(bad[i])), "%s", bad[i]);
	/* Only n bytes count. */
	ck_assert(grpc_content_type_ok("application/grpcXYZ", 16));
	ck_assert(!grpc_content_type_ok("application/grpc", 15));
}
END_TEST

/* ---- the pin of the wire ---- */

/* The first byte of each top-level tag of a packed message, walked here
 * independently of tink_check(). Every field number of tink.proto is
 * under 16, so a tag is one byte. Returns the count. */
static size_t top_tags(const uint8_t *p, size_t n, uint8_t *tags, size_t max)
{
	size_t i = 0, k = 0;
	while (i < n && k < max) {
		uint8_t tag = p[i++];
		ck_assert_msg(!(tag & 0x80), "a multi-byte tag at %zu", i - 1);
		tags[k++] = tag;
		uint64_t v = 0;
		unsigned shift = 0;
		/* A varint: the value, or the length. */
		while (i < n && shift < 64) {
			uint8_t b = p[i++];
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
			if (!(b & 0x80))
				break;
		}
		ck_assert_msg((tag & 7) == 0 || (tag & 7) == 2, "wire type %d", tag & 7);
		if ((tag & 7) == 2) {
			ck_assert_uint_le(v, n - i);
			i += v;
		}
	}
	ck_assert_uint_eq(i, n);
	return k;
}

static size_t pack(const void *m, uint8_t *buf)
{
	const ProtobufCMessage *msg = m;
	size_t n = protobuf_c_message_get_packed_size(msg);
	ck_assert_uint_le(n, BUF_MAX);
	ck_assert_uint_eq(protobuf_c_message_pack(msg, buf), n);
	return n;
}

#define ASSERT_TAGS(m, ...)                                         \
	do {                                                        \
		static const uint8_t want[] = { __VA_ARGS__ };      \
		uint8_t buf_[BUF_MAX], got_[64];                    \
		size_t n_ = pack(m, buf_);                          \
		size_t k_ = top_tags(buf_, n_, got_, sizeof(got_)); \
		ck_assert_uint_eq(k_, sizeof(want));                \
		ck_assert_mem_eq(got_, want, sizeof(want));         \
	} while (0)

static char *strs2[] = { "x", "y" };

/* An ActionRequest with every field of every nested message set. The
 * pieces are static: the test only reads them. */
static Proto__Processor processor = PROTO__PROCESSOR__INIT;
static Proto__Processor *processors[] = { &processor };
static Proto__CPU cpu = PROTO__CPU__INIT;
static Proto__Memory memory = PROTO__MEMORY__INIT;
static Proto__Block block = PROTO__BLOCK__INIT;
static Proto__Block *blocks[] = { &block };
static Proto__Network network = PROTO__NETWORK__INIT;
static Proto__Network *networks[] = { &network };
static Proto__PCI pci = PROTO__PCI__INIT;
static Proto__PCI *pcis[] = { &pci };
static Proto__GPU gpu = PROTO__GPU__INIT;
static Proto__GPU *gpus[] = { &gpu };
static Proto__Chassis chassis = PROTO__CHASSIS__INIT;
static Proto__BIOS bios = PROTO__BIOS__INIT;
static Proto__Baseboard baseboard = PROTO__BASEBOARD__INIT;
static Proto__Product product = PROTO__PRODUCT__INIT;
static Proto__AgentAttributes attrs = PROTO__AGENT_ATTRIBUTES__INIT;
static Proto__ActionRequest areq = PROTO__ACTION_REQUEST__INIT;

static void fill_action_request(void)
{
	processor.id = 1;
	processor.cores = 2;
	processor.threads = 3;
	processor.vendor = "v";
	processor.model = "m";
	processor.n_capabilities = 2;
	processor.capabilities = strs2;
	cpu.total_cores = 4;
	cpu.total_threads = 8;
	cpu.n_processors = 1;
	cpu.processors = processors;
	memory.total = "t";
	memory.usable = "u";
	block.name = "a";
	block.controller_type = "b";
	block.drive_type = "c";
	block.size = "d";
	block.physical_block_size = "e";
	block.vendor = "f";
	block.model = "g";
	block.wwn = "h";
	block.serial_number = "i";
	network.name = "a";
	network.mac = "b";
	network.speed = "c";
	network.n_enabled_capabilities = 2;
	network.enabled_capabilities = strs2;
	pci.vendor = gpu.vendor = "a";
	pci.product = gpu.product = "b";
	pci.class_ = gpu.class_ = "c";
	pci.driver = gpu.driver = "d";
	chassis.serial = "a";
	chassis.vendor = "b";
	bios.vendor = "a";
	bios.version = "b";
	bios.release_date = "c";
	baseboard.vendor = "a";
	baseboard.product = "b";
	baseboard.version = "c";
	baseboard.serial_number = "d";
	product.name = "a";
	product.vendor = "b";
	product.serial_number = "c";
	attrs.cpu = &cpu;
	attrs.memory = &memory;
	attrs.n_block = 1;
	attrs.block = blocks;
	attrs.n_network = 1;
	attrs.network = networks;
	attrs.n_pci = 1;
	attrs.pci = pcis;
	attrs.n_gpu = 1;
	attrs.gpu = gpus;
	attrs.chassis = &chassis;
	attrs.bios = &bios;
	attrs.baseboard = &baseboard;
	attrs.product = &product;
	areq.agent_id = "agent";
	areq.agent_attributes = &attrs;
}

START_TEST(test_pin_action_request)
{
	fill_action_request();
	ASSERT_TAGS(&areq, 0x0a, 0x12);
	ASSERT_TAGS(&attrs, 0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, 0x3a, 0x42, 0x4a, 0x52);
	ASSERT_TAGS(&cpu, 0x08, 0x10, 0x1a);
	ASSERT_TAGS(&processor, 0x08, 0x10, 0x18, 0x22, 0x2a, 0x32, 0x32);
	ASSERT_TAGS(&memory, 0x0a, 0x12);
	ASSERT_TAGS(&block, 0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, 0x3a, 0x42, 0x4a);
	ASSERT_TAGS(&network, 0x0a, 0x12, 0x1a, 0x22, 0x22);
	ASSERT_TAGS(&pci, 0x0a, 0x12, 0x1a, 0x22);
	ASSERT_TAGS(&gpu, 0x0a, 0x12, 0x1a, 0x22);
	ASSERT_TAGS(&chassis, 0x0a, 0x12);
	ASSERT_TAGS(&bios, 0x0a, 0x12, 0x1a);
	ASSERT_TAGS(&baseboard, 0x0a, 0x12, 0x1a, 0x22);
	ASSERT_TAGS(&product, 0x0a, 0x12, 0x1a);

	/* The whole thing passes the schema check and decodes back. */
	uint8_t buf[BUF_MAX];
	size_t n = pack(&areq, buf);
	struct tink_check_error err = { 0 };
	ProtobufCMessage *m = NULL;
	ck_assert_msg(tink_decode(TINK_MSG_ACTION_REQUEST, buf, n, &m, &err) == 0, "%zu: %s",
		      err.offset, err.message);
	Proto__ActionRequest *r = (Proto__ActionRequest *)m;
	ck_assert_str_eq(r->agent_id, "agent");
	ck_assert_ptr_nonnull(r->agent_attributes);
	ck_assert_uint_eq(r->agent_attributes->cpu->processors[0]->threads, 3);
	ck_assert_str_eq(r->agent_attributes->cpu->processors[0]->capabilities[1], "y");
	ck_assert_str_eq(r->agent_attributes->block[0]->serial_number, "i");
	ck_assert_str_eq(r->agent_attributes->gpu[0]->class_, "c");
	ck_assert_str_eq(r->agent_attributes->product->serial_number, "c");
	protobuf_c_message_free_unpacked(m, NULL);
}
END_TEST

START_TEST(test_pin_action_response)
{
	static char *cmd[] = { "c" }, *vol[] = { "v" }, *env[] = { "E=1" };
	Proto__Namespaces ns = PROTO__NAMESPACES__INIT;
	Proto__ActionResponse r = PROTO__ACTION_RESPONSE__INIT;
	ns.network = "n";
	ns.pid = "p";
	r.workflow_id = "w";
	r.task_id = "t";
	r.agent_id = "a";
	r.action_id = "i";
	r.name = "n";
	r.image = "m";
	r.timeout = 300;
	r.n_command = 1;
	r.command = cmd;
	r.n_volumes = 1;
	r.volumes = vol;
	r.n_environment = 1;
	r.environment = env;
	r.pid = "h";
	r.namespaces = &ns;
	ASSERT_TAGS(&ns, 0x0a, 0x12);
	/* timeout is field 7, a varint: tag 0x38. */
	ASSERT_TAGS(&r, 0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x32, 0x38, 0x42, 0x4a, 0x52, 0x5a, 0x62);

	/* The whole message, byte for byte. */
	/* clang-format off */
	static const uint8_t want[] = {
		0x0a, 1, 'w', 0x12, 1, 't', 0x1a, 1, 'a', 0x22, 1, 'i', 0x2a, 1, 'n', 0x32, 1, 'm',
		0x38, 0xac, 0x02, /* 300 */
		0x42, 1, 'c', 0x4a, 1, 'v', 0x52, 3, 'E', '=', '1', 0x5a, 1, 'h', 0x62, 6, 0x0a, 1,
		'n', 0x12, 1, 'p',
	};
	/* clang-format on */
	uint8_t buf[BUF_MAX];
	size_t n = pack(&r, buf);
	ck_assert_uint_eq(n, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));
	ck_assert_int_eq(tink_check(TINK_MSG_ACTION_RESPONSE, buf, n, NULL), 0);

	/* A negative timeout is a 10-byte varint, the longest there is. */
	r.timeout = -1;
	n = pack(&r, buf);
	ck_assert_int_eq(tink_check(TINK_MSG_ACTION_RESPONSE, buf, n, NULL), 0);
	ProtobufCMessage *m = NULL;
	ck_assert_int_eq(tink_decode(TINK_MSG_ACTION_RESPONSE, buf, n, &m, NULL), 0);
	ck_assert_int_eq(((Proto__ActionResponse *)m)->timeout, -1);
	ck_assert_str_eq(((Proto__ActionResponse *)m)->environment[0], "E=1");
	ck_assert_str_eq(((Proto__ActionResponse *)m)->namespaces->pid, "p");
	protobuf_c_message_free_unpacked(m, NULL);
}
END_TEST

START_TEST(test_pin_action_status_request)
{
	Google__Protobuf__Timestamp start = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	Google__Protobuf__Timestamp stop = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	Proto__ActionMessage msg = PROTO__ACTION_MESSAGE__INIT;
	Proto__ActionStatusRequest r = PROTO__ACTION_STATUS_REQUEST__INIT;
	start.seconds = 1;
	start.nanos = 2;
	stop.seconds = 3;
	stop.nanos = 4;
	msg.message = "ok";
	r.workflow_id = "w";
	r.agent_id = "a";
	r.task_id = "t";
	r.action_id = "i";
	r.action_name = "n";
	r.action_state = PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__SUCCESS;
	r.execution_start = &start;
	r.execution_stop = &stop;
	r.execution_duration = "2s";
	r.message = &msg;
	ASSERT_TAGS(&start, 0x08, 0x10);
	ASSERT_TAGS(&msg, 0x0a);
	ASSERT_TAGS(&r, 0x0a, 0x12, 0x1a, 0x22, 0x2a, 0x30, 0x3a, 0x42, 0x4a, 0x52);

	/* The states' numbers are on the wire too. */
	ck_assert_int_eq(PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__UNSPECIFIED, 0);
	ck_assert_int_eq(PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__PENDING, 1);
	ck_assert_int_eq(PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__RUNNING, 2);
	ck_assert_int_eq(PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__FAILED, 3);
	ck_assert_int_eq(PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__TIMEOUT, 4);
	ck_assert_int_eq(PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__SUCCESS, 5);
	ck_assert_int_eq(
		PROTO__PRECONDITION_FAILURE_VIOLATION__PRECONDITION_FAILURE_VIOLATION_NO_ACTION_AVAILABLE,
		1);

	static const uint8_t want[] = {
		0x0a, 1,    'w',  0x12, 1,    'a', 0x1a, 1,    't',  0x22, 1,    'i', 0x2a,
		1,    'n',  0x30, 5,    0x3a, 4,   0x08, 1,    0x10, 2,    0x42, 4,   0x08,
		3,    0x10, 4,    0x4a, 2,    '2', 's',  0x52, 4,    0x0a, 2,    'o', 'k',
	};
	uint8_t buf[BUF_MAX];
	size_t n = pack(&r, buf);
	ck_assert_uint_eq(n, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));

	struct tink_check_error err = { 0 };
	ProtobufCMessage *m = NULL;
	ck_assert_msg(tink_decode(TINK_MSG_ACTION_STATUS_REQUEST, buf, n, &m, &err) == 0, "%s",
		      err.message);
	Proto__ActionStatusRequest *d = (Proto__ActionStatusRequest *)m;
	ck_assert_str_eq(d->workflow_id, "w");
	ck_assert_str_eq(d->agent_id, "a");
	ck_assert_str_eq(d->task_id, "t");
	ck_assert_str_eq(d->action_id, "i");
	ck_assert_str_eq(d->action_name, "n");
	ck_assert_int_eq(d->action_state, 5);
	ck_assert_int_eq(d->execution_start->seconds, 1);
	ck_assert_int_eq(d->execution_stop->nanos, 4);
	ck_assert_str_eq(d->execution_duration, "2s");
	ck_assert_str_eq(d->message->message, "ok");
	protobuf_c_message_free_unpacked(m, NULL);
}
END_TEST

START_TEST(test_pin_action_status_response)
{
	Proto__ActionStatusResponse r = PROTO__ACTION_STATUS_RESPONSE__INIT;
	uint8_t buf[BUF_MAX];
	ck_assert_uint_eq(pack(&r, buf), 0);
	ProtobufCMessage *m = NULL;
	ck_assert_int_eq(tink_decode(TINK_MSG_ACTION_STATUS_RESPONSE, buf, 0, &m, NULL), 0);
	protobuf_c_message_free_unpacked(m, NULL);
	/* Every message may be empty (proto3: all defaults). */
	for (int t = 0; t < TINK_MSG_MAX; t++) {
		m = NULL;
		ck_assert_int_eq(tink_decode(t, NULL, 0, &m, NULL), 0);
		ck_assert_ptr_nonnull(m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
}
END_TEST

/* ---- malformed messages ---- */

#define B(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

static const struct {
	enum tink_msg m;
	const uint8_t *p;
	size_t n;
	size_t offset;
	const char *why; /* the exact message */
} bad[] = {
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x88, 0x01, 0x00), 0,
	  "field 17: unknown field of proto.ActionStatusRequest" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x0a, 0x01, 'w', 0x18, 0x01), 3,
	  "field 3 (task_id): wire type 0, expected 2 (length-delimited)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x32, 0x00), 0,
	  "field 6 (action_state): wire type 2, expected 0 (varint)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x0b, 0x0c), 0,
	  "field 1 (workflow_id): wire type 3, expected 2 (length-delimited)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x0e), 0,
	  "field 1 (workflow_id): wire type 6, expected 2 (length-delimited)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x35, 0, 0, 0, 0), 0,
	  "field 6 (action_state): wire type 5, expected 0 (varint)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x88), 0,
	  "truncated tag in proto.ActionStatusRequest" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x30), 1, "field 6 (action_state): truncated varint" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x30, 0x80), 1,
	  "field 6 (action_state): truncated varint" },
	{ TINK_MSG_ACTION_STATUS_REQUEST,
	  B(0x30, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 1,
	  "field 6 (action_state): varint over 64 bits" },
	{ TINK_MSG_ACTION_RESPONSE,
	  B(0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02), 1,
	  "field 7 (timeout): varint over 64 bits" },
	{ TINK_MSG_ACTION_STATUS_REQUEST,
	  B(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), 0,
	  "tag varint over 5 bytes in proto.ActionStatusRequest" },
	/* protobuf-c reads a tag or a length in at most 5 bytes, so an
	 * overlong one it would refuse is refused here (the fuzzer found
	 * the 8-byte length of 0). */
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x8a, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00), 0,
	  "tag varint over 5 bytes in proto.ActionStatusRequest" },
	{ TINK_MSG_ACTION_RESPONSE, B(0x2a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 1,
	  "field 5 (name): length varint over 5 bytes" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x00, 0x00), 0,
	  "field 0: invalid field number in proto.ActionStatusRequest" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x02, 0x00), 0,
	  "field 0: invalid field number in proto.ActionStatusRequest" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x80, 0x80, 0x80, 0x80, 0x10, 0x00), 0,
	  "field 536870912: invalid field number in proto.ActionStatusRequest" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x0a, 0x05, 'a', 'b'), 1,
	  "field 1 (workflow_id): length 5 past the end (2 left)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x0a), 1, "field 1 (workflow_id): truncated length" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f), 1,
	  "field 1 (workflow_id): length 4294967295 past the end (0 left)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST,
	  B(0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 1,
	  "field 1 (workflow_id): length varint over 5 bytes" },
	{ TINK_MSG_ACTION_STATUS_REQUEST,
	  B(0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), 1,
	  "field 1 (workflow_id): length varint over 5 bytes" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x12, 0x02, 0xc3, 0x28), 2,
	  "field 2 (agent_id): not UTF-8" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x12, 0x03, 0xed, 0xa0, 0x80), 2,
	  "field 2 (agent_id): not UTF-8" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x12, 0x03, 'a', 0x00, 'b'), 2,
	  "field 2 (agent_id): NUL in a string" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x52, 0x02, 0x10, 0x01), 2,
	  "field 2: unknown field of proto.ActionMessage" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x52, 0x02, 0x0a, 0x05), 3,
	  "field 1 (message): length 5 past the end (0 left)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x3a, 0x05, 0x0d, 0, 0, 0, 0), 2,
	  "field 1 (seconds): wire type 5, expected 0 (varint)" },
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x42, 0x02, 0x18, 0x01), 2,
	  "field 3: unknown field of google.protobuf.Timestamp" },
	{ TINK_MSG_ACTION_STATUS_RESPONSE, B(0x08, 0x01), 0,
	  "field 1: unknown field of proto.ActionStatusResponse" },
	{ TINK_MSG_ACTION_REQUEST, B(0x12, 0x04, 0x0a, 0x02, 0x20, 0x01), 4,
	  "field 4: unknown field of proto.CPU" },
	{ TINK_MSG_ACTION_REQUEST, B(0x12, 0x06, 0x0a, 0x04, 0x1a, 0x02, 0x3a, 0x00), 6,
	  "field 7: unknown field of proto.Processor" },
	{ TINK_MSG_ACTION_REQUEST, B(0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0xff), 6,
	  "field 1 (name): not UTF-8" },
	{ TINK_MSG_ACTION_REQUEST, B(0x12, 0x02, 0x58, 0x00), 2,
	  "field 11: unknown field of proto.AgentAttributes" },
	{ TINK_MSG_ACTION_RESPONSE, B(0x62, 0x02, 0x1a, 0x00), 2,
	  "field 3: unknown field of proto.Namespaces" },
	/* A message where a string is expected, and a string where a
	 * message is. */
	{ TINK_MSG_ACTION_RESPONSE, B(0x60, 0x01), 0,
	  "field 12 (namespaces): wire type 0, expected 2 (length-delimited)" },
	{ TINK_MSG_ACTION_REQUEST, B(0x12, 0x01, 0xff), 2,
	  "truncated tag in proto.AgentAttributes" },
	/* The field ActionResponse has at 7 is a varint; in ActionStatusRequest
	 * 7 is a Timestamp. */
	{ TINK_MSG_ACTION_STATUS_REQUEST, B(0x38, 0x01), 0,
	  "field 7 (execution_start): wire type 0, expected 2 (length-delimited)" },
};

START_TEST(test_check_bad)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tink_check_error err = { .offset = 999 };
		ck_assert_msg(tink_check(bad[i].m, bad[i].p, bad[i].n, &err) == -EBADMSG, "#%zu",
			      i);
		ck_assert_msg(strcmp(err.message, bad[i].why) == 0, "#%zu: '%s'", i, err.message);
		ck_assert_msg(err.offset == bad[i].offset, "#%zu: offset %zu", i, err.offset);
		/* Without err, and through tink_decode, the same refusal. */
		ck_assert_int_eq(tink_check(bad[i].m, bad[i].p, bad[i].n, NULL), -EBADMSG);
		ProtobufCMessage *m = (ProtobufCMessage *)&err;
		ck_assert_int_eq(tink_decode(bad[i].m, bad[i].p, bad[i].n, &m, NULL), -EBADMSG);
		ck_assert_ptr_eq(m, (ProtobufCMessage *)&err);
	}
	/* Every prefix of a good message but the whole one is refused or
	 * is a good message itself; none reads past its end (ASan). */
	fill_action_request();
	uint8_t buf[BUF_MAX];
	size_t n = pack(&areq, buf);
	for (size_t k = 0; k < n; k++) {
		uint8_t *cut = malloc(k ? k : 1);
		memcpy(cut, buf, k);
		int e = tink_check(TINK_MSG_ACTION_REQUEST, cut, k, NULL);
		ck_assert(e == 0 || e == -EBADMSG);
		free(cut);
	}
	ck_assert_int_eq(tink_check(TINK_MSG_MAX, buf, n, NULL), -EBADMSG);
	ck_assert_int_eq(tink_check(TINK_MSG_ACTION_REQUEST, NULL, 1, NULL), -EBADMSG);
}
END_TEST

START_TEST(test_check_good)
{
	/* Repeated singular fields (the last wins), and fields out of
	 * order, are protobuf: accepted. */
	static const uint8_t p[] = {
		0x12, 0x01, 'b', 0x0a, 0x01, 'w', 0x12, 0x01, 'a', 0x30, 0x02
	};
	ProtobufCMessage *m = NULL;
	ck_assert_int_eq(tink_decode(TINK_MSG_ACTION_STATUS_REQUEST, p, sizeof(p), &m, NULL), 0);
	Proto__ActionStatusRequest *r = (Proto__ActionStatusRequest *)m;
	ck_assert_str_eq(r->agent_id, "a");
	ck_assert_str_eq(r->workflow_id, "w");
	ck_assert_int_eq(r->action_state, PROTO__ACTION_STATUS_REQUEST__STATE_TYPE__RUNNING);
	protobuf_c_message_free_unpacked(m, NULL);
	/* An enum value this side does not know is still a varint. */
	static const uint8_t q[] = { 0x30, 0x63 };
	ck_assert_int_eq(tink_check(TINK_MSG_ACTION_STATUS_REQUEST, q, sizeof(q), NULL), 0);
	/* An overlong length within 5 bytes is protobuf, and protobuf-c's. */
	static const uint8_t o[] = { 0x0a, 0x81, 0x80, 0x80, 0x80, 0x00, 'w' };
	ck_assert_int_eq(tink_decode(TINK_MSG_ACTION_STATUS_REQUEST, o, sizeof(o), &m, NULL), 0);
	ck_assert_str_eq(((Proto__ActionStatusRequest *)m)->workflow_id, "w");
	protobuf_c_message_free_unpacked(m, NULL);
	/* tink-agent's RUNNING report: execution_stop is Go's zero time,
	 * seconds -62135596800 (a 10-byte varint), and an empty message. */
	static const uint8_t z[] = { 0x30, 0x02, 0x42, 0x0b, 0x08, 0x80, 0x92, 0xb8, 0xc3,
				     0x98, 0xfe, 0xff, 0xff, 0xff, 0x01, 0x52, 0x00 };
	ck_assert_int_eq(tink_decode(TINK_MSG_ACTION_STATUS_REQUEST, z, sizeof(z), &m, NULL), 0);
	r = (Proto__ActionStatusRequest *)m;
	ck_assert_int_eq(r->execution_stop->seconds, -62135596800LL);
	ck_assert_ptr_nonnull(r->message);
	ck_assert_str_eq(r->message->message, "");
	protobuf_c_message_free_unpacked(m, NULL);
	/* UTF-8 beyond ASCII. */
	static const uint8_t u[] = { 0x12, 0x04, 0xf0, 0x9f, 0x94, 0x94 };
	ck_assert_int_eq(tink_check(TINK_MSG_ACTION_STATUS_REQUEST, u, sizeof(u), NULL), 0);
}
END_TEST

static Suite *grpc_suite(void)
{
	Suite *s = suite_create("grpc");
	TCase *tc = tcase_create("core");
	UNIT_TEST(tc, test_code_name);
	UNIT_TEST(tc, test_prefix);
	UNIT_TEST(tc, test_timeout_parse);
	UNIT_TEST(tc, test_timeout_format);
	UNIT_TEST(tc, test_message_encode);
	UNIT_TEST(tc, test_message_decode);
	UNIT_TEST(tc, test_content_type);
	UNIT_TEST(tc, test_pin_action_request);
	UNIT_TEST(tc, test_pin_action_response);
	UNIT_TEST(tc, test_pin_action_status_request);
	UNIT_TEST(tc, test_pin_action_status_response);
	UNIT_TEST(tc, test_check_bad);
	UNIT_TEST(tc, test_check_good);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(grpc_suite());
}
