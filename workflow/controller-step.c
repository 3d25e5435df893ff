/* controller-step — one look at a Workflow: read it and what it refers
 * to, ask the engine for its next step, and carry the step out in the
 * store.
 *
 * DESIGN: wf_engine_step() is pure; this file is its shell. It reads the
 * Workflow with the thread's own reader and, when the Workflow's state
 * needs them (not yet rendered, legacy, disabled, PREPARING, POST, FAILED
 * or TIMEOUT: the states whose step renders, prepares or cleans up), its
 * Template (spec.templateRef), Hardware (spec.hardwareRef) and the bmc
 * Jobs named in status.bootOptions.jobs; a PENDING or RUNNING Workflow,
 * whose step only checks its clocks, costs one read, which matters when
 * every report of a thousand agents is a change; a SUCCESS Workflow reads
 * its Hardware only while it waits for its machine to boot from its disk
 * (wf_engine_awaits_boot(), workflow/engine-boot.c), and a Hardware
 * change is what queues it: the observation the DHCP server or the
 * metadata routes wrote there. When such a step changes
 * the state (RUNNING -> TIMEOUT goes on to the cleanup, which turns
 * allowPXE off), its result is dropped and the step is taken again with
 * the inputs read. The clock is
 * CLOCK_REALTIME in milliseconds, the randomness getrandom(2)'s, and
 * the settings (action timeout, grace, backoff) the server's.
 *
 * The effects are carried out in the order that survives a crash at any
 * point: first what the status will claim is done (allowPXE on every
 * interface of the Hardware, written whole with its resourceVersion as
 * precondition and read again on a conflict, WF_CTL_CONFLICT_RETRIES
 * times, as Tinkerbell does, and, when it turns allowPXE on, without the
 * closed loop's annotations, so that the new netboot is not taken for the
 * earlier Workflow's; the closed loop's mark and observation (fx.boot),
 * with a merge patch of the annotations alone; the bmc Job, after
 * deleting an earlier one
 * of the same name, labelled and annotated tink-controller-auto-created
 * and owned by the Workflow, as Tinkerbell's are), then the status,
 * written with the Workflow's resourceVersion as precondition, then the
 * events. A crash before the status is written repeats the effects, which
 * are idempotent (allowPXE is only written when it differs; a Job is made
 * again). A status write that meets a newer version (the worker API wrote
 * meanwhile) reads the Workflow again and steps again, at most
 * WF_CTL_STEP_ATTEMPTS times in a look; a Job made in this look is not
 * made again by the next attempt. A failure of the store or the engine is
 * counted (ironbell_workflow_step_errors_total), logged, and the Workflow
 * looked at again after WF_CTL_ERROR_RETRY_MS. Each state change the
 * controller writes is one log line naming the Workflow, and counted by
 * the state entered. fx.notify_agent needs nothing here: the status
 * write is a store change, which is what wakes the worker API's waiting
 * GetAction. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/common.h"
#include "store/store.h"
#include "workflow/controller-internal.h"

#define WF_CTL_MSG_MAX 1024

/* What one look holds: the objects read, freed by look_clear(). */
struct look {
	json_t *wf, *tmpl, *hw;
	json_t *jobs[WF_CTL_MAX_JOB_REFS];
	const json_t *jobv[WF_CTL_MAX_JOB_REFS];
	size_t njobs;
	/* Jobs made by an earlier attempt of this look */
	char made[WF_MAX_EFFECT_JOBS][WF_ID_MAX];
	size_t nmade;
};

static void look_clear(struct look *l)
{
	json_decref(l->wf);
	json_decref(l->tmpl);
	json_decref(l->hw);
	for (size_t i = 0; i < l->njobs; i++)
		json_decref(l->jobs[i]);
	l->wf = l->tmpl = l->hw = NULL;
	l->njobs = 0;
}

static bool str_same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ---- the clock ---- */

