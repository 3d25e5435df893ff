#!/bin/sh
# test_tftp — ironbelld's TFTP server against the real clients, in network
# namespaces:
#
#   cli  (10.66.0.2)  — veth —  srv (10.66.0.1, ironbelld, tftp on :69)
#   cli2 (10.67.0.2)  — the delay line (tests/delayline, 10 ms each way) —
#                        srv (10.67.0.1)
#
# tftp-hpa, atftp (with blksize, tsize and windowsize) and curl fetch every
# iPXE binary and a file big enough that block numbers wrap, each compared
# by sha256; 50 transfers at once; 5% loss each way (nftables in the
# client's namespace) and a 20 ms round trip, still complete and correct;
# a client that acknowledges every block twice gets each block once;
# "..", a symlink, a directory, a missing file and a write are refused with
# a TFTP error and a log line; a <mac>/ prefix, a leading '/' and the
# snp.efi alias are served; netascii files whose converted pairs straddle
# blocks round-trip through tftp-hpa, and four transfers of a 12 MB file in
# netascii left unacknowledged add far less than 12 MB to the daemon's
# VmRSS; the metrics count it all. Wall times are
# printed as comments, never asserted.
set -u

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"

ns_require
for p in tftp atftp curl sha256sum nft; do
	command -v $p >/dev/null 2>&1 || skip_all "$p is not installed"
done
DELAYLINE=$top_builddir/tests/delayline
[ -x "$DELAYLINE" ] || skip_all "tests/delayline is not built"
[ -f /usr/lib/ipxe/ipxe.efi ] || skip_all "the ipxe package is not installed"

ROOT=$IB_TMP/root
mkdir -p "$ROOT/dir" || bail_out "cannot make the root"
BINS="undionly.kpxe ipxe.efi snponly.efi"
for f in $BINS; do cp "/usr/lib/ipxe/$f" "$ROOT/$f"; done
head -c 4096 /dev/urandom >"$ROOT/snp-arm64.efi"
# 34 MB: 66,407 blocks of 512, so block numbers wrap past 65535.
head -c 34000000 /dev/urandom >"$ROOT/big.bin"
echo secret >"$IB_TMP/secret"
# A link someone other than root left in the directory: refused. One the
# operator (root) made is followed, as Debian's own ipxe.efi is a link.
ln -s "$IB_TMP/secret" "$ROOT/link"
chown -h nobody "$ROOT/link" || bail_out "cannot give the link to nobody"
ln -s /usr/lib/ipxe/undionly.kpxe "$ROOT/operator.kpxe"
printf 'line one\nline two\r\n' >"$ROOT/text.txt"
# netascii: an empty file, one of exactly a block, a LF and a CR whose
# converted pairs straddle the first block's end, a mix of lone CRs,
# lone LFs, CR LFs and NULs over many blocks, and a 12 MB text file.
: >"$ROOT/na-empty"
head -c 512 /dev/zero | tr '\0' a >"$ROOT/na-512"
{ head -c 511 /dev/zero | tr '\0' a; printf '\nb\n'; } >"$ROOT/na-split-lf"
{ head -c 511 /dev/zero | tr '\0' a; printf '\rb\r'; } >"$ROOT/na-split-cr"
/usr/bin/python3 -c 'import random, sys; r = random.Random(13)
sys.stdout.buffer.write(bytes(r.choice(b"ab\r\n\0") for _ in range(20000)))' >"$ROOT/na-mix"
yes 'a line of text' | head -c 12000000 >"$ROOT/na-big.txt"

