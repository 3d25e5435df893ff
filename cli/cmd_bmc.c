/* cmd_bmc — `ironbell power` and `ironbell bootdev`, and the table columns
 * of the bmc.tinkerbell.org kinds (Machine, Job, Task).
 *
 * DESIGN: a power or boot-device command is a Job, as an operator would
 * write it for Rufio: the client creates it through the admin API (name
 * "<command>-<action>-<machine>-<unix time>", spec.machineRef in the
 * Machine's namespace, one action in spec.tasks) and then follows it by
 * polling the Job and its Tasks every CLI_BMC_POLL_MS, printing each Task's
 * state when it changes, until the Job has Completed=True (exit 0),
 * Failed=True (exit 1, with its message) or --timeout has passed (exit 1;
 * the Job is left to the daemon). The daemon's controllers do the work;
 * nothing here talks to a BMC. `power status` then prints the Machine's
 * status.powerState, which the status Task refreshed.
 *
 * The Task states, the Job's done/total and the Contactable condition are
 * read from status.conditions the way Rufio writes them: a Task or Job is
 * Completed or Failed by the condition of that type with status "True", a
 * Job Running by its Running condition; a Task with a startTime and
 * neither is Running; anything else is Pending. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/common.h"
#include "common/num.h"

#define CLI_BMC_POLL_MS 500
#define CLI_BMC_DEFAULT_TIMEOUT_MS (15u * 60 * 1000)
#define CLI_BMC_MAX_TIMEOUT_MS (24u * 3600 * 1000)
#define CLI_BMC_NAME_MACHINE_MAX 200           /* bytes of the Machine's name in a Job's name */
#define CLI_BMC_NAME_TRIES 16                  /* names tried when one is taken */
#define CLI_BMC_MAX_TASKS 64                   /* Tasks of one Job followed */
#define TASKS_DONE_KEY "x-ironbell-tasks-done" /* set on a Job by cli_bmc_count_tasks */

/* ---- conditions ---- */

/* The condition of type type in obj's status.conditions, or NULL. */
static const json_t *condition(const json_t *obj, const char *type)
{
	const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
	size_t i;
	json_t *cond;
	json_array_foreach (conds, i, cond) {
		const char *t = json_string_value(json_object_get(cond, "type"));
		if (t && strcmp(t, type) == 0)
			return cond;
	}
	return NULL;
}

static bool condition_true(const json_t *obj, const char *type)
{
	const char *s = json_string_value(json_object_get(condition(obj, type), "status"));
	return s && strcmp(s, "True") == 0;
}

/* "Completed", "Failed", "Running" or "Pending" (job: Running is a
 * condition; a Task: a startTime). Static strings. */
