/* check_kea_core — the Kea hook's core (dhcp/kea/core.c): the table, the
 * lookups, and the answer to every kind of request, built byte by byte.
 *
 * The point of the hook is that Kea's answers carry the decisions
 * ironbelld's own server would take: every APPLIED answer is checked
 * against what dhcp_policy() gives for the same request and Hardware in
 * reservation mode, with ironbelld's default configuration for the
 * server's address. The cores here have no follower thread: the test
 * fills the table itself, through the functions a follower uses.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp.h"
#include "dhcp/kea/kea-internal.h"
#include "tests/unit/dhcp_builder.h"
#include "tests/unit/unit.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define SERVER IP(10, 0, 0, 1) /* Kea's server identifier */
#define HOST_IP IP(10, 0, 0, 50)

/* m1: every option and a lease time; m2: allowPXE false, no lease time;
 * m3: disableDhcp; m4: no address (Kea's pool gives one). */
static const uint8_t mac1[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t mac2[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x57 };
static const uint8_t mac3[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x58 };
static const uint8_t mac4[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x59 };
static const uint8_t mac_unknown[6] = { 0x52, 0x54, 0x00, 0x99, 0x99, 0x99 };

static const char hw1[] =
	"{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Hardware\","
	"\"metadata\":{\"name\":\"m1\",\"namespace\":\"prov\"},"
	"\"spec\":{\"interfaces\":["
	"{\"dhcp\":{\"mac\":\"52:54:00:12:34:56\",\"hostname\":\"m1\","
	"\"domain_name\":\"lab.example\",\"lease_time\":3600,"
	"\"name_servers\":[\"10.0.0.2\",\"10.0.0.3\"],\"time_servers\":[\"10.0.0.4\"],"
	"\"ip\":{\"address\":\"10.0.0.50\",\"netmask\":\"255.255.255.0\","
	"\"gateway\":\"10.0.0.254\"},"
	"\"classless_static_routes\":[{\"destination_descriptor\":\"192.168.0.0/16\","
	"\"router\":\"10.0.0.253\"}]},"
	"\"netboot\":{\"allowPXE\":true}},"
	"{\"dhcp\":{\"mac\":\"52:54:00:12:34:58\",\"ip\":{\"address\":\"10.0.0.52\"}},"
	"\"disableDhcp\":true}]}}";
static const char hw2[] = "{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Hardware\","
			  "\"metadata\":{\"name\":\"m2\",\"namespace\":\"prov\"},"
			  "\"spec\":{\"interfaces\":["
			  "{\"dhcp\":{\"mac\":\"52:54:00:12:34:57\",\"hostname\":\"m2\","
			  "\"ip\":{\"address\":\"10.0.0.51\",\"netmask\":\"255.255.255.0\"}},"
			  "\"netboot\":{\"allowPXE\":false}},"
			  "{\"dhcp\":{\"mac\":\"52:54:00:12:34:59\",\"hostname\":\"m4\"},"
			  "\"netboot\":{\"allowPXE\":true}}]}}";

static json_t *load_json(const char *s)
{
	json_error_t jerr;
	json_t *j = json_loads(s, 0, &jerr);
	ck_assert_msg(j != NULL, "bad test JSON: %s", jerr.text);
	return j;
}

/* ---- the log ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_text[8192];

static void log_capture(enum ibkea_log_level level, const char *msg)
{
	(void)level;
	pthread_mutex_lock(&log_mu);
	size_t n = strlen(log_text);
	snprintf(log_text + n, sizeof(log_text) - n, "%s\n", msg);
	pthread_mutex_unlock(&log_mu);
}

/* ---- a core without a follower ---- */

static struct ibkea_params params;

/* What ibkea_new() makes, without the thread: the test is the follower. */
static struct ibkea *core_new(void)
{
	char err[256];
	struct ibkea *k = calloc(1, sizeof(*k));
	pthread_condattr_t ca;

	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(ibkea_params_parse(NULL, 0, &k->p, err, sizeof(err)), 0);
	k->log = log_capture;
	k->hosts = dhcp_hosts_new();
	ck_assert_ptr_nonnull(k->hosts);
	pthread_rwlock_init(&k->lock, NULL);
	pthread_mutex_init(&k->stop_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->stop_cv, &ca);
	pthread_condattr_destroy(&ca);
	params = k->p;
	return k;
}

/* A table of hw1 and hw2, swapped in. */
static struct ibkea *core_loaded(void)
{
	struct ibkea *k = core_new();
	struct dhcp_hosts *t = dhcp_hosts_new();
	json_t *a = load_json(hw1), *b = load_json(hw2);
	char err[256];

	ck_assert_int_eq(dhcp_hosts_put(t, a, err, sizeof(err)), 2);
	ck_assert_int_eq(dhcp_hosts_put(t, b, err, sizeof(err)), 2);
	json_decref(a);
	json_decref(b);
	ibkea_table_replace(k, t);
	return k;
}

/* ---- requests ---- */

static struct tp q;

/* Header, cookie and option 53 of a BOOTREQUEST from mac. */
static void q_start(const uint8_t *mac, uint8_t type, uint32_t ciaddr)
{
	q.len = 0;
	tp_byte(&q, DHCP_BOOTREQUEST);
	tp_byte(&q, 1);
	tp_byte(&q, 6);
	tp_byte(&q, 0);
	tp_be32(&q, 0x01020304);
	tp_be32(&q, 0); /* secs, flags */
	tp_be32(&q, ciaddr);
	tp_be32(&q, 0);
	tp_be32(&q, 0);
	tp_be32(&q, 0);
	tp_bytes(&q, mac, 6);
	while (q.len < DHCP_FIXED_LEN)
		tp_byte(&q, 0);
	tp_be32(&q, DHCP_MAGIC);
	tp_opt(&q, DHCP_OPT_MESSAGE_TYPE, 1, type);
	tp_opt(&q, DHCP_OPT_CLIENT_ID, 7, 1, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

static void q_ip(uint8_t code, uint32_t ip)
{
	tp_byte(&q, code);
	tp_byte(&q, 4);
	tp_be32(&q, ip);
}

/* The options of a PXE or HTTP boot client (60, 93, 94, 97, 55), and a
 * user class when not NULL. */
static void q_pxe(const char *vendor, uint16_t arch, const char *user_class)
{
	static const uint8_t guid[17] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
	};
	tp_opt(&q, 55, 9, 1, 3, 6, 12, 15, 43, 60, 66, 67);
	tp_opt_str(&q, 60, vendor);
	tp_opt(&q, 93, 2, arch >> 8, arch & 0xff);
	tp_opt(&q, 94, 3, 1, 3, 16);
	tp_byte(&q, 97);
	tp_byte(&q, 17);
	tp_bytes(&q, guid, 17);
	if (user_class)
		tp_opt_str(&q, 77, user_class);
}

static void q_end(void)
{
	tp_byte(&q, DHCP_OPT_END);
}

/* ---- answers ---- */

static struct ibkea_answer ans;

static void answer(struct ibkea *k, enum dhcp_msg_type type, uint32_t yiaddr)
{
	struct ibkea_kea_reply kea = {
		.type = type, .yiaddr = yiaddr, .server_id = SERVER
	};
	ibkea_answer_request(k, q.b, q.len, &kea, &ans);
	ck_assert_ptr_nonnull(ans.why);
}

static const struct ibkea_option *set_of(uint8_t code)
{
	for (size_t i = 0; i < ans.nset; i++)
		if (ans.set[i].code == code)
			return &ans.set[i];
	return NULL;
}

static bool del_has(uint8_t code)
{
	for (size_t i = 0; i < ans.ndel; i++)
		if (ans.del[i] == code)
			return true;
	return false;
}

static void set_str_eq(uint8_t code, const char *want)
{
	const struct ibkea_option *o = set_of(code);
	ck_assert_msg(o != NULL, "option %u not set", code);
	ck_assert_uint_eq(o->len, strlen(want));
	ck_assert_mem_eq(o->data, want, o->len);
}

/* An answer that leaves Kea's reply alone. */
static void untouched(enum ibkea_outcome want, const char *why)
{
	ck_assert_msg(ans.outcome == want, "outcome %s, want %s (%s)",
		      ibkea_outcome_name(ans.outcome), ibkea_outcome_name(want), ans.why);
	ck_assert_uint_eq(ans.nset, 0);
	ck_assert_uint_eq(ans.ndel, 0);
	if (why)
		ck_assert_str_eq(ans.why, why);
}

/* The same request decided by dhcp_policy() itself, for hw's interface
 * mac, in reservation mode with ironbelld's defaults for SERVER (yiaddr:
 * the address of an interface that reserves none): every boot field and
 * option of the APPLIED answer must be the policy's, and every option of
 * the policy's but those Kea keeps must be in the answer. */
static void same_as_policy(const char *hw, const uint8_t *mac, uint32_t yiaddr)
{
	static struct dhcp_packet req;
	static struct dhcp_reply rep;
	static struct dhcp_host host;
	static struct dhcp_policy_config cfg;
	struct dhcp_decision d;
	json_t *j = load_json(hw);

	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_int_eq(dhcp_host_from_hardware(j, mac, &host, NULL, 0), 0);
	json_decref(j);
	if (!host.ip)
		host.ip = yiaddr;
	dhcp_policy_config_default(&cfg, SERVER);
	ck_assert_int_eq(dhcp_parse(q.b, q.len, &req, NULL), 0);
	ck_assert_int_eq(dhcp_policy(&req, 67, &host, NULL, &cfg, &rep, &d), 1);
	ck_assert_int_eq(ans.boot, d.boot);
	ck_assert_uint_eq(ans.siaddr, rep.siaddr);
	ck_assert_mem_eq(ans.sname, rep.sname, sizeof(ans.sname));
	ck_assert_mem_eq(ans.file, rep.file, sizeof(ans.file));
	for (unsigned code = 1; code < 255; code++) {
		bool kea_keeps = code == 53 || code == 54 || code == 61 || code == 82 ||
				 ((code == 51 || code == 58 || code == 59) && !host.lease_time);
		const struct ibkea_option *o = set_of((uint8_t)code);
		const uint8_t *data;
		size_t len;
		if (!dhcp_reply_has(&rep, (uint8_t)code) || kea_keeps) {
			ck_assert_msg(o == NULL, "option %u set", code);
			continue;
		}
		ck_assert_msg(o != NULL, "option %u of the policy's reply not set", code);
		data = rep.opts.data + rep.opts.off[code];
		len = rep.opts.len[code];
		ck_assert_uint_eq(o->len, len);
		ck_assert_mem_eq(o->data, data, len);
	}
	for (unsigned code = 0; code < 255; code++)
		if (code == 43 || code == 60 || code == 66 || code == 67)
			ck_assert_int_eq(del_has((uint8_t)code),
					 !dhcp_reply_has(&rep, (uint8_t)code));
		else
			ck_assert(!del_has((uint8_t)code));
}

/* ---- tests ---- */

START_TEST(test_bios_pxe)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_PXE_BINARY);
	ck_assert_mem_eq(ans.mac, mac1, 6);
	ck_assert_uint_eq(ans.siaddr, SERVER);
	ck_assert_str_eq((const char *)ans.file, "undionly.kpxe");
	set_str_eq(66, "10.0.0.1");
	set_str_eq(67, "undionly.kpxe");
	ck_assert_ptr_nonnull(set_of(43));
	ck_assert(del_has(60)); /* reservation mode: no PXEClient echo */
	ck_assert(!set_of(53) && !set_of(54) && !set_of(61));
	same_as_policy(hw1, mac1, 0);
	ibkea_free(k);
}
END_TEST

