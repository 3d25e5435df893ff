/* check_answers — the answer cache's index (daemon/public/answers.c)
 * against a model: Hardware created, changed, deleted, a MAC moved from
 * one Hardware to another, two interfaces, the change log trimmed past the
 * index (-ETIME: a relist); every MAC and address of a small universe is
 * looked up after each step and must name what the model says. The
 * answers of a record go with it. With ANSWERS_MEM_HARDWARE=N the memory
 * case fills the index with N Hardware and prints what they cost. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/num.h"
#include "daemon/public/answers.h"
#include "unit.h"

#define FIXTURE_NAME "ironbell-check-answers"
#include "store_fixture.h"

#define N_HW 6
#define N_MAC 10

static unsigned freed;

static void free_answer(void *p)
{
	free(p);
	freed++;
}

/* The model: which Hardware (index, -1: none) owns MAC i / address i. */
static int model_mac[N_MAC];
static int model_ip[N_MAC];
static bool model_exists[N_HW];

static void mac_text(unsigned i, char out[18])
{
	snprintf(out, 18, "52:54:00:00:00:%02x", i);
}

static void ip_text(unsigned i, char out[16])
{
	snprintf(out, 16, "10.0.0.%u", i + 1);
}

/* Writes Hardware h with the MACs (and their addresses) the model gives it. */
static void write_hw(unsigned h)
{
	char name[16], mac[18], ip[16];
	snprintf(name, sizeof(name), "hw%u", h);
	json_t *ifs = json_array();
	for (unsigned i = 0; i < N_MAC; i++) {
		if (model_mac[i] != (int)h)
			continue;
		mac_text(i, mac);
		ip_text(i, ip);
		json_array_append_new(ifs, json_pack("{s:{s:s, s:{s:s, s:s}}, s:{s:b}}", "dhcp",
						     "mac", mac, "ip", "address", ip, "netmask",
						     "255.255.255.0", "netboot", "allowPXE", 1));
	}
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:o}}", "apiVersion",
			      "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name",
			      name, "namespace", "default", "spec", "interfaces", ifs);
	struct store_op op = { .type = STORE_OP_APPLY, .kind = STORE_KIND_HARDWARE, .body = o };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	json_decref(o);
	model_exists[h] = true;
}

static void delete_hw(unsigned h)
{
	char name[16];
	snprintf(name, sizeof(name), "hw%u", h);
	struct store_op op = { .type = STORE_OP_DELETE,
			       .kind = STORE_KIND_HARDWARE,
			       .namespace_ = "default",
			       .name = name };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	model_exists[h] = false;
	for (unsigned i = 0; i < N_MAC; i++)
		if (model_mac[i] == (int)h)
			model_mac[i] = model_ip[i] = -1;
}

/* Every MAC and address names the model's Hardware. */
static void check_model(struct answers *a)
{
	char mac[18], ip[16], want[16];
	size_t n = 0;
	ck_assert_int_eq(answers_sync(a), 0);
	answers_rdlock(a);
	ck_assert(answers_usable(a, NULL));
	for (unsigned i = 0; i < N_MAC; i++) {
		mac_text(i, mac);
		ip_text(i, ip);
		const struct answers_rec *r = answers_find(a, ANSWERS_BY_MAC, mac);
		const struct answers_rec *r2 = answers_find(a, ANSWERS_BY_IP, ip);
		if (model_mac[i] < 0) {
			ck_assert_msg(!r, "%s: %s", mac, r ? r->name : "");
			ck_assert_msg(!r2, "%s: %s", ip, r2 ? r2->name : "");
			continue;
		}
		snprintf(want, sizeof(want), "hw%d", model_mac[i]);
		ck_assert_msg(r && strcmp(r->name, want) == 0, "%s: want %s", mac, want);
		ck_assert_msg(r2 == r, "%s: not %s's record", ip, want);
		ck_assert_str_eq(r->namespace_, "default");
	}
	answers_rdunlock(a);
	for (unsigned h = 0; h < N_HW; h++)
		n += model_exists[h];
	ck_assert_uint_eq(answers_records(a), n);
}

