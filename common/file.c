/* file — see file.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/file.h"

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static int openat2_beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

static int regular(int fd, struct stat *st, int *ret_fd)
{
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EISDIR;
	}
	*ret_fd = fd;
	return 0;
}

/* The last component is a link: follow it when root or we own it. */
static int via_trusted_link(int dirfd, const char *rel, int *ret_fd, struct stat *st)
{
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	int pfd = dirfd, fd, e;
	struct stat lst;

	if (slash) {
		char parent[4096];
		size_t n = (size_t)(slash - rel);
		if (n == 0 || n >= sizeof(parent))
			return -EPERM;
		memcpy(parent, rel, n);
		parent[n] = '\0';
		pfd = openat2_beneath(dirfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			return pfd == -ELOOP || pfd == -EXDEV ? -EPERM : pfd;
	}
	e = fstatat(pfd, base, &lst, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (e == 0 && (!S_ISLNK(lst.st_mode) || (lst.st_uid != 0 && lst.st_uid != geteuid())))
		e = -EPERM; /* not a link (a link in the middle), or not the operator's */
	if (e == 0) {
		fd = openat(pfd, base, OPEN_FLAGS);
		e = fd < 0 ? -errno : regular(fd, st, ret_fd);
	}
	if (pfd != dirfd)
		close(pfd);
	return e;
}

int file_open_beneath(int dirfd, const char *rel, int *ret_fd, struct stat *st)
{
	int fd = openat2_beneath(dirfd, rel, OPEN_FLAGS);
	if (fd == -ELOOP)
		return via_trusted_link(dirfd, rel, ret_fd, st);
	if (fd == -EXDEV)
		return -EPERM;
	if (fd < 0)
		return fd;
	return regular(fd, st, ret_fd);
}