START_TEST(test_efi)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00007:UNDI:003016", 7, NULL);
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_PXE_BINARY);
	set_str_eq(67, "ipxe.efi");
	same_as_policy(hw1, mac1, 0);
	ibkea_free(k);
}
END_TEST

START_TEST(test_ipxe_script)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_REQUEST, 0);
	q_ip(DHCP_OPT_SERVER_ID, SERVER);
	q_ip(DHCP_OPT_REQUESTED_IP, HOST_IP);
	q_pxe("PXEClient:Arch:00007:UNDI:003016", 7, "iPXE");
	q_end();
	answer(k, DHCP_ACK, HOST_IP);
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_IPXE_SCRIPT);
	set_str_eq(67, "http://10.0.0.1:7080/ipxe/script/52:54:00:12:34:56/auto.ipxe");
	ck_assert(del_has(66));
	same_as_policy(hw1, mac1, 0);
	ibkea_free(k);
}
END_TEST

START_TEST(test_http_boot)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_DISCOVER, 0);
	q_pxe("HTTPClient:Arch:00016:UNDI:003016", 16, NULL);
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_HTTP_BOOT);
	set_str_eq(60, "HTTPClient");
	set_str_eq(67, "http://10.0.0.1:7080/ipxe/binary/52:54:00:12:34:56/ipxe.efi");
	same_as_policy(hw1, mac1, 0);
	ibkea_free(k);
}
END_TEST