static const char *bmc_state(const json_t *obj, bool job)
{
	if (condition_true(obj, "Failed"))
		return "Failed";
	if (condition_true(obj, "Completed"))
		return "Completed";
	if (job ? condition_true(obj, "Running") :
		  json_object_get(json_object_get(obj, "status"), "startTime") != NULL)
		return "Running";
	return "Pending";
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* ---- columns ---- */

char *cli_bmc_contactable(const json_t *obj)
{
	return dup_or_null(
		json_string_value(json_object_get(condition(obj, "Contactable"), "status")));
}

char *cli_bmc_contactable_message(const json_t *obj)
{
	return dup_or_null(
		json_string_value(json_object_get(condition(obj, "Contactable"), "message")));
}

char *cli_bmc_job_machine(const json_t *obj)
{
	const json_t *ref = json_object_get(json_object_get(obj, "spec"), "machineRef");
	return dup_or_null(json_string_value(json_object_get(ref, "name")));
}

char *cli_bmc_job_state(const json_t *obj)
{
	return strdup(bmc_state(obj, true));
}

char *cli_bmc_task_state(const json_t *obj)
{
	return strdup(bmc_state(obj, false));
}

char *cli_bmc_job_tasks(const json_t *obj)
{
	size_t total = json_array_size(json_object_get(json_object_get(obj, "spec"), "tasks"));
	const json_t *done = json_object_get(obj, TASKS_DONE_KEY);
	char tmp[64];
	if (condition_true(obj, "Completed"))
		snprintf(tmp, sizeof(tmp), "%zu/%zu", total, total);
	else if (json_is_integer(done))
		snprintf(tmp, sizeof(tmp), "%lld/%zu", (long long)json_integer_value(done), total);
	else
		snprintf(tmp, sizeof(tmp), "?/%zu", total);
	return strdup(tmp);
}

/* What an Action does, in words: "power off", "bootdev pxe once efi". */
static void action_text(const json_t *a, char *out, size_t outlen)
{
	const char *power = json_string_value(json_object_get(a, "powerAction"));
	const json_t *once = json_object_get(a, "oneTimeBootDeviceAction");
	const json_t *bd = json_object_get(a, "bootDevice");
	const json_t *vm = json_object_get(a, "virtualMediaAction");
	if (power) {
		snprintf(out, outlen, "power %s", power);
	} else if (once) {
		const char *dev =
			json_string_value(json_array_get(json_object_get(once, "device"), 0));
		snprintf(out, outlen, "bootdev %s once%s", dev ? dev : "?",
			 json_is_true(json_object_get(once, "efiBoot")) ? " efi" : "");
	} else if (bd) {
		const char *dev = json_string_value(json_object_get(bd, "device"));
		snprintf(out, outlen, "bootdev %s %s%s", dev ? dev : "?",
			 json_is_true(json_object_get(bd, "persistent")) ? "persistent" : "once",
			 json_is_true(json_object_get(bd, "efiBoot")) ? " efi" : "");
	} else if (vm) {
		const char *url = json_string_value(json_object_get(vm, "mediaURL"));
		const char *kind = json_string_value(json_object_get(vm, "kind"));
		if (url && *url)
			snprintf(out, outlen, "virtual-media insert %s %s", kind ? kind : "?", url);
		else
			snprintf(out, outlen, "virtual-media eject %s", kind ? kind : "?");
	} else {
		snprintf(out, outlen, "?");
	}
}

char *cli_bmc_task_action(const json_t *obj)
{
	char tmp[512];
	action_text(json_object_get(json_object_get(obj, "spec"), "task"), tmp, sizeof(tmp));
	return strdup(tmp);
}

/* ---- Jobs and their Tasks ---- */

/* True when task belongs to the Job named job in namespace ns: Rufio's
 * owner-name label, or its name <job>-task-<n>. */
static bool task_of(const json_t *task, const char *job, const char *ns)
{
	const char *tns = cli_meta_string(task, "namespace");
	const char *name = cli_meta_string(task, "name");
	const char *owner = json_string_value(json_object_get(
		json_object_get(json_object_get(task, "metadata"), "labels"), "owner-name"));
	size_t n = strlen(job);
	if (!tns || !ns || strcmp(tns, ns) != 0 || !name)
		return false;
	if (owner)
		return strcmp(owner, job) == 0;
	return strncmp(name, job, n) == 0 && strncmp(name + n, "-task-", 6) == 0;
}

/* GETs the Tasks of namespace ns (NULL: every namespace): a new array, or
 * NULL after printing why. */
static json_t *list_tasks(struct cli *c, const char *ns)
{
	const struct cli_kind *k = cli_kind_by_name("Task");
	struct buf path = BUF_INIT(4096);
	struct cli_response resp = { 0 };
	json_t *list = NULL, *items = NULL;
	if (cli_kind_path(&path, k, ns, NULL, NULL) < 0 ||
	    cli_request(c, "GET", path.data, NULL, NULL, 0, &resp) < 0)
		goto out;
	if (resp.code != 200) {
		cli_print_server_error(&resp);
		goto out;
	}
	list = cli_response_json(&resp);
	items = json_incref(json_object_get(list, "items"));
out:
	json_decref(list);
	cli_response_free(&resp);
	buf_free(&path);
	return items;
}

void cli_bmc_count_tasks(struct cli *c, json_t *jobs)
{
	size_t i, j;
	json_t *job, *task;
	if (json_array_size(jobs) == 0)
		return;
	json_t *tasks = list_tasks(c, c->all_ns ? NULL : c->ns);
	if (!tasks)
		return;
	json_array_foreach (jobs, i, job) {
		const char *name = cli_meta_string(job, "name");
		const char *ns = cli_meta_string(job, "namespace");
		json_int_t done = 0;
		if (!name)
			continue;
		json_array_foreach (tasks, j, task)
			if (task_of(task, name, ns) && condition_true(task, "Completed"))
				done++;
		json_object_set_new(job, TASKS_DONE_KEY, json_integer(done));
	}
	json_decref(tasks);
}

/* GETs one object: the JSON, or NULL with *code the HTTP status (0: no
 * answer, and the reason printed). A 404 is not printed. */
static json_t *get_object(struct cli *c, const char *kind, const char *ns, const char *name,
			  long *code)
{
	struct buf path = BUF_INIT(1024);
	struct cli_response resp = { 0 };
	json_t *v = NULL;
	*code = 0;
	if (cli_kind_path(&path, cli_kind_by_name(kind), ns, name, NULL) < 0 ||
	    cli_request(c, "GET", path.data, NULL, NULL, 0, &resp) < 0)
		goto out;
	*code = resp.code;
	if (resp.code == 200)
		v = cli_response_json(&resp);
	else if (resp.code != 404)
		cli_print_server_error(&resp);
out:
	cli_response_free(&resp);
	buf_free(&path);
	return v;
}

/* ---- power and bootdev ---- */

struct follow {
	char name[CLI_BMC_MAX_TASKS][256]; /* Tasks seen */
	char state[CLI_BMC_MAX_TASKS][16]; /* their last printed state */
	size_t n;
};

/* Prints the Tasks of job whose state changed since the last call. */
static void print_task_changes(struct follow *f, const json_t *tasks, const char *job,
			       const char *ns)
{
	size_t i, j;
	json_t *t;
	json_array_foreach (tasks, i, t) {
		const char *name = cli_meta_string(t, "name");
		if (!name || !task_of(t, job, ns))
			continue;
		const char *st = bmc_state(t, false);
		for (j = 0; j < f->n && strcmp(f->name[j], name) != 0; j++)
			;
		if (j < f->n && strcmp(f->state[j], st) == 0)
			continue;
		if (j == f->n) {
			if (f->n == CLI_BMC_MAX_TASKS)
				continue;
			snprintf(f->name[f->n++], sizeof(f->name[0]), "%s", name);
		}
		snprintf(f->state[j], sizeof(f->state[0]), "%s", st);
		char action[512];
		const char *msg = json_string_value(json_object_get(
			condition(t, strcmp(st, "Failed") == 0 ? "Failed" : st), "message"));
		action_text(json_object_get(json_object_get(t, "spec"), "task"), action,
			    sizeof(action));
		printf("task/%s: %s: %s%s%s\n", name, action, st, msg && *msg ? ": " : "",
		       msg && *msg ? msg : "");
		fflush(stdout);
	}
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Polls the Job until it ends or timeout_ms passes. CLI_EXIT_OK when it
 * Completed. */
static int follow_job(struct cli *c, const char *ns, const char *job, uint64_t timeout_ms)
{
	struct follow f = { .n = 0 };
	uint64_t polls = timeout_ms / CLI_BMC_POLL_MS + 1;
	long code;
	for (uint64_t i = 0; i < polls; i++) {
		json_t *j = get_object(c, "Job", ns, job, &code);
		if (!j) {
			if (code == 404)
				return cli_error("job %s was deleted", job);
			if (code == 0)
				return CLI_EXIT_ERROR;
			sleep_ms(CLI_BMC_POLL_MS);
			continue;
		}
		json_t *tasks = list_tasks(c, ns);
		print_task_changes(&f, tasks, job, ns);
		json_decref(tasks);
		const char *st = bmc_state(j, true);
		if (strcmp(st, "Completed") == 0) {
			printf("job/%s: Completed\n", job);
			json_decref(j);
			return CLI_EXIT_OK;
		}
		if (strcmp(st, "Failed") == 0) {
			const char *msg = json_string_value(
				json_object_get(condition(j, "Failed"), "message"));
			int r = cli_error("job %s failed: %s", job,
					  msg && *msg ? msg : "no message");
			json_decref(j);
			return r;
		}
		json_decref(j);
		if (i + 1 < polls)
			sleep_ms(CLI_BMC_POLL_MS);
	}
	return cli_error("job %s did not finish within %llu s; it is left to run", job,
			 (unsigned long long)(timeout_ms / 1000));
}

/* POSTs the Job "<prefix>-<machine>-<time>[-<n>]" with the one action, in
 * the Machine's namespace, and writes its name into name. A name already
 * taken (two commands in the same second) gets the next n, at most
 * CLI_BMC_NAME_TRIES times. */
static int create_job(struct cli *c, const char *prefix, const char *machine, json_t *action,
		      char *name, size_t namelen)
{
	struct buf path = BUF_INIT(1024);
	struct cli_response resp = { 0 };
	char *body = NULL;
	json_t *job = NULL;
	int ret = CLI_EXIT_ERROR;
	long long now = (long long)time(NULL);
	if (cli_kind_path(&path, cli_kind_by_name("Job"), c->ns, NULL, NULL) < 0) {
		ret = cli_error("out of memory");
		goto out;
	}
	for (int n = 0; n < CLI_BMC_NAME_TRIES; n++) {
		if (n == 0)
			snprintf(name, namelen, "%s-%.*s-%lld", prefix, CLI_BMC_NAME_MACHINE_MAX,
				 machine, now);
		else
			snprintf(name, namelen, "%s-%.*s-%lld-%d", prefix, CLI_BMC_NAME_MACHINE_MAX,
				 machine, now, n);
		json_decref(job);
		free(body);
		body = NULL;
		cli_response_free(&resp);
		job = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:{s:s, s:s}, s:[O]}}",
				"apiVersion", "bmc.tinkerbell.org/v1alpha1", "kind", "Job",
				"metadata", "name", name, "namespace", c->ns, "labels",
				"ironbell.dev/created-by", "ironbell", "spec", "machineRef", "name",
				machine, "namespace", c->ns, "tasks", action);
		if (!job || !(body = json_dumps(job, JSON_COMPACT))) {
			ret = cli_error("out of memory");
			goto out;
		}
		if (cli_request(c, "POST", path.data, "application/json", body, strlen(body),
				&resp) < 0)
			goto out;
		if (resp.code != 409)
			break;
	}
	if (resp.code != 201 && resp.code != 200) {
		cli_print_server_error(&resp);
		goto out;
	}
	printf("job.bmc.tinkerbell.org/%s created\n", name);
	fflush(stdout);
	ret = CLI_EXIT_OK;
