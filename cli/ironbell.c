/* ironbell — the admin client of ironbelld, in the manner of kubectl.
 *
 * main() reads the global options up to the command name, then hands the
 * rest of the command line to the command (cli/cmd_*.c), whose own option
 * table includes the global options again, so that `ironbell get hw -n x`
 * and `ironbell -n x get hw` mean the same. The commands talk to the
 * daemon's admin API (cli/client.c) and never to the database.
 *
 * Exit status: 0 success, 1 the request failed or the server refused it,
 * 2 usage error (unknown command, flag or kind, missing argument). */
#include "config.h"

#include <curl/curl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"

struct command {
	const char *name;
	int (*run)(struct cli *c, int argc, char **argv);
	const char *usage; /* after "ironbell " */
	const char *help;  /* what it does and its own options */
};

static const struct command commands[] = {
	{ "apply", cli_cmd_apply, "apply -f FILE|DIR|- [-f ...] [-n NS]",
	  "Creates or updates the objects in the files, all in one transaction: either\n"
	  "every document is stored or none is. A YAML error anywhere sends nothing.\n"
	  "  -f, --filename FILE   a file, '-' for stdin, or a directory (its *.yaml,\n"
	  "                        *.yml and *.json files in name order); repeatable\n" },
	{ "get", cli_cmd_get,
	  "get KIND[,KIND...] [NAME...] [-o wide|json|yaml|name] [-l SELECTOR] [-n NS | -A]",
	  "Lists objects of a kind, or shows the ones named; several kinds joined by\n"
	  "commas are listed in turn (`get hardware,workflows`). `get leases [MAC|IP...]`\n"
	  "lists the DHCP server's leases.\n"
	  "  -o, --output FORMAT   wide, json, yaml or name (default: a table)\n"
	  "  -l, --selector SEL    label selector: a=b, a!=b, a, !a, a in (x,y), ...\n" },
	{ "describe", cli_cmd_describe, "describe KIND NAME... [-n NS]",
	  "Shows objects in detail, with their events.\n" },
	{ "delete", cli_cmd_delete,
	  "delete KIND NAME... | delete -f FILE [--ignore-not-found] [-n NS]",
	  "Deletes the objects named, or those in the files.\n"
	  "  -f, --filename FILE   as for apply; repeatable\n"
	  "      --ignore-not-found  an object that does not exist is not an error\n" },
	{ "events", cli_cmd_events, "events [-f] [-o json] [KIND [NAME]] [-n NS | -A]",
	  "Lists the events of objects (all kinds, a kind, or one object).\n"
	  "  -f, --follow          keep printing new events until interrupted\n"
	  "  -o, --output json     print the raw JSON\n" },
	{ "logs", cli_cmd_logs, "logs HARDWARE [-f] [-n NS]",
	  "Prints the syslog messages a machine sent while it was being provisioned,\n"
	  "oldest first, one per line: time, severity, program, message.\n"
	  "  -f, --follow          keep printing new messages until interrupted\n" },
	{ "watch", cli_cmd_watch,
	  "watch KIND [-l SELECTOR] [-o json] [--resource-version N] [-n NS | -A]",
	  "Prints one line per change (ADDED, MODIFIED, DELETED) until interrupted.\n"
	  "  -l, --selector SEL    label selector\n"
	  "  -o, --output json     print the raw watch events\n"
	  "      --resource-version N  start after this resourceVersion\n" },
	{ "power", cli_cmd_power,
	  "power on|off|cycle|reset|soft|status MACHINE [--timeout DURATION] [-n NS]",
	  "Changes (or reads) a machine's power through its BMC: creates a Job with\n"
	  "one power Task and follows it, printing each Task's state, until it ends.\n"
	  "Exit status 0 when the Job Completed, 1 when it Failed or timed out.\n"
	  "`power status` then prints the Machine's power state.\n"
	  "      --timeout DURATION  how long to follow the Job (90s, 15m, 1h;\n"
	  "                        default 15m); the Job itself goes on\n" },
	{ "bootdev", cli_cmd_bootdev,
	  "bootdev pxe|disk|bios|cdrom|safe MACHINE [--persistent] [--efi] [--timeout DURATION]",
	  "Sets the device a machine boots from next through its BMC, as a Job with one\n"
	  "Task, followed as for power.\n"
	  "      --persistent      for every boot, not only the next one\n"
	  "      --efi             an EFI boot (not legacy BIOS)\n"
	  "      --timeout DURATION  as for power\n" },
	{ "workflow", cli_cmd_workflow, "workflow retry NAME [-n NS]",
	  "retry: a FAILED or TIMEOUT Workflow goes back to PENDING from its first action\n"
	  "that is not SUCCESS (that action and the later ones are reset: state, times,\n"
	  "message, attempts). The status is written with the resourceVersion read as\n"
	  "precondition; when the Workflow changed meanwhile, it is read and retried\n"
	  "again, a few times. Prints the actions reset.\n" },
	{ "provision", cli_cmd_provision,
	  "provision --template T --selector SEL [--name N] [--map KEY=VALUE ...] [--netboot] [-n NS]",
	  "Chooses a free Hardware among those the label selector matches (free: no\n"
	  "Workflow that is not finished refers to it; the first by name) and creates\n"
	  "its Workflow; prints the Workflow's name.\n"
	  "      --template T      the Template (spec.templateRef)\n"
	  "  -l, --selector SEL    label selector of the Hardware: a=b[,c=d], ...\n"
	  "      --name N          the Workflow's name (default: <template>-<hardware>;\n"
	  "                        an existing name is refused, 409)\n"
	  "      --map KEY=VALUE   a spec.hardwareMap entry, over device_1 (the\n"
	  "                        Hardware's first MAC); repeatable\n"
	  "      --netboot         bootOptions: toggleAllowNetboot, bootMode netboot\n" },
	{ "version", cli_cmd_version, "version [--client]",
	  "Prints the client's and the daemon's versions.\n"
	  "      --client          the client's version only; the daemon is not asked\n" },
};

