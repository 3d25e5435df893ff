#!/usr/bin/python3
"""kbench.py - the Kubernetes-mode benchmark's client side (run.sh drives
it): the objects seeded into the API-server emulator, the wait for
ironbelld's readiness, the churn followed through ironbelld's own admin
API, and the report. Standard library only; it runs under /usr/bin/python3.

  seed    builds the objects (realistic ones: Hardware of one or two
          interfaces with DHCP, netboot and metadata.instance; Templates
          of a disk-image install; Workflows with the status of a running
          workflow in the monorepo's shape; Machines and their Secrets) and
          stores them in the emulator with POST /_emu/put, in batches
  ready   polls ironbelld's /readyz on the admin socket every 10 ms from
          the exec time it is given until 200; then the daemon's VmHWM and
          VmRSS, its CPU and the emulator's over the sync
  follow  opens a watch of Hardware on ironbelld's admin API from the
          store's current resourceVersion, starts the emulator's churn
          (each change stamps the annotation ironbell.test/churn with
          "SEQ UNIX_NS") and reads every event as it comes: receive time -
          UNIX_NS per change; the CPU of the emulator, of ironbelld and of
          itself over the churn; ironbell_kube_event_lag_seconds and
          ironbell_store_write_seconds before and after
  emuwatch  the same churn watched on the emulator itself, with the
          client certificate: the floor under the daemon's figures
  report  the table, and the same as JSON

Every wait is bounded; a figure that could not be measured is null."""

import argparse
import base64
import http.client
import json
import os
import re
import select
import socket
import ssl
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
NS = "default"
CHURN_KEY = "ironbell.test/churn"
LAG_METRIC = "ironbell_kube_event_lag_seconds"
WRITE_METRIC = "ironbell_store_write_seconds"
BATCH = 500                 # objects per /_emu/put
RECV = 1 << 20              # bytes one recv() of the watch may take
MAX_HEAD = 64 * 1024        # bytes of a response head read at most

# ---- small helpers ----


def cpu_ticks(pid):
    """utime + stime of a process (its threads included), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def proc_status(pid, key):
    """A /proc/PID/status field in kB (VmHWM, VmRSS), or None."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return None


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(t_ms, n):
    """A ULID-shaped ID (26 Crockford base32 characters): the time, then a
    number standing for the randomness, so the objects are reproducible."""
    v = (t_ms << 80) | (n * 0x9E3779B97F4A7C15 & ((1 << 80) - 1))
    out = []
    for _ in range(26):
        out.append(ULID_CHARS[v & 31])
        v >>= 5
    return "".join(reversed(out))


class UnixHTTP(http.client.HTTPConnection):
    """HTTP on ironbelld's admin socket."""

    def __init__(self, path, timeout=10):
        super().__init__("localhost", timeout=timeout)
        self.upath = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.upath)
        self.sock = s


def admin_get(sock, path, timeout=10):
    """(status, body bytes) of a GET on the admin socket."""
    c = UnixHTTP(sock, timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def emu_conn(url, ca, timeout=60):
    u = url.split("://", 1)[1]
    host, port = u.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=ca)
    return http.client.HTTPSConnection(host, int(port), context=ctx,
                                       timeout=timeout)


