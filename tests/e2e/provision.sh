# provision.sh — the end-to-end rig with a BMC (POSIX sh, sourced by
# tests/e2e/test_*.sh after tests/lib.sh, tests/netns.sh and
# tests/e2e/e2e.sh): the virtual machine of e2e.sh gets a virtual BMC
# whose power drives it, and ironbelld a Machine for that BMC, so that
# ironbelld's own BMC control (a bmc Job, or a Workflow's bootMode:
# netboot) powers the machine and chooses where it boots.
#
# The BMC is ipmi_sim (package openipmi) with the configuration of
# tests/integration/bmc (lan.conf, bmc.emu), running inside the rig's
# namespace on the bridge's address and the IPMI port (10.99.0.1:623;
# the namespace is the test's own, so the port is free), with
# tests/e2e/vm-bmc.sh as its chassis_control hook: power on starts QEMU
# (detached, inside the namespace, its NIC on the tap), power off stops it,
# a one-time boot device chooses the boot order of the next start. The
# VM's files (its consoles, QEMU's output, the hook's calls) are in
# $PROV_VM_DIR; vm-bmc.sh's header lists them.
#
# With PROV_BMC=redfish the BMC is the Redfish emulator instead
# (tests/redfish/redfish_emu.py --hook, over HTTPS on 10.99.0.1:443 with a
# certificate made for that address, which ironbelld verifies through
# bmc.redfish.ca_file): its ComputerSystem's resets and boot override call
# the same vm-bmc.sh, and its PowerState is the hook's, so the VM is
# driven the same way and the hook's calls.log reads the same.
#
# With PROV_KUBE=1 ironbelld runs in Kubernetes mode (kube.enabled, with
# the Lease, one instance) against the API-server emulator of tests/kube/
# (emu.sh), which runs inside the namespace on its loopback
# (127.0.0.1:$PROV_KUBE_PORT; ironbelld's kubeconfig has the client
# certificate): every object (the Secret, the Machine, the Hardware, what
# the test applies with prov_apply) is created in the cluster with
# kubectl, run inside the namespace too, and every state the functions
# below read (prov_get) is read back from the cluster the same way, not
# from ironbelld. The emulator's log is $IB_TMP/kube-emu.log.
#
# Set before prov_setup (all optional):
#
#	PROV_BMC        ipmi (the default: ipmi_sim, ironbelld's ipmitool
#	                provider) or redfish (the emulator, its gofish one)
#	PROV_FIRMWARE   bios (the default) or uefi (OVMF as pflash, with a
#	                copy of its variables as the VM's NVRAM)
#	PROV_DISK       the VM's disk, a raw image file (written in place);
#	                empty: a blank sparse one of PROV_DISK_MB (64) MiB
#	PROV_OSIE_DIR   ironbelld's ipxe.osie_dir (the kernel and initramfs
#	                the VM netboots); empty: tools/e2e-assets' marker
#	                initrd (e2e.sh)
#	PROV_MEM        the VM's memory, MiB (512)
#	PROV_NO_REBOOT  1: a reboot by the guest powers the VM off
#	PROV_QEMU_EXTRA more QEMU arguments
#	PROV_CONFIG_EXTRA more top-level YAML for ironbelld's config
#	PROV_KUBE       1: Kubernetes mode, the objects in the emulator (0)
#
# Functions:
#
#	prov_setup              e2e_setup with a bmc: section, then the BMC
#	                        and the objects (skip_all without ipmi_sim or
#	                        ipmitool; with redfish, without openssl or
#	                        curl; with PROV_KUBE=1, without kubectl,
#	                        openssl or curl); sets PROV_VM_DIR,
#	                        PROV_SERIAL, PROV_FIRMWARE_LOG
#	prov_apply FILE         applies FILE's objects: ironbell apply, or
#	                        with PROV_KUBE=1 kubectl apply to the
#	                        emulator; sets rc, out, err (lib.sh's run)
#	prov_get KIND NAME      the object's JSON in out (rc, err): ironbell
#	                        get, or with PROV_KUBE=1 kubectl get from the
#	                        emulator; KIND is hardware, template,
#	                        workflow, machine or job
#	prov_hardware [ALLOWPXE]
#	                        applies the Hardware vm1 again, with its
#	                        bmcRef to the Machine and allowPXE ALLOWPXE
#	                        (true; false for a Workflow that toggles it)
#	prov_ipmi ARGS...       ipmitool -I lanplus against the BMC, from the
#	                        namespace; sets rc, out, err (lib.sh's run);
#	                        PROV_BMC=ipmi only
#	prov_template_reboot    provision-template.yaml plus a reboot action,
#	                        into $IB_TMP/template.yaml
#	prov_workflow NAME TEMPLATE
#	                        a Workflow of TEMPLATE for vm1 (bootMode:
#	                        netboot, toggleAllowNetboot: true) into
#	                        $IB_TMP/workflow.yaml; sets PROV_WF
#	prov_wf EXPR, prov_hw EXPR
#	                        a Python expression on the Workflow's (the
#	                        Hardware's) JSON, d; prov_wf_state,
#	                        prov_wf_over (SUCCESS, FAILED or TIMEOUT),
#	                        prov_hw_pxe (its allowPXE values)
#	prov_power              prints the Machine's status.powerState
#	prov_power_is STATE     true when it is STATE
#	prov_vm_running         true while the VM's QEMU runs
#	prov_netboot_job NAME   applies a bmc Job NAME: off, one-time PXE, on
#	prov_job_state NAME     prints Completed, Failed or nothing
#	prov_wait_console SECONDS ERE [FROM]
#	                        waits until a line of the kernel's console
#	                        after its first FROM bytes (0) matches ERE;
#	                        gives up early once the VM is off
#	prov_console_size       prints the console's size, for FROM
#	prov_diag               the consoles' and logs' tails as diagnostics
#	prov_stop               powers the VM off and stops the BMC (the
#	                        exit trap would too, less politely)
#
# Names: the Machine and its Secret are $PROV_MACHINE (bmc-vm1), the BMC
# user and password $PROV_BMC_USER and $PROV_BMC_PASS. Everything runs in
# the namespace, so netns.sh's trap kills QEMU with the rest at exit.

