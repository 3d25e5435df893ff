/* ironbell-kea — the C core of the Kea hook library libdhcp_ironbell.so:
 * what its C++ shim (dhcp/kea/hook.cc) calls.
 *
 * The hook lets a site's own kea-dhcp4 answer the machines that ironbell
 * knows with the decisions of ironbelld's DHCP server, while Kea keeps
 * its subnets, pools, lease database and everything else:
 *
 *  - the reservation table is dhcp/'s own (struct dhcp_hosts), filled
 *    from ironbelld's store (the SQLite file, read-only, following its
 *    change log) or from the admin API's watch (a thread, "the follower");
 *  - Kea asks it for host reservations through a host data source that
 *    the shim registers, so the reserved address is allocated, and its
 *    lease written, by Kea's own allocation engine;
 *  - before Kea sends an OFFER or ACK to a MAC in the table, the request
 *    goes through dhcp_policy() (dhcp/dhcp-policy.h), exactly as
 *    ironbelld's server would decide it, and the shim copies the answer's
 *    boot fields and the Hardware's options into Kea's response
 *    (ibkea_answer()).
 *
 * Every function here is thread-safe: Kea may call the callouts from
 * several packet threads while the follower updates the table (a
 * read-write lock; a full load is built aside and swapped in). Nothing
 * here throws, aborts or exits: a missing or unreadable source leaves
 * the table empty, and the hook answers nothing.
 *
 * Conventions as in dhcp/dhcp-codec.h: IPv4 addresses are uint32_t in
 * host byte order, 0 meaning "not set".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp.h"

/* ---- parameters ---- */

#define IBKEA_PATH_MAX 1023
#define IBKEA_URL_MAX 1023
#define IBKEA_DEFAULT_STORE "/var/lib/ironbell/ironbell.db"
#define IBKEA_DEFAULT_POLL_MS 200  /* store: change-log poll interval */
#define IBKEA_MIN_POLL_MS 10
#define IBKEA_MAX_POLL_MS 10000
#define IBKEA_PARAMS_MAX 65536     /* bytes of the parameters' JSON text */

enum ibkea_source {
	IBKEA_SOURCE_STORE, /* ironbelld's SQLite file on this host */
	IBKEA_SOURCE_API,   /* ironbelld's admin API, over TCP (TLS) */
	IBKEA_SOURCE_MAX
};

/* The hook's "parameters" in Kea's configuration, checked. Every name is
 * hyphenated as Kea's own are; the netboot ones are ironbell.yaml's dhcp:
 * keys (ironbell.yaml(5)) with '-' for '_':
 *
 *   "source"           "store" (default) or "api"; "api-url" alone
 *                      implies "api"
 *   "store"            the store's file (IBKEA_DEFAULT_STORE)
 *   "poll-interval-ms" how often the change log is read (store)
 *   "api-url"          "https://host:port" of the admin API (api.listen);
 *                      http:// only to a loopback address
 *   "api-token-file"   a file holding the admin API's bearer token
 *                      (required with "api")
 *   "api-ca-file"      the CA bundle to verify the API with ("": the
 *                      system's)
 *   "netboot"          boolean (true): send boot information at all
 *   "public-address"   IPv4: ironbelld's address, for TFTP and HTTP
 *                      (default: Kea's server identifier of the reply)
 *   "tftp-address"     IPv4 (default: public-address)
 *   "http-base-url"    base of the iPXE script and binary URLs (default
 *                      "http://<public-address>:<http-port>")
 *   "http-port"        1..65535 (7080)
 *   "syslog-address"   IPv4: option 7 (default: none)
 *   "arch"             {"<option 93 value>": "<binary>", ...}: entries
 *                      added to, or replacing, the default table
 *
 * Unknown names are refused, so a typo is not silently ignored. */
