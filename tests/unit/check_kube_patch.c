/* check_kube_patch — the pure core of the status write-back (kube/patch.c):
 * merge patches that apply back to what they were computed for (and the
 * RFC 7386 examples), a null refused rather than sent as a deletion, the
 * Workflow status converted to tink's legacy shape and back, the schema
 * read from a CRD, the patches of one object and what a 409 asks for. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonmerge.h"
#include "kube/kube-internal.h"
#include "tests/unit/unit.h"

static json_t *json(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
	ck_assert_msg(v != NULL, "bad test JSON %s: %s", text, je.text);
	return v;
}

static void assert_json_eq(const json_t *got, const json_t *want, const char *what)
{
	if (json_equal((json_t *)got, (json_t *)want))
		return;
	char *g = got ? json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY) : strdup("NULL");
	char *w = want ? json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY) : strdup("NULL");
	ck_abort_msg("%s:\n got  %s\n want %s", what, g, w);
	free(g);
	free(w);
}

/* ---- merge diff and apply ---- */

static const struct {
	const char *from, *to, *patch; /* patch NULL: equal */
} diffs[] = {
	{ "{\"a\":{\"b\":1,\"c\":2}}", "{\"a\":{\"b\":1,\"c\":3}}", "{\"a\":{\"c\":3}}" },
	{ "{\"a\":1,\"b\":2}", "{\"a\":1}", "{\"b\":null}" },
	{ "{\"a\":{\"b\":{\"c\":1,\"d\":2}}}", "{\"a\":{\"b\":{\"c\":1}}}",
	  "{\"a\":{\"b\":{\"d\":null}}}" },
	{ "{\"a\":[1,2]}", "{\"a\":[1,3]}", "{\"a\":[1,3]}" },
	{ "{\"a\":[{\"x\":1}]}", "{\"a\":[{\"x\":1},{\"y\":null}]}",
	  "{\"a\":[{\"x\":1},{\"y\":null}]}" },
	{ "{\"a\":{\"b\":1}}", "{\"a\":\"x\"}", "{\"a\":\"x\"}" },
	{ "{\"a\":\"x\"}", "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1}}" },
	{ "{\"a\":[1]}", "{\"a\":{\"0\":1}}", "{\"a\":{\"0\":1}}" },
	{ "{\"a\":1}", "{\"a\":1.0}", "{\"a\":1.0}" },
	{ "{\"a\":true}", "{\"a\":false}", "{\"a\":false}" },
	{ "{}", "{\"a\":{\"b\":{\"c\":[1]}}}", "{\"a\":{\"b\":{\"c\":[1]}}}" },
	{ "{\"a\":null,\"b\":1}", "{\"a\":null,\"b\":2}", "{\"b\":2}" },
	{ "{\"a\":null}", "{}", "{\"a\":null}" },
	{ "{\"a\":{\"b\":1},\"c\":[1]}", "{\"a\":{\"b\":1},\"c\":[1]}", NULL },
	{ "{}", "{}", NULL },
	{ "[1]", "{\"a\":1}", "{\"a\":1}" },
	{ "{\"a\":1}", "[1]", "[1]" },
	{ "\"s\"", "\"t\"", "\"t\"" },
};

START_TEST(test_diff_round_trip)
{
	for (size_t i = 0; i < sizeof(diffs) / sizeof(diffs[0]); i++) {
		json_t *from = json(diffs[i].from), *to = json(diffs[i].to), *patch, *back;
		char err[256] = "";
		ck_assert_msg(json_merge_diff(from, to, &patch, err, sizeof(err)) == 0, "%zu: %s",
			      i, err);
		if (!diffs[i].patch) {
			ck_assert_msg(patch == NULL, "%zu: a patch between equal objects", i);
		} else {
			json_t *want = json(diffs[i].patch);
			assert_json_eq(patch, want, diffs[i].from);
			json_decref(want);
		}
		if (patch) {
			ck_assert_int_eq(json_merge_apply(from, patch, &back), 0);
			assert_json_eq(back, to, "apply(from, diff(from, to))");
			json_decref(back);
		} else {
			assert_json_eq(from, to, "no patch: equal");
		}
		json_decref(patch);
		json_decref(from);
		json_decref(to);
	}
}
END_TEST

