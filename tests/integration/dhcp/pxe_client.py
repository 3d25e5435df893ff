#!/usr/bin/python3
"""pxe_client — a DHCP client for the integration tests, on one interface.

Run it with Debian's /usr/bin/python3 (scapy is a Debian package), as root,
inside the client's network namespace. It speaks to whatever DHCP servers
are on the link and prints one JSON object per reply on stdout, so that the
shell tests can assert on them with a python one-liner. Frames are sent and
received at layer 2 (scapy's packet socket, promiscuous), so it needs no
address and sees replies unicast to a chaddr that is not the interface's
own MAC, as a server sends them to a client without an address.

Modes:
  (default)                DISCOVER, then every reply for --wait seconds
  --request                DISCOVER, then REQUEST the offer that has an
                           address (the first, or the one from --server),
                           then every reply to the REQUEST
  --proxy-request SERVER   a REQUEST to SERVER:4011 from --ciaddr:--sport
                           over a UDP socket (the address must be on the
                           interface), as a PXE client asks a ProxyDHCP
                           server; the first reply is printed with its
                           source (every reply for --wait seconds with
                           --all-offers)
  --renew SERVER           a REQUEST from --ciaddr:68 to SERVER:67 over a
                           UDP socket, with ciaddr and neither option 50
                           nor 54: a client in RENEWING state (RFC 2131
                           §4.3.2); the reply is printed with its source
  --init-reboot ADDR       a REQUEST for ADDR (option 50) without option 54
                           and with ciaddr 0, as a client that rebooted
                           asks to keep its address (RFC 2131 §4.3.2),
                           then every reply for --wait seconds; with
                           --count N, N such REQUESTs at once (a flood),
                           then one line {"sent": N, "nak": NAKs, "ack":
                           ACKs} of the replies within --wait seconds
  --release                a RELEASE of --ciaddr to --server (option 54)
  --dora-loop FILE         DORA for each MAC in FILE (one per line); each
                           ACK is appended to --record as "MAC IP" and
                           flushed at once; a MAC whose exchange fails is
                           tried --tries times in all
  --garbage N              N malformed datagrams to port 67 (broadcast):
                           random bytes, truncated headers, bad cookies,
                           option overruns, bad option lengths, no or a bad
                           message type; prints a count per kind

Packet options (DISCOVER and REQUEST): --mac, --arch (93; "none" omits
it), --no-ndi (omits 94 = 1,3,16), --no-guid (omits 97 = 0 + 16 bytes),
--vendor-class (60), --user-class (77, as iPXE sends it: the bare string,
not RFC 3004's length-prefixed form), --param-list (55), --hostname (12),
--broadcast (the BOOTP broadcast flag), --giaddr.

Each reply line: {"stage", "type", "xid", "mac", "yiaddr", "siaddr",
"giaddr", "ciaddr", "file", "sname", "flags", "src", "sport", "dst", "dport",
"eth_dst", "server_id", "opt43" (hex), "opt60", "opt66", "opt67", "opt97"
(hex), "options": {"code": "hex", ...}} (strings decoded as latin-1; absent
options are null). "stage" is the message the reply answers: discover (every
OFFER, even one that comes after the REQUEST went out), request, or
proxy-request. Exit status: 0 when at least one reply came (or the mode
needs none), 1 when none did, 2 on a usage error.
"""

import argparse
import json
import os
import random
import select
import socket
import struct
import sys
import time

from scapy.all import BOOTP, IP, UDP, Ether, conf  # noqa: E402

conf.verb = 0

COOKIE = b"\x63\x82\x53\x63"
TYPES = {1: "discover", 2: "offer", 3: "request", 4: "decline", 5: "ack",
         6: "nak", 7: "release", 8: "inform"}
DISCOVER, OFFER, REQUEST, ACK, NAK, RELEASE = 1, 2, 3, 5, 6, 7


def mac_bytes(s):
    b = bytes(int(x, 16) for x in s.split(":"))
    if len(b) != 6:
        raise ValueError("bad MAC " + s)
    return b


def mac_str(b):
    return ":".join("%02x" % x for x in b[:6])


def opt(code, data):
    out = b""
    # Long values are split into several instances (RFC 3396).
    while True:
        out += bytes([code, min(len(data), 255)]) + data[:255]
        data = data[255:]
        if not data:
            return out