static void model_reset(void)
{
	for (unsigned i = 0; i < N_MAC; i++)
		model_mac[i] = model_ip[i] = -1;
	memset(model_exists, 0, sizeof(model_exists));
	freed = 0;
}

START_TEST(index_follows_the_model)
{
	model_reset();
	struct answers *a = answers_new(st, free_answer);
	ck_assert_ptr_nonnull(a);
	check_model(a); /* empty store */

	/* hw0 with two interfaces, hw1 with one. */
	model_mac[0] = model_mac[1] = 0;
	write_hw(0);
	model_mac[2] = 1;
	write_hw(1);
	check_model(a);

	/* MAC 1 moves from hw0 to hw1: given up first (the store keeps
	 * MACs unique), then taken, inside one batch of the follower. */
	model_mac[1] = -1;
	write_hw(0);
	model_mac[1] = 1;
	write_hw(1);
	check_model(a);

	/* A pseudo-random walk: each step changes or deletes one Hardware. */
	uint32_t x = 12345;
	for (unsigned step = 0; step < 200; step++) {
		x = x * 1103515245u + 12345u;
		unsigned h = (x >> 8) % N_HW, m = (x >> 16) % N_MAC;
		if ((x >> 24) % 5 == 0 && model_exists[h]) {
			delete_hw(h);
		} else {
			int from = model_mac[m];
			if (from >= 0 && from != (int)h) { /* move: the owner lets go first */
				model_mac[m] = -1;
				write_hw((unsigned)from);
			}
			model_mac[m] = model_mac[m] == (int)h && (x & 1) ? -1 : (int)h;
			write_hw(h);
		}
		if (step % 7 == 0)
			check_model(a);
	}
	check_model(a);
	answers_free(a);
}
END_TEST

START_TEST(answers_go_with_their_record)
{
	model_reset();
	struct answers *a = answers_new(st, free_answer);
	char mac[18];
	model_mac[0] = 0;
	write_hw(0);
	ck_assert_int_eq(answers_sync(a), 0);
	mac_text(0, mac);
	struct answers_key k = { .type = ANSWERS_SCRIPT, .pub = 1, .param = mac };
	struct answers_key k2 = { .type = ANSWERS_SCRIPT, .pub = 2, .param = mac };

	answers_rdlock(a);
	const struct answers_rec *r = answers_find(a, ANSWERS_BY_MAC, "52-54-00-00-00-00");
	ck_assert_ptr_nonnull(r); /* any separator, any case */
	ck_assert_ptr_null(answers_get(r, &k));
	answers_build_lock(r);
	ck_assert_int_eq(answers_put(r, &k, strdup("one"), 4), 0);
	answers_build_unlock(r);
	ck_assert_str_eq(answers_get(r, &k), "one");
	ck_assert_ptr_null(answers_get(r, &k2)); /* another public address */
	/* A full slot array: the caller keeps its answer. */
	for (unsigned i = 1; i < ANSWERS_SLOTS; i++) {
		struct answers_key ki = { .type = ANSWERS_EC2, .param = "x" };
		ki.pub = i;
		ck_assert_int_eq(answers_put(r, &ki, strdup("e"), 2), 0);
	}
	ck_assert_int_eq(answers_put(r, &k2, (void *)"kept", 5), -ENOSPC);
	ck_assert_uint_eq(answers_bytes(a), 4 + 2 * (ANSWERS_SLOTS - 1));
	answers_rdunlock(a);

	/* The configuration changes: every answer goes, the records stay. */
	answers_set_config(a, &k);
	ck_assert_uint_eq(freed, ANSWERS_SLOTS);
	ck_assert_uint_eq(answers_bytes(a), 0);
	answers_rdlock(a);
	ck_assert(!answers_usable(a, NULL));
	ck_assert(answers_usable(a, &k));
	r = answers_find(a, ANSWERS_BY_MAC, mac);
	ck_assert_ptr_null(answers_get(r, &k));
	ck_assert_int_eq(answers_put(r, &k, strdup("two"), 4), 0);
	answers_rdunlock(a);

	/* The Hardware changes: until the index follows, the cache is not
	 * usable; then a new record without the old answers. */
	model_mac[1] = 0;
	write_hw(0);
	answers_rdlock(a);
	ck_assert(!answers_usable(a, &k));
	answers_rdunlock(a);
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(freed, ANSWERS_SLOTS + 1);
	answers_rdlock(a);
	ck_assert(answers_usable(a, &k));
	r = answers_find(a, ANSWERS_BY_MAC, mac);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_null(answers_get(r, &k));
	ck_assert_uint_eq(r->n_ips, 2);
	ck_assert_uint_eq(answers_log_due(r, 1000), 1); /* the first: a line */
	ck_assert_uint_eq(answers_log_due(r, 2000), 0);
	ck_assert_uint_eq(answers_log_due(r, 3000), 0);
	ck_assert_uint_eq(answers_log_due(r, 1000 + ANSWERS_LOG_EVERY_NS), 3);
	answers_rdunlock(a);
	answers_free(a);
}
END_TEST

