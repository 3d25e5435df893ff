/* engine_fixture — what tests/unit/check_engine.c and check_engine_step.c
 * share: a fixed clock, Workflows, Templates, Hardware and bmc Jobs to
 * feed the engine, GetAction and report shorthands, and the check that
 * every status produced is valid for the store's Workflow schema. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grpc.h"
#include "store/store.h"
#include "tests/unit/unit.h"
#include "workflow/engine.h"

/* 2026-11-25T22:00:00Z */
#define T0 1795644000000LL
#define S(x) ((x)*1000LL)

/* Deterministic "randomness": a counter. */
static inline void counter_random(void *buf, size_t n, void *userdata)
{
	unsigned *c = userdata;
	unsigned char *b = buf;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(*c + i);
	(*c)++;
}

static unsigned rnd_counter;
static inline struct wf_clock clk_at(int64_t ms)
{
	return (struct wf_clock){ .now_ms = ms,
				  .random = counter_random,
				  .userdata = &rnd_counter };
}

/* The status is valid for the store's Workflow schema. */
static inline void valid(const json_t *wf)
{
	char err[1024] = "";
	const json_t *st = json_object_get(wf, "status");
	ck_assert_ptr_nonnull(st);
	int r = store_validate_status(STORE_KIND_WORKFLOW, st, err, sizeof(err));
	if (r != 0) {
		char *d = json_dumps(st, JSON_INDENT(1));
		ck_abort_msg("invalid status: %s\n%s", err, d);
	}
}

static inline json_t *jload(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	ck_assert_msg(j != NULL, "%s at %d:%d", e.text, e.line, e.column);
	return j;
}

/* A path "a.b.0.c" in j. */
static inline json_t *at(const json_t *j, const char *path)
{
	json_t *cur = (json_t *)j;
	const char *p = path;
	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (json_is_array(cur))
			cur = json_array_get(cur, strtoul(key, NULL, 10));
		else
			cur = json_object_get(cur, key);
		p += n + (dot != NULL);
	}
	return cur;
}

static inline const char *str_at(const json_t *j, const char *path)
{
	const char *s = json_string_value(at(j, path));
	return s ? s : "(absent)";
}

/* A rendered workflow in state PENDING: task "os" of agent aa:..:01 with
 * three actions (the second with `retries`), and, when two_tasks, a task
 * "post" of agent bb:..:02 with one action. */
static inline json_t *mkwf(const char *name, const char *created, int retries, bool two_tasks)
{
	char text[4096];
	snprintf(
		text, sizeof(text),
		"{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Workflow\","
		"\"metadata\":{\"name\":\"%s\",\"namespace\":\"tink\",\"creationTimestamp\":\"%s\"},"
		"\"spec\":{\"templateRef\":\"t\",\"hardwareRef\":\"hw\"},"
		"\"status\":{\"state\":\"PENDING\",\"agentID\":\"aa:00:00:00:00:01\","
		"\"templateRendering\":\"successful\",\"globalTimeout\":600,"
		"\"tasks\":[{\"id\":\"T1\",\"name\":\"os\",\"agentID\":\"aa:00:00:00:00:01\","
		"\"volumes\":[\"/dev:/dev\"],\"environment\":{\"A\":\"task\",\"Z\":\"z\"},"
		"\"actions\":["
		"{\"id\":\"A1\",\"name\":\"disk\",\"image\":\"img1\",\"timeout\":60,"
		"\"command\":[\"x\"],\"environment\":{\"A\":\"action\",\"B\":\"b\"},"
		"\"volumes\":[\"/a:/a\"],\"pid\":\"host\",\"state\":\"PENDING\"},"
		"{\"id\":\"A2\",\"name\":\"cexec\",\"image\":\"img2\",\"timeout\":0,"
		"\"namespaces\":{\"network\":\"host\",\"pid\":\"host\"},\"state\":\"PENDING\"},"
		"{\"id\":\"A3\",\"name\":\"kexec\",\"image\":\"img3\",\"timeout\":900,"
		"\"state\":\"PENDING\"}]}]}}",
		name, created);
	json_t *wf = jload(text);
	if (retries)
		json_object_set_new(at(wf, "status.tasks.0.actions.1"), "retries",
				    json_integer(retries));
	if (two_tasks)
		json_array_append_new(
			at(wf, "status.tasks"),
			jload("{\"id\":\"T2\",\"name\":\"post\",\"agentID\":\"bb:00:00:00:00:02\","
			      "\"actions\":[{\"id\":\"B1\",\"name\":\"notify\",\"image\":\"img4\","
			      "\"timeout\":30,\"state\":\"PENDING\"}]}"));
	valid(wf);
	return wf;
}

#define AG1 "aa:00:00:00:00:01"
#define AG2 "bb:00:00:00:00:02"

static inline int get(json_t *wf, const char *agent, int64_t now, struct wf_handout *h,
		      bool *changed)
{
	char msg[256];
	struct wf_clock c = clk_at(now);
	int r = wf_engine_get_action(wf, agent, &c, h, changed, msg, sizeof(msg));
	valid(wf);
	return r;
}

