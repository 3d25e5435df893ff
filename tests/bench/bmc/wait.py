#!/usr/bin/python3
"""wait.py - waits, for the BMC benchmark, until ironbelld's Machines all
have a power state or its Jobs are all Completed, and says how long that
took.

    wait.py IRONBELL machines|jobs N START_NS TIMEOUT_S

It follows "IRONBELL watch machines|jobs -o json" (the admin socket from
$IRONBELL_SOCKET): the watch first sends every object there is, then
each change, so it may start before or after the objects are applied.
A Machine counts once its status.powerState is "on" or "off", a Job once
its condition Completed (or Failed) is "True", as Rufio sets them. A
watch, not a list every few milliseconds: a list of 1,100 Machines is
built whole in the daemon, and repeating it would be the daemon's work
and memory that the benchmark measures.
Prints one line and exits 0 when all N are there:
    done SECONDS
(SECONDS since START_NS, a time.time_ns() taken before the objects were
applied), or, after TIMEOUT_S or once every one is either there or
failed, exit 1 and:
    timeout|failed SECONDS ok=K failed=F of N
where failed counts Jobs Failed and Machines whose powerState is
"unknown"."""

import json
import os
import select
import subprocess
import sys
import time

MAX_LINE = 1 << 20


def state(kind, obj):
    """1 counted, -1 failed, 0 not yet."""
    st = obj.get("status") or {}
    if kind == "machines":
        p = st.get("powerState")
        return 1 if p in ("on", "off") else -1 if p == "unknown" else 0
    conds = {c.get("type"): c.get("status")
             for c in st.get("conditions") or [] if isinstance(c, dict)}
    if conds.get("Completed") == "True":
        return 1
    return -1 if conds.get("Failed") == "True" else 0


def main(argv):
    if len(argv) != 5 or argv[1] not in ("machines", "jobs"):
        sys.stderr.write(__doc__)
        return 64
    cli, kind, want, start_ns, timeout = argv[0], argv[1], int(argv[2]), \
        int(argv[3]), float(argv[4])
    deadline = time.monotonic() + timeout
    watch = subprocess.Popen([cli, "watch", kind, "-o", "json"],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    seen = {}
    buf = b""
    ok = failed = 0
    why = "timeout"
    try:
        while True:
            ok = sum(1 for v in seen.values() if v > 0)
            failed = sum(1 for v in seen.values() if v < 0)
            if ok >= want:
                print("done %.3f" % ((time.time_ns() - start_ns) / 1e9))
                return 0
            if ok + failed >= want:
                why = "failed"
                break
            left = deadline - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([watch.stdout], [], [], left)
            if not r:
                break
            chunk = os.read(watch.stdout.fileno(), 65536)
            if not chunk:
                why = "watch ended"
                break
            buf += chunk
            if len(buf) > MAX_LINE and b"\n" not in buf:
                why = "event too long"
                break
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    ev = json.loads(line)
                    obj = ev["object"]
                    key = (obj["metadata"].get("namespace"),
                           obj["metadata"]["name"])
                except (ValueError, KeyError, TypeError):
                    continue
                if ev.get("type") == "DELETED":
                    seen.pop(key, None)
                else:
                    seen[key] = state(kind, obj)
    finally:
        watch.kill()
        watch.wait()
    print("%s %.3f ok=%d failed=%d of %d" % (
        why, (time.time_ns() - start_ns) / 1e9, ok, failed, want))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