def emu_post(conn, name, body):
    data = json.dumps(body).encode()
    conn.request("POST", "/_emu/" + name, body=data,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    out = r.read()
    if r.status != 200:
        raise RuntimeError("/_emu/%s: %d %s" % (name, r.status, out[:300]))
    return json.loads(out)


def metrics_hist(sock, name, kind):
    """The histogram NAME{kind=KIND} of /metrics: ([(le, cumulative)],
    count, sum), or None."""
    try:
        code, body = admin_get(sock, "/metrics")
    except OSError:
        return None
    if code != 200:
        return None
    buckets, count, total = [], None, None
    kl = 'kind="%s"' % kind if kind else ""
    for line in body.decode("utf-8", "replace").splitlines():
        if not line.startswith(name) or kl not in line:
            continue
        try:
            val = float(line.rsplit(" ", 1)[1])
        except (ValueError, IndexError):
            continue
        if line.startswith(name + "_bucket"):
            m = re.search(r'le="([^"]*)"', line)
            if m:
                le = float("inf") if m.group(1) == "+Inf" else float(m.group(1))
                buckets.append((le, val))
        elif line.startswith(name + "_count"):
            count = val
        elif line.startswith(name + "_sum"):
            total = val
    if not buckets or count is None:
        return None
    buckets.sort()
    return buckets, count, total


def metric_value(sock, line_prefix):
    try:
        code, body = admin_get(sock, "/metrics")
    except OSError:
        return None
    for line in body.decode("utf-8", "replace").splitlines():
        if line.startswith(line_prefix + " "):
            try:
                return float(line.split()[-1])
            except ValueError:
                return None
    return None


def hist_quantile_bucket(before, after, q):
    """The upper bound of the bucket that holds quantile q of the
    observations made between the two snapshots, and their count."""
    if before is None or after is None:
        return None, None
    b = dict(before[0])
    diff = [(le, c - b.get(le, 0)) for le, c in after[0]]
    n = after[1] - before[1]
    if n <= 0:
        return None, 0
    for le, c in diff:
        if c >= q * n:
            return le, int(n)
    return float("inf"), int(n)


def pct(sorted_vals, q):
    if not sorted_vals:
        return None
    i = min(len(sorted_vals) - 1, max(0, int(round(q * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[i]


# ---- the objects ----

OS_LIST = [("ubuntu_22_04", "ubuntu", "22.04"), ("ubuntu_24_04", "ubuntu", "24.04"),
           ("debian_12", "debian", "12"), ("rocky_9", "rocky", "9.4")]


def mac(i, port):
    return "02:%02x:%02x:%02x:%02x:%02x" % (port, (i >> 24) & 255, (i >> 16) & 255,
                                           (i >> 8) & 255, i & 255)


def ip(i, net):
    return "10.%d.%d.%d" % (net + i // 62500, (i // 250) % 250, i % 250 + 1)


def hardware(i, machines):
    name = "node-%06d" % i
    rack = "r%02d" % (i % 48)
    os_slug, distro, ver = OS_LIST[i % len(OS_LIST)]
    addr, gw = ip(i, 10), "10.%d.0.1" % (10 + i // 62500)
    ifaces = [{
        "dhcp": {"mac": mac(i, 0), "hostname": name, "arch": "x86_64",
                 "uefi": True, "lease_time": 86400,
                 "name_servers": ["10.0.0.53", "10.0.1.53"],
                 "time_servers": ["10.0.0.123"],
                 "ip": {"address": addr, "netmask": "255.255.0.0",
                        "gateway": gw, "family": 4}},
        "netboot": {"allowPXE": True, "allowWorkflow": True}}]
    if i % 2:
        ifaces.append({
            "dhcp": {"mac": mac(i, 1), "hostname": name + "-data",
                     "arch": "x86_64", "uefi": True, "lease_time": 86400,
                     "ip": {"address": ip(i, 100), "netmask": "255.255.0.0",
                            "family": 4},
                     "vlan_id": "120"},
            "netboot": {"allowPXE": False, "allowWorkflow": False}})
    spec = {
        "agentID": mac(i, 0),
        "interfaces": ifaces,
        "disks": [{"device": "/dev/nvme0n1"}],
        "metadata": {
            "state": "provisioning",
            "facility": {"facility_code": "onprem-%s" % rack,
                         "plan_slug": "c3.small.x86"},
            "instance": {
                "id": "%08x-%04x-4000-8000-%012x" % (i, i % 65536, i),
                "hostname": name, "state": "provisioning",
                "allow_pxe": True, "always_pxe": False,
                "operating_system": {"slug": os_slug, "distro": distro,
                                     "version": ver},
                "ips": [{"address": addr, "netmask": "255.255.0.0",
                         "gateway": gw, "family": 4, "public": False,
                         "management": True}],
                "tags": ["k8s", "worker", rack],
                "ssh_keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s"
                             "ops@example.com" % ("%032x" % (i * 2654435761))],
            },
        },
    }
    if i < machines:
        spec["bmcRef"] = {"apiGroup": "bmc.tinkerbell.org", "kind": "Machine",
                          "name": "bmc-%s" % name}
    return {"apiVersion": "tinkerbell.org/v1alpha1", "kind": "Hardware",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"rack": rack,
                                    "tinkerbell.org/role": "worker",
                                    "clusterctl.cluster.x-k8s.io/move": ""},
                         "annotations": {"ops.example.com/owner": "team-%d" % (i % 7)}},
            "spec": spec}


ACTIONS = [
    ("stream-image", "quay.io/tinkerbell/actions/image2disk:latest", 600,
     {"DEST_DISK": "/dev/nvme0n1", "IMG_URL": "http://10.0.0.5:8080/%s.raw.gz",
      "COMPRESSED": "true"}),
    ("grow-partition", "quay.io/tinkerbell/actions/cexec:latest", 90,
     {"BLOCK_DEVICE": "/dev/nvme0n1p1", "FS_TYPE": "ext4", "CHROOT": "y",
      "CMD_LINE": "growpart /dev/nvme0n1 1 && resize2fs /dev/nvme0n1p1"}),
    ("write-netplan", "quay.io/tinkerbell/actions/writefile:latest", 90,
     {"DEST_DISK": "/dev/nvme0n1p1", "FS_TYPE": "ext4",
      "DEST_PATH": "/etc/netplan/config.yaml", "UID": "0", "GID": "0",
      "MODE": "0644", "DIRMODE": "0755"}),
    ("add-cloud-init-config", "quay.io/tinkerbell/actions/writefile:latest", 90,
     {"DEST_DISK": "/dev/nvme0n1p1", "FS_TYPE": "ext4",
      "DEST_PATH": "/etc/cloud/cloud.cfg.d/10_tinkerbell.cfg", "MODE": "0600"}),
    ("kexec", "quay.io/tinkerbell/actions/kexec:latest", 90,
     {"BLOCK_DEVICE": "/dev/nvme0n1p1", "FS_TYPE": "ext4"}),
    ("reboot", "ghcr.io/jacobweinstock/waitdaemon:latest", 90,
     {"IMAGE": "alpine", "WAIT_SECONDS": "10"}),
]


def template(t, nactions):
    lines = ["version: \"0.1\"", "name: install-%d" % t, "global_timeout: 1800",
             "tasks:", "  - name: os-installation",
             "    worker: \"{{.device_1}}\"", "    volumes:",
             "      - /dev:/dev", "      - /dev/console:/dev/console",
             "      - /lib/firmware:/lib/firmware:ro", "    actions:"]
    for name, image, timeout, env in ACTIONS[:nactions]:
        lines += ["      - name: %s" % name, "        image: %s" % image,
                  "        timeout: %d" % timeout, "        environment:"]
        lines += ["          %s: \"%s\"" % (k, v.replace("%s", "os-%d" % t))
                  for k, v in env.items()]
    return {"apiVersion": "tinkerbell.org/v1alpha1", "kind": "Template",
            "metadata": {"name": "install-%d" % t, "namespace": NS},
            "spec": {"data": "\n".join(lines) + "\n"}}


def workflow(i, templates, now):
    name = "node-%06d" % i
    t = i % templates
    nactions = 4 + t % 3                       # 4, 5 or 6 actions
    running = 1 + i % (nactions - 1)           # the action running now
    agent = mac(i, 0)
    start = now - 600 + i % 300
    tms = int(start * 1000)
    task_id = ulid(tms, 7 * i)
    actions = []
    at = start
    for a, (aname, image, timeout, env) in enumerate(ACTIONS[:nactions]):
        act = {"id": ulid(tms, 7 * i + a + 1), "name": aname, "image": image,
               "timeout": timeout,
               "environment": {k: v.replace("%s", "os-%d" % t) for k, v in env.items()},
               "state": "PENDING"}
        if a < running:
            dur = 12 + (i + a) % 50
            act.update(state="SUCCESS", executionStart=rfc3339(at),
                       executionStop=rfc3339(at + dur),
                       executionDuration="%dm%ds" % (dur // 60, dur % 60) if dur >= 60
                       else "%ds" % dur,
                       message="finished successfully")
            at += dur
        elif a == running:
            act.update(state="RUNNING", executionStart=rfc3339(at))
        actions.append(act)
    cur = actions[running]
    cond_t = rfc3339(start - 30)
    status = {
        "state": "RUNNING", "agentID": agent, "templateRendering": "successful",
        "globalTimeout": 1800, "globalExecutionStop": rfc3339(start + 1800),
        "currentState": {"agentID": agent, "taskID": task_id,
                         "actionID": cur["id"], "state": "RUNNING",
                         "actionName": cur["name"], "taskName": "os-installation"},
        "bootOptions": {"allowNetboot": {"toggledTrue": True},
                        "jobs": {"netboot-%s" % name: {
                            "uid": "%08x-0000-4000-8000-%012x" % (i, i),
                            "complete": True, "existingJobDeleted": True}}},
        "conditions": [
            {"type": "TemplateRenderedSuccess", "status": "True",
             "reason": "Complete", "message": "template rendered successfully",
             "time": cond_t},
            {"type": "AllowNetbootTrue", "status": "True", "reason": "Complete",
             "message": "set allowPXE to true", "time": cond_t},
            {"type": "BootJobComplete", "status": "True", "reason": "Complete",
             "message": "netboot job completed", "time": rfc3339(start - 5)}],
        "tasks": [{"id": task_id, "name": "os-installation", "agentID": agent,
                   "volumes": ["/dev:/dev", "/dev/console:/dev/console",
                               "/lib/firmware:/lib/firmware:ro"],
                   "environment": {}, "actions": actions}],
    }
    return {"apiVersion": "tinkerbell.org/v1alpha1", "kind": "Workflow",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"cluster.x-k8s.io/cluster-name": "prod-%d" % (i % 5)}},
            "spec": {"templateRef": "install-%d" % t, "hardwareRef": name,
                     "hardwareMap": {"device_1": agent},
                     "bootOptions": {"toggleAllowNetboot": True, "bootMode": "netboot"}},
            "status": status}


def machine(i):
    name = "bmc-node-%06d" % i
    return {"apiVersion": "bmc.tinkerbell.org/v1alpha1", "kind": "Machine",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"connection": {"host": "10.200.%d.%d" % (i // 250, i % 250 + 1),
                                    "port": 623, "insecureTLS": True,
                                    "authSecretRef": {"name": name, "namespace": NS},
                                    "providerOptions": {"preferredOrder": ["gofish", "ipmitool"]}}}}


def secret(i):
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "bmc-node-%06d" % i, "namespace": NS},
            "data": {"username": base64.b64encode(b"admin").decode(),
                     "password": base64.b64encode(b"pw-%06d" % i).decode()}}


def cmd_seed(o):
    now = time.time()
    sets = [("templates", [template(t, 4 + t % 3) for t in range(o.templates)]),
            ("secrets", [secret(i) for i in range(o.machines)]),
            ("machines", [machine(i) for i in range(o.machines)]),
            ("hardware", [hardware(i, o.machines) for i in range(o.hardware)]),
            ("workflows", [workflow(i, o.templates, now) for i in range(o.workflows)])]
    out = {"objects": {}, "bytes_mean": {}}
    t0 = time.monotonic()
    conn = emu_conn(o.url, o.ca)
    for res, objs in sets:
        out["objects"][res] = len(objs)
        if objs:
            out["bytes_mean"][res] = round(sum(len(json.dumps(x)) for x in objs) / len(objs))
        for k in range(0, len(objs), BATCH):
            got = emu_post(conn, "put", {"resource": res, "objects": objs[k:k + BATCH]})
            if got.get("count") != len(objs[k:k + BATCH]):
                raise RuntimeError("put %s: %r" % (res, got))
    conn.close()
    out["seconds"] = round(time.monotonic() - t0, 2)
    with open(o.out, "w") as f:
        json.dump(out, f)
    return 0


# ---- readiness ----

def cmd_ready(o):
    out = {"ready": False}
    deadline = time.monotonic() + o.timeout
    last = ""
    while time.monotonic() < deadline:
        if cpu_ticks(o.pid) is None:
            out["error"] = "ironbelld exited"
            break
        try:
            code, body = admin_get(o.sock, "/readyz", timeout=2)
        except OSError as e:
            code, body = 0, str(e).encode()
        if code == 200:
            t = time.time_ns()
            out.update(ready=True, ready_s=round((t - o.t0_ns) / 1e9, 3))
            break
        last = body.decode("utf-8", "replace")
        time.sleep(0.01)
    else:
        out["error"] = "not ready after %d s: %s" % (o.timeout, last.strip()[-400:])
    d, e = cpu_ticks(o.pid), cpu_ticks(o.emu_pid)
    out["daemon_cpu_s"] = round(d / HZ, 2) if d is not None else None
    out["emu_cpu_s"] = round((e - o.emu_ticks0) / HZ, 2) if e is not None else None
    out["vmhwm_kib"] = proc_status(o.pid, "VmHWM")
    out["vmrss_kib"] = proc_status(o.pid, "VmRSS")
    if out["ready"]:
        for kind in ("Hardware", "Workflow", "Template", "Machine", "Secret"):
            out.setdefault("listed", {})[kind] = metric_value(
                o.sock, 'ironbell_kube_listed_objects{kind="%s"}' % kind)
        # What the daemon holds once the work that follows the sync (its
        # writer reading the change log, the caches) is done.
        time.sleep(o.settle)
        out["settled_s"] = o.settle
        out["vmrss_settled_kib"] = proc_status(o.pid, "VmRSS")
        out["vmhwm_settled_kib"] = proc_status(o.pid, "VmHWM")
        d2 = cpu_ticks(o.pid)
        out["daemon_cpu_settled_s"] = round(d2 / HZ, 2) if d2 is not None else None
    with open(o.out, "w") as f:
        json.dump(out, f)
    return 0 if out["ready"] else 1


# ---- the churn, followed ----

class Stream:
    """A chunked HTTP response read from a socket, line by line, each line
    with the time its last byte was received."""

    def __init__(self, sock):
        self.sock = sock
        self.raw = b""
        self.line = b""
        self.ended = False

    def head(self, deadline):
        while b"\r\n\r\n" not in self.raw:
            if len(self.raw) > MAX_HEAD or not self._recv(deadline):
                raise RuntimeError("no response head")
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        code = int(lines[0].split()[1])
        hdrs = {k.strip().lower(): v.strip() for k, v in
                (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
        return code, hdrs

    def _recv(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        pending = self.sock.pending() if isinstance(self.sock, ssl.SSLSocket) else 0
        if not pending:
            r, _, _ = select.select([self.sock], [], [], min(left, 0.5))
            if not r:
                return True
        try:
            data = self.sock.recv(RECV)
        except (ssl.SSLWantReadError, BlockingIOError):
            return True
        if not data:
            self.ended = True
            return False
        self.raw += data
        return True

    def lines(self, deadline):
        """Yields (line, receive time ns) until the deadline or the end."""
        while not self.ended and time.monotonic() < deadline:
            before = len(self.raw)
            if not self._recv(deadline):
                break
            if len(self.raw) == before:
                yield None, None       # a quiet half second: let the caller look
                continue
            t = time.time_ns()
            for ln in self._decode():
                yield ln, t

    def _decode(self):
        out = []
        while True:
            i = self.raw.find(b"\r\n")
            if i < 0:
                break
            size = int(self.raw[:i].split(b";")[0], 16)
            if size == 0:
                self.ended = True
                break
            if len(self.raw) < i + 2 + size + 2:
                break
            self.line += self.raw[i + 2:i + 2 + size]
            self.raw = self.raw[i + 2 + size + 2:]
            while b"\n" in self.line:
                ln, self.line = self.line.split(b"\n", 1)
                out.append(ln)
        return out


MARK = re.compile(rb'"ironbell\.test/churn": ?"(\d+) (\d+)"')


def cmd_follow(o):
    out = {"sent": o.count, "rate_asked": o.rate}
    code, body = admin_get(o.sock, "/apis/tinkerbell.org/v1alpha1/templates")
    rv = json.loads(body)["metadata"]["resourceVersion"]
    lag_before = metrics_hist(o.sock, LAG_METRIC, "Hardware")
    wr_before = metrics_hist(o.sock, WRITE_METRIC, None)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(o.sock)
    s.sendall(("GET /apis/tinkerbell.org/v1alpha1/hardware?watch=1&resourceVersion=%s "
               "HTTP/1.1\r\nHost: localhost\r\n\r\n" % rv).encode())
    st = Stream(s)
    code, hdrs = st.head(time.monotonic() + 10)
    if code != 200 or "chunked" not in hdrs.get("transfer-encoding", ""):
        raise RuntimeError("the watch answered %d %r" % (code, hdrs))
    emu = emu_conn(o.url, o.ca)
    e0, d0, me0 = cpu_ticks(o.emu_pid), cpu_ticks(o.pid), time.process_time()
    w0 = time.monotonic()
    emu_post(emu, "churn", {"resource": "hardware", "count": o.count, "rate": o.rate})
    emu.close()
    seen = bytearray(o.count)
    series = [] if o.series else None
    nseen = dups = other = 0
    lags = []
    first_mark = last_mark = None
    last_rx = None
    deadline = w0 + o.count / o.rate + o.timeout
    for ln, t in st.lines(deadline):
        if ln is None:
            continue
        m = MARK.search(ln)
        if not m:
            other += 1
            continue
        seq, ns = int(m.group(1)), int(m.group(2))
        if seq >= o.count:
            other += 1
            continue
        if seen[seq]:
            dups += 1
            continue
        seen[seq] = 1
        nseen += 1
        lags.append((t - ns) / 1e6)
        if series is not None:
            series.append("%d %d %.3f\n" % (seq, ns, (t - ns) / 1e6))
        last_rx = time.monotonic()
        if seq == 0:
            first_mark = ns
        if seq == o.count - 1:
            last_mark = ns
        if nseen == o.count:
            break
    wall = (last_rx or time.monotonic()) - w0
    e1, d1, me1 = cpu_ticks(o.emu_pid), cpu_ticks(o.pid), time.process_time()
    s.close()
    # Give the daemon's histogram the commits the events above came from.
    lag_after = metrics_hist(o.sock, LAG_METRIC, "Hardware")
    wr_after = metrics_hist(o.sock, WRITE_METRIC, None)
    if series is not None:
        with open(o.series, "w") as f:
            f.write("# seq change_unix_ns latency_ms\n")
            f.writelines(series)
    lags.sort()
    missing = [i for i in range(o.count) if not seen[i]]
    out.update(seen=nseen, missing=len(missing), missing_first=missing[:10],
               duplicates=dups, other_lines=other,
               stream_ended=st.ended, wall_s=round(wall, 2))
    if lags:
        out["lag_ms"] = {k: round(pct(lags, q), 2) for k, q in
                         (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))}
        out["lag_ms"]["mean"] = round(sum(lags) / len(lags), 2)
    if first_mark is not None and last_mark is not None and last_mark > first_mark:
        out["rate_achieved"] = round((o.count - 1) * 1e9 / (last_mark - first_mark), 1)
    else:
        out["rate_achieved"] = None
    if e0 is not None and e1 is not None and wall > 0:
        out["emu_cpu_s"] = round((e1 - e0) / HZ, 2)
        out["emu_core_share"] = round((e1 - e0) / HZ / wall, 3)
    if d0 is not None and d1 is not None and wall > 0:
        out["daemon_cpu_s"] = round((d1 - d0) / HZ, 2)
        out["daemon_core_share"] = round((d1 - d0) / HZ / wall, 3)
    out["follower_cpu_s"] = round(me1 - me0, 2)
    out["follower_core_share"] = round((me1 - me0) / wall, 3) if wall > 0 else None
    for q, key in ((0.5, "p50"), (0.99, "p99")):
        le, n = hist_quantile_bucket(lag_before, lag_after, q)
        out.setdefault("daemon_lag_bucket_s", {})[key] = le if le != float("inf") else "+Inf"
        out["daemon_lag_events"] = n
    if lag_before and lag_after and lag_after[2] is not None and \
            lag_after[1] > lag_before[1]:
        out["daemon_lag_mean_ms"] = round((lag_after[2] - lag_before[2]) * 1e3 /
                                          (lag_after[1] - lag_before[1]), 3)
    # The store's transactions over the churn: how many, and how long from
    # BEGIN to COMMIT (the disk's flush included).
    for q, key in ((0.5, "p50"), (0.99, "p99")):
        le, n = hist_quantile_bucket(wr_before, wr_after, q)
        out.setdefault("store_commit_bucket_s", {})[key] = le if le != float("inf") else "+Inf"
        out["store_commits"] = n
    if wr_before and wr_after and wr_after[1] > wr_before[1]:
        out["store_commit_mean_ms"] = round((wr_after[2] - wr_before[2]) * 1e3 /
                                            (wr_after[1] - wr_before[1]), 3)
    out["vmhwm_kib"] = proc_status(o.pid, "VmHWM")
    out["vmrss_kib"] = proc_status(o.pid, "VmRSS")
    with open(o.out, "w") as f:
        json.dump(out, f)
    return 0


def lag_figures(out, lags, seen_n, count):
    lags.sort()
    out["seen"] = seen_n
    out["missing"] = count - seen_n
    if lags:
        out["lag_ms"] = {k: round(pct(lags, q), 2) for k, q in
                         (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))}


def cmd_emuwatch(o):
    """The same churn watched on the emulator itself (TLS, the client
    certificate): how late the emulator hands its changes to a client,
    the floor under the daemon's figures."""
    out = {}
    u = o.url.split("://", 1)[1]
    host, port = u.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=o.ca)
    ctx.load_cert_chain(o.cert, o.key)
    s = ctx.wrap_socket(socket.create_connection((host, int(port)), timeout=10),
                        server_hostname=host)
    s.sendall(("GET /apis/tinkerbell.org/v1alpha1/hardware?watch=1&resourceVersion=%s"
               "&timeoutSeconds=%d HTTP/1.1\r\nHost: %s\r\n\r\n"
               % (o.rv, o.timeout + int(o.count / o.rate) + 10, u)).encode())
    s.setblocking(False)
    st = Stream(s)
    deadline = time.monotonic() + o.timeout + o.count / o.rate
    code, _ = st.head(deadline)
    with open(o.out + ".started", "w") as f:
        f.write("%d\n" % code)
    seen = bytearray(o.count)
    n = 0
    lags = []
    for ln, t in st.lines(deadline):
        if ln is None:
            continue
        m = MARK.search(ln)
        if not m or int(m.group(1)) >= o.count or seen[int(m.group(1))]:
            continue
        seen[int(m.group(1))] = 1
        n += 1
        lags.append((t - int(m.group(2))) / 1e6)
        if n == o.count:
            break
    s.close()
    lag_figures(out, lags, n, o.count)
    with open(o.out, "w") as f:
        json.dump(out, f)
    return 0


# ---- the report ----

def fmt(v, unit=""):
    if v is None:
        return "n/a"
    return "%s%s" % (v, unit)


def mib(kib):
    return None if kib is None else round(kib / 1024, 1)


def cmd_report(o):
    def load(p):
        try:
            with open(p) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}
    seed, sync, churn = load(o.seed), load(o.sync), load(o.churn)
    direct = load(o.direct) if o.direct else {}
    churn["emulator_direct"] = direct
    res = {"benchmark": "kube", "qps": o.qps, "machine": {"cpus": os.cpu_count(),
                                            "load_before": o.load_before,
                                            "load_after": loadavg()},
           "seed": seed, "sync": sync, "churn": churn,
           "targets": {"ready_s": 10, "rss_mib": 96, "lag_p99_ms": 50}}
    ob = seed.get("objects", {})
    rows = []
    rows.append(("objects seeded", "%s Hardware (%s B), %s Workflows (%s B), %s Templates, "
                 "%s Machines" % (ob.get("hardware"), seed.get("bytes_mean", {}).get("hardware"),
                                  ob.get("workflows"), seed.get("bytes_mean", {}).get("workflows"),
                                  ob.get("templates"), ob.get("machines")), ""))
    rows.append(("time to ready", fmt(sync.get("ready_s"), " s"), "< 10 s"))
    rows.append(("RSS at ready / VmHWM", "%s / %s MiB" % (fmt(mib(sync.get("vmrss_kib"))),
                                                        fmt(mib(sync.get("vmhwm_kib")))),
                 "< 96 MiB"))
    rows.append(("RSS %s s later / VmHWM" % fmt(sync.get("settled_s")),
                 "%s / %s MiB" % (fmt(mib(sync.get("vmrss_settled_kib"))),
                                  fmt(mib(sync.get("vmhwm_settled_kib")))), ""))
    rows.append(("CPU over the sync", "ironbelld %s s, emulator %s s" % (
        fmt(sync.get("daemon_cpu_s")), fmt(sync.get("emu_cpu_s"))), ""))
    lag = churn.get("lag_ms", {})
    rows.append(("churn", "%s sent at %s/s asked, %s/s achieved" % (
        fmt(churn.get("sent")), fmt(churn.get("rate_asked")),
        fmt(churn.get("rate_achieved"))), ""))
    rows.append(("  seen in the store", "%s (missing %s, duplicates %s)" % (
        fmt(churn.get("seen")), fmt(churn.get("missing")), fmt(churn.get("duplicates"))),
                 "all"))
    rows.append(("  change-to-store p50/p90/p99/max", "%s / %s / %s / %s ms" % (
        fmt(lag.get("p50")), fmt(lag.get("p90")), fmt(lag.get("p99")), fmt(lag.get("max"))),
                 "p99 < 50 ms"))
    dl = direct.get("lag_ms", {})
    rows.append(("  change-to-client, emulator direct", "%s / %s / %s / %s ms (seen %s)" % (
        fmt(dl.get("p50")), fmt(dl.get("p90")), fmt(dl.get("p99")), fmt(dl.get("max")),
        fmt(direct.get("seen"))), ""))
    b = churn.get("daemon_lag_bucket_s", {})
    rows.append(("  arrival-to-commit (daemon)", "p50 <= %s s, p99 <= %s s, mean %s ms (%s events)" % (
        fmt(b.get("p50")), fmt(b.get("p99")), fmt(churn.get("daemon_lag_mean_ms")),
        fmt(churn.get("daemon_lag_events"))), ""))
    sc = churn.get("store_commit_bucket_s", {})
    per = None
    if churn.get("store_commits") and churn.get("seen"):
        per = round(churn["seen"] / churn["store_commits"], 2)
    rows.append(("  store commits (all writers)", "%s (%s changes each), p50 <= %s s, p99 <= %s s, "
                 "mean %s ms" % (
        fmt(churn.get("store_commits")), fmt(per), fmt(sc.get("p50")), fmt(sc.get("p99")),
        fmt(churn.get("store_commit_mean_ms"))), ""))
    rows.append(("  CPU over the churn", "ironbelld %s s (%s core), emulator %s s (%s), "
                 "follower %s s (%s)" % (
                     fmt(churn.get("daemon_cpu_s")), fmt(churn.get("daemon_core_share")),
                     fmt(churn.get("emu_cpu_s")), fmt(churn.get("emu_core_share")),
                     fmt(churn.get("follower_cpu_s")), fmt(churn.get("follower_core_share"))),
                 ""))
    rows.append(("  RSS after / VmHWM", "%s / %s MiB" % (fmt(mib(churn.get("vmrss_kib"))),
                                                       fmt(mib(churn.get("vmhwm_kib")))), ""))
    notes = []
    if (churn.get("emu_core_share") or 0) > 0.85:
        notes.append("the emulator used most of a core during the churn: its rate and "
                     "latency bound what is measured")
    if (churn.get("follower_core_share") or 0) > 0.85:
        notes.append("the follower used most of a core during the churn")
    ra = churn.get("rate_achieved")
    if ra is not None and ra < 0.95 * churn.get("rate_asked", 0):
        notes.append("the emulator did not sustain the rate asked")
    if churn.get("missing"):
        notes.append("%d changes never reached the store (first: %s)" % (
            churn["missing"], churn.get("missing_first")))
    if sync.get("error"):
        notes.append("sync: " + sync["error"])
    res["notes"] = notes
    w = max(len(r[0]) for r in rows)
    print("== kube benchmark (kube.qps/burst %s; load %s -> %s, %s CPUs)" % (
        o.qps, o.load_before, res["machine"]["load_after"], res["machine"]["cpus"]))
    for name, val, target in rows:
        print("%-*s  %s%s" % (w, name, val, ("   [target %s]" % target) if target else ""))
    for n in notes:
        print("NOTE: " + n)
    with open(o.out, "w") as f:
        json.dump(res, f, indent=1)
    print("(JSON: %s)" % o.out)
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("seed")
    s.add_argument("--url", required=True)
    s.add_argument("--ca", required=True)
    s.add_argument("--hardware", type=int, default=10000)
    s.add_argument("--workflows", type=int, default=10000)
    s.add_argument("--templates", type=int, default=12)
    s.add_argument("--machines", type=int, default=5)
    s.add_argument("--out", required=True)
    r = sub.add_parser("ready")
    r.add_argument("--sock", required=True)
    r.add_argument("--pid", type=int, required=True)
    r.add_argument("--emu-pid", type=int, required=True)
    r.add_argument("--emu-ticks0", type=int, required=True)
    r.add_argument("--t0-ns", type=int, required=True)
    r.add_argument("--timeout", type=int, default=120)
    r.add_argument("--settle", type=float, default=3.0)
    r.add_argument("--out", required=True)
    f = sub.add_parser("follow")
    f.add_argument("--sock", required=True)
    f.add_argument("--url", required=True)
    f.add_argument("--ca", required=True)
    f.add_argument("--pid", type=int, required=True)
    f.add_argument("--emu-pid", type=int, required=True)
    f.add_argument("--count", type=int, default=30000)
    f.add_argument("--rate", type=float, default=1000)
    f.add_argument("--timeout", type=int, default=60)
    f.add_argument("--series", help="each change's latency, one a line")
    f.add_argument("--out", required=True)
    e = sub.add_parser("emuwatch")
    e.add_argument("--url", required=True)
    e.add_argument("--ca", required=True)
    e.add_argument("--cert", required=True)
    e.add_argument("--key", required=True)
    e.add_argument("--rv", required=True)
    e.add_argument("--count", type=int, default=30000)
    e.add_argument("--rate", type=float, default=1000)
    e.add_argument("--timeout", type=int, default=60)
    e.add_argument("--out", required=True)
    t = sub.add_parser("report")
    t.add_argument("--seed", required=True)
    t.add_argument("--sync", required=True)
    t.add_argument("--churn", required=True)
    t.add_argument("--load-before")
    t.add_argument("--direct")
    t.add_argument("--qps", default="default")
    t.add_argument("--out", required=True)
    o = p.parse_args(argv)
    return {"seed": cmd_seed, "ready": cmd_ready, "follow": cmd_follow,
            "report": cmd_report, "emuwatch": cmd_emuwatch}[o.cmd](o)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
