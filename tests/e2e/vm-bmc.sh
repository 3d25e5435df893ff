#!/bin/sh
# vm-bmc.sh — the chassis_control hook of the end-to-end BMC (ipmi_sim,
# tests/integration/bmc/lan.conf): its power drives a QEMU virtual machine.
#
#   vm-bmc.sh DIR get power|boot...
#       "power:1" while the VM's QEMU runs (a zombie counts as gone: the
#       machine's PID 1 may not reap), else "power:0"; "boot:B", the boot
#       device stored by the last "set boot" (none before)
#   vm-bmc.sh DIR set NAME VALUE [NAME VALUE...]
#       power 1      start QEMU, detached, unless it runs already
#       power 0      stop it (SIGTERM, SIGKILL after half a second)
#       shutdown 1   the same (the test guests have no ACPI daemon)
#       reset 1      stop and start again, when it runs
#       boot D       D (none, pxe, default, cdrom, bios) for the next start
#
# ipmi_sim runs this inside the VM's network namespace and blocks while it
# runs; past about a second ipmitool (and ironbelld) retry and it runs
# twice. So it never waits for QEMU: QEMU starts in its own session with
# every output in a file, and the hook returns.
#
# The boot device is one-time, as IPMI's usual "boot once": a power-on (or
# reset) takes it and stores "none" (the hook is not told whether a device
# was set persistent). pxe puts the NIC first and the disk second; any
# other device the disk first, then the NIC, as a machine whose disk is
# not bootable falls through to the network. When QEMU started from pxe,
# the order is turned back to disk first through QEMU's monitor as soon as
# it runs, so that a reboot by the guest itself (the power stays on, as on
# a real machine) boots the disk; QEMU reads the order again at each reset.
#
# DIR/vm.conf (sh assignments, written by tests/e2e/provision.sh) says
# what to run:
#
#   QEMU       the emulator (qemu-system-x86_64)
#   FIRMWARE   bios (SeaBIOS, QEMU's iPXE option ROM on the NIC) or uefi
#              (OVMF as pflash, the NIC's ROM removed: OVMF's own PXE)
#   OVMF_CODE  uefi: the read-only code; DIR/vars.fd is the VM's NVRAM
#   MAC, TAP   the NIC's MAC, the tap device it is plugged into
#   DISK       the raw disk image (a virtio disk); empty: no disk
#   MEM        memory in MiB
#   NO_REBOOT  1: a reboot by the guest powers the VM off (-no-reboot)
#   EXTRA      more QEMU arguments (split into words)
#
# Everything else in DIR belongs to the hook: boot (the stored device),
# qemu.pid, qemu.out (QEMU's own output), firmware.log (COM1: firmware and
# iPXE), serial.log (COM2: the kernel's console), both appended across
# power cycles, each start preceded by a line "=== vm-bmc: power on N
# boot D ===" in firmware.log; starts ("N D", one line per start);
# calls.log (each call, for the tests); mon.in and mon.out (the
# monitor's pipes) and monitor.log (its helper's errors). An error is one line on
# standard output (ipmi_sim reads it) and exit status 1.

dir=$1
[ -n "$dir" ] && [ -f "$dir/vm.conf" ] || { echo "no vm.conf in '$dir'"; exit 1; }
shift
op=${1:-}
[ -n "$op" ] || { echo "no operation given"; exit 1; }
shift
echo "$op $*" >>"$dir/calls.log"

QEMU=qemu-system-x86_64
FIRMWARE=bios
OVMF_CODE=
MAC=
TAP=tap0
DISK=
MEM=512
NO_REBOOT=0
EXTRA=
. "$dir/vm.conf"

# How long a stop waits for QEMU to go, in tenths of a second (SIGTERM,
# then SIGKILL): the whole call must stay well under a second.
STOP_TERM_TENTHS=5
STOP_KILL_TENTHS=3
# How long the monitor helper waits for QEMU to open its pipe, seconds.
MONITOR_WAIT=20

# vm_pid: prints the PID of the VM's QEMU while it runs; false otherwise.
# The command line must name DIR, so a PID reused by another process
# does not count.
vm_pid() {
	[ -s "$dir/qemu.pid" ] || return 1
	read -r _p <"$dir/qemu.pid" || return 1
	[ -r "/proc/$_p/stat" ] || return 1
	_st=$(sed 's/.*) //' "/proc/$_p/stat" 2>/dev/null | cut -d' ' -f1)
	case $_st in "" | Z | X) return 1 ;; esac
	tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null | grep -qF -- "$dir/" || return 1
	echo "$_p"
}

boot_get() {
	_b=none
	[ -s "$dir/boot" ] && read -r _b <"$dir/boot"
	echo "$_b"
}

boot_put() {
	echo "$1" >"$dir/boot.tmp" && mv -f "$dir/boot.tmp" "$dir/boot"
}

