/* check_engine_step — the workflow controller's step (wf_engine_step,
 * workflow/engine.h) without a store: the playground template rendered,
 * render failures with their line and column, a missing Template or
 * Hardware, each boot option and the bmc Jobs it asks for (Completed and
 * Failed Jobs as input), the global timeout and an action's deadline,
 * cleanup after POST, FAILED and TIMEOUT, legacy statuses, disabled.
 * Every status produced is checked against the Workflow CRD's schema. */
#include "config.h"

#include "tests/unit/engine_fixture.h"

/* "" -> PENDING: the playground template rendered into tasks and actions
 * with ULIDs; a second step changes nothing. */
START_TEST(test_render)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew(NULL);
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.agentID"), MAC);
	ck_assert_str_eq(str_at(wf, "status.templateRendering"), "successful");
	ck_assert_int_eq(json_integer_value(at(wf, "status.globalTimeout")), 1800);
	ck_assert_str_eq(str_at(wf, "status.conditions.0.type"), "TemplateRenderedSuccess");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.status"), "True");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.time"), "2026-11-25T22:00:00Z");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.name"), "os installation");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.agentID"), MAC);
	ck_assert_str_eq(str_at(wf, "status.tasks.0.volumes.0"), "/dev:/dev");
	ck_assert(is_ulid(str_at(wf, "status.tasks.0.id")));
	/* 48 bits of time first: the same for IDs made at the same ms */
	char ts[11];
	snprintf(ts, sizeof(ts), "%s", str_at(wf, "status.tasks.0.id"));
	ck_assert_str_eq(ts, "01M8ABJ1R0");
	json_t *actions = at(wf, "status.tasks.0.actions");
	ck_assert_uint_ge(json_array_size(actions), 8);
	ck_assert_str_eq(str_at(actions, "0.name"), "stream ubuntu image");
	ck_assert_str_eq(str_at(actions, "0.state"), "PENDING");
	ck_assert_str_eq(str_at(actions, "0.environment.DEST_DISK"), "/dev/nvme0n1");
	ck_assert_int_eq(json_integer_value(at(actions, "0.timeout")), 600);
	ck_assert(is_ulid(str_at(actions, "0.id")));
	ck_assert_str_ne(str_at(actions, "0.id"), str_at(actions, "1.id"));
	ck_assert_ptr_null(at(actions, "0.retries"));
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_str_eq(fx.events[0].reason, "Rendered");
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert_uint_eq(fx.n_jobs, 0);
	ck_assert_int_eq(fx.wake_ms, 0);
	/* again: nothing to do */
	char *before = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_int_eq(step(wf, &w, T0 + S(60), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_uint_eq(fx.n_events, 0);
	char *after = json_dumps(wf, JSON_SORT_KEYS);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	/* and the whole workflow runs to POST, then SUCCESS */
	run_all(wf, T0 + S(61));
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	ck_assert_int_eq(step(wf, &w, T0 + S(62), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* Render failures: FAILED with the stage, line and column; the template
 * and the Hardware missing: wait in "" with a condition saying which. */
START_TEST(test_render_failure)
{
	struct world w = { .tmpl = mktemplate("version: \"0.1\"\nname: x\ntasks:\n"
					      "  - name: {{ nosuchfunc .x }}\n"),
			   .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_str_eq(str_at(wf, "status.templateRendering"), "failed");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.status"), "False");
	const char *m = str_at(wf, "status.conditions.0.message");
	ck_assert_msg(strstr(m, "render failed at line 4, column 14"), "%s", m);
	ck_assert_msg(strstr(m, "nosuchfunc"), "%s", m);
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_str_eq(fx.events[0].type, "Warning");
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP); /* nothing was done: nothing undone */
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert(!fx.status_changed);
	json_decref(wf);

	/* YAML that is not a template */
	json_decref(w.tmpl);
	w.tmpl = mktemplate("version: \"0.1\"\nname: x\ntasks: [\n");
	wf = mknew(NULL);
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	m = str_at(wf, "status.conditions.0.message");
	ck_assert_msg(strstr(m, "yaml failed at line"), "%s", m);
	json_decref(wf);
	json_decref(w.tmpl);
	w.tmpl = mktemplate("version: \"0.1\"\nname: x\nglobal_timeout: 10\ntasks: []\n");
	wf = mknew(NULL);
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	m = str_at(wf, "status.conditions.0.message");
	ck_assert_msg(strstr(m, "schema failed at line"), "%s", m);
	json_decref(wf);

	/* no Template yet, then no Hardware, then both */
	json_t *tmpl = w.tmpl;
	w.tmpl = NULL;
	wf = mknew(NULL);
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "(absent)");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.message"), "template ubuntu not found");
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_int_eq(step(wf, &w, T0 + S(60), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_uint_eq(fx.n_events, 0);
	json_decref(tmpl);
	w.tmpl = mktemplate(NULL);
	json_t *hw = w.hw;
	w.hw = NULL;
	ck_assert_int_eq(step(wf, &w, T0 + S(61), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.conditions.0.message"), "hardware machine1 not found");
	w.hw = hw;
	ck_assert_int_eq(step(wf, &w, T0 + S(62), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.conditions.0.status"), "True");
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* toggleAllowNetboot: allowPXE on at the start (PREPARING -> PENDING in
 * the same step), off at POST, once each. */
START_TEST(test_toggle_allow_netboot)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_ON);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert(json_is_true(at(wf, "status.bootOptions.allowNetboot.toggledTrue")));
	ck_assert_str_eq(str_at(wf, "status.conditions.1.type"), "AllowNetbootTrue");
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert(!fx.status_changed);
	run_all(wf, T0 + S(2));
	ck_assert_int_eq(step(wf, &w, T0 + S(3), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert(json_is_true(at(wf, "status.bootOptions.allowNetboot.toggledFalse")));
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert(!fx.status_changed);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* bootMode netboot: the Job (off, one-time PXE with efiBoot, on), asked
 * again while it is not there, followed, Completed -> PENDING; Failed ->
 * FAILED with the Job's message. */
START_TEST(test_netboot)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(true) };
	json_t *wf = mknew("{\"bootMode\":\"netboot\"}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PREPARING");
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "netboot-wf1");
	char *spec = json_dumps(fx.jobs[0].spec, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(spec,
			 "{\"machineRef\":{\"name\":\"bmc1\",\"namespace\":\"tink\"},"
			 "\"tasks\":[{\"powerAction\":\"off\"},"
			 "{\"oneTimeBootDeviceAction\":{\"device\":[\"pxe\"],\"efiBoot\":true}},"
			 "{\"powerAction\":\"on\"}]}");
	free(spec);
	ck_assert(json_is_true(at(wf, "status.bootOptions.jobs.netboot-wf1.existingJobDeleted")));
	ck_assert(json_is_false(at(wf, "status.bootOptions.jobs.netboot-wf1.complete")));
	wf_effects_clear(&fx);
	/* the agent waits */
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_FAILED_PRECONDITION);
	/* the Job is not there: asked again */
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 1);
	wf_effects_clear(&fx);
	/* running */
	json_t *job = mkjob("netboot-wf1", NULL, NULL);
	w.jobs[0] = job;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(2), &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PREPARING");
	ck_assert_str_eq(str_at(wf, "status.bootOptions.jobs.netboot-wf1.uid"), "uid-1");
	ck_assert_int_eq(step(wf, &w, T0 + S(3), &fx), 0);
	ck_assert(!fx.status_changed);
	json_decref(job);
	/* completed */
	job = mkjob("netboot-wf1", "Completed", "");
	w.jobs[0] = job;
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert(fx.notify_agent); /* the agent waiting in GetAction */
	ck_assert(json_is_true(at(wf, "status.bootOptions.jobs.netboot-wf1.complete")));
	ck_assert_int_eq(get(wf, MAC, T0 + S(5), &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	json_decref(job);
	json_decref(wf);

	/* a Job that fails */
	wf = mknew("{\"bootMode\":\"netboot\"}");
	w.n_jobs = 0;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	wf_effects_clear(&fx);
	job = mkjob("netboot-wf1", "Failed", "bmc unreachable");
	w.jobs[0] = job;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_str_eq(cond_msg(wf, "BootJobFailed"), "job netboot-wf1 failed: bmc unreachable");
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(job);
	json_decref(wf);

	/* no BMC, no Hardware */
	json_object_del(at(w.hw, "spec"), "bmcRef");
	w.n_jobs = 0;
	wf = mknew("{\"bootMode\":\"netboot\"}");
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	const char *m = cond_msg(wf, "BootJobFailed");
	ck_assert_msg(strstr(m, "hardware machine1 has no bmcRef"), "%s", m);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* bootMode isoboot: mount (off, eject, insert, one-time CD-ROM, on), and
 * at POST the eject Job before SUCCESS; no isoURL: FAILED. */
START_TEST(test_isoboot)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"bootMode\":\"isoboot\",\"isoURL\":\"http://10.1.1.1/hook.iso\"}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "iso-mount-wf1");
	char *spec = json_dumps(json_object_get(fx.jobs[0].spec, "tasks"),
				JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(spec,
			 "[{\"powerAction\":\"off\"},"
			 "{\"virtualMediaAction\":{\"kind\":\"CD\",\"mediaURL\":\"\"}},"
			 "{\"virtualMediaAction\":{\"kind\":\"CD\",\"mediaURL\":"
			 "\"http://10.1.1.1/hook.iso\"}},"
			 "{\"oneTimeBootDeviceAction\":{\"device\":[\"cdrom\"],\"efiBoot\":false}},"
			 "{\"powerAction\":\"on\"}]");
	free(spec);
	wf_effects_clear(&fx);
	json_t *mount = mkjob("iso-mount-wf1", "Completed", "");
	w.jobs[0] = mount;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	run_all(wf, T0 + S(2));
	ck_assert_int_eq(step(wf, &w, T0 + S(3), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "iso-eject-wf1");
	spec = json_dumps(json_object_get(fx.jobs[0].spec, "tasks"), JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(spec, "[{\"virtualMediaAction\":{\"kind\":\"CD\",\"mediaURL\":\"\"}}]");
	free(spec);
	wf_effects_clear(&fx);
	json_t *eject = mkjob("iso-eject-wf1", "Completed", "");
	w.jobs[1] = eject;
	w.n_jobs = 2;
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(wf);

	wf = mknew("{\"bootMode\":\"isoboot\"}");
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_msg(strstr(cond_msg(wf, "BootJobSetupFailed"), "isoURL is required"), "%s",
		      cond_msg(wf, "BootJobSetupFailed"));
	json_decref(wf);
	json_decref(mount);
	json_decref(eject);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* bootMode customboot: the user's preparing actions (mediaURL rendered
 * with .Hardware) before, the post actions after; an empty list is
 * nothing to wait for. */
START_TEST(test_customboot)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"bootMode\":\"customboot\",\"custombootConfig\":{"
			   "\"preparingActions\":[{\"powerAction\":\"off\"},"
			   "{\"virtualMediaAction\":{\"mediaURL\":"
			   "\"http://10.1.1.1/{{ (index .Hardware.Interfaces 0).DHCP.MAC }}.iso\","
			   "\"kind\":\"CD\"}}],"
			   "\"postActions\":[{\"powerAction\":\"cycle\"}]}}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PREPARING");
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "customboot-preparing-wf1");
	char *spec = json_dumps(json_object_get(fx.jobs[0].spec, "tasks"),
				JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(spec, "[{\"powerAction\":\"off\"},{\"virtualMediaAction\":{\"kind\":"
			       "\"CD\",\"mediaURL\":\"http://10.1.1.1/" MAC ".iso\"}}]");
	free(spec);
	wf_effects_clear(&fx);
	json_t *prep = mkjob("customboot-preparing-wf1", "Completed", "");
	w.jobs[0] = prep;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	run_all(wf, T0 + S(2));
	ck_assert_int_eq(step(wf, &w, T0 + S(3), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "POST");
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "customboot-post-wf1");
	wf_effects_clear(&fx);
	json_t *post = mkjob("customboot-post-wf1", "Completed", "");
	w.jobs[1] = post;
	w.n_jobs = 2;
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	json_decref(wf);

	/* nothing to prepare */
	wf = mknew("{\"bootMode\":\"customboot\",\"custombootConfig\":{}}");
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(wf);

	/* a mediaURL that does not render */
	wf = mknew("{\"bootMode\":\"customboot\",\"custombootConfig\":{"
		   "\"preparingActions\":[{\"virtualMediaAction\":{\"mediaURL\":"
		   "\"{{ .Hardware.Nope }}\",\"kind\":\"CD\"}}]}}");
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	const char *m = cond_msg(wf, "BootJobFailed");
	ck_assert_msg(strstr(m, "customboot mediaURL of action 0"), "%s", m);
	ck_assert_uint_eq(fx.n_jobs, 0);
	json_decref(wf);
	json_decref(prep);
	json_decref(post);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* A one-action template: global_timeout g, the action's timeout t and
 * retries r. */
static json_t *mktmpl1(int g, int t, int r)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "version: \"0.1\"\nname: one\nglobal_timeout: %d\ntasks:\n"
		 "  - name: t\n    worker: \"{{.device_1}}\"\n    actions:\n"
		 "      - name: a\n        image: img\n        timeout: %d\n        retries: %d\n",
		 g, t, r);
	return mktemplate(text);
}

/* The global timeout: the running action and the workflow TIMEOUT, the
 * agent's heartbeat refused, allowPXE off. The handed-out timeout never
 * outlasts the workflow. */
START_TEST(test_global_timeout)
{
	struct world w = { .tmpl = mktmpl1(100, 600, 0), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_OK);
	ck_assert_int_eq(h.timeout_s, 100);
	char tid[64], aid[64];
	snprintf(tid, sizeof(tid), "%s", h.task_id);
	snprintf(aid, sizeof(aid), "%s", h.action_id);
	wf_handout_clear(&h);
	struct wf_clock c = clk_at(T0);
	char msg[256];
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = MAC,
			       .task_id = tid,
			       .action_id = aid,
			       .state = 2,
			       .start_ms = T0 };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.globalExecutionStop"), "2026-11-25T22:01:40Z");
	ck_assert_int_eq(step(wf, &w, T0 + S(50), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.wake_ms, T0 + S(100));
	/* past the global timeout, before the step has run: no more work */
	struct wf_clock late = clk_at(T0 + S(100));
	ck_assert_int_eq(wf_engine_report(wf, &r, &late, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	ck_assert_int_eq(get(wf, MAC, T0 + S(100), &h, &ch), GRPC_FAILED_PRECONDITION);
	ck_assert_int_eq(step(wf, &w, T0 + S(100), &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert(fx.notify_agent);
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "TIMEOUT");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.executionDuration"), "1m40s");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.message"),
			 "the workflow's global timeout (1m40s) passed");
	ck_assert_str_eq(str_at(wf, "status.currentState.state"), "TIMEOUT");
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF); /* cleanup, as POST */
	ck_assert_str_eq(fx.events[0].reason, "Timeout");
	ck_assert_int_eq(fx.wake_ms, 0);
	c = clk_at(T0 + S(101));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	r.state = 5;
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert(!ch);
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	ck_assert_int_eq(step(wf, &w, T0 + S(102), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* An action's own deadline (timeout + grace, by the server's clock):
 * TIMEOUT, retried after the backoff (wake_ms at each time), then the
 * workflow TIMEOUT once the retries are spent, and cleaned up. */
START_TEST(test_action_deadline)
{
	struct world w = { .tmpl = mktmpl1(0, 10, 1), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.0.retries")), 1);
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_OK);
	ck_assert_int_eq(h.timeout_s, 10);
	char tid[64], aid[64];
	snprintf(tid, sizeof(tid), "%s", h.task_id);
	snprintf(aid, sizeof(aid), "%s", h.action_id);
	wf_handout_clear(&h);
	struct wf_clock c = clk_at(T0);
	char msg[256];
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = MAC,
			       .task_id = tid,
			       .action_id = aid,
			       .state = 2,
			       .start_ms = T0 };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_ptr_null(at(wf, "status.globalExecutionStop")); /* global_timeout 0: none */
	ck_assert_int_eq(step(wf, &w, T0 + S(39), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert(!fx.notify_agent);
	ck_assert_int_eq(fx.wake_ms, T0 + S(40));
	/* the heartbeat: on before the deadline, stop after it */
	c = clk_at(T0 + S(39));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	c = clk_at(T0 + S(40));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	ck_assert(!ch);
	ck_assert_int_eq(step(wf, &w, T0 + S(40), &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert(fx.notify_agent);
	ck_assert_str_eq(fx.events[0].reason, "ActionTimeout");
	ck_assert_str_eq(str_at(wf, "status.state"), "RUNNING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "PENDING");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.retryAfter"), "2026-11-25T22:00:45Z");
	ck_assert_str_eq(str_at(wf, "status.conditions.2.type"), "ActionRetry");
	ck_assert_int_eq(fx.wake_ms, T0 + S(45));
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	/* the agent, still at it, is told to stop */
	c = clk_at(T0 + S(41));
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)),
			 GRPC_FAILED_PRECONDITION);
	/* the backoff is over: the agent's long poll is woken */
	ck_assert_int_eq(step(wf, &w, T0 + S(45), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert(fx.notify_agent);
	ck_assert_int_eq(get(wf, MAC, T0 + S(45), &h, &ch), GRPC_OK);
	wf_handout_clear(&h);
	c = clk_at(T0 + S(46));
	r.start_ms = T0 + S(46);
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_int_eq(json_integer_value(at(wf, "status.tasks.0.actions.0.attempts")), 2);
	ck_assert_int_eq(step(wf, &w, T0 + S(86), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "TIMEOUT");
	ck_assert_str_eq(str_at(wf, "status.tasks.0.actions.0.state"), "TIMEOUT");
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF);
	ck_assert_int_eq(fx.wake_ms, 0);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* FAILED gets POST's cleanup once: allowPXE off and the ISO ejected. */
START_TEST(test_cleanup_on_failure)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true,\"bootMode\":\"iso\","
			   "\"isoURL\":\"http://10.1.1.1/hook.iso\"}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_ON);
	wf_effects_clear(&fx);
	json_t *mount = mkjob("iso-mount-wf1", "Completed", "");
	w.jobs[0] = mount;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0 + S(2), &h, &ch), GRPC_OK);
	char tid[64], aid[64];
	snprintf(tid, sizeof(tid), "%s", h.task_id);
	snprintf(aid, sizeof(aid), "%s", h.action_id);
	wf_handout_clear(&h);
	struct wf_clock c = clk_at(T0 + S(2));
	char msg[256];
	struct wf_report r = { .workflow_id = "tink/wf1",
			       .agent_id = MAC,
			       .task_id = tid,
			       .action_id = aid,
			       .state = 2,
			       .start_ms = T0 + S(2),
			       .message = "" };
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	r.state = 3;
	r.stop_ms = T0 + S(3);
	r.message = "image2disk: no space left on device";
	ck_assert_int_eq(wf_engine_report(wf, &r, &c, &ch, msg, sizeof(msg)), GRPC_OK);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	ck_assert_int_eq(step(wf, &w, T0 + S(4), &fx), 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF);
	ck_assert_uint_eq(fx.n_jobs, 1);
	ck_assert_str_eq(fx.jobs[0].name, "iso-eject-wf1");
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	wf_effects_clear(&fx);
	json_t *eject = mkjob("iso-eject-wf1", "Completed", "");
	w.jobs[1] = eject;
	w.n_jobs = 2;
	ck_assert_int_eq(step(wf, &w, T0 + S(5), &fx), 0);
	ck_assert_uint_eq(fx.n_jobs, 0);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	ck_assert(json_is_true(at(wf, "status.bootOptions.jobs.iso-eject-wf1.complete")));
	ck_assert_int_eq(step(wf, &w, T0 + S(6), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "FAILED");
	json_decref(wf);
	json_decref(mount);
	json_decref(eject);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* tinkerbell/tink <= v0.12's status: STATE_PENDING rendered again into
 * the current shape; STATE_SUCCESS left alone. */
START_TEST(test_legacy)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew(NULL);
	json_object_set_new(
		wf, "status",
		jload("{\"state\":\"STATE_PENDING\",\"currentAction\":\"stream ubuntu image\","
		      "\"templateRending\":\"successful\",\"globalTimeout\":1800,"
		      "\"conditions\":[{\"type\":\"NetbootJobComplete\",\"status\":\"True\"}],"
		      "\"tasks\":[{\"name\":\"os installation\",\"worker\":\"" MAC "\","
		      "\"actions\":[{\"name\":\"stream ubuntu image\",\"image\":\"x\","
		      "\"status\":\"STATE_PENDING\",\"seconds\":0}]}]}"));
	valid(wf);
	/* the agent is told to wait, and no workflow is active yet */
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_FAILED_PRECONDITION);
	ck_assert_int_eq(wf_engine_pick(&wf, 1, MAC), -ENOENT);
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_ptr_null(at(wf, "status.currentAction"));
	ck_assert_ptr_null(at(wf, "status.templateRending"));
	ck_assert_ptr_null(at(wf, "status.tasks.0.worker"));
	ck_assert_str_eq(str_at(wf, "status.tasks.0.agentID"), MAC);
	ck_assert(is_ulid(str_at(wf, "status.tasks.0.actions.0.id")));
	ck_assert_uint_eq(json_array_size(at(wf, "status.conditions")), 1);
	ck_assert_int_eq(wf_engine_pick(&wf, 1, MAC), 0);
	json_decref(wf);

	wf = mknew(NULL);
	json_object_set_new(wf, "status",
			    jload("{\"state\":\"STATE_SUCCESS\",\"currentAction\":\"x\"}"));
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_str_eq(str_at(wf, "status.state"), "STATE_SUCCESS");
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* spec.disabled: only status.agentID, nothing handed out; enabled, it
 * renders. */
START_TEST(test_disabled)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	json_object_set_new(at(wf, "spec"), "disabled", json_true());
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_int_eq(fx.pxe, WF_PXE_KEEP);
	char *st = json_dumps(at(wf, "status"), JSON_COMPACT);
	ck_assert_str_eq(st, "{\"agentID\":\"" MAC "\"}");
	free(st);
	ck_assert_int_eq(wf_engine_pick(&wf, 1, MAC), -ENOENT);
	struct wf_handout h;
	bool ch;
	ck_assert_int_eq(get(wf, MAC, T0, &h, &ch), GRPC_NOT_FOUND);
	ck_assert_int_eq(step(wf, &w, T0 + S(1), &fx), 0);
	ck_assert(!fx.status_changed);
	json_object_del(at(wf, "spec"), "disabled");
	ck_assert_int_eq(step(wf, &w, T0 + S(2), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_int_eq(fx.pxe, WF_PXE_ON);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

static Suite *engine_step_suite(void)
{
	Suite *s = suite_create("engine_step");
	TCase *ctl = tcase_create("controller");
	UNIT_TEST(ctl, test_render);
	UNIT_TEST(ctl, test_render_failure);
	UNIT_TEST(ctl, test_toggle_allow_netboot);
	UNIT_TEST(ctl, test_netboot);
	UNIT_TEST(ctl, test_isoboot);
	UNIT_TEST(ctl, test_customboot);
	UNIT_TEST(ctl, test_global_timeout);
	UNIT_TEST(ctl, test_action_deadline);
	UNIT_TEST(ctl, test_cleanup_on_failure);
	UNIT_TEST(ctl, test_legacy);
	UNIT_TEST(ctl, test_disabled);
	suite_add_tcase(s, ctl);
	return s;
}

int main(void)
{
	return unit_run(engine_step_suite());
}
