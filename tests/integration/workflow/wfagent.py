#!/usr/bin/python3
"""wfagent -- a scripted worker of proto.WorkflowService for the workflow
integration tests.

The tests drive ironbelld's worker API step by step from the shell: one
GetAction, one ReportActionStatus with chosen fields, a call with raw bytes
(a malformed message, an unknown method), or a whole workflow played as
tink-agent plays it, with chosen actions failing or left hanging. Each call
prints one JSON line; a gRPC status other than OK is a result, not an error
of this program.

Stubs are generated from the project's common/tink.proto by grpc_tools into
the directory $WF_STUBS ("gen" makes them once, before any concurrent use).
Needs python3-grpcio and python3-grpc-tools, which import only under
/usr/bin/python3.

  wfagent.py gen
  wfagent.py [--addr H:P] [--tls CA] get --agent A
  wfagent.py ... report --wf W --agent A --task T --action X --name N
                        --state S [--start T] [--stop T] [--duration D]
                        [--message M]
  wfagent.py ... raw --path P --hex HEX [--big N]
  wfagent.py ... run --agent A [--fail NAME[:N]] [--hang NAME]
                     [--stop-after K] [--max-seconds S]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("top_srcdir") or os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def stubs_dir():
    d = os.environ.get("WF_STUBS")
    if not d:
        sys.exit("wfagent: WF_STUBS must name the stubs directory")
    return d


def gen():
    d = stubs_dir()
    os.makedirs(d, exist_ok=True)
    proto = os.path.join(SRCDIR, "common")
    r = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", proto,
                        "--python_out", d, "--grpc_python_out", d,
                        os.path.join(proto, "tink.proto")])
    return r.returncode


def load():
    sys.path.insert(0, stubs_dir())
    import grpc  # noqa: E402
    import tink_pb2  # noqa: E402
    import tink_pb2_grpc  # noqa: E402
    return grpc, tink_pb2, tink_pb2_grpc


def channel(grpc, args):
    if args.tls:
        with open(args.tls, "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        return grpc.secure_channel(args.addr, creds)
    return grpc.insecure_channel(args.addr)


def status(grpc, e):
    """The code name and details of a grpc.RpcError."""
    return e.code().name, e.details() or ""


def to_dict(msg):
    from google.protobuf import json_format
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def get_action(stub, pb, grpc, agent, deadline):
    try:
        r = stub.GetAction(pb.ActionRequest(agent_id=agent), timeout=deadline)
        return {"code": "OK", "details": "", "response": to_dict(r)}
    except grpc.RpcError as e:
        c, d = status(grpc, e)
        return {"code": c, "details": d}


def stamp(pb, t):
    from google.protobuf import timestamp_pb2
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int(float(t) * 1e9))
    return ts


def report(stub, pb, grpc, deadline, wf, agent, task, action, name, state,
           start=None, stop=None, duration="", message=""):
    req = pb.ActionStatusRequest(workflow_id=wf, agent_id=agent, task_id=task,
                                 action_id=action, action_name=name,
                                 action_state=pb.ActionStatusRequest.StateType.Value(state),
                                 execution_duration=duration)
    if start is not None:
        req.execution_start.CopyFrom(stamp(pb, start))
    if stop is not None:
        req.execution_stop.CopyFrom(stamp(pb, stop))
    if message:
        req.message.message = message
    try:
        stub.ReportActionStatus(req, timeout=deadline)
        return {"code": "OK", "details": ""}
    except grpc.RpcError as e:
        c, d = status(grpc, e)
        return {"code": c, "details": d}


def out(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def varint(n):
    b = b""
    while n > 0x7f:
        b += bytes([n & 0x7f | 0x80])
        n >>= 7
    return b + bytes([n])


def cmd_raw(grpc, args):
    ch = channel(grpc, args)
    call = ch.unary_unary(args.path)
    body = bytes.fromhex(args.hex)
    if args.big:
        # field 1 (a string) of args.big bytes: over the server's cap
        body += b"\x0a" + varint(args.big) + b"x" * args.big
    try:
        r = call(body, timeout=args.deadline)
        out({"code": "OK", "details": "", "response_hex": r.hex()})
    except grpc.RpcError as e:
        c, d = status(grpc, e)
        out({"code": c, "details": d})
    return 0


def parse_fail(spec):
    """NAME or NAME:N -> (name, attempts to fail; -1 = every one)."""
    if not spec:
        return None, 0
    name, _, n = spec.partition(":")
    return name, int(n) if n else -1


def cmd_run(stub, pb, grpc, args):
    """Plays tink-agent: GetAction, report RUNNING, then the result. The
    idle answers (NOT_FOUND, FAILED_PRECONDITION) are waited out until
    --max-seconds; once an action was done, NOT_FOUND ends the run."""
    fail_name, fail_n = parse_fail(args.fail)
    failed = {}
    done = 0
    end = time.monotonic() + args.max_seconds
    while time.monotonic() < end:
        if args.stop_after and done >= args.stop_after:
            out({"end": "stop-after", "done": done})
            return 0
        g = get_action(stub, pb, grpc, args.agent, args.deadline)
        out({"get": g})
        if g["code"] in ("NOT_FOUND", "FAILED_PRECONDITION", "UNAVAILABLE",
                         "DEADLINE_EXCEEDED"):
            if g["code"] == "NOT_FOUND" and done > 0:
                out({"end": "NOT_FOUND", "done": done})
                return 0
            time.sleep(0.3)
            continue
        if g["code"] != "OK":
            out({"end": g["code"], "done": done})
            return 1
        a = g["response"]
        ids = (a["workflow_id"], a.get("agent_id", args.agent), a["task_id"], a["action_id"],
               a.get("name", ""))
        t0 = time.time()
        r = report(stub, pb, grpc, args.deadline, *ids, "RUNNING", start=t0)
        out({"report": "RUNNING", "action": ids[4], "result": r})
        if r["code"] != "OK":
            out({"end": r["code"], "done": done})
            return 1
        if args.hang and ids[4] == args.hang:
            out({"end": "hang", "done": done, "action": a})
            return 0
        n = failed.get(ids[4], 0)
        if ids[4] == fail_name and (fail_n < 0 or n < fail_n):
            failed[ids[4]] = n + 1
            state, msg = "FAILED", "%s failed (attempt %d) on %s" % (ids[4], n + 1, args.agent)
        else:
            state, msg = "SUCCESS", "%s done by %s" % (ids[4], args.agent)
        dur = "%d.5s" % (done + 1)
        r = report(stub, pb, grpc, args.deadline, *ids, state, start=t0, stop=t0 + 1,
                   duration=dur, message=msg)
        out({"report": state, "action": ids[4], "duration": dur, "message": msg, "result": r})
        if r["code"] != "OK":
            out({"end": r["code"], "done": done})
            return 1
        done += 1
    out({"end": "max-seconds", "done": done})
    return 1


def main():
    p = argparse.ArgumentParser(prog="wfagent")
    p.add_argument("--addr", default="127.0.0.1:42113")
    p.add_argument("--tls", help="CA file: TLS instead of h2c")
    p.add_argument("--deadline", type=float, default=30.0, help="seconds per call")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("gen")
    g = sub.add_parser("get")
    g.add_argument("--agent", required=True)
    r = sub.add_parser("report")
    for f in ("wf", "agent", "task", "action", "name", "state"):
        r.add_argument("--" + f, required=True)
    r.add_argument("--start")
    r.add_argument("--stop")
    r.add_argument("--duration", default="")
    r.add_argument("--message", default="")
    w = sub.add_parser("raw")
    w.add_argument("--path", required=True)
    w.add_argument("--hex", default="")
    w.add_argument("--big", type=int, default=0, help="then field 1 of this many bytes")
    n = sub.add_parser("run")
    n.add_argument("--agent", required=True)
    n.add_argument("--fail")
    n.add_argument("--hang")
    n.add_argument("--stop-after", type=int, default=0)
    n.add_argument("--max-seconds", type=float, default=60.0)
    args = p.parse_args()

    if args.cmd == "gen":
        return gen()
    grpc, pb, pbg = load()
    if args.cmd == "raw":
        return cmd_raw(grpc, args)
    stub = pbg.WorkflowServiceStub(channel(grpc, args))
    if args.cmd == "get":
        out(get_action(stub, pb, grpc, args.agent, args.deadline))
        return 0
    if args.cmd == "report":
        out(report(stub, pb, grpc, args.deadline, args.wf, args.agent, args.task, args.action,
                   args.name, args.state, start=args.start, stop=args.stop,
                   duration=args.duration, message=args.message))
        return 0
    return cmd_run(stub, pb, grpc, args)


if __name__ == "__main__":
    sys.exit(main())
