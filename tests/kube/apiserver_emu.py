#!/usr/bin/python3
"""apiserver_emu.py - a small Kubernetes API server for the tests.

No API server is packaged for Debian (only kubectl and python3-kubernetes,
the clients), so ironbell's Kubernetes client is tested against this
emulator, which is itself proven with those two clients
(tests/integration/test_kube_emu.sh).

It serves (kinds.py: the resources; kstore.py: the objects):
  /version, /api, /apis, /api/v1, /apis/G, /apis/G/V
                  legacy discovery (plain application/json, so that newer
                  clients fall back from aggregated discovery)
  /openapi/v3[/GV] what kubectl 1.29+ reads to leave validation to the
                  server (kinds.py); no OpenAPI v2: an older kubectl's
                  apply and create need --validate=false
  tinkerbell.org/v1alpha1 hardware (hw), templates (tpl), workflows (wf);
  bmc.tinkerbell.org/v1alpha1 machines, jobs (j), tasks (t); v1 secrets,
  namespaces; coordination.k8s.io/v1 leases; apiextensions.k8s.io/v1
  customresourcedefinitions (the CRDs of the six Tinkerbell kinds are there
  from the start; the Workflow's status schema per --workflow-crd).
  CRUD as the real server: GET, list (one namespace or all; limit and
  continue from a snapshot, a continue token older than the history: 410;
  labelSelector, fieldSelector metadata.name/metadata.namespace), POST (201;
  409 AlreadyExists; generateName; a custom resource's status is dropped),
  PUT (metadata.resourceVersion a precondition: 409 Conflict), PATCH
  (merge-patch, json-patch; a strategic-merge patch of a custom resource
  gets 415, of a built-in kind it is applied as a merge patch), DELETE and
  deletecollection, the status subresource; no schema validation.
  ?watch=1: a chunked stream, one JSON event a line, from the history after
  resourceVersion ("" or "0": every object as ADDED first); an rv older
  than the history: an ERROR event (Status 410 Expired) and the end;
  BOOKMARKs every --bookmark-interval s with allowWatchBookmarks;
  timeoutSeconds.
  Errors are Status objects. Authentication (unless --plain): a client
  certificate signed by --client-ca (its CN is the user) or a bearer token
  of --token; otherwise 401. /version and /healthz need none.
  /_emu/...       the tests' control API, without authentication: GET
                  /_emu/stats (requests counted as "VERB RESOURCE", e.g.
                  "list hardware", "patch workflows/status", "fault 500";
                  lists, watchesOpened, watchesOpen, watchesOpenBy,
                  resourceVersion, historyStart), GET /_emu/dump (every
                  object by resource), GET /_emu/ (the controls), POST
                  /_emu/NAME (CONTROL below; answers 200 with JSON).
--state FILE keeps the objects, the counter and the history across a
restart. SIGTERM stops it within a second. Only the Python standard
library: it runs under /usr/bin/python3.
"""

import argparse
import base64
import json
import os
import queue
import re
import select
import signal
import socket
import ssl
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kinds  # noqa: E402
import kstore  # noqa: E402
from kstore import ApiError  # noqa: E402

MAX_BODY = 16 * 1024 * 1024   # largest request body read
CONN_TIMEOUT = 60             # seconds a connection may sit idle
WATCH_TIMEOUT = 1800          # a watch without timeoutSeconds ends after
MERGE = "application/merge-patch+json"
JSONPATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"

