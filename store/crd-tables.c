/* crd-tables — the schemas of the objects the store keeps: Tinkerbell's
 * v1alpha1 CRDs (tinkerbell.org Hardware, Template, Workflow;
 * bmc.tinkerbell.org Machine, Job, Task) and core v1 Secret.
 *
 * DESIGN: data only. Each kind is a tree of static `struct vfield` tables
 * (validate-internal.h) transcribed field by field from the CRDs'
 * openAPIV3Schema: the same names, JSON types, required lists, enums,
 * patterns (as checks of validate-values.c) and defaults. The walker in
 * validate.c applies them. Where a table differs from its CRD it says so
 * beside the field, and docs/strictness.md lists every such place:
 *  - stricter: IP addresses, netmasks, MACs anchored and lowercase, port
 *    ranges, names of referenced objects, the enums of boot devices and
 *    media kinds, the states and condition statuses that controllers write;
 *  - more lenient: Machine spec.connection.insecureTLS may be absent (the
 *    CRD requires it; absent means false), and a Workflow's status may have
 *    the shape tinkerbell/tink <= v0.12 wrote under the same v1alpha1;
 *  - unknown fields are refused in spec, as `kubectl apply` does by default
 *    (server-side field validation "Strict"), except in the free-form
 *    Equinix-legacy spec.metadata blob and in metadata and status, which
 *    controllers of many versions write. */
#include "config.h"

#include <stddef.h>

#include "store/validate-internal.h"

/* clang-format off */

#define END { NULL, V_ANY, 0, NULL, NULL, NULL, NULL, NULL, NULL }
#define STR(n) { .name = n, .type = V_STRING }
#define INT(n) { .name = n, .type = V_INT }
#define BOOL(n) { .name = n, .type = V_BOOL }
#define TIME(n) { .name = n, .type = V_STRING, .check = store_check_time }
#define OBJ(n, f) { .name = n, .type = V_OBJECT, .fields = f }
#define OPEN_OBJ(n, f) { .name = n, .type = V_OBJECT, .flags = F_OPEN, .fields = f }
#define ARR(n, it) { .name = n, .type = V_ARRAY, .items = it }
#define MAP(n, it) { .name = n, .type = V_MAP, .items = it }

static const struct vfield any_item = { .type = V_ANY };
static const struct vfield string_item = { .type = V_STRING };
static const struct vfield ip_item = { .type = V_STRING, .check = store_check_ip };
static const struct vfield no_fields[] = { END };

/* -- metadata (ObjectMeta) -- */
static const struct vfield owner_ref_fields[] = {
	STR("apiVersion"), STR("kind"), STR("name"), STR("uid"), BOOL("controller"),
	BOOL("blockOwnerDeletion"), END
};
static const struct vfield owner_ref_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = owner_ref_fields };
static const struct vfield label_value_item = { .type = V_STRING, .check = store_check_label_value };
static const struct vfield metadata_fields[] = {
	{ .name = "name", .type = V_STRING, .flags = F_REQUIRED, .check = store_check_subdomain },
	{ .name = "namespace", .type = V_STRING, .check = store_check_label },
	{ .name = "labels", .type = V_MAP, .items = &label_value_item,
	  .key_check = store_check_qualified_key },
	{ .name = "annotations", .type = V_MAP, .items = &string_item,
	  .check = store_check_annotations, .key_check = store_check_qualified_key },
	STR("uid"), STR("resourceVersion"), INT("generation"), STR("generateName"),
	TIME("creationTimestamp"), TIME("deletionTimestamp"), INT("deletionGracePeriodSeconds"),
	ARR("finalizers", &string_item), ARR("ownerReferences", &owner_ref_item),
	ARR("managedFields", &any_item), STR("selfLink"), END
};
#define METADATA \
	{ .name = "metadata", .type = V_OBJECT, .flags = F_OPEN | F_REQUIRED, \
	  .fields = metadata_fields }

