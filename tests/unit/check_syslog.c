/* check_syslog — the syslog parser on what real senders write (util-linux
 * logger in both formats, busybox syslogd, rsyslog) and on malformed
 * datagrams; the cleaning of a message for an event (valid UTF-8, cut
 * between characters) and the event's message; and the server
 * itself, started from settings built here (no YAML) on a store of its
 * own, turning a datagram from 127.0.0.1 into an event of the Hardware
 * that owns that address. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "syslog/syslog.h"
#include "syslog/syslog-codec.h"
#include "tests/unit/unit.h"

#define FIXTURE_NAME "check_syslog"
#include "tests/unit/store_fixture.h"

static bool slice_is(const struct syslog_slice *s, const char *want)
{
	return s->n == strlen(want) && (s->n == 0 || memcmp(s->p, want, s->n) == 0);
}

#define SLICE_EQ(s, w) ck_assert_msg(slice_is(&(s), w), "%s: \"%.*s\", want \"%s\"", #s, \
				     (int)(s).n, (s).p ? (s).p : "", w)

static const struct {
	const char *in;
	enum syslog_format f;
	unsigned fac, sev;
	const char *ts, *host, *app, *pid, *msgid, *text;
} good[] = {
	/* logger --rfc3164 -t tag -i */
	{ "<13>Nov 24 23:50:01 node1 tag[1234]: hello world", SYSLOG_RFC3164, 1, 5,
	  "Nov 24 23:50:01", "node1", "tag", "1234", "", "hello world" },
	/* busybox syslogd forwarding: no host, a trailing NUL */
	{ "<14>Nov  4 01:02:03 kernel: [    1.234] eth0 up", SYSLOG_RFC3164, 1, 6,
	  "Nov  4 01:02:03", "", "kernel", "", "", "[    1.234] eth0 up" },
	/* rsyslog: host and tag without pid */
	{ "<30>Jan 01 00:00:00 hookos tink-agent: action done", SYSLOG_RFC3164, 3, 6,
	  "Jan 01 00:00:00", "hookos", "tink-agent", "", "", "action done" },
	/* no timestamp at all */
	{ "<11>sshd[99]: refused", SYSLOG_RFC3164, 1, 3, "", "", "sshd", "99", "", "refused" },
	{ "<0>just text, no tag", SYSLOG_RFC3164, 0, 0, "", "", "", "", "", "just text, no tag" },
	{ "<191>x", SYSLOG_RFC3164, 23, 7, "", "", "", "", "", "x" },
	/* a timestamp and then no recognisable tag */
	{ "<13>Nov 24 23:50:01 some free text", SYSLOG_RFC3164, 1, 5, "Nov 24 23:50:01", "", "",
	  "", "", "some free text" },
	/* logger --rfc5424 */
	{ "<13>1 2026-11-24T23:50:01.123456+00:00 node1 tag 1234 - [timeQuality tzKnown=\"1\" "
	  "isSynced=\"0\"] hello 5424",
	  SYSLOG_RFC5424, 1, 5, "2026-11-24T23:50:01.123456+00:00", "node1", "tag", "1234", "",
	  "hello 5424" },
	/* nil fields, no structured data, a BOM */
	{ "<165>1 - - - - ID47 - \xef\xbb\xbf" "bom message", SYSLOG_RFC5424, 20, 5, "", "", "", "",
	  "ID47", "bom message" },
	/* escaped characters in an SD value, several elements, no message */
	{ "<13>1 2026-01-01T00:00:00Z h a - - [x k=\"a\\\"]b\\\\\"][y z=\"1\"]", SYSLOG_RFC5424, 1, 5,
	  "2026-01-01T00:00:00Z", "h", "a", "", "", "" },
	/* trailing newline and NUL are dropped */
	{ "<13>1 - h a p m - text\n", SYSLOG_RFC5424, 1, 5, "", "h", "a", "p", "m", "text" },
};

