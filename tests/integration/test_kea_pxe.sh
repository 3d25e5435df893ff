#!/bin/sh
# test_kea_pxe — the netboot answers of kea-dhcp4 with ironbell's hook
# library are ironbelld's own, byte for byte. One table of cases (PXE ROMs
# on BIOS and UEFI, iPXE by its user class, UEFI HTTP Boot, allowPXE
# false, a Hardware with explicit boot information, one with its own iPXE
# script URL, a client that is not netbooting, a reserved address inside
# Kea's pool) is asked, DISCOVER then REQUEST, by the same scapy client
# (kea/pxe_compare.py) of two servers side by side, each in its own
# namespace with the same address on its link: ironbelld's DHCP server in
# reservation mode, and Kea with the hook reading that ironbelld's store.
# For each case the OFFER and the ACK of both carry the same yiaddr,
# siaddr, sname and file (the whole header fields) and options 43, 60, 66
# and 67 (or both lack them); ironbelld's boot file is the one the table
# expects, so that two empty answers cannot pass. Kea's subnet has boot
# fields of its own (next-server, server-hostname, boot-file-name, options
# 66 and 67): where ironbelld sends none, the hook must remove them; a MAC
# that no Hardware has keeps them. Prints TAP.
#
# Kea runs multi-threaded here (2 packet threads; KEA_THREADS=0 for its
# single-threaded default, which test_kea_hook uses), as the hook says it
# may. Without the hook built, the cases run against ironbelld only (the
# rig's check) and every comparison is skipped.
set -u
: "${KEA_THREADS:=2}"

. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
. "$top_srcdir/tests/integration/dhcp/common.sh"
. "$top_srcdir/tests/integration/kea/common.sh"

dhcp_require
kea_require
KEA_HOOK=0
kea_hook_built && KEA_HOOK=1
NOHOOK="the hook library is not built ($KEA_HOOK_SO)"
COMPARE=$top_srcdir/tests/integration/kea/pxe_compare.py

# ---- two links: ironbelld's and Kea's, the same addresses on each ----

ns_new IBS ibs || bail_out "cannot make a namespace"
ns_new IBC ibc || bail_out "cannot make a namespace"
ns_veth "$IBS" srv0 192.168.77.1/24 "$IBC" eth0 - || bail_out "cannot make a veth pair"
ns_new KES kes || bail_out "cannot make a namespace"
ns_new KEC kec || bail_out "cannot make a namespace"
ns_veth "$KES" srv0 192.168.77.1/24 "$KEC" eth0 - || bail_out "cannot make a veth pair"

# ---- ironbelld, its DHCP server on its link, and the Hardware ----

dhcp_daemon "$IBS" "  mode: reservation
  interfaces: [srv0]" || bail_out "ironbelld did not start"
PUBLIC=192.168.77.1
PORT=$IB_HTTP_PORT
CUSTOM_URL=http://192.168.77.1/custom.ipxe
{
	hw_doc m1 02:00:00:00:00:01 192.168.77.21
	HW_ALLOW_PXE=false hw_doc m9 02:00:00:00:00:09 192.168.77.29
	# Explicit boot information (dhcp.tftp_server_name and
	# dhcp.boot_file_name): for every client, netbooting or not.
	hw_doc m5 02:00:00:00:00:05 192.168.77.25 |
		sed 's|^        lease_time:|        tftp_server_name: 192.168.77.69\n        boot_file_name: custom/boot.efi\n&|'
	# Its own iPXE script (netboot.ipxe.url).
	hw_doc m6 02:00:00:00:00:06 192.168.77.26 |
		sed "s|allowWorkflow: true}|allowWorkflow: true, ipxe: {url: \"$CUSTOM_URL\"}}|"
	# A reserved address inside Kea's pool.
	hw_doc m7 02:00:00:00:00:07 192.168.77.107
} >"$IB_TMP/hw.yaml"
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "apply five Hardware"
[ "$rc" = 0 ] || diag "$err"
wait_hosts 5 || bail_out "ironbelld's DHCP server did not load the Hardware"
in_pool 192.168.77.107 || bail_out "the address plan is wrong: .107 is not in Kea's pool"

