/* patch — the pure core of the write-back: the Workflow status in the
 * shape the cluster's CRD expects, and the status the store keeps of
 * what the cluster echoes.
 *
 * DESIGN: the writer (kube/writer.c) sends a status whole and a merge
 * patch (common/jsonmerge.c) of labels, annotations and spec, each with
 * the cluster's resourceVersion as precondition; what is here decides
 * their shape and reads the cluster's answers back.
 *
 * The engine writes the Workflow status in the shape of Tinkerbell's
 * monorepo (state PENDING, currentState, IDs). A cluster whose CRD is
 * still tinkerbell/tink's (<= v0.12: STATE_PENDING, currentAction,
 * templateRending, tasks[].worker, actions[].status/startedAt/seconds)
 * prunes every field its schema lacks, so the status is converted before
 * it is compared (kube_status_to_legacy()), and what the cluster then
 * echoes back is converted again for the store
 * (kube_status_from_legacy()), taking what the legacy shape cannot hold
 * (IDs, the engine's bookkeeping) from the store's own copy. Which shape
 * the cluster wants is read from its CRD (kube_schema_from_crd()). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "common/cursor.h"
#include "kube/kube-internal.h"

/* ---- a field path for messages ("status.tasks[1].actions[0].x") ---- */

#define PATH_MAX_LEN 256

struct path {
	char s[PATH_MAX_LEN];
	size_t len;
	const char *why; /* what is wrong at s, for -EINVAL */
};

static size_t path_push(struct path *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t path_push(struct path *p, const char *fmt, ...)
{
	size_t old = p->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(p->s + p->len, sizeof(p->s) - p->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		p->len = p->len + (size_t)n < sizeof(p->s) ? p->len + (size_t)n : sizeof(p->s) - 1;
	return old;
}

static void path_pop(struct path *p, size_t old)
{
	p->len = old;
	p->s[old] = '\0';
}

/* Pushes an object member's name: ".key", or "key" at the top. */
static size_t path_key(struct path *p, const char *key)
{
	return path_push(p, "%s%s", p->len ? "." : "", key);
}

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- Go durations ---- */

static bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* Go's units (time.ParseDuration), in nanoseconds. */
static int duration_unit(const uint8_t *u, size_t n, uint64_t *ret)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 },
		{ "us", 1000 },
		{ "\xc2\xb5s", 1000 }, /* U+00B5 micro sign */
		{ "\xce\xbcs", 1000 }, /* U+03BC Greek mu */
		{ "ms", 1000000 },
		{ "s", 1000000000 },
		{ "m", UINT64_C(60000000000) },
		{ "h", UINT64_C(3600000000000) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0) {
			*ret = units[i].ns;
			return 0;
		}
	return -EINVAL;
}