static void wf_random(void *buf, size_t n, void *ud)
{
	uint8_t *p = buf;
	size_t got = 0;
	(void)ud;
	for (int tries = 0; got < n && tries < 8; tries++) {
		ssize_t r = getrandom(p + got, n - got, 0);
		if (r > 0)
			got += (size_t)r;
		else if (r < 0 && errno != EINTR)
			break;
	}
	/* getrandom() does not fail once the pool is ready: this is only
	 * not to leave zeros if it ever did */
	uint64_t x = now_real_ns() ^ (now_mono_ns() << 17) ^ (uintptr_t)buf;
	for (; got < n; got++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[got] = (uint8_t)x;
	}
}

/* ---- reading ---- */

static const char *state_of(const json_t *wf)
{
	return wf_ctl_jstr(wf, "status.state") ?: "";
}

/* Whether the step of wf in its state may read its Template, Hardware
 * or Jobs (see the DESIGN above). */
static bool needs_inputs(const json_t *wf)
{
	enum wf_state st;
	bool legacy = false;
	if (json_is_true(json_object_get(json_object_get(wf, "spec"), "disabled")))
		return true;
	if (wf_state_parse(state_of(wf), &st, &legacy) < 0 || legacy)
		return true;
	if (st == WF_STATE_SUCCESS)
		return wf_engine_awaits_boot(wf);
	return st != WF_STATE_PENDING && st != WF_STATE_RUNNING;
}

static json_t *get_opt(struct wf_server *s, enum store_kind k, const char *ns, const char *name)
{
	json_t *o = NULL;
	if (!name || !*name || store_get(s->reader, k, ns, name, &o) < 0)
		return NULL;
	return o;
}

/* Reads the inputs of l->wf into in when its state needs them, or always
 * with force. Whether it read them. */
static bool read_inputs(struct wf_server *s, struct wf_entry *w, struct look *l,
			struct wf_inputs *in, bool force)
{
	*in = (struct wf_inputs){ 0 };
	if (!force && !needs_inputs(l->wf))
		return false;
	l->tmpl = get_opt(s, STORE_KIND_TEMPLATE, w->ns, w->tmpl);
	l->hw = get_opt(s, STORE_KIND_HARDWARE, w->ns, w->hw);
	for (size_t i = 0; i < w->njobs; i++) {
		json_t *j = get_opt(s, STORE_KIND_JOB, w->ns, w->jobs[i]);
		if (j) {
			l->jobs[l->njobs] = j;
			l->jobv[l->njobs++] = j;
		}
	}
	in->template_obj = l->tmpl;
	in->hardware = l->hw;
	in->jobs = l->jobv;
	in->n_jobs = l->njobs;
	return true;
}

/* ---- effects ---- */

/* Sets netboot.allowPXE to on on every interface of Hardware ns/name:
 * 0 (also when nothing had to change), or a negative errno with why in
 * msg. */
