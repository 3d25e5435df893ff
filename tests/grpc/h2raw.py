#!/usr/bin/python3
"""h2raw — HTTP/2 frames written by hand (RFC 9113), for the tests that must
send what no gRPC library sends: a bad preface, DATA on stream 0, a frame
over SETTINGS_MAX_FRAME_SIZE, a truncated gRPC message, headers in an
unusual order, a PING, a tiny flow-control window. Header blocks are
HPACK-coded with python3-hpack; everything else is bytes on a socket.

    h2raw.py --target 127.0.0.1:42113 [--tls-ca PEM [--tls-name NAME]] \\
        [--timeout 5] STEPS

STEPS is a JSON list (inline or @FILE), run in order:

    {"preface": true}                  the client preface and an empty SETTINGS
    {"preface": "hex"}                 these bytes instead (a bad preface)
    {"settings": {"INITIAL_WINDOW_SIZE": 1, "4": 10}}   names or numbers
    {"settings_ack": true}
    {"grpc": {"method": "GetAction", "hex": "0a03616263", "stream": 1,
              "headers": [["grpc-timeout", "2S"]], "reverse": false,
              "prefix": true, "end_stream": true, "split": 0}}
        a whole gRPC request: HEADERS (:method POST, :scheme, :path,
        :authority, content-type, te, then "headers"; "reverse" sends
        the regular headers in reverse order), then DATA with the
        5-byte prefix (unless "prefix" is false) and the message, in
        frames of "split" bytes when given
    {"headers": [[k, v], ...], "stream": 1, "end_stream": false,
     "end_headers": true}
    {"data": "hex", "stream": 1, "end_stream": true}
    {"frame": {"type": 0, "flags": 0, "stream": 0, "payload": "hex",
               "length": N}}           any frame; "length" lies about it
    {"raw": "hex"}
    {"ping": "0102030405060708"}
    {"window_update": {"stream": 0, "increment": 65535}}
    {"rst": {"stream": 1, "error": "CANCEL"}}
    {"goaway": {"last_stream": 0, "error": "NO_ERROR"}}
    {"read": {"until": "closed" | "goaway" | "ping_ack" | "settings_ack"
              | "streams", "timeout": 5}}
    {"sleep": 0.1}

After the last step it reads until every stream it opened has ended, a
GOAWAY or the end of the connection, or --timeout. SETTINGS are
acknowledged and PINGs answered unless --no-auto. It prints one JSON
object: every frame received in order, and per stream the response
headers, trailers, gRPC status (code name and decoded grpc-message),
the messages (hex) and any RST_STREAM; "goaway" and "closed" (the server
closed the connection).
"""

import argparse
import json
import os
import select
import socket
import ssl
import struct
import sys
import time
import urllib.parse

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FRAME_TYPES = [
    "DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE",
    "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION",
]  # fmt: skip
ERRORS = [
    "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
    "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
]  # fmt: skip
SETTINGS = {
    "HEADER_TABLE_SIZE": 1, "ENABLE_PUSH": 2, "MAX_CONCURRENT_STREAMS": 3,
    "INITIAL_WINDOW_SIZE": 4, "MAX_FRAME_SIZE": 5, "MAX_HEADER_LIST_SIZE": 6,
}  # fmt: skip
SETTING_NAMES = {v: k for k, v in SETTINGS.items()}
GRPC_CODES = [
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
]  # fmt: skip
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
READ_MAX = 16 << 20  # bytes read from one connection, at most
FRAMES_MAX = 10000  # frames kept, at most


def error_name(code):
    return ERRORS[code] if code < len(ERRORS) else "0x%x" % code


def error_code(name):
    return ERRORS.index(name) if isinstance(name, str) else int(name)


def frame(ftype, flags, stream, payload, length=None):
    n = len(payload) if length is None else length
    return struct.pack(">I", n)[1:] + bytes([ftype, flags]) + struct.pack(">I", stream & 0xFFFFFFFF) + payload


def grpc_prefix(msg, compressed=False):
    return bytes([1 if compressed else 0]) + struct.pack(">I", len(msg)) + msg


