/* engine-step — the controller's transition, wf_engine_step(): a
 * Workflow taken from whatever state it is in as far as it can go without
 * waiting.
 *
 * DESIGN: the step works on a copy of the status and hands it back only
 * when it differs, as the worker API's transitions do (engine.c), so a
 * step that finds nothing to do writes nothing and a resync costs no
 * write. It moves through states in a bounded loop ("" -> PENDING in one
 * call) and stops at the first that waits: for a Job, for the agent, for
 * a time (fx->wake_ms). What must happen outside the status (allowPXE, a
 * Job, an event, the agent's long poll woken) goes to struct wf_effects;
 * the caller does it, then writes the status with its resourceVersion as
 * precondition. Everything the step asks for is idempotent and marked in
 * the status once asked (allowNetboot.toggledTrue/toggledFalse,
 * bootOptions.jobs[name]), so a lost write costs one more identical
 * request, never a different one.
 *
 * Beyond Tinkerbell's controller (tink/controller/internal/workflow): the
 * global timeout also ends the running action (so its heartbeat is
 * refused and ironbell-agent stops it), each started action has a
 * server-side deadline, an action with retries left is retried after a
 * backoff, and FAILED and TIMEOUT get the cleanup POST does (allowPXE
 * off, the ISO ejected, customboot's post actions), where Tinkerbell
 * leaves the machine netbooting into the installer. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "workflow/engine-internal.h"

/* States one step may pass through ("" -> PREPARING -> PENDING is 2). */
#define WFE_MAX_HOPS 8

enum job_result {
	JOB_WAIT,
	JOB_DONE,
	JOB_FAILED
};

struct step {
	json_t *wf;
	json_t *status; /* the copy being changed */
	const struct wf_inputs *in;
	const struct wf_clock *clk;
	struct wf_effects *fx;
	const char *name, *ns, *hw_name;
	const json_t *bo; /* spec.bootOptions */
};

/* The Workflow FAILED for a reason outside its actions (a missing object,
 * a Job that failed). */
static int fail(struct step *s, const char *ctype, const char *why)
{
	int err = wfe_condition(s->status, ctype, "True", "Error", why, s->clk->now_ms) |
		  wfe_set_state(s->status, WF_STATE_FAILED);
	wfe_event(s->fx, "Warning", "Failed", "%s", why);
	return err ? -ENOMEM : 0;
}

/* Why there is no Hardware. */
static void missing_hw(const struct step *s, char *why, size_t whylen)
{
	if (*s->hw_name)
		snprintf(why, whylen, "hardware %s not found", s->hw_name);
	else
		snprintf(why, whylen, "the boot options need a Hardware: spec.hardwareRef is empty");
}

static bool job_condition(const json_t *job, const char *type, const char **message)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(wfe_obj(job, "status"), "conditions"), i, c)
		if (strcmp(wfe_str(c, "type"), type) == 0 &&
		    strcmp(wfe_str(c, "status"), "True") == 0) {
			*message = wfe_str(c, "message");
			return true;
		}
	return false;
}

static const json_t *find_job(const struct wf_inputs *in, const char *name)
{
	for (size_t i = 0; i < in->n_jobs; i++)
		if (in->jobs[i] &&
		    strcmp(wfe_str(wfe_obj(in->jobs[i], "metadata"), "name"), name) == 0)
			return in->jobs[i];
	return NULL;
}

/* Asks the caller for Job name of kind (it deletes one of that name, then
 * creates it), and marks it asked in status.bootOptions.jobs. */