static const char global_help[] =
	"Global options:\n"
	"  --socket PATH         the daemon's admin socket ($IRONBELL_SOCKET,\n"
	"                        default " CLI_DEFAULT_SOCKET ")\n"
	"  --server URL          use the TCP admin API at URL instead\n"
	"  --token-file FILE     bearer token for --server ($IRONBELL_TOKEN)\n"
	"  --cacert FILE         CA certificates (PEM) that verify an https --server\n"
	"                        ($IRONBELL_CA; default: the system's)\n"
	"  --insecure-skip-tls-verify  do not verify the server's certificate\n"
	"  -n, --namespace NS    namespace (default \"default\")\n"
	"  -A, --all-namespaces  every namespace\n"
	"  -h, --help            this help\n"
	"Kinds: hardware (hw), templates (tpl), workflows (wf), machines, jobs (j),\n"
	"tasks (t), secrets; plural, singular, short or qualified names\n"
	"(machines.bmc.tinkerbell.org). Exit status: 0 ok, 1 error, 2 usage.\n";

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (name && strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int cli_usage(const char *cmd)
{
	const struct command *c = find_command(cmd);
	if (c) {
		fprintf(stderr, "usage: ironbell %s\n", c->usage);
		fprintf(stderr, "Run 'ironbell %s --help' for more.\n", c->name);
	} else {
		fprintf(stderr,
			"usage: ironbell [--socket PATH | --server URL] [-n NS | -A] COMMAND ...\n");
		fprintf(stderr, "commands:");
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			fprintf(stderr, " %s", commands[i].name);
		fprintf(stderr, "\nRun 'ironbell --help' for more.\n");
	}
	return CLI_EXIT_USAGE;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fputs("ironbell: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return cli_usage(cmd);
}

int cli_help(const char *cmd)
{
	const struct command *c = find_command(cmd);
	if (c) {
		printf("usage: ironbell %s\n\n%s\n%s", c->usage, c->help, global_help);
		return CLI_EXIT_OK;
	}
	printf("ironbell — the admin client of ironbelld\n\n"
	       "usage: ironbell [global options] COMMAND [options] [arguments]\n\n"
	       "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		printf("  ironbell %s\n", commands[i].usage);
	printf("\n%s\nSee ironbell(1).\n", global_help);
	return CLI_EXIT_OK;
}

int cli_error(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_EXIT_ERROR;
}

int cli_global_option(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case CLI_OPT_SOCKET: c->socket = arg; return 1;
	case CLI_OPT_SERVER:
		if (strncmp(arg, "http://", 7) != 0 && strncmp(arg, "https://", 8) != 0) {
			fprintf(stderr, "ironbell: --server needs an http:// or https:// URL\n");
			return -1;
		}
		c->server = arg;
		return 1;
	case CLI_OPT_TOKEN_FILE: c->token_file = arg; return 1;
	case CLI_OPT_CACERT:
		if (!*arg) {
			fprintf(stderr, "ironbell: --cacert: empty path\n");
			return -1;
		}
		c->cacert = arg;
		return 1;
	case CLI_OPT_INSECURE: c->insecure = true; return 1;
	case 'n':
		if (!*arg) {
			fprintf(stderr, "ironbell: the namespace must not be empty\n");
			return -1;
		}
		c->ns = arg;
		c->ns_set = true;
		return 1;
	case 'A': c->all_ns = true; return 1;
	case 'h': return 0;
	default: return -1;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { CLI_GLOBAL_LONGOPTS, { 0 } };
	const char *env = getenv("IRONBELL_SOCKET"), *ca = getenv("IRONBELL_CA");
	struct cli c = { .socket = env && *env ? env : CLI_DEFAULT_SOCKET,
			 .cacert = ca && *ca ? ca : NULL,
			 .ns = "default" };
	int o, ret;
	/* '+': stop at the command; its own options follow it. */
	while ((o = getopt_long(argc, argv, "+" CLI_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
		int r = cli_global_option(&c, o, optarg);
		if (r == 0)
			return cli_help(NULL);
		if (r < 0)
			return cli_usage(NULL);
	}
	if (optind >= argc)
		return cli_usage_error(NULL, "no command given");
	if (strcmp(argv[optind], "help") == 0)
		return cli_help(optind + 1 < argc ? argv[optind + 1] : NULL);
	const struct command *cmd = find_command(argv[optind]);
	if (!cmd)
		return cli_usage_error(NULL, "unknown command \"%s\"", argv[optind]);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return cli_error("cannot initialise libcurl");
	/* Options after the command are parsed by it; the global ones set so
	 * far stay in c. getopt names argv[0] in its messages: make it
	 * "ironbell get" rather than "get". */
	char prog[64];
	snprintf(prog, sizeof(prog), "ironbell %s", cmd->name);
	argv[optind] = prog;
	ret = cmd->run(&c, argc - optind, argv + optind);
	free(c.token);
	curl_global_cleanup();
	return ret;
}
