/* check_engine — the workflow engine's worker API (workflow/engine.h)
 * without sockets or a store: which workflow an agent works on, the
 * action handed out and reports applied (each state, a repeated report,
 * a heartbeat, the wrong agent, unknown IDs, a late result), retries with
 * their backoff, durations and messages as stored, and `ironbell workflow
 * retry`. The controller's step is check_engine_step.c. Every status
 * produced is checked against the Workflow CRD's schema as the store
 * validates it. */
#include "config.h"

#include "tests/unit/engine_fixture.h"

/* A whole workflow through GetAction and reports: PENDING -> RUNNING ->
 * POST, with what each hand-out carries. */
START_TEST(test_run_to_post)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, AG1, T0, &h, &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(h.workflow_id, "tink/wf1");
	ck_assert_str_eq(h.task_id, "T1");
	ck_assert_str_eq(h.action_id, "A1");
	ck_assert_str_eq(h.name, "disk");
	ck_assert_str_eq(h.image, "img1");
	ck_assert_str_eq(h.pid, "host");
	ck_assert_int_eq(h.timeout_s, 60);
	char *env = json_dumps(h.environment, JSON_COMPACT);
	ck_assert_str_eq(env, "[\"A=action\",\"B=b\",\"Z=z\"]");
	free(env);
	char *vol = json_dumps(h.volumes, JSON_COMPACT);
	ck_assert_str_eq(vol, "[\"/dev:/dev\",\"/a:/a\"]");
	free(vol);
	ck_assert_str_eq(str_at(wf, "status.currentState.actionID"), "A1");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.currentState.taskName"), "os");
	wf_handout_clear(&h);
	/* Asked again, the same action, and nothing to write. */
	ck_assert_int_eq(get(wf, AG1, T0, &h, &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(h.action_id, "A1");
	wf_handout_clear(&h);

	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(1), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionStart"),
			 "2026-11-25T22:00:01Z");
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.0.attempts")), 1);
	/* deadline: start + 60 s + grace */
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.deadline"), "2026-11-25T22:01:31Z");
	ck_assert_str_eq(str_at(wf, "status.globalExecutionStop"), "2026-11-25T22:10:01Z");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "RUNNING");

	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0 + S(63) + 500, &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "SUCCESS");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionStop"),
			 "2026-11-25T22:01:03Z");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionDuration"), "1m2.5s");
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.0.deadline"));
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");

	/* The second action: timeout 0 is handed out as the default, capped
	 * at what remains of the global timeout (600 s from 22:00:01). */
	ck_assert_int_eq(get(wf, AG1, T0 + S(64), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A2");
	ck_assert_int_eq(h.timeout_s, 600 - 63);
	ck_assert_str_eq(h.pid, "host");
	ck_assert_str_eq(h.ns_network, "host");
	ck_assert_ptr_null(h.command);
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(65), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 5, T0 + S(66), NULL), GRPC_OK);
	ck_assert_int_eq(get(wf, AG1, T0 + S(67), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A3");
	ck_assert_int_eq(h.timeout_s, 600 - 66);
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A3", 2, T0 + S(68), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A3", 5, T0 + S(69), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "SUCCESS");
	ck_assert_str_eq(str_at(wf, "status.currentState.actionName"), "kexec");
	/* Nothing more for the agent. */
	ck_assert_int_eq(get(wf, AG1, T0 + S(70), &h, &ch), GRPC_NOT_FOUND);
	ck_assert(!ch);
	json_decref(wf);
}
END_TEST

/* The same report twice: the second changes nothing and is answered OK
 * (tink-agent retries a report until it is), whatever the report. */
