/* cmd_watch — the commands that follow the daemon over time, and version:
 *
 *   watch KIND     one line per change ("ADDED hardware/m1 rv=12"), or the
 *                  raw JSON events with -o json, until interrupted;
 *   events         the event log as a table, filtered by kind, name and
 *                  namespace; -f follows it;
 *   version        the client's and the daemon's versions (--client: the
 *                  client's alone, without asking the daemon).
 *
 * Watches read the daemon's chunked stream of one JSON event per line
 * (cli_stream()); each line is printed and flushed as it arrives, so a
 * pipe or a test reading the output sees it at once. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"

#define EVENTS_PATH "/apis/ironbell.dev/v1/events"

struct watch_ctx {
	const struct cli_kind *k;
	bool json;
	bool all_ns;
};

static int on_watch_line(void *arg, const char *line, size_t len)
{
	struct watch_ctx *w = arg;
	json_error_t e;
	json_t *ev = json_loadb(line, len, 0, &e);
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *obj = json_object_get(ev, "object");
	int ret = 0;
	if (!type) {
		cli_error("the watch stream carries something that is not an event: %s", e.text);
		ret = -1;
		goto out;
	}
	if (strcmp(type, "ERROR") == 0) {
		const char *msg = json_string_value(json_object_get(obj, "message"));
		const char *reason = json_string_value(json_object_get(obj, "reason"));
		fprintf(stderr, "Error from server (%s): %s\n", reason ? reason : "Unknown",
			msg ? msg : "the watch failed");
		ret = -1;
		goto out;
	}
	if (w->json) {
		/* Not the line as it came: a Secret's values are redacted. */
		cli_redact_secrets(ev);
		json_dumpf(ev, stdout, JSON_COMPACT);
		fputc('\n', stdout);
	} else {
		const char *ns = cli_meta_string(obj, "namespace");
		printf("%s %s/%s", type, w->k->singular, cli_meta_string(obj, "name") ?: "?");
		if (w->all_ns)
			printf(" namespace=%s", ns ? ns : "");
		printf(" rv=%s\n", cli_meta_string(obj, "resourceVersion") ?: "?");
	}
	fflush(stdout);
out:
	json_decref(ev);
	return ret;
}

