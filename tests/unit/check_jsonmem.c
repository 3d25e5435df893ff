/* check_jsonmem — common/jsonmem: a tree decoded between jsonmem_begin()
 * and jsonmem_end() has its nodes cut from blocks, and the rest of
 * jansson's allocations (another decode included) are malloc()'s; trees mixing
 * both free cleanly; a block goes back once all its nodes are freed, on
 * whichever thread, and is reused, so decoding and freeing a Hardware a
 * thousand times takes a block or two; a block whose owner thread exits
 * goes back with its last node. In a build with AddressSanitizer (or with
 * IRONBELL_JSONMEM=off) nothing is cut from blocks, and the same trees
 * still decode and free. */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "common/jsonmem.h"
#include "tests/unit/unit.h"

#define ROUNDS 2000 /* decode and free a Hardware this many times */
#define KEPT 64     /* trees alive at once on one thread */

static char *hw_text;
static size_t hw_len;

static void load_fixture(void)
{
	if (!hw_text)
		hw_text = unit_fixture("template-ubuntu.hw.json", 1 << 20, &hw_len);
}

/* The fixture decoded as a short-lived tree is. */
static json_t *decode(void)
{
	json_error_t e;
	json_t *v = jsondec_loadb_brief(hw_text, hw_len, 0, &e);
	ck_assert_msg(v, "%s", e.text);
	return v;
}

/* Whether blocks should be in use: not under ASan, not switched off. */
static bool expect_blocks(void)
{
	bool asan = false;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	asan = true;
#endif
	const char *e = getenv("IRONBELL_JSONMEM");
	return !asan && !(e && strcmp(e, "off") == 0);
}

/* Blocks in use: holding nodes, or being cut from. Tests compare it
 * before and after, so that they hold in one process too (CK_FORK=no). */
static size_t in_use(void)
{
	struct jsonmem_stats st;
	jsonmem_stats(&st);
	return st.blocks - st.blocks_free;
}

START_TEST(test_enabled)
{
	ck_assert_int_eq(jsonmem_enabled(), expect_blocks());
}
END_TEST

START_TEST(test_decoded_in_blocks)
{
	load_fixture();
	json_t *hw = decode();
	json_t *spec = json_object_get(hw, "spec");
	ck_assert_ptr_nonnull(spec);
	ck_assert_int_eq(jsonmem_owns(hw), expect_blocks());
	ck_assert_int_eq(jsonmem_owns(spec), expect_blocks());
	/* made outside: malloc()'s, a decode included */
	json_t *o = json_object();
	ck_assert(!jsonmem_owns(o));
	json_t *plain = jsondec_loadb(hw_text, hw_len, 0, NULL);
	ck_assert_ptr_nonnull(plain);
	ck_assert(!jsonmem_owns(plain));
	ck_assert(!jsonmem_owns(json_object_get(plain, "spec")));
	ck_assert(json_equal(plain, hw));
	json_decref(plain);
	/* both kinds in one tree, freed together */
	ck_assert_int_eq(json_object_set_new(spec, "added", o), 0);
	ck_assert_int_eq(json_object_set_new(o, "x", json_string("y")), 0);
	json_t *copy = json_deep_copy(hw);
	ck_assert(!jsonmem_owns(copy));
	ck_assert(json_equal(copy, hw));
	json_decref(hw);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(copy, "spec"), "added"), "x")),
			 "y");
	json_decref(copy);
}
END_TEST

START_TEST(test_nesting)
{
	jsonmem_begin();
	jsonmem_begin();
	jsonmem_end();
	json_t *a = json_array();
	jsonmem_end();
	json_t *b = json_array();
	jsonmem_end(); /* one too many: ignored */
	json_t *c = json_array();
	ck_assert_int_eq(jsonmem_owns(a), expect_blocks());
	ck_assert(!jsonmem_owns(b));
	ck_assert(!jsonmem_owns(c));
	json_decref(a);
	json_decref(b);
	json_decref(c);
}
END_TEST

START_TEST(test_big_from_malloc)
{
	size_t n = 10000;
	char *text = malloc(n + 5);
	ck_assert_ptr_nonnull(text);
	text[0] = '[';
	text[1] = '"';
	memset(text + 2, 'u', n);
	memcpy(text + 2 + n, "\"]", 3);
	struct jsonmem_stats before, after;
	jsonmem_stats(&before);
	jsonmem_begin();
	json_t *v = jsondec_fast(text, n + 4, 0);
	jsonmem_end();
	ck_assert_ptr_nonnull(v);
	jsonmem_stats(&after);
	ck_assert_uint_eq(json_string_length(json_array_get(v, 0)), n);
	ck_assert_int_eq(jsonmem_owns(v), expect_blocks());
	if (expect_blocks())
		ck_assert_uint_gt(after.big, before.big);
	json_decref(v);
	free(text);
}
END_TEST

