/* parse — the Redfish client's JSON readers: what BMC control takes from
 * a service root, a collection, a ComputerSystem, a Manager, a
 * VirtualMedia, a Task and an error body.
 *
 * DESIGN: pure functions of a parsed body (jansson), no I/O, so that the
 * unit test and the fuzz target drive them directly. Every body is
 * untrusted: a property of the wrong type counts as absent, strings are
 * copied only when they fit, a URI is used only when rf_uri_ok() says so,
 * and an array is read up to RF_MAX_MEMBERS entries. Redfish names are
 * from DSP0268 (ComputerSystem, Resource.ResetType, VirtualMedia, Task)
 * and DSP0266 (§9.7 error responses, §7.9 settings objects). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bmc/redfish/redfish.h"

static const char *const reset_names[RF_RESET_MAX] = {
	[RF_RESET_ON] = "On",
	[RF_RESET_FORCE_ON] = "ForceOn",
	[RF_RESET_FORCE_OFF] = "ForceOff",
	[RF_RESET_GRACEFUL_SHUTDOWN] = "GracefulShutdown",
	[RF_RESET_GRACEFUL_RESTART] = "GracefulRestart",
	[RF_RESET_FORCE_RESTART] = "ForceRestart",
	[RF_RESET_POWER_CYCLE] = "PowerCycle",
	[RF_RESET_NMI] = "Nmi",
	[RF_RESET_PUSH_BUTTON] = "PushPowerButton",
};

const char *rf_reset_name(enum rf_reset r)
{
	return (unsigned)r < RF_RESET_MAX ? reset_names[r] : "?";
}

static const char *const boot_targets[] = {
	[BMC_BOOT_NONE] = "None",      [BMC_BOOT_PXE] = "Pxe",  [BMC_BOOT_DISK] = "Hdd",
	[BMC_BOOT_BIOS] = "BiosSetup", [BMC_BOOT_CDROM] = "Cd", [BMC_BOOT_SAFE] = "SafeMode",
	[BMC_BOOT_HTTP] = "UefiHttp",
};
#define N_BOOT_TARGETS (sizeof(boot_targets) / sizeof(boot_targets[0]))

const char *rf_boot_target_name(enum bmc_boot_device d)
{
	return (unsigned)d < N_BOOT_TARGETS ? boot_targets[d] : "None";
}

int rf_boot_target_parse(const char *s, enum bmc_boot_device *ret)
{
	for (size_t i = 0; i < N_BOOT_TARGETS; i++) {
		if (strcmp(s, boot_targets[i]) == 0) {
			*ret = (enum bmc_boot_device)i;
			return 0;
		}
	}
	return -ENOENT;
}

int rf_json_parse(const char *body, size_t len, json_t **ret, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);

	if (!j) {
		/* je.text quotes the body near the error: printable only. */
		for (char *p = je.text; *p; p++)
			if ((unsigned char)*p < ' ' || *p == 0x7f)
				*p = '?';
		snprintf(err, errlen, "body is not JSON: %s", je.text);
		return -EBADMSG;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		snprintf(err, errlen, "body is not a JSON object");
		return -EBADMSG;
	}
	*ret = j;
	return 0;
}

bool rf_uri_ok(const char *s, size_t n)
{
	if (n == 0 || n >= RF_URI_MAX || s[0] != '/')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>')
			return false;
	}
	return true;
}

