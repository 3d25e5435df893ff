/* config — ironbell.yaml into an immutable struct ib_config.
 *
 * DESIGN. Every key the file may hold is one row of a static table
 * (cfg_top_keys and the tables its section rows point to): its name, its
 * type, where its value lives in struct ib_config, its range, its default
 * written as it would be written in the file, and one line of documentation.
 * A section (api:, http:, ...) is a row too, whose rows are another table,
 * so a later subsystem (dhcp:, tftp:, ...) adds a section row and a table;
 * nested sections nest the same way. The walker, the defaults, the duplicate
 * and unknown-key checks and config_free() all run off the tables; a type is
 * one parse function in cfg_types[] (config-types.c). Most values are
 * scalars; a list type (dhcp.interfaces) parses each item of a sequence
 * into a bounded inline array, and a table type (dhcp.arch) each pair of a
 * mapping whose keys are data, so a snapshot holds no pointer but its
 * strings. Rules that tie several keys together (api.listen needs
 * api.token_file, and TLS unless it is a loopback address) and those that
 * read a file a key names are functions in cfg_checks[]
 * (config-checks.c), run after the walk with the location of every key
 * that was set.
 *
 * The file is read whole (at most CONFIG_MAX_SIZE bytes) and loaded with
 * libyaml's document loader, whose nodes carry their marks; aliases are not
 * expanded, and the walk descends only into section rows (and one level
 * into the items of list and table rows), so neither a cycle nor a deep
 * document can make it recurse. Quoting never changes the meaning of a
 * value; a null value (empty, "~", "null") leaves the default.
 *
 * The defaults go through the same parse functions as the file's values, so
 * a default that breaks a rule fails config_new_default() (and its test);
 * a list or table row starts empty, and its default must say "[]" or "{}". */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <yaml.h>

#include "common/num.h"
#include "daemon/config/conf.h"
#include "daemon/config/config-internal.h"

#define FIELD(m) offsetof(struct ib_config, m), sizeof(((struct ib_config *)0)->m)

const struct cfg_key cfg_api_keys[] = {
	{ "socket", CFG_SOCKET, FIELD(api.socket), 0, 0, "/run/ironbell/api.sock", NULL,
	  "unix socket of the admin API" },
	{ "socket_mode", CFG_MODE, FIELD(api.socket_mode), 0, 0777, "0660", NULL,
	  "file mode of the admin socket, octal" },
	{ "listen", CFG_LISTEN, FIELD(api.listen), 0, 0, NULL, NULL,
	  "host:port of the admin API over TCP (bearer token); unset: no TCP" },
	{ "token_file", CFG_PATH, FIELD(api.token_file), 0, 0, NULL, NULL,
	  "file holding the bearer token that api.listen requires" },
	{ "tls_cert", CFG_PATH, FIELD(api.tls_cert), 0, 0, NULL, NULL,
	  "PEM certificate (chain) of the TLS admin listener; unset: no TLS" },
	{ "tls_key", CFG_PATH, FIELD(api.tls_key), 0, 0, NULL, NULL,
	  "PEM private key of api.tls_cert" },
	{ 0 }
};

static const struct cfg_key cfg_http_keys[] = {
	{ "listen", CFG_LISTEN, FIELD(http.listen), 0, 0, "0.0.0.0:7080", NULL,
	  "host:port of the public HTTP listener (iPXE, metadata)" },
	{ "threads", CFG_UINT, FIELD(http.threads), 0, 64, "0", NULL,
	  "HTTP worker threads; 0: one per CPU" },
	{ "pin_threads", CFG_BOOL, FIELD(http.pin_threads), 0, 0, "true", NULL,
	  "with one worker thread per CPU, each on its own CPU" },
	{ "max_body", CFG_SIZE, FIELD(http.max_body), KIB, GIB, "8MiB", NULL,
	  "largest request body accepted" },
	{ "idle_timeout", CFG_UINT, FIELD(http.idle_timeout), 1, 86400, "120", NULL,
	  "seconds an idle connection is kept open (watches are exempt)" },
	{ "public_metrics", CFG_BOOL, FIELD(http.public_metrics), 0, 0, "true", NULL,
	  "serve /metrics on the public listener too" },
	{ "answer_cache", CFG_BOOL, FIELD(http.answer_cache), 0, 0, "true", NULL,
	  "serve machines' answers from the in-memory answer cache" },
	{ "answer_prebuild", CFG_BOOL, FIELD(http.answer_prebuild), 0, 0, "true", NULL,
	  "make machines' boot answers when their Hardware changes, not on first use" },
	{ 0 }
};

static const struct cfg_key cfg_store_keys[] = {
	{ "changes_retention", CFG_UINT, FIELD(store.changes_retention), 1000, 100000000,
	  "100000", NULL, "change-log rows kept for watches to resume from" },
	{ "events_retention", CFG_UINT, FIELD(store.events_retention), 100, 10000000, "10000",
	  NULL, "event rows kept" },
	{ "batch_max", CFG_UINT, FIELD(store.batch_max), 1, 65536, "1024", NULL,
	  "most write requests committed in one transaction" },
	{ "commit_delay", CFG_UINT, FIELD(store.commit_delay), 0, 100000, "500", NULL,
	  "microseconds to gather more writes under load before a commit; 0: none" },
	{ 0 }
};