START_TEST(test_not_allowed)
{
	struct ibkea *k = core_loaded();
	q_start(mac2, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	q_end();
	answer(k, DHCP_OFFER, IP(10, 0, 0, 51));
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_NOT_ALLOWED);
	set_str_eq(67, "/netboot-not-allowed");
	ck_assert_uint_eq(ans.siaddr, 0);
	same_as_policy(hw2, mac2, 0);
	ibkea_free(k);
}
END_TEST

/* A plain DHCP client: the Hardware's network options, its lease time
 * (51, 58, 59 set), no boot information (43, 60, 66, 67 removed from
 * Kea's). */
START_TEST(test_hardware_options)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_DISCOVER, 0);
	tp_opt(&q, 55, 6, 1, 3, 6, 12, 15, 121);
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_NONE);
	ck_assert_uint_eq(ans.siaddr, 0);
	ck_assert_uint_eq(ans.file[0], 0);
	set_str_eq(12, "m1");
	set_str_eq(15, "lab.example");
	ck_assert_mem_eq(set_of(3)->data, "\x0a\x00\x00\xfe", 4);
	ck_assert_uint_eq(set_of(6)->len, 8);
	ck_assert_mem_eq(set_of(1)->data, "\xff\xff\xff\x00", 4);
	ck_assert_mem_eq(set_of(121)->data, "\x10\xc0\xa8\x0a\x00\x00\xfd", 7);
	ck_assert_mem_eq(set_of(51)->data, "\x00\x00\x0e\x10", 4); /* 3600 */
	ck_assert_ptr_nonnull(set_of(58));
	ck_assert_ptr_nonnull(set_of(59));
	ck_assert(del_has(43) && del_has(60) && del_has(66) && del_has(67));
	same_as_policy(hw1, mac1, 0);
	ck_assert_uint_eq(ibkea_lease_time(k, mac1, HOST_IP), 3600);
	/* A lease of another address (Kea's pool, not the reservation)
	 * keeps Kea's lease time. */
	ck_assert_uint_eq(ibkea_lease_time(k, mac1, HOST_IP + 1), 0);
	ibkea_free(k);
}
END_TEST

