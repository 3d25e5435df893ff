/* file — opening a file that a network request names, beneath a
 * directory. */
#pragma once

#include <sys/stat.h>

/* Opens rel (a relative path, already checked for "..", empty and "."
 * components by the caller's parser) for reading beneath the directory
 * dirfd, never outside it: openat2 with RESOLVE_BENEATH and no symlinks
 * on the way. The last component alone may be a symbolic link when that
 * link belongs to root or to this process's user, that is, when the
 * operator or a package put it there (Debian's ipxe package installs
 * /usr/lib/ipxe/ipxe.efi as a link to /boot/ipxe.efi); then it is
 * followed wherever it points. A link owned by anyone else is refused,
 * as a link in the middle of the path always is. Only regular files are
 * opened.
 *
 * Returns 0 with the fd (O_RDONLY | O_CLOEXEC | O_NONBLOCK) and its stat;
 * -ENOENT; -EPERM for a refused link or an escape; -EISDIR for something
 * that is not a regular file; another negative errno. */
int file_open_beneath(int dirfd, const char *rel, int *ret_fd, struct stat *st);
