#!/usr/bin/python3
"""latency.py PCAP... — a DHCP server's reply latency, from captures taken
on its own interface (tcpdump -w, nanosecond or microsecond timestamps,
Ethernet). Several captures are pooled: each is paired on its own, and
the percentiles are over the latencies of all of them.

Each request (op 1) is paired with the first reply (op 2) that has its xid
and the message type that answers it (DISCOVER -> OFFER, REQUEST -> ACK or
NAK); the latency is the reply's timestamp minus the request's, both as
the server's interface saw them. Prints one line per exchange and one for
both together:

    discover-offer n=9998 p50=0.081 p99=0.214 max=3.100 ms
    request-ack n=9998 p50=0.403 p99=0.873 max=4.520 ms
    all n=19996 p50=... p99=... max=... ms

Unanswered requests are counted on a line of their own. Standard library
only: it reads the pcap format itself.
"""
import struct
import sys

ANSWERS = {1: (2,), 3: (5, 6)}  # DISCOVER -> OFFER; REQUEST -> ACK, NAK
NAMES = {1: "discover-offer", 3: "request-ack"}


def packets(path):
    """Yields (timestamp in seconds, frame bytes)."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            end = "<"
        else:
            magic = struct.unpack(">I", head[:4])[0]
            end = ">"
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            raise SystemExit("%s: not a pcap file" % path)
        scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
        linktype = struct.unpack(end + "I", head[20:24])[0]
        if linktype != 1:
            raise SystemExit("%s: link type %d, not Ethernet" % (path, linktype))
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, caplen, _ = struct.unpack(end + "IIII", rec)
            data = f.read(caplen)
            if len(data) < caplen:
                return
            yield sec + frac * scale, data


def payload(frame):
    """The DHCP message (UDP payload) of an Ethernet frame, or None: an
    IPv4 UDP frame holding at least the fixed header and the cookie."""
    if len(frame) < 14 + 20 + 8 + 240:
        return None
    if frame[12:14] != b"\x08\x00":
        return None
    ihl = (frame[14] & 0x0F) * 4
    if frame[14 + 9] != 17 or ihl < 20:
        return None
    d = frame[14 + ihl + 8:]
    if len(d) < 240 or d[236:240] != b"\x63\x82\x53\x63":
        return None
    return d


def options(d):
    """Yields (code, offset of its data, its length) of each option of
    DHCP message d, pads skipped, up to the end option or the end of what
    was captured."""
    i = 240
    while i < len(d):
        code = d[i]
        if code == 255:
            return
        if code == 0:
            i += 1
            continue
        if i + 1 >= len(d):
            return
        n = d[i + 1]
        yield code, i + 2, n
        i += 2 + n


def dhcp(frame):
    """(op, xid, message type) of a DHCP message in an Ethernet frame, or
    None. Bounds-checked: a short or odd frame is skipped."""
    d = payload(frame)
    if d is None:
        return None
    for code, at, n in options(d):
        if code == 53 and n == 1 and at < len(d):
            return d[0], struct.unpack(">I", d[4:8])[0], d[at]
    return None


def pct(sorted_ms, p):
    if not sorted_ms:
        return float("nan")
    k = min(len(sorted_ms) - 1, max(0, int(round(p / 100.0 * len(sorted_ms) + 0.5)) - 1))
    return sorted_ms[k]


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: latency.py PCAP...")
    lat = {1: [], 3: []}
    unanswered = 0
    for path in sys.argv[1:]:
        pending = {}  # (xid, request type) -> time, of this capture
        for ts, frame in packets(path):
            m = dhcp(frame)
            if not m:
                continue
            op, xid, mtype = m
            if op == 1 and mtype in ANSWERS:
                pending.setdefault((xid, mtype), ts)
            elif op == 2:
                for req, answers in ANSWERS.items():
                    if mtype in answers and (xid, req) in pending:
                        lat[req].append((ts - pending.pop((xid, req))) * 1e3)
        unanswered += len(pending)
    both = []
    for req in (1, 3):
        v = sorted(lat[req])
        both += v
        print("%s n=%d p50=%.3f p99=%.3f max=%.3f ms"
              % (NAMES[req], len(v), pct(v, 50), pct(v, 99), v[-1] if v else float("nan")))
    both.sort()
    print("all n=%d p50=%.3f p99=%.3f max=%.3f ms"
          % (len(both), pct(both, 50), pct(both, 99), both[-1] if both else float("nan")))
    print("unanswered n=%d" % unanswered)


if __name__ == "__main__":
    main()
