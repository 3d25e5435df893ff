#!/bin/sh
# test_osie_workflow — a workflow run by ironbell-agent on a virtual
# machine, then the machine boots what it wrote: the VM (BIOS, QEMU's iPXE
# ROM) netboots from ironbelld into the osie of tools/e2e-provision-assets
# (the cloud kernel, and an initramfs whose /init starts ironbell-agent
# with the host runtime, its worker ID and server from the kernel command
# line of ironbelld's iPXE script); the agent runs the Template of
# tests/e2e/provision-template.yaml: the disk image, served by ironbelld
# from ipxe.osie_dir, streamed onto the VM's blank virtio disk, then the
# machine's cloud-init data fetched from ironbelld's metadata service and
# written into the disk's filesystem. The Workflow must end SUCCESS with
# every action's duration. The same disk is then booted (no netboot) and
# must print its marker, the user-data ironbelld served, and its metadata.
# Then a Workflow whose second action fails must end FAILED with the
# action's exit status and output in its message
# (tests/e2e/provision-template-fail.yaml).
# No BMC here: QEMU is started and stopped by the test. See
# tests/e2e/osie.sh.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"
. "$top_srcdir/tests/e2e/osie.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is not installed"
e2e_setup
osie_assets

osie_daemon_osie || bail_out "ironbelld did not start again"

cat >"$IB_TMP/objects.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: vm1
  namespace: default
spec:
  agentID: $E2E_AGENT
  userData: |
    #cloud-config
    hostname: vm1-installed
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
      allowWorkflow: true
  metadata:
    instance:
      id: e2e-instance-1
      hostname: vm1-installed
EOF
ib apply -f "$top_srcdir/tests/e2e/provision-template.yaml"
[ "$rc" = 0 ] || bail_out "cannot apply the Template: $err"
ib apply -f "$IB_TMP/objects.yaml"
[ "$rc" = 0 ] || bail_out "cannot apply the Hardware: $err"

# wf FIELD-EXPRESSION: a Python expression on the Workflow $wf_name's
# JSON (d).
wf() {
	ib get workflow "$wf_name" -o json
	printf '%s' "$out" | "$PY" -c 'import json, sys
try:
    d = json.load(sys.stdin)
    print(eval(sys.argv[1]))
except Exception as e:
    print("<%s>" % e)' "$1"
}
# wf_ended: the Workflow is over; asked every 2 s of osie_wait's polls.
_polls=0
wf_ended() {
	_polls=$((_polls + 1))
	[ $((_polls % 20)) -eq 1 ] || return 1
	case "$(wf 'd.get("status", {}).get("state", "")')" in
	SUCCESS | FAILED | TIMEOUT) return 0 ;;
	esac
	return 1
}

