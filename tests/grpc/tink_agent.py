#!/usr/bin/python3
"""tink_agent — a test client of the worker protocol that plays HookOS's
tink-agent (python3-grpcio, stubs from common/tink.proto via tinkproto).

Agent mode (the default): loops GetAction(agent_id); for each action it
reports RUNNING, then the result the script chooses, with
execution_start, execution_stop, execution_duration and a message, as
tink-agent does. GetAction answered NOT_FOUND or FAILED_PRECONDITION (no
workflow, not yet) means back off and poll again, at most 5 s, as
tink-agent does; so do UNAVAILABLE and DEADLINE_EXCEEDED.

    tink_agent.py --target 127.0.0.1:42113 --agent-id 52:54:00:12:34:56 \\
        --script '{"actions": {"fail-me": {"result": "failed", "message": "boom"}}}' \\
        --until-done --max-calls 50

Every call prints one JSON line on stdout:
    {"call": "GetAction", "code": "OK", "details": "", "action": {...}}
    {"call": "ReportActionStatus", "state": "RUNNING", "action_id": ...,
     "code": "OK", "details": ""}
and the end one line {"call": "end", "reason": ..., "actions": N}.

The script (JSON, inline or @FILE) says what to do with each action:
    {"default": STEP, "actions": {"<action name>": STEP}, "steps": [STEP, ...]}
"steps" applies to the n-th action handed out (counting each hand-out),
then "actions" by name, then "default" ({"result": "success"}). A STEP:
    result   "success" | "failed" | "timeout" (report that state),
             "none" (report RUNNING only, never the result),
             "twice" (report SUCCESS two times)
    running  false: do not report RUNNING first
    message  the ActionMessage text (default: "" on success)
    sleep    seconds to wait between RUNNING and the result (default 0)
    duration execution_duration (default: measured, Go's format "0.1s")
    agent_id, workflow_id, task_id, action_id, action_name: put this
             value in the reports instead of the action's (a wrong ID)
    stop     true: end the loop after this action

--attributes default sends tests/grpc/attributes.json (a QEMU machine's
inventory) as agent_attributes with each GetAction, as tink-agent sends
what it finds; --report-retries N reports again, with the same backoff,
when a report gets a code tink-agent does not take as permanent (all but
OK, NOT_FOUND, INVALID_ARGUMENT, FAILED_PRECONDITION).

Raw mode: one call with bytes of your choosing (an unknown field, a
truncated message) and chosen metadata and deadline (grpc-timeout):
    tink_agent.py raw --target HOST:PORT --method GetAction \\
        (--hex 0a03616263 | --json '{"agent_id": "x"}') [--timeout 2.5] \\
        [--metadata key=value]...
H2 mode: the same over nghttp (nghttp2-client), where every header is
yours, grpc-timeout and content-type included:
    tink_agent.py h2 --url http://HOST:PORT --method GetAction --hex ... \\
        [--header grpc-timeout:1S]... [--no-default-headers]
Both print one JSON line with the gRPC status code name and details.

Exit status: 0 when the loop ended as asked (until-done, max-calls,
max-actions, stop), 1 on a usage or setup error. The calls' codes are in
the output: a test asserts on them.
"""

import argparse
import binascii
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

BACKOFF_MAX = 5.0  # tink-agent polls again at most 5 s later
GO_ZERO_TIME = -62135596800  # Go's time.Time{} as a Timestamp's seconds
RESULTS = ("success", "failed", "timeout", "none", "twice")
# The codes tink-agent does not report again (backoff.Permanent upstream).
REPORT_PERMANENT = ("NOT_FOUND", "INVALID_ARGUMENT", "FAILED_PRECONDITION")


