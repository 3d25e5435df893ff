/* dhcp — the part's public header: the DHCP server thread (dhcp/server.c),
 * its settings (struct dhcp_settings, filled by the daemon), and the
 * in-memory reservation table it answers from (dhcp/hosts.c). The codec
 * (dhcp/dhcp-codec.h) and the policy (dhcp/dhcp-policy.h) are the
 * folder's own, and its tests'.
 *
 * The table holds, for every Hardware interface with a MAC, the compact
 * struct dhcp_host the policy needs (dhcp-policy.h), packed to its used
 * size; it is filled from the store at start and kept current from the
 * store's change log, so that a DHCP packet costs a hash probe rather than
 * a SQLite read and a JSON decode. One thread owns a table: nothing in it
 * is locked.
 *
 * The server binds its sockets in dhcp_server_new(), so that a busy port
 * or a missing interface stops the daemon at start with a clear message,
 * then runs one thread (dhcp_server_start()) until dhcp_server_free().
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp-policy.h"

struct json_t;
struct store;

/* ---- settings ---- */

#define DHCP_SETTINGS_MAX_INTERFACES 64 /* interfaces the server binds to */
#define DHCP_IFNAME_MAX 15              /* bytes of an interface name (IFNAMSIZ - 1) */
#define DHCP_DEFAULT_HTTP_PORT 7080     /* the public listener's (Tinkerbell's) */

/* What the server is configured with, stored inline (nothing to free).
 * The daemon fills it from the dhcp: section of its configuration; a test
 * fills it by hand.
 *
 * policy is the policy's configuration (its mode and lease_reuse are the
 * server's too), with the gaps that only the interface a request comes in
 * on can fill: server_id 0 is that interface's address; http_ip and
 * tftp_ip 0 are server_id's; an empty script_url or binary_url is made
 * from "http://<http_ip>:<http_port>" (dhcp_settings_policy). */
struct dhcp_settings {
	size_t ninterfaces; /* 0: one socket for every interface */
	char interfaces[DHCP_SETTINGS_MAX_INTERFACES][DHCP_IFNAME_MAX + 1];
	bool subnet_check;  /* reservation mode: a directly attached client's
			     * reservation must be on its interface's subnets */
	uint16_t http_port; /* the public listener's, for URLs made per interface */
	struct dhcp_policy_config policy;
};

/* The policy configuration of s for a request that came in on an
 * interface whose address is iface_ip (host order; 0: it has none), with
 * every gap of s->policy filled as struct dhcp_settings says. 0, or
 * -EADDRNOTAVAIL (neither s nor the interface has an address for option
 * 54), -ENAMETOOLONG (a URL too long), with a message in err and *ret
 * unchanged. */
int dhcp_settings_policy(const struct dhcp_settings *s, uint32_t iface_ip,
			 struct dhcp_policy_config *ret, char *err, size_t errlen);

/* ---- the reservation table ---- */

#define DHCP_HOSTS_MAX_INTERFACES 64 /* interfaces of one Hardware served */

struct dhcp_hosts;

struct dhcp_hosts *dhcp_hosts_new(void);
/* Accepts NULL. */
void dhcp_hosts_free(struct dhcp_hosts *t);
/* Removes every entry. */
void dhcp_hosts_clear(struct dhcp_hosts *t);

/* Makes the table hold exactly the interfaces of Hardware hw (its JSON,
 * borrowed) that have a MAC: entries the same object had before and no
 * longer has are removed, a MAC taken over from another object is moved.
 * An interface whose fields the DHCP server cannot use (dhcp_host_from_
 * hardware fails) gets no entry: its MAC will not be answered. Returns the
 * number of interfaces entered, or -EINVAL when at least one was refused
 * (the others are entered; err names the first refused field), -ENOMEM. */
int dhcp_hosts_put(struct dhcp_hosts *t, const struct json_t *hw, char *err, size_t errlen);
/* Removes the entries of Hardware ns/name. */
void dhcp_hosts_remove(struct dhcp_hosts *t, const char *ns, const char *name);
/* Copies the entry of mac into *ret: 0 or -ENOENT. */
int dhcp_hosts_lookup(const struct dhcp_hosts *t, const uint8_t mac[6], struct dhcp_host *ret);
/* Copies the entry that reserves IPv4 address ip (host byte order, as
 * struct dhcp_host.ip) into *ret: 0 or -ENOENT. Entries without an
 * address or with disable_dhcp are not found by it. When several
 * entries hold ip (the store forbids it, but a follower may see it for a
 * while between two changes), the one whose address was entered last
 * answers, and the one before it again once that one is removed or
 * moves elsewhere. An index kept by every change of the table: the
 * lookup is one probe. */