def parse_options(region, into):
    """Parses an option region into `into` (code -> bytes, RFC 3396
    concatenation); returns the value of option 52 if present."""
    i = 0
    while i < len(region):
        c = region[i]
        if c == 0:
            i += 1
            continue
        if c == 255:
            break
        if i + 1 >= len(region):
            break
        n = region[i + 1]
        v = region[i + 2:i + 2 + n]
        into[c] = into.get(c, b"") + v
        i += 2 + n
    return into.get(52)


def parse_bootp(data):
    """The fields and options of a BOOTP/DHCP message, or None."""
    if len(data) < 240 or data[236:240] != COOKIE:
        return None
    f = {}
    (f["op"], _htype, _hlen, _hops, f["xid"], _secs, f["flags"]) = \
        struct.unpack("!BBBBIHH", data[:12])
    for k, off in (("ciaddr", 12), ("yiaddr", 16), ("siaddr", 20), ("giaddr", 24)):
        f[k] = socket.inet_ntoa(data[off:off + 4])
    f["chaddr"] = data[28:34]
    sname = data[44:108]
    file_ = data[108:236]
    opts = {}
    ov = parse_options(data[240:], opts)
    if ov:
        if ov[0] & 1:
            parse_options(file_, opts)
        if ov[0] & 2:
            parse_options(sname, opts)
    f["sname"] = "" if ov and ov[0] & 2 else sname.split(b"\0")[0].decode("latin-1")
    f["file"] = "" if ov and ov[0] & 1 else file_.split(b"\0")[0].decode("latin-1")
    f["opts"] = opts
    return f


def text(v):
    return None if v is None else v.decode("latin-1").rstrip("\0")


def hexs(v):
    return None if v is None else v.hex()


def reply_json(stage, f, src, sport, dst, dport, eth_dst):
    o = f["opts"]
    t = o.get(53)
    sid = o.get(54)
    return {
        "stage": stage,
        "type": TYPES.get(t[0], str(t[0])) if t else None,
        "xid": "%08x" % f["xid"],
        "mac": mac_str(f["chaddr"]),
        "yiaddr": f["yiaddr"],
        "siaddr": f["siaddr"],
        "giaddr": f["giaddr"],
        "ciaddr": f["ciaddr"],
        "flags": f["flags"],
        "file": f["file"],
        "sname": f["sname"],
        "src": src,
        "sport": sport,
        "dst": dst,
        "dport": dport,
        "eth_dst": eth_dst,
        "server_id": socket.inet_ntoa(sid) if sid and len(sid) == 4 else None,
        "opt43": hexs(o.get(43)),
        "opt60": text(o.get(60)),
        "opt66": text(o.get(66)),
        "opt67": text(o.get(67)),
        "opt97": hexs(o.get(97)),
        "options": {str(k): v.hex() for k, v in sorted(o.items())},
    }


