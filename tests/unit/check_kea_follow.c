/* check_kea_follow — the Kea hook's store follower (dhcp/kea/follow-store.c)
 * on a real store that this process writes: the first load, a change
 * followed from the change log, an interface the table refuses (logged,
 * the others served), a file replaced under the follower (loaded again),
 * a file removed (not ready, table empty), and a bounded stop. Every wait
 * is a bounded loop. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "dhcp/kea/ironbell-kea.h"

#define FIXTURE_NAME "check_kea_follow"
#include "tests/unit/store_fixture.h"
#include "tests/unit/unit.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define WAIT_MS 20000 /* the longest any condition is waited for */

static const uint8_t mac1[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t mac2[6] = { 2, 0, 0, 0, 0, 2 };

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_text[16384];

static void log_capture(enum ibkea_log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	pthread_mutex_lock(&log_mu);
	size_t n = strlen(log_text);
	snprintf(log_text + n, sizeof(log_text) - n, "%s: %s\n",
		 (unsigned)level < IBKEA_LOG_MAX ? names[level] : "?", msg);
	pthread_mutex_unlock(&log_mu);
}

static bool logged(const char *s)
{
	pthread_mutex_lock(&log_mu);
	bool r = strstr(log_text, s) != NULL;
	pthread_mutex_unlock(&log_mu);
	return r;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Waits, at most WAIT_MS, until cond(k) holds. */
#define WAIT_UNTIL(cond)                                                                           \
	do {                                                                                       \
		for (int i_ = 0; i_ < WAIT_MS / 10 && !(cond); i_++)                               \
			sleep_ms(10);                                                              \
		ck_assert_msg((cond), "not within %d ms: %s\nlog:\n%s", WAIT_MS, #cond, log_text); \
	} while (0)

/* A Hardware with one interface; hostname NULL: none. */
static void put_hw(struct store *s, const char *name, const char *mac, const char *ip,
		   const char *hostname)
{
	json_t *dhcp = json_pack("{s:s, s:{s:s, s:s}}", "mac", mac, "ip", "address", ip, "netmask",
				 "255.255.255.0");
	if (hostname)
		json_object_set_new(dhcp, "hostname", json_string(hostname));
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:o}]}}", "apiVersion",
			      "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name",
			      name, "namespace", "default", "spec", "interfaces", "dhcp", dhcp);
	struct store_op op = { .type = STORE_OP_APPLY, .kind = STORE_KIND_HARDWARE, .body = o };
	int e = store_write1(s, &op);
	ck_assert_msg(e == 0, "store_write1: %d %s", e, store_op_message(&op));
	store_op_clear(&op);
	json_decref(o);
}

static struct ibkea *start(void)
{
	char js[1024], err[256];
	struct ibkea_params p;
	struct ibkea *k = NULL;

	snprintf(js, sizeof(js), "{\"store\":\"%s\",\"poll-interval-ms\":10}", dbpath);
	ck_assert_int_eq(ibkea_params_parse(js, strlen(js), &p, err, sizeof(err)), 0);
	log_text[0] = '\0';
	ck_assert_int_eq(ibkea_new(&p, log_capture, &k, err, sizeof(err)), 0);
	return k;
}

static uint32_t ip_of(struct ibkea *k, const uint8_t *mac)
{
	struct ibkea_reservation r;
	return ibkea_by_mac(k, mac, &r) == 0 ? r.ip : 0;
}

