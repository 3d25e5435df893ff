/* job — the Job controller: Rufio's Job semantics, many Machines at once.
 *
 * DESIGN: every Job not yet Completed or Failed has an entry here, in one
 * list in creation order (the order the change log brought them, or at
 * start their creationTimestamp then name). A Job whose Machine is not in
 * the store fails ("machine ns/name not found"), as Rufio's does. A Job
 * waits until its Machine is followed here, no other Job or Task of that
 * Machine runs (a Job deleted mid-Task leaves its Task running), and
 * fewer than max_jobs Jobs run; the oldest such Job is admitted first, so Jobs of one Machine run
 * one after the other in creation order, never interleaved, and the
 * others wait in FIFO order for a slot.
 *
 * A running Job is reconciled from the store each time it or one of its
 * Tasks changes, as Rufio's reconciler does (tinkerbell/rufio
 * controller/job.go): Running=True and startTime first; then its Tasks
 * (label owner-name=<job>, and when both have a uid, a controller
 * ownerReference to this Job): one Failed fails the Job (Failed=True,
 * the message naming the Task and why) and stops it; one neither
 * Completed nor Failed is waited for; when every Action has its Task
 * Completed the Job is Completed=True with completionTime; otherwise the
 * next Task, <job>-task-<n> with n the number Completed, is created with
 * the Action and the Machine's connection (a same-named Task of a former
 * Job of the same name, which Kubernetes would have collected with it, is
 * deleted first). A Job keeps as its own the Tasks that name the uid it
 * had when it was first followed here: a Job the daemon made and kube/
 * created in the cluster takes the uid the API server gave it while its
 * Task runs, and that Task is neither a former Job's nor run again. So
 * Tasks are created strictly one at a time, in order. Conditions keep Rufio's shape ({type, status
 * "True", message}); Running stays beside Completed or Failed, as there.
 * Every transition is an event of the Machine (JobStarted, JobCompleted,
 * JobFailed), and a Job's end asks its Machine for a power poll, which
 * restores the desired power state (machine.c).
 *
 * After a restart nothing is lost: the Jobs are listed again, and a Job
 * that was running finds its Tasks in the store (a Task that was running
 * then is failed by task.c, which fails the Job). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmc/bmc-internal.h"
#include "common/common.h"
#include "store/store.h"

#define JOB_UID_MAX 64 /* bytes of a Job's first uid kept (a UUID has 36) */

struct bmc_job {
	struct bmc_job *next, *prev;
	char ns[BMC_NS_MAX], name[BMC_OBJ_NAME_MAX];
	char mns[BMC_NS_MAX], mname[BMC_OBJ_NAME_MAX];
	char uid[JOB_UID_MAX]; /* when first followed, "" none or too long */
	uint64_t seq;
	bool running;
	bool warned; /* its Machine is missing: said once */
};

static struct bmc_job *job_find(const struct bmc_server *s, const char *ns, const char *name)
{
	for (struct bmc_job *j = s->jobs_head; j; j = j->next)
		if (strcmp(j->ns, ns) == 0 && strcmp(j->name, name) == 0)
			return j;
	return NULL;
}

bool bmc_jobs_for_machine(const struct bmc_server *s, const char *ns, const char *name)
{
	for (struct bmc_job *j = s->jobs_head; j; j = j->next)
		if (strcmp(j->mns, ns) == 0 && strcmp(j->mname, name) == 0)
			return true;
	return false;
}

bool bmc_job_machine(const struct bmc_server *s, const char *ns, const char *name, const char **mns,
		     const char **mname)
{
	struct bmc_job *j = job_find(s, ns, name);
	if (!j)
		return false;
	*mns = j->mns;
	*mname = j->mname;
	return true;
}

static void set_gauge(struct bmc_server *s)
{
	metric_set(s->m_jobs_running, (double)s->jobs_running);
}

/* Drops j; a running Job's Machine is polled (desired power) and its slot
 * goes to the next. */
static void job_remove(struct bmc_server *s, struct bmc_job *j)
{
	bool was_running = j->running;
	struct bmc_machine *m = bmc_machine_find(s, j->mns, j->mname);
	if (j->prev)
		j->prev->next = j->next;
	else
		s->jobs_head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		s->jobs_tail = j->prev;
	s->njobs--;
	if (was_running) {
		s->jobs_running--;
		set_gauge(s);
	}
	free(j);
	if (m)
		bmc_machine_poll_soon(s, m);
	if (was_running)
		bmc_jobs_admit(s);
}

static void mevent(struct bmc_server *s, const struct bmc_job *j, const char *type,
		   const char *reason, const char *what)
{
	store_event(s->store, STORE_KIND_MACHINE, j->mns, j->mname, type, reason, "job %s/%s %s",
		    j->ns, j->name, what);
}

