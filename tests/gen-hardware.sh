#!/bin/sh
# gen-hardware [--rich] FIRST COUNT PER PATTERN: writes Hardware FIRST to
# FIRST+COUNT-1 as YAML documents, PER a file, into the files the printf
# PATTERN names with the file's number (e.g. "$dir/hw-%04d.yaml"): realistic
# objects of one interface each (MAC, IP, hostname, labels, netboot), as an
# operator writes them. Used by the store's apply benchmark and by
# test_apply_memory, so both measure the same objects. Written with awk, so
# that generating them costs little beside what is measured.
#
# --rich: the same first interface (MAC 02:00:..., address 10.x.y.z), then
# one to three more (MAC 02:0k:..., address 10+k.x.y.z, k = 1..3), two to
# four disks in spec.disks and in metadata.instance.storage with their
# partitions, metadata of the size a fleet's carries (instance id,
# hostname, facility, plan, operating system, tags, ips, ssh keys: 1.8 to
# 2 KiB of JSON) and 0.9 KiB of cloud-config user data, 3.7 to 4.2 KiB of
# JSON in all: the objects whose decoding the HTTP benchmarks must see. Without it the objects are
# exactly as before (other tests depend on them byte for byte).
set -eu
rich=0
if [ "${1:-}" = --rich ]; then
	rich=1
	shift
