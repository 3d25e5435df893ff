/* engine-util — the small pieces the engine's transitions are made of:
 * typed reads and writes of the Workflow status's JSON, RFC 3339 times,
 * Go durations, ULIDs, conditions and the current action.
 *
 * DESIGN: pure, as the engine is (engine.h): the time and the random bytes
 * come from the caller's struct wf_clock. Times are kept in the status as
 * RFC 3339 UTC with seconds, as Kubernetes' metav1.Time marshals them;
 * inside the engine they are Unix milliseconds. The calendar arithmetic is
 * done here (days from a civil date) rather than with timegm(), so nothing
 * depends on the process's time zone or locale. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/utf8.h"
#include "workflow/engine-internal.h"

static const char *const state_names[WF_STATE_MAX] = {
	[WF_STATE_NONE] = "",           [WF_STATE_PREPARING] = "PREPARING",
	[WF_STATE_PENDING] = "PENDING", [WF_STATE_RUNNING] = "RUNNING",
	[WF_STATE_POST] = "POST",       [WF_STATE_SUCCESS] = "SUCCESS",
	[WF_STATE_FAILED] = "FAILED",   [WF_STATE_TIMEOUT] = "TIMEOUT",
};

const char *wf_state_name(enum wf_state st)
{
	if ((unsigned)st >= WF_STATE_MAX)
		return NULL;
	return state_names[st];
}

int wf_state_parse(const char *s, enum wf_state *ret, bool *legacy)
{
	static const struct {
		const char *name;
		enum wf_state st;
	} old[] = {
		{ "STATE_PENDING", WF_STATE_PENDING }, { "STATE_RUNNING", WF_STATE_RUNNING },
		{ "STATE_FAILED", WF_STATE_FAILED },   { "STATE_TIMEOUT", WF_STATE_TIMEOUT },
		{ "STATE_SUCCESS", WF_STATE_SUCCESS },
	};
	if (!s)
		return -EINVAL;
	for (int i = 0; i < WF_STATE_MAX; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*ret = (enum wf_state)i;
			if (legacy)
				*legacy = false;
			return 0;
		}
	for (size_t i = 0; i < ARRAY_SIZE(old); i++)
		if (strcmp(s, old[i].name) == 0) {
			*ret = old[i].st;
			if (legacy)
				*legacy = true;
			return 0;
		}
	return -EINVAL;
}

bool wf_state_terminal(enum wf_state st)
{
	return st == WF_STATE_SUCCESS || st == WF_STATE_FAILED || st == WF_STATE_TIMEOUT;
}

void wf_effects_clear(struct wf_effects *fx)
{
	if (!fx)
		return;
	for (size_t i = 0; i < fx->n_jobs && i < WF_MAX_EFFECT_JOBS; i++)
		json_decref(fx->jobs[i].spec);
	memset(fx, 0, sizeof(*fx));
}

void wf_handout_clear(struct wf_handout *h)
{
	if (!h)
		return;
	json_decref(h->volumes);
	json_decref(h->environment);
	memset(h, 0, sizeof(*h));
}

/* ---- typed access ---- */

const char *wfe_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? s : "";
}

json_int_t wfe_int(const json_t *obj, const char *key, json_int_t def)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_integer(v) ? json_integer_value(v) : def;
}

bool wfe_bool(const json_t *obj, const char *key)
{
	return json_is_true(json_object_get(obj, key));
}

json_t *wfe_obj(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_object(v) ? v : NULL;
}

json_t *wfe_obj_ensure(json_t *obj, const char *key)
{
	json_t *v = wfe_obj(obj, key);
	if (v)
		return v;
	v = json_object();
	if (!v || json_object_set_new(obj, key, v) < 0)
		return NULL;
	return v;
}

int wfe_set_str(json_t *obj, const char *key, const char *val, size_t max)
{
	size_t n = strlen(val);
	size_t len = utf8_sanitized_len(val, n, 0);
	size_t cap = max && max < len ? max : len;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	size_t w = utf8_sanitize(val, n, buf, cap, 0, NULL);
	json_t *s = json_stringn(buf, w);
	free(buf);
	if (!s || json_object_set_new(obj, key, s) < 0)
		return -ENOMEM;
	return 0;
}

int wfe_set_int(json_t *obj, const char *key, json_int_t v)
{
	return json_object_set_new(obj, key, json_integer(v)) < 0 ? -ENOMEM : 0;
}

