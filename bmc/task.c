/* task — the Task controller: one Rufio Action run against a BMC, and
 * verified.
 *
 * DESIGN: a Task that is neither Completed nor Failed and has no
 * startTime is started when it is seen, whoever made it (the Job
 * controller, or kubectl): startTime is written, then the Action runs
 * through the engines (bmc_req_start(), with the Task's copy of the
 * connection and the Secret it names). Rufio completes most Actions as
 * soon as the BMC accepts them and polls only on/off/soft; here:
 *   - powerAction on, off, soft: the power state is polled every
 *     verify_interval_ms until it is what was asked (a poll that fails is
 *     retried; its message goes into a timeout's); cycle and reset: until
 *     the Machine is on; status: one power read, the state in the message;
 *   - bootDevice and oneTimeBootDeviceAction (its first device, one time):
 *     set, then read back and compared (device, persistent, EFI) when the
 *     BMC reports it; when it does not (boot_known false, or the provider
 *     cannot read it), the Task completes saying it was "not verifiable";
 *     a mismatch fails the Task naming both;
 *   - virtualMediaAction: inserted ("" ejects) once the BMC accepts it.
 * A Task not done within task_timeout_s fails, "bmc task timeout after N
 * s" (Rufio's 10 minutes by default); a call still in flight then is let
 * run out and its answer dropped. Conditions are Rufio's: Completed or
 * Failed, status "True", a message; completionTime. Each transition is an
 * event of the Task's Machine (that of the Job named by its owner-name
 * label or controller ownerReference; a Task of no known Job gets its
 * events itself): TaskStarted, TaskCompleted, TaskFailed. A finished or
 * deleted Task wakes its Job (job.c).
 *
 * Restart: a Task found started (startTime set) but not finished, that
 * this process is not running, was running when the daemon stopped. It is
 * failed, "interrupted by a restart", rather than run again: power and
 * boot Actions are idempotent but a reset or a cycle is not, and the BMC
 * may have done half of a sequence; failing fails its Job, and whoever
 * made the Job decides to make it again. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmc/bmc-internal.h"
#include "common/common.h"
#include "store/store.h"

enum phase {
	PH_SET,
	PH_VERIFY
};

struct bmc_task {
	struct bmc_task *next, *prev;
	char ns[BMC_NS_MAX], name[BMC_OBJ_NAME_MAX];
	char job[BMC_OBJ_NAME_MAX];                    /* its Job, "" none */
	char mns[BMC_NS_MAX], mname[BMC_OBJ_NAME_MAX]; /* its Machine, "" unknown */
	json_t *conn;                                  /* spec.connection, owned */
	struct bmc_call call;                          /* the Action */
	enum bmc_power want;                           /* power to verify, or unknown */
	bool status_only;                              /* powerAction status */
	char what[96];                                 /* "power off", for messages */
	enum phase phase;
	struct bmc_timer tick; /* retry or next verify poll */
	struct bmc_timer deadline;
	int engine;
	char last_err[BMC_MESSAGE_MAX + 64];
	unsigned inflight;
	bool finished; /* out of the list */
};

static const char *const dev_names[] = { "none", "pxe", "disk", "bios", "cdrom", "safe", "http" };

bool bmc_tasks_for_machine(const struct bmc_server *s, const char *ns, const char *name)
{
	for (struct bmc_task *t = s->tasks; t; t = t->next)
		if (strcmp(t->mns, ns) == 0 && strcmp(t->mname, name) == 0)
			return true;
	return false;
}