int dhcp_hosts_lookup_ip(const struct dhcp_hosts *t, uint32_t ip, struct dhcp_host *ret);
/* Calls fn for every entry (in no particular order) with a copy valid
 * during the call, until fn returns non-zero; fn must not change t.
 * Returns the number of calls made (the one that stopped included); 0
 * when memory runs out for the copy. */
size_t dhcp_hosts_each(const struct dhcp_hosts *t, int (*fn)(const struct dhcp_host *h, void *arg),
		       void *arg);
/* Interfaces (MACs) in the table. */
size_t dhcp_hosts_count(const struct dhcp_hosts *t);
/* Bytes the table holds (entries, index, owner lists): for the metrics. */
size_t dhcp_hosts_bytes(const struct dhcp_hosts *t);

/* ---- the leases known to be on disk (dhcp/leases.c) ---- */

struct dhcp_leases;

struct dhcp_leases *dhcp_leases_new(void);
/* Accepts NULL. */
void dhcp_leases_free(struct dhcp_leases *t);
/* The Hardware a mark belongs to: a hash of its namespace and name (NULL
 * reads as ""), as the lease row records them. */
uint64_t dhcp_leases_owner(const char *ns, const char *name);
/* A bound lease of mac read from the store at start: its mark, unless a
 * write of mac is in flight. 0 or -ENOMEM. */
int dhcp_leases_load(struct dhcp_leases *t, const uint8_t mac[6],
		     const struct dhcp_lease_mark *m, uint64_t owner);
/* A write of mac's lease was queued: its mark is not handed out until
 * every write queued for it has completed. ip is the address a bound
 * write takes (take_ip), 0 for a write of another state: no mark of ip,
 * whoever's, is handed out until it completes. 0, or -ENOMEM: then the
 * write must not be queued. */
int dhcp_leases_queued(struct dhcp_leases *t, const uint8_t mac[6], uint32_t ip);
/* A write of mac completed, in the order they were queued; ip as it was
 * queued with. m is the bound lease now on disk, or NULL for a write that
 * failed or left no bound lease (RELEASE, DECLINE). */
void dhcp_leases_done(struct dhcp_leases *t, const uint8_t mac[6], uint32_t ip,
		      const struct dhcp_lease_mark *m, uint64_t owner);
/* The mark of mac, for lease reuse: NULL when there is none, a write of
 * mac or a bound write of the mark's address is in flight, or it belongs
 * to another Hardware than owner. Valid until the next call that changes
 * t. */
const struct dhcp_lease_mark *dhcp_leases_get(const struct dhcp_leases *t, const uint8_t mac[6],
					      uint64_t owner);
/* A bound write of mac took ip from other MACs' bound leases: their marks
 * of ip are erased. */
void dhcp_leases_ip_taken(struct dhcp_leases *t, uint32_t ip, const uint8_t mac[6]);
/* Visits the next n slots of the table and removes the entries whose
 * mark expired by now (or that have none) and that have no write in
 * flight. Returns how many. */
size_t dhcp_leases_sweep(struct dhcp_leases *t, int64_t now, size_t n);
/* Entries in the table. */
size_t dhcp_leases_count(const struct dhcp_leases *t);

/* ---- the server ---- */

struct dhcp_server;

/* Opens the sockets that settings name (copied: the caller may free it
 * once this returns): UDP 67 on each of its interfaces (or one socket for
 * all), 4011 too in the proxy modes, and a packet socket for replies to
 * clients that have no address yet. Registers the metrics. 0, or a
 * negative errno with a message naming the port or interface in err. */
int dhcp_server_new(struct store *store, const struct dhcp_settings *settings,
		    struct dhcp_server **ret, char *err, size_t errlen);
/* Starts the thread: it loads the reservation table, then serves. */
int dhcp_server_start(struct dhcp_server *srv, char *err, size_t errlen);
/* Stops the thread after it has sent the ACKs whose leases are being
 * committed (bounded wait), closes the sockets and frees. The store must
 * still be open. Accepts NULL. */
void dhcp_server_free(struct dhcp_server *srv);
