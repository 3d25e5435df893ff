/* engine — the worker API's transitions: which Workflow an agent works on
 * (wf_engine_pick), the action handed out (wf_engine_get_action) and a
 * report applied (wf_engine_report).
 *
 * DESIGN: pure functions of a Workflow's JSON, as engine.h says. A report
 * is applied to a copy of the status, and the copy replaces the status
 * only when it differs: the caller learns whether to write from a
 * comparison, not from each branch remembering to say so, and a report
 * that changes nothing (a repeated one, a heartbeat) cannot write.
 *
 * What is Tinkerbell's (tink/server's GetAction and ReportActionStatus):
 * the first task not all SUCCESS and its first action not SUCCESS; the
 * in-progress action handed out again after a restart (currentState);
 * status.currentState written on each GetAction; SUCCESS of the last
 * action -> POST. What is ironbell's: the active workflow is the newest
 * of the agent's PREPARING/PENDING/RUNNING ones, so a finished one never
 * shadows the next; a report from another agent is PERMISSION_DENIED
 * rather than "not found"; a repeated report changes nothing and is
 * answered OK (tink-agent retries a report until it is accepted); a
 * RUNNING report on a RUNNING action is a heartbeat, refused with
 * FAILED_PRECONDITION once the server has ended the action or the
 * workflow, which tells ironbell-agent to stop it; per-action retries
 * ("attempts" against "retries", the next attempt not before
 * "retryAfter"); the server's own "deadline" for each started action. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/grpc.h"
#include "workflow/engine-internal.h"

static int say(char *msg, size_t msglen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Writes why into msg and returns code. */
static int say(char *msg, size_t msglen, int code, const char *fmt, ...)
{
	if (msg && msglen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static bool active(enum wf_state st)
{
	return st == WF_STATE_PREPARING || st == WF_STATE_PENDING || st == WF_STATE_RUNNING;
}

/* Whether status assigns work to agent: its agentID, or a task of the
 * agent that has an action not SUCCESS. */
static bool assigned(const json_t *status, const char *agent)
{
	if (strcmp(wfe_str(status, "agentID"), agent) == 0)
		return true;
	size_t ti, ai;
	const json_t *t, *a;
	json_array_foreach (json_object_get(status, "tasks"), ti, t) {
		if (strcmp(wfe_str(t, "agentID"), agent) != 0)
			continue;
		json_array_foreach (json_object_get(t, "actions"), ai, a)
			if (strcmp(wfe_str(a, "state"), "SUCCESS") != 0)
				return true;
	}
	return false;
}

int wf_engine_pick(json_t *const *wfs, size_t n, const char *agent_id)
{
	int best = -ENOENT;
	int64_t best_ts = 0;
	const char *best_name = "";
	if (!agent_id || !*agent_id)
		return -ENOENT;
	for (size_t i = 0; i < n && i < INT32_MAX; i++) {
		const json_t *wf = wfs[i];
		const json_t *status = wfe_obj(wf, "status");
		bool legacy;
		if (!status || wfe_bool(wfe_obj(wf, "spec"), "disabled"))
			continue;
		enum wf_state st = wfe_state(status, &legacy);
		if (legacy || !active(st) || !assigned(status, agent_id))
			continue;
		const json_t *md = wfe_obj(wf, "metadata");
		int64_t ts = wfe_time_get(md, "creationTimestamp");
		const char *name = wfe_str(md, "name");
		if (best < 0 || ts > best_ts || (ts == best_ts && strcmp(name, best_name) > 0)) {
			best = (int)i;
			best_ts = ts;
			best_name = name;
		}
	}
	return best;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a),
		      json_string_value(*(json_t *const *)b));
}

/* The task's environment merged with the action's (the action's wins), as
 * "K=V" sorted bytewise, as tink-server sends it. NULL when memory runs
 * out. */
