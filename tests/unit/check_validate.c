/* check_validate — store_validate() and store_validate_status() against
 * realistic Tinkerbell objects (written as YAML, the way people apply
 * them) and a table of broken ones, each with the exact message it must
 * produce. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/yamljson.h"
#include "store/store.h"
#include "tests/unit/unit.h"

static json_t *load(const char *yaml)
{
	struct yj_error e;
	json_t *v = NULL;
	int r = yj_load_one(yaml, strlen(yaml), &v, &e);
	ck_assert_msg(r == 0, "test YAML does not load: %zu:%zu %s", e.line, e.column, e.message);
	return v;
}

#define HW_HEAD \
	"apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata:\n  name: sm01\n  namespace: tink-system\n"
#define TPL_HEAD "apiVersion: tinkerbell.org/v1alpha1\nkind: Template\nmetadata:\n  name: ubuntu\n"
#define WF_HEAD "apiVersion: tinkerbell.org/v1alpha1\nkind: Workflow\nmetadata:\n  name: wf1\n"
#define MACHINE_HEAD \
	"apiVersion: bmc.tinkerbell.org/v1alpha1\nkind: Machine\nmetadata:\n  name: bmc-sm01\n"
#define JOB_HEAD \
	"apiVersion: bmc.tinkerbell.org/v1alpha1\nkind: Job\nmetadata:\n  name: netboot-wf1\n"
#define TASK_HEAD \
	"apiVersion: bmc.tinkerbell.org/v1alpha1\nkind: Task\nmetadata:\n  name: netboot-wf1-task-0\n"
#define SECRET_HEAD "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-creds\n"

/* Parts reused by the broken cases. */
#define IFACE "spec:\n  interfaces:\n  - dhcp:\n"
#define CONN "spec:\n  connection:\n    host: 10.1.1.5\n    authSecretRef: {name: bmc-creds}\n"

