/* cli — private declarations of `ironbell`, the admin client.
 *
 * The client is a thin shell over the admin API (the HTTP API the daemon
 * serves on its unix socket, or on TCP with a bearer token): every command
 * builds a request, sends it with libcurl (cli/client.c) and prints the
 * answer the way kubectl prints it (cli/print.c). Nothing here knows the
 * store; the kinds it accepts are a small table of its own (cli/kinds.c).
 * Each command returns the process exit status: CLI_EXIT_OK, CLI_EXIT_ERROR
 * (the request failed, or the server refused it), CLI_EXIT_USAGE. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_ERROR = 1,
	CLI_EXIT_USAGE = 2,
};

#define CLI_DEFAULT_SOCKET "/run/ironbell/api.sock"
#define CLI_MAX_RESPONSE (256u * 1024 * 1024) /* bytes of one answer, or one watch line */
#define CLI_MAX_INPUT (256u * 1024 * 1024)    /* bytes of all -f files together */
#define CLI_MAX_TOKEN (64u * 1024)            /* bytes of a --token-file */
#define CLI_CONNECT_TIMEOUT_S 10L
#define CLI_REQUEST_TIMEOUT_S 300L /* not for watches, which last */

/* The global options, shared by every command. */
struct cli {
	const char *socket;     /* --socket, $IRONBELL_SOCKET, or CLI_DEFAULT_SOCKET */
	const char *server;     /* --server URL: use TCP instead of the socket */
	const char *token_file; /* --token-file */
	char *token;            /* owned; read from token_file or $IRONBELL_TOKEN */
	const char *cacert;     /* --cacert or $IRONBELL_CA: the CA bundle that
				 * verifies an https --server; NULL: the system's */
	bool insecure;          /* --insecure-skip-tls-verify: no verification */
	const char *ns;         /* -n, default "default" */
	bool ns_set;            /* -n was given */
	bool all_ns;            /* -A */
};

/* ---- global options (cli/ironbell.c) ---- */

/* Long options every command accepts, and their short letters. */
enum {
	CLI_OPT_SOCKET = 0x100,
	CLI_OPT_SERVER,
	CLI_OPT_TOKEN_FILE,
	CLI_OPT_CACERT,
	CLI_OPT_INSECURE,
	CLI_OPT_COMMAND = 0x200, /* first value free for a command's own options */
};
#define CLI_GLOBAL_SHORTOPTS "n:Ah"
/* clang-format off */
#define CLI_GLOBAL_LONGOPTS                                             \
	{ "socket", required_argument, NULL, CLI_OPT_SOCKET },          \
	{ "server", required_argument, NULL, CLI_OPT_SERVER },          \
	{ "token-file", required_argument, NULL, CLI_OPT_TOKEN_FILE },  \
	{ "cacert", required_argument, NULL, CLI_OPT_CACERT },          \
	{ "insecure-skip-tls-verify", no_argument, NULL, CLI_OPT_INSECURE }, \
	{ "namespace", required_argument, NULL, 'n' },                  \
	{ "all-namespaces", no_argument, NULL, 'A' },                   \
	{ "help", no_argument, NULL, 'h' }
/* clang-format on */

/* Handles one global option returned by getopt_long. Returns 1 when it
 * was one (recorded in c), 0 for 'h' (the caller prints its help), -1
 * when opt is not a global option. */
int cli_global_option(struct cli *c, int opt, const char *arg);
/* Prints the usage line of cmd (NULL: the general one) and a hint to
 * --help on stderr; returns CLI_EXIT_USAGE. */
int cli_usage(const char *cmd);
/* Prints "ironbell: <msg>" and the usage line of cmd (NULL: the general
 * one) on stderr, and returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the help of cmd on stdout and returns CLI_EXIT_OK. */
int cli_help(const char *cmd);
/* Prints "error: <msg>" on stderr. Returns CLI_EXIT_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- kinds (cli/kinds.c) ---- */

struct cli_column {
	const char *header;             /* "STATE" */
	const char *path;               /* ".status.state", or NULL when fn computes it */
	bool wide;                      /* only with -o wide */
	char *(*fn)(const json_t *obj); /* malloc'ed text, or NULL for "" */
};

struct cli_kind {
	const char *kind;                 /* "Hardware" */
	const char *group;                /* "tinkerbell.org", "" for core */
	const char *version;              /* "v1alpha1" */
	const char *api_version;          /* "tinkerbell.org/v1alpha1" */
	const char *plural;               /* "hardware": the path segment */
	const char *singular;             /* "hardware" */
	const char *short_names[3];       /* NULL-terminated */
	const char *resource;             /* kubectl's name: "hardware.tinkerbell.org", "secret" */
	const struct cli_column *columns; /* printer columns, NULL-header-terminated */
};