int wfe_set_bool(json_t *obj, const char *key, bool v)
{
	return json_object_set_new(obj, key, json_boolean(v)) < 0 ? -ENOMEM : 0;
}

/* ---- times ---- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at s into *v. */
static bool digits(const char *s, int n, unsigned *v)
{
	unsigned x = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (unsigned)(s[i] - '0');
	}
	*v = x;
	return true;
}

int wfe_time_parse(const char *s, int64_t *ret_ms)
{
	unsigned y, mo, d, h, mi, se, oh = 0, om = 0;
	if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &se))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -EINVAL;
	const char *p = s + 19;
	int64_t frac_ms = 0;
	if (*p == '.') {
		p++;
		int n = 0;
		for (; *p >= '0' && *p <= '9'; p++, n++)
			if (n < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
		if (n == 0)
			return -EINVAL;
		for (; n < 3; n++)
			frac_ms *= 10;
	}
	int sign = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '+' ? 1 : -1;
		if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return -EINVAL;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	t -= sign * (int64_t)(oh * 3600 + om * 60);
	*ret_ms = t * 1000 + frac_ms;
	return 0;
}

int64_t wfe_time_get(const json_t *obj, const char *key)
{
	int64_t ms;
	if (wfe_time_parse(json_string_value(json_object_get(obj, key)), &ms) < 0)
		return 0;
	return ms;
}

int wfe_time_set(json_t *obj, const char *key, int64_t ms, bool ceil)
{
	int64_t s = ms / 1000;
	if (ms % 1000 < 0)
		s--;
	if (ceil && ms - s * 1000 > 0)
		s++;
	char buf[21];
	time_rfc3339(s, buf);
	return json_object_set_new(obj, key, json_string(buf)) < 0 ? -ENOMEM : 0;
}

void wfe_duration(int64_t ms, char out[WFE_DURATION_MAX])
{
	/* Go's time.Duration.String(): under a second in the largest unit
	 * that keeps an integer part ("500ms"); else h, m and s with the
	 * seconds' fraction, trailing zeros dropped ("1h0m1.5s"). */
	const char *neg = ms < 0 ? "-" : "";
	uint64_t u = ms < 0 ? -(uint64_t)ms : (uint64_t)ms;
	if (u == 0) {
		snprintf(out, WFE_DURATION_MAX, "0s");
		return;
	}
	if (u < 1000) {
		snprintf(out, WFE_DURATION_MAX, "%s%" PRIu64 "ms", neg, u);
		return;
	}
	uint64_t h = u / 3600000, m = u / 60000 % 60, s = u / 1000 % 60, f = u % 1000;
	char sec[16];
	if (f == 0)
		snprintf(sec, sizeof(sec), "%" PRIu64 "s", s);
	else if (f % 100 == 0)
		snprintf(sec, sizeof(sec), "%" PRIu64 ".%" PRIu64 "s", s, f / 100);
	else if (f % 10 == 0)
		snprintf(sec, sizeof(sec), "%" PRIu64 ".%02" PRIu64 "s", s, f / 10);
	else
		snprintf(sec, sizeof(sec), "%" PRIu64 ".%03" PRIu64 "s", s, f);
	if (h)
		snprintf(out, WFE_DURATION_MAX, "%s%" PRIu64 "h%" PRIu64 "m%s", neg, h, m, sec);
	else if (m)
		snprintf(out, WFE_DURATION_MAX, "%s%" PRIu64 "m%s", neg, m, sec);
	else
		snprintf(out, WFE_DURATION_MAX, "%s%s", neg, sec);
}

int wfe_ulid(const struct wf_clock *clk, char out[WFE_ULID_LEN + 1])
{
	/* ulid/spec: 48 bits of Unix milliseconds then 80 random bits, big
	 * endian, as 26 Crockford base32 characters (the first carries 3
	 * bits). */
	static const char b32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	if (!clk || !clk->random)
		return -EINVAL;
	uint8_t b[16];
	uint64_t t = (uint64_t)clk->now_ms & 0xffffffffffffull;
	for (int i = 0; i < 6; i++)
		b[i] = (uint8_t)(t >> (40 - 8 * i));
	clk->random(b + 6, 10, clk->userdata);
	/* 130 bits of output for 128 of input: two zero bits first. */
	for (int i = 0; i < WFE_ULID_LEN; i++) {
		int bit = i * 5 - 2; /* index of the character's first bit */
		unsigned v = 0;
		for (int k = 0; k < 5; k++, bit++) {
			unsigned x = bit < 0 ? 0 : (b[bit / 8] >> (7 - bit % 8)) & 1;
			v = v << 1 | x;
		}
		out[i] = b32[v];
	}
	out[WFE_ULID_LEN] = '\0';
	return 0;
}

