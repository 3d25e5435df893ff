#!/usr/bin/env python3
"""tls_echo - a tiny HTTPS server for the tests of kube/'s HTTP client.

Not an API server: it answers a handful of paths so that a test can see
what the client sends and how it takes what comes back.

  tls_echo.py --cert C --key K [--client-ca CA] [--token-file F]
              [--port-file P] [--log L]

  --client-ca CA   require a client certificate signed by CA
  --token-file F   the token /auth expects (read again for each request)
  --port-file P    the port listened on (127.0.0.1) is written there
  --log L          one line per request: "METHOD PATH AUTHORIZATION"

Paths:
  /echo             200, JSON: method, path, headers the client sent, the
                    body, the client certificate's CN
  /auth             200 when "Authorization: Bearer <token file>", else
                    401 with a Status
  /status/N         answers N with a Status; ?retry_after=S adds the
                    Retry-After header
  /stream           200, chunked: "line 1" .. "line N" (?lines=N, 3); with
                    ?gate=FILE the lines after the first wait until FILE
                    exists; with ?hang=1 the answer never ends (until the
                    client goes, at most 120 s) and no byte comes after
                    the lines
"""
import argparse
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1 << 20
MAX_WAIT_S = 120


class Handler(BaseHTTPRequestHandler):
    def setup(self):
        super().setup()
        # The handshake runs in the connection's own thread: one client
        # that stalls in it (a cancelled test client) must not stop the
        # accept loop for the others.
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()

    protocol_version = "HTTP/1.1"
    server_version = "tls_echo"

    def log_message(self, fmt, *args):
        pass

    def record(self):
        if self.server.log_path:
            with self.server.log_lock, open(self.server.log_path, "a") as f:
                f.write("%s %s %s\n" % (self.command, self.path,
                                        self.headers.get("Authorization", "-")))

    def send_json(self, code, obj, extra=()):
        data = (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def status(self, code, message, extra=()):
        self.send_json(code, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                              "status": "Failure", "message": message, "code": code},
                       extra)

    def client_cn(self):
        cert = self.connection.getpeercert()
        for rdn in (cert or {}).get("subject", ()):
            for k, v in rdn:
                if k == "commonName":
                    return v
        return None

    def body(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(min(n, MAX_BODY)).decode("utf-8", "replace") if n else ""

    def handle_any(self):
        self.record()
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        body = self.body()
        if url.path == "/echo":
            self.send_json(200, {"method": self.command, "path": self.path,
                                 "headers": {k.lower(): v for k, v in self.headers.items()},
                                 "body": body, "client_cn": self.client_cn()})
        elif url.path == "/auth":
            want = None
            if self.server.token_file:
                with open(self.server.token_file) as f:
                    want = "Bearer " + f.read().strip()
            if want and self.headers.get("Authorization") == want:
                self.send_json(200, {"kind": "Status", "status": "Success"})
            else:
                self.status(401, "Unauthorized")
        elif url.path.startswith("/status/"):
            code = int(url.path[len("/status/"):])
            extra = []
            if "retry_after" in q:
                extra.append(("Retry-After", q["retry_after"][0]))
            self.status(code, "the status asked for: %d" % code, extra)
        elif url.path == "/stream":
            self.stream(int(q.get("lines", ["3"])[0]), q.get("gate", [None])[0],
                        q.get("hang", ["0"])[0] == "1")
        else:
            self.status(404, "no such path")

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def stream(self, lines, gate, hang):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(1, lines + 1):
            if i == 2 and gate:
                deadline = time.monotonic() + MAX_WAIT_S
                while not os.path.exists(gate) and time.monotonic() < deadline:
                    time.sleep(0.05)
            self.chunk(b"line %d\n" % i)
        if hang:
            # no more bytes; ends when the client goes away
            self.connection.settimeout(MAX_WAIT_S)
            try:
                self.connection.recv(1)
            except OSError:
                pass
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    ctx = None

    def get_request(self):
        sock, addr = super().get_request()
        sock.settimeout(MAX_WAIT_S)
        return self.ctx.wrap_socket(sock, server_side=True,
                                    do_handshake_on_connect=False), addr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--client-ca")
    ap.add_argument("--token-file")
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    a = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    if a.client_ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(a.client_ca)
    srv = Server(("127.0.0.1", 0), Handler)
    srv.ctx = ctx
    srv.token_file = a.token_file
    srv.log_path = a.log
    srv.log_lock = threading.Lock()
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(a.port_file + ".tmp", a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
