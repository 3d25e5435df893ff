/* check_template_schema — a rendered template's YAML to struct
 * wf_template (workflow/template-schema.c): the playground's Ubuntu
 * template parsed field by field, each validation rule with its message,
 * path, line and column, all the errors of one template listed together,
 * unknown keys as warnings, malformed YAML and odd values, and
 * wf_template_load()'s stages. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "workflow/workflow.h"

static const char *env_get(const struct wf_env *e, const char *key)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->keys[i], key) == 0)
			return e->values[i];
	return NULL;
}

/* The rendered playground template, as Tinkerbell's Go structs hold it. */
START_TEST(test_ubuntu)
{
	size_t n;
	char *text = unit_fixture("template-ubuntu.out", WF_TMPL_MAX_SIZE, &n);
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	int r = wf_template_parse(text, n, &t, &rep);
	ck_assert_msg(r == 0, "%d %s", r, rep.error);
	ck_assert_uint_eq(rep.errors, 0);
	ck_assert_uint_eq(rep.warnings, 0);
	ck_assert_str_eq(t->version, "0.1");
	ck_assert_str_eq(t->name, "ubuntu");
	ck_assert_str_eq(t->id, "");
	ck_assert_int_eq(t->global_timeout, 1800);
	ck_assert_uint_eq(t->n_tasks, 1);
	struct wf_task *k = &t->tasks[0];
	ck_assert_str_eq(k->name, "os installation");
	ck_assert_str_eq(k->worker, "08:00:27:9e:f5:3a");
	ck_assert_uint_eq(k->volumes.n, 1);
	ck_assert_str_eq(k->volumes.v[0], "/dev:/dev");
	ck_assert_uint_eq(k->environment.n, 0);
	ck_assert_uint_eq(k->n_actions, 8);
	struct wf_action *a = &k->actions[0];
	ck_assert_str_eq(a->name, "stream ubuntu image");
	ck_assert_str_eq(a->image, "quay.io/tinkerbell/actions/image2disk:latest");
	ck_assert_int_eq(a->timeout, 600);
	ck_assert_uint_eq(a->environment.n, 3);
	ck_assert_str_eq(a->environment.keys[0], "DEST_DISK");
	ck_assert_str_eq(env_get(&a->environment, "DEST_DISK"), "/dev/nvme0n1");
	ck_assert_str_eq(env_get(&a->environment, "IMG_URL"),
			 "http://10.1.1.1:7173/jammy-server-cloudimg-amd64.raw.gz");
	/* a YAML boolean in a Go string is its source text */
	ck_assert_str_eq(env_get(&a->environment, "COMPRESSED"), "true");
	ck_assert_uint_eq(a->command.n, 0);
	ck_assert_uint_eq(a->retries, 0);
	ck_assert_str_eq(a->pid, "");
	a = &k->actions[1];
	ck_assert_str_eq(a->name, "grow-partition");
	ck_assert_str_eq(a->image, "quay.io/tinkerbell/actions/cexec:latest");
	ck_assert_int_eq(a->timeout, 180);
	ck_assert_str_eq(env_get(&a->environment, "CMD_LINE"),
			 "growpart /dev/nvme0n1 1 && resize2fs /dev/nvme0n1p1");
	ck_assert_str_eq(env_get(&a->environment, "CHROOT"), "y");
	a = &k->actions[6];
	ck_assert_str_eq(a->name, "write netplan");
	ck_assert_int_eq(a->timeout, 90);
	/* 0644 stays "0644", not 644 nor 420 */
	ck_assert_str_eq(env_get(&a->environment, "MODE"), "0644");
	ck_assert_str_eq(env_get(&a->environment, "DIRMODE"), "0755");
	ck_assert_str_eq(env_get(&a->environment, "UID"), "0");
	ck_assert_ptr_nonnull(
		strstr(env_get(&a->environment, "CONTENTS"), "  renderer: networkd\n"));
	a = &k->actions[7];
	ck_assert_str_eq(a->name, "kexec into os");
	ck_assert_str_eq(a->image, "ghcr.io/jacobweinstock/waitdaemon:latest");
	ck_assert_str_eq(a->pid, "host");
	ck_assert_str_eq(env_get(&a->environment, "WAIT_SECONDS"), "5");
	ck_assert_uint_eq(a->volumes.n, 1);
	ck_assert_str_eq(a->volumes.v[0], "/var/run/docker.sock:/var/run/docker.sock");
	wf_template_free(t);
	free(text);
}
END_TEST