/* No lease time on the Hardware: Kea's 51, 58 and 59 stay. */
START_TEST(test_kea_lease_time)
{
	struct ibkea *k = core_loaded();
	q_start(mac2, DHCP_DISCOVER, 0);
	q_end();
	answer(k, DHCP_OFFER, IP(10, 0, 0, 51));
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert(!set_of(51) && !set_of(58) && !set_of(59));
	set_str_eq(12, "m2");
	same_as_policy(hw2, mac2, 0);
	ck_assert_uint_eq(ibkea_lease_time(k, mac2, HOST_IP), 0);
	ibkea_free(k);
}
END_TEST

/* An interface without an address: decided with Kea's. */
START_TEST(test_no_reserved_address)
{
	struct ibkea *k = core_loaded();
	q_start(mac4, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	q_end();
	answer(k, DHCP_OFFER, IP(10, 0, 0, 130));
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_PXE_BINARY);
	same_as_policy(hw2, mac4, IP(10, 0, 0, 130));
	ibkea_free(k);
}
END_TEST

START_TEST(test_unknown_mac)
{
	struct ibkea *k = core_loaded();
	q_start(mac_unknown, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	untouched(IBKEA_NOT_OURS, "unknown-mac");
	ck_assert_mem_eq(ans.mac, mac_unknown, 6);
	ibkea_free(k);
}
END_TEST

START_TEST(test_disabled)
{
	struct ibkea *k = core_loaded();
	struct ibkea_reservation r;
	q_start(mac3, DHCP_DISCOVER, 0);
	q_end();
	answer(k, DHCP_OFFER, IP(10, 0, 0, 52));
	untouched(IBKEA_NOT_OURS, "dhcp-disabled");
	ck_assert_int_eq(ibkea_by_mac(k, mac3, &r), -ENOENT);
	ck_assert_uint_eq(ibkea_lease_time(k, mac3, HOST_IP), 0);
	ibkea_free(k);
}
END_TEST

START_TEST(test_mismatch_address)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_DISCOVER, 0);
	q_end();
	answer(k, DHCP_OFFER, IP(10, 0, 0, 99));
	untouched(IBKEA_MISMATCH, "offer");
	ibkea_free(k);
}
END_TEST