START_TEST(test_repeated_reports)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, AG1, T0, &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0, &ch), GRPC_OK);
	ck_assert(ch);
	char *before = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(5), &ch), GRPC_OK);
	ck_assert(!ch);
	char *after = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0 + S(9), &ch), GRPC_OK);
	ck_assert(ch);
	before = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0 + S(12), &ch), GRPC_OK);
	ck_assert(!ch);
	/* and a late RUNNING of the finished action */
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(13), &ch), GRPC_OK);
	ck_assert(!ch);
	after = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	/* A failure, then the failure again: the workflow FAILED once. */
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(14), &ch), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 3, T0 + S(15), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.message"), "exit status 1");
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 3, T0 + S(16), &ch), GRPC_OK);
	ck_assert(!ch);
	/* A heartbeat on the failed action: stop. */
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(17), &ch), GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	json_decref(wf);
}
END_TEST

/* Reports that are refused, and the workflow unchanged. */
START_TEST(test_refused_reports)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, true);
	char *before = json_dumps(wf, JSON_SORT_KEYS);
	bool ch;
	/* another agent's task */
	ck_assert_int_eq(report(wf, AG2, "T1", "A1", 2, T0, &ch), GRPC_PERMISSION_DENIED);
	ck_assert_int_eq(report(wf, "cc:00:00:00:00:03", "T1", "A1", 5, T0, &ch),
			 GRPC_PERMISSION_DENIED);
	/* unknown task, unknown action, action of another task */
	ck_assert_int_eq(report(wf, AG1, "T9", "A1", 2, T0, &ch), GRPC_NOT_FOUND);
	ck_assert_int_eq(report(wf, AG1, "T1", "A9", 2, T0, &ch), GRPC_NOT_FOUND);
	ck_assert_int_eq(report(wf, AG1, "T1", "B1", 2, T0, &ch), GRPC_NOT_FOUND);
	/* not the next action */
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0, &ch), GRPC_FAILED_PRECONDITION);
	/* a later task's agent before its turn */
	ck_assert_int_eq(report(wf, AG2, "T2", "B1", 2, T0, &ch), GRPC_FAILED_PRECONDITION);
	/* malformed */
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 0, T0, &ch), GRPC_INVALID_ARGUMENT);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 1, T0, &ch), GRPC_INVALID_ARGUMENT);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 6, T0, &ch), GRPC_INVALID_ARGUMENT);
	ck_assert_int_eq(report(wf, AG1, "", "A1", 2, T0, &ch), GRPC_INVALID_ARGUMENT);
	ck_assert_int_eq(report(wf, AG1, "T1", "", 2, T0, &ch), GRPC_INVALID_ARGUMENT);
	ck_assert_int_eq(report(wf, "", "T1", "A1", 2, T0, &ch), GRPC_INVALID_ARGUMENT);
	struct wf_clock c = clk_at(T0);
	char msg[256];
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = AG1,
			       .task_id = "T1",
			       .action_id = "A1",
			       .state = 5,
			       .start_ms = T0,
			       .stop_ms = T0 - 1 };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)),
			 GRPC_INVALID_ARGUMENT);
	r.stop_ms = T0;
	r.workflow_id = "tink/other";
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_NOT_FOUND);
	r.workflow_id = "wf1";
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_NOT_FOUND);
	ck_assert(!ch);
	char *after = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	/* GetAction for an agent with no task here, and with an empty ID */
	struct wf_handout h;
	ck_assert_int_eq(get(wf, "cc:00:00:00:00:03", T0, &h, &ch), GRPC_NOT_FOUND);
	ck_assert_int_eq(get(wf, "", T0, &h, &ch), GRPC_INVALID_ARGUMENT);
	/* the second task's agent waits for the first task */
	ck_assert_int_eq(get(wf, AG2, T0, &h, &ch), GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	json_decref(wf);
}
END_TEST

/* tink-agent's RUNNING report carries Go's zero time (0001-01-01) as its
 * start and stop: taken as absent, the server's time used. */
START_TEST(test_zero_times)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	struct wf_clock c = clk_at(T0);
	char msg[256];
	bool ch;
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = AG1,
			       .task_id = "T1",
			       .action_id = "A1",
			       .state = 2,
			       .start_ms = -62135596800000LL,
			       .stop_ms = -62135596800000LL,
			       .duration = "0s",
			       .message = "" };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionStart"),
			 "2026-11-25T22:00:00Z");
	valid(wf);
	json_decref(wf);
}
END_TEST

