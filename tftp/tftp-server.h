/* tftp-server — the read-only TFTP server thread (tftp/server.c) that
 * hands firmware PXE clients their iPXE binary from ipxe.binary_dir.
 *
 * The listening socket and the root directory are opened in
 * tftp_server_new(), so that a busy port or a missing directory stops the
 * daemon at start with a clear message; tftp_server_start() runs one
 * thread until tftp_server_free().
 */
#pragma once

#include <stddef.h>

struct ib_config;
struct tftp_server;

#define TFTP_NETASCII_MAX (16u << 20) /* a file sent in netascii is read whole for its size */

/* Binds tftp.listen and opens ipxe.binary_dir from cfg (which must
 * outlive the server: the caller keeps the snapshot it passes), and
 * registers the metrics. 0, or a negative errno with a message in err. */
int tftp_server_new(const struct ib_config *cfg, struct tftp_server **ret, char *err,
		    size_t errlen);
/* Starts the thread. 0 or a negative errno (err set). */
int tftp_server_start(struct tftp_server *srv, char *err, size_t errlen);
/* Stops the thread (transfers in progress are abandoned), closes every
 * socket and file, frees. Accepts NULL. */
void tftp_server_free(struct tftp_server *srv);