out:
	free(body);
	json_decref(job);
	cli_response_free(&resp);
	buf_free(&path);
	return ret;
}

enum bmc_cmd {
	BMC_POWER,
	BMC_BOOTDEV
};

/* The shared body of power and bootdev, from the parsed action on. */
static int run_job(struct cli *c, enum bmc_cmd cmd, const char *what, const char *machine,
		   json_t *action, uint64_t timeout_ms)
{
	char name[512], prefix[64];
	long code;
	json_t *m = get_object(c, "Machine", c->ns, machine, &code);
	if (!m) {
		if (code == 404)
			return cli_error("machine \"%s\" not found in namespace %s", machine,
					 c->ns);
		return CLI_EXIT_ERROR;
	}
	json_decref(m);
	snprintf(prefix, sizeof(prefix), "%s-%s", cmd == BMC_POWER ? "power" : "bootdev", what);
	int r = create_job(c, prefix, machine, action, name, sizeof(name));
	if (r != CLI_EXIT_OK)
		return r;
	r = follow_job(c, c->ns, name, timeout_ms);
	if (r != CLI_EXIT_OK || cmd != BMC_POWER || strcmp(what, "status") != 0)
		return r;
	/* What the status Task read just now; the Machine's powerState is
	 * only as fresh as its last poll. */
	char task[sizeof(name) + 16];
	snprintf(task, sizeof(task), "%s-task-0", name);
	json_t *t = get_object(c, "Task", c->ns, task, &code);
	const char *msg = t ? json_string_value(json_object_get(condition(t, "Completed"),
								"message")) :
			      NULL;
	if (msg && strncmp(msg, "power is ", 9) == 0) {
		printf("machine/%s: power %s\n", machine, msg + 9);
		json_decref(t);
		return CLI_EXIT_OK;
	}
	json_decref(t);
	m = get_object(c, "Machine", c->ns, machine, &code);
	if (!m)
		return code == 404 ? cli_error("machine \"%s\" is gone", machine) : CLI_EXIT_ERROR;
	const char *p =
		json_string_value(json_object_get(json_object_get(m, "status"), "powerState"));
	printf("machine/%s: power %s\n", machine, p ? p : "unknown");
	json_decref(m);
	return CLI_EXIT_OK;
}

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

