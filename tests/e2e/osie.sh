# osie.sh — the guest images of the provisioning tests and the boots
# that use them (POSIX sh, sourced after tests/lib.sh, tests/netns.sh and
# tests/e2e/e2e.sh).
#
# tools/e2e-provision-assets makes, in tests/e2e/cache/osie of the build
# tree: the osie (the kernel and an initramfs running ironbell-agent with
# the host runtime), and disk.img, a raw disk that SeaBIOS and OVMF boot
# from a virtio disk into an /init that prints
#
#	IRONBELL-E2E-DISK-BOOTED marker=<disk.marker>
#	IRONBELL-E2E-USERDATA bytes=N text=...     (when the disk holds user-data)
#	IRONBELL-E2E-METADATA url=... hostname=... local-ipv4=... instance-id=...
#	IRONBELL-E2E-DISK-DONE
#
# and powers off. tests/e2e/provision-template.yaml is the Template that
# writes the disk image onto /dev/vda and its cloud-init data into it;
# tests/e2e/provision-template-fail.yaml writes the image, then fails.
#
#	osie_assets            skip unless mtools, dosfstools and syslinux are
#	                       there and ironbell-agent is linked statically;
#	                       make the images; sets OSIE_DIR (the
#	                       directory, for ipxe.osie_dir), OSIE_DISK (the
#	                       image) and OSIE_MARKER
#	osie_daemon_osie       restart e2e_setup's ironbelld with the osie as
#	                       ipxe.osie_dir, the worker API on the bridge's
#	                       address and port 42113 (where the script's
#	                       grpc_authority= points) and the workflow
#	                       controller on
#	osie_start NAME ARGS...
#	                       QEMU as e2e_boot runs it (COM1 the firmware's,
#	                       COM2 the kernel's console; the NIC's netdev n0
#	                       on tap0) in the background; sets E2E_SERIAL
#	                       and E2E_FIRMWARE
#	osie_wait CMD...       until CMD succeeds, QEMU exits or E2E_TIMEOUT
#	                       passes; sets E2E_SECONDS
#	osie_stop              QEMU's end (killed after 5 s)
#	osie_boot NAME ERE ARGS...
#	                       the three, until a line matching ERE is on COM2
#	osie_serial_has ERE    COM2 has a line matching ERE
#	osie_line PATTERN      the first line of COM2 holding PATTERN, without
#	                       carriage returns
#	osie_dump NAME         the consoles' and the daemon's tails, as
#	                       diagnostics

OSIE_SYSLINUX_EFI=/usr/lib/SYSLINUX.EFI/efi64/syslinux.efi

osie_assets() {
	for _t in mkfs.fat mcopy mmd syslinux; do
		PATH=$PATH:/usr/sbin:/sbin command -v "$_t" >/dev/null 2>&1 ||
			skip_all "$_t is not installed (mtools, dosfstools, syslinux)"
	done
	[ -f "$OSIE_SYSLINUX_EFI" ] || skip_all "syslinux-efi is not installed"
	[ -x "$top_builddir/ironbell-agent" ] || skip_all "no ironbell-agent in the build tree"
	# the initramfs holds the agent alone, without its libraries
	if command -v file >/dev/null 2>&1; then
		case "$(file -L "$top_builddir/ironbell-agent" 2>/dev/null)" in
		*"statically linked"*) ;;
		*) skip_all "ironbell-agent is not linked statically (--disable-static-agent or a sanitizer)" ;;
		esac
	fi
	OSIE_DIR=$("$top_srcdir/tools/e2e-provision-assets" "$top_builddir/tests/e2e/cache" \
		"$top_builddir/ironbell-agent" 2>"$IB_TMP/prov-assets.err")
	if [ -z "$OSIE_DIR" ]; then
		diag "$(cat "$IB_TMP/prov-assets.err")"
		bail_out "cannot make the guest images (tools/e2e-provision-assets)"
	fi
	OSIE_DISK=$OSIE_DIR/disk.img
	OSIE_MARKER=$(cat "$OSIE_DIR/disk.marker")
}