/* -- Hardware -- */
static const struct vfield route_fields[] = {
	{ .name = "destination_descriptor", .type = V_STRING, .flags = F_REQUIRED,
	  .check = store_check_cidr4 },
	{ .name = "router", .type = V_STRING, .flags = F_REQUIRED, .check = store_check_ipv4 },
	END
};
static const struct vfield route_item = { .type = V_OBJECT, .fields = route_fields };
static const struct vfield dhcp_ip_fields[] = {
	{ .name = "address", .type = V_STRING, .check = store_check_ip },
	{ .name = "netmask", .type = V_STRING, .check = store_check_netmask },
	{ .name = "gateway", .type = V_STRING, .check = store_check_ip_or_empty },
	INT("family"), END
};
static const struct vfield dhcp_fields[] = {
	{ .name = "mac", .type = V_STRING, .check = store_check_mac },
	STR("hostname"), STR("domain_name"), INT("lease_time"),
	ARR("name_servers", &ip_item), ARR("time_servers", &ip_item),
	STR("arch"), BOOL("uefi"), STR("iface_name"), OBJ("ip", dhcp_ip_fields),
	{ .name = "vlan_id", .type = V_STRING, .check = store_check_vlan },
	ARR("classless_static_routes", &route_item),
	STR("tftp_server_name"), STR("boot_file_name"), END
};
static const struct vfield ipxe_fields[] = { STR("url"), STR("contents"), STR("binary"), END };
static const struct vfield osie_fields[] = {
	STR("baseURL"), STR("kernel"), STR("initrd"), ARR("kernelParams", &string_item), END
};
static const struct vfield pxelinux_fields[] = { STR("config"), END };
static const struct vfield rpi_fields[] = {
	{ .name = "serialNum", .type = V_STRING, .flags = F_REQUIRED },
	STR("firmwarePath"), STR("configTxt"), END
};
static const struct vfield netboot_fields[] = {
	BOOL("allowPXE"), BOOL("allowWorkflow"), OBJ("ipxe", ipxe_fields),
	OBJ("osie", osie_fields), OBJ("pxelinux", pxelinux_fields), OBJ("rpi", rpi_fields), END
};
static const struct vfield isoboot_fields[] = {
	{ .name = "sourceISO", .type = V_STRING, .check = store_check_uri }, END
};
static const struct vfield interface_fields[] = {
	{ .name = "dhcp", .type = V_OBJECT, .fields = dhcp_fields, .check = store_check_dhcp },
	OBJ("netboot", netboot_fields), OBJ("isoboot", isoboot_fields),
	{ .name = "disableDhcp", .type = V_BOOL, .def = "false" }, END
};
static const struct vfield interface_item = { .type = V_OBJECT, .fields = interface_fields };
static const struct vfield disk_fields[] = { STR("device"), END };
static const struct vfield disk_item = { .type = V_OBJECT, .fields = disk_fields };
static const struct vfield bmc_ref_fields[] = {
	STR("apiGroup"), { .name = "kind", .type = V_STRING, .flags = F_REQUIRED },
	{ .name = "name", .type = V_STRING, .flags = F_REQUIRED, .check = store_check_subdomain }, END
};
static const struct vfield reference_fields[] = {
	STR("namespace"), STR("name"), STR("group"), STR("version"), STR("resource"), END
};
static const struct vfield reference_item = { .type = V_OBJECT, .fields = reference_fields };
static const struct vfield quantity_item = { .type = V_INT_OR_STRING, .check = store_check_quantity };
static const struct vfield auto_fields[] = {
	{ .name = "enrollmentEnabled", .type = V_BOOL, .def = "false" }, END
};

/* spec.metadata: types of the listed fields; unknown keys tolerated. */
static const struct vfield os_fields[] = {
	STR("slug"), STR("distro"), STR("version"), STR("image_tag"), STR("os_slug"), END
};
static const struct vfield md_ip_fields[] = {
	STR("address"), STR("netmask"), STR("gateway"), INT("family"), BOOL("public"),
	BOOL("management"), END
};
static const struct vfield md_ip_item = { .type = V_OBJECT, .flags = F_OPEN,
					  .fields = md_ip_fields };
