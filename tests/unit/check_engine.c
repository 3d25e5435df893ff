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

/* ---- the controller's step ---- */

#define MAC "08:00:27:9e:f5:3a"

/* The playground's template as a Template object. */
static json_t *mktemplate(const char *data)
{
	json_t *t = jload("{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Template\","
			  "\"metadata\":{\"name\":\"ubuntu\",\"namespace\":\"tink\"},\"spec\":{}}");
	if (data) {
		json_object_set_new(at(t, "spec"), "data", json_string(data));
	} else {
		size_t n;
		char *src = unit_fixture("template-ubuntu.tmpl", 256 * 1024, &n);
		json_object_set_new(at(t, "spec"), "data", json_string(src));
		free(src);
	}
	return t;
}

/* The fixture's Hardware, with a BMC and (when uefi) UEFI. */
static json_t *mkhw(bool uefi)
{
	size_t n;
	char *text = unit_fixture("template-ubuntu.hw.json", 64 * 1024, &n);
	json_t *hw = jload(text);
	free(text);
	json_object_set_new(at(hw, "spec"), "bmcRef",
			    jload("{\"apiGroup\":\"bmc.tinkerbell.org\",\"kind\":\"Machine\","
				  "\"name\":\"bmc1\"}"));
	json_object_set_new(at(hw, "spec.interfaces.0.dhcp"), "uefi", json_boolean(uefi));
	return hw;
}

/* A new Workflow "wf1" for machine1 with bootOptions (JSON, may be NULL). */
static json_t *mknew(const char *boot_options)
{
	json_t *wf = jload("{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Workflow\","
			   "\"metadata\":{\"name\":\"wf1\",\"namespace\":\"tink\","
			   "\"creationTimestamp\":\"2026-11-25T21:00:00Z\"},"
			   "\"spec\":{\"templateRef\":\"ubuntu\",\"hardwareRef\":\"machine1\","
			   "\"hardwareMap\":{\"device_1\":\"" MAC "\"}}}");
	if (boot_options)
		json_object_set_new(at(wf, "spec"), "bootOptions", jload(boot_options));
	return wf;
}

struct world {
	json_t *tmpl, *hw;
	const json_t *jobs[2];
	size_t n_jobs;
};

static int step(json_t *wf, struct world *w, int64_t now, struct wf_effects *fx)
{
	struct wf_inputs in = {
		.template_obj = w->tmpl, .hardware = w->hw, .jobs = w->jobs, .n_jobs = w->n_jobs
	};
	struct wf_clock c = clk_at(now);
	int r = wf_engine_step(wf, &in, &c, fx);
	if (json_object_get(wf, "status"))
		valid(wf);
	return r;
}

/* A bmc Job named name with condition type (NULL: none yet). */
static json_t *mkjob(const char *name, const char *type, const char *message)
{
	json_t *j = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:{s:s},s:[]},s:{s:[]}}", "apiVersion",
			      "bmc.tinkerbell.org/v1alpha1", "kind", "Job", "metadata", "name",
			      name, "namespace", "tink", "uid", "uid-1", "spec", "machineRef",
			      "name", "bmc1", "tasks", "status", "conditions");
	ck_assert_ptr_nonnull(j);
	if (type)
		json_array_append_new(at(j, "status.conditions"),
				      json_pack("{s:s,s:s,s:s}", "type", type, "status", "True",
						"message", message));
	return j;
}

/* Hands out and succeeds every action of the workflow, from now. */
static void run_all(json_t *wf, int64_t now)
{
	struct wf_handout h;
	bool ch;
	for (int i = 0; i < 50; i++) {
		int code = get(wf, MAC, now, &h, &ch);
		if (code != GRPC_OK)
			return;
		char t[64], a[64];
		snprintf(t, sizeof(t), "%s", h.task_id);
		snprintf(a, sizeof(a), "%s", h.action_id);
		wf_handout_clear(&h);
		struct wf_clock c = clk_at(now);
		char msg[256];
		struct wf_report r = { .workflow_id = "tink/wf1",
				       .agent_id = MAC,
				       .task_id = t,
				       .action_id = a,
				       .state = 2,
				       .start_ms = now };
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		r.state = 5;
		r.stop_ms = now + 500;
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		valid(wf);
	}
	ck_abort_msg("more than 50 actions");
}

