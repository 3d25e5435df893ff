/* cmd_workflow — Workflows for an operator: `ironbell describe workflow`
 * and `ironbell provision` (`workflow retry` is in cli/cmd_retry.c).
 *
 * DESIGN: describe of a Workflow is written for whoever is woken up by a
 * failed provisioning: the spec in a few lines, then the state, the agent
 * and the global timeout, then the first failed action named with its
 * message, then every task and action (image, state, start, duration,
 * attempts out of retries + 1, message with its lines indented), then the
 * conditions; cli/cmd_get.c prints the identity before and the events
 * after. Both status shapes are read through cli/wf.c.
 *
 * provision is Cluster API Provider Tinkerbell's step done by hand:
 * choose a free Hardware by labels (cli_wf_pick_hardware(): no Workflow
 * that is not finished refers to it; the smallest name first) and create
 * its Workflow. The name "<template>-<hardware>" makes the create itself
 * the lock: two provisions that chose the same Hardware at once both POST
 * the same name, and the store refuses the second 409 AlreadyExists. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/common.h"

#define CLI_WF_MAX_MAPS 64     /* --map options of one provision */
#define CLI_WF_LABEL_WIDTH 20  /* describe's "Label:" column */
#define CLI_WF_ACTION_LABEL 13 /* width of an action's field labels */

/* ---- describe ---- */

/* "TIME (5m ago)" or "TIME (in 5m)". */
static void when(const char *t, int64_t now, char out[static 96])
{
	int64_t v;
	char age[32];
	if (!t || cli_parse_time(t, &v) < 0) {
		snprintf(out, 96, "%s", t ? t : "");
		return;
	}
	cli_format_age(v > now ? v - now : now - v, age);
	snprintf(out, 96, "%s (%s%s%s)", t, v > now ? "in " : "", age, v > now ? "" : " ago");
}

/* Prints text after a label of width col: the first line there, each
 * following line indented to col, a trailing newline dropped. */
static void print_lines(FILE *f, const char *text, int col)
{
	const char *p = text;
	bool first = true;
	size_t len = strlen(text);
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	while (p < text + len) {
		size_t n = strcspn(p, "\n");
		if (p + n > text + len)
			n = (size_t)(text + len - p);
		fprintf(f, "%*s%.*s\n", first ? 0 : col, "", (int)n, p);
		first = false;
		p += n;
		if (p < text + len)
			p++;
	}
	if (first)
		fputc('\n', f);
}

static void field(FILE *f, const char *label, const char *value)
{
	fprintf(f, "%-*s", CLI_WF_LABEL_WIDTH, label);
	print_lines(f, value && *value ? value : "<none>", CLI_WF_LABEL_WIDTH);
}

/* "k=v, k2=v2" of an object's scalar members. */
static char *join_map(const json_t *m)
{
	struct buf b = BUF_INIT(64 * 1024);
	const char *key;
	json_t *v;
	json_object_foreach ((json_t *)m, key, v) {
		char *text = json_is_string(v) ? strdup(json_string_value(v)) :
						 json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (b.len)
			buf_puts(&b, ", ");
		buf_printf(&b, "%s=%s", key, text ? text : "");
		free(text);
	}
	return b.len ? buf_steal(&b) : (buf_free(&b), NULL);
}

static void describe_conditions(const json_t *st, int64_t now, FILE *f)
{
	const json_t *conds = json_object_get(st, "conditions");
	struct cli_table *t;
	size_t i;
	json_t *cond;
	if (json_array_size(conds) == 0) {
		field(f, "Conditions:", NULL);
		return;
	}
	if (!(t = cli_table_new()))
		return;
	fprintf(f, "Conditions:\n");
	cli_table_row(t);
	cli_table_cell(t, "  TYPE");
	cli_table_cell(t, "STATUS");
	cli_table_cell(t, "REASON");
	cli_table_cell(t, "AGE");
	cli_table_cell(t, "MESSAGE");
	json_array_foreach (conds, i, cond) {
		char type[256], age[32] = "";
		int64_t at;
		const char *tm = json_string_value(json_object_get(cond, "time")) ?:
					 json_string_value(json_object_get(cond, "lastUpdateTime"));
		snprintf(type, sizeof(type), "  %s",
			 json_string_value(json_object_get(cond, "type")) ?: "");
		if (tm && cli_parse_time(tm, &at) == 0)
			cli_format_age(now - at, age);
		cli_table_row(t);
		cli_table_cell(t, type);
		cli_table_cell(t, json_string_value(json_object_get(cond, "status")));
		cli_table_cell(t, json_string_value(json_object_get(cond, "reason")));
		cli_table_cell(t, age);
		cli_table_cell(t, json_string_value(json_object_get(cond, "message")));
	}
	cli_table_print(t, f);
	cli_table_free(t);
}