static const struct vfield partition_fields[] = {
	STR("label"), INT("number"), INT("size"), INT("start"), STR("type_guid"), END
};
static const struct vfield partition_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = partition_fields };
static const struct vfield sdisk_fields[] = {
	STR("device"), ARR("partitions", &partition_item), BOOL("wipe_table"), END
};
static const struct vfield sdisk_item = { .type = V_OBJECT, .flags = F_OPEN,
					  .fields = sdisk_fields };
static const struct vfield raid_fields[] = {
	STR("name"), STR("level"), ARR("devices", &string_item), INT("spare"), END
};
static const struct vfield raid_item = { .type = V_OBJECT, .flags = F_OPEN, .fields = raid_fields };
static const struct vfield create_fields[] = { BOOL("force"), ARR("options", &string_item), END };
static const struct vfield file_fields[] = {
	STR("path"), STR("contents"), INT("mode"), INT("uid"), INT("gid"), END
};
static const struct vfield file_item = { .type = V_OBJECT, .flags = F_OPEN, .fields = file_fields };
static const struct vfield mount_fields[] = {
	STR("device"), STR("format"), STR("point"), OPEN_OBJ("create", create_fields),
	ARR("files", &file_item), END
};
static const struct vfield fs_fields[] = { OPEN_OBJ("mount", mount_fields), END };
static const struct vfield fs_item = { .type = V_OBJECT, .flags = F_OPEN, .fields = fs_fields };
static const struct vfield storage_fields[] = {
	ARR("disks", &sdisk_item), ARR("raid", &raid_item), ARR("filesystems", &fs_item), END
};
static const struct vfield instance_fields[] = {
	STR("id"), STR("state"), STR("hostname"), BOOL("allow_pxe"), BOOL("rescue"),
	BOOL("always_pxe"), STR("ipxe_script_url"), STR("userdata"),
	STR("crypted_root_password"), ARR("tags", &string_item), ARR("ssh_keys", &string_item),
	BOOL("network_ready"), OPEN_OBJ("operating_system", os_fields),
	ARR("ips", &md_ip_item), OPEN_OBJ("storage", storage_fields), END
};
static const struct vfield manufacturer_fields[] = { STR("id"), STR("slug"), END };
static const struct vfield custom_fields[] = {
	OPEN_OBJ("preinstalled_operating_system_version", os_fields),
	ARR("private_subnets", &string_item), END
};
static const struct vfield facility_fields[] = {
	STR("plan_slug"), STR("plan_version_slug"), STR("facility_code"), END
};
static const struct vfield hw_metadata_fields[] = {
	STR("state"), INT("bonding_mode"), OPEN_OBJ("manufacturer", manufacturer_fields),
	OPEN_OBJ("instance", instance_fields), OPEN_OBJ("custom", custom_fields),
	OPEN_OBJ("facility", facility_fields), END
};
static const struct vfield hw_spec_fields[] = {
	STR("agentID"), OBJ("auto", auto_fields), OBJ("bmcRef", bmc_ref_fields),
	ARR("interfaces", &interface_item), MAP("references", &reference_item),
	OPEN_OBJ("metadata", hw_metadata_fields), INT("tinkVersion"), ARR("disks", &disk_item),
	MAP("resources", &quantity_item), STR("userData"), STR("vendorData"), END
};
static const struct vfield hw_status_fields[] = {
	STR("state"), OPEN_OBJ("attributes", no_fields), END
};

/* -- Template -- */
static const char *const template_states[] = { "", "Ready", "Error", NULL };
static const struct vfield tpl_spec_fields[] = { STR("data"), END };
static const struct vfield tpl_status_fields[] = {
	{ .name = "state", .type = V_STRING, .enums = template_states }, END
};

/* -- bmc Action, shared by Job, Task and Workflow bootOptions -- */
static const char *const power_actions[] = { "on", "off", "soft", "status", "cycle", "reset",
					     NULL };