# provision FW: a Workflow for the VM, the VM netbooted with firmware FW
# (bios: SeaBIOS and QEMU's iPXE ROM; uefi: OVMF's PXE, then ipxe.efi over
# TFTP) onto a blank disk until the Workflow ends, then booted from that
# disk; 11 assertions.
provision() {
	fw=$1
	wf_name=vm1-disk-$fw
	cat >"$IB_TMP/wf-$fw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: $wf_name
  namespace: default
spec:
  templateRef: e2e-disk
  hardwareRef: vm1
  hardwareMap:
    device_1: $E2E_AGENT
EOF
	ib apply -f "$IB_TMP/wf-$fw.yaml"
	is "$rc" 0 "$fw: the Workflow is applied"
	disk=$IB_TMP/vda-$fw.img
	truncate -s 64M "$disk" || bail_out "cannot make the blank disk"
	case $fw in
	bios)
		set -- -machine pc,graphics=off
		nic="virtio-net-pci,netdev=n0,mac=$E2E_MAC"
		;;
	uefi)
		cp "$E2E_OVMF_VARS" "$IB_TMP/vars.fd"
		set -- -machine q35 -drive "if=pflash,format=raw,readonly=on,file=$E2E_OVMF_CODE" \
			-drive "if=pflash,format=raw,file=$IB_TMP/vars.fd" \
			-fw_cfg name=opt/org.tianocore/IPv6PXESupport,string=n
		nic="virtio-net-pci,netdev=n0,mac=$E2E_MAC,romfile="
		;;
	esac
	osie_start "osie-$fw" "$@" -device "$nic,bootindex=0" \
		-drive "file=$disk,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0
	_polls=0
	osie_wait wf_ended
	state=$(wf 'd.get("status", {}).get("state", "")')
	is "$state" SUCCESS "$fw: the Workflow ran to SUCCESS on the VM"
	if [ "$state" != SUCCESS ]; then
		osie_dump "osie-$fw"
		diag "the Workflow's status: $(wf 'json.dumps(d.get("status", {}))')"
	fi
	diag "$fw: $E2E_SECONDS s from QEMU's start to the Workflow's end"
	osie_stop
	osie_serial_has "^IRONBELL-E2E-OSIE-UP ip=$E2E_IP "
	is "$?" 0 "$fw: the agent's system got its address from ironbelld"
	osie_serial_has "worker $E2E_AGENT, server $E2E_SERVER:42113 "
	is "$?" 0 "$fw: the agent took its worker ID and server from the kernel command line"
	acts=$(wf '" ".join("%s=%s" % (a["name"], a["state"]) for t in d["status"]["tasks"] for a in t["actions"])')
	is "$acts" "stream-image=SUCCESS write-cloud-init=SUCCESS" "$fw: each action SUCCESS"
	durs=$(wf '" ".join(a.get("executionDuration", "-") for t in d["status"]["tasks"] for a in t["actions"])')
	like "$durs" '^[0-9][0-9a-z.]*s [0-9][0-9a-z.]*s$' "$fw: each action has its duration"
	diag "$fw: action durations: $durs"

	osie_boot "disk-$fw" 'IRONBELL-E2E-DISK-DONE' "$@" \
		-drive "file=$disk,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0,bootindex=0 \
		-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC,romfile="
	_m=$(osie_line IRONBELL-E2E-DISK-BOOTED)
	is "$_m" "IRONBELL-E2E-DISK-BOOTED marker=$OSIE_MARKER" "$fw: the VM booted the image the workflow wrote"
	[ -n "$_m" ] || osie_dump "disk-$fw"
	is "$(osie_line IRONBELL-E2E-USERDATA)" \
		'IRONBELL-E2E-USERDATA bytes=38 text=#cloud-config\nhostname: vm1-installed\n' \
		"$fw: the user-data the workflow fetched from the metadata service"
	is "$(osie_line IRONBELL-E2E-METADATA)" \
		"IRONBELL-E2E-METADATA url=http://$E2E_SERVER:7080 hostname=vm1-installed local-ipv4=$E2E_IP instance-id=e2e-instance-1" \
		"$fw: the installed system's metadata from ironbelld"
}

provision bios
if [ -f "$E2E_OVMF_CODE" ]; then
	provision uefi
else
	for _t in 1 2 3 4 5 6 7 8 9 10 11; do
		skip "uefi" "OVMF is not installed (ovmf)"
	done
fi
# fail: a Workflow of tests/e2e/provision-template-fail.yaml on the VM
# (BIOS): it ends FAILED, the failed action's message carries its exit
# status and its output, and the action after it never runs; 5 assertions.
fail_run() {
	wf_name=vm1-disk-fail
	cat >"$IB_TMP/wf-fail.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: $wf_name
  namespace: default
spec:
  templateRef: e2e-disk-fail
  hardwareRef: vm1
  hardwareMap:
    device_1: $E2E_AGENT
EOF
	ib apply -f "$top_srcdir/tests/e2e/provision-template-fail.yaml"
	is "$rc" 0 "fail: the failing Template is applied"
	ib apply -f "$IB_TMP/wf-fail.yaml"
	[ "$rc" = 0 ] || bail_out "cannot apply the Workflow: $err"
	disk=$IB_TMP/vda-fail.img
	truncate -s 64M "$disk" || bail_out "cannot make the blank disk"
	osie_start osie-fail -machine pc,graphics=off \
		-device "virtio-net-pci,netdev=n0,mac=$E2E_MAC,bootindex=0" \
		-drive "file=$disk,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0
	_polls=0
	osie_wait wf_ended
	state=$(wf 'd.get("status", {}).get("state", "")')
	is "$state" FAILED "fail: the Workflow ended FAILED"
	[ "$state" = FAILED ] || osie_dump osie-fail
	diag "fail: $E2E_SECONDS s from QEMU's start to the Workflow's end"
	osie_stop
	acts=$(wf '" ".join("%s=%s" % (a["name"], a["state"]) for t in d["status"]["tasks"] for a in t["actions"])')
	is "$acts" "stream-image=SUCCESS grow-partition=FAILED write-cloud-init=PENDING" \
		"fail: the failed action, and none after it, ran"
	msg=$(wf 'd["status"]["tasks"][0]["actions"][1].get("message", "")')
	like "$msg" 'exit status 3' "fail: the message has the exit status"
	like "$msg" 'no partition 9 on /dev/vda' "fail: and the action's output"
}
fail_run
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
