/* fuzz_template_schema — a rendered template's YAML to struct wf_template
 * and its validation (workflow/template-schema.c): the YAML loader, the
 * pass that finds each node's position, and the schema walk with its
 * error and warning lists. The input is the rendered text. */
#include "config.h"

#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "workflow/workflow.h"

#define FUZZ_TEMPLATE_SCHEMA_MAX 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wf_template_report rep;
	struct wf_template *t = NULL;

	if (size > FUZZ_TEMPLATE_SCHEMA_MAX)
		return 0;
	if (wf_template_parse((const char *)data, size, &t, &rep) == 0)
		wf_template_free(t);
	/* the reports are always NUL-terminated */
	if (strlen(rep.error) >= sizeof(rep.error) || strlen(rep.warning) >= sizeof(rep.warning))
		__builtin_trap();
	return 0;
}
