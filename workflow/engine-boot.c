/* engine-boot — the closed loop: after a Workflow ended SUCCESS, whether
 * its machine came up from its own disk, or netbooted again.
 *
 * DESIGN: the engine cannot see a machine boot; the DHCP server and the
 * metadata routes can, and the parts meet only in the store. So when a
 * Workflow enters SUCCESS (its POST cleanup done, netboot turned off),
 * the step sets the condition Booted to Unknown (AwaitingBoot) and asks
 * its caller (fx->boot) to mark the Hardware with the annotation
 * WF_BOOT_AWAIT_ANNOTATION: "<workflow> <power-on time>". The power-on is
 * the completionTime of the Workflow's netboot Job (its last task powers
 * the machine on) when it had bootMode netboot, else the first action's
 * executionStart, the Workflow's start. A part that sees the marked
 * machine (its installed system's first metadata request, a DHCP request
 * without netboot options; or a netboot: a DHCP request with PXE
 * options, an iPXE script request) writes what it saw into
 * WF_BOOT_OBSERVED_ANNOTATION, which changes the Hardware and so queues
 * the Workflow again. This file turns that observation into the
 * condition and the events:
 *   disk    -> Booted True (BootedFromDisk), Normal event Booted on the
 *              Workflow and the Hardware, both annotations dropped;
 *   netboot -> Booted False (NetbootAgain), Warning event NetbootAgain on
 *              both (once per change of the condition), the observation
 *              dropped and the mark kept: a machine whose netboot is
 *              refused (allowPXE is off) falls back to its disk, and that
 *              boot is still recorded.
 * A mark that names another Workflow (a later one ended SUCCESS on the
 * same Hardware) or that cannot be read ends the wait: Booted False
 * (NotAwaited). No mark at all leaves it as it is: the mark is not
 * written yet, or a new Workflow turned allowPXE on, which drops it
 * (workflow/controller-step.c), until that Workflow's own mark comes. Every decision is taken from the status and
 * the Hardware as stored, so a look repeated changes nothing. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "workflow/engine-internal.h"

/* The observation's fields: kind, time, via. */
#define WFE_BOOT_FIELD_MAX 40

static const json_t *boot_condition(const json_t *status)
{
	size_t i;
	const json_t *c;
	json_array_foreach (json_object_get(status, "conditions"), i, c)
		if (strcmp(wfe_str(c, "type"), WF_BOOT_CONDITION) == 0)
			return c;
	return NULL;
}

static bool awaiting(const json_t *status)
{
	const json_t *c = boot_condition(status);
	const char *st = wfe_str(c, "status");
	return c &&
	       (strcmp(st, "Unknown") == 0 ||
		(strcmp(st, "False") == 0 && strcmp(wfe_str(c, "reason"), "NetbootAgain") == 0));
}

bool wf_engine_awaits_boot(const json_t *wf)
{
	const json_t *status = wfe_obj(wf, "status");
	return wfe_state(status, NULL) == WF_STATE_SUCCESS && awaiting(status);
}

/* The power-on time of wf (see the DESIGN), or now. */
static int64_t power_on_ms(const json_t *wf, const json_t *status, const struct wf_inputs *in,
			   int64_t now)
{
	const json_t *spec = wfe_obj(wf, "spec");
	const char *mode = wfe_str(wfe_obj(spec, "bootOptions"), "bootMode");
	char name[WF_ID_MAX];
	int n = snprintf(name, sizeof(name), "%s-%s", wfe_job_prefix(WFE_JOB_NETBOOT),
			 wfe_str(wfe_obj(wf, "metadata"), "name"));
	if (strcmp(mode, "netboot") == 0 && n > 0 && (size_t)n < sizeof(name)) {
		for (size_t i = 0; i < in->n_jobs; i++) {
			const json_t *j = in->jobs[i];
			if (!j || strcmp(wfe_str(wfe_obj(j, "metadata"), "name"), name) != 0)
				continue;
			int64_t t = wfe_time_get(wfe_obj(j, "status"), "completionTime");
			if (t)
				return t;
		}
	}
	const json_t *a = json_array_get(
		json_object_get(json_array_get(json_object_get(status, "tasks"), 0), "actions"), 0);
	int64_t t = wfe_time_get(a, "executionStart");
	return t ? t : now;
}

/* "2026-11-25T22:00:00Z" of ms into out (32 bytes). */
static void rfc3339(int64_t ms, char out[32])
{
	json_t *o = json_object();
	snprintf(out, 32, "%s", o && wfe_time_set(o, "t", ms, false) == 0 ? wfe_str(o, "t") : "");
	json_decref(o);
}

int wfe_boot_await(json_t *wf, json_t *status, const struct wf_inputs *in,
		   const struct wf_clock *clk, struct wf_effects *fx)
{
	const char *name = wfe_str(wfe_obj(wf, "metadata"), "name");
	const char *hw = wfe_str(wfe_obj(wf, "spec"), "hardwareRef");
	char t[32], msg[WF_ID_MAX + 128];
	if (!*hw || !in->hardware)
		return 0;
	rfc3339(power_on_ms(wf, status, in, clk->now_ms), t);
	int n = snprintf(fx->boot_mark, sizeof(fx->boot_mark), "%s %s", name, t);
	if (n < 0 || (size_t)n >= sizeof(fx->boot_mark))
		return 0;
	fx->boot = WF_BOOT_AWAIT;
	snprintf(msg, sizeof(msg), "waiting for hardware %s to boot from its disk (powered on %s)",
		 hw, t);
	return wfe_condition(status, WF_BOOT_CONDITION, "Unknown", "AwaitingBoot", msg,
			     clk->now_ms);
}