def emit(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


class Client:
    def __init__(self, a):
        self.a = a
        self.iface = a.iface
        self.sock = conf.L2socket(iface=a.iface, promisc=True, filter="udp and dst port 68")
        self.hwaddr = get_if_mac(a.iface)

    def close(self):
        self.sock.close()

    def options(self, mtype, mac, requested=None, server=None):
        a = self.a
        o = opt(53, bytes([mtype]))
        if a.client_id:
            o += opt(61, b"\x01" + mac)
        if requested:
            o += opt(50, socket.inet_aton(requested))
        if server:
            o += opt(54, socket.inet_aton(server))
        if mtype in (DISCOVER, REQUEST):
            if a.param_list:
                o += opt(55, bytes(int(x) for x in a.param_list.split(",")))
            if a.max_size:
                o += opt(57, struct.pack("!H", a.max_size))
            if a.hostname:
                o += opt(12, a.hostname.encode())
            if a.arch is not None and a.arch != "none":
                o += opt(93, struct.pack("!H", int(a.arch, 0)))
            if a.ndi:
                o += opt(94, b"\x01\x03\x10")
            if a.guid:
                o += opt(97, b"\x00" + bytes(range(0x10, 0x20)))
            if a.vendor_class:
                o += opt(60, a.vendor_class.encode())
            if a.user_class:
                o += opt(77, a.user_class.encode())
        return o + b"\xff"

    def bootp(self, mtype, mac, xid, ciaddr="0.0.0.0", requested=None, server=None):
        a = self.a
        return BOOTP(op=1, htype=1, hlen=6, xid=xid, secs=a.secs,
                     flags=0x8000 if a.broadcast else 0,
                     ciaddr=ciaddr, giaddr=a.giaddr,
                     chaddr=mac + b"\0" * 10,
                     options=COOKIE + self.options(mtype, mac, requested, server))

    def send(self, payload, src="0.0.0.0", dst="255.255.255.255",
             eth_dst="ff:ff:ff:ff:ff:ff", sport=68):
        frame = (Ether(src=self.hwaddr, dst=eth_dst) /
                 IP(src=src, dst=dst, ttl=64) /
                 UDP(sport=sport, dport=67) / payload)
        self.sock.send(frame)

    def collect(self, stage, xid, mac, seconds, stop=None):
        """Every reply to (xid, mac) for `seconds`, or until stop(reply)."""
        got = []
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                break
            try:
                _cls, raw, _ts = self.sock.recv_raw()
            except OSError:
                continue
            if not raw:
                continue
            j = decode_frame(stage, raw)
            if not j or j["xid"] != "%08x" % xid or j["mac"] != mac_str(mac):
                continue
            if j["type"] == "offer":
                # A late OFFER (another server, slower than the one
                # requested) answers the DISCOVER, whenever it comes.
                j["stage"] = "discover"
            got.append(j)
            if self.a.print_replies:
                emit(j)
            if stop and stop(j):
                break
        return got


def get_if_mac(iface):
    with open("/sys/class/net/%s/address" % iface) as f:
        return f.read().strip()


def decode_frame(stage, raw):
    """A JSON reply from an Ethernet frame carrying IPv4/UDP/BOOTP, or None."""
    if len(raw) < 14 + 20 + 8 or raw[12:14] != b"\x08\x00":
        return None
    ip = raw[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != 17 or len(ip) < ihl + 8:
        return None
    src = socket.inet_ntoa(ip[12:16])
    dst = socket.inet_ntoa(ip[16:20])
    sport, dport, ulen = struct.unpack("!HHH", ip[ihl:ihl + 6])
    payload = ip[ihl + 8:ihl + ulen]
    f = parse_bootp(payload)
    if not f or f["op"] != 2:
        return None
    return reply_json(stage, f, src, sport, dst, dport, mac_str(raw[0:6]))


def new_xid():
    return random.getrandbits(32)


def discover(c, mac, seconds, first_only=False):
    xid = new_xid()
    c.send(c.bootp(DISCOVER, mac, xid))
    stop = None
    if first_only:
        stop = lambda j: j["type"] == "offer" and j["yiaddr"] != "0.0.0.0" and \
            (not c.a.server or j["server_id"] == c.a.server)
    return xid, c.collect("discover", xid, mac, seconds, stop)


def request(c, mac, xid, offer, seconds):
    c.send(c.bootp(REQUEST, mac, xid, requested=offer["yiaddr"], server=offer["server_id"]))
    return c.collect("request", xid, mac, seconds,
                     stop=lambda j: j["type"] in ("ack", "nak"))


def choose_offer(a, replies):
    for j in replies:
        if j["type"] == "offer" and j["yiaddr"] != "0.0.0.0" and \
                (not a.server or j["server_id"] == a.server):
            return j
    return None


def init_reboot_flood(c, a, mac):
    xids = set()
    for _ in range(a.count):
        xid = new_xid()
        xids.add(xid)
        c.send(c.bootp(REQUEST, mac, xid, requested=a.init_reboot))
    got = {"nak": 0, "ack": 0}
    end = time.monotonic() + a.wait
    for _ in range(100 * a.count):
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([c.sock], [], [], left)
        if not r:
            break
        try:
            _cls, raw, _ts = c.sock.recv_raw()
        except OSError:
            continue
        j = decode_frame("request", raw) if raw else None
        if j and int(j["xid"], 16) in xids and j["mac"] == mac_str(mac) and j["type"] in got:
            got[j["type"]] += 1
    emit({"sent": a.count, "nak": got["nak"], "ack": got["ack"]})
    return 0


def mode_init_reboot(a):
    c = Client(a)
    mac = mac_bytes(a.mac)
    if a.count > 1:
        try:
            return init_reboot_flood(c, a, mac)
        finally:
            c.close()
    try:
        xid = new_xid()
        c.send(c.bootp(REQUEST, mac, xid, requested=a.init_reboot))
        got = c.collect("request", xid, mac, a.wait, stop=lambda j: j["type"] in ("ack", "nak"))
    finally:
        c.close()
    return 0 if got else 1


def mode_default(a):
    c = Client(a)
    try:
        _xid, got = discover(c, mac_bytes(a.mac), a.wait)
    finally:
        c.close()
    return 0 if got else 1


def mode_request(a):
    c = Client(a)
    mac = mac_bytes(a.mac)
    try:
        xid, offers = discover(c, mac, a.wait, first_only=not a.all_offers)
        offer = choose_offer(a, offers)
        if not offer:
            print("no offer with an address", file=sys.stderr)
            return 1
        got = request(c, mac, xid, offer, a.wait)
    finally:
        c.close()
    return 0 if got else 1


def mode_proxy_request(a, server=None, port=4011, stage="proxy-request"):
    if not a.ciaddr:
        print("--%s needs --ciaddr" % stage, file=sys.stderr)
        return 2
    c = Client(a)
    mac = mac_bytes(a.mac)
    xid = new_xid()
    payload = bytes(c.bootp(REQUEST, mac, xid, ciaddr=a.ciaddr))
    c.close()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a.ciaddr, a.sport))
        s.sendto(payload, (server or a.proxy_request, port))
        end = time.monotonic() + a.wait
        n = 0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([s], [], [], left)
            if not r:
                break
            data, (src, sport) = s.recvfrom(4096)
            f = parse_bootp(data)
            if not f or f["op"] != 2 or f["xid"] != xid:
                continue
            emit(reply_json(stage, f, src, sport, a.ciaddr, a.sport, None))
            n += 1
            if not a.all_offers:
                break
    finally:
        s.close()
    return 0 if n else 1


