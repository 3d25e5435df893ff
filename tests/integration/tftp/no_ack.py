#!/usr/bin/python3
"""no_ack — opens transfers and never acknowledges them, to see what the
server holds for each.

Reads the resident set (VmRSS, kB) of the server's process PID from
/proc, sends COUNT read requests for FILE in MODE (each from its own
port, no option), waits for the first DATA block of each (5 s at most:
the transfer has started by then, whatever the server allocates for it is
allocated), reads VmRSS again, and prints one JSON line: {"before": kB,
"during": kB, "hwm": VmHWM kB, "started": transfers that sent a block}.
The sockets are closed without an ACK. Every loop is bounded.
"""

import json
import socket
import struct
import sys
import time


def status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def main():
    if len(sys.argv) != 6:
        sys.stderr.write("usage: no_ack.py SERVER FILE MODE COUNT PID\n")
        return 2
    server, name, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    count, pid = int(sys.argv[4]), int(sys.argv[5])
    before = status(pid, "VmRSS")
    socks = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        s.sendto(struct.pack("!H", 1) + name.encode() + b"\0" + mode.encode() + b"\0",
                 (server, 69))
        socks.append(s)
    started = 0
    for s in socks:
        for _ in range(10):
            try:
                pkt, _addr = s.recvfrom(70000)
            except socket.timeout:
                break
            if len(pkt) >= 4 and struct.unpack("!H", pkt[:2])[0] == 3:
                started += 1
                break
    time.sleep(0.2)
    during = status(pid, "VmRSS")
    hwm = status(pid, "VmHWM")
    print(json.dumps({"before": before, "during": during, "hwm": hwm, "started": started}))
    for s in socks:
        s.close()
    return 0 if started == count else 1


if __name__ == "__main__":
    sys.exit(main())
