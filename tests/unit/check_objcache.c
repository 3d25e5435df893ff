/* check_objcache — unit tests for the store's shared object cache
 * (store/objcache.c) as the writer's ops and the change log's followers
 * see it: a follower gets the writer's tree for a change only while it is
 * that change's object; a DELETE leaves the shared tree as it was; a
 * write rolled back (its resourceVersion handed out again) is never
 * served in place of the committed object; a small bound evicts and
 * counts; STATUS with take_body keeps the body's .status without
 * changing it, and without take_body a caller's later edits of its body
 * reach nothing the store holds; an unchanged APPLY answers the object
 * the database has; a follower racing the writer, which evicts at every
 * write, gets no tree but its change's.
 *
 * Every check that compares the cache's tree compares it with the text
 * the database holds for the same change or object, so a cache that
 * serves a stale, rolled-back or changed tree fails here.
 *
 * Each test opens a fresh database in its own mkdtemp() directory (under
 * $TMPDIR) and removes it afterwards.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "store/store-internal.h"
#include "tests/unit/unit.h"

#define FIXTURE_NAME "check_objcache"
#include "tests/unit/store_fixture.h"

#define OC_MAX_SEEN 32        /* changes one follower pass records */
#define OC_CONC_WRITES 300    /* status writes racing a follower */
#define OC_CONC_ROUNDS 100000 /* follower passes at most, each waiting 1 s at most */

/* ---- object builders ---- */

static json_t *wf(const char *name)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s}}}", "apiVersion",
			 "tinkerbell.org/v1alpha1", "kind", "Workflow", "metadata", "name", name,
			 "spec", "templateRef", "t1", "hardwareRef", "m1", "hardwareMap",
			 "device_1", "aa:bb:cc:dd:ee:01");
}

/* A status body: {"status": {"state": state, "agentID": agent}} (agent may
 * be NULL). */
static json_t *wf_status(const char *state, const char *agent)
{
	json_t *b = json_pack("{s:{s:s}}", "status", "state", state);
	if (agent)
		json_object_set_new(json_object_get(b, "status"), "agentID", json_string(agent));
	return b;
}

/* A Workflow whose annotation "pad" is n 'x's: its text is n + ~200 bytes. */
static json_t *big_workflow(const char *name, size_t n)
{
	char *data = malloc(n + 1);
	ck_assert_ptr_nonnull(data);
	memset(data, 'x', n);
	data[n] = '\0';
	/* a Workflow (a kind the cache keeps) made large by an annotation */
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s, s:s}}", "apiVersion",
			      "tinkerbell.org/v1alpha1", "kind", "Workflow", "metadata", "name",
			      name, "annotations", "pad", data, "spec", "templateRef", "t",
			      "hardwareRef", "h");
	free(data);
	return o;
}

/* Runs one op; keeps the op's outputs in *out when out is not NULL. */
static int run(enum store_op_type t, enum store_kind k, const char *name, json_t *body,
	       struct store_op *out)
{
	struct store_op op = {
		.type = t, .kind = k, .namespace_ = "default", .name = name, .body = body
	};
	int e = store_write1(st, &op);
	ck_assert_int_eq(e, op.error);
	if (out)
		*out = op;
	else
		store_op_clear(&op);
	return e;
}

/* Runs an op with a body it takes (released after the op). */
static int run_take(enum store_op_type t, enum store_kind k, const char *name, json_t *body,
		    struct store_op *out)
{
	int e = run(t, k, name, body, out);
	json_decref(body);
	return e;
}

static uint64_t obj_rv(const json_t *o)
{
	uint64_t v = 0;
	ck_assert_int_eq(num_parse_u64_str(store_meta_str(o, "resourceVersion"), UINT64_MAX, &v),
			 0);
	return v;
}

static const char *status_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(json_object_get(o, "status"), key));
}

static uint64_t store_rv(void)
{
	uint64_t rv = 0;
	ck_assert_int_eq(store_resource_version(rd, &rv), 0);
	return rv;
}

/* store_get() of a Workflow or Template in "default"; fails the test when
 * it is absent. */
static json_t *get(enum store_kind k, const char *name)
{
	json_t *o = NULL;
	ck_assert_int_eq(store_get(rd, k, "default", name, &o), 0);
	return o;
}

struct oc_stats {
	size_t n, text;
	uint64_t hits, misses;
};

static struct oc_stats stats(void)
{
	struct oc_stats s;
	store_objcache_stats(st, &s.n, &s.text, &s.hits, &s.misses);
	return s;
}

/* ---- a follower ---- */

struct seen_change {
	char name[32], type[16];
	uint64_t rv;
	json_t *text; /* store_change_text(), decoded */
	json_t *obj;  /* store_change_object(): the writer's tree, or NULL */
};

struct seen {
	size_t n;
	struct seen_change c[OC_MAX_SEEN];
};

static int seen_change(const struct store_change *c, void *ud)
{
	struct seen *s = ud;
	const char *text = NULL;
	size_t len = 0;
	ck_assert_uint_lt(s->n, OC_MAX_SEEN);
	struct seen_change *sc = &s->c[s->n++];
	snprintf(sc->name, sizeof(sc->name), "%s", c->name);
	snprintf(sc->type, sizeof(sc->type), "%s", c->type);
	sc->rv = c->rv;
	sc->obj = store_change_object(c);
	ck_assert_int_eq(store_change_text(c, &text, &len), 0);
	sc->text = json_loadb(text, len, 0, NULL);
	ck_assert_ptr_nonnull(sc->text);
	return 0;
}