static int set_pxe(struct wf_server *s, const char *ns, const char *name, bool on, char *msg,
		   size_t msglen)
{
	int e = -ESTALE;
	for (int attempt = 0; attempt < WF_CTL_CONFLICT_RETRIES && e == -ESTALE; attempt++) {
		json_t *hw = NULL, *ifc;
		bool change = false;
		size_t i;
		e = store_get(s->reader, STORE_KIND_HARDWARE, ns, name, &hw);
		if (e < 0) {
			snprintf(msg, msglen, "hardware %s/%s: %s", ns, name,
				 e == -ENOENT ? "not found" : strerror(-e));
			return e;
		}
		json_array_foreach (json_object_get(json_object_get(hw, "spec"), "interfaces"), i,
				    ifc) {
			json_t *nb = json_object_get(ifc, "netboot");
			if (!json_is_object(nb)) {
				nb = json_object();
				json_object_set_new(ifc, "netboot", nb);
			}
			if (json_is_boolean(json_object_get(nb, "allowPXE")) &&
			    json_is_true(json_object_get(nb, "allowPXE")) == on)
				continue;
			json_object_set_new(nb, "allowPXE", json_boolean(on));
			change = true;
		}
		/* a new netboot ends the wait of the Workflow before it
		 * (workflow/engine-boot.c): its marks go with the same write */
		json_t *ann = json_object_get(json_object_get(hw, "metadata"), "annotations");
		if (on && json_is_object(ann)) {
			if (json_object_del(ann, WF_BOOT_AWAIT_ANNOTATION) == 0)
				change = true;
			if (json_object_del(ann, WF_BOOT_OBSERVED_ANNOTATION) == 0)
				change = true;
		}
		if (!change) {
			json_decref(hw);
			return 0;
		}
		struct store_op op = { .type = STORE_OP_REPLACE,
				       .source = STORE_SOURCE_DAEMON,
				       .kind = STORE_KIND_HARDWARE,
				       .namespace_ = ns,
				       .name = name,
				       .body = hw,
				       .resource_version =
					       wf_ctl_jstr(hw, "metadata.resourceVersion"),
				       .no_object = true };
		e = store_write1(s->store, &op);
		if (e < 0)
			snprintf(msg, msglen, "hardware %s/%s: allowPXE not set: %s", ns, name,
				 store_op_message(&op));
		store_op_clear(&op);
		json_decref(hw);
	}
	return e;
}

/* Carries out fx->boot on Hardware ns/name: the annotations of the closed
 * loop set or dropped with a merge patch (no precondition: it touches
 * only them). 0, or a negative errno with why in msg. */
static int set_boot_mark(struct wf_server *s, const char *ns, const char *name,
			 const struct wf_effects *fx, char *msg, size_t msglen)
{
	json_t *ann = json_object();
	if (!ann)
		return -ENOMEM;
	if (fx->boot == WF_BOOT_AWAIT)
		json_object_set_new(ann, WF_BOOT_AWAIT_ANNOTATION, json_string(fx->boot_mark));
	else if (fx->boot == WF_BOOT_DROP)
		json_object_set_new(ann, WF_BOOT_AWAIT_ANNOTATION, json_null());
	json_object_set_new(ann, WF_BOOT_OBSERVED_ANNOTATION, json_null());
	json_t *patch = json_pack("{s:{s:o}}", "metadata", "annotations", ann);
	if (!patch)
		return -ENOMEM;
	struct store_op op = { .type = STORE_OP_MERGE_PATCH,
			       .source = STORE_SOURCE_DAEMON,
			       .kind = STORE_KIND_HARDWARE,
			       .namespace_ = ns,
			       .name = name,
			       .body = patch,
			       .no_object = true };
	int e = store_write1(s->store, &op);
	if (e < 0)
		snprintf(msg, msglen, "hardware %s/%s: %s not written: %s", ns, name,
			 WF_BOOT_AWAIT_ANNOTATION, store_op_message(&op));
	store_op_clear(&op);
	json_decref(patch);
	return e;
}

/* Makes the bmc Job j for Workflow wf in namespace ns, after deleting an
 * earlier one of the same name; its uid into *ret_uid (a heap string, or
 * NULL). 0, or a negative errno with why in msg. */
