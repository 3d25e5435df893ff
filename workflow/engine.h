/* engine — the workflow engine's transition functions (workflow/engine.c).
 *
 * Pure: each function takes a Workflow (the whole object as the store
 * keeps it, a jansson tree in the shape of Tinkerbell's v1alpha1 CRD),
 * the time and the other objects it needs, changes the Workflow's .status
 * in place, and says what else must happen (struct wf_effects); no I/O,
 * no clock, no logging, no global state. Two callers: the controller
 * thread (controller.c: rendering, boot options, timeouts, retries,
 * cleanup) and the worker API (the gRPC thread: GetAction,
 * ReportActionStatus). Each writes the changed status with the object's
 * resourceVersion as precondition and, on a conflict, reads the object
 * again and calls the function again: a race costs a retry, never an
 * update.
 *
 * The status is the CRD's (docs/workflows.md lists every field). Where
 * the engine needs to remember more than the CRD holds, it keeps it in
 * fields of its own, all in status.tasks[].actions[]:
 *   "retries"    the template's per-action retries (an int, absent = 0);
 *   "attempts"   how many times the action was handed out and started
 *                (an int, absent = 0);
 *   "retryAfter" RFC 3339: a failed action with retries left is not
 *                handed out again before then (backoff);
 *   "deadline"   RFC 3339, the server's clock: when a RUNNING action
 *                with no result is declared TIMEOUT (start as received
 *                + timeout + WF_ACTION_GRACE_S).
 * Times in the status are RFC 3339 UTC with seconds ("2026-11-25T22:00:00Z"),
 * as Kubernetes' metav1.Time marshals. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bootmark.h"
#include "workflow/workflow.h"

/* Grace beyond an action's own timeout before the server declares it
 * TIMEOUT: the agent's own timer fires first and reports. */
#define WF_ACTION_GRACE_S 30
/* The timeout handed out for an action whose template says 0 (tink-agent
 * takes 0 as an immediate deadline): the remaining global timeout, or
 * this when there is none. */
#define WF_DEFAULT_ACTION_TIMEOUT_S 3600
/* Retry backoff: WF_RETRY_BASE_S * 2^(attempt-1), at most WF_RETRY_MAX_S. */
#define WF_RETRY_BASE_S 5
#define WF_RETRY_MAX_S 300
/* Bytes of an action message kept in the status (longer: cut, "..."). */
#define WF_MESSAGE_MAX 4096
/* Longest workflow_id ("<namespace>/<name>"), task and action ID. */
#define WF_ID_MAX 320

enum wf_state {
	WF_STATE_NONE,      /* "" : not rendered yet */
	WF_STATE_PREPARING,
	WF_STATE_PENDING,
	WF_STATE_RUNNING,
	WF_STATE_POST,
	WF_STATE_SUCCESS,
	WF_STATE_FAILED,
	WF_STATE_TIMEOUT,
	WF_STATE_MAX
};

/* "PREPARING", ... ("" for NONE). NULL out of range. */
const char *wf_state_name(enum wf_state st);
/* Parses a status.state: the names above, and tinkerbell/tink <= v0.12's
 * STATE_PENDING, STATE_RUNNING, STATE_FAILED, STATE_TIMEOUT,
 * STATE_SUCCESS (*legacy set). 0 or -EINVAL. legacy may be NULL. */
int wf_state_parse(const char *s, enum wf_state *ret, bool *legacy);
/* SUCCESS, FAILED, TIMEOUT. */
bool wf_state_terminal(enum wf_state st);

/* The clock and the randomness a transition may use, given by the caller
 * (tests give fixed ones). random fills buf with n random bytes (task and
 * action IDs are ULIDs: 48 bits of now_ms, 80 random). */
struct wf_clock {
	int64_t now_ms; /* Unix time, milliseconds */
	void (*random)(void *buf, size_t n, void *userdata);
	void *userdata;
	/* The daemon's default_action_timeout_s, action_grace_s,
	 * retry_base_s and retry_max_s; NULL, or a field 0: the WF_* values
	 * above. Borrowed. */
	const struct wf_settings *settings;
};

/* ---- what a transition asks of its caller ---- */

/* Hardware allowPXE: set every interface's netboot.allowPXE. */
enum wf_pxe { WF_PXE_KEEP, WF_PXE_ON, WF_PXE_OFF };

/* A bmc.tinkerbell.org Job to create in the Workflow's namespace (name
 * "<kind>-<workflow>", e.g. "netboot-wf1", as Tinkerbell names them; the
 * caller deletes an existing one of that name first). spec is a new
 * reference: {"machineRef": {...}, "tasks": [...]}. */
struct wf_job {
	char name[WF_ID_MAX];
	json_t *spec;
};

#define WF_MAX_EFFECT_JOBS 2
#define WF_MAX_EFFECT_EVENTS 4