static struct bmc_task *task_find(const struct bmc_server *s, const char *ns, const char *name)
{
	for (struct bmc_task *t = s->tasks; t; t = t->next)
		if (strcmp(t->ns, ns) == 0 && strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

static void task_free(struct bmc_task *t)
{
	json_decref(t->conn);
	free(t);
}

/* Out of the list and the timers; freed once no call is in flight. */
static void task_unlink(struct bmc_server *s, struct bmc_task *t)
{
	if (t->finished)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		s->tasks = t->next;
	if (t->next)
		t->next->prev = t->prev;
	s->ntasks--;
	bmc_timer_cancel(s, &t->tick);
	bmc_timer_cancel(s, &t->deadline);
	t->finished = true;
	if (!t->inflight)
		task_free(t);
	bmc_jobs_admit(s); /* a Job waiting for its Machine may start */
}

static void tevent(struct bmc_server *s, const struct bmc_task *t, bool warn, const char *reason,
		   const char *msg)
{
	if (t->mname[0])
		store_event(s->store, STORE_KIND_MACHINE, t->mns, t->mname,
			    warn ? "Warning" : "Normal", reason, "task %s/%s %s", t->ns, t->name,
			    msg);
	else
		store_event(s->store, STORE_KIND_TASK, t->ns, t->name, warn ? "Warning" : "Normal",
			    reason, "task %s/%s %s", t->ns, t->name, msg);
}

/* Writes the end of a Task (Completed or Failed, message, completionTime). */
static void write_end(struct bmc_server *s, const char *ns, const char *name, bool ok,
		      const char *message)
{
	char now[21];
	bmc_time_now(now);
	json_t *st = json_pack("{s:[{s:s,s:s,s:s}],s:s}", "conditions", "type",
			       ok ? "Completed" : "Failed", "status", "True", "message", message,
			       "completionTime", now);
	if (st)
		bmc_status_patch(s, STORE_KIND_TASK, ns, name, st);
	json_decref(st);
	metric_inc(s->m_tasks[ok ? 0 : 1], 1);
}

static void task_end(struct bmc_server *s, struct bmc_task *t, bool ok, const char *message)
{
	char ev[BMC_COND_MAX + 64];
	char ns[BMC_NS_MAX], job[BMC_OBJ_NAME_MAX];

	if (t->finished)
		return;
	/* the event first: whoever sees the Task ended finds its event */
	snprintf(ev, sizeof(ev), "%s: %s", ok ? "completed" : "failed", message);
	tevent(s, t, !ok, ok ? "TaskCompleted" : "TaskFailed", ev);
	write_end(s, t->ns, t->name, ok, message);
	memcpy(ns, t->ns, sizeof(ns));
	memcpy(job, t->job, sizeof(job));
	task_unlink(s, t);
	if (job[0])
		bmc_job_kick(s, ns, job);
}

/* A call of t's ended: false when t is no longer running (and maybe
 * freed). */
static bool call_ended(struct bmc_server *s, struct bmc_task *t)
{
	t->inflight--;
	if (t->finished) {
		if (!t->inflight)
			task_free(t);
		return false;
	}
	return !s->stopping;
}

/* ---- the Action ---- */

static int parse_device(const char *d, enum bmc_boot_device *ret)
{
	for (size_t i = 1; d && i < ARRAY_SIZE(dev_names); i++)
		if (strcmp(d, dev_names[i]) == 0) {
			*ret = (enum bmc_boot_device)i;
			return 0;
		}
	return -EINVAL;
}

static void boot_text(const struct bmc_boot *b, char *out, size_t cap)
{
	snprintf(out, cap, "%s (%s, %s)",
		 dev_names[b->device < ARRAY_SIZE(dev_names) ? b->device : 0],
		 b->persistent ? "persistent" : "one time", b->efi ? "EFI" : "legacy");
}

static int parse_action(struct bmc_task *t, const json_t *a, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum bmc_power_action act;
		enum bmc_power want;
	} powers[] = {
		{ "on", BMC_ACT_ON, BMC_POWER_ON },       { "off", BMC_ACT_OFF, BMC_POWER_OFF },
		{ "soft", BMC_ACT_SOFT, BMC_POWER_OFF },  { "cycle", BMC_ACT_CYCLE, BMC_POWER_ON },
		{ "reset", BMC_ACT_RESET, BMC_POWER_ON },
	};
	const char *p = json_string_value(json_object_get(a, "powerAction"));
	const json_t *bd = json_object_get(a, "bootDevice");
	const json_t *ot = json_object_get(a, "oneTimeBootDeviceAction");
	const json_t *vm = json_object_get(a, "virtualMediaAction");

	if (p) {
		snprintf(t->what, sizeof(t->what), "power %s", p);
		if (strcmp(p, "status") == 0) {
			t->call.cmd = BMC_CMD_POWER_GET;
			t->status_only = true;
			return 0;
		}
		for (size_t i = 0; i < ARRAY_SIZE(powers); i++)
			if (strcmp(p, powers[i].name) == 0) {
				t->call.cmd = BMC_CMD_POWER_SET;
				t->call.action = powers[i].act;
				t->want = powers[i].want;
				return 0;
			}
		snprintf(err, errlen,
			 "powerAction \"%.32s\" is not on, off, soft, cycle, reset "
			 "or status",
			 p);
		return -EINVAL;
	}
	if (bd || ot) {
		const char *d =
			bd ? bmc_jstr(bd, "device") :
			     json_string_value(json_array_get(json_object_get(ot, "device"), 0));
		t->call.cmd = BMC_CMD_BOOT_SET;
		if (parse_device(d, &t->call.boot.device) < 0) {
			snprintf(err, errlen,
				 "boot device \"%.32s\" is not pxe, disk, bios, cdrom or "
				 "safe",
				 d ? d : "");
			return -EINVAL;
		}
		const json_t *o = bd ? bd : ot;
		t->call.boot.persistent = bd && json_is_true(json_object_get(bd, "persistent"));
		t->call.boot.efi = json_is_true(json_object_get(o, "efiBoot"));
		char b[64];
		boot_text(&t->call.boot, b, sizeof(b));
		snprintf(t->what, sizeof(t->what), "boot device %s", b);
		return 0;
	}
	if (vm) {
		const char *url = bmc_jstr(vm, "mediaURL");
		t->call.cmd = BMC_CMD_MEDIA_SET;
		if (!bmc_copy(t->call.media_url, sizeof(t->call.media_url), url ? url : "")) {
			snprintf(err, errlen, "virtualMediaAction.mediaURL is longer than %d bytes",
				 BMC_MEDIA_URL_MAX - 1);
			return -EINVAL;
		}
		snprintf(t->what, sizeof(t->what), "%s",
			 *t->call.media_url ? "virtual media insert" : "virtual media eject");
		return 0;
	}
	snprintf(err, errlen, "spec.task has no action");
	return -EINVAL;
}

/* ---- running ---- */

static void on_set(struct bmc_server *s, const struct bmc_reply *r, int engine, const char *why,
		   void *obj);
static void on_verify(struct bmc_server *s, const struct bmc_reply *r, int engine, const char *why,
		      void *obj);

static int prefer(struct bmc_server *s, const struct bmc_task *t)
{
	struct bmc_machine *m;
	if (t->engine >= 0)
		return t->engine;
	m = t->mname[0] ? bmc_machine_find(s, t->mns, t->mname) : NULL;
	return m ? bmc_machine_engine(m) : -1;
}

/* Submits call for t; on -EAGAIN, tick again later. */
static void submit(struct bmc_server *s, struct bmc_task *t, const struct bmc_call *call,
		   bmc_req_fn done)
{
	char err[BMC_COND_MAX], msg[BMC_COND_MAX + 160];
	struct bmc_conn c;
	int e = bmc_conn_resolve(s, t->conn, t->ns, &c, err, sizeof(err));
	if (e < 0) {
		task_end(s, t, false, err);
		return;
	}
	e = bmc_req_start(s, &c, prefer(s, t), call, done, t, err, sizeof(err));
	explicit_bzero(&c, sizeof(c));
	if (e == 0) {
		t->inflight++;
	} else if (e == -EAGAIN) {
		bmc_timer_set(s, &t->tick, bmc_now_ms() + BMC_RETRY_BUSY_MS);
	} else {
		snprintf(msg, sizeof(msg), "%s: no provider can do it: %s", t->what, err);
		task_end(s, t, false, msg);
	}
}

static void verify_next(struct bmc_server *s, struct bmc_task *t, uint64_t after_ms)
{
	t->phase = PH_VERIFY;
	bmc_timer_set(s, &t->tick, bmc_now_ms() + after_ms);
}

static void on_set(struct bmc_server *s, const struct bmc_reply *r, int engine, const char *why,
		   void *obj)
{
	struct bmc_task *t = obj;
	char msg[BMC_COND_MAX + 128];
	if (!call_ended(s, t))
		return;
	if (r->fail != BMC_FAIL_NONE) {
		snprintf(msg, sizeof(msg), "%s: %s", t->what, why);
		task_end(s, t, false, msg);
		return;
	}
	t->engine = engine;
	switch (t->call.cmd) {
	case BMC_CMD_POWER_GET:
		snprintf(msg, sizeof(msg), "power is %s",
			 r->power == BMC_POWER_ON  ? "on" :
			 r->power == BMC_POWER_OFF ? "off" :
						     "unknown");
		task_end(s, t, true, msg);
		break;
	case BMC_CMD_POWER_SET: verify_next(s, t, s->set.verify_interval_ms); break;
	case BMC_CMD_BOOT_SET: verify_next(s, t, 0); break;
	default: snprintf(msg, sizeof(msg), "%s: done", t->what); task_end(s, t, true, msg);
	}
}

static void verify_boot(struct bmc_server *s, struct bmc_task *t, const struct bmc_reply *r,
			const char *why)
{
	char msg[BMC_COND_MAX + 256], want[64], got[64];
	boot_text(&t->call.boot, want, sizeof(want));
	if (r->fail == BMC_FAIL_UNSUPPORTED || (r->fail == BMC_FAIL_NONE && !r->boot_known)) {
		snprintf(msg, sizeof(msg),
			 "boot device %s set; not verifiable: the BMC does not report its boot "
			 "device",
			 want);
		task_end(s, t, true, msg);
		return;
	}
	if (r->fail != BMC_FAIL_NONE) {
		snprintf(msg, sizeof(msg), "boot device %s set, but cannot be read back: %s", want,
			 why);
		task_end(s, t, false, msg);
		return;
	}
	boot_text(&r->boot, got, sizeof(got));
	if (r->boot.device != t->call.boot.device ||
	    r->boot.persistent != t->call.boot.persistent || r->boot.efi != t->call.boot.efi) {
		snprintf(msg, sizeof(msg), "boot device set to %s, but the BMC reads back %s", want,
			 got);
		task_end(s, t, false, msg);
		return;
	}
	snprintf(msg, sizeof(msg), "boot device %s set, verified by reading it back", want);
	task_end(s, t, true, msg);
}

static void on_verify(struct bmc_server *s, const struct bmc_reply *r, int engine, const char *why,
		      void *obj)
{
	struct bmc_task *t = obj;
	char msg[BMC_COND_MAX + 128];
	if (!call_ended(s, t))
		return;
	if (t->call.cmd == BMC_CMD_BOOT_SET) {
		verify_boot(s, t, r, why);
		return;
	}
	if (r->fail == BMC_FAIL_NONE && r->power == t->want) {
		t->engine = engine;
		snprintf(msg, sizeof(msg), "%s: power is %s, verified", t->what,
			 t->want == BMC_POWER_ON ? "on" : "off");
		task_end(s, t, true, msg);
		return;
	}
	if (r->fail != BMC_FAIL_NONE)
		snprintf(t->last_err, sizeof(t->last_err), "; the last power read failed: %s", why);
	else
		snprintf(t->last_err, sizeof(t->last_err), "; power was %s at the last read",
			 r->power == BMC_POWER_ON  ? "on" :
			 r->power == BMC_POWER_OFF ? "off" :
						     "unknown");
	verify_next(s, t, s->set.verify_interval_ms);
}

static void tick_fire(struct bmc_server *s, struct bmc_timer *tm)
{
	struct bmc_task *t = (struct bmc_task *)((char *)tm - offsetof(struct bmc_task, tick));
	if (t->inflight)
		return; /* its callback arms the next */
	if (t->phase == PH_SET) {
		submit(s, t, &t->call, on_set);
		return;
	}
	struct bmc_call c = { .cmd = t->call.cmd == BMC_CMD_BOOT_SET ? BMC_CMD_BOOT_GET :
								       BMC_CMD_POWER_GET };
	submit(s, t, &c, on_verify);
}

static void deadline_fire(struct bmc_server *s, struct bmc_timer *tm)
{
	struct bmc_task *t = (struct bmc_task *)((char *)tm - offsetof(struct bmc_task, deadline));
	char msg[BMC_COND_MAX + 128];
	snprintf(msg, sizeof(msg), "bmc task timeout after %u s (%s)%s", s->set.task_timeout_s,
		 t->what, t->last_err);
	task_end(s, t, false, msg);
}

/* The Job that owns a Task: its owner-name label, else its controller
 * ownerReference of kind Job. */
static const char *owner_job(const json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata"), *r;
	const char *l =
		json_string_value(json_object_get(json_object_get(md, "labels"), "owner-name"));
	size_t i;
	if (l)
		return l;
	json_array_foreach (json_object_get(md, "ownerReferences"), i, r) {
		const char *k = json_string_value(json_object_get(r, "kind"));
		if (k && strcmp(k, "Job") == 0 && json_is_true(json_object_get(r, "controller")))
			return json_string_value(json_object_get(r, "name"));
	}
	return NULL;
}

static void task_start(struct bmc_server *s, const json_t *obj, const char *ns, const char *name)
{
	char err[BMC_COND_MAX], now[21], ev[256];
	const char *job = owner_job(obj), *mns, *mname;
	const json_t *spec = json_object_get(obj, "spec");
	struct bmc_task *t;

	if (s->ntasks >= BMC_MAX_TASKS) {
		log_warn("bmc", "task %s/%s: %d Tasks running already: it waits", ns, name,
			 BMC_MAX_TASKS);
		return;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return;
	t->engine = -1;
	t->tick.fire = tick_fire;
	t->deadline.fire = deadline_fire;
	bmc_copy(t->ns, sizeof(t->ns), ns);
	bmc_copy(t->name, sizeof(t->name), name);
	bmc_copy(t->job, sizeof(t->job), job);
	if (job && bmc_job_machine(s, ns, job, &mns, &mname)) {
		bmc_copy(t->mns, sizeof(t->mns), mns);
		bmc_copy(t->mname, sizeof(t->mname), mname);
	}
	t->conn = json_deep_copy(json_object_get(spec, "connection"));
	t->next = s->tasks;
	if (s->tasks)
		s->tasks->prev = t;
	s->tasks = t;
	s->ntasks++;
	int e = parse_action(t, json_object_get(spec, "task"), err, sizeof(err));
	bmc_time_now(now);
	json_t *st = json_pack("{s:s}", "startTime", now);
	if (st && bmc_status_patch(s, STORE_KIND_TASK, ns, name, st) < 0) {
		json_decref(st);
		task_unlink(s, t);
		return;
	}
	json_decref(st);
	snprintf(ev, sizeof(ev), "started: %s", t->what[0] ? t->what : "?");
	tevent(s, t, false, "TaskStarted", ev);
	if (e < 0) {
		task_end(s, t, false, err);
		return;
	}
	if (!t->conn) {
		task_end(s, t, false, "spec.connection is missing");
		return;
	}
	bmc_timer_set(s, &t->deadline, bmc_now_ms() + (uint64_t)s->set.task_timeout_s * 1000u);
	t->phase = PH_SET;
	submit(s, t, &t->call, on_set);
}

void bmc_task_changed(struct bmc_server *s, bool deleted, const json_t *obj)
{
	const char *ns = bmc_jstr(obj, "metadata.namespace");
	const char *name = bmc_jstr(obj, "metadata.name");
	json_t *fresh = NULL;
	struct bmc_task *t;

	if (!ns || !name)
		return;
	t = task_find(s, ns, name);
	if (deleted) {
		if (t)
			task_unlink(s, t);
		/* its Job goes on (makes it again), as Rufio's, which
		 * watches its Tasks, rather than wait for it forever */
		bmc_job_kick(s, ns, owner_job(obj));
		return;
	}
	if (t)
		return;
	/* The change may be older than what this thread wrote since (a
	 * startTime whose Task has ended): decide on the object as it is. */
	if (store_get(s->reader, STORE_KIND_TASK, ns, name, &fresh) < 0)
		return;
	obj = fresh;
	if (bmc_cond_true(obj, "Completed") || bmc_cond_true(obj, "Failed")) {
		/* made by someone else, or our own write coming back */
		bmc_job_kick(s, ns, owner_job(obj));
		goto out;
	}
	if (bmc_jstr(obj, "status.startTime")) {
		const char *job = owner_job(obj), *mns, *mname;
		if (job && bmc_job_machine(s, ns, job, &mns, &mname))
			store_event(s->store, STORE_KIND_MACHINE, mns, mname, "Warning",
				    "TaskFailed", "task %s/%s failed: interrupted by a restart", ns,
				    name);
		else
			store_event(s->store, STORE_KIND_TASK, ns, name, "Warning", "TaskFailed",
				    "task %s/%s failed: interrupted by a restart", ns, name);
		write_end(s, ns, name, false, "interrupted by a restart");
		bmc_job_kick(s, ns, job);
		goto out;
	}
	task_start(s, obj, ns, name);
out:
	json_decref(fresh);
}

void bmc_tasks_free(struct bmc_server *s)
{
	struct bmc_task *t = s->tasks, *next;
	for (; t; t = next) {
		next = t->next;
		bmc_timer_cancel(s, &t->tick);
		bmc_timer_cancel(s, &t->deadline);
		task_free(t);
	}
	s->tasks = NULL;
	s->ntasks = 0;
}
