/* check_store_async — unit tests for store_write_async() (store/writer.c):
 * results of object writes arriving on a completion queue with the ops
 * filled as store_write() fills them, a stale resourceVersion reported as
 * -ESTALE with its message, an atomic batch failing whole, -EAGAIN past
 * the queue's in-flight bound, and store_close() completing what is still
 * queued. Each test opens a fresh database in its own mkdtemp() directory.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "store/store.h"
#include "tests/unit/unit.h"

#define FIXTURE_NAME "check_store_async"
#include "tests/unit/store_fixture.h"

#define WAIT_MS 20000 /* most time a test waits for completions */
#define N_ASYNC 200

static json_t *template_obj(const char *name, const char *data)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
			 "tinkerbell.org/v1alpha1", "kind", "Template", "metadata", "name", name,
			 "namespace", "default", "spec", "data", data);
}

static size_t drain_all(struct store_completion *c, struct store_done *done, size_t want)
{
	size_t got = 0;
	uint64_t t0 = now_mono_ns();
	while (got < want && now_mono_ns() - t0 < (uint64_t)WAIT_MS * 1000000u) {
		struct pollfd p = { .fd = store_completion_fd(c), .events = POLLIN };
		int rc = poll(&p, 1, 1000);
		ck_assert_int_ge(rc, 0);
		if (rc == 0)
			continue;
		got += store_completion_drain(c, done + got, want - got);
	}
	return got;
}

static struct store_op create_op(json_t *body)
{
	return (struct store_op){ .type = STORE_OP_CREATE, .kind = STORE_KIND_TEMPLATE,
				  .body = body };
}

START_TEST(test_results_arrive)
{
	static struct store_op ops[N_ASYNC];
	static json_t *bodies[N_ASYNC];
	static struct store_done done[N_ASYNC];
	static bool seen[N_ASYNC];
	struct store_completion *c = store_completion_new(N_ASYNC);
	ck_assert_ptr_nonnull(c);
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < N_ASYNC; i++) {
		char name[32];
		snprintf(name, sizeof(name), "t%u", i);
		bodies[i] = template_obj(name, "x");
		ops[i] = create_op(bodies[i]);
		ck_assert_int_eq(store_write_async(st, &ops[i], 1, true, c, 1000 + i), 0);
	}
	ck_assert_uint_eq(drain_all(c, done, N_ASYNC), N_ASYNC);
	for (unsigned i = 0; i < N_ASYNC; i++) {
		ck_assert_msg(done[i].error == 0, "%d %s", done[i].error, done[i].message);
		ck_assert_uint_ge(done[i].tag, 1000);
		ck_assert_uint_lt(done[i].tag, 1000 + N_ASYNC);
		ck_assert(!seen[done[i].tag - 1000]);
		seen[done[i].tag - 1000] = true;
	}
	/* the ops are filled as store_write() fills them */
	for (unsigned i = 0; i < N_ASYNC; i++) {
		ck_assert_int_eq(ops[i].error, 0);
		ck_assert_int_eq(ops[i].result, STORE_RESULT_CREATED);
		ck_assert_ptr_nonnull(ops[i].object);
		ck_assert_uint_gt(ops[i].rv, 0);
		store_op_clear(&ops[i]);
		json_decref(bodies[i]);
	}
	ck_assert_int_eq(store_completion_inflight(c), 0);
	json_t *got = NULL;
	ck_assert_int_eq(store_get(rd, STORE_KIND_TEMPLATE, "default", "t7", &got), 0);
	json_decref(got);
	ck_assert_int_eq(store_completion_free(c), 0);
}
END_TEST