START_TEST(trimmed_log_relists)
{
	model_reset();
	close_store();
	struct store_options o = { .changes_retention = 2 };
	open_store(&o);
	struct answers *a = answers_new(st, free_answer);
	model_mac[0] = 0;
	write_hw(0);
	check_model(a);
	/* More changes than the log keeps: the follower must list again. */
	for (unsigned i = 1; i < N_MAC; i++) {
		model_mac[i] = (int)(i % 3);
		write_hw(i % 3);
	}
	delete_hw(2);
	check_model(a);
	answers_free(a);
}
END_TEST

/* The prebuild function of prebuild_sweeps: counts its calls by record,
 * checks what it is given, and keeps one answer, as the daemon's does. */
static unsigned pb_calls[N_HW];
static unsigned pb_macs[N_HW];

static void pb_fn(void *arg, struct answers *a, const struct answers_rec *rec,
		  struct store_reader *r)
{
	unsigned h;
	ck_assert_ptr_eq(arg, &pb_calls);
	ck_assert_ptr_nonnull(r);
	ck_assert(answers_config_is(a, NULL));
	ck_assert_int_eq(sscanf(rec->name, "hw%u", &h), 1);
	ck_assert_uint_lt(h, N_HW);
	pb_calls[h]++;
	pb_macs[h] = rec->n_macs;
	ck_assert_uint_eq(rec->n_macs, rec->n_ips);
	for (unsigned i = 0; i < rec->n_macs; i++) {
		static const uint8_t prefix[5] = { 0x52, 0x54, 0, 0, 0 };
		ck_assert_int_eq(memcmp(rec->macs[i], prefix, 5), 0);
	}
	if (!rec->n_macs)
		return;
	char mac[18];
	mac_text(rec->macs[0][5], mac);
	struct answers_key k = { .type = ANSWERS_SCRIPT, .pub = 7, .param = mac };
	answers_build_lock(rec);
	ck_assert_uint_lt(answers_held(rec), ANSWERS_SLOTS);
	if (!answers_get(rec, &k))
		ck_assert_int_eq(answers_put(rec, &k, strdup("made"), 5), 0);
	answers_build_unlock(rec);
}

/* The prebuild function is called once for every record at the first
 * sync, then only for records new or changed, and for every record again
 * after answers_prebuild_again() or a configuration change; what it made
 * is there for the request path. */