static int make_job(struct wf_server *s, const json_t *wf, const char *ns, const struct wf_job *j,
		    char **ret_uid, char *msg, size_t msglen)
{
	struct store_op del = { .type = STORE_OP_DELETE,
				.source = STORE_SOURCE_DAEMON,
				.kind = STORE_KIND_JOB,
				.namespace_ = ns,
				.name = j->name,
				.no_object = true };
	int e = store_write1(s->store, &del);
	if (e < 0 && e != -ENOENT) {
		snprintf(msg, msglen, "job %s/%s: the earlier one not deleted: %s", ns, j->name,
			 store_op_message(&del));
		store_op_clear(&del);
		return e;
	}
	store_op_clear(&del);
	json_t *owner = json_pack("{s:s,s:s,s:s,s:b,s:b}", "apiVersion",
				  store_kind_info(STORE_KIND_WORKFLOW)->api_version, "kind",
				  "Workflow", "name", wf_ctl_jstr(wf, "metadata.name") ?: "",
				  "controller", 1, "blockOwnerDeletion", 1);
	const char *uid = wf_ctl_jstr(wf, "metadata.uid");
	if (owner && uid)
		json_object_set_new(owner, "uid", json_string(uid));
	json_t *body = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s},s:{s:s},s:[o]},s:O}", "apiVersion",
				 store_kind_info(STORE_KIND_JOB)->api_version, "kind", "Job",
				 "metadata", "name", j->name, "namespace", ns, "labels",
				 WF_CTL_AUTO_LABEL, "true", "annotations", WF_CTL_AUTO_LABEL,
				 "true", "ownerReferences", owner, "spec", j->spec);
	struct store_op op = { .type = STORE_OP_CREATE,
			       .source = STORE_SOURCE_DAEMON,
			       .kind = STORE_KIND_JOB,
			       .body = body };
	e = body ? store_write1(s->store, &op) : -ENOMEM;
	if (e < 0) {
		snprintf(msg, msglen, "job %s/%s not created: %s", ns, j->name,
			 body ? store_op_message(&op) : "out of memory");
	} else {
		const char *u = wf_ctl_jstr(op.object, "metadata.uid");
		*ret_uid = u ? strdup(u) : NULL;
	}
	store_op_clear(&op);
	json_decref(body);
	return e;
}

/* Writes the uid of the Job just made into status.bootOptions.jobs[name]
 * when the engine listed it there: whoever reads the status finds which
 * Job it is. True when it changed the status. */
static bool note_job(json_t *wf, const char *name, const char *uid)
{
	const json_t *e = json_object_get(
		json_object_get(json_object_get(json_object_get(wf, "status"), "bootOptions"),
				"jobs"),
		name);
	if (!json_is_object(e))
		return false;
	bool set_uid = uid && !str_same(wf_ctl_jstr(e, "uid"), uid);
	bool set_deleted = !json_is_true(json_object_get(e, "existingJobDeleted"));
	if (!set_uid && !set_deleted)
		return false;
	/* the status may be shared with the store (wf_ctl_own_copy()): it
	 * changes in a copy of its own */
	json_t *status = json_deep_copy(json_object_get(wf, "status"));
	if (!status || json_object_set_new(wf, "status", status) < 0)
		return false;
	json_t *je = json_object_get(
		json_object_get(json_object_get(status, "bootOptions"), "jobs"), name);
	if (set_uid)
		json_object_set_new(je, "uid", json_string(uid));
	if (set_deleted)
		json_object_set_new(je, "existingJobDeleted", json_true());
	return true;
}

/* Writes wf's status with its resourceVersion as precondition; the new
 * resourceVersion into *ret_rv. 0, -ESTALE (a newer version), -ENOENT
 * (gone), or another negative errno with why in msg. */
static int write_status(struct wf_server *s, struct wf_entry *w, json_t *wf, uint64_t *ret_rv,
			char *msg, size_t msglen)
{
	struct store_op op = { .type = STORE_OP_STATUS,
			       .source = STORE_SOURCE_DAEMON,
			       .kind = STORE_KIND_WORKFLOW,
			       .namespace_ = w->ns,
			       .name = w->name,
			       .body = wf,
			       .resource_version = wf_ctl_jstr(wf, "metadata.resourceVersion"),
			       .take_body = true, /* wf is only read from here on */
			       .no_object = true };
	int e = store_write1(s->store, &op);
	if (e == 0)
		*ret_rv = op.rv;
	else
		snprintf(msg, msglen, "status not written: %s", store_op_message(&op));
	store_op_clear(&op);
	return e;
}