static int ask_job(struct step *s, enum wfe_job kind, const char *name, json_t *jobs,
		   enum job_result *res, char *why, size_t whylen)
{
	const json_t *hw = s->in->hardware;
	json_t *tasks = NULL;
	if (!hw) {
		missing_hw(s, why, whylen);
		*res = JOB_FAILED;
		return 0;
	}
	const char *bmc = wfe_str(wfe_obj(wfe_obj(hw, "spec"), "bmcRef"), "name");
	if (!*bmc) {
		snprintf(why, whylen, "hardware %s has no bmcRef: bootMode %s needs a BMC",
			 s->hw_name, wfe_str(s->bo, "bootMode"));
		*res = JOB_FAILED;
		return 0;
	}
	int r = wfe_job_tasks(kind, s->wf, hw, &tasks, why, whylen);
	if (r == -EINVAL) {
		*res = JOB_FAILED;
		return 0;
	}
	if (r < 0)
		return r;
	if (json_array_size(tasks) == 0) {
		/* customboot with no actions: nothing to run */
		json_decref(tasks);
		*res = JOB_DONE;
		return 0;
	}
	if (s->fx->n_jobs >= WF_MAX_EFFECT_JOBS) {
		json_decref(tasks);
		*res = JOB_WAIT;
		return 0;
	}
	json_t *spec = json_pack("{s:{s:s,s:s},s:o}", "machineRef", "name", bmc, "namespace", s->ns,
				 "tasks", tasks);
	json_t *js = json_pack("{s:b,s:b}", "existingJobDeleted", 1, "complete", 0);
	if (!spec || !js || json_object_set_new(jobs, name, js) < 0) {
		json_decref(spec);
		return -ENOMEM;
	}
	struct wf_job *j = &s->fx->jobs[s->fx->n_jobs++];
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->spec = spec;
	char cmsg[WF_ID_MAX + 32];
	snprintf(cmsg, sizeof(cmsg), "job %s created", name);
	wfe_event(s->fx, "Normal", "JobCreated", "%s", cmsg);
	*res = JOB_WAIT;
	return wfe_condition(s->status, "BootJobSetupComplete", "True", "Created", cmsg,
			     s->clk->now_ms);
}

/* Runs the Job of kind: asks for it once, then follows its conditions.
 * JOB_FAILED with why. */
static int run_job(struct step *s, enum wfe_job kind, enum job_result *res, char *why,
		   size_t whylen)
{
	char name[WF_ID_MAX], cmsg[WF_ID_MAX + 600];
	const char *jmsg = "";
	int n = snprintf(name, sizeof(name), "%s-%s", wfe_job_prefix(kind), s->name);
	if (n < 0 || (size_t)n >= sizeof(name)) {
		snprintf(why, whylen, "the job name %s-%s is too long", wfe_job_prefix(kind),
			 s->name);
		*res = JOB_FAILED;
		return 0;
	}
	json_t *jobs = wfe_obj_ensure(wfe_obj_ensure(s->status, "bootOptions"), "jobs");
	if (!jobs)
		return -ENOMEM;
	json_t *js = wfe_obj(jobs, name);
	if (js && wfe_bool(js, "complete")) {
		*res = JOB_DONE;
		return 0;
	}
	const json_t *job = find_job(s->in, name);
	if (!js || !job)
		return ask_job(s, kind, name, jobs, res, why, whylen);
	const char *uid = wfe_str(wfe_obj(job, "metadata"), "uid");
	if (*uid && strcmp(uid, wfe_str(js, "uid")) != 0 && wfe_set_str(js, "uid", uid, 0) < 0)
		return -ENOMEM;
	if (job_condition(job, "Failed", &jmsg)) {
		snprintf(why, whylen, "job %s failed%s%s", name, *jmsg ? ": " : "", jmsg);
		*res = JOB_FAILED;
		return wfe_condition(s->status, "BootJobFailed", "True", "Error", why,
				     s->clk->now_ms);
	}
	if (job_condition(job, "Completed", &jmsg)) {
		snprintf(cmsg, sizeof(cmsg), "job %s completed", name);
		*res = JOB_DONE;
		return wfe_set_bool(js, "complete", true) |
		       wfe_condition(s->status, "BootJobComplete", "True", "Complete", cmsg,
				     s->clk->now_ms);
	}
	*res = JOB_WAIT;
	return 0;
}

static bool iso_mode(const char *mode)
{
	return strcmp(mode, "isoboot") == 0 || strcmp(mode, "iso") == 0;
}