START_TEST(prebuild_sweeps)
{
	model_reset();
	memset(pb_calls, 0, sizeof(pb_calls));
	struct answers *a = answers_new(st, free_answer);
	answers_set_prebuild(a, pb_fn, &pb_calls);
	model_mac[0] = 0;
	model_mac[1] = 1;
	model_mac[2] = 1;
	write_hw(0);
	write_hw(1);
	write_hw(2); /* no interface */
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(pb_calls[0], 1);
	ck_assert_uint_eq(pb_calls[1], 1);
	ck_assert_uint_eq(pb_calls[2], 1);
	ck_assert_uint_eq(pb_macs[1], 2);
	ck_assert_uint_eq(pb_macs[2], 0);
	ck_assert_uint_eq(answers_prebuilt(a), 3);
	char mac[18];
	mac_text(0, mac);
	struct answers_key k = { .type = ANSWERS_SCRIPT, .pub = 7, .param = mac };
	answers_rdlock(a);
	ck_assert_str_eq(answers_get(answers_find(a, ANSWERS_BY_MAC, mac), &k), "made");
	answers_rdunlock(a);

	/* Nothing changed: nothing is made again. */
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(answers_prebuilt(a), 3);

	/* One changes: that one alone, with its new answers. */
	model_mac[3] = 0;
	write_hw(0);
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(pb_calls[0], 2);
	ck_assert_uint_eq(pb_macs[0], 2);
	ck_assert_uint_eq(pb_calls[1], 1);
	ck_assert_uint_eq(answers_prebuilt(a), 4);

	/* Again: every one. */
	answers_prebuild_again(a);
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(answers_prebuilt(a), 7);

	/* A configuration change drops every answer and makes them again
	 * (pb_fn checks it is given the answers' configuration). */
	answers_set_config(a, NULL);
	answers_rdlock(a);
	ck_assert_ptr_null(answers_get(answers_find(a, ANSWERS_BY_MAC, mac), &k));
	answers_rdunlock(a);
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(answers_prebuilt(a), 10);
	answers_rdlock(a);
	ck_assert_str_eq(answers_get(answers_find(a, ANSWERS_BY_MAC, mac), &k), "made");
	answers_rdunlock(a);

	/* Turned off: nothing is called, not even for a change; on again:
	 * every record. */
	answers_prebuild_enable(a, false);
	write_hw(1);
	answers_prebuild_again(a);
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(answers_prebuilt(a), 10);
	answers_prebuild_enable(a, true);
	ck_assert_int_eq(answers_sync(a), 0);
	ck_assert_uint_eq(answers_prebuilt(a), 13);
	answers_free(a);
}
END_TEST

/* A sweep longer than a chunk, during which a Hardware changes: the
 * follower reads the change between chunks, and the changed record is
 * prebuilt again in the next pass; every other once. */
#define BIG_N 300
static unsigned big_calls[BIG_N];
static bool big_changed;

/* Applies a Hardware of no interface named name, with label v=label. */
static void put_bare_hw(const char *name, const char *label)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{}}", "apiVersion",
			      "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata", "name",
			      name, "namespace", "default", "labels", "v", label, "spec");
	struct store_op op = { .type = STORE_OP_APPLY, .kind = STORE_KIND_HARDWARE, .body = o };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	json_decref(o);
}

static void big_fn(void *arg, struct answers *a, const struct answers_rec *rec,
		   struct store_reader *r)
{
	unsigned h;
	(void)arg;
	(void)a;
	(void)r;
	ck_assert_int_eq(sscanf(rec->name, "big%u", &h), 1);
	ck_assert_uint_lt(h, BIG_N);
	big_calls[h]++;
	if (!big_changed) {
		/* A write while the sweep holds the read lock: the store
		 * does not wait for the index. */
		big_changed = true;
		put_bare_hw(rec->name, "2");
	}
}

START_TEST(prebuild_sweep_in_chunks)
{
	memset(big_calls, 0, sizeof(big_calls));
	big_changed = false;
	for (unsigned i = 0; i < BIG_N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "big%u", i);
		put_bare_hw(name, "1");
	}
	struct answers *a = answers_new(st, free_answer);
	answers_set_prebuild(a, big_fn, NULL);
	ck_assert_int_eq(answers_sync(a), 0);
	unsigned twice = 0;
	for (unsigned i = 0; i < BIG_N; i++) {
		ck_assert_msg(big_calls[i] == 1 || big_calls[i] == 2, "big%u: %u calls", i,
			      big_calls[i]);
		twice += big_calls[i] == 2;
	}
	ck_assert_uint_eq(twice, 1); /* the one changed during the sweep */
	ck_assert_uint_eq(answers_prebuilt(a), BIG_N + 1);
	ck_assert_uint_eq(answers_records(a), BIG_N);
	answers_free(a);
}
END_TEST