static void step_failed(struct wf_server *s, struct wf_entry *w, const char *why)
{
	metric_inc(s->m_step_err, 1);
	log_warn("workflow", "workflow %s/%s: %s; trying again in %d s", w->ns, w->name, why,
		 WF_CTL_ERROR_RETRY_MS / 1000);
	int64_t now = (int64_t)(now_real_ns() / 1000000u);
	if (!w->timer.idx || (int64_t)w->timer.at > now + WF_CTL_ERROR_RETRY_MS)
		wf_ctl_timer(s, w, now + WF_CTL_ERROR_RETRY_MS);
}

/* The state change just written: one log line and the metrics. */
static void transition(struct wf_server *s, struct wf_entry *w, const char *before,
		       const char *rendering_before, const json_t *wf)
{
	const char *after = state_of(wf);
	const char *rendering = wf_ctl_jstr(wf, "status.templateRendering");
	enum wf_state st;
	if (str_same(rendering, "failed") && !str_same(rendering_before, "failed"))
		metric_inc(s->m_render_fail, 1);
	if (strcmp(before, after) == 0)
		return;
	if (wf_state_parse(after, &st, NULL) == 0 && st < WF_STATE_MAX)
		metric_inc(s->m_trans[st], 1);
	log_info("workflow", "workflow %s/%s: %s -> %s", w->ns, w->name, *before ? before : "(new)",
		 *after ? after : "(none)");
}

/* The effects of fx other than the status: allowPXE, the Jobs. 0, or a
 * negative errno with why in msg. */
static int do_effects(struct wf_server *s, struct wf_entry *w, struct look *l,
		      struct wf_effects *fx, char *msg, size_t msglen)
{
	int e;
	if (fx->pxe != WF_PXE_KEEP) {
		if (!w->hw) {
			snprintf(msg, msglen, "allowPXE asked for, but no spec.hardwareRef");
			return -EINVAL;
		}
		e = set_pxe(s, w->ns, w->hw, fx->pxe == WF_PXE_ON, msg, msglen);
		if (e < 0)
			return e;
	}
	if (fx->boot != WF_BOOT_KEEP && w->hw) {
		e = set_boot_mark(s, w->ns, w->hw, fx, msg, msglen);
		if (e < 0)
			return e;
	}
	for (size_t i = 0; i < fx->n_jobs && i < WF_MAX_EFFECT_JOBS; i++) {
		const struct wf_job *j = &fx->jobs[i];
		bool made = false;
		char *uid = NULL;
		for (size_t k = 0; k < l->nmade; k++)
			made = made || strcmp(l->made[k], j->name) == 0;
		if (made)
			continue;
		e = make_job(s, l->wf, w->ns, j, &uid, msg, msglen);
		if (e < 0)
			return e;
		log_info("workflow", "workflow %s/%s: job %s created", w->ns, w->name, j->name);
		if (note_job(l->wf, j->name, uid))
			fx->status_changed = true;
		free(uid);
		if (l->nmade < WF_MAX_EFFECT_JOBS)
			snprintf(l->made[l->nmade++], WF_ID_MAX, "%s", j->name);
	}
	return 0;
}

/* One attempt: 0 (done, or failed and the timer set), -ESTALE (a
 * newer version: try again), -ENOENT (the Workflow is gone), -EAGAIN (a
 * step without the inputs changed the state, and the new state's work
 * may need them: nothing was done, try again with force). */