START_TEST(test_diff_from_absent)
{
	json_t *to = json("{\"a\":{\"b\":1}}"), *patch, *back;
	ck_assert_int_eq(json_merge_diff(NULL, to, &patch, NULL, 0), 0);
	assert_json_eq(patch, to, "diff(NULL, to)");
	ck_assert_int_eq(json_merge_apply(NULL, patch, &back), 0);
	assert_json_eq(back, to, "apply(NULL, patch)");
	json_decref(back);
	json_decref(patch);
	json_decref(to);
}
END_TEST

/* A null member that the patch would carry: refused, with its path. */
static const struct {
	const char *from, *to, *path;
} nulls[] = {
	{ "{\"a\":1}", "{\"a\":null}", "a:" },
	{ "{}", "{\"x\":{\"y\":null}}", "x.y:" },
	{ "{\"s\":{\"t\":1}}", "{\"s\":{\"t\":null}}", "s.t:" },
	{ "{\"s\":\"v\"}", "{\"s\":{\"k\":{\"n\":null}}}", "s.k.n:" },
};

START_TEST(test_diff_null_refused)
{
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
		json_t *from = json(nulls[i].from), *to = json(nulls[i].to);
		json_t *patch = (json_t *)0x1;
		char err[256] = "";
		ck_assert_int_eq(json_merge_diff(from, to, &patch, err, sizeof(err)), -EINVAL);
		ck_assert_msg(patch == (json_t *)0x1, "ret_patch written on failure");
		ck_assert_msg(strstr(err, nulls[i].path) == err, "%zu: %s", i, err);
		json_decref(from);
		json_decref(to);
	}
}
END_TEST

static json_t *nested(int depth)
{
	json_t *v = json_integer(1);
	for (int i = 0; i < depth; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "n", v);
		v = o;
	}
	return v;
}

START_TEST(test_depth_limit)
{
	json_t *deep = nested(JSON_MERGE_MAX_DEPTH + 4), *shallow = json_object(), *out;
	char err[256] = "";
	ck_assert_int_eq(json_merge_diff(shallow, deep, &out, err, sizeof(err)), -E2BIG);
	ck_assert_ptr_nonnull(strstr(err, "deeper"));
	ck_assert_int_eq(json_merge_apply(shallow, deep, &out), -E2BIG);
	json_t *ok = nested(JSON_MERGE_MAX_DEPTH - 2), *back;
	ck_assert_int_eq(json_merge_diff(shallow, ok, &out, NULL, 0), 0);
	ck_assert_int_eq(json_merge_apply(shallow, out, &back), 0);
	assert_json_eq(back, ok, "deep but within the limit");
	json_decref(back);
	json_decref(out);
	json_decref(ok);
	json_decref(deep);
	json_decref(shallow);
}
END_TEST

