/* check_engine_shared — the engine's transitions on shared Workflow
 * trees, and the status writes an action costs (workflow/engine.h):
 * after a SUCCESS with more to do, currentState names the next action,
 * PENDING, so the GetAction that follows writes nothing, within a task
 * and across tasks of two agents, and after a retry's backoff; and
 * wf_engine_get_action(), wf_engine_report() and wf_engine_step() never
 * change the status they were given in place: the caller works on a
 * json_copy() of a cached Workflow whose status others still read.
 * Every status produced is checked against the Workflow CRD's schema. */
#include "config.h"

#include "tests/unit/engine_fixture.h"

/* currentState is exactly this action (no field more or less). */
static void current_is(const json_t *wf, const char *agent, const char *task_id,
		       const char *task_name, const char *action_id, const char *action_name,
		       const char *state)
{
	json_t *want = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "agentID", agent, "taskID", task_id,
				 "taskName", task_name, "actionID", action_id, "actionName",
				 action_name, "state", state);
	ck_assert_ptr_nonnull(want);
	const json_t *cs = at(wf, "status.currentState");
	if (!json_equal(cs, want)) {
		char *d = json_dumps(cs, JSON_COMPACT), *w = json_dumps(want, JSON_COMPACT);
		ck_abort_msg("currentState %s, want %s", d ? d : "(absent)", w);
	}
	json_decref(want);
}

/* ---- the caller's view: a cached Workflow, shared ----
 * Each call below takes *w (the cached Workflow), holds its status S and
 * a deep copy of it, runs the transition on json_copy(*w) as the worker
 * API and the controller do, and checks that S is as it was, that *w
 * still has S, and that the copy has a status of its own exactly when the
 * transition says it changed something. The copy then becomes *w. */

struct held {
	json_t *orig, *snap;
};

static struct held hold(const json_t *wf)
{
	struct held h = { .orig = json_incref(at(wf, "status")) };
	ck_assert_ptr_nonnull(h.orig);
	h.snap = json_deep_copy(h.orig);
	ck_assert_ptr_nonnull(h.snap);
	return h;
}

static void release(struct held *h, json_t **w, json_t *copy, bool changed, const char *what)
{
	if (!json_equal(h->orig, h->snap)) {
		char *now = json_dumps(h->orig, JSON_COMPACT),
		     *was = json_dumps(h->snap, JSON_COMPACT);
		ck_abort_msg("%s changed the shared status in place:\nwas %s\nnow %s", what, was,
			     now);
	}
	ck_assert_msg(at(*w, "status") == h->orig, "%s replaced the cached Workflow's status",
		      what);
	if (changed)
		ck_assert_msg(at(copy, "status") != h->orig, "%s: changed, but the same status",
			      what);
	else
		ck_assert_msg(at(copy, "status") == h->orig, "%s: unchanged, but a new status",
			      what);
	json_decref(h->orig);
	json_decref(h->snap);
	json_decref(*w);
	*w = copy;
}

static int get_shared(json_t **w, const char *agent, int64_t now, struct wf_handout *h,
		      bool *changed)
{
	struct held held = hold(*w);
	json_t *copy = json_copy(*w);
	ck_assert_ptr_nonnull(copy);
	int code = get(copy, agent, now, h, changed);
	release(&held, w, copy, *changed, "GetAction");
	return code;
}

static int report_shared(json_t **w, const char *agent, const char *task, const char *action,
			 int state, int64_t now, bool *changed)
{
	struct held held = hold(*w);
	json_t *copy = json_copy(*w);
	ck_assert_ptr_nonnull(copy);
	int code = report(copy, agent, task, action, state, now, changed);
	release(&held, w, copy, *changed, "ReportActionStatus");
	return code;
}

static int step_shared(json_t **w, int64_t now, struct wf_effects *fx)
{
	struct world none = { 0 };
	struct held held = hold(*w);
	json_t *copy = json_copy(*w);
	ck_assert_ptr_nonnull(copy);
	int r = step(copy, &none, now, fx);
	release(&held, w, copy, fx->status_changed, "the controller's step");
	return r;
}

/* Hands out action_id to agent and runs it to SUCCESS: the GetAction
 * writes nothing unless first is set (the workflow's first action), and
 * each report writes once. */
