/* tftp-internal — what the files of tftp/ share. Included only inside
 * tftp/ and by its unit tests. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "tftp/tftp.h"

/* Cleans a requested name into out (outlen bytes): leading '/' and a
 * leading "<mac>/" component dropped; refuses (-EINVAL) an empty name, an
 * empty, "." or ".." component, or a backslash. */
int tftp_path_clean(const char *name, char *out, size_t outlen);
/* Opens the cleaned name beneath root_fd (its alias, common/bootfile.h,
 * when it is missing): 0 with the fd, its stat and the name opened (clean
 * or a static alias); -ENOENT, -EPERM (a symlink, or an escape), -EISDIR
 * (not a regular file), or another negative errno. */
int tftp_open(int root_fd, const char *clean, int *ret_fd, struct stat *st,
	      const char **ret_name);