/* Follows every change after `after` into *s, and checks what holds for
 * every change: the tree given, when one is, is the text's object, and
 * none is given for a DELETED change. */
static void follow(uint64_t after, struct seen *s)
{
	size_t n = 0;
	*s = (struct seen){ 0 };
	ck_assert_int_eq(store_changes_each(rd, after, STORE_KIND_MAX, NULL, OC_MAX_SEEN,
					    seen_change, s, &n, NULL),
			 0);
	ck_assert_uint_eq(n, s->n);
	for (size_t i = 0; i < s->n; i++) {
		const struct seen_change *sc = &s->c[i];
		ck_assert_uint_eq(obj_rv(sc->text), sc->rv);
		if (strcmp(sc->type, "DELETED") == 0)
			ck_assert_msg(!sc->obj, "a tree for the DELETED change at rv %" PRIu64,
				      sc->rv);
		if (sc->obj)
			ck_assert_msg(json_equal(sc->obj, sc->text),
				      "the tree of %s at rv %" PRIu64 " is not its text", sc->name,
				      sc->rv);
	}
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++) {
		json_decref(s->c[i].text);
		json_decref(s->c[i].obj);
	}
	s->n = 0;
}

/* The change of name at rv in s; fails the test when there is none. */
static const struct seen_change *seen_at(const struct seen *s, const char *name, uint64_t rv)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].rv == rv && strcmp(s->c[i].name, name) == 0)
			return &s->c[i];
	ck_abort_msg("no change of %s at rv %" PRIu64, name, rv);
	return NULL;
}

/* ---- 1. a follower gets the writer's tree ---- */

START_TEST(test_follower_gets_writer_tree)
{
	struct store_op c1, c2, s1;
	uint64_t mark = store_rv();
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "w1", wf("w1"), &c1), 0);
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "w2", wf("w2"), &c2), 0);
	ck_assert_int_eq(run_take(STORE_OP_STATUS, STORE_KIND_WORKFLOW, "w1",
				  wf_status("RUNNING", "agent-1"), &s1),
			 0);
	ck_assert_uint_eq(s1.rv, c1.rv + 2);

	struct seen s;
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 3);
	/* the newest change of each name: the writer's own tree */
	const struct seen_change *w1 = seen_at(&s, "w1", s1.rv);
	ck_assert_str_eq(w1->type, "MODIFIED");
	ck_assert_ptr_nonnull(w1->obj);
	ck_assert_ptr_eq(w1->obj, s1.object);
	ck_assert_str_eq(status_str(w1->obj, "agentID"), "agent-1");
	const struct seen_change *w2 = seen_at(&s, "w2", c2.rv);
	ck_assert_ptr_nonnull(w2->obj);
	ck_assert_ptr_eq(w2->obj, c2.object);
	ck_assert_str_eq(store_meta_str(w2->obj, "name"), "w2");
	/* superseded by the status write: no tree, its text only */
	const struct seen_change *old = seen_at(&s, "w1", c1.rv);
	ck_assert_str_eq(old->type, "ADDED");
	ck_assert_ptr_null(old->obj);
	ck_assert_ptr_null(json_object_get(old->text, "status"));
	seen_free(&s);

	/* asked again, the same */
	follow(mark, &s);
	ck_assert_ptr_eq(seen_at(&s, "w1", s1.rv)->obj, s1.object);
	ck_assert_ptr_null(seen_at(&s, "w1", c1.rv)->obj);
	seen_free(&s);
	store_op_clear(&c1);
	store_op_clear(&c2);
	store_op_clear(&s1);
}
END_TEST

/* ---- 2. a DELETE leaves the shared tree alone ---- */

START_TEST(test_deleted_change)
{
	struct store_op c, prev, del, again;
	uint64_t mark = store_rv();
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "w1", wf("w1"), &c), 0);
	ck_assert_int_eq(run_take(STORE_OP_STATUS, STORE_KIND_WORKFLOW, "w1",
				  wf_status("RUNNING", "agent-1"), &prev),
			 0);
	json_t *kept = json_incref(prev.object);
	json_t *kept_copy = json_deep_copy(kept);
	ck_assert_int_eq(run(STORE_OP_DELETE, STORE_KIND_WORKFLOW, "w1", NULL, &del), 0);
	ck_assert_int_eq(del.result, STORE_RESULT_DELETED);
	ck_assert_uint_eq(del.rv, prev.rv + 1);
	ck_assert_uint_eq(obj_rv(del.object), del.rv);
	/* the tree the store shared keeps its own rv and everything else */
	ck_assert_uint_eq(obj_rv(kept), prev.rv);
	ck_assert(json_equal(kept, kept_copy));
	ck_assert_str_eq(status_str(del.object, "agentID"), "agent-1");
	json_t *gone = json_deep_copy(del.object);
	json_object_set_new(json_object_get(gone, "metadata"), "resourceVersion",
			    json_deep_copy(json_object_get(json_object_get(kept, "metadata"),
							   "resourceVersion")));
	ck_assert(json_equal(gone, kept)); /* the last state is the object at the delete's rv */
	json_decref(gone);

	struct seen s;
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 3);
	const struct seen_change *d = seen_at(&s, "w1", del.rv);
	ck_assert_str_eq(d->type, "DELETED");
	ck_assert_ptr_null(d->obj);
	ck_assert(json_equal(d->text, del.object));
	/* the name is gone: neither of its earlier changes has a tree */
	ck_assert_ptr_null(seen_at(&s, "w1", prev.rv)->obj);
	ck_assert_ptr_null(seen_at(&s, "w1", c.rv)->obj);
	seen_free(&s);

	/* created again: a new object, which the old changes never get */
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "w1", wf("w1"), &again), 0);
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 4);
	ck_assert_ptr_null(seen_at(&s, "w1", prev.rv)->obj);
	ck_assert_ptr_null(seen_at(&s, "w1", c.rv)->obj);
	ck_assert_ptr_eq(seen_at(&s, "w1", again.rv)->obj, again.object);
	ck_assert_ptr_null(json_object_get(again.object, "status"));
	seen_free(&s);
	ck_assert_uint_eq(obj_rv(kept), prev.rv);
	ck_assert(json_equal(kept, kept_copy));

	json_decref(kept);
	json_decref(kept_copy);
	store_op_clear(&c);
	store_op_clear(&prev);
	store_op_clear(&del);
	store_op_clear(&again);
}
END_TEST