static void run_one(json_t **w, const char *agent, const char *task, const char *action, bool first,
		    int64_t now)
{
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get_shared(w, agent, now, &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, action);
	ck_assert_msg(ch == first, "GetAction of %s: changed %d", action, ch);
	wf_handout_clear(&h);
	ck_assert_int_eq(report_shared(w, agent, task, action, 2, now + S(1), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_int_eq(report_shared(w, agent, task, action, 5, now + S(2), &ch), GRPC_OK);
	ck_assert(ch);
}

/* A SUCCESS with more to do names the next action, PENDING, in
 * currentState; the GetAction that follows hands it out and writes
 * nothing; the last SUCCESS -> POST keeps the last action, SUCCESS. */
START_TEST(test_success_names_next)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, AG1, T0, &h, &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(h.action_id, "A1");
	wf_handout_clear(&h);
	current_is(wf, AG1, "T1", "os", "A1", "disk", "PENDING");
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(1), &ch), GRPC_OK);
	ck_assert(ch);
	current_is(wf, AG1, "T1", "os", "A1", "disk", "RUNNING");
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0 + S(2), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "SUCCESS");
	current_is(wf, AG1, "T1", "os", "A2", "cexec", "PENDING");

	json_t *before = json_deep_copy(at(wf, "status"));
	ck_assert_int_eq(get(wf, AG1, T0 + S(3), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A2");
	ck_assert_str_eq(h.name, "cexec");
	ck_assert(!ch);
	ck_assert(json_equal(before, at(wf, "status")));
	json_decref(before);
	wf_handout_clear(&h);

	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(4), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 5, T0 + S(5), NULL), GRPC_OK);
	current_is(wf, AG1, "T1", "os", "A3", "kexec", "PENDING");
	ck_assert_int_eq(get(wf, AG1, T0 + S(6), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A3");
	ck_assert(!ch);
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A3", 2, T0 + S(7), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A3", 5, T0 + S(8), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	current_is(wf, AG1, "T1", "os", "A3", "kexec", "SUCCESS");
	ck_assert_int_eq(get(wf, AG1, T0 + S(9), &h, &ch), GRPC_NOT_FOUND);
	ck_assert(!ch);
	json_decref(wf);
}
END_TEST

/* The last action of the first task succeeds: currentState names the
 * second task's first action, with the second agent; that agent's
 * GetAction hands it out and writes nothing, the first agent's finds
 * nothing. */
START_TEST(test_success_names_next_task)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, true);
	struct wf_handout h;
	bool ch;
	run_one(&wf, AG1, "T1", "A1", true, T0);
	run_one(&wf, AG1, "T1", "A2", false, T0 + S(10));
	run_one(&wf, AG1, "T1", "A3", false, T0 + S(20));
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.agentID"), AG2);
	current_is(wf, AG2, "T2", "post", "B1", "notify", "PENDING");
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(30), &h, &ch), GRPC_NOT_FOUND);
	ck_assert(!ch);
	ck_assert_int_eq(get_shared(&wf, AG2, T0 + S(30), &h, &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(h.task_id, "T2");
	ck_assert_str_eq(h.action_id, "B1");
	ck_assert_str_eq(h.agent_id, AG2);
	wf_handout_clear(&h);
	ck_assert_int_eq(report_shared(&wf, AG2, "T2", "B1", 2, T0 + S(31), &ch), GRPC_OK);
	ck_assert_int_eq(report_shared(&wf, AG2, "T2", "B1", 5, T0 + S(32), &ch), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	current_is(wf, AG2, "T2", "post", "B1", "notify", "SUCCESS");
	json_decref(wf);
}
END_TEST

/* GetAction on a shallow copy: the first hand-out (a new status), the
 * same action again (the status shared, not copied), and a RUNNING action
 * handed out again after a restart (a new status with a new deadline);
 * the status it was given is never changed. */
START_TEST(test_get_shared)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	struct wf_handout h;
	bool ch;
	/* (a) the first hand-out: currentState written */
	ck_assert_int_eq(get_shared(&wf, AG1, T0, &h, &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(h.action_id, "A1");
	wf_handout_clear(&h);
	current_is(wf, AG1, "T1", "os", "A1", "disk", "PENDING");
	/* (b) asked again: nothing to write */
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(1), &h, &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(h.action_id, "A1");
	wf_handout_clear(&h);
	/* (c) started, then handed out again: the deadline starts again */
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A1", 2, T0 + S(2), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.deadline"), "2026-11-25T22:01:32Z");
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(10), &h, &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(h.action_id, "A1");
	wf_handout_clear(&h);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.deadline"), "2026-11-25T22:01:40Z");
	current_is(wf, AG1, "T1", "os", "A1", "disk", "RUNNING");
	/* refused (another agent, nothing of its): nothing written or copied */
	ck_assert_int_eq(get_shared(&wf, AG2, T0 + S(11), &h, &ch), GRPC_NOT_FOUND);
	ck_assert(!ch);
	json_decref(wf);
}
END_TEST

/* Reports on a shallow copy: RUNNING, a heartbeat, SUCCESS, FAILED with
 * retries left and spent, a repeated one; the status given is never
 * changed. */
START_TEST(test_report_shared)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 1, false);
	struct wf_handout h;
	bool ch;
	run_one(&wf, AG1, "T1", "A1", true, T0);
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(3), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A2");
	wf_handout_clear(&h);
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 2, T0 + S(4), &ch), GRPC_OK);
	ck_assert(ch);
	/* a heartbeat: nothing to write */
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 2, T0 + S(5), &ch), GRPC_OK);
	ck_assert(!ch);
	/* FAILED, one retry left */
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 3, T0 + S(6), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.retryAfter"), "2026-11-25T22:00:11Z");
	/* repeated: nothing to write */
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 3, T0 + S(7), &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(11), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A2");
	wf_handout_clear(&h);
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 2, T0 + S(12), &ch), GRPC_OK);
	ck_assert(ch);
	/* FAILED, no retry left: the workflow FAILED */
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 3, T0 + S(13), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	current_is(wf, AG1, "T1", "os", "A2", "cexec", "FAILED");
	json_decref(wf);
}
END_TEST

