/* check_workflow_ctl — the workflow controller thread (workflow/controller.c,
 * controller-step.c) on a store of its own: Templates, Hardware and
 * Workflows written with store_write() as `ironbell apply` would, the
 * worker API played by calling the engine's own transitions
 * (wf_engine_get_action(), wf_engine_report()) and writing the status as
 * the gRPC thread does, and the bmc controller played by writing a Job's
 * status by hand. Every wait is a bounded polling loop on the store;
 * nothing is timed. The same runs over objects that Kubernetes mode
 * mirrored (source kube), which only the daemon's own writes may change. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/common.h"
#include "workflow/engine.h"
#include "workflow/workflow.h"
#include "tests/unit/unit.h"

#define FIXTURE_NAME "check_workflow_ctl"
#include "tests/unit/store_fixture.h"

#define WAIT_TURNS 3000 /* x 10 ms */
#define MAC1 "02:00:00:00:00:01"

static struct wf_server *srv;
static struct wf_settings ctl_set = { .resync_s = 3600 }; /* the controller's */
static const struct wf_settings *agent_set; /* the worker API's, played; NULL: the engine's */

static const char *jstr(const json_t *obj, const char *path)
{
	char key[64];
	const char *p = path;
	for (int depth = 0; obj && depth < 16; depth++) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		ck_assert_uint_lt(n, sizeof(key));
		memcpy(key, p, n);
		key[n] = 0;
		obj = json_object_get(obj, key);
		if (!dot)
			return json_string_value(obj);
		p = dot + 1;
	}
	return NULL;
}

