/* workflow — the part's public header: Tinkerbell templates and
 * workflows.
 *
 * - The template renderer: the Go text/template language as Tinkerbell's
 *   templates use it (missingkey=error, the output capped, the functions
 *   of its function map), evaluated over jansson values, and the
 *   template's YAML schema. Pure.
 * - The workflow controller (wf_server_*): one thread that renders
 *   Workflows, runs their boot options, enforces their timeouts and
 *   retries, and cleans up after them.
 * - The worker API (wf_grpc_*): one thread serving gRPC
 *   proto.WorkflowService (GetAction, ReportActionStatus) to tink-agent
 *   and ironbell-agent, over HTTP/2 (h2c or TLS).
 * Both read and write Workflows, Templates, Hardware and bmc Jobs through
 * the store only; they meet nothing else. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* ---- the controller ---- */

struct wf_server;

/* The controller's settings (the daemon's workflow: section). Zero fields
 * take the defaults named here (wf_settings_default()). */
struct wf_settings {
	unsigned resync_s;           /* every Workflow looked at again: 60 */
	unsigned default_action_timeout_s; /* handed out for timeout 0: 3600 */
	unsigned action_grace_s;     /* beyond an action's timeout before the
				      * server declares it: 30 */
	unsigned retry_base_s;       /* first retry backoff, doubling: 5 */
	unsigned retry_max_s;        /* longest backoff: 300 */
};

void wf_settings_default(struct wf_settings *s);

/* Registers the metrics; settings is copied. 0, or a negative errno with
 * a message in err. */
int wf_server_new(struct store *store, const struct wf_settings *settings,
		  struct wf_server **ret, char *err, size_t errlen);
int wf_server_start(struct wf_server *srv, char *err, size_t errlen);
/* Stops the thread and frees; before the store closes. Accepts NULL. */
void wf_server_free(struct wf_server *srv);

/* ---- the worker API (gRPC) ---- */

struct wf_grpc;

/* The gRPC listener's settings (the daemon's grpc: section). */
struct wf_grpc_settings {
	const char *listen;       /* "[addr]:port": ":42113" (every address) */
	const char *tls_cert;     /* PEM certificate chain; NULL: h2c only */
	const char *tls_key;      /* PEM private key, with tls_cert */
	unsigned max_connections; /* at once: 4096; more are closed at accept */
	unsigned max_message;     /* bytes of one gRPC message: 1 MiB;
				   * larger: RESOURCE_EXHAUSTED */
	unsigned max_streams;     /* concurrent streams per connection: 16 */
	unsigned long_poll_s;     /* an empty GetAction waits this long for
				   * work before it answers: 20 (less when the
				   * client's grpc-timeout is shorter) */
	unsigned idle_timeout_s;  /* a connection with no stream closes: 300 */
	/* The engine's settings, as wf_settings has them (the daemon's
	 * workflow: section): the worker API applies reports, so a retry's
	 * backoff and an action's deadline are computed here too. */
	unsigned default_action_timeout_s; /* 3600 */
	unsigned action_grace_s;  /* 30 */
	unsigned retry_base_s;    /* 5 */
	unsigned retry_max_s;     /* 300 */
};

void wf_grpc_settings_default(struct wf_grpc_settings *s);

/* Binds the listener (so that a port in use fails here, before the
 * daemon says it is ready) and registers the metrics. settings is copied,
 * strings too; the TLS files are read here. 0, or a negative errno with
 * a message in err. */
int wf_grpc_new(struct store *store, const struct wf_grpc_settings *settings,
		struct wf_grpc **ret, char *err, size_t errlen);
/* The bound port (for ":0" in tests). */
unsigned wf_grpc_port(const struct wf_grpc *g);
int wf_grpc_start(struct wf_grpc *g, char *err, size_t errlen);
/* Stops the thread (answering waiting long polls UNAVAILABLE), closes
 * every connection, frees. Before the store closes. Accepts NULL. */
void wf_grpc_free(struct wf_grpc *g);

/* ---- operator actions (pure, for the CLI) ---- */

/* `ironbell workflow retry`: a FAILED or TIMEOUT Workflow (the whole
 * object, changed in place) goes back to PENDING from its first action
 * that is not SUCCESS: that action and every later one PENDING, their
 * times, messages and attempts cleared, currentState cleared,
 * globalExecutionStop cleared, a condition Retried. now_ms is the time.
 * 0, or -EINVAL with why in msg (not a Workflow, not FAILED/TIMEOUT, no
 * tasks). */
int wf_workflow_retry(json_t *wf, int64_t now_ms, char *msg, size_t msglen);

/* Hard limits on an untrusted template. */
#define WF_TMPL_MAX_SIZE (256 * 1024)   /* bytes of template source */
#define WF_TMPL_MAX_OUTPUT (256 * 1024) /* bytes of rendered output, as Tinkerbell */
#define WF_TMPL_MAX_DEPTH 64            /* nesting of blocks and parentheses */
#define WF_TMPL_MAX_STEPS 1000000       /* nodes evaluated in one render */