static const struct cfg_key cfg_dhcp_keys[] = {
	{ "enabled", CFG_BOOL, FIELD(dhcp.enabled), 0, 0, "false", NULL,
	  "run the DHCP server" },
	{ "mode", CFG_DHCP_MODE, FIELD(dhcp.mode), 0, 0, "reservation", NULL,
	  "reservation, proxy or auto-proxy" },
	{ "interfaces", CFG_IFNAMES, FIELD(dhcp.interfaces), 0, 0, "[]", NULL,
	  "interfaces to serve; empty: every interface" },
	{ "server_address", CFG_IPV4, FIELD(dhcp.server_address), 0, 0, NULL, NULL,
	  "option 54 and siaddr; unset: the receiving interface's address" },
	{ "public_address", CFG_IPV4, FIELD(dhcp.public_address), 0, 0, NULL, NULL,
	  "address in URLs handed to machines; unset: server_address" },
	{ "tftp_address", CFG_IPV4, FIELD(dhcp.tftp_address), 0, 0, NULL, NULL,
	  "address of the TFTP server; unset: public_address" },
	{ "http_base_url", CFG_URL, FIELD(dhcp.http_base_url), 0, 0, NULL, NULL,
	  "base URL of iPXE scripts and binaries" },
	{ "syslog_address", CFG_IPV4, FIELD(dhcp.syslog_address), 0, 0, NULL, NULL,
	  "option 7; unset: not sent" },
	{ "lease_time", CFG_UINT, FIELD(dhcp.lease_time), 60, 31536000, "86400", NULL,
	  "lease seconds when a Hardware sets none" },
	{ "lease_reuse", CFG_UINT, FIELD(dhcp.lease_reuse), 0, 49, "25", NULL,
	  "percent of the lease time within which a client asking again gets the lease on disk "
	  "for the time it has left, with no write; 0: every ACK writes" },
	{ "arch", CFG_ARCH_MAP, FIELD(dhcp.arch), 0, 0, "{}", NULL,
	  "option 93 code: binary, overriding the built-in table" },
	{ "subnet_check", CFG_BOOL, FIELD(dhcp.subnet_check), 0, 0, "true", NULL,
	  "a directly attached client's reservation must be on its interface's subnets" },
	{ 0 }
};

static const struct cfg_key cfg_tftp_keys[] = {
	{ "enabled", CFG_BOOL, FIELD(tftp.enabled), 0, 0, "false", NULL,
	  "run the TFTP server" },
	{ "listen", CFG_LISTEN, FIELD(tftp.listen), 0, 0, "0.0.0.0:69", NULL,
	  "host:port the TFTP server listens on" },
	{ "max_transfers", CFG_UINT, FIELD(tftp.max_transfers), 1, 10000, "256", NULL,
	  "transfers in progress at once; more requests get an error" },
	{ "blksize_max", CFG_UINT, FIELD(tftp.blksize_max), 512, 65464, "1468", NULL,
	  "largest block size granted (RFC 2348), also clamped to the path MTU" },
	{ "windowsize_max", CFG_UINT, FIELD(tftp.windowsize_max), 1, 64, "16", NULL,
	  "largest window granted (RFC 7440)" },
	{ "timeout", CFG_UINT, FIELD(tftp.timeout), 1, 255, "1", NULL,
	  "seconds before the first retransmission when the client asks none" },
	{ "retries", CFG_UINT, FIELD(tftp.retries), 1, 20, "5", NULL,
	  "retransmissions of one block before a transfer is given up" },
	{ 0 }
};

const struct cfg_key cfg_ipxe_keys[] = {
	{ "binary_dir", CFG_PATH, FIELD(ipxe.binary_dir), 0, 0, "/usr/lib/ipxe", NULL,
	  "directory of the iPXE binaries, served over TFTP and at /ipxe/binary/" },
	{ "script_template", CFG_PATH, FIELD(ipxe.script_template), 0, 0, NULL, NULL,
	  "file of the iPXE script template; unset: the built-in one" },
	{ "osie_dir", CFG_PATH, FIELD(ipxe.osie_dir), 0, 0, NULL, NULL,
	  "directory served at /osie/ (kernels and initrds); unset: none" },
	{ "osie_url", CFG_URL, FIELD(ipxe.osie_url), 0, 0, NULL, NULL,
	  "base URL of the kernel and initrd; unset: <http base URL>/osie" },
	{ "kernel", CFG_TEXT, FIELD(ipxe.kernel), 0, 255, "vmlinuz-{{arch}}", NULL,
	  "kernel file name under osie_url" },
	{ "initrd", CFG_TEXT, FIELD(ipxe.initrd), 0, 255, "initramfs-{{arch}}", NULL,
	  "initrd file name under osie_url" },
	{ "kernel_args", CFG_TEXT, FIELD(ipxe.kernel_args), 0, 2048, NULL, NULL,
	  "extra kernel arguments for every machine" },
	{ "grpc_authority", CFG_TEXT, FIELD(ipxe.grpc_authority), 0, 255, NULL, NULL,
	  "host:port of the worker API given to the agent; unset: <public address>:42113" },
	{ "syslog_host", CFG_TEXT, FIELD(ipxe.syslog_host), 0, 255, NULL, NULL,
	  "syslog_host kernel argument; unset: dhcp.syslog_address or the public address" },
	{ "tinkerbell_tls", CFG_BOOL, FIELD(ipxe.tinkerbell_tls), 0, 0, "false", NULL,
	  "tell the agent to use TLS to the worker API" },
	{ "tinkerbell_insecure_tls", CFG_BOOL, FIELD(ipxe.tinkerbell_insecure_tls), 0, 0,
	  "false", NULL, "tell the agent not to verify the worker API's certificate" },
	{ "retries", CFG_UINT, FIELD(ipxe.retries), 0, 100, "3", NULL,
	  "times the script retries fetching the kernel and initrd" },
	{ "max_downloads_per_client", CFG_UINT, FIELD(ipxe.max_downloads_per_client), 0, 10000,
	  "4", NULL,
	  "binary and OSIE files in flight to one client address; more get 503; 0: no bound" },
	{ 0 }
};