int cli_cmd_watch(struct cli *c, int argc, char **argv)
{
	enum {
		OPT_RV = CLI_OPT_COMMAND
	};
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "selector", required_argument, NULL, 'l' },
		{ "resource-version", required_argument, NULL, OPT_RV },
		{ 0 },
	};
	struct watch_ctx w = { 0 };
	const char *selector = NULL, *rv = NULL;
	struct buf path = BUF_INIT(64 * 1024);
	int ret, o;
	uint64_t n;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "o:l:", opts, NULL)) != -1) {
		if (o == 'o') {
			if (strcmp(optarg, "json") != 0)
				return cli_usage_error("watch", "watch prints lines or -o json");
			w.json = true;
		} else if (o == 'l') {
			selector = optarg;
		} else if (o == OPT_RV) {
			if (num_parse_u64_str(optarg, UINT64_MAX, &n) < 0)
				return cli_usage_error("watch",
						       "--resource-version needs a number");
			rv = optarg;
		} else {
			int r = cli_global_option(c, o, optarg);
			if (r <= 0)
				return r == 0 ? cli_help("watch") : cli_usage("watch");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("watch", optind < argc ? "watch takes one KIND" :
								"watch needs a KIND");
	w.k = cli_kind_parse(argv[optind]);
	if (!w.k)
		return cli_usage_error("watch", "unknown kind \"%s\"", argv[optind]);
	w.all_ns = c->all_ns;
	if (cli_kind_path(&path, w.k, c->all_ns ? NULL : c->ns, NULL, NULL) < 0 ||
	    cli_query_add(&path, "watch", "1") < 0 ||
	    (selector && cli_query_add(&path, "labelSelector", selector) < 0) ||
	    (rv && cli_query_add(&path, "resourceVersion", rv) < 0)) {
		buf_free(&path);
		return cli_error("out of memory");
	}
	ret = cli_stream(c, path.data, on_watch_line, &w);
	buf_free(&path);
	return ret;
}

/* ---- events ---- */

struct events_ctx {
	bool json;
	bool all_ns;
	struct cli_table *t; /* listing: rows gathered, printed at the end */
	bool header_done;    /* following: printed line by line */
};

static void event_cells(const json_t *ev, bool all_ns, const char *cells[6], char obj[512])
{
	const struct cli_kind *k = cli_kind_by_name(json_string_value(json_object_get(ev, "kind")));
	const char *kind = json_string_value(json_object_get(ev, "kind"));
	snprintf(obj, 512, "%s/%s",
		 k    ? k->singular :
		 kind ? kind :
			"?",
		 json_string_value(json_object_get(ev, "name")) ?: "?");
	size_t i = 0;
	if (all_ns)
		cells[i++] = json_string_value(json_object_get(ev, "namespace")) ?: "";
	cells[i++] = json_string_value(json_object_get(ev, "time")) ?: "";
	cells[i++] = json_string_value(json_object_get(ev, "type")) ?: "";
	cells[i++] = json_string_value(json_object_get(ev, "reason")) ?: "";
	cells[i++] = obj;
	cells[i++] = json_string_value(json_object_get(ev, "message")) ?: "";
	if (i < 6)
		cells[i] = NULL;
}

static const char *const event_headers[] = { "NAMESPACE", "TIME",    "TYPE", "REASON",
					     "OBJECT",    "MESSAGE", NULL };
/* Column widths when following (rows are printed before the widest is
 * known): wide enough for the usual values. */
static const int follow_widths[] = { 12, 20, 7, 18, 28, 0 };

static void print_follow_row(bool all_ns, const char *const *cells)
{
	size_t first = all_ns ? 0 : 1;
	for (size_t i = first; i < 6; i++) {
		const char *s = cells[i - first];
		if (i == 5) {
			printf("%s\n", s);
			break;
		}
		int w = follow_widths[i];
		printf("%-*s   ", w, s);
	}
}

static int on_event_line(void *arg, const char *line, size_t len)
{
	struct events_ctx *x = arg;
	json_error_t e;
	json_t *msg = json_loadb(line, len, 0, &e);
	json_t *ev = json_object_get(msg, "object");
	const char *type = json_string_value(json_object_get(msg, "type"));
	const char *cells[6];
	char obj[512];
	int ret = 0;
	if (!type || !json_is_object(ev)) {
		cli_error("the event stream carries something that is not an event");
		ret = -1;
		goto out;
	}
	if (strcmp(type, "ERROR") == 0) {
		fprintf(stderr, "Error from server (%s): %s\n",
			json_string_value(json_object_get(ev, "reason")) ?: "Unknown",
			json_string_value(json_object_get(ev, "message")) ?: "the watch failed");
		ret = -1;
		goto out;
	}
	if (x->json) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
	} else {
		if (!x->header_done) {
			print_follow_row(x->all_ns, event_headers + (x->all_ns ? 0 : 1));
			x->header_done = true;
		}
		event_cells(ev, x->all_ns, cells, obj);
		print_follow_row(x->all_ns, cells);
	}
	fflush(stdout);
out:
	json_decref(msg);
	return ret;
}