def out(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def code_name(code):
    return code.name if code is not None else "UNKNOWN"


def load_script(text):
    if not text:
        return {}
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as f:
            text = f.read()
    script = json.loads(text)
    if not isinstance(script, dict):
        raise ValueError("the script is a JSON object")
    steps = list(script.get("steps", []))
    named = list(script.get("actions", {}).values())
    for step in steps + named + [script.get("default", {})]:
        r = step.get("result", "success")
        if r not in RESULTS:
            raise ValueError("result %r is not one of %s" % (r, ", ".join(RESULTS)))
    return script


def load_attributes(text, pb):
    """--attributes: "" (none), "default" (tests/grpc/attributes.json, a
    QEMU machine's inventory as tink-agent finds it), or JSON or @FILE in
    protobuf's JSON mapping of AgentAttributes."""
    if not text:
        return None
    if text == "default":
        text = "@" + os.path.join(os.path.dirname(os.path.abspath(__file__)), "attributes.json")
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as f:
            text = f.read()
    from google.protobuf import json_format

    attrs = pb.AgentAttributes()
    try:
        json_format.Parse(text, attrs)
    except json_format.ParseError as e:
        raise ValueError("--attributes: %s" % e)
    return attrs


def step_for(script, n, name):
    steps = script.get("steps", [])
    if n < len(steps):
        return steps[n]
    actions = script.get("actions", {})
    if name in actions:
        return actions[name]
    return script.get("default", {"result": "success"})


def go_duration(seconds):
    """Go's time.Duration.String() of a short duration, as tink-agent sends
    it: "1.5s", "250ms", "2m3s"."""
    if seconds < 1:
        return "%dms" % round(seconds * 1000)
    if seconds < 60:
        return ("%.3f" % seconds).rstrip("0").rstrip(".") + "s"
    m, s = divmod(seconds, 60)
    return "%dm%ss" % (m, ("%.3f" % s).rstrip("0").rstrip("."))


def channel(args):
    import grpc

    options = []
    if args.authority:
        options.append(("grpc.default_authority", args.authority))
    if args.tls_ca:
        with open(args.tls_ca, "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        if args.tls_name:
            options.append(("grpc.ssl_target_name_override", args.tls_name))
        return grpc.secure_channel(args.target, creds, options=options)
    return grpc.insecure_channel(args.target, options=options)


def metadata(args):
    md = []
    for kv in args.metadata or []:
        k, sep, v = kv.partition("=")
        if not sep:
            raise ValueError("--metadata wants KEY=VALUE, not %r" % kv)
        md.append((k.lower(), v))
    return md or None


class Agent:
    def __init__(self, args, pb, pb_grpc):
        import grpc

        self.grpc = grpc
        self.args = args
        self.pb = pb
        self.stub = pb_grpc.WorkflowServiceStub(channel(args))
        self.md = metadata(args)
        self.script = load_script(args.script)
        self.attributes = load_attributes(args.attributes, pb)

    def call(self, method, req):
        """(response or None, code, details) of one unary call."""
        try:
            resp = getattr(self.stub, method)(req, timeout=self.args.rpc_timeout, metadata=self.md)
            return resp, self.grpc.StatusCode.OK, ""
        except self.grpc.RpcError as e:
            return None, e.code(), e.details() or ""

    def report(self, action, step, state, start, stop, message):
        pb = self.pb
        # As tink-agent: the agent_id the action came with, a stop time
        # of Go's zero time.Time (year 1, a negative seconds) while
        # RUNNING, and a message always there, empty or not.
        req = pb.ActionStatusRequest(
            workflow_id=step.get("workflow_id", action.workflow_id),
            agent_id=step.get("agent_id", action.agent_id or self.args.agent_id),
            task_id=step.get("task_id", action.task_id),
            action_id=step.get("action_id", action.action_id),
            action_name=step.get("action_name", action.name),
            action_state=pb.ActionStatusRequest.StateType.Value(state),
        )
        req.execution_start.FromNanoseconds(int(start * 1e9))
        if stop is not None:
            req.execution_stop.FromNanoseconds(int(stop * 1e9))
            req.execution_duration = step.get("duration", go_duration(stop - start))
        else:
            req.execution_stop.seconds = GO_ZERO_TIME
        req.message.SetInParent()
        req.message.message = message
        # As tink-agent: a report is tried again with backoff unless it
        # succeeded or the code is one of the permanent ones; here at
        # most --report-retries times.
        backoff = self.args.poll
        for attempt in range(self.args.report_retries + 1):
            _, code, details = self.call("ReportActionStatus", req)
            out(
                {
                    "call": "ReportActionStatus",
                    "state": state,
                    "workflow_id": req.workflow_id,
                    "task_id": req.task_id,
                    "action_id": req.action_id,
                    "action_name": req.action_name,
                    "agent_id": req.agent_id,
                    "attempt": attempt + 1,
                    "code": code_name(code),
                    "details": details,
                }
            )
            if code == self.grpc.StatusCode.OK or code_name(code) in REPORT_PERMANENT:
                break
            if attempt < self.args.report_retries:
                time.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
        return code

    def run_action(self, action, step):
        start = time.time()
        if step.get("running", True):
            self.report(action, step, "RUNNING", start, None, step.get("running_message", ""))
        if step.get("sleep"):
            time.sleep(float(step["sleep"]))
        result = step.get("result", "success")
        if result == "none":
            return
        state = {"success": "SUCCESS", "failed": "FAILED", "timeout": "TIMEOUT", "twice": "SUCCESS"}[result]
        default_msg = {"SUCCESS": "", "FAILED": "exit status 1", "TIMEOUT": "action timed out"}[state]
        msg = step.get("message", default_msg)
        stop = time.time()
        self.report(action, step, state, start, stop, msg)
        if result == "twice":
            self.report(action, step, state, start, stop, msg)

    def loop(self):
        pb, grpc = self.pb, self.grpc
        handed = 0
        reason = "max-calls"
        backoff = self.args.poll
        for _ in range(self.args.max_calls):
            req = pb.ActionRequest(agent_id=self.args.agent_id)
            if self.attributes is not None:
                req.agent_attributes.CopyFrom(self.attributes)
            resp, code, details = self.call("GetAction", req)
            line = {"call": "GetAction", "agent_id": self.args.agent_id, "code": code_name(code), "details": details}
            if resp is not None:
                line["action"] = action_dict(resp)
            out(line)
            if code == grpc.StatusCode.OK:
                backoff = self.args.poll
                step = step_for(self.script, handed, resp.name)
                handed += 1
                self.run_action(resp, step)
                if step.get("stop"):
                    reason = "stop"
                    break
                if self.args.max_actions and handed >= self.args.max_actions:
                    reason = "max-actions"
                    break
                continue
            if code == grpc.StatusCode.NOT_FOUND and self.args.until_done and handed > 0:
                reason = "done"
                break
            # NOT_FOUND (no workflow), FAILED_PRECONDITION (not yet) and
            # the transient codes: back off and poll again, at most 5 s.
            time.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)
        out({"call": "end", "reason": reason, "actions": handed})
        return 0


def action_dict(a):
    return {
        "workflow_id": a.workflow_id,
        "task_id": a.task_id,
        "agent_id": a.agent_id,
        "action_id": a.action_id,
        "name": a.name,
        "image": a.image,
        "timeout": a.timeout,
        "command": list(a.command),
        "volumes": list(a.volumes),
        "environment": list(a.environment),
        "pid": a.pid,
        "namespaces": {"network": a.namespaces.network, "pid": a.namespaces.pid},
    }


METHODS = {
    "GetAction": ("ActionRequest", "ActionResponse"),
    "ReportActionStatus": ("ActionStatusRequest", "ActionStatusResponse"),
}


def request_bytes(args, pb):
    if args.hex is not None:
        return binascii.unhexlify(args.hex)
    if args.json is not None:
        from google.protobuf import json_format

        if args.method not in METHODS:
            raise ValueError("--json needs a method of WorkflowService")
        msg = getattr(pb, METHODS[args.method][0])()
        json_format.Parse(args.json, msg)
        return msg.SerializeToString()
    return b""


def method_path(method):
    return method if method.startswith("/") else "/proto.WorkflowService/" + method


def raw(args, pb):
    import grpc

    body = request_bytes(args, pb)
    ch = channel(args)
    rpc = ch.unary_unary(method_path(args.method))
    line = {"call": "raw", "method": method_path(args.method), "request_hex": body.hex()}
    try:
        resp, call = rpc.with_call(body, timeout=args.timeout, metadata=metadata(args))
        line.update(code="OK", details="", response_hex=resp.hex())
        trailers = call.trailing_metadata()
    except grpc.RpcError as e:
        line.update(code=code_name(e.code()), details=e.details() or "")
        trailers = e.trailing_metadata()
    line["trailers"] = [[k, v if isinstance(v, str) else v.hex()] for k, v in (trailers or [])]
    out(line)
    return 0


GRPC_CODES = [
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
]  # fmt: skip

RECV_HEADER = re.compile(r"recv \(stream_id=(\d+)(?:, [^)]*)?\) ([^:\s][^:]*|:status): (.*)$")


def h2(args, pb):
    """One request with nghttp: the body as a length-prefixed message
    (unless --no-prefix) and the headers given."""
    body = request_bytes(args, pb)
    if not args.no_prefix:
        body = bytes([0]) + len(body).to_bytes(4, "big") + body
    headers = []
    if not args.no_default_headers:
        headers += ["content-type:application/grpc", "te:trailers"]
    headers += args.header or []
    url = args.url.rstrip("/") + method_path(args.method)
    with tempfile.NamedTemporaryFile(prefix="tink-h2.", suffix=".bin") as f:
        f.write(body)
        f.flush()
        cmd = ["nghttp", "-v", "-n", "-t", str(args.timeout or 10), "-d", f.name]
        for h in headers:
            cmd += ["-H", h]
        cmd.append(url)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=(args.timeout or 10) + 10)
    got = []
    for ln in p.stdout.decode("utf-8", "replace").splitlines():
        m = RECV_HEADER.search(ln)
        if m:
            got.append([m.group(2), m.group(3)])
    hdr = {k: v for k, v in got}
    line = {
        "call": "h2",
        "url": url,
        "nghttp_status": p.returncode,
        "http_status": hdr.get(":status"),
        "headers": got,
    }
    st = hdr.get("grpc-status")
    if st is not None and st.isdigit() and int(st) < len(GRPC_CODES):
        line["code"] = GRPC_CODES[int(st)]
    else:
        line["code"] = None
    line["details"] = urllib.parse.unquote(hdr.get("grpc-message", ""), errors="replace")
    if p.returncode != 0:
        line["stderr"] = p.stderr.decode("utf-8", "replace")[-500:]
    out(line)
    return 0


