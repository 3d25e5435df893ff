/* engine-internal — what the engine's files (engine.c, engine-step.c,
 * engine-build.c, retry.c) share: reading and writing the Workflow status's
 * fields, times, durations, ULIDs and conditions. Private to workflow/. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workflow/engine.h"

/* The longest text of a Go duration ("-2562047h47m16.854775808s"). */
#define WFE_DURATION_MAX 64
/* The ULID text: 26 Crockford base32 characters and a NUL. */
#define WFE_ULID_LEN 26

/* obj[key] as a string, "" when absent or not a string. obj may be NULL. */
const char *wfe_str(const json_t *obj, const char *key);
/* obj[key] as an integer, def when absent or not an integer. */
json_int_t wfe_int(const json_t *obj, const char *key, json_int_t def);
/* obj[key] as a boolean, false when absent or not true. */
bool wfe_bool(const json_t *obj, const char *key);
/* obj[key] when it is an object, else NULL. */
json_t *wfe_obj(const json_t *obj, const char *key);
/* obj[key] when it is an object, else a new empty one set there; NULL
 * when memory runs out. */
json_t *wfe_obj_ensure(json_t *obj, const char *key);
/* Sets obj[key] to a string (made valid UTF-8, cut to max bytes with
 * "..." when max is not 0), an integer, a boolean. 0 or -ENOMEM. */
int wfe_set_str(json_t *obj, const char *key, const char *val, size_t max);
int wfe_set_int(json_t *obj, const char *key, json_int_t v);
int wfe_set_bool(json_t *obj, const char *key, bool v);

/* Parses an RFC 3339 time ("2026-11-25T22:00:00Z", fractions and offsets
 * accepted) into Unix milliseconds. 0, or -EINVAL. */
int wfe_time_parse(const char *s, int64_t *ret_ms);
/* obj[key] as Unix milliseconds, 0 when absent or malformed. */
int64_t wfe_time_get(const json_t *obj, const char *key);
/* Sets obj[key] to ms as RFC 3339 UTC with seconds: rounded down, or up
 * when ceil (a deadline is never earlier than asked). 0 or -ENOMEM. */
int wfe_time_set(json_t *obj, const char *key, int64_t ms, bool ceil);

/* ms as Go's time.Duration String(): "0s", "500ms", "1.5s", "1m2s",
 * "1h0m0s". out has WFE_DURATION_MAX bytes. */
void wfe_duration(int64_t ms, char out[WFE_DURATION_MAX]);

/* A new ULID at clk->now_ms with clk->random into out (27 bytes). 0, or
 * -EINVAL when clk has no random source. */
int wfe_ulid(const struct wf_clock *clk, char out[WFE_ULID_LEN + 1]);

/* Sets the condition of this type in status.conditions when its status,
 * reason or message differ from what is there (time = now), so that a step
 * that finds nothing new changes nothing. 0 or -ENOMEM. */
int wfe_condition(json_t *status, const char *type, const char *cstatus, const char *reason,
		  const char *message, int64_t now_ms);

/* The Workflow's status.state, parsed (an unknown text is NONE, legacy
 * in *legacy when not NULL). */
enum wf_state wfe_state(const json_t *status, bool *legacy);
/* Sets status.state (or obj.state of an action) to st's name. */
int wfe_set_state(json_t *obj, enum wf_state st);

/* "<namespace>/<name>" of wf ("default" when it has no namespace) into
 * out (WF_ID_MAX). 0, or -EINVAL when it has no name or is too long. */
int wfe_workflow_id(const json_t *wf, char out[WF_ID_MAX]);

/* The action the workflow is at: the first task whose actions are not all
 * SUCCESS and, in it, the first action that is not SUCCESS. 0 with the
 * indexes, or -ENOENT when every action is SUCCESS (or there is none). */
int wfe_current(const json_t *status, size_t *ret_task, size_t *ret_action);

/* The timeout handed out with an action (seconds): its own, or the
 * default (clk->settings, else WF_DEFAULT_ACTION_TIMEOUT_S) when 0, at
 * most what remains of the global timeout (globalExecutionStop when set,
 * else globalTimeout), at least 1. */
int64_t wfe_handout_timeout(const json_t *status, const json_t *action, const struct wf_clock *clk);

/* The grace beyond an action's timeout (clk->settings, else
 * WF_ACTION_GRACE_S), seconds. */
int64_t wfe_grace_s(const struct wf_clock *clk);

