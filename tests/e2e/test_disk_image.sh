#!/bin/sh
# test_disk_image — the disk image that the provisioning workflow writes
# (tools/e2e-provision-assets) boots by itself from QEMU's virtio disk,
# under SeaBIOS (syslinux's boot sector) and under OVMF (syslinux.efi as
# the removable-media loader), prints its marker, shows the cloud-init
# data written into its filesystem, and gets its instance metadata from
# ironbelld over HTTP, found by the address ironbelld's DHCP gave it. The
# BIOS boot finds the metadata service from the DHCP answer; the UEFI boot
# gets a disk holding what the workflow's cloudinit2disk action writes
# (user-data, meta-data, metadata-url), put there with mtools. No
# netboot: the NIC has no option ROM and the disk comes first. See
# tests/e2e/osie.sh.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"
. "$top_srcdir/tests/e2e/osie.sh"

e2e_setup
osie_assets
cat >"$IB_TMP/vm-md.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: vm1
  namespace: default
spec:
  agentID: $E2E_AGENT
  userData: |
    #cloud-config
    hostname: vm1-disk
  interfaces:
  - dhcp:
      mac: $E2E_MAC
      arch: x86_64
      hostname: vm1
      ip:
        address: $E2E_IP
        netmask: 255.255.255.0
        gateway: $E2E_SERVER
    netboot:
      allowPXE: true
  metadata:
    instance:
      id: e2e-instance-1
      hostname: vm1-disk
EOF
ib apply -f "$IB_TMP/vm-md.yaml"
[ "$rc" = 0 ] || bail_out "cannot apply the Hardware's metadata: $err"

md_want="url=http://$E2E_SERVER:7080 hostname=vm1-disk local-ipv4=$E2E_IP instance-id=e2e-instance-1"

# check NAME: the marker and the metadata line.
check() {
	_m=$(osie_line IRONBELL-E2E-DISK-BOOTED)
	if [ -n "$_m" ]; then
		pass "$1: the VM booted its disk"
		diag "$1: $E2E_SECONDS s from QEMU's start to the end of the disk's /init"
	else
		fail "$1: the VM booted its disk"
		osie_dump "$1"
	fi
	like "$_m" "^IRONBELL-E2E-DISK-BOOTED marker=$OSIE_MARKER\$" "$1: the image's own marker"
	_l=$(osie_line IRONBELL-E2E-METADATA)
	is "$_l" "IRONBELL-E2E-METADATA $md_want" "$1: the metadata came from ironbelld"
	[ -n "$(osie_line IRONBELL-E2E-DISK-DONE)" ]
	is "$?" 0 "$1: the disk's /init ran to its end"
}

disk=$IB_TMP/disk-bios.img
cp "$OSIE_DISK" "$disk" || bail_out "cannot copy the disk image"
osie_boot disk-bios 'IRONBELL-E2E-DISK-DONE' -machine pc,graphics=off \
	-drive "file=$disk,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0,bootindex=0 \
	-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC,romfile="
check bios
like "$(tr -d '\r' <"$E2E_FIRMWARE")" "Loading /vmlinuz" "bios: syslinux loaded the kernel"
is "$(osie_line IRONBELL-E2E-USERDATA)" "" "bios: no user-data on a disk nothing was written to"

if [ -f "$E2E_OVMF_CODE" ]; then
	disk=$IB_TMP/disk-uefi.img
	cp "$OSIE_DISK" "$disk" || bail_out "cannot copy the disk image"
	printf '#cloud-config\nhostname: vm1-disk\n' >"$IB_TMP/user-data"
	printf 'instance-id: e2e-instance-1\n' >"$IB_TMP/meta-data"
	echo "http://$E2E_SERVER:7080" >"$IB_TMP/metadata-url"
	MTOOLS_SKIP_CHECK=1 mcopy -o -i "$disk" "$IB_TMP/user-data" "$IB_TMP/meta-data" \
		"$IB_TMP/metadata-url" ::/ || bail_out "cannot write into the disk's filesystem"
	cp "$E2E_OVMF_VARS" "$IB_TMP/vars.fd"
	osie_boot disk-uefi 'IRONBELL-E2E-DISK-DONE' -machine q35 \
		-drive "if=pflash,format=raw,readonly=on,file=$E2E_OVMF_CODE" \
		-drive "if=pflash,format=raw,file=$IB_TMP/vars.fd" \
		-drive "file=$disk,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0,bootindex=0 \
		-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC,romfile="
	check uefi
	is "$(osie_line IRONBELL-E2E-USERDATA)" \
		'IRONBELL-E2E-USERDATA bytes=33 text=#cloud-config\nhostname: vm1-disk\n' \
		"uefi: the user-data written into the disk's filesystem is read back"
else
	for _t in 1 2 3 4 5; do
		skip "uefi: OVMF" "OVMF is not installed (ovmf)"
	done
fi
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