. "$top_srcdir/tests/integration/bmc/ipmisim.sh"
. "$top_srcdir/tests/redfish/emu.sh"
. "$top_srcdir/tests/kube/emu.sh"

PROV_BMC=${PROV_BMC:-ipmi}
PROV_FIRMWARE=${PROV_FIRMWARE:-bios}
PROV_DISK=${PROV_DISK:-}
PROV_DISK_MB=${PROV_DISK_MB:-64}
PROV_OSIE_DIR=${PROV_OSIE_DIR:-}
PROV_MEM=${PROV_MEM:-512}
PROV_NO_REBOOT=${PROV_NO_REBOOT:-0}
PROV_QEMU_EXTRA=${PROV_QEMU_EXTRA:-}
PROV_CONFIG_EXTRA=${PROV_CONFIG_EXTRA:-}
PROV_KUBE=${PROV_KUBE:-0}
# The emulator's port on the namespace's loopback (the namespace is the
# test's own, so the port is free).
PROV_KUBE_PORT=6443
PROV_MACHINE=bmc-vm1
PROV_BMC_ADDR=$E2E_SERVER
PROV_BMC_PORT=623
[ "$PROV_BMC" = redfish ] && PROV_BMC_PORT=443
PROV_BMC_USER=admin
PROV_BMC_PASS=Vm-$$-pw # at most 20 bytes: ipmi_sim's limit
PROV_VM_DIR=
PROV_SERIAL=
PROV_FIRMWARE_LOG=
PROV_SIM_PID=
PROV_WF=
# Tries of ipmitool (one second each, one retry) for ipmi_sim to answer.
PROV_BMC_TRIES=20
# The hook by an absolute path: it goes into lan.conf as it is, and a
# top_srcdir given by hand may be relative.
PROV_HOOK=$(cd "$top_srcdir/tests/e2e" && pwd)/vm-bmc.sh

prov_setup() {
	_rf=
	case $PROV_BMC in
	ipmi) ipmisim_require ;;
	redfish)
		command -v openssl >/dev/null 2>&1 || skip_all "openssl is not installed"
		command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
		[ -x "$EMU_PY" ] || skip_all "no $EMU_PY"
		prov_rf_cert || bail_out "openssl cannot make the BMC's certificate"
		_rf="
  redfish:
    ca_file: $IB_TMP/bmc-rf.pem
    timeout: 10000"
		;;
	*) bail_out "PROV_BMC must be ipmi or redfish, not $PROV_BMC" ;;
	esac
	case $PROV_FIRMWARE in
	bios | uefi) ;;
	*) bail_out "PROV_FIRMWARE must be bios or uefi, not $PROV_FIRMWARE" ;;
	esac
	_kube=
	case $PROV_KUBE in
	0) ;;
	1)
		for _t in kubectl openssl curl; do
			command -v "$_t" >/dev/null 2>&1 || skip_all "$_t is not installed (Kubernetes mode)"
		done
		kemu_certs || bail_out "openssl cannot make the emulator's certificates"
		_kube="