ns_new SRV srv || bail_out "cannot make a namespace"
ns_new CLI cli || bail_out "cannot make a namespace"
ns_new CLI2 cli2 || bail_out "cannot make a namespace"
ns_veth "$CLI" eth0 10.66.0.2/24 "$SRV" s0 10.66.0.1/24 || bail_out "cannot make the veth"
TAPA=ibdl$$a
TAPB=ibdl$$b
"$DELAYLINE" -d 10 "$TAPA" "$TAPB" >"$IB_TMP/delayline.out" 2>"$IB_TMP/delayline.err" &
DL_PID=$!
ib_bg "$DL_PID"
wait_for 5 grep -q ready "$IB_TMP/delayline.out" || bail_out "the delay line did not start"
ip link set "$TAPA" netns "$SRV" && ip link set "$TAPB" netns "$CLI2" ||
	bail_out "cannot move the taps"
ns_addr "$SRV" "$TAPA" 10.67.0.1/24 && ns_addr "$CLI2" "$TAPB" 10.67.0.2/24 ||
	bail_out "cannot address the taps"
ip -n "$SRV" link set "$TAPA" up && ip -n "$CLI2" link set "$TAPB" up || bail_out "taps down"

ib_write_config "tftp:
  enabled: true
  listen: 0.0.0.0:69
  windowsize_max: 16
ipxe:
  binary_dir: $ROOT" || bail_out "cannot write the config"
IB_DAEMON_WRAP="ip netns exec $SRV" ib_start_daemon || bail_out "ironbelld did not start"

sum() { sha256sum <"$1" | cut -d' ' -f1; }
# in NS CMD...: runs CMD in namespace NS with a bound; sets $rc, $out, $err.
in_ns() {
	_ns=$1
	shift
	run timeout 120 ip netns exec "$_ns" "$@"
}
# same FILE GOT: GOT has FILE's bytes.
same() { [ -f "$2" ] && [ "$(sum "$ROOT/$1")" = "$(sum "$2")" ]; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

D=$IB_TMP/got
mkdir -p "$D"

# ---- every binary, every client ----

for f in $BINS; do
	in_ns "$CLI" tftp -m binary 10.66.0.1 -c get "$f" "$D/hpa-$f"
	same "$f" "$D/hpa-$f"
	is "$?" 0 "tftp-hpa gets $f"
	in_ns "$CLI" atftp -g -r "$f" -l "$D/at-$f" 10.66.0.1
	same "$f" "$D/at-$f"
	is "$?" 0 "atftp gets $f"
	in_ns "$CLI" atftp --option "blksize 1428" --option "tsize 0" -g -r "$f" -l "$D/atb-$f" 10.66.0.1
	same "$f" "$D/atb-$f"
	is "$?" 0 "atftp with blksize 1428 and tsize gets $f"
	in_ns "$CLI" atftp --option "windowsize 8" --option "blksize 1428" -g -r "$f" -l "$D/atw-$f" 10.66.0.1
	same "$f" "$D/atw-$f"
	is "$?" 0 "atftp with windowsize 8 gets $f"
	in_ns "$CLI" curl -s --max-time 60 --tftp-blksize 1468 -o "$D/curl-$f" "tftp://10.66.0.1/$f"
	same "$f" "$D/curl-$f"
	is "$?" 0 "curl tftp:// with --tftp-blksize gets $f"
done
file_has "$IB_LOG" 'sent ipxe\.efi to 10\.66\.0\.2:[0-9]+: 850[0-9]+ bytes in [0-9]+ blocks of 1428, window 8'
is "$?" 0 "the log has the transfer with the options granted"

t0=$(now_ms)
in_ns "$CLI" atftp -g -r big.bin -l "$D/big" 10.66.0.1
same big.bin "$D/big"
is "$?" 0 "a 34 MB file at 512-byte blocks: block numbers wrap past 65535, every byte right"
diag "34 MB, blksize 512, lock-step over veth: $(($(now_ms) - t0)) ms"
t0=$(now_ms)
in_ns "$CLI" atftp --option "windowsize 16" --option "blksize 1428" -g -r big.bin -l "$D/bigw" 10.66.0.1
same big.bin "$D/bigw"
is "$?" 0 "the same with windowsize 16"
diag "34 MB, blksize 1428, windowsize 16 over veth: $(($(now_ms) - t0)) ms"

# ---- names ----

in_ns "$CLI" tftp -l -m binary 10.66.0.1 -c get 52:54:00:12:34:56/ipxe.efi "$D/mac"
same ipxe.efi "$D/mac"
is "$?" 0 "a leading <mac>/ is accepted, as Smee does"
in_ns "$CLI" tftp -m binary 10.66.0.1 -c get /undionly.kpxe "$D/slash"
same undionly.kpxe "$D/slash"
is "$?" 0 "a leading / names the file under the root"
in_ns "$CLI" tftp -m binary 10.66.0.1 -c get snp.efi "$D/snp"
same snp-arm64.efi "$D/snp"
is "$?" 0 "snp.efi is served from snp-arm64.efi"
in_ns "$CLI" tftp -m binary 10.66.0.1 -c get operator.kpxe "$D/oplink"
same undionly.kpxe "$D/oplink"
is "$?" 0 "a symlink root made is followed (Debian's /usr/lib/ipxe/ipxe.efi is one)"
in_ns "$CLI" tftp -m netascii 10.66.0.1 -c get text.txt "$D/text"
same text.txt "$D/text"
is "$?" 0 "netascii mode round-trips a text file"

# ---- netascii, converted block by block ----

# Files whose converted CR LF and CR NUL pairs fall across the 512-byte
# blocks tftp-hpa asks for: each comes back as it is.
for f in na-empty na-512 na-split-lf na-split-cr na-mix; do
	in_ns "$CLI" tftp -m netascii 10.66.0.1 -c get "$f" "$D/$f"
	same "$f" "$D/$f"
	is "$?" 0 "netascii: $f round-trips through tftp-hpa"
done
# A transfer held open without an ACK holds no copy of its file: four of
# a 12 MB text file raise the daemon's resident set by far less than one
# file (converting each whole in memory first took more than 12 MB each).
run ip netns exec "$CLI" /usr/bin/python3 "$top_srcdir/tests/integration/tftp/no_ack.py" \
	10.66.0.1 na-big.txt netascii 4 "$IB_DAEMON_PID"
is "$rc" 0 "four netascii transfers of na-big.txt started ($out)"
grow=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["during"] - d["before"])')
ok "four unacknowledged netascii transfers of 12 MB raise VmRSS by ${grow} kB (< 6000 kB)" \
	test "$grow" -lt 6000