static const char *const boot_devices[] = { "pxe", "disk", "bios", "cdrom", "safe", NULL };
static const char *const media_kinds[] = { "CD", NULL };
static const struct vfield boot_device_item = { .type = V_STRING, .enums = boot_devices };
static const struct vfield one_time_fields[] = {
	{ .name = "device", .type = V_ARRAY, .flags = F_REQUIRED, .items = &boot_device_item },
	BOOL("efiBoot"), END
};
static const struct vfield boot_device_fields[] = {
	{ .name = "device", .type = V_STRING, .enums = boot_devices },
	BOOL("persistent"), BOOL("efiBoot"), END
};
static const struct vfield media_fields[] = {
	STR("mediaURL"),
	{ .name = "kind", .type = V_STRING, .flags = F_REQUIRED, .enums = media_kinds }, END
};
static const struct vfield action_fields[] = {
	{ .name = "powerAction", .type = V_STRING, .enums = power_actions },
	OBJ("oneTimeBootDeviceAction", one_time_fields), OBJ("bootDevice", boot_device_fields),
	OBJ("virtualMediaAction", media_fields), END
};
static const struct vfield action_item = { .type = V_OBJECT, .flags = F_ONEOF,
					   .fields = action_fields };

/* -- Workflow -- */
static const char *const boot_modes[] = { "netboot", "isoboot", "iso", "customboot", NULL };
static const char *const workflow_states[] = {
	"", "PREPARING", "PENDING", "RUNNING", "POST", "SUCCESS", "FAILED", "TIMEOUT",
	/* tinkerbell/tink <= v0.12 */
	"STATE_PENDING", "STATE_RUNNING", "STATE_FAILED", "STATE_TIMEOUT", "STATE_SUCCESS", NULL
};
static const char *const renderings[] = { "", "successful", "failed", NULL };
static const char *const condition_statuses[] = { "True", "False", "Unknown", NULL };
static const struct vfield custom_boot_fields[] = {
	ARR("preparingActions", &action_item), ARR("postActions", &action_item), END
};
static const struct vfield boot_options_fields[] = {
	BOOL("toggleAllowNetboot"), { .name = "isoURL", .type = V_STRING, .check = store_check_uri },
	{ .name = "bootMode", .type = V_STRING, .enums = boot_modes },
	OBJ("custombootConfig", custom_boot_fields), END
};
static const struct vfield string_map_item = { .type = V_STRING };
static const struct vfield wf_spec_fields[] = {
	{ .name = "templateRef", .type = V_STRING, .check = store_check_subdomain },
	{ .name = "hardwareRef", .type = V_STRING, .check = store_check_subdomain },
	MAP("hardwareMap", &string_map_item), BOOL("disabled"),
	OBJ("bootOptions", boot_options_fields), END
};
static const struct vfield allow_netboot_fields[] = { BOOL("toggledTrue"), BOOL("toggledFalse"), END };
static const struct vfield job_status_fields[] = {
	STR("uid"), BOOL("complete"), BOOL("existingJobDeleted"), END
};
static const struct vfield job_status_item = { .type = V_OBJECT, .flags = F_OPEN,
					       .fields = job_status_fields };
static const struct vfield wf_boot_status_fields[] = {
	OPEN_OBJ("allowNetboot", allow_netboot_fields), MAP("jobs", &job_status_item), END
};
static const struct vfield current_state_fields[] = {
	STR("agentID"), STR("taskID"), STR("actionID"), STR("actionName"), STR("taskName"),
	{ .name = "state", .type = V_STRING, .enums = workflow_states }, END
};
static const struct vfield condition_fields[] = {
	{ .name = "type", .type = V_STRING, .flags = F_REQUIRED },
	{ .name = "status", .type = V_STRING, .flags = F_REQUIRED, .enums = condition_statuses },
	STR("reason"), STR("message"), TIME("time"), TIME("lastUpdateTime"), END
};
static const struct vfield condition_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = condition_fields };
static const struct vfield namespaces_fields[] = { STR("network"), STR("pid"), END };
static const struct vfield wf_action_fields[] = {
	STR("id"), STR("name"), STR("image"), INT("timeout"), ARR("command", &string_item),
	ARR("volumes", &string_item), STR("pid"), OPEN_OBJ("namespaces", namespaces_fields),
	MAP("environment", &string_map_item),
	{ .name = "state", .type = V_STRING, .enums = workflow_states },
	TIME("executionStart"), TIME("executionStop"), STR("executionDuration"), STR("message"),
	END
};
static const struct vfield wf_action_item = { .type = V_OBJECT, .flags = F_OPEN,
					      .fields = wf_action_fields };