/* Every field of an action, and namespaces. */
START_TEST(test_fields)
{
	static const char text[] = "version: 0.1\n"
				   "name: full\n"
				   "id: 1234\n"
				   "global_timeout: 60\n"
				   "tasks:\n"
				   "  - name: t\n"
				   "    worker: w\n"
				   "    environment: {TASK: 'x', EMPTY: , F: 1.10}\n"
				   "    actions:\n"
				   "      - name: a\n"
				   "        image: docker.io/library/alpine@sha256:0123abcd\n"
				   "        timeout: 0\n"
				   "        command: [sh, -c, 'echo hi', 7]\n"
				   "        on-timeout: [echo, timeout]\n"
				   "        on-failure: [echo, failure]\n"
				   "        volumes: ['/a:/b:ro', 'vol:/c:rw,z']\n"
				   "        namespaces: {network: host, pid: host}\n"
				   "        retries: 100\n";
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	int r = wf_template_parse(text, strlen(text), &t, &rep);
	ck_assert_msg(r == 0, "%s", rep.error);
	ck_assert_str_eq(t->version, "0.1");
	ck_assert_str_eq(t->id, "1234");
	struct wf_task *k = &t->tasks[0];
	ck_assert_str_eq(env_get(&k->environment, "TASK"), "x");
	ck_assert_str_eq(env_get(&k->environment, "EMPTY"), "");
	ck_assert_str_eq(env_get(&k->environment, "F"), "1.10");
	struct wf_action *a = &k->actions[0];
	ck_assert_int_eq(a->timeout, 0);
	ck_assert_uint_eq(a->command.n, 4);
	ck_assert_str_eq(a->command.v[2], "echo hi");
	ck_assert_str_eq(a->command.v[3], "7");
	ck_assert_str_eq(a->on_timeout.v[1], "timeout");
	ck_assert_str_eq(a->on_failure.v[1], "failure");
	ck_assert_str_eq(a->volumes.v[1], "vol:/c:rw,z");
	ck_assert_str_eq(a->ns_network, "host");
	ck_assert_str_eq(a->ns_pid, "host");
	ck_assert_uint_eq(a->retries, 100);
	wf_template_free(t);
}
END_TEST

/* A minimal template around one bad piece: %s is the action's lines,
 * from line 6, column 9 on. */
#define ACTION_HEAD "name: t\ntasks:\n  - name: task\n    worker: w\n    actions:\n"

struct bad {
	const char *text;
	const char *error; /* the whole report */
};