/* Resolves what a user types: kind, plural, singular or short name, case
 * insensitive, optionally qualified by its group or a leading part of it
 * ("machines.bmc.tinkerbell.org", "machine.bmc"), or by version.group.
 * Returns NULL when nothing matches. */
const struct cli_kind *cli_kind_parse(const char *s);
/* The kind of an object (apiVersion and kind as written in it), or NULL. */
const struct cli_kind *cli_kind_from_object(const char *api_version, const char *kind);
/* The kind named by its Kind alone ("Hardware"), as events carry it. */
const struct cli_kind *cli_kind_by_name(const char *kind);
/* Writes the API path of kind k into out: the collection in namespace ns
 * (ns NULL: across all namespaces), or the object name when name is not
 * NULL, plus "/sub" when sub is not NULL. name and ns are escaped. */
int cli_kind_path(struct buf *out, const struct cli_kind *k, const char *ns, const char *name,
		  const char *sub);

/* ---- HTTP (cli/client.c) ---- */

struct cli_response {
	long code;       /* HTTP status */
	struct buf body; /* capped at CLI_MAX_RESPONSE */
};

/* Sends one request and reads the whole answer into *resp (which the
 * caller frees with cli_response_free()). body may be NULL; ctype is its
 * Content-Type. Returns 0 when an HTTP answer came back (whatever its
 * status), or -1 after printing why not (cannot connect, naming the socket
 * or URL; answer too large). */
int cli_request(struct cli *c, const char *method, const char *path, const char *ctype,
		const char *body, size_t len, struct cli_response *resp);
void cli_response_free(struct cli_response *resp);
/* Parses the answer as a JSON object; NULL (after printing why) if it is
 * not one. */
json_t *cli_response_json(const struct cli_response *resp);
/* Prints a failed answer on stderr: "Error from server (Reason): message"
 * for a Status body, else the code and the first line of the body. */
void cli_print_server_error(const struct cli_response *resp);
/* Returns resp's Status JSON (new reference) or NULL if the body is not a
 * Status object. */
json_t *cli_response_status(const struct cli_response *resp);

/* Called for each line of a streamed answer (without its '\n'). Returns 0
 * to go on, 1 to stop cleanly, <0 to stop with an error. */
typedef int (*cli_line_fn)(void *arg, const char *line, size_t len);
/* GETs path and calls fn for each line until the server ends the stream,
 * fn stops it, or SIGINT/SIGTERM arrive. An error status (>= 400) is
 * printed as by cli_print_server_error(). Returns CLI_EXIT_OK or
 * CLI_EXIT_ERROR. */
int cli_stream(struct cli *c, const char *path, cli_line_fn fn, void *arg);
/* Appends "key=value" (value URL-escaped) to a query in out, with '?' or
 * '&' before it. */
int cli_query_add(struct buf *out, const char *key, const char *value);

/* ---- printing (cli/print.c) ---- */

/* A table of text cells printed kubectl style: each column as wide as its
 * widest cell, columns separated by three spaces, the last not padded. */
struct cli_table;
struct cli_table *cli_table_new(void);
void cli_table_free(struct cli_table *t);
/* Starts a new row. */
int cli_table_row(struct cli_table *t);
/* Adds a cell to the current row (s NULL: empty). */
int cli_table_cell(struct cli_table *t, const char *s);
size_t cli_table_rows(const struct cli_table *t);
void cli_table_print(const struct cli_table *t, FILE *f);

/* The value at a dotted path (".status.state") of obj: a string as is,
 * numbers and booleans as text, objects and arrays as compact JSON.
 * Returns a malloc'ed string, or NULL when absent or null. */
char *cli_json_path_text(const json_t *obj, const char *path);
/* The string at metadata.<field>, or NULL. Borrowed from obj. */
const char *cli_meta_string(const json_t *obj, const char *field);
/* Parses an RFC 3339 timestamp ("2026-11-22T07:31:44Z", optional
 * fraction, "Z" or "+hh:mm"). Returns 0 and seconds since the epoch, or
 * -EINVAL. */
int cli_parse_time(const char *s, int64_t *ret);
/* kubectl's short age ("5s", "3m12s", "2h", "4d") of a duration in
 * seconds; negative durations print "0s". */
void cli_format_age(int64_t seconds, char out[static 32]);
/* The AGE of an object from metadata.creationTimestamp, "<unknown>" when
 * it has none. */