# refused NAME CODE DESC
refused() {
	rm -f "$D/refused"
	in_ns "$CLI" tftp -m binary 10.66.0.1 -c get "$1" "$D/refused"
	like "$out$err" "Error code $2" "$3: TFTP error $2"
}
refused ../secret 2 "../secret"
refused dir/../../secret 2 "dir/../../secret"
refused dir/../link 2 "a name through a directory and back"
refused link 2 "a symlink that root did not make, even to a file"
refused dir 2 "a directory"
refused /etc/passwd 1 "/etc/passwd (looked up under the root)"
refused missing.efi 1 "a missing binary"
file_has "$IB_LOG" 'asked for \\"missing\.efi\\": no such file in '"$ROOT"
is "$?" 0 "a missing binary has one clear log line naming the root"
file_has "$IB_LOG" 'refused \\"link\\" to 10\.66\.0\.2:[0-9]+: a symbolic link'
is "$?" 0 "a symlink's refusal is logged as such"
echo data >"$D/up"
in_ns "$CLI" tftp -m binary 10.66.0.1 -c put "$D/up" uploaded
like "$out$err" "Error code 2" "a write request is refused with error 2"
[ ! -e "$ROOT/uploaded" ]
is "$?" 0 "and nothing is written"

# ---- every ACK twice (the Sorcerer's Apprentice, RFC 1123 §4.2.3.1) ----

run ip netns exec "$CLI" /usr/bin/python3 "$top_srcdir/tests/integration/tftp/dup_ack.py" \
	10.66.0.1 undionly.kpxe "$D/dup"
