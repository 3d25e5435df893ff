/* cmd_retry — `ironbell workflow retry NAME`.
 *
 * DESIGN: the client GETs the Workflow, lets wf_workflow_retry() (the
 * workflow part's own rule, the same the daemon would apply: from the
 * first action that is not SUCCESS) change its status, and PUTs the status
 * back with the resourceVersion it read as precondition. When the daemon
 * (the engine, an agent's report) changed the Workflow in between, the PUT
 * is refused 409 Conflict and the whole is done again from a fresh read,
 * at most CLI_WF_RETRY_TRIES times: a race costs a read, never a lost
 * update. What was reset is printed by comparing the actions before and
 * after (cli_wf_retry_report()). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/common.h"
#include "workflow/workflow.h"

#define CLI_WF_RETRY_TRIES 5 /* reads and writes of one retry on conflicts */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One read, retry and write. Returns CLI_EXIT_OK (done, printed),
 * CLI_EXIT_ERROR (printed), or -EAGAIN on a conflict. */
static int retry_once(struct cli *c, const char *name, const char *path, const char *status_path)
{
	json_t *wf, *before = NULL;
	char msg[512] = "";
	struct buf report = BUF_INIT(1024 * 1024);
	int ret = CLI_EXIT_ERROR;
	long code;

	if (!(wf = cli_get_object(c, path, &code)))
		return CLI_EXIT_ERROR;
	char *old_state = cli_json_path_text(wf, ".status.state");
	if (!(before = json_deep_copy(wf))) {
		ret = cli_error("out of memory");
		goto out;
	}
	if (wf_workflow_retry(wf, now_ms(), msg, sizeof(msg)) < 0) {
		ret = cli_error("workflow \"%s/%s\" cannot be retried: %s%s", c->ns, name,
				msg[0] ? msg : "the workflow part refused it",
				cli_wf_legacy(wf) ? " (its status is that of tinkerbell/tink v0.12 "
						    "and before: delete the Workflow and create "
						    "it again)" :
						    "");
		goto out;
	}
	code = cli_send_object(c, "PUT", status_path, wf, 409, NULL);
	if (code == 409) {
		ret = -EAGAIN;
		goto out;
	}
	if (code < 200 || code >= 300)
		goto out;
	char *new_state = cli_json_path_text(wf, ".status.state");
	printf("workflow.tinkerbell.org/%s retried: %s -> %s\n", name, old_state ?: "<none>",
	       new_state ?: "<none>");
	free(new_state);
	int n = cli_wf_retry_report(before, wf, &report);
	if (n > 0)
		printf("reset:\n%s", report.data);
	ret = CLI_EXIT_OK;
out:
	free(old_state);
	buf_free(&report);
	json_decref(before);
	json_decref(wf);
	return ret;
}

static int workflow_retry(struct cli *c, const char *name)
{
	struct buf path = BUF_INIT(8192), spath = BUF_INIT(8192);
	int ret = CLI_EXIT_ERROR;
	if (cli_kind_path(&path, cli_kind_by_name("Workflow"), c->ns, name, NULL) < 0 ||
	    cli_kind_path(&spath, cli_kind_by_name("Workflow"), c->ns, name, "status") < 0) {
		ret = cli_error("out of memory");
		goto out;
	}
	for (int i = 0; i < CLI_WF_RETRY_TRIES; i++) {
		ret = retry_once(c, name, path.data, spath.data);
		if (ret != -EAGAIN)
			goto out;
		fprintf(stderr,
			"ironbell: workflow \"%s/%s\" changed while it was being retried "
			"(409 Conflict): reading it again (%d of %d)\n",
			c->ns, name, i + 1, CLI_WF_RETRY_TRIES);
	}
	ret = cli_error("workflow \"%s/%s\" kept changing: gave up after %d tries; nothing "
			"was written",
			c->ns, name, CLI_WF_RETRY_TRIES);
out:
	buf_free(&path);
	buf_free(&spath);
	return ret;
}

int cli_cmd_workflow(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = { CLI_GLOBAL_LONGOPTS, { 0 } };
	int o;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
		int r = cli_global_option(c, o, optarg);
		if (r <= 0)
			return r == 0 ? cli_help("workflow") : cli_usage("workflow");
	}
	if (c->all_ns)
		return cli_usage_error("workflow", "-A cannot be used with workflow");
	if (argc - optind < 1)
		return cli_usage_error("workflow", "workflow needs a subcommand: retry");
	if (strcmp(argv[optind], "retry") != 0)
		return cli_usage_error("workflow", "unknown subcommand \"%s\" (retry)",
				       argv[optind]);
	if (argc - optind != 2)
		return cli_usage_error("workflow", "workflow retry needs one NAME");
	return workflow_retry(c, argv[optind + 1]);
}