void cli_object_age(const json_t *obj, int64_t now, char out[static 32]);
#define CLI_REDACTED "<redacted>" /* what a Secret's value prints as */
/* Replaces the values of data and stringData with CLI_REDACTED in v when
 * it is a Secret, in each Secret of v's items (a List), and in v's object
 * (a watch event). Nothing else is changed. */
void cli_redact_secrets(json_t *v);
/* Prints v as YAML (yj_dump) to f, each line prefixed by indent spaces.
 * Returns 0 or a negative errno. */
int cli_print_yaml(const json_t *v, FILE *f, int indent);
/* Prints v as JSON indented by 4, followed by a newline. */
void cli_print_json(const json_t *v, FILE *f);

/* ---- input files (cli/load.c) ---- */

/* Reads every -f argument (a file, "-" for stdin, or a directory whose
 * *.yaml, *.yml and *.json files are read in name order) and parses every
 * document of every file before anything is sent. `kind: ...List`
 * documents are expanded into their items. Objects without
 * metadata.namespace get ns; when ns_explicit, an object in another
 * namespace is an error. On success returns 0, a new array of the objects
 * in *ret_objs, and a new array in *ret_origins with, for each, the text
 * "FILE:LINE (document N)". On failure prints why (the file, the document
 * and line:column of a YAML error) and returns -1. */
int cli_load_files(char *const *files, size_t nfiles, const char *ns, bool ns_explicit,
		   json_t **ret_objs, json_t **ret_origins);

/* ---- commands ---- */

int cli_cmd_apply(struct cli *c, int argc, char **argv);
int cli_cmd_delete(struct cli *c, int argc, char **argv);
int cli_cmd_get(struct cli *c, int argc, char **argv);
int cli_cmd_describe(struct cli *c, int argc, char **argv);
int cli_cmd_events(struct cli *c, int argc, char **argv);
int cli_cmd_logs(struct cli *c, int argc, char **argv);
int cli_cmd_watch(struct cli *c, int argc, char **argv);
int cli_cmd_version(struct cli *c, int argc, char **argv);
int cli_cmd_power(struct cli *c, int argc, char **argv);
int cli_cmd_bootdev(struct cli *c, int argc, char **argv);

int cli_cmd_workflow(struct cli *c, int argc, char **argv);
/* GETs path: the JSON object on 200; else NULL with the error printed and
 * the HTTP code in *ret_code (0 when none came). */
json_t *cli_get_object(struct cli *c, const char *path, long *ret_code);
/* Sends obj as JSON with method to path. Returns the HTTP code (after
 * printing the server's error when it is not 2xx, unless it is
 * quiet_code), and when ret_status is not NULL the server's Status of an
 * error (new reference, or NULL); or -1 when no answer came (printed). */
long cli_send_object(struct cli *c, const char *method, const char *path, const json_t *obj,
		     long quiet_code, json_t **ret_status);
int cli_cmd_provision(struct cli *c, int argc, char **argv);

/* ---- Workflows (cli/wf.c: pure; cli/cmd_workflow.c: commands) ---- */

#define CLI_WF_NAME_MAX 253 /* bytes of a Workflow's name, a DNS subdomain */

/* Whether the Workflow's status has the shape tinkerbell/tink <= v0.12
 * wrote: a STATE_* state, or (without a state) status.currentAction or
 * status.templateRending. */
bool cli_wf_legacy(const json_t *wf);
/* SUCCESS, FAILED, TIMEOUT and their STATE_* forms. state may be NULL. */
bool cli_wf_state_terminal(const char *state);
/* Columns of get (struct cli_column.fn), either shape: the current task
 * and action (legacy: the task holding status.currentAction, and
 * currentAction), its agent (legacy: the task's worker), and the
 * template rendering (legacy: templateRending). Malloc'ed, or NULL. */
char *cli_wf_col_task(const json_t *wf);
char *cli_wf_col_action(const json_t *wf);
char *cli_wf_col_agent(const json_t *wf);
char *cli_wf_col_rendering(const json_t *wf);

/* One action of a Workflow's status, either shape. Strings are borrowed
 * from the Workflow (NULL when absent or empty); numbers are -1 when
 * absent. */