is "$rc" 0 "a client that ACKs every block twice still gets to the last block"
same undionly.kpxe "$D/dup"
is "$?" 0 "and the file is whole"
blocks=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["blocks"])')
dgrams=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["datagrams"])')
# A server that answered each duplicate ACK would send every block twice
# from the first one on: about 2 x blocks datagrams.
ok "duplicate ACKs do not double the blocks sent ($dgrams datagrams for $blocks blocks)" \
	test "$dgrams" -le $((blocks + blocks / 10 + 2))

# ---- 50 at once ----

i=0
while [ $i -lt 50 ]; do
	if [ $((i % 2)) = 0 ]; then
		ip netns exec "$CLI" timeout 120 atftp --option "blksize 1428" -g -r ipxe.efi -l "$D/c$i" 10.66.0.1 \
			>/dev/null 2>&1 &
	else
		ip netns exec "$CLI" timeout 120 curl -s -o "$D/c$i" tftp://10.66.0.1/ipxe.efi >/dev/null 2>&1 &
	fi
	i=$((i + 1))
done
wait_for 120 sh -c 'for i in $(seq 0 49); do [ "$(sha256sum <"'"$D"'/c$i" 2>/dev/null | cut -d" " -f1)" = "'"$(sum "$ROOT/ipxe.efi")"'" ] || exit 1; done'
is "$?" 0 "50 concurrent transfers all arrive whole"

# ---- 5% loss each way ----

# Dropped on input in both namespaces: a drop on output would fail the
# sender's sendto() with EPERM, which is not loss.
ip netns exec "$CLI" nft -f - <<EOF || bail_out "cannot add the loss rules"
table inet loss {
	chain in {
		type filter hook input priority 0;
		udp sport 1-65535 numgen random mod 20 0 drop
	}
}
EOF
ip netns exec "$SRV" nft -f - <<EOF || bail_out "cannot add the loss rules"
table inet loss {
	chain in {
		type filter hook input priority 0;
		ip saddr 10.66.0.2 udp dport 1-65535 numgen random mod 20 0 drop
	}
}
EOF
t0=$(now_ms)
in_ns "$CLI" tftp -m binary 10.66.0.1 -c get undionly.kpxe "$D/loss-hpa"
same undionly.kpxe "$D/loss-hpa"
is "$?" 0 "with 5% loss each way, tftp-hpa still gets undionly.kpxe whole"
diag "undionly.kpxe with 5% loss, lock-step: $(($(now_ms) - t0)) ms"
t0=$(now_ms)
in_ns "$CLI" atftp --option "windowsize 8" --option "blksize 1428" -g -r ipxe.efi -l "$D/loss-w" 10.66.0.1
# atftp gives up on a second OACK ("unexpected OACK"), which is what a
# server sends, as RFC 2347 says, when the client's ACK of the first one
# is among the 5% lost: that is atftp's limit, not a failed transfer, and
# a PXE ROM would ask again. Once more then; any other failure stands.
if ! same ipxe.efi "$D/loss-w" && printf '%s' "$out$err" | grep -q 'unexpected OACK'; then
	diag "atftp stopped at a retransmitted OACK (its ACK 0 was dropped); asking again"
	in_ns "$CLI" atftp --option "windowsize 8" --option "blksize 1428" -g -r ipxe.efi -l "$D/loss-w" 10.66.0.1
fi
same ipxe.efi "$D/loss-w"
is "$?" 0 "with 5% loss each way, atftp with windowsize 8 gets ipxe.efi whole"
diag "ipxe.efi with 5% loss, windowsize 8: $(($(now_ms) - t0)) ms"
ip netns exec "$CLI" nft delete table inet loss
ip netns exec "$SRV" nft delete table inet loss

# ---- a 20 ms round trip ----