/* RFC 7386 Appendix A. */
static const struct {
	const char *target, *patch, *result;
} rfc[] = {
	{ "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
	{ "{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}" },
	{ "{\"a\":\"b\"}", "{\"a\":null}", "{}" },
	{ "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}" },
	{ "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
	{ "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}" },
	{ "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}" },
	{ "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}" },
	{ "[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]" },
	{ "{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]" },
	{ "{\"a\":\"foo\"}", "null", "null" },
	{ "{\"a\":\"foo\"}", "\"bar\"", "\"bar\"" },
	{ "{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}" },
	{ "[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}" },
	{ "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}" },
};

START_TEST(test_apply_rfc7386)
{
	for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		json_t *t = json(rfc[i].target), *p = json(rfc[i].patch),
		       *want = json(rfc[i].result);
		json_t *out;
		ck_assert_int_eq(json_merge_apply(t, p, &out), 0);
		assert_json_eq(out, want, rfc[i].patch);
		json_t *t2 = json(rfc[i].target);
		assert_json_eq(t, t2, "the target is not changed");
		json_decref(t2);
		json_decref(out);
		json_decref(want);
		json_decref(p);
		json_decref(t);
	}
}
END_TEST

/* ---- Go durations ---- */

static const struct {
	const char *s;
	int r;
	int64_t ns;
} durations[] = {
	{ "0", 0, 0 },
	{ "0s", 0, 0 },
	{ "1m2s", 0, 62000000000 },
	{ "350ms", 0, 350000000 },
	{ "1.5h", 0, 5400000000000 },
	{ "1h0m5.25s", 0, 3605250000000 },
	{ "-1m", 0, -60000000000 },
	{ "+2s", 0, 2000000000 },
	{ "2us", 0, 2000 },
	{ "3\xc2\xb5s", 0, 3000 },
	{ "4\xce\xbcs", 0, 4000 },
	{ "7ns", 0, 7 },
	{ "1.s", 0, 1000000000 },
	{ ".5s", 0, 500000000 },
	{ "2562047h47m16.854775807s", 0, INT64_MAX },
	{ "", -EINVAL, 0 },
	{ "1", -EINVAL, 0 },
	{ "s", -EINVAL, 0 },
	{ "-", -EINVAL, 0 },
	{ ".s", -EINVAL, 0 },
	{ "1x", -EINVAL, 0 },
	{ "1s2", -EINVAL, 0 },
	{ "--1s", -EINVAL, 0 },
	{ "1e3s", -EINVAL, 0 },
	{ "1 s", -EINVAL, 0 },
	{ "1sm", -EINVAL, 0 },
	{ "99999999999999999999h", -ERANGE, 0 },
	{ "2562048h", -ERANGE, 0 },
	{ "1111111111111111111111111111111111111111111111111111111111111111111s", -EINVAL, 0 },
};

START_TEST(test_go_duration)
{
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		int64_t ns = 12345;
		int r = kube_go_duration_ns(durations[i].s, strlen(durations[i].s), &ns);
		ck_assert_msg(r == durations[i].r, "%s: %d", durations[i].s, r);
		if (r == 0)
			ck_assert_msg(ns == durations[i].ns, "%s: %lld", durations[i].s,
				      (long long)ns);
		else
			ck_assert_msg(ns == 12345, "%s: written on failure", durations[i].s);
	}
}
END_TEST

/* ---- the Workflow status, monorepo and legacy ---- */

/* As the engine writes it: the second action ran, the third is handed
 * out, with the engine's bookkeeping on the actions. */
static const char monorepo_status[] =
	"{\"agentID\":\"52:54:00:aa:bb:01\",\"state\":\"RUNNING\","
	"\"templateRendering\":\"successful\",\"globalTimeout\":1800,"
	"\"globalExecutionStop\":\"2026-11-25T22:31:00Z\","
	"\"bootOptions\":{\"allowNetboot\":{\"toggledTrue\":true},"
	"\"jobs\":{\"netboot-wf1\":{\"uid\":\"u-1\",\"complete\":true,\"existingJobDeleted\":true}}},"
	"\"currentState\":{\"agentID\":\"52:54:00:aa:bb:01\",\"taskID\":\"01JT\","
	"\"actionID\":\"01JA3\",\"state\":\"RUNNING\",\"actionName\":\"kexec\","
	"\"taskName\":\"os-installation\"},"
	"\"conditions\":[{\"type\":\"TemplateRenderedSuccess\",\"status\":\"True\","
	"\"reason\":\"Complete\",\"message\":\"rendered\",\"time\":\"2026-11-25T22:00:00Z\"}],"
	"\"tasks\":[{\"id\":\"01JT\",\"name\":\"os-installation\","
	"\"agentID\":\"52:54:00:aa:bb:01\",\"volumes\":[\"/dev:/dev\"],"
	"\"environment\":{\"A\":\"1\"},\"actions\":["
	"{\"id\":\"01JA1\",\"name\":\"stream-image\",\"image\":\"quay.io/tinkerbell/actions/image2disk\","
	"\"timeout\":600,\"environment\":{\"DEST_DISK\":\"/dev/sda\"},\"state\":\"SUCCESS\","
	"\"executionStart\":\"2026-11-25T22:01:00Z\",\"executionStop\":\"2026-11-25T22:02:02Z\","
	"\"executionDuration\":\"1m2.5s\",\"message\":\"done\",\"attempts\":1},"
	"{\"id\":\"01JA2\",\"name\":\"write-file\",\"image\":\"writefile\",\"timeout\":90,"
	"\"command\":[\"/bin/sh\"],\"pid\":\"host\",\"namespaces\":{\"pid\":\"host\"},"
	"\"state\":\"SUCCESS\",\"executionStart\":\"2026-11-25T22:02:03Z\","
	"\"executionStop\":\"2026-11-25T22:02:03Z\",\"executionDuration\":\"350ms\","
	"\"retries\":2,\"attempts\":2},"
	"{\"id\":\"01JA3\",\"name\":\"kexec\",\"image\":\"kexec\",\"timeout\":90,"
	"\"state\":\"RUNNING\",\"executionStart\":\"2026-11-25T22:02:05Z\","
	"\"deadline\":\"2026-11-25T22:04:05Z\",\"attempts\":1}]}]}";