static const struct vfield wf_task_fields[] = {
	STR("id"), STR("name"), STR("agentID"), ARR("volumes", &string_item),
	MAP("environment", &string_map_item), ARR("actions", &wf_action_item), END
};
static const struct vfield wf_task_item = { .type = V_OBJECT, .flags = F_OPEN,
					    .fields = wf_task_fields };
static const struct vfield wf_status_fields[] = {
	STR("agentID"), { .name = "state", .type = V_STRING, .enums = workflow_states },
	OPEN_OBJ("bootOptions", wf_boot_status_fields),
	{ .name = "templateRendering", .type = V_STRING, .enums = renderings },
	INT("globalTimeout"), TIME("globalExecutionStop"),
	OPEN_OBJ("currentState", current_state_fields), ARR("conditions", &condition_item),
	ARR("tasks", &wf_task_item), END
};

/* -- bmc Machine connection (also copied into each Task) -- */
static const char *const providers[] = { "ipmitool", "asrockrack", "gofish", "IntelAMT", "dell",
					 "supermicro", "openbmc", NULL };
static const char *const host_schemes[] = { "http", "https", NULL };
static const struct vfield provider_item = { .type = V_STRING, .flags = F_NOCASE,
					     .enums = providers };
static const struct vfield secret_ref_fields[] = {
	{ .name = "name", .type = V_STRING, .check = store_check_subdomain },
	{ .name = "namespace", .type = V_STRING, .check = store_check_label }, END
};
static const struct vfield secret_ref_item = { .type = V_OBJECT, .fields = secret_ref_fields };
static const struct vfield secret_ref_list = { .type = V_ARRAY, .items = &secret_ref_item };
static const struct vfield string_list = { .type = V_ARRAY, .items = &string_item };
#define PORT(n) { .name = n, .type = V_INT, .check = store_check_port_or_zero }
static const struct vfield ipmitool_fields[] = { PORT("port"), STR("cipherSuite"), END };
static const struct vfield redfish_fields[] = {
	PORT("port"), BOOL("useBasicAuth"), STR("systemName"), END
};
static const struct vfield amt_fields[] = {
	PORT("port"),
	{ .name = "hostScheme", .type = V_STRING, .enums = host_schemes, .def = "\"http\"" }, END
};
static const struct vfield ha_fields[] = {
	{ .name = "switchEntityID", .type = V_STRING, .flags = F_REQUIRED },
	INT("powerOperationDelaySeconds"), END
};
static const struct vfield rpc_request_fields[] = {
	STR("httpContentType"), STR("httpMethod"), MAP("staticHeaders", &string_list),
	STR("timestampFormat"), STR("timestampHeader"), END
};
static const struct vfield rpc_signature_fields[] = {
	BOOL("appendAlgoToHeaderDisabled"), STR("headerName"),
	ARR("includedPayloadHeaders", &string_item), END
};
static const struct vfield rpc_hmac_fields[] = {
	BOOL("prefixSigDisabled"), MAP("secrets", &secret_ref_list), END
};
static const struct vfield rpc_experimental_fields[] = {
	STR("customRequestPayload"), STR("dotPath"), END
};
static const struct vfield rpc_fields[] = {
	{ .name = "consumerURL", .type = V_STRING, .flags = F_REQUIRED | F_NONEMPTY },
	OBJ("request", rpc_request_fields), OBJ("signature", rpc_signature_fields),
	OBJ("hmac", rpc_hmac_fields), OBJ("experimental", rpc_experimental_fields),
	BOOL("logNotificationsDisabled"), END
};
static const struct vfield provider_options_fields[] = {
	ARR("preferredOrder", &provider_item), OBJ("ipmitool", ipmitool_fields),
	OBJ("redfish", redfish_fields), OBJ("intelAMT", amt_fields),
	OBJ("homeassistant", ha_fields), OBJ("rpc", rpc_fields), END
};
static const struct vfield connection_fields[] = {
	{ .name = "host", .type = V_STRING, .flags = F_REQUIRED | F_NONEMPTY },
	{ .name = "port", .type = V_INT, .check = store_check_port, .def = "623" },
	OBJ("authSecretRef", secret_ref_fields),
	BOOL("insecureTLS"), /* required by the CRD; absent is false here */ OBJ("providerOptions", provider_options_fields), END
};
static const struct vfield machine_spec_fields[] = {
	{ .name = "connection", .type = V_OBJECT, .flags = F_REQUIRED,
	  .fields = connection_fields },
	END
};
static const char *const power_states[] = { "on", "off", "unknown", NULL };
static const struct vfield machine_status_fields[] = {
	{ .name = "powerState", .type = V_STRING, .enums = power_states },
	ARR("conditions", &condition_item), END
};

