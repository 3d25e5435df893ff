#!/usr/bin/python3
"""tink_server — a tiny WorkflowService (python3-grpcio) with one scripted,
in-memory workflow, to prove the test clients of tests/grpc/ against a
real gRPC server before ironbelld's exists, and as the reference a test
can compare ironbelld's answers with.

    tink_server.py --port-file F [--events F] [--actions 3 | --workflow JSON|@FILE]
                   [--agent-id ID] [--not-yet N] [--flaky-reports N]
                   [--cert PEM --key PEM]

It listens on 127.0.0.1, port 0 (a free one), and writes the port it got to
--port-file when it is ready. The workflow "default/wf1", task "task1",
hands out its actions in order to --agent-id only:

  GetAction
    another agent, or the workflow is over (SUCCESS, FAILED, TIMEOUT):
      NOT_FOUND
    the first --not-yet calls: FAILED_PRECONDITION (not yet started)
    (with agent_attributes, the event says what they held)
    otherwise the first action that has not ended; an action reported
    RUNNING and asked for again is handed out again (a restarted agent)
  ReportActionStatus
    the first --flaky-reports reports: UNAVAILABLE (a server restarting)
    agent_id not the workflow's: PERMISSION_DENIED
    workflow_id, task_id or action_id unknown: INVALID_ARGUMENT
    an action that has ended, or one that is not the current action:
      FAILED_PRECONDITION
    RUNNING: the action runs; SUCCESS: the next action, or the workflow
    ends SUCCESS; FAILED / TIMEOUT: the workflow ends so

Each call is one JSON line in --events (and on stderr with --verbose):
    {"rpc": "GetAction", "agent_id": ..., "code": "OK", "action_id": ...,
     "deadline": 9.98}
    {"rpc": "ReportActionStatus", "action_id": ..., "state": "RUNNING",
     "code": "OK", "workflow_state": "RUNNING", "message": ...}
"deadline" is the time the client gave the call (grpc-timeout), in
seconds, or null. SIGTERM or SIGINT stops the server.
"""

import argparse
import json
import os
import signal
import sys
import threading
from concurrent import futures

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

WORKFLOW_ID = "default/wf1"
TASK_ID = "task1"


def default_actions(n):
    return [
        {
            "name": "action-%d" % (i + 1),
            "image": "quay.io/tinkerbell/actions/noop:%d" % (i + 1),
            "timeout": 60 * (i + 1),
            "command": ["/bin/sh", "-c", "true"],
            "volumes": ["/dev:/dev"],
            "environment": ["A=%d" % (i + 1)],
        }
        for i in range(n)
    ]


class Workflow:
    """The state, shared by the server's threads under one lock."""

    def __init__(self, actions, agent_id, not_yet, flaky_reports=0):
        self.lock = threading.Lock()
        self.actions = actions
        for i, a in enumerate(actions):
            a.setdefault("id", "%s-%d" % (a["name"], i))
            a["state"] = "PENDING"
        self.agent_id = agent_id
        self.not_yet = not_yet
        self.flaky_reports = flaky_reports
        self.state = "PENDING"

    def current(self):
        for a in self.actions:
            if a["state"] in ("PENDING", "RUNNING"):
                return a
        return None


