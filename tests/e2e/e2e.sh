# e2e.sh — the end-to-end boot rig (POSIX sh, sourced by tests/e2e/test_*.sh
# after tests/lib.sh and tests/netns.sh).
#
# One network namespace holds a bridge (br0, 10.99.0.1/24), a tap on it for
# the virtual machine, and ironbelld serving DHCP on br0, TFTP, HTTP on
# 10.99.0.1:7080 and the worker API on 10.99.0.1:42113, with ipxe.osie_dir holding the kernel and initrd that
# tools/e2e-assets makes from Debian packages. A Hardware object reserves
# 10.99.0.10 for the VM's MAC with netboot.allowPXE. QEMU (TCG; this
# machine has no usable KVM) runs inside the namespace with its NIC on the
# tap and two serial ports in files: COM1 gets the firmware's and iPXE's
# console, COM2 the kernel's, since the script's command line says
# console=ttyS1,115200 as Smee's does (Linux's 8250 driver has one console,
# so the first ttyS named wins). The guest's /init prints
#
#	IRONBELL-E2E-BOOTED cmdline=...
#
# and powers off. Everything is removed at exit (netns.sh's trap).
#
#	e2e_setup              skip unless root, QEMU, OVMF and the assets are
#	                       there; make the rig; start ironbelld; apply the
#	                       Hardware. $E2E_OSIE_DIR, when set, replaces
#	                       the assets as ipxe.osie_dir; $E2E_CONFIG_EXTRA
#	                       (top-level YAML) is appended to the config;
#	                       $E2E_BEFORE_DAEMON, when set, is a command run
#	                       once the namespace is made, before ironbelld
#	                       starts; $E2E_APPLY (words; "ib apply -f") is
#	                       the command given the Hardware's file
#	e2e_boot NAME ARGS...  run QEMU with the common options and ARGS until
#	                       the marker appears or E2E_TIMEOUT (300 s)
#	                       passes; sets E2E_SECONDS and E2E_SERIAL
#	e2e_check NAME         the TAP assertions on the marker

E2E_MAC=52:54:00:e2:e0:01
E2E_IP=10.99.0.10
E2E_SERVER=10.99.0.1
E2E_AGENT=vm-agent-1
E2E_TIMEOUT=${E2E_TIMEOUT:-300}
E2E_QEMU=${E2E_QEMU:-qemu-system-x86_64}
E2E_OVMF_CODE=/usr/share/OVMF/OVMF_CODE_4M.fd
E2E_OVMF_VARS=/usr/share/OVMF/OVMF_VARS_4M.fd

e2e_setup() {
	ns_require
	command -v "$E2E_QEMU" >/dev/null 2>&1 || skip_all "$E2E_QEMU is not installed (qemu-system-x86)"
	command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
	[ -f /usr/lib/ipxe/ipxe.efi ] || skip_all "the ipxe package is not installed"
	[ -e /dev/net/tun ] || skip_all "no /dev/net/tun"
	E2E_ASSETS=$("$top_srcdir/tools/e2e-assets" "$top_builddir/tests/e2e/cache" 2>"$IB_TMP/assets.err")
	if [ -z "$E2E_ASSETS" ]; then
		diag "$(cat "$IB_TMP/assets.err")"
		bail_out "cannot make the kernel and initrd from Debian packages (tools/e2e-assets)"
	fi

	ns_new E2E_NS vm || bail_out "cannot make a namespace"
	ns_bridge "$E2E_NS" br0 "$E2E_SERVER/24" || bail_out "cannot make the bridge"
	ip -n "$E2E_NS" tuntap add dev tap0 mode tap || bail_out "cannot make the tap"
	ip -n "$E2E_NS" link set tap0 master br0 && ip -n "$E2E_NS" link set tap0 up ||
		bail_out "cannot bridge the tap"

	IB_HTTP_PORT=7080
	IB_GRPC_PORT=42113
	ib_write_config "dhcp:
  enabled: true
  interfaces: [br0]
  server_address: $E2E_SERVER
tftp:
  enabled: true
  listen: 0.0.0.0:69
ipxe:
  osie_dir: ${E2E_OSIE_DIR:-$E2E_ASSETS}
  kernel_args: panic=-1
${E2E_CONFIG_EXTRA:-}" || bail_out "cannot write the config"
	sed -i "s/^  listen: 127.0.0.1:7080/  listen: $E2E_SERVER:7080/" "$IB_CONFIG"
	# The worker API where the script's grpc_authority points, for an agent
	# in the VM (the namespace is the test's own: the port is free there).
	sed -i "s/^  listen: 127.0.0.1:42113/  listen: $E2E_SERVER:42113/" "$IB_CONFIG"
	if [ -n "${E2E_BEFORE_DAEMON:-}" ]; then
		$E2E_BEFORE_DAEMON || bail_out "$E2E_BEFORE_DAEMON failed"
	fi
	IB_DAEMON_WRAP="ip netns exec $E2E_NS" ib_start_daemon || bail_out "ironbelld did not start"
	cat >"$IB_TMP/vm.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: vm1
  namespace: default
spec:
  agentID: $E2E_AGENT
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
EOF
	${E2E_APPLY:-ib apply -f} "$IB_TMP/vm.yaml"
	[ "$rc" = 0 ] || bail_out "cannot apply the Hardware: $err"
}