static const char legacy_status[] =
	"{\"state\":\"STATE_RUNNING\",\"templateRending\":\"successful\",\"globalTimeout\":1800,"
	"\"bootOptions\":{\"allowNetboot\":{\"toggledTrue\":true},"
	"\"jobs\":{\"netboot-wf1\":{\"uid\":\"u-1\",\"complete\":true,\"existingJobDeleted\":true}}},"
	"\"currentAction\":\"kexec\","
	"\"conditions\":[{\"type\":\"TemplateRenderedSuccess\",\"status\":\"True\","
	"\"reason\":\"Complete\",\"message\":\"rendered\",\"time\":\"2026-11-25T22:00:00Z\"}],"
	"\"tasks\":[{\"name\":\"os-installation\",\"worker\":\"52:54:00:aa:bb:01\","
	"\"volumes\":[\"/dev:/dev\"],\"environment\":{\"A\":\"1\"},\"actions\":["
	"{\"name\":\"stream-image\",\"image\":\"quay.io/tinkerbell/actions/image2disk\","
	"\"timeout\":600,\"environment\":{\"DEST_DISK\":\"/dev/sda\"},\"status\":\"STATE_SUCCESS\","
	"\"startedAt\":\"2026-11-25T22:01:00Z\",\"seconds\":62,\"message\":\"done\"},"
	"{\"name\":\"write-file\",\"image\":\"writefile\",\"timeout\":90,"
	"\"command\":[\"/bin/sh\"],\"pid\":\"host\",\"status\":\"STATE_SUCCESS\","
	"\"startedAt\":\"2026-11-25T22:02:03Z\",\"seconds\":0},"
	"{\"name\":\"kexec\",\"image\":\"kexec\",\"timeout\":90,\"status\":\"STATE_RUNNING\","
	"\"startedAt\":\"2026-11-25T22:02:05Z\"}]}]}";

START_TEST(test_to_legacy)
{
	json_t *mono = json(monorepo_status), *want = json(legacy_status), *got, *again;
	char err[256] = "";
	ck_assert_msg(kube_status_to_legacy(mono, &got, err, sizeof(err)) == 0, "%s", err);
	assert_json_eq(got, want, "to_legacy(monorepo status)");
	/* idempotent: a legacy status stays as it is */
	ck_assert_int_eq(kube_status_to_legacy(got, &again, err, sizeof(err)), 0);
	assert_json_eq(again, want, "to_legacy(legacy status)");
	json_decref(again);
	json_decref(got);
	json_decref(want);
	json_decref(mono);
}
END_TEST

