/* files — the iPXE binaries (ipxe.binary_dir) and the OSIE files
 * (ipxe.osie_dir) of the public listener.
 *
 * DESIGN: files are opened per request under a directory fd
 * (common/file.h): the route parser already refused "..", hidden names and
 * escapes, the kernel refuses any symlink on the way, and a last component
 * that is a link is followed only when root or the daemon's user owns it
 * (Debian's /usr/lib/ipxe/ipxe.efi is a link to /boot/ipxe.efi), so a
 * request never reads outside ipxe.binary_dir or ipxe.osie_dir except
 * where the operator linked it. A file is sent with sendfile by
 * libmicrohttpd (a response from the fd), and a Range of one span gets
 * 206. Metrics: ironbell_ipxe_files_total{route,outcome}.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/bootfile.h"
#include "common/common.h"
#include "common/file.h"
#include "daemon/public/public-internal.h"
#include "ipxe/ipxe.h"

static void count_file(const char *route, const char *outcome)
{
	char labels[96];
	snprintf(labels, sizeof(labels), "route=\"%s\",outcome=\"%s\"", route, outcome);
	metric_inc(metrics_counter_cached("ironbell_ipxe_files_total",
					  "Binary and OSIE file requests, by route and outcome (ok, "
					  "partial, not_modified, not_found, range_not_satisfiable, "
					  "error).",
					  labels),
		   1);
}

/* Opens name under dir (common/file.h: never outside it; a last component
 * that is a link is followed only when root or we own it). */
static int open_beneath(const char *dir, const char *name, int *ret_fd, struct stat *st)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int e = file_open_beneath(dfd, name, ret_fd, st);
	close(dfd);
	return e;
}

int public_serve_file(struct MHD_Connection *c, const char *dir, const struct ipxe_route *route,
		      const char *client, struct public_reply *rep)
{
	const char *what = route->type == IPXE_ROUTE_BINARY ? "binary" : "osie";
	const char *name = route->name, *alias = NULL;
	struct stat st;
	uint64_t off = 0, len;
	int fd = -1, e, rr;
	char crange[96];

	if (!dir) {
		count_file(what, "not_found");
		return public_reply_text(404, "no OSIE directory is configured (ipxe.osie_dir)\n", rep);
	}
	e = open_beneath(dir, name, &fd, &st);
	if (e == -ENOENT && route->type == IPXE_ROUTE_BINARY && (alias = bootfile_alias(name))) {
		e = open_beneath(dir, alias, &fd, &st);
		if (e == 0)
			name = alias;
	}
	if (e < 0) {
		if (public_log_allowed(PUBLIC_LOG_FILE, "ipxe"))
			log_warn("ipxe", "%s %s asked for by %s is not served: %s (%s/%s)", what,
				 route->name, client,
				 e == -ENOENT ? "no such file" :
				 e == -EPERM  ? "a symbolic link root did not make, or outside the "
						"directory" :
				 e == -EISDIR ? "not a regular file" :
						strerror(-e),
				 dir, route->name);
		count_file(what, e == -ENOENT || e == -EPERM || e == -EISDIR ? "not_found" : "error");
		return public_reply_text(e == -ENOENT || e == -EPERM || e == -EISDIR ? 404 : 500,
				  "no such file\n", rep);
	}
	const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
	const char *if_range =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_RANGE);
	uint64_t size = (uint64_t)st.st_size;
	rr = range && !if_range ? ipxe_range_parse(range, strlen(range), size, &off, &len) : 0;
	if (rr == -ERANGE) {
		close(fd);
		e = public_reply_text(416, "range not satisfiable\n", rep);
		if (e == 0) {
			snprintf(crange, sizeof(crange), "bytes */%llu", (unsigned long long)size);
			MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_RANGE, crange);
		}
		count_file(what, "range_not_satisfiable");
		return e;
	}
	if (rr == 0) {
		off = 0;
		len = size;
	}
	rep->resp = MHD_create_response_from_fd_at_offset64(len, fd, (int64_t)off);
	if (!rep->resp) {
		close(fd);
		return -ENOMEM;
	}
	rep->code = rr == 1 ? 206 : 200;
	MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_TYPE, ipxe_content_type(name));
	MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
	if (rr == 1) {
		snprintf(crange, sizeof(crange), "bytes %llu-%llu/%llu", (unsigned long long)off,
			 (unsigned long long)(off + len - 1), (unsigned long long)size);
		MHD_add_response_header(rep->resp, MHD_HTTP_HEADER_CONTENT_RANGE, crange);
		log_debug("ipxe", "%s %s: bytes %llu-%llu to %s", what, name,
			  (unsigned long long)off, (unsigned long long)(off + len - 1), client);
	} else {
		log_info("ipxe", "%s served: %s (%llu bytes) to %s", what, name,
			 (unsigned long long)size, client);
	}
	count_file(what, rr == 1 ? "partial" : "ok");
	return 0;
}
