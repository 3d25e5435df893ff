#!/usr/bin/python3
"""floor.py - the workflow benchmark's second reference: python3-grpcio's
own server (grpc-core's HTTP/2 in C, the handlers in Python) answering
the worker protocol as floor.c does, from memory: every agent gets a
canned workflow of --actions actions (workflow "default/bench-<agent>",
task "task-0", action "action-<i>", image busybox, command ["true"],
timeout 60); GetAction answers the next one, or NOT_FOUND once all are
done; a report of that action is accepted and SUCCESS moves on; a report
of another action is FAILED_PRECONDITION, of an unknown agent NOT_FOUND.

    floor.py PYDIR [--actions 10] [--workers 8]

PYDIR holds tink_pb2.py and tink_pb2_grpc.py, generated from
common/tink.proto by grpc_tools.protoc (run.sh makes them). Prints
"port N" once it listens on 127.0.0.1 (a free port); runs until SIGTERM
or SIGINT."""

import argparse
import signal
import sys
import threading
from concurrent import futures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pydir")
    ap.add_argument("--actions", type=int, default=10)
    ap.add_argument("--workers", type=int, default=8)
    args = ap.parse_args()
    sys.path.insert(0, args.pydir)
    import grpc
    import tink_pb2
    import tink_pb2_grpc

    nxt = {}
    lock = threading.Lock()
    success = tink_pb2.ActionStatusRequest.SUCCESS

    class Service(tink_pb2_grpc.WorkflowServiceServicer):
        def GetAction(self, req, ctx):
            if not req.agent_id:
                ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "no agent_id")
            with lock:
                i = nxt.setdefault(req.agent_id, 0)
            if i >= args.actions:
                ctx.abort(grpc.StatusCode.NOT_FOUND, "no workflow for this agent")
            name = "action-%d" % i
            return tink_pb2.ActionResponse(
                workflow_id="default/bench-" + req.agent_id, task_id="task-0",
                agent_id=req.agent_id, action_id=name, name=name, image="busybox",
                timeout=60, command=["true"])

        def ReportActionStatus(self, req, ctx):
            with lock:
                i = nxt.get(req.agent_id)
                if i is None:
                    ctx.abort(grpc.StatusCode.NOT_FOUND, "no workflow for this agent")
                if req.action_id != "action-%d" % i:
                    ctx.abort(grpc.StatusCode.FAILED_PRECONDITION,
                              "not the action handed out")
                if req.action_state == success:
                    nxt[req.agent_id] = i + 1
            return tink_pb2.ActionStatusResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.workers),
                         options=[("grpc.max_concurrent_streams", 100)])
    tink_pb2_grpc.add_WorkflowServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print("port %d" % port, flush=True)
    done = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: done.set())
    done.wait()
    server.stop(0)


if __name__ == "__main__":
    main()