/* Two tasks of two agents: the first's last SUCCESS hands the workflow
 * (status.agentID) to the second agent. */
START_TEST(test_two_tasks)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, true);
	struct wf_handout h;
	bool ch;
	const char *ids[] = { "A1", "A2", "A3" };
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(get(wf, AG1, T0 + S(i), &h, &ch), GRPC_OK);
		ck_assert_str_eq(h.action_id, ids[i]);
		wf_handout_clear(&h);
		ck_assert_int_eq(report(wf, AG1, "T1", ids[i], 2, T0 + S(i), NULL), GRPC_OK);
		ck_assert_int_eq(report(wf, AG1, "T1", ids[i], 5, T0 + S(i), NULL), GRPC_OK);
	}
	ck_assert_str_eq(str_at(wf, "status.agentID"), AG2);
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_int_eq(get(wf, AG1, T0 + S(4), &h, &ch), GRPC_NOT_FOUND);
	ck_assert_int_eq(get(wf, AG2, T0 + S(4), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.task_id, "T2");
	ck_assert_str_eq(h.action_id, "B1");
	ck_assert_str_eq(h.agent_id, AG2);
	ck_assert_str_eq(h.pid, "");
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG2, "T2", "B1", 2, T0 + S(5), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG2, "T2", "B1", 5, T0 + S(6), NULL), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	json_decref(wf);
}
END_TEST

/* After a restart the action in progress is handed out again: handed out
 * but not started (currentState PENDING), and started (RUNNING). */