/* One "<digits>[.<digits>]<unit>" of a duration into *ret_ns. */
static int duration_term(struct rd *r, uint64_t *ret_ns)
{
	uint64_t ip = 0, fv = 0, scale = 1;
	size_t digits = 0;
	uint8_t c;
	while (r->len && is_digit(r->p[0]) && rd_u8(r, &c) == 0) {
		if (ip > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
			return -ERANGE;
		ip = ip * 10 + (uint64_t)(c - '0');
		digits++;
	}
	if (r->len && r->p[0] == '.' && rd_u8(r, &c) == 0) {
		while (r->len && is_digit(r->p[0]) && rd_u8(r, &c) == 0) {
			/* Beyond nanoseconds a digit changes nothing. */
			if (scale < UINT64_C(1000000000000000000)) {
				fv = fv * 10 + (uint64_t)(c - '0');
				scale *= 10;
			}
			digits++;
		}
	}
	if (!digits)
		return -EINVAL;
	const uint8_t *unit = r->p;
	size_t n = 0;
	while (r->len && !is_digit(r->p[0]) && r->p[0] != '.' && rd_u8(r, &c) == 0)
		n++;
	uint64_t mult;
	if (!n || duration_unit(unit, n, &mult) < 0)
		return -EINVAL;
	if (ip > UINT64_MAX / mult)
		return -ERANGE;
	uint64_t v = ip * mult;
	/* As Go does it: the fraction through floating point. */
	uint64_t f = (uint64_t)((double)fv * ((double)mult / (double)scale));
	if (v > UINT64_MAX - f)
		return -ERANGE;
	*ret_ns = v + f;
	return 0;
}

int kube_go_duration_ns(const char *s, size_t len, int64_t *ret_ns)
{
	if (!s || !len || len > KUBE_MAX_DURATION)
		return -EINVAL;
	struct rd r = rd_init(s, len);
	bool neg = false;
	uint8_t c;
	if (r.p[0] == '-' || r.p[0] == '+') {
		neg = r.p[0] == '-';
		rd_u8(&r, &c);
	}
	if (r.len == 1 && r.p[0] == '0') {
		*ret_ns = 0;
		return 0;
	}
	if (!r.len)
		return -EINVAL;
	uint64_t total = 0;
	/* Each term takes at least two bytes: at most len/2 of them. */
	for (size_t i = 0; r.len && i < KUBE_MAX_DURATION; i++) {
		uint64_t v;
		int e = duration_term(&r, &v);
		if (e < 0)
			return e;
		if (total > UINT64_MAX - v)
			return -ERANGE;
		total += v;
	}
	if (r.len)
		return -EINVAL;
	if (total > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return -ERANGE;
	*ret_ns = neg ? (int64_t)(0 - total) : (int64_t)total;
	return 0;
}

/* Whole seconds as Go prints a duration: "0s", "5s", "1m2s", "1h0m5s". */
static void duration_from_seconds(int64_t sec, char out[KUBE_MAX_DURATION])
{
	const char *neg = sec < 0 ? "-" : "";
	uint64_t u = sec < 0 ? 0 - (uint64_t)sec : (uint64_t)sec;
	uint64_t h = u / 3600, m = u / 60 % 60, s = u % 60;
	if (h)
		snprintf(out, KUBE_MAX_DURATION, "%s%" PRIu64 "h%" PRIu64 "m%" PRIu64 "s", neg, h,
			 m, s);
	else if (m)
		snprintf(out, KUBE_MAX_DURATION, "%s%" PRIu64 "m%" PRIu64 "s", neg, m, s);
	else
		snprintf(out, KUBE_MAX_DURATION, "%s%" PRIu64 "s", neg, s);
}

/* ---- the Workflow status: monorepo <-> legacy ---- */

static const char *const states[][2] = {
	{ "PREPARING", "STATE_PREPARING" }, { "PENDING", "STATE_PENDING" },
	{ "RUNNING", "STATE_RUNNING" },     { "POST", "STATE_POST" },
	{ "SUCCESS", "STATE_SUCCESS" },     { "FAILED", "STATE_FAILED" },
	{ "TIMEOUT", "STATE_TIMEOUT" },
};

/* A state in the other shape (to = 1: legacy, 0: monorepo); a state of
 * neither list, or already in the wanted shape, as it is. */
static const char *state_to(const char *s, int to)
{
	for (size_t i = 0; i < ARRAY_SIZE(states); i++)
		if (strcmp(s, states[i][!to]) == 0)
			return states[i][to];
	return s;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* dst[dkey] = a copy of src[skey] when src has it. */
static int copy_key(json_t *dst, const char *dkey, const json_t *src, const char *skey)
{
	const json_t *v = json_object_get(src, skey);
	if (!v)
		return 0;
	json_t *c = json_deep_copy(v);
	if (!c || json_object_set_new(dst, dkey, c) < 0)
		return -ENOMEM;
	return 0;
}

/* copy_key() of the first of two names src has (the new one, then the old). */
static int copy_either(json_t *dst, const char *dkey, const json_t *src, const char *a,
		       const char *b)
{
	return copy_key(dst, dkey, src, json_object_get(src, a) ? a : b);
}

static int set_str(json_t *o, const char *key, const char *v)
{
	return json_object_set_new(o, key, json_string(v)) < 0 ? -ENOMEM : 0;
}

/* dst[dkey] = src[skey] converted to the other shape's state. */
static int copy_state(json_t *dst, const char *dkey, const json_t *src, const char *skey, int to)
{
	const char *s = json_string_value(json_object_get(src, skey));
	if (!s || !*s)
		return copy_key(dst, dkey, src, skey);
	return set_str(dst, dkey, state_to(s, to));
}

static const char *const action_common[] = {
	"name", "image", "timeout", "command", "volumes", "pid", "environment", "message",
};

static int action_to_legacy(const json_t *a, json_t *out, struct path *p)
{
	int r = 0;
	for (size_t i = 0; i < ARRAY_SIZE(action_common); i++)
		r |= copy_key(out, action_common[i], a, action_common[i]);
	if (json_object_get(a, "state"))
		r |= copy_state(out, "status", a, "state", 1);
	else
		r |= copy_state(out, "status", a, "status", 1);
	r |= copy_either(out, "startedAt", a, "executionStart", "startedAt");
	const json_t *d = json_object_get(a, "executionDuration");
	if (json_is_string(d)) {
		int64_t ns;
		if (kube_go_duration_ns(json_string_value(d), json_string_length(d), &ns) < 0) {
			path_key(p, "executionDuration");
			p->why = "not a Go duration";
			return -EINVAL;
		}
		json_t *sec = json_integer(ns / 1000000000);
		if (!sec || json_object_set_new(out, "seconds", sec) < 0)
			return -ENOMEM;
	} else {
		r |= copy_key(out, "seconds", a, "seconds");
	}
	return r ? -ENOMEM : 0;
}

static int task_to_legacy(const json_t *t, json_t *out, struct path *p)
{
	int r = copy_key(out, "name", t, "name") |
		copy_either(out, "worker", t, "agentID", "worker") |
		copy_key(out, "volumes", t, "volumes") |
		copy_key(out, "environment", t, "environment");
	if (r)
		return -ENOMEM;
	const json_t *actions = json_object_get(t, "actions");
	if (!actions)
		return 0;
	if (!json_is_array(actions)) {
		path_key(p, "actions");
		p->why = "not an array";
		return -EINVAL;
	}
	json_t *la = json_array();
	if (!la || json_object_set_new(out, "actions", la) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(actions); i++) {
		const json_t *a = json_array_get(actions, i);
		size_t old = path_push(p, ".actions[%zu]", i);
		json_t *o = json_object();
		if (!json_is_object(a)) {
			p->why = "not an object";
			json_decref(o);
			return -EINVAL;
		}
		if (!o || json_array_append_new(la, o) < 0)
			return -ENOMEM;
		if ((r = action_to_legacy(a, o, p)) < 0)
			return r;
		path_pop(p, old);
	}
	return 0;
}

static int status_to_legacy(const json_t *st, json_t *out, struct path *p)
{
	int r = copy_state(out, "state", st, "state", 1) |
		copy_key(out, "bootOptions", st, "bootOptions") |
		copy_either(out, "templateRending", st, "templateRendering", "templateRending") |
		copy_key(out, "globalTimeout", st, "globalTimeout") |
		copy_key(out, "conditions", st, "conditions");
	const char *cur = str(json_object_get(st, "currentState"), "actionName");
	r |= *cur ? set_str(out, "currentAction", cur) :
		    copy_key(out, "currentAction", st, "currentAction");
	if (r)
		return -ENOMEM;
	const json_t *tasks = json_object_get(st, "tasks");
	if (!tasks)
		return 0;
	if (!json_is_array(tasks)) {
		path_key(p, "tasks");
		p->why = "not an array";
		return -EINVAL;
	}
	json_t *lt = json_array();
	if (!lt || json_object_set_new(out, "tasks", lt) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(tasks); i++) {
		const json_t *t = json_array_get(tasks, i);
		size_t old = path_push(p, "%stasks[%zu]", p->len ? "." : "", i);
		json_t *o = json_object();
		if (!json_is_object(t)) {
			p->why = "not an object";
			json_decref(o);
			return -EINVAL;
		}
		if (!o || json_array_append_new(lt, o) < 0)
			return -ENOMEM;
		if ((r = task_to_legacy(t, o, p)) < 0)
			return r;
		path_pop(p, old);
	}
	return 0;
}

int kube_status_to_legacy(const json_t *status, json_t **ret, char *err, size_t errlen)
{
	struct path p = { .len = 0, .why = "" };
	p.s[0] = '\0';
	path_key(&p, "status");
	if (!json_is_object(status)) {
		errf(err, errlen, "status: not an object");
		return -EINVAL;
	}
	json_t *out = json_object();
	int r = out ? status_to_legacy(status, out, &p) : -ENOMEM;
	if (r < 0) {
		json_decref(out);
		if (r == -EINVAL)
			errf(err, errlen, "%s: %s", p.s, p.why);
		else
			errf(err, errlen, "out of memory");
		return r;
	}
	*ret = out;
	return 0;
}

/* ---- what the cluster gives back ---- */

/* Whether every member sub has is in sup with the same value, through
 * objects and through arrays of the same length: sub is then what the API
 * server keeps of sup once its schema dropped the fields it does not list
 * (or an older sup that only gained fields since). */
static bool subset(const json_t *sub, const json_t *sup, unsigned depth)
{
	if (depth >= JSON_MERGE_MAX_DEPTH || !sup)
		return false;
	if (json_is_object(sub)) {
		const char *k;
		json_t *m;
		if (!json_is_object(sup))
			return false;
		json_object_foreach ((json_t *)sub, k, m) {
			if (!subset(m, json_object_get(sup, k), depth + 1))
				return false;
		}
		return true;
	}
	if (json_is_array(sub)) {
		if (!json_is_array(sup) || json_array_size(sub) != json_array_size(sup))
			return false;
		for (size_t i = 0; i < json_array_size(sub); i++)
			if (!subset(json_array_get(sub, i), json_array_get(sup, i), depth + 1))
				return false;
		return true;
	}
	return json_equal((json_t *)sub, (json_t *)sup);
}

/* ---- legacy -> monorepo ---- */

static bool is_legacy(const json_t *st)
{
	if (strncmp(str(st, "state"), "STATE_", 6) == 0 || json_object_get(st, "currentAction") ||
	    json_object_get(st, "templateRending"))
		return true;
	const json_t *t0 = json_array_get(json_object_get(st, "tasks"), 0);
	return json_object_get(t0, "worker") && !json_object_get(t0, "agentID");
}

/* Element i of arr when its name is name, else NULL. */
static const json_t *same_named(const json_t *arr, size_t i, const char *name)
{
	const json_t *e = json_array_get(arr, i);
	return e && strcmp(str(e, "name"), name) == 0 ? e : NULL;
}

/* What only the monorepo's action (or the engine) has. */
static const char *const action_own[] = {
	"id", "namespaces", "executionStop", "retries", "attempts", "retryAfter", "deadline",
};

/* executionDuration from legacy's seconds: prev's own text when it says
 * the same whole seconds (no precision lost), else Go's form of them. */
static int duration_back(const json_t *a, const json_t *pa, json_t *out)
{
	const json_t *sec = json_object_get(a, "seconds");
	if (!json_is_integer(sec))
		return copy_key(out, "executionDuration", a, "executionDuration");
	json_int_t s = json_integer_value(sec);
	const json_t *pd = json_object_get(pa, "executionDuration");
	int64_t ns;
	if (json_is_string(pd) &&
	    kube_go_duration_ns(json_string_value(pd), json_string_length(pd), &ns) == 0 &&
	    ns / 1000000000 == s)
		return copy_key(out, "executionDuration", pa, "executionDuration");
	char d[KUBE_MAX_DURATION];
	duration_from_seconds(s, d);
	return set_str(out, "executionDuration", d);
}

static int action_from_legacy(const json_t *a, const json_t *pa, json_t *out, bool *complete)
{
	int r = 0;
	for (size_t i = 0; i < ARRAY_SIZE(action_common); i++)
		r |= copy_key(out, action_common[i], a, action_common[i]);
	r |= copy_state(out, "state", a, json_object_get(a, "status") ? "status" : "state", 0);
	r |= copy_either(out, "executionStart", a, "startedAt", "executionStart");
	r |= duration_back(a, pa, out);
	for (size_t i = 0; i < ARRAY_SIZE(action_own); i++)
		r |= copy_key(out, action_own[i], pa ? pa : a, action_own[i]);
	if (!json_object_get(out, "id"))
		*complete = false;
	return r ? -ENOMEM : 0;
}

static int task_from_legacy(const json_t *t, const json_t *pt, json_t *out, bool *complete,
			    struct path *p)
{
	int r = copy_key(out, "id", pt ? pt : t, "id") | copy_key(out, "name", t, "name") |
		copy_either(out, "agentID", t, "worker", "agentID") |
		copy_key(out, "volumes", t, "volumes") |
		copy_key(out, "environment", t, "environment");
	if (r)
		return -ENOMEM;
	if (!json_object_get(out, "id"))
		*complete = false;
	const json_t *actions = json_object_get(t, "actions");
	if (!actions)
		return 0;
	if (!json_is_array(actions)) {
		path_key(p, "actions");
		p->why = "not an array";
		return -EINVAL;
	}
	json_t *ma = json_array();
	if (!ma || json_object_set_new(out, "actions", ma) < 0)
		return -ENOMEM;
	const json_t *pas = json_object_get(pt, "actions");
	for (size_t i = 0; i < json_array_size(actions); i++) {
		const json_t *a = json_array_get(actions, i);
		size_t old = path_push(p, ".actions[%zu]", i);
		if (!json_is_object(a)) {
			p->why = "not an object";
			return -EINVAL;
		}
		json_t *o = json_object();
		if (!o || json_array_append_new(ma, o) < 0)
			return -ENOMEM;
		if ((r = action_from_legacy(a, same_named(pas, i, str(a, "name")), o, complete)) <
		    0)
			return r;
		path_pop(p, old);
	}
	return 0;
}

/* The last action of task t is SUCCESS. */
static bool task_done(const json_t *t)
{
	const json_t *as = json_object_get(t, "actions");
	size_t n = json_array_size(as);
	return n && strcmp(str(json_array_get(as, n - 1), "state"), "SUCCESS") == 0;
}

/* agentID (the agent of the first task not done, else of the last) and
 * currentState (the action currentAction names: the first of that name
 * not done, else the first of that name) of the converted status. */
static int current_from_legacy(const json_t *legacy, json_t *out)
{
	const json_t *tasks = json_object_get(out, "tasks");
	size_t n = json_array_size(tasks);
	const json_t *agent_task = NULL;
	for (size_t i = 0; i < n && !agent_task; i++)
		if (!task_done(json_array_get(tasks, i)) || i + 1 == n)
			agent_task = json_array_get(tasks, i);
	if (agent_task && copy_key(out, "agentID", agent_task, "agentID") < 0)
		return -ENOMEM;
	const char *cur = str(legacy, "currentAction");
	const json_t *ct = NULL, *ca = NULL;
	for (int any = 0; *cur && !ca && any < 2; any++)
		for (size_t i = 0; !ca && i < n; i++) {
			const json_t *t = json_array_get(tasks, i),
				     *as = json_object_get(t, "actions");
			for (size_t j = 0; !ca && j < json_array_size(as); j++) {
				const json_t *a = json_array_get(as, j);
				if (strcmp(str(a, "name"), cur) == 0 &&
				    (any || strcmp(str(a, "state"), "SUCCESS") != 0)) {
					ct = t;
					ca = a;
				}
			}
		}
	if (!ca)
		return 0;
	json_t *cs = json_object();
	if (!cs || json_object_set_new(out, "currentState", cs) < 0)
		return -ENOMEM;
	int r = copy_key(cs, "agentID", ct, "agentID") | copy_key(cs, "taskID", ct, "id") |
		copy_key(cs, "actionID", ca, "id") | copy_key(cs, "state", ca, "state") |
		copy_key(cs, "actionName", ca, "name") | copy_key(cs, "taskName", ct, "name");
	return r ? -ENOMEM : 0;
}

static int status_from_legacy(const json_t *st, const json_t *prev, json_t *out, bool *complete,
			      struct path *p)
{
	int r = copy_state(out, "state", st, "state", 0) |
		copy_key(out, "bootOptions", st, "bootOptions") |
		copy_either(out, "templateRendering", st, "templateRending", "templateRendering") |
		copy_key(out, "globalTimeout", st, "globalTimeout") |
		copy_key(out, "conditions", st, "conditions") |
		copy_key(out, "globalExecutionStop", prev, "globalExecutionStop");
	if (r)
		return -ENOMEM;
	const json_t *tasks = json_object_get(st, "tasks");
	if (tasks && !json_is_array(tasks)) {
		path_key(p, "tasks");
		p->why = "not an array";
		return -EINVAL;
	}
	json_t *mt = json_array();
	if (!mt || json_object_set_new(out, "tasks", mt) < 0)
		return -ENOMEM;
	const json_t *pts = json_object_get(prev, "tasks");
	for (size_t i = 0; i < json_array_size(tasks); i++) {
		const json_t *t = json_array_get(tasks, i);
		size_t old = path_push(p, ".tasks[%zu]", i);
		if (!json_is_object(t)) {
			p->why = "not an object";
			return -EINVAL;
		}
		json_t *o = json_object();
		if (!o || json_array_append_new(mt, o) < 0)
			return -ENOMEM;
		r = task_from_legacy(t, same_named(pts, i, str(t, "name")), o, complete, p);
		if (r < 0)
			return r;
		path_pop(p, old);
	}
	if (!tasks)
		json_object_del(out, "tasks");
	return current_from_legacy(st, out);
}

/* *ret = a deep copy of v. */
static int copy_out(const json_t *v, json_t **ret)
{
	json_t *c = json_deep_copy(v);
	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

int kube_status_from_legacy(const json_t *legacy, const json_t *prev, json_t **ret, char *err,
			    size_t errlen)
{
	if (!json_is_object(legacy)) {
		errf(err, errlen, "status: not an object");
		return -EINVAL;
	}
	if (!is_legacy(legacy) || !json_is_object(prev) || is_legacy(prev))
		return copy_out(legacy, ret);
	json_t *pl = NULL;
	bool echo = kube_status_to_legacy(prev, &pl, NULL, 0) == 0 && subset(legacy, pl, 0);
	json_decref(pl);
	if (echo)
		return copy_out(prev, ret);
	struct path p = { .len = 0, .why = "" };
	p.s[0] = '\0';
	path_key(&p, "status");
	bool complete = true;
	json_t *out = json_object();
	int r = out ? status_from_legacy(legacy, prev, out, &complete, &p) : -ENOMEM;
	if (r < 0) {
		json_decref(out);
		if (r == -EINVAL)
			errf(err, errlen, "%s: %s", p.s, p.why);
		else
			errf(err, errlen, "out of memory");
		return r;
	}
	if (!complete) {
		json_decref(out);
		return copy_out(legacy, ret);
	}
	*ret = out;
	return 0;
}

int kube_status_mirror(enum store_kind k, const json_t *cluster_status, const json_t *prev,
		       enum kube_status_schema schema, json_t **ret, char *err, size_t errlen)
{
	json_t *sent = NULL;
	if (json_is_object(prev) && k == STORE_KIND_WORKFLOW && schema == KUBE_STATUS_LEGACY &&
	    kube_status_to_legacy(prev, &sent, NULL, 0) < 0)
		sent = NULL;
	const json_t *wire = sent ? sent : prev;
	json_t *empty = json_object();
	bool echo = prev && empty && subset(cluster_status ? cluster_status : empty, wire, 0);
	json_decref(empty);
	json_decref(sent);
	if (echo)
		return copy_out(prev, ret);
	if (!cluster_status) {
		*ret = NULL;
		return 0;
	}
	if (k == STORE_KIND_WORKFLOW && json_is_object(cluster_status))
		return kube_status_from_legacy(cluster_status, prev, ret, err, errlen);
	return copy_out(cluster_status, ret);
}

/* ---- the schema the cluster's CRD describes ---- */

static const json_t *dig(const json_t *v, const char *const *keys, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		v = json_object_get(v, keys[i]);
	return v;
}

enum kube_status_schema kube_schema_from_crd(const json_t *crd)
{
	static const char *const to_status[] = { "schema", "openAPIV3Schema", "properties",
						 "status", "properties" };
	static const char *const to_task[] = { "tasks", "items", "properties" };
	const json_t *versions = json_object_get(json_object_get(crd, "spec"), "versions");
	const json_t *v = NULL;
	for (size_t i = 0; !v && i < json_array_size(versions); i++)
		if (strcmp(str(json_array_get(versions, i), "name"), "v1alpha1") == 0)
			v = json_array_get(versions, i);
	const json_t *props = dig(v, to_status, ARRAY_SIZE(to_status));
	if (!json_is_object(props))
		return KUBE_STATUS_MONOREPO;
	if (json_object_get(props, "currentState") || json_object_get(props, "templateRendering") ||
	    json_object_get(props, "agentID"))
		return KUBE_STATUS_MONOREPO;
	if (json_object_get(props, "currentAction") || json_object_get(props, "templateRending"))
		return KUBE_STATUS_LEGACY;
	const json_t *task = dig(props, to_task, ARRAY_SIZE(to_task));
	if (json_object_get(task, "worker") && !json_object_get(task, "agentID"))
		return KUBE_STATUS_LEGACY;
	return KUBE_STATUS_MONOREPO;
}