static int list_events(struct cli *c, const char *path, struct events_ctx *x)
{
	struct cli_response resp = { 0 };
	json_t *list = NULL, *ev;
	size_t i;
	int ret = CLI_EXIT_ERROR;
	if (cli_request(c, "GET", path, NULL, NULL, 0, &resp) < 0)
		goto out;
	if (resp.code != 200) {
		cli_print_server_error(&resp);
		goto out;
	}
	if (!(list = cli_response_json(&resp)))
		goto out;
	json_t *items = json_object_get(list, "items");
	if (x->json) {
		cli_print_json(list, stdout);
		ret = CLI_EXIT_OK;
		goto out;
	}
	if (json_array_size(items) == 0) {
		if (c->all_ns)
			fprintf(stderr, "No events found.\n");
		else
			fprintf(stderr, "No events found in %s namespace.\n", c->ns);
		ret = CLI_EXIT_OK;
		goto out;
	}
	if (!(x->t = cli_table_new())) {
		ret = cli_error("out of memory");
		goto out;
	}
	cli_table_row(x->t);
	for (size_t h = c->all_ns ? 0 : 1; event_headers[h]; h++)
		cli_table_cell(x->t, event_headers[h]);
	json_array_foreach (items, i, ev) {
		const char *cells[6];
		char obj[512];
		event_cells(ev, c->all_ns, cells, obj);
		cli_table_row(x->t);
		for (size_t j = 0; j < (c->all_ns ? 6u : 5u); j++)
			cli_table_cell(x->t, cells[j]);
	}
	cli_table_print(x->t, stdout);
	ret = CLI_EXIT_OK;
out:
	cli_table_free(x->t);
	x->t = NULL;
	json_decref(list);
	cli_response_free(&resp);
	return ret;
}

int cli_cmd_events(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "follow", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	struct events_ctx x = { 0 };
	struct buf path = BUF_INIT(8192);
	bool follow = false;
	int ret, o;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "fo:", opts, NULL)) != -1) {
		if (o == 'f') {
			follow = true;
		} else if (o == 'o') {
			if (strcmp(optarg, "json") != 0)
				return cli_usage_error("events",
						       "events prints a table or -o json");
			x.json = true;
		} else {
			int r = cli_global_option(c, o, optarg);
			if (r <= 0)
				return r == 0 ? cli_help("events") : cli_usage("events");
		}
	}
	if (argc - optind > 2)
		return cli_usage_error("events", "events takes at most KIND and NAME");
	const struct cli_kind *k = NULL;
	if (optind < argc && !(k = cli_kind_parse(argv[optind])))
		return cli_usage_error("events", "unknown kind \"%s\"", argv[optind]);
	const char *name = argc - optind == 2 ? argv[optind + 1] : NULL;
	x.all_ns = c->all_ns;
	if (buf_puts(&path, EVENTS_PATH) < 0 || (k && cli_query_add(&path, "kind", k->kind) < 0) ||
	    (!c->all_ns && cli_query_add(&path, "namespace", c->ns) < 0) ||
	    (name && cli_query_add(&path, "name", name) < 0) ||
	    cli_query_add(&path, follow ? "watch" : "limit", follow ? "1" : "10000") < 0) {
		buf_free(&path);
		return cli_error("out of memory");
	}
	if (follow) {
		if (!x.json) {
			print_follow_row(x.all_ns, event_headers + (x.all_ns ? 0 : 1));
			fflush(stdout);
			x.header_done = true;
		}
		ret = cli_stream(c, path.data, on_event_line, &x);
	} else {
		ret = list_events(c, path.data, &x);
	}
	buf_free(&path);
	return ret;
}

/* ---- logs ---- */

struct logs_ctx {
	int printed;
};

/* One syslog event as a log line: "TIME MESSAGE" (the message already
 * starts with the severity and the program). Other events are skipped. */
static void print_log_line(const json_t *ev)
{
	const char *reason = json_string_value(json_object_get(ev, "reason"));
	if (!reason || strcmp(reason, "Syslog") != 0)
		return;
	printf("%s %s\n", json_string_value(json_object_get(ev, "time")) ?: "-",
	       json_string_value(json_object_get(ev, "message")) ?: "");
}

static int on_log_line(void *arg, const char *line, size_t len)
{
	struct logs_ctx *x = arg;
	json_t *msg = json_loadb(line, len, 0, NULL);
	const char *type = json_string_value(json_object_get(msg, "type"));
	json_t *ev = json_object_get(msg, "object");
	int ret = 0;
	if (!type || !json_is_object(ev)) {
		ret = cli_error("the event stream carries something that is not an event");
	} else if (strcmp(type, "ERROR") == 0) {
		fprintf(stderr, "Error from server: %s\n",
			json_string_value(json_object_get(ev, "message")) ?: "the watch failed");
		ret = -1;
	} else {
		print_log_line(ev);
		x->printed++;
		fflush(stdout);
	}
	json_decref(msg);
	return ret;
}