START_TEST(test_reserve_after_restart)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, AG1, T0, &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	/* the status as written, read back by a new process */
	char *text = json_dumps(wf, 0);
	json_decref(wf);
	wf = jload(text);
	free(text);
	ck_assert_int_eq(get(wf, AG1, T0 + S(1), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A1");
	ck_assert(!ch);
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(2), NULL), GRPC_OK);
	text = json_dumps(wf, 0);
	json_decref(wf);
	wf = jload(text);
	free(text);
	ck_assert_int_eq(get(wf, AG1, T0 + S(3), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A1");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "RUNNING");
	/* the handed-out timeout counts from now, not from the start, and so
	 * does the server's deadline */
	ck_assert_int_eq(h.timeout_s, 60);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.deadline"), "2026-11-25T22:01:33Z");
	wf_handout_clear(&h);
	/* the agent says RUNNING again: a heartbeat, the attempt not counted twice */
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(4), &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.0.attempts")), 1);
	json_decref(wf);
}
END_TEST

/* An action with retries: a failure puts it back to PENDING with a
 * backoff (5 s, then 10 s), GetAction says FAILED_PRECONDITION until then,
 * a repeated failure report is not a second failure, and once the retries
 * are spent the workflow FAILS. */
START_TEST(test_retries)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 2, false);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0, NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0, NULL), GRPC_OK);
	ck_assert_int_eq(get(wf, AG1, T0, &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A2");
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(1), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 3, T0 + S(2), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.retryAfter"), "2026-11-25T22:00:07Z");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.message"), "exit status 1");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.type"), "ActionRetry");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.reason"), "ActionFailed");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.message"),
			 "action \"cexec\" FAILED on attempt 1 of 3: retried in 5s");
	/* repeated */
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 3, T0 + S(3), &ch), GRPC_OK);
	ck_assert(!ch);
	/* not before the backoff */
	ck_assert_int_eq(get(wf, AG1, T0 + S(6), &h, &ch), GRPC_FAILED_PRECONDITION);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(6), &ch), GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	ck_assert_int_eq(get(wf, AG1, T0 + S(7), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A2");
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(8), NULL), GRPC_OK);
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.1.retryAfter"));
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.1.message"));
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.1.attempts")), 2);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 4, T0 + S(9), NULL), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.retryAfter"), "2026-11-25T22:00:19Z");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.reason"), "ActionTimeout");
	ck_assert_int_eq(get(wf, AG1, T0 + S(19), &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(20), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 3, T0 + S(21), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.state"), "FAILED");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "FAILED");
	ck_assert_int_eq(get(wf, AG1, T0 + S(30), &h, &ch), GRPC_NOT_FOUND);
	json_decref(wf);
}
END_TEST

/* The active workflow of an agent: the newest PREPARING/PENDING/RUNNING
 * one; a finished, disabled or legacy one never hides it. */
START_TEST(test_pick)
{
	json_t *old = mkwf("old", "2026-11-25T20:00:00Z", 0, false);
	json_t *mid = mkwf("mid", "2026-11-25T21:00:00Z", 0, false);
	json_t *new = mkwf("new", "2026-11-25T22:00:00Z", 0, false);
	json_t *wfs[3] = { old, new, mid };
	ck_assert_int_eq(wf_engine_pick(wfs, 3, AG1), 1);
	ck_assert_int_eq(wf_engine_pick(wfs, 3, AG2), -ENOENT);
	ck_assert_int_eq(wf_engine_pick(wfs, 3, ""), -ENOENT);
	ck_assert_int_eq(wf_engine_pick(wfs, 0, AG1), -ENOENT);
	/* the newest finished: the next newest */
	json_object_set_new(at(new, "status"), "state", json_string("SUCCESS"));
	ck_assert_int_eq(wf_engine_pick(wfs, 3, AG1), 2);
	json_object_set_new(at(mid, "status"), "state", json_string("FAILED"));
	ck_assert_int_eq(wf_engine_pick(wfs, 3, AG1), 0);
	/* disabled */
	json_object_set_new(at(old, "spec"), "disabled", json_true());
	ck_assert_int_eq(wf_engine_pick(wfs, 3, AG1), -ENOENT);
	json_object_del(at(old, "spec"), "disabled");
	/* legacy, and PREPARING (picked: GetAction then says to wait) */
	json_object_set_new(at(old, "status"), "state", json_string("STATE_RUNNING"));
	ck_assert_int_eq(wf_engine_pick(wfs, 3, AG1), -ENOENT);
	json_object_set_new(at(old, "status"), "state", json_string("PREPARING"));
	ck_assert_int_eq(wf_engine_pick(wfs, 3, AG1), 0);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(old, AG1, T0, &h, &ch), GRPC_FAILED_PRECONDITION);
	/* same creation time: the name decides */
	json_t *a = mkwf("a", "2026-11-25T22:00:00Z", 0, false);
	json_t *b = mkwf("b", "2026-11-25T22:00:00Z", 0, false);
	json_t *two[2] = { b, a };
	ck_assert_int_eq(wf_engine_pick(two, 2, AG1), 0);
	/* a task's agent that is not status.agentID yet */
	json_t *t2 = mkwf("t2", "2026-11-25T22:00:00Z", 0, true);
	ck_assert_int_eq(wf_engine_pick(&t2, 1, AG2), 0);
	json_decref(old);
	json_decref(mid);
	json_decref(new);
	json_decref(a);
	json_decref(b);
	json_decref(t2);
}
END_TEST

/* A workflow the server ended while the agent ran an action: the
 * heartbeat and the result are refused with FAILED_PRECONDITION. */
START_TEST(test_heartbeat_after_end)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	bool ch;
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0, NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(10), &ch), GRPC_OK);
	ck_assert(!ch);
	json_t *a = at(wf, "status.tasks.0.actions.0");
	json_object_set_new(a, "state", json_string("TIMEOUT"));
	json_object_set_new(at(wf, "status"), "state", json_string("TIMEOUT"));
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0 + S(20), &ch), GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	/* its result: nothing changes, and OK (tink-agent stops its loop on
	 * FAILED_PRECONDITION, and there is nothing left to stop) */
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0 + S(20), &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 3, T0 + S(20), &ch), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "TIMEOUT");
	/* the agent's own TIMEOUT, repeated after the server's: accepted as is */
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 4, T0 + S(20), &ch), GRPC_OK);
	ck_assert(!ch);
	json_decref(wf);
}
END_TEST

