#!/usr/bin/python3
"""redfish_emu.py - a small Redfish service for the tests.

No Redfish server is packaged for Debian, only clients (redfishtool,
python3-sushy), so the tests of ironbell's Redfish client run against this
emulator, which is itself proven with those two clients
(tests/integration/test_redfish_emu.sh).

What it serves (DSP0266 / DSP8010 shapes, only what BMC control needs):
  /redfish, /redfish/v1          service root, without authentication
  /redfish/v1/SessionService/Sessions
                                 POST UserName+Password: 201, X-Auth-Token,
                                 Location; DELETE of the session
  /redfish/v1/Systems[/ID]       N ComputerSystems: PowerState, Boot override
                                 (ETag on GET, If-Match honoured on PATCH: 412),
                                 Actions #ComputerSystem.Reset; a reset
                                 that starts the system records the device it
                                 boots from and uses up a Once override
  /redfish/v1/TaskService/TaskMonitors/N
                                 with --task-polls K a Reset answers 202 and a
                                 task monitor that completes at its K-th GET
  /redfish/v1/Managers/BMC/VirtualMedia/Cd
                                 InsertMedia / EjectMedia
  /emu/state                     GET (no authentication): power, boot override,
                                 resets and boots seen, sessions, virtual media
                                 as JSON; PATCH /emu/state/systems/ID
                                 {"PowerState": ..} turns a system on or off
                                 behind the client; PATCH /emu/state/fault
                                 makes the next requests fail (FAULTS)
  /redfish/v1/Systems/ID/Settings
                                 with --vendor settings-boot, where the boot
                                 override is written
With --bmcs N, N such services, each with its own state, on N ports.
With --hook PROG the one system drives a machine through PROG, the
chassis_control hook of ipmi_sim (tests/e2e/vm-bmc.sh): PowerState is what
"PROG get power" prints (power:1 is On), a reset that starts the system
runs "PROG set boot D" for an enabled override (Pxe: pxe, Hdd: default,
BiosSetup: bios, Cd: cdrom, UefiHttp: pxe) then "PROG set power 1" (or
"set reset 1" when it runs already), a reset that stops it "PROG set power
0"; a hook that fails makes the request fail with 500.
Everything else that needs authentication takes Basic or X-Auth-Token.
A client's "Connection: close" is echoed (sushy always sends it). TLS with
--cert/--key. SIGTERM stops it within a second. Only the Python standard
library: it runs under /usr/bin/python3.
"""

import argparse
import base64
import hmac
import json
import os
import secrets
import selectors
import shlex
import signal
import socket
import ssl
import subprocess
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ALL_RESET_TYPES = ["On", "ForceOff", "GracefulShutdown", "GracefulRestart",
                   "ForceRestart", "Nmi", "ForceOn", "PushPowerButton",
                   "PowerCycle"]
BOOT_TARGETS = ["None", "Pxe", "Hdd", "BiosSetup", "Cd", "UefiHttp"]
BOOT_ENABLED = ["Disabled", "Once", "Continuous"]
BOOT_MODES = ["UEFI", "Legacy"]

# Vendor profiles: how one BMC differs from another. Each entry is one
# difference a client must cope with.
VENDORS = {
    # Everything the schema allows.
    "generic": {"manufacturer": "Ironbell Emulated", "reset_types":
                ALL_RESET_TYPES},
    # A BMC that has no PowerCycle: a client must pick another reset type
    # from ResetType@Redfish.AllowableValues (and a raw POST gets 400).
    "no-powercycle": {"manufacturer": "Ironbell Emulated NoCycle",
                      "reset_types": [t for t in ALL_RESET_TYPES
                                      if t != "PowerCycle"]},
    # A BMC whose boot override is written to the system's Settings object
    # (@Redfish.Settings, DSP0266 "Settings resource"), not to the system:
    # a PATCH of Boot on the system gets 400.
    "settings-boot": {"manufacturer": "Ironbell Emulated Settings",
                      "reset_types": ALL_RESET_TYPES, "settings": True},
}

# Faults a test can ask for (PATCH /emu/state/fault), each what a broken or
# hostile BMC does: a body that is not JSON, a 500, a redirect to another
# host, a connection closed without an answer, a body larger than a client
# should read (2 MiB), and "etag-change": the system changes right after
# its next GET (its ETag with it), as when another client writes between
# a client's GET and its PATCH; "expire-sessions": every session ends at
# the next request that brings an X-Auth-Token, which gets 401, as when a
# session times out or the BMC restarts; "task-exception": the next reset
# task ends in TaskState Exception without resetting anything;
# "echo-password": the next login gets 400 with the Base registry's
# PropertyValueFormatError, whose message quotes the value sent: the
# password.
FAULTS = ["none", "not-json", "500", "redirect", "close", "huge",
          "etag-change", "expire-sessions", "task-exception",
          "echo-password"]