START_TEST(test_to_legacy_states)
{
	static const char *const pairs[][2] = {
		{ "PREPARING", "STATE_PREPARING" },
		{ "PENDING", "STATE_PENDING" },
		{ "RUNNING", "STATE_RUNNING" },
		{ "POST", "STATE_POST" },
		{ "SUCCESS", "STATE_SUCCESS" },
		{ "FAILED", "STATE_FAILED" },
		{ "TIMEOUT", "STATE_TIMEOUT" },
		{ "STATE_FAILED", "STATE_FAILED" },
		{ "Bogus", "Bogus" },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		json_t *st = json_pack("{s:s}", "state", pairs[i][0]), *out;
		ck_assert_int_eq(kube_status_to_legacy(st, &out, NULL, 0), 0);
		ck_assert_str_eq(json_string_value(json_object_get(out, "state")), pairs[i][1]);
		json_decref(out);
		json_decref(st);
	}
	/* an empty status stays empty (no state "" written) */
	json_t *st = json_object(), *out;
	ck_assert_int_eq(kube_status_to_legacy(st, &out, NULL, 0), 0);
	ck_assert_int_eq(json_object_size(out), 0);
	json_decref(out);
	json_decref(st);
}
END_TEST

static const struct {
	const char *status, *err;
} bad_statuses[] = {
	{ "[]", "status: not an object" },
	{ "{\"tasks\":{}}", "status.tasks: not an array" },
	{ "{\"tasks\":[1]}", "status.tasks[0]: not an object" },
	{ "{\"tasks\":[{\"actions\":\"x\"}]}", "status.tasks[0].actions: not an array" },
	{ "{\"tasks\":[{\"actions\":[{},null]}]}", "status.tasks[0].actions[1]: not an object" },
	{ "{\"tasks\":[{},{\"actions\":[{\"executionDuration\":\"5 minutes\"}]}]}",
	  "status.tasks[1].actions[0].executionDuration: not a Go duration" },
};

START_TEST(test_to_legacy_bad)
{
	for (size_t i = 0; i < sizeof(bad_statuses) / sizeof(bad_statuses[0]); i++) {
		json_t *st = json(bad_statuses[i].status), *out = (json_t *)0x1;
		char err[256] = "";
		ck_assert_int_eq(kube_status_to_legacy(st, &out, err, sizeof(err)), -EINVAL);
		ck_assert_str_eq(err, bad_statuses[i].err);
		ck_assert_msg(out == (json_t *)0x1, "ret written on failure");
		json_decref(st);
	}
}
END_TEST

/* The echo of the daemon's own legacy write gives the store's status back
 * whole: IDs, exact durations and the engine's bookkeeping kept. */
START_TEST(test_from_legacy_echo)
{
	json_t *mono = json(monorepo_status), *leg, *back;
	ck_assert_int_eq(kube_status_to_legacy(mono, &leg, NULL, 0), 0);
	ck_assert_int_eq(kube_status_from_legacy(leg, mono, &back, NULL, 0), 0);
	assert_json_eq(back, mono, "from_legacy(to_legacy(s), s)");
	json_decref(back);
	json_decref(leg);
	json_decref(mono);
}
END_TEST

/* A legacy status that moved on in the cluster: renamed back, IDs from
 * the store's copy, and to_legacy() of that is the legacy status again. */
