/* check_agent — ironbell-agent's pure parts: the kernel command line,
 * durations as Go writes them, the detection of actions that take the
 * machine down, the Docker Engine's HTTP responses and log stream, and
 * the container's definition (environment, volumes, namespaces). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent-internal.h"
#include "tests/unit/unit.h"

START_TEST(cmdline_hookos)
{
	static const char line[] =
		"BOOT_IMAGE=/vmlinuz console=tty0 console=ttyS1,115200 facility=onprem "
		"syslog_host=10.1.1.1 grpc_authority=10.1.1.1:42113 tinkerbell_tls=false "
		"tinkerbell_insecure_tls=true worker_id=52:54:00:12:34:56 "
		"hw_addr=52:54:00:12:34:56 modules=loop,squashfs,sd-mod,usb-storage intel_iommu=on\n";
	struct agent_cmdline c;
	ck_assert_int_eq(agent_cmdline_parse(line, strlen(line), &c), 0);
	ck_assert_str_eq(c.worker_id, "52:54:00:12:34:56");
	ck_assert_str_eq(c.grpc_authority, "10.1.1.1:42113");
	ck_assert_str_eq(c.syslog_host, "10.1.1.1");
	ck_assert_int_eq(c.tls, 0);
	ck_assert_int_eq(c.insecure_tls, 1);
}
END_TEST

START_TEST(cmdline_quotes_and_absent)
{
	static const char line[] = "a=\"x y\" worker_id=\"machine one\"\ttinkerbell_tls=1";
	struct agent_cmdline c;
	ck_assert_int_eq(agent_cmdline_parse(line, strlen(line), &c), 0);
	ck_assert_str_eq(c.worker_id, "machine one");
	ck_assert_str_eq(c.grpc_authority, "");
	ck_assert_int_eq(c.tls, 1);
	ck_assert_int_eq(c.insecure_tls, -1);
	/* Smee writes a key with no value when it has none. */
	static const char empty[] =
		"syslog_host= tinkerbell_tls= tinkerbell_insecure_tls= worker_id=w";
	ck_assert_int_eq(agent_cmdline_parse(empty, strlen(empty), &c), 0);
	ck_assert_str_eq(c.syslog_host, "");
	ck_assert_int_eq(c.tls, -1);
	ck_assert_int_eq(c.insecure_tls, -1);
	ck_assert_str_eq(c.worker_id, "w");
	ck_assert_int_eq(agent_cmdline_parse("", 0, &c), 0);
	ck_assert_str_eq(c.worker_id, "");
	/* worker_idx= is another key; worker_id with no '=' is not a value. */
	ck_assert_int_eq(agent_cmdline_parse("worker_idx=a worker_id", 22, &c), 0);
	ck_assert_str_eq(c.worker_id, "");
}
END_TEST

START_TEST(cmdline_malformed)
{
	struct agent_cmdline c = { .tls = 7 };
	static const struct {
		const char *s;
		int e;
	} bad[] = {
		{ "worker_id=\"open", -EBADMSG },
		{ "worker_id=a\x01b", -EBADMSG },
		{ "tinkerbell_tls=yes", -EINVAL },
		{ "tinkerbell_insecure_tls=no", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(agent_cmdline_parse(bad[i].s, strlen(bad[i].s), &c), bad[i].e);
		ck_assert_int_eq(c.tls, 7); /* *ret untouched on failure */
	}
	char big[600];
	memcpy(big, "worker_id=", 10);
	memset(big + 10, 'a', sizeof(big) - 11);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(agent_cmdline_parse(big, strlen(big), &c), -ENAMETOOLONG);
	/* An unknown long parameter is skipped; an embedded NUL is refused. */
	big[0] = 'x';
	ck_assert_int_eq(agent_cmdline_parse(big, strlen(big), &c), 0);
	ck_assert_int_eq(agent_cmdline_parse("a\0b", 3, &c), -EBADMSG);
	ck_assert_int_eq(agent_cmdline_parse(big, AGENT_CMDLINE_MAX + 1, &c), -E2BIG);
}
END_TEST

START_TEST(duration_go)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} t[] = {
		{ 0, "0s" },
		{ 7, "7ns" },
		{ 1500, "1.5\xc2\xb5s" },
		{ 250000000, "250ms" },
		{ 1500000, "1.5ms" },
		{ 1000000000, "1s" },
		{ 1500000000, "1.5s" },
		{ 62000000000ull, "1m2s" },
		{ 3600000000000ull, "1h0m0s" },
		{ 3723004000000ull, "1h2m3.004s" },
		{ 62123456789ull, "1m2.123456789s" },
	};
	char b[AGENT_DURATION_MAX];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_str_eq(agent_duration_format(t[i].ns, b), t[i].s);
	ck_assert_ptr_nonnull(agent_duration_format(UINT64_MAX, b));
	ck_assert_str_eq(b, "5124095h34m33.709551615s");
}
END_TEST