static const struct bad bads[] = {
	/* names */
	{ "tasks:\n  - name: t\n    worker: w\n    actions: [{name: a, image: i}]\n",
	  "name: a name is required (line 1, column 1)" },
	{ "name: ''\ntasks:\n  - name: t\n    worker: w\n    actions: [{name: a, image: i}]\n",
	  "name: a name must be 1 to 199 characters long, not 0 (line 1, column 7)" },
	{ ACTION_HEAD
	  "      - name: "
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n        image: i\n",
	  "tasks[0].actions[0].name: a name must be 1 to 199 characters long, not 200"
	  " (line 6, column 15)" },
	/* tasks */
	{ "name: t\n", "tasks: a template needs at least one task (line 1, column 1)" },
	{ "name: t\ntasks: []\n", "tasks: a template needs at least one task (line 2, column 8)" },
	{ "name: t\ntasks: {a: b}\n", "tasks: must be a list of tasks (line 2, column 8)" },
	{ "name: t\ntasks:\n  - name: a\n    worker: w\n    actions: [{name: a, image: i}]\n"
	  "  - name: a\n    worker: w\n    actions: [{name: a, image: i}]\n",
	  "tasks[1].name: duplicate task name \"a\" (line 6, column 11)" },
	{ "name: t\ntasks:\n  - name: a\n    worker: ''\n    actions: [{name: a, image: i}]\n",
	  "tasks[0].worker: a worker is required (it rendered empty) (line 4, column 13)" },
	{ "name: t\ntasks:\n  - name: a\n    actions: [{name: a, image: i}]\n",
	  "tasks[0].worker: a worker is required (it rendered empty) (line 3, column 5)" },
	{ "name: t\ntasks:\n  - name: a\n    worker: w\n",
	  "tasks[0].actions: a task needs at least one action (line 3, column 5)" },
	{ "name: t\ntasks:\n  - name: a\n    worker: w\n    actions:\n",
	  "tasks[0].actions: a task needs at least one action (line 5, column 13)" },
	{ "name: t\ntasks: [oops]\n",
	  "tasks[0]: a task must be a mapping, not a string (line 2, column 9)" },
	/* actions */
	{ ACTION_HEAD "      - name: x\n        image: i\n      - name: y\n        image: i\n"
		      "      - name: x\n        image: i\n",
	  "tasks[0].actions[2].name: duplicate action name \"x\" (line 10, column 15)" },
	{ ACTION_HEAD "      - name: x\n",
	  "tasks[0].actions[0].image: an image is required (line 6, column 9)" },
	{ ACTION_HEAD "      - name: x\n        image: 'quay.io/a b'\n",
	  "tasks[0].actions[0].image: image reference has an invalid character 0x20"
	  " (line 7, column 16)" },
	{ ACTION_HEAD "      - name: x\n        image: 'alpine:'\n",
	  "tasks[0].actions[0].image: malformed image reference (line 7, column 16)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        timeout: -1\n",
	  "tasks[0].actions[0].timeout: -1 is not an integer in 0..31536000 (line 8, column 18)" },
	{ ACTION_HEAD
	  "      - name: x\n        image: i\n        timeout: 99999999999999999999999\n",
	  "tasks[0].actions[0].timeout: 99999999999999999999999 is not an integer in 0..31536000"
	  " (line 8, column 18)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        timeout: '60'\n",
	  "tasks[0].actions[0].timeout: must be an integer, not a string (line 8, column 18)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        timeout: 1.5\n",
	  "tasks[0].actions[0].timeout: 1.5 is not an integer in 0..31536000 (line 8, column 18)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        retries: 101\n",
	  "tasks[0].actions[0].retries: 101 is not an integer in 0..100 (line 8, column 18)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        command: sh\n",
	  "tasks[0].actions[0].command: must be a list, not a string (line 8, column 18)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        command: [[a]]\n",
	  "tasks[0].actions[0].command[0]: must be a string, not a list (line 8, column 19)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        environment: [A=1]\n",
	  "tasks[0].actions[0].environment: must be a mapping, not a list (line 8, column 22)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        environment: {A: [1]}\n",
	  "tasks[0].actions[0].environment.A: must be a string, not a list (line 8, column 26)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        environment: {'A=B': 1}\n",
	  "tasks[0].actions[0].environment[\"A=B\"]: an environment variable's name must not be"
	  " empty or contain '=' (line 8, column 30)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        environment: {A: \"a\\0b\"}\n",
	  "tasks[0].actions[0].environment.A: contains a NUL byte (line 8, column 26)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        volumes: [/dev]\n",
	  "tasks[0].actions[0].volumes[0]: a volume must be \"src:dst[:options]\" (line 8, column 19)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        volumes: ['/a:b']\n",
	  "tasks[0].actions[0].volumes[0]: a volume's destination must be an absolute path"
	  " (line 8, column 19)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        volumes: ['/a:/b:rx']\n",
	  "tasks[0].actions[0].volumes[0]: unknown volume option \"rx\" (line 8, column 19)" },
	{ ACTION_HEAD "      - name: x\n        image: i\n        namespaces: host\n",
	  "tasks[0].actions[0].namespaces: must be a mapping, not a string (line 8, column 21)" },
	/* the root */
	{ "- a\n- b\n", "template: a template must be a mapping, not a list (line 1, column 1)" },
	{ "just text\n",
	  "template: a template must be a mapping, not a string (line 1, column 1)" },
};

START_TEST(test_bad)
{
	const struct bad *b = &bads[_i];
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	int r = wf_template_parse(b->text, strlen(b->text), &t, &rep);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(rep.stage, WF_STAGE_SCHEMA);
	ck_assert_str_eq(rep.error, b->error);
	ck_assert_uint_eq(rep.errors, 1);
}
END_TEST

/* Not YAML: the loader's message with its position. */
static const struct bad yamls[] = {
	{ "name: t\ntasks:\n\t- name: x\n",
	  "template: while scanning for the next token: found"
	  " character that cannot start any token (line 3, column 1)" },
	{ "name: \"t\ntasks: []\n", NULL },
	{ "name: t\nname: u\n", "template: duplicate key \"name\" (line 2, column 1)" },
	{ "name: [a\n", NULL },
	{ "a: 1\n---\nb: 2\n", "template: expected one document, found more (line 2, column 1)" },
	{ "", "template: no document (line 1, column 1)" },
	{ "name: .nan\n", NULL },
	{ "name: 1e999\n", NULL },
};