START_TEST(test_good)
{
	struct syslog_msg m;
	enum syslog_bad why;
	const char *in = good[_i].in;
	size_t n = strlen(in);
	ck_assert_msg(syslog_parse((const uint8_t *)in, n, &m, &why) == 0, "%s: %s", in,
		      syslog_bad_name(why));
	ck_assert_int_eq(m.format, good[_i].f);
	ck_assert_uint_eq(m.facility, good[_i].fac);
	ck_assert_uint_eq(m.severity, good[_i].sev);
	SLICE_EQ(m.timestamp, good[_i].ts);
	SLICE_EQ(m.host, good[_i].host);
	SLICE_EQ(m.app, good[_i].app);
	SLICE_EQ(m.procid, good[_i].pid);
	SLICE_EQ(m.msgid, good[_i].msgid);
	SLICE_EQ(m.text, good[_i].text);
}
END_TEST

static const struct {
	const char *in;
	size_t n; /* 0: strlen */
	enum syslog_bad why;
} bad[] = {
	{ "", 0, SYSLOG_BAD_EMPTY },
	{ "\0\n", 2, SYSLOG_BAD_EMPTY },
	{ "no pri", 0, SYSLOG_BAD_PRI },
	{ "<>x", 0, SYSLOG_BAD_PRI },
	{ "<192>x", 0, SYSLOG_BAD_PRI },
	{ "<01>x", 0, SYSLOG_BAD_PRI },
	{ "<1234>x", 0, SYSLOG_BAD_PRI },
	{ "<13x", 0, SYSLOG_BAD_PRI },
	{ "<13", 0, SYSLOG_BAD_PRI },
	{ "<-1>x", 0, SYSLOG_BAD_PRI },
	{ "<13>1 2026-01-01T00:00:00Z host", 0, SYSLOG_BAD_HEADER },
	{ "<13>1 - - - - -", 0, SYSLOG_BAD_HEADER },
	{ "<13>1 - - - - - [unterminated k=\"v\"", 0, SYSLOG_BAD_SD },
	{ "<13>1 - - - - - [k v=\"]\" ", 0, SYSLOG_BAD_SD },
	{ "<13>1 - - - - - nosd text", 0, SYSLOG_BAD_SD },
	{ "<13>1 - - - - - [a]junk", 0, SYSLOG_BAD_SD },
};

START_TEST(test_malformed)
{
	struct syslog_msg m;
	enum syslog_bad why = 0;
	size_t n = bad[_i].n ? bad[_i].n : strlen(bad[_i].in);
	ck_assert_int_eq(syslog_parse((const uint8_t *)bad[_i].in, n, &m, &why), -EBADMSG);
	ck_assert_msg(why == bad[_i].why, "%s: %s, want %s", bad[_i].in, syslog_bad_name(why),
		      syslog_bad_name(bad[_i].why));
}
END_TEST

START_TEST(test_nul_inside)
{
	/* A NUL inside the message is kept as a byte, and cleaned later. */
	const char in[] = "<13>tag: a\0b";
	struct syslog_msg m;
	enum syslog_bad why;
	ck_assert_int_eq(syslog_parse((const uint8_t *)in, sizeof(in) - 1, &m, &why), 0);
	ck_assert_uint_eq(m.text.n, 3);
	char out[16];
	ck_assert_uint_eq(syslog_clean(&m.text, out, 15), 3);
	ck_assert_str_eq(out, "a?b");
}
END_TEST

START_TEST(test_clean)
{
	char out[16];
	struct syslog_slice s = { "ab\x1b[31mc\td\x7f", 11 };
	syslog_clean(&s, out, 15);
	ck_assert_str_eq(out, "ab?[31mc\td?");
	struct syslog_slice l = { "0123456789abcdef", 16 };
	ck_assert_uint_eq(syslog_clean(&l, out, 10), 10);
	ck_assert_str_eq(out, "0123456...");
	struct syslog_slice e = { NULL, 0 };
	ck_assert_uint_eq(syslog_clean(&e, out, 10), 0);
	ck_assert_str_eq(syslog_severity_name(0), "emerg");
	ck_assert_str_eq(syslog_severity_name(7), "debug");
	ck_assert_str_eq(syslog_severity_name(8), "?");
}
END_TEST

/* A cleaned message is valid UTF-8 (what jansson takes for an event):
 * an ill-formed sequence becomes U+FFFD, a cut falls between characters,
 * and the replacements count against max. */