int cli_cmd_logs(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "follow", no_argument, NULL, 'f' },
		{ 0 },
	};
	struct buf path = BUF_INIT(8192);
	struct cli_response resp = { 0 };
	struct logs_ctx x = { 0 };
	bool follow = false;
	int ret = CLI_EXIT_ERROR, o;
	json_t *list = NULL;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "f", opts, NULL)) != -1) {
		if (o == 'f') {
			follow = true;
		} else {
			int r = cli_global_option(c, o, optarg);
			if (r <= 0)
				return r == 0 ? cli_help("logs") : cli_usage("logs");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("logs", "logs takes one HARDWARE name");
	if (c->all_ns)
		return cli_usage_error("logs", "-A cannot be used with logs");
	const char *name = argv[optind];
	const struct cli_kind *k = cli_kind_parse("hardware");
	/* The Hardware must exist: an empty log and a typo look alike. */
	if (!k || cli_kind_path(&path, k, c->ns, name, NULL) < 0) {
		ret = cli_error("out of memory");
		goto out;
	}
	if (cli_request(c, "GET", path.data, NULL, NULL, 0, &resp) < 0)
		goto out;
	if (resp.code != 200) {
		cli_print_server_error(&resp);
		goto out;
	}
	cli_response_free(&resp);
	buf_reset(&path);
	if (buf_puts(&path, EVENTS_PATH) < 0 || cli_query_add(&path, "kind", "Hardware") < 0 ||
	    cli_query_add(&path, "namespace", c->ns) < 0 || cli_query_add(&path, "name", name) < 0 ||
	    cli_query_add(&path, follow ? "watch" : "limit", follow ? "1" : "10000") < 0) {
		ret = cli_error("out of memory");
		goto out;
	}
	if (follow) {
		ret = cli_stream(c, path.data, on_log_line, &x);
		goto out;
	}
	if (cli_request(c, "GET", path.data, NULL, NULL, 0, &resp) < 0)
		goto out;
	if (resp.code != 200) {
		cli_print_server_error(&resp);
		goto out;
	}
	if (!(list = cli_response_json(&resp)))
		goto out;
	size_t i;
	json_t *ev;
	json_array_foreach (json_object_get(list, "items"), i, ev)
		print_log_line(ev);
	ret = CLI_EXIT_OK;
out:
	json_decref(list);
	cli_response_free(&resp);
	buf_free(&path);
	return ret;
}

/* ---- version ---- */

int cli_cmd_version(struct cli *c, int argc, char **argv)
{
	enum {
		OPT_CLIENT = CLI_OPT_COMMAND
	};
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "client", no_argument, NULL, OPT_CLIENT },
		{ 0 },
	};
	struct cli_response resp = { 0 };
	json_t *v = NULL;
	bool client_only = false;
	int ret = CLI_EXIT_ERROR, o;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
		if (o == OPT_CLIENT) {
			client_only = true;
			continue;
		}
		int r = cli_global_option(c, o, optarg);
		if (r <= 0)
			return r == 0 ? cli_help("version") : cli_usage("version");
	}
	if (optind < argc)
		return cli_usage_error("version", "version takes no arguments");
	printf("Client Version: %s\n", PACKAGE_VERSION);
	fflush(stdout);
	/* --client, as kubectl has it: no daemon needed (a script that checks
	 * the client's version on a host without the daemon, or before it
	 * starts). */
	if (client_only)
		return CLI_EXIT_OK;
	if (cli_request(c, "GET", "/version", NULL, NULL, 0, &resp) < 0)
		goto out;
	if (resp.code != 200) {
		cli_print_server_error(&resp);
		goto out;
	}
	if (!(v = cli_response_json(&resp)))
		goto out;
	json_t *schema = json_object_get(v, "schema");
	printf("Server Version: %s", json_string_value(json_object_get(v, "version")) ?: "unknown");
	if (json_is_integer(schema))
		printf(" (schema %lld)", (long long)json_integer_value(schema));
	printf("\n");
	ret = CLI_EXIT_OK;
out:
	json_decref(v);
	cli_response_free(&resp);
	return ret;
}
