"""kstore.py - the API-server emulator's objects (apiserver_emu.py): one
global resourceVersion counter (strings, as etcd's), a bounded history of
changes that watches resume from, the open watches each change is handed
to, list snapshots behind continue tokens, selectors, the three patch
types, and the state file. Standard library only.

Objects are never changed in place: each write stores a new dict, so the
history, list snapshots and watch queues hold references safely."""

import base64
import collections
import copy
import json
import os
import queue
import random
import re
import threading
import time
import uuid


class ApiError(Exception):
    """An answer other than success: a Status object."""

    def __init__(self, code, reason, message, kind=None, name=None,
                 headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.kind = kind
        self.name = name
        self.headers = headers or {}

    def status(self):
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {},
             "status": "Failure", "message": self.message,
             "reason": self.reason, "code": self.code}
        if self.kind is not None:
            s["details"] = {"name": self.name or "",
                            "group": self.kind.group,
                            "kind": self.kind.plural}
        return s


def status_of(code, reason, message):
    return ApiError(code, reason, message).status()


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---- selectors ----

_REQ = re.compile(r"\s*(!?)\s*([A-Za-z0-9_./-]+)\s*"
                  r"(?:(==|=|!=)\s*([A-Za-z0-9_.-]*)|"
                  r"\s(in|notin)\s*\(([^)]*)\))?\s*(,|$)")


def parse_labels(sel):
    """A label selector: a list of (key, op, values); op is one of
    exists, !exists, =, !=, in, notin. ApiError 400 when malformed."""
    reqs = []
    pos = 0
    sel = sel or ""
    while pos < len(sel):
        m = _REQ.match(sel, pos)
        if not m or m.end() == pos:
            raise ApiError(400, "BadRequest", "unable to parse requirement: "
                           "found '%s' in label selector %r" %
                           (sel[pos:pos + 10], sel))
        neg, key, op, val, setop, vals, _ = m.groups()
        if neg and (op or setop):
            raise ApiError(400, "BadRequest", "invalid label selector %r" %
                           sel)
        if neg:
            reqs.append((key, "!exists", []))
        elif op:
            reqs.append((key, "!=" if op == "!=" else "=", [val]))
        elif setop:
            reqs.append((key, setop, [v.strip() for v in vals.split(",")
                                      if v.strip()]))
        else:
            reqs.append((key, "exists", []))
        pos = m.end()
    return reqs


def labels_match(reqs, obj):
    labels = obj.get("metadata", {}).get("labels") or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "exists" and not has:
            return False
        if op == "!exists" and has:
            return False
        if op == "=" and v != vals[0]:
            return False
        if op == "!=" and has and v == vals[0]:
            return False
        if op == "in" and v not in vals:
            return False
        if op == "notin" and has and v in vals:
            return False
    return True


def parse_fields(sel):
    """metadata.name and metadata.namespace with =, == or != (what the
    server knows of a custom resource)."""
    reqs = []
    for part in (sel or "").split(","):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^([A-Za-z.]+)\s*(==|=|!=)\s*(.*)$", part)
        if not m:
            raise ApiError(400, "BadRequest", "invalid field selector %r" %
                           part)
        field, op, val = m.groups()
        if field not in ("metadata.name", "metadata.namespace"):
            raise ApiError(400, "BadRequest", "field label not supported: "
                           "%s" % field)
        reqs.append((field.split(".")[1], op != "!=", val))
    return reqs


def fields_match(reqs, obj):
    md = obj.get("metadata", {})
    for field, eq, val in reqs:
        if (md.get(field, "") == val) != eq:
            return False
    return True


class Filter:
    """What a list or a watch asks for: a namespace (None: all) and
    selectors."""

    def __init__(self, kind, namespace, label_sel, field_sel):
        self.kind = kind
        self.namespace = namespace
        self.labels = parse_labels(label_sel)
        self.fields = parse_fields(field_sel)

    def match(self, obj):
        if obj is None:
            return False
        if self.namespace is not None and \
                obj["metadata"].get("namespace") != self.namespace:
            return False
        return labels_match(self.labels, obj) and \
            fields_match(self.fields, obj)


# ---- patches ----