START_TEST(test_mismatch_type)
{
	struct ibkea *k = core_loaded();
	/* ironbelld ACKs the reserved address that Kea NAKs. */
	q_start(mac1, DHCP_REQUEST, 0);
	q_ip(DHCP_OPT_REQUESTED_IP, HOST_IP);
	q_end();
	answer(k, DHCP_NAK, 0);
	untouched(IBKEA_MISMATCH, "ack");
	/* Kea OFFERs what ironbelld ACKs. */
	answer(k, DHCP_OFFER, HOST_IP);
	untouched(IBKEA_MISMATCH, "ack");
	ibkea_free(k);
}
END_TEST

/* Both NAK a request for another address: Kea's NAK stays as it is. */
START_TEST(test_nak_untouched)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_REQUEST, 0);
	q_ip(DHCP_OPT_REQUESTED_IP, IP(10, 0, 0, 77));
	q_end();
	answer(k, DHCP_NAK, 0);
	untouched(IBKEA_NOT_OURS, "nak-wrong-address");
	ibkea_free(k);
}
END_TEST

/* ironbelld would not answer (a REQUEST for another server). */
START_TEST(test_silent)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_REQUEST, 0);
	q_ip(DHCP_OPT_SERVER_ID, IP(10, 0, 0, 9));
	q_ip(DHCP_OPT_REQUESTED_IP, HOST_IP);
	q_end();
	answer(k, DHCP_ACK, HOST_IP);
	untouched(IBKEA_SILENT, "wrong-server-id");
	ibkea_free(k);
}
END_TEST

START_TEST(test_malformed)
{
	struct ibkea *k = core_loaded();
	q_start(mac1, DHCP_DISCOVER, 0);
	q_end();
	q.len = 100; /* truncated header */
	answer(k, DHCP_OFFER, HOST_IP);
	untouched(IBKEA_MALFORMED, "truncated_header");
	/* An option running past the end. */
	q_start(mac1, DHCP_DISCOVER, 0);
	tp_byte(&q, 12);
	tp_byte(&q, 200);
	answer(k, DHCP_OFFER, HOST_IP);
	untouched(IBKEA_MALFORMED, NULL);
	ibkea_answer_request(k, NULL, 0,
			     &(struct ibkea_kea_reply){ .type = DHCP_OFFER, .server_id = SERVER },
			     &ans);
	untouched(IBKEA_MALFORMED, NULL);
	/* Not Ethernet. */
	q_start(mac1, DHCP_DISCOVER, 0);
	q_end();
	q.b[1] = 6;
	answer(k, DHCP_OFFER, HOST_IP);
	untouched(IBKEA_NOT_OURS, "not-ethernet");
	ibkea_free(k);
}
END_TEST