/* The Job's conditions with type set to "True" (and message), others
 * kept: a new array. */
static json_t *conditions_with(const json_t *obj, const char *type, const char *message)
{
	const json_t *old = json_object_get(json_object_get(obj, "status"), "conditions"), *c;
	json_t *out = json_array();
	size_t i;
	json_array_foreach (old, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		if (t && strcmp(t, type) != 0)
			json_array_append(out, (json_t *)c);
	}
	json_t *n = json_pack("{s:s,s:s}", "type", type, "status", "True");
	if (n && message && *message)
		json_object_set_new(n, "message", json_string(message));
	json_array_append_new(out, n);
	return out;
}

/* Ends j with condition type (Completed or Failed). */
static void job_end(struct bmc_server *s, struct bmc_job *j, const json_t *obj, bool ok,
		    const char *message)
{
	char now[21], what[BMC_COND_MAX + 300];
	/* The event first: whoever sees the Job ended finds its event (after
	 * store_sync()). */
	snprintf(what, sizeof(what), "%s%s", ok ? "completed" : "failed: ", ok ? "" : message);
	mevent(s, j, ok ? "Normal" : "Warning", ok ? "JobCompleted" : "JobFailed", what);
	bmc_time_now(now);
	json_t *st = json_pack("{s:o,s:s}", "conditions",
			       conditions_with(obj, ok ? "Completed" : "Failed", message),
			       "completionTime", now);
	if (st && bmc_status_patch(s, STORE_KIND_JOB, j->ns, j->name, st) == 0)
		metric_inc(s->m_jobs[ok ? 0 : 1], 1);
	json_decref(st);
	job_remove(s, j);
}

/* Whether task belongs to job (label checked by the selector): its
 * controller ownerReference, when both have a uid, names this Job's, or
 * the one j had when first followed. */
static bool owned(const json_t *task, const json_t *job, const struct bmc_job *j)
{
	const char *uid = bmc_jstr(job, "metadata.uid");
	const json_t *refs = json_object_get(json_object_get(task, "metadata"), "ownerReferences");
	const json_t *r;
	size_t i;
	if (!uid || !json_array_size(refs))
		return true;
	json_array_foreach (refs, i, r) {
		const char *k = json_string_value(json_object_get(r, "kind"));
		const char *u = json_string_value(json_object_get(r, "uid"));
		if (k && strcmp(k, "Job") == 0 &&
		    (!u || strcmp(u, uid) == 0 || (*j->uid && strcmp(u, j->uid) == 0)))
			return true;
	}
	return false;
}

/* Task ns/name, in the way of a Task of job, is a former same-named Job's
 * (another uid), which Kubernetes' garbage collector would have deleted
 * with it and nothing here does: deletes it. True when it is gone. */
static bool stale_task_deleted(struct bmc_server *s, const struct bmc_job *j, const json_t *job,
			       const char *name)
{
	json_t *old = NULL;
	bool gone = false;
	if (store_get(s->reader, STORE_KIND_TASK, j->ns, name, &old) < 0)
		return false;
	if (!owned(old, job, j)) {
		struct store_op op = { .type = STORE_OP_DELETE,
				       .source = STORE_SOURCE_DAEMON,
				       .kind = STORE_KIND_TASK,
				       .namespace_ = j->ns,
				       .name = name,
				       .resource_version =
					       bmc_jstr(old, "metadata.resourceVersion"),
				       .no_object = true };
		gone = store_write1(s->store, &op) == 0;
		store_op_clear(&op);
	}
	json_decref(old);
	return gone;
}

