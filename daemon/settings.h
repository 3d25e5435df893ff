/* settings — the configuration snapshot (daemon/config/conf.h) turned into the
 * settings of each part: struct dhcp_settings, tftp_settings,
 * syslog_settings, ipxe_settings, md_settings, bmc_settings and wf_settings, each declared in its
 * part's public header. Daemon-private: only daemon code includes this. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct ib_config;
struct dhcp_settings;
struct tftp_settings;
struct syslog_settings;
struct ipxe_settings;
struct md_settings;
struct bmc_settings;
struct wf_settings;
struct wf_grpc_settings;
struct kube_settings;

#define SETTINGS_URL_MAX 512 /* a base URL of the public listener */
#define SETTINGS_GRPC_MAX 64 /* "a.b.c.d:port" */
#define SETTINGS_IPV4_MAX 16 /* "a.b.c.d" */

/* The dhcp: section of c (and the port of http.listen) as the DHCP
 * server's settings: every fallback that does not depend on the
 * interface a request comes in on is applied, the others are left as the
 * gaps struct dhcp_settings describes. Nothing in *ret points into c.
 * 0, or -E2BIG (more architectures than the policy's table holds),
 * -ENAMETOOLONG (dhcp.http_base_url too long for the boot URLs) with a
 * message in err and *ret unchanged. */
int settings_dhcp(const struct ib_config *c, struct dhcp_settings *ret, char *err, size_t errlen);

/* The tftp: section of c, with ipxe.binary_dir as the root. The strings
 * point into c (tftp_server_new copies them). */
void settings_tftp(const struct ib_config *c, struct tftp_settings *ret);

/* The syslog: section of c. The string points into c (syslog_server_new
 * copies it). */
void settings_syslog(const struct ib_config *c, struct syslog_settings *ret);

/* The bmc: section of c, every field set (nothing left to
 * bmc_settings_default()). ca_file points into c (bmc_server_new copies
 * it). */
void settings_bmc(const struct ib_config *c, struct bmc_settings *ret);

/* The workflow: section of c, every field set (nothing left to
 * wf_settings_default()). Nothing in *ret points into c. */
void settings_workflow(const struct ib_config *c, struct wf_settings *ret);
/* The grpc: section of c (the worker API). The strings point into c
 * (wf_grpc_new copies them). */
void settings_grpc(const struct ib_config *c, struct wf_grpc_settings *ret);
/* The kube: section of c. The strings point into c (kube_new copies
 * them); leading and userdata are left for the caller. */
void settings_kube(const struct ib_config *c, struct kube_settings *ret);

/* The metadata: section of c. Points into c: valid while c is. */
void settings_metadata(const struct ib_config *c, struct md_settings *ret);

/* The base URL of the public listener for a request whose public address
 * (host order; 0: unknown) is pub: dhcp.http_base_url, else
 * http://<pub>:<port of http.listen>, without a trailing slash. Writes ""
 * when neither is known. */
void settings_base_url(const struct ib_config *c, uint32_t pub, char *out, size_t outlen);

/* The ipxe: section of c as the script's settings, for a request whose
 * public address is pub (0: unknown) and base URL is base (borrowed).
 * ipxe.grpc_authority defaults to <pub>:IPXE_GRPC_PORT, written into grpc;
 * ipxe.syslog_host to dhcp.syslog_address, else pub, written into syslog.
 * *ret points into c, base, grpc and syslog: valid while they are. */
void settings_ipxe(const struct ib_config *c, uint32_t pub, const char *base,
		   char grpc[SETTINGS_GRPC_MAX], char syslog[SETTINGS_IPV4_MAX],
		   struct ipxe_settings *ret);