json_t *wfe_status_cow(const json_t *status, size_t ti, size_t ai)
{
	json_t *c = json_copy((json_t *)status);
	json_t *tasks = json_copy(json_object_get(status, "tasks"));
	json_t *task = json_copy(json_array_get(tasks, ti));
	json_t *actions = json_copy(json_object_get(task, "actions"));
	json_t *action = json_deep_copy(json_array_get(actions, ai));
	json_t *conds = json_object_get(status, "conditions");
	bool ok = c && tasks && task && actions && action &&
		  (!json_is_array(conds) ||
		   json_object_set_new(c, "conditions", json_copy(conds)) == 0) &&
		  json_array_set(actions, ai, action) == 0 &&
		  json_object_set(task, "actions", actions) == 0 &&
		  json_array_set(tasks, ti, task) == 0 && json_object_set(c, "tasks", tasks) == 0;
	/* the containers hold what they need */
	json_decref(action);
	json_decref(actions);
	json_decref(task);
	json_decref(tasks);
	if (!ok) {
		json_decref(c);
		return NULL;
	}
	return c;
}

/* ---- conditions, state ---- */

int wfe_condition(json_t *status, const char *type, const char *cstatus, const char *reason,
		  const char *message, int64_t now_ms)
{
	json_t *conds = json_object_get(status, "conditions");
	if (!json_is_array(conds)) {
		conds = json_array();
		if (!conds || json_object_set_new(status, "conditions", conds) < 0)
			return -ENOMEM;
	}
	json_t *c = NULL;
	size_t i;
	json_t *it;
	json_array_foreach (conds, i, it)
		if (strcmp(wfe_str(it, "type"), type) == 0) {
			c = it;
			break;
		}
	if (c && json_is_object(c) && strcmp(wfe_str(c, "status"), cstatus) == 0 &&
	    strcmp(wfe_str(c, "reason"), reason) == 0 &&
	    strcmp(wfe_str(c, "message"), message) == 0)
		return 0;
	json_t *n = json_object();
	if (!n)
		return -ENOMEM;
	int err = wfe_set_str(n, "type", type, 0) | wfe_set_str(n, "status", cstatus, 0) |
		  wfe_set_str(n, "reason", reason, 0) | wfe_set_str(n, "message", message, 1024) |
		  wfe_time_set(n, "time", now_ms, false);
	if (err) {
		json_decref(n);
		return -ENOMEM;
	}
	if (c)
		return json_array_set_new(conds, i, n) < 0 ? -ENOMEM : 0;
	return json_array_append_new(conds, n) < 0 ? -ENOMEM : 0;
}

enum wf_state wfe_state(const json_t *status, bool *legacy)
{
	enum wf_state st;
	if (legacy)
		*legacy = false;
	if (wf_state_parse(wfe_str(status, "state"), &st, legacy) < 0)
		return WF_STATE_NONE;
	return st;
}

int wfe_set_state(json_t *obj, enum wf_state st)
{
	return wfe_set_str(obj, "state", wf_state_name(st), 0);
}

int wfe_workflow_id(const json_t *wf, char out[WF_ID_MAX])
{
	const json_t *md = json_object_get(wf, "metadata");
	const char *name = wfe_str(md, "name"), *ns = wfe_str(md, "namespace");
	if (!*name)
		return -EINVAL;
	int n = snprintf(out, WF_ID_MAX, "%s/%s", *ns ? ns : "default", name);
	return n < 0 || n >= WF_ID_MAX ? -EINVAL : 0;
}