struct wf_event {
	const char *type;   /* "Normal" or "Warning" (static) */
	const char *reason; /* "Rendered", "RenderFailed", "Timeout", ... (static) */
	char message[512];
	bool hardware; /* also an event of the Hardware spec.hardwareRef */
};

/* The closed loop (workflow/engine-boot.c): the annotations a Workflow
 * that ended SUCCESS sets on its Hardware, and that the DHCP server and
 * the metadata routes read (common/bootmark.h). */
#define WF_BOOT_AWAIT_ANNOTATION BOOTMARK_AWAIT
#define WF_BOOT_OBSERVED_ANNOTATION BOOTMARK_OBSERVED
/* The Workflow condition and its reasons. */
#define WF_BOOT_CONDITION "Booted"

/* What to do with the Hardware's boot annotations. */
enum wf_boot_mark {
	WF_BOOT_KEEP,
	WF_BOOT_AWAIT,         /* set the mark (boot_mark), drop an observation */
	WF_BOOT_DROP_OBSERVED, /* drop the observation, keep the mark */
	WF_BOOT_DROP,          /* drop both */
};

struct wf_effects {
	bool status_changed;     /* write .status back */
	enum wf_pxe pxe;         /* on the Hardware spec.hardwareRef */
	struct wf_job jobs[WF_MAX_EFFECT_JOBS];
	size_t n_jobs;
	struct wf_event events[WF_MAX_EFFECT_EVENTS];
	size_t n_events;
	int64_t wake_ms;         /* call wf_engine_step() again at this time
				  * (a timeout, a retry's backoff); 0: only on
				  * a change */
	bool notify_agent;       /* the agent's action list changed (handed-out
				  * action reset, workflow ended): wake its
				  * long poll */
	enum wf_boot_mark boot;  /* on the Hardware spec.hardwareRef */
	char boot_mark[WF_ID_MAX + 40]; /* WF_BOOT_AWAIT: the mark's value */
};

/* Frees the jobs' specs and zeroes fx. Accepts NULL. */
void wf_effects_clear(struct wf_effects *fx);

/* ---- the controller's transition ---- */

/* What the controller found for a Workflow: the objects it refers to, as
 * the store has them (NULL when absent). jobs are the bmc Jobs named in
 * status.bootOptions.jobs, looked up by name, in any order. */
struct wf_inputs {
	const json_t *template_obj; /* spec.templateRef's Template */
	const json_t *hardware;     /* spec.hardwareRef's Hardware */
	const json_t *const *jobs;
	size_t n_jobs;
};

/* One step of the Workflow's life, from whatever state it is in, as far
 * as it can go without waiting (several states in one call: "" ->
 * rendered -> PENDING). In order:
 *  - spec.disabled: only status.agentID is set (from the rendered first
 *    task) and nothing is handed out;
 *  - "" or a legacy STATE_PENDING/STATE_RUNNING status: render the
 *    template (wf_template_load() with wf_tmpl_data(hardware,
 *    spec.hardwareMap)); on failure -> FAILED with templateRendering
 *    "failed", condition TemplateRenderedSuccess False with the stage,
 *    line and column, and a Warning event; on success the tasks with
 *    ULIDs, every action PENDING, globalTimeout, agentID, condition
 *    TemplateRenderedSuccess True, then PREPARING when bootOptions asks
 *    for anything, else PENDING. Legacy terminal states are left alone.
 *  - PREPARING: toggleAllowNetboot -> pxe ON (bootOptions.allowNetboot.
 *    toggledTrue, condition AllowNetbootTrue); bootMode netboot -> a Job
 *    power off, one-time PXE (efiBoot when an interface has dhcp.uefi),
 *    power on; isoboot/iso -> power off, eject, insert isoURL, one-time
 *    CD-ROM, power on; then wait for the Job (its status.conditions
 *    Completed/Failed): Completed -> PENDING, Failed -> FAILED (with the
 *    Job's message). A Hardware or BMC reference that is missing -> FAILED
 *    saying which.
 *  - PENDING/RUNNING: the global timeout (globalExecutionStop passed ->
 *    TIMEOUT), an action's "deadline" passed (-> that action TIMEOUT,
 *    then retry or workflow TIMEOUT), a retry's backoff over (wake_ms).
 *  - POST, and also FAILED and TIMEOUT once (beyond Tinkerbell): cleanup
 *    -> pxe OFF when it was toggled on (toggledFalse), iso eject Job when
 *    isoboot; POST then -> SUCCESS, with condition Booted Unknown
 *    (AwaitingBoot) and the mark asked for on the Hardware (fx->boot).
 *  - SUCCESS awaiting its boot: the Hardware's observation turned into
 *    the Booted condition and events (workflow/engine-boot.c).
 * Returns 0 (fx says what to do), or -ENOMEM; -EINVAL when wf is not a
 * Workflow object. */