# e2e_alive PID: QEMU still runs (PID 1 here may not reap: a zombie is gone).
e2e_alive() {
	[ -r "/proc/$1/stat" ] || return 1
	_st=$(sed 's/^[^)]*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)
	[ "$_st" != Z ]
}

e2e_boot() {
	_name=$1
	shift
	E2E_SERIAL=$IB_TMP/serial-$_name.log
	E2E_FIRMWARE=$IB_TMP/firmware-$_name.log
	: >"$E2E_SERIAL"
	_t0=$(date +%s%N)
	ip netns exec "$E2E_NS" "$E2E_QEMU" -accel tcg -m 512 -smp 1 -display none -monitor none \
		-no-reboot -serial "file:$E2E_FIRMWARE" -serial "file:$E2E_SERIAL" \
		-netdev tap,id=n0,ifname=tap0,script=no,downscript=no "$@" \
		>"$IB_TMP/qemu-$_name.out" 2>&1 &
	_qpid=$!
	ib_bg "$_qpid"
	_i=0
	while [ $_i -lt $((E2E_TIMEOUT * 10)) ]; do
		grep -aq 'IRONBELL-E2E-BOOTED' "$E2E_SERIAL" 2>/dev/null && break
		# A boot that has failed for good: do not wait out the timeout.
		grep -aqE 'No bootable device|No bootable option|Shell> |giving up' "$E2E_FIRMWARE" \
			2>/dev/null && break
		e2e_alive "$_qpid" || break
		sleep 0.1
		_i=$((_i + 1))
	done
	E2E_SECONDS=$(( ($(date +%s%N) - _t0) / 1000000 ))
	E2E_SECONDS=$((E2E_SECONDS / 1000)).$(( (E2E_SECONDS % 1000) / 100 ))
	# The guest powers off by itself; give it a moment, then make sure.
	_i=0
	while e2e_alive "$_qpid" && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	e2e_alive "$_qpid" && kill -KILL "$_qpid" 2>/dev/null
	wait "$_qpid" 2>/dev/null
	return 0
}

e2e_check() {
	_line=$(grep -a 'IRONBELL-E2E-BOOTED' "$E2E_SERIAL" | head -n 1 | tr -d '\r')
	if [ -n "$_line" ]; then
		pass "$1: the VM booted the kernel and initrd from ironbelld"
		diag "$1 boot: $E2E_SECONDS s from QEMU's start to the guest's marker"
	else
		fail "$1: the VM booted the kernel and initrd from ironbelld"
		diag "no marker after $E2E_SECONDS s; the firmware's console (COM1):"
		tail -c 3000 "$E2E_FIRMWARE" | tr -d '\r' | tail -n 25 | diag "$(cat)"
		diag "the kernel's console (COM2):"
		tail -c 1500 "$E2E_SERIAL" | tr -d '\r' | tail -n 10 | diag "$(cat)"
		diag "ironbelld's log tail:"
		tail -n 15 "$IB_LOG" | diag "$(cat)"
		diag "qemu: $(cat "$IB_TMP/qemu-$1.out" 2>/dev/null)"
	fi
	like "$_line" " worker_id=$E2E_AGENT " "$1: worker_id is the Hardware's agentID"
	like "$_line" " hw_addr=$E2E_MAC " "$1: hw_addr is the Hardware's MAC"
	like "$_line" " grpc_authority=$E2E_SERVER:42113 " "$1: grpc_authority points at ironbelld"
	like "$_line" " initrd=initramfs-x86_64 " "$1: the command line names the initrd"
}
