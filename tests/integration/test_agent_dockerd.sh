#!/bin/sh
# test_agent_dockerd — ironbell-agent's docker runtime against the real
# Docker Engine: a private dockerd (vfs storage, no bridge, no iptables)
# in the test's directory, an image made by docker import of the host's
# busybox (no registry is reachable: the pull fails 5 times and the local
# image is used), the worker protocol's reference server. A workflow's
# actions run in containers with their environment, a volume and the
# network namespace "none"; a failing container is reported FAILED with
# its output; a container over its timeout is stopped and reported
# TIMEOUT; no container is left. Containers run unprivileged
# (--no-privileged): a sandbox may refuse privileged ones.
# Needs dockerd and docker (Debian's docker.io), busybox, root; skips
# without them.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/grpc/grpc.sh"

command -v dockerd >/dev/null 2>&1 || skip_all "dockerd is not installed (docker.io)"
command -v docker >/dev/null 2>&1 || skip_all "the docker client is not installed"
[ -x /bin/busybox ] || skip_all "busybox is not installed"
[ "$(id -u)" = 0 ] || skip_all "dockerd needs root"
grpc_need_py
AGENT_BIN=$top_builddir/ironbell-agent
ID=52:54:00:12:34:56
# The unix socket's path must fit in sun_path: a short directory of its own.
DD=$(mktemp -d /tmp/ib-dockerd.XXXXXX) || bail_out "mktemp"
DSOCK=$DD/d.sock
dk() { docker -H "unix://$DSOCK" "$@"; }

mkdir -p "$DD/data" "$DD/exec"
dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs \
	--data-root "$DD/data" --exec-root "$DD/exec" --pidfile "$DD/d.pid" -H "unix://$DSOCK" \
	>"$IB_TMP/dockerd.log" 2>&1 &
DPID=$!
cleanup_dockerd() {
	kill -TERM "$DPID" 2>/dev/null
	_i=0
	while ib_alive "$DPID" && [ $_i -lt 150 ]; do sleep 0.1; _i=$((_i + 1)); done
	kill -KILL "$DPID" 2>/dev/null
	rm -rf "$DD" 2>/dev/null
}
trap 'cleanup_dockerd; ib_cleanup' EXIT
wait_for 60 dk version >/dev/null 2>&1 || {
	diag "$(tail -n 20 "$IB_TMP/dockerd.log")"
	skip_all "dockerd does not start here"
}

# The image: the host's busybox and the libraries it needs.
R=$IB_TMP/root
mkdir -p "$R/bin"
cp /bin/busybox "$R/bin/"
for l in $(ldd /bin/busybox 2>/dev/null | grep -o '/[^ ]*'); do
	mkdir -p "$R$(dirname "$l")" && cp "$l" "$R$l"
done
for c in sh echo sleep cat; do ln -s busybox "$R/bin/$c"; done
tar -C "$R" -cf "$IB_TMP/bb.tar" . && dk import "$IB_TMP/bb.tar" ironbell-test/busybox:1 >/dev/null ||
	bail_out "docker import failed"

mkdir -p "$IB_TMP/vol"
cat >"$IB_TMP/wf.json" <<EOF
[{"name": "hello", "image": "ironbell-test/busybox:1", "timeout": 60, "network": "none",
  "command": ["/bin/sh", "-c", "echo hello \$WHO; echo to stderr >&2; echo kept >/vol/out"],
  "environment": ["WHO=world"], "volumes": ["$IB_TMP/vol:/vol"]},
 {"name": "broken", "image": "ironbell-test/busybox:1", "timeout": 60, "network": "none",
  "command": ["/bin/sh", "-c", "echo no such disk; exit 5"]}]
EOF
grpc_server_start dd --agent-id "$ID" --workflow "@$IB_TMP/wf.json" || bail_out "tink_server.py did not start"
IB_CMD_TIMEOUT=120 run "$AGENT_BIN" --runtime docker --docker-socket "$DSOCK" --no-privileged \
	--id "$ID" --tinkerbell-grpc-authority "127.0.0.1:$GRPC_PORT" --max-backoff 1 --once
is "$rc" 1 "dockerd: the agent exits 1 after the failing action"
is "$(grpc_reports "$GRPC_EVENTS")" "hello-0 RUNNING OK
hello-0 SUCCESS OK
broken-1 RUNNING OK
broken-1 FAILED OK" "dockerd: the first container succeeds, the second fails"
like "$err" '\[hello\] hello world' "dockerd: the container's output, with its environment"
like "$err" '\[hello\] to stderr' "dockerd: its standard error too"
is "$(cat "$IB_TMP/vol/out" 2>/dev/null)" "kept" "dockerd: the volume is bound"
like "$err" 'the local image is used' "dockerd: with no registry, the imported image is used"
like "$(grep '"state": "FAILED"' "$GRPC_EVENTS")" 'exit status 5.*no such disk' \
	"dockerd: the failure's exit status and output"
is "$(dk ps -aq | wc -l | tr -d ' ')" 0 "dockerd: no container is left"
ib_kill "$GRPC_SERVER_PID"

printf '%s\n' '[{"name": "slow", "image": "ironbell-test/busybox:1", "timeout": 2, "network": "none",
  "command": ["/bin/sh", "-c", "echo begin; sleep 60"]}]' >"$IB_TMP/slow.json"
grpc_server_start dd2 --agent-id "$ID" --workflow "@$IB_TMP/slow.json" || bail_out "tink_server.py did not start"
IB_CMD_TIMEOUT=120 run "$AGENT_BIN" --runtime docker --docker-socket "$DSOCK" --no-privileged \
	--id "$ID" --tinkerbell-grpc-authority "127.0.0.1:$GRPC_PORT" --max-backoff 1 --once
is "$(grpc_reports "$GRPC_EVENTS")" "slow-0 RUNNING OK
slow-0 TIMEOUT OK" "dockerd timeout: reported TIMEOUT"
like "$(grep '"state": "TIMEOUT"' "$GRPC_EVENTS")" 'begin' "dockerd timeout: with the output"
is "$(dk ps -aq | wc -l | tr -d ' ')" 0 "dockerd timeout: the container is stopped and removed"
ib_kill "$GRPC_SERVER_PID"

tap_done