# The control API: POST /_emu/NAME with a JSON body (fields optional).
CONTROL = {
    "drop-watches": "end every open watch stream now, cleanly",
    "cut-watches": "write half an event line into every open watch stream, "
                   "then close the connection",
    "compact": "every resourceVersion handed out so far: 410 for watches "
               "and continue tokens",
    "fail": '{"count": N, "code": 500}: the next N API requests get CODE',
    "throttle": '{"count": N, "retry_after": S}: the next N API requests '
                'get 429 with Retry-After: S',
    "delay": '{"ms": D}: every API answer D ms late (0: none)',
    "garbage": '{"line": "..."}: a line that is not JSON into every open '
               'watch stream',
    "inject": '{"resource": "hardware", "type": "MODIFIED", "object": {...}}: '
              'an event into the open watch streams of the resource, stored '
              'nowhere; without object, a Hardware whose spec.interfaces is '
              'a string',
    "put": '{"resource": "workflows", "object": {...}} or "objects": '
           '[...]: store the objects as given, status included (ADDED or '
           'MODIFIED); answers the object, or {"count": N}',
    "churn": '{"resource": "hardware", "count": N, "rate": R}: N changes '
             '(R a second) to the resource\'s objects in turn, in the '
             'background: each sets the annotation ironbell.test/churn to '
             '"SEQ UNIX_NS" (the time of the change); answers {"count": N}',
    "conflict": '{"resource": "workflows", "count": N}: the next N writes '
                '(PUT or PATCH, of the object or its status) of the resource '
                'get 409 Conflict, as a stale resourceVersion does',
    "revoke": '{"token": T}: T gets 401 from now on',
    "token": '{"token": T}: T authenticates from now on',
    "reset-stats": "zero the request counters",
}


class Emulator:
    def __init__(self, opts):
        self.opts = opts
        self.store = kstore.Store(opts.history, opts.state)
        self.lock = threading.Lock()
        self.tokens = set(opts.token or [])
        self.fail = (0, 500)
        self.throttle = (0, 1)
        self.delay_ms = 0
        self.conflicts = {}   # plural: writes still to answer 409
        self.requests = {}
        self.watches_opened = 0
        if not self.store.load():
            for ns in ("default", "kube-system"):
                self.store.create(kinds.by_plural("namespaces"), "",
                                  {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": ns},
                                   "status": {"phase": "Active"}})
            crds = kinds.by_plural("customresourcedefinitions")
            for c in kinds.seed_crds(opts.workflow_crd):
                self.store.put_raw(crds, c)

    def count(self, key):
        with self.lock:
            self.requests[key] = self.requests.get(key, 0) + 1

    def stats(self):
        with self.lock, self.store.lock:
            lists = sum(n for k, n in self.requests.items()
                        if k.startswith("list "))
            per = {}
            for w in self.store.watches:
                per[w.kind.plural] = per.get(w.kind.plural, 0) + 1
            return {"requests": dict(self.requests), "lists": lists,
                    "watchesOpened": self.watches_opened,
                    "watchesOpen": len(self.store.watches),
                    "watchesOpenBy": per,
                    "resourceVersion": str(self.store.rv),
                    "historyStart": str(self.store.start)}

    def take_fault(self):
        """The fault the next API request gets, if any: (code, headers)."""
        with self.lock:
            n, code = self.fail
            if n > 0:
                self.fail = (n - 1, code)
                return code, {}
            n, after = self.throttle
            if n > 0:
                self.throttle = (n - 1, after)
                return 429, {"Retry-After": str(after)}
        return None

    def take_conflict(self, plural):
        """Whether the next write of resource plural gets 409."""
        with self.lock:
            n = self.conflicts.get(plural, 0)
            if n > 0:
                self.conflicts[plural] = n - 1
                self.requests["fault 409"] = \
                    self.requests.get("fault 409", 0) + 1
                return True
        return False