/* PREPARING: allowPXE on, then the boot Job; PENDING once it completed. */
static int prepare(struct step *s)
{
	char why[1024] = "";
	enum job_result res = JOB_DONE;
	int r = 0;
	if (wfe_bool(s->bo, "toggleAllowNetboot")) {
		json_t *an =
			wfe_obj_ensure(wfe_obj_ensure(s->status, "bootOptions"), "allowNetboot");
		if (!an)
			return -ENOMEM;
		if (!wfe_bool(an, "toggledTrue")) {
			if (!s->in->hardware) {
				missing_hw(s, why, sizeof(why));
				return fail(s, "BootJobSetupFailed", why);
			}
			s->fx->pxe = WF_PXE_ON;
			snprintf(why, sizeof(why), "allowPXE set on every interface of hardware %s",
				 s->hw_name);
			r = wfe_set_bool(an, "toggledTrue", true) |
			    wfe_condition(s->status, "AllowNetbootTrue", "True", "Toggled", why,
					  s->clk->now_ms);
			if (r)
				return -ENOMEM;
		}
	}
	const char *mode = wfe_str(s->bo, "bootMode");
	if (strcmp(mode, "netboot") == 0) {
		r = run_job(s, WFE_JOB_NETBOOT, &res, why, sizeof(why));
	} else if (iso_mode(mode)) {
		if (!*wfe_str(s->bo, "isoURL")) {
			snprintf(why, sizeof(why), "bootOptions.isoURL is required for bootMode %s",
				 mode);
			return fail(s, "BootJobSetupFailed", why);
		}
		r = run_job(s, WFE_JOB_ISO_MOUNT, &res, why, sizeof(why));
	} else if (strcmp(mode, "customboot") == 0) {
		r = run_job(s, WFE_JOB_CUSTOM_PREPARING, &res, why, sizeof(why));
	} else if (*mode) {
		snprintf(why, sizeof(why), "unknown bootMode %s", mode);
		return fail(s, "BootJobSetupFailed", why);
	}
	if (r < 0)
		return r;
	if (res == JOB_FAILED)
		return fail(s, "BootJobFailed", why);
	if (res == JOB_DONE)
		return wfe_set_state(s->status, WF_STATE_PENDING);
	return 0;
}

/* Every action still RUNNING ends TIMEOUT with the workflow. */
static int end_running(struct step *s, const char *message)
{
	size_t ti, ai;
	json_t *t, *a;
	int err = 0;
	int64_t now = s->clk->now_ms;
	json_array_foreach (json_object_get(s->status, "tasks"), ti, t) {
		json_array_foreach (json_object_get(t, "actions"), ai, a) {
			if (strcmp(wfe_str(a, "state"), "RUNNING") != 0)
				continue;
			int64_t start = wfe_time_get(a, "executionStart");
			char dur[WFE_DURATION_MAX];
			wfe_duration(start && start < now ? now - start : 0, dur);
			err |= wfe_set_state(a, WF_STATE_TIMEOUT) |
			       wfe_time_set(a, "executionStop", now, false) |
			       wfe_set_str(a, "executionDuration", dur, 0) |
			       wfe_set_str(a, "message", message, WF_MESSAGE_MAX);
			json_object_del(a, "deadline");
			json_object_del(a, "retryAfter");
		}
	}
	return err ? -ENOMEM : 0;
}

/* PENDING, RUNNING: the global timeout, the current action's deadline,
 * a retry's backoff over. */
static int timeouts(struct step *s)
{
	int64_t now = s->clk->now_ms;
	int64_t stop = wfe_time_get(s->status, "globalExecutionStop");
	char msg[512], dur[WFE_DURATION_MAX];
	size_t ti, ai;
	int err = 0;
	bool found = wfe_current(s->status, &ti, &ai) == 0;
	json_t *task = found ? json_array_get(json_object_get(s->status, "tasks"), ti) : NULL;
	json_t *a = found ? json_array_get(json_object_get(task, "actions"), ai) : NULL;
	if (stop && now >= stop) {
		wfe_duration(wfe_int(s->status, "globalTimeout", 0) * 1000, dur);
		snprintf(msg, sizeof(msg), "the workflow's global timeout (%s) passed", dur);
		err |= end_running(s, msg) | wfe_set_state(s->status, WF_STATE_TIMEOUT);
		if (a && json_object_get(s->status, "currentState"))
			err |= wfe_set_current(s->status, task, a);
		wfe_event(s->fx, "Warning", "Timeout", "%s", msg);
		s->fx->notify_agent = true;
		return err ? -ENOMEM : 0;
	}
	if (!a)
		return 0;
	const char *st = wfe_str(a, "state");
	int64_t deadline = wfe_time_get(a, "deadline");
	int64_t after = wfe_time_get(a, "retryAfter");
	if (strcmp(st, "RUNNING") == 0 && deadline && now >= deadline) {
		char what[600];
		snprintf(msg, sizeof(msg),
			 "no result from the agent within the action's timeout and %llds of grace",
			 (long long)wfe_grace_s(s->clk));
		if (wfe_finish(s->status, ti, ai, WF_STATE_TIMEOUT,
			       wfe_time_get(a, "executionStart"), now, msg, s->clk, what,
			       sizeof(what)) < 0)
			return -ENOMEM;
		wfe_event(s->fx, "Warning", "ActionTimeout", "%s", what);
		s->fx->notify_agent = true;
	} else if (strcmp(st, "PENDING") == 0 && after && now >= after) {
		/* the backoff is over: the waiting agent may take it */
		s->fx->notify_agent = true;
	}
	return 0;
}