START_TEST(test_not_ready)
{
	struct ibkea *k = core_new();
	q_start(mac1, DHCP_DISCOVER, 0);
	q_end();
	ck_assert(!ibkea_ready(k));
	answer(k, DHCP_OFFER, HOST_IP);
	untouched(IBKEA_NOT_READY, "not-ready");
	/* A store gone: the table is emptied and not ready again. */
	ibkea_free(k);
	k = core_loaded();
	ck_assert(ibkea_ready(k));
	ck_assert_uint_eq(ibkea_count(k), 4);
	ibkea_table_replace(k, NULL);
	ck_assert(!ibkea_ready(k));
	ck_assert_uint_eq(ibkea_count(k), 0);
	answer(k, DHCP_OFFER, HOST_IP);
	untouched(IBKEA_NOT_READY, "not-ready");
	ibkea_free(k);
}
END_TEST

/* No server identifier from Kea and none configured: logged, untouched. */
START_TEST(test_no_server_id)
{
	struct ibkea *k = core_loaded();
	struct ibkea_kea_reply kea = { .type = DHCP_OFFER, .yiaddr = HOST_IP };
	q_start(mac1, DHCP_DISCOVER, 0);
	q_end();
	log_text[0] = '\0';
	ibkea_answer_request(k, q.b, q.len, &kea, &ans);
	untouched(IBKEA_ERROR, NULL);
	ck_assert_ptr_nonnull(strstr(log_text, "option 54"));
	ibkea_free(k);
}
END_TEST

/* Each of Kea's server identifiers has its own configuration (siaddr
 * and option 66 are the identifier's address by default), those kept
 * (IBKEA_CFG_SLOTS) and those past them alike, asked again in another
 * order; one that cannot have one is logged once, however often asked. */
START_TEST(test_server_ids)
{
	struct ibkea *k = core_loaded();
	char ip[16];

	q_start(mac1, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	q_end();
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < IBKEA_CFG_SLOTS + 4; i++) {
			uint32_t sid = IP(10, 0, 1, round ? IBKEA_CFG_SLOTS + 4 - i : i + 1);
			struct ibkea_kea_reply kea = { .type = DHCP_OFFER,
						       .yiaddr = HOST_IP,
						       .server_id = sid };
			ibkea_answer_request(k, q.b, q.len, &kea, &ans);
			ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
			ck_assert_uint_eq(ans.siaddr, sid);
			dhcp_ip_str(sid, ip);
			set_str_eq(66, ip);
		}
	}
	ibkea_free(k);

	k = core_loaded();
	log_text[0] = '\0';
	for (int i = 0; i < 3; i++) {
		struct ibkea_kea_reply kea = { .type = DHCP_OFFER, .yiaddr = HOST_IP };
		ibkea_answer_request(k, q.b, q.len, &kea, &ans);
		untouched(IBKEA_ERROR, NULL);
	}
	const char *first = strstr(log_text, "option 54");
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_null(strstr(first + 1, "option 54"));
	ibkea_free(k);
}
END_TEST