kube:
  enabled: true
  kubeconfig: $IB_TMP/kubeconfig
  namespace: default
  leader_election: true
  lease_namespace: default
  backoff_min: 100
  backoff_max: 2000"
		E2E_BEFORE_DAEMON=prov_kube_start
		E2E_APPLY=prov_apply
		;;
	*) bail_out "PROV_KUBE must be 0 or 1, not $PROV_KUBE" ;;
	esac
	command -v setsid >/dev/null 2>&1 || skip_all "setsid (util-linux) is not installed"
	command -v mkfifo >/dev/null 2>&1 || skip_all "mkfifo is not installed"
	[ -n "$PROV_OSIE_DIR" ] && E2E_OSIE_DIR=$PROV_OSIE_DIR
	E2E_CONFIG_EXTRA="bmc:
  enabled: true
  ipmi:
    cipher_suite: 3
    timeout: 500
    retries: 3$_rf
  poll_interval: 1
  task_timeout: 120
  verify_interval: 200$_kube
$PROV_CONFIG_EXTRA"
	e2e_setup
	if [ "$PROV_FIRMWARE" = uefi ]; then
		[ -f "$E2E_OVMF_CODE" ] || skip_all "OVMF is not installed (ovmf)"
	fi

	PROV_VM_DIR=$IB_TMP/vm
	PROV_SERIAL=$PROV_VM_DIR/serial.log
	PROV_FIRMWARE_LOG=$PROV_VM_DIR/firmware.log
	mkdir -p "$PROV_VM_DIR" || bail_out "cannot make $PROV_VM_DIR"
	: >"$PROV_SERIAL"
	: >"$PROV_FIRMWARE_LOG"
	if [ -z "$PROV_DISK" ]; then
		PROV_DISK=$PROV_VM_DIR/disk.raw
		truncate -s "${PROV_DISK_MB}M" "$PROV_DISK" || bail_out "cannot make the disk"
	fi
	[ "$PROV_FIRMWARE" = uefi ] && { cp "$E2E_OVMF_VARS" "$PROV_VM_DIR/vars.fd" ||
		bail_out "cannot copy the OVMF variables"; }
	cat >"$PROV_VM_DIR/vm.conf" <<EOF
QEMU='$E2E_QEMU'
FIRMWARE=$PROV_FIRMWARE
OVMF_CODE='$E2E_OVMF_CODE'
MAC=$E2E_MAC
TAP=tap0
DISK='$PROV_DISK'
MEM=$PROV_MEM
NO_REBOOT=$PROV_NO_REBOOT
EXTRA='$PROV_QEMU_EXTRA'
EOF
	prov_bmc_start || bail_out "the BMC did not start"
	prov_objects || bail_out "cannot apply the BMC's objects"
	prov_hardware true || bail_out "cannot apply the Hardware with its bmcRef"
}

# prov_kube_start: the emulator in the namespace (e2e_setup's
# E2E_BEFORE_DAEMON), and ironbelld's kubeconfig for it.
prov_kube_start() {
	KEMU_WRAP="ip netns exec $E2E_NS"
	kemu_start kube-emu --port "$PROV_KUBE_PORT" --bookmark-interval 5 || return 1
	kemu_kubeconfig "$IB_TMP/kubeconfig" cert
}

prov_apply() {
	if [ "$PROV_KUBE" = 1 ]; then
		kc apply -f "$1"
	else
		ib apply -f "$1"
	fi
}

prov_get() {
	if [ "$PROV_KUBE" = 1 ]; then
		case $1 in
		hardware) _r=hardware.tinkerbell.org ;;
		template | workflow) _r=${1}s.tinkerbell.org ;;
		machine | job) _r=${1}s.bmc.tinkerbell.org ;;
		*) bail_out "prov_get: no kind $1" ;;
		esac
		kc get "$_r" "$2" -o json
	else
		ib get "$1" "$2" -o json
	fi
}

