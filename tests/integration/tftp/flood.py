#!/usr/bin/python3
"""flood — a burst of TFTP requests that the server must refuse.

Sends N requests to SERVER (port 69) from one UDP socket, as fast as it
can, cycling through what a crafted flood carries: a read of a missing
file, a read of a name that leaves the root, a write. Each name carries
PREFIX and the request's number, so the test can count the log lines
about them. Then reads the TFTP errors that come back until 2 s pass with
none. Prints one JSON line: {"sent": N, "errors": ERROR datagrams
received}. Exit 0. Every loop is bounded.
"""

import json
import socket
import struct
import sys

RRQ, WRQ, ERROR = 1, 2, 5


def request(i, prefix):
    kind = i % 3
    if kind == 0:
        return struct.pack("!H", RRQ) + ("%s-%d.efi" % (prefix, i)).encode() + b"\0octet\0"
    if kind == 1:
        return struct.pack("!H", RRQ) + ("../%s-%d" % (prefix, i)).encode() + b"\0octet\0"
    return struct.pack("!H", WRQ) + ("%s-%d.up" % (prefix, i)).encode() + b"\0octet\0"


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: flood.py SERVER N PREFIX\n")
        return 2
    server, n, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    for i in range(n):
        s.sendto(request(i, prefix), (server, 69))
    s.settimeout(2)
    errors = 0
    for _ in range(10 * n + 10):
        try:
            pkt, _addr = s.recvfrom(2048)
        except socket.timeout:
            break
        if len(pkt) >= 4 and struct.unpack("!H", pkt[:2])[0] == ERROR:
            errors += 1
    print(json.dumps({"sent": n, "errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