static json_t *merged_env(const json_t *task, const json_t *action)
{
	json_t *map = json_object(), *out = json_array();
	json_t *items[2] = { json_object_get(task, "environment"),
			     json_object_get(action, "environment") };
	const char *k;
	json_t *v;
	if (!map || !out)
		goto fail;
	for (int i = 0; i < 2; i++)
		json_object_foreach (items[i], k, v)
			if (json_is_string(v) && json_object_set(map, k, v) < 0)
				goto fail;
	size_t n = json_object_size(map);
	json_t **strs = calloc(n ? n : 1, sizeof(*strs));
	if (!strs)
		goto fail;
	size_t j = 0;
	json_object_foreach (map, k, v) {
		const char *val = json_string_value(v);
		size_t len = strlen(k) + 1 + strlen(val);
		char *s = malloc(len + 1);
		if (!s)
			break;
		snprintf(s, len + 1, "%s=%s", k, val);
		strs[j] = json_stringn(s, len);
		free(s);
		if (!strs[j])
			break;
		j++;
	}
	bool ok = j == n;
	if (ok)
		qsort(strs, n, sizeof(*strs), cmp_str);
	for (size_t i = 0; i < j; i++)
		if (!ok || json_array_append_new(out, strs[i]) < 0)
			ok = false, json_decref(strs[i]);
	free(strs);
	if (!ok)
		goto fail;
	json_decref(map);
	return out;
fail:
	json_decref(map);
	json_decref(out);
	return NULL;
}

/* The task's volumes then the action's. */
static json_t *merged_volumes(const json_t *task, const json_t *action)
{
	json_t *out = json_array();
	const json_t *lists[2] = { json_object_get(task, "volumes"),
				   json_object_get(action, "volumes") };
	size_t i;
	json_t *v;
	if (!out)
		return NULL;
	for (int l = 0; l < 2; l++)
		json_array_foreach (lists[l], i, v)
			if (json_is_string(v) && json_array_append(out, v) < 0) {
				json_decref(out);
				return NULL;
			}
	return out;
}

static int fill_handout(const json_t *wf, const json_t *status, const json_t *task,
			const json_t *action, const struct wf_clock *clk, struct wf_handout *out)
{
	const json_t *ns = wfe_obj(action, "namespaces");
	if (wfe_workflow_id(wf, out->workflow_id) < 0)
		return -EINVAL;
	out->task_id = wfe_str(task, "id");
	out->agent_id = wfe_str(task, "agentID");
	out->action_id = wfe_str(action, "id");
	out->name = wfe_str(action, "name");
	out->image = wfe_str(action, "image");
	out->timeout_s = wfe_handout_timeout(status, action, clk);
	out->command = json_is_array(json_object_get(action, "command")) ?
			       json_object_get(action, "command") :
			       NULL;
	out->ns_network = wfe_str(ns, "network");
	out->ns_pid = wfe_str(ns, "pid");
	out->pid = *out->ns_pid ? out->ns_pid : wfe_str(action, "pid");
	out->volumes = merged_volumes(task, action);
	out->environment = merged_env(task, action);
	if (!out->volumes || !out->environment)
		return -ENOMEM;
	return 0;
}

/* Why an agent has nothing to do in a workflow that is not PENDING or
 * RUNNING (or a legacy one): a gRPC code and a message. */
static int not_serving(const json_t *status, enum wf_state st, bool legacy, char *msg,
		       size_t msglen)
{
	if (legacy)
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "the workflow has a tink v0.12 status (%s): it is rendered again first",
			   wfe_str(status, "state"));
	switch (st) {
	case WF_STATE_NONE:
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "the workflow is not rendered yet");
	case WF_STATE_PREPARING:
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "the workflow is preparing (boot options)");
	default:
		return say(msg, msglen, GRPC_NOT_FOUND, "the workflow is %s: nothing to do",
			   wf_state_name(st));
	}
}

