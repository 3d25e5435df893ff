/* privilege — the capabilities ironbelld gives up after start-up.
 *
 * DESIGN: ironbelld needs privileges only to create its sockets:
 * CAP_NET_BIND_SERVICE for the ports below 1024 (DHCP 67 and 4011, TFTP
 * 69, syslog 514, HTTP 80 when configured), CAP_NET_RAW for DHCP's
 * SO_BINDTODEVICE and its packet socket (dhcp/sock.c). Both are used once,
 * while the sockets are made; nothing later opens a socket that needs one:
 * a TFTP transfer's socket is bound to port 0, sending on the packet socket
 * and sendmsg with IP_PKTINFO need no capability, and a reload (SIGHUP)
 * re-reads files but binds nothing (the listeners' keys need a restart).
 * CAP_NET_BROADCAST is not needed at all: SO_BROADCAST is unprivileged.
 * So once daemon/main.c has bound everything, privilege_drop() empties
 * every capability set, whoever started the daemon:
 *   - under systemd (etc/ironbelld.service), the process runs as ironbell
 *     with the three network capabilities ambient, bounded by
 *     CapabilityBoundingSet; it empties its effective, permitted,
 *     inheritable and ambient sets (it may not change the bounding set,
 *     which lacks CAP_SETPCAP, and need not: NoNewPrivileges=yes);
 *   - run as root by hand, it holds every capability: it empties the
 *     bounding set too (it has CAP_SETPCAP until the end), then the rest.
 * Capabilities belong to each thread, not to the process, and the store's
 * threads already run when the sockets are bound. libcap applies each
 * change to every thread through libpsx (linked into ironbelld with
 * -Wl,-wrap,pthread_create, so that every thread this program creates is
 * known to it); libmicrohttpd's threads, which libpsx cannot see, are all
 * started after the drop and inherit the empty sets. The result is checked
 * for every thread in /proc/self/task, and a thread that still holds
 * something stops the start. Then no_new_privs: nothing the process could
 * exec regains a privilege. Last, the state directory and the database,
 * which every new store reader opens again, must still be usable: a root
 * started on another user's directory stops here, with the reason, rather
 * than failing every request later.
 *
 * A root started by hand stays uid 0, without capabilities: it can still
 * read and write what root owns by its mode bits, but not another user's
 * files (no CAP_DAC_OVERRIDE). ironbelld(8) says so. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "daemon/privilege.h"

#define PRIV_MAX_TASKS 4096 /* threads checked in /proc/self/task */

/* ThreadSanitizer's runtime has a thread of its own, made before main()'s
 * threads and unknown to libpsx: in such a build a thread left holding
 * capabilities is only warned about. */
#if defined(__SANITIZE_THREAD__)
#define PRIV_CHECK_STRICT false
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PRIV_CHECK_STRICT false
#endif
#endif
#ifndef PRIV_CHECK_STRICT
#define PRIV_CHECK_STRICT true
#endif
#define PRIV_STATUS_MAX 8192 /* bytes of a /proc/self/task/N/status read */
#define PRIV_MAX_PATHS 16    /* paths privilege_drop() checks */

/* Empties the bounding set, when this thread may (CAP_SETPCAP). */
static int drop_bounding(cap_t cur, char *err, size_t errlen)
{
	cap_flag_value_t setpcap = CAP_CLEAR;
	if (cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap) < 0 || setpcap != CAP_SET)
		return 0;
	for (cap_value_t v = 0; v < cap_max_bits(); v++) {
		if (cap_get_bound(v) != 1)
			continue;
		if (cap_drop_bound(v) < 0) {
			int e = -errno;
			char *name = cap_to_name(v);
			snprintf(err, errlen, "cannot drop %s from the bounding set: %s",
				 name ? name : "a capability", strerror(-e));
			cap_free(name);
			return e;
		}
	}
	return 0;
}

/* True when the "CapXxx:\t<hex>" lines of a status file are all zero,
 * except CapBnd when bnd_may_stay. */
