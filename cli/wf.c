/* wf — what `ironbell` reads out of a Workflow, in either of its two
 * shapes, and the pure parts of `workflow retry` and `provision`.
 *
 * DESIGN: a Workflow's status comes in two shapes under the same
 * tinkerbell.org/v1alpha1: the current one (states PENDING..TIMEOUT,
 * status.currentState, status.templateRendering, tasks[].agentID,
 * actions[].state/executionStart/executionStop/executionDuration, and
 * ironbell's own retries/attempts/retryAfter/deadline per action) and the
 * one tinkerbell/tink <= v0.12 wrote (states STATE_*, status.currentAction,
 * status.templateRending, tasks[].worker, actions[].status/startedAt/
 * seconds). Everything here reads both, through struct cli_wf_action, so
 * that the table, describe and provision never look at the shape
 * themselves. No I/O: the commands (cli/cmd_workflow.c) fetch and print;
 * tests/unit/check_cli_wf.c drives these functions directly. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"

static const json_t *status_of(const json_t *wf)
{
	return json_object_get(wf, "status");
}

static const char *str_at(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s && *s ? s : NULL;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

bool cli_wf_legacy(const json_t *wf)
{
	const json_t *st = status_of(wf);
	const char *state = str_at(st, "state");
	if (state)
		return strncmp(state, "STATE_", 6) == 0;
	/* No state: the legacy fields alone say it. */
	return json_object_get(st, "currentAction") || json_object_get(st, "templateRending");
}

bool cli_wf_state_terminal(const char *state)
{
	static const char *const done[] = { "SUCCESS",       "FAILED",       "TIMEOUT",
					    "STATE_SUCCESS", "STATE_FAILED", "STATE_TIMEOUT" };
	for (size_t i = 0; state && i < ARRAY_SIZE(done); i++)
		if (strcmp(state, done[i]) == 0)
			return true;
	return false;
}

/* The legacy task holding the action named status.currentAction (the
 * first such: legacy actions are named by their name alone), or NULL. */
static const json_t *legacy_current_task(const json_t *wf)
{
	const json_t *st = status_of(wf);
	const char *cur = str_at(st, "currentAction");
	size_t i, j;
	json_t *task, *act;
	if (!cur)
		return NULL;
	json_array_foreach (json_object_get(st, "tasks"), i, task)
		json_array_foreach (json_object_get(task, "actions"), j, act) {
			const char *name = str_at(act, "name");
			if (name && strcmp(name, cur) == 0)
				return task;
		}
	return NULL;
}

static const char *current(const json_t *wf, const char *field)
{
	return str_at(json_object_get(status_of(wf), "currentState"), field);
}

char *cli_wf_col_task(const json_t *wf)
{
	if (cli_wf_legacy(wf))
		return dup_or_null(str_at(legacy_current_task(wf), "name"));
	return dup_or_null(current(wf, "taskName"));
}

char *cli_wf_col_action(const json_t *wf)
{
	if (cli_wf_legacy(wf))
		return dup_or_null(str_at(status_of(wf), "currentAction"));
	return dup_or_null(current(wf, "actionName"));
}

char *cli_wf_col_agent(const json_t *wf)
{
	if (cli_wf_legacy(wf))
		return dup_or_null(str_at(legacy_current_task(wf), "worker"));
	return dup_or_null(current(wf, "agentID"));
}

char *cli_wf_col_rendering(const json_t *wf)
{
	const char *s = str_at(status_of(wf), "templateRendering");
	return dup_or_null(s ? s : str_at(status_of(wf), "templateRending"));
}

/* ---- actions ---- */

static long long int_at(const json_t *o, const char *key, long long absent)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : absent;
}

size_t cli_wf_tasks(const json_t *wf)
{
	return json_array_size(json_object_get(status_of(wf), "tasks"));
}

size_t cli_wf_actions(const json_t *wf, size_t ti)
{
	const json_t *task = json_array_get(json_object_get(status_of(wf), "tasks"), ti);
	return json_array_size(json_object_get(task, "actions"));
}