/* ---- 3. writes rolled back ---- */

/* An atomic write of a status of name and then bad, which fails with
 * want: the status write is rolled back with it. */
static void rolled_back(const char *name, json_t *status, struct store_op *bad, int want)
{
	struct store_op ops[2] = {
		{ .type = STORE_OP_STATUS,
		  .kind = STORE_KIND_WORKFLOW,
		  .namespace_ = "default",
		  .name = name,
		  .body = status },
		*bad,
	};
	ck_assert_int_eq(store_write(st, ops, 2, true), want);
	ck_assert_int_eq(ops[0].error, -ECANCELED);
	ck_assert_int_eq(ops[1].error, want);
	store_op_clear(&ops[0]);
	store_op_clear(&ops[1]);
	json_decref(status);
}

/* K's committed content, checked against the database and against what
 * a rolled-back write set (status.agentID "rolled..."). */
static void check_committed(const json_t *want)
{
	json_t *got = get(STORE_KIND_WORKFLOW, "k");
	ck_assert(json_equal(got, want));
	const char *agent = status_str(got, "agentID");
	ck_assert_msg(!agent || strncmp(agent, "rolled", 6) != 0, "agentID %s", agent);
	json_decref(got);
}

START_TEST(test_rollback)
{
	struct store_op k0, p1, l, p2;
	uint64_t mark = store_rv();
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "k", wf("k"), NULL), 0);
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "x", wf("x"), NULL), 0);
	ck_assert_int_eq(run_take(STORE_OP_STATUS, STORE_KIND_WORKFLOW, "k",
				  wf_status("PENDING", NULL), &k0),
			 0);
	uint64_t rv0 = store_rv();
	ck_assert_uint_eq(k0.rv, rv0);

	/* K's status written, then a create of an existing object: all of it
	 * rolled back, rv0 + 1 free again */
	json_t *xb = wf("x");
	struct store_op exists = { .type = STORE_OP_CREATE,
				   .kind = STORE_KIND_WORKFLOW,
				   .namespace_ = "default",
				   .name = "x",
				   .body = xb };
	rolled_back("k", wf_status("RUNNING", "rolled-1"), &exists, -EEXIST);
	json_decref(xb);
	ck_assert_uint_eq(store_rv(), rv0);
	check_committed(k0.object);

	/* a follower of K's committed change gets that, not the rolled-back
	 * tree of the same name */
	struct seen s;
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 3);
	const struct seen_change *kc = seen_at(&s, "k", rv0);
	ck_assert(json_equal(kc->text, k0.object));
	ck_assert(!kc->obj || json_equal(kc->obj, k0.object));
	seen_free(&s);

	/* a patch of K builds on the committed object, and takes rv0 + 1,
	 * the rolled-back write's */
	json_t *patch = json_pack("{s:{s:i}}", "status", "globalTimeout", 7);
	ck_assert_int_eq(run_take(STORE_OP_STATUS_PATCH, STORE_KIND_WORKFLOW, "k", patch, &p1), 0);
	ck_assert_uint_eq(p1.rv, rv0 + 1);
	ck_assert_ptr_null(json_object_get(json_object_get(p1.object, "status"), "agentID"));
	ck_assert_str_eq(status_str(p1.object, "state"), "PENDING");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(p1.object, "status"),
							    "globalTimeout")),
			 7);
	check_committed(p1.object);
	follow(mark, &s);
	ck_assert_ptr_eq(seen_at(&s, "k", rv0 + 1)->obj, p1.object);
	seen_free(&s);

	/* again, failing validation, with a second write of K in the request:
	 * rv0 + 2 and rv0 + 3 rolled back */
	json_t *bad_body = wf_status("BOGUS", NULL);
	struct store_op bad = { .type = STORE_OP_STATUS,
				.kind = STORE_KIND_WORKFLOW,
				.namespace_ = "default",
				.name = "x",
				.body = bad_body };
	struct store_op ops[3] = {
		{ .type = STORE_OP_STATUS,
		  .kind = STORE_KIND_WORKFLOW,
		  .namespace_ = "default",
		  .name = "k",
		  .body = wf_status("RUNNING", "rolled-2") },
		{ .type = STORE_OP_STATUS_PATCH,
		  .kind = STORE_KIND_WORKFLOW,
		  .namespace_ = "default",
		  .name = "k",
		  .body = json_pack("{s:{s:s}}", "status", "agentID", "rolled-3") },
		bad,
	};
	ck_assert_int_eq(store_write(st, ops, 3, true), -EINVAL);
	ck_assert_int_eq(ops[0].error, -ECANCELED);
	ck_assert_int_eq(ops[1].error, -ECANCELED);
	for (int i = 0; i < 3; i++)
		store_op_clear(&ops[i]);
	json_decref(ops[0].body);
	json_decref(ops[1].body);
	json_decref(bad_body);
	ck_assert_uint_eq(store_rv(), rv0 + 1);
	check_committed(p1.object);

	/* the rolled-back rvs go to another object, L */
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "l", wf("l"), &l), 0);
	ck_assert_uint_eq(l.rv, rv0 + 2);
	store_op_clear(&l);
	ck_assert_int_eq(run_take(STORE_OP_STATUS, STORE_KIND_WORKFLOW, "l",
				  wf_status("SUCCESS", "l-agent"), &l),
			 0);
	ck_assert_uint_eq(l.rv, rv0 + 3);
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 6);
	ck_assert_ptr_eq(seen_at(&s, "l", rv0 + 3)->obj, l.object);
	ck_assert_str_eq(status_str(seen_at(&s, "l", rv0 + 3)->obj, "agentID"), "l-agent");
	ck_assert_ptr_null(seen_at(&s, "l", rv0 + 2)->obj);
	for (size_t i = 0; i < s.n; i++) {
		const char *agent = status_str(s.c[i].text, "agentID");
		ck_assert_msg(!agent || strncmp(agent, "rolled", 6) != 0, "%s", agent);
	}
	/* K's newest change is still the committed patch: a tree given for
	 * it is p1's, never the rolled-back one held for K at rv0 + 3 */
	kc = seen_at(&s, "k", rv0 + 1);
	ck_assert(json_equal(kc->text, p1.object));
	ck_assert(!kc->obj || json_equal(kc->obj, p1.object));
	seen_free(&s);

	/* and K's next write builds on it */
	patch = json_pack("{s:{s:s}}", "status", "state", "RUNNING");
	ck_assert_int_eq(run_take(STORE_OP_STATUS_PATCH, STORE_KIND_WORKFLOW, "k", patch, &p2), 0);
	ck_assert_uint_eq(p2.rv, rv0 + 4);
	ck_assert_ptr_null(json_object_get(json_object_get(p2.object, "status"), "agentID"));
	ck_assert_str_eq(status_str(p2.object, "state"), "RUNNING");
	check_committed(p2.object);
	follow(mark, &s);
	ck_assert_ptr_eq(seen_at(&s, "k", rv0 + 4)->obj, p2.object);
	ck_assert_ptr_null(seen_at(&s, "k", rv0 + 1)->obj);
	seen_free(&s);

	store_op_clear(&k0);
	store_op_clear(&p1);
	store_op_clear(&l);
	store_op_clear(&p2);
}
END_TEST