static void action_field(FILE *f, const char *label, const char *value)
{
	if (!value || !*value)
		return;
	fprintf(f, "       %-*s", CLI_WF_ACTION_LABEL, label);
	print_lines(f, value, 7 + CLI_WF_ACTION_LABEL);
}

static void describe_action(const struct cli_wf_action *a, size_t n, int64_t now, FILE *f)
{
	char t[96], d[48], num[96];
	fprintf(f, "    %zu. %s   %s\n", n, a->name ?: "<no name>", a->state ?: "<no state>");
	action_field(f, "Image:", a->image);
	when(a->start, now, t);
	action_field(f, "Started:", t);
	when(a->stop, now, t);
	action_field(f, "Stopped:", t);
	cli_wf_action_duration(a, now, d);
	action_field(f, "Duration:", d);
	if (a->timeout > 0) {
		char g[32];
		cli_go_duration(a->timeout, g);
		snprintf(num, sizeof(num), "%llds (%s)", a->timeout, g);
		action_field(f, "Timeout:", num);
	}
	if (a->attempts >= 0 || a->retries > 0) {
		long long tries = (a->retries > 0 ? a->retries : 0) + 1;
		snprintf(num, sizeof(num), "%lld of %lld (retries %lld)",
			 a->attempts > 0 ? a->attempts : 0, tries, tries - 1);
		action_field(f, "Attempts:", num);
	}
	when(a->retry_after, now, t);
	action_field(f, "Retry After:", t);
	if (a->state && strstr(a->state, "RUNNING")) {
		when(a->deadline, now, t);
		action_field(f, "Deadline:", t);
	}
	action_field(f, "Message:", a->message);
}

static void describe_tasks(const json_t *wf, int64_t now, FILE *f)
{
	size_t nt = cli_wf_tasks(wf);
	if (nt == 0) {
		field(f, "Tasks:", NULL);
		return;
	}
	fprintf(f, "Tasks:\n");
	for (size_t ti = 0; ti < nt; ti++) {
		size_t na = cli_wf_actions(wf, ti);
		struct cli_wf_action a;
		if (na == 0 || cli_wf_action_at(wf, ti, 0, &a) < 0) {
			fprintf(f, "  %zu. <a task without actions>\n", ti + 1);
			continue;
		}
		fprintf(f, "  Task %s   agent %s%s%s\n", a.task ?: "<no name>", a.agent ?: "<none>",
			a.task_id ? ", id " : "", a.task_id ?: "");
		for (size_t ai = 0; ai < na; ai++)
			if (cli_wf_action_at(wf, ti, ai, &a) == 0)
				describe_action(&a, ai + 1, now, f);
	}
}

/* The agent of the Workflow as a whole: status.agentID, else the current
 * action's, else the first task's. */
static char *wf_agent(const json_t *wf)
{
	const json_t *st = json_object_get(wf, "status");
	const char *id = json_string_value(json_object_get(st, "agentID"));
	struct cli_wf_action a;
	if (id && *id)
		return strdup(id);
	char *cur = cli_wf_col_agent(wf);
	if (cur)
		return cur;
	if (cli_wf_action_at(wf, 0, 0, &a) == 0 && a.agent)
		return strdup(a.agent);
	return NULL;
}

static void describe_where(const json_t *wf, int64_t now, FILE *f)
{
	struct cli_wf_action a;
	char line[1024];
	char *task = cli_wf_col_task(wf), *action = cli_wf_col_action(wf);
	const char *cstate = json_string_value(json_object_get(
		json_object_get(json_object_get(wf, "status"), "currentState"), "state"));
	if (action) {
		snprintf(line, sizeof(line), "task %s, action %s%s%s", task ?: "?", action,
			 cstate ? ", " : "", cstate ?: "");
		field(f, "Current Action:", line);
	}
	free(task);
	free(action);
	if (cli_wf_find_failed(wf, &a) == 0) {
		char d[48];
		cli_wf_action_duration(&a, now, d);
		snprintf(line, sizeof(line), "task %s, action %s: %s%s%s%s", a.task ?: "?",
			 a.name ?: "?", a.state, d[0] ? " after " : "", d,
			 a.message ? "" : " (no message)");
		field(f, "Failed Action:", line);
		if (a.message) {
			fprintf(f, "%-*s", CLI_WF_LABEL_WIDTH, "  Message:");
			print_lines(f, a.message, CLI_WF_LABEL_WIDTH);
		}
	}
}

