/* config-internal — what daemon/config/config.c (the key tables and the loader),
 * daemon/config/config-types.c (one parse function per value type) and
 * daemon/config/config-checks.c (the rules across keys, the files keys name)
 * share. Included only inside daemon/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "daemon/config/conf.h"

#define CFG_TOKEN_MAX 4096     /* bytes in api.token_file */
#define CFG_TOKEN_MIN 32       /* bytes of the token, at least */
#define CFG_TLS_FILE_MAX (256 * 1024) /* bytes of api.tls_cert, of api.tls_key */
#define CFG_CA_FILE_MAX (4 * 1024 * 1024) /* bytes of bmc.redfish.ca_file */
#define CFG_QUOTE_MAX 80       /* characters of a value quoted in a message */
#define CFG_MAX_SET 128        /* rows set in one file (each row at most once) */
#define CFG_MAX_SECTION_KEYS 64 /* rows in one table */
#define CFG_LIST_MAX 16        /* list the valid keys when a table has at most this many */
#define CFG_MSG_MAX 512

#define KIB ((uint64_t)1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

enum cfg_type {
	CFG_SECTION,   /* a mapping of the rows in .section */
	CFG_LOG_LEVEL, /* enum log_level */
	CFG_PATH,      /* char *, an absolute path */
	CFG_SOCKET,    /* char *, an absolute path that fits sun_path */
	CFG_MODE,      /* unsigned, octal digits "0660" */
	CFG_LISTEN,    /* char *, "host:port", "[v6]:port" or ":port" */
	CFG_UINT,      /* an unsigned integer field of .size bytes, in min..max */
	CFG_SIZE,      /* the same, bytes, with an optional KiB/MiB/GiB suffix */
	CFG_BOOL,      /* bool, true or false */
	CFG_DHCP_MODE, /* enum config_dhcp_mode */
	CFG_IPV4,      /* uint32_t, host byte order, a unicast IPv4 address */
	CFG_URL,       /* char *, an http:// or https:// base URL */
	CFG_IFNAMES,   /* struct config_ifnames, a sequence of interface names */
	CFG_ARCH_MAP,  /* struct config_arch_map, a mapping of code: binary */
	CFG_TEXT,      /* char *, printable ASCII, at most .max bytes (0: 4096) */
	CFG_CIDRS,     /* struct net_cidrs, a sequence of address/prefix */
	CFG_TYPE_MAX
};

struct cfg_key {
	const char *name;
	enum cfg_type type;
	size_t offset; /* of the field in struct ib_config */
	size_t size;   /* of the field */
	uint64_t min, max;
	const char *def; /* the default as written in the file; NULL: unset */
	const struct cfg_key *section; /* CFG_SECTION: its rows, ended by a row without name */
	const char *doc;
};


/* A parse function checks s (n bytes, no NUL inside) for key k and, when it
 * is good, stores it in field; otherwise it writes why into msg (without the
 * location and key name) and returns -EINVAL. */
typedef int (*cfg_parse_fn)(const struct cfg_key *k, const char *s, size_t n, void *field,
			    char *msg, size_t msglen);

/* A mapping type's parse function checks one pair (key ks/kn, value
 * vs/vn) and adds it to field; on -EINVAL it sets *at_key when the key,
 * not the value, is at fault. */
typedef int (*cfg_pair_fn)(const struct cfg_key *k, const char *ks, size_t kn, const char *vs,
			   size_t vn, void *field, char *msg, size_t msglen, bool *at_key);

/* What YAML node a type's value is. A sequence type's parse function adds
 * one item to the field; a sequence or mapping type starts empty, and its
 * default is written "[]" or "{}". */
enum cfg_node {
	CFG_NODE_SCALAR,
	CFG_NODE_SEQUENCE,
	CFG_NODE_MAPPING,
	CFG_NODE_MAX
};

struct cfg_type_info {
	const char *expected; /* "expected %s, got a mapping" */
	cfg_parse_fn parse;
	bool owns_string;     /* the field is a char * that config_free() frees */
	enum cfg_node node;
	const char *item;     /* CFG_NODE_SEQUENCE, CFG_NODE_MAPPING: what an item
			       * (a value) is, for "expected %s" */
	cfg_pair_fn parse_pair; /* CFG_NODE_MAPPING */
};

#define QUOTE_BUF (CFG_QUOTE_MAX + 16)

/* Writes s (n bytes) into out as an escaped, length-bounded string literal
 * for a message; returns out. */
const char *cfg_quote(char *out, size_t outlen, const char *s, size_t n);
/* True when s (n bytes, n > 0) is all ASCII digits. */
bool cfg_is_digits(const char *s, size_t n);
/* One entry per enum cfg_type. */
extern const struct cfg_type_info cfg_types[CFG_TYPE_MAX];

/* ---- the loader's state, shared with the checks (config-checks.c) ---- */

struct cfg_set {
	const struct cfg_key *row;
	yaml_mark_t key_mark, value_mark; /* where a check's message points */
};

struct cfg_ctx {
	const char *name;
	char *err;
	size_t errlen;
	yaml_document_t *doc;
	struct cfg_set set[CFG_MAX_SET]; /* the rows the file set, in file order */
	size_t nset;
};

/* The tables the checks point into, for cfg_value_mark(). */
extern const struct cfg_key cfg_api_keys[];
extern const struct cfg_key cfg_ipxe_keys[];
extern const struct cfg_key cfg_bmc_ipmi_keys[];
extern const struct cfg_key cfg_bmc_redfish_keys[];
extern const struct cfg_key cfg_workflow_keys[];
extern const struct cfg_key cfg_grpc_keys[];
extern const struct cfg_key cfg_kube_keys[];

/* Formats into err (errlen bytes, NUL-terminated); nothing when err is
 * NULL or errlen 0. */
void cfg_errorf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Writes "name:line:column: message" (m, 0-based, printed 1-based) into
 * ctx's error buffer and returns -EINVAL. */
int cfg_error(struct cfg_ctx *ctx, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Where the file put the value of the row called name in keys; the start
 * of the file when it did not set it. The mark is borrowed from ctx (or
 * static). */
const yaml_mark_t *cfg_value_mark(const struct cfg_ctx *ctx, const struct cfg_key *keys,
				  const char *name);

/* Reads at most max bytes of the file at path into a new NUL-terminated
 * buffer (*ret, owned by the caller; *ret_len bytes before the NUL).
 * Returns 0, -EFBIG when it is larger, or a negative errno. With
 * regular_only, anything but a regular file is -EBADF, checked before it is
 * opened: opening a device or a FIFO can block or have effects. */
int cfg_read_file(const char *path, size_t max, bool regular_only, char **ret, size_t *ret_len);
/* Runs the rules across keys (cfg_checks[]) on c, just walked from ctx's
 * file: they may fill fields the file does not set (api.token, the TLS
 * PEMs, ipxe.script). 0, or the first rule's negative errno with the
 * message written. */
int cfg_run_checks(struct cfg_ctx *ctx, struct ib_config *c);
