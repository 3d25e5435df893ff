/* files — which file a TFTP request names, and opening it safely.
 *
 * DESIGN: the requested name is cleaned first (tftp_path_clean, pure):
 * leading '/' are dropped, since firmware often asks for "/ipxe.efi" and
 * every name is relative to the root anyway; a leading "<mac>/" component
 * is dropped as Smee does (iPXE URLs and some DHCP answers carry it);
 * backslashes (Windows-style clients) are not separators here and are
 * refused, as are empty, "." and ".." components. Then the file is opened
 * beneath the root directory's fd (common/file.h: openat2 with
 * RESOLVE_BENEATH, no symlink on the way; a last component that is a link
 * is followed only when root or the daemon's user owns it, as Debian's
 * /usr/lib/ipxe/ipxe.efi -> /boot/ipxe.efi is). Only regular files are
 * served.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bootfile.h"
#include "common/file.h"
#include "common/mac.h"
#include "tftp/tftp-internal.h"

int tftp_path_clean(const char *name, char *out, size_t outlen)
{
	const char *p = name;
	while (*p == '/')
		p++;
	const char *slash = strchr(p, '/');
	uint8_t mac[6];
	if (slash && mac_parse(p, (size_t)(slash - p), MAC_COLON | MAC_DASH, mac) == 0)
		p = slash + 1;
	size_t n = strlen(p);
	if (n == 0 || n >= outlen || p[n - 1] == '/')
		return -EINVAL;
	for (const char *c = p; *c;) {
		const char *e = strchr(c, '/');
		size_t cn = e ? (size_t)(e - c) : strlen(c);
		if (cn == 0 || (cn == 1 && c[0] == '.') || (cn == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
		for (size_t i = 0; i < cn; i++)
			if (c[i] == '\\')
				return -EINVAL;
		c += cn + (e ? 1 : 0);
	}
	memcpy(out, p, n + 1);
	return 0;
}

static int open_one(int root_fd, const char *rel, int *ret_fd, struct stat *st)
{
	return file_open_beneath(root_fd, rel, ret_fd, st);
}

int tftp_open(int root_fd, const char *clean, int *ret_fd, struct stat *st, const char **ret_name)
{
	const char *alias = NULL;
	int e = open_one(root_fd, clean, ret_fd, st);
	if (e == -ENOENT && (alias = bootfile_alias(clean)) != NULL) {
		e = open_one(root_fd, alias, ret_fd, st);
		if (e == 0) {
			*ret_name = alias;
			return 0;
		}
		e = -ENOENT;
	}
	if (e == 0)
		*ret_name = clean;
	return e;
}