/* Splits the value v into up to 3 space-separated fields of
 * WFE_BOOT_FIELD_MAX bytes; how many, or -EINVAL when one is too long. */
static int fields(const char *v, char f[3][WFE_BOOT_FIELD_MAX])
{
	int n = 0;
	for (int i = 0; i < 3; i++)
		f[i][0] = 0;
	while (*v && n < 3) {
		while (*v == ' ')
			v++;
		size_t len = strcspn(v, " ");
		if (!len)
			break;
		if (len >= WFE_BOOT_FIELD_MAX)
			return -EINVAL;
		memcpy(f[n], v, len);
		f[n][len] = 0;
		n++;
		v += len;
	}
	return n;
}

/* The mark's Workflow name and power-on time: 0, or -ENOENT when the
 * mark is absent, names another Workflow or is malformed. */
static int mark_of(const json_t *ann, const char *name, int64_t *ret_on)
{
	const char *v = wfe_str(ann, WF_BOOT_AWAIT_ANNOTATION);
	size_t len = strlen(name);
	int64_t on = 0;
	if (strncmp(v, name, len) != 0 || v[len] != ' ' || wfe_time_parse(v + len + 1, &on) < 0)
		return -ENOENT;
	*ret_on = on;
	return 0;
}

static const char *via_text(const char *via)
{
	if (strcmp(via, "metadata") == 0)
		return "its first metadata request";
	if (strcmp(via, "dhcp") == 0)
		return "a DHCP request";
	if (strcmp(via, "ipxe") == 0)
		return "an iPXE script request";
	return "an unknown source";
}

int wfe_boot_observe(json_t *wf, json_t *status, const struct wf_inputs *in,
		     const struct wf_clock *clk, struct wf_effects *fx)
{
	const char *hw = wfe_str(wfe_obj(wf, "spec"), "hardwareRef");
	const json_t *ann = wfe_obj(wfe_obj(in->hardware, "metadata"), "annotations");
	char f[3][WFE_BOOT_FIELD_MAX], d[WFE_DURATION_MAX], msg[WF_ID_MAX + 256];
	int64_t on = 0, seen = 0;
	if (!in->hardware || !awaiting(status) || fx->boot == WF_BOOT_AWAIT)
		return 0;
	/* no mark: not written yet, or dropped by a netboot that a new
	 * Workflow allowed; that Workflow's own mark ends this wait */
	if (!*wfe_str(ann, WF_BOOT_AWAIT_ANNOTATION))
		return 0;
	if (mark_of(ann, wfe_str(wfe_obj(wf, "metadata"), "name"), &on) < 0) {
		snprintf(msg, sizeof(msg),
			 "hardware %s is marked %s for another workflow: this one's boot is no "
			 "longer followed",
			 hw, WF_BOOT_AWAIT_ANNOTATION);
		return wfe_condition(status, WF_BOOT_CONDITION, "False", "NotAwaited", msg,
				     clk->now_ms);
	}
	const char *obs = wfe_str(ann, WF_BOOT_OBSERVED_ANNOTATION);
	if (!*obs)
		return 0;
	int n = fields(obs, f);
	if (n < 2 || wfe_time_parse(f[1], &seen) < 0 ||
	    (strcmp(f[0], "disk") != 0 && strcmp(f[0], "netboot") != 0)) {
		/* not ours to read: dropped, the mark kept */
		fx->boot = WF_BOOT_DROP_OBSERVED;
		return 0;
	}
	wfe_duration(seen > on ? seen - on : 0, d);
	if (strcmp(f[0], "disk") == 0) {
		snprintf(msg, sizeof(msg),
			 "hardware %s booted from its disk %s after power-on (%s)", hw, d,
			 via_text(f[2]));
		fx->boot = WF_BOOT_DROP;
		wfe_event(fx, "Normal", "Booted", "%s", msg);
		if (fx->n_events)
			fx->events[fx->n_events - 1].hardware = true;
		return wfe_condition(status, WF_BOOT_CONDITION, "True", "BootedFromDisk", msg,
				     clk->now_ms);
	}
	snprintf(msg, sizeof(msg),
		 "hardware %s netbooted again %s after power-on (%s) while its workflow is "
		 "SUCCESS and netboot is off: it did not boot from its disk",
		 hw, d, via_text(f[2]));
	fx->boot = WF_BOOT_DROP_OBSERVED;
	const json_t *c = boot_condition(status);
	if (strcmp(wfe_str(c, "reason"), "NetbootAgain") != 0) {
		wfe_event(fx, "Warning", "NetbootAgain", "%s", msg);
		if (fx->n_events)
			fx->events[fx->n_events - 1].hardware = true;
	}
	return wfe_condition(status, WF_BOOT_CONDITION, "False", "NetbootAgain", msg, clk->now_ms);
}