enum {
	OPT_TIMEOUT = CLI_OPT_COMMAND,
	OPT_PERSISTENT,
	OPT_EFI
};

static int bmc_command(struct cli *c, enum bmc_cmd cmd, int argc, char **argv)
{
	static const char *const powers[] = {
		"on", "off", "cycle", "reset", "soft", "status", NULL
	};
	static const char *const devices[] = { "pxe", "disk", "bios", "cdrom", "safe", NULL };
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "persistent", no_argument, NULL, OPT_PERSISTENT },
		{ "efi", no_argument, NULL, OPT_EFI },
		{ 0 },
	};
	const char *name = cmd == BMC_POWER ? "power" : "bootdev";
	uint64_t timeout_ms = CLI_BMC_DEFAULT_TIMEOUT_MS;
	bool persistent = false, efi = false;
	json_t *action = NULL;
	int o;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
		if (o == OPT_TIMEOUT) {
			if (num_parse_duration_ms(optarg, strlen(optarg), CLI_BMC_MAX_TIMEOUT_MS,
						  &timeout_ms) < 0 ||
			    timeout_ms == 0)
				return cli_usage_error(name,
						       "--timeout: \"%s\" is not a duration "
						       "like 90s, 15m or 1h (at most 24h)",
						       optarg);
			continue;
		}
		if (cmd == BMC_BOOTDEV && (o == OPT_PERSISTENT || o == OPT_EFI)) {
			*(o == OPT_PERSISTENT ? &persistent : &efi) = true;
			continue;
		}
		int r = cli_global_option(c, o, optarg);
		if (r <= 0)
			return r == 0 ? cli_help(name) : cli_usage(name);
	}
	if (c->all_ns)
		return cli_usage_error(name, "-A cannot be used with %s", name);
	if (argc - optind != 2)
		return cli_usage_error(name, "%s needs an action and a machine", name);
	const char *what = argv[optind], *machine = argv[optind + 1];
	if (!one_of(what, cmd == BMC_POWER ? powers : devices))
		return cli_usage_error(name, "unknown %s \"%s\"",
				       cmd == BMC_POWER ? "action" : "device", what);
	if (cmd == BMC_POWER)
		action = json_pack("{s:s}", "powerAction", what);
	else if (persistent)
		action = json_pack("{s:{s:s, s:b, s:b}}", "bootDevice", "device", what,
				   "persistent", 1, "efiBoot", efi);
	else
		action = json_pack("{s:{s:[s], s:b}}", "oneTimeBootDeviceAction", "device", what,
				   "efiBoot", efi);
	if (!action)
		return cli_error("out of memory");
	int r = run_job(c, cmd, what, machine, action, timeout_ms);
	json_decref(action);
	return r;
}

