#!/bin/sh
# tests/bench/provision/run.sh — many machines provisioned at once: N
# QEMU virtual machines, each under its own virtual BMC, taken by one
# ironbelld from power-off to booting their own disks, against one
# machine alone. Never part of make check: it prints figures and asserts
# nothing about time.
#
# The rig is tests/e2e/test_provision's (tests/e2e/e2e.sh, osie.sh and
# the BMC hook tests/e2e/vm-bmc.sh), with N of everything: VM i has its
# own directory (its vm.conf, disk, consoles), MAC (52:54:00:e2:e1:<i>),
# address (10.99.0.<99+i>) and tap on the bridge, its own ipmi_sim on
# 10.99.0.1 port 6230+i whose chassis_control hook drives it, and its
# own Secret, Machine, Hardware and Workflow (bootMode: netboot,
# toggleAllowNetboot: true, the Template tests/e2e/provision-template.yaml
# with a last reboot action, as test_provision's). The Workflows are
# applied in one go; the script then polls (every half second) until
# every machine's Workflow has its Booted condition (the installed
# system asked for its metadata) or ended otherwise, or the wait is over.
#
# It runs twice, each in a fresh rig and daemon: one VM alone, then N.
# For each run it prints, per VM, when each phase ended after the
# Workflows' apply — the netboot Job Completed (power-on), the osie up on
# the console (netboot to the agent), the Workflow over, the disk's
# marker on the console (the reboot to the disk), the Booted condition —
# and the slowest VM's time per phase; the run's wall time, and
# ironbelld's CPU time (user + system, /proc) over it. The last lines
# compare N against one.
#
# Variables: BENCH_PROV_VMS (10) the VMs of the second run;
# BENCH_PROV_MEM (256) each VM's memory, MiB; BENCH_PROV_TIMEOUT (1200)
# seconds a run waits at most for its machines (TCG VMs on few cores are
# slow: a run that passes it reports what it saw). Needs root, QEMU,
# ipmi_sim, ipmitool and what test_provision needs; without them it says
# why and exits 0. The EXIT trap of tests/lib.sh and tests/netns.sh
# stops every process it started.
set -u

N=${BENCH_PROV_VMS:-10}
case $N in '' | *[!0-9]*) echo "BENCH_PROV_VMS must be a number" >&2; exit 2 ;; esac
[ "$N" -ge 1 ] && [ "$N" -le 100 ] || { echo "BENCH_PROV_VMS: 1 to 100" >&2; exit 2; }

if [ -z "${BENCH_PROV_RUN:-}" ]; then
	echo "# provisioning bench: 1 VM alone, then $N at once (${BENCH_PROV_MEM:-256} MiB each)"
	rc=0
	for n in 1 "$N"; do
		out=$(BENCH_PROV_RUN=$n sh "$0" 2>&1) || rc=1
		printf '%s\n' "$out"
		eval "$(printf '%s\n' "$out" | sed -n 's/^BENCH-PROV-RESULT //p')"
	done
	if [ -n "${res_1_wall:-}" ] && [ -n "$(eval echo "\${res_${N}_wall:-}")" ]; then
		w1=$res_1_wall
		wn=$(eval echo "\$res_${N}_wall")
		echo "# $N VMs at once: $(eval echo "\$res_${N}_done")/$N booted their disks in" \
			"$(awk -v t="$wn" 'BEGIN { printf "%.1f", t / 1000 }') s," \
			"against $(awk -v t="$w1" 'BEGIN { printf "%.1f", t / 1000 }') s for one alone" \
			"($(awk -v a="$wn" -v b="$w1" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') times;" \
			"$N in sequence: $(awk -v a="$w1" -v n="$N" 'BEGIN { printf "%.1f", a * n / 1000 }') s)"
	fi
	exit "$rc"
fi

