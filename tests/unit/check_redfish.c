/* check_redfish — the Redfish client's JSON readers (bmc/redfish/parse.c)
 * on good and malformed bodies (not JSON, wrong types, missing fields,
 * huge arrays, non-string Ids and AllowableValues), the ResetType choice
 * for each power action, each entry of the vendor table, and the
 * engine's contract: no callback from submit(), exactly one, CANCELED
 * from free(). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmc/bmc.h"
#include "bmc/redfish/redfish.h"
#include "tests/unit/unit.h"

static json_t *js(const char *text)
{
	char err[128];
	json_t *j = NULL;

	ck_assert_msg(rf_json_parse(text, strlen(text), &j, err, sizeof(err)) == 0, "%s: %s", text,
		      err);
	return j;
}

START_TEST(test_json_parse)
{
	static const char *const bad[] = {
		"", "<html>", "[1,2]", "\"s\"", "12", "{\"a\":", "{\"a\":1,\"a\":2}", "null"
	};
	char err[128];
	json_t *j;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(rf_json_parse(bad[i], strlen(bad[i]), &j, err, sizeof(err)),
				 -EBADMSG);
		ck_assert_msg(strncmp(err, "body is not", 11) == 0, "%s", err);
	}
	ck_assert_int_eq(rf_json_parse("<html>", 6, &j, err, sizeof(err)), -EBADMSG);
	ck_assert_msg(strncmp(err, "body is not JSON: ", 18) == 0, "%s", err);
	j = js("{}");
	json_decref(j);
}
END_TEST

/* jansson's error text quotes the body near the error: a control byte
 * from the BMC must not reach the message (a Machine's condition, the
 * CLI's terminal). */
START_TEST(test_json_parse_clean)
{
	static const char *const bad[] = { "\x1b[31m", "\x07", "{\"a\":\x1b}", "\x7f" };
	char err[128];
	json_t *j;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_int_eq(rf_json_parse(bad[i], strlen(bad[i]), &j, err, sizeof(err)),
				 -EBADMSG);
		for (const char *p = err; *p; p++)
			ck_assert_msg((unsigned char)*p >= ' ' && *p != 0x7f,
				      "body %zu: byte 0x%02x in \"%s\"", i, (unsigned char)*p, err);
	}
}
END_TEST

START_TEST(test_uri_ok)
{
	char big[RF_URI_MAX + 1];

	ck_assert(rf_uri_ok("/redfish/v1/Systems/1", 21));
	ck_assert(!rf_uri_ok("", 0));
	ck_assert(!rf_uri_ok("redfish/v1", 10));
	ck_assert(!rf_uri_ok("https://evil/x", 14));
	ck_assert(!rf_uri_ok("/a b", 4));
	ck_assert(!rf_uri_ok("/a\r\nX-Evil: 1", 13));
	ck_assert(!rf_uri_ok("/a\"", 3));
	memset(big, 'a', sizeof(big));
	big[0] = '/';
	ck_assert(!rf_uri_ok(big, RF_URI_MAX));
	ck_assert(rf_uri_ok(big, RF_URI_MAX - 1));
}
END_TEST