def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strip_directives(patch):
    """A strategic-merge patch of a built-in kind is applied here as a
    merge patch: its $-directives are dropped."""
    if isinstance(patch, dict):
        return {k: strip_directives(v) for k, v in patch.items()
                if not k.startswith("$")}
    if isinstance(patch, list):
        return [strip_directives(v) for v in patch]
    return patch


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", "invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~")
            for p in path[1:].split("/")]


def _walk(doc, toks):
    for t in toks:
        if isinstance(doc, list):
            doc = doc[int(t)]
        else:
            doc = doc[t]
    return doc


def json_patch(doc, ops):
    """RFC 6902 on a deep copy of doc; ApiError 422 when an operation
    cannot apply (a failed test included)."""
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "a JSON patch is a list")
    try:
        for op in ops:
            o = op.get("op")
            toks = _pointer(op.get("path", ""))
            if o == "test":
                if _walk(doc, toks) != op.get("value"):
                    raise ApiError(422, "Invalid", "the test of %s failed" %
                                   op.get("path"))
                continue
            if o in ("move", "copy"):
                val = copy.deepcopy(_walk(doc, _pointer(op["from"])))
                if o == "move":
                    doc = _remove(doc, _pointer(op["from"]))
                doc = _add(doc, toks, val)
            elif o == "add":
                doc = _add(doc, toks, copy.deepcopy(op["value"]))
            elif o == "remove":
                doc = _remove(doc, toks)
            elif o == "replace":
                _walk(doc, toks)
                doc = _remove(doc, toks)
                doc = _add(doc, toks, copy.deepcopy(op["value"]))
            else:
                raise ApiError(400, "BadRequest", "unknown op %r" % o)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
        raise ApiError(422, "Invalid", "the JSON patch does not apply: "
                       "%s" % e)
    return doc


def _add(doc, toks, val):
    if not toks:
        return val
    parent = _walk(doc, toks[:-1])
    last = toks[-1]
    if isinstance(parent, list):
        parent.insert(len(parent) if last == "-" else int(last), val)
    else:
        parent[last] = val
    return doc


def _remove(doc, toks):
    parent = _walk(doc, toks[:-1])
    if isinstance(parent, list):
        del parent[int(toks[-1])]
    else:
        del parent[toks[-1]]
    return doc


# ---- the store ----

NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


class Watch:
    """One open watch stream: its filter and the queue of what to send
    (("event", type, old, new, rv) or a control item)."""

    def __init__(self, kind, flt, user):
        self.kind = kind
        self.filter = flt
        self.user = user
        self.q = queue.Queue()