/* Whether timeouts() would change the status: the global timeout or the
 * current action's deadline has passed. When not, it only reads. */
static bool timeouts_due(const json_t *status, int64_t now)
{
	int64_t stop = wfe_time_get(status, "globalExecutionStop");
	size_t ti, ai;
	if (stop && now >= stop)
		return true;
	if (wfe_current(status, &ti, &ai) < 0)
		return false;
	const json_t *a = json_array_get(
		json_object_get(json_array_get(json_object_get(status, "tasks"), ti), "actions"),
		ai);
	int64_t deadline = wfe_time_get(a, "deadline");
	return strcmp(wfe_str(a, "state"), "RUNNING") == 0 && deadline && now >= deadline;
}

/* POST, and FAILED or TIMEOUT once: allowPXE off, the ISO ejected,
 * customboot's post actions. POST -> SUCCESS when done. */
static int cleanup(struct step *s, enum wf_state st)
{
	char why[1024] = "";
	enum job_result res = JOB_DONE;
	int r = 0;
	json_t *sbo = wfe_obj(s->status, "bootOptions");
	json_t *an = wfe_obj(sbo, "allowNetboot");
	const json_t *jobs = wfe_obj(sbo, "jobs");
	if (wfe_bool(an, "toggledTrue") && !wfe_bool(an, "toggledFalse")) {
		if (s->in->hardware)
			s->fx->pxe = WF_PXE_OFF;
		snprintf(why, sizeof(why), "allowPXE unset on every interface of hardware %s",
			 s->hw_name);
		if (wfe_set_bool(an, "toggledFalse", true) < 0 ||
		    wfe_condition(s->status, "AllowNetbootFalse", "True", "Toggled", why,
				  s->clk->now_ms) < 0)
			return -ENOMEM;
	}
	const char *mode = wfe_str(s->bo, "bootMode");
	char mounted[WF_ID_MAX];
	snprintf(mounted, sizeof(mounted), "%s-%s", wfe_job_prefix(WFE_JOB_ISO_MOUNT), s->name);
	if (iso_mode(mode) && json_object_get(jobs, mounted))
		r = run_job(s, WFE_JOB_ISO_EJECT, &res, why, sizeof(why));
	else if (strcmp(mode, "customboot") == 0 &&
		 json_array_size(
			 json_object_get(wfe_obj(s->bo, "custombootConfig"), "postActions")))
		r = run_job(s, WFE_JOB_CUSTOM_POST, &res, why, sizeof(why));
	if (r < 0)
		return r;
	if (st != WF_STATE_POST || res == JOB_WAIT)
		return 0;
	if (res == JOB_FAILED)
		return fail(s, "BootJobFailed", why);
	wfe_event(s->fx, "Normal", "Succeeded", "every action succeeded");
	if (wfe_boot_await(s->wf, s->status, s->in, s->clk, s->fx) < 0)
		return -ENOMEM;
	return wfe_set_state(s->status, WF_STATE_SUCCESS);
}

/* When the step must run again by itself: the earliest future time of
 * the global timeout, the current action's deadline or backoff. */
static int64_t wake_at(const json_t *status, int64_t now)
{
	int64_t t[3] = { wfe_time_get(status, "globalExecutionStop"), 0, 0 }, best = 0;
	enum wf_state st = wfe_state(status, NULL);
	size_t ti, ai;
	if (st != WF_STATE_PENDING && st != WF_STATE_RUNNING)
		return 0;
	if (wfe_current(status, &ti, &ai) == 0) {
		const json_t *a = json_array_get(
			json_object_get(json_array_get(json_object_get(status, "tasks"), ti),
					"actions"),
			ai);
		if (strcmp(wfe_str(a, "state"), "RUNNING") == 0)
			t[1] = wfe_time_get(a, "deadline");
		t[2] = wfe_time_get(a, "retryAfter");
	}
	for (int i = 0; i < 3; i++)
		if (t[i] > now && (!best || t[i] < best))
			best = t[i];
	return best;
}