static int create_task(struct bmc_server *s, struct bmc_job *j, const json_t *job, size_t n,
		       char *err, size_t errlen)
{
	char name[BMC_OBJ_NAME_MAX + 32];
	json_t *machine = NULL;
	const json_t *action =
		json_array_get(json_object_get(json_object_get(job, "spec"), "tasks"), n);
	int e = store_get(s->reader, STORE_KIND_MACHINE, j->mns, j->mname, &machine);
	if (e < 0) {
		snprintf(err, errlen, "machine %s/%s not found", j->mns, j->mname);
		return e;
	}
	snprintf(name, sizeof(name), "%s-task-%zu", j->name, n);
	json_t *ref = json_pack("{s:s,s:s,s:s,s:b,s:b}", "apiVersion",
				store_kind_info(STORE_KIND_JOB)->api_version, "kind", "Job", "name",
				j->name, "controller", 1, "blockOwnerDeletion", 1);
	const char *uid = bmc_jstr(job, "metadata.uid");
	if (ref && uid)
		json_object_set_new(ref, "uid", json_string(uid));
	json_t *conn = json_object_get(json_object_get(machine, "spec"), "connection");
	/* the Secret's namespace is the Machine's, wherever the Task is */
	json_t *sref = json_object_get(conn, "authSecretRef");
	if (json_is_object(sref) && !bmc_jstr(sref, "namespace"))
		json_object_set_new(sref, "namespace", json_string(j->mns));
	json_t *body =
		json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s},s:[o]},s:{s:O,s:O}}", "apiVersion",
			  store_kind_info(STORE_KIND_TASK)->api_version, "kind", "Task", "metadata",
			  "name", name, "namespace", j->ns, "labels", "owner-name", j->name,
			  "ownerReferences", ref, "spec", "task", action, "connection", conn);
	struct store_op op = { .type = STORE_OP_CREATE,
			       .source = STORE_SOURCE_DAEMON,
			       .kind = STORE_KIND_TASK,
			       .body = body,
			       .no_object = true };
	e = body ? store_write1(s->store, &op) : -ENOMEM;
	if (e == -EEXIST && stale_task_deleted(s, j, job, name)) {
		store_op_clear(&op);
		op = (struct store_op){ .type = STORE_OP_CREATE,
					.source = STORE_SOURCE_DAEMON,
					.kind = STORE_KIND_TASK,
					.body = body,
					.no_object = true };
		e = store_write1(s->store, &op);
	}
	if (e < 0)
		snprintf(err, errlen, "cannot create task %s: %s", name,
			 body ? store_op_message(&op) : "out of memory");
	store_op_clear(&op);
	json_decref(body);
	json_decref(machine);
	return e;
}

/* Running=True and startTime, once. */
static void job_started(struct bmc_server *s, struct bmc_job *j, json_t *job)
{
	char now[21];
	if (bmc_cond_true(job, "Running") && bmc_jstr(job, "status.startTime"))
		return;
	bmc_time_now(now);
	json_t *st = json_pack("{s:o,s:s}", "conditions", conditions_with(job, "Running", NULL),
			       "startTime", bmc_jstr(job, "status.startTime") ?: now);
	if (st && bmc_status_patch(s, STORE_KIND_JOB, j->ns, j->name, st) == 0) {
		/* job as now stored, for the conditions of an end in this pass */
		json_t *old = json_object_get(job, "status");
		if (json_is_object(old))
			json_object_update(old, st);
		else
			json_object_set(job, "status", st);
		char n[64];
		snprintf(n, sizeof(n), "started, %zu tasks",
			 json_array_size(json_object_get(json_object_get(job, "spec"), "tasks")));
		mevent(s, j, "Normal", "JobStarted", n);
	}
	json_decref(st);
}

static void reconcile(struct bmc_server *s, struct bmc_job *j)
{
	char sel_text[BMC_OBJ_NAME_MAX + 16], err[BMC_COND_MAX] = "", msg[BMC_COND_MAX + 300];
	struct store_selector *sel = NULL;
	json_t *job = NULL, *tasks = NULL, *t;
	size_t i, done = 0, busy = 0;

	if (store_get(s->reader, STORE_KIND_JOB, j->ns, j->name, &job) < 0) {
		job_remove(s, j);
		return;
	}
	if (bmc_cond_true(job, "Completed") || bmc_cond_true(job, "Failed")) {
		job_remove(s, j);
		goto out;
	}
	job_started(s, j, job);
	snprintf(sel_text, sizeof(sel_text), "owner-name=%s", j->name);
	if (store_selector_parse(sel_text, &sel, err, sizeof(err)) < 0 ||
	    store_list(s->reader, STORE_KIND_TASK, j->ns, sel, &tasks, NULL) < 0) {
		snprintf(msg, sizeof(msg), "cannot list its tasks: %s", err);
		job_end(s, j, job, false, msg);
		goto out;
	}
	json_array_foreach (tasks, i, t) {
		if (!owned(t, job, j))
			continue;
		const json_t *f = bmc_cond_true(t, "Failed");
		if (f) {
			snprintf(msg, sizeof(msg), "task %s failed: %s",
				 bmc_jstr(t, "metadata.name") ?: "?",
				 json_string_value(json_object_get(f, "message")) ?:
					 "no reason given");
			job_end(s, j, job, false, msg);
			goto out;
		}
		if (bmc_cond_true(t, "Completed"))
			done++;
		else
			busy++;
	}
	if (busy)
		goto out;
	size_t total = json_array_size(json_object_get(json_object_get(job, "spec"), "tasks"));
	if (done >= total) {
		job_end(s, j, job, true, NULL);
		goto out;
	}
	if (create_task(s, j, job, done, err, sizeof(err)) < 0)
		job_end(s, j, job, false, err);
out:
	store_selector_free(sel);
	json_decref(tasks);
	json_decref(job);
}