START_TEST(test_from_legacy_changed)
{
	json_t *mono = json(monorepo_status), *leg = json(legacy_status), *back, *again;
	json_t *kexec = json_array_get(
		json_object_get(json_array_get(json_object_get(leg, "tasks"), 0), "actions"), 2);
	json_object_set_new(kexec, "status", json_string("STATE_SUCCESS"));
	json_object_set_new(kexec, "seconds", json_integer(3725));
	json_object_set_new(leg, "state", json_string("STATE_SUCCESS"));
	char err[256] = "";
	ck_assert_msg(kube_status_from_legacy(leg, mono, &back, err, sizeof(err)) == 0, "%s", err);

	ck_assert_str_eq(json_string_value(json_object_get(back, "state")), "SUCCESS");
	ck_assert_str_eq(json_string_value(json_object_get(back, "templateRendering")),
			 "successful");
	ck_assert_str_eq(json_string_value(json_object_get(back, "agentID")), "52:54:00:aa:bb:01");
	ck_assert_ptr_null(json_object_get(back, "currentAction"));
	json_t *want_cs = json("{\"agentID\":\"52:54:00:aa:bb:01\",\"taskID\":\"01JT\","
			       "\"actionID\":\"01JA3\",\"state\":\"SUCCESS\","
			       "\"actionName\":\"kexec\",\"taskName\":\"os-installation\"}");
	assert_json_eq(json_object_get(back, "currentState"), want_cs, "currentState");
	json_t *t0 = json_array_get(json_object_get(back, "tasks"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(t0, "id")), "01JT");
	ck_assert_str_eq(json_string_value(json_object_get(t0, "agentID")), "52:54:00:aa:bb:01");
	json_t *acts = json_object_get(t0, "actions");
	json_t *a0 = json_array_get(acts, 0), *a2 = json_array_get(acts, 2);
	/* 62 s said again: the store's "1m2.5s" kept */
	ck_assert_str_eq(json_string_value(json_object_get(a0, "executionDuration")), "1m2.5s");
	ck_assert_str_eq(json_string_value(json_object_get(a0, "executionStart")),
			 "2026-11-25T22:01:00Z");
	ck_assert_str_eq(json_string_value(json_object_get(a2, "id")), "01JA3");
	ck_assert_str_eq(json_string_value(json_object_get(a2, "state")), "SUCCESS");
	ck_assert_str_eq(json_string_value(json_object_get(a2, "executionDuration")), "1h2m5s");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(acts, 1), "retries")),
			 2);

	ck_assert_int_eq(kube_status_to_legacy(back, &again, NULL, 0), 0);
	assert_json_eq(again, leg, "to_legacy(from_legacy(legacy))");
	json_decref(again);
	json_decref(want_cs);
	json_decref(back);
	json_decref(leg);
	json_decref(mono);
}
END_TEST

/* Without the store's copy (or with tasks it does not have) the IDs cannot
 * be had: the legacy status is kept as it is, for the engine's own legacy
 * handling. A status that is not legacy is kept too. */