/* Unit pieces: state names, legacy states. */
START_TEST(test_states)
{
	enum wf_state st;
	bool legacy;
	ck_assert_int_eq(wf_state_parse("RUNNING", &st, &legacy), 0);
	ck_assert_int_eq(st, WF_STATE_RUNNING);
	ck_assert(!legacy);
	ck_assert_int_eq(wf_state_parse("STATE_PENDING", &st, &legacy), 0);
	ck_assert_int_eq(st, WF_STATE_PENDING);
	ck_assert(legacy);
	ck_assert_int_eq(wf_state_parse("", &st, NULL), 0);
	ck_assert_int_eq(st, WF_STATE_NONE);
	ck_assert_int_eq(wf_state_parse("running", &st, NULL), -EINVAL);
	ck_assert_int_eq(wf_state_parse(NULL, &st, NULL), -EINVAL);
	ck_assert_str_eq(wf_state_name(WF_STATE_TIMEOUT), "TIMEOUT");
	ck_assert_ptr_null(wf_state_name(WF_STATE_MAX));
	ck_assert(wf_state_terminal(WF_STATE_FAILED));
	ck_assert(!wf_state_terminal(WF_STATE_POST));
}
END_TEST

/* The server timed an attempt out and put it back for a retry; the
 * agent's SUCCESS then comes late: taken, not run again. */
START_TEST(test_late_success)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 1, false);
	struct world w = { 0 };
	struct wf_effects fx;
	bool ch;
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0, NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0, NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0, NULL), GRPC_OK);
	/* A2's timeout is 0: the default, capped at the 600 s global timeout */
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.deadline"), "2026-11-25T22:10:30Z");
	ck_assert_int_eq(step(wf, &w, T0 + S(630), &fx), 0);
	/* the global timeout came first */
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	json_decref(wf);

	wf = mkwf("wf1", "2026-11-25T21:00:00Z", 1, false);
	json_object_set_new(at(wf, "status"), "globalTimeout", json_integer(0));
	json_object_set_new(at(wf, "status.tasks.0.actions.1"), "timeout", json_integer(10));
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0, NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0, NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0, NULL), GRPC_OK);
	ck_assert_int_eq(step(wf, &w, T0 + S(40), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.message"),
			 "no result from the agent within the action's timeout and 30s of grace");
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 5, T0 + S(41), &ch), GRPC_OK);
	ck_assert(ch);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.state"), "SUCCESS");
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.1.retryAfter"));
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.1.attempts")), 1);
	/* a SUCCESS with more to do names the next action, PENDING */
	ck_assert_str_eq(str_at(wf, "status.currentState.actionID"), "A3");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "PENDING");
	struct wf_handout h;
	ck_assert_int_eq(get(wf, AG1, T0 + S(42), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A3");
	ck_assert(!ch);
	wf_handout_clear(&h);
	json_decref(wf);
}
END_TEST

/* `ironbell workflow retry`: from the failed action, the ones before it
 * kept; refused on a workflow that did not fail. */
START_TEST(test_workflow_retry)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	char msg[256];
	ck_assert_int_eq(wf_workflow_retry(wf, T0, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "the workflow is PENDING: only a FAILED or TIMEOUT one is retried");
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 2, T0, NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0 + S(1), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(2), NULL), GRPC_OK);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 3, T0 + S(3), NULL), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_int_eq(wf_workflow_retry(wf, T0 + S(60), msg, sizeof(msg)), 0);
	valid(wf);
	ck_assert_str_eq(msg, "retried from action \"cexec\" of task \"os\"");
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "SUCCESS");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionDuration"), "1s");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.state"), "PENDING");
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.1.message"));
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.1.attempts"));
	ck_assert_ptr_null(at(wf, "status.tasks.0.actions.1.executionStart"));
	ck_assert_ptr_null(at(wf, "status.currentState"));
	ck_assert_ptr_null(at(wf, "status.globalExecutionStop"));
	ck_assert_str_eq(str_at(wf, "status.conditions.0.type"), "Retried");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.time"), "2026-11-25T22:01:00Z");
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, AG1, T0 + S(61), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A2");
	wf_handout_clear(&h);
	ck_assert_int_eq(report(wf, AG1, "T1", "A2", 2, T0 + S(62), NULL), GRPC_OK);
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.1.attempts")), 1);
	ck_assert_int_eq(wf_workflow_retry(wf, T0, msg, sizeof(msg)), -EINVAL);
	json_t *bad = jload("{\"kind\":\"Workflow\"}");
	ck_assert_int_eq(wf_workflow_retry(bad, T0, msg, sizeof(msg)), -EINVAL);
	json_decref(bad);
	json_decref(wf);
}
END_TEST