START_TEST(down_detection)
{
	char *none[] = { NULL };
	char *reboot[] = { "/sbin/reboot" };
	char *kexec[] = { "kexec", "-e" };
	char *kexec_l[] = { "kexec", "-l", "/vmlinuz" };
	char *sh[] = { "/bin/sh", "-c", "sync; reboot -f" };
	char *sh2[] = { "/bin/sh", "-c", "kexec -e" };
	char *echo[] = { "/bin/echo", "reboot" };
	char *env_k[] = { "IMAGE=quay.io/tinkerbell/actions/kexec:latest", "X=1" };
	char *env_n[] = { "IMAGE=quay.io/tinkerbell/actions/cexec:latest" };
	const char *l = AGENT_DOWN_DEFAULT;
	ck_assert(agent_is_down(l, false, "quay.io/tinkerbell/actions/kexec:v1.0.0", none, 0, none,
				0));
	ck_assert(agent_is_down(l, false, "quay.io/tinkerbell/actions/reboot", none, 0, none, 0));
	ck_assert(agent_is_down(l, false, "ghcr.io/x/reboot@sha256:abc", none, 0, none, 0));
	ck_assert(!agent_is_down(l, false, "quay.io/tinkerbell/actions/image2disk:v1", none, 0,
				 none, 0));
	ck_assert(!agent_is_down(l, false, "registry:5000/kexec-tools", none, 0, none, 0));
	ck_assert(
		agent_is_down(l, false, "ghcr.io/tinkerbell/waitdaemon:latest", none, 0, env_k, 2));
	ck_assert(!agent_is_down(l, false, "ghcr.io/tinkerbell/waitdaemon:latest", none, 0, env_n,
				 1));
	/* Commands count only for the host runtime. */
	ck_assert(!agent_is_down(l, false, "busybox", reboot, 1, none, 0));
	ck_assert(agent_is_down(l, true, "busybox", reboot, 1, none, 0));
	ck_assert(agent_is_down(l, true, "", kexec, 2, none, 0));
	ck_assert(!agent_is_down(l, true, "", kexec_l, 3, none, 0));
	ck_assert(agent_is_down(l, true, "", sh, 3, none, 0) == false); /* "sync" comes first */
	ck_assert(agent_is_down(l, true, "", sh2, 3, none, 0));
	ck_assert(!agent_is_down(l, true, "", echo, 2, none, 0));
	ck_assert(!agent_is_down("", true, "x/kexec", kexec, 2, none, 0));
}
END_TEST