static void start(void)
{
	char err[256] = "";
	ck_assert_msg(wf_server_new(st, &ctl_set, &srv, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(wf_server_start(srv, err, sizeof(err)) == 0, "%s", err);
}

static void stop(void)
{
	wf_server_free(srv);
	srv = NULL;
}

/* The source the tests' objects are created with (NULL: local, as the
 * admin API). */
static const char *create_source;

static void setup_ctl(void)
{
	create_source = NULL;
	setup();
	start();
}

static void teardown_ctl(void)
{
	stop();
	teardown();
}

/* ---- objects ---- */

/* Creates the object written in YAML (kind from its apiVersion/kind). */
static void create(const char *yaml)
{
	json_t *obj = NULL;
	struct yj_error yerr;
	enum store_kind k;
	ck_assert_msg(yj_load_one(yaml, strlen(yaml), &obj, &yerr) == 0, "%s", yerr.message);
	ck_assert_int_eq(store_kind_from_object(jstr(obj, "apiVersion"), jstr(obj, "kind"), &k), 0);
	struct store_op op = { .type = STORE_OP_CREATE,
			       .kind = k,
			       .body = obj,
			       .source = create_source,
			       .no_object = true };
	int e = store_write1(st, &op);
	ck_assert_msg(e == 0, "create: %s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(obj);
}

static json_t *get(enum store_kind k, const char *name)
{
	json_t *o = NULL;
	if (store_get(rd, k, "default", name, &o) < 0)
		return NULL;
	return o;
}

static void template(const char *name, const char *data)
{
	json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "apiVersion",
				"tinkerbell.org/v1alpha1", "kind", "Template", "metadata", "name",
				name, "namespace", "default", "spec", "data", data);
	struct store_op op = { .type = STORE_OP_CREATE,
			       .kind = STORE_KIND_TEMPLATE,
			       .body = obj,
			       .source = create_source,
			       .no_object = true };
	ck_assert_msg(store_write1(st, &op) == 0, "%s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(obj);
}

#define TEMPLATE_OK                                                     \
	"version: \"0.1\"\n"                                            \
	"name: t\n"                                                     \
	"global_timeout: 1800\n"                                        \
	"tasks:\n"                                                      \
	"  - name: os\n"                                                \
	"    worker: \"{{.device_1}}\"\n"                               \
	"    actions:\n"                                                \
	"      - name: stream\n"                                        \
	"        image: quay.io/tinkerbell/actions/image2disk:latest\n" \
	"        timeout: 600\n"                                        \
	"      - name: kexec\n"                                         \
	"        image: quay.io/tinkerbell/actions/kexec:latest\n"      \
	"        timeout: 90\n"

static void hardware(const char *name, bool bmc)
{
	char y[1024];
	snprintf(y, sizeof(y),
		 "apiVersion: tinkerbell.org/v1alpha1\n"
		 "kind: Hardware\n"
		 "metadata: {name: %s, namespace: default}\n"
		 "spec:\n"
		 "%s"
		 "  interfaces:\n"
		 "    - dhcp: {mac: \"" MAC1 "\", arch: x86_64, uefi: true}\n"
		 "      netboot: {allowPXE: false}\n"
		 "    - dhcp: {mac: \"02:00:00:00:00:02\"}\n",
		 name,
		 bmc ? "  bmcRef: {apiGroup: bmc.tinkerbell.org, kind: Machine, name: bmc1}\n" :
		       "");
	create(y);
}

static void workflow(const char *name, const char *tmpl, const char *boot)
{
	char y[1024];
	snprintf(y, sizeof(y),
		 "apiVersion: tinkerbell.org/v1alpha1\n"
		 "kind: Workflow\n"
		 "metadata: {name: %s, namespace: default}\n"
		 "spec:\n"
		 "  templateRef: %s\n"
		 "  hardwareRef: hw1\n"
		 "  hardwareMap: {device_1: \"" MAC1 "\"}\n"
		 "%s",
		 name, tmpl, boot ? boot : "");
	create(y);
}

/* ---- waits ---- */

/* Waits until Workflow name's status.state is state; returns it (the
 * caller frees). */
static json_t *wait_state(const char *name, const char *state)
{
	json_t *wf = NULL;
	for (int i = 0; i < WAIT_TURNS; i++) {
		json_decref(wf);
		wf = get(STORE_KIND_WORKFLOW, name);
		const char *s = wf ? jstr(wf, "status.state") : NULL;
		if (s && strcmp(s, state) == 0)
			return wf;
		usleep(10000);
	}
	ck_abort_msg("workflow %s never reached %s (state \"%s\")", name, state,
		     wf ? jstr(wf, "status.state") ?: "" : "(absent)");
	return NULL;
}

/* The allowPXE of every interface of Hardware name: 1 all true, 0 all
 * false, -1 mixed or absent. */
static int pxe(const char *name)
{
	json_t *hw = get(STORE_KIND_HARDWARE, name), *ifc;
	size_t i;
	int on = 0, off = 0;
	json_array_foreach (json_object_get(json_object_get(hw, "spec"), "interfaces"), i, ifc) {
		json_t *v = json_object_get(json_object_get(ifc, "netboot"), "allowPXE");
		on += json_is_true(v);
		off += json_is_false(v);
	}
	json_decref(hw);
	return on && !off ? 1 : off && !on ? 0 : -1;
}

/* Hardware name's resourceVersion, as a number. */
static uint64_t hw_rv(const char *name)
{
	json_t *hw = get(STORE_KIND_HARDWARE, name);
	uint64_t rv = 0;
	ck_assert_ptr_nonnull(hw);
	ck_assert_int_eq(num_parse_u64_str(jstr(hw, "metadata.resourceVersion"), UINT64_MAX, &rv),
			 0);
	json_decref(hw);
	return rv;
}

static void wait_pxe(const char *name, int want)
{
	int got = -2;
	for (int i = 0; i < WAIT_TURNS && (got = pxe(name)) != want; i++)
		usleep(10000);
	ck_assert_int_eq(got, want);
}

static json_t *wait_object(enum store_kind k, const char *name)
{
	json_t *o = NULL;
	for (int i = 0; i < WAIT_TURNS && !(o = get(k, name)); i++)
		usleep(10000);
	ck_assert_msg(o, "%s %s never appeared", store_kind_info(k)->singular, name);
	return o;
}

/* Whether an event of Workflow name has reason and a message holding
 * what, now. */
static bool seen_event(const char *name, const char *reason, const char *what)
{
	json_t *evs = NULL, *ev;
	size_t i;
	bool found = false;
	store_sync(st);
	ck_assert_int_eq(store_events(rd, 0, STORE_KIND_WORKFLOW, "default", name, 100, &evs), 0);
	json_array_foreach (evs, i, ev) {
		const char *r = jstr(ev, "reason"), *m = jstr(ev, "message");
		if (r && m && strcmp(r, reason) == 0 && strstr(m, what))
			found = true;
	}
	json_decref(evs);
	return found;
}

/* Whether event reason of Workflow name, with what in its message,
 * comes within WAIT_TURNS: the controller queues an event after the
 * status write a test has seen, so it may not be there yet. */
static bool has_event(const char *name, const char *reason, const char *what)
{
	for (int i = 0; i < WAIT_TURNS; i++) {
		if (seen_event(name, reason, what))
			return true;
		usleep(10000);
	}
	return false;
}

/* Whether the metrics hold a line starting with line, now. */
static bool seen_metric(const char *line)
{
	struct buf b = BUF_INIT(1 << 20);
	ck_assert_int_eq(metrics_render(&b), 0);
	bool found = false;
	for (const char *p = b.data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, strlen(line)) == 0)
			found = true;
	buf_free(&b);
	return found;
}

/* Whether the metrics hold that line within WAIT_TURNS: the controller
 * counts a transition after the status write a test has seen. */
static bool has_metric(const char *line)
{
	for (int i = 0; i < WAIT_TURNS; i++) {
		if (seen_metric(line))
			return true;
		usleep(10000);
	}
	return false;
}

/* ---- the worker API, played ---- */

static void rnd(void *buf, size_t n, void *ud)
{
	(void)ud;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = (uint8_t)(i * 37 + 11);
}

/* Writes wf's status as the gRPC thread does: its resourceVersion as
 * precondition. True when written, false on a conflict. */
static bool write_status(json_t *wf)
{
	struct store_op op = { .type = STORE_OP_STATUS,
			       .kind = STORE_KIND_WORKFLOW,
			       .source = STORE_SOURCE_DAEMON,
			       .body = wf,
			       .resource_version = jstr(wf, "metadata.resourceVersion"),
			       .no_object = true };
	int e = store_write1(st, &op);
	ck_assert_msg(e == 0 || e == -ESTALE, "status: %s", store_op_message(&op));
	store_op_clear(&op);
	return e == 0;
}

/* The agent MAC1 asks for an action and reports it with state (2
 * RUNNING, 5 SUCCESS, ...), as tink-agent does; the status written after
 * each, read again on a conflict with the controller. */
static void agent_step(const char *name, int state)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		json_t *wf = get(STORE_KIND_WORKFLOW, name);
		struct wf_clock clk = { .now_ms = (int64_t)(now_real_ns() / 1000000u),
					.random = rnd,
					.settings = agent_set };
		struct wf_handout h = { 0 };
		bool changed = false;
		char msg[256] = "";
		ck_assert_ptr_nonnull(wf);
		int code = wf_engine_get_action(wf, MAC1, &clk, &h, &changed, msg, sizeof(msg));
		ck_assert_msg(code == 0, "GetAction: %d %s", code, msg);
		char wid[WF_ID_MAX], tid[64], aid[64], an[64];
		snprintf(wid, sizeof(wid), "%s", h.workflow_id);
		snprintf(tid, sizeof(tid), "%s", h.task_id);
		snprintf(aid, sizeof(aid), "%s", h.action_id);
		snprintf(an, sizeof(an), "%s", h.name);
		wf_handout_clear(&h);
		struct wf_report r = { .workflow_id = wid,
				       .agent_id = MAC1,
				       .task_id = tid,
				       .action_id = aid,
				       .action_name = an,
				       .state = state,
				       .start_ms = clk.now_ms,
				       .stop_ms = state == 2 ? 0 : clk.now_ms,
				       .duration = "",
				       .message = "" };
		bool ch2 = false;
		if (state != 2) {
			/* RUNNING first, as the agent reports it */
			struct wf_report run = r;
			run.state = 2;
			run.stop_ms = 0;
			code = wf_engine_report(wf, &run, &clk, &ch2, msg, sizeof(msg));
			ck_assert_msg(code == 0, "report RUNNING: %d %s", code, msg);
		}
		code = wf_engine_report(wf, &r, &clk, &ch2, msg, sizeof(msg));
		ck_assert_msg(code == 0, "report %d: %d %s", state, code, msg);
		bool ok = write_status(wf);
		json_decref(wf);
		if (ok)
			return;
	}
	ck_abort_msg("the status of %s was never written", name);
}