static const struct cfg_key cfg_metadata_keys[] = {
	{ "trusted_proxies", CFG_CIDRS, FIELD(metadata.trusted_proxies), 0, 0, "[]", NULL,
	  "proxies whose X-Forwarded-For names the client; empty: none" },
	{ 0 }
};

static const struct cfg_key cfg_syslog_keys[] = {
	{ "enabled", CFG_BOOL, FIELD(syslog.enabled), 0, 0, "false", NULL,
	  "run the syslog receiver" },
	{ "listen", CFG_LISTEN, FIELD(syslog.listen), 0, 0, "0.0.0.0:514", NULL,
	  "host:port the syslog receiver listens on (UDP)" },
	{ "rate", CFG_UINT, FIELD(syslog.rate), 1, 100000, "50", NULL,
	  "messages per second kept from one source address" },
	{ "burst", CFG_UINT, FIELD(syslog.burst), 1, 1000000, "200", NULL,
	  "messages one source may send at once before the rate applies" },
	{ "max_message", CFG_SIZE, FIELD(syslog.max_message), 480, 65535, "8KiB", NULL,
	  "longest message kept; longer ones are cut" },
	{ 0 }
};

const struct cfg_key cfg_bmc_ipmi_keys[] = {
	{ "cipher_suite", CFG_UINT, FIELD(bmc.ipmi.cipher_suite), 3, 17, "3", NULL,
	  "RMCP+ cipher suite when a Machine names none: 3 or 17" },
	{ "timeout", CFG_UINT, FIELD(bmc.ipmi.timeout_ms), 100, 60000, "1000", NULL,
	  "milliseconds before the first retransmission of a request; doubled each time" },
	{ "retries", CFG_UINT, FIELD(bmc.ipmi.retries), 1, 10, "3", NULL,
	  "retransmissions before a request fails" },
	{ "max_sessions", CFG_UINT, FIELD(bmc.ipmi.max_sessions), 1, 65536, "4096", NULL,
	  "IPMI sessions kept open at once" },
	{ 0 }
};

const struct cfg_key cfg_bmc_redfish_keys[] = {
	{ "timeout", CFG_UINT, FIELD(bmc.redfish.timeout_ms), 1000, 600000, "20000", NULL,
	  "milliseconds one HTTP request may take, connection included" },
	{ "max_connections", CFG_UINT, FIELD(bmc.redfish.max_connections), 1, 65536, "128", NULL,
	  "HTTP connections open at once" },
	{ "ca_file", CFG_PATH, FIELD(bmc.redfish.ca_file), 0, 0, NULL, NULL,
	  "PEM bundle that verifies BMC certificates; unset: the system's" },
	{ 0 }
};

static const struct cfg_key cfg_bmc_keys[] = {
	{ "enabled", CFG_BOOL, FIELD(bmc.enabled), 0, 0, "true", NULL,
	  "run the BMC controllers (Machines, Jobs, Tasks)" },
	{ "ipmi", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_bmc_ipmi_keys, "the IPMI 2.0 client" },
	{ "redfish", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_bmc_redfish_keys, "the Redfish client" },
	{ "poll_interval", CFG_UINT, FIELD(bmc.poll_interval_s), 1, 86400, "30", NULL,
	  "seconds between two reads of a Machine's power state" },
	{ "task_timeout", CFG_UINT, FIELD(bmc.task_timeout_s), 1, 86400, "600", NULL,
	  "seconds after which a Task that has not succeeded fails" },
	{ "max_jobs", CFG_UINT, FIELD(bmc.max_jobs), 1, 100000, "64", NULL,
	  "Machines with a Job running at once" },
	{ "verify_interval", CFG_UINT, FIELD(bmc.verify_interval_ms), 100, 60000, "1000", NULL,
	  "milliseconds between two reads of the power state while a power Task is verified" },
	{ 0 }
};

