#!/bin/sh
# test_syslog — the syslog receiver against util-linux's logger, on the
# loopback address (the Hardware owns 127.0.0.1): RFC 3164 and RFC 5424
# messages become events of their Hardware and `ironbell logs` prints
# them (and follows new ones with -f); a message from an address no
# Hardware owns (127.0.0.2) is counted, logged and not kept; a flood is
# rate-limited by source and the daemon keeps answering, and the lines
# about a flood from an unknown address are rate-limited too; malformed and
# oversized datagrams are counted and cut; text that is not UTF-8 is kept
# repaired and never fails a read, nor does such a row stored before; with
# syslog.max_message at its largest, long messages are kept whole.
set -u

. "$top_srcdir/tests/lib.sh"

command -v logger >/dev/null 2>&1 || skip_all "logger (bsdutils) is not installed"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

SPORT=$(ib_free_port) || bail_out "no free port"
ib_write_config "syslog:
  enabled: true
  listen: 127.0.0.1:$SPORT
  rate: 20
  burst: 40
  max_message: 512" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"

cat >"$IB_TMP/hw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: m1
  namespace: default
spec:
  interfaces:
  - dhcp:
      mac: 52:54:00:12:34:56
      ip: {address: 127.0.0.1, netmask: 255.0.0.0}
EOF
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "the Hardware is applied"

lg() { logger --server 127.0.0.1 --port "$SPORT" --udp "$@"; }
lg --rfc3164 -i -t tink-agent -p user.notice "action stream-image started"
lg --rfc5424 -t hook --msgid M1 -p daemon.err "disk /dev/sda not found"
lg --rfc3164 -t kernel -p kern.info "eth0: link up"

has_logs() { ib logs m1 && [ "$(printf '%s\n' "$out" | grep -c .)" -ge "$1" ]; }
wait_for 10 has_logs 3
is "$rc" 0 "ironbell logs m1 succeeds"
like "$out" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ ]+ notice tink-agent\[[0-9]+\]: action stream-image started$' \
	"an RFC 3164 message: time, severity, program and pid, text"
like "$out" ' err hook: disk /dev/sda not found$' "an RFC 5424 message (no pid asked)"
like "$out" ' info kernel: eth0: link up$' "a third one"
first=$(printf '%s\n' "$out" | head -n 1)
like "$first" 'action stream-image started' "oldest first"
ib events hardware m1
like "$out" 'Warning +Syslog' "a severity of warning or worse is a Warning event"
like "$out" 'Normal +Syslog' "the others are Normal events"

ib logs nosuch
[ "$rc" != 0 ]
is "$?" 0 "logs of a Hardware that does not exist fails"
like "$err" 'not found' "and says so"

# -f sees a message that arrives after it started.
ib_bg_start() { "$IRONBELL" --socket "$IB_SOCK" logs -f m1 >"$IB_TMP/follow.out" 2>&1 & FPID=$!; ib_bg "$FPID"; }
ib_bg_start
sleep 1
lg --rfc3164 -t late -p user.info "a message after -f started"
wait_for 10 grep -q 'a message after -f started' "$IB_TMP/follow.out"
is "$?" 0 "logs -f prints a new message as it arrives"
kill "$FPID" 2>/dev/null

# From an address no Hardware owns.
"$PY" - "$SPORT" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.2", 0))
s.sendto(b"<13>stranger: who am i", ("127.0.0.1", int(sys.argv[1])))
EOF
wait_for 5 file_has "$IB_LOG" 'a message from 127\.0\.0\.2, which no Hardware owns: not kept'
is "$?" 0 "a message from an unknown address is logged"
ib logs m1
unlike "$out" 'who am i' "and not kept"

# Malformed and oversized.
"$PY" - "$SPORT" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a = ("127.0.0.1", int(sys.argv[1]))
for m in (b"no pri at all", b"<999>too big", b"<13>1 - - - - - [open", b""):
    s.sendto(m, a)
s.sendto(b"<13>big: " + b"x" * 4000, a)
EOF
wait_for 5 sh -c "curl -s --unix-socket '$IB_SOCK' http://x/metrics | grep -q 'ironbell_syslog_truncated_total 1'"
run curl -s --max-time 10 --unix-socket "$IB_SOCK" http://localhost/metrics
like "$out" 'ironbell_syslog_dropped_total\{reason="malformed"\} [3-9]' "malformed datagrams are counted"
like "$out" 'ironbell_syslog_truncated_total 1' "an oversized message is cut and counted"
ib logs m1
like "$out" 'big\[?[0-9]*\]?: x{400,}\.\.\.$' "and kept cut, marked with ..."

# Text that is not UTF-8, and a character cut by syslog.max_message:
# stored as valid UTF-8 (U+FFFD for what is ill-formed), so that the
# events, their watch and `ironbell logs` go on working.
"$PY" - "$SPORT" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a = ("127.0.0.1", int(sys.argv[1]))
s.sendto(b"<13>badutf: caf\xe9 \xff\xfe \xc0\xaf end", a)
s.sendto(b"<13>cututf: " + "\u00e9".encode() * 300, a)
EOF
has_utf() { ib logs m1 && printf '%s\n' "$out" | grep -q 'cututf'; }
wait_for 10 has_utf
is "$rc" 0 "ironbell logs m1 succeeds after text that is not UTF-8"
like "$out" "badutf: caf$(printf '\357\277\275') $(printf '\357\277\275\357\277\275') $(printf '\357\277\275\357\277\275') end\$" \
	"ill-formed sequences are kept as U+FFFD"
