#!/usr/bin/python3
"""fake_dockerd — the part of the Docker Engine API that ironbell-agent's
docker runtime uses, on a unix socket, for a machine where dockerd cannot
run. A "container" is its Cmd run on the host with its Env; its output is
streamed back as the engine does (chunked, multiplexed frames, stdout 1 and
stderr 2).

    fake_dockerd.py --socket PATH --events FILE [--local IMAGE]...

Images whose name contains "unpullable" fail to pull ({"error": ...} in a
200 stream, as a registry failure looks); they are still used when named
with --local. Each request is one JSON line in --events:
    {"method": "POST", "path": "/v1.41/containers/create", "body": {...}}
"""

import argparse
import json
import os
import signal
import socketserver
import struct
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlparse

containers = {}
lock = threading.Lock()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--events", required=True)
    p.add_argument("--local", action="append", default=[])
    args = p.parse_args()
    events = open(args.events, "a", encoding="utf-8")

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def address_string(self):
            return "unix"

        def record(self, body=None):
            with lock:
                events.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")
                events.flush()

        def reply(self, code, obj=None):
            data = b"" if obj is None else json.dumps(obj).encode()
            self.send_response(code)
            if obj is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def chunk(self, data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def do_GET(self):
            self.record()
            u = urlparse(self.path)
            parts = u.path.split("/")
            if u.path.startswith("/v1.41/images/") and u.path.endswith("/json"):
                name = unquote("/".join(parts[3:-1]))
                return self.reply(200 if name in args.local else 404, {"Id": "sha256:1"} if name in args.local else {"message": "No such image: " + name})
            if len(parts) == 5 and parts[2] == "containers" and parts[4] == "logs":
                c = containers.get(parts[3])
                if not c:
                    return self.reply(404, {"message": "no such container"})
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.docker.multiplexed-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                proc = c["proc"]
                for line in iter(proc.stdout.readline, b""):
                    stream = 2 if line.startswith(b"E:") else 1
                    # Split a frame over two chunks, as a real stream may.
                    frame = struct.pack(">BxxxI", stream, len(line)) + line
                    self.chunk(frame[:5])
                    self.chunk(frame[5:])
                proc.wait()
                self.wfile.write(b"0\r\n\r\n")
                return
            self.reply(404, {"message": "page not found"})

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(n)) if n else None
            self.record(body)
            u = urlparse(self.path)
            parts = u.path.split("/")
            if u.path == "/v1.41/images/create":
                img = parse_qs(u.query)["fromImage"][0]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.chunk(b'{"status":"Pulling from %s"}\r\n' % img.encode())
                if "unpullable" in img:
                    self.chunk(b'{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}\r\n')
                self.wfile.write(b"0\r\n\r\n")
                return
            if u.path == "/v1.41/containers/create":
                cid = os.urandom(32).hex()
                containers[cid] = {"spec": body}
                return self.reply(201, {"Id": cid, "Warnings": []})
            if len(parts) == 5 and parts[2] == "containers":
                c = containers.get(parts[3])
                if not c:
                    return self.reply(404, {"message": "no such container"})
                if parts[4] == "start":
                    spec = c["spec"]
                    env = dict(os.environ)
                    env.update(e.split("=", 1) for e in spec.get("Env") or [])
                    c["proc"] = subprocess.Popen(spec["Cmd"], env=env, stdout=subprocess.PIPE,
                                                 stderr=subprocess.STDOUT, start_new_session=True)
                    return self.reply(204)
                if parts[4] == "wait":
                    return self.reply(200, {"StatusCode": c["proc"].wait(), "Error": None})
                if parts[4] == "stop":
                    try:
                        os.killpg(c["proc"].pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    return self.reply(204)
            self.reply(404, {"message": "page not found"})

        def do_DELETE(self):
            self.record()
            parts = urlparse(self.path).path.split("/")
            c = containers.pop(parts[3], None)
            if c and c.get("proc") and c["proc"].poll() is None:
                os.killpg(c["proc"].pid, signal.SIGKILL)
            self.reply(204 if c else 404)

    class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    if os.path.exists(args.socket):
        os.unlink(args.socket)
    srv = S(args.socket, H)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv.serve_forever()


if __name__ == "__main__":
    main()