const struct cfg_key cfg_workflow_keys[] = {
	{ "enabled", CFG_BOOL, FIELD(workflow.enabled), 0, 0, "true", NULL,
	  "run the workflow controller (rendering, boot options, timeouts, cleanup)" },
	{ "resync_interval", CFG_UINT, FIELD(workflow.resync_s), 1, 86400, "60", NULL,
	  "seconds between two looks at every Workflow, changed or not" },
	{ "default_action_timeout", CFG_UINT, FIELD(workflow.default_action_timeout_s), 1,
	  31536000, "3600", NULL,
	  "seconds handed out for an action whose template says timeout 0" },
	{ "action_grace", CFG_UINT, FIELD(workflow.action_grace_s), 1, 86400, "30", NULL,
	  "seconds beyond an action's timeout before the server declares it TIMEOUT" },
	{ "retry_backoff", CFG_UINT, FIELD(workflow.retry_base_s), 1, 86400, "5", NULL,
	  "seconds before an action's first retry; doubled at each retry" },
	{ "retry_backoff_max", CFG_UINT, FIELD(workflow.retry_max_s), 1, 86400, "300", NULL,
	  "longest wait before an action's retry, in seconds" },
	{ 0 }
};

const struct cfg_key cfg_grpc_keys[] = {
	{ "enabled", CFG_BOOL, FIELD(grpc.enabled), 0, 0, "true", NULL,
	  "serve the worker API (tink-agent's gRPC WorkflowService)" },
	{ "listen", CFG_LISTEN, FIELD(grpc.listen), 0, 0, ":42113", NULL,
	  "host:port of the worker API (TCP; \":port\": every address)" },
	{ "tls_cert", CFG_PATH, FIELD(grpc.tls_cert), 0, 0, NULL, NULL,
	  "PEM certificate (chain) of the worker API; unset: h2c (no TLS)" },
	{ "tls_key", CFG_PATH, FIELD(grpc.tls_key), 0, 0, NULL, NULL,
	  "PEM private key of grpc.tls_cert" },
	{ "max_connections", CFG_UINT, FIELD(grpc.max_connections), 1, 65536, "4096", NULL,
	  "connections open at once; more are closed at accept" },
	{ "max_message", CFG_SIZE, FIELD(grpc.max_message), KIB, 64 * MIB, "1MiB", NULL,
	  "largest gRPC message accepted; larger: RESOURCE_EXHAUSTED" },
	{ "max_streams", CFG_UINT, FIELD(grpc.max_streams), 1, 1024, "16", NULL,
	  "concurrent calls per connection (SETTINGS_MAX_CONCURRENT_STREAMS)" },
	{ "long_poll", CFG_UINT, FIELD(grpc.long_poll_s), 1, 3600, "20", NULL,
	  "seconds a GetAction with nothing to do waits for work before it answers" },
	{ "idle_timeout", CFG_UINT, FIELD(grpc.idle_timeout_s), 1, 86400, "300", NULL,
	  "seconds a connection with no call is kept open" },
	{ 0 }
};

const struct cfg_key cfg_kube_keys[] = {
	{ "enabled", CFG_BOOL, FIELD(kube.enabled), 0, 0, "false", NULL,
	  "Kubernetes mode: the cluster's Tinkerbell objects are the source of truth" },
	{ "kubeconfig", CFG_PATH, FIELD(kube.kubeconfig), 0, 0, NULL, NULL,
	  "kubeconfig file of the cluster; unset: in-cluster (service account)" },
	{ "context", CFG_TEXT, FIELD(kube.context), 0, 253, NULL, NULL,
	  "context of the kubeconfig; unset: its current-context" },
	{ "namespace", CFG_TEXT, FIELD(kube.namespace_), 0, 63, NULL, NULL,
	  "the one namespace watched; unset: every namespace" },
	{ "qps", CFG_UINT, FIELD(kube.qps), 1, 10000, "5", NULL,
	  "requests per second to the API server" },
	{ "burst", CFG_UINT, FIELD(kube.burst), 1, 10000, "10", NULL,
	  "requests at once above kube.qps" },
	{ "page_size", CFG_UINT, FIELD(kube.page_size), 1, 10000, "500", NULL,
	  "objects asked for in one page of a list" },
	{ "watch_timeout", CFG_UINT, FIELD(kube.watch_timeout_s), 10, 3600, "300", NULL,
	  "seconds after which the server ends a watch (with jitter); it is resumed" },
	{ "backoff_min", CFG_UINT, FIELD(kube.backoff_min_ms), 10, 60000, "800", NULL,
	  "milliseconds before the first retry after an error; doubled each time" },
	{ "backoff_max", CFG_UINT, FIELD(kube.backoff_max_ms), 100, 600000, "30000", NULL,
	  "longest wait before a retry, in milliseconds" },
	{ "request_timeout", CFG_UINT, FIELD(kube.request_timeout_ms), 1000, 600000, "30000",
	  NULL, "milliseconds one request other than a watch may take" },
	{ "write_delay", CFG_UINT, FIELD(kube.write_delay_ms), 1, 60000, "100", NULL,
	  "milliseconds within which changes of one object are sent back as one" },
	{ "leader_election", CFG_BOOL, FIELD(kube.leader_election), 0, 0, "true", NULL,
	  "hold a Lease: only its holder runs the BMC jobs, the workflows and the worker API" },
	{ "lease_name", CFG_TEXT, FIELD(kube.lease_name), 0, 253, "ironbelld", NULL,
	  "name of the coordination.k8s.io Lease" },
	{ "lease_namespace", CFG_TEXT, FIELD(kube.lease_namespace), 0, 63, NULL, NULL,
	  "namespace of the Lease; unset: kube.namespace, the context's, or default" },
	{ "identity", CFG_TEXT, FIELD(kube.identity), 0, 253, NULL, NULL,
	  "this instance's name in the Lease; unset: the host name and the pid" },
	{ "lease_duration", CFG_UINT, FIELD(kube.lease_duration_s), 2, 3600, "15", NULL,
	  "seconds others wait after the last renewal before they take the Lease" },
	{ "renew_deadline", CFG_UINT, FIELD(kube.renew_deadline_s), 1, 3600, "10", NULL,
	  "seconds the holder tries to renew before it stops acting" },
	{ "retry_period", CFG_UINT, FIELD(kube.retry_period_s), 1, 3600, "2", NULL,
	  "seconds between two tries to take or renew the Lease" },
	{ "status_schema", CFG_TEXT, FIELD(kube.status_schema), 0, 16, "auto", NULL,
	  "Workflow status written back: auto (from the CRD), monorepo or legacy" },
	{ 0 }
};

