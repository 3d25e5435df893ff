/* check_engine_boot — the closed loop in the controller's step
 * (workflow/engine-boot.c) without a store: SUCCESS asks for the
 * Hardware's mark with the power-on time (the netboot Job's completion, or
 * the first action's start), the Booted condition waits for an
 * observation, a disk boot ends the wait with an event on the Workflow
 * and the Hardware, a netboot is reported once and the wait goes on, a
 * mark of another Workflow ends it, a malformed observation is dropped.
 * Every status produced is checked against the Workflow CRD's schema. */
#include "config.h"

#include "tests/unit/engine_fixture.h"

/* The Booted condition's field (status, reason, message), or "". */
static const char *booted(const json_t *wf, const char *field)
{
	size_t i;
	json_t *c;
	json_array_foreach (at(wf, "status.conditions"), i, c)
		if (strcmp(str_at(c, "type"), WF_BOOT_CONDITION) == 0)
			return str_at(c, field);
	return "";
}

/* Sets (val) or removes (NULL) annotation key of the Hardware, as the
 * controller and the parts that observe do. */
static void annotate(json_t *hw, const char *key, const char *val)
{
	json_t *md = at(hw, "metadata");
	json_t *ann = json_object_get(md, "annotations");
	if (!ann) {
		ann = json_object();
		json_object_set_new(md, "annotations", ann);
	}
	if (val)
		json_object_set_new(ann, key, json_string(val));
	else
		json_object_del(ann, key);
}

/* The Hardware's mark, or NULL (at() cannot: the key has a dot). */
static const json_t *mark(const struct world *w)
{
	return json_object_get(at(w->hw, "metadata.annotations"), WF_BOOT_AWAIT_ANNOTATION);
}

/* Carries out fx->boot on the world's Hardware. */
static void apply_boot(struct world *w, const struct wf_effects *fx)
{
	if (fx->boot == WF_BOOT_AWAIT)
		annotate(w->hw, WF_BOOT_AWAIT_ANNOTATION, fx->boot_mark);
	if (fx->boot == WF_BOOT_DROP)
		annotate(w->hw, WF_BOOT_AWAIT_ANNOTATION, NULL);
	if (fx->boot != WF_BOOT_KEEP)
		annotate(w->hw, WF_BOOT_OBSERVED_ANNOTATION, NULL);
}

/* bootMode netboot: power-on is the Job's completionTime; SUCCESS marks
 * the Hardware; nothing seen: nothing changes; a disk boot: Booted True
 * with the time from power-on, events on both, the marks dropped. */