/* Where and why a template failed: line and column (1-based, the column
 * in bytes) of the construct at fault, and a message such as
 * "template: 12:34: function \"foo\" not defined". */
struct wf_tmpl_error {
	size_t line;
	size_t column;
	char message[256];
};


/* Renders the template src (len bytes, need not be NUL-terminated) with
 * data as the dot ($). data is borrowed. On success returns 0 and *ret is
 * the output, malloc'ed and NUL-terminated (the caller frees), its length
 * in *ret_len when ret_len is not NULL. On failure returns -EINVAL (the
 * template does not parse or fails while executing: a missing key, an
 * unknown function, a wrong argument), -E2BIG (the template or its output
 * is over the cap) or -ENOMEM, fills *err, and writes no output. */
int wf_tmpl_render(const char *src, size_t len, const json_t *data, char **ret, size_t *ret_len,
		   struct wf_tmpl_error *err);

/* Builds the data a Workflow's template is rendered with, as Tinkerbell
 * does: every key of hardware_map (may be NULL) at the top level,
 * "Hardware" a view of the Hardware with the Go field names of its
 * v1alpha1 types (Disks as a list of device strings, Interfaces with DHCP,
 * IP, Netboot, ..., Metadata, UserData, VendorData), and "hardware" the
 * whole Hardware object. hardware is the object (with its "spec"), or
 * NULL. Both arguments are borrowed. Returns a new object, or NULL when
 * memory runs out. */
json_t *wf_tmpl_data(const json_t *hardware, const json_t *hardware_map);

/* ---- the template's schema (template-schema.c) ---- */

/* Limits on a rendered template's fields. Names are 1..199 bytes as
 * Tinkerbell's validator has them. */
#define WF_NAME_MAX 199
#define WF_IMAGE_MAX 512        /* bytes of an OCI image reference */
#define WF_RETRIES_MAX 100      /* ironbell's per-action retries */
#define WF_TIMEOUT_MAX 31536000 /* one year, in seconds */
#define WF_REPORT_MAX 2048      /* bytes of the joined errors, and of the warnings */

/* A list of strings and a string map, in the order of the template. */
struct wf_strv {
	char **v;
	size_t n;
};
struct wf_env {
	char **keys;
	char **values;
	size_t n;
};

struct wf_action {
	char *name;
	char *image;
	long long timeout; /* seconds, >= 0 */
	struct wf_strv command;
	struct wf_strv on_timeout; /* parsed and kept; Tinkerbell drops them */
	struct wf_strv on_failure;
	struct wf_strv volumes;
	struct wf_env environment;
	char *pid;        /* deprecated: namespaces.pid; "" when absent */
	char *ns_network; /* namespaces.network, "" when absent */
	char *ns_pid;     /* namespaces.pid, "" when absent */
	unsigned retries; /* 0..WF_RETRIES_MAX, ironbell's (Tinkerbell ignores it) */
};

struct wf_task {
	char *name;
	char *worker;
	struct wf_strv volumes;
	struct wf_env environment;
	struct wf_action *actions;
	size_t n_actions;
};

struct wf_template {
	char *version;
	char *name;
	char *id;
	long long global_timeout; /* seconds, >= 0 */
	struct wf_task *tasks;
	size_t n_tasks;
};

/* Which stage of wf_template_load() failed. */
enum wf_template_stage {
	WF_STAGE_NONE,
	WF_STAGE_RENDER, /* the Go template did not render */
	WF_STAGE_YAML,   /* the output is not YAML */
	WF_STAGE_SCHEMA, /* the YAML is not a valid template */
	WF_STAGE_MAX
};

/* What went wrong, for a Workflow's status and an event. error lists every
 * error, each "path: what (line L, column C)", joined with "; " and ended
 * with " (and N more errors)" when they do not fit; line and column are
 * those of the first. warning lists, the same way, the keys that were
 * ignored (Tinkerbell ignores unknown keys: so do we, and say so). */
struct wf_template_report {
	enum wf_template_stage stage;
	size_t line, column;
	unsigned errors, warnings;
	char error[WF_REPORT_MAX];
	char warning[WF_REPORT_MAX];
};

/* The stage's name ("render", "yaml", "schema"), for messages. */
const char *wf_template_stage_name(enum wf_template_stage stage);

/* Parses and validates a rendered template (text, len bytes, need not be
 * NUL-terminated; at most WF_TMPL_MAX_OUTPUT). On success returns 0, *ret
 * the template (free with wf_template_free()), and rep (may be NULL) holds
 * the warnings. On failure returns -EINVAL (rep says the stage, YAML or
 * schema, and every error), -E2BIG or -ENOMEM, and writes no *ret. */
int wf_template_parse(const char *text, size_t len, struct wf_template **ret,
		      struct wf_template_report *rep);

/* Renders src (len bytes) with data (borrowed, see wf_tmpl_render()),
 * then parses and validates the output as wf_template_parse() does. The
 * same returns; rep->stage says which stage failed. */
int wf_template_load(const char *src, size_t len, const json_t *data, struct wf_template **ret,
		     struct wf_template_report *rep);

/* Frees a template; NULL and half-built ones are fine. */
void wf_template_free(struct wf_template *t);