static const struct cfg_key cfg_top_keys[] = {
	{ "log_level", CFG_LOG_LEVEL, FIELD(log_level), 0, 0, "info", NULL,
	  "least severe level logged: error, warn, info or debug" },
	{ "state_dir", CFG_PATH, FIELD(state_dir), 0, 0, "/var/lib/ironbell", NULL,
	  "directory of the database and other state" },
	{ "api", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_api_keys, "the admin API" },
	{ "http", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_http_keys, "the public HTTP listener" },
	{ "store", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_store_keys, "the database" },
	{ "dhcp", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_dhcp_keys, "the DHCP server" },
	{ "tftp", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_tftp_keys, "the TFTP server" },
	{ "ipxe", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_ipxe_keys, "iPXE binaries and scripts" },
	{ "metadata", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_metadata_keys, "instance metadata" },
	{ "syslog", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_syslog_keys, "the syslog receiver" },
	{ "bmc", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_bmc_keys, "BMC power and boot control" },
	{ "workflow", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_workflow_keys, "the workflow controller" },
	{ "grpc", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_grpc_keys, "the worker API (gRPC)" },
	{ "kube", CFG_SECTION, 0, 0, 0, 0, NULL, cfg_kube_keys, "Kubernetes mode" },
	{ 0 }
};


/* ---- loading ---- */

/* See config-internal.h. */
void cfg_errorf(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* See config-internal.h: "name:line:column: message", -EINVAL. */
int cfg_error(struct cfg_ctx *ctx, const yaml_mark_t *m, const char *fmt, ...)
{
	char msg[CFG_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cfg_errorf(ctx->err, ctx->errlen, "%s:%zu:%zu: %s", ctx->name, m->line + 1, m->column + 1,
		   msg);
	return -EINVAL;
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a sequence";
	default:
		return "a string";
	}
}

/* A plain empty, "~" or "null" scalar (YAML 1.2 core schema), or one
 * tagged !!null. */
static bool node_is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	if (n->type != YAML_SCALAR_NODE)
		return false;
	if (n->tag && strcmp((const char *)n->tag, YAML_NULL_TAG) == 0)
		return true;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (n->data.scalar.length == strlen(nulls[i]) &&
		    memcmp(n->data.scalar.value, nulls[i], n->data.scalar.length) == 0)
			return true;
	return false;
}

static const struct cfg_key *cfg_find(const struct cfg_key *keys, const char *s, size_t n)
{
	for (const struct cfg_key *k = keys; k->name; k++)
		if (strlen(k->name) == n && memcmp(k->name, s, n) == 0)
			return k;
	return NULL;
}

static int unknown_key(struct cfg_ctx *ctx, const struct cfg_key *keys, const char *prefix,
		       const yaml_node_t *key)
{
	char q[QUOTE_BUF], in[CFG_MSG_MAX / 2] = "", list[CFG_MSG_MAX / 2] = "";
	size_t nkeys = 0, o;
	for (const struct cfg_key *k = keys; k->name; k++)
		nkeys++;
	if (prefix[0])
		snprintf(in, sizeof(in), " in \"%s\"", prefix);
	if (nkeys <= CFG_LIST_MAX) {
		o = (size_t)snprintf(list, sizeof(list), " (valid keys:");
		for (const struct cfg_key *k = keys; k->name && o < sizeof(list); k++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s %s",
					      k == keys ? "" : ",", k->name);
		if (o < sizeof(list))
			snprintf(list + o, sizeof(list) - o, ")");
	}
	return cfg_error(ctx, &key->start_mark, "unknown key %s%s%s",
			 cfg_quote(q, sizeof(q), (const char *)key->data.scalar.value,
				   key->data.scalar.length),
			 in, list);
}

static int walk_mapping(struct cfg_ctx *ctx, const struct cfg_key *keys, const char *prefix,
			const yaml_node_t *map, struct ib_config *c);

/* An item of a sequence or a mapping: a scalar that is not null and holds
 * no NUL. Returns 0, or -EINVAL with the message written. */
