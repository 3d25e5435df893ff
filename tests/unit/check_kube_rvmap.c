/* check_kube_rvmap — unit tests for the watcher's map of what the cluster
 * holds (kube/rvmap.c) and the order of resourceVersions
 * (kube_rv_newer()): entries put, found, updated and deleted through
 * growth and tombstones, a model map compared at every step, and
 * resourceVersions compared as integers of any length, opaque ones only
 * for equality. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/watcher.h"
#include "tests/unit/unit.h"

#define MODEL_N 3000 /* distinct keys of the randomized test */
#define MODEL_OPS 60000

START_TEST(test_put_get_del)
{
	struct kube_rvmap m = { 0 };
	ck_assert_ptr_null(kube_rvmap_get(&m, "default", "a"));
	struct kube_rv_entry *e = kube_rvmap_put(&m, "default", "a");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->key, "default/a");
	ck_assert_str_eq(e->rv, "");
	snprintf(e->rv, sizeof(e->rv), "12");
	ck_assert_ptr_eq(kube_rvmap_put(&m, "default", "a"), e);
	ck_assert_str_eq(kube_rvmap_get(&m, "default", "a")->rv, "12");
	/* "a/b" in "default" is not "b" in "default/a" */
	ck_assert_ptr_null(kube_rvmap_get(&m, "default/a", ""));
	ck_assert_ptr_null(kube_rvmap_get(&m, "defaul", "t/a"));
	kube_rvmap_del(&m, "default", "a");
	ck_assert_ptr_null(kube_rvmap_get(&m, "default", "a"));
	ck_assert_uint_eq(m.n, 0);
	kube_rvmap_del(&m, "default", "a"); /* absent: nothing */
	kube_rvmap_free(&m);
	kube_rvmap_free(&m); /* twice: nothing */
}
END_TEST

static void count(struct kube_rv_entry *e, void *ud)
{
	(void)e;
	(*(size_t *)ud)++;
}

/* A model (an array indexed by key number) checked against the map after
 * each of many random puts and deletes, through several growths and
 * tombstone rehashes. */
START_TEST(test_model)
{
	struct kube_rvmap m = { 0 };
	static int model[MODEL_N]; /* 0: absent, else the rv put */
	char name[32];
	unsigned x = 12345;
	memset(model, 0, sizeof(model));
	for (int op = 0; op < MODEL_OPS; op++) {
		x = x * 1103515245u + 12345u;
		int k = (int)((x >> 8) % MODEL_N);
		snprintf(name, sizeof(name), "obj-%d", k);
		if ((x >> 4) % 3 == 0) {
			kube_rvmap_del(&m, "ns", name);
			model[k] = 0;
		} else {
			struct kube_rv_entry *e = kube_rvmap_put(&m, "ns", name);
			ck_assert_ptr_nonnull(e);
			model[k] = op + 1;
			snprintf(e->rv, sizeof(e->rv), "%d", op + 1);
		}
		if (op % 997 == 0) {
			size_t live = 0, seen = 0;
			for (int i = 0; i < MODEL_N; i++) {
				snprintf(name, sizeof(name), "obj-%d", i);
				struct kube_rv_entry *e = kube_rvmap_get(&m, "ns", name);
				if (model[i]) {
					ck_assert_ptr_nonnull(e);
					char want[16];
					snprintf(want, sizeof(want), "%d", model[i]);
					ck_assert_str_eq(e->rv, want);
					live++;
				} else {
					ck_assert_ptr_null(e);
				}
			}
			ck_assert_uint_eq(m.n, live);
			kube_rvmap_each(&m, count, &seen);
			ck_assert_uint_eq(seen, live);
		}
	}
	kube_rvmap_free(&m);
}
END_TEST

START_TEST(test_rv_newer)
{
	ck_assert(kube_rv_newer("2", "1"));
	ck_assert(!kube_rv_newer("1", "2"));
	ck_assert(!kube_rv_newer("5", "5"));
	ck_assert(kube_rv_newer("10", "9"));     /* by value, not text */
	ck_assert(!kube_rv_newer("9", "10"));
	ck_assert(kube_rv_newer("100000000000000000000001", "99999999999999999999999"));
	ck_assert(!kube_rv_newer("007", "7"));   /* leading zeros: the same */
	ck_assert(kube_rv_newer("8", "007"));
	ck_assert(kube_rv_newer("1", ""));       /* nothing seen yet */
	/* opaque versions: any different one is newer, the same one is not */
	ck_assert(kube_rv_newer("abc", "abd"));
	ck_assert(!kube_rv_newer("abc", "abc"));
	ck_assert(kube_rv_newer("12a", "12"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kube_rvmap");
	TCase *tc = tcase_create("rvmap");
	tcase_set_timeout(tc, 60);
	UNIT_TEST(tc, test_put_get_del);
	UNIT_TEST(tc, test_model);
	UNIT_TEST(tc, test_rv_newer);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