/* A string property, or NULL when absent or not a string. */
static const char *str_of(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Copies a string property into out (cap bytes): 0, or -ENOENT when absent
 * or of another type, -E2BIG when it does not fit (out is then ""). */
static int copy_str(const json_t *o, const char *key, char *out, size_t cap)
{
	const json_t *v = json_object_get(o, key);

	out[0] = '\0';
	if (!json_is_string(v))
		return -ENOENT;
	size_t n = json_string_length(v);
	if (n >= cap || memchr(json_string_value(v), '\0', n))
		return -E2BIG;
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

/* The "@odata.id" of the object o[key] into out, when it is a usable URI. */
static int copy_link(const json_t *o, const char *key, char *out)
{
	const json_t *l = key ? json_object_get(o, key) : o;
	const json_t *v = json_object_get(l, "@odata.id");

	out[0] = '\0';
	if (!json_is_string(v) || !rf_uri_ok(json_string_value(v), json_string_length(v)))
		return -ENOENT;
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int rf_parse_root(const json_t *root, struct rf_root *ret, char *err, size_t errlen)
{
	struct rf_root r;

	memset(&r, 0, sizeof(r));
	if (copy_link(root, "Systems", r.systems) < 0) {
		snprintf(err, errlen, "the service root has no Systems");
		return -EBADMSG;
	}
	(void)copy_link(root, "Managers", r.managers);
	if (copy_link(json_object_get(root, "Links"), "Sessions", r.sessions) < 0)
		snprintf(r.sessions, sizeof(r.sessions), "/redfish/v1/SessionService/Sessions");
	if (copy_str(root, "Vendor", r.vendor, sizeof(r.vendor)) < 0) {
		/* Before Redfish 1.5 (no Vendor), the Oem object's key names the
		 * make: {"Oem": {"Hpe": ...}}. */
		const json_t *oem = json_object_get(root, "Oem");
		void *it = json_is_object(oem) ? json_object_iter((json_t *)oem) : NULL;
		const char *k = it ? json_object_iter_key(it) : NULL;
		if (k && strlen(k) < sizeof(r.vendor))
			snprintf(r.vendor, sizeof(r.vendor), "%s", k);
	}
	*ret = r;
	return 0;
}

/* The Id of a member: its inlined "Id", else the last segment of uri. */
static const char *member_id(const json_t *m, const char *uri)
{
	const char *id = str_of(m, "Id");
	const char *slash;

	if (id)
		return id;
	slash = strrchr(uri, '/');
	return slash ? slash + 1 : uri;
}

int rf_pick_member(const json_t *coll, const char *name, char *ret, char *err, size_t errlen)
{
	const json_t *members = json_object_get(coll, "Members");
	char uri[RF_URI_MAX];
	size_t n, used = 0;
	int w;

	if (!json_is_array(members)) {
		snprintf(err, errlen, "the collection has no Members");
		return -EBADMSG;
	}
	n = json_array_size(members);
	if (n > RF_MAX_MEMBERS)
		n = RF_MAX_MEMBERS;
	for (size_t i = 0; i < n; i++) {
		const json_t *m = json_array_get(members, i);
		if (copy_link(m, NULL, uri) < 0)
			continue;
		if (name[0] == '\0' || strcmp(member_id(m, uri), name) == 0) {
			memcpy(ret, uri, strlen(uri) + 1);
			return 0;
		}
	}
	/* Not found: say which Ids there are. */
	w = snprintf(err, errlen, "no system \"%s\" among the Ids:", name);
	used = w > 0 && (size_t)w < errlen ? (size_t)w : errlen;
	size_t listed = 0;
	for (size_t i = 0; i < n && used + 1 < errlen; i++) {
		const json_t *m = json_array_get(members, i);
		if (copy_link(m, NULL, uri) < 0)
			continue;
		w = snprintf(err + used, errlen - used, "%s %s", listed ? "," : "",
			     member_id(m, uri));
		used = w > 0 && (size_t)w < errlen - used ? used + (size_t)w : errlen;
		listed++;
	}
	if (listed == 0 && used + 1 < errlen)
		snprintf(err + used, errlen - used, " none");
	return -ENOENT;
}

/* Bits of the strings of an AllowableValues array that name[] knows. */
static uint32_t allowable(const json_t *arr, const char *const *names, size_t nnames)
{
	uint32_t bits = 0;
	size_t n = json_array_size(arr);

	if (n > RF_MAX_MEMBERS)
		n = RF_MAX_MEMBERS;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		for (size_t k = 0; s && k < nnames; k++)
			if (names[k] && strcmp(s, names[k]) == 0)
				bits |= 1u << k;
	}
	return bits;
}

static void parse_boot(const json_t *boot, struct rf_system *r)
{
	const json_t *targets =
		json_object_get(boot, "BootSourceOverrideTarget@Redfish.AllowableValues");

	r->boot_present = json_is_object(boot);
	(void)copy_str(boot, "BootSourceOverrideTarget", r->boot_target, sizeof(r->boot_target));
	(void)copy_str(boot, "BootSourceOverrideEnabled", r->boot_enabled, sizeof(r->boot_enabled));
	(void)copy_str(boot, "BootSourceOverrideMode", r->boot_mode, sizeof(r->boot_mode));
	if (json_is_array(targets)) {
		r->targets_known = true;
		r->targets = allowable(targets, boot_targets, N_BOOT_TARGETS);
	}
}

static void parse_reset(const json_t *actions, struct rf_system *r)
{
	const json_t *reset = json_object_get(actions, "#ComputerSystem.Reset");
	const json_t *vals = json_object_get(reset, "ResetType@Redfish.AllowableValues");
	const char *t = str_of(reset, "target");

	if (t && rf_uri_ok(t, strlen(t)))
		snprintf(r->reset_target, sizeof(r->reset_target), "%s", t);
	if (json_is_array(vals)) {
		r->resets_known = true;
		r->resets = allowable(vals, reset_names, RF_RESET_MAX);
	}
}

int rf_parse_system(const json_t *sys, struct rf_system *ret, char *err, size_t errlen)
{
	struct rf_system r;
	const char *power;

	memset(&r, 0, sizeof(r));
	if (copy_str(sys, "Id", r.id, sizeof(r.id)) < 0) {
		snprintf(err, errlen, "the system has no Id");
		return -EBADMSG;
	}
	power = str_of(sys, "PowerState");
	/* Strict: PoweringOn/PoweringOff are neither, until they settle. */
	r.power = !power                    ? BMC_POWER_UNKNOWN :
		  strcmp(power, "On") == 0  ? BMC_POWER_ON :
		  strcmp(power, "Off") == 0 ? BMC_POWER_OFF :
					      BMC_POWER_UNKNOWN;
	parse_boot(json_object_get(sys, "Boot"), &r);
	parse_reset(json_object_get(sys, "Actions"), &r);
	(void)copy_str(sys, "@odata.etag", r.etag, sizeof(r.etag));
	(void)copy_str(sys, "Manufacturer", r.manufacturer, sizeof(r.manufacturer));
	(void)copy_link(json_object_get(sys, "@Redfish.Settings"), "SettingsObject", r.settings);
	(void)copy_link(sys, "VirtualMedia", r.vmedia);
	const json_t *mb = json_object_get(json_object_get(sys, "Links"), "ManagedBy");
	if (json_is_array(mb) && json_array_size(mb) > 0)
		(void)copy_link(json_array_get(mb, 0), NULL, r.manager);
	*ret = r;
	return 0;
}

bool rf_system_boot(const struct rf_system *s, struct bmc_boot *ret)
{
	struct bmc_boot b = { .device = BMC_BOOT_NONE };

	if (!s->boot_present || strcmp(s->boot_enabled, "Disabled") == 0 ||
	    (strcmp(s->boot_enabled, "Once") != 0 && strcmp(s->boot_enabled, "Continuous") != 0))
		return false;
	if (rf_boot_target_parse(s->boot_target, &b.device) < 0)
		return false;
	b.persistent = strcmp(s->boot_enabled, "Continuous") == 0;
	b.efi = strcmp(s->boot_mode, "UEFI") == 0;
	*ret = b;
	return true;
}

/* Copies s into out, control characters as '?', at most RF_MSG_MAX. */
static void clean_copy(const char *s, char *out, size_t outlen)
{
	size_t i, cap = outlen < RF_MSG_MAX ? outlen : RF_MSG_MAX;

	for (i = 0; s[i] && i + 1 < cap; i++)
		out[i] = (unsigned char)s[i] < ' ' || s[i] == 0x7f ? '?' : s[i];
	out[i] = '\0';
}

void rf_parse_error(const json_t *body, char *out, size_t outlen)
{
	const json_t *e = json_object_get(body, "error");
	const json_t *info = json_object_get(e, "@Message.ExtendedInfo");
	const char *m = NULL;

	if (outlen == 0)
		return;
	if (json_is_array(info) && json_array_size(info) > 0)
		m = str_of(json_array_get(info, 0), "Message");
	if (!m)
		m = str_of(e, "message");
	clean_copy(m ? m : "", out, outlen);
}

int rf_parse_task(const json_t *task, char *msg, size_t msglen)
{
	const char *st = str_of(task, "TaskState");
	static const char *const running[] = { "New",         "Starting", "Running",  "Suspended",
					       "Interrupted", "Pending",  "Stopping", "Service" };
	const json_t *msgs;

	if (msglen)
		msg[0] = '\0';
	if (!st)
		return -EBADMSG;
	if (strcmp(st, "Completed") == 0)
		return 1;
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++)
		if (strcmp(st, running[i]) == 0)
			return 0;
	/* Exception, Killed, Cancelled, or a state we do not know: failed. */
	msgs = json_object_get(task, "Messages");
	const char *m = json_is_array(msgs) ? str_of(json_array_get(msgs, 0), "Message") : NULL;
	if (msglen) {
		char tmp[RF_MSG_MAX];
		clean_copy(m ? m : "", tmp, sizeof(tmp));
		snprintf(msg, msglen, "task %.20s%s%s", st, tmp[0] ? ": " : "", tmp);
	}
	return -1;
}

int rf_parse_manager_vmedia(const json_t *mgr, char *ret)
{
	return copy_link(mgr, "VirtualMedia", ret);
}

static void action_target(const json_t *actions, const char *name, char *out)
{
	const char *t = str_of(json_object_get(actions, name), "target");

	out[0] = '\0';
	if (t && rf_uri_ok(t, strlen(t)))
		snprintf(out, RF_URI_MAX, "%s", t);
}

int rf_parse_vmedia(const json_t *vm, struct rf_vmedia *ret, char *err, size_t errlen)
{
	struct rf_vmedia r;
	const json_t *types = json_object_get(vm, "MediaTypes");
	const json_t *ins = json_object_get(vm, "Inserted");

	memset(&r, 0, sizeof(r));
	if (!json_is_object(vm) || !str_of(vm, "Id")) {
		snprintf(err, errlen, "the virtual media has no Id");
		return -EBADMSG;
	}
	if (!json_is_array(types)) {
		r.cd = true;
	} else {
		size_t n = json_array_size(types);
		for (size_t i = 0; i < n && i < RF_MAX_MEMBERS; i++) {
			const char *t = json_string_value(json_array_get(types, i));
			if (t && (strcmp(t, "CD") == 0 || strcmp(t, "DVD") == 0))
				r.cd = true;
		}
	}
	r.inserted = json_is_true(ins);
	const json_t *actions = json_object_get(vm, "Actions");
	action_target(actions, "#VirtualMedia.InsertMedia", r.insert);
	action_target(actions, "#VirtualMedia.EjectMedia", r.eject);
	*ret = r;
	return 0;
}

/* The first of the candidates that is allowed. */
static int first_allowed(unsigned allowed, const enum rf_reset *c, size_t n, enum rf_reset *out)
{
	for (size_t i = 0; i < n; i++) {
		if (allowed & RF_RESET_BIT(c[i])) {
			*out = c[i];
			return 0;
		}
	}
	return -ENOTSUP;
}

int rf_choose_reset(enum bmc_power_action action, bool known, unsigned allowed,
		    const struct rf_vendor *vendor, enum rf_reset out[2])
{
	static const enum rf_reset on[] = { RF_RESET_ON, RF_RESET_FORCE_ON };
	static const enum rf_reset off[] = { RF_RESET_FORCE_OFF };
	static const enum rf_reset soft[] = { RF_RESET_GRACEFUL_SHUTDOWN };
	static const enum rf_reset reset[] = { RF_RESET_FORCE_RESTART, RF_RESET_GRACEFUL_RESTART };
	static const enum rf_reset cycle[] = { RF_RESET_POWER_CYCLE };

	/* A BMC that advertises nothing is taken to do the standard ones. */
	if (!known)
		allowed = RF_RESET_BIT(RF_RESET_MAX) - 1;
	if (vendor)
		allowed &= ~vendor->lacks_resets;
	switch (action) {
	case BMC_ACT_ON: return first_allowed(allowed, on, 2, &out[0]) < 0 ? -ENOTSUP : 1;
	case BMC_ACT_OFF: return first_allowed(allowed, off, 1, &out[0]) < 0 ? -ENOTSUP : 1;
	case BMC_ACT_SOFT: return first_allowed(allowed, soft, 1, &out[0]) < 0 ? -ENOTSUP : 1;
	case BMC_ACT_RESET: return first_allowed(allowed, reset, 2, &out[0]) < 0 ? -ENOTSUP : 1;
	case BMC_ACT_CYCLE:
		if (first_allowed(allowed, cycle, 1, &out[0]) == 0)
			return 1;
		/* No PowerCycle: off, then on. */
		if (first_allowed(allowed, off, 1, &out[0]) < 0 ||
		    first_allowed(allowed, on, 2, &out[1]) < 0)
			return -ENOTSUP;
		return 2;
	}
	return -ENOTSUP;
}