static size_t rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t v = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			v = strtoul(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* The figure for the documentation: N Hardware (two interfaces each, with
 * addresses), the index alone, then with a script (1 KiB) and a metadata
 * answer (2 KiB) kept for each, as malloc'd stand-ins of the bodies. */
START_TEST(memory_of_n_hardware)
{
	const char *env = getenv("ANSWERS_MEM_HARDWARE");
	uint64_t n = 300;
	if (env && num_parse_u64_str(env, 1000000, &n) < 0)
		n = 300;
	enum { CHUNK = 1000 };
	struct store_op *ops = calloc(CHUNK, sizeof(*ops));
	ck_assert_ptr_nonnull(ops);
	for (uint64_t done = 0; done < n;) {
		size_t k = 0;
		for (; k < CHUNK && done < n; k++, done++) {
			char name[32], m0[18], m1[18], ip0[16], ip1[16];
			snprintf(name, sizeof(name), "machine-%06llu", (unsigned long long)done);
			snprintf(m0, sizeof(m0), "02:00:%02x:%02x:%02x:00", (unsigned)(done >> 16) & 255,
				 (unsigned)(done >> 8) & 255, (unsigned)done & 255);
			snprintf(m1, sizeof(m1), "02:00:%02x:%02x:%02x:01", (unsigned)(done >> 16) & 255,
				 (unsigned)(done >> 8) & 255, (unsigned)done & 255);
			snprintf(ip0, sizeof(ip0), "10.%u.%u.%u", (unsigned)(done >> 16) & 255,
				 (unsigned)(done >> 8) & 255, (unsigned)done & 255);
			snprintf(ip1, sizeof(ip1), "11.%u.%u.%u", (unsigned)(done >> 16) & 255,
				 (unsigned)(done >> 8) & 255, (unsigned)done & 255);
			json_t *o = json_pack(
				"{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:{s:s, s:{s:s, s:s}}}, "
				"{s:{s:s, s:{s:s, s:s}}}]}}",
				"apiVersion", "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata",
				"name", name, "namespace", "default", "spec", "interfaces", "dhcp", "mac",
				m0, "ip", "address", ip0, "netmask", "255.0.0.0", "dhcp", "mac", m1, "ip",
				"address", ip1, "netmask", "255.0.0.0");
			ops[k] = (struct store_op){ .type = STORE_OP_CREATE,
						    .kind = STORE_KIND_HARDWARE,
						    .body = o };
		}
		ck_assert_int_eq(store_write(st, ops, k, false), 0);
		for (size_t i = 0; i < k; i++) {
			ck_assert_int_eq(ops[i].error, 0);
			json_decref(ops[i].body);
			store_op_clear(&ops[i]);
		}
	}
	free(ops);
	struct answers *a = answers_new(st, free);
	size_t before = rss_kib();
	ck_assert_int_eq(answers_sync(a), 0);
	size_t indexed = rss_kib();
	ck_assert_uint_eq(answers_records(a), n);
	answers_rdlock(a);
	for (uint64_t i = 0; i < n; i++) {
		char ip[16];
		snprintf(ip, sizeof(ip), "10.%u.%u.%u", (unsigned)(i >> 16) & 255,
			 (unsigned)(i >> 8) & 255, (unsigned)i & 255);
		const struct answers_rec *r = answers_find(a, ANSWERS_BY_IP, ip);
		ck_assert_ptr_nonnull(r);
		struct answers_key ks = { .type = ANSWERS_SCRIPT, .param = "02:00:00:00:00:00" };
		struct answers_key km = { .type = ANSWERS_HEGEL, .param = "" };
		ck_assert_int_eq(answers_put(r, &ks, calloc(1, 1024), 1024), 0);
		ck_assert_int_eq(answers_put(r, &km, calloc(1, 2048), 2048), 0);
	}
	answers_rdunlock(a);
	size_t answered = rss_kib();
	printf("# %llu Hardware: index %zu KiB (%zu B each), with a 1 KiB and a 2 KiB answer each "
	       "%zu KiB more\n",
	       (unsigned long long)n, indexed - before,
	       n ? (indexed - before) * 1024 / (size_t)n : 0, answered - indexed);
	answers_free(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("answers");
	TCase *tc = tcase_create("index");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	UNIT_TEST(tc, index_follows_the_model);
	UNIT_TEST(tc, answers_go_with_their_record);
	UNIT_TEST(tc, trimmed_log_relists);
	UNIT_TEST(tc, prebuild_sweeps);
	UNIT_TEST(tc, prebuild_sweep_in_chunks);
	UNIT_TEST(tc, memory_of_n_hardware);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