static int walk_item(struct cfg_ctx *ctx, const struct cfg_key *k, const char *full,
		     const char *pfx, const yaml_node_t *item)
{
	const struct cfg_type_info *t = &cfg_types[k->type];
	if (item->type != YAML_SCALAR_NODE || node_is_null(item))
		return cfg_error(ctx, &item->start_mark, "%s: %sexpected %s, got %s", full, pfx,
				 t->item, item->type == YAML_SCALAR_NODE ? "null" : node_kind(item));
	if (memchr(item->data.scalar.value, '\0', item->data.scalar.length))
		return cfg_error(ctx, &item->start_mark, "%s: %sthe value holds a NUL character",
				 full, pfx);
	return 0;
}

/* A sequence row: the list starts empty and each item is added by the
 * type's parse function, which checks the bound. */
static int walk_sequence(struct cfg_ctx *ctx, const struct cfg_key *k, const char *full,
			 const yaml_node_t *val, struct ib_config *c)
{
	char msg[CFG_MSG_MAX];
	const struct cfg_type_info *t = &cfg_types[k->type];
	void *field = (char *)c + k->offset;
	if (val->type != YAML_SEQUENCE_NODE)
		return cfg_error(ctx, &val->start_mark, "%s: expected %s, got %s", full, t->expected,
				 node_kind(val));
	memset(field, 0, k->size);
	for (const yaml_node_item_t *i = val->data.sequence.items.start;
	     i < val->data.sequence.items.top; i++) {
		const yaml_node_t *item = yaml_document_get_node(ctx->doc, *i);
		if (!item)
			return cfg_error(ctx, &val->start_mark, "malformed sequence");
		int r = walk_item(ctx, k, full, "", item);
		if (r < 0)
			return r;
		r = t->parse(k, (const char *)item->data.scalar.value, item->data.scalar.length,
			     field, msg, sizeof(msg));
		if (r == -EINVAL)
			return cfg_error(ctx, &item->start_mark, "%s: %s", full, msg);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A mapping row whose keys are data (dhcp.arch): each pair goes to the
 * type's parse_pair function. */
static int walk_pairs(struct cfg_ctx *ctx, const struct cfg_key *k, const char *full,
		      const yaml_node_t *val, struct ib_config *c)
{
	char msg[CFG_MSG_MAX], pfx[QUOTE_BUF + 4], q[QUOTE_BUF];
	const struct cfg_type_info *t = &cfg_types[k->type];
	void *field = (char *)c + k->offset;
	if (val->type != YAML_MAPPING_NODE)
		return cfg_error(ctx, &val->start_mark, "%s: expected %s, got %s", full, t->expected,
				 node_kind(val));
	memset(field, 0, k->size);
	for (const yaml_node_pair_t *p = val->data.mapping.pairs.start;
	     p < val->data.mapping.pairs.top; p++) {
		const yaml_node_t *key = yaml_document_get_node(ctx->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(ctx->doc, p->value);
		bool at_key = false;
		if (!key || !v)
			return cfg_error(ctx, &val->start_mark, "malformed mapping");
		if (key->type != YAML_SCALAR_NODE)
			return cfg_error(ctx, &key->start_mark, "a key must be a string, not %s",
					 node_kind(key));
		const char *ks = (const char *)key->data.scalar.value;
		size_t kn = key->data.scalar.length;
		/* The key, unquoted when it is plain digits. */
		if (cfg_is_digits(ks, kn) && kn <= CFG_QUOTE_MAX)
			snprintf(pfx, sizeof(pfx), "%.*s: ", (int)kn, ks);
		else
			snprintf(pfx, sizeof(pfx), "%s: ", cfg_quote(q, sizeof(q), ks, kn));
		int r = walk_item(ctx, k, full, pfx, v);
		if (r < 0)
			return r;
		r = t->parse_pair(k, ks, kn, (const char *)v->data.scalar.value,
				  v->data.scalar.length, field, msg, sizeof(msg), &at_key);
		if (r == -EINVAL)
			return cfg_error(ctx, at_key ? &key->start_mark : &v->start_mark, "%s: %s",
					 full, msg);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Handles the value of one known row. */
static int walk_value(struct cfg_ctx *ctx, const struct cfg_key *k, const char *full,
		      const yaml_node_t *val, struct ib_config *c)
{
	char msg[CFG_MSG_MAX];
	const struct cfg_type_info *t = &cfg_types[k->type];
	if (node_is_null(val))
		return 0; /* keeps the default */
	if (k->type == CFG_SECTION) {
		if (val->type != YAML_MAPPING_NODE)
			return cfg_error(ctx, &val->start_mark, "%s: expected %s, got %s", full,
					 t->expected, node_kind(val));
		return walk_mapping(ctx, k->section, full, val, c);
	}
	if (t->node == CFG_NODE_SEQUENCE)
		return walk_sequence(ctx, k, full, val, c);
	if (t->node == CFG_NODE_MAPPING)
		return walk_pairs(ctx, k, full, val, c);
	if (val->type != YAML_SCALAR_NODE)
		return cfg_error(ctx, &val->start_mark, "%s: expected %s, got %s", full, t->expected,
				 node_kind(val));
	const char *s = (const char *)val->data.scalar.value;
	size_t n = val->data.scalar.length;
	if (memchr(s, '\0', n))
		return cfg_error(ctx, &val->start_mark, "%s: the value holds a NUL character", full);
	int r = t->parse(k, s, n, (char *)c + k->offset, msg, sizeof(msg));
	if (r == -EINVAL)
		return cfg_error(ctx, &val->start_mark, "%s: %s", full, msg);
	if (r < 0)
		cfg_errorf(ctx->err, ctx->errlen, "%s: %s", ctx->name, strerror(-r));
	return r;
}

static int walk_mapping(struct cfg_ctx *ctx, const struct cfg_key *keys, const char *prefix,
			const yaml_node_t *map, struct ib_config *c)
{
	const yaml_node_t *first[CFG_MAX_SECTION_KEYS] = { 0 };
	char q[QUOTE_BUF], full[256];
	for (const yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *key = yaml_document_get_node(ctx->doc, p->key);
		const yaml_node_t *val = yaml_document_get_node(ctx->doc, p->value);
		if (!key || !val)
			return cfg_error(ctx, &map->start_mark, "malformed mapping");
		if (key->type != YAML_SCALAR_NODE)
			return cfg_error(ctx, &key->start_mark, "a key must be a string, not %s",
					 node_kind(key));
		const struct cfg_key *k = cfg_find(keys, (const char *)key->data.scalar.value,
						   key->data.scalar.length);
		if (!k)
			return unknown_key(ctx, keys, prefix, key);
		size_t idx = (size_t)(k - keys);
		assert(idx < CFG_MAX_SECTION_KEYS);
		snprintf(full, sizeof(full), "%s%s%s", prefix, prefix[0] ? "." : "", k->name);
		if (first[idx])
			return cfg_error(ctx, &key->start_mark, "duplicate key %s%s%s%s (first at line %zu)",
					 cfg_quote(q, sizeof(q), k->name, strlen(k->name)),
					 prefix[0] ? " in \"" : "", prefix, prefix[0] ? "\"" : "",
					 first[idx]->start_mark.line + 1);
		first[idx] = key;
		if (ctx->nset < CFG_MAX_SET)
			ctx->set[ctx->nset++] = (struct cfg_set){ k, key->start_mark, val->start_mark };
		int r = walk_value(ctx, k, full, val, c);
		if (r < 0)
			return r;
	}
	return 0;
}

/* See config-internal.h: the first row called name that the walk
 * recorded, or the start of the file. */
const yaml_mark_t *cfg_value_mark(const struct cfg_ctx *ctx, const struct cfg_key *keys,
				  const char *name)
{
	static const yaml_mark_t start;
	const struct cfg_key *k = cfg_find(keys, name, strlen(name));
	for (size_t i = 0; k && i < ctx->nset; i++)
		if (ctx->set[i].row == k)
			return &ctx->set[i].value_mark;
	return &start;
}

/* The first byte of the character at mark m (0-based line and column in
 * characters), or -1 past the end. */
static int byte_at(const char *text, size_t len, const yaml_mark_t *m)
{
	size_t i = 0, line = 0, col = 0;
	for (; i < len && line < m->line; i++)
		if (text[i] == '\n')
			line++;
	for (; i < len && text[i] != '\n'; i++) {
		if (((unsigned char)text[i] & 0xc0) == 0x80)
			continue;
		if (col++ == m->column)
			return (unsigned char)text[i];
	}
	return -1;
}

/* Reports libyaml's own error: its problem text at its mark. */
static int yaml_failure(struct cfg_ctx *ctx, const yaml_parser_t *p, const char *text, size_t len)
{
	yaml_mark_t m = p->problem_mark;
	if (p->error == YAML_MEMORY_ERROR) {
		cfg_errorf(ctx->err, ctx->errlen, "%s: %s", ctx->name, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (p->error == YAML_READER_ERROR) {
		/* The reader gives a byte offset, not a mark. */
		m = (yaml_mark_t){ 0 };
		for (size_t i = 0; i < p->problem_offset && i < len; i++) {
			if (text[i] == '\n') {
				m.line++;
				m.column = 0;
			} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
				m.column++;
			}
		}
		if (p->problem_value != -1)
			return cfg_error(ctx, &m, "%s (#x%X)", p->problem ? p->problem : "invalid input",
					 (unsigned)p->problem_value);
		return cfg_error(ctx, &m, "%s", p->problem ? p->problem : "invalid input");
	}
	/* libyaml's words for a tab where indentation goes are cryptic. */
	const char *hint = byte_at(text, len, &m) == '\t' ? "; YAML indents with spaces, not tabs"
							   : "";
	if (p->context)
		return cfg_error(ctx, &m, "%s (%s at line %zu)%s",
				 p->problem ? p->problem : "syntax error", p->context,
				 p->context_mark.line + 1, hint);
	return cfg_error(ctx, &m, "%s%s", p->problem ? p->problem : "syntax error", hint);
}

/* Fills c (holding the defaults) from the YAML text. */
static int cfg_parse(struct cfg_ctx *ctx, const char *text, size_t len, struct ib_config *c)
{
	yaml_parser_t parser;
	yaml_document_t doc, next;
	bool have_doc = false, have_next = false;
	int r;

	if (!yaml_parser_initialize(&parser)) {
		cfg_errorf(ctx->err, ctx->errlen, "%s: %s", ctx->name, strerror(ENOMEM));
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = yaml_failure(ctx, &parser, text, len);
		goto out;
	}
	have_doc = true;
	ctx->doc = &doc;
	const yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root) {
		if (!yaml_parser_load(&parser, &next)) {
			r = yaml_failure(ctx, &parser, text, len);
			goto out;
		}
		have_next = true;
		const yaml_node_t *root2 = yaml_document_get_root_node(&next);
		if (root2) {
			r = cfg_error(ctx, &next.start_mark, "more than one YAML document");
			goto out;
		}
	}
	if (root && !node_is_null(root)) {
		if (root->type != YAML_MAPPING_NODE) {
			r = cfg_error(ctx, &root->start_mark,
				      "expected a mapping of keys at the top level, got %s",
				      node_kind(root));
			goto out;
		}
		r = walk_mapping(ctx, cfg_top_keys, "", root, c);
		if (r < 0)
			goto out;
	}
	r = cfg_run_checks(ctx, c);
out:
	ctx->doc = NULL;
	if (have_next)
		yaml_document_delete(&next);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

/* ---- the snapshot ---- */

static void cfg_free_strings(const struct cfg_key *keys, struct ib_config *c)
{
	for (const struct cfg_key *k = keys; k->name; k++) {
		if (k->type == CFG_SECTION)
			cfg_free_strings(k->section, c);
		else if (cfg_types[k->type].owns_string)
			free(*(char **)((char *)c + k->offset));
	}
}

/* See conf.h. Frees every string the table owns, then the token and path. */
void config_free(struct ib_config *c)
{
	if (!c)
		return;
	cfg_free_strings(cfg_top_keys, c);
	free(c->api.token);
	free(c->api.tls_cert_pem);
	if (c->api.tls_key_pem) {
		explicit_bzero(c->api.tls_key_pem, strlen(c->api.tls_key_pem));
		free(c->api.tls_key_pem);
	}
	free(c->ipxe.script);
	free(c->path);
	free(c);
}

static int cfg_apply_defaults(const struct cfg_key *keys, struct ib_config *c)
{
	char msg[CFG_MSG_MAX];
	for (const struct cfg_key *k = keys; k->name; k++) {
		int r;
		if (k->type == CFG_SECTION)
			r = cfg_apply_defaults(k->section, c);
		else if (cfg_types[k->type].node != CFG_NODE_SCALAR)
			/* Starts empty (calloc); the table says so. */
			r = k->def && strcmp(k->def, cfg_types[k->type].node == CFG_NODE_SEQUENCE
							     ? "[]" : "{}") == 0
				    ? 0 : -EINVAL;
		else if (k->def)
			r = cfg_types[k->type].parse(k, k->def, strlen(k->def), (char *)c + k->offset,
						     msg, sizeof(msg));
		else
			r = 0;
		/* A default that its own type refuses is a bug in the table. */
		assert(r != -EINVAL);
		if (r < 0)
			return r;
	}
	return 0;
}

/* See conf.h: every row's default, parsed as if it were in the file. */
struct ib_config *config_new_default(void)
{
	struct ib_config *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (cfg_apply_defaults(cfg_top_keys, c) < 0) {
		config_free(c);
		return NULL;
	}
	return c;
}

/* See conf.h. The snapshot starts as the defaults; the file overrides. */
int config_load_string(const char *name, const char *text, size_t len, struct ib_config **ret,
		       char *err, size_t errlen)
{
	struct cfg_ctx *ctx = NULL;
	struct ib_config *c = NULL;
	int r;

	if (!name)
		name = "<string>";
	if (len > CONFIG_MAX_SIZE) {
		cfg_errorf(err, errlen, "%s: file is larger than %d bytes", name, CONFIG_MAX_SIZE);
		return -EFBIG;
	}
	ctx = calloc(1, sizeof(*ctx));
	c = config_new_default();
	if (!ctx || !c)
		goto nomem;
	c->path = strdup(name);
	if (!c->path)
		goto nomem;
	ctx->name = name;
	ctx->err = err;
	ctx->errlen = errlen;
	r = cfg_parse(ctx, text ? text : "", text ? len : 0, c);
	if (r < 0)
		goto out;
	*ret = c;
	c = NULL;
	r = 0;
	goto out;
nomem:
	cfg_errorf(err, errlen, "%s: %s", name, strerror(ENOMEM));
	r = -ENOMEM;
out:
	config_free(c);
	free(ctx);
	return r;
}

/* See conf.h. Reads at most CONFIG_MAX_SIZE bytes, then as from memory. */
int config_load(const char *path, struct ib_config **ret, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	if (!path) {
		cfg_errorf(err, errlen, "no configuration file named");
		return -EINVAL;
	}
	r = cfg_read_file(path, CONFIG_MAX_SIZE, false, &text, &len);
	if (r == -EFBIG) {
		cfg_errorf(err, errlen, "%s: file is larger than %d bytes", path, CONFIG_MAX_SIZE);
		return r;
	}
	if (r < 0) {
		cfg_errorf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		return r;
	}
	r = config_load_string(path, text, len, ret, err, errlen);
	free(text);
	return r;
}