/* One state's work. */
static int hop(struct step *s, enum wf_state st, bool legacy)
{
	if (legacy)
		return st == WF_STATE_PENDING || st == WF_STATE_RUNNING ?
			       wfe_render(s->wf, &s->status, s->in, s->clk, s->fx, false) :
			       0;
	switch (st) {
	case WF_STATE_NONE: return wfe_render(s->wf, &s->status, s->in, s->clk, s->fx, false);
	case WF_STATE_PREPARING: return prepare(s);
	case WF_STATE_PENDING:
	case WF_STATE_RUNNING: return timeouts(s);
	case WF_STATE_POST:
	case WF_STATE_FAILED:
	case WF_STATE_TIMEOUT:
		/* a render failure has nothing to undo */
		if (st != WF_STATE_POST && !json_object_get(s->status, "tasks"))
			return 0;
		return cleanup(s, st);
	case WF_STATE_SUCCESS: return wfe_boot_observe(s->wf, s->status, s->in, s->clk, s->fx);
	default: return 0;
	}
}

int wf_engine_step(json_t *wf, const struct wf_inputs *in, const struct wf_clock *clk,
		   struct wf_effects *fx)
{
	if (fx)
		memset(fx, 0, sizeof(*fx));
	const json_t *md = wfe_obj(wf, "metadata");
	if (!json_is_object(wf) || !*wfe_str(md, "name") || !in || !clk || !fx)
		return -EINVAL;
	const char *ns = wfe_str(md, "namespace");
	struct step s = {
		.wf = wf,
		.in = in,
		.clk = clk,
		.fx = fx,
		.name = wfe_str(md, "name"),
		.ns = *ns ? ns : "default",
		.hw_name = wfe_str(wfe_obj(wf, "spec"), "hardwareRef"),
		.bo = wfe_obj(wfe_obj(wf, "spec"), "bootOptions"),
	};
	json_t *orig = wfe_obj(wf, "status");
	bool disabled = wfe_bool(wfe_obj(wf, "spec"), "disabled");
	bool legacy0;
	enum wf_state st0 = orig ? wfe_state(orig, &legacy0) : WF_STATE_NONE;
	if (orig && !disabled && !legacy0 &&
	    (st0 == WF_STATE_PENDING || st0 == WF_STATE_RUNNING) &&
	    !timeouts_due(orig, clk->now_ms)) {
		/* The common look (a report just written): nothing is due, so
		 * timeouts() only reads, and the status is not copied. */
		s.status = orig;
		int r = timeouts(&s);
		fx->wake_ms = wake_at(orig, clk->now_ms);
		return r;
	}
	s.status = orig ? json_deep_copy(orig) : json_object();
	if (!s.status)
		return -ENOMEM;
	int r = 0;
	for (int i = 0; i < WFE_MAX_HOPS && r == 0; i++) {
		bool legacy, legacy2;
		enum wf_state st = wfe_state(s.status, &legacy);
		if (*wfe_str(s.status, "state") && st == WF_STATE_NONE)
			break; /* a state this engine does not know: left alone */
		if (disabled) {
			/* as Tinkerbell: only status.agentID, and nothing handed out */
			if (st == WF_STATE_NONE || (legacy && !wf_state_terminal(st)))
				r = wfe_render(wf, &s.status, in, clk, fx, true);
			break;
		}
		r = hop(&s, st, legacy);
		if (wfe_state(s.status, &legacy2) == st && legacy2 == legacy)
			break;
	}
	if (r < 0) {
		json_decref(s.status);
		wf_effects_clear(fx);
		return r;
	}
	fx->wake_ms = wake_at(s.status, clk->now_ms);
	/* Rendered, prepared, ended: what the agent's GetAction answers changed. */
	if (strcmp(wfe_str(orig, "state"), wfe_str(s.status, "state")) != 0)
		fx->notify_agent = true;
	if (orig ? !json_equal(orig, s.status) : json_object_size(s.status) > 0) {
		if (json_object_set_new(wf, "status", s.status) < 0) {
			wf_effects_clear(fx);
			return -ENOMEM;
		}
		fx->status_changed = true;
	} else {
		json_decref(s.status);
	}
	return 0;
}
