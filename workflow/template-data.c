/* template-data — the data a Workflow's template is rendered with.
 *
 * DESIGN: Tinkerbell renders a template with a map: the Workflow's
 * hardwareMap keys at the top level, "Hardware" a Go struct
 * (Disks []string, Interfaces []v1alpha1.Interface, UserData, Metadata,
 * VendorData) whose fields templates reach by their Go names
 * ((index .Hardware.Interfaces 0).DHCP.MAC), and "hardware" the whole
 * object as JSON. Here the struct is a JSON object whose keys are the Go
 * field names, made from the Hardware's JSON keys: the Go names of the
 * v1alpha1 types where the JSON name is not the Go name capitalized
 * (mac -> MAC, vlan_id -> VLANID, ...), else snake_case and camelCase
 * made CamelCase. The scalar fields of Interface, DHCP and IP that Go
 * would always have (as zero values) are filled in, so that a template
 * reads "" or false where Tinkerbell does; a pointer to a struct that is
 * not there (DHCP, IP, Netboot) is nil. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workflow/workflow.h"

#define TD_MAX_DEPTH 32

static const struct {
	const char *json, *go;
} go_names[] = {
	{ "dhcp", "DHCP" },
	{ "ip", "IP" },
	{ "mac", "MAC" },
	{ "uefi", "UEFI" },
	{ "ipxe", "IPXE" },
	{ "osie", "OSIE" },
	{ "isoboot", "ISOBoot" },
	{ "sourceISO", "SourceISO" },
	{ "disableDhcp", "DisableDHCP" },
	{ "vlan_id", "VLANID" },
	{ "tftp_server_name", "TFTPServerName" },
	{ "ipxe_script_url", "IPXEScriptURL" },
	{ "allow_pxe", "AllowPXE" },
	{ "always_pxe", "AlwaysPXE" },
	{ "allowPXE", "AllowPXE" },
	{ "ssh_keys", "SSHKeys" },
	{ "id", "ID" },
	{ "url", "URL" },
	{ "baseURL", "BaseURL" },
	{ "rpi", "RPI" },
};

/* The Go field name for a JSON key, into out (size n). */
static void go_name(const char *key, char *out, size_t n)
{
	size_t o = 0;
	bool up = true;
	for (size_t i = 0; i < sizeof(go_names) / sizeof(go_names[0]); i++)
		if (strcmp(go_names[i].json, key) == 0) {
			snprintf(out, n, "%s", go_names[i].go);
			return;
		}
	for (const char *p = key; *p && o + 1 < n; p++) {
		if (*p == '_' || *p == '-') {
			up = true;
			continue;
		}
		out[o++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 32) : *p;
		up = false;
	}
	out[o] = '\0';
}

