/* engine-build — what the controller's step builds: a Workflow's status
 * from its rendered template, and the bmc Jobs of its boot options.
 *
 * DESIGN: the template is rendered with wf_template_load() over
 * wf_tmpl_data(hardware, spec.hardwareMap), as Tinkerbell's controller
 * renders it, and the result becomes status.tasks in the shape of the
 * monorepo's YAMLToStatus (tink/controller/internal/workflow): a ULID per
 * task and per action, every action PENDING, the first task's worker as
 * status.agentID; plus ironbell's "retries" on an action that has them.
 * A render failure is kept with its stage, line and column in the
 * TemplateRenderedSuccess condition's message. The Jobs are the ones
 * Tinkerbell creates, with its names and Actions: netboot (off, one-time
 * PXE, on), iso-mount (off, eject, insert, one-time CD-ROM, on),
 * iso-eject, and the user's customboot lists; a Job is tracked through
 * status.bootOptions.jobs[name] ({uid, complete, existingJobDeleted}) and
 * the Job's own Completed/Failed conditions. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workflow/engine-internal.h"

/* A list of strings as a JSON array; NULL when memory runs out. */
static json_t *strv_json(const struct wf_strv *v)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < v->n; i++)
		if (json_array_append_new(a, json_string(v->v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *env_json(const struct wf_env *e)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < e->n; i++)
		if (json_object_set_new(o, e->keys[i], json_string(e->values[i])) < 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* Sets o[key] to a new value unless it is NULL (then err). */
static int set_new(json_t *o, const char *key, json_t *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_set_new(o, key, v) < 0 ? -ENOMEM : 0;
}

static json_t *action_json(const struct wf_action *wa, const struct wf_clock *clk)
{
	char id[WFE_ULID_LEN + 1];
	json_t *a = json_object();
	if (!a || wfe_ulid(clk, id) < 0)
		goto fail;
	int err = wfe_set_str(a, "id", id, 0) | wfe_set_str(a, "name", wa->name, 0) |
		  wfe_set_str(a, "image", wa->image, 0) | wfe_set_int(a, "timeout", wa->timeout);
	if (wa->command.n)
		err |= set_new(a, "command", strv_json(&wa->command));
	if (wa->volumes.n)
		err |= set_new(a, "volumes", strv_json(&wa->volumes));
	if (*wa->pid)
		err |= wfe_set_str(a, "pid", wa->pid, 0);
	if (*wa->ns_network || *wa->ns_pid) {
		json_t *ns = json_object();
		err |= set_new(a, "namespaces", ns);
		if (ns && *wa->ns_network)
			err |= wfe_set_str(ns, "network", wa->ns_network, 0);
		if (ns && *wa->ns_pid)
			err |= wfe_set_str(ns, "pid", wa->ns_pid, 0);
	}
	if (wa->environment.n)
		err |= set_new(a, "environment", env_json(&wa->environment));
	err |= wfe_set_state(a, WF_STATE_PENDING);
	if (wa->retries)
		err |= wfe_set_int(a, "retries", wa->retries);
	if (err)
		goto fail;
	return a;
fail:
	json_decref(a);
	return NULL;
}

static json_t *task_json(const struct wf_task *wt, const struct wf_clock *clk)
{
	char id[WFE_ULID_LEN + 1];
	json_t *t = json_object(), *actions = json_array();
	if (!t || !actions || wfe_ulid(clk, id) < 0)
		goto fail;
	int err = wfe_set_str(t, "id", id, 0) | wfe_set_str(t, "name", wt->name, 0) |
		  wfe_set_str(t, "agentID", wt->worker, 0);
	if (wt->volumes.n)
		err |= set_new(t, "volumes", strv_json(&wt->volumes));
	if (wt->environment.n)
		err |= set_new(t, "environment", env_json(&wt->environment));
	for (size_t i = 0; !err && i < wt->n_actions; i++)
		err |= json_array_append_new(actions, action_json(&wt->actions[i], clk)) < 0;
	err |= json_object_set(t, "actions", actions) < 0;
	json_decref(actions);
	if (err) {
		json_decref(t);
		return NULL;
	}
	return t;
fail:
	json_decref(t);
	json_decref(actions);
	return NULL;
}

/* The tasks of status from a rendered template. */
static int status_from_template(json_t *status, const struct wf_template *tp,
				const struct wf_clock *clk)
{
	json_t *tasks = json_array();
	int err = 0;
	if (!tasks)
		return -ENOMEM;
	for (size_t i = 0; !err && i < tp->n_tasks; i++)
		err |= json_array_append_new(tasks, task_json(&tp->tasks[i], clk)) < 0;
	err |= set_new(status, "tasks", tasks);
	err |= wfe_set_str(status, "agentID", tp->n_tasks ? tp->tasks[0].worker : "", 0);
	err |= wfe_set_int(status, "globalTimeout", tp->global_timeout);
	return err ? -ENOMEM : 0;
}

/* Why the template cannot be rendered yet (a missing object): the
 * condition, the event the first time, and no state change. */
static int render_wait(json_t *status, const char *why, const struct wf_clock *clk,
		       struct wf_effects *fx)
{
	json_t *before = json_deep_copy(json_object_get(status, "conditions"));
	int err = wfe_set_str(status, "templateRendering", "failed", 0) |
		  wfe_condition(status, "TemplateRenderedSuccess", "False", "Error", why,
				clk->now_ms);
	if (!json_equal(before, json_object_get(status, "conditions")))
		wfe_event(fx, "Warning", "RenderFailed", "%s", why);
	json_decref(before);
	return err ? -ENOMEM : 0;
}

int wfe_render(json_t *wf, json_t **statusp, const struct wf_inputs *in, const struct wf_clock *clk,
	       struct wf_effects *fx, bool agent_only)
{
	const json_t *spec = wfe_obj(wf, "spec");
	const char *tname = wfe_str(spec, "templateRef"), *hname = wfe_str(spec, "hardwareRef");
	char why[WF_REPORT_MAX + 256];
	struct wf_template *tp = NULL;
	struct wf_template_report rep;
	json_t *data = NULL, *fresh = NULL;
	int r = 0;

	if (!in->template_obj) {
		snprintf(why, sizeof(why), "template %s not found", tname);
		return agent_only ? 0 : render_wait(*statusp, why, clk, fx);
	}
	if (*hname && !in->hardware) {
		snprintf(why, sizeof(why), "hardware %s not found", hname);
		return agent_only ? 0 : render_wait(*statusp, why, clk, fx);
	}
	const char *src = wfe_str(wfe_obj(in->template_obj, "spec"), "data");
	data = wf_tmpl_data(in->hardware, json_object_get(spec, "hardwareMap"));
	if (!data)
		return -ENOMEM;
	r = wf_template_load(src, strlen(src), data, &tp, &rep);
	json_decref(data);
	if (r == -ENOMEM)
		return -ENOMEM;
	if (agent_only) {
		/* a disabled workflow: status.agentID only, as Tinkerbell */
		if (r == 0 && tp->n_tasks)
			r = wfe_set_str(*statusp, "agentID", tp->tasks[0].worker, 0);
		else
			r = 0;
		goto out;
	}
	if (r < 0) {
		snprintf(why, sizeof(why),
			 "error rendering template %s: %s failed at line %zu, column %zu: %s",
			 tname, wf_template_stage_name(rep.stage), rep.line, rep.column, rep.error);
		r = wfe_set_str(*statusp, "templateRendering", "failed", 0) |
		    wfe_condition(*statusp, "TemplateRenderedSuccess", "False", "Error", why,
				  clk->now_ms) |
		    wfe_set_state(*statusp, WF_STATE_FAILED);
		wfe_event(fx, "Warning", "RenderFailed", "%s", why);
		r = r ? -ENOMEM : 0;
		goto out;
	}
	/* A new status, keeping only the conditions of an ironbell one (a
	 * legacy status's fields and conditions mean nothing here). */
	bool legacy;
	wfe_state(*statusp, &legacy);
	fresh = json_object();
	if (!fresh)
		goto nomem;
	json_t *conds = json_object_get(*statusp, "conditions");
	if (!legacy && json_is_array(conds) && json_object_set(fresh, "conditions", conds) < 0)
		goto nomem;
	const json_t *bo = wfe_obj(spec, "bootOptions");
	bool prepare = wfe_bool(bo, "toggleAllowNetboot") || *wfe_str(bo, "bootMode");
	if (status_from_template(fresh, tp, clk) < 0 ||
	    wfe_set_str(fresh, "templateRendering", "successful", 0) < 0 ||
	    wfe_condition(fresh, "TemplateRenderedSuccess", "True", "Complete",
			  "template rendered successfully", clk->now_ms) < 0 ||
	    wfe_set_state(fresh, prepare ? WF_STATE_PREPARING : WF_STATE_PENDING) < 0)
		goto nomem;
	size_t n_actions = 0;
	for (size_t i = 0; i < tp->n_tasks; i++)
		n_actions += tp->tasks[i].n_actions;
	if (rep.warnings)
		wfe_event(fx, "Normal", "Rendered",
			  "template %s rendered: %zu tasks, %zu actions; ignored: %s", tname,
			  tp->n_tasks, n_actions, rep.warning);
	else
		wfe_event(fx, "Normal", "Rendered", "template %s rendered: %zu tasks, %zu actions",
			  tname, tp->n_tasks, n_actions);
	json_decref(*statusp);
	*statusp = fresh;
	fresh = NULL;
	r = 0;
	goto out;
nomem:
	r = -ENOMEM;
out:
	json_decref(fresh);
	wf_template_free(tp);
	return r;
}

/* ---- boot Jobs ---- */

static bool any_uefi(const json_t *hw)
{
	size_t i;
	const json_t *iface;
	json_array_foreach (json_object_get(wfe_obj(hw, "spec"), "interfaces"), i, iface)
		if (wfe_bool(wfe_obj(iface, "dhcp"), "uefi"))
			return true;
	return false;
}

static int append_obj(json_t *tasks, const char *key, json_t *v)
{
	json_t *o = json_object();
	if (!o || !v || json_object_set_new(o, key, v) < 0) {
		json_decref(o);
		json_decref(v);
		return -ENOMEM;
	}
	return json_array_append_new(tasks, o) < 0 ? -ENOMEM : 0;
}

static int power(json_t *tasks, const char *state)
{
	return append_obj(tasks, "powerAction", json_string(state));
}

static int one_time(json_t *tasks, const char *dev, bool efi)
{
	return append_obj(tasks, "oneTimeBootDeviceAction",
			  json_pack("{s:[s],s:b}", "device", dev, "efiBoot", efi));
}

static int media(json_t *tasks, const char *url)
{
	return append_obj(tasks, "virtualMediaAction",
			  json_pack("{s:s,s:s}", "mediaURL", url, "kind", "CD"));
}

/* The user's customboot actions, each virtualMediaAction.mediaURL rendered
 * as a Go template with .Hardware (Tinkerbell templates only that field). */
static int custom_actions(json_t *tasks, const json_t *list, const json_t *hw, char *why,
			  size_t whylen)
{
	size_t i;
	const json_t *act;
	int r = 0;
	json_t *data = wf_tmpl_data(hw, NULL);
	if (!data)
		return -ENOMEM;
	json_array_foreach (list, i, act) {
		json_t *copy = json_deep_copy(act);
		json_t *vm = wfe_obj(copy, "virtualMediaAction");
		const char *url = wfe_str(vm, "mediaURL");
		if (copy && vm && *url) {
			struct wf_tmpl_error terr;
			char *out = NULL;
			r = wf_tmpl_render(url, strlen(url), data, &out, NULL, &terr);
			if (r == 0)
				r = wfe_set_str(vm, "mediaURL", out, 0);
			else if (r != -ENOMEM)
				snprintf(why, whylen, "customboot mediaURL of action %zu: %s", i,
					 terr.message);
			free(out);
		}
		if (r < 0) {
			json_decref(copy);
			break;
		}
		if (!copy || json_array_append_new(tasks, copy) < 0) {
			r = -ENOMEM;
			break;
		}
	}
	json_decref(data);
	return r;
}

int wfe_job_tasks(enum wfe_job kind, const json_t *wf, const json_t *hw, json_t **ret, char *why,
		  size_t whylen)
{
	const json_t *bo = wfe_obj(wfe_obj(wf, "spec"), "bootOptions");
	const json_t *cb = wfe_obj(bo, "custombootConfig");
	bool efi = any_uefi(hw);
	json_t *t = json_array();
	int r = 0;
	if (!t)
		return -ENOMEM;
	switch (kind) {
	case WFE_JOB_NETBOOT: r = power(t, "off") | one_time(t, "pxe", efi) | power(t, "on"); break;
	case WFE_JOB_ISO_MOUNT:
		r = power(t, "off") | media(t, "") | media(t, wfe_str(bo, "isoURL")) |
		    one_time(t, "cdrom", efi) | power(t, "on");
		break;
	case WFE_JOB_ISO_EJECT: r = media(t, ""); break;
	case WFE_JOB_CUSTOM_PREPARING:
		r = custom_actions(t, json_object_get(cb, "preparingActions"), hw, why, whylen);
		break;
	case WFE_JOB_CUSTOM_POST:
		r = custom_actions(t, json_object_get(cb, "postActions"), hw, why, whylen);
		break;
	default: r = -EINVAL;
	}
	if (r < 0) {
		json_decref(t);
		return r == -EINVAL ? -EINVAL : -ENOMEM;
	}
	*ret = t;
	return 0;
}

const char *wfe_job_prefix(enum wfe_job kind)
{
	static const char *const names[] = {
		[WFE_JOB_NETBOOT] = "netboot",
		[WFE_JOB_ISO_MOUNT] = "iso-mount",
		[WFE_JOB_ISO_EJECT] = "iso-eject",
		[WFE_JOB_CUSTOM_PREPARING] = "customboot-preparing",
		[WFE_JOB_CUSTOM_POST] = "customboot-post",
	};
	return (unsigned)kind < WFE_JOB_MAX ? names[kind] : "";
}