/* ---- tests ---- */

START_TEST(test_renders_to_pending)
{
	template("t1", TEMPLATE_OK);
	hardware("hw1", false);
	uint64_t rv = hw_rv("hw1");
	workflow("wf1", "t1", NULL);
	json_t *wf = wait_state("wf1", "PENDING");
	json_t *tasks = json_object_get(json_object_get(wf, "status"), "tasks");
	ck_assert_uint_eq(json_array_size(tasks), 1);
	json_t *t = json_array_get(tasks, 0);
	ck_assert_str_eq(jstr(t, "agentID"), MAC1);
	ck_assert_uint_eq(json_array_size(json_object_get(t, "actions")), 2);
	ck_assert_str_eq(jstr(json_array_get(json_object_get(t, "actions"), 0), "state"),
			 "PENDING");
	ck_assert_str_eq(jstr(wf, "status.templateRendering"), "successful");
	json_decref(wf);
	/* nothing was asked of the Hardware */
	ck_assert_uint_eq(hw_rv("hw1"), rv);
	ck_assert(has_metric("ironbell_workflow_transitions_total{state=\"PENDING\"} 1"));
	ck_assert(has_metric("ironbell_workflow_followed 1"));
	ck_assert(has_metric("ironbell_workflow_render_failures_total 0"));
}
END_TEST