int wf_engine_get_action(json_t *wf, const char *agent_id, const struct wf_clock *clk,
			 struct wf_handout *out, bool *changed, char *msg, size_t msglen)
{
	size_t ti, ai;
	bool legacy;
	memset(out, 0, sizeof(*out));
	*changed = false;
	if (!agent_id || !*agent_id)
		return say(msg, msglen, GRPC_INVALID_ARGUMENT, "invalid Agent ID");
	json_t *status = wfe_obj(wf, "status");
	if (!status)
		return say(msg, msglen, GRPC_NOT_FOUND, "the workflow has no status yet");
	if (wfe_bool(wfe_obj(wf, "spec"), "disabled"))
		return say(msg, msglen, GRPC_NOT_FOUND, "the workflow is disabled");
	enum wf_state st = wfe_state(status, &legacy);
	if (legacy || (st != WF_STATE_PENDING && st != WF_STATE_RUNNING))
		return not_serving(status, st, legacy, msg, msglen);
	if (wfe_current(status, &ti, &ai) < 0)
		return say(msg, msglen, GRPC_NOT_FOUND, "every action is done");
	int64_t stop = wfe_time_get(status, "globalExecutionStop");
	if (stop && clk->now_ms >= stop)
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "the workflow's global timeout passed");
	json_t *task = json_array_get(json_object_get(status, "tasks"), ti);
	json_t *action = json_array_get(json_object_get(task, "actions"), ai);
	const char *owner = wfe_str(task, "agentID");
	if (strcmp(owner, agent_id) != 0) {
		if (assigned(status, agent_id))
			return say(msg, msglen, GRPC_FAILED_PRECONDITION,
				   "waiting for task \"%s\" of agent %s", wfe_str(task, "name"),
				   owner);
		return say(msg, msglen, GRPC_NOT_FOUND, "Task not assigned to Agent");
	}
	enum wf_state ast = WF_STATE_NONE;
	wf_state_parse(wfe_str(action, "state"), &ast, NULL);
	if (ast == WF_STATE_PENDING) {
		int64_t after = wfe_time_get(action, "retryAfter");
		if (after > clk->now_ms)
			return say(msg, msglen, GRPC_FAILED_PRECONDITION,
				   "action \"%s\" is retried in %llds", wfe_str(action, "name"),
				   (long long)((after - clk->now_ms + 999) / 1000));
	} else if (ast != WF_STATE_RUNNING) {
		return say(msg, msglen, GRPC_FAILED_PRECONDITION, "action \"%s\" is %s",
			   wfe_str(action, "name"), wfe_str(action, "state"));
	}
	/* currentState (and a re-served action's deadline) change in a copy
	 * of the status, which becomes wf's status when it differs: wf's own
	 * status is never changed in place (the caller may share it), and
	 * the common case, the action currentState already names, copies
	 * nothing. */
	int same = wfe_is_current(status, task, action);
	if (same < 0)
		goto nomem;
	if (!same || ast == WF_STATE_RUNNING) {
		json_t *copy = json_deep_copy(status);
		json_t *ctask = json_array_get(json_object_get(copy, "tasks"), ti);
		json_t *caction = json_array_get(json_object_get(ctask, "actions"), ai);
		if (!caction || wfe_set_current(copy, ctask, caction) < 0) {
			json_decref(copy);
			goto nomem;
		}
		if (ast == WF_STATE_RUNNING) {
			/* Handed out again: the agent restarted and runs it from
			 * the start, with the whole timeout handed out now. */
			int64_t t = wfe_handout_timeout(copy, caction, clk);
			if (wfe_time_set(caction, "deadline",
					 clk->now_ms + (t + wfe_grace_s(clk)) * 1000, true) < 0) {
				json_decref(copy);
				goto nomem;
			}
		}
		if (json_equal(copy, status)) {
			json_decref(copy);
		} else {
			if (json_object_set_new(wf, "status", copy) < 0)
				goto nomem;
			status = copy;
			task = ctask;
			action = caction;
			*changed = true;
		}
	}
	int r = fill_handout(wf, status, task, action, clk, out);
	if (r == -EINVAL) {
		wf_handout_clear(out);
		*changed = false;
		return say(msg, msglen, GRPC_INVALID_ARGUMENT, "the workflow has no name");
	}
	if (r < 0)
		goto nomem;
	return say(msg, msglen, GRPC_OK, "action \"%s\" of task \"%s\"", out->name,
		   wfe_str(task, "name"));