/* A create rolled back leaves a tree of a name with no row; the name
 * created again (same row id, same rv) must not get it. */
START_TEST(test_rollback_create)
{
	struct store_op c, s2;
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "x", wf("x"), NULL), 0);
	uint64_t rv0 = store_rv();
	json_t *first = wf("n");
	json_object_set_new(json_object_get(first, "spec"), "templateRef",
			    json_string("rolled-back"));
	json_t *xb = wf("x");
	struct store_op ops[2] = {
		{ .type = STORE_OP_CREATE,
		  .kind = STORE_KIND_WORKFLOW,
		  .namespace_ = "default",
		  .name = "n",
		  .body = first },
		{ .type = STORE_OP_CREATE,
		  .kind = STORE_KIND_WORKFLOW,
		  .namespace_ = "default",
		  .name = "x",
		  .body = xb },
	};
	ck_assert_int_eq(store_write(st, ops, 2, true), -EEXIST);
	store_op_clear(&ops[0]);
	store_op_clear(&ops[1]);
	json_decref(first);
	json_decref(xb);
	json_t *got;
	ck_assert_int_eq(store_get(rd, STORE_KIND_WORKFLOW, "default", "n", &got), -ENOENT);

	/* APPLY creates it anew, at the same rv; then a status write reads it */
	ck_assert_int_eq(run_take(STORE_OP_APPLY, STORE_KIND_WORKFLOW, "n", wf("n"), &c), 0);
	ck_assert_uint_eq(c.rv, rv0 + 1);
	ck_assert_str_eq(json_string_value(
				 json_object_get(json_object_get(c.object, "spec"), "templateRef")),
			 "t1");
	ck_assert_int_eq(run_take(STORE_OP_STATUS, STORE_KIND_WORKFLOW, "n",
				  wf_status("PENDING", NULL), &s2),
			 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(s2.object, "spec"),
							   "templateRef")),
			 "t1");
	got = get(STORE_KIND_WORKFLOW, "n");
	ck_assert(json_equal(got, s2.object));
	json_decref(got);
	struct seen s;
	follow(rv0, &s);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_ptr_eq(seen_at(&s, "n", rv0 + 2)->obj, s2.object);
	seen_free(&s);
	store_op_clear(&c);
	store_op_clear(&s2);
}
END_TEST

/* ---- 4. a small bound: eviction, and what it counts ---- */