/* The message of the condition of this type. */
static const char *cond_msg(const json_t *wf, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach (at(wf, "status.conditions"), i, c)
		if (strcmp(str_at(c, "type"), type) == 0)
			return str_at(c, "message");
	return "(no such condition)";
}

static bool is_ulid(const char *s)
{
	if (strlen(s) != 26)
		return false;
	for (; *s; s++)
		if (!strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", *s))
			return false;
	return true;
}

/* "" -> PENDING: the playground template rendered into tasks and actions
 * with ULIDs; a second step changes nothing. */
START_TEST(test_render)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew(NULL);
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.agentID"), MAC);
	ck_assert_str_eq(str_at(wf, "status.templateRendering"), "successful");
	ck_assert_int_eq(json_integer_value(at(wf, "status.globalTimeout")), 1800);
	ck_assert_str_eq(str_at(wf, "status.conditions.0.type"), "TemplateRenderedSuccess");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.status"), "True");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.time"), "2026-11-25T22:00:00Z");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.name"), "os installation");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.agentID"), MAC);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.volumes.0"), "/dev:/dev");
	ck_assert(is_ulid(str_at(wf, "status.tasks.0.id")));
	/* 48 bits of time first: the same for IDs made at the same ms */
	char ts[11];
	snprintf(ts, sizeof(ts), "%s", str_at(wf, "status.tasks.0.id"));
	ck_assert_str_eq(ts, "01M8ABJ1R0");
	json_t *actions = at(wf, "status.tasks.0.actions");
	ck_assert_uint_ge(json_array_size(actions), 8);
	ck_assert_str_eq(str_at(actions, "0.name"), "stream ubuntu image");
	ck_assert_str_eq(str_at(actions, "0.state"), "PENDING");
	ck_assert_str_eq(str_at(actions, "0.environment.DEST_DISK"), "/dev/nvme0n1");
	ck_assert_int_eq(json_integer_value(at(actions, "0.timeout")), 600);
	ck_assert(is_ulid(str_at(actions, "0.id")));
	ck_assert_str_ne(str_at(actions, "0.id"), str_at(actions, "1.id"));
	ck_assert_ptr_null(at(actions, "0.retries"));
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_str_eq(fx.events[0].reason, "Rendered");
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert_uint_eq(fx.n_jobs, 0);
	ck_assert_int_eq(fx.wake_ms, 0);
	/* again: nothing to do */
	char *before = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_int_eq(step(wf, &w, T0 + S(60), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_uint_eq(fx.n_events, 0);
	char *after = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	/* and the whole workflow runs to POST, then SUCCESS */
	run_all(wf, T0 + S(61));
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	ck_assert_int_eq(step(wf, &w, T0 + S(62), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* Render failures: FAILED with the stage, line and column; the template
 * and the Hardware missing: wait in "" with a condition saying which. */
START_TEST(test_render_failure)
{
	struct world w = { .tmpl = mktemplate("version: \"0.1\"\nname: x\ntasks:\n"
					      "  - name: {{ nosuchfunc .x }}\n"),
			   .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_str_eq(str_at(wf, "status.templateRendering"), "failed");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.status"), "False");
	const char *m = str_at(wf, "status.conditions.0.message");
	ck_assert_msg(strstr(m, "render failed at line 4, column 14"), "%s", m);
	ck_assert_msg(strstr(m, "nosuchfunc"), "%s", m);
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_str_eq(fx.events[0].type, "Warning");
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP); /* nothing was done: nothing undone */
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert(!fx.status_changed);
	json_decref(wf);

	/* YAML that is not a template */
	json_decref(w.tmpl);
	w.tmpl = mktemplate("version: \"0.1\"\nname: x\ntasks: [\n");
	wf = mknew(NULL);
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	m = str_at(wf, "status.conditions.0.message");
	ck_assert_msg(strstr(m, "yaml failed at line"), "%s", m);
	json_decref(wf);
	json_decref(w.tmpl);
	w.tmpl = mktemplate("version: \"0.1\"\nname: x\nglobal_timeout: 10\ntasks: []\n");
	wf = mknew(NULL);
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	m = str_at(wf, "status.conditions.0.message");
	ck_assert_msg(strstr(m, "schema failed at line"), "%s", m);
	json_decref(wf);

	/* no Template yet, then no Hardware, then both */
	json_t *tmpl = w.tmpl;
	w.tmpl = NULL;
	wf = mknew(NULL);
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "(absent)");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.message"), "template ubuntu not found");
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_int_eq(step(wf, &w, T0 + S(60), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_uint_eq(fx.n_events, 0);
	json_decref(tmpl);
	w.tmpl = mktemplate(NULL);
	json_t *hw = w.hw;
	w.hw = NULL;
	ck_assert_int_eq(step(wf, &w, T0 + S(61), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.conditions.0.message"), "hardware machine1 not found");
	w.hw = hw;
	ck_assert_int_eq(step(wf, &w, T0 + S(62), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.status"), "True");
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* toggleAllowNetboot: allowPXE on at the start (PREPARING -> PENDING in
 * the same step), off at POST, once each. */
START_TEST(test_toggle_allow_netboot)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_ON);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert(json_is_true(at(wf, "status.bootOptions.allowNetboot.toggledTrue")));
	ck_assert_str_eq(str_at(wf, "status.conditions.1.type"), "AllowNetbootTrue");
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert(!fx.status_changed);
	run_all(wf, T0 + S(2));
	ck_assert_int_eq(step(wf, &w, T0 + S(3), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert(json_is_true(at(wf, "status.bootOptions.allowNetboot.toggledFalse")));
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert(!fx.status_changed);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* bootMode netboot: the Job (off, one-time PXE with efiBoot, on), asked
 * again while it is not there, followed, Completed -> PENDING; Failed ->
 * FAILED with the Job's message. */
START_TEST(test_netboot)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(true) };
	json_t *wf = mknew("{\"bootMode\":\"netboot\"}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PREPARING");
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "netboot-wf1");
	char *spec = json_dumps(fx.jobs[0].spec, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(spec,
			 "{\"machineRef\":{\"name\":\"bmc1\",\"namespace\":\"tink\"},"
			 "\"tasks\":[{\"powerAction\":\"off\"},"
			 "{\"oneTimeBootDeviceAction\":{\"device\":[\"pxe\"],\"efiBoot\":true}},"
			 "{\"powerAction\":\"on\"}]}");
	free(spec);
	ck_assert(json_is_true(at(wf, "status.bootOptions.jobs.netboot-wf1.existingJobDeleted")));
	ck_assert(json_is_false(at(wf, "status.bootOptions.jobs.netboot-wf1.complete")));
	wf_effects_clear(&fx);
	/* the agent waits */
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_FAILED_PRECONDITION);
	/* the Job is not there: asked again */
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 1);
	wf_effects_clear(&fx);
	/* running */
	json_t *job = mkjob("netboot-wf1", NULL, NULL);
	w.jobs[0] = job;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(2), &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PREPARING");
	ck_assert_str_eq(str_at(wf, "status.bootOptions.jobs.netboot-wf1.uid"), "uid-1");
	ck_assert_int_eq(step(wf, &w, T0 + S(3), &fx), 0);
	ck_assert(!fx.status_changed);
	json_decref(job);
	/* completed */
	job = mkjob("netboot-wf1", "Completed", "");
	w.jobs[0] = job;
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert(fx.notify_agent); /* the agent waiting in GetAction */
	ck_assert(json_is_true(at(wf, "status.bootOptions.jobs.netboot-wf1.complete")));
	ck_assert_int_eq(get(wf, MAC, T0 + S(5), &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	json_decref(job);
	json_decref(wf);

	/* a Job that fails */
	wf = mknew("{\"bootMode\":\"netboot\"}");
	w.n_jobs = 0;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	wf_effects_clear(&fx);
	job = mkjob("netboot-wf1", "Failed", "bmc unreachable");
	w.jobs[0] = job;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_str_eq(cond_msg(wf, "BootJobFailed"), "job netboot-wf1 failed: bmc unreachable");
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(job);
	json_decref(wf);

	/* no BMC, no Hardware */
	json_object_del(at(w.hw, "spec"), "bmcRef");
	w.n_jobs = 0;
	wf = mknew("{\"bootMode\":\"netboot\"}");
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	const char *m = cond_msg(wf, "BootJobFailed");
	ck_assert_msg(strstr(m, "hardware machine1 has no bmcRef"), "%s", m);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* bootMode isoboot: mount (off, eject, insert, one-time CD-ROM, on), and
 * at POST the eject Job before SUCCESS; no isoURL: FAILED. */
START_TEST(test_isoboot)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"bootMode\":\"isoboot\",\"isoURL\":\"http://10.1.1.1/hook.iso\"}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "iso-mount-wf1");
	char *spec = json_dumps(json_object_get(fx.jobs[0].spec, "tasks"),
				JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(spec,
			 "[{\"powerAction\":\"off\"},"
			 "{\"virtualMediaAction\":{\"kind\":\"CD\",\"mediaURL\":\"\"}},"
			 "{\"virtualMediaAction\":{\"kind\":\"CD\",\"mediaURL\":"
			 "\"http://10.1.1.1/hook.iso\"}},"
			 "{\"oneTimeBootDeviceAction\":{\"device\":[\"cdrom\"],\"efiBoot\":false}},"
			 "{\"powerAction\":\"on\"}]");
	free(spec);
	wf_effects_clear(&fx);
	json_t *mount = mkjob("iso-mount-wf1", "Completed", "");
	w.jobs[0] = mount;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	run_all(wf, T0 + S(2));
	ck_assert_int_eq(step(wf, &w, T0 + S(3), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "iso-eject-wf1");
	spec = json_dumps(json_object_get(fx.jobs[0].spec, "tasks"), JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(spec, "[{\"virtualMediaAction\":{\"kind\":\"CD\",\"mediaURL\":\"\"}}]");
	free(spec);
	wf_effects_clear(&fx);
	json_t *eject = mkjob("iso-eject-wf1", "Completed", "");
	w.jobs[1] = eject;
	w.n_jobs = 2;
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(wf);

	wf = mknew("{\"bootMode\":\"isoboot\"}");
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_msg(strstr(cond_msg(wf, "BootJobSetupFailed"), "isoURL is required"), "%s",
		      cond_msg(wf, "BootJobSetupFailed"));
	json_decref(wf);
	json_decref(mount);
	json_decref(eject);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* A one-action template: global_timeout g, the action's timeout t and
 * retries r. */
static json_t *mktmpl1(int g, int t, int r)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "version: \"0.1\"\nname: one\nglobal_timeout: %d\ntasks:\n"
		 "  - name: t\n    worker: \"{{.device_1}}\"\n    actions:\n"
		 "      - name: a\n        image: img\n        timeout: %d\n        retries: %d\n",
		 g, t, r);
	return mktemplate(text);
}

/* The global timeout: the running action and the workflow TIMEOUT, the
 * agent's heartbeat refused, allowPXE off. The handed-out timeout never
 * outlasts the workflow. */
START_TEST(test_global_timeout)
{
	struct world w = { .tmpl = mktmpl1(100, 600, 0), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_OK);
	ck_assert_int_eq(h.timeout_s, 100);
	char tid[64], aid[64];
	snprintf(tid, sizeof(tid), "%s", h.task_id);
	snprintf(aid, sizeof(aid), "%s", h.action_id);
	wf_handout_clear(&h);
	struct wf_clock c = clk_at(T0);
	char msg[256];
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = MAC,
			       .task_id = tid,
			       .action_id = aid,
			       .state = 2,
			       .start_ms = T0 };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.globalExecutionStop"), "2026-11-25T22:01:40Z");
	ck_assert_int_eq(step(wf, &w, T0 + S(50), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.wake_ms, T0 + S(100));
	/* past the global timeout, before the step has run: no more work */
	struct wf_clock late = clk_at(T0 + S(100));
	ck_assert_int_eq(wf_engine_report(wf, &r, &late, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	ck_assert_int_eq(get(wf, MAC, T0 + S(100), &h, &ch), GRPC_FAILED_PRECONDITION);
	ck_assert_int_eq(step(wf, &w, T0 + S(100), &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert(fx.notify_agent);
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "TIMEOUT");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionDuration"), "1m40s");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.message"),
			 "the workflow's global timeout (1m40s) passed");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "TIMEOUT");
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF); /* cleanup, as POST */
	ck_assert_str_eq(fx.events[0].reason, "Timeout");
	ck_assert_int_eq(fx.wake_ms, 0);
	c = clk_at(T0 + S(101));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	r.state = 5;
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	ck_assert_int_eq(step(wf, &w, T0 + S(102), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* An action's own deadline (timeout + grace, by the server's clock):
 * TIMEOUT, retried after the backoff (wake_ms at each time), then the
 * workflow TIMEOUT once the retries are spent, and cleaned up. */
START_TEST(test_action_deadline)
{
	struct world w = { .tmpl = mktmpl1(0, 10, 1), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.0.retries")), 1);
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_OK);
	ck_assert_int_eq(h.timeout_s, 10);
	char tid[64], aid[64];
	snprintf(tid, sizeof(tid), "%s", h.task_id);
	snprintf(aid, sizeof(aid), "%s", h.action_id);
	wf_handout_clear(&h);
	struct wf_clock c = clk_at(T0);
	char msg[256];
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = MAC,
			       .task_id = tid,
			       .action_id = aid,
			       .state = 2,
			       .start_ms = T0 };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_ptr_null(at(wf, "status.globalExecutionStop")); /* global_timeout 0: none */
	ck_assert_int_eq(step(wf, &w, T0 + S(39), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert(!fx.notify_agent);
	ck_assert_int_eq(fx.wake_ms, T0 + S(40));
	/* the heartbeat: on before the deadline, stop after it */
	c = clk_at(T0 + S(39));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	c = clk_at(T0 + S(40));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	ck_assert_int_eq(step(wf, &w, T0 + S(40), &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert(fx.notify_agent);
	ck_assert_str_eq(fx.events[0].reason, "ActionTimeout");
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.retryAfter"), "2026-11-25T22:00:45Z");
	ck_assert_str_eq(str_at(wf, "status.conditions.2.type"), "ActionRetry");
	ck_assert_int_eq(fx.wake_ms, T0 + S(45));
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	/* the agent, still at it, is told to stop */
	c = clk_at(T0 + S(41));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	/* the backoff is over: the agent's long poll is woken */
	ck_assert_int_eq(step(wf, &w, T0 + S(45), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert(fx.notify_agent);
	ck_assert_int_eq(get(wf, MAC, T0 + S(45), &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	c = clk_at(T0 + S(46));
	r.start_ms = T0 + S(46);
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.0.attempts")), 2);
	ck_assert_int_eq(step(wf, &w, T0 + S(86), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "TIMEOUT");
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF);
	ck_assert_int_eq(fx.wake_ms, 0);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
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
	ck_assert_str_eq(str_at(wf, "status.currentState.actionID"), "A2");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "SUCCESS");
	struct wf_handout h;
	ck_assert_int_eq(get(wf, AG1, T0 + S(42), &h, &ch), GRPC_OK);
	ck_assert_str_eq(h.action_id, "A3");
	wf_handout_clear(&h);
	json_decref(wf);
}
END_TEST

/* FAILED gets POST's cleanup once: allowPXE off and the ISO ejected. */
START_TEST(test_cleanup_on_failure)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true,\"bootMode\":\"iso\","
			   "\"isoURL\":\"http://10.1.1.1/hook.iso\"}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_ON);
	wf_effects_clear(&fx);
	json_t *mount = mkjob("iso-mount-wf1", "Completed", "");
	w.jobs[0] = mount;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0 + S(2), &h, &ch), GRPC_OK);
	char tid[64], aid[64];
	snprintf(tid, sizeof(tid), "%s", h.task_id);
	snprintf(aid, sizeof(aid), "%s", h.action_id);
	wf_handout_clear(&h);
	struct wf_clock c = clk_at(T0 + S(2));
	char msg[256];
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = MAC,
			       .task_id = tid,
			       .action_id = aid,
			       .state = 2,
			       .start_ms = T0 + S(2),
			       .message = "" };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	r.state = 3;
	r.stop_ms = T0 + S(3);
	r.message = "image2disk: no space left on device";
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF);
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "iso-eject-wf1");
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	wf_effects_clear(&fx);
	json_t *eject = mkjob("iso-eject-wf1", "Completed", "");
	w.jobs[1] = eject;
	w.n_jobs = 2;
	ck_assert_int_eq(step(wf, &w, T0 + S(5), &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert(json_is_true(at(wf, "status.bootOptions.jobs.iso-eject-wf1.complete")));
	ck_assert_int_eq(step(wf, &w, T0 + S(6), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	json_decref(wf);
	json_decref(mount);
	json_decref(eject);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* tinkerbell/tink <= v0.12's status: STATE_PENDING rendered again into
 * the current shape; STATE_SUCCESS left alone. */
START_TEST(test_legacy)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew(NULL);
	json_object_set_new(
		wf, "status",
		jload("{\"state\":\"STATE_PENDING\",\"currentAction\":\"stream ubuntu image\","
		      "\"templateRending\":\"successful\",\"globalTimeout\":1800,"
		      "\"conditions\":[{\"type\":\"NetbootJobComplete\",\"status\":\"True\"}],"
		      "\"tasks\":[{\"name\":\"os installation\",\"worker\":\"" MAC "\","
		      "\"actions\":[{\"name\":\"stream ubuntu image\",\"image\":\"x\","
		      "\"status\":\"STATE_PENDING\",\"seconds\":0}]}]}"));
	valid(wf);
	/* the agent is told to wait, and no workflow is active yet */
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_FAILED_PRECONDITION);
	ck_assert_int_eq(wf_engine_pick(&wf, 1, MAC), -ENOENT);
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_ptr_null(at(wf, "status.currentAction"));
	ck_assert_ptr_null(at(wf, "status.templateRending"));
	ck_assert_ptr_null(at(wf, "status.tasks.0.worker"));
	ck_assert_str_eq(str_at(wf, "status.tasks.0.agentID"), MAC);
	ck_assert(is_ulid(str_at(wf, "status.tasks.0.actions.0.id")));
	ck_assert_uint_eq(json_array_size(at(wf, "status.conditions")), 1);
	ck_assert_int_eq(wf_engine_pick(&wf, 1, MAC), 0);
	json_decref(wf);

	wf = mknew(NULL);
	json_object_set_new(wf, "status",
			    jload("{\"state\":\"STATE_SUCCESS\",\"currentAction\":\"x\"}"));
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "STATE_SUCCESS");
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* spec.disabled: only status.agentID, nothing handed out; enabled, it
 * renders. */
START_TEST(test_disabled)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	json_object_set_new(at(wf, "spec"), "disabled", json_true());
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	char *st = json_dumps(at(wf, "status"), JSON_COMPACT);
	ck_assert_str_eq(st, "{\"agentID\":\"" MAC "\"}");
	free(st);
	ck_assert_int_eq(wf_engine_pick(&wf, 1, MAC), -ENOENT);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_NOT_FOUND);
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert(!fx.status_changed);
	json_object_del(at(wf, "spec"), "disabled");
	ck_assert_int_eq(step(wf, &w, T0 + S(2), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_int_eq(fx.pxe, WF_PXE_ON);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
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
	UNIT_TEST(tc, test_durations);
	UNIT_TEST(tc, test_message_cut);
	suite_add_tcase(s, tc);
	TCase *ctl = tcase_create("controller");
	UNIT_TEST(ctl, test_render);
	UNIT_TEST(ctl, test_render_failure);
	UNIT_TEST(ctl, test_toggle_allow_netboot);
	UNIT_TEST(ctl, test_netboot);
	UNIT_TEST(ctl, test_isoboot);
	UNIT_TEST(ctl, test_global_timeout);
	UNIT_TEST(ctl, test_action_deadline);
	UNIT_TEST(ctl, test_late_success);
	UNIT_TEST(ctl, test_cleanup_on_failure);
	UNIT_TEST(ctl, test_legacy);
	UNIT_TEST(ctl, test_disabled);
	UNIT_TEST(ctl, test_workflow_retry);
	suite_add_tcase(s, ctl);
	return s;
}

int main(void)
{
	return unit_run(engine_suite());
}
