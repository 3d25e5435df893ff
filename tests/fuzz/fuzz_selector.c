/* fuzz_selector — label selector parsing (store/selector.c). The input is
 * a selector as it would arrive in ?labelSelector=; when it parses, it is
 * matched against a fixed label set, which must not crash either. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_SELECTOR_MAX 8192

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *labels;
	struct store_selector *sel = NULL;
	char err[256];

	if (size > FUZZ_SELECTOR_MAX)
		return 0;
	if (!labels)
		labels = json_pack("{s:s, s:s, s:s, s:s}", "env", "prod", "tier", "", "a.b/c",
				   "x-1", "in", "notin");
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (store_selector_parse(s, &sel, err, sizeof(err)) == 0) {
		(void)store_selector_match(sel, labels);
		(void)store_selector_match(sel, NULL);
		store_selector_free(sel);
	}
	free(s);
	return 0;
}