like "$out" "cututf: ($(printf '\303\251')){200,}\\.\\.\\.\$" "a cut falls between characters"
ib events hardware m1
is "$rc" 0 "ironbell events succeeds too"
run curl -s --max-time 2 --unix-socket "$IB_SOCK" \
	"http://localhost/apis/ironbell.dev/v1/events?watch=1&name=m1"
like "$out" 'cututf' "an event watch streams them"
# A row that an older version stored as it came: the reader repairs it.
"$PY" - "$IB_STATE/ironbell.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
db.execute("INSERT INTO events (time, kind, namespace, name, type, reason, message) "
           "VALUES (0, 'Hardware', 'default', 'm1', 'Normal', 'Syslog', "
           "CAST(X'6e6f74696365206f6c643a20ff6f6c64' AS TEXT))")
db.commit()
EOF
ib logs m1
is "$rc" 0 "ironbell logs m1 succeeds over a row that is not UTF-8"
like "$out" "old: $(printf '\357\277\275')old\$" "whose text is repaired"

# A flood from one source: the bucket (burst 40, 20/s) lets a bounded
# number through, and the daemon keeps serving.
"$PY" - "$SPORT" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(2000):
    s.sendto(b"<14>flood: message %d" % i, ("127.0.0.1", int(sys.argv[1])))
EOF
sleep 1
run curl -s --max-time 10 --unix-socket "$IB_SOCK" http://localhost/metrics
like "$out" 'ironbell_syslog_dropped_total\{reason="rate_limited"\} [0-9]{3,}' "a flood is rate-limited"
ib logs m1
n=$(printf '%s\n' "$out" | grep -c 'flood: message')
[ "$n" -ge 1 ] && [ "$n" -le 120 ]
is "$?" 0 "only a bounded part of the flood is kept ($n of 2000)"
ib_ready
is "$?" 0 "the daemon still answers"

# A flood from an address no Hardware owns: what its bucket lets through
# is logged 10 lines at once, then one a second, and a later line says
# how many were left out.
"$PY" - "$SPORT" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.3", 0))
for i in range(200):
    s.sendto(b"<14>stranger: message %d" % i, ("127.0.0.1", int(sys.argv[1])))
EOF
sleep 1
n=$(grep -c 'a message from 127\.0\.0\.3, which no Hardware owns' "$IB_LOG")
ok "the unknown source's lines are rate-limited ($n lines)" test "$n" -ge 1 -a "$n" -le 30
i=0
while [ $i -lt 10 ] && ! file_has "$IB_LOG" 'syslog.*[0-9]+ similar lines suppressed'; do
	sleep 1
	"$PY" -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.3", 0))
s.sendto(b"<14>stranger: later", ("127.0.0.1", int(sys.argv[1])))' "$SPORT"
	i=$((i + 1))
done
file_has "$IB_LOG" 'syslog.*[0-9]+ similar lines suppressed'
is "$?" 0 "a later line says how many were suppressed"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"

# Long messages under the largest syslog.max_message: kept whole, from
# the datagram to `ironbell logs` and the events, nothing counted as cut.
ib_write_config "syslog:
  enabled: true
  listen: 127.0.0.1:$SPORT
  max_message: 65535" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start again"
# 65507 bytes: the largest UDP payload IPv4 carries.
"$PY" - "$SPORT" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a = ("127.0.0.1", int(sys.argv[1]))
s.sendto(b"<13>long4k: " + b"y" * 4096, a)
m = b"<13>long64k: "
s.sendto(m + b"z" * (65507 - len(m)), a)
EOF
# The length of the text after "TAG: " on the line that has it, when the
# text is only the character C (-1 when it holds anything else).
run_len() {
	printf '%s\n' "$out" | "$PY" -c '
import sys
tag, c = sys.argv[1] + ": ", sys.argv[2]
for l in sys.stdin:
    l = l.rstrip("\n")
    if tag in l:
        t = l.split(tag, 1)[1]
        print(len(t) if t == c * len(t) else -1)
' "$1" "$2"
}
has_long() { ib logs m1 && [ -n "$(run_len long64k z)" ]; }
wait_for 10 has_long
is "$rc" 0 "ironbell logs m1 succeeds with long messages"
is "$(run_len long4k y)" 4096 "a 4 KiB message is kept whole"
is "$(run_len long64k z)" $((65507 - 13)) "the longest datagram's message is kept whole"
ib events hardware m1
is "$rc" 0 "ironbell events succeeds"
run curl -s --max-time 10 --unix-socket "$IB_SOCK" http://localhost/metrics
like "$out" 'ironbell_syslog_truncated_total 0' "and nothing is counted as cut"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly again"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
