/* retry — `ironbell workflow retry`: a FAILED or TIMEOUT Workflow sent
 * back to PENDING from its first action that did not succeed.
 *
 * DESIGN: pure, like the engine (engine-util.c's helpers), for the CLI's
 * side of the admin API: it changes the object, and the caller writes it
 * with its resourceVersion as precondition. The actions that succeeded
 * keep their state and times; the failed one and every later one start
 * over (their attempts too, so each gets its template's retries again).
 * Tinkerbell has no such thing: a failed workflow there is deleted and
 * created again, which renders the template again and re-runs every
 * action (tink#955). The boot options are not done again: the agent that
 * reported the failure is still running and takes the next action; the
 * cleanup already done (allowPXE off, the ISO ejected) stays done. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "workflow/engine-internal.h"

static const char *const attempt_fields[] = {
	"executionStart", "executionStop", "executionDuration", "message",
	"attempts",       "retryAfter",    "deadline",
};

/* Action a back to PENDING with nothing of its attempts left. */
static int reset_action(json_t *a)
{
	for (size_t i = 0; i < sizeof(attempt_fields) / sizeof(attempt_fields[0]); i++)
		json_object_del(a, attempt_fields[i]);
	return wfe_set_state(a, WF_STATE_PENDING);
}

int wf_workflow_retry(json_t *wf, int64_t now_ms, char *msg, size_t msglen)
{
	char dummy[1];
	size_t ti, ai;
	bool legacy;
	if (!msg || !msglen) {
		msg = dummy;
		msglen = sizeof(dummy);
	}
	json_t *status = wfe_obj(wf, "status");
	if (!json_is_object(wf) || !*wfe_str(wfe_obj(wf, "metadata"), "name") || !status) {
		snprintf(msg, msglen, "not a Workflow with a status");
		return -EINVAL;
	}
	enum wf_state st = wfe_state(status, &legacy);
	if (legacy || (st != WF_STATE_FAILED && st != WF_STATE_TIMEOUT)) {
		snprintf(msg, msglen, "the workflow is %s: only a FAILED or TIMEOUT one is retried",
			 *wfe_str(status, "state") ? wfe_str(status, "state") : "not rendered");
		return -EINVAL;
	}
	if (json_array_size(json_object_get(status, "tasks")) == 0) {
		snprintf(msg, msglen, "the workflow has no tasks (its template did not render)");
		return -EINVAL;
	}
	if (wfe_current(status, &ti, &ai) < 0) {
		snprintf(msg, msglen, "every action of the workflow succeeded");
		return -EINVAL;
	}
	json_t *copy = json_deep_copy(status);
	if (!copy)
		goto nomem;
	json_t *tasks = json_object_get(copy, "tasks");
	json_t *task = json_array_get(tasks, ti);
	json_t *first = json_array_get(json_object_get(task, "actions"), ai);
	char cmsg[512];
	snprintf(cmsg, sizeof(cmsg), "retried from action \"%s\" of task \"%s\"",
		 wfe_str(first, "name"), wfe_str(task, "name"));
	int err = 0;
	for (size_t t = ti; t < json_array_size(tasks); t++) {
		json_t *actions = json_object_get(json_array_get(tasks, t), "actions");
		for (size_t a = t == ti ? ai : 0; a < json_array_size(actions); a++)
			err |= reset_action(json_array_get(actions, a));
	}
	json_object_del(copy, "currentState");
	json_object_del(copy, "globalExecutionStop");
	err |= wfe_set_state(copy, WF_STATE_PENDING) |
	       wfe_set_str(copy, "agentID", wfe_str(task, "agentID"), 0) |
	       wfe_condition(copy, "Retried", "True", "Retry", cmsg, now_ms);
	if (err || json_object_set_new(wf, "status", copy) < 0) {
		if (err)
			json_decref(copy);
		goto nomem;
	}
	snprintf(msg, msglen, "%s", cmsg);
	return 0;
nomem:
	snprintf(msg, msglen, "out of memory");
	return -ENOMEM;
}
