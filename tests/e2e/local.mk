# End-to-end: a QEMU virtual machine boots over the network from ironbelld
# (BIOS with QEMU's iPXE ROM; UEFI PXE through TFTP; UEFI HTTP Boot), in a
# network namespace. Root, QEMU and OVMF are needed (CI has them); the
# kernel and initrd come from Debian packages (tools/e2e-assets) into
# tests/e2e/cache in the build tree. test_bmc_vm also needs ipmi_sim and
# ipmitool: a simulated BMC (tests/e2e/vm-bmc.sh) powers the VM. The
# provisioning tests' images (the agent's initramfs and a disk image that
# SeaBIOS and OVMF boot) are made there too, from the same packages,
# syslinux and the build's static ironbell-agent
# (tools/e2e-provision-assets, tests/e2e/osie.sh). test_provision_redfish
# has the Redfish emulator (tests/redfish/) as the VM's BMC instead: it
# needs openssl and curl, not ipmi_sim. test_provision_kube runs
# ironbelld in Kubernetes mode against the API-server emulator of
# tests/kube/ (tests/integration/kube.mk), with every object made and
# read with kubectl: it needs kubectl, openssl and curl too.
# test_boot_kea boots the VM with kea-dhcp4 and the Kea hook library
# (dhcp/kea) as its DHCP server, ironbelld's own DHCP server off: it
# needs kea-dhcp4 and the hook built (kea-dev).
E2E_TESTS = \
	tests/e2e/test_boot_bios.sh \
	tests/e2e/test_boot_uefi_pxe.sh \
	tests/e2e/test_boot_uefi_http.sh \
	tests/e2e/test_boot_kea.sh \
	tests/e2e/test_bmc_vm.sh \
	tests/e2e/test_bmc_vm_uefi.sh \
	tests/e2e/test_disk_image.sh \
	tests/e2e/test_osie_workflow.sh \
	tests/e2e/test_provision.sh \
	tests/e2e/test_provision_uefi.sh \
	tests/e2e/test_provision_redfish.sh \
	tests/e2e/test_provision_kube.sh \
	tests/e2e/test_provision_fail.sh
TESTS += $(E2E_TESTS)
EXTRA_DIST += $(E2E_TESTS) tests/e2e/e2e.sh tests/e2e/provision.sh tests/e2e/vm-bmc.sh \
	tests/e2e/osie.sh tests/e2e/provision-template.yaml tests/e2e/provision-template-fail.yaml
dist_noinst_SCRIPTS += tools/e2e-assets tools/e2e-provision-assets
clean-local: clean-e2e-cache
clean-e2e-cache:
	rm -rf tests/e2e/cache tests/cache
.PHONY: clean-e2e-cache