class Store:
    def __init__(self, history_max, state_file=None):
        self.lock = threading.RLock()
        self.rv = 0
        self.objects = {}    # (plural, namespace or "", name) -> object
        self.history = collections.deque()   # (rv, plural, type, old, new)
        self.history_max = history_max
        self.start = 0       # a watch or continue from an rv below: 410
        self.watches = set()
        self.snapshots = collections.OrderedDict()  # id -> (rv, [objects])
        self.state_file = state_file

    # -- keys and lookups --

    @staticmethod
    def key(kind, ns, name):
        return (kind.plural, ns if kind.namespaced else "", name)

    def get(self, kind, ns, name):
        with self.lock:
            obj = self.objects.get(self.key(kind, ns, name))
        if obj is None:
            raise ApiError(404, "NotFound", '%s "%s" not found' %
                           (kind.group_resource, name), kind, name)
        return obj

    # -- changes --

    def _next_rv(self):
        self.rv += 1
        return str(self.rv)

    def _record(self, kind, etype, old, new):
        """Under the lock: a change is in the history and in every
        watch's queue (which filters it)."""
        rv = int((new or old)["metadata"]["resourceVersion"])
        self.history.append((rv, kind.plural, etype, old, new))
        while len(self.history) > self.history_max:
            dropped = self.history.popleft()
            self.start = max(self.start, dropped[0])
        for w in self.watches:
            if w.kind is kind:
                w.q.put(("event", etype, old, new, rv))
        self.save()

    def create(self, kind, ns, obj):
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise ApiError(400, "BadRequest", "metadata is not an object")
        with self.lock:
            if not md.get("name"):
                gen = md.get("generateName")
                if not gen:
                    raise ApiError(422, "Invalid", "%s \"\" is invalid: "
                                   "metadata.name: Required value: name or "
                                   "generateName is required" %
                                   kind.kind, kind, "")
                for _ in range(100):
                    md["name"] = gen + "".join(random.choice(NAME_CHARS)
                                               for _ in range(5))
                    if self.key(kind, ns, md["name"]) not in self.objects:
                        break
            k = self.key(kind, ns, md["name"])
            if k in self.objects:
                raise ApiError(409, "AlreadyExists", '%s "%s" already '
                               'exists' % (kind.group_resource, md["name"]),
                               kind, md["name"])
            if kind.namespaced:
                md["namespace"] = ns
            else:
                md.pop("namespace", None)
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = now_rfc3339()
            if kind.status and not kind.builtin:
                md["generation"] = 1
                obj.pop("status", None)   # as the real server, on create
            md["resourceVersion"] = self._next_rv()
            self.objects[k] = obj
            self._record(kind, "ADDED", None, obj)
        return obj

    def put_raw(self, kind, obj):
        """The control API's way in: obj stored as given (status too),
        with a new resourceVersion; ADDED or MODIFIED."""
        md = obj.setdefault("metadata", {})
        with self.lock:
            k = self.key(kind, md.get("namespace", "default"), md["name"])
            old = self.objects.get(k)
            if kind.namespaced:
                md.setdefault("namespace", "default")
            md.setdefault("uid", old["metadata"]["uid"] if old else
                          str(uuid.uuid4()))
            md.setdefault("creationTimestamp", now_rfc3339())
            if kind.status and not kind.builtin:
                md.setdefault("generation", 1)
            md["resourceVersion"] = self._next_rv()
            obj.setdefault("apiVersion", kind.api_version)
            obj.setdefault("kind", kind.kind)
            self.objects[k] = obj
            self._record(kind, "MODIFIED" if old else "ADDED", old, obj)
        return obj

    def update(self, kind, ns, name, new, subresource, precondition):
        """A write of an existing object (PUT, or a PATCH's result): the
        main resource keeps its status, the status subresource changes
        only .status. precondition: the resourceVersion the client wrote,
        or None."""
        with self.lock:
            old = self.get(kind, ns, name)
            if precondition and precondition != \
                    old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be '
                               'fulfilled on %s "%s": the object has been '
                               'modified; please apply your changes to the '
                               'latest version and try again' %
                               (kind.group_resource, name), kind, name)
            if not isinstance(new, dict):
                raise ApiError(400, "BadRequest", "the object is not a "
                               "JSON object")
            if subresource == "status":
                obj = dict(old)
                if "status" in new:
                    obj["status"] = new["status"]
                else:
                    obj.pop("status", None)
                obj["metadata"] = dict(old["metadata"])
            else:
                obj = dict(new)
                md = obj.get("metadata")
                obj["metadata"] = dict(md) if isinstance(md, dict) else {}
                if kind.status and not kind.builtin:
                    if "status" in old:
                        obj["status"] = old["status"]
                    else:
                        obj.pop("status", None)
                md = obj["metadata"]
                for f in ("uid", "creationTimestamp", "name", "namespace",
                          "generation"):
                    if f in old["metadata"]:
                        md[f] = old["metadata"][f]
                    else:
                        md.pop(f, None)
                if "generation" in md and self._spec(old) != self._spec(obj):
                    md["generation"] = md["generation"] + 1
            obj.setdefault("apiVersion", kind.api_version)
            obj.setdefault("kind", kind.kind)
            if obj == old:
                return old    # a write that changes nothing: no new rv
            obj["metadata"]["resourceVersion"] = self._next_rv()
            self.objects[self.key(kind, ns, name)] = obj
            self._record(kind, "MODIFIED", old, obj)
        return obj

    @staticmethod
    def _spec(obj):
        return {k: v for k, v in obj.items()
                if k not in ("metadata", "status", "apiVersion", "kind")}

    def delete(self, kind, ns, name, precondition=None):
        with self.lock:
            old = self.get(kind, ns, name)
            if precondition and precondition != \
                    old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be '
                               'fulfilled on %s "%s": the resource version '
                               'does not match' %
                               (kind.group_resource, name), kind, name)
            obj = dict(old)
            obj["metadata"] = dict(old["metadata"],
                                   resourceVersion=self._next_rv())
            del self.objects[self.key(kind, ns, name)]
            self._record(kind, "DELETED", old, obj)
        return obj

    # -- reads --

    def _matching(self, kind, flt):
        return [o for (p, _, _), o in sorted(self.objects.items())
                if p == kind.plural and flt.match(o)]

    def list(self, kind, flt, limit, cont):
        """(items, rv, continue token, remaining count or None)."""
        with self.lock:
            if cont:
                try:
                    tok = json.loads(base64.urlsafe_b64decode(cont))
                    rv, sid, off = int(tok["rv"]), tok["id"], int(tok["off"])
                except (ValueError, KeyError, TypeError):
                    raise ApiError(400, "BadRequest", "continue key is not "
                                   "valid")
                snap = self.snapshots.get(sid)
                if snap is None or rv < self.start:
                    raise ApiError(410, "Expired", "The provided continue "
                                   "parameter is too old to display a "
                                   "consistent list result. You can start "
                                   "a new list without the continue "
                                   "parameter.")
                items = snap[1]
            else:
                rv, off = self.rv, 0
                items = self._matching(kind, flt)
                sid = None
            end = len(items) if not limit else min(len(items), off + limit)
            token = ""
            if end < len(items):
                if sid is None:
                    sid = uuid.uuid4().hex
                    self.snapshots[sid] = (rv, items)
                    while len(self.snapshots) > 64:
                        self.snapshots.popitem(last=False)
                token = base64.urlsafe_b64encode(json.dumps(
                    {"rv": rv, "id": sid, "off": end}).encode()).decode()
            return items[off:end], str(rv), token, \
                (len(items) - end if token else None)

    def dump(self):
        with self.lock:
            out = {}
            for (p, _, _), o in sorted(self.objects.items()):
                out.setdefault(p, []).append(o)
            return {"resourceVersion": str(self.rv), "historyStart":
                    str(self.start), "objects": out}

    # -- watches --

    def open_watch(self, kind, flt, rv, user):
        """Registers a watch from rv ("" or "0": every current object as
        ADDED first). Returns (watch, None) or (None, the 410 Status's
        message) when rv is older than the history keeps."""
        w = Watch(kind, flt, user)
        with self.lock:
            if rv in ("", "0", None):
                for o in self._matching(kind, flt):
                    w.q.put(("event", "ADDED", None, o,
                             int(o["metadata"]["resourceVersion"])))
            else:
                try:
                    n = int(rv)
                except ValueError:
                    raise ApiError(400, "BadRequest", "invalid resource "
                                   "version %r" % rv)
                if n < self.start:
                    return None, "too old resource version: %d (%d)" % (
                        n, self.start)
                for hrv, plural, etype, old, new in self.history:
                    if hrv > n and plural == kind.plural:
                        w.q.put(("event", etype, old, new, hrv))
            self.watches.add(w)
        return w, None

    def close_watch(self, w):
        with self.lock:
            self.watches.discard(w)

    def to_watches(self, item, plural=None):
        """A control item for every open watch (of plural): their count."""
        with self.lock:
            ws = [w for w in self.watches
                  if plural is None or w.kind.plural == plural]
            for w in ws:
                w.q.put(item)
        return len(ws)

    def compact(self):
        """Every resourceVersion handed out so far is too old for a watch
        or a continue token from now on (a new one is taken, so that a
        relist's rv is not)."""
        with self.lock:
            self.history.clear()
            self.start = int(self._next_rv())
            self.save()
            return self.start

    # -- the state file --

    def save(self):
        if not self.state_file:
            return
        with self.lock:
            st = {"rv": self.rv, "start": self.start,
                  "objects": [[list(k), o] for k, o in self.objects.items()],
                  "history": list(self.history)}
            tmp = self.state_file + ".tmp"
            with open(tmp, "w") as f:
                json.dump(st, f)
            os.rename(tmp, self.state_file)

    def load(self):
        """Reads the state file when there is one: True when it was."""
        if not self.state_file or not os.path.exists(self.state_file):
            return False
        with open(self.state_file) as f:
            st = json.load(f)
        with self.lock:
            self.rv = int(st["rv"])
            self.start = int(st["start"])
            self.objects = {tuple(k): o for k, o in st["objects"]}
            self.history = collections.deque(tuple(h) for h in
                                             st["history"])
        return True