t0=$(now_ms)
in_ns "$CLI2" tftp -m binary 10.67.0.1 -c get undionly.kpxe "$D/slow-hpa"
same undionly.kpxe "$D/slow-hpa"
is "$?" 0 "through the delay line (20 ms round trip), tftp-hpa gets undionly.kpxe"
diag "undionly.kpxe, 20 ms RTT, lock-step 512: $(($(now_ms) - t0)) ms"
t0=$(now_ms)
in_ns "$CLI2" atftp --option "windowsize 16" --option "blksize 1428" -g -r ipxe.efi -l "$D/slow-w" 10.67.0.1
same ipxe.efi "$D/slow-w"
is "$?" 0 "and atftp with windowsize 16 gets ipxe.efi"
diag "ipxe.efi, 20 ms RTT, windowsize 16: $(($(now_ms) - t0)) ms"
file_has "$IB_LOG" 'sent ipxe\.efi to 10\.67\.0\.2:[0-9]+: .* window 16'
is "$?" 0 "served from the address the request came in on"

# ---- metrics ----

run curl -s --max-time 10 --unix-socket "$IB_SOCK" http://localhost/metrics
like "$out" 'ironbell_tftp_transfers_total\{outcome="ok"\} ([7-9][0-9]|[1-9][0-9][0-9])' "successful transfers are counted"
like "$out" 'ironbell_tftp_transfers_total\{outcome="not_found"\} [2-9]' "missing files"
like "$out" 'ironbell_tftp_transfers_total\{outcome="refused"\} [4-9]' "refusals"
like "$out" 'ironbell_tftp_retransmissions_total [1-9]' "retransmissions (the loss)"
like "$out" 'ironbell_tftp_options_total\{option="windowsize"\} [1-9]' "options granted"
like "$out" 'ironbell_tftp_requests_total\{op="wrq"\} 1' "write requests"
like "$out" 'ironbell_tftp_bytes_sent_total [1-9][0-9]{8}' "bytes sent"
# A transfer whose last ACK was among the 5% lost stays open while the
# server retransmits the last block: up to 1 + 2 + 4 + 8 + 16 s (timeout
# 1, 5 retries) before it ends as a timeout. Every transfer must end.
active_zero() {
	curl -s --max-time 10 --unix-socket "$IB_SOCK" http://localhost/metrics |
		grep -qx 'ironbell_tftp_transfers_active 0'
}
printf '%s\n' "$out" | grep -qx 'ironbell_tftp_transfers_active 0' ||
	diag "a transfer is still open (its last ACK lost?): waiting for its retries to end"
ok "no transfer left open" wait_for 45 active_zero

# ---- a flood of requests to refuse ----

# Crafted requests cost the sender one datagram each: their refusals are
# rate-limited, so the journal gets a burst of lines, then one saying how
# many were left out. (After the metrics above: the flood moves them.)
FLOOD=300
in_ns "$CLI" /usr/bin/python3 "$top_srcdir/tests/integration/tftp/flood.py" 10.66.0.1 $FLOOD flood
like "$out" '"sent": 300' "a flood of $FLOOD bad requests went out"
errs=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["errors"])')
ok "each was refused with a TFTP error ($errs errors back)" test "${errs:-0}" -ge $((FLOOD / 2))
flood_lines=$(grep -c 'flood-[0-9]' "$IB_LOG")
ok "the flood's refusals are rate-limited: $flood_lines log lines for $FLOOD requests" \
	test "$flood_lines" -le 30
# The next refusal the bucket lets through says how many were left out.
i=0
while [ $i -lt 10 ] && ! file_has "$IB_LOG" 'tftp.*[0-9]+ similar lines suppressed'; do
	sleep 1
	in_ns "$CLI" /usr/bin/python3 "$top_srcdir/tests/integration/tftp/flood.py" 10.66.0.1 1 after$i
	i=$((i + 1))
done
file_has "$IB_LOG" 'tftp.*[0-9]+ similar lines suppressed'
is "$?" 0 "a later refusal is logged with the count of lines suppressed"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