static const struct good {
	enum store_kind kind;
	const char *yaml;
} goods[] = {
	{ STORE_KIND_HARDWARE, HW_HEAD
	  "  labels:\n    app.kubernetes.io/name: sm01\n    rack: r1\n    empty: \"\"\n"
	  "  annotations:\n    tinkerbell.org/agent-attributes: '{\"cpu\": {}}'\n"
	  "spec:\n"
	  "  agentID: \"3c:ec:ef:4c:4f:54\"\n"
	  "  bmcRef:\n    apiGroup: bmc.tinkerbell.org\n    kind: Machine\n    name: bmc-sm01\n"
	  "  disks:\n  - device: /dev/nvme0n1\n"
	  "  interfaces:\n"
	  "  - dhcp:\n"
	  "      arch: x86_64\n      hostname: sm01\n      mac: 3c:ec:ef:4c:4f:54\n"
	  "      uefi: true\n      lease_time: 86400\n"
	  "      name_servers: [1.1.1.1, 2606:4700:4700::1111]\n"
	  "      time_servers: [10.1.0.1]\n"
	  "      ip:\n        address: 10.1.1.11\n        netmask: 255.255.255.0\n"
	  "        gateway: 10.1.1.1\n        family: 4\n"
	  "      vlan_id: \"100\"\n"
	  "    netboot:\n      allowPXE: true\n      allowWorkflow: true\n"
	  "      osie:\n        baseURL: http://10.1.1.1:7171\n        kernelParams: [console=ttyS0]\n"
	  "  metadata:\n"
	  "    facility:\n      facility_code: onprem\n      plan_slug: c3.small.x86\n"
	  "    instance:\n      id: 3c:ec:ef:4c:4f:54\n      hostname: sm01\n"
	  "      operating_system:\n        distro: ubuntu\n        version: \"22.04\"\n"
	  "      ips:\n      - {address: 10.1.1.11, family: 4, public: false}\n"
	  "      storage:\n        disks:\n        - device: /dev/sda\n          wipe_table: true\n"
	  "          partitions:\n          - {label: ROOT, number: 1, size: 0}\n"
	  "      some_legacy_field: kept\n"
	  "  userData: |\n    #cloud-config\n    hostname: sm01\n" },
	{ STORE_KIND_HARDWARE, HW_HEAD },
	{ STORE_KIND_HARDWARE, HW_HEAD
	  "spec:\n  userData:\n  tinkVersion: 1\n"
	  "  interfaces:\n"
	  "  - disableDhcp: false\n"
	  "    dhcp:\n      mac: \"00:00:5e:00:53:01\"\n      vlan_id: \"0,4096\"\n"
	  "      tftp_server_name: 10.1.1.1\n      boot_file_name: /pxelinux.0\n"
	  "      ip: {address: \"2001:db8::11\", netmask: \"ffff:ffff:ffff:ffff::\", gateway: \"\"}\n"
	  "      classless_static_routes:\n"
	  "      - {destination_descriptor: 192.168.0.0/16, router: 10.1.1.254}\n"
	  "      - {destination_descriptor: 0.0.0.0/0, router: 10.1.1.1}\n"
	  "    netboot:\n      ipxe: {url: \"http://10.1.1.1/custom.ipxe\"}\n"
	  "      rpi: {serialNum: \"a1b2c3d4\"}\n"
	  "    isoboot: {sourceISO: \"http://10.1.1.1:7080/iso/hook.iso\"}\n"
	  "  references:\n    cfg: {namespace: default, name: cfg, version: v1, resource: configmaps}\n"
	  "  resources:\n    cpu: 16\n    memory: 64Gi\n    power: 500m\n    disk: \"1e3\"\n"
	  "  auto: {enrollmentEnabled: true}\n"
	  "status:\n  state: Ready\n  attributes:\n    outOfBand:\n      cpu: {totalCores: 16}\n" },
	{ STORE_KIND_TEMPLATE, TPL_HEAD
	  "spec:\n  data: |\n    version: \"0.1\"\n    name: ubuntu\n    global_timeout: 1800\n"
	  "    tasks:\n    - name: os\n      worker: \"{{.device_1}}\"\n"
	  "status:\n  state: Ready\n" },
	{ STORE_KIND_WORKFLOW, WF_HEAD
	  "  namespace: tink-system\n"
	  "spec:\n  templateRef: ubuntu\n  hardwareRef: sm01\n"
	  "  hardwareMap:\n    device_1: 3c:ec:ef:4c:4f:54\n"
	  "  bootOptions:\n    toggleAllowNetboot: true\n    bootMode: customboot\n"
	  "    custombootConfig:\n      preparingActions:\n      - powerAction: \"off\"\n"
	  "      - bootDevice: {device: pxe, efiBoot: true}\n      - powerAction: \"on\"\n"
	  "      postActions:\n      - virtualMediaAction: {mediaURL: \"\", kind: CD}\n"
	  "status:\n  state: RUNNING\n  agentID: 3c:ec:ef:4c:4f:54\n  templateRendering: successful\n"
	  "  globalTimeout: 1800\n  globalExecutionStop: \"2026-11-22T08:00:00Z\"\n"
	  "  currentState: {agentID: a, taskID: t, actionID: x, state: RUNNING, actionName: stream}\n"
	  "  bootOptions:\n    allowNetboot: {toggledTrue: true}\n"
	  "    jobs:\n      netboot-wf1: {uid: abc, complete: true}\n"
	  "  conditions:\n  - {type: TemplateRenderedSuccess, status: \"True\", time: \"2026-11-22T07:31:44.123+01:00\"}\n"
	  "  tasks:\n  - id: 01J0\n    name: os\n    agentID: a\n    environment: {A: b}\n"
	  "    actions:\n    - id: 01J1\n      name: stream\n      image: quay.io/tinkerbell/actions/image2disk\n"
	  "      timeout: 600\n      state: RUNNING\n      executionStart: \"2026-11-22T07:31:44Z\"\n"
	  "      executionDuration: 1m2s\n" },
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD "spec: {templateRef: ubuntu, hardwareRef: sm01}\n"
		  "status:\n  state: STATE_PENDING\n  templateRending: successful\n"
		  "  currentAction: stream\n  tasks:\n  - name: os\n    worker: a\n"
		  "    actions:\n    - {name: stream, status: STATE_PENDING, seconds: 0}\n" },
	{ STORE_KIND_MACHINE, MACHINE_HEAD
	  "spec:\n  connection:\n    host: 10.1.1.5\n    port: 623\n    insecureTLS: true\n"
	  "    authSecretRef:\n      name: bmc-creds\n      namespace: tink-system\n"
	  "    providerOptions:\n      preferredOrder: [gofish, intelamt, IPMITOOL]\n"
	  "      ipmitool: {port: 623, cipherSuite: \"17\"}\n"
	  "      redfish: {port: 443, useBasicAuth: true, systemName: System.Embedded.1}\n"
	  "      intelAMT: {port: 16992, hostScheme: http}\n"
	  "      rpc:\n        consumerURL: https://example.com/bmc\n"
	  "        request: {httpMethod: POST, staticHeaders: {X-A: [b, c]}}\n"
	  "        hmac: {secrets: {sha256: [{name: hmac-a}]}}\n"
	  "status:\n  powerState: \"on\"\n"
	  "  conditions:\n  - {type: Contactable, status: \"True\", lastUpdateTime: \"2026-11-22T07:31:44Z\"}\n" },
	{ STORE_KIND_JOB, JOB_HEAD
	  "spec:\n  machineRef: {name: bmc-sm01, namespace: tink-system}\n"
	  "  tasks:\n  - powerAction: \"off\"\n  - oneTimeBootDeviceAction: {device: [pxe], efiBoot: true}\n"
	  "  - powerAction: \"on\"\n"
	  "status:\n  startTime: \"2026-11-22T07:31:44Z\"\n  conditions:\n  - {type: Running, status: \"True\"}\n" },
	{ STORE_KIND_TASK, TASK_HEAD
	  "  labels: {owner-name: netboot-wf1}\n"
	  "spec:\n  task:\n    bootDevice: {device: disk, persistent: true}\n"
	  "  connection:\n    host: 10.1.1.5\n    authSecretRef: {name: bmc-creds}\n    insecureTLS: false\n" },
	{ STORE_KIND_SECRET,
	  SECRET_HEAD "type: kubernetes.io/basic-auth\n"
		      "data:\n  username: YWRtaW4=\n  password: cGFzc3dvcmQ=\n  empty: \"\"\n"
		      "stringData:\n  .hidden-key_1: plain\n" },
	{ STORE_KIND_HARDWARE,
	  "{\"apiVersion\": \"tinkerbell.org/v1alpha1\", \"kind\": \"Hardware\","
	  " \"metadata\": {\"name\": \"a.b-c\", \"uid\": \"u\", \"generation\": 3,"
	  " \"creationTimestamp\": \"2026-01-02T15:04:05Z\"},"
	  " \"spec\": {\"interfaces\": [{\"dhcp\": {\"mac\": \"aa:bb:cc:dd:ee:ff\"}}]}}" },
};

START_TEST(test_good)
{
	json_t *v = load(goods[_i].yaml);
	char msg[512] = "";
	int r = store_validate(goods[_i].kind, v, msg, sizeof(msg));
	ck_assert_msg(r == 0, "good[%d] refused: %s", _i, msg);
	const json_t *st = json_object_get(v, "status");
	if (st) {
		r = store_validate_status(goods[_i].kind, st, msg, sizeof(msg));
		ck_assert_msg(r == 0, "good[%d] status refused: %s", _i, msg);
	}
	json_decref(v);
}
END_TEST

