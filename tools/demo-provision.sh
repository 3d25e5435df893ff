#!/bin/sh
# demo-provision — `make demo` as root: a machine provisioned end to end,
# as on a rack. A virtual machine under a virtual BMC (ipmi_sim, whose
# power drives QEMU) is taken by ironbelld from power-off to booting its
# own disk, and each step is printed as it happens: the BMC's power and
# boot device, DHCP, TFTP, the iPXE script, the kernel, the agent, each
# action of the Workflow, the reboot, the disk, the Booted condition. It
# ends with `ironbell describe workflow`. The VM boots SeaBIOS with QEMU's
# iPXE ROM (TCG: about 30 s in all), so there is no TFTP step.
#
# It is the end-to-end test's rig (tests/e2e/e2e.sh, osie.sh,
# provision.sh; tests/e2e/test_provision.sh asserts what this shows):
# one network namespace with a bridge, ironbelld serving DHCP, TFTP,
# HTTP and the worker API on 10.99.0.1, the BMC on 10.99.0.1:623. Every
# wait is bounded; the namespace, the VM, the BMC, the daemon and the
# scratch directory go at exit (tests/lib.sh's and tests/netns.sh's trap).
#
# Environment: IRONBELLD, IRONBELL (make demo sets them), top_srcdir,
# top_builddir. Exit status: 0 when the machine booted its disk and the
# Workflow says so, 3 when something this needs is missing (what is
# missing is printed first; tools/demo.sh then runs its loopback demo),
# 1 otherwise.
set -u

: "${IRONBELLD:?set IRONBELLD to the ironbelld binary (make demo does)}"
: "${IRONBELL:?set IRONBELL to the ironbell binary (make demo does)}"
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
export IRONBELLD IRONBELL top_srcdir top_builddir

DEMO_MISSING=3
DEMO_TIMEOUT=${DEMO_TIMEOUT:-600} # seconds from the Workflow to the Booted condition
DEMO_TICK=0.5                      # seconds between two looks at the logs

# ---- what the demo needs, said plainly when missing ----
missing=
if [ "$(id -u)" != 0 ]; then
	echo "The provisioning demo needs root, for a network namespace (sudo make demo)."
	exit "$DEMO_MISSING"
fi
for c in ip qemu-system-x86_64 ipmi_sim ipmitool curl setsid mkfifo; do
	command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
for c in mkfs.fat mcopy syslinux; do
	PATH=$PATH:/usr/sbin:/sbin command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
[ -x /usr/bin/python3 ] || missing="$missing python3"
[ -e /dev/net/tun ] || missing="$missing /dev/net/tun"
[ -x "$top_builddir/ironbell-agent" ] || missing="$missing ironbell-agent(build)"
if [ -n "$missing" ]; then
	echo "The provisioning demo cannot run here; missing:$missing"
	echo "(tools/install-deps installs the packages, make the ironbell-agent)"
	exit "$DEMO_MISSING"
fi

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"
. "$top_srcdir/tests/e2e/osie.sh"
. "$top_srcdir/tests/e2e/provision.sh"

# The rig speaks TAP; the demo speaks to a person.
skip_all() {
	echo "The provisioning demo cannot run here: $*"
	exit "$DEMO_MISSING"
}
bail_out() {
	echo "The provisioning demo failed: $*"
	[ -f "$IB_LOG" ] && tail -n 20 "$IB_LOG"
	exit 1
}

if [ -t 1 ]; then
	bold=$(printf '\033[1m')
	plain=$(printf '\033[0m')
else
	bold=
	plain=
fi
say() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
T0=$(date +%s%N)
# step WHAT TEXT: one progress line, with the seconds since the start.
step() {
	_ms=$(( ($(date +%s%N) - T0) / 1000000 ))
	printf '  %4d.%ds  %-9s %s\n' $((_ms / 1000)) $(( (_ms % 1000) / 100 )) "$1" "$2"
}

WF=demo-provision
say "Making the guest images from Debian packages (cached in $top_builddir/tests/e2e/cache)"
osie_assets
PROV_OSIE_DIR=$OSIE_DIR
PROV_CONFIG_EXTRA="workflow:
  enabled: true
  resync_interval: 5"