/* A public address and an arch entry from the parameters. */
START_TEST(test_params_used)
{
	static const char js[] =
		"{\"public-address\":\"192.0.2.7\",\"tftp-address\":\"192.0.2.8\","
		"\"arch\":{\"0\":\"custom.kpxe\"},\"syslog-address\":\"192.0.2.9\"}";
	struct ibkea *k = core_loaded();
	char err[256];
	ck_assert_int_eq(ibkea_params_parse(js, strlen(js), &k->p, err, sizeof(err)), 0);
	q_start(mac1, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_uint_eq(ans.siaddr, IP(192, 0, 2, 8));
	set_str_eq(66, "192.0.2.8");
	set_str_eq(67, "custom.kpxe");
	ck_assert_mem_eq(set_of(7)->data, "\xc0\x00\x02\x09", 4);
	q_start(mac1, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00007:UNDI:003016", 7, "iPXE");
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	set_str_eq(67, "http://192.0.2.7:7080/ipxe/script/52:54:00:12:34:56/auto.ipxe");
	ck_assert_uint_eq(ans.siaddr, IP(192, 0, 2, 7));
	ibkea_free(k);
}
END_TEST

/* "netboot": false: no boot information, Kea's boot options removed. */
START_TEST(test_netboot_off)
{
	static const char js[] = "{\"netboot\":false}";
	struct ibkea *k = core_loaded();
	char err[256];
	ck_assert_int_eq(ibkea_params_parse(js, strlen(js), &k->p, err, sizeof(err)), 0);
	q_start(mac1, DHCP_DISCOVER, 0);
	q_pxe("PXEClient:Arch:00000:UNDI:002001", 0, NULL);
	q_end();
	answer(k, DHCP_OFFER, HOST_IP);
	ck_assert_int_eq(ans.outcome, IBKEA_APPLIED);
	ck_assert_int_eq(ans.boot, DHCP_BOOT_NONE);
	ck_assert(del_has(43) && del_has(60) && del_has(66) && del_has(67));
	ibkea_free(k);
}
END_TEST

/* Marks m1 (bit 0) and m2 (bit 1). */
static int each_count(const struct ibkea_reservation *r, void *arg)
{
	unsigned *seen = arg;
	ck_assert(r->ip != 0);
	if (memcmp(r->mac, mac1, 6) == 0)
		*seen |= 1;
	else if (memcmp(r->mac, mac2, 6) == 0)
		*seen |= 2;
	else
		ck_abort_msg("reservation of an unexpected MAC");
	return 0;
}

static int each_stop(const struct ibkea_reservation *r, void *arg)
{
	(void)r;
	(void)arg;
	return 1;
}

START_TEST(test_lookups)
{
	struct ibkea *k = core_loaded();
	struct ibkea_reservation r;

	ck_assert_int_eq(ibkea_by_mac(k, mac1, &r), 0);
	ck_assert_mem_eq(r.mac, mac1, 6);
	ck_assert_uint_eq(r.ip, HOST_IP);
	ck_assert_uint_eq(r.netmask, IP(255, 255, 255, 0));
	ck_assert_str_eq(r.hostname, "m1");
	ck_assert_int_eq(ibkea_by_mac(k, mac4, &r), 0);
	ck_assert_uint_eq(r.ip, 0);
	ck_assert_int_eq(ibkea_by_mac(k, mac_unknown, &r), -ENOENT);
	ck_assert_uint_eq(ibkea_lease_time(k, mac_unknown, HOST_IP), 0);
	ck_assert_uint_eq(ibkea_count(k), 4);
	/* By address: m3 has one, but disableDhcp. */
	ck_assert_int_eq(ibkea_by_ip(k, IP(10, 0, 0, 51), &r), 0);
	ck_assert_mem_eq(r.mac, mac2, 6);
	ck_assert_str_eq(r.hostname, "m2");
	ck_assert_int_eq(ibkea_by_ip(k, IP(10, 0, 0, 52), &r), -ENOENT);
	ck_assert_int_eq(ibkea_by_ip(k, IP(10, 0, 0, 99), &r), -ENOENT);
	ck_assert_int_eq(ibkea_by_ip(k, 0, &r), -ENOENT);
	/* Each reservation with an address: m1 and m2. */
	unsigned seen = 0;
	ck_assert_uint_eq(ibkea_each(k, each_count, &seen), 2);
	ck_assert_uint_eq(seen, 0x3);
	seen = 0;
	ck_assert_uint_eq(ibkea_each(k, each_stop, &seen), 1);
	/* A batch of changes under the write lock: m2 deleted. */
	struct dhcp_hosts *t = ibkea_table_wrlock(k);
	dhcp_hosts_remove(t, "prov", "m2");
	ibkea_table_unlock(k);
	ck_assert_uint_eq(ibkea_count(k), 2);
	ck_assert_int_eq(ibkea_by_mac(k, mac2, &r), -ENOENT);
	ck_assert_int_eq(ibkea_by_ip(k, IP(10, 0, 0, 51), &r), -ENOENT);
	ibkea_free(k);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_NOT_OURS), "not-ours");
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_APPLIED), "applied");
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_SILENT), "silent");
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_MISMATCH), "mismatch");
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_NOT_READY), "not-ready");
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_MALFORMED), "malformed");
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_ERROR), "error");
	ck_assert_str_eq(ibkea_outcome_name(IBKEA_OUTCOME_MAX), "unknown");
	ck_assert_str_eq(ibkea_outcome_name((enum ibkea_outcome) - 1), "unknown");
}
END_TEST