struct cli_wf_action {
	const char *task, *task_id, *agent; /* the task's name, id, agentID or worker */
	const char *id, *name, *image;
	const char *state;        /* state, legacy status */
	const char *start, *stop; /* executionStart (legacy startedAt), executionStop */
	const char *duration;     /* executionDuration as the agent wrote it */
	const char *message;
	const char *retry_after, *deadline; /* ironbell's own */
	long long timeout, seconds;         /* seconds; seconds is the legacy duration */
	long long attempts, retries;        /* ironbell's own */
};
/* The number of tasks in status.tasks, and of actions in task ti. */
size_t cli_wf_tasks(const json_t *wf);
size_t cli_wf_actions(const json_t *wf, size_t ti);
/* Action ai of task ti into *out. 0, or -ENOENT. */
int cli_wf_action_at(const json_t *wf, size_t ti, size_t ai, struct cli_wf_action *out);
/* The first action whose state is FAILED or TIMEOUT (either shape) into
 * *out. 0, or -ENOENT. */
int cli_wf_find_failed(const json_t *wf, struct cli_wf_action *out);
/* Go's time.Duration text of whole seconds ("0s", "45s", "2m0s",
 * "1h2m3s"), as executionDuration is written. */
void cli_go_duration(int64_t seconds, char out[static 32]);
/* How long the action ran: executionDuration, else stop - start, else the
 * legacy seconds, else for a RUNNING action "<now - start> so far";
 * "" when none is known. */
void cli_wf_action_duration(const struct cli_wf_action *a, int64_t now, char out[static 48]);
/* For `workflow retry`: appends to out a line "  task T, action A: OLD ->
 * NEW" for each action of after whose state, attempts, start or message
 * differ from before's. Returns the number of lines, or a negative errno
 * (out full). */
int cli_wf_retry_report(const json_t *before, const json_t *after, struct buf *out);
/* Whether Workflow wf keeps Hardware hw_name busy: its spec.hardwareRef,
 * not disabled, and its state not terminal (no state yet counts as busy). */
bool cli_wf_holds_hardware(const json_t *wf, const char *hw_name);
/* Among the Hardware objects of the array hardware, the free one (no
 * Workflow of workflows holds it) with the smallest name: its index, or
 * -ENOENT. *ret_busy gets the number of Hardware held. */
int cli_wf_pick_hardware(const json_t *hardware, const json_t *workflows, size_t *ret_busy);
/* What `provision` creates. */
struct cli_provision {
	const char *template_ref;
	const char *name; /* NULL: "<template>-<hardware>" */
	const char *ns;
	char **maps; /* "key=value" for spec.hardwareMap */
	size_t nmaps;
	bool netboot; /* bootOptions toggleAllowNetboot, bootMode netboot */
};
/* Builds the Workflow p asks for on Hardware hw (the object): templateRef,
 * hardwareRef, hardwareMap {device_1: the first interface's MAC} with the
 * --map entries over it, bootOptions with netboot. 0 and a new object in
 * *ret, or -EINVAL (a --map that is not KEY=VALUE, no device_1, a name
 * too long) or -ENOMEM, with why in msg. */
int cli_wf_provision_object(const struct cli_provision *p, const json_t *hw, json_t **ret,
			    char *msg, size_t msglen);
/* describe of a Workflow (cli/cmd_workflow.c): the spec summary, state,
 * timeouts, what failed, each task and action, the conditions. The
 * caller prints the identity before and the events after. */
void cli_wf_describe(const json_t *wf, FILE *f);

/* ---- the bmc kinds (cli/cmd_bmc.c) ---- */

/* Columns of get (struct cli_column.fn): each a malloc'ed text or NULL.
 * Contactable: the status of the Machine's Contactable condition, and its
 * message; a Job's Machine, state (Completed, Failed, Running, Pending)
 * and Tasks done/total; a Task's action in words ("power off", "bootdev
 * pxe once efi") and state. */
char *cli_bmc_contactable(const json_t *obj);
char *cli_bmc_contactable_message(const json_t *obj);
char *cli_bmc_job_machine(const json_t *obj);
char *cli_bmc_job_state(const json_t *obj);
char *cli_bmc_job_tasks(const json_t *obj);
char *cli_bmc_task_action(const json_t *obj);
char *cli_bmc_task_state(const json_t *obj);
/* Reads the Tasks of the namespace (every one with -A) and records on each
 * Job of jobs how many of its Tasks have Completed, for the TASKS column.
 * For a table only: the Jobs gain a key the API does not have. On an
 * error (printed) the column shows "?". */
void cli_bmc_count_tasks(struct cli *c, json_t *jobs);
/* For describe of a Hardware with spec.bmcRef: prints its Machine's
 * power state and Contactable condition (a line, nothing without bmcRef). */
void cli_bmc_describe_hardware(struct cli *c, const json_t *hw);
