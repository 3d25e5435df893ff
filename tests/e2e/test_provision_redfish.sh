#!/bin/sh
# test_provision_redfish — test_provision with the Redfish emulator as the
# BMC (tests/redfish/redfish_emu.py --hook, over HTTPS): ironbelld's
# Redfish provider powers the VM off, sets the one-time Pxe override and
# resets it on; the emulator's resets and override call the same
# vm-bmc.sh, so the hook sees the same calls as under ipmi_sim, and the
# Machine's power state is the VM's.
PROV_BMC=redfish
. "$top_srcdir/tests/e2e/test_provision.sh"
