/* privilege — ironbelld gives up every capability once its sockets are
 * bound (daemon/privilege.c). Included by daemon/main.c only. */
#pragma once

#include <stddef.h>

/* Drops every capability of every thread of the process: the effective,
 * permitted, inheritable and ambient sets are emptied, and so is the
 * bounding set when the process may change it (CAP_SETPCAP, as when root
 * starts it by hand; under systemd the unit's CapabilityBoundingSet
 * already bounds it). Then sets no_new_privs, so that nothing the process
 * could exec gains a privilege back. Last, checks that each of paths (a
 * NULL-terminated list, at most 16; NULL: none), when it exists, is still
 * readable and writable. Call it once, after every socket is bound and
 * before any thread that is not created by this program's own code
 * (libmicrohttpd's) exists. Returns 0, or a negative errno with a message
 * in err (errlen bytes): the daemon must not go on then. */
int privilege_drop(const char *const *paths, char *err, size_t errlen);