# prov_bmc_start: the BMC in the namespace on PROV_BMC_ADDR:PROV_BMC_PORT
# with vm-bmc.sh as its hook; waits until it answers.
prov_bmc_start() {
	[ "$PROV_BMC" = redfish ] && { prov_rf_start; return; }
	_d=$IB_TMP/bmc
	mkdir -p "$_d/state" || return 1
	sed -e "s|127\.0\.0\.1 @PORT@|$PROV_BMC_ADDR $PROV_BMC_PORT|" \
		-e "s|@USER@|$(_ipmisim_sed_escape "$PROV_BMC_USER")|" \
		-e "s|@PASS@|$(_ipmisim_sed_escape "$PROV_BMC_PASS")|" \
		-e "s|@HOOK@|$(_ipmisim_sed_escape "/bin/sh $PROV_HOOK $PROV_VM_DIR")|" \
		"$IPMISIM_SRC/lan.conf" >"$_d/lan.conf" || return 1
	grep -q "addr $PROV_BMC_ADDR $PROV_BMC_PORT" "$_d/lan.conf" || {
		diag "lan.conf has no 'addr 127.0.0.1 @PORT@' line to replace"
		return 1
	}
	ip netns exec "$E2E_NS" ipmi_sim -n -p -c "$_d/lan.conf" -f "$IPMISIM_SRC/bmc.emu" \
		-s "$_d/state" >"$_d/sim.log" 2>&1 </dev/null &
	PROV_SIM_PID=$!
	ib_bg "$PROV_SIM_PID"
	_i=0
	while [ "$_i" -lt "$PROV_BMC_TRIES" ]; do
		if ! ib_alive "$PROV_SIM_PID"; then
			diag "ipmi_sim exited at start; its output:"
			diag "$(cat "$_d/sim.log")"
			return 1
		fi
		prov_ipmi_once -N 1 -R 1 mc info && return 0
		_i=$((_i + 1))
		sleep 0.2
	done
	diag "ipmi_sim does not answer on $PROV_BMC_ADDR:$PROV_BMC_PORT; its output:"
	diag "$(cat "$_d/sim.log")"
	return 1
}

# prov_rf_cert: a self-signed certificate for the BMC's address, in
# $IB_TMP/bmc-rf.pem (its key in bmc-rf.key).
prov_rf_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$IB_TMP/bmc-rf.key" -out "$IB_TMP/bmc-rf.pem" -days 2 \
		-subj "/CN=$PROV_BMC_ADDR" -addext "subjectAltName=IP:$PROV_BMC_ADDR" \
		>>"$IB_TMP/openssl.log" 2>&1
}

# prov_rf_start: redfish_emu.py with vm-bmc.sh as its hook.
prov_rf_start() {
	_d=$IB_TMP/bmc
	mkdir -p "$_d" || return 1
	rm -f "$_d/port"
	ip netns exec "$E2E_NS" "$EMU_PY" "$EMU" --listen "$PROV_BMC_ADDR" \
		--port "$PROV_BMC_PORT" --port-file "$_d/port" \
		--cert "$IB_TMP/bmc-rf.pem" --key "$IB_TMP/bmc-rf.key" \
		--user "$PROV_BMC_USER" --password "$PROV_BMC_PASS" \
		--hook "/bin/sh '$PROV_HOOK' '$PROV_VM_DIR'" \
		>"$_d/sim.log" 2>&1 </dev/null &
	PROV_SIM_PID=$!
	ib_bg "$PROV_SIM_PID"
	if ! wait_for 15 test -s "$_d/port"; then
		diag "redfish_emu.py did not start; its output:"
		diag "$(cat "$_d/sim.log")"
		return 1
	fi
	timeout -k 2 30 ip netns exec "$E2E_NS" curl -sf --max-time 10 \
		--cacert "$IB_TMP/bmc-rf.pem" -u "$PROV_BMC_USER:$PROV_BMC_PASS" \
		"https://$PROV_BMC_ADDR:$PROV_BMC_PORT/redfish/v1/Systems/1" >/dev/null && return 0
	diag "redfish_emu.py does not answer on $PROV_BMC_ADDR:$PROV_BMC_PORT; its output:"
	diag "$(cat "$_d/sim.log")"
	return 1
}