START_TEST(test_bad_template_fails_with_position)
{
	/* line 6, the unknown function's name at column 17 */
	template("bad", "version: \"0.1\"\n"
			"name: bad\n"
			"global_timeout: 60\n"
			"tasks:\n"
			"  - name: os\n"
			"    worker: \"{{ nosuchfn .device_1 }}\"\n"
			"    actions:\n"
			"      - name: a\n"
			"        image: alpine\n");
	hardware("hw1", false);
	uint64_t rv = hw_rv("hw1");
	workflow("wf1", "bad", NULL);
	json_t *wf = wait_state("wf1", "FAILED");
	ck_assert_str_eq(jstr(wf, "status.templateRendering"), "failed");
	json_t *c, *conds = json_object_get(json_object_get(wf, "status"), "conditions");
	size_t i;
	const char *msg = NULL;
	json_array_foreach (conds, i, c)
		if (strcmp(jstr(c, "type") ?: "", "TemplateRenderedSuccess") == 0) {
			ck_assert_str_eq(jstr(c, "status"), "False");
			msg = jstr(c, "message");
		}
	ck_assert_ptr_nonnull(msg);
	ck_assert_msg(strstr(msg, "nosuchfn"), "%s", msg);
	ck_assert_msg(strstr(msg, "6:17") || strstr(msg, "line 6, column 17"),
		      "no line and column in: %s", msg);
	ck_assert(!json_object_get(json_object_get(wf, "status"), "tasks") ||
		  json_array_size(json_object_get(json_object_get(wf, "status"), "tasks")) == 0);
	json_decref(wf);
	bool rendered_failed = false;
	for (int turn = 0; turn < WAIT_TURNS && !rendered_failed; turn++) {
		rendered_failed = seen_event("wf1", "RenderFailed", "nosuchfn") ||
				  seen_event("wf1", "TemplateRenderFailed", "nosuchfn");
		if (!rendered_failed)
			usleep(10000);
	}
	ck_assert(rendered_failed);
	/* nothing else changed */
	ck_assert_uint_eq(hw_rv("hw1"), rv);
	ck_assert(has_metric("ironbell_workflow_render_failures_total 1"));
	ck_assert(has_metric("ironbell_workflow_transitions_total{state=\"FAILED\"} 1"));
}
END_TEST

START_TEST(test_toggle_allow_netboot)
{
	template("t1", TEMPLATE_OK);
	hardware("hw1", false);
	workflow("wf1", "t1", "  bootOptions: {toggleAllowNetboot: true}\n");
	json_decref(wait_state("wf1", "PENDING"));
	ck_assert_int_eq(pxe("hw1"), 1);
	/* the agent runs both actions to SUCCESS: POST, then the cleanup */
	agent_step("wf1", 5);
	agent_step("wf1", 5);
	json_t *wf = wait_state("wf1", "SUCCESS");
	json_decref(wf);
	wait_pxe("hw1", 0);
}
END_TEST

static int count_name(const char *ns, const char *name, void *ud)
{
	(void)ns;
	(void)name;
	(*(int *)ud)++;
	return 0;
}

static int daemon_changes(const struct store_change *c, void *ud)
{
	if (strcmp(c->source, STORE_SOURCE_DAEMON) == 0)
		(*(int *)ud)++;
	return 0;
}