/* The controller's step on a shallow copy: an action past its deadline
 * TIMEOUT and retried, the backoff over (nothing written), then past its
 * deadline again with no retry left (the workflow TIMEOUT). */
START_TEST(test_step_shared)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	json_object_set_new(at(wf, "status.tasks.0.actions.0"), "retries", json_integer(1));
	struct wf_effects fx;
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get_shared(&wf, AG1, T0, &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A1", 2, T0, &ch), GRPC_OK);
	/* before the deadline (60 s + 30 s of grace): nothing */
	ck_assert_int_eq(step_shared(&wf, T0 + S(89), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.wake_ms, T0 + S(90));
	ck_assert_int_eq(step_shared(&wf, T0 + S(90), &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.retryAfter"), "2026-11-25T22:01:35Z");
	current_is(wf, AG1, "T1", "os", "A1", "disk", "PENDING");
	ck_assert_int_eq(step_shared(&wf, T0 + S(95), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert(fx.notify_agent);
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(95), &h, &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(h.action_id, "A1");
	wf_handout_clear(&h);
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A1", 2, T0 + S(96), &ch), GRPC_OK);
	ck_assert_int_eq(step_shared(&wf, T0 + S(186), &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "TIMEOUT");
	current_is(wf, AG1, "T1", "os", "A1", "disk", "TIMEOUT");
	json_decref(wf);
}
END_TEST

/* A failed attempt with retries left: the action PENDING with retryAfter
 * and currentState naming it PENDING; GetAction refuses it before the
 * backoff and hands it out after, writing nothing either time. */
START_TEST(test_retry_writes_nothing)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 2, false);
	struct wf_handout h;
	bool ch;
	run_one(&wf, AG1, "T1", "A1", true, T0);
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(3), &h, &ch), GRPC_OK);
	ck_assert(!ch);
	wf_handout_clear(&h);
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 2, T0 + S(4), &ch), GRPC_OK);
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 3, T0 + S(5), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.retryAfter"), "2026-11-25T22:00:10Z");
	current_is(wf, AG1, "T1", "os", "A2", "cexec", "PENDING");
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(9), &h, &ch), GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(10), &h, &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(h.action_id, "A2");
	wf_handout_clear(&h);
	/* the retry runs: two writes, and the next action named */
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 2, T0 + S(11), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.1.retryAfter"));
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.1.attempts")), 2);
	ck_assert_int_eq(report_shared(&wf, AG1, "T1", "A2", 5, T0 + S(12), &ch), GRPC_OK);
	ck_assert(ch);
	current_is(wf, AG1, "T1", "os", "A3", "kexec", "PENDING");
	ck_assert_int_eq(get_shared(&wf, AG1, T0 + S(13), &h, &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(h.action_id, "A3");
	wf_handout_clear(&h);
	json_decref(wf);
}
END_TEST

static Suite *engine_shared_suite(void)
{
	Suite *s = suite_create("engine_shared");
	TCase *tc = tcase_create("shared");
	UNIT_TEST(tc, test_success_names_next);
	UNIT_TEST(tc, test_success_names_next_task);
	UNIT_TEST(tc, test_get_shared);
	UNIT_TEST(tc, test_report_shared);
	UNIT_TEST(tc, test_step_shared);
	UNIT_TEST(tc, test_retry_writes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(engine_shared_suite());
}
