#!/usr/bin/python3
"""kea_ctl — one command to kea-dhcp4's control socket, for the tests.

  kea_ctl.py SOCKET COMMAND [ARGUMENTS_JSON]
      sends {"command": COMMAND, "arguments": ...} and prints the answer
      (JSON, one line); exit status 0 when its "result" is 0
  kea_ctl.py SOCKET --stat NAME
      statistic-get NAME: prints its latest value, or "none" when Kea
      has no such statistic
  kea_ctl.py SOCKET --stats PREFIX
      statistic-get-all: prints "NAME VALUE" for each statistic whose
      name starts with PREFIX, sorted

Kea answers one command per connection (a JSON object, then it closes);
the answer is read until it parses or the connection ends, and every
step is bounded by a 5 s timeout. Exit status 2 when the socket cannot be
reached or the answer does not parse.
"""

import json
import socket
import sys

TIMEOUT = 5.0
MAX_ANSWER = 16 << 20


def command(path, name, args=None):
    c = {"command": name}
    if args is not None:
        c["arguments"] = args
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    try:
        s.connect(path)
        s.sendall(json.dumps(c).encode())
        buf = b""
        while len(buf) < MAX_ANSWER:
            d = s.recv(65536)
            if not d:
                break
            buf += d
            try:
                return json.loads(buf)
            except ValueError:
                continue
        return json.loads(buf)
    finally:
        s.close()


def latest(samples):
    """A statistic's samples are [[value, "timestamp"], ...], newest first."""
    if not samples:
        return None
    return samples[0][0]


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    try:
        if argv[2] == "--stat" and len(argv) == 4:
            a = command(path, "statistic-get", {"name": argv[3]})
            v = latest((a.get("arguments") or {}).get(argv[3]))
            print("none" if v is None else v)
            return 0
        if argv[2] == "--stats" and len(argv) == 4:
            a = command(path, "statistic-get-all")
            for k, samples in sorted((a.get("arguments") or {}).items()):
                if k.startswith(argv[3]):
                    print(k, latest(samples))
            return 0
        args = json.loads(argv[3]) if len(argv) > 3 else None
        a = command(path, argv[2], args)
    except (OSError, ValueError) as e:
        print("kea_ctl: %s" % e, file=sys.stderr)
        return 2
    print(json.dumps(a))
    return 0 if a.get("result") == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
