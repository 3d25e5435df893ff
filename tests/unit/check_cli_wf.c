/* check_cli_wf — the pure Workflow functions of `ironbell` (cli/wf.c): the
 * table columns in both status shapes, the actions' view and durations,
 * what `workflow retry` reports, the free Hardware `provision` chooses
 * and the Workflow it builds, with the bad --map entries. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"
#include "tests/unit/unit.h"

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	ck_assert_msg(v != NULL, "%s: %s", text, e.text);
	return v;
}

#define CURRENT                                                                            \
	"{\"spec\":{\"templateRef\":\"t\",\"hardwareRef\":\"h\"},\"status\":{\"state\":"   \
	"\"RUNNING\",\"templateRendering\":\"successful\",\"currentState\":{\"agentID\":"  \
	"\"aa\",\"taskName\":\"t1\",\"actionName\":\"a2\"},\"tasks\":[{\"name\":\"t1\","   \
	"\"agentID\":\"aa\",\"id\":\"T\",\"actions\":[{\"name\":\"a1\",\"state\":"         \
	"\"SUCCESS\",\"executionStart\":\"2026-01-01T00:00:00Z\",\"executionStop\":"       \
	"\"2026-01-01T01:02:03Z\"},{\"name\":\"a2\",\"state\":\"RUNNING\",\"attempts\":2," \
	"\"retries\":3,\"executionStart\":\"2026-01-01T00:00:00Z\"}]}]}}"
#define LEGACY                                                                                   \
	"{\"status\":{\"state\":\"STATE_TIMEOUT\",\"currentAction\":\"b1\",\"templateRending\":" \
	"\"successful\",\"tasks\":[{\"name\":\"x\",\"worker\":\"w0\",\"actions\":[{\"name\":"    \
	"\"a\",\"status\":\"STATE_SUCCESS\",\"seconds\":3}]},{\"name\":\"y\",\"worker\":"        \
	"\"w1\",\"actions\":[{\"name\":\"b1\",\"status\":\"STATE_TIMEOUT\",\"startedAt\":"       \
	"\"2026-01-01T00:00:00Z\",\"seconds\":125,\"message\":\"timed out\"}]}]}}"

static void is_col(char *got, const char *want)
{
	if (!want)
		ck_assert_ptr_null(got);
	else
		ck_assert_str_eq(got ? got : "(null)", want);
	free(got);
}

START_TEST(test_columns)
{
	json_t *cur = load(CURRENT), *leg = load(LEGACY), *empty = load("{\"spec\":{}}");
	ck_assert(!cli_wf_legacy(cur));
	ck_assert(cli_wf_legacy(leg));
	ck_assert(!cli_wf_legacy(empty));
	is_col(cli_wf_col_task(cur), "t1");
	is_col(cli_wf_col_action(cur), "a2");
	is_col(cli_wf_col_agent(cur), "aa");
	is_col(cli_wf_col_rendering(cur), "successful");
	/* legacy: the task holding currentAction, and its worker */
	is_col(cli_wf_col_task(leg), "y");
	is_col(cli_wf_col_action(leg), "b1");
	is_col(cli_wf_col_agent(leg), "w1");
	is_col(cli_wf_col_rendering(leg), "successful");
	is_col(cli_wf_col_task(empty), NULL);
	is_col(cli_wf_col_action(empty), NULL);
	is_col(cli_wf_col_agent(empty), NULL);
	is_col(cli_wf_col_rendering(empty), NULL);
	json_decref(cur);
	json_decref(leg);
	json_decref(empty);
}
END_TEST

