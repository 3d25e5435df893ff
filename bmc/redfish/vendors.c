/* vendors — what one make of BMC does differently from the standard, as a
 * table, so that a new quirk is one line and its test (check_redfish).
 *
 * DESIGN: a vendor is recognised by a case-insensitive substring of the
 * service root's Vendor (Redfish 1.5), else of its Oem object's key, else
 * of the system's Manufacturer; the first match wins, the last entry is
 * the generic one. What an entry can say:
 *   lacks_resets      reset types the BMC refuses although it may list
 *                     them (or when it lists none): a cycle there is
 *                     ForceOff then On;
 *   boot_on_settings  the boot override is PATCHed to the system's
 *                     @Redfish.Settings SettingsObject (DSP0266 §7.9),
 *                     applied by the BMC at the next boot. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "bmc/redfish/redfish.h"

static const struct rf_vendor vendors[] = {
	/* tests/redfish/redfish_emu.py --vendor no-powercycle. */
	{ .name = "emu-nocycle",
	  .match = "Ironbell Emulated NoCycle",
	  .lacks_resets = RF_RESET_BIT(RF_RESET_POWER_CYCLE) },
	/* tests/redfish/redfish_emu.py --vendor settings-boot: the boot
	 * override goes to the Settings object. */
	{ .name = "emu-settings", .match = "Ironbell Emulated Settings", .boot_on_settings = true },
	/* HPE iLO has no PowerCycle (its ResetType@Redfish.AllowableValues
	 * lists On, ForceOff, GracefulShutdown, ForceRestart, Nmi,
	 * PushPowerButton, GracefulRestart): said here too, so that a cycle
	 * is off + on even where the list is missing. */
	{ .name = "hpe", .match = "HPE", .lacks_resets = RF_RESET_BIT(RF_RESET_POWER_CYCLE) },
	{ .name = "generic", .match = NULL },
};
#define N_VENDORS (sizeof(vendors) / sizeof(vendors[0]))

/* strcasestr without _GNU_SOURCE's dependence: does hay hold needle? */
static bool contains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return false;
}

const struct rf_vendor *rf_vendor_find(const char *vendor)
{
	for (size_t i = 0; vendor && vendor[0] && i + 1 < N_VENDORS; i++)
		if (contains(vendor, vendors[i].match))
			return &vendors[i];
	return &vendors[N_VENDORS - 1];
}

const struct rf_vendor *rf_vendor_table(size_t *n)
{
	*n = N_VENDORS;
	return vendors;
}