say "A network namespace with a bridge (10.99.0.1/24), ironbelld on it (DHCP, TFTP, HTTP :7080, gRPC :42113), a virtual BMC (IPMI on 10.99.0.1:623) whose power drives a QEMU VM with a blank disk"
prov_setup

# The objects an operator writes: the BMC's Machine and Secret are
# provision.sh's; here the Hardware with its bmcRef and netboot off (the
# Workflow turns it on), the Template and the Workflow.
prov_hardware false >/dev/null || bail_out "cannot apply the Hardware"
cp "$IB_TMP/vm-bmc.yaml" "$IB_TMP/hardware.yaml"
prov_template_reboot
prov_workflow "$WF" e2e-disk

say "The objects: a Secret and a bmc Machine (the BMC), a Hardware with its bmcRef, a Template (write the disk image, write the cloud-init data, reboot)"
ib apply -f "$IB_TMP/bmc.yaml" -f "$IB_TMP/hardware.yaml" -f "$IB_TMP/template.yaml"
printf '%s\n' "$out"
[ "$rc" = 0 ] || bail_out "ironbell apply: $err"
"$IRONBELL" get hardware,machines,templates

say "The Workflow (bootMode: netboot, toggleAllowNetboot: true): ironbelld powers the machine off, sets a one-time PXE boot, powers it on"
sed 's/^/    /' "$IB_TMP/workflow.yaml"
T0=$(date +%s%N)
ib apply -f "$IB_TMP/workflow.yaml"
[ "$rc" = 0 ] || bail_out "ironbell apply: $err"
step apply "$out"

# ---- following the machine: the BMC hook's calls, ironbelld's log, the
# two consoles, and the Workflow's status ----

# new_lines FILE VAR: the complete lines of FILE after the first $VAR
# lines, into $IB_TMP/new; VAR is moved past them. (Not in a pipeline:
# VAR must change in this shell.)
new_lines() {
	eval "_from=\$$2"
	: >"$IB_TMP/new"
	_n=$(wc -l <"$1" 2>/dev/null || echo 0)
	[ "$_n" -gt "$_from" ] || return 0
	sed -n "$((_from + 1)),${_n}p" "$1" | tr -d '\r' >"$IB_TMP/new"
	eval "$2=\$_n"
}
msg() { sed 's/.*msg="\([^"]*\)".*/\1/'; }

# wf_status: one line, "STATE|action=STATE ...|BOOTED-CONDITION".
wf_status() {
	"$IRONBELL" get workflow "$WF" -o json 2>/dev/null | /usr/bin/python3 -c 'import json, sys
try:
    s = json.load(sys.stdin).get("status", {})
except Exception:
    s = {}
acts = " ".join("%s=%s%s" % (a["name"], a.get("state", "PENDING"),
    ("(" + a["executionDuration"] + ")") if a.get("executionDuration") else "")
    for t in s.get("tasks", []) for a in t.get("actions", []))
b = [c.get("status", "") + " " + c.get("reason", "") + ": " + c.get("message", "")
    for c in s.get("conditions", []) if c.get("type") == "Booted"]
print("%s|%s|%s" % (s.get("state", ""), acts, b[0] if b else ""))'
}