/* Objects that Kubernetes mode mirrored: the controller's writes (the
 * allowPXE toggles, the status) go through, as the daemon's, and the
 * objects stay the cluster's. */
START_TEST(test_kube_objects)
{
	create_source = STORE_SOURCE_KUBE;
	template("t1", TEMPLATE_OK);
	hardware("hw1", false);
	workflow("wf1", "t1", "  bootOptions: {toggleAllowNetboot: true}\n");
	json_decref(wait_state("wf1", "PENDING"));
	ck_assert_int_eq(pxe("hw1"), 1);
	agent_step("wf1", 5);
	agent_step("wf1", 5);
	json_decref(wait_state("wf1", "SUCCESS"));
	wait_pxe("hw1", 0);
	int n = 0;
	ck_assert_int_eq(store_names(rd, STORE_KIND_HARDWARE, STORE_SOURCE_KUBE, count_name, &n,
				     NULL),
			 0);
	ck_assert_int_eq(n, 1);
	n = 0;
	ck_assert_int_eq(store_names(rd, STORE_KIND_WORKFLOW, STORE_SOURCE_KUBE, count_name, &n,
				     NULL),
			 0);
	ck_assert_int_eq(n, 1);
	/* the change log names the daemon's changes, for the write-back */
	n = 0;
	ck_assert_int_eq(store_changes_each(rd, 0, STORE_KIND_HARDWARE, NULL, 0, daemon_changes,
					    &n, NULL, NULL),
			 0);
	ck_assert_int_ge(n, 2); /* allowPXE on, then off */
}
END_TEST

