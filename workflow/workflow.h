/* workflow — Tinkerbell templates and workflows.
 *
 * For now, the template renderer: the Go text/template language as
 * Tinkerbell's templates use it (missingkey=error, the output capped, the
 * functions of its function map), evaluated over jansson values. Pure: no
 * I/O, no logging, no global state; the engine and the worker protocol
 * build on it. */
#pragma once

#include <jansson.h>
#include <stddef.h>

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

/* The workflow part's settings. Empty until the engine comes. */
struct workflow_settings {
	int reserved;
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
