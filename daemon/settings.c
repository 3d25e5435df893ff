/* settings — the configuration snapshot turned into each part's settings.
 *
 * DESIGN: the parts (dhcp/, tftp/, syslog/, ipxe/, metadata/, bmc/, workflow/) know nothing
 * of ironbell.yaml: each declares, in its own public header, the settings
 * it needs, and depends on common/ and store/ only, so that a test starts
 * a server from settings it fills by hand. This file is the one place
 * where the daemon's struct ib_config becomes those settings: main.c
 * calls it for the servers at start, public.c for the iPXE script and
 * metadata of each request (the public address of a request is only
 * known then). Fallbacks between keys are applied here when they depend
 * on the configuration alone; DHCP's that depend on the interface a
 * request comes in on are left to the server (dhcp_settings_policy). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bmc/bmc.h"
#include "common/num.h"
#include "daemon/config/conf.h"
#include "daemon/settings.h"
#include "dhcp/dhcp.h"
#include "ipxe/ipxe.h"
#include "kube/kube.h"
#include "metadata/metadata.h"
#include "syslog/syslog.h"
#include "tftp/tftp.h"
#include "workflow/workflow.h"

_Static_assert((int)CONFIG_DHCP_RESERVATION == (int)DHCP_MODE_RESERVATION &&
		       (int)CONFIG_DHCP_PROXY == (int)DHCP_MODE_PROXY &&
		       (int)CONFIG_DHCP_AUTO_PROXY == (int)DHCP_MODE_AUTO_PROXY,
	       "config and policy DHCP modes must match");
_Static_assert(CONFIG_BINARY_MAX <= DHCP_HOST_BINARY_MAX, "binary names must fit the policy");
_Static_assert(CONFIG_DHCP_MAX_INTERFACES <= DHCP_SETTINGS_MAX_INTERFACES &&
		       CONFIG_IFNAME_MAX <= DHCP_IFNAME_MAX,
	       "dhcp.interfaces must fit the server's settings");

/* The port of a "host:port", "[v6]:port" or ":port" listen address, or 0. */
static unsigned listen_port(const char *listen)
{
	const char *colon = listen ? strrchr(listen, ':') : NULL;
	uint64_t port;
	if (!colon || num_parse_u64_str(colon + 1, 65535, &port) < 0)
		return 0;
	return (unsigned)port;
}

static void ip_text(uint32_t ip, char out[SETTINGS_IPV4_MAX])
{
	snprintf(out, SETTINGS_IPV4_MAX, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255,
		 ip & 255);
}

int settings_dhcp(const struct ib_config *c, struct dhcp_settings *ret, char *err, size_t errlen)
{
	struct dhcp_settings s = { .ninterfaces = c->dhcp.interfaces.n };
	struct dhcp_policy_config *p = &s.policy;
	/* 0: the address of the interface a request comes in on. */
	uint32_t server = c->dhcp.server_address;
	uint32_t public_ = c->dhcp.public_address ? c->dhcp.public_address : server;
	unsigned port = listen_port(c->http.listen);
	char base[SETTINGS_URL_MAX], ip[SETTINGS_IPV4_MAX];

	for (size_t i = 0; i < s.ninterfaces; i++)
		snprintf(s.interfaces[i], sizeof(s.interfaces[i]), "%s",
			 c->dhcp.interfaces.name[i]);
	s.subnet_check = c->dhcp.subnet_check;
	s.http_port = (uint16_t)(port ? port : DHCP_DEFAULT_HTTP_PORT);
	dhcp_policy_config_default(p, public_);
	p->mode = (enum dhcp_mode)c->dhcp.mode;
	p->server_id = server;
	p->http_ip = public_;
	p->tftp_ip = c->dhcp.tftp_address ? c->dhcp.tftp_address : public_;
	p->syslog_ip = c->dhcp.syslog_address;
	p->lease_time = c->dhcp.lease_time;
	p->lease_reuse = c->dhcp.lease_reuse;
	for (size_t i = 0; i < c->dhcp.arch.n; i++)
		if (dhcp_policy_set_arch(p, c->dhcp.arch.e[i].code, c->dhcp.arch.e[i].binary) < 0) {
			snprintf(err, errlen, "dhcp.arch: more than %d architectures in all",
				 DHCP_POLICY_MAX_ARCHES);
			return -E2BIG;
		}
	if (c->dhcp.http_base_url) {
		snprintf(base, sizeof(base), "%s", c->dhcp.http_base_url);
	} else if (public_) {
		ip_text(public_, ip);
		snprintf(base, sizeof(base), "http://%s:%u", ip, s.http_port);
	} else {
		base[0] = '\0'; /* made per interface */
	}
	if (!base[0]) {
		p->script_url[0] = p->binary_url[0] = '\0';
	} else if (dhcp_policy_set_base_url(p, base) < 0) {
		snprintf(err, errlen,
			 "dhcp.http_base_url: too long for the boot URLs made from it");
		return -ENAMETOOLONG;
	}
	*ret = s;
	return 0;
}

void settings_tftp(const struct ib_config *c, struct tftp_settings *ret)
{
	*ret = (struct tftp_settings){
		.root = c->ipxe.binary_dir,
		.listen = c->tftp.listen,
		.max_transfers = c->tftp.max_transfers,
		.blksize_max = c->tftp.blksize_max,
		.windowsize_max = c->tftp.windowsize_max,
		.timeout = c->tftp.timeout,
		.retries = c->tftp.retries,
	};
}

void settings_syslog(const struct ib_config *c, struct syslog_settings *ret)
{
	*ret = (struct syslog_settings){
		.listen = c->syslog.listen,
		.rate = c->syslog.rate,
		.burst = c->syslog.burst,
		.max_message = c->syslog.max_message,
	};
}