START_TEST(test_clean_utf8)
{
	static const struct {
		const char *in;
		size_t max;
		const char *want;
	} t[] = {
		{ "a\xff" "b", 15, "a\xef\xbf\xbd" "b" },
		{ "\xc3\xa9t\xc3\xa9", 15, "\xc3\xa9t\xc3\xa9" },
		/* cut inside the \xc3\xa9 that starts at byte 6 */
		{ "012345\xc3\xa9xyz", 10, "012345..." },
		/* a 4-byte character right at the cut */
		{ "0123\xf0\x9f\x94\x94xyz", 10, "0123..." },
		/* each replacement is 3 bytes: 12 do not fit in 10 */
		{ "\xff\xff\xff\xff", 10, "\xef\xbf\xbd\xef\xbf\xbd..." },
		{ "\xff\xff\xff", 9, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		/* a truncated sequence at the end of the datagram */
		{ "ok \xe2\x82", 15, "ok \xef\xbf\xbd" },
		{ "\xed\xa0\x80", 15, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char out[16];
		struct syslog_slice sl = { t[i].in, strlen(t[i].in) };
		size_t n = syslog_clean(&sl, out, t[i].max);
		ck_assert_msg(n <= t[i].max, "%zu: %zu bytes", i, n);
		ck_assert_msg(strcmp(out, t[i].want) == 0, "%zu: got \"%s\"", i, out);
		json_t *j = json_stringn(out, n);
		ck_assert_msg(j != NULL, "%zu: jansson refuses it", i);
		json_decref(j);
	}
}
END_TEST

/* The event message: "<severity> <app>[<pid>]: <text>"; a cut of any
 * part is reported, so that the server counts it. */
START_TEST(test_event_text)
{
	static const struct {
		const char *in;
		size_t max;
		const char *want;
		bool cut;
	} t[] = {
		{ "<13>Nov 24 23:50:01 node1 tag[1234]: hello", 480, "notice tag[1234]: hello",
		  false },
		{ "<11>just text", 480, "err -: just text", false },
		{ "<14>tag: 0123456789", 8, "info tag: 01234...", true },
		/* RFC 5424 allows a 48-byte APP-NAME and a 128-byte PROCID */
		{ "<13>1 - h aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1 - - x",
		  480, "notice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...[1]: x",
		  true },
		{ "<13>1 - h app 123456789012345678901234567890 - - x", 480,
		  "notice app[12345678901234567890...]: x", true },
		{ "<13>1 - h \xff\x1b 1 - - \xc3", 480, "notice \xef\xbf\xbd?[1]: \xef\xbf\xbd",
		  false },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct syslog_msg m;
		enum syslog_bad why;
		char out[SYSLOG_EVENT_PREFIX_MAX + 480 + 1];
		bool cut = !t[i].cut;
		ck_assert_int_eq(syslog_parse((const uint8_t *)t[i].in, strlen(t[i].in), &m, &why),
				 0);
		size_t n = syslog_event_text(&m, out, t[i].max, &cut);
		ck_assert_msg(strcmp(out, t[i].want) == 0, "%zu: got \"%s\"", i, out);
		ck_assert_uint_eq(n, strlen(out));
		ck_assert_msg(cut == t[i].cut, "%zu: cut %d", i, cut);
	}
}
END_TEST

/* ---- the server, from settings built by hand ---- */

#define SERVER_PORT_TRIES 64 /* ports tried for a free one */
#define SERVER_WAIT_ROUNDS 500 /* rounds of 10 ms waiting for an event */

/* Sends text to port on 127.0.0.1 from a socket bound to the address
 * from (so the server sees that source). */
static void send_from(const char *from, uint16_t port, const char *text)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(inet_pton(AF_INET, from, &src.sin_addr), 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	dst.sin_port = htons(port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(sendto(fd, text, strlen(text), 0, (struct sockaddr *)&dst, sizeof(dst)),
			 (ssize_t)strlen(text));
	close(fd);
}

/* The string member key of o, or NULL. */
static const char *str_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The events of every object, oldest first, once there are at least want
 * of them (a bounded wait: the server and the store's writer run on their
 * own threads). */
static json_t *wait_events(size_t want)
{
	json_t *ev = NULL;
	for (int i = 0; i < SERVER_WAIT_ROUNDS; i++) {
		json_decref(ev);
		ev = NULL;
		ck_assert_int_eq(store_sync(st), 0);
		ck_assert_int_eq(store_events(rd, 0, STORE_KIND_MAX, NULL, NULL, 100, &ev), 0);
		if (json_array_size(ev) >= want)
			break;
		poll(NULL, 0, 10);
	}
	return ev;
}

START_TEST(test_server_from_settings)
{
	struct syslog_settings set = { .listen = "no port", .rate = 50, .burst = 200,
				       .max_message = 480 };
	struct syslog_server *srv = NULL;
	char listen[32], err[256] = "";
	uint16_t port = 0;
	int e = -EADDRINUSE;

	/* a Hardware that owns 127.0.0.1, where the datagrams come from */
	json_t *hw = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:{s:s, s:{s:s, s:s}}}]}}",
			       "apiVersion", "tinkerbell.org/v1alpha1", "kind", "Hardware",
			       "metadata", "name", "m1", "namespace", "default", "spec",
			       "interfaces", "dhcp", "mac", "52:54:00:00:00:01", "ip", "address",
			       "127.0.0.1", "netmask", "255.0.0.0");
	struct store_op op = { .type = STORE_OP_CREATE, .kind = STORE_KIND_HARDWARE, .body = hw };
	ck_assert_msg(store_write1(st, &op) == 0, "%s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(hw);

	/* a listen address that is not host:port is refused, with why */
	ck_assert_int_eq(syslog_server_new(st, &set, &srv, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(srv);
	ck_assert_msg(strstr(err, "\"no port\"") != NULL, "%s", err);

	/* a free port on the loopback */
	for (unsigned k = 0; k < SERVER_PORT_TRIES && e == -EADDRINUSE; k++) {
		port = (uint16_t)(20000 + ((unsigned)getpid() * 7 + k * 131) % 40000);
		snprintf(listen, sizeof(listen), "127.0.0.1:%u", port);
		set.listen = listen;
		e = syslog_server_new(st, &set, &srv, err, sizeof(err));
	}
	ck_assert_msg(e == 0, "%s", err);
	/* the settings were copied: the caller's may go */
	memset(listen, 0, sizeof(listen));
	set.listen = NULL;
	ck_assert_int_eq(syslog_server_start(srv, err, sizeof(err)), 0);

	/* from 127.0.0.2, which no Hardware owns: not kept; then from
	 * 127.0.0.1. One socket receives both in order, so once the second
	 * is an event the first has been handled. */
	send_from("127.0.0.2", port, "<13>Nov 24 23:50:01 stray tag: nobody's");
	send_from("127.0.0.1", port, "<12>Nov 24 23:50:01 node1 tink-agent[42]: action done");
	json_t *ev = wait_events(1);
	ck_assert_uint_eq(json_array_size(ev), 1);
	const json_t *e0 = json_array_get(ev, 0);
	ck_assert_str_eq(str_of(e0, "kind"), "Hardware");
	ck_assert_str_eq(str_of(e0, "namespace"), "default");
	ck_assert_str_eq(str_of(e0, "name"), "m1");
	ck_assert_str_eq(str_of(e0, "reason"), "Syslog");
	ck_assert_str_eq(str_of(e0, "type"), "Warning");
	ck_assert_str_eq(str_of(e0, "message"), "warning tink-agent[42]: action done");
	json_decref(ev);
	syslog_server_free(srv);
}
END_TEST

static Suite *syslog_suite(void)
{
	Suite *s = suite_create("syslog");
	TCase *tc = tcase_create("codec");
	tcase_add_loop_test(tc, test_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_malformed, 0, sizeof(bad) / sizeof(bad[0]));
	UNIT_TEST(tc, test_nul_inside);
	UNIT_TEST(tc, test_clean);
	UNIT_TEST(tc, test_clean_utf8);
	UNIT_TEST(tc, test_event_text);
	suite_add_tcase(s, tc);
	tc = tcase_create("server");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	UNIT_TEST(tc, test_server_from_settings);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(syslog_suite());
}
