#!/usr/bin/python3
"""wait.py - waits, for the BMC benchmark, until ironbelld's Machines all
have a power state or its Jobs are all Completed, and says how long that
took.

    wait.py IRONBELL machines|jobs N START_NS TIMEOUT_S

Every 50 ms it runs "IRONBELL get machines|jobs -o json" (the admin
socket from $IRONBELL_SOCKET) and counts: a Machine whose
status.powerState is "on" or "off"; a Job with the condition Completed
(or Failed) "True", as Rufio sets them. One process for the whole wait,
so that the waiting costs one CLI call per look and no interpreter start.
Prints one line and exits 0 when all N are there:
    done SECONDS
(SECONDS since START_NS, a time.time_ns() taken before the objects were
applied), or, after TIMEOUT_S or once every one is either there or
failed, exit 1 and:
    timeout|failed SECONDS ok=K failed=F of N
where failed counts Jobs Failed and Machines whose powerState is
"unknown"."""

import json
import subprocess
import sys
import time

INTERVAL = 0.05


def count(kind, items):
    ok = failed = 0
    for o in items:
        st = o.get("status") or {}
        if kind == "machines":
            p = st.get("powerState")
            ok += p in ("on", "off")
            failed += p == "unknown"
            continue
        conds = {c.get("type"): c.get("status")
                 for c in st.get("conditions") or [] if isinstance(c, dict)}
        ok += conds.get("Completed") == "True"
        failed += conds.get("Failed") == "True"
    return ok, failed


def main(argv):
    if len(argv) != 5 or argv[1] not in ("machines", "jobs"):
        sys.stderr.write(__doc__)
        return 64
    cli, kind, want, start_ns, timeout = argv[0], argv[1], int(argv[2]), \
        int(argv[3]), float(argv[4])
    deadline = time.monotonic() + timeout
    ok = failed = 0
    while True:
        r = subprocess.run([cli, "get", kind, "-o", "json"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=30)
        if r.returncode == 0:
            try:
                ok, failed = count(kind, json.loads(r.stdout).get("items")
                                   or [])
            except ValueError:
                pass
        secs = (time.time_ns() - start_ns) / 1e9
        if ok >= want:
            print("done %.3f" % secs)
            return 0
        if time.monotonic() > deadline or ok + failed >= want:
            print("%s %.3f ok=%d failed=%d of %d" % (
                "failed" if ok + failed >= want else "timeout", secs, ok,
                failed, want))
            return 1
        time.sleep(INTERVAL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
