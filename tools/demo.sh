#!/bin/sh
# demo — ironbell in one minute. As root, with QEMU and ipmi_sim, it
# provisions a virtual machine under a virtual BMC from power-off to its own
# disk (tools/demo-provision.sh); without ipmi_sim or syslinux but with
# QEMU and OVMF, it only boots one over the network (tools/demo-boot.sh).
# Otherwise, without touching the system: a daemon on a scratch directory,
# the example objects of etc/examples/ applied with the CLI, and the
# objects read back.
#
# Run by `make demo`, which sets IRONBELLD and IRONBELL to the binaries just
# built and top_srcdir to the source tree. On a terminal the daemon keeps
# running until Ctrl-C, so you can try the CLI yourself; without one (CI,
# a pipe) the demo stops once everything is shown. Exit status: 0 when
# every step worked.
set -u

: "${IRONBELLD:?set IRONBELLD to the ironbelld binary (make demo does)}"
: "${IRONBELL:?set IRONBELL to the ironbell binary (make demo does)}"
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
START_TIMEOUT=${DEMO_START_TIMEOUT:-20} # seconds to wait for the admin socket
STOP_TIMEOUT=10                          # seconds to wait for a clean stop

# As root, with QEMU and ipmi_sim at hand, the demo provisions a machine
# instead (tools/demo-provision.sh, which says what it misses and exits 3
# when it cannot run); with QEMU and OVMF only, it boots one over the
# network (tools/demo-boot.sh). DEMO_LOOPBACK=1 keeps this one.
if [ -z "${DEMO_LOOPBACK:-}" ]; then
	sh "$top_srcdir/tools/demo-provision.sh"
	status=$?
	[ "$status" -eq 3 ] || exit "$status"
	if [ "$(id -u)" = 0 ] && command -v qemu-system-x86_64 >/dev/null 2>&1 &&
		[ -f /usr/share/OVMF/OVMF_CODE_4M.fd ] && [ -f /usr/lib/ipxe/ipxe.efi ]; then
		echo "Booting a virtual machine over the network instead (no BMC, no workflow)."
		exec sh "$top_srcdir/tools/demo-boot.sh"
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "Not root: booting a virtual machine over the network needs a network"
		echo "namespace (run 'sudo make demo' for that). Running the loopback demo."
	else
		echo "QEMU, OVMF or iPXE is missing (tools/install-deps): running the loopback demo."
	fi
fi

if [ -t 1 ]; then
	bold=$(printf '\033[1m')
	plain=$(printf '\033[0m')
else
	bold=
	plain=
fi
step()
{
	printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"
}
show()
{
	printf '%s$ %s%s\n' "$bold" "$*" "$plain"
	"$@"
}

failed=0
daemon_pid=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ironbell-demo.XXXXXX") || exit 1