/* Durations as Go prints them, through a report's start and stop. */
START_TEST(test_durations)
{
	static const struct {
		int64_t ms;
		const char *s;
	} cases[] = {
		{ 0, "0s" },       { 500, "500ms" },      { 1500, "1.5s" },
		{ 62000, "1m2s" }, { 3600000, "1h0m0s" }, { 3723456, "1h2m3.456s" },
		{ 1010, "1.01s" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
		struct wf_clock c = clk_at(T0);
		char msg[256];
		bool ch;
		struct wf_report r = { .workflow_id = "tink/wf1",
				       .agent_id = AG1,
				       .task_id = "T1",
				       .action_id = "A1",
				       .state = 2,
				       .start_ms = T0 };
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		r.state = 5;
		r.stop_ms = T0 + cases[i].ms;
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionDuration"),
				 cases[i].s);
		json_decref(wf);
	}
}
END_TEST

/* A long or ill-formed message is kept cut and as valid UTF-8. */
START_TEST(test_message_cut)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	char *big = malloc(WF_MESSAGE_MAX * 2);
	memset(big, 'x', WF_MESSAGE_MAX * 2 - 1);
	big[WF_MESSAGE_MAX * 2 - 1] = '\0';
	big[0] = '\xff';
	struct wf_clock c = clk_at(T0);
	char msg[256];
	bool ch;
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = AG1,
			       .task_id = "T1",
			       .action_id = "A1",
			       .state = 2,
			       .start_ms = T0 };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	r.state = 3;
	r.message = big;
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	const char *m = str_at(wf, "status.tasks.0.actions.0.message");
	ck_assert_uint_le(strlen(m), WF_MESSAGE_MAX);
	ck_assert(strncmp(m, "\xef\xbf\xbd", 3) == 0);
	ck_assert_str_eq(m + strlen(m) - 3, "...");
	valid(wf);
	free(big);
	json_decref(wf);
}
END_TEST

/* The daemon's settings, when given, replace the default timeout, the
 * grace and the backoff. */