static bool machine_running(const struct bmc_server *s, const struct bmc_job *j)
{
	/* a Task still at the BMC, of a Job deleted meanwhile, counts too */
	if (bmc_tasks_for_machine(s, j->mns, j->mname))
		return true;
	for (struct bmc_job *o = s->jobs_head; o; o = o->next)
		if (o->running && strcmp(o->mns, j->mns) == 0 && strcmp(o->mname, j->mname) == 0)
			return true;
	return false;
}

/* The oldest Job that may start now, or NULL. */
static struct bmc_job *next_admissible(struct bmc_server *s)
{
	for (struct bmc_job *j = s->jobs_head; j; j = j->next) {
		if (j->running)
			continue;
		if (!bmc_machine_find(s, j->mns, j->mname)) {
			/* Gone from the store too: admitted, its reconcile
			 * fails it "machine ... not found", as Rufio does,
			 * rather than leave it waiting forever. */
			json_t *m = NULL;
			int e = store_get(s->reader, STORE_KIND_MACHINE, j->mns, j->mname, &m);
			json_decref(m);
			if (e == -ENOENT)
				return j;
			if (!j->warned)
				log_info("bmc",
					 "job %s/%s waits for machine %s/%s, which does "
					 "not exist",
					 j->ns, j->name, j->mns, j->mname);
			j->warned = true;
			continue;
		}
		if (!machine_running(s, j))
			return j;
	}
	return NULL;
}

void bmc_jobs_admit(struct bmc_server *s)
{
	if (s->admitting)
		return; /* the outer call goes on until nothing more can start */
	s->admitting = true;
	/* Each turn starts one Job or stops: bounded by the Jobs there are. */
	for (size_t turn = 0; turn <= s->njobs + 1; turn++) {
		if (s->stopping || s->jobs_running >= s->set.max_jobs)
			break;
		struct bmc_job *j = next_admissible(s);
		if (!j)
			break;
		j->running = true;
		s->jobs_running++;
		set_gauge(s);
		reconcile(s, j);
	}
	s->admitting = false;
}

void bmc_job_kick(struct bmc_server *s, const char *ns, const char *job)
{
	struct bmc_job *j = ns && job ? job_find(s, ns, job) : NULL;
	if (j && j->running && !s->stopping)
		reconcile(s, j);
}

void bmc_job_changed(struct bmc_server *s, bool deleted, const json_t *obj)
{
	const char *ns = bmc_jstr(obj, "metadata.namespace");
	const char *name = bmc_jstr(obj, "metadata.name");
	const char *mname = bmc_jstr(obj, "spec.machineRef.name");
	const char *mns = bmc_jstr(obj, "spec.machineRef.namespace");
	struct bmc_job *j;

	if (!ns || !name)
		return;
	j = job_find(s, ns, name);
	if (deleted || bmc_cond_true(obj, "Completed") || bmc_cond_true(obj, "Failed")) {
		if (j)
			job_remove(s, j);
		return;
	}
	if (j) {
		if (j->running)
			reconcile(s, j);
		return;
	}
	/* The change may be older than this thread's own writes (a Running
	 * that came back after the Job ended): decide on the Job as it is. */
	json_t *fresh = NULL;
	bool finished = store_get(s->reader, STORE_KIND_JOB, ns, name, &fresh) < 0 ||
			bmc_cond_true(fresh, "Completed") || bmc_cond_true(fresh, "Failed");
	json_decref(fresh);
	if (finished)
		return;
	if (s->njobs >= BMC_MAX_JOBS) {
		log_warn("bmc", "job %s/%s: more than %d Jobs waiting: not followed", ns, name,
			 BMC_MAX_JOBS);
		return;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return;
	if (!bmc_copy(j->ns, sizeof(j->ns), ns) || !bmc_copy(j->name, sizeof(j->name), name) ||
	    !bmc_copy(j->mns, sizeof(j->mns), mns && *mns ? mns : ns) ||
	    !bmc_copy(j->mname, sizeof(j->mname), mname)) {
		free(j);
		return;
	}
	const char *uid = bmc_jstr(obj, "metadata.uid");
	if (!uid || !bmc_copy(j->uid, sizeof(j->uid), uid))
		j->uid[0] = '\0';
	j->seq = ++s->job_seq;
	j->prev = s->jobs_tail;
	if (s->jobs_tail)
		s->jobs_tail->next = j;
	else
		s->jobs_head = j;
	s->jobs_tail = j;
	s->njobs++;
	bmc_jobs_admit(s);
}

void bmc_jobs_free(struct bmc_server *s)
{
	struct bmc_job *j = s->jobs_head, *next;
	for (; j; j = next) {
		next = j->next;
		free(j);
	}
	s->jobs_head = s->jobs_tail = NULL;
	s->njobs = 0;
	s->jobs_running = 0;
	set_gauge(s);
}