START_TEST(test_eviction)
{
	struct store_op op;
	struct store_options o = { .object_cache_kib = 1 };
	const size_t bound = 1024;
	char name[16];
	close_store();
	open_store(&o);
	uint64_t mark = store_rv();

	/* six Workflows of ~500 bytes of text each: two fit at most */
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, name,
					  big_workflow(name, 300), NULL),
				 0);
		struct oc_stats a = stats();
		ck_assert_uint_le(a.text, bound);
		ck_assert_uint_ge(a.n, 1);
		ck_assert_uint_le(a.n, 2);
	}
	struct seen s;
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 6);
	ck_assert_ptr_nonnull(s.c[5].obj); /* the newest fits */
	ck_assert_ptr_null(s.c[0].obj);    /* the oldest went */
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		json_t *got = get(STORE_KIND_WORKFLOW, name);
		ck_assert(json_equal(got, s.c[i].text));
		json_decref(got);
	}
	seen_free(&s);

	/* an op on an evicted object misses, decodes; the next one hits */
	struct oc_stats a = stats();
	ck_assert_int_eq(
		run_take(STORE_OP_REPLACE, STORE_KIND_WORKFLOW, "t0", big_workflow("t0", 280), &op),
		0);
	struct oc_stats b = stats();
	ck_assert_uint_eq(b.misses, a.misses + 1);
	ck_assert_uint_eq(b.hits, a.hits);
	ck_assert_uint_le(b.text, bound);
	json_t *got = get(STORE_KIND_WORKFLOW, "t0");
	ck_assert(json_equal(got, op.object));
	json_decref(got);
	store_op_clear(&op);
	ck_assert_int_eq(
		run_take(STORE_OP_REPLACE, STORE_KIND_WORKFLOW, "t0", big_workflow("t0", 290), &op),
		0);
	a = stats();
	ck_assert_uint_eq(a.hits, b.hits + 1);
	ck_assert_uint_eq(a.misses, b.misses);
	got = get(STORE_KIND_WORKFLOW, "t0");
	ck_assert(json_equal(got, op.object));
	json_decref(got);
	store_op_clear(&op);

	/* a tree larger than the whole bound is not kept: each op misses */
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "huge",
				  big_workflow("huge", 2000), NULL),
			 0);
	for (int i = 0; i < 2; i++) {
		b = stats();
		ck_assert_int_eq(run_take(STORE_OP_REPLACE, STORE_KIND_WORKFLOW, "huge",
					  big_workflow("huge", 2001 + (size_t)i), &op),
				 0);
		a = stats();
		ck_assert_uint_eq(a.misses, b.misses + 1);
		ck_assert_uint_eq(a.hits, b.hits);
		ck_assert_uint_le(a.text, bound);
		got = get(STORE_KIND_WORKFLOW, "huge");
		ck_assert(json_equal(got, op.object));
		json_decref(got);
		store_op_clear(&op);
	}
	/* every change the follower gets a tree for is its text (follow()) */
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 11);
	ck_assert_ptr_null(s.c[10].obj); /* too large to hold */
	seen_free(&s);
	ck_assert_uint_le(stats().text, bound);
}
END_TEST

/* A write rolled back leaves its tree held at an rv handed out again. A
 * later write of the name at that rv replaces it, and so does the read
 * of the row before it, unless the object is too large to hold: then
 * the put that does not keep it must still drop what was held, or the
 * next op (and a follower) takes the rolled-back tree for the committed
 * one. */
START_TEST(test_rollback_then_too_large)
{
	struct store_op p1, p2;
	struct store_options o = { .object_cache_kib = 1 };
	char *mac = malloc(1601);
	ck_assert_ptr_nonnull(mac);
	memset(mac, 'a', 1600);
	mac[1600] = '\0';
	close_store();
	open_store(&o);
	/* K larger than the bound */
	json_t *k = wf("k");
	json_object_set_new(json_object_get(json_object_get(k, "spec"), "hardwareMap"), "device_2",
			    json_string(mac));
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "k", k, NULL), 0);
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "x", wf("x"), NULL), 0);
	uint64_t rv0 = store_rv();

	/* a patch that makes K small enough to hold, rolled back */
	json_t *shrink = json_pack("{s:{s:{s:n}}, s:{s:{s:s}}}", "spec", "hardwareMap", "device_2",
				   "metadata", "labels", "rolled", "yes");
	json_t *xb = wf("x");
	struct store_op ops[2] = {
		{ .type = STORE_OP_MERGE_PATCH,
		  .kind = STORE_KIND_WORKFLOW,
		  .namespace_ = "default",
		  .name = "k",
		  .body = shrink },
		{ .type = STORE_OP_CREATE,
		  .kind = STORE_KIND_WORKFLOW,
		  .namespace_ = "default",
		  .name = "x",
		  .body = xb },
	};
	ck_assert_int_eq(store_write(st, ops, 2, true), -EEXIST);
	ck_assert_int_eq(ops[0].error, -ECANCELED);
	store_op_clear(&ops[0]);
	store_op_clear(&ops[1]);
	json_decref(shrink);
	json_decref(xb);

	/* K's status written at rv0 + 1, the rolled-back patch's rv */
	ck_assert_int_eq(run_take(STORE_OP_STATUS_PATCH, STORE_KIND_WORKFLOW, "k",
				  json_pack("{s:{s:s}}", "status", "state", "PENDING"), &p1),
			 0);
	ck_assert_uint_eq(p1.rv, rv0 + 1);
	ck_assert_ptr_null(json_object_get(json_object_get(p1.object, "metadata"), "labels"));
	struct seen s;
	follow(rv0, &s); /* a tree given for K at rv0 + 1 is p1's (follow() checks) */
	ck_assert_uint_eq(s.n, 1);
	ck_assert_ptr_null(s.c[0].obj); /* too large to hold */
	seen_free(&s);

	/* the next op reads the large object, not the rolled-back one */
	ck_assert_int_eq(run_take(STORE_OP_STATUS_PATCH, STORE_KIND_WORKFLOW, "k",
				  json_pack("{s:{s:s}}", "status", "state", "RUNNING"), &p2),
			 0);
	ck_assert_ptr_null(json_object_get(json_object_get(p2.object, "metadata"), "labels"));
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(p2.object, "spec"), "hardwareMap"),
				 "device_2")),
			 mac);
	json_t *got = get(STORE_KIND_WORKFLOW, "k");
	ck_assert(json_equal(got, p2.object));
	json_decref(got);
	ck_assert_uint_le(stats().text, 1024);
	store_op_clear(&p1);
	store_op_clear(&p2);
	free(mac);
}
END_TEST

