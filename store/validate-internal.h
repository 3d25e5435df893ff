/* validate-internal — the schema language shared by the validation files
 * of store/: the walker (validate.c), the value checks (validate-values.c)
 * and the tables transcribed from the CRDs (crd-tables.c). Included only
 * inside store/. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"

#define VALIDATE_MAX_PATH 256           /* longest field path kept for messages */
#define VALIDATE_QUOTE_MAX 64           /* bytes of a value shown in a message */
#define VALIDATE_MAX_ANNOTATIONS 262144 /* Kubernetes' total annotation size */
#define VALIDATE_DNS_SUBDOMAIN_MAX 253
#define VALIDATE_DNS_LABEL_MAX 63
#define VALIDATE_TOP_FIELDS 8 /* members of a kind's top level, END included */

enum vtype {
	V_ANY,
	V_STRING,
	V_INT,
	V_BOOL,
	V_ARRAY,         /* items: the element */
	V_OBJECT,        /* fields: the known fields, ending with { NULL } */
	V_MAP,           /* object with arbitrary keys; items: every value */
	V_INT_OR_STRING, /* Kubernetes IntOrString (a resource Quantity) */
};

#define F_REQUIRED 0x01 /* in the CRD's required list: present and not null */
#define F_OPEN 0x02     /* object: unknown keys are tolerated */
#define F_NONEMPTY 0x04 /* string: not "" (minLength 1); array: minItems 1 */
#define F_NOCASE 0x08   /* enum: compared ignoring case */
#define F_ONEOF 0x10    /* object: at most one property set (maxProperties 1) */

struct vctx;

struct vfield {
	const char *name;
	enum vtype type;
	unsigned flags;
	const struct vfield *fields; /* V_OBJECT */
	const struct vfield *items;  /* V_ARRAY, V_MAP */
	const char *const *enums;    /* V_STRING: allowed values, NULL-terminated */
	int (*check)(struct vctx *c, const json_t *v);     /* after the type check */
	int (*key_check)(struct vctx *c, const char *key); /* V_MAP keys */
	const char *def; /* the CRD's default, as JSON text ("623"), or NULL */
};

/* Where the walker is and what it has found so far. */
struct vctx {
	char path[VALIDATE_MAX_PATH];
	size_t plen;
	char *err; /* the joined messages; NULL: count only */
	size_t errlen;
	size_t used;     /* bytes of err written */
	unsigned errors; /* field errors found */
	unsigned shown;  /* of which in err */
};

/* Records one field error, "path: message", and returns -EINVAL. */
int store_vfail(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes the n bytes of s to out as a short quoted excerpt with JSON
 * escapes (at most VALIDATE_QUOTE_MAX bytes of s, then "..."). */
void store_vquote(char *out, size_t outlen, const char *s, size_t n);

#define VQ(name, json)                          \
	char name[VALIDATE_QUOTE_MAX * 2 + 16]; \
	store_vquote(name, sizeof(name), json_string_value(json), json_string_length(json))

/* Value checks (validate-values.c): each is called after the type check
 * passed, and returns 0 or store_vfail()'s -EINVAL. */
int store_check_subdomain(struct vctx *c, const json_t *v);
int store_check_label(struct vctx *c, const json_t *v);
int store_check_qualified_key(struct vctx *c, const char *key);
int store_check_label_value(struct vctx *c, const json_t *v);
int store_check_annotations(struct vctx *c, const json_t *v);
int store_check_mac(struct vctx *c, const json_t *v);
int store_check_ip(struct vctx *c, const json_t *v);
int store_check_ip_or_empty(struct vctx *c, const json_t *v);
int store_check_ipv4(struct vctx *c, const json_t *v);
int store_check_netmask(struct vctx *c, const json_t *v);
int store_check_cidr4(struct vctx *c, const json_t *v);
int store_check_vlan(struct vctx *c, const json_t *v);
int store_check_port(struct vctx *c, const json_t *v);
int store_check_port_or_zero(struct vctx *c, const json_t *v);
int store_check_uri(struct vctx *c, const json_t *v);
int store_check_time(struct vctx *c, const json_t *v);
int store_check_base64(struct vctx *c, const json_t *v);
int store_check_config_key(struct vctx *c, const char *key);
int store_check_quantity(struct vctx *c, const json_t *v);
int store_check_dhcp(struct vctx *c, const json_t *v);

/* The top level of each kind (crd-tables.c), ending with { NULL }. */
extern const struct vfield store_crd_top[STORE_KIND_MAX][VALIDATE_TOP_FIELDS];