# ---- one run: BENCH_PROV_RUN VMs ----
NV=$BENCH_PROV_RUN
MEM=${BENCH_PROV_MEM:-256}
LIMIT=${BENCH_PROV_TIMEOUT:-1200}
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
IRONBELLD=${IRONBELLD:-$top_builddir/ironbelld}
IRONBELL=${IRONBELL:-$top_builddir/ironbell}
export IRONBELLD IRONBELL
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/e2e/e2e.sh"
. "$top_srcdir/tests/e2e/osie.sh"
. "$top_srcdir/tests/e2e/provision.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is not installed"
ipmisim_require
command -v setsid >/dev/null 2>&1 || skip_all "setsid (util-linux) is not installed"
osie_assets
E2E_OSIE_DIR=$OSIE_DIR
E2E_CONFIG_EXTRA="bmc:
  enabled: true
  ipmi:
    cipher_suite: 3
    timeout: 500
    retries: 3
  poll_interval: 1
  task_timeout: 120
  verify_interval: 200
workflow:
  enabled: true
  resync_interval: 5"
e2e_setup
HZ=$(getconf CLK_TCK)
now() { date +%s%N; }
cpu() { awk '{ print $14 + $15 }' "/proc/$IB_DAEMON_PID/stat" 2>/dev/null || echo 0; }

# bench_vm I: VM I's directory, tap, BMC and objects (appended to
# $IB_TMP/objects.yaml).
bench_vm() {
	_d=$IB_TMP/vm$1
	_port=$((6230 + $1))
	_mac=52:54:00:e2:e1:$(printf %02x "$1")
	mkdir -p "$_d/bmc/state" || return 1
	: >"$_d/serial.log"
	truncate -s 64M "$_d/disk.raw" || return 1
	ip -n "$E2E_NS" tuntap add dev "tp$1" mode tap &&
		ip -n "$E2E_NS" link set "tp$1" master br0 &&
		ip -n "$E2E_NS" link set "tp$1" up || return 1
	cat >"$_d/vm.conf" <<EOF
QEMU='$E2E_QEMU'
FIRMWARE=bios
MAC=$_mac
TAP=tp$1
DISK='$_d/disk.raw'
MEM=$MEM
NO_REBOOT=0
EXTRA=
EOF
	sed -e "s|127\.0\.0\.1 @PORT@|$E2E_SERVER $_port|" \
		-e "s|@USER@|$PROV_BMC_USER|" -e "s|@PASS@|$PROV_BMC_PASS|" \
		-e "s|@HOOK@|/bin/sh $PROV_HOOK $_d|" \
		"$IPMISIM_SRC/lan.conf" >"$_d/bmc/lan.conf" || return 1
	ip netns exec "$E2E_NS" ipmi_sim -n -p -c "$_d/bmc/lan.conf" -f "$IPMISIM_SRC/bmc.emu" \
		-s "$_d/bmc/state" >"$_d/bmc/sim.log" 2>&1 </dev/null &
	ib_bg "$!"
	cat >>"$IB_TMP/objects.yaml" <<EOF
---
apiVersion: v1
kind: Secret
metadata: {name: bmc-vm$1, namespace: default}
type: kubernetes.io/basic-auth
stringData: {username: $PROV_BMC_USER, password: "$PROV_BMC_PASS"}
---
apiVersion: bmc.tinkerbell.org/v1alpha1
kind: Machine
metadata: {name: bmc-vm$1, namespace: default}
spec:
  connection:
    host: $E2E_SERVER
    port: $_port
    authSecretRef: {name: bmc-vm$1, namespace: default}
    providerOptions:
      preferredOrder: [ipmitool]
      ipmitool: {port: $_port, cipherSuite: "3"}
---
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata: {name: vm$1, namespace: default}
spec:
  agentID: bench-agent-$1
  bmcRef: {apiGroup: bmc.tinkerbell.org, kind: Machine, name: bmc-vm$1}
  userData: |
    #cloud-config
    hostname: vm$1-installed
  interfaces:
  - dhcp:
      mac: $_mac
      arch: x86_64
      hostname: vm$1
      ip: {address: 10.99.0.$((99 + $1)), netmask: 255.255.255.0, gateway: $E2E_SERVER}
    netboot: {allowPXE: false, allowWorkflow: true}
  metadata:
    instance: {id: bench-instance-$1, hostname: vm$1-installed}
EOF
	cat >>"$IB_TMP/workflows.yaml" <<EOF
---
apiVersion: tinkerbell.org/v1alpha1
kind: Workflow
metadata: {name: wf-vm$1, namespace: default}
spec:
  templateRef: e2e-disk
  hardwareRef: vm$1
  hardwareMap: {device_1: bench-agent-$1}
  bootOptions: {bootMode: netboot, toggleAllowNetboot: true}
EOF
}