/* ---- 5. take_body, and bodies changed after their write ---- */

START_TEST(test_take_body)
{
	struct store_op op;
	uint64_t mark = store_rv();
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "w1", wf("w1"), NULL), 0);
	json_t *body = json_pack("{s:{s:s, s:s, s:[{s:s, s:s, s:[{s:s, s:s, s:s}]}]}}", "status",
				 "state", "RUNNING", "agentID", "agent-1", "tasks", "name", "os",
				 "agentID", "agent-1", "actions", "name", "a", "image",
				 "quay.io/tinkerbell/actions/image2disk", "state", "RUNNING");
	json_t *before = json_deep_copy(body);
	struct store_op t = { .type = STORE_OP_STATUS,
			      .kind = STORE_KIND_WORKFLOW,
			      .namespace_ = "default",
			      .name = "w1",
			      .body = body,
			      .take_body = true };
	ck_assert_int_eq(store_write1(st, &t), 0);
	ck_assert(json_equal(body, before)); /* the body is not changed */
	ck_assert(
		json_equal(json_object_get(t.object, "status"), json_object_get(before, "status")));
	json_decref(body); /* the caller may release it */
	json_t *got = get(STORE_KIND_WORKFLOW, "w1");
	ck_assert(json_equal(json_object_get(got, "status"), json_object_get(before, "status")));
	ck_assert(json_equal(got, t.object));
	json_decref(got);
	struct seen s;
	follow(mark, &s);
	ck_assert_ptr_eq(seen_at(&s, "w1", t.rv)->obj, t.object);
	seen_free(&s);
	/* the next status write builds on it and changes no part of it */
	json_t *kept = json_deep_copy(t.object);
	ck_assert_int_eq(run_take(STORE_OP_STATUS_PATCH, STORE_KIND_WORKFLOW, "w1",
				  json_pack("{s:{s:s}}", "status", "state", "SUCCESS"), &op),
			 0);
	ck_assert(json_equal(t.object, kept));
	ck_assert_str_eq(status_str(op.object, "state"), "SUCCESS");
	ck_assert_str_eq(status_str(op.object, "agentID"), "agent-1");
	store_op_clear(&op);
	store_op_clear(&t);
	json_decref(kept);
	json_decref(before);
}
END_TEST

/* Changes a body as a caller may once its write has returned: every
 * string in it becomes "changed", every object gains a member. */
static void scribble(json_t *v)
{
	const char *k;
	json_t *m;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach (v, k, m) {
			if (json_is_string(m))
				json_string_set(m, "changed");
			else
				scribble(m);
		}
		json_object_set_new(v, "scribbled", json_true());
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, m) {
			if (json_is_string(m))
				json_string_set(m, "changed");
			else
				scribble(m);
		}
	}
}

/* Each op's body changed after the write: neither the database, nor
 * op->object, nor the follower's tree, nor the next op sees it. */
START_TEST(test_body_changed_after)
{
	static const enum store_op_type types[] = { STORE_OP_CREATE,       STORE_OP_STATUS,
						    STORE_OP_STATUS_PATCH, STORE_OP_REPLACE,
						    STORE_OP_MERGE_PATCH,  STORE_OP_APPLY };
	json_t *bodies[] = {
		wf("w1"),
		json_pack("{s:{s:s, s:s, s:[{s:s, s:[{s:s}]}]}}", "status", "state", "RUNNING",
			  "agentID", "agent-1", "tasks", "name", "os", "actions", "name", "a"),
		json_pack("{s:{s:{s:s}}}", "status", "currentState", "actionName", "a"),
		wf("w1"),
		json_pack("{s:{s:{s:s}}, s:{s:{s:s}}}", "metadata", "labels", "l", "v", "spec",
			  "hardwareMap", "device_2", "aa:bb:cc:dd:ee:02"),
		wf("w1"),
	};
	json_object_set_new(json_object_get(bodies[3], "spec"), "templateRef", json_string("t2"));
	json_object_set_new(json_object_get(bodies[5], "spec"), "hardwareRef", json_string("m2"));
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		struct store_op op;
		uint64_t mark = store_rv();
		ck_assert_int_eq(run(types[i], STORE_KIND_WORKFLOW, "w1", bodies[i], &op), 0);
		ck_assert_msg(op.result == STORE_RESULT_CREATED ||
				      op.result == STORE_RESULT_CONFIGURED,
			      "op %zu: result %d", i, op.result);
		json_t *as_written = json_deep_copy(op.object);
		scribble(bodies[i]);
		ck_assert_msg(json_equal(op.object, as_written), "op %zu's object changed", i);
		json_t *got = get(STORE_KIND_WORKFLOW, "w1");
		ck_assert_msg(json_equal(got, as_written), "op %zu: the database differs", i);
		json_decref(got);
		struct seen s;
		follow(mark, &s);
		ck_assert_uint_eq(s.n, 1);
		ck_assert_ptr_nonnull(s.c[0].obj);
		ck_assert(json_equal(s.c[0].obj, as_written));
		seen_free(&s);
		json_decref(as_written);
		store_op_clear(&op);
	}
	/* nothing scribbled reached the object */
	json_t *got = get(STORE_KIND_WORKFLOW, "w1");
	char *text = json_dumps(got, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(!strstr(text, "changed") && !strstr(text, "scribbled"), "%s", text);
	free(text);
	json_decref(got);
	for (size_t i = 0; i < ARRAY_SIZE(bodies); i++)
		json_decref(bodies[i]);
}
END_TEST

