/* yamljson — YAML documents (libyaml) to JSON values (jansson) and back.
 *
 * Objects travel as JSON inside ironbell; YAML is how people write them
 * (`ironbell apply -f`, request bodies sent as YAML, `-o yaml`). Scalars are
 * resolved by the YAML 1.2 core schema, as Kubernetes' YAML decoder does for
 * these objects: null/~/empty -> null, true/false -> boolean, decimal
 * integers -> integer, floats -> real, everything else and every quoted
 * scalar -> string; explicit tags (!!str, !!int, ...) win. Mapping keys are
 * always strings. Aliases are expanded with a bound on the total number of
 * nodes produced (no "billion laughs"); duplicate keys in one mapping are an
 * error. */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "common/buf.h"

/* Hard limits on untrusted YAML. */
#define YJ_MAX_DEPTH 64
#define YJ_MAX_NODES 1000000 /* nodes produced, aliases expanded */

struct yj_error {
	size_t document; /* 1-based index of the document that failed */
	size_t line;     /* 1-based */
	size_t column;   /* 1-based */
	char message[256];
};

/* Parses every document of a (multi-document) YAML stream. On success returns
 * 0 and *ret_docs is a new JSON array with one value per non-empty document
 * (a document that is only comments or null is skipped), and, when
 * ret_lines is not NULL, *ret_lines a malloc'ed array (same length) of the
 * 1-based line where each kept document starts. JSON is YAML, so a JSON text
 * parses too. On failure returns -EINVAL (or -ENOMEM), fills *err and
 * writes no output. */
int yj_load(const char *data, size_t len, json_t **ret_docs, size_t **ret_lines,
	    struct yj_error *err);

/* The same, handing each kept document to fn as soon as it is complete
 * (doc borrowed, freed when fn returns: json_incref() it to keep it;
 * line where it starts), so that one document's tree exists at a time.
 * fn returns 0 to go on, or a negative errno that stops the stream and is
 * returned (err->message says "out of memory" for -ENOMEM, else is
 * empty). Documents before a syntax error have been given to fn. */
typedef int (*yj_each_fn)(json_t *doc, size_t line, void *userdata);
int yj_load_each(const char *data, size_t len, yj_each_fn fn, void *userdata, struct yj_error *err);

/* Parses exactly one document (JSON or YAML). More than one is -EINVAL. */
int yj_load_one(const char *data, size_t len, json_t **ret, struct yj_error *err);

/* Appends v as a block-style YAML document (no leading "---") to out. Strings
 * that would read back as another type ("true", "1", "null", "") or that
 * need it are quoted, so yj_load(yj_dump(v)) == v. */
int yj_dump(const json_t *v, struct buf *out);
