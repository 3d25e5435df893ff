#!/bin/sh
# gen-hardware FIRST COUNT PER PATTERN: writes Hardware FIRST to
# FIRST+COUNT-1 as YAML documents, PER a file, into the files the printf
# PATTERN names with the file's number (e.g. "$dir/hw-%04d.yaml"): realistic
# objects of one interface each (MAC, IP, hostname, labels, netboot), as an
# operator writes them. Used by the store's apply benchmark and by
# test_apply_memory, so both measure the same objects. Written with awk, so
# that generating them costs little beside what is measured.
set -eu
[ $# -eq 4 ] || { echo "usage: $0 FIRST COUNT PER PATTERN" >&2; exit 2; }
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
