/* metadata — instance metadata for the machine that asks, from its
 * Hardware object: EC2-style paths (/2009-04-04/..., /latest/...), Hegel's
 * /metadata JSON, cloud-init NoCloud (/nocloud/...), Ignition
 * (/ignition/<uuid>).
 *
 * Everything here is pure: the path is parsed into a route, the client's
 * address is chosen from the peer and X-Forwarded-For, and a Hardware's
 * JSON is turned into the answer. The HTTP shell (daemon/public/public.c) finds
 * the Hardware by the client's address through the store's IP index and
 * never by anything the client says, so no request gets another machine's
 * data.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/net.h"

struct json_t; /* jansson */

#define MD_PATH_MAX 255        /* an EC2 path below the version */
#define MD_ID_MAX 253          /* an instance id in a /tootles/ path */
#define MD_XFF_MAX 64          /* addresses of X-Forwarded-For considered */
#define MD_XFF_JOINED_MAX 4096  /* bytes of all X-Forwarded-For lines joined */
#define MD_BODY_MAX (1u << 20) /* an answer (user data is the big one) */
#define MD_MAX_KEYS 256        /* ssh_keys entries listed */

enum md_route_type {
	MD_ROUTE_NONE = 0, /* not a metadata path */
	MD_ROUTE_EC2,      /* /2009-04-04/..., /latest/..., /tootles/instanceID/<id>/2009-04-04/... */
	MD_ROUTE_HEGEL,    /* /metadata */
	MD_ROUTE_NOCLOUD,  /* /nocloud/<file> */
	MD_ROUTE_IGNITION, /* /ignition/<uuid> */
	MD_ROUTE_BAD,      /* under our prefixes, but malformed: 404 */
	MD_ROUTE_MAX
};

enum md_nocloud_file {
	MD_NOCLOUD_META_DATA,
	MD_NOCLOUD_USER_DATA,
	MD_NOCLOUD_VENDOR_DATA,
	MD_NOCLOUD_NETWORK_CONFIG,
	MD_NOCLOUD_DIR, /* /nocloud/ itself: the listing */
	MD_NOCLOUD_MAX
};

struct md_route {
	enum md_route_type type;
	char path[MD_PATH_MAX + 1];     /* EC2: below the version, no leading or
					 * trailing '/' ("" is the version's root) */
	bool by_instance;               /* EC2 through /tootles/instanceID/<id>/ */
	char instance_id[MD_ID_MAX + 1];
	enum md_nocloud_file file;      /* NOCLOUD */
	char uuid[37];                  /* IGNITION: lower case, with dashes */
};

/* Parses a request path (len bytes, still percent-encoded; a query is cut
 * off) into *ret and returns its type: MD_ROUTE_NONE when the path is not
 * ours. A percent-escape in an EC2 path or an instance id makes it
 * MD_ROUTE_BAD: no key needs one. */
enum md_route_type md_route_parse(const char *path, size_t len, struct md_route *ret);
/* The route's template for logs and metrics ("/2009-04-04/{path}"). */
const char *md_route_template(const struct md_route *r);

/* ---- settings ----
 *
 * What this part is configured with. The daemon fills it from its
 * configuration (metadata: in ironbell.yaml); a test fills it by hand.
 * Pointers are borrowed: whoever fills it keeps what they point to for as
 * long as the settings are used (the daemon: its configuration snapshot). */
struct md_settings {
	const struct net_cidrs *trusted_proxies; /* peers whose X-Forwarded-For
						  * counts; NULL: none */
};

/* ---- who is asking ---- */

/* True when the address text ip (IPv4 or IPv6) is inside one of the
 * prefixes of l. */
bool md_cidrs_match(const struct net_cidrs *l, const char *ip);

/* The client's address: peer (text) itself, unless peer is a trusted
 * proxy and xff (the X-Forwarded-For header, NULL when absent) names
 * addresses; then the rightmost one that is not a trusted proxy (or the
 * leftmost, when all are). An entry that is not an address stops the walk
 * and is the answer: a client the lookup will not find. At most
 * MD_XFF_MAX entries are read from the right. Writes the address, in the
 * canonical text form of its family, into out (INET6_ADDRSTRLEN bytes)
 * and returns 0, or -EINVAL (and out "") when nothing usable is named. */
int md_client_address(const char *peer, const char *xff, const struct net_cidrs *trusted,
		      char *out, size_t outlen);

/* ---- answers ---- */

/* Content types. */
#define MD_CT_TEXT "text/plain; charset=utf-8"
#define MD_CT_JSON "application/json"
#define MD_CT_YAML "text/yaml; charset=utf-8"
#define MD_CT_IGNITION "application/vnd.coreos.ignition+json"

/* The EC2-style answer for path (a route's path) from Hardware hw: a leaf's
 * value (empty when unset), or a directory's listing (children one per
 * line, sub-directories with a trailing '/'). Returns 0, -ENOENT when no
 * such key exists (404), -E2BIG when out is full. */
int md_ec2(const struct json_t *hw, const char *path, struct buf *out);

/* Hegel's /metadata: {"metadata":{"instance":{"storage":...}}}. */
int md_hegel_json(const struct json_t *hw, struct buf *out);

/* The NoCloud file of hw. network-config is cloud-init's version 2, made
 * from the Hardware's interfaces; meta-data holds instance-id,
 * local-hostname and public-keys. 0, -ENOENT for a file the Hardware does
 * not have (no user data: an empty body is still 200, see the man page;
 * -ENOENT only for nothing at all), -E2BIG. */
int md_nocloud(const struct json_t *hw, enum md_nocloud_file f, struct buf *out);

/* The Ignition config of hw: its user data when that is a JSON object with
 * "ignition": {"version": ...}; -ENOENT otherwise. */
int md_ignition(const struct json_t *hw, struct buf *out);

/* The instance id a /tootles/ request must match: metadata.instance.id. */
const char *md_instance_id(const struct json_t *hw);