START_TEST(test_root)
{
	struct rf_root r;
	char err[128];
	json_t *j;

	j = js("{\"Systems\":{\"@odata.id\":\"/redfish/v1/Systems\"},\"Vendor\":\"Dell\","
	       "\"Links\":{\"Sessions\":{\"@odata.id\":\"/redfish/v1/S/Sessions\"}},"
	       "\"Managers\":{\"@odata.id\":\"/redfish/v1/Managers\"}}");
	ck_assert_int_eq(rf_parse_root(j, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.systems, "/redfish/v1/Systems");
	ck_assert_str_eq(r.managers, "/redfish/v1/Managers");
	ck_assert_str_eq(r.sessions, "/redfish/v1/S/Sessions");
	ck_assert_str_eq(r.vendor, "Dell");
	json_decref(j);
	/* No Vendor: the Oem key; no Links: the default Sessions URI. */
	j = js("{\"Systems\":{\"@odata.id\":\"/redfish/v1/Systems\"},\"Oem\":{\"Hpe\":{}}}");
	ck_assert_int_eq(rf_parse_root(j, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.vendor, "Hpe");
	ck_assert_str_eq(r.sessions, "/redfish/v1/SessionService/Sessions");
	ck_assert_str_eq(r.managers, "");
	json_decref(j);
	/* Malformed: no Systems, of the wrong type, not a path. */
	static const char *const bad[] = {
		"{}",
		"{\"Systems\":\"/redfish/v1/Systems\"}",
		"{\"Systems\":{\"@odata.id\":7}}",
		"{\"Systems\":{\"@odata.id\":\"https://192.0.2.1/redfish/v1/Systems\"}}",
		"{\"Systems\":{\"@odata.id\":\"/a b\"}}",
		"{\"Systems\":[]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = js(bad[i]);
		ck_assert_int_eq(rf_parse_root(j, &r, err, sizeof(err)), -EBADMSG);
		json_decref(j);
	}
	/* A Vendor of the wrong type, an Oem that is no object. */
	j = js("{\"Systems\":{\"@odata.id\":\"/s\"},\"Vendor\":5,\"Oem\":[1]}");
	ck_assert_int_eq(rf_parse_root(j, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.vendor, "");
	json_decref(j);
}
END_TEST

START_TEST(test_pick_member)
{
	char uri[RF_URI_MAX], err[BMC_MESSAGE_MAX];
	json_t *j;

	j = js("{\"Members\":[{\"@odata.id\":\"/redfish/v1/Systems/1\"},"
	       "{\"@odata.id\":\"/redfish/v1/Systems/2\"}]}");
	ck_assert_int_eq(rf_pick_member(j, "", uri, err, sizeof(err)), 0);
	ck_assert_str_eq(uri, "/redfish/v1/Systems/1");
	ck_assert_int_eq(rf_pick_member(j, "2", uri, err, sizeof(err)), 0);
	ck_assert_str_eq(uri, "/redfish/v1/Systems/2");
	ck_assert_int_eq(rf_pick_member(j, "7", uri, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "no system \"7\" among the Ids: 1, 2");
	json_decref(j);
	/* An inlined Id wins over the URI's last segment; non-string Ids and
	 * @odata.ids are skipped. */
	j = js("{\"Members\":[{\"@odata.id\":5},{\"@odata.id\":\"/s/x\",\"Id\":7},"
	       "{\"@odata.id\":\"/s/abc\",\"Id\":\"node1\"},\"str\",null]}");
	ck_assert_int_eq(rf_pick_member(j, "node1", uri, err, sizeof(err)), 0);
	ck_assert_str_eq(uri, "/s/abc");
	ck_assert_int_eq(rf_pick_member(j, "x", uri, err, sizeof(err)), 0);
	ck_assert_int_eq(rf_pick_member(j, "abc", uri, err, sizeof(err)), -ENOENT);
	json_decref(j);
	/* Empty, missing, of the wrong type. */
	j = js("{\"Members\":[]}");
	ck_assert_int_eq(rf_pick_member(j, "", uri, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "no system \"\" among the Ids: none");
	json_decref(j);
	j = js("{\"Members\":{}}");
	ck_assert_int_eq(rf_pick_member(j, "", uri, err, sizeof(err)), -EBADMSG);
	json_decref(j);
	j = js("{}");
	ck_assert_int_eq(rf_pick_member(j, "", uri, err, sizeof(err)), -EBADMSG);
	json_decref(j);
	/* A huge collection: read up to RF_MAX_MEMBERS; the list in the
	 * message is cut to the buffer. */
	json_t *big = json_object(), *arr = json_array();
	for (int i = 0; i < RF_MAX_MEMBERS + 50; i++) {
		char u[32];
		snprintf(u, sizeof(u), "/s/%d", i);
		json_array_append_new(arr, json_pack("{s:s}", "@odata.id", u));
	}
	json_object_set_new(big, "Members", arr);
	ck_assert_int_eq(rf_pick_member(big, "3", uri, err, sizeof(err)), 0);
	ck_assert_int_eq(rf_pick_member(big, "1030", uri, err, sizeof(err)), -ENOENT);
	ck_assert_uint_lt(strlen(err), sizeof(err));
	json_decref(big);
}
END_TEST

static const char *sys_json =
	"{\"Id\":\"1\",\"PowerState\":\"On\",\"@odata.etag\":\"W/\\\"3\\\"\","
	"\"Manufacturer\":\"HPE\","
	"\"Boot\":{\"BootSourceOverrideTarget\":\"Pxe\",\"BootSourceOverrideEnabled\":\"Once\","
	"\"BootSourceOverrideMode\":\"UEFI\","
	"\"BootSourceOverrideTarget@Redfish.AllowableValues\":[\"None\",\"Pxe\",\"Hdd\",7,null]},"
	"\"Actions\":{\"#ComputerSystem.Reset\":{\"target\":\"/r/Reset\","
	"\"ResetType@Redfish.AllowableValues\":[\"On\",\"ForceOff\",{},3,\"Bogus\"]}},"
	"\"@Redfish.Settings\":{\"SettingsObject\":{\"@odata.id\":\"/r/Settings\"}},"
	"\"VirtualMedia\":{\"@odata.id\":\"/r/VirtualMedia\"},"
	"\"Links\":{\"ManagedBy\":[{\"@odata.id\":\"/m/BMC\"}]}}";

START_TEST(test_system)
{
	struct rf_system s;
	struct bmc_boot b;
	char err[128];
	json_t *j = js(sys_json);

	ck_assert_int_eq(rf_parse_system(j, &s, err, sizeof(err)), 0);
	json_decref(j);
	ck_assert_str_eq(s.id, "1");
	ck_assert_int_eq(s.power, BMC_POWER_ON);
	ck_assert_str_eq(s.etag, "W/\"3\"");
	ck_assert_str_eq(s.manufacturer, "HPE");
	ck_assert(s.targets_known);
	ck_assert_uint_eq(s.targets,
			  (1u << BMC_BOOT_NONE) | (1u << BMC_BOOT_PXE) | (1u << BMC_BOOT_DISK));
	ck_assert(s.resets_known);
	ck_assert_uint_eq(s.resets, RF_RESET_BIT(RF_RESET_ON) | RF_RESET_BIT(RF_RESET_FORCE_OFF));
	ck_assert_str_eq(s.reset_target, "/r/Reset");
	ck_assert_str_eq(s.settings, "/r/Settings");
	ck_assert_str_eq(s.manager, "/m/BMC");
	ck_assert_str_eq(s.vmedia, "/r/VirtualMedia");
	ck_assert(rf_system_boot(&s, &b));
	ck_assert_int_eq(b.device, BMC_BOOT_PXE);
	ck_assert(!b.persistent);
	ck_assert(b.efi);

	/* PowerState: strict. */
	static const struct {
		const char *json;
		enum bmc_power want;
	} pw[] = {
		{ "{\"Id\":\"1\",\"PowerState\":\"Off\"}", BMC_POWER_OFF },
		{ "{\"Id\":\"1\",\"PowerState\":\"PoweringOn\"}", BMC_POWER_UNKNOWN },
		{ "{\"Id\":\"1\",\"PowerState\":\"PoweringOff\"}", BMC_POWER_UNKNOWN },
		{ "{\"Id\":\"1\",\"PowerState\":1}", BMC_POWER_UNKNOWN },
		{ "{\"Id\":\"1\"}", BMC_POWER_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof(pw) / sizeof(pw[0]); i++) {
		j = js(pw[i].json);
		ck_assert_int_eq(rf_parse_system(j, &s, err, sizeof(err)), 0);
		ck_assert_int_eq(s.power, pw[i].want);
		json_decref(j);
	}
	/* Wrong types everywhere: no Boot, nothing advertised, no target. */
	j = js("{\"Id\":\"1\",\"Boot\":[],\"Actions\":{\"#ComputerSystem.Reset\":{\"target\":3,"
	       "\"ResetType@Redfish.AllowableValues\":\"On\"}},\"@odata.etag\":5,"
	       "\"Links\":{\"ManagedBy\":{}}}");
	ck_assert_int_eq(rf_parse_system(j, &s, err, sizeof(err)), 0);
	ck_assert(!s.boot_present);
	ck_assert(!s.resets_known);
	ck_assert(!s.targets_known);
	ck_assert_str_eq(s.reset_target, "");
	ck_assert_str_eq(s.etag, "");
	ck_assert_str_eq(s.manager, "");
	ck_assert(!rf_system_boot(&s, &b));
	json_decref(j);
	/* No Id, or not a string. */
	j = js("{\"PowerState\":\"On\"}");
	ck_assert_int_eq(rf_parse_system(j, &s, err, sizeof(err)), -EBADMSG);
	json_decref(j);
	j = js("{\"Id\":1}");
	ck_assert_int_eq(rf_parse_system(j, &s, err, sizeof(err)), -EBADMSG);
	json_decref(j);
	/* An Id too long to keep. */
	char buf[BMC_NAME_MAX + 64];
	snprintf(buf, sizeof(buf), "{\"Id\":\"%0*d\"}", BMC_NAME_MAX + 2, 1);
	j = js(buf);
	ck_assert_int_eq(rf_parse_system(j, &s, err, sizeof(err)), -EBADMSG);
	json_decref(j);
}
END_TEST

START_TEST(test_system_boot)
{
	struct rf_system s;
	struct bmc_boot b;

	memset(&s, 0, sizeof(s));
	s.boot_present = true;
	snprintf(s.boot_target, sizeof(s.boot_target), "Hdd");
	snprintf(s.boot_enabled, sizeof(s.boot_enabled), "Continuous");
	snprintf(s.boot_mode, sizeof(s.boot_mode), "Legacy");
	ck_assert(rf_system_boot(&s, &b));
	ck_assert_int_eq(b.device, BMC_BOOT_DISK);
	ck_assert(b.persistent);
	ck_assert(!b.efi);
	snprintf(s.boot_enabled, sizeof(s.boot_enabled), "Disabled");
	ck_assert(!rf_system_boot(&s, &b));
	snprintf(s.boot_enabled, sizeof(s.boot_enabled), "Sometimes");
	ck_assert(!rf_system_boot(&s, &b));
	snprintf(s.boot_enabled, sizeof(s.boot_enabled), "Once");
	snprintf(s.boot_target, sizeof(s.boot_target), "Floppy");
	ck_assert(!rf_system_boot(&s, &b));
	snprintf(s.boot_target, sizeof(s.boot_target), "UefiHttp");
	ck_assert(rf_system_boot(&s, &b));
	ck_assert_int_eq(b.device, BMC_BOOT_HTTP);
}
END_TEST

START_TEST(test_error_body)
{
	char m[RF_MSG_MAX];
	json_t *j;

	j = js("{\"error\":{\"message\":\"general\",\"@Message.ExtendedInfo\":"
	       "[{\"Message\":\"specific\\nline\"}]}}");
	rf_parse_error(j, m, sizeof(m));
	ck_assert_str_eq(m, "specific?line");
	json_decref(j);
	j = js("{\"error\":{\"message\":\"general\",\"@Message.ExtendedInfo\":[1]}}");
	rf_parse_error(j, m, sizeof(m));
	ck_assert_str_eq(m, "general");
	json_decref(j);
	j = js("{\"error\":\"flat\"}");
	rf_parse_error(j, m, sizeof(m));
	ck_assert_str_eq(m, "");
	json_decref(j);
	/* A long message is cut. */
	char big[4096];
	memset(big, 'x', sizeof(big));
	memcpy(big, "{\"error\":{\"message\":\"", 21);
	memcpy(big + sizeof(big) - 5, "\"}}", 4);
	j = js(big);
	rf_parse_error(j, m, sizeof(m));
	ck_assert_uint_eq(strlen(m), RF_MSG_MAX - 1);
	json_decref(j);
}
END_TEST

START_TEST(test_task)
{
	char m[BMC_MESSAGE_MAX];
	json_t *j;

	j = js("{\"TaskState\":\"Completed\"}");
	ck_assert_int_eq(rf_parse_task(j, m, sizeof(m)), 1);
	json_decref(j);
	j = js("{\"TaskState\":\"Running\"}");
	ck_assert_int_eq(rf_parse_task(j, m, sizeof(m)), 0);
	json_decref(j);
	j = js("{\"TaskState\":\"Exception\",\"Messages\":[{\"Message\":\"fan failure\"}]}");
	ck_assert_int_eq(rf_parse_task(j, m, sizeof(m)), -1);
	ck_assert_str_eq(m, "task Exception: fan failure");
	json_decref(j);
	j = js("{\"TaskState\":\"Killed\",\"Messages\":\"no\"}");
	ck_assert_int_eq(rf_parse_task(j, m, sizeof(m)), -1);
	ck_assert_str_eq(m, "task Killed");
	json_decref(j);
	j = js("{\"TaskState\":3}");
	ck_assert_int_eq(rf_parse_task(j, m, sizeof(m)), -EBADMSG);
	json_decref(j);
}
END_TEST

START_TEST(test_vmedia)
{
	struct rf_vmedia v;
	char uri[RF_URI_MAX], err[128];
	json_t *j;

	j = js("{\"Id\":\"Cd\",\"MediaTypes\":[\"CD\",\"DVD\"],\"Inserted\":true,"
	       "\"Actions\":{\"#VirtualMedia.InsertMedia\":{\"target\":\"/v/Insert\"},"
	       "\"#VirtualMedia.EjectMedia\":{\"target\":\"rel/Eject\"}}}");
	ck_assert_int_eq(rf_parse_vmedia(j, &v, err, sizeof(err)), 0);
	ck_assert(v.cd);
	ck_assert(v.inserted);
	ck_assert_str_eq(v.insert, "/v/Insert");
	ck_assert_str_eq(v.eject, ""); /* not a path */
	json_decref(j);
	j = js("{\"Id\":\"Floppy\",\"MediaTypes\":[\"Floppy\",5],\"Inserted\":\"yes\"}");
	ck_assert_int_eq(rf_parse_vmedia(j, &v, err, sizeof(err)), 0);
	ck_assert(!v.cd);
	ck_assert(!v.inserted);
	json_decref(j);
	j = js("{\"MediaTypes\":[\"CD\"]}");
	ck_assert_int_eq(rf_parse_vmedia(j, &v, err, sizeof(err)), -EBADMSG);
	json_decref(j);
	j = js("{\"VirtualMedia\":{\"@odata.id\":\"/m/VM\"}}");
	ck_assert_int_eq(rf_parse_manager_vmedia(j, uri), 0);
	ck_assert_str_eq(uri, "/m/VM");
	json_decref(j);
	j = js("{\"VirtualMedia\":\"/m/VM\"}");
	ck_assert_int_eq(rf_parse_manager_vmedia(j, uri), -ENOENT);
	json_decref(j);
}
END_TEST

#define B(r) RF_RESET_BIT(RF_RESET_##r)
START_TEST(test_choose_reset)
{
	const struct rf_vendor *generic = rf_vendor_find(NULL);
	enum rf_reset out[2];
	static const struct {
		enum bmc_power_action act;
		bool known;
		unsigned allowed;
		int n;
		enum rf_reset a, b;
	} t[] = {
		{ BMC_ACT_ON, true, B(ON) | B(FORCE_ON), 1, RF_RESET_ON, 0 },
		{ BMC_ACT_ON, true, B(FORCE_ON), 1, RF_RESET_FORCE_ON, 0 },
		{ BMC_ACT_ON, true, B(FORCE_OFF), -ENOTSUP, 0, 0 },
		{ BMC_ACT_OFF, true, B(ON) | B(FORCE_OFF), 1, RF_RESET_FORCE_OFF, 0 },
		{ BMC_ACT_OFF, true, B(GRACEFUL_SHUTDOWN), -ENOTSUP, 0, 0 },
		{ BMC_ACT_SOFT, true, B(GRACEFUL_SHUTDOWN), 1, RF_RESET_GRACEFUL_SHUTDOWN, 0 },
		{ BMC_ACT_RESET, true, B(FORCE_RESTART) | B(GRACEFUL_RESTART), 1,
		  RF_RESET_FORCE_RESTART, 0 },
		{ BMC_ACT_RESET, true, B(GRACEFUL_RESTART), 1, RF_RESET_GRACEFUL_RESTART, 0 },
		{ BMC_ACT_CYCLE, true, B(POWER_CYCLE) | B(ON) | B(FORCE_OFF), 1,
		  RF_RESET_POWER_CYCLE, 0 },
		{ BMC_ACT_CYCLE, true, B(ON) | B(FORCE_OFF), 2, RF_RESET_FORCE_OFF, RF_RESET_ON },
		{ BMC_ACT_CYCLE, true, B(FORCE_ON) | B(FORCE_OFF), 2, RF_RESET_FORCE_OFF,
		  RF_RESET_FORCE_ON },
		{ BMC_ACT_CYCLE, true, B(ON), -ENOTSUP, 0, 0 },
		{ BMC_ACT_CYCLE, true, 0, -ENOTSUP, 0, 0 },
		/* Nothing advertised: the standard names. */
		{ BMC_ACT_CYCLE, false, 0, 1, RF_RESET_POWER_CYCLE, 0 },
		{ BMC_ACT_ON, false, 0, 1, RF_RESET_ON, 0 },
		{ (enum bmc_power_action)99, true, ~0u, -ENOTSUP, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int n = rf_choose_reset(t[i].act, t[i].known, t[i].allowed, generic, out);
		ck_assert_msg(n == t[i].n, "case %zu: %d", i, n);
		if (n >= 1)
			ck_assert_msg(out[0] == t[i].a, "case %zu: %s", i, rf_reset_name(out[0]));
		if (n == 2)
			ck_assert_msg(out[1] == t[i].b, "case %zu: %s", i, rf_reset_name(out[1]));
	}
}
END_TEST

START_TEST(test_vendors)
{
	size_t n;
	const struct rf_vendor *v = rf_vendor_table(&n), *f;
	enum rf_reset out[2];

	ck_assert_uint_ge(n, 2);
	ck_assert_str_eq(v[n - 1].name, "generic");
	ck_assert_ptr_eq(rf_vendor_find(NULL), &v[n - 1]);
	ck_assert_ptr_eq(rf_vendor_find(""), &v[n - 1]);
	ck_assert_ptr_eq(rf_vendor_find("Ironbell Emulated"), &v[n - 1]);
	ck_assert_ptr_eq(rf_vendor_find("Contoso"), &v[n - 1]);
	/* Every entry is found by its own match, case aside. */
	for (size_t i = 0; i + 1 < n; i++) {
		char low[RF_VENDOR_MAX];
		size_t k;
		ck_assert_ptr_nonnull(v[i].match);
		for (k = 0; v[i].match[k] && k + 1 < sizeof(low); k++)
			low[k] = (char)(v[i].match[k] | 0x20);
		low[k] = '\0';
		ck_assert_ptr_eq(rf_vendor_find(v[i].match), &v[i]);
		ck_assert_ptr_eq(rf_vendor_find(low), &v[i]);
	}
	/* emu-nocycle (redfish_emu.py --vendor no-powercycle): a cycle is off
	 * + on even where PowerCycle is listed, and where nothing is. */
	f = rf_vendor_find("Ironbell Emulated NoCycle");
	ck_assert_str_eq(f->name, "emu-nocycle");
	ck_assert_int_eq(
		rf_choose_reset(BMC_ACT_CYCLE, true, B(POWER_CYCLE) | B(ON) | B(FORCE_OFF), f, out),
		2);
	ck_assert_int_eq(out[0], RF_RESET_FORCE_OFF);
	ck_assert_int_eq(out[1], RF_RESET_ON);
	ck_assert_int_eq(rf_choose_reset(BMC_ACT_CYCLE, false, 0, f, out), 2);
	ck_assert(!f->boot_on_settings);
	/* emu-settings (--vendor settings-boot): the Settings object. */
	f = rf_vendor_find("Ironbell Emulated Settings");
	ck_assert_str_eq(f->name, "emu-settings");
	ck_assert(f->boot_on_settings);
	ck_assert_int_eq(rf_choose_reset(BMC_ACT_CYCLE, false, 0, f, out), 1);
	/* hpe: iLO, no PowerCycle. */
	f = rf_vendor_find("HPE");
	ck_assert_str_eq(f->name, "hpe");
	ck_assert_int_eq(rf_choose_reset(BMC_ACT_CYCLE, false, 0, f, out), 2);
	ck_assert_int_eq(rf_choose_reset(BMC_ACT_OFF, false, 0, f, out), 1);
	ck_assert_int_eq(out[0], RF_RESET_FORCE_OFF);
	/* generic: neither. */
	f = rf_vendor_find(NULL);
	ck_assert_int_eq(rf_choose_reset(BMC_ACT_CYCLE, false, 0, f, out), 1);
	ck_assert(!f->boot_on_settings);
}
END_TEST

START_TEST(test_names)
{
	enum bmc_boot_device d;

	ck_assert_str_eq(rf_reset_name(RF_RESET_POWER_CYCLE), "PowerCycle");
	ck_assert_str_eq(rf_reset_name(RF_RESET_MAX), "?");
	ck_assert_str_eq(rf_boot_target_name(BMC_BOOT_DISK), "Hdd");
	ck_assert_str_eq(rf_boot_target_name((enum bmc_boot_device)42), "None");
	ck_assert_int_eq(rf_boot_target_parse("BiosSetup", &d), 0);
	ck_assert_int_eq(d, BMC_BOOT_BIOS);
	ck_assert_int_eq(rf_boot_target_parse("Usb", &d), -ENOENT);
}
END_TEST

/* The engine's contract (bmc/provider.h): a callback never runs from
 * submit(), runs exactly once, and free() cancels what is pending. */
struct seen {
	int calls;
	struct bmc_reply last;
};

static void on_done(const struct bmc_reply *r, void *ud)
{
	struct seen *s = ud;

	s->calls++;
	s->last = *r;
}

static void *engine_make(void)
{
	struct bmc_settings set = { .http_timeout_ms = 5000 };
	char err[128] = "";
	void *e = NULL;

	ck_assert_msg(bmc_redfish_ops.new(&set, &e, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_ge(bmc_redfish_ops.fd(e), 0);
	return e;
}

/* A boot device outside enum bmc_boot_device cannot be expressed: submit()
 * says so, rather than let the call index the system's targets with it
 * (1u << device) once the system is read. */
START_TEST(test_engine_bad_device)
{
	struct bmc_endpoint ep = { .host = "127.0.0.1", .port = 1, .user = "u", .password = "p" };
	struct bmc_call call = { .cmd = BMC_CMD_BOOT_SET,
				 .boot = { .device = (enum bmc_boot_device)40 } };
	struct seen a = { 0 };
	void *e = engine_make();

	ck_assert_int_eq(bmc_redfish_ops.submit(e, &ep, &call, on_done, &a), -EINVAL);
	bmc_redfish_ops.free(e, 0);
	ck_assert_int_eq(a.calls, 0);
}
END_TEST

START_TEST(test_engine_cancel)
{
	struct bmc_endpoint ep = { .host = "127.0.0.1", .port = 1, .user = "u", .password = "p" };
	struct bmc_call call = { .cmd = BMC_CMD_POWER_GET };
	struct seen a = { 0 }, b = { 0 };
	void *e = engine_make();

	ck_assert_int_eq(bmc_redfish_ops.submit(e, &ep, &call, on_done, &a), 0);
	ck_assert_int_eq(bmc_redfish_ops.submit(e, &ep, &call, on_done, &b), 0);
	ck_assert_int_eq(a.calls + b.calls, 0); /* not from submit() */
	ck_assert_int_eq(bmc_redfish_ops.timeout_ms(e, bmc_now_ms()), 0);
	call.cmd = BMC_CMD_MAX;
	ck_assert_int_eq(bmc_redfish_ops.submit(e, &ep, &call, on_done, &a), -EINVAL);
	ck_assert_uint_eq(bmc_redfish_ops.sessions(e), 0);
	bmc_redfish_ops.free(e, 0);
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(b.calls, 1);
	ck_assert_int_eq(a.last.fail, BMC_FAIL_CANCELED);
	ck_assert_int_eq(b.last.fail, BMC_FAIL_CANCELED);
}
END_TEST

START_TEST(test_engine_refused)
{
	struct bmc_endpoint ep = { .host = "127.0.0.1", .port = 1, .user = "u", .password = "p" };
	struct bmc_call call = { .cmd = BMC_CMD_POWER_SET, .action = BMC_ACT_ON };
	struct seen a = { 0 };
	void *e = engine_make();

	ck_assert_int_eq(bmc_redfish_ops.submit(e, &ep, &call, on_done, &a), 0);
	/* Port 1 refuses: the call ends from process(), bounded. */
	for (int i = 0; i < 1000 && a.calls == 0; i++) {
		struct pollfd pfd = { .fd = bmc_redfish_ops.fd(e), .events = POLLIN };
		int t = bmc_redfish_ops.timeout_ms(e, bmc_now_ms());
		poll(&pfd, 1, t < 0 || t > 100 ? 100 : t);
		bmc_redfish_ops.process(e, bmc_now_ms());
	}
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(a.last.fail, BMC_FAIL_NETWORK);
	ck_assert_msg(strncmp(a.last.message, "GET /redfish/v1: ", 17) == 0, "%s", a.last.message);
	ck_assert_ptr_null(strstr(a.last.message, "p@"));
	ck_assert_int_eq(bmc_redfish_ops.timeout_ms(e, bmc_now_ms()), -1);
	bmc_redfish_ops.free(e, 0);
	ck_assert_int_eq(a.calls, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("redfish");
	TCase *tc = tcase_create("redfish");

	UNIT_TEST(tc, test_json_parse);
	UNIT_TEST(tc, test_json_parse_clean);
	UNIT_TEST(tc, test_uri_ok);
	UNIT_TEST(tc, test_root);
	UNIT_TEST(tc, test_pick_member);
	UNIT_TEST(tc, test_system);
	UNIT_TEST(tc, test_system_boot);
	UNIT_TEST(tc, test_error_body);
	UNIT_TEST(tc, test_task);
	UNIT_TEST(tc, test_vmedia);
	UNIT_TEST(tc, test_choose_reset);
	UNIT_TEST(tc, test_vendors);
	UNIT_TEST(tc, test_names);
	UNIT_TEST(tc, test_engine_cancel);
	UNIT_TEST(tc, test_engine_bad_device);
	UNIT_TEST(tc, test_engine_refused);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
