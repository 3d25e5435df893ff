#!/usr/bin/python3
"""redfish_emu_nodelay.py - tests/redfish/redfish_emu.py for the benchmark,
with TCP_NODELAY on every connection it accepts.

Without it, each answer over TLS waits 40 ms: TLS 1.3 sends its session
tickets in a segment of their own after the handshake, Nagle holds the
answer back until that segment is acknowledged, and the client delays its
acknowledgement (40 ms on Linux). A BMC's web server does not do that
(lighttpd, nginx and the like set TCP_NODELAY), and the stall would be
most of what the benchmark measures, on both sides. Same arguments as
redfish_emu.py, whose path is this script's first argument."""

import importlib.util
import socket
import sys


def main(argv):
    spec = importlib.util.spec_from_file_location("redfish_emu", argv[0])
    emu = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(emu)
    accept = emu.Server.get_request

    def get_request(self):
        sock, addr = accept(self)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, addr

    emu.Server.get_request = get_request
    return emu.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