# ---- Kea and the hook, on the other link ----

KEA_HOOK_PARAMS=
KEA_SUBNET_EXTRA='"next-server": "192.168.77.250", "server-hostname": "kea-boot", "boot-file-name": "kea.efi",'
KEA_OPTIONS_EXTRA='{ "name": "tftp-server-name", "data": "kea-tftp", "always-send": true },
        { "name": "boot-file-name", "data": "kea.efi", "always-send": true },'
kea_start "$KES" srv0 || bail_out "kea-dhcp4 did not start"
pass "kea-dhcp4 starts$([ "$KEA_HOOK" = 1 ] && echo " with the hook") on the second link"
if [ "$KEA_HOOK" = 1 ]; then
	ok "the hook's table holds the five Hardware (ironbell.hosts 5)" kea_wait_stat 10 ironbell.hosts 5
fi

# ---- the table ----

SCRIPT_URL="http://$PUBLIC:$PORT/ipxe/script/02:00:00:00:00:01/auto.ipxe"
BINARY_URL="http://$PUBLIC:$PORT/ipxe/binary/02:00:00:00:00:01/ipxe.efi"
BIOS=PXEClient:Arch:00000:UNDI:002001
EFI=PXEClient:Arch:00007:UNDI:003016
HTTP=HTTPClient:Arch:00016:UNDI:003000

# NAME|MAC|ARCH (93)|VENDOR CLASS (60)|USER CLASS (77)|ironbelld's boot file
cat >"$IB_TMP/table" <<EOF
bios-pxe|02:00:00:00:00:01|0|$BIOS||undionly.kpxe
efi-pxe|02:00:00:00:00:01|7|$EFI||ipxe.efi
ipxe-bios|02:00:00:00:00:01|0|$BIOS|iPXE|$SCRIPT_URL
ipxe-efi|02:00:00:00:00:01|7|$EFI|iPXE|$SCRIPT_URL
http-boot|02:00:00:00:00:01|16|$HTTP||$BINARY_URL
ipxe-over-http|02:00:00:00:00:01|16|$HTTP|iPXE|$SCRIPT_URL
not-netbooting|02:00:00:00:00:01|none|||
allowpxe-false|02:00:00:00:00:09|7|$EFI||/netboot-not-allowed
explicit-efi|02:00:00:00:00:05|7|$EFI||custom/boot.efi
explicit-not-netbooting|02:00:00:00:00:05|none|||custom/boot.efi
own-ipxe-url|02:00:00:00:00:06|7|$EFI|iPXE|$CUSTOM_URL
in-kea-pool|02:00:00:00:00:07|7|$EFI||ipxe.efi
EOF
cut -d'|' -f1-5 "$IB_TMP/table" >"$IB_TMP/cases"

# ask NS OUT: the whole table against the server on NS's link.
ask() {
	timeout -k 5 120 ip netns exec "$1" "$PY" "$COMPARE" -i eth0 --cases "$IB_TMP/cases" --wait 2 \
		>"$2" 2>"$2.err"
	_rc=$?
	[ $_rc = 0 ] || diag "pxe_compare.py exited $_rc: $(cat "$2.err")"
}
ask "$IBC" "$IB_TMP/ironbelld.json"
is "$(wc -l <"$IB_TMP/ironbelld.json")" "$(wc -l <"$IB_TMP/cases")" "ironbelld: a line per case"
if [ "$KEA_HOOK" = 1 ]; then
	ask "$KEC" "$IB_TMP/kea.json"
	is "$(wc -l <"$IB_TMP/kea.json")" "$(wc -l <"$IB_TMP/cases")" "Kea: a line per case"
fi

# case_of FILE NAME EXPR: EXPR with c = the case's line of FILE (None
# when it has none).
case_of() {
	"$PY" -c 'import json, sys
c = None
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["case"] == sys.argv[2]:
        c = j
print(eval(sys.argv[3]))' "$1" "$2" "$3"
}