int wfe_current(const json_t *status, size_t *ret_task, size_t *ret_action)
{
	const json_t *tasks = json_object_get(status, "tasks");
	size_t ti, ai;
	const json_t *t, *a;
	json_array_foreach (tasks, ti, t) {
		json_array_foreach (json_object_get(t, "actions"), ai, a) {
			if (strcmp(wfe_str(a, "state"), "SUCCESS") != 0) {
				*ret_task = ti;
				*ret_action = ai;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* A setting of clk->settings (v), or def when there is none. */
#define SETTING(clk, field, def)                                                                \
	((clk) && (clk)->settings && (clk)->settings->field ? (int64_t)(clk)->settings->field : \
							      (def))

int64_t wfe_grace_s(const struct wf_clock *clk)
{
	return SETTING(clk, action_grace_s, WF_ACTION_GRACE_S);
}

int64_t wfe_handout_timeout(const json_t *status, const json_t *action, const struct wf_clock *clk)
{
	int64_t t = wfe_int(action, "timeout", 0);
	if (t <= 0)
		t = SETTING(clk, default_action_timeout_s, WF_DEFAULT_ACTION_TIMEOUT_S);
	int64_t stop = wfe_time_get(status, "globalExecutionStop");
	int64_t left = -1;
	if (stop)
		left = (stop - clk->now_ms + 999) / 1000;
	else if (wfe_int(status, "globalTimeout", 0) > 0)
		left = wfe_int(status, "globalTimeout", 0);
	if (left >= 0 && t > left)
		t = left;
	return t < 1 ? 1 : t;
}

int64_t wfe_backoff_ms(json_int_t attempt, const struct wf_clock *clk)
{
	int64_t base = SETTING(clk, retry_base_s, WF_RETRY_BASE_S);
	int64_t max = SETTING(clk, retry_max_s, WF_RETRY_MAX_S);
	int64_t s = base;
	for (json_int_t i = 1; i < attempt && s < max; i++)
		s *= 2;
	if (s > max)
		s = max;
	return s * 1000;
}

void wfe_event(struct wf_effects *fx, const char *type, const char *reason, const char *fmt, ...)
{
	if (!fx || fx->n_events >= WF_MAX_EFFECT_EVENTS)
		return;
	struct wf_event *e = &fx->events[fx->n_events++];
	e->type = type;
	e->reason = reason;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

#define WFE_CURRENT_FIELDS 6

/* The members of the currentState that names action of task, as
 * wfe_set_current() writes them: name and value. */
static void current_fields(const json_t *task, const json_t *action,
			   const char *f[WFE_CURRENT_FIELDS][2])
{
	const char *const names[WFE_CURRENT_FIELDS] = { "agentID", "taskID",     "actionID",
							"state",   "actionName", "taskName" };
	const char *const values[WFE_CURRENT_FIELDS] = {
		wfe_str(task, "agentID"), wfe_str(task, "id"),     wfe_str(action, "id"),
		wfe_str(action, "state"), wfe_str(action, "name"), wfe_str(task, "name"),
	};
	for (size_t i = 0; i < WFE_CURRENT_FIELDS; i++) {
		f[i][0] = names[i];
		f[i][1] = values[i];
	}
}

/* The currentState that names action of task; NULL without memory. */
static json_t *current_of(const json_t *task, const json_t *action)
{
	const char *f[WFE_CURRENT_FIELDS][2];
	json_t *cs = json_object();
	int err = !cs;
	current_fields(task, action, f);
	for (size_t i = 0; !err && i < WFE_CURRENT_FIELDS; i++)
		err = wfe_set_str(cs, f[i][0], f[i][1], 0);
	if (err) {
		json_decref(cs);
		return NULL;
	}
	return cs;
}

int wfe_is_current(const json_t *status, const json_t *task, const json_t *action)
{
	/* what current_of() would build, compared in place: a string in the
	 * tree is valid UTF-8 already, so wfe_set_str() keeps it as it is */
	const char *f[WFE_CURRENT_FIELDS][2];
	const json_t *old = json_object_get(status, "currentState");
	if (!json_is_object(old) || json_object_size(old) != WFE_CURRENT_FIELDS)
		return 0;
	current_fields(task, action, f);
	for (size_t i = 0; i < WFE_CURRENT_FIELDS; i++) {
		const json_t *v = json_object_get(old, f[i][0]);
		if (!json_is_string(v) || json_string_length(v) != strlen(f[i][1]) ||
		    strcmp(json_string_value(v), f[i][1]) != 0)
			return 0;
	}
	return 1;
}

int wfe_set_current(json_t *status, const json_t *task, const json_t *action)
{
	json_t *cs = current_of(task, action);
	if (!cs)
		return -ENOMEM;
	const json_t *old = json_object_get(status, "currentState");
	if (old && json_equal(old, cs)) {
		json_decref(cs);
		return 0;
	}
	return json_object_set_new(status, "currentState", cs) < 0 ? -ENOMEM : 0;
}

/* A failed attempt with retries left: back to PENDING, not before the
 * backoff. */
static int retry_later(json_t *status, json_t *a, enum wf_state rst, json_int_t attempts,
		       json_int_t retries, const struct wf_clock *clk, char *msg, size_t msglen)
{
	char when[WFE_DURATION_MAX], cmsg[512];
	int64_t backoff = wfe_backoff_ms(attempts, clk), now_ms = clk->now_ms;
	wfe_duration(backoff, when);
	snprintf(cmsg, sizeof(cmsg), "action \"%s\" %s on attempt %lld of %lld: retried in %s",
		 wfe_str(a, "name"), wf_state_name(rst), (long long)attempts,
		 (long long)retries + 1, when);
	int err = wfe_set_state(a, WF_STATE_PENDING);
	err |= wfe_time_set(a, "retryAfter", now_ms + backoff, true);
	err |= wfe_condition(status, "ActionRetry", "True",
			     rst == WF_STATE_FAILED ? "ActionFailed" : "ActionTimeout", cmsg,
			     now_ms);
	if (msg && msglen)
		snprintf(msg, msglen, "%s", cmsg);
	return err ? -ENOMEM : 0;
}

int wfe_finish(json_t *status, size_t ti, size_t ai, enum wf_state rst, int64_t start_ms,
	       int64_t stop_ms, const char *message, const struct wf_clock *clk, char *msg,
	       size_t msglen)
{
	json_t *tasks = json_object_get(status, "tasks");
	json_t *task = json_array_get(tasks, ti);
	json_t *actions = json_object_get(task, "actions");
	json_t *a = json_array_get(actions, ai);
	char dur[WFE_DURATION_MAX];
	int err = 0;
	if (!a)
		return -EINVAL;
	if (!start_ms || start_ms > stop_ms)
		start_ms = stop_ms;
	wfe_duration(stop_ms - start_ms, dur);
	err |= wfe_time_set(a, "executionStart", start_ms, false);
	err |= wfe_time_set(a, "executionStop", stop_ms, false);
	err |= wfe_set_str(a, "executionDuration", dur, 0);
	err |= wfe_set_str(a, "message", message, WF_MESSAGE_MAX);
	json_object_del(a, "deadline");
	json_object_del(a, "retryAfter");
	const char *name = wfe_str(a, "name");
	if (rst == WF_STATE_SUCCESS) {
		err |= wfe_set_state(a, WF_STATE_SUCCESS);
		if (ai + 1 == json_array_size(actions)) {
			if (ti + 1 == json_array_size(tasks))
				err |= wfe_set_state(status, WF_STATE_POST);
			else
				err |= wfe_set_str(
					status, "agentID",
					wfe_str(json_array_get(tasks, ti + 1), "agentID"), 0);
		}
		if (msg && msglen)
			snprintf(msg, msglen, "action \"%s\" SUCCESS", name);
	} else {
		json_int_t attempts = wfe_int(a, "attempts", 0), retries = wfe_int(a, "retries", 0);
		if (attempts >= 1 && attempts <= retries) {
			err |= retry_later(status, a, rst, attempts, retries, clk, msg, msglen);
		} else {
			err |= wfe_set_state(a, rst);
			err |= wfe_set_state(status, rst);
			if (msg && msglen)
				snprintf(msg, msglen, "action \"%s\" %s: the workflow is %s", name,
					 wf_state_name(rst), wf_state_name(rst));
		}
	}
	err |= wfe_set_current(status, task, a);
	/* A success with more to do: currentState names the next action,
	 * PENDING, the one GetAction hands out next; so that GetAction has
	 * nothing to write, and an action costs two status writes, not three. */
	size_t nti, nai;
	if (!err && rst == WF_STATE_SUCCESS &&
	    wfe_state(status, NULL) == WF_STATE_RUNNING && wfe_current(status, &nti, &nai) == 0) {
		json_t *nt = json_array_get(tasks, nti);
		err |= wfe_set_current(status, nt,
				       json_array_get(json_object_get(nt, "actions"), nai));
	}
	return err ? -ENOMEM : 0;
}