def parse_args(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--target", default="127.0.0.1:42113", help="HOST:PORT of the server")
    common.add_argument("--tls-ca", help="TLS: trust this CA (PEM); without it, plaintext h2c")
    common.add_argument("--tls-name", help="TLS: the name the certificate is checked against")
    common.add_argument("--authority", help=":authority to send")
    common.add_argument("--metadata", action="append", help="KEY=VALUE, sent with each call")
    common.add_argument("--stubs", help="directory for the generated stubs (default: a new temporary one)")

    p = argparse.ArgumentParser(description="a tink-agent of the worker protocol, for tests", parents=[common])
    p.add_argument("--agent-id", default="52:54:00:12:34:56")
    p.add_argument("--script", default="", help="JSON or @FILE: what to do with each action")
    p.add_argument("--max-calls", type=int, default=100, help="at most this many GetAction calls")
    p.add_argument("--max-actions", type=int, default=0, help="stop after this many actions (0: no limit)")
    p.add_argument("--until-done", action="store_true", help="stop at the first NOT_FOUND after an action")
    p.add_argument("--poll", type=float, default=0.2, help="first backoff after NOT_FOUND etc. (doubles, <= 5 s)")
    p.add_argument("--rpc-timeout", type=float, default=10.0, help="deadline of each call (grpc-timeout)")
    p.add_argument("--report-retries", type=int, default=0, help="report again (backoff) on a code that is not permanent")
    p.add_argument("--attributes", default="", help='AgentAttributes for GetAction: "default", JSON or @FILE')

    sub = p.add_subparsers(dest="mode")
    r = sub.add_parser("raw", parents=[common], help="one call with raw bytes")
    h = sub.add_parser("h2", help="one call through nghttp, every header chosen")
    for q in (r, h):
        q.add_argument("--method", default="GetAction", help="GetAction, ReportActionStatus or a :path")
        q.add_argument("--hex", help="the message body, in hex")
        q.add_argument("--json", help="the message as protobuf JSON")
        q.add_argument("--timeout", type=float, help="deadline in seconds")
    h.add_argument("--url", required=True, help="http://HOST:PORT or https://HOST:PORT")
    h.add_argument("--header", action="append", help="NAME:VALUE (repeatable)")
    h.add_argument("--no-default-headers", action="store_true", help="no content-type and te")
    h.add_argument("--no-prefix", action="store_true", help="send the body without the 5-byte prefix")
    h.add_argument("--stubs", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.max_calls < 1 or args.max_calls > 100000:
        p.error("--max-calls is 1..100000")
    if args.report_retries < 0 or args.report_retries > 100:
        p.error("--report-retries is 0..100")
    args.poll = min(max(args.poll, 0.0), BACKOFF_MAX)
    return args


def main(argv):
    args = parse_args(argv)
    try:
        import tinkproto

        pb, pb_grpc = tinkproto.load(args.stubs)
        if args.mode == "raw":
            return raw(args, pb)
        if args.mode == "h2":
            return h2(args, pb)
        return Agent(args, pb, pb_grpc).loop()
    except (ValueError, OSError, RuntimeError) as e:
        print("tink_agent: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
