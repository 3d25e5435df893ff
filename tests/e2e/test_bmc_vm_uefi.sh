#!/bin/sh
# test_bmc_vm_uefi — test_bmc_vm with a UEFI machine: OVMF (its NVRAM a
# copy of OVMF_VARS kept across power cycles) netboots with its own PXE
# client through TFTP when ironbelld's Job sets the one-time PXE boot.
PROV_FIRMWARE=uefi
. "$top_srcdir/tests/e2e/test_bmc_vm.sh"