START_TEST(test_load_and_follow)
{
	char longname[DHCP_HOST_STRING_MAX + 2];
	struct ibkea *k;

	put_hw(st, "a", "02:00:00:00:00:01", "10.0.0.1", "a");
	k = start();
	WAIT_UNTIL(ibkea_ready(k));
	ck_assert_uint_eq(ibkea_count(k), 1);
	ck_assert_uint_eq(ip_of(k, mac1), IP(10, 0, 0, 1));
	ck_assert(logged("info: 1 Hardware interfaces loaded from "));
	/* Polls that find no change leave the generation (what Kea's
	 * cached Hosts hold for) where it is: 20 polls of 10 ms. */
	uint64_t gen = ibkea_generation(k);
	usleep(200 * 1000);
	ck_assert_uint_eq(ibkea_generation(k), gen);
	/* A change, from the change log, moves it. */
	put_hw(st, "b", "02:00:00:00:00:02", "10.0.0.2", "b");
	WAIT_UNTIL(ip_of(k, mac2) == IP(10, 0, 0, 2));
	ck_assert_uint_gt(ibkea_generation(k), gen);
	put_hw(st, "a", "02:00:00:00:00:01", "10.0.0.11", "a");
	WAIT_UNTIL(ip_of(k, mac1) == IP(10, 0, 0, 11));
	/* An interface the table refuses: logged, not served. */
	memset(longname, 'h', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	put_hw(st, "b", "02:00:00:00:00:02", "10.0.0.2", longname);
	WAIT_UNTIL(logged("warn: hardware default/b: an interface is not served by DHCP"));
	WAIT_UNTIL(ip_of(k, mac2) == 0);
	ck_assert_uint_eq(ip_of(k, mac1), IP(10, 0, 0, 11));
	/* A delete. */
	struct store_op op = { .type = STORE_OP_DELETE,
			       .kind = STORE_KIND_HARDWARE,
			       .namespace_ = "default",
			       .name = "a" };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	WAIT_UNTIL(ibkea_count(k) == 0);
	ck_assert(ibkea_ready(k));
	ibkea_free(k);
}
END_TEST

/* Another store renamed over the path: loaded again; the path removed:
 * not ready, empty. */
START_TEST(test_replaced_and_removed)
{
	char other[600], err[256];
	struct store *s2 = NULL;
	struct ibkea *k;

	put_hw(st, "a", "02:00:00:00:00:01", "10.0.0.1", NULL);
	k = start();
	WAIT_UNTIL(ibkea_ready(k) && ibkea_count(k) == 1);
	snprintf(other, sizeof(other), "%s/other.db", dir);
	ck_assert_int_eq(store_open(other, NULL, &s2, err, sizeof(err)), 0);
	put_hw(s2, "b", "02:00:00:00:00:02", "10.0.0.2", NULL);
	store_close(s2);
	/* As a restore is done: the writer stopped, the file replaced, the
	 * old write-ahead log and its index removed with it. */
	close_store();
	ck_assert_int_eq(rename(other, dbpath), 0);
	for (const char *x = "-wal"; x; x = strcmp(x, "-wal") == 0 ? "-shm" : NULL) {
		char aux[600];
		snprintf(aux, sizeof(aux), "%s%s", dbpath, x);
		unlink(aux);
	}
	WAIT_UNTIL(ip_of(k, mac2) == IP(10, 0, 0, 2));
	WAIT_UNTIL(ip_of(k, mac1) == 0);
	ck_assert(logged("the file changed"));
	ck_assert(ibkea_ready(k));
	ck_assert_int_eq(unlink(dbpath), 0);
	WAIT_UNTIL(!ibkea_ready(k));
	ck_assert_uint_eq(ibkea_count(k), 0);
	WAIT_UNTIL(logged("No such file or directory"));
	ibkea_free(k);
}
END_TEST

/* Changes dropped by retention before the follower read them: it loads
 * every Hardware again. One atomic write of five Hardware is one commit,
 * which trims the change log to its last two rows at once. */
START_TEST(test_retention)
{
	struct store_options o = { .changes_retention = 2 };
	struct store_op ops[5];
	json_t *objs[5];
	struct ibkea *k;

	close_store();
	open_store(&o);
	put_hw(st, "a", "02:00:00:00:00:01", "10.0.0.1", NULL);
	k = start();
	WAIT_UNTIL(ibkea_ready(k) && ibkea_count(k) == 1);
	for (int i = 0; i < 5; i++) {
		char name[16], mac[24], ip[24];
		snprintf(name, sizeof(name), "n%d", i);
		snprintf(mac, sizeof(mac), "02:00:00:00:01:%02x", i);
		snprintf(ip, sizeof(ip), "10.0.1.%d", i + 1);
		objs[i] = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:{s:s, s:{s:s}}}]}}",
				    "apiVersion", "tinkerbell.org/v1alpha1", "kind", "Hardware",
				    "metadata", "name", name, "namespace", "default", "spec",
				    "interfaces", "dhcp", "mac", mac, "ip", "address", ip);
		ops[i] = (struct store_op){ .type = STORE_OP_APPLY,
					    .kind = STORE_KIND_HARDWARE,
					    .body = objs[i] };
	}
	ck_assert_int_eq(store_write(st, ops, 5, true), 0);
	for (int i = 0; i < 5; i++) {
		store_op_clear(&ops[i]);
		json_decref(objs[i]);
	}
	WAIT_UNTIL(ibkea_count(k) == 6);
	ck_assert(logged("warn: store "));
	ck_assert(logged("dropped by retention"));
	ck_assert(ibkea_ready(k));
	ibkea_free(k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kea_follow");
	TCase *tc = tcase_create("follow");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	UNIT_TEST(tc, test_load_and_follow);
	UNIT_TEST(tc, test_replaced_and_removed);
	UNIT_TEST(tc, test_retention);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