n_calls=0 n_log=0 n_fw=0 n_ser=0
last_state= last_acts= last_booted=
booted=no
limit=$(awk -v t="$DEMO_TIMEOUT" -v k="$DEMO_TICK" 'BEGIN { print int(t / k) }')
i=0
while [ "$i" -lt "$limit" ]; do
	new_lines "$PROV_VM_DIR/calls.log" n_calls
	while IFS= read -r l; do
		case $l in
		"set power 0"*) step BMC "power off" ;;
		"set power 1"*) step BMC "power on" ;;
		"set boot pxe"*) step BMC "boot device: network (PXE), once" ;;
		"set boot "*) step BMC "boot device: ${l#set boot }" ;;
		esac
	done <"$IB_TMP/new"
	new_lines "$IB_LOG" n_log
	while IFS= read -r l; do
		case $l in
		*"offer to "* | *'msg="ACK '*) step DHCP "$(echo "$l" | msg)" ;;
		*"netboot-not-allowed"*) step DHCP "$(echo "$l" | msg)" ;;
		*"subsystem=tftp"*"sent "*) step TFTP "$(echo "$l" | msg)" ;;
		*"script served"* | *"binary served"* | *"osie served"*) step HTTP "$(echo "$l" | msg)" ;;
		*"level=error"* | *"level=warn"*) step ironbelld "$(echo "$l" | msg)" ;;
		esac
	done <"$IB_TMP/new"
	new_lines "$PROV_FIRMWARE_LOG" n_fw
	while IFS= read -r l; do
		case $l in
		"=== vm-bmc: power on"*)
			_b=${l##* boot }
			step VM "starts (boot device ${_b%% ===*}): firmware, then the NIC's PXE" ;;
		*"iPXE initialising"*) step iPXE "started" ;;
		esac
	done <"$IB_TMP/new"
	new_lines "$PROV_SERIAL" n_ser
	while IFS= read -r l; do
		case $l in
		*"Linux version"*) step kernel "Linux $(echo "$l" | sed 's/.*Linux version \([^ ]*\).*/\1/') started" ;;
		*IRONBELL-E2E-OSIE-UP*)
			_ip=${l#*ip=}
			step agent "the provisioning environment is up (${_ip%% *}): ironbell-agent asks ironbelld for its actions" ;;
		*"ironbell-agent: action "*) step agent "${l#*ironbell-agent: }" ;;
		*"reboot: Restarting"*) step VM "reboots (the power stays on; the BMC's one-time PXE is spent: the disk comes first)" ;;
		*IRONBELL-E2E-DISK-BOOTED*) step disk "the VM booted its own disk: ${l#*IRONBELL-E2E-DISK-BOOTED }" ;;
		*IRONBELL-E2E-USERDATA*) step disk "its cloud-init user-data: ${l#*IRONBELL-E2E-USERDATA }" ;;
		*IRONBELL-E2E-METADATA*) step disk "its metadata, from ironbelld: ${l#*IRONBELL-E2E-METADATA }" ;;
		esac
	done <"$IB_TMP/new"
	st=$(wf_status)
	state=${st%%|*}
	rest=${st#*|}
	acts=${rest%%|*}
	cond=${rest#*|}
	if [ "$state" != "$last_state" ]; then
		step Workflow "state ${state:-(none yet)}"
		last_state=$state
	fi
	if [ "$acts" != "$last_acts" ]; then
		step actions "$acts"
		last_acts=$acts
	fi
	if [ "$cond" != "$last_booted" ] && [ -n "$cond" ]; then
		step Booted "$cond"
		last_booted=$cond
	fi
	case $cond in "True "*) booted=yes ;; esac
	case $state in FAILED | TIMEOUT) break ;; esac
	[ "$booted" = yes ] && break
	sleep "$DEMO_TICK"
	i=$((i + 1))
done

if [ "$booted" = yes ] && prov_wait_console 20 'IRONBELL-E2E-DISK-DONE'; then
	l=$(grep -a 'IRONBELL-E2E-METADATA' "$PROV_SERIAL" | tail -n 1 | tr -d '\r')
	[ -n "$l" ] && step disk "its metadata, from ironbelld: ${l#*IRONBELL-E2E-METADATA }"
	step disk "the installed system is done and powers the machine off"
fi

say "ironbell describe workflow $WF"
"$IRONBELL" describe workflow "$WF"

if [ "$booted" = yes ]; then
	say "Provisioned: from power-off to its own disk in $(( ($(date +%s%N) - T0) / 1000000000 )) s; ironbelld knows it booted (the Booted condition)"
	status=0
else
	say "The machine was not provisioned (Workflow ${last_state:-absent}); the consoles' and the log's tails:"
	prov_diag
	status=1
fi
say "Stopping: the VM, the BMC, ironbelld, the namespace and $IB_TMP go"
prov_stop
exit "$status"