def bad_hardware(rv):
    return {"apiVersion": "tinkerbell.org/v1alpha1", "kind": "Hardware",
            "metadata": {"name": "invalid", "namespace": "default",
                         "uid": "00000000-0000-0000-0000-000000000000",
                         "resourceVersion": rv},
            "spec": {"interfaces": "not-a-list"}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    emu = None

    def setup(self):
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()

    def log_message(self, fmt, *args):
        sys.stderr.write("apiserver_emu: %s %s\n" % (self.address_string(),
                                                     fmt % args))

    # ---- replies ----

    def reply(self, code, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def read_body(self):
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise ApiError(400, "BadRequest", "Transfer-Encoding is not "
                           "supported")
        try:
            n = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            raise ApiError(413, "RequestEntityTooLarge", "bad Content-Length")
        return self.rfile.read(n) if n else b""

    def read_json(self):
        raw = self.read_body()
        try:
            return json.loads(raw or b"null")
        except ValueError as e:
            raise ApiError(400, "BadRequest", "the body is not JSON: %s" % e)

    # ---- authentication ----

    def user(self):
        """The user the request comes from, or None."""
        if self.emu.opts.plain:
            return "anonymous"
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            with self.emu.lock:
                if auth[7:].strip() in self.emu.tokens:
                    return "token"
            return None
        if isinstance(self.connection, ssl.SSLSocket):
            cert = self.connection.getpeercert()
            if cert:
                for rdn in cert.get("subject", ()):
                    for k, v in rdn:
                        if k == "commonName":
                            return v
        return None

    # ---- dispatch ----

    def do_GET(self):
        self.handle_any()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

    def handle_any(self):
        try:
            url = urlsplit(self.path)
            path = unquote(url.path).rstrip("/") or "/"
            q = {k: v[-1] for k, v in parse_qs(url.query).items()}
            if path.startswith("/_emu/") or path == "/_emu":
                return self.control(path[6:])
            if path not in ("/version", "/healthz", "/readyz", "/livez") \
                    and self.user() is None:
                self.read_body()
                raise ApiError(401, "Unauthorized", "Unauthorized")
            fault = self.emu.take_fault()
            if fault:
                self.read_body()
                code, hdr = fault
                self.emu.count("fault %d" % code)
                raise ApiError(code, "TooManyRequests" if code == 429 else
                               "InternalError", "injected by the emulator "
                               "(%d)" % code, headers=hdr)
            if self.emu.delay_ms:
                time.sleep(self.emu.delay_ms / 1000.0)
            self.route(path, q)
        except ApiError as e:
            self.reply(e.code, e.status(), e.headers)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
        except Exception as e:   # a bug of the emulator: logged, 500
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            self.reply(500, kstore.status_of(500, "InternalError", str(e)))

    def route(self, path, q):
        parts = path.strip("/").split("/")
        if path in ("/healthz", "/readyz", "/livez"):
            data = b"ok"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(data)
            return
        if path == "/version":
            return self.reply(200, kinds.version_doc(
                self.emu.opts.server_version))
        if path == "/api":
            return self.reply(200, kinds.api_doc(
                "127.0.0.1:%d" % self.server.server_address[1]))
        if path == "/apis":
            return self.reply(200, kinds.groups_doc())
        if path == "/openapi/v3":
            return self.reply(200, kinds.openapi_root())
        if path.startswith("/openapi/v3/"):
            doc = kinds.openapi_gv(path[len("/openapi/v3/"):])
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            return self.reply(200, doc)
        if parts[0] == "api" and len(parts) >= 2:
            gv, rest = parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) == 2:
            doc = kinds.group_doc(parts[1])
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            return self.reply(200, doc)
        elif parts[0] == "apis" and len(parts) >= 3:
            gv, rest = parts[1] + "/" + parts[2], parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the "
                           "requested resource")
        if not rest:
            doc = kinds.resources_doc(gv)
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            return self.reply(200, doc)
        self.resource(gv, rest, q)

    def resource(self, gv, rest, q):
        """/namespaces/NS/PLURAL[/NAME[/status]] or PLURAL[/NAME[/status]]."""
        ns = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            k = kinds.find(gv, rest[2])
            if k is not None and k.namespaced:
                ns, rest = rest[1], rest[2:]
        kind = kinds.find(gv, rest[0])
        if kind is None or len(rest) > 3 or \
                (len(rest) == 3 and (rest[2] != "status" or not kind.status)):
            raise ApiError(404, "NotFound", "the server could not find the "
                           "requested resource")
        if kind.namespaced and ns is None and len(rest) > 1:
            raise ApiError(404, "NotFound", "the server could not find the "
                           "requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if name is None:
            return self.collection(kind, ns, q)
        return self.one(kind, ns, name, sub, q)

    # ---- collections ----

    def collection(self, kind, ns, q):
        flt = kstore.Filter(kind, ns, q.get("labelSelector"),
                            q.get("fieldSelector"))
        m = self.command
        if m == "GET" and q.get("watch") in ("1", "true", "True"):
            self.emu.count("watch " + kind.plural)
            return self.watch(kind, flt, q)
        if m == "GET":
            self.emu.count("list " + kind.plural)
            try:
                limit = int(q.get("limit") or 0)
            except ValueError:
                raise ApiError(400, "BadRequest", "limit is not a number")
            items, rv, cont, remaining = self.emu.store.list(
                kind, flt, max(limit, 0), q.get("continue"))
            md = {"resourceVersion": rv}
            if cont:
                md["continue"] = cont
                md["remainingItemCount"] = remaining
            return self.reply(200, {"apiVersion": kind.api_version,
                                    "kind": kind.kind + "List",
                                    "metadata": md, "items": items})
        if m == "POST":
            self.emu.count("create " + kind.plural)
            obj = self.read_json()
            if kind.namespaced and ns is None:
                raise ApiError(405, "MethodNotAllowed", "a %s is created in "
                               "a namespace" % kind.kind)
            self.check_object(kind, ns, obj)
            obj = self.emu.store.create(kind, ns or "", self.prepare(kind,
                                                                     obj))
            return self.reply(201, obj)
        if m == "DELETE":
            self.emu.count("deletecollection " + kind.plural)
            self.read_body()
            items, rv, _, _ = self.emu.store.list(kind, flt, 0, None)
            gone = []
            for o in items:
                try:
                    gone.append(self.emu.store.delete(
                        kind, o["metadata"].get("namespace", ""),
                        o["metadata"]["name"]))
                except ApiError:
                    pass
            return self.reply(200, {"apiVersion": kind.api_version,
                                    "kind": kind.kind + "List",
                                    "metadata": {"resourceVersion": str(
                                        self.emu.store.rv)},
                                    "items": gone})
        raise ApiError(405, "MethodNotAllowed", "the server does not allow "
                       "this method on the requested resource")

    @staticmethod
    def check_object(kind, ns, obj):
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the object is not a JSON "
                           "object")
        if obj.get("kind", kind.kind) != kind.kind or \
                obj.get("apiVersion", kind.api_version) != kind.api_version:
            raise ApiError(400, "BadRequest", "the API version in the data "
                           "(%s) does not match the expected API version (%s)"
                           % (obj.get("apiVersion"), kind.api_version))
        md = obj.get("metadata")
        if md is not None and not isinstance(md, dict):
            raise ApiError(400, "BadRequest", "metadata is not an object")
        if ns is not None and md and md.get("namespace") not in (None, "",
                                                                 ns):
            raise ApiError(400, "BadRequest", "the namespace of the provided "
                           "object does not match the namespace sent on the "
                           "request")

    @staticmethod
    def prepare(kind, obj):
        """What the server does to every write: apiVersion and kind, a
        Secret's stringData turned into data."""
        obj = dict(obj)
        obj["apiVersion"] = kind.api_version
        obj["kind"] = kind.kind
        if kind.kind == "Secret":
            sd = obj.pop("stringData", None)
            if isinstance(sd, dict):
                data = dict(obj.get("data") or {})
                for k, v in sd.items():
                    data[k] = base64.b64encode(str(v).encode()).decode()
                obj["data"] = data
            obj.setdefault("type", "Opaque")
        return obj

    # ---- one object ----

    def one(self, kind, ns, name, sub, q):
        st = self.emu.store
        res = kind.plural + ("/" + sub if sub else "")
        m = self.command
        if m in ("PUT", "PATCH") and self.emu.take_conflict(kind.plural):
            self.read_body()
            raise ApiError(409, "Conflict", "Operation cannot be fulfilled on "
                           "%s \"%s\": the object has been modified; please "
                           "apply your changes to the latest version and try "
                           "again" % (kind.plural, name))
        if m in ("GET", "HEAD"):
            self.emu.count("get " + res)
            return self.reply(200, st.get(kind, ns, name))
        if m == "PUT":
            self.emu.count("update " + res)
            obj = self.read_json()
            self.check_object(kind, ns, obj)
            if (obj.get("metadata") or {}).get("name", name) != name:
                raise ApiError(400, "BadRequest", "the name of the object "
                               "(%s) does not match the name on the URL (%s)"
                               % (obj["metadata"]["name"], name))
            pre = (obj.get("metadata") or {}).get("resourceVersion")
            return self.reply(200, st.update(kind, ns, name,
                                             self.prepare(kind, obj), sub,
                                             pre))
        if m == "PATCH":
            self.emu.count("patch " + res)
            return self.patch(kind, ns, name, sub)
        if m == "DELETE":
            self.emu.count("delete " + res)
            if sub:
                raise ApiError(405, "MethodNotAllowed", "the server does not "
                               "allow this method on the requested resource")
            body = self.read_json()
            pre = None
            if isinstance(body, dict):
                pre = (body.get("preconditions") or {}).get("resourceVersion")
            return self.reply(200, st.delete(kind, ns, name, pre))
        raise ApiError(405, "MethodNotAllowed", "the server does not allow "
                       "this method on the requested resource")

    def patch(self, kind, ns, name, sub):
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype not in (MERGE, JSONPATCH) and \
                not (ctype == STRATEGIC and kind.builtin):
            self.read_body()
            raise ApiError(415, "UnsupportedMediaType", "the body of the "
                           "request was in an unknown format - accepted "
                           "media types include: %s, %s" % (JSONPATCH, MERGE))
        body = self.read_json()
        st = self.emu.store
        # Read, patch and write under the store's lock, as one change.
        with st.lock:
            cur = st.get(kind, ns, name)
            pre = None
            if ctype == JSONPATCH:
                new = kstore.json_patch(cur, body)
            else:
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "a merge patch is a "
                                   "JSON object")
                if ctype == STRATEGIC:
                    body = kstore.strip_directives(body)
                pre = (body.get("metadata") or {}).get("resourceVersion") \
                    if isinstance(body.get("metadata"), dict) else None
                new = kstore.merge_patch(cur, body)
            if not isinstance(new, dict):
                raise ApiError(422, "Invalid", "the patched object is not an "
                               "object")
            new = self.prepare(kind, new)
            return self.reply(200, st.update(kind, ns, name, new, sub, pre))

    # ---- watch ----

    def watch(self, kind, flt, q):
        st = self.emu.store
        try:
            timeout = int(q.get("timeoutSeconds") or WATCH_TIMEOUT)
        except ValueError:
            raise ApiError(400, "BadRequest", "timeoutSeconds is not a "
                           "number")
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true", "True")
        w, expired = st.open_watch(kind, flt, q.get("resourceVersion"),
                                   self.user())
        with self.emu.lock:
            self.emu.watches_opened += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if expired:
                self.chunk(json.dumps({"type": "ERROR", "object":
                                       kstore.status_of(410, "Expired",
                                                        expired)}) + "\n")
                self.chunk("")
                return
            self.stream(w, timeout, bookmarks)
        finally:
            if w is not None:
                st.close_watch(w)

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def stream(self, w, timeout, bookmarks):
        st = self.emu.store
        end = time.monotonic() + timeout
        interval = self.emu.opts.bookmark_interval
        next_bm = time.monotonic() + interval
        while True:
            now = time.monotonic()
            if now >= end:
                self.chunk("")
                return
            wait = min(end, next_bm if bookmarks else end, now + 1.0) - now
            try:
                item = w.q.get(timeout=max(wait, 0.01))
            except queue.Empty:
                item = None
            if item is None and self.client_gone():
                self.close_connection = True
                return
            if item is None:
                if bookmarks and time.monotonic() >= next_bm:
                    next_bm = time.monotonic() + interval
                    with st.lock:
                        rv = str(st.rv) if w.q.empty() else None
                    if rv is not None:
                        self.chunk(json.dumps({"type": "BOOKMARK", "object": {
                            "apiVersion": w.kind.api_version,
                            "kind": w.kind.kind,
                            "metadata": {"resourceVersion": rv}}}) + "\n")
                continue
            if item[0] == "event":
                line = self.event_line(w, *item[1:4])
                if line:
                    self.chunk(line)
            elif item[0] == "drop":
                self.chunk("")
                self.close_connection = True
                return
            elif item[0] == "cut":
                ev = json.dumps({"type": "MODIFIED", "object":
                                 bad_hardware(str(st.rv))}) + "\n"
                self.chunk(ev[:len(ev) // 2])
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            elif item[0] == "raw":
                self.chunk(item[1])

    def client_gone(self):
        """A watch's client sends nothing after its request: a socket that
        turns readable is one the client closed (or is closing)."""
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(r)

    @staticmethod
    def event_line(w, etype, old, new):
        """The line a watch sends for a change, after its filter: an
        object that stops matching is DELETED for it, one that starts
        matching ADDED."""
        now_in = w.filter.match(new) if etype != "DELETED" else False
        was_in = w.filter.match(old) if old is not None else False
        if etype == "ADDED" or (etype == "MODIFIED" and not was_in):
            t = "ADDED" if now_in else None
        elif etype == "MODIFIED":
            t = "MODIFIED" if now_in else "DELETED"
        else:
            t = "DELETED" if was_in else None
        if t is None:
            return None
        return json.dumps({"type": t, "object": new}) + "\n"

    # ---- the control API ----

    def control(self, name):
        emu, st = self.emu, self.emu.store
        if self.command == "GET":
            if name == "stats":
                return self.reply(200, emu.stats())
            if name == "dump":
                return self.reply(200, st.dump())
            if name == "":
                return self.reply(200, CONTROL)
            raise ApiError(404, "NotFound", "no such control: %s" % name)
        if self.command != "POST" or name not in CONTROL:
            self.read_body()
            raise ApiError(404, "NotFound", "no such control: %s" % name)
        body = self.read_json() or {}
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body is a JSON object")
        out = {}
        if name == "drop-watches":
            out["streams"] = st.to_watches(("drop",))
        elif name == "cut-watches":
            out["streams"] = st.to_watches(("cut",))
        elif name == "compact":
            out["resourceVersion"] = str(st.compact())
        elif name in ("fail", "throttle"):
            n = body.get("count", 1)
            if not isinstance(n, int) or not 0 <= n <= 100000:
                raise ApiError(400, "BadRequest", "count must be 0..100000")
            with emu.lock:
                if name == "fail":
                    emu.fail = (n, int(body.get("code", 500)))
                else:
                    emu.throttle = (n, int(body.get("retry_after", 1)))
        elif name == "conflict":
            n = body.get("count", 1)
            plural = body.get("resource", "workflows")
            if not isinstance(n, int) or not 0 <= n <= 100000 or \
                    kinds.by_plural(plural) is None:
                raise ApiError(400, "BadRequest", "conflict needs a resource "
                               "and a count 0..100000")
            with emu.lock:
                emu.conflicts[plural] = n
        elif name == "delay":
            emu.delay_ms = max(0, int(body.get("ms", 0)))
        elif name == "garbage":
            out["streams"] = st.to_watches(
                ("raw", str(body.get("line", "this is not JSON")) + "\n"))
        elif name == "inject":
            kind = kinds.by_plural(body.get("resource", "hardware"))
            if kind is None:
                raise ApiError(400, "BadRequest", "no such resource")
            obj = body.get("object") or bad_hardware(str(st.rv))
            line = json.dumps({"type": body.get("type", "MODIFIED"),
                               "object": obj}) + "\n"
            out["streams"] = st.to_watches(("raw", line), kind.plural)
        elif name == "put":
            kind = kinds.by_plural(body.get("resource", ""))
            objs = body.get("objects", [body.get("object")])
            if kind is None or not isinstance(objs, list) or \
                    not all(isinstance(o, dict) and
                            (o.get("metadata") or {}).get("name")
                            for o in objs):
                raise ApiError(400, "BadRequest", "put needs a resource and "
                               "objects with metadata.name")
            with st.lock:
                saved, st.state_file = st.state_file, None
                try:
                    done = [st.put_raw(kind, o) for o in objs]
                finally:
                    st.state_file = saved
                st.save()
            out = done[0] if "object" in body else {"count": len(done)}
        elif name == "churn":
            out = self.churn(body)
        elif name in ("revoke", "token"):
            tok = body.get("token")
            if not isinstance(tok, str) or not tok:
                raise ApiError(400, "BadRequest", "token needed")
            with emu.lock:
                if name == "revoke":
                    emu.tokens.discard(tok)
                else:
                    emu.tokens.add(tok)
        elif name == "reset-stats":
            with emu.lock:
                emu.requests = {}
                emu.watches_opened = 0
        self.reply(200, out)


    def churn(self, body):
        kind = kinds.by_plural(body.get("resource", "hardware"))
        n, rate = body.get("count", 1), body.get("rate", 100)
        if kind is None or not isinstance(n, int) or \
                not isinstance(rate, (int, float)) or not 0 < n <= 10000000 \
                or not 0 < rate <= 100000:
            raise ApiError(400, "BadRequest", "churn needs a resource, "
                           "count 1..10000000 and rate 1..100000")
        st = self.emu.store

        with st.lock:
            keys = sorted(k for k in st.objects if k[0] == kind.plural)

        def run():
            t0 = time.monotonic()
            for i in range(n if keys else 0):
                delay = t0 + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                with st.lock:
                    o = st.objects.get(keys[i % len(keys)])
                    if o is None:
                        continue
                    md = o["metadata"]
                    mark = "%d %d" % (i, time.time_ns())
                    new = kstore.merge_patch(o, {"metadata": {"annotations": {
                        "ironbell.test/churn": mark}}})
                    st.update(kind, md.get("namespace", ""), md["name"], new,
                              None, None)

        threading.Thread(target=run, daemon=True).start()
        return {"count": n}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ssl_context = None

    def get_request(self):
        sock, addr = super().get_request()
        sock.settimeout(CONN_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is not None:
            # The handshake runs in the connection's thread (Handler.setup).
            sock = self.ssl_context.wrap_socket(
                sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        """A client that goes away or fails the TLS handshake is one line;
        anything else is a bug of the emulator: its traceback is logged."""
        err = sys.exc_info()[1]
        if isinstance(err, OSError):
            sys.stderr.write("apiserver_emu: %s: %s\n" % (client_address[0],
                                                          err))
        else:
            traceback.print_exc(file=sys.stderr)


def parse_args(argv):
    p = argparse.ArgumentParser(description="A small Kubernetes API server "
                                "for tests.")
    p.add_argument("--listen", default="127.0.0.1", help="address to bind")
    p.add_argument("--port", type=int, default=0,
                   help="TCP port; 0 (the default) picks a free one")
    p.add_argument("--port-file", help="write the bound port here once "
                   "listening")
    p.add_argument("--cert", help="TLS certificate (PEM); without it, "
                   "plain HTTP")
    p.add_argument("--key", help="TLS private key (PEM), if not in --cert")
    p.add_argument("--client-ca", help="CA (PEM) that client certificates "
                   "are verified against; their CN is the user")
    p.add_argument("--token", action="append", metavar="T",
                   help="a bearer token that authenticates (repeatable)")
    p.add_argument("--plain", action="store_true",
                   help="no authentication at all (quick tests)")
    p.add_argument("--state", metavar="FILE", help="keep the objects, the "
                   "resourceVersion counter and the history here (written "
                   "on every change, read at start)")
    p.add_argument("--history", type=int, default=10000, metavar="N",
                   help="changes kept for watches to resume from (10000)")
    p.add_argument("--bookmark-interval", type=float, default=60.0,
                   metavar="S", help="seconds between BOOKMARK events (60)")
    p.add_argument("--workflow-crd", choices=["monorepo", "legacy"],
                   default="monorepo", help="the Workflow CRD's status "
                   "schema (monorepo)")
    p.add_argument("--server-version", default=kinds.GIT_VERSION,
                   help="the gitVersion of /version (%s)" % kinds.GIT_VERSION)
    o = p.parse_args(argv)
    if o.history < 1 or o.bookmark_interval <= 0:
        p.error("--history and --bookmark-interval must be positive")
    if o.client_ca and not o.cert:
        p.error("--client-ca needs --cert")
    if not re.match(r"^v1\.[0-9]+\.[0-9]+", o.server_version):
        p.error("--server-version is v1.MINOR.PATCH")
    if not o.cert and not o.plain and not o.token:
        p.error("without --cert: --plain, or --token for plain HTTP")
    return o


def main(argv):
    opts = parse_args(argv)
    emu = Emulator(opts)
    handler = type("BoundHandler", (Handler,), {"emu": emu})
    httpd = Server((opts.listen, opts.port), handler)
    if opts.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts.cert, opts.key)
        if opts.client_ca:
            ctx.load_verify_locations(opts.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
        httpd.ssl_context = ctx
    port = httpd.server_address[1]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    t = threading.Thread(target=httpd.serve_forever, args=(0.2,),
                         daemon=True)
    t.start()
    if opts.port_file:
        tmp = opts.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, opts.port_file)
    sys.stderr.write("apiserver_emu: listening on %s:%d (%s, %s)\n" % (
        opts.listen, port, "https" if opts.cert else "http",
        "no authentication" if opts.plain else "authentication"))
    while not stop.wait(1.0):
        pass
    httpd.shutdown()
    emu.store.save()
    httpd.server_close()
    sys.stderr.write("apiserver_emu: stopped\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