void cli_wf_describe(const json_t *wf, FILE *f)
{
	const json_t *spec = json_object_get(wf, "spec"), *st = json_object_get(wf, "status");
	int64_t now = (int64_t)time(NULL);
	char t[96], *s;

	field(f, "Template:", json_string_value(json_object_get(spec, "templateRef")));
	field(f, "Hardware:", json_string_value(json_object_get(spec, "hardwareRef")));
	field(f, "Hardware Map:", s = join_map(json_object_get(spec, "hardwareMap")));
	free(s);
	field(f, "Boot Options:", s = join_map(json_object_get(spec, "bootOptions")));
	free(s);
	if (json_is_true(json_object_get(spec, "disabled")))
		field(f, "Disabled:", "true: nothing is handed out to the agent");
	s = cli_json_path_text(wf, ".status.state");
	if (s && cli_wf_legacy(wf)) {
		char *l = NULL;
		if (asprintf(&l, "%s (the status of tinkerbell/tink v0.12 and before)", s) > 0) {
			free(s);
			s = l;
		}
	}
	field(f, "State:", s ? s : "<none: not rendered yet>");
	free(s);
	field(f, "Template Rendering:", s = cli_wf_col_rendering(wf));
	free(s);
	field(f, "Agent:", s = wf_agent(wf));
	free(s);
	const json_t *gt = json_object_get(st, "globalTimeout");
	if (json_is_integer(gt) && json_integer_value(gt) > 0) {
		char g[32], v[64];
		cli_go_duration(json_integer_value(gt), g);
		snprintf(v, sizeof(v), "%llds (%s)", (long long)json_integer_value(gt), g);
		field(f, "Global Timeout:", v);
	} else {
		field(f, "Global Timeout:", NULL);
	}
	const char *stop = json_string_value(json_object_get(st, "globalExecutionStop"));
	when(stop, now, t);
	field(f, "Execution Stop:", stop ? t : NULL);
	describe_where(wf, now, f);
	describe_conditions(st, now, f);
	describe_tasks(wf, now, f);
}

/* ---- requests ---- */

json_t *cli_get_object(struct cli *c, const char *path, long *ret_code)
{
	struct cli_response resp = { 0 };
	json_t *v = NULL;
	*ret_code = 0;
	if (cli_request(c, "GET", path, NULL, NULL, 0, &resp) < 0)
		goto out;
	*ret_code = resp.code;
	if (resp.code == 200)
		v = cli_response_json(&resp);
	else
		cli_print_server_error(&resp);
out:
	cli_response_free(&resp);
	return v;
}

long cli_send_object(struct cli *c, const char *method, const char *path, const json_t *obj,
		     long quiet_code, json_t **ret_status)
{
	struct cli_response resp = { 0 };
	long code = -1;
	char *body = json_dumps(obj, JSON_COMPACT);
	if (ret_status)
		*ret_status = NULL;
	if (!body) {
		cli_error("out of memory");
		return -1;
	}
	if (cli_request(c, method, path, "application/json", body, strlen(body), &resp) < 0)
		goto out;
	code = resp.code;
	if (code >= 300 && code != quiet_code)
		cli_print_server_error(&resp);
	if (code >= 300 && ret_status)
		*ret_status = cli_response_status(&resp);
out:
	free(body);
	cli_response_free(&resp);
	return code;
}

static const struct cli_kind *wf_kind(void)
{
	return cli_kind_by_name("Workflow");
}

/* ---- provision ---- */

/* Lists kind in c->ns (with selector when not NULL): the items (new
 * reference) or NULL after printing why. */
static json_t *list_items(struct cli *c, const struct cli_kind *k, const char *selector)
{
	struct buf path = BUF_INIT(64 * 1024);
	json_t *list = NULL, *items = NULL;
	long code;
	if (cli_kind_path(&path, k, c->ns, NULL, NULL) < 0 ||
	    (selector && cli_query_add(&path, "labelSelector", selector) < 0)) {
		cli_error("out of memory");
		goto out;
	}
	if (!(list = cli_get_object(c, path.data, &code)))
		goto out;
	items = json_incref(json_object_get(list, "items"));
	if (!json_is_array(items)) {
		json_decref(items);
		items = NULL;
		cli_error("the server's list of %s has no items", k->plural);
	}
out:
	json_decref(list);
	buf_free(&path);
	return items;
}

/* Checks that the Template exists, so that a typo is not a Workflow
 * that fails later. */
static int check_template(struct cli *c, const char *name)
{
	struct buf path = BUF_INIT(8192);
	long code;
	json_t *t = NULL;
	int ret = CLI_EXIT_ERROR;
	if (cli_kind_path(&path, cli_kind_by_name("Template"), c->ns, name, NULL) < 0) {
		ret = cli_error("out of memory");
		goto out;
	}
	if ((t = cli_get_object(c, path.data, &code)))
		ret = CLI_EXIT_OK;
out:
	json_decref(t);
	buf_free(&path);
	return ret;
}