int wf_engine_step(json_t *wf, const struct wf_inputs *in, const struct wf_clock *clk,
		   struct wf_effects *fx);

/* Whether wf (SUCCESS) still waits for its machine to boot from its
 * disk: its Booted condition is Unknown, or False after a netboot. Its
 * step then reads the Hardware. */
bool wf_engine_awaits_boot(const json_t *wf);

/* ---- the worker API's transitions ---- */

/* Which of an agent's Workflows is active: among those whose
 * status.agentID (or a not-yet-finished task's agentID) is agent_id and
 * that are not disabled, the newest (metadata.creationTimestamp, then
 * name) that is PREPARING, PENDING or RUNNING; a finished one never hides
 * it. Returns its index in wfs, or -ENOENT when there is none. */
int wf_engine_pick(json_t *const *wfs, size_t n, const char *agent_id);

/* The action handed out: borrowed from the Workflow (valid while it
 * lives and is not changed again), except environment (a new array of
 * "K=V", the task's merged with the action's, sorted, which the caller
 * frees with json_decref()). timeout_s is what to tell the agent: the
 * action's timeout (WF_DEFAULT_ACTION_TIMEOUT_S when 0), never more
 * than what remains of the global timeout. */
struct wf_handout {
	char workflow_id[WF_ID_MAX]; /* "<namespace>/<name>" */
	const char *task_id, *agent_id, *action_id, *name, *image;
	int64_t timeout_s;
	const json_t *command; /* array of strings, or NULL */
	json_t *volumes;       /* new array: task's then action's */
	json_t *environment;   /* new array, see above */
	const char *pid;       /* namespaces.pid, else the deprecated pid, or "" */
	const char *ns_network, *ns_pid; /* "" when absent */
};

void wf_handout_clear(struct wf_handout *h);

/* gRPC status codes the worker API answers with (the numbers are
 * gRPC's; common/grpc.h names them). */

/* GetAction for agent_id on the Workflow wf (the one wf_engine_pick()
 * chose). As Tinkerbell: the first task whose actions are not all
 * SUCCESS; in it the first PENDING action, or the one currentState says
 * was handed out and is PENDING/RUNNING (handed out again after a
 * restart). The task's agentID must be agent_id. Writes
 * status.currentState (changed says whether anything changed) into a
 * new status that replaces wf's: the old one is never changed in place,
 * so wf may share it (a json_copy() of a cached Workflow). Returns
 * a gRPC code: 0 and *out filled; 5 NOT_FOUND (nothing for this agent:
 * no task of its, all done); 9 FAILED_PRECONDITION (not yet: PREPARING,
 * a retry's backoff, the previous action not reported). msg gets why. */
int wf_engine_get_action(json_t *wf, const char *agent_id, const struct wf_clock *clk,
			 struct wf_handout *out, bool *changed, char *msg, size_t msglen);

/* A ReportActionStatus, decoded. Times in ms (0: absent). state is the
 * proto's enum: 0 UNSPECIFIED, 1 PENDING, 2 RUNNING, 3 FAILED, 4 TIMEOUT,
 * 5 SUCCESS. */
struct wf_report {
	const char *workflow_id, *agent_id, *task_id, *action_id, *action_name;
	int state;
	int64_t start_ms, stop_ms;
	const char *duration; /* as the agent wrote it, may be "" */
	const char *message;
};

/* Applies a report to wf (the Workflow workflow_id names). The action is
 * found by task_id and action_id; its task's agentID must be agent_id.
 * RUNNING: the action RUNNING, executionStart, "attempts" + 1, "deadline";
 * the workflow RUNNING and, on its first action, globalExecutionStop.
 * A RUNNING report for an action already RUNNING is a heartbeat: nothing
 * changes, and the answer says whether the agent should go on.
 * SUCCESS: the action done; the last action of the last task -> POST;
 * the last of a task -> status.agentID the next task's.
 * FAILED/TIMEOUT: retried when "attempts" <= "retries" (the action back
 * to PENDING with "retryAfter", an ActionRetry condition), else the
 * workflow FAILED/TIMEOUT. A report for an action the server already
 * ended (a timeout, a retry, the workflow over) changes nothing: a
 * result is answered 0 (tink-agent leaves its loop on a
 * FAILED_PRECONDITION to its final report), a RUNNING one 9.
 * Returns a gRPC code: 0 (accepted; changed says whether to write);
 * 3 INVALID_ARGUMENT (empty IDs, state UNSPECIFIED/PENDING, times
 * backwards); 5 NOT_FOUND (no such task or action); 7 PERMISSION_DENIED
 * (another agent's task); 9 FAILED_PRECONDITION (a RUNNING report for an
 * action or workflow the server ended: the agent must stop it; or for an
 * action not to be started now). msg gets why. */
int wf_engine_report(json_t *wf, const struct wf_report *r, const struct wf_clock *clk,
		     bool *changed, char *msg, size_t msglen);