osie_daemon_osie() {
	ib_stop_daemon
	sed -i -e "s|^  listen: 127.0.0.1:$IB_GRPC_PORT\$|  listen: $E2E_SERVER:42113|" \
		-e "s|^  osie_dir: .*|  osie_dir: $OSIE_DIR|" "$IB_CONFIG" || return 1
	printf 'workflow:\n  enabled: true\n  resync_interval: 5\n' >>"$IB_CONFIG"
	IB_DAEMON_WRAP="ip netns exec $E2E_NS" ib_start_daemon
}

# osie_start NAME ARGS...: QEMU in the background, its PID in OSIE_QPID.
osie_start() {
	OSIE_NAME=$1
	shift
	E2E_SERIAL=$IB_TMP/serial-$OSIE_NAME.log
	E2E_FIRMWARE=$IB_TMP/firmware-$OSIE_NAME.log
	: >"$E2E_SERIAL"
	OSIE_T0=$(date +%s%N)
	ip netns exec "$E2E_NS" "$E2E_QEMU" -accel tcg -m 512 -smp 1 -display none -monitor none \
		-no-reboot -serial "file:$E2E_FIRMWARE" -serial "file:$E2E_SERIAL" \
		-netdev tap,id=n0,ifname=tap0,script=no,downscript=no "$@" \
		>"$IB_TMP/qemu-$OSIE_NAME.out" 2>&1 &
	OSIE_QPID=$!
	ib_bg "$OSIE_QPID"
}

# osie_wait CMD...: until CMD succeeds (polled every 0.1 s), the firmware
# gives up, QEMU exits, or E2E_TIMEOUT passes; sets E2E_SECONDS. Returns
# CMD's last status.
osie_wait() {
	_i=0
	while [ $_i -lt $((E2E_TIMEOUT * 10)) ]; do
		"$@" && break
		grep -aqE 'No bootable device|No bootable option|Shell> |giving up|Boot failed' \
			"$E2E_FIRMWARE" 2>/dev/null && break
		e2e_alive "$OSIE_QPID" || break
		sleep 0.1
		_i=$((_i + 1))
	done
	E2E_SECONDS=$(( ($(date +%s%N) - OSIE_T0) / 1000000 ))
	E2E_SECONDS=$((E2E_SECONDS / 1000)).$(( (E2E_SECONDS % 1000) / 100 ))
	"$@"
}

# osie_stop: QEMU gets 5 s to exit by itself, then is killed.
osie_stop() {
	_i=0
	while e2e_alive "$OSIE_QPID" && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	e2e_alive "$OSIE_QPID" && kill -KILL "$OSIE_QPID" 2>/dev/null
	wait "$OSIE_QPID" 2>/dev/null
	return 0
}

# osie_serial_has ERE: the kernel's console has a line matching ERE.
osie_serial_has() { grep -aqE -- "$1" "$E2E_SERIAL" 2>/dev/null; }

osie_boot() {
	_name=$1
	_until=$2
	shift 2
	osie_start "$_name" "$@"
	osie_wait osie_serial_has "$_until"
	osie_stop
}

osie_line() {
	grep -a -- "$1" "$E2E_SERIAL" 2>/dev/null | head -n 1 | tr -d '\r'
}

osie_dump() {
	diag "$1: after $E2E_SECONDS s; the firmware's console (COM1):"
	tail -c 3000 "$E2E_FIRMWARE" | tr -d '\r' | tail -n 15 | diag "$(cat)"
	diag "the kernel's console (COM2):"
	tail -c 3000 "$E2E_SERIAL" | tr -d '\r' | tail -n 25 | diag "$(cat)"
	diag "ironbelld's log tail:"
	tail -n 15 "$IB_LOG" | diag "$(cat)"
	diag "qemu: $(cat "$IB_TMP/qemu-$1.out" 2>/dev/null)"
}