prov_ipmi_once() {
	timeout -k 2 30 ip netns exec "$E2E_NS" ipmitool -I lanplus -C 3 -H "$PROV_BMC_ADDR" \
		-p "$PROV_BMC_PORT" -U "$PROV_BMC_USER" -P "$PROV_BMC_PASS" "$@" >/dev/null 2>&1
}

prov_ipmi() {
	[ "$PROV_BMC" = ipmi ] || bail_out "prov_ipmi needs PROV_BMC=ipmi"
	run ip netns exec "$E2E_NS" ipmitool -I lanplus -C 3 -H "$PROV_BMC_ADDR" \
		-p "$PROV_BMC_PORT" -U "$PROV_BMC_USER" -P "$PROV_BMC_PASS" -N 2 -R 3 "$@"
}

# prov_objects: the Secret and the Machine, as an operator writes them.
prov_objects() {
	_opts="preferredOrder: [ipmitool]
      ipmitool:
        port: $PROV_BMC_PORT
        cipherSuite: \"3\""
	[ "$PROV_BMC" = redfish ] && _opts="preferredOrder: [gofish]
      redfish:
        port: $PROV_BMC_PORT"
	cat >"$IB_TMP/bmc.yaml" <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: $PROV_MACHINE
  namespace: default
type: kubernetes.io/basic-auth
stringData:
  username: $PROV_BMC_USER
  password: "$PROV_BMC_PASS"
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata:
  name: $PROV_MACHINE
  namespace: default
spec:
  connection:
    host: $PROV_BMC_ADDR
    port: $PROV_BMC_PORT
    authSecretRef: {name: $PROV_MACHINE, namespace: default}
    providerOptions:
      $_opts
EOF
	prov_apply "$IB_TMP/bmc.yaml"
	[ "$rc" = 0 ] || { diag "$err"; return 1; }
}

prov_hardware() {
	_uefi=
	[ "$PROV_FIRMWARE" = uefi ] && _uefi="
      uefi: true"
	cat >"$IB_TMP/vm-bmc.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: vm1
  namespace: default
spec:
  agentID: $E2E_AGENT
  bmcRef:
    apiGroup: bmc.tinkerbell.org
    kind: Machine
    name: $PROV_MACHINE
  interfaces:
  - dhcp:
      mac: $E2E_MAC
      arch: x86_64
      hostname: vm1$_uefi
      ip:
        address: $E2E_IP
        netmask: 255.255.255.0
        gateway: $E2E_SERVER
    netboot:
      allowPXE: ${1:-true}
      allowWorkflow: true
  userData: |
    #cloud-config
    hostname: vm1-installed
  metadata:
    instance:
      id: e2e-instance-1
      hostname: vm1-installed
EOF
	prov_apply "$IB_TMP/vm-bmc.yaml"
	[ "$rc" = 0 ] || { diag "$err"; return 1; }
}

# prov_template_reboot: tests/e2e/provision-template.yaml's Template
# (e2e-disk: the disk image, the cloud-init data) with a last action that
# reboots the machine (ironbell-agent reports it before it runs), into
# $IB_TMP/template.yaml.
prov_template_reboot() {
	{
		cat "$top_srcdir/tests/e2e/provision-template.yaml"
		cat <<'EOF'
          - name: reboot
            image: quay.io/tinkerbell/actions/reboot:latest
            command: ["reboot", "-f"]
            timeout: 60
EOF
	} >"$IB_TMP/template.yaml"
}

# prov_workflow NAME TEMPLATE: the Workflow NAME of TEMPLATE for vm1, with
# bootOptions bootMode: netboot and toggleAllowNetboot: true, into
# $IB_TMP/workflow.yaml; PROV_WF becomes NAME (for prov_wf).
prov_workflow() {
	PROV_WF=$1
	cat >"$IB_TMP/workflow.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata:
  name: $1
  namespace: default
spec:
  templateRef: $2
  hardwareRef: vm1
  hardwareMap:
    device_1: $E2E_AGENT
  bootOptions:
    bootMode: netboot
    toggleAllowNetboot: true
EOF
}

