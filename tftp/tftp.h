/* tftp — the part's public header: the read-only TFTP server thread
 * (tftp/server.c) and its settings (struct tftp_settings), that
 * hands firmware PXE clients their iPXE binary from a root directory
 * (the daemon's ipxe.binary_dir).
 *
 * The listening socket and the root directory are opened in
 * tftp_server_new(), so that a busy port or a missing directory stops the
 * daemon at start with a clear message; tftp_server_start() runs one
 * thread until tftp_server_free().
 */
#pragma once

#include <stddef.h>

struct tftp_server;

#define TFTP_NETASCII_MAX (16u << 20) /* a file sent in netascii is read whole for its size */

/* What the server is configured with. The daemon fills it from the tftp:
 * section of its configuration (and ipxe.binary_dir); a test fills it by
 * hand. */
struct tftp_settings {
	const char *root;        /* the directory served */
	const char *listen;      /* "host:port", IPv4 */
	unsigned max_transfers;  /* transfers at once; a request past them is refused */
	unsigned blksize_max;    /* the largest blksize granted (RFC 2348), also
				  * clamped to the path MTU */
	unsigned windowsize_max; /* the largest windowsize granted (RFC 7440) */
	unsigned timeout;        /* seconds before the first retransmission */
	unsigned retries;        /* retransmissions before a transfer is given up */
};

/* Binds settings->listen and opens settings->root, and registers the
 * metrics. settings is copied, its strings too: the caller may free them
 * once this returns. 0, or a negative errno with a message in err. */
int tftp_server_new(const struct tftp_settings *settings, struct tftp_server **ret, char *err,
		    size_t errlen);
/* Starts the thread. 0 or a negative errno (err set). */
int tftp_server_start(struct tftp_server *srv, char *err, size_t errlen);
/* Stops the thread (transfers in progress are abandoned), closes every
 * socket and file, frees. Accepts NULL. */
void tftp_server_free(struct tftp_server *srv);