# Not taken by inject(): each waits for the request it is about.
LATE_FAULTS = ("etag-change", "expire-sessions", "task-exception",
               "echo-password")

MAX_BODY = 64 * 1024        # largest request body read
HOOK_TIMEOUT = 10           # seconds one call of --hook may take
# The hook's boot device for an enabled override target (vm-bmc.sh's).
HOOK_BOOT = {"Pxe": "pxe", "Hdd": "default", "BiosSetup": "bios",
             "Cd": "cdrom", "UefiHttp": "pxe"}
MAX_SESSIONS = 64           # open sessions; more get 503
CONN_TIMEOUT = 30           # seconds a connection may sit idle
ROOT = "/redfish/v1"
REGISTRY = "Base.1.8"


def redfish_error(message_id, message, args=()):
    """A Redfish error body (DSP0266 "Error responses")."""
    return {"error": {
        "code": REGISTRY + ".GeneralError",
        "message": message,
        "@Message.ExtendedInfo": [{
            "@odata.type": "#Message.v1_1_1.Message",
            "MessageId": REGISTRY + "." + message_id,
            "Message": message,
            "MessageArgs": list(args),
            "Severity": "Warning",
            "Resolution": "Correct the request and resubmit it.",
        }]}}


class HttpError(Exception):
    def __init__(self, status, message_id, message, args=(), headers=None):
        super().__init__(message)
        self.status = status
        self.body = redfish_error(message_id, message, args)
        self.headers = headers or {}