# prov_wf EXPR: a Python expression on the Workflow $PROV_WF's JSON (d).
prov_wf() {
	prov_get workflow "$PROV_WF"
	printf '%s' "$out" | _prov_json "$1"
}
prov_wf_state() { prov_wf 'd.get("status", {}).get("state", "")'; }
prov_wf_over() {
	case "$(prov_wf_state)" in SUCCESS | FAILED | TIMEOUT) return 0 ;; esac
	return 1
}
# prov_hw EXPR: the same on the Hardware vm1.
prov_hw() {
	prov_get hardware vm1
	printf '%s' "$out" | _prov_json "$1"
}
# prov_hw_pxe: vm1's allowPXE, one word per interface ("True", "False").
prov_hw_pxe() {
	prov_hw '" ".join(str(i.get("netboot", {}).get("allowPXE")) for i in d["spec"]["interfaces"])'
}

_prov_json() {
	/usr/bin/python3 -c 'import json, sys
try:
    d = json.load(sys.stdin)
    print(eval(sys.argv[1]))
except Exception as e:
    print("<%s>" % e)' "$1"
}

prov_power() {
	prov_get machine "$PROV_MACHINE"
	printf '%s' "$out" | _prov_json 'd.get("status", {}).get("powerState", "")'
}

prov_power_is() { [ "$(prov_power)" = "$1" ]; }

prov_vm_running() {
	/bin/sh "$PROV_HOOK" "$PROV_VM_DIR" get power | grep -qx 'power:1'
}

prov_netboot_job() {
	cat >"$IB_TMP/job-$1.yaml" <<EOF
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Job
metadata:
  name: $1
  namespace: default
spec:
  machineRef: {name: $PROV_MACHINE, namespace: default}
  tasks:
  - powerAction: "off"
  - oneTimeBootDeviceAction: {device: [pxe], efiBoot: $([ "$PROV_FIRMWARE" = uefi ] && echo true || echo false)}
  - powerAction: "on"
EOF
	prov_apply "$IB_TMP/job-$1.yaml"
	[ "$rc" = 0 ] || { diag "$err"; return 1; }
}

prov_job_state() {
	prov_get job "$1"
	[ "$rc" = 0 ] || return 0 # no such Job (yet): no state
	printf '%s' "$out" | _prov_json '" ".join(c["type"] for c in d.get("status", {}).get("conditions", []) if c["type"] in ("Completed", "Failed") and c["status"] == "True")'
}

prov_console_size() { wc -c <"$PROV_SERIAL"; }

# prov_wait_console SECONDS ERE [FROM]: a line matching ERE in the
# kernel's console after byte FROM; false after SECONDS, or soon after
# the VM went off without it.
prov_wait_console() {
	_lim=$(($1 * 10))
	_from=$((${3:-0} + 1))
	_i=0
	_off=0
	while [ "$_i" -lt "$_lim" ]; do
		tail -c "+$_from" "$PROV_SERIAL" 2>/dev/null | grep -aEq -- "$2" && return 0
		if prov_vm_running; then
			_off=0
		else
			# Off for two seconds running: not a reset in progress.
			_off=$((_off + 1))
			[ "$_off" -gt 20 ] && return 1
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

prov_diag() {
	diag "the hook's calls: $(tr '\n' ';' <"$PROV_VM_DIR/calls.log" 2>/dev/null)"
	diag "power-ons (n, boot device): $(tr '\n' ';' <"$PROV_VM_DIR/starts" 2>/dev/null)"
	diag "the firmware's console (COM1):"
	tail -c 3000 "$PROV_FIRMWARE_LOG" 2>/dev/null | tr -d '\r' | tail -n 25 | diag "$(cat)"
	diag "the kernel's console (COM2):"
	tail -c 1500 "$PROV_SERIAL" 2>/dev/null | tr -d '\r' | tail -n 10 | diag "$(cat)"
	diag "qemu: $(tail -n 5 "$PROV_VM_DIR/qemu.out" 2>/dev/null)"
	diag "the BMC ($PROV_BMC): $(tail -n 5 "$IB_TMP/bmc/sim.log" 2>/dev/null)"
	if [ "$PROV_KUBE" = 1 ]; then
		diag "the API-server emulator's log tail:"
		tail -n 10 "$IB_TMP/kube-emu.log" 2>/dev/null | diag "$(cat)"
	fi
	diag "ironbelld's log tail:"
	tail -n 20 "$IB_LOG" | diag "$(cat)"
}

prov_stop() {
	ip netns exec "$E2E_NS" /bin/sh "$PROV_HOOK" "$PROV_VM_DIR" set power 0 >/dev/null
	[ -n "$PROV_SIM_PID" ] && ib_kill "$PROV_SIM_PID" 5
	PROV_SIM_PID=
	return 0
}