static bool status_clear(const char *s, bool bnd_may_stay)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (bnd_may_stay && strcmp(keys[i], "CapBnd:") == 0)
			continue;
		const char *p = strstr(s, keys[i]);
		if (!p)
			continue; /* an older kernel without ambient capabilities */
		p += strlen(keys[i]);
		p += strspn(p, "\t ");
		size_t n = strspn(p, "0");
		if (n == 0 || p[n] != '\n')
			return false;
	}
	return true;
}

/* Checks that the files the daemon opens after start-up (the store's
 * directory and database: each thread opens its own reader) are still
 * readable and writable without CAP_DAC_OVERRIDE: a root that starts the
 * daemon on another user's state directory would otherwise fail at the
 * first request, not at start. */
static int check_paths(const char *const *paths, char *err, size_t errlen)
{
	struct stat st;
	for (size_t i = 0; paths && paths[i] && i < PRIV_MAX_PATHS; i++) {
		if (stat(paths[i], &st) < 0)
			continue; /* not made yet: whoever makes it owns it */
		int mode = R_OK | W_OK | (S_ISDIR(st.st_mode) ? X_OK : 0);
		if (faccessat(AT_FDCWD, paths[i], mode, AT_EACCESS) == 0)
			continue;
		int e = -errno;
		snprintf(err, errlen,
			 "without capabilities, uid %u may no longer use %s (owner uid %u, mode "
			 "%04o): run the daemon as its owner, or make uid %u its owner",
			 (unsigned)geteuid(), paths[i], (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
		return e;
	}
	return 0;
}

/* Checks every thread of the process; -EPERM with the first thread that
 * still holds a capability named in err. No /proc: nothing to check. */
static int check_threads(bool bnd_may_stay, char *err, size_t errlen)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	char path[300], status[PRIV_STATUS_MAX];
	int r = 0, n = 0;

	if (!d) {
		log_debug("daemon", "cannot check the threads' capabilities: /proc/self/task: %s",
			  strerror(errno));
		return 0;
	}
	while (r == 0 && n++ < PRIV_MAX_TASKS && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue; /* the thread has ended */
		size_t len = fread(status, 1, sizeof(status) - 1, f);
		fclose(f);
		status[len] = '\0';
		if (!status_clear(status, bnd_may_stay)) {
			snprintf(err, errlen, "thread %s still holds capabilities after the drop",
				 de->d_name);
			r = -EPERM;
		}
	}
	closedir(d);
	return r;
}

int privilege_drop(const char *const *paths, char *err, size_t errlen)
{
	cap_t cur = cap_get_proc(), none = cap_init();
	char *before = NULL;
	bool bnd_may_stay;
	int r;

	if (!cur || !none) {
		r = -errno;
		snprintf(err, errlen, "cannot read the capabilities: %s", strerror(-r));
		goto out;
	}
	before = cap_to_text(cur, NULL);
	/* Without CAP_SETPCAP the bounding set cannot change; it is left as
	 * the service manager set it. */
	cap_flag_value_t setpcap = CAP_CLEAR;
	bnd_may_stay =
		cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap) < 0 || setpcap != CAP_SET;
	if ((r = drop_bounding(cur, err, errlen)) < 0)
		goto out;
	if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot clear the ambient capabilities: %s", strerror(-r));
		goto out;
	}
	if (cap_set_proc(none) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot drop the capabilities: %s", strerror(-r));
		goto out;
	}
	if (cap_prctlw(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(-r));
		goto out;
	}
	if ((r = check_threads(bnd_may_stay, err, errlen)) < 0) {
		if (PRIV_CHECK_STRICT)
			goto out;
		log_warn("daemon", "%s (a build with -fsanitize=thread: its runtime's own thread)",
			 err);
	}
	if ((r = check_paths(paths, err, errlen)) < 0)
		goto out;
	log_info("daemon", "dropped every capability (held at start: %s%s)",
		 before && strcmp(before, "=") != 0 ? before : "none",
		 bnd_may_stay ? "; bounding set left to the service manager" : "");
	r = 0;
out:
	cap_free(before);
	cap_free(none);
	cap_free(cur);
	return r;
}