static int look_once(struct wf_server *s, struct wf_entry *w, struct look *l, bool force)
{
	char msg[WF_CTL_MSG_MAX] = "", before[32], rendering_before[16];
	struct wf_effects fx = { 0 };
	struct wf_inputs in;
	struct wf_clock clk = { .random = wf_random, .settings = &s->set };
	uint64_t rv = 0;
	int e = 0;
	/* the object the change that queued w decoded, once: an attempt
	 * after a conflict reads the store */
	if (w->changed_obj) {
		/* it may be shared with the store (store_change_object()): the
		 * engine changes .status, and this thread metadata, in a top
		 * level of their own */
		l->wf = wf_ctl_own_copy(w->changed_obj);
		json_decref(w->changed_obj);
		w->changed_obj = NULL;
		if (!l->wf)
			e = -ENOMEM;
	} else {
		e = store_get(s->reader, STORE_KIND_WORKFLOW, w->ns, w->name, &l->wf);
	}
	if (e == -ENOENT)
		return -ENOENT;
	if (e < 0) {
		snprintf(msg, sizeof(msg), "cannot read it: %s", strerror(-e));
		step_failed(s, w, msg);
		return 0;
	}
	wf_ctl_refs(w, l->wf);
	bool fetched = read_inputs(s, w, l, &in, force);
	snprintf(before, sizeof(before), "%s", state_of(l->wf));
	snprintf(rendering_before, sizeof(rendering_before), "%s",
		 wf_ctl_jstr(l->wf, "status.templateRendering") ?: "");
	clk.now_ms = (int64_t)(now_real_ns() / 1000000u);
	e = wf_engine_step(l->wf, &in, &clk, &fx);
	if (e < 0) {
		snprintf(msg, sizeof(msg), "the engine failed: %s", strerror(-e));
		goto fail;
	}
	/* RUNNING -> TIMEOUT goes on to the cleanup in the same step, which
	 * needs the Hardware */
	if (!fetched && strcmp(before, state_of(l->wf)) != 0) {
		e = -EAGAIN;
		goto out;
	}
	e = do_effects(s, w, l, &fx, msg, sizeof(msg));
	if (e < 0)
		goto fail;
	if (fx.status_changed) {
		e = write_status(s, w, l->wf, &rv, msg, sizeof(msg));
		if (e == -ESTALE || e == -ENOENT)
			goto out;
		if (e < 0)
			goto fail;
		w->written_rv = rv;
		wf_ctl_refs(w, l->wf);
		transition(s, w, before, rendering_before, l->wf);
	}
	for (size_t i = 0; i < fx.n_events && i < WF_MAX_EFFECT_EVENTS; i++) {
		const struct wf_event *ev = &fx.events[i];
		store_event(s->store, STORE_KIND_WORKFLOW, w->ns, w->name, ev->type ?: "Normal",
			    ev->reason ?: "Workflow", "%s", ev->message);
		if (ev->hardware && w->hw)
			store_event(s->store, STORE_KIND_HARDWARE, w->ns, w->hw,
				    ev->type ?: "Normal", ev->reason ?: "Workflow",
				    "workflow %s: %s", w->name, ev->message);
	}
	if (fx.wake_ms && fx.wake_ms < clk.now_ms + WF_CTL_MIN_WAKE_MS)
		fx.wake_ms = clk.now_ms + WF_CTL_MIN_WAKE_MS;
	wf_ctl_timer(s, w, fx.wake_ms);
	e = 0;
	goto out;
fail:
	step_failed(s, w, msg);
	e = 0;
out:
	wf_effects_clear(&fx);
	return e;
}

int wf_ctl_look(struct wf_server *s, struct wf_entry *w)
{
	struct look l = { 0 };
	bool force = false;
	/* at most one -EAGAIN, then WF_CTL_STEP_ATTEMPTS conflicts */
	for (int turn = 0; turn < WF_CTL_STEP_ATTEMPTS + 1; turn++) {
		int e = look_once(s, w, &l, force);
		look_clear(&l);
		if (e == -EAGAIN && !force) {
			force = true;
			continue;
		}
		if (e != -ESTALE)
			return e;
	}
	char msg[128];
	snprintf(msg, sizeof(msg), "status not written: %d newer versions in a row",
		 WF_CTL_STEP_ATTEMPTS);
	step_failed(s, w, msg);
	return 0;
}