START_TEST(test_yaml)
{
	const struct bad *b = &yamls[_i];
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	int r = wf_template_parse(b->text, strlen(b->text), &t, &rep);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(rep.stage, WF_STAGE_YAML);
	ck_assert_uint_eq(rep.errors, 1);
	ck_assert_uint_ge(rep.line, 1);
	if (b->error)
		ck_assert_str_eq(rep.error, b->error);
	else
		ck_assert_msg(strstr(rep.error, "(line "), "%s", rep.error);
}
END_TEST

/* All the errors of one template, in one message; the first's position. */
START_TEST(test_all_errors)
{
	static const char text[] = "name: t\n"
				   "tasks:\n"
				   "  - name: a\n"
				   "    worker: w\n"
				   "    actions:\n"
				   "      - name: x\n"
				   "        image: 'b a d'\n"
				   "        timeout: -5\n"
				   "      - name: x\n"
				   "        image: i\n"
				   "  - name: a\n"
				   "    worker: w\n"
				   "    actions: [{image: i}]\n";
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	ck_assert_int_eq(wf_template_parse(text, strlen(text), &t, &rep), -EINVAL);
	ck_assert_uint_eq(rep.errors, 5);
	ck_assert_str_eq(
		rep.error,
		"tasks[0].actions[0].image: image reference has an invalid character 0x20"
		" (line 7, column 16); "
		"tasks[0].actions[0].timeout: -5 is not an integer in 0..31536000 (line 8, column 18); "
		"tasks[0].actions[1].name: duplicate action name \"x\" (line 9, column 15); "
		"tasks[1].actions[0].name: a name is required (line 13, column 15); "
		"tasks[1].name: duplicate task name \"a\" (line 11, column 11)");
	ck_assert_uint_eq(rep.line, 7);
	ck_assert_uint_eq(rep.column, 16);
}
END_TEST

/* Many errors: the message is capped and says how many were left out. */
START_TEST(test_many_errors)
{
	char *text = malloc(200000);
	size_t o = (size_t)snprintf(text, 200000, ACTION_HEAD);
	for (int i = 0; i < 500; i++)
		o += (size_t)snprintf(text + o, 200000 - o, "      - {name: x, image: i}\n");
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	ck_assert_int_eq(wf_template_parse(text, o, &t, &rep), -EINVAL);
	ck_assert_uint_eq(rep.errors, 499);
	ck_assert_uint_lt(strlen(rep.error), sizeof(rep.error));
	ck_assert_msg(strstr(rep.error, " more errors)"), "%s", rep.error);
	free(text);
}
END_TEST

/* Unknown keys are ignored, as Go's decoder does, and listed. */
START_TEST(test_unknown_keys)
{
	static const char text[] = "name: t\n"
				   "owner: me\n"
				   "tasks:\n"
				   "  - name: a\n"
				   "    worker: w\n"
				   "    actions:\n"
				   "      - name: x\n"
				   "        image: i\n"
				   "        imagee: j\n"
				   "        namespaces: {ipc: host}\n";
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	ck_assert_int_eq(wf_template_parse(text, strlen(text), &t, &rep), 0);
	ck_assert_uint_eq(rep.warnings, 3);
	ck_assert_str_eq(
		rep.warning,
		"owner: unknown key, ignored (line 2, column 8); "
		"tasks[0].actions[0].imagee: unknown key, ignored (line 9, column 17); "
		"tasks[0].actions[0].namespaces.ipc: unknown key, ignored (line 10, column 27)");
	ck_assert_str_eq(rep.error, "");
	wf_template_free(t);
}
END_TEST

/* Aliases: nodes inside one take the alias's position; values are copied. */
START_TEST(test_aliases)
{
	static const char text[] = "x-action: &act {name: a, image: i, environment: {N: 0644}}\n"
				   "name: t\n"
				   "tasks:\n"
				   "  - name: a\n"
				   "    worker: w\n"
				   "    actions: [*act, *act]\n";
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	ck_assert_int_eq(wf_template_parse(text, strlen(text), &t, &rep), -EINVAL);
	ck_assert_str_eq(
		rep.error,
		"tasks[0].actions[1].name: duplicate action name \"a\" (line 6, column 21)");
	ck_assert_str_eq(rep.warning, "x-action: unknown key, ignored (line 1, column 11)");
}
END_TEST