static inline int report(json_t *wf, const char *agent, const char *task, const char *action,
			 int state, int64_t now, bool *changed)
{
	char msg[256];
	struct wf_clock c = clk_at(now);
	struct wf_report r = {
		.workflow_id = "tink/wf1",
		.agent_id = agent,
		.task_id = task,
		.action_id = action,
		.action_name = "",
		.state = state,
		.start_ms = state == 2 ? now : 0,
		.stop_ms = state == 2 ? 0 : now,
		.duration = "",
		.message = state == 3 ? "exit status 1" : "",
	};
	bool ch = false;
	int code = wf_engine_report(wf, &r, &c, changed ? changed : &ch, msg, sizeof(msg));
	valid(wf);
	return code;
}

/* ---- for the controller's step ---- */

#define MAC "08:00:27:9e:f5:3a"

/* The playground's template as a Template object. */
static inline json_t *mktemplate(const char *data)
{
	json_t *t = jload("{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Template\","
			  "\"metadata\":{\"name\":\"ubuntu\",\"namespace\":\"tink\"},\"spec\":{}}");
	if (data) {
		json_object_set_new(at(t, "spec"), "data", json_string(data));
	} else {
		size_t n;
		char *src = unit_fixture("template-ubuntu.tmpl", 256 * 1024, &n);
		json_object_set_new(at(t, "spec"), "data", json_string(src));
		free(src);
	}
	return t;
}

/* The fixture's Hardware, with a BMC and (when uefi) UEFI. */
static inline json_t *mkhw(bool uefi)
{
	size_t n;
	char *text = unit_fixture("template-ubuntu.hw.json", 64 * 1024, &n);
	json_t *hw = jload(text);
	free(text);
	json_object_set_new(at(hw, "spec"), "bmcRef",
			    jload("{\"apiGroup\":\"bmc.tinkerbell.org\",\"kind\":\"Machine\","
				  "\"name\":\"bmc1\"}"));
	json_object_set_new(at(hw, "spec.interfaces.0.dhcp"), "uefi", json_boolean(uefi));
	return hw;
}

/* A new Workflow "wf1" for machine1 with bootOptions (JSON, may be NULL). */
static inline json_t *mknew(const char *boot_options)
{
	json_t *wf = jload("{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Workflow\","
			   "\"metadata\":{\"name\":\"wf1\",\"namespace\":\"tink\","
			   "\"creationTimestamp\":\"2026-11-25T21:00:00Z\"},"
			   "\"spec\":{\"templateRef\":\"ubuntu\",\"hardwareRef\":\"machine1\","
			   "\"hardwareMap\":{\"device_1\":\"" MAC "\"}}}");
	if (boot_options)
		json_object_set_new(at(wf, "spec"), "bootOptions", jload(boot_options));
	return wf;
}

struct world {
	json_t *tmpl, *hw;
	const json_t *jobs[2];
	size_t n_jobs;
};

static inline int step(json_t *wf, struct world *w, int64_t now, struct wf_effects *fx)
{
	struct wf_inputs in = {
		.template_obj = w->tmpl, .hardware = w->hw, .jobs = w->jobs, .n_jobs = w->n_jobs
	};
	struct wf_clock c = clk_at(now);
	int r = wf_engine_step(wf, &in, &c, fx);
	if (json_object_get(wf, "status"))
		valid(wf);
	return r;
}

/* A bmc Job named name with condition type (NULL: none yet). */
static inline json_t *mkjob(const char *name, const char *type, const char *message)
{
	json_t *j = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:{s:s},s:[]},s:{s:[]}}", "apiVersion",
			      "bmc.tinkerbell.org/v1alpha1", "kind", "Job", "metadata", "name",
			      name, "namespace", "tink", "uid", "uid-1", "spec", "machineRef",
			      "name", "bmc1", "tasks", "status", "conditions");
	ck_assert_ptr_nonnull(j);
	if (type)
		json_array_append_new(at(j, "status.conditions"),
				      json_pack("{s:s,s:s,s:s}", "type", type, "status", "True",
						"message", message));
	return j;
}

/* Hands out and succeeds every action of the workflow, from now. */
static inline void run_all(json_t *wf, int64_t now)
{
	struct wf_handout h;
	bool ch;
	for (int i = 0; i < 50; i++) {
		int code = get(wf, MAC, now, &h, &ch);
		if (code != GRPC_OK)
			return;
		char t[64], a[64];
		snprintf(t, sizeof(t), "%s", h.task_id);
		snprintf(a, sizeof(a), "%s", h.action_id);
		wf_handout_clear(&h);
		struct wf_clock c = clk_at(now);
		char msg[256];
		struct wf_report r = { .workflow_id = "tink/wf1",
				       .agent_id = MAC,
				       .task_id = t,
				       .action_id = a,
				       .state = 2,
				       .start_ms = now };
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		r.state = 5;
		r.stop_ms = now + 500;
		ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
		valid(wf);
	}
	ck_abort_msg("more than 50 actions");
}

/* The message of the condition of this type. */
static inline const char *cond_msg(const json_t *wf, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach (at(wf, "status.conditions"), i, c)
		if (strcmp(str_at(c, "type"), type) == 0)
			return str_at(c, "message");
	return "(no such condition)";
}

static inline bool is_ulid(const char *s)
{
	if (strlen(s) != 26)
		return false;
	for (; *s; s++)
		if (!strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", *s))
			return false;
	return true;
}