struct ibkea_params {
	enum ibkea_source source;
	char store[IBKEA_PATH_MAX + 1];
	uint32_t poll_ms;
	char api_url[IBKEA_URL_MAX + 1];
	char api_token_file[IBKEA_PATH_MAX + 1];
	char api_ca_file[IBKEA_PATH_MAX + 1];
	/* The policy, as ironbelld's server holds it: mode reservation,
	 * lease_reuse 0 (Kea has its own cache-threshold), server_id 0 (Kea's
	 * server identifier fills it per reply: dhcp_settings_policy()). */
	struct dhcp_settings dhcp;
};

/* Parses the parameters' JSON text (len bytes; NULL or len 0: every
 * default) into *ret. 0, or -EINVAL with a message naming the parameter
 * (and, for a JSON error, the line and column) in err. *ret is written
 * only on success. */
int ibkea_params_parse(const char *json, size_t len, struct ibkea_params *ret, char *err,
		       size_t errlen);

/* ---- the hook's state ---- */

enum ibkea_log_level {
	IBKEA_LOG_ERROR,
	IBKEA_LOG_WARN,
	IBKEA_LOG_INFO,
	IBKEA_LOG_DEBUG,
	IBKEA_LOG_MAX
};

/* Where the core's log lines go (the shim: Kea's logger). msg is one
 * line without a newline, valid during the call. Called from any thread. */
typedef void (*ibkea_log_fn)(enum ibkea_log_level level, const char *msg);

struct ibkea;

/* Starts the hook's core with params (copied): an empty table and the
 * follower thread, which loads the table and keeps it current. A source
 * that cannot be read is not an error here: the follower logs why and
 * tries again every few seconds, and until it has loaded the table the
 * hook answers nothing. log may be NULL (nothing logged). 0, or a
 * negative errno (-ENOMEM, a thread that cannot start) with a message in
 * err. */
int ibkea_new(const struct ibkea_params *params, ibkea_log_fn log, struct ibkea **ret,
	      char *err, size_t errlen);
/* Stops the follower (bounded: it is woken, and a blocking read of the
 * API is cancelled) and frees. Accepts NULL. */
void ibkea_free(struct ibkea *k);

/* Whether the table holds a complete load of the source (false before
 * the first load, and while the source is missing). */
bool ibkea_ready(const struct ibkea *k);
/* Interfaces (MACs) in the table. */
size_t ibkea_count(const struct ibkea *k);

/* A number that changes whenever the table does (a batch of changes, a
 * load): what was read of the table at one generation still holds while
 * it is the current one. For caches of what is made from the table. */
uint64_t ibkea_generation(const struct ibkea *k);

/* Asks the source to log its current error again at its next attempt,
 * though it said it already: a line written while Kea was still
 * configuring its loggers (the source starts at load) can be lost, and
 * an operator looks for it after Kea's start-up lines. Called when Kea
 * is configured. Accepts NULL. */
void ibkea_relog(struct ibkea *k);

/* ---- lookups, for Kea's host data source ---- */

/* A MAC the table answers for, and the address its Hardware reserves (0:
 * none; Kea's pool gives the address, ironbell the rest). */
struct ibkea_reservation {
	uint8_t mac[6];
	uint32_t ip;
	uint32_t netmask; /* 0: not set */
	char hostname[DHCP_HOST_STRING_MAX + 1];
};

/* The reservation of mac: 0 or -ENOENT (no Hardware interface, or one
 * with disableDhcp). */
int ibkea_by_mac(struct ibkea *k, const uint8_t mac[6], struct ibkea_reservation *ret);
/* The reservation whose address is ip: 0 or -ENOENT. */
int ibkea_by_ip(struct ibkea *k, uint32_t ip, struct ibkea_reservation *ret);
/* Calls fn for each reservation with an address, under the table's read
 * lock (fn must not call back into the hook); stops when fn returns
 * non-zero. Returns the number visited. */
size_t ibkea_each(struct ibkea *k, int (*fn)(const struct ibkea_reservation *r, void *arg),
		  void *arg);

