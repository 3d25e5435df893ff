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
