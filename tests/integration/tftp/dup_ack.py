#!/usr/bin/python3
"""dup_ack — a TFTP client that acknowledges every DATA block twice.

The Sorcerer's Apprentice bug (RFC 1123 §4.2.3.1): a server that sends the
next block for every ACK it gets, duplicates included, sends each block
from then on twice, and the doubling feeds itself. This client reads FILE
from SERVER (port 69) in octet mode with blksize 512 and no window, sends
each ACK twice, and writes what it got to OUT. It prints one JSON line:
{"blocks": distinct blocks, "datagrams": DATA datagrams received,
"bytes": the file's length}. Exit 0 when the transfer ended with a short
block, 1 otherwise (an ERROR, or 5 s of silence). Every loop is bounded.
"""

import json
import socket
import struct
import sys


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: dup_ack.py SERVER FILE OUT\n")
        return 2
    server, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(struct.pack("!H", 1) + name.encode() + b"\0octet\0", (server, 69))
    got = {}
    datagrams = 0
    peer = None
    done = False
    for _ in range(1000000):
        try:
            pkt, addr = s.recvfrom(2048)
        except socket.timeout:
            break
        if peer is None:
            peer = addr
        if addr != peer or len(pkt) < 4:
            continue
        op, block = struct.unpack("!HH", pkt[:4])
        if op == 5:
            sys.stderr.write("error %d: %r\n" % (block, pkt[4:]))
            break
        if op != 3:
            continue
        datagrams += 1
        got.setdefault(block, pkt[4:])
        ack = struct.pack("!HH", 4, block)
        s.sendto(ack, peer)
        s.sendto(ack, peer)
        if len(pkt) - 4 < 512:
            done = True
            # Stay a moment: duplicates still on their way are counted.
            s.settimeout(0.5)
    data = b"".join(got[b] for b in sorted(got))
    with open(out, "wb") as f:
        f.write(data)
    print(json.dumps({"blocks": len(got), "datagrams": datagrams, "bytes": len(data)}))
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