START_TEST(test_settings)
{
	struct wf_settings set = { .default_action_timeout_s = 100,
				   .action_grace_s = 5,
				   .retry_base_s = 2,
				   .retry_max_s = 3 };
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 3, false);
	json_object_set_new(at(wf, "status"), "globalTimeout", json_integer(0));
	struct wf_clock c = clk_at(T0);
	c.settings = &set;
	struct wf_handout h;
	char msg[256];
	bool ch;
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = AG1,
			       .task_id = "T1",
			       .action_id = "A1",
			       .state = 2,
			       .start_ms = T0,
			       .message = "" };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	/* 60 s + 5 s of grace */
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.deadline"), "2026-11-25T22:01:05Z");
	r.state = 5;
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_int_eq(wf_engine_get_action(wf, AG1, &c, &h, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_int_eq(h.timeout_s, 100); /* timeout 0 */
	wf_handout_clear(&h);
	r.action_id = "A2";
	const char *after[] = { "2026-11-25T22:00:02Z", "2026-11-25T22:00:03Z",
				"2026-11-25T22:00:03Z" };
	for (int i = 0; i < 3; i++) {
		r.state = 2;
		c.now_ms = T0 + S(10 * i);
		r.start_ms = c.now_ms;
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		r.state = 3;
		c.now_ms = T0;
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.1.retryAfter"), after[i]);
		c.now_ms = T0 + S(10 * i + 5);
	}
	json_decref(wf);
}
END_TEST

/* Statuses of odd shapes (from another controller, or a Kubernetes
 * cluster): every function answers, none crashes. */
static const char *const odd_statuses[] = {
	"{}",
	"{\"state\":\"RUNNING\"}",
	"{\"state\":\"RUNNING\",\"tasks\":7}",
	"{\"state\":\"RUNNING\",\"tasks\":[7,\"x\",null]}",
	"{\"state\":\"RUNNING\",\"tasks\":[{\"id\":\"T1\",\"agentID\":\"aa:00:00:00:00:01\","
	"\"actions\":{}}]}",
	"{\"state\":\"RUNNING\",\"tasks\":[{\"id\":\"T1\",\"agentID\":\"aa:00:00:00:00:01\","
	"\"actions\":[{\"id\":\"A1\",\"state\":7,\"timeout\":\"x\"}]}]}",
	"{\"state\":\"PENDING\",\"globalExecutionStop\":\"not a time\",\"tasks\":[{\"id\":"
	"\"T1\",\"agentID\":\"aa:00:00:00:00:01\",\"environment\":[1],\"volumes\":{},"
	"\"actions\":[{\"id\":\"A1\",\"state\":\"PENDING\",\"environment\":{\"K\":1},"
	"\"deadline\":\"2026-13-45T99:00:00Z\",\"retryAfter\":5}]}]}",
	"{\"state\":\"FAILED\",\"tasks\":[],\"bootOptions\":[],\"conditions\":{}}",
	"{\"state\":\"POST\",\"bootOptions\":{\"allowNetboot\":7,\"jobs\":[]}}",
	"{\"state\":\"BOGUS\"}",
};

START_TEST(test_odd_statuses)
{
	json_t *wf = mkwf("wf1", "2026-11-25T21:00:00Z", 0, false);
	json_object_set_new(wf, "status", jload(odd_statuses[_i]));
	json_object_set_new(at(wf, "spec"), "bootOptions",
			    jload("{\"toggleAllowNetboot\":true,\"bootMode\":\"isoboot\","
				  "\"isoURL\":\"http://x/y.iso\"}"));
	struct wf_clock c = clk_at(T0);
	struct wf_handout h;
	struct wf_effects fx;
	char msg[256];
	bool ch;
	int code = wf_engine_get_action(wf, AG1, &c, &h, &ch, msg, sizeof(msg));
	ck_assert_int_ge(code, 0);
	ck_assert_int_lt(code, GRPC_CODE_MAX);
	wf_handout_clear(&h);
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = AG1,
			       .task_id = "T1",
			       .action_id = "A1",
			       .state = 2,
			       .message = "" };
	code = wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg));
	ck_assert_int_ge(code, 0);
	r.state = 3;
	code = wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg));
	ck_assert_int_ge(code, 0);
	ck_assert_int_ge(wf_engine_pick(&wf, 1, AG1), -ENOENT);
	struct wf_inputs in = { 0 };
	ck_assert_int_eq(wf_engine_step(wf, &in, &c, &fx), 0);
	wf_effects_clear(&fx);
	wf_workflow_retry(wf, T0, msg, sizeof(msg));
	json_decref(wf);
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("worker");
	UNIT_TEST(tc, test_states);
	UNIT_TEST(tc, test_run_to_post);
	UNIT_TEST(tc, test_repeated_reports);
	UNIT_TEST(tc, test_refused_reports);
	UNIT_TEST(tc, test_zero_times);
	UNIT_TEST(tc, test_two_tasks);
	UNIT_TEST(tc, test_reserve_after_restart);
	UNIT_TEST(tc, test_retries);
	UNIT_TEST(tc, test_pick);
	UNIT_TEST(tc, test_heartbeat_after_end);
	UNIT_TEST(tc, test_late_success);
	UNIT_TEST(tc, test_durations);
	UNIT_TEST(tc, test_message_cut);
	UNIT_TEST(tc, test_workflow_retry);
	UNIT_TEST(tc, test_settings);
	tcase_add_loop_test(tc, test_odd_statuses, 0,
			    (int)(sizeof(odd_statuses) / sizeof(odd_statuses[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(engine_suite());
}
