/* jsonmerge — RFC 7386 merge patches, computed and applied.
 *
 * DESIGN: both walk objects recursively, bounded by JSON_MERGE_MAX_DEPTH
 * (the values come from an API server and from the store's own objects,
 * both parsed by jansson, whose parser stops at 2048 levels: the bound is
 * ours, and far below that). Arrays are values: a merge patch replaces
 * them whole. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonmerge.h"

static int diff_at(const json_t *from, const json_t *to, json_t **ret, int depth, char *path,
		   size_t pathlen, char *err, size_t errlen);

/* A copy of v for a patch: a null inside it could not be told from a
 * deletion. */
static int patch_value(const json_t *v, json_t **ret, int depth, const char *path, char *err,
		       size_t errlen)
{
	if (depth > JSON_MERGE_MAX_DEPTH)
		return -E2BIG;
	if (json_is_null(v)) {
		snprintf(err, errlen, "%s: null cannot be said in a merge patch (it deletes the member)",
			 path);
		return -EINVAL;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *m;
		json_object_foreach((json_t *)v, k, m)
		{
			char sub[256];
			snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
			json_t *tmp = NULL;
			int e = patch_value(m, &tmp, depth + 1, sub, err, errlen);
			json_decref(tmp);
			if (e < 0)
				return e;
		}
	}
	*ret = json_deep_copy(v);
	return *ret ? 0 : -ENOMEM;
}

static int diff_at(const json_t *from, const json_t *to, json_t **ret, int depth, char *path,
		   size_t pathlen, char *err, size_t errlen)
{
	*ret = NULL;
	if (depth > JSON_MERGE_MAX_DEPTH)
		return -E2BIG;
	if (from && json_equal(from, to))
		return 0;
	if (!json_is_object(from) || !json_is_object(to))
		return patch_value(to, ret, depth, path, err, errlen);
	json_t *p = json_object();
	const char *k;
	json_t *v;
	size_t plen = strlen(path);
	int e = p ? 0 : -ENOMEM;
	json_object_foreach((json_t *)from, k, v)
	{
		if (e < 0)
			break;
		if (!json_object_get(to, k) && json_object_set_new(p, k, json_null()) < 0)
			e = -ENOMEM;
	}
	json_object_foreach((json_t *)to, k, v)
	{
		if (e < 0)
			break;
		json_t *d = NULL;
		snprintf(path + plen, pathlen - plen, "%s%s", plen ? "." : "", k);
		e = diff_at(json_object_get(from, k), v, &d, depth + 1, path, pathlen, err, errlen);
		path[plen] = '\0';
		if (e == 0 && d && json_object_set_new(p, k, d) < 0)
			e = -ENOMEM;
	}
	if (e < 0 || !json_object_size(p)) {
		json_decref(p);
		return e;
	}
	*ret = p;
	return 0;
}

int json_merge_diff(const json_t *from, const json_t *to, json_t **ret_patch, char *err,
		    size_t errlen)
{
	char path[256] = "";
	char dummy[1];
	json_t *p = NULL;
	if (!err || !errlen)
		err = dummy, errlen = sizeof(dummy);
	err[0] = '\0';
	int e = diff_at(from, to, &p, 0, path, sizeof(path), err, errlen);
	if (e == -E2BIG)
		snprintf(err, errlen, "nested deeper than %d objects", JSON_MERGE_MAX_DEPTH);
	if (e < 0)
		return e;
	*ret_patch = p;
	return 0;
}

static json_t *apply_at(const json_t *target, const json_t *patch, int depth, int *e)
{
	if (depth > JSON_MERGE_MAX_DEPTH) {
		*e = -E2BIG;
		return NULL;
	}
	if (!json_is_object(patch))
		return json_deep_copy(patch);
	json_t *out = json_is_object(target) ? json_deep_copy(target) : json_object();
	const char *k;
	json_t *v;
	if (!out)
		return NULL;
	json_object_foreach((json_t *)patch, k, v)
	{
		if (json_is_null(v)) {
			json_object_del(out, k);
			continue;
		}
		json_t *n = apply_at(json_object_get(out, k), v, depth + 1, e);
		if (!n || json_object_set_new(out, k, n) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

int json_merge_apply(const json_t *target, const json_t *patch, json_t **ret)
{
	int e = 0;
	json_t *out = apply_at(target, patch, 0, &e);
	if (!out)
		return e ? e : -ENOMEM;
	*ret = out;
	return 0;
}