nomem:
	wf_handout_clear(out);
	*changed = false;
	return say(msg, msglen, GRPC_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- ReportActionStatus ---- */

/* The proto's ActionStatusRequest.action_state as a state. */
static enum wf_state report_state(int s)
{
	switch (s) {
	case 2: return WF_STATE_RUNNING;
	case 3: return WF_STATE_FAILED;
	case 4: return WF_STATE_TIMEOUT;
	case 5: return WF_STATE_SUCCESS;
	default: return WF_STATE_NONE;
	}
}

/* Where a report lands: the status (a copy) and the task and action in it. */
struct target {
	json_t *status, *task, *action;
	size_t ti, ai;
	enum wf_state wst, ast;
};

static bool is_current(const struct target *t)
{
	size_t ti, ai;
	return wfe_current(t->status, &ti, &ai) == 0 && ti == t->ti && ai == t->ai;
}

/* The action starts (a RUNNING report, or a result with no RUNNING before
 * it): attempts + 1, its times, its deadline, the workflow RUNNING and its
 * global timeout started. */
static int start_action(struct target *t, const struct wf_report *r, const struct wf_clock *clk)
{
	json_t *a = t->action, *s = t->status;
	int err = wfe_set_state(a, WF_STATE_RUNNING);
	err |= wfe_time_set(a, "executionStart", r->start_ms ? r->start_ms : clk->now_ms, false);
	json_object_del(a, "executionStop");
	json_object_del(a, "executionDuration");
	json_object_del(a, "message");
	json_object_del(a, "retryAfter");
	err |= wfe_set_int(a, "attempts", wfe_int(a, "attempts", 0) + 1);
	json_int_t gt = wfe_int(s, "globalTimeout", 0);
	if (gt > 0 && !wfe_time_get(s, "globalExecutionStop"))
		err |= wfe_time_set(s, "globalExecutionStop", clk->now_ms + gt * 1000, true);
	int64_t timeout = wfe_handout_timeout(s, a, clk);
	err |= wfe_time_set(a, "deadline", clk->now_ms + (timeout + wfe_grace_s(clk)) * 1000, true);
	err |= wfe_set_state(s, WF_STATE_RUNNING);
	return err ? -ENOMEM : 0;
}

/* A reported executionDuration worth keeping: 1 to 63 printable ASCII
 * bytes ("1m2.5s"). */
static bool duration_ok(const char *d)
{
	size_t n = d ? strlen(d) : 0;
	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (d[i] < 0x21 || d[i] > 0x7e)
			return false;
	return true;
}

/* A result (SUCCESS, FAILED, TIMEOUT) recorded on a started action. */
static int finish_action(struct target *t, const struct wf_report *r, enum wf_state rst,
			 const struct wf_clock *clk, char *msg, size_t msglen)
{
	int64_t stop = r->stop_ms ? r->stop_ms : clk->now_ms;
	int64_t start = r->start_ms ? r->start_ms : wfe_time_get(t->action, "executionStart");
	int e = wfe_finish(t->status, t->ti, t->ai, rst, start, stop, r->message ? r->message : "",
			   clk, msg, msglen);
	/* The agent's own executionDuration is kept as it wrote it, as
	 * Tinkerbell keeps it (its clock measured the action; ours saw two
	 * reports); the one computed from the times stands in when it sent
	 * none, or one that is not a short printable string. */
	if (e == 0 && duration_ok(r->duration))
		e = wfe_set_str(t->action, "executionDuration", r->duration, 0) < 0 ? -ENOMEM : 0;
	return e;
}

/* A RUNNING report on the target: a start or a heartbeat. */
static int report_running(struct target *t, const struct wf_report *r, const struct wf_clock *clk,
			  char *msg, size_t msglen)
{
	const char *name = wfe_str(t->action, "name");
	bool live = t->wst == WF_STATE_PENDING || t->wst == WF_STATE_RUNNING;
	if (t->ast == WF_STATE_SUCCESS)
		return say(msg, msglen, GRPC_OK, "action \"%s\" is already SUCCESS", name);
	if (!live)
		return say(msg, msglen, GRPC_FAILED_PRECONDITION, "the workflow is %s: stop",
			   wf_state_name(t->wst));
	int64_t stop = wfe_time_get(t->status, "globalExecutionStop");
	if (stop && clk->now_ms >= stop)
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "the workflow's global timeout passed: stop");
	int64_t deadline = wfe_time_get(t->action, "deadline");
	if (t->ast == WF_STATE_RUNNING && deadline && clk->now_ms >= deadline)
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "action \"%s\" is past its deadline: stop", name);
	if (t->ast == WF_STATE_RUNNING)
		return say(msg, msglen, GRPC_OK, "action \"%s\" goes on", name);
	if (t->ast != WF_STATE_PENDING)
		return say(msg, msglen, GRPC_FAILED_PRECONDITION, "action \"%s\" was ended: %s",
			   name, wf_state_name(t->ast));
	if (!is_current(t))
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "action \"%s\" is not the workflow's next action", name);
	int64_t after = wfe_time_get(t->action, "retryAfter");
	if (after > clk->now_ms)
		return say(msg, msglen, GRPC_FAILED_PRECONDITION,
			   "action \"%s\" is waiting to be retried", name);
	if (start_action(t, r, clk) < 0 || wfe_set_current(t->status, t->task, t->action) < 0)
		return say(msg, msglen, GRPC_RESOURCE_EXHAUSTED, "out of memory");
	return say(msg, msglen, GRPC_OK, "action \"%s\" RUNNING", name);
}