static const struct bad {
	enum store_kind kind;
	const char *yaml;
	const char *message;
} bads[] = {
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      mac: zz\n",
	  "spec.interfaces[0].dhcp.mac: \"zz\" is not a MAC address" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      mac: AA:BB:CC:00:11:22\n",
	  "spec.interfaces[0].dhcp.mac: \"AA:BB:CC:00:11:22\" must be lowercase (\"aa:bb:cc:00:11:22\")" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      mac: aa-bb-cc-00-11-22\n",
	  "spec.interfaces[0].dhcp.mac: \"aa-bb-cc-00-11-22\" is not a MAC address" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      macc: aa:bb:cc:00:11:22\n",
	  "spec.interfaces[0].dhcp.macc: unknown field" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      uefi: \"true\"\n",
	  "spec.interfaces[0].dhcp.uefi: must be a boolean, not a string" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      lease_time: 1.5\n",
	  "spec.interfaces[0].dhcp.lease_time: must be an integer, not a number" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      ip: {address: 10.1.1.300}\n",
	  "spec.interfaces[0].dhcp.ip.address: \"10.1.1.300\" is not an IP address" },
	{ STORE_KIND_HARDWARE,
	  HW_HEAD IFACE "      ip: {address: 10.1.1.3, netmask: 255.0.255.0}\n",
	  "spec.interfaces[0].dhcp.ip.netmask: \"255.0.255.0\" is not a netmask" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      ip: {gateway: gw}\n",
	  "spec.interfaces[0].dhcp.ip.gateway: \"gw\" is not an IP address" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      name_servers: [1.1.1.1, dns.example]\n",
	  "spec.interfaces[0].dhcp.name_servers[1]: \"dns.example\" is not an IP address" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      vlan_id: \"4097\"\n",
	  "spec.interfaces[0].dhcp.vlan_id: \"4097\" is not a VLAN ID (0-4096, or a comma-separated list of them)" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      vlan_id: 100\n",
	  "spec.interfaces[0].dhcp.vlan_id: must be a string, not an integer" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      vlan_id: \"1,\"\n",
	  "spec.interfaces[0].dhcp.vlan_id: \"1,\" is not a VLAN ID (0-4096, or a comma-separated list of them)" },
	{ STORE_KIND_HARDWARE,
	  HW_HEAD IFACE
	  "      classless_static_routes:\n      - {destination_descriptor: 10.0.0.0/33, router: 10.1.1.1}\n",
	  "spec.interfaces[0].dhcp.classless_static_routes[0].destination_descriptor: \"10.0.0.0/33\" is not an IPv4 destination like \"10.0.0.0/8\"" },
	{ STORE_KIND_HARDWARE,
	  HW_HEAD IFACE
	  "      classless_static_routes:\n      - {destination_descriptor: 10.0.0.0/8, router: \"::1\"}\n",
	  "spec.interfaces[0].dhcp.classless_static_routes[0].router: \"::1\" is not an IPv4 address" },
	{ STORE_KIND_HARDWARE,
	  HW_HEAD IFACE
	  "      classless_static_routes:\n      - {destination_descriptor: 10.0.0.0/8}\n",
	  "spec.interfaces[0].dhcp.classless_static_routes[0].router: required" },
	{ STORE_KIND_HARDWARE, HW_HEAD IFACE "      tftp_server_name: 10.1.1.1\n",
	  "spec.interfaces[0].dhcp: tftp_server_name and boot_file_name must be set together" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  interfaces:\n  - netboot: {rpi: {configTxt: x}}\n",
	  "spec.interfaces[0].netboot.rpi.serialNum: required" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  interfaces:\n  - isoboot: {sourceISO: hook.iso}\n",
	  "spec.interfaces[0].isoboot.sourceISO: \"hook.iso\" is not an absolute URL" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  interfaces: {}\n",
	  "spec.interfaces: must be an array, not an object" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  resources: {memory: 64GB}\n",
	  "spec.resources.memory: \"64GB\" is not a quantity like \"16Gi\" or \"500m\"" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  references: {cfg: {nmae: x}}\n",
	  "spec.references.cfg.nmae: unknown field" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  bmcRef: {name: bmc-sm01}\n",
	  "spec.bmcRef.kind: required" },
	{ STORE_KIND_HARDWARE,
	  HW_HEAD
	  "spec:\n  metadata:\n    instance:\n      ips: [{address: 10.1.1.1, public: \"no\"}]\n",
	  "spec.metadata.instance.ips[0].public: must be a boolean, not a string" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  metadata:\n    instance:\n      tags: tag1\n",
	  "spec.metadata.instance.tags: must be an array, not a string" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec:\n  userData: 12\n",
	  "spec.userData: must be a string, not an integer" },
	{ STORE_KIND_HARDWARE, HW_HEAD "spec: []\n", "spec: must be an object, not an array" },
	{ STORE_KIND_HARDWARE, HW_HEAD "sepc: {}\n", "sepc: unknown field" },
	{ STORE_KIND_HARDWARE, HW_HEAD "status:\n  state: 1\n",
	  "status.state: must be a string, not an integer" },
	/* object identity */
	{ STORE_KIND_HARDWARE, "kind: Hardware\nmetadata: {name: a}\n", "apiVersion: required" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha2\nkind: Hardware\nmetadata: {name: a}\n",
	  "apiVersion: \"tinkerbell.org/v1alpha2\" is wrong for kind Hardware (want \"tinkerbell.org/v1alpha1\")" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Workflow\nmetadata: {name: a}\n",
	  "kind: \"Workflow\" is not Hardware" },
	{ STORE_KIND_HARDWARE, "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n",
	  "metadata: required" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata: {namespace: x}\n",
	  "metadata.name: required" },
	{ STORE_KIND_HARDWARE, "- a\n", "object: must be an object, not an array" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata: {name: Sm_01}\n",
	  "metadata.name: \"Sm_01\" is not a valid name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata: {name: a, namespace: a.b}\n",
	  "metadata.namespace: \"a.b\" is not a valid namespace: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata: {name: a, labels: {rack: -r1}}\n",
	  "metadata.labels.rack: \"-r1\" is not a valid label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata: {name: a, labels: {\"Example.com/x\": y}}\n",
	  "metadata.labels[\"Example.com/x\"]: invalid key: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata: {name: a, labels: {rack: 1}}\n",
	  "metadata.labels.rack: must be a string, not an integer" },
	{ STORE_KIND_HARDWARE,
	  "apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata: {name: a, annotations: {note: true}}\n",
	  "metadata.annotations.note: must be a string, not a boolean" },
	/* Template */
	{ STORE_KIND_TEMPLATE, TPL_HEAD "spec: {data: {version: \"0.1\"}}\n",
	  "spec.data: must be a string, not an object" },
	{ STORE_KIND_TEMPLATE, TPL_HEAD "spec: {data: x}\nstatus: {state: Done}\n",
	  "status.state: \"Done\" is not one of Ready, Error" },
	/* Workflow */
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD "spec: {templateRef: ubuntu, hardwareRef: sm01, hardwareMap: {device_1: 1}}\n",
	  "spec.hardwareMap.device_1: must be a string, not an integer" },
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD "spec: {templateRef: ubuntu, hardwareRef: sm01, bootOptions: {bootMode: pxe}}\n",
	  "spec.bootOptions.bootMode: \"pxe\" is not one of netboot, isoboot, iso, customboot" },
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD
	  "spec:\n  templateRef: ubuntu\n  hardwareRef: sm01\n"
	  "  bootOptions:\n    custombootConfig:\n      preparingActions:\n      - {powerAction: \"off\", bootDevice: {device: pxe}}\n",
	  "spec.bootOptions.custombootConfig.preparingActions[0]: at most one action may be set, found 2" },
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD "spec: {templateRef: ubuntu, hardwareRef: sm01}\nstatus: {state: DONE}\n",
	  "status.state: \"DONE\" is not one of PREPARING, PENDING, RUNNING, POST, SUCCESS, FAILED, TIMEOUT, STATE_PENDING, STATE_RUNNING, STATE_FAILED, STATE_TIMEOUT, STATE_SUCCESS" },
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD
	  "spec: {templateRef: ubuntu, hardwareRef: sm01}\nstatus: {tasks: [{actions: [{timeout: \"60\"}]}]}\n",
	  "status.tasks[0].actions[0].timeout: must be an integer, not a string" },
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD
	  "spec: {templateRef: ubuntu, hardwareRef: sm01}\nstatus: {globalExecutionStop: \"yesterday\"}\n",
	  "status.globalExecutionStop: \"yesterday\" is not an RFC 3339 time like \"2026-01-02T15:04:05Z\"" },
	{ STORE_KIND_WORKFLOW,
	  WF_HEAD
	  "spec: {templateRef: ubuntu, hardwareRef: sm01}\nstatus: {conditions: [{type: X, status: Yes}]}\n",
	  "status.conditions[0].status: \"Yes\" is not one of True, False, Unknown" },
	/* Machine */
	{ STORE_KIND_MACHINE,
	  MACHINE_HEAD "spec:\n  connection:\n    authSecretRef: {name: bmc-creds}\n",
	  "spec.connection.host: required" },
	{ STORE_KIND_MACHINE,
	  MACHINE_HEAD
	  "spec:\n  connection:\n    host: \"\"\n    authSecretRef: {name: bmc-creds}\n",
	  "spec.connection.host: must not be empty" },
	{ STORE_KIND_MACHINE, MACHINE_HEAD CONN "    port: 70000\n",
	  "spec.connection.port: 70000 is not a port (1-65535)" },
	{ STORE_KIND_MACHINE, MACHINE_HEAD CONN "    insecureTLS: yes\n",
	  "spec.connection.insecureTLS: must be a boolean, not a string" },
	{ STORE_KIND_MACHINE,
	  MACHINE_HEAD CONN "    providerOptions: {preferredOrder: [gofish, racadm]}\n",
	  "spec.connection.providerOptions.preferredOrder[1]: \"racadm\" is not one of ipmitool, asrockrack, gofish, IntelAMT, dell, supermicro, openbmc" },
	{ STORE_KIND_MACHINE, MACHINE_HEAD CONN "    providerOptions: {ipmi: {port: 623}}\n",
	  "spec.connection.providerOptions.ipmi: unknown field" },
	{ STORE_KIND_MACHINE,
	  MACHINE_HEAD CONN "    providerOptions: {rpc: {request: {httpMethod: POST}}}\n",
	  "spec.connection.providerOptions.rpc.consumerURL: required" },
	{ STORE_KIND_MACHINE, MACHINE_HEAD CONN "status: {powerState: standby}\n",
	  "status.powerState: \"standby\" is not one of on, off, unknown" },
	/* Job */
	{ STORE_KIND_JOB,
	  JOB_HEAD "spec:\n  machineRef: {name: bmc-sm01, namespace: tink-system}\n  tasks: []\n",
	  "spec.tasks: must have at least one item" },
	{ STORE_KIND_JOB, JOB_HEAD "spec:\n  tasks: [{powerAction: \"on\"}]\n",
	  "spec.machineRef: required" },
	{ STORE_KIND_JOB,
	  JOB_HEAD "spec:\n  machineRef: {name: bmc-sm01}\n  tasks: [{powerAction: \"on\"}]\n",
	  "spec.machineRef.namespace: required" },
	{ STORE_KIND_JOB,
	  JOB_HEAD
	  "spec:\n  machineRef: {name: bmc-sm01, namespace: t}\n  tasks: [{powerAction: blink}]\n",
	  "spec.tasks[0].powerAction: \"blink\" is not one of on, off, soft, status, cycle, reset" },
	{ STORE_KIND_JOB,
	  JOB_HEAD
	  "spec:\n  machineRef: {name: bmc-sm01, namespace: t}\n  tasks: [{oneTimeBootDeviceAction: {device: [usb]}}]\n",
	  "spec.tasks[0].oneTimeBootDeviceAction.device[0]: \"usb\" is not one of pxe, disk, bios, cdrom, safe" },
	{ STORE_KIND_JOB,
	  JOB_HEAD
	  "spec:\n  machineRef: {name: bmc-sm01, namespace: t}\n  tasks: [{virtualMediaAction: {mediaURL: \"http://x/a.iso\", kind: DVD}}]\n",
	  "spec.tasks[0].virtualMediaAction.kind: \"DVD\" is not one of CD" },
	{ STORE_KIND_JOB,
	  JOB_HEAD
	  "spec:\n  machineRef: {name: bmc-sm01, namespace: t}\n  tasks: [{reboot: true}]\n",
	  "spec.tasks[0].reboot: unknown field" },
	/* Task */
	{ STORE_KIND_TASK, TASK_HEAD "spec: {}\n", "spec.task: required" },
	{ STORE_KIND_TASK,
	  TASK_HEAD "spec:\n  task: {powerAction: \"on\", virtualMediaAction: {kind: CD}}\n",
	  "spec.task: at most one action may be set, found 2" },
	{ STORE_KIND_TASK, TASK_HEAD "spec:\n  task: {bootDevice: {device: network}}\n",
	  "spec.task.bootDevice.device: \"network\" is not one of pxe, disk, bios, cdrom, safe" },
	/* Secret */
	{ STORE_KIND_SECRET, SECRET_HEAD "data: {password: \"not base64!\"}\n",
	  "data.password: is not base64 (RFC 4648 with padding)" },
	{ STORE_KIND_SECRET, SECRET_HEAD "stringData: {\"user name\": x}\n",
	  "stringData[\"user name\"]: invalid key: letters, digits, '-', '_' and '.' only" },
	{ STORE_KIND_SECRET, SECRET_HEAD "spec: {}\n", "spec: unknown field" },
	{ STORE_KIND_SECRET, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
	  "kind: \"ConfigMap\" is not Secret" },
};