def mode_release(a):
    if not (a.ciaddr and a.server):
        print("--release needs --ciaddr and --server", file=sys.stderr)
        return 2
    c = Client(a)
    try:
        c.send(c.bootp(RELEASE, mac_bytes(a.mac), new_xid(), ciaddr=a.ciaddr, server=a.server),
               src=a.ciaddr, dst=a.server, eth_dst=a.server_mac or "ff:ff:ff:ff:ff:ff")
    finally:
        c.close()
    return 0


def mode_dora_loop(a):
    with open(a.dora_loop) as f:
        macs = [l.strip() for l in f if l.strip()]
    if not a.record:
        print("--dora-loop needs --record", file=sys.stderr)
        return 2
    a.print_replies = False
    c = Client(a)
    out = open(a.record, "a")
    acks = fails = 0
    try:
        for m in macs:
            mac = mac_bytes(m)
            for _try in range(a.tries):
                xid, offers = discover(c, mac, a.wait, first_only=True)
                offer = choose_offer(a, offers)
                if not offer:
                    continue
                got = request(c, mac, xid, offer, a.wait)
                acks_here = [j for j in got if j["type"] == "ack"]
                if acks_here:
                    out.write("%s %s\n" % (m, acks_here[0]["yiaddr"]))
                    out.flush()
                    os.fsync(out.fileno())
                    acks += 1
                    break
            else:
                fails += 1
    finally:
        out.close()
        c.close()
    emit({"acks": acks, "failed": fails})
    return 0


def garbage(rng, kind, mac):
    """One malformed BOOTP payload of the given kind."""
    def header(cookie=COOKIE):
        return struct.pack("!BBBBIHH", 1, 1, 6, 0, rng.getrandbits(32), 0, 0x8000) + \
            b"\0" * 16 + mac + b"\0" * 10 + b"\0" * 192 + cookie
    if kind == "random":
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 600)))
    if kind == "truncated_header":
        return header()[:rng.randint(1, 239)]
    if kind == "cookie":
        return header(bytes(rng.getrandbits(8) for _ in range(3)) + b"\x00") + \
            b"\x35\x01\x01\xff"
    if kind == "option_overrun":
        # message type, then an option whose length runs past the end
        return header() + b"\x35\x01\x01" + bytes([rng.choice((12, 60, 77, 43)), 200]) + b"abc"
    if kind == "option_length":
        # option 53 with length 3; option 54 with length 2
        return header() + rng.choice((b"\x35\x03\x01\x01\x01\xff", b"\x35\x01\x01\x36\x02\x0a\x00\xff"))
    if kind == "no_message_type":
        return header() + b"\x0c\x03abc\xff"
    if kind == "message_type":
        return header() + bytes([53, 1, rng.choice((0, 19, 200, 255))]) + b"\xff"
    if kind == "overload":
        return header() + b"\x35\x01\x01\x34\x01\x07\xff"
    if kind == "hlen":
        h = bytearray(header() + b"\x35\x01\x01\xff")
        h[2] = 17 + rng.randint(0, 200)
        return bytes(h)
    raise ValueError(kind)


GARBAGE_KINDS = ("random", "truncated_header", "cookie", "option_overrun", "option_length",
                 "no_message_type", "message_type", "overload", "hlen")