void settings_bmc(const struct ib_config *c, struct bmc_settings *ret)
{
	*ret = (struct bmc_settings){
		.cipher_suite = c->bmc.ipmi.cipher_suite,
		.timeout_ms = c->bmc.ipmi.timeout_ms,
		.retries = c->bmc.ipmi.retries,
		.max_sessions = c->bmc.ipmi.max_sessions,
		.http_timeout_ms = c->bmc.redfish.timeout_ms,
		.max_connections = c->bmc.redfish.max_connections,
		.ca_file = c->bmc.redfish.ca_file,
		.poll_interval_s = c->bmc.poll_interval_s,
		.task_timeout_s = c->bmc.task_timeout_s,
		.max_jobs = c->bmc.max_jobs,
		.verify_interval_ms = c->bmc.verify_interval_ms,
	};
}

void settings_workflow(const struct ib_config *c, struct wf_settings *ret)
{
	*ret = (struct wf_settings){
		.resync_s = c->workflow.resync_s,
		.default_action_timeout_s = c->workflow.default_action_timeout_s,
		.action_grace_s = c->workflow.action_grace_s,
		.retry_base_s = c->workflow.retry_base_s,
		.retry_max_s = c->workflow.retry_max_s,
	};
}

void settings_metadata(const struct ib_config *c, struct md_settings *ret)
{
	*ret = (struct md_settings){ .trusted_proxies = &c->metadata.trusted_proxies };
}

void settings_base_url(const struct ib_config *c, uint32_t pub, char *out, size_t outlen)
{
	char ip[SETTINGS_IPV4_MAX];
	size_t n;
	if (c->dhcp.http_base_url) {
		snprintf(out, outlen, "%s", c->dhcp.http_base_url);
	} else if (pub) {
		ip_text(pub, ip);
		snprintf(out, outlen, "http://%s:%u", ip, listen_port(c->http.listen));
	} else {
		out[0] = '\0';
	}
	n = strlen(out);
	while (n && out[n - 1] == '/')
		out[--n] = '\0';
}

void settings_ipxe(const struct ib_config *c, uint32_t pub, const char *base,
		   char grpc[SETTINGS_GRPC_MAX], char syslog[SETTINGS_IPV4_MAX],
		   struct ipxe_settings *ret)
{
	*ret = (struct ipxe_settings){
		.template_ = c->ipxe.script,
		.template_len = c->ipxe.script_len,
		.base_url = base,
		.osie_url = c->ipxe.osie_url,
		.kernel = c->ipxe.kernel,
		.initrd = c->ipxe.initrd,
		.kernel_args = c->ipxe.kernel_args,
		.grpc_authority = c->ipxe.grpc_authority,
		.syslog_host = c->ipxe.syslog_host,
		.tls = c->ipxe.tinkerbell_tls,
		.insecure_tls = c->ipxe.tinkerbell_insecure_tls,
		.retries = c->ipxe.retries,
	};
	if (!ret->grpc_authority && pub) {
		char ip[SETTINGS_IPV4_MAX];
		ip_text(pub, ip);
		snprintf(grpc, SETTINGS_GRPC_MAX, "%s:%d", ip, IPXE_GRPC_PORT);
		ret->grpc_authority = grpc;
	}
	if (!ret->syslog_host && (c->dhcp.syslog_address || pub)) {
		ip_text(c->dhcp.syslog_address ? c->dhcp.syslog_address : pub, syslog);
		ret->syslog_host = syslog;
	}
}

void settings_grpc(const struct ib_config *c, struct wf_grpc_settings *ret)
{
	/* Zero fields are the part's defaults (wf_grpc_new()). */
	*ret = (struct wf_grpc_settings){
		.listen = c->grpc.listen,
		.tls_cert = c->grpc.tls_cert,
		.tls_key = c->grpc.tls_key,
		.max_connections = c->grpc.max_connections,
		.max_message = (unsigned)c->grpc.max_message,
		.max_streams = c->grpc.max_streams,
		.long_poll_s = c->grpc.long_poll_s,
		.idle_timeout_s = c->grpc.idle_timeout_s,
		.default_action_timeout_s = c->workflow.default_action_timeout_s,
		.action_grace_s = c->workflow.action_grace_s,
		.retry_base_s = c->workflow.retry_base_s,
		.retry_max_s = c->workflow.retry_max_s,
	};
}

void settings_kube(const struct ib_config *c, struct kube_settings *ret)
{
	const char *sch = c->kube.status_schema ? c->kube.status_schema : "auto";
	*ret = (struct kube_settings){
		.kubeconfig = c->kube.kubeconfig,
		.context = c->kube.context,
		.namespace_ = c->kube.namespace_,
		.qps = c->kube.qps,
		.burst = c->kube.burst,
		.page_size = c->kube.page_size,
		.watch_timeout_s = c->kube.watch_timeout_s,
		.backoff_min_ms = c->kube.backoff_min_ms,
		.backoff_max_ms = c->kube.backoff_max_ms,
		.request_timeout_ms = c->kube.request_timeout_ms,
		.write_delay_ms = c->kube.write_delay_ms,
		.no_leader_election = !c->kube.leader_election,
		.lease_namespace = c->kube.lease_namespace,
		.lease_name = c->kube.lease_name,
		.identity = c->kube.identity,
		.lease_duration_s = c->kube.lease_duration_s,
		.renew_deadline_s = c->kube.renew_deadline_s,
		.retry_period_s = c->kube.retry_period_s,
		.status_schema = strcmp(sch, "legacy") == 0	 ? KUBE_STATUS_LEGACY :
				 strcmp(sch, "monorepo") == 0 ? KUBE_STATUS_MONOREPO :
								KUBE_STATUS_AUTO,
	};
}