# bmc_up I: VM I's ipmi_sim answers.
bmc_up() {
	timeout -k 2 10 ip netns exec "$E2E_NS" ipmitool -I lanplus -C 3 -H "$E2E_SERVER" \
		-p $((6230 + $1)) -U "$PROV_BMC_USER" -P "$PROV_BMC_PASS" -N 1 -R 1 mc info \
		>/dev/null 2>&1
}

: >"$IB_TMP/objects.yaml"
: >"$IB_TMP/workflows.yaml"
i=1
while [ "$i" -le "$NV" ]; do
	bench_vm "$i" || bail_out "cannot make VM $i's rig"
	i=$((i + 1))
done
i=1
while [ "$i" -le "$NV" ]; do
	wait_for 20 bmc_up "$i" || bail_out "VM $i's ipmi_sim does not answer: $(tail -n 3 "$IB_TMP/vm$i/bmc/sim.log")"
	i=$((i + 1))
done
ib apply -f "$IB_TMP/objects.yaml"
[ "$rc" = 0 ] || bail_out "cannot apply the objects: $err"
{
	cat "$top_srcdir/tests/e2e/provision-template.yaml"
	cat <<'EOF'
          - name: reboot
            image: quay.io/tinkerbell/actions/reboot:latest
            command: ["reboot", "-f"]
            timeout: 60
EOF
} >"$IB_TMP/template.yaml"
ib apply -f "$IB_TMP/template.yaml"
[ "$rc" = 0 ] || bail_out "cannot apply the Template: $err"
# Every Machine polled once (off), so that the run starts from rest.
all_polled() {
	ib get machine -o json
	[ "$(printf '%s' "$out" | _prov_json 'sum(1 for m in d["items"] if m.get("status", {}).get("powerState") == "off")')" = "$NV" ]
}
wait_for 60 all_polled || diag "not every Machine reads off before the run"

# The poll: one line per VM, "I JOB WFSTATE BOOTED", from the Jobs' and
# Workflows' lists.
POLL_PY='import json, sys
jobs = json.load(open(sys.argv[1])).get("items", [])
wfs = json.load(open(sys.argv[2])).get("items", [])
done = {j["metadata"]["name"] for j in jobs
        if any(c["type"] == "Completed" and c["status"] == "True"
               for c in j.get("status", {}).get("conditions", []))}
st = {}
for w in wfs:
    s = w.get("status", {})
    b = [c["status"] for c in s.get("conditions", []) if c["type"] == "Booted"]
    st[w["metadata"]["name"]] = (s.get("state", "") or "-", b[0] if b else "-")
for i in range(1, int(sys.argv[3]) + 1):
    s, b = st.get("wf-vm%d" % i, ("-", "-"))
    print(i, int("netboot-wf-vm%d" % i in done), s, b)'

t0=$(now) c0=$(cpu)
ib apply -f "$IB_TMP/workflows.yaml"
[ "$rc" = 0 ] || bail_out "cannot apply the Workflows: $err"
# t_<phase>_<i>: ms after t0 when VM i's phase ended (empty: not seen).
left=$NV
end=$(($(date +%s) + LIMIT))
while [ "$left" -gt 0 ] && [ "$(date +%s)" -lt "$end" ]; do
	ib get job -o json
	printf '%s' "$out" >"$IB_TMP/jobs.json"
	ib get workflow -o json
	printf '%s' "$out" >"$IB_TMP/wfs.json"
	ms=$(( ($(now) - t0) / 1000000 ))
	"$PY" -c "$POLL_PY" "$IB_TMP/jobs.json" "$IB_TMP/wfs.json" "$NV" >"$IB_TMP/poll" 2>/dev/null
	left=0
	[ -s "$IB_TMP/poll" ] || left=$NV
	while read -r i job state booted; do
		s=$IB_TMP/vm$i/serial.log
		[ "$job" = 1 ] && [ -z "$(eval echo "\${t_job_$i:-}")" ] && eval "t_job_$i=$ms"
		[ -z "$(eval echo "\${t_osie_$i:-}")" ] && grep -aq 'IRONBELL-E2E-OSIE-UP' "$s" && eval "t_osie_$i=$ms"
		case $state in SUCCESS | FAILED | TIMEOUT)
			[ -z "$(eval echo "\${t_wf_$i:-}")" ] && eval "t_wf_$i=$ms st_$i=$state" ;;
		esac
		[ -z "$(eval echo "\${t_disk_$i:-}")" ] && grep -aq 'IRONBELL-E2E-DISK-BOOTED' "$s" && eval "t_disk_$i=$ms"
		[ "$booted" = True ] && [ -z "$(eval echo "\${t_boot_$i:-}")" ] && eval "t_boot_$i=$ms"
		case $state:$booted in SUCCESS:True | FAILED:* | TIMEOUT:*) ;; *) left=$((left + 1)) ;; esac
	done <"$IB_TMP/poll"
	[ "$left" -gt 0 ] && sleep 0.5