# differences NAME: "same", or each field that differs between the two
# servers' OFFER or ACK, with both values (as text where it is text).
differences() {
	"$PY" -c 'import json, sys
def load(p):
    for l in open(p):
        j = json.loads(l)
        if j["case"] == sys.argv[3]:
            return j
    return {}
ib, kea = load(sys.argv[1]), load(sys.argv[2])
keys = ("type", "yiaddr", "siaddr", "sname", "file", "opt43", "opt60", "opt66", "opt67")
d = []
for stage in ("offer", "ack"):
    a, b = ib.get(stage), kea.get(stage)
    if a is None or b is None:
        if a is not b:
            d.append("%s: ironbelld %s, Kea %s" % (stage, a and "answered", b and "answered"))
        continue
    for k in keys:
        if a[k] != b[k]:
            t = k if k in a["text"] else None
            d.append("%s.%s: ironbelld %r, Kea %r" % (stage, k, a["text"][t] if t else a[k],
                                                        b["text"][t] if t else b[k]))
print("; ".join(d) if d else "same")' "$IB_TMP/ironbelld.json" "$IB_TMP/kea.json" "$1"
}

while IFS='|' read -r name mac arch vendor user file; do
	is "$(case_of "$IB_TMP/ironbelld.json" "$name" \
		'c and [(s, c[s] and c[s]["type"], c[s] and c[s]["text"]["file"]) for s in ("offer", "ack")]')" \
		"[('offer', 'offer', '$file'), ('ack', 'ack', '$file')]" \
		"$name: ironbelld offers and acks, boot file '$file'"
	if [ "$KEA_HOOK" = 1 ]; then
		is "$(differences "$name")" same \
			"$name: Kea+hook's OFFER and ACK have ironbelld's yiaddr, siaddr, sname, file, 43, 60, 66, 67"
	else
		skip "$name: Kea+hook's answers are ironbelld's" "$NOHOOK"
	fi
done <"$IB_TMP/table"

# ---- what the hook leaves to Kea ----

# A MAC that no Hardware has: ironbelld is silent, Kea answers from its
# pool with its own boot fields.
printf 'unknown|02:00:00:00:00:99|7|%s|\n' "$EFI" >"$IB_TMP/cases"
ask "$KEC" "$IB_TMP/kea-unknown.json"
is "$(case_of "$IB_TMP/kea-unknown.json" unknown \
	'c and [(c[s]["type"], c[s]["siaddr"], c[s]["text"]["sname"], c[s]["text"]["file"], c[s]["text"]["opt66"], c[s]["text"]["opt67"]) for s in ("offer", "ack") if c[s]]')" \
	"[('offer', '192.168.77.250', 'kea-boot', 'kea.efi', 'kea-tftp', 'kea.efi'), ('ack', '192.168.77.250', 'kea-boot', 'kea.efi', 'kea-tftp', 'kea.efi')]" \
	"unknown MAC: Kea's own boot fields, untouched$([ "$KEA_HOOK" = 1 ] || echo " (Kea alone)")"
ok "unknown MAC: an address of Kea's pool" \
	in_pool "$(case_of "$IB_TMP/kea-unknown.json" unknown 'c["ack"]["yiaddr"] if c and c["ack"] else ""')"

if [ "$KEA_HOOK" = 1 ]; then
	for b in pxe-binary ipxe-script http-boot not-allowed explicit none; do
		v=$(kea_stat "ironbell.boot.$b")
		ok "statistic ironbell.boot.$b counted the cases ($v)" test "${v#none}" -ge 2
	done
	# Nothing changed while the table was asked: every answer was
	# ironbell's or, for the unknown MAC, Kea's.
	for o in silent mismatch not-ready malformed error; do
		is "$(kea_stat "ironbell.answers.$o")" 0 "statistic ironbell.answers.$o is 0"
	done
	is "$(kea_stat ironbell.answers.not-ours)" 2 "statistic ironbell.answers.not-ours: the unknown MAC's OFFER and ACK"
fi

kea_stop_checked
ok "no sanitizer report from Kea or the hook" kea_log_clean
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "ironbelld exits 0 on SIGTERM"
ok "no sanitizer report in the daemon's log" ib_log_clean

tap_done