fi
[ $# -eq 4 ] || { echo "usage: $0 [--rich] FIRST COUNT PER PATTERN" >&2; exit 2; }
if [ "$rich" = 0 ]; then
awk -v first="$1" -v n="$2" -v per="$3" -v pattern="$4" 'BEGIN {
	for (i = first; i < first + n; i++) {
		f = sprintf(pattern, int((i - first) / per));
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n" > f;
		printf "metadata:\n  name: node-%06d\n  labels: {rack: r%d}\n", i, i % 40 > f;
		printf "spec:\n  interfaces:\n    - dhcp:\n" > f;
		printf "        mac: \"02:00:%02x:%02x:%02x:%02x\"\n", int(i / 16777216) % 256, int(i / 65536) % 256, int(i / 256) % 256, i % 256 > f;
		printf "        hostname: node-%06d\n        lease_time: 86400\n", i > f;
		printf "        ip: {address: 10.%d.%d.%d, netmask: 255.255.0.0, gateway: 10.%d.0.1}\n", int(i / 62500) + 1, int(i / 250) % 250, i % 250 + 1, int(i / 62500) + 1 > f;
		printf "      netboot: {allowPXE: true, allowWorkflow: true}\n" > f;
	}
}'
exit 0
fi
awk -v first="$1" -v n="$2" -v per="$3" -v pattern="$4" '
function mac(k, i) {
	return sprintf("02:%02x:%02x:%02x:%02x:%02x", k, int(i / 16777216) % 256,
		int(i / 65536) % 256, int(i / 256) % 256, i % 256);
}
function ip(k, i) {
	return sprintf("%d.%d.%d.%d", 10 + k, int(i / 62500) + 1, int(i / 250) % 250, i % 250 + 1);
}
BEGIN {
	for (i = first; i < first + n; i++) {
		f = sprintf(pattern, int((i - first) / per));
		nif = 2 + i % 3;
		ndisk = 2 + (i + 1) % 3;
		rack = i % 40;
		printf "---\napiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\n" > f;
		printf "metadata:\n  name: node-%06d\n  labels: {rack: r%d, plan: c3.medium.x86}\n", i, rack > f;
		printf "spec:\n  interfaces:\n" > f;
		for (k = 0; k < nif; k++) {
			printf "    - dhcp:\n        mac: \"%s\"\n", mac(k, i) > f;
			printf "        hostname: node-%06d%s\n        lease_time: 86400\n", i, k ? "-eth" k : "" > f;
			printf "        arch: x86_64\n        uefi: true\n" > f;
			printf "        name_servers: [10.0.0.53, 10.0.1.53]\n        time_servers: [10.0.0.123]\n" > f;
			printf "        ip: {address: %s, netmask: 255.255.0.0, gateway: %d.%d.0.1}\n", ip(k, i), 10 + k, int(i / 62500) + 1 > f;
			printf "      netboot: {allowPXE: %s, allowWorkflow: %s}\n", k ? "false" : "true", k ? "false" : "true" > f;
		}
		printf "  disks:\n" > f;
		for (d = 0; d < ndisk; d++)
			printf "    - device: /dev/nvme%dn1\n", d > f;
		printf "  metadata:\n    state: provisioning\n" > f;
		printf "    manufacturer: {id: m-%04d, slug: supermicro}\n", i % 97 > f;
		printf "    facility: {plan_slug: c3.medium.x86, plan_version_slug: c3.medium.x86.01, facility_code: fr%d}\n", rack % 4 > f;
		printf "    instance:\n      id: i-%06d\n      hostname: node-%06d.rack%02d.lab.example\n", i, i, rack > f;
		printf "      state: active\n      allow_pxe: true\n      always_pxe: false\n      network_ready: true\n" > f;
		printf "      operating_system: {slug: ubuntu_22_04, distro: ubuntu, version: \"22.04\", image_tag: \"2024.06.01\", os_slug: ubuntu_22_04}\n" > f;
		printf "      tags: [rack-%02d, row-%d, role-worker, pool-general, env-production, team-platform]\n", rack, rack % 8 > f;
		printf "      crypted_root_password: \"$6$rounds=4096$saltsalt%06d$7Lq0Yc8ZkQ2V1mR3hJ5nT9wX4bE6uA0sD8fG2hK4lP6zC1vB3nM5qW7eR9tY1uI3oP5aS7dF9gH1jK3lZ5xC7vB9n\"\n", i > f;
		printf "      ssh_keys:\n" > f;
		printf "        - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG%06dq7XrV0kq3n1m2b4v6c8x0z9y7w5u3t1s operator@bastion\n", i > f;
		printf "        - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH%06dp8YsW1lr4o2n3c5w7d9y1a0z8x6v4u2t deploy@ci\n", i > f;
		printf "      ips:\n" > f;
		printf "        - {address: %s, netmask: 255.255.0.0, gateway: 10.%d.0.1, family: 4, public: false, management: true}\n", ip(0, i), int(i / 62500) + 1 > f;
		printf "        - {address: 192.%d.%d.%d, netmask: 255.255.255.0, gateway: 192.%d.%d.1, family: 4, public: true}\n", int(i / 62500), int(i / 250) % 250, i % 250 + 2, int(i / 62500), int(i / 250) % 250 > f;
		printf "        - {address: \"2001:db8:%x:%x::2\", netmask: \"ffff:ffff:ffff:ffff::\", gateway: \"2001:db8:%x:%x::1\", family: 6, public: true}\n", int(i / 65536), i % 65536, int(i / 65536), i % 65536 > f;
		printf "      storage:\n        disks:\n" > f;
		for (d = 0; d < ndisk; d++) {
			printf "          - device: /dev/nvme%dn1\n            wipe_table: true\n            partitions:\n", d > f;
			if (d == 0)
				printf "              - {label: EFI, number: 1, size: 1048576}\n              - {label: BOOT, number: 2, size: 2097152}\n              - {label: ROOT, number: 3, size: 0}\n" > f;
			else
				printf "              - {label: DATA%d, number: 1, size: 0}\n", d > f;
		}
		printf "        filesystems:\n" > f;
		printf "          - mount: {device: /dev/nvme0n1p3, format: ext4, point: /, create: {force: true, options: [-L, ROOT]}}\n" > f;
		printf "          - mount: {device: /dev/nvme0n1p1, format: vfat, point: /boot/efi, create: {options: [-F, \"32\", -n, EFI]}}\n" > f;
		printf "  userData: |\n    #cloud-config\n    hostname: node-%06d\n    fqdn: node-%06d.rack%02d.lab.example\n", i, i, rack > f;
		printf "    manage_etc_hosts: true\n    timezone: Etc/UTC\n    users:\n      - name: ops\n" > f;
		printf "        groups: [adm, sudo]\n        shell: /bin/bash\n        sudo: \"ALL=(ALL) NOPASSWD:ALL\"\n" > f;
		printf "        ssh_authorized_keys:\n          - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG%06dq7XrV0kq3n1m2b4v6c8x0z9y7w5u3t1s operator@bastion\n", i > f;
		printf "    ntp:\n      enabled: true\n      servers: [10.0.0.123]\n" > f;
		printf "    package_update: true\n    packages: [chrony, lldpd, ipmitool, nvme-cli, smartmontools, jq]\n" > f;
		printf "    write_files:\n      - path: /etc/ironbell/node.env\n        permissions: \"0644\"\n" > f;
		printf "        content: |\n          NODE_NAME=node-%06d\n          RACK=r%d\n          FACILITY=fr%d\n          PLAN=c3.medium.x86\n", i, rack, rack % 4 > f;
		printf "    runcmd:\n      - [systemctl, enable, --now, chrony]\n      - [systemctl, enable, --now, lldpd]\n" > f;
		printf "      - [sh, -c, \"echo provisioned $(date -u +%%FT%%TZ) >> /var/log/ironbell-provision.log\"]\n" > f;
		printf "    final_message: \"node-%06d up after $UPTIME seconds\"\n", i > f;
	}
}'
