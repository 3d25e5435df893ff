/* dhcp-policy — the DHCP server's decisions, as a pure function.
 *
 * dhcp_policy() takes a parsed request (dhcp-codec.h), a compact read-only view
 * of the Hardware interface that owns the client's MAC (struct dhcp_host,
 * built by dhcp_host_from_hardware from the stored JSON) and the server's
 * configuration, and says whether to answer, with what, and why not. It
 * opens no socket, reads no store and keeps no state: the server thread,
 * the tests and the fuzzers call it the same way.
 *
 * Conventions as in dhcp-codec.h: IPv4 addresses are uint32_t in host byte order,
 * 0 meaning "not set".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp-codec.h"

struct json_t; /* jansson */

/* ---- limits ---- */

#define DHCP_HOST_NAME_MAX 253     /* metadata.name (DNS subdomain) */
#define DHCP_HOST_NAMESPACE_MAX 63 /* metadata.namespace (DNS label) */
#define DHCP_HOST_STRING_MAX 255   /* hostname, domain, 66, 67: one option's data */
#define DHCP_HOST_URL_MAX 255      /* netboot.ipxe.url: must fit option 67 */
#define DHCP_HOST_BINARY_MAX 63    /* netboot.ipxe.binary, arch table binaries */
#define DHCP_HOST_ARCH_MAX 31      /* dhcp.arch ("x86_64", "aarch64") */
#define DHCP_HOST_MAX_DNS 16       /* name_servers */
#define DHCP_HOST_MAX_NTP 16       /* time_servers */
#define DHCP_HOST_MAX_ROUTES 32    /* classless_static_routes */
#define DHCP_POLICY_MAX_ARCHES 64  /* entries of the arch -> binary table */
#define DHCP_POLICY_URL_MAX 255    /* a URL pattern, and a URL made from one */
#define DHCP_PROXY_PORT 4011       /* PXE boot server port (PXE 2.1 §2.2.1) */
#define DHCP_DEFAULT_LEASE 604800  /* Smee's default lease time (7 days) */
#define DHCP_LEASE_REUSE_MAX 49    /* percent: below T1, so that a renewal at
				    * T1 (50%) always writes a new lease */
#define DHCP_INFINITE_EXPIRY 253402300799LL /* 9999-12-31T23:59:59Z: the
					     * expiry of an infinite lease */

/* ---- a Hardware interface, as DHCP sees it ---- */

enum dhcp_tristate {
	DHCP_UNSET = 0,
	DHCP_TRUE,
	DHCP_FALSE,
	DHCP_TRISTATE_MAX
};

/* A fixed-size copy: no pointer into the JSON it came from, so it outlives
 * the store read that produced it. Empty strings and zero addresses mean
 * "not set". */
struct dhcp_host {
	char name[DHCP_HOST_NAME_MAX + 1];
	char namespace_[DHCP_HOST_NAMESPACE_MAX + 1];
	uint8_t mac[6];
	uint32_t ip, netmask, gateway; /* dhcp.ip: IPv4 only (IPv6 values read as unset) */
	uint32_t dns[DHCP_HOST_MAX_DNS];
	size_t ndns;
	uint32_t ntp[DHCP_HOST_MAX_NTP];
	size_t nntp;
	char hostname[DHCP_HOST_STRING_MAX + 1];
	char domain[DHCP_HOST_STRING_MAX + 1];
	uint32_t lease_time; /* seconds; 0: the config's default */
	int vlan_id;         /* 0..4096, -1: not set */
	struct dhcp_route routes[DHCP_HOST_MAX_ROUTES];
	size_t nroutes;
	char tftp_server_name[DHCP_HOST_STRING_MAX + 1];
	char boot_file_name[DHCP_HOST_STRING_MAX + 1];
	char arch[DHCP_HOST_ARCH_MAX + 1]; /* dhcp.arch, informational */
	enum dhcp_tristate uefi;           /* dhcp.uefi, informational */
	enum dhcp_tristate allow_pxe;      /* netboot.allowPXE */
	char ipxe_url[DHCP_HOST_URL_MAX + 1];
	char ipxe_binary[DHCP_HOST_BINARY_MAX + 1];
	bool disable_dhcp; /* interfaces[].disableDhcp */
	/* The Hardware waits for its boot to be seen (common/bootmark.h):
	 * not the policy's, the server's, which records what it sees. */
	bool awaiting_boot;
};

/* Fills *ret from the Hardware object hw (its Kubernetes JSON, borrowed)
 * with the interface whose spec.interfaces[].dhcp.mac equals mac (the first
 * one, if several do). Returns 0; -ENOENT when no interface has that MAC;
 * -EINVAL when a field the DHCP server uses is malformed or longer than its
 * limit (nothing is truncated), with a message naming the field in err
 * (errlen bytes, may be 0). *ret is written only on success. */
int dhcp_host_from_hardware(const struct json_t *hw, const uint8_t mac[6], struct dhcp_host *ret,
			    char *err, size_t errlen);

