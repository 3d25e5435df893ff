/* jsonmerge — RFC 7386 JSON merge patches: the patch between two values
 * and a patch applied. The store keeps the daemon's changes of a
 * Kubernetes object over each newer version the cluster sends
 * (store/ops.c, MIRROR), and kube/ sends those changes back as merge
 * patches. */
#pragma once

#include <jansson.h>
#include <stddef.h>

/* Deepest nesting of objects either function walks. */
#define JSON_MERGE_MAX_DEPTH 64

/* The merge patch that turns from into to: a member of from that to
 * lacks becomes null, objects present in both are compared member by
 * member, anything else (arrays, scalars, a change of type) is replaced
 * whole. from may be NULL (absent: the patch is a copy of to). Neither is
 * changed. 0 with *ret_patch a new reference, or NULL when they are equal;
 * -EINVAL when to holds a null as an object member the patch would carry
 * (a merge patch cannot set a null: it deletes), with err naming its
 * path; -E2BIG beyond JSON_MERGE_MAX_DEPTH; -ENOMEM. */
int json_merge_diff(const json_t *from, const json_t *to, json_t **ret_patch, char *err,
		    size_t errlen);

/* target with patch applied (RFC 7386), as a new reference in *ret;
 * target may be NULL (absent). Neither input is changed. 0, -E2BIG
 * (deeper than JSON_MERGE_MAX_DEPTH) or -ENOMEM. */
int json_merge_apply(const json_t *target, const json_t *patch, json_t **ret);