/* A result report (SUCCESS, FAILED, TIMEOUT) on the target. */
static int report_result(struct target *t, const struct wf_report *r, enum wf_state rst,
			 const struct wf_clock *clk, char *msg, size_t msglen)
{
	const char *name = wfe_str(t->action, "name");
	bool live = t->wst == WF_STATE_PENDING || t->wst == WF_STATE_RUNNING;
	bool waiting = json_object_get(t->action, "retryAfter") != NULL;
	if (t->ast == rst)
		return say(msg, msglen, GRPC_OK, "action \"%s\" is already %s", name,
			   wf_state_name(rst));
	if (live && t->ast == WF_STATE_PENDING && is_current(t)) {
		if (waiting && rst != WF_STATE_SUCCESS)
			/* the failure of an attempt already retried, repeated */
			return say(msg, msglen, GRPC_OK, "action \"%s\" was already retried", name);
		if (!waiting && strcmp(wfe_str(wfe_obj(t->status, "currentState"), "actionID"),
				       wfe_str(t->action, "id")) != 0)
			return say(msg, msglen, GRPC_FAILED_PRECONDITION,
				   "action \"%s\" was not handed out", name);
		/* Handed out and its RUNNING report never came; or the server
		 * timed the attempt out and its SUCCESS came late: the work is
		 * done, taken rather than run again. */
		if (!waiting && start_action(t, r, clk) < 0)
			return say(msg, msglen, GRPC_RESOURCE_EXHAUSTED, "out of memory");
		t->ast = WF_STATE_RUNNING;
	}
	if (!live || t->ast != WF_STATE_RUNNING)
		/* Ended by the server (a deadline, the global timeout) or over:
		 * nothing changes. OK rather than FAILED_PRECONDITION, because
		 * tink-agent takes that as permanent and stops its loop, and
		 * the agent has nothing left to stop. */
		return say(msg, msglen, GRPC_OK, "ignored: action \"%s\" is %s, the workflow %s",
			   name, wf_state_name(t->ast), wf_state_name(t->wst));
	/* wfe_finish() sets currentState: after a SUCCESS with more to do, to
	 * the next action; setting it here again would undo that. */
	if (finish_action(t, r, rst, clk, msg, msglen) < 0)
		return say(msg, msglen, GRPC_RESOURCE_EXHAUSTED, "out of memory");
	return GRPC_OK;
}