/* ---- configuration ---- */

enum dhcp_mode {
	DHCP_MODE_RESERVATION, /* full DHCP for Hardware MACs only */
	DHCP_MODE_PROXY,       /* ProxyDHCP for netboot clients that have Hardware */
	DHCP_MODE_AUTO_PROXY,  /* ProxyDHCP for every netboot client */
	DHCP_MODE_MAX
};

struct dhcp_arch_binary {
	uint16_t arch; /* option 93 value (RFC 4578 §2.1, IANA registry) */
	char binary[DHCP_HOST_BINARY_MAX + 1];
};

/* Immutable once handed to dhcp_policy. URL patterns may contain "{mac}"
 * (the client's MAC, lowercase, colon separated) and "{binary}" (the iPXE
 * binary for its arch); the expanded URL must fit DHCP_POLICY_URL_MAX. */
struct dhcp_policy_config {
	enum dhcp_mode mode;
	bool netboot;        /* send boot options at all (Smee --dhcp-enable-netboot-options) */
	uint32_t server_id;  /* option 54, our address on the client's network */
	uint32_t http_ip;    /* siaddr for UEFI HTTP boot replies */
	uint32_t tftp_ip;    /* siaddr and option 66 for PXE ROMs */
	uint32_t syslog_ip;  /* option 7; 0: not sent */
	uint32_t lease_time; /* when the Hardware sets none */
	unsigned lease_reuse; /* percent, 0..DHCP_LEASE_REUSE_MAX (0: off):
			       * dhcp_lease_reuse() */
	struct dhcp_arch_binary arches[DHCP_POLICY_MAX_ARCHES];
	size_t narches;
	char script_url[DHCP_POLICY_URL_MAX + 1]; /* for iPXE clients */
	char binary_url[DHCP_POLICY_URL_MAX + 1]; /* for UEFI HTTP boot clients */
};

/* Fills *cfg with the defaults (Tinkerbell's): reservation mode, netboot
 * on, every address = public_ip, no syslog, DHCP_DEFAULT_LEASE, no lease
 * reuse, the arch
 * table of Smee (0-5, 20 undionly.kpxe; 6-9, 15, 16 ipxe.efi; 10, 11, 18,
 * 19, 41 snp-arm64.efi), script URL
 * "http://<public_ip>:7080/ipxe/script/{mac}/auto.ipxe" and binary URL
 * "http://<public_ip>:7080/ipxe/binary/{mac}/{binary}". */
void dhcp_policy_config_default(struct dhcp_policy_config *cfg, uint32_t public_ip);

/* Sets cfg's script_url and binary_url to base followed by the paths the
 * public listener serves them at ("/ipxe/script/{mac}/auto.ipxe",
 * "/ipxe/binary/{mac}/{binary}"), with base's trailing slashes dropped
 * ("https://h/" gives no "//"). 0, or -ENAMETOOLONG with cfg unchanged
 * when a URL would not fit DHCP_POLICY_URL_MAX (dhcp/settings.c). */
int dhcp_policy_set_base_url(struct dhcp_policy_config *cfg, const char *base);

/* Sets the binary of option 93 value arch in cfg's table, replacing
 * its entry or adding one (binary must fit DHCP_HOST_BINARY_MAX). 0, or
 * -E2BIG when the table has DHCP_POLICY_MAX_ARCHES entries already. */
int dhcp_policy_set_arch(struct dhcp_policy_config *cfg, uint16_t arch, const char *binary);

/* The binary for option 93 value arch in cfg's table, or NULL. */
const char *dhcp_policy_arch_binary(const struct dhcp_policy_config *cfg, uint16_t arch);

/* ---- the decision ---- */

enum dhcp_boot {
	DHCP_BOOT_NONE,        /* no boot information sent */
	DHCP_BOOT_EXPLICIT,    /* Hardware tftp_server_name / boot_file_name */
	DHCP_BOOT_IPXE_SCRIPT, /* an iPXE client: the script URL */
	DHCP_BOOT_HTTP_BOOT,   /* UEFI HTTP boot: the binary's http:// URL */
	DHCP_BOOT_PXE_BINARY,  /* a PXE ROM: the binary over TFTP */
	DHCP_BOOT_NOT_ALLOWED, /* netboot client, allowPXE not true */
	DHCP_BOOT_MAX
};

/* "none", "explicit", "ipxe-script", "http-boot", "pxe-binary",
 * "not-allowed"; "unknown" out of range. */
const char *dhcp_boot_name(enum dhcp_boot b);

/* Where the reply goes (RFC 2131 §4.1). */
enum dhcp_dest {
	DHCP_DEST_NONE,      /* nothing to send */
	DHCP_DEST_RELAY,     /* dest_ip (giaddr), port 67 */
	DHCP_DEST_CIADDR,    /* dest_ip (ciaddr), port 68 */
	DHCP_DEST_BROADCAST, /* 255.255.255.255, port 68 */
	DHCP_DEST_UNICAST,   /* dest_ip (yiaddr) at chaddr, port 68, without ARP */
	DHCP_DEST_SOURCE,    /* back to the request's source address and port (4011) */
	DHCP_DEST_MAX
};