/* -- bmc Job and Task -- */
static const struct vfield machine_ref_fields[] = {
	{ .name = "name", .type = V_STRING, .flags = F_REQUIRED, .check = store_check_subdomain },
	{ .name = "namespace", .type = V_STRING, .flags = F_REQUIRED, .check = store_check_label }, END
};
static const struct vfield job_spec_fields[] = {
	{ .name = "machineRef", .type = V_OBJECT, .flags = F_REQUIRED,
	  .fields = machine_ref_fields },
	{ .name = "tasks", .type = V_ARRAY, .flags = F_REQUIRED | F_NONEMPTY,
	  .items = &action_item },
	END
};
static const struct vfield bmc_status_fields[] = {
	ARR("conditions", &condition_item), TIME("startTime"), TIME("completionTime"), END
};
static const struct vfield task_spec_fields[] = {
	{ .name = "task", .type = V_OBJECT, .flags = F_REQUIRED | F_ONEOF,
	  .fields = action_fields },
	OBJ("connection", connection_fields), END
};

/* -- Secret (core v1) -- */
static const struct vfield base64_item = { .type = V_STRING, .check = store_check_base64 };

/* ---- per kind ---- */

#define TOP(specf, specflags, statusf) \
	{ { .name = "apiVersion", .type = V_STRING }, { .name = "kind", .type = V_STRING }, \
	  METADATA, \
	  { .name = "spec", .type = V_OBJECT, .flags = (specflags), .fields = (specf) }, \
	  { .name = "status", .type = V_OBJECT, .flags = F_OPEN, .fields = (statusf) }, END }

const struct vfield store_crd_top[STORE_KIND_MAX][VALIDATE_TOP_FIELDS] = {
	[STORE_KIND_HARDWARE] = TOP(hw_spec_fields, 0, hw_status_fields),
	[STORE_KIND_TEMPLATE] = TOP(tpl_spec_fields, 0, tpl_status_fields),
	[STORE_KIND_WORKFLOW] = TOP(wf_spec_fields, 0, wf_status_fields),
	[STORE_KIND_MACHINE] = TOP(machine_spec_fields, 0, machine_status_fields),
	[STORE_KIND_JOB] = TOP(job_spec_fields, 0, bmc_status_fields),
	[STORE_KIND_TASK] = TOP(task_spec_fields, 0, bmc_status_fields),
	[STORE_KIND_SECRET] = {
		{ .name = "apiVersion", .type = V_STRING }, { .name = "kind", .type = V_STRING },
		METADATA,
		{ .name = "data", .type = V_MAP, .items = &base64_item,
		  .key_check = store_check_config_key },
		{ .name = "stringData", .type = V_MAP, .items = &string_item,
		  .key_check = store_check_config_key },
		STR("type"), BOOL("immutable"), END },
};

/* clang-format on */