START_TEST(test_terminal)
{
	static const char *const yes[] = { "SUCCESS",       "FAILED",       "TIMEOUT",
					   "STATE_SUCCESS", "STATE_FAILED", "STATE_TIMEOUT" };
	static const char *const no[] = { "",     "PREPARING",     "PENDING",       "RUNNING",
					  "POST", "STATE_PENDING", "STATE_RUNNING", "failed" };
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		ck_assert_msg(cli_wf_state_terminal(yes[i]), "%s", yes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		ck_assert_msg(!cli_wf_state_terminal(no[i]), "%s", no[i]);
	ck_assert(!cli_wf_state_terminal(NULL));
}
END_TEST

START_TEST(test_durations)
{
	static const struct {
		int64_t s;
		const char *want;
	} go[] = { { -5, "0s" },       { 0, "0s" },        { 59, "59s" },       { 60, "1m0s" },
		   { 3599, "59m59s" }, { 3600, "1h0m0s" }, { 90061, "25h1m1s" } };
	char out[32], d[48];
	for (size_t i = 0; i < ARRAY_SIZE(go); i++) {
		cli_go_duration(go[i].s, out);
		ck_assert_str_eq(out, go[i].want);
	}
	json_t *cur = load(CURRENT), *leg = load(LEGACY);
	struct cli_wf_action a;
	int64_t now;
	ck_assert_int_eq(cli_parse_time("2026-01-01T00:10:00Z", &now), 0);
	ck_assert_int_eq(cli_wf_action_at(cur, 0, 0, &a), 0);
	cli_wf_action_duration(&a, now, d);
	ck_assert_str_eq(d, "1h2m3s"); /* stop - start */
	ck_assert_int_eq(cli_wf_action_at(cur, 0, 1, &a), 0);
	ck_assert_int_eq(a.attempts, 2);
	ck_assert_int_eq(a.retries, 3);
	ck_assert_int_eq(a.timeout, -1);
	cli_wf_action_duration(&a, now, d);
	ck_assert_str_eq(d, "10m0s so far"); /* running */
	ck_assert_int_eq(cli_wf_action_at(cur, 0, 2, &a), -ENOENT);
	ck_assert_int_eq(cli_wf_action_at(cur, 1, 0, &a), -ENOENT);
	ck_assert_int_eq(cli_wf_action_at(leg, 1, 0, &a), 0);
	ck_assert_str_eq(a.state, "STATE_TIMEOUT");
	ck_assert_str_eq(a.start, "2026-01-01T00:00:00Z");
	ck_assert_str_eq(a.agent, "w1");
	cli_wf_action_duration(&a, now, d);
	ck_assert_str_eq(d, "2m5s"); /* legacy seconds */
	ck_assert_int_eq(cli_wf_find_failed(leg, &a), 0);
	ck_assert_str_eq(a.name, "b1");
	ck_assert_str_eq(a.message, "timed out");
	ck_assert_int_eq(cli_wf_find_failed(cur, &a), -ENOENT);
	json_decref(cur);
	json_decref(leg);
}
END_TEST

START_TEST(test_retry_report)
{
	json_t *before =
		load("{\"status\":{\"tasks\":[{\"name\":\"t\",\"actions\":["
		     "{\"name\":\"ok\",\"state\":\"SUCCESS\",\"attempts\":1},"
		     "{\"name\":\"bad\",\"state\":\"FAILED\",\"attempts\":2,\"message\":\"m\"},"
		     "{\"name\":\"next\",\"state\":\"PENDING\"}]}]}}");
	json_t *after = json_deep_copy(before);
	json_t *acts = json_object_get(
		json_array_get(json_object_get(json_object_get(after, "status"), "tasks"), 0),
		"actions");
	json_t *bad = json_array_get(acts, 1);
	struct buf out = BUF_INIT(4096);
	ck_assert_int_eq(cli_wf_retry_report(before, after, &out), 0);
	ck_assert_uint_eq(out.len, 0);
	json_object_set_new(bad, "state", json_string("PENDING"));
	json_object_del(bad, "attempts");
	json_object_del(bad, "message");
	ck_assert_int_eq(cli_wf_retry_report(before, after, &out), 1);
	ck_assert_str_eq(out.data,
			 "  task t, action bad: FAILED -> PENDING (attempts 2 cleared)\n");
	buf_free(&out);
	json_decref(before);
	json_decref(after);
}
END_TEST

#define HW(name, mac) "{\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"interfaces\":[" mac "]}}"
#define WF(hw, extra) "{\"spec\":{\"hardwareRef\":\"" hw "\"" extra "}}"

START_TEST(test_pick)
{
	json_t *hw = load("[" HW("c", "") "," HW("a", "") "," HW("b", "") "]");
	size_t busy = 99;
	json_t *wfs = load("[]");
	ck_assert_int_eq(cli_wf_pick_hardware(hw, wfs, &busy), 1); /* "a": the smallest name */
	ck_assert_uint_eq(busy, 0);
	json_decref(wfs);
	/* a held (no status yet), b held (RUNNING); c's Workflows are
	 * finished or disabled */
	wfs = load("[" WF("a", "") "," WF("b", "},\"status\":{\"state\":\"RUNNING\"") "," WF(
		"c",
		"},\"status\":{\"state\":\"SUCCESS\"") "," WF("c",
							      ",\"disabled\":true") "," WF("c",
											   "},\"status\":{\"state\":\"STATE_FAILED\"") "]");
	ck_assert_int_eq(cli_wf_pick_hardware(hw, wfs, &busy), 0);
	ck_assert_uint_eq(busy, 2);
	json_array_append_new(wfs, load(WF("c", "},\"status\":{\"state\":\"STATE_RUNNING\"")));
	ck_assert_int_eq(cli_wf_pick_hardware(hw, wfs, &busy), -ENOENT);
	ck_assert_uint_eq(busy, 3);
	json_decref(wfs);
	wfs = load("[]");
	json_t *none = load("[]");
	ck_assert_int_eq(cli_wf_pick_hardware(none, wfs, &busy), -ENOENT);
	ck_assert_uint_eq(busy, 0);
	json_decref(none);
	json_decref(wfs);
	json_decref(hw);
}
END_TEST

START_TEST(test_provision)
{
	json_t *hw =
		load(HW("node1", "{\"netboot\":{}},{\"dhcp\":{\"mac\":\"02:00:00:00:00:01\"}}"));
	json_t *nomac = load(HW("node2", "{\"dhcp\":{}}"));
	char *maps[] = { "os=jammy", "device_2=x=y" };
	struct cli_provision p = {
		.template_ref = "ubuntu", .ns = "default", .maps = maps, .nmaps = 2, .netboot = true
	};
	json_t *wf = NULL;
	char msg[256];
	ck_assert_int_eq(cli_wf_provision_object(&p, hw, &wf, msg, sizeof(msg)), 0);
	char *s = json_dumps(wf, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(s, "{\"apiVersion\":\"tinkerbell.org/v1alpha1\",\"kind\":\"Workflow\","
			    "\"metadata\":{\"name\":\"ubuntu-node1\",\"namespace\":\"default\"},"
			    "\"spec\":{\"bootOptions\":{\"bootMode\":\"netboot\","
			    "\"toggleAllowNetboot\":true},\"hardwareMap\":{\"device_1\":"
			    "\"02:00:00:00:00:01\",\"device_2\":\"x=y\",\"os\":\"jammy\"},"
			    "\"hardwareRef\":\"node1\",\"templateRef\":\"ubuntu\"}}");
	free(s);
	json_decref(wf);
	wf = NULL;

	/* no MAC: refused unless --map gives device_1 */
	p.nmaps = 0;
	p.netboot = false;
	ck_assert_int_eq(cli_wf_provision_object(&p, nomac, &wf, msg, sizeof(msg)), -EINVAL);
	ck_assert_ptr_null(wf);
	ck_assert_ptr_nonnull(strstr(msg, "--map device_1="));
	char *mapd[] = { "device_1=aa" };
	p.maps = mapd;
	p.nmaps = 1;
	p.name = "mine";
	ck_assert_int_eq(cli_wf_provision_object(&p, nomac, &wf, msg, sizeof(msg)), 0);
	ck_assert_str_eq(cli_meta_string(wf, "name"), "mine");
	ck_assert_ptr_null(json_object_get(json_object_get(wf, "spec"), "bootOptions"));
	json_decref(wf);
	wf = NULL;

	/* bad --map entries, a name too long */
	static const char *const bad[] = { "novalue", "=x", "" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *one[] = { (char *)bad[i] };
		p.maps = one;
		ck_assert_int_eq(cli_wf_provision_object(&p, hw, &wf, msg, sizeof(msg)), -EINVAL);
		ck_assert_ptr_null(wf);
	}
	char longt[CLI_WF_NAME_MAX];
	memset(longt, 't', sizeof(longt) - 1);
	longt[sizeof(longt) - 1] = '\0';
	p.nmaps = 0;
	p.name = NULL;
	p.template_ref = longt;
	ck_assert_int_eq(cli_wf_provision_object(&p, hw, &wf, msg, sizeof(msg)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "give --name"));
	ck_assert_ptr_null(wf);
	json_decref(hw);
	json_decref(nomac);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cli_wf");
	TCase *tc = tcase_create("core");
	UNIT_TEST(tc, test_columns);
	UNIT_TEST(tc, test_terminal);
	UNIT_TEST(tc, test_durations);
	UNIT_TEST(tc, test_retry_report);
	UNIT_TEST(tc, test_pick);
	UNIT_TEST(tc, test_provision);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