START_TEST(test_conflict)
{
	struct store_completion *c = store_completion_new(0);
	struct store_done done[2];
	json_t *t = template_obj("t", "x");
	struct store_op op = create_op(t);
	ck_assert_int_eq(store_write1(st, &op), 0);
	char rv[32];
	snprintf(rv, sizeof(rv), "%" PRIu64, op.rv);
	store_op_clear(&op);

	/* a replace with the current rv commits; one with the same rv,
	 * queued after it, is stale */
	json_t *status = template_obj("t", "y");
	struct store_op ops[2] = {
		{ .type = STORE_OP_REPLACE, .kind = STORE_KIND_TEMPLATE, .body = status,
		  .resource_version = rv },
		{ .type = STORE_OP_REPLACE, .kind = STORE_KIND_TEMPLATE, .body = status,
		  .resource_version = rv },
	};
	ck_assert_int_eq(store_write_async(st, &ops[0], 1, true, c, 1), 0);
	ck_assert_int_eq(store_write_async(st, &ops[1], 1, true, c, 2), 0);
	ck_assert_uint_eq(drain_all(c, done, 2), 2);
	ck_assert_uint_eq(done[0].tag, 1);
	ck_assert_int_eq(done[0].error, 0);
	ck_assert_uint_eq(done[1].tag, 2);
	ck_assert_int_eq(done[1].error, -ESTALE);
	ck_assert_int_eq(ops[1].error, -ESTALE);
	ck_assert_str_eq(done[1].message, store_op_message(&ops[1]));
	ck_assert_int_ne(strlen(done[1].message), 0);
	store_op_clear(&ops[0]);
	store_op_clear(&ops[1]);

	/* atomic: the cause, not -ECANCELED; nothing applied */
	json_t *t2 = template_obj("t2", "x");
	struct store_op batch[2] = { create_op(t2), create_op(t) };
	ck_assert_int_eq(store_write_async(st, batch, 2, true, c, 3), 0);
	ck_assert_uint_eq(drain_all(c, done, 1), 1);
	ck_assert_int_eq(done[0].error, -EEXIST);
	ck_assert_int_eq(batch[0].error, -ECANCELED);
	json_t *got = NULL;
	ck_assert_int_eq(store_get(rd, STORE_KIND_TEMPLATE, "default", "t2", &got), -ENOENT);
	store_op_clear(&batch[0]);
	store_op_clear(&batch[1]);
	ck_assert_int_eq(store_write_async(st, batch, 0, true, c, 4), -EINVAL);
	json_decref(status);
	json_decref(t);
	json_decref(t2);
	ck_assert_int_eq(store_completion_free(c), 0);
}
END_TEST

START_TEST(test_inflight_bound_and_close)
{
	struct store_completion *c = store_completion_new(3);
	struct store_done done[4];
	struct store_op ops[4];
	json_t *b[4];
	for (unsigned i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof(name), "b%u", i);
		b[i] = template_obj(name, "x");
		ops[i] = create_op(b[i]);
		/* results not yet drained still count */
		ck_assert_int_eq(store_write_async(st, &ops[i], 1, false, c, i), i < 3 ? 0 : -EAGAIN);
	}
	ck_assert_uint_eq(drain_all(c, done, 3), 3);
	ck_assert_int_eq(store_completion_inflight(c), 0);
	ck_assert_int_eq(store_write_async(st, &ops[3], 1, false, c, 3), 0);
	/* store_close completes what is queued; the queue is freed after */
	close_store();
	ck_assert_int_eq(store_completion_inflight(c), 1);
	ck_assert_uint_eq(store_completion_drain(c, done, 4), 1);
	ck_assert_uint_eq(done[0].tag, 3);
	ck_assert_int_eq(done[0].error, 0);
	ck_assert_int_eq(store_completion_free(c), 0);
	for (unsigned i = 0; i < 4; i++) {
		store_op_clear(&ops[i]);
		json_decref(b[i]);
	}
	open_store(NULL);
	json_t *got = NULL;
	ck_assert_int_eq(store_get(rd, STORE_KIND_TEMPLATE, "default", "b3", &got), 0);
	json_decref(got);
}
END_TEST

static Suite *store_async_suite(void)
{
	Suite *s = suite_create("store_async");
	TCase *tc = tcase_create("db");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	UNIT_TEST(tc, test_results_arrive);
	UNIT_TEST(tc, test_conflict);
	UNIT_TEST(tc, test_inflight_bound_and_close);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(store_async_suite());
}
