/* fuzz_redfish — the Redfish client's untrusted input: a response body
 * from a BMC. It is parsed as JSON and read as each thing the client
 * asks for: a service root, a collection (with and without a system
 * name), a ComputerSystem and its boot override, an error body, a Task,
 * a Manager and a VirtualMedia. Properties checked: every URI a reader
 * hands back passes rf_uri_ok() (so it may go into a request line), every
 * string is NUL-terminated within its buffer, and a ResetType chosen
 * from the system's AllowableValues is one that the list allows. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "bmc/redfish/redfish.h"
#include "tests/fuzz/fuzz.h"

static void uri_checked(const char *u, size_t cap)
{
	size_t n = strnlen(u, cap);

	if (n == cap)
		abort();
	if (n && !rf_uri_ok(u, n))
		abort();
}

static void system_checks(const json_t *j)
{
	struct rf_system s;
	struct bmc_boot b;
	enum rf_reset out[2];
	char err[BMC_MESSAGE_MAX];

	if (rf_parse_system(j, &s, err, sizeof(err)) < 0)
		return;
	uri_checked(s.reset_target, sizeof(s.reset_target));
	uri_checked(s.settings, sizeof(s.settings));
	uri_checked(s.manager, sizeof(s.manager));
	uri_checked(s.vmedia, sizeof(s.vmedia));
	if (strnlen(s.id, sizeof(s.id)) == sizeof(s.id) ||
	    strnlen(s.etag, sizeof(s.etag)) == sizeof(s.etag))
		abort();
	(void)rf_system_boot(&s, &b);
	for (int a = BMC_ACT_ON; a <= BMC_ACT_RESET; a++) {
		const struct rf_vendor *v = rf_vendor_find(s.manufacturer);
		int n = rf_choose_reset((enum bmc_power_action)a, s.resets_known, s.resets, v, out);
		for (int i = 0; i < n; i++)
			if (s.resets_known && !(s.resets & RF_RESET_BIT(out[i])))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[BMC_MESSAGE_MAX], uri[RF_URI_MAX], msg[BMC_MESSAGE_MAX];
	struct rf_root root;
	struct rf_vmedia vm;
	json_t *j;

	if (rf_json_parse((const char *)data, size, &j, err, sizeof(err)) < 0) {
		if (strnlen(err, sizeof(err)) == sizeof(err))
			abort();
		return 0;
	}
	if (rf_parse_root(j, &root, err, sizeof(err)) == 0) {
		uri_checked(root.systems, sizeof(root.systems));
		uri_checked(root.managers, sizeof(root.managers));
		uri_checked(root.sessions, sizeof(root.sessions));
		(void)rf_vendor_find(root.vendor);
	}
	if (rf_pick_member(j, "", uri, err, sizeof(err)) == 0)
		uri_checked(uri, sizeof(uri));
	if (rf_pick_member(j, "1", uri, err, sizeof(err)) == 0)
		uri_checked(uri, sizeof(uri));
	if (strnlen(err, sizeof(err)) == sizeof(err))
		abort();
	system_checks(j);
	rf_parse_error(j, msg, sizeof(msg));
	(void)rf_parse_task(j, msg, sizeof(msg));
	if (rf_parse_manager_vmedia(j, uri) == 0)
		uri_checked(uri, sizeof(uri));
	if (rf_parse_vmedia(j, &vm, err, sizeof(err)) == 0) {
		uri_checked(vm.insert, sizeof(vm.insert));
		uri_checked(vm.eject, sizeof(vm.eject));
	}
	json_decref(j);
	return 0;
}