def make_servicer(pb, pb_grpc, wf, events):
    import grpc

    def log(ev):
        line = json.dumps(ev, sort_keys=True)
        with wf.lock:
            events.write(line + "\n")
            events.flush()

    def deadline(context):
        t = context.time_remaining()
        return None if t is None or t > 1e9 else round(t, 3)

    class Servicer(pb_grpc.WorkflowServiceServicer):
        def GetAction(self, request, context):
            ev = {"rpc": "GetAction", "agent_id": request.agent_id, "deadline": deadline(context)}
            if request.HasField("agent_attributes"):
                at = request.agent_attributes
                ev["attributes"] = {
                    "cpu_cores": at.cpu.total_cores,
                    "processors": len(at.cpu.processors),
                    "block": [b.name for b in at.block],
                    "network": [n.mac for n in at.network],
                    "gpu": len(at.gpu),
                    "product": at.product.name,
                }
            code, details, a = self._get(request)
            ev["code"] = code.name
            if a:
                ev["action_id"] = a["id"]
            log(ev)
            if code != grpc.StatusCode.OK:
                context.abort(code, details)
            return pb.ActionResponse(
                workflow_id=WORKFLOW_ID,
                task_id=TASK_ID,
                agent_id=wf.agent_id,
                action_id=a["id"],
                name=a["name"],
                image=a.get("image", ""),
                timeout=a.get("timeout", 0),
                command=a.get("command", []),
                volumes=a.get("volumes", []),
                environment=sorted(a.get("environment", [])),
                pid=a.get("pid", ""),
                namespaces=pb.Namespaces(network=a.get("network", ""), pid=a.get("pid", "")),
            )

        def _get(self, request):
            with wf.lock:
                if request.agent_id != wf.agent_id:
                    return grpc.StatusCode.NOT_FOUND, "no workflow for agent %s" % request.agent_id, None
                if wf.not_yet > 0:
                    wf.not_yet -= 1
                    return grpc.StatusCode.FAILED_PRECONDITION, "workflow not yet started", None
                a = wf.current()
                if a is None or wf.state in ("SUCCESS", "FAILED", "TIMEOUT"):
                    return grpc.StatusCode.NOT_FOUND, "workflow %s is over (%s)" % (WORKFLOW_ID, wf.state), None
                wf.state = "RUNNING"
                return grpc.StatusCode.OK, "", dict(a)

        def ReportActionStatus(self, request, context):
            state = pb.ActionStatusRequest.StateType.Name(request.action_state)
            code, details = self._report(request, state)
            ev = {
                "rpc": "ReportActionStatus",
                "agent_id": request.agent_id,
                "workflow_id": request.workflow_id,
                "task_id": request.task_id,
                "action_id": request.action_id,
                "action_name": request.action_name,
                "state": state,
                "code": code.name,
                "details": details,
                "workflow_state": wf.state,
                "message": request.message.message,
                "execution_start": request.execution_start.ToNanoseconds() if request.HasField("execution_start") else None,
                "execution_stop": request.execution_stop.ToNanoseconds() if request.HasField("execution_stop") else None,
                "execution_duration": request.execution_duration,
                "deadline": deadline(context),
            }
            log(ev)
            if code != grpc.StatusCode.OK:
                context.abort(code, details)
            return pb.ActionStatusResponse()

        def _report(self, r, state):
            with wf.lock:
                if wf.flaky_reports > 0:
                    wf.flaky_reports -= 1
                    return grpc.StatusCode.UNAVAILABLE, "try again (--flaky-reports)"
                if r.agent_id != wf.agent_id:
                    return grpc.StatusCode.PERMISSION_DENIED, "agent %s is not this workflow's" % r.agent_id
                if r.workflow_id != WORKFLOW_ID or r.task_id != TASK_ID:
                    return grpc.StatusCode.INVALID_ARGUMENT, "no workflow %s task %s" % (r.workflow_id, r.task_id)
                a = next((x for x in wf.actions if x["id"] == r.action_id), None)
                if a is None:
                    return grpc.StatusCode.INVALID_ARGUMENT, "no action %s" % r.action_id
                if a is not wf.current() or wf.state not in ("RUNNING",):
                    return grpc.StatusCode.FAILED_PRECONDITION, "action %s is %s" % (a["id"], a["state"])
                if state == "RUNNING":
                    a["state"] = "RUNNING"
                elif state == "SUCCESS":
                    a["state"] = "SUCCESS"
                    if wf.current() is None:
                        wf.state = "SUCCESS"
                elif state in ("FAILED", "TIMEOUT"):
                    a["state"] = state
                    wf.state = state
                else:
                    return grpc.StatusCode.INVALID_ARGUMENT, "state %s is not a report" % state
                return grpc.StatusCode.OK, ""

    return Servicer()


def main(argv):
    p = argparse.ArgumentParser(description="a scripted WorkflowService for tests")
    p.add_argument("--port-file", required=True)
    p.add_argument("--events", help="JSON lines of every call (default: stderr)")
    p.add_argument("--actions", type=int, default=3)
    p.add_argument("--workflow", help="JSON or @FILE: the list of actions")
    p.add_argument("--agent-id", default="52:54:00:12:34:56")
    p.add_argument("--not-yet", type=int, default=0, help="answer FAILED_PRECONDITION this many times first")
    p.add_argument("--flaky-reports", type=int, default=0, help="answer the first N reports UNAVAILABLE")
    p.add_argument("--cert", help="TLS certificate (PEM); with --key")
    p.add_argument("--key")
    p.add_argument("--stubs", help="directory for the generated stubs")
    args = p.parse_args(argv)

    import grpc
    import tinkproto

    pb, pb_grpc = tinkproto.load(args.stubs)
    if args.workflow:
        text = args.workflow
        if text.startswith("@"):
            with open(text[1:], encoding="utf-8") as f:
                text = f.read()
        actions = json.loads(text)
    else:
        actions = default_actions(args.actions)
    wf = Workflow(actions, args.agent_id, args.not_yet, args.flaky_reports)
    events = open(args.events, "a", encoding="utf-8") if args.events else sys.stderr

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    pb_grpc.add_WorkflowServiceServicer_to_server(make_servicer(pb, pb_grpc, wf, events), server)
    if args.cert:
        with open(args.cert, "rb") as f:
            cert = f.read()
        with open(args.key, "rb") as f:
            key = f.read()
        port = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([(key, cert)]))
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    if not port:
        print("tink_server: cannot listen on 127.0.0.1", file=sys.stderr)
        return 1
    server.start()

    stop = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.set())
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, args.port_file)
    # Bounded: a test that forgets the server still ends it within a day.
    stop.wait(86400)
    server.stop(1).wait(5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