def mode_garbage(a):
    rng = random.Random(a.seed)
    mac = mac_bytes(a.mac)
    sock = conf.L2socket(iface=a.iface)
    hw = mac_bytes(get_if_mac(a.iface))
    counts = dict.fromkeys(GARBAGE_KINDS, 0)
    start = time.monotonic()
    try:
        for i in range(a.garbage):
            kind = GARBAGE_KINDS[i % len(GARBAGE_KINDS)]
            payload = garbage(rng, kind, mac)
            # The frame is built by hand (no scapy per packet: thousands
            # must go out in a few seconds). UDP checksum 0: none.
            udp = struct.pack("!HHHH", 68, 67, 8 + len(payload), 0) + payload
            iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xffff, 0, 64, 17, 0,
                              b"\0\0\0\0", b"\xff\xff\xff\xff")
            s = sum(struct.unpack("!10H", iph))
            while s >> 16:
                s = (s & 0xffff) + (s >> 16)
            iph = iph[:10] + struct.pack("!H", ~s & 0xffff) + iph[12:]
            frame = b"\xff" * 6 + hw + b"\x08\x00" + iph + udp
            sock.send(frame)
            counts[kind] += 1
            if a.rate:
                # Paced from the start, not per datagram: sleep only
                # when ahead of the schedule.
                ahead = start + (i + 1) / a.rate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
    finally:
        sock.close()
    emit({"garbage": counts, "seconds": round(time.monotonic() - start, 3)})
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-i", "--iface", required=True)
    p.add_argument("--mac", default="02:00:00:00:00:01")
    p.add_argument("--arch", default=None, help="option 93 (e.g. 0, 7, 0x0b); none: omitted")
    p.add_argument("--no-ndi", dest="ndi", action="store_false", help="omit option 94")
    p.add_argument("--no-guid", dest="guid", action="store_false", help="omit option 97")
    p.add_argument("--vendor-class", help="option 60")
    p.add_argument("--user-class", help="option 77, bare, as iPXE sends it")
    p.add_argument("--param-list", default="1,3,6,12,15,28,42,43,51,54,58,59,60,66,67,97,119,121",
                   help="option 55, comma-separated codes; empty: omitted")
    p.add_argument("--max-size", type=int, default=1472, help="option 57; 0: omitted")
    p.add_argument("--hostname", help="option 12")
    p.add_argument("--client-id", action="store_true", help="send option 61 = 1 + MAC")
    p.add_argument("--broadcast", action="store_true", help="set the BOOTP broadcast flag")
    p.add_argument("--giaddr", default="0.0.0.0")
    p.add_argument("--secs", type=int, default=0)
    p.add_argument("--wait", type=float, default=3.0, help="seconds to collect replies")
    p.add_argument("--server", help="the server to take the offer of (option 54); "
                   "with --release, the server released to")
    p.add_argument("--server-mac", help="with --release: the server's MAC (else broadcast)")
    p.add_argument("--all-offers", action="store_true",
                   help="with --request: wait --wait seconds for every offer before "
                   "requesting; with --proxy-request: print every reply for --wait seconds")
    p.add_argument("--ciaddr")
    p.add_argument("--sport", type=int, default=68, help="with --proxy-request: source port")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--request", action="store_true")
    g.add_argument("--proxy-request", metavar="SERVER")
    g.add_argument("--release", action="store_true")
    g.add_argument("--init-reboot", metavar="ADDR")
    g.add_argument("--renew", metavar="SERVER")
    g.add_argument("--dora-loop", metavar="FILE")
    g.add_argument("--garbage", type=int, metavar="N")
    p.add_argument("--record", help="with --dora-loop: the file of ACKs")
    p.add_argument("--tries", type=int, default=2, help="with --dora-loop: tries per MAC")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=1, help="with --init-reboot: REQUESTs to send")
    p.add_argument("--rate", type=float, default=0, help="with --garbage: datagrams per second")
    a = p.parse_args()
    a.print_replies = True
    if a.param_list == "":
        a.param_list = None
    if a.garbage is not None and not 0 < a.garbage <= 1000000:
        p.error("--garbage: 1 to 1000000")
    if not 0 < a.count <= 100000:
        p.error("--count: 1 to 100000")
    if a.request:
        return mode_request(a)
    if a.proxy_request:
        return mode_proxy_request(a)
    if a.release:
        return mode_release(a)
    if a.init_reboot:
        return mode_init_reboot(a)
    if a.renew:
        return mode_proxy_request(a, a.renew, 67, "renew")
    if a.dora_loop:
        return mode_dora_loop(a)
    if a.garbage is not None:
        return mode_garbage(a)
    return mode_default(a)


if __name__ == "__main__":
    sys.exit(main())
