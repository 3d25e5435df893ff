/* fuzz_template — the template lexer, parser and evaluator
 * (workflow/template-*.c). The input is a template's source; it is
 * rendered with the data of a small Hardware and a hardwareMap, so that
 * fields, index, range and the functions run on real values. */
#include "config.h"

#include <stdlib.h>

#include "tests/fuzz/fuzz.h"
#include "workflow/workflow.h"

#define FUZZ_TEMPLATE_MAX 16384

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *tdata;
	struct wf_tmpl_error err;
	char *out = NULL;

	if (size > FUZZ_TEMPLATE_MAX)
		return 0;
	if (!tdata) {
		json_t *hw = json_pack(
			"{s:{s:[{s:s}], s:[{s:{s:s, s:s, s:{s:s, s:s}}}], s:{s:{s:s, s:[s,s]}}}}",
			"spec", "disks", "device", "/dev/nvme0n1", "interfaces", "dhcp", "mac",
			"52:54:00:aa:bb:cc", "arch", "x86_64", "ip", "address", "10.0.0.5",
			"netmask", "255.255.255.0", "metadata", "instance", "id", "i-1", "tags",
			"a", "b");
		json_t *map = json_pack("{s:s, s:i}", "device_1", "52:54:00:aa:bb:cc", "n", 3);
		tdata = wf_tmpl_data(hw, map);
		json_decref(hw);
		json_decref(map);
		if (!tdata)
			return 0;
	}
	if (wf_tmpl_render((const char *)data, size, tdata, &out, NULL, &err) == 0)
		free(out);
	return 0;
}
