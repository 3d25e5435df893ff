/* kinds — the object kinds `ironbell` knows, with their API paths and the
 * columns `get` prints for them.
 *
 * The daemon has the same list (store/kinds.c); the client keeps its own
 * small copy so that it links nothing of the store. Printer columns are the
 * CRDs' additionalPrinterColumns (Hardware, Template: State; Workflow:
 * Template, State, Task (wide), Action, Agent, Hardware, Template-Rendering
 * (wide)); a Workflow in the shape of tinkerbell/tink <= v0.12 shows
 * status.currentAction as its Action (cli/wf.c). The bmc kinds have none in their CRDs; ironbell shows a
 * Machine's HOST, POWER and CONTACTABLE (MESSAGE with -o wide), a Job's
 * MACHINE, STATE and TASKS done/total, a Task's ACTION and STATE, read
 * from the conditions as Rufio writes them (cli/cmd_bmc.c). Secret
 * shows TYPE and DATA (the number of keys) as kubectl does. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "common/common.h"

/* The number of keys of .data plus those of .stringData not in .data. */
static char *secret_data_count(const json_t *obj)
{
	const json_t *data = json_object_get(obj, "data");
	const json_t *sdata = json_object_get(obj, "stringData");
	size_t n = json_is_object(data) ? json_object_size(data) : 0;
	const char *key;
	const json_t *v;
	if (json_is_object(sdata))
		json_object_foreach ((json_t *)sdata, key, v) {
			if (!json_object_get(data, key))
				n++;
		}
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "%zu", n);
	return strdup(tmp);
}

static const struct cli_column state_columns[] = {
	{ "STATE", ".status.state", false, NULL },
	{ 0 },
};

static const struct cli_column workflow_columns[] = {
	{ "TEMPLATE", ".spec.templateRef", false, NULL },
	{ "STATE", ".status.state", false, NULL },
	{ "TASK", ".status.currentState.taskName", true, cli_wf_col_task },
	{ "ACTION", ".status.currentState.actionName", false, cli_wf_col_action },
	{ "AGENT", ".status.currentState.agentID", false, cli_wf_col_agent },
	{ "HARDWARE", ".spec.hardwareRef", false, NULL },
	{ "TEMPLATE-RENDERING", ".status.templateRendering", true, cli_wf_col_rendering },
	{ 0 },
};

static const struct cli_column machine_columns[] = {
	{ "HOST", ".spec.connection.host", false, NULL },
	{ "POWER", ".status.powerState", false, NULL },
	{ "CONTACTABLE", NULL, false, cli_bmc_contactable },
	{ "MESSAGE", NULL, true, cli_bmc_contactable_message },
	{ 0 },
};

static const struct cli_column job_columns[] = {
	{ "MACHINE", NULL, false, cli_bmc_job_machine },
	{ "STATE", NULL, false, cli_bmc_job_state },
	{ "TASKS", NULL, false, cli_bmc_job_tasks },
	{ 0 },
};

static const struct cli_column task_columns[] = {
	{ "ACTION", NULL, false, cli_bmc_task_action },
	{ "STATE", NULL, false, cli_bmc_task_state },
	{ 0 },
};

static const struct cli_column secret_columns[] = {
	{ "TYPE", ".type", false, NULL },
	{ "DATA", NULL, false, secret_data_count },
	{ 0 },
};

#define TB "tinkerbell.org"
#define BMC "bmc.tinkerbell.org"