int cli_cmd_power(struct cli *c, int argc, char **argv)
{
	return bmc_command(c, BMC_POWER, argc, argv);
}

int cli_cmd_bootdev(struct cli *c, int argc, char **argv)
{
	return bmc_command(c, BMC_BOOTDEV, argc, argv);
}

/* ---- describe hardware ---- */

void cli_bmc_describe_hardware(struct cli *c, const json_t *hw)
{
	const json_t *ref = json_object_get(json_object_get(hw, "spec"), "bmcRef");
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *ns = cli_meta_string(hw, "namespace") ?: c->ns;
	long code;
	if (!name)
		return;
	json_t *m = get_object(c, "Machine", ns, name, &code);
	if (!m) {
		printf("BMC:         machine/%s: %s\n", name,
		       code == 404 ? "not found" : "cannot be read");
		return;
	}
	const char *p =
		json_string_value(json_object_get(json_object_get(m, "status"), "powerState"));
	char *ct = cli_bmc_contactable(m), *msg = cli_bmc_contactable_message(m);
	printf("BMC:         machine/%s: power %s, contactable %s%s%s\n", name, p ? p : "unknown",
	       ct ? ct : "Unknown", msg && *msg ? ": " : "", msg && *msg ? msg : "");
	free(ct);
	free(msg);
	json_decref(m);
}