START_TEST(test_blocks_reused)
{
	load_fixture();
	struct jsonmem_stats before;
	jsonmem_stats(&before);
	size_t used0 = in_use();
	json_t *kept[KEPT] = { 0 };
	for (int i = 0; i < ROUNDS; i++) {
		json_decref(kept[i % KEPT]);
		kept[i % KEPT] = decode();
	}
	for (int i = 0; i < KEPT; i++)
		json_decref(kept[i]);
	struct jsonmem_stats st;
	jsonmem_stats(&st);
	if (expect_blocks()) {
		/* 64 trees of a few KiB alive at once: a few blocks, not one
		 * per tree decoded */
		ck_assert_uint_lt(st.blocks - before.blocks, 64);
	} else {
		ck_assert_uint_eq(st.blocks, 0);
	}
	/* all back but the one this thread cuts from */
	ck_assert_uint_le(in_use(), used0 + 1);
}
END_TEST

struct batch {
	json_t *trees[KEPT];
};

static void *decode_batch(void *arg)
{
	struct batch *b = arg;
	jsonmem_begin();
	for (int i = 0; i < KEPT; i++)
		b->trees[i] = jsondec_fast(hw_text, hw_len, 0);
	jsonmem_end();
	return NULL;
}

/* Trees decoded on a thread that then exits, freed by this one: the
 * exited thread's last block goes back with its last node. */
START_TEST(test_owner_gone)
{
	load_fixture();
	size_t used0 = in_use();
	struct batch b;
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, decode_batch, &b), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	for (int i = 0; i < KEPT; i++) {
		ck_assert_ptr_nonnull(b.trees[i]);
		ck_assert_int_eq(jsonmem_owns(b.trees[i]), expect_blocks());
	}
	/* the thread is gone; its blocks hold the trees */
	if (expect_blocks())
		ck_assert_uint_gt(in_use(), used0);
	for (int i = 0; i < KEPT; i++)
		json_decref(b.trees[i]);
	ck_assert_uint_eq(in_use(), used0);
}
END_TEST

static void *free_batch(void *arg)
{
	struct batch *b = arg;
	for (int i = 0; i < KEPT; i++)
		json_decref(b->trees[i]);
	return NULL;
}

/* Two threads each decoding batches and freeing the other's: every block
 * goes back once both are gone. */
struct swap {
	pthread_mutex_t mu;
	struct batch *slot; /* a batch handed over, or NULL */
	int rounds;
};

static void *swapper(void *arg)
{
	struct swap *s = arg;
	for (int r = 0; r < s->rounds; r++) {
		struct batch *mine = malloc(sizeof(*mine));
		if (!mine)
			abort();
		decode_batch(mine);
		pthread_mutex_lock(&s->mu);
		struct batch *theirs = s->slot;
		s->slot = mine;
		pthread_mutex_unlock(&s->mu);
		if (theirs) {
			free_batch(theirs);
			free(theirs);
		}
	}
	return NULL;
}

START_TEST(test_freed_across_threads)
{
	load_fixture();
	size_t used0 = in_use();
	struct swap s = { .mu = PTHREAD_MUTEX_INITIALIZER, .rounds = 40 };
	pthread_t a, b;
	ck_assert_int_eq(pthread_create(&a, NULL, swapper, &s), 0);
	ck_assert_int_eq(pthread_create(&b, NULL, swapper, &s), 0);
	ck_assert_int_eq(pthread_join(a, NULL), 0);
	ck_assert_int_eq(pthread_join(b, NULL), 0);
	ck_assert_ptr_nonnull(s.slot);
	for (int i = 0; i < KEPT; i++)
		ck_assert_ptr_nonnull(json_object_get(s.slot->trees[i], "spec"));
	free_batch(s.slot);
	free(s.slot);
	ck_assert_uint_eq(in_use(), used0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jsonmem");
	TCase *tc = tcase_create("jsonmem");
	tcase_set_timeout(tc, 60);
	UNIT_TEST(tc, test_enabled);
	UNIT_TEST(tc, test_decoded_in_blocks);
	UNIT_TEST(tc, test_nesting);
	UNIT_TEST(tc, test_big_from_malloc);
	UNIT_TEST(tc, test_blocks_reused);
	UNIT_TEST(tc, test_owner_gone);
	UNIT_TEST(tc, test_freed_across_threads);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
