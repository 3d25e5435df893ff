#!/bin/sh
# test_agent_docker — ironbell-agent's docker runtime against a stand-in
# for the Docker Engine API (tests/integration/fake_dockerd.py: the
# endpoints the agent uses, on a unix socket, each "container" its Cmd run
# on the host; the real dockerd cannot run on every test machine) and the
# worker protocol's reference server: the container's definition (Env,
# Cmd, Binds, PidMode, NetworkMode, Privileged), the output streamed back
# through chunks and multiplexed frames, an image that cannot be pulled
# used from the local store after 5 tries, a failing container, a
# container over its timeout stopped, and every container removed.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/grpc/grpc.sh"

grpc_need_py
AGENT_BIN=$top_builddir/ironbell-agent
ID=52:54:00:12:34:56
DSOCK=$IB_TMP/docker.sock
DEV=$IB_TMP/docker.events

"$GRPC_PY" "$top_srcdir/tests/integration/fake_dockerd.py" --socket "$DSOCK" --events "$DEV" \
	--local local/unpullable:1 >"$IB_TMP/dockerd.log" 2>&1 &
ib_bg $!
wait_for 20 test -S "$DSOCK" || bail_out "fake_dockerd.py did not start"

# docker_saw METHOD PATH-ERE: the events' paths for METHOD matching ERE.
docker_saw() {
	"$GRPC_PY" -c '
import json, re, sys
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    if e["method"] == sys.argv[2] and re.search(sys.argv[3], e["path"]):
        print(json.dumps(e["body"], sort_keys=True) if e["body"] else e["path"])' "$DEV" "$1" "$2"
}

printf '%s\n' '[
 {"name": "disk", "image": "quay.io/tinkerbell/actions/cexec:v1", "timeout": 30,
  "command": ["/bin/sh", "-c", "echo writing $DEST; echo E:a warning >&2"],
  "environment": ["DEST=/dev/sda"], "volumes": ["/dev:/dev", "/lib/firmware:/lib/firmware:ro"],
  "pid": "host", "network": "host"},
 {"name": "offline", "image": "local/unpullable:1", "timeout": 30, "command": ["true"]},
 {"name": "bad", "image": "busybox", "timeout": 30, "command": ["/bin/sh", "-c", "echo E:cannot mount; exit 4"]}]' \
	>"$IB_TMP/wf.json"
grpc_server_start dk --agent-id "$ID" --workflow "@$IB_TMP/wf.json" || bail_out "tink_server.py did not start"
run "$AGENT_BIN" --runtime docker --docker-socket "$DSOCK" --no-privileged --id "$ID" \
	--tinkerbell-grpc-authority "127.0.0.1:$GRPC_PORT" --max-backoff 1 --once
is "$rc" 1 "docker: the agent exits 1 after the failing action"
is "$(grpc_reports "$GRPC_EVENTS")" "disk-0 RUNNING OK
disk-0 SUCCESS OK
offline-1 RUNNING OK
offline-1 SUCCESS OK
bad-2 RUNNING OK
bad-2 FAILED OK" "docker: two actions succeed, the third fails"
create=$(docker_saw POST '/containers/create$' | sed -n 1p)
like "$create" '"Binds": \["/dev:/dev", "/lib/firmware:/lib/firmware:ro"\]' "docker: volumes are Binds"
like "$create" '"PidMode": "host"' "docker: the pid namespace is PidMode"
like "$create" '"NetworkMode": "host"' "docker: the network namespace is NetworkMode"
like "$create" '"Privileged": false' "docker: --no-privileged"
like "$create" '"Env": \["DEST=/dev/sda"\]' "docker: the environment is Env"
like "$create" '"Cmd": \["/bin/sh", "-c", ' "docker: the command is Cmd"
like "$create" '"Image": "quay.io/tinkerbell/actions/cexec:v1"' "docker: the image"
like "$err" '\[disk\] writing /dev/sda' "docker: the container's output, with its environment"
like "$err" '\[disk\] E:a warning' "docker: its stderr too"
is "$(docker_saw POST 'images/create.*unpullable' | wc -l | tr -d ' ')" 5 "docker: an unpullable image is tried 5 times"
like "$(docker_saw GET '/images/local%2Funpullable%3A1/json')" '.' "docker: then the local image is looked up and used"
like "$(docker_saw POST 'images/create.*busybox')" 'fromImage=busybox&tag=latest' "docker: an untagged image is pulled as :latest"
"$GRPC_PY" -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    if e.get("state") == "FAILED":
        print(e["message"])' "$GRPC_EVENTS" >"$IB_TMP/failed.msg"
like "$(cat "$IB_TMP/failed.msg")" 'exit status 4' "docker: the failure's exit status"
like "$(cat "$IB_TMP/failed.msg")" 'cannot mount' "docker: the failure's output"
is "$(docker_saw DELETE 'force=1' | wc -l | tr -d ' ')" 3 "docker: every container is removed, forced"
ib_kill "$GRPC_SERVER_PID"

# ---- over its timeout: stopped, TIMEOUT, removed ----
printf '%s\n' '[{"name": "slow", "image": "busybox:1", "timeout": 1, "command": ["/bin/sh", "-c", "echo begin; sleep 30"]}]' \
	>"$IB_TMP/slow.json"
grpc_server_start dk2 --agent-id "$ID" --workflow "@$IB_TMP/slow.json" || bail_out "tink_server.py did not start"
: >"$DEV"
run "$AGENT_BIN" --runtime docker --docker-socket "$DSOCK" --no-privileged --id "$ID" \
	--tinkerbell-grpc-authority "127.0.0.1:$GRPC_PORT" --max-backoff 1 --once
is "$(grpc_reports "$GRPC_EVENTS")" "slow-0 RUNNING OK
slow-0 TIMEOUT OK" "docker timeout: reported TIMEOUT"
like "$(docker_saw POST '/stop')" 'stop\?t=5$' "docker timeout: the container is stopped with a 5 s grace"
is "$(docker_saw DELETE 'force=1' | wc -l | tr -d ' ')" 1 "docker timeout: and removed"
ib_kill "$GRPC_SERVER_PID"

tap_done
