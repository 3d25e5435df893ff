/* ipxe-internal — what the files of ipxe/ share. Included only inside
 * ipxe/ and by its unit tests. */
#pragma once

#include "ipxe/ipxe.h"

/* The placeholders, in the order of ipxe_template_vars[]. */
enum ipxe_var {
	IPXE_VAR_NAME,
	IPXE_VAR_NAMESPACE,
	IPXE_VAR_HW_ADDR,
	IPXE_VAR_WORKER_ID,
	IPXE_VAR_ARCH,
	IPXE_VAR_HOSTNAME,
	IPXE_VAR_FACILITY,
	IPXE_VAR_VLAN_ID,
	IPXE_VAR_BASE_URL,
	IPXE_VAR_OSIE_URL,
	IPXE_VAR_KERNEL,
	IPXE_VAR_INITRD,
	IPXE_VAR_KERNEL_URL,
	IPXE_VAR_INITRD_URL,
	IPXE_VAR_CMDLINE,
	IPXE_VAR_KERNEL_ARGS,
	IPXE_VAR_GRPC_AUTHORITY,
	IPXE_VAR_SYSLOG_HOST,
	IPXE_VAR_TLS,
	IPXE_VAR_INSECURE_TLS,
	IPXE_VAR_RETRIES,
	IPXE_VAR_MAX
};

/* The variable named s (n bytes), or -1. */
int ipxe_var_lookup(const char *s, size_t n);

/* Renders template t (len bytes, already checked) with vals (NULL:
 * empty) into out: 0, or -E2BIG when out is full. */
int ipxe_template_render(const char *t, size_t len, const char *const vals[IPXE_VAR_MAX],
			 struct buf *out);

/* True when every byte of s (n bytes) may stand in an iPXE command line
 * token: printable ASCII without space, '$', quotes or backslash. */
bool ipxe_token_ok(const char *s, size_t n);
