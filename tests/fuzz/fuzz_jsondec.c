/* fuzz_jsondec — common/jsondec against jansson's own parser, input by
 * input. The first byte chooses the flags (JSON_REJECT_DUPLICATES,
 * JSON_DECODE_ANY), the rest is the text. Properties checked:
 *   - what jsondec_fast() accepts, json_loadb() accepts too, and the two
 *     trees are equal (json_equal, which tells an integer from a real) and
 *     dump to the same bytes (so the same key order, the same strings, the
 *     same reals to the last digit);
 *   - jsondec_loadb() accepts exactly what json_loadb() accepts, with the
 *     same tree and the same *error (source, line, column, position), and
 *     where both refuse, with the same message, line, column and
 *     position. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jsondec.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_JSONDEC_MAX 65536
#define DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17))

static void same_tree(json_t *a, json_t *b)
{
	if (!json_equal(a, b))
		abort();
	char *da = json_dumps(a, DUMP_FLAGS), *db = json_dumps(b, DUMP_FLAGS);
	if (!da || !db || strcmp(da, db) != 0)
		abort();
	free(da);
	free(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_JSONDEC_MAX)
		return 0;
	size_t flags = (data[0] & 1 ? JSON_REJECT_DUPLICATES : 0) | (data[0] & 2 ? JSON_DECODE_ANY : 0);
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	json_error_t ej, ed;

	json_t *j = json_loadb(text, len, flags, &ej);
	json_t *f = jsondec_fast(text, len, flags);
	if (f) {
		if (!j)
			abort();
		same_tree(f, j);
	}
	json_t *d = jsondec_loadb(text, len, flags, &ed);
	if (!d != !j)
		abort();
	if (d) {
		same_tree(d, j);
		if (ed.position != ej.position || ed.line != ej.line || ed.column != ej.column ||
		    strcmp(ed.source, ej.source) != 0 || ed.text[0])
			abort();
	} else if (strcmp(ed.text, ej.text) != 0 || ed.line != ej.line || ed.column != ej.column ||
		 ed.position != ej.position)
		abort();
	json_decref(j);
	json_decref(f);
	json_decref(d);
	return 0;
}