/* Backoff before retry n (1-based): base * 2^(n-1), at most max (from
 * clk->settings, else WF_RETRY_BASE_S and WF_RETRY_MAX_S); in
 * milliseconds. */
int64_t wfe_backoff_ms(json_int_t attempt, const struct wf_clock *clk);

/* Ends the current attempt of action ai of task ti in status with rst
 * (SUCCESS, FAILED, TIMEOUT): its times (start may be 0: stop), duration
 * and message (cut to WF_MESSAGE_MAX), no deadline; then SUCCESS -> the
 * next task's agent or, after the last action, POST; FAILED/TIMEOUT -> a
 * retry (PENDING, "retryAfter", condition ActionRetry) when "attempts" <=
 * "retries", else the workflow rst; and currentState. What happened goes
 * to msg (may be NULL). 0 or -ENOMEM. */
int wfe_finish(json_t *status, size_t ti, size_t ai, enum wf_state rst, int64_t start_ms,
	       int64_t stop_ms, const char *message, const struct wf_clock *clk, char *msg,
	       size_t msglen);
/* Sets status.currentState to action of task. 0 or -ENOMEM. */
int wfe_set_current(json_t *status, const json_t *task, const json_t *action);
/* A copy of status to change the action ai of task ti in: the top
 * level, the tasks array, that task, its actions array and conditions
 * copied, that action deep-copied, the rest shared with status. What a
 * report changes (the action, currentState, state, agentID,
 * globalExecutionStop, a condition) is then the copy's own; anything
 * else must be replaced, not changed in place. NULL without memory. */
json_t *wfe_status_cow(const json_t *status, size_t ti, size_t ai);
/* 1 when status.currentState already names action of task as
 * wfe_set_current() would write it, 0 when not, -ENOMEM. */
int wfe_is_current(const json_t *status, const json_t *task, const json_t *action);

/* ---- engine-build.c ---- */

/* Renders wf's template (in->template_obj, in->hardware) into *statusp:
 * on success *statusp is replaced by a new status (tasks, agentID,
 * globalTimeout, templateRendering, the condition, PREPARING or PENDING);
 * on a render failure it becomes FAILED with the stage, line and column
 * in the condition; when the template or the Hardware is missing it stays
 * as it is with a condition saying which. agent_only (a disabled
 * workflow): only status.agentID is set, from a successful render. Events
 * to fx. 0 or -ENOMEM. */
int wfe_render(json_t *wf, json_t **statusp, const struct wf_inputs *in, const struct wf_clock *clk,
	       struct wf_effects *fx, bool agent_only);

/* The bmc Jobs the boot options make, by Tinkerbell's name prefixes. */
enum wfe_job {
	WFE_JOB_NETBOOT,          /* "netboot": off, one-time PXE, on */
	WFE_JOB_ISO_MOUNT,        /* "iso-mount": off, eject, insert, one-time CD-ROM, on */
	WFE_JOB_ISO_EJECT,        /* "iso-eject": eject */
	WFE_JOB_CUSTOM_PREPARING, /* "customboot-preparing": the user's list */
	WFE_JOB_CUSTOM_POST,      /* "customboot-post": the user's list */
	WFE_JOB_MAX
};

/* The Job's name prefix ("netboot", ...). */
const char *wfe_job_prefix(enum wfe_job kind);
/* The Job's spec.tasks (a new array) for wf and its Hardware hw. 0,
 * -EINVAL (a customboot mediaURL that does not render: why says so) or
 * -ENOMEM. */
int wfe_job_tasks(enum wfe_job kind, const json_t *wf, const json_t *hw, json_t **ret, char *why,
		  size_t whylen);

/* Adds an event to fx (dropped when WF_MAX_EFFECT_EVENTS are there). */
void wfe_event(struct wf_effects *fx, const char *type, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- engine-boot.c ---- */

/* Entering SUCCESS: the Booted condition Unknown (AwaitingBoot) and the
 * Hardware's mark asked for in fx (boot, boot_mark), when wf has a
 * Hardware. 0 or -ENOMEM. */
int wfe_boot_await(json_t *wf, json_t *status, const struct wf_inputs *in,
		   const struct wf_clock *clk, struct wf_effects *fx);
/* SUCCESS awaiting its boot: the Hardware's observation (in->hardware's
 * annotations) into the Booted condition, events and fx->boot. 0 or
 * -ENOMEM. */
int wfe_boot_observe(json_t *wf, json_t *status, const struct wf_inputs *in,
		     const struct wf_clock *clk, struct wf_effects *fx);
