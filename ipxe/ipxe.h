/* ipxe — what the public HTTP listener serves to machines that boot: the
 * per-machine iPXE script, the iPXE binaries, the OSIE files (kernel and
 * initrd) and the UEFI HTTP Boot answer.
 *
 * Everything here is pure: a path is parsed into a route, a Range header
 * into a byte span, a Hardware object and the settings into a script. The
 * HTTP shell (daemon/public/public.c) reads the store and the files and writes the
 * replies; tests and fuzzers call these functions without a socket.
 *
 * The script comes from a template: text with {{name}} placeholders, the
 * built-in one or an operator's (ipxe.script_template). A placeholder is a
 * name from ipxe_template_vars[]; a template that names another is refused
 * when the configuration is loaded. Values from the Hardware object are
 * checked before they are put into a script: iPXE has no quoting, and a
 * space, a '$' (its variable expansion) or a line break in a value would
 * change the script, so a kernel argument that holds one is refused (the
 * script is not served, and the field is named), and one in a URL is
 * percent-encoded.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct json_t; /* jansson */

#define IPXE_SCRIPT_MAX (64 * 1024)        /* a rendered script */
#define IPXE_TEMPLATE_MAX (64 * 1024)      /* bytes of a template file */
#define IPXE_CMDLINE_MAX 4096              /* the kernel command line */
#define IPXE_VALUE_MAX 2048                 /* one placeholder's value */
#define IPXE_NAME_MAX 63                   /* a binary's file name */
#define IPXE_OSIE_PATH_MAX 255             /* a path under /osie/ */
#define IPXE_OSIE_DEPTH 8                  /* components of that path */
#define IPXE_PATH_MAX 512                  /* bytes of a request path considered */
#define IPXE_MAX_KERNEL_PARAMS 64          /* netboot.osie.kernelParams entries */
#define IPXE_GRPC_PORT 42113               /* the worker API (Tinkerbell's port) */

/* ---- routes of the public listener that this module answers ---- */

enum ipxe_route_type {
	IPXE_ROUTE_NONE = 0,  /* not one of ours */
	IPXE_ROUTE_SCRIPT,    /* /ipxe/script/[<mac>/]auto.ipxe, /auto.ipxe */
	IPXE_ROUTE_BINARY,    /* /ipxe/binary/[<mac>/]<name> */
	IPXE_ROUTE_OSIE,      /* /osie/<path> */
	IPXE_ROUTE_HTTPBOOT,  /* /httpboot */
	IPXE_ROUTE_BAD,       /* under our prefixes, but malformed: 404 */
	IPXE_ROUTE_MAX
};

struct ipxe_route {
	enum ipxe_route_type type;
	bool has_mac;
	uint8_t mac[6];
	char name[IPXE_OSIE_PATH_MAX + 1]; /* BINARY: a file name; OSIE: a relative path */
};

/* Parses the path of a request (len bytes, not NUL-terminated, still
 * percent-encoded: it is decoded once here, as iPXE encodes a MAC's
 * colons; a query string is cut off first) into *ret. Names are accepted
 * only as [A-Za-z0-9._+~-] components that do not start with '.', so that
 * nothing the path says can leave the directory it is served from; a MAC
 * is "aa:bb:cc:dd:ee:ff" (either case, ':' or '-'). Returns the route type
 * (IPXE_ROUTE_NONE when the path is not under /ipxe/, /osie/, /httpboot
 * or /auto.ipxe). */
enum ipxe_route_type ipxe_route_parse(const char *path, size_t len, struct ipxe_route *ret);
/* A route's template for logs and metrics ("/ipxe/script/{mac}/auto.ipxe"). */
const char *ipxe_route_template(const struct ipxe_route *r);

/* ---- files ---- */

/* The Content-Type of a binary or OSIE file by its name's extension:
 * application/efi for .efi, application/x-iso9660-image for .iso,
 * application/octet-stream otherwise. */
const char *ipxe_content_type(const char *name);

/* A Range request header (RFC 9110 §14.2) against a file of size bytes.
 * Returns 0 when the whole file is to be sent (no header, a header that is
 * not one byte range we understand, several ranges: all answered with the
 * whole file, which the RFC allows); 1 with *ret_off and *ret_len set for a
 * 206 answer; -ERANGE when the range cannot be satisfied (416). */
int ipxe_range_parse(const char *h, size_t hlen, uint64_t size, uint64_t *ret_off,
		     uint64_t *ret_len);

/* ---- validators of a file (ipxe/validators.c) ---- */

#define IPXE_ETAG_MAX 72      /* "\"<dev>-<ino>-<size>-<mtime ns>\"" in hex, and NUL */
#define IPXE_HTTP_DATE_MAX 30 /* "Sun, 06 Nov 1994 08:49:37 GMT" and NUL */