START_TEST(test_booted_from_disk)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"bootMode\":\"netboot\"}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	wf_effects_clear(&fx);
	json_t *job = mkjob("netboot-wf1", "Completed", "");
	json_object_set_new(at(job, "status"), "completionTime",
			    json_string("2026-11-25T22:00:04Z"));
	w.jobs[0] = job;
	w.n_jobs = 1;
	ck_assert_int_eq(step(wf, &w, T0 + S(5), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "PENDING");
	ck_assert_int_eq(fx.boot, WF_BOOT_KEEP);
	run_all(wf, T0 + S(10));
	ck_assert(!wf_engine_awaits_boot(wf));
	ck_assert_int_eq(step(wf, &w, T0 + S(100), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert_int_eq(fx.boot, WF_BOOT_AWAIT);
	ck_assert_str_eq(fx.boot_mark, "wf1 2026-11-25T22:00:04Z");
	ck_assert_str_eq(booted(wf, "status"), "Unknown");
	ck_assert_str_eq(booted(wf, "reason"), "AwaitingBoot");
	ck_assert(wf_engine_awaits_boot(wf));
	apply_boot(&w, &fx);
	/* marked, nothing seen yet */
	ck_assert_int_eq(step(wf, &w, T0 + S(101), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.boot, WF_BOOT_KEEP);
	ck_assert_uint_eq(fx.n_events, 0);
	/* the installed system's first metadata request, 5 minutes after
	 * power-on */
	annotate(w.hw, WF_BOOT_OBSERVED_ANNOTATION, "disk 2026-11-25T22:05:04Z metadata");
	ck_assert_int_eq(step(wf, &w, T0 + S(400), &fx), 0);
	ck_assert(fx.status_changed);
	ck_assert_str_eq(booted(wf, "status"), "True");
	ck_assert_str_eq(booted(wf, "reason"), "BootedFromDisk");
	ck_assert_str_eq(booted(wf, "message"), "hardware machine1 booted from its disk 5m0s "
						"after power-on (its first metadata request)");
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_str_eq(fx.events[0].type, "Normal");
	ck_assert_str_eq(fx.events[0].reason, "Booted");
	ck_assert(fx.events[0].hardware);
	ck_assert_int_eq(fx.boot, WF_BOOT_DROP);
	ck_assert(!wf_engine_awaits_boot(wf));
	apply_boot(&w, &fx);
	ck_assert_ptr_null(mark(&w));
	/* done: a later look changes nothing */
	ck_assert_int_eq(step(wf, &w, T0 + S(500), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.boot, WF_BOOT_KEEP);
	json_decref(job);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* No bootMode: power-on is the first action's start. A netboot after
 * SUCCESS: Booted False NetbootAgain, a Warning on both, once; the
 * observation dropped, the mark kept; the disk boot that follows still
 * ends the wait. */
START_TEST(test_netboot_again)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew("{\"toggleAllowNetboot\":true}");
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	run_all(wf, T0 + S(2));
	ck_assert_int_eq(step(wf, &w, T0 + S(60), &fx), 0);
	ck_assert_str_eq(str_at(wf, "status.state"), "SUCCESS");
	ck_assert_int_eq(fx.pxe, WF_PXE_OFF);
	ck_assert_int_eq(fx.boot, WF_BOOT_AWAIT);
	ck_assert_str_eq(fx.boot_mark, "wf1 2026-11-25T22:00:02Z");
	apply_boot(&w, &fx);
	annotate(w.hw, WF_BOOT_OBSERVED_ANNOTATION, "netboot 2026-11-25T22:01:32Z dhcp");
	ck_assert_int_eq(step(wf, &w, T0 + S(95), &fx), 0);
	ck_assert_str_eq(booted(wf, "status"), "False");
	ck_assert_str_eq(booted(wf, "reason"), "NetbootAgain");
	const char *m = booted(wf, "message");
	ck_assert_msg(strstr(m, "netbooted again 1m30s after power-on (a DHCP request)"), "%s", m);
	ck_assert_uint_eq(fx.n_events, 1);
	ck_assert_str_eq(fx.events[0].type, "Warning");
	ck_assert_str_eq(fx.events[0].reason, "NetbootAgain");
	ck_assert(fx.events[0].hardware);
	ck_assert_int_eq(fx.boot, WF_BOOT_DROP_OBSERVED);
	ck_assert(wf_engine_awaits_boot(wf));
	apply_boot(&w, &fx);
	ck_assert_ptr_nonnull(mark(&w));
	/* its iPXE asks for a script: the same report, no second event */
	annotate(w.hw, WF_BOOT_OBSERVED_ANNOTATION, "netboot 2026-11-25T22:01:40Z ipxe");
	ck_assert_int_eq(step(wf, &w, T0 + S(101), &fx), 0);
	ck_assert_uint_eq(fx.n_events, 0);
	ck_assert_int_eq(fx.boot, WF_BOOT_DROP_OBSERVED);
	ck_assert_str_eq(booted(wf, "reason"), "NetbootAgain");
	apply_boot(&w, &fx);
	/* refused, it falls back to its disk */
	annotate(w.hw, WF_BOOT_OBSERVED_ANNOTATION, "disk 2026-11-25T22:03:02Z dhcp");
	ck_assert_int_eq(step(wf, &w, T0 + S(200), &fx), 0);
	ck_assert_str_eq(booted(wf, "status"), "True");
	ck_assert_str_eq(booted(wf, "message"), "hardware machine1 booted from its disk 3m0s "
						"after power-on (a DHCP request)");
	ck_assert_int_eq(fx.boot, WF_BOOT_DROP);
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

/* A malformed observation is dropped and the wait goes on; a mark of
 * another Workflow ends it (NotAwaited); no mark at all leaves it. */
START_TEST(test_mark_edge_cases)
{
	struct world w = { .tmpl = mktemplate(NULL), .hw = mkhw(false) };
	json_t *wf = mknew(NULL);
	struct wf_effects fx;
	ck_assert_int_eq(step(wf, &w, T0, &fx), 0);
	run_all(wf, T0 + S(1));
	ck_assert_int_eq(step(wf, &w, T0 + S(30), &fx), 0);
	ck_assert_int_eq(fx.boot, WF_BOOT_AWAIT);
	/* the mark not there (yet, or dropped by a new netboot) */
	annotate(w.hw, WF_BOOT_OBSERVED_ANNOTATION, "disk 2026-11-25T22:01:00Z metadata");
	ck_assert_int_eq(step(wf, &w, T0 + S(31), &fx), 0);
	ck_assert(!fx.status_changed);
	ck_assert_int_eq(fx.boot, WF_BOOT_KEEP);
	apply_boot(&w, &(struct wf_effects){ .boot = WF_BOOT_AWAIT,
					     .boot_mark = "wf1 2026-11-25T22:00:01Z" });
	static const char *const bad[] = {
		"garbage", "disk", "disk yesterday metadata", "reboot 2026-11-25T22:01:00Z dhcp",
		"disk 2026-11-25T22:01:00Z0123456789012345678901234567890"
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		annotate(w.hw, WF_BOOT_OBSERVED_ANNOTATION, bad[i]);
		ck_assert_int_eq(step(wf, &w, T0 + S(32), &fx), 0);
		ck_assert_msg(!fx.status_changed, "%s", bad[i]);
		ck_assert_msg(fx.boot == WF_BOOT_DROP_OBSERVED, "%s", bad[i]);
		ck_assert_uint_eq(fx.n_events, 0);
	}
	ck_assert(wf_engine_awaits_boot(wf));
	/* a later Workflow's mark */
	annotate(w.hw, WF_BOOT_OBSERVED_ANNOTATION, NULL);
	annotate(w.hw, WF_BOOT_AWAIT_ANNOTATION, "wf2 2026-11-25T23:00:00Z");
	ck_assert_int_eq(step(wf, &w, T0 + S(40), &fx), 0);
	ck_assert_str_eq(booted(wf, "status"), "False");
	ck_assert_str_eq(booted(wf, "reason"), "NotAwaited");
	ck_assert_int_eq(fx.boot, WF_BOOT_KEEP); /* the other Workflow's */
	ck_assert(!wf_engine_awaits_boot(wf));
	json_decref(wf);
	json_decref(w.tmpl);
	json_decref(w.hw);
}
END_TEST

static Suite *engine_boot_suite(void)
{
	Suite *s = suite_create("engine_boot");
	TCase *tc = tcase_create("booted");
	UNIT_TEST(tc, test_booted_from_disk);
	UNIT_TEST(tc, test_netboot_again);
	UNIT_TEST(tc, test_mark_edge_cases);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(engine_boot_suite());
}