START_TEST(test_netboot_job)
{
	template("t1", TEMPLATE_OK);
	hardware("hw1", true);
	/* a Job of the same name, left by an earlier Workflow wf1 */
	create("apiVersion: bmc.tinkerbell.org/v1alpha1\n"
	       "kind: Job\n"
	       "metadata: {name: netboot-wf1, namespace: default}\n"
	       "spec:\n"
	       "  machineRef: {name: old, namespace: default}\n"
	       "  tasks: [{powerAction: cycle}]\n");
	json_t *old = get(STORE_KIND_JOB, "netboot-wf1");
	char old_uid[64];
	snprintf(old_uid, sizeof(old_uid), "%s", jstr(old, "metadata.uid"));
	json_decref(old);
	workflow("wf1", "t1", "  bootOptions: {bootMode: netboot}\n");
	json_t *job = NULL;
	for (int i = 0; i < WAIT_TURNS; i++) {
		json_decref(job);
		job = wait_object(STORE_KIND_JOB, "netboot-wf1");
		if (strcmp(jstr(job, "metadata.uid"), old_uid) != 0)
			break;
		usleep(10000);
	}
	ck_assert_str_ne(jstr(job, "metadata.uid"), old_uid);
	json_t *tasks = json_object_get(json_object_get(job, "spec"), "tasks");
	ck_assert_uint_eq(json_array_size(tasks), 3);
	ck_assert_str_eq(jstr(json_array_get(tasks, 0), "powerAction"), "off");
	ck_assert_ptr_nonnull(json_object_get(json_array_get(tasks, 1), "oneTimeBootDeviceAction"));
	ck_assert_str_eq(jstr(json_array_get(tasks, 2), "powerAction"), "on");
	ck_assert_str_eq(jstr(job, "spec.machineRef.name"), "bmc1");
	ck_assert_str_eq(jstr(job, "metadata.labels.tink-controller-auto-created"), "true");
	json_t *owner = json_array_get(
		json_object_get(json_object_get(job, "metadata"), "ownerReferences"), 0);
	ck_assert_str_eq(jstr(owner, "kind"), "Workflow");
	ck_assert_str_eq(jstr(owner, "name"), "wf1");
	json_t *wf = wait_state("wf1", "PREPARING");
	/* the status says which Job it is */
	json_t *entry = json_object_get(
		json_object_get(json_object_get(json_object_get(wf, "status"), "bootOptions"),
				"jobs"),
		"netboot-wf1");
	ck_assert_ptr_nonnull(entry);
	ck_assert_str_eq(jstr(entry, "uid"), jstr(job, "metadata.uid"));
	json_decref(wf);
	/* the bmc controller, played: the Job completes */
	json_t *st_ =
		json_pack("{s:[{s:s,s:s}]}", "conditions", "type", "Completed", "status", "True");
	json_object_set_new(job, "status", st_);
	struct store_op op = {
		.type = STORE_OP_STATUS, .kind = STORE_KIND_JOB, .body = job, .no_object = true
	};
	ck_assert_msg(store_write1(st, &op) == 0, "%s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(job);
	json_decref(wait_state("wf1", "PENDING"));
}
END_TEST

START_TEST(test_global_timeout)
{
	template("t1", "version: \"0.1\"\n"
		       "name: t\n"
		       "global_timeout: 1\n"
		       "tasks:\n"
		       "  - name: os\n"
		       "    worker: \"{{.device_1}}\"\n"
		       "    actions:\n"
		       "      - name: sleep\n"
		       "        image: alpine\n"
		       "        timeout: 600\n");
	hardware("hw1", false);
	workflow("wf1", "t1", "  bootOptions: {toggleAllowNetboot: true}\n");
	json_decref(wait_state("wf1", "PENDING"));
	agent_step("wf1", 2); /* RUNNING, and never reported again */
	json_decref(wait_state("wf1", "TIMEOUT"));
	/* cleaned up, as after POST */
	wait_pxe("hw1", 0);

	/* a Workflow deleted while its timer is armed is forgotten, timer
	 * and all */
	template("t2", TEMPLATE_OK);
	workflow("wf2", "t2", NULL);
	json_decref(wait_state("wf2", "PENDING"));
	agent_step("wf2", 2);
	struct store_op op = { .type = STORE_OP_DELETE,
			       .kind = STORE_KIND_WORKFLOW,
			       .namespace_ = "default",
			       .name = "wf2",
			       .no_object = true };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	workflow("wf3", "t1", NULL);
	json_decref(wait_state("wf3", "PENDING"));
	for (int i = 0; i < WAIT_TURNS && !has_metric("ironbell_workflow_followed 2"); i++)
		usleep(10000);
	ck_assert(has_metric("ironbell_workflow_followed 2"));
}
END_TEST

/* The controller's settings reach the engine: an action past its
 * deadline is retried after workflow.retry_backoff, 7 s here (the
 * engine's own is 5 s). */
START_TEST(test_settings_reach_the_engine)
{
	static const struct wf_settings agent = { .action_grace_s = 1 };
	stop();
	ctl_set.retry_base_s = 7;
	start();
	agent_set = &agent;
	template("t1", "version: \"0.1\"\n"
		       "name: t\n"
		       "global_timeout: 600\n"
		       "tasks:\n"
		       "  - name: os\n"
		       "    worker: \"{{.device_1}}\"\n"
		       "    actions:\n"
		       "      - name: flaky\n"
		       "        image: alpine\n"
		       "        timeout: 1\n"
		       "        retries: 1\n");
	hardware("hw1", false);
	workflow("wf1", "t1", NULL);
	json_decref(wait_state("wf1", "PENDING"));
	agent_step("wf1", 2); /* RUNNING: its deadline 1 + 1 s away */
	const char *msg = NULL;
	json_t *wf = NULL;
	for (int i = 0; i < WAIT_TURNS && !msg; i++) {
		json_t *c;
		size_t k;
		json_decref(wf);
		wf = get(STORE_KIND_WORKFLOW, "wf1");
		json_array_foreach (json_object_get(json_object_get(wf, "status"), "conditions"), k,
				    c)
			if (strcmp(jstr(c, "type") ?: "", "ActionRetry") == 0)
				msg = jstr(c, "message");
		if (!msg)
			usleep(10000);
	}
	ck_assert_msg(msg, "the action was never retried");
	ck_assert_msg(strstr(msg, "retried in 7s"), "%s", msg);
	json_decref(wf);
}
END_TEST

START_TEST(test_restart_in_the_middle)
{
	template("t1", TEMPLATE_OK);
	hardware("hw1", true);
	workflow("wf1", "t1", "  bootOptions: {bootMode: netboot}\n");
	json_t *job = wait_object(STORE_KIND_JOB, "netboot-wf1");
	json_decref(wait_state("wf1", "PREPARING"));
	stop();
	/* while no controller runs, the Job completes */
	json_object_set_new(
		job, "status",
		json_pack("{s:[{s:s,s:s}]}", "conditions", "type", "Completed", "status", "True"));
	struct store_op op = {
		.type = STORE_OP_STATUS, .kind = STORE_KIND_JOB, .body = job, .no_object = true
	};
	ck_assert_msg(store_write1(st, &op) == 0, "%s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(job);
	start();
	json_decref(wait_state("wf1", "PENDING"));
	/* a second controller stops and starts on the same store mid-run */
	stop();
	agent_step("wf1", 5);
	start();
	agent_step("wf1", 5);
	json_decref(wait_state("wf1", "SUCCESS"));
}
END_TEST

/* A Workflow whose Template does not exist yet is rendered when the
 * Template is made: a Template's change finds the Workflows naming it. */
START_TEST(test_template_made_later)
{
	hardware("hw1", false);
	workflow("wf1", "late", NULL);
	/* let the controller look at it first (not needed for the test to
	 * pass, only for it to test the Template's change) */
	usleep(200000);
	json_t *wf = get(STORE_KIND_WORKFLOW, "wf1");
	ck_assert_ptr_nonnull(wf);
	json_decref(wf);
	template("late", TEMPLATE_OK);
	json_decref(wait_state("wf1", "PENDING"));
}
END_TEST

START_TEST(test_workflow_deleted_and_made_again)
{
	template("t1", TEMPLATE_OK);
	hardware("hw1", false);
	workflow("wf1", "t1", NULL);
	json_decref(wait_state("wf1", "PENDING"));
	struct store_op op = { .type = STORE_OP_DELETE,
			       .kind = STORE_KIND_WORKFLOW,
			       .namespace_ = "default",
			       .name = "wf1",
			       .no_object = true };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	workflow("wf1", "t1", NULL);
	json_decref(wait_state("wf1", "PENDING"));
}
END_TEST

/* ---- the closed loop ---- */

/* Hardware name's annotation key (a copy in out, "" when absent). */
static const char *annotation(const char *name, const char *key, char out[128])
{
	json_t *hw = get(STORE_KIND_HARDWARE, name);
	const char *v = json_string_value(json_object_get(
		json_object_get(json_object_get(hw, "metadata"), "annotations"), key));
	snprintf(out, 128, "%s", v ?: "");
	json_decref(hw);
	return out;
}

/* The Booted condition of Workflow name, "<status> <reason>" into out. */
static const char *booted(const char *name, char out[128])
{
	json_t *wf = get(STORE_KIND_WORKFLOW, name), *c;
	size_t i;
	snprintf(out, 128, "(none)");
	json_array_foreach (json_object_get(json_object_get(wf, "status"), "conditions"), i, c)
		if (strcmp(jstr(c, "type") ?: "", WF_BOOT_CONDITION) == 0)
			snprintf(out, 128, "%s %s", jstr(c, "status") ?: "",
				 jstr(c, "reason") ?: "");
	json_decref(wf);
	return out;
}

static void wait_booted(const char *name, const char *want)
{
	char got[128] = "";
	for (int i = 0; i < WAIT_TURNS && strcmp(booted(name, got), want) != 0; i++)
		usleep(10000);
	ck_assert_str_eq(got, want);
}

/* Merge-patches the annotations of Hardware name, as the DHCP server and
 * the public routes do. */
static void patch_hw(const char *name, json_t *patch)
{
	struct store_op op = { .type = STORE_OP_MERGE_PATCH,
			       .kind = STORE_KIND_HARDWARE,
			       .namespace_ = "default",
			       .name = name,
			       .body = patch,
			       .no_object = true };
	ck_assert_msg(store_write1(st, &op) == 0, "%s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(patch);
}

/* Whether an event of Hardware name has reason and a message holding
 * what. */
static bool has_hw_event(const char *name, const char *reason, const char *what)
{
	json_t *evs = NULL, *ev;
	size_t i;
	bool found = false;
	store_sync(st);
	ck_assert_int_eq(store_events(rd, 0, STORE_KIND_HARDWARE, "default", name, 100, &evs), 0);
	json_array_foreach (evs, i, ev) {
		const char *r = jstr(ev, "reason"), *m = jstr(ev, "message");
		if (r && m && strcmp(r, reason) == 0 && strstr(m, what))
			found = true;
	}
	json_decref(evs);
	return found;
}

/* SUCCESS marks the Hardware and waits (Booted Unknown); an observation
 * written on the Hardware queues the Workflow: a netboot is reported
 * (Warning on both, the mark kept), a disk boot ends the wait (Normal
 * event on both, the annotations gone). A new Workflow's allowPXE on
 * drops a mark left behind. */
START_TEST(test_booted_closed_loop)
{
	char v[128];
	template("t1", TEMPLATE_OK);
	hardware("hw1", false);
	workflow("wf1", "t1", "  bootOptions: {toggleAllowNetboot: true}\n");
	json_decref(wait_state("wf1", "PENDING"));
	ck_assert_str_eq(annotation("hw1", WF_BOOT_AWAIT_ANNOTATION, v), "");
	agent_step("wf1", 5);
	agent_step("wf1", 5);
	json_decref(wait_state("wf1", "SUCCESS"));
	wait_booted("wf1", "Unknown AwaitingBoot");
	for (int i = 0; i < WAIT_TURNS && !*annotation("hw1", WF_BOOT_AWAIT_ANNOTATION, v); i++)
		usleep(10000);
	ck_assert_msg(strncmp(v, "wf1 20", 6) == 0, "mark \"%s\"", v);

	patch_hw("hw1",
		 bootmark_patch(BOOTMARK_NETBOOT, "ipxe", (int64_t)(now_real_ns() / 1000000u)));
	wait_booted("wf1", "False NetbootAgain");
	ck_assert(has_event("wf1", "NetbootAgain", "netbooted again"));
	ck_assert(
		has_hw_event("hw1", "NetbootAgain", "workflow wf1: hardware hw1 netbooted again"));
	for (int i = 0; i < WAIT_TURNS && *annotation("hw1", WF_BOOT_OBSERVED_ANNOTATION, v); i++)
		usleep(10000);
	ck_assert_str_eq(v, "");
	ck_assert_str_ne(annotation("hw1", WF_BOOT_AWAIT_ANNOTATION, v), "");

	patch_hw("hw1",
		 bootmark_patch(BOOTMARK_DISK, "metadata", (int64_t)(now_real_ns() / 1000000u)));
	wait_booted("wf1", "True BootedFromDisk");
	ck_assert(has_event("wf1", "Booted", "booted from its disk"));
	ck_assert(has_hw_event("hw1", "Booted", "(its first metadata request)"));
	for (int i = 0; i < WAIT_TURNS && *annotation("hw1", WF_BOOT_AWAIT_ANNOTATION, v); i++)
		usleep(10000);
	ck_assert_str_eq(v, "");
	ck_assert_str_eq(annotation("hw1", WF_BOOT_OBSERVED_ANNOTATION, v), "");
	json_t *wf = get(STORE_KIND_WORKFLOW, "wf1");
	ck_assert_str_eq(jstr(wf, "status.state"), "SUCCESS");
	json_decref(wf);

	/* a mark left behind; a new Workflow netboots the machine */
	patch_hw("hw1", json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
				  WF_BOOT_AWAIT_ANNOTATION, "wf1 2026-11-25T22:00:00Z"));
	workflow("wf2", "t1", "  bootOptions: {toggleAllowNetboot: true}\n");
	json_decref(wait_state("wf2", "PENDING"));
	ck_assert_int_eq(pxe("hw1"), 1);
	ck_assert_str_eq(annotation("hw1", WF_BOOT_AWAIT_ANNOTATION, v), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workflow_ctl");
	TCase *tc = tcase_create("workflow_ctl");
	tcase_add_checked_fixture(tc, setup_ctl, teardown_ctl);
	tcase_set_timeout(tc, 120);
	UNIT_TEST(tc, test_renders_to_pending);
	UNIT_TEST(tc, test_bad_template_fails_with_position);
	UNIT_TEST(tc, test_toggle_allow_netboot);
	UNIT_TEST(tc, test_kube_objects);
	UNIT_TEST(tc, test_netboot_job);
	UNIT_TEST(tc, test_global_timeout);
	UNIT_TEST(tc, test_settings_reach_the_engine);
	UNIT_TEST(tc, test_restart_in_the_middle);
	UNIT_TEST(tc, test_template_made_later);
	UNIT_TEST(tc, test_workflow_deleted_and_made_again);
	UNIT_TEST(tc, test_booted_closed_loop);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