/* Render, parse, validate; the stage that failed. */
START_TEST(test_load)
{
	size_t n;
	char *src = unit_fixture("template-ubuntu.tmpl", WF_TMPL_MAX_SIZE, &n);
	json_t *hw = json_pack("{s:{s:[{s:s}], s:[{s:{s:s, s:s, s:{s:s, s:s, s:s}}}]}}", "spec",
			       "disks", "device", "/dev/sda", "interfaces", "dhcp", "mac",
			       "52:54:00:aa:bb:cc", "arch", "x86_64", "ip", "address", "10.0.0.5",
			       "netmask", "255.255.255.0", "gateway", "10.0.0.1");
	json_t *map = json_pack("{s:s}", "device_1", "52:54:00:aa:bb:cc");
	json_t *data = wf_tmpl_data(hw, map);
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	int r = wf_template_load(src, n, data, &t, &rep);
	ck_assert_msg(r == 0, "%s: %s", wf_template_stage_name(rep.stage), rep.error);
	ck_assert_str_eq(t->tasks[0].worker, "52:54:00:aa:bb:cc");
	ck_assert_str_eq(env_get(&t->tasks[0].actions[0].environment, "DEST_DISK"), "/dev/sda");
	ck_assert_str_eq(env_get(&t->tasks[0].actions[1].environment, "BLOCK_DEVICE"), "/dev/sda1");
	wf_template_free(t);

	/* an empty worker: the hardwareMap has no device_1 -> render fails */
	json_t *data2 = wf_tmpl_data(hw, NULL);
	t = NULL;
	ck_assert_int_eq(wf_template_load(src, n, data2, &t, &rep), -EINVAL);
	ck_assert_int_eq(rep.stage, WF_STAGE_RENDER);
	ck_assert_str_eq(wf_template_stage_name(rep.stage), "render");
	ck_assert_ptr_null(t);
	ck_assert_uint_ge(rep.line, 1);

	static const char empty_worker[] =
		"name: t\ntasks:\n  - name: a\n    worker: \"{{ .w }}\"\n"
		"    actions: [{name: a, image: i}]\n";
	json_t *d3 = json_pack("{s:s}", "w", "");
	ck_assert_int_eq(wf_template_load(empty_worker, strlen(empty_worker), d3, &t, &rep),
			 -EINVAL);
	ck_assert_int_eq(rep.stage, WF_STAGE_SCHEMA);
	ck_assert_str_eq(
		rep.error,
		"tasks[0].worker: a worker is required (it rendered empty) (line 4, column 13)");

	static const char not_yaml[] = "name: {{ .w }}\n";
	json_decref(d3);
	d3 = json_pack("{s:s}", "w", "[x");
	ck_assert_int_eq(wf_template_load(not_yaml, strlen(not_yaml), d3, &t, &rep), -EINVAL);
	ck_assert_int_eq(rep.stage, WF_STAGE_YAML);
	ck_assert_str_eq(wf_template_stage_name(rep.stage), "yaml");

	json_decref(d3);
	json_decref(data);
	json_decref(data2);
	json_decref(map);
	json_decref(hw);
	free(src);
}
END_TEST

/* Over the cap: refused before parsing. */
START_TEST(test_too_big)
{
	size_t n = WF_TMPL_MAX_OUTPUT + 1;
	char *text = malloc(n);
	memset(text, '#', n);
	struct wf_template *t = NULL;
	struct wf_template_report rep;
	ck_assert_int_eq(wf_template_parse(text, n, &t, &rep), -E2BIG);
	ck_assert_ptr_null(t);
	free(text);
	wf_template_free(NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("template_schema");
	TCase *tc = tcase_create("core");
	UNIT_TEST(tc, test_ubuntu);
	UNIT_TEST(tc, test_fields);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	tcase_add_loop_test(tc, test_yaml, 0, (int)(sizeof(yamls) / sizeof(yamls[0])));
	UNIT_TEST(tc, test_all_errors);
	UNIT_TEST(tc, test_many_errors);
	UNIT_TEST(tc, test_unknown_keys);
	UNIT_TEST(tc, test_aliases);
	UNIT_TEST(tc, test_load);
	UNIT_TEST(tc, test_too_big);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
