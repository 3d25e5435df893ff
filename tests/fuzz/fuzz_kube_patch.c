/* fuzz_kube_patch — the write-back's pure core (kube/patch.c) over JSON
 * the API server could send. The input is two JSON texts separated by a
 * line "---": from and to. Beyond not crashing, three properties are
 * checked: a merge patch that json_merge_diff() gives applies back to to,
 * kube_status_to_legacy() is idempotent, and a status mirrored over
 * itself stays as it is. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/jsonmerge.h"
#include "kube/kube-internal.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_KUBE_PATCH_MAX 65536

static json_t *load(const uint8_t *p, size_t n)
{
	return json_loadb((const char *)p, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
}

static void properties(json_t *from, json_t *to)
{
	json_t *patch = NULL, *back = NULL, *leg = NULL, *leg2 = NULL, *mono = NULL;
	char err[256];
	if (json_merge_diff(from, to, &patch, err, sizeof(err)) == 0) {
		/* no patch: from and to are equal */
		if (!patch && !json_equal(from, to))
			abort();
		if (patch && json_merge_apply(from, patch, &back) == 0 && !json_equal(back, to))
			abort();
	}
	if (kube_status_to_legacy(from, &leg, err, sizeof(err)) == 0) {
		if (kube_status_to_legacy(leg, &leg2, err, sizeof(err)) != 0 ||
		    !json_equal(leg, leg2))
			abort();
		if (kube_status_from_legacy(leg, from, &mono, err, sizeof(err)) == 0 &&
		    !json_is_object(mono))
			abort();
	}
	(void)kube_schema_from_crd(from);
	/* a status is the echo of itself; from arriving over to must not crash */
	json_t *mir = NULL;
	if (kube_status_mirror(STORE_KIND_WORKFLOW, from, from, KUBE_STATUS_MONOREPO, &mir, err,
			       sizeof(err)) != 0 ||
	    !json_equal(mir, from))
		abort();
	json_decref(mir);
	mir = NULL;
	if (kube_status_mirror(STORE_KIND_WORKFLOW, from, to, KUBE_STATUS_LEGACY, &mir, err,
			       sizeof(err)) == 0)
		json_decref(mir);
	json_decref(mono);
	json_decref(leg2);
	json_decref(leg);
	json_decref(back);
	json_decref(patch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_KUBE_PATCH_MAX)
		return 0;
	int64_t ns;
	(void)kube_go_duration_ns((const char *)data, size < 80 ? size : 80, &ns);
	const uint8_t *sep = NULL;
	for (size_t i = 0; i + 5 <= size && !sep; i++)
		if (memcmp(data + i, "\n---\n", 5) == 0)
			sep = data + i;
	json_t *from = load(data, sep ? (size_t)(sep - data) : size);
	json_t *to = sep ? load(sep + 5, size - (size_t)(sep + 5 - data)) : NULL;
	if (from && to)
		properties(from, to);
	else if (from)
		properties(from, from);
	json_decref(from);
	json_decref(to);
	return 0;
}