static const struct cli_kind kinds[] = {
	{
		.kind = "Hardware",
		.group = TB,
		.version = "v1alpha1",
		.api_version = TB "/v1alpha1",
		.plural = "hardware",
		.singular = "hardware",
		.short_names = { "hw" },
		.resource = "hardware.tinkerbell.org",
		.columns = state_columns,
	},
	{
		.kind = "Template",
		.group = TB,
		.version = "v1alpha1",
		.api_version = TB "/v1alpha1",
		.plural = "templates",
		.singular = "template",
		.short_names = { "tpl" },
		.resource = "template.tinkerbell.org",
		.columns = state_columns,
	},
	{
		.kind = "Workflow",
		.group = TB,
		.version = "v1alpha1",
		.api_version = TB "/v1alpha1",
		.plural = "workflows",
		.singular = "workflow",
		.short_names = { "wf" },
		.resource = "workflow.tinkerbell.org",
		.columns = workflow_columns,
	},
	{
		.kind = "Machine",
		.group = BMC,
		.version = "v1alpha1",
		.api_version = BMC "/v1alpha1",
		.plural = "machines",
		.singular = "machine",
		.resource = "machine.bmc.tinkerbell.org",
		.columns = machine_columns,
	},
	{
		.kind = "Job",
		.group = BMC,
		.version = "v1alpha1",
		.api_version = BMC "/v1alpha1",
		.plural = "jobs",
		.singular = "job",
		.short_names = { "j" },
		.resource = "job.bmc.tinkerbell.org",
		.columns = job_columns,
	},
	{
		.kind = "Task",
		.group = BMC,
		.version = "v1alpha1",
		.api_version = BMC "/v1alpha1",
		.plural = "tasks",
		.singular = "task",
		.short_names = { "t" },
		.resource = "task.bmc.tinkerbell.org",
		.columns = task_columns,
	},
	{
		.kind = "Secret",
		.group = "",
		.version = "v1",
		.api_version = "v1",
		.plural = "secrets",
		.singular = "secret",
		.resource = "secret",
		.columns = secret_columns,
	},
};

static bool name_matches(const struct cli_kind *k, const char *s, size_t n)
{
	const char *names[] = { k->kind,           k->plural,         k->singular,
				k->short_names[0], k->short_names[1], k->short_names[2] };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i] && strlen(names[i]) == n && strncasecmp(names[i], s, n) == 0)
			return true;
	return false;
}

/* q qualifies k when it is k's group, a leading run of its labels
 * ("bmc" of "bmc.tinkerbell.org"), or version.group. */
static bool qualifier_matches(const struct cli_kind *k, const char *q)
{
	size_t ql = strlen(q), gl = strlen(k->group), vl = strlen(k->version);
	if (ql == 0)
		return false;
	if (gl && strncasecmp(k->group, q, ql) == 0 && (ql == gl || k->group[ql] == '.'))
		return true;
	if (ql > vl && strncasecmp(q, k->version, vl) == 0 && q[vl] == '.')
		return gl ? strcasecmp(q + vl + 1, k->group) == 0 : false;
	return !gl && strcasecmp(q, k->version) == 0;
}

const struct cli_kind *cli_kind_parse(const char *s)
{
	if (!s || !*s)
		return NULL;
	const char *dot = strchr(s, '.');
	size_t n = dot ? (size_t)(dot - s) : strlen(s);
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (!name_matches(&kinds[i], s, n))
			continue;
		if (!dot || qualifier_matches(&kinds[i], dot + 1))
			return &kinds[i];
	}
	return NULL;
}

const struct cli_kind *cli_kind_from_object(const char *api_version, const char *kind)
{
	if (!api_version || !kind)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kinds[i].kind, kind) == 0 &&
		    strcmp(kinds[i].api_version, api_version) == 0)
			return &kinds[i];
	return NULL;
}

const struct cli_kind *cli_kind_by_name(const char *kind)
{
	if (!kind)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return &kinds[i];
	return NULL;
}

static int put_escaped(struct buf *out, const char *s)
{
	char *e = curl_easy_escape(NULL, s, 0);
	if (!e)
		return -ENOMEM;
	int r = buf_puts(out, e);
	curl_free(e);
	return r;
}

int cli_kind_path(struct buf *out, const struct cli_kind *k, const char *ns, const char *name,
		  const char *sub)
{
	int r;
	if (k->group[0])
		r = buf_printf(out, "/apis/%s/%s", k->group, k->version);
	else
		r = buf_printf(out, "/api/%s", k->version);
	if (r == 0 && ns) {
		r = buf_puts(out, "/namespaces/");
		if (r == 0)
			r = put_escaped(out, ns);
	}
	if (r == 0)
		r = buf_printf(out, "/%s", k->plural);
	if (r == 0 && name) {
		r = buf_putc(out, '/');
		if (r == 0)
			r = put_escaped(out, name);
	}
	if (r == 0 && sub)
		r = buf_printf(out, "/%s", sub);
	return r;
}