START_TEST(test_bad)
{
	json_t *v = load(bads[_i].yaml);
	char msg[512] = "";
	int r = store_validate(bads[_i].kind, v, msg, sizeof(msg));
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_str_eq(msg, bads[_i].message);
	json_decref(v);
}
END_TEST

START_TEST(test_status_only)
{
	char msg[512] = "";
	json_t *st = load("state: RUNNING\ncurrentState: {state: POST}\n");
	ck_assert_int_eq(store_validate_status(STORE_KIND_WORKFLOW, st, msg, sizeof(msg)), 0);
	json_decref(st);

	st = load("state: RUNNING\nfutureField: {x: 1}\n");
	ck_assert_int_eq(store_validate_status(STORE_KIND_WORKFLOW, st, msg, sizeof(msg)), 0);
	json_decref(st);

	st = load("currentState: {state: running}\n");
	ck_assert_int_eq(store_validate_status(STORE_KIND_WORKFLOW, st, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "status.currentState.state: \"running\" is not one of PREPARING, "
			      "PENDING, RUNNING, POST, SUCCESS, FAILED, TIMEOUT, STATE_PENDING, "
			      "STATE_RUNNING, STATE_FAILED, STATE_TIMEOUT, STATE_SUCCESS");
	json_decref(st);

	st = load("- on\n");
	ck_assert_int_eq(store_validate_status(STORE_KIND_MACHINE, st, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "status: must be an object, not an array");
	json_decref(st);

	st = load("powerState: \"off\"\n");
	ck_assert_int_eq(store_validate_status(STORE_KIND_MACHINE, st, msg, sizeof(msg)), 0);
	ck_assert_int_eq(store_validate_status(STORE_KIND_SECRET, st, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "status: a Secret has no status");
	json_decref(st);
}
END_TEST

/* store_validate_status_since(): a member shared with the stored status
 * (the same tree) is not walked again; anything else is, at any depth. */
START_TEST(test_status_since)
{
	char msg[512] = "";
	/* an old status with a bad action state, as an older, looser
	 * version might have stored it */
	json_t *old = load("state: RUNNING\ntasks:\n- name: t\n  actions:\n"
			   "  - {name: a, state: bogus}\n  - {name: b, state: PENDING}\n");
	ck_assert_int_eq(store_validate_status(STORE_KIND_WORKFLOW, old, msg, sizeof(msg)),
			 -EINVAL);
	/* the next status shares the tasks array: the old error is not
	 * judged again, the new top-level member is */
	json_t *next = json_copy(old);
	json_object_set_new(next, "state", json_string("POST"));
	ck_assert_int_eq(store_validate_status_since(STORE_KIND_WORKFLOW, next, old, msg,
						     sizeof(msg)),
			 0);
	json_object_set_new(next, "state", json_string("posted"));
	ck_assert_int_eq(store_validate_status_since(STORE_KIND_WORKFLOW, next, old, msg,
						     sizeof(msg)),
			 -EINVAL);
	ck_assert_msg(strncmp(msg, "status.state:", 13) == 0, "%s", msg);
	json_decref(next);
	/* a copy of the path to action b, with b changed badly: b is walked
	 * (its error found), a is shared and skipped */
	next = json_copy(old);
	json_t *tasks = json_copy(json_object_get(old, "tasks"));
	json_t *task = json_copy(json_array_get(tasks, 0));
	json_t *actions = json_copy(json_object_get(task, "actions"));
	json_array_set_new(actions, 1, json_pack("{s:s,s:s}", "name", "b", "state", "nope"));
	json_object_set_new(task, "actions", actions);
	json_array_set_new(tasks, 0, task);
	json_object_set_new(next, "tasks", tasks);
	ck_assert_int_eq(store_validate_status_since(STORE_KIND_WORKFLOW, next, old, msg,
						     sizeof(msg)),
			 -EINVAL);
	ck_assert_msg(strstr(msg, "status.tasks[0].actions[1].state") != NULL, "%s", msg);
	ck_assert_msg(strstr(msg, "actions[0]") == NULL, "%s", msg);
	/* an equal but separate tree is walked: only the same one is skipped */
	json_t *fresh = json_deep_copy(next);
	ck_assert_int_eq(store_validate_status_since(STORE_KIND_WORKFLOW, fresh, old, msg,
						     sizeof(msg)),
			 -EINVAL);
	ck_assert_msg(strstr(msg, "actions[0].state") != NULL, "%s", msg);
	json_decref(fresh);
	json_decref(next);
	json_decref(old);
}
END_TEST

/* A message never overruns a small buffer and stays NUL-terminated. */
START_TEST(test_small_buffer)
{
	json_t *v = load(HW_HEAD IFACE "      mac: zz\n");
	char msg[16];
	memset(msg, 'x', sizeof(msg));
	ck_assert_int_eq(store_validate(STORE_KIND_HARDWARE, v, msg, sizeof(msg)), -EINVAL);
	ck_assert_uint_eq(strlen(msg), sizeof(msg) - 1);
	ck_assert_int_eq(store_validate(STORE_KIND_HARDWARE, v, NULL, 0), -EINVAL);
	json_decref(v);
}
END_TEST

/* Long keys and values are cut in messages, and the path stays bounded. */
START_TEST(test_long_names)
{
	json_t *v = load(HW_HEAD "spec: {}\n");
	json_t *spec = json_object_get(v, "spec");
	char key[2048];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	json_object_set_new(spec, key, json_true());
	char msg[1024];
	ck_assert_int_eq(store_validate(STORE_KIND_HARDWARE, v, msg, sizeof(msg)), -EINVAL);
	ck_assert_msg(strncmp(msg, "spec.kkkk", 9) == 0, "%s", msg);
	ck_assert_msg(strlen(msg) < 400, "%zu", strlen(msg));
	json_decref(v);
}
END_TEST

/* Every kind has at least one good example above, and each kind refuses
 * the others' apiVersion/kind. */
START_TEST(test_kind_mismatch)
{
	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		json_t *v = load(goods[i].yaml);
		for (int k = 0; k < STORE_KIND_MAX; k++) {
			char msg[512];
			int r = store_validate((enum store_kind)k, v, msg, sizeof(msg));
			if ((enum store_kind)k == goods[i].kind)
				ck_assert_int_eq(r, 0);
			else
				ck_assert_msg(r == -EINVAL &&
						      (strncmp(msg, "kind: ", 6) == 0 ||
						       strncmp(msg, "apiVersion: ", 12) == 0),
					      "good[%zu] as kind %d: %d %s", i, k, r, msg);
		}
		json_decref(v);
	}
}
END_TEST

/* ---- Tinkerbell's own samples and test data ---- */

static char *read_fixture(const char *name, size_t *ret_len)
{
	const char *top = getenv("top_srcdir");
	char p[1024];
	ck_assert_msg(top != NULL, "top_srcdir is not set");
	snprintf(p, sizeof(p), "%s/tests/unit/fixtures/upstream/%s", top, name);
	FILE *f = fopen(p, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", p);
	char *data = malloc(1 << 16);
	ck_assert_ptr_nonnull(data);
	size_t n = fread(data, 1, (1 << 16) - 1, f);
	ck_assert_msg(feof(f), "%s is larger than the test reads", p);
	fclose(f);
	data[n] = '\0';
	*ret_len = n;
	return data;
}

static const char *const upstream_files[] = {
	"rufio-auth-secret.yaml",	"rufio-hmac-secret1.yaml",
	"rufio-job.yaml",		"rufio-machine.yaml",
	"rufio-machine-with-opts.yaml", "rufio-task.yaml",
	"tink-example-hardware.yaml",	"tink-example-template.yaml",
	"tink-example-workflow.yaml",	"tink-e2e-01-workflow.yaml",
	"tink-e2e-02-hardware1.yaml",	"tink-e2e-02-template2.yaml",
	"tink-e2e-02-workflow2.yaml",	"tinkerbell-agent-template.yaml",
	"tinkerbell-agent-workflow.yaml", "tinkerbell-file-backend.yaml",
	"playground-template.yaml",	"playground-workflow.yaml",
};

/* Every object of every file is accepted, except the file backend's
 * "bad-data" Hardware, whose IP address "3" the CRD lets through and
 * ironbell refuses (docs/strictness.md). */
START_TEST(test_upstream)
{
	size_t len;
	char *data = read_fixture(upstream_files[_i], &len);
	json_t *docs = NULL;
	struct yj_error ye;
	ck_assert_msg(yj_load(data, len, &docs, NULL, &ye) == 0, "%s: %zu:%zu %s",
		      upstream_files[_i], ye.line, ye.column, ye.message);
	json_t *objs = json_array();
	size_t i;
	json_t *d;
	json_array_foreach(docs, i, d)
	{
		if (json_is_array(d))
			json_array_extend(objs, d);
		else
			json_array_append(objs, d);
	}
	ck_assert_uint_gt(json_array_size(objs), 0);
	json_array_foreach(objs, i, d)
	{
		enum store_kind k;
		char msg[1024] = "";
		const char *name = json_string_value(
			json_object_get(json_object_get(d, "metadata"), "name"));
		ck_assert_int_eq(store_kind_from_object(
					 json_string_value(json_object_get(d, "apiVersion")),
					 json_string_value(json_object_get(d, "kind")), &k),
				 0);
		int r = store_validate(k, d, msg, sizeof(msg));
		if (name && strcmp(name, "bad-data") == 0) {
			ck_assert_int_eq(r, -EINVAL);
			ck_assert_str_eq(msg,
					 "spec.interfaces[0].dhcp.ip.address: \"3\" is not an IP address");
		} else {
			ck_assert_msg(r == 0, "%s: %s refused: %s", upstream_files[_i],
				      name ? name : "?", msg);
		}
	}
	json_decref(objs);
	json_decref(docs);
	free(data);
}
END_TEST

/* What the upstream CRDs leave optional is optional here too. */
static const struct good optional[] = {
	/* no authSecretRef: the rpc provider needs none */
	{ STORE_KIND_MACHINE, MACHINE_HEAD
	  "spec:\n  connection:\n    host: 10.1.1.5\n    insecureTLS: false\n" },
	{ STORE_KIND_MACHINE, MACHINE_HEAD "spec:\n  connection:\n    host: 10.1.1.5\n"
					   "    authSecretRef: {namespace: tink-system}\n" },
	{ STORE_KIND_WORKFLOW, WF_HEAD "spec: {templateRef: ubuntu}\n" },
	{ STORE_KIND_WORKFLOW, WF_HEAD "spec: {hardwareRef: sm01}\n" },
	{ STORE_KIND_WORKFLOW, WF_HEAD },
	{ STORE_KIND_TEMPLATE, TPL_HEAD "spec: {}\n" },
	{ STORE_KIND_TEMPLATE, TPL_HEAD },
	{ STORE_KIND_MACHINE, MACHINE_HEAD },
	{ STORE_KIND_JOB, JOB_HEAD },
	{ STORE_KIND_TASK, TASK_HEAD },
	/* no enum upstream for bmc condition types */
	{ STORE_KIND_JOB, JOB_HEAD "status:\n  conditions:\n  - {type: Retrying, status: \"True\"}\n" },
};

START_TEST(test_optional)
{
	json_t *v = load(optional[_i].yaml);
	char msg[512] = "";
	int r = store_validate(optional[_i].kind, v, msg, sizeof(msg));
	ck_assert_msg(r == 0, "optional[%d] refused: %s", _i, msg);
	json_decref(v);
}
END_TEST

/* Every field error of an object in one message, in the order of the
 * object, as the API server lists them. */
START_TEST(test_all_errors)
{
	char msg[1024] = "";
	json_t *v = load(HW_HEAD "spec:\n  interfaces:\n"
				 "  - dhcp: {mac: zz, uefi: \"yes\", ip: {address: 10.0.0.300}}\n"
				 "    netboot: {rpi: {}}\n"
				 "  - dhcp: {macc: aa:bb:cc:dd:ee:ff}\n"
				 "  userData: 1\n");
	ck_assert_int_eq(store_validate(STORE_KIND_HARDWARE, v, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "spec.interfaces[0].dhcp.mac: \"zz\" is not a MAC address; "
			      "spec.interfaces[0].dhcp.uefi: must be a boolean, not a string; "
			      "spec.interfaces[0].dhcp.ip.address: \"10.0.0.300\" is not an IP address; "
			      "spec.interfaces[0].netboot.rpi.serialNum: required; "
			      "spec.interfaces[1].dhcp.macc: unknown field; "
			      "spec.userData: must be a string, not an integer");
	json_decref(v);

	v = load(JOB_HEAD "spec:\n  tasks: [{powerAction: blink}, {reboot: true}]\n");
	ck_assert_int_eq(store_validate(STORE_KIND_JOB, v, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "spec.tasks[0].powerAction: \"blink\" is not one of on, off, soft, "
			      "status, cycle, reset; "
			      "spec.tasks[1].reboot: unknown field; "
			      "spec.machineRef: required");
	json_decref(v);

	/* more errors than fit: the message says how many were left out */
	v = load(HW_HEAD "spec: {interfaces: []}\n");
	json_t *ifs = json_object_get(json_object_get(v, "spec"), "interfaces");
	for (int i = 0; i < 100; i++)
		json_array_append_new(ifs, json_pack("{s:{s:s}}", "dhcp", "mac", "zz"));
	ck_assert_int_eq(store_validate(STORE_KIND_HARDWARE, v, msg, sizeof(msg)), -EINVAL);
	ck_assert_msg(strlen(msg) < sizeof(msg) - 1, "%s", msg);
	ck_assert_msg(strstr(msg, "spec.interfaces[0].dhcp.mac: \"zz\" is not a MAC address; ") ==
			      msg,
		      "%s", msg);
	ck_assert_msg(strstr(msg, " more errors)") != NULL, "%s", msg);
	/* an index of two digits in the path */
	ck_assert_msg(strstr(msg, "; spec.interfaces[12].dhcp.mac: \"zz\" is not") != NULL, "%s",
		      msg);
	json_decref(v);
}
END_TEST

/* The CRD defaults, filled in as the API server does: where the parent
 * object is present, and not over a value that is set. */
START_TEST(test_defaults)
{
	json_t *v = load(MACHINE_HEAD "spec:\n  connection:\n    host: 10.1.1.5\n"
					"    providerOptions: {intelAMT: {}, redfish: {port: 443}}\n");
	store_default(STORE_KIND_MACHINE, v);
	json_t *conn = json_object_get(json_object_get(v, "spec"), "connection");
	ck_assert_int_eq(json_integer_value(json_object_get(conn, "port")), 623);
	json_t *po = json_object_get(conn, "providerOptions");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(po, "intelAMT"), "hostScheme")),
		"http");
	ck_assert_int_eq(json_integer_value(
				 json_object_get(json_object_get(po, "redfish"), "port")),
			 443);
	ck_assert_ptr_null(json_object_get(po, "ipmitool"));
	json_decref(v);

	v = load(MACHINE_HEAD "spec:\n  connection:\n    host: 10.1.1.5\n    port: 6230\n");
	store_default(STORE_KIND_MACHINE, v);
	conn = json_object_get(json_object_get(v, "spec"), "connection");
	ck_assert_int_eq(json_integer_value(json_object_get(conn, "port")), 6230);
	json_decref(v);

	v = load(TASK_HEAD "spec:\n  task: {powerAction: \"on\"}\n  connection: {host: h, port: null}\n");
	store_default(STORE_KIND_TASK, v);
	conn = json_object_get(json_object_get(v, "spec"), "connection");
	ck_assert_int_eq(json_integer_value(json_object_get(conn, "port")), 623);
	json_decref(v);

	v = load(HW_HEAD "spec:\n  auto: {}\n  interfaces:\n  - dhcp: {mac: \"aa:bb:cc:dd:ee:ff\"}\n"
			 "  - disableDhcp: true\n  - 7\n");
	store_default(STORE_KIND_HARDWARE, v);
	json_t *spec = json_object_get(v, "spec");
	json_t *ifs = json_object_get(spec, "interfaces");
	ck_assert(json_is_false(json_object_get(json_array_get(ifs, 0), "disableDhcp")));
	ck_assert(json_is_true(json_object_get(json_array_get(ifs, 1), "disableDhcp")));
	ck_assert(json_is_integer(json_array_get(ifs, 2)));
	ck_assert(json_is_false(json_object_get(json_object_get(spec, "auto"), "enrollmentEnabled")));
	json_decref(v);

	/* nothing to default where the parent is absent, or not an object */
	v = load(MACHINE_HEAD "spec: {connection: x}\n");
	store_default(STORE_KIND_MACHINE, v);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(v, "spec"), "connection")),
			 "x");
	json_decref(v);
	v = load(HW_HEAD);
	store_default(STORE_KIND_HARDWARE, v);
	ck_assert_ptr_null(json_object_get(v, "spec"));
	json_decref(v);
}
END_TEST