/* ---- the answer ---- */

/* What Kea is about to send, read from its response. */
struct ibkea_kea_reply {
	enum dhcp_msg_type type; /* DHCP_OFFER, DHCP_ACK, DHCP_NAK, ... */
	uint32_t yiaddr;
	uint32_t server_id;      /* its option 54 */
};

enum ibkea_outcome {
	IBKEA_NOT_OURS,   /* no Hardware has the MAC: Kea's answer untouched */
	IBKEA_APPLIED,    /* ironbell's fields copied into Kea's answer */
	IBKEA_SILENT,     /* ironbelld would not answer (why says why): untouched */
	IBKEA_MISMATCH,   /* a different message type or address than Kea's: untouched */
	IBKEA_NOT_READY,  /* no table loaded: untouched */
	IBKEA_MALFORMED,  /* the request does not parse (dhcp_parse): untouched */
	IBKEA_ERROR,      /* an internal error (logged): untouched */
	IBKEA_OUTCOME_MAX
};

/* "not-ours", "applied", "silent", "mismatch", "not-ready", "malformed",
 * "error"; "unknown" out of range. Also the names of the statistics
 * (ironbell.answers.<name>). */
const char *ibkea_outcome_name(enum ibkea_outcome o);

#define IBKEA_MAX_OPTIONS 64

/* One option of the answer: data points into the struct ibkea_answer
 * that holds it. */
struct ibkea_option {
	uint8_t code;
	uint16_t len;
	const uint8_t *data;
};

/* The edits to Kea's response, when outcome is IBKEA_APPLIED:
 *  - the header's siaddr, sname and file become these (zeroes included:
 *    ironbelld's answer is the only boot information sent);
 *  - each option in set replaces Kea's of the same code, or is added;
 *  - each code in del is removed (boot options ironbelld does not send:
 *    43, 60, 66, 67, when Kea's configuration has its own).
 * Options 53, 54, 61 and 82 are always Kea's; 51, 58 and 59 are set only
 * when the Hardware has a lease time (ibkea_lease_time() gave Kea the same
 * one for its lease). A few KiB: keep one per thread, not on a small
 * stack. */
struct ibkea_answer {
	enum ibkea_outcome outcome;
	enum dhcp_boot boot; /* the boot decision (dhcp_boot_name) */
	const char *why;     /* static: the policy's why, or the core's */
	uint8_t mac[6];
	uint32_t siaddr;
	uint8_t sname[DHCP_SNAME_LEN];
	uint8_t file[DHCP_FILE_LEN];
	size_t nset;
	struct ibkea_option set[IBKEA_MAX_OPTIONS];
	size_t ndel;
	uint8_t del[IBKEA_MAX_OPTIONS];
	/* storage */
	struct dhcp_packet req_;
	struct dhcp_reply reply_;
};

/* Decides what ironbelld would answer to the request query (its len
 * bytes as received) that Kea is about to answer with *kea, and fills
 * *ret. The policy runs in reservation mode, on port 67, with no link
 * check (Kea chose the subnet), with the configuration of params'
 * dhcp_settings whose gaps are filled from kea->server_id; a Hardware
 * interface that reserves no address is decided with Kea's yiaddr as its
 * address. Never fails: the outcome says what happened. */
void ibkea_answer_request(struct ibkea *k, const uint8_t *query, size_t len,
			  const struct ibkea_kea_reply *kea, struct ibkea_answer *ret);

/* The lease time that mac's Hardware sets (seconds), for Kea's lease of
 * ip (lease4_select), or 0: Kea's own. Only for the address the Hardware
 * reserves (or any, when it reserves none): a lease Kea gives from its
 * pool in place of the reservation is Kea's answer, untouched
 * (IBKEA_MISMATCH), lease time included. */
uint32_t ibkea_lease_time(struct ibkea *k, const uint8_t mac[6], uint32_t ip);