/* The strong ETag of a file from its device, inode, size and modification
 * time (nanoseconds): a file replaced or rewritten gets another one. */
void ipxe_etag(uint64_t dev, uint64_t ino, uint64_t size, int64_t mtime_sec, long mtime_nsec,
	       char out[IPXE_ETAG_MAX]);
/* t (seconds since the epoch) as an RFC 9110 IMF-fixdate. 0, or -ERANGE
 * for a time before 1970 or after 9999. */
int ipxe_http_date(int64_t t, char out[IPXE_HTTP_DATE_MAX]);
/* An HTTP date (n bytes, not NUL-terminated): IMF-fixdate, RFC 850 or
 * asctime form (RFC 9110 §5.6.7). 0 with *ret in seconds since the epoch,
 * or -EINVAL: the caller treats the header as absent. */
int ipxe_http_date_parse(const char *h, size_t n, int64_t *ret);
/* If-None-Match (n bytes) against the file's etag: 1 when "*" or one of
 * the listed tags matches by the weak comparison (the 304 case), 0 when
 * none does, the header is NULL, or it cannot be read. */
int ipxe_if_none_match(const char *h, size_t n, const char *etag);
/* If-Range (n bytes): true when a Range header is to be honoured, that is
 * when h is NULL, or names the file's etag (strong comparison), or is an
 * HTTP date equal to mtime (its Last-Modified); false otherwise (the whole
 * file is sent with 200). */
bool ipxe_if_range(const char *h, size_t n, const char *etag, int64_t mtime);

/* ---- templates ---- */

/* The names a template may use, NULL-terminated. */
extern const char *const ipxe_template_vars[];
/* The built-in template. */
extern const char ipxe_default_template[];

/* Checks a template (len bytes): every {{ has its }}, every name is known,
 * no NUL byte. 0, or -EINVAL with "line L, column C: why" in err. */
int ipxe_template_check(const char *t, size_t len, char *err, size_t errlen);

/* ---- the script ---- */

/* The settings a script is made with: the daemon fills them from its
 * configuration for each request, a test by hand. Strings are borrowed
 * (the daemon's live as long as its configuration snapshot); NULL means
 * unset. */
struct ipxe_settings {
	const char *template_;     /* NULL: ipxe_default_template */
	size_t template_len;
	const char *base_url;      /* http://host:port of the public listener */
	const char *osie_url;      /* NULL: base_url + "/osie" */
	const char *kernel;        /* name pattern; {{arch}} */
	const char *initrd;
	const char *kernel_args;
	const char *grpc_authority; /* host:port */
	const char *syslog_host;
	bool tls, insecure_tls;
	unsigned retries;
};

enum ipxe_script_kind {
	IPXE_SCRIPT_DEFAULT,  /* the template */
	IPXE_SCRIPT_URL,      /* netboot.ipxe.url: a chain */
	IPXE_SCRIPT_CONTENTS, /* netboot.ipxe.contents, verbatim */
	IPXE_SCRIPT_KIND_MAX
};

/* Writes into out the script for the interface of Hardware hw (its JSON,
 * borrowed) whose MAC is mac. On success returns 0 and the kind in
 * *ret_kind. Fails with -ENOENT when no interface has that MAC, -EACCES
 * when its netboot.allowPXE is not true, -EINVAL when a field cannot go
 * into a script (err names it), -E2BIG when the script is too long. */
int ipxe_script(const struct json_t *hw, const uint8_t mac[6], const struct ipxe_settings *s,
		struct buf *out, enum ipxe_script_kind *ret_kind, char *err, size_t errlen);
/* The kind's name for logs and metrics: "default", "url", "contents". */
const char *ipxe_script_kind_name(enum ipxe_script_kind k);

/* The MAC of the interface of hw whose dhcp.ip.address is ip (IPv4 text),
 * for a script asked for by address: 0 or -ENOENT. */
int ipxe_mac_by_ip(const struct json_t *hw, const char *ip, uint8_t ret[6]);

/* The /httpboot answer for the machine at client_ip whose Hardware is hw
 * (NULL: unknown): {"ClientIPs": ip, "UKIURL": the URL of its iPXE binary
 * (the EFI binary for its architecture, under base_url/ipxe/binary/<mac>/),
 * "SystemUUID": its system UUID or ""}. With hw NULL, UKIURL is
 * base_url/ipxe/binary/ipxe.efi. Returns 0, -ENOMEM or -E2BIG. */
int ipxe_httpboot(const struct json_t *hw, const char *client_ip, const char *base_url,
		  struct buf *out);