class Conn:
    """One HTTP/2 connection, client side, frames by hand."""

    def __init__(self, host, port, tls_ca=None, tls_name=None, timeout=5.0, auto=True):
        import hpack

        self.timeout = timeout
        self.auto = auto
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.scheme = "http"
        self.authority = "%s:%d" % (host, port)
        if tls_ca:
            ctx = ssl.create_default_context(cafile=tls_ca)
            ctx.set_alpn_protocols(["h2"])
            self.sock = ctx.wrap_socket(self.sock, server_hostname=tls_name or host)
            self.scheme = "https"
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.buf = b""
        self.read_total = 0
        self.frames = []
        self.closed = False
        self.streams = {}
        self.goaway = None
        self.block = None  # (stream, flags, bytes) of a header block in progress

    # ---- sending ----

    def send(self, data):
        if self.closed:
            return
        try:
            self.sock.sendall(data)
        except OSError:
            self.closed = True

    def send_frame(self, ftype, flags, stream, payload=b"", length=None):
        self.send(frame(ftype, flags, stream, payload, length))

    def preface(self, raw=None):
        self.send(PREFACE if raw is None else raw)
        if raw is None:
            self.send_frame(4, 0, 0)

    def settings(self, values):
        payload = b""
        for k, v in values.items():
            sid = SETTINGS[k] if k in SETTINGS else int(k)
            payload += struct.pack(">HI", sid, int(v))
        self.send_frame(4, 0, 0, payload)

    def stream(self, sid):
        return self.streams.setdefault(
            sid, {"headers": None, "trailers": None, "data": b"", "rst": None, "ended": False}
        )

    def headers(self, sid, headers, end_stream=False, end_headers=True):
        self.stream(sid)
        block = self.enc.encode([(k, v) for k, v in headers])
        flags = (END_STREAM if end_stream else 0) | (END_HEADERS if end_headers else 0)
        self.send_frame(1, flags, sid, block)

    def data(self, sid, payload, end_stream=False, split=0):
        chunks = [payload[i : i + split] for i in range(0, len(payload), split)] if split else [payload]
        if not chunks:
            chunks = [b""]
        for i, c in enumerate(chunks):
            last = i == len(chunks) - 1
            self.send_frame(0, END_STREAM if (end_stream and last) else 0, sid, c)

    def grpc(self, method, body, sid=1, extra=(), reverse=False, prefix=True, end_stream=True, split=0):
        path = method if method.startswith("/") else "/proto.WorkflowService/" + method
        pseudo = [(":method", "POST"), (":scheme", self.scheme), (":path", path), (":authority", self.authority)]
        regular = [("content-type", "application/grpc"), ("te", "trailers")] + [tuple(h) for h in extra]
        if reverse:
            regular.reverse()
        self.headers(sid, pseudo + regular)
        self.data(sid, grpc_prefix(body) if prefix else body, end_stream=end_stream, split=split)

    # ---- receiving ----

    def _recv(self, deadline):
        """More bytes into self.buf; False when none will come."""
        if self.closed:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if not (isinstance(self.sock, ssl.SSLSocket) and self.sock.pending()):
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return False
        try:
            self.sock.settimeout(max(left, 0.01))
            chunk = self.sock.recv(65536)
        except (socket.timeout, ssl.SSLWantReadError):
            return True
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
            return False
        self.read_total += len(chunk)
        if self.read_total > READ_MAX:
            self.closed = True
            return False
        self.buf += chunk
        return True

    def _next_frame(self, deadline):
        while len(self.buf) < 9:
            if not self._recv(deadline):
                return None
        n = struct.unpack(">I", b"\0" + self.buf[:3])[0]
        while len(self.buf) < 9 + n:
            if not self._recv(deadline):
                return None
        ftype, flags = self.buf[3], self.buf[4]
        sid = struct.unpack(">I", self.buf[5:9])[0] & 0x7FFFFFFF
        payload = self.buf[9 : 9 + n]
        self.buf = self.buf[9 + n :]
        return ftype, flags, sid, payload

    def _header_block(self, sid, flags, block, out):
        try:
            hs = [[k, v] for k, v in self.dec.decode(block)]
        except Exception as e:  # hpack raises several types
            out["hpack_error"] = str(e)
            return
        out["headers"] = hs
        st = self.stream(sid)
        if st["headers"] is None and not (flags & END_STREAM and any(k == "grpc-status" for k, _ in hs)):
            st["headers"] = hs
        else:
            st["trailers"] = hs
            if st["headers"] is None:
                st["headers"] = hs  # trailers-only
        if flags & END_STREAM:
            st["ended"] = True

    def _record(self, ftype, flags, sid, payload):
        name = FRAME_TYPES[ftype] if ftype < len(FRAME_TYPES) else "0x%x" % ftype
        out = {"type": name, "stream": sid, "flags": flags, "length": len(payload)}
        if ftype == 0:
            st = self.stream(sid)
            pad = payload[0] if flags & PADDED and payload else 0
            body = payload[1 : len(payload) - pad] if flags & PADDED else payload
            st["data"] += body
            out["end_stream"] = bool(flags & END_STREAM)
            if flags & END_STREAM:
                st["ended"] = True
            if len(body) and self.auto:
                # Give the window back, so that a long answer is not stalled.
                self.send_frame(8, 0, 0, struct.pack(">I", len(body)))
                self.send_frame(8, 0, sid, struct.pack(">I", len(body)))
        elif ftype in (1, 9):
            if ftype == 1:
                b = payload
                if flags & PADDED and b:
                    b = b[1 : len(b) - b[0]]
                if flags & PRIORITY:
                    b = b[5:]
                self.block = (sid, flags, b)
            elif self.block:
                self.block = (self.block[0], self.block[1], self.block[2] + payload)
            if flags & END_HEADERS and self.block:
                bsid, bflags, b = self.block
                self.block = None
                self._header_block(bsid, bflags, b, out)
            out["end_stream"] = bool(flags & END_STREAM)
        elif ftype == 3:
            code = struct.unpack(">I", payload[:4])[0] if len(payload) >= 4 else -1
            out["error"] = error_name(code)
            st = self.stream(sid)
            st["rst"] = out["error"]
            st["ended"] = True
        elif ftype == 4:
            out["ack"] = bool(flags & ACK)
            vals = {}
            for i in range(0, len(payload) - len(payload) % 6, 6):
                k, v = struct.unpack(">HI", payload[i : i + 6])
                vals[SETTING_NAMES.get(k, str(k))] = v
            out["values"] = vals
            if not flags & ACK and self.auto:
                self.send_frame(4, ACK, 0)
        elif ftype == 6:
            out["ack"] = bool(flags & ACK)
            out["data"] = payload.hex()
            if not flags & ACK and self.auto:
                self.send_frame(6, ACK, 0, payload)
        elif ftype == 7:
            if len(payload) >= 8:
                last, code = struct.unpack(">II", payload[:8])
                out.update(last_stream=last & 0x7FFFFFFF, error=error_name(code))
                out["debug"] = payload[8:].decode("utf-8", "replace")
            self.goaway = out
        elif ftype == 8:
            out["increment"] = struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF if len(payload) >= 4 else None
        if len(self.frames) < FRAMES_MAX:
            self.frames.append(out)
        return out

    def read(self, until="streams", timeout=None, stream=None):
        """Reads frames until the condition, the end of the connection or
        the timeout. Returns whether the condition was met."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            if self._met(until, stream):
                return True
            f = self._next_frame(deadline)
            if f is None:
                return self._met(until, stream)
            out = self._record(*f)
            if until == "ping_ack" and out["type"] == "PING" and out.get("ack"):
                return True
            if until == "settings_ack" and out["type"] == "SETTINGS" and out.get("ack"):
                return True

    def _met(self, until, stream):
        if until == "closed":
            return self.closed
        if until == "goaway":
            return self.goaway is not None or self.closed
        if until == "streams":
            if self.goaway is not None or self.closed:
                return True
            ids = [stream] if stream is not None else list(self.streams)
            return bool(ids) and all(self.streams.get(s, {}).get("ended") for s in ids)
        return self.closed

    def summary(self):
        streams = {}
        for sid, st in self.streams.items():
            d = {"headers": st["headers"], "trailers": st["trailers"], "rst": st["rst"], "ended": st["ended"]}
            meta = dict(st["trailers"] or st["headers"] or [])
            status = meta.get("grpc-status")
            d["code"] = (
                GRPC_CODES[int(status)] if status is not None and status.isdigit() and int(status) < len(GRPC_CODES) else None
            )
            d["details"] = urllib.parse.unquote(meta.get("grpc-message", ""), errors="replace")
            d["http_status"] = dict(st["headers"] or []).get(":status")
            msgs, data = [], st["data"]
            # The length-prefixed messages of the answer (bounded by data).
            while len(data) >= 5:
                n = struct.unpack(">I", data[1:5])[0]
                if len(data) < 5 + n:
                    break
                msgs.append(data[5 : 5 + n].hex())
                data = data[5 + n :]
            d["messages_hex"] = msgs
            d["trailing_bytes"] = len(data)
            streams[str(sid)] = d
        return {"frames": self.frames, "streams": streams, "goaway": self.goaway, "closed": self.closed}

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def run_steps(conn, steps):
    for step in steps:
        if not isinstance(step, dict) or len(step) != 1:
            raise ValueError("a step is an object with one key: %r" % (step,))
        (k, v), = step.items()
        if k == "preface":
            conn.preface(None if v is True else bytes.fromhex(v))
        elif k == "settings":
            conn.settings(v)
        elif k == "settings_ack":
            conn.send_frame(4, ACK, 0)
        elif k == "grpc":
            conn.grpc(
                v.get("method", "GetAction"),
                bytes.fromhex(v.get("hex", "")),
                sid=v.get("stream", 1),
                extra=v.get("headers", []),
                reverse=v.get("reverse", False),
                prefix=v.get("prefix", True),
                end_stream=v.get("end_stream", True),
                split=v.get("split", 0),
            )
        elif k == "headers":
            conn.headers(step.get("stream", 1), v, step.get("end_stream", False), step.get("end_headers", True))
        elif k == "data":
            conn.data(step.get("stream", 1), bytes.fromhex(v), step.get("end_stream", False))
        elif k == "frame":
            conn.send_frame(v["type"], v.get("flags", 0), v.get("stream", 0), bytes.fromhex(v.get("payload", "")), v.get("length"))
        elif k == "raw":
            conn.send(bytes.fromhex(v))
        elif k == "ping":
            conn.send_frame(6, 0, 0, bytes.fromhex(v))
        elif k == "window_update":
            conn.send_frame(8, 0, v.get("stream", 0), struct.pack(">I", v["increment"] & 0xFFFFFFFF))
        elif k == "rst":
            conn.send_frame(3, 0, v.get("stream", 1), struct.pack(">I", error_code(v.get("error", "CANCEL"))))
        elif k == "goaway":
            conn.send_frame(7, 0, 0, struct.pack(">II", v.get("last_stream", 0), error_code(v.get("error", "NO_ERROR"))))
        elif k == "read":
            conn.read(v.get("until", "streams"), v.get("timeout"), v.get("stream"))
        elif k == "sleep":
            time.sleep(min(float(v), 30.0))
        else:
            raise ValueError("unknown step %r" % k)


def main(argv):
    p = argparse.ArgumentParser(description="HTTP/2 frames by hand, for tests")
    p.add_argument("--target", required=True, help="HOST:PORT")
    p.add_argument("--tls-ca", help="TLS (ALPN h2), trusting this CA")
    p.add_argument("--tls-name", help="TLS: the name the certificate is checked against")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds for each read, and to connect")
    p.add_argument("--no-auto", action="store_true", help="do not acknowledge SETTINGS or answer PING")
    p.add_argument("steps", help="JSON list of steps, or @FILE")
    args = p.parse_args(argv)
    text = args.steps
    try:
        if text.startswith("@"):
            with open(text[1:], encoding="utf-8") as f:
                text = f.read()
        steps = json.loads(text)
        host, _, port = args.target.rpartition(":")
        conn = Conn(host.strip("[]"), int(port), args.tls_ca, args.tls_name, min(args.timeout, 60.0), not args.no_auto)
    except (ValueError, OSError) as e:
        print("h2raw: %s" % e, file=sys.stderr)
        return 1
    try:
        run_steps(conn, steps)
        conn.read("streams")
    except ValueError as e:
        print("h2raw: %s" % e, file=sys.stderr)
        return 1
    finally:
        conn.close()
    print(json.dumps(conn.summary(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
