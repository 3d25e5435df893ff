#!/bin/sh
# test_provision_uefi — test_provision with a UEFI machine: OVMF (its
# NVRAM a copy of OVMF_VARS kept across power cycles) netboots with its
# own PXE client through TFTP when the Workflow's netboot Job sets the
# one-time PXE boot, and boots the disk's EFI loader after the reboot.
PROV_FIRMWARE=uefi
. "$top_srcdir/tests/e2e/test_provision.sh"