/* Trees handed out (op->object, store_change_object()) stay as they were
 * through every later op of the same name. */
START_TEST(test_shared_trees_unchanged)
{
	struct store_op op;
	json_t *kept[8], *copies[8];
	size_t n = 0;
	uint64_t mark = store_rv();
#define KEEP(o)                                         \
	do {                                            \
		ck_assert_uint_lt(n, ARRAY_SIZE(kept)); \
		kept[n] = json_incref(o);               \
		copies[n] = json_deep_copy(o);          \
		n++;                                    \
	} while (0)
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "w1", wf("w1"), &op), 0);
	KEEP(op.object);
	store_op_clear(&op);
	ck_assert_int_eq(run_take(STORE_OP_STATUS, STORE_KIND_WORKFLOW, "w1",
				  wf_status("RUNNING", "agent-1"), &op),
			 0);
	KEEP(op.object);
	store_op_clear(&op);
	struct seen s;
	follow(mark, &s);
	ck_assert_ptr_nonnull(s.c[1].obj);
	KEEP(s.c[1].obj);
	seen_free(&s);
	ck_assert_int_eq(run_take(STORE_OP_STATUS_PATCH, STORE_KIND_WORKFLOW, "w1",
				  json_pack("{s:{s:s}}", "status", "state", "SUCCESS"), &op),
			 0);
	KEEP(op.object);
	store_op_clear(&op);
	ck_assert_int_eq(run_take(STORE_OP_MERGE_PATCH, STORE_KIND_WORKFLOW, "w1",
				  json_pack("{s:{s:{s:s}}}", "metadata", "labels", "a", "b"), &op),
			 0);
	KEEP(op.object);
	store_op_clear(&op);
	json_t *r = wf("w1");
	json_object_set_new(json_object_get(r, "spec"), "templateRef", json_string("t2"));
	ck_assert_int_eq(run_take(STORE_OP_REPLACE, STORE_KIND_WORKFLOW, "w1", r, &op), 0);
	KEEP(op.object);
	store_op_clear(&op);
	ck_assert_int_eq(run_take(STORE_OP_APPLY, STORE_KIND_WORKFLOW, "w1", wf("w1"), &op), 0);
	KEEP(op.object);
	store_op_clear(&op);
	ck_assert_int_eq(run(STORE_OP_DELETE, STORE_KIND_WORKFLOW, "w1", NULL, &op), 0);
	store_op_clear(&op);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(json_equal(kept[i], copies[i]), "tree %zu was changed", i);
		json_decref(kept[i]);
		json_decref(copies[i]);
	}
#undef KEEP
}
END_TEST

/* ---- a follower racing the writer ---- */

/* Writes OC_CONC_WRITES statuses over three Workflows; returns how many
 * failed. */
static void *conc_writer(void *arg)
{
	char agent[32];
	intptr_t fails = 0;
	(void)arg;
	for (int i = 0; i < OC_CONC_WRITES; i++) {
		static const char *const names[] = { "c0", "c1", "c2" };
		snprintf(agent, sizeof(agent), "agent-%d", i);
		json_t *b = wf_status("RUNNING", agent);
		struct store_op op = { .type = STORE_OP_STATUS,
				       .kind = STORE_KIND_WORKFLOW,
				       .namespace_ = "default",
				       .name = names[i % 3],
				       .body = b,
				       .take_body = true };
		fails += store_write1(st, &op) != 0;
		store_op_clear(&op);
		json_decref(b);
	}
	return (void *)fails;
}

static int conc_change(const struct store_change *c, void *ud)
{
	size_t *n = ud;
	const char *text = NULL;
	size_t len = 0;
	json_t *o = store_change_object(c);
	ck_assert_int_eq(store_change_text(c, &text, &len), 0);
	json_t *t = json_loadb(text, len, 0, NULL);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(!o || json_equal(o, t), "the tree of %s at rv %" PRIu64 " is not its text",
		      c->name, c->rv);
	json_decref(o);
	json_decref(t);
	(*n)++;
	return 0;
}

/* With a bound that holds two of the three objects, every write evicts
 * while the follower takes trees: each one it gets is its change's. */