def run_hook(hook, args):
    """Runs the hook (a command line, split as sh would) with ARGS; its
    standard output, or HttpError 500 when it fails."""
    try:
        r = subprocess.run(shlex.split(hook) + list(args),
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=HOOK_TIMEOUT, text=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise HttpError(500, "InternalError", "the hook failed: %s" % e)
    if r.returncode != 0:
        raise HttpError(500, "InternalError", "the hook %s failed: %s" % (
            " ".join(args), (r.stdout + r.stderr).strip()[:200]))
    return r.stdout


class System:
    def __init__(self, ident, vendor, hook=None):
        self.ident = ident
        self.vendor = vendor
        self.hook = hook            # --hook: the machine's power is PROG's
        self.power = "Off"
        self.boot = {"BootSourceOverrideTarget": "None",
                     "BootSourceOverrideEnabled": "Disabled",
                     "BootSourceOverrideMode": "UEFI"}
        self.generation = 1
        self.resets = []
        self.boots = []             # the device of each boot, in order
        self.if_match_patches = 0   # PATCHes that carried a matching If-Match
        self.precondition_failed = 0  # PATCHes refused with 412
        self.settings_patches = 0   # PATCHes of the Settings object

    def etag(self):
        return 'W/"%x"' % self.generation

    def changed(self):
        self.generation += 1

    def uri(self):
        return "%s/Systems/%s" % (ROOT, self.ident)

    def refresh(self):
        """With a hook, PowerState is read again from it (the machine may
        have gone off by itself)."""
        if self.hook is None:
            return
        out = run_hook(self.hook, ["get", "power"])
        power = "On" if "power:1" in out.split() else "Off"
        if power != self.power:
            self.power = power
            self.changed()

    def hook_power(self, was, now, running):
        """With a hook, the machine follows a reset: stopped when it goes
        off; started (from the override's device) when it boots, reset
        when it was RUNNING already (a restart)."""
        if self.hook is None:
            return
        if now == "Off" and was == "On":
            run_hook(self.hook, ["set", "power", "0"])
        elif now == "On" and was == "Off":
            b = self.boot
            if b["BootSourceOverrideEnabled"] != "Disabled" and \
                    b["BootSourceOverrideTarget"] in HOOK_BOOT:
                run_hook(self.hook, ["set", "boot",
                                     HOOK_BOOT[b["BootSourceOverrideTarget"]]])
            run_hook(self.hook, ["set", "reset" if running else "power",
                                 "1"])

    def resource(self):
        boot = dict(self.boot)
        boot["BootSourceOverrideTarget@Redfish.AllowableValues"] = BOOT_TARGETS
        boot["BootSourceOverrideMode@Redfish.AllowableValues"] = BOOT_MODES
        extra = {}
        if self.vendor.get("settings"):
            extra["@Redfish.Settings"] = {
                "@odata.type": "#Settings.v1_3_0.Settings",
                "SettingsObject": {"@odata.id": self.uri() + "/Settings"}}
        return dict(extra, **{
            "@odata.id": self.uri(),
            "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
            "@odata.etag": self.etag(),
            "Id": self.ident,
            "Name": "Emulated system " + self.ident,
            "SystemType": "Physical",
            "Manufacturer": self.vendor["manufacturer"],
            "Model": "redfish_emu",
            "SerialNumber": "EMU%04d" % int(self.ident)
            if self.ident.isdigit() else "EMU",
            "UUID": "00000000-0000-4000-8000-%012d" % (
                int(self.ident) if self.ident.isdigit() else 0),
            "PowerState": self.power,
            "Status": {"State": "Enabled", "Health": "OK"},
            "Boot": boot,
            "Actions": {"#ComputerSystem.Reset": {
                "target": self.uri() + "/Actions/ComputerSystem.Reset",
                "ResetType@Redfish.AllowableValues":
                    self.vendor["reset_types"]}},
            "Links": {"ManagedBy": [{"@odata.id": ROOT + "/Managers/BMC"}]},
        })

    def reset(self, reset_type):
        """Applies a reset that has been accepted. A reset that starts the
        machine (on from off, or a restart) boots it: see boot_once."""
        self.refresh()
        self.resets.append(reset_type)
        was = running = self.power
        if reset_type in ("On", "ForceOn"):
            self.power = "On"
        elif reset_type in ("GracefulRestart", "ForceRestart", "PowerCycle"):
            self.power = "On"
            was = "Off"
        elif reset_type in ("ForceOff", "GracefulShutdown"):
            self.power = "Off"
        elif reset_type == "PushPowerButton":
            self.power = "Off" if self.power == "On" else "On"
        self.hook_power(was, self.power, running == "On")
        if was == "Off" and self.power == "On":
            self.boot_once()
        self.changed()

    def boot_once(self):
        """A boot, as a BMC sees it: the device it starts from is recorded
        (the override's target when enabled, else "Default"), and a Once
        override is used up (Enabled goes back to Disabled)."""
        enabled = self.boot["BootSourceOverrideEnabled"]
        target = self.boot["BootSourceOverrideTarget"]
        if enabled == "Disabled" or target == "None":
            target = "Default"
        self.boots.append(target)
        if enabled == "Once":
            self.boot["BootSourceOverrideEnabled"] = "Disabled"


class Emulator:
    """The whole state, behind one lock."""

    def __init__(self, opts):
        self.lock = threading.Lock()
        self.opts = opts
        self.vendor = VENDORS[opts.vendor]
        self.systems = {}
        for i in range(1, opts.systems + 1):
            s = System(str(i), self.vendor, opts.hook)
            self.systems[s.ident] = s
        self.sessions = {}      # id -> token
        self.next_session = 1
        self.tasks = {}         # id -> {"system", "reset", "polls", "done"}
        self.next_task = 1
        self.media = {"Image": None, "Inserted": False}
        self.fault = {"Mode": "none", "Count": 0}
        self.connections = 0    # TCP connections accepted

    def state(self):
        for s in self.systems.values():
            s.refresh()
        return {
            "vendor": self.opts.vendor,
            "systems": {i: {"PowerState": s.power, "Boot": dict(s.boot),
                            "Resets": list(s.resets), "ETag": s.etag(),
                            "IfMatchPatches": s.if_match_patches,
                            "PreconditionFailed": s.precondition_failed,
                            "SettingsPatches": s.settings_patches,
                            "Boots": list(s.boots)}
                        for i, s in self.systems.items()},
            "sessions": len(self.sessions),
            "sessions_created": self.next_session - 1,
            "tasks": {str(i): dict(t) for i, t in self.tasks.items()},
            "virtual_media": dict(self.media),
            "fault": dict(self.fault),
            "connections": self.connections,
        }

    def take_fault(self):
        """The fault the next /redfish request gets, used up one by one."""
        with self.lock:
            if self.fault["Count"] <= 0 or self.fault["Mode"] in LATE_FAULTS:
                return None
            self.fault["Count"] -= 1
            return self.fault["Mode"]


def etag_matches(header, etag):
    """If-Match: "*" or a list of entity tags; W/ is ignored on both sides
    (Redfish services serve weak tags and clients send them back)."""
    def opaque(t):
        t = t.strip()
        return t[2:] if t.startswith("W/") else t
    for tag in header.split(","):
        tag = tag.strip()
        if tag == "*" or opaque(tag) == opaque(etag):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "redfish_emu/1"
    timeout = CONN_TIMEOUT
    emu = None                  # set by main

    def setup(self):
        super().setup()
        if self.emu is not None:
            with self.emu.lock:
                self.emu.connections += 1
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()

    def log_message(self, fmt, *args):
        sys.stderr.write("redfish_emu: %s %s\n" % (self.address_string(),
                                                   fmt % args))

    # ---- replies ----

    def reply(self, status, body=None, headers=None):
        data = b""
        if body is not None:
            data = json.dumps(body, indent=1).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("OData-Version", "4.0")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.headers.get("Connection", "").lower() == "close":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def read_json(self):
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise HttpError(400, "MalformedJSON",
                            "Transfer-Encoding is not supported")
        try:
            n = int(length or "0")
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            raise HttpError(400, "MalformedJSON", "bad Content-Length")
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            raise HttpError(400, "MalformedJSON",
                            "The request body submitted was malformed JSON")
        if not isinstance(body, dict):
            raise HttpError(400, "MalformedJSON",
                            "The request body is not a JSON object")
        return body

    # ---- authentication ----

    def authenticate(self):
        emu = self.emu
        token = self.headers.get("X-Auth-Token")
        if token is not None:
            with emu.lock:
                f = emu.fault
                if f["Mode"] == "expire-sessions" and f["Count"] > 0:
                    f["Count"] -= 1
                    emu.sessions.clear()
                for t in emu.sessions.values():
                    if hmac.compare_digest(t, token):
                        return
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                user, _, pw = base64.b64decode(
                    auth[6:], validate=True).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                user, pw = "", None
            if pw is not None and self.credentials_ok(user, pw):
                return
        raise HttpError(401, "NoValidSession",
                        "There is no valid session established with the "
                        "implementation.",
                        headers={"WWW-Authenticate": 'Basic realm="redfish"'})

    def credentials_ok(self, user, pw):
        o = self.emu.opts
        return (hmac.compare_digest(user.encode(), o.user.encode()) and
                hmac.compare_digest(pw.encode(), o.password.encode()))

    # ---- dispatch ----

    def handle_any(self):
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if len(path) > 1:
            path = path.rstrip("/")
        try:
            if path.startswith("/redfish") and self.inject(path):
                return
            self.route(path)
        except HttpError as e:
            self.reply(e.status, e.body, e.headers)

    def inject(self, path):
        """Answers with the fault set through /emu/fault, if one is left;
        True when it did."""
        mode = self.emu.take_fault()
        if mode is None or mode == "none":
            return False
        if mode == "close":
            self.close_connection = True
            return True
        if mode == "500":
            raise HttpError(500, "InternalError",
                            "The request failed due to an internal service "
                            "error.  The service is still operational.")
        if mode == "redirect":
            self.reply(302, None, {"Location": "https://192.0.2.1" + path})
            return True
        if mode == "huge":
            self.reply(200, {"Id": "1", "Padding": "x" * (2 * 1024 * 1024)})
            return True
        data = b"<html>this is not JSON</html>"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(data)
        return True

    do_GET = do_HEAD = do_POST = do_PATCH = do_DELETE = do_PUT = handle_any

    def not_allowed(self, allow):
        raise HttpError(405, "OperationNotAllowed",
                        "The operation is not allowed on this resource",
                        headers={"Allow": allow})

    def route(self, path):
        m = self.command
        if path == "/redfish":
            if m not in ("GET", "HEAD"):
                self.not_allowed("GET, HEAD")
            return self.reply(200, {"v1": ROOT + "/"})
        if path == ROOT:
            if m not in ("GET", "HEAD"):
                self.not_allowed("GET, HEAD")
            return self.reply(200, self.service_root())
        if path == "/emu/state" or path.startswith("/emu/state/"):
            return self.emu_state(path)
        if path == ROOT + "/SessionService/Sessions" and m == "POST":
            return self.session_create()
        self.authenticate()
        parts = path[len(ROOT) + 1:].split("/") \
            if path.startswith(ROOT + "/") else []
        if parts[:1] == ["SessionService"]:
            return self.session_service(parts[1:])
        if parts[:1] == ["Systems"]:
            return self.systems(parts[1:])
        if parts[:1] == ["Managers"]:
            return self.managers(parts[1:])
        if parts[:2] == ["TaskService", "TaskMonitors"] and len(parts) == 3:
            return self.task_monitor(parts[2])
        raise HttpError(404, "ResourceMissingAtURI",
                        "The resource at the URI %s was not found." % path,
                        [path])

    def get_only(self):
        if self.command not in ("GET", "HEAD"):
            self.not_allowed("GET, HEAD")

    # ---- resources ----

    def service_root(self):
        return {
            "@odata.id": ROOT + "/",
            "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
            "Id": "RootService",
            "Name": "Root Service",
            "RedfishVersion": "1.6.0",
            "UUID": "00000000-0000-4000-8000-000000000000",
            "Systems": {"@odata.id": ROOT + "/Systems"},
            "Managers": {"@odata.id": ROOT + "/Managers"},
            "SessionService": {"@odata.id": ROOT + "/SessionService"},
            "Links": {"Sessions":
                      {"@odata.id": ROOT + "/SessionService/Sessions"}},
        }

    def session_create(self):
        body = self.read_json()
        user, pw = body.get("UserName"), body.get("Password")
        if not isinstance(user, str) or not isinstance(pw, str):
            raise HttpError(400, "PropertyMissing",
                            "UserName and Password are required",
                            ["UserName"])
        with self.emu.lock:
            f = self.emu.fault
            echo = f["Mode"] == "echo-password" and f["Count"] > 0
            if echo:
                f["Count"] -= 1
        if echo:
            raise HttpError(400, "PropertyValueFormatError",
                            "The value '%s' for the property Password is "
                            "of a different format than the property can "
                            "accept." % pw, [pw, "Password"])
        if not self.credentials_ok(user, pw):
            raise HttpError(401, "NoValidSession", "Invalid credentials")
        emu = self.emu
        with emu.lock:
            if len(emu.sessions) >= MAX_SESSIONS:
                raise HttpError(503, "SessionLimitExceeded",
                                "The session establishment failed due to "
                                "the number of simultaneous sessions "
                                "exceeding the limit of the implementation.")
            sid = str(emu.next_session)
            emu.next_session += 1
            token = secrets.token_hex(16)
            emu.sessions[sid] = token
        uri = ROOT + "/SessionService/Sessions/" + sid
        self.reply(201, self.session_resource(sid),
                   {"X-Auth-Token": token, "Location": uri})

    def session_resource(self, sid):
        return {"@odata.id": ROOT + "/SessionService/Sessions/" + sid,
                "@odata.type": "#Session.v1_0_0.Session",
                "Id": sid, "Name": "Session " + sid,
                "UserName": self.emu.opts.user}

    def session_service(self, rest):
        emu = self.emu
        if not rest:
            self.get_only()
            return self.reply(200, {
                "@odata.id": ROOT + "/SessionService",
                "@odata.type": "#SessionService.v1_1_3.SessionService",
                "Id": "SessionService", "Name": "Session Service",
                "ServiceEnabled": True, "SessionTimeout": 1800,
                "Sessions": {"@odata.id":
                             ROOT + "/SessionService/Sessions"}})
        if rest == ["Sessions"]:
            self.get_only()
            with emu.lock:
                ids = sorted(emu.sessions, key=int)
            return self.reply(200, self.collection(
                "/SessionService/Sessions", "SessionCollection", ids))
        if len(rest) == 2 and rest[0] == "Sessions":
            with emu.lock:
                if rest[1] not in emu.sessions:
                    raise HttpError(404, "ResourceMissingAtURI",
                                    "No such session", [self.path])
                if self.command == "DELETE":
                    del emu.sessions[rest[1]]
                    return self.reply(204)
            self.get_only()
            return self.reply(200, self.session_resource(rest[1]))
        raise HttpError(404, "ResourceMissingAtURI", "Not found", [self.path])

    def collection(self, sub, kind, ids):
        return {"@odata.id": ROOT + sub,
                "@odata.type": "#%s.%s" % (kind, kind),
                "Name": kind,
                "Members@odata.count": len(ids),
                "Members": [{"@odata.id": "%s%s/%s" % (ROOT, sub, i)}
                            for i in ids]}

    def systems(self, rest):
        emu = self.emu
        if not rest:
            self.get_only()
            return self.reply(200, self.collection(
                "/Systems", "ComputerSystemCollection", list(emu.systems)))
        system = emu.systems.get(rest[0])
        if system is None:
            raise HttpError(404, "ResourceMissingAtURI", "No such system",
                            [self.path])
        if len(rest) == 1:
            if self.command == "PATCH":
                return self.system_patch(system)
            self.get_only()
            with emu.lock:
                system.refresh()
                body, etag = system.resource(), system.etag()
                f = emu.fault
                if f["Mode"] == "etag-change" and f["Count"] > 0:
                    f["Count"] -= 1
                    system.changed()
            return self.reply(200, body, {"ETag": etag})
        if rest[1:] == ["Settings"] and system.vendor.get("settings"):
            if self.command == "PATCH":
                return self.system_patch(system, settings=True)
            self.get_only()
            with emu.lock:
                body = {"@odata.id": system.uri() + "/Settings",
                        "Id": "Settings", "Boot": dict(system.boot)}
            return self.reply(200, body)
        if rest[1:] == ["Actions", "ComputerSystem.Reset"]:
            if self.command != "POST":
                self.not_allowed("POST")
            return self.system_reset(system)
        raise HttpError(404, "ResourceMissingAtURI", "Not found", [self.path])

    def system_patch(self, system, settings=False):
        body = self.read_json()
        if system.vendor.get("settings") and not settings:
            raise HttpError(400, "PropertyNotWritable",
                            "The property Boot is written through the "
                            "settings object", ["Boot"])
        for key in body:
            if key != "Boot":
                raise HttpError(400, "PropertyNotWritable",
                                "The property %s is a read only property" %
                                key, [key])
        boot = body.get("Boot")
        if not isinstance(boot, dict) or not boot:
            raise HttpError(400, "PropertyValueTypeError",
                            "Boot must be a non-empty object", ["Boot"])
        allowed = {"BootSourceOverrideTarget": BOOT_TARGETS,
                   "BootSourceOverrideEnabled": BOOT_ENABLED,
                   "BootSourceOverrideMode": BOOT_MODES}
        for key, value in boot.items():
            if key not in allowed:
                raise HttpError(400, "PropertyUnknown",
                                "The property %s is not in the list of "
                                "valid properties for the resource." % key,
                                [key])
            if value not in allowed[key]:
                raise HttpError(400, "PropertyValueNotInList",
                                "The value %s for the property %s is not "
                                "in the list of acceptable values." %
                                (value, key), [str(value), key])
        with self.emu.lock:
            match = self.headers.get("If-Match")
            if match is not None and not etag_matches(match, system.etag()):
                system.precondition_failed += 1
                raise HttpError(412, "PreconditionFailed",
                                "The ETag supplied did not match the ETag "
                                "required to change this resource.")
            if match is not None:
                system.if_match_patches += 1
            if settings:
                system.settings_patches += 1
            system.boot.update(boot)
            system.changed()
            out, etag = system.resource(), system.etag()
        self.reply(200, out, {"ETag": etag})

    def system_reset(self, system):
        body = self.read_json()
        rtype = body.get("ResetType")
        if rtype is None:
            raise HttpError(400, "ActionParameterMissing",
                            "The action ComputerSystem.Reset requires the "
                            "parameter ResetType to be present in the "
                            "request body.",
                            ["ComputerSystem.Reset", "ResetType"])
        if rtype not in self.emu.vendor["reset_types"]:
            raise HttpError(400, "ActionParameterValueNotInList",
                            "The value %s for the parameter ResetType in "
                            "the action ComputerSystem.Reset is not in the "
                            "list of acceptable values." % rtype,
                            [str(rtype), "ResetType", "ComputerSystem.Reset"])
        emu = self.emu
        with emu.lock:
            if emu.opts.task_polls > 0:
                tid = str(emu.next_task)
                emu.next_task += 1
                f = emu.fault
                fails = f["Mode"] == "task-exception" and f["Count"] > 0
                if fails:
                    f["Count"] -= 1
                emu.tasks[tid] = {"system": system.ident, "reset": rtype,
                                  "polls": 0, "done": False, "fails": fails}
                uri = ROOT + "/TaskService/TaskMonitors/" + tid
                return self.reply(202, self.task_body(tid, "Running"),
                                  {"Location": uri, "Retry-After": "1"})
            system.reset(rtype)
        self.reply(204)

    def task_body(self, tid, state):
        body = {"@odata.id": ROOT + "/TaskService/Tasks/" + tid,
                "@odata.type": "#Task.v1_4_3.Task",
                "Id": tid, "Name": "Reset task " + tid,
                "TaskState": state,
                "TaskStatus": "Critical" if state == "Exception" else "OK",
                "PercentComplete": 50 if state == "Running" else 100}
        if state == "Exception":
            body["Messages"] = [{"MessageId": REGISTRY + ".InternalError",
                                 "Message": "The reset failed."}]
        return body

    def task_monitor(self, tid):
        """Each GET counts a poll; the K-th applies the reset and answers
        200 with the completed Task, as do the GETs after it (a task with
        the task-exception fault answers Exception and resets nothing)."""
        self.get_only()
        emu = self.emu
        with emu.lock:
            task = emu.tasks.get(tid)
            if task is None:
                raise HttpError(404, "ResourceMissingAtURI", "No such task",
                                [self.path])
            if not task["done"]:
                task["polls"] += 1
                if task["polls"] >= emu.opts.task_polls:
                    if not task.get("fails"):
                        emu.systems[task["system"]].reset(task["reset"])
                    task["done"] = True
            done = task["done"]
        if done:
            return self.reply(200, self.task_body(
                tid, "Exception" if task.get("fails") else "Completed"))
        self.reply(202, self.task_body(tid, "Running"),
                   {"Location": self.path, "Retry-After": "1"})

    def managers(self, rest):
        emu = self.emu
        mgr = ROOT + "/Managers/BMC"
        vm = mgr + "/VirtualMedia/Cd"
        if not rest:
            self.get_only()
            return self.reply(200, self.collection(
                "/Managers", "ManagerCollection", ["BMC"]))
        if rest[0] != "BMC":
            raise HttpError(404, "ResourceMissingAtURI", "No such manager",
                            [self.path])
        if len(rest) == 1:
            self.get_only()
            return self.reply(200, {
                "@odata.id": mgr, "@odata.type": "#Manager.v1_10_0.Manager",
                "Id": "BMC", "Name": "Emulated BMC", "ManagerType": "BMC",
                "Status": {"State": "Enabled", "Health": "OK"},
                "VirtualMedia": {"@odata.id": mgr + "/VirtualMedia"},
                "Links": {"ManagerForServers": [
                    {"@odata.id": s.uri()} for s in emu.systems.values()]}})
        if rest[1:] == ["VirtualMedia"]:
            self.get_only()
            return self.reply(200, self.collection(
                "/Managers/BMC/VirtualMedia", "VirtualMediaCollection",
                ["Cd"]))
        if rest[1:] == ["VirtualMedia", "Cd"]:
            self.get_only()
            with emu.lock:
                media = dict(emu.media)
            return self.reply(200, {
                "@odata.id": vm,
                "@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia",
                "Id": "Cd", "Name": "Virtual CD",
                "MediaTypes": ["CD", "DVD"],
                "Image": media["Image"], "Inserted": media["Inserted"],
                "WriteProtected": True,
                "ConnectedVia": "URI" if media["Inserted"] else "NotConnected",
                "Actions": {
                    "#VirtualMedia.InsertMedia": {
                        "target": vm + "/Actions/VirtualMedia.InsertMedia"},
                    "#VirtualMedia.EjectMedia": {
                        "target": vm + "/Actions/VirtualMedia.EjectMedia"}}})
        if rest[1:3] == ["VirtualMedia", "Cd"] and len(rest) == 5 and \
                rest[3] == "Actions":
            if self.command != "POST":
                self.not_allowed("POST")
            return self.media_action(rest[4])
        raise HttpError(404, "ResourceMissingAtURI", "Not found", [self.path])

    def media_action(self, action):
        body = self.read_json()
        emu = self.emu
        if action == "VirtualMedia.InsertMedia":
            image = body.get("Image")
            if not isinstance(image, str) or \
                    not image.startswith(("http://", "https://")):
                raise HttpError(400, "ActionParameterMissing",
                                "InsertMedia needs an http(s) Image",
                                ["VirtualMedia.InsertMedia", "Image"])
            with emu.lock:
                if emu.media["Inserted"]:
                    raise HttpError(400, "ActionNotSupported",
                                    "A medium is already inserted; eject "
                                    "it first", ["VirtualMedia.InsertMedia"])
                emu.media = {"Image": image, "Inserted": True}
            return self.reply(204)
        if action == "VirtualMedia.EjectMedia":
            with emu.lock:
                emu.media = {"Image": None, "Inserted": False}
            return self.reply(204)
        raise HttpError(404, "ResourceMissingAtURI", "No such action",
                        [self.path])

    def emu_state(self, path):
        """The tests' back door: read everything; PATCH a system's power;
        PATCH /emu/fault {"Mode": M, "Count": N}: the next N requests under
        /redfish get fault M (FAULTS) instead of their answer."""
        emu = self.emu
        if path == "/emu/state":
            self.get_only()
            with emu.lock:
                st = emu.state()
            return self.reply(200, st)
        if path == "/emu/state/fault" and self.command == "PATCH":
            body = self.read_json()
            mode, count = body.get("Mode"), body.get("Count", 1)
            if mode not in FAULTS or not isinstance(count, int) or \
                    not 0 <= count <= 1000:
                raise HttpError(400, "PropertyValueNotInList",
                                "Mode must be one of %s, Count 0..1000" %
                                ", ".join(FAULTS), ["Mode"])
            with emu.lock:
                emu.fault = {"Mode": mode, "Count": count}
            return self.reply(204)
        ident = path[len("/emu/state/systems/"):] \
            if path.startswith("/emu/state/systems/") else None
        if ident not in emu.systems or self.command != "PATCH":
            raise HttpError(404, "ResourceMissingAtURI", "Not found",
                            [self.path])
        power = self.read_json().get("PowerState")
        if power not in ("On", "Off"):
            raise HttpError(400, "PropertyValueNotInList",
                            "PowerState must be On or Off", ["PowerState"])
        with emu.lock:
            s = emu.systems[ident]
            s.refresh()
            if s.hook is not None and power != s.power:
                run_hook(s.hook, ["set", "power", "1" if power == "On"
                                  else "0"])
            s.power = power
            s.changed()    # no boot: the tests' own switch
        self.reply(204)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ssl_context = None

    def get_request(self):
        sock, addr = super().get_request()
        sock.settimeout(CONN_TIMEOUT)
        # Each answer at once, as a BMC's web server sends it (lighttpd,
        # nginx and the like set TCP_NODELAY): without it, an answer over
        # TLS 1.3 waits for the ACK of the session tickets' segment, which
        # the client delays 40 ms, and the wait is most of what a test or
        # a benchmark of many requests would measure.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is not None:
            # The handshake runs in the connection's thread (Handler.setup),
            # so a slow client does not hold up accept().
            sock = self.ssl_context.wrap_socket(
                sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        """A client that goes away or fails the TLS handshake is one line;
        anything else is a bug of the emulator: its traceback is logged
        (the test looks for it)."""
        err = sys.exc_info()[1]
        if isinstance(err, OSError):
            sys.stderr.write("redfish_emu: %s: %s\n" % (client_address[0],
                                                        err))
        else:
            traceback.print_exc(file=sys.stderr)


def parse_args(argv):
    p = argparse.ArgumentParser(description="A small Redfish service for "
                                "tests.")
    p.add_argument("--listen", default="127.0.0.1", help="address to bind")
    p.add_argument("--port", type=int, default=0,
                   help="TCP port; 0 (the default) picks a free one")
    p.add_argument("--port-file", help="write the bound port here once "
                   "listening")
    p.add_argument("--cert", help="TLS certificate (PEM); without it, "
                   "plain HTTP")
    p.add_argument("--key", help="TLS private key (PEM), if not in --cert")
    p.add_argument("--user", default="admin")
    p.add_argument("--password", default="password")
    p.add_argument("--systems", type=int, default=1,
                   help="number of ComputerSystems (1..1000)")
    p.add_argument("--bmcs", type=int, default=1,
                   help="number of independent BMCs, each on its own port "
                   "(--port P: P, P+1, ...; otherwise free ones), all in "
                   "--port-file, one a line (1..2000)")
    p.add_argument("--vendor", default="generic", choices=sorted(VENDORS))
    p.add_argument("--task-polls", type=int, default=0, metavar="K",
                   help="answer Reset with 202 and a task monitor that "
                   "completes at its K-th GET (0: answer 204 at once)")
    p.add_argument("--hook", metavar="PROG",
                   help="a command line (split as sh would): the system's "
                   "power and boot override drive a machine through it, "
                   "as ipmi_sim's chassis_control (needs --systems 1 and "
                   "--bmcs 1)")
    o = p.parse_args(argv)
    if o.hook is not None and (o.systems != 1 or o.bmcs != 1):
        p.error("--hook needs --systems 1 and --bmcs 1")
    if not 1 <= o.systems <= 1000:
        p.error("--systems must be 1..1000")
    if not 1 <= o.bmcs <= 2000:
        p.error("--bmcs must be 1..2000")
    if not 0 <= o.task_polls <= 1000:
        p.error("--task-polls must be 0..1000")
    return o


def accept_loop(servers, stop):
    """One thread accepts for every BMC (a thread and a poll timer per
    listener would not scale to a thousand); each connection then runs in
    its own thread."""
    sel = selectors.DefaultSelector()
    for httpd in servers:
        sel.register(httpd.socket, selectors.EVENT_READ, httpd)
    while not stop.is_set():
        for key, _ in sel.select(0.2):
            key.data._handle_request_noblock()
    sel.close()


def main(argv):
    opts = parse_args(argv)
    ctx = None
    if opts.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts.cert, opts.key)
    servers = []
    for i in range(opts.bmcs):
        # Each BMC has its own state, so its own handler class.
        handler = type("Handler%d" % i, (Handler,), {"emu": Emulator(opts)})
        port = opts.port + i if opts.port else 0
        httpd = Server((opts.listen, port), handler)
        httpd.ssl_context = ctx
        servers.append(httpd)
    ports = [httpd.server_address[1] for httpd in servers]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    t = threading.Thread(target=accept_loop, args=(servers, stop),
                         daemon=True)
    t.start()
    if opts.port_file:
        tmp = opts.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("".join("%d\n" % p for p in ports))
        os.rename(tmp, opts.port_file)
    sys.stderr.write("redfish_emu: %d BMC(s) listening on %s:%d%s (%s, %d "
                     "systems each, vendor %s)\n" % (
                         opts.bmcs, opts.listen, ports[0],
                         "" if len(ports) == 1 else "..%d" % ports[-1],
                         "https" if opts.cert else "http", opts.systems,
                         opts.vendor))
    while not stop.wait(1.0):
        pass
    # The accept loop notices within 0.2 s; connection threads are daemons
    # and end with the process.
    t.join(2.0)
    for httpd in servers:
        httpd.server_close()
    sys.stderr.write("redfish_emu: stopped\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