/* Finds task_id and action_id in status. */
static int find_action(json_t *status, const char *task_id, const char *action_id, struct target *t)
{
	size_t ti, ai;
	json_t *task, *a;
	json_array_foreach (json_object_get(status, "tasks"), ti, task) {
		if (strcmp(wfe_str(task, "id"), task_id) != 0)
			continue;
		json_array_foreach (json_object_get(task, "actions"), ai, a) {
			if (strcmp(wfe_str(a, "id"), action_id) != 0)
				continue;
			t->status = status;
			t->task = task;
			t->action = a;
			t->ti = ti;
			t->ai = ai;
			return 0;
		}
	}
	return -ENOENT;
}

int wf_engine_report(json_t *wf, const struct wf_report *r, const struct wf_clock *clk,
		     bool *changed, char *msg, size_t msglen)
{
	char wfid[WF_ID_MAX];
	struct target t = { 0 };
	*changed = false;
	if (!r || !r->workflow_id || !*r->workflow_id)
		return say(msg, msglen, GRPC_INVALID_ARGUMENT, "invalid workflow id");
	if (!r->task_id || !*r->task_id)
		return say(msg, msglen, GRPC_INVALID_ARGUMENT, "invalid task id");
	if (!r->action_id || !*r->action_id)
		return say(msg, msglen, GRPC_INVALID_ARGUMENT, "invalid action id");
	if (!r->agent_id || !*r->agent_id)
		return say(msg, msglen, GRPC_INVALID_ARGUMENT, "invalid agent id");
	enum wf_state rst = report_state(r->state);
	if (rst == WF_STATE_NONE)
		return say(msg, msglen, GRPC_INVALID_ARGUMENT,
			   "action_state %d is not RUNNING, FAILED, TIMEOUT or SUCCESS", r->state);
	/* tink-agent reports RUNNING before it sets the action's start, so
	 * its times are Go's zero time.Time (0001-01-01, a negative Unix
	 * time): a time before 1970 is taken as absent. */
	struct wf_report rr = *r;
	if (rr.start_ms < 0)
		rr.start_ms = 0;
	if (rr.stop_ms < 0)
		rr.stop_ms = 0;
	r = &rr;
	if (r->start_ms && r->stop_ms && r->stop_ms < r->start_ms)
		return say(msg, msglen, GRPC_INVALID_ARGUMENT,
			   "execution_stop is before execution_start");
	if (wfe_workflow_id(wf, wfid) < 0 || strcmp(wfid, r->workflow_id) != 0)
		return say(msg, msglen, GRPC_NOT_FOUND, "workflow %s not found", r->workflow_id);
	json_t *status = wfe_obj(wf, "status");
	if (!status || find_action(status, r->task_id, r->action_id, &t) < 0)
		return say(msg, msglen, GRPC_NOT_FOUND, "action not found");
	if (strcmp(wfe_str(t.task, "agentID"), r->agent_id) != 0)
		return say(msg, msglen, GRPC_PERMISSION_DENIED,
			   "task \"%s\" is not assigned to agent %s", wfe_str(t.task, "name"),
			   r->agent_id);

	/* the report changes its action and the status's own members: the
	 * rest of the copy is shared with wf's status, which stays as it is */
	json_t *copy = wfe_status_cow(status, t.ti, t.ai);
	if (!copy || find_action(copy, r->task_id, r->action_id, &t) < 0) {
		json_decref(copy);
		return say(msg, msglen, GRPC_RESOURCE_EXHAUSTED, "out of memory");
	}
	bool legacy;
	t.wst = wfe_state(copy, &legacy);
	if (legacy)
		t.wst = WF_STATE_NONE;
	t.ast = WF_STATE_NONE;
	wf_state_parse(wfe_str(t.action, "state"), &t.ast, NULL);
	int code = rst == WF_STATE_RUNNING ? report_running(&t, r, clk, msg, msglen) :
					     report_result(&t, r, rst, clk, msg, msglen);
	if (code == GRPC_OK && !json_equal(copy, status)) {
		if (json_object_set(wf, "status", copy) < 0)
			code = say(msg, msglen, GRPC_RESOURCE_EXHAUSTED, "out of memory");
		else
			*changed = true;
	}
	json_decref(copy);
	return code;
}