START_TEST(test_follower_races_writer)
{
	struct store_options o = { .object_cache_kib = 1 };
	pthread_t th;
	void *fails = NULL;
	size_t n = 0;
	close_store();
	open_store(&o);
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "c0", wf("c0"), NULL), 0);
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "c1", wf("c1"), NULL), 0);
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "c2", wf("c2"), NULL), 0);
	uint64_t start = store_rv(), last = start, target = start + OC_CONC_WRITES;
	struct store_subscription *sub = store_subscribe(st, 1u << STORE_KIND_WORKFLOW);
	ck_assert_ptr_nonnull(sub);
	ck_assert_int_eq(pthread_create(&th, NULL, conc_writer, NULL), 0);
	for (int round = 0; round < OC_CONC_ROUNDS && last < target; round++) {
		struct pollfd p = { .fd = store_subscription_fd(sub), .events = POLLIN };
		ck_assert_int_ge(poll(&p, 1, 1000), 0);
		store_subscription_ack(sub);
		/* from a few changes back: superseded ones of names held too */
		uint64_t from = last - start > 8 ? last - 8 : start;
		ck_assert_int_eq(store_changes_each(rd, from, STORE_KIND_WORKFLOW, NULL, 0,
						    conc_change, &n, NULL, &last),
				 0);
	}
	ck_assert_int_eq(pthread_join(th, &fails), 0);
	ck_assert_ptr_null(fails);
	ck_assert_uint_eq(last, target);
	ck_assert_uint_ge(n, OC_CONC_WRITES);
	ck_assert_uint_le(stats().text, 1024);
	store_unsubscribe(st, sub);
}
END_TEST

/* ---- 6. a cache hit is the database's object ---- */

/* Templates (and Hardware, Secrets) are written by people and by bulk
 * applies: their trees are not kept, and a follower decodes them. */
START_TEST(test_kinds_not_kept)
{
	uint64_t mark = store_rv();
	json_t *t = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion",
			      "tinkerbell.org/v1alpha1", "kind", "Template", "metadata", "name",
			      "plain", "spec", "data", "version: \"0.1\"");
	struct oc_stats a = stats();
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_TEMPLATE, "plain", t, NULL), 0);
	ck_assert_int_eq(run_take(STORE_OP_MERGE_PATCH, STORE_KIND_TEMPLATE, "plain",
			     json_pack("{s:{s:{s:s}}}", "metadata", "labels", "a", "b"), NULL),
			 0);
	struct oc_stats b = stats();
	ck_assert_uint_eq(b.n, a.n);
	ck_assert_uint_eq(b.text, a.text);
	struct seen s;
	follow(mark, &s);
	ck_assert_uint_eq(s.n, 2);
	for (size_t i = 0; i < s.n; i++)
		ck_assert_ptr_null(s.c[i].obj);
	seen_free(&s);
	/* a Workflow is kept */
	ck_assert_int_eq(run_take(STORE_OP_CREATE, STORE_KIND_WORKFLOW, "kept",
			     big_workflow("kept", 10), NULL),
			 0);
	ck_assert_uint_eq(stats().n, b.n + 1);
}
END_TEST

START_TEST(test_unchanged_apply)
{
	struct store_op op;
	ck_assert_int_eq(run_take(STORE_OP_APPLY, STORE_KIND_WORKFLOW, "w1", wf("w1"), NULL), 0);
	ck_assert_int_eq(run_take(STORE_OP_STATUS, STORE_KIND_WORKFLOW, "w1",
				  wf_status("RUNNING", "agent-1"), NULL),
			 0);
	uint64_t rv = store_rv();
	struct oc_stats a = stats();
	ck_assert_int_eq(run_take(STORE_OP_APPLY, STORE_KIND_WORKFLOW, "w1", wf("w1"), &op), 0);
	struct oc_stats b = stats();
	ck_assert_int_eq(op.result, STORE_RESULT_UNCHANGED);
	ck_assert_uint_eq(b.hits, a.hits + 1);
	ck_assert_uint_eq(op.rv, rv);
	ck_assert_uint_eq(store_rv(), rv);
	json_t *got = get(STORE_KIND_WORKFLOW, "w1");
	ck_assert(json_equal(got, op.object));
	ck_assert_str_eq(status_str(op.object, "agentID"), "agent-1");
	json_decref(got);
	store_op_clear(&op);

	/* after a reopen (nothing held), the same from the database */
	close_store();
	open_store(NULL);
	ck_assert_uint_eq(stats().n, 0);
	ck_assert_int_eq(run_take(STORE_OP_APPLY, STORE_KIND_WORKFLOW, "w1", wf("w1"), &op), 0);
	ck_assert_int_eq(op.result, STORE_RESULT_UNCHANGED);
	ck_assert_uint_eq(stats().misses, 1);
	got = get(STORE_KIND_WORKFLOW, "w1");
	ck_assert(json_equal(got, op.object));
	json_decref(got);
	store_op_clear(&op);
	/* and now from the cache */
	ck_assert_int_eq(run_take(STORE_OP_APPLY, STORE_KIND_WORKFLOW, "w1", wf("w1"), &op), 0);
	ck_assert_int_eq(op.result, STORE_RESULT_UNCHANGED);
	ck_assert_uint_eq(stats().hits, 1);
	got = get(STORE_KIND_WORKFLOW, "w1");
	ck_assert(json_equal(got, op.object));
	json_decref(got);
	store_op_clear(&op);
}
END_TEST

static Suite *objcache_suite(void)
{
	Suite *s = suite_create("objcache");
	TCase *tc = tcase_create("db");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	UNIT_TEST(tc, test_follower_gets_writer_tree);
	UNIT_TEST(tc, test_deleted_change);
	UNIT_TEST(tc, test_rollback);
	UNIT_TEST(tc, test_rollback_create);
	UNIT_TEST(tc, test_rollback_then_too_large);
	UNIT_TEST(tc, test_eviction);
	UNIT_TEST(tc, test_take_body);
	UNIT_TEST(tc, test_body_changed_after);
	UNIT_TEST(tc, test_shared_trees_unchanged);
	UNIT_TEST(tc, test_kinds_not_kept);
	UNIT_TEST(tc, test_unchanged_apply);
	UNIT_TEST(tc, test_follower_races_writer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(objcache_suite());
}
