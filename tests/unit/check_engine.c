/* check_engine — the workflow engine's transitions (workflow/engine.h)
 * without sockets or a store: which workflow an agent works on, the
 * action handed out and reports applied (each state, a repeated report,
 * a heartbeat, the wrong agent, unknown IDs), retries with their backoff,
 * and the controller's steps (rendering, boot options and their Jobs,
 * timeouts, cleanup, legacy statuses), and `ironbell workflow retry`.
 * Every status produced is checked against the Workflow CRD's schema as
 * the store validates it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grpc.h"
#include "store/store.h"
#include "tests/unit/unit.h"
#include "workflow/engine.h"

/* 2026-11-25T22:00:00Z */
#define T0 1795644000000LL
#define S(x) ((x)*1000LL)

/* Deterministic "randomness": a counter. */
static void counter_random(void *buf, size_t n, void *userdata)
{
	unsigned *c = userdata;
	unsigned char *b = buf;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(*c + i);
	(*c)++;
}

static unsigned rnd_counter;
static struct wf_clock clk_at(int64_t ms)
{
	return (struct wf_clock){ .now_ms = ms,
				  .random = counter_random,
				  .userdata = &rnd_counter };
}

/* The status is valid for the store's Workflow schema. */
static void valid(const json_t *wf)
{
	char err[1024] = "";
	const json_t *st = json_object_get(wf, "status");
	ck_assert_ptr_nonnull(st);
	int r = store_validate_status(STORE_KIND_WORKFLOW, st, err, sizeof(err));
	if (r != 0) {
		char *d = json_dumps(st, JSON_INDENT(1));
		ck_abort_msg("invalid status: %s\n%s", err, d);
	}
}

static json_t *jload(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	ck_assert_msg(j != NULL, "%s at %d:%d", e.text, e.line, e.column);
	return j;
}

/* A path "a.b.0.c" in j. */
static json_t *at(const json_t *j, const char *path)
{
	json_t *cur = (json_t *)j;
	const char *p = path;
	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (json_is_array(cur))
			cur = json_array_get(cur, strtoul(key, NULL, 10));
		else
			cur = json_object_get(cur, key);
		p += n + (dot != NULL);
	}
	return cur;
}

static const char *str_at(const json_t *j, const char *path)
{
	const char *s = json_string_value(at(j, path));
	return s ? s : "(absent)";
}

/* A rendered workflow in state PENDING: task "os" of agent aa:..:01 with
 * three actions (the second with `retries`), and, when two_tasks, a task
 * "post" of agent bb:..:02 with one action. */
static json_t *mkwf(const char *name, const char *created, int retries, bool two_tasks)
{
	char text[4096];
	snprintf(
		text, sizeof(text),
		"{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Workflow\","
		"\"metadata\":{\"name\":\"%s\",\"namespace\":\"tink\",\"creationTimestamp\":\"%s\"},"
		"\"spec\":{\"templateRef\":\"t\",\"hardwareRef\":\"hw\"},"
		"\"status\":{\"state\":\"PENDING\",\"agentID\":\"aa:00:00:00:00:01\","
		"\"templateRendering\":\"successful\",\"globalTimeout\":600,"
		"\"tasks\":[{\"id\":\"T1\",\"name\":\"os\",\"agentID\":\"aa:00:00:00:00:01\","
		"\"volumes\":[\"/dev:/dev\"],\"environment\":{\"A\":\"task\",\"Z\":\"z\"},"
		"\"actions\":["
		"{\"id\":\"A1\",\"name\":\"disk\",\"image\":\"img1\",\"timeout\":60,"
		"\"command\":[\"x\"],\"environment\":{\"A\":\"action\",\"B\":\"b\"},"
		"\"volumes\":[\"/a:/a\"],\"pid\":\"host\",\"state\":\"PENDING\"},"
		"{\"id\":\"A2\",\"name\":\"cexec\",\"image\":\"img2\",\"timeout\":0,"
		"\"namespaces\":{\"network\":\"host\",\"pid\":\"host\"},\"state\":\"PENDING\"},"
		"{\"id\":\"A3\",\"name\":\"kexec\",\"image\":\"img3\",\"timeout\":900,"
		"\"state\":\"PENDING\"}]}]}}",
		name, created);
	json_t *wf = jload(text);
	if (retries)
		json_object_set_new(at(wf, "status.tasks.0.actions.1"), "retries",
				    json_integer(retries));
	if (two_tasks)
		json_array_append_new(
			at(wf, "status.tasks"),
			jload("{\"id\":\"T2\",\"name\":\"post\",\"agentID\":\"bb:00:00:00:00:02\","
			      "\"actions\":[{\"id\":\"B1\",\"name\":\"notify\",\"image\":\"img4\","
			      "\"timeout\":30,\"state\":\"PENDING\"}]}"));
	valid(wf);
	return wf;
}

#define AG1 "aa:00:00:00:00:01"
#define AG2 "bb:00:00:00:00:02"

static int get(json_t *wf, const char *agent, int64_t now, struct wf_handout *h, bool *changed)
{
	char msg[256];
	struct wf_clock c = clk_at(now);
	int r = wf_engine_get_action(wf, agent, &c, h, changed, msg, sizeof(msg));
	valid(wf);
	return r;
}

static int report(json_t *wf, const char *agent, const char *task, const char *action, int state,
		  int64_t now, bool *changed)
{
	char msg[256];
	struct wf_clock c = clk_at(now);
	struct wf_report r = {
		.workflow_id = "tink/wf1",
		.agent_id = agent,
		.task_id = task,
		.action_id = action,
		.action_name = "",
		.state = state,
		.start_ms = state == 2 ? now : 0,
		.stop_ms = state == 2 ? 0 : now,
		.duration = "",
		.message = state == 3 ? "exit status 1" : "",
	};
	bool ch = false;
	int code = wf_engine_report(wf, &r, &c, changed ? changed : &ch, msg, sizeof(msg));
	valid(wf);
	return code;
}

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
	/* the handed-out timeout counts from now, not from the start */
	ck_assert_int_eq(h.timeout_s, 60);
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
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 5, T0 + S(20), &ch), GRPC_FAILED_PRECONDITION);
	ck_assert_int_eq(report(wf, AG1, "T1", "A1", 3, T0 + S(20), &ch), GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
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

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("worker");
	UNIT_TEST(tc, test_states);
	UNIT_TEST(tc, test_run_to_post);
	UNIT_TEST(tc, test_repeated_reports);
	UNIT_TEST(tc, test_refused_reports);
	UNIT_TEST(tc, test_two_tasks);
	UNIT_TEST(tc, test_reserve_after_restart);
	UNIT_TEST(tc, test_retries);
	UNIT_TEST(tc, test_pick);
	UNIT_TEST(tc, test_heartbeat_after_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(engine_suite());
}