# wait_gone PID TENTHS: true once PID is gone (or a zombie).
wait_gone() {
	_i=0
	while [ "$_i" -lt "$2" ]; do
		vm_pid >/dev/null || return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	! vm_pid >/dev/null
}

vm_stop() {
	_p=$(vm_pid) || return 0
	kill -TERM "$_p" 2>/dev/null
	wait_gone "$_p" "$STOP_TERM_TENTHS" && return 0
	kill -KILL "$_p" 2>/dev/null
	wait_gone "$_p" "$STOP_KILL_TENTHS" && return 0
	echo "QEMU $_p does not stop"
	return 1
}

# monitor_disk_first: in the background, once QEMU reads its monitor,
# turns the boot order to disk first for the next reset.
monitor_disk_first() {
	_cmds="qom-set /machine/peripheral/net0 bootindex 3"
	[ -n "$DISK" ] && _cmds="$_cmds
qom-set /machine/peripheral/disk0 bootindex 1
qom-set /machine/peripheral/net0 bootindex 2"
	setsid timeout -k 1 "$MONITOR_WAIT" sh -c 'printf "%s\n" "$1" >"$2"' sh "$_cmds" \
		"$dir/mon.in" </dev/null >>"$dir/monitor.log" 2>&1 &
}

vm_start() {
	vm_pid >/dev/null && return 0
	_boot=$(boot_get)
	boot_put none
	if [ "$_boot" = pxe ]; then
		_net=1 _disk=2
	else
		_disk=1 _net=2
	fi
	_n=1
	[ -f "$dir/starts" ] && _n=$(($(wc -l <"$dir/starts") + 1))
	echo "$_n $_boot" >>"$dir/starts"
	printf '\n=== vm-bmc: power on %s boot %s ===\n' "$_n" "$_boot" >>"$dir/firmware.log"
	[ -p "$dir/mon.in" ] || mkfifo "$dir/mon.in" || { echo "cannot make mon.in"; return 1; }
	[ -p "$dir/mon.out" ] || mkfifo "$dir/mon.out" || { echo "cannot make mon.out"; return 1; }
	set -- -accel tcg -m "$MEM" -smp 1 -display none \
		-chardev "pipe,id=mon,path=$dir/mon" -mon chardev=mon,mode=readline \
		-chardev "file,id=com1,path=$dir/firmware.log,append=on" -serial chardev:com1 \
		-chardev "file,id=com2,path=$dir/serial.log,append=on" -serial chardev:com2 \
		-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no"
	case $FIRMWARE in
	uefi)
		set -- "$@" -machine q35 \
			-drive "if=pflash,format=raw,readonly=on,file=$OVMF_CODE" \
			-drive "if=pflash,format=raw,file=$dir/vars.fd" \
			-fw_cfg name=opt/org.tianocore/IPv6PXESupport,string=n \
			-device "virtio-net-pci,netdev=n0,id=net0,mac=$MAC,romfile=,bootindex=$_net"
		;;
	bios)
		set -- "$@" -machine pc,graphics=off \
			-device "virtio-net-pci,netdev=n0,id=net0,mac=$MAC,bootindex=$_net"
		;;
	*)
		echo "unknown FIRMWARE $FIRMWARE"
		return 1
		;;
	esac
	[ -n "$DISK" ] && set -- "$@" -drive "if=none,id=d0,format=raw,file=$DISK" \
		-device "virtio-blk-pci,drive=d0,id=disk0,bootindex=$_disk"
	[ "$NO_REBOOT" = 1 ] && set -- "$@" -no-reboot
	# shellcheck disable=SC2086 # EXTRA is split into words on purpose
	setsid "$QEMU" "$@" $EXTRA </dev/null >>"$dir/qemu.out" 2>&1 &
	# setsid execs QEMU (a background job of sh is no group leader):
	# $! is QEMU's PID.
	echo "$!" >"$dir/qemu.pid"
	[ "$_boot" = pxe ] && monitor_disk_first
	return 0
}

case $op in
get)
	for p in "$@"; do
		case $p in
		power) if vm_pid >/dev/null; then echo "power:1"; else echo "power:0"; fi ;;
		boot) echo "boot:$(boot_get)" ;;
		*) echo "invalid parameter: $p"; exit 1 ;;
		esac
	done
	exit 0
	;;
set) ;;
*)
	echo "unknown operation: $op"
	exit 1
	;;
esac

while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || { echo "no value for $1"; exit 1; }
	case $1:$2 in
	power:1) vm_start || exit 1 ;;
	power:0 | shutdown:1) vm_stop || exit 1 ;;
	reset:1)
		if vm_pid >/dev/null; then
			vm_stop && vm_start || exit 1
		fi
		;;
	reset:0 | shutdown:0) ;;
	boot:none | boot:pxe | boot:default | boot:cdrom | boot:bios) boot_put "$2" ;;
	*) echo "invalid value for $1: $2"; exit 1 ;;
	esac
	shift 2
done
exit 0