struct dhcp_decision {
	enum dhcp_msg_type type; /* message sent, DHCP_NONE when silent */
	const char *why;         /* static: why silent, or what was done ("offer",
				  * "ack", "nak-wrong-address", "release", ...) */
	enum dhcp_boot boot;
	char file[DHCP_POLICY_URL_MAX + 1]; /* boot file or URL sent, "" if none */
	uint32_t yiaddr;
	uint32_t lease_time; /* 0 when no lease was given */
	enum dhcp_dest dest;
	uint32_t dest_ip;
};

/* The IPv4 subnets of the interface a request came in on (dhcp/link.c),
 * host order, each once; /32 and link-local (169.254.0.0/16) addresses
 * are left out, as they name no subnet that clients are given addresses
 * on. An interface with more subnets than this is not checked. */
#define DHCP_LINK_MAX_NETS 64
struct dhcp_link_net {
	uint32_t addr, mask;
};
struct dhcp_link {
	size_t n;
	struct dhcp_link_net net[DHCP_LINK_MAX_NETS];
};

/* Whether a reservation of ip (with netmask, 0 when it has none) is off
 * link: on none of its subnets, and none of them has an address in
 * ip/netmask. False when link is NULL or has none (nothing to check
 * against). */
bool dhcp_link_off(const struct dhcp_link *link, uint32_t ip, uint32_t netmask);

/* Decides the answer to req, which arrived on UDP port `port` (67, or
 * DHCP_PROXY_PORT in the proxy modes). host is the Hardware interface for
 * req's chaddr, or NULL when there is none; it must carry req's MAC. link,
 * when not NULL, holds the subnets of the interface it came in on: in
 * reservation mode a directly attached client without an address yet (no
 * giaddr; a DISCOVER, or a REQUEST with option 50) whose reservation is
 * off that link (dhcp_link_off) is on the wrong network (no OFFER; a
 * REQUEST gets a NAK), as a relayed one is whose address is off giaddr's.
 * All inputs are borrowed, read-only. Returns 1 and fills *reply (ready for
 * dhcp_write) when a reply must be sent; 0 when the server stays silent
 * (ret->why says why; RELEASE and DECLINE also return 0, with why
 * "release"/"decline", for the caller to record); a negative errno on an
 * internal error (-EINVAL: bad arguments, host for another MAC; -ENOSPC:
 * reply option space; -ENAMETOOLONG: a URL pattern expands past its
 * limit). *ret is always written; *reply is scribbled on when 0 or < 0. */
int dhcp_policy(const struct dhcp_packet *req, uint16_t port, const struct dhcp_host *host,
		const struct dhcp_link *link, const struct dhcp_policy_config *cfg,
		struct dhcp_reply *reply, struct dhcp_decision *ret);

/* ---- lease reuse ----
 *
 * A machine being provisioned asks for its address several times within
 * minutes: its firmware's PXE ROM, then iPXE, then the provisioning OS,
 * each with a full DISCOVER / REQUEST. Each ACK would write (and flush) a
 * lease that differs from the one on disk only by a few seconds of expiry.
 * Lease reuse (what Kea calls lease caching, its cache-threshold) answers
 * such a request with the lease already on disk, for the time it has
 * left, and writes nothing: the ACK still grants nothing that is not on
 * disk, it does not wait for a flush, and the disk is spared.
 */

/* A bound lease known to be on disk: what the server last committed, or
 * read from the store at start. */
struct dhcp_lease_mark {
	uint32_t ip;
	int64_t starts, expires; /* unix seconds; DHCP_INFINITE_EXPIRY */
};

/* Whether the OFFER or ACK that dhcp_policy() decided in *d (with *reply)
 * can hand out the lease m (NULL: none known, or a write of it is in
 * flight) instead of a new one, at time now (unix seconds; the latest
 * time the store's expiry sweep was given, expired_by, when that is
 * later: the clock stepped back, and what expired by then may be gone
 * from disk): cfg's
 * lease_reuse is on, m is for the address offered, and the time it has
 * left is at most the lease time decided and at least (100 - lease_reuse)
 * percent of it. An infinite lease is reused when m is infinite too. When
 * it can, the reply's lease options (51, 58, 59: dhcp_reply_set_lease)
 * and d->lease_time become the time left, and it returns 1; otherwise 0
 * with nothing changed; -ENOSPC when the reply has no room left. */
int dhcp_lease_reuse(const struct dhcp_lease_mark *m, const struct dhcp_policy_config *cfg,
		     int64_t now, int64_t expired_by, struct dhcp_reply *reply,
		     struct dhcp_decision *d);