int cli_wf_action_at(const json_t *wf, size_t ti, size_t ai, struct cli_wf_action *out)
{
	const json_t *task = json_array_get(json_object_get(status_of(wf), "tasks"), ti);
	const json_t *act = json_array_get(json_object_get(task, "actions"), ai);
	if (!json_is_object(act))
		return -ENOENT;
	*out = (struct cli_wf_action){
		.task = str_at(task, "name"),
		.task_id = str_at(task, "id"),
		.agent = str_at(task, "agentID") ?: str_at(task, "worker"),
		.id = str_at(act, "id"),
		.name = str_at(act, "name"),
		.image = str_at(act, "image"),
		.state = str_at(act, "state") ?: str_at(act, "status"),
		.start = str_at(act, "executionStart") ?: str_at(act, "startedAt"),
		.stop = str_at(act, "executionStop"),
		.duration = str_at(act, "executionDuration"),
		.message = str_at(act, "message"),
		.retry_after = str_at(act, "retryAfter"),
		.deadline = str_at(act, "deadline"),
		.timeout = int_at(act, "timeout", -1),
		.seconds = int_at(act, "seconds", -1),
		.attempts = int_at(act, "attempts", -1),
		.retries = int_at(act, "retries", -1),
	};
	return 0;
}

void cli_go_duration(int64_t s, char out[static 32])
{
	/* Go's time.Duration.String() for whole seconds: "0s", "45s",
	 * "2m0s", "1h2m3s". */
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(out, 32, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(out, 32, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
	else
		snprintf(out, 32, "%lldh%lldm%llds", (long long)(s / 3600),
			 (long long)(s % 3600 / 60), (long long)(s % 60));
}

void cli_wf_action_duration(const struct cli_wf_action *a, int64_t now, char out[static 48])
{
	int64_t t0, t1;
	char d[32];
	bool have0 = a->start && cli_parse_time(a->start, &t0) == 0;
	out[0] = '\0';
	if (a->duration) {
		snprintf(out, 48, "%s", a->duration);
	} else if (have0 && a->stop && cli_parse_time(a->stop, &t1) == 0) {
		cli_go_duration(t1 - t0, d);
		snprintf(out, 48, "%s", d);
	} else if (a->seconds > 0 && !(a->state && strstr(a->state, "RUNNING"))) {
		cli_go_duration(a->seconds, d);
		snprintf(out, 48, "%s", d);
	} else if (have0 && a->state && strstr(a->state, "RUNNING")) {
		cli_go_duration(now - t0, d);
		snprintf(out, 48, "%s so far", d);
	}
}

int cli_wf_find_failed(const json_t *wf, struct cli_wf_action *out)
{
	size_t nt = cli_wf_tasks(wf);
	for (size_t ti = 0; ti < nt; ti++) {
		size_t na = cli_wf_actions(wf, ti);
		for (size_t ai = 0; ai < na; ai++) {
			struct cli_wf_action a;
			if (cli_wf_action_at(wf, ti, ai, &a) < 0 || !a.state)
				continue;
			if (strstr(a.state, "FAILED") || strstr(a.state, "TIMEOUT")) {
				*out = a;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* ---- workflow retry ---- */

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

int cli_wf_retry_report(const json_t *before, const json_t *after, struct buf *out)
{
	size_t nt = cli_wf_tasks(after), n = 0;
	for (size_t ti = 0; ti < nt; ti++) {
		size_t na = cli_wf_actions(after, ti);
		for (size_t ai = 0; ai < na; ai++) {
			struct cli_wf_action a, b;
			if (cli_wf_action_at(after, ti, ai, &a) < 0)
				continue;
			if (cli_wf_action_at(before, ti, ai, &b) < 0)
				b = (struct cli_wf_action){ 0 };
			if (same(a.state, b.state) && a.attempts == b.attempts &&
			    same(a.start, b.start) && same(a.message, b.message))
				continue;
			int r = buf_printf(out, "  task %s, action %s: %s -> %s", a.task ?: "?",
					   a.name ?: "?", b.state ?: "<none>", a.state ?: "<none>");
			if (r == 0 && b.attempts > 0 && a.attempts <= 0)
				r = buf_printf(out, " (attempts %lld cleared)", b.attempts);
			if (r == 0)
				r = buf_putc(out, '\n');
			if (r < 0)
				return r;
			n++;
		}
	}
	return (int)(n > INT32_MAX ? INT32_MAX : n);
}

/* ---- provision ---- */

bool cli_wf_holds_hardware(const json_t *wf, const char *hw_name)
{
	const json_t *spec = json_object_get(wf, "spec");
	const char *ref = str_at(spec, "hardwareRef");
	if (!ref || strcmp(ref, hw_name) != 0)
		return false;
	if (json_is_true(json_object_get(spec, "disabled")))
		return false;
	return !cli_wf_state_terminal(str_at(status_of(wf), "state"));
}

int cli_wf_pick_hardware(const json_t *hardware, const json_t *workflows, size_t *ret_busy)
{
	size_t i, j, busy = 0;
	const json_t *hw, *wf;
	const char *best_name = NULL;
	int best = -ENOENT;
	json_array_foreach (hardware, i, hw) {
		const char *name = cli_meta_string(hw, "name");
		bool held = false;
		if (!name)
			continue;
		json_array_foreach (workflows, j, wf)
			if (cli_wf_holds_hardware(wf, name)) {
				held = true;
				break;
			}
		if (held) {
			busy++;
			continue;
		}
		if (i <= INT32_MAX && (!best_name || strcmp(name, best_name) < 0)) {
			best_name = name;
			best = (int)i;
		}
	}
	*ret_busy = busy;
	return best;
}

/* The MAC of the Hardware's first interface that has one, or NULL. */
static const char *first_mac(const json_t *hw)
{
	size_t i;
	json_t *ifc;
	json_array_foreach (json_object_get(json_object_get(hw, "spec"), "interfaces"), i, ifc) {
		const char *mac = str_at(json_object_get(ifc, "dhcp"), "mac");
		if (mac)
			return mac;
	}
	return NULL;
}

int cli_wf_provision_object(const struct cli_provision *p, const json_t *hw, json_t **ret,
			    char *msg, size_t msglen)
{
	const char *hw_name = cli_meta_string(hw, "name");
	const char *mac = first_mac(hw);
	json_t *wf = NULL, *map = NULL;
	char name[CLI_WF_NAME_MAX + 1];
	int r = -EINVAL;

	if (!hw_name) {
		snprintf(msg, msglen, "the Hardware has no name");
		goto out;
	}
	if (p->name) {
		if (strlen(p->name) > CLI_WF_NAME_MAX) {
			snprintf(msg, msglen, "--name is longer than %d bytes", CLI_WF_NAME_MAX);
			goto out;
		}
		snprintf(name, sizeof(name), "%s", p->name);
	} else {
		size_t n = (size_t)snprintf(name, sizeof(name), "%s-%s", p->template_ref, hw_name);
		if (n >= sizeof(name)) {
			snprintf(msg, msglen,
				 "the name <template>-<hardware> would be %zu bytes, more than %d: "
				 "give --name",
				 n, CLI_WF_NAME_MAX);
			goto out;
		}
	}
	r = -ENOMEM;
	if (!(map = json_object()))
		goto out;
	if (mac && json_object_set_new(map, "device_1", json_string(mac)) < 0)
		goto out;
	for (size_t i = 0; i < p->nmaps; i++) {
		const char *eq = strchr(p->maps[i], '=');
		if (!eq || eq == p->maps[i]) {
			snprintf(msg, msglen, "--map \"%s\": not KEY=VALUE", p->maps[i]);
			r = -EINVAL;
			goto out;
		}
		json_t *v = json_string(eq + 1);
		if (!v) {
			snprintf(msg, msglen, "--map \"%s\": the value is not UTF-8", p->maps[i]);
			r = -EINVAL;
			goto out;
		}
		if (json_object_setn_new(map, p->maps[i], (size_t)(eq - p->maps[i]), v) < 0) {
			snprintf(msg, msglen, "--map \"%s\": the key is not UTF-8", p->maps[i]);
			r = -EINVAL;
			goto out;
		}
	}
	if (!json_object_get(map, "device_1")) {
		snprintf(msg, msglen,
			 "Hardware \"%s\" has no interface with a MAC address for device_1: "
			 "give --map device_1=VALUE",
			 hw_name);
		r = -EINVAL;
		goto out;
	}
	wf = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:O}}", "apiVersion",
		       "tinkerbell.org/v1alpha1", "kind", "Workflow", "metadata", "name", name,
		       "namespace", p->ns, "spec", "templateRef", p->template_ref, "hardwareRef",
		       hw_name, "hardwareMap", map);
	if (!wf)
		goto out;
	if (p->netboot) {
		json_t *bo =
			json_pack("{s:b, s:s}", "toggleAllowNetboot", 1, "bootMode", "netboot");
		if (!bo || json_object_set_new(json_object_get(wf, "spec"), "bootOptions", bo) < 0)
			goto out;
	}
	*ret = wf;
	wf = NULL;
	r = 0;
out:
	if (r == -ENOMEM)
		snprintf(msg, msglen, "out of memory");
	json_decref(wf);
	json_decref(map);
	return r;
}