cleanup()
{
	trap - EXIT INT TERM
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		step "Stopping ironbelld (SIGTERM: it finishes what it was doing and exits)"
		kill -TERM "$daemon_pid" 2>/dev/null
		i=0
		while kill -0 "$daemon_pid" 2>/dev/null && [ "$i" -lt $((STOP_TIMEOUT * 10)) ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if kill -0 "$daemon_pid" 2>/dev/null; then
			echo "ironbelld did not stop within ${STOP_TIMEOUT}s; killing it"
			kill -KILL "$daemon_pid" 2>/dev/null
			failed=1
		fi
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap 'cleanup; exit $failed' EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# A free TCP port on loopback for the public HTTP listener (7080 in
# production; a high port here so the demo needs no privileges).
port=${DEMO_HTTP_PORT:-}
if [ -z "$port" ]; then
	for p in 17080 17081 17082 17083 17084 17085 17086 17087 17088 17089; do
		if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then
			port=$p
			break
		fi
	done
	port=${port:-17080}
fi

sock="$tmp/api.sock"
cfg="$tmp/ironbell.yaml"
mkdir -p "$tmp/state"
cat >"$cfg" <<EOF
# Written by tools/demo.sh: everything lives in a scratch directory.
log_level: info
state_dir: $tmp/state
api:
  socket: $sock
  socket_mode: "0600"
http:
  listen: 127.0.0.1:$port
EOF

step "A configuration that keeps everything in $tmp (see ironbell.yaml(5))"
cat "$cfg"

step "Starting ironbelld in the background; its log lines go to this terminal"
printf '%s$ %s --config %s &%s\n' "$bold" "$IRONBELLD" "$cfg" "$plain"
"$IRONBELLD" --config "$cfg" &
daemon_pid=$!

step "Waiting (at most ${START_TIMEOUT}s) until the admin API answers on its unix socket"
i=0
ready=no
while [ "$i" -lt $((START_TIMEOUT * 10)) ]; do
	if ! kill -0 "$daemon_pid" 2>/dev/null; then
		wait "$daemon_pid"
		echo "ironbelld exited (status $?) before it was ready: see its messages above"
		daemon_pid=
		failed=1
		exit 1
	fi
	if [ -S "$sock" ] &&
		curl -sf --max-time 2 --unix-socket "$sock" http://ironbell/readyz >/dev/null 2>&1; then
		ready=yes
		break
	fi
	sleep 0.1
	i=$((i + 1))
done
if [ "$ready" != yes ]; then
	echo "ironbelld was not ready after ${START_TIMEOUT}s"
	failed=1
	exit 1
fi
echo "ready after $((i / 10)).$((i % 10))s"

# The CLI finds the daemon through $IRONBELL_SOCKET (or --socket).
IRONBELL_SOCKET=$sock
export IRONBELL_SOCKET

run()
{
	show "$@" || {
		echo "(this step failed: status $?)"
		failed=1
	}
}

step "The daemon's version and store schema"
run "$IRONBELL" version

step "Applying etc/examples/ in one atomic write: a Secret and a BMC Machine, a Hardware, a Template and a Workflow"
run "$IRONBELL" apply -f "$top_srcdir/etc/examples/"

step "Applying the same files again changes nothing: every object is 'unchanged'"
run "$IRONBELL" apply -f "$top_srcdir/etc/examples/"

for kind in hardware machines secrets templates workflows; do
	step "ironbell get $kind: the same columns kubectl prints for Tinkerbell's CRDs"
	run "$IRONBELL" get "$kind"
done

step "One object in full, as the daemon stores it (metadata filled in by the store)"
run "$IRONBELL" get hardware machine1 -o yaml

step "The public HTTP listener (where machines being provisioned connect): health and metrics"
run curl -sS --max-time 5 "http://127.0.0.1:$port/healthz"
echo
printf '%s$ curl -s http://127.0.0.1:%s/metrics | grep ironbell_objects%s\n' "$bold" "$port" "$plain"
curl -sS --max-time 5 "http://127.0.0.1:$port/metrics" | grep '^ironbell_objects' || {
	echo "(no ironbell_objects metrics)"
	failed=1
}

if [ -t 0 ] && [ -t 1 ]; then
	step "ironbelld keeps running. In another terminal, try:"
	echo "    export IRONBELL_SOCKET=$sock"
	echo "    $IRONBELL get hw -o wide"
	echo "    $IRONBELL get workflow machine1-ubuntu -o yaml"
	echo "    $IRONBELL events"
	echo "    $IRONBELL delete workflow machine1-ubuntu"
	echo "Press Ctrl-C to stop it and remove $tmp."
	# Ctrl-C reaches the daemon too (it stops cleanly, status 0); the
	# cleanup below stops it if it is still running.
	interrupted=no
	trap 'interrupted=yes' INT
	wait "$daemon_pid"
	status=$?
	if ! kill -0 "$daemon_pid" 2>/dev/null; then
		daemon_pid=
		if [ "$interrupted" = no ] && [ "$status" -ne 0 ]; then
			echo "ironbelld exited by itself (status $status)"
			failed=1
		fi
	fi
else
	step "No terminal: stopping now"
fi
cleanup
if [ "$failed" -eq 0 ]; then
	step "Demo finished: every step worked"
else
	step "Demo finished with a failed step (see above)"
fi
exit "$failed"