/* A copy of v with the keys of every object renamed to Go field names. */
static json_t *go_view(const json_t *v, int depth)
{
	if (depth > TD_MAX_DEPTH)
		return json_null();
	if (json_is_array(v)) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < json_array_size(v); i++)
			if (json_array_append_new(a, go_view(json_array_get(v, i), depth + 1)) <
			    0) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	if (!json_is_object(v))
		return json_deep_copy(v);
	json_t *o = json_object();
	const char *key;
	json_t *val;
	char name[128];
	json_object_foreach ((json_t *)v, key, val) {
		go_name(key, name, sizeof(name));
		json_t *c = go_view(val, depth + 1);
		if (!o || !c || json_object_set_new(o, name, c) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* Sets the fields of o that Go always has, when they are absent. */
static int zero_fields(json_t *o, const char *const *strings, const char *const *bools,
		       const char *const *ints, const char *const *ptrs)
{
	int e = 0;
	if (!json_is_object(o))
		return 0;
	for (; strings && *strings && !e; strings++)
		if (!json_object_get(o, *strings))
			e = json_object_set_new(o, *strings, json_string(""));
	for (; bools && *bools && !e; bools++)
		if (!json_object_get(o, *bools))
			e = json_object_set_new(o, *bools, json_false());
	for (; ints && *ints && !e; ints++)
		if (!json_object_get(o, *ints))
			e = json_object_set_new(o, *ints, json_integer(0));
	for (; ptrs && *ptrs && !e; ptrs++)
		if (!json_object_get(o, *ptrs))
			e = json_object_set_new(o, *ptrs, json_null());
	return e;
}

static int fill_interface(json_t *ifc)
{
	static const char *const ifc_bools[] = { "DisableDHCP", NULL };
	static const char *const ifc_ptrs[] = { "DHCP", "Netboot", "ISOBoot", NULL };
	static const char *const dhcp_strings[] = { "MAC",          "Hostname", "Arch",
						    "IfaceName",    "VLANID",   "TFTPServerName",
						    "BootFileName", NULL };
	static const char *const dhcp_bools[] = { "UEFI", NULL };
	static const char *const dhcp_ints[] = { "LeaseTime", NULL };
	static const char *const dhcp_ptrs[] = { "IP", "NameServers", "TimeServers",
						 "ClasslessStaticRoutes", NULL };
	static const char *const ip_strings[] = { "Address", "Netmask", "Gateway", NULL };
	static const char *const ip_ints[] = { "Family", NULL };
	static const char *const nb_ptrs[] = { "AllowPXE", "AllowWorkflow", "IPXE", "OSIE", NULL };
	json_t *dhcp, *nb;
	int e = zero_fields(ifc, NULL, ifc_bools, NULL, ifc_ptrs);
	if (!e && json_is_object(dhcp = json_object_get(ifc, "DHCP"))) {
		e = zero_fields(dhcp, dhcp_strings, dhcp_bools, dhcp_ints, dhcp_ptrs);
		e = e ?: zero_fields(json_object_get(dhcp, "IP"), ip_strings, NULL, ip_ints, NULL);
	}
	if (!e && json_is_object(nb = json_object_get(ifc, "Netboot")))
		e = zero_fields(nb, NULL, NULL, NULL, nb_ptrs);
	return e;
}

/* HardwareMetadata is a struct value in Go: its fields are always there. */
static int fill_metadata(json_t *md)
{
	static const char *const md_strings[] = { "State", "BondingMode", NULL };
	static const char *const md_ptrs[] = { "Manufacturer", "Instance", "Custom", "Facility",
					       NULL };
	return zero_fields(md, md_strings, NULL, NULL, md_ptrs);
}

static json_t *hardware_view(const json_t *spec)
{
	json_t *h = json_object(), *disks = json_array(), *ifcs = json_array(), *v;
	const json_t *list;
	int e = !h || !disks || !ifcs;

	list = json_object_get(spec, "disks");
	for (size_t i = 0; !e && i < json_array_size(list); i++) {
		const char *dev =
			json_string_value(json_object_get(json_array_get(list, i), "device"));
		e = json_array_append_new(disks, json_string(dev ? dev : ""));
	}
	list = json_object_get(spec, "interfaces");
	for (size_t i = 0; !e && i < json_array_size(list); i++) {
		json_t *ifc = go_view(json_array_get(list, i), 0);
		e = !ifc || fill_interface(ifc) < 0 || json_array_append_new(ifcs, ifc) < 0;
	}
	e = e ?: json_object_set(h, "Disks", disks);
	e = e ?: json_object_set(h, "Interfaces", ifcs);
	v = json_object_get(spec, "metadata");
	e = e ?: json_object_set_new(h, "Metadata", v ? go_view(v, 0) : json_object());
	e = e ?: fill_metadata(json_object_get(h, "Metadata"));
	v = json_object_get(spec, "userData");
	e = e     ?:
		    json_object_set_new(h, "UserData",
					json_string(json_is_string(v) ? json_string_value(v) : ""));
	v = json_object_get(spec, "vendorData");
	e = e     ?:
		    json_object_set_new(h, "VendorData",
					json_string(json_is_string(v) ? json_string_value(v) : ""));
	json_decref(disks);
	json_decref(ifcs);
	if (e) {
		json_decref(h);
		return NULL;
	}
	return h;
}

json_t *wf_tmpl_data(const json_t *hardware, const json_t *hardware_map)
{
	json_t *d = json_object(), *hv;
	const char *key;
	json_t *val;
	if (!d)
		return NULL;
	if (json_is_object(hardware_map))
		json_object_foreach ((json_t *)hardware_map, key, val)
			if (json_object_set(d, key, val) < 0)
				goto fail;
	hv = hardware_view(json_object_get(hardware, "spec"));
	if (!hv || json_object_set_new(d, "Hardware", hv) < 0)
		goto fail;
	if (json_object_set_new(d, "hardware",
				hardware ? json_deep_copy(hardware) : json_object()) < 0)
		goto fail;
	return d;
fail:
	json_decref(d);
	return NULL;
}