START_TEST(test_from_legacy_kept)
{
	json_t *mono = json(monorepo_status), *leg = json(legacy_status), *out;
	ck_assert_int_eq(kube_status_from_legacy(leg, NULL, &out, NULL, 0), 0);
	assert_json_eq(out, leg, "no prev");
	json_decref(out);

	json_t *other = json(legacy_status);
	json_object_set_new(json_array_get(json_object_get(other, "tasks"), 0), "name",
			    json_string("another-task"));
	ck_assert_int_eq(kube_status_from_legacy(other, mono, &out, NULL, 0), 0);
	assert_json_eq(out, other, "tasks the store does not know");
	json_decref(out);
	json_decref(other);

	ck_assert_int_eq(kube_status_from_legacy(mono, leg, &out, NULL, 0), 0);
	assert_json_eq(out, mono, "not legacy");
	json_decref(out);

	json_t *bad =
		json("{\"state\":\"STATE_RUNNING\",\"tasks\":[{\"name\":\"x\",\"actions\":7}]}");
	char err[256] = "";
	ck_assert_int_eq(kube_status_from_legacy(bad, mono, &out, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "status.tasks[0].actions: not an array");
	json_decref(bad);
	json_decref(leg);
	json_decref(mono);
}
END_TEST

/* The echo of a legacy write through tink's oldest CRD, which lists only
 * state, globalTimeout and tasks: what the API server dropped is not
 * lost (bootOptions.allowNetboot says what the cleanup must undo). */
START_TEST(test_from_legacy_pruned_echo)
{
	json_t *mono = json(monorepo_status), *leg, *back;
	ck_assert_int_eq(kube_status_to_legacy(mono, &leg, NULL, 0), 0);
	json_object_del(leg, "currentAction");
	json_object_del(leg, "templateRending");
	json_object_del(leg, "bootOptions");
	json_object_del(leg, "conditions");
	ck_assert_int_eq(kube_status_from_legacy(leg, mono, &back, NULL, 0), 0);
	assert_json_eq(back, mono, "from_legacy(pruned echo, s)");
	json_decref(back);
	json_decref(leg);
	json_decref(mono);
}
END_TEST

/* Drops the engine's own fields from every action, as the monorepo's CRD
 * (which does not list them) makes the API server do. */
static void prune_engine_fields(json_t *status)
{
	json_t *tasks = json_object_get(status, "tasks");
	for (size_t i = 0; i < json_array_size(tasks); i++) {
		json_t *as = json_object_get(json_array_get(tasks, i), "actions");
		for (size_t j = 0; j < json_array_size(as); j++) {
			json_t *a = json_array_get(as, j);
			json_object_del(a, "retries");
			json_object_del(a, "attempts");
			json_object_del(a, "deadline");
			json_object_del(a, "retryAfter");
		}
	}
}

START_TEST(test_mirror)
{
	json_t *mono = json(monorepo_status), *out;
	char err[256] = "";

	/* monorepo: the pruned echo keeps the store's status whole */
	json_t *pruned = json(monorepo_status);
	prune_engine_fields(pruned);
	ck_assert(!json_equal(pruned, mono));
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_WORKFLOW, pruned, mono, KUBE_STATUS_MONOREPO,
					    &out, err, sizeof(err)),
			 0);
	assert_json_eq(out, mono, "pruned monorepo echo");
	json_decref(out);

	/* an older status (before the writer sent the newer one) keeps it too */
	json_t *older = json(monorepo_status);
	json_object_del(
		json_array_get(json_object_get(json_array_get(json_object_get(older, "tasks"), 0),
					       "actions"),
			       2),
		"executionStart");
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_WORKFLOW, older, mono, KUBE_STATUS_MONOREPO,
					    &out, err, sizeof(err)),
			 0);
	assert_json_eq(out, mono, "older status");
	json_decref(out);

	/* another controller changed a value: the cluster's status wins */
	json_object_set_new(pruned, "state", json_string("FAILED"));
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_WORKFLOW, pruned, mono, KUBE_STATUS_MONOREPO,
					    &out, err, sizeof(err)),
			 0);
	assert_json_eq(out, pruned, "changed elsewhere");
	json_decref(out);

	/* legacy: the echo of the legacy write gives the store's status */
	json_t *leg;
	ck_assert_int_eq(kube_status_to_legacy(mono, &leg, NULL, 0), 0);
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_WORKFLOW, leg, mono, KUBE_STATUS_LEGACY,
					    &out, err, sizeof(err)),
			 0);
	assert_json_eq(out, mono, "legacy echo");
	json_decref(out);

	/* nothing in the store: the cluster's, as it is (legacy included) */
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_WORKFLOW, leg, NULL, KUBE_STATUS_LEGACY,
					    &out, err, sizeof(err)),
			 0);
	assert_json_eq(out, leg, "no prev");
	json_decref(out);

	/* no status in the cluster yet: the store's stays; neither: none */
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_WORKFLOW, NULL, mono, KUBE_STATUS_MONOREPO,
					    &out, err, sizeof(err)),
			 0);
	assert_json_eq(out, mono, "no cluster status");
	json_decref(out);
	out = (json_t *)0x1;
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_MACHINE, NULL, NULL, KUBE_STATUS_MONOREPO,
					    &out, err, sizeof(err)),
			 0);
	ck_assert_ptr_null(out);

	/* another kind: copied when it is not an echo */
	json_t *m_prev = json("{\"powerState\":\"on\"}"), *m_new = json("{\"powerState\":\"off\"}");
	ck_assert_int_eq(kube_status_mirror(STORE_KIND_MACHINE, m_new, m_prev, KUBE_STATUS_LEGACY,
					    &out, err, sizeof(err)),
			 0);
	assert_json_eq(out, m_new, "Machine status");
	json_decref(out);
	json_decref(m_new);
	json_decref(m_prev);
	json_decref(leg);
	json_decref(older);
	json_decref(pruned);
	json_decref(mono);
}
END_TEST

/* ---- the schema from the CRD ---- */