done
wall=$(( ($(now) - t0) / 1000000 ))
cms=$(( ($(cpu) - c0) * 1000 / HZ ))

# ---- the report ----
sec() { [ -n "$1" ] && awk -v t="$1" 'BEGIN { printf "%.1f", t / 1000 }' || printf -- '-'; }
echo "# $NV VM(s), $MEM MiB each: seconds after the Workflows' apply when each phase ended"
echo "#   vm   power-on  osie-up  workflow  disk  Booted  state"
booted=0 last=0
mx_job=0 mx_osie=0 mx_wf=0 mx_disk=0 mx_boot=0
i=1
while [ "$i" -le "$NV" ]; do
	j=$(eval echo "\${t_job_$i:-}") o=$(eval echo "\${t_osie_$i:-}") w=$(eval echo "\${t_wf_$i:-}")
	k=$(eval echo "\${t_disk_$i:-}") b=$(eval echo "\${t_boot_$i:-}")
	printf '#   vm%-3s %8s %8s %9s %5s %7s  %s\n' "$i" "$(sec "$j")" "$(sec "$o")" "$(sec "$w")" \
		"$(sec "$k")" "$(sec "$b")" "$(eval echo "\${st_$i:-unfinished}")"
	# The phases' lengths for this VM, where both ends were seen.
	[ -n "$j" ] && [ "$j" -gt "$mx_job" ] && mx_job=$j
	[ -n "$j" ] && [ -n "$o" ] && [ $((o - j)) -gt "$mx_osie" ] && mx_osie=$((o - j))
	[ -n "$o" ] && [ -n "$w" ] && [ $((w - o)) -gt "$mx_wf" ] && mx_wf=$((w - o))
	[ -n "$w" ] && [ -n "$k" ] && [ $((k - w)) -gt "$mx_disk" ] && mx_disk=$((k - w))
	[ -n "$k" ] && [ -n "$b" ] && [ $((b - k)) -gt "$mx_boot" ] && mx_boot=$((b - k))
	[ -n "$b" ] && { booted=$((booted + 1)); [ "$b" -gt "$last" ] && last=$b; }
	i=$((i + 1))
done
echo "# $NV VM(s): longest phase over the VMs: power-on $(sec $mx_job) s, netboot to the agent" \
	"$(sec $mx_osie) s, the Workflow $(sec $mx_wf) s, reboot to the disk $(sec $mx_disk) s," \
	"disk to Booted $(sec $mx_boot) s"
[ "$left" -gt 0 ] && echo "# $NV VM(s): $left not finished after the ${LIMIT} s bound"
echo "# $NV VM(s): $booted booted their disks; all in $(sec "$last") s (run $(sec "$wall") s);" \
	"ironbelld $cms ms CPU, $(awk -v c="$cms" -v t="$wall" 'BEGIN { printf "%.2f", (t > 0 ? 100 * c / t : 0) }')% of the wall time"
echo "BENCH-PROV-RESULT res_${NV}_wall=$last res_${NV}_done=$booted"

i=1
while [ "$i" -le "$NV" ]; do
	ip netns exec "$E2E_NS" /bin/sh "$PROV_HOOK" "$IB_TMP/vm$i" set power 0 >/dev/null
	i=$((i + 1))
done
ib_stop_daemon
[ "$booted" = "$NV" ]
