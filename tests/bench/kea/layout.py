#!/usr/bin/python3
"""layout.py PCAP — what a DHCP server's OFFERs and ACKs carry, from a
capture taken on its interface (tcpdump -w, Ethernet; the latency
capture of tests/bench/kea/run.sh).

For each of OFFER and ACK, prints its most common layout: the options in
the order sent, each as code:length, their share of that type, and the
mean length of the DHCP message (UDP payload):

    offer n=7990 share=100% bytes=300.0 layout=53:1 54:4 51:4 1:4 3:4 6:4 12:11
    ack n=7990 share=100% bytes=300.0 layout=...

Two servers asked the same questions answer alike when their lines match
but for the order. Standard library only; bounds-checked: a frame too
short for what it says is skipped (a snap length cuts only the tail).
"""
import collections
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dhcp"))
from latency import options, packets, payload  # noqa: E402

NAMES = {2: "offer", 5: "ack"}


def reply(frame):
    """(message type, layout tuple, DHCP length) of a server reply, or None."""
    d = payload(frame)
    if d is None or d[0] != 2:
        return None
    mtype, layout = None, []
    for code, at, n in options(d):
        if code == 53 and n == 1 and at < len(d):
            mtype = d[at]
        layout.append("%d:%d" % (code, n))
    if mtype not in NAMES:
        return None
    ihl = (frame[14] & 0x0F) * 4  # payload() checked the frame holds it
    udp_len = struct.unpack(">H", frame[14 + ihl + 4:14 + ihl + 6])[0]
    return mtype, tuple(layout), max(0, udp_len - 8)


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: layout.py PCAP")
    seen = {t: collections.Counter() for t in NAMES}
    size = {t: [0, 0] for t in NAMES}
    for _, frame in packets(sys.argv[1]):
        r = reply(frame)
        if not r:
            continue
        t, layout, n = r
        seen[t][layout] += 1
        size[t][0] += n
        size[t][1] += 1
    for t, name in sorted(NAMES.items()):
        total = size[t][1]
        if not total:
            print("%s n=0" % name)
            continue
        layout, k = seen[t].most_common(1)[0]
        print("%s n=%d share=%.0f%% bytes=%.1f layout=%s"
              % (name, total, 100.0 * k / total, size[t][0] / total, " ".join(layout)))


if __name__ == "__main__":
    main()