/* ibkea_sleep() returns early, and true, once the hook stops. */
START_TEST(test_sleep_stop)
{
	struct ibkea *k = core_new();
	ck_assert(!ibkea_sleep(k, 1));
	ck_assert(!ibkea_stopping(k));
	atomic_store(&k->stop_flag, true);
	k->stopping = true;
	ck_assert(ibkea_stopping(k));
	ck_assert(ibkea_sleep(k, 600000)); /* would hang the test if it waited */
	ibkea_free(k);
}
END_TEST

/* The follower of a store that does not exist: not ready, says why,
 * and stops at once. */
START_TEST(test_new_missing_store)
{
	static const char js[] = "{\"store\":\"/nonexistent/ironbell.db\"}";
	struct ibkea_params p;
	struct ibkea *k = NULL;
	char err[256];

	ck_assert_int_eq(ibkea_params_parse(js, strlen(js), &p, err, sizeof(err)), 0);
	log_text[0] = '\0';
	ck_assert_int_eq(ibkea_new(&p, log_capture, &k, err, sizeof(err)), 0);
	/* Bounded: the follower logs before its first sleep. */
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&log_mu);
		bool seen = strstr(log_text, "/nonexistent/ironbell.db") != NULL;
		pthread_mutex_unlock(&log_mu);
		if (seen)
			break;
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	ck_assert_msg(strstr(log_text, "/nonexistent/ironbell.db"), "log: %s", log_text);
	ck_assert(!ibkea_ready(k));
	ck_assert_uint_eq(ibkea_count(k), 0);
	ibkea_free(k);
	ibkea_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kea_core");
	TCase *tc = tcase_create("core");
	UNIT_TEST(tc, test_bios_pxe);
	UNIT_TEST(tc, test_efi);
	UNIT_TEST(tc, test_ipxe_script);
	UNIT_TEST(tc, test_http_boot);
	UNIT_TEST(tc, test_not_allowed);
	UNIT_TEST(tc, test_hardware_options);
	UNIT_TEST(tc, test_kea_lease_time);
	UNIT_TEST(tc, test_no_reserved_address);
	UNIT_TEST(tc, test_unknown_mac);
	UNIT_TEST(tc, test_disabled);
	UNIT_TEST(tc, test_mismatch_address);
	UNIT_TEST(tc, test_mismatch_type);
	UNIT_TEST(tc, test_nak_untouched);
	UNIT_TEST(tc, test_silent);
	UNIT_TEST(tc, test_malformed);
	UNIT_TEST(tc, test_not_ready);
	UNIT_TEST(tc, test_no_server_id);
	UNIT_TEST(tc, test_server_ids);
	UNIT_TEST(tc, test_params_used);
	UNIT_TEST(tc, test_netboot_off);
	UNIT_TEST(tc, test_lookups);
	UNIT_TEST(tc, test_names);
	UNIT_TEST(tc, test_sleep_stop);
	UNIT_TEST(tc, test_new_missing_store);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
