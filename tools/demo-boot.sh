#!/bin/sh
# demo-boot — ironbell boots a machine: run as root by `make demo`, it makes
# a network namespace with a bridge and a tap, starts ironbelld there with
# a Hardware for a virtual machine, and starts QEMU (UEFI firmware, no iPXE
# ROM) on the tap. The machine asks DHCP for an address and a boot file,
# fetches iPXE over TFTP, then its own iPXE script, kernel and initrd over
# HTTP, and boots; each step is printed as ironbelld logs it, and the
# guest's first words end the demo. Everything is removed at the end.
#
# Environment: IRONBELLD, IRONBELL (the binaries; make demo sets them),
# top_srcdir, top_builddir. DEMO_FIRMWARE=bios boots SeaBIOS with QEMU's
# iPXE ROM instead (no TFTP step). Exit status 0 when the machine booted.
set -u

: "${IRONBELLD:?}" "${IRONBELL:?}"
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
FIRMWARE=${DEMO_FIRMWARE:-uefi}
TIMEOUT=300
MAC=52:54:00:de:00:01
NS=ibdemo$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ironbell-demo-boot.XXXXXX") || exit 1
daemon=
qemu=
tailer=

if [ -t 1 ]; then
	bold=$(printf '\033[1m')
	plain=$(printf '\033[0m')
else
	bold=
	plain=
fi
say() { printf '%s==> %s%s\n' "$bold" "$*" "$plain"; }

cleanup() {
	trap - EXIT INT TERM
	for p in $tailer $qemu; do kill -KILL "$p" 2>/dev/null; done
	if [ -n "$daemon" ]; then
		kill -TERM "$daemon" 2>/dev/null
		i=0
		while kill -0 "$daemon" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -KILL "$daemon" 2>/dev/null
	fi
	ip netns del "$NS" 2>/dev/null
	rm -rf "$tmp"
}
status=1
trap 'cleanup; exit $status' EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

say "Making the kernel and initrd the machine will boot (Debian packages, cached)"
assets=$("$top_srcdir/tools/e2e-assets" "$top_builddir/tests/e2e/cache") || exit 1

say "A network namespace: bridge br0 (10.99.0.1/24) with a tap for the machine"
ip netns add "$NS" && ip -n "$NS" link set lo up &&
	ip -n "$NS" link add br0 type bridge && ip -n "$NS" addr add 10.99.0.1/24 dev br0 &&
	ip -n "$NS" link set br0 up && ip -n "$NS" tuntap add dev tap0 mode tap &&
	ip -n "$NS" link set tap0 master br0 && ip -n "$NS" link set tap0 up || exit 1

say "Starting ironbelld there: DHCP on br0, TFTP, HTTP on 10.99.0.1:7080"
mkdir -p "$tmp/state"
# Debug level: the DHCP offers are logged there (the steps below pick
# their lines out of the log).
cat >"$tmp/ironbell.yaml" <<EOF
log_level: debug
state_dir: $tmp/state
api:
  socket: $tmp/api.sock
http:
  listen: 10.99.0.1:7080
dhcp:
  enabled: true
  interfaces: [br0]
tftp:
  enabled: true
  listen: 0.0.0.0:69
ipxe:
  osie_dir: $assets
  kernel_args: panic=-1
EOF
ip netns exec "$NS" "$IRONBELLD" --config "$tmp/ironbell.yaml" >"$tmp/ironbelld.log" 2>&1 &
daemon=$!
i=0
until [ -S "$tmp/api.sock" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done

say "Applying a Hardware for the machine (MAC $MAC, address 10.99.0.10)"
cat >"$tmp/hw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: demo-machine
  namespace: default
spec:
  agentID: demo-agent
  interfaces:
  - dhcp:
      mac: $MAC
      hostname: demo-machine
      ip: {address: 10.99.0.10, netmask: 255.255.255.0, gateway: 10.99.0.1}
    netboot: {allowPXE: true}
EOF
"$IRONBELL" --socket "$tmp/api.sock" apply -f "$tmp/hw.yaml" || exit 1

# The steps, as ironbelld logs them. tail and the reader run apart,
# joined by a FIFO, so that cleanup can stop both.
mkfifo "$tmp/steps" || exit 1
tail -n 0 -F "$tmp/ironbelld.log" >"$tmp/steps" 2>/dev/null &
tailer=$!
while IFS= read -r line; do
	case "$line" in
	*"offer to $MAC"* | *"msg=\"ACK "*) echo "    DHCP:   $(echo "$line" | sed 's/.*msg="\([^"]*\)".*/\1/')" ;;
	*"subsystem=tftp"*"sent "*) echo "    TFTP:   $(echo "$line" | sed 's/.*msg="\([^"]*\)".*/\1/')" ;;
	*"script served"* | *"binary served"* | *"osie served"*)
		echo "    HTTP:   $(echo "$line" | sed 's/.*msg="\([^"]*\)".*/\1/')" ;;
	esac
done <"$tmp/steps" &
tailer="$tailer $!"

set --
if [ "$FIRMWARE" = bios ]; then
	say "Powering on the machine: SeaBIOS with QEMU's iPXE ROM (TCG, no KVM needed)"
	set -- -machine pc,graphics=off -boot n -device "virtio-net-pci,netdev=n0,mac=$MAC"
else
	say "Powering on the machine: UEFI (OVMF) with its own PXE client (TCG; about 30 s)"
	cp /usr/share/OVMF/OVMF_VARS_4M.fd "$tmp/vars.fd"
	set -- -machine q35 \
		-drive "if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd" \
		-drive "if=pflash,format=raw,file=$tmp/vars.fd" \
		-fw_cfg name=opt/org.tianocore/IPv6PXESupport,string=n \
		-device "virtio-net-pci,netdev=n0,mac=$MAC,romfile="
fi
ip netns exec "$NS" qemu-system-x86_64 -accel tcg -m 512 -display none -monitor none \
	-no-reboot -serial "file:$tmp/firmware.log" -serial "file:$tmp/kernel.log" \
	-netdev tap,id=n0,ifname=tap0,script=no,downscript=no "$@" >"$tmp/qemu.out" 2>&1 &
qemu=$!
i=0
while [ $i -lt $((TIMEOUT * 10)) ]; do
	grep -aq IRONBELL-E2E-BOOTED "$tmp/kernel.log" 2>/dev/null && break
	kill -0 "$qemu" 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
line=$(grep -a IRONBELL-E2E-BOOTED "$tmp/kernel.log" 2>/dev/null | tr -d '\r')
if [ -n "$line" ]; then
	say "The kernel booted. The machine says:"
	echo "    $line"
	say "worker_id and hw_addr on that command line are what the agent will use to find its workflow."
	status=0
else
	say "The machine did not boot; the firmware's last words:"
	tail -c 2000 "$tmp/firmware.log" | tr -d '\r' | tail -n 15
	tail -n 20 "$tmp/ironbelld.log"
fi