static json_t *crd(const char *version, const char *status_props)
{
	char text[2048];
	snprintf(
		text, sizeof(text),
		"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
		"\"metadata\":{\"name\":\"workflows.tinkerbell.org\"},"
		"\"spec\":{\"group\":\"tinkerbell.org\",\"versions\":["
		"{\"name\":\"v1alpha2\",\"served\":false,\"schema\":{\"openAPIV3Schema\":"
		"{\"properties\":{\"status\":{\"properties\":{\"currentAction\":{}}}}}}},"
		"{\"name\":\"%s\",\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":"
		"{\"type\":\"object\",\"properties\":{\"status\":%s}}}}]}}",
		version, status_props);
	return json(text);
}

static const struct {
	const char *version, *status;
	enum kube_status_schema want;
} crds[] = {
	/* the monorepo's */
	{ "v1alpha1",
	  "{\"type\":\"object\",\"properties\":{\"state\":{},\"currentState\":{\"type\":\"object\"},"
	  "\"templateRendering\":{},\"agentID\":{}}}",
	  KUBE_STATUS_MONOREPO },
	/* the monorepo's first CRDs: currentState, but tink's spelling kept */
	{ "v1alpha1",
	  "{\"properties\":{\"agentID\":{},\"currentState\":{},\"templateRending\":{},"
	  "\"tasks\":{\"items\":{\"properties\":{\"agentID\":{},\"id\":{}}}}}}",
	  KUBE_STATUS_MONOREPO },
	/* tink v0.10-v0.12 */
	{ "v1alpha1",
	  "{\"type\":\"object\",\"properties\":{\"state\":{},\"currentAction\":{},"
	  "\"templateRending\":{},\"tasks\":{\"items\":{\"properties\":{\"worker\":{}}}}}}",
	  KUBE_STATUS_LEGACY },
	{ "v1alpha1", "{\"properties\":{\"templateRending\":{}}}", KUBE_STATUS_LEGACY },
	/* older tink: no currentAction yet, only tasks with their worker */
	{ "v1alpha1",
	  "{\"type\":\"object\",\"properties\":{\"state\":{},\"globalTimeout\":{},"
	  "\"tasks\":{\"type\":\"array\",\"items\":{\"properties\":{\"name\":{},\"worker\":{},"
	  "\"actions\":{}}}}}}",
	  KUBE_STATUS_LEGACY },
	/* a schema that keeps anything */
	{ "v1alpha1", "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}",
	  KUBE_STATUS_MONOREPO },
	{ "v1alpha1", "{\"properties\":{\"state\":{}}}", KUBE_STATUS_MONOREPO },
	{ "v1alpha1", "\"garbage\"", KUBE_STATUS_MONOREPO },
	/* no v1alpha1 at all: the v1alpha2 entry's legacy-looking status is not read */
	{ "v1beta1", "{\"properties\":{\"currentAction\":{}}}", KUBE_STATUS_MONOREPO },
};

START_TEST(test_schema_from_crd)
{
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		json_t *c = crd(crds[i].version, crds[i].status);
		ck_assert_msg(kube_schema_from_crd(c) == crds[i].want, "%zu", i);
		json_decref(c);
	}
	ck_assert_int_eq(kube_schema_from_crd(NULL), KUBE_STATUS_MONOREPO);
	json_t *empty = json_object();
	ck_assert_int_eq(kube_schema_from_crd(empty), KUBE_STATUS_MONOREPO);
	json_decref(empty);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kube_patch");
	TCase *tc = tcase_create("patch");
	UNIT_TEST(tc, test_diff_round_trip);
	UNIT_TEST(tc, test_diff_from_absent);
	UNIT_TEST(tc, test_diff_null_refused);
	UNIT_TEST(tc, test_depth_limit);
	UNIT_TEST(tc, test_apply_rfc7386);
	UNIT_TEST(tc, test_go_duration);
	UNIT_TEST(tc, test_to_legacy);
	UNIT_TEST(tc, test_to_legacy_states);
	UNIT_TEST(tc, test_to_legacy_bad);
	UNIT_TEST(tc, test_from_legacy_echo);
	UNIT_TEST(tc, test_from_legacy_changed);
	UNIT_TEST(tc, test_from_legacy_kept);
	UNIT_TEST(tc, test_from_legacy_pruned_echo);
	UNIT_TEST(tc, test_mirror);
	UNIT_TEST(tc, test_schema_from_crd);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