/* A Secret written with stringData is stored as the API server stores it:
 * each value base64 in data, stringData winning over data, stringData
 * gone; the result validates. Malformed stringData is left as it is, for
 * store_validate() to report. */
START_TEST(test_secret_string_data)
{
	char msg[512];
	json_t *v = load(SECRET_HEAD
			 "type: Opaque\n"
			 "data: {username: b2xk, keep: a2VlcA==}\n"
			 "stringData: {username: admin, password: \"s3cr\\u00e9t!\", e: \"\", "
			 "a.b: xy}\n");
	store_default(STORE_KIND_SECRET, v);
	ck_assert_ptr_null(json_object_get(v, "stringData"));
	json_t *d = json_object_get(v, "data");
	ck_assert_str_eq(json_string_value(json_object_get(d, "username")), "YWRtaW4=");
	ck_assert_str_eq(json_string_value(json_object_get(d, "password")), "czNjcsOpdCE=");
	ck_assert_str_eq(json_string_value(json_object_get(d, "e")), "");
	ck_assert_str_eq(json_string_value(json_object_get(d, "a.b")), "eHk=");
	ck_assert_str_eq(json_string_value(json_object_get(d, "keep")), "a2VlcA==");
	ck_assert_int_eq(store_validate(STORE_KIND_SECRET, v, msg, sizeof(msg)), 0);
	json_decref(v);

	/* stringData alone makes data */
	v = load(SECRET_HEAD "stringData: {password: abc}\n");
	store_default(STORE_KIND_SECRET, v);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(v, "data"), "password")),
			 "YWJj");
	ck_assert_ptr_null(json_object_get(v, "stringData"));
	json_decref(v);

	/* malformed: left for validation, which names the field */
	static const char *const bad[] = {
		SECRET_HEAD "stringData: {password: 7}\n",
		SECRET_HEAD "stringData: {\"pass word\": x}\n",
		SECRET_HEAD "stringData: [x]\n",
		SECRET_HEAD "data: [x]\nstringData: {password: x}\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = load(bad[i]);
		store_default(STORE_KIND_SECRET, v);
		ck_assert_msg(json_object_get(v, "stringData") != NULL, "%s", bad[i]);
		ck_assert_int_eq(store_validate(STORE_KIND_SECRET, v, msg, sizeof(msg)), -EINVAL);
		json_decref(v);
	}
	/* other kinds keep a field of that name to validation */
	v = load(MACHINE_HEAD CONN "stringData: {a: b}\n");
	store_default(STORE_KIND_MACHINE, v);
	ck_assert_ptr_nonnull(json_object_get(v, "stringData"));
	json_decref(v);
}
END_TEST

static Suite *validate_suite(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("validate");
	tcase_add_loop_test(tc, test_good, 0, (int)(sizeof(goods) / sizeof(goods[0])));
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	UNIT_TEST(tc, test_status_only);
	UNIT_TEST(tc, test_status_since);
	UNIT_TEST(tc, test_small_buffer);
	UNIT_TEST(tc, test_long_names);
	UNIT_TEST(tc, test_kind_mismatch);
	tcase_add_loop_test(tc, test_upstream, 0, (int)(sizeof(upstream_files) / sizeof(upstream_files[0])));
	tcase_add_loop_test(tc, test_optional, 0, (int)(sizeof(optional) / sizeof(optional[0])));
	UNIT_TEST(tc, test_all_errors);
	UNIT_TEST(tc, test_defaults);
	UNIT_TEST(tc, test_secret_string_data);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(validate_suite());
}