static int provision(struct cli *c, struct cli_provision *p, const char *selector)
{
	json_t *hw = NULL, *wfs = NULL, *obj = NULL, *st = NULL;
	struct buf path = BUF_INIT(8192);
	char msg[512];
	size_t busy = 0;
	int ret = CLI_EXIT_ERROR;

	if (check_template(c, p->template_ref) != CLI_EXIT_OK)
		goto out;
	if (!(hw = list_items(c, cli_kind_by_name("Hardware"), selector)) ||
	    !(wfs = list_items(c, wf_kind(), NULL)))
		goto out;
	if (json_array_size(hw) == 0) {
		ret = cli_error("no Hardware in namespace \"%s\" matches the selector \"%s\"",
				c->ns, selector);
		goto out;
	}
	int i = cli_wf_pick_hardware(hw, wfs, &busy);
	if (i < 0) {
		ret = cli_error("no free Hardware: %zu in namespace \"%s\" match \"%s\", %zu busy "
				"(a Workflow that is not finished refers to each)",
				json_array_size(hw), c->ns, selector, busy);
		goto out;
	}
	json_t *chosen = json_array_get(hw, (size_t)i);
	if (cli_wf_provision_object(p, chosen, &obj, msg, sizeof(msg)) < 0) {
		ret = cli_error("%s", msg);
		goto out;
	}
	const char *name = cli_meta_string(obj, "name");
	if (cli_kind_path(&path, wf_kind(), c->ns, NULL, NULL) < 0) {
		ret = cli_error("out of memory");
		goto out;
	}
	long code = cli_send_object(c, "POST", path.data, obj, 0, &st);
	if (code == 409) {
		ret = cli_error("workflow \"%s/%s\" exists already: Hardware \"%s\" is being (or "
				"was) provisioned with it; delete it, or give another --name",
				c->ns, name, cli_meta_string(chosen, "name"));
		goto out;
	}
	if (code < 200 || code >= 300)
		goto out;
	fprintf(stderr,
		"workflow.tinkerbell.org/%s created: Hardware %s (%zu of %zu matching "
		"free), template %s\n",
		name, cli_meta_string(chosen, "name"), json_array_size(hw) - busy,
		json_array_size(hw), p->template_ref);
	printf("%s\n", name);
	ret = CLI_EXIT_OK;
out:
	json_decref(st);
	json_decref(obj);
	json_decref(hw);
	json_decref(wfs);
	buf_free(&path);
	return ret;
}

int cli_cmd_provision(struct cli *c, int argc, char **argv)
{
	enum {
		OPT_TEMPLATE = CLI_OPT_COMMAND,
		OPT_SELECTOR,
		OPT_NAME,
		OPT_MAP,
		OPT_NETBOOT
	};
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "template", required_argument, NULL, OPT_TEMPLATE },
		{ "selector", required_argument, NULL, OPT_SELECTOR },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "map", required_argument, NULL, OPT_MAP },
		{ "netboot", no_argument, NULL, OPT_NETBOOT },
		{ 0 },
	};
	char *maps[CLI_WF_MAX_MAPS];
	struct cli_provision p = { .maps = maps };
	const char *selector = NULL;
	int o;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "l:", opts, NULL)) != -1) {
		switch (o) {
		case OPT_TEMPLATE: p.template_ref = optarg; break;
		case 'l':
		case OPT_SELECTOR: selector = optarg; break;
		case OPT_NAME: p.name = optarg; break;
		case OPT_NETBOOT: p.netboot = true; break;
		case OPT_MAP:
			if (p.nmaps == CLI_WF_MAX_MAPS)
				return cli_usage_error("provision", "more than %d --map options",
						       CLI_WF_MAX_MAPS);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return cli_usage_error("provision", "--map \"%s\": not KEY=VALUE",
						       optarg);
			maps[p.nmaps++] = optarg;
			break;
		default: {
			int r = cli_global_option(c, o, optarg);
			if (r <= 0)
				return r == 0 ? cli_help("provision") : cli_usage("provision");
		}
		}
	}
	if (optind < argc)
		return cli_usage_error("provision", "unexpected argument \"%s\"", argv[optind]);
	if (!p.template_ref || !*p.template_ref)
		return cli_usage_error("provision", "provision needs --template");
	if (!selector || !*selector)
		return cli_usage_error("provision", "provision needs --selector");
	if (p.name && !*p.name)
		return cli_usage_error("provision", "--name must not be empty");
	if (c->all_ns)
		return cli_usage_error("provision", "-A cannot be used with provision");
	p.ns = c->ns;
	return provision(c, &p, selector);
}