START_TEST(http_head_good)
{
	static const char r[] = "HTTP/1.1 201 Created\r\nApi-Version: 1.41\r\n"
				"Content-Type: application/json\r\ncontent-length:  88 \r\n\r\n{";
	struct agent_http_head h;
	ck_assert_int_eq(agent_http_head_parse((const uint8_t *)r, strlen(r), &h), 0);
	ck_assert_int_eq(h.status, 201);
	ck_assert_int_eq(h.content_length, 88);
	ck_assert(!h.chunked);
	ck_assert_uint_eq(h.head_len, strlen(r) - 1);
	static const char c[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
	ck_assert_int_eq(agent_http_head_parse((const uint8_t *)c, strlen(c), &h), 0);
	ck_assert(h.chunked);
	ck_assert_int_eq(h.content_length, -1);
	static const char n[] = "HTTP/1.0 204\r\n\r\n";
	ck_assert_int_eq(agent_http_head_parse((const uint8_t *)n, strlen(n), &h), 0);
	ck_assert_int_eq(h.status, 204);
}
END_TEST

START_TEST(http_head_malformed)
{
	static const struct {
		const char *s;
		int e;
	} bad[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", -EAGAIN },
		{ "HTTP/2 200 OK\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 20 OK\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 999 OK\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200OK\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n", -EBADMSG },
		{ "HTTP/1.1 200 OK\nX: bare LF\r\n\r\n", -EBADMSG },
	};
	struct agent_http_head h = { .status = 7 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(agent_http_head_parse((const uint8_t *)bad[i].s, strlen(bad[i].s),
						    &h) == bad[i].e,
			      "%s", bad[i].s);
		ck_assert_int_eq(h.status, 7);
	}
	static uint8_t big[AGENT_HTTP_HEAD_MAX + 10];
	memset(big, 'a', sizeof(big));
	ck_assert_int_eq(agent_http_head_parse(big, sizeof(big), &h), -EMSGSIZE);
}
END_TEST

/* Feeds s in pieces of step bytes; the payload into out. */
static int chunked(const char *s, size_t step, char *out, size_t *outlen)
{
	struct agent_http_chunked c = { 0 };
	uint8_t buf[256];
	size_t n = strlen(s), total = 0;
	int e = 0;
	for (size_t off = 0; off < n && e == 0; off += step) {
		size_t m = n - off < step ? n - off : step, got;
		memcpy(buf, s + off, m);
		e = agent_http_chunked_feed(&c, buf, m, &got);
		memcpy(out + total, buf, got);
		total += got;
	}
	*outlen = total;
	return e;
}

START_TEST(http_chunked)
{
	char out[256];
	size_t n;
	static const char s[] = "4\r\nWiki\r\n6;ext=1\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n"
				"0\r\nX-Trailer: 1\r\n\r\n";
	for (size_t step = 1; step <= sizeof(s); step++) {
		ck_assert_int_eq(chunked(s, step, out, &n), 1);
		ck_assert_uint_eq(n, 24);
		ck_assert(memcmp(out, "Wikipedia in \r\n\r\nchunks.", 24) == 0);
	}
	ck_assert_int_eq(chunked("3\r\nab", 100, out, &n), 0); /* more to come */
	static const char *const bad[] = {
		"\r\n",           "x\r\n",        "4\nWiki\r\n",
		"4\r\nWikiX\r\n", "4\r\nWiki\rX", "11111111111111111\r\n",
		"FFFFFFFF\r\n",   "0\r\n\rX",     "0\r\nX: 1\rY",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(chunked(bad[i], 100, out, &n) == -EBADMSG, "%s", bad[i]);
}
END_TEST

struct collect {
	char buf[64];
	size_t n;
};

static void collect(void *arg, const uint8_t *p, size_t n)
{
	struct collect *c = arg;
	ck_assert_uint_le(c->n + n, sizeof(c->buf));
	memcpy(c->buf + c->n, p, n);
	c->n += n;
}

START_TEST(docker_mux)
{
	static const uint8_t s[] = { 1, 0, 0, 0, 0,   0,    0, 3, 'a', 'b', '\n', 2, 0, 0, 0,
				     0, 0, 0, 2, 'e', '\n', 0, 0, 0,   0,   0,    0, 0, 0 };
	for (size_t step = 1; step <= sizeof(s); step++) {
		struct agent_mux m = { .hdr_n = 0 };
		struct collect c = { .n = 0 };
		for (size_t off = 0; off < sizeof(s); off += step) {
			size_t k = sizeof(s) - off < step ? sizeof(s) - off : step;
			ck_assert_int_eq(agent_mux_feed(&m, s + off, k, collect, &c), 0);
		}
		ck_assert_uint_eq(c.n, 5);
		ck_assert(memcmp(c.buf, "ab\ne\n", 5) == 0);
	}
	static const uint8_t bad1[] = { 3, 0, 0, 0, 0, 0, 0, 1, 'x' };
	static const uint8_t bad2[] = { 1, 0, 1, 0, 0, 0, 0, 1, 'x' };
	struct agent_mux m = { .hdr_n = 0 };
	struct collect c = { .n = 0 };
	ck_assert_int_eq(agent_mux_feed(&m, bad1, sizeof(bad1), collect, &c), -EBADMSG);
	m = (struct agent_mux){ .hdr_n = 0 };
	ck_assert_int_eq(agent_mux_feed(&m, bad2, sizeof(bad2), collect, &c), -EBADMSG);
	ck_assert_uint_eq(c.n, 0);
}
END_TEST

START_TEST(docker_create_body)
{
	char *cmd[] = { "/bin/sh", "-c", "echo $X" };
	char *env[] = { "X=1", "EMPTY=", "EQ=a=b" };
	char *vol[] = { "/dev:/dev", "/lib/firmware:/lib/firmware:ro" };
	struct agent_action a = {
		.name = "n",
		.image = "quay.io/x/cexec:v1",
		.command = cmd,
		.ncmd = 3,
		.env = env,
		.nenv = 3,
		.volumes = vol,
		.nvol = 2,
		.pidns = "host",
		.netns = "host",
	};
	struct agent_settings s;
	agent_settings_init(&s);
	char *b = agent_docker_create_body(&s, &a);
	ck_assert_ptr_nonnull(b);
	json_t *j = json_loads(b, 0, NULL), *hc = json_object_get(j, "HostConfig");
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "Image")), "quay.io/x/cexec:v1");
	ck_assert_uint_eq(json_array_size(json_object_get(j, "Env")), 3);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "Env"), 2)), "EQ=a=b");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "Cmd"), 2)),
			 "echo $X");
	ck_assert(json_is_false(json_object_get(j, "Tty")));
	ck_assert(json_is_true(json_object_get(hc, "Privileged")));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(hc, "Binds"), 1)),
			 "/lib/firmware:/lib/firmware:ro");
	ck_assert_str_eq(json_string_value(json_object_get(hc, "PidMode")), "host");
	ck_assert_str_eq(json_string_value(json_object_get(hc, "NetworkMode")), "host");
	json_decref(j);
	free(b);
	/* No command, volumes or namespaces: the image's own, none, the default. */
	struct agent_action bare = { .name = "n", .image = "busybox", .pidns = "", .netns = "" };
	s.privileged = false;
	b = agent_docker_create_body(&s, &bare);
	j = json_loads(b, 0, NULL);
	hc = json_object_get(j, "HostConfig");
	ck_assert_ptr_null(json_object_get(j, "Cmd"));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "Env")), 0);
	ck_assert(json_is_false(json_object_get(hc, "Privileged")));
	ck_assert_ptr_null(json_object_get(hc, "Binds"));
	ck_assert_ptr_null(json_object_get(hc, "PidMode"));
	ck_assert_ptr_null(json_object_get(hc, "NetworkMode"));
	json_decref(j);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent");
	TCase *tc = tcase_create("agent");
	UNIT_TEST(tc, cmdline_hookos);
	UNIT_TEST(tc, cmdline_quotes_and_absent);
	UNIT_TEST(tc, cmdline_malformed);
	UNIT_TEST(tc, duration_go);
	UNIT_TEST(tc, down_detection);
	UNIT_TEST(tc, http_head_good);
	UNIT_TEST(tc, http_head_malformed);
	UNIT_TEST(tc, http_chunked);
	UNIT_TEST(tc, docker_mux);
	UNIT_TEST(tc, docker_create_body);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
