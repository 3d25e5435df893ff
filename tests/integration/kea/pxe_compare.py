#!/usr/bin/python3
"""pxe_compare — the boot fields of DHCP answers, as raw bytes, so that two
servers' answers to the same requests can be compared byte for byte.

Run it with Debian's /usr/bin/python3 (scapy), as root, inside the
client's network namespace; it sends and receives at layer 2 with the
client of tests/integration/dhcp/pxe_client.py (imported, so the
requests are the ones the DHCP tests send).

Modes:
  --cases FILE     one case per line, "NAME|MAC|ARCH|VENDOR_CLASS|USER_CLASS"
                   (ARCH "none" or empty: no option 93; empty classes:
                   not sent; lines starting with # are skipped): a
                   DISCOVER, then a REQUEST of the offer, as pxe_client.py
                   --request does. One JSON line per case:
                   {"case": NAME, "offer": F, "ack": F} where F is null
                   when no such reply came within --wait seconds, or
                     {"type", "yiaddr", "siaddr", "sname", "file",
                      "opt43", "opt60", "opt66", "opt67",
                      "text": {"sname", "file", "opt60", "opt66", "opt67"}}
                   sname and file are the whole header fields (64 and 128
                   bytes) in hex, the options their values in hex (null
                   when absent); "text" holds the same as strings, for
                   messages.
  --watch-offer IP --mac MAC
                   a DISCOVER for MAC every 0.1 s (each with a new xid)
                   until an OFFER of IP comes, at most --wait seconds;
                   prints {"offer_at": UNIX_TIME, "discovers": N} (or
                   {"offer_at": null, ...}). With --ready FILE, FILE is
                   created once the socket is open (and before the first
                   DISCOVER), so that a test starts its clock after it.

Exit status: 0 when the mode did its work (even with missing replies:
the JSON says so), 2 on a usage error.
"""

import argparse
import os
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dhcp"))

import pxe_client as pc  # noqa: E402

BOOT_OPTIONS = (43, 60, 66, 67)


def payload_of(raw):
    """The BOOTP payload of an Ethernet/IPv4/UDP frame, or None."""
    if len(raw) < 14 + 20 + 8 or raw[12:14] != b"\x08\x00":
        return None
    ip = raw[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != 17 or len(ip) < ihl + 8:
        return None
    _sport, dport, ulen = struct.unpack("!HHH", ip[ihl:ihl + 6])
    if dport != 68:
        return None
    return ip[ihl + 8:ihl + ulen]


def fields(data):
    """The boot fields of a reply's BOOTP payload, or None if it is not
    a reply."""
    f = pc.parse_bootp(data)
    if not f or f["op"] != 2:
        return None
    o = f["opts"]
    t = o.get(53)
    out = {
        "type": pc.TYPES.get(t[0], str(t[0])) if t else None,
        "yiaddr": f["yiaddr"],
        "siaddr": f["siaddr"],
        "sname": data[44:108].hex(),
        "file": data[108:236].hex(),
        "text": {"sname": f["sname"], "file": f["file"]},
    }
    for c in BOOT_OPTIONS:
        out["opt%d" % c] = pc.hexs(o.get(c))
    for c in (60, 66, 67):
        out["text"]["opt%d" % c] = pc.text(o.get(c))
    return out, f


def wait_reply(c, xid, mac, seconds, want):
    """The first reply to (xid, mac) whose type is in want, within
    seconds: (fields, parsed) or (None, None)."""
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return None, None
        r, _, _ = select.select([c.sock], [], [], left)
        if not r:
            return None, None
        try:
            _cls, raw, _ts = c.sock.recv_raw()
        except OSError:
            continue
        data = payload_of(raw) if raw else None
        got = fields(data) if data else None
        if not got:
            continue
        out, f = got
        if f["xid"] != xid or f["chaddr"] != mac or out["type"] not in want:
            continue
        return out, f


def client_args(iface, mac, arch, vendor, user):
    """The argparse namespace that pxe_client.Client reads."""
    p = argparse.Namespace()
    p.iface = iface
    p.mac = mac
    p.arch = arch if arch and arch != "none" else None
    p.ndi = True
    p.guid = True
    p.vendor_class = vendor or None
    p.user_class = user or None
    p.param_list = "1,3,6,12,15,28,42,43,51,54,58,59,60,66,67,97,119,121"
    p.max_size = 1472
    p.hostname = None
    p.client_id = False
    p.broadcast = False
    p.giaddr = "0.0.0.0"
    p.secs = 0
    p.print_replies = False
    return p


def one_case(c, a, name, mac_s, seconds):
    mac = pc.mac_bytes(mac_s)
    xid = pc.new_xid()
    c.send(c.bootp(pc.DISCOVER, mac, xid))
    offer, f = wait_reply(c, xid, mac, seconds, ("offer",))
    ack = None
    if offer:
        sid = f["opts"].get(54)
        server = socket.inet_ntoa(sid) if sid and len(sid) == 4 else None
        c.send(c.bootp(pc.REQUEST, mac, xid, requested=offer["yiaddr"], server=server))
        ack, _f = wait_reply(c, xid, mac, seconds, ("ack", "nak"))
    pc.emit({"case": name, "offer": offer, "ack": ack})


def mode_cases(a):
    with open(a.cases) as fh:
        lines = [l.rstrip("\n") for l in fh if l.strip() and not l.startswith("#")]
    for line in lines:
        parts = line.split("|")
        if len(parts) != 5:
            print("bad case line: %r" % line, file=sys.stderr)
            return 2
        name, mac, arch, vendor, user = parts
        # One client per case: its options are the case's.
        c = pc.Client(client_args(a.iface, mac, arch, vendor, user))
        try:
            one_case(c, a, name, mac, a.wait)
        finally:
            c.close()
    return 0


def mode_watch(a):
    mac = pc.mac_bytes(a.mac)
    c = pc.Client(client_args(a.iface, a.mac, None, None, None))
    n = 0
    at = None
    try:
        if a.ready:
            open(a.ready, "w").close()
        end = time.monotonic() + a.wait
        while time.monotonic() < end:
            xid = pc.new_xid()
            c.send(c.bootp(pc.DISCOVER, mac, xid))
            n += 1
            offer, _f = wait_reply(c, xid, mac, min(0.1, max(0.0, end - time.monotonic())),
                                   ("offer",))
            if offer and offer["yiaddr"] == a.watch_offer:
                at = time.time()
                break
            # Whatever the DISCOVER got (an offer from the pool), the
            # next goes out 0.1 s after this one.
    finally:
        c.close()
    pc.emit({"offer_at": at, "discovers": n})
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-i", "--iface", required=True)
    p.add_argument("--wait", type=float, default=3.0, help="seconds per reply (cases) or in all")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--cases", metavar="FILE")
    g.add_argument("--watch-offer", metavar="IP")
    p.add_argument("--mac", help="with --watch-offer")
    p.add_argument("--ready", metavar="FILE", help="with --watch-offer")
    a = p.parse_args()
    if a.cases:
        return mode_cases(a)
    if not a.mac:
        p.error("--watch-offer needs --mac")
    return mode_watch(a)


if __name__ == "__main__":
    sys.exit(main())
